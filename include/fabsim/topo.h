/* fabsim topology: servers (GPUs, scale-up switch, NICs over PCIe) and the
 * scale-out fabric (2/3-tier fat-tree, multi-plane fat-tree, rail-optimized),
 * up/down routing with every equal-cost next hop, inventory and cost.
 *
 * Graph model
 *   Vertices: GPUs, one scale-up switch (NVSwitch) per node, NICs, fabric
 *   switches (tier 1 leaf, 2 spine, 3 core). Links are full duplex; link l has
 *   two channels, 2l (a -> b) and 2l+1 (b -> a). A path is a list of channels.
 *   Each vertex forwards with its own latency (vertex.latency); each link adds
 *   propagation (link.latency) and serialization at link.bps.
 *
 * Node n has GPUs n*G .. n*G+G-1 and NICs n*N .. n*N+N-1 (G gpus_per_node,
 * N nic.per_node). A GPU reaches its NIC over one PCIe link; with N > G
 * over a PCIe switch of its own: the GPU's one link to the switch (its x16
 * port), then one link a NIC, each cluster.pcie.bandwidth, so its NICs
 * together carry at most the GPU's PCIe rate. GPU g uses NIC (g mod G) * N / G of its node; NIC i
 * of every node attaches to rail/plane i (multi-plane: plane i mod planes).
 *
 * Rail-optimized fabrics are one plane (plane 0 everywhere): nodes form
 * groups of leaf_down nodes, and leaf g*N + i of group g carries rail i.
 *
 * Names are stable and readable: gpu17, node2, nvs2 (node 2's scale-up switch),
 * nic17, pcisw17 (GPU 17's PCIe switch, when a node has more NICs than GPUs), leaf0, spine3, core7
 * (switches counted per plane), with a plane prefix on multi-plane fabrics (p2.leaf0); a link is
 * named by its two ends (leaf0-spine0, nic17-leaf2, gpu17-nic17, gpu17-nvs2).
 *
 * The topology lives in one arena and is freed at once. It is immutable after
 * topo_build, so any number of backends may read it concurrently.
 */
#ifndef FABSIM_TOPO_H
#define FABSIM_TOPO_H

#include <stdio.h>

#include "fabsim/config.h"
#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct topo topo; /* opaque */

/* TOPO_PCIE_SWITCH: between a GPU and its NICs when a node has more NICs
 * than GPUs (one a GPU, named pcisw<g>); the GPU's one link to it bounds
 * what its NICs carry together. */
typedef enum { TOPO_GPU, TOPO_NVSWITCH, TOPO_NIC, TOPO_SWITCH, TOPO_PCIE_SWITCH } topo_vkind;
typedef enum {
  TOPO_LINK_SCALE_UP,
  TOPO_LINK_PCIE,
  TOPO_LINK_ENDPOINT,
  TOPO_LINK_FABRIC
} topo_lkind;

enum { TOPO_TIER_LEAF = 1, TOPO_TIER_SPINE = 2, TOPO_TIER_CORE = 3 };
enum { TOPO_MAX_PATH = 16 }; /* channels in the longest routed path */

typedef struct topo_vertex {
  topo_vkind kind;
  uint8_t tier;        /* switches: 1 leaf, 2 spine, 3 core; else 0 */
  int16_t plane;       /* fabric plane (NICs, switches); -1 for GPUs and nvswitches */
  uint32_t index;      /* index among its kind (switches: within plane and tier) */
  uint32_t node;       /* GPUs, NICs, nvswitches: the node; switches: UINT32_MAX */
  uint32_t pod;        /* switches in 3-tier fabrics: the pod (cores: UINT32_MAX);
                          2-tier leaves and spines: 0; GPUs, NICs, nvswitches: UINT32_MAX */
  simtime_ps latency;  /* forwarding latency through this vertex */
  uint32_t first_port; /* ports are channels leaving this vertex: */
  uint32_t nports;     /*   topo_port_channel(t, v, 0 .. nports-1) */
} topo_vertex;

typedef struct topo_link {
  uint32_t a, b; /* vertices; channel 2l goes a -> b */
  topo_lkind kind;
  rate_bps bps;       /* per direction */
  simtime_ps latency; /* propagation */
} topo_link;

typedef struct topo_path {
  uint32_t n; /* channels */
  uint32_t ch[TOPO_MAX_PATH];
} topo_path;

typedef struct topo_inventory {
  uint64_t nodes, gpus, endpoints; /* endpoints = NICs attached to the fabric */
  uint64_t switches;
  uint64_t switches_by_tier[4]; /* [1] leaf, [2] spine, [3] core */
  uint64_t links_endpoint_switch;
  uint64_t links_switch_switch;
  uint64_t transceivers;
  uint64_t copper_cables;
  double cost_usd, cost_per_endpoint_usd;
  uint64_t bisection_bandwidth_bps;
  uint64_t max_nodes; /* what the fabric holds at full size */
  /* the full build (max_nodes), for capacity planning; the figures above
   * are the switches the cluster's nodes need */
  uint64_t switches_full;
  double cost_usd_full; /* its switches, NICs and optics */
  uint32_t planes, tiers;
  uint32_t leaf_down, leaf_up; /* leaf port split after oversubscription */
  double oversubscription;     /* effective leaf_down / leaf_up */
  /* storage servers on this fabric (storage.*): their NICs are among the
   * endpoints and their links among the endpoint links (cables or optics
   * counted above), but not priced as NICs: a server's price
   * (storage.server_usd) includes them; storage_cost_usd is not in cost_usd */
  uint64_t storage_servers, storage_nics;
  double storage_cost_usd, storage_power_w;
} topo_inventory;

/* The out-of-band management network (management.*): inventory and cost only,
 * it carries no traffic. Access switches of management.switch_ports device
 * ports (one port per node, storage server and fabric switch), and when there
 * is more than one, management.uplinks each into aggregation switches of
 * management.aggregation_radix ports. Cables: one per device port and per
 * uplink. */
typedef struct topo_management {
  uint64_t ports, switches, aggregation, cables;
  double cost_usd;
} topo_management;
/* All zero unless management.enabled. O(1). */
void topo_management_of(const cfg_scenario *cfg, uint64_t ports, topo_management *out);

/* The networks beside the backend fabric t, for the inventory: the storage
 * servers (storage.*), the storage fabric's own inventory when
 * storage.attach is separate (built from the scenario and freed: its
 * switches, the nodes' frontend NICs priced at cost.nic_usd, its links and
 * optics), and the management network over every node, server and switch
 * of both fabrics. cost_usd: servers + storage fabric + management (the
 * backend fabric's is t's inventory). Errors: the storage fabric does not
 * build (checked at load by run_scenario_load, so not after). */
typedef struct topo_networks {
  uint64_t storage_servers;
  bool separate;
  topo_inventory storage_fabric; /* separate only */
  double storage_cost_usd, storage_power_w;
  topo_management management;
  double cost_usd;
} topo_networks;
int topo_networks_of(const topo *t, const cfg_scenario *cfg, topo_networks *out, sim_error *err);

/* Build from a loaded scenario. Impossible combinations (odd radix, more
 * planes than NICs, more nodes than the fabric holds, ...) are SIM_ECONFIG
 * errors located at the offending key via doc. */
int topo_build(topo **out, const cfg_scenario *cfg, const cfg_doc *doc, sim_error *err);
void topo_free(topo *t);

uint32_t topo_vertex_count(const topo *t);
uint32_t topo_link_count(const topo *t);
const topo_vertex *topo_vertex_at(const topo *t, uint32_t v);
const topo_link *topo_link_at(const topo *t, uint32_t l);
static inline uint32_t topo_channel_link(uint32_t ch) { return ch >> 1; }
/* Vertex a channel leaves from / arrives at. */
uint32_t topo_channel_src(const topo *t, uint32_t ch);
uint32_t topo_channel_dst(const topo *t, uint32_t ch);
/* A channel's rate: its link's bps, except a storage server's drive links
 * (src/topo/storage.c), which write (toward the server's endpoint) and read
 * at rates of their own. What every fidelity's channel capacity is. O(1). */
rate_bps topo_channel_bps(const topo *t, uint32_t ch);
/* The i-th port of vertex v, as the channel leaving v. */
uint32_t topo_port_channel(const topo *t, uint32_t v, uint32_t i);

uint32_t topo_gpu_count(const topo *t);  /* compute GPUs (storage endpoints not counted) */
uint32_t topo_node_count(const topo *t); /* compute nodes */
/* Storage servers as transfer endpoints (storage.*, src/topo/storage.c): a
 * be_xfer's src_gpu or dst_gpu may name a GPU (< topo_gpu_count) or a
 * storage server's endpoint, in [topo_gpu_count, topo_endpoint_count). A
 * server has topo_storage_endpoints of them, its drives' write bandwidth
 * shared equally; it is laid out as whole nodes after the compute nodes,
 * from the next leaf on. Without storage, topo_endpoint_count is
 * topo_gpu_count. O(1) each. */
uint32_t topo_endpoint_count(const topo *t);
uint32_t topo_storage_servers(const topo *t);
uint32_t topo_storage_endpoints(const topo *t); /* per server */
uint32_t topo_storage_endpoint(const topo *t, uint32_t server, uint32_t i);
uint32_t topo_storage_leaf(const topo *t, uint32_t server); /* its first NIC's leaf */
/* storage.attach separate: the storage fabric as a scenario of its own
 * (a fat-tree of storage.fabric.*, the nodes' storage.frontend NICs, the
 * servers attached to it), written to *derived, which borrows cfg's strings
 * and must outlive the topology and any backend on it; then built.
 * GPU g is the same GPU in both topologies. */
void topo_storage_fabric_cfg(cfg_scenario *derived, const cfg_scenario *cfg);
int topo_build_storage(topo **out, cfg_scenario *derived, const cfg_scenario *cfg, sim_error *err);
uint32_t topo_gpu_vertex(const topo *t, uint32_t gpu);
uint32_t topo_nic_vertex(const topo *t, uint32_t nic);
uint32_t topo_gpu_nic(const topo *t, uint32_t gpu); /* global NIC index */
/* NICs per GPU: N/G when a node has N = k G NICs (k >= 2: cloud shapes with
 * two ports a GPU), else 1. GPU g's NICs are topo_gpu_nic(g) .. + k - 1. */
uint32_t topo_nics_per_gpu(const topo *t);
/* The NIC a transfer with this flow hash uses at GPU gpu: topo_gpu_nic(gpu)
 * + (the hash's NIC selector, its top 8 bits) mod topo_nics_per_gpu, so
 * routing, the collectives' load accounting and the backends agree on it,
 * and both ends of a transfer use the same NIC index of their GPU (a
 * rail). With one NIC a GPU: topo_gpu_nic. O(1). */
uint32_t topo_xfer_nic(const topo *t, uint32_t gpu, uint64_t flow_hash);
/* flow_hash with its NIC selector set to sel (0..255): a collective
 * channel's transfers keep to one of their GPU's NICs (NCCL: a channel a
 * NIC). Other transfers' selectors are their hash's own bits. */
static inline uint64_t topo_flow_hash_nic(uint64_t flow_hash, uint32_t sel) {
  return (flow_hash & ~(0xffull << 56)) | ((uint64_t)(sel & 0xff) << 56);
}
uint32_t topo_gpu_node(const topo *t, uint32_t gpu);
uint32_t topo_nic_count(const topo *t); /* the compute nodes' NICs (storage servers' not counted) */
/* The leaf switch vertex NIC `nic` (global index) is cabled to. */
uint32_t topo_nic_leaf(const topo *t, uint32_t nic);
/* Switch vertex by (plane, tier, index within plane and tier), as named
 * (p<plane>.)leaf<index> / spine<index> / core<index>; UINT32_MAX if absent.
 * In 3-tier fabrics spine index = pod * leaf_up + c, core index =
 * c * (radix/2)/m + j/m for up link j of spine c (core group c serves spine
 * c of every pod; m = 1 at full size, a bundle of m parallel links from
 * each spine to each core of its group in a partial build: src/topo/fattree.c). */
uint32_t topo_switch_vertex(const topo *t, uint32_t plane, uint32_t tier, uint32_t index);
/* The link joining vertices a and b (either order): SIM_OK or SIM_ENOENT.
 * O(ports of the smaller end). */
int topo_link_between(const topo *t, uint32_t a, uint32_t b, uint32_t *l);

/* Readable names; buf gets at most n bytes, always terminated. A link is
 * "<a>-<b>", or "<a>-<b>/<r>" when it is the r-th of a bundle of parallel
 * links; a channel is its link's name with its source first (spine0-core1/2
 * and core1-spine0/2 are the two directions of one link). */
const char *topo_vertex_name(const topo *t, uint32_t v, char *buf, size_t n);
const char *topo_link_name(const topo *t, uint32_t l, char *buf, size_t n);
const char *topo_channel_name(const topo *t, uint32_t ch, char *buf, size_t n);
/* Look up by name: returns SIM_OK and the index, or SIM_ENOENT; a link or
 * channel named "<a>-<b>" where a and b are joined by a bundle is SIM_EINVAL
 * (it names several links: give "/<r>"). */
int topo_find_vertex(const topo *t, const char *name, uint32_t *v);
int topo_find_link(const topo *t, const char *name, uint32_t *l);
int topo_find_channel(const topo *t, const char *name, uint32_t *ch);
/* Parallel links per bundle (spine-core, partial 3-tier builds); 1 when
 * every pair of switches has one link. */
uint32_t topo_bundle_size(const topo *t);

/* Every equal-cost next hop (as channels leaving `v`) toward NIC `dst_nic`
 * under up/down routing. v must be a switch of the NIC's plane, or the NIC's
 * own leaf path. Returns the count written (<= max). O(ports). */
uint32_t topo_next_hops(const topo *t, uint32_t v, uint32_t dst_nic, uint32_t *out, uint32_t max);

/* The routed path GPU src -> GPU dst (src != dst). Same node: over the
 * scale-up switch. Otherwise src GPU -> its NIC, or, when the destination NIC
 * is on another plane/rail that the fabric cannot reach, over NVLink first to
 * the GPU of src's node whose NIC shares the destination's plane; then the
 * fabric, choosing among equal-cost next hops as fabric.routing says: static
 * by the destination (topo_static_pick, what an InfiniBand subnet manager's
 * fat-tree engine computes), otherwise by hashing flow_hash with each switch's
 * ECMP seed (ecmp; adaptive and spray decide per transfer or per packet in
 * the backends, from this path); then the destination NIC -> GPU. */
int topo_route(const topo *t, uint32_t src_gpu, uint32_t dst_gpu, uint64_t flow_hash,
               topo_path *path);
/* ECMP choice at switch v among n candidates for a flow: deterministic in
 * (fabric.ecmp.hash_seed, v, flow_hash); with fabric.ecmp.polarized, in
 * (hash_seed, flow_hash) only, the same at every switch. */
uint32_t topo_ecmp_pick(const topo *t, uint32_t v, uint64_t flow_hash, uint32_t n);
/* Static (D-mod-K) choice at switch v among its n equal-cost up ports toward
 * NIC dst_nic: with D the NIC's index within its plane (leaf by leaf, port by
 * port: how OpenSM's fat-tree engine orders endpoints), the up port at tier l
 * is floor(D / (w_1 ... w_{l-1})) mod w_l, w_i the up-port count at tier i.
 * Every down-going link then carries one destination, and a shift or rail
 * permutation on a full-bisection tree is collision-free. O(1). */
uint32_t topo_static_pick(const topo *t, uint32_t v, uint32_t dst_nic, uint32_t n);
/* Spray (an even split of a transfer over its equal-cost paths) as a fluid
 * model: every fabric link with equal-cost siblings belongs to one pool
 * (the up links of a leaf; the spine links down into a leaf; in 3 tiers the
 * spine-to-core links of a pod and the core links into a pod), and a sprayed
 * transfer loads every member of each pool it crosses equally, so a pool is
 * counted as one channel of topo_pool_bps capacity. Pool ids follow the
 * channels: [2 x links, 2 x links + topo_pool_count). All O(1) except
 * topo_pool_members, O(members). */
uint32_t topo_pool_count(const topo *t);
/* The channel a sprayed transfer over ch is counted on: ch's pool, or ch
 * itself when ch has no equal-cost sibling (host, endpoint links). */
uint32_t topo_spray_channel(const topo *t, uint32_t ch);
/* The member channels of a pool (at most max written); returns how many
 * there are (0: not a pool id). */
uint32_t topo_pool_members(const topo *t, uint32_t pool, uint32_t *out, uint32_t max);
/* Members x member rate (a channel id: its link's rate). */
rate_bps topo_pool_bps(const topo *t, uint32_t pool);
/* How the analytic and flow fidelities model fabric.routing:
 * TOPO_SPLIT_POOLS  the transfer is split over its equal-cost paths and
 *                   counted on pools: spray (an even split), and adaptive
 *                   decided per packet (fabric.adaptive.flowlet_gap = 0: each
 *                   packet takes the least-queued port, which keeps the
 *                   equal-cost queues level, so in the fluid limit the
 *                   transfer spreads over every path; pool capacity is then
 *                   the members' sum, where an even split's is members x the
 *                   slowest member);
 * TOPO_SPLIT_ADAPTIVE  adaptive per flowlet: one path per transfer, chosen at
 *                   submission by topo_route_adaptive (a continuous transfer
 *                   is one flowlet);
 * TOPO_SPLIT_NONE   static and ecmp: topo_route. */
typedef enum { TOPO_SPLIT_NONE, TOPO_SPLIT_POOLS, TOPO_SPLIT_ADAPTIVE } topo_split;
static inline topo_split topo_split_of(const cfg_scenario *cfg) {
  if (cfg->fabric.routing == CFG_ROUTING_SPRAY) return TOPO_SPLIT_POOLS;
  if (cfg->fabric.routing != CFG_ROUTING_ADAPTIVE) return TOPO_SPLIT_NONE;
  return cfg->fabric.adaptive.flowlet_gap ? TOPO_SPLIT_ADAPTIVE : TOPO_SPLIT_POOLS;
}
/* Number of distinct shortest paths between two GPUs (the parallel links
 * of a bundle counted apart). */
uint64_t topo_path_count(const topo *t, uint32_t src_gpu, uint32_t dst_gpu);
/* One-way latency of a path for a zero-byte message (links + vertices in between). */
simtime_ps topo_path_latency(const topo *t, const topo_path *p);
/* Smallest channel rate along a path. */
rate_bps topo_path_bottleneck(const topo *t, const topo_path *p);

/* Fault-aware routing. A health mask says which links and vertices routing
 * may use: routing's view of the fabric after it reconverged, which lags the
 * physical state by the convergence delay (fabsim/fault.h). Owned by the
 * caller; the topology itself stays immutable. */
typedef struct topo_health {
  uint8_t *link_ok;   /* per link: 1 usable (both directions) */
  uint8_t *vertex_ok; /* per vertex: 1 usable */
  uint32_t down;      /* links + vertices marked unusable (0: routing is topo_route) */
} topo_health;
int topo_health_init(topo_health *h, const topo *t); /* everything usable */
void topo_health_free(topo_health *h);
void topo_health_set_link(topo_health *h, uint32_t link, bool ok);
void topo_health_set_vertex(topo_health *h, uint32_t v, bool ok);
/* As topo_route, over usable links and vertices only. At each switch the
 * equal-cost next hops are those from which the destination NIC is still
 * reachable; ECMP hashes flow_hash over those, static takes D-mod-K over
 * those (the subnet manager recomputing its tables). When the source GPU's NIC (or
 * the NIC in the destination's plane) is unusable, another NIC of the same
 * node is used, reached over NVLink (multi-port and multi-NIC failover), and
 * likewise at the destination. SIM_ENOENT when no path remains. With
 * h == NULL or h->down == 0 the path equals topo_route's. */
int topo_route_health(const topo *t, const topo_health *h, uint32_t src_gpu, uint32_t dst_gpu,
                      uint64_t flow_hash, topo_path *path);

/* Adaptive routing decided once per transfer (the analytic and flow
 * fidelities): at each switch the equal-cost next hop whose channel, and the
 * down-going channel that choice commits the path to, carry the fewest flows
 * in load[] (per channel, flows assigned at the time of the decision; the
 * larger of the two counts), ties going to the static choice and then in
 * port order from it: deterministic, and static routing on an idle fabric.
 * Over usable links only when h has faults (as topo_route_health).
 * O(path x up ports). */
int topo_route_adaptive(const topo *t, const topo_health *h, uint32_t src_gpu, uint32_t dst_gpu,
                        uint64_t flow_hash, const uint32_t *load, topo_path *path);

/* fabric.topology: file (docs/fabric-import.md; src/topo/import.c). With
 * cfg and *doc just loaded from scenario and sets: reads fabric.file (a
 * JSON or YAML graph, or ibnetdiscover output), checks it, recognizes the
 * fat-tree it describes, loads the scenario again with the keys the file
 * gives (a key the scenario sets itself must agree), builds the fabric into
 * *out and checks it is the file's, link for link. The scenario it leaves
 * in cfg names that fabric's family (fabric.file none), so a resolved
 * scenario reruns without the file. Errors: SIM_ECONFIG located in the file
 * (file:line:col) or at the scenario's key; on error *out is NULL and cfg
 * and *doc are freeable as they are. O(file + links log links). */
int topo_load_file(cfg_scenario *cfg, cfg_doc **doc, topo **out, const char *scenario,
                   const char *const *sets, int nsets, sim_error *err);
/* The fabric as fabric.topology: file reads it (JSON, docs/fabric-import.md)
 * into path ("-": stdout), written atomically. SIM_ECONFIG for a fabric with
 * storage servers (not exported yet), SIM_EIO when the write fails. */
int topo_export(const topo *t, const cfg_scenario *cfg, const char *path, sim_error *err);

const topo_inventory *topo_inventory_get(const topo *t);
/* Graphviz DOT of the whole graph (nodes collapsed to one box each when
 * `collapse_nodes`). */
int topo_write_dot(const topo *t, FILE *f, bool collapse_nodes);

#ifdef __cplusplus
}
#endif
#endif
