/* fabsim telemetry: counters, a sampler and an event log that backends and
 * the workload executor feed while a simulation runs.
 *
 * Entities are plain dense indices chosen by the caller (this module knows
 * nothing of topologies): GPUs 0..gpus-1, NICs 0..nics-1, switch egress ports
 * 0..ports-1. The CLI maps them to topology names (gpu17, nic17,
 * leaf0-spine3) when it writes files.
 *
 * Sampling without terabytes. Time is cut into intervals of `interval`
 * picoseconds, [k*interval, (k+1)*interval). For each closed interval the
 * sampler keeps one row per group of entities, aggregated across the group:
 *   GPUs   fraction of GPU-time in each state (compute, network, bubble, ...)
 *   NICs   total, p50, p99 and max throughput across NICs, each direction
 *   ports  utilization mean/p50/p99/max, queue depth p99/max, ECN marks,
 *          PFC paused time, across all switch egress ports
 * plus full per-entity rows only for the ports and NICs listed at creation
 * (`watch_*`). A 16,384-GPU run therefore costs a few hundred bytes per
 * interval, whatever its size. Over the whole run every port and NIC keeps
 * its totals, so the top-k hottest ports are exact.
 *
 * Feeding (the hot path). Every tel_* update below is O(1) and never
 * allocates, except when `now` has crossed an interval boundary: then the
 * group's open interval is closed, O(entities of that group) once per
 * interval (plus a selection for the percentiles, also O(entities)).
 * Updates carry the simulated time `now` explicitly; within one group
 * (GPUs, NICs, ports) times must not decrease, but groups are independent,
 * so a group may be fed after the run by replaying a log (the CLI does this
 * for the analytic and flow fidelities, see fabsim/tel_tap.h).
 *
 * Two styles of feeding, mixable per entity:
 *   counts  tel_nic_bytes / tel_port_bytes: bytes that moved at `now`
 *           (a packet backend: one call per packet or per batch);
 *   rates   tel_nic_rate / tel_port_rate: the entity's rate changes by a
 *           signed delta at `now` (a fluid backend: on each rate change);
 *           the sampler integrates rate x time exactly (128-bit bit-ps).
 * Levels (queue depth) are tel_port_queue calls with the current depth; the
 * sampler keeps the deepest value per interval. PFC pause is a state
 * (tel_port_pause true/false) whose time is integrated.
 *
 * Which groups were fed is recorded (tel_observed), so outputs never show
 * zeros for what a fidelity cannot observe.
 *
 * The event log is not a hot path: O(length of the strings), amortized
 * growth. It is for rare events: a link failing, a pause storm, a
 * checkpoint, a collective starting.
 *
 * Determinism: no wall clock, no randomness; the same feed gives the same
 * rows bit for bit. No globals: several tel objects may live in one process.
 */
#ifndef FABSIM_TELEMETRY_H
#define FABSIM_TELEMETRY_H

#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tel tel; /* opaque */

/* What a GPU is doing. NETWORK is exposed communication: the GPU waits on
 * the fabric with nothing to overlap; BUBBLE waits on a pipeline peer. */
typedef enum {
  TEL_GPU_IDLE,
  TEL_GPU_COMPUTE,
  TEL_GPU_NETWORK,
  TEL_GPU_BUBBLE,
  TEL_GPU_CHECKPOINT,
  TEL_GPU_DOWN, /* failed or restarting */
  TEL_GPU_NSTATES
} tel_gpu_state;
const char *tel_gpu_state_name(tel_gpu_state s); /* "idle", "compute", ... */

typedef enum { TEL_TX, TEL_RX } tel_dir;

/* Groups that were fed (tel_observed). */
enum {
  TEL_OBS_GPU = 1u << 0,
  TEL_OBS_NIC = 1u << 1,
  TEL_OBS_PORT_UTIL = 1u << 2,
  TEL_OBS_PORT_QUEUE = 1u << 3,
  TEL_OBS_PORT_ECN = 1u << 4,
  TEL_OBS_PORT_PFC = 1u << 5,
  TEL_OBS_FCT = 1u << 6,
  TEL_OBS_STEPS = 1u << 7
};

typedef struct tel_config {
  simtime_ps interval; /* sample interval, > 0 */
  uint32_t gpus, nics, ports;
  rate_bps nic_bps;            /* line rate of a NIC, for utilization */
  const rate_bps *port_bps;    /* ports entries (copied); NULL: all nic_bps */
  const uint32_t *watch_ports; /* full series for these ports (copied) */
  uint32_t nwatch_ports;
  const uint32_t *watch_nics; /* full series for these NICs (copied) */
  uint32_t nwatch_nics;
  uint32_t max_rows;    /* rows kept per group; 0: 1,000,000. Past it
                           the run goes on, sampling stops, and
                           tel_truncated says so. */
  simtime_ps requested; /* the interval asked for when `interval` was widened
                           to fit max_rows (tel_interval_fit); 0: as asked */
  /* The line-rate invariant (tel_over). A NIC's line rate there is
   * nic_line_bps, the modelled rate of its link into the fabric (what the
   * fidelities let it move: cluster.nic.bandwidth x its efficiency), as a
   * port's is its link's modelled rate (port_bps); 0: nic_bps. Utilization
   * stays relative to nic_bps. */
  rate_bps nic_line_bps;
  /* TEL_CARRY_*: groups whose meters are fed phase by phase, each phase's
   * bytes spread evenly over it, where a row can be offered more than the
   * line rate (phases that the fidelity does not make share a link, or
   * a phase slowed for part of its time shown at its mean). Such a row
   * shows the line rate and carries the excess into the next rows, as a
   * queue drains (bytes kept, tel_line_carried says so). Other groups:
   * an excess is tel_over. */
  unsigned carry;
  /* A backlog still carried at the end of the run: dropped from the
   * series and counted (tel_line_carried) when true, else tel_over. */
  bool carry_may_remain;
} tel_config;

enum { TEL_CARRY_NICS = 1u << 0, TEL_CARRY_PORTS = 1u << 1 };

/* The sample interval for a run of `end` ps: `want`, or when that would
 * give more than max_rows rows, the smallest 1, 2 or 5 x 10^k ps that
 * gives at most max_rows (so sampling costs O(max_rows), whatever the
 * interval asked for; the caller says so, tel_config.requested). */
simtime_ps tel_interval_fit(simtime_ps end, simtime_ps want, uint32_t max_rows);

/* SIM_EINVAL for interval 0. */
int tel_create(tel **out, const tel_config *c, sim_error *err);
void tel_destroy(tel *t);

/* ---- feeding (O(1), no allocation; see above) ------------------------- */

void tel_gpu_state_set(tel *t, simtime_ps now, uint32_t gpu, tel_gpu_state s);
/* n anonymous GPUs move from state `from` to `to` (a workload that knows
 * groups of GPUs acting alike, e.g. the GPUs of a pipeline stage). Do not
 * mix with tel_gpu_state_set on the same run: per-GPU states are not kept
 * for them. At most as many GPUs as are in `from` move. O(1). */
void tel_gpu_count_move(tel *t, simtime_ps now, tel_gpu_state from, tel_gpu_state to, uint32_t n);
void tel_nic_bytes(tel *t, simtime_ps now, uint32_t nic, tel_dir d, uint64_t bytes);
void tel_nic_rate(tel *t, simtime_ps now, uint32_t nic, tel_dir d, int64_t delta_bps);
void tel_port_bytes(tel *t, simtime_ps now, uint32_t port, uint64_t bytes);
void tel_port_rate(tel *t, simtime_ps now, uint32_t port, int64_t delta_bps);
void tel_port_queue(tel *t, simtime_ps now, uint32_t port, uint64_t depth_bytes);
void tel_port_ecn(tel *t, simtime_ps now, uint32_t port, uint64_t marks);
void tel_port_pause(tel *t, simtime_ps now, uint32_t port, bool paused);
/* One flow completion time, into a log histogram (4 buckets per octave). */
void tel_fct(tel *t, simtime_ps fct);
/* Training steps: the GPU-time in each state between begin and end becomes
 * one step record (steps must not overlap; needs GPU states fed). */
void tel_step_begin(tel *t, simtime_ps now, uint64_t step);
void tel_step_end(tel *t, simtime_ps now, uint64_t step);

/* Append to the event log. component: a name as `fabsim topo` prints it
 * ("leaf0-spine3", "gpu17", "job"); kind: a short word ("link-down",
 * "pause-storm", "collective-start"); effect: what it did, in words; value:
 * the measured effect as a number (NAN when there is none). Events may be
 * logged in any time order; they are sorted (stably) by time on output. */
void tel_event(tel *t, simtime_ps at, const char *component, const char *kind, const char *effect,
               double value);

/* Close every group's intervals up to `end` (the last row may be shorter
 * than the interval). Call once, after the run; feeding afterwards is a
 * programming error. */
void tel_finish(tel *t, simtime_ps end);
/* The rows' part of tel_finish, once, before it (the rows and
 * tel_line_carried are then final; tel_event may still be called). */
void tel_close_rows(tel *t, simtime_ps end);

/* ---- reading (after tel_finish) ---------------------------------------- */

/* A row's value above its line rate: what cannot be true and must reach no
 * file (issue 27, defect 7). Every row a NIC or port gets is checked as it
 * closes: a NIC's bytes in a row at most its line rate over the row
 * (nic_line_bps), a port's utilization at most 1, each with a slack of one
 * byte per row (whole bytes spread over rows). The first found is kept. A
 * group that carries (tel_config.carry) shows the line rate instead; there
 * only a backlog outliving the run is kept here, as the row carried last
 * (none when carry_may_remain). */
typedef struct tel_over {
  bool found;
  bool port;         /* a switch port (else a NIC) */
  uint32_t entity;   /* the NIC or port (of a class: its first member) */
  int dir;           /* a NIC's: TEL_TX or TEL_RX */
  simtime_ps at;     /* the row's start */
  double gbps, line; /* its rate and line rate, Gb/s */
} tel_over;
bool tel_over_line(const tel *t, tel_over *out);
/* The first row offered more than its line rate and carried (tel_config
 * carry): the entity, the row, the offered rate and the line rate; *left:
 * the bytes still carried at the end (dropped from the series when
 * carry_may_remain). False when none was. */
bool tel_line_carried(const tel *t, tel_over *first, double *left_bytes);

simtime_ps tel_interval(const tel *t);
simtime_ps tel_interval_requested(const tel *t); /* tel_config.requested */
simtime_ps tel_end(const tel *t);
unsigned tel_observed(const tel *t);
bool tel_truncated(const tel *t);
/* Rows per group: ceil(end / interval), at most max_rows. */
size_t tel_rows(const tel *t);
/* Start and length of row i (the last may be short). */
simtime_ps tel_row_start(const tel *t, size_t i);
simtime_ps tel_row_length(const tel *t, size_t i);

typedef struct tel_gpu_row {
  double frac[TEL_GPU_NSTATES]; /* of GPU-time in the row; sums to 1 */
} tel_gpu_row;
typedef struct tel_nic_row {
  double total_gbps[2];                         /* [TEL_TX], [TEL_RX]: sum over NICs */
  double p50_gbps[2], p99_gbps[2], max_gbps[2]; /* across NICs */
  uint32_t active[2];                           /* NICs that moved any byte */
} tel_nic_row;
typedef struct tel_port_row {
  double util_mean, util_p50, util_p99, util_max; /* 0..1 across ports */
  double queue_p99_bytes, queue_max_bytes;        /* deepest per port, across ports */
  double ecn_marks;                               /* sum over ports */
  double pfc_paused_s;                            /* summed paused time */
  uint32_t paused_ports;                          /* ports paused at some point */
} tel_port_row;
typedef struct tel_watch_row { /* one watched port or NIC in one row */
  double util;                 /* ports: utilization; NICs: TX utilization */
  double gbps[2];              /* ports: [0] egress Gb/s; NICs: TX, RX */
  double queue_max_bytes;      /* ports only */
  double ecn_marks;
  double pfc_paused_s;
} tel_watch_row;

const tel_gpu_row *tel_gpu_row_at(const tel *t, size_t i);
const tel_nic_row *tel_nic_row_at(const tel *t, size_t i);
const tel_port_row *tel_port_row_at(const tel *t, size_t i);
/* Watched entity w (index into watch_ports, then watch_nics) in row i. */
const tel_watch_row *tel_watch_row_at(const tel *t, size_t i, uint32_t w);
uint32_t tel_watch_count(const tel *t);
/* Entity id of watched w and whether it is a NIC (else a port). */
uint32_t tel_watch_entity(const tel *t, uint32_t w, bool *is_nic);

/* Whole-run figures. */
typedef struct tel_port_total {
  uint32_t port;
  double bytes, util; /* util: bytes / (line rate x run time) */
  uint64_t queue_max_bytes, ecn_marks;
  simtime_ps pfc_paused;
} tel_port_total;
/* The k busiest ports by bytes (ties: lower id first); returns how many
 * were written (ports that moved nothing are not listed). O(ports x k). */
size_t tel_top_ports(const tel *t, tel_port_total *out, size_t k);
typedef struct tel_totals {
  double nic_bytes[2]; /* all NICs, TX and RX */
  double port_bytes;
  uint64_t ecn_marks;
  simtime_ps pfc_paused; /* summed over ports */
  uint64_t queue_max_bytes;
  double gpu_frac[TEL_GPU_NSTATES]; /* of all GPU-time in the run */
  uint64_t fct_count;
} tel_totals;
void tel_totals_get(const tel *t, tel_totals *out);

typedef struct tel_event_view {
  simtime_ps at;
  const char *component, *kind, *effect;
  double value;
} tel_event_view;
size_t tel_event_count(const tel *t);
/* Events in time order (stable for equal times). */
void tel_event_at(const tel *t, size_t i, tel_event_view *out);

/* FCT histogram: bucket b holds FCTs in [tel_fct_bucket_lo(b), lo(b+1)). */
enum { TEL_FCT_BUCKETS = 64 * 4 };
uint64_t tel_fct_count(const tel *t, size_t bucket);
simtime_ps tel_fct_bucket_lo(size_t bucket);

typedef struct tel_step {
  uint64_t step;
  simtime_ps begin, end;
  double frac[TEL_GPU_NSTATES]; /* of GPU-time in the step */
} tel_step;
size_t tel_step_count(const tel *t);
const tel_step *tel_step_at(const tel *t, size_t i);

#ifdef __cplusplus
}
#endif
#endif
