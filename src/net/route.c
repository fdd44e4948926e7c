/* Paths of queue pairs and per-hop choices at switches.
 *
 * Static policies are decided once per queue pair, when its phase is
 * submitted, and packets follow the stored path (source routing in the
 * simulator; the choices are the ones the switches would make). The path is
 * the topology's routing (topo_route_health), the one the analytic and flow
 * fidelities and the telemetry use:
 *   ecmp       each switch hashes the flow (the QP's UDP source port /
 *              entropy, be_xfer.flow_hash) with its own seed;
 *   polarized  every switch uses the same hash (fabric.ecmp.polarized): the
 *              choices at successive tiers are correlated;
 *   static     deterministic by destination, as an InfiniBand subnet
 *              manager's D-mod-K tables (topo_static_pick).
 * Dynamic policies decide per packet at every switch among the equal-cost
 * next hops (topo_next_hops; all have the same remaining length in an
 * up/down fabric, so the stored path's host hops keep their positions):
 *   adaptive   the eligible port (not PAUSEd) with the least queued bytes,
 *              ties broken from a random starting point; with
 *              fabric.adaptive.flowlet_gap > 0 a queue pair keeps its choice at
 *              each hop until it has been silent there for the gap;
 *   spray      uniformly random, or round robin per switch.
 * The ACK direction is routed the same way over the reverse path.
 *
 * Faults: after be_ops.reroute, paths come from topo_route_health (next hops
 * toward a still-reachable destination, NIC failover over NVLink), and
 * dynamic policies choose only among next hops whose port is up (at once,
 * as a switch sees its own link fail) and, after a reroute, from which
 * routing still reaches the destination (as the subnet manager's tables
 * would allow); until the reroute, a failure beyond the next hop is not
 * visible to the per-packet choice (packets that reach it are lost).
 * A reroute loses nothing by itself: a queue pair whose path moved keeps
 * its packets in flight, and one that reaches a switch its new path does
 * not leave from is forwarded as that switch's tables now say (net__route:
 * static and ECMP over the next hops routing still uses, from where the
 * packet is; all minimal up/down paths between two NICs have the same
 * length, so the host hops keep their positions). Only a queue pair whose
 * host hops changed (NIC failover) has its packets in flight dropped, as
 * a NIC's failover is a new connection (phase.c).
 *
 * Cost: static O(path x up ports) per queue pair and O(1) per packet per hop; dynamic
 * O(equal-cost next hops) per packet per switch.
 */
#include "net/net_internal.h"

/* The NIC (global index) where a path leaves the fabric, or NONE. */
static uint32_t exit_nic(const net__be *n, const topo_path *p) {
  for (uint32_t j = p->n; j-- > 1;) {
    const topo_vertex *x = topo_vertex_at(n->t, topo_channel_src(n->t, p->ch[j]));
    if (x->kind == TOPO_NIC && n->vx[topo_channel_src(n->t, p->ch[j - 1])].is_switch)
      return x->index;
  }
  return NET__NONE;
}

int net__paths(net__be *n, const be_xfer *x, uint32_t *out, uint8_t len[2], uint32_t dnic[2]) {
  for (int dir = 0; dir < 2; dir++) {
    topo_path p;
    uint32_t src = dir ? x->dst_gpu : x->src_gpu, dst = dir ? x->src_gpu : x->dst_gpu;
    int rc = topo_route_health(n->t, n->health, src, dst, x->flow_hash, &p);
    if (rc != SIM_OK) return rc;
    dnic[dir] = exit_nic(n, &p);
    for (uint32_t j = 0; j < p.n; j++) out[dir * TOPO_MAX_PATH + j] = p.ch[j];
    len[dir] = (uint8_t)p.n;
  }
  return SIM_OK;
}

/* The candidate with the least queued bytes, counted in whole MTU frames
 * (as switches compare quantized load levels), PAUSEd ports last; ties go to
 * the first from a random starting point, so light load spreads randomly. */
static uint32_t least_loaded(net__be *n, uint32_t v, uint32_t cnt, uint32_t cls) {
  uint32_t start = (uint32_t)sim_rng_below(net__rng(n, NET__RNG_ROUTE, v), cnt), best = 0;
  uint64_t best_load = UINT64_MAX, quantum = n->mtu + n->hdr;
  for (uint32_t j = 0; j < cnt; j++) {
    uint32_t c = n->cands[start + j < cnt ? start + j : start + j - cnt];
    const net__chan *ch = &n->ch[c];
    uint64_t load = ch->bytes / quantum;
    if (ch->paused & (1u << cls)) load += 1ull << 40;
    if (load < best_load) {
      best_load = load;
      best = c;
    }
  }
  return best;
}

/* Keep the candidates a per-packet choice may use: the switch's own ports
 * that are up (it sees its link fail at once), and those routing still uses
 * after the last reroute (link and next vertex up). Only the next hop is
 * checked: a failure further toward the destination is not seen by a
 * per-packet choice (see the file comment). */
/* Can vertex w reach NIC dnic over links and vertices routing sees up (h)?
 * Up/down next hops, so the recursion is at most the fabric's depth; cached
 * per (w, dnic) until the next reroute (net__be.reach). O(radix^2 / 4) per
 * uncached leaf in a 3-tier fabric. */
static bool reaches(net__be *n, const topo_health *h, uint32_t w, uint32_t dnic, int depth) {
  if (!n->vx[w].is_switch) return true;
  if (depth > TOPO_MAX_PATH) return false;
  uint64_t key = (uint64_t)w << 32 | dnic;
  net__reach *e = &n->reach[sim_hash_u64(key) & (NET__REACH_SLOTS - 1)];
  if (e->gen == n->reach_gen && e->key == key) return e->ok;
  uint32_t next[NET__MAX_CANDS];
  uint32_t cnt = topo_next_hops(n->t, w, dnic, next, NET__MAX_CANDS);
  bool ok = false;
  for (uint32_t j = 0; j < cnt && !ok; j++) {
    uint32_t c = next[j], d = n->ch[c].dst;
    ok = h->link_ok[topo_channel_link(c)] && h->vertex_ok[d] && reaches(n, h, d, dnic, depth + 1);
  }
  e = &n->reach[sim_hash_u64(key) & (NET__REACH_SLOTS - 1)]; /* the slot may have been reused */
  *e = (net__reach){.key = key, .gen = n->reach_gen, .ok = ok};
  return ok;
}

/* physical: skip ports whose link is down now (a per-packet choice sees
 * them at once; a table only after the reroute) */
static uint32_t usable(net__be *n, uint32_t cnt, uint32_t dnic, bool physical) {
  const topo_health *h = n->health && n->health->down ? n->health : NULL;
  uint32_t k = 0;
  for (uint32_t j = 0; j < cnt; j++) {
    uint32_t c = n->cands[j];
    if (physical && (n->ch[c].lflags & NET__L_DOWN)) continue;
    if (h && (!h->link_ok[topo_channel_link(c)] || !h->vertex_ok[n->ch[c].dst] ||
              !reaches(n, h, n->ch[c].dst, dnic, 0)))
      continue;
    n->cands[k++] = c;
  }
  return k;
}

/* Packet p of queue pair q is at switch v, which its stored path does not
 * leave from: the path moved while it was in flight (be_ops.reroute). The
 * switch forwards it as its tables now say: static (D-mod-K) or ECMP over
 * the next hops from which routing still reaches the destination, as
 * topo_route_health chooses at v. NONE when none is left. O(next hops). */
static uint32_t off_path(net__be *n, uint32_t v, const net__qp *q, uint32_t dnic) {
  uint32_t cnt = usable(n, topo_next_hops(n->t, v, dnic, n->cands, NET__MAX_CANDS), dnic, false);
  if (cnt == 0) return NET__NONE;
  uint32_t k = n->routing == CFG_ROUTING_STATIC ? topo_static_pick(n->t, v, dnic, cnt)
                                                : topo_ecmp_pick(n->t, v, q->hash, cnt);
  return n->cands[k];
}

uint32_t net__route(net__be *n, uint32_t v, net__pkt *p, const net__qhot *h) {
  unsigned dir = p->flags & NET__F_REV ? 1 : 0;
  uint32_t stored = h->path[dir * TOPO_MAX_PATH + p->hop];
  if (!n->dynamic && !n->reach_gen) return stored; /* paths as submitted: the common case */
  if (!n->vx[v].is_switch) return stored; /* host hops never move under a packet (phase.c) */
  /* after a reroute (reach_gen > 0) a packet in flight may be off its moved path */
  bool on_path = !n->reach_gen || n->cold[stored].src == v;
  if (!n->dynamic) return on_path ? stored : off_path(n, v, &n->qp[p->qp], h->dnic[dir]);
  uint32_t cnt = topo_next_hops(n->t, v, h->dnic[dir], n->cands, NET__MAX_CANDS);
  if (n->links_down || (n->health && n->health->down)) cnt = usable(n, cnt, h->dnic[dir], true);
  if (cnt <= 1) return cnt ? n->cands[0] : on_path ? stored : NET__NONE;
  if (n->routing == CFG_ROUTING_SPRAY) {
    uint32_t k = n->spray_rr ? n->vx[v].rr++ % cnt
                             : (uint32_t)sim_rng_below(net__rng(n, NET__RNG_ROUTE, v), cnt);
    return n->cands[k];
  }
  net__qp *q = &n->qp[p->qp];
  if (!q->fl) return least_loaded(n, v, cnt, p->cls);
  simtime_ps now = net__now(n);
  net__flowlet *f =
      n->par ? net__par_flowlet(n, v, p->qp, dir) : &q->fl[dir * TOPO_MAX_PATH + p->hop];
  if (f->ch == NET__NONE || now - f->last >= n->flowlet_gap || n->cold[f->ch].src != v)
    f->ch = least_loaded(n, v, cnt, p->cls);
  f->last = now;
  return f->ch;
}
