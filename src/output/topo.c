/* The topology's figures (its inventory and the storage and management
 * networks) as JSON and text (fabsim topo and a run's summary), and the
 * scenario a run read. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "output/out_internal.h"

static const char DOT_ALLOWED[] = "allowed: a file to write, or - (stdout)";

int out_topo_dot_check(const char *path, sim_error *err) {
  struct stat st;
  if (!strcmp(path, "-") || stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return SIM_OK;
  return sim_fail(err, SIM_ECONFIG, "--dot %s: is a folder; %s", path, DOT_ALLOWED);
}

int out_topo_dot(const topo *t, const char *path, bool collapse, sim_error *err) {
  FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
  if (!f) /* the path given: bad input (a write that fails later is not) */
    return sim_fail(err, SIM_ECONFIG, "--dot %s: cannot write: %s; %s", path, strerror(errno),
                    DOT_ALLOWED);
  topo_write_dot(t, f, collapse);
  if (f != stdout && fclose(f) != 0) return sim_fail(err, SIM_EIO, "%s: write failed", path);
  return SIM_OK;
}

/* The storage servers, the storage fabric and the management network
 * (topo_networks_of) into o, as "storage" and "management"; neither key
 * without them, so a scenario without storage writes what it always did. */
static void networks_json(const topo *t, const cfg_scenario *cfg, json_t *o) {
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

void out_networks_print(const topo *t, const cfg_scenario *cfg, int width) {
  topo_networks n;
  sim_error err = {0};
  char a[64], b[64], c[64], d[64], e[64];
  if ((!cfg->storage.servers && !cfg->management.enabled) ||
      topo_networks_of(t, cfg, &n, &err) != SIM_OK)
    return;
  if (n.storage_servers && !n.separate)
    printf("%-*s%s on the backend fabric from leaf%u, %s at %s, %s write, %s, %s\n", width,
           "storage", sim_fmt_noun(a, sizeof a, n.storage_servers, "server"),
           topo_vertex_at(t, topo_storage_leaf(t, 0))->index,
           sim_fmt_noun(b, sizeof b, topo_inventory_get(t)->storage_nics, "NIC"),
           sim_fmt_rate(c, sizeof c, cfg->storage.nic.bandwidth),
           sim_fmt(d, sizeof d, (double)(cfg->storage.write_bandwidth / 8 * n.storage_servers),
                   SIM_UNIT_BYTERATE),
           sim_fmt_usd(c + 32, 32, n.storage_cost_usd),
           sim_fmt(e, sizeof e, n.storage_power_w, SIM_UNIT_WATTS));
  if (n.separate) {
    const topo_inventory *f = &n.storage_fabric;
    printf("%-*s%s, %s at %s, %s write, %s, %s\n", width, "storage",
           sim_fmt_noun(a, sizeof a, n.storage_servers, "server"),
           sim_fmt_noun(b, sizeof b, f->storage_nics, "NIC"),
           sim_fmt_rate(c, sizeof c, cfg->storage.nic.bandwidth),
           sim_fmt(d, sizeof d, (double)(cfg->storage.write_bandwidth / 8 * n.storage_servers),
                   SIM_UNIT_BYTERATE),
           sim_fmt_usd(c + 32, 32, n.storage_cost_usd),
           sim_fmt(e, sizeof e, n.storage_power_w, SIM_UNIT_WATTS));
    printf("%-*sseparate fat-tree, %s, radix %u: %s, %s frontend NICs at %s, %s, bisection %s\n",
           width, "  fabric", sim_fmt_noun(e, sizeof e, f->tiers, "tier"),
           cfg->storage.fabric.switch_radix, sim_fmt_noun(a, sizeof a, f->switches, "switch"),
           sim_fmt_count(b, sizeof b, f->endpoints - f->storage_nics),
           sim_fmt_rate(c, sizeof c, cfg->storage.frontend.bandwidth),
           sim_fmt_usd(d, sizeof d, f->cost_usd),
           sim_fmt_rate(c + 32, 32, f->bisection_bandwidth_bps));
  }
  if (cfg->management.enabled)
    printf("%-*s%s, %s + %s aggregation, %s, %s (no traffic)\n", width, "management",
           sim_fmt_noun(a, sizeof a, n.management.ports, "port"),
           sim_fmt_noun(b, sizeof b, n.management.switches, "switch"),
           sim_fmt_count(c, sizeof c, n.management.aggregation),
           sim_fmt_noun(d, sizeof d, n.management.cables, "cable"),
           sim_fmt_usd(c + 32, 32, n.management.cost_usd));
}

json_t *out_topo_json(const topo *t, const cfg_scenario *cfg) {
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
  networks_json(t, cfg, o);
  return o;
}

json_t *out_scenario_json(const char *file, const char *const *sets_given, int nsets,
                          const cfg_scenario *cfg) {
  json_t *o = json_object();
  json_object_set_new(o, "file", file ? json_string(file) : json_null());
  json_t *sets = json_array();
  for (int i = 0; i < nsets; i++) json_array_append_new(sets, json_string(sets_given[i]));
  json_object_set_new(o, "overrides", sets);
  json_object_set_new(o, "seed", json_integer((json_int_t)cfg->simulation.seed));
  return o;
}

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

void out_topo_print(const topo *t, const cfg_scenario *cfg) {
  const topo_inventory *inv = topo_inventory_get(t);
  char a[64], b[64], c[64], d[64];
  printf("fabric     %s, %s, %s, radix %u, %s, leaf %u down / %u up (%s:1)\n",
         cfg_topology_name(cfg->fabric.topology), sim_fmt_noun(a, sizeof a, inv->tiers, "tier"),
         sim_fmt_noun(b, sizeof b, inv->planes, "plane"), cfg->fabric.switch_radix,
         cfg_transport_name(cfg->fabric.transport), inv->leaf_down, inv->leaf_up,
         sim_fmt(c, sizeof c, inv->oversubscription, SIM_UNIT_NUMBER));
  printf("cluster    %s x %u %s = %s (fabric holds %s)\n",
         sim_fmt_noun(a, sizeof a, inv->nodes, "node"), cfg->cluster.gpus_per_node,
         cfg_gpu_name(cfg->cluster.gpu), sim_fmt_noun(b, sizeof b, inv->gpus, "GPU"),
         sim_fmt_noun(c, sizeof c, inv->max_nodes, "node"));
  printf("endpoints  %s at %s",
         sim_fmt_noun(a, sizeof a, inv->endpoints - inv->storage_nics, "NIC"),
         sim_fmt_rate(b, sizeof b, cfg->cluster.nic.bandwidth));
  if (inv->storage_nics)
    printf(" + %s at %s", sim_fmt_noun(a, sizeof a, inv->storage_nics, "storage NIC"),
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
  printf("optics     %s, %s\n", sim_fmt_noun(a, sizeof a, inv->transceivers, "transceiver"),
         sim_fmt_noun(b, sizeof b, inv->copper_cables, "copper cable"));
  printf("cost       %s (%s per endpoint)\n", sim_fmt_usd(a, sizeof a, inv->cost_usd),
         sim_fmt_usd(b, sizeof b, inv->cost_per_endpoint_usd));
  printf("bisection  %s\n", sim_fmt_rate(a, sizeof a, inv->bisection_bandwidth_bps));
  out_networks_print(t, cfg, 11);
  uint64_t est[3];
  memory_estimates(cfg, est);
  printf(
      "memory     about %s to run at the %s fidelity (analytic %s, flow %s, packet %s; "
      "estimate)\n",
      sim_fmt_bytes(a, sizeof a, est[cfg->simulation.fidelity]),
      cfg_fidelity_name(cfg->simulation.fidelity), sim_fmt_bytes(b, sizeof b, est[0]),
      sim_fmt_bytes(c, sizeof c, est[1]), sim_fmt_bytes(d, sizeof d, est[2]));
}

json_t *out_topo_verb_json(const topo *t, const cfg_scenario *cfg) {
  json_t *o = out_topo_json(t, cfg), *mem = json_object();
  uint64_t est[3];
  memory_estimates(cfg, est);
  for (int f = 0; f < 3; f++)
    json_object_set_new(mem, cfg_fidelity_name((cfg_fidelity)f), json_integer((json_int_t)est[f]));
  json_object_set_new(o, "memory_estimate_bytes", mem);
  return o;
}
