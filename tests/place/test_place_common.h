/* Shared by the placement tests (header-only). Topologies come from the real
 * config loader with --set strings. The closed forms below are written from
 * the topology contract, not from src/place: a leaf of radix k at
 * oversubscription 1 has k/2 down ports; a node puts N/P NICs in each plane
 * (N NICs, P planes), so a leaf holds (k/2) / (N/P) nodes; a 3-tier pod is k/2
 * leaves. Include after <cmocka.h>. */
#ifndef TEST_PLACE_COMMON_H
#define TEST_PLACE_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/config.h"
#include "fabsim/place.h"
#include "fabsim/topo.h"

typedef struct pcase {
  const char *kind; /* fabric.topology */
  uint32_t k, tiers, planes, nodes, gpn, npn;
} pcase;

/* 2-tier radix 8: 8 leaves of 4 one-NIC nodes */
static const pcase PC_FT2 = {"fat-tree", 8, 2, 1, 32, 1, 1};
/* 3-tier radix 8: 4 pods of 4 leaves of 4 nodes (64 of the 128 the fabric holds) */
static const pcase PC_FT3 = {"fat-tree", 8, 3, 1, 64, 1, 1};
/* multi-plane: 2 planes, 2 NICs per node (one per plane), 4 nodes per leaf */
static const pcase PC_MP2 = {"multi-plane", 8, 2, 2, 32, 2, 2};
/* multi-plane 3-tier: 2 planes, 4 pods of 4 leaves of 4 nodes */
static const pcase PC_MP3 = {"multi-plane", 8, 3, 2, 64, 2, 2};
/* rail-optimized: groups of 4 two-NIC nodes, one leaf per rail and group */
static const pcase PC_RAIL = {"rail-optimized", 8, 2, 1, 16, 2, 2};
/* rail-optimized 3-tier: a pod's 4 leaves are 2 groups' 2 rails */
static const pcase PC_RAIL3 = {"rail-optimized", 8, 3, 1, 64, 2, 2};

static inline topo *pc_build(const pcase *c) {
  char buf[8][64];
  const char *sets[8];
  int n = 0;
  snprintf(buf[n], sizeof buf[n], "fabric.topology=%s", c->kind), n++;
  snprintf(buf[n], sizeof buf[n], "fabric.switch_radix=%u", c->k), n++;
  snprintf(buf[n], sizeof buf[n], "fabric.tiers=%u", c->tiers), n++;
  snprintf(buf[n], sizeof buf[n], "cluster.nodes=%u", c->nodes), n++;
  snprintf(buf[n], sizeof buf[n], "cluster.gpus_per_node=%u", c->gpn), n++;
  snprintf(buf[n], sizeof buf[n], "cluster.nic.per_node=%u", c->npn), n++;
  if (strcmp(c->kind, "multi-plane") == 0)
    snprintf(buf[n], sizeof buf[n], "fabric.planes=%u", c->planes), n++;
  for (int i = 0; i < n; i++) sets[i] = buf[i];
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  sim_error err = {0};
  topo *t = NULL;
  if (cfg_load_buffer(&cfg, &doc, "test", "", 0, sets, n, &err) != SIM_OK) fail_msg("%s", err.msg);
  if (topo_build(&t, &cfg, doc, &err) != SIM_OK) fail_msg("%s", err.msg);
  cfg_free(&cfg, doc);
  return t;
}

static inline bool pc_rail(const pcase *c) { return strcmp(c->kind, "rail-optimized") == 0; }

/* Closed forms (oversubscription 1). Rail-optimized: a group of k/2 nodes. */
static inline uint32_t pc_nodes_per_leaf(const pcase *c) {
  if (pc_rail(c)) return c->k / 2;
  return (c->k / 2) / (c->npn / c->planes);
}
static inline uint32_t pc_leaf_of(const pcase *c, uint32_t node) {
  return node / pc_nodes_per_leaf(c);
}
/* A rail-optimized group g owns leaves g*N .. g*N+N-1: its pod is rail 0's. */
static inline uint32_t pc_pod_of(const pcase *c, uint32_t node) {
  if (c->tiers != 3) return 0;
  return pc_leaf_of(c, node) * (pc_rail(c) ? c->npn : 1) / (c->k / 2);
}
static inline uint32_t pc_leaves(const pcase *c) {
  return (c->nodes + pc_nodes_per_leaf(c) - 1) / pc_nodes_per_leaf(c);
}
static inline uint32_t pc_pods(const pcase *c) { return pc_pod_of(c, c->nodes - 1) + 1; }
static inline uint32_t pc_ceil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* Distinct values of f(c, nodes[i]). */
static inline uint32_t pc_distinct(const pcase *c, const uint32_t *nodes, uint32_t n,
                                   uint32_t (*f)(const pcase *, uint32_t)) {
  uint32_t count = 0;
  for (uint32_t i = 0; i < n; i++) {
    bool seen = false;
    for (uint32_t j = 0; j < i && !seen; j++) seen = f(c, nodes[j]) == f(c, nodes[i]);
    count += !seen;
  }
  return count;
}

/* Every node in range, distinct and not taken. */
static inline void pc_check_valid(const plc_nodeset *taken, uint32_t nodes, const uint32_t *out,
                                  uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    assert_true(out[i] < nodes);
    if (taken) assert_false(plc_nodeset_has(taken, out[i]));
    for (uint32_t j = 0; j < i; j++) assert_int_not_equal(out[i], out[j]);
  }
}

static inline plc_metrics pc_metrics(const topo *t, const uint32_t *nodes, uint32_t n) {
  plc_metrics m;
  sim_error err = {0};
  if (plc_metrics_of(t, nodes, n, &m, &err) != SIM_OK) fail_msg("%s", err.msg);
  return m;
}

static inline void pc_place(const topo *t, const plc_nodeset *taken, plc_policy p, uint32_t n,
                            uint64_t seed, uint32_t *out) {
  plc_request req = {.policy = p, .nodes = n, .seed = seed};
  sim_error err = {0};
  if (plc_place(t, taken, &req, out, &err) != SIM_OK)
    fail_msg("%s n=%u: %s", plc_policy_name(p), n, err.msg);
}

#endif
