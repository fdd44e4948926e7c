/* Loading: the YAML file and --set overrides onto the schema, with the
 * location of every value kept for later messages.
 *
 * Ownership: cfg_load* build into a private scenario and document and hand
 * both to the caller only on success; on failure everything is freed here.
 * Cost: O(keys in the input x schema size); the walk descends only into known
 * sections, so YAML aliases and deep nesting cannot make it recurse far.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "config/load_internal.h"

const char cfg__set_label[] = "--set";

int cfg__is_set(const cfg_doc *doc, size_t i) {
  return doc && i < doc->nkeys && doc->slot[i].origin != ORIGIN_DEFAULT;
}

cfg_loc cfg__loc_of(const loader *ld, yaml_mark_t m) {
  cfg_loc l;
  l.file = ld->label;
  if (ld->set_index) {
    l.line = ld->set_index;
    l.col = ld->col0 + (m.line == 0 ? (uint32_t)m.column : 0);
  } else {
    l.line = (uint32_t)m.line + 1;
    l.col = (uint32_t)m.column + 1;
  }
  return l;
}

/* "label:line:col: [key: ]message" -> SIM_ECONFIG */
int cfg__fail_loc(loader *ld, cfg_loc l, const char *key, const char *fmt, ...) {
  char msg[sizeof ld->err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (key)
    return sim_fail(ld->err, SIM_ECONFIG, "%s:%u:%u: %s: %s", l.file, l.line, l.col, key, msg);
  return sim_fail(ld->err, SIM_ECONFIG, "%s:%u:%u: %s", l.file, l.line, l.col, msg);
}

/* libyaml's problem as a located message. Reader errors (bad UTF-8, control
 * characters) carry a byte offset instead of a mark. */
static int fail_yaml(loader *ld, const yaml_parser_t *p, const char *key) {
  yaml_mark_t m = p->problem_mark;
  const char *problem = p->problem ? p->problem : "cannot parse";
  if (p->error == YAML_READER_ERROR) {
    size_t off = p->problem_offset < ld->len ? p->problem_offset : ld->len;
    m.line = m.column = 0;
    for (size_t i = 0; i < off; i++) {
      if (ld->buf[i] == '\n') m.line++, m.column = 0;
      else m.column++;
    }
  }
  if (p->error == YAML_MEMORY_ERROR) problem = "out of memory";
  if (p->context)
    return cfg__fail_loc(ld, cfg__loc_of(ld, m), key, "YAML syntax error: %s (%s)", problem,
                         p->context);
  return cfg__fail_loc(ld, cfg__loc_of(ld, m), key, "YAML syntax error: %s", problem);
}

int cfg__yaml_is_null(const yaml_node_t *n) {
  const char *v = (const char *)n->data.scalar.value;
  size_t len = n->data.scalar.length;
  if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return 0;
  return len == 0 || (len == 1 && v[0] == '~') ||
         (len == 4 && (!memcmp(v, "null", 4) || !memcmp(v, "Null", 4) || !memcmp(v, "NULL", 4)));
}

const char *cfg__yaml_kind_name(const yaml_node_t *n) {
  return n->type == YAML_MAPPING_NODE    ? "a mapping"
         : n->type == YAML_SEQUENCE_NODE ? "a list"
                                         : "a value";
}

/* A list key from a YAML sequence; each item is located on its own. */
static int set_sequence(loader *ld, int i, const char *key, const yaml_node_t *v) {
  char msg[512];
  size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
  uint64_t *vals = sim_calloc(n ? n : 1, sizeof *vals);
  int rc = SIM_OK;
  for (size_t j = 0; j < n && rc == SIM_OK; j++) {
    const yaml_node_t *item = yaml_document_get_node(ld->ydoc, v->data.sequence.items.start[j]);
    cfg_loc l = cfg__loc_of(ld, item->start_mark);
    if (j == CFG__LIST_MAX) rc = cfg__fail_loc(ld, l, key, "more than %d items", CFG__LIST_MAX);
    else if (item->type != YAML_SCALAR_NODE)
      rc = cfg__fail_loc(ld, l, key, "item %zu: expected %s, got %s", j + 1,
                         cfg__key_at((size_t)i)->names ? "a name" : "an integer",
                         cfg__yaml_kind_name(item));
    else if (cfg__parse_list_item(
                 (size_t)i, cfg__yaml_is_null(item) ? "" : (const char *)item->data.scalar.value,
                 cfg__yaml_is_null(item) ? 0 : item->data.scalar.length, &vals[j], msg,
                 sizeof msg) != SIM_OK)
      rc = cfg__fail_loc(ld, l, key, "item %zu: %s", j + 1, msg);
  }
  if (rc == SIM_OK) cfg__set_list(ld->s, (size_t)i, vals, (uint32_t)n);
  sim_free(vals);
  return rc;
}

/* The faults list from a YAML sequence of mappings; replaces the list (and
 * its locations) only when every entry is valid. O(entries x fields). */
static int set_faults(loader *ld, int i, const char *key, const yaml_node_t *v) {
  char msg[512], name[64];
  size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
  cfg_fault_list l = {0};
  cfg__fault_loc *locs;
  int rc = SIM_OK;
  (void)key;
  if (n > CFG__FAULTS_MAX)
    return cfg__fail_loc(ld, cfg__loc_of(ld, v->start_mark), "faults",
                         "%zu entries; allowed at most %d", n, CFG__FAULTS_MAX);
  l.v = sim_calloc(n ? n : 1, sizeof *l.v);
  locs = sim_calloc(n ? n : 1, sizeof *locs);
  for (size_t j = 0; j < n && rc == SIM_OK; j++) {
    const yaml_node_t *item = yaml_document_get_node(ld->ydoc, v->data.sequence.items.start[j]);
    cfg_fault *f = &l.v[j];
    uint8_t have[CFG__FF_N] = {0};
    int bad = -1;
    l.n = (uint32_t)j + 1;
    f->index = (uint32_t)j;
    locs[j].entry = cfg__loc_of(ld, item->start_mark);
    snprintf(name, sizeof name, "faults[%zu]", j);
    if (item->type != YAML_MAPPING_NODE) {
      rc = cfg__fail_loc(
          ld, locs[j].entry, name,
          "expected a mapping such as {at: 1ms, kind: link-down, target: leaf0-spine0}, "
          "got %s",
          cfg__yaml_kind_name(item));
      break;
    }
    for (yaml_node_pair_t *pair = item->data.mapping.pairs.start;
         pair < item->data.mapping.pairs.top && rc == SIM_OK; pair++) {
      const yaml_node_t *k = yaml_document_get_node(ld->ydoc, pair->key);
      const yaml_node_t *val = yaml_document_get_node(ld->ydoc, pair->value);
      cfg_loc kl = cfg__loc_of(ld, k->start_mark), vl = cfg__loc_of(ld, val->start_mark);
      int field;
      snprintf(name, sizeof name, "faults[%zu]", j);
      field = k->type == YAML_SCALAR_NODE
                  ? cfg__fault_field_find((const char *)k->data.scalar.value, k->data.scalar.length)
                  : -1;
      if (field < 0) {
        if (k->type == YAML_SCALAR_NODE)
          cfg__fault_unknown_field((const char *)k->data.scalar.value, k->data.scalar.length, msg,
                                   sizeof msg);
        else
          snprintf(msg, sizeof msg, "a field name must be a word such as at, not %s",
                   cfg__yaml_kind_name(k));
        rc = cfg__fail_loc(ld, kl, name, "%s", msg);
        break;
      }
      snprintf(name, sizeof name, "faults[%zu].%s", j, cfg__fault_field_name(field));
      if (have[field]) {
        rc = cfg__fail_loc(ld, kl, name, "duplicate field (first set at line %u, column %u)",
                           locs[j].field[field].line, locs[j].field[field].col);
        break;
      }
      if (val->type != YAML_SCALAR_NODE) {
        rc = cfg__fail_loc(ld, vl, name, "expected a value, got %s", cfg__yaml_kind_name(val));
        break;
      }
      if (cfg__fault_set_field(
              f, field, cfg__yaml_is_null(val) ? "" : (const char *)val->data.scalar.value,
              cfg__yaml_is_null(val) ? 0 : val->data.scalar.length, msg, sizeof msg) != SIM_OK) {
        rc = cfg__fail_loc(ld, vl, name, "%s", msg);
        break;
      }
      have[field] = 1;
      locs[j].field[field] = vl;
    }
    if (rc != SIM_OK) break;
    if (cfg__fault_check(f, have, &bad, msg, sizeof msg) != SIM_OK) {
      snprintf(name, sizeof name, "faults[%zu].%s", j, cfg__fault_field_name(bad));
      rc = cfg__fail_loc(ld, have[bad] ? locs[j].field[bad] : locs[j].entry, name, "%s", msg);
    }
  }
  if (rc != SIM_OK || n == 0) {
    cfg__faults_free(&l);
    sim_free(locs);
    locs = NULL;
    if (rc != SIM_OK) return rc;
  }
  cfg__faults_free((cfg_fault_list *)(void *)((char *)ld->s + cfg__key_at((size_t)i)->offset));
  *(cfg_fault_list *)(void *)((char *)ld->s + cfg__key_at((size_t)i)->offset) = l;
  sim_free(ld->doc->floc);
  ld->doc->floc = locs;
  ld->doc->nfloc = l.n;
  return SIM_OK;
}

/* Sets leaf key i from a scalar node (or the empty text for a null), or a
 * list key from a sequence. */
static int set_leaf(loader *ld, int i, const char *key, const yaml_node_t *v) {
  char msg[512], type[256];
  cfg__slot *slot = &ld->doc->slot[i];
  cfg_loc l = cfg__loc_of(ld, v->start_mark);
  cfg__type ktype = cfg__key_at((size_t)i)->type;
  int is_list =
      ktype == CFG__LIST || ktype == CFG__FAULTS || ktype == CFG__JOBS || ktype == CFG__CLASSES;
  if (v->type != YAML_SCALAR_NODE && !(is_list && v->type == YAML_SEQUENCE_NODE)) {
    cfg__describe_type(cfg__key_at((size_t)i), type, sizeof type);
    return cfg__fail_loc(ld, l, key, "expected a value (%s), got %s", type, cfg__yaml_kind_name(v));
  }
  if (!ld->set_index && slot->origin == ORIGIN_FILE)
    return cfg__fail_loc(ld, l, key, "duplicate key (first set at line %u, column %u)",
                         slot->loc.line, slot->loc.col);
  if (v->type == YAML_SEQUENCE_NODE) {
    int rc = ktype == CFG__FAULTS    ? set_faults(ld, i, key, v)
             : ktype == CFG__JOBS    ? cfg__set_jobs(ld, i, key, v)
             : ktype == CFG__CLASSES ? cfg__set_classes(ld, i, key, v)
                                     : set_sequence(ld, i, key, v);
    if (rc != SIM_OK) return rc;
  } else if (cfg__set_text(
                 ld->s, (size_t)i, cfg__yaml_is_null(v) ? "" : (const char *)v->data.scalar.value,
                 cfg__yaml_is_null(v) ? 0 : v->data.scalar.length, msg, sizeof msg) != SIM_OK) {
    return cfg__fail_loc(ld, l, key, "%s", msg);
  }
  slot->loc = l;
  slot->origin = ld->set_index ? ORIGIN_SET : ORIGIN_FILE;
  return SIM_OK;
}

static int fail_unknown(loader *ld, cfg_loc l, const char *path, size_t len) {
  char shown[96];
  const char *hint = cfg__suggest(path, len);
  cfg__excerpt(shown, sizeof shown, path, len, 80);
  if (hint) return cfg__fail_loc(ld, l, shown, "unknown key; did you mean '%s'?", hint);
  return cfg__fail_loc(ld, l, shown, "unknown key (docs/scenario.md lists every key)");
}

enum { PATH_MAX_LEN = 200 }; /* longer than any key: unknown for sure */

/* Walks one mapping whose keys are relative to `prefix` ("" at the top, else
 * "cluster." etc.). Depth is bounded by the schema's section depth. */
static int walk_mapping(loader *ld, const yaml_node_t *map, const char *prefix) {
  size_t plen = strlen(prefix);
  int rc = SIM_OK;
  char path[PATH_MAX_LEN + 2]; /* room for a section's trailing dot */
  for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
       pair < map->data.mapping.pairs.top && rc == SIM_OK; pair++) {
    const yaml_node_t *k = yaml_document_get_node(ld->ydoc, pair->key);
    const yaml_node_t *v = yaml_document_get_node(ld->ydoc, pair->value);
    cfg_loc kl = cfg__loc_of(ld, k->start_mark), vl = cfg__loc_of(ld, v->start_mark);
    size_t klen, len;
    int idx;
    if (k->type != YAML_SCALAR_NODE) {
      rc = cfg__fail_loc(ld, kl, NULL, "a key must be a name such as cluster.nodes, not %s",
                         k->type == YAML_MAPPING_NODE ? "a mapping" : "a list");
      break;
    }
    klen = k->data.scalar.length;
    len = plen + klen;
    if (len > PATH_MAX_LEN) {
      memcpy(path, prefix, plen);
      memcpy(path + plen, k->data.scalar.value, PATH_MAX_LEN - plen);
      rc = fail_unknown(ld, kl, path, PATH_MAX_LEN);
      break;
    }
    memcpy(path, prefix, plen);
    memcpy(path + plen, k->data.scalar.value, klen);
    path[len] = '\0';
    idx = cfg__find_key(path, len); /* a key with a NUL in it matches nothing */
    if (idx >= 0) {
      rc = set_leaf(ld, idx, path, v);
      continue;
    }
    if (!cfg__is_section(path, len)) {
      rc = fail_unknown(ld, kl, path, len);
      break;
    }
    /* A section: YAML forbids the same key twice in one mapping. Earlier keys
     * are all known, so this scan is short. */
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair; q++) {
      const yaml_node_t *qk = yaml_document_get_node(ld->ydoc, q->key);
      if (qk->data.scalar.length == klen &&
          memcmp(qk->data.scalar.value, k->data.scalar.value, klen) == 0) {
        cfg_loc ql = cfg__loc_of(ld, yaml_document_get_node(ld->ydoc, q->value)->start_mark);
        rc = cfg__fail_loc(ld, vl, path, "duplicate key (first set at line %u, column %u)", ql.line,
                           ql.col);
        break;
      }
    }
    if (rc != SIM_OK) break;
    if (cfg__yaml_is_null(v)) continue; /* "cluster:" with nothing under it */
    if (v->type != YAML_MAPPING_NODE) {
      rc = cfg__fail_loc(ld, vl, path, "expected a mapping of %s.* keys, got %s", path,
                         cfg__yaml_kind_name(v));
      break;
    }
    path[len] = '.';
    path[len + 1] = '\0';
    rc = walk_mapping(ld, v, path);
  }
  return rc;
}

/* Nesting depth before anything is built: libyaml's scanner and composer
 * take time quadratic in the depth (20,000 levels: 8 s), so an event pass
 * stops at the first container deeper than CFG__YAML_DEPTH_MAX, after
 * O(CFG__YAML_DEPTH_MAX x bytes) work. A syntax error ends the pass quietly:
 * the load that follows reports it, and its depth is then within the cap. */
static int check_depth(loader *ld, const char *key) {
  yaml_parser_t p;
  yaml_event_t ev;
  int depth = 0, rc = SIM_OK;
  if (!yaml_parser_initialize(&p)) return sim_fail(ld->err, SIM_ECONFIG, "out of memory");
  yaml_parser_set_input_string(&p, (const unsigned char *)ld->buf, ld->len);
  while (yaml_parser_parse(&p, &ev)) {
    yaml_event_type_t type = ev.type;
    if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
      if (++depth > CFG__YAML_DEPTH_MAX)
        rc = cfg__fail_loc(ld, cfg__loc_of(ld, ev.start_mark), key,
                           "YAML nested %d levels deep here; allowed at most %d (the deepest valid "
                           "scenario nests %d: the top mapping, a section, its subsection, a list)",
                           depth, CFG__YAML_DEPTH_MAX, CFG__YAML_DEPTH_USED);
    } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
      depth--;
    }
    yaml_event_delete(&ev);
    if (rc != SIM_OK || type == YAML_STREAM_END_EVENT) break;
  }
  yaml_parser_delete(&p);
  return rc;
}

static int load_yaml(loader *ld) {
  yaml_parser_t parser;
  yaml_document_t ydoc, extra;
  const yaml_node_t *root;
  int rc = check_depth(ld, NULL), have_doc = 0;

  if (rc != SIM_OK) return rc;
  if (!yaml_parser_initialize(&parser)) return sim_fail(ld->err, SIM_ECONFIG, "out of memory");
  yaml_parser_set_input_string(&parser, (const unsigned char *)ld->buf, ld->len);
  if (!yaml_parser_load(&parser, &ydoc)) {
    rc = fail_yaml(ld, &parser, NULL);
    goto done;
  }
  have_doc = 1;
  ld->ydoc = &ydoc;
  root = yaml_document_get_root_node(&ydoc);
  if (root && !cfg__yaml_is_null(root)) {
    if (root->type != YAML_MAPPING_NODE) {
      rc =
          cfg__fail_loc(ld, cfg__loc_of(ld, root->start_mark), NULL,
                        "expected a mapping of keys at the top level (such as 'cluster.nodes: 4'), "
                        "got %s",
                        cfg__yaml_kind_name(root));
      goto done;
    }
    rc = walk_mapping(ld, root, "");
    if (rc != SIM_OK) goto done;
  }
  if (!root) goto done; /* end of stream: nothing follows */
  if (!yaml_parser_load(&parser, &extra)) {
    rc = fail_yaml(ld, &parser, NULL);
    goto done;
  }
  root = yaml_document_get_root_node(&extra);
  if (root && !cfg__yaml_is_null(root)) /* a trailing "---" alone is harmless */
    rc = cfg__fail_loc(ld, cfg__loc_of(ld, root->start_mark), NULL,
                       "a second YAML document; a scenario is one document");
  yaml_document_delete(&extra);
done:
  if (have_doc) yaml_document_delete(&ydoc);
  ld->ydoc = NULL;
  yaml_parser_delete(&parser);
  return rc;
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

static const char *first_key_of(const char *section, size_t len) {
  for (size_t i = 0; i < cfg__nkeys(); i++) {
    const char *name = cfg__key_at(i)->name;
    if (!strncmp(name, section, len) && name[len] == '.') return name;
  }
  return "";
}

/* One "key=value": the key must be a leaf; the value is a YAML scalar. */
static int apply_set(loader *ld, uint32_t index, const char *arg) {
  yaml_parser_t parser;
  yaml_document_t ydoc;
  const yaml_node_t *root;
  char shown[96], key[PATH_MAX_LEN + 1];
  const char *eq;
  size_t kb = 0, ke;
  int idx, rc = SIM_OK, have_doc = 0, have_parser = 0;
  cfg_loc l = {cfg__set_label, index, 1};

  ld->set_index = index;
  eq = arg ? strchr(arg, '=') : NULL;
  if (!eq) {
    cfg__excerpt(shown, sizeof shown, arg ? arg : "", arg ? strlen(arg) : 0, 64);
    rc = cfg__fail_loc(ld, l, NULL, "expected key=value, got '%s'", shown);
    goto done;
  }
  ke = (size_t)(eq - arg);
  while (kb < ke && is_space(arg[kb])) kb++;
  while (ke > kb && is_space(arg[ke - 1])) ke--;
  l.col = (uint32_t)kb + 1;
  if (ke == kb) {
    rc = cfg__fail_loc(ld, l, NULL, "expected key=value, the key before '=' is missing");
    goto done;
  }
  if (ke - kb > PATH_MAX_LEN) {
    rc = fail_unknown(ld, l, arg + kb, ke - kb);
    goto done;
  }
  memcpy(key, arg + kb, ke - kb);
  key[ke - kb] = '\0';
  bool job = strncmp(key, "jobs[", 5) == 0; /* jobs[J].FIELD: entry J's field */
  idx = job ? -1 : cfg__find_key(key, ke - kb);
  if (idx < 0 && !job) {
    if (cfg__is_section(key, ke - kb))
      rc = cfg__fail_loc(ld, l, key, "is a section; set one of its keys (such as %s)",
                         first_key_of(key, ke - kb));
    else rc = fail_unknown(ld, l, key, ke - kb);
    goto done;
  }
  ld->col0 = (uint32_t)(eq - arg) + 2;
  ld->buf = eq + 1;
  ld->len = strlen(eq + 1);
  if (ld->len > CFG__FILE_MAX) {
    rc = cfg__fail_loc(ld, (cfg_loc){cfg__set_label, index, ld->col0}, key,
                       "a value of %zu bytes; allowed at most %d (a whole scenario file's limit)",
                       ld->len, CFG__FILE_MAX);
    goto done;
  }
  if ((rc = check_depth(ld, key)) != SIM_OK) goto done;
  if (!yaml_parser_initialize(&parser)) {
    rc = sim_fail(ld->err, SIM_ECONFIG, "out of memory");
    goto done;
  }
  have_parser = 1;
  yaml_parser_set_input_string(&parser, (const unsigned char *)ld->buf, ld->len);
  if (!yaml_parser_load(&parser, &ydoc)) {
    rc = fail_yaml(ld, &parser, key);
    goto done;
  }
  have_doc = 1;
  ld->ydoc = &ydoc;
  root = yaml_document_get_root_node(&ydoc);
  if (!root) {
    static const yaml_node_t empty = {
        .type = YAML_SCALAR_NODE,
        .data.scalar = {.value = (yaml_char_t *)"", .style = YAML_PLAIN_SCALAR_STYLE}};
    root = &empty;
  }
  rc = job ? cfg__set_job_key(ld, key, l, root) : set_leaf(ld, idx, key, root);
done:
  if (have_doc) yaml_document_delete(&ydoc);
  if (have_parser) yaml_parser_delete(&parser);
  ld->ydoc = NULL;
  return rc;
}

int cfg_load_buffer(cfg_scenario *out, cfg_doc **doc_out, const char *name, const char *yaml,
                    size_t len, const char *const *sets, int nsets, sim_error *err) {
  cfg_scenario s;
  cfg_doc *doc = NULL;
  loader ld;
  char msg[256];
  size_t n = cfg__nkeys();
  int rc = SIM_OK;

  if (!out || !doc_out || nsets < 0 || (nsets > 0 && !sets))
    return sim_fail(err, SIM_EINVAL, "cfg_load: bad arguments");
  memset(out, 0, sizeof *out);
  *doc_out = NULL;
  memset(&s, 0, sizeof s);
  doc = sim_calloc(1, sizeof *doc + n * sizeof doc->slot[0]);
  doc->file = sim_strdup(name ? name : "<buffer>");
  doc->nkeys = n;
  for (size_t i = 0; i < n; i++) {
    doc->slot[i].loc.file = "default";
    if (cfg__key_at(i)->def &&
        cfg__set_text(&s, i, cfg__key_at(i)->def, strlen(cfg__key_at(i)->def), msg, sizeof msg) !=
            SIM_OK) {
      rc = sim_fail(err, SIM_ECONFIG, "schema default of %s: %s", cfg__key_at(i)->name, msg);
      goto fail;
    }
  }

  memset(&ld, 0, sizeof ld);
  ld.s = &s;
  ld.doc = doc;
  ld.err = err;
  ld.label = doc->file;
  if (len > CFG__FILE_MAX) {
    rc = sim_fail(err, SIM_ECONFIG, "%s: %zu bytes; a scenario is at most %d bytes (4 MiB)",
                  doc->file, len, CFG__FILE_MAX);
    goto fail;
  }
  if (yaml && len > 0) {
    ld.buf = yaml;
    ld.len = len;
    rc = load_yaml(&ld);
    if (rc != SIM_OK) goto fail;
  }
  ld.label = cfg__set_label;
  for (int i = 0; i < nsets; i++) {
    rc = apply_set(&ld, (uint32_t)i + 1, sets[i]);
    if (rc != SIM_OK) goto fail;
  }
  rc = cfg__jobs_check_sets(&ld);
  if (rc != SIM_OK) goto fail;
  rc = cfg__resolve(&s, doc, err);
  if (rc != SIM_OK) goto fail;
  *out = s;
  *doc_out = doc;
  return SIM_OK;
fail:
  cfg_free(&s, doc);
  return rc;
}

static const char *file_kind(mode_t m) {
  return S_ISDIR(m)    ? "a folder"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISFIFO(m) ? "a pipe"
         : S_ISSOCK(m) ? "a socket"
                       : "not a regular file";
}

int cfg__read_file(const char *path, const char *what, char **out, size_t *len_out,
                   sim_error *err) {
  struct stat st;
  char *buf = NULL;
  size_t len = 0;
  int rc = SIM_OK;
  /* O_NONBLOCK: opening a pipe must not wait for a writer; it is refused below */
  int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  *out = NULL;
  *len_out = 0;
  if (fd < 0) return sim_fail(err, SIM_EIO, "%s: cannot read: %s", path, strerror(errno));
  if (fstat(fd, &st) != 0) {
    rc = sim_fail(err, SIM_EIO, "%s: cannot read: %s", path, strerror(errno));
    goto done;
  }
  if (!S_ISREG(st.st_mode)) {
    rc = sim_fail(err, SIM_EIO, "%s: is %s; %s is a regular file", path, file_kind(st.st_mode),
                  what);
    goto done;
  }
  if (st.st_size > CFG__FILE_MAX) {
    rc = sim_fail(err, SIM_EIO, "%s: %lld bytes; %s is at most %d bytes (4 MiB)", path,
                  (long long)st.st_size, what, CFG__FILE_MAX);
    goto done;
  }
  /* +1: a file that grew past the cap since fstat is caught, not cut */
  buf = sim_malloc((size_t)st.st_size + 1 > CFG__FILE_MAX ? (size_t)CFG__FILE_MAX + 1
                                                          : (size_t)st.st_size + 1);
  for (size_t cap = (size_t)st.st_size + 1;;) {
    ssize_t k;
    if (len == cap) {
      if (cap > CFG__FILE_MAX) {
        rc = sim_fail(err, SIM_EIO, "%s: more than %d bytes; %s is at most %d bytes (4 MiB)", path,
                      CFG__FILE_MAX, what, CFG__FILE_MAX);
        goto done;
      }
      cap = CFG__FILE_MAX + 1;
      buf = sim_realloc(buf, cap);
    }
    k = read(fd, buf + len, cap - len);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k < 0) {
      rc = sim_fail(err, SIM_EIO, "%s: cannot read: %s", path, strerror(errno));
      goto done;
    }
    if (k == 0) break;
    len += (size_t)k;
  }
  *out = buf;
  *len_out = len;
  buf = NULL;
done:
  sim_free(buf);
  close(fd);
  return rc;
}

int cfg_load(cfg_scenario *out, cfg_doc **doc, const char *path, const char *const *sets, int nsets,
             sim_error *err) {
  char *buf = NULL;
  size_t len = 0;
  int rc = SIM_OK;
  if (path) rc = cfg__read_file(path, "a scenario", &buf, &len, err);
  if (rc == SIM_OK)
    rc = cfg_load_buffer(out, doc, path ? path : "<no file>", buf, len, sets, nsets, err);
  sim_free(buf);
  return rc;
}

void cfg_free(cfg_scenario *s, cfg_doc *doc) {
  if (s) {
    for (size_t i = 0; i < cfg__nkeys(); i++) { /* every string key owns its text */
      const cfg__key *k = cfg__key_at(i);
      char *str;
      if (k->type != CFG__STRING) continue;
      memcpy(&str, (char *)s + k->offset, sizeof str);
      sim_free(str);
    }
    for (size_t i = 0; i < cfg__nkeys(); i++) { /* lists own their items */
      const cfg__key *k = cfg__key_at(i);
      if (k->type == CFG__LIST) sim_free(((cfg_u64_list *)(void *)((char *)s + k->offset))->v);
      if (k->type == CFG__FAULTS)
        cfg__faults_free((cfg_fault_list *)(void *)((char *)s + k->offset));
      if (k->type == CFG__JOBS) cfg__jobs_free((cfg_job_list *)(void *)((char *)s + k->offset));
      if (k->type == CFG__CLASSES)
        cfg__classes_free((cfg_class_table *)(void *)((char *)s + k->offset));
    }
    memset(s, 0, sizeof *s);
  }
  if (doc) {
    sim_free(doc->floc);
    cfg__job_locs_free(doc);
    sim_free(doc->file);
    sim_free(doc);
  }
}

/* "faults[3]" or "faults[3].factor": where that entry or field was written;
 * a field not given points at its entry. */
static int fault_where(const cfg_doc *doc, const char *key, cfg_loc *out) {
  char *end;
  unsigned long j;
  int field = -1;
  if (strncmp(key, "faults[", 7) != 0 || key[7] < '0' || key[7] > '9') return 0;
  j = strtoul(key + 7, &end, 10);
  if (*end != ']') return 0;
  if (end[1] == '.') {
    field = cfg__fault_field_find(end + 2, strlen(end + 2));
    if (field < 0) return 0;
  } else if (end[1] != '\0') {
    return 0;
  }
  if (!doc || j >= doc->nfloc) return 0;
  *out =
      field >= 0 && doc->floc[j].field[field].line ? doc->floc[j].field[field] : doc->floc[j].entry;
  return 1;
}

cfg_loc cfg_where(const cfg_doc *doc, const char *key) {
  cfg_loc none = {"default", 0, 0}, fl;
  int i = key ? cfg__find_key(key, strlen(key)) : -1;
  if (key && fault_where(doc, key, &fl)) return fl;
  if (key && cfg__job_where(doc, key, &fl)) return fl;
  if (key && cfg__class_where(doc, key, &fl)) return fl;
  if (i < 0 || !cfg__is_set(doc, (size_t)i)) return none;
  return doc->slot[i].loc;
}

void cfg_path_at(char *out, size_t cap, const cfg_doc *doc, const char *key, const char *path) {
  cfg_loc loc = cfg_where(doc, key);
  const char *slash = loc.file ? strrchr(loc.file, '/') : NULL;
  bool from_file = loc.file && strcmp(loc.file, "--set") && strcmp(loc.file, "default");
  if (path[0] == '/' || !from_file || !slash) snprintf(out, cap, "%s", path);
  else snprintf(out, cap, "%.*s/%s", (int)(slash - loc.file), loc.file, path);
}

int cfg_fail_at(const cfg_doc *doc, const char *key, sim_error *err, const char *fmt, ...) {
  char msg[sizeof(sim_error){0}.msg];
  va_list ap;
  cfg_loc l;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!key) return sim_fail(err, SIM_ECONFIG, "%s%s", doc ? "scenario: " : "", msg);
  if (!doc) return sim_fail(err, SIM_ECONFIG, "%s: %s", key, msg);
  if (doc->scope && strncmp(key, "workload.", 9) == 0) { /* a job's workload */
    char scoped[160];
    snprintf(scoped, sizeof scoped, "jobs[%u].%s", doc->scope - 1, key);
    l = cfg_where(doc, scoped);
    if (l.line == 0) return sim_fail(err, SIM_ECONFIG, "scenario: %s: %s", scoped, msg);
    return sim_fail(err, SIM_ECONFIG, "%s:%u:%u: %s: %s", l.file, l.line, l.col, scoped, msg);
  }
  l = cfg_where(doc, key);
  if (l.line == 0) return sim_fail(err, SIM_ECONFIG, "scenario: %s: %s", key, msg);
  return sim_fail(err, SIM_ECONFIG, "%s:%u:%u: %s: %s", l.file, l.line, l.col, key, msg);
}
