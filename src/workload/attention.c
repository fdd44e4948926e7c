/* The attention core's achieved share of the 16-bit peak, by sequence
 * length, head dimension and pass, from the FlashAttention papers' measured
 * TFLOP/s (docs/validation.md, "Compute"). fabsim's attention is causal
 * (its FLOPs are halved by the mask, as the papers count them).
 *
 *   H100, H800, H200: FlashAttention-3 (J. Shah et al., arXiv 2407.08608,
 *     Fig. 5 forward, Fig. 6 backward; BF16, batch x seqlen = 16k tokens,
 *     hidden 2048). The paper's backward is without the causal mask: the
 *     causal backward is the non-causal one times the forward's causal over
 *     non-causal ratio at the same point.
 *   A100: FlashAttention-2 (T. Dao, arXiv 2307.08691, Fig. 4, forward +
 *     backward, causal; the same setup): that figure for both passes (their
 *     sum is exact, the split between them is not).
 *   B200: FlashAttention-4's 1,605 TFLOP/s (71 % of 2,250; Together AI,
 *     2026) standing for FA-3's best forward point (hd 128, 16k); the H100
 *     curve's shape otherwise (not measured).
 *   MI300X: no published curve found: A100's scaled by the two GPUs' GEMM
 *     plateaus (an assumption).
 * Between the measured points: linear in log2(seqlen) and log2(head dim),
 * clamped at the ends. Each benchmark ran enough thread blocks for about
 * 0.97 of a full last wave; a training micro-batch with fewer heads per GPU
 * loses its own wave quantization against that.
 *
 * Pure; O(1).
 */
#include <math.h>

#include "workload/wl_internal.h"

enum { NS = 6, Q_TILE = 128 };
static const double SEQ_LOG2_MIN = 9; /* 512 .. 16384 */

/* FlashAttention-3 on H100 SXM5 (TFLOP/s), seqlen 512, 1k, 2k, 4k, 8k, 16k. */
static const double FA3_HD[3] = {64, 128, 256};
static const double FA3_FWD_CAUSAL[3][NS] = {
    {197, 265, 371, 420, 460, 473}, {292, 423, 521, 579, 602, 616}, {286, 427, 537, 612, 628, 642}};
static const double FA3_FWD[3][NS] = {
    {333, 392, 460, 476, 496, 497}, {467, 565, 625, 638, 646, 648}, {482, 639, 707, 736, 746, 756}};
/* backward, without the causal mask; head dim 64 and 128 (256: as 128) */
static const double FA3_BWD[2][NS] = {{272, 363, 422, 453, 472, 474},
                                      {316, 424, 501, 542, 559, 561}};
static const double H100_PEAK = 989; /* TFLOP/s, dense BF16 */

/* FlashAttention-2 on A100 SXM4, forward + backward, causal (TFLOP/s). */
static const double FA2_HD[2] = {64, 128};
static const double FA2_CAUSAL[2][NS] = {{88, 119, 140, 156, 165, 171},
                                         {99, 133, 155, 173, 182, 189}};
static const double A100_PEAK = 312; /* TFLOP/s */

/* FA-4 on B200 over FA-3's best forward point, hd 128 at 16k */
static const double B200_SCALE = (1605.0 / 2250) / (648.0 / 989);
/* MI300X: A100's curve scaled by the GEMM plateaus (gemm.c's caps) */
static const double MI300X_SCALE = 0.5112 / 0.8692;

void wl__attn_init(wl__hw *hw, const cfg_scenario *cfg) {
  switch (cfg->cluster.gpu) {
  case CFG_GPU_A100: hw->attn_fa2 = true, hw->attn_scale = 1; break;
  case CFG_GPU_MI300X: hw->attn_fa2 = true, hw->attn_scale = MI300X_SCALE; break;
  case CFG_GPU_B200: hw->attn_fa2 = false, hw->attn_scale = B200_SCALE; break;
  default: hw->attn_fa2 = false, hw->attn_scale = 1; break;
  }
}

/* The measured share of the peak at grid point (head dim row i, seqlen j). */
static double point(bool fa2, bool bwd, int i, int j) {
  if (fa2) return FA2_CAUSAL[i][j] / A100_PEAK;
  if (!bwd) return FA3_FWD_CAUSAL[i][j] / H100_PEAK;
  int b = i < 2 ? i : 1;
  return FA3_BWD[b][j] * (FA3_FWD_CAUSAL[i][j] / FA3_FWD[i][j]) / H100_PEAK;
}

/* Position of x in a sorted grid of n points, in log2: index and weight. */
static void locate(double lx, const double *lg, int n, int *i, double *w) {
  if (lx <= lg[0]) {
    *i = 0, *w = 0;
    return;
  }
  for (int k = 0; k < n - 1; k++)
    if (lx <= lg[k + 1]) {
      *i = k, *w = (lx - lg[k]) / (lg[k + 1] - lg[k]);
      return;
    }
  *i = n - 2, *w = 1;
}

double wl__attn_measured(const wl__hw *hw, double seq, double hd, bool bwd) {
  const double *grid = hw->attn_fa2 ? FA2_HD : FA3_HD;
  int n = hw->attn_fa2 ? 2 : 3, i, j;
  double lh[3] = {0, 0, 0}, ls[NS] = {0}, wi, wj;
  for (int k = 0; k < n; k++) lh[k] = log2(grid[k]);
  for (int k = 0; k < NS; k++) ls[k] = SEQ_LOG2_MIN + k;
  locate(log2(hd > 1 ? hd : 1), lh, n, &i, &wi);
  locate(log2(seq > 1 ? seq : 1), ls, NS, &j, &wj);
  bool f = hw->attn_fa2;
  double a = point(f, bwd, i, j) * (1 - wj) + point(f, bwd, i, j + 1) * wj;
  double b = point(f, bwd, i + 1, j) * (1 - wj) + point(f, bwd, i + 1, j + 1) * wj;
  return (a * (1 - wi) + b * wi) * hw->attn_scale;
}

/* The share of a full last wave that c thread blocks fill on S SMs. */
static double wave_fill(double c, double S) { return c / (ceil(c / S) * S); }

double wl__attn_eff(const wl__hw *hw, double seqs, double seq, double heads, double hd, bool bwd) {
  double e = wl__attn_measured(hw, seq, hd, bwd), S = hw->sms, q = ceil(seq / Q_TILE);
  /* the papers' runs: 16k tokens of hidden 2048 */
  double bench = (16384 / fmax(seq, Q_TILE)) * fmax(1, 2048 / hd) * q;
  double train = fmax(1, seqs) * fmax(1, ceil(heads)) * q;
  e *= wave_fill(train, S) / wave_fill(bench, S);
  return e < 1 ? e : 1;
}
