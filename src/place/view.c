/* Node sets, the policy names and the placement view of a topology.
 *
 * The view reads only the public topology: node n's leaf is the leaf vertex
 * of its first NIC (topo_nic_leaf), whose index (within its plane) and pod
 * come from topo_vertex_at. Leaf and pod ids are made dense in index order,
 * so dense leaf order is also pod order (a pod is a run of consecutive
 * leaves: leaf / (radix / 2)).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "place/place_internal.h"

void plc_nodeset_init(plc_nodeset *s, uint32_t nodes) {
  s->nodes = nodes;
  s->words = sim_calloc((size_t)nodes / 64 + 1, sizeof *s->words);
}

void plc_nodeset_free(plc_nodeset *s) {
  sim_free(s->words);
  s->words = NULL;
  s->nodes = 0;
}

bool plc_nodeset_has(const plc_nodeset *s, uint32_t node) {
  return node < s->nodes && (s->words[node / 64] >> (node % 64) & 1u);
}

void plc_nodeset_add(plc_nodeset *s, uint32_t node) {
  assert(node < s->nodes);
  s->words[node / 64] |= (uint64_t)1 << (node % 64);
}

void plc_nodeset_add_list(plc_nodeset *s, const uint32_t *nodes, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) plc_nodeset_add(s, nodes[i]);
}

uint32_t plc_nodeset_count(const plc_nodeset *s) {
  uint32_t c = 0;
  for (uint32_t w = 0; w <= s->nodes / 64; w++) c += (uint32_t)__builtin_popcountll(s->words[w]);
  return c;
}

static const char *const policy_names[] = {
#define PLC__POLICY_NAME(e, name, doc) name,
    PLC_POLICY_MAP(PLC__POLICY_NAME)
#undef PLC__POLICY_NAME
};

const char *plc_policy_name(plc_policy p) {
  return (unsigned)p < PLC_POLICY_COUNT ? policy_names[p] : "?";
}

int plc_policy_parse(const char *name, plc_policy *out) {
  for (int p = 0; p < PLC_POLICY_COUNT; p++)
    if (strcmp(name, policy_names[p]) == 0) {
      *out = (plc_policy)p;
      return SIM_OK;
    }
  return SIM_ENOENT;
}

uint32_t plc_nodes_for_gpus(const topo *t, uint64_t gpus) {
  uint64_t gpn = topo_gpu_count(t) / topo_node_count(t);
  uint64_t n = gpus / gpn + (gpus % gpn != 0);
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* The leaf vertex of node n's first NIC. */
static const topo_vertex *node_leaf_vertex(const topo *t, uint32_t npn, uint32_t node) {
  return topo_vertex_at(t, topo_nic_leaf(t, node * npn));
}

void plc__view_init(plc__view *v, const topo *t) {
  memset(v, 0, sizeof *v);
  uint32_t n = topo_node_count(t), npn = topo_nic_count(t) / n;
  v->nodes = n;
  /* raw leaf index -> dense id, in index order */
  uint32_t raw_max = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t x = node_leaf_vertex(t, npn, i)->index;
    if (x > raw_max) raw_max = x;
  }
  uint32_t *dense = sim_calloc((size_t)raw_max + 1, sizeof *dense);
  for (uint32_t i = 0; i < n; i++) dense[node_leaf_vertex(t, npn, i)->index] = 1;
  for (uint32_t x = 0; x <= raw_max; x++) {
    uint32_t present = dense[x];
    dense[x] = v->leaves;
    v->leaves += present;
  }
  v->node_leaf = sim_malloc((size_t)n * sizeof *v->node_leaf);
  v->leaf_pod = sim_malloc((size_t)v->leaves * sizeof *v->leaf_pod);
  v->leaf_first = sim_calloc((size_t)v->leaves + 1, sizeof *v->leaf_first);
  v->leaf_node = sim_malloc((size_t)n * sizeof *v->leaf_node);
  uint32_t last_raw_pod = UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) {
    const topo_vertex *lv = node_leaf_vertex(t, npn, i);
    uint32_t L = dense[lv->index];
    v->node_leaf[i] = L;
    v->leaf_first[L + 1]++;
    /* pods are runs of consecutive leaves, and node order is leaf order */
    if (lv->pod != last_raw_pod) {
      assert(last_raw_pod == UINT32_MAX || lv->pod > last_raw_pod);
      last_raw_pod = lv->pod;
      v->pods++;
    }
    v->leaf_pod[L] = v->pods - 1;
  }
  for (uint32_t L = 0; L < v->leaves; L++) v->leaf_first[L + 1] += v->leaf_first[L];
  uint32_t *fill = sim_malloc((size_t)v->leaves * sizeof *fill);
  memcpy(fill, v->leaf_first, (size_t)v->leaves * sizeof *fill);
  for (uint32_t i = 0; i < n; i++) v->leaf_node[fill[v->node_leaf[i]]++] = i;
  sim_free(fill);
  sim_free(dense);
}

void plc__view_free(plc__view *v) {
  sim_free(v->node_leaf);
  sim_free(v->leaf_pod);
  sim_free(v->leaf_first);
  sim_free(v->leaf_node);
  memset(v, 0, sizeof *v);
}

uint32_t *plc__leaf_free(const plc__view *v, const plc_nodeset *taken) {
  uint32_t *f = sim_calloc((size_t)v->leaves, sizeof *f);
  for (uint32_t i = 0; i < v->nodes; i++)
    if (plc__free(taken, i)) f[v->node_leaf[i]]++;
  return f;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

void plc__sort_by_tree(const plc__view *v, uint32_t *nodes, uint32_t n) {
  /* dense leaf order is pod order, so (leaf, node) is (pod, leaf, node) */
  uint64_t *key = sim_malloc((size_t)n * sizeof *key + 1);
  for (uint32_t i = 0; i < n; i++) key[i] = (uint64_t)v->node_leaf[nodes[i]] << 32 | nodes[i];
  qsort(key, n, sizeof *key, cmp_u64);
  for (uint32_t i = 0; i < n; i++) nodes[i] = (uint32_t)key[i];
  sim_free(key);
}
