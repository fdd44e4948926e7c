/* fabsim memory: per-GPU memory of a training setup and the smallest
 * parallelism that fits (run_memory_of), printed by out_memory_print or
 * out_memory_json. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "fabsim/out.h"
#include "fabsim/run.h"

static const char memory_help[] =
    "usage: fabsim memory [SCENARIO.yaml] [--set KEY=VALUE]... [--json]\n"
    "\n"
    "Per-GPU memory of training the scenario's model (workload.model.*) under its\n"
    "parallelism (workload.parallel.*): weights, gradients and optimizer states after\n"
    "ZeRO sharding, activations with and without recomputation, on the pipeline stage\n"
    "that needs most. Says whether that fits cluster.gpu_memory and, if not, the\n"
    "smallest tp x pp (then ZeRO stage and recomputation) on the same GPUs that does.\n"
    "Closed forms only: instant for any model and cluster size.\n"
    "\n"
    "  SCENARIO.yaml      scenario file (optional: every key has a default)\n"
    "  --set KEY=VALUE    override one key, after the file (repeatable)\n"
    "  --json             print one JSON object instead of the table\n"
    "\n"
    "Exit status: 0 done (whether it fits or not), 2 bad input.\n"
    "Example: fabsim memory --set workload.model.params=70e9 --set workload.parallel.tp=8\n";

int cli_cmd_memory(int argc, char **argv) {
  cli_args a;
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_error err = {0};
  run_memory r;
  int rc = cli_parse(&a, argc, argv, "j", memory_help);
  if (rc != CLI_OK) goto out;
  if ((rc = cli_load(&a, &cfg, &doc, &t)) != CLI_OK) goto out;
  if (run_memory_of(&r, &cfg, doc, t, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_BAD_INPUT;
  } else if (a.json) {
    out_print_json(out_memory_json(&cfg, &r));
  } else {
    out_memory_print(&cfg, &r);
  }
  topo_free(t);
  cfg_free(&cfg, doc);
out:
  cli_args_free(&a);
  return rc < 0 ? CLI_OK : rc;
}
