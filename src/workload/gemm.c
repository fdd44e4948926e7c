/* A GEMM's time from its shape, precision and GPU (docs/training.md,
 * "Compute"; every figure's source in docs/validation.md, "Compute").
 *
 * C[m x n] = A[m x k] B[k x n], b of them in one kernel (a batched or grouped
 * GEMM: the experts of a GPU), on a GPU of S SMs at peak P:
 *   tiles  C = b ceil(m/128) ceil(n/128)       (tile quantization)
 *   waves  W = ceil(C / S)                     (wave quantization)
 *   split  s = min(floor(S/C), ceil(k/256)) when C < S, else 1 (split-K: a
 *          skinny output spreads its k loop over the idle SMs)
 *   main   W x 2 x 128 x 128 x (k/s) / (e P / S)   (each SM runs its tiles at
 *          e of its share of the peak)
 *   time   t0 + max(main + a x out/H, (in + out)/H), and at least
 *          2 b m n k / (cap P)
 * where H is the achievable HBM bandwidth, in/out the operand and output
 * bytes, t0 = 5 us the kernel's fixed time (prologue, pipeline fill, the last
 * tile's epilogue), a = 0.5 the share of the output write the main loop does
 * not hide, and cap the largest fraction of the peak any measured shape
 * reached (the maximum achievable matmul FLOP/s, MAMF). e per GPU and
 * precision is set so that the model reproduces the MAMF at its measured
 * shape; t0 and a come from the fit to XLA's H100 GEMM sweep. A skinny GEMM
 * (an expert with few tokens) is bound by its bytes; a large square one runs
 * at cap. P is the peak at the clock a training step sustains: the
 * datasheet peak x c, c = MSMF / MAMF of the GPU (the MAMF bursts run at the
 * boost clock, a training step at the power limit), so a large GEMM runs at
 * the sustainable rate, cap x c of the peak.
 *
 * With workload.compute_efficiency set, the single-efficiency roofline of
 * before: 2 b m n k / (P x e x tile quantization) against the bytes.
 *
 * Pure functions; O(1) per call.
 */
#include <math.h>

#include "workload/wl_internal.h"

enum { TILE = 128, SPLIT_K_MIN = 256 };
static const double KERNEL_T0 = 5e-6; /* s */
static const double EPILOGUE = 0.5;
/* MSMF / MAMF, node medians with all 8 GPUs computing (see GPUS below) */
static const double CLOCK_H200 = 755.5 / 852.1, CLOCK_B200 = 1437.5 / 1746.7;

/* By cfg_gpu (H100, H800, A100, B200, H200, MI300X): cap and e of 16-bit
 * (BF16, FP16; TF32 assumed alike) GEMMs, of FP8 GEMMs with per-tensor
 * scales (delayed, tensorwise), and of FP8 GEMMs with 1 x 128 / 128 x 128
 * block scales (blockwise). cap = MAMF / datasheet peak (S. Bekman,
 * ml-engineering compute/accelerator/README.md); e from the MAMF's shape;
 * blockwise on SM90 from DeepGEMM's H800 table (README at 989c9e3, M >= 4096
 * rows: e fitted, cap its 1550 TFLOP/s). Where no measurement exists the
 * nearest one stands in (docs/validation.md says which).
 * clock: the tensor cores' sustained rate over their burst rate, MSMF / MAMF
 * of the same runs (mamf-finder.py's two headlines, every GPU of the node
 * computing: the MAMF is a boost-clock burst after an idle gap, the MSMF the
 * rate held at the power limit, "the one to use for training"): H200 755.5 /
 * 852.1, B200 1437.5 / 1746.7 (S. Bekman, ml-engineering, compute/
 * accelerator/benchmarks/README.md, "alone vs all-8 concurrent"); H100 and
 * H800 take H200's (the same die at the same 700 W); A100 and MI300X: not
 * measured, 1 (MI300X reaches its power cap within one kernel: its MAMF is
 * already a capped rate). */
typedef struct gpu_gemm {
  double cap16, e16, cap8, e8, cap8b, e8b, clock;
} gpu_gemm;
static const gpu_gemm GPUS[] = {
    /* H100 SXM: MAMF 794.5 @ 2048x2048x13312; FP8 1402.6 @ 1024x9216x14336 */
    {0.8033, 0.8679, 0.7087, 0.8478, 0.7832, 0.7230, CLOCK_H200},
    /* H800: H100's SMs and clocks; DeepGEMM measured on H800 */
    {0.8033, 0.8679, 0.7087, 0.8478, 0.7832, 0.7230, CLOCK_H200},
    /* A100 SXM: MAMF 271.2 @ 1024x10240x5120; no FP8 tensor cores (BF16 rate) */
    {0.8692, 0.9046, 0.8692, 0.9046, 0.8692, 0.9046, 1},
    /* B200: MAMF 1745 @ 1792x16128x3072; FP8 3432.5 @ 15360x4096x3072; block
     * scales in hardware: at the per-tensor rate (not measured) */
    {0.7756, 0.8567, 0.7628, 0.8706, 0.7628, 0.8706, CLOCK_B200},
    /* H200: "the same" as H100 in BF16; FP8 MAMF 1453.4; H100's e */
    {0.8033, 0.8679, 0.7344, 0.8478, 0.7832, 0.7230, CLOCK_H200},
    /* MI300X: MAMF 668.4 @ 10240x15360x8192 (ROCm 6.3); FP8 not measured:
     * the BF16 fractions */
    {0.5112, 0.5232, 0.5112, 0.5232, 0.5112, 0.5232, 1},
};

static const gpu_gemm *gpu_of(const cfg_scenario *cfg) {
  cfg_gpu g = cfg->cluster.gpu;
  return &GPUS[(unsigned)g < sizeof GPUS / sizeof GPUS[0] ? g : 0];
}

double wl__gemm_plateau(const cfg_scenario *cfg) {
  const gpu_gemm *t = gpu_of(cfg);
  return cfg->workload.precision == CFG_PRECISION_FP8 ? t->cap8 : t->cap16;
}

void wl__rates_init(wl__hw *hw, const cfg_scenario *cfg) {
  cfg_precision p = cfg->workload.precision;
  const gpu_gemm *t = gpu_of(cfg);
  double e = cfg->workload.compute_efficiency;
  double p16 = p == CFG_PRECISION_FP32 ? cfg->cluster.gpu_flops_fp32 : cfg->cluster.gpu_flops;
  double b16 = p == CFG_PRECISION_FP32 ? 4 : 2;
  hw->legacy = e > 0;
  hw->mm16 = (wl__rate){p16, hw->legacy ? e : t->e16, hw->legacy ? e : t->cap16, b16};
  hw->mm = hw->mm16;
  if (p == CFG_PRECISION_FP8) {
    bool block = cfg->workload.fp8_recipe == CFG_FP8_BLOCKWISE;
    hw->mm.peak = cfg->cluster.gpu_flops_fp8;
    hw->mm.eff = hw->legacy ? e : block ? t->e8b : t->e8;
    hw->mm.cap = hw->legacy ? e : block ? t->cap8b : t->cap8;
    hw->mm.in = 1;
  }
  if (hw->legacy) hw->mm16 = hw->mm; /* as before: every GEMM at the training precision */
  hw->sms = cfg->cluster.gpu_sms > 0 ? cfg->cluster.gpu_sms : 1;
  hw->clock = hw->legacy ? 1 : t->clock;
}

static wl__cost roof(double t_flops, double t_bytes) {
  return t_bytes > t_flops ? (wl__cost){t_bytes, t_bytes, 0} : (wl__cost){t_flops, 0, 0};
}

static double tiles(double x) { return ceil(x / TILE); }

wl__cost wl__gemm(const wl__hw *hw, bool lowp, double b, double m, double n, double k,
                  double out_bytes) {
  if (!(b > 0 && m > 0 && n > 0 && k > 0)) return (wl__cost){0, 0, 0};
  const wl__rate *r = lowp ? &hw->mm : &hw->mm16;
  if (hw->legacy) { /* as before the kernel model, to the last bit: one GEMM, times b */
    double q = m * n / (tiles(m) * TILE * tiles(n) * TILE);
    wl__cost one = roof(2 * m * n * k / (r->peak * r->eff * q),
                        ((m * k + k * n) * r->in + m * n * out_bytes) / hw->hbm);
    return (wl__cost){one.t * b, one.mem * b, 0};
  }
  double flops = 2 * b * m * n * k, out = b * m * n * out_bytes / hw->hbm;
  double io = b * (m * k + k * n) * r->in / hw->hbm + out;
  double S = hw->sms, C = b * tiles(m) * tiles(n), waves = ceil(C / S), split = 1;
  if (C < S) split = fmax(1, fmin(floor(S / C), ceil(k / SPLIT_K_MIN)));
  double rate = r->peak * hw->clock; /* at the sustained clock */
  double main = waves * 2.0 * TILE * TILE * (k / split) / (r->eff * rate / S);
  wl__cost c = roof(main + EPILOGUE * out, io);
  double floor_t = flops / (r->cap * rate) - KERNEL_T0;
  if (c.t < floor_t) c = (wl__cost){floor_t, 0, 0};
  c.t += KERNEL_T0;
  if (c.mem > 0) c.mem = c.t;
  return c;
}
