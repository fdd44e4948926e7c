/* ZeRO 3 as PyTorch's FSDP2 runs it, against closed forms: the gradient
 * reduction's dtype (workload.grad_reduce: fp32 doubles the bytes of a bf16
 * step's reductions and leaves the weights' gathers alone), and the copies of
 * per-parameter sharding (workload.zero_impl per_param): each gather's
 * copy-out reads and writes the gathered weights (2 x 2 bytes a parameter),
 * each layer's reduce-scatter copy-in reads the 16-bit gradients and writes
 * the reduce dtype (2 + 2 or 2 + 4 bytes), all at the achievable HBM rate on
 * the compute stream; one reduce-scatter per layer (no buckets). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/workload.h"
#include "fixture.h"

enum { MAXSETS = 24 };
#define NSETS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* 8 GPUs of one node, 4 layers of h = 1024 (GELU feed-forward of 4h, no
 * vocabulary: P = 4 x 12 h^2), the single-efficiency roofline (no launch
 * gaps; weight gradients written in 16 bits either way), ZeRO 3. */
#define Z3                                                                                     \
  "cluster.nodes=1", "workload.precision=bf16", "workload.model.layers=4",                     \
      "workload.model.hidden=1024", "workload.model.heads=16", "workload.model.seq_len=2048",  \
      "workload.model.vocab=0", "workload.global_batch=8", "workload.overlap.sm_offload=true", \
      "workload.collective.algorithm=ring", "workload.collective.protocol=none",               \
      "workload.compute_efficiency=0.803", "workload.parallel.zero=3", "workload.bucket_size=1TiB"

static const double P = 4 * 12.0 * 1024 * 1024;

static void run_step(const char *const *sets, int n, wl_step *out, double *hbm) {
  fixture f;
  load(&f, sets, n);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_analytic_create(sim, f.t, &f.cfg);
  sim_error err = {0};
  if (wl_step_run(out, &f.cfg, f.doc, f.t, b, &err) != SIM_OK) fail_msg("%s", err.msg);
  if (hbm) *hbm = (double)f.cfg.cluster.hbm_bandwidth / 8 * f.cfg.cluster.hbm_efficiency;
  be_destroy(b);
  sim_destroy(sim);
  unload(&f);
}

static void assert_rel(double got, double want, double rel) {
  if (fabs(got - want) > rel * fabs(want) + 1e-10)
    fail_msg("got %.15g, want %.15g (rel %.3g)", got, want, rel);
}

/* workload.grad_reduce: the reduction's bytes per gradient element. */
static void test_grad_reduce_bytes(void **state) {
  (void)state;
  const char *dflt[] = {Z3};
  const char *fp32[] = {Z3, "workload.grad_reduce=fp32"};
  wl_step a, b;
  run_step(dflt, NSETS(dflt), &a, NULL);
  run_step(fp32, NSETS(fp32), &b, NULL);
  assert_int_equal(a.comm[WL_COMM_DP_REDUCESCATTER].bytes, (uint64_t)(2 * P));
  assert_int_equal(b.comm[WL_COMM_DP_REDUCESCATTER].bytes, (uint64_t)(4 * P));
  /* the weights are gathered in 16 bits either way: forward and backward */
  assert_int_equal(a.comm[WL_COMM_DP_ALLGATHER].bytes, (uint64_t)(2 * 2 * P));
  assert_int_equal(b.comm[WL_COMM_DP_ALLGATHER].bytes, a.comm[WL_COMM_DP_ALLGATHER].bytes);
  assert_rel(b.compute_s, a.compute_s, 1e-12); /* flat: no copies */
  wl_step_free(&a);
  wl_step_free(&b);

  /* ZeRO 0's AllReduce alike; bf16 under fp32 training halves it */
  const char *ar[] = {Z3, "workload.parallel.zero=0", "workload.grad_reduce=fp32"};
  const char *f32[] = {Z3, "workload.parallel.zero=0", "workload.precision=fp32"};
  const char *f32b[] = {Z3, "workload.parallel.zero=0", "workload.precision=fp32",
                        "workload.grad_reduce=bf16"};
  run_step(ar, NSETS(ar), &a, NULL);
  assert_int_equal(a.comm[WL_COMM_DP_ALLREDUCE].bytes, (uint64_t)(4 * P));
  wl_step_free(&a);
  run_step(f32, NSETS(f32), &a, NULL);
  run_step(f32b, NSETS(f32b), &b, NULL);
  assert_int_equal(a.comm[WL_COMM_DP_ALLREDUCE].bytes, (uint64_t)(4 * P));
  assert_int_equal(b.comm[WL_COMM_DP_ALLREDUCE].bytes, (uint64_t)(2 * P));
  wl_step_free(&a);
  wl_step_free(&b);
}

/* workload.zero_impl per_param: the copies' time = bytes / HBM rate. */
static void test_fsdp2_copies(void **state) {
  (void)state;
  const char *flat[] = {Z3};
  const char *pp[] = {Z3, "workload.zero_impl=per_param"};
  const char *pp32[] = {Z3, "workload.zero_impl=per_param", "workload.grad_reduce=fp32"};
  wl_step a, b, c;
  double H;
  run_step(flat, NSETS(flat), &a, &H);
  run_step(pp, NSETS(pp), &b, NULL);
  run_step(pp32, NSETS(pp32), &c, NULL);
  /* forward: one copy-out of every layer's weights (read 2 + write 2 bytes) */
  assert_rel(b.forward_s - a.forward_s, 4 * P / H, 1e-6);
  assert_rel(c.forward_s, b.forward_s, 1e-12);
  /* backward: the copy-out again, and the copy-in of the gradients, 2 + 2
   * bytes (bf16 reduce) or 2 + 4 (fp32 reduce) */
  assert_rel(b.backward_s - a.backward_s, (4 + 4) * P / H, 1e-6);
  assert_rel(c.backward_s - a.backward_s, (4 + 6) * P / H, 1e-6);
  /* one reduce-scatter per layer, its whole gradients, whatever the bucket */
  assert_int_equal(a.comm[WL_COMM_DP_REDUCESCATTER].count, 1);
  assert_int_equal(b.comm[WL_COMM_DP_REDUCESCATTER].count, 4);
  assert_int_equal(b.comm[WL_COMM_DP_REDUCESCATTER].bytes, (uint64_t)(2 * P));
  assert_int_equal(c.comm[WL_COMM_DP_REDUCESCATTER].bytes, (uint64_t)(4 * P));
  wl_step_free(&a);
  wl_step_free(&b);
  wl_step_free(&c);

  /* below ZeRO 3 nothing is gathered per layer: the key changes nothing */
  const char *z1[] = {Z3, "workload.parallel.zero=1"};
  const char *z1p[] = {Z3, "workload.parallel.zero=1", "workload.zero_impl=per_param"};
  run_step(z1, NSETS(z1), &a, NULL);
  run_step(z1p, NSETS(z1p), &b, NULL);
  assert_rel(b.time_s, a.time_s, 1e-12);
  wl_step_free(&a);
  wl_step_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grad_reduce_bytes),
      cmocka_unit_test(test_fsdp2_copies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
