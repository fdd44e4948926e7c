/* nccl-tests output written by fabsim (cal_nccltests_format,
 * include/fabsim/calib.h): the layout of nccl-tests 2.13 (src/common.cu:
 * the header lines, "Using devices", the table with out-of-place and
 * in-place columns, "Out of bounds values" and "Avg bus bandwidth"), with
 * its number formats: time "%7.2f" under 100 us, "%7.1f" under 10 ms,
 * "%7.0f" above; algbw and busbw "%6.2f". In-place columns repeat the
 * out-of-place time (fabsim does not tell them apart).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/calib.h"

typedef struct buf {
  char *p;
  size_t len, cap;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  if (b->len + (size_t)n + 1 > b->cap) sim_grow((void **)&b->p, &b->cap, b->len + (size_t)n + 1, 1);
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

static const char *nccl_tests_name(cal_op op) {
  switch (op) {
  case CAL_OP_ALLREDUCE: return "all_reduce_perf";
  case CAL_OP_ALLGATHER: return "all_gather_perf";
  case CAL_OP_REDUCESCATTER: return "reduce_scatter_perf";
  case CAL_OP_ALLTOALL: return "alltoall_perf";
  case CAL_OP_SENDRECV: return "sendrecv_perf";
  case CAL_OP_BROADCAST: return "broadcast_perf";
  case CAL_OP_REDUCE: return "reduce_perf";
  default: return "unknown_perf";
  }
}

static void time_text(char *out, size_t cap, double us) {
  snprintf(out, cap, us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f", us);
}

char *cal_nccltests_format(const cal_run *r) {
  buf b = {0};
  bool reduces =
      r->op == CAL_OP_ALLREDUCE || r->op == CAL_OP_REDUCESCATTER || r->op == CAL_OP_REDUCE;
  bool rooted = r->op == CAL_OP_BROADCAST || r->op == CAL_OP_REDUCE;
  uint64_t lo = r->n ? r->pt[0].bytes : 0, hi = r->n ? r->pt[r->n - 1].bytes : 0;
  put(&b, "# nccl-tests version 2.13.9 nccl-headers=22105 nccl-library=22105\n");
  put(&b, "# Collective test starting: %s\n", nccl_tests_name(r->op));
  put(&b,
      "# nThread 1 nGpus 1 minBytes %llu maxBytes %llu step: 2(factor) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n",
      (unsigned long long)lo, (unsigned long long)hi);
  uint32_t per = r->gpus_per_node ? r->gpus_per_node : 1;
  for (uint32_t i = 0; i < r->ranks; i++)
    put(&b, "#  Rank %2u Group  0 Pid %6u on node%03u device %2u [0x%02x] %s\n", i, 41200 + i,
        i / per, i % per, 0x18 + 16 * (i % per), r->gpu);
  put(&b, "#\n#%62s%-35s%-18s\n", "", "out-of-place", "in-place");
  put(&b,
      "#       size         count      type   redop    root     time   algbw   busbw #wrong"
      "     time   algbw   busbw #wrong\n");
  put(&b,
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)      "
      "      (us)  (GB/s)  (GB/s)       \n");
  double sum = 0;
  for (size_t i = 0; i < r->n; i++) {
    const cal_point *p = &r->pt[i];
    char t[32];
    time_text(t, sizeof t, p->time_us);
    double alg = p->time_us > 0 ? (double)p->bytes / (p->time_us * 1e3) : 0;
    double bus = alg * cal_bus_factor(r->op, r->ranks);
    char cols[160];
    snprintf(cols, sizeof cols, "%s  %6.2f  %6.2f  %5d", t, alg, bus, 0);
    put(&b, "%12llu  %12llu  %8s  %6s  %6d  %s  %s\n", (unsigned long long)p->bytes,
        (unsigned long long)(p->bytes / 4), "float", reduces ? "sum" : "none", rooted ? 0 : -1,
        cols, cols);
    sum += bus;
  }
  put(&b, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g \n#\n",
      r->n ? sum / (double)r->n : 0.0);
  return b.p;
}
