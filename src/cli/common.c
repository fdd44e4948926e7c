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

/* The storage servers, the storage fabric and the management network
 * (topo_networks_of) into o, as "storage" and "management"; neither key
 * without them, so a scenario without storage writes what it always did. */
static void cli_networks_json(const topo *t, const cfg_scenario *cfg, json_t *o) {
  topo_networks n;
  sim_error err = {0};
  if ((!cfg->storage.servers && !cfg->management.enabled) ||
      topo_networks_of(t, cfg, &n, &err) != SIM_OK)
    return; /* (the storage fabric was checked at load) */
  if (n.storage_servers) {
    const topo_inventory *inv = topo_inventory_get(t);
    json_t *s = json_object();
    json_object_set_new(s, "servers", json_integer((json_int_t)n.storage_servers));
    json_object_set_new(s, "attach", json_string(n.separate ? "separate" : "backend"));
    json_object_set_new(s, "nics_per_server", json_integer(cfg->storage.nic.per_server));
    json_object_set_new(s, "nic_bps", json_integer((json_int_t)cfg->storage.nic.bandwidth));
    json_object_set_new(s, "write_Bps_per_server",
                        json_integer((json_int_t)(cfg->storage.write_bandwidth / 8)));
    json_object_set_new(s, "read_Bps_per_server",
                        json_integer((json_int_t)(cfg->storage.read_bandwidth / 8)));
    json_object_set_new(s, "servers_cost_usd", json_real(n.storage_cost_usd));
    json_object_set_new(s, "power_w", json_real(n.storage_power_w));
    if (!n.separate) {
      json_object_set_new(s, "first_leaf",
                          json_integer(topo_vertex_at(t, topo_storage_leaf(t, 0))->index));
      json_object_set_new(s, "backend_nics", json_integer((json_int_t)inv->storage_nics));
    } else {
      const topo_inventory *f = &n.storage_fabric;
      json_t *fo = json_object();
      json_object_set_new(fo, "tiers", json_integer(f->tiers));
      json_object_set_new(fo, "switch_radix", json_integer(cfg->storage.fabric.switch_radix));
      json_object_set_new(fo, "frontend_nics_per_node",
                          json_integer(cfg->storage.frontend.per_node));
      json_object_set_new(fo, "frontend_bps",
                          json_integer((json_int_t)cfg->storage.frontend.bandwidth));
      json_object_set_new(fo, "endpoints", json_integer((json_int_t)f->endpoints));
      json_object_set_new(fo, "switches", json_integer((json_int_t)f->switches));
      json_object_set_new(fo, "links_endpoint_switch",
                          json_integer((json_int_t)f->links_endpoint_switch));
      json_object_set_new(fo, "links_switch_switch",
                          json_integer((json_int_t)f->links_switch_switch));
      json_object_set_new(fo, "transceivers", json_integer((json_int_t)f->transceivers));
      json_object_set_new(fo, "copper_cables", json_integer((json_int_t)f->copper_cables));
      json_object_set_new(fo, "cost_usd", json_real(f->cost_usd));
      json_object_set_new(fo, "bisection_bandwidth_bps",
                          json_integer((json_int_t)f->bisection_bandwidth_bps));
      json_object_set_new(s, "fabric", fo);
    }
    json_object_set_new(o, "storage", s);
  }
  if (cfg->management.enabled) {
    const topo_management *m = &n.management;
    json_t *mo = json_object();
    json_object_set_new(mo, "ports", json_integer((json_int_t)m->ports));
    json_object_set_new(mo, "switches", json_integer((json_int_t)m->switches));
    json_object_set_new(mo, "aggregation_switches", json_integer((json_int_t)m->aggregation));
    json_object_set_new(mo, "cables", json_integer((json_int_t)m->cables));
    json_object_set_new(mo, "cost_usd", json_real(m->cost_usd));
    json_object_set_new(o, "management", mo);
  }
  json_object_set_new(o, "cost_usd_all_networks",
                      json_real(topo_inventory_get(t)->cost_usd + n.cost_usd));
}

void cli_networks_print(const topo *t, const cfg_scenario *cfg, int width) {
  topo_networks n;
  sim_error err = {0};
  char a[64], b[64], c[64], d[64];
  if ((!cfg->storage.servers && !cfg->management.enabled) ||
      topo_networks_of(t, cfg, &n, &err) != SIM_OK)
    return;
  if (n.storage_servers && !n.separate)
    printf(
        "%-*s%s servers on the backend fabric from leaf%u, %s NICs at %s, %s/s write, %s, %.3g "
        "kW\n",
        width, "storage", sim_fmt_count(a, sizeof a, n.storage_servers),
        topo_vertex_at(t, topo_storage_leaf(t, 0))->index,
        sim_fmt_count(b, sizeof b, topo_inventory_get(t)->storage_nics),
        sim_fmt_rate(c, sizeof c, cfg->storage.nic.bandwidth),
        sim_fmt_bytes(d, sizeof d, cfg->storage.write_bandwidth / 8 * n.storage_servers),
        sim_fmt_usd(c + 32, 32, n.storage_cost_usd), n.storage_power_w * 1e-3);
  if (n.separate) {
    const topo_inventory *f = &n.storage_fabric;
    printf("%-*s%s servers, %s NICs at %s, %s/s write, %s, %.3g kW\n", width, "storage",
           sim_fmt_count(a, sizeof a, n.storage_servers),
           sim_fmt_count(b, sizeof b, f->storage_nics),
           sim_fmt_rate(c, sizeof c, cfg->storage.nic.bandwidth),
           sim_fmt_bytes(d, sizeof d, cfg->storage.write_bandwidth / 8 * n.storage_servers),
           sim_fmt_usd(c + 32, 32, n.storage_cost_usd), n.storage_power_w * 1e-3);
    printf(
        "%-*sseparate fat-tree, %u tiers, radix %u: %s switches, %s frontend NICs at %s, %s, "
        "bisection %s\n",
        width, "  fabric", f->tiers, cfg->storage.fabric.switch_radix,
        sim_fmt_count(a, sizeof a, f->switches),
        sim_fmt_count(b, sizeof b, f->endpoints - f->storage_nics),
        sim_fmt_rate(c, sizeof c, cfg->storage.frontend.bandwidth),
        sim_fmt_usd(d, sizeof d, f->cost_usd),
        sim_fmt_rate(c + 32, 32, f->bisection_bandwidth_bps));
  }
  if (cfg->management.enabled)
    printf("%-*s%s ports, %s switches + %s aggregation, %s cables, %s (no traffic)\n", width,
           "management", sim_fmt_count(a, sizeof a, n.management.ports),
           sim_fmt_count(b, sizeof b, n.management.switches),
           sim_fmt_count(c, sizeof c, n.management.aggregation),
           sim_fmt_count(d, sizeof d, n.management.cables),
           sim_fmt_usd(c + 32, 32, n.management.cost_usd));
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
  cli_networks_json(t, cfg, o);
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
