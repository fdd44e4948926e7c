/* A parsed fabric file's graph: storage, names, and the checks every fabric
 * file must pass before fabsim reads anything else from it.
 *
 * Names are kept in an open-addressing table (node + 1 per slot, grown at
 * half full), so a lookup is O(1) and a file of 100k nodes resolves in one
 * pass. Messages locate the node or link in the file (line:col) and name it
 * by its JSON path (nodes[i].field) or, for ibnetdiscover, by name.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_internal.h"

static const char *const role_names[TOPO__R_N] = {"server",      "gpu", "nvswitch",
                                                  "pcie-switch", "nic", "switch"};

void topo__graph_init(topo__graph *g, const char *file) {
  memset(g, 0, sizeof *g);
  g->file = file;
}

void topo__graph_free(topo__graph *g) {
  for (size_t i = 0; i < g->nnodes; i++) {
    sim_free(g->node[i].name);
    sim_free(g->node[i].server_name);
  }
  for (size_t i = 0; i < g->nlinks; i++) {
    sim_free(g->link[i].a_name);
    sim_free(g->link[i].b_name);
  }
  sim_free(g->node);
  sim_free(g->link);
  sim_free(g->slot);
  memset(g, 0, sizeof *g);
}

int topo__gfail(const topo__graph *g, uint32_t line, uint32_t col, const char *key, sim_error *err,
                const char *fmt, ...) {
  char msg[sizeof err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return sim_fail(err, SIM_ECONFIG, "%s:%u:%u: %s: %s", g->file, line, col, key, msg);
}

const char *topo__node_key(const topo__graph *g, size_t i, const char *field, char *buf, size_t n) {
  if (g->ibnd) snprintf(buf, n, "'%s'", g->node[i].name);
  else snprintf(buf, n, "nodes[%zu]%s%s", i, *field ? "." : "", field);
  return buf;
}

const char *topo__link_key(const topo__graph *g, size_t i, const char *field, char *buf, size_t n) {
  const topo__glink *l = &g->link[i];
  if (g->ibnd)
    snprintf(buf, n, "'%s'[%u]-'%s'[%u]", g->node[l->a].name, l->a_port, g->node[l->b].name,
             l->b_port);
  else snprintf(buf, n, "links[%zu]%s%s", i, *field ? "." : "", field);
  return buf;
}

static size_t slot_of(const topo__graph *g, const char *name) {
  return (size_t)sim_hash_str(name) & (g->nslots - 1);
}

int topo__graph_find(const topo__graph *g, const char *name, uint32_t *idx) {
  if (!g->nslots || !name) return SIM_ENOENT;
  for (size_t s = slot_of(g, name);; s = (s + 1) & (g->nslots - 1)) {
    uint32_t v = g->slot[s];
    if (!v) return SIM_ENOENT;
    if (!strcmp(g->node[v - 1].name, name)) {
      *idx = v - 1;
      return SIM_OK;
    }
  }
}

static void rehash(topo__graph *g) {
  sim_free(g->slot);
  g->nslots = g->nslots ? 2 * g->nslots : 1024;
  g->slot = sim_calloc(g->nslots, sizeof *g->slot);
  for (size_t i = 0; i < g->nnodes; i++) {
    size_t s = slot_of(g, g->node[i].name);
    while (g->slot[s]) s = (s + 1) & (g->nslots - 1);
    g->slot[s] = (uint32_t)i + 1;
  }
}

int topo__graph_add_node(topo__graph *g, const char *name, uint32_t line, uint32_t col,
                         uint32_t *idx, sim_error *err) {
  uint32_t prev;
  if (topo__graph_find(g, name, &prev) == SIM_OK) {
    char key[96]; /* the new node is not stored yet: its key from its name */
    if (g->ibnd) snprintf(key, sizeof key, "'%s'", name);
    else snprintf(key, sizeof key, "nodes[%zu].name", g->nnodes);
    return topo__gfail(g, line, col, key, err,
                       "'%s' is taken by the node at line %u; allowed: a name of its own", name,
                       g->node[prev].line);
  }
  if (g->nnodes >= TOPO__MAX_ELEMS)
    return topo__gfail(g, line, col, "nodes", err, "more than %d nodes; allowed: at most %d",
                       TOPO__MAX_ELEMS, TOPO__MAX_ELEMS);
  sim_grow((void **)&g->node, &g->cap_nodes, g->nnodes + 1, sizeof *g->node);
  topo__gnode *n = &g->node[g->nnodes];
  memset(n, 0, sizeof *n);
  n->name = sim_strdup(name);
  n->plane = -1;
  n->server = UINT32_MAX;
  n->line = line;
  n->col = col;
  *idx = (uint32_t)g->nnodes++;
  if (2 * g->nnodes > g->nslots) rehash(g);
  else {
    size_t s = slot_of(g, name);
    while (g->slot[s]) s = (s + 1) & (g->nslots - 1);
    g->slot[s] = *idx + 1;
  }
  return SIM_OK;
}

topo__glink *topo__graph_add_link(topo__graph *g) {
  sim_grow((void **)&g->link, &g->cap_links, g->nlinks + 1, sizeof *g->link);
  topo__glink *l = &g->link[g->nlinks++];
  memset(l, 0, sizeof *l);
  return l;
}

/* ---- checks --------------------------------------------------------------------- */

/* Which roles a link may join (either order). */
static bool cabled_ok(topo__role a, topo__role b) {
  if (a > b) {
    topo__role x = a;
    a = b;
    b = x;
  }
  return (a == TOPO__R_GPU &&
          (b == TOPO__R_NVSWITCH || b == TOPO__R_PCIE_SWITCH || b == TOPO__R_NIC)) ||
         (a == TOPO__R_PCIE_SWITCH && b == TOPO__R_NIC) ||
         (a == TOPO__R_NIC && b == TOPO__R_SWITCH) || (a == TOPO__R_SWITCH && b == TOPO__R_SWITCH);
}

static int resolve(topo__graph *g, sim_error *err) {
  char key[96];
  for (size_t i = 0; i < g->nnodes; i++) {
    topo__gnode *n = &g->node[i];
    if (n->role == TOPO__R_SERVER || n->role == TOPO__R_SWITCH || n->server != UINT32_MAX) continue;
    uint32_t s;
    if (!n->server_name)
      return topo__gfail(g, n->line, n->col, topo__node_key(g, i, "server", key, sizeof key), err,
                         "missing; a %s names the server it is in", role_names[n->role]);
    if (topo__graph_find(g, n->server_name, &s) != SIM_OK || g->node[s].role != TOPO__R_SERVER)
      return topo__gfail(g, n->line, n->col, topo__node_key(g, i, "server", key, sizeof key), err,
                         "'%s' is not a node of role server; allowed: a server's name",
                         n->server_name);
    n->server = s;
  }
  for (size_t i = 0; i < g->nlinks; i++) {
    topo__glink *l = &g->link[i];
    if (!l->a_name) continue; /* resolved by its parser */
    const char *end[2] = {l->a_name, l->b_name};
    uint32_t *to[2] = {&l->a, &l->b};
    for (int e = 0; e < 2; e++)
      if (topo__graph_find(g, end[e], to[e]) != SIM_OK)
        return topo__gfail(g, l->line, l->col, topo__link_key(g, i, e ? "b" : "a", key, sizeof key),
                           err, "'%s' names no node; allowed: a name listed in nodes", end[e]);
  }
  return SIM_OK;
}

typedef struct port_use {
  uint32_t node, port, link;
} port_use;

static int cmp_port_use(const void *x, const void *y) {
  const port_use *a = x, *b = y;
  if (a->node != b->node) return a->node < b->node ? -1 : 1;
  if (a->port != b->port) return a->port < b->port ? -1 : 1;
  return a->link < b->link ? -1 : a->link > b->link;
}

/* Speeds, ends, roles and ports of every link. */
static int check_links(topo__graph *g, sim_error *err) {
  char key[96];
  const rate_bps lo = 1000000ull, hi = 10000000000000ull; /* 1 Mb/s .. 10 Tb/s */
  port_use *use = sim_malloc((2 * g->nlinks + 1) * sizeof *use);
  size_t nuse = 0;
  int rc = SIM_OK;
  for (size_t i = 0; i < g->nlinks && rc == SIM_OK; i++) {
    const topo__glink *l = &g->link[i];
    const topo__gnode *a = &g->node[l->a], *b = &g->node[l->b];
    if (l->bps < lo || l->bps > hi)
      rc = topo__gfail(
          g, l->speed_line, l->speed_col, topo__link_key(g, i, "speed", key, sizeof key), err,
          "%llu b/s is out of range; allowed 1Mbps .. 10Tbps", (unsigned long long)l->bps);
    else if (l->a == l->b)
      rc = topo__gfail(g, l->line, l->col, topo__link_key(g, i, "b", key, sizeof key), err,
                       "'%s' is cabled to itself; allowed: two different nodes", a->name);
    else if (!cabled_ok(a->role, b->role))
      rc = topo__gfail(g, l->line, l->col, topo__link_key(g, i, "", key, sizeof key), err,
                       "a %s ('%s') cannot be cabled to a %s ('%s'); allowed: gpu-nvswitch, "
                       "gpu-nic, gpu-pcie-switch, pcie-switch-nic, nic-switch, switch-switch",
                       role_names[a->role], a->name, role_names[b->role], b->name);
    const uint32_t ends[2][2] = {{l->a, l->a_port}, {l->b, l->b_port}};
    for (int e = 0; e < 2 && rc == SIM_OK; e++) {
      const topo__gnode *n = &g->node[ends[e][0]];
      uint32_t port = ends[e][1];
      if (port && n->ports && port > n->ports)
        rc = topo__gfail(g, l->line, l->col,
                         topo__link_key(g, i, e ? "b_port" : "a_port", key, sizeof key), err,
                         "port %u of '%s', which has %u ports; allowed 1 .. %u", port, n->name,
                         n->ports, n->ports);
      if (port) use[nuse++] = (port_use){ends[e][0], port, (uint32_t)i};
    }
  }
  if (rc == SIM_OK) {
    qsort(use, nuse, sizeof *use, cmp_port_use);
    for (size_t j = 1; j < nuse && rc == SIM_OK; j++)
      if (use[j].node == use[j - 1].node && use[j].port == use[j - 1].port) {
        const topo__glink *l = &g->link[use[j].link];
        char other[96];
        topo__link_key(g, use[j - 1].link, "", other, sizeof other);
        rc = topo__gfail(g, l->line, l->col, topo__link_key(g, use[j].link, "", key, sizeof key),
                         err, "port %u of '%s' is already cabled by %s; allowed: one link a port",
                         use[j].port, g->node[use[j].node].name, other);
      }
  }
  sim_free(use);
  return rc;
}

void topo__gadj_free(topo__gadj *a) {
  sim_free(a->first);
  sim_free(a->adj);
}

void topo__graph_adjacency(const topo__graph *g, topo__gadj *a) {
  a->first = sim_calloc(g->nnodes + 1, sizeof *a->first);
  a->adj = sim_malloc((2 * g->nlinks + 1) * sizeof *a->adj);
  for (size_t i = 0; i < g->nlinks; i++) a->first[g->link[i].a + 1]++, a->first[g->link[i].b + 1]++;
  for (size_t v = 0; v < g->nnodes; v++) a->first[v + 1] += a->first[v];
  uint32_t *fill = sim_malloc((g->nnodes + 1) * sizeof *fill);
  memcpy(fill, a->first, (g->nnodes + 1) * sizeof *fill);
  for (size_t i = 0; i < g->nlinks; i++) {
    a->adj[fill[g->link[i].a]++] = (uint32_t)i;
    a->adj[fill[g->link[i].b]++] = (uint32_t)i;
  }
  sim_free(fill);
}

/* A GPU reaches a NIC (directly or over its PCIe switch); a NIC has one
 * switch port; servers have no links; everything else is one graph. */
static int check_shape(const topo__graph *g, const topo__gadj *a, sim_error *err) {
  char key[96];
  size_t start = g->nnodes;
  for (size_t v = 0; v < g->nnodes; v++) {
    const topo__gnode *n = &g->node[v];
    uint32_t nic = 0, sw = 0;
    for (uint32_t j = a->first[v]; j < a->first[v + 1]; j++) {
      uint32_t w = topo__other_end(&g->link[a->adj[j]], (uint32_t)v);
      topo__role r = g->node[w].role;
      if (r == TOPO__R_NIC) nic++;
      if (r == TOPO__R_SWITCH) sw++;
      for (uint32_t k = a->first[w]; r == TOPO__R_PCIE_SWITCH && k < a->first[w + 1]; k++)
        nic += g->node[topo__other_end(&g->link[a->adj[k]], w)].role == TOPO__R_NIC;
    }
    if (n->role == TOPO__R_GPU && !nic)
      return topo__gfail(g, n->line, n->col, topo__node_key(g, v, "", key, sizeof key), err,
                         "GPU '%s' has no NIC: no link to a nic or to a pcie-switch with one; "
                         "allowed: every GPU linked to a NIC of its server",
                         n->name);
    if (n->role == TOPO__R_NIC && sw != 1)
      return topo__gfail(g, n->line, n->col, topo__node_key(g, v, "", key, sizeof key), err,
                         "NIC '%s' is cabled to %u switch ports; allowed: exactly one", n->name,
                         sw);
    if (n->role != TOPO__R_SERVER && start == g->nnodes) start = v;
  }
  if (start == g->nnodes) return SIM_OK;
  /* breadth-first from the first non-server node */
  uint8_t *seen = sim_calloc(g->nnodes, 1);
  uint32_t *queue = sim_malloc(g->nnodes * sizeof *queue);
  size_t head = 0, tail = 0;
  seen[start] = 1;
  queue[tail++] = (uint32_t)start;
  while (head < tail) {
    uint32_t v = queue[head++];
    for (uint32_t j = a->first[v]; j < a->first[v + 1]; j++) {
      uint32_t w = topo__other_end(&g->link[a->adj[j]], v);
      if (!seen[w]) seen[w] = 1, queue[tail++] = w;
    }
  }
  int rc = SIM_OK;
  for (size_t v = 0; v < g->nnodes && rc == SIM_OK; v++)
    if (!seen[v] && g->node[v].role != TOPO__R_SERVER)
      rc = topo__gfail(g, g->node[v].line, g->node[v].col,
                       topo__node_key(g, v, "", key, sizeof key), err,
                       "'%s' has no path to '%s': the graph is disconnected; allowed: one "
                       "connected fabric",
                       g->node[v].name, g->node[start].name);
  sim_free(seen);
  sim_free(queue);
  return rc;
}

int topo__graph_check(topo__graph *g, sim_error *err) {
  int rc = resolve(g, err);
  if (rc == SIM_OK) rc = check_links(g, err);
  if (rc != SIM_OK) return rc;
  topo__gadj a;
  topo__graph_adjacency(g, &a);
  rc = check_shape(g, &a, err);
  topo__gadj_free(&a);
  return rc;
}

const char *topo__role_name(topo__role r) { return r < TOPO__R_N ? role_names[r] : "?"; }

int topo__role_parse(const char *s, topo__role *r) {
  for (int i = 0; i < TOPO__R_N; i++)
    if (!strcmp(s, role_names[i])) {
      *r = (topo__role)i;
      return SIM_OK;
    }
  return SIM_ENOENT;
}
