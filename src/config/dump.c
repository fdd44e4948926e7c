/* Text out of the schema: the resolved scenario as YAML (cfg_dump) and the
 * key reference as Markdown (cfg_schema_markdown, pasted into
 * docs/scenario.md; tests/config/test_docs.c keeps the two identical).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/cfg_internal.h"

/* ---- text builder ------------------------------------------------------------ */

static void buf_reserve(cfg__buf *b, size_t extra) {
  if (b->len + extra + 1 > b->cap) sim_grow((void **)&b->p, &b->cap, b->len + extra + 1, 1);
}

void cfg__buf_puts(cfg__buf *b, const char *s) {
  size_t n = strlen(s);
  buf_reserve(b, n);
  memcpy(b->p + b->len, s, n + 1);
  b->len += n;
}

void cfg__buf_printf(cfg__buf *b, const char *fmt, ...) {
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  buf_reserve(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

char *cfg__buf_take(cfg__buf *b) {
  char *p;
  buf_reserve(b, 0);
  b->p[b->len] = '\0';
  p = b->p;
  b->p = NULL;
  b->len = b->cap = 0;
  return p;
}

/* ---- cfg_dump ---------------------------------------------------------------- */

/* Length of the section part shared by two dotted names ("cluster.nic." of
 * cluster.nic.bandwidth and cluster.nic.latency), ending after a dot. */
static size_t shared_sections(const char *a, const char *b) {
  size_t i = 0, shared = 0;
  while (a[i] && a[i] == b[i]) {
    if (a[i] == '.') shared = i + 1;
    i++;
  }
  return shared;
}

char *cfg_dump(const cfg_scenario *s) {
  cfg__buf b = {0};
  const char *prev = "";
  cfg__buf_puts(&b, "# fabsim scenario, resolved: every key with its value in effect\n");
  for (size_t i = 0; i < cfg__nkeys(); i++) {
    const char *name = cfg__key_at(i)->name;
    /* jobs: written only when there are jobs, and then in place of the
     * top-level workload (each job has its own) */
    if (cfg__key_at(i)->type == CFG__JOBS && s->jobs.n == 0) continue;
    if (s->jobs.n && cfg__is_workload_key(i)) continue;
    if (cfg__key_at(i)->quiet && cfg__at_default(s, i)) continue; /* as before it existed */
    if (cfg__other_kinds_key(s->workload.kind, i)) continue;
    size_t at = shared_sections(prev, name), depth = 0;
    for (size_t j = 0; j < at; j++) depth += name[j] == '.';
    /* open every section below the shared part, one line each */
    for (const char *dot; (dot = strchr(name + at, '.')) != NULL; at = (size_t)(dot - name) + 1) {
      cfg__buf_printf(&b, "%*s%.*s:\n", (int)(2 * depth), "", (int)(dot - (name + at)), name + at);
      depth++;
    }
    cfg__buf_printf(&b, "%*s%s: ", (int)(2 * depth), "", name + at);
    cfg__value_text(s, i, &b);
    cfg__buf_puts(&b, "\n");
    prev = name;
  }
  return cfg__buf_take(&b);
}

/* ---- cfg_schema_markdown ------------------------------------------------------- */

static void default_column(cfg__buf *b, const cfg__key *k) {
  const cfg__key *sel = cfg__preset_selector(k->derive);
  if (k->derive == CFG__DERIVE_NONE) {
    cfg__buf_printf(b, "`%s`", k->def);
  } else if (k->derive == CFG__DERIVE_RULE) {
    cfg__buf_puts(b, k->def_doc);
  } else { /* one text per value of the selecting enum */
    cfg__buf_printf(b, "by `%s`:", sel->name);
    for (int v = 0; v < sel->nnames; v++)
      cfg__buf_printf(b, "%s %s `%s`", v ? "," : "", sel->names[v], k->by_value[v]);
  }
}

char *cfg_schema_markdown(void) {
  cfg__buf b = {0};
  char type[256];
  size_t seclen = 0;
  const char *section = "";
  for (size_t i = 0; i < cfg__nkeys(); i++) {
    const cfg__key *k = cfg__key_at(i);
    size_t len = strcspn(k->name, ".");
    if (len != seclen || strncmp(k->name, section, len) != 0) {
      section = k->name;
      seclen = len;
      cfg__buf_printf(&b, "%s### %.*s\n\n", i ? "\n" : "", (int)len, section);
      cfg__buf_puts(&b, "| key | type | default | meaning |\n|---|---|---|---|\n");
    }
    cfg__describe_type(k, type, sizeof type);
    cfg__buf_printf(&b, "| `%s` | %s | ", k->name, type);
    default_column(&b, k);
    cfg__buf_printf(&b, " | %s |\n", k->doc);
    if (k->type == CFG__FAULTS) cfg__faults_markdown(&b);
    if (k->type == CFG__CLASSES) cfg__classes_markdown(&b);
  }
  return cfg__buf_take(&b);
}
