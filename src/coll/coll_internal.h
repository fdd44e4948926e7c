/* Internals shared by the files of the coll module.
 *
 * Builders append phases to a plan that coll_plan_build (plan.c) has zeroed
 * and validated; they may assume nranks >= 2, bytes >= 1, channels >= 1,
 * chunk >= 1 and ranks ascending. Every builder is O(transfers it emits). */
#ifndef FABSIM_COLL_INTERNAL_H
#define FABSIM_COLL_INTERNAL_H
#include "fabsim/coll.h"

static inline uint64_t coll__ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* ECMP entropy of a transfer: deterministic in (src, dst, salt). */
uint64_t coll__hash(uint32_t src, uint32_t dst, uint64_t salt);
static inline void coll__xfer(be_xfer *x, uint32_t src, uint32_t dst, uint64_t bytes,
                              uint64_t salt) {
  x->src_gpu = src;
  x->dst_gpu = dst;
  x->bytes = bytes;
  x->flow_hash = coll__hash(src, dst, salt);
  x->tclass = 0;
}

/* Channel c's NIC selector (topo_flow_hash_nic): with k > 1 NICs a GPU,
 * channel c leaves its node through NIC c mod N (N a node's NICs), index
 * (c mod N) mod k of its GPU; 0 otherwise. O(1). */
uint32_t coll__channel_sel(const topo *t, uint32_t c);
/* coll__xfer for channel c: its flow hash carries the channel's NIC
 * selector where GPUs have several NICs (unchanged otherwise). */
void coll__xfer_ch(const topo *t, be_xfer *x, uint32_t src, uint32_t dst, uint64_t bytes,
                   uint64_t salt, uint32_t c);

/* Append a phase of n zeroed transfers repeated `repeat` times. */
coll_phase *coll__add_phase(coll_plan *p, size_t n, uint64_t repeat);
/* Append a copy of x[0..n) repeated `repeat` times, or, when the last phase
 * holds exactly the same transfers, add `repeat` to it instead. O(n). */
void coll__push_step(coll_plan *p, const be_xfer *x, size_t n, uint64_t repeat);
/* Allocate the plan's pool of n zeroed transfers (once per plan); phases
 * that are slices of it cost no copy: a pipeline whose every step is a
 * window of one ordering lists each transfer once. */
be_xfer *coll__pool(coll_plan *p, size_t n);
/* Append the slice pool[off, off + n) repeated `repeat` times, or extend the
 * last phase's repeat when it is the same slice. */
void coll__push_slice(coll_plan *p, size_t off, size_t n, uint64_t repeat);
/* Split every transfer over q queue pairs (sets p->qps); with keep_nic
 * each part keeps its transfer's NIC selector (topo_flow_hash_nic). */
void coll__split_qps(coll_plan *p, uint32_t q, bool keep_nic);

/* Channel c's ordering of the ranks: within each node's block of ranks
 * (contiguous, as ranks ascend) rotate by c (whole nodes with fewer NICs
 * than GPUs: by c x GPUs/NICs), so that channel c's node-to-node hops leave
 * from other GPUs (and NICs) than channel c-1's. */
void coll__ring_order(const topo *t, const uint32_t *ranks, uint32_t n, uint32_t c,
                      uint32_t *order);

/* The ranks as node blocks: *nodes blocks of *per_node ranks each. Returns
 * false (and the first block's size in *per_node) when blocks differ in size. */
bool coll__node_blocks(const topo *t, const uint32_t *ranks, uint32_t n, uint32_t *nodes,
                       uint32_t *per_node);
/* Local index of a GPU in its node, and the fabric plane of its NIC. */
uint32_t coll__gpu_local(const topo *t, uint32_t gpu);
int32_t coll__gpu_plane(const topo *t, uint32_t gpu);

/* The busiest ports of a window [lo, hi) of a pool as it slides
 * (busiest.c): per move, the largest NVLink port load (bytes out of or into
 * a GPU, transfers inside a node) and NIC load (transfers across nodes), 0
 * where there is none, and whether any transfer crosses nodes; the same as
 * summing the window's transfers afresh. O(transfers entering and leaving +
 * distinct loads) per move. The pool must not change between moves. */
typedef struct coll__busy_window coll__busy_window;
coll__busy_window *coll__busy_window_new(const topo *t, const be_xfer *pool);
void coll__busy_window_move(coll__busy_window *w, size_t lo, size_t hi, uint64_t *nv_max,
                            uint64_t *nic_max, bool *crosses);
void coll__busy_window_free(coll__busy_window *w);

/* The factor on algorithm a's achieved rate (s->bandwidth, the scenario's
 * workload.collective.bandwidth.*; 1 without one and for algorithms that
 * have none), and bytes as a's transfers carry them, ceil(bytes / factor):
 * the plan's transfers (coll_plan_build, before the protocol's wire bytes)
 * and the tuner's closed forms alike. */
double coll__bw_factor(const coll_spec *s, cfg_coll_algorithm a);
uint64_t coll__bw_bytes(const coll_spec *s, cfg_coll_algorithm a, uint64_t bytes);

/* Protocol bytes, per-phase latency and launch overhead of p->protocol
 * (nothing for CFG_PROTO_NONE); before QP splitting. O(transfers). */
void coll__apply_protocol(coll_plan *p, const topo *t, const coll_spec *s);

/* NCCL's size rules and per-channel limits (nccl.c, which states how
 * fabsim's channels map onto NCCL's). */
enum { COLL_ARCH_AMPERE, COLL_ARCH_HOPPER, COLL_ARCH_BLACKWELL, COLL_NARCH };
/* NCCL's tuning row of a GPU: Ampere (MI300X too), Hopper, Blackwell. */
int coll__nccl_arch(cfg_gpu g);
/* A tree channel's cap on m nodes, bytes/s of NCCL's bus bandwidth
 * (tuning.cc perChMaxTreeBws; perChMaxTreeLL128Bws for LL128): the tree's
 * algorithm bandwidth is at most half of channels x this. */
double coll__nccl_tree_cap(cfg_gpu g, uint32_t m, cfg_coll_protocol p);
/* NVLSTree's cap per NVLS head on m >= 2 nodes, bytes/s of bus bandwidth
 * (tuning.cc perChMaxNVLSTreeBws, times the NVLS graph's channels, one a
 * head). */
double coll__nccl_nvlstree_cap(cfg_gpu g, uint32_t m);
/* NCCL's measured correction of its tree model's bandwidth by size
 * (tuning.cc treeCorrectionFactor, ncclTopoGetAlgoTime: 0.4-1.0 from 64 B
 * to 256 MiB; 1 outside): the tree AllReduce runs at this share of the
 * model's rate at medium sizes. */
double coll__nccl_tree_correction(cfg_coll_protocol p, uint64_t bytes);
/* The channels NCCL's rule leaves spec's message (enqueue.cc: compute
 * channels nc lowered while bytes < nc x threads x threadThreshold, from
 * 2 x spec->channels), as fabsim channels. O(channels). */
uint32_t coll__nccl_channels(const coll_spec *s, cfg_coll_algorithm a, cfg_coll_protocol p);
/* NCCL's NVLS (m = 1) or NVLSTree (m >= 2) loop over `heads` heads: the
 * bytes one pass of every NVLS channel and head moves, NVLS channels x heads
 * x chunk (enqueue.cc's chunk by size), at most S: the pipeline's unit. */
uint64_t coll__nvls_unit(const coll_spec *s, uint32_t m, uint32_t heads);

/* RCCL's choices on AMD GPUs (rccl.c, which states what RCCL runs). */
enum {
  COLL_RCCL_ELEM = 4, /* bytes of an element: rccl-tests' float */
  COLL_RCCL_CHANNELS = 56
}; /* RCCL's channels on one MI300X node */
/* Whether the GPU is AMD's (RCCL's tables, not NCCL's). */
bool coll__gpu_amd(cfg_gpu g);
/* RCCL's launch and xGMI hop latencies for gfx942 (NCCL's network hops):
 * the defaults of an AMD GPU's collectives (coll_spec_set_hw). */
const cfg_coll_latency *coll__rccl_latency(void);
/* Whether RCCL runs one of its MSCCL allpairs AllReduces for s on `nodes`
 * nodes (8 GPUs on one node, the size in the algorithm's range and its
 * element count a multiple of its chunks per loop); then its protocol *p
 * and channels *ch. O(1). */
bool coll__rccl_msccl(const coll_spec *s, uint32_t nodes, cfg_coll_protocol *p, uint32_t *ch);
/* RCCL's tuning model (tuning.cc, tuning_model_5 of gfx942): latency +
 * size / bandwidth of algorithm a (ring or tree) with protocol p, us, for
 * a bus bandwidth of bus_gbs GB/s (RCCL's graph channels x their rate);
 * INFINITY where RCCL disables the pair. O(1). */
double coll__rccl_time_us(const coll_spec *s, uint32_t nodes, double bus_gbs, cfg_coll_algorithm a,
                          cfg_coll_protocol p);
/* RCCL's pick among ring and tree, LL and Simple (within s's algorithm
 * and protocol where fixed): the least coll__rccl_time_us; a fixed
 * protocol or algorithm RCCL leaves off (LL128, one node's tree Simple)
 * stands. */
void coll__rccl_pick(const coll_spec *s, uint32_t nodes, double bus_gbs, cfg_coll_algorithm *a,
                     cfg_coll_protocol *p);
/* RCCL's channels by size (enqueue.cc getChannnelThreadInfo, from 56),
 * as fabsim channels (s->channels for RCCL's 56). O(channels). */
uint32_t coll__rccl_channels(const coll_spec *s, cfg_coll_algorithm a, cfg_coll_protocol p);
/* MSCCL's allpairs AllReduce: every rank sends each other rank S/n
 * (reduce-scatter), then each reduced share to every other (all-gather):
 * two phases of n (n-1) transfers. */
int coll__plan_allpairs(coll_plan *p, const coll_spec *s);

/* The builders, one per algorithm family. */
int coll__plan_ring(coll_plan *p, const topo *t, const coll_spec *s);
int coll__plan_broadcast(coll_plan *p, const topo *t, const coll_spec *s);
/* Slots per connection (NCCL's NCCL_STEPS, device.h): chunks in flight. */
enum { NCCL_STEPS = 8 };
/* qsort order of uint64_t (the tree's and its cost's step cuts) */
int coll__cmp_u64(const void *a, const void *b);
int coll__plan_tree(coll_plan *p, const topo *t, const coll_spec *s);
/* The tree of coll__plan_tree over m node blocks of g positions: tree A
 * (which 0) or B (1), each position's parent (-1 at the root), height and
 * depth, the root's height h. g = 1: the node-level double binary tree. */
typedef struct tree_shape {
  int32_t *parent;  /* -1 at the root */
  uint32_t *height; /* 0 at leaves */
  uint32_t *depth;  /* 0 at the root */
  uint32_t h;       /* height of the root */
} tree_shape;
void coll__tree_shape_init(tree_shape *s, uint32_t m, uint32_t g, int which);
void coll__tree_shape_free(tree_shape *s);
/* What the tree's cost needs of the placement and the protocol (tune.c's
 * probe): per-hop path latency and rate inside a node and across, NICs per
 * node, the protocol's hop latencies above the path, the launch. */
typedef struct coll_tree_rates {
  simtime_ps wire_intra, wire_inter, hop_intra, hop_inter, launch;
  double b_intra, b_inter; /* bytes/s */
  uint32_t npn;
  /* NCCL's protocol limit on a tree channel (tune.c, tree_floor_rate): the
   * data rate its busiest rank cannot beat, bytes/s (INFINITY: none) */
  double floor_rate;
} coll_tree_rates;
/* The time of coll__plan_tree's plan as the tuner estimates a built plan
 * (each phase its busiest NVLink port's and NIC's chunks at the rates, the
 * protocol's hop at a phase's first step and what NCCL_STEPS - 1 chunks in
 * flight do not cover of it at the others), computed from the shape
 * instead of the transfers: O(m (log m)^2 + g k), for m >= 2 whole node
 * blocks of g ranks in channel order. Seconds; NAN when the ranks are not
 * such blocks (tree_cost.c). */
double coll__tree_cost_s(const topo *t, const coll_spec *s, uint32_t k, uint64_t wire_chunk,
                         uint64_t nchunks, const coll_tree_rates *r);
/* The tree's throughput floor: a rank inside a chain sends 2 S/k of data
 * a channel (S/(2k) up and down in each of the two trees) at no more than
 * floor_rate. Returns what the pipeline's transfer time busy_s (seconds)
 * falls short of it, ps (0 when none), added once after the last step. */
simtime_ps coll__tree_floor_ps(uint64_t bytes, uint32_t k, double floor_rate, double busy_s);
int coll__plan_hd(coll_plan *p, const topo *t, const coll_spec *s);
int coll__plan_hier(coll_plan *p, const topo *t, const coll_spec *s, sim_error *err);
int coll__plan_pairwise(coll_plan *p, const coll_spec *s);
int coll__plan_pxn(coll_plan *p, const topo *t, const coll_spec *s);
int coll__plan_nvls(coll_plan *p, const topo *t, const coll_spec *s, sim_error *err);
int coll__plan_collnet(coll_plan *p, const topo *t, const coll_spec *s, sim_error *err);
int coll__plan_nvlstree(coll_plan *p, const topo *t, const coll_spec *s, sim_error *err);
/* An NVLS pair transfer's bytes in a node of g GPUs, efficiency e, for
 * `bytes` of the buffer: each port carries S (g+1)/g each way with both
 * stages pipelined (both; sharp.c), S with one (the fill's reduce or
 * multicast alone); over g-1 pairs, at 1/e. */
uint64_t coll__nvls_pair_bytes(uint64_t bytes, uint32_t g, double e, bool both);
/* Whether one of gpu's NICs is its node's NIC `rail` (local index). */
bool coll__gpu_on_rail(const topo *t, uint32_t gpu, uint32_t rail);
/* NCCL's nvlsEfficiency of a GPU (0: no NVLink SHARP). */
double coll__nvls_efficiency(cfg_gpu g);
/* The tuner's estimate of a tree AllReduce with protocol p on k channels,
 * seconds: on its built plan, or (closed_form) from the tree's shape
 * without building it, as the tuner does for trees too large to build per
 * candidate (tune.c; NAN for uneven node blocks). */
double coll__tree_estimate_s(const topo *t, const coll_spec *s, cfg_coll_protocol p, uint32_t k,
                             bool closed_form);

#endif
