/* The compute that recomputation adds to a backward pass: the forward of
 * what was not kept (memory.c says what is kept). Megatron-LM's names:
 *   full (--recompute-granularity full): the whole layer's forward, for
 *     every layer (uniform) or the first N of each chunk (block);
 *   selective (--recompute-modules): core_attn the attention core's
 *     forward; layernorm both norms; mlp a dense feed-forward's up GEMM,
 *     activation and down GEMM; moe_act the experts' (and shared experts')
 *     activation function.
 * The output layer is never recomputed. Each operation is costed as
 * roofline.c costs it in the forward pass (the shapes below mirror its
 * wl__part_attention and wl__part_ffn: keep them in step, or let the
 * kernel model return these costs per operation). O(1) per layer.
 */
#include <math.h>

#include "workload/wl_internal.h"

static void add(wl__cost *a, wl__cost b) {
  a->t += b.t;
  a->mem += b.mem;
}

bool wl__layer_recomputed(const wl_parallel *p, uint32_t first, uint32_t l) {
  if (p->recompute != CFG_RECOMPUTE_FULL) return false;
  return p->rc_method == CFG_RECOMPUTE_UNIFORM || l - first < p->rc_layers;
}

static bool module(const wl_parallel *p, cfg_recompute_module k) {
  return p->recompute == CFG_RECOMPUTE_SELECTIVE && (p->rc_modules >> k & 1u);
}

void wl__recompute_cost(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                        uint32_t first, uint32_t l, const wl__part *attn, const wl__part *ffn,
                        wl__cost *ra, wl__cost *rf) {
  *ra = *rf = (wl__cost){0, 0};
  if (wl__layer_recomputed(p, first, l)) {
    *ra = attn->fwd;
    *rf = ffn->fwd;
    return;
  }
  if (p->recompute != CFG_RECOMPUTE_SELECTIVE || m->kind == WL_MODEL_MLP) return;
  double h = m->hidden, t = p->tp, T = tokens, Ts = p->sp ? tokens / t : tokens;
  double g = m->gated ? 2 : 1, act = hw->act;
  if (module(p, CFG_RCMOD_CORE_ATTN)) { /* as roofline.c's attention core, causal */
    double a = m->attention / (4 * h) / t, s = m->seq_len;
    double flops = 4 * (T / s) * s * s * a / 2, bytes = 4 * T * a * act / hw->hbm;
    double tf = flops / hw->attn;
    add(ra, bytes > tf ? (wl__cost){bytes, bytes} : (wl__cost){tf, 0});
  }
  if (module(p, CFG_RCMOD_LAYERNORM)) {
    add(ra, wl__eltwise(hw, 2 * Ts * h * act));
    add(rf, wl__eltwise(hw, 2 * Ts * h * act));
  }
  if (!wl_layer_is_moe(m, l)) {
    if (module(p, CFG_RCMOD_MLP)) {
      double f = m->ffn / ((g + 1) * h) / t;
      add(rf, wl__gemm(hw, T, g * f, h, act));
      add(rf, wl__eltwise(hw, (g + 1) * T * f * act));
      add(rf, wl__gemm(hw, T, h, f, act));
    }
  } else if (module(p, CFG_RCMOD_MOE_ACT)) {
    double fe = m->expert / ((g + 1) * h) / t, k = m->top_k;
    add(rf, wl__eltwise(hw, (g + 1) * T * k * hw->expert_load * fe * act));
    if (m->shared_experts > 0) add(rf, wl__eltwise(hw, (g + 1) * T * m->shared_experts * fe * act));
  }
}
