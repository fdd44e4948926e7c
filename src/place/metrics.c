/* Placement metrics: leaves and pods a job spans, and its ring's routes.
 *
 * A ring pair's route is topo_route between the two nodes' local GPU 0
 * (flow hash 0); the switches on it say which tiers it climbs. Up/down
 * routing climbs only as high as the two NICs' lowest common tier, so tier 2
 * on the path means different leaves and tier 3 different pods, whatever the
 * choice among equal-cost next hops. O(n x path) plus O(nodes) for the view.
 */
#include <string.h>

#include "place/place_internal.h"

typedef struct ring_hop {
  uint32_t switches;
  uint8_t top_tier; /* highest switch tier on the path (0: none) */
} ring_hop;

static int route_hop(const topo *t, uint32_t a, uint32_t b, ring_hop *h, sim_error *err) {
  uint32_t gpn = topo_gpu_count(t) / topo_node_count(t);
  topo_path p;
  int rc = topo_route(t, a * gpn, b * gpn, 0, &p);
  if (rc != SIM_OK)
    return sim_fail(err, rc, "placement metrics: no route from node %u to node %u", a, b);
  memset(h, 0, sizeof *h);
  for (uint32_t i = 0; i < p.n; i++) {
    const topo_vertex *x = topo_vertex_at(t, topo_channel_dst(t, p.ch[i]));
    if (x->kind != TOPO_SWITCH) continue;
    h->switches++;
    if (x->tier > h->top_tier) h->top_tier = x->tier;
  }
  return SIM_OK;
}

static int check_nodes(const plc__view *v, const uint32_t *nodes, uint32_t n, sim_error *err) {
  plc_nodeset seen;
  plc_nodeset_init(&seen, v->nodes);
  int rc = SIM_OK;
  for (uint32_t r = 0; r < n && rc == SIM_OK; r++) {
    if (nodes[r] >= v->nodes)
      rc = sim_fail(err, SIM_EINVAL, "placement metrics: node %u (rank %u) is out of range 0 .. %u",
                    nodes[r], r, v->nodes - 1);
    else if (plc_nodeset_has(&seen, nodes[r]))
      rc = sim_fail(err, SIM_EINVAL, "placement metrics: node %u is listed twice", nodes[r]);
    else plc_nodeset_add(&seen, nodes[r]);
  }
  plc_nodeset_free(&seen);
  return rc;
}

/* Distinct leaves and pods of nodes[0 .. n). */
static void count_spans(const plc__view *v, const uint32_t *nodes, uint32_t n, plc_metrics *m) {
  plc_nodeset leaves, pods;
  plc_nodeset_init(&leaves, v->leaves);
  plc_nodeset_init(&pods, v->pods);
  for (uint32_t r = 0; r < n; r++) {
    plc_nodeset_add(&leaves, v->node_leaf[nodes[r]]);
    plc_nodeset_add(&pods, plc__node_pod(v, nodes[r]));
  }
  m->leaves = plc_nodeset_count(&leaves);
  m->pods = plc_nodeset_count(&pods);
  plc_nodeset_free(&leaves);
  plc_nodeset_free(&pods);
}

int plc_metrics_of(const topo *t, const uint32_t *nodes, uint32_t n, plc_metrics *m,
                   sim_error *err) {
  memset(m, 0, sizeof *m);
  plc__view v;
  plc__view_init(&v, t);
  int rc = check_nodes(&v, nodes, n, err);
  if (rc != SIM_OK) goto out;
  m->nodes = n;
  m->planes = topo_inventory_get(t)->planes;
  count_spans(&v, nodes, n, m);
  m->ring_pairs = n >= 2 ? n : 0;
  for (uint32_t r = 0; r < m->ring_pairs; r++) {
    ring_hop h;
    rc = route_hop(t, nodes[r], nodes[(r + 1) % n], &h, err);
    if (rc != SIM_OK) goto out;
    m->ring_spine_pairs += h.top_tier >= TOPO_TIER_SPINE;
    m->ring_core_pairs += h.top_tier >= TOPO_TIER_CORE;
    if (r == 0 || h.switches < m->ring_hops_min) m->ring_hops_min = h.switches;
    if (h.switches > m->ring_hops_max) m->ring_hops_max = h.switches;
  }
out:
  plc__view_free(&v);
  return rc;
}
