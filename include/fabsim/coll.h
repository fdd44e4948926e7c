/* fabsim collectives: each collective becomes a plan of phases of
 * point-to-point transfers, executed on whichever backend the scenario chose.
 *
 * Ring algorithms follow collective libraries: `channels` rings run in
 * parallel, each carrying 1/channels of the data; ring c visits the GPUs of
 * each node rotated by c, so its node-to-node hop leaves from a different GPU
 * (and NIC) than ring c-1's, and all NICs of a node carry traffic.
 *
 * Figures of merit are nccl-tests' definitions: algbw = S / t; busbw = algbw
 * x 2(n-1)/n for AllReduce, (n-1)/n for ReduceScatter, AllGather and
 * AllToAll (S the total buffer size), 1 for Broadcast.
 */
#ifndef FABSIM_COLL_H
#define FABSIM_COLL_H

#include "fabsim/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct coll_phase {
  be_xfer *x;      /* concurrent transfers */
  size_t n;
  uint64_t repeat; /* back-to-back repetitions of the same pattern */
} coll_phase;

typedef struct coll_plan {
  cfg_coll_op op;
  cfg_coll_algorithm algorithm;
  uint64_t bytes;   /* S, as nccl-tests counts it */
  uint32_t nranks;
  uint32_t channels;
  uint32_t qps;     /* queue pairs per connection: each flow is qps transfers */
  uint64_t chunk;   /* pipeline chunk (Broadcast) */
  coll_phase *phases;
  size_t nphases;
  /* 0: phases run one after another. > 0: phase i starts at i x stagger
   * after the plan starts, whatever the others are doing (staggered
   * synthetic traffic); the plan ends when the last phase ends. */
  simtime_ps stagger;
} coll_plan;

typedef struct coll_spec {
  cfg_coll_op op;
  cfg_coll_algorithm algorithm;
  uint64_t bytes;
  const uint32_t *ranks; /* GPU ids, ascending; ranks[0] is the root */
  uint32_t nranks;
  uint32_t channels;     /* >= 1 */
  uint64_t chunk;        /* Broadcast pipeline chunk, bytes, >= 1 */
  uint32_t qps;          /* queue pairs per connection (0 or 1: one) */
} coll_spec;

/* Expand a collective into phases. O(transfers). Invalid combinations
 * (algorithm not available for op) are SIM_EINVAL. */
int coll_plan_build(coll_plan *plan, const topo *t, const coll_spec *spec, sim_error *err);
void coll_plan_free(coll_plan *plan);
/* Transfers in the plan, repetitions counted. */
uint64_t coll_plan_transfers(const coll_plan *plan);

/* Synthetic traffic (workload.kind: traffic) over the GPUs of a topology:
 *   pair         GPU 0 -> the last GPU;
 *   incast       `senders` GPUs -> GPU 0, taken from other nodes first, on
 *                GPU 0's rail (same local index), so the fan-in crosses
 *                the fabric onto one NIC;
 *   permutation  each GPU -> a distinct other GPU (a seeded derangement);
 *   all-to-all   each GPU -> every other GPU.
 * Flows start together (one phase) or staggered (one phase per flow, flow i
 * at i x stagger). Each flow is split over `qps` queue pairs. */
typedef struct coll_traffic_spec {
  cfg_traffic_pattern pattern;
  uint64_t bytes;      /* per flow */
  uint32_t senders;    /* incast */
  simtime_ps stagger;  /* 0: together */
  uint32_t qps;
  uint64_t seed;
} coll_traffic_spec;
/* SIM_EINVAL when the pattern does not fit (too few GPUs or senders, more
 * than 50 M flows). */
int coll_traffic_build(coll_plan *plan, const topo *t, const coll_traffic_spec *spec,
                       sim_error *err);
/* Flows in the plan before QP splitting. */
uint64_t coll_plan_flows(const coll_plan *plan);

/* nccl-tests bus bandwidth factor for op over n ranks. */
double coll_busbw_factor(cfg_coll_op op, uint32_t n);

/* Executes a plan's phases in order on a backend. Caller-owned state. */
typedef struct coll_exec {
  be_backend *b;         /* private */
  const coll_plan *plan; /* private */
  size_t next;           /* private */
  be_done_fn done;       /* private */
  void *ctx;             /* private */
  size_t running;        /* private: staggered phases still in flight */
  simtime_ps start, end; /* public after done */
  bool finished;         /* public */
} coll_exec;

void coll_exec_start(coll_exec *e, be_backend *b, const coll_plan *plan, be_done_fn done,
                     void *ctx);

typedef struct coll_result {
  double time_s;
  double algbw_GBps, busbw_GBps; /* 1 GB = 1e9 bytes, as nccl-tests */
} coll_result;
void coll_result_of(const coll_exec *e, coll_result *r);

#ifdef __cplusplus
}
#endif
#endif
