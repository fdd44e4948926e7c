/* fabsim topo: the cluster and fabric a scenario builds, its inventory and cost. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "fabsim/out.h"

static const char topo_help[] =
    "usage: fabsim topo [SCENARIO.yaml] [--set KEY=VALUE]... [--json] [--dot FILE [--dot-nodes]]\n"
    "\n"
    "Build the cluster and fabric of a scenario and print its inventory: endpoints,\n"
    "switches per tier, links, optical transceivers, cost and bisection bandwidth.\n"
    "\n"
    "  SCENARIO.yaml      scenario file (optional: every key has a default)\n"
    "  --set KEY=VALUE    override one key, after the file (repeatable)\n"
    "  --json             print one JSON object instead of the table\n"
    "  --dot FILE         write the graph in Graphviz DOT to FILE ('-' for stdout)\n"
    "  --dot-nodes        in the DOT graph, draw each server as one box\n"
    "\n"
    "Example: fabsim topo --set fabric.switch_radix=64 --set fabric.tiers=3 --json\n";

/* The memory estimate (cfg_memory_estimate) at each fidelity, by cfg_fidelity. */
static void memory_estimates(const cfg_scenario *cfg, uint64_t est[3]) {
  cfg_scenario s = *cfg;
  for (int f = 0; f < 3; f++) {
    cfg_memory m;
    s.simulation.fidelity = (cfg_fidelity)f;
    cfg_memory_estimate(&s, &m);
    est[f] = m.bytes;
  }
}

static void print_table(const topo *t, const cfg_scenario *cfg) {
  const topo_inventory *inv = topo_inventory_get(t);
  char a[64], b[64], c[64], d[64];
  printf("fabric     %s, %u tiers, %u plane%s, radix %u, %s, leaf %u down / %u up (%.3g:1)\n",
         cfg_topology_name(cfg->fabric.topology), inv->tiers, inv->planes,
         inv->planes == 1 ? "" : "s", cfg->fabric.switch_radix,
         cfg_transport_name(cfg->fabric.transport), inv->leaf_down, inv->leaf_up,
         inv->oversubscription);
  printf("cluster    %s nodes x %u %s = %s GPUs (fabric holds %s nodes)\n",
         sim_fmt_count(a, sizeof a, inv->nodes), cfg->cluster.gpus_per_node,
         cfg_gpu_name(cfg->cluster.gpu), sim_fmt_count(b, sizeof b, inv->gpus),
         sim_fmt_count(c, sizeof c, inv->max_nodes));
  printf("endpoints  %s NICs at %s", sim_fmt_count(a, sizeof a, inv->endpoints - inv->storage_nics),
         sim_fmt_rate(b, sizeof b, cfg->cluster.nic.bandwidth));
  if (inv->storage_nics)
    printf(" + %s storage NICs at %s", sim_fmt_count(a, sizeof a, inv->storage_nics),
           sim_fmt_rate(b, sizeof b, cfg->storage.nic.bandwidth));
  printf("\n");
  printf("switches   %s", sim_fmt_count(a, sizeof a, inv->switches));
  static const char *tier_names[] = {NULL, "leaf", "spine", "core"};
  const char *sep = " (";
  for (int i = 1; i <= 3; i++) {
    if (!inv->switches_by_tier[i]) continue;
    printf("%s%s %s", sep, sim_fmt_count(a, sizeof a, inv->switches_by_tier[i]), tier_names[i]);
    sep = ", ";
  }
  printf("%s\n", inv->switches ? ")" : "");
  printf("links      %s endpoint-switch, %s switch-switch\n",
         sim_fmt_count(a, sizeof a, inv->links_endpoint_switch),
         sim_fmt_count(b, sizeof b, inv->links_switch_switch));
  printf("optics     %s transceivers, %s copper cables\n",
         sim_fmt_count(a, sizeof a, inv->transceivers),
         sim_fmt_count(b, sizeof b, inv->copper_cables));
  printf("cost       %s (%s per endpoint)\n", sim_fmt_usd(a, sizeof a, inv->cost_usd),
         sim_fmt_usd(b, sizeof b, inv->cost_per_endpoint_usd));
  printf("bisection  %s\n", sim_fmt_rate(a, sizeof a, inv->bisection_bandwidth_bps));
  cli_networks_print(t, cfg, 11);
  uint64_t est[3];
  memory_estimates(cfg, est);
  printf(
      "memory     about %s to run at the %s fidelity (analytic %s, flow %s, packet %s; "
      "estimate)\n",
      sim_fmt_bytes(a, sizeof a, est[cfg->simulation.fidelity]),
      cfg_fidelity_name(cfg->simulation.fidelity), sim_fmt_bytes(b, sizeof b, est[0]),
      sim_fmt_bytes(c, sizeof c, est[1]), sim_fmt_bytes(d, sizeof d, est[2]));
}

int cli_cmd_topo(int argc, char **argv) {
  cli_args a;
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  int rc = cli_parse(&a, argc, argv, "jd", topo_help);
  if (rc != CLI_OK) goto out;
  struct stat st; /* a folder as --dot: refused before the topology is built */
  if (a.dot && strcmp(a.dot, "-") && stat(a.dot, &st) == 0 && S_ISDIR(st.st_mode)) {
    fprintf(stderr, "fabsim: --dot %s: is a folder; allowed: a file to write, or - (stdout)\n",
            a.dot);
    rc = CLI_BAD_INPUT;
    goto out;
  }
  if ((rc = cli_load(&a, &cfg, &doc, &t)) != CLI_OK) goto out;
  if (a.dot) {
    FILE *f = strcmp(a.dot, "-") ? fopen(a.dot, "w") : stdout;
    if (!f) { /* the path given: bad input (a write that fails later is not) */
      fprintf(stderr,
              "fabsim: --dot %s: cannot write: %s; allowed: a file to write, or - (stdout)\n",
              a.dot, strerror(errno));
      rc = CLI_BAD_INPUT;
      goto done;
    }
    topo_write_dot(t, f, a.dot_collapse);
    if (f != stdout && fclose(f) != 0) {
      fprintf(stderr, "fabsim: %s: write failed\n", a.dot);
      rc = CLI_FAILED;
      goto done;
    }
    if (f == stdout) goto done;
  }
  if (a.json) {
    json_t *o = cli_topo_json(t, &cfg), *mem = json_object();
    uint64_t est[3];
    memory_estimates(&cfg, est);
    for (int f = 0; f < 3; f++)
      json_object_set_new(mem, cfg_fidelity_name((cfg_fidelity)f),
                          json_integer((json_int_t)est[f]));
    json_object_set_new(o, "memory_estimate_bytes", mem);
    char *text = out_json_text(o);
    puts(text);
    free(text);
    json_decref(o);
  } else {
    print_table(t, &cfg);
  }
done:
  topo_free(t);
  cfg_free(&cfg, doc);
out:
  cli_args_free(&a);
  return rc < 0 ? CLI_OK : rc;
}
