/* The scenario's `faults:` list: one entry per fault, each a small mapping
 * {at, kind, target, factor, ber, duration, period, count}. This file knows
 * the fields, their types and which kinds take them; load.c walks the YAML
 * and keeps locations, dump.c writes the list back.
 *
 * A field a kind does not use is an error (a typo such as `period` on a
 * link-down would otherwise be ignored in silence). Names in `target` are
 * only checked for being non-empty here; flt_resolve (src/reliability)
 * resolves them against the topology.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_internal.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const kind_names[] = {"link-down",    "link-up",   "link-flap", "link-degraded",
                                         "switch-down",  "switch-up", "nic-down",  "nic-up",
                                         "gpu-slowdown", "gpu-fail",  "node-fail", "sdc"};
_Static_assert(NELEM(kind_names) == CFG_FAULT_SDC + 1, "one name per fault kind");
_Static_assert(sizeof(cfg_fault_kind) == sizeof(int), "enum fields are stored as int");

static const char *const field_names[CFG__FF_N] = {"at",  "kind",     "target", "factor",
                                                   "ber", "duration", "period", "count"};

const char *cfg_fault_kind_name(cfg_fault_kind k) {
  return (int)k >= 0 && (size_t)k < NELEM(kind_names) ? kind_names[k] : "(invalid)";
}

bool cfg_fault_is_network(cfg_fault_kind k) { return k <= CFG_FAULT_NIC_UP; }

const char *cfg__fault_field_name(int f) { return f >= 0 && f < CFG__FF_N ? field_names[f] : "?"; }

int cfg__fault_field_find(const char *name, size_t len) {
  for (int i = 0; i < CFG__FF_N; i++)
    if (strlen(field_names[i]) == len && memcmp(field_names[i], name, len) == 0) return i;
  return -1;
}

/* Which fields each kind takes: bit f of uses[kind]; required ones in needs. */
#define B(f) (1u << (f))
#define BASE (B(CFG__FF_AT) | B(CFG__FF_KIND) | B(CFG__FF_TARGET))
static unsigned uses(cfg_fault_kind k) {
  switch (k) {
  case CFG_FAULT_LINK_DOWN:
  case CFG_FAULT_SWITCH_DOWN:
  case CFG_FAULT_NIC_DOWN: return BASE | B(CFG__FF_DURATION);
  case CFG_FAULT_LINK_FLAP:
    return BASE | B(CFG__FF_DURATION) | B(CFG__FF_PERIOD) | B(CFG__FF_COUNT);
  case CFG_FAULT_LINK_DEGRADED:
    return BASE | B(CFG__FF_FACTOR) | B(CFG__FF_BER) | B(CFG__FF_DURATION);
  case CFG_FAULT_GPU_SLOWDOWN: return BASE | B(CFG__FF_FACTOR) | B(CFG__FF_DURATION);
  default: return BASE;
  }
}
static unsigned needs(cfg_fault_kind k) {
  switch (k) {
  case CFG_FAULT_LINK_FLAP: return BASE | B(CFG__FF_DURATION) | B(CFG__FF_PERIOD);
  case CFG_FAULT_LINK_DEGRADED:
  case CFG_FAULT_GPU_SLOWDOWN: return BASE | B(CFG__FF_FACTOR);
  default: return BASE;
  }
}

/* "link-degraded, gpu-slowdown": the kinds that take field f. */
static void kinds_using(int f, char *out, size_t cap) {
  size_t o = 0;
  out[0] = '\0';
  for (size_t k = 0; k < NELEM(kind_names) && o < cap; k++)
    if (uses((cfg_fault_kind)k) & B(f))
      o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? ", " : "", kind_names[k]);
}

static int parse_fraction(const char *t, size_t n, double *out, char *msg, size_t cap) {
  char copy[64], shown[96];
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  if (n == 0 || n >= sizeof copy || cfg__scan_number(t, n) != n) {
    snprintf(msg, cap, "expected a number, got '%s'", shown);
    return SIM_ECONFIG;
  }
  memcpy(copy, t, n);
  copy[n] = '\0';
  *out = strtod(copy, NULL);
  return SIM_OK;
}

static int parse_kind(const char *t, size_t n, cfg_fault_kind *out, char *msg, size_t cap) {
  char shown[96], list[512];
  size_t o = 0;
  for (size_t k = 0; k < NELEM(kind_names); k++)
    if (strlen(kind_names[k]) == n && memcmp(kind_names[k], t, n) == 0) {
      *out = (cfg_fault_kind)k;
      return SIM_OK;
    }
  for (size_t k = 0; k < NELEM(kind_names); k++)
    o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", k ? ", " : "", kind_names[k]);
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  if (n == 0) snprintf(msg, cap, "missing value; allowed %s", list);
  else snprintf(msg, cap, "'%s' is not a fault kind; allowed %s", shown, list);
  return SIM_ECONFIG;
}

int cfg__fault_set_field(cfg_fault *f, int field, const char *t, size_t n, char *msg, size_t cap) {
  char shown[96];
  uint64_t v;
  while (n > 0 && (t[0] == ' ' || t[0] == '\t')) t++, n--;
  while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t')) n--;
  if (cfg__check_text(t, n, msg, cap) != SIM_OK) return SIM_ECONFIG;
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  switch (field) {
  case CFG__FF_AT: return cfg__parse_time_n(t, n, &f->at, msg, cap);
  case CFG__FF_KIND: return parse_kind(t, n, &f->kind, msg, cap);
  case CFG__FF_TARGET:
    if (n == 0) {
      snprintf(msg, cap,
               "missing value; allowed a name as `fabsim topo` prints it "
               "(leaf0-spine0, spine3, nic17, gpu17, node2)");
      return SIM_ECONFIG;
    }
    cfg__text_set(&f->target, t, n);
    return SIM_OK;
  case CFG__FF_FACTOR:
    if (parse_fraction(t, n, &f->factor, msg, cap) != SIM_OK) return SIM_ECONFIG;
    if (!(f->factor > 0 && f->factor <= 1)) {
      snprintf(msg, cap, "%s is out of range; allowed (0, 1]", shown);
      return SIM_ECONFIG;
    }
    return SIM_OK;
  case CFG__FF_BER:
    if (parse_fraction(t, n, &f->ber, msg, cap) != SIM_OK) return SIM_ECONFIG;
    if (!(f->ber >= 0 && f->ber < 1)) {
      snprintf(msg, cap, "%s is out of range; allowed [0, 1), bit errors per bit", shown);
      return SIM_ECONFIG;
    }
    return SIM_OK;
  case CFG__FF_DURATION: return cfg__parse_time_n(t, n, &f->duration, msg, cap);
  case CFG__FF_PERIOD: return cfg__parse_time_n(t, n, &f->period, msg, cap);
  case CFG__FF_COUNT:
    v = 0;
    for (size_t i = 0; i < n; i++) {
      if (t[i] < '0' || t[i] > '9' || v > 1000000) {
        snprintf(msg, cap, "expected an integer 1..1000000, got '%s'", shown);
        return SIM_ECONFIG;
      }
      v = v * 10 + (uint64_t)(t[i] - '0');
    }
    if (n == 0 || v < 1 || v > 1000000) {
      snprintf(msg, cap, "'%s' is out of range; allowed 1..1000000 cycles", shown);
      return SIM_ECONFIG;
    }
    f->count = (uint32_t)v;
    return SIM_OK;
  }
  snprintf(msg, cap, "unknown field");
  return SIM_ECONFIG;
}

void cfg__fault_unknown_field(const char *name, size_t len, char *msg, size_t cap) {
  char shown[96];
  const char *hint = NULL;
  cfg__excerpt(shown, sizeof shown, name, len, 64);
  /* a typo: at most one edit or one swap of neighbours (O(len) per field) */
  for (int i = 0; i < CFG__FF_N && !hint; i++) {
    const char *f = field_names[i];
    size_t fl = strlen(f), a = 0, ea, eb;
    if (fl + 1 < len || len + 1 < fl) continue;
    while (a < len && a < fl && name[a] == f[a]) a++;
    ea = len, eb = fl; /* common suffix */
    while (ea > a && eb > a && name[ea - 1] == f[eb - 1]) ea--, eb--;
    if ((ea - a <= 1 && eb - a <= 1) ||
        (ea - a == 2 && eb - a == 2 && name[a] == f[a + 1] && name[a + 1] == f[a]))
      hint = f;
  }
  if (hint)
    snprintf(msg, cap,
             "unknown field '%s' (did you mean '%s'?); allowed at, kind, target, factor, "
             "ber, duration, period, count",
             shown, hint);
  else
    snprintf(msg, cap,
             "unknown field '%s'; allowed at, kind, target, factor, ber, duration, "
             "period, count",
             shown);
}

int cfg__fault_check(cfg_fault *f, const uint8_t have[CFG__FF_N], int *field_out, char *msg,
                     size_t cap) {
  char list[256];
  unsigned u, need;
  *field_out = -1;
  if (!have[CFG__FF_KIND]) {
    *field_out = CFG__FF_KIND;
    snprintf(msg, cap, "missing; every fault needs a kind (such as kind: link-down)");
    return SIM_ECONFIG;
  }
  u = uses(f->kind);
  need = needs(f->kind);
  for (int i = 0; i < CFG__FF_N; i++) {
    if (have[i] && !(u & B(i))) {
      *field_out = i;
      kinds_using(i, list, sizeof list);
      snprintf(msg, cap, "not used by %s; allowed for %s", kind_names[f->kind], list);
      return SIM_ECONFIG;
    }
  }
  for (int i = 0; i < CFG__FF_N; i++) {
    if (!have[i] && (need & B(i))) {
      *field_out = i;
      switch (i) {
      case CFG__FF_AT: snprintf(msg, cap, "missing; allowed a time such as at: 1ms"); break;
      case CFG__FF_TARGET:
        snprintf(msg, cap,
                 "missing; allowed a name as `fabsim topo` prints it (such as "
                 "target: leaf0-spine0)");
        break;
      case CFG__FF_FACTOR:
        snprintf(msg, cap, "missing; %s needs a factor, allowed (0, 1] (such as factor: 0.8)",
                 kind_names[f->kind]);
        break;
      default:
        snprintf(msg, cap, "missing; %s needs a %s (such as %s: 1ms)", kind_names[f->kind],
                 field_names[i], field_names[i]);
      }
      return SIM_ECONFIG;
    }
  }
  if (f->kind == CFG_FAULT_LINK_FLAP) {
    if (!have[CFG__FF_COUNT]) f->count = 1;
    if (f->duration == 0) {
      *field_out = CFG__FF_DURATION;
      snprintf(msg, cap,
               "0 is out of range; allowed a time > 0, how long the link stays down "
               "in each cycle");
      return SIM_ECONFIG;
    }
    if (f->period <= f->duration) {
      *field_out = CFG__FF_PERIOD;
      snprintf(msg, cap,
               "must exceed duration (the time down in each cycle); allowed a time "
               "> duration");
      return SIM_ECONFIG;
    }
  }
  if (f->kind == CFG_FAULT_LINK_DEGRADED && !have[CFG__FF_BER]) f->ber = 0;
  return SIM_OK;
}

void cfg__faults_text(const cfg_fault_list *l, cfg__buf *b) {
  char text[CFG__VALUE_TEXT];
  cfg__buf_puts(b, "[");
  for (uint32_t i = 0; i < l->n; i++) {
    const cfg_fault *f = &l->v[i];
    unsigned u = uses(f->kind);
    cfg__format_time(text, sizeof text, f->at);
    cfg__buf_printf(b, "%s{at: %s, kind: %s, target: ", i ? ", " : "", text, kind_names[f->kind]);
    cfg__quote_yaml(b, f->target ? f->target : "");
    if (u & B(CFG__FF_FACTOR)) {
      cfg__format_double(text, sizeof text, f->factor);
      cfg__buf_printf(b, ", factor: %s", text);
    }
    if ((u & B(CFG__FF_BER)) && f->ber != 0) {
      cfg__format_double(text, sizeof text, f->ber);
      cfg__buf_printf(b, ", ber: %s", text);
    }
    if ((u & B(CFG__FF_DURATION)) && f->duration != 0) {
      cfg__format_time(text, sizeof text, f->duration);
      cfg__buf_printf(b, ", duration: %s", text);
    }
    if (u & B(CFG__FF_PERIOD)) {
      cfg__format_time(text, sizeof text, f->period);
      cfg__buf_printf(b, ", period: %s, count: %u", text, f->count);
    }
    cfg__buf_puts(b, "}");
  }
  cfg__buf_puts(b, "]");
}

void cfg__faults_free(cfg_fault_list *l) {
  for (uint32_t i = 0; i < l->n; i++) sim_free(l->v[i].target);
  sim_free(l->v);
  l->v = NULL;
  l->n = 0;
}

void cfg__faults_markdown(cfg__buf *b) {
  static const char *const field_doc[CFG__FF_N][2] = {
      {"time", "When the fault happens, from the start of the run (`1ms`, `250us`)."},
      {"kind", "What happens; see the kinds below."},
      {"name",
       "The element, named as `fabsim topo` prints it: a link `leaf0-spine0` "
       "(`p1.leaf0-p1.spine0` on multi-plane fabrics, `nic17-leaf2`, `spine4-core1/0` for a "
       "link of a partial 3-tier build's bundle), a switch "
       "`spine3`, a NIC `nic17`, a GPU `gpu17`, a node `node2`."},
      {"number (0, 1]",
       "link-degraded: fraction of the link rate left; gpu-slowdown: speed "
       "factor of the GPU (0.8 = 80 % of its normal speed)."},
      {"number [0, 1)",
       "link-degraded: bit error rate; the flow fidelity scales goodput by "
       "the packet success probability (1 - ber)^(bits of an MTU packet), the "
       "packet fidelity drops packets with that probability."},
      {"time",
       "How long the fault lasts, then the element recovers; absent or 0: until the "
       "run ends (or a matching -up entry). link-flap: time down in each cycle."},
      {"time", "link-flap: cycle length, more than duration."},
      {"integer 1..1000000", "link-flap: cycles (default 1)."},
  };
  static const char *const kind_doc[] = {
      "The link stops in both directions; flows on it stall until routing reconverges "
      "(`reliability.reconvergence`), then move to the remaining equal-cost paths.",
      "The link returns; routing takes it back after the reconvergence delay.",
      "The link goes down for `duration` at the start of each `period`, `count` times.",
      "The link runs at `factor` of its rate, with bit errors at `ber`.",
      "Every link of the switch stops; routing avoids the switch after reconvergence.",
      "The switch returns.",
      "The NIC's port (its link to the leaf) stops; traffic fails over over NVLink to "
      "another NIC of the node in the same plane once routing reconverges.",
      "The NIC's port returns.",
      "The GPU computes at `factor` of its speed (thermal throttling).",
      "The GPU fails: the synchronous job stops.",
      "The node fails (all its GPUs): the synchronous job stops.",
      "Silent data corruption on the GPU: recorded with the step at which replicas diverge.",
  };
  cfg__buf_puts(b, "\n#### fault entries\n\n| field | type | meaning |\n|---|---|---|\n");
  for (int i = 0; i < CFG__FF_N; i++)
    cfg__buf_printf(b, "| `%s` | %s | %s |\n", field_names[i], field_doc[i][0], field_doc[i][1]);
  cfg__buf_puts(b, "\n| kind | fields | effect |\n|---|---|---|\n");
  for (size_t k = 0; k < NELEM(kind_names); k++) {
    unsigned u = uses((cfg_fault_kind)k), need = needs((cfg_fault_kind)k);
    size_t o = 0;
    char list[128];
    list[0] = '\0';
    for (int f = CFG__FF_FACTOR; f < CFG__FF_N; f++)
      if (u & B(f))
        o += (size_t)snprintf(list + o, sizeof list - o, "%s`%s`%s", o ? ", " : "", field_names[f],
                              need & B(f) ? " (required)" : "");
    cfg__buf_printf(b, "| `%s` | %s | %s |\n", kind_names[k], o ? list : "-", kind_doc[k]);
  }
}
