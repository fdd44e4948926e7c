/* The summary's "power" object (a run's and `fabsim reliability`'s): the
 * cluster's draw at a utilization, by component, and what a step and a run
 * cost in energy and money (pwr_summarize), with the racks a cap throttles. */
#include <math.h>
#include <string.h>

#include "output/out_internal.h"

json_t *out__power_json(const pwr_model *m, double u, double step_s, double run_s) {
  pwr_summary s;
  pwr_summarize(m, u, step_s, run_s, &s);
  json_t *o = json_object();
  json_object_set_new(o, "utilization", json_real(u));
  json_object_set_new(o, "it_kw", json_real(s.it_kw));
  json_object_set_new(o, "it_demand_kw", json_real(s.it_demand_kw));
  json_object_set_new(o, "facility_kw", json_real(s.facility_kw));
  json_object_set_new(o, "pue", json_real(m->pue));
  json_t *parts = json_object();
  json_object_set_new(parts, "gpus", json_real(s.gpu_kw));
  json_object_set_new(parts, "servers", json_real(s.server_kw));
  json_object_set_new(parts, "nics", json_real(s.nic_kw));
  json_object_set_new(parts, "switches", json_real(s.switch_kw));
  json_object_set_new(parts, "optics", json_real(s.optics_kw));
  json_object_set_new(o, "by_component_kw", parts);
  json_object_set_new(o, "step_s", json_real(step_s));
  json_object_set_new(o, "energy_kwh_per_step", json_real(s.energy_kwh_per_step));
  json_object_set_new(o, "cost_usd_per_step", json_real(s.cost_usd_per_step));
  json_object_set_new(o, "energy_mwh_per_run", json_real(s.energy_mwh_per_run));
  json_object_set_new(o, "cost_usd_per_run", json_real(s.cost_usd_per_run));
  json_object_set_new(o, "racks", json_integer(s.racks));
  json_object_set_new(o, "racks_throttled", json_integer(s.racks_throttled));
  json_object_set_new(o, "min_throttle", json_real(s.min_throttle));
  json_t *list = json_array();
  for (uint32_t r = 0; r < m->racks; r++) {
    double f = pwr_rack_throttle(m, r, u);
    if (f >= 1) continue;
    json_t *e = json_object();
    json_object_set_new(e, "rack", json_integer(r));
    json_object_set_new(e, "demand_kw", json_real(pwr_rack_demand_w(m, r, u) * 1e-3));
    json_object_set_new(e, "limit_kw", json_real(m->rack_limit_w[r] * 1e-3));
    json_object_set_new(e, "throttle", json_real(f));
    json_array_append_new(list, e);
  }
  json_object_set_new(o, "throttled_racks", list);
  return o;
}

/* ---- power over time (power.timeseries) ------------------------------------------ */

typedef struct rows_in {
  pwr_series_in in;
  double *buf; /* start, len, compute, waiting, step begin, step end */
  double lo[64], hi[64];
} rows_in;

enum { MAX_BANDS = 64 };

/* The telemetry's rows, the job's steps (job NULL: none) and power.bands (cfg NULL: none)
 * as pwr_over_time_of reads them; false when the GPUs' states were not sampled. */
static bool rows_of(const run_power *p, const tel *t, const cfg_scenario *cfg, const wl_job *job,
                    rows_in *r) {
  memset(r, 0, sizeof *r);
  if (!t || !(tel_observed(t) & TEL_OBS_GPU)) return false;
  size_t n = tel_rows(t), steps = job ? wl_job_steps_done(job) : 0;
  r->buf = sim_malloc((4 * n + 2 * steps + 1) * sizeof *r->buf);
  double *start = r->buf, *len = start + n, *compute = len + n, *waiting = compute + n;
  double *sb = waiting + n, *se = sb + steps;
  for (size_t i = 0; i < n; i++) {
    const double *frac = tel_gpu_row_at(t, i)->frac;
    start[i] = (double)tel_row_start(t, i) / 1e12;
    len[i] = (double)tel_row_length(t, i) / 1e12;
    compute[i] = frac[TEL_GPU_COMPUTE];
    waiting[i] = frac[TEL_GPU_NETWORK] + frac[TEL_GPU_BUBBLE];
  }
  for (size_t k = 0; k < steps; k++) {
    const wl_step *st = wl_job_step(job, (uint32_t)k);
    sb[k] = st->start_s, se[k] = st->start_s + st->time_s;
  }
  size_t nb = cfg ? cfg_power_bands(cfg, r->lo, r->hi, MAX_BANDS) : 0;
  if (nb > MAX_BANDS) nb = MAX_BANDS;
  r->in = (pwr_series_in){.rows = n,
                          .start_s = start,
                          .len_s = len,
                          .compute = compute,
                          .waiting = waiting,
                          .throttle_u = p->have_throttle_utilization ? p->throttle_utilization : -1,
                          .steps = steps,
                          .step_begin_s = sb,
                          .step_end_s = se,
                          .bands = nb,
                          .band_lo_hz = r->lo,
                          .band_hi_hz = r->hi};
  return true;
}

bool out__power_rows(const run_power *p, const tel *t, double *facility_kw, double *it_kw,
                     double *gpu_kw) {
  rows_in r;
  if (!rows_of(p, t, NULL, NULL, &r)) return false;
  pwr_over_time o;
  pwr_over_time_of(p->model, &r.in, facility_kw, it_kw, gpu_kw, &o, NULL);
  sim_free(r.buf);
  return true;
}

static json_t *real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *bands_json(const rows_in *r, const double *rms) {
  json_t *bands = json_array();
  for (size_t b = 0; b < r->in.bands; b++) {
    json_t *e = json_object();
    json_object_set_new(e, "lo_hz", json_real(r->lo[b]));
    json_object_set_new(e, "hi_hz", json_real(r->hi[b]));
    json_object_set_new(e, "rms_kw", real_or_null(rms[b]));
    json_array_append_new(bands, e);
  }
  return bands;
}

json_t *out__power_over_time_json(const run_power *p, const tel *t, const cfg_scenario *cfg,
                                  const wl_job *job) {
  rows_in r;
  if (!p->model || !rows_of(p, t, cfg, job, &r)) return json_null();
  double rms[MAX_BANDS];
  pwr_over_time o;
  pwr_over_time_of(p->model, &r.in, NULL, NULL, NULL, &o, rms);
  json_t *j = json_object();
  json_object_set_new(j, "rows", json_integer((json_int_t)r.in.rows));
  json_object_set_new(j, "interval_s", json_real((double)tel_interval(t) / 1e12));
  json_object_set_new(j, "peak_kw", json_real(o.peak_kw));
  json_object_set_new(j, "trough_kw", json_real(o.trough_kw));
  json_object_set_new(j, "mean_kw", json_real(o.mean_kw));
  json_object_set_new(j, "energy_kwh", json_real(o.energy_kwh));
  json_t *sw = json_object();
  json_object_set_new(sw, "mean_kw", real_or_null(o.swing_mean_kw));
  json_object_set_new(sw, "max_kw", real_or_null(o.swing_max_kw));
  json_object_set_new(sw, "steps_resolved", json_integer((json_int_t)o.steps_resolved));
  json_object_set_new(sw, "steps", json_integer((json_int_t)r.in.steps));
  json_object_set_new(j, "swing", sw);
  json_object_set_new(j, "ramp_kw_per_s", json_real(o.ramp_kw_per_s));
  json_t *sp = json_object();
  json_object_set_new(sp, "rows", json_integer((json_int_t)o.dft_rows));
  json_object_set_new(sp, "resolution_hz", json_real(o.resolution_hz));
  json_object_set_new(sp, "nyquist_hz", json_real(o.nyquist_hz));
  json_object_set_new(sp, "variance_kw2", json_real(o.variance_kw2));
  json_object_set_new(sp, "bands", bands_json(&r, rms));
  json_object_set_new(j, "spectrum", sp);
  sim_free(r.buf);
  return j;
}

/* ---- mitigations (power.mitigation.*) ------------------------------------------------ */

/* A mitigation's setting in words, e.g. "floor 60% of TDP". */
static const char *setting_of(const pwr_model *m, const pwr_mitigation_cfg *c, pwr_mit_kind k,
                              char *buf, size_t n) {
  char a[32], b[32], d[32];
  switch (k) {
  case PWR_MIT_FLOOR:
    snprintf(buf, n, "%s of TDP",
             sim_fmt(a, sizeof a, c->floor_w / m->gpu_tdp_w, SIM_UNIT_PERCENT));
    break;
  case PWR_MIT_PACING:
    snprintf(buf, n, "%s of TDP while waiting",
             sim_fmt(a, sizeof a, c->pacing_w / m->gpu_tdp_w, SIM_UNIT_PERCENT));
    break;
  case PWR_MIT_RAMP:
    snprintf(
        buf, n, "up %s/s, down %s/s per GPU",
        c->ramp_up_w_per_s > 0 ? sim_fmt(a, sizeof a, c->ramp_up_w_per_s, SIM_UNIT_WATTS) : "any W",
        c->ramp_down_w_per_s > 0 ? sim_fmt(b, sizeof b, c->ramp_down_w_per_s, SIM_UNIT_WATTS)
                                 : "any W");
    break;
  case PWR_MIT_BATTERY:
    snprintf(
        buf, n, "%s, %s per rack, %s round trip",
        sim_fmt(a, sizeof a, c->battery_kwh * 1e3, SIM_UNIT_WATTHOURS),
        c->battery_kw > 0 ? sim_fmt(b, sizeof b, c->battery_kw * 1e3, SIM_UNIT_WATTS) : "any W",
        sim_fmt(d, sizeof d, c->battery_efficiency, SIM_UNIT_PERCENT));
    break;
  case PWR_MIT_CAP:
    snprintf(buf, n, "%s at the facility",
             sim_fmt(a, sizeof a, c->facility_cap_kw * 1e3, SIM_UNIT_WATTS));
    break;
  default: snprintf(buf, n, "?");
  }
  return buf;
}

/* Each configured mitigation over the series: fn(k, its figures, the baseline's, the mean
 * step time) in pwr_mit_kind order; false when the series is not there or none is set. */
typedef struct mit_view {
  const pwr_model *m;
  pwr_mitigation_cfg c;
  pwr_over_time before;
  double step_s; /* mean step time (the run when no step) */
  size_t steps;
  rows_in r;
} mit_view;

static bool mit_open(const run_power *p, const tel *t, const cfg_scenario *cfg, const wl_job *job,
                     mit_view *v) {
  memset(v, 0, sizeof *v);
  if (!p->model || !cfg->power.timeseries) return false;
  pwr_mitigation_cfg_of(p->model, cfg, &v->c);
  bool any = false;
  for (int k = 0; k < PWR_MIT_N; k++) any |= pwr_mit_on(&v->c, (pwr_mit_kind)k);
  if (!any || !rows_of(p, t, cfg, job, &v->r)) return false;
  v->m = p->model;
  pwr_over_time_of(p->model, &v->r.in, NULL, NULL, NULL, &v->before, NULL);
  double sum = 0;
  for (size_t k = 0; k < v->r.in.steps; k++) sum += v->r.in.step_end_s[k] - v->r.in.step_begin_s[k];
  if (!v->r.in.steps)
    for (size_t i = 0; i < v->r.in.rows; i++) sum += v->r.in.len_s[i];
  v->steps = v->r.in.steps ? v->r.in.steps : 1;
  v->step_s = sum / (double)v->steps;
  return true;
}

static void before_after(json_t *o, const char *key, double b, double a) {
  json_t *e = json_object();
  json_object_set_new(e, "before", real_or_null(b));
  json_object_set_new(e, "after", real_or_null(a));
  json_object_set_new(o, key, e);
}

static json_t *mitigation_json(const mit_view *v, pwr_mit_kind k, const pwr_mitigated *x,
                               const double *rms) {
  char buf[160];
  json_t *o = json_object();
  json_object_set_new(o, "mitigation", json_string(pwr_mit_name(k)));
  json_object_set_new(o, "setting", json_string(setting_of(v->m, &v->c, k, buf, sizeof buf)));
  before_after(o, "swing_mean_kw", v->before.swing_mean_kw, x->after.swing_mean_kw);
  before_after(o, "swing_max_kw", v->before.swing_max_kw, x->after.swing_max_kw);
  before_after(o, "peak_kw", v->before.peak_kw, x->after.peak_kw);
  before_after(o, "trough_kw", v->before.trough_kw, x->after.trough_kw);
  before_after(o, "ramp_kw_per_s", v->before.ramp_kw_per_s, x->after.ramp_kw_per_s);
  before_after(o, "energy_kwh", v->before.energy_kwh, x->energy_kwh);
  json_object_set_new(o, "energy_added_kwh", json_real(x->energy_added_kwh));
  json_object_set_new(o, "energy_added_fraction",
                      real_or_null(x->energy_added_kwh / v->before.energy_kwh));
  before_after(o, "step_time_s", v->step_s, v->step_s + x->time_cost_s / (double)v->steps);
  json_object_set_new(o, "step_time_cost_fraction",
                      real_or_null(x->time_cost_s / (double)v->steps / v->step_s));
  json_object_set_new(o, "run_time_cost_s", json_real(x->time_cost_s));
  if (k == PWR_MIT_RAMP || k == PWR_MIT_CAP) {
    json_object_set_new(o, "min_throttle", json_real(x->min_throttle));
    json_object_set_new(o, "limit_met", json_boolean(x->cap_met));
  }
  if (k == PWR_MIT_BATTERY) {
    json_t *b = json_object();
    json_object_set_new(b, "capacity_kwh", json_real(x->capacity_kwh));
    json_object_set_new(b, "charged_kwh", json_real(x->charged_kwh));
    json_object_set_new(b, "discharged_kwh", json_real(x->discharged_kwh));
    json_object_set_new(b, "losses_kwh", json_real(x->losses_kwh));
    json_object_set_new(b, "soc_min_kwh", json_real(x->soc_min_kwh));
    json_object_set_new(b, "soc_end_kwh", json_real(x->soc_end_kwh));
    json_object_set_new(o, "battery", b);
  }
  if (v->r.in.bands) json_object_set_new(o, "bands", bands_json(&v->r, rms));
  return o;
}

void out__power_mitigations_add(json_t *power, const run_power *p, const tel *t,
                                const cfg_scenario *cfg, const wl_job *job) {
  mit_view v;
  if (!mit_open(p, t, cfg, job, &v)) return;
  json_t *list = json_array();
  for (int k = 0; k < PWR_MIT_N; k++) {
    if (!pwr_mit_on(&v.c, (pwr_mit_kind)k)) continue;
    pwr_mitigated x;
    double rms[MAX_BANDS];
    pwr_mitigate(v.m, &v.r.in, &v.c, (pwr_mit_kind)k, NULL, &x, rms);
    json_array_append_new(list, mitigation_json(&v, (pwr_mit_kind)k, &x, rms));
  }
  json_object_set_new(power, "mitigations", list);
  sim_free(v.r.buf);
}

void out__power_mitigations_print(const run_power *p, const tel *t, const cfg_scenario *cfg,
                                  const wl_job *job) {
  mit_view v;
  if (!mit_open(p, t, cfg, job, &v)) return;
  for (int k = 0; k < PWR_MIT_N; k++) {
    if (!pwr_mit_on(&v.c, (pwr_mit_kind)k)) continue;
    pwr_mitigated x;
    pwr_mitigate(v.m, &v.r.in, &v.c, (pwr_mit_kind)k, NULL, &x, NULL);
    char s[160], a[32], b[32], c[32], d[32], e[32], f[32], g[32];
    printf(
        "mitigation   %s %s: swing %s -> %s, peak %s -> %s, energy %s%s (%s%s), step time "
        "+%s\n",
        pwr_mit_name((pwr_mit_kind)k), setting_of(v.m, &v.c, (pwr_mit_kind)k, s, sizeof s),
        sim_fmt(a, sizeof a, v.before.swing_max_kw * 1e3, SIM_UNIT_WATTS),
        sim_fmt(b, sizeof b, x.after.swing_max_kw * 1e3, SIM_UNIT_WATTS),
        sim_fmt(c, sizeof c, v.before.peak_kw * 1e3, SIM_UNIT_WATTS),
        sim_fmt(d, sizeof d, x.after.peak_kw * 1e3, SIM_UNIT_WATTS),
        x.energy_added_kwh < 0 ? "" : "+",
        sim_fmt(e, sizeof e, x.energy_added_kwh * 1e3, SIM_UNIT_WATTHOURS),
        x.energy_added_kwh < 0 ? "" : "+",
        sim_fmt(f, sizeof f, x.energy_added_kwh / v.before.energy_kwh, SIM_UNIT_PERCENT),
        sim_fmt(g, sizeof g, x.time_cost_s / (double)v.steps / v.step_s, SIM_UNIT_PERCENT));
  }
  sim_free(v.r.buf);
}
