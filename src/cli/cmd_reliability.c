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

static int take_sweep(void *ctx, const char *opt, const char *value) {
  sim_error err = {0};
  if (rel_sweep_add(ctx, opt, value, &err) == SIM_OK) return CLI_OK;
  cli_error(err.msg);
  return CLI_BAD_INPUT;
}

/* Take this verb's own flags out of argv, wherever they stand (the rest,
 * compacted in argv, goes to cli_parse). */
static int take_flags(int *argc, char **argv, rel_sweep *sw) {
  const cli_opt opts[] = {
      {.name = "--sweep-gpus", .value = true, .take = take_sweep, .ctx = sw},
      {.name = "--sweep-interval", .value = true, .take = take_sweep, .ctx = sw},
      {.name = "--sweep-spares", .value = true, .take = take_sweep, .ctx = sw},
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
  rel_sweep sw = {0};
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
  bool sweeping = sw.ngpus > 0 || sw.nintervals > 0 || sw.nspares > 0;
  rel_sweep_row *rows = NULL;
  size_t nrows = 0;
  if (!a.json) out_reliability_print(&p, &r, &pm, &cfg);
  if (sweeping && rel_sweep_run(&p, &sw, &rows, &nrows, &err) != SIM_OK) {
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
  rel_sweep_free(&sw);
  cli_args_free(&a);
  return rc < 0 ? CLI_OK : rc;
}
