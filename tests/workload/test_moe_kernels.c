/* The small-expert MoE kernels (src/workload/kernels_moe.c; docs/
 * validation.md, "Small-expert MoE steps") against closed forms: the
 * experts' GEMMs one per expert over Transformer Engine's 4 streams, the
 * token permutations' and the router's bytes over the HBM bandwidth, the
 * host-bound forward after the dropless dispatcher's wait (and in a whole
 * step), and Qwen3's head width. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "fabsim/backend.h"
#include "fixture.h"
#include "workload/hw_fixture.h"

#define NSETS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* gemm.c's fixed time per kernel and the share of the output write the main
 * loop leaves exposed */
static const double T0 = 5e-6, EPI = 0.5;

/* Qwen3-30B-A3B's layer on 8 B200 (EP 8, one 4,096-token sequence per
 * micro-batch): 16 local experts of 768, top 8 of 128, 2,048 tokens each. */
static const char *const QWEN3[] = {"cluster.gpu=B200",
                                    "cluster.nodes=1",
                                    "workload.model.layers=2",
                                    "workload.model.hidden=2048",
                                    "workload.model.heads=32",
                                    "workload.model.kv_heads=4",
                                    "workload.model.head_dim=128",
                                    "workload.model.seq_len=4096",
                                    "workload.model.vocab=0",
                                    "workload.model.experts=128",
                                    "workload.model.top_k=8",
                                    "workload.model.expert_hidden=768",
                                    "workload.model.gated_ffn=true",
                                    "workload.parallel.ep=8",
                                    "workload.precision=fp8",
                                    "workload.global_batch=16"};

/* The scenario of `sets` (8 GPUs) into f, hw, m and p. */
static void layer_of(const char *const *sets, int n, fixture *f, wl__hw *hw, wl_model *m,
                     wl_parallel *p) {
  hw_of(sets, n, hw, f);
  sim_error err = {0};
  assert_int_equal(wl_model_from_cfg(m, &f->cfg, f->doc, &err), SIM_OK);
  assert_int_equal(wl_parallel_from_cfg(p, m, &f->cfg, f->doc, 8, &err), SIM_OK);
}

/* One round of the 4 streams' GEMMs shares the SMs: 4 x 16 x 12 = 768
 * tiles of 128 x 128 on 148 SMs, 6 waves, each tile's k = 2,048 loop at e
 * of its SM's share of the sustained FP8 peak, the exposed half of the
 * output write, the fixed time. 16 experts: 4 such rounds, 16 GEMMs issued;
 * 6 experts: a round of 4 and one of 2. Grouped: the one-kernel model. */
static void test_expert_gemm_streams(void **state) {
  (void)state;
  fixture f;
  wl__hw hw;
  hw_of(QWEN3, NSETS(QWEN3), &hw, &f);
  assert_true(hw.ggemm_streams);
  double m = 2048, n = 2 * 768, k = 2048, g, ops;
  double rate = hw.mm.peak * hw.clock, S = hw.sms;
  assert_rel(S, 148, 0);
  double waves = ceil(4 * ceil(m / 128) * ceil(n / 128) / S);
  assert_rel(waves, 6, 0);
  double main = waves * 2 * 128.0 * 128 * k / (hw.mm.eff * rate / S);
  double round = main + EPI * 4 * m * n * 2 / hw.hbm + T0;
  wl__cost c = wl__expert_gemm(&hw, 16, m, n, k, 2, &g, &ops);
  assert_rel(c.t, 4 * round, 1e-12);
  assert_rel(g, 4, 0);
  assert_rel(ops, 16, 0);
  wl__cost six = wl__expert_gemm(&hw, 6, m, n, k, 2, &g, &ops);
  assert_rel(six.t, wl__gemm(&hw, true, 4, m, n, k, 2).t + wl__gemm(&hw, true, 2, m, n, k, 2).t,
             1e-12);
  assert_rel(g, 2, 0);
  assert_rel(ops, 6, 0);
  /* the one-kernel model is faster: 3,072 tiles in 21 waves, one fixed time */
  hw.ggemm_streams = false;
  wl__cost one = wl__expert_gemm(&hw, 16, m, n, k, 2, &g, &ops);
  assert_rel(one.t, wl__gemm(&hw, true, 16, m, n, k, 2).t, 1e-12);
  assert_rel(g, 1, 0);
  assert_true(one.t < c.t);
  unload(&f);
}

/* The permutations move (1 + k) T h elements (permute: read T rows, write
 * T k) and, with several local experts, 2 x 2 T k h more (the received rows
 * sorted by expert and back); the router reads its T x E logits and writes
 * fp32 probabilities and the 1-byte map. The MoE part's forward carries
 * them as memory-bound time at the HBM rate, and its backward the same. */
static void test_permute_and_router_bytes(void **state) {
  (void)state;
  double T = 4096, k = 8, h = 2048, kernels;
  assert_rel(wl__moe_permute_bytes(T, k, h, 2, 1, false, &kernels), 9 * T * h * 2, 0);
  assert_rel(kernels, 1, 0);
  assert_rel(wl__moe_permute_bytes(T, k, h, 2, 1, true, &kernels),
             9 * T * h * 2 + 4 * T * k * h * 2, 0);
  assert_rel(kernels, 3, 0);
  assert_rel(wl__moe_permute_bytes(T, k, h, 2, 1.5, true, &kernels),
             9 * T * h * 2 + 1.5 * 4 * T * k * h * 2, 1e-15);
  assert_rel(wl__moe_router_bytes(T, 128, 2), T * 128 * 7, 0);

  fixture f;
  wl__hw hw;
  wl_model m;
  wl_parallel p;
  layer_of(QWEN3, NSETS(QWEN3), &f, &hw, &m, &p);
  wl__part part;
  wl__part_ffn(&hw, &m, &p, T, 1, &part);
  double moves = (wl__moe_permute_bytes(T, k, h, 2, 1, true, &kernels) +
                  wl__moe_router_bytes(T, 128, 2) + (k + 1) * T * h * 2) /
                 hw.hbm;
  assert_true(part.fwd.mem >= moves * (1 - 1e-12));
  assert_true(part.bin.mem >= moves * (1 - 1e-12));
  unload(&f);
}

/* After the dropless dispatcher's wait the host issues every kernel: the
 * experts' part f is extended by max(0, host_op x (a.ops + f.ops) - (a.t +
 * f.t)) and the wait itself (5.8 us); nothing without the wait. */
static void test_host_bound(void **state) {
  (void)state;
  fixture f;
  wl__hw hw;
  hw_of(QWEN3, NSETS(QWEN3), &hw, &f);
  assert_true(hw.host_sync);
  assert_rel(hw.host_op, 8e-6, 0);
  assert_rel(wl__host_wait_s(), 5.8e-6, 1e-12);
  wl__cost a = {100e-6, 10e-6, 10}, x = {200e-6, 50e-6, 60};
  wl__cost b = wl__moe_host_bound(&hw, a, x);
  assert_rel(b.t, 200e-6 + (70 * 8e-6 - 300e-6) + 5.8e-6, 1e-12);
  assert_rel(b.mem, x.mem, 0);
  wl__cost fast = {200e-6, 0, 10}; /* host 160 us under the GPU's 300 */
  assert_rel(wl__moe_host_bound(&hw, a, fast).t, 200e-6 + 5.8e-6, 1e-12);
  hw.host_sync = false;
  assert_rel(wl__moe_host_bound(&hw, a, x).t, x.t, 0);
  unload(&f);
  /* one GPU of experts: nothing to dispatch, no wait */
  const char *one[] = {"cluster.nodes=1", "workload.model.experts=8", "workload.model.top_k=2",
                       "workload.parallel.ep=1"};
  hw_of(one, NSETS(one), &hw, &f);
  assert_false(hw.host_sync);
  unload(&f);
}

static double forward_s(const char *const *sets, int n) {
  fixture f;
  load(&f, sets, n);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_analytic_create(sim, f.t, &f.cfg);
  sim_error err = {0};
  wl_step st;
  if (wl_step_run(&st, &f.cfg, f.doc, f.t, b, &err) != SIM_OK) fail_msg("%s", err.msg);
  double fw = st.forward_s;
  wl_step_free(&st);
  be_destroy(b);
  sim_destroy(sim);
  unload(&f);
  return fw;
}

/* In a whole step: the forward with the wait minus the forward without it
 * is, exactly, micro-batches x MoE layers x the host-bound extension. */
static void test_host_bound_step(void **state) {
  (void)state;
  const char *with[NSETS(QWEN3) + 1], *without[NSETS(QWEN3) + 1];
  for (int i = 0; i < NSETS(QWEN3); i++) with[i] = without[i] = QWEN3[i];
  with[NSETS(QWEN3)] = "workload.moe.host_sync=true";
  without[NSETS(QWEN3)] = "workload.moe.host_sync=false";
  double fa = forward_s(with, NSETS(with)), fb = forward_s(without, NSETS(without));
  fixture f;
  wl__hw hw;
  wl_model m;
  wl_parallel p;
  layer_of(with, NSETS(with), &f, &hw, &m, &p);
  wl__part a, x;
  wl__part_attention(&hw, &m, &p, 4096, &a);
  wl__part_ffn(&hw, &m, &p, 4096, 1, &x);
  double ext = wl__moe_host_bound(&hw, a.fwd, x.fwd).t - x.fwd.t;
  assert_true(ext > wl__host_wait_s());
  /* global batch 16 over 8 data-parallel GPUs: 2 micro-batches of one
   * sequence; both layers are MoE layers */
  assert_rel(fa - fb, 2 * 2 * ext, 1e-6);
  unload(&f);
}

/* Qwen3-30B-A3B's attention: Q 32 x 128 = 4,096 wide on h = 2,048, K and V
 * 4 x 128: (2 + 2 x 4/32) h x 4,096 = 18,874,368 parameters per layer, the
 * four projections of its config (2048 x 4096, 2 x 2048 x 512, 4096 x
 * 2048). Without head_dim the same heads are 64 wide and the layer has half
 * the query width. */
static void test_head_dim(void **state) {
  (void)state;
  fixture f;
  wl_model m;
  sim_error err = {0};
  load(&f, QWEN3, NSETS(QWEN3));
  assert_int_equal(wl_model_from_cfg(&m, &f.cfg, f.doc, &err), SIM_OK);
  assert_rel(m.attention, 2048.0 * 4096 + 2 * 2048.0 * 512 + 4096.0 * 2048, 0);
  assert_int_equal(m.head_dim, 128);
  unload(&f);
  const char *plain[] = {"workload.model.hidden=2048", "workload.model.heads=32",
                         "workload.model.kv_heads=4"};
  load(&f, plain, NSETS(plain));
  assert_int_equal(wl_model_from_cfg(&m, &f.cfg, f.doc, &err), SIM_OK);
  assert_rel(m.attention, 2.25 * 2048.0 * 2048, 0);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expert_gemm_streams),
      cmocka_unit_test(test_permute_and_router_bytes),
      cmocka_unit_test(test_host_bound),
      cmocka_unit_test(test_host_bound_step),
      cmocka_unit_test(test_head_dim),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
