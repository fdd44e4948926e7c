/* fabsim reliability: failures, checkpoints, ETTR and spares over a whole run,
 * with sweeps over job size and checkpoint interval, and the cluster's power. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "fabsim/out.h"
#include "fabsim/power.h"
#include "fabsim/reliability.h"

static const char reliability_help[] =
    "usage: fabsim reliability [SCENARIO.yaml] [--set KEY=VALUE]... [--json]\n"
    "                          [--sweep-gpus N,...] [--sweep-interval T,...] [--sweep-spares "
    "S,...]\n"
    "\n"
    "Plan a training run of reliability.days on the scenario's cluster (nodes x\n"
    "gpus_per_node): MTTF, expected interruptions by cause (rates from Meta's\n"
    "Llama 3 report, or its research clusters with reliability.rates=rsc-1 or\n"
    "rsc-2), Young and Daly checkpoint intervals, the effective training\n"
    "time ratio (ETTR) from a closed form and a seeded Monte Carlo with its 95 %\n"
    "confidence interval, the effect of hot spares, and the cluster's power,\n"
    "energy and rack throttling (power.*).\n"
    "\n"
    "  SCENARIO.yaml          scenario file (optional: every key has a default)\n"
    "  --set KEY=VALUE        override one key, after the file (repeatable)\n"
    "  --json                 print one JSON object instead of the table\n"
    "  --sweep-gpus LIST      job sizes in GPUs (multiples of gpus_per_node)\n"
    "  --sweep-interval LIST  checkpoint intervals: durations, auto (Daly), young,\n"
    "                         optimal (the interval that maximizes ETTR)\n"
    "  --sweep-spares LIST    hot spare nodes (reliability.spares)\n"
    "\n"
    "Example: fabsim reliability --set cluster.nodes=2048 --sweep-gpus 1024,4096,16384 \\\n"
    "           --sweep-interval 10min,30min,auto\n";

enum { SWEEP_MAX = 64 };
/* Interval choices besides a duration (seconds > 0). */
enum { IV_AUTO = 0, IV_YOUNG = -1, IV_OPTIMAL = -2 };

typedef struct sweep {
  uint32_t gpus[SWEEP_MAX];
  int ngpus;
  double interval[SWEEP_MAX]; /* seconds, or IV_* */
  const char *interval_text[SWEEP_MAX];
  int nintervals;
  uint32_t spares[SWEEP_MAX];
  int nspares;
  char *storage[SWEEP_MAX + 1]; /* own the interval texts: one per --sweep-interval */
  int nstorage;
} sweep;

/* A comma-separated list of integers >= min into out (at most SWEEP_MAX). */
static int parse_counts(const char *flag, const char *list, uint32_t min, uint32_t *out, int *n) {
  const char *p = list;
  while (*p) {
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (*p < '0' || *p > '9' || end == p || v < min || v > UINT32_MAX || (*end && *end != ',') ||
        *n == SWEEP_MAX) {
      fprintf(stderr, "fabsim: %s: '%s' is not a list of integers >= %u (e.g. 1024,4096)\n", flag,
              list, min);
      return CLI_BAD_INPUT;
    }
    out[(*n)++] = (uint32_t)v;
    p = *end ? end + 1 : end;
  }
  return CLI_OK;
}

static int parse_intervals(sweep *sw, const char *list) {
  if (sw->nstorage > SWEEP_MAX) { /* every --sweep-interval adds a value */
    fprintf(stderr, "fabsim: --sweep-interval: at most %d values\n", SWEEP_MAX);
    return CLI_BAD_INPUT;
  }
  char *text = sw->storage[sw->nstorage++] = sim_strdup(list);
  for (char *tok = text, *next; tok; tok = next) {
    sim_error err = {0};
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    if (sw->nintervals == SWEEP_MAX) {
      fprintf(stderr, "fabsim: --sweep-interval: at most %d values\n", SWEEP_MAX);
      return CLI_BAD_INPUT;
    }
    double s = 0;
    if (!strcmp(tok, "young")) s = IV_YOUNG;
    else if (!strcmp(tok, "optimal")) s = IV_OPTIMAL;
    else if (rel_parse_interval(tok, &s, &err) != SIM_OK) {
      fprintf(stderr, "fabsim: --sweep-interval: %s; or young, optimal\n", err.msg);
      return CLI_BAD_INPUT;
    }
    sw->interval_text[sw->nintervals] = tok;
    sw->interval[sw->nintervals++] = s;
  }
  return CLI_OK;
}

static int take_gpus(void *ctx, const char *opt, const char *value) {
  sweep *sw = ctx;
  return parse_counts(opt, value, 1, sw->gpus, &sw->ngpus);
}

static int take_spares(void *ctx, const char *opt, const char *value) {
  sweep *sw = ctx;
  return parse_counts(opt, value, 0, sw->spares, &sw->nspares);
}

static int take_intervals(void *ctx, const char *opt, const char *value) {
  (void)opt;
  return parse_intervals(ctx, value);
}

/* Take this verb's own flags out of argv, wherever they stand (the rest,
 * compacted in argv, goes to cli_parse). */
static int take_flags(int *argc, char **argv, sweep *sw) {
  const cli_opt opts[] = {
      {.name = "--sweep-gpus", .value = true, .take = take_gpus, .ctx = sw},
      {.name = "--sweep-interval", .value = true, .take = take_intervals, .ctx = sw},
      {.name = "--sweep-spares", .value = true, .take = take_spares, .ctx = sw},
  };
  int rest = 0;
  const cli_argv spec = {
      .opts = opts, .nopts = sizeof opts / sizeof opts[0], .rest = argv, .nrest = &rest};
  int rc = cli_argv_parse(&spec, *argc, argv);
  *argc = rest;
  return rc;
}

/* JSON number, or null when not finite (an MTTF without failures). */
static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static double pick_interval(const rel_result *r, double choice) {
  if (choice > 0) return choice;
  if (choice == IV_YOUNG) return r->young_s;
  if (choice == IV_OPTIMAL) return r->optimal_s;
  return r->interval_s; /* auto: Daly, as rel_evaluate chose */
}

/* Evaluate p at `interval` (seconds, or IV_*): closed form and Monte Carlo. */
static void evaluate_at(rel_params p, double choice, rel_result *r) {
  uint32_t runs = p.runs;
  p.runs = 0;
  p.interval_s = 0;
  rel_evaluate(&p, r);
  r->interval_s = pick_interval(r, choice);
  if (!isfinite(r->interval_s) || r->interval_s <= 0) r->interval_s = p.days * 86400.0;
  r->ettr_closed = rel_ettr(r->interval_s, p.write_s, r->mean_restart_s, r->mttf_s);
  r->goodput_frac = r->ettr_closed * p.nodes / ((double)p.nodes + p.spares);
  p.runs = runs;
  if (runs > 0) rel_monte_carlo(&p, r->interval_s, r);
}

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

static void print_result(const rel_params *p, const rel_result *r, const cfg_scenario *cfg) {
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

/* One row: `base` at `nodes`, `spares` and an interval choice. */
static void sweep_row(const rel_params *base, uint32_t nodes, uint32_t spares, double choice,
                      const char *text, json_t *out) {
  rel_params p = *base;
  rel_result r;
  p.nodes = nodes;
  p.spares = spares;
  evaluate_at(p, choice, &r);
  if (out) {
    json_t *row = result_json(&p, &r);
    json_object_set_new(row, "interval_choice", json_string(text));
    json_array_append_new(out, row);
  } else {
    print_sweep_row(&p, &r, text);
  }
}

/* Every (size, interval, spares) combination, sizes outermost. Rows print or
 * go to `out` (JSON). */
static int run_sweep(const rel_params *base, const sweep *sw, json_t *out) {
  for (int i = 0; i < sw->ngpus; i++) {
    if (sw->gpus[i] % base->gpus_per_node) {
      fprintf(stderr, "fabsim: --sweep-gpus: %u is not a multiple of cluster.gpus_per_node (%u)\n",
              sw->gpus[i], base->gpus_per_node);
      return CLI_BAD_INPUT;
    }
  }
  if (!out) print_sweep_header();
  for (int i = 0; i < (sw->ngpus ? sw->ngpus : 1); i++) {
    uint32_t nodes = sw->ngpus ? sw->gpus[i] / base->gpus_per_node : base->nodes;
    for (int j = 0; j < (sw->nintervals ? sw->nintervals : 1); j++) {
      double choice = sw->nintervals ? sw->interval[j] : base->interval_s;
      const char *text = sw->nintervals ? sw->interval_text[j] : "scenario";
      for (int k = 0; k < (sw->nspares ? sw->nspares : 1); k++)
        sweep_row(base, nodes, sw->nspares ? sw->spares[k] : base->spares, choice, text, out);
    }
  }
  return CLI_OK;
}

int cli_cmd_reliability(int argc, char **argv) {
  cli_args a;
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sweep sw = {0};
  pwr_model pm = {0};
  rel_params p;
  rel_result r;
  sim_error err = {0};
  int rc = take_flags(&argc, argv, &sw);
  if (rc != CLI_OK) {
    memset(&a, 0, sizeof a);
    goto out;
  }
  if ((rc = cli_parse(&a, argc, argv, "j", reliability_help)) != CLI_OK) goto out;
  if ((rc = cli_load(&a, &cfg, &doc, &t)) != CLI_OK) goto out;
  const topo_inventory *inv = topo_inventory_get(t);
  if (rel_params_from_config(&p, &cfg, doc, (uint32_t)inv->nodes, &err) != SIM_OK ||
      pwr_init(&pm, &cfg, doc, inv, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_BAD_INPUT;
    goto done;
  }
  rel_evaluate(&p, &r);
  double run_s = p.days * 86400.0;
  bool sweeping = sw.ngpus > 0 || sw.nintervals > 0 || sw.nspares > 0;
  if (a.json) {
    json_t *o = result_json(&p, &r);
    json_object_set_new(o, "scenario", out_scenario_json(a.scenario, a.sets, a.nsets, &cfg));
    json_object_set_new(
        o, "power",
        pwr_summary_json(&pm, cfg.power.utilization, sim_ps_to_s(cfg.power.step_time), run_s));
    if (sweeping) {
      json_t *rows = json_array();
      rc = run_sweep(&p, &sw, rows);
      json_object_set_new(o, "sweep", rows);
    }
    if (rc == CLI_OK) {
      char *text = out_json_text(o);
      puts(text);
      free(text);
    }
    json_decref(o);
  } else {
    print_result(&p, &r, &cfg);
    print_power(&pm, &cfg, run_s);
    if (sweeping) rc = run_sweep(&p, &sw, NULL);
  }
done:
  pwr_free(&pm);
  topo_free(t);
  cfg_free(&cfg, doc);
out:
  for (int i = 0; i < sw.nstorage; i++) sim_free(sw.storage[i]);
  cli_args_free(&a);
  return rc < 0 ? CLI_OK : rc;
}
