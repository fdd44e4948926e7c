/* fabsim backend interface: the one seam between workloads and fidelities.
 *
 * Collectives and the workload executor only submit phases: sets of
 * point-to-point transfers (GPU to GPU, bytes, traffic class, ECMP entropy)
 * that start together. A phase may be repeated back to back (each repetition
 * starts when the previous one has fully completed), which is how a ring's
 * 2(n-1) identical steps are expressed without 2(n-1) copies. A backend
 * decides how the bytes move:
 *   analytic: alpha-beta on the routed paths, link sharing by counting;
 *   flow:     fluid max-min fair rates on the routed paths;
 *   packet:   every packet through queues, flow control and congestion control.
 *
 * Ownership: the caller keeps the transfer array alive until `done` fires.
 */
#ifndef FABSIM_BACKEND_H
#define FABSIM_BACKEND_H

#include "fabsim/config.h"
#include "fabsim/ev.h"
#include "fabsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct be_xfer {
  uint32_t src_gpu, dst_gpu;
  uint64_t bytes;
  uint64_t flow_hash; /* entropy for ECMP (queue pair, channel) */
  uint8_t tclass;     /* traffic class 0..7 */
} be_xfer;

typedef void (*be_done_fn)(sim_ctx *sim, void *ctx);

/* What a backend measured; every field deterministic. Fields a fidelity
 * cannot observe stay 0 (the analytic and flow fidelities have no queues,
 * pauses or drops); `observed` says which groups are meaningful. */
typedef struct be_stats {
  uint64_t transfers;        /* transfers completed (repetitions counted) */
  uint64_t transfers_failed; /* reported through on_failure (faults) */
  uint64_t flows_rerouted;   /* transfers in flight moved to another path by reroute */
  uint64_t bytes;            /* payload bytes delivered */
  uint32_t max_link_sharing; /* most transfers seen on one channel at once */
  /* packet-level counters (observed & BE_OBS_PACKETS) */
  uint64_t packets; /* data packets sent by NICs, first transmissions */
  uint64_t ecn_marks, cnps;
  uint64_t pfc_pauses;   /* PAUSE (XOFF) frames sent */
  simtime_ps pfc_paused; /* summed time egress queues spent paused */
  uint64_t drops, retransmits, out_of_order;
  uint64_t max_queue_bytes;    /* deepest egress queue seen anywhere */
  double link_utilization_max; /* busiest channel: busy time / run time */
  /* flow completion times of transfers (observed & BE_OBS_FCT) */
  simtime_ps fct_p50, fct_p99, fct_p999, fct_max;
  double fct_mean_s;
  unsigned observed;
  /* per traffic class (be_xfer.tclass): payload bytes delivered, as `bytes`
   * (every fidelity; the analytic one counts a phase on its first
   * transfer's class); the packet-level counters above split by class
   * (observed & BE_OBS_PACKETS): the deepest queue of the class at a switch
   * or NIC port, PAUSE frames sent for it and the time its queues spent
   * paused, its ECN marks and drops */
  uint64_t class_bytes[8];
  uint64_t class_max_queue[8], class_pfc_pauses[8], class_ecn_marks[8], class_drops[8];
  simtime_ps class_pfc_paused[8];
} be_stats;

enum { BE_OBS_PACKETS = 1u << 0, BE_OBS_FCT = 1u << 1 };

/* Flow-completion-time recorder shared by the backends: a multiset of
 * samples kept as (value, count) pairs, a sample equal to the last one
 * added counted on it; when the pairs fill their storage they are sorted
 * and equal values merged before it grows. Add O(1) amortized; the
 * percentiles (nearest-rank definition) by one sort of a copy of the pairs
 * at the end. Fields private. */
typedef struct be_fct {
  simtime_ps *v;
  uint64_t *w; /* count of v[i] */
  size_t n, cap;
} be_fct;
void be_fct_add(be_fct *f, simtime_ps fct);
/* count samples of one value at once (0: nothing) */
void be_fct_add_n(be_fct *f, simtime_ps fct, uint64_t count);
/* Fills fct_* and sets BE_OBS_FCT in st when any sample was added; f is
 * unchanged (more samples may follow). */
void be_fct_summarize(const be_fct *f, be_stats *st);
void be_fct_free(be_fct *f);

typedef struct be_backend be_backend;

/* Per-port telemetry, a capability of the fidelities that have switch ports
 * of their own (packet): the real queue depths, PFC pauses, ECN marks and
 * utilization of the switch egress ports, sampled while phases run and read
 * after the run (the telemetry module replays them into a tel: see
 * tel_port_samples_replay in fabsim/tel_tap.h).
 *
 * While any phase is active, one event per sample row reads every sampled
 * port's counters (O(ports)); rows start at 1 us and, when the rows held are
 * full, neighbours merge and the row length doubles, so a run of any length
 * keeps between rows_max / 2 and rows_max rows (256; on fabrics so large
 * that the dense rows would pass 128 MiB, fewer, at least 32). The fabric
 * idle (no phase) schedules nothing, so the run's end time is unchanged.
 * Per row and port: utilization, PFC paused fraction and ECN marks (dense);
 * the deepest queue only for the max(64, ports/100 + 1) deepest ports of the
 * row plus the watched ports (sparse): a row's queue maximum and 99th
 * percentile across ports are exact, a port outside them shows 0. */
typedef struct be_port_spec {
  uint32_t nports;
  const uint32_t *channel_of_port; /* channel (2 x link + direction) of each port */
  const rate_bps *bps;             /* nominal rate of each port */
  const uint32_t *watch;           /* ports whose queue is kept in every row */
  uint32_t nwatch;
} be_port_spec;
typedef struct be_port_queue {
  uint32_t port, bytes;
} be_port_queue;
/* The rows, read-only, valid until the backend is destroyed. Row r covers
 * [r x interval, (r + 1) x interval); after the last row the fabric was
 * idle. */
typedef struct be_port_samples {
  uint32_t nports, nrows;
  simtime_ps interval;
  /* [row * nports + port]: the row's busy and PFC-paused fractions in units
   * of 1/65535 (a packet's bytes count in the row its transmission starts
   * in; a fraction saturates at 1), its ECN marks (saturating at 65535) */
  const uint16_t *util, *paused, *marks;
  /* row r's deepest queues (bytes): queues[qrow[r] .. qrow[r + 1]), deepest
   * first, ties by port */
  const be_port_queue *queues;
  const uint32_t *qrow;
  const rate_bps *bps; /* nominal rate of each port (a 0 given became 1) */
} be_port_samples;

/* How a run on the parallel engine went: the partition and the engine's
 * work and waiting over the ranks (wall clock: not part of the results). */
typedef struct be_parallel_info {
  uint32_t ranks;
  const char *scheme; /* pdes_partition.scheme */
  uint64_t links, cut_links;
  simtime_ps lookahead;
  uint64_t windows;
  uint64_t events, events_max; /* all ranks; the busiest rank */
  uint64_t sent_remote;        /* events that crossed ranks */
  double crossing_frac;        /* sent_remote / events */
  double wall_max, sync_max; /* seconds in the engine, of which in synchronization, slowest rank */
} be_parallel_info;

/* Pause victims by job, a capability of the packet fidelity (be_ops.job_owners,
 * job_pauses). A flow's job is the job holding its source GPU. A PAUSE
 * frame (PFC XOFF) for class k that a switch sends on an input port is
 * caused by the job holding the most of that switch's buffer when it sends
 * it (its packets from admission to transmission; ties: the lower job):
 * the job whose queues shrank the dynamic threshold and, under head-of-line
 * blocking, whose stuck packets filled the paused input. When the PAUSE
 * reaches the upstream port, its victims are the flows (queue pairs) of
 * other jobs with class-k packets queued at that port, stopped by it.
 * Counted per (causer, victim): pauses that stopped at least one of the
 * victim's flows, and those flows summed over the pauses; per causer: its
 * PAUSE frames and the time they held upstream ports paused. Arrays valid
 * until the backend is destroyed. */
typedef struct be_job_pauses {
  uint32_t njobs;
  const uint64_t *caused;   /* [causer] */
  const simtime_ps *paused; /* [causer] */
  const uint64_t *pauses;   /* [causer * njobs + victim] */
  const uint64_t *flows;    /* [causer * njobs + victim] */
} be_job_pauses;

/* A slice of a pool of transfers: pool[off .. off + n) of pool[0 .. pool_n).
 * cuts (optional, NULL: unknown) are where every slice of the pool starts
 * and ends: ncuts ascending positions, the first 0 and the last pool_n, so
 * every slice is a run of whole segments [cuts[k], cuts[k + 1]) (a plan
 * lists them once: coll's tree has one segment per pipeline level). quot
 * (optional) is the pool's quotient by those segments (be_quot below), built
 * by a wrapper (the telemetry tap) that routed the pool as topo_route does;
 * a fidelity that routes alike may use it instead of routing the pool again.
 * Both stay unchanged until pool_release. */
typedef struct be_quot be_quot;
typedef struct be_slice {
  const be_xfer *pool;
  size_t pool_n, off, n;
  const size_t *cuts;
  size_t ncuts;
  const be_quot *quot;
} be_slice;

/* A fidelity is a small vtable. Required: submit_phase, stats, destroy. */
typedef struct be_ops {
  const char *name;
  /* Start `n` concurrent transfers now, `repeat` >= 1 times back to back;
   * `done` fires once, when the last transfer of the last repetition ends.
   * x is read until then (the flow fidelity and the telemetry tap do). */
  void (*submit_phase)(be_backend *b, const be_xfer *x, size_t n, uint64_t repeat, be_done_fn done,
                       void *ctx);
  void (*stats)(const be_backend *b, be_stats *out);
  void (*destroy)(be_backend *b);
  /* Faults (optional; NULL: the fidelity cannot model them, and a scenario
   * with network faults is refused at load with a message naming the
   * fidelities that can). Driven by the fault scheduler (fabsim/fault.h).
   *
   * link_state: the physical state of link l (both directions) changes now:
   * rate_factor of its nominal rate (0 = down: what is on the link or queued
   * for it is lost, nothing new gets through; the transport recovers when
   * routing moves it elsewhere) and a bit error rate (each packet is lost
   * with probability 1 - (1 - ber)^(wire bits); the flow fidelity scales
   * goodput by the expected retransmissions instead). Routing does not
   * change yet.
   * reroute: routing reconverged on h (topo_route_health): transfers in
   * flight and new ones move to the new paths; a transfer with no path left
   * fails (be_backend.on_failure, cause "no route") and counts as finished
   * for its phase's done. */
  void (*link_state)(be_backend *b, uint32_t link, double rate_factor, double ber);
  void (*reroute)(be_backend *b, const topo_health *h);
  /* Capabilities (optional; NULL: the fidelity does not have it). Callers
   * use the be_port_* and be_parallel_info_get wrappers below, which answer
   * SIM_EINVAL or false for a fidelity without it; a wrapper such as the
   * telemetry tap has exactly the capabilities of the backend it wraps
   * (slices, below, it has always: it keeps them for its own log).
   * port_sampling, port_gather, port_samples: per-port telemetry (see
   * be_port_samples); parallel_info: the parallel engine's partition and
   * effort (see be_parallel_info). */
  int (*port_sampling)(be_backend *b, const be_port_spec *spec);
  void (*port_gather)(be_backend *b, simtime_ps end);
  int (*port_samples)(be_backend *b, simtime_ps end, be_port_samples *out);
  bool (*parallel_info)(const be_backend *b, be_parallel_info *out);
  /* Slices of a pool (optional; callers use be_submit_slice and
   * be_pool_release): submit_slice means exactly submit_phase(pool + sl->off,
   * sl->n, ...), and says that the transfers are a slice of a pool that the
   * caller keeps alive and unchanged until pool_release(pool). A fidelity may
   * then keep what it worked out for the pool's transfers (routes, counts on
   * the channels) from one slice to the next, so that consecutive,
   * overlapping slices cost what enters and leaves rather than the whole
   * slice. Results are the same as through submit_phase. */
  void (*submit_slice)(be_backend *b, const be_slice *sl, uint64_t repeat, be_done_fn done,
                       void *ctx);
  void (*pool_release)(be_backend *b, const be_xfer *pool);
  /* Pause victims (see be_job_pauses): job_owners before any phase, with
   * the job of each GPU (UINT32_MAX: none; the array is copied), SIM_OK;
   * job_pauses after the run (on the parallel engine a collective). */
  int (*job_owners)(be_backend *b, const uint32_t *job_of_gpu, uint32_t njobs);
  bool (*job_pauses)(const be_backend *b, be_job_pauses *out);
} be_ops;

/* A transfer that did not complete: reported once, with its cause ("no
 * route", "retry limit", ...); the phase still completes (done fires) so a
 * run always ends, and be_stats counts it. Nothing is lost silently. */
typedef struct be_failure {
  simtime_ps at;
  uint32_t src_gpu, dst_gpu;
  uint64_t bytes, bytes_delivered;
  const char *cause; /* static string */
} be_failure;
typedef void (*be_failure_fn)(void *ctx, const be_failure *f);

/* When transfers' bytes left and arrived, per repetition: what the
 * telemetry tap needs for each NIC's series to follow what the NIC sends
 * (a transfer that finished early shows idle until its phase ends). Every
 * fidelity reports it when be_backend.on_xfer is set: the analytic one at
 * submission, a phase's transfers in one record (its times are fixed then),
 * the flow one as each flow drains (a fast-forwarded run of alike
 * repetitions in one record per transfer), the packet one as each queue
 * pair completes. A record covers transfers [xfer, xfer + n) of one phase
 * (`phase`: the ctx the phase was submitted with; indices into its
 * transfers, the slice's for a slice) over `reps` repetitions starting at
 * start + k x period (k < reps; period unused when reps is 1): in each,
 * transfer xfer + i's last byte arrives delivered[i] after the
 * repetition's start and left its source NIC latency[i] before that
 * (latency NULL: 0). What the fidelity knows of "left": the analytic one
 * its serialization, the flow one its drain end (latency: the path's), the
 * packet one only the queue pair's completion (its last ACK; latency 0).
 * A transfer that never crosses the fabric, or fails, need not be
 * reported. Cost: one call per record, no allocation in the backend. */
typedef struct be_xfer_end {
  void *phase;
  size_t xfer, n;
  simtime_ps start, period;
  uint64_t reps;
  const simtime_ps *delivered, *latency;
} be_xfer_end;
typedef void (*be_xfer_fn)(void *ctx, const be_xfer_end *e);

/* A reroute (be_ops.reroute) moved the transfers of a phase in flight: what
 * the telemetry tap needs so that each transfer's bytes land on the switch
 * ports it really crossed, those that left before the reroute on its old
 * path and the rest on its new one (issue 27, defect 7). A fidelity that
 * moves flows between paths reports it when be_backend.on_reroute is set,
 * once per phase in flight at each reroute, after the move (failures it
 * causes already reported), and at each link_state with the paths
 * unchanged (flows there stall or slow from then: what moved before and
 * after are apart too): the flow fidelity. The packet fidelity counts
 * its ports' real packets and reports nothing. `phase`: the ctx the phase
 * was submitted with; transfers [0, n) of it (the slice's for a slice);
 * sent[i]: transfer i's bytes that had left its source by now, over all its
 * repetitions (whole ones done, and the part of the one in progress); its
 * path from now on, for the rest of this and every later repetition:
 * channels paths[off[i] .. off[i + 1]) as the fidelity counts them (spray
 * and adaptive per packet: a pool id, fabsim/topo.h topo_spray_channel), or
 * none: no route, it fails. Cost: one call per phase in flight. */
typedef struct be_reroute_rec {
  void *phase;
  size_t n;
  const uint64_t *sent;
  const uint32_t *paths, *off;
} be_reroute_rec;
typedef void (*be_reroute_fn)(void *ctx, const be_reroute_rec *r);

/* Public fields, read-only for users of the backend. */
struct be_backend {
  const be_ops *ops;
  sim_ctx *sim;
  const topo *topo;
  const cfg_scenario *cfg;
  be_failure_fn on_failure; /* optional; set by the caller after be_create */
  void *on_failure_ctx;
  be_xfer_fn on_xfer; /* optional; set by the caller after be_create (the telemetry tap) */
  void *on_xfer_ctx;
  be_reroute_fn on_reroute; /* optional; set by the caller after be_create (the telemetry tap) */
  void *on_reroute_ctx;
};
/* Report e through b->on_xfer when one is set. */
static inline void be_xfer_report(const be_backend *b, const be_xfer_end *e) {
  if (b->on_xfer) b->on_xfer(b->on_xfer_ctx, e);
}

/* The fidelities and the factory: declared here, the interface's one
 * header, and defined above it, each in its own folder (the analytic in
 * src/backend, flow in src/flow, packet in src/net, the factory in
 * src/fidelity); src/backend itself calls none of them (docs/architecture.md).
 *
 * Create the backend the scenario's simulation.fidelity (and
 * simulation.engine) selects. A fidelity that is not built yet is
 * SIM_ENOTSUP with a message saying so. */
int be_create(be_backend **out, sim_ctx *sim, const topo *t, const cfg_scenario *cfg,
              const cfg_doc *doc, sim_error *err);
static inline void be_submit_phase(be_backend *b, const be_xfer *x, size_t n, uint64_t repeat,
                                   be_done_fn done, void *ctx) {
  b->ops->submit_phase(b, x, n, repeat, done, ctx);
}
/* Submit a slice of a pool (see be_ops.submit_slice): through the
 * fidelity's submit_slice when it has one, else submit_phase on the slice. */
void be_submit_slice(be_backend *b, const be_slice *sl, uint64_t repeat, be_done_fn done,
                     void *ctx);
/* The caller is done with the pool (no phase of it in flight, none to
 * come): the fidelity forgets it before the caller frees or reuses it. A
 * no-op for a fidelity without submit_slice. */
void be_pool_release(be_backend *b, const be_xfer *pool);
static inline void be_destroy(be_backend *b) {
  if (b) b->ops->destroy(b);
}

/* ---- a pool's quotient by its segments -------------------------------------------------- */

/* Transfers, channels and GPUs of a pool grouped into classes that no
 * window of whole segments can tell apart. Two channels are in one class
 * when they have the same capacity and kind (link kind, the kinds of their
 * two ends; spray pools apart) and, in every segment, the same number of
 * the pool's transfers cross each and with the same bytes in all; two
 * transfers when they are in the same segment, have the same bytes and
 * path latency and cross the same set of channel classes; two GPUs when, in
 * every segment, each is an end of as many transfers. So in any window
 * made of whole segments, the members of a channel class carry the same
 * transfers' worth (count and bytes), and, with nothing else in flight,
 * the members of a transfer class see the same shares of the same
 * capacities: whatever a fidelity computes per member from that, it may
 * compute once per class. On a symmetric fabric there are few classes (a
 * tree AllReduce over 16,384 nodes: thousands for millions of transfers);
 * where nothing is alike (faults, ECMP collisions, odd placements) a class
 * is one member, and the quotient is the pool itself, still exact.
 *
 * Classes are found by hashing each channel's and GPU's segment histogram
 * and then checking every member's histogram against its class's first
 * member, entry by entry; be_quot_build fails (nothing kept) on the
 * (2^-64-rare) hash collision it finds that way, and the caller takes its
 * per-transfer path. Cost: routing every transfer once, three
 * passes over the routed paths, O(total path length) time and transient
 * memory; what is kept is O(classes + channels + GPUs). */
typedef struct be_quot_entry {
  uint32_t cls;   /* channel or GPU class */
  uint32_t count; /* transfers of the segment on each member (GPUs: ends) */
  uint64_t bytes; /* their bytes, on each member (GPUs: 0) */
} be_quot_entry;

struct be_quot {       /* every field read-only after be_quot_build */
  const be_xfer *pool; /* the pool it was built for (compared, never read) */
  size_t pool_n;
  topo_split split; /* TOPO_SPLIT_NONE: topo_route's channels; POOLS: spray's counted
                       channels (topo_spray_channel) */
  uint32_t nseg;
  size_t *cuts;        /* nseg + 1 */
  uint64_t *seg_bytes; /* per segment: its transfers' bytes */
  /* channel classes (channels: 2 x links, then spray pools) */
  uint32_t nchan;
  uint32_t *cc_of; /* per channel: its class, UINT32_MAX when no transfer of the pool crosses it */
  uint32_t ncc;
  rate_bps *cc_cap;      /* per class: each member's capacity */
  uint32_t *cc_first;    /* per class: its lowest channel */
  uint32_t *cc_members;  /* per class: how many channels */
  size_t *seg_cc_off;    /* nseg + 1: segment s puts seg_cc[seg_cc_off[s] .. seg_cc_off[s + 1]) */
  be_quot_entry *seg_cc; /*  on the classes it crosses, ascending by class */
  /* transfer classes, numbered by segment: segment s holds [seg_tc[s], seg_tc[s + 1]) */
  uint32_t ntc;
  uint32_t *seg_tc;   /* nseg + 1 */
  uint64_t *tc_w;     /* per class: transfers */
  uint64_t *tc_bytes; /* each member's bytes */
  simtime_ps *tc_lat; /* each member's path latency (0: an empty path) */
  uint32_t *tc_poff;  /* ntc + 1: class k crosses channel classes */
  uint32_t *tc_path;  /*   tc_path[tc_poff[k] .. tc_poff[k + 1]), ascending, distinct */
  uint32_t *tc_of;    /* per transfer of the pool: its class (4 bytes a transfer) */
  /* GPU classes */
  uint32_t ngpu, ngc;
  uint32_t *gc_of;       /* per GPU: its class (GPUs in no transfer: one class, never listed) */
  uint32_t *gc_members;  /* per class */
  size_t *seg_gc_off;    /* nseg + 1: segment s's ends, seg_gc[...] (bytes 0), ascending by */
  be_quot_entry *seg_gc; /*   class */
};

/* The quotient of sl's pool by sl->cuts, routed as `split` says. SIM_OK,
 * or SIM_EINVAL with q zeroed: no cuts, adaptive routing (it routes by the
 * counts of the moment), UINT32_MAX or more transfers or path channels, or
 * a hash collision (see above). Free with be_quot_free. */
int be_quot_build(be_quot *q, const topo *t, const be_slice *sl, topo_split split);
void be_quot_free(be_quot *q);
/* The segments [*slo, *shi) a slice of q's pool covers: false when it
 * does not start and end on cuts (or is of another pool). O(log segments). */
bool be_quot_window(const be_quot *q, const be_slice *sl, uint32_t *slo, uint32_t *shi);

/* The analytic fidelity, directly (tests use it). */
be_backend *be_analytic_create(sim_ctx *sim, const topo *t, const cfg_scenario *cfg);
be_backend *be_flow_create(sim_ctx *sim, const topo *t, const cfg_scenario *cfg);
/* The packet fidelity (src/net): every packet through ports, buffers, flow
 * control and congestion control. */
be_backend *be_packet_create(sim_ctx *sim, const topo *t, const cfg_scenario *cfg);
/* The same on the parallel engine (src/net/parallel.c, docs/parallel.md): over
 * the MPI ranks when started by mpirun, else its sequential mode; it runs
 * as sim's co-engine, and be_ops.stats becomes a collective. NULL and err
 * when the scenario uses what that engine does not have. */
be_backend *be_packet_create_parallel(sim_ctx *sim, const topo *t, const cfg_scenario *cfg,
                                      sim_error *err);
/* Does the scenario run the packet fidelity on the parallel engine? (src/fidelity) */
bool be_packet_parallel(const cfg_scenario *cfg);

/* Capabilities (see be_ops). Start sampling b's switch egress ports before
 * any phase (spec's arrays are copied): SIM_OK, or SIM_EINVAL when b (NULL
 * allowed) has no per-port telemetry. */
int be_port_sampling_start(be_backend *b, const be_port_spec *spec);
/* On the parallel engine, after the run and on every rank (a collective):
 * close the rows at end and merge every rank's samples, so that each rank
 * holds the whole fabric's. A no-op otherwise (also for b NULL, no
 * capability or sampling not started). */
void be_port_samples_gather(be_backend *b, simtime_ps end);
/* After the run: close the rows at end (the run's end; no more rows are
 * taken) and view them in *out. SIM_EINVAL when b has no per-port telemetry
 * or sampling was not started. */
int be_port_samples_get(be_backend *b, simtime_ps end, be_port_samples *out);
/* A collective over the ranks; false (and nothing filled) when b is not
 * the packet fidelity on the parallel engine. */
bool be_parallel_info_get(const be_backend *b, be_parallel_info *out);
/* Pause victims (see be_job_pauses): SIM_EINVAL when b (NULL allowed) has
 * no such capability; false when it has none or was given no owners. */
int be_job_owners_set(be_backend *b, const uint32_t *job_of_gpu, uint32_t njobs);
bool be_job_pauses_get(const be_backend *b, be_job_pauses *out);

#ifdef __cplusplus
}
#endif
#endif
