/* Argument parsing and JSON views shared by the verbs. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "fabsim/run.h"

void cli_error(const char *msg) {
  /* "file:line:col: ..." and "--set:n:col: ..." stand alone, as compilers print. */
  const char *colon = strchr(msg, ':');
  bool located = colon && colon[1] >= '0' && colon[1] <= '9';
  fprintf(stderr, "%s%s\n", located ? "" : "fabsim: ", msg);
}

int cli_parse(cli_args *a, int argc, char **argv, const char *allowed, const char *help) {
  memset(a, 0, sizeof *a);
  a->sets = sim_calloc((size_t)argc + 1, sizeof *a->sets);
  cli_opt opts[6];
  size_t n = 0;
  int npos = 0;
  opts[n++] = cli_opt_set(a->sets, &a->nsets);
  if (strchr(allowed, 'j')) opts[n++] = (cli_opt){.name = "--json", .flag = &a->json};
  if (strchr(allowed, 'q'))
    opts[n++] = (cli_opt){.name = "--quiet", .alias = "-q", .flag = &a->quiet};
  if (strchr(allowed, 'd')) {
    opts[n++] = (cli_opt){.name = "--dot", .value = true, .last = &a->dot};
    opts[n++] = (cli_opt){.name = "--dot-nodes", .flag = &a->dot_collapse};
    opts[n++] = (cli_opt){.name = "--export", .value = true, .last = &a->export_file};
  }
  cli_argv spec = {.opts = opts,
                   .nopts = n,
                   .help = help,
                   .positional = &a->scenario,
                   .npositional = &npos,
                   .max_positional = 1,
                   .too_many = cli_one_scenario};
  return cli_argv_parse(&spec, argc, argv);
}

void cli_args_free(cli_args *a) {
  sim_free(a->sets);
  a->sets = NULL;
}

int cli_load(const cli_args *a, cfg_scenario *cfg, cfg_doc **doc, topo **t) {
  sim_error err = {0};
  if (run_scenario_load(cfg, doc, t, a->scenario, a->sets, a->nsets, &err) == SIM_OK) return CLI_OK;
  cli_error(err.msg);
  return CLI_BAD_INPUT;
}
