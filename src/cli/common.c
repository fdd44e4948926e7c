/* Argument parsing and JSON views shared by the verbs. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "fabsim/out.h"
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
  cli_opt opts[5];
  size_t n = 0;
  int npos = 0;
  opts[n++] = cli_opt_set(a->sets, &a->nsets);
  if (strchr(allowed, 'j')) opts[n++] = (cli_opt){.name = "--json", .flag = &a->json};
  if (strchr(allowed, 'q'))
    opts[n++] = (cli_opt){.name = "--quiet", .alias = "-q", .flag = &a->quiet};
  if (strchr(allowed, 'd')) {
    opts[n++] = (cli_opt){.name = "--dot", .value = true, .last = &a->dot};
    opts[n++] = (cli_opt){.name = "--dot-nodes", .flag = &a->dot_collapse};
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

void cli_output_unlock(cli_lock *lock, int rc) {
  sim_dir_unlock(lock->fd, lock->dir, lock->created && rc == CLI_BAD_INPUT);
  lock->fd = -1;
}

int cli_output_lock(const cfg_scenario *cfg, const cfg_doc *doc, cli_lock *lock) {
  sim_error err = {0};
  char msg[sizeof err.msg];
  char *db = out_database_path(cfg->output.dir, cfg->output.database);
  int rc = SIM_OK;
  lock->fd = -1;
  lock->dir = cfg->output.dir;
  /* output.database: written at the end; a device, a folder or a file that
   * is not a results database there would fail only after the whole
   * simulation */
  if (db && out_db_check(db, true, &err) != SIM_OK) {
    snprintf(msg, sizeof msg, "%s", err.msg);
    cfg_fail_at(doc, "output.database", &err,
                "%s %s; allowed: a fabsim results database (runs are added to it), a path that "
                "does not exist yet (it is created), or none",
                db, msg);
    rc = SIM_ECONFIG;
  }
  sim_free(db);
  if (rc == SIM_OK) rc = sim_dir_lock(cfg->output.dir, &lock->fd, &lock->created, &err);
  if (rc == SIM_OK) return CLI_OK;
  if (rc != SIM_ECONFIG) {
    snprintf(msg, sizeof msg, "%s", err.msg);
    cfg_fail_at(doc, "output.dir", &err, "%s%s", msg,
                rc == SIM_EBUSY ? "; two runs in one folder would leave a mix of both runs' "
                                  "files. Set output.dir to another folder, or wait for that "
                                  "run to end"
                                : "; allowed: a folder this user can create and write");
  }
  cli_error(err.msg);
  return CLI_BAD_INPUT;
}
