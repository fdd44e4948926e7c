/* The kernel model of a training step's compute (src/workload/gemm.c,
 * attention.c, roofline.c; docs/training.md, "Compute") against closed
 * forms: a large square GEMM runs at the GPU's measured plateau, the model
 * reproduces each measured maximum (MAMF) at its own shape, tiles one past
 * a full wave take two waves, a skinny GEMM takes its bytes over the HBM
 * bandwidth, attention's rate is the papers' measured points and their
 * interpolation, FP8 casts move the recipe's bytes, launch gaps count
 * kernels; and monotonicity in every dimension. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "fixture.h"
#include "workload/hw_fixture.h"

#define NSETS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const double SQRT2 = 1.41421356237309504880;
static const double T0 = 5e-6, EPI = 0.5; /* gemm.c's fixed time and exposed epilogue */

/* A large square GEMM runs at peak x the measured plateau, exactly; so does
 * a batch of them. */
static void test_plateau(void **state) {
  (void)state;
  static const char *const gpus[] = {"cluster.gpu=H100", "cluster.gpu=A100", "cluster.gpu=B200",
                                     "cluster.gpu=MI300X"};
  for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
    for (int fp8 = 0; fp8 < 2; fp8++) {
      const char *sets[] = {"cluster.nodes=1", gpus[i],
                            fp8 ? "workload.precision=fp8" : "workload.precision=bf16"};
      fixture f;
      wl__hw hw;
      hw_of(sets, NSETS(sets), &hw, &f);
      double n = 32768, flops = 2 * n * n * n;
      wl__cost c = wl__gemm(&hw, true, 1, n, n, n, 2);
      assert_rel(flops / c.t, hw.gemm, 1e-12);
      assert_true(c.mem == 0);
      assert_rel(4 * flops / wl__gemm(&hw, true, 4, n, n, n, 2).t, hw.gemm, 1e-12);
      unload(&f);
    }
  }
}

/* The model reproduces each GPU's maximum achievable matmul FLOP/s at the
 * shape it was measured (S. Bekman, ml-engineering, MAMF table): e is set
 * from it (gemm.c, rounded to 4 digits). */
static void test_mamf_shapes(void **state) {
  (void)state;
  static const struct {
    const char *gpu, *prec;
    double m, n, k, tflops;
  } mamf[] = {
      {"cluster.gpu=H100", "workload.precision=bf16", 2048, 2048, 13312, 794.5},
      {"cluster.gpu=A100", "workload.precision=bf16", 1024, 10240, 5120, 271.2},
      {"cluster.gpu=B200", "workload.precision=bf16", 1792, 16128, 3072, 1745.0},
      {"cluster.gpu=MI300X", "workload.precision=bf16", 10240, 15360, 8192, 668.4},
      {"cluster.gpu=H100", "workload.precision=fp8", 1024, 9216, 14336, 1402.6},
      {"cluster.gpu=B200", "workload.precision=fp8", 15360, 4096, 3072, 3432.5},
  };
  for (size_t i = 0; i < sizeof mamf / sizeof mamf[0]; i++) {
    const char *sets[] = {"cluster.nodes=1", mamf[i].gpu, mamf[i].prec};
    fixture f;
    wl__hw hw;
    hw_of(sets, NSETS(sets), &hw, &f);
    hw.clock = 1; /* the MAMF's boost-clock burst */
    wl__cost c = wl__gemm(&hw, true, 1, mamf[i].m, mamf[i].n, mamf[i].k, 2);
    assert_rel(2 * mamf[i].m * mamf[i].n * mamf[i].k / c.t / 1e12, mamf[i].tflops, 1e-3);
    unload(&f);
  }
}

/* At the clock a training step sustains (the power limit), a large GEMM
 * runs at the MSMF, not the MAMF: the burst model x MSMF / MAMF of the same
 * runs (ml-engineering's mamf-finder, every GPU of the node computing):
 * H200 755.5 / 852.1 (H100 the same die and power), B200 1437.5 / 1746.7;
 * A100 and MI300X not measured, unchanged. The attention core slows by the
 * same factor; a memory-bound GEMM does not. The override keeps clock 1. */
static void test_sustained_clock(void **state) {
  (void)state;
  static const struct {
    const char *gpu;
    double clock;
  } want[] = {{"cluster.gpu=H100", 755.5 / 852.1},
              {"cluster.gpu=H200", 755.5 / 852.1},
              {"cluster.gpu=B200", 1437.5 / 1746.7},
              {"cluster.gpu=A100", 1},
              {"cluster.gpu=MI300X", 1}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const char *sets[] = {"cluster.nodes=1", want[i].gpu};
    fixture f;
    wl__hw hw;
    hw_of(sets, NSETS(sets), &hw, &f);
    assert_rel(hw.clock, want[i].clock, 1e-12);
    double n = 32768;
    double sustained = wl__gemm(&hw, true, 1, n, n, n, 2).t;
    double skinny = wl__gemm(&hw, true, 1, 16, 7168, 7168, 2).t;
    wl_model m;
    wl_parallel p;
    wl__part att, att1;
    sim_error err = {0};
    assert_int_equal(wl_model_from_cfg(&m, &f.cfg, f.doc, &err), SIM_OK);
    assert_int_equal(wl_parallel_from_cfg(&p, &m, &f.cfg, f.doc, 1, &err), SIM_OK);
    wl__part_attention(&hw, &m, &p, 4096, &att);
    hw.clock = 1;
    wl__part_attention(&hw, &m, &p, 4096, &att1);
    assert_rel(2 * n * n * n / sustained, hw.mm.peak * hw.mm.cap * want[i].clock, 1e-12);
    assert_rel(wl__gemm(&hw, true, 1, 16, 7168, 7168, 2).t, skinny, 1e-12);
    if (want[i].clock < 1) assert_true(att.fwd.t > att1.fwd.t && att.bin.t > att1.bin.t);
    else assert_rel(att.fwd.t, att1.fwd.t, 1e-12);
    unload(&f);
  }
  const char *legacy[] = {"cluster.nodes=1", "workload.compute_efficiency=0.5"};
  fixture f;
  wl__hw hw;
  hw_of(legacy, NSETS(legacy), &hw, &f);
  assert_rel(hw.clock, 1, 0);
  unload(&f);
}

/* Wave quantization on H100 (132 SMs): 132 tiles of 128 x 128 run in one
 * wave, 133 in two; each wave costs 2 x 128 x 128 x k / (e P / S). */
static void test_waves(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  wl__hw hw;
  hw_of(sets, 1, &hw, &f);
  assert_rel(hw.sms, 132, 0);
  double k = 8192, wave = 2 * 128.0 * 128 * k / (hw.mm.eff * hw.mm.peak * hw.clock / hw.sms);
  /* 132 = 11 x 12 tiles, 133 = 7 x 19 */
  double m1 = 11 * 128, n1 = 12 * 128, m2 = 7 * 128, n2 = 19 * 128;
  wl__cost one = wl__gemm(&hw, true, 1, m1, n1, k, 2), two = wl__gemm(&hw, true, 1, m2, n2, k, 2);
  assert_true(one.mem == 0 && two.mem == 0);
  assert_rel(one.t, T0 + wave + EPI * m1 * n1 * 2 / hw.hbm, 1e-12);
  assert_rel(two.t, T0 + 2 * wave + EPI * m2 * n2 * 2 / hw.hbm, 1e-12);
  /* one tile more than a full wave costs nearly a whole wave */
  assert_true(two.t - one.t > 0.95 * wave);
  /* a batch of two GEMMs of 66 tiles each fills the one wave */
  wl__cost pair = wl__gemm(&hw, true, 2, m1, n1 / 2, k, 2);
  assert_true(pair.mem == 0);
  assert_rel(pair.t, one.t, 1e-12);
  unload(&f);
}

/* Fewer tiles than SMs: the k loop is split over the idle SMs (at most k /
 * 256 ways). 56 tiles on 132 SMs: 2 ways. */
static void test_split_k(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  wl__hw hw;
  hw_of(sets, 1, &hw, &f);
  double m = 1024, n = 896, k = 65536;
  double main = 2 * 128.0 * 128 * (k / 2) / (hw.mm.eff * hw.mm.peak * hw.clock / hw.sms);
  wl__cost c = wl__gemm(&hw, true, 1, m, n, k, 2);
  assert_true(c.mem == 0);
  assert_rel(c.t, T0 + main + EPI * m * n * 2 / hw.hbm, 1e-12);
  unload(&f);
}

/* A skinny GEMM (an expert with 16 tokens through a 7168 x 7168 weight) is
 * bound by its bytes: t0 + operands and output over the HBM bandwidth. */
static void test_skinny(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  const char *f8[] = {"cluster.nodes=1", "workload.precision=fp8"};
  fixture f;
  wl__hw hw;
  hw_of(sets, 1, &hw, &f);
  double m = 16, k = 7168, H = 3.35e12 * 0.9;
  wl__cost c = wl__gemm(&hw, true, 1, m, k, k, 2);
  assert_rel(c.t, T0 + (m * k + k * k + m * k) * 2 / H, 1e-12);
  assert_rel(c.mem, c.t, 1e-12);
  unload(&f);
  hw_of(f8, 2, &hw, &f); /* fp8 operands, 16-bit output; the 16-bit class reads 2 bytes */
  assert_rel(wl__gemm(&hw, true, 1, m, k, k, 2).t, T0 + ((m * k + k * k) + m * k * 2) / H, 1e-12);
  assert_rel(wl__gemm(&hw, false, 1, m, k, k, 2).t, T0 + (m * k + k * k + m * k) * 2 / H, 1e-12);
  unload(&f);
}

/* The three GEMMs of one linear layer run at their own rates: with 512
 * tokens through a 4096 x 12288 weight, the weight gradient (k = 512: its
 * large output written once per short k loop) reaches less of the peak than
 * the forward (m = 512). */
static void test_own_rates(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  wl__hw hw;
  hw_of(sets, 1, &hw, &f);
  double T = 512, h = 4096, n = 12288, flops = 2 * T * h * n;
  double fwd = flops / wl__gemm(&hw, true, 1, T, n, h, 2).t;
  double wgrad = flops / wl__gemm(&hw, true, 1, h, n, T, 2).t;
  assert_true(wgrad < 0.9 * fwd && fwd < hw.gemm);
  unload(&f);
}

/* More work never takes less time; more k never gives fewer FLOP/s. */
static void test_monotone(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  wl__hw hw;
  hw_of(sets, 1, &hw, &f);
  static const double dims[] = {16, 64, 128, 200, 1000, 1024, 4096, 8192, 16384};
  size_t n = sizeof dims / sizeof dims[0];
  for (size_t a = 0; a < n; a++)
    for (size_t b = 0; b < n; b++)
      for (size_t c = 0; c + 1 < n; c++) {
        double m = dims[a], nn = dims[b], k = dims[c], k2 = dims[c + 1];
        wl__cost x = wl__gemm(&hw, true, 1, m, nn, k, 2);
        assert_true(wl__gemm(&hw, true, 1, m, nn, k2, 2).t >= x.t);
        assert_true(wl__gemm(&hw, true, 1, k2, nn, k, 2).t >=
                    wl__gemm(&hw, true, 1, k, nn, k, 2).t);
        assert_true(wl__gemm(&hw, true, 2, m, nn, k, 2).t >= x.t);
        double r1 = 2 * m * nn * k / x.t,
               r2 = 2 * m * nn * k2 / wl__gemm(&hw, true, 1, m, nn, k2, 2).t;
        assert_true(r2 >= r1 * (1 - 1e-12));
        assert_true(r2 <= hw.gemm * (1 + 1e-12));
      }
  unload(&f);
}

/* Attention on H100: at the papers' points the measured share of the peak
 * (FlashAttention-3 Fig. 5, causal forward, TFLOP/s / 989), between them the
 * log-linear interpolation, outside them the end points; the causal backward
 * is the non-causal one (Fig. 6) times the forward's causal ratio. */
static void test_attention_points(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  wl__hw hw;
  hw_of(sets, 1, &hw, &f);
  static const double fwd128[] = {292, 423, 521, 579, 602, 616};
  static const double fwd64[] = {197, 265, 371, 420, 460, 473};
  double s = 512;
  for (int j = 0; j < 6; j++, s *= 2) {
    assert_rel(wl__attn_measured(&hw, s, 128, false), fwd128[j] / 989, 1e-12);
    assert_rel(wl__attn_measured(&hw, s, 64, false), fwd64[j] / 989, 1e-12);
  }
  /* hd 128 at 4k: backward 542 non-causal x 579 / 638 */
  assert_rel(wl__attn_measured(&hw, 4096, 128, true), 542.0 * 579 / 638 / 989, 1e-12);
  /* halfway in log2: the mean; beyond the ends: the ends */
  assert_rel(wl__attn_measured(&hw, 4096 * SQRT2, 128, false), (579.0 + 602) / 2 / 989, 1e-12);
  assert_rel(wl__attn_measured(&hw, 4096, 64 * SQRT2, false), (420.0 + 579) / 2 / 989, 1e-12);
  assert_rel(wl__attn_measured(&hw, 128, 128, false), 292.0 / 989, 1e-12);
  assert_rel(wl__attn_measured(&hw, 65536, 512, false), 642.0 / 989, 1e-12);
  /* monotone in the sequence length, both passes */
  for (double x = 256; x < 32768; x *= 1.3) {
    assert_true(wl__attn_measured(&hw, x * 1.3, 128, false) >=
                wl__attn_measured(&hw, x, 128, false));
    assert_true(wl__attn_measured(&hw, x * 1.3, 128, true) >= wl__attn_measured(&hw, x, 128, true));
  }
  /* a micro-batch with the papers' thread blocks per SM runs at their rate;
   * one 512-token sequence of 8 heads (32 blocks on 132 SMs) far below */
  assert_rel(wl__attn_eff(&hw, 32, 512, 16, 128, false), 292.0 / 989, 1e-12);
  assert_true(wl__attn_eff(&hw, 1, 512, 8, 128, false) < 0.3 * 292 / 989);
  unload(&f);
  /* A100: FlashAttention-2's forward + backward figure (Fig. 4), both passes */
  const char *a100[] = {"cluster.nodes=1", "cluster.gpu=A100"};
  hw_of(a100, 2, &hw, &f);
  assert_rel(wl__attn_measured(&hw, 2048, 128, false), 155.0 / 312, 1e-12);
  assert_rel(wl__attn_measured(&hw, 2048, 128, true), 155.0 / 312, 1e-12);
  assert_rel(wl__attn_measured(&hw, 16384, 64, true), 171.0 / 312, 1e-12);
  unload(&f);
}

/* FP8 operand casts per element of a 16-bit tensor, by recipe: delayed
 * reads 2 bytes and writes the fp8 copy and its transpose (4); tensorwise
 * reads once more for the current amax (6, two kernels); blockwise adds an
 * fp32 scale per 128 elements in each layout (4 + 1/16); on B200 the
 * per-tensor recipes need no transposed copy (3). */
static void test_fp8_casts(void **state) {
  (void)state;
  static const struct {
    const char *gpu, *recipe;
    double per, kernels;
  } want[] = {
      {"cluster.gpu=H100", "workload.fp8_recipe=delayed", 4, 1},
      {"cluster.gpu=H100", "workload.fp8_recipe=tensorwise", 6, 2},
      {"cluster.gpu=H100", "workload.fp8_recipe=blockwise", 4 + 1.0 / 16, 1},
      {"cluster.gpu=B200", "workload.fp8_recipe=delayed", 3, 1},
      {"cluster.gpu=B200", "workload.fp8_recipe=tensorwise", 5, 2},
      {"cluster.gpu=B200", "workload.fp8_recipe=blockwise", 4 + 1.0 / 16, 1},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const char *sets[] = {"cluster.nodes=1", "workload.precision=fp8", want[i].gpu, want[i].recipe};
    fixture f;
    wl__hw hw;
    hw_of(sets, NSETS(sets), &hw, &f);
    double kernels;
    assert_rel(wl__fp8_cast_bytes(&hw, 1e6, &kernels), want[i].per * 1e6, 1e-12);
    assert_rel(kernels, want[i].kernels, 0);
    unload(&f);
  }
  /* nothing to cast in bf16, or under the single-efficiency override */
  const char *bf[] = {"cluster.nodes=1"};
  const char *over[] = {"cluster.nodes=1", "workload.precision=fp8",
                        "workload.compute_efficiency=0.8"};
  fixture f;
  wl__hw hw;
  double kernels;
  hw_of(bf, 1, &hw, &f);
  assert_true(wl__fp8_cast_bytes(&hw, 1e6, &kernels) == 0 && kernels == 0);
  unload(&f);
  hw_of(over, 3, &hw, &f);
  assert_true(wl__fp8_cast_bytes(&hw, 1e6, &kernels) == 0 && kernels == 0);
  unload(&f);
}

/* One layer's parts for a small dense model (h 4096, 32 heads, 2048
 * tokens, one GPU). */
static void parts(const char *const *extra, int n, wl__part *att, wl__part *ffn, wl__hw *hw_out) {
  const char *sets[10] = {
      "cluster.nodes=1",         "workload.model.layers=1",     "workload.model.hidden=4096",
      "workload.model.heads=32", "workload.model.seq_len=2048", "workload.model.vocab=0"};
  int k = 6;
  for (int i = 0; i < n && k < 10; i++) sets[k++] = extra[i];
  fixture f;
  wl__hw hw;
  hw_of(sets, k, &hw, &f);
  wl_model m;
  wl_parallel p;
  sim_error err = {0};
  assert_int_equal(wl_model_from_cfg(&m, &f.cfg, f.doc, &err), SIM_OK);
  assert_int_equal(wl_parallel_from_cfg(&p, &m, &f.cfg, f.doc, 1, &err), SIM_OK);
  wl__part_attention(&hw, &m, &p, 2048, att);
  wl__part_ffn(&hw, &m, &p, 2048, 0, ffn);
  if (hw_out) *hw_out = hw;
  unload(&f);
}

/* Launch gaps: every kernel of a part pays the stream's gap (0.9 us), a CUDA
 * graph's 0.5 us: the attention part's forward runs 6 kernels (norm, QKV,
 * rotary, attention, output projection, residual), its backward without
 * weight gradients 8 (attention's backward is 3), the weight gradients 2. */
static void test_launch_gaps(void **state) {
  (void)state;
  const char *graphs[] = {"workload.cuda_graphs=true"};
  wl__part a, f, ag, fg;
  parts(NULL, 0, &a, &f, NULL);
  parts(graphs, 1, &ag, &fg, NULL);
  double d = 0.4e-6;
  assert_rel(a.fwd.t - ag.fwd.t, 6 * d, 1e-6);
  assert_rel(a.bin.t - ag.bin.t, 8 * d, 1e-6);
  assert_rel(a.bw.t - ag.bw.t, 2 * d, 1e-6);
  /* feed-forward: norm, up, activation, down, residual */
  assert_rel(f.fwd.t - fg.fwd.t, 5 * d, 1e-6);
  assert_rel(a.fwd.mem, ag.fwd.mem, 1e-12); /* gaps are not memory-bound time */
}

/* Gradient-accumulation fusion: each weight-gradient GEMM adds into the fp32
 * main gradient (reads and writes 4 bytes an element); the attention part's
 * weight gradients are QKV's (4096 x 12288) and the output projection's
 * (4096 x 4096) over the 2048 tokens, each with its launch gap; in the
 * compute-bound regime the epilogue's extra 6 bytes an element cost
 * 0.5 x 6 m n / H over a 16-bit output. Under the override, 16-bit output. */
static void test_wgrad_accum(void **state) {
  (void)state;
  const char *over[] = {"workload.compute_efficiency=0.8"};
  wl__part a, f, ao, fo;
  wl__hw hw, hwo;
  parts(NULL, 0, &a, &f, &hw);
  parts(over, 1, &ao, &fo, &hwo);
  assert_true(hw.wgrad == 8 && hwo.wgrad == 2);
  double h = 4096, T = 2048;
  double want = wl__gemm(&hw, true, 1, h, 3 * h, T, 8).t + wl__gemm(&hw, true, 1, h, h, T, 8).t;
  assert_rel(a.bw.t, want + 2 * hw.gap, 1e-12);
  double extra = wl__gemm(&hw, true, 1, h, h, T, 8).t - wl__gemm(&hw, true, 1, h, h, T, 2).t;
  assert_rel(extra, 0.5 * 6 * h * h / hw.hbm, 1e-9);
  assert_rel(ao.bw.t,
             wl__gemm(&hwo, true, 1, h, 3 * h, T, 2).t + wl__gemm(&hwo, true, 1, h, h, T, 2).t,
             1e-12);
}

/* Cross-entropy as Megatron-LM's unfused kernels run it: forward 38 bytes a
 * logit (the cast to fp32 6, then 32) in 6 kernels, backward 14 (8, the cast
 * back 6) in 2; against the H100 SXM times of those kernels (Liger-Kernel
 * benchmark/data/all_benchmark_data_megatron.csv at 7097ab9, megatron-
 * unfused, bf16 logits 8192 x 131072: forward 15.82 ms, forward and backward
 * 21.25 ms) within 15 %. Under fp32 no casts: 32 and 8 bytes. */
/* The cross-entropy of n logits under a scenario: its costs, kernels and
 * the GPU's launch gap and achievable HBM bandwidth. */
static void ce_of(const char *const *sets, int nsets, double n, wl__cost *c, double *k, double *gap,
                  double *hbm) {
  fixture f;
  wl__hw hw;
  hw_of(sets, nsets, &hw, &f);
  wl__cross_entropy(&hw, n, &c[0], &k[0], &c[1], &k[1]);
  *gap = hw.gap;
  *hbm = hw.hbm;
  unload(&f);
}

static void test_cross_entropy(void **state) {
  (void)state;
  const char *bf[] = {"cluster.nodes=1"};
  const char *f32[] = {"cluster.nodes=1", "workload.precision=fp32"};
  wl__cost c[2];
  double k[2], gap, H, n = 8192.0 * 131072;
  ce_of(bf, 1, n, c, k, &gap, &H);
  assert_rel(c[0].t, 38 * n / H, 1e-12);
  assert_rel(c[1].t, 14 * n / H, 1e-12);
  assert_true(k[0] == 6 && k[1] == 2 && c[0].mem == c[0].t);
  assert_rel(c[0].t + k[0] * gap, 15.82e-3, 0.15);
  assert_rel(c[1].t + k[1] * gap, 21.25e-3 - 15.82e-3, 0.15);
  ce_of(f32, 2, n, c, k, &gap, &H);
  assert_rel(c[0].t, 32 * n / H, 1e-12);
  assert_rel(c[1].t, 8 * n / H, 1e-12);
  assert_true(k[0] == 5 && k[1] == 1);
}

/* FP8: the GEMMs at their own (FP8) rate and the recipe's casts; the step's
 * GEMMs gain less than the peak ratio, and attention none. A large GEMM's
 * speed-up is the ratio of the measured plateaus: 1402.6 / 794.5 on H100. */
static void test_fp8_speedup(void **state) {
  (void)state;
  const char *f8[] = {"workload.precision=fp8"};
  const char *tw[] = {"workload.precision=fp8", "workload.fp8_recipe=tensorwise"};
  wl__part a16, f16, a8, f8p, atw, ftw;
  wl__hw hw16, hw8;
  parts(NULL, 0, &a16, &f16, &hw16);
  parts(f8, 1, &a8, &f8p, &hw8);
  parts(tw, 2, &atw, &ftw, NULL);
  double n = 32768;
  assert_rel(wl__gemm(&hw16, true, 1, n, n, n, 2).t / wl__gemm(&hw8, true, 1, n, n, n, 2).t,
             (1402.6 / 1979 * 1979) / (794.5 / 989 * 989), 2e-4);
  double s16 = a16.fwd.t + a16.bin.t + a16.bw.t + f16.fwd.t + f16.bin.t + f16.bw.t;
  double s8 = a8.fwd.t + a8.bin.t + a8.bw.t + f8p.fwd.t + f8p.bin.t + f8p.bw.t;
  double stw = atw.fwd.t + atw.bin.t + atw.bw.t + ftw.fwd.t + ftw.bin.t + ftw.bw.t;
  assert_true(s16 / s8 > 1.1 && s16 / s8 < 1402.6 / 794.5);
  assert_true(stw > s8); /* the current amax costs a read */
}

/* The optimizer step: the update's bytes (28 per parameter for mixed Adam)
 * plus the gradient norm's read of the gradients, two kernels; under the
 * override, the update alone. */
static void test_optimizer(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  const char *over[] = {"cluster.nodes=1", "workload.compute_efficiency=0.8"};
  fixture f;
  wl__hw hw;
  hw_of(sets, 1, &hw, &f);
  double P = 1e9, H = 3.35e12 * 0.9;
  wl__cost c = wl__optimizer(&hw, P, 2, 2, 12);
  assert_rel(c.t, (28 + 2) * P / H + 2 * 0.9e-6, 1e-12);
  assert_rel(c.mem, (28 + 2) * P / H, 1e-12);
  unload(&f);
  hw_of(over, 2, &hw, &f);
  assert_rel(wl__optimizer(&hw, P, 2, 2, 12).t, 28 * P / H, 1e-12);
  unload(&f);
}

/* Unfused attention (workload.attention: unfused) runs as its own kernels:
 * under the single-efficiency roofline (closed form, no launch gaps) the
 * core's forward is the score GEMM over the whole s x s square for each of
 * the 32 heads, the softmax reading and writing it, and the value GEMM; it
 * is what selective core_attn recomputation reruns. The rest of the layer
 * is FlashAttention's. Under the kernel model unfused is slower both ways
 * at 2k tokens. */
static void test_unfused(void **state) {
  (void)state;
  const char *uf[] = {"workload.attention=unfused", "workload.compute_efficiency=0.8"};
  const char *fl[] = {"workload.compute_efficiency=0.8"};
  wl__part a, f, fa, ff;
  wl__hw hw;
  parts(uf, 2, &a, &f, &hw);
  parts(fl, 1, &fa, &ff, NULL);
  double P = hw.mm16.peak * 0.8, H = hw.hbm, b = 32, s = 2048, d = 128;
  double qk = fmax(2 * s * s * d / P, (2 * s * d * 2 + s * s * 2) / H);
  double pv = fmax(2 * s * d * s / P, (s * s * 2 + s * d * 2 + s * d * 2) / H);
  double core = b * (qk + pv) + 2 * b * s * s * 2 / H;
  assert_rel(a.rc[CFG_RCMOD_CORE_ATTN].t, core, 1e-12);
  assert_rel(a.fwd.t - fa.fwd.t, core - fa.rc[CFG_RCMOD_CORE_ATTN].t, 1e-9);
  assert_true(fa.rc[CFG_RCMOD_CORE_ATTN].t > 0 && fa.rc[CFG_RCMOD_CORE_ATTN].t < core);
  parts(uf, 1, &a, &f, NULL);
  parts(NULL, 0, &fa, &ff, NULL);
  assert_true(a.fwd.t > fa.fwd.t && a.bin.t > fa.bin.t);
}

/* Grouped-query attention: with 8 key/value heads of 32, K and V are a
 * quarter of Q's width: the QKV GEMM computes 1.5 h columns instead of 3 h
 * and the rotary embedding moves 2 (1 + 1/4) instead of 4 T h elements;
 * the attention core's FLOPs stay (compute-bound here). Closed form under
 * the single-efficiency roofline. */
static void test_gqa(void **state) {
  (void)state;
  const char *gqa[] = {"workload.model.kv_heads=8", "workload.compute_efficiency=0.8"};
  const char *mha[] = {"workload.compute_efficiency=0.8"};
  wl__part a, f, am, fm;
  wl__hw hw;
  parts(gqa, 2, &a, &f, &hw);
  parts(mha, 1, &am, &fm, NULL);
  double P = hw.mm16.peak * 0.8, H = hw.hbm, T = 2048, h = 4096;
  double qkv = 2 * T * h * (3 * h - 1.5 * h) / P, rope = 2 * (2 - 1.25) * T * h * 2 / H;
  assert_rel(am.fwd.t - a.fwd.t, qkv + rope, 1e-9);
  assert_rel(fm.fwd.t, f.fwd.t, 1e-12);
}

/* torchtitan's selective op checkpointing (workload.recompute_modules: [op])
 * reruns, of the matmuls in the order Q K V O gate up down, the
 * even-numbered ones (K, O, up) and every element-wise operation: under the
 * single-efficiency roofline (closed form, compute-bound GEMMs, no gaps),
 * with 8 key/value heads of 32 and a gated feed-forward of width 14336, the
 * recomputed time is the three GEMMs' forward FLOPs 2 T h (h/4 + h + f) at
 * P plus the bytes of the two norms, the rotary embedding, the activation
 * and the two residual adds at H; the attention core is not rerun. */
static void test_op_recompute(void **state) {
  (void)state;
  const char *op[] = {"workload.model.kv_heads=8", "workload.model.ffn_hidden=14336",
                      "workload.model.gated_ffn=true", "workload.compute_efficiency=0.8"};
  wl__part a, f;
  wl__hw hw;
  parts(op, 4, &a, &f, &hw);
  double P = hw.mm16.peak * 0.8, H = hw.hbm, T = 2048, h = 4096, F = 14336, e = 2;
  double gemm = 2 * T * h * (h / 4 + h + F) / P;
  double norms = 2 * 2 * T * h * e, rope = 2 * 1.25 * T * h * e, act = 3 * T * F * e;
  double res = 2 * 3 * T * h * e;
  assert_rel(a.rc[CFG_RCMOD_OP].t + f.rc[CFG_RCMOD_OP].t, gemm + (norms + rope + act + res) / H,
             1e-9);
  assert_rel(a.rc[CFG_RCMOD_OP].mem + f.rc[CFG_RCMOD_OP].mem, (norms + rope + act + res) / H, 1e-9);
  /* the GEMM share alone: what torchtitan's policy recomputes of the forward */
  double fwd_gemm = 2 * T * h * (1.5 * h + h + 3 * F) / P;
  assert_rel(gemm / fwd_gemm, (0.25 + 1 + 14336.0 / 4096) / (2.5 + 3 * 14336.0 / 4096), 1e-12);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plateau),
      cmocka_unit_test(test_mamf_shapes),
      cmocka_unit_test(test_sustained_clock),
      cmocka_unit_test(test_waves),
      cmocka_unit_test(test_split_k),
      cmocka_unit_test(test_skinny),
      cmocka_unit_test(test_own_rates),
      cmocka_unit_test(test_monotone),
      cmocka_unit_test(test_attention_points),
      cmocka_unit_test(test_fp8_casts),
      cmocka_unit_test(test_launch_gaps),
      cmocka_unit_test(test_fp8_speedup),
      cmocka_unit_test(test_wgrad_accum),
      cmocka_unit_test(test_cross_entropy),
      cmocka_unit_test(test_optimizer),
      cmocka_unit_test(test_unfused),
      cmocka_unit_test(test_gqa),
      cmocka_unit_test(test_op_recompute),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
