/* fabsim scenario: schema, units, --set overrides and validation.
 *
 * A scenario is a YAML file (possibly empty, possibly absent) plus zero or more
 * `--set key=value` overrides applied after the file. Every key has a default.
 * Loading resolves everything into a plain struct of typed values: times in
 * picoseconds, rates in bits per second, sizes in bytes.
 *
 * Resolution order for every value: schema default -> preset (cluster.gpu,
 * fabric.transport) -> the file -> --set overrides. A key set explicitly in the
 * file or with --set is never replaced by a preset.
 *
 * Every rejected input yields SIM_ECONFIG and a message of the form
 *   "FILE:LINE:COL: KEY: what is wrong; what is allowed"
 * where FILE is the scenario path, or "--set" with LINE the 1-based index of
 * the --set argument and COL the column inside "key=value".
 */
#ifndef FABSIM_CONFIG_H
#define FABSIM_CONFIG_H

#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CFG_TOPO_FILE: fabric.file describes the fabric (src/topo/import.c); the
 * loaded scenario never keeps it: topo_load_file resolves it into the
 * family the file's graph is and the keys it gives (docs/fabric-import.md). */
typedef enum {
  CFG_TOPO_FAT_TREE,
  CFG_TOPO_MULTI_PLANE,
  CFG_TOPO_RAIL_OPTIMIZED,
  CFG_TOPO_FILE
} cfg_topology;
typedef enum { CFG_TRANSPORT_INFINIBAND, CFG_TRANSPORT_ROCE, CFG_TRANSPORT_ETHERNET } cfg_transport;
typedef enum {
  CFG_ROUTING_ECMP,
  CFG_ROUTING_ADAPTIVE,
  CFG_ROUTING_SPRAY,
  CFG_ROUTING_STATIC
} cfg_routing;
typedef enum { CFG_FIDELITY_ANALYTIC, CFG_FIDELITY_FLOW, CFG_FIDELITY_PACKET } cfg_fidelity;
/* Price presets of cost.*: list prices, or the model of DeepSeek-V3's Table 3. */
typedef enum { CFG_COST_LIST, CFG_COST_DEEPSEEK_V3 } cfg_cost_model;
/* Presets of reliability.rate.*: whose published failure rates (docs/reliability.md):
 * Llama 3's 16K-GPU run, or Meta's research clusters RSC-1 and RSC-2. */
typedef enum { CFG_RATES_LLAMA3_16K, CFG_RATES_RSC_1, CFG_RATES_RSC_2 } cfg_rel_rates;
/* storage.attach: the storage servers' NICs on the backend fabric's leaves,
 * or on a storage fabric of their own with the nodes' frontend NICs. */
typedef enum { CFG_STORAGE_BACKEND, CFG_STORAGE_SEPARATE } cfg_storage_attach;
/* workload.checkpoint.mode: the write runs beside the next steps, or the
 * job waits for it. */
typedef enum { CFG_CKPT_ASYNC, CFG_CKPT_SYNC } cfg_ckpt_mode;
/* Event engine of the packet fidelity: auto = parallel when started by an
 * MPI launcher, else sequential. */
typedef enum { CFG_ENGINE_AUTO, CFG_ENGINE_SEQUENTIAL, CFG_ENGINE_PARALLEL } cfg_engine;
typedef enum {
  CFG_GPU_H100,
  CFG_GPU_H800,
  CFG_GPU_A100,
  CFG_GPU_B200,
  CFG_GPU_H200,
  CFG_GPU_MI300X
} cfg_gpu;
typedef enum {
  CFG_WORKLOAD_COLLECTIVE,
  CFG_WORKLOAD_TRAFFIC,
  CFG_WORKLOAD_TRAINING,
  CFG_WORKLOAD_TRACE,    /* Chakra execution traces (fabsim/trace.h) */
  CFG_WORKLOAD_INFERENCE /* serving: requests over replicas (fabsim/infer.h) */
} cfg_workload_kind;

/* workload.inference.dispatch: which replica takes an arriving request. */
typedef enum { CFG_INF_ROUND_ROBIN, CFG_INF_LEAST_LOADED } cfg_inf_dispatch;
/* workload.trace.compute: a compute node's time */
typedef enum { CFG_TRACE_RECORDED, CFG_TRACE_ROOFLINE } cfg_trace_compute;
typedef enum {
  CFG_PRECISION_FP32,
  CFG_PRECISION_BF16,
  CFG_PRECISION_FP16,
  CFG_PRECISION_FP8
} cfg_precision;
typedef enum { CFG_OPTIMIZER_ADAM, CFG_OPTIMIZER_SGD } cfg_optimizer;
typedef enum { CFG_RECOMPUTE_NONE, CFG_RECOMPUTE_SELECTIVE, CFG_RECOMPUTE_FULL } cfg_recompute;
/* workload.fp8_recipe: how FP8 GEMM operands are scaled (Megatron-LM's --fp8-recipe names) */
typedef enum { CFG_FP8_DELAYED, CFG_FP8_TENSORWISE, CFG_FP8_BLOCKWISE } cfg_fp8_recipe;
/* workload.moe.grouped_gemm: how a GPU's local experts' GEMMs run */
typedef enum { CFG_GGEMM_MULTI_STREAM, CFG_GGEMM_GROUPED } cfg_grouped_gemm;
/* workload.recompute_method under full recomputation (Megatron-LM's --recompute-method) */
typedef enum { CFG_RECOMPUTE_UNIFORM, CFG_RECOMPUTE_BLOCK } cfg_recompute_method;
/* workload.recompute_modules: what selective recomputation recomputes (Megatron-LM's
 * --recompute-modules names); the list holds these values */
typedef enum {
  CFG_RCMOD_CORE_ATTN, /* the attention core (scores, softmax, attention over values) */
  CFG_RCMOD_LAYERNORM, /* both norms of a layer: their outputs are not kept */
  CFG_RCMOD_MLP,       /* a dense layer's feed-forward: only its input is kept */
  CFG_RCMOD_MOE_ACT,   /* the experts' activation function: its output is not kept */
  CFG_RCMOD_OP,        /* torchtitan's selective op policy: every second GEMM and all
                          element-wise operations rerun; alone in the list */
  CFG_RCMOD_COUNT
} cfg_recompute_module;
/* workload.attention: the attention kernel */
typedef enum { CFG_ATTN_FLASH, CFG_ATTN_UNFUSED } cfg_attention;
/* workload.grad_reduce: the dtype data-parallel gradient reductions carry
 * (auto: the gradients' own, workload.precision's) */
typedef enum { CFG_GRAD_REDUCE_AUTO, CFG_GRAD_REDUCE_BF16, CFG_GRAD_REDUCE_FP32 } cfg_grad_reduce;
/* workload.zero_impl: how ZeRO 3 holds gathered parameters and gradients
 * (flat: in the collectives' own buffers; per_param: PyTorch FSDP2's
 * per-parameter tensors, copied out of and into them) */
typedef enum { CFG_ZERO_FLAT, CFG_ZERO_PER_PARAM } cfg_zero_impl;
/* Rank placement onto GPUs, innermost (consecutive GPUs) dimension first. */
typedef enum {
  CFG_ORDER_TP_PP_DP,
  CFG_ORDER_TP_DP_PP,
  CFG_ORDER_PP_TP_DP,
  CFG_ORDER_PP_DP_TP,
  CFG_ORDER_DP_TP_PP,
  CFG_ORDER_DP_PP_TP
} cfg_rank_order;
typedef enum { CFG_COMM_AUTO, CFG_COMM_LIVE, CFG_COMM_REUSE, CFG_COMM_SYMMETRIC } cfg_comm_model;
/* workload.pipeline.schedule */
typedef enum { CFG_SCHED_1F1B, CFG_SCHED_INTERLEAVED, CFG_SCHED_DUALPIPE } cfg_schedule;
/* workload.model.routing */
typedef enum { CFG_MOE_SAMPLED, CFG_MOE_BALANCED } cfg_moe_routing;
/* A scenario list of integers (e.g. [784, 128, 10]); v is owned by the scenario. */
typedef struct cfg_u64_list {
  uint64_t *v;
  uint32_t n;
} cfg_u64_list;
typedef enum {
  CFG_TRAFFIC_PAIR,
  CFG_TRAFFIC_INCAST,
  CFG_TRAFFIC_PERMUTATION,
  CFG_TRAFFIC_ALL_TO_ALL
} cfg_traffic_pattern;
typedef enum { CFG_START_TOGETHER, CFG_START_STAGGERED } cfg_traffic_start;
typedef enum { CFG_CC_DCQCN, CFG_CC_NONE } cfg_roce_cc;
typedef enum { CFG_RECOVERY_SELECTIVE, CFG_RECOVERY_GO_BACK_N } cfg_recovery;
typedef enum { CFG_SPRAY_RANDOM, CFG_SPRAY_ROUND_ROBIN } cfg_spray_order;
typedef enum { CFG_COOLING_AIR, CFG_COOLING_LIQUID } cfg_cooling;
typedef enum {
  CFG_COLL_ALLREDUCE,
  CFG_COLL_REDUCESCATTER,
  CFG_COLL_ALLGATHER,
  CFG_COLL_BROADCAST,
  CFG_COLL_ALLTOALL
} cfg_coll_op;
typedef enum {
  CFG_ALGO_RING,
  CFG_ALGO_PAIRWISE,
  CFG_ALGO_TREE,
  CFG_ALGO_HALVING_DOUBLING,
  CFG_ALGO_HIERARCHICAL,
  CFG_ALGO_PXN,
  CFG_ALGO_NVLS,         /* NVLink SHARP: reduction in the NVSwitch (one node) */
  CFG_ALGO_COLLNET,      /* InfiniBand SHARP: reduction in the fabric's switches */
  CFG_ALGO_NVLSTREE,     /* NVLink SHARP in each node, a tree of the nodes (no SHARP) */
  CFG_ALGO_NODE_LIMITED, /* MoE dispatch/combine (coll_moe_build), not a workload.collective */
  CFG_ALGO_AUTO          /* the tuner picks (coll_plan_build) */
} cfg_coll_algorithm;
/* Collective protocols as NCCL runs them: none = ideal transfers (no
 * protocol bytes, latency or launch overhead); auto = the tuner picks. */
/* One protocol's latencies (workload.collective.latency.<protocol>.*): the
 * per-call launch overhead and the per-hop latency inside a node (NVLink)
 * and across nodes (network), for the ring and the other algorithms, and
 * the tree's own (NCCL keeps a row per algorithm). */
typedef struct cfg_proto_latency {
  simtime_ps launch, nvlink_hop, network_hop;
  simtime_ps tree_launch, tree_nvlink_hop, tree_network_hop;
} cfg_proto_latency;
/* An in-switch algorithm's latencies (workload.collective.latency.<algo>.*):
 * NCCL's hardware latency of its NVLink hop and of its network hop (its
 * base latency is 0; src/coll/tune.c, switch_latency_us, says how each
 * algorithm adds them up). */
typedef struct cfg_switch_latency {
  simtime_ps nvlink_hop, network_hop;
} cfg_switch_latency;
typedef struct cfg_coll_latency {
  cfg_proto_latency ll, ll128, simple;
  cfg_switch_latency nvls, nvlstree, collnet;
} cfg_coll_latency;
/* Per-algorithm factors on the rate an algorithm's transfers achieve
 * (workload.collective.bandwidth.*, (0, 1], default 1): its transfers take
 * 1/factor as long (src/coll, coll__bw_factor); fabsim calibrate fits them. */
typedef struct cfg_coll_bandwidth {
  double ring, tree, nvls, nvlstree, collnet;
} cfg_coll_bandwidth;
typedef enum {
  CFG_PROTO_NONE,
  CFG_PROTO_AUTO,
  CFG_PROTO_LL,
  CFG_PROTO_LL128,
  CFG_PROTO_SIMPLE
} cfg_coll_protocol;

/* faults: a list in the scenario, each entry {at, kind, target, ...}. Parsed
 * and range-checked by cfg_load; names are resolved against the topology by
 * flt_resolve (fabsim/fault.h). */
typedef enum {
  CFG_FAULT_LINK_DOWN,
  CFG_FAULT_LINK_UP,
  CFG_FAULT_LINK_FLAP,
  CFG_FAULT_LINK_DEGRADED,
  CFG_FAULT_SWITCH_DOWN,
  CFG_FAULT_SWITCH_UP,
  CFG_FAULT_NIC_DOWN, /* a NIC port (its link to the leaf) */
  CFG_FAULT_NIC_UP,
  CFG_FAULT_GPU_SLOWDOWN,
  CFG_FAULT_GPU_FAIL,
  CFG_FAULT_NODE_FAIL,
  CFG_FAULT_SDC /* silent data corruption on a GPU */
} cfg_fault_kind;
typedef struct cfg_fault {
  simtime_ps at;
  cfg_fault_kind kind;
  char *target;        /* element name as `fabsim topo` prints it; owned by the scenario */
  double factor;       /* link-degraded: fraction of the rate left, (0, 1];
                          gpu-slowdown: speed factor, (0, 1] */
  double ber;          /* link-degraded: bit error rate, [0, 1) */
  simtime_ps duration; /* 0: until the run ends (or an explicit -up entry);
                          flap: time down in each cycle */
  simtime_ps period;   /* link-flap: cycle length (> duration) */
  uint32_t count;      /* link-flap: cycles */
  uint32_t index;      /* position in the list: errors name faults[index].key */
} cfg_fault;
typedef struct cfg_fault_list {
  cfg_fault *v; /* owned by the scenario */
  uint32_t n;
} cfg_fault_list;

const char *cfg_fault_kind_name(cfg_fault_kind k);
/* Link, switch and NIC kinds (the backend's business); the rest are GPU kinds. */
bool cfg_fault_is_network(cfg_fault_kind k);

/* fabric.classes: the 8 traffic classes as the switches schedule them
 * (issue 16; docs/shared-fabric.md, "Traffic classes"). The scenario lists
 * up to 8 entries {id, name, priority, weight, lossless, ecn: {kmin, kmax,
 * pmax}, buffer}; cfg_load resolves all 8, listed or not, so that a
 * scenario without the table runs as before: classes 7 and 6 strict
 * priority (levels 2 and 1, 7 first), 0..5 at level 0 with weight 1. */
enum { CFG_CLASSES = 8 };
typedef struct cfg_tclass {
  char *name;                  /* owned by the scenario, unique; "tc<id>" unless named */
  uint32_t priority;           /* strict priority level 0..7: a higher level is served first */
  uint32_t weight;             /* deficit-weighted round robin weight within its level, 1..1000 */
  bool lossless;               /* PFC (RoCE, Ethernet) or credits (InfiniBand); else tail drop */
  uint64_t ecn_kmin, ecn_kmax; /* bytes at a fabric.link_bandwidth port, as fabric.ecn.* */
  double ecn_pmax;
  double buffer; /* share of a switch's shared buffer its queues of the class may hold, (0, 1] */
  uint8_t given; /* fields the scenario set: 1 << CFG__CF_* (src/config) */
} cfg_tclass;
typedef struct cfg_class_table {
  cfg_tclass v[CFG_CLASSES];  /* by class id; every class resolved */
  uint8_t order[CFG_CLASSES]; /* ids of the listed classes, in list order */
  uint32_t n;                 /* classes listed in fabric.classes (0: the defaults) */
} cfg_class_table;
/* The class a scenario names as `text` (a class id 0..7, or a name of
 * fabric.classes, default names tc0 .. tc7): SIM_OK and *id, or
 * SIM_ECONFIG with a message saying what is allowed. */
int cfg_class_find(const cfg_class_table *t, const char *text, uint8_t *id, char *msg, size_t cap);

/* workload.*: what the run simulates; also each job's `workload:` (jobs:). */
typedef struct cfg_workload {
  cfg_workload_kind kind;
  struct {
    cfg_coll_op op;
    cfg_coll_algorithm algorithm;
    uint64_t size;     /* bytes: the buffer size as nccl-tests counts it */
    uint32_t ranks;    /* 0 = every GPU */
    uint32_t channels; /* parallel rings; 0 = one per NIC of a node */
    uint64_t chunk;    /* bytes: ring broadcast pipeline chunk */
    cfg_coll_protocol protocol;
    cfg_coll_latency latency;     /* NCCL's tuning model by default; fabsim calibrate fits them */
    cfg_coll_bandwidth bandwidth; /* 1 by default; fabsim calibrate fits them */
    bool nvls;                    /* NVLink SHARP allowed where the NVSwitch has it */
  } collective;
  struct {
    cfg_traffic_pattern pattern;
    uint64_t size;    /* bytes per flow */
    uint32_t senders; /* incast fan-in */
    cfg_traffic_start start;
    simtime_ps stagger;
  } traffic;
  uint32_t qps_per_connection;
  struct {         /* workload.kind training: the model */
    double params; /* 0: counted from the shape */
    uint32_t layers, hidden, heads, seq_len, vocab;
    uint32_t kv_heads;       /* grouped-query attention: key/value heads; 0: heads */
    uint32_t head_dim;       /* width of one attention head; 0: hidden / heads */
    uint32_t ffn_hidden;     /* 0: 4 x hidden */
    bool gated_ffn;          /* three feed-forward matrices (SwiGLU) */
    cfg_u64_list mlp_layers; /* non-empty: a plain MLP of these widths */
    uint32_t experts, top_k, shared_experts;
    uint32_t expert_hidden;  /* 0: ffn_hidden */
    uint32_t dense_layers;   /* leading dense layers of an MoE model */
    uint32_t node_limit;     /* MoE: nodes a token's experts may span; 0 = any */
    cfg_moe_routing routing; /* MoE: token routing model */
    double expert_skew;      /* MoE: Zipf exponent of expert popularity */
    bool dropout;            /* dropout after attention, the projections and the MLP */
  } model;
  struct {
    uint32_t dp; /* 0: GPUs / (tp x pp) */
    uint32_t tp, pp, ep, zero;
    bool sequence_parallel;
    cfg_rank_order order;
    cfg_coll_algorithm dp_algorithm;
    uint32_t virtual_stages; /* interleaved 1F1B: model chunks per GPU */
  } parallel;
  struct {
    cfg_schedule schedule;
    uint32_t first_stage_layers; /* layers of pipeline stage 0; 0: an even split */
    uint32_t last_stage_layers;  /* layers of stage pp - 1; 0: an even split */
  } pipeline;
  struct {
    bool tp;            /* tensor-parallel collectives overlapped with GEMMs */
    bool pxn;           /* pxn all-to-all: NVLink forwarding pipelined with the fabric */
    uint32_t ep_chunks; /* MoE dispatch/combine: chunks pipelining the two hops */
    uint32_t ep_sms;    /* SMs an expert-parallel dispatch/combine kernel holds */
    bool sm_offload;    /* communication takes no SMs */
  } overlap;
  cfg_precision precision;
  cfg_optimizer optimizer;
  uint32_t micro_batch;  /* sequences */
  uint32_t global_batch; /* sequences per step; 0: derived */
  cfg_recompute recompute;
  cfg_u64_list recompute_modules; /* cfg_recompute_module values (selective) */
  cfg_recompute_method recompute_method;
  uint32_t recompute_layers; /* full: layers per checkpointed group (uniform), or
                                checkpointed layers per chunk (block) */
  cfg_attention attention;
  double compute_efficiency; /* 0: the kernel model; else every GEMM at peak x it, (0, 1] */
  cfg_fp8_recipe fp8_recipe; /* workload.precision fp8: scaling, casts and GEMM rate */
  bool cuda_graphs;          /* kernels replayed as CUDA graphs: the shorter launch gap */
  double host_op_time;       /* s: host time to issue one kernel (framework eager mode) */
  struct {                   /* workload.moe.*: how MoE layers run (kernel side) */
    cfg_grouped_gemm grouped_gemm;
    bool host_sync; /* dropless dispatch waits for the token counts each MoE forward */
  } moe;
  uint64_t bucket_size; /* bytes of gradients per reduction bucket */
  bool grad_overlap;
  cfg_grad_reduce grad_reduce; /* dtype of data-parallel gradient reductions */
  cfg_zero_impl zero_impl;     /* ZeRO 3: flat buffers or FSDP2's per-parameter copies */
  cfg_comm_model comm_model;
  uint32_t steps;   /* training steps fabsim run simulates */
  struct {          /* workload.checkpoint.*: writes to storage.* servers */
    uint32_t every; /* steps between checkpoints; 0: none */
    uint64_t size;  /* bytes of one checkpoint; 0: from the model (weights + optimizer) */
    cfg_ckpt_mode mode;
  } checkpoint;
  bool data_loading; /* read each step's tokens from the storage servers */
  struct {           /* workload.kind trace: Chakra ET files */
    char *path;      /* owned; "%d" -> the rank; "none" */
    uint32_t ranks;  /* 0 = every GPU */
    char *classes;   /* owned; "FIRST-LAST:FILE,...", or "none" */
    cfg_trace_compute compute;
  } trace;
  struct {                     /* workload.kind inference (docs/inference.md) */
    uint32_t tp;               /* tensor-parallel GPUs per replica */
    uint32_t replicas;         /* copies of the model, each on tp GPUs */
    uint32_t max_batch;        /* sequences in one iteration at most */
    uint32_t max_tokens;       /* tokens in one iteration at most */
    bool chunk;                /* chunked prefill: a prompt split over iterations */
    uint32_t block;            /* tokens per KV-cache block (paging) */
    double memory_utilization; /* share of HBM the server may use */
    uint64_t kv_reserve;       /* bytes per GPU kept from the KV cache (activations) */
    uint32_t kv_latent;        /* MLA: cached elements per token and layer; 0: K and V */
    uint32_t kv_bytes;         /* bytes per cached element */
    double rate;               /* requests/s, Poisson */
    char *trace;               /* owned: a Vidur request trace (CSV), or "none" */
    uint32_t requests;         /* requests to simulate; 0: by duration */
    simtime_ps duration;       /* arrivals in [0, duration) when requests is 0 */
    uint32_t prompt_tokens;    /* Poisson stream: tokens of each prompt */
    uint32_t output_tokens;    /* Poisson stream: tokens each request generates */
    cfg_inf_dispatch dispatch; /* replica of an arriving request */
    simtime_ps slo_ttft;       /* targets: time to first token */
    simtime_ps slo_tpot;       /* time per output token after the first */
  } inference;
  char *traffic_class; /* owned: a class id or a name of fabric.classes ("0" by default) */
  uint8_t tclass;      /* resolved: the class every transfer of the workload carries */
} cfg_workload;

/* jobs: several workloads sharing the fabric (issue 16; docs/shared-fabric.md).
 * Each entry {name, gpus, placement, nodes, start, workload}; its workload
 * takes the keys of the top-level workload: (the same schema rows). */
typedef enum {
  CFG_PLACE_PACKED,
  CFG_PLACE_SPREAD,
  CFG_PLACE_RANDOM,
  CFG_PLACE_TOPOLOGY_AWARE,
  CFG_PLACE_EXPLICIT /* nodes: [..] */
} cfg_placement;     /* the order of PLC_POLICY_MAP (fabsim/place.h) */
typedef struct cfg_job {
  char *name; /* owned by the scenario, unique in the list */
  uint32_t gpus;
  cfg_placement placement;
  cfg_u64_list nodes; /* placement explicit: node indices in rank order */
  simtime_ps start;   /* the job's first transfer, from the run's start */
  cfg_workload workload;
  uint32_t index; /* position in the list: errors name jobs[index].key */
} cfg_job;
typedef struct cfg_job_list {
  cfg_job *v; /* owned by the scenario */
  uint32_t n;
} cfg_job_list;
const char *cfg_placement_name(cfg_placement p);

/* The resolved scenario. All fields public and read-only after cfg_load. */
typedef struct cfg_scenario {
  struct {
    uint32_t nodes; /* 0 = absent: the topology is built at full size */
    uint32_t gpus_per_node;
    cfg_gpu gpu;
    double gpu_flops;       /* dense BF16 FLOP/s */
    double gpu_flops_fp8;   /* dense FP8 FLOP/s */
    double gpu_flops_fp32;  /* dense TF32 FLOP/s (fp32 training) */
    uint64_t gpu_memory;    /* bytes of HBM */
    rate_bps hbm_bandwidth; /* bits/s */
    double hbm_efficiency;  /* achieved share of hbm_bandwidth, (0, 1] */
    uint32_t gpu_sms;       /* streaming multiprocessors (MI300X: compute units) */
    struct {
      rate_bps bandwidth; /* per GPU, per direction */
      simtime_ps latency; /* GPU to GPU through the scale-up switch */
      double efficiency;  /* achieved share of bandwidth, (0, 1] */
      simtime_ps start;   /* a point-to-point NVLink copy: its launch before the first byte */
    } scale_up;
    struct {
      rate_bps bandwidth;      /* per NIC port */
      double efficiency;       /* achieved share of bandwidth, (0, 1]: NCCL's collectives */
      double rdma_efficiency;  /* ... of a point-to-point RDMA write stream (workload.kind
                                  traffic), (0, 1] */
      uint32_t per_node;       /* default: gpus_per_node */
      simtime_ps latency;      /* NIC processing, per traversal */
      simtime_ps start;        /* a point-to-point RDMA write: doorbell and DMA reads first */
      simtime_ps finish;       /* ... and the receiver's detection of its data after */
      cfg_recovery recovery;   /* packet fidelity: loss and reordering recovery */
      simtime_ps rto;          /* retransmission timeout */
      uint32_t ack_every;      /* ACK coalescing: one per this many packets */
      simtime_ps cnp_interval; /* at most one CNP per queue pair per interval */
    } nic;
    struct {
      rate_bps bandwidth; /* GPU <-> NIC, per direction */
      simtime_ps latency;
      double efficiency; /* achieved share of bandwidth, (0, 1] */
    } pcie;
  } cluster;
  struct {
    cfg_topology topology;
    char *file;                /* owned; fabric.topology file: the graph; "none" */
    char *map_server;          /* owned; ibnetdiscover: regex, group 1 = a CA's server */
    uint32_t tiers;            /* 2 or 3 */
    uint32_t planes;           /* default 1; multi-plane: default nic.per_node */
    uint32_t switch_radix;     /* ports per switch, even */
    double oversubscription;   /* leaf down:up ratio, >= 1 */
    rate_bps link_bandwidth;   /* switch-to-switch links */
    double link_efficiency;    /* achieved share of link_bandwidth, (0, 1] */
    simtime_ps link_latency;   /* propagation per link */
    simtime_ps switch_latency; /* per switch traversal; default by transport */
    cfg_transport transport;
    cfg_routing routing;
    uint32_t mtu; /* payload bytes per packet */
    struct {
      uint64_t hash_seed;
      bool polarized; /* every switch hashes alike (no per-switch seed) */
    } ecmp;
    struct {
      simtime_ps flowlet_gap; /* adaptive routing per flowlet; 0 = per packet */
    } adaptive;
    struct {
      cfg_spray_order order;
    } spray;
    struct {           /* fabric.switch.* (packet fidelity) */
      uint64_t buffer; /* shared buffer per switch, bytes */
      bool cut_through;
    } sw;
    struct {
      uint64_t kmin, kmax; /* bytes, at a fabric.link_bandwidth port */
      double pmax;
    } ecn;
    struct {
      bool pfc;
      cfg_roce_cc cc;
    } roce;
    bool sharp; /* switches reduce in the network (SHARP / CollNet) */
    struct {
      uint64_t xoff;       /* bytes per ingress queue; 0 = dynamic threshold */
      uint64_t xon;        /* resume offset below the XOFF threshold */
      simtime_ps watchdog; /* a pause longer than this is a pause storm */
    } pfc;
    cfg_class_table classes; /* fabric.classes, resolved */
  } fabric;
  struct {
    cfg_cost_model model; /* selects the defaults of the prices below */
    double switch_usd;
    double transceiver_usd; /* per optical transceiver (two per optical link) */
    double nic_usd;
    double cable_usd;            /* per copper (DAC) cable */
    bool optical_endpoint_links; /* NIC-leaf links optical (else copper) */
  } cost;
  struct { /* storage.*: storage servers (0: none); docs/shared-fabric.md */
    uint32_t servers;
    cfg_storage_attach attach;
    rate_bps write_bandwidth, read_bandwidth; /* per server: its drives, sustained */
    struct {
      uint32_t per_server;
      rate_bps bandwidth;
    } nic;
    struct { /* separate: each node's NICs on the storage fabric */
      uint32_t per_node;
      rate_bps bandwidth;
    } frontend;
    struct { /* separate: a fat-tree of its own */
      uint32_t tiers, switch_radix;
      double oversubscription;
      rate_bps link_bandwidth;
    } fabric;
    double server_usd, server_w;
  } storage;
  struct { /* management.*: the out-of-band network, inventory and cost only */
    bool enabled;
    uint32_t switch_ports; /* access switch: ports toward devices */
    uint32_t uplinks;      /* access switch: ports toward the aggregation */
    uint32_t aggregation_radix;
    double switch_usd, aggregation_usd, cable_usd;
  } management;
  cfg_workload workload;
  struct {
    uint64_t seed;
    cfg_fidelity fidelity;
    cfg_engine engine;
    uint64_t memory_limit; /* bytes a run may use; 0: what the machine has available */
  } simulation;
  struct {
    char *dir;                  /* owned by the scenario */
    simtime_ps sample_interval; /* telemetry; 0 = auto */
    char *ports;                /* watched ports/NICs, comma-separated, or "none" */
    char *database;             /* SQLite file (relative: inside dir), or "none" */
    bool report;                /* write report.html */
    bool openmetrics;           /* write metrics.txt (OpenMetrics text) */
    uint32_t top_ports;         /* hottest ports listed */
    uint32_t max_rows;          /* timeseries rows at most (the interval widens to fit) */
    uint32_t max_events;        /* events kept in the outputs at most (then a marker) */
    bool flows;                 /* write flows.csv and the database's flows rows */
    uint32_t max_flows;         /* flow rows kept at most (the earliest; then a marker) */
  } output;
  struct { /* reliability.*: planning over a whole run (src/reliability) */
    double days;
    double node_failure_rate; /* per 1,000 node-days; 0 = the sum of `rate` */
    struct {
      uint64_t size;         /* bytes of one checkpoint */
      rate_bps bandwidth;    /* aggregate write bandwidth */
      simtime_ps write_time; /* 0 = size / bandwidth */
      char *interval;        /* "auto" or a duration; owned by the scenario */
    } checkpoint;
    simtime_ps restart_time;
    uint32_t spares;             /* hot spare nodes */
    simtime_ps repair_time;      /* a failed node is back in the spare pool after this */
    simtime_ps no_spare_delay;   /* extra wait for a node swap when no hot spare is free */
    uint32_t sdc_check_interval; /* replica checksums every this many steps; 0 = never */
    simtime_ps reconvergence;    /* faults: routing reconverges this long after a network
                                    fault (default by fabric.transport) */
    struct {
      uint32_t runs;
    } monte_carlo;
    cfg_rel_rates rates; /* selects the defaults of the rates below */
    struct {             /* interruptions per 1,000 node-days, by cause */
      double faulty_gpu, hbm, software, network, host, sram, gsp, nic, nccl, sdc, thermal,
          other_hardware, dependency;
    } rate;
  } reliability;
  struct { /* power.*: power and cooling (src/power) */
    double gpu_tdp_w, gpu_idle_w, node_w, nic_w, switch_port_w, transceiver_w;
    double pue, usd_per_kwh, utilization;
    simtime_ps step_time;
    bool timeseries; /* power over time from the GPUs' sampled states (off: no new output) */
    char *bands;     /* "none" or "LO-HI,LO-HI,..." in Hz, increasing; owned by the scenario */
    struct {
      uint32_t servers;
      cfg_cooling cooling;
      double cooling_kw;     /* 0 = by cooling: air 40 kW, liquid 120 kW */
      double cap_kw;         /* 0 = no power cap */
      char *cooling_failure; /* "none" or "RACK:KW"; owned by the scenario */
    } rack;
    struct {        /* power.mitigation.*: each read over the power series (docs/power.md) */
      double floor; /* GPU power floor, fraction of gpu_tdp_w; 0 = none */
      double ramp_up_w_per_s, ramp_down_w_per_s; /* per GPU; 0 = no limit */
      double pacing;          /* injected work while waiting, fraction of gpu_tdp_w; 0 = none */
      double facility_cap_kw; /* 0 = none */
      struct {
        double kwh, kw, efficiency; /* per rack; kwh 0 = none; round trip */
      } battery;
    } mitigation;
  } power;
  cfg_fault_list faults; /* faults inside the simulation (fabsim/fault.h) */
  cfg_job_list jobs;     /* several workloads on the fabric; n 0: the workload above */
} cfg_scenario;

/* True when the scenario uses traffic classes at all: a fabric.classes
 * table, or a workload or job on a class other than 0. Outputs then carry
 * per-class blocks (a scenario without them has the same outputs as before). */
bool cfg_classes_used(const cfg_scenario *s);

/* Where a key's value came from, for error messages raised after loading
 * (e.g. the topology finding that cluster.nodes does not fit). */
typedef struct cfg_loc {
  const char *file; /* scenario path, "--set", or "default" */
  uint32_t line, col;
} cfg_loc;

typedef struct cfg_doc cfg_doc; /* opaque: sources and key locations */

/* Load `path` (NULL: no file) and apply `nsets` "key=value" overrides.
 * On success returns SIM_OK, fills *out and stores a handle in *doc (free
 * with cfg_free). On failure returns SIM_ECONFIG with err->msg as described
 * above; *out and *doc are left empty and need no freeing. */
int cfg_load(cfg_scenario *out, cfg_doc **doc, const char *path, const char *const *sets, int nsets,
             sim_error *err);
/* Same, from a buffer (used by the fuzz target and tests); name labels errors. */
int cfg_load_buffer(cfg_scenario *out, cfg_doc **doc, const char *name, const char *yaml,
                    size_t len, const char *const *sets, int nsets, sim_error *err);
void cfg_free(cfg_scenario *s, cfg_doc *doc);

/* Location of a key's value (for keys never set: {"default", 0, 0}). */
cfg_loc cfg_where(const cfg_doc *doc, const char *key);
/* `path`, the value of `key` naming a file, resolved against the folder of
 * the scenario file that set it (as given when absolute, set by --set or
 * the default, or the scenario has no folder) into out. */
void cfg_path_at(char *out, size_t cap, const cfg_doc *doc, const char *key, const char *path);
/* Raise an error about a loaded key: "loc: key: message". Returns SIM_ECONFIG. */
/* Scope the workload.* keys to job `job` of the jobs list (-1: the
 * top-level workload again): cfg_fail_at then names and locates them as
 * jobs[job].workload.*, so the checks and builders of a workload report a
 * job's errors at the job's keys. A mutable setting of doc. */
void cfg_doc_scope_job(const cfg_doc *doc, int job);
int cfg_fail_at(const cfg_doc *doc, const char *key, sim_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The resolved scenario as canonical YAML-ish text, every key, for reports
 * and `fabsim run --dump-scenario`. Caller frees with sim_free. */
char *cfg_dump(const cfg_scenario *s);

/* Enum names as written in scenarios ("fat-tree", "infiniband", "H100", ...). */
const char *cfg_topology_name(cfg_topology t);
const char *cfg_transport_name(cfg_transport t);
const char *cfg_cost_model_name(cfg_cost_model m);
const char *cfg_rel_rates_name(cfg_rel_rates r);
const char *cfg_routing_name(cfg_routing r);
const char *cfg_fidelity_name(cfg_fidelity f);
const char *cfg_gpu_name(cfg_gpu g);
const char *cfg_coll_op_name(cfg_coll_op op);
const char *cfg_coll_algorithm_name(cfg_coll_algorithm a);
/* The one table of which collective algorithms each op offers (auto: every
 * op): the scenario's check of workload.collective.algorithm refuses the
 * rest, and coll_plan_build and the workload's data-parallel collectives
 * follow it (src/config/validate.c). */
bool cfg_coll_algorithm_offered(cfg_coll_op op, cfg_coll_algorithm a);
const char *cfg_coll_protocol_name(cfg_coll_protocol p);
const char *cfg_workload_kind_name(cfg_workload_kind k);
const char *cfg_inf_dispatch_name(cfg_inf_dispatch d);
const char *cfg_traffic_pattern_name(cfg_traffic_pattern p);
const char *cfg_roce_cc_name(cfg_roce_cc c);
const char *cfg_recovery_name(cfg_recovery r);
const char *cfg_precision_name(cfg_precision p);
const char *cfg_optimizer_name(cfg_optimizer o);
const char *cfg_recompute_name(cfg_recompute r);
const char *cfg_fp8_recipe_name(cfg_fp8_recipe r);
const char *cfg_recompute_method_name(cfg_recompute_method m);
const char *cfg_recompute_module_name(cfg_recompute_module m);
const char *cfg_attention_name(cfg_attention a);
const char *cfg_rank_order_name(cfg_rank_order o);
const char *cfg_comm_model_name(cfg_comm_model m);
const char *cfg_schedule_name(cfg_schedule s);
const char *cfg_moe_routing_name(cfg_moe_routing r);

/* Unit parsers, exposed for tests and the CLI. Return SIM_OK or SIM_ECONFIG
 * with a message naming the accepted units (no location prefix). */
int cfg_parse_bandwidth(const char *text, rate_bps *out, sim_error *err);
int cfg_parse_time(const char *text, simtime_ps *out, sim_error *err);
/* power.rack.cooling_failure of a resolved scenario: false for "none", else
 * the rack and the kW its cooling removes (the value was checked when the
 * scenario was loaded: a rack of the cluster, kW > 0). */
bool cfg_cooling_failure(const cfg_scenario *s, uint32_t *rack, double *kw);
/* power.bands of a resolved scenario (checked when it was loaded: each
 * 0 <= lo < hi, each band's lo >= the previous band's hi): up to max bands
 * into lo[] and hi[] (Hz); returns how many there are (0 for "none"). */
size_t cfg_power_bands(const cfg_scenario *s, double *lo, double *hi, size_t max);
int cfg_parse_size(const char *text, uint64_t *out, sim_error *err);

/* The schema reference in Markdown (docs/scenario.md is generated from it
 * and a test checks they match). Caller frees with sim_free. */
char *cfg_schema_markdown(void);

#ifdef __cplusplus
}
#endif
/* Memory a run needs, estimated from the scenario alone (src/config/memest.c):
 * bytes = 10 MiB + (per_gpu + per_rank) x gpus + per_link x links
 *         + per_transfer x transfers,
 * coefficients by fidelity
 * (measured peak RSS slopes). validate.c refuses a scenario whose estimate
 * exceeds simulation.memory_limit (0: cfg_memory_available()). */
typedef struct cfg_memory {
  uint64_t bytes;
  uint64_t gpus, links;       /* counted from the scenario (links: NICs x tiers) */
  uint64_t per_gpu, per_link; /* bytes, at the scenario's fidelity: the fabric's state */
  uint64_t per_rank;          /* bytes per GPU, the workload's (plan, a phase's slices) */
  uint64_t transfers;         /* most transfers of one phase (the workload's pattern) */
  uint64_t per_transfer;      /* bytes each (flow: its flow; packet: its queue pair); 0 analytic */
} cfg_memory;
void cfg_memory_estimate(const cfg_scenario *s, cfg_memory *m);
uint64_t cfg_memory_nics(const cfg_scenario *s); /* NICs the scenario builds */
/* MemAvailable of /proc/meminfo, else sysconf's available pages; UINT64_MAX if unknown. */
uint64_t cfg_memory_available(void);

#endif
