/* fabric.classes from YAML (fabsim/config.h, cfg_class_table): a list of at
 * most 8 mappings, each a class's fields (classes.c parses them), `ecn`
 * either a mapping {kmin, kmax, pmax} or dotted fields; ids unique (an
 * entry without one is its position), names unique, and tc<k> (the default
 * name of class k) on class k only; every field located
 * for later messages. O(entries x fields). */
#include <stdio.h>
#include <string.h>

#include "config/load_internal.h"

/* One field (`name` is "ecn.kmin" for ecn's) of entry j from a scalar. */
static int set_field(loader *ld, cfg_tclass *c, uint32_t *id, cfg__class_loc *cl, uint8_t *have,
                     size_t j, const yaml_node_t *k, const char *fname, size_t flen,
                     const yaml_node_t *val) {
  char msg[512], name[64];
  cfg_loc kl = cfg__loc_of(ld, k->start_mark), vl = cfg__loc_of(ld, val->start_mark);
  int field = cfg__class_field_find(fname, flen);
  snprintf(name, sizeof name, "fabric.classes[%zu]", j);
  if (field < 0) {
    cfg__class_unknown_field(fname, flen, msg, sizeof msg);
    return cfg__fail_loc(ld, kl, name, "%s", msg);
  }
  snprintf(name, sizeof name, "fabric.classes[%zu].%s", j, cfg__class_field_name(field));
  if (have[field])
    return cfg__fail_loc(ld, kl, name, "duplicate field (first set at line %u, column %u)",
                         cl->field[field].line, cl->field[field].col);
  if (val->type != YAML_SCALAR_NODE)
    return cfg__fail_loc(ld, vl, name, "expected a value, got %s", cfg__yaml_kind_name(val));
  if (cfg__class_set_field(
          c, id, field, cfg__yaml_is_null(val) ? "" : (const char *)val->data.scalar.value,
          cfg__yaml_is_null(val) ? 0 : val->data.scalar.length, msg, sizeof msg) != SIM_OK)
    return cfg__fail_loc(ld, vl, name, "%s", msg);
  have[field] = 1;
  cl->field[field] = vl;
  return SIM_OK;
}

/* The pairs of one mapping of entry j, field names under `prefix` ("" or "ecn."). */
static int read_pairs(loader *ld, const yaml_node_t *map, const char *prefix, cfg_tclass *c,
                      uint32_t *id, cfg__class_loc *cl, uint8_t *have, size_t j) {
  char fname[40], name[64];
  for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top;
       pair++) {
    const yaml_node_t *k = yaml_document_get_node(ld->ydoc, pair->key);
    const yaml_node_t *val = yaml_document_get_node(ld->ydoc, pair->value);
    snprintf(name, sizeof name, "fabric.classes[%zu]", j);
    if (k->type != YAML_SCALAR_NODE)
      return cfg__fail_loc(ld, cfg__loc_of(ld, k->start_mark), name,
                           "a field name must be a word such as priority, not %s",
                           cfg__yaml_kind_name(k));
    int len = snprintf(fname, sizeof fname, "%s%.*s", prefix, (int)k->data.scalar.length,
                       (const char *)k->data.scalar.value);
    size_t flen = len < 0 || (size_t)len >= sizeof fname ? sizeof fname - 1 : (size_t)len;
    if (!*prefix && val->type == YAML_MAPPING_NODE && strcmp(fname, "ecn") == 0) {
      int rc = read_pairs(ld, val, "ecn.", c, id, cl, have, j);
      if (rc != SIM_OK) return rc;
      continue;
    }
    int rc = set_field(ld, c, id, cl, have, j, k, fname, flen, val);
    if (rc != SIM_OK) return rc;
  }
  return SIM_OK;
}

/* Entry j into t->v[id] (id from the entry, else j), its locations into
 * locs[j]; ids and names unique among the entries before it. */
static int read_entry(loader *ld, const yaml_node_t *item, cfg_class_table *t, cfg__class_loc *locs,
                      size_t j) {
  char name[64];
  uint8_t have[CFG__CF_N] = {0};
  cfg_tclass c;
  uint32_t id = (uint32_t)j;
  cfg__class_loc *cl = &locs[j];
  cl->entry = cfg__loc_of(ld, item->start_mark);
  snprintf(name, sizeof name, "fabric.classes[%zu]", j);
  if (item->type != YAML_MAPPING_NODE)
    return cfg__fail_loc(ld, cl->entry, name,
                         "expected a mapping such as {id: 6, name: latency, priority: 1}, got %s",
                         cfg__yaml_kind_name(item));
  cfg__class_init(&c, 0);
  int rc = read_pairs(ld, item, "", &c, &id, cl, have, j);
  /* "tc<k>" is class k's name unless it is renamed: on another class it
   * would make traffic_class: tc<k> name two classes */
  if (rc == SIM_OK && c.name && c.name[0] == 't' && c.name[1] == 'c' && c.name[2] >= '0' &&
      c.name[2] < '0' + CFG_CLASSES && c.name[3] == '\0' && (uint32_t)(c.name[2] - '0') != id) {
    snprintf(name, sizeof name, "fabric.classes[%zu].name", j);
    rc = cfg__fail_loc(ld, cl->field[CFG__CF_NAME], name,
                       "'%s' is the default name of class %c, and this is class %u; allowed: "
                       "another name, or tc%u",
                       c.name, c.name[2], id, id);
  }
  for (size_t e = 0; e < j && rc == SIM_OK; e++) {
    uint32_t other = t->order[e];
    if (other == id) {
      snprintf(name, sizeof name, "fabric.classes[%zu].id", j);
      rc = cfg__fail_loc(ld, have[CFG__CF_ID] ? cl->field[CFG__CF_ID] : cl->entry, name,
                         "class %u is also fabric.classes[%zu] (line %u); each class is listed "
                         "once (an entry without id is its position in the list)",
                         id, e, locs[e].entry.line);
    } else if (c.name && t->v[other].name && strcmp(c.name, t->v[other].name) == 0) {
      snprintf(name, sizeof name, "fabric.classes[%zu].name", j);
      rc = cfg__fail_loc(ld, cl->field[CFG__CF_NAME], name,
                         "'%s' is also the name of fabric.classes[%zu] (line %u); names are "
                         "unique",
                         c.name, e, locs[e].entry.line);
    }
  }
  if (rc != SIM_OK) {
    sim_free(c.name);
    return rc;
  }
  cl->id = id;
  t->v[id] = c;
  t->order[j] = (uint8_t)id;
  t->n = (uint32_t)j + 1;
  return SIM_OK;
}

int cfg__set_classes(loader *ld, int i, const char *key, const yaml_node_t *v) {
  size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
  cfg_class_table t;
  cfg__class_loc locs[CFG_CLASSES];
  int rc = SIM_OK;
  if (n > CFG_CLASSES)
    return cfg__fail_loc(ld, cfg__loc_of(ld, v->start_mark), key,
                         "%zu classes; allowed at most %d (ids 0..7)", n, CFG_CLASSES);
  memset(&t, 0, sizeof t);
  memset(locs, 0, sizeof locs);
  for (size_t j = 0; j < n && rc == SIM_OK; j++)
    rc = read_entry(ld, yaml_document_get_node(ld->ydoc, v->data.sequence.items.start[j]), &t, locs,
                    j);
  if (rc != SIM_OK) {
    cfg__classes_free(&t);
    return rc;
  }
  cfg_class_table *dst =
      (cfg_class_table *)(void *)((char *)ld->s + cfg__key_at((size_t)i)->offset);
  cfg__classes_free(dst);
  *dst = t;
  memcpy(ld->doc->cloc, locs, sizeof locs);
  ld->doc->ncloc = t.n;
  return SIM_OK;
}

int cfg__class_where(const cfg_doc *doc, const char *key, cfg_loc *out) {
  static const char prefix[] = "fabric.classes[";
  size_t p = sizeof prefix - 1;
  if (strncmp(key, prefix, p) != 0 || key[p] < '0' || key[p] > '9' || key[p + 1] != ']') return 0;
  uint32_t j = (uint32_t)(key[p] - '0');
  if (!doc || j >= doc->ncloc) return 0;
  const cfg__class_loc *cl = &doc->cloc[j];
  *out = cl->entry;
  if (key[p + 2] == '\0') return 1;
  if (key[p + 2] != '.') return 0;
  int field = cfg__class_field_find(key + p + 3, strlen(key + p + 3));
  if (field < 0) return 0;
  if (cl->field[field].line) *out = cl->field[field];
  return 1;
}
