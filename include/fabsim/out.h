/* fabsim output: files a run leaves in output.dir and what the verbs
 * print, built from typed results. Every file is written whole or not at all (temp + rename). */
#ifndef FABSIM_OUT_H
#define FABSIM_OUT_H

#include <jansson.h>
#include <stdio.h>

#include "fabsim/core.h"
#include "fabsim/reliability.h"
#include "fabsim/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- no number that cannot be true leaves the process ----------------------------- */

/* jansson's json_real(NAN or infinity) is NULL, and a NULL value vanishes
 * from its object without a word. Every file that includes this header
 * builds reals through out_json_real instead (the macro below): a finite
 * value is json_real's; any other is a marker object that out_json_check,
 * run by every JSON writer here (out_write_json, out_json_text,
 * out_write_run, the report), finds and refuses with the figure's path.
 * A value that is knowingly absent is json_null(), never a NAN. */
json_t *out_json_real(double v);
#define json_real(v) out_json_real(v)
/* SIM_ERANGE naming `what` ("summary.json") and the first non-finite
 * figure's path ("power.cost_usd_per_run"); SIM_OK when there is none.
 * O(nodes of the tree). */
int out_json_check(const json_t *root, const char *what, sim_error *err);
/* An integer as what it is: exact below 2^63, a real (its nearest double)
 * above, where json_integer's int64 would turn it negative. */
json_t *out_json_u64(uint64_t v);

/* Serialize `root` (2-space indent, keys in insertion order, reals with 12
 * significant digits) and write it atomically to dir/name; SIM_ERANGE
 * (out_json_check) before anything is written when a figure is not finite. */
int out_write_json(const json_t *root, const char *dir, const char *name, sim_error *err);
/* The same text, for stdout. Caller frees with free(). A figure that is
 * not finite is an error no caller can turn into output: the process says
 * which (out_json_check) on stderr and exits with status 1. */
char *out_json_text(const json_t *root);

/* A verb's --json: out_json_text(root) and a newline on stdout; releases
 * root (json_decref). */
void out_print_json(json_t *root);

/* fabsim calibrate --json: a fit (include/fabsim/calib.h) as one object:
 * each file's rows, residuals by size range against CAL_TARGET_SMALL and
 * CAL_TARGET_LARGE, the parameters before and after, the keys written, the
 * algorithm sets tried, `written` the fragment's path. */
struct cal_fit;
json_t *out_calib_json(const struct cal_fit *f, const char *written);
/* The same fit as text on stdout (calib_text.c). */
void out_calib_print(const struct cal_fit *f, const char *written);

/* ---- what the verbs print (memory.c) ------------------------------------------------ */

/* fabsim memory: run_memory_of's result as one object (model, parallel,
 * bytes per GPU, activations, fits, suggestion), or as text on stdout. */
json_t *out_memory_json(const cfg_scenario *cfg, const run_memory *r);
void out_memory_print(const cfg_scenario *cfg, const run_memory *r);
/* The topology's figures (inventory, cost, and the storage and management
 * networks when there are any) as summary.json's "topology" object, and
 * the storage and management networks as text on stdout, a line each,
 * labels padded to `width` (nothing without them) (topo.c). */
json_t *out_topo_json(const topo *t, const cfg_scenario *cfg);
void out_networks_print(const topo *t, const cfg_scenario *cfg, int width);
/* fabsim reliability (reliability.c): the run's failures, checkpoints,
 * ETTR, spares and the cluster's power (pm at power.utilization), as text on
 * stdout or as one object with the scenario read (file, sets) and, when
 * rows is not NULL, the sweep's rows; the sweep's table on stdout. */
void out_reliability_print(const rel_params *p, const rel_result *r, const pwr_model *pm,
                           const cfg_scenario *cfg);
json_t *out_reliability_json(const rel_params *p, const rel_result *r, const pwr_model *pm,
                             const cfg_scenario *cfg, const char *file, const char *const *sets,
                             int nsets, const rel_sweep_row *rows, size_t nrows);
void out_reliability_sweep_print(const rel_sweep_row *rows, size_t nrows);

/* fabsim topo: out_topo_json and the memory a run would need at each
 * fidelity (cfg_memory_estimate), as one object or as text on stdout. */
json_t *out_topo_verb_json(const topo *t, const cfg_scenario *cfg);
void out_topo_print(const topo *t, const cfg_scenario *cfg);
/* fabsim topo --dot: path (a file, or "-" for stdout) checked before the
 * topology is built (a folder: SIM_ECONFIG), then the graph written to it
 * (topo_write_dot; each server one box when collapse): SIM_ECONFIG when the
 * path cannot be opened, SIM_EIO when the write fails. */
int out_topo_dot_check(const char *path, sim_error *err);
int out_topo_dot(const topo *t, const char *path, bool collapse, sim_error *err);
/* The scenario a run read: {"file", "overrides", "seed"}. */
json_t *out_scenario_json(const char *file, const char *const *sets, int nsets,
                          const cfg_scenario *cfg);

/* ---- fabsim run (run_summary.c, run_text.c, run.c) ------------------------------------ */

/* summary.json of a run, whole: every figure in its fixed key order, then
 * "complete", "outcome", "telemetry", "files" and "database"; the one
 * writer, never changed after. Caller owns it. */
json_t *out_run_summary(const run_result *r);
/* The terminal summary on stdout; `written`: the output folder, or NULL. */
void out_run_print(const run_result *r, const char *written);
/* stderr's line when the simulated job failed (r->w->failed). */
void out_run_failed_print(const run_result *r);
/* The progress line on stderr (run_progress_fn.draw): a training run's, or
 * run_drive_sim's (p->what NULL). */
void out_progress_draw(void *ctx, const run_progress *p);
/* Every file of the run r (out_write_run's, then summary.json and
 * scenario.yaml), `summary` out_run_summary's; r->provenance: when it
 * started and the sweep point it is (the database's runs.started_at, sweep
 * and point). */
int out_run_files(const run_result *r, const json_t *summary, sim_error *err);
/* What a verb prints after a run: nothing, summary.json's text, or the
 * terminal summary. */
typedef enum { OUT_PRINT_NONE, OUT_PRINT_TEXT, OUT_PRINT_JSON } out_print;
/* The run's report: out_run_summary, out_run_files, then (only when every
 * file was written) the printout `how` on stdout. */
int out_run_report(const run_result *r, out_print how, sim_error *err);

/* ---- what a run leaves in output.dir (run.c) ---------------------------------------- */

typedef struct tel tel;

/* Names of telemetry entities (the output module knows no topology). */
typedef struct out_names {
  void *ctx;
  const char *(*port)(void *ctx, uint32_t port, char *buf, size_t n);
  const char *(*nic)(void *ctx, uint32_t nic, char *buf, size_t n);
} out_names;

typedef struct out_run {
  const json_t *summary;     /* borrowed, whole (out_run_summary), not changed */
  const char *scenario_yaml; /* the resolved scenario */
  const tel *tel;            /* finished telemetry, or NULL */
  out_names names;
  bool complete;        /* false: stopped early (Ctrl-C); outputs say so */
  bool failed;          /* the simulated job failed (a transfer lost, a GPU down): the
                           summary's "outcome" is "failed" and "complete" false */
  const char *dir;      /* output.dir */
  const char *database; /* output.database as configured ("none": no database) */
  bool report, openmetrics;
  uint32_t top_ports;
  const char *started_at; /* wall clock, ISO 8601 UTC (not in deterministic files) */
  const char *sweep;      /* the sweep's id, or NULL (run_provenance) */
  const char *point;      /* the sweep point's "key=value key=value", or NULL */
  const run_flows *flows; /* output.flows: flows.csv and the database's rows (NULL: none) */
  const topo *t;          /* the flows' names */
  const run_power *power; /* power.timeseries: the run's power (power columns), else NULL */
  /* the run's typed result, for report.html's headline figures (the figure
   * table's getters); NULL: read them from summary (out_headline) */
  const run_result *result;
} out_run;

/* Write timeseries.csv, events.csv, report.html (if asked), metrics.txt (if
 * asked), flows.csv (if flows->on) into dir, each atomically, and append the
 * run to the database in one transaction (tagged with its sweep and point,
 * if any). */
int out_write_run(const out_run *r, sim_error *err);

/* The database path a run uses: NULL for "none", else database, inside dir
 * when relative. Caller frees with sim_free. */
char *out_database_path(const char *dir, const char *database);

/* ---- results databases (db.c, db_merge.c, db_order.c), comparisons (report.c) ----------- */

/* Whether path may be used as a results database, before anything runs: a
 * regular file that SQLite reads and that holds fabsim's runs table (or no
 * table yet: an empty file), or a path that does not exist yet when
 * `create` (a run or a sweep makes it). Else SIM_ECONFIG (SIM_ENOENT: absent
 * and not create) and what it is instead in err ("is a folder", "is not an
 * SQLite database (file is not a database)", ...), without the path. Reads
 * the schema only. */
int out_db_check(const char *path, bool create, sim_error *err);
/* Runs of a database as a JSON array, in run_id order: all runs (sweep NULL,
 * nids 0), one sweep's, or the given ids (SIM_ENOENT names a missing one).
 * Each: {"run_id", "scenario", "point", "complete", "summary": {...},
 * "output_dir"}. */
int out_db_read_runs(const char *path, const char *sweep, const int64_t *ids, size_t nids,
                     json_t **out, sim_error *err);
/* One aggregate series of a run: times (start of each interval, s) and values. */
int out_db_series(const char *path, int64_t run_id, const char *metric, json_t **t, json_t **v,
                  sim_error *err);

/* Copy every run of the database file src (and its rows in every table keyed
 * by run_id) into dst (created when absent, taking src's schema), with new
 * run ids in src's run_id order, in one transaction: all or nothing. In the
 * copied runs' text columns the path src_name (where the runs were written)
 * becomes dst. *merged (may be NULL) gets the number of runs copied. The
 * tables are read from src's schema, so columns added later follow. */
int out_db_merge(const char *dst, const char *src, const char *src_name, size_t *merged,
                 sim_error *err);

/* Renumber the runs of one sweep (runs.sweep = sweep) so that their ids
 * follow the order of dirs (each run's output_dir): the sweep keeps the set
 * of ids its runs hold, the run of dirs[0] takes the smallest of them, and
 * so on; a run of the sweep in no folder of dirs comes after, in id order.
 * Other runs keep their ids. Every table keyed by run_id follows, in one
 * transaction: all or nothing. No database at path (nothing written): done.
 * *moved (may be NULL) gets the number of runs whose id changed. */
int out_db_order_runs(const char *path, const char *sweep, const char *const *dirs, size_t ndirs,
                      size_t *moved, sim_error *err);

/* The headline figures of a summary, in the figure table's order
 * (src/output/figures.c): [{"name", "label", "unit", "better":
 * "lower"|"higher", "value"}], only those present. A step figure of a run
 * of several steps is their mean (summary step_stats), with "steps",
 * "stdev", "min" and "max" beside it. */
json_t *out_headline(const json_t *summary);
/* Comparison report.html in dir for runs (out_db_read_runs items, each with
 * a "label"), their series read from the database at dbpath. */
int out_compare_report(const char *dbpath, const json_t *runs, const char *dir, sim_error *err);

/* ---- tables of runs' headline figures (table.c) ------------------------------------- */

/* runs: out_db_read_runs items, each with a "label" (and "point" for a sweep:
 * "k1=v1 k2=v2"). The figures are the union of the runs' headline figures,
 * in out_headline's order.
 *
 * One row per run: #, the value of each key, then each figure. */
void out_sweep_table(FILE *f, const json_t *runs, const char *const *keys, size_t nkeys);
/* One row per figure, one column per run with its difference to the first. */
void out_compare_table(FILE *f, const json_t *runs);
/* sweep.csv: point, complete, the keys, each figure as "name (unit)"; numbers
 * as the shortest text that reads back exactly, "" when a run lacks the
 * figure. A key whose values all read as numbers of one kind (a plain
 * number, size, bandwidth or time) is a column of numbers in the kind's base
 * unit, named "key (B)", "key (b/s)" or "key (s)"; other keys' values as
 * written (quoted as CSV needs). A step figure that a run has over several
 * steps is followed by NAME_stdev, NAME_min and NAME_max (a run of one step:
 * 0 and its figure). Caller frees with sim_free. */
char *out_sweep_csv(const json_t *runs, const char *const *keys, size_t nkeys);

/* ---- what fabsim sweep and compare print and write (sweep.c) ------------------------- */

/* The runs (as above) on f: JSON text (json), else out_sweep_table. */
void out_sweep_print(FILE *f, const json_t *runs, const char *const *keys, size_t nkeys, bool json);
/* dir/sweep.csv, then dir/report.html comparing the runs (when there are any),
 * their series read from the database at db. */
int out_sweep_files(const char *dir, const char *db, const json_t *runs, const char *const *keys,
                    size_t nkeys, sim_error *err);
/* The runs on f: JSON text (json), else out_compare_table. */
void out_compare_print(FILE *f, const json_t *runs, bool json);
/* dir (made if absent) and dir/report.html comparing the runs. */
int out_compare_files(const char *dir, const char *db, const json_t *runs, sim_error *err);

#ifdef __cplusplus
}
#endif
#endif
