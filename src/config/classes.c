/* The scenario's traffic classes (issue 16): `fabric.classes`, a list of
 * at most 8 mappings {id, name, priority, weight, lossless, ecn: {kmin,
 * kmax, pmax}, buffer}, and the class a workload names
 * (workload.traffic_class, jobs[j].traffic_class). This file knows the
 * fields, checks one entry, resolves the 8 classes and writes the table
 * back; load_classes.c walks the YAML and keeps locations.
 *
 * Defaults reproduce the packet fidelity's hard-wired queues of before:
 * classes 7 and 6 strict priority at levels 2 and 1 (7, which carries the
 * CNPs, first), classes 0..5 at level 0 with weight 1 each, every class
 * lossless as the transport is (InfiniBand credits; RoCE fabric.roce.pfc;
 * Ethernet lossy), ECN at fabric.ecn.*, the whole shared buffer. A listed
 * class takes level 0 and weight 1 unless it says otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_internal.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const field_names[CFG__CF_N] = {
    "id", "name", "priority", "weight", "lossless", "ecn.kmin", "ecn.kmax", "ecn.pmax", "buffer"};

const char *cfg__class_field_name(int f) { return f >= 0 && f < CFG__CF_N ? field_names[f] : "?"; }

int cfg__class_field_find(const char *name, size_t len) {
  return cfg__field_find(field_names, CFG__CF_N, name, len);
}

void cfg__class_unknown_field(const char *name, size_t len, char *msg, size_t cap) {
  cfg__field_unknown(field_names, CFG__CF_N, "class",
                     "id, name, priority, weight, lossless, ecn: {kmin, kmax, pmax}, buffer", name,
                     len, msg, cap);
}

/* An integer lo..hi from text (digits only). */
static int parse_int(const char *t, size_t n, uint32_t lo, uint32_t hi, uint32_t *out, char *msg,
                     size_t cap) {
  char shown[96];
  size_t digits = 0;
  while (digits < n && t[digits] >= '0' && t[digits] <= '9') digits++;
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  unsigned long long v = n > 0 && digits == n && n <= 9 ? strtoull(t, NULL, 10) : 0;
  if (n == 0 || digits != n || n > 9 || v < lo || v > hi) {
    snprintf(msg, cap, "expected an integer %u..%u, got '%s'", lo, hi, shown);
    return SIM_ECONFIG;
  }
  *out = (uint32_t)v;
  return SIM_OK;
}

/* A number in (lo, 1] (lo_open) or [lo, 1]. */
static int parse_share(const char *t, size_t n, double lo, bool lo_open, double *out, char *msg,
                       size_t cap) {
  char copy[64], shown[96];
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  if (n == 0 || n >= sizeof copy || cfg__scan_number(t, n) != n) {
    snprintf(msg, cap, "expected a number %s%g, 1], got '%s'", lo_open ? "(" : "[", lo, shown);
    return SIM_ECONFIG;
  }
  memcpy(copy, t, n);
  copy[n] = '\0';
  double v = strtod(copy, NULL);
  if (v > 1 || v < lo || (lo_open && v == lo)) {
    snprintf(msg, cap, "%s is out of range; allowed %s%g, 1]", copy, lo_open ? "(" : "[", lo);
    return SIM_ECONFIG;
  }
  *out = v;
  return SIM_OK;
}

/* A class name: a word of letters, digits, '-' and '_' that is not a
 * number (a number names a class by its id). */
static int parse_name(cfg_tclass *c, const char *t, size_t n, char *msg, size_t cap) {
  char shown[96];
  size_t digits = 0, ok = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = t[i];
    digits += ch >= '0' && ch <= '9';
    ok += (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '-' || ch == '_';
  }
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  if (n == 0 || n > 32 || ok != n || digits == n) {
    snprintf(msg, cap,
             "'%s' is not a class name; allowed 1..32 letters, digits, '-' and '_', not all "
             "digits (a number names a class by its id)",
             shown);
    return SIM_ECONFIG;
  }
  cfg__text_set(&c->name, t, n);
  return SIM_OK;
}

static int parse_bool(const char *t, size_t n, bool *out, char *msg, size_t cap) {
  static const char *const yes[] = {"true", "True", "TRUE"}, *const no[] = {"false", "False",
                                                                            "FALSE"};
  for (size_t i = 0; i < NELEM(yes); i++) {
    if (strlen(yes[i]) == n && memcmp(yes[i], t, n) == 0) return *out = true, SIM_OK;
    if (strlen(no[i]) == n && memcmp(no[i], t, n) == 0) return *out = false, SIM_OK;
  }
  char shown[96];
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  snprintf(msg, cap, "expected true or false, got '%s'", shown);
  return SIM_ECONFIG;
}

int cfg__class_set_field(cfg_tclass *c, uint32_t *id, int field, const char *t, size_t n, char *msg,
                         size_t cap) {
  while (n > 0 && (t[0] == ' ' || t[0] == '\t')) t++, n--;
  while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t')) n--;
  if (cfg__check_text(t, n, msg, cap) != SIM_OK) return SIM_ECONFIG;
  int rc = SIM_ECONFIG;
  switch (field) {
  case CFG__CF_ID: rc = parse_int(t, n, 0, CFG_CLASSES - 1, id, msg, cap); break;
  case CFG__CF_NAME: rc = parse_name(c, t, n, msg, cap); break;
  case CFG__CF_PRIORITY: rc = parse_int(t, n, 0, CFG_CLASSES - 1, &c->priority, msg, cap); break;
  case CFG__CF_WEIGHT: rc = parse_int(t, n, 1, CFG__CLASS_WEIGHT_MAX, &c->weight, msg, cap); break;
  case CFG__CF_LOSSLESS: rc = parse_bool(t, n, &c->lossless, msg, cap); break;
  case CFG__CF_ECN_KMIN:
  case CFG__CF_ECN_KMAX: {
    uint64_t *v = field == CFG__CF_ECN_KMIN ? &c->ecn_kmin : &c->ecn_kmax;
    rc = cfg__parse_size_n(t, n, v, msg, cap);
    if (rc == SIM_OK && *v == 0) {
      snprintf(msg, cap, "must be above 0 (as fabric.ecn.kmin and kmax)");
      rc = SIM_ECONFIG;
    }
    break;
  }
  case CFG__CF_ECN_PMAX: rc = parse_share(t, n, 0, false, &c->ecn_pmax, msg, cap); break;
  case CFG__CF_BUFFER: rc = parse_share(t, n, 0, true, &c->buffer, msg, cap); break;
  default: snprintf(msg, cap, "expected a value"); break;
  }
  if (rc == SIM_OK) c->given |= (uint8_t)(field == CFG__CF_ID ? 0 : 1u << (field - 1));
  return rc;
}

bool cfg__class_given(const cfg_tclass *c, int field) {
  return field > CFG__CF_ID && (c->given >> (field - 1)) & 1;
}

/* The defaults of class id, listed or not (see the header comment);
 * lossless and ECN are filled by cfg__classes_resolve once the transport
 * and fabric.ecn.* are known. */
static void class_default(cfg_tclass *c, uint32_t id, bool listed) {
  c->priority = listed ? 0 : id == 7 ? 2 : id == 6 ? 1 : 0;
  c->weight = 1;
  c->buffer = 1;
}

void cfg__class_init(cfg_tclass *c, uint32_t id) {
  memset(c, 0, sizeof *c);
  class_default(c, id, true);
}

void cfg__classes_free(cfg_class_table *t) {
  for (int k = 0; k < CFG_CLASSES; k++) sim_free(t->v[k].name);
  memset(t, 0, sizeof *t);
}

int cfg__classes_resolve(cfg_scenario *s, int *bad_class, int *bad_field, char *msg, size_t cap) {
  cfg_class_table *t = &s->fabric.classes;
  uint8_t listed = 0;
  for (uint32_t i = 0; i < t->n; i++) listed |= (uint8_t)(1u << t->order[i]);
  cfg_transport tr = s->fabric.transport;
  bool lossless =
      tr == CFG_TRANSPORT_INFINIBAND || (tr == CFG_TRANSPORT_ROCE && s->fabric.roce.pfc);
  for (uint32_t k = 0; k < CFG_CLASSES; k++) {
    cfg_tclass *c = &t->v[k];
    if (!(listed >> k & 1)) {
      sim_free(c->name);
      memset(c, 0, sizeof *c);
      class_default(c, k, false);
    }
    if (!c->name) {
      char def[8];
      snprintf(def, sizeof def, "tc%u", k);
      cfg__text_set(&c->name, def, strlen(def));
    }
    if (!cfg__class_given(c, CFG__CF_LOSSLESS)) c->lossless = lossless;
    if (!cfg__class_given(c, CFG__CF_ECN_KMIN)) c->ecn_kmin = s->fabric.ecn.kmin;
    if (!cfg__class_given(c, CFG__CF_ECN_KMAX)) c->ecn_kmax = s->fabric.ecn.kmax;
    if (!cfg__class_given(c, CFG__CF_ECN_PMAX)) c->ecn_pmax = s->fabric.ecn.pmax;
  }
  for (uint32_t i = 0; i < t->n; i++) {
    uint32_t k = t->order[i];
    const cfg_tclass *c = &t->v[k];
    *bad_class = (int)i;
    if (tr == CFG_TRANSPORT_INFINIBAND && !c->lossless) {
      *bad_field = CFG__CF_LOSSLESS;
      snprintf(msg, cap,
               "InfiniBand is lossless on every virtual lane (credit-based flow control); "
               "allowed: true, or a lossy class on fabric.transport roce or ethernet");
      return SIM_ECONFIG;
    }
    if (c->ecn_kmin > c->ecn_kmax) {
      *bad_field = cfg__class_given(c, CFG__CF_ECN_KMAX) ? CFG__CF_ECN_KMAX : CFG__CF_ECN_KMIN;
      snprintf(msg, cap,
               "ecn.kmin (%llu B) is above ecn.kmax (%llu B); marking starts at kmin and "
               "reaches pmax at kmax, so kmin <= kmax",
               (unsigned long long)c->ecn_kmin, (unsigned long long)c->ecn_kmax);
      return SIM_ECONFIG;
    }
  }
  return SIM_OK;
}

int cfg_class_find(const cfg_class_table *t, const char *text, uint8_t *id, char *msg, size_t cap) {
  size_t n = strlen(text), digits = 0;
  char shown[96], names[CFG_CLASSES * 40] = "";
  size_t o = 0;
  while (digits < n && text[digits] >= '0' && text[digits] <= '9') digits++;
  if (n > 0 && digits == n) {
    unsigned long v = n <= 2 ? strtoul(text, NULL, 10) : CFG_CLASSES;
    if (v < CFG_CLASSES) {
      *id = (uint8_t)v;
      return SIM_OK;
    }
  } else {
    for (uint32_t k = 0; k < CFG_CLASSES; k++)
      if (t->v[k].name && strcmp(t->v[k].name, text) == 0) {
        *id = (uint8_t)k;
        return SIM_OK;
      }
  }
  for (uint32_t k = 0; k < CFG_CLASSES && o < sizeof names; k++)
    o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", k ? ", " : "",
                          t->v[k].name ? t->v[k].name : "?");
  cfg__excerpt(shown, sizeof shown, text, n, 64);
  snprintf(msg, cap, "'%s' is not a traffic class; allowed a class id 0..7 or a name (%s)", shown,
           names);
  return SIM_ECONFIG;
}

bool cfg_classes_used(const cfg_scenario *s) {
  if (s->fabric.classes.n > 0 || s->workload.tclass != 0) return true;
  for (uint32_t j = 0; j < s->jobs.n; j++)
    if (s->jobs.v[j].workload.tclass != 0) return true;
  return false;
}

void cfg__classes_text(const cfg_class_table *t, cfg__buf *b) {
  char kmin[CFG__VALUE_TEXT], kmax[CFG__VALUE_TEXT], pmax[CFG__VALUE_TEXT], buf[CFG__VALUE_TEXT];
  cfg__buf_puts(b, "[");
  for (uint32_t i = 0; i < t->n; i++) {
    uint32_t k = t->order[i];
    const cfg_tclass *c = &t->v[k];
    cfg__format_size(kmin, sizeof kmin, c->ecn_kmin);
    cfg__format_size(kmax, sizeof kmax, c->ecn_kmax);
    cfg__format_double(pmax, sizeof pmax, c->ecn_pmax);
    cfg__format_double(buf, sizeof buf, c->buffer);
    cfg__buf_printf(b, "%s{id: %u, name: ", i ? ", " : "", k);
    cfg__quote_yaml(b, c->name ? c->name : "");
    cfg__buf_printf(b,
                    ", priority: %u, weight: %u, lossless: %s, ecn: {kmin: %s, kmax: %s, pmax: "
                    "%s}, buffer: %s}",
                    c->priority, c->weight, c->lossless ? "true" : "false", kmin, kmax, pmax, buf);
  }
  cfg__buf_puts(b, "]");
}

void cfg__classes_markdown(cfg__buf *b) {
  static const char *const doc[CFG__CF_N][2] = {
      {"integer 0..7",
       "The class (802.1p priority, InfiniBand service level); default: its position in the list."},
      {"name",
       "What workloads call it (workload.traffic_class, jobs[j].traffic_class); default "
       "`tc<id>`, which names no other class."},
      {"integer 0..7",
       "Strict priority level: a port serves the highest level with a packet it may send; the "
       "classes of one level share it by deficit-weighted round robin. Default 0."},
      {"integer 1..1000",
       "Deficit-weighted round robin weight within its level: a class's "
       "quantum is weight x the largest frame. Default 1."},
      {"true or false",
       "Lossless (PFC per class on RoCE and Ethernet; InfiniBand credits) or lossy (tail drop). "
       "Default: the transport's (fabric.roce.pfc on RoCE; InfiniBand only lossless)."},
      {"size > 0",
       "ECN marking starts above this depth of the class's queue; default fabric.ecn.kmin."},
      {"size > 0", "Marking probability reaches ecn.pmax here; default fabric.ecn.kmax."},
      {"number [0, 1]", "Marking probability at ecn.kmax; default fabric.ecn.pmax."},
      {"number (0, 1]",
       "Share of each switch's shared buffer the class's queues may hold "
       "together; the class's dynamic threshold applies to what is left of "
       "it. Default 1."},
  };
  cfg__buf_puts(b, "\n#### class entries\n\n| field | type | meaning |\n|---|---|---|\n");
  for (int i = 0; i < CFG__CF_N; i++)
    cfg__buf_printf(b, "| `%s` | %s | %s |\n", field_names[i], doc[i][0], doc[i][1]);
  cfg__buf_puts(b,
                "\nClasses the table does not list keep their defaults: 7 and 6 strict "
                "priority (levels 2 and 1; the packet fidelity's CNPs travel on 7), 0..5 at "
                "level 0 with weight 1. ecn may be a mapping (`ecn: {kmin: 50KB}`) or dotted "
                "fields (`ecn.kmin: 50KB`).\n");
}
