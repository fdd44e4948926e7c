/* Power over time: a sampled run's rows at the power model's figures, the
 * swing per step, the ramp rate and the spectrum's energy in bands
 * (include/fabsim/power.h). A direct DFT of the bins in the bands, not an FFT:
 * the bands a grid limits span few bins of a run's spectrum, an FFT would
 * compute all of them, and the sums are exact to rounding for any row count. */
#include <math.h>
#include <string.h>

#include "power/pwr_internal.h"

static const double two_pi = 6.283185307179586476925286766559;

double pwr_band_power(const double *x, size_t n, double dt, double lo, double hi, size_t *bins) {
  *bins = 0;
  if (n < 2 || !(dt > 0)) return 0;
  double mean = 0;
  for (size_t i = 0; i < n; i++) mean += x[i];
  mean /= (double)n;
  double span = (double)n * dt, sum = 0;
  size_t kmin = lo > 0 ? (size_t)ceil(lo * span) : 1, kmax = n / 2;
  if (kmin < 1) kmin = 1;
  for (size_t k = kmin; k <= kmax; k++) {
    double f = (double)k / span;
    if (f < lo) continue; /* rounding of ceil */
    if (f >= hi) break;
    double re = 0, im = 0;
    for (size_t i = 0; i < n; i++) {
      /* the angle 2 pi k i / n reduced exactly in integers first */
      double a = two_pi * (double)((k * i) % n) / (double)n;
      re += (x[i] - mean) * cos(a);
      im -= (x[i] - mean) * sin(a);
    }
    double p = (re * re + im * im) / ((double)n * (double)n);
    sum += 2 * k == n ? p : 2 * p; /* one-sided: k and n - k, but Nyquist is one bin */
    ++*bins;
  }
  return sum;
}

/* Peak - trough of rows [a, b). */
static double swing_of(const double *kw, size_t a, size_t b) {
  double hi = kw[a], lo = kw[a];
  for (size_t i = a + 1; i < b; i++) {
    if (kw[i] > hi) hi = kw[i];
    if (kw[i] < lo) lo = kw[i];
  }
  return hi - lo;
}

static void swings(const pwr_series_in *in, const double *kw, pwr_over_time *o) {
  size_t steps = in->steps ? in->steps : 1, i = 0;
  double sum = 0;
  o->swing_max_kw = 0;
  for (size_t s = 0; s < steps; s++) {
    double b = in->steps ? in->step_begin_s[s] : -INFINITY;
    double e = in->steps ? in->step_end_s[s] : INFINITY;
    while (i < in->rows && in->start_s[i] + in->len_s[i] / 2 < b) i++;
    size_t first = i;
    while (i < in->rows && in->start_s[i] + in->len_s[i] / 2 < e) i++;
    if (i - first < 2) continue;
    double w = swing_of(kw, first, i);
    sum += w;
    if (w > o->swing_max_kw) o->swing_max_kw = w;
    o->steps_resolved++;
  }
  o->swing_mean_kw = o->steps_resolved ? sum / (double)o->steps_resolved : NAN;
  if (!o->steps_resolved) o->swing_max_kw = NAN;
}

void pwr__gpu_watts(const pwr_model *m, double u, double *idle, double *dynamic) {
  *idle = 0, *dynamic = 0;
  for (uint32_t r = 0; r < m->racks; r++) {
    double g = (double)pwr_rack_nodes(m, r) * m->gpus_per_node;
    double f = u < 0 ? 1 : pwr_rack_throttle(m, r, u);
    *idle += g * m->gpu_idle_w;
    *dynamic += g * (m->gpu_tdp_w - m->gpu_idle_w) * f * f * f;
  }
}

double pwr__rest_kw(const pwr_model *m) {
  pwr_summary s; /* the rest of IT: constant */
  pwr_summarize(m, 0, 0, 0, &s);
  return s.server_kw + s.nic_kw + s.switch_kw + s.optics_kw;
}

void pwr__figures(const pwr_series_in *in, const double *kw, pwr_over_time *out,
                  double *band_rms_kw) {
  memset(out, 0, sizeof *out);
  size_t n = in->rows;
  double t = 0;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || kw[i] > out->peak_kw) out->peak_kw = kw[i];
    if (i == 0 || kw[i] < out->trough_kw) out->trough_kw = kw[i];
    out->energy_kwh += kw[i] * in->len_s[i] / 3600.0;
    t += in->len_s[i];
    if (i > 0) {
      double r = fabs(kw[i] - kw[i - 1]) / ((in->len_s[i] + in->len_s[i - 1]) / 2);
      if (r > out->ramp_kw_per_s) out->ramp_kw_per_s = r;
    }
  }
  out->mean_kw = t > 0 ? out->energy_kwh * 3600.0 / t : 0;
  swings(in, kw, out);
  /* the spectrum: rows of the full interval (the first row's length) */
  size_t d = n;
  if (d > 1 && in->len_s[d - 1] < in->len_s[0]) d--;
  out->dft_rows = d;
  double dt = n ? in->len_s[0] : 0;
  if (d >= 2 && dt > 0) {
    out->resolution_hz = 1 / ((double)d * dt);
    out->nyquist_hz = 1 / (2 * dt);
    double mean = 0, var = 0; /* Parseval: the sum over every bin, without the DFT */
    for (size_t i = 0; i < d; i++) mean += kw[i];
    mean /= (double)d;
    for (size_t i = 0; i < d; i++) var += (kw[i] - mean) * (kw[i] - mean);
    out->variance_kw2 = var / (double)d;
  }
  for (size_t b = 0; b < in->bands && band_rms_kw; b++) {
    size_t bins = 0;
    double p = d >= 2 && dt > 0
                   ? pwr_band_power(kw, d, dt, in->band_lo_hz[b], in->band_hi_hz[b], &bins)
                   : 0;
    band_rms_kw[b] = bins ? sqrt(p) : NAN;
  }
}

void pwr_over_time_of(const pwr_model *m, const pwr_series_in *in, double *facility_kw,
                      double *it_kw, double *gpu_kw, pwr_over_time *out, double *band_rms_kw) {
  size_t n = in->rows;
  double *kw = sim_malloc((n ? n : 1) * sizeof *kw), idle_w, dynamic_w;
  pwr__gpu_watts(m, in->throttle_u, &idle_w, &dynamic_w);
  double rest_kw = pwr__rest_kw(m);
  for (size_t i = 0; i < n; i++) {
    double g = pwr__row_gpu_w(in, i, idle_w, dynamic_w) * 1e-3, it = g + rest_kw;
    kw[i] = it * m->pue;
    if (facility_kw) facility_kw[i] = kw[i];
    if (it_kw) it_kw[i] = it;
    if (gpu_kw) gpu_kw[i] = g;
  }
  pwr__figures(in, kw, out, band_rms_kw);
  sim_free(kw);
}
