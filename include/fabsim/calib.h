/* fabsim calibration inputs: measurements of a user's own cluster.
 *
 * cal_nccltests_parse reads the text that NVIDIA's nccl-tests print
 * (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf,
 * sendrecv_perf, broadcast_perf, reduce_perf; versions 2.x): the "Using
 * devices" block (one line per rank: its host and GPU), the column header of
 * the results table, one row per message size (out-of-place and in-place
 * time, algbw, busbw, #wrong or error), and the closing "Avg bus bandwidth"
 * line. Any number of ranks, hosts and sizes. Lines a launcher prefixes with
 * "[N] " and NCCL's own INFO/WARN lines in between are accepted.
 *
 * What is refused, each as "file:line:col: what; what is allowed" (SIM_ECONFIG):
 * no results table, a row with missing or non-numeric columns, a row whose
 * #wrong is not 0 (the measurement failed its own check), a file that ends
 * before the "Avg bus bandwidth" line (truncated), no rank lines, and rows
 * whose busbw / algbw is not the bus factor of the collective over the
 * ranks found (the output of another collective, or ranks missing).
 *
 * Ownership: cal_run owns its arrays; cal_run_free releases them.
 */
#ifndef FABSIM_CALIB_H
#define FABSIM_CALIB_H

#include <stddef.h>
#include <stdint.h>

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
  uint64_t bytes;      /* "size" column */
  double time_us;      /* out-of-place */
  double algbw_GBps;
  double busbw_GBps;
  double time_us_inplace; /* < 0 when the row has no in-place columns */
  uint32_t line;       /* where it stands in the file, for messages */
} cal_point;

typedef struct cal_run {
  char name[256];      /* the file's name as given */
  cal_op op;
  uint32_t ranks;      /* GPUs in the test */
  uint32_t nodes;      /* distinct hosts */
  uint32_t gpus_per_node; /* most ranks on one host */
  char gpu[96];        /* device name of rank 0, as printed */
  cal_point *pt;       /* rows in file order */
  size_t n;
  double avg_busbw_GBps; /* the closing line */
} cal_run;

/* Parse `len` bytes of nccl-tests output named `name` (messages cite it).
 * `op` is the collective when the caller knows it (CAL_OP_UNKNOWN: taken
 * from a "Collective test starting: X_perf" line, else from the file name,
 * else an error that says how to name it). */
int cal_nccltests_parse(cal_run *out, const char *name, const char *text, size_t len, cal_op op,
                        sim_error *err);
void cal_run_free(cal_run *r);

#ifdef __cplusplus
}
#endif
#endif
