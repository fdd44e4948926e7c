/* Up/down routing over the fat-tree planes.
 *
 * At a switch, a destination NIC below it is reached through the unique down
 * port toward it; otherwise every up port is an equal-cost next hop. "Below"
 * and the down port come from index arithmetic (topo_internal.h port order):
 *   leaf:  dst on this leaf          -> port = dst slot
 *   spine: 2-tier, or dst in my pod  -> port = dst leaf (within pod)
 *   core:  always                    -> the bundle of ports to the dst pod
 *                                       (one port at full size)
 * So a next-hop query is O(1) plus O(up ports) to list them, with no
 * per-switch tables at all.
 *
 * Among equal-cost up ports (fabric.routing; the one implementation every
 * fidelity and the telemetry use, topo__choose):
 *   static    D-mod-K: floor(D / (w_1 .. w_{l-1})) mod w_l at tier l, D the
 *             destination's index in its plane (leaf, then leaf port), w the
 *             up-port counts: what OpenSM's fat-tree engine computes on a
 *             complete tree. Every down-going link carries one destination;
 *             shifts are collision-free on a full-bisection tree.
 *   ecmp      a hash of the flow's entropy with the switch's seed.
 *   adaptive  (topo_route_adaptive) the least-loaded port, counting its
 *             channel and the down-going channel the choice commits to.
 * A sprayed transfer loads whole pools of links (the spray section below).
 *
 * Bundles (a partial 3-tier build, fattree.c): a core has m parallel links
 * to each pod, and a path that came up on the r-th link of a bundle goes
 * down on the r-th link of the bundle toward the destination pod. Static
 * D-mod-K gives that by itself (the core's choice floor(D / up) mod m is
 * the spine's floor(D / up) mod (k/2), mod m); ECMP and adaptive keep it
 * (falling back to their own choice when that link is filtered out by a
 * fault). A path then crosses the links the full build's core
 * c * k/2 + j would give it: per-transfer routing is the full build's,
 * link for link, and a random hash at the core instead would be the same
 * in distribution only. Per-packet choices (the packet fidelity's
 * adaptive and spray) choose among the whole bundle.
 */
#include <assert.h>

#include "topo/topo_internal.h"

/* The equal-cost next hops of v toward dst_nic as a range of v's ports:
 * ports [*first, *first + return value). Always contiguous: one down port, or
 * the up ports at the end of the list. O(1). */
uint32_t topo__hop_range(const topo *t, const topo_vertex *x, uint32_t dst_nic, topo__place d,
                         uint32_t *first) {
  const topo__shape *s = &t->s;
  if (x->plane < 0 || (uint32_t)x->plane != d.plane) return 0;
  if (x->kind == TOPO_NIC) {
    if (x->index == dst_nic) return 0;
    *first = x->nports - 1; /* the endpoint link: its last (highest) link id */
    return 1;
  }
  uint32_t nup;
  switch (x->tier) {
  case TOPO_TIER_LEAF:
    if (x->index == d.leaf) return *first = d.slot, 1;
    nup = s->up;
    break;
  case TOPO_TIER_SPINE:
    if (s->tiers == 2) return *first = d.leaf, 1;
    if (d.leaf / s->half == x->pod) return *first = d.leaf % s->half, 1;
    nup = s->sc_links ? s->half : 0;
    break;
  default: return *first = d.leaf / s->half * s->bundle, s->bundle;
  }
  *first = x->nports - nup;
  return nup;
}

uint32_t topo_next_hops(const topo *t, uint32_t v, uint32_t dst_nic, uint32_t *out, uint32_t max) {
  if (v >= t->nvertices || dst_nic >= t->nics) return 0;
  const topo_vertex *x = &t->vert[v];
  uint32_t first = 0, n = topo__hop_range(t, x, dst_nic, topo__nic_place(t, dst_nic), &first);
  assert(first + n <= x->nports);
  if (n > max) n = max;
  for (uint32_t i = 0; i < n; i++) out[i] = t->port[x->first_port + first + i];
  return n;
}

uint32_t topo_ecmp_pick(const topo *t, uint32_t v, uint64_t flow_hash, uint32_t n) {
  if (n <= 1) return 0;
  /* polarized: every switch hashes alike, so successive tiers correlate */
  uint64_t h = t->polarized
                   ? sim_hash_u64(sim_hash_u64(t->ecmp_seed) ^ flow_hash)
                   : sim_hash_u64(sim_hash_u64(sim_hash_u64(t->ecmp_seed) ^ v) ^ flow_hash);
  return (uint32_t)(((h >> 32) * n) >> 32); /* multiply-shift: uniform, < n */
}

/* D-mod-K: the destination's index within its plane, as the subnet manager's
 * fat-tree engine numbers endpoints (by leaf, then by leaf port), divided by
 * the product of the up-port counts of the tiers below x. The up port is
 * this modulo the up-port count at x. */
static uint64_t dmodk_quotient(const topo *t, const topo_vertex *x, topo__place d) {
  uint64_t dst = (uint64_t)d.leaf * t->s.down + d.slot;
  if (x->kind == TOPO_SWITCH && x->tier >= TOPO_TIER_SPINE) dst /= t->s.up ? t->s.up : 1;
  return dst;
}

uint32_t topo_static_pick(const topo *t, uint32_t v, uint32_t dst_nic, uint32_t n) {
  if (n <= 1 || v >= t->nvertices || dst_nic >= t->nics) return 0;
  return (uint32_t)(dmodk_quotient(t, &t->vert[v], topo__nic_place(t, dst_nic)) % n);
}

uint32_t topo__bundle_pos(const topo *t, uint32_t l) {
  const topo__shape *s = &t->s;
  if (s->bundle <= 1 || l < t->l_fabric) return 0;
  uint32_t i = (l - t->l_fabric) % (s->ls_links + s->sc_links); /* within its plane */
  return i < s->ls_links ? 0 : (i - s->ls_links) % s->half % s->bundle;
}

/* At a core with bundles (m > 1 ports toward each pod): which of the m
 * toward the destination pod is paired with the arrival channel in_ch (see
 * the header comment). NONE when in_ch is NONE. O(1). */
static uint32_t paired(const topo *t, uint32_t in_ch) {
  return in_ch == UINT32_MAX ? UINT32_MAX : topo__bundle_pos(t, topo_channel_link(in_ch));
}

/* The down-going channel toward d that taking the up-going channel ch
 * commits a path to, at the tier ch climbs to: the top of the path (its only
 * way down toward d, at a core the link of ch's bundle position), or, below
 * the top, the switch of d's pod that the fat-tree wiring pairs with ch's
 * far end (spine c of every pod reaches core group c). NONE when ch does
 * not go up. O(1). */
static uint32_t mirror(const topo *t, uint32_t ch, uint32_t dnic, topo__place d) {
  uint32_t y = topo_channel_dst(t, ch), first = 0;
  const topo_vertex *yx = &t->vert[y];
  if (yx->kind != TOPO_SWITCH) return UINT32_MAX;
  if (yx->tier == TOPO_TIER_SPINE && t->s.tiers == 3 && d.leaf / t->s.half != yx->pod) {
    uint32_t pair = topo__switch_v(t, d.plane, TOPO_TIER_SPINE,
                                   (d.leaf / t->s.half) * t->s.up + yx->index % t->s.up);
    yx = &t->vert[pair];
  }
  uint32_t n = topo__hop_range(t, yx, dnic, d, &first);
  if (n > 1 && yx->tier == TOPO_TIER_CORE) first += paired(t, ch), n = 1;
  if (n != 1) return UINT32_MAX;
  return t->port[yx->first_port + first];
}

uint32_t topo__choose(const topo *t, uint32_t v, uint32_t dnic, topo__place d,
                      const topo__policy *pol, uint32_t in_ch, const uint32_t *cand, uint32_t nc) {
  if (nc <= 1) return 0;
  if (pol->mode != CFG_ROUTING_STATIC && t->s.bundle > 1 && t->vert[v].tier == TOPO_TIER_CORE &&
      t->vert[v].kind == TOPO_SWITCH && in_ch != UINT32_MAX) {
    uint32_t r = paired(t, in_ch); /* down on the arrival's bundle position, if usable */
    for (uint32_t i = 0; i < nc; i++)
      if (topo__bundle_pos(t, topo_channel_link(cand[i])) == r) return i;
  }
  if (pol->mode == CFG_ROUTING_ECMP) return topo_ecmp_pick(t, v, pol->hash, nc);
  /* D-mod-K over the candidates (after a fault, those left: the subnet
   * manager recomputes the tables over the ports it still has) */
  uint32_t k = (uint32_t)(dmodk_quotient(t, &t->vert[v], d) % nc);
  if (pol->mode == CFG_ROUTING_STATIC || !pol->load) return k;
  /* adaptive: the least loaded, scanning from the static position */
  uint32_t best = k;
  uint64_t best_load = UINT64_MAX;
  for (uint32_t j = 0; j < nc; j++) {
    uint32_t i = k + j < nc ? k + j : k + j - nc, m = mirror(t, cand[i], dnic, d);
    uint64_t load = pol->load[cand[i]];
    if (m != UINT32_MAX && pol->load[m] > load) load = pol->load[m];
    if (load < best_load) best_load = load, best = i;
  }
  return best;
}

static int push(topo_path *p, uint32_t ch) {
  if (p->n >= TOPO_MAX_PATH) return SIM_ERANGE;
  p->ch[p->n++] = ch;
  return SIM_OK;
}

/* The routed path under pol, and the product of the equal-cost choices met
 * on it. The fabric is symmetric, so every routed path between two GPUs
 * meets the same choices and the product counts them all.
 * O(path * up ports). */
static int walk(const topo *t, uint32_t src, uint32_t dst, const topo__policy *pol, topo_path *path,
                uint64_t *choices) {
  path->n = 0;
  *choices = 1;
  if (src >= t->gpus || dst >= t->gpus || src == dst) return SIM_EINVAL;
  uint32_t ns = src / t->gpn, nd = dst / t->gpn;
  if (ns == nd) { /* over the node's scale-up switch */
    push(path, 2 * (t->l_nvlink + src));
    push(path, 2 * (t->l_nvlink + dst) + 1);
    return SIM_OK;
  }
  uint32_t dnic = topo_xfer_nic(t, dst, pol->hash), snic = topo_xfer_nic(t, src, pol->hash),
           sgpu = src;
  if (t->vert[t->v_nic + snic].plane != t->vert[t->v_nic + dnic].plane) {
    /* planes are disjoint: forward over NVLink to the GPU of this node that
     * owns the NIC with the destination's local index (same plane) */
    uint32_t li = dnic % t->npn;
    snic = ns * t->npn + li;
    sgpu = ns * t->gpn + topo__nic_gpu_local(t, li);
    if (sgpu != src) {
      push(path, 2 * (t->l_nvlink + src));
      push(path, 2 * (t->l_nvlink + sgpu) + 1);
    }
  }
  topo__push_pcie(t, path, sgpu, snic, false);
  uint32_t v = t->v_nic + snic, target = t->v_nic + dnic;
  topo__place dplace = topo__nic_place(t, dnic);
  while (v != target) {
    const topo_vertex *x = &t->vert[v];
    uint32_t first = 0, n = topo__hop_range(t, x, dnic, dplace, &first);
    assert(n > 0);
    if (n == 0) return SIM_EINVAL;
    const uint32_t *cand = &t->port[x->first_port + first];
    uint32_t ch = cand[topo__choose(t, v, dnic, dplace, pol, path->ch[path->n - 1], cand, n)];
    *choices *= n;
    if (push(path, ch) != SIM_OK) return SIM_ERANGE;
    v = topo_channel_dst(t, ch);
  }
  return topo__push_pcie(t, path, dst, dnic, true);
}

int topo__route_policy(const topo *t, uint32_t src_gpu, uint32_t dst_gpu, const topo__policy *pol,
                       topo_path *path) {
  uint64_t choices;
  return walk(t, src_gpu, dst_gpu, pol, path, &choices);
}

topo__policy topo__default_policy(const topo *t, uint64_t flow_hash) {
  /* adaptive and spray decide in the backends; their base path is ECMP's */
  topo__policy p = {
      .mode = t->routing == CFG_ROUTING_STATIC ? CFG_ROUTING_STATIC : CFG_ROUTING_ECMP,
      .hash = flow_hash,
      .load = NULL};
  return p;
}

int topo_route(const topo *t, uint32_t src_gpu, uint32_t dst_gpu, uint64_t flow_hash,
               topo_path *path) {
  topo__policy pol = topo__default_policy(t, flow_hash);
  return topo__route_policy(t, src_gpu, dst_gpu, &pol, path);
}

int topo_route_adaptive(const topo *t, const topo_health *h, uint32_t src_gpu, uint32_t dst_gpu,
                        uint64_t flow_hash, const uint32_t *load, topo_path *path) {
  topo__policy pol = {.mode = CFG_ROUTING_ADAPTIVE, .hash = flow_hash, .load = load};
  return topo__route_health_policy(t, h, src_gpu, dst_gpu, &pol, path);
}

uint64_t topo_path_count(const topo *t, uint32_t src_gpu, uint32_t dst_gpu) {
  topo_path p;
  uint64_t choices;
  topo__policy pol = {.mode = CFG_ROUTING_ECMP};
  if (walk(t, src_gpu, dst_gpu, &pol, &p, &choices) != SIM_OK) return 0;
  return choices;
}

simtime_ps topo_path_latency(const topo *t, const topo_path *p) {
  simtime_ps sum = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    sum += t->link[p->ch[i] >> 1].latency;
    if (i + 1 < p->n) sum += t->vert[topo_channel_dst(t, p->ch[i])].latency;
  }
  return sum;
}

rate_bps topo_path_bottleneck(const topo *t, const topo_path *p) {
  rate_bps min = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    rate_bps b = t->link[p->ch[i] >> 1].bps;
    if (i == 0 || b < min) min = b;
  }
  return min;
}

/* ---- spray pools ----------------------------------------------------------------
 *
 * A transfer sprayed evenly over its equal-cost paths puts the same share on
 * every link of a "pool": the up links of its source leaf (1 / w1 each), the
 * links from the spines down into its destination leaf, and in 3 tiers the
 * spine-to-core links of the source pod and the core-to-pod links into the
 * destination pod (1 / (w1 w2) each). Every transfer crossing one link of a
 * pool crosses all of them with the same share, so the pool behaves as one
 * channel of (members x slowest member) capacity: an exact fluid model of an
 * even split, with path length unchanged (no sub-flow per path: a 3-tier
 * radix-64 fabric has 1,024 of them). Pools are numbered after the channels:
 * 2 x links + plane x (2 leaves + 2 pods) + [up(leaf) | down(leaf) |
 * up(pod) | down(pod)]. */

static uint32_t pools_per_plane(const topo *t) {
  return 2 * t->s.leaves + (t->s.sc_links ? 2 * t->s.pods : 0);
}

uint32_t topo_pool_count(const topo *t) { return t->planes * pools_per_plane(t); }

uint32_t topo_spray_channel(const topo *t, uint32_t ch) {
  const topo_vertex *x = &t->vert[topo_channel_src(t, ch)], *y = &t->vert[topo_channel_dst(t, ch)];
  if (x->kind != TOPO_SWITCH || y->kind != TOPO_SWITCH || x->plane < 0) return ch;
  uint32_t base = 2 * t->nlinks + (uint32_t)x->plane * pools_per_plane(t), L = t->s.leaves;
  if (x->tier == TOPO_TIER_LEAF) return t->s.up > 1 ? base + x->index : ch;
  if (x->tier == TOPO_TIER_SPINE && y->tier == TOPO_TIER_LEAF)
    return t->s.up > 1 ? base + L + y->index : ch;
  if (x->tier == TOPO_TIER_SPINE) return base + 2 * L + x->pod;
  return base + 2 * L + t->s.pods + y->pod;
}

uint32_t topo_pool_members(const topo *t, uint32_t pool, uint32_t *out, uint32_t max) {
  uint32_t per = pools_per_plane(t), L = t->s.leaves, n = 0;
  if (pool < 2 * t->nlinks || pool - 2 * t->nlinks >= t->planes * per) return 0;
  uint32_t plane = (pool - 2 * t->nlinks) / per, i = (pool - 2 * t->nlinks) % per;
  bool three = t->s.tiers == 3;
#define MEMBER(v, idx)                                     \
  do {                                                     \
    const topo_vertex *m_ = &t->vert[v];                   \
    if (n < max) out[n] = t->port[m_->first_port + (idx)]; \
    n++;                                                   \
  } while (0)
  if (i < L) { /* up links of leaf i */
    uint32_t v = topo__switch_v(t, plane, TOPO_TIER_LEAF, i);
    for (uint32_t c = 0; c < t->s.up; c++) MEMBER(v, t->vert[v].nports - t->s.up + c);
  } else if (i < 2 * L) { /* spines down into leaf i - L */
    uint32_t leaf = i - L, pod = three ? leaf / t->s.half : 0,
             port = three ? leaf % t->s.half : leaf;
    for (uint32_t c = 0; c < t->s.up; c++)
      MEMBER(topo__switch_v(t, plane, TOPO_TIER_SPINE, pod * t->s.up + c), port);
  } else if (i < 2 * L + t->s.pods) { /* spine-to-core links of pod i - 2L */
    uint32_t pod = i - 2 * L;
    for (uint32_t c = 0; c < t->s.up; c++) {
      uint32_t v = topo__switch_v(t, plane, TOPO_TIER_SPINE, pod * t->s.up + c);
      for (uint32_t j = 0; j < t->s.half; j++) MEMBER(v, t->vert[v].nports - t->s.half + j);
    }
  } else { /* core-to-pod links into pod i - 2L - pods: each core's bundle */
    uint32_t pod = i - 2 * L - t->s.pods, m = t->s.bundle;
    for (uint32_t q = 0; q < t->s.cores; q++)
      for (uint32_t r = 0; r < m; r++)
        MEMBER(topo__switch_v(t, plane, TOPO_TIER_CORE, q), pod * m + r);
  }
#undef MEMBER
  return n;
}

rate_bps topo_pool_bps(const topo *t, uint32_t pool) {
  if (pool < 2 * t->nlinks) return t->link[pool >> 1].bps;
  uint32_t first = 0, n = topo_pool_members(t, pool, &first, 1);
  return n ? t->link[first >> 1].bps * n : 0; /* fabric links are alike */
}
