/* The packet fidelity on the parallel engine (src/pdes): one logical process
 * per topology vertex, spread over MPI ranks by pdes_partition_fabric, or
 * all on one process in the engine's sequential mode. Either way the
 * results are the same, byte for byte (docs/parallel.md, section 7).
 *
 * What changes against the sequential engine (ev.c), and why
 *   Every interaction between two vertices is an event from one LP to the
 *   other: a packet's arrival (the packet travels in the event's 32 bytes
 *   and is a new packet of the receiving rank's pool), a PFC frame, a credit
 *   return; a port's wake and a source's retransmission scan are events of
 *   its own vertex. Each crosses a link whose propagation latency is at
 *   least the lookahead L, the smallest latency of any link a partition may
 *   cut (every link but the zero-latency ones inside a node), which is the
 *   same for every number of ranks, and so are the phase boundaries it sets
 *   (below). Windows are a function of simulated time alone (pdes_run): not
 *   of where each rank's ev.c loop slices the run by its wall clock.
 *   Random streams are per vertex ("net.v<vertex>.ecn", .route, .ber), not
 *   per fabric (the sequential engine draws bit errors per vertex too);
 *   credits are events where the sequential engine reads a ring.
 *   Retransmission timers are scanned per source vertex on both engines,
 *   at the same ticks. What happens at one vertex at one picosecond runs in
 *   the same order on both engines (NET__ORD_*: credits, PFC frames,
 *   arrivals by sending vertex and its send count, then wakes and scans;
 *   here as pdes kind orders), so where no ECN or routing draw or flowlet
 *   table decides, faults included, the two engines' outputs are the same
 *   bytes (tests/pdes/mpi_run.sh, tests/cli/test_run_engines.sh).
 *   The workload (collectives, the training executor) stays on the global
 *   ev.c context, replicated on every rank; this file is its co-engine
 *   (sim_set_coengine): before each global event the packet events before
 *   it run. A queue pair ends at its sender's LP; the phase hears of it at
 *   the end of that window (the window hook gathers every rank's ends), and
 *   the next repetition or phase starts L after the last end, which every
 *   rank can then see (the sequential engine uses the same rule: end_gap).
 *   Global events run between the same two exchanges on every rank (co_run
 *   tells the engine of them), so their collectives (a reroute's) match.
 *   Faults are global events like the rest of the workload: a link's state
 *   changes at both of its ends at once (each rank its own end), and the
 *   receiving end finds a packet lost when the link went down while it was
 *   on the wire (net__cold.down_at); a reroute is the same computation on
 *   every rank, its failures settled at once, with the bytes each receiver
 *   holds gathered over the ranks. Flowlets are per (switch, queue pair,
 *   direction), each switch's own table (the sequential engine keeps one
 *   entry per hop of the path, shared by the switches at that hop).
 *   Ctrl-C is voted on in the window hook, so that every rank stops at the
 *   same window boundary (one rank alone would leave the others waiting).
 *
 * Cost: an event per packet per hop (the sequential engine's per-link
 * flight ring is not used), one per credit return on credit links; the
 * engine's queue over 24-byte keys; a window costs an exchange (30 us on
 * 2 ranks here). Memory: every rank holds the whole model's arrays (the
 * fabric state is small next to the packets, which each rank holds only
 * for its own vertices).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/pdes.h"
#include "net/net_internal.h"

enum { K_WAKE, K_ARRIVE, K_PFC, K_CREDIT, K_SCAN, K_COUNT };

typedef struct par_arm {
  net__armset set;
  uint8_t scan; /* a scan event is pending */
} par_arm;

/* A queue pair's end, as its sender saw it. */
typedef struct par_end {
  simtime_ps at;
  uint64_t delivered;
  uint32_t qi;
  uint32_t cause; /* index in causes[] */
} par_end;

static const char *const causes[] = {NULL, "retry limit", "no route"};

/* A switch's flowlet entry for a queue pair and direction: open addressing
 * over this rank's switches (a key holds the vertex, so a rank's table
 * holds its own switches' entries only). */
typedef struct par_flow {
  uint64_t key;   /* vertex << 33 | queue pair << 1 | dir, + 1; 0: empty */
  uint32_t stamp; /* the queue pair's fl_stamp when written */
  net__flowlet f;
} par_flow;

struct net__par {
  pdes *p;
  pdes_partition part;
  simtime_ps lookahead;
  simtime_ps stop;        /* the earliest global event the hook scheduled in this co-run */
  uint64_t global_events; /* sim_events when co_run last returned */
  par_arm *arm;           /* per vertex */
  par_flow *flows;        /* flowlets; capacity a power of two */
  size_t nflows, flows_cap;
  par_end *ends; /* this rank's, since the last window boundary */
  size_t nends, ends_cap;
};

bool net__par_owns(const net__be *n, uint32_t v) { return pdes_owns(n->par->p, v); }

/* ---- packets in events ----------------------------------------------------------- */

/* 32 bytes: channel, queue pair, PSN, aux, ack, tail - arrival (ps, 32 bits),
 * frame, epoch, kind, class, hop, flags. */
static void pack(const net__pkt *p, uint32_t c, simtime_ps at, uint64_t w[PDES_PAYLOAD_WORDS]) {
  simtime_ps d = p->tail > at ? p->tail - at : 0;
  if (d > UINT32_MAX) d = UINT32_MAX; /* a 4 KB frame serialized below 8 Mb/s: tail clipped */
  w[0] = (uint64_t)c | (uint64_t)p->qp << 32;
  w[1] = (uint64_t)p->psn | (uint64_t)p->aux << 32;
  w[2] = (uint64_t)p->ack | d << 32;
  w[3] = (uint64_t)p->frame | (uint64_t)p->epoch << 16 | (uint64_t)p->kind << 32 |
         (uint64_t)p->cls << 40 | (uint64_t)p->hop << 48 | (uint64_t)p->flags << 56;
}

static void unpack(net__pkt *p, const uint64_t w[PDES_PAYLOAD_WORDS], simtime_ps at) {
  p->qp = (uint32_t)(w[0] >> 32);
  p->psn = (uint32_t)w[1];
  p->aux = (uint32_t)(w[1] >> 32);
  p->ack = (uint32_t)w[2];
  p->tail = at + (w[2] >> 32);
  p->frame = (uint16_t)w[3];
  p->epoch = (uint16_t)(w[3] >> 16);
  p->kind = (uint8_t)(w[3] >> 32);
  p->cls = (uint8_t)(w[3] >> 40);
  p->hop = (uint8_t)(w[3] >> 48);
  p->flags = (uint8_t)(w[3] >> 56);
  p->next = NET__NONE;
  p->in_ch = NET__NONE;
}

void net__par_arrival(net__be *n, uint32_t c, uint32_t i, simtime_ps at) {
  uint64_t w[PDES_PAYLOAD_WORDS];
  pack(net__pkt_at(n, i), c, at, w);
  pdes_send(n->par->p, n->cold[c].src, n->ch[c].dst, at, K_ARRIVE, w);
  net__pkt_free(n, i);
}

void net__par_wake(net__be *n, uint32_t c, simtime_ps at) {
  uint64_t w[PDES_PAYLOAD_WORDS] = {c, 0, 0, 0};
  uint32_t v = n->cold[c].src;
  pdes_send(n->par->p, v, v, at, K_WAKE, w);
}

void net__par_pfc(net__be *n, uint32_t c, uint32_t cls, bool on, uint32_t job, simtime_ps at) {
  uint64_t w[PDES_PAYLOAD_WORDS] = {c, cls, on, job};
  pdes_send(n->par->p, n->ch[c].dst, n->cold[c].src, at, K_PFC, w);
}

void net__par_credit(net__be *n, uint32_t c, uint32_t cls, uint32_t bytes, simtime_ps at) {
  uint64_t w[PDES_PAYLOAD_WORDS] = {c, cls, bytes, 0};
  pdes_send(n->par->p, n->ch[c].dst, n->cold[c].src, at, K_CREDIT, w);
}

/* ---- events ---------------------------------------------------------------------- */

/* Packet pk arriving by channel c at `at`: was it on the wire when the link
 * last went down (from its serialization's start to its arrival)? */
static bool lost_on_wire(const net__be *n, uint32_t c, const net__pkt *pk, simtime_ps at) {
  const net__cold *cd = &n->cold[c];
  if (cd->down_at > at || (pk->flags & NET__F_LOST)) return false;
  simtime_ps end = pk->tail - n->ch[c].lat, ser = sim_serialization_ps(pk->frame + n->pre, cd->bps);
  return (end > ser ? end - ser : 0) < cd->down_at;
}

/* An LP's event begins: its time, and "not a global action" (co_run and the
 * window hook say the opposite when they take over). */
static inline net__be *lp_event(const pdes_event *ev, void *model) {
  net__be *n = model;
  n->par_now = ev->time;
  n->par_in_lp = true;
  return n;
}

static void h_wake(pdes *p, const pdes_event *ev, void *model) {
  (void)p;
  net__wake(lp_event(ev, model), (uint32_t)ev->payload[0]);
}

static void h_arrive(pdes *p, const pdes_event *ev, void *model) {
  (void)p;
  net__be *n = lp_event(ev, model);
  uint32_t i = net__pkt_alloc(n), c = (uint32_t)ev->payload[0];
  net__pkt *pk = net__pkt_at(n, i);
  unpack(pk, ev->payload, ev->time);
  if (lost_on_wire(n, c, pk, ev->time)) { /* counted here: the sender could not see it */
    pk->flags |= NET__F_LOST;
    n->ext.link_drops++;
    n->cold[c].drops++;
    n->st.drops++;
    n->st.class_drops[pk->cls & 7]++;
  }
  net__arrive(n, c, i);
}

static void h_pfc(pdes *p, const pdes_event *ev, void *model) {
  (void)p;
  const uint64_t *w = ev->payload;
  net__pfc_rx(lp_event(ev, model), (uint32_t)w[0], (uint32_t)w[1], w[2] != 0, (uint32_t)w[3]);
}

static void h_credit(pdes *p, const pdes_event *ev, void *model) {
  (void)p;
  const uint64_t *w = ev->payload;
  net__credit_rx(lp_event(ev, model), (uint32_t)w[0], (uint32_t)w[1], (uint32_t)w[2]);
}

static void h_scan(pdes *p, const pdes_event *ev, void *model) {
  net__be *n = lp_event(ev, model);
  par_arm *a = &n->par->arm[ev->dst];
  a->scan = 0;
  net__armset_scan(n, &a->set, ev->time);
  if (a->set.n && !a->scan) {
    a->scan = 1;
    pdes_send(p, ev->dst, ev->dst, ev->time + n->scan_period, K_SCAN, NULL);
  }
}

/* ---- retransmission timers: one scan per source vertex --------------------------- */

static uint32_t qp_vertex(const net__be *n, uint32_t qi) {
  return n->cold[n->qp[qi].path[0][0]].src;
}

net__armset *net__par_armset(net__be *n, uint32_t qi) { return &n->par->arm[qp_vertex(n, qi)].set; }

void net__par_scan_soon(net__be *n, uint32_t qi) {
  uint32_t v = qp_vertex(n, qi);
  if (n->par->arm[v].scan) return;
  n->par->arm[v].scan = 1;
  pdes_send(n->par->p, v, v, n->par_now + n->scan_period, K_SCAN, NULL);
}

/* ---- flowlets ------------------------------------------------------------------ */

static par_flow *par_flow_slot(par_flow *t, size_t cap, uint64_t key) {
  for (size_t i = sim_hash_u64(key) & (cap - 1);; i = (i + 1) & (cap - 1))
    if (t[i].key == key || t[i].key == 0) return &t[i];
}

net__flowlet *net__par_flowlet(net__be *n, uint32_t v, uint32_t qi, unsigned dir) {
  net__par *r = n->par;
  if (2 * (r->nflows + 1) > r->flows_cap) { /* grow at half full */
    size_t cap = r->flows_cap ? 2 * r->flows_cap : 1024;
    par_flow *t = sim_calloc(cap, sizeof *t);
    for (size_t i = 0; i < r->flows_cap; i++)
      if (r->flows[i].key) *par_flow_slot(t, cap, r->flows[i].key) = r->flows[i];
    sim_free(r->flows);
    r->flows = t;
    r->flows_cap = cap;
  }
  uint64_t key = ((uint64_t)v << 33 | (uint64_t)qi << 1 | dir) + 1;
  par_flow *e = par_flow_slot(r->flows, r->flows_cap, key);
  uint32_t stamp = n->qp[qi].fl_stamp;
  if (e->key == 0) r->nflows++;
  if (e->key == 0 || e->stamp != stamp) *e = (par_flow){key, stamp, {0, NET__NONE}};
  return &e->f;
}

/* ---- queue pair ends and phases ------------------------------------------------- */

void net__par_qp_end(net__be *n, uint32_t qi, const char *cause) {
  net__par *r = n->par;
  uint32_t k = 0;
  if (cause)
    for (k = 1; k < sizeof causes / sizeof *causes && strcmp(causes[k], cause); k++) {
    }
  assert(k < sizeof causes / sizeof *causes && "a cause the gathering knows");
  const net__qp *q = &n->qp[qi];
  uint64_t acked = (uint64_t)q->snd_una * n->mtu; /* what the sender knows arrived */
  if (r->nends == r->ends_cap)
    sim_grow((void **)&r->ends, &r->ends_cap, r->nends + 1, sizeof *r->ends);
  r->ends[r->nends++] =
      (par_end){.at = n->par_now,
                .qi = qi,
                .cause = k,
                .delivered = cause ? (acked < q->bytes ? acked : q->bytes) : q->bytes};
  pdes_reduce_add(r->p, 0, 1);
}

static int end_cmp(const void *a, const void *b) {
  const par_end *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  return x->qi < y->qi ? -1 : x->qi > y->qi;
}

/* At a window boundary: the ends of every rank, in (time, queue pair) order,
 * into the phases; a repetition that ended schedules its successor L after
 * its last end, a global event the co-run must stop before. */
static simtime_ps on_window(pdes *p, const uint64_t sum[PDES_REDUCE_WORDS],
                            const uint64_t max[PDES_REDUCE_WORDS], void *model) {
  net__be *n = model;
  net__par *r = n->par;
  n->par_in_lp = false; /* the phases' bookkeeping, the same on every rank */
  /* Ctrl-C: a vote in the next exchange (max word 3); when any rank saw one,
   * every rank stops here, and the run's outputs are written as incomplete */
  pdes_reduce_max(p, 3, sim_interrupt_pending() ? 1 : 0);
  if (max[3] && !sim_co_stopped(n->base.sim)) {
    sim_co_stop(n->base.sim);
    pdes_stop_before(p, pdes_done_until(p));
  }
  if (sum[0] == 0) return SIM_TIME_MAX;
  size_t bytes;
  par_end *all = pdes_comm_allgather_bytes(r->ends, r->nends * sizeof *r->ends, &bytes);
  size_t cnt = bytes / sizeof *all;
  r->nends = 0;
  qsort(all, cnt, sizeof *all, end_cmp);
  for (size_t j = 0; j < cnt; j++) {
    n->par_now = all[j].at;
    if (net__phase_end(n, all[j].qi, all[j].at, causes[all[j].cause], all[j].delivered,
                       r->lookahead)) {
      simtime_ps g = all[j].at + r->lookahead;
      if (g < r->stop) r->stop = g;
      pdes_stop_before(p, g);
    }
  }
  sim_free(all);
  return SIM_TIME_MAX;
}

/* sim_set_coengine: run the packet events before `bound`, or before the
 * first global event a phase's end scheduled. `bound` differs between ranks
 * (each slices its run by its own wall clock); the engine's exchanges do not
 * (pdes_run). Global events did run here since the last call when the global
 * context's event count moved: they all ran at sim_now, on every rank alike,
 * and may have given the engine events before the window it had chosen. */
static simtime_ps co_run(void *obj, simtime_ps bound) {
  net__be *n = obj;
  net__par *r = n->par;
  uint64_t gev = sim_events(n->base.sim);
  if (gev != r->global_events) pdes_global_action(r->p, sim_now(n->base.sim));
  r->stop = SIM_TIME_MAX;
  pdes_run(r->p, bound == SIM_TIME_MAX ? SIM_TIME_MAX : bound - 1);
  r->global_events = sim_events(n->base.sim);
  n->par_in_lp = false;                          /* back to the global context */
  if (sim_co_stopped(n->base.sim)) return bound; /* ev_run returns: nothing more runs */
  return r->stop < bound ? r->stop : bound;
}

/* ---- setup and results ------------------------------------------------------------ */

int net__par_create(net__be *n, sim_error *err) {
  net__par *r = sim_calloc(1, sizeof *r);
  n->par = r;
  n->now = &n->par_now;
  bool parallel = pdes_comm_launched() && pdes_comm_built();
  if (parallel && pdes_comm_init(err) != SIM_OK) return err->code;
  uint32_t nranks = parallel ? pdes_comm_size() : 1;
  if (pdes_partition_fabric(&r->part, n->t, nranks, err) != SIM_OK) return err->code;
  /* L: the smallest latency of a link a partition may cut (all but the
   * zero-latency links inside a node), whatever the rank count; a queue
   * pair's end reaches its phase L later on either engine (end_gap) */
  simtime_ps L = n->end_gap;
  if (r->part.cut_links && r->part.lookahead_ps < L) {
    return sim_fail(err, SIM_EINVAL,
                    "the partition over %u ranks cuts a "
                    "link of %llu ps latency, below the lookahead %llu ps",
                    nranks, (unsigned long long)r->part.lookahead_ps, (unsigned long long)L);
  }
  r->lookahead = L;
  static const pdes_fn handlers[K_COUNT] = {h_wake, h_arrive, h_pfc, h_credit, h_scan};
  static const uint8_t order[K_COUNT] = {NET__ORD_WAKE, NET__ORD_ARRIVE, NET__ORD_PFC,
                                         NET__ORD_CREDIT, NET__ORD_WAKE};
  pdes_cfg pc = {.nlps = n->nv,
                 .lp_rank = r->part.vertex_rank,
                 .lookahead_ps = L,
                 .handlers = handlers,
                 .nhandlers = K_COUNT,
                 .order = order,
                 .model = n,
                 .parallel = parallel,
                 .on_window = on_window};
  if (pdes_create(&r->p, &pc, err) != SIM_OK) return err->code;
  r->arm = sim_calloc(n->nv ? n->nv : 1, sizeof *r->arm);
  n->vrng = sim_malloc((size_t)(n->nv ? n->nv : 1) * 3 * sizeof *n->vrng);
  static const char *const kinds[3] = {"ecn", "route", "ber"};
  for (uint32_t v = 0; v < n->nv; v++)
    for (unsigned k = 0; k < 3; k++) {
      char name[48];
      snprintf(name, sizeof name, "net.v%u.%s", v, kinds[k]);
      sim_rng_stream(n->base.sim, &n->vrng[(size_t)v * 3 + k], name);
    }
  sim_set_coengine(n->base.sim, co_run, n);
  return SIM_OK;
}

void net__par_destroy(net__be *n) {
  net__par *r = n->par;
  if (!r) return;
  if (r->arm)
    for (uint32_t v = 0; v < n->nv; v++) sim_free(r->arm[v].set.q);
  sim_free(r->arm);
  sim_free(r->ends);
  sim_free(r->flows);
  pdes_destroy(r->p);
  pdes_partition_free(&r->part);
  sim_free(n->vrng);
  sim_free(r);
  n->par = NULL;
}

/* Counters kept where the events ran are summed over the ranks (the
 * largest ones: maxima); those kept by the global actions (transfers,
 * bytes, failures, link sharing, FCT) are the same on every rank. */
void net__par_stats(net__be *n, be_stats *st, net__ext *ext) {
  uint64_t s[] = {st->packets,         st->ecn_marks,     st->cnps,
                  st->pfc_pauses,      st->pfc_paused,    st->drops,
                  st->retransmits,     st->out_of_order,  ext->pfc_storms,
                  ext->headroom_drops, ext->acks,         ext->nacks,
                  ext->timeouts,       ext->duplicates,   ext->stale,
                  ext->qp_errors,      ext->link_drops,   ext->ber_drops,
                  ext->pkts_alloc,     ext->inflight_max, 0};
  enum { NS = sizeof s / sizeof *s };
  pdes_stats ps;
  pdes_stats_get(n->par->p, &ps);
  s[NS - 1] = ps.events;
  pdes_comm_allreduce_u64(s, NS, false);
  uint64_t m[] = {st->max_queue_bytes};
  pdes_comm_allreduce_u64(m, 1, true);
  double u = st->link_utilization_max;
  pdes_comm_allreduce_f64(&u, 1, true);
  st->packets = s[0], st->ecn_marks = s[1], st->cnps = s[2], st->pfc_pauses = s[3];
  st->pfc_paused = s[4], st->drops = s[5], st->retransmits = s[6], st->out_of_order = s[7];
  ext->pfc_storms = s[8], ext->headroom_drops = s[9], ext->acks = s[10], ext->nacks = s[11];
  ext->timeouts = s[12], ext->duplicates = s[13], ext->stale = s[14], ext->qp_errors = s[15];
  ext->link_drops = s[16], ext->ber_drops = s[17], ext->pkts_alloc = s[18];
  ext->inflight_max = s[19]; /* the sum of the ranks' maxima */
  st->max_queue_bytes = m[0];
  st->link_utilization_max = u;
  sim_set_co_events(n->base.sim, s[NS - 1]);
  /* per class: counts summed, the deepest queue the maximum (class_bytes is
   * every rank's alike, as bytes) */
  uint64_t cs[4 * NET__CLASSES];
  for (int k = 0; k < NET__CLASSES; k++) {
    cs[k] = st->class_pfc_pauses[k];
    cs[NET__CLASSES + k] = st->class_ecn_marks[k];
    cs[2 * NET__CLASSES + k] = st->class_drops[k];
    cs[3 * NET__CLASSES + k] = st->class_pfc_paused[k];
  }
  pdes_comm_allreduce_u64(cs, 4 * NET__CLASSES, false);
  pdes_comm_allreduce_u64(st->class_max_queue, NET__CLASSES, true);
  for (int k = 0; k < NET__CLASSES; k++) {
    st->class_pfc_pauses[k] = cs[k];
    st->class_ecn_marks[k] = cs[NET__CLASSES + k];
    st->class_drops[k] = cs[2 * NET__CLASSES + k];
    st->class_pfc_paused[k] = cs[3 * NET__CLASSES + k];
  }
}

void net__par_sum_u64(net__be *n, uint64_t *v, size_t count) {
  (void)n;
  pdes_comm_allreduce_u64(v, count, false);
}

bool net__par_info(const be_backend *b, be_parallel_info *out) {
  const net__par *r = ((const net__be *)b)->par;
  if (!r) return false;
  pdes_stats ps;
  pdes_stats_get(r->p, &ps);
  uint64_t sum[2] = {ps.events, ps.sent_remote}, mx[1] = {ps.events};
  double t[2] = {ps.wall_s, ps.sync_s};
  pdes_comm_allreduce_u64(sum, 2, false);
  pdes_comm_allreduce_u64(mx, 1, true);
  pdes_comm_allreduce_f64(t, 2, true);
  *out = (be_parallel_info){.ranks = pdes_nranks(r->p),
                            .scheme = r->part.scheme,
                            .links = r->part.links,
                            .cut_links = r->part.cut_links,
                            .lookahead = r->lookahead,
                            .windows = ps.windows,
                            .events = sum[0],
                            .events_max = mx[0],
                            .sent_remote = sum[1],
                            .wall_max = t[0],
                            .sync_max = t[1],
                            .crossing_frac = sum[0] ? (double)sum[1] / (double)sum[0] : 0};
  return true;
}
