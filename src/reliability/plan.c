/* Reliability planning: causes, parameters from the scenario, closed forms.
 *
 * The rates (reliability.rate.*) are presets of reliability.rates (schema.c),
 * each per node of 8 GPUs and 8 NICs, the nodes of the reports they come from:
 *
 * llama3-16k, the default: Meta, "The Llama 3 Herd of Models"
 * (arXiv:2407.21783, 2024), Table 5: 419 unexpected interruptions in a 54-day
 * snapshot of Llama 3 405B pre-training on 16,384 H100 GPUs (2,048 8-GPU
 * nodes = 110,592 node-days), i.e. 3.789 per 1,000 node-days in total.
 * Per-cause rates are the counts / 110.592 (derived):
 *
 *   faulty GPU 148, GPU HBM3 72, software bug 54, network switch/cable 35,
 *   host maintenance 32, GPU SRAM 19, GPU system processor 17, NIC 7, NCCL
 *   watchdog 7, silent data corruption 6, GPU thermal interface/sensor 6,
 *   other hardware 14 (SSD 3, power supply 3, chassis 2, IO expansion
 *   board 2, CPU 2, system memory 2), dependency 2.
 *
 * rsc-1, rsc-2: Meta's research clusters (Kokolis et al., arXiv 2410.21680):
 * 6.50 and 2.34 per 1,000 node-days of A100 nodes, with no per-cause counts;
 * each total is split in the proportions above (docs/reliability.md).
 *
 * The node_swap flags (which causes take a node out of the job) and the
 * per-GPU / per-NIC scaling are our reading of the causes, not the report's.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "fabsim/reliability.h"

static const rel_cause_info causes[REL_CAUSES] = {
    [REL_GPU] = {"faulty_gpu", "faulty GPU", REL_PER_GPU, true},
    [REL_HBM] = {"hbm", "GPU HBM3", REL_PER_GPU, true},
    [REL_SOFTWARE] = {"software", "software bug", REL_PER_NODE, false},
    [REL_NETWORK] = {"network", "network switch/cable", REL_PER_NODE, false},
    [REL_HOST] = {"host", "host maintenance", REL_PER_NODE, true},
    [REL_SRAM] = {"sram", "GPU SRAM", REL_PER_GPU, true},
    [REL_GSP] = {"gsp", "GPU system processor", REL_PER_GPU, true},
    [REL_NIC] = {"nic", "NIC", REL_PER_NIC, true},
    [REL_NCCL] = {"nccl", "NCCL watchdog", REL_PER_NODE, false},
    [REL_SDC] = {"sdc", "silent data corruption", REL_PER_GPU, true},
    [REL_THERMAL] = {"thermal", "GPU thermal", REL_PER_GPU, true},
    [REL_OTHER_HARDWARE] = {"other_hardware", "other hardware", REL_PER_NODE, true},
    [REL_DEPENDENCY] = {"dependency", "dependency", REL_PER_NODE, false},
};

const rel_cause_info *rel_cause_at(int cause) {
  return cause >= 0 && cause < REL_CAUSES ? &causes[cause] : NULL;
}

/* Offsets of reliability.rate.<cause> in cfg_scenario, in cause order. */
static const size_t rate_offset[REL_CAUSES] = {
    offsetof(cfg_scenario, reliability.rate.faulty_gpu),
    offsetof(cfg_scenario, reliability.rate.hbm),
    offsetof(cfg_scenario, reliability.rate.software),
    offsetof(cfg_scenario, reliability.rate.network),
    offsetof(cfg_scenario, reliability.rate.host),
    offsetof(cfg_scenario, reliability.rate.sram),
    offsetof(cfg_scenario, reliability.rate.gsp),
    offsetof(cfg_scenario, reliability.rate.nic),
    offsetof(cfg_scenario, reliability.rate.nccl),
    offsetof(cfg_scenario, reliability.rate.sdc),
    offsetof(cfg_scenario, reliability.rate.thermal),
    offsetof(cfg_scenario, reliability.rate.other_hardware),
    offsetof(cfg_scenario, reliability.rate.dependency),
};

int rel_parse_interval(const char *text, double *seconds, sim_error *err) {
  simtime_ps t = 0;
  if (!strcmp(text, "auto")) {
    *seconds = 0;
    return SIM_OK;
  }
  if (cfg_parse_time(text, &t, err) != SIM_OK)
    return sim_fail(err, SIM_ECONFIG, "'%s' is neither auto nor a duration (e.g. 30min, 2h)", text);
  if (t == 0) return sim_fail(err, SIM_ECONFIG, "the interval must be > 0 (or auto)");
  *seconds = sim_ps_to_s(t);
  return SIM_OK;
}

int rel_params_from_config(rel_params *p, const cfg_scenario *cfg, const cfg_doc *doc,
                           uint32_t nodes, sim_error *err) {
  const double per_day = 1.0 / 86400.0, per_kilo = 1e-3;
  double sum = 0;
  sim_error perr = {0};
  memset(p, 0, sizeof *p);
  p->nodes = nodes;
  p->gpus_per_node = cfg->cluster.gpus_per_node;
  p->days = cfg->reliability.days;
  for (int i = 0; i < REL_CAUSES; i++) {
    double r;
    memcpy(&r, (const char *)cfg + rate_offset[i], sizeof r);
    if (causes[i].scope == REL_PER_GPU) r *= cfg->cluster.gpus_per_node / 8.0;
    else if (causes[i].scope == REL_PER_NIC) r *= cfg->cluster.nic.per_node / 8.0;
    p->rate[i] = r;
    sum += r;
  }
  if (cfg->reliability.node_failure_rate > 0) {
    if (sum <= 0)
      return cfg_fail_at(doc, "reliability.node_failure_rate", err,
                         "every reliability.rate.* is 0, so the rate cannot be split by cause; "
                         "set at least one");
    for (int i = 0; i < REL_CAUSES; i++) p->rate[i] *= cfg->reliability.node_failure_rate / sum;
  }
  for (int i = 0; i < REL_CAUSES; i++) p->rate[i] *= per_kilo * per_day;

  if (cfg->reliability.checkpoint.write_time > 0)
    p->write_s = sim_ps_to_s(cfg->reliability.checkpoint.write_time);
  else
    p->write_s = (double)cfg->reliability.checkpoint.size * 8.0 /
                 (double)cfg->reliability.checkpoint.bandwidth;
  if (rel_parse_interval(cfg->reliability.checkpoint.interval, &p->interval_s, &perr) != SIM_OK)
    return cfg_fail_at(doc, "reliability.checkpoint.interval", err, "%s", perr.msg);
  p->restart_s = sim_ps_to_s(cfg->reliability.restart_time);
  p->spares = cfg->reliability.spares;
  p->repair_s = sim_ps_to_s(cfg->reliability.repair_time);
  p->no_spare_delay_s = sim_ps_to_s(cfg->reliability.no_spare_delay);
  p->runs = cfg->reliability.monte_carlo.runs;
  p->seed = cfg->simulation.seed;
  return SIM_OK;
}

/* ---- closed forms ------------------------------------------------------------ */

double rel_mttf_s(double nodes, double rate_per_node_s) {
  double lambda = nodes * rate_per_node_s;
  return lambda > 0 ? 1.0 / lambda : INFINITY;
}

double rel_young_s(double delta, double mttf) { return sqrt(2.0 * delta * mttf); }

double rel_daly_s(double delta, double mttf) {
  if (!(delta < 2.0 * mttf)) return mttf;
  double x = delta / (2.0 * mttf);
  return sqrt(2.0 * delta * mttf) * (1.0 + sqrt(x) / 3.0 + x / 9.0) - delta;
}

/* Per segment of tau + delta, the number of failed attempts is geometric with
 * mean e^{lambda s} - 1, each costing E[X | X < s] + R; summed with the final
 * s this is (e^{lambda s} - 1)(1/lambda + R). expm1 keeps small lambda exact. */
double rel_ettr(double tau, double delta, double mean_restart, double mttf) {
  if (!isfinite(mttf)) return tau > 0 || delta > 0 ? tau / (tau + delta) : 1;
  double lambda = 1.0 / mttf;
  if (!(tau > 0)) return delta > 0 ? 0 : 1.0 / (1.0 + lambda * mean_restart); /* tau -> 0 */
  double wall = expm1(lambda * (tau + delta)) * (mttf + mean_restart);
  return isfinite(wall) && wall > 0 ? tau / wall : 0;
}

double rel_erlang_b(uint32_t servers, double load) {
  double b = 1.0;
  for (uint32_t k = 1; k <= servers; k++) b = load * b / ((double)k + load * b);
  return b;
}

/* The interval maximizing rel_ettr: golden-section search on log(tau), which
 * is unimodal there. O(100) evaluations. */
static double optimal_interval(double delta, double restart, double mttf, double hi) {
  const double g = 0.6180339887498949;
  double a = log(1e-3), b = log(hi);
  double c = b - g * (b - a), d = a + g * (b - a);
  for (int i = 0; i < 100; i++) {
    if (rel_ettr(exp(c), delta, restart, mttf) > rel_ettr(exp(d), delta, restart, mttf)) b = d;
    else a = c;
    c = b - g * (b - a);
    d = a + g * (b - a);
  }
  return exp(0.5 * (a + b));
}

void rel_evaluate(const rel_params *p, rel_result *r) {
  double rate = 0, swap_rate = 0, run_s = p->days * 86400.0;
  memset(r, 0, sizeof *r);
  for (int i = 0; i < REL_CAUSES; i++) {
    rate += p->rate[i];
    if (causes[i].node_swap) swap_rate += p->rate[i];
  }
  r->lambda_per_s = p->nodes * rate;
  r->mttf_s = rel_mttf_s(p->nodes, rate);
  r->rate_per_node_day = rate * 86400.0;
  for (int i = 0; i < REL_CAUSES; i++) {
    r->expected_by_cause[i] = p->nodes * p->rate[i] * run_s;
    r->expected_total += r->expected_by_cause[i];
  }
  r->young_s = rel_young_s(p->write_s, r->mttf_s);
  r->daly_s = rel_daly_s(p->write_s, r->mttf_s);
  r->swap_frac = rate > 0 ? swap_rate / rate : 0;
  /* Spares: each node swap holds a spare for repair_s; Erlang B of the
   * offered load gives the share of swaps that find none free. Swaps arrive
   * at nodes x swap_rate only while the job runs, a share 1 / (1 + lambda R)
   * of wall time, and R depends on the blocking: iterate to the fixed point
   * (R is monotone in the blocking and bounded, so this converges). */
  r->p_no_spare = 1;
  r->mean_restart_s = p->restart_s + r->swap_frac * p->no_spare_delay_s;
  for (int it = 0; it < 200; it++) {
    double up = 1.0 / (1.0 + r->lambda_per_s * r->mean_restart_s);
    double b = rel_erlang_b(p->spares, p->nodes * swap_rate * p->repair_s * up);
    double restart = p->restart_s + r->swap_frac * b * p->no_spare_delay_s;
    bool done = fabs(restart - r->mean_restart_s) <= 1e-12 * restart;
    r->p_no_spare = b;
    r->mean_restart_s = restart;
    if (done) break;
  }
  double hi = isfinite(r->mttf_s) ? 10.0 * r->mttf_s + 10.0 * p->write_s : run_s;
  r->optimal_s =
      isfinite(r->mttf_s) ? optimal_interval(p->write_s, r->mean_restart_s, r->mttf_s, hi) : run_s;
  if (p->interval_s > 0) r->interval_s = p->interval_s;
  else r->interval_s = isfinite(r->daly_s) ? r->daly_s : run_s;
  r->ettr_closed = rel_ettr(r->interval_s, p->write_s, r->mean_restart_s, r->mttf_s);
  r->goodput_frac = r->ettr_closed * p->nodes / ((double)p->nodes + p->spares);
  if (p->runs > 0) rel_monte_carlo(p, r->interval_s, r);
}
