/* fabsim topo: the cluster and fabric a scenario builds, its inventory and cost. */
#include <string.h>

#include "cli/cli.h"
#include "fabsim/out.h"

static const char topo_help[] =
    "usage: fabsim topo [SCENARIO.yaml] [--set KEY=VALUE]... [--json] [--dot FILE [--dot-nodes]]\n"
    "                   [--export FILE]\n"
    "\n"
    "Build the cluster and fabric of a scenario and print its inventory: endpoints,\n"
    "switches per tier, links, optical transceivers, cost and bisection bandwidth.\n"
    "\n"
    "  SCENARIO.yaml      scenario file (optional: every key has a default)\n"
    "  --set KEY=VALUE    override one key, after the file (repeatable)\n"
    "  --json             print one JSON object instead of the table\n"
    "  --dot FILE         write the graph in Graphviz DOT to FILE ('-' for stdout)\n"
    "  --dot-nodes        in the DOT graph, draw each server as one box\n"
    "  --export FILE      write the fabric as a JSON graph to FILE ('-' for stdout), what\n"
    "                     fabric.topology: file reads back (docs/fabric-import.md)\n"
    "\n"
    "Example: fabsim topo --set fabric.switch_radix=64 --set fabric.tiers=3 --json\n";

int cli_cmd_topo(int argc, char **argv) {
  cli_args a;
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_error err = {0};
  int rc = cli_parse(&a, argc, argv, "jd", topo_help);
  if (rc != CLI_OK) goto out;
  if (a.dot && out_topo_dot_check(a.dot, &err) != SIM_OK) { /* before the topology is built */
    cli_error(err.msg);
    rc = CLI_BAD_INPUT;
    goto out;
  }
  if ((rc = cli_load(&a, &cfg, &doc, &t)) != CLI_OK) goto out;
  if (a.dot && out_topo_dot(t, a.dot, a.dot_collapse, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = err.code == SIM_ECONFIG ? CLI_BAD_INPUT : CLI_FAILED;
  } else if (a.export_file && topo_export(t, &cfg, a.export_file, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = err.code == SIM_ECONFIG ? CLI_BAD_INPUT : CLI_FAILED;
  } else if ((a.dot && !strcmp(a.dot, "-")) || (a.export_file && !strcmp(a.export_file, "-"))) {
    /* the graph was the output */
  } else if (a.json) {
    out_print_json(out_topo_verb_json(t, &cfg));
  } else {
    out_topo_print(t, &cfg);
  }
  topo_free(t);
  cfg_free(&cfg, doc);
out:
  cli_args_free(&a);
  return rc < 0 ? CLI_OK : rc;
}
