/* The tree AllReduce's time from its shape (coll_internal.h,
 * coll__tree_cost_s): what tune.c's plan_estimate gives on the plan
 * coll__plan_tree builds, without listing its 4 (n-1) k transfers, so the
 * tuner can weigh the tree at 16,384 or 131,072 GPUs.
 *
 * The plan (tree.c): node a's ranks are a chain, position i under i-1, the
 * head (i = 0) under the head of a's parent in the node-level tree A or B.
 * With H the trees' height, node a's height h_w(a) and depth d_w(a) in tree
 * w, an edge runs C steps from step sigma:
 *   chain up, i -> i-1            sigma = g-1-i           (NVLink)
 *   head up, a -> parent          sigma = g-1 + h_w(a)    (network)
 *   chain down, i -> i+1          sigma = H + d_w(a) + i  (NVLink)
 *   head down, a -> child b       sigma = H + d_w(a)      (network)
 * and a phase is a run of steps with the same edges active (sigma in
 * (s-C, s]). Its step costs the busiest GPU port's chunks over NVLink and
 * the busiest NIC's over the network (each with its path latency), the
 * larger; a GPU holds position pos(c, j) in channel c (the ring order's
 * rotation), a NIC the heads of the channels it serves. Every node sees
 * the same NVLink loads for the same (d_A, d_B), so those are computed once
 * per depth pair; the network's per node. Cost: O(m + phases (m + D^2 g k))
 * with D the node trees' depth, phases <= 4H + 2.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"

typedef struct node_tree {
  tree_shape s;
  uint32_t *nchild;  /* children per node */
  uint32_t *child_h; /* up to two children's heights per node (binary tree) */
} node_tree;

static void node_tree_init(node_tree *nt, uint32_t m, int which) {
  coll__tree_shape_init(&nt->s, m, 1, which);
  nt->nchild = sim_calloc(m, sizeof *nt->nchild);
  nt->child_h = sim_calloc(2 * (size_t)m, sizeof *nt->child_h);
  for (uint32_t v = 0; v < m; v++) {
    if (nt->s.parent[v] < 0) continue;
    uint32_t u = (uint32_t)nt->s.parent[v];
    if (nt->nchild[u] < 2) nt->child_h[2 * (size_t)u + nt->nchild[u]] = nt->s.height[v];
    nt->nchild[u]++;
  }
}

static void node_tree_free(node_tree *nt) {
  coll__tree_shape_free(&nt->s);
  sim_free(nt->nchild);
  sim_free(nt->child_h);
}

typedef struct window {
  uint64_t lo, hi; /* active sigma, inclusive */
} window;

static bool in(const window *w, uint64_t sigma) { return sigma >= w->lo && sigma <= w->hi; }

/* A node head's network chunks out and in during a step of window w. */
static uint32_t head_load(const node_tree nt[2], uint32_t a, uint32_t g, uint64_t H,
                          const window *w) {
  uint32_t out = 0, inl = 0;
  for (int t = 0; t < 2; t++) {
    const tree_shape *s = &nt[t].s;
    bool root = s->parent[a] < 0;
    if (!root && in(w, g - 1 + (uint64_t)s->height[a])) out++;
    if (nt[t].nchild[a] && in(w, H + s->depth[a])) out += nt[t].nchild[a];
    for (uint32_t c = 0; c < nt[t].nchild[a] && c < 2; c++)
      if (in(w, g - 1 + (uint64_t)nt[t].child_h[2 * (size_t)a + c])) inl++;
    if (!root && in(w, H + s->depth[a] - 1)) inl++;
  }
  return out > inl ? out : inl;
}

/* The busiest GPU's NVLink chunks (out or in) in a node of depths d[2],
 * over the k channels (pos[c * g + j]: GPU j's position in channel c). */
static uint32_t chain_load(const uint32_t *pos, uint32_t g, uint32_t k, uint64_t H,
                           const uint32_t d[2], const window *w) {
  uint32_t best = 0;
  for (uint32_t j = 0; j < g; j++) {
    uint32_t out = 0, inl = 0;
    for (uint32_t c = 0; c < k; c++) {
      uint32_t i = pos[(size_t)c * g + j];
      for (int t = 0; t < 2; t++) {
        if (i >= 1 && in(w, g - 1 - i)) out++;
        if (i + 2 <= g && in(w, H + d[t] + i)) out++;
        if (i + 2 <= g && in(w, g - 2 - i)) inl++;
        if (i >= 1 && in(w, H + d[t] + i - 1)) inl++;
      }
    }
    if (out > best) best = out;
    if (inl > best) best = inl;
  }
  return best;
}

/* pos[c * g + j]: the position of the block's j-th rank in channel c's
 * chain (coll__ring_order's rotation, the same in every block). Returns
 * the most channel heads one NIC carries. */
static uint32_t positions(const topo *t, const uint32_t *ranks, uint32_t g, uint32_t k,
                          uint32_t npn, uint32_t *pos) {
  uint32_t *order = sim_malloc(g * sizeof *order), *heads = sim_calloc(npn, sizeof *heads);
  uint32_t most = 0;
  for (uint32_t c = 0; c < k; c++) {
    coll__ring_order(t, ranks, g, c, order);
    for (uint32_t p = 0; p < g; p++)
      for (uint32_t j = 0; j < g; j++)
        if (ranks[j] == order[p]) pos[(size_t)c * g + j] = p;
    uint32_t nic = (topo_gpu_nic(t, order[0]) + coll__channel_sel(t, c)) % npn;
    if (++heads[nic] > most) most = heads[nic];
  }
  sim_free(order);
  sim_free(heads);
  return most;
}

/* The widest active window (lo, hi) narrowed to the sigmas that have edges,
 * so that windows listing the same transfers compare equal (the plan merges
 * such steps into one phase). */
static bool narrow(window *w, const uint8_t *present, uint64_t top) {
  while (w->lo <= w->hi && w->lo <= top && !present[w->lo]) w->lo++;
  if (w->hi > top) w->hi = top;
  while (w->hi >= w->lo && !present[w->hi]) {
    if (w->hi == 0) return false;
    w->hi--;
  }
  return w->lo <= w->hi;
}

simtime_ps coll__tree_floor_ps(uint64_t bytes, uint32_t k, double floor_rate, double busy_s) {
  if (k == 0 || !isfinite(floor_rate) || !(floor_rate > 0)) return 0;
  double floor = 2.0 * (double)bytes / k / floor_rate;
  return floor > busy_s ? (simtime_ps)llround((floor - busy_s) * 1e12) : 0;
}

/* One phase's cost (seconds) and its fixed delay, as plan_estimate and
 * coll__apply_protocol count them; *busy += its steps' transfer time. */
static double phase_cost(uint32_t nv, uint32_t net, double chunk, uint64_t repeat,
                         const coll_tree_rates *r, double *busy) {
  double nv_s = r->b_intra > 0 ? nv * chunk / r->b_intra : 0;
  double net_s = r->b_inter > 0 ? net * chunk / r->b_inter : 0;
  double step = nv_s > 0 ? nv_s + sim_ps_to_s(r->wire_intra) : 0;
  if (net_s > 0 && net_s + sim_ps_to_s(r->wire_inter) > step)
    step = net_s + sim_ps_to_s(r->wire_inter);
  double t_step = nv_s > net_s ? nv_s : net_s;
  *busy += (double)repeat * t_step;
  simtime_ps hop = net ? r->hop_inter : r->hop_intra;
  double c = (NCCL_STEPS - 1) * t_step;
  simtime_ps cover = c > 0 ? (simtime_ps)llround(c * 1e12) : 0;
  simtime_ps fixed = hop + (simtime_ps)(repeat - 1) * (hop > cover ? hop - cover : 0);
  return (double)repeat * step + sim_ps_to_s(fixed);
}

double coll__tree_cost_s(const topo *t, const coll_spec *s, uint32_t k, uint64_t wire_chunk,
                         uint64_t nchunks, const coll_tree_rates *r) {
  uint32_t m, g;
  if (!coll__node_blocks(t, s->ranks, s->nranks, &m, &g) || m < 2 || k == 0 || r->npn == 0)
    return NAN;
  node_tree nt[2];
  node_tree_init(&nt[0], m, 0);
  node_tree_init(&nt[1], m, 1);
  uint64_t H = g - 1 + (uint64_t)(nt[0].s.h > nt[1].s.h ? nt[0].s.h : nt[1].s.h);
  uint64_t steps = nchunks + 2 * H - 1, top = 2 * H;
  uint32_t *pos = sim_malloc((size_t)k * g * sizeof *pos);
  uint32_t per_nic = positions(t, s->ranks, g, k, r->npn, pos);
  /* the sigmas that have edges; the node trees' depths */
  uint8_t *present = sim_calloc(top + 1, 1);
  uint32_t dmax = 0;
  for (uint32_t i = 0; i + 1 < g; i++) present[g - 2 - i] = 1; /* chain up */
  for (int w = 0; w < 2; w++)
    for (uint32_t a = 0; a < m; a++) {
      const tree_shape *sh = &nt[w].s;
      if (sh->depth[a] > dmax) dmax = sh->depth[a];
      if (sh->parent[a] >= 0) present[g - 1 + sh->height[a]] = 1;
      if (nt[w].nchild[a]) present[H + sh->depth[a]] = 1;
      for (uint32_t i = 0; i + 1 < g; i++) present[H + sh->depth[a] + i] = 1;
    }
  /* the cuts of tree.c: where s or s - C + 1 crosses a sigma */
  uint64_t *cut = sim_malloc((2 * top + 3) * sizeof *cut);
  size_t ncut = 0;
  for (uint64_t sg = 0; sg <= top; sg++) cut[ncut++] = sg, cut[ncut++] = sg + nchunks;
  cut[ncut++] = steps;
  qsort(cut, ncut, sizeof *cut, coll__cmp_u64);
  uint32_t *nvmemo = sim_malloc((size_t)(dmax + 1) * (dmax + 1) * sizeof *nvmemo);
  double total = sim_ps_to_s(r->launch), chunk = (double)wire_chunk, busy = 0;
  window prev = {1, 0};
  uint64_t rep = 0;
  uint32_t pnv = 0, pnet = 0;
  for (size_t i = 0; i + 1 < ncut; i++) {
    uint64_t s0 = cut[i], s1 = cut[i + 1] < steps ? cut[i + 1] : steps;
    if (s0 >= s1) continue;
    window w = {s0 + 1 > nchunks ? s0 + 1 - nchunks : 0, s0 < top ? s0 : top};
    if (w.lo > w.hi || !narrow(&w, present, top)) continue;
    if (rep && w.lo == prev.lo && w.hi == prev.hi) { /* the same transfers: one phase */
      rep += s1 - s0;
      continue;
    }
    if (rep) total += phase_cost(pnv, pnet, chunk, rep, r, &busy);
    uint32_t nv = 0, net = 0;
    memset(nvmemo, 0xff, (size_t)(dmax + 1) * (dmax + 1) * sizeof *nvmemo);
    for (uint32_t a = 0; a < m; a++) {
      uint32_t d[2] = {nt[0].s.depth[a], nt[1].s.depth[a]};
      uint32_t *memo = &nvmemo[(size_t)d[0] * (dmax + 1) + d[1]];
      if (g > 1 && *memo == UINT32_MAX) *memo = chain_load(pos, g, k, H, d, &w);
      if (g > 1 && *memo > nv) nv = *memo;
      uint32_t h = head_load(nt, a, g, H, &w);
      if (h > net) net = h;
    }
    prev = w, rep = s1 - s0, pnv = nv, pnet = net * per_nic;
  }
  if (rep) total += phase_cost(pnv, pnet, chunk, rep, r, &busy);
  total += sim_ps_to_s(coll__tree_floor_ps(s->bytes, k, r->floor_rate, busy));
  sim_free(nvmemo);
  sim_free(cut);
  sim_free(present);
  sim_free(pos);
  node_tree_free(&nt[0]);
  node_tree_free(&nt[1]);
  return total;
}
