/* Topology-aware placement: fewest leaves, then fewest pods, best fit.
 *
 * Slurm's topology/tree plugin picks the lowest-level switch whose subtree
 * can hold the job and then its leaf switches by best fit
 * (https://slurm.schedmd.com/topology.html, "Hierarchical Networks"). Here
 * the leaf count comes first, as the placement contract asks:
 *   k      the fewest leaves that hold n nodes: the leaves' free counts in
 *          descending order, the shortest prefix summing to n (exact: no k-1
 *          leaves can hold more than the k-1 largest);
 *   pods   one pod when one pod's k largest leaves hold n; among those pods
 *          the one leaving the fewest free nodes unused on its chosen
 *          leaves (best fit). Otherwise pods join in descending order of the
 *          free nodes in their k largest leaves until their leaves can hold n
 *          (a greedy: the fewest pods is not guaranteed);
 *   leaves in the chosen pods, the k-1 with the most free nodes and then the
 *          smallest that covers the rest (best fit);
 *   nodes  each chosen leaf's lowest free nodes, ranked by (pod, leaf, node).
 * Cost O(leaves log leaves + pods x leaves + nodes log nodes).
 */
#include <assert.h>
#include <stdlib.h>

#include "place/place_internal.h"

typedef struct leaf_rank {
  uint32_t pod, free, leaf;
} leaf_rank;

static int cmp_u32(uint32_t a, uint32_t b) { return (a > b) - (a < b); }

/* most free first, then lower leaf */
static int by_free(const void *a, const void *b) {
  const leaf_rank *x = a, *y = b;
  int c = cmp_u32(y->free, x->free);
  return c ? c : cmp_u32(x->leaf, y->leaf);
}

static int by_pod_free(const void *a, const void *b) {
  const leaf_rank *x = a, *y = b;
  int c = cmp_u32(x->pod, y->pod);
  return c ? c : by_free(a, b);
}

/* Of cand[0 .. nc) (sorted by_free), the k-1 largest and then the smallest
 * that covers the rest, into pick[0 .. k): returns the chosen leaves' free
 * nodes beyond n (the best fit's leftover), or UINT32_MAX when they cannot
 * hold n. O(nc). */
static uint32_t pick_leaves(const leaf_rank *cand, uint32_t nc, uint32_t k, uint32_t n,
                            uint32_t *pick) {
  if (nc < k) return UINT32_MAX;
  uint32_t sum = 0;
  for (uint32_t i = 0; i + 1 < k; i++) {
    sum += cand[i].free;
    pick[i] = cand[i].leaf;
  }
  assert(sum < n); /* k is the fewest leaves anywhere */
  uint32_t rest = n - sum, best = UINT32_MAX;
  for (uint32_t i = k - 1; i < nc; i++)
    if (cand[i].free >= rest && (best == UINT32_MAX || cand[i].free < cand[best].free)) best = i;
  if (best == UINT32_MAX) return UINT32_MAX;
  pick[k - 1] = cand[best].leaf;
  return cand[best].free - rest;
}

/* The fewest leaves holding n: the shortest prefix of ranked (by_free). */
static uint32_t fewest_leaves(const leaf_rank *ranked, uint32_t nl, uint32_t n) {
  uint32_t sum = 0, k = 0;
  (void)nl; /* only the assert reads it */
  while (sum < n) {
    assert(k < nl); /* the caller checked there are n free nodes */
    sum += ranked[k++].free;
  }
  return k;
}

/* Best single pod: pick gets its k leaves; false when no pod holds n on k
 * leaves. by_pod lists each pod's leaves contiguously, by_free within. */
static bool single_pod(const leaf_rank *by_pod, uint32_t nl, uint32_t k, uint32_t n, uint32_t *pick,
                       uint32_t *scratch) {
  uint32_t best_left = UINT32_MAX;
  for (uint32_t lo = 0, hi; lo < nl; lo = hi) {
    for (hi = lo; hi < nl && by_pod[hi].pod == by_pod[lo].pod; hi++) {
    }
    uint32_t left = pick_leaves(by_pod + lo, hi - lo, k, n, scratch);
    if (left < best_left) { /* strict: ties go to the lower pod */
      best_left = left;
      for (uint32_t i = 0; i < k; i++) pick[i] = scratch[i];
    }
  }
  return best_left != UINT32_MAX;
}

/* Pods joined greedily (most free nodes in their k largest leaves first)
 * until the union's leaves hold n; pick gets the k leaves. */
static void several_pods(const plc__view *v, const leaf_rank *ranked, const leaf_rank *by_pod,
                         uint32_t nl, uint32_t k, uint32_t n, uint32_t *pick) {
  leaf_rank *pods = sim_calloc((size_t)v->pods, sizeof *pods); /* .free: top-k sum */
  for (uint32_t p = 0; p < v->pods; p++) pods[p].leaf = p;
  for (uint32_t lo = 0, hi; lo < nl; lo = hi) {
    for (hi = lo; hi < nl && by_pod[hi].pod == by_pod[lo].pod; hi++)
      if (hi - lo < k) pods[by_pod[lo].pod].free += by_pod[hi].free;
  }
  qsort(pods, v->pods, sizeof *pods, by_free);
  bool *chosen = sim_calloc((size_t)v->pods, sizeof *chosen);
  leaf_rank *cand = sim_malloc((size_t)nl * sizeof *cand);
  for (uint32_t j = 0; j < v->pods; j++) {
    chosen[pods[j].leaf] = true;
    uint32_t nc = 0;
    for (uint32_t i = 0; i < nl; i++)
      if (chosen[ranked[i].pod]) cand[nc++] = ranked[i];
    if (pick_leaves(cand, nc, k, n, pick) != UINT32_MAX) break;
  }
  sim_free(cand);
  sim_free(chosen);
  sim_free(pods);
}

void plc__topology_aware(const plc__view *v, const plc_nodeset *taken, uint32_t n, uint32_t *out) {
  uint32_t *leaf_free = plc__leaf_free(v, taken);
  leaf_rank *ranked = sim_malloc((size_t)v->leaves * sizeof *ranked);
  uint32_t nl = 0;
  for (uint32_t L = 0; L < v->leaves; L++)
    if (leaf_free[L]) ranked[nl++] = (leaf_rank){v->leaf_pod[L], leaf_free[L], L};
  leaf_rank *by_pod = sim_malloc((size_t)nl * sizeof *by_pod + 1);
  for (uint32_t i = 0; i < nl; i++) by_pod[i] = ranked[i];
  qsort(ranked, nl, sizeof *ranked, by_free);
  qsort(by_pod, nl, sizeof *by_pod, by_pod_free);

  uint32_t k = fewest_leaves(ranked, nl, n);
  uint32_t *pick = sim_malloc((size_t)k * sizeof *pick);
  uint32_t *scratch = sim_malloc((size_t)k * sizeof *scratch);
  if (!single_pod(by_pod, nl, k, n, pick, scratch)) several_pods(v, ranked, by_pod, nl, k, n, pick);

  /* every chosen leaf's free nodes but the last's are taken; the last gives
   * its lowest free nodes until n */
  uint32_t got = 0;
  for (uint32_t i = 0; i < k; i++) {
    uint32_t L = pick[i];
    for (uint32_t j = v->leaf_first[L]; j < v->leaf_first[L + 1] && got < n; j++)
      if (plc__free(taken, v->leaf_node[j])) out[got++] = v->leaf_node[j];
  }
  assert(got == n);
  plc__sort_by_tree(v, out, n);
  sim_free(scratch);
  sim_free(pick);
  sim_free(by_pod);
  sim_free(ranked);
  sim_free(leaf_free);
}
