/* Internals shared by the files of the output module (out__ prefix).
 *
 *   series.c       telemetry rows -> named columns, shared by every writer
 *   csv.c          timeseries.csv, events.csv
 *   flows.c        flows.csv and the text of a flow row (output.flows)
 *   db.c           results.sqlite: schema, one transaction per run, reading
 *   db_merge.c     one results database into another (a sweep's MPI ranks)
 *   db_order.c     a sweep's run ids renumbered in point order
 *   openmetrics.c  metrics.txt
 *   report.c       report.html (run and comparison), with the embedded assets
 *   figures.c      the one table of headline figures (report.html, sweep, compare)
 *   run.c          out_write_run: all of the above for one run; out_run_files
 *   run_summary.c  summary.json of a run (out_run_summary)
 *   run_text.c     the terminal summary of a run, its progress and failure lines
 *   memory.c       fabsim memory's printout, a training step as JSON and text
 *   topo.c         the topology's figures, the scenario a run read
 *   calib_json.c   fabsim calibrate --json
 *   progress.c     the progress line and Ctrl-C
 */
#ifndef FABSIM_OUT_INTERNAL_H
#define FABSIM_OUT_INTERNAL_H

#include <sqlite3.h>

#include "fabsim/out.h"
#include "fabsim/telemetry.h"

/* ---- shared by the printouts of a run ------------------------------------------ */

/* How the fidelity f treats traffic classes, one sentence (summary.json
 * traffic_classes.model and the terminal; the analytic fidelity's says it
 * does not model them). */
const char *out__classes_model(cfg_fidelity f);
/* A training run's step (wl_job_step) as summary.json's "step" object
 * (caller owns it), or as the terminal's lines on stdout (memory.c). */
json_t *out__step_json(const wl_step *s, const cfg_scenario *cfg);
/* power.c: the summary's "power" object at utilization u (pwr_summarize's
 * figures, and the racks a cap throttles: rack, demand_kw, limit_kw,
 * throttle). Caller owns the reference. */
json_t *out__power_json(const pwr_model *m, double u, double step_s, double run_s);
/* trace.c: the summary's "trace" object (iteration time, means and per-rank
 * figures, the files and groups), and the same as the terminal's lines. */
json_t *out__trace_json(const trc_result *r, const trc_set *s, const cfg_scenario *cfg);
void out__trace_print(FILE *f, const trc_result *r, const trc_set *s);
/* power.timeseries: the telemetry's rows at the run's power (pwr_over_time_of:
 * p's model, its racks throttled as the run throttled them), or false when the
 * GPUs' states were not sampled (then nothing is written). facility_kw, it_kw,
 * gpu_kw: tel_rows entries each, or NULL. */
bool out__power_rows(const run_power *p, const tel *t, double *facility_kw, double *it_kw,
                     double *gpu_kw);
/* The summary's power.over_time: figures of the facility series over the
 * steps of job (NULL: the run is one) and power.bands; JSON null when the
 * GPUs were not sampled. */
json_t *out__power_over_time_json(const run_power *p, const tel *t, const cfg_scenario *cfg,
                                  const wl_job *job);
/* power.mitigation.*: the summary's power.mitigations[] into power (left out when none is
 * set or the series is off), and one "mitigation" line each for the terminal. */
void out__power_mitigations_add(json_t *power, const run_power *p, const tel *t,
                                const cfg_scenario *cfg, const wl_job *job);
void out__power_mitigations_print(const run_power *p, const tel *t, const cfg_scenario *cfg,
                                  const wl_job *job);
void out__step_text(const wl_step *s, const cfg_scenario *cfg);

/* ---- the one table of headline figures (figures.c) ------------------------------- */

/* Where a getter reads: the run's result, or one job of its jobs: list. */
typedef struct out__fig_src {
  const run_result *r;
  const run_job *job; /* NULL: the run's figure */
  uint32_t ji;        /* job's index in r->jobs */
} out__fig_src;

enum { OUT__FIG_RUN = 1u, OUT__FIG_JOB = 2u };

/* A row of the table: one figure, for every format. */
typedef struct out__figure {
  const char *key;   /* its path in summary.json ("collectives.0.busbw_GBps"); of a job's
                        object in jobs[] for a job's figure */
  const char *name;  /* the headline's "name" and sweep.csv's column ("busbw_GBps") */
  const char *label; /* for a person ("bus bandwidth") */
  const char *unit;  /* as summary.json's key states it ("GB/s"; "" none) */
  sim_unit kind;     /* how the one rule (sim_fmt) writes it for a person */
  double scale;      /* one `unit` in kind's base unit (GB/s: 1e9 B/s; us: 1e-6 s) */
  bool higher;       /* higher is better (else lower) */
  int step;          /* a step figure: its run_step_fig (several steps: their mean), else -1 */
  unsigned scope;    /* OUT__FIG_RUN (the run's), OUT__FIG_JOB (each job's), or both */
  /* the figure of the typed result; false: the run has none (another kind
   * of workload, not observed at this fidelity, not completed) */
  bool (*get)(const out__fig_src *s, double *v);
} out__figure;

/* The rows, in the order every format shows them. */
const out__figure *out__figures(size_t *n);
/* v (in f's unit) by the one formatting rule. */
void out__figure_fmt(char *buf, size_t n, const out__figure *f, double v);

/* One figure of one run. */
typedef struct out__fig_value {
  const out__figure *fig;
  const char *job; /* the job's name (a job's figure), borrowed; NULL: the run's */
  double value;
  uint32_t steps; /* a step figure over several steps (value: their mean), else 0: */
  double stdev, min, max;
} out__fig_value;

/* A run's figures in the table's order, only those it has. */
typedef struct out__headline {
  out__fig_value *v;
  size_t n, cap;
} out__headline;
/* From the typed result (the rows' getters), or from a summary.json (the
 * rows' keys: runs read back from a database). Valid while their source
 * lives; free with out__headline_free. */
void out__headline_of_result(out__headline *h, const run_result *r);
void out__headline_of_summary(out__headline *h, const json_t *summary);
void out__headline_free(out__headline *h);
/* The figure's name ("jobs.<job>.<name>" for a job's) and label ("<job>: <label>"). */
void out__fig_name(const out__fig_value *x, char *name, size_t n);
void out__fig_label(const out__fig_value *x, char *label, size_t n);
/* As out_headline's array (the report's "headline"). */
json_t *out__headline_json(const out__headline *h);
/* The value at a dotted path ("collectives.0.time_s"; a number indexes an array), or NULL. */
const json_t *out__json_path(const json_t *j, const char *path);

/* ---- text builder ------------------------------------------------------------ */

typedef struct out__buf {
  char *p;
  size_t len, cap;
  const char *nonfinite; /* out__num was given "inf" or "-inf": out__write refuses the text */
} out__buf;
void out__puts(out__buf *b, const char *s);
void out__putn(out__buf *b, const char *s, size_t n);
void out__printf(out__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A double as the shortest round-trip text (6 to 17 significant digits), "" for NAN
 * (a value knowingly absent); an infinity marks the buffer (nonfinite). */
void out__num(out__buf *b, double v);
/* A CSV field, quoted when it holds a comma, quote or newline. */
void out__csv_field(out__buf *b, const char *s);
void out__buf_free(out__buf *b);
/* Write b atomically to dir/name; SIM_ERANGE, nothing written, when a
 * figure in it is not finite (out__num). */
int out__write(const out__buf *b, const char *dir, const char *name, sim_error *err);

/* ---- columns of the time series ------------------------------------------------ */

/* One column: a metric, for all entities (entity "") or one watched entity. */
typedef struct out__col {
  bool peak; /* samples of a p99, a maximum or a queue: rows merge by their greatest */
  char metric[40];
  char entity[72];
  char unit[12];
} out__col;

typedef struct out__series {
  size_t rows, ncols;
  out__col *cols;
  double *t;   /* rows: start of each row, seconds */
  double *len; /* rows: length of each row, seconds */
  double *v;   /* rows x ncols, row-major */
} out__series;

/* Columns only for groups the telemetry observed, in a fixed order. */
/* power: power.timeseries' run power (its columns after the GPU states), or NULL. */
void out__series_build(out__series *s, const tel *t, const out_names *names,
                       const run_power *power);
void out__series_free(out__series *s);
/* "metric" or "entity:metric" (the CSV header and report key). */
void out__col_name(const out__col *c, char *buf, size_t n);

/* ---- writers ---------------------------------------------------------------------- */

void out__timeseries_csv(out__buf *b, const out__series *s);
void out__events_csv(out__buf *b, const tel *t);
void out__openmetrics(out__buf *b, const json_t *summary, const tel *t);

/* One row of the per-flow log as the files write it: names from the
 * topology and the scenario (flows.c). */
typedef struct out__flow_text {
  char src[64], dst[64];         /* the endpoints: gpuN (a storage endpoint: its path's end) */
  char src_nic[64], dst_nic[64]; /* "" : none (NVLink, the GPU itself) */
  char path[TOPO_MAX_PATH * 40]; /* vertex names joined by '>' ("" : no path) */
  const char *cls;               /* the class's name (fabric.classes) */
  const char *job;               /* the jobs: list's name (of its source GPU, else of its
                                    destination: a read from storage); "" : none */
} out__flow_text;
void out__flow_text_of(const run_flows *f, const topo *t, const tel_flow *r, out__flow_text *o);
void out__flows_csv(out__buf *b, const run_flows *f, const topo *t);

/* Numeric leaves of a JSON object as "a.b.0.c" -> value, in document order. */
typedef void (*out__leaf_fn)(void *ctx, const char *name, double v);
void out__json_leaves(const json_t *j, out__leaf_fn fn, void *ctx);

/* The report's data object for one run (summary, scenario, headline (taken:
 * out__headline_json's), series, events, hot ports, FCT histogram, steps). */
json_t *out__report_data(const json_t *summary, json_t *headline, const char *scenario_yaml,
                         const tel *t, const out__series *s, const out_names *names,
                         uint32_t top_ports);
/* report.html around a data object: {"mode": "run"|"compare", ...}. */
int out__report_write(const json_t *data, const char *dir, const char *title, sim_error *err);

/* ---- sweep points (table.c) --------------------------------------------------------- */

/* The value of key in a point label "k1=v1 k2=v2", as written ("-" when absent). */
void out__point_value(const char *point, const char *key, char *out, size_t n);
/* A --vary key's values across the runs (out_db_read_runs items) as numbers
 * in v (one per run, NAN where a run's point lacks the key), when every
 * value reads as one kind: a plain number (unit ""), a size ("B"), a
 * bandwidth ("b/s") or a time ("s"), in that order of trial. Returns the
 * unit, or NULL when the values are categorical (v then undefined). */
const char *out__param_values(const json_t *runs, const char *key, double *v);

/* ---- database -------------------------------------------------------------------- */

typedef struct out__db_run {
  const json_t *summary;
  const char *scenario_yaml;
  const char *started_at;
  const char *dir;
  const char *sweep, *point; /* NULL when not in a sweep */
  bool complete;
  const run_flows *flows; /* output.flows: the flows table's rows (NULL or off: none) */
  const topo *t;          /* names of the flows' endpoints and paths */
} out__db_run;
/* Append one run (runs, metrics, timeseries, events, hot ports, flows) in one
 * transaction; *run_id gets its id. */
/* The results database's schema version (PRAGMA user_version): 2 since
 * the flows table. A reader or writer refuses a file of a newer one. */
enum { OUT__DB_VERSION = 2 };
/* PRAGMA <schema>.user_version of an open database into *version. */
int out__db_version(sqlite3 *db, const char *schema, int *version);
/* SIM_ECONFIG "[path: ]was written by a newer fabsim ..." when version is
 * newer than OUT__DB_VERSION, else SIM_OK. */
int out__db_newer(int version, sim_error *err, const char *path);
/* Open a results database (a regular file; write: created when absent),
 * with the busy timeout and foreign keys on. */
int out__db_open(const char *path, bool write, sqlite3 **db, sim_error *err);
/* SIM_EIO "path: what: SQLite's message". */
int out__db_fail(sqlite3 *db, sim_error *err, const char *path, const char *what);
int out__db_append(const char *path, const out__db_run *r, const out__series *s, const tel *t,
                   const out_names *names, uint32_t top_ports, int64_t *run_id, sim_error *err);

#endif
