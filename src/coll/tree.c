/* Double binary tree AllReduce (after NCCL's ncclGetBtree/ncclGetDtree).
 *
 * Across nodes (two or more whole node blocks of g ranks) the tree is
 * NCCL's: each node's ranks a chain in channel order, the chain's head under
 * the head of its node's parent in the node-level trees A and B below (over
 * node indices instead of positions); H = (g-1) + ceil(log2 m) and only the
 * heads cross nodes, on their channel's rail. On one node the tree is
 * NCCL's too: the chain alone (m = 1), H = g - 1, so a latency-bound call
 * takes 2 (g-1) NVLink steps (NCCL's tuner counts the same,
 * 2 (nRanks/nNodes - 1) intra-node hops). Over uneven blocks the trees are
 * over the ranks themselves, as follows.
 *
 * Tree A over positions 0..n-1: an in-order binary tree in which position r
 * (r >= 1, lowest set bit b) has children r - b/2 and r + b/2 (or the
 * largest r + b/2^i below n); position 0 is the root with one child, the
 * largest power of two below n. Tree B is A mirrored (r -> n-1-r, n even) or
 * shifted by one (n odd), so a rank interior in one tree is (nearly always) a
 * leaf in the other. Both trees have height H = ceil(log2 n).
 *
 * Each tree carries half the data (per channel S / (2 channels)) in C chunks
 * of at most `chunk` bytes, reduced up then broadcast down, pipelined: a
 * rank of height h sends chunk j to its parent at step j + h (once it has
 * chunk j from all children); the root has chunk j reduced after step
 * j + H - 1, so a rank of depth d forwards chunk j to its children at step
 * H + d + j. That is C + 2H - 1 steps; a step is a phase ending with its
 * slowest transfer, and steps with the same active edges are one phase
 * repeated. In the steady state a rank sends four chunks per step (up and
 * two down in the tree where it is interior, up in the other) and receives
 * four, so on a uniform network
 *   t = (C + 2H - 1) alpha + sum_steps d_s c / B,   c = S / (2 C),
 * with d_s <= 4 the busiest rank's chunks in step s; d_s = 4 in the steady
 * state, so for C >> H: t ~ (C + 2 log2 n) alpha + 2 S / B. For n = 2:
 * (C + 1) alpha + S / B; n = 4: (C + 3) alpha + (4C + 2) c / B (C >= 3).
 * Reduction compute is not modelled.
 *
 * Channels: channel c runs its own pair of trees over coll__ring_order's
 * rotation c, so its inter-node edges leave from other GPUs and NICs.
 * Cost: 4 (n-1) channels transfers, listed once in the plan's pool; each of
 * the O(log n) distinct steps is a slice of it.
 */
#include <stdlib.h>

#include "coll/coll_internal.h"

/* NCCL's in-order tree with root 0 (one child). */
static void btree_parents(uint32_t n, int32_t *parent) {
  parent[0] = -1;
  if (n < 2) return;
  uint32_t top = 1;
  while (top * 2 <= n - 1) top *= 2;
  parent[top] = 0;
  for (uint32_t r = 1; r < n; r++) {
    uint32_t b = r & (~r + 1);
    if (b < 2) continue;
    parent[r - b / 2] = (int32_t)r;
    for (uint32_t h = b / 2; h >= 1; h /= 2)
      if (r + h < n) {
        parent[r + h] = (int32_t)r;
        break;
      }
  }
}

/* Node-level tree A (which = 0) or its mirror/shift B (which = 1) over
 * m positions. */
static void dtree_parents(uint32_t m, int which, int32_t *parent) {
  int32_t *a = sim_malloc(m * sizeof *a);
  btree_parents(m, a);
  for (uint32_t r = 0; r < m; r++) {
    if (which == 0) parent[r] = a[r];
    else if (m % 2 == 0) {
      int32_t u = a[m - 1 - r];
      parent[r] = u < 0 ? -1 : (int32_t)(m - 1) - u;
    } else {
      int32_t u = a[(r + m - 1) % m];
      parent[r] = u < 0 ? -1 : (int32_t)(((uint32_t)u + 1) % m);
    }
  }
  sim_free(a);
}

/* NCCL's tree over n = m g positions (m node blocks of g, in channel
 * order): each node a chain, position a g + i (i > 0) under a g + i - 1;
 * the chain's head a g under the head of node a's parent in the node-level
 * tree A or B; the root node's head is the root. g = 1: the rank-level
 * double binary tree. Depths and heights filled in. O(n). */
void coll__tree_shape_init(tree_shape *s, uint32_t m, uint32_t g, int which) {
  uint32_t n = m * g;
  s->parent = sim_malloc(n * sizeof *s->parent);
  s->height = sim_calloc(n, sizeof *s->height);
  s->depth = sim_calloc(n, sizeof *s->depth);
  int32_t *up = sim_malloc(m * sizeof *up);
  dtree_parents(m, which, up);
  for (uint32_t a = 0; a < m; a++)
    for (uint32_t i = 0; i < g; i++)
      s->parent[a * g + i] = i > 0 ? (int32_t)(a * g + i - 1) : up[a] < 0 ? -1 : up[a] * (int32_t)g;
  sim_free(up);
  /* Depths: a parent's depth is known once its own chain is; in-order trees
   * are log n deep, so walking up is O(n log n) at worst, O(n) amortized
   * with the memo (depth 0 marks "unknown" except at the root). */
  uint32_t root = 0;
  while (s->parent[root] >= 0) root++;
  uint32_t *stack = sim_malloc(n * sizeof *stack);
  uint8_t *known = sim_calloc(n, 1);
  known[root] = 1;
  for (uint32_t r = 0; r < n; r++) {
    uint32_t sp = 0, v = r;
    while (!known[v]) {
      stack[sp++] = v;
      v = (uint32_t)s->parent[v];
    }
    while (sp > 0) {
      uint32_t u = stack[--sp];
      s->depth[u] = s->depth[s->parent[u]] + 1;
      known[u] = 1;
    }
  }
  /* Heights: visit by depth, deepest first (counting sort). */
  uint32_t maxd = 0;
  for (uint32_t r = 0; r < n; r++)
    if (s->depth[r] > maxd) maxd = s->depth[r];
  uint32_t *start = sim_calloc(maxd + 2, sizeof *start);
  for (uint32_t r = 0; r < n; r++) start[s->depth[r] + 1]++;
  for (uint32_t d = 0; d <= maxd; d++) start[d + 1] += start[d];
  for (uint32_t r = 0; r < n; r++) stack[start[s->depth[r]]++] = r; /* sorted by depth */
  for (uint32_t i = n; i-- > 0;) {
    uint32_t v = stack[i];
    if (s->parent[v] >= 0 && s->height[s->parent[v]] < s->height[v] + 1)
      s->height[s->parent[v]] = s->height[v] + 1;
  }
  s->h = s->height[root];
  sim_free(start);
  sim_free(known);
  sim_free(stack);
}

void coll__tree_shape_free(tree_shape *s) {
  sim_free(s->parent);
  sim_free(s->height);
  sim_free(s->depth);
}

int coll__cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int coll__plan_tree(coll_plan *p, const topo *t, const coll_spec *s) {
  uint32_t n = s->nranks, k = s->channels;
  uint64_t per_tree = coll__ceil_div(s->bytes, 2ull * k);
  uint64_t nchunks = coll__ceil_div(per_tree, s->chunk);
  uint64_t chunk = coll__ceil_div(per_tree, nchunks);
  /* NCCL's shape over whole node blocks of the same size (one node: the
   * chain); uneven blocks: the rank-level double binary tree, every rank
   * its own block */
  uint32_t m, g;
  if (!coll__node_blocks(t, s->ranks, n, &m, &g)) m = n, g = 1;
  tree_shape tr[2];
  coll__tree_shape_init(&tr[0], m, g, 0);
  coll__tree_shape_init(&tr[1], m, g, 1);
  uint32_t hgt = tr[0].h > tr[1].h ? tr[0].h : tr[1].h;
  uint64_t steps = nchunks + 2ull * hgt - 1;
  uint32_t *order = sim_malloc((size_t)k * n * sizeof *order);
  for (uint32_t c = 0; c < k; c++) coll__ring_order(t, s->ranks, n, c, &order[(size_t)c * n]);
  /* Every directed edge e starts at step sigma(e) (up: the child's height;
   * down: H + the parent's depth) and runs C steps; step s runs the edges
   * with s - C < sigma <= s. Listing the edges by sigma makes every step a
   * slice of one pool: O(n channels) transfers however long the pipeline. */
  size_t nedges = (size_t)4 * k * (n - 1);
  size_t *start = sim_calloc(2 * (size_t)hgt + 2, sizeof *start);
  for (uint32_t c = 0; c < k; c++)
    for (int which = 0; which < 2; which++)
      for (uint32_t v = 0; v < n; v++) {
        if (tr[which].parent[v] < 0) continue;
        start[tr[which].height[v] + 1]++;
        start[hgt + tr[which].depth[tr[which].parent[v]] + 1]++;
      }
  for (uint32_t sg = 0; sg <= 2 * hgt; sg++) start[sg + 1] += start[sg];
  be_xfer *pool = coll__pool(p, nedges);
  size_t *fill = sim_malloc((2 * (size_t)hgt + 1) * sizeof *fill);
  for (uint32_t sg = 0; sg <= 2 * hgt; sg++) fill[sg] = start[sg];
  for (uint32_t c = 0; c < k; c++) {
    const uint32_t *ord = &order[(size_t)c * n];
    for (int which = 0; which < 2; which++) {
      const tree_shape *ts = &tr[which];
      uint64_t salt = (uint64_t)c * 4 + (uint64_t)which * 2;
      for (uint32_t v = 0; v < n; v++) {
        if (ts->parent[v] < 0) continue;
        uint32_t u = (uint32_t)ts->parent[v];
        coll__xfer_ch(t, &pool[fill[ts->height[v]]++], ord[v], ord[u], chunk, salt, c);
        coll__xfer_ch(t, &pool[fill[hgt + ts->depth[u]]++], ord[u], ord[v], chunk, salt + 1, c);
      }
    }
  }
  /* Activity changes only where s or s - C + 1 crosses some sigma. */
  uint64_t *cut = sim_malloc((4 * (size_t)hgt + 3) * sizeof *cut);
  size_t ncut = 0;
  for (uint64_t sg = 0; sg <= 2ull * hgt; sg++) {
    cut[ncut++] = sg;
    cut[ncut++] = sg + nchunks;
  }
  cut[ncut++] = steps;
  qsort(cut, ncut, sizeof *cut, coll__cmp_u64);
  for (size_t i = 0; i + 1 < ncut; i++) {
    uint64_t s0 = cut[i], s1 = cut[i + 1] < steps ? cut[i + 1] : steps;
    if (s0 >= s1) continue;
    uint64_t lo_sigma = s0 + 1 > nchunks ? s0 + 1 - nchunks : 0;
    uint64_t hi_sigma = s0 < 2ull * hgt ? s0 : 2ull * hgt;
    if (lo_sigma > hi_sigma) continue;
    size_t lo = start[lo_sigma], hi = start[hi_sigma + 1];
    coll__push_slice(p, lo, hi - lo, s1 - s0);
  }
  sim_free(cut);
  sim_free(fill);
  sim_free(start);
  sim_free(order);
  coll__tree_shape_free(&tr[0]);
  coll__tree_shape_free(&tr[1]);
  return SIM_OK;
}
