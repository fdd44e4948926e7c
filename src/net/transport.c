/* Reliable connection transport of a queue pair (RDMA WRITE semantics).
 *
 * Sender (requester), at the source GPU's first port
 *   The port pulls packets from the queue pairs in its ring, round robin,
 *   when it is free and has nothing queued to forward; a queue pair may send
 *   when its class is not PAUSEd, the credits into the next vertex allow, and
 *   its pacing time has come. Pacing is the per-QP rate limiter: the next
 *   packet may leave wire_bytes / rate after the previous one, with the rate
 *   from congestion control (DCQCN, or the path's bottleneck rate without
 *   it). Sequence numbers (PSNs) count packets of MTU payload; the first
 *   carries the RETH. Retransmissions come first: go-back-N rewinds the next
 *   PSN; selective repeat resends ranges reported missing.
 *   A transfer completes when its last PSN is acknowledged.
 *
 * Receiver (responder), at the destination GPU
 *   In-order data advances the expected PSN; ACKs are cumulative, one per
 *   cluster.nic.ack_every packets and always for the last packet, duplicates
 *   and retransmissions. Out-of-order data (counted):
 *     go-back-n  dropped; one NACK per expected PSN asks to resend from it;
 *     selective  kept in a bitmap (reorder buffer); on a fabric that can drop,
 *                a hole is NACKed, naming exactly its range, once data its
 *                receiver's reordering degree above it has arrived (0 on
 *                in-order paths: at once; learnt from spurious reports
 *                under per-packet routing, see nack_lost), and the sender
 *                resends only that range (as IRN-style selective repeat); on a
 *                lossless fabric reordering is not loss and no NACK is sent
 *                (the retransmission timeout remains).
 *   A CE-marked packet makes the notification point send a CNP (class 7),
 *   at most one per queue pair per cluster.nic.cnp_interval.
 *
 * Timeout: a queue pair with packets in flight is armed; a scan of its
 *   source GPU every RTO/16 (an event per GPU, while it has armed queue
 *   pairs: the same ticks on both engines) finds those with nothing
 *   acknowledged for RTO (so a timeout fires within RTO and RTO + RTO/16 of
 *   the last progress), and each goes back
 *   to the oldest unacknowledged PSN (in both modes, as NICs do; a selective
 *   receiver discards what it holds and its cumulative ACK skips ahead) and
 *   doubles the RTO (up to 64x; reset by progress).
 *
 * Stale packets of an earlier repetition (a late duplicate) carry an older
 *   epoch and are dropped on delivery.
 */
#include <assert.h>
#include <string.h>

#include "net/net_internal.h"

/* Giving up. The resend timer above is the transport's fast RTO
 * (cluster.nic.rto, doubling up to 64x). A queue pair goes to the error
 * state, and its transfer is reported failed ("retry limit", phase.c), after
 * RETRY_LIMIT timeouts in a row that also span RETRY_STALL_PS without any
 * progress: the RC retry count 7 of InfiniBand and RoCE NICs with NCCL's
 * default local ACK timeout (NCCL_IB_TIMEOUT 18: 4.096 us x 2^18 = 1.07 s,
 * 8 attempts: 8.6 s). So a black hole outlives routing reconvergence
 * (reliability.reconvergence, 0.2 to 1 s) as on real fabrics, and a
 * deadlocked lossless fabric still ends its phase. */
#define RETRY_STALL_PS ((simtime_ps)8 * 4096 * SIM_PS_PER_NS * (1u << 18))
enum { RETH = 16, RTO_MAX_FACTOR = 64, RETRY_LIMIT = 7 };
/* Largest reordering degree a receiver learns (Linux net.ipv4.tcp_max_reordering
 * default, Documentation/networking/ip-sysctl.rst). */
enum { REORDER_MAX = 300 };

static void on_vscan(sim_ctx *sim, void *obj, uint64_t arg);

void net__qp_reset(net__be *n, net__qp *q, simtime_ps now) {
  (void)n;
  q->start = now;
  q->epoch++;
  q->done = 0;
  q->snd_nxt = q->snd_una = q->snd_max = 0;
  q->nrtx = 0;
  q->next_send = now;
  q->last_progress = now;
  q->rto_cur = n->rto;
  q->retries = 0;
  q->failed = 0;
  q->rcv_nxt = q->acked = q->rcv_high = 0;
  q->nack_psn = NET__NONE;
  q->nack_hi = 0;
  if (q->ooo) memset(q->ooo, 0, q->ooo_words * sizeof *q->ooo);
}

static inline bool has_work(const net__qp *q) { return q->nrtx || q->snd_nxt < q->npkts; }

/* Drop retransmission ranges (or parts) already acknowledged. */
static void rtx_trim(net__qp *q) {
  uint32_t k = 0;
  while (k < q->nrtx && q->rtx[k].hi <= q->snd_una) k++;
  if (k) {
    memmove(q->rtx, q->rtx + k, (q->nrtx - k) * sizeof *q->rtx);
    q->nrtx -= k;
  }
  if (q->nrtx && q->rtx[0].lo < q->snd_una) q->rtx[0].lo = q->snd_una;
}

static void rtx_add(net__qp *q, uint32_t lo, uint32_t hi) {
  if (lo < q->snd_una) lo = q->snd_una;
  if (hi > q->snd_max) hi = q->snd_max;
  if (lo >= hi) return;
  for (uint32_t k = 0; k < q->nrtx; k++)
    if (lo < q->rtx[k].hi && q->rtx[k].lo < hi) return; /* already being resent */
  if (q->nrtx == q->rtx_cap) {
    q->rtx_cap = q->rtx_cap ? 2 * q->rtx_cap : 4;
    q->rtx = sim_realloc(q->rtx, q->rtx_cap * sizeof *q->rtx);
  }
  uint32_t k = q->nrtx;
  while (k > 0 && q->rtx[k - 1].lo > lo) { /* keep ranges sorted */
    q->rtx[k] = q->rtx[k - 1];
    k--;
  }
  q->rtx[k] = (net__range){lo, hi};
  q->nrtx++;
}

static void ring_insert(net__be *n, uint32_t c, uint32_t qi) {
  net__chan *ch = &n->ch[c];
  net__qp *q = &n->qp[qi];
  if (ch->qp_head == NET__NONE) {
    q->rr_next = q->rr_prev = qi;
    ch->qp_head = qi;
  } else {
    assert(n->cold[c].qp_count > 0);
    uint32_t h = ch->qp_head, t = n->qp[h].rr_prev;
    q->rr_prev = t;
    q->rr_next = h;
    n->qp[t].rr_next = qi;
    n->qp[h].rr_prev = qi;
  }
  q->in_ring = 1;
  n->cold[c].qp_count++;
}

static void ring_remove(net__be *n, uint32_t c, uint32_t qi) {
  net__chan *ch = &n->ch[c];
  net__qp *q = &n->qp[qi];
  if (q->rr_next == qi) {
    ch->qp_head = NET__NONE;
  } else {
    n->qp[q->rr_prev].rr_next = q->rr_next;
    n->qp[q->rr_next].rr_prev = q->rr_prev;
    if (ch->qp_head == qi) ch->qp_head = q->rr_next;
  }
  q->in_ring = 0;
  n->cold[c].qp_count--;
}

void net__qp_activate(net__be *n, uint32_t qi) {
  net__qp *q = &n->qp[qi];
  if (q->done || !has_work(q)) return;
  uint32_t c = q->path[0][0];
  if (n->par && !net__par_owns(n, n->cold[c].src)) return; /* its sender is on another rank */
  if (!q->in_ring) ring_insert(n, c, qi);
  net__port_kick(n, c);
}

/* qi's source vertex: its timer's scans are that vertex's. */
static uint32_t qp_source(const net__be *n, uint32_t qi) {
  return n->cold[n->qp[qi].path[0][0]].src;
}

/* Sequential engine: qi's source's scans (made at the first arm; `at` 0: none yet). */
static net__vscan *vscan_of(net__be *n, uint32_t qi) {
  if (!n->vscan) n->vscan = sim_calloc(n->nv ? n->nv : 1, sizeof *n->vscan);
  return &n->vscan[qp_source(n, qi)];
}

/* The set qi's timer is in: its source vertex's, on either engine. */
static net__armset *armset_of(net__be *n, uint32_t qi) {
  return n->par ? net__par_armset(n, qi) : &vscan_of(n, qi)->set;
}

/* Sequential engine: qi armed; its source's scans run on, or start a
 * period from now, as the parallel engine's do (net__par_scan_soon). A
 * scan the set was empty for when it came stopped them: `at` at or before
 * now (at now, one after this arm would find it armed and not yet due, so
 * the next comes a period later either way). */
static void vscan_arm(net__be *n, uint32_t qi) {
  net__vscan *s = vscan_of(n, qi);
  simtime_ps now = sim_now(n->base.sim);
  if (s->ev) return;
  if (s->at <= now) s->at = now + n->scan_period;
  s->ev = ev_schedule_beside(n->base.sim, s->at, on_vscan, n, qp_source(n, qi));
}

static void arm(net__be *n, uint32_t qi) {
  net__qp *q = &n->qp[qi];
  net__armset *s = armset_of(n, qi);
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 8;
    s->q = sim_realloc(s->q, s->cap * sizeof *s->q);
  }
  q->armed = 1;
  q->armed_pos = s->n;
  s->q[s->n++] = qi;
  if (n->par) net__par_scan_soon(n, qi);
  else vscan_arm(n, qi);
}

void net__qp_unring(net__be *n, uint32_t qi) {
  net__qp *q = &n->qp[qi];
  if (q->in_ring) ring_remove(n, q->path[0][0], qi);
}

void net__qp_stop(net__be *n, uint32_t qi) {
  net__qp *q = &n->qp[qi];
  q->done = 1;
  q->nrtx = 0;
  if (q->in_ring) ring_remove(n, q->path[0][0], qi);
  net__qp_disarm(n, qi);
}

void net__qp_disarm(net__be *n, uint32_t qi) {
  net__qp *q = &n->qp[qi];
  if (!q->armed) return;
  net__armset *s = armset_of(n, qi);
  uint32_t last = s->q[--s->n];
  s->q[q->armed_pos] = last;
  n->qp[last].armed_pos = q->armed_pos;
  q->armed = 0; /* parallel engine: a pending scan of an empty set stops */
  net__vscan *vs = n->par ? NULL : &n->vscan[qp_source(n, qi)];
  if (vs && s->n == 0 && vs->ev) { /* no timer outlives the traffic; `at` is kept */
    ev_cancel(n->base.sim, vs->ev);
    vs->ev = 0;
  }
}

static inline uint32_t payload_of(const net__be *n, const net__qp *q, uint32_t psn) {
  return psn + 1 == q->npkts ? q->last_payload : n->mtu;
}

uint32_t net__qp_pull(net__be *n, uint32_t c, simtime_ps now) {
  net__chan *ch = &n->ch[c];
  simtime_ps wake = SIM_TIME_MAX;
  uint32_t qi = ch->qp_head;
  for (uint32_t left = n->cold[c].qp_count; left > 0; left--) {
    net__qp *q = &n->qp[qi];
    uint32_t next = q->rr_next;
    rtx_trim(q);
    if (!has_work(q)) { /* everything resent was acknowledged meanwhile */
      ring_remove(n, c, qi);
      qi = next;
      continue;
    }
    uint32_t psn = q->nrtx ? q->rtx[0].lo : q->snd_nxt;
    uint32_t frame = payload_of(n, q, psn) + n->hdr + (psn == 0 ? RETH : 0);
    if (q->next_send > now) {
      if (q->next_send < wake) wake = q->next_send;
    } else if (net__can_send(n, c, q->cls, frame, now)) {
      uint32_t i = net__pkt_alloc(n);
      net__pkt *p = net__pkt_at(n, i);
      p->qp = qi;
      p->psn = psn;
      p->aux = 0;
      p->ack = 0;
      p->next = q->plen[0] > 1 ? q->path[0][1] : NET__NONE;
      p->in_ch = NET__NONE;
      p->frame = (uint16_t)frame;
      p->epoch = q->epoch;
      p->kind = NET__DATA;
      p->cls = q->cls;
      p->hop = 0;
      p->flags = n->ect ? NET__F_ECT : 0;
      p->tail = now;
      if (psn < q->snd_max) {
        p->flags |= NET__F_RETX;
        n->st.retransmits++;
      } else {
        q->snd_max = psn + 1;
        n->st.packets++;
      }
      if (q->nrtx) {
        if (++q->rtx[0].lo >= q->rtx[0].hi) {
          memmove(q->rtx, q->rtx + 1, (q->nrtx - 1) * sizeof *q->rtx);
          q->nrtx--;
        }
      } else {
        q->snd_nxt++;
      }
      /* rate limiter */
      rate_bps rate = n->cc->rate(&q->cc, &n->ccp, now);
      uint32_t wire = frame + n->pre;
      if (rate != q->pace_rate || wire != q->pace_wire) {
        q->pace_rate = rate;
        q->pace_wire = wire;
        q->pace_ps = sim_serialization_ps(wire, rate);
      }
      q->next_send = (q->next_send > now ? q->next_send : now) + q->pace_ps;
      if (!q->armed) arm(n, qi);
      if (!has_work(q)) ring_remove(n, c, qi);
      else ch->qp_head = next;
      return i;
    }
    qi = next;
  }
  if (wake != SIM_TIME_MAX) net__ensure_wake(n, c, wake);
  return NET__NONE;
}

/* ---- receiver ------------------------------------------------------------------- */

static void send_ctrl(net__be *n, uint32_t qi, net__kind kind, uint32_t psn, uint32_t aux) {
  uint32_t ack = n->qp[qi].rcv_nxt;
  net__qp *q = &n->qp[qi];
  uint32_t i = net__pkt_alloc(n);
  net__pkt *p = net__pkt_at(n, i);
  p->qp = qi;
  p->psn = psn;
  p->aux = aux;
  p->ack = ack;
  p->next = q->plen[1] > 1 ? q->path[1][1] : NET__NONE;
  p->in_ch = NET__NONE;
  p->frame = (uint16_t)(kind == NET__CNP ? n->cnp_frame : n->ack_frame);
  p->epoch = q->epoch;
  p->kind = (uint8_t)kind;
  p->cls = kind == NET__CNP ? NET__CTRL_CLASS : q->cls;
  p->hop = 0;
  p->flags = NET__F_REV;
  p->tail = net__now(n);
  if (kind == NET__ACK) n->ext.acks++;
  else if (kind == NET__NACK) n->ext.nacks++;
  net__enqueue(n, q->path[1][0], i);
}

static inline bool bit_get(const net__qp *q, uint32_t b) {
  return b / 64 < q->ooo_words && (q->ooo[b / 64] >> (b % 64)) & 1;
}

/* First PSN >= from whose bit is `want` (bounded by npkts). */
static uint32_t bit_scan(const net__qp *q, uint32_t from, bool want) {
  for (uint32_t b = from; b < q->npkts;) {
    uint64_t w = b / 64 < q->ooo_words ? q->ooo[b / 64] : 0;
    if (!want) w = ~w;
    w &= ~0ull << (b % 64);
    if (w) {
      uint32_t r = (b & ~63u) + (uint32_t)__builtin_ctzll(w);
      return r < q->npkts ? r : q->npkts;
    }
    b = (b & ~63u) + 64;
  }
  return q->npkts;
}

/* Loss detection of a selective receiver on a fabric that can drop. A hole
 * is reported (NACKed, once) when data more than the receiver's reordering
 * degree PSNs above it has arrived: TCP's duplicate threshold made adaptive
 * (Linux's tp->reordering, kept per destination host in its TCP metrics
 * cache; here per receiving GPU, net__vert.reorder, for the whole run). It
 * starts at 0: a fabric that keeps a queue pair's packets in order (static
 * routing, ECMP) has a hole NACKed as soon as it opens. When an original
 * packet (not a retransmission) arrives in a hole already reported, before
 * or after the retransmission it caused, the report was reordering, not
 * loss: the degree grows to how far the data had run ahead of it and at
 * least doubles, up to REORDER_MAX (beyond, the timeout recovers), so a
 * receiver pays O(log REORDER_MAX) spurious reports. Per-packet routing
 * (adaptive, spray), whose paths differ in queueing by design, so learns
 * how far packets overtake each other after a few spurious retransmissions,
 * instead of resending every overtaken packet for the rest of the run once
 * a fault made the fabric lossy (issue 13: 5 drops -> 10,789 retransmits).
 * A hole with too little data after it is left to the timeout.
 * O(holes reported). */
static uint16_t *reorder_of(net__be *n, const net__qp *q) {
  return &n->vx[n->ch[q->path[0][q->plen[0] - 1]].dst].reorder;
}

static void reordered(net__be *n, const net__qp *q, uint32_t psn) {
  uint16_t *r = reorder_of(n, q);
  uint32_t ahead = q->rcv_high - psn, deg = 2u * *r > ahead ? 2u * *r : ahead;
  *r = (uint16_t)(deg < REORDER_MAX ? deg : REORDER_MAX);
}

static void nack_lost(net__be *n, uint32_t qi, uint32_t psn) {
  net__qp *q = &n->qp[qi];
  uint32_t deg = *reorder_of(n, q);
  if (psn < deg) return;
  uint32_t upto = psn - deg, from = q->nack_hi > q->rcv_nxt ? q->nack_hi : q->rcv_nxt;
  if (upto <= from) return;
  q->nack_hi = upto;
  for (uint32_t lo = bit_scan(q, from, false); lo < upto;) {
    uint32_t hi = bit_scan(q, lo, true);
    if (hi > upto) hi = upto;
    q->acked = q->rcv_nxt;
    send_ctrl(n, qi, NET__NACK, lo, hi);
    lo = bit_scan(q, hi, false);
  }
}

static void rx_data(net__be *n, uint32_t qi, uint32_t psn, uint8_t flags, simtime_ps now) {
  net__qp *q = &n->qp[qi];
  if ((flags & NET__F_CE) && n->cc->on_cnp &&
      (q->last_cnp == SIM_TIME_MAX || now - q->last_cnp >= n->cnp_interval)) {
    q->last_cnp = now;
    n->st.cnps++;
    send_ctrl(n, qi, NET__CNP, 0, 0);
  }
  bool selective = n->recovery == CFG_RECOVERY_SELECTIVE;
  if (psn == q->rcv_nxt) {
    q->rcv_nxt = q->ooo ? bit_scan(q, psn + 1, false) : psn + 1;
    if (q->rcv_high < q->rcv_nxt) q->rcv_high = q->rcv_nxt;
    if (psn < q->nack_hi && !(flags & NET__F_RETX)) reordered(n, q, psn);
    if (q->rcv_nxt == q->npkts || q->rcv_nxt - q->acked >= n->ack_every || (flags & NET__F_RETX)) {
      q->acked = q->rcv_nxt;
      send_ctrl(n, qi, NET__ACK, 0, 0);
    }
    return;
  }
  if (psn < q->rcv_nxt || (selective && bit_get(q, psn))) {
    n->ext.duplicates++;
    if (psn < q->nack_hi && !(flags & NET__F_RETX))
      reordered(n, q, psn); /* overtaken by its resend */
    q->acked = q->rcv_nxt;
    send_ctrl(n, qi, NET__ACK, 0, 0);
    return;
  }
  n->st.out_of_order++;
  if (!selective) { /* dropped; one NACK per expected PSN */
    if (q->nack_psn != q->rcv_nxt) {
      q->nack_psn = q->rcv_nxt;
      q->acked = q->rcv_nxt;
      send_ctrl(n, qi, NET__NACK, q->rcv_nxt, psn);
    }
    return;
  }
  if (!q->ooo) {
    q->ooo_words = (q->npkts + 63) / 64;
    q->ooo = sim_calloc(q->ooo_words, sizeof *q->ooo);
  }
  q->ooo[psn / 64] |= 1ull << (psn % 64);
  if (psn + 1 > q->rcv_high) q->rcv_high = psn + 1;
  if (psn < q->nack_hi && !(flags & NET__F_RETX)) reordered(n, q, psn);
  if (n->lossy) nack_lost(n, qi, psn);
}

/* ---- sender signals -------------------------------------------------------------- */

static bool rx_ack(net__be *n, uint32_t qi, uint32_t a, simtime_ps now) {
  net__qp *q = &n->qp[qi];
  if (q->done) return false;
  if (a > q->snd_una) {
    q->snd_una = a > q->npkts ? q->npkts : a;
    q->last_progress = now;
    q->rto_cur = n->rto;
    q->retries = 0;
    if (q->snd_nxt < q->snd_una) q->snd_nxt = q->snd_una;
  }
  if (q->snd_una < q->npkts) return true;
  net__qp_stop(n, qi);
  net__qp_complete(n, qi);
  return false;
}

static void rx_nack(net__be *n, uint32_t qi, uint32_t ack, uint32_t lo, uint32_t hi,
                    simtime_ps now) {
  if (!rx_ack(n, qi, ack, now)) return;
  net__qp *q = &n->qp[qi];
  if (n->recovery == CFG_RECOVERY_GO_BACK_N) {
    if (lo < q->snd_nxt) q->snd_nxt = lo > q->snd_una ? lo : q->snd_una;
  } else {
    rtx_add(q, lo, hi);
  }
  net__qp_activate(n, qi);
}

static void timeout(net__be *n, uint32_t qi, simtime_ps now) {
  net__qp *q = &n->qp[qi];
  n->ext.timeouts++;
  if (q->retries == 0) q->stalled_since = q->last_progress;
  if (q->retries < UINT8_MAX) q->retries++;
  if (q->retries > RETRY_LIMIT && now - q->stalled_since >= RETRY_STALL_PS) { /* error state */
    n->ext.qp_errors++;
    net__qp_fail(n, qi, "retry limit");
    return;
  }
  q->snd_nxt = q->snd_una; /* both modes go back on a timeout; a selective */
  q->nrtx = 0;             /* receiver drops what it already holds */
  q->rto_cur = q->rto_cur < RTO_MAX_FACTOR / 2 * n->rto ? 2 * q->rto_cur : RTO_MAX_FACTOR * n->rto;
  q->last_progress = now;
  net__qp_activate(n, qi);
}

void net__armset_scan(net__be *n, net__armset *s, simtime_ps now) {
  for (uint32_t j = 0; j < s->n;) { /* a QP in error leaves the set (swap with the last) */
    uint32_t qi = s->q[j];
    net__qp *q = &n->qp[qi];
    if (q->snd_una < q->snd_max && now >= q->last_progress + q->rto_cur) timeout(n, qi, now);
    if (j < s->n && s->q[j] == qi) j++;
  }
}

/* Sequential engine: a scan of source vertex v (arg; bit 32: deferred
 * once), after what reaches v this picosecond as on the parallel engine
 * (NET__ORD_WAKE); the next a period later while v has armed queue pairs
 * (parallel.c, h_scan). */
static void on_vscan(sim_ctx *sim, void *obj, uint64_t arg) {
  net__be *n = obj;
  uint32_t v = (uint32_t)arg;
  net__vscan *s = &n->vscan[v];
  simtime_ps now = sim_now(sim);
  if (!net__wake_turn(n, v, now, arg >> 32)) {
    s->ev = ev_schedule_beside(sim, now, on_vscan, n, arg | 1ull << 32);
    return;
  }
  s->ev = 0;
  net__armset_scan(n, &s->set, now);
  if (s->set.n && !s->ev) {
    s->at = now + n->scan_period;
    s->ev = ev_schedule_beside(sim, s->at, on_vscan, n, v);
  }
}

void net__deliver(net__be *n, uint32_t i) {
  net__pkt *p = net__pkt_at(n, i);
  uint32_t qi = p->qp, psn = p->psn, aux = p->aux, ack = p->ack;
  uint8_t kind = p->kind, flags = p->flags;
  simtime_ps now = net__now(n);
  net__pkt_free(n, i); /* stale packets were dropped on arrival (port.c) */
  switch ((net__kind)kind) {
  case NET__DATA: rx_data(n, qi, psn, flags, now); break;
  case NET__ACK: rx_ack(n, qi, ack, now); break;
  case NET__NACK: rx_nack(n, qi, ack, psn, aux, now); break;
  case NET__CNP:
    if (n->cc->on_cnp && !n->qp[qi].done) n->cc->on_cnp(&n->qp[qi].cc, &n->ccp, now);
    break;
  }
}
