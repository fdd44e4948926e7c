/* Fault-aware up/down routing over a health mask (topo_health).
 *
 * The same up/down routing as route.c, restricted to usable links and
 * vertices. At a switch the candidates are route.c's equal-cost next hops
 * (one down port, or every up port); a candidate stays when its link and
 * the next vertex are usable and the destination NIC is still reachable from
 * it: going down, over usable links only; going up, through some usable
 * up/down path (2-tier: the spine's link to the destination leaf; 3-tier: a
 * core whose links to the destination pod's spine and on to the leaf are up,
 * and so on). ECMP then hashes over the candidates left, in port order, and
 * static takes D-mod-K over them (as a subnet manager recomputing its
 * fat-tree tables over the ports left: OpenSM's ftree balances the
 * destinations over the remaining up ports in index order), so when none is
 * filtered the choice is route.c's and the path equals topo_route's.
 *
 * Endpoints: when the NIC a GPU would use (or its link to the leaf) is
 * unusable, or cannot reach the destination, another pair of NICs of the two
 * nodes in one plane is used: first one that needs no NVLink detour (the
 * other port of a multi-port NIC, with the destination's port in the same
 * plane), then one detour (another GPU's NIC of the node, reached over
 * NVLink, at the source or the destination), then two; ties go to the pair
 * topo_route would use, then in NIC order from it. Planes never mix: a path
 * stays in one plane, so a fault in plane p changes only paths that would
 * have used plane p.
 *
 * Cost: reachability is recomputed on demand without memory: O(h^(tiers-1))
 * per query with h = radix / 2, so one route is O(h^2) in 2 tiers and
 * O(h^3) in 3 tiers at worst, times the NIC pairs tried (at most N^2, N NICs
 * per node, only when endpoints fail). With no fault it is topo_route.
 */
#include <assert.h>
#include <string.h>

#include "topo/topo_internal.h"

int topo_health_init(topo_health *h, const topo *t) {
  uint32_t nl = t->nlinks ? t->nlinks : 1, nv = t->nvertices ? t->nvertices : 1;
  h->link_ok = sim_malloc(nl);
  h->vertex_ok = sim_malloc(nv);
  memset(h->link_ok, 1, nl);
  memset(h->vertex_ok, 1, nv);
  h->down = 0;
  return SIM_OK;
}

void topo_health_free(topo_health *h) {
  sim_free(h->link_ok);
  sim_free(h->vertex_ok);
  memset(h, 0, sizeof *h);
}

void topo_health_set_link(topo_health *h, uint32_t link, bool ok) {
  if ((h->link_ok[link] != 0) == ok) return;
  h->link_ok[link] = ok ? 1 : 0;
  if (ok) h->down--;
  else h->down++;
}

void topo_health_set_vertex(topo_health *h, uint32_t v, bool ok) {
  if ((h->vertex_ok[v] != 0) == ok) return;
  h->vertex_ok[v] = ok ? 1 : 0;
  if (ok) h->down--;
  else h->down++;
}

typedef struct target {
  uint32_t nic, v; /* destination NIC (global index) and its vertex */
  topo__place d;
} target;

/* A hop from x to y goes down when y is a NIC or a lower tier. */
static bool goes_down(const topo_vertex *x, const topo_vertex *y) {
  return y->kind == TOPO_NIC || (x->kind == TOPO_SWITCH && y->tier < x->tier);
}

static bool reach(const topo *t, const topo_health *h, uint32_t v, const target *g, bool down_only);

/* Whether channel ch (leaving x) may be taken toward g. */
static bool hop_ok(const topo *t, const topo_health *h, const topo_vertex *x, uint32_t ch,
                   const target *g) {
  uint32_t y = topo_channel_dst(t, ch);
  if (!h->link_ok[topo_channel_link(ch)] || !h->vertex_ok[y]) return false;
  return reach(t, h, y, g, goes_down(x, &t->vert[y]));
}

/* Whether g is reachable from v (usable) under up/down routing; down_only
 * once the path has started down. Recursion depth <= 2 x tiers. */
static bool reach(const topo *t, const topo_health *h, uint32_t v, const target *g,
                  bool down_only) {
  const topo_vertex *x = &t->vert[v];
  uint32_t first = 0, n;
  if (v == g->v) return true;
  n = topo__hop_range(t, x, g->nic, g->d, &first);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t ch = t->port[x->first_port + first + i];
    const topo_vertex *y = &t->vert[topo_channel_dst(t, ch)];
    if (down_only && !goes_down(x, y)) return false;
    if (hop_ok(t, h, x, ch, g)) return true;
  }
  return false;
}

static bool nic_usable(const topo *t, const topo_health *h, uint32_t nic) {
  return h->vertex_ok[t->v_nic + nic] && h->link_ok[t->l_endpoint + nic];
}

/* The GPU of `node` that reaches NIC `nic` over PCIe: `gpu` itself when it
 * is that GPU's own NIC, else the NIC's owner (lowest GPU sharing it). */
static uint32_t nic_gpu(const topo *t, uint32_t gpu, uint32_t nic) {
  if (topo_gpu_nic(t, gpu) == nic) return gpu;
  return (nic / t->npn) * t->gpn + topo__nic_gpu_local(t, nic % t->npn);
}

static int push(topo_path *p, uint32_t ch) {
  if (p->n >= TOPO_MAX_PATH) return SIM_ERANGE;
  p->ch[p->n++] = ch;
  return SIM_OK;
}

/* src GPU -> snic -> fabric -> dnic -> dst GPU, the fabric part filtered. */
static int build(const topo *t, const topo_health *h, uint32_t src, uint32_t dst, uint32_t snic,
                 uint32_t dnic, const topo__policy *pol, topo_path *path) {
  uint32_t sgpu = nic_gpu(t, src, snic), dgpu = nic_gpu(t, dst, dnic);
  uint32_t cand[TOPO__MAX_RADIX];
  target g = {dnic, t->v_nic + dnic, topo__nic_place(t, dnic)};
  uint32_t v = t->v_nic + snic;
  path->n = 0;
  if (sgpu != src) {
    push(path, 2 * (t->l_nvlink + src));
    push(path, 2 * (t->l_nvlink + sgpu) + 1);
  }
  topo__push_pcie(t, path, sgpu, snic, false);
  while (v != g.v) {
    const topo_vertex *x = &t->vert[v];
    uint32_t first = 0, n = topo__hop_range(t, x, dnic, g.d, &first), nc = 0;
    for (uint32_t i = 0; i < n; i++) {
      uint32_t ch = t->port[x->first_port + first + i];
      if (hop_ok(t, h, x, ch, &g)) cand[nc++] = ch;
    }
    if (nc == 0) return SIM_ENOENT; /* not reached: the caller checked reach first */
    uint32_t ch = cand[topo__choose(t, v, dnic, g.d, pol, path->ch[path->n - 1], cand, nc)];
    if (push(path, ch) != SIM_OK) return SIM_ERANGE;
    v = topo_channel_dst(t, ch);
  }
  if (topo__push_pcie(t, path, dgpu, dnic, true) != SIM_OK) return SIM_ERANGE;
  if (dgpu != dst) {
    if (push(path, 2 * (t->l_nvlink + dgpu)) != SIM_OK ||
        push(path, 2 * (t->l_nvlink + dst) + 1) != SIM_OK)
      return SIM_ERANGE;
  }
  return SIM_OK;
}

int topo_route_health(const topo *t, const topo_health *h, uint32_t src_gpu, uint32_t dst_gpu,
                      uint64_t flow_hash, topo_path *path) {
  topo__policy pol = topo__default_policy(t, flow_hash);
  return topo__route_health_policy(t, h, src_gpu, dst_gpu, &pol, path);
}

int topo__route_health_policy(const topo *t, const topo_health *h, uint32_t src_gpu,
                              uint32_t dst_gpu, const topo__policy *pol, topo_path *path) {
  if (!h || h->down == 0) return topo__route_policy(t, src_gpu, dst_gpu, pol, path);
  path->n = 0;
  if (src_gpu >= t->gpus || dst_gpu >= t->gpus || src_gpu == dst_gpu) return SIM_EINVAL;
  uint32_t ns = src_gpu / t->gpn, nd = dst_gpu / t->gpn;
  if (ns == nd) return topo__route_policy(t, src_gpu, dst_gpu, pol, path);
  uint32_t dnic0 = topo_xfer_nic(t, dst_gpu, pol->hash),
           snic0 = topo_xfer_nic(t, src_gpu, pol->hash);
  uint32_t ld0 = dnic0 % t->npn;
  /* as topo_route: across planes, start from the NIC with the destination's index */
  uint32_t ls0 =
      t->vert[t->v_nic + snic0].plane == t->vert[t->v_nic + dnic0].plane ? snic0 % t->npn : ld0;
  /* Endpoint pairs in one plane, fewest NVLink detours first (a multi-port
   * NIC's other port before another GPU's NIC), then in search order from
   * topo_route's pair. O(N^2) pairs, each tried only if it could improve. */
  uint32_t best_s = UINT32_MAX, best_d = UINT32_MAX, best_cost = 3;
  for (uint32_t dj = 0; dj < t->npn && best_cost > 0; dj++) {
    uint32_t dnic = nd * t->npn + (ld0 + dj) % t->npn;
    uint32_t dcost = nic_gpu(t, dst_gpu, dnic) != dst_gpu;
    if (dcost >= best_cost || !nic_usable(t, h, dnic)) continue;
    target g = {dnic, t->v_nic + dnic, topo__nic_place(t, dnic)};
    for (uint32_t sj = 0; sj < t->npn; sj++) {
      uint32_t snic = ns * t->npn + (ls0 + sj) % t->npn;
      uint32_t cost = dcost + (nic_gpu(t, src_gpu, snic) != src_gpu);
      if (cost >= best_cost) continue;
      if (t->vert[t->v_nic + snic].plane != t->vert[t->v_nic + dnic].plane) continue;
      if (!nic_usable(t, h, snic) || !reach(t, h, t->v_nic + snic, &g, false)) continue;
      best_s = snic, best_d = dnic, best_cost = cost;
    }
  }
  if (best_s != UINT32_MAX) return build(t, h, src_gpu, dst_gpu, best_s, best_d, pol, path);
  return SIM_ENOENT;
}
