/* All-to-All: each of n ranks sends S/n to every other rank (S per rank, as
 * nccl-tests counts it).
 *
 * pairwise: n-1 phases; in phase s rank i sends S/n to rank i+s. Closed form
 * on a uniform network: (n-1) (alpha + S / (n B)). Cross-plane pairs of a
 * multi-plane fabric are forwarded implicitly by the route (topo_route).
 *
 * pxn (cross-plane forwarding through the node, after NCCL's PXN): data for a
 * peer whose NIC sits on another plane than the sender's first moves over
 * NVLink to the GPU of the sender's node with the peer's local index (its NIC
 * is on the peer's plane), then over that plane; data for a same-plane peer
 * goes straight over the fabric. Explicit transfers, so every fidelity sees
 * the NVLink hop as its own step:
 *   phase 0 (NVLink): rank i -> each GPU x of its node: S/n for x itself if x
 *     is a rank, plus S/n for every rank with local index x on the next node
 *     (serial: on every other node) when x's plane differs from i's
 *     (aggregated, one transfer per pair);
 *   phases 1..m-1 (fabric, m nodes, node offset s): for every rank d on node
 *     A+s, the GPU of node A with d's local index sends d the S/n of every
 *     cross-plane rank of A and its own, one transfer; same-plane ranks of A
 *     with another local index send their S/n directly.
 * Every fabric transfer joins two NICs of one plane. As NCCL pipelines PXN,
 * the forwarding of offset s+1's data runs over NVLink alongside fabric
 * phase s (phase 0 forwards offset 1's); spec.pxn_serial forwards every
 * offset's data in phase 0 instead. With G ranks per node, G planes (one
 * NIC each) and m nodes, n = mG, t_net = alpha_net + S / (m B_nic):
 *   serial:    t = alpha_nvl + (G-1) m S / (n B_nvl) + (m-1) t_net;
 *   pipelined: t = alpha_nvl + 2 (G-1) S / (n B_nvl)
 *                + (m-2) max(t_net, alpha_nvl + (G-1) S / (n B_nvl)) + t_net.
 * "Plane" is the rail (the NIC's index in its node): on rail-optimized and
 * fat-tree fabrics too, data leaves through the NIC on the peer's rail.
 */
#include "coll/coll_internal.h"

int coll__plan_pairwise(coll_plan *p, const coll_spec *s) {
  uint32_t n = s->nranks;
  uint64_t chunk = coll__ceil_div(s->bytes, n);
  for (uint32_t st = 1; st < n; st++) {
    coll_phase *ph = coll__add_phase(p, n, 1);
    for (uint32_t i = 0; i < n; i++)
      coll__xfer(&ph->x[i], s->ranks[i], s->ranks[(i + st) % n], chunk, st);
  }
  return SIM_OK;
}

/* The group's ranks by node, and each node's ranks sorted by plane. */
typedef struct pxn_nodes {
  uint32_t m, gpn, planes;
  uint32_t *first, *len; /* block of node a in ranks[] */
  uint32_t *node;        /* topology node id of block a */
  uint32_t *by_plane;    /* per block: its ranks sorted by plane (counting sort) */
  uint32_t *plane_start; /* per block: (planes + 1) offsets into its by_plane slice */
  int32_t *local_plane;  /* plane of local index l */
  uint32_t *local_count; /* ranks of the group with local index l */
  bool *has;             /* has[a * gpn + l]: block a holds the GPU with local index l */
} pxn_nodes;

static void pxn_nodes_init(pxn_nodes *g, const topo *t, const coll_spec *s) {
  uint32_t n = s->nranks;
  g->gpn = topo_gpu_count(t) / topo_node_count(t);
  /* "planes" here are rails: the NIC index in the node. On a multi-plane
   * fabric with a plane per NIC they are the planes; on rail-optimized and
   * fat-tree fabrics data still leaves through the NIC on the peer's rail,
   * as NCCL's PXN does. */
  g->planes = topo_nic_count(t) / topo_node_count(t);
  uint32_t pcount;
  coll__node_blocks(t, s->ranks, n, &g->m, &pcount);
  g->first = sim_malloc(g->m * sizeof *g->first);
  g->len = sim_malloc(g->m * sizeof *g->len);
  g->node = sim_malloc(g->m * sizeof *g->node);
  g->by_plane = sim_malloc(n * sizeof *g->by_plane);
  g->plane_start = sim_calloc((size_t)g->m * (g->planes + 1), sizeof *g->plane_start);
  g->local_plane = sim_malloc(g->gpn * sizeof *g->local_plane);
  g->local_count = sim_calloc(g->gpn, sizeof *g->local_count);
  g->has = sim_calloc((size_t)g->m * g->gpn, sizeof *g->has);
  for (uint32_t l = 0; l < g->gpn; l++)
    g->local_plane[l] = (int32_t)(topo_gpu_nic(t, l) % g->planes);
  uint32_t a = 0;
  for (uint32_t i = 0; i < n; a++) {
    uint32_t node = topo_gpu_node(t, s->ranks[i]), j = i;
    while (j < n && topo_gpu_node(t, s->ranks[j]) == node) j++;
    g->first[a] = i;
    g->len[a] = j - i;
    g->node[a] = node;
    uint32_t *ps = &g->plane_start[(size_t)a * (g->planes + 1)];
    for (uint32_t k = i; k < j; k++) {
      uint32_t l = coll__gpu_local(t, s->ranks[k]);
      g->local_count[l]++;
      g->has[(size_t)a * g->gpn + l] = true;
      ps[(uint32_t)g->local_plane[l] + 1]++;
    }
    for (uint32_t q = 0; q < g->planes; q++) ps[q + 1] += ps[q];
    uint32_t *fill = sim_malloc(g->planes * sizeof *fill);
    for (uint32_t q = 0; q < g->planes; q++) fill[q] = ps[q];
    for (uint32_t k = i; k < j; k++) {
      uint32_t q = (uint32_t)g->local_plane[coll__gpu_local(t, s->ranks[k])];
      g->by_plane[i + fill[q]++] = s->ranks[k];
    }
    sim_free(fill);
    i = j;
  }
}

static void pxn_nodes_free(pxn_nodes *g) {
  sim_free(g->first);
  sim_free(g->len);
  sim_free(g->node);
  sim_free(g->by_plane);
  sim_free(g->plane_start);
  sim_free(g->local_plane);
  sim_free(g->local_count);
  sim_free(g->has);
}

/* NVLink transfers of node blocks' ranks: to each GPU x of the node, S/n for
 * x itself when `own` (and x is a rank), plus S/n for every rank with x's
 * local index on the nodes at offsets [lo, hi) when x's plane differs. */
static size_t pxn_nvlink(const pxn_nodes *g, const topo *t, const coll_spec *s, uint64_t chunk,
                         bool own, uint32_t lo, uint32_t hi, uint64_t salt, be_xfer *x) {
  size_t w = 0;
  for (uint32_t a = 0; a < g->m; a++)
    for (uint32_t k = g->first[a]; k < g->first[a] + g->len[a]; k++) {
      uint32_t src = s->ranks[k], la = coll__gpu_local(t, src);
      for (uint32_t l = 0; l < g->gpn; l++) {
        if (l == la) continue;
        uint64_t units = own && g->has[(size_t)a * g->gpn + l];
        if (g->local_plane[l] != g->local_plane[la])
          for (uint32_t o = lo; o < hi; o++) units += g->has[(size_t)((a + o) % g->m) * g->gpn + l];
        if (units) coll__xfer(&x[w++], src, g->node[a] * g->gpn + l, units * chunk, salt);
      }
    }
  return w;
}

/* Fabric transfers of node offset st: one plane per transfer. */
static size_t pxn_fabric(const pxn_nodes *g, const topo *t, const coll_spec *s, uint64_t chunk,
                         uint32_t st, be_xfer *x) {
  size_t w = 0;
  for (uint32_t a = 0; a < g->m; a++) {
    uint32_t b = (a + st) % g->m;
    const uint32_t *ps = &g->plane_start[(size_t)a * (g->planes + 1)];
    for (uint32_t k = g->first[b]; k < g->first[b] + g->len[b]; k++) {
      uint32_t dst = s->ranks[k], ly = coll__gpu_local(t, dst);
      uint32_t q = (uint32_t)g->local_plane[ly];
      uint32_t proxy = g->node[a] * g->gpn + ly;
      bool own = g->has[(size_t)a * g->gpn + ly];
      uint64_t units = (uint64_t)(g->len[a] - (ps[q + 1] - ps[q])) + own;
      if (units) coll__xfer(&x[w++], proxy, dst, units * chunk, st);
      for (uint32_t r = ps[q]; r < ps[q + 1]; r++) {
        uint32_t src = g->by_plane[g->first[a] + r];
        if (src != proxy) coll__xfer(&x[w++], src, dst, chunk, st);
      }
    }
  }
  return w;
}

int coll__plan_pxn(coll_plan *p, const topo *t, const coll_spec *s) {
  uint32_t n = s->nranks;
  uint64_t chunk = coll__ceil_div(s->bytes, n);
  pxn_nodes g;
  pxn_nodes_init(&g, t, s);
  /* a phase emits at most gpn transfers per rank on each of NVLink and the fabric */
  be_xfer *x = sim_malloc((size_t)n * (2 * g.gpn + 1) * sizeof *x);
  /* Phase 0: NVLink, intra-node data plus the forwarding of the first node
   * offset (serial: of every offset). */
  uint32_t first_hi = s->pxn_serial ? g.m : 2 < g.m ? 2 : g.m;
  coll__push_step(p, x, pxn_nvlink(&g, t, s, chunk, true, 1, first_hi, 0, x), 1);
  /* Phases 1..m-1: node offset st over the fabric; pipelined, with the
   * forwarding of offset st + 1 over NVLink alongside. */
  for (uint32_t st = 1; st < g.m; st++) {
    size_t w = pxn_fabric(&g, t, s, chunk, st, x);
    if (!s->pxn_serial && st + 1 < g.m)
      w += pxn_nvlink(&g, t, s, chunk, false, st + 1, st + 2, st, x + w);
    coll__push_step(p, x, w, 1);
  }
  sim_free(x);
  pxn_nodes_free(&g);
  return SIM_OK;
}
