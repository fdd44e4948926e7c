/* Ring algorithms.
 *
 * Ring (AllReduce, ReduceScatter, AllGather): one phase, every rank sending a
 * chunk of S / (n x channels) to its successor on every ring, repeated
 * 2(n-1) times (AllReduce: n-1 reduce-scatter steps then n-1 all-gather
 * steps) or n-1 times. Treating each ring step as a phase that ends with its
 * slowest transfer is exact in a ring's steady state, where every step is
 * paced by the slowest hop. Closed form on a uniform network:
 *   AllReduce 2(n-1) (alpha + S / (n B)); ReduceScatter, AllGather
 *   (n-1) (alpha + S / (n B)).
 *
 * Rings stay on their rail, as NCCL's do: ring c enters each node at the
 * GPU of rotation c and leaves through the NIC of that same rail. When its
 * last GPU in the node has its NIC on another rail, it hands the chunk over
 * NVLink to the node's GPU on the rail of the next node's entry, which sends
 * it across (NCCL's PXN); the two hops run in the same phase (the pipeline's
 * steady state). Every inter-node transfer then joins two NICs of one rail,
 * so a rail-optimized fabric keeps ring traffic within its rails, and each
 * NIC carries one ring per channel set. A ring has n + (nodes that forward)
 * transfers; the NVLink ports carry one chunk per ring per step as before.
 *
 * Broadcast (ring): each ring forwards S/channels from the root down a chain
 * in chunks; step s has the chain positions j with s-C < j <= s forwarding,
 * C chunks, n-1+C-1 steps; identical consecutive steps are merged, and
 * every step is a slice of one list of the (n-1) channels hops:
 *   (n-1 + C-1) (alpha + chunk / B).
 */
#include "coll/coll_internal.h"

/* Rotation of channel c in a block of len ranks: a whole node of G GPUs
 * over N < G NICs rotates by c G/N (plus c/N for channels beyond N), so
 * the first N channels start on N different NICs; over N = k G NICs (k >= 2
 * a GPU) by the GPU of NIC c mod N, (c mod N) G / N, whose NIC the channel
 * takes (coll__channel_sel), so the first N channels use all N; otherwise
 * by c. */
static uint32_t rotation(const topo *t, uint32_t len, uint32_t c) {
  uint32_t g = topo_gpu_count(t) / topo_node_count(t),
           nics = topo_nic_count(t) / topo_node_count(t);
  if (len == g && topo_nics_per_gpu(t) > 1) return (c % nics) * g / nics;
  if (len != g || nics >= g || g % nics != 0) return c;
  uint32_t per = g / nics;
  return (c % nics) * per + (c / nics) % per;
}

void coll__ring_order(const topo *t, const uint32_t *ranks, uint32_t n, uint32_t c,
                      uint32_t *ring) {
  uint32_t i = 0;
  while (i < n) {
    uint32_t node = topo_gpu_node(t, ranks[i]), j = i;
    while (j < n && topo_gpu_node(t, ranks[j]) == node) j++;
    uint32_t len = j - i, r = rotation(t, len, c);
    for (uint32_t k = 0; k < len; k++) ring[i + k] = ranks[i + (k + r) % len];
    i = j;
  }
}

/* The NIC index of a GPU within its node: its rail (or plane). */
static uint32_t nic_local(const topo *t, uint32_t gpu) {
  return topo_gpu_nic(t, gpu) % (topo_nic_count(t) / topo_node_count(t));
}

/* The hop ring[i] -> ring[i+1] when it leaves a node whose exit GPU's NIC
 * is on another rail than the next node's entry: the GPU of the same node
 * on that rail (a rank of the ring), which forwards it (PXN), or
 * UINT32_MAX when the hop goes direct. */
static uint32_t relay_of(const topo *t, const uint32_t *ring, uint32_t n, uint32_t i) {
  uint32_t src = ring[i], dst = ring[(i + 1) % n];
  if (topo_gpu_node(t, src) == topo_gpu_node(t, dst) || nic_local(t, src) == nic_local(t, dst))
    return UINT32_MAX;
  uint32_t want = nic_local(t, dst), node = topo_gpu_node(t, src);
  for (uint32_t j = i; j-- > 0 && topo_gpu_node(t, ring[j]) == node;)
    if (nic_local(t, ring[j]) == want) return ring[j];
  return UINT32_MAX;
}

int coll__plan_ring(coll_plan *p, const topo *t, const coll_spec *s) {
  uint32_t n = s->nranks, k = s->channels;
  uint64_t steps = s->op == CFG_COLL_ALLREDUCE ? 2ull * (n - 1) : n - 1;
  uint64_t chunk = coll__ceil_div(s->bytes, (uint64_t)n * k);
  uint32_t *ring = sim_malloc((size_t)k * n * sizeof *ring);
  size_t nx = 0;
  for (uint32_t c = 0; c < k; c++) {
    coll__ring_order(t, s->ranks, n, c, ring + (size_t)c * n);
    for (uint32_t i = 0; i < n; i++)
      nx += 1 + (relay_of(t, ring + (size_t)c * n, n, i) != UINT32_MAX);
  }
  coll_phase *ph = coll__add_phase(p, nx, steps);
  size_t w = 0;
  for (uint32_t c = 0; c < k; c++) {
    const uint32_t *r = ring + (size_t)c * n;
    for (uint32_t i = 0; i < n; i++) {
      uint32_t next = r[(i + 1) % n], via = relay_of(t, r, n, i);
      if (via == UINT32_MAX) {
        coll__xfer_ch(t, &ph->x[w++], r[i], next, chunk, c, c);
      } else { /* over NVLink to the rail's GPU, then across on that rail */
        coll__xfer_ch(t, &ph->x[w++], r[i], via, chunk, c, c);
        coll__xfer_ch(t, &ph->x[w++], via, next, chunk, c, c);
      }
    }
  }
  sim_free(ring);
  return SIM_OK;
}

int coll__plan_broadcast(coll_plan *p, const topo *t, const coll_spec *s) {
  uint32_t n = s->nranks, k = s->channels;
  uint64_t per_ring = coll__ceil_div(s->bytes, k);
  uint64_t chunk = s->chunk < per_ring ? s->chunk : per_ring;
  uint64_t nchunks = coll__ceil_div(per_ring, chunk);
  uint32_t *ring = sim_malloc(n * sizeof *ring);
  uint32_t *chains = sim_malloc((size_t)k * n * sizeof *chains);
  for (uint32_t c = 0; c < k; c++) {
    coll__ring_order(t, s->ranks, n, c, ring);
    uint32_t at = 0;
    while (ring[at] != s->ranks[0]) at++;
    for (uint32_t i = 0; i < n; i++) chains[(size_t)c * n + i] = ring[(at + i) % n];
  }
  /* The chain hops listed by (position j, ring c): the hops active in a
   * step, positions lo..hi of every ring, are one slice of the pool. */
  be_xfer *pool = coll__pool(p, (size_t)(n - 1) * k);
  for (uint32_t j = 0; j + 1 < n; j++)
    for (uint32_t c = 0; c < k; c++) {
      const uint32_t *chain = &chains[(size_t)c * n];
      coll__xfer_ch(t, &pool[(size_t)j * k + c], chain[j], chain[j + 1], chunk, c, c);
    }
  uint64_t last = (uint64_t)(n - 2) + nchunks - 1; /* steps 0..last */
  for (uint64_t st = 0; st <= last; st++) {
    uint64_t lo = st + 1 > nchunks ? st + 1 - nchunks : 0;
    uint64_t hi = st < (uint64_t)(n - 2) ? st : (uint64_t)(n - 2);
    if (lo == 0 && hi == (uint64_t)(n - 2) && last - st > 0) {
      /* the steady state: every hop busy until the pipeline drains */
      uint64_t until = nchunks - 1 < last ? nchunks - 1 : last;
      coll__push_slice(p, 0, (size_t)(n - 1) * k, until - st + 1);
      st = until;
      continue;
    }
    coll__push_slice(p, (size_t)lo * k, (size_t)(hi - lo + 1) * k, 1);
  }
  sim_free(chains);
  sim_free(ring);
  return SIM_OK;
}
