/* Whether two placed jobs can meet on a fabric link (plc_may_share_links).
 *
 * fabsim routes up/down over fat-tree planes (src/topo/route.c): a transfer
 * climbs only to the lowest tier its two NICs share, whatever the routing
 * mode picks among the equal-cost ports (static, ECMP, adaptive, spray), and
 * reroutes around failed links on such paths too. Every fabric link belongs
 * to one switch below it:
 *   - a NIC's link to its leaf: its node;
 *   - a leaf-to-spine (or leaf-to-aggregation) link: its leaf, and it carries
 *     only traffic from or to a NIC on that leaf that leaves it;
 *   - an aggregation-to-core link (3 tiers): its aggregation switch's pod, and
 *     it carries only traffic between a NIC in that pod and one outside it.
 * NVLink and PCIe are inside a node. So two jobs on disjoint nodes share a
 * link only if they have a leaf in common, or a pod (of one plane) in common
 * while each has NICs in another pod of that plane. The test is exact for
 * "no" and conservative for "yes" (sharing a leaf need not mean sharing a
 * link: e.g. ring traffic that never leaves the leaf).
 */
#include <stdlib.h>
#include <string.h>

#include "place/place_internal.h"

typedef struct footprint {
  uint32_t *leaves; /* leaf vertices of the job's NICs, ascending, distinct */
  uint32_t nleaves;
  uint64_t *pods; /* (plane << 32 | pod) of those leaves, ascending, distinct */
  uint32_t npods;
} footprint;

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Sorts and drops repeats; returns the new length. */
/* Sorts v (n elements of `size` bytes) and keeps each value once at its
 * front; returns how many. O(n log n). */
static uint32_t distinct(void *v, uint32_t n, size_t size, int (*cmp)(const void *, const void *)) {
  qsort(v, n, size, cmp);
  char *b = v;
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++)
    if (k == 0 || cmp(b + (k - 1) * size, b + (size_t)i * size) != 0)
      memmove(b + (size_t)k++ * size, b + (size_t)i * size, size);
  return k;
}

/* O(n x nics per node x log). */
static void footprint_of(const topo *t, const uint32_t *nodes, uint32_t n, footprint *f) {
  uint32_t npn = topo_nic_count(t) / topo_node_count(t);
  uint32_t total = n * npn;
  f->leaves = sim_malloc(((size_t)total + 1) * sizeof *f->leaves);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < npn; k++)
      f->leaves[i * npn + k] = topo_nic_leaf(t, nodes[i] * npn + k);
  f->nleaves = distinct(f->leaves, total, sizeof *f->leaves, cmp_u32);
  f->pods = sim_malloc(((size_t)f->nleaves + 1) * sizeof *f->pods);
  for (uint32_t i = 0; i < f->nleaves; i++) {
    const topo_vertex *x = topo_vertex_at(t, f->leaves[i]);
    f->pods[i] = (uint64_t)(uint16_t)x->plane << 32 | x->pod;
  }
  f->npods = distinct(f->pods, f->nleaves, sizeof *f->pods, cmp_u64);
}

static void footprint_free(footprint *f) {
  sim_free(f->leaves);
  sim_free(f->pods);
}

/* The lowest leaf of f in pod (plane << 32 | pod). */
static uint32_t leaf_in_pod(const topo *t, const footprint *f, uint64_t pod) {
  for (uint32_t i = 0; i < f->nleaves; i++) {
    const topo_vertex *x = topo_vertex_at(t, f->leaves[i]);
    if (((uint64_t)(uint16_t)x->plane << 32 | x->pod) == pod) return f->leaves[i];
  }
  return UINT32_MAX;
}

/* Whether f has a pod other than `pod` in pod's plane (pods sorted by
 * plane, then pod). */
static bool other_pod_in_plane(const footprint *f, uint64_t pod) {
  for (uint32_t i = 0; i < f->npods; i++)
    if (f->pods[i] >> 32 == pod >> 32 && f->pods[i] != pod) return true;
  return false;
}

void plc_sharing_of(const topo *t, const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb,
                    plc_sharing *out) {
  footprint fa, fb;
  footprint_of(t, a, na, &fa);
  footprint_of(t, b, nb, &fb);
  memset(out, 0, sizeof *out);
  out->first_leaf = out->first_pod_leaf = UINT32_MAX;
  for (uint32_t i = 0, j = 0; i < fa.nleaves && j < fb.nleaves;) {
    if (fa.leaves[i] == fb.leaves[j]) {
      if (!out->leaves++) out->first_leaf = fa.leaves[i];
      i++;
      j++;
    } else if (fa.leaves[i] < fb.leaves[j]) {
      i++;
    } else {
      j++;
    }
  }
  for (uint32_t i = 0, j = 0; i < fa.npods && j < fb.npods;) {
    if (fa.pods[i] == fb.pods[j]) {
      if (other_pod_in_plane(&fa, fa.pods[i]) && other_pod_in_plane(&fb, fb.pods[j]) &&
          !out->pods++)
        out->first_pod_leaf = leaf_in_pod(t, &fa, fa.pods[i]);
      i++;
      j++;
    } else if (fa.pods[i] < fb.pods[j]) {
      i++;
    } else {
      j++;
    }
  }
  footprint_free(&fa);
  footprint_free(&fb);
}

bool plc_may_share_links(const topo *t, const uint32_t *a, uint32_t na, const uint32_t *b,
                         uint32_t nb) {
  plc_sharing s;
  plc_sharing_of(t, a, na, b, nb, &s);
  return s.leaves || s.pods;
}
