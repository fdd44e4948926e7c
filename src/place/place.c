/* plc_place: the request's checks and the policies but topology-aware
 * (topo_aware.c); plc_fragment. Each policy fills out[0 .. n) in rank order
 * from nodes it has checked are free; O(nodes) each, random O(nodes) draws.
 */
#include <string.h>

#include "place/place_internal.h"

static void place_packed(const plc__view *v, const plc_nodeset *taken, uint32_t n, uint32_t *out) {
  uint32_t got = 0;
  for (uint32_t i = 0; i < v->nodes && got < n; i++)
    if (plc__free(taken, i)) out[got++] = i;
}

/* Leaves in round-robin order: the first leaf with free nodes of every pod,
 * then the second of every pod, ... so consecutive picks change leaf and,
 * while pods last, pod. */
static uint32_t *spread_leaf_order(const plc__view *v, const uint32_t *leaf_free) {
  uint32_t *order = sim_malloc((size_t)v->leaves * sizeof *order + 1);
  uint32_t *pos = sim_calloc((size_t)v->leaves + 1, sizeof *pos); /* position within its pod */
  uint32_t *count = sim_calloc((size_t)v->pods + 1, sizeof *count);
  uint32_t depth = 0;
  for (uint32_t L = 0; L < v->leaves; L++) {
    if (!leaf_free[L]) continue;
    pos[L] = count[v->leaf_pod[L]]++;
    if (pos[L] + 1 > depth) depth = pos[L] + 1;
  }
  uint32_t k = 0;
  for (uint32_t d = 0; d < depth; d++)
    for (uint32_t L = 0; L < v->leaves; L++)
      if (leaf_free[L] && pos[L] == d) order[k++] = L;
  for (; k < v->leaves; k++) order[k] = UINT32_MAX; /* leaves without a free node */
  sim_free(pos);
  sim_free(count);
  return order;
}

static void place_spread(const plc__view *v, const plc_nodeset *taken, uint32_t n, uint32_t *out) {
  uint32_t *leaf_free = plc__leaf_free(v, taken);
  uint32_t *order = spread_leaf_order(v, leaf_free);
  uint32_t *next = sim_malloc((size_t)v->leaves * sizeof *next + 1); /* scan cursor per leaf */
  memcpy(next, v->leaf_first, (size_t)v->leaves * sizeof *next);
  uint32_t got = 0;
  while (got < n) {
    for (uint32_t k = 0; k < v->leaves && order[k] != UINT32_MAX && got < n; k++) {
      uint32_t L = order[k];
      while (next[L] < v->leaf_first[L + 1] && !plc__free(taken, v->leaf_node[next[L]])) next[L]++;
      if (next[L] < v->leaf_first[L + 1]) out[got++] = v->leaf_node[next[L]++];
    }
  }
  sim_free(next);
  sim_free(order);
  sim_free(leaf_free);
}

/* The first n of a Fisher-Yates shuffle of the free nodes (in index order
 * before the shuffle), drawn from stream `stream` of seed. */
static void shuffle_free(const plc_nodeset *taken, uint32_t nodes, uint32_t n, uint64_t seed,
                         const char *stream, uint32_t *out) {
  uint32_t *free_nodes = sim_malloc((size_t)nodes * sizeof *free_nodes + 1);
  uint32_t nfree = 0;
  for (uint32_t i = 0; i < nodes; i++)
    if (plc__free(taken, i)) free_nodes[nfree++] = i;
  sim_rng rng;
  sim_rng_init(&rng, seed, stream);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t j = i + (uint32_t)sim_rng_below(&rng, nfree - i);
    uint32_t x = free_nodes[j];
    free_nodes[j] = free_nodes[i];
    free_nodes[i] = x;
    out[i] = x;
  }
  sim_free(free_nodes);
}

static int check_explicit(const plc__view *v, const plc_nodeset *taken, const plc_request *req,
                          uint32_t *out, sim_error *err) {
  if (!req->list)
    return sim_fail(err, SIM_EINVAL, "placement: explicit needs a node list of %u nodes",
                    req->nodes);
  uint32_t *rank_of = sim_malloc((size_t)v->nodes * sizeof *rank_of);
  memset(rank_of, 0xff, (size_t)v->nodes * sizeof *rank_of);
  int rc = SIM_OK;
  for (uint32_t r = 0; r < req->nodes; r++) {
    uint32_t x = req->list[r];
    if (x >= v->nodes) {
      rc = sim_fail(err, SIM_EINVAL,
                    "placement: node %u (rank %u) is out of range: the cluster has %u nodes, "
                    "0 .. %u",
                    x, r, v->nodes, v->nodes - 1);
      goto out;
    }
    if (rank_of[x] != UINT32_MAX) {
      rc = sim_fail(err, SIM_EINVAL,
                    "placement: node %u is listed twice (ranks %u and %u); a node runs one rank "
                    "group",
                    x, rank_of[x], r);
      goto out;
    }
    if (!plc__free(taken, x)) {
      rc = sim_fail(err, SIM_EINVAL,
                    "placement: node %u (rank %u) is taken by another job; choose a free node", x,
                    r);
      goto out;
    }
    rank_of[x] = r;
    out[r] = x;
  }
out:
  sim_free(rank_of);
  return rc;
}

int plc_place(const topo *t, const plc_nodeset *taken, const plc_request *req, uint32_t *out,
              sim_error *err) {
  uint32_t nodes = topo_node_count(t);
  if (taken && taken->nodes != nodes)
    return sim_fail(err, SIM_EINVAL,
                    "placement: the taken-node set is sized for %u nodes, the cluster has %u",
                    taken->nodes, nodes);
  if ((unsigned)req->policy >= PLC_POLICY_COUNT)
    return sim_fail(err, SIM_EINVAL, "placement: unknown policy %d", (int)req->policy);
  if (req->nodes == 0) return sim_fail(err, SIM_EINVAL, "placement: a job needs at least one node");
  uint32_t nfree = nodes - (taken ? plc_nodeset_count(taken) : 0);
  if (req->nodes > nfree)
    return sim_fail(err, SIM_ERANGE,
                    "placement: %s wants %u nodes, but only %u of the cluster's %u are free "
                    "(%u taken by other jobs)",
                    plc_policy_name(req->policy), req->nodes, nfree, nodes, nodes - nfree);
  if (req->policy == PLC_RANDOM) {
    shuffle_free(taken, nodes, req->nodes, req->seed, "place.random", out);
    return SIM_OK;
  }
  plc__view v;
  plc__view_init(&v, t);
  int rc = SIM_OK;
  switch (req->policy) {
  case PLC_PACKED: place_packed(&v, taken, req->nodes, out); break;
  case PLC_SPREAD: place_spread(&v, taken, req->nodes, out); break;
  case PLC_TOPOLOGY_AWARE: plc__topology_aware(&v, taken, req->nodes, out); break;
  default: rc = check_explicit(&v, taken, req, out, err); break;
  }
  plc__view_free(&v);
  return rc;
}

int plc_fragment(plc_nodeset *taken, double fraction, uint64_t seed, sim_error *err) {
  if (!(fraction >= 0.0 && fraction <= 1.0))
    return sim_fail(err, SIM_EINVAL, "fragment: fraction %g; allowed 0 .. 1", fraction);
  uint32_t want = (uint32_t)(fraction * taken->nodes + 0.5);
  uint32_t nfree = taken->nodes - plc_nodeset_count(taken);
  if (want > nfree)
    return sim_fail(err, SIM_EINVAL,
                    "fragment: %u of %u nodes would be taken, but only %u are free", want,
                    taken->nodes, nfree);
  uint32_t *pick = sim_malloc((size_t)want * sizeof *pick + 1);
  shuffle_free(taken, taken->nodes, want, seed, "place.fragment", pick);
  plc_nodeset_add_list(taken, pick, want);
  sim_free(pick);
  return SIM_OK;
}
