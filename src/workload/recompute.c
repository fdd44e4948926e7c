/* The compute that recomputation adds to a backward pass: the forward of
 * what was not kept (memory.c says what is kept). Megatron-LM's names:
 *   full (--recompute-granularity full): the whole layer's forward, for
 *     every layer (uniform) or the first N of each chunk (block);
 *   selective (--recompute-modules): core_attn the attention core's
 *     forward (FlashAttention's kernel, or unfused attention's score GEMM,
 *     softmax, dropout and value GEMM); layernorm both norms; mlp a dense
 *     feed-forward's up GEMM, activation and down GEMM; moe_act the
 *     experts' (and shared experts') activation function;
 *   op (torchtitan's selective op checkpointing, selective_ac_option =
 *     'op': pytorch/torchtitan torchtitan/parallelisms/parallelize_llama.py
 *     at 1ea476e9f saves the outputs of SDPA and of every odd-numbered
 *     aten.mm and reruns every other operation): the K, output and (gated)
 *     up projections' GEMMs (a plain feed-forward's down projection), the
 *     norms, rotary embedding, activation and residual adds.
 * The output layer is never recomputed. Each operation costs what its
 * kernels cost in the forward pass: roofline.c tags them by module
 * (wl__part.rc), so the kernel model's GEMM and attention times, launch
 * gaps and FP8 activation casts apply alike. O(1) per layer.
 */
#include "workload/wl_internal.h"

static void add(wl__cost *a, wl__cost b) {
  a->t += b.t;
  a->mem += b.mem;
}

bool wl__layer_recomputed(const wl_parallel *p, uint32_t first, uint32_t l) {
  if (p->recompute != CFG_RECOMPUTE_FULL) return false;
  return p->rc_method == CFG_RECOMPUTE_UNIFORM || l - first < p->rc_layers;
}

void wl__recompute_cost(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                        uint32_t first, uint32_t l, const wl__part *attn, const wl__part *ffn,
                        wl__cost *ra, wl__cost *rf) {
  (void)hw, (void)tokens;
  *ra = *rf = (wl__cost){0, 0, 0};
  if (wl__layer_recomputed(p, first, l)) {
    *ra = attn->fwd;
    *rf = ffn->fwd;
    return;
  }
  if (p->recompute != CFG_RECOMPUTE_SELECTIVE || m->kind == WL_MODEL_MLP) return;
  for (int k = 0; k < CFG_RCMOD_COUNT; k++) {
    if (!(p->rc_modules >> k & 1u)) continue;
    add(ra, attn->rc[k]);
    add(rf, ffn->rc[k]);
  }
}
