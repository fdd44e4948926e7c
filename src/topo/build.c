/* Topology construction and the graph accessors.
 *
 * topo_build plans the sizes (fattree.c), allocates every array once from the
 * topology's arena, creates vertices and links in the fixed layout described
 * in topo_internal.h, and groups channels into per-vertex port lists with one
 * counting pass. Cost: O(vertices + links), no per-element allocation.
 */
#include <assert.h>
#include <string.h>

#include "topo/topo_internal.h"

bool topo__pcie_switched(const topo *t) { return t->npn > t->gpn; }

uint32_t topo__nic_gpu_local(const topo *t, uint32_t nic_local) {
  /* N >= G: NIC i hangs off GPU floor(i*G/N). N < G: GPUs g with
   * floor(g*N/G) == i share NIC i; the lowest is ceil(i*G/N). */
  uint64_t x = (uint64_t)nic_local * t->gpn;
  if (t->npn >= t->gpn) return (uint32_t)(x / t->npn);
  return (uint32_t)((x + t->npn - 1) / t->npn);
}

int topo__push_pcie(const topo *t, topo_path *p, uint32_t gpu, uint32_t nic, bool to_gpu) {
  bool sw = topo__pcie_switched(t);
  if (p->n + (sw ? 2u : 1u) > TOPO_MAX_PATH) return SIM_ERANGE;
  uint32_t up = 2 * (t->l_pcie + gpu); /* gpu -> its NIC, or gpu -> its PCIe switch */
  if (!sw) {
    p->ch[p->n++] = up + to_gpu;
    return SIM_OK;
  }
  uint32_t down = 2 * (t->l_pcie + t->gpus + nic); /* switch -> NIC */
  p->ch[p->n++] = to_gpu ? down + 1 : up;
  p->ch[p->n++] = to_gpu ? up + 1 : down;
  return SIM_OK;
}

/* A vertex inside a server (GPU, scale-up switch, NIC, PCIe switch). */
static void host_vertex(topo *t, uint32_t v, topo_vkind kind, int16_t plane, uint32_t index,
                        uint32_t node, simtime_ps latency) {
  topo_vertex *x = &t->vert[v];
  x->kind = kind;
  x->plane = plane;
  x->index = index;
  x->node = node;
  x->pod = UINT32_MAX;
  x->latency = latency;
}

static void build_vertices(topo *t, const cfg_scenario *cfg) {
  for (uint32_t g = 0; g < t->gpus; g++)
    host_vertex(t, t->v_gpu + g, TOPO_GPU, -1, g, g / t->gpn, 0);
  for (uint32_t n = 0; n < t->nodes; n++)
    host_vertex(t, t->v_nvs + n, TOPO_NVSWITCH, -1, n, n, cfg->cluster.scale_up.latency);
  for (uint32_t i = 0; i < t->nics; i++)
    host_vertex(t, t->v_nic + i, TOPO_NIC, (int16_t)topo__nic_place(t, i).plane, i, i / t->npn,
                cfg->cluster.nic.latency);
  for (uint32_t g = 0; topo__pcie_switched(t) && g < t->gpus; g++)
    host_vertex(t, t->v_psw + g, TOPO_PCIE_SWITCH, -1, g, g / t->gpn, 0);
  const topo__shape *s = &t->s;
  for (uint32_t p = 0; p < t->planes; p++) {
    for (uint32_t i = 0; i < s->switches; i++) {
      topo_vertex *v = &t->vert[t->v_sw + p * s->switches + i];
      v->kind = TOPO_SWITCH;
      v->plane = (int16_t)p;
      v->node = UINT32_MAX;
      v->latency = cfg->fabric.switch_latency;
      if (i < s->leaves) {
        v->tier = TOPO_TIER_LEAF;
        v->index = i;
        v->pod = s->tiers == 3 ? i / s->half : 0;
      } else if (i < s->leaves + s->spines) {
        v->tier = TOPO_TIER_SPINE;
        v->index = i - s->leaves;
        v->pod = s->tiers == 3 ? v->index / s->up : 0;
      } else {
        v->tier = TOPO_TIER_CORE;
        v->index = i - s->leaves - s->spines;
        v->pod = UINT32_MAX;
      }
    }
  }
}

static void build_node_links(topo *t, const cfg_scenario *cfg) {
  for (uint32_t g = 0; g < t->gpus; g++) {
    topo_link *l = &t->link[t->l_nvlink + g];
    l->a = t->v_gpu + g;
    l->b = t->v_nvs + g / t->gpn;
    l->kind = TOPO_LINK_SCALE_UP;
    l->bps = cfg->cluster.scale_up.bandwidth;
  }
  /* N > G: the GPU's own link to its PCIe switch, then the switch's link
   * to each NIC, each at the PCIe rate; cluster.pcie.latency (GPU to NIC)
   * once, on the switch's link to the NIC (the GPU's link has none, as
   * NVLink's: the parallel engine keeps its PCIe lookahead) */
  bool sw = topo__pcie_switched(t);
  simtime_ps lat = sw ? 0 : cfg->cluster.pcie.latency;
  for (uint32_t x = 0; x < t->gpus + (sw ? t->nics : 0); x++) {
    topo_link *l = &t->link[t->l_pcie + x];
    if (x < t->gpus) {
      l->a = t->v_gpu + x;
      l->b = sw ? t->v_psw + x : t->v_nic + topo_gpu_nic(t, x);
    } else {
      uint32_t nic = x - t->gpus;
      l->a = t->v_psw + (nic / t->npn) * t->gpn + topo__nic_gpu_local(t, nic % t->npn);
      l->b = t->v_nic + nic;
    }
    l->kind = TOPO_LINK_PCIE;
    l->bps = cfg->cluster.pcie.bandwidth;
    l->latency = x < t->gpus ? lat : cfg->cluster.pcie.latency;
  }
  for (uint32_t i = 0; i < t->nics; i++) {
    topo__place p = topo__nic_place(t, i);
    topo_link *l = &t->link[t->l_endpoint + i];
    l->a = t->v_nic + i;
    l->b = topo__switch_v(t, p.plane, TOPO_TIER_LEAF, p.leaf);
    l->kind = TOPO_LINK_ENDPOINT;
    l->bps = cfg->cluster.nic.bandwidth;
    l->latency = cfg->fabric.link_latency;
  }
}

/* Wire bytes per payload byte of the packet fidelity's largest packet, the
 * share its own per-packet headers take: InfiniBand LRH+BTH+ICRC+VCRC 26 B;
 * RoCEv2 and Ethernet 62 B of headers plus 20 B of preamble and gap (the
 * frame sizes of src/net/net.c; tests/net/test_single.c checks that the
 * packet fidelity's goodput is line rate x min(efficiency, payload share)). */
static double packet_wire_per_payload(const cfg_scenario *cfg) {
  double hdr = cfg->fabric.transport == CFG_TRANSPORT_INFINIBAND ? 26.0 : 82.0;
  return (cfg->fabric.mtu + hdr) / cfg->fabric.mtu;
}

/* Achievable rates: every link runs at its line rate x its class's
 * efficiency (cluster.scale_up/nic/pcie.efficiency, fabric.link_efficiency),
 * what software measures on it. The analytic and flow fidelities move
 * payload at that rate. The packet fidelity serializes headers itself, so
 * its links run at rate x wire/payload instead (never above line rate):
 * payload still moves at the achievable rate, headers are not counted
 * twice. O(links). */
double topo__wire_per_payload(const cfg_scenario *cfg) {
  return cfg->simulation.fidelity == CFG_FIDELITY_PACKET ? packet_wire_per_payload(cfg) : 1.0;
}

/* The NICs' achievable share: a point-to-point workload's RDMA write
 * streams (workload.kind traffic, alone on the fabric) reach
 * cluster.nic.rdma_efficiency, what perftest measures; everything else
 * runs through NCCL (collectives, training, traces, jobs) at
 * cluster.nic.efficiency. One rate per run: a fabric's links serve one
 * workload's transfers. */
static double nic_efficiency(const cfg_scenario *cfg) {
  bool p2p = cfg->workload.kind == CFG_WORKLOAD_TRAFFIC && cfg->jobs.n == 0;
  return p2p ? cfg->cluster.nic.rdma_efficiency : cfg->cluster.nic.efficiency;
}

static void apply_efficiency(topo *t, const cfg_scenario *cfg) {
  double wire = topo__wire_per_payload(cfg);
  for (uint32_t i = 0; i < t->nlinks; i++) {
    topo_link *l = &t->link[i];
    double eff = l->kind == TOPO_LINK_SCALE_UP   ? cfg->cluster.scale_up.efficiency
                 : l->kind == TOPO_LINK_PCIE     ? cfg->cluster.pcie.efficiency
                 : l->kind == TOPO_LINK_ENDPOINT ? nic_efficiency(cfg)
                                                 : cfg->fabric.link_efficiency;
    double share = eff * wire;
    if (share >= 1.0) continue;
    rate_bps r = (rate_bps)((double)l->bps * share + 0.5);
    l->bps = r ? r : 1;
  }
}

/* Counting sort of channels by source vertex; within a vertex, link-id order
 * (the routing invariant of topo_internal.h). */
static void build_ports(topo *t) {
  for (uint32_t l = 0; l < t->nlinks; l++) {
    t->vert[t->link[l].a].nports++;
    t->vert[t->link[l].b].nports++;
  }
  uint32_t next = 0;
  for (uint32_t v = 0; v < t->nvertices; v++) {
    t->vert[v].first_port = next;
    next += t->vert[v].nports;
    t->vert[v].nports = 0;
  }
  for (uint32_t l = 0; l < t->nlinks; l++) {
    topo_vertex *a = &t->vert[t->link[l].a], *b = &t->vert[t->link[l].b];
    t->port[a->first_port + a->nports++] = 2 * l;
    t->port[b->first_port + b->nports++] = 2 * l + 1;
  }
}

int topo_build(topo **out, const cfg_scenario *cfg, const cfg_doc *doc, sim_error *err) {
  *out = NULL;
  topo plan;
  memset(&plan, 0, sizeof plan);
  int rc = topo__plan(&plan, cfg, doc, err);
  if (rc != SIM_OK) return rc;

  sim_arena arena;
  sim_arena_init(&arena);
  topo *t = sim_arena_alloc(&arena, sizeof *t);
  *t = plan;
  t->arena = arena; /* from here on allocate through t->arena only */
  t->vert = sim_arena_alloc(&t->arena, (size_t)t->nvertices * sizeof *t->vert);
  t->link = sim_arena_alloc(&t->arena, (size_t)t->nlinks * sizeof *t->link);
  t->port = sim_arena_alloc(&t->arena, (size_t)t->nlinks * 2 * sizeof *t->port);

  build_vertices(t, cfg);
  build_node_links(t, cfg);
  topo__wire_fabric(t, cfg);
  apply_efficiency(t, cfg);
  topo__storage_rates(t, cfg);
  build_ports(t);
  topo__inventory(t, cfg);
  *out = t;
  return SIM_OK;
}

void topo_free(topo *t) {
  if (!t) return;
  sim_arena arena = t->arena; /* t itself lives in the arena */
  sim_arena_free(&arena);
}

uint32_t topo_vertex_count(const topo *t) { return t->nvertices; }
uint32_t topo_link_count(const topo *t) { return t->nlinks; }

const topo_vertex *topo_vertex_at(const topo *t, uint32_t v) {
  return v < t->nvertices ? &t->vert[v] : NULL;
}

const topo_link *topo_link_at(const topo *t, uint32_t l) {
  return l < t->nlinks ? &t->link[l] : NULL;
}

uint32_t topo_channel_src(const topo *t, uint32_t ch) {
  assert(ch / 2 < t->nlinks);
  const topo_link *l = &t->link[ch >> 1];
  return ch & 1 ? l->b : l->a;
}

uint32_t topo_channel_dst(const topo *t, uint32_t ch) {
  assert(ch / 2 < t->nlinks);
  const topo_link *l = &t->link[ch >> 1];
  return ch & 1 ? l->a : l->b;
}

uint32_t topo_port_channel(const topo *t, uint32_t v, uint32_t i) {
  assert(v < t->nvertices && i < t->vert[v].nports);
  return t->port[t->vert[v].first_port + i];
}

uint32_t topo_gpu_count(const topo *t) { return t->cgpus; }
uint32_t topo_node_count(const topo *t) { return t->cnodes; }
uint32_t topo_nic_count(const topo *t) { return t->cnodes * t->npn; }
uint32_t topo_bundle_size(const topo *t) { return t->s.bundle ? t->s.bundle : 1; }
uint32_t topo_gpu_vertex(const topo *t, uint32_t gpu) { return t->v_gpu + gpu; }
uint32_t topo_nic_vertex(const topo *t, uint32_t nic) { return t->v_nic + nic; }
uint32_t topo_gpu_node(const topo *t, uint32_t gpu) { return gpu / t->gpn; }

uint32_t topo_gpu_nic(const topo *t, uint32_t gpu) {
  uint32_t node = gpu / t->gpn, g = gpu % t->gpn;
  return node * t->npn + (uint32_t)((uint64_t)g * t->npn / t->gpn);
}

uint32_t topo_nics_per_gpu(const topo *t) {
  return t->npn > t->gpn && t->npn % t->gpn == 0 ? t->npn / t->gpn : 1;
}

uint32_t topo_xfer_nic(const topo *t, uint32_t gpu, uint64_t flow_hash) {
  uint32_t k = topo_nics_per_gpu(t);
  return topo_gpu_nic(t, gpu) + (k > 1 ? (uint32_t)(flow_hash >> 56) % k : 0);
}

uint32_t topo_nic_leaf(const topo *t, uint32_t nic) {
  topo__place p = topo__nic_place(t, nic);
  return topo__switch_v(t, p.plane, TOPO_TIER_LEAF, p.leaf);
}

uint32_t topo_switch_vertex(const topo *t, uint32_t plane, uint32_t tier, uint32_t index) {
  const topo__shape *s = &t->s;
  uint32_t n = tier == TOPO_TIER_LEAF    ? s->leaves
               : tier == TOPO_TIER_SPINE ? s->spines
               : tier == TOPO_TIER_CORE  ? s->cores
                                         : 0;
  if (plane >= t->planes || index >= n) return UINT32_MAX;
  return topo__switch_v(t, plane, tier, index);
}

int topo_link_between(const topo *t, uint32_t a, uint32_t b, uint32_t *l) {
  if (a >= t->nvertices || b >= t->nvertices) return SIM_ENOENT;
  /* scan the vertex with fewer ports: O(min(ports)) */
  uint32_t from = t->vert[a].nports <= t->vert[b].nports ? a : b, to = from == a ? b : a;
  const topo_vertex *v = &t->vert[from];
  for (uint32_t i = 0; i < v->nports; i++) {
    uint32_t ch = t->port[v->first_port + i];
    if (topo_channel_dst(t, ch) == to) {
      *l = ch >> 1;
      return SIM_OK;
    }
  }
  return SIM_ENOENT;
}
