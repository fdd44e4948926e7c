/* Flow fidelity: a fluid model with max-min fair rates on the routed paths.
 *
 * Transfers
 *   Each transfer of a phase follows its routed path (fabric.routing, as the
 *   analytic fidelity: see route_phase; ECMP collisions appear) and is a
 *   fluid flow: its bytes drain at a piecewise-constant rate, the max-min fair
 *   share of channel capacities (the two directions of a link are separate
 *   channels). Rates are recomputed (net.c) whenever flows start or end; all
 *   starts and ends of one picosecond are batched into one solve event, and
 *   only the components they touch are re-solved. A flow's drain end is one
 *   pending event, cancelled and rescheduled only when its rate changes.
 *   (The solve event is queued behind every event already due at that
 *   picosecond; only a flow whose recomputed drain end falls on the same
 *   picosecond, i.e. less than a picosecond of bits left, causes a second
 *   solve there.)
 *
 * Latency is an END delay: a flow occupies bandwidth from submission until
 *   its last bit leaves the sender (the drain end); the transfer completes
 *   topo_path_latency (propagation + per-vertex latency) later, when that bit
 *   arrives. Alone on a path: latency + bytes / bottleneck, as analytic.
 *   A transfer with an empty path (src == dst) or no bytes never enters the
 *   network: it completes after its path latency (zero for src == dst).
 *
 * Time arithmetic: remaining bits and rates are doubles, times are integer
 *   picoseconds; a drain end is rounded up to the next picosecond (exactly,
 *   in 128-bit integers, while bits and rate are whole numbers), so each rate
 *   change may add up to one picosecond to a completion.
 *
 * Repetitions
 *   A repetition ends when its last transfer completes (drain + latency);
 *   the next starts at that instant. A deterministic fluid model started on
 *   an empty network from the same state evolves the same way every time, so
 *   when a repetition ran entirely alone (no other phase in the network when
 *   it started, none started while it ran), every further repetition would
 *   take exactly the same time D: the phase is fast-forwarded, finishing
 *   (repeat - done) x D later with no events in between. While alone, a
 *   repetition logs its rate changes and drain ends (O(rate changes) memory),
 *   so if another phase starts during the fast-forward the phase is
 *   materialised: the whole repetitions passed are counted, and the current
 *   one is rebuilt at its offset by replaying the log (same arithmetic as the
 *   live model, so bit-identical to running every repetition explicitly).
 *   From then on, and whenever other phases are active, repetitions run
 *   explicitly.
 *
 * Faults (fabsim/fault.h)
 *   link_state scales a link's two channel capacities (0 when down: the
 *   flows crossing it keep their path at rate 0); reroute takes every flow
 *   out with its bits left, routes every live phase again over the health
 *   mask (topo_route_health, from then on for new phases too) and puts each
 *   flow back on its new path, or fails it ("no route"); then each live
 *   phase's bytes sent so far and new paths go to the on_reroute hook
 *   (be_reroute_rec: the telemetry puts them on its ports), as at each
 *   link_state with the paths unchanged. A fault ends the
 *   repetitions in progress as references for the shortcut (see
 *   enter_fault_mode); the shortcut resumes with the next repetition that
 *   starts alone.
 *
 * Traffic classes (be_xfer.tclass, fabric.classes): the solver shares a
 *   channel by strict priority levels over weighted classes (net.c), as the
 *   packet fidelity's ports schedule them.
 *
 * Cost: routing O(n L) once per phase; per repetition run explicitly,
 *   O(n) to start plus one solve per distinct event time over the touched
 *   components (net.c); a fast-forward is O(1); materialisation
 *   O(n + log length). Memory: per flow ~150 bytes, per channel ~60 bytes;
 *   pools and scratch are reused, nothing is allocated per event.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "flow/flow_internal.h"

#define NONE UINT32_MAX

typedef struct flow_log {
  simtime_ps off; /* offset in the repetition */
  double rate;
  uint32_t xfer;
} flow_log;

typedef struct flow_phase {
  uint32_t id;
  const be_xfer *x; /* caller-owned until done */
  size_t n;
  uint64_t repeat, reps_done;
  be_done_fn done;
  void *ctx;
  uint64_t bytes;                         /* payload of one repetition */
  uint64_t cls_bytes[8], rep_lost_cls[8]; /* the same by traffic class; rep_lost's by class */
  uint32_t *paths;                        /* all paths, flat; off[i] .. off[i+1] is transfer i's */
  uint32_t *off;
  simtime_ps *lat; /* path latency per transfer */
  size_t paths_cap, n_cap;
  /* the repetition in progress */
  simtime_ps rep_start, last_delivery;
  size_t active; /* flows of this repetition still draining */
  bool busy;     /* has flows in the network, or is fast-forwarding */
  bool alone_at_start;
  uint64_t start_epoch;
  /* reference log of a repetition that started alone */
  bool logging;
  flow_log *log;
  size_t nlog, log_cap;
  simtime_ps *drain_off; /* per transfer: drain end offset */
  /* fast-forward */
  bool ff;
  simtime_ps ff_start, ff_dur, ff_end;
  ev_id ff_ev;
  /* replay scratch, per transfer */
  double *rp_rate, *rp_rem;
  simtime_ps *rp_last;
  /* faults: per transfer, no route on the routing in force (fails at each
   * repetition); failures of the repetition in progress */
  uint8_t *noroute;
  size_t nnoroute;               /* transfers marked */
  uint64_t rep_failed, rep_lost; /* transfers, payload bytes not delivered */
} flow_phase;

typedef struct flow_be {
  be_backend base; /* first: be_backend * <-> flow_be * */
  flow__net net;
  flow_phase **ph; /* phase objects, recycled with their buffers */
  uint32_t nph, phcap;
  uint32_t *free_ph;
  uint32_t nfree_ph;
  uint32_t busy;     /* phases with traffic in the network */
  uint64_t epoch;    /* repetition starts so far, all phases */
  uint32_t ff_phase; /* the phase fast-forwarding, or NONE */
  bool solve_pending;
  bool shortcut;
  be_stats st;
  be_fct fct; /* per transfer of every repetition simulated explicitly (a
                 fast-forwarded repetition repeats the same times) */
  /* faults: once any fault arrived, routing follows route_h (a copy of the
   * last reroute's mask) */
  bool faulted;
  topo_health route_h;
  topo_split split;
  uint32_t *load; /* adaptive per flowlet: per channel, transfers of live phases routed over it */
  uint64_t *sent; /* reroute scratch: per transfer of the live phases, bytes sent (on_reroute) */
  size_t sent_cap;
} flow_be;

static simtime_ps sat_add(simtime_ps a, simtime_ps b) {
  return a > SIM_TIME_MAX - b ? SIM_TIME_MAX : a + b;
}

/* Bits drained at `rate` over `dt` picoseconds taken off `rem`. The live
 * model and the replay of a log must use this one function. */
static double drain_bits(double rem, double rate, simtime_ps dt) {
  double r = rem - rate * (double)dt / 1e12;
  return r > 0.0 ? r : 0.0;
}

/* Picoseconds to drain `bits` at `rate`, rounded up. */
static simtime_ps drain_ps(double bits, double rate) {
  if (bits <= 0.0) return 0;
  if (!(rate > 0.0)) return SIM_TIME_MAX;
  if (bits < 0x1p63 && rate < 0x1p63 && bits == floor(bits) && rate == floor(rate)) {
    unsigned __int128 num = (unsigned __int128)(uint64_t)bits * SIM_PS_PER_S;
    uint64_t r = (uint64_t)rate;
    unsigned __int128 q = (num + r - 1) / r;
    return q > UINT64_MAX ? SIM_TIME_MAX : (simtime_ps)q;
  }
  double t = bits * 1e12 / rate;
  if (t >= 0x1p64) return SIM_TIME_MAX;
  simtime_ps p = (simtime_ps)t;
  return (double)p < t ? p + 1 : p;
}

static void on_solve(sim_ctx *sim, void *obj, uint64_t arg);
static void on_drain(sim_ctx *sim, void *obj, uint64_t arg);
static void on_rep_end(sim_ctx *sim, void *obj, uint64_t arg);
static void on_ff_end(sim_ctx *sim, void *obj, uint64_t arg);
static void rep_start(flow_be *b, flow_phase *p);
static void fail_xfer(flow_be *b, flow_phase *p, size_t i, double rem_bits, const char *cause);
static void route_phase(flow_be *b, flow_phase *p);

static void schedule_solve(flow_be *b) {
  if (b->solve_pending) return;
  b->solve_pending = true;
  ev_schedule(b->base.sim, sim_now(b->base.sim), on_solve, b, 0);
}

static void log_push(flow_phase *p, simtime_ps off, double rate, uint32_t xfer) {
  if (p->nlog == p->log_cap) sim_grow((void **)&p->log, &p->log_cap, p->nlog + 1, sizeof *p->log);
  p->log[p->nlog++] = (flow_log){.off = off, .rate = rate, .xfer = xfer};
}

/* ---- phases ----------------------------------------------------------- */

static flow_phase *phase_alloc(flow_be *b) {
  uint32_t id;
  if (b->nfree_ph) {
    id = b->free_ph[--b->nfree_ph];
  } else {
    if (b->nph == b->phcap) {
      b->phcap = b->phcap ? 2 * b->phcap : 16;
      b->ph = sim_realloc(b->ph, b->phcap * sizeof *b->ph);
      b->free_ph = sim_realloc(b->free_ph, b->phcap * sizeof *b->free_ph);
    }
    id = b->nph++;
    b->ph[id] = sim_calloc(1, sizeof *b->ph[id]);
    b->ph[id]->id = id;
  }
  return b->ph[id];
}

static void phase_release(flow_be *b, flow_phase *p) {
  p->x = NULL;
  p->done = NULL;
  p->ctx = NULL;
  b->free_ph[b->nfree_ph++] = p->id;
}

static void phase_free(flow_phase *p) {
  sim_free(p->paths);
  sim_free(p->off);
  sim_free(p->lat);
  sim_free(p->log);
  sim_free(p->drain_off);
  sim_free(p->rp_rate);
  sim_free(p->rp_rem);
  sim_free(p->rp_last);
  sim_free(p->noroute);
  sim_free(p);
}

/* Per-transfer arrays hold at least n entries (n + 1 offsets). */
static void phase_reserve(flow_phase *p, size_t n) {
  if (n + 1 <= p->n_cap) return;
  size_t cap = p->n_cap ? p->n_cap : 16;
  while (cap < n + 1) cap *= 2;
  p->off = sim_realloc(p->off, cap * sizeof *p->off);
  p->lat = sim_realloc(p->lat, cap * sizeof *p->lat);
  p->drain_off = sim_realloc(p->drain_off, cap * sizeof *p->drain_off);
  p->rp_rate = sim_realloc(p->rp_rate, cap * sizeof *p->rp_rate);
  p->rp_rem = sim_realloc(p->rp_rem, cap * sizeof *p->rp_rem);
  p->rp_last = sim_realloc(p->rp_last, cap * sizeof *p->rp_last);
  p->noroute = sim_realloc(p->noroute, cap * sizeof *p->noroute);
  p->n_cap = cap;
}

/* Adaptive routing's view of the fabric: the transfers of phases in flight
 * (a phase's paths are decided once, at submission, for all repetitions). */
static void load_add(flow_be *b, const flow_phase *p, int sign) {
  if (!b->load) return;
  for (uint32_t k = 0; k < p->off[p->n]; k++) b->load[p->paths[k]] += (uint32_t)sign;
}

static void phase_finish(flow_be *b, flow_phase *p) {
  load_add(b, p, -1);
  be_done_fn done = p->done;
  void *ctx = p->ctx;
  phase_release(b, p);
  if (done) done(b->base.sim, ctx);
}

static void note_delivery(flow_phase *p, simtime_ps at) {
  if (at > p->last_delivery) p->last_delivery = at;
}

/* Transfer i of p drained `drained` after the start of `reps` repetitions
 * (period apart, the first at `start`): to the on_xfer hook. */
static void report_drain(const flow_be *b, const flow_phase *p, size_t i, simtime_ps start,
                         simtime_ps period, uint64_t reps, simtime_ps drained) {
  if (!b->base.on_xfer || reps == 0) return;
  simtime_ps delivered = sat_add(drained, p->lat[i]);
  be_xfer_report(&b->base, &(be_xfer_end){.phase = p->ctx,
                                          .xfer = i,
                                          .n = 1,
                                          .start = start,
                                          .period = period,
                                          .reps = reps,
                                          .delivered = &delivered,
                                          .latency = &p->lat[i]});
}

/* The fast-forwarded repetitions [first, first + reps) (alike: the
 * reference's drain offsets) to the on_xfer hook. O(n). */
static void report_ff(const flow_be *b, const flow_phase *p, uint64_t reps) {
  if (!b->base.on_xfer) return;
  for (size_t i = 0; i < p->n; i++)
    if (p->drain_off[i] > 0) report_drain(b, p, i, p->ff_start, p->ff_dur, reps, p->drain_off[i]);
}

/* The repetition's last flow has drained: it ends at its last delivery. */
static void rep_drained(flow_be *b, flow_phase *p) {
  sim_ctx *sim = b->base.sim;
  if (p->busy) {
    p->busy = false;
    b->busy--;
  }
  simtime_ps at = p->last_delivery > sim_now(sim) ? p->last_delivery : sim_now(sim);
  ev_schedule(sim, at, on_rep_end, b, p->id);
}

/* Turn a fast-forwarding phase back into flows at the current instant (see
 * the header comment). */
static void materialise(flow_be *b, flow_phase *p) {
  sim_ctx *sim = b->base.sim;
  simtime_ps now = sim_now(sim);
  b->ff_phase = NONE;
  if (now >= p->ff_end) return; /* its end event fires at this instant */
  ev_cancel(sim, p->ff_ev);
  p->ff = false;
  simtime_ps elapsed = now - p->ff_start, tau = elapsed % p->ff_dur;
  uint64_t k = elapsed / p->ff_dur;
  report_ff(b, p, k);
  p->reps_done += k;
  b->st.transfers += k * p->n;
  b->st.bytes += k * p->bytes;
  for (int c = 0; c < 8; c++) b->st.class_bytes[c] += k * p->cls_bytes[c];
  p->rep_start = now - tau;
  p->last_delivery = p->rep_start;
  p->active = 0;
  p->logging = false;
  for (size_t i = 0; i < p->n; i++) {
    p->rp_rem[i] = (double)p->x[i].bytes * 8.0;
    p->rp_rate[i] = 0.0;
    p->rp_last[i] = 0;
  }
  for (size_t j = 0; j < p->nlog && p->log[j].off <= tau; j++) {
    const flow_log *e = &p->log[j];
    p->rp_rem[e->xfer] =
        drain_bits(p->rp_rem[e->xfer], p->rp_rate[e->xfer], e->off - p->rp_last[e->xfer]);
    p->rp_rate[e->xfer] = e->rate;
    p->rp_last[e->xfer] = e->off;
  }
  for (size_t i = 0; i < p->n; i++) {
    uint32_t len = p->off[i + 1] - p->off[i];
    if (len == 0 || p->x[i].bytes == 0) {
      note_delivery(p, p->rep_start + p->lat[i]);
    } else if (p->drain_off[i] <= tau) {
      note_delivery(p, sat_add(p->rep_start + p->drain_off[i], p->lat[i]));
      report_drain(b, p, i, p->rep_start, 0, 1, p->drain_off[i]);
    } else {
      uint32_t id = flow__net_add_class(&b->net, p->paths + p->off[i], len, p->x[i].tclass);
      flow__flow *f = flow__net_flow(&b->net, id);
      f->phase = p->id;
      f->xfer = (uint32_t)i;
      f->rem = p->rp_rem[i];
      f->rate = f->new_rate = p->rp_rate[i];
      f->t_last = p->rep_start + p->rp_last[i];
      f->t_end = sat_add(p->rep_start, p->drain_off[i]);
      if (f->t_end != SIM_TIME_MAX) f->ev = ev_schedule(sim, f->t_end, on_drain, b, id);
      p->active++;
    }
  }
  if (p->active == 0) rep_drained(b, p);
  else schedule_solve(b);
}

static void ff_start(flow_be *b, flow_phase *p) {
  sim_ctx *sim = b->base.sim;
  simtime_ps now = sim_now(sim), d = now - p->rep_start;
  uint64_t left = p->repeat - p->reps_done;
  p->ff = true;
  p->ff_start = now;
  p->ff_dur = d;
  p->ff_end = d && left > (SIM_TIME_MAX - now) / d ? SIM_TIME_MAX : now + left * d;
  p->busy = true;
  b->busy++;
  b->ff_phase = p->id;
  p->ff_ev = ev_schedule(sim, p->ff_end, on_ff_end, b, p->id);
}

/* Transfer i of p's repetition in progress cannot be delivered: reported
 * through on_failure (cause: "no route", "retry limit"), counted, and
 * finished for the phase with `rem_bits` of its payload undelivered. */
static void fail_xfer(flow_be *b, flow_phase *p, size_t i, double rem_bits, const char *cause) {
  simtime_ps now = sim_now(b->base.sim);
  uint64_t bytes = p->x[i].bytes, lost = (uint64_t)ceil(rem_bits / 8.0);
  if (lost > bytes) lost = bytes;
  b->st.transfers_failed++;
  p->rep_failed++;
  p->rep_lost += lost;
  p->rep_lost_cls[p->x[i].tclass & 7] += lost;
  note_delivery(p, now);
  if (b->base.on_failure) {
    be_failure f = {.at = now,
                    .src_gpu = p->x[i].src_gpu,
                    .dst_gpu = p->x[i].dst_gpu,
                    .bytes = bytes,
                    .bytes_delivered = bytes - lost,
                    .cause = cause};
    b->base.on_failure(b->base.on_failure_ctx, &f);
  }
}

static void rep_start(flow_be *b, flow_phase *p) {
  sim_ctx *sim = b->base.sim;
  simtime_ps now = sim_now(sim);
  if (b->ff_phase != NONE && b->ff_phase != p->id) materialise(b, b->ph[b->ff_phase]);
  assert(!p->busy);
  p->start_epoch = ++b->epoch;
  p->alone_at_start = b->busy == 0;
  /* (a repetition with failing transfers is not a reference: the fast-forward
   * counts whole repetitions) */
  p->logging =
      b->shortcut && p->alone_at_start && p->repeat - p->reps_done >= 2 && p->nnoroute == 0;
  p->nlog = 0;
  p->rep_start = now;
  p->last_delivery = now;
  p->active = 0;
  p->rep_failed = p->rep_lost = 0;
  memset(p->rep_lost_cls, 0, sizeof p->rep_lost_cls);
  for (size_t i = 0; i < p->n; i++) {
    uint32_t len = p->off[i + 1] - p->off[i];
    if (p->noroute[i] && p->x[i].bytes > 0) {
      fail_xfer(b, p, i, (double)p->x[i].bytes * 8.0, "no route");
      p->drain_off[i] = 0;
      continue;
    }
    if (len == 0 || p->x[i].bytes == 0) {
      note_delivery(p, now + p->lat[i]);
      be_fct_add(&b->fct, p->lat[i]);
      p->drain_off[i] = 0;
      continue;
    }
    uint32_t id = flow__net_add_class(&b->net, p->paths + p->off[i], len, p->x[i].tclass);
    flow__flow *f = flow__net_flow(&b->net, id);
    f->phase = p->id;
    f->xfer = (uint32_t)i;
    f->rem = (double)p->x[i].bytes * 8.0;
    f->t_last = now;
    p->active++;
  }
  if (p->active == 0) {
    rep_drained(b, p);
    return;
  }
  p->busy = true;
  b->busy++;
  schedule_solve(b);
}

/* ---- events ----------------------------------------------------------- */

/* Giving up, as the packet fidelity's transport does (src/net/transport.c,
 * RETRY_STALL_PS): an RC queue pair goes to the error state after its retry
 * count (7) of timeouts spanning NCCL's local ACK timeout (NCCL_IB_TIMEOUT
 * 18: 4.096 us x 2^18, 8 attempts: 8.6 s) without progress. A flow makes
 * progress when a packet (one MTU, or its last bits) gets through; when the
 * rate its links leave it (bit errors: goodput x (1 - ber)^(wire bits), so
 * 1e-144 of the link at ber 0.01 and a 4 KiB MTU; down: 0) takes longer
 * than that per packet, the flow is starved: it fails ("retry limit") that
 * long after it starved unless a solve lifts its rate first. Routing moves
 * flows off a link that is down well before (reliability.reconvergence);
 * it never sees bit errors, so without this a flow on a lossy link would
 * wait for ever with no event left. */
#define STALL_PS ((simtime_ps)8 * 4096 * SIM_PS_PER_NS * (1u << 18))

static bool starved(const flow_be *b, const flow__flow *f) {
  double bits = (double)b->base.cfg->fabric.mtu * 8.0;
  if (f->rem < bits) bits = f->rem;
  return drain_ps(bits, f->rate) >= STALL_PS;
}

static void on_give_up(sim_ctx *sim, void *obj, uint64_t arg) {
  flow_be *b = obj;
  uint32_t id = (uint32_t)arg;
  flow__flow *f = flow__net_flow(&b->net, id);
  flow_phase *p = b->ph[f->phase];
  uint32_t xfer = f->xfer;
  double rem = drain_bits(f->rem, f->rate, sim_now(sim) - f->t_last);
  f->ev = 0;
  p->logging = false; /* a repetition with a failed transfer is no reference */
  flow__net_remove(&b->net, id);
  schedule_solve(b);
  fail_xfer(b, p, xfer, rem, "retry limit");
  assert(p->active > 0);
  if (--p->active == 0) rep_drained(b, p);
}

static void on_solve(sim_ctx *sim, void *obj, uint64_t arg) {
  flow_be *b = obj;
  (void)arg;
  b->solve_pending = false;
  flow__net *net = &b->net;
  flow__net_solve(net);
  simtime_ps now = sim_now(sim);
  for (size_t i = 0; i < net->nchanged; i++) {
    uint32_t id = net->changed[i];
    flow__flow *f = flow__net_flow(net, id);
    f->rem = drain_bits(f->rem, f->rate, now - f->t_last);
    f->t_last = now;
    f->rate = f->new_rate;
    flow_phase *p = b->ph[f->phase];
    if (p->logging) log_push(p, now - p->rep_start, f->rate, f->xfer);
    if (starved(b, f)) { /* the give-up counts from when it starved (t_end none) */
      if (f->ev && f->t_end == SIM_TIME_MAX) continue;
      if (f->ev) ev_cancel(sim, f->ev);
      f->t_end = SIM_TIME_MAX;
      f->ev = ev_schedule(sim, sat_add(now, STALL_PS), on_give_up, b, id);
      continue;
    }
    simtime_ps end = sat_add(now, drain_ps(f->rem, f->rate));
    if (f->ev && end == f->t_end) continue;
    if (f->ev) ev_cancel(sim, f->ev);
    f->ev = 0;
    f->t_end = end;
    if (end != SIM_TIME_MAX) f->ev = ev_schedule(sim, end, on_drain, b, id);
  }
}

static void on_drain(sim_ctx *sim, void *obj, uint64_t arg) {
  flow_be *b = obj;
  uint32_t id = (uint32_t)arg;
  flow__flow *f = flow__net_flow(&b->net, id);
  flow_phase *p = b->ph[f->phase];
  simtime_ps now = sim_now(sim);
  f->ev = 0;
  note_delivery(p, sat_add(now, p->lat[f->xfer]));
  be_fct_add(&b->fct, sat_add(now, p->lat[f->xfer]) - p->rep_start);
  report_drain(b, p, f->xfer, p->rep_start, 0, 1, now - p->rep_start);
  if (p->logging) p->drain_off[f->xfer] = now - p->rep_start;
  flow__net_remove(&b->net, id);
  schedule_solve(b);
  assert(p->active > 0);
  if (--p->active == 0) rep_drained(b, p);
}

static void on_rep_end(sim_ctx *sim, void *obj, uint64_t arg) {
  flow_be *b = obj;
  flow_phase *p = b->ph[arg];
  (void)sim;
  p->reps_done++;
  b->st.transfers += p->n - p->rep_failed; /* failed ones are in transfers_failed */
  b->st.bytes += p->bytes - p->rep_lost;
  for (int c = 0; c < 8; c++) b->st.class_bytes[c] += p->cls_bytes[c] - p->rep_lost_cls[c];
  if (p->reps_done >= p->repeat) {
    phase_finish(b, p);
    return;
  }
  if (p->logging && p->start_epoch == b->epoch && b->busy == 0) {
    ff_start(b, p);
    return;
  }
  rep_start(b, p);
}

static void on_ff_end(sim_ctx *sim, void *obj, uint64_t arg) {
  flow_be *b = obj;
  flow_phase *p = b->ph[arg];
  (void)sim;
  if (b->ff_phase == p->id) b->ff_phase = NONE;
  p->ff = false;
  p->busy = false;
  b->busy--;
  uint64_t left = p->repeat - p->reps_done;
  report_ff(b, p, left);
  b->st.transfers += left * p->n;
  b->st.bytes += left * p->bytes;
  for (int c = 0; c < 8; c++) b->st.class_bytes[c] += left * p->cls_bytes[c];
  p->reps_done = p->repeat;
  phase_finish(b, p);
}

static void on_empty(sim_ctx *sim, void *obj, uint64_t arg) {
  flow_be *b = obj;
  (void)sim;
  phase_finish(b, b->ph[arg]);
}

/* ---- routing and faults ------------------------------------------------ */

/* Paths, latencies and no-route marks of every transfer of p on the routing
 * in force (topo_route until the first fault), as fabric.routing says
 * (topo_split_of): static and ecmp as topo_route; adaptive per flowlet, per
 * transfer over the transfers of the phases in flight and those of p routed
 * before it (topo_route_adaptive); spray and adaptive per packet over the
 * pools of links the split loads alike (topo_spray_channel; while links are
 * down after a reroute they take their ECMP path instead: the pools assume
 * every member usable). O(n L), more with faults (topo_route_health). */
static void route_phase(flow_be *b, flow_phase *p) {
  const topo *t = b->base.topo;
  const topo_health *h = b->faulted && b->route_h.down ? &b->route_h : NULL;
  bool pools = b->split == TOPO_SPLIT_POOLS && !h;
  size_t words = 0;
  p->off[0] = 0;
  p->nnoroute = 0;
  for (size_t i = 0; i < p->n; i++) {
    const be_xfer *x = &p->x[i];
    topo_path path = {0};
    int rc = SIM_OK;
    p->noroute[i] = 0;
    if (x->src_gpu != x->dst_gpu) {
      if (b->load)
        rc = topo_route_adaptive(t, h, x->src_gpu, x->dst_gpu, x->flow_hash, b->load, &path);
      else rc = topo_route_health(t, h, x->src_gpu, x->dst_gpu, x->flow_hash, &path);
    }
    if (rc == SIM_ENOENT) p->noroute[i] = 1, p->nnoroute++; /* cut off by faults */
    if (rc != SIM_OK) path.n = 0; /* unroutable (bad GPU id): treated as local, as analytic does */
    p->lat[i] = path.n ? topo_path_latency(t, &path) : 0;
    if (words + path.n > p->paths_cap)
      sim_grow((void **)&p->paths, &p->paths_cap, words + path.n, sizeof *p->paths);
    for (uint32_t j = 0; j < path.n; j++) {
      uint32_t ch = pools ? topo_spray_channel(t, path.ch[j]) : path.ch[j];
      p->paths[words + j] = ch;
      if (b->load) b->load[ch]++;
    }
    words += path.n;
    assert(words <= UINT32_MAX);
    p->off[i + 1] = (uint32_t)words;
  }
}

/* A fault changes the fabric under the repetitions in progress: a
 * fast-forwarding phase is turned back into flows now (its log replays the
 * fabric as it was, up to now), and the repetitions running are no
 * references any more (not logged further, never fast-forwarded). The next
 * repetition that starts alone is logged again, on the fabric as it is; a
 * later fault interrupts its fast-forward the same way. */
static void enter_fault_mode(flow_be *b) {
  if (!b->faulted) {
    topo_health_init(&b->route_h, b->base.topo);
    b->faulted = true;
  }
  if (b->ff_phase != NONE) materialise(b, b->ph[b->ff_phase]);
  for (uint32_t i = 0; i < b->nph; i++) b->ph[i]->logging = false;
}

typedef struct saved_flow {
  uint32_t phase, xfer, n;
  double rem;
  uint32_t ch[TOPO_MAX_PATH];
} saved_flow;

/* A reroute's moves, or a link's change of state, to the on_reroute hook
 * (be_reroute_rec), one record per live phase: each transfer's bytes sent
 * (the repetitions done, and of the one in progress all but the bits its
 * flow had left: sv[0..ns) taken out by a reroute, else the flows in the
 * network now) and its path from now on. A link's change is reported too,
 * with the paths unchanged: flows there stall or slow from now, so the
 * telemetry's ports take what moved before and after it apart. O(live
 * transfers + flows). */
static void report_moves(flow_be *b, const saved_flow *sv, size_t ns) {
  if (!b->base.on_reroute) return;
  size_t total = 0;
  for (uint32_t k = 0; k < b->nph; k++)
    if (b->ph[k]->x) total += b->ph[k]->n;
  sim_grow((void **)&b->sent, &b->sent_cap, total + 1, sizeof *b->sent);
  uint32_t *base = sim_malloc((b->nph ? b->nph : 1) * sizeof *base);
  size_t at = 0;
  for (uint32_t k = 0; k < b->nph; k++) {
    const flow_phase *p = b->ph[k];
    if (!p->x) continue;
    base[k] = (uint32_t)at;
    uint64_t reps = p->reps_done < p->repeat ? p->reps_done + 1 : p->repeat;
    for (size_t i = 0; i < p->n; i++) b->sent[at + i] = reps * p->x[i].bytes;
    at += p->n;
  }
  simtime_ps now = sim_now(b->base.sim);
  uint32_t nf = sv ? (uint32_t)ns : b->net.nfl;
  for (uint32_t k = 0; k < nf; k++) { /* the flows in progress: what they had left */
    const flow__flow *f = sv ? NULL : &b->net.fl[k];
    if (f && f->n == 0) continue; /* a free id */
    uint32_t ph = f ? f->phase : sv[k].phase, i = f ? f->xfer : sv[k].xfer;
    double rem = f ? drain_bits(f->rem, f->rate, now - f->t_last) : sv[k].rem;
    uint64_t left = (uint64_t)ceil(rem / 8.0), *s = &b->sent[base[ph] + i];
    if (left > b->ph[ph]->x[i].bytes) left = b->ph[ph]->x[i].bytes;
    *s -= left < *s ? left : *s;
  }
  for (uint32_t k = 0; k < b->nph; k++) {
    const flow_phase *p = b->ph[k];
    if (!p->x || p->n == 0 || p->repeat == 0) continue;
    b->base.on_reroute(b->base.on_reroute_ctx, &(be_reroute_rec){.phase = p->ctx,
                                                                 .n = p->n,
                                                                 .sent = b->sent + base[k],
                                                                 .paths = p->paths,
                                                                 .off = p->off});
  }
  sim_free(base);
}

/* Fraction of packets of one MTU that arrive intact at bit error rate ber:
 * (1 - ber)^(wire bits), headers included (InfiniBand 26 B, RoCEv2 82 B of
 * wire time, MODEL-INPUTS.md). Each lost packet is sent again, so goodput is
 * the link rate times this fraction. */
static double ber_goodput(const cfg_scenario *cfg, double ber) {
  double hdr = cfg->fabric.transport == CFG_TRANSPORT_INFINIBAND ? 26.0 : 82.0;
  double bits = ((double)cfg->fabric.mtu + hdr) * 8.0;
  if (ber <= 0.0) return 1.0;
  return exp(bits * log1p(-ber));
}

static void flow_link_state(be_backend *base, uint32_t link, double rate_factor, double ber) {
  flow_be *b = (flow_be *)base;
  if (link >= topo_link_count(base->topo)) return;
  enter_fault_mode(b);
  report_moves(b, NULL, 0); /* (before the rates change: the solve comes later) */
  double factor = rate_factor * ber_goodput(base->cfg, ber);
  for (uint32_t c = 2 * link; c < 2 * link + 2; c++) {
    double cap = (double)topo_channel_bps(base->topo, c) * factor;
    if (!(cap > 0.0)) cap = 0.0; /* down: flows on it stall at rate 0 until rerouted */
    flow__net_set_cap(&b->net, c, cap);
    uint32_t pool = topo_spray_channel(base->topo, c);
    if (pool >= b->net.nlinkch && pool < b->net.nch) {
      /* Members that are down take no share (a switch sprays only over its
       * ports that are up; for a pool of down links into a leaf this is
       * optimistic: the choice is made upstream). Spray's even split over
       * the rest: the slowest binds; adaptive's split follows capacity: the
       * sum. O(members), once per fault. */
      uint32_t nm = topo_pool_members(base->topo, pool, NULL, 0), up = 0;
      uint32_t *m = sim_malloc(nm * sizeof *m);
      double min = 0.0, sum = 0.0;
      topo_pool_members(base->topo, pool, m, nm);
      for (uint32_t k = 0; k < nm; k++) {
        double mc = b->net.cap[m[k]];
        if (!(mc > 0.0)) continue;
        if (up++ == 0 || mc < min) min = mc;
        sum += mc;
      }
      sim_free(m);
      flow__net_set_cap(&b->net, pool,
                        base->cfg->fabric.routing == CFG_ROUTING_SPRAY ? min * up : sum);
    }
  }
  schedule_solve(b);
}

/* Every flow leaves the network with its bits left, every live phase is
 * routed again over h, and each flow comes back on its new path (or fails:
 * no route). O(F L + routing of every live transfer). */
static void flow_reroute(be_backend *base, const topo_health *h) {
  flow_be *b = (flow_be *)base;
  flow__net *net = &b->net;
  sim_ctx *sim = base->sim;
  simtime_ps now = sim_now(sim);
  saved_flow *sv;
  size_t ns = 0;
  uint64_t moved = 0;
  enter_fault_mode(b);
  memcpy(b->route_h.link_ok, h->link_ok, topo_link_count(base->topo));
  memcpy(b->route_h.vertex_ok, h->vertex_ok, topo_vertex_count(base->topo));
  b->route_h.down = h->down;
  sv = sim_malloc((net->live ? net->live : 1) * sizeof *sv);
  for (uint32_t id = 0; id < net->nfl; id++) {
    flow__flow *f = &net->fl[id];
    if (f->n == 0) continue; /* a free id */
    saved_flow *x = &sv[ns++];
    x->phase = f->phase;
    x->xfer = f->xfer;
    x->n = f->n;
    memcpy(x->ch, f->path, f->n * sizeof *f->path);
    x->rem = drain_bits(f->rem, f->rate, now - f->t_last);
    if (f->ev) ev_cancel(sim, f->ev);
    f->ev = 0;
    flow__net_remove(net, id);
  }
  if (b->load) memset(b->load, 0, b->net.nlinkch * sizeof *b->load);
  for (uint32_t i = 0; i < b->nph; i++)
    if (b->ph[i]->x) route_phase(b, b->ph[i]);
  for (size_t k = 0; k < ns; k++) {
    flow_phase *p = b->ph[sv[k].phase];
    uint32_t i = sv[k].xfer, len = p->off[i + 1] - p->off[i];
    const uint32_t *path = p->paths + p->off[i];
    if (p->noroute[i] || len == 0) {
      fail_xfer(b, p, i, sv[k].rem, "no route");
      assert(p->active > 0);
      if (--p->active == 0) rep_drained(b, p);
      continue;
    }
    if (len != sv[k].n || memcmp(path, sv[k].ch, len * sizeof *path) != 0) moved++;
    uint32_t id = flow__net_add_class(net, path, len, p->x[i].tclass);
    flow__flow *f = flow__net_flow(net, id);
    f->phase = p->id;
    f->xfer = i;
    f->rem = sv[k].rem;
    f->t_last = now;
  }
  b->st.flows_rerouted += moved;
  report_moves(b, sv, ns);
  sim_free(sv);
  schedule_solve(b);
}

/* ---- be_ops ----------------------------------------------------------- */

static void flow_submit_phase(be_backend *base, const be_xfer *x, size_t n, uint64_t repeat,
                              be_done_fn done, void *ctx) {
  flow_be *b = (flow_be *)base;
  flow_phase *p = phase_alloc(b);
  p->x = x;
  p->n = n;
  p->repeat = repeat;
  p->reps_done = 0;
  p->done = done;
  p->ctx = ctx;
  p->bytes = 0;
  p->busy = p->ff = false;
  phase_reserve(p, n);
  route_phase(b, p); /* once for all repetitions (and again at each reroute) */
  memset(p->cls_bytes, 0, sizeof p->cls_bytes);
  for (size_t i = 0; i < n; i++) {
    p->bytes += x[i].bytes;
    p->cls_bytes[x[i].tclass & 7] += x[i].bytes;
  }
  if (repeat == 0) {
    ev_schedule(base->sim, sim_now(base->sim), on_empty, b, p->id);
    return;
  }
  rep_start(b, p);
}

static void flow_stats(const be_backend *base, be_stats *out) {
  flow_be *b = (flow_be *)base;
  *out = b->st;
  out->max_link_sharing = b->net.max_sharing;
  be_fct_summarize(&b->fct, out);
}

static void flow_destroy(be_backend *base) {
  flow_be *b = (flow_be *)base;
  for (uint32_t i = 0; i < b->nph; i++) phase_free(b->ph[i]);
  sim_free(b->ph);
  sim_free(b->free_ph);
  flow__net_free(&b->net);
  be_fct_free(&b->fct);
  if (b->faulted) topo_health_free(&b->route_h);
  sim_free(b->load);
  sim_free(b->sent);
  sim_free(b);
}

static const be_ops flow_ops = {
    .name = "flow",
    .submit_phase = flow_submit_phase,
    .stats = flow_stats,
    .destroy = flow_destroy,
    .link_state = flow_link_state,
    .reroute = flow_reroute,
};

be_backend *be_flow_create(sim_ctx *sim, const topo *t, const cfg_scenario *cfg) {
  flow_be *b = sim_calloc(1, sizeof *b);
  b->base.ops = &flow_ops;
  b->base.sim = sim;
  b->base.topo = t;
  b->base.cfg = cfg;
  b->split = topo_split_of(cfg);
  flow__net_init_pools(&b->net, t, b->split == TOPO_SPLIT_POOLS);
  flow__net_set_classes(&b->net, &cfg->fabric.classes);
  if (b->split == TOPO_SPLIT_ADAPTIVE)
    b->load = sim_calloc(b->net.nlinkch ? b->net.nlinkch : 1, sizeof *b->load);
  b->ff_phase = NONE;
  b->shortcut = true;
  return &b->base;
}

void flow__set_shortcut(be_backend *base, bool on) { ((flow_be *)base)->shortcut = on; }

const flow__net *flow__backend_net(const be_backend *base) { return &((const flow_be *)base)->net; }
