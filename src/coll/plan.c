/* Collective -> phases of transfers.
 *
 * Ring (AllReduce, ReduceScatter, AllGather): one phase, every rank sending a
 * chunk of S / (n x channels) to its successor on every ring, repeated
 * 2(n-1) times (AllReduce: n-1 reduce-scatter steps then n-1 all-gather
 * steps) or n-1 times. Treating each ring step as a phase that ends with its
 * slowest transfer is exact in a ring's steady state, where every step is
 * paced by the slowest hop.
 *
 * Broadcast (ring): each ring forwards S/channels from the root down a chain
 * in chunks; step s has the chain positions j with s-C < j <= s forwarding,
 * C chunks, n-1+C-1 steps; identical consecutive steps are merged.
 *
 * AllToAll (pairwise): n-1 phases; in phase s rank i sends S/n to rank i+s.
 */
#include <string.h>

#include "coll/coll_internal.h"

double coll_busbw_factor(cfg_coll_op op, uint32_t n) {
  if (n <= 1) return op == CFG_COLL_BROADCAST ? 1.0 : 0.0;
  switch (op) {
  case CFG_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
  case CFG_COLL_REDUCESCATTER:
  case CFG_COLL_ALLGATHER:
  case CFG_COLL_ALLTOALL: return (double)(n - 1) / n;
  case CFG_COLL_BROADCAST: return 1.0;
  }
  return 0.0;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

static uint64_t xfer_hash(uint32_t src, uint32_t dst, uint64_t salt) {
  return sim_hash_u64(((uint64_t)src << 32 | dst) ^ sim_hash_u64(salt + 0x9e3779b97f4a7c15ULL));
}

coll_phase *coll__add_phase(coll_plan *p, size_t n, uint64_t repeat) {
  p->phases = sim_realloc(p->phases, (p->nphases + 1) * sizeof *p->phases);
  coll_phase *ph = &p->phases[p->nphases++];
  ph->x = sim_calloc(n ? n : 1, sizeof *ph->x);
  ph->n = n;
  ph->repeat = repeat;
  return ph;
}

/* Ring c: within each node's block of ranks (ranks ascending, so a node's
 * GPUs are contiguous), rotate by c. ring[i] is the i-th GPU of the ring. */
static void ring_order(const topo *t, const uint32_t *ranks, uint32_t n, uint32_t c, uint32_t *ring) {
  uint32_t i = 0;
  while (i < n) {
    uint32_t node = topo_gpu_node(t, ranks[i]), j = i;
    while (j < n && topo_gpu_node(t, ranks[j]) == node) j++;
    uint32_t len = j - i;
    for (uint32_t k = 0; k < len; k++) ring[i + k] = ranks[i + (k + c) % len];
    i = j;
  }
}

static int plan_ring(coll_plan *p, const topo *t, const coll_spec *s) {
  uint32_t n = s->nranks, k = s->channels;
  uint64_t steps = s->op == CFG_COLL_ALLREDUCE ? 2ull * (n - 1) : n - 1;
  uint64_t chunk = ceil_div(s->bytes, (uint64_t)n * k);
  coll_phase *ph = coll__add_phase(p, (size_t)n * k, steps);
  uint32_t *ring = sim_malloc(n * sizeof *ring);
  for (uint32_t c = 0; c < k; c++) {
    ring_order(t, s->ranks, n, c, ring);
    for (uint32_t i = 0; i < n; i++) {
      be_xfer *x = &ph->x[(size_t)c * n + i];
      x->src_gpu = ring[i];
      x->dst_gpu = ring[(i + 1) % n];
      x->bytes = chunk;
      x->flow_hash = xfer_hash(x->src_gpu, x->dst_gpu, c);
    }
  }
  sim_free(ring);
  return SIM_OK;
}

static int plan_broadcast(coll_plan *p, const topo *t, const coll_spec *s) {
  uint32_t n = s->nranks, k = s->channels;
  uint64_t per_ring = ceil_div(s->bytes, k);
  uint64_t chunk = s->chunk < per_ring ? s->chunk : per_ring;
  uint64_t nchunks = chunk ? ceil_div(per_ring, chunk) : 1;
  uint32_t *ring = sim_malloc(n * sizeof *ring);
  uint32_t **chains = sim_calloc(k, sizeof *chains);
  for (uint32_t c = 0; c < k; c++) {
    ring_order(t, s->ranks, n, c, ring);
    uint32_t at = 0;
    while (ring[at] != s->ranks[0]) at++;
    chains[c] = sim_malloc(n * sizeof **chains);
    for (uint32_t i = 0; i < n; i++) chains[c][i] = ring[(at + i) % n];
  }
  uint64_t last = (uint64_t)(n - 2) + nchunks - 1; /* steps 0..last */
  uint64_t prev_lo = UINT64_MAX, prev_hi = UINT64_MAX;
  for (uint64_t st = 0; st <= last; st++) {
    uint64_t lo = st + 1 > nchunks ? st + 1 - nchunks : 0;
    uint64_t hi = st < (uint64_t)(n - 2) ? st : (uint64_t)(n - 2);
    if (lo == prev_lo && hi == prev_hi) {
      p->phases[p->nphases - 1].repeat++;
      continue;
    }
    prev_lo = lo;
    prev_hi = hi;
    uint64_t active = hi - lo + 1;
    coll_phase *ph = coll__add_phase(p, (size_t)(active * k), 1);
    size_t w = 0;
    for (uint32_t c = 0; c < k; c++)
      for (uint64_t j = lo; j <= hi; j++) {
        be_xfer *x = &ph->x[w++];
        x->src_gpu = chains[c][j];
        x->dst_gpu = chains[c][j + 1];
        x->bytes = chunk;
        x->flow_hash = xfer_hash(x->src_gpu, x->dst_gpu, c);
      }
  }
  for (uint32_t c = 0; c < k; c++) sim_free(chains[c]);
  sim_free(chains);
  sim_free(ring);
  return SIM_OK;
}

static int plan_alltoall(coll_plan *p, const coll_spec *s) {
  uint32_t n = s->nranks;
  uint64_t chunk = ceil_div(s->bytes, n);
  for (uint32_t st = 1; st < n; st++) {
    coll_phase *ph = coll__add_phase(p, n, 1);
    for (uint32_t i = 0; i < n; i++) {
      be_xfer *x = &ph->x[i];
      x->src_gpu = s->ranks[i];
      x->dst_gpu = s->ranks[(i + st) % n];
      x->bytes = chunk;
      x->flow_hash = xfer_hash(x->src_gpu, x->dst_gpu, st);
    }
  }
  return SIM_OK;
}

/* Split every transfer of every phase over q queue pairs: q transfers of
 * about bytes/q (the first ones one byte larger when it does not divide),
 * each with its own flow hash. */
void coll__split_qps(coll_plan *p, uint32_t q) {
  p->qps = q ? q : 1;
  if (p->qps == 1) return;
  for (size_t i = 0; i < p->nphases; i++) {
    coll_phase *ph = &p->phases[i];
    be_xfer *x = sim_calloc(ph->n * q, sizeof *x);
    for (size_t j = 0; j < ph->n; j++)
      for (uint32_t k = 0; k < q; k++) {
        be_xfer *y = &x[j * q + k];
        *y = ph->x[j];
        y->bytes = ph->x[j].bytes / q + (k < ph->x[j].bytes % q);
        y->flow_hash = sim_hash_u64(ph->x[j].flow_hash + k + 1);
      }
    sim_free(ph->x);
    ph->x = x;
    ph->n *= q;
  }
}

int coll_plan_build(coll_plan *plan, const topo *t, const coll_spec *s, sim_error *err) {
  memset(plan, 0, sizeof *plan);
  plan->op = s->op;
  plan->algorithm = s->algorithm;
  plan->bytes = s->bytes;
  plan->nranks = s->nranks;
  plan->channels = s->channels;
  plan->chunk = s->chunk;
  if (s->nranks == 0 || s->channels == 0 || s->chunk == 0)
    return sim_fail(err, SIM_EINVAL, "a collective needs ranks, channels and chunk >= 1");
  for (uint32_t i = 1; i < s->nranks; i++)
    if (s->ranks[i] <= s->ranks[i - 1])
      return sim_fail(err, SIM_EINVAL, "collective ranks must be distinct GPUs in ascending order");
  bool pairwise = s->algorithm == CFG_ALGO_PAIRWISE;
  if ((s->op == CFG_COLL_ALLTOALL) != pairwise)
    return sim_fail(err, SIM_EINVAL, "%s has no '%s' algorithm here (alltoall: pairwise; others: ring)",
                    cfg_coll_op_name(s->op), cfg_coll_algorithm_name(s->algorithm));
  plan->qps = 1;
  if (s->nranks == 1 || s->bytes == 0) return SIM_OK; /* nothing moves */
  int rc = SIM_OK;
  switch (s->op) {
  case CFG_COLL_ALLREDUCE:
  case CFG_COLL_REDUCESCATTER:
  case CFG_COLL_ALLGATHER: rc = plan_ring(plan, t, s); break;
  case CFG_COLL_BROADCAST: rc = plan_broadcast(plan, t, s); break;
  case CFG_COLL_ALLTOALL: rc = plan_alltoall(plan, s); break;
  }
  if (rc == SIM_OK) coll__split_qps(plan, s->qps);
  return rc;
}

void coll_plan_free(coll_plan *plan) {
  for (size_t i = 0; i < plan->nphases; i++) sim_free(plan->phases[i].x);
  sim_free(plan->phases);
  memset(plan, 0, sizeof *plan);
}

uint64_t coll_plan_flows(const coll_plan *plan) {
  return coll_plan_transfers(plan) / (plan->qps ? plan->qps : 1);
}

uint64_t coll_plan_transfers(const coll_plan *plan) {
  uint64_t n = 0;
  for (size_t i = 0; i < plan->nphases; i++) n += plan->phases[i].n * plan->phases[i].repeat;
  return n;
}
