/* The scenario's `jobs:` list (issue 16): one entry per job sharing the
 * fabric, each a small mapping {name, gpus, placement, nodes, start,
 * workload}. This file knows the fields and checks one entry; load.c walks
 * the YAML and keeps locations, dump.c writes the list back.
 *
 * A job's `workload:` takes the keys of the top-level `workload:`: the same
 * schema rows, parsed by the same setters into the job's own cfg_workload
 * (cfg__set_workload_text), starting from the schema's defaults. The
 * cross-key checks of a workload (validate.c) run on each job in turn.
 *
 * A job runs any workload fabsim runs: collective, traffic, training, trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_internal.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const field_names[CFG__JF_N] = {"name",  "gpus",          "placement", "nodes",
                                                   "start", "traffic_class", "workload"};
static const char *const placement_names[] = {"packed", "spread", "random", "topology-aware",
                                              "explicit"};
_Static_assert(NELEM(placement_names) == CFG_PLACE_EXPLICIT + 1, "one name per placement");
_Static_assert(sizeof(cfg_placement) == sizeof(int), "enum fields are stored as int");

const char *cfg_placement_name(cfg_placement p) {
  return (int)p >= 0 && (size_t)p < NELEM(placement_names) ? placement_names[p] : "(invalid)";
}

const char *cfg__job_field_name(int f) { return f >= 0 && f < CFG__JF_N ? field_names[f] : "?"; }

int cfg__job_field_find(const char *name, size_t len) {
  return cfg__field_find(field_names, CFG__JF_N, name, len);
}

void cfg__job_unknown_field(const char *name, size_t len, char *msg, size_t cap) {
  cfg__field_unknown(field_names, CFG__JF_N, "job",
                     "name, gpus, placement, nodes, start, traffic_class, workload", name, len, msg,
                     cap);
}

int cfg__job_init(cfg_job *j, uint32_t index, char *msg, size_t cap) {
  memset(j, 0, sizeof *j);
  j->index = index;
  for (size_t i = 0; i < cfg__nkeys(); i++) {
    const cfg__key *k = cfg__key_at(i);
    if (!cfg__is_workload_key(i) || !k->def) continue;
    if (cfg__set_workload_text(&j->workload, i, k->def, strlen(k->def), msg, cap) != SIM_OK)
      return SIM_ECONFIG;
  }
  return SIM_OK;
}

static int parse_placement(const char *t, size_t n, cfg_placement *out, char *msg, size_t cap) {
  char shown[96];
  for (size_t p = 0; p < NELEM(placement_names); p++)
    if (strlen(placement_names[p]) == n && memcmp(placement_names[p], t, n) == 0) {
      *out = (cfg_placement)p;
      return SIM_OK;
    }
  cfg__excerpt(shown, sizeof shown, t, n, 64);
  snprintf(msg, cap,
           "'%s' is not a placement; allowed packed, spread, random, topology-aware, explicit "
           "(with nodes: [..])",
           shown);
  return SIM_ECONFIG;
}

int cfg__job_set_field(cfg_job *j, int field, const char *t, size_t n, char *msg, size_t cap) {
  char num[32];
  while (n > 0 && (t[0] == ' ' || t[0] == '\t')) t++, n--;
  while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t')) n--;
  if (cfg__check_text(t, n, msg, cap) != SIM_OK) return SIM_ECONFIG;
  switch (field) {
  case CFG__JF_NAME:
    if (n == 0) {
      snprintf(msg, cap, "missing value; expected a name such as train-a");
      return SIM_ECONFIG;
    }
    cfg__text_set(&j->name, t, n);
    return SIM_OK;
  case CFG__JF_GPUS: {
    size_t used = cfg__scan_number(t, n);
    if (n == 0 || n >= sizeof num || used != n || memchr(t, '.', n) || memchr(t, 'e', n) ||
        memchr(t, 'E', n)) {
      char shown[96];
      cfg__excerpt(shown, sizeof shown, t, n, 64);
      snprintf(msg, cap, "expected an integer 1..2^32-1, got '%s'", shown);
      return SIM_ECONFIG;
    }
    memcpy(num, t, n);
    num[n] = '\0';
    unsigned long long v = strtoull(num, NULL, 10);
    if (v == 0 || v > UINT32_MAX) {
      snprintf(msg, cap, "expected an integer 1..2^32-1, got %s", num);
      return SIM_ECONFIG;
    }
    j->gpus = (uint32_t)v;
    return SIM_OK;
  }
  case CFG__JF_PLACEMENT: return parse_placement(t, n, &j->placement, msg, cap);
  case CFG__JF_START: return cfg__parse_time_n(t, n, &j->start, msg, cap);
  case CFG__JF_TRAFFIC_CLASS: { /* the job's workload's class, resolved with fabric.classes */
    int i = cfg__find_key("workload.traffic_class", strlen("workload.traffic_class"));
    if (n == 0) {
      snprintf(msg, cap, "missing value; expected a class id 0..7 or a name of fabric.classes");
      return SIM_ECONFIG;
    }
    return cfg__set_workload_text(&j->workload, (size_t)i, t, n, msg, cap);
  }
  default: snprintf(msg, cap, "expected a list or a mapping"); return SIM_ECONFIG;
  }
}

int cfg__job_check(const cfg_job *j, const uint8_t have[CFG__JF_N], int *field, char *msg,
                   size_t cap) {
  static const int required[] = {CFG__JF_NAME, CFG__JF_GPUS, CFG__JF_WORKLOAD};
  for (size_t i = 0; i < NELEM(required); i++)
    if (!have[required[i]]) {
      *field = required[i];
      snprintf(msg, cap, "missing; every job has a name, gpus and a workload");
      return SIM_ECONFIG;
    }
  if (have[CFG__JF_NODES] != (j->placement == CFG_PLACE_EXPLICIT)) {
    *field = have[CFG__JF_NODES] ? CFG__JF_NODES : CFG__JF_PLACEMENT;
    snprintf(msg, cap, "placement explicit and nodes: [..] go together (placement here: %s)",
             cfg_placement_name(j->placement));
    return SIM_ECONFIG;
  }
  return SIM_OK;
}

void cfg__job_free(cfg_job *j) {
  sim_free(j->name);
  sim_free(j->nodes.v);
  cfg__workload_free(&j->workload);
  memset(j, 0, sizeof *j);
}

void cfg__jobs_free(cfg_job_list *l) {
  for (uint32_t i = 0; i < l->n; i++) cfg__job_free(&l->v[i]);
  sim_free(l->v);
  l->v = NULL;
  l->n = 0;
}

void cfg__jobs_text(const cfg_job_list *l, cfg__buf *b) {
  char text[CFG__VALUE_TEXT];
  cfg__buf_puts(b, "[");
  for (uint32_t i = 0; i < l->n; i++) {
    const cfg_job *j = &l->v[i];
    cfg__buf_puts(b, i ? ", {name: " : "{name: ");
    cfg__quote_yaml(b, j->name ? j->name : "");
    cfg__format_time(text, sizeof text, j->start);
    cfg__buf_printf(b, ", gpus: %u, placement: %s, start: %s", j->gpus,
                    cfg_placement_name(j->placement), text);
    if (j->workload.traffic_class && strcmp(j->workload.traffic_class, "0") != 0) {
      cfg__buf_puts(b, ", traffic_class: ");
      cfg__quote_yaml(b, j->workload.traffic_class);
    }
    if (j->placement == CFG_PLACE_EXPLICIT) {
      cfg__buf_puts(b, ", nodes: [");
      for (uint32_t k = 0; k < j->nodes.n; k++)
        cfg__buf_printf(b, "%s%llu", k ? ", " : "", (unsigned long long)j->nodes.v[k]);
      cfg__buf_puts(b, "]");
    }
    cfg__buf_puts(b, ", workload: {");
    cfg__workload_text(&j->workload, b);
    cfg__buf_puts(b, "}}");
  }
  cfg__buf_puts(b, "]");
}
