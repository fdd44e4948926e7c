/* The summary's "power" object (a run's and `fabsim reliability`'s): the
 * cluster's draw at a utilization, by component, and what a step and a run
 * cost in energy and money (pwr_summarize), with the racks a cap throttles. */
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
