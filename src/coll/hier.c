/* Hierarchical AllReduce: m nodes of G ranks each.
 *
 *   1. ReduceScatter inside each node over NVLink: a ring over the node's G
 *      ranks, G-1 steps of S/G; rank l of every node now holds the node's
 *      partial sum of block l.
 *   2. AllReduce of its block across nodes, per rail: rank l of every node
 *      joins a ring of the m ranks with local index l (same NIC index, same
 *      rail or plane), 2(m-1) steps of S/(G m); the G rails run at once.
 *   3. AllGather inside each node, the reverse of 1.
 * Closed form (alpha_nvl, B_nvl over NVLink; alpha_net, B_nic across nodes):
 *   t = 2 (G-1) (alpha_nvl + S / (G B_nvl)) + 2 (m-1) (alpha_net + S / (G m B_nic))
 * i.e. intra ReduceScatter + inter AllReduce of S/G + intra AllGather.
 * Channels split every step's data into `channels` transfers (rotated
 * intra-node rings, distinct ECMP hashes across nodes).
 * Needs the same number of ranks on every node (SIM_EINVAL otherwise).
 */
#include "coll/coll_internal.h"

/* Intra-node ring step: G-1 repetitions, every node's block ring at once. */
static void intra_ring(coll_plan *p, const coll_spec *s, uint32_t m, uint32_t g, uint64_t bytes) {
  uint32_t k = s->channels;
  coll_phase *ph = coll__add_phase(p, (size_t)m * g * k, g - 1);
  size_t w = 0;
  for (uint32_t c = 0; c < k; c++)
    for (uint32_t a = 0; a < m; a++) {
      const uint32_t *blk = &s->ranks[(size_t)a * g];
      for (uint32_t i = 0; i < g; i++)
        coll__xfer(&ph->x[w++], blk[(i + c) % g], blk[(i + 1 + c) % g], bytes, 0x200 + c);
    }
}

int coll__plan_hier(coll_plan *p, const topo *t, const coll_spec *s, sim_error *err) {
  uint32_t m, g, k = s->channels;
  if (!coll__node_blocks(t, s->ranks, s->nranks, &m, &g))
    return sim_fail(err, SIM_EINVAL,
                    "hierarchical allreduce needs the same number of ranks on every node "
                    "(the first node has %u); use whole nodes",
                    g);
  uint64_t intra = coll__ceil_div(s->bytes, (uint64_t)g * k);
  uint64_t inter = coll__ceil_div(s->bytes, (uint64_t)g * m * k);
  if (g > 1) intra_ring(p, s, m, g, intra);
  if (m > 1) {
    coll_phase *ph = coll__add_phase(p, (size_t)m * g * k, 2ull * (m - 1));
    size_t w = 0;
    for (uint32_t c = 0; c < k; c++)
      for (uint32_t l = 0; l < g; l++)
        for (uint32_t a = 0; a < m; a++)
          coll__xfer(&ph->x[w++], s->ranks[(size_t)a * g + l],
                     s->ranks[(size_t)((a + 1) % m) * g + l], inter, 0x300 + c);
  }
  if (g > 1) intra_ring(p, s, m, g, intra);
  return SIM_OK;
}
