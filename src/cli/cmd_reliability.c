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

enum { SWEEP_MAX = REL_SWEEP_MAX };

typedef struct sweep {
  rel_sweep v;
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
    if (sw->v.nintervals == SWEEP_MAX) {
      fprintf(stderr, "fabsim: --sweep-interval: at most %d values\n", SWEEP_MAX);
      return CLI_BAD_INPUT;
    }
    double s = 0;
    if (!strcmp(tok, "young")) s = REL_IV_YOUNG;
    else if (!strcmp(tok, "optimal")) s = REL_IV_OPTIMAL;
    else if (rel_parse_interval(tok, &s, &err) != SIM_OK) {
      fprintf(stderr, "fabsim: --sweep-interval: %s; or young, optimal\n", err.msg);
      return CLI_BAD_INPUT;
    }
    sw->v.interval_text[sw->v.nintervals] = tok;
    sw->v.interval[sw->v.nintervals++] = s;
  }
  return CLI_OK;
}

static int take_gpus(void *ctx, const char *opt, const char *value) {
  sweep *sw = ctx;
  return parse_counts(opt, value, 1, sw->v.gpus, &sw->v.ngpus);
}

static int take_spares(void *ctx, const char *opt, const char *value) {
  sweep *sw = ctx;
  return parse_counts(opt, value, 0, sw->v.spares, &sw->v.nspares);
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
  bool sweeping = sw.v.ngpus > 0 || sw.v.nintervals > 0 || sw.v.nspares > 0;
  rel_sweep_row *rows = NULL;
  size_t nrows = 0;
  if (!a.json) out_reliability_print(&p, &r, &pm, &cfg);
  if (sweeping && rel_sweep_run(&p, &sw.v, &rows, &nrows, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_BAD_INPUT;
  } else if (a.json) {
    out_print_json(
        out_reliability_json(&p, &r, &pm, &cfg, a.scenario, a.sets, a.nsets, rows, nrows));
  } else if (sweeping) {
    out_reliability_sweep_print(rows, nrows);
  }
  sim_free(rows);
done:
  pwr_free(&pm);
  topo_free(t);
  cfg_free(&cfg, doc);
out:
  for (int i = 0; i < sw.nstorage; i++) sim_free(sw.storage[i]);
  cli_args_free(&a);
  return rc < 0 ? CLI_OK : rc;
}
