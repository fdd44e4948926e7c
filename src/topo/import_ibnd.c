/* rdma-core ibnetdiscover output as a fabric file (docs/fabric-import.md),
 * in the layout infiniband-diags/ibnetdiscover.c prints (dump_topology):
 *
 *   switchguid=0x...(...)
 *   Switch  <ports> "S-<guid>"   # "<description>" base port 0 lid <lid> lmc <lmc>
 *   [<port>]  "<peer id>"[<peer port>](<peer port guid>)  # "<peer desc>" lid <lid> 4xNDR
 *   caguid=0x...
 *   Ca  <ports> "H-<guid>"       # "<description>"
 *   [<port>](<port guid>)  "<peer id>"[<peer port>]  # lid <lid> lmc <lmc> "<peer desc>" lid <lid>
 * 4xNDR
 *
 * Other lines (vendid=, devid=, sysimgguid=, comments, blank) are skipped;
 * a router (Rt) is refused. Each link is printed from both ends and read
 * once. A link's speed is its width times the lane rate of its speed code,
 * nominal (SDR 2.5, DDR 5, QDR 10, FDR10 10, FDR 14, EDR 25, HDR 50, NDR
 * 100, XDR 200 Gb/s a lane: the InfiniBand Trade Association's roadmap
 * names; 4xNDR = 400 Gb/s as fabsim's NDR defaults). A CA is a NIC; the
 * server is group 1 of fabric.map.server on its description, and a
 * server's NICs are in description order. Latencies are not in the file:
 * the scenario's. Cost: O(lines + links log links).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_internal.h"

typedef struct inode {
  char *id, *desc;
  bool sw;
  uint32_t ports, line, col;
  char *server; /* CAs */
  uint32_t idx; /* in the graph */
} inode;

typedef struct iport {
  uint32_t node, port; /* node: index into nodes */
  char *peer;
  uint32_t peer_port;
  rate_bps bps;
  uint32_t line, col;
} iport;

typedef struct ip {
  topo__graph *g;
  sim_error *err;
  inode *n;
  size_t nn, capn;
  iport *p;
  size_t np, capp;
} ip;

static int fail_line(ip *s, uint32_t line, uint32_t col, const char *what, const char *allowed) {
  return topo__gfail(s->g, line, col, "ibnetdiscover", s->err, "%s; allowed: %s", what, allowed);
}

/* A quoted string at *c: its text (owned), *c past the closing quote. */
static char *quoted(const char **c, const char *end) {
  if (*c >= end || **c != '"') return NULL;
  const char *q = memchr(*c + 1, '"', (size_t)(end - *c - 1));
  if (!q) return NULL;
  size_t n = (size_t)(q - *c - 1);
  char *out = sim_malloc(n + 1);
  memcpy(out, *c + 1, n);
  out[n] = '\0';
  *c = q + 1;
  return out;
}

static void skip_space(const char **c, const char *end) {
  while (*c < end && (**c == ' ' || **c == '\t')) (*c)++;
}

/* "[<n>]" at *c. */
static bool bracket_num(const char **c, const char *end, uint32_t *out) {
  if (*c >= end || **c != '[') return false;
  char *stop;
  unsigned long v = strtoul(*c + 1, &stop, 10);
  if (stop == *c + 1 || stop >= end || *stop != ']' || v == 0 || v > 0xffff) return false;
  *out = (uint32_t)v;
  *c = stop + 1;
  return true;
}

/* "(<hex>)" at *c, skipped when present. */
static void skip_guid(const char **c, const char *end) {
  if (*c < end && **c == '(') {
    const char *q = memchr(*c, ')', (size_t)(end - *c));
    if (q) *c = q + 1;
  }
}

/* The width-speed token ("4xNDR") among the comment's words: the rate in b/s. */
static bool link_rate(const char *c, const char *end, rate_bps *out) {
  static const struct {
    const char *code;
    uint64_t mbps; /* a lane, nominal */
  } lane[] = {{"SDR", 2500},  {"DDR", 5000},  {"QDR", 10000},  {"FDR10", 10000}, {"FDR", 14000},
              {"EDR", 25000}, {"HDR", 50000}, {"NDR", 100000}, {"XDR", 200000}};
  while (c < end) {
    while (c < end && (*c == ' ' || *c == '\t')) c++;
    const char *w = c;
    while (c < end && *c != ' ' && *c != '\t') c++;
    char *x;
    unsigned long width = strtoul(w, &x, 10);
    if (x == w || x >= c || *x != 'x' ||
        !(width == 1 || width == 2 || width == 4 || width == 8 || width == 12))
      continue;
    size_t n = (size_t)(c - x - 1);
    for (size_t i = 0; i < sizeof lane / sizeof lane[0]; i++)
      if (strlen(lane[i].code) == n && !memcmp(x + 1, lane[i].code, n)) {
        *out = (rate_bps)width * lane[i].mbps * 1000000ull;
        return true;
      }
  }
  return false;
}

static int node_line(ip *s, const char *c, const char *end, uint32_t line, bool sw) {
  const char *start = c;
  c += sw ? 6 : 2;
  char *stop;
  unsigned long ports = strtoul(c, &stop, 10);
  if (stop == c || ports < 1 || ports > TOPO__MAX_RADIX)
    return fail_line(s, line, (uint32_t)(c - start) + 1, "a port count out of range",
                     "1 .. 1024 after Switch or Ca");
  c = stop;
  skip_space(&c, end);
  char *id = quoted(&c, end);
  if (!id)
    return fail_line(s, line, (uint32_t)(c - start) + 1, "no quoted node id",
                     "Switch <ports> \"S-<guid>\" # \"<description>\"");
  const char *hash = memchr(c, '#', (size_t)(end - c));
  char *desc = NULL;
  if (hash) {
    const char *d = hash + 1;
    skip_space(&d, end);
    desc = quoted(&d, end);
  }
  sim_grow((void **)&s->n, &s->capn, s->nn + 1, sizeof *s->n);
  s->n[s->nn++] = (inode){id, desc ? desc : sim_strdup(id), sw, (uint32_t)ports, line, 1, NULL, 0};
  return SIM_OK;
}

static int port_line(ip *s, const char *c, const char *end, uint32_t line) {
  const char *start = c;
  if (!s->nn)
    return fail_line(s, line, 1, "a port line before any Switch or Ca", "port lines in a block");
  iport p = {.node = (uint32_t)s->nn - 1, .line = line, .col = 1};
  if (!bracket_num(&c, end, &p.port))
    return fail_line(s, line, 1, "a port number that is not [1 .. 65535]", "[<port>]");
  skip_guid(&c, end);
  skip_space(&c, end);
  p.peer = quoted(&c, end);
  if (!p.peer || !bracket_num(&c, end, &p.peer_port)) {
    sim_free(p.peer);
    return fail_line(s, line, (uint32_t)(c - start) + 1, "no peer \"<id>\"[<port>]",
                     "[<port>] \"<peer id>\"[<peer port>] # ... <width><speed>");
  }
  const char *hash = memchr(c, '#', (size_t)(end - c));
  if (!hash || !link_rate(hash + 1, end, &p.bps)) {
    sim_free(p.peer);
    return fail_line(s, line, hash ? (uint32_t)(hash - start) + 1 : 1, "no link width and speed",
                     "a word such as 4xNDR: 1x, 2x, 4x, 8x or 12x with SDR, DDR, QDR, FDR10, FDR, "
                     "EDR, HDR, NDR or XDR");
  }
  sim_grow((void **)&s->p, &s->capp, s->np + 1, sizeof *s->p);
  s->p[s->np++] = p;
  return SIM_OK;
}

static int read_lines(ip *s, const char *buf, size_t len) {
  uint32_t line = 0;
  for (size_t i = 0; i < len;) {
    const char *c = buf + i, *nl = memchr(c, '\n', len - i), *end = nl ? nl : buf + len;
    i = (size_t)(end - buf) + 1;
    line++;
    if (memchr(c, '\0', (size_t)(end - c)))
      return fail_line(s, line, 1, "a NUL byte", "text as ibnetdiscover prints it");
    skip_space(&c, end);
    int rc = SIM_OK;
    if (c == end || *c == '#' || *c == '\r') continue;
    if ((size_t)(end - c) >= 6 && !memcmp(c, "Switch", 6)) rc = node_line(s, c, end, line, true);
    else if ((size_t)(end - c) >= 2 && !memcmp(c, "Ca", 2) &&
             (end - c == 2 || c[2] == ' ' || c[2] == '\t'))
      rc = node_line(s, c, end, line, false);
    else if (*c == '[') rc = port_line(s, c, end, line);
    else if ((size_t)(end - c) >= 2 && !memcmp(c, "Rt", 2))
      rc = fail_line(s, line, 1, "a router", "switches and CAs (routers: not yet)");
    else if (!memchr(c, '=', (size_t)(end - c)))
      rc = fail_line(s, line, 1, "a line ibnetdiscover does not print",
                     "Switch, Ca, [port] lines, key=value lines and comments");
    if (rc != SIM_OK) return rc;
  }
  return SIM_OK;
}

/* CAs: server from the mapping. */
static int map_servers(ip *s, const char *map_server) {
  regex_t re;
  int e = regcomp(&re, map_server, REG_EXTENDED);
  if (e) {
    char why[128];
    regerror(e, &re, why, sizeof why);
    return sim_fail(s->err, SIM_ECONFIG,
                    "fabric.map.server: '%s' is not a regular expression (%s); allowed: a POSIX "
                    "extended regular expression whose first group names the server",
                    map_server, why);
  }
  int rc = SIM_OK;
  for (size_t i = 0; i < s->nn && rc == SIM_OK; i++) {
    inode *n = &s->n[i];
    regmatch_t m[2];
    if (n->sw) continue;
    if (regexec(&re, n->desc, 2, m, 0) || m[1].rm_so < 0 || m[1].rm_eo <= m[1].rm_so) {
      char what[400];
      snprintf(what, sizeof what, "CA '%s' ('%s'): fabric.map.server '%s' names no server in it",
               n->id, n->desc, map_server);
      rc = fail_line(s, n->line, 1, what, "a fabric.map.server whose group 1 matches every CA");
      continue;
    }
    size_t len = (size_t)(m[1].rm_eo - m[1].rm_so);
    n->server = sim_malloc(len + 1);
    memcpy(n->server, n->desc + m[1].rm_so, len);
    n->server[len] = '\0';
  }
  regfree(&re);
  return rc;
}

typedef struct ca_key {
  const char *server, *desc;
  uint32_t node;
} ca_key;

static int cmp_ca(const void *x, const void *y) {
  const ca_key *a = x, *b = y;
  int c = strcmp(a->server, b->server);
  if (!c) c = strcmp(a->desc, b->desc);
  return c ? c : (a->node > b->node) - (a->node < b->node);
}

typedef struct half {
  uint32_t a, pa, b, pb; /* graph nodes, a < b or (a == b, pa <= pb) */
  size_t rec;
} half;

static int cmp_half(const void *x, const void *y) {
  const half *a = x, *b = y;
  if (a->a != b->a) return a->a < b->a ? -1 : 1;
  if (a->pa != b->pa) return a->pa < b->pa ? -1 : 1;
  if (a->b != b->b) return a->b < b->b ? -1 : 1;
  if (a->pb != b->pb) return a->pb < b->pb ? -1 : 1;
  return a->rec < b->rec ? -1 : a->rec > b->rec;
}

/* Nodes into the graph (switches in file order, then servers and their CAs
 * by server, then description), then each link once. */
static int build(ip *s) {
  topo__graph *g = s->g;
  uint32_t idx, nca = 0;
  ca_key *ca = sim_malloc((s->nn + 1) * sizeof *ca);
  int rc = SIM_OK;
  for (size_t i = 0; i < s->nn && rc == SIM_OK; i++) {
    if (!s->n[i].sw) {
      ca[nca++] = (ca_key){s->n[i].server, s->n[i].desc, (uint32_t)i};
      continue;
    }
    if ((rc = topo__graph_add_node(g, s->n[i].id, s->n[i].line, 1, &idx, s->err)) != SIM_OK) break;
    g->node[idx].role = TOPO__R_SWITCH;
    g->node[idx].ports = s->n[i].ports;
    s->n[i].idx = idx;
  }
  qsort(ca, nca, sizeof *ca, cmp_ca);
  for (uint32_t k = 0; k < nca && rc == SIM_OK; k++) {
    inode *n = &s->n[ca[k].node];
    uint32_t server;
    if (topo__graph_find(g, n->server, &server) != SIM_OK) {
      if ((rc = topo__graph_add_node(g, n->server, n->line, 1, &server, s->err)) != SIM_OK) break;
      g->node[server].role = TOPO__R_SERVER;
    } else if (g->node[server].role != TOPO__R_SERVER) {
      rc = fail_line(s, n->line, 1, "a server named as a switch's id",
                     "a fabric.map.server whose names differ from the node ids");
      break;
    }
    if ((rc = topo__graph_add_node(g, n->id, n->line, 1, &idx, s->err)) != SIM_OK) break;
    g->node[idx].role = TOPO__R_NIC;
    g->node[idx].ports = n->ports;
    g->node[idx].server = server;
    n->idx = idx;
  }
  sim_free(ca);
  if (rc != SIM_OK) return rc;
  half *h = sim_malloc((s->np + 1) * sizeof *h);
  for (size_t i = 0; i < s->np && rc == SIM_OK; i++) {
    const iport *p = &s->p[i];
    uint32_t a = s->n[p->node].idx, b;
    if (topo__graph_find(g, p->peer, &b) != SIM_OK) {
      char what[300];
      snprintf(what, sizeof what, "peer '%s' is no Switch or Ca of the file", p->peer);
      rc = fail_line(s, p->line, 1, what, "peers listed as Switch or Ca blocks");
      break;
    }
    bool swap = a > b || (a == b && p->port > p->peer_port);
    h[i] = swap ? (half){b, p->peer_port, a, p->port, i} : (half){a, p->port, b, p->peer_port, i};
  }
  if (rc == SIM_OK) qsort(h, s->np, sizeof *h, cmp_half);
  for (size_t i = 0; i < s->np && rc == SIM_OK; i++) {
    const iport *p = &s->p[h[i].rec];
    if (i && !cmp_half(&(half){h[i].a, h[i].pa, h[i].b, h[i].pb, h[i - 1].rec}, &h[i - 1])) {
      if (p->bps != s->p[h[i - 1].rec].bps)
        rc = fail_line(s, p->line, 1, "a speed that differs from the other end's",
                       "one width and speed a link");
      continue; /* the link's other end */
    }
    topo__glink *l = topo__graph_add_link(g);
    *l = (topo__glink){.a = h[i].a,
                       .b = h[i].b,
                       .a_port = h[i].pa,
                       .b_port = h[i].pb,
                       .bps = p->bps,
                       .line = p->line,
                       .col = 1,
                       .speed_line = p->line,
                       .speed_col = 1};
  }
  sim_free(h);
  return rc;
}

int topo__parse_ibnd(topo__graph *g, const char *buf, size_t len, const char *map_server,
                     sim_error *err) {
  ip s = {.g = g, .err = err};
  g->ibnd = true;
  g->no_latency = true;
  int rc = read_lines(&s, buf, len);
  if (rc == SIM_OK) rc = map_servers(&s, map_server);
  if (rc == SIM_OK) rc = build(&s);
  for (size_t i = 0; i < s.nn; i++) {
    sim_free(s.n[i].id);
    sim_free(s.n[i].desc);
    sim_free(s.n[i].server);
  }
  for (size_t i = 0; i < s.np; i++) sim_free(s.p[i].peer);
  sim_free(s.n);
  sim_free(s.p);
  return rc;
}
