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
  struct stat st;
  char *db = out_database_path(cfg->output.dir, cfg->output.database);
  int rc = SIM_OK;
  lock->fd = -1;
  lock->dir = cfg->output.dir;
  /* output.database: written at the end; a device or folder there would
   * fail only after the whole simulation */
  if (db && stat(db, &st) == 0 && !S_ISREG(st.st_mode)) {
    cfg_fail_at(doc, "output.database", &err,
                "%s is %s; allowed: a regular file (runs are added to it), a path that does not "
                "exist yet (it is created), or none",
                db,
                S_ISDIR(st.st_mode)   ? "a folder"
                : S_ISCHR(st.st_mode) ? "a character device"
                                      : "not a regular file");
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

json_t *cli_topo_json(const topo *t, const cfg_scenario *cfg) {
  const topo_inventory *inv = topo_inventory_get(t);
  json_t *o = json_object();
  json_object_set_new(o, "topology", json_string(cfg_topology_name(cfg->fabric.topology)));
  json_object_set_new(o, "transport", json_string(cfg_transport_name(cfg->fabric.transport)));
  json_object_set_new(o, "tiers", json_integer(inv->tiers));
  json_object_set_new(o, "planes", json_integer(inv->planes));
  json_object_set_new(o, "switch_radix", json_integer(cfg->fabric.switch_radix));
  json_object_set_new(o, "oversubscription", json_real(inv->oversubscription));
  json_object_set_new(o, "leaf_down_ports", json_integer(inv->leaf_down));
  json_object_set_new(o, "leaf_up_ports", json_integer(inv->leaf_up));
  json_object_set_new(o, "nodes", json_integer((json_int_t)inv->nodes));
  json_object_set_new(o, "max_nodes", json_integer((json_int_t)inv->max_nodes));
  json_object_set_new(o, "gpus", json_integer((json_int_t)inv->gpus));
  json_object_set_new(o, "endpoints", json_integer((json_int_t)inv->endpoints));
  json_object_set_new(o, "switches", json_integer((json_int_t)inv->switches));
  json_t *tiers = json_object();
  static const char *tier_names[] = {NULL, "leaf", "spine", "core"};
  for (int i = 1; i <= 3; i++)
    json_object_set_new(tiers, tier_names[i], json_integer((json_int_t)inv->switches_by_tier[i]));
  json_object_set_new(o, "switches_by_tier", tiers);
  json_t *links = json_object();
  json_object_set_new(links, "endpoint_switch",
                      json_integer((json_int_t)inv->links_endpoint_switch));
  json_object_set_new(links, "switch_switch", json_integer((json_int_t)inv->links_switch_switch));
  json_object_set_new(o, "links", links);
  json_object_set_new(o, "transceivers", json_integer((json_int_t)inv->transceivers));
  json_object_set_new(o, "copper_cables", json_integer((json_int_t)inv->copper_cables));
  json_object_set_new(o, "cost_usd", json_real(inv->cost_usd));
  json_object_set_new(o, "cost_per_endpoint_usd", json_real(inv->cost_per_endpoint_usd));
  json_object_set_new(o, "bisection_bandwidth_bps",
                      json_integer((json_int_t)inv->bisection_bandwidth_bps));
  /* the fabric at max_nodes, for capacity planning (the figures above: what these nodes need) */
  json_object_set_new(o, "switches_full", json_integer((json_int_t)inv->switches_full));
  json_object_set_new(o, "cost_usd_full", json_real(inv->cost_usd_full));
  return o;
}

json_t *cli_scenario_json(const cli_args *a, const cfg_scenario *cfg) {
  json_t *o = json_object();
  json_object_set_new(o, "file", a->scenario ? json_string(a->scenario) : json_null());
  json_t *sets = json_array();
  for (int i = 0; i < a->nsets; i++) json_array_append_new(sets, json_string(a->sets[i]));
  json_object_set_new(o, "overrides", sets);
  json_object_set_new(o, "seed", json_integer((json_int_t)cfg->simulation.seed));
  return o;
}
