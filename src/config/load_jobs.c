/* The scenario's `jobs:` list from YAML (fabsim/config.h, cfg_job): each
 * entry a mapping of fields (jobs.c parses them), its `workload:` a mapping
 * of workload.* keys read with the schema's rows, every field and key
 * located for later messages. Cost: O(entries x keys x schema size). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/load_internal.h"

void cfg__job_locs_free(cfg_doc *doc) {
  for (uint32_t j = 0; j < doc->njloc; j++) {
    sim_free(doc->jloc[j].wl_key);
    sim_free(doc->jloc[j].wl_loc);
  }
  sim_free(doc->jloc);
  doc->jloc = NULL;
  doc->njloc = 0;
}

static void locs_free(cfg__job_loc *locs, size_t n) {
  for (size_t j = 0; j < n; j++) {
    sim_free(locs[j].wl_key);
    sim_free(locs[j].wl_loc);
  }
  sim_free(locs);
}

enum { WL_PATH_MAX = 200 };

/* A list key of a job's workload from a YAML sequence: its items joined
 * as the key's list text ("784,128,10"), parsed by the schema's setter. */
static int set_list(loader *ld, cfg_job *job, size_t i, const yaml_node_t *v, cfg_loc vl,
                    const char *name) {
  char msg[512];
  cfg__buf b = {0};
  int rc = SIM_OK;
  for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
    const yaml_node_t *item = yaml_document_get_node(ld->ydoc, *it);
    if (item->type != YAML_SCALAR_NODE) {
      rc = cfg__fail_loc(ld, cfg__loc_of(ld, item->start_mark), name, "expected an integer, got %s",
                         cfg__yaml_kind_name(item));
      break;
    }
    cfg__buf_printf(&b, "%s%.*s", it == v->data.sequence.items.start ? "" : ",",
                    (int)item->data.scalar.length, (const char *)item->data.scalar.value);
  }
  char *text = cfg__buf_take(&b);
  if (rc == SIM_OK &&
      cfg__set_workload_text(&job->workload, i, text, strlen(text), msg, sizeof msg) != SIM_OK)
    rc = cfg__fail_loc(ld, vl, name, "%s", msg);
  sim_free(text);
  return rc;
}

/* Workload key i of a job from its YAML value, located (a key set again,
 * by --set, moves to its new location). */
static int set_workload_value(loader *ld, cfg_job *job, cfg__job_loc *jl, int i,
                              const yaml_node_t *v, const char *name) {
  char msg[512];
  cfg_loc vl = cfg__loc_of(ld, v->start_mark);
  if (v->type == YAML_SEQUENCE_NODE && cfg__key_at((size_t)i)->type == CFG__LIST) {
    int rc = set_list(ld, job, (size_t)i, v, vl, name);
    if (rc != SIM_OK) return rc;
  } else if (v->type != YAML_SCALAR_NODE) {
    return cfg__fail_loc(ld, vl, name, "expected a value, got %s", cfg__yaml_kind_name(v));
  } else if (cfg__set_workload_text(&job->workload, (size_t)i,
                                    cfg__yaml_is_null(v) ? "" : (const char *)v->data.scalar.value,
                                    cfg__yaml_is_null(v) ? 0 : v->data.scalar.length, msg,
                                    sizeof msg) != SIM_OK) {
    return cfg__fail_loc(ld, vl, name, "%s", msg);
  }
  for (uint32_t w = 0; w < jl->nwl; w++)
    if (jl->wl_key[w] == (uint32_t)i) {
      jl->wl_loc[w] = vl;
      return SIM_OK;
    }
  jl->wl_key = sim_realloc(jl->wl_key, (jl->nwl + 1) * sizeof *jl->wl_key);
  jl->wl_loc = sim_realloc(jl->wl_loc, (jl->nwl + 1) * sizeof *jl->wl_loc);
  jl->wl_key[jl->nwl] = (uint32_t)i;
  jl->wl_loc[jl->nwl++] = vl;
  return SIM_OK;
}

/* Key path (schema index i, -1: none) of a job's workload, named `name`:
 * a workload.* key other than workload.traffic_class (the job's own field). */
static int check_workload_key(loader *ld, const cfg_job *job, cfg_loc kl, const char *path,
                              size_t len, int i, const char *name) {
  if (i >= 0 && strcmp(path, "workload.traffic_class") == 0)
    return cfg__fail_loc(
        ld, kl, name, "a job's class is the job's own field: jobs[%u].traffic_class", job->index);
  if (i < 0 || !cfg__is_workload_key((size_t)i)) {
    const char *hint = cfg__suggest(path, len);
    if (hint && strncmp(hint, "workload.", 9) == 0)
      return cfg__fail_loc(ld, kl, name, "unknown key; did you mean '%s'?", hint);
    return cfg__fail_loc(ld, kl, name,
                         "unknown key; a job's workload takes the workload.* keys "
                         "(docs/scenario.md)");
  }
  return SIM_OK;
}

static int walk_workload(loader *ld, cfg_job *job, cfg__job_loc *jl, const yaml_node_t *map,
                         const char *prefix);

/* One key of a job's workload by its full path (workload.collective.op):
 * a section with a mapping descends, else the key is set once. */
static int workload_key(loader *ld, cfg_job *job, cfg__job_loc *jl, cfg_loc kl, const char *path,
                        size_t len, const yaml_node_t *v) {
  char name[WL_PATH_MAX + 32];
  snprintf(name, sizeof name, "jobs[%u].%s", job->index, path);
  int i = cfg__find_key(path, len);
  if (v->type == YAML_MAPPING_NODE && cfg__is_section(path, len))
    return walk_workload(ld, job, jl, v, path);
  int rc = check_workload_key(ld, job, kl, path, len, i, name);
  if (rc != SIM_OK) return rc;
  for (uint32_t w = 0; w < jl->nwl; w++)
    if (jl->wl_key[w] == (uint32_t)i)
      return cfg__fail_loc(ld, kl, name, "duplicate key (first set at line %u, column %u)",
                           jl->wl_loc[w].line, jl->wl_loc[w].col);
  return set_workload_value(ld, job, jl, i, v, name);
}

/* One mapping of a job's workload, keys relative to `prefix` ("workload"
 * at the top): a mapping value descends, a value sets the schema key
 * prefix.key (dotted names such as collective.op work at any level). */
static int walk_workload(loader *ld, cfg_job *job, cfg__job_loc *jl, const yaml_node_t *map,
                         const char *prefix) {
  char path[WL_PATH_MAX + 1];
  for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top;
       pair++) {
    const yaml_node_t *k = yaml_document_get_node(ld->ydoc, pair->key);
    const yaml_node_t *v = yaml_document_get_node(ld->ydoc, pair->value);
    cfg_loc kl = cfg__loc_of(ld, k->start_mark);
    if (k->type != YAML_SCALAR_NODE)
      return cfg__fail_loc(ld, kl, NULL, "a key must be a name such as collective.op, not %s",
                           cfg__yaml_kind_name(k));
    int len = snprintf(path, sizeof path, "%s.%.*s", prefix, (int)k->data.scalar.length,
                       (const char *)k->data.scalar.value);
    if (len < 0 || (size_t)len >= sizeof path)
      return cfg__fail_loc(ld, kl, NULL, "jobs[%u]: unknown key (too long)", job->index);
    int rc = workload_key(ld, job, jl, kl, path, (size_t)len, v);
    if (rc != SIM_OK) return rc;
  }
  return SIM_OK;
}

/* placement explicit's node list: integers, at most CFG__LIST_MAX. */
static int set_nodes(loader *ld, cfg_job *job, const yaml_node_t *v, const char *name) {
  size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
  if (n == 0 || n > CFG__LIST_MAX)
    return cfg__fail_loc(ld, cfg__loc_of(ld, v->start_mark), name,
                         "%zu nodes; allowed 1..%d node indices", n, CFG__LIST_MAX);
  job->nodes.v = sim_calloc(n, sizeof *job->nodes.v);
  job->nodes.n = (uint32_t)n;
  for (size_t j = 0; j < n; j++) {
    const yaml_node_t *item = yaml_document_get_node(ld->ydoc, v->data.sequence.items.start[j]);
    const char *t = (const char *)item->data.scalar.value;
    size_t len = item->type == YAML_SCALAR_NODE ? item->data.scalar.length : 0;
    size_t digits = 0;
    while (digits < len && t[digits] >= '0' && t[digits] <= '9') digits++;
    if (item->type != YAML_SCALAR_NODE || len == 0 || digits != len || len > 9)
      return cfg__fail_loc(ld, cfg__loc_of(ld, item->start_mark), name,
                           "item %zu: expected a node index 0..999999999", j + 1);
    job->nodes.v[j] = strtoull(t, NULL, 10);
  }
  return SIM_OK;
}

/* One field of entry j from its YAML value. */
static int set_field(loader *ld, cfg_job *job, cfg__job_loc *jl, int field, const yaml_node_t *val,
                     const char *name) {
  char msg[512];
  cfg_loc vl = cfg__loc_of(ld, val->start_mark);
  if (field == CFG__JF_WORKLOAD) {
    if (val->type != YAML_MAPPING_NODE)
      return cfg__fail_loc(ld, vl, name, "expected a mapping such as {kind: collective}, got %s",
                           cfg__yaml_kind_name(val));
    return walk_workload(ld, job, jl, val, "workload");
  }
  if (field == CFG__JF_NODES) {
    if (val->type != YAML_SEQUENCE_NODE)
      return cfg__fail_loc(ld, vl, name, "expected a list of node indices such as [0, 4], got %s",
                           cfg__yaml_kind_name(val));
    return set_nodes(ld, job, val, name);
  }
  if (val->type != YAML_SCALAR_NODE)
    return cfg__fail_loc(ld, vl, name, "expected a value, got %s", cfg__yaml_kind_name(val));
  if (cfg__job_set_field(
          job, field, cfg__yaml_is_null(val) ? "" : (const char *)val->data.scalar.value,
          cfg__yaml_is_null(val) ? 0 : val->data.scalar.length, msg, sizeof msg) != SIM_OK)
    return cfg__fail_loc(ld, vl, name, "%s", msg);
  return SIM_OK;
}

/* A job field named workload.KEY (the --set spelling jobs[J].workload.KEY). */
static int is_dotted_workload(const yaml_node_t *k) {
  return k->type == YAML_SCALAR_NODE && k->data.scalar.length > 9 &&
         memcmp(k->data.scalar.value, "workload.", 9) == 0;
}

/* Entry j: its fields, then the entry's own checks. */
static int read_entry(loader *ld, const yaml_node_t *item, cfg_job *job, cfg__job_loc *jl) {
  char name[64], msg[512];
  uint8_t have[CFG__JF_N] = {0}, dotted = 0; /* dotted: a workload.KEY field was given */
  int bad = -1, rc;
  jl->entry = cfg__loc_of(ld, item->start_mark);
  snprintf(name, sizeof name, "jobs[%u]", job->index);
  if (item->type != YAML_MAPPING_NODE)
    return cfg__fail_loc(ld, jl->entry, name,
                         "expected a mapping such as {name: a, gpus: 16, placement: packed, "
                         "workload: {kind: collective}}, got %s",
                         cfg__yaml_kind_name(item));
  for (yaml_node_pair_t *pair = item->data.mapping.pairs.start; pair < item->data.mapping.pairs.top;
       pair++) {
    const yaml_node_t *k = yaml_document_get_node(ld->ydoc, pair->key);
    const yaml_node_t *val = yaml_document_get_node(ld->ydoc, pair->value);
    cfg_loc kl = cfg__loc_of(ld, k->start_mark);
    int field = k->type == YAML_SCALAR_NODE
                    ? cfg__job_field_find((const char *)k->data.scalar.value, k->data.scalar.length)
                    : -1;
    snprintf(name, sizeof name, "jobs[%u]", job->index);
    if (field < 0 && is_dotted_workload(k)) { /* workload.KEY: as under workload: */
      char path[WL_PATH_MAX + 1];
      size_t len = k->data.scalar.length;
      if (len >= sizeof path || memchr(k->data.scalar.value, '\0', len))
        return cfg__fail_loc(ld, kl, name,
                             "unknown key; a job's workload takes the workload.* "
                             "keys (docs/scenario.md)");
      memcpy(path, k->data.scalar.value, len);
      path[len] = '\0';
      if ((rc = workload_key(ld, job, jl, kl, path, len, val)) != SIM_OK) return rc;
      if (!have[CFG__JF_WORKLOAD] && !jl->field[CFG__JF_WORKLOAD].line)
        jl->field[CFG__JF_WORKLOAD] = kl;
      dotted = 1;
      continue;
    }
    if (field < 0) {
      if (k->type == YAML_SCALAR_NODE)
        cfg__job_unknown_field((const char *)k->data.scalar.value, k->data.scalar.length, msg,
                               sizeof msg);
      else snprintf(msg, sizeof msg, "a field name must be a word such as gpus");
      return cfg__fail_loc(ld, kl, name, "%s", msg);
    }
    snprintf(name, sizeof name, "jobs[%u].%s", job->index, cfg__job_field_name(field));
    if (have[field])
      return cfg__fail_loc(ld, kl, name, "duplicate field (first set at line %u, column %u)",
                           jl->field[field].line, jl->field[field].col);
    if ((rc = set_field(ld, job, jl, field, val, name)) != SIM_OK) return rc;
    have[field] = 1;
    jl->field[field] = cfg__loc_of(ld, val->start_mark);
  }
  have[CFG__JF_WORKLOAD] |= dotted;
  if (cfg__job_check(job, have, &bad, msg, sizeof msg) != SIM_OK) {
    cfg_loc at = have[bad] ? jl->field[bad] : jl->entry;
    snprintf(name, sizeof name, "jobs[%u].%s", job->index, cfg__job_field_name(bad));
    int kind = cfg__find_key("workload.kind", 13);
    for (uint32_t w = 0; bad == CFG__JF_WORKLOAD && w < jl->nwl; w++)
      if (jl->wl_key[w] == (uint32_t)kind) { /* a kind jobs do not run yet: at the kind */
        at = jl->wl_loc[w];
        snprintf(name, sizeof name, "jobs[%u].workload.kind", job->index);
      }
    return cfg__fail_loc(ld, at, name, "%s", msg);
  }
  return SIM_OK;
}

int cfg__set_jobs(loader *ld, int i, const char *key, const yaml_node_t *v) {
  size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
  cfg_job_list l = {0};
  cfg__job_loc *locs;
  char msg[512], name[64];
  int rc = SIM_OK;
  if (n > CFG__JOBS_MAX)
    return cfg__fail_loc(ld, cfg__loc_of(ld, v->start_mark), key, "%zu entries; allowed at most %d",
                         n, CFG__JOBS_MAX);
  l.v = sim_calloc(n ? n : 1, sizeof *l.v);
  locs = sim_calloc(n ? n : 1, sizeof *locs);
  for (size_t j = 0; j < n && rc == SIM_OK; j++) {
    const yaml_node_t *item = yaml_document_get_node(ld->ydoc, v->data.sequence.items.start[j]);
    l.n = (uint32_t)j + 1;
    if (cfg__job_init(&l.v[j], (uint32_t)j, msg, sizeof msg) != SIM_OK) {
      rc = sim_fail(ld->err, SIM_ECONFIG, "schema default of a job's workload: %s", msg);
      break;
    }
    rc = read_entry(ld, item, &l.v[j], &locs[j]);
    for (size_t e = 0; e < j && rc == SIM_OK; e++) /* names unique */
      if (strcmp(l.v[e].name, l.v[j].name) == 0) {
        snprintf(name, sizeof name, "jobs[%zu].name", j);
        rc = cfg__fail_loc(ld, locs[j].field[CFG__JF_NAME], name,
                           "'%s' is also the name of jobs[%zu] (line %u); names are unique",
                           l.v[j].name, e, locs[e].field[CFG__JF_NAME].line);
      }
  }
  if (rc != SIM_OK || n == 0) {
    cfg__jobs_free(&l);
    locs_free(locs, n);
    locs = NULL;
    if (rc != SIM_OK) return rc;
  }
  cfg_job_list *dst = (cfg_job_list *)(void *)((char *)ld->s + cfg__key_at((size_t)i)->offset);
  cfg__jobs_free(dst);
  *dst = l;
  cfg__job_locs_free(ld->doc);
  ld->doc->jloc = locs;
  ld->doc->njloc = l.n;
  return SIM_OK;
}

int cfg__job_where(const cfg_doc *doc, const char *key, cfg_loc *out) {
  char *end;
  unsigned long j;
  if (strncmp(key, "jobs[", 5) != 0 || key[5] < '0' || key[5] > '9') return 0;
  j = strtoul(key + 5, &end, 10);
  if (*end != ']' || !doc || j >= doc->njloc) return 0;
  const cfg__job_loc *jl = &doc->jloc[j];
  *out = jl->entry;
  if (end[1] == '\0') return 1;
  if (end[1] != '.') return 0;
  const char *f = end + 2;
  if (strncmp(f, "workload.", 9) == 0) {
    int i = cfg__find_key(f, strlen(f));
    if (jl->field[CFG__JF_WORKLOAD].line) *out = jl->field[CFG__JF_WORKLOAD];
    for (uint32_t w = 0; w < jl->nwl; w++)
      if (i >= 0 && jl->wl_key[w] == (uint32_t)i) *out = jl->wl_loc[w];
    return 1;
  }
  int field = cfg__job_field_find(f, strlen(f));
  if (field < 0) return 0;
  if (jl->field[field].line) *out = jl->field[field];
  return 1;
}

void cfg__jobs_presets(cfg_scenario *s, const cfg_doc *doc) {
  for (uint32_t j = 0; j < s->jobs.n && doc && j < doc->njloc; j++) {
    const cfg__job_loc *jl = &doc->jloc[j];
    for (size_t i = 0; i < cfg__nkeys(); i++) {
      const cfg__key *k = cfg__key_at(i);
      bool given = false;
      if (!cfg__is_workload_key(i) || k->derive == CFG__DERIVE_NONE) continue;
      for (uint32_t w = 0; w < jl->nwl; w++) given |= jl->wl_key[w] == (uint32_t)i;
      if (given || k->type == CFG__STRING || k->type == CFG__LIST) continue;
      memcpy((char *)&s->jobs.v[j].workload + (k->offset - offsetof(cfg_scenario, workload)),
             (const char *)s + k->offset, k->width);
    }
  }
}

void cfg_doc_scope_job(const cfg_doc *doc, int job) {
  if (!doc) return;
  ((cfg_doc *)(uintptr_t)doc)->scope = job < 0 ? 0 : (uint32_t)job + 1;
}

/* ---- --set jobs[J].FIELD=VALUE ------------------------------------------------------------ */

int cfg__set_job_key(loader *ld, const char *key, cfg_loc kl, const yaml_node_t *v) {
  cfg_job_list *l = &ld->s->jobs;
  char *end, msg[512];
  unsigned long j = strtoul(key + 5, &end, 10);
  if (key[5] < '0' || key[5] > '9' || end[0] != ']' || end[1] != '.' || !end[2])
    return cfg__fail_loc(ld, kl, key,
                         "unknown key; a job's field is set as jobs[J].FIELD (FIELD one of name, "
                         "gpus, placement, nodes, start, traffic_class, workload.KEY)");
  char entry[48];
  snprintf(entry, sizeof entry, "jobs[%.*s]", (int)(end - (key + 5) < 20 ? end - (key + 5) : 20),
           key + 5);
  if (l->n == 0)
    return cfg__fail_loc(ld, kl, entry,
                         "the scenario has no jobs; allowed: a job's field once a jobs: list holds "
                         "that job (in the file, or an earlier --set jobs=[...])");
  if (j >= l->n || end - (key + 5) > 10) {
    if (l->n == 1) return cfg__fail_loc(ld, kl, entry, "the scenario has 1 job; allowed: jobs[0]");
    return cfg__fail_loc(ld, kl, entry, "the scenario has %u jobs; allowed: jobs[0] to jobs[%u]",
                         l->n, l->n - 1);
  }
  cfg_job *job = &l->v[j];
  cfg__job_loc *jl = &ld->doc->jloc[j];
  const char *f = end + 2;
  ld->job_sets = true;
  if (strncmp(f, "workload.", 9) == 0) {
    int i = cfg__find_key(f, strlen(f));
    int rc = check_workload_key(ld, job, kl, f, strlen(f), i, key);
    return rc != SIM_OK ? rc : set_workload_value(ld, job, jl, i, v, key);
  }
  int field = cfg__job_field_find(f, strlen(f));
  if (field < 0 || field == CFG__JF_WORKLOAD) {
    if (field < 0) cfg__job_unknown_field(f, strlen(f), msg, sizeof msg);
    else snprintf(msg, sizeof msg, "is a mapping; set one of its keys (such as %s.kind)", key);
    return cfg__fail_loc(ld, kl, key, "%s", msg);
  }
  if (field == CFG__JF_NODES && v->type == YAML_SEQUENCE_NODE) { /* the list set replaces */
    sim_free(job->nodes.v);
    job->nodes.v = NULL;
    job->nodes.n = 0;
  }
  int rc = set_field(ld, job, jl, field, v, key);
  if (rc == SIM_OK) jl->field[field] = cfg__loc_of(ld, v->start_mark);
  return rc;
}

int cfg__jobs_check_sets(loader *ld) {
  const cfg_job_list *l = &ld->s->jobs;
  char name[64], msg[512];
  for (uint32_t j = 0; ld->job_sets && j < l->n; j++) {
    const cfg__job_loc *jl = &ld->doc->jloc[j];
    uint8_t have[CFG__JF_N];
    int bad = -1;
    for (int f = 0; f < CFG__JF_N; f++) have[f] = jl->field[f].line != 0;
    if (cfg__job_check(&l->v[j], have, &bad, msg, sizeof msg) != SIM_OK) {
      snprintf(name, sizeof name, "jobs[%u].%s", j, cfg__job_field_name(bad));
      return cfg__fail_loc(ld, have[bad] ? jl->field[bad] : jl->entry, name, "%s", msg);
    }
    for (uint32_t e = 0; e < j; e++) /* names unique */
      if (strcmp(l->v[e].name, l->v[j].name) == 0) {
        snprintf(name, sizeof name, "jobs[%u].name", j);
        return cfg__fail_loc(ld, jl->field[CFG__JF_NAME], name,
                             "'%s' is also the name of jobs[%u]; names are unique", l->v[j].name,
                             e);
      }
  }
  return SIM_OK;
}
