/* Recursive halving-doubling (Rabenseifner; Thakur, Rabenseifner and Gropp,
 * "Optimization of Collective Communication Operations in MPICH", 2005).
 *
 * Over p = 2^L ranks (positions, mapped to GPUs by coll__ring_order per
 * channel):
 *   ReduceScatter by recursive halving: step j = 0..L-1 pairs v with
 *     v ^ 2^j and each sends the half of its working vector the partner
 *     keeps: S / 2^(j+1). Nearest partners first, so the largest exchanges
 *     stay inside a node.
 *   AllGather by recursive doubling, the reverse: step masks 2^(L-1)..1,
 *     sending everything gathered so far: S/p, 2S/p, ..., S/2.
 *   AllReduce = ReduceScatter then AllGather on the whole vector.
 * Closed forms on a uniform network (alpha latency, B bandwidth):
 *   AllReduce 2 L alpha + 2 (p-1)/p S / B;
 *   ReduceScatter, AllGather  L alpha + (p-1)/p S / B.
 *
 * n not a power of two: the standard fold. With p the largest power of two
 * <= n and r = n - p, position 2i (i < r) first hands its data to 2i+1 and
 * sits out; survivors are renumbered v = i for position 2i+1 (i < r) and
 * v = pos - r beyond; at the end 2i+1 hands the result back to 2i:
 *   AllReduce       fold S, unfold S:  + 2 (alpha + S / B);
 *   ReduceScatter   fold S, unfold S/n (the folded rank's block);
 *   AllGather       fold S/n, unfold (n-1) S/n.
 * In ReduceScatter and AllGather a survivor carries the blocks of both ranks
 * it stands for, so each exchange is counted in blocks of S/n: survivor v
 * weighs 2 blocks for v < r, else 1, and a step sends the weights of the
 * survivors it hands over.
 *
 * Channels split the data evenly; channel c pairs the GPUs of rotation c.
 * Cost: 2 log2 n + 2 phases of n x channels transfers.
 */
#include "coll/coll_internal.h"

typedef struct hd_ctx {
  coll_plan *p;
  uint32_t n, k, pow2, rem; /* ranks, channels, p, r */
  const uint32_t *order;    /* k x n: channel c's position -> GPU */
  be_xfer *x;
} hd_ctx;

static uint32_t survivor_pos(const hd_ctx *h, uint32_t v) {
  return v < h->rem ? 2 * v + 1 : v + h->rem;
}

/* Survivors u < r with u = x (mod mod): the ones weighing two blocks. */
static uint64_t heavy_count(uint32_t rem, uint32_t x, uint32_t mod) {
  uint32_t x0 = x % mod;
  return x0 < rem ? (rem - 1 - x0) / mod + 1 : 0;
}

/* The fold (unfold: back) between positions 2i and 2i+1, i < r. */
static void hd_fold(hd_ctx *h, uint64_t bytes, bool back) {
  if (h->rem == 0) return;
  size_t w = 0;
  for (uint32_t c = 0; c < h->k; c++) {
    const uint32_t *ord = &h->order[(size_t)c * h->n];
    for (uint32_t i = 0; i < h->rem; i++) {
      uint32_t a = ord[2 * i], b = ord[2 * i + 1];
      coll__xfer(&h->x[w++], back ? b : a, back ? a : b, bytes, 0x100 + c);
    }
  }
  coll__push_step(h->p, h->x, w, 1);
}

/* One exchange step with partner v ^ mask. `bytes_of(v)` is what v sends. */
typedef uint64_t (*hd_bytes_fn)(const hd_ctx *h, uint32_t v, uint32_t mask, uint64_t unit);

static void hd_step(hd_ctx *h, uint32_t mask, uint64_t unit, hd_bytes_fn bytes_of) {
  size_t w = 0;
  for (uint32_t c = 0; c < h->k; c++) {
    const uint32_t *ord = &h->order[(size_t)c * h->n];
    for (uint32_t v = 0; v < h->pow2; v++) {
      uint64_t b = bytes_of(h, v, mask, unit);
      if (b) coll__xfer(&h->x[w++], ord[survivor_pos(h, v)], ord[survivor_pos(h, v ^ mask)], b, c);
    }
  }
  coll__push_step(h->p, h->x, w, 1);
}

/* AllReduce halving/doubling: unit is the channel's vector, split evenly. */
static uint64_t vector_halving(const hd_ctx *h, uint32_t v, uint32_t mask, uint64_t unit) {
  (void)h;
  (void)v;
  return coll__ceil_div(unit, 2ull * mask);
}

/* ReduceScatter halving: v keeps the survivors u = v (mod mask) and hands
 * over those u = v ^ mask (mod 2 mask); unit is one block. */
static uint64_t blocks_halving(const hd_ctx *h, uint32_t v, uint32_t mask, uint64_t unit) {
  uint32_t mod = 2 * mask;
  return unit * (h->pow2 / mod + heavy_count(h->rem, v ^ mask, mod));
}

/* AllGather doubling with masks descending: before the step with `mask`, v
 * holds the survivors u = v (mod 2 mask) and sends them all. */
static uint64_t blocks_doubling(const hd_ctx *h, uint32_t v, uint32_t mask, uint64_t unit) {
  uint32_t mod = 2 * mask;
  return unit * (h->pow2 / mod + heavy_count(h->rem, v, mod));
}

int coll__plan_hd(coll_plan *p, const topo *t, const coll_spec *s) {
  hd_ctx h = {.p = p, .n = s->nranks, .k = s->channels};
  h.pow2 = 1;
  while (h.pow2 * 2 <= h.n) h.pow2 *= 2;
  h.rem = h.n - h.pow2;
  uint32_t *order = sim_malloc((size_t)h.k * h.n * sizeof *order);
  for (uint32_t c = 0; c < h.k; c++) coll__ring_order(t, s->ranks, h.n, c, &order[(size_t)c * h.n]);
  h.order = order;
  h.x = sim_malloc((size_t)h.k * h.n * sizeof *h.x);
  uint64_t vec = coll__ceil_div(s->bytes, h.k);                 /* per channel */
  uint64_t blk = coll__ceil_div(s->bytes, (uint64_t)h.n * h.k); /* one rank's block */
  switch (s->op) {
  case CFG_COLL_ALLREDUCE:
    hd_fold(&h, vec, false);
    for (uint32_t m = 1; m < h.pow2; m *= 2) hd_step(&h, m, vec, vector_halving);
    for (uint32_t m = h.pow2 / 2; m >= 1; m /= 2) hd_step(&h, m, vec, vector_halving);
    hd_fold(&h, vec, true);
    break;
  case CFG_COLL_REDUCESCATTER:
    hd_fold(&h, vec, false);
    for (uint32_t m = 1; m < h.pow2; m *= 2) hd_step(&h, m, blk, blocks_halving);
    hd_fold(&h, blk, true);
    break;
  case CFG_COLL_ALLGATHER:
    hd_fold(&h, blk, false);
    for (uint32_t m = h.pow2 / 2; m >= 1; m /= 2) hd_step(&h, m, blk, blocks_doubling);
    hd_fold(&h, blk * (h.n - 1), true);
    break;
  default: break; /* not offered (cfg_coll_algorithm_offered) */
  }
  sim_free(h.x);
  sim_free(order);
  return SIM_OK;
}
