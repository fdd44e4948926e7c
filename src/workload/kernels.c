/* One GPU's kernels for the serving model (fabsim/wl_kernels.h): the
 * training step's roofline (wl__hw, wl__gemm, wl__attn_eff, wl__eltwise)
 * behind a handle, so src/infer composes them and never times a kernel
 * itself. Pure after wl_kernels_new; O(1) per call. */
#include <math.h>

#include "fabsim/wl_kernels.h"
#include "workload/wl_internal.h"

struct wl_kernels {
  wl__hw hw;
};

wl_kernels *wl_kernels_new(const cfg_scenario *cfg) {
  wl_kernels *k = sim_calloc(1, sizeof *k);
  wl__hw_init(&k->hw, cfg);
  return k;
}

void wl_kernels_free(wl_kernels *k) { sim_free(k); }

static double cost_s(wl__cost c, bool *mem_bound) {
  if (mem_bound) *mem_bound = c.mem > 0;
  return c.t;
}

double wl_kernels_gemm_s(const wl_kernels *k, bool lowp, double b, double m, double n, double kk,
                         bool *mem_bound) {
  return cost_s(wl__gemm(&k->hw, lowp, b, m, n, kk, k->hw.act), mem_bound);
}

double wl_kernels_attention_s(const wl_kernels *k, double seqs, double q_tokens, double pairs,
                              double kv_tokens, double ctx, double heads, double kv_heads,
                              double hd, double kv_bytes, bool *mem_bound) {
  const wl__hw *hw = &k->hw;
  if (mem_bound) *mem_bound = false;
  if (!(q_tokens > 0 && heads > 0 && hd > 0)) return 0;
  double flops = 4 * pairs * heads * hd;
  double eff = hw->legacy ? 1 : wl__attn_eff(hw, seqs, fmax(ctx, 1), heads, hd, false);
  double t_flops = flops / (hw->attn * hw->clock * eff);
  double bytes = 2 * q_tokens * heads * hd * hw->act + 2 * kv_tokens * kv_heads * hd * kv_bytes;
  double t_bytes = bytes / hw->hbm;
  if (mem_bound) *mem_bound = t_bytes > t_flops;
  return fmax(t_flops, t_bytes);
}

double wl_kernels_eltwise_s(const wl_kernels *k, double bytes) {
  return wl__eltwise(&k->hw, bytes).t;
}

double wl_kernels_gap_s(const wl_kernels *k) { return k->hw.gap; }
double wl_kernels_act_bytes(const wl_kernels *k) { return k->hw.act; }
double wl_kernels_hbm(const wl_kernels *k) { return k->hw.hbm; }
