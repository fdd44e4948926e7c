/* Power and cooling model (see include/fabsim/power.h for the equations). */
#include <math.h>
#include <string.h>

#include "fabsim/power.h"

/* power.mitigation.*: fractions at most 1, and a series to read them over. */
static int pwr__check_mitigation(const cfg_scenario *cfg, const cfg_doc *doc, sim_error *err) {
  const __typeof__(cfg->power.mitigation) *p = &cfg->power.mitigation;
  struct {
    const char *key;
    double v;
  } frac[] = {{"power.mitigation.floor", p->floor},
              {"power.mitigation.pacing", p->pacing},
              {"power.mitigation.battery.efficiency", p->battery.efficiency}};
  for (size_t i = 0; i < sizeof frac / sizeof *frac; i++)
    if (frac[i].v > 1)
      return cfg_fail_at(doc, frac[i].key, err, "%g is above 1; allowed 0..1", frac[i].v);
  const char *set = p->floor > 0               ? "power.mitigation.floor"
                    : p->pacing > 0            ? "power.mitigation.pacing"
                    : p->ramp_up_w_per_s > 0   ? "power.mitigation.ramp_up_w_per_s"
                    : p->ramp_down_w_per_s > 0 ? "power.mitigation.ramp_down_w_per_s"
                    : p->facility_cap_kw > 0   ? "power.mitigation.facility_cap_kw"
                    : p->battery.kwh > 0       ? "power.mitigation.battery.kwh"
                                               : NULL;
  if (set && !cfg->power.timeseries)
    return cfg_fail_at(doc, set, err,
                       "a mitigation is read over the power series, which is off; allowed: "
                       "power.timeseries: true, or 0 (none)");
  return SIM_OK;
}

int pwr_init(pwr_model *m, const cfg_scenario *cfg, const cfg_doc *doc, const topo_inventory *inv,
             sim_error *err) {
  memset(m, 0, sizeof *m);
  if (cfg->power.utilization > 1)
    return cfg_fail_at(doc, "power.utilization", err, "%g is above 1; allowed 0..1",
                       cfg->power.utilization);
  if (cfg->power.gpu_idle_w > cfg->power.gpu_tdp_w)
    return cfg_fail_at(doc, "power.gpu_idle_w", err,
                       "idle power %g W exceeds power.gpu_tdp_w %g W; idle <= TDP",
                       cfg->power.gpu_idle_w, cfg->power.gpu_tdp_w);
  int rc = pwr__check_mitigation(cfg, doc, err);
  if (rc != SIM_OK) return rc;
  m->nodes = (uint32_t)inv->nodes;
  m->gpus_per_node = cfg->cluster.gpus_per_node;
  m->nics_per_node = cfg->cluster.nic.per_node;
  m->rack_nodes = cfg->power.rack.servers;
  m->racks = (m->nodes + m->rack_nodes - 1) / m->rack_nodes;
  m->gpu_tdp_w = cfg->power.gpu_tdp_w;
  m->gpu_idle_w = cfg->power.gpu_idle_w;
  m->node_w = cfg->power.node_w;
  m->nic_w = cfg->power.nic_w;
  m->switches = inv->switches;
  m->transceivers = inv->transceivers;
  m->switch_w = (double)inv->switches * cfg->fabric.switch_radix * cfg->power.switch_port_w;
  m->optics_w = (double)inv->transceivers * cfg->power.transceiver_w;
  m->pue = cfg->power.pue;
  m->usd_per_kwh = cfg->power.usd_per_kwh;
  double cooling_kw = cfg->power.rack.cooling_kw > 0                  ? cfg->power.rack.cooling_kw
                      : cfg->power.rack.cooling == CFG_COOLING_LIQUID ? 120.0
                                                                      : 40.0;
  double limit_kw = cooling_kw;
  if (cfg->power.rack.cap_kw > 0 && cfg->power.rack.cap_kw < limit_kw)
    limit_kw = cfg->power.rack.cap_kw;
  m->rack_cap_w = cfg->power.rack.cap_kw > 0 ? cfg->power.rack.cap_kw * 1e3 : INFINITY;
  m->rack_limit_w = sim_calloc(m->racks ? m->racks : 1, sizeof *m->rack_limit_w);
  for (uint32_t r = 0; r < m->racks; r++) m->rack_limit_w[r] = limit_kw * 1e3;
  return SIM_OK;
}

void pwr_free(pwr_model *m) {
  sim_free(m->rack_limit_w);
  m->rack_limit_w = NULL;
}

void pwr_set_rack_limit(pwr_model *m, uint32_t rack, double kw) {
  /* cooling: the rack's cap, if lower, still holds */
  if (rack < m->racks)
    m->rack_limit_w[rack] = kw > 0 ? fmin(kw * 1e3, m->rack_cap_w) : m->rack_cap_w;
}

double pwr_gpu_w(const pwr_model *m, double u) {
  return m->gpu_idle_w + u * (m->gpu_tdp_w - m->gpu_idle_w);
}

uint32_t pwr_rack_nodes(const pwr_model *m, uint32_t rack) {
  if (rack >= m->racks) return 0;
  uint32_t first = rack * m->rack_nodes;
  return m->nodes - first < m->rack_nodes ? m->nodes - first : m->rack_nodes;
}

/* Server power besides its GPUs. */
static double server_other_w(const pwr_model *m) { return m->node_w + m->nics_per_node * m->nic_w; }

double pwr_rack_demand_w(const pwr_model *m, uint32_t rack, double u) {
  return pwr_rack_nodes(m, rack) * (m->gpus_per_node * pwr_gpu_w(m, u) + server_other_w(m));
}

/* GPU watts per GPU that rack r delivers (after throttling). */
static double rack_gpu_w(const pwr_model *m, uint32_t rack, double u, double *factor) {
  uint32_t n = pwr_rack_nodes(m, rack);
  double p = pwr_gpu_w(m, u), limit = m->rack_limit_w[rack];
  *factor = 1;
  if (n == 0 || m->gpus_per_node == 0 || pwr_rack_demand_w(m, rack, u) <= limit) return p;
  double budget = (limit - n * server_other_w(m)) / ((double)n * m->gpus_per_node);
  double dynamic = p - m->gpu_idle_w;
  if (dynamic <= 0) return p; /* idle GPUs have nothing to give up */
  double f = budget > m->gpu_idle_w ? cbrt((budget - m->gpu_idle_w) / dynamic) : 0;
  if (f < PWR_MIN_THROTTLE) f = PWR_MIN_THROTTLE;
  *factor = f;
  return m->gpu_idle_w + dynamic * f * f * f;
}

double pwr_rack_throttle(const pwr_model *m, uint32_t rack, double u) {
  double f = 1;
  if (rack < m->racks) rack_gpu_w(m, rack, u, &f);
  return f;
}

void pwr_gpu_throttle(const pwr_model *m, double u, double *out, uint32_t n) {
  uint32_t per_rack = m->rack_nodes * m->gpus_per_node;
  double f = 1;
  for (uint32_t g = 0; g < n; g++) {
    uint32_t rack = per_rack ? g / per_rack : 0;
    if (g % (per_rack ? per_rack : 1) == 0) f = pwr_rack_throttle(m, rack, u);
    out[g] = g < m->nodes * m->gpus_per_node ? f : 1;
  }
}

void pwr_summarize(const pwr_model *m, double u, double step_s, double run_s, pwr_summary *s) {
  memset(s, 0, sizeof *s);
  s->racks = m->racks;
  s->min_throttle = 1;
  for (uint32_t r = 0; r < m->racks; r++) {
    double f, gpu_w = rack_gpu_w(m, r, u, &f);
    uint32_t n = pwr_rack_nodes(m, r);
    s->gpu_kw += n * m->gpus_per_node * gpu_w * 1e-3;
    if (f < 1) s->racks_throttled++;
    if (f < s->min_throttle) s->min_throttle = f;
  }
  s->server_kw = m->nodes * m->node_w * 1e-3;
  s->nic_kw = (double)m->nodes * m->nics_per_node * m->nic_w * 1e-3;
  s->switch_kw = m->switch_w * 1e-3;
  s->optics_kw = m->optics_w * 1e-3;
  s->it_kw = s->gpu_kw + s->server_kw + s->nic_kw + s->switch_kw + s->optics_kw;
  s->it_demand_kw = (double)m->nodes * m->gpus_per_node * pwr_gpu_w(m, u) * 1e-3 + s->server_kw +
                    s->nic_kw + s->switch_kw + s->optics_kw;
  s->facility_kw = s->it_kw * m->pue;
  s->energy_kwh_per_step = s->facility_kw * step_s / 3600.0;
  s->cost_usd_per_step = s->energy_kwh_per_step * m->usd_per_kwh;
  s->energy_mwh_per_run = s->facility_kw * run_s / 3600.0 * 1e-3;
  s->cost_usd_per_run = s->energy_mwh_per_run * 1e3 * m->usd_per_kwh;
}

const char *pwr_rack_limit_name(const pwr_model *m, uint32_t rack) {
  return rack < m->racks && m->rack_cap_w <= m->rack_limit_w[rack] ? "power cap" : "cooling";
}
