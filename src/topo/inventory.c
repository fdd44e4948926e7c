/* Inventory: counts, optics, cost and bisection bandwidth, computed once at
 * build time from the shape (O(1)).
 *
 * Optics: every switch-switch link is optical (a transceiver at each end).
 * Endpoint (NIC-leaf) links are optical too when cost.optical_endpoint_links,
 * else one copper (DAC) cable each. NVLink and PCIe are inside the server
 * and not counted.
 *
 * Bisection bandwidth (per direction) of one plane. Split the plane's E
 * endpoints into two halves A and B of E/2. Traffic from A to B must cross
 * each of these cuts, and for a tree the cheapest equal split is one aligned
 * with the tree (unaligned splits cut through more subtrees and cost more):
 *   (a) the endpoint links of A:                     E/2 * nic_bw
 *   (b) A = half of the leaves; their uplinks:        L/2 * up * link_bw
 *       (only when L > 1: a single leaf is one crossbar)
 *   (c) 3-tier, A = half of the pods; the uplinks of their spines:
 *       P/2 * up * (k/2) * link_bw                    (only when P > 1)
 * Spines and cores are non-blocking crossbars, so no other cut is smaller.
 * Bisection = min(a, b, c) = min(E*nic_bw, L*up*link_bw, P*up*(k/2)*link_bw) / 2,
 * summed over the planes (planes are disjoint). The rail-optimized fabric is
 * one such tree over all its leaves. Partially populated fabrics use the
 * built counts (exact when halves can be aligned, i.e. even L and P); a
 * partial 3-tier build has fewer cores but every spine keeps its k/2 up
 * links (bundles of parallel links, fattree.c), so cut (c) is unchanged.
 */
#include "topo/topo_internal.h"

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* a * b, saturating at UINT64_MAX (bits per second of huge fabrics). */
static uint64_t mul_sat(uint64_t a, uint64_t b) {
  return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

void topo__inventory(topo *t, const cfg_scenario *cfg) {
  topo_inventory *inv = &t->inv;
  const topo__shape *s = &t->s;
  inv->nodes = t->cnodes;
  inv->gpus = t->cgpus;
  inv->endpoints = t->nics;
  inv->switches_by_tier[TOPO_TIER_LEAF] = (uint64_t)t->planes * s->leaves;
  inv->switches_by_tier[TOPO_TIER_SPINE] = (uint64_t)t->planes * s->spines;
  inv->switches_by_tier[TOPO_TIER_CORE] = (uint64_t)t->planes * s->cores;
  inv->switches = (uint64_t)t->planes * s->switches;
  inv->links_endpoint_switch = t->nics;
  inv->links_switch_switch = (uint64_t)t->planes * (s->ls_links + s->sc_links);
  inv->transceivers = 2 * inv->links_switch_switch;
  if (cfg->cost.optical_endpoint_links) inv->transceivers += 2 * inv->links_endpoint_switch;
  else inv->copper_cables = inv->links_endpoint_switch;
  inv->storage_servers = t->sto_servers;
  inv->storage_nics = (uint64_t)t->sto_servers * t->sto_span * t->npn;
  inv->storage_cost_usd = (double)t->sto_servers * cfg->storage.server_usd;
  inv->storage_power_w = (double)t->sto_servers * cfg->storage.server_w;
  inv->cost_usd = (double)inv->switches * cfg->cost.switch_usd +
                  (double)(inv->endpoints - inv->storage_nics) * cfg->cost.nic_usd +
                  (double)inv->transceivers * cfg->cost.transceiver_usd +
                  (double)inv->copper_cables * cfg->cost.cable_usd;
  inv->cost_per_endpoint_usd = inv->endpoints ? inv->cost_usd / (double)inv->endpoints : 0.0;

  uint64_t per_plane_endpoints = t->nics / t->planes;
  const rate_bps link_bw = cfg->fabric.link_bandwidth;
  uint64_t cut = mul_sat(per_plane_endpoints, cfg->cluster.nic.bandwidth);
  if (s->leaves > 1) cut = min_u64(cut, mul_sat((uint64_t)s->leaves * s->up, link_bw));
  if (s->tiers == 3 && s->pods > 1)
    cut = min_u64(cut, mul_sat((uint64_t)s->pods * s->up * s->half, link_bw));
  inv->bisection_bandwidth_bps = mul_sat(cut / 2, t->planes);

  inv->max_nodes = t->max_nodes;
  inv->switches_full = (uint64_t)t->planes * s->switches_full;
  uint64_t nics_full = (uint64_t)t->max_nodes * t->npn, opt_full = 2 * t->planes * s->links_full;
  if (cfg->cost.optical_endpoint_links) opt_full += 2 * nics_full;
  inv->cost_usd_full =
      (double)inv->switches_full * cfg->cost.switch_usd + (double)nics_full * cfg->cost.nic_usd +
      (double)opt_full * cfg->cost.transceiver_usd +
      (cfg->cost.optical_endpoint_links ? 0.0 : (double)nics_full * cfg->cost.cable_usd);
  inv->planes = t->planes;
  inv->tiers = s->tiers;
  inv->leaf_down = s->down;
  inv->leaf_up = s->up;
  inv->oversubscription = (double)s->down / (double)s->up;
}

const topo_inventory *topo_inventory_get(const topo *t) { return &t->inv; }
