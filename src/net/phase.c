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
 * Storage: queue pairs live in one array of reused ids (released with a new
 * generation, so a stale timeout finds nothing); a phase slot and its path
 * and id arrays are reused by the next phase. Cost per phase: routing
 * O(n x path), per repetition O(n) plus the packets.
 */
#include <assert.h>
#include <string.h>

#include "net/net_internal.h"

static void on_rep_end(sim_ctx *sim, void *obj, uint64_t arg);

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
  memset(q, 0, sizeof *q);
  q->rtx = rtx;
  q->rtx_cap = rtx_cap;
  q->gen = gen;
  q->epoch = epoch;
  q->fl = fl;
  return qi;
}

static void qp_release(net__be *n, uint32_t qi) {
  net__qp_disarm(n, qi);
  net__qp *q = &n->qp[qi];
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

static void rep_start(net__be *n, uint32_t pid) {
  net__phase *ph = &n->ph[pid];
  simtime_ps now = sim_now(n->base.sim);
  ph->active = 0;
  for (size_t i = 0; i < ph->n; i++) {
    if (ph->qp[i] == NET__NONE) continue;
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
    if (ph->qp[i] != NET__NONE) net__qp_activate(n, ph->qp[i]);
}

void net__qp_complete(net__be *n, uint32_t qi) {
  net__qp *q = &n->qp[qi];
  net__phase *ph = &n->ph[q->phase];
  simtime_ps now = sim_now(n->base.sim);
  be_fct_add(&n->fct, now - q->start);
  sharing(n, q, -1);
  assert(ph->active > 0);
  if (--ph->active == 0) ev_schedule(n->base.sim, now, on_rep_end, n, q->phase);
}

static void on_rep_end(sim_ctx *sim, void *obj, uint64_t arg) {
  net__be *n = obj;
  uint32_t pid = (uint32_t)arg;
  net__phase *ph = &n->ph[pid];
  if (ph->reps_done < ph->repeat) {
    ph->reps_done++;
    n->st.transfers += ph->n;
    n->st.bytes += ph->bytes;
  }
  if (ph->reps_done < ph->repeat) {
    rep_start(n, pid);
    return;
  }
  for (size_t i = 0; i < ph->n; i++)
    if (ph->qp[i] != NET__NONE) qp_release(n, ph->qp[i]);
  be_done_fn done = ph->done;
  void *ctx = ph->ctx;
  ph->live = false;
  ph->x = NULL;
  ph->done = NULL;
  ph->ctx = NULL;
  n->active_phases--;
  if (done) done(sim, ctx); /* may submit a phase: nothing is held across it */
}

static rate_bps path_rate(const net__be *n, const uint32_t *path, uint32_t len) {
  rate_bps r = UINT64_MAX;
  for (uint32_t j = 0; j < len; j++)
    if (n->cold[path[j]].bps < r) r = n->cold[path[j]].bps;
  return r;
}

void net__submit_phase(be_backend *b, const be_xfer *x, size_t cnt, uint64_t repeat,
                       be_done_fn done, void *ctx) {
  net__be *n = (net__be *)b;
  simtime_ps now = sim_now(b->sim);
  uint32_t pid = phase_alloc(n);
  net__phase *ph = &n->ph[pid];
  ph->x = x;
  ph->n = cnt;
  ph->repeat = repeat;
  ph->reps_done = 0;
  ph->done = done;
  ph->ctx = ctx;
  ph->bytes = 0;
  ph->live = true;
  n->active_phases++;
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
    ph->qp[i] = NET__NONE;
    uint32_t *path = ph->paths + i * 2 * TOPO_MAX_PATH;
    uint8_t len[2] = {0, 0};
    uint32_t dnic[2];
    if (x[i].src_gpu == x[i].dst_gpu || net__paths(n, &x[i], path, len, dnic) != SIM_OK ||
        len[0] == 0 || len[1] == 0)
      continue;
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
    q->max_rate = path_rate(n, path, len[0]);
    q->last_cnp = SIM_TIME_MAX;
    q->rr_next = q->rr_prev = NET__NONE;
    n->cc->init(&q->cc, &n->ccp, q->max_rate, now);
    if (n->flowlet_gap && !q->fl) q->fl = sim_malloc(2 * TOPO_MAX_PATH * sizeof *q->fl);
    if (q->fl)
      for (uint32_t j = 0; j < 2 * TOPO_MAX_PATH; j++) q->fl[j] = (net__flowlet){0, NET__NONE};
    ph->qp[i] = qi;
  }
  if (repeat == 0) {
    ev_schedule(b->sim, now, on_rep_end, n, pid);
    return;
  }
  rep_start(n, pid);
}
