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
  double *buf; /* start, len, compute, step begin, step end */
} rows_in;

/* The telemetry's rows and steps as pwr_over_time_of reads them; false when
 * the GPUs' states were not sampled. */
static bool rows_of(const run_power *p, const tel *t, rows_in *r) {
  memset(r, 0, sizeof *r);
  if (!t || !(tel_observed(t) & TEL_OBS_GPU)) return false;
  size_t n = tel_rows(t);
  r->buf = sim_malloc((3 * n + 1) * sizeof *r->buf);
  double *start = r->buf, *len = start + n, *compute = len + n;
  for (size_t i = 0; i < n; i++) {
    start[i] = (double)tel_row_start(t, i) / 1e12;
    len[i] = (double)tel_row_length(t, i) / 1e12;
    compute[i] = tel_gpu_row_at(t, i)->frac[TEL_GPU_COMPUTE];
  }
  r->in =
      (pwr_series_in){.rows = n,
                      .start_s = start,
                      .len_s = len,
                      .compute = compute,
                      .throttle_u = p->have_throttle_utilization ? p->throttle_utilization : -1};
  return true;
}

bool out__power_rows(const run_power *p, const tel *t, double *facility_kw, double *it_kw,
                     double *gpu_kw) {
  rows_in r;
  if (!rows_of(p, t, &r)) return false;
  pwr_over_time o;
  pwr_over_time_of(p->model, &r.in, facility_kw, it_kw, gpu_kw, &o, NULL);
  sim_free(r.buf);
  return true;
}

static json_t *real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

enum { MAX_BANDS = 64 };

json_t *out__power_over_time_json(const run_power *p, const tel *t, const cfg_scenario *cfg,
                                  const wl_job *job) {
  rows_in r;
  if (!p->model || !rows_of(p, t, &r)) return json_null();
  size_t steps = job ? wl_job_steps_done(job) : 0;
  double *sb = sim_malloc((2 * steps + 1) * sizeof *sb), *se = sb + steps;
  for (size_t k = 0; k < steps; k++) {
    const wl_step *st = wl_job_step(job, (uint32_t)k);
    sb[k] = st->start_s, se[k] = st->start_s + st->time_s;
  }
  r.in.steps = steps, r.in.step_begin_s = sb, r.in.step_end_s = se;
  double lo[MAX_BANDS], hi[MAX_BANDS], rms[MAX_BANDS];
  size_t nb = cfg_power_bands(cfg, lo, hi, MAX_BANDS);
  if (nb > MAX_BANDS) nb = MAX_BANDS;
  r.in.bands = nb, r.in.band_lo_hz = lo, r.in.band_hi_hz = hi;
  pwr_over_time o;
  pwr_over_time_of(p->model, &r.in, NULL, NULL, NULL, &o, rms);
  sim_free(r.buf);
  sim_free(sb);
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
  json_t *bands = json_array();
  for (size_t b = 0; b < nb; b++) {
    json_t *e = json_object();
    json_object_set_new(e, "lo_hz", json_real(lo[b]));
    json_object_set_new(e, "hi_hz", json_real(hi[b]));
    json_object_set_new(e, "rms_kw", real_or_null(rms[b]));
    json_array_append_new(bands, e);
  }
  json_object_set_new(sp, "bands", bands);
  json_object_set_new(j, "spectrum", sp);
  return j;
}
