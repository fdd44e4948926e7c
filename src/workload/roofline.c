/* The compute side of a training step: each operation of a layer timed by a
 * roofline, the larger of its FLOPs over the achievable FLOP/s and its bytes
 * over the achievable HBM bandwidth (docs/training.md, "Compute").
 *
 * Operations per layer and micro-batch on one GPU (T tokens, tensor parallel
 * t, T' = T / t under sequence parallelism, else T):
 *   attention part: norm | QKV GEMM | rotary embedding of Q, K | attention
 *                   core (FlashAttention) | output GEMM | residual add
 *   feed-forward:   norm | up (and gate) GEMM | activation | down GEMM |
 *                   residual add; MoE: router GEMM, each local expert's GEMMs
 *                   on its own tokens, shared experts, the weighted sum
 * A GEMM's FLOPs are 2 M N K at the precision's peak x compute_efficiency,
 * less the tile quantization of its M x N output (128 x 128 tiles); its
 * bytes are its operands and its output. Element-wise operations are
 * bytes only (reads plus writes, as Megatron-LM's activation accounting
 * counts tensors). The backward pass: each GEMM twice (input gradients,
 * weight gradients), the attention core 2.5 times its forward FLOPs (it
 * recomputes the scores), element-wise operations twice their bytes.
 *
 * Costs are pure functions of the model and the hardware: no state. O(1)
 * per layer (O(local experts) ops summed in closed form).
 */
#include <math.h>

#include "workload/wl_internal.h"

enum { TILE = 128 }; /* output tile of a large GEMM (CUTLASS/cuBLAS 128 x 128) */

double wl__peak_flops(const cfg_scenario *cfg) {
  switch (cfg->workload.precision) {
  case CFG_PRECISION_FP32: return cfg->cluster.gpu_flops_fp32; /* TF32 tensor cores */
  case CFG_PRECISION_FP8: return cfg->cluster.gpu_flops_fp8;
  case CFG_PRECISION_BF16:
  case CFG_PRECISION_FP16: break;
  }
  return cfg->cluster.gpu_flops;
}

void wl_achievable(const cfg_scenario *cfg, double *flops, double *hbm) {
  wl__hw hw;
  wl__hw_init(&hw, cfg);
  *flops = hw.gemm;
  *hbm = hw.hbm;
}

void wl__hw_init(wl__hw *hw, const cfg_scenario *cfg) {
  double eff = cfg->workload.compute_efficiency;
  cfg_precision p = cfg->workload.precision;
  hw->gemm = wl__peak_flops(cfg) * eff;
  /* attention's matmuls stay in 16 bits under fp8 (DeepSeek-V3 sec. 3.3.1) */
  hw->attn = (p == CFG_PRECISION_FP32 ? cfg->cluster.gpu_flops_fp32 : cfg->cluster.gpu_flops) * eff;
  hw->hbm = (double)cfg->cluster.hbm_bandwidth / 8 * cfg->cluster.hbm_efficiency;
  hw->act = p == CFG_PRECISION_FP32 ? 4 : 2;
  hw->in = p == CFG_PRECISION_FP8 ? 1 : hw->act;
  hw->wgrad = p == CFG_PRECISION_FP32 ? 4 : 2;
  hw->expert_load = 1;
}

static wl__cost roof(double t_flops, double t_bytes) {
  return t_bytes > t_flops ? (wl__cost){t_bytes, t_bytes} : (wl__cost){t_flops, 0};
}

static double padded(double x) { return ceil(x / TILE) * TILE; }

wl__cost wl__gemm(const wl__hw *hw, double m, double n, double k, double out_bytes) {
  if (!(m > 0 && n > 0 && k > 0)) return (wl__cost){0, 0};
  double flops = 2 * m * n * k, q = m * n / (padded(m) * padded(n));
  double bytes = (m * k + k * n) * hw->in + m * n * out_bytes;
  return roof(flops / (hw->gemm * q), bytes / hw->hbm);
}

wl__cost wl__eltwise(const wl__hw *hw, double bytes) { return roof(0, bytes / hw->hbm); }

static void add(wl__cost *a, wl__cost b) {
  a->t += b.t;
  a->mem += b.mem;
}

static wl__cost times(wl__cost a, double k) { return (wl__cost){a.t * k, a.mem * k}; }

/* n linear layers X[m x k] W[k x n'] (n' = n): forward, input gradient
 * dY W^T (m x k out), weight gradient X^T dY (k x n out). */
static void linear(wl__part *o, const wl__hw *hw, double count, double m, double k, double n) {
  add(&o->fwd, times(wl__gemm(hw, m, n, k, hw->act), count));
  add(&o->bin, times(wl__gemm(hw, m, k, n, hw->act), count));
  add(&o->bw, times(wl__gemm(hw, k, n, m, hw->wgrad), count));
}

/* An element-wise operation moving `elems` activation elements forward;
 * its backward reads the output gradient and the saved input and writes
 * the input gradient: twice the bytes. */
static void eltwise(wl__part *o, const wl__hw *hw, double elems) {
  add(&o->fwd, wl__eltwise(hw, elems * hw->act));
  add(&o->bin, wl__eltwise(hw, 2 * elems * hw->act));
}

static double tokens_sp(const wl_parallel *p, double tokens) {
  return p->sp ? tokens / p->tp : tokens;
}

void wl__part_attention(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                        wl__part *o) {
  *o = (wl__part){{0, 0}, {0, 0}, {0, 0}};
  if (m->kind == WL_MODEL_MLP) return;
  double h = m->hidden, t = p->tp, T = tokens, Ts = tokens_sp(p, tokens);
  double a = m->attention / (4 * h) / t; /* attention width per GPU (h / t unscaled) */
  double s = m->seq_len, seqs = T / s;
  eltwise(o, hw, 2 * Ts * h); /* norm: read x, write y */
  linear(o, hw, 1, T, h, 3 * a);
  eltwise(o, hw, 2 * 2 * T * a); /* rotary embedding of Q and K */
  /* FlashAttention: QK^T and PV, 4 s^2 a per sequence, half of it under the
   * causal mask (masked blocks skipped); reads Q, K, V, writes O. Backward:
   * recomputes QK^T and computes dV, dP, dQ, dK: 2.5 x the FLOPs; reads Q,
   * K, V, O, dO, writes dQ, dK, dV. */
  double core = 4 * seqs * s * s * a / 2;
  add(&o->fwd, roof(core / hw->attn, 4 * T * a * hw->act / hw->hbm));
  add(&o->bin, roof(2.5 * core / hw->attn, 8 * T * a * hw->act / hw->hbm));
  linear(o, hw, 1, T, a, h);
  eltwise(o, hw, 3 * Ts * h); /* residual: read two, write one */
}

void wl__part_ffn(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                  uint32_t l, wl__part *o) {
  *o = (wl__part){{0, 0}, {0, 0}, {0, 0}};
  double t = p->tp, T = tokens, Ts = tokens_sp(p, tokens), h = m->hidden;
  if (m->kind == WL_MODEL_MLP) {
    double in = (double)m->widths[l], out = (double)m->widths[l + 1];
    linear(o, hw, 1, T, in, out);
    eltwise(o, hw, 2 * T * out); /* bias and activation */
    return;
  }
  double g = m->gated ? 2 : 1; /* up-projections (gate and up when gated) */
  eltwise(o, hw, 2 * Ts * h);
  if (!wl_layer_is_moe(m, l)) {
    double f = m->ffn / ((g + 1) * h) / t;
    linear(o, hw, 1, T, h, g * f);
    eltwise(o, hw, (g + 1) * T * f); /* activation (x gate): read g, write 1 */
    linear(o, hw, 1, T, f, h);
  } else {
    double k = m->top_k, E = m->experts, ep = p->ep, fe = m->expert / ((g + 1) * h) / t;
    /* local experts; tokens each on the busiest GPU (hot experts: the
     * dispatch and combine wait for it) */
    double local = E / ep, load = hw->expert_load, te = T * k * ep / E * load;
    linear(o, hw, 1, T, h, m->router / h / t);
    linear(o, hw, local, te, h, g * fe);
    eltwise(o, hw, (g + 1) * T * k * load * fe);
    linear(o, hw, local, te, fe, h);
    if (m->shared_experts > 0) {
      double sh = m->shared_experts * fe;
      linear(o, hw, 1, T, h, g * sh);
      eltwise(o, hw, (g + 1) * T * sh);
      linear(o, hw, 1, T, sh, h);
    }
    eltwise(o, hw, (k + 1) * Ts * h); /* weighted sum of the experts' outputs */
  }
  eltwise(o, hw, 3 * Ts * h);
}

void wl__part_head(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                   wl__part *o) {
  *o = (wl__part){{0, 0}, {0, 0}, {0, 0}};
  double t = p->tp, T = tokens, h = m->hidden, v = m->head / h / t;
  eltwise(o, hw, 2 * tokens_sp(p, tokens) * h); /* final norm */
  linear(o, hw, 1, T, h, v);
  /* cross-entropy: reads the logits, writes fp32 probabilities (2 elements'
   * worth each at 16 bits) */
  eltwise(o, hw, T * v * (1 + 4 / hw->act));
}
