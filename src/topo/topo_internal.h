/* Private to src/topo: the layout of a built topology.
 *
 * Everything is index arithmetic over a fixed layout, so nothing needs a
 * search structure:
 *
 *   vertices  [v_gpu, +gpus)            GPU g
 *             [v_nvs, +nodes)           scale-up switch of node n
 *             [v_nic, +nics)            NIC i
 *             [v_psw, +gpus)            PCIe switch of GPU g, only when N > G
 *             [v_sw + p * shape.switches, ...) plane p: leaves, spines, cores
 *   links     [l_nvlink, +gpus)         gpu g - nvs(node)           (a = GPU)
 *             [l_pcie, +gpus)           N <= G: gpu g - its NIC     (a = GPU);
 *                                       N > G: gpu g - psw g        (a = GPU),
 *             [l_pcie + gpus, +nics)    then psw(owner) - nic i     (a = psw)
 *             [l_endpoint, +nics)       nic i - its leaf            (a = NIC)
 *             [l_fabric + p * (ls + sc), ...) plane p:
 *                                       leaf L - spine c at L * up + c,
 *                                       then spine - core at
 *                                       ls + (pod * up + c) * half + j (a = lower tier),
 *                                       core c * (half / bundle) + j / bundle
 *
 * Port order (invariant used by routing): a vertex's ports are its links in
 * link-id order. Hence a leaf's ports are its NICs by slot (0 .. ndown-1) and
 * then its `up` spines; a spine's ports are its leaves (by leaf-within-pod, or
 * by leaf in 2-tier) and then its `half` up links; a core's ports are its
 * pods, `bundle` consecutive ports per pod (port pod * bundle + j mod bundle).
 * So every down "table" is the port index itself: O(1) per hop, no
 * switches x endpoints table.
 */
#ifndef FABSIM_TOPO_INTERNAL_H
#define FABSIM_TOPO_INTERNAL_H

#include "fabsim/topo.h"

/* Largest graph we agree to build (vertices, and links, each): a radix-64
 * 3-tier fabric of 8-GPU nodes is ~150k vertices and ~330k links. */
enum { TOPO__MAX_ELEMS = 1 << 24, TOPO__MAX_RADIX = 1024, TOPO__MAX_PER_NODE = 4096 };

/* Shape of one plane (all planes of a multi-plane fabric are identical). */
typedef struct topo__shape {
  uint32_t k, half;  /* radix, radix / 2 */
  uint32_t up, down; /* leaf port split */
  uint32_t tiers;
  uint32_t leaves, spines, cores, pods; /* built, per plane */
  uint32_t switches;                    /* leaves + spines + cores */
  uint32_t bundle;                    /* spine-core links per (spine, core) pair: 1 at full size */
  uint32_t ls_links, sc_links;        /* leaf-spine, spine-core, per plane */
  uint32_t max_leaves;                /* at full size, per plane */
  uint64_t max_endpoints;             /* at full size, per plane */
  uint64_t switches_full, links_full; /* switches, switch-switch links at full size, per plane */
} topo__shape;

struct topo {
  sim_arena arena; /* owns everything below, and this struct */
  cfg_topology kind;
  uint32_t gpn, npn;          /* GPUs, NICs per node */
  uint32_t planes;            /* 1 unless multi-plane */
  uint32_t nodes, gpus, nics; /* the layout's: compute nodes, then storage servers' */
  uint32_t max_nodes;
  /* Storage servers on this fabric (storage.*; storage.c): layout nodes
   * [sto_node0, nodes), sto_span per server, after the compute nodes; their
   * NICs are placed sto_gap node slots further, so they start a leaf (a
   * rail-optimized group) of their own. No storage: sto_node0 is UINT32_MAX
   * and nothing moves. The public counts (topo_gpu_count, topo_node_count)
   * are the compute nodes' only. */
  uint32_t cnodes, cgpus;
  uint32_t sto_node0, sto_span, sto_servers, sto_gap;
  /* their drive links, [sto_drive0, sto_drive_end) (empty without storage):
   * each way a rate of its own (topo_channel_bps) */
  uint32_t sto_drive0, sto_drive_end;
  rate_bps sto_write_bps, sto_read_bps;
  topo__shape s;
  uint32_t v_gpu, v_nvs, v_nic, v_psw, v_sw, nvertices;
  uint32_t l_nvlink, l_pcie, l_endpoint, l_fabric, nlinks;
  uint64_t ecmp_seed;
  cfg_routing routing; /* fabric.routing: STATIC routes D-mod-K everywhere */
  bool polarized;      /* fabric.ecmp.polarized: one hash for every switch */
  topo_vertex *vert;
  topo_link *link;
  uint32_t *port; /* channels, grouped by source vertex */
  topo_inventory inv;
};

/* Where a NIC sits in the fabric. */
typedef struct topo__place {
  uint32_t plane, leaf, slot; /* leaf index within the plane; slot = down port */
} topo__place;

/* fattree.c */
int topo__plan(topo *t, const cfg_scenario *cfg, const cfg_doc *doc, sim_error *err);
topo__place topo__nic_place(const topo *t, uint32_t nic);
void topo__wire_fabric(topo *t, const cfg_scenario *cfg);
uint32_t topo__switch_v(const topo *t, uint32_t plane, uint32_t tier, uint32_t index);
/* SIM_ECONFIG located at `key` (plain "key: ..." when doc is NULL). */
int topo__fail(const cfg_doc *doc, const char *key, sim_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* build.c */
/* More NICs than GPUs in a node (N > G): each GPU reaches its NICs through a
 * PCIe switch, over one link of its own (its x16 port) and one link a NIC,
 * so the GPU's link bounds what its NICs carry together. */
bool topo__pcie_switched(const topo *t);
/* Local GPU PCIe-linked to local NIC i (the lowest one when NICs are shared). */
uint32_t topo__nic_gpu_local(const topo *t, uint32_t nic_local);
/* Append the PCIe hops between global GPU gpu and global NIC nic (which must
 * be linked) to p: one channel, or two through the GPU's PCIe switch;
 * toward the NIC, or toward the GPU when to_gpu. SIM_ERANGE when p is full. */
int topo__push_pcie(const topo *t, topo_path *p, uint32_t gpu, uint32_t nic, bool to_gpu);

/* inventory.c */
void topo__inventory(topo *t, const cfg_scenario *cfg);

/* route.c: the position of spine-core link l in its bundle (0 .. bundle-1;
 * 0 for any other link). O(1). */
uint32_t topo__bundle_pos(const topo *t, uint32_t l);
/* route.c: the equal-cost next hops of x toward dst_nic (at place d) as the
 * port range [*first, *first + return value) of x; 0 when x is the NIC itself
 * or not in its plane. O(1). */
uint32_t topo__hop_range(const topo *t, const topo_vertex *x, uint32_t dst_nic, topo__place d,
                         uint32_t *first);

/* How a route chooses among equal-cost next hops (route.c):
 *   ECMP      hash of `hash` with the switch's seed (topo_ecmp_pick);
 *   STATIC    D-mod-K by destination (topo_static_pick);
 *   ADAPTIVE  the candidate whose channel, and the down-going channel the
 *             choice commits to, carry the fewest flows in load[] (the larger
 *             of the two), scanning from the static choice (ties go to it). */
typedef struct topo__policy {
  cfg_routing mode; /* ECMP, STATIC or ADAPTIVE */
  uint64_t hash;
  const uint32_t *load; /* ADAPTIVE: per channel, flows assigned */
} topo__policy;
/* topo_route's policy: STATIC when fabric.routing is static, else ECMP. */
topo__policy topo__default_policy(const topo *t, uint64_t flow_hash);
/* Index into cand[0..nc) (the equal-cost next hops of v toward dnic that
 * may be used, in port order) chosen under pol; in_ch: the channel the path
 * arrived at v on (at a core with bundles, ECMP and adaptive go down on its
 * bundle position: route.c). O(nc). */
uint32_t topo__choose(const topo *t, uint32_t v, uint32_t dnic, topo__place d,
                      const topo__policy *pol, uint32_t in_ch, const uint32_t *cand, uint32_t nc);
/* topo_route / topo_route_health under an explicit policy. */
int topo__route_policy(const topo *t, uint32_t src_gpu, uint32_t dst_gpu, const topo__policy *pol,
                       topo_path *path);
int topo__route_health_policy(const topo *t, const topo_health *h, uint32_t src_gpu,
                              uint32_t dst_gpu, const topo__policy *pol, topo_path *path);

/* storage.c */
/* Lay out cfg's storage servers after `nodes` compute nodes: sets cnodes,
 * cgpus and the sto_* fields; returns the layout nodes (compute + storage)
 * and in *slots the node slots the leaves must hold (gap included). */
uint32_t topo__storage_plan(topo *t, const cfg_scenario *cfg, uint32_t nodes, uint32_t *slots);
/* The servers' links at their own rates (NIC ports, drives), after the
 * efficiencies were applied. */
void topo__storage_rates(topo *t, const cfg_scenario *cfg);
/* build.c: wire bytes per payload byte on the packet fidelity's links (1 at
 * the others). */
double topo__wire_per_payload(const cfg_scenario *cfg);

/* names.c */
int topo__parse_vertex(const topo *t, const char *s, size_t len, uint32_t *v);

/* ---- fabric files (graph.c, import_json.c, import_ibnd.c, import.c) --------
 *
 * A parsed fabric file: nodes and links as the file names them, each with
 * where it stands in the file (line, col: 1-based) for messages. Servers
 * hold no links; a GPU, NIC, scale-up or PCIe switch names its server.
 * Built by a parser, checked by topo__graph_check, recognized and compared
 * with the fabric fabsim builds by import.c. Owns its strings. */
typedef enum {
  TOPO__R_SERVER,
  TOPO__R_GPU,
  TOPO__R_NVSWITCH,
  TOPO__R_PCIE_SWITCH,
  TOPO__R_NIC,
  TOPO__R_SWITCH,
  TOPO__R_N
} topo__role;

typedef struct topo__gnode {
  char *name;
  char *server_name; /* until resolved into server */
  topo__role role;
  uint8_t tier;       /* switches: as the file gives it (0: not given) */
  int32_t plane;      /* as the file gives it (-1: not given) */
  uint32_t server;    /* node index of its server (UINT32_MAX: none) */
  uint32_t ports;     /* 0: not given */
  uint32_t uplinks;   /* leaves: ports facing up (0: not given) */
  simtime_ps latency; /* forwarding latency */
  bool has_latency;
  uint32_t line, col;
} topo__gnode;

typedef struct topo__glink {
  char *a_name, *b_name; /* until resolved into a, b */
  uint32_t a, b;
  uint32_t a_port, b_port; /* 0: not given */
  rate_bps bps;            /* line rate */
  simtime_ps latency;
  uint32_t line, col, speed_line, speed_col;
} topo__glink;

typedef struct topo__graph {
  const char *file; /* for messages; borrowed */
  topo__gnode *node;
  size_t nnodes, cap_nodes;
  topo__glink *link;
  size_t nlinks, cap_links;
  uint32_t tiers;  /* the file's "tiers" (0: not given) */
  bool hosts;      /* GPUs and scale-up switches are in the file */
  bool ibnd;       /* messages name nodes and ports, not nodes[i] */
  bool no_latency; /* links carry no latency (ibnetdiscover): the scenario's */
  uint32_t *slot;  /* name -> node + 1 (0: empty), open addressing */
  size_t nslots;
} topo__graph;

/* graph.c */
void topo__graph_init(topo__graph *g, const char *file);
void topo__graph_free(topo__graph *g);
/* "file:line:col: key: message" as SIM_ECONFIG. */
/* The key a message names for node i or link i, with field (may be ""):
 * nodes[i].field in a JSON/YAML file, the node's name in ibnetdiscover. */
const char *topo__node_key(const topo__graph *g, size_t i, const char *field, char *buf, size_t n);
const char *topo__link_key(const topo__graph *g, size_t i, const char *field, char *buf, size_t n);
int topo__gfail(const topo__graph *g, uint32_t line, uint32_t col, const char *key, sim_error *err,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* A new node (zeroed, plane -1, server UINT32_MAX) owning a copy of name;
 * SIM_ECONFIG when the name is taken. O(1) amortized. */
int topo__graph_add_node(topo__graph *g, const char *name, uint32_t line, uint32_t col,
                         uint32_t *idx, sim_error *err);
topo__glink *topo__graph_add_link(topo__graph *g);
/* The node named name: SIM_OK or SIM_ENOENT. O(1). */
int topo__graph_find(const topo__graph *g, const char *name, uint32_t *idx);
/* Resolves names (link ends, servers) and checks what any fabric must hold:
 * every end a node, ports in range and used once, speeds in range, roles
 * cabled as allowed, a GPU with a NIC, a NIC on a switch, one connected
 * graph. The first problem as a located SIM_ECONFIG. O(nodes + links log links). */
int topo__graph_check(topo__graph *g, sim_error *err);

const char *topo__role_name(topo__role r);
int topo__role_parse(const char *s, topo__role *r);
/* Adjacency in CSR form: adj[first[v] .. first[v+1]) are node v's links,
 * in file order. O(nodes + links). */
typedef struct topo__gadj {
  uint32_t *first, *adj;
} topo__gadj;
void topo__graph_adjacency(const topo__graph *g, topo__gadj *a);
void topo__gadj_free(topo__gadj *a);
static inline uint32_t topo__other_end(const topo__glink *l, uint32_t v) {
  return l->a == v ? l->b : l->a;
}

/* import.c: parse buf as ibnetdiscover output (by its first line) or a
 * JSON/YAML graph, then topo__graph_check it. */
int topo__import_graph(topo__graph *g, const char *buf, size_t len, const char *map_server,
                       sim_error *err);

/* import_json.c: a JSON or YAML fabric (docs/fabric-import.md). */
int topo__parse_graph(topo__graph *g, const char *buf, size_t len, sim_error *err);
/* import_ibnd.c: ibnetdiscover output; map_server: a POSIX extended regex
 * whose first group names a CA's server. */
int topo__parse_ibnd(topo__graph *g, const char *buf, size_t len, const char *map_server,
                     sim_error *err);

#endif
