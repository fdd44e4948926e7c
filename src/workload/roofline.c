/* The compute side of a training step: each operation of a layer timed as
 * the kernels that run it (docs/training.md, "Compute").
 *
 * Operations per layer and micro-batch on one GPU (T tokens, tensor parallel
 * t, T' = T / t under sequence parallelism, else T):
 *   attention part: norm | QKV GEMM | rotary embedding of Q, K | attention
 *                   core (FlashAttention) | output GEMM | residual add
 *   feed-forward:   norm | up (and gate) GEMM | activation | down GEMM |
 *                   residual add; MoE: router GEMM, the local experts' GEMMs
 *                   (one grouped GEMM each) on their tokens, shared experts,
 *                   the weighted sum
 * A GEMM's time is gemm.c's (shape, tiles and waves over the SMs, bytes,
 * the GPU's measured rates); the attention core's is its FLOPs at the
 * FlashAttention papers' measured rate for its sequence length and head
 * dimension (attention.c) against its bytes; an element-wise operation's
 * its bytes (reads plus writes, as Megatron-LM's activation accounting
 * counts tensors) over the achievable HBM bandwidth. Every kernel adds the
 * launch gap of the stream it runs on (0.9 us; 0.5 us from a CUDA graph).
 * Under fp8 each GEMM operand is cast (and transposed, where the tensor
 * cores need it) by the recipe's kernels; the output layer and the router
 * stay in 16 bits. The backward pass: each GEMM twice (input gradients,
 * weight gradients), the attention core 2.5 times its forward FLOPs (it
 * recomputes the scores) at the backward's measured rate, element-wise
 * operations twice their bytes.
 *
 * With workload.compute_efficiency set, the single-efficiency roofline of
 * before instead: GEMMs and attention at peak x it, no launch gaps, casts or
 * gradient-norm pass (old scenarios reproduce their figures).
 *
 * Costs are pure functions of the model and the hardware: no state. O(1)
 * per layer.
 */
#include <math.h>

#include "workload/wl_internal.h"

/* s: a kernel's launch gap on the GPU, stream launches / CUDA graph (NVIDIA
 * Technical Blog, "Getting Started with CUDA Graphs": 3.8 us per 2.9 us
 * kernel from a stream, 3.4 us from a graph) */
static const double GAP_STREAM = 0.9e-6, GAP_GRAPH = 0.5e-6;
/* FlashAttention's backward: dot(dO, O), the main kernel, dQ's conversion */
enum { ATTN_BWD_KERNELS = 3 };
/* blockwise FP8: an fp32 scale per 128 elements, in each of two layouts */
static const double BLOCK_SCALE_BYTES = 2 * 4.0 / 128;

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
  cfg_precision p = cfg->workload.precision;
  double e = cfg->workload.compute_efficiency;
  wl__rates_init(hw, cfg);
  wl__attn_init(hw, cfg);
  hw->gemm = wl__peak_flops(cfg) * (hw->legacy ? e : wl__gemm_plateau(cfg));
  /* attention's matmuls stay in 16 bits under fp8 (DeepSeek-V3 sec. 3.3.1) */
  hw->attn = p == CFG_PRECISION_FP32 ? cfg->cluster.gpu_flops_fp32 : cfg->cluster.gpu_flops;
  if (hw->legacy) hw->attn *= e;
  hw->gap = hw->legacy ? 0 : cfg->workload.cuda_graphs ? GAP_GRAPH : GAP_STREAM;
  hw->fp8 = !hw->legacy && p == CFG_PRECISION_FP8;
  hw->recipe = cfg->workload.fp8_recipe;
  /* Hopper's FP8 tensor cores take K-major operands only: each cast also
   * writes the transposed copy the other GEMMs need; Blackwell's take any
   * layout (per-tensor scales need no second copy there) */
  hw->fp8_transpose = cfg->cluster.gpu != CFG_GPU_B200;
  hw->hbm = (double)cfg->cluster.hbm_bandwidth / 8 * cfg->cluster.hbm_efficiency;
  hw->act = p == CFG_PRECISION_FP32 ? 4 : 2;
  hw->wgrad = p == CFG_PRECISION_FP32 ? 4 : 2;
  hw->expert_load = 1;
}

static wl__cost roof(double t_flops, double t_bytes) {
  return t_bytes > t_flops ? (wl__cost){t_bytes, t_bytes} : (wl__cost){t_flops, 0};
}

wl__cost wl__eltwise(const wl__hw *hw, double bytes) { return roof(0, bytes / hw->hbm); }

double wl__fp8_cast_bytes(const wl__hw *hw, double elems, double *kernels) {
  *kernels = 0;
  if (!hw->fp8 || !(elems > 0)) return 0;
  bool block = hw->recipe == CFG_FP8_BLOCKWISE;
  /* read the 16-bit tensor, write it in fp8, and (Hopper, or blockwise's
   * 128 x 1 tiles along the other dimension) a second copy for the
   * transposed use */
  double per = hw->act + 1 + (hw->fp8_transpose || block ? 1 : 0);
  *kernels = 1;
  if (hw->recipe == CFG_FP8_TENSORWISE) { /* the current amax: one more read */
    per += hw->act;
    *kernels = 2;
  }
  if (block) per += BLOCK_SCALE_BYTES;
  return elems * per;
}

wl__cost wl__optimizer(const wl__hw *hw, double params, double w, double g, double o) {
  double bytes = params * (2 * o + w + g);
  if (hw->legacy) return wl__eltwise(hw, bytes);
  /* gradient clipping (Megatron-LM's default --clip-grad 1.0): the norm reads
   * every local gradient; its all-reduce is not in the DAG */
  wl__cost c = wl__eltwise(hw, bytes + params * g);
  c.t += 2 * hw->gap;
  return c;
}

/* Adds kernel cost k and the launch gaps of its `kernels` kernels. */
static void add(wl__cost *a, wl__cost k, const wl__hw *hw, double kernels) {
  a->t += k.t + kernels * hw->gap;
  a->mem += k.mem;
}

/* The part being built: the hardware, and the share of a step's weight casts
 * one micro-batch pays (Transformer Engine casts the FP8 weights at a step's
 * first micro-batch and reuses them). */
typedef struct part_ctx {
  const wl__hw *hw;
  double wshare;
} part_ctx;

static part_ctx ctx_of(const wl__hw *hw, const wl_parallel *p) {
  return (part_ctx){hw, 1.0 / (p->micro_batches > 0 ? p->micro_batches : 1)};
}

/* `count` linear layers X[m x k] W[k x n] in one (grouped) kernel each:
 * forward, input gradient dY W^T (m x k out), weight gradient X^T dY (k x n
 * out); `lowp`: at the training precision (FP8 under fp8: X, W and dY cast
 * by the recipe's kernels), else in 16 bits. */
static void linear(wl__part *o, const part_ctx *c, bool lowp, double count, double m, double k,
                   double n) {
  const wl__hw *hw = c->hw;
  add(&o->fwd, wl__gemm(hw, lowp, count, m, n, k, hw->act), hw, 1);
  add(&o->bin, wl__gemm(hw, lowp, count, m, k, n, hw->act), hw, 1);
  add(&o->bw, wl__gemm(hw, lowp, count, k, n, m, hw->wgrad), hw, 1);
  if (!lowp || !hw->fp8) return;
  double kx, kw, ky;
  double x = wl__fp8_cast_bytes(hw, count * m * k, &kx);
  double w = wl__fp8_cast_bytes(hw, count * k * n, &kw) * c->wshare;
  double y = wl__fp8_cast_bytes(hw, count * m * n, &ky);
  add(&o->fwd, wl__eltwise(hw, x + w), hw, kx + kw * c->wshare);
  add(&o->bin, wl__eltwise(hw, y), hw, ky);
}

/* An element-wise operation moving `elems` activation elements forward;
 * its backward reads the output gradient and the saved input and writes
 * the input gradient: twice the bytes. One kernel each way. */
static void eltwise(wl__part *o, const part_ctx *c, double elems) {
  const wl__hw *hw = c->hw;
  add(&o->fwd, wl__eltwise(hw, elems * hw->act), hw, 1);
  add(&o->bin, wl__eltwise(hw, 2 * elems * hw->act), hw, 1);
}

static double tokens_sp(const wl_parallel *p, double tokens) {
  return p->sp ? tokens / p->tp : tokens;
}

void wl__part_attention(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                        wl__part *o) {
  *o = (wl__part){{0, 0}, {0, 0}, {0, 0}};
  if (m->kind == WL_MODEL_MLP) return;
  part_ctx c = ctx_of(hw, p);
  double h = m->hidden, t = p->tp, T = tokens, Ts = tokens_sp(p, tokens);
  double a = m->attention / (4 * h) / t; /* attention width per GPU (h / t unscaled) */
  double s = m->seq_len, seqs = T / s;
  eltwise(o, &c, 2 * Ts * h); /* norm: read x, write y */
  linear(o, &c, true, 1, T, h, 3 * a);
  eltwise(o, &c, 2 * 2 * T * a); /* rotary embedding of Q and K */
  /* FlashAttention: QK^T and PV, 4 s^2 a per sequence, half of it under the
   * causal mask (masked blocks skipped); reads Q, K, V, writes O. Backward:
   * recomputes QK^T and computes dV, dP, dQ, dK: 2.5 x the FLOPs; reads Q,
   * K, V, O, dO, writes dQ, dK, dV. */
  double core = 4 * seqs * s * s * a / 2, rf = hw->attn, rb = hw->attn;
  if (!hw->legacy) {
    double hd = (double)m->hidden / m->heads, heads = (double)m->heads / t;
    rf *= wl__attn_eff(hw, seqs, s, heads, hd, false);
    rb *= wl__attn_eff(hw, seqs, s, heads, hd, true);
  }
  add(&o->fwd, roof(core / rf, 4 * T * a * hw->act / hw->hbm), hw, 1);
  add(&o->bin, roof(2.5 * core / rb, 8 * T * a * hw->act / hw->hbm), hw, ATTN_BWD_KERNELS);
  linear(o, &c, true, 1, T, a, h);
  eltwise(o, &c, 3 * Ts * h); /* residual: read two, write one */
}

void wl__part_ffn(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                  uint32_t l, wl__part *o) {
  *o = (wl__part){{0, 0}, {0, 0}, {0, 0}};
  part_ctx c = ctx_of(hw, p);
  double t = p->tp, T = tokens, Ts = tokens_sp(p, tokens), h = m->hidden;
  if (m->kind == WL_MODEL_MLP) {
    double in = (double)m->widths[l], out = (double)m->widths[l + 1];
    linear(o, &c, true, 1, T, in, out);
    eltwise(o, &c, 2 * T * out); /* bias and activation */
    return;
  }
  double g = m->gated ? 2 : 1; /* up-projections (gate and up when gated) */
  eltwise(o, &c, 2 * Ts * h);
  if (!wl_layer_is_moe(m, l)) {
    double f = m->ffn / ((g + 1) * h) / t;
    linear(o, &c, true, 1, T, h, g * f);
    eltwise(o, &c, (g + 1) * T * f); /* activation (x gate): read g, write 1 */
    linear(o, &c, true, 1, T, f, h);
  } else {
    double k = m->top_k, E = m->experts, ep = p->ep, fe = m->expert / ((g + 1) * h) / t;
    /* local experts, one grouped GEMM for all of them; tokens each on the
     * busiest GPU (hot experts: the dispatch and combine wait for it) */
    double local = E / ep, load = hw->expert_load, te = T * k * ep / E * load;
    linear(o, &c, false, 1, T, h, m->router / h / t); /* the router stays in 16 bits */
    linear(o, &c, true, local, te, h, g * fe);
    eltwise(o, &c, (g + 1) * T * k * load * fe);
    linear(o, &c, true, local, te, fe, h);
    if (m->shared_experts > 0) {
      double sh = m->shared_experts * fe;
      linear(o, &c, true, 1, T, h, g * sh);
      eltwise(o, &c, (g + 1) * T * sh);
      linear(o, &c, true, 1, T, sh, h);
    }
    eltwise(o, &c, (k + 1) * Ts * h); /* weighted sum of the experts' outputs */
  }
  eltwise(o, &c, 3 * Ts * h);
}

void wl__part_head(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                   wl__part *o) {
  *o = (wl__part){{0, 0}, {0, 0}, {0, 0}};
  part_ctx c = ctx_of(hw, p);
  double t = p->tp, T = tokens, h = m->hidden, v = m->head / h / t;
  eltwise(o, &c, 2 * tokens_sp(p, tokens) * h); /* final norm */
  linear(o, &c, false, 1, T, h, v);             /* the output layer stays in 16 bits */
  /* cross-entropy: reads the logits, writes fp32 probabilities (2 elements'
   * worth each at 16 bits) */
  eltwise(o, &c, T * v * (1 + 4 / hw->act));
}
