/* Storage servers as endpoints of a fabric, the storage fabric of its own,
 * and the management network's inventory.
 *
 * A storage server is laid out as `span` nodes of the fabric it is on
 * (span = its ports / the fabric's NICs per node), appended after the
 * compute nodes: its "GPUs" are its endpoints (what a transfer to it names
 * as dst_gpu), its NICs take leaf ports as a node's would, and its PCIe links
 * are its drives, together storage.write_bandwidth. So every fidelity routes
 * to it as to a GPU, with no new vertex kind and no change to the
 * per-transfer paths; a fabric without storage is laid out exactly as before.
 *
 * Where: the first server starts the leaf (rail-optimized: the group of
 * leaves) after the last compute node's, as real clusters cable storage to
 * leaves of its own; compute placement is unchanged and the servers' traffic
 * meets the training traffic on the spines (and on any compute leaf it
 * enters). When the fabric's NICs per node and plane do not divide a leaf's
 * down ports, node slots do not align with leaves and the servers follow the
 * compute nodes directly (sto_gap 0).
 *
 * The drives: each server's max(N, G) x span PCIe links share its drives
 * equally, at a rate of their own each way (topo_channel_bps): toward the
 * endpoint (channel 2l + 1, NIC -> "GPU") its share of
 * storage.write_bandwidth, away from it (channel 2l, a read) its share of
 * storage.read_bandwidth. The link's own bps is the write rate.
 */
#include <stdio.h>
#include <string.h>

#include "topo/topo_internal.h"

static uint32_t div_ceil32(uint32_t a, uint32_t b) { return a / b + (a % b != 0); }

uint32_t topo__storage_plan(topo *t, const cfg_scenario *cfg, uint32_t nodes, uint32_t *slots) {
  t->cnodes = nodes;
  t->cgpus = nodes * t->gpn;
  t->sto_node0 = UINT32_MAX;
  t->sto_span = t->sto_servers = t->sto_gap = 0;
  t->sto_drive0 = t->sto_drive_end = 0; /* no drive links */
  *slots = nodes;
  if (cfg->storage.servers == 0 || cfg->storage.attach != CFG_STORAGE_BACKEND) return nodes;
  /* config checked: per_server is a multiple of the NICs per node */
  t->sto_span = cfg->storage.nic.per_server / t->npn;
  if (t->sto_span == 0) t->sto_span = 1;
  t->sto_servers = cfg->storage.servers;
  t->sto_node0 = nodes;
  uint32_t down = t->s.down, gap = 0;
  if (t->kind == CFG_TOPO_RAIL_OPTIMIZED) {
    gap = div_ceil32(nodes, down) * down - nodes;
  } else {
    uint32_t per = t->npn / t->planes; /* a node's NICs in each plane */
    if (down % per == 0) gap = (div_ceil32(nodes * per, down) * down) / per - nodes;
  }
  t->sto_gap = gap;
  uint32_t snodes = t->sto_servers * t->sto_span;
  *slots = nodes + gap + snodes;
  return nodes + snodes;
}

void topo__storage_rates(topo *t, const cfg_scenario *cfg) {
  if (!t->sto_servers) return;
  const topo_link *ref = &t->link[t->l_endpoint]; /* a compute NIC's link: its efficiency */
  double nic_share = (double)ref->bps / (double)cfg->cluster.nic.bandwidth;
  /* the drive links: each endpoint's own PCIe link, [l_pcie, +gpus) (build.c) */
  uint32_t pcie_per_node = t->gpn;
  double links = (double)pcie_per_node * t->sto_span, wire = topo__wire_per_payload(cfg);
  double drive = (double)cfg->storage.write_bandwidth * wire / links;
  double read = (double)cfg->storage.read_bandwidth * wire / links;
  t->sto_write_bps = drive + 0.5 >= 1 ? (rate_bps)(drive + 0.5) : 1;
  t->sto_read_bps = read + 0.5 >= 1 ? (rate_bps)(read + 0.5) : 1;
  t->sto_drive0 = t->l_pcie + t->sto_node0 * pcie_per_node;
  t->sto_drive_end = t->l_pcie + t->nodes * pcie_per_node;
  for (uint32_t n = t->sto_node0; n < t->nodes; n++) {
    for (uint32_t i = 0; i < t->npn; i++) {
      topo_link *l = &t->link[t->l_endpoint + n * t->npn + i];
      rate_bps r = (rate_bps)((double)cfg->storage.nic.bandwidth * nic_share + 0.5);
      l->bps = r ? r : 1;
    }
    for (uint32_t x = 0; x < pcie_per_node; x++)
      t->link[t->l_pcie + n * pcie_per_node + x].bps = t->sto_write_bps;
  }
}

rate_bps topo_channel_bps(const topo *t, uint32_t ch) {
  uint32_t l = ch / 2;
  if (l >= t->sto_drive0 && l < t->sto_drive_end)
    return ch & 1 ? t->sto_write_bps : t->sto_read_bps;
  return t->link[l].bps;
}

uint32_t topo_endpoint_count(const topo *t) { return t->gpus; }
uint32_t topo_storage_servers(const topo *t) { return t->sto_servers; }
uint32_t topo_storage_endpoints(const topo *t) { return t->sto_span * t->gpn; }

uint32_t topo_storage_endpoint(const topo *t, uint32_t server, uint32_t i) {
  return (t->sto_node0 + server * t->sto_span) * t->gpn + i;
}

uint32_t topo_storage_leaf(const topo *t, uint32_t server) {
  return topo_nic_leaf(t, (t->sto_node0 + server * t->sto_span) * t->npn);
}

void topo_storage_fabric_cfg(cfg_scenario *out, const cfg_scenario *cfg) {
  *out = *cfg;
  out->cluster.nic.per_node = cfg->storage.frontend.per_node;
  out->cluster.nic.bandwidth = cfg->storage.frontend.bandwidth;
  out->fabric.topology = CFG_TOPO_FAT_TREE;
  out->fabric.planes = 1;
  out->fabric.tiers = cfg->storage.fabric.tiers;
  out->fabric.switch_radix = cfg->storage.fabric.switch_radix;
  out->fabric.oversubscription = cfg->storage.fabric.oversubscription;
  out->fabric.link_bandwidth = cfg->storage.fabric.link_bandwidth;
  out->storage.attach = CFG_STORAGE_BACKEND; /* the servers are on this fabric */
  out->management.enabled = false;
}

int topo_build_storage(topo **out, cfg_scenario *derived, const cfg_scenario *cfg, sim_error *err) {
  *out = NULL;
  topo_storage_fabric_cfg(derived, cfg);
  int rc = topo_build(out, derived, NULL, err);
  if (rc != SIM_OK) {
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    snprintf(err->msg, sizeof err->msg,
             "the storage fabric (storage.fabric.*, storage.frontend.*): %.900s", msg);
  }
  return rc;
}

static uint64_t ceil_u64(uint64_t a, uint64_t b) { return b ? a / b + (a % b != 0) : 0; }

void topo_management_of(const cfg_scenario *cfg, uint64_t ports, topo_management *out) {
  memset(out, 0, sizeof *out);
  if (!cfg->management.enabled) return;
  out->ports = ports;
  out->switches = ceil_u64(ports, cfg->management.switch_ports);
  uint64_t up = out->switches > 1 ? out->switches * cfg->management.uplinks : 0;
  out->aggregation = ceil_u64(up, cfg->management.aggregation_radix);
  out->cables = ports + up;
  out->cost_usd = (double)out->switches * cfg->management.switch_usd +
                  (double)out->aggregation * cfg->management.aggregation_usd +
                  (double)out->cables * cfg->management.cable_usd;
}

int topo_networks_of(const topo *t, const cfg_scenario *cfg, topo_networks *out, sim_error *err) {
  memset(out, 0, sizeof *out);
  const topo_inventory *inv = &t->inv;
  uint64_t switches = inv->switches;
  out->storage_servers = cfg->storage.servers;
  out->storage_cost_usd = (double)cfg->storage.servers * cfg->storage.server_usd;
  out->storage_power_w = (double)cfg->storage.servers * cfg->storage.server_w;
  out->separate = cfg->storage.servers && cfg->storage.attach == CFG_STORAGE_SEPARATE;
  if (out->separate) {
    cfg_scenario derived;
    topo *st = NULL;
    int rc = topo_build_storage(&st, &derived, cfg, err);
    if (rc != SIM_OK) return rc;
    out->storage_fabric = st->inv;
    switches += st->inv.switches;
    topo_free(st);
  }
  topo_management_of(cfg, inv->nodes + cfg->storage.servers + switches, &out->management);
  out->cost_usd = out->storage_cost_usd + (out->separate ? out->storage_fabric.cost_usd : 0) +
                  out->management.cost_usd;
  return SIM_OK;
}
