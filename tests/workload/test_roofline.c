/* The single-efficiency roofline (src/workload/roofline.c with
 * workload.compute_efficiency set) against closed forms: a compute-bound
 * GEMM takes 2mnk over the achievable FLOP/s, a memory-bound GEMM or
 * element-wise operation its bytes over the achievable HBM bandwidth; tile
 * quantization, FP8 and the GPU presets change exactly what
 * docs/training.md says they change. The kernel model (the default) is
 * tests/workload/test_kernels.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "fixture.h"
#include "workload/hw_fixture.h"

/* H100 in bf16: G = 989e12 x 0.803 (the override), H = 3.35 TB/s x 0.9. */
static void test_two_regimes(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1", "workload.compute_efficiency=0.803"};
  fixture f;
  wl__hw hw;
  hw_of(sets, 2, &hw, &f);
  assert_true(hw.legacy);
  assert_true(hw.gap == 0);
  double G = 989e12 * 0.803, H = 3.35e12 * 0.9;
  assert_rel(hw.gemm, G, 1e-12);
  assert_rel(hw.hbm, H, 1e-12);
  /* compute-bound: 8192^3, 2 x 8192^3 FLOPs (1.1 TFLOP) against 3 x 128 MiB */
  double n = 8192;
  wl__cost c = wl__gemm(&hw, true, 1, n, n, n, 2);
  assert_rel(c.t, 2 * n * n * n / G, 1e-12);
  assert_true(c.mem == 0);
  /* memory-bound: 16 tokens through a 7168 x 7168 weight (an expert with few
   * tokens): reads 16 x 7168 and the weight, writes 16 x 7168, 2 bytes each */
  double m = 16, k = 7168;
  c = wl__gemm(&hw, true, 1, m, k, k, 2);
  double bytes = (m * k + k * k + m * k) * 2;
  assert_rel(c.t, bytes / H, 1e-12);
  assert_rel(c.mem, c.t, 1e-12);
  assert_true(c.t > 2 * m * k * k / G); /* FLOPs alone would be faster */
  /* element-wise: bytes only */
  c = wl__eltwise(&hw, 1e9);
  assert_rel(c.t, 1e9 / H, 1e-12);
  assert_rel(c.mem, c.t, 1e-12);
  unload(&f);
}

/* A 1000-row GEMM runs 8 tiles of 128 rows, the last one 104/128 empty: its
 * FLOPs take as long as 1024 rows'. */
static void test_tile_quantization(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1", "workload.compute_efficiency=0.803"};
  fixture f;
  wl__hw hw;
  hw_of(sets, 2, &hw, &f);
  double n = 8192;
  wl__cost a = wl__gemm(&hw, true, 1, 1000, n, n, 2), b = wl__gemm(&hw, true, 1, 1024, n, n, 2);
  assert_true(a.mem == 0 && b.mem == 0);
  assert_rel(a.t, 2 * 1024 * n * n / hw.gemm, 1e-12);
  assert_rel(a.t, b.t, 1e-12);
  /* and the columns alike */
  assert_rel(wl__gemm(&hw, true, 1, n, 1000, n, 2).t, b.t, 1e-12);
  /* b GEMMs in one call: b times one */
  assert_rel(wl__gemm(&hw, true, 7, 1000, n, n, 2).t, 7 * a.t, 1e-12);
  unload(&f);
}

/* FP8: the FP8 peak for GEMMs, 1-byte operands (outputs stay 16-bit);
 * attention's matmuls stay at the 16-bit peak. fp32: TF32 peak, 4 bytes. */
static void test_precisions(void **state) {
  (void)state;
  const char *fp8[] = {"cluster.nodes=1", "workload.precision=fp8",
                       "workload.compute_efficiency=0.803"};
  const char *fp32[] = {"cluster.nodes=1", "workload.precision=fp32",
                        "workload.compute_efficiency=0.803"};
  fixture f;
  wl__hw hw;
  hw_of(fp8, 3, &hw, &f);
  double H = 3.35e12 * 0.9, n = 8192, m = 16, k = 7168;
  assert_rel(hw.gemm, 1979e12 * 0.803, 1e-12);
  assert_rel(hw.attn, 989e12 * 0.803, 1e-12);
  assert_false(hw.fp8); /* no casts under the override */
  assert_rel(wl__gemm(&hw, true, 1, n, n, n, 2).t, 2 * n * n * n / (1979e12 * 0.803), 1e-12);
  /* every GEMM at the training precision, as before */
  assert_rel(wl__gemm(&hw, false, 1, n, n, n, 2).t, 2 * n * n * n / (1979e12 * 0.803), 1e-12);
  assert_rel(wl__gemm(&hw, true, 1, m, k, k, 2).t, ((m * k + k * k) * 1 + m * k * 2) / H, 1e-12);
  unload(&f);
  hw_of(fp32, 3, &hw, &f);
  assert_rel(hw.gemm, 494.5e12 * 0.803, 1e-12);
  assert_rel(hw.attn, hw.gemm, 1e-12);
  assert_rel(wl__gemm(&hw, true, 1, m, k, k, 4).t, (m * k + k * k + m * k) * 4 / H, 1e-12);
  unload(&f);
}

/* Presets by cluster.gpu, and explicit keys over them: the kernel model's
 * large-GEMM plateau is the GPU's measured maximum (MAMF / peak); the
 * override replaces it. */
static void test_presets(void **state) {
  (void)state;
  static const struct {
    const char *gpu;
    double bf16, fp8, cap16, cap8, hbm, clock;
  } want[] = {
      {"cluster.gpu=H100", 989e12, 1979e12, 794.5 / 989, 1402.6 / 1979, 3.35e12, 755.5 / 852.1},
      {"cluster.gpu=H800", 989e12, 1979e12, 794.5 / 989, 1402.6 / 1979, 3.35e12, 755.5 / 852.1},
      {"cluster.gpu=H200", 989e12, 1979e12, 794.5 / 989, 1453.4 / 1979, 4.8e12, 755.5 / 852.1},
      {"cluster.gpu=B200", 2250e12, 4500e12, 1745.0 / 2250, 3432.5 / 4500, 8e12, 1437.5 / 1746.7},
      {"cluster.gpu=A100", 312e12, 312e12, 271.2 / 312, 271.2 / 312, 2.039e12, 1},
      {"cluster.gpu=MI300X", 1307.4e12, 2614.9e12, 668.4 / 1307.4, 668.4 / 1307.4, 5.3e12, 1},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const char *bf[] = {"cluster.nodes=1", want[i].gpu};
    const char *f8[] = {"cluster.nodes=1", want[i].gpu, "workload.precision=fp8"};
    fixture f;
    wl__hw hw;
    hw_of(bf, 2, &hw, &f);
    assert_false(hw.legacy);
    assert_rel(hw.gemm, want[i].bf16 * want[i].cap16 * want[i].clock, 2e-4);
    assert_rel(hw.hbm, want[i].hbm * 0.9, 1e-12);
    unload(&f);
    hw_of(f8, 3, &hw, &f);
    assert_rel(hw.gemm, want[i].fp8 * want[i].cap8 * want[i].clock, 2e-4);
    unload(&f);
  }
  const char *set[] = {"cluster.nodes=1", "cluster.gpu=MI300X", "workload.compute_efficiency=0.5",
                       "cluster.hbm_efficiency=0.75"};
  fixture f;
  wl__hw hw;
  hw_of(set, 4, &hw, &f);
  assert_rel(hw.gemm, 1307.4e12 * 0.5, 1e-12);
  assert_rel(hw.hbm, 5.3e12 * 0.75, 1e-12);
  unload(&f);
}

/* One GPU, two layers of h = 4096, the second an MoE layer of 64 experts
 * (top 2, width 16384) and its model and parallelism. */
static void moe_layer(fixture *f, wl__hw *hw, wl_model *m, wl_parallel *p) {
  const char *sets[] = {"cluster.nodes=1",
                        "workload.model.layers=2",
                        "workload.model.hidden=4096",
                        "workload.model.heads=32",
                        "workload.model.seq_len=512",
                        "workload.model.vocab=0",
                        "workload.model.experts=64",
                        "workload.model.top_k=2",
                        "workload.model.dense_layers=1",
                        "workload.model.expert_hidden=16384",
                        "workload.parallel.dp=1",
                        "workload.global_batch=1"};
  hw_of(sets, 12, hw, f);
  sim_error err = {0};
  assert_int_equal(wl_model_from_cfg(m, &f->cfg, f->doc, &err), SIM_OK);
  assert_int_equal(wl_parallel_from_cfg(p, m, &f->cfg, f->doc, 1, &err), SIM_OK);
}

/* An MoE layer whose experts each see few tokens is memory-bound where the
 * dense layer of the same width is not: E = 64 experts, top 2, 512 tokens
 * per micro-batch, one GPU: 16 tokens per expert. */
static void test_small_expert_gemms(void **state) {
  (void)state;
  fixture f;
  wl__hw hw;
  wl_model m;
  wl_parallel p;
  moe_layer(&f, &hw, &m, &p);
  wl__part dense, moe;
  wl__part_ffn(&hw, &m, &p, 512, 0, &dense);
  wl__part_ffn(&hw, &m, &p, 512, 1, &moe);
  /* twice the dense layer's FLOPs per token (top 2 of width 4h), but 64
   * experts' two 4096 x 16384 weights read for 16 tokens each: at least
   * 64 x 2 x 4096 x 16384 x 2 bytes over H, far more than twice the dense
   * layer, which is compute-bound (512 tokens: 512 FLOP per weight byte
   * pair, above the ridge of 989e12 x 0.803 / 3.015e12 = 263) */
  double weights = 64 * 2 * 4096.0 * 16384 * 2;
  assert_true(moe.fwd.t >= weights / hw.hbm);
  assert_true(moe.fwd.mem >= weights / hw.hbm);
  assert_true(moe.fwd.t > 5 * dense.fwd.t);
  assert_true(dense.fwd.mem < 0.2 * dense.fwd.t);
  unload(&f);
}

/* Hot experts: the busiest GPU's expert GEMMs see `load` times the mean
 * tokens (the dispatch and combine wait for it): the MoE part with load L
 * is the part at load 1 plus, exactly, the two grouped expert GEMMs' and
 * their activation's difference between T k ep/E x L and x 1 tokens each
 * (the launch gaps are the same kernels either way). */
static void test_expert_load(void **state) {
  (void)state;
  fixture f;
  wl__hw hw;
  wl_model m;
  wl_parallel p;
  moe_layer(&f, &hw, &m, &p);
  wl__part one, hot;
  wl__part_ffn(&hw, &m, &p, 4096, 1, &one);
  hw.expert_load = 3;
  wl__part_ffn(&hw, &m, &p, 4096, 1, &hot);
  double T = 4096, k = 2, E = 64, h = 4096, fe = m.expert / (2 * h); /* not gated: up and down */
  double te = T * k / E;
  /* the 64 local experts' GEMMs each way as kernels_moe.c runs them */
  double g, o;
  wl__cost up1 = wl__expert_gemm(&hw, E, te, fe, h, hw.act, &g, &o);
  wl__cost up3 = wl__expert_gemm(&hw, E, 3 * te, fe, h, hw.act, &g, &o);
  wl__cost dn1 = wl__expert_gemm(&hw, E, te, h, fe, hw.act, &g, &o);
  wl__cost dn3 = wl__expert_gemm(&hw, E, 3 * te, h, fe, hw.act, &g, &o);
  wl__cost a1 = wl__eltwise(&hw, 2 * T * k * fe * hw.act);
  wl__cost a3 = wl__eltwise(&hw, 6 * T * k * fe * hw.act);
  double want = one.fwd.t + (up3.t - up1.t + dn3.t - dn1.t) + a3.t - a1.t;
  if (fabs(hot.fwd.t - want) > 1e-12 * want) fail_msg("got %.12g want %.12g", hot.fwd.t, want);
  unload(&f);
}

static void run_step(const char *const *sets, int n, wl_step *out) {
  fixture f;
  load(&f, sets, n);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_analytic_create(sim, f.t, &f.cfg);
  sim_error err = {0};
  if (wl_step_run(out, &f.cfg, f.doc, f.t, b, &err) != SIM_OK) fail_msg("%s", err.msg);
  be_destroy(b);
  sim_destroy(sim);
  unload(&f);
}

/* The defect the roofline fixes (issue #14): cutting HBM bandwidth k-fold
 * must cost at least (k - 1) x the memory-bound time: every operation that
 * was memory-bound takes k times as long, and none gets faster. A 1.3 B
 * dense layer stack, data parallel on 8 GPUs. */
static void test_hbm_sensitivity(void **state) {
  (void)state;
  const char *fast[] = {
      "cluster.nodes=1",         "workload.model.layers=4",          "workload.model.hidden=2048",
      "workload.model.heads=16", "workload.model.seq_len=4096",      "workload.model.vocab=0",
      "workload.global_batch=8", "workload.compute_efficiency=0.803"};
  const char *slow[] = {"cluster.nodes=1",
                        "workload.model.layers=4",
                        "workload.model.hidden=2048",
                        "workload.model.heads=16",
                        "workload.model.seq_len=4096",
                        "workload.model.vocab=0",
                        "workload.global_batch=8",
                        "cluster.hbm_bandwidth=0.5TB/s",
                        "workload.compute_efficiency=0.803"};
  wl_step a, b;
  run_step(fast, 8, &a);
  run_step(slow, 9, &b);
  double k = 3.35 / 0.5;
  assert_true(a.memory_bound_s > 0);
  assert_true(b.memory_bound_s >= k * a.memory_bound_s * (1 - 1e-9));
  assert_true(b.compute_s - a.compute_s >= (k - 1) * a.memory_bound_s * (1 - 1e-9));
  assert_true(b.memory_bound_frac > a.memory_bound_frac);
  wl_step_free(&a);
  wl_step_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_regimes),        cmocka_unit_test(test_tile_quantization),
      cmocka_unit_test(test_precisions),         cmocka_unit_test(test_presets),
      cmocka_unit_test(test_small_expert_gemms), cmocka_unit_test(test_hbm_sensitivity),
      cmocka_unit_test(test_expert_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
