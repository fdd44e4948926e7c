/* fabsim parallel discrete-event engine (src/pdes): conservative, windowed,
 * over MPI when it is built in; the same engine on one process is the
 * sequential reference.
 *
 * Model
 *   A simulation is a set of logical processes (LPs) 0 .. nlps-1. An LP's
 *   state belongs to the model; a handler may read and write the state of
 *   the LP the event is for, and nothing else, and talks to other LPs only by
 *   pdes_send. Each LP lives on one rank (cfg.lp_rank).
 *
 * Order (the identity guarantee)
 *   Every event carries the key (time, sending LP, the sender's sequence
 *   number), and each rank runs its events in increasing key order. The
 *   sender's sequence counts the sends of that LP, which depend only on the
 *   events that LP ran, so by induction every LP runs the same events in the
 *   same order whatever the partition and the number of ranks: per-LP state
 *   is byte-identical for 1, 2 or N ranks and for the sequential mode.
 *
 * Synchronization (conservative, YAWNS-style windows)
 *   The lookahead L is a lower bound on (receive time - send time) of every
 *   event that crosses ranks. Each window starts at T, the global minimum of
 *   the pending event times, and runs every event with time < T + L; cross-rank
 *   events produced in it have time >= T + L, so they are exchanged at the
 *   window's end, before any rank could need them: a sparse exchange (a
 *   message to each rank written to, a non-blocking barrier, an
 *   MPI_Iallreduce of the minimum) or a dense one (one MPI_Alltoall of
 *   counts and minima, one MPI_Alltoallv of the events). Termination:
 *   after a window every pending time is >= T + L, so a run to `until` takes
 *   at most (until - T0) / L + 1 windows, each finite if the sequential run is.
 *   L = 0 cannot make progress across ranks and is refused (pdes_create); a
 *   cross-rank send that violates L is a model bug and fatal, with a message.
 *
 * Cost: send O(1) amortized into a calendar queue whose current bucket is a
 * 4-ary heap (as src/core/ev.c) of 24-byte keys over a pool of 64-byte
 * events, no per-event malloc once grown; a window costs O(log P)
 * collectives plus one message per rank written to (dense: O(P)).
 */
#ifndef FABSIM_PDES_H
#define FABSIM_PDES_H

#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pdes pdes;

enum { PDES_PAYLOAD_WORDS = 4 };

/* One event; 64 bytes so that a heap node is a cache line. Public fields are
 * read by handlers; `tie` is the engine's (sender << 36 | sender sequence). */
typedef struct pdes_event {
  simtime_ps time;                      /* public: when it happens */
  uint64_t tie;                         /* private */
  uint32_t dst;                         /* public: the LP it is for */
  uint32_t kind;                        /* public: index into cfg.handlers */
  uint64_t payload[PDES_PAYLOAD_WORDS]; /* public: the model's data */
  uint64_t pad_;
} pdes_event;

/* The exchange at a window's end. Dense: MPI_Alltoall + MPI_Alltoallv, O(P)
 * per window, the cheaper one on a few ranks (about 30 us per window on 2
 * ranks of this 2-core machine, against 65 us sparse). Sparse (NBX): O(log P)
 * plus a message per rank written to. Auto: dense up to 8 ranks. */
typedef enum { PDES_EXCHANGE_AUTO = 0, PDES_EXCHANGE_DENSE, PDES_EXCHANGE_SPARSE } pdes_exchange;

/* A handler runs one event for LP ev->dst; `model` is cfg.model. */
typedef void (*pdes_fn)(pdes *p, const pdes_event *ev, void *model);

/* Global state at window boundaries (phase completion: "every transfer of
 * this phase is done, start the next one"). Handlers add to PDES_REDUCE_WORDS
 * sum and max accumulators (pdes_reduce_add, pdes_reduce_max); at every
 * window boundary (and before the first window) the engine combines them
 * over the ranks and calls cfg.on_window on every rank with the global sums
 * and maxima of the contributions since the previous call. The hook may send
 * events from and to LPs of its own rank only, at times >= the end of the
 * window just run (pdes_done_until); it returns the earliest time it
 * scheduled on any rank (every rank computes the same, from the same global
 * values), or SIM_TIME_MAX. Windows are [T, T + L) with T the global minimum
 * on every partition and in the sequential mode (which runs windowed when a
 * hook is set), so the hook sees the same values at the same boundaries for
 * any number of ranks. It must still not depend on where a run was split by
 * `until`: use it for monotone conditions (a count reaching a total) and
 * order-free aggregates (sums, maxima). Phase start: the last completion at
 * T_end is reduced at the end of its window W <= T_end + L, so a next phase
 * at T_end + d is in every rank's future when d >= L; a hook that schedules
 * before pdes_done_until is fatal, with a message. */
enum { PDES_REDUCE_WORDS = 4, PDES_ORDERS = 4 };
typedef simtime_ps (*pdes_window_fn)(pdes *p, const uint64_t sum[PDES_REDUCE_WORDS],
                                     const uint64_t max[PDES_REDUCE_WORDS], void *model);

typedef struct pdes_cfg {
  uint32_t nlps;
  const uint32_t *lp_rank; /* rank of each LP (copied); NULL: contiguous blocks */
  simtime_ps lookahead_ps; /* min delay of any event that crosses ranks; > 0 if ranks > 1 */
  const pdes_fn *handlers; /* indexed by event kind (copied) */
  uint32_t nhandlers;
  /* Order at one time, by kind (copied; NULL: all 0): events at the same time
   * run by (order[kind] < PDES_ORDERS, sending LP, its send count), so a model
   * can say which kinds of same-time events come first, whatever the ranks */
  const uint8_t *order;
  void *model;
  bool parallel;            /* true: the LPs spread over the MPI ranks (pdes_comm_init
                               first); false: all on this process, sequential */
  pdes_exchange exchange;   /* how cross-rank events move at a window's end */
  pdes_window_fn on_window; /* NULL: none (then lookahead may be 0 on one rank) */
} pdes_cfg;

/* Per-rank counters of a run (pdes_stats); wall times in seconds. */
typedef struct pdes_stats {
  uint64_t events;      /* events run on this rank */
  uint64_t windows;     /* synchronization windows */
  uint64_t sent_remote; /* events this rank sent to other ranks */
  double wall_s;        /* wall time of pdes_run calls */
  double sync_s;        /* of which in collectives (waiting included) */
} pdes_stats;

/* Errors (bad partition, L = 0 over ranks, MPI not built in): SIM_EINVAL
 * with a message. Collective over the ranks when cfg->parallel. */
int pdes_create(pdes **out, const pdes_cfg *cfg, sim_error *err);
void pdes_destroy(pdes *p);

uint32_t pdes_rank(const pdes *p);
uint32_t pdes_nranks(const pdes *p);
uint32_t pdes_lp_rank(const pdes *p, uint32_t lp);
static inline bool pdes_owns(const pdes *p, uint32_t lp) {
  return pdes_lp_rank(p, lp) == pdes_rank(p);
}
/* Time of the event being run (or of the last one). */
simtime_ps pdes_now(const pdes *p);

/* Schedule an event from LP src (which must be on this rank: the LP being
 * run, or any owned LP before pdes_run) for LP dst at absolute time `at`
 * (>= now; >= now + lookahead when dst is on another rank). payload may be
 * NULL (zeros). */
void pdes_send(pdes *p, uint32_t src, uint32_t dst, simtime_ps at, uint32_t kind,
               const uint64_t payload[PDES_PAYLOAD_WORDS]);

/* Contributions to the current window's reduction (see pdes_window_fn). */
void pdes_reduce_add(pdes *p, unsigned word, uint64_t v);
void pdes_reduce_max(pdes *p, unsigned word, uint64_t v);
/* Every event before this time has run, on every rank. */
simtime_ps pdes_done_until(const pdes *p);
/* From the window hook: the current pdes_run returns before running any
 * event at or after t (every rank's hook must ask the same). */
void pdes_stop_before(pdes *p, simtime_ps t);

/* A global action (made outside the handlers by the caller, identically on
 * every rank, e.g. a workload event of a co-engine's host) has just changed
 * events at time t, every event before t having run. If the window the last
 * exchange chose has not begun (t before its start), it was chosen without
 * them: it is dropped and the next pdes_run exchanges again. A begun window
 * stays: the action's events are at t or later, and what they send to other
 * ranks lands at t + L >= the window's end. Every rank must make the same
 * calls (the exchanges stay matched). */
void pdes_global_action(pdes *p, simtime_ps t);

/* Run every event with time <= until (SIM_TIME_MAX: until none is left).
 * Collective when parallel. Windows do not depend on `until`: a call whose
 * bound falls inside a window runs the window's events up to it and returns;
 * the next call resumes that window, and exchanges only when it is done. So
 * every rank makes the same exchanges in the same order whatever bounds its
 * caller uses, and the window hook runs at the same simulated boundaries.
 * Returns the events run on this rank by this call. */
uint64_t pdes_run(pdes *p, simtime_ps until);

void pdes_stats_get(const pdes *p, pdes_stats *s);

/* ---- partitioning a fabric (partition.c) ---------------------------------------------- */

/* How the packet backend's LPs (one per topology vertex) would spread over
 * ranks, following the fabric: units are (plane, pod) on 3-tier fabrics and
 * (plane, leaf) on 2-tier ones, each with its leaf/spine switches, NICs and
 * the GPUs behind those NICs, ordered plane-major and cut into contiguous
 * runs of about equal endpoint count, so that N = planes gives one plane per
 * rank and a one-plane 3-tier fabric gets whole pods; 3-tier fabrics go to
 * (plane, leaf) units with more ranks than pods, and with more ranks than
 * leaves a leaf's NICs split into sub-units (cutting NIC-leaf links; the
 * leaf with the first). Spines of 2-tier planes
 * and cores (shared by a plane's units) go round robin over the ranks of
 * their plane; a node's GPUs and scale-up switch stay together (no latency
 * to look ahead with between them) with NIC (node mod NICs per node). */
typedef struct pdes_partition {
  uint32_t nranks;
  uint32_t *vertex_rank;   /* per topology vertex (owned) */
  uint64_t cut_links;      /* links whose two ends are on different ranks */
  uint64_t cut_by_kind[4]; /* by topo_lkind */
  uint64_t links;
  simtime_ps lookahead_ps;               /* smallest propagation latency of a cut link;
                                            SIM_TIME_MAX when nothing is cut */
  uint32_t endpoints_min, endpoints_max; /* NICs per rank */
  uint32_t vertices_min, vertices_max;   /* LPs per rank */
  uint32_t units;                        /* (plane, pod|leaf[, sub-unit]) units */
  const char *scheme;                    /* "plane", "plane+pod", "pod", "plane+leaf", "leaf",
                                            "plane+subleaf", "subleaf", "one rank" */
} pdes_partition;

struct topo;
/* O(vertices + links). SIM_EINVAL if nranks is 0 or more than the endpoints
 * allow (planes x leaves x the most endpoints under a leaf). */
int pdes_partition_fabric(pdes_partition *p, const struct topo *t, uint32_t nranks, sim_error *err);
void pdes_partition_free(pdes_partition *p);

/* ---- communicator (comm.c): MPI_COMM_WORLD, or one rank without MPI ----- */

/* Whether this binary was built with MPI. */
bool pdes_comm_built(void);
/* Whether this process was started by an MPI launcher (mpirun, srun) and
 * FABSIM_NO_MPI is unset: sim_launcher_get().launched (core reads the
 * launchers' variables). */
bool pdes_comm_launched(void);
/* MPI_Init once (no-op without MPI); size 1 rank 0 without MPI. */
int pdes_comm_init(sim_error *err);
void pdes_comm_finalize(void);
uint32_t pdes_comm_rank(void);
uint32_t pdes_comm_size(void);
void pdes_comm_barrier(void);
/* Broadcast n bytes from rank 0. */
void pdes_comm_bcast(void *buf, size_t n);
/* Sum of x over the ranks, on every rank. */
uint64_t pdes_comm_sum_u64(uint64_t x);
/* Every rank's byte string, concatenated in rank order, on every rank
 * (sim_malloc'd; *total its length). At most 2 GiB in all. */
void *pdes_comm_allgather_bytes(const void *buf, size_t n, size_t *total);
/* Element-wise sum (max: maximum) of v[0..n) over the ranks, in place on every rank. */
void pdes_comm_allreduce_u64(uint64_t *v, size_t n, bool max);
void pdes_comm_allreduce_f64(double *v, size_t n, bool max);
/* Element-wise sum of v[0..n) into out on rank 0 (out may be v on rank 0). */
void pdes_comm_reduce_sum_u64(const uint64_t *v, uint64_t *out, size_t n);
/* Rank 0 receives every rank's byte string (its own included) as
 * parts[r] (sim_malloc'd, lengths lens[r]); other ranks get NULL. */
void pdes_comm_gather_bytes(const void *buf, size_t n, void ***parts, size_t **lens);

#ifdef __cplusplus
}
#endif
#endif
