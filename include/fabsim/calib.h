/* fabsim calibration inputs: measurements of a user's own cluster.
 *
 * cal_nccltests_parse reads the text that NVIDIA's nccl-tests print
 * (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf,
 * sendrecv_perf, broadcast_perf, reduce_perf; versions 2.x): the "Using
 * devices" block (one line per rank: its host and GPU), the column header of
 * the results table, one row per message size (out-of-place and in-place
 * time, algbw, busbw, #wrong or error), and the closing "Avg bus bandwidth"
 * line. Any number of ranks, hosts and sizes. Lines a launcher prefixes with
 * "[N] " or Open MPI's --tag-output "[J,R]<stdout>:", and NCCL's own
 * INFO/WARN lines in between are accepted. Rows of size 0 (-b 0) are read
 * and kept (the fit leaves them out and counts them). The file's name is
 * kept with control characters as \xNN (cal_run.name), in messages too.
 *
 * What is refused, each as "file:line:col: what; what is allowed" (SIM_ECONFIG):
 * no results table, a row with missing or non-numeric columns, a size that
 * is not a whole number of bytes ("64K"), a time of 0 for a size above 0,
 * an algbw that is not size / time within what both columns print, a row
 * whose #wrong is not 0 or an "Out of bounds values : N FAILED" line (the
 * measurement failed its own check), a file that ends before the "Avg bus
 * bandwidth" line (truncated), no rank lines, and rows whose busbw / algbw
 * is not the bus factor of the collective over the ranks found (the output
 * of another collective, or ranks missing).
 *
 * Ownership: cal_run owns its arrays; cal_run_free releases them.
 *
 * The rest of the module turns such measurements into scenario keys:
 * cal_simulate runs one collective of a file's shape on the analytic
 * fidelity (its spec from the scenario by coll_spec_from_cfg, as every
 * workload's), cal_fit_run fits link efficiencies, protocol and in-switch
 * latencies and per-algorithm bandwidth factors to every row of every
 * file and decides which algorithms the cluster ran, cal_fit_fragment
 * writes them as a scenario fragment (fabsim calibrate;
 * docs/validation.md, Calibration).
 */
#ifndef FABSIM_CALIB_H
#define FABSIM_CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "fabsim/coll.h"
#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CAL_OP_UNKNOWN = 0,
  CAL_OP_ALLREDUCE,
  CAL_OP_ALLGATHER,
  CAL_OP_REDUCESCATTER,
  CAL_OP_ALLTOALL,
  CAL_OP_SENDRECV,
  CAL_OP_BROADCAST,
  CAL_OP_REDUCE,
} cal_op;

const char *cal_op_name(cal_op op);
/* "allreduce", "all_reduce", "all_reduce_perf" and the like; CAL_OP_UNKNOWN
 * when none matches. */
cal_op cal_op_parse(const char *text, size_t len);
/* nccl-tests' bus factor: busbw = algbw x factor (AllReduce 2(n-1)/n;
 * AllGather, ReduceScatter, AllToAll (n-1)/n; the others 1). */
double cal_bus_factor(cal_op op, uint32_t ranks);

/* One row of the results table: one message size. */
typedef struct cal_point {
  uint64_t bytes; /* "size" column */
  double time_us; /* out-of-place */
  double algbw_GBps;
  double busbw_GBps;
  double time_us_inplace; /* < 0 when the row has no in-place columns */
  uint32_t line;          /* where it stands in the file, for messages */
} cal_point;

typedef struct cal_run {
  char name[256]; /* the file's name as given */
  cal_op op;
  uint32_t ranks;         /* GPUs in the test */
  uint32_t nodes;         /* distinct hosts */
  uint32_t gpus_per_node; /* most ranks on one host */
  char gpu[96];           /* device name of rank 0, as printed */
  cal_point *pt;          /* rows in file order */
  size_t n;
  double avg_busbw_GBps; /* the closing line */
  /* NCCL_ALGO and NCCL_PROTO as NCCL echoed them with NCCL_DEBUG=INFO
   * ("NCCL INFO NCCL_ALGO set by environment to Ring"), "" when the file
   * has no such line; their lines, for messages */
  char nccl_algo[128], nccl_proto[64];
  uint32_t nccl_algo_line, nccl_proto_line;
  /* the file it was read from (cal_nccltests_read; 0, 0 for parsed text),
   * so an output can be told apart from every input (cal_output_check) */
  uint64_t dev, ino;
  /* The shape (ranks, nodes, GPUs per node) is the base scenario's, set by
   * cal_run_shape_from_base: the file has no rank lines (a console copy
   * without its "Using devices" block, a busbw table), or fewer than its
   * busbw / algbw says (a post that kept only some); shape_why says which.
   * Until then ranks is 0 and, for a busbw table, every time_us 0. */
  bool shape_from_base;
  char shape_why[96];
  /* rows came as a busbw table (size and busbw alone: time = size x bus
   * factor / busbw, derived when the shape is known) */
  bool busbw_table;
  /* the line where the run aborted after its last row ("Test NCCL
   * failure", "Test failure"): the rows before it are complete; 0 if not */
  uint32_t aborted_line;
} cal_run;

/* Parse `len` bytes of nccl-tests output named `name` (messages cite it).
 * `op` is the collective when the caller knows it (CAL_OP_UNKNOWN: taken
 * from a "Collective test starting: X_perf" line, else from the file name,
 * else an error that says how to name it). */
int cal_nccltests_parse(cal_run *out, const char *name, const char *text, size_t len, cal_op op,
                        sim_error *err);
void cal_run_free(cal_run *r);
/* Give a run whose shape is the base's (cal_run.shape_from_base) that
 * shape: ranks = nodes x gpus_per_node, and the checks the rank lines
 * would have had (busbw / algbw is the collective's bus factor over those
 * ranks; a busbw table gets its times). SIM_ECONFIG "FILE:LINE:1: ..."
 * when the rows disagree with the shape, with what would agree. */
int cal_run_set_shape(cal_run *r, uint32_t nodes, uint32_t gpus_per_node, sim_error *err);
/* The scenario keys that hold fabsim to what the run's NCCL_ALGO and
 * NCCL_PROTO left NCCL (NCCL's syntax: "ring,tree", "^nvls",
 * "allreduce:tree;allgather:ring", case-insensitive), as "key=value" into
 * sets[0..cap): one algorithm left for the file's collective forces
 * workload.collective.algorithm (CollNetDirect and CollNetChain are
 * fabsim's collnet); several leave the tuner its pick, without NVLS and
 * NVLSTree (workload.collective.nvls=false) or CollNet (fabric.sharp=false)
 * when they are excluded; one protocol forces workload.collective.protocol.
 * alltoall and sendrecv run no algorithm. Returns how many keys, or -1 with
 * err "file:line: ..." for a name NCCL does not know or an algorithm
 * fabsim does not model (PAT) forced. */
int cal_run_env_sets(const cal_run *r, char (*sets)[64], int cap, sim_error *err);
/* Read and parse one file, named as on a command line: PATH, or OP:PATH
 * to name the collective (e.g. allreduce:run7.log). Refused, as
 * "PATH: what": a missing or unreadable file, not a regular file, over
 * CAL_NCCLTESTS_MAX_BYTES; then everything cal_nccltests_parse refuses. */
enum { CAL_NCCLTESTS_MAX_BYTES = 64 << 20 };
int cal_nccltests_read(cal_run *out, const char *arg, sim_error *err);
/* The run as nccl-tests prints it (header, "Using devices" block with
 * hosts node000.. and r->gpu, the table with float elements, the closing
 * lines), times with nccl-tests' precision (2 decimals under 100 us, 1
 * under 10 ms, none above); cal_nccltests_parse reads it back. Used to write
 * fabsim's own samples and the fit's tests. Caller frees with sim_free. */
char *cal_nccltests_format(const cal_run *r);

/* ---- one collective from a scenario (measure.c) ---- */

/* One simulated nccl-tests row. */
typedef struct cal_sim {
  double time_s;
  double algbw_GBps, busbw_GBps; /* nccl-tests' definitions (cal_bus_factor) */
  cfg_coll_algorithm algorithm;  /* as run: the tuner's picks */
  cfg_coll_protocol protocol;
  uint32_t channels;
} cal_sim;

/* Does cal_simulate model op? (all but reduce) */
bool cal_op_simulated(cal_op op);
/* Simulate one `op` of `bytes` (nccl-tests' size column) over GPUs
 * 0..ranks-1 of t on the analytic backend, with cfg's algorithm, protocol,
 * channels and latencies (t built from cfg at the analytic fidelity).
 * sendrecv: every rank sends to the next at once (measure.c). SIM_EINVAL
 * for reduce, fewer than 2 or more ranks than GPUs, or a collective whose
 * transfers fail. O(transfers) per call. */
int cal_simulate(const topo *t, const cfg_scenario *cfg, cal_op op, uint64_t bytes, uint32_t ranks,
                 cal_sim *out, sim_error *err);

/* ---- the fit (fit.c) ---- */

typedef enum {
  CAL_PARAM_NVLINK_EFF, /* cluster.scale_up.efficiency: from single-node files */
  CAL_PARAM_NIC_EFF,    /* cluster.nic.efficiency: from multi-node files */
  CAL_PARAM_LAT_LL,     /* factor on every workload.collective.latency.ll.* key */
  CAL_PARAM_LAT_LL128,
  CAL_PARAM_LAT_SIMPLE,
  CAL_PARAM_LAT_NVLS, /* factor on workload.collective.latency.nvls.*: rows run as nvls */
  CAL_PARAM_LAT_NVLSTREE,
  CAL_PARAM_LAT_COLLNET,
  CAL_PARAM_BW_RING, /* workload.collective.bandwidth.ring: rows run as ring */
  CAL_PARAM_BW_TREE,
  CAL_PARAM_BW_NVLS,
  CAL_PARAM_BW_NVLSTREE,
  CAL_PARAM_BW_COLLNET,
  CAL_NPARAM
} cal_param;
/* The key a parameter sets ("cluster.nic.efficiency",
 * "workload.collective.bandwidth.ring"), or the prefix of the keys a
 * latency factor scales ("workload.collective.latency.ll"). */
const char *cal_param_name(cal_param p);
typedef enum {
  CAL_KIND_EFFICIENCY, /* a link efficiency, 0.3..1 */
  CAL_KIND_LATENCY,    /* a factor on latency keys, 1/8..8 */
  CAL_KIND_BANDWIDTH   /* an algorithm's bandwidth factor, 0.3..1 */
} cal_param_kind;
cal_param_kind cal_param_kind_of(cal_param p);
/* The algorithm a latency (in-switch) or bandwidth parameter belongs to,
 * CFG_ALGO_AUTO for the others. */
cfg_coll_algorithm cal_param_algorithm(cal_param p);

/* The latency keys a latency factor scales: every
 * workload.collective.latency.* key, in schema order, with the parameter
 * that scales it and where it sits in cfg_coll_latency. */
typedef struct cal_latency_key {
  cal_param param;
  const char *key;   /* "workload.collective.latency.ll.launch" */
  const char *field; /* "launch" */
  size_t offset;     /* of its simtime_ps in cfg_coll_latency */
} cal_latency_key;
const cal_latency_key *cal_latency_keys(size_t *n);
simtime_ps cal_latency_get(const cfg_coll_latency *l, const cal_latency_key *k);

/* The cluster the files were measured on: a scenario (NULL: defaults) and
 * --set overrides on it. Each file's shape (cluster.nodes and
 * cluster.gpus_per_node from its rank lines) is set over it; without a file
 * and without a cluster.gpu override, cluster.gpu comes from the files'
 * device names. */
typedef struct cal_base {
  const char *path;
  const char *const *sets;
  int nsets;
  bool keep_algorithms; /* no detection: the base's algorithm keys as they are */
} cal_base;

/* Give every run whose shape is the base's (cal_run.shape_from_base) the
 * base's cluster.nodes x cluster.gpus_per_node (cal_run_set_shape).
 * Errors: the base does not load; the rows disagree with that shape. */
int cal_runs_shape_from_base(cal_run *runs, size_t nruns, const cal_base *base, sim_error *err);

/* Rows below this size are "small" (latency-bound), the others "large", in
 * the per-file residuals the target is stated on (rms of ln(model /
 * measured) <= 0.10 small, <= 0.05 large; docs/validation.md, Calibration). */
enum { CAL_SMALL_BYTES = 64 << 10 };
#define CAL_TARGET_SMALL 0.10 /* the targets of those rms: under CAL_SMALL_BYTES ... */
#define CAL_TARGET_LARGE 0.05 /* ... and from it */

/* One row of one file: measured, and the model before and after the fit. */
typedef struct cal_row {
  uint64_t bytes;
  uint32_t line;
  bool used; /* in the fit: size > 0 (rows of size 0 are read, counted, left out) */
  double measured_us, before_us, fitted_us;
  double measured_busbw_GBps, fitted_busbw_GBps;
  cfg_coll_algorithm algorithm; /* fitted model's picks */
  cfg_coll_protocol protocol;
} cal_row;

/* The rms of ln(model / measured) over a set of rows, before and after the
 * fit, and how many rows (0: the rms are 0 and mean nothing). */
typedef struct cal_rms {
  double before, after;
  size_t rows;
} cal_rms;

typedef struct cal_file_fit {
  const cal_run *run;           /* the caller's */
  cal_row *rows;                /* run->n, owned */
  double rms_before, rms_after; /* of ln(model / measured) over used rows */
  cal_rms small, large;         /* the same over used rows under / from CAL_SMALL_BYTES */
} cal_file_fit;

/* Which algorithms the cluster ran, as fabsim's keys can say it: every
 * candidate the tuner has (NVLS and NVLSTree where the GPU has them, the
 * tree, the ring), no NVLS nor NVLSTree (workload.collective.nvls=false),
 * or the ring alone for AllReduce (workload.collective.algorithm=ring).
 * cal_fit_run decides between them from the rows (see there). */
typedef enum { CAL_ALGOS_ALL, CAL_ALGOS_NO_NVLS, CAL_ALGOS_RING, CAL_NALGOS } cal_algos;
const char *cal_algos_name(cal_algos a);

typedef struct cal_fit {
  bool fitted[CAL_NPARAM]; /* the files inform it (else it stays at before) */
  /* efficiencies as values; latency factors relative to the base's latencies
   * (before 1) */
  double before[CAL_NPARAM], after[CAL_NPARAM];
  bool at_bound[CAL_NPARAM];              /* fitted and ended on a bound of its search */
  cfg_coll_latency lat_before, lat_after; /* the keys themselves */
  char gpu[16];                           /* cluster.gpu inferred from the files, or "" */
  cal_file_fit *files;
  size_t nfiles;
  double rms_before, rms_after; /* over every used row */
  size_t rows_used;
  size_t rows_skipped;  /* read but left out: size 0 */
  uint32_t evaluations; /* model evaluations the searches took, all candidates */
  /* The algorithm sets tried (the base's, unless it fixes them or every
   * AllReduce file echoes NCCL_ALGO), each one's objective at its best fit
   * and its fitted parameter count, and the one kept. */
  bool tried[CAL_NALGOS];
  double cost[CAL_NALGOS];
  uint32_t nfitted[CAL_NALGOS];
  cal_algos algos;
} cal_fit;

/* Fit the parameters the files inform to every used row of every run:
 * minimize sum soft_l1(ln(t_model / t_measured)) (scale 0.1: rows off by
 * more than ~10% count linearly, not squared) by a compass search
 * within physical bounds (efficiency and bandwidth factor 0.3..1 in steps
 * down to 1e-4; latency factor 1/8..8, down to 0.1%), from the base's
 * values. Which algorithms the cluster ran (cal_algos): unless the base
 * fixes them (keep_algorithms, workload.collective.nvls false, an
 * algorithm set) or every AllReduce file echoes NCCL_ALGO, each candidate
 * set is fitted, from the fewest algorithms up, and a richer set is kept
 * only when it passes a likelihood-ratio test against the one before:
 * n ln(cost_simpler / cost_richer) above the 95% point of chi-squared with
 * as many degrees of freedom as the richer set fits more parameters (n the
 * rows; Gaussian log residuals of unknown variance). Deterministic.
 * Errors (SIM_ECONFIG, SIM_EINVAL): the base does not load (file:line:col),
 * the GPU cannot be told, a file's collective is not simulated. The runs
 * must outlive out. */
int cal_fit_run(cal_fit *out, const cal_base *base, const cal_run *runs, size_t nruns,
                sim_error *err);
void cal_fit_free(cal_fit *f);
/* The fitted keys as "key=value" strings, in schema order, for --set or a
 * scenario: up to cap of them into sets[i] (128 bytes each); returns how
 * many there are. With them, the algorithms found: workload.collective.nvls
 * false when NVLS was not run, workload.collective.algorithm ring when the
 * ring alone was (where every file's collective has a ring). */
size_t cal_fit_sets(const cal_fit *f, char (*sets)[128], size_t cap);
/* The scenario fragment (YAML of the fitted keys, with a header comment
 * naming the inputs and the same keys as --set arguments). `inputs`
 * describes the base for the comment (control characters shown as \xNN,
 * as file names are: no input can start a line of the fragment). Caller
 * frees with sim_free. */
char *cal_fit_fragment(const cal_fit *f, const char *inputs);
/* Where the fragment may go: a new name, or a regular file (a symlink to
 * one is replaced, not followed: sim_write_file_atomic renames over the
 * name), that is none of the runs' files. Refused as "PATH: what; what is
 * allowed" (SIM_ECONFIG): a folder (or a name ending in '/'), a device, a
 * FIFO, a socket, a symlink to any of these, an input file. O(runs). */
int cal_output_check(const char *path, const cal_run *runs, size_t nruns, sim_error *err);

/* What `fabsim calibrate` asks: the files (OP:FILE or FILE), the base they
 * were measured on, where the fragment goes. */
typedef struct cal_request {
  const char *const *files;
  size_t nfiles;
  cal_base base;
  const char *output;
} cal_request;
/* What it gives: the runs read (the fit points into them) and the fit. */
typedef struct cal_calibration {
  cal_run *runs;
  size_t nruns;
  cal_fit fit;
  bool fitted; /* fit made (then freed by cal_calibration_free) */
} cal_calibration;
/* The whole pipeline: read every file, check q->output (before the fit:
 * nothing spent), give files without rank lines the base's shape, fit, and
 * write the fragment (sim_write_file_atomic), its header naming the base.
 * Not c->fitted: the error is the input's (the reader's, cal_output_check's,
 * cal_runs_shape_from_base's or cal_fit_run's code). c->fitted and SIM_EIO:
 * the fragment could not be written (its name is checked again). Free c
 * with cal_calibration_free whatever the result. */
int cal_calibrate(const cal_request *q, cal_calibration *c, sim_error *err);
void cal_calibration_free(cal_calibration *c);

#ifdef __cplusplus
}
#endif
#endif
