/* What `fabsim reliability` prints: the run's failures, checkpoints, ETTR
 * and spares (rel_evaluate), the cluster's power, and a sweep's rows
 * (rel_sweep_run), as text or one JSON object. */
#include <math.h>
#include <stdio.h>

#include "fabsim/power.h"
#include "fabsim/reliability.h"
#include "output/out_internal.h"

/* JSON number, or null when not finite (an MTTF without failures). */
static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *result_json(const rel_params *p, const rel_result *r) {
  json_t *o = json_object();
  json_object_set_new(o, "gpus", json_integer((json_int_t)p->nodes * p->gpus_per_node));
  json_object_set_new(o, "nodes", json_integer(p->nodes));
  json_object_set_new(o, "days", json_real(p->days));
  json_object_set_new(o, "rate_per_1000_node_days", json_real(r->rate_per_node_day * 1e3));
  json_object_set_new(o, "mttf_h", num(r->mttf_s / 3600.0));
  json_t *ie = json_object(), *by = json_object();
  json_object_set_new(ie, "total", json_real(r->expected_total));
  for (int i = 0; i < REL_CAUSES; i++)
    json_object_set_new(by, rel_cause_at(i)->key, json_real(r->expected_by_cause[i]));
  json_object_set_new(ie, "by_cause", by);
  json_object_set_new(o, "interruptions_expected", ie);
  json_object_set_new(o, "checkpoint_write_s", json_real(p->write_s));
  json_object_set_new(o, "restart_min", json_real(p->restart_s / 60.0));
  json_object_set_new(o, "young_interval_min", num(r->young_s / 60.0));
  json_object_set_new(o, "daly_interval_min", num(r->daly_s / 60.0));
  json_object_set_new(o, "optimal_interval_min", num(r->optimal_s / 60.0));
  json_object_set_new(o, "interval_min", num(r->interval_s / 60.0));
  json_t *sp = json_object();
  json_object_set_new(sp, "nodes", json_integer(p->spares));
  json_object_set_new(sp, "node_swap_frac", json_real(r->swap_frac));
  json_object_set_new(sp, "p_no_spare", json_real(r->p_no_spare));
  json_object_set_new(sp, "mean_restart_min", json_real(r->mean_restart_s / 60.0));
  json_object_set_new(o, "spares", sp);
  json_t *e = json_object();
  json_object_set_new(e, "closed_form", json_real(r->ettr_closed));
  if (r->runs > 0) {
    json_object_set_new(e, "monte_carlo", json_real(r->ettr_mc));
    json_t *ci = json_array();
    json_array_append_new(ci, json_real(r->ettr_mc - r->ettr_mc_ci95));
    json_array_append_new(ci, json_real(r->ettr_mc + r->ettr_mc_ci95));
    json_object_set_new(e, "ci95", ci);
    json_object_set_new(e, "runs", json_integer(r->runs));
    json_object_set_new(e, "interruptions_mean", json_real(r->interruptions_mc));
    json_object_set_new(o, "goodput_frac_monte_carlo",
                        json_real(r->ettr_mc * p->nodes / ((double)p->nodes + p->spares)));
  } else {
    json_object_set_new(e, "monte_carlo", json_null());
    json_object_set_new(e, "ci95", json_null());
  }
  json_object_set_new(o, "ettr", e);
  json_object_set_new(o, "goodput_frac", json_real(r->goodput_frac));
  json_object_set_new(o, "goodput_gpu_hours",
                      json_real(r->ettr_closed * p->nodes * p->gpus_per_node * p->days * 24.0));
  return o;
}

/* A duration, or "none" where there is none (no failures: no MTTF). */
static const char *fmt_min(char *buf, size_t n, double s) {
  if (!isfinite(s)) return snprintf(buf, n, "none"), buf;
  return sim_fmt(buf, n, s, SIM_UNIT_DURATION);
}

static void print_power(const pwr_model *m, const cfg_scenario *cfg, double run_s) {
  pwr_summary s;
  double u = cfg->power.utilization, step_s = sim_ps_to_s(cfg->power.step_time);
  char a[64], b[64], c[64], d[64], e[64], f[64], g[64], h[64];
  pwr_summarize(m, u, step_s, run_s, &s);
  printf("power       IT %s at %s GPU utilization (GPUs %s, servers %s, NICs %s, ",
         sim_fmt(a, sizeof a, s.it_kw * 1e3, SIM_UNIT_WATTS),
         sim_fmt(b, sizeof b, u, SIM_UNIT_PERCENT),
         sim_fmt(c, sizeof c, s.gpu_kw * 1e3, SIM_UNIT_WATTS),
         sim_fmt(d, sizeof d, s.server_kw * 1e3, SIM_UNIT_WATTS),
         sim_fmt(e, sizeof e, s.nic_kw * 1e3, SIM_UNIT_WATTS));
  printf("switches %s, optics %s); facility %s at PUE %s\n",
         sim_fmt(a, sizeof a, s.switch_kw * 1e3, SIM_UNIT_WATTS),
         sim_fmt(b, sizeof b, s.optics_kw * 1e3, SIM_UNIT_WATTS),
         sim_fmt(c, sizeof c, s.facility_kw * 1e3, SIM_UNIT_WATTS),
         sim_fmt(d, sizeof d, m->pue, SIM_UNIT_NUMBER));
  printf("energy      %s per %s step (%s at %s/kWh); %s per run (%s)\n",
         sim_fmt(a, sizeof a, s.energy_kwh_per_step * 1e3, SIM_UNIT_WATTHOURS),
         sim_fmt_seconds(b, sizeof b, step_s), sim_fmt_usd(c, sizeof c, s.cost_usd_per_step),
         sim_fmt_usd(d, sizeof d, m->usd_per_kwh),
         sim_fmt(e, sizeof e, s.energy_mwh_per_run * 1e6, SIM_UNIT_WATTHOURS),
         sim_fmt_usd(f, sizeof f, s.cost_usd_per_run));
  printf("racks       %s of %s, %s demand each: ", sim_fmt_count(a, sizeof a, s.racks),
         sim_fmt_noun(b, sizeof b, m->rack_nodes, "server"),
         sim_fmt(c, sizeof c, pwr_rack_demand_w(m, 0, u), SIM_UNIT_WATTS));
  sim_fmt(g, sizeof g, m->rack_limit_w[0], SIM_UNIT_WATTS);
  if (s.racks_throttled)
    printf("%u over their limit of %s, GPUs throttled to %s\n", s.racks_throttled, g,
           sim_fmt(h, sizeof h, s.min_throttle, SIM_UNIT_PERCENT));
  else printf("within their limit of %s\n", g);
}

void out_reliability_print(const rel_params *p, const rel_result *r, const pwr_model *pm,
                           const cfg_scenario *cfg) {
  char a[64], b[64], c[64], d[64];
  uint64_t gpus = (uint64_t)p->nodes * p->gpus_per_node;
  printf("job         %s %s GPU%s on %s, %s\n", sim_fmt_count(a, sizeof a, gpus),
         cfg_gpu_name(cfg->cluster.gpu), gpus == 1 ? "" : "s",
         sim_fmt_noun(b, sizeof b, p->nodes, "node"),
         sim_fmt(c, sizeof c, p->days * 86400.0, SIM_UNIT_DURATION));
  printf("failures    %s per 1,000 node-days: MTTF %s, %s interruptions expected\n",
         sim_fmt(a, sizeof a, r->rate_per_node_day * 1e3, SIM_UNIT_NUMBER),
         fmt_min(c, sizeof c, r->mttf_s), sim_fmt(b, sizeof b, r->expected_total, SIM_UNIT_NUMBER));
  for (int i = 0; i < REL_CAUSES; i++)
    printf("  %-22s %8s  (%s)\n", rel_cause_at(i)->label,
           sim_fmt(a, sizeof a, r->expected_by_cause[i], SIM_UNIT_NUMBER),
           sim_fmt(b, sizeof b,
                   r->expected_total > 0 ? r->expected_by_cause[i] / r->expected_total : 0.0,
                   SIM_UNIT_PERCENT));
  printf("checkpoint  write %s, restart %s\n", fmt_min(a, sizeof a, p->write_s),
         fmt_min(b, sizeof b, p->restart_s));
  printf("interval    Young %s, Daly %s, optimal %s; using %s (%s)\n",
         fmt_min(a, sizeof a, r->young_s), fmt_min(b, sizeof b, r->daly_s),
         fmt_min(c, sizeof c, r->optimal_s), fmt_min(d, sizeof d, r->interval_s),
         cfg->reliability.checkpoint.interval);
  printf(
      "spares      %s: %s of interruptions swap a node, %s of them find no spare; mean "
      "restart %s\n",
      sim_fmt_noun(a, sizeof a, p->spares, "hot spare node"),
      sim_fmt(b, sizeof b, r->swap_frac, SIM_UNIT_PERCENT),
      sim_fmt(c, sizeof c, r->p_no_spare, SIM_UNIT_PERCENT),
      fmt_min(d, sizeof d, r->mean_restart_s));
  printf("ETTR        closed form %s", sim_fmt(a, sizeof a, r->ettr_closed, SIM_UNIT_PERCENT));
  if (r->runs > 0)
    printf("; Monte Carlo %s +- %s (95%%, %s, seed %llu)",
           sim_fmt(a, sizeof a, r->ettr_mc, SIM_UNIT_PERCENT),
           sim_fmt(b, sizeof b, r->ettr_mc_ci95, SIM_UNIT_PERCENT),
           sim_fmt_noun(c, sizeof c, r->runs, "run"), (unsigned long long)p->seed);
  printf(
      "\ngoodput     %s of the fleet's GPU time, ETTR x nodes / (nodes + spares) (%s "
      "productive GPU-hours)\n",
      sim_fmt(b, sizeof b, r->goodput_frac, SIM_UNIT_PERCENT),
      sim_fmt_count(
          a, sizeof a,
          (uint64_t)llround(r->ettr_closed * p->nodes * p->gpus_per_node * p->days * 24)));
  print_power(pm, cfg, p->days * 86400.0);
}

static void print_sweep_header(void) {
  printf("\n%8s %7s %6s %9s %10s %10s %8s %8s %18s %8s\n", "GPUs", "nodes", "spares", "MTTF",
         "interrupts", "interval", "choice", "ETTR", "Monte Carlo 95%", "goodput");
}

static void print_sweep_row(const rel_params *p, const rel_result *r, const char *choice) {
  char g[32], nd[32], sp[32], a[32], x[32], b[32], e[32], c[80], m[32], ci[32], gp[32];
  if (r->runs > 0)
    snprintf(c, sizeof c, "%s+-%s", sim_fmt(m, sizeof m, r->ettr_mc, SIM_UNIT_PERCENT),
             sim_fmt(ci, sizeof ci, r->ettr_mc_ci95, SIM_UNIT_PERCENT));
  else snprintf(c, sizeof c, "-");
  printf("%8s %7s %6s %9s %10s %10s %8s %8s %18s %8s\n",
         sim_fmt_count(g, sizeof g, (uint64_t)p->nodes * p->gpus_per_node),
         sim_fmt_count(nd, sizeof nd, p->nodes), sim_fmt_count(sp, sizeof sp, p->spares),
         fmt_min(a, sizeof a, r->mttf_s), sim_fmt(x, sizeof x, r->expected_total, SIM_UNIT_NUMBER),
         fmt_min(b, sizeof b, r->interval_s), choice,
         sim_fmt(e, sizeof e, r->ettr_closed, SIM_UNIT_PERCENT), c,
         sim_fmt(gp, sizeof gp, r->goodput_frac, SIM_UNIT_PERCENT));
}

json_t *out_reliability_json(const rel_params *p, const rel_result *r, const pwr_model *pm,
                             const cfg_scenario *cfg, const char *file, const char *const *sets,
                             int nsets, const rel_sweep_row *rows, size_t nrows) {
  json_t *o = result_json(p, r);
  json_object_set_new(o, "scenario", out_scenario_json(file, sets, nsets, cfg));
  json_object_set_new(o, "power",
                      out__power_json(pm, cfg->power.utilization, sim_ps_to_s(cfg->power.step_time),
                                      p->days * 86400.0));
  if (rows) {
    json_t *arr = json_array();
    for (size_t i = 0; i < nrows; i++) {
      json_t *row = result_json(&rows[i].p, &rows[i].r);
      json_object_set_new(row, "interval_choice", json_string(rows[i].choice));
      json_array_append_new(arr, row);
    }
    json_object_set_new(o, "sweep", arr);
  }
  return o;
}

void out_reliability_sweep_print(const rel_sweep_row *rows, size_t nrows) {
  print_sweep_header();
  for (size_t i = 0; i < nrows; i++) print_sweep_row(&rows[i].p, &rows[i].r, rows[i].choice);
}
