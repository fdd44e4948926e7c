/* fabric.topology: file (docs/fabric-import.md): the fabric a file
 * describes, recognized as the family fabsim builds and checked link for
 * link against it.
 *
 * Every fidelity, the inventory, cost, bisection, placement and faults read
 * the fixed layout of topo_internal.h (routing is index arithmetic on it).
 * So an imported graph is resolved, not stored: its shape gives the keys a
 * generated fabric takes (nodes, GPUs and NICs a node, planes, tiers, radix,
 * leaf up ports, speeds and latencies per link class), the scenario is
 * loaded again with them, fabsim builds that fabric, and the file's graph
 * is mapped onto it (servers, GPUs and NICs by the file's order, leaves by
 * their NICs, spines by their leaves, cores by their spines) and compared
 * link for link. A file that is not such a fat-tree (2 or 3 tiers, rail-
 * optimized or multi-plane) is refused at its first link that does not
 * fit: general graphs and their routing are issue 31's items 2-3.
 *
 * Cost: parsing O(file); the checks O(nodes + links log links); the fabric
 * is built twice (once for the comparison, which it then is).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_internal.h"

/* Link classes, by the roles they join. */
enum { CL_SCALE_UP, CL_GPU_PSW, CL_PCIE, CL_ENDPOINT, CL_FABRIC, CL_N };

typedef struct derived {
  cfg_topology family;
  uint32_t nodes, gpn, npn, planes, tiers, radix, up;
  double oversub;
  bool has_bw[CL_N], has_lat[CL_N];
  rate_bps bw[CL_N];
  simtime_ps lat[CL_N];
  bool has_vlat[TOPO__R_N];
  simtime_ps vlat[TOPO__R_N];
} derived;

typedef struct imp {
  topo__graph g;
  topo__gadj adj;
  uint32_t *server_ix; /* node -> its server's ordinal (servers, hosts: UINT32_MAX else) */
  uint32_t *local;     /* GPUs, NICs: index within the server */
  uint32_t *canon;     /* GPUs, NICs: global index; nvswitch: node; psw: its GPU */
  uint8_t *tier;       /* switches: derived tier */
  int32_t *plane;      /* switches: derived plane */
  uint32_t *map;       /* file node -> built vertex (UINT32_MAX: none) */
  uint32_t *inv;       /* built vertex -> file node */
  derived d;
  sim_error *err;
} imp;

/* A located message at node v (is_link false) or link v, naming field. */
static int fail_at(imp *m, bool is_link, size_t v, const char *field, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
static int fail_at(imp *m, bool is_link, size_t v, const char *field, const char *fmt, va_list ap) {
  char key[96], msg[900];
  vsnprintf(msg, sizeof msg, fmt, ap);
  uint32_t line, col;
  if (is_link) {
    const topo__glink *l = &m->g.link[v];
    bool speed = !strcmp(field, "speed");
    line = speed ? l->speed_line : l->line;
    col = speed ? l->speed_col : l->col;
    topo__link_key(&m->g, v, field, key, sizeof key);
  } else {
    line = m->g.node[v].line;
    col = m->g.node[v].col;
    topo__node_key(&m->g, v, field, key, sizeof key);
  }
  return topo__gfail(&m->g, line, col, key, m->err, "%s", msg);
}

static int fail_node(imp *m, size_t v, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_node(imp *m, size_t v, const char *field, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = fail_at(m, false, v, field, fmt, ap);
  va_end(ap);
  return rc;
}

static int fail_link(imp *m, size_t i, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_link(imp *m, size_t i, const char *field, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = fail_at(m, true, i, field, fmt, ap);
  va_end(ap);
  return rc;
}

static topo__role role(const imp *m, uint32_t v) { return m->g.node[v].role; }

static int link_class(const imp *m, const topo__glink *l) {
  topo__role a = role(m, l->a), b = role(m, l->b);
  if (a > b) {
    topo__role x = a;
    a = b;
    b = x;
  }
  if (b == TOPO__R_NVSWITCH) return CL_SCALE_UP;
  if (a == TOPO__R_GPU && b == TOPO__R_PCIE_SWITCH) return CL_GPU_PSW;
  if (b == TOPO__R_NIC) return CL_PCIE;
  if (a == TOPO__R_NIC) return CL_ENDPOINT;
  return CL_FABRIC;
}

static const char *const class_name[CL_N] = {"gpu-nvswitch", "gpu-pcie-switch", "PCIe",
                                             "nic-switch", "switch-switch"};

/* ---- hosts: servers, GPUs, NICs in fabsim's order ------------------------------ */

typedef struct nic_key {
  uint32_t server, gpu_local, file;
} nic_key;

static int cmp_nic(const void *x, const void *y) {
  const nic_key *a = x, *b = y;
  if (a->server != b->server) return a->server < b->server ? -1 : 1;
  if (a->gpu_local != b->gpu_local) return a->gpu_local < b->gpu_local ? -1 : 1;
  return a->file < b->file ? -1 : a->file > b->file;
}

/* The lowest local index of a GPU linked to NIC v, directly or over a PCIe
 * switch; without GPUs in the file (ibnetdiscover), 0 (description order). */
static uint32_t nic_gpu(const imp *m, uint32_t v) {
  uint32_t best = UINT32_MAX;
  for (uint32_t j = m->adj.first[v]; j < m->adj.first[v + 1]; j++) {
    uint32_t w = topo__other_end(&m->g.link[m->adj.adj[j]], v);
    if (role(m, w) == TOPO__R_GPU && m->local[w] < best) best = m->local[w];
    for (uint32_t k = m->adj.first[w]; role(m, w) == TOPO__R_PCIE_SWITCH && k < m->adj.first[w + 1];
         k++) {
      uint32_t x = topo__other_end(&m->g.link[m->adj.adj[k]], w);
      if (role(m, x) == TOPO__R_GPU && m->local[x] < best) best = m->local[x];
    }
  }
  return best == UINT32_MAX ? 0 : best;
}

static int hosts(imp *m, const cfg_scenario *cfg) {
  const topo__graph *g = &m->g;
  uint32_t nservers = 0;
  for (size_t v = 0; v < g->nnodes; v++)
    if (g->node[v].role == TOPO__R_SERVER) m->server_ix[v] = nservers++;
  if (!nservers)
    return topo__gfail(&m->g, 1, 1, "nodes", m->err, "no server; allowed: a fabric with servers");
  uint32_t *ngpu = sim_calloc(nservers, sizeof *ngpu), *nnic = sim_calloc(nservers, sizeof *ngpu),
           *nnvs = sim_calloc(nservers, sizeof *ngpu), *npsw = sim_calloc(nservers, sizeof *ngpu);
  int rc = SIM_OK;
  for (size_t v = 0; v < g->nnodes; v++) {
    const topo__gnode *n = &g->node[v];
    if (n->server == UINT32_MAX) continue;
    uint32_t s = m->server_ix[n->server];
    if (n->role == TOPO__R_GPU) m->local[v] = ngpu[s]++;
    if (n->role == TOPO__R_NIC) nnic[s]++;
    if (n->role == TOPO__R_NVSWITCH) m->canon[v] = s, nnvs[s]++;
    if (n->role == TOPO__R_PCIE_SWITCH) npsw[s]++;
  }
  m->d.nodes = nservers;
  m->d.gpn = g->hosts ? ngpu[0] : cfg->cluster.gpus_per_node;
  m->d.npn = nnic[0];
  for (size_t v = 0; v < g->nnodes && rc == SIM_OK; v++) {
    const topo__gnode *n = &g->node[v];
    if (n->role != TOPO__R_SERVER) continue;
    uint32_t s = m->server_ix[v];
    if ((g->hosts && ngpu[s] != m->d.gpn) || nnic[s] != m->d.npn || !nnic[s])
      rc = fail_node(m, v, "",
                     "server '%s' has %u GPUs and %u NICs where the first has %u and %u; "
                     "allowed: every server alike, with at least one NIC",
                     n->name, ngpu[s], nnic[s], g->hosts ? m->d.gpn : 0, m->d.npn);
    else if (g->hosts && nnvs[s] != 1)
      rc = fail_node(m, v, "", "server '%s' has %u scale-up switches; allowed: one nvswitch",
                     n->name, nnvs[s]);
    else if (g->hosts && npsw[s] != (m->d.npn > m->d.gpn ? m->d.gpn : 0))
      rc = fail_node(m, v, "",
                     "server '%s' has %u PCIe switches; allowed: one a GPU when a server has "
                     "more NICs than GPUs, else none",
                     n->name, npsw[s]);
  }
  /* NICs: by their GPU, then by the file's order */
  nic_key *k = sim_malloc((g->nnodes + 1) * sizeof *k);
  size_t nk = 0;
  for (size_t v = 0; v < g->nnodes; v++)
    if (g->node[v].role == TOPO__R_NIC && g->node[v].server != UINT32_MAX)
      k[nk++] = (nic_key){m->server_ix[g->node[v].server], nic_gpu(m, (uint32_t)v), (uint32_t)v};
  qsort(k, nk, sizeof *k, cmp_nic);
  for (size_t i = 0; i < nk; i++) {
    m->local[k[i].file] = (uint32_t)(i % m->d.npn);
    m->canon[k[i].file] = (uint32_t)i;
  }
  for (size_t v = 0; v < g->nnodes; v++)
    if (g->node[v].role == TOPO__R_GPU)
      m->canon[v] = m->server_ix[g->node[v].server] * m->d.gpn + m->local[v];
  sim_free(k);
  sim_free(ngpu);
  sim_free(nnic);
  sim_free(nnvs);
  sim_free(npsw);
  return rc;
}

/* ---- link classes and vertex latencies ----------------------------------------- */

static int classes(imp *m) {
  derived *d = &m->d;
  size_t first[CL_N];
  for (size_t i = 0; i < m->g.nlinks; i++) {
    const topo__glink *l = &m->g.link[i];
    int c = link_class(m, l);
    if (!d->has_bw[c]) {
      d->has_bw[c] = d->has_lat[c] = true;
      d->bw[c] = l->bps;
      d->lat[c] = l->latency;
      first[c] = i;
      continue;
    }
    if (l->bps != d->bw[c] && c != CL_GPU_PSW)
      return fail_link(m, i, "speed",
                       "%llu b/s where the first %s link (%s) has %llu b/s; allowed: one speed "
                       "per link class (per-tier speeds: not yet)",
                       (unsigned long long)l->bps, class_name[c],
                       topo__link_key(&m->g, first[c], "", (char[96]){0}, 96),
                       (unsigned long long)d->bw[c]);
    if (l->latency != d->lat[c])
      return fail_link(m, i, "latency",
                       "%llu ps where the first %s link has %llu ps; allowed: one latency per "
                       "link class",
                       (unsigned long long)l->latency, class_name[c],
                       (unsigned long long)d->lat[c]);
  }
  for (size_t i = 0; i < m->g.nlinks; i++) {
    int c = link_class(m, &m->g.link[i]);
    if ((c == CL_SCALE_UP || c == CL_GPU_PSW) && m->g.link[i].latency)
      return fail_link(m, i, "latency",
                       "%s links have no latency of their own in fabsim (the scale-up "
                       "switch's latency, or the PCIe switch's link to the NIC, carries it); "
                       "allowed: 0",
                       class_name[c]);
    if (c == CL_GPU_PSW && m->g.link[i].bps != d->bw[CL_PCIE] && d->has_bw[CL_PCIE])
      return fail_link(
          m, i, "speed",
          "the GPU's PCIe link differs from its NICs' (%llu b/s); allowed: one PCIe speed",
          (unsigned long long)d->bw[CL_PCIE]);
    if (c == CL_ENDPOINT && d->has_lat[CL_FABRIC] && m->g.link[i].latency != d->lat[CL_FABRIC])
      return fail_link(m, i, "latency",
                       "%llu ps where switch-switch links have %llu ps; allowed: one cable "
                       "latency for NIC and switch links",
                       (unsigned long long)m->g.link[i].latency,
                       (unsigned long long)d->lat[CL_FABRIC]);
  }
  size_t firstv[TOPO__R_N];
  for (size_t v = 0; v < m->g.nnodes; v++) {
    const topo__gnode *n = &m->g.node[v];
    if (!n->has_latency) continue;
    if (n->role == TOPO__R_SERVER || n->role == TOPO__R_GPU || n->role == TOPO__R_PCIE_SWITCH) {
      if (n->latency)
        return fail_node(m, v, "latency", "a %s forwards nothing in fabsim; allowed: 0 or absent",
                         topo__role_name(n->role));
      continue;
    }
    if (!d->has_vlat[n->role]) {
      d->has_vlat[n->role] = true;
      d->vlat[n->role] = n->latency;
      firstv[n->role] = v;
    } else if (n->latency != d->vlat[n->role]) {
      return fail_node(m, v, "latency",
                       "%llu ps where '%s' has %llu ps; allowed: one latency per role",
                       (unsigned long long)n->latency, m->g.node[firstv[n->role]].name,
                       (unsigned long long)d->vlat[n->role]);
    }
  }
  return SIM_OK;
}

/* ---- switches: tiers, planes, radix, the leaves' up ports ---------------------- */

static uint32_t neighbour(const imp *m, uint32_t v, uint32_t j) {
  return topo__other_end(&m->g.link[m->adj.adj[j]], v);
}

static int switches(imp *m) {
  const topo__graph *g = &m->g;
  derived *d = &m->d;
  /* tiers: leaves hold NICs; spines are next to leaves; cores are the rest */
  for (size_t v = 0; v < g->nnodes; v++) {
    if (g->node[v].role != TOPO__R_SWITCH) continue;
    m->tier[v] = 3;
    for (uint32_t j = m->adj.first[v]; j < m->adj.first[v + 1]; j++)
      if (role(m, neighbour(m, (uint32_t)v, j)) == TOPO__R_NIC) m->tier[v] = 1;
  }
  for (size_t v = 0; v < g->nnodes; v++) {
    if (g->node[v].role != TOPO__R_SWITCH || m->tier[v] == 1) continue;
    for (uint32_t j = m->adj.first[v]; j < m->adj.first[v + 1]; j++) {
      uint32_t w = neighbour(m, (uint32_t)v, j);
      if (role(m, w) == TOPO__R_SWITCH && m->tier[w] == 1) m->tier[v] = 2;
    }
  }
  /* planes: the switch-only components, numbered by the NIC index that
   * reaches them first */
  uint32_t *queue = sim_malloc((g->nnodes + 1) * sizeof *queue), planes = 0;
  for (size_t v = 0; v < g->nnodes; v++) m->plane[v] = -1;
  int rc = SIM_OK;
  uint32_t maxtier = 1, ports = 0, up = UINT32_MAX;
  size_t first_sw = g->nnodes;
  nic_key *order = sim_malloc((g->nnodes + 1) * sizeof *order);
  size_t no = 0;
  for (size_t v = 0; v < g->nnodes; v++)
    if (g->node[v].role == TOPO__R_NIC) order[no++] = (nic_key){0, m->canon[v], (uint32_t)v};
  qsort(order, no, sizeof *order, cmp_nic);
  for (size_t i = 0; i < no; i++) {
    uint32_t nic = order[i].file, leaf = UINT32_MAX;
    for (uint32_t j = m->adj.first[nic]; j < m->adj.first[nic + 1]; j++)
      if (role(m, neighbour(m, nic, j)) == TOPO__R_SWITCH) leaf = neighbour(m, nic, j);
    if (leaf == UINT32_MAX || m->plane[leaf] >= 0) continue;
    size_t head = 0, tail = 0;
    m->plane[leaf] = (int32_t)planes;
    queue[tail++] = leaf;
    while (head < tail) {
      uint32_t v = queue[head++];
      for (uint32_t j = m->adj.first[v]; j < m->adj.first[v + 1]; j++) {
        uint32_t w = neighbour(m, v, j);
        if (role(m, w) == TOPO__R_SWITCH && m->plane[w] < 0)
          m->plane[w] = (int32_t)planes, queue[tail++] = w;
      }
    }
    planes++;
  }
  sim_free(order);
  sim_free(queue);
  for (size_t v = 0; v < g->nnodes && rc == SIM_OK; v++) {
    const topo__gnode *n = &g->node[v];
    if (n->role != TOPO__R_SWITCH) continue;
    if (first_sw == g->nnodes) first_sw = v;
    if (m->plane[v] < 0)
      rc =
          fail_node(m, v, "", "switch '%s' reaches no NIC; allowed: switches of a fabric", n->name);
    else if (n->tier && n->tier != m->tier[v])
      rc = fail_node(m, v, "tier",
                     "tier %u, but its links make '%s' a tier-%u switch (tier 1 has NICs, tier 2 "
                     "is next to tier 1, tier 3 above); allowed %u",
                     n->tier, n->name, m->tier[v], m->tier[v]);
    else if (n->plane >= 0 && n->plane != m->plane[v])
      rc = fail_node(m, v, "plane",
                     "plane %d, but '%s' is in the switch group of NIC index %d's leaf; allowed %d",
                     n->plane, n->name, m->plane[v], m->plane[v]);
    else if (!n->ports)
      rc = fail_node(m, v, "ports", "missing; a switch gives its port count (its radix)");
    else if (ports && n->ports != ports)
      rc = fail_node(m, v, "ports",
                     "%u ports where '%s' has %u; allowed: one radix for every switch", n->ports,
                     g->node[first_sw].name, ports);
    if (rc != SIM_OK) break;
    ports = n->ports;
    if (m->tier[v] > maxtier) maxtier = m->tier[v];
    if (m->tier[v] != 1) continue;
    uint32_t u = 0;
    for (uint32_t j = m->adj.first[v]; j < m->adj.first[v + 1]; j++) {
      uint32_t w = neighbour(m, (uint32_t)v, j);
      u += role(m, w) == TOPO__R_SWITCH && m->tier[w] == 2;
    }
    if (!u) u = n->uplinks ? n->uplinks : ports / 2;
    if (up != UINT32_MAX && u != up)
      rc = fail_node(m, v, "",
                     "leaf '%s' has %u up links where the first leaf has %u; allowed: "
                     "every leaf alike",
                     n->name, u, up);
    up = u;
  }
  if (rc != SIM_OK) return rc;
  if (first_sw == g->nnodes)
    return topo__gfail(&m->g, 1, 1, "nodes", m->err, "no switch; allowed: a fabric of switches");
  d->planes = planes;
  d->radix = ports;
  d->up = up;
  d->tiers = g->tiers ? g->tiers : (maxtier < 2 ? 2 : maxtier);
  if (d->tiers < maxtier)
    return topo__gfail(&m->g, 1, 1, "tiers", m->err,
                       "%u, but the switches make %u tiers; allowed %u", d->tiers, maxtier,
                       maxtier);
  if (up >= ports)
    return fail_node(m, first_sw, "ports", "%u ports leave no down port beside %u up links", ports,
                     up);
  /* the oversubscription whose floor(k / (1 + o)) gives back `up` */
  double o = (double)(ports - up) / (double)up;
  for (int i = 0; i < 64 && floor((double)ports / (1.0 + o)) < (double)up; i++)
    o = nextafter(o, 0.0);
  d->oversub = o < 1.0 ? 1.0 : o;
  /* the family */
  bool rail = planes == 1 && m->d.npn > 1;
  for (size_t v = 0; v < g->nnodes && rail; v++) {
    if (g->node[v].role != TOPO__R_SWITCH || m->tier[v] != 1) continue;
    int32_t li = -1;
    for (uint32_t j = m->adj.first[v]; j < m->adj.first[v + 1]; j++) {
      uint32_t w = neighbour(m, (uint32_t)v, j);
      if (role(m, w) != TOPO__R_NIC) continue;
      if (li >= 0 && (uint32_t)li != m->local[w]) rail = false;
      li = (int32_t)m->local[w];
    }
  }
  d->family = planes > 1 ? CFG_TOPO_MULTI_PLANE
              : rail     ? CFG_TOPO_RAIL_OPTIMIZED
                         : CFG_TOPO_FAT_TREE;
  return SIM_OK;
}

/* ---- the keys the file gives --------------------------------------------------- */

enum { K_U32, K_BW, K_TIME, K_DBL, K_ENUM };
typedef struct dkey {
  const char *name;
  int type;
  size_t offset; /* in cfg_scenario */
  uint64_t u;
  double x;
} dkey;

#define OFF(f) offsetof(cfg_scenario, f)

static size_t derived_keys(const imp *m, dkey *k) {
  const derived *d = &m->d;
  size_t n = 0;
#define KEY(nm, ty, f, val) k[n++] = (dkey){nm, ty, OFF(f), (uint64_t)(val), 0}
  KEY("cluster.nodes", K_U32, cluster.nodes, d->nodes);
  KEY("cluster.nic.per_node", K_U32, cluster.nic.per_node, d->npn);
  if (m->g.hosts) KEY("cluster.gpus_per_node", K_U32, cluster.gpus_per_node, d->gpn);
  if (d->planes > 1) KEY("fabric.planes", K_U32, fabric.planes, d->planes);
  KEY("fabric.tiers", K_U32, fabric.tiers, d->tiers);
  KEY("fabric.switch_radix", K_U32, fabric.switch_radix, d->radix);
  k[n++] = (dkey){"fabric.oversubscription", K_DBL, OFF(fabric.oversubscription), 0, d->oversub};
  if (d->has_bw[CL_SCALE_UP])
    KEY("cluster.scale_up.bandwidth", K_BW, cluster.scale_up.bandwidth, d->bw[CL_SCALE_UP]);
  if (d->has_bw[CL_PCIE]) {
    KEY("cluster.pcie.bandwidth", K_BW, cluster.pcie.bandwidth, d->bw[CL_PCIE]);
    KEY("cluster.pcie.latency", K_TIME, cluster.pcie.latency, d->lat[CL_PCIE]);
  }
  if (d->has_bw[CL_ENDPOINT])
    KEY("cluster.nic.bandwidth", K_BW, cluster.nic.bandwidth, d->bw[CL_ENDPOINT]);
  if (d->has_bw[CL_FABRIC])
    KEY("fabric.link_bandwidth", K_BW, fabric.link_bandwidth, d->bw[CL_FABRIC]);
  if (d->has_lat[CL_ENDPOINT] && !m->g.no_latency)
    KEY("fabric.link_latency", K_TIME, fabric.link_latency, d->lat[CL_ENDPOINT]);
  if (d->has_vlat[TOPO__R_NVSWITCH])
    KEY("cluster.scale_up.latency", K_TIME, cluster.scale_up.latency, d->vlat[TOPO__R_NVSWITCH]);
  if (d->has_vlat[TOPO__R_NIC])
    KEY("cluster.nic.latency", K_TIME, cluster.nic.latency, d->vlat[TOPO__R_NIC]);
  if (d->has_vlat[TOPO__R_SWITCH])
    KEY("fabric.switch_latency", K_TIME, fabric.switch_latency, d->vlat[TOPO__R_SWITCH]);
#undef KEY
  return n;
}

static void key_text(const dkey *k, char *buf, size_t n) {
  switch (k->type) {
  case K_U32: snprintf(buf, n, "%s=%llu", k->name, (unsigned long long)k->u); break;
  case K_BW: snprintf(buf, n, "%s=%llubps", k->name, (unsigned long long)k->u); break;
  case K_TIME: snprintf(buf, n, "%s=%llups", k->name, (unsigned long long)k->u); break;
  default: snprintf(buf, n, "%s=%.17g", k->name, k->x); break;
  }
}

/* A key the scenario sets itself must agree with the file. */
static int conflicts(const imp *m, const dkey *k, size_t n, const cfg_scenario *cfg,
                     const cfg_doc *doc, sim_error *err) {
  for (size_t i = 0; i < n; i++) {
    cfg_loc loc = cfg_where(doc, k[i].name);
    if (!loc.file || !strcmp(loc.file, "default")) continue;
    const char *p = (const char *)cfg + k[i].offset;
    bool same;
    uint64_t u = 0;
    double x = 0;
    if (k[i].type == K_U32) u = *(const uint32_t *)(const void *)p;
    else if (k[i].type == K_DBL) x = *(const double *)(const void *)p;
    else u = *(const uint64_t *)(const void *)p;
    if (k[i].type == K_DBL) /* the same leaf split is the same fabric */
      same = floor((double)m->d.radix / (1.0 + x)) == (double)m->d.up;
    else same = u == k[i].u;
    if (!same) {
      char want[96];
      key_text(&k[i], want, sizeof want);
      return cfg_fail_at(doc, k[i].name, err,
                         "the scenario sets it, but fabric.file (%s) gives %s; allowed: leave "
                         "it out, or give the file's value",
                         m->g.file, strchr(want, '=') + 1);
    }
  }
  return SIM_OK;
}

/* ---- mapping the file onto the built fabric ------------------------------------ */

static int place(imp *m, uint32_t file, uint32_t built, const topo *t) {
  char b[48];
  if (m->map[file] == built && m->inv[built] == file) return SIM_OK;
  if (m->map[file] != UINT32_MAX || m->inv[built] != UINT32_MAX)
    return fail_node(m, file, "",
                     "'%s' does not fit one place of the %s fabsim derives from this file (here "
                     "it would be %s); allowed: a fat-tree as docs/fabric-import.md describes",
                     m->g.node[file].name, cfg_topology_name(t->kind),
                     topo_vertex_name(t, built, b, sizeof b));
  m->map[file] = built;
  m->inv[built] = file;
  return SIM_OK;
}

/* The distinct switches of tier `tier` next to file switch f, in file order. */
static uint32_t file_up(const imp *m, uint32_t f, uint8_t tier, uint32_t *out, uint32_t max) {
  uint32_t n = 0;
  for (uint32_t j = m->adj.first[f]; j < m->adj.first[f + 1]; j++) {
    uint32_t w = neighbour(m, f, j);
    if (role(m, w) != TOPO__R_SWITCH || m->tier[w] != tier) continue;
    bool dup = false;
    for (uint32_t i = 0; i < n && !dup; i++) dup = out[i] == w;
    if (!dup && n < max) out[n++] = w;
  }
  return n;
}

/* The distinct up neighbours of built switch v, in port order. */
static uint32_t built_up(const topo *t, uint32_t v, uint32_t *out, uint32_t max) {
  const topo_vertex *x = &t->vert[v];
  uint32_t nup =
      x->tier == TOPO_TIER_LEAF ? (t->s.spines ? t->s.up : 0) : (t->s.sc_links ? t->s.half : 0);
  uint32_t n = 0;
  for (uint32_t i = x->nports - nup; i < x->nports; i++) {
    uint32_t w = topo_channel_dst(t, t->port[x->first_port + i]);
    if (n && out[n - 1] == w) continue; /* a bundle's links are consecutive */
    if (n < max) out[n++] = w;
  }
  return n;
}

static int pair_up(imp *m, const topo *t, uint32_t built, uint32_t file, uint8_t tier) {
  uint32_t bu[TOPO__MAX_RADIX], fu[TOPO__MAX_RADIX];
  uint32_t nb = built_up(t, built, bu, TOPO__MAX_RADIX),
           nf = file_up(m, file, tier, fu, TOPO__MAX_RADIX);
  if (nb != nf)
    return fail_node(m, file, "",
                     "'%s' has %u tier-%u neighbours where fabsim's %s has %u; allowed: a "
                     "fat-tree as docs/fabric-import.md describes",
                     m->g.node[file].name, nf, tier, cfg_topology_name(t->kind), nb);
  for (uint32_t i = 0; i < nb; i++) {
    int rc = place(m, fu[i], bu[i], t);
    if (rc != SIM_OK) return rc;
  }
  return SIM_OK;
}

static int map_switches(imp *m, const topo *t) {
  const topo__shape *s = &t->s;
  int rc = SIM_OK;
  for (size_t v = 0; v < m->g.nnodes && rc == SIM_OK; v++) {
    const topo__gnode *n = &m->g.node[v];
    if (n->role == TOPO__R_GPU) rc = place(m, (uint32_t)v, topo_gpu_vertex(t, m->canon[v]), t);
    else if (n->role == TOPO__R_NVSWITCH) rc = place(m, (uint32_t)v, t->v_nvs + m->canon[v], t);
    else if (n->role == TOPO__R_NIC) {
      rc = place(m, (uint32_t)v, topo_nic_vertex(t, m->canon[v]), t);
      for (uint32_t j = m->adj.first[v]; rc == SIM_OK && j < m->adj.first[v + 1]; j++)
        if (role(m, neighbour(m, (uint32_t)v, j)) == TOPO__R_SWITCH)
          rc = place(m, neighbour(m, (uint32_t)v, j), topo_nic_leaf(t, m->canon[v]), t);
    }
  }
  for (size_t v = 0; v < m->g.nnodes && rc == SIM_OK; v++) /* PCIe switches: by their GPU */
    for (uint32_t j = m->adj.first[v];
         role(m, (uint32_t)v) == TOPO__R_PCIE_SWITCH && j < m->adj.first[v + 1] && rc == SIM_OK;
         j++)
      if (role(m, neighbour(m, (uint32_t)v, j)) == TOPO__R_GPU)
        rc = place(m, (uint32_t)v, t->v_psw + m->canon[neighbour(m, (uint32_t)v, j)], t);
  uint32_t per_pod = s->tiers == 3 ? s->half : s->leaves;
  for (uint32_t p = 0; p < t->planes && rc == SIM_OK; p++)
    for (uint32_t pod = 0; pod < s->pods && s->spines && rc == SIM_OK; pod++) {
      uint32_t L0 = topo__switch_v(t, p, TOPO_TIER_LEAF, pod * per_pod), F0 = m->inv[L0];
      if (pod == 0 || s->tiers == 2) {
        rc = pair_up(m, t, L0, F0, 2);
        for (uint32_t c = 0; c < s->up && rc == SIM_OK && s->cores; c++) {
          uint32_t B = topo__switch_v(t, p, TOPO_TIER_SPINE, pod * s->up + c);
          rc = pair_up(m, t, B, m->inv[B], 3);
        }
        continue;
      }
      /* a later pod's spine c is the one cabled to core group c */
      uint32_t fs[TOPO__MAX_RADIX], nfs = file_up(m, F0, 2, fs, TOPO__MAX_RADIX);
      for (uint32_t c = 0; c < s->up && rc == SIM_OK; c++) {
        uint32_t B = topo__switch_v(t, p, TOPO_TIER_SPINE, pod * s->up + c), core = 0;
        built_up(t, B, &core, 1);
        uint32_t fc = m->inv[core], found = UINT32_MAX;
        for (uint32_t i = 0; i < nfs && found == UINT32_MAX && fc != UINT32_MAX; i++)
          for (uint32_t j = m->adj.first[fs[i]]; j < m->adj.first[fs[i] + 1]; j++)
            if (neighbour(m, fs[i], j) == fc) found = fs[i];
        if (found == UINT32_MAX)
          rc = fail_node(m, F0, "",
                         "no spine above leaf '%s' reaches the core group of spine %u; allowed: "
                         "spine c of every pod cabled to core group c",
                         m->g.node[F0].name, c);
        else rc = place(m, found, B, t);
      }
    }
  for (size_t v = 0; v < m->g.nnodes && rc == SIM_OK; v++)
    if (m->map[v] == UINT32_MAX && role(m, (uint32_t)v) != TOPO__R_SERVER)
      rc = fail_node(m, v, "",
                     "'%s' has no place in the %s fabsim derives from this file (%u-tier, "
                     "radix %u, %u up ports a leaf); allowed: a fat-tree as "
                     "docs/fabric-import.md describes",
                     m->g.node[v].name, cfg_topology_name(t->kind), s->tiers, s->k, s->up);
  return rc;
}

typedef struct ekey {
  uint64_t ends;
  uint64_t lat;
  uint32_t idx;
} ekey;

static int cmp_ekey(const void *x, const void *y) {
  const ekey *a = x, *b = y;
  if (a->ends != b->ends) return a->ends < b->ends ? -1 : 1;
  if (a->lat != b->lat) return a->lat < b->lat ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static ekey edge(uint32_t a, uint32_t b, simtime_ps lat, uint32_t idx) {
  uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
  return (ekey){lo << 32 | hi, lat, idx};
}

/* The file's links and the built fabric's (its fabric part only when the
 * file has no hosts) as sorted multisets: equal, or the first difference. */
static int compare_links(imp *m, const topo *t) {
  ekey *f = sim_malloc((m->g.nlinks + 1) * sizeof *f), *b = sim_malloc((t->nlinks + 1) * sizeof *b);
  size_t nf = 0, nb = 0;
  for (size_t i = 0; i < m->g.nlinks; i++) {
    const topo__glink *l = &m->g.link[i];
    f[nf++] = edge(m->map[l->a], m->map[l->b], m->g.no_latency ? 0 : l->latency, (uint32_t)i);
  }
  for (uint32_t l = 0; l < t->nlinks; l++) {
    const topo_link *k = &t->link[l];
    if (!m->g.hosts && (k->kind == TOPO_LINK_SCALE_UP || k->kind == TOPO_LINK_PCIE)) continue;
    b[nb++] = edge(k->a, k->b, m->g.no_latency ? 0 : k->latency, l);
  }
  qsort(f, nf, sizeof *f, cmp_ekey);
  qsort(b, nb, sizeof *b, cmp_ekey);
  int rc = SIM_OK;
  size_t i = 0;
  for (; i < nf && i < nb; i++)
    if (f[i].ends != b[i].ends || f[i].lat != b[i].lat) break;
  if (i < nf || i < nb) {
    char x[48], y[48];
    bool extra = i < nf && (i >= nb || cmp_ekey(&f[i], &b[i]) < 0);
    if (extra) {
      const topo__glink *l = &m->g.link[f[i].idx];
      rc = fail_link(m, f[i].idx, "",
                     "'%s'-'%s' (%s-%s, latency %llu ps) is not a link of the %s fabsim derives "
                     "from this file (%u-tier, radix %u, %u up ports a leaf); allowed: a "
                     "fat-tree as docs/fabric-import.md describes",
                     m->g.node[l->a].name, m->g.node[l->b].name,
                     topo_vertex_name(t, m->map[l->a], x, sizeof x),
                     topo_vertex_name(t, m->map[l->b], y, sizeof y), (unsigned long long)l->latency,
                     cfg_topology_name(t->kind), t->s.tiers, t->s.k, t->s.up);
    } else {
      const topo_link *k = &t->link[b[i].idx];
      rc = topo__gfail(&m->g, 1, 1, "links", m->err,
                       "no link joins '%s' and '%s' (latency %llu ps), which the %s fabsim "
                       "derives from this file has (%s-%s); allowed: a fat-tree as "
                       "docs/fabric-import.md describes",
                       m->g.node[m->inv[k->a]].name, m->g.node[m->inv[k->b]].name,
                       (unsigned long long)k->latency, cfg_topology_name(t->kind),
                       topo_vertex_name(t, k->a, x, sizeof x),
                       topo_vertex_name(t, k->b, y, sizeof y));
    }
  }
  sim_free(f);
  sim_free(b);
  return rc;
}

static int verify(imp *m, const topo *t) {
  m->map = sim_malloc((m->g.nnodes + 1) * sizeof *m->map);
  m->inv = sim_malloc((t->nvertices + 1) * sizeof *m->inv);
  memset(m->map, 0xff, (m->g.nnodes + 1) * sizeof *m->map);
  memset(m->inv, 0xff, (t->nvertices + 1) * sizeof *m->inv);
  int rc = map_switches(m, t);
  return rc == SIM_OK ? compare_links(m, t) : rc;
}

/* ---- the entry point ----------------------------------------------------------- */

/* ibnetdiscover output starts with its comment header or a node block. */
static bool is_ibnd(const char *buf, size_t len) {
  size_t i = 0;
  while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r')) i++;
  return (len - i >= 1 && buf[i] == '#') || (len - i >= 6 && !memcmp(buf + i, "vendid", 6)) ||
         (len - i >= 6 && !memcmp(buf + i, "Switch", 6));
}

int topo__import_graph(topo__graph *g, const char *buf, size_t len, const char *map_server,
                       sim_error *err) {
  int rc = is_ibnd(buf, len) ? topo__parse_ibnd(g, buf, len, map_server, err)
                             : topo__parse_graph(g, buf, len, err);
  return rc == SIM_OK ? topo__graph_check(g, err) : rc;
}

static void imp_free(imp *m) {
  topo__gadj_free(&m->adj);
  sim_free(m->server_ix);
  sim_free(m->local);
  sim_free(m->canon);
  sim_free(m->tier);
  sim_free(m->plane);
  sim_free(m->map);
  sim_free(m->inv);
  topo__graph_free(&m->g);
}

int topo_load_file(cfg_scenario *cfg, cfg_doc **doc, topo **out, const char *scenario,
                   const char *const *sets, int nsets, sim_error *err) {
  *out = NULL;
  if (!strcmp(cfg->fabric.file, "none"))
    return cfg_fail_at(*doc, "fabric.topology", err,
                       "file needs fabric.file; allowed: the path of a fabric file "
                       "(docs/fabric-import.md)");
  if (cfg->storage.servers)
    return cfg_fail_at(*doc, "storage.servers", err,
                       "storage servers on an imported fabric are not supported yet; allowed 0 "
                       "with fabric.topology: file");
  char path[4096];
  cfg_path_at(path, sizeof path, *doc, "fabric.file", cfg->fabric.file);
  size_t len = 0;
  char *buf = sim_read_file(path, &len);
  if (!buf)
    return cfg_fail_at(*doc, "fabric.file", err, "cannot read '%s'; allowed: a readable file",
                       path);
  imp m;
  memset(&m, 0, sizeof m);
  m.err = err;
  topo__graph_init(&m.g, path);
  int rc = topo__import_graph(&m.g, buf, len, cfg->fabric.map_server, err);
  sim_free(buf);
  size_t nn = m.g.nnodes + 1;
  if (rc == SIM_OK) {
    topo__graph_adjacency(&m.g, &m.adj);
    m.server_ix = sim_malloc(nn * sizeof *m.server_ix);
    memset(m.server_ix, 0xff, nn * sizeof *m.server_ix);
    m.local = sim_calloc(nn, sizeof *m.local);
    m.canon = sim_calloc(nn, sizeof *m.canon);
    m.tier = sim_calloc(nn, sizeof *m.tier);
    m.plane = sim_calloc(nn, sizeof *m.plane);
    rc = hosts(&m, cfg);
  }
  if (rc == SIM_OK) rc = classes(&m);
  if (rc == SIM_OK) rc = switches(&m);
  dkey k[24];
  size_t nk = rc == SIM_OK ? derived_keys(&m, k) : 0;
  if (rc == SIM_OK) rc = conflicts(&m, k, nk, cfg, *doc, err);
  if (rc == SIM_OK) { /* the scenario again, with the file's keys */
    size_t total = (size_t)nsets + nk + 2;
    char **all = sim_calloc(total, sizeof *all);
    char text[160];
    for (int i = 0; i < nsets; i++) all[i] = sim_strdup(sets[i]);
    for (size_t i = 0; i < nk; i++) {
      key_text(&k[i], text, sizeof text);
      all[nsets + i] = sim_strdup(text);
    }
    snprintf(text, sizeof text, "fabric.topology=%s", cfg_topology_name(m.d.family));
    all[nsets + nk] = sim_strdup(text);
    all[nsets + nk + 1] = sim_strdup("fabric.file=none");
    cfg_free(cfg, *doc);
    memset(cfg, 0, sizeof *cfg); /* freeable as it is, whatever cfg_load does */
    *doc = NULL;
    rc = cfg_load(cfg, doc, scenario, (const char *const *)all, (int)total, err);
    for (size_t i = 0; i < total; i++) sim_free(all[i]);
    sim_free(all);
    if (rc == SIM_OK) rc = topo_build(out, cfg, *doc, err);
    if (rc == SIM_OK && (rc = verify(&m, *out)) != SIM_OK) {
      topo_free(*out);
      *out = NULL;
    }
  }
  imp_free(&m);
  return rc;
}
