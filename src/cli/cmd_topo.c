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
    out_print_json(out_topo_verb_json(t, &cfg));
  } else {
    out_topo_print(t, &cfg);
  }
done:
  topo_free(t);
  cfg_free(&cfg, doc);
out:
  cli_args_free(&a);
  return rc < 0 ? CLI_OK : rc;
}
