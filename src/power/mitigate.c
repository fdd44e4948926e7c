/* Mitigations of the power swing, each read alone over the power series
 * (include/fabsim/power.h has the formulas; docs/power.md their sources). A
 * mitigation leaves every row it does not act on at the series' own figure,
 * to the bit, so one that does nothing changes nothing. */
#include <math.h>
#include <string.h>

#include "power/pwr_internal.h"

static const char *const names[PWR_MIT_N] = {"floor", "pacing", "ramp", "battery", "cap"};

const char *pwr_mit_name(pwr_mit_kind k) { return (unsigned)k < PWR_MIT_N ? names[k] : "?"; }

bool pwr_mit_on(const pwr_mitigation_cfg *c, pwr_mit_kind k) {
  switch (k) {
  case PWR_MIT_FLOOR: return c->floor_w > 0;
  case PWR_MIT_PACING: return c->pacing_w > 0;
  case PWR_MIT_RAMP: return c->ramp_up_w_per_s > 0 || c->ramp_down_w_per_s > 0;
  case PWR_MIT_BATTERY: return c->battery_kwh > 0;
  case PWR_MIT_CAP: return c->facility_cap_kw > 0;
  default: return false;
  }
}

void pwr_mitigation_cfg_of(const pwr_model *m, const cfg_scenario *cfg, pwr_mitigation_cfg *out) {
  const __typeof__(cfg->power.mitigation) *p = &cfg->power.mitigation;
  *out = (pwr_mitigation_cfg){.floor_w = p->floor * m->gpu_tdp_w,
                              .pacing_w = p->pacing * m->gpu_tdp_w,
                              .ramp_up_w_per_s = p->ramp_up_w_per_s,
                              .ramp_down_w_per_s = p->ramp_down_w_per_s,
                              .facility_cap_kw = p->facility_cap_kw,
                              .battery_kwh = p->battery.kwh,
                              .battery_kw = p->battery.kw,
                              .battery_efficiency = p->battery.efficiency};
}

typedef struct ctx {
  const pwr_model *m;
  const pwr_series_in *in;
  double idle, dyn, rest_kw, gpus; /* cluster GPU watts idle and at full compute less idle */
  pwr_mitigated *out;
} ctx;

static double facility_of(const ctx *x, double gpu_w) {
  return (gpu_w * 1e-3 + x->rest_kw) * x->m->pue;
}

/* Row i held to s GPU watts below its demand: its compute runs at f and takes c len / f;
 * adds the row's stretched energy and time to *out and returns the GPU watts it draws
 * (above s when even PWR_MIN_THROTTLE or idle does not fit). */
static double clip_row(const ctx *x, size_t i, double s) {
  double c = x->in->compute[i], len = x->in->len_s[i];
  double f = c > 0 && x->dyn > 0 ? cbrt(fmax(0, s - x->idle) / (c * x->dyn)) : 1;
  if (f > 1) f = 1;
  if (f < PWR_MIN_THROTTLE) f = PWR_MIN_THROTTLE;
  double w = x->idle + c * x->dyn * f * f * f;
  if (w > s * (1 + 1e-12)) x->out->cap_met = false;
  double extra = c * len * (1 / f - 1);
  x->out->time_cost_s += extra;
  x->out->energy_kwh +=
      x->m->pue * ((x->idle + x->rest_kw * 1e3) * (len + extra) + c * x->dyn * f * f * len) / 3.6e6;
  if (f < x->out->min_throttle) x->out->min_throttle = f;
  return w;
}

/* Row i drawing w GPU watts over its own length. */
static double plain_row(const ctx *x, size_t i, double w) {
  double kw = facility_of(x, w);
  x->out->energy_kwh += kw * x->in->len_s[i] / 3600.0;
  return kw;
}

static void floor_or_pacing(const ctx *x, const pwr_mitigation_cfg *c, pwr_mit_kind k, double *kw) {
  for (size_t i = 0; i < x->in->rows; i++) {
    double g = pwr__row_gpu_w(x->in, i, x->idle, x->dyn), w = g;
    if (k == PWR_MIT_FLOOR) {
      double floor = x->gpus * c->floor_w, lo = fmax(x->idle, floor);
      double hi = fmax(x->idle + x->dyn, floor); /* lo + c (hi - lo): exactly lo when hi = lo */
      if (floor > x->idle) w = lo + x->in->compute[i] * (hi - lo);
    } else if (x->in->waiting && c->pacing_w > x->m->gpu_idle_w) {
      w = g + x->in->waiting[i] * x->gpus * (c->pacing_w - x->m->gpu_idle_w);
    }
    kw[i] = plain_row(x, i, w);
  }
}

static void ramp(const ctx *x, const pwr_mitigation_cfg *c, double *kw) {
  double prev = 0;
  for (size_t i = 0; i < x->in->rows; i++) {
    double g = pwr__row_gpu_w(x->in, i, x->idle, x->dyn), s = g;
    if (i > 0) {
      double dt = (x->in->len_s[i] + x->in->len_s[i - 1]) / 2;
      if (c->ramp_up_w_per_s > 0) s = fmin(s, prev + x->gpus * c->ramp_up_w_per_s * dt);
      if (c->ramp_down_w_per_s > 0) s = fmax(s, prev - x->gpus * c->ramp_down_w_per_s * dt);
    }
    if (s < g) {
      prev = clip_row(x, i, s);
      kw[i] = facility_of(x, prev);
    } else {
      kw[i] = plain_row(x, i, s); /* held up: the GPUs burn the difference */
      prev = s;
    }
  }
}

static void cap(const ctx *x, const pwr_mitigation_cfg *c, double *kw) {
  double limit = (c->facility_cap_kw / x->m->pue - x->rest_kw) * 1e3; /* GPU watts */
  for (size_t i = 0; i < x->in->rows; i++) {
    double g = pwr__row_gpu_w(x->in, i, x->idle, x->dyn);
    kw[i] = g > limit ? facility_of(x, clip_row(x, i, limit)) : plain_row(x, i, g);
  }
}

/* Peak shaving on IT power toward its mean over the run. */
static void battery(const ctx *x, const pwr_mitigation_cfg *c, double *kw) {
  pwr_mitigated *o = x->out;
  double e = (double)x->m->racks * c->battery_kwh;
  double pmax = c->battery_kw > 0 ? (double)x->m->racks * c->battery_kw : INFINITY;
  double eta = c->battery_efficiency, soc = e, t = 0, mean = 0;
  for (size_t i = 0; i < x->in->rows; i++) {
    mean += (pwr__row_gpu_w(x->in, i, x->idle, x->dyn) * 1e-3 + x->rest_kw) * x->in->len_s[i];
    t += x->in->len_s[i];
  }
  mean = t > 0 ? mean / t : 0;
  o->capacity_kwh = o->soc_min_kwh = e;
  for (size_t i = 0; i < x->in->rows; i++) {
    double it = pwr__row_gpu_w(x->in, i, x->idle, x->dyn) * 1e-3 + x->rest_kw;
    double len = x->in->len_s[i], grid = it;
    if (it > mean && len > 0) {
      double d = fmin(fmin(it - mean, pmax), soc * 3600.0 / len);
      soc = fmax(0, soc - d * len / 3600.0);
      o->discharged_kwh += d * len / 3600.0;
      grid = it - d;
    } else if (it < mean && len > 0 && eta > 0) {
      double ch = fmin(fmin(mean - it, pmax), (e - soc) * 3600.0 / (eta * len));
      soc = fmin(e, soc + eta * ch * len / 3600.0);
      o->charged_kwh += ch * len / 3600.0;
      grid = it + ch;
    }
    if (soc < o->soc_min_kwh) o->soc_min_kwh = soc;
    kw[i] = grid * x->m->pue;
    o->energy_kwh += kw[i] * len / 3600.0;
  }
  o->soc_end_kwh = soc;
  o->losses_kwh = (1 - eta) * o->charged_kwh;
  /* what the battery lent the run is bought back at eta: its cost in energy */
  if (e > soc && eta > 0) o->energy_kwh += (e - soc) / eta * x->m->pue;
}

void pwr_mitigate(const pwr_model *m, const pwr_series_in *in, const pwr_mitigation_cfg *c,
                  pwr_mit_kind k, double *facility_kw, pwr_mitigated *out, double *band_rms_kw) {
  memset(out, 0, sizeof *out);
  out->min_throttle = 1;
  out->cap_met = true;
  size_t n = in->rows;
  double *kw = sim_malloc((n ? n : 1) * sizeof *kw);
  ctx x = {.m = m, .in = in, .out = out, .rest_kw = pwr__rest_kw(m)};
  x.gpus = (double)m->nodes * m->gpus_per_node;
  pwr__gpu_watts(m, in->throttle_u, &x.idle, &x.dyn);
  switch (k) {
  case PWR_MIT_FLOOR:
  case PWR_MIT_PACING: floor_or_pacing(&x, c, k, kw); break;
  case PWR_MIT_RAMP: ramp(&x, c, kw); break;
  case PWR_MIT_CAP: cap(&x, c, kw); break;
  case PWR_MIT_BATTERY: battery(&x, c, kw); break;
  default: floor_or_pacing(&x, &(pwr_mitigation_cfg){0}, PWR_MIT_FLOOR, kw); break;
  }
  double before = 0;
  for (size_t i = 0; i < n; i++)
    before += facility_of(&x, pwr__row_gpu_w(in, i, x.idle, x.dyn)) * in->len_s[i] / 3600.0;
  out->energy_added_kwh = out->energy_kwh - before;
  pwr__figures(in, kw, &out->after, band_rms_kw);
  if (facility_kw) memcpy(facility_kw, kw, n * sizeof *kw);
  sim_free(kw);
}
