/* Phases: transfers become queue pairs; repetitions run one after another.
 *
 * Each transfer of a phase is one queue pair (reliable connection) from its
 * source GPU to its destination GPU, with its data and ACK paths computed
 * once (route.c) and its congestion-control state kept across repetitions,
 * as a NIC keeps a QP's rate between messages. A repetition starts every
 * queue pair at the same instant and ends when the last one is acknowledged;
 * the next starts at that instant, explicitly (no shortcut: queues, pauses
 * and rates carry over as they are). A transfer with src == dst, or whose
 * GPUs cannot be routed, never enters the network and completes at once.
 *
 * Failures (faults): a queue pair that gives up ("retry limit",
 * transport.c) or loses its route at a reroute ("no route") is reported
 * once through be_backend.on_failure, counted in be_stats.transfers_failed
 * (not in transfers; its undelivered bytes not in bytes), and counts as
 * finished for its repetition, so done always fires. A transfer with no
 * route when its phase is submitted after a reroute fails at the start of
 * each repetition; a later reroute that restores its path gives it a queue
 * pair from the next repetition on. be_ops.reroute recomputes every live
 * queue pair's paths, O(transfers x path); what a moved queue pair has in
 * flight goes on from where it is (route.c), unless a host hop moved
 * (failover to another NIC: its packets in flight are dropped as stale).
 *
 * Storage: queue pairs live in one array of reused ids (released with a new
 * generation, so a stale timeout finds nothing); a phase slot and its path
 * and id arrays are reused by the next phase. Cost per phase: routing
 * O(n x path), per repetition O(n) plus the packets.
 */
#include <assert.h>
#include <string.h>

#include "fabsim/pdes.h"
#include "net/net_internal.h"

static void on_rep_end(sim_ctx *sim, void *obj, uint64_t arg);

/* ph->qp[i] of a transfer with no path over the fabric as routing sees it
 * (after a fault): it fails at the start of every repetition. */
#define NOROUTE (NET__NONE - 1)
static inline bool has_qp(uint32_t id) { return id < NOROUTE; }

static uint32_t phase_alloc(net__be *n) {
  for (uint32_t i = 0; i < n->nph; i++)
    if (!n->ph[i].live) return i;
  if (n->nph == n->ph_cap) {
    n->ph_cap = n->ph_cap ? 2 * n->ph_cap : 8;
    n->ph = sim_realloc(n->ph, n->ph_cap * sizeof *n->ph);
  }
  memset(&n->ph[n->nph], 0, sizeof *n->ph);
  return n->nph++;
}

static uint32_t qp_alloc(net__be *n) {
  uint32_t qi;
  if (n->nqp_free) {
    qi = n->qp_free[--n->nqp_free];
  } else {
    if (n->nqp == n->qp_cap) {
      n->qp_cap = n->qp_cap ? 2 * n->qp_cap : 64;
      n->qp = sim_realloc(n->qp, n->qp_cap * sizeof *n->qp);
      n->qh = sim_realloc(n->qh, n->qp_cap * sizeof *n->qh);
      n->qp_free = sim_realloc(n->qp_free, n->qp_cap * sizeof *n->qp_free);
    }
    qi = n->nqp++;
    memset(&n->qp[qi], 0, sizeof n->qp[qi]);
    memset(&n->qh[qi], 0, sizeof n->qh[qi]);
  }
  net__qp *q = &n->qp[qi];
  /* keep the reusable buffers and the generation, clear the rest */
  net__range *rtx = q->rtx;
  uint32_t rtx_cap = q->rtx_cap, gen = q->gen;
  uint16_t epoch = q->epoch; /* never reused while its packets may be in flight */
  net__flowlet *fl = q->fl;
  uint32_t fl_stamp = q->fl_stamp;
  memset(q, 0, sizeof *q);
  q->fl_stamp = fl_stamp;
  q->rtx = rtx;
  q->rtx_cap = rtx_cap;
  q->gen = gen;
  q->epoch = epoch;
  q->fl = fl;
  return qi;
}

void net__qp_orphan_packets(net__be *n, uint32_t qi) {
  net__qp *q = &n->qp[qi];
  q->epoch++; /* packets still in the fabric carry the old one: dropped on arrival */
  n->qh[qi].epoch = q->epoch;
}

static void qp_release(net__be *n, uint32_t qi) {
  net__qp_disarm(n, qi);
  net__qp *q = &n->qp[qi];
  net__qp_orphan_packets(n, qi); /* late packets must not follow reused paths */
  q->gen++;
  q->done = 1;
  sim_free(q->ooo);
  q->ooo = NULL;
  q->ooo_words = 0;
  n->qp_free[n->nqp_free++] = qi;
}

static void sharing(net__be *n, const net__qp *q, int d) {
  for (uint32_t j = 0; j < q->plen[0]; j++) {
    uint32_t c = q->path[0][j];
    n->sharing[c] = (uint32_t)((int)n->sharing[c] + d);
    if (n->sharing[c] > n->st.max_link_sharing) n->st.max_link_sharing = n->sharing[c];
  }
}

static void fail_unrouted(net__be *n, net__phase *ph, size_t i, simtime_ps now) {
  be_failure f = {.at = now,
                  .src_gpu = ph->x[i].src_gpu,
                  .dst_gpu = ph->x[i].dst_gpu,
                  .bytes = ph->x[i].bytes,
                  .bytes_delivered = 0,
                  .cause = "no route"};
  n->st.transfers_failed++;
  n->ext.no_route++;
  ph->failed++;
  ph->lost += f.bytes;
  ph->cls_lost[ph->x[i].tclass & 7] += f.bytes;
  if (n->base.on_failure) n->base.on_failure(n->base.on_failure_ctx, &f);
}

static void rep_start(net__be *n, uint32_t pid) {
  net__phase *ph = &n->ph[pid];
  simtime_ps now = sim_now(n->base.sim);
  n->par_now = now; /* a global action (par): every rank, for its own vertices */
  ph->active = 0;
  ph->failed = ph->lost = 0;
  memset(ph->cls_lost, 0, sizeof ph->cls_lost);
  for (size_t i = 0; i < ph->n; i++) {
    if (ph->qp[i] == NOROUTE) fail_unrouted(n, ph, i, now);
    if (!has_qp(ph->qp[i])) continue;
    net__qp *q = &n->qp[ph->qp[i]];
    net__qp_reset(n, q, now);
    n->qh[ph->qp[i]].epoch = q->epoch;
    sharing(n, q, +1);
    ph->active++;
  }
  if (ph->active == 0) {
    ev_schedule(n->base.sim, now, on_rep_end, n, pid);
    return;
  }
  for (size_t i = 0; i < ph->n; i++)
    if (has_qp(ph->qp[i])) net__qp_activate(n, ph->qp[i]);
}

/* At the sender: the phase hears of it end_gap later, on both engines (the
 * parallel one at the end of the window holding it, which is at most L =
 * end_gap later on every rank), so that both give the same figures. */
void net__qp_complete(net__be *n, uint32_t qi) {
  if (n->par) net__par_qp_end(n, qi, NULL);
  else net__phase_end(n, qi, sim_now(n->base.sim), NULL, n->qp[qi].bytes, n->end_gap);
}

bool net__phase_end(net__be *n, uint32_t qi, simtime_ps at, const char *cause, uint64_t delivered,
                    simtime_ps gap) {
  net__qp *q = &n->qp[qi];
  net__phase *ph = &n->ph[q->phase];
  q->done = 1;
  if (cause) {
    q->failed = 1;
    net__qp_orphan_packets(n, qi);
    be_failure f = {.at = at,
                    .src_gpu = ph->x[q->xfer].src_gpu,
                    .dst_gpu = ph->x[q->xfer].dst_gpu,
                    .bytes = q->bytes,
                    .bytes_delivered = delivered,
                    .cause = cause};
    n->st.transfers_failed++;
    ph->failed++;
    ph->lost += q->bytes - delivered;
    ph->cls_lost[q->cls] += q->bytes - delivered;
    if (n->base.on_failure) n->base.on_failure(n->base.on_failure_ctx, &f);
  } else {
    simtime_ps fct = at - q->start; /* what the sender knows: its last ACK (be_xfer_end) */
    be_fct_add(&n->fct, fct);
    be_xfer_report(&n->base, &(be_xfer_end){.phase = ph->ctx,
                                            .xfer = q->xfer,
                                            .n = 1,
                                            .start = q->start,
                                            .reps = 1,
                                            .delivered = &fct});
  }
  sharing(n, q, -1);
  assert(ph->active > 0);
  if (--ph->active) return false;
  ev_schedule(n->base.sim, at + gap, on_rep_end, n, q->phase);
  return true;
}

static uint64_t bytes_delivered(const net__be *n, uint32_t qi) {
  const net__qp *q = &n->qp[qi];
  uint32_t rcv = n->par_rcv ? n->par_rcv[qi] : q->rcv_nxt; /* par: the receiver's rank's */
  if (rcv >= q->npkts) return q->bytes;
  return (uint64_t)rcv * n->mtu;
}

void net__qp_fail(net__be *n, uint32_t qi, const char *cause) {
  net__qp *q = &n->qp[qi];
  if (q->done) return;
  net__qp_stop(n, qi);
  assert(!n->par || n->par_in_lp);
  if (n->par) net__par_qp_end(n, qi, cause); /* at its sender's LP: heard at the window's end */
  else net__phase_end(n, qi, net__now(n), cause, bytes_delivered(n, qi), n->end_gap);
}

/* A global action (a reroute) fails qi: every rank at once, at once. */
static void qp_fail_now(net__be *n, uint32_t qi, const char *cause) {
  net__qp *q = &n->qp[qi];
  if (q->done) return;
  net__qp_stop(n, qi);
  net__phase_end(n, qi, net__now(n), cause, bytes_delivered(n, qi), 0);
}

static void on_rep_end(sim_ctx *sim, void *obj, uint64_t arg) {
  net__be *n = obj;
  uint32_t pid = (uint32_t)arg;
  n->par_now = sim_now(sim);
  net__phase *ph = &n->ph[pid];
  if (ph->reps_done < ph->repeat) {
    ph->reps_done++;
    n->st.transfers += ph->n - ph->failed; /* failed ones are in transfers_failed */
    n->st.bytes += ph->bytes - ph->lost;
    for (int k = 0; k < NET__CLASSES; k++)
      n->st.class_bytes[k] += ph->cls_bytes[k] - ph->cls_lost[k];
  }
  if (ph->reps_done < ph->repeat) {
    rep_start(n, pid);
    return;
  }
  for (size_t i = 0; i < ph->n; i++)
    if (has_qp(ph->qp[i])) qp_release(n, ph->qp[i]);
  be_done_fn done = ph->done;
  void *ctx = ph->ctx;
  ph->live = false;
  ph->x = NULL;
  ph->done = NULL;
  ph->ctx = NULL;
  if (--n->active_phases == 0) net__samp_idle(n); /* no sample event outlives the traffic */
  if (done) done(sim, ctx); /* may submit a phase: nothing is held across it */
}

static rate_bps path_rate(const net__be *n, const uint32_t *path, uint32_t len) {
  rate_bps r = UINT64_MAX;
  for (uint32_t j = 0; j < len; j++)
    if (n->cold[path[j]].bps < r) r = n->cold[path[j]].bps;
  return r;
}

/* A queue pair for transfer i of phase pid, whose paths are in place in
 * ph->paths (len, dnic as net__paths gave them). Not started. */
static uint32_t qp_setup(net__be *n, uint32_t pid, size_t i, const uint8_t len[2],
                         const uint32_t dnic[2], simtime_ps now) {
  const be_xfer *x = n->ph[pid].x;
  uint32_t *path = n->ph[pid].paths + i * 2 * TOPO_MAX_PATH;
  uint32_t qi = qp_alloc(n);
  net__qp *q = &n->qp[qi];
  q->phase = pid;
  q->xfer = (uint32_t)i;
  q->bytes = x[i].bytes;
  q->hash = x[i].flow_hash;
  uint64_t np = x[i].bytes ? (x[i].bytes + n->mtu - 1) / n->mtu : 1;
  assert(np < UINT32_MAX);
  q->npkts = (uint32_t)np;
  q->last_payload = (uint32_t)(x[i].bytes - (np - 1) * n->mtu);
  q->path[0] = path;
  q->path[1] = path + TOPO_MAX_PATH;
  q->plen[0] = len[0];
  q->plen[1] = len[1];
  net__qhot *h = &n->qh[qi];
  h->path = path;
  h->plen[0] = len[0];
  h->plen[1] = len[1];
  h->dnic[0] = dnic[0];
  h->dnic[1] = dnic[1];
  h->epoch = q->epoch;
  q->cls = x[i].tclass & 7;
  q->job = n->gpu_job && x[i].src_gpu < topo_gpu_count(n->t) ? n->gpu_job[x[i].src_gpu] : 0;
  q->max_rate = path_rate(n, path, len[0]);
  q->last_cnp = SIM_TIME_MAX;
  q->rr_next = q->rr_prev = NET__NONE;
  n->cc->init(&q->cc, &n->ccp, q->max_rate, now);
  if (n->flowlet_gap && !q->fl) q->fl = sim_malloc(2 * TOPO_MAX_PATH * sizeof *q->fl);
  if (q->fl)
    for (uint32_t j = 0; j < 2 * TOPO_MAX_PATH; j++) q->fl[j] = (net__flowlet){0, NET__NONE};
  q->fl_stamp++;
  return qi;
}

void net__submit_phase(be_backend *b, const be_xfer *x, size_t cnt, uint64_t repeat,
                       be_done_fn done, void *ctx) {
  net__be *n = (net__be *)b;
  simtime_ps now = sim_now(b->sim);
  n->par_now = now;
  uint32_t pid = phase_alloc(n);
  net__phase *ph = &n->ph[pid];
  ph->x = x;
  ph->n = cnt;
  ph->repeat = repeat;
  ph->reps_done = 0;
  ph->done = done;
  ph->ctx = ctx;
  ph->bytes = 0;
  ph->failed = ph->lost = 0;
  memset(ph->cls_bytes, 0, sizeof ph->cls_bytes);
  memset(ph->cls_lost, 0, sizeof ph->cls_lost);
  ph->live = true;
  if (n->active_phases++ == 0) net__samp_active(n);
  if (cnt > ph->qp_cap) {
    sim_free(ph->qp);
    ph->qp = sim_malloc(cnt * sizeof *ph->qp);
    ph->qp_cap = cnt;
  }
  size_t words = cnt * 2 * TOPO_MAX_PATH;
  if (words > ph->paths_cap) {
    sim_free(ph->paths);
    ph->paths = sim_malloc(words * sizeof *ph->paths);
    ph->paths_cap = words;
  }
  for (size_t i = 0; i < cnt; i++) {
    ph->bytes += x[i].bytes;
    ph->cls_bytes[x[i].tclass & 7] += x[i].bytes;
    ph->qp[i] = NET__NONE;
    uint32_t *path = ph->paths + i * 2 * TOPO_MAX_PATH;
    uint8_t len[2] = {0, 0};
    uint32_t dnic[2];
    if (x[i].src_gpu == x[i].dst_gpu) continue;
    int rc = net__paths(n, &x[i], path, len, dnic);
    if (rc == SIM_ENOENT && n->health) ph->qp[i] = NOROUTE; /* a fault cut it off */
    if (rc != SIM_OK || len[0] == 0 || len[1] == 0) continue;
    ph->qp[i] = qp_setup(n, pid, i, len, dnic, now);
  }
  if (repeat == 0) {
    ev_schedule(b->sim, now, on_rep_end, n, pid);
    return;
  }
  rep_start(n, pid);
}

/* ---- reroute (faults) ------------------------------------------------------ */

static bool same_paths(const uint32_t *a, const uint8_t alen[2], const uint32_t *b,
                       const uint8_t blen[2]) {
  for (int d = 0; d < 2; d++) {
    if (alen[d] != blen[d]) return false;
    for (uint32_t j = 0; j < alen[d]; j++)
      if (a[d * TOPO_MAX_PATH + j] != b[d * TOPO_MAX_PATH + j]) return false;
  }
  return true;
}

/* Do paths a and b (both directions) keep every hop that leaves a host
 * (GPU, NIC) at the same position, and their exit NICs? Then a packet of
 * either is at a switch wherever the two differ. O(path). */
static bool same_hosts(const net__be *n, const uint32_t *a, const uint8_t alen[2],
                       const uint32_t adnic[2], const uint32_t *b, const uint8_t blen[2],
                       const uint32_t bdnic[2]) {
  for (int d = 0; d < 2; d++) {
    if (alen[d] != blen[d] || adnic[d] != bdnic[d]) return false;
    for (uint32_t j = 0; j < alen[d]; j++) {
      uint32_t x = a[d * TOPO_MAX_PATH + j], y = b[d * TOPO_MAX_PATH + j];
      if (x != y && (!n->vx[n->cold[x].src].is_switch || !n->vx[n->cold[y].src].is_switch))
        return false;
    }
  }
  return true;
}

/* Transfer i of phase pid after routing reconverged. Cost O(path). */
static void reroute_one(net__be *n, uint32_t pid, size_t i, simtime_ps now) {
  net__phase *ph = &n->ph[pid];
  uint32_t id = ph->qp[i];
  if (id == NET__NONE) return; /* never enters the network */
  uint32_t fresh[2 * TOPO_MAX_PATH], dnic[2];
  uint8_t len[2] = {0, 0};
  int rc = net__paths(n, &ph->x[i], fresh, len, dnic);
  bool routed = rc == SIM_OK && len[0] && len[1];
  uint32_t *path = ph->paths + i * 2 * TOPO_MAX_PATH;
  if (id == NOROUTE) { /* cut off before: usable again from the next repetition */
    if (!routed) return;
    memcpy(path, fresh, sizeof fresh);
    uint32_t qi = qp_setup(n, pid, i, len, dnic, now);
    n->qp[qi].done = 1; /* this repetition already counted it failed */
    ph->qp[i] = qi;
    return;
  }
  net__qp *q = &n->qp[id];
  if (!routed) {
    if (!q->done) qp_fail_now(n, id, "no route");
    qp_release(n, id);
    ph->qp[i] = NOROUTE;
    return;
  }
  if (same_paths(path, q->plen, fresh, len)) return;
  bool active = !q->done;
  net__qhot *h = &n->qh[id];
  if (active) sharing(n, q, -1);
  net__qp_unring(n, id);
  /* packets in flight go on from where they are (route.c) unless a host hop
   * moved under them: a NIC failover is another connection */
  if (!same_hosts(n, path, q->plen, h->dnic, fresh, len, dnic)) net__qp_orphan_packets(n, id);
  memcpy(path, fresh, sizeof fresh);
  q->plen[0] = h->plen[0] = len[0];
  q->plen[1] = h->plen[1] = len[1];
  h->dnic[0] = dnic[0];
  h->dnic[1] = dnic[1];
  q->max_rate = path_rate(n, path, len[0]);
  if (q->fl)
    for (uint32_t j = 0; j < 2 * TOPO_MAX_PATH; j++) q->fl[j] = (net__flowlet){0, NET__NONE};
  q->fl_stamp++;
  if (active) {
    n->st.flows_rerouted++;
    sharing(n, q, +1);
    net__qp_activate(n, id); /* resends wait for the retransmission timeout */
  }
}

void net__reroute(be_backend *b, const topo_health *h) {
  net__be *n = (net__be *)b;
  simtime_ps now = sim_now(b->sim);
  n->par_now = now;
  n->ext.reroutes++;
  /* keep a copy: routing's view stays valid after the caller changes h */
  uint32_t nl = topo_link_count(n->t);
  if (!n->health_own.link_ok) topo_health_init(&n->health_own, n->t);
  memcpy(n->health_own.link_ok, h->link_ok, nl);
  memcpy(n->health_own.vertex_ok, h->vertex_ok, n->nv);
  n->health_own.down = h->down;
  n->health = &n->health_own;
  if (!n->reach) n->reach = sim_calloc(NET__REACH_SLOTS, sizeof *n->reach);
  n->reach_gen++; /* gen 0 never matches: a fresh cache is empty */
  uint32_t *rcv = NULL;
  if (n->par) { /* what each receiver holds, for the failures' bytes delivered (a collective) */
    uint64_t *v = sim_calloc(n->nqp ? n->nqp : 1, sizeof *v);
    for (uint32_t qi = 0; qi < n->nqp; qi++) v[qi] = n->qp[qi].rcv_nxt;
    pdes_comm_allreduce_u64(v, n->nqp, true);
    rcv = sim_malloc((n->nqp ? n->nqp : 1) * sizeof *rcv);
    for (uint32_t qi = 0; qi < n->nqp; qi++) rcv[qi] = (uint32_t)v[qi];
    sim_free(v);
    n->par_rcv = rcv;
  }
  for (uint32_t pid = 0; pid < n->nph; pid++) {
    if (!n->ph[pid].live) continue;
    for (size_t i = 0; i < n->ph[pid].n; i++) reroute_one(n, pid, i, now);
  }
  n->par_rcv = NULL;
  sim_free(rcv);
}
