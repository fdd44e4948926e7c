/* A fabric file in JSON or YAML (the same schema; JSON is read as YAML's
 * flow style): what fabsim topo --export writes, or an LLDP collector or a
 * script emits (docs/fabric-import.md).
 *
 *   format: fabsim-fabric      (optional)   version: 1 (optional)
 *   tiers: 2 | 3               (optional: the tiers the fabric is planned for)
 *   nodes: [{name, role, server, tier, plane, pod, ports, uplinks, latency}]
 *   links: [{a, a_port, b, b_port, speed, latency, cable}]
 *
 * Read with libyaml's event parser (no document tree: memory stays
 * O(nodes + links) of the graph itself), every value with its line:col.
 * Values are scalars; anything else, an unknown key or a bad number is a
 * located error naming what is allowed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "topo/topo_internal.h"

typedef struct jp {
  yaml_parser_t p;
  yaml_event_t ev;
  bool have; /* ev holds an event to delete */
  topo__graph *g;
  sim_error *err;
} jp;

static int syntax(jp *j) {
  yaml_mark_t m = j->p.problem_mark;
  const char *why = j->p.problem ? j->p.problem : "cannot parse";
  return topo__gfail(j->g, (uint32_t)m.line + 1, (uint32_t)m.column + 1, "syntax", j->err,
                     "%s%s%s; allowed: JSON, or YAML of the same schema", why,
                     j->p.context ? " " : "", j->p.context ? j->p.context : "");
}

static int next(jp *j) {
  if (j->have) yaml_event_delete(&j->ev);
  j->have = false;
  if (!yaml_parser_parse(&j->p, &j->ev)) return syntax(j);
  j->have = true;
  return SIM_OK;
}

static uint32_t line_of(const jp *j) { return (uint32_t)j->ev.start_mark.line + 1; }
static uint32_t col_of(const jp *j) { return (uint32_t)j->ev.start_mark.column + 1; }
static const char *text_of(const jp *j) { return (const char *)j->ev.data.scalar.value; }

static int fail_here(jp *j, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_here(jp *j, const char *key, const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return topo__gfail(j->g, line_of(j), col_of(j), key, j->err, "%s", msg);
}

/* A decimal in [lo, hi], no sign, no spaces. */
static int uint_value(jp *j, const char *key, uint64_t lo, uint64_t hi, uint64_t *out) {
  const char *s = text_of(j);
  char *end;
  if (s[0] < '0' || s[0] > '9')
    return topo__gfail(j->g, line_of(j), col_of(j), key, j->err,
                       "'%s' is not a whole number; allowed %llu .. %llu", s,
                       (unsigned long long)lo, (unsigned long long)hi);
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || v < lo || v > hi)
    return topo__gfail(j->g, line_of(j), col_of(j), key, j->err,
                       "'%s' is out of range; allowed %llu .. %llu", s, (unsigned long long)lo,
                       (unsigned long long)hi);
  *out = v;
  return SIM_OK;
}

static int time_value(jp *j, const char *key, simtime_ps *out) {
  sim_error e = {0};
  if (cfg_parse_time(text_of(j), out, &e) == SIM_OK) return SIM_OK;
  return topo__gfail(j->g, line_of(j), col_of(j), key, j->err, "%s", e.msg);
}

static const char *const node_fields =
    "name, role, server, tier, plane, pod, ports, uplinks, latency";
static const char *const link_fields = "a, a_port, b, b_port, speed, latency, cable";

static int node_field(jp *j, topo__gnode *n, const char *f, const char *key) {
  uint64_t v = 0;
  int rc = SIM_OK;
  if (!strcmp(f, "role")) {
    if (topo__role_parse(text_of(j), &n->role) != SIM_OK)
      return fail_here(j, key,
                       "'%s' is not a role; allowed server, gpu, nvswitch, pcie-switch, nic, "
                       "switch",
                       text_of(j));
  } else if (!strcmp(f, "server")) {
    sim_free(n->server_name);
    n->server_name = sim_strdup(text_of(j));
  } else if (!strcmp(f, "tier")) {
    if ((rc = uint_value(j, key, 1, 3, &v)) == SIM_OK) n->tier = (uint8_t)v;
  } else if (!strcmp(f, "plane")) {
    if ((rc = uint_value(j, key, 0, 255, &v)) == SIM_OK) n->plane = (int32_t)v;
  } else if (!strcmp(f, "pod")) {
    rc = uint_value(j, key, 0, UINT32_MAX, &v); /* the tree's own: derived again */
  } else if (!strcmp(f, "ports")) {
    if ((rc = uint_value(j, key, 1, TOPO__MAX_RADIX, &v)) == SIM_OK) n->ports = (uint32_t)v;
  } else if (!strcmp(f, "uplinks")) {
    if ((rc = uint_value(j, key, 1, TOPO__MAX_RADIX, &v)) == SIM_OK) n->uplinks = (uint32_t)v;
  } else if (!strcmp(f, "latency")) {
    if ((rc = time_value(j, key, &n->latency)) == SIM_OK) n->has_latency = true;
  } else {
    char msg[160];
    snprintf(msg, sizeof msg, "unknown key; allowed %s", node_fields);
    return fail_here(j, key, "%s", msg);
  }
  return rc;
}

static int link_field(jp *j, topo__glink *l, const char *f, const char *key) {
  uint64_t v = 0;
  int rc = SIM_OK;
  if (!strcmp(f, "a") || !strcmp(f, "b")) {
    char **slot = f[0] == 'a' ? &l->a_name : &l->b_name;
    sim_free(*slot);
    *slot = sim_strdup(text_of(j));
  } else if (!strcmp(f, "a_port") || !strcmp(f, "b_port")) {
    if ((rc = uint_value(j, key, 1, TOPO__MAX_RADIX, &v)) == SIM_OK)
      *(f[0] == 'a' ? &l->a_port : &l->b_port) = (uint32_t)v;
  } else if (!strcmp(f, "speed")) {
    sim_error e = {0};
    l->speed_line = line_of(j);
    l->speed_col = col_of(j);
    if (cfg_parse_bandwidth(text_of(j), &l->bps, &e) != SIM_OK)
      return topo__gfail(j->g, line_of(j), col_of(j), key, j->err, "%s", e.msg);
  } else if (!strcmp(f, "latency")) {
    rc = time_value(j, key, &l->latency);
  } else if (!strcmp(f, "cable")) {
    static const char *const cables[] = {"nvlink", "pcie", "copper", "optical", "aoc"};
    bool ok = false;
    for (size_t i = 0; i < sizeof cables / sizeof cables[0]; i++)
      ok |= !strcmp(text_of(j), cables[i]);
    if (!ok)
      return fail_here(j, key, "'%s' is not a cable; allowed nvlink, pcie, copper, optical, aoc",
                       text_of(j));
  } else {
    char msg[160];
    snprintf(msg, sizeof msg, "unknown key; allowed %s", link_fields);
    return fail_here(j, key, "%s", msg);
  }
  return rc;
}

/* One item of nodes (is_node) or links: a mapping of scalars. */
static int item(jp *j, bool is_node, size_t i) {
  char key[96], base[48];
  snprintf(base, sizeof base, "%s[%zu]", is_node ? "nodes" : "links", i);
  if (j->ev.type != YAML_MAPPING_START_EVENT)
    return fail_here(j, base, "%s", "not a mapping; allowed: a mapping of its fields");
  uint32_t line = line_of(j), col = col_of(j);
  topo__gnode n;
  memset(&n, 0, sizeof n);
  n.plane = -1;
  n.server = UINT32_MAX;
  topo__glink *l = is_node ? NULL : topo__graph_add_link(j->g);
  char *name = NULL;
  int rc;
  if (l) l->line = line, l->col = col, l->speed_line = line, l->speed_col = col;
  for (;;) {
    if ((rc = next(j)) != SIM_OK) break;
    if (j->ev.type == YAML_MAPPING_END_EVENT) break;
    char f[32];
    if (j->ev.type != YAML_SCALAR_EVENT) {
      rc = fail_here(j, base, "%s", "a key that is not a scalar; allowed: field names");
      break;
    }
    snprintf(f, sizeof f, "%s", text_of(j));
    snprintf(key, sizeof key, "%s.%s", base, f);
    if ((rc = next(j)) != SIM_OK) break;
    if (j->ev.type != YAML_SCALAR_EVENT) {
      rc = fail_here(j, key, "%s", "not a scalar; allowed: a name, number or quantity");
      break;
    }
    if (is_node && !strcmp(f, "name")) {
      sim_free(name);
      name = sim_strdup(text_of(j));
      rc = SIM_OK;
    } else rc = is_node ? node_field(j, &n, f, key) : link_field(j, l, f, key);
    if (rc != SIM_OK) break;
  }
  if (rc == SIM_OK && is_node && !name)
    rc = topo__gfail(j->g, line, col, base, j->err,
                     "no name; allowed: a mapping with name and role");
  if (rc == SIM_OK && l && (!l->a_name || !l->b_name || !l->bps))
    rc = topo__gfail(j->g, line, col, base, j->err, "needs a, b and speed; allowed fields %s",
                     link_fields);
  if (rc == SIM_OK && is_node) {
    uint32_t idx;
    if ((rc = topo__graph_add_node(j->g, name, line, col, &idx, j->err)) == SIM_OK) {
      char *copy = j->g->node[idx].name;
      n.name = copy;
      n.line = line;
      n.col = col;
      j->g->node[idx] = n;
      n.server_name = NULL;
      if (n.role == TOPO__R_GPU) j->g->hosts = true;
    }
  }
  sim_free(n.server_name);
  sim_free(name);
  return rc;
}

static int list(jp *j, bool is_node) {
  const char *what = is_node ? "nodes" : "links";
  if (j->ev.type != YAML_SEQUENCE_START_EVENT)
    return fail_here(j, what, "%s", "not a list; allowed: a list of mappings");
  for (size_t i = 0;; i++) {
    int rc = next(j);
    if (rc != SIM_OK) return rc;
    if (j->ev.type == YAML_SEQUENCE_END_EVENT) return SIM_OK;
    if ((rc = item(j, is_node, i)) != SIM_OK) return rc;
  }
}

static int top(jp *j) {
  int rc;
  bool nodes = false, links = false;
  while ((rc = next(j)) == SIM_OK && j->ev.type != YAML_MAPPING_START_EVENT) {
    if (j->ev.type == YAML_STREAM_START_EVENT || j->ev.type == YAML_DOCUMENT_START_EVENT) continue;
    return fail_here(j, "file", "%s", "not a mapping; allowed: a mapping with nodes and links");
  }
  if (rc != SIM_OK) return rc;
  for (;;) {
    if ((rc = next(j)) != SIM_OK) return rc;
    if (j->ev.type == YAML_MAPPING_END_EVENT) break;
    if (j->ev.type != YAML_SCALAR_EVENT)
      return fail_here(j, "file", "%s",
                       "a key that is not a scalar; allowed: format, version, "
                       "tiers, nodes, links");
    char k[32];
    uint64_t v;
    snprintf(k, sizeof k, "%s", text_of(j));
    if ((rc = next(j)) != SIM_OK) return rc;
    bool scalar = j->ev.type == YAML_SCALAR_EVENT;
    if (!strcmp(k, "nodes")) rc = list(j, true), nodes = true;
    else if (!strcmp(k, "links")) rc = list(j, false), links = true;
    else if (!scalar)
      rc = fail_here(j, k, "%s", "not a scalar; allowed: format, version, tiers, nodes, links");
    else if (!strcmp(k, "format")) {
      if (strcmp(text_of(j), "fabsim-fabric"))
        rc = fail_here(j, k, "'%s'; allowed: fabsim-fabric", text_of(j));
    } else if (!strcmp(k, "version")) rc = uint_value(j, k, 1, 1, &v);
    else if (!strcmp(k, "tiers")) {
      if ((rc = uint_value(j, k, 2, 3, &v)) == SIM_OK) j->g->tiers = (uint32_t)v;
    } else rc = fail_here(j, k, "%s", "unknown key; allowed format, version, tiers, nodes, links");
    if (rc != SIM_OK) return rc;
  }
  if (!nodes || !links)
    return topo__gfail(j->g, 1, 1, nodes ? "links" : "nodes", j->err,
                       "missing; allowed: a mapping with nodes and links");
  return SIM_OK;
}

int topo__parse_graph(topo__graph *g, const char *buf, size_t len, sim_error *err) {
  jp j;
  memset(&j, 0, sizeof j);
  j.g = g;
  j.err = err;
  if (!yaml_parser_initialize(&j.p)) return sim_fail(err, SIM_EINVAL, "libyaml: out of memory");
  yaml_parser_set_input_string(&j.p, (const unsigned char *)buf, len);
  int rc = top(&j);
  if (rc == SIM_OK) {
    for (;;) { /* one document only */
      if ((rc = next(&j)) != SIM_OK) break;
      if (j.ev.type == YAML_STREAM_END_EVENT) break;
      if (j.ev.type == YAML_DOCUMENT_START_EVENT) {
        rc = fail_here(&j, "file", "%s", "a second document; allowed: one");
        break;
      }
    }
  }
  if (j.have) yaml_event_delete(&j.ev);
  yaml_parser_delete(&j.p);
  return rc;
}
