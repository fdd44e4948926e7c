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
 * the NVLink hop as its own step. NCCL moves point-to-point data in chunks
 * of NCCL_P2P_NET_CHUNKSIZE (128 KiB across nodes, init.cc), NCCL_STEPS = 8
 * in flight per connection, and the GPU that relays posts each chunk's RDMA
 * write as it lands, so the NVLink hop and the fabric overlap chunk by
 * chunk. fabsim's pipeline step is the 8 chunks in flight (1 MiB, PXN_CHUNK
 * below): with b = S/n per peer in C = ceil(b / 1 MiB) chunks, the plan is
 * a pipeline of K = 1 + (m-1) C steps
 * over the m nodes: step j forwards chunk j over NVLink while chunk j-1
 * crosses the fabric (node offset s = 1..m-1 takes chunks (s-1) C ..
 * s C - 1), and every step also carries 1/K of the data between the node's
 * own GPUs, which NCCL sends alongside:
 *   NVLink (step j < K): rank i -> each GPU x of its node: b/K for x itself
 *     if x is a rank, plus b/C for every rank with local index x on the node
 *     of chunk j's offset when x's plane differs from i's (one transfer a
 *     pair);
 *   fabric (step j >= 1, offset s of chunk j-1): for every rank d on node
 *     A+s, the GPU of node A with d's local index sends d b/C for every
 *     cross-plane rank of A and its own; same-plane ranks of A with another
 *     local index send their b/C directly. Each sender's data is its own
 *     connection (NCCL connects every pair of ranks; PXN only lends the
 *     relay's NIC) over NCCL_NCHANNELS_PER_NET_PEER = 2 channels, so a
 *     transfer per sender and channel, each its own queue pair (ECMP hash).
 * Every fabric transfer joins two NICs of one plane. Phases: step 0, then
 * per offset the C-1 steps whose NVLink chunk is the same offset's
 * (repeated) and the one that forwards the next offset's first chunk.
 * spec.pxn_serial forwards all the data first, in one NVLink phase, and
 * crosses the fabric offset by offset (fabsim before 2026-11). With G ranks
 * per node, G planes (one NIC each), m nodes, n = mG:
 *   serial:    t = alpha_nvl + (G-1) m b / B_nvl + (m-1) (alpha_net + G b / B_nic);
 *   pipelined: t_nvl = alpha_nvl + (G-1) (b/K + b/C) / B_nvl,
 *              t_net = alpha_net + G (b/C) / B_nic,
 *              t = t_nvl + ((m-1) C - 1) max(t_nvl, t_net)
 *                  + max(alpha_nvl + (G-1) (b/K) / B_nvl, t_net),
 * which tends to (m-1) G b / B_nic = S (m-1) / (m B_nic) when the NIC is the
 * bottleneck: busbw (n-1)/n x m/(m-1) x B_nic, NVIDIA's rule of thumb
 * (nccl-tests#130: "N/(N-1)x the bandwidth per GPU" on N nodes).
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

/* NVLink transfers of node blocks' ranks: to each GPU x of the node, `own`
 * bytes for x itself (when x is a rank), plus `fwd` bytes for every rank
 * with x's local index on the nodes at offsets [lo, hi) when x's plane
 * differs. */
static size_t pxn_nvlink(const pxn_nodes *g, const topo *t, const coll_spec *s, uint64_t own,
                         uint64_t fwd, uint32_t lo, uint32_t hi, uint64_t salt, be_xfer *x) {
  size_t w = 0;
  for (uint32_t a = 0; a < g->m; a++)
    for (uint32_t k = g->first[a]; k < g->first[a] + g->len[a]; k++) {
      uint32_t src = s->ranks[k], la = coll__gpu_local(t, src);
      for (uint32_t l = 0; l < g->gpn; l++) {
        if (l == la) continue;
        uint64_t bytes = g->has[(size_t)a * g->gpn + l] ? own : 0;
        if (g->local_plane[l] != g->local_plane[la])
          for (uint32_t o = lo; o < hi; o++)
            bytes += g->has[(size_t)((a + o) % g->m) * g->gpn + l] * fwd;
        if (bytes) coll__xfer(&x[w++], src, g->node[a] * g->gpn + l, bytes, salt);
      }
    }
  return w;
}

/* NCCL_NCHANNELS_PER_NET_PEER's default (init.cc, graph/paths.cc): the
 * channels, each its own connection and queue pair, between two ranks
 * across nodes. */
enum { PXN_CHANNELS_PER_NET_PEER = 2 };

/* `conns` connections from src to dst (each sender's own, through the relay's
 * NIC), each over PXN_CHANNELS_PER_NET_PEER channels: as many transfers of
 * chunk / channels bytes, each with its own hash (queue pair). */
static size_t pxn_conns(be_xfer *x, uint32_t src, uint32_t dst, uint64_t conns, uint64_t chunk,
                        uint32_t st) {
  uint64_t per = coll__ceil_div(chunk, PXN_CHANNELS_PER_NET_PEER);
  size_t w = 0;
  for (uint64_t c = 0; c < conns * PXN_CHANNELS_PER_NET_PEER; c++)
    coll__xfer(&x[w++], src, dst, per, ((uint64_t)st << 20) | c);
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
      w += pxn_conns(x + w, proxy, dst, units, chunk, st);
      for (uint32_t r = ps[q]; r < ps[q + 1]; r++) {
        uint32_t src = g->by_plane[g->first[a] + r];
        if (src != proxy) w += pxn_conns(x + w, src, dst, 1, chunk, st);
      }
    }
  }
  return w;
}

/* A pipeline step: the NCCL_STEPS chunks of NCCL_P2P_NET_CHUNKSIZE (128 KiB
 * across nodes, init.cc) a connection keeps in flight. A lock-step phase
 * pays its path's latency once, which the chunks in flight hide in NCCL:
 * charged per 128 KiB chunk, it would cost 2.6 us of every 23 us on NDR. */
enum { PXN_CHUNK = NCCL_STEPS * 128 * 1024 };

int coll__plan_pxn(coll_plan *p, const topo *t, const coll_spec *s) {
  uint32_t n = s->nranks;
  uint64_t per_peer = coll__ceil_div(s->bytes, n);
  pxn_nodes g;
  pxn_nodes_init(&g, t, s);
  /* a phase emits at most gpn transfers per rank over NVLink and, per
   * receiver, one per sender of a node and channel over the fabric */
  be_xfer *x =
      sim_malloc((size_t)n * (g.gpn + (g.gpn + 1) * PXN_CHANNELS_PER_NET_PEER) * sizeof *x);
  if (s->pxn_serial) { /* all forwarding first, then the fabric offset by offset */
    coll__push_step(p, x, pxn_nvlink(&g, t, s, per_peer, per_peer, 1, g.m, 0, x), 1);
    for (uint32_t st = 1; st < g.m; st++)
      coll__push_step(p, x, pxn_fabric(&g, t, s, per_peer, st, x), 1);
    goto out;
  }
  /* The chunk pipeline: C chunks an offset, K steps, the node's own data
   * spread over all of them (header). */
  uint64_t nchunks = coll__ceil_div(per_peer, PXN_CHUNK);
  uint64_t steps = 1 + (uint64_t)(g.m - 1) * nchunks;
  uint64_t fwd = coll__ceil_div(per_peer, nchunks), own = coll__ceil_div(per_peer, steps);
  uint32_t hi1 = g.m > 1 ? 2 : 1;
  coll__push_step(p, x, pxn_nvlink(&g, t, s, own, fwd, 1, hi1, 0, x), 1);
  for (uint32_t st = 1; st < g.m; st++) {
    size_t w = pxn_fabric(&g, t, s, fwd, st, x);
    w += pxn_nvlink(&g, t, s, own, fwd, st, st + 1, st, x + w);
    coll__push_step(p, x, w, nchunks - 1);
    w = pxn_fabric(&g, t, s, fwd, st, x); /* the offset's last chunk, the next one's first */
    w += pxn_nvlink(&g, t, s, own, fwd, st + 1, st + 1 < g.m ? st + 2 : st + 1, st, x + w);
    coll__push_step(p, x, w, 1);
  }
out:
  sim_free(x);
  pxn_nodes_free(&g);
  return SIM_OK;
}
