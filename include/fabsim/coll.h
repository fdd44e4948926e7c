/* fabsim collectives: each collective becomes a plan of phases of
 * point-to-point transfers, executed on whichever backend the scenario chose.
 * A phase is a set of concurrent transfers, optionally repeated back to back;
 * phases run in sequence (the dependencies of a lock-step schedule).
 *
 * Algorithms (coll_plan_build), with their alpha-beta closed forms on a
 * uniform network of latency alpha and bandwidth B, n ranks, S bytes:
 *   allreduce      ring              2(n-1) (alpha + S/(n B))
 *                  tree              double binary tree, pipelined in C chunks:
 *                                    (C + 2 ceil(log2 n) - 1) steps, ~2S/B
 *                  halving-doubling  2 log2 n alpha + 2 (n-1)/n S/B (n = 2^L;
 *                                    else + 2 (alpha + S/B) for the fold)
 *                  hierarchical      intra-node ReduceScatter + per-rail
 *                                    inter-node ring AllReduce of S/G +
 *                                    intra-node AllGather
 *                  nvls              NVLink SHARP, one node: every GPU port
 *                                    S (n+1)/(n e) each way (src/coll/sharp.c),
 *                                    plus NCCL's pipeline fill and drain
 *                                    u (n-1)/(n e B), u its first loop
 *                  nvlstree          NVLS in each node, the node-level double
 *                                    binary trees across (src/coll/sharp.c),
 *                                    with its fill (tune.c nvls_pipeline_ps)
 *                  collnet           InfiniBand SHARP: intra-node reduce-
 *                                    scatter/all-gather with each NIC's S/g
 *                                    up and down the aggregation tree
 *   reducescatter, allgather
 *                  ring              (n-1) (alpha + S/(n B))
 *                  halving-doubling  log2 n alpha + (n-1)/n S/B
 *   broadcast      ring              pipelined chain: (n-1 + C-1)(alpha + chunk/B)
 *   alltoall       pairwise          (n-1) (alpha + S/(n B))
 *                  pxn               cross-plane data forwarded over NVLink to
 *                                    the GPU on the peer's plane first
 * The files of src/coll state each schedule and its closed form exactly.
 * Mixture-of-experts dispatch/combine with a node limit: coll_moe_build.
 *
 * Ring algorithms follow collective libraries: `channels` rings run in
 * parallel, each carrying 1/channels of the data; ring c visits the GPUs of
 * each node rotated by c, so its node-to-node hop leaves from a different GPU
 * (and NIC) than ring c-1's, and all NICs of a node carry traffic; with two
 * NICs a GPU channel c takes NIC c mod N of its node (topo_flow_hash_nic).
 * The other algorithms use the same rotations per channel. A channel is
 * NCCL's graph channel (one a NIC), which NCCL runs as two compute
 * channels (src/coll/nccl.c).
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
  be_xfer *x; /* concurrent transfers (may be a slice of the plan's pool) */
  size_t n;
  uint64_t repeat;  /* back-to-back repetitions of the same pattern */
  simtime_ps start; /* what its transfers wait before their first byte moves (a
                       point-to-point transfer's initiation: coll_p2p); 0 for collectives,
                       whose plan has a launch instead */
  simtime_ps fixed; /* protocol latency of all repetitions, or a point-to-point
                       transfer's completion (coll_p2p), added by the executor after the
                       last one (0 without either) */
  bool in_pool;     /* private: x points into coll_plan.pool */
} coll_phase;

typedef struct coll_plan {
  cfg_coll_op op;
  cfg_coll_algorithm algorithm; /* as run: the tuner's pick when asked for auto */
  cfg_coll_protocol protocol;   /* as run; CFG_PROTO_NONE: ideal transfers */
  simtime_ps launch;            /* per-call launch overhead before the first phase */
  uint64_t bytes;               /* S, as nccl-tests counts it */
  uint32_t nranks;
  uint32_t channels;
  uint32_t qps;   /* queue pairs per connection: each flow is qps transfers */
  uint64_t chunk; /* pipeline chunk (Broadcast, tree) */
  coll_phase *phases;
  size_t nphases;
  size_t phases_cap; /* private */
  be_xfer *pool;     /* private: transfers shared by phases that are slices of it */
  size_t pool_n;     /* private */
  size_t *cuts;      /* private: where those slices start and end (be_slice.cuts) */
  size_t ncuts;      /* private */
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
  uint32_t channels; /* >= 1 */
  uint64_t chunk;    /* pipeline chunk (ring broadcast, tree), bytes, >= 1 */
  uint32_t qps;      /* queue pairs per connection (0 or 1: one) */
  /* CFG_PROTO_NONE (0, zeroed specs): ideal transfers as the closed forms
   * above; a protocol (or auto) adds its wire bytes, per-hop latency and
   * launch overhead (coll_protocol_params). */
  cfg_coll_protocol protocol;
  bool pxn_serial; /* pxn all-to-all: all NVLink forwarding before the fabric
                      phases (false, as NCCL: pipelined with them) */
  /* The protocols' launch and per-hop latencies (the scenario's
   * workload.collective.latency); NULL: NCCL's defaults. */
  const cfg_coll_latency *latency;
  /* What the hardware offers the tuner (coll_spec_set_hw; zeroed: an H100
   * without NVLS or SHARP): the GPU's architecture picks NCCL's per-channel
   * bandwidth caps and NVLS efficiency. */
  cfg_gpu gpu;
  bool nvls;  /* NVLink SHARP: NVSwitch gen 3+ and allowed */
  bool sharp; /* InfiniBand SHARP on the fabric (fabric.sharp) */
  /* Per-algorithm factors on the achieved rate (the scenario's
   * workload.collective.bandwidth); NULL: 1 for every algorithm. An
   * algorithm's transfers carry bytes / factor (coll__bw_factor). */
  const cfg_coll_bandwidth *bandwidth;
} coll_spec;

/* Fill spec's hardware fields from a scenario: gpu, nvls (H100, H800 or
 * B200 and workload.collective.nvls), sharp (fabric.sharp on InfiniBand). */
void coll_spec_set_hw(coll_spec *spec, const cfg_scenario *cfg);

/* The one mapping from a scenario to a collective's parameters
 * (src/coll/spec_cfg.c), used by fabsim run's collectives, training steps,
 * traces, jobs and fabsim calibrate alike: one `op` of `bytes` over the
 * GPUs ranks[0..n) (ascending; the spec points into the caller's array)
 * with the scenario's workload.collective keys: algorithm, channels
 * (workload.collective.channels, else one per NIC of a node), chunk,
 * queue pairs, protocol, its latencies (workload.collective.latency.*),
 * the per-algorithm bandwidth factors (workload.collective.bandwidth.*),
 * pxn's pipelining, and what the hardware offers (coll_spec_set_hw). The
 * spec points into cfg: cfg must outlive it. A caller may then override a
 * field the scenario does not set for it (a training step picks its
 * algorithm and channels per parallel group). */
coll_spec coll_spec_from_cfg(const cfg_scenario *cfg, cfg_coll_op op, uint64_t bytes,
                             const uint32_t *ranks, uint32_t n);
/* The plan of the scenario's workload.collective (op, size, ranks) over
 * the GPUs gpus[0..ngpus) in rank order (NULL: every GPU of t, 0..n-1):
 * workload.collective.ranks 0 takes them all, else the first `ranks`. The
 * transfers carry workload.traffic_class. Errors are SIM_ECONFIG located
 * at the key (cfg_fail_at): more ranks than GPUs, an algorithm the
 * collective or the placement does not offer. */
int coll_plan_from_cfg(coll_plan *plan, const topo *t, const cfg_scenario *cfg, const cfg_doc *doc,
                       const uint32_t *gpus, uint32_t ngpus, sim_error *err);

/* Protocols as NCCL runs them, for spec.protocol != CFG_PROTO_NONE:
 *   wire bytes: LL moves 8-byte lines of 4 data bytes and a 4-byte flag
 *     (2x), LL128 128-byte lines of 120 data bytes (16/15 x), Simple the
 *     data itself; every transfer of the plan carries its protocol's bytes;
 *   pipelining: a ring step is forwarded in slices (Simple 2, LL and LL128
 *     line by line), hiding the hop latency up to (1 - 1/slices) of each
 *     step's transfer; LL and LL128 channels are capped at NCCL's
 *     per-channel rates; a tree phase's repeats overlap their hop with the
 *     7 chunks in flight before them (src/coll/tune.c states the forms);
 *   per-hop latency: what a step costs beyond the data, by protocol and by
 *     hop (NVLink or network), from NCCL's tuning model, wire included; a
 *     step of a phase already costs its slowest transfer's routed latency
 *     alpha (the backend charges it), so the part above alpha becomes the
 *     phase's `fixed` delay: a ring phase of N steps, Ni of them crossing
 *     nodes (NCCL's count), adds (N - Ni) max(0, hop_intra - alpha) +
 *     Ni max(0, hop_inter - alpha), alpha the network path's when the ring
 *     spans nodes; any other phase repeat x the hop of its kind (network if
 *     any transfer crosses nodes);
 *   launch: a per-call overhead before the first phase (NCCL's base latency).
 * So on a uniform network a ring AllReduce over one node takes
 *   launch + 2(n-1) (alpha + w S / (n B)) + 2(n-1) max(0, hop - alpha).
 * Auto (algorithm or protocol): the tuner (coll_tune) estimates each
 * candidate with these closed forms and picks the fastest (NVLS and
 * NVLSTree without their pipeline's fill, as NCCL's model), then lowers the
 * channels for small sizes as NCCL does, counting NCCL's compute channels,
 * two per fabsim channel (src/coll/nccl.c; docs/validation.md,
 * Collectives). */
typedef struct coll_protocol_params {
  uint32_t wire_num, wire_den;      /* wire bytes = ceil(data x num / den) */
  double launch_us;                 /* per call */
  double hop_nvlink_us, hop_net_us; /* per hop, end to end */
} coll_protocol_params;
/* The parameters of protocol p (LL, LL128, SIMPLE) for algorithm a (tree
 * has its own latencies; the rest use the ring's), latencies from lat
 * (a scenario's workload.collective.latency; NULL: NCCL's defaults, the
 * same as the scenario's defaults). */
coll_protocol_params coll_protocol_params_of(const cfg_coll_latency *lat, cfg_coll_algorithm a,
                                             cfg_coll_protocol p);

/* The tuner's choice for spec (algorithm and protocol may be auto): the
 * fastest (algorithm, protocol) by the closed forms above on the
 * topology's achievable rates, then channels lowered while the message is
 * under channels x threads x bytes-per-thread (NCCL's rule). *est_s: the
 * estimated time. O(1) after two routes. */
void coll_tune(const topo *t, const coll_spec *spec, cfg_coll_algorithm *algorithm,
               cfg_coll_protocol *protocol, uint32_t *channels, double *est_s);

/* Expand a collective into phases. O(transfers). Invalid combinations
 * (algorithm not available for op, hierarchical over nodes with different
 * rank counts) are SIM_EINVAL; the plan is then empty. */
int coll_plan_build(coll_plan *plan, const topo *t, const coll_spec *spec, sim_error *err);
void coll_plan_free(coll_plan *plan);
/* Run `from` in lock step with `into` (e.g. the data-parallel groups of
 * one collective): phase i of the result is both plans' phase i together.
 * The plans must have the same phases and repeats (SIM_EINVAL otherwise,
 * both left untouched); `from` is freed; into's op, bytes and nranks stay.
 * Phases' transfer arrays may be slices of one pool: never grow or free
 * them yourself, merge plans with this. O(transfers of both). */
int coll_plan_merge(coll_plan *into, coll_plan *from, sim_error *err);
/* Whether phase i is a slice of the plan's pool (phases that are slices of
 * one pool are windows sliding over it): true with *pool, *pool_n the pool
 * and *off the phase's offset in it (phases[i].x == *pool + *off). O(1). */
bool coll_phase_slice(const coll_plan *plan, size_t i, const be_xfer **pool, size_t *pool_n,
                      size_t *off);
/* Every transfer of the plan carries traffic class tclass (0..7; a
 * workload's class, fabsim/config.h cfg_workload.tclass): builders emit
 * class 0, the caller sets the workload's once the plan is built. O(transfers listed). */
void coll_plan_set_class(coll_plan *plan, uint8_t tclass);
/* The NICs of the nodes a plan crosses between that none of its transfers
 * uses (topo_xfer_nic at both ends of every transfer across nodes): *idle
 * of the *total NICs of those nodes (both 0 when no transfer leaves a
 * node). NCCL drives every NIC of a node (a channel a NIC); fewer channels
 * than NICs, or ranks that skip the GPUs of some NICs, leave some idle.
 * O(transfers listed + NICs). */
void coll_plan_idle_nics(const coll_plan *plan, const topo *t, uint32_t *idle, uint32_t *total);
/* Transfers in the plan, repetitions counted. */
uint64_t coll_plan_transfers(const coll_plan *plan);
/* Bytes the plan moves, repetitions counted. O(transfers listed). */
uint64_t coll_plan_bytes(const coll_plan *plan);

/* Mixture-of-experts token dispatch and combine with a node limit
 * (DeepSeek-V3: each token's top-k experts lie on at most M = 4 nodes).
 *
 * The expert-parallel group is m nodes of G ranks (whole node blocks of the
 * same size); the E routed experts are spread evenly, E/(mG) per GPU. With
 * router statistics (spec.routing, see coll_moe_routing below) the bytes
 * follow them; without, token routing is the balanced expectation, made
 * integral and deterministic (an upper bound on the nodes and GPUs a token
 * reaches):
 *   - each token goes to M' = min(M, m, top_k) distinct nodes (M = 0: no
 *     limit, M' = min(m, top_k), an upper bound on the m (1 - (1-1/m)^k)
 *     nodes uniform routing reaches on average) and to k_j = top_k/M'
 *     experts on node j of its M' (the first
 *     top_k mod M' nodes one more), on min(k_j, G) distinct GPUs there;
 *     D = sum_j min(k_j, G) GPUs per token;
 *   - a rank's T tokens make T M' token-node copies, spread evenly over the
 *     m nodes, its own included: rank (A, a) sends node A + o (mod m)
 *     floor(T M'/m) copies, plus one when (o + a) mod m < T M' mod m (at
 *     most T, so every token can reach exactly M' distinct nodes).
 * Dispatch, per rank (A, a) (node A, local index a), token bytes b = hidden
 * x elem_bytes:
 *   fabric: one copy per token and destination node, to the GPU on the same
 *     rail: (A, a) -> (B, a), B != A, the copies of node offset B - A;
 *   NVLink: the rail GPU (B, a) now holds T M' copies (from every node,
 *     its own included) = T D deliveries, spread evenly over the node's G
 *     GPUs: (B, a) -> (B, g), g != a, floor(T D / G) tokens, plus one when
 *     (g - a) mod G < T D mod G; the share of g = a stays.
 * Combine is the reverse: expert outputs to the rail GPU over NVLink (which
 * reduces them per token and node), then one copy per token and node back
 * across the fabric. With `chunks` > 1 the two hops pipeline: chunk i's
 * second hop runs with chunk i+1's first, C + 1 steps:
 *   t = t1 + (C-1) max(t1, t2) + t2 (ti: one chunk of hop i).
 * The plan reports op alltoall, algorithm node-limited, bytes = T b. */
typedef enum { COLL_MOE_DISPATCH, COLL_MOE_COMBINE } coll_moe_dir;

/* Router statistics: where the tokens of an expert-parallel group of m
 * nodes x G GPUs go, from a pool of P seeded router decisions (model in
 * src/coll/moe_router.c: top-k by Gumbel-perturbed popularity, node-limited
 * as DeepSeek-V3). Routing does not depend on the token's source, so the
 * pool's shares of a token are every rank's expectation:
 *   node_share[B]         P(the token reaches node B: some expert there);
 *   gpu_share[B G + g]    P(it reaches GPU g of node B);
 *   expert_share[B G + g] its expected experts on that GPU (the GPU's load).
 * Uniform popularity (skew 0) makes every node and GPU alike: each gets the
 * pool's mean, not its sampling noise.
 * With routing set, dispatch sends rank (A, a) -> (B, a), B != A,
 *   copies = floor(T node_share[B] + r / mG),  r = A G + a,
 * (by Hermite's identity the mG offsets sum to floor(mG T node_share[B]),
 * so the group's total is exact to within the G ranks of B itself); and
 * the rail GPU (B, a) forwards to (B, g), g != a,
 *   floor(m T gpu_share[B G + g] + (a G + g) / G^2)
 * (every node's tokens, its own included, reach its rail GPU there).
 * Hot experts (skew > 0) make some nodes' fabric links and GPUs' NVLink
 * ports carry more; imbalance = max/mean expert_share is the expert compute
 * of the busiest GPU against the mean. */
typedef struct coll_moe_router_spec {
  uint32_t nodes, per_node; /* m, G */
  uint32_t experts, top_k;  /* E (a multiple of m G), k */
  uint32_t node_limit;      /* M; 0 or >= m: no limit */
  double skew;              /* popularity (1 + rank)^-skew; 0: uniform */
  uint64_t seed;
} coll_moe_router_spec;

typedef struct coll_moe_routing {
  uint32_t nodes, per_node, tokens; /* m, G, P */
  double *node_share, *gpu_share, *expert_share;
  double nodes_per_token, gpus_per_token; /* pool means */
  double imbalance;                       /* max / mean expert load per GPU */
} coll_moe_routing;

/* Draw the pool. SIM_EINVAL with a message for experts not a multiple of
 * m G, top_k outside 1..(experts a token may reach), or a negative skew.
 * O(P E k). Free with coll_moe_routing_free. */
int coll_moe_routing_sample(coll_moe_routing *r, const coll_moe_router_spec *spec, sim_error *err);
void coll_moe_routing_free(coll_moe_routing *r);

typedef struct coll_moe_spec {
  coll_moe_dir dir;
  const uint32_t *ranks; /* the expert-parallel group: GPU ids, ascending */
  uint32_t nranks;
  uint64_t tokens;                 /* T: tokens per rank */
  uint64_t hidden;                 /* elements per token */
  uint32_t elem_bytes;             /* bytes per element (e.g. fp8 dispatch 1, bf16 combine 2) */
  uint32_t experts;                /* E: routed experts over the group, a multiple of nranks */
  uint32_t top_k;                  /* experts per token, <= E */
  uint32_t node_limit;             /* M: nodes a token's experts may span; 0 = no limit */
  uint32_t chunks;                 /* pipeline chunks; 0 or 1: no pipelining */
  uint32_t qps;                    /* queue pairs per connection (0 or 1: one) */
  const coll_moe_routing *routing; /* router statistics of this group's shape;
                                      NULL: the balanced expectation above */
} coll_moe_spec;

/* What the routing model gives, for workloads and reports. */
typedef struct coll_moe_info {
  uint32_t nodes, per_node; /* m, G */
  uint32_t node_span;       /* M' */
  uint32_t gpus_per_token;  /* D */
  uint64_t token_bytes;     /* b */
  uint64_t fabric_bytes;    /* sent across the fabric, whole group */
  uint64_t nvlink_bytes;    /* moved over NVLink, whole group */
} coll_moe_info;

/* Build a dispatch or combine plan. O(n (m + G)) transfers. SIM_EINVAL with
 * a message for a group that is not whole equal node blocks, experts not a
 * multiple of the ranks, top_k outside 1..E, or nodes holding fewer experts
 * than a token needs there. info may be NULL. */
int coll_moe_build(coll_plan *plan, const topo *t, const coll_moe_spec *spec, coll_moe_info *info,
                   sim_error *err);

/* The end-to-end latency of a point-to-point transfer (workload.kind:
 * traffic), as the sum of its parts: what starts it, its routed path (the
 * backend charges it: PCIe, NIC, links, switches or the NVSwitch, and the
 * bytes at the path's rate) and what completes it:
 *   inside a node (NVLink):  nvlink_start + path
 *   across nodes (the NIC):  nic_start + path + nic_finish
 * nvlink_start is the host's launch of the copy (cluster.scale_up.start);
 * nic_start the RDMA write's doorbell and the NIC's DMA reads of the work
 * request and payload, nic_finish the receiver's poll seeing the data
 * (cluster.nic.start, .finish). Collectives are not charged these: NCCL's
 * launch and per-hop latencies (workload.collective.latency.*) already
 * hold a launch and each step's software (docs/validation.md, "Latency of
 * a transfer"). */
typedef struct coll_p2p {
  simtime_ps nvlink_start;
  simtime_ps nic_start, nic_finish;
} coll_p2p;
/* The parts of a scenario (cluster.scale_up.start, cluster.nic.start, .finish). */
coll_p2p coll_p2p_of(const cfg_scenario *cfg);
/* What a transfer from src_gpu to dst_gpu waits before (*start) and after
 * (*finish) its routed path. O(1). */
void coll_p2p_parts(const topo *t, const coll_p2p *p, uint32_t src_gpu, uint32_t dst_gpu,
                    simtime_ps *start, simtime_ps *finish);

/* Synthetic traffic (workload.kind: traffic) over the GPUs of a topology:
 *   pair         GPU 0 -> the last GPU;
 *   incast       `senders` GPUs -> GPU 0, taken from other nodes first, on
 *                GPU 0's rail (same local index), so the fan-in crosses
 *                the fabric onto one NIC;
 *   permutation  each GPU -> a distinct other GPU (a seeded derangement);
 *   all-to-all   each GPU -> every other GPU.
 * Flows start together (one phase) or staggered (one phase per flow, flow i
 * at i x stagger). Each flow is split over `qps` queue pairs. With p2p set,
 * each phase waits the largest start of its transfers before them and the
 * largest finish after (coll_p2p_parts): exact for a phase whose transfers
 * are all of one kind (pair, incast across nodes); a phase mixing NVLink
 * and network transfers pays the larger of each, an upper bound. Staggered
 * flows each wait their own start; the plan ends the largest finish after
 * its last flow (coll_exec). */
typedef struct coll_traffic_spec {
  cfg_traffic_pattern pattern;
  uint64_t bytes;     /* per flow */
  uint32_t senders;   /* incast */
  simtime_ps stagger; /* 0: together */
  uint32_t qps;
  uint64_t seed;
  const uint32_t *gpus; /* the GPUs the pattern runs over, whole nodes in ascending order (a
                           job's); NULL: every GPU of t. Rank i of the pattern is gpus[i]. */
  uint32_t ngpus;
  const coll_p2p *p2p; /* NULL: the routed path only */
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
  be_backend *b;            /* private */
  const coll_plan *plan;    /* private */
  size_t next;              /* private */
  be_done_fn done;          /* private */
  void *ctx;                /* private */
  size_t running;           /* private: staggered phases still in flight */
  simtime_ps stagger_fixed; /* private: staggered plans: the largest fixed of a phase */
  simtime_ps start, end;    /* public after done */
  bool finished;            /* public */
} coll_exec;

/* Phases that are slices of the plan's pool go to b as slices
 * (be_submit_slice) and the pool is released (be_pool_release) when the
 * plan ends: the plan must stay unchanged until then, and a run abandoned
 * before its end must destroy b before another plan may reuse the pool's
 * memory on it. */
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
