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

static const char *fmt_min(char *buf, size_t n, double s) {
  if (!isfinite(s)) snprintf(buf, n, "inf");
  else if (s < 60) snprintf(buf, n, "%.1f s", s);
  else if (s < 3600 * 10) snprintf(buf, n, "%.1f min", s / 60);
  else snprintf(buf, n, "%.1f h", s / 3600);
  return buf;
}

static void print_power(const pwr_model *m, const cfg_scenario *cfg, double run_s) {
  pwr_summary s;
  double u = cfg->power.utilization, step_s = sim_ps_to_s(cfg->power.step_time);
  char a[64], c[64];
  pwr_summarize(m, u, step_s, run_s, &s);
  printf(
      "power       IT %.1f kW at %.0f %% GPU utilization (GPUs %.1f, servers %.1f, NICs %.1f, "
      "switches %.1f, optics %.1f); facility %.1f kW at PUE %.3g\n",
      s.it_kw, 100 * u, s.gpu_kw, s.server_kw, s.nic_kw, s.switch_kw, s.optics_kw, s.facility_kw,
      m->pue);
  printf("energy      %.4g kWh per %s step ($%.3g at $%.3g/kWh); %.1f MWh per run (%s)\n",
         s.energy_kwh_per_step, sim_fmt_seconds(a, sizeof a, step_s), s.cost_usd_per_step,
         m->usd_per_kwh, s.energy_mwh_per_run, sim_fmt_usd(c, sizeof c, s.cost_usd_per_run));
  printf("racks       %u of %u servers, %.4g kW demand each: ", s.racks, m->rack_nodes,
         pwr_rack_demand_w(m, 0, u) * 1e-3);
  if (s.racks_throttled)
    printf("%u over their limit of %.4g kW, GPUs throttled to %.3f\n", s.racks_throttled,
           m->rack_limit_w[0] * 1e-3, s.min_throttle);
  else printf("within their limit of %.4g kW\n", m->rack_limit_w[0] * 1e-3);
}

void out_reliability_print(const rel_params *p, const rel_result *r, const pwr_model *pm,
                           const cfg_scenario *cfg) {
  char a[64], b[64], c[64], d[64];
  printf("job         %s %s GPUs on %s nodes, %.4g days\n",
         sim_fmt_count(a, sizeof a, (uint64_t)p->nodes * p->gpus_per_node),
         cfg_gpu_name(cfg->cluster.gpu), sim_fmt_count(b, sizeof b, p->nodes), p->days);
  printf("failures    %.4g per 1,000 node-days: MTTF %s, %.1f interruptions expected\n",
         r->rate_per_node_day * 1e3, isfinite(r->mttf_s) ? fmt_min(c, sizeof c, r->mttf_s) : "none",
         r->expected_total);
  for (int i = 0; i < REL_CAUSES; i++)
    printf("  %-22s %8.1f  (%4.1f %%)\n", rel_cause_at(i)->label, r->expected_by_cause[i],
           r->expected_total > 0 ? 100 * r->expected_by_cause[i] / r->expected_total : 0.0);
  printf("checkpoint  write %s, restart %s\n", fmt_min(a, sizeof a, p->write_s),
         fmt_min(b, sizeof b, p->restart_s));
  printf("interval    Young %s, Daly %s, optimal %s; using %s (%s)\n",
         fmt_min(a, sizeof a, r->young_s), fmt_min(b, sizeof b, r->daly_s),
         fmt_min(c, sizeof c, r->optimal_s), fmt_min(d, sizeof d, r->interval_s),
         cfg->reliability.checkpoint.interval);
  printf(
      "spares      %u hot spare node%s: %.0f %% of interruptions swap a node, %.3g of them find "
      "no spare; mean restart %s\n",
      p->spares, p->spares == 1 ? "" : "s", 100 * r->swap_frac, r->p_no_spare,
      fmt_min(a, sizeof a, r->mean_restart_s));
  printf("ETTR        closed form %.4f", r->ettr_closed);
  if (r->runs > 0)
    printf("; Monte Carlo %.4f +- %.4f (95 %%, %u runs, seed %llu)", r->ettr_mc, r->ettr_mc_ci95,
           r->runs, (unsigned long long)p->seed);
  printf(
      "\ngoodput     %.4f of the fleet's GPU time, ETTR x nodes / (nodes + spares) (%s "
      "productive GPU-hours)\n",
      r->goodput_frac,
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
  char a[32], b[32], c[48];
  if (r->runs > 0) snprintf(c, sizeof c, "%.4f+-%.4f", r->ettr_mc, r->ettr_mc_ci95);
  else snprintf(c, sizeof c, "-");
  printf("%8llu %7u %6u %9s %10.1f %10s %8s %8.4f %18s %8.4f\n",
         (unsigned long long)p->nodes * p->gpus_per_node, p->nodes, p->spares,
         fmt_min(a, sizeof a, r->mttf_s), r->expected_total, fmt_min(b, sizeof b, r->interval_s),
         choice, r->ettr_closed, c, r->goodput_frac);
}

json_t *out_reliability_json(const rel_params *p, const rel_result *r, const pwr_model *pm,
                             const cfg_scenario *cfg, const char *file, const char *const *sets,
                             int nsets, const rel_sweep_row *rows, size_t nrows) {
  json_t *o = result_json(p, r);
  json_object_set_new(o, "scenario", out_scenario_json(file, sets, nsets, cfg));
  json_object_set_new(o, "power",
                      out__power_json(pm, cfg->power.utilization,
                                       sim_ps_to_s(cfg->power.step_time), p->days * 86400.0));
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
