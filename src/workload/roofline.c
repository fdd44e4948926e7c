/* The compute side of a training step: each operation of a layer timed as
 * the kernels that run it (docs/training.md, "Compute").
 *
 * Operations per layer and micro-batch on one GPU (T tokens, tensor parallel
 * t, T' = T / t under sequence parallelism, else T):
 *   attention part: norm | QKV GEMM | rotary embedding of Q, K | attention
 *                   core (FlashAttention) | output GEMM | residual add
 *   feed-forward:   norm | up (and gate) GEMM | activation | down GEMM |
 *                   residual add; MoE: router GEMM and the fused router,
 *                   the token permutations, the local experts' GEMMs on their
 *                   tokens (one per expert over Transformer Engine's streams,
 *                   or one grouped kernel: kernels_moe.c), shared experts,
 *                   the weighted sum
 * A GEMM's time is gemm.c's (shape, tiles and waves over the SMs, bytes,
 * the GPU's measured rates); the attention core's is its FLOPs at the
 * FlashAttention papers' measured rate for its sequence length and head
 * dimension (attention.c) against its bytes; both at the tensor cores'
 * sustained clock (gemm.c: the benchmarks ran short bursts at the boost
 * clock, a training step runs at the power limit); an element-wise operation's
 * its bytes (reads plus writes, as Megatron-LM's activation accounting
 * counts tensors) over the achievable HBM bandwidth. Every kernel adds the
 * launch gap of the stream it runs on (0.9 us; 0.5 us from a CUDA graph).
 * A weight-gradient GEMM accumulates into the fp32 main gradient (Megatron-
 * LM's gradient-accumulation fusion: its epilogue reads and writes 4 bytes
 * an element). Under fp8 each GEMM operand is cast (and transposed, where the tensor
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
/* Megatron-LM's vocab-parallel cross-entropy (megatron/core/tensor_parallel/
 * cross_entropy.py, unfused: --cross-entropy-loss-fusion is off by default),
 * per logit after the cast to fp32: forward max (read 4), subtract the max
 * (read and write 4), exp (read and write 4), sum (read 4), divide by the sum
 * (read and write 4): 32 bytes in 5 kernels; backward scales the saved
 * softmax by the loss gradient in place (read and write 4): 8 bytes, 1 kernel */
static const double CE_FWD_FP32_BYTES = 4 + 8 + 8 + 4 + 8, CE_BWD_FP32_BYTES = 8;
enum { CE_FWD_KERNELS = 5, CE_BWD_KERNELS = 1 };
/* gradient-accumulation fusion (Megatron-LM's default; Transformer Engine's
 * fuse_wgrad_accumulation): a weight-gradient GEMM adds its output into the
 * fp32 main gradient, reading and writing 4 bytes per element */
static const double MAIN_GRAD_ACCUM_BYTES = 2 * 4.0;

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
  hw->gemm = wl__peak_flops(cfg) * (hw->legacy ? e : wl__gemm_plateau(cfg) * hw->clock);
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
  /* FSDP2 (ZeRO 3, per_param): autograd writes each unsharded parameter's
   * gradient once in its 16-bit dtype; the cast to the reduce dtype is the
   * reduce-scatter's copy-in (dag.c) */
  bool fsdp2 = cfg->workload.parallel.zero >= 3 && cfg->workload.zero_impl == CFG_ZERO_PER_PARAM;
  hw->wgrad = hw->legacy || fsdp2 ? hw->act : MAIN_GRAD_ACCUM_BYTES;
  hw->expert_load = 1;
  hw->host_op = hw->legacy ? 0 : cfg->workload.host_op_time;
  hw->host_sync = !hw->legacy && cfg->workload.moe.host_sync && cfg->workload.parallel.ep > 1;
  hw->ggemm_streams = cfg->workload.moe.grouped_gemm == CFG_GGEMM_MULTI_STREAM;
}

static wl__cost roof(double t_flops, double t_bytes) {
  return t_bytes > t_flops ? (wl__cost){t_bytes, t_bytes, 0} : (wl__cost){t_flops, 0, 0};
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

void wl__cross_entropy(const wl__hw *hw, double logits, wl__cost *f, double *kf, wl__cost *b,
                       double *kb) {
  /* the cast to fp32 and, backward, the gradient's cast back (none in fp32) */
  bool cast = hw->act < 4;
  double up = cast ? hw->act + 4 : 0, down = cast ? 4 + hw->act : 0;
  *f = wl__eltwise(hw, logits * (up + CE_FWD_FP32_BYTES));
  *kf = CE_FWD_KERNELS + (cast ? 1 : 0);
  *b = wl__eltwise(hw, logits * (CE_BWD_FP32_BYTES + down));
  *kb = CE_BWD_KERNELS + (cast ? 1 : 0);
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

/* Adds kernel cost k, the launch gaps of `gaps` launches one after another
 * on the GPU and the `ops` kernels the host issues for it. */
static void add_ops(wl__cost *a, wl__cost k, const wl__hw *hw, double gaps, double ops) {
  a->t += k.t + gaps * hw->gap;
  a->mem += k.mem;
  a->ops += ops;
}

/* Adds kernel cost k and the launch gaps of its `kernels` kernels. */
static void add(wl__cost *a, wl__cost k, const wl__hw *hw, double kernels) {
  add_ops(a, k, hw, kernels, kernels);
}

/* The part being built: the hardware, the share of a step's weight casts
 * one micro-batch pays (Transformer Engine casts the FP8 weights at a step's
 * first micro-batch and reuses them), and the selective-recompute modules
 * the operations being added belong to (a bit per cfg_recompute_module;
 * 0: none). */
typedef struct part_ctx {
  const wl__hw *hw;
  double wshare;
  unsigned mods;
  wl__part *o;
} part_ctx;

#define RC(k) (1u << (k))

static part_ctx ctx_of(const wl__hw *hw, const wl_parallel *p, wl__part *o) {
  *o = (wl__part){0};
  return (part_ctx){hw, 1.0 / (p->micro_batches > 0 ? p->micro_batches : 1), 0, o};
}

/* A forward kernel's cost (gaps launches, ops issued): to the forward, and
 * to its modules' recompute costs when `rerun` (what a recomputation
 * repeats). */
static void fwd_ops(const part_ctx *c, wl__cost k, double gaps, double ops, bool rerun) {
  add_ops(&c->o->fwd, k, c->hw, gaps, ops);
  for (int i = 0; rerun && i < CFG_RCMOD_COUNT; i++)
    if (c->mods >> i & 1u) add_ops(&c->o->rc[i], k, c->hw, gaps, ops);
}

static void fwd(const part_ctx *c, wl__cost k, double kernels, bool rerun) {
  fwd_ops(c, k, kernels, kernels, rerun);
}

/* One linear layer's GEMM, or (experts) the local experts' GEMMs as
 * kernels_moe.c runs them; *gaps and *ops its launches. */
static wl__cost gemm_of(const wl__hw *hw, bool lowp, bool experts, double count, double m, double n,
                        double k, double out_bytes, double *gaps, double *ops) {
  if (experts) return wl__expert_gemm(hw, count, m, n, k, out_bytes, gaps, ops);
  *gaps = *ops = 1;
  return wl__gemm(hw, lowp, count, m, n, k, out_bytes);
}

/* torchtitan's selective op policy reruns one linear layer X[m x k] W[k x
 * n] that fabsim's forward fuses with others (K of the QKV GEMM, the up
 * projection of the gate and up GEMM): its forward GEMM, and under fp8 its
 * input's cast. */
static void op_rerun(const part_ctx *c, double m, double k, double n) {
  const wl__hw *hw = c->hw;
  double kx, x = wl__fp8_cast_bytes(hw, m * k, &kx);
  add(&c->o->rc[CFG_RCMOD_OP], wl__gemm(hw, true, 1, m, n, k, hw->act), hw, 1);
  if (x > 0) add(&c->o->rc[CFG_RCMOD_OP], wl__eltwise(hw, x), hw, kx);
}

/* `count` linear layers X[m x k] W[k x n] in one (grouped) kernel each:
 * forward, input gradient dY W^T (m x k out), weight gradient X^T dY (k x n
 * out); `lowp`: at the training precision (FP8 under fp8: X, W and dY cast
 * by the recipe's kernels), else in 16 bits. */
static void linear_of(const part_ctx *c, bool lowp, bool experts, double count, double m, double k,
                      double n) {
  const wl__hw *hw = c->hw;
  wl__part *o = c->o;
  double g, ops;
  wl__cost x = gemm_of(hw, lowp, experts, count, m, n, k, hw->act, &g, &ops);
  fwd_ops(c, x, g, ops, true);
  x = gemm_of(hw, lowp, experts, count, m, k, n, hw->act, &g, &ops);
  add_ops(&o->bin, x, hw, g, ops);
  x = gemm_of(hw, lowp, experts, count, k, n, m, hw->wgrad, &g, &ops);
  add_ops(&o->bw, x, hw, g, ops);
  if (!lowp || !hw->fp8) return;
  /* per-expert GEMMs take per-expert operands: each expert's tensors cast by
   * their own kernels */
  double each = experts && hw->ggemm_streams ? count : 1;
  double kx, kw, ky;
  double xb = wl__fp8_cast_bytes(hw, count * m * k, &kx);
  double w = wl__fp8_cast_bytes(hw, count * k * n, &kw) * c->wshare;
  double y = wl__fp8_cast_bytes(hw, count * m * n, &ky);
  fwd(c, wl__eltwise(hw, xb), kx * each, true); /* a rerun reuses the cast weights */
  fwd(c, wl__eltwise(hw, w), kw * each * c->wshare, false);
  add(&o->bin, wl__eltwise(hw, y), hw, ky * each);
}

static void linear(const part_ctx *c, bool lowp, double count, double m, double k, double n) {
  linear_of(c, lowp, false, count, m, k, n);
}

/* An element-wise operation moving `elems` activation elements forward;
 * its backward reads the output gradient and the saved input and writes
 * the input gradient: twice the bytes. One kernel each way. */
static void eltwise(const part_ctx *c, double elems) {
  const wl__hw *hw = c->hw;
  fwd(c, wl__eltwise(hw, elems * hw->act), 1, true);
  add(&c->o->bin, wl__eltwise(hw, 2 * elems * hw->act), hw, 1);
}

/* A data movement of the MoE layer (kernels_moe.c: router, permutations):
 * `bytes` in `kernels` kernels forward, the same backward. */
static void moe_moves(const part_ctx *c, double bytes, double kernels) {
  fwd(c, wl__eltwise(c->hw, bytes), kernels, true);
  add(&c->o->bin, wl__eltwise(c->hw, bytes), c->hw, kernels);
}

static double tokens_sp(const wl_parallel *p, double tokens) {
  return p->sp ? tokens / p->tp : tokens;
}

/* The residual add, read two and write one (Megatron-LM's fused bias,
 * dropout and add: with dropout it also writes the 1-byte mask, which its
 * backward reads). */
static void residual(const part_ctx *c, const wl_model *m, double elems) {
  eltwise(c, (3 + (m->dropout ? 1 / c->hw->act : 0)) * elems);
}

/* FlashAttention's core for `seqs` sequences of s tokens, hd wide heads,
 * `heads` query heads on this GPU, a wide in all (the rate is looked up
 * at head dimension hd), key/value heads r of the query heads:
 * QK^T and PV, 4 s^2 a per sequence, half of it under the
 * causal mask (masked blocks skipped); reads Q, K, V, writes O. Backward:
 * recomputes QK^T and computes dV, dP, dQ, dK: 2.5 x the FLOPs; reads Q, K,
 * V, O, dO, writes dQ, dK, dV. */
static void flash_core(const part_ctx *c, double seqs, double s, double heads, double a, double hd,
                       double r) {
  const wl__hw *hw = c->hw;
  double T = seqs * s, core = 4 * seqs * s * s * a / 2;
  double ef = hw->legacy ? 1 : wl__attn_eff(hw, seqs, s, heads, hd, false);
  double eb = hw->legacy ? 1 : wl__attn_eff(hw, seqs, s, heads, hd, true);
  double rf = hw->attn * hw->clock * ef, rb = hw->attn * hw->clock * eb;
  fwd(c, roof(core / rf, 2 * (1 + r) * T * a * hw->act / hw->hbm), 1, true);
  add(&c->o->bin, roof(2.5 * core / rb, 4 * (1 + r) * T * a * hw->act / hw->hbm), hw,
      ATTN_BWD_KERNELS);
}

/* Unfused attention (Megatron-LM's core attention without FlashAttention),
 * per query head a batched GEMM each: S = Q K^T (s x s, the whole square:
 * the causal mask is applied to it, not skipped), the fused scale, mask and
 * softmax (reads S, writes P), dropout on P when the model has it (writes
 * the dropped P and its 1-byte mask), O = P V. Backward: dV = P^T dO, dP =
 * dO V^T, dropout's and softmax's backward (read P and dP, write dS), dQ =
 * dS K, dK = dS^T Q; all 16-bit GEMMs, every s x s tensor through HBM. */
static void unfused_core(const part_ctx *c, const wl_model *m, double seqs, double s, double heads,
                         double hd) {
  const wl__hw *hw = c->hw;
  wl__part *o = c->o;
  double b = seqs * heads, sq = b * s * s, drop = m->dropout ? 1 : 0;
  fwd(c, wl__gemm(hw, false, b, s, s, hd, hw->act), 1, true);
  fwd(c, wl__eltwise(hw, 2 * sq * hw->act), 1, true);
  if (drop) fwd(c, wl__eltwise(hw, sq * (2 * hw->act + 1)), 1, true);
  fwd(c, wl__gemm(hw, false, b, s, hd, s, hw->act), 1, true);
  add(&o->bin, wl__gemm(hw, false, b, s, hd, s, hw->act), hw, 1); /* dV */
  add(&o->bin, wl__gemm(hw, false, b, s, s, hd, hw->act), hw, 1); /* dP */
  if (drop) add(&o->bin, wl__eltwise(hw, sq * (2 * hw->act + 1)), hw, 1);
  add(&o->bin, wl__eltwise(hw, 3 * sq * hw->act), hw, 1);         /* softmax */
  add(&o->bin, wl__gemm(hw, false, b, s, hd, s, hw->act), hw, 1); /* dQ */
  add(&o->bin, wl__gemm(hw, false, b, s, hd, s, hw->act), hw, 1); /* dK */
}

void wl__part_attention(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                        wl__part *o) {
  part_ctx c = ctx_of(hw, p, o);
  if (m->kind == WL_MODEL_MLP) return;
  double h = m->hidden, t = p->tp, T = tokens, Ts = tokens_sp(p, tokens);
  /* grouped-query attention: K and V are r = kv_heads / heads as wide as Q
   * (m->attention = (2 + 2r) h^2 x the params scale) */
  double r = m->kv_heads > 0 && m->heads > 0 ? (double)m->kv_heads / m->heads : 1;
  double a = m->attention / ((2 + 2 * r) * h) / t; /* query width per GPU (h / t unscaled) */
  double s = m->seq_len, seqs = T / s;
  double heads = (double)m->heads / t, hd = a / fmax(heads, 1);
  /* op (torchtitan): the matmuls in order Q K V O, gate, up, down (dense:
   * gate, down), the even-numbered ones and every element-wise operation
   * rerun; the attention core is kept */
  c.mods = RC(CFG_RCMOD_LAYERNORM) | RC(CFG_RCMOD_OP);
  eltwise(&c, 2 * Ts * h); /* norm: read x, write y */
  c.mods = 0;
  linear(&c, true, 1, T, h, (1 + 2 * r) * a);
  op_rerun(&c, T, h, r * a); /* K */
  c.mods = RC(CFG_RCMOD_OP);
  eltwise(&c, 2 * (1 + r) * T * a); /* rotary embedding of Q and K */
  c.mods = RC(CFG_RCMOD_CORE_ATTN);
  double hdim = m->head_dim ? (double)m->head_dim : (double)m->hidden / m->heads;
  if (p->flash) flash_core(&c, seqs, s, heads, a, hdim, r);
  else unfused_core(&c, m, seqs, s, heads, hd);
  c.mods = RC(CFG_RCMOD_OP);
  linear(&c, true, 1, T, a, h);
  residual(&c, m, Ts * h);
}

void wl__part_ffn(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                  uint32_t l, wl__part *o) {
  part_ctx c = ctx_of(hw, p, o);
  double t = p->tp, T = tokens, Ts = tokens_sp(p, tokens), h = m->hidden;
  if (m->kind == WL_MODEL_MLP) {
    double in = (double)m->widths[l], out = (double)m->widths[l + 1];
    linear(&c, true, 1, T, in, out);
    eltwise(&c, 2 * T * out); /* bias and activation */
    return;
  }
  double g = m->gated ? 2 : 1; /* up-projections (gate and up when gated) */
  c.mods = RC(CFG_RCMOD_LAYERNORM) | RC(CFG_RCMOD_OP);
  eltwise(&c, 2 * Ts * h);
  if (!wl_layer_is_moe(m, l)) {
    double f = m->ffn / ((g + 1) * h) / t;
    c.mods = RC(CFG_RCMOD_MLP);
    linear(&c, true, 1, T, h, g * f);
    if (m->gated) op_rerun(&c, T, h, f); /* up (w3) */
    c.mods = RC(CFG_RCMOD_MLP) | RC(CFG_RCMOD_OP);
    eltwise(&c, (g + 1) * T * f); /* activation (x gate): read g, write 1 */
    c.mods = RC(CFG_RCMOD_MLP) | (m->gated ? 0 : RC(CFG_RCMOD_OP));
    linear(&c, true, 1, T, f, h);
  } else {
    double k = m->top_k, E = m->experts, ep = p->ep, fe = m->expert / ((g + 1) * h) / t;
    /* local experts, one grouped GEMM for all of them; tokens each on the
     * busiest GPU (hot experts: the dispatch and combine wait for it) */
    double local = E / ep, load = hw->expert_load, te = T * k * ep / E * load;
    c.mods = 0;
    linear(&c, false, 1, T, h, m->router / h / t); /* the router stays in 16 bits */
    moe_moves(&c, wl__moe_router_bytes(Ts, E, hw->act), 1);
    double kp, pb = wl__moe_permute_bytes(Ts, k, h, hw->act, load, ep > 1 && local > 1, &kp);
    moe_moves(&c, pb, kp);
    linear_of(&c, true, true, local, te, h, g * fe);
    c.mods = RC(CFG_RCMOD_MOE_ACT);
    eltwise(&c, (g + 1) * T * k * load * fe);
    c.mods = 0;
    linear_of(&c, true, true, local, te, fe, h);
    if (m->shared_experts > 0) {
      double sh = m->shared_experts * fe;
      linear(&c, true, 1, T, h, g * sh);
      c.mods = RC(CFG_RCMOD_MOE_ACT);
      eltwise(&c, (g + 1) * T * sh);
      c.mods = 0;
      linear(&c, true, 1, T, sh, h);
    }
    eltwise(&c, (k + 1) * Ts * h); /* weighted sum of the experts' outputs */
  }
  c.mods = RC(CFG_RCMOD_OP);
  residual(&c, m, Ts * h);
}

void wl__part_head(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                   wl__part *o) {
  part_ctx c = ctx_of(hw, p, o);
  double t = p->tp, T = tokens, h = m->hidden, v = m->head / h / t;
  eltwise(&c, 2 * tokens_sp(p, tokens) * h); /* final norm */
  linear(&c, false, 1, T, h, v);             /* the output layer stays in 16 bits */
  wl__cost cf, cb;
  double kf, kb;
  wl__cross_entropy(hw, T * v, &cf, &kf, &cb, &kb);
  fwd(&c, cf, kf, false);
  add(&o->bin, cb, hw, kb);
}
