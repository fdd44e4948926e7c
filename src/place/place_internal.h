/* Private to src/place: the fabric as placement sees it.
 *
 * A view groups the cluster's nodes by leaf and the leaves by pod, with dense
 * ids in the order of the leaves' and pods' own indices (leaf 0 of plane 0
 * first). Built per call from the topology, O(nodes); owned by the caller of
 * plc__view_init, freed with plc__view_free.
 */
#ifndef FABSIM_PLACE_INTERNAL_H
#define FABSIM_PLACE_INTERNAL_H

#include "fabsim/place.h"

typedef struct plc__view {
  uint32_t nodes, leaves, pods;
  uint32_t *node_leaf;  /* [nodes] dense leaf id */
  uint32_t *leaf_pod;   /* [leaves] dense pod id */
  uint32_t *leaf_first; /* [leaves + 1] leaf L's nodes: leaf_node[leaf_first[L] ..] */
  uint32_t *leaf_node;  /* [nodes] node ids grouped by leaf, ascending within */
} plc__view;

void plc__view_init(plc__view *v, const topo *t);
void plc__view_free(plc__view *v);
static inline uint32_t plc__node_pod(const plc__view *v, uint32_t node) {
  return v->leaf_pod[v->node_leaf[node]];
}
static inline bool plc__free(const plc_nodeset *taken, uint32_t node) {
  return !taken || !plc_nodeset_has(taken, node);
}
/* Free nodes per leaf ([leaves], sim_malloc'd). O(nodes). */
uint32_t *plc__leaf_free(const plc__view *v, const plc_nodeset *taken);
/* Sorts nodes[0 .. n) by (pod, leaf, node): a ring over them crosses each
 * leaf and pod boundary once. O(n log n). */
void plc__sort_by_tree(const plc__view *v, uint32_t *nodes, uint32_t n);

/* topo_aware.c: places req->nodes nodes (enough are free: checked). */
void plc__topology_aware(const plc__view *v, const plc_nodeset *taken, uint32_t n, uint32_t *out);

#endif
