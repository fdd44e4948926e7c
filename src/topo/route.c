/* Up/down routing over the fat-tree planes.
 *
 * At a switch, a destination NIC below it is reached through the unique down
 * port toward it; otherwise every up port is an equal-cost next hop. "Below"
 * and the down port come from index arithmetic (topo_internal.h port order):
 *   leaf:  dst on this leaf          -> port = dst slot
 *   spine: 2-tier, or dst in my pod  -> port = dst leaf (within pod)
 *   core:  always                    -> port = dst pod
 * So a next-hop query is O(1) plus O(up ports) to list them, with no
 * per-switch tables at all.
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
  default:
    return *first = d.leaf / s->half, 1;
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
  uint64_t h = sim_hash_u64(sim_hash_u64(sim_hash_u64(t->ecmp_seed) ^ v) ^ flow_hash);
  return (uint32_t)(((h >> 32) * n) >> 32); /* multiply-shift: uniform, < n */
}

static int push(topo_path *p, uint32_t ch) {
  if (p->n >= TOPO_MAX_PATH) return SIM_ERANGE;
  p->ch[p->n++] = ch;
  return SIM_OK;
}

/* The routed path, and the product of the equal-cost choices met on it. The
 * fabric is symmetric, so every routed path between two GPUs meets the same
 * choices and the product counts them all. O(path * up ports). */
static int walk(const topo *t, uint32_t src, uint32_t dst, uint64_t flow_hash, topo_path *path,
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
  uint32_t dnic = topo_gpu_nic(t, dst), snic = topo_gpu_nic(t, src), sgpu = src;
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
  push(path, 2 * topo__pcie_link(t, sgpu, snic));
  uint32_t v = t->v_nic + snic, target = t->v_nic + dnic;
  topo__place dplace = topo__nic_place(t, dnic);
  while (v != target) {
    const topo_vertex *x = &t->vert[v];
    uint32_t first = 0, n = topo__hop_range(t, x, dnic, dplace, &first);
    assert(n > 0);
    if (n == 0) return SIM_EINVAL;
    uint32_t ch = t->port[x->first_port + first + topo_ecmp_pick(t, v, flow_hash, n)];
    *choices *= n;
    if (push(path, ch) != SIM_OK) return SIM_ERANGE;
    v = topo_channel_dst(t, ch);
  }
  return push(path, 2 * topo__pcie_link(t, dst, dnic) + 1);
}

int topo_route(const topo *t, uint32_t src_gpu, uint32_t dst_gpu, uint64_t flow_hash,
               topo_path *path) {
  uint64_t choices;
  return walk(t, src_gpu, dst_gpu, flow_hash, path, &choices);
}

uint64_t topo_path_count(const topo *t, uint32_t src_gpu, uint32_t dst_gpu) {
  topo_path p;
  uint64_t choices;
  if (walk(t, src_gpu, dst_gpu, 0, &p, &choices) != SIM_OK) return 0;
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
