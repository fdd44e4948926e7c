/* In-switch reduction: NVLink SHARP (nvls) and InfiniBand SHARP (collnet).
 *
 * A switch that reduces is not a point-to-point transfer, so these plans
 * carry the loads the reduction puts on each port, with transfers whose
 * bytes on every GPU port and NIC are exactly those loads; the switch's own
 * reduction runs at line rate (NVSwitch and Quantum ALUs are not the
 * bottleneck, NVIDIA's NVLS and SHARP descriptions) and is not a resource.
 *
 * nvls (one node of g = n GPUs, NCCL's NVLS AllReduce): each GPU owns S/n of
 * the buffer; it reads its share reduced over all GPUs through the switch
 * (multimem.ld_reduce: every GPU's port sends S in all, receives S/n) and
 * stores the result once to the multicast address (sends S/n, the switch
 * delivers S to every GPU). NCCL pipelines the two ("AllReduce pipelines two
 * operations", tuning.cc), so each GPU port carries S (n+1)/n each way at
 * once. One phase: every ordered pair (i, j) a transfer of
 *   S (n+1) / (n (n-1)) / e      bytes, e = NCCL's nvlsEfficiency
 * (Hopper 0.85, Blackwell 0.74), so each port carries S (n+1)/(n e) each
 * way; on a port of bandwidth B
 *   t = wire + S (n+1) / (n e B) + (25 us - wire)   (NCCL's NVLS latency),
 * busbw = 2(n-1)/n S/t -> 2(n-1)/(n+1) e B: 1.56 x 0.85 = 1.32 x the ring's
 * at n = 8. NCCL pipelines it a loop u at a time (16 NVLS channels x 8
 * heads x a chunk by size, coll__nvls_unit): the first loop's reduce and
 * multicast run alone before the stream, so the phase's fixed delay (tune.c
 * nvls_pipeline_ps) adds fill and drain u (n-1)/(n e B), and NCCL's 25 us
 * is half on each of them:
 *   t = 25 us + (n-1)/B (P(S) + 2 ceil(u / ((n-1) e)) - P(u)),
 *   P(x) = ceil(x (n+1) / (n (n-1) e)).
 *
 * collnet (m >= 2 nodes of g GPUs, NCCL's CollNet Direct; with NVLS on the
 * node, NCCL's NVLS across nodes, which needs SHARP the same way): in the
 * pipeline's steady state at once
 *   - inside each node the reduce-scatter and all-gather of S: with NVLS the
 *     loads above (S (g+1)/(g e) each way per GPU port), else direct over
 *     NVLink: every GPU sends every other one S/g for the reduce-scatter and
 *     S/g of the result, 2 S/g a pair;
 *   - across nodes each GPU's NIC sends its reduced S/g up the aggregation
 *     tree once and receives the result once: a transfer of S/g to the GPU
 *     of the same rail on the next node (a shift, collision-free under
 *     D-mod-K routing), the NIC loads SHARP puts on the fabric's edge.
 *   t = wire + max(intra per-port load / B_nvlink, S/g / B_nic) + fixed,
 *   fixed = NCCL's CollNet latency less the wire: with NVLS 25 + 18 us
 *   (NVLS NVLink + NVLS network), else 2 (3.7 + (g-1) 0.4) + 31 us.
 * So for a node whose NICs are the bottleneck t ~ S / (per-node NIC
 * bandwidth) + the aggregation latency.
 *
 * nvlstree (m >= 2 nodes of g GPUs, NCCL's NVLSTree, NCCL 2.18+: NVLink
 * SHARP inside each node, no SHARP in the fabric): the node reduces through
 * its NVSwitch to h heads, one GPU per NIC rail (h = NICs per node, at most
 * g), each head owning S/h; the heads of rail r form the node-level double
 * binary tree of the tree algorithm (tree.c, g = 1), each of its two trees
 * carrying half of the head's share up (reduce) and down (broadcast); the
 * node then multicasts the result. In the pipeline's steady state, at once:
 *   - inside each node the NVLS loads above, S (g+1)/(g e) each way per GPU
 *     port (as a shift, GPU i to i+1, g-1 pairs' bytes: the NVSwitch is
 *     non-blocking, so every port carries them with g transfers a node);
 *   - for each rail and tree, every edge (node a, parent u) carries
 *     D = S/(2h) up (head of a to head of u) and D down.
 * A NIC carries D times its node's degree in the two trees each way: a node
 * interior in one tree and a leaf in the other 3D + D = 2S/h (the busiest
 * from four nodes; 3D on three); on two nodes S/h each way (NCCL's tuner
 * doubles NVLSTree's network bandwidth at two nodes for this). So
 *   t = max(wire_nv + S (g+1)/(g e B_nvlink), wire_net + L_nic / B_nic) + fixed,
 *   fixed = 25 + 2 floor(log2 m) x 20.9 us less the network wire (tuning.cc:
 *   NVLSTree's NVLink and network latencies, base 0, spread over the
 *   pipeline's stages, each paying at least its path) + the fill and drain
 *   of NCCL's first loop u (its reduce and multicast, each u a port at
 *   1/e, and the trees' 2H levels, level l the busiest NIC's
 *   edges x u/(2h), less the loop's share of the stream) + what the stream
 *   past u falls short of NCCL's cap, h x perChMaxNVLSTreeBws of busbw
 *   (tune.c nvls_pipeline_ps, which states the form),
 * L_nic the busiest NIC's bytes (2S/h from four nodes, S/h on two): from
 * four nodes busbw = 2(n-1)/n S/t -> (n-1)/n h B_nic, the ring's NIC-bound
 * figure, with 2 log2 m network hops of latency where the ring has 2(m-1)
 * steps across nodes.
 */
#include "coll/coll_internal.h"

/* NCCL's nvlsEfficiency (tuning.cc) by architecture; 0: no NVLS. */
double coll__nvls_efficiency(cfg_gpu g) {
  switch (g) {
  case CFG_GPU_H100:
  case CFG_GPU_H800:
  case CFG_GPU_H200: return 0.85; /* Hopper, NVSwitch generation 3 */
  case CFG_GPU_B200: return 0.74;
  case CFG_GPU_A100:
  case CFG_GPU_MI300X: return 0.0; /* NVSwitch gen 2; Infinity Fabric mesh, no switch */
  }
  return 0.0;
}

uint64_t coll__nvls_pair_bytes(uint64_t bytes, uint32_t g, double e, bool both) {
  double port = both ? (double)bytes * (g + 1) / g : (double)bytes;
  uint64_t per = (uint64_t)(port / ((double)(g - 1) * e) + 0.999999);
  return per ? per : 1;
}

/* The same port loads as g-1 pairs of `per` bytes each, as a shift: GPU i
 * -> i+1 of the block, (g-1) per bytes. The NVSwitch is non-blocking, so
 * every GPU port carries the same bytes each way with g transfers a node
 * instead of g (g-1): NVLSTree's plan at 16,384 nodes stays as cheap as
 * before its fill. */
static size_t add_nvls_shift(be_xfer *x, const uint32_t *r, uint32_t g, uint64_t per) {
  for (uint32_t i = 0; i < g; i++)
    coll__xfer(&x[i], r[i], r[(i + 1) % g], (g - 1) * per, 0x4e564c53);
  return g;
}

/* NVLS loads inside one node block [r, r + g): every ordered pair `per` bytes. */
static size_t add_nvls_pairs(be_xfer *x, const uint32_t *r, uint32_t g, uint64_t per) {
  size_t w = 0;
  for (uint32_t i = 0; i < g; i++)
    for (uint32_t j = 0; j < g; j++)
      if (i != j) coll__xfer(&x[w++], r[i], r[j], per, 0x4e564c53);
  return w;
}

/* NVLink SHARP's efficiency for spec s, or 0 with err set (naming the
 * algorithm) when its GPU has none or it is off. */
static double nvls_or_fail(const coll_spec *s, cfg_coll_algorithm a, sim_error *err) {
  double e = coll__nvls_efficiency(s->gpu);
  if (e == 0 || !s->nvls)
    sim_fail(err, SIM_EINVAL,
             "%s needs NVSwitch generation 3 (H100, H800, H200, B200) and "
             "workload.collective.nvls: true; %s",
             cfg_coll_algorithm_name(a), e == 0 ? "this GPU has none" : "it is off");
  return s->nvls ? e : 0;
}

int coll__plan_nvls(coll_plan *p, const topo *t, const coll_spec *s, sim_error *err) {
  uint32_t m, g;
  double e = nvls_or_fail(s, CFG_ALGO_NVLS, err);
  if (e == 0) return SIM_EINVAL;
  coll__node_blocks(t, s->ranks, s->nranks, &m, &g);
  if (m != 1)
    return sim_fail(err, SIM_EINVAL,
                    "nvls reduces in one node's NVSwitch: the %u ranks span %u nodes (across "
                    "nodes: algorithm nvlstree, or collnet with fabric.sharp)",
                    s->nranks, m);
  add_nvls_pairs(coll__add_phase(p, (size_t)g * (g - 1), 1)->x, s->ranks, g,
                 coll__nvls_pair_bytes(s->bytes, g, e, true));
  return SIM_OK;
}

int coll__plan_collnet(coll_plan *p, const topo *t, const coll_spec *s, sim_error *err) {
  uint32_t m, g;
  if (!s->sharp)
    return sim_fail(err, SIM_EINVAL,
                    "collnet needs switches that reduce: set fabric.sharp: true (InfiniBand)");
  if (!coll__node_blocks(t, s->ranks, s->nranks, &m, &g) || m < 2)
    return sim_fail(err, SIM_EINVAL,
                    "collnet runs over whole nodes of the same size, at least two (%u ranks on "
                    "%u nodes)",
                    s->nranks, m);
  double e = s->nvls ? coll__nvls_efficiency(s->gpu) : 0.0;
  uint64_t share = coll__ceil_div(s->bytes, g);
  size_t intra = g > 1 ? (size_t)g * (g - 1) : 0;
  coll_phase *ph = coll__add_phase(p, (size_t)m * (intra + g), 1);
  size_t w = 0;
  for (uint32_t a = 0; a < m; a++) {
    const uint32_t *r = s->ranks + (size_t)a * g, *next = s->ranks + (size_t)((a + 1) % m) * g;
    if (g > 1 && e > 0) {
      w += add_nvls_pairs(ph->x + w, r, g, coll__nvls_pair_bytes(s->bytes, g, e, true));
    } else if (g > 1) {
      for (uint32_t i = 0; i < g; i++)
        for (uint32_t j = 0; j < g; j++)
          if (i != j) coll__xfer(&ph->x[w++], r[i], r[j], 2 * share, 0x434e);
    }
    for (uint32_t i = 0; i < g; i++) coll__xfer(&ph->x[w++], r[i], next[i], share, 0x534852);
  }
  return SIM_OK;
}

bool coll__gpu_on_rail(const topo *t, uint32_t gpu, uint32_t rail) {
  uint32_t npn = topo_nic_count(t) / topo_node_count(t), first = topo_gpu_nic(t, gpu) % npn;
  return rail >= first && rail < first + topo_nics_per_gpu(t);
}

/* The heads of node block r[0..g): for each of the h rails the first rank
 * on it (NCCL: one NVLS head per NIC). Returns h. */
static uint32_t nvlstree_heads(const topo *t, const uint32_t *r, uint32_t g, uint32_t npn,
                               uint32_t *head) {
  uint32_t h = 0;
  for (uint32_t rail = 0; rail < npn; rail++)
    for (uint32_t i = 0; i < g; i++)
      if (coll__gpu_on_rail(t, r[i], rail)) {
        head[h++] = r[i];
        break;
      }
  return h;
}

/* The node trees' edges, as (child, parent) pairs of trees A and B: one
 * transfer per rail of `bytes` up (child to parent) and one down. Appends
 * 4 h (m-1); returns how many. */
static size_t add_edges(const topo *t, be_xfer *x, const tree_shape tr[2], uint32_t m,
                        const uint32_t *head, uint32_t npn, uint32_t h, uint64_t bytes) {
  size_t w = 0;
  for (int which = 0; which < 2; which++)
    for (uint32_t a = 0; a < m; a++) {
      int32_t u = tr[which].parent[a];
      if (u < 0) continue;
      for (uint32_t r = 0; r < h; r++) {
        uint32_t ha = head[(size_t)a * npn + r], hu = head[(size_t)u * npn + r];
        coll__xfer_ch(t, &x[w++], ha, hu, bytes, 0x4e5654 + (uint64_t)which, r);
        coll__xfer_ch(t, &x[w++], hu, ha, bytes, 0x4e5644 + (uint64_t)which, r);
      }
    }
  return w;
}

int coll__plan_nvlstree(coll_plan *p, const topo *t, const coll_spec *s, sim_error *err) {
  uint32_t m, g;
  double e = nvls_or_fail(s, CFG_ALGO_NVLSTREE, err);
  if (e == 0) return SIM_EINVAL;
  if (!coll__node_blocks(t, s->ranks, s->nranks, &m, &g) || m < 2 || g < 2)
    return sim_fail(err, SIM_EINVAL,
                    "nvlstree runs over whole nodes of the same size, at least two of two GPUs or "
                    "more (%u ranks on %u nodes; one node: nvls)",
                    s->nranks, m);
  uint32_t npn = topo_nic_count(t) / topo_node_count(t);
  uint32_t *head = sim_malloc((size_t)m * npn * sizeof *head); /* head[a * npn + rail] */
  uint32_t h = 0;
  for (uint32_t a = 0; a < m; a++)
    h = nvlstree_heads(t, s->ranks + (size_t)a * g, g, npn, head + (size_t)a * npn);
  if (h == 0) {
    sim_free(head);
    return sim_fail(err, SIM_EINVAL, "nvlstree needs a NIC per node");
  }
  tree_shape tr[2];
  coll__tree_shape_init(&tr[0], m, 1, 0);
  coll__tree_shape_init(&tr[1], m, 1, 1);
  coll_phase *ph = coll__add_phase(p, (size_t)m * g + 4ull * h * (m - 1), 1);
  uint64_t per = coll__nvls_pair_bytes(s->bytes, g, e, true);
  size_t w = 0;
  for (uint32_t a = 0; a < m; a++) w += add_nvls_shift(ph->x + w, s->ranks + (size_t)a * g, g, per);
  w += add_edges(t, ph->x + w, tr, m, head, npn, h, coll__ceil_div(s->bytes, 2ull * h));
  ph->n = w;
  coll__tree_shape_free(&tr[0]);
  coll__tree_shape_free(&tr[1]);
  sim_free(head);
  return SIM_OK;
}
