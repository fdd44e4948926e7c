/* The schema: one row per key drives parsing, defaults, presets, --set,
 * validation of single values, cfg_dump and the Markdown reference.
 *
 * Rows are ordered so that every section's keys are contiguous; cfg_dump
 * relies on that to write each section header once.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_internal.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- enum names (indexed by the C enum value) ---------------------------------- */

static const char *const topology_names[] = {"fat-tree", "multi-plane", "rail-optimized", "file"};
static const char *const transport_names[] = {"infiniband", "roce", "ethernet"};
static const char *const routing_names[] = {"ecmp", "adaptive", "spray", "static"};
static const char *const fidelity_names[] = {"analytic", "flow", "packet"};
static const char *const engine_names[] = {"auto", "sequential", "parallel"};
static const char *const gpu_names[] = {"H100", "H800", "A100", "B200", "H200", "MI300X"};
static const char *const workload_names[] = {"collective", "traffic", "training", "trace",
                                             "inference"};
static const char *const inf_dispatch_names[] = {"round-robin", "least-loaded"};
_Static_assert(sizeof(cfg_inf_dispatch) == sizeof(int), "enum fields are stored as int");
static const char *const trace_compute_names[] = {"recorded", "roofline"};
_Static_assert(sizeof(cfg_trace_compute) == sizeof(int), "enum fields are stored as int");
static const char *const precision_names[] = {"fp32", "bf16", "fp16", "fp8"};
static const char *const optimizer_names[] = {"adam", "sgd"};
static const char *const recompute_names[] = {"none", "selective", "full"};
static const char *const fp8_recipe_names[] = {"delayed", "tensorwise", "blockwise"};
_Static_assert(sizeof(cfg_fp8_recipe) == sizeof(int), "enum fields are stored as int");
_Static_assert(NELEM(fp8_recipe_names) == CFG_FP8_BLOCKWISE + 1, "one name per FP8 recipe");
static const char *const grouped_gemm_names[] = {"multi_stream", "grouped"};
_Static_assert(sizeof(cfg_grouped_gemm) == sizeof(int), "enum fields are stored as int");
_Static_assert(NELEM(grouped_gemm_names) == CFG_GGEMM_GROUPED + 1, "one name per kind");
static const char *const recompute_method_names[] = {"uniform", "block"};
static const char *const recompute_module_names[] = {"core_attn", "layernorm", "mlp", "moe_act",
                                                     "op"};
static const char *const attention_names[] = {"flash", "unfused"};
static const char *const grad_reduce_names[] = {"auto", "bf16", "fp32"};
static const char *const zero_impl_names[] = {"flat", "per_param"};
_Static_assert(sizeof(cfg_grad_reduce) == sizeof(int) && sizeof(cfg_zero_impl) == sizeof(int),
               "enum fields are stored as int");
_Static_assert(NELEM(grad_reduce_names) == CFG_GRAD_REDUCE_FP32 + 1 &&
                   NELEM(zero_impl_names) == CFG_ZERO_PER_PARAM + 1,
               "one name per value");
_Static_assert(sizeof(cfg_recompute_method) == sizeof(int) && sizeof(cfg_attention) == sizeof(int),
               "enum fields are stored as int");
_Static_assert(NELEM(recompute_module_names) == CFG_RCMOD_COUNT, "one name per module");
static const char *const rank_order_names[] = {"tp-pp-dp", "tp-dp-pp", "pp-tp-dp",
                                               "pp-dp-tp", "dp-tp-pp", "dp-pp-tp"};
static const char *const comm_model_names[] = {"auto", "live", "reuse", "symmetric"};
static const char *const schedule_names[] = {"1f1b", "interleaved", "dualpipe"};
_Static_assert(sizeof(cfg_schedule) == sizeof(int), "enum fields are stored as int");
_Static_assert(NELEM(schedule_names) == CFG_SCHED_DUALPIPE + 1, "one name per schedule");
static const char *const moe_routing_names[] = {"sampled", "balanced"};
_Static_assert(sizeof(cfg_moe_routing) == sizeof(int), "enum fields are stored as int");
_Static_assert(NELEM(moe_routing_names) == CFG_MOE_BALANCED + 1, "one name per routing model");
_Static_assert(sizeof(cfg_precision) == sizeof(int) && sizeof(cfg_optimizer) == sizeof(int) &&
                   sizeof(cfg_recompute) == sizeof(int) && sizeof(cfg_rank_order) == sizeof(int) &&
                   sizeof(cfg_comm_model) == sizeof(int),
               "training enum fields are stored as int");
_Static_assert(NELEM(rank_order_names) == CFG_ORDER_DP_PP_TP + 1, "one name per rank order");
_Static_assert(NELEM(precision_names) == CFG_PRECISION_FP8 + 1, "one name per precision");
static const char *const traffic_pattern_names[] = {"pair", "incast", "permutation", "all-to-all"};
static const char *const traffic_start_names[] = {"together", "staggered"};
static const char *const coll_op_names[] = {"allreduce", "reducescatter", "allgather", "broadcast",
                                            "alltoall"};
static const char *const roce_cc_names[] = {"dcqcn", "none"};
static const char *const recovery_names[] = {"selective", "go-back-n"};
static const char *const spray_order_names[] = {"random", "round-robin"};
static const char *const cost_model_names[] = {"list", "deepseek-v3"};
static const char *const rel_rates_names[] = {"llama3-16k", "rsc-1", "rsc-2"};
_Static_assert(sizeof(cfg_rel_rates) == sizeof(int), "enum fields are stored as int");
_Static_assert(NELEM(rel_rates_names) == CFG_RATES_RSC_2 + 1, "one name per rates preset");
static const char *const storage_attach_names[] = {"backend", "separate"};
static const char *const ckpt_mode_names[] = {"async", "sync"};
_Static_assert(sizeof(cfg_storage_attach) == sizeof(int) && sizeof(cfg_ckpt_mode) == sizeof(int),
               "enum fields are stored as int");
_Static_assert(sizeof(cfg_roce_cc) == sizeof(int) && sizeof(cfg_recovery) == sizeof(int) &&
                   sizeof(cfg_spray_order) == sizeof(int),
               "enum fields are stored as int");
static const char *const coll_algorithm_names[] = {
    "ring", "pairwise", "tree",     "halving-doubling", "hierarchical", "pxn",
    "nvls", "collnet",  "nvlstree", "node-limited",     "auto"};
static const char *const coll_protocol_names[] = {"none", "auto", "ll", "ll128", "simple"};
_Static_assert(sizeof(cfg_coll_protocol) == sizeof(int), "enum fields are stored as int");
_Static_assert(NELEM(coll_protocol_names) == CFG_PROTO_SIMPLE + 1, "one name per protocol");

_Static_assert(sizeof(cfg_topology) == sizeof(int) && sizeof(cfg_transport) == sizeof(int) &&
                   sizeof(cfg_routing) == sizeof(int) && sizeof(cfg_fidelity) == sizeof(int) &&
                   sizeof(cfg_gpu) == sizeof(int) && sizeof(cfg_workload_kind) == sizeof(int) &&
                   sizeof(cfg_coll_op) == sizeof(int) &&
                   sizeof(cfg_coll_algorithm) == sizeof(int) &&
                   sizeof(cfg_traffic_pattern) == sizeof(int) &&
                   sizeof(cfg_traffic_start) == sizeof(int),
               "enum fields are stored as int");
_Static_assert(NELEM(gpu_names) == CFG_GPU_MI300X + 1, "one name per cfg_gpu");
_Static_assert(NELEM(transport_names) == CFG_TRANSPORT_ETHERNET + 1, "one name per transport");
_Static_assert(NELEM(coll_op_names) == CFG_COLL_ALLTOALL + 1, "one name per collective");
_Static_assert(NELEM(coll_algorithm_names) == CFG_ALGO_AUTO + 1, "one name per algorithm");
_Static_assert(NELEM(workload_names) == CFG_WORKLOAD_INFERENCE + 1, "one name per workload kind");
_Static_assert(NELEM(inf_dispatch_names) == CFG_INF_LEAST_LOADED + 1, "one name per dispatch");
_Static_assert(NELEM(traffic_pattern_names) == CFG_TRAFFIC_ALL_TO_ALL + 1, "one name per pattern");

static const char *name_of(const char *const *names, size_t n, int v) {
  return v >= 0 && (size_t)v < n ? names[v] : "(invalid)";
}

const char *cfg_topology_name(cfg_topology t) {
  return name_of(topology_names, NELEM(topology_names), (int)t);
}
const char *cfg_transport_name(cfg_transport t) {
  return name_of(transport_names, NELEM(transport_names), (int)t);
}
const char *cfg_routing_name(cfg_routing r) {
  return name_of(routing_names, NELEM(routing_names), (int)r);
}
const char *cfg_fidelity_name(cfg_fidelity f) {
  return name_of(fidelity_names, NELEM(fidelity_names), (int)f);
}
const char *cfg_cost_model_name(cfg_cost_model m) {
  return name_of(cost_model_names, NELEM(cost_model_names), (int)m);
}
const char *cfg_rel_rates_name(cfg_rel_rates r) {
  return name_of(rel_rates_names, NELEM(rel_rates_names), (int)r);
}
const char *cfg_gpu_name(cfg_gpu g) { return name_of(gpu_names, NELEM(gpu_names), (int)g); }
const char *cfg_coll_op_name(cfg_coll_op op) {
  return name_of(coll_op_names, NELEM(coll_op_names), (int)op);
}
const char *cfg_workload_kind_name(cfg_workload_kind k) {
  return name_of(workload_names, NELEM(workload_names), (int)k);
}
const char *cfg_inf_dispatch_name(cfg_inf_dispatch d) {
  return name_of(inf_dispatch_names, NELEM(inf_dispatch_names), (int)d);
}
const char *cfg_traffic_pattern_name(cfg_traffic_pattern p) {
  return name_of(traffic_pattern_names, NELEM(traffic_pattern_names), (int)p);
}
const char *cfg_roce_cc_name(cfg_roce_cc c) {
  return name_of(roce_cc_names, NELEM(roce_cc_names), (int)c);
}
const char *cfg_recovery_name(cfg_recovery r) {
  return name_of(recovery_names, NELEM(recovery_names), (int)r);
}
const char *cfg_coll_algorithm_name(cfg_coll_algorithm a) {
  return name_of(coll_algorithm_names, NELEM(coll_algorithm_names), (int)a);
}
const char *cfg_coll_protocol_name(cfg_coll_protocol p) {
  return name_of(coll_protocol_names, NELEM(coll_protocol_names), (int)p);
}
const char *cfg_precision_name(cfg_precision p) {
  return name_of(precision_names, NELEM(precision_names), (int)p);
}
const char *cfg_optimizer_name(cfg_optimizer o) {
  return name_of(optimizer_names, NELEM(optimizer_names), (int)o);
}
const char *cfg_recompute_name(cfg_recompute r) {
  return name_of(recompute_names, NELEM(recompute_names), (int)r);
}
const char *cfg_fp8_recipe_name(cfg_fp8_recipe r) {
  return name_of(fp8_recipe_names, NELEM(fp8_recipe_names), (int)r);
}
const char *cfg_recompute_method_name(cfg_recompute_method m) {
  return name_of(recompute_method_names, NELEM(recompute_method_names), (int)m);
}
const char *cfg_recompute_module_name(cfg_recompute_module m) {
  return name_of(recompute_module_names, NELEM(recompute_module_names), (int)m);
}
const char *cfg_attention_name(cfg_attention a) {
  return name_of(attention_names, NELEM(attention_names), (int)a);
}
const char *cfg_rank_order_name(cfg_rank_order o) {
  return name_of(rank_order_names, NELEM(rank_order_names), (int)o);
}
const char *cfg_comm_model_name(cfg_comm_model m) {
  return name_of(comm_model_names, NELEM(comm_model_names), (int)m);
}
const char *cfg_schedule_name(cfg_schedule s) {
  return name_of(schedule_names, NELEM(schedule_names), (int)s);
}
const char *cfg_moe_routing_name(cfg_moe_routing r) {
  return name_of(moe_routing_names, NELEM(moe_routing_names), (int)r);
}

/* ---- presets ---------------------------------------------------------------------- */

/* Per-GPU figures (MODEL-INPUTS.md, vendor datasheets; docs/validation.md, "Compute
 * (roofline)"), indexed by cfg_gpu: H100, H800, A100, B200, H200, MI300X. Bandwidths per
 * direction. FLOP/s are dense (no sparsity): BF16, FP8 and TF32 tensor-core peaks. A100 has no
 * FP8 tensor cores: FP8 operands run at its BF16 rate. MI300X: AMD Instinct MI300X datasheet
 * (1307.4 TFLOP/s BF16, 2614.9 FP8, 653.7 TF32, 192 GB HBM3 at 5.3 TB/s; Infinity Fabric 7 links
 * of 64 GB/s per direction, modelled as a switch of their sum). */
static const char *const gpu_flops_by_gpu[] = {"989e12",  "989e12", "312e12",
                                               "2250e12", "989e12", "1307.4e12"};
static const char *const gpu_flops_fp8_by_gpu[] = {"1979e12", "1979e12", "312e12",
                                                   "4500e12", "1979e12", "2614.9e12"};
static const char *const gpu_flops_fp32_by_gpu[] = {"494.5e12", "494.5e12", "156e12",
                                                    "1125e12",  "494.5e12", "653.7e12"};
static const char *const gpu_memory_by_gpu[] = {"80GiB", "80GiB", "80GiB",
                                                "192GB", "141GB", "192GB"};
static const char *const hbm_by_gpu[] = {"3.35TB/s", "3.35TB/s", "2.039TB/s",
                                         "8TB/s",    "4.8TB/s",  "5.3TB/s"};
/* Streaming multiprocessors (compute units): NVIDIA H100 architecture whitepaper (132 on
 * H100 SXM5; H800 and H200 are the same die and board), A100 whitepaper (108), Blackwell B200
 * (148), AMD CDNA 3 whitepaper (MI300X: 304 compute units). */
static const char *const sms_by_gpu[] = {"132", "132", "108", "148", "132", "304"};
static const char *const scale_up_by_gpu[] = {"450GB/s", "200GB/s", "300GB/s",
                                              "900GB/s", "450GB/s", "448GB/s"};
static const char *const nic_by_gpu[] = {"400Gbps", "400Gbps", "200Gbps",
                                         "400Gbps", "400Gbps", "400Gbps"};
static const char *const pcie_by_gpu[] = {"64GB/s", "64GB/s", "32GB/s",
                                          "64GB/s", "64GB/s", "64GB/s"};
/* What NCCL achieves on NVLink, as a share of the line rate: NCCL's own topology model of an
 * NVLink's usable bandwidth (src/graph/topo.h: SM80_NVLINK_BW 20.0, SM90 20.6, SM100 40.1 GB/s
 * per link) x the links per GPU (A100 12, H100 18, H800 8, B200 18) over the line rate
 * (docs/validation.md, "Link efficiency"): H100 370.8/450, H800 164.8/200, A100 240/300,
 * B200 721.8/900; H200 has H100's NVLink. MI300X: no NCCL figure; A100's 0.8 (assumption).
 * Not fitted to any measurement; make validate checks it against nccl-tests. */
static const char *const scale_up_eff_by_gpu[] = {"0.824", "0.824", "0.8", "0.802", "0.824", "0.8"};
/* Per-switch forwarding latency (port to port), indexed by cfg_transport: an NVIDIA
 * Quantum InfiniBand switch, cut-through (130 ns, the figure quoted for Quantum HDR; none is
 * published for Quantum-2 NDR), and a 51.2 Tb/s Ethernet switch (vendors' best figures
 * 500-560 ns; 600 ns for the class): docs/validation.md, "Latency of a transfer". */
static const char *const switch_latency_by_transport[] = {"130ns", "600ns", "600ns"};
/* InfiniBand switches forward cut-through; the Ethernet class is modelled
 * store-and-forward (its fabric.switch_latency already covers the pipeline). */
static const char *const cut_through_by_transport[] = {"true", "false", "false"};
/* Path selection, indexed by cfg_transport: an InfiniBand subnet manager
 * programs destination-based forwarding tables (OpenSM's fat-tree engine:
 * D-mod-K); RoCE and Ethernet switches hash the 5-tuple (ECMP). Sources in
 * docs/validation.md, "Routing". */
static const char *const routing_by_transport[] = {"static", "ecmp", "ecmp"};
/* GPU board power, watts, indexed by cfg_gpu: TDP from NVIDIA datasheets (H100 SXM 700,
 * H800 SXM 700, A100 SXM 400, B200 1000, H200 SXM 700) and AMD's (MI300X 750); idle is an
 * assumption (~10-14 % of TDP). */
static const char *const gpu_tdp_by_gpu[] = {"700", "700", "400", "1000", "700", "750"};
static const char *const gpu_idle_by_gpu[] = {"70", "70", "50", "140", "70", "75"};
/* Server power besides GPUs and NICs, watts, indexed by cfg_gpu: NVIDIA's DGX datasheets give
 * the system's maximum (DGX H100 ~10.2 kW, DGX A100 6.5 kW, DGX B200 ~14.3 kW; H800 as H100);
 * less 8 GPUs at TDP (700, 400, 1000 W) and 8 NICs at power.nic_w (25 W): docs/validation.md. */
/* H200: as H100 (DGX H200 ~10.2 kW, the same chassis). MI300X: no system maximum from AMD;
 * H100's host (assumption). */
static const char *const node_w_by_gpu[] = {"4400", "4400", "3100", "6100", "4400", "4400"};
static const char *const cooling_names[] = {"air", "liquid"};
/* Prices by cost.model (docs/validation.md, "Cost"). list: list-price assumptions. deepseek-v3:
 * the two unknowns of DeepSeek-V3's Table 3 (Zhao et al., ISCA '25), a switch and a
 * switch-to-switch link (NICs and endpoint links not counted), solved from its FT2 and FT3
 * rows: 96 s + 2,048 l = 2,048 x 4.39 k$ and 5,120 s + 131,072 l = 65,536 x 7.5 k$ give
 * s = 81,920 $ and l = 550 $ (two transceivers of 275 $); the MPFT row is then a check. */
static const char *const switch_usd_by_cost[] = {"25000", "81920"};
static const char *const transceiver_usd_by_cost[] = {"1000", "275"};
static const char *const nic_usd_by_cost[] = {"1500", "0"};
static const char *const cable_usd_by_cost[] = {"100", "0"};
static const char *const optical_endpoint_by_cost[] = {"true", "false"};
_Static_assert(sizeof(cfg_cost_model) == sizeof(int), "enum fields are stored as int");
/* Failure rates per 1,000 node-days of 8 GPUs, by reliability.rates (docs/reliability.md,
 * "Rate presets"; sources in docs/validation.md, "Reliability rates"), one array per cause of
 * reliability.rate.*:
 *   llama3-16k: Meta, "The Llama 3 Herd of Models" (arXiv 2407.21783), Table 5: 419 unexpected
 *     interruptions in 54 days of 16,384 H100 GPUs (2,048 nodes, 110,592 node-days); each rate
 *     is its count / 110.592 (derived). other_hardware = SSD 3 + power supply 3 + chassis 2 +
 *     IO expansion board 2 + CPU 2 + system memory 2.
 *   rsc-1, rsc-2: Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning
 *     Research Clusters" (HPCA 2025, arXiv 2410.21680): failure rate r_f of 6.50 (RSC-1, 16K
 *     A100) and 2.34 (RSC-2, 8K A100) per 1,000 node-days of 8-GPU nodes. The paper gives no
 *     per-cause counts, so each total is split in Table 5's proportions (count / 419 x r_f):
 *     the MTTF depends on the total only; the split sets the node-swap share. */
static const char *const faulty_gpu_by_rates[] = {"1.33825", "2.29594", "0.826539"};
static const char *const hbm_by_rates[] = {"0.651042", "1.11695", "0.4021"};
static const char *const software_by_rates[] = {"0.488281", "0.837709", "0.301575"};
static const char *const network_by_rates[] = {"0.316479", "0.542959", "0.195465"};
static const char *const host_by_rates[] = {"0.289352", "0.49642", "0.178711"};
static const char *const sram_by_rates[] = {"0.171803", "0.294749", "0.10611"};
static const char *const gsp_by_rates[] = {"0.153718", "0.263723", "0.0949403"};
static const char *const nic_by_rates[] = {"0.0632957", "0.108592", "0.0390931"};
static const char *const nccl_by_rates[] = {"0.0632957", "0.108592", "0.0390931"};
static const char *const sdc_by_rates[] = {"0.0542535", "0.0930788", "0.0335084"};
static const char *const thermal_by_rates[] = {"0.0542535", "0.0930788", "0.0335084"};
static const char *const other_hardware_by_rates[] = {"0.126591", "0.217184", "0.0781862"};
static const char *const dependency_by_rates[] = {"0.0180845", "0.0310263", "0.0111695"};
/* Routing reconvergence after a network fault, indexed by cfg_transport (assumptions built
 * from public figures, docs/faults.md):
 *   InfiniBand: the switch's port-state trap (IBTA trap 128) makes the subnet manager sweep
 *   at once, recompute routes and upload forwarding tables; OpenSM otherwise sweeps every
 *   10 s (opensm(8), -s). 1 s stands for the trap-driven recompute of a large fat-tree.
 *   RoCE and Ethernet: BGP in the data center (RFC 7938) with BFD (RFC 5880) at a 50 ms
 *   interval and the usual multiplier of 3 detects a failure in 150 ms; withdrawals and
 *   FIB updates take tens of ms more: 200 ms. */
static const char *const reconvergence_by_transport[] = {"1s", "200ms", "200ms"};
_Static_assert(sizeof(cfg_cooling) == sizeof(int), "enum fields are stored as int");

/* ---- the table ---------------------------------------------------------------------- */

#define FIELD(m) .offset = offsetof(cfg_scenario, m), .width = sizeof(((cfg_scenario *)0)->m)
#define UINT(key, m, d, lo, hi, text) \
  { .name = key, .type = CFG__UINT, .def = d, .min = lo, .max = hi, .doc = text, FIELD(m) }
#define DBL(key, m, d, lo, excl, text)                                                           \
  {                                                                                              \
    .name = key, .type = CFG__DOUBLE, .def = d, .dmin = lo, .dmin_exclusive = excl, .doc = text, \
    FIELD(m)                                                                                     \
  }
#define BW(key, m, d, bytes, text)                                                               \
  {                                                                                              \
    .name = key, .type = CFG__BANDWIDTH, .def = d, .min = 1, .bytes_family = bytes, .doc = text, \
    FIELD(m)                                                                                     \
  }
#define TIME(key, m, d, text) \
  { .name = key, .type = CFG__TIME, .def = d, .doc = text, FIELD(m) }
#define SIZE(key, m, d, text) \
  { .name = key, .type = CFG__SIZE, .def = d, .min = 1, .doc = text, FIELD(m) }
#define ENUM(key, m, d, list, text)                                                      \
  {                                                                                      \
    .name = key, .type = CFG__ENUM, .def = d, .names = list, .nnames = (int)NELEM(list), \
    .doc = text, FIELD(m)                                                                \
  }
#define BOOL(key, m, d, text) \
  { .name = key, .type = CFG__BOOL, .def = d, .doc = text, FIELD(m) }
#define LIST(key, m, d, lo, hi, text) \
  { .name = key, .type = CFG__LIST, .def = d, .min = lo, .max = hi, .doc = text, FIELD(m) }
#define NAMES(key, m, d, list, text)                                                     \
  {                                                                                      \
    .name = key, .type = CFG__LIST, .def = d, .names = list, .nnames = (int)NELEM(list), \
    .doc = text, FIELD(m)                                                                \
  }
#define BY_GPU .def = NULL, .derive = CFG__DERIVE_GPU
#define RULE(text) .def = NULL, .derive = CFG__DERIVE_RULE, .def_doc = text

static const cfg__key schema[] = {
    UINT("cluster.nodes", cluster.nodes, "0", 0, 1000000,
         "Servers in the cluster; 0 builds the fabric at full size."),
    UINT("cluster.gpus_per_node", cluster.gpus_per_node, "8", 1, 72,
         "GPUs per server, all in one scale-up (NVLink) domain."),
    ENUM("cluster.gpu", cluster.gpu, "H100", gpu_names,
         "GPU model; selects the presets marked \"by cluster.gpu\"."),
    {.name = "cluster.gpu_flops",
     .type = CFG__DOUBLE,
     BY_GPU,
     .by_value = gpu_flops_by_gpu,
     .dmin = 0,
     .dmin_exclusive = 1,
     .doc = "Peak dense BF16 FLOP/s per GPU.",
     FIELD(cluster.gpu_flops)},
    {.name = "cluster.gpu_flops_fp8",
     .type = CFG__DOUBLE,
     BY_GPU,
     .by_value = gpu_flops_fp8_by_gpu,
     .dmin = 0,
     .dmin_exclusive = 1,
     .doc = "Peak dense FP8 FLOP/s per GPU (workload.precision fp8).",
     FIELD(cluster.gpu_flops_fp8)},
    {.name = "cluster.gpu_flops_fp32",
     .type = CFG__DOUBLE,
     BY_GPU,
     .by_value = gpu_flops_fp32_by_gpu,
     .dmin = 0,
     .dmin_exclusive = 1,
     .doc = "Peak dense TF32 tensor-core FLOP/s per GPU (workload.precision fp32).",
     FIELD(cluster.gpu_flops_fp32)},
    {.name = "cluster.gpu_memory",
     .type = CFG__SIZE,
     BY_GPU,
     .by_value = gpu_memory_by_gpu,
     .min = 1,
     .doc = "HBM capacity per GPU.",
     FIELD(cluster.gpu_memory)},
    {.name = "cluster.hbm_bandwidth",
     .type = CFG__BANDWIDTH,
     BY_GPU,
     .by_value = hbm_by_gpu,
     .min = 1,
     .bytes_family = 1,
     .doc = "HBM bandwidth per GPU.",
     FIELD(cluster.hbm_bandwidth)},
    {.name = "cluster.gpu_sms",
     .type = CFG__UINT,
     BY_GPU,
     .by_value = sms_by_gpu,
     .min = 1,
     .max = 100000,
     .doc = "Streaming multiprocessors (compute units) per GPU; communication kernels take "
            "some while they run and overlapped compute slows in proportion.",
     FIELD(cluster.gpu_sms)},
    DBL("cluster.hbm_efficiency", cluster.hbm_efficiency, "0.9", 0, 1,
        "Share of cluster.hbm_bandwidth memory-bound kernels achieve (STREAM-like copies), at "
        "most 1; the roofline of every training operation uses it."),
    {.name = "cluster.scale_up.bandwidth",
     .type = CFG__BANDWIDTH,
     BY_GPU,
     .by_value = scale_up_by_gpu,
     .min = 1,
     .bytes_family = 1,
     .doc = "Scale-up (NVLink) bandwidth per GPU, per direction.",
     FIELD(cluster.scale_up.bandwidth)},
    TIME("cluster.scale_up.latency", cluster.scale_up.latency, "500ns",
         "GPU to GPU latency through the scale-up switch."),
    {.name = "cluster.scale_up.efficiency",
     .type = CFG__DOUBLE,
     BY_GPU,
     .by_value = scale_up_eff_by_gpu,
     .dmin = 0,
     .dmin_exclusive = 1,
     .doc = "Share of the scale-up line rate collectives achieve (protocol and flag overhead), "
            "at most 1; NVLink links run at bandwidth x efficiency in every fidelity.",
     FIELD(cluster.scale_up.efficiency)},
    TIME("cluster.scale_up.start", cluster.scale_up.start, "3us",
         "Point-to-point transfers (workload.kind traffic) inside a node: the host's launch of "
         "the copy before its first byte moves (a kernel or copy engine started from a "
         "stream), added to the routed path; collectives pay their own launch "
         "(workload.collective.latency.*) instead."),
    {.name = "cluster.nic.bandwidth",
     .type = CFG__BANDWIDTH,
     BY_GPU,
     .by_value = nic_by_gpu,
     .min = 1,
     .doc = "Scale-out NIC port bandwidth, per direction.",
     FIELD(cluster.nic.bandwidth)},
    {.name = "cluster.nic.per_node",
     .type = CFG__UINT,
     RULE("same as `cluster.gpus_per_node`"),
     .min = 1,
     .max = 256,
     .doc = "NICs per server; must divide, or be a multiple of, cluster.gpus_per_node.",
     FIELD(cluster.nic.per_node)},
    DBL("cluster.nic.efficiency", cluster.nic.efficiency, "0.92", 0, 1,
        "Share of the NIC line rate collectives achieve (headers, software), at most 1; "
        "NIC-to-leaf links run at bandwidth x efficiency (the packet fidelity adds its own "
        "headers back, so they are not counted twice)."),
    DBL("cluster.nic.rdma_efficiency", cluster.nic.rdma_efficiency, "0.9375", 0, 1,
        "Share of the NIC line rate a point-to-point RDMA write stream achieves "
        "(workload.kind traffic), at most 1: NIC-to-leaf links run at bandwidth x this "
        "instead of cluster.nic.efficiency, which is NCCL's rate; default 375/400, the "
        "ib_write_bw a healthy NDR port passes (docs/validation.md, \"Link efficiency\")."),
    TIME("cluster.nic.latency", cluster.nic.latency, "200ns",
         "NIC processing latency per traversal."),
    TIME("cluster.nic.start", cluster.nic.start, "800ns",
         "Point-to-point transfers (workload.kind traffic) across nodes: posting the RDMA "
         "write before its first byte leaves the GPU (the doorbell and the NIC's DMA reads of "
         "the work request and the payload: four PCIe traversals beyond the data's own), added "
         "to the routed path; collectives' per-hop latencies already hold it."),
    TIME("cluster.nic.finish", cluster.nic.finish, "500ns",
         "Point-to-point transfers (workload.kind traffic) across nodes: after the last byte "
         "lands in the destination GPU's memory, until the receiver's poll sees it; added to "
         "the routed path."),
    ENUM("cluster.nic.recovery", cluster.nic.recovery, "selective", recovery_names,
         "Packet fidelity: selective keeps out-of-order packets (reorder buffer) and resends "
         "only what is missing; go-back-n drops them and resends from the first gap, as NICs "
         "without out-of-order placement."),
    TIME("cluster.nic.rto", cluster.nic.rto, "1ms",
         "Retransmission timeout of a queue pair; doubles on each timeout in a row, up to 64x."),
    UINT("cluster.nic.ack_every", cluster.nic.ack_every, "4", 1, 64,
         "ACK coalescing (reliable connection allows cumulative ACKs): the receiver acknowledges "
         "every this many packets, and always the last one, duplicates and retransmissions."),
    TIME("cluster.nic.cnp_interval", cluster.nic.cnp_interval, "50us",
         "DCQCN notification point: at most one CNP per queue pair per interval."),
    {.name = "cluster.pcie.bandwidth",
     .type = CFG__BANDWIDTH,
     BY_GPU,
     .by_value = pcie_by_gpu,
     .min = 1,
     .bytes_family = 1,
     .doc = "GPU to NIC PCIe bandwidth, per direction.",
     FIELD(cluster.pcie.bandwidth)},
    DBL("cluster.pcie.efficiency", cluster.pcie.efficiency, "0.9", 0, 1,
        "Share of the PCIe line rate DMA achieves (TLP headers and framing at 256-byte "
        "payloads), at most 1."),
    TIME("cluster.pcie.latency", cluster.pcie.latency, "200ns", "GPU to NIC PCIe latency."),

    ENUM("fabric.topology", fabric.topology, "fat-tree", topology_names,
         "Scale-out topology; file: the graph fabric.file describes (docs/fabric-import.md)."),
    {.name = "fabric.file",
     .type = CFG__STRING,
     .def = "none",
     .doc = "With fabric.topology file: the fabric as a JSON or YAML graph (what fabsim topo "
            "--export writes) or rdma-core ibnetdiscover output; relative to the scenario's "
            "folder. Its graph gives the cluster and fabric keys (docs/fabric-import.md).",
     .quiet = 1,
     FIELD(fabric.file)},
    {.name = "fabric.map.server",
     .type = CFG__STRING,
     .def = "^([^ ]+)",
     .doc = "ibnetdiscover files: a POSIX extended regular expression on a CA's node "
            "description whose first group names its server; a server's CAs are its NICs in "
            "description order, paired with its GPUs as fabsim pairs them.",
     .quiet = 1,
     FIELD(fabric.map_server)},
    UINT("fabric.tiers", fabric.tiers, "2", 2, 3, "Switch tiers: 2 (leaf-spine) or 3 (with core)."),
    {.name = "fabric.planes",
     .type = CFG__UINT,
     RULE("`1`; multi-plane: same as `cluster.nic.per_node`"),
     .min = 1,
     .max = 256,
     .doc = "Independent fabric planes; must divide cluster.nic.per_node (multi-plane only).",
     FIELD(fabric.planes)},
    UINT("fabric.switch_radix", fabric.switch_radix, "64", 4, 1024,
         "Ports per fabric switch; even (half down, half up)."),
    DBL("fabric.oversubscription", fabric.oversubscription, "1", 1, 0,
        "Leaf downlink:uplink bandwidth ratio; 1 is non-blocking."),
    BW("fabric.link_bandwidth", fabric.link_bandwidth, "400Gbps", 0,
       "Switch-to-switch link bandwidth."),
    DBL("fabric.link_efficiency", fabric.link_efficiency, "1", 0, 1,
        "Share of the switch-to-switch line rate traffic achieves, at most 1; switches forward "
        "at line rate, packet headers aside (which the packet fidelity models)."),
    TIME("fabric.link_latency", fabric.link_latency, "200ns",
         "Latency per link, NIC-to-leaf and switch-to-switch: propagation (20 m of fibre at 5 "
         "ns/m) and the PAM4 links' RS-FEC (about 100 ns)."),
    {.name = "fabric.switch_latency",
     .type = CFG__TIME,
     .def = NULL,
     .derive = CFG__DERIVE_TRANSPORT,
     .by_value = switch_latency_by_transport,
     .doc = "Forwarding latency per switch traversal.",
     FIELD(fabric.switch_latency)},
    ENUM("fabric.transport", fabric.transport, "infiniband", transport_names,
         "Transport and flow control: credit-based InfiniBand, RoCEv2 (PFC/ECN), lossy Ethernet."),
    {.name = "fabric.routing",
     .type = CFG__ENUM,
     .def = NULL,
     .names = routing_names,
     .nnames = (int)NELEM(routing_names),
     .derive = CFG__DERIVE_TRANSPORT,
     .by_value = routing_by_transport,
     .doc = "Path selection, the same in every fidelity: static is destination-based D-mod-K "
            "as an InfiniBand subnet manager computes for a fat-tree; adaptive takes the "
            "least-loaded equal-cost port (analytic, flow: per transfer; packet: per packet or "
            "flowlet); spray splits each transfer evenly over the equal-cost paths; ecmp "
            "hashes each queue pair's entropy (RoCE: its UDP source port; see "
            "workload.qps_per_connection).",
     FIELD(fabric.routing)},
    UINT("fabric.mtu", fabric.mtu, "4096", 256, 9216,
         "Payload bytes per packet; InfiniBand: 256, 512, 1024, 2048 or 4096."),
    TIME("fabric.adaptive.flowlet_gap", fabric.adaptive.flowlet_gap, "0s",
         "Adaptive routing per flowlet: a flow keeps its port until it pauses this long; 0 "
         "decides per packet."),
    ENUM("fabric.spray.order", fabric.spray.order, "random", spray_order_names,
         "Packet spraying: uniformly random or round robin over the equal-cost next hops."),
    SIZE("fabric.switch.buffer", fabric.sw.buffer, "32MB",
         "Packet fidelity: shared packet buffer per switch (InfiniBand: split evenly over the "
         "input ports as credits)."),
    {.name = "fabric.switch.cut_through",
     .type = CFG__BOOL,
     .def = NULL,
     .derive = CFG__DERIVE_TRANSPORT,
     .by_value = cut_through_by_transport,
     .doc = "Switches forward once the header has arrived (else once the whole packet has).",
     FIELD(fabric.sw.cut_through)},
    {.name = "fabric.ecn.kmin",
     .type = CFG__SIZE,
     RULE("100KB x `fabric.link_bandwidth` / 25Gbps"),
     .min = 1,
     .doc = "ECN marking starts above this egress queue depth at a port of "
            "fabric.link_bandwidth (other port speeds scale in proportion).",
     FIELD(fabric.ecn.kmin)},
    {.name = "fabric.ecn.kmax",
     .type = CFG__SIZE,
     RULE("400KB x `fabric.link_bandwidth` / 25Gbps"),
     .min = 1,
     .doc = "Egress queue depth where the marking probability reaches fabric.ecn.pmax; every "
            "packet is marked above it (scaled like kmin).",
     FIELD(fabric.ecn.kmax)},
    DBL("fabric.ecn.pmax", fabric.ecn.pmax, "0.2", 0, 0, "Marking probability at kmax, at most 1."),
    {.name = "fabric.roce.pfc",
     .type = CFG__BOOL,
     .def = "true",
     .doc = "RoCE: priority flow control makes the fabric lossless (false: tail drop).",
     FIELD(fabric.roce.pfc)},
    ENUM("fabric.roce.cc", fabric.roce.cc, "dcqcn", roce_cc_names,
         "Congestion control of RoCE and Ethernet queue pairs."),
    BOOL("fabric.sharp", fabric.sharp, "false",
         "The switches reduce in the network (InfiniBand SHARP on Quantum switches; NCCL's "
         "CollNet): allreduce may run as collnet, each NIC sending its share up the "
         "aggregation tree once and receiving the result once. Off by default: SHARP needs "
         "a licence and the aggregation manager configured."),
    {.name = "fabric.pfc.xoff",
     .type = CFG__SIZE,
     .def = "0B",
     .doc = "PAUSE when an ingress queue holds this much shared buffer; 0 = dynamic: 1/8 of "
            "the free shared buffer.",
     FIELD(fabric.pfc.xoff)},
    SIZE("fabric.pfc.xon", fabric.pfc.xon, "3KB",
         "RESUME once the ingress queue is this far below the XOFF threshold."),
    TIME("fabric.pfc.watchdog", fabric.pfc.watchdog, "10ms",
         "A queue paused longer than this is recorded as a pause storm."),
    UINT("fabric.ecmp.hash_seed", fabric.ecmp.hash_seed, "0", 0, UINT64_MAX,
         "Seed of the ECMP hash."),
    {.name = "fabric.ecmp.polarized",
     .type = CFG__BOOL,
     .def = "false",
     .doc = "Every switch uses the same hash (no per-switch seed), so choices at successive "
            "tiers correlate and paths polarize.",
     FIELD(fabric.ecmp.polarized)},
    {.name = "fabric.classes",
     .type = CFG__CLASSES,
     .def = "[]",
     .doc = "Traffic classes as the switches schedule them, a list of at most 8 {id, name, "
            "priority, weight, lossless, ecn, buffer}: strict priority levels over "
            "deficit-weighted round robin, lossless (PFC) or lossy, ECN thresholds and buffer "
            "share per class; see the table below and docs/shared-fabric.md.",
     .quiet = 1,
     FIELD(fabric.classes)},

    ENUM("cost.model", cost.model, "list", cost_model_names,
         "Price presets of the keys below: list (list-price assumptions) or deepseek-v3 (the "
         "switch and link prices that reproduce DeepSeek-V3's Table 3 cost per endpoint)."),
#define BY_COST .def = NULL, .derive = CFG__DERIVE_COST
    {.name = "cost.switch_usd",
     .type = CFG__DOUBLE,
     BY_COST,
     .by_value = switch_usd_by_cost,
     .dmin = 0,
     .doc = "Price per fabric switch (override it with your quote).",
     FIELD(cost.switch_usd)},
    {.name = "cost.transceiver_usd",
     .type = CFG__DOUBLE,
     BY_COST,
     .by_value = transceiver_usd_by_cost,
     .dmin = 0,
     .doc = "Price per optical transceiver, two per optical link.",
     FIELD(cost.transceiver_usd)},
    {.name = "cost.nic_usd",
     .type = CFG__DOUBLE,
     BY_COST,
     .by_value = nic_usd_by_cost,
     .dmin = 0,
     .doc = "Price per NIC.",
     FIELD(cost.nic_usd)},
    {.name = "cost.cable_usd",
     .type = CFG__DOUBLE,
     BY_COST,
     .by_value = cable_usd_by_cost,
     .dmin = 0,
     .doc = "Price per copper (DAC) cable.",
     FIELD(cost.cable_usd)},
    {.name = "cost.optical_endpoint_links",
     .type = CFG__BOOL,
     BY_COST,
     .by_value = optical_endpoint_by_cost,
     .doc = "NIC-to-leaf links are optical (else copper).",
     FIELD(cost.optical_endpoint_links)},
#undef BY_COST

    /* storage.*: docs/shared-fabric.md, "Storage and checkpoints"; sources in
     * docs/validation.md, "Storage". A server's figures are a DDN AI400X2's, the all-flash
     * appliance of NVIDIA's DGX SuperPOD storage reference architecture. */
    UINT("storage.servers", storage.servers, "0", 0, 100000,
         "Storage servers (0: none). Checkpoints (workload.checkpoint) write to them."),
    ENUM("storage.attach", storage.attach, "backend", storage_attach_names,
         "backend: the servers' NICs on leaves of the backend fabric, after the compute "
         "nodes' (their own leaves); separate: a storage fabric of their own "
         "(storage.fabric.*) that the nodes reach over storage.frontend NICs."),
    BW("storage.write_bandwidth", storage.write_bandwidth, "65GB/s", 1,
       "Sustained write bandwidth of one server's drives (DDN AI400X2: 65 GB/s)."),
    BW("storage.read_bandwidth", storage.read_bandwidth, "90GB/s", 1,
       "Sustained read bandwidth of one server's drives (DDN AI400X2: 90 GB/s)."),
    UINT("storage.nic.per_server", storage.nic.per_server, "8", 1, 4096,
         "Network ports per server (AI400X2: 8); a multiple of the NICs per node of the "
         "fabric it is on (cluster.nic.per_node, or storage.frontend.per_node)."),
    BW("storage.nic.bandwidth", storage.nic.bandwidth, "200Gbps", 0,
       "Rate of each server port (AI400X2: HDR200/NDR200 InfiniBand)."),
    UINT("storage.frontend.per_node", storage.frontend.per_node, "2", 1, 4096,
         "separate: each node's NICs on the storage fabric (DGX H100: two ports of its two "
         "dual-port ConnectX-7 cards)."),
    BW("storage.frontend.bandwidth", storage.frontend.bandwidth, "400Gbps", 0,
       "separate: rate of each frontend NIC (DGX H100 ConnectX-7: up to 400 Gb/s)."),
    UINT("storage.fabric.tiers", storage.fabric.tiers, "2", 2, 3,
         "separate: tiers of the storage fat-tree."),
    UINT("storage.fabric.switch_radix", storage.fabric.switch_radix, "64", 2, 1024,
         "separate: ports per storage switch (Quantum-2 NDR: 64)."),
    DBL("storage.fabric.oversubscription", storage.fabric.oversubscription, "1", 1, 0,
        "separate: leaf down:up ratio of the storage fabric."),
    BW("storage.fabric.link_bandwidth", storage.fabric.link_bandwidth, "400Gbps", 0,
       "separate: storage switch-to-switch links."),
    DBL("storage.server_usd", storage.server_usd, "250000", 0, 0,
        "Price per storage server with its drives and NICs (assumption: no list price is "
        "published)."),
    DBL("storage.server_w", storage.server_w, "2500", 0, 0,
        "Power per storage server, watts (assumption), in the inventory."),

    BOOL("management.enabled", management.enabled, "false",
         "An out-of-band management network: one port per node, storage server and switch "
         "(backend and storage fabrics), in the inventory and cost; it carries no traffic."),
    UINT("management.switch_ports", management.switch_ports, "48", 1, 1024,
         "Device ports per management switch (NVIDIA SN2201: 48 x 1 GbE)."),
    UINT("management.uplinks", management.uplinks, "4", 0, 1024,
         "Uplinks per management switch to the aggregation (SN2201: 4 x 100 GbE)."),
    UINT("management.aggregation_radix", management.aggregation_radix, "64", 2, 1024,
         "Ports per aggregation switch (SN4600C: 64 x 100 GbE)."),
    DBL("management.switch_usd", management.switch_usd, "10000", 0, 0,
        "Price per management switch (assumption)."),
    DBL("management.aggregation_usd", management.aggregation_usd, "30000", 0, 0,
        "Price per aggregation switch (assumption)."),
    DBL("management.cable_usd", management.cable_usd, "20", 0, 0,
        "Price per management cable (copper, assumption); uplinks count as cables too."),

    ENUM("workload.kind", workload.kind, "collective", workload_names, "What the run simulates."),
    {.name = "workload.traffic_class",
     .type = CFG__STRING,
     .def = "0",
     .doc = "Traffic class of every transfer of the workload: an id 0..7 or a name of "
            "fabric.classes (a job's is jobs[j].traffic_class).",
     .quiet = 1,
     FIELD(workload.traffic_class)},
    ENUM("workload.collective.op", workload.collective.op, "allreduce", coll_op_names,
         "Collective operation."),
    {.name = "workload.collective.algorithm",
     .type = CFG__ENUM,
     .def = "auto",
     .names = coll_algorithm_names,
     .nnames = (int)NELEM(coll_algorithm_names),
     .doc = "Algorithm. auto: the tuner picks algorithm, protocol and channels by size and "
            "topology as NCCL's does (allreduce ring, tree, nvls, collnet or nvlstree; alltoall "
            "pxn across "
            "nodes, "
            "pairwise in one); the summary says what it picked. allreduce: ring, tree (double "
            "binary tree), halving-doubling, "
            "hierarchical (NVLink reduce-scatter, per-rail ring across nodes, NVLink "
            "all-gather), nvls (NVLink SHARP: the NVSwitch reduces; one node of H100, H800 or "
            "B200), collnet (InfiniBand SHARP: the switches reduce; needs fabric.sharp), "
            "nvlstree (NCCL's NVLSTree: NVLink SHARP inside each node, a double binary tree of "
            "the nodes across them; two nodes or more of H100, H800, H200 or B200); "
            "reducescatter, allgather: ring, halving-doubling; broadcast: ring; "
            "alltoall: pairwise, pxn (cross-plane data forwarded over NVLink to the GPU on the "
            "peer's plane). node-limited is the MoE dispatch of training workloads.",
     FIELD(workload.collective.algorithm)},
    SIZE("workload.collective.size", workload.collective.size, "1GiB",
         "Buffer size as nccl-tests counts it."),
    UINT("workload.collective.ranks", workload.collective.ranks, "0", 0, UINT32_MAX,
         "GPUs taking part; 0 = every GPU, else at least 2."),
    UINT("workload.collective.channels", workload.collective.channels, "0", 0, 64,
         "Parallel rings, each with 1/channels of the data; 0 = one per NIC of a node."),
    SIZE("workload.collective.chunk", workload.collective.chunk, "1MiB",
         "Pipeline chunk of a ring broadcast and of the tree allreduce."),
    ENUM("workload.collective.protocol", workload.collective.protocol, "auto", coll_protocol_names,
         "NCCL protocol: ll (8-byte lines of 4 data bytes and a flag: twice the bytes, lowest "
         "latency), ll128 (128-byte lines of 120 data bytes), simple (whole buffers, fences: "
         "highest per-hop latency); each adds its per-hop latency and a per-call launch "
         "overhead (docs/validation.md, Collectives). auto: the tuner picks; none: ideal "
         "transfers without protocol bytes, latency or launch."),
    TIME("workload.collective.latency.ll.launch", workload.collective.latency.ll.launch, "6.6us",
         "LL launch overhead of one call (NCCL's base latency), ring and every algorithm but "
         "tree and the in-switch ones (nvls, nvlstree, collnet: their own keys). Defaults of "
         "workload.collective.latency.*: NCCL's tuning model "
         "(src/graph/tuning.cc; docs/validation.md, Collectives); `fabsim calibrate` fits them"
         " to nccl-tests output."),
    TIME("workload.collective.latency.ll.nvlink_hop", workload.collective.latency.ll.nvlink_hop,
         "0.6us",
         "LL latency of one step inside a node (NVLink), end to end, wire included; the part "
         "above the routed path's latency is added to the step."),
    TIME("workload.collective.latency.ll.network_hop", workload.collective.latency.ll.network_hop,
         "2.7us",
         "LL latency of one step that crosses nodes, end to end, wire included; the part above"
         " the routed path's latency is added to the step."),
    TIME("workload.collective.latency.ll.tree_launch", workload.collective.latency.ll.tree_launch,
         "6.8us", "LL launch overhead of one call of the tree algorithm."),
    TIME("workload.collective.latency.ll.tree_nvlink_hop",
         workload.collective.latency.ll.tree_nvlink_hop, "0.6us",
         "LL tree algorithm: latency of one step inside a node."),
    TIME("workload.collective.latency.ll.tree_network_hop",
         workload.collective.latency.ll.tree_network_hop, "5us",
         "LL tree algorithm: latency of one step across nodes."),
    TIME("workload.collective.latency.ll128.launch", workload.collective.latency.ll128.launch,
         "14us",
         "LL128 launch overhead of one call (NCCL's base latency), ring and every algorithm "
         "but tree."),
    TIME("workload.collective.latency.ll128.nvlink_hop",
         workload.collective.latency.ll128.nvlink_hop, "1.9us",
         "LL128 latency of one step inside a node (NVLink), end to end, wire included; the "
         "part above the routed path's latency is added to the step."),
    TIME("workload.collective.latency.ll128.network_hop",
         workload.collective.latency.ll128.network_hop, "4us",
         "LL128 latency of one step that crosses nodes, end to end, wire included; the part "
         "above the routed path's latency is added to the step."),
    TIME("workload.collective.latency.ll128.tree_launch",
         workload.collective.latency.ll128.tree_launch, "14us",
         "LL128 launch overhead of one call of the tree algorithm."),
    TIME("workload.collective.latency.ll128.tree_nvlink_hop",
         workload.collective.latency.ll128.tree_nvlink_hop, "1.25us",
         "LL128 tree algorithm: latency of one step inside a node."),
    TIME("workload.collective.latency.ll128.tree_network_hop",
         workload.collective.latency.ll128.tree_network_hop, "8.5us",
         "LL128 tree algorithm: latency of one step across nodes."),
    TIME("workload.collective.latency.simple.launch", workload.collective.latency.simple.launch,
         "8.4us",
         "Simple launch overhead of one call (NCCL's base latency), ring and every algorithm "
         "but tree."),
    TIME("workload.collective.latency.simple.nvlink_hop",
         workload.collective.latency.simple.nvlink_hop, "3.4us",
         "Simple latency of one step inside a node (NVLink), end to end, wire included; the "
         "part above the routed path's latency is added to the step."),
    TIME("workload.collective.latency.simple.network_hop",
         workload.collective.latency.simple.network_hop, "14us",
         "Simple latency of one step that crosses nodes, end to end, wire included; the part "
         "above the routed path's latency is added to the step."),
    TIME("workload.collective.latency.simple.tree_launch",
         workload.collective.latency.simple.tree_launch, "8.4us",
         "Simple launch overhead of one call of the tree algorithm."),
    TIME("workload.collective.latency.simple.tree_nvlink_hop",
         workload.collective.latency.simple.tree_nvlink_hop, "4us",
         "Simple tree algorithm: latency of one step inside a node."),
    TIME("workload.collective.latency.simple.tree_network_hop",
         workload.collective.latency.simple.tree_network_hop, "14us",
         "Simple tree algorithm: latency of one step across nodes."),
    TIME("workload.collective.latency.nvls.nvlink_hop", workload.collective.latency.nvls.nvlink_hop,
         "25us",
         "NVLS (NVLink SHARP): latency of the NVSwitch's reduction and multicast, the whole "
         "of an NVLS call on one node (no launch term; NCCL's base latency of NVLS is 0)."),
    TIME("workload.collective.latency.nvls.network_hop",
         workload.collective.latency.nvls.network_hop, "18us",
         "NVLS across nodes (CollNet over NVLS, InfiniBand SHARP): latency added by the "
         "network's reduction, beside the NVLink hop."),
    TIME("workload.collective.latency.nvlstree.nvlink_hop",
         workload.collective.latency.nvlstree.nvlink_hop, "25us",
         "NVLSTree: latency of the NVSwitch's reduction inside each node."),
    TIME("workload.collective.latency.nvlstree.network_hop",
         workload.collective.latency.nvlstree.network_hop, "20.9us",
         "NVLSTree: latency of one network hop of the trees across nodes; a call takes "
         "2 floor(log2 nodes) of them."),
    TIME("workload.collective.latency.collnet.nvlink_hop",
         workload.collective.latency.collnet.nvlink_hop, "3.7us",
         "CollNet Direct (InfiniBand SHARP without NVLS): latency of each of its two hops "
         "inside a node (0.4 us of arity serialization per local rank beyond the first comes "
         "on top, as in NCCL)."),
    TIME("workload.collective.latency.collnet.network_hop",
         workload.collective.latency.collnet.network_hop, "31us",
         "CollNet Direct: latency of the switches' reduction across nodes."),
    DBL("workload.collective.bandwidth.ring", workload.collective.bandwidth.ring, "1", 0, 1,
        "Factor on the rate the ring algorithm's transfers achieve, above 0, at most 1: its "
        "transfers take 1/factor as long in every fidelity, on top of the links' efficiencies "
        "(which every algorithm shares). Defaults of workload.collective.bandwidth.*: 1, "
        "fabsim's model as it is; `fabsim calibrate` fits them to nccl-tests output "
        "(docs/validation.md, Calibration)."),
    DBL("workload.collective.bandwidth.tree", workload.collective.bandwidth.tree, "1", 0, 1,
        "Factor on the rate the tree algorithm's transfers achieve (as the ring's)."),
    DBL("workload.collective.bandwidth.nvls", workload.collective.bandwidth.nvls, "1", 0, 1,
        "Factor on the rate NVLS (NVLink SHARP, one node) achieves, on top of NCCL's NVLS "
        "efficiency (as the ring's)."),
    DBL("workload.collective.bandwidth.nvlstree", workload.collective.bandwidth.nvlstree, "1", 0, 1,
        "Factor on the rate NVLSTree achieves, NVLink and network parts alike (as the ring's)."),
    DBL("workload.collective.bandwidth.collnet", workload.collective.bandwidth.collnet, "1", 0, 1,
        "Factor on the rate CollNet (InfiniBand SHARP) achieves (as the ring's)."),
    BOOL("workload.collective.nvls", workload.collective.nvls, "true",
         "NVLink SHARP (NCCL_NVLS_ENABLE): on one node of H100, H800, H200 or B200 (NVSwitch "
         "generation 3 and later) allreduce may run as nvls, the NVSwitch reducing, and across "
         "nodes as nvlstree; auto picks them where the tuner finds them faster. false: never."),
    ENUM("workload.traffic.pattern", workload.traffic.pattern, "permutation", traffic_pattern_names,
         "Synthetic traffic: pair (GPU 0 to the last GPU), incast (senders to GPU 0), "
         "permutation (each GPU to a distinct other, seeded), all-to-all."),
    SIZE("workload.traffic.size", workload.traffic.size, "2MB", "Bytes of each flow."),
    UINT("workload.traffic.senders", workload.traffic.senders, "8", 1, UINT32_MAX,
         "Incast fan-in: how many GPUs send to GPU 0."),
    ENUM("workload.traffic.start", workload.traffic.start, "together", traffic_start_names,
         "All flows start at time 0, or flow i starts at i x workload.traffic.stagger."),
    TIME("workload.traffic.stagger", workload.traffic.stagger, "1us",
         "Gap between flow starts when workload.traffic.start is staggered."),
    UINT("workload.qps_per_connection", workload.qps_per_connection, "1", 1, 256,
         "Queue pairs per connection: each transfer is split evenly over this many, each with "
         "its own ECMP hash (UDP source port), as collective libraries do for entropy."),
    DBL("workload.model.params", workload.model.params, "0", 0, 0,
        "Training: parameter count (7e9); 0 counts it from the shape. When set, every part of "
        "the counted model is scaled to it; the shape still sets activations and messages."),
    UINT("workload.model.layers", workload.model.layers, "32", 1, 100000, "Transformer layers."),
    UINT("workload.model.hidden", workload.model.hidden, "4096", 1, 10000000,
         "Hidden size (model width)."),
    UINT("workload.model.heads", workload.model.heads, "32", 1, 100000, "Attention heads."),
    UINT("workload.model.kv_heads", workload.model.kv_heads, "0", 0, 100000,
         "Key/value heads (grouped-query attention: Llama 3 has 8); 0 is workload.model.heads. "
         "K and V are kv_heads / heads as wide as Q: the attention projections' parameters "
         "(2 + 2 kv_heads / heads) h^2, the QKV GEMM's width, the activations kept and the "
         "attention kernel's bytes."),
    UINT("workload.model.head_dim", workload.model.head_dim, "0", 0, 100000,
         "Width of one attention head; 0 is hidden / heads. Q is heads x head_dim wide (Qwen3: "
         "128 at every size, so Qwen3-30B-A3B's 32 heads make Q 4096 wide on a hidden size of "
         "2048): the attention projections' parameters (2 + 2 kv_heads / heads) h x heads x "
         "head_dim, the QKV and output GEMMs' shapes and the attention core's FLOPs."),
    UINT("workload.model.seq_len", workload.model.seq_len, "4096", 1, 100000000,
         "Tokens per sequence."),
    UINT("workload.model.vocab", workload.model.vocab, "32000", 0, 100000000,
         "Vocabulary; input embedding and output layer of vocab x hidden each (0: none)."),
    UINT("workload.model.ffn_hidden", workload.model.ffn_hidden, "0", 0, 100000000,
         "Feed-forward width; 0 is 4 x hidden."),
    BOOL("workload.model.gated_ffn", workload.model.gated_ffn, "false",
         "Gated feed-forward (SwiGLU): three matrices of hidden x ffn_hidden instead of two."),
    LIST("workload.model.mlp_layers", workload.model.mlp_layers, "[]", 1, 1000000000,
         "A plain MLP instead of a transformer: layer widths, input first ([784, 128, 10]); "
         "weights and biases. Empty: a transformer."),
    UINT("workload.model.experts", workload.model.experts, "0", 0, 1000000,
         "Mixture of experts: routed experts per MoE layer; 0 is a dense model."),
    UINT("workload.model.top_k", workload.model.top_k, "2", 1, 1024,
         "Routed experts each token is sent to."),
    UINT("workload.model.shared_experts", workload.model.shared_experts, "0", 0, 1024,
         "Experts every token goes through, beside the routed ones."),
    UINT("workload.model.expert_hidden", workload.model.expert_hidden, "0", 0, 100000000,
         "Feed-forward width of one expert; 0 is workload.model.ffn_hidden."),
    UINT("workload.model.dense_layers", workload.model.dense_layers, "0", 0, 100000,
         "Leading layers of an MoE model that keep a dense feed-forward (DeepSeek-V3: 3)."),
    UINT("workload.model.node_limit", workload.model.node_limit, "0", 0, 1000000,
         "MoE: each token's experts lie on at most this many nodes (DeepSeek-V3: 4); 0: any."),
    ENUM("workload.model.routing", workload.model.routing, "sampled", moe_routing_names,
         "MoE token routing: sampled (a top-k router over seeded affinities, node-limited as "
         "DeepSeek-V3: the workload.model.node_limit nodes with the highest sum of their top "
         "k/limit affinities, then the top k experts there; dispatch and combine bytes follow "
         "the nodes and GPUs the router's tokens reach, on average fewer than k) or balanced "
         "(every token reaches min(limit, nodes, k) nodes and as many GPUs as it can: the "
         "upper bound, fabsim's model before 2026-11)."),
    DBL("workload.model.expert_skew", workload.model.expert_skew, "0", 0, 0,
        "MoE hot experts (routing sampled): expert popularity falls as (1 + rank)^-skew over "
        "a seeded order of the experts, so the GPUs and links of the hot ones carry more; 0 "
        "is uniform (what auxiliary-loss-free balancing aims at, DeepSeek-V3 sec. 2.1.2)."),
    BOOL("workload.model.dropout", workload.model.dropout, "false",
         "Dropout after the attention scores, the attention output and the MLP (GPT-3); "
         "Llama 3 and DeepSeek-V3 train without. The masks kept (one byte per element; "
         "FlashAttention regenerates its own), written by the residual adds (and by unfused "
         "attention's dropout kernel) and read in the backward pass."),
    UINT("workload.parallel.dp", workload.parallel.dp, "0", 0, UINT32_MAX,
         "Data-parallel degree; 0 uses every GPU the others leave: GPUs / (tp x pp)."),
    UINT("workload.parallel.tp", workload.parallel.tp, "1", 1, 1024,
         "Tensor-parallel degree (Megatron: attention heads and feed-forward split)."),
    UINT("workload.parallel.pp", workload.parallel.pp, "1", 1, 100000,
         "Pipeline-parallel degree: stages of consecutive layers, 1F1B schedule."),
    UINT("workload.parallel.ep", workload.parallel.ep, "1", 1, 1000000,
         "Expert-parallel degree, within the data-parallel ranks (divides dp)."),
    UINT("workload.parallel.zero", workload.parallel.zero, "0", 0, 3,
         "ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 also weights over dp."),
    BOOL("workload.parallel.sequence_parallel", workload.parallel.sequence_parallel, "true",
         "Megatron sequence parallelism: activations outside attention and MLP are split over "
         "tp too."),
    ENUM("workload.parallel.order", workload.parallel.order, "tp-pp-dp", rank_order_names,
         "Rank placement, innermost first: tp-pp-dp puts a tensor-parallel group on "
         "consecutive GPUs (one node), then pipeline stages, then data-parallel replicas."),
    ENUM("workload.parallel.dp_algorithm", workload.parallel.dp_algorithm, "ring",
         coll_algorithm_names,
         "Data-parallel gradient AllReduce: ring, tree, halving-doubling or hierarchical "
         "(ReduceScatter and AllGather use it when it offers them, else ring)."),
    UINT("workload.parallel.virtual_stages", workload.parallel.virtual_stages, "1", 1, 1024,
         "Interleaved 1F1B: model chunks per GPU (Megatron's virtual pipeline stages); the "
         "layers split into pp x virtual_stages chunks, chunk c of GPU stage s is virtual stage "
         "c pp + s. Needs workload.pipeline.schedule interleaved when above 1."),
    UINT("workload.pipeline.first_stage_layers", workload.pipeline.first_stage_layers, "0", 0,
         100000,
         "Layers of pipeline stage 0 (Megatron-LM's --decoder-first-pipeline-num-layers; "
         "Llama 3 405B gives the stages at the two ends one layer fewer), split over its "
         "virtual stages; the stages without a given count share the rest evenly. 0: every "
         "stage gets an even share."),
    UINT("workload.pipeline.last_stage_layers", workload.pipeline.last_stage_layers, "0", 0, 100000,
         "Layers of the last pipeline stage, the one with the output layer (Megatron-LM's "
         "--decoder-last-pipeline-num-layers); 0: an even share."),
    ENUM("workload.pipeline.schedule", workload.pipeline.schedule, "1f1b", schedule_names,
         "Pipeline schedule: 1f1b (Narayanan et al. 2021), interleaved (1F1B over "
         "workload.parallel.virtual_stages chunks per GPU; micro-batches a multiple of pp), or "
         "dualpipe (DeepSeek-V3: two directions, forward and backward chunks overlapped so the "
         "one's communication runs under the other's compute, weight gradients deferred; pp "
         "even, at least 2 pp micro-batches, an even count)."),
    BOOL("workload.overlap.tp", workload.overlap.tp, "false",
         "Tensor-parallel collectives overlapped with the GEMM they feed, as Megatron's "
         "--tp-comm-overlap (off by default there too)."),
    BOOL("workload.overlap.pxn", workload.overlap.pxn, "true",
         "All-to-all with pxn: each node offset's data is forwarded over NVLink to the GPU on "
         "the peer's rail while the previous offset's crosses the fabric, as NCCL pipelines "
         "PXN; false forwards all of it first."),
    UINT("workload.overlap.ep_chunks", workload.overlap.ep_chunks, "8", 1, 1024,
         "MoE dispatch and combine in this many chunks, so the network hop of one chunk runs "
         "while the NVLink hop of the previous one does (DeepEP's forwarding); 1 runs the two "
         "hops one after the other."),
    UINT("workload.overlap.ep_sms", workload.overlap.ep_sms, "20", 0, 100000,
         "SMs an expert-parallel dispatch or combine kernel holds while it runs (DeepSeek-V3: "
         "20 of H800's 132); other collectives hold one per channel."),
    BOOL("workload.overlap.sm_offload", workload.overlap.sm_offload, "false",
         "Communication takes no SMs (copy engines, in-network offload): overlapped compute "
         "keeps its speed."),
    ENUM("workload.precision", workload.precision, "bf16", precision_names,
         "Training precision: compute peak and bytes per weight, gradient and activation."),
    ENUM("workload.optimizer", workload.optimizer, "adam", optimizer_names,
         "adam: fp32 master weights, momentum and variance; sgd: master weights and momentum."),
    UINT("workload.micro_batch", workload.micro_batch, "1", 1, 1000000,
         "Sequences per micro-batch on each data-parallel replica."),
    UINT("workload.global_batch", workload.global_batch, "0", 0, UINT32_MAX,
         "Sequences per step over all replicas, a multiple of dp x micro_batch; 0 is "
         "dp x micro_batch x (4 x pp when pp > 1, else 1)."),
    ENUM("workload.recompute", workload.recompute, "none", recompute_names,
         "Activation recomputation (Megatron-LM's --recompute-granularity): selective "
         "recomputes the parts in workload.recompute_modules in the backward pass, full keeps "
         "only the input of each group of layers (workload.recompute_method) and reruns their "
         "forward."),
    NAMES("workload.recompute_modules", workload.recompute_modules, "[core_attn]",
          recompute_module_names,
          "What selective recomputation recomputes (Megatron-LM's --recompute-modules): "
          "core_attn the attention core (its scores, or FlashAttention's statistics), "
          "layernorm the norms' outputs, mlp a dense layer's feed-forward, moe_act the "
          "experts' activation function (DeepSeek-V3's SwiGLU); op, alone, torchtitan's "
          "selective op checkpointing (selective_ac_option = 'op'): a layer keeps its input and "
          "the outputs of every odd-numbered matmul (Q, V, gate, down projection) and of the "
          "attention core, and reruns the K, output and up projections and every element-wise "
          "operation in the backward pass."),
    ENUM("workload.recompute_method", workload.recompute_method, "uniform", recompute_method_names,
         "Full recomputation (Megatron-LM's --recompute-method): uniform keeps the input of "
         "every group of workload.recompute_layers layers, block recomputes only the first "
         "workload.recompute_layers layers of each model chunk and keeps the others' "
         "activations."),
    UINT("workload.recompute_layers", workload.recompute_layers, "1", 0, 100000,
         "Full recomputation (Megatron-LM's --recompute-num-layers): layers per group "
         "(uniform, at least 1) or recomputed layers per model chunk (block)."),
    ENUM("workload.attention", workload.attention, "flash", attention_names,
         "Attention kernel: flash (FlashAttention: the scores are never stored, only their "
         "softmax statistics, and the backward pass recomputes them) or unfused (the scores and "
         "softmax are kept for the backward pass, s x s per head, and timed as their own kernels: "
         "the score and value GEMMs over the whole s x s square, the softmax through HBM)."),
    DBL("workload.compute_efficiency", workload.compute_efficiency, "0", 0, 0,
        "0: each kernel's time from the kernel model (GEMMs by shape over the GPU's SMs, "
        "attention by sequence length and head dimension, FP8 casts, launch gaps; "
        "docs/training.md, Compute). A fraction in (0, 1]: the single-efficiency roofline "
        "instead, every GEMM and attention matmul at the precision's peak x it (less 128 x 128 "
        "tile quantization), as fabsim did before the kernel model."),
    ENUM("workload.fp8_recipe", workload.fp8_recipe, "delayed", fp8_recipe_names,
         "FP8 scaling (workload.precision fp8), Megatron-LM's --fp8-recipe names: delayed "
         "(Transformer Engine's default: per-tensor scales from an amax history), tensorwise "
         "(per-tensor scales of the current amax: one more read of each tensor), blockwise "
         "(DeepSeek-V3: 1 x 128 activation and 128 x 128 weight blocks, the GEMM's own rate)."),
    BOOL("workload.cuda_graphs", workload.cuda_graphs, "false",
         "Kernels launched as CUDA graphs: each kernel's launch gap on the GPU is the graph's "
         "(0.5 us) instead of a stream launch's (0.9 us)."),
    DBL("workload.host_op_time", workload.host_op_time, "8e-6", 0, 0,
        "Seconds the host takes to issue one kernel from the framework's eager mode (Python, "
        "the PyTorch dispatcher, the launch: 8 us measured on an A100 host; docs/validation.md). "
        "It binds where the host cannot run ahead of the GPU: after each host synchronization "
        "(workload.moe.host_sync), the kernels up to the next one run no faster than the host "
        "issues them."),
    ENUM("workload.moe.grouped_gemm", workload.moe.grouped_gemm, "multi_stream", grouped_gemm_names,
         "How a GPU's local experts' GEMMs run: multi_stream (Transformer Engine's GroupedLinear "
         "as Megatron-Core runs it: one cuBLAS GEMM per expert, round-robin over 4 CUDA "
         "streams, each its own tile and wave quantization and fixed time, a launch each) or "
         "grouped (one grouped kernel for all of them: CUTLASS grouped GEMM, DeepGEMM)."),
    BOOL("workload.moe.host_sync", workload.moe.host_sync, "true",
         "Expert parallelism without a token capacity (dropless, Megatron-Core's all-to-all "
         "dispatcher): before each MoE layer's dispatch the host waits for the GPU's token "
         "counts (the all-to-all's split sizes), so from there to the next MoE layer's wait "
         "the GPU runs no faster than the host issues kernels (workload.host_op_time), plus "
         "the wait itself. false: a dispatcher without it (token capacity, device-side "
         "counts, a CUDA graph)."),
    SIZE("workload.bucket_size", workload.bucket_size, "25MiB",
         "Gradients per data-parallel reduction bucket (PyTorch DDP's default)."),
    BOOL("workload.grad_overlap", workload.grad_overlap, "true",
         "Reduce each gradient bucket as soon as the backward pass has produced it (else "
         "after the whole backward pass)."),
    ENUM("workload.grad_reduce", workload.grad_reduce, "auto", grad_reduce_names,
         "The dtype of the data-parallel gradient reductions (AllReduce, ReduceScatter): "
         "auto the gradients' own (2 bytes; 4 under workload.precision fp32), bf16 2 bytes, "
         "fp32 4 bytes an element (PyTorch FSDP2's MixedPrecisionPolicy reduce_dtype, "
         "torchtitan's training.mixed_precision_reduce, whose default is float32)."),
    ENUM("workload.zero_impl", workload.zero_impl, "flat", zero_impl_names,
         "How ZeRO 3 holds what it gathers and reduces: flat gathers each group of parameters "
         "into one buffer the layer computes from and reduces the gradients from one (no "
         "copies timed); per_param is PyTorch FSDP2's per-parameter sharding (torchtitan): the "
         "all-gather output is copied out into the parameters (read and write, on the compute "
         "stream before the layer's computation), the gradients are copied into the "
         "reduce-scatter input in the workload.grad_reduce dtype (on the compute stream after "
         "the layer's backward), and a weight-gradient GEMM writes its gradient once in 16 "
         "bits."),
    ENUM("workload.comm_model", workload.comm_model, "auto", comm_model_names,
         "live: every collective of the step runs on the backend; reuse: each distinct one "
         "(kind, size, pipeline stage) runs once, alone, and its time is reused; symmetric: "
         "as reuse, with pipeline stages alike (measured on the first stage); auto: the first "
         "of these under 2 M transfers (live at the packet fidelity: 20 k)."),
    UINT("workload.steps", workload.steps, "1", 1, 1000000,
         "Training steps fabsim run simulates one after another (faults and throttling act "
         "across them; the step object reports the first, steps[] each); for "
         "workload.kind trace, the iterations of the traces (each rank starts its next "
         "when its own ends; trace.iteration_s reports each)."),
    UINT("workload.checkpoint.every", workload.checkpoint.every, "0", 0, 1000000,
         "Write a checkpoint to the storage servers after every this many steps (0: never); "
         "not after the last simulated step."),
    {.name = "workload.checkpoint.size",
     .type = CFG__SIZE,
     .def = "0",
     .min = 0,
     .doc = "Bytes of one checkpoint; 0: from the model, its parameters x (weight + optimizer "
            "bytes per parameter at workload.precision and optimizer; bf16 Adam: 2 + 12).",
     FIELD(workload.checkpoint.size)},
    ENUM("workload.checkpoint.mode", workload.checkpoint.mode, "async", ckpt_mode_names,
         "async: the write runs while the next steps train; sync: the job waits for it."),
    BOOL("workload.data_loading", workload.data_loading, "false",
         "Read each next step's input tokens from the storage servers at the end of a step "
         "(a prefetching data loader: the step does not wait for it); 4 bytes per token."),
    {.name = "workload.trace.path",
     .type = CFG__STRING,
     .def = "none",
     .doc = "Chakra execution traces (workload.kind trace), one per rank: a path in which %d "
            "stands for the rank (traces/et.%d.et: rank 3 reads traces/et.3.et), or one file "
            "every rank runs; relative to the scenario's folder. docs/training.md, Chakra "
            "traces.",
     FIELD(workload.trace.path)},
    UINT("workload.trace.ranks", workload.trace.ranks, "0", 0, UINT32_MAX,
         "Ranks of the traced job, rank r on GPU r; 0 = every GPU of the cluster (in a job "
         "of jobs:, rank r on the job's r-th GPU; 0 = every GPU of the job)."),
    {.name = "workload.trace.classes",
     .type = CFG__STRING,
     .def = "none",
     .doc = "One trace per rank class instead of workload.trace.path: FIRST-LAST:FILE items, "
            "comma-separated, covering every rank once (0-3:dp.et,4-7:dp.et); none: by path.",
     FIELD(workload.trace.classes)},
    ENUM("workload.trace.compute", workload.trace.compute, "recorded", trace_compute_names,
         "A compute node's time: its recorded duration_micros, or roofline: max(num_ops / "
         "(cluster.gpu_flops at workload.precision x the GPU's measured large-GEMM share, or "
         "workload.compute_efficiency when set), tensor_size / cluster.hbm_bandwidth) where "
         "num_ops is present (else recorded)."),
    UINT("workload.inference.tp", workload.inference.tp, "1", 1, 1024,
         "Serving (workload.kind inference): tensor-parallel GPUs of each replica (within a "
         "node: the GPUs of a replica are consecutive); each layer all-reduces its output "
         "twice."),
    UINT("workload.inference.replicas", workload.inference.replicas, "1", 1, 1000000,
         "Copies of the model serving the request stream, each on workload.inference.tp GPUs; "
         "tp x replicas GPUs at most the cluster's."),
    UINT("workload.inference.max_batch", workload.inference.max_batch, "1024", 1, 1000000,
         "Sequences in one iteration at most (vLLM's max_num_seqs; its default on GPUs of 70 "
         "GiB and more, docs/inference.md)."),
    UINT("workload.inference.max_tokens", workload.inference.max_tokens, "8192", 1, 10000000,
         "Tokens in one iteration at most, prompt chunks and decodes together (vLLM's "
         "max_num_batched_tokens; its default on GPUs of 70 GiB and more)."),
    BOOL("workload.inference.chunk", workload.inference.chunk, "true",
         "Chunked prefill: running decodes first, then prompts split to fill the token budget "
         "(vLLM's V1 scheduler). false: an iteration prefills whole prompts, else decodes."),
    UINT("workload.inference.block", workload.inference.block, "16", 1, 65536,
         "Tokens per KV-cache block: the cache is allocated in blocks (vLLM's block_size)."),
    DBL("workload.inference.memory_utilization", workload.inference.memory_utilization, "0.9", 0, 1,
        "Share of cluster.gpu_memory the server uses (vLLM's gpu_memory_utilization); the "
        "KV cache gets what the weights and workload.inference.kv_reserve leave; at most 1."),
    {.name = "workload.inference.kv_reserve",
     .type = CFG__SIZE,
     .def = "0",
     .min = 0,
     .doc = "Bytes per GPU kept from the KV cache for activations and workspace (vLLM "
            "measures its peak by a profiling run; not modelled: give it here).",
     FIELD(workload.inference.kv_reserve)},
    UINT("workload.inference.kv_latent", workload.inference.kv_latent, "0", 0, 1000000,
         "Multi-head latent attention (MLA): elements cached per token and layer (DeepSeek-V3: "
         "512 + 64); 0: K and V of workload.model.kv_heads heads."),
    UINT("workload.inference.kv_bytes", workload.inference.kv_bytes, "2", 1, 8,
         "Bytes per cached key/value element (2: the model's 16-bit dtype, vLLM's "
         "kv_cache_dtype auto; 1: fp8)."),
    DBL("workload.inference.rate", workload.inference.rate, "1", 0, 1,
        "Requests per second arriving (a Poisson process, seeded by simulation.seed); not "
        "with workload.inference.trace."),
    {.name = "workload.inference.trace",
     .type = CFG__STRING,
     .def = "none",
     .doc = "Requests from a CSV file instead of the Poisson stream: Vidur's columns "
            "arrived_at (s, non-decreasing), num_prefill_tokens, num_decode_tokens (a header "
            "row names them; other columns are ignored); relative to the scenario's folder.",
     FIELD(workload.inference.trace)},
    UINT("workload.inference.requests", workload.inference.requests, "1000", 0, 100000000,
         "Requests of the Poisson stream; 0: those arriving within workload.inference.duration."),
    TIME("workload.inference.duration", workload.inference.duration, "0",
         "With workload.inference.requests 0: the Poisson stream's arrivals in [0, duration); "
         "the run ends when the last request is done."),
    UINT("workload.inference.prompt_tokens", workload.inference.prompt_tokens, "2048", 1, 100000000,
         "Poisson stream: prompt tokens of each request."),
    UINT("workload.inference.output_tokens", workload.inference.output_tokens, "128", 1, 100000000,
         "Poisson stream: tokens each request generates."),
    ENUM("workload.inference.dispatch", workload.inference.dispatch, "round-robin",
         inf_dispatch_names,
         "Replica an arriving request goes to: round-robin, or least-loaded (fewest requests "
         "waiting and running; the lowest index on a tie)."),
    TIME("workload.inference.slo.ttft", workload.inference.slo_ttft, "2s",
         "Target time to first token (MLPerf Inference's Llama 2 70B server: 2 s)."),
    TIME("workload.inference.slo.tpot", workload.inference.slo_tpot, "200ms",
         "Target time per output token after the first (MLPerf Inference's Llama 2 70B "
         "server: 200 ms)."),

    /* reliability.rate.*: presets by reliability.rates (the *_by_rates arrays above, with
     * their sources); the default, llama3-16k, is Meta's Llama 3 report, Table 5. */
    DBL("reliability.days", reliability.days, "54", 0, 1, "Length of the training run in days."),
    DBL("reliability.node_failure_rate", reliability.node_failure_rate, "0", 0, 0,
        "Job interruptions per 1,000 node-days; overrides the per-cause rates (split in their "
        "proportion). 0 = the sum of reliability.rate.*."),
    SIZE("reliability.checkpoint.size", reliability.checkpoint.size, "6.48TB",
         "Bytes of one checkpoint (default: 405e9 parameters x 16 bytes of mixed-precision Adam "
         "state)."),
    BW("reliability.checkpoint.bandwidth", reliability.checkpoint.bandwidth, "2TB/s", 1,
       "Aggregate checkpoint write bandwidth (Llama 3: 2 TB/s sustained storage throughput)."),
    {.name = "reliability.checkpoint.write_time",
     .type = CFG__TIME,
     .def = "0s",
     .doc = "Time the job stalls to write one checkpoint; 0 = checkpoint.size / "
            "checkpoint.bandwidth.",
     FIELD(reliability.checkpoint.write_time)},
    {.name = "reliability.checkpoint.interval",
     .type = CFG__STRING,
     .def = "auto",
     .doc = "Compute time between checkpoints: a duration, or auto (Daly's interval).",
     FIELD(reliability.checkpoint.interval)},
    TIME("reliability.restart_time", reliability.restart_time, "10min",
         "Time from an interruption to training again (detect, reschedule, reload the last "
         "checkpoint), assumption."),
    UINT("reliability.spares", reliability.spares, "0", 0, 1000000,
         "Hot spare nodes: a node failure is swapped onto a free spare at no extra delay."),
    TIME("reliability.repair_time", reliability.repair_time, "3d",
         "A failed node returns to the spare pool after this (assumption)."),
    TIME("reliability.no_spare_delay", reliability.no_spare_delay, "2h",
         "Extra restart delay of a node failure when no hot spare is free: drain, diagnose and "
         "swap in a cold node (assumption)."),
    UINT("reliability.sdc_check_interval", reliability.sdc_check_interval, "0", 0, 1000000,
         "Compare checksums of the data-parallel replicas every this many steps (0 = never): "
         "when fabsim run would detect a silent data corruption fault."),
    {.name = "reliability.reconvergence",
     .type = CFG__TIME,
     .def = NULL,
     .derive = CFG__DERIVE_TRANSPORT,
     .by_value = reconvergence_by_transport,
     .doc = "Faults: routing moves traffic off a failed link or switch this long after the "
            "failure (and back after a repair); until then flows on it stall. auto: by transport, "
            "InfiniBand subnet-manager recompute (trap-driven sweep; OpenSM's periodic sweep is "
            "10 s), Ethernet/RoCE BGP with BFD (RFC 7938, RFC 5880: 3 x 50 ms detection plus "
            "updates); docs/faults.md.",
     FIELD(reliability.reconvergence)},
    UINT("reliability.monte_carlo.runs", reliability.monte_carlo.runs, "2000", 1, 10000000,
         "Simulated runs of the Monte Carlo (seeded by simulation.seed)."),
    ENUM("reliability.rates", reliability.rates, "llama3-16k", rel_rates_names,
         "Failure-rate presets of reliability.rate.*: llama3-16k (Llama 3's 16,384-GPU run), "
         "rsc-1 or rsc-2 (Meta's research clusters of 16K and 8K A100); docs/reliability.md."),
#define BY_RATES .def = NULL, .derive = CFG__DERIVE_RATES
#define RATE(key, m, values, text)                                                          \
  {                                                                                         \
    .name = key, .type = CFG__DOUBLE, BY_RATES, .by_value = values, .dmin = 0, .doc = text, \
    FIELD(m)                                                                                \
  }
    RATE("reliability.rate.faulty_gpu", reliability.rate.faulty_gpu, faulty_gpu_by_rates,
         "Faulty GPU, per 1,000 node-days of 8 GPUs (Llama 3: 148); scales with GPUs per node."),
    RATE("reliability.rate.hbm", reliability.rate.hbm, hbm_by_rates,
         "GPU HBM3 memory (Llama 3: 72); per GPU."),
    RATE("reliability.rate.software", reliability.rate.software, software_by_rates,
         "Software bug (Llama 3: 54); per node, restarts without a node swap."),
    RATE("reliability.rate.network", reliability.rate.network, network_by_rates,
         "Network switch or cable (Llama 3: 35); per node, no node swap."),
    RATE("reliability.rate.host", reliability.rate.host, host_by_rates,
         "Unplanned host maintenance (Llama 3: 32); per node."),
    RATE("reliability.rate.sram", reliability.rate.sram, sram_by_rates,
         "GPU SRAM memory (Llama 3: 19); per GPU."),
    RATE("reliability.rate.gsp", reliability.rate.gsp, gsp_by_rates,
         "GPU system processor (Llama 3: 17); per GPU."),
    RATE("reliability.rate.nic", reliability.rate.nic, nic_by_rates,
         "NIC (Llama 3: 7); scales with NICs per node."),
    RATE("reliability.rate.nccl", reliability.rate.nccl, nccl_by_rates,
         "NCCL watchdog timeout (Llama 3: 7); per node, no node swap."),
    RATE("reliability.rate.sdc", reliability.rate.sdc, sdc_by_rates,
         "Silent data corruption (Llama 3: 6); per GPU."),
    RATE("reliability.rate.thermal", reliability.rate.thermal, thermal_by_rates,
         "GPU thermal interface and sensor (Llama 3: 6); per GPU."),
    RATE("reliability.rate.other_hardware", reliability.rate.other_hardware,
         other_hardware_by_rates,
         "SSD, power supply, chassis, IO board, CPU, system memory (Llama 3: 14); per node."),
    RATE("reliability.rate.dependency", reliability.rate.dependency, dependency_by_rates,
         "External dependency (Llama 3: 2); per node, no node swap."),

    /* power.*: sources in docs/reliability.md; "assumption" marks our own estimates. */
    {.name = "power.gpu_tdp_w",
     .type = CFG__DOUBLE,
     BY_GPU,
     .by_value = gpu_tdp_by_gpu,
     .dmin = 0,
     .dmin_exclusive = 1,
     .doc = "GPU board power at full load, watts (datasheet TDP).",
     FIELD(power.gpu_tdp_w)},
    {.name = "power.gpu_idle_w",
     .type = CFG__DOUBLE,
     BY_GPU,
     .by_value = gpu_idle_by_gpu,
     .dmin = 0,
     .doc = "GPU power when idle, watts (assumption).",
     FIELD(power.gpu_idle_w)},
    {.name = "power.node_w",
     .type = CFG__DOUBLE,
     BY_GPU,
     .by_value = node_w_by_gpu,
     .dmin = 0,
     .doc = "Server power besides GPUs and NICs (CPUs, memory, NVSwitch, fans), watts: the "
            "DGX datasheet's maximum less 8 GPUs at TDP and 8 NICs.",
     FIELD(power.node_w)},
    DBL("power.nic_w", power.nic_w, "25", 0, 0, "Power per NIC, watts (assumption)."),
    DBL("power.switch_port_w", power.switch_port_w, "12", 0, 0,
        "Fabric switch power per port without optics, watts (assumption)."),
    DBL("power.transceiver_w", power.transceiver_w, "9", 0, 0,
        "Power per optical transceiver, watts (assumption; 400G class)."),
    DBL("power.pue", power.pue, "1.2", 1, 0,
        "Facility power usage effectiveness: facility power / IT power."),
    DBL("power.usd_per_kwh", power.usd_per_kwh, "0.08", 0, 0,
        "Electricity price, USD per kWh (assumption)."),
    DBL("power.utilization", power.utilization, "0.8", 0, 0,
        "Mean GPU utilization, 0..1: GPU power = idle + utilization x (TDP - idle)."),
    TIME("power.step_time", power.step_time, "1s", "Training step time for energy per step."),
    {.name = "power.timeseries",
     .type = CFG__BOOL,
     .def = "false",
     .doc = "Power over time in fabsim run: the GPUs' sampled states at their power, the rest of "
            "IT and PUE, as columns of timeseries.csv and the summary's power.over_time (peak, "
            "trough, swing per step, ramp rate, band energy). docs/power.md.",
     .quiet = 1,
     FIELD(power.timeseries)},
    {.name = "power.bands",
     .type = CFG__STRING,
     .def = "none",
     .doc = "Frequency bands of the facility power's spectrum reported in power.over_time, Hz: "
            "LO-HI,LO-HI,... (0 <= LO < HI, increasing, not overlapping; e.g. 0.1-1,1-20), or "
            "none. No default band: no published grid limit was found to cite.",
     .quiet = 1,
     FIELD(power.bands)},
    UINT("power.rack.servers", power.rack.servers, "4", 1, 1024, "Servers per rack."),
    ENUM("power.rack.cooling", power.rack.cooling, "air", cooling_names,
         "Rack cooling: air or direct liquid."),
    DBL("power.rack.cooling_kw", power.rack.cooling_kw, "0", 0, 0,
        "Heat a rack can remove, kW; 0 = by power.rack.cooling: air 40, liquid 120 "
        "(assumption). A rack above it throttles its GPUs."),
    DBL("power.rack.cap_kw", power.rack.cap_kw, "0", 0, 0,
        "Rack power cap, kW; 0 = none. A rack above it throttles its GPUs."),
    {.name = "power.rack.cooling_failure",
     .type = CFG__STRING,
     .def = "none",
     .doc = "One rack with reduced cooling in fabsim run: RACK:KW (e.g. 3:20, rack 3 can remove "
            "20 kW), or none. Its GPUs throttle if it draws more.",
     FIELD(power.rack.cooling_failure)},
    /* power.mitigation.*: quiet (left out of the dump at their defaults); docs/power.md */
    {.name = "power.mitigation.floor",
     .type = CFG__DOUBLE,
     .def = "0",
     .dmin = 0,
     .doc = "GPU power floor, fraction of power.gpu_tdp_w (0..1; NVML's power smoothing "
            "floor): no GPU draws less, so the swing shrinks and the floor's energy is added. "
            "0 = none. Needs power.timeseries.",
     .quiet = 1,
     FIELD(power.mitigation.floor)},
    {.name = "power.mitigation.ramp_up_w_per_s",
     .type = CFG__DOUBLE,
     .def = "0",
     .dmin = 0,
     .doc = "Most a GPU's power may rise per second, W/s (NVML power smoothing's ramp-up "
            "rate): a clipped rise slows the compute (step time). 0 = no limit.",
     .quiet = 1,
     FIELD(power.mitigation.ramp_up_w_per_s)},
    {.name = "power.mitigation.ramp_down_w_per_s",
     .type = CFG__DOUBLE,
     .def = "0",
     .dmin = 0,
     .doc = "Most a GPU's power may fall per second, W/s (NVML's ramp-down rate): the GPU "
            "burns the difference (energy). 0 = no limit.",
     .quiet = 1,
     FIELD(power.mitigation.ramp_down_w_per_s)},
    {.name = "power.mitigation.pacing",
     .type = CFG__DOUBLE,
     .def = "0",
     .dmin = 0,
     .doc = "Software pacing: work injected while a GPU waits on the network or a pipeline "
            "peer holds it at this fraction of power.gpu_tdp_w (0..1; energy added). 0 = none.",
     .quiet = 1,
     FIELD(power.mitigation.pacing)},
    {.name = "power.mitigation.facility_cap_kw",
     .type = CFG__DOUBLE,
     .def = "0",
     .dmin = 0,
     .doc = "Facility power cap, kW: rows above it slow their compute by the cubic "
            "power-performance curve (step time). 0 = none.",
     .quiet = 1,
     FIELD(power.mitigation.facility_cap_kw)},
    {.name = "power.mitigation.battery.kwh",
     .type = CFG__DOUBLE,
     .def = "0",
     .dmin = 0,
     .doc = "Battery energy per rack, kWh, shaving the IT power's peaks to its mean (starts "
            "full). 0 = none.",
     .quiet = 1,
     FIELD(power.mitigation.battery.kwh)},
    {.name = "power.mitigation.battery.kw",
     .type = CFG__DOUBLE,
     .def = "0",
     .dmin = 0,
     .doc = "Battery power per rack, kW, charging or discharging. 0 = no limit.",
     .quiet = 1,
     FIELD(power.mitigation.battery.kw)},
    {.name = "power.mitigation.battery.efficiency",
     .type = CFG__DOUBLE,
     .def = "0.82",
     .dmin = 0,
     .dmin_exclusive = 1,
     .doc = "Battery round-trip efficiency, 0..1 (US utility batteries in 2019: 82 %, EIA).",
     .quiet = 1,
     FIELD(power.mitigation.battery.efficiency)},

    UINT("simulation.seed", simulation.seed, "1", 0, UINT64_MAX,
         "Seed of every random stream; same seed, same output."),
    ENUM("simulation.fidelity", simulation.fidelity, "analytic", fidelity_names,
         "Backend: analytic (alpha-beta), flow (max-min fair), packet."),
    ENUM("simulation.engine", simulation.engine, "auto", engine_names,
         "Event engine of the packet fidelity: sequential (one process), parallel (one "
         "logical process per vertex on the conservative parallel engine: under mpirun over "
         "the ranks, else its sequential mode, whose results every rank count reproduces), "
         "auto (parallel when started by mpirun). docs/parallel.md."),

    {.name = "simulation.memory_limit",
     .type = CFG__SIZE,
     .def = "0",
     .min = 0,
     .doc = "Memory a run may use; 0 = what the machine has available (MemAvailable). A "
            "scenario whose estimate (per GPU and per link at its fidelity, printed by "
            "fabsim topo) exceeds it is refused before anything is built; a run whose "
            "structures grow past it stops with exit status 3.",
     FIELD(simulation.memory_limit)},

    {.name = "output.dir",
     .type = CFG__STRING,
     .def = "fabsim-out",
     .doc = "Folder for summary.json, time series and reports.",
     FIELD(output.dir)},
    TIME("output.sample_interval", output.sample_interval, "0s",
         "Telemetry sample interval (timeseries.csv, report charts); 0 = about 500 samples "
         "over the expected run."),
    {.name = "output.ports",
     .type = CFG__STRING,
     .def = "none",
     .doc = "Comma-separated switch ports (leaf0-spine3: leaf0's port toward spine3; "
            "core1-spine4/0 on a link of a partial 3-tier build's bundle) and NICs "
            "(nic17) whose full time series are kept; none: aggregates only.",
     FIELD(output.ports)},
    {.name = "output.database",
     .type = CFG__STRING,
     .def = "results.sqlite",
     .doc = "SQLite results database; a relative path is inside output.dir; runs naming the "
            "same file share it; none: no database.",
     FIELD(output.database)},
    {.name = "output.report",
     .type = CFG__BOOL,
     .def = "true",
     .doc = "Write report.html, one self-contained page with charts.",
     FIELD(output.report)},
    {.name = "output.openmetrics",
     .type = CFG__BOOL,
     .def = "false",
     .doc = "Also write the final counters as OpenMetrics text (metrics.txt).",
     FIELD(output.openmetrics)},
    UINT("output.top_ports", output.top_ports, "10", 0, 1000,
         "Hottest switch ports listed in the report and database."),
    {.name = "output.max_rows",
     .type = CFG__UINT,
     .def = "100000",
     .min = 1,
     .max = 100000000,
     .doc = "Rows of timeseries.csv (and the report's and database's series) at most: a "
            "sample interval that would give more over the run is widened to the smallest 1, "
            "2 or 5 x 10^k ps that fits, and summary.json telemetry.interval_requested_s and "
            "an interval-widened event say so.",
     .quiet = 1,
     FIELD(output.max_rows)},
    {.name = "output.max_events",
     .type = CFG__UINT,
     .def = "10000",
     .min = 1,
     .max = 100000000,
     .doc = "Events kept in summary.json, events.csv, report.html and the database at most, "
            "the earliest; past it an events-truncated event says how many later ones were "
            "left out.",
     .quiet = 1,
     FIELD(output.max_events)},
    {.name = "output.flows",
     .type = CFG__BOOL,
     .def = "false",
     .doc = "Also write flows.csv and the database's flows table: one row per transfer (each "
            "repetition of a phase's point-to-point transfer, as the fidelity timed it): "
            "source and destination GPU and NIC, bytes, traffic class, job, phase, start, end, "
            "FCT and routed path (docs/outputs.md).",
     .quiet = 1,
     FIELD(output.flows)},
    {.name = "output.max_flows",
     .type = CFG__UINT,
     .def = "100000",
     .min = 1,
     .max = 100000000,
     .doc = "Rows of flows.csv (and of the database's flows table) at most, the earliest by "
            "start; past it a flows-truncated event says how many later ones were left out.",
     .quiet = 1,
     FIELD(output.max_flows)},

    {.name = "faults",
     .type = CFG__FAULTS,
     .def = "[]",
     .doc = "Faults inside the simulation, a list of {at, kind, target, ...} (flow and packet "
            "fidelities for network kinds); see the table below and docs/faults.md.",
     FIELD(faults)},
    {.name = "jobs",
     .type = CFG__JOBS,
     .def = "[]",
     .doc = "Several workloads sharing the fabric, a list of {name, gpus, placement, nodes, "
            "start, traffic_class, workload}; each workload takes the workload.* keys (any "
            "kind: collective, traffic, training, trace); see the table below and "
            "docs/shared-fabric.md.",
     FIELD(jobs)},
};

size_t cfg__nkeys(void) { return NELEM(schema); }
const cfg__key *cfg__key_at(size_t i) { return i < NELEM(schema) ? &schema[i] : NULL; }

const cfg__key *cfg__preset_selector(cfg__derive d) {
  static const char *const selector[] = {[CFG__DERIVE_GPU] = "cluster.gpu",
                                         [CFG__DERIVE_TRANSPORT] = "fabric.transport",
                                         [CFG__DERIVE_COST] = "cost.model",
                                         [CFG__DERIVE_RATES] = "reliability.rates"};
  const char *name = (size_t)d < NELEM(selector) ? selector[d] : NULL;
  int i = name ? cfg__find_key(name, strlen(name)) : -1;
  return i >= 0 ? &schema[i] : NULL;
}

int cfg__find_key(const char *name, size_t len) {
  for (size_t i = 0; i < NELEM(schema); i++)
    if (strlen(schema[i].name) == len && memcmp(schema[i].name, name, len) == 0) return (int)i;
  return -1;
}

int cfg__is_section(const char *name, size_t len) {
  if (len == 0) return 0;
  for (size_t i = 0; i < NELEM(schema); i++)
    if (strlen(schema[i].name) > len && memcmp(schema[i].name, name, len) == 0 &&
        schema[i].name[len] == '.')
      return 1;
  return 0;
}

/* ---- suggestions ----------------------------------------------------------------------- */

int cfg__field_find(const char *const *names, int n, const char *name, size_t len) {
  for (int i = 0; i < n; i++)
    if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) return i;
  return -1;
}

void cfg__field_unknown(const char *const *names, int n, const char *what, const char *allowed,
                        const char *name, size_t len, char *msg, size_t cap) {
  char shown[96];
  const char *best = NULL;
  size_t best_d = (size_t)-1;
  cfg__excerpt(shown, sizeof shown, name, len, 64);
  for (int i = 0; i < n; i++) {
    size_t d = len > SIM_SUGGEST_MAX ? (size_t)-1
                                     : sim_edit_distance(name, len, names[i], strlen(names[i]));
    if (d < best_d) best_d = d, best = names[i];
  }
  if (best && best_d <= 2)
    snprintf(msg, cap, "'%s' is not a %s field; did you mean '%s'?", shown, what, best);
  else snprintf(msg, cap, "'%s' is not a %s field; allowed %s", shown, what, allowed);
}

static const char *last_part(const char *s, size_t len, size_t *plen) {
  size_t i = len;
  while (i > 0 && s[i - 1] != '.') i--;
  *plen = len - i;
  return s + i;
}

/* A full name close by edit distance (sections count: "clustr" -> "cluster");
 * failing that, the only leaf with the same last part in another section
 * ("nodes", "fabric.nodes" -> "cluster.nodes"). */
const char *cfg__suggest(const char *name, size_t len) {
  static const char *const sections[] = {"cluster",
                                         "cluster.scale_up",
                                         "cluster.nic",
                                         "cluster.pcie",
                                         "fabric",
                                         "fabric.ecmp",
                                         "fabric.adaptive",
                                         "fabric.spray",
                                         "fabric.switch",
                                         "fabric.ecn",
                                         "fabric.roce",
                                         "fabric.pfc",
                                         "cost",
                                         "storage",
                                         "storage.nic",
                                         "storage.frontend",
                                         "storage.fabric",
                                         "management",
                                         "workload",
                                         "workload.collective",
                                         "workload.collective.latency",
                                         "workload.collective.latency.ll",
                                         "workload.collective.latency.ll128",
                                         "workload.collective.latency.simple",
                                         "workload.model",
                                         "workload.parallel",
                                         "workload.pipeline",
                                         "workload.trace",
                                         "workload.overlap",
                                         "workload.checkpoint",
                                         "simulation",
                                         "reliability",
                                         "reliability.checkpoint",
                                         "reliability.rate",
                                         "reliability.monte_carlo",
                                         "power",
                                         "power.rack",
                                         "power.mitigation",
                                         "power.mitigation.battery",
                                         "output",
                                         "faults",
                                         "jobs"};
  const char *best = NULL, *by_last = NULL;
  size_t best_d = (size_t)-1, lastlen, n_by_last = 0;
  const char *last = last_part(name, len, &lastlen);
  size_t allowed = len < 4 ? 0 : len < 8 ? 1 : len < 16 ? 2 : 3;
  if (len > SIM_SUGGEST_MAX) return NULL;
  for (size_t i = 0; i < NELEM(schema) + NELEM(sections); i++) {
    const char *cand = i < NELEM(schema) ? schema[i].name : sections[i - NELEM(schema)];
    size_t d = sim_edit_distance(name, len, cand, strlen(cand));
    if (d < best_d) best_d = d, best = cand;
    if (i < NELEM(schema) && lastlen > 0) {
      size_t cl;
      const char *cl_part = last_part(cand, strlen(cand), &cl);
      if (cl == lastlen && memcmp(last, cl_part, cl) == 0) by_last = cand, n_by_last++;
    }
  }
  if (best && best_d <= allowed) return best;
  return n_by_last == 1 ? by_last : NULL;
}

/* ---- text -> field ----------------------------------------------------------------------- */

/* Where a key's field lies: a scenario (off 0) or a part of one that starts
 * at `off` in cfg_scenario, such as a job's workload (offsetof workload). */
typedef struct cfg__into {
  char *base;
  size_t off;
} cfg__into;
static cfg__into into_scenario(cfg_scenario *s) { return (cfg__into){(char *)s, 0}; }
static void *field(cfg__into s, const cfg__key *k) { return s.base + (k->offset - s.off); }
static cfg__into into_workload(const cfg_workload *w) {
  return (cfg__into){(char *)(uintptr_t)w, offsetof(cfg_scenario, workload)};
}

static const void *cfield(cfg__into s, const cfg__key *k) { return field(s, k); }

static void describe_range(const cfg__key *k, char *out, size_t cap) {
  if (k->max == UINT64_MAX) snprintf(out, cap, "%llu..2^64-1", (unsigned long long)k->min);
  else if (k->max == UINT32_MAX) snprintf(out, cap, "%llu..2^32-1", (unsigned long long)k->min);
  else snprintf(out, cap, "%llu..%llu", (unsigned long long)k->min, (unsigned long long)k->max);
}

void cfg__describe_type(const cfg__key *k, char *out, size_t cap) {
  char range[64];
  size_t o;
  switch (k->type) {
  case CFG__UINT:
    describe_range(k, range, sizeof range);
    snprintf(out, cap, "integer %s", range);
    break;
  case CFG__DOUBLE:
    snprintf(out, cap, "number %s %g", k->dmin_exclusive ? ">" : ">=", k->dmin);
    break;
  case CFG__BANDWIDTH: snprintf(out, cap, "bandwidth%s", k->min ? " > 0" : ""); break;
  case CFG__TIME:
    snprintf(out, cap, k->derive == CFG__DERIVE_TRANSPORT ? "time or auto" : "time");
    break;
  case CFG__FAULTS: snprintf(out, cap, "list of faults"); break;
  case CFG__JOBS: snprintf(out, cap, "list of jobs"); break;
  case CFG__CLASSES: snprintf(out, cap, "list of classes"); break;
  case CFG__SIZE: snprintf(out, cap, "size%s", k->min ? " > 0" : ""); break;
  case CFG__BOOL: snprintf(out, cap, "true or false"); break;
  case CFG__LIST:
    if (k->names) {
      o = (size_t)snprintf(out, cap, "list of:");
      for (int i = 0; i < k->nnames && o < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%s %s", i ? "," : "", k->names[i]);
      break;
    }
    describe_range(k, range, sizeof range);
    snprintf(out, cap, "list of integers %s", range);
    break;
  case CFG__STRING: snprintf(out, cap, "string"); break;
  case CFG__ENUM:
    o = (size_t)snprintf(out, cap, "one of:");
    for (int i = 0; i < k->nnames && o < cap; i++)
      o += (size_t)snprintf(out + o, cap - o, "%s %s", i ? "," : "", k->names[i]);
    break;
  }
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

static int parse_uint(const cfg__key *k, const char *t, size_t n, uint64_t *out, char *msg,
                      size_t cap) {
  char shown[96], range[64];
  uint64_t v = 0;
  int overflow = 0;
  size_t i = 0;
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  describe_range(k, range, sizeof range);
  if (n == 0) {
    snprintf(msg, cap, "missing value; expected an integer %s", range);
    return SIM_ECONFIG;
  }
  if (t[0] == '-' && n > 1) i = 1; /* negative: reported as out of range below */
  for (size_t j = i; j < n; j++) {
    if (t[j] < '0' || t[j] > '9') {
      snprintf(msg, cap, "expected an integer %s, got '%s'", range, shown);
      return SIM_ECONFIG;
    }
    uint64_t digit = (uint64_t)(t[j] - '0');
    if (v > (UINT64_MAX - digit) / 10) overflow = 1;
    else v = v * 10 + digit;
  }
  if (overflow || (i == 1 && v != 0) || v < k->min || v > k->max) {
    snprintf(msg, cap, "%s is out of range (allowed %s)", shown, range);
    return SIM_ECONFIG;
  }
  *out = v;
  return SIM_OK;
}

static int set_uint(cfg__into s, const cfg__key *k, const char *t, size_t n, char *msg,
                    size_t cap) {
  uint64_t v = 0;
  if (parse_uint(k, t, n, &v, msg, cap) != SIM_OK) return SIM_ECONFIG;
  if (k->width == sizeof(uint32_t)) {
    uint32_t v32 = (uint32_t)v;
    memcpy(field(s, k), &v32, sizeof v32);
  } else {
    memcpy(field(s, k), &v, sizeof v);
  }
  return SIM_OK;
}

static int set_double(cfg__into s, const cfg__key *k, const char *t, size_t n, char *msg,
                      size_t cap) {
  char shown[96], copy[64];
  size_t neg = n > 0 && t[0] == '-';
  size_t scanned = cfg__scan_number(t + neg, n - neg);
  double v;
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  if (n == 0) {
    snprintf(msg, cap, "missing value; expected a number");
    return SIM_ECONFIG;
  }
  if (scanned == 0 || scanned != n - neg) {
    snprintf(msg, cap, "expected a number, got '%s'", shown);
    return SIM_ECONFIG;
  }
  if (n >= sizeof copy) {
    snprintf(msg, cap, "'%s' has too many digits", shown);
    return SIM_ECONFIG;
  }
  memcpy(copy, t, n);
  copy[n] = '\0';
  v = strtod(copy, NULL);
  if (!isfinite(v)) {
    snprintf(msg, cap, "'%s' is too large", shown);
    return SIM_ECONFIG;
  }
  if (v == 0) v = 0; /* -0 reads as 0 */
  if (k->dmin_exclusive ? !(v > k->dmin) : !(v >= k->dmin)) {
    snprintf(msg, cap, "%s is out of range (must be %s %g)", shown,
             k->dmin_exclusive ? ">" : ">=", k->dmin);
    return SIM_ECONFIG;
  }
  memcpy(field(s, k), &v, sizeof v);
  return SIM_OK;
}

static int same_text(const char *t, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(t, lit, n) == 0;
}

static int set_unit(cfg__into s, const cfg__key *k, const char *t, size_t n, char *msg,
                    size_t cap) {
  uint64_t v = 0;
  int rc;
  if (k->type == CFG__TIME && k->derive == CFG__DERIVE_TRANSPORT && same_text(t, n, "auto")) {
    v = CFG__TIME_AUTO; /* apply_presets replaces it by the transport's value */
    memcpy(field(s, k), &v, sizeof v);
    return SIM_OK;
  }
  if (k->type == CFG__BANDWIDTH) rc = cfg__parse_bandwidth_n(t, n, &v, msg, cap);
  else if (k->type == CFG__TIME) rc = cfg__parse_time_n(t, n, &v, msg, cap);
  else rc = cfg__parse_size_n(t, n, &v, msg, cap);
  if (rc != SIM_OK) return rc;
  if (v < k->min) {
    char shown[96];
    cfg__excerpt(shown, sizeof shown, t, n, 64);
    snprintf(msg, cap, "'%s' is out of range (must be > 0)", shown);
    return SIM_ECONFIG;
  }
  memcpy(field(s, k), &v, sizeof v);
  return SIM_OK;
}

static int set_bool(cfg__into s, const cfg__key *k, const char *t, size_t n, char *msg,
                    size_t cap) {
  char shown[96];
  bool v;
  if (same_text(t, n, "true") || same_text(t, n, "True") || same_text(t, n, "TRUE")) {
    v = true;
  } else if (same_text(t, n, "false") || same_text(t, n, "False") || same_text(t, n, "FALSE")) {
    v = false;
  } else {
    cfg__excerpt(shown, sizeof shown, t, n, 64);
    if (n == 0) snprintf(msg, cap, "missing value; expected true or false");
    else snprintf(msg, cap, "expected true or false, got '%s'", shown);
    return SIM_ECONFIG;
  }
  memcpy(field(s, k), &v, sizeof v);
  return SIM_OK;
}

/* The index of name t among k->names, or SIM_ECONFIG with what is allowed
 * (and the name differing only in case, when there is one). */
static int match_name(const cfg__key *k, const char *t, size_t n, int *out, char *msg, size_t cap) {
  char shown[96], list[256];
  const char *hint = NULL;
  for (int i = 0; i < k->nnames; i++) {
    size_t j;
    if (same_text(t, n, k->names[i])) {
      *out = i;
      return SIM_OK;
    }
    if (strlen(k->names[i]) != n) continue;
    for (j = 0; j < n; j++) {
      char a = t[j], b = k->names[i][j];
      if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
      if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
      if (a != b) break;
    }
    if (j == n) hint = k->names[i];
  }
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  if (k->type == CFG__LIST) {
    size_t o = (size_t)snprintf(list, sizeof list, "one of:");
    for (int i = 0; i < k->nnames && o < sizeof list; i++)
      o += (size_t)snprintf(list + o, sizeof list - o, "%s %s", i ? "," : "", k->names[i]);
  } else {
    cfg__describe_type(k, list, sizeof list);
  }
  if (n == 0) snprintf(msg, cap, "missing value; expected %s", list);
  else if (hint) snprintf(msg, cap, "'%s' is not %s (did you mean '%s'?)", shown, list, hint);
  else snprintf(msg, cap, "'%s' is not %s", shown, list);
  return SIM_ECONFIG;
}

static int set_enum(cfg__into s, const cfg__key *k, const char *t, size_t n, char *msg,
                    size_t cap) {
  int i;
  if (match_name(k, t, n, &i, msg, cap) != SIM_OK) return SIM_ECONFIG;
  memcpy(field(s, k), &i, sizeof i);
  return SIM_OK;
}

static int set_string(cfg__into s, const cfg__key *k, const char *t, size_t n, char *msg,
                      size_t cap) {
  char *str;
  if (n == 0) {
    snprintf(msg, cap, "must not be empty");
    return SIM_ECONFIG;
  }
  if (cfg__check_text(t, n, msg, cap) != SIM_OK) return SIM_ECONFIG;
  memcpy(&str, field(s, k), sizeof str);
  cfg__text_set(&str, t, n);
  memcpy(field(s, k), &str, sizeof str);
  return SIM_OK;
}

/* ---- lists of integers ------------------------------------------------------------------ */

static void set_list_values(cfg__into s, size_t i, const uint64_t *v, uint32_t n) {
  cfg_u64_list *l = field(s, &schema[i]);
  sim_free(l->v);
  l->v = n ? sim_malloc(n * sizeof *v) : NULL;
  if (n) memcpy(l->v, v, n * sizeof *v);
  l->n = n;
}

int cfg__parse_list_item(size_t i, const char *text, size_t len, uint64_t *out, char *msg,
                         size_t cap) {
  while (len > 0 && is_space(text[0])) text++, len--;
  while (len > 0 && is_space(text[len - 1])) len--;
  if (schema[i].names) { /* a list of names: each item's index */
    int v;
    if (match_name(&schema[i], text, len, &v, msg, cap) != SIM_OK) return SIM_ECONFIG;
    *out = (uint64_t)v;
    return SIM_OK;
  }
  return parse_uint(&schema[i], text, len, out, msg, cap);
}

/* Text form of a list: "784,128,10", "[784, 128, 10]", "[]" or "" (empty).
 * Items are checked like integers; O(len). */
static int set_list(cfg__into s, size_t i, const char *t, size_t n, char *msg, size_t cap) {
  uint64_t v[CFG__LIST_MAX];
  uint32_t count = 0;
  char item[512];
  if (n > 0 && t[0] == '[') {
    if (t[n - 1] != ']') {
      snprintf(msg, cap, "a list opened with '[' must end with ']'");
      return SIM_ECONFIG;
    }
    t++, n -= 2;
    while (n > 0 && is_space(t[0])) t++, n--;
    while (n > 0 && is_space(t[n - 1])) n--;
  }
  for (size_t at = 0; n > 0 && at <= n;) {
    const char *comma = memchr(t + at, ',', n - at);
    size_t end = comma ? (size_t)(comma - t) : n;
    if (count == CFG__LIST_MAX) {
      snprintf(msg, cap, "more than %d items", CFG__LIST_MAX);
      return SIM_ECONFIG;
    }
    if (cfg__parse_list_item(i, t + at, end - at, &v[count], item, sizeof item) != SIM_OK) {
      snprintf(msg, cap, "item %u: %s", count + 1, item);
      return SIM_ECONFIG;
    }
    count++;
    at = end + 1;
  }
  set_list_values(s, i, v, count);
  return SIM_OK;
}

void cfg__set_list(cfg_scenario *s, size_t i, const uint64_t *v, uint32_t n) {
  set_list_values(into_scenario(s), i, v, n);
}

/* A list of mappings (faults, jobs, classes) in text form (--set): only
 * empty or "[]", which clears it; entries come from YAML (load.c). */
static int set_mapping_list(cfg__into s, const cfg__key *k, const char *t, size_t n, char *msg,
                            size_t cap) {
  static const char *const example[] = {
      [CFG__FAULTS] = "faults such as [{at: 1ms, kind: link-down, target: leaf0-spine0}]",
      [CFG__JOBS] = "jobs such as [{name: a, gpus: 16, workload: {kind: collective}}]",
      [CFG__CLASSES] =
          "classes such as [{id: 6, name: latency, priority: 1}, {id: 0, name: bulk, "
          "weight: 3}]",
  };
  if (n > 0 && !same_text(t, n, "[]")) {
    snprintf(msg, cap, "expected a list of %s", example[k->type]);
    return SIM_ECONFIG;
  }
  if (k->type == CFG__FAULTS) cfg__faults_free(field(s, k));
  else if (k->type == CFG__JOBS) cfg__jobs_free(field(s, k));
  else cfg__classes_free(field(s, k));
  return SIM_OK;
}

static int set_text_into(cfg__into s, size_t i, const char *text, size_t len, char *msg,
                         size_t cap) {
  const cfg__key *k = &schema[i];
  if (memchr(text, '\0', len)) {
    snprintf(msg, cap, "contains a NUL character");
    return SIM_ECONFIG;
  }
  if (k->type != CFG__STRING) { /* YAML trims plain scalars; quoted ones may carry spaces */
    while (len > 0 && is_space(text[0])) text++, len--;
    while (len > 0 && is_space(text[len - 1])) len--;
  }
  switch (k->type) {
  case CFG__UINT: return set_uint(s, k, text, len, msg, cap);
  case CFG__DOUBLE: return set_double(s, k, text, len, msg, cap);
  case CFG__BANDWIDTH:
  case CFG__TIME:
  case CFG__SIZE: return set_unit(s, k, text, len, msg, cap);
  case CFG__BOOL: return set_bool(s, k, text, len, msg, cap);
  case CFG__ENUM: return set_enum(s, k, text, len, msg, cap);
  case CFG__STRING: return set_string(s, k, text, len, msg, cap);
  case CFG__LIST: return set_list(s, i, text, len, msg, cap);
  case CFG__FAULTS:
  case CFG__JOBS:
  case CFG__CLASSES: return set_mapping_list(s, k, text, len, msg, cap);
  }
  return SIM_ECONFIG;
}

int cfg__set_text(cfg_scenario *s, size_t i, const char *text, size_t len, char *msg, size_t cap) {
  return set_text_into(into_scenario(s), i, text, len, msg, cap);
}

int cfg__set_workload_text(cfg_workload *w, size_t i, const char *text, size_t len, char *msg,
                           size_t cap) {
  cfg__into into = into_workload(w);
  if (!cfg__is_workload_key(i)) {
    snprintf(msg, cap, "not a workload key");
    return SIM_ECONFIG;
  }
  return set_text_into(into, i, text, len, msg, cap);
}

bool cfg__is_workload_key(size_t i) {
  return i < NELEM(schema) && strncmp(schema[i].name, "workload.", 9) == 0;
}

bool cfg__other_kinds_key(cfg_workload_kind kind, size_t i) {
  return kind != CFG_WORKLOAD_INFERENCE && i < NELEM(schema) &&
         strncmp(schema[i].name, "workload.inference.", 19) == 0;
}

/* ---- field -> text ------------------------------------------------------------------------ */

/* Length of the UTF-8 sequence at p and its code point; 0 when malformed
 * or not a Unicode scalar value (surrogates, beyond U+10FFFF). */
static size_t utf8_decode(const unsigned char *p, uint32_t *cp) {
  size_t n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
  uint32_t v = n == 4 ? p[0] & 0x07u : n == 3 ? p[0] & 0x0fu : p[0] & 0x1fu;
  if (n == 0 || p[0] >= 0xf8) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    v = (v << 6) | (p[i] & 0x3fu);
  }
  if ((v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff) return 0;
  *cp = v;
  return n;
}

/* A YAML double-quoted scalar that libyaml reads back to the same bytes:
 * ASCII controls, C1 controls, BOM and non-characters escaped, other
 * UTF-8 written as is. Malformed UTF-8 (never produced by the loader) is
 * written as \xNN, which reads back as U+00NN. */
void cfg__quote_yaml(cfg__buf *b, const char *str) {
  cfg__buf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)str; *p;) {
    uint32_t cp = 0;
    size_t n = *p < 0x80 ? 1 : utf8_decode(p, &cp);
    if (*p == '"' || *p == '\\') {
      cfg__buf_printf(b, "\\%c", *p);
    } else if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
      cfg__buf_printf(b, "\\x%02x", *p);
      n = 1;
    } else if (n > 1 && (cp < 0xa0 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff)) {
      cfg__buf_printf(b, "\\U%08x", (unsigned)cp);
    } else {
      cfg__buf_printf(b, "%.*s", (int)n, (const char *)p);
    }
    p += n;
  }
  cfg__buf_puts(b, "\"");
}

static void value_text_of(cfg__into s, size_t i, cfg__buf *b);

void cfg__value_text(const cfg_scenario *s, size_t i, cfg__buf *b) {
  value_text_of((cfg__into){(char *)(uintptr_t)s, 0}, i, b);
}

/* A quiet key at its default: a string equal to its default text, a class
 * table with nothing listed, an integer or a bool equal to its default (the
 * kinds of quiet keys there are). */
static bool at_default(cfg__into s, size_t i) {
  const cfg__key *k = &schema[i];
  if (k->type == CFG__CLASSES) return ((const cfg_class_table *)cfield(s, k))->n == 0;
  if (k->type == CFG__UINT && k->def) {
    uint64_t v = 0;
    if (k->width == sizeof(uint32_t)) {
      uint32_t v32;
      memcpy(&v32, cfield(s, k), sizeof v32);
      v = v32;
    } else {
      memcpy(&v, cfield(s, k), sizeof v);
    }
    return v == strtoull(k->def, NULL, 10);
  }
  if (k->type == CFG__STRING) {
    const char *str;
    memcpy(&str, cfield(s, k), sizeof str);
    return str && k->def && strcmp(str, k->def) == 0;
  }
  if (k->type == CFG__BOOL && k->def) {
    bool v;
    memcpy(&v, cfield(s, k), sizeof v);
    return v == (strcmp(k->def, "true") == 0);
  }
  return false;
}
static bool workload_at_default(const cfg_workload *w, size_t i) {
  return at_default(into_workload(w), i);
}
bool cfg__at_default(const cfg_scenario *s, size_t i) {
  return at_default(into_scenario((cfg_scenario *)(uintptr_t)s), i);
}

void cfg__workload_text(const cfg_workload *w, cfg__buf *b) {
  int first = 1;
  for (size_t i = 0; i < NELEM(schema); i++) {
    if (!cfg__is_workload_key(i) || (schema[i].quiet && workload_at_default(w, i)) ||
        cfg__other_kinds_key(w->kind, i) ||
        schema[i].offset == offsetof(cfg_scenario, workload.traffic_class))
      continue; /* (the job's traffic_class: cfg__jobs_text) */
    cfg__buf_printf(b, "%s%s: ", first ? "" : ", ", schema[i].name + 9);
    value_text_of(into_workload(w), i, b);
    first = 0;
  }
}

void cfg__workload_free(cfg_workload *w) {
  for (size_t i = 0; i < NELEM(schema); i++) {
    if (!cfg__is_workload_key(i)) continue;
    void *f = field(into_workload(w), &schema[i]);
    if (schema[i].type == CFG__STRING) {
      char *str;
      memcpy(&str, f, sizeof str);
      sim_free(str);
      memset(f, 0, sizeof str);
    } else if (schema[i].type == CFG__LIST) {
      cfg_u64_list *l = f;
      sim_free(l->v);
      l->v = NULL;
      l->n = 0;
    }
  }
}

static void value_text_of(cfg__into s, size_t i, cfg__buf *b) {
  const cfg__key *k = &schema[i];
  char text[CFG__VALUE_TEXT];
  uint64_t u = 0;
  double d;
  int e;
  bool flag;
  const char *str;
  switch (k->type) {
  case CFG__UINT:
    if (k->width == sizeof(uint32_t)) {
      uint32_t v32;
      memcpy(&v32, cfield(s, k), sizeof v32);
      u = v32;
    } else {
      memcpy(&u, cfield(s, k), sizeof u);
    }
    cfg__buf_printf(b, "%llu", (unsigned long long)u);
    break;
  case CFG__DOUBLE:
    memcpy(&d, cfield(s, k), sizeof d);
    cfg__format_double(text, sizeof text, d);
    cfg__buf_puts(b, text);
    break;
  case CFG__BANDWIDTH:
  case CFG__TIME:
  case CFG__SIZE:
    memcpy(&u, cfield(s, k), sizeof u);
    if (k->type == CFG__BANDWIDTH) cfg__format_bandwidth(text, sizeof text, u, k->bytes_family);
    else if (k->type == CFG__TIME) cfg__format_time(text, sizeof text, u);
    else cfg__format_size(text, sizeof text, u);
    cfg__buf_puts(b, text);
    break;
  case CFG__BOOL:
    memcpy(&flag, cfield(s, k), sizeof flag);
    cfg__buf_puts(b, flag ? "true" : "false");
    break;
  case CFG__ENUM:
    memcpy(&e, cfield(s, k), sizeof e);
    cfg__buf_puts(b, name_of(k->names, (size_t)k->nnames, e));
    break;
  case CFG__STRING:
    memcpy(&str, cfield(s, k), sizeof str);
    cfg__quote_yaml(b, str ? str : "");
    break;
  case CFG__LIST: {
    const cfg_u64_list *l = cfield(s, k);
    cfg__buf_puts(b, "[");
    for (uint32_t j = 0; j < l->n; j++) {
      if (k->names)
        cfg__buf_printf(b, "%s%s", j ? ", " : "",
                        name_of(k->names, (size_t)k->nnames, (int)l->v[j]));
      else cfg__buf_printf(b, "%s%llu", j ? ", " : "", (unsigned long long)l->v[j]);
    }
    cfg__buf_puts(b, "]");
    break;
  }
  case CFG__FAULTS: cfg__faults_text(cfield(s, k), b); break;
  case CFG__JOBS: cfg__jobs_text(cfield(s, k), b); break;
  case CFG__CLASSES: cfg__classes_text(cfield(s, k), b); break;
  }
}
