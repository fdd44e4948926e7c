/* Egress ports, arrivals, the switch buffer (MMU), ECN, PFC and credits.
 *
 * A port (the source end of a channel) serializes one packet at a time. Its
 * queue is 8 classes (fabric.classes): strict priority levels, the highest
 * level with an eligible class served first, and within a level deficit
 * round robin (Shreedhar and Varghese, "Efficient fair queueing using
 * deficit round-robin", IEEE/ACM ToN 4(3), 1996): the class under the
 * round-robin pointer sends while its deficit covers its head packet; the
 * pointer then moves to the next eligible class of the level, whose deficit
 * grows by its quantum, weight x the largest frame the fabric carries (a
 * quantum of at least one maximal packet serves a packet per visit, so a
 * selection is O(classes); the long-run shares of backlogged classes are
 * their weights' shares). A class's deficit returns to 0 when its queue
 * empties. Defaults: 7 then 6 strict, 0..5 one level of weight 1 each, which
 * with whole frames serves one packet per turn as before. A class is
 * eligible when it has packets, is not PAUSEd by the downstream vertex (PFC)
 * and, on credit links, its head packet fits the credits the downstream
 * vertex granted. A source port (GPU) also pulls from its queue pairs, round
 * robin over them whatever their class, when no queued packet is eligible.
 *
 * Events
 *   arrival   one per packet per hop, at (head or tail) + propagation +
 *             forwarding latency of the vertex entered; a link keeps its
 *             packets in flight in a FIFO and only the first has its event
 *             pending (the next one's is scheduled as it arrives);
 *   wake      a port's next chance to send: scheduled only when it has work
 *             when it becomes busy, or when it waits for credits or pacing;
 *             at most one is pending per port and time (ensure_wake);
 *   PFC       one per PAUSE/RESUME frame.
 *   Credit returns travel in a per-channel ring (arrival order = issue order,
 *   constant delay) and are absorbed when the sender looks: no events unless
 *   the sender is blocked.
 *
 * Buffer accounting (at the vertex holding a packet, from its arrival to the
 * start of its transmission onward; the packet's in_ch names the input).
 * Which of the three below a packet meets is its class's at a switch input
 * of RoCE or Ethernet (net__fc_of: the class lossless or lossy by
 * fabric.classes), credits everywhere else. With class shares
 * (fabric.classes buffer < 1) a class's queues at a switch hold at most its
 * share of the shared pool, and "free shared" below is the smaller of the
 * pool's free bytes and what is left of the class's share (a service pool
 * per class, as switch MMUs map priority groups to pools).
 *   credit input: credits return to the upstream port when the packet leaves;
 *   PFC input (ingress accounting, as the common ns-3 RDMA switch MMU): bytes
 *     per (input, class) fill a 4 KB reserve, then the shared pool up to the
 *     threshold (static fabric.pfc.xoff, or alpha x free shared), then the
 *     input's headroom (one budget per input, used per class); XOFF of a
 *     class when it uses headroom or its shared part reaches the threshold,
 *     XON when its headroom is empty and its shared part is fabric.pfc.xon
 *     below the threshold (or zero). Every PAUSEd class holds at least the
 *     packet that caused the XOFF, and the check runs as each of its packets
 *     leaves, so a RESUME always follows. Headroom overflow drops (counted
 *     apart: it means the headroom is too small);
 *   lossy input (egress accounting): bytes per (output, class) fill the
 *     reserve, then the shared pool while under alpha x free shared; else
 *     tail drop.
 *   Invariant: a vertex's shared_used = sum over its queues of max(0, bytes -
 *   reserve), for the queues its inputs account to.
 *
 * Faults (net__link_state): a link down drops what is queued at its two
 * ports at once (buffers released upstream, PFC RESUMEs as due) and marks
 * what is on the wire lost (dropped on arrival, credits returned), clears
 * PFC state across it, and from then on loses whatever is sent onto it or
 * routed into it (a black hole until be_ops.reroute moves the paths); a
 * link with a bit error rate loses each packet sent onto it with
 * probability 1 - (1 - ber)^(wire bits), drawn from the sending vertex's
 * stream "net.v<vertex>.ber" on both engines;
 * a rate factor below 1 slows serialization. Counted in drops
 * (net__ext.link_drops, ber_drops apart).
 */
#include <assert.h>
#include <math.h>

#include "net/net_internal.h"

static void on_wake(sim_ctx *sim, void *obj, uint64_t arg);
static void on_arrive(sim_ctx *sim, void *obj, uint64_t arg);
static void on_pfc(sim_ctx *sim, void *obj, uint64_t arg);
static void due_run(net__be *n, uint32_t v, simtime_ps now);

static inline uint64_t over(uint64_t x, uint64_t r) { return x > r ? x - r : 0; }

/* Sequential engine: arrivals and PFC frames whose events are pending, at
 * (vertex, time), hashed without a key (a collision only makes something
 * wait for an instant's ordering that needed none). */
static inline uint32_t due_slot(const net__be *n, uint32_t v, simtime_ps t) {
  uint64_t h = (t * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)v * 0xc2b2ae3d27d4eb4full);
  return (uint32_t)(h >> (64 - n->due_bits));
}

static inline uint16_t *due_count(net__be *n, uint32_t v, simtime_ps t) {
  return &n->due_n[due_slot(n, v, t)];
}

/* An arrival event at channel c's far end at `at` (sequential engine),
 * counted due there; its argument carries its due slot (the run needs no
 * second hash). */
static inline void arrival_event(net__be *n, uint32_t c, simtime_ps at) {
  uint32_t k = due_slot(n, n->ch[c].dst, at);
  n->due_n[k]++;
  ev_schedule_beside(n->base.sim, at, on_arrive, n, (uint64_t)k << 32 | c);
}

void net__ensure_wake(net__be *n, uint32_t c, simtime_ps at) {
  net__chan *ch = &n->ch[c];
  if (ch->wake_at <= at) return; /* an earlier wake re-evaluates and re-arms */
  ch->wake_at = at;
  if (n->par) net__par_wake(n, c, at);
  else ev_schedule_beside(n->base.sim, at, on_wake, n, c);
}

/* A wake comes after what reaches its vertex at the same instant
 * (NET__ORD_*): the sequential engine runs that first; the parallel one
 * orders its events so. */
void net__wake(net__be *n, uint32_t c) {
  simtime_ps now = net__now(n);
  uint32_t v = n->cold[c].src;
  if (n->ch[c].wake_at == now) n->ch[c].wake_at = SIM_TIME_MAX;
  if (!n->par && n->due[v].n) due_run(n, v, now);
  net__port_kick(n, c);
}

bool net__wake_turn(net__be *n, uint32_t v, simtime_ps now, bool deferred) {
  if (!deferred && *due_count(n, v, now)) return false;
  if (n->due[v].n) due_run(n, v, now);
  return true;
}

/* Sequential engine: a wake while an arrival or PFC frame is still due at
 * its vertex this picosecond (due_count) goes once behind every event due
 * then (NET__ORD_WAKE). */
static void on_wake(sim_ctx *sim, void *obj, uint64_t arg) {
  net__be *n = obj;
  uint32_t c = (uint32_t)arg;
  if (!(arg >> 32) && *due_count(n, n->cold[c].src, sim_now(sim))) {
    ev_schedule_beside(sim, sim_now(sim), on_wake, n, arg | 1ull << 32);
    return;
  }
  net__wake(n, c);
}

/* ---- queues --------------------------------------------------------------- */

static inline void q_account(net__chan *ch, simtime_ps now) {
  ch->q_integral += (double)ch->bytes * (double)(now - ch->q_last);
  ch->q_last = now;
}

static inline void q_push(net__be *n, uint32_t c, uint32_t i, const net__pkt *p, simtime_ps now) {
  net__chan *ch = &n->ch[c];
  net__cq *q = net__cq_at(n, c, p->cls);
  q_account(ch, now);
  *net__pnext(n, i) = NET__NONE;
  if (q->tail == NET__NONE) q->head = i;
  else *net__pnext(n, q->tail) = i;
  q->tail = i;
  q->bytes += p->frame;
  ch->bytes += p->frame;
  if (q->bytes > q->max_bytes) q->max_bytes = q->bytes;
  ch->nonempty |= (uint8_t)(1u << p->cls);
  if (ch->bytes > ch->max_bytes) ch->max_bytes = ch->bytes;
}

static inline uint32_t q_pop(net__be *n, uint32_t c, uint32_t k, simtime_ps now) {
  net__chan *ch = &n->ch[c];
  net__cq *q = net__cq_at(n, c, k);
  uint32_t i = q->head, next = *net__pnext(n, i);
  uint32_t f = net__pkt_at(n, i)->frame;
  q_account(ch, now);
  q->head = next;
  if (next == NET__NONE) {
    q->tail = NET__NONE;
    q->deficit = 0; /* an empty class keeps no credit in the round robin */
    ch->nonempty &= (uint8_t) ~(1u << k);
  } else {
    __builtin_prefetch(net__pkt_at(n, next)); /* the next one to leave */
  }
  q->bytes -= f;
  ch->bytes -= f;
  return i;
}

/* Deficit round robin among the eligible classes g (two or more) of one
 * level at port c: the class under the pointer sends while its deficit
 * covers its head packet, else the pointer moves on and the next class's
 * deficit grows by its quantum (>= any frame: it then sends). O(classes). */
static uint32_t dwrr(net__be *n, uint32_t c, uint32_t g) {
  uint8_t *cur = &n->rr[(size_t)c * NET__CLASSES + n->level_of[__builtin_ctz(g)]];
  uint32_t k = *cur;
  for (;;) {
    if (g >> k & 1) {
      net__cq *q = net__cq_at(n, c, k);
      int32_t f = net__pkt_at(n, q->head)->frame;
      if (q->deficit >= f) {
        q->deficit -= f;
        *cur = (uint8_t)k;
        return k;
      }
    }
    uint32_t above = g & ~((2u << k) - 1u); /* the next class of the level, cyclically */
    k = (uint32_t)__builtin_ctz(above ? above : g);
    net__cq_at(n, c, k)->deficit += n->quantum[k];
  }
}

/* The class port c serves next among the eligible ones (mask != 0): the
 * highest priority level present, by deficit round robin within it. */
static inline uint32_t pick_class(net__be *n, uint32_t c, uint32_t mask) {
  uint32_t g = n->top[mask];
  if (!(g & (g - 1))) return (uint32_t)__builtin_ctz(g);
  return dwrr(n, c, g);
}

/* ---- credits ---------------------------------------------------------------- */

static void ring_absorb(net__be *n, uint32_t c, simtime_ps now) {
  net__ring *r = &n->cold[c].ring;
  while (r->n && r->t[r->head] <= now) {
    uint32_t v = r->v[r->head];
    net__cq_at(n, c, v >> 24)->credits += (int32_t)(v & 0xffffff);
    r->head = r->head + 1 == r->cap ? 0 : r->head + 1;
    r->n--;
  }
}

static void ring_push(net__ring *r, simtime_ps at, uint32_t cls, uint32_t bytes) {
  if (r->n) { /* merge with the newest entry when it lands at the same time */
    uint32_t last = (r->head + r->n - 1) % r->cap;
    if (r->t[last] == at && r->v[last] >> 24 == cls &&
        (r->v[last] & 0xffffff) + bytes < (1u << 24)) {
      r->v[last] += bytes;
      return;
    }
  }
  if (r->n == r->cap) {
    uint32_t cap = r->cap ? 2 * r->cap : 8;
    simtime_ps *t = sim_malloc(cap * sizeof *t);
    uint32_t *v = sim_malloc(cap * sizeof *v);
    for (uint32_t j = 0; j < r->n; j++) {
      t[j] = r->t[(r->head + j) % r->cap];
      v[j] = r->v[(r->head + j) % r->cap];
    }
    sim_free(r->t);
    sim_free(r->v);
    r->t = t;
    r->v = v;
    r->cap = cap;
    r->head = 0;
  }
  uint32_t at_i = (r->head + r->n) % r->cap;
  r->t[at_i] = at;
  r->v[at_i] = bytes | cls << 24;
  r->n++;
}

/* The downstream end of channel c freed `bytes` of class cls at now. */
static void credit_return(net__be *n, uint32_t c, uint32_t cls, uint32_t bytes, simtime_ps now) {
  net__chan *ch = &n->ch[c];
  net__ring *r = &n->cold[c].ring;
  simtime_ps at = now + n->cold[c].prop;
  if (n->par) { /* an event on the reverse channel, even with no delay */
    net__par_credit(n, c, cls, bytes, at);
    return;
  }
  if (at == now && r->n == 0) net__cq_at(n, c, cls)->credits += (int32_t)bytes;
  else ring_push(r, at, cls, bytes);
  if (ch->cblocked) net__ensure_wake(n, c, at);
}

/* Can port c send `frame` bytes of class cls now? If not, arrange a wake
 * for the next credit arrival (or mark the port blocked for the next return). */
static bool credit_ok(net__be *n, uint32_t c, uint32_t cls, uint32_t frame, simtime_ps now) {
  net__chan *ch = &n->ch[c];
  if (ch->fc != NET__FC_CREDIT) return true;
  ring_absorb(n, c, now);
  if (net__cq_at(n, c, cls)->credits >= (int32_t)frame) return true;
  ch->cblocked = 1;
  net__ring *r = &n->cold[c].ring;
  if (r->n) net__ensure_wake(n, c, r->t[r->head]);
  return false;
}

/* A credit return from channel c's destination reaches its source (par).
 * A port waiting for it sends in a wake at the same instant, after the
 * arrivals there (NET__ORD_*), as the sequential engine's does. */
void net__credit_rx(net__be *n, uint32_t c, uint32_t cls, uint32_t bytes) {
  net__cq_at(n, c, cls)->credits += (int32_t)bytes;
  if (n->ch[c].cblocked) net__ensure_wake(n, c, net__now(n));
}

bool net__can_send(net__be *n, uint32_t c, uint32_t cls, uint32_t frame, simtime_ps now) {
  if (n->ch[c].paused & (1u << cls)) return false;
  return credit_ok(n, c, cls, frame, now);
}

/* ---- what reaches a vertex at one instant, in order (sequential engine) ------------- */

static inline uint64_t due_key(uint32_t ord, uint32_t from, uint32_t seq) {
  return (uint64_t)ord << 62 | (uint64_t)from << 32 | seq;
}

/* Entries of one heap are all due at the same instant. */
static inline bool due_less(const net__due *a, const net__due *b) { return a->key < b->key; }

static void on_due(sim_ctx *sim, void *obj, uint64_t arg) {
  due_run(obj, (uint32_t)arg, sim_now(sim));
}

/* An arrival or PFC frame d at vertex v now, while another is due there at
 * this picosecond (due_wait): it waits in v's heap, and one event at
 * now, after every event already due then, runs the heap in NET__ORD_*
 * order (a wake at v runs it first). O(log entries); nothing when no other
 * event shares the instant, the common case. */
static void due_defer(net__be *n, uint32_t v, net__due d) {
  net__dueheap *h = &n->due[v];
  if (h->n == 0) ev_schedule_beside(n->base.sim, d.at, on_due, n, v);
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 4;
    h->e = sim_realloc(h->e, h->cap * sizeof *h->e);
  }
  uint32_t j = h->n++;
  while (j > 0 && due_less(&d, &h->e[(j - 1) / 2])) {
    h->e[j] = h->e[(j - 1) / 2];
    j = (j - 1) / 2;
  }
  h->e[j] = d;
}

static net__due due_pop(net__dueheap *h) {
  net__due top = h->e[0], last = h->e[--h->n];
  uint32_t j = 0;
  for (;;) {
    uint32_t k = 2 * j + 1;
    if (k >= h->n) break;
    if (k + 1 < h->n && due_less(&h->e[k + 1], &h->e[k])) k++;
    if (!due_less(&h->e[k], &last)) break;
    h->e[j] = h->e[k];
    j = k;
  }
  if (h->n) h->e[j] = last;
  return top;
}

/* An arrival or PFC frame at v now, its event running, counted in due slot
 * k: must it wait for others due at v this picosecond (NET__ORD_*)? */
static inline bool due_wait_slot(net__be *n, uint32_t v, uint32_t k) {
  return --n->due_n[k] || n->due[v].n;
}

static inline bool due_wait(net__be *n, uint32_t v, simtime_ps now) {
  return due_wait_slot(n, v, due_slot(n, v, now));
}

/* ---- PFC -------------------------------------------------------------------- */

/* Pause victims (be_job_pauses): class cls at port c has just been PAUSEd
 * by job `job`'s congestion; the queue pairs of other jobs with packets of
 * the class queued here are its victims, each counted once (a stamp per
 * pause). O(packets of the class queued at c); only with job owners. */
static void pause_victims(net__be *n, uint32_t c, uint32_t cls, uint32_t job) {
  uint32_t serial = ++n->pause_serial, nj = n->njobs;
  uint8_t seen[128] = {0}; /* victim jobs counted for this pause (jobs: at most 1,024) */
  for (uint32_t i = net__cq_at(n, c, cls)->head; i != NET__NONE; i = *net__pnext(n, i)) {
    net__qp *q = &n->qp[net__pkt_at(n, i)->qp];
    if (q->job == job || q->job >= nj || q->vstamp == serial) continue;
    q->vstamp = serial;
    size_t at = (size_t)job * nj + q->job;
    n->jp_flows[at]++;
    if (q->job < 1024 && !(seen[q->job / 8] >> (q->job % 8) & 1)) {
      seen[q->job / 8] |= (uint8_t)(1u << (q->job % 8));
      n->jp_pauses[at]++;
    }
  }
}

/* The job a PAUSE sent by switch v is blamed on (be_job_pauses): the job
 * holding the most of v's buffer now, its packets from admission to
 * transmission (ties: the lower job). Its congestion filled the buffer: it
 * is what shrinks the dynamic threshold, and under head-of-line blocking
 * what holds the PAUSEd input's packets. O(jobs). */
static uint32_t pause_cause(const net__be *n, uint32_t v) {
  const uint32_t *b = &n->vjob[(size_t)v * n->njobs];
  uint32_t best = 0;
  for (uint32_t j = 1; j < n->njobs; j++)
    if (b[j] > b[best]) best = j;
  return best;
}

/* Job accounting of v's buffer: packet p is admitted (sign +1) or leaves (-1). */
static inline void buffer_job(net__be *n, uint32_t v, const net__pkt *p, int sign) {
  uint32_t j = n->qp[p->qp].job;
  if (j < n->njobs) n->vjob[(size_t)v * n->njobs + j] += (uint32_t)(sign * (int32_t)p->frame);
}

/* The causes of XOFF frames in flight (sequential engine, with job owners).
 * A PAUSE's cause travels with its frame: the parallel engine's event
 * carries it; the sequential engine's argument is full (the sender's send
 * count for the instant's order, channel, class, on), so the cause waits
 * here, a FIFO per (channel, class) in a pool of nodes: the frames of one
 * channel reach its source in the order sent (one propagation delay; at one
 * instant by send count, NET__ORD_*), and each XOFF sent is received once.
 * O(1) per frame; the pool holds the most XOFFs ever in flight at once. */
static void cause_push(net__be *n, size_t cc, uint32_t job) {
  uint32_t i = n->pfq_free;
  if (i != NET__NONE) {
    n->pfq_free = n->pfq[i].next;
  } else {
    if (n->pfq_n == n->pfq_cap) {
      n->pfq_cap = n->pfq_cap ? 2 * n->pfq_cap : 64;
      n->pfq = sim_realloc(n->pfq, n->pfq_cap * sizeof *n->pfq);
    }
    i = n->pfq_n++;
  }
  n->pfq[i] = (net__pfcause){.job = job, .next = NET__NONE};
  if (n->pfq_head[cc] == NET__NONE) n->pfq_head[cc] = i;
  else n->pfq[n->pfq_tail[cc]].next = i;
  n->pfq_tail[cc] = i;
}

static uint32_t cause_pop(net__be *n, size_t cc) {
  uint32_t i = n->pfq_head[cc];
  assert(i != NET__NONE);
  n->pfq_head[cc] = n->pfq[i].next;
  n->pfq[i].next = n->pfq_free;
  n->pfq_free = i;
  return n->pfq[i].job;
}

static void send_pfc(net__be *n, uint32_t c, uint32_t cls, bool on, uint32_t job) {
  net__chan *ch = &n->ch[c];
  if (on) {
    ch->xoff |= (uint8_t)(1u << cls);
    n->st.pfc_pauses++;
    n->st.class_pfc_pauses[cls]++;
    if (n->jp_caused && job < n->njobs) n->jp_caused[job]++;
  } else {
    ch->xoff &= (uint8_t) ~(1u << cls);
  }
  /* the frame crosses the link back to c's source */
  simtime_ps at = net__now(n) + n->cold[c].prop;
  if (n->par) {
    net__par_pfc(n, c, cls, on, job, at);
    return;
  }
  if (on && n->pfq_head) cause_push(n, (size_t)c * NET__CLASSES + cls, job);
  uint32_t seq = n->sends[n->ch[c].dst]++;
  ++*due_count(n, n->cold[c].src, at);
  ev_schedule_beside(n->base.sim, at, on_pfc, n,
                     (uint64_t)seq << 32 | c << 4 | cls << 1 | (on ? 1u : 0u));
}

/* A PFC frame reaches channel c's source now (sequential engine): an XOFF
 * takes its cause from the front of its (channel, class) FIFO. */
static void pfc_frame_rx(net__be *n, uint32_t c, uint32_t cls, bool on) {
  uint32_t job = on && n->pfq_head ? cause_pop(n, (size_t)c * NET__CLASSES + cls) : 0;
  net__pfc_rx(n, c, cls, on, job);
}

static void on_pfc(sim_ctx *sim, void *obj, uint64_t arg) {
  net__be *n = obj;
  uint32_t c = (uint32_t)arg >> 4, cls = (arg >> 1) & 7, on = arg & 1, v = n->cold[c].src;
  if (due_wait(n, v, sim_now(sim))) {
    due_defer(n, v,
              (net__due){.at = sim_now(sim),
                         .key = due_key(NET__ORD_PFC, n->ch[c].dst, (uint32_t)(arg >> 32)),
                         .c = c,
                         .pfc = 1u | cls << 1 | on << 4});
    return;
  }
  pfc_frame_rx(n, c, cls, on);
}

void net__pfc_rx(net__be *n, uint32_t c, uint32_t cls, bool on, uint32_t job) {
  uint32_t bit = 1u << cls;
  net__chan *ch = &n->ch[c];
  net__cold *cd = &n->cold[c];
  simtime_ps now = net__now(n);
  if (on) {
    if ((ch->paused & bit) || (ch->lflags & NET__L_DOWN)) return; /* lost with the link */
    ch->paused |= (uint8_t)bit;
    cd->paused_since[cls] = now;
    cd->pauses_rx++;
    if (n->pcause) {
      n->pcause[(size_t)c * NET__CLASSES + cls] = job;
      if (job < n->njobs) pause_victims(n, c, cls, job);
    }
    return;
  }
  if (!(ch->paused & bit)) return;
  ch->paused &= (uint8_t)~bit;
  simtime_ps d = now - cd->paused_since[cls];
  cd->paused_ps += d;
  n->st.class_pfc_paused[cls] += d;
  if (n->pcause && n->pcause[(size_t)c * NET__CLASSES + cls] < n->njobs)
    n->jp_paused[n->pcause[(size_t)c * NET__CLASSES + cls]] += d;
  if (n->watchdog && d >= n->watchdog) n->ext.pfc_storms++;
  if (ch->nonempty || ch->qp_head != NET__NONE) net__port_kick(n, c);
}

/* Shared buffer class k may still take at switch v: the pool's free bytes,
 * within what is left of the class's share of it (fabric.classes buffer). */
static inline uint64_t shared_free(const net__be *n, uint32_t v, uint32_t k) {
  const net__vert *x = &n->vx[v];
  uint64_t f = x->shared_size - x->shared_used;
  if (!n->pool_used) return f;
  uint64_t cap = (uint64_t)(n->share[k] * (double)x->shared_size);
  uint64_t used = n->pool_used[(size_t)v * NET__CLASSES + k], left = cap > used ? cap - used : 0;
  return left < f ? left : f;
}

/* Shared bytes of class k at switch v change by delta (either sign). */
static inline void shared_take(net__be *n, uint32_t v, uint32_t k, int64_t delta) {
  n->vx[v].shared_used += (uint64_t)delta;
  if (n->pool_used) n->pool_used[(size_t)v * NET__CLASSES + k] += (uint64_t)delta;
}

/* The XOFF threshold of an ingress queue when `free_b` shared bytes are
 * free for its class: fabric.pfc.xoff, or alpha x free_b. */
static inline uint64_t pfc_threshold_of(const net__be *n, uint64_t free_b) {
  return n->xoff ? n->xoff : (uint64_t)(n->alpha * (double)free_b);
}

static uint64_t pfc_threshold(const net__be *n, uint32_t v, uint32_t k) {
  return pfc_threshold_of(n, shared_free(n, v, k));
}

/* Ingress admission of p arriving at switch v by PFC channel c. The free
 * shared bytes are read once: taking delta lowers them by delta. */
static bool pfc_admit(net__be *n, uint32_t v, uint32_t c, net__pkt *p) {
  net__vert *x = &n->vx[v];
  net__chan *in = &n->ch[c];
  uint32_t k = p->cls, f = p->frame, r = x->reserve;
  net__ci *ci = &n->ci[(size_t)c * NET__CLASSES + k];
  uint64_t before = ci->bytes, after = before + f;
  uint64_t free_b = shared_free(n, v, k), th = pfc_threshold_of(n, free_b);
  uint64_t delta = over(after, r) - over(before, r);
  if (after <= r || (over(after, r) <= th && delta <= free_b)) {
    ci->bytes = (uint32_t)after;
    shared_take(n, v, k, (int64_t)delta);
    free_b -= delta;
  } else if (n->cold[c].hdrm + f <= x->hdrm_size) {
    n->cold[c].hdrm += f;
    ci->hdrm += f;
    p->flags |= NET__F_HDRM;
  } else {
    n->ext.headroom_drops++;
    return false;
  }
  if (!(in->xoff & (1u << k)) &&
      (ci->hdrm > 0 || over(ci->bytes, r) >= pfc_threshold_of(n, free_b)))
    send_pfc(n, c, k, true, n->vjob ? pause_cause(n, v) : 0);
  return true;
}

static void pfc_release(net__be *n, uint32_t v, uint32_t c, net__pkt *p) {
  net__vert *x = &n->vx[v];
  net__chan *in = &n->ch[c];
  uint32_t k = p->cls, f = p->frame, r = x->reserve;
  net__ci *ci = &n->ci[(size_t)c * NET__CLASSES + k];
  if (p->flags & NET__F_HDRM) {
    n->cold[c].hdrm -= f;
    ci->hdrm -= f;
    p->flags &= (uint8_t)~NET__F_HDRM;
  } else {
    uint64_t before = ci->bytes;
    assert(before >= f);
    shared_take(n, v, k, -(int64_t)(over(before, r) - over(before - f, r)));
    ci->bytes = (uint32_t)(before - f);
  }
  if (in->xoff & (1u << k) && ci->hdrm == 0) {
    uint64_t s = over(ci->bytes, r);
    if (s == 0 || s + n->xon <= pfc_threshold(n, v, k)) send_pfc(n, c, k, false, 0);
  }
}

/* ---- lossy (tail drop) ------------------------------------------------------ */

static bool lossy_admit(net__be *n, uint32_t v, uint32_t o, const net__pkt *p) {
  const net__vert *x = &n->vx[v];
  uint64_t r = x->reserve, before = net__cq_at(n, o, p->cls)->bytes, after = before + p->frame;
  uint64_t delta = over(after, r) - over(before, r);
  if (delta == 0) return true;
  uint64_t free_b = shared_free(n, v, p->cls);
  if (delta > free_b || (double)over(after, r) > n->alpha * (double)free_b) return false;
  shared_take(n, v, p->cls, (int64_t)delta);
  return true;
}

/* Free p's buffer at vertex v it is leaving; qbefore is its output queue's
 * class depth before it was dequeued (egress accounting). */
static inline void release(net__be *n, uint32_t v, net__pkt *p, uint64_t qbefore, simtime_ps now) {
  uint32_t c = p->in_ch;
  if (c == NET__NONE) return;
  if (n->vjob) buffer_job(n, v, p, -1);
  switch (net__fc_of(n, &n->ch[c], p->cls)) {
  case NET__FC_CREDIT: credit_return(n, c, p->cls, p->frame, now); break;
  case NET__FC_PFC: pfc_release(n, v, c, p); break;
  case NET__FC_LOSSY: {
    uint64_t r = n->vx[v].reserve;
    shared_take(n, v, p->cls, -(int64_t)(over(qbefore, r) - over(qbefore - p->frame, r)));
    break;
  }
  case NET__FC_CLASS: break; /* net__fc_of resolves it */
  }
}

/* ---- links ------------------------------------------------------------------- */

/* Packet i onto link c, due at its far end at `at`; the link's head packet
 * has an event (sequential engine), the next one's is made when it arrives. */
static void flight_push(net__be *n, uint32_t c, uint32_t i, simtime_ps at) {
  if (n->par) { /* every packet its own event: it may cross ranks */
    net__par_arrival(n, c, i, at);
    return;
  }
  net__chan *ch = &n->ch[c];
  uint32_t seq = n->sends[n->cold[c].src]++;
  if (ch->fl_n == ch->fl_cap) {
    uint32_t cap = ch->fl_cap ? 2 * ch->fl_cap : 16;
    net__fentry *e = sim_malloc(cap * sizeof *e);
    for (uint32_t j = 0; j < ch->fl_n; j++) e[j] = ch->fl[(ch->fl_head + j) & (ch->fl_cap - 1)];
    sim_free(ch->fl);
    ch->fl = e;
    ch->fl_cap = cap;
    ch->fl_head = 0;
  }
  ch->fl[(ch->fl_head + ch->fl_n) & (ch->fl_cap - 1)] =
      (net__fentry){.at = at, .pkt = i, .seq = seq};
  if (ch->fl_n++ == 0) arrival_event(n, c, at);
}

/* ---- transmit ---------------------------------------------------------------- */

/* Pick the next packet for port c, dequeued; *qbefore gets its class depth
 * before the dequeue. NONE when nothing may be sent now. */
static uint32_t port_select(net__be *n, uint32_t c, simtime_ps now, uint64_t *qbefore) {
  net__chan *ch = &n->ch[c];
  uint32_t mask = ch->nonempty & (uint32_t)~ch->paused;
  if (mask && ch->fc == NET__FC_CREDIT) {
    ring_absorb(n, c, now);
    uint32_t ok = 0;
    for (uint32_t m = mask; m; m &= m - 1) {
      uint32_t k = (uint32_t)__builtin_ctz(m);
      const net__cq *q = net__cq_at(n, c, k);
      if (q->credits >= (int32_t)net__pkt_at(n, q->head)->frame) ok |= 1u << k;
    }
    ch->cblocked = ok != mask;
    net__ring *r = &n->cold[c].ring;
    if (ok != mask && r->n) net__ensure_wake(n, c, r->t[r->head]);
    mask = ok;
  }
  if (mask) {
    uint32_t k = pick_class(n, c, mask);
    *qbefore = net__cq_at(n, c, k)->bytes;
    return q_pop(n, c, k, now);
  }
  *qbefore = 0;
  if (ch->qp_head != NET__NONE) return net__qp_pull(n, c, now);
  return NET__NONE;
}

/* Packet p of `wire` bytes goes onto link c, which is down or has bit
 * errors: mark it lost (discarded on arrival) and count it. A packet of b
 * wire bits survives a bit error rate e with probability (1 - e)^b. */
static void link_loss(net__be *n, uint32_t c, net__pkt *p, uint32_t wire) {
  net__cold *cd = &n->cold[c];
  if (n->ch[c].lflags & NET__L_DOWN) {
    n->ext.link_drops++;
  } else {
    if (cd->loss_wire != wire) {
      cd->loss_wire = wire;
      cd->loss_p = -expm1(8.0 * (double)wire * log1p(-cd->ber));
    }
    if (!(sim_rng_uniform(net__rng(n, NET__RNG_BER, cd->src)) < cd->loss_p)) return;
    n->ext.ber_drops++;
  }
  p->flags |= NET__F_LOST;
  cd->drops++;
  n->st.drops++;
  n->st.class_drops[p->cls]++;
}

static void port_send(net__be *n, uint32_t c, uint32_t i, uint64_t qbefore, simtime_ps now) {
  net__chan *ch = &n->ch[c];
  net__pkt *p = net__pkt_at(n, i);
  if (p->in_ch != NET__NONE) release(n, n->cold[c].src, p, qbefore, now);
  if (ch->fc == NET__FC_CREDIT) net__cq_at(n, c, p->cls)->credits -= p->frame;
  uint32_t wire = p->frame + n->pre;
  if (wire != ch->ser_bytes) { /* one-entry cache: a port sees mostly one size */
    ch->ser_bytes = wire;
    ch->ser_ps = sim_serialization_ps(wire, n->cold[c].bps);
  }
  simtime_ps end = now + ch->ser_ps;
  if (p->tail > end) end = p->tail; /* cut-through from a slower input: wait for the tail */
  ch->busy += end - now;
  ch->busy_until = end;
  ch->tx_bytes += wire;
  ch->tx_pkts++;
  p->in_ch = NET__NONE;
  if (ch->lflags & (NET__L_DOWN | NET__L_BER)) link_loss(n, c, p, wire);
  simtime_ps head = ch->dst_cut ? now + ch->hdr_ps : end;
  p->tail = end + ch->lat;
  flight_push(n, c, i, head + ch->lat);
}

void net__port_kick(net__be *n, uint32_t c) {
  net__chan *ch = &n->ch[c];
  simtime_ps now = net__now(n);
  if (ch->busy_until > now) {
    net__ensure_wake(n, c, ch->busy_until);
    return;
  }
  uint64_t qbefore;
  uint32_t i = port_select(n, c, now, &qbefore);
  if (i == NET__NONE) return;
  port_send(n, c, i, qbefore, now);
  if (ch->nonempty || ch->qp_head != NET__NONE) net__ensure_wake(n, c, ch->busy_until);
}

void net__enqueue(net__be *n, uint32_t c, uint32_t i) {
  q_push(n, c, i, net__pkt_at(n, i), net__now(n));
  net__port_kick(n, c);
}

/* ---- arrival ------------------------------------------------------------------ */

/* ECN on enqueue at egress port o by the depth of p's class queue: the
 * class's thresholds (net__be.ecn_k, else the port's), its Pmax. */
static void ecn_mark(net__be *n, uint32_t o, net__pkt *p) {
  const net__cold *out = &n->cold[o];
  uint32_t q = net__cq_at(n, o, p->cls)->bytes, kmin = out->kmin, kmax = out->kmax;
  if (n->ecn_k) {
    kmin = n->ecn_k[((size_t)o * NET__CLASSES + p->cls) * 2];
    kmax = n->ecn_k[((size_t)o * NET__CLASSES + p->cls) * 2 + 1];
  }
  if (q <= kmin) return;
  if (q < kmax) {
    double prob = n->cls_pmax[p->cls] * (double)(q - kmin) / (double)(kmax - kmin);
    if (!(sim_rng_uniform(net__rng(n, NET__RNG_ECN, out->src)) < prob)) return;
  }
  p->flags |= NET__F_CE;
  n->cold[o].marks_n++;
  n->st.ecn_marks++;
  n->st.class_ecn_marks[p->cls]++;
}

static inline void arrive(net__be *n, uint32_t c, uint32_t i) {
  net__pkt *p = net__pkt_at(n, i);
  net__chan *in = &n->ch[c];
  const net__qhot *h = &n->qh[p->qp];
  simtime_ps now = net__now(n);
  if (p->epoch != h->epoch || (p->flags & NET__F_LOST)) {
    /* its repetition (or queue pair, or path) is over, or the link lost it
     * (counted when it was lost): drop it */
    if (in->fc == NET__FC_CREDIT) credit_return(n, c, p->cls, p->frame, now);
    if (!(p->flags & NET__F_LOST)) n->ext.stale++;
    net__pkt_free(n, i);
    return;
  }
  p->hop++;
  if (p->hop >= h->plen[p->flags & NET__F_REV ? 1 : 0]) {
    if (in->fc == NET__FC_CREDIT) credit_return(n, c, p->cls, p->frame, now); /* consumed at once */
    net__deliver(n, i);
    return;
  }
  uint32_t v = in->dst, o = net__route(n, v, p, h);
  {
    unsigned dir = p->flags & NET__F_REV ? 1 : 0;
    p->next = p->hop + 1u < h->plen[dir] ? h->path[dir * TOPO_MAX_PATH + p->hop + 1] : NET__NONE;
  }
  /* routing has not moved off the dead link yet, or left no way on */
  if (o == NET__NONE || (n->ch[o].lflags & NET__L_DOWN)) {
    if (in->fc == NET__FC_CREDIT) credit_return(n, c, p->cls, p->frame, now);
    n->ext.link_drops++;
    if (o != NET__NONE) n->cold[o].drops++;
    n->st.drops++;
    n->st.class_drops[p->cls]++;
    net__pkt_free(n, i);
    return;
  }
  bool ok = true;
  net__fc fc = net__fc_of(n, in, p->cls);
  if (fc == NET__FC_PFC) ok = pfc_admit(n, v, c, p);
  else if (fc == NET__FC_LOSSY) ok = lossy_admit(n, v, o, p);
  if (!ok) {
    n->cold[o].drops++;
    n->st.drops++;
    n->st.class_drops[p->cls]++;
    net__pkt_free(n, i);
    return;
  }
  p->in_ch = c;
  if (n->vjob) buffer_job(n, v, p, +1);
  if ((n->ch[o].lflags & NET__L_ECN) && (p->flags & NET__F_ECT)) ecn_mark(n, o, p);
  q_push(n, o, i, p, now);
  net__port_kick(n, o);
}

/* The head packet of channel c reaches its vertex now: off the link, the
 * next one's event, then its arrival. */
static void arrive_head(net__be *n, uint32_t c) {
  net__chan *in = &n->ch[c];
  uint32_t i = in->fl[in->fl_head].pkt;
  net__pkt *p = net__pkt_at(n, i);
  /* Start the loads of the output port now, from the packet's hint, rather
   * than after the queue pair's path (three dependent misses apart at
   * thousands of hosts); a wrong or missing hint costs nothing but time. */
  uint32_t hint = p->next;
  if (hint < n->nch) {
    __builtin_prefetch(&n->ch[hint]);
    __builtin_prefetch(&n->ch[hint].ser_ps);
    __builtin_prefetch(net__cq_at(n, hint, p->cls));
    __builtin_prefetch(&n->cold[hint].kmin);
  }
  __builtin_prefetch(&n->ci[(size_t)c * NET__CLASSES + p->cls]);
  in->fl_head = (in->fl_head + 1) & (in->fl_cap - 1);
  if (--in->fl_n) arrival_event(n, c, in->fl[in->fl_head].at);
  arrive(n, c, i);
}

/* What waits at vertex v (all due now), in (NET__ORD_*, sender, its send
 * count) order. What it runs reaches v later than now (a link's next
 * packet, a frame sent now), so it ends. */
static void due_run(net__be *n, uint32_t v, simtime_ps now) {
  net__dueheap *h = &n->due[v];
  while (h->n) {
    net__due d = due_pop(h);
    assert(d.at == now);
    (void)now;
    if (d.pfc) pfc_frame_rx(n, d.c, (d.pfc >> 1) & 7, (d.pfc >> 4) & 1);
    else arrive_head(n, d.c);
  }
}

/* The head packet of channel c is due at its vertex now. */
static void on_arrive(sim_ctx *sim, void *obj, uint64_t arg) {
  net__be *n = obj;
  uint32_t c = (uint32_t)arg, v = n->ch[c].dst;
  if (due_wait_slot(n, v, (uint32_t)(arg >> 32))) {
    const net__chan *in = &n->ch[c];
    due_defer(n, v,
              (net__due){.at = sim_now(sim),
                         .key = due_key(NET__ORD_ARRIVE, n->cold[c].src, in->fl[in->fl_head].seq),
                         .c = c});
    return;
  }
  arrive_head(n, c);
}

void net__arrive(net__be *n, uint32_t c, uint32_t i) { arrive(n, c, i); }

/* ---- link state (faults) ------------------------------------------------------ */

/* Channel c's link went down now: the packets on the wire are lost (dropped
 * on arrival, which returns their credits), those queued at the port are
 * dropped now (their buffer released upstream, PFC RESUMEs sent as due),
 * and PFC state across the link is cleared (PAUSE frames cannot cross a
 * dead link; the upstream port must not stay stopped). O(packets queued and
 * in flight on c). */
static void channel_down(net__be *n, uint32_t c, simtime_ps now) {
  net__chan *ch = &n->ch[c];
  net__cold *cd = &n->cold[c];
  ch->lflags |= NET__L_DOWN;
  cd->down_at = now; /* par: packets on the wire are events; their arrival finds them lost */
  for (uint32_t j = 0; j < ch->fl_n; j++) {
    net__pkt *p = net__pkt_at(n, ch->fl[(ch->fl_head + j) & (ch->fl_cap - 1)].pkt);
    if (p->flags & NET__F_LOST) continue;
    p->flags |= NET__F_LOST;
    n->ext.link_drops++;
    cd->drops++;
    n->st.drops++;
    n->st.class_drops[p->cls]++;
  }
  for (uint32_t k = 0; k < NET__CLASSES; k++) {
    while (ch->nonempty & (1u << k)) {
      uint64_t qbefore = net__cq_at(n, c, k)->bytes;
      uint32_t i = q_pop(n, c, k, now);
      net__pkt *p = net__pkt_at(n, i);
      if (p->in_ch != NET__NONE) release(n, cd->src, p, qbefore, now);
      n->ext.link_drops++;
      cd->drops++;
      n->st.drops++;
      n->st.class_drops[k]++;
      net__pkt_free(n, i);
    }
  }
  for (uint32_t k = 0; k < NET__CLASSES; k++)
    if (ch->paused & (1u << k)) {
      simtime_ps d = now - cd->paused_since[k];
      cd->paused_ps += d;
      n->st.class_pfc_paused[k] += d;
      if (n->pcause && n->pcause[(size_t)c * NET__CLASSES + k] < n->njobs)
        n->jp_paused[n->pcause[(size_t)c * NET__CLASSES + k]] += d;
    }
  ch->paused = 0;
  ch->xoff = 0;
}

void net__link_state(be_backend *b, uint32_t link, double rate_factor, double ber) {
  net__be *n = (net__be *)b;
  n->par_now = sim_now(b->sim); /* par: a global action, on every rank's own vertices */
  simtime_ps now = net__now(n);
  /* from now on the fabric can lose packets: a selective receiver NACKs holes */
  if (!(rate_factor > 0) || ber > 0) n->lossy = true;
  if (ber > 0 && !n->par && !n->vber) { /* the streams the parallel engine draws bit errors from */
    n->vber = sim_malloc((size_t)(n->nv ? n->nv : 1) * sizeof *n->vber);
    for (uint32_t v = 0; v < n->nv; v++) {
      char name[48];
      snprintf(name, sizeof name, "net.v%u.ber", v);
      sim_rng_stream(b->sim, &n->vber[v], name);
    }
  }
  for (uint32_t c = 2 * link; c < 2 * link + 2 && c < n->nch; c++) {
    net__chan *ch = &n->ch[c];
    net__cold *cd = &n->cold[c];
    cd->ber = ber > 0 ? (ber < 1 ? ber : 1) : 0;
    cd->loss_wire = 0;
    ch->lflags = (uint8_t)((ch->lflags & ~NET__L_BER) | (cd->ber > 0 ? NET__L_BER : 0));
    if (!(rate_factor > 0)) {
      if (!(ch->lflags & NET__L_DOWN)) {
        if (c == 2 * link) n->links_down++;
        channel_down(n, c, now);
      }
      continue;
    }
    if (ch->lflags & NET__L_DOWN) {
      ch->lflags &= (uint8_t)~NET__L_DOWN;
      if (c == 2 * link) n->links_down--;
    }
    double bps = (double)cd->bps0 * (rate_factor < 1 ? rate_factor : 1);
    cd->bps = bps >= 1 ? (rate_bps)bps : 1;
    ch->ser_bytes = 0; /* the serialization cache */
    ch->hdr_ps = sim_serialization_ps(n->hdr + n->pre, cd->bps);
    if (ch->nonempty || ch->qp_head != NET__NONE) net__port_kick(n, c);
  }
}
