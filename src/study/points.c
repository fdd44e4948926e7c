/* A study's points: --vary lists and their cross product, the points' argv,
 * ids and paths, how many run at once. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fabsim/study.h"

void study_vary_free(study_vary *list, size_t n) {
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < list[i].n; k++) sim_free(list[i].values[k]);
    sim_free(list[i].values);
    sim_free(list[i].key);
  }
  sim_free(list);
}

/* The --vary argument's message for a key given twice, listing the values
 * already given then the new ones. */
static int varied_twice(const study_vary *v, const char *text, const char *values, sim_error *err) {
  char all[sizeof err->msg];
  size_t o = 0;
  all[0] = '\0';
  for (size_t k = 0; k < v->n && o < sizeof all; k++)
    o += (size_t)snprintf(all + o, sizeof all - o, "%s,", v->values[k]);
  return sim_fail(err, SIM_EINVAL,
                  "--vary '%s': %s is varied twice; allowed: each key in one --vary with all its "
                  "values, such as --vary %s=%s%s",
                  text, v->key, v->key, all, values);
}

int study_vary_add(study_vary **list, size_t *n, const char *text, sim_error *err) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text || !eq[1])
    return sim_fail(err, SIM_EINVAL, "--vary '%s': write KEY=V1,V2,... (see --help)", text);
  /* the key as --set reads it: blanks around it do not count */
  size_t kb = 0, ke = (size_t)(eq - text);
  while (kb < ke && (text[kb] == ' ' || text[kb] == '\t')) kb++;
  while (ke > kb && (text[ke - 1] == ' ' || text[ke - 1] == '\t')) ke--;
  /* A key varied twice would make points whose two values of it fight
   * (the later --set wins) under two columns labelled alike. */
  for (size_t i = 0; i < *n; i++)
    if (strlen((*list)[i].key) == ke - kb && !memcmp((*list)[i].key, text + kb, ke - kb))
      return varied_twice(&(*list)[i], text, eq + 1, err);
  for (const char *p = eq + 1;; p++) { /* no empty value: all or nothing */
    size_t len = strcspn(p, ",");
    if (len == 0)
      return sim_fail(err, SIM_EINVAL, "--vary '%s': an empty value (see --help)", text);
    p += len;
    if (!*p) break;
  }
  *list = sim_realloc(*list, (*n + 1) * sizeof **list);
  study_vary *v = &(*list)[(*n)++];
  memset(v, 0, sizeof *v);
  v->key = sim_malloc(ke - kb + 1);
  memcpy(v->key, text + kb, ke - kb);
  v->key[ke - kb] = '\0';
  for (const char *p = eq + 1;;) {
    size_t len = strcspn(p, ",");
    v->values = sim_realloc(v->values, (v->n + 1) * sizeof *v->values);
    v->values[v->n] = sim_malloc(len + 1);
    memcpy(v->values[v->n], p, len);
    v->values[v->n++][len] = '\0';
    if (!p[len]) break;
    p += len + 1;
  }
  return SIM_OK;
}

size_t study_vary_points(const study_vary *list, size_t n) {
  size_t points = 1;
  for (size_t i = 0; i < n; i++) {
    points *= list[i].n;
    if (points > STUDY_MAX_POINTS) return 0;
  }
  return points;
}

void study_vary_point(const study_vary *list, size_t n, size_t p, char **sets, char *label,
                      size_t cap) {
  size_t rest = p, len = 0;
  for (size_t v = n; v-- > 0;) { /* the last --vary varies fastest */
    const study_vary *vy = &list[v];
    size_t idx = rest % vy->n;
    rest /= vy->n;
    size_t kl = strlen(vy->key) + strlen(vy->values[idx]) + 2;
    sets[v] = sim_malloc(kl);
    snprintf(sets[v], kl, "%s=%s", vy->key, vy->values[idx]);
  }
  if (!label || cap == 0) return;
  label[0] = '\0';
  for (size_t v = 0; v < n; v++)
    len +=
        (size_t)snprintf(label + len, cap - (len < cap ? len : cap), "%s%s", v ? " " : "", sets[v]);
}

void study_point_arg(study_point *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = sim_malloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  p->args = sim_realloc(p->args, (p->nargs + 2) * sizeof *p->args);
  p->args[p->nargs++] = s;
  p->args[p->nargs] = NULL;
}

void study_points_free(study_point *points, size_t n) {
  for (size_t i = 0; points && i < n; i++) {
    for (size_t k = 0; k < points[i].nargs; k++) sim_free(points[i].args[k]);
    sim_free(points[i].args);
    sim_free(points[i].dir);
    sim_free(points[i].label);
    sim_free(points[i].stderr_head);
  }
  sim_free(points);
}

unsigned study_parallel_default(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return cpus > 0 ? (unsigned)cpus : 1;
}

int study_parallel_parse(const char *text, unsigned *n, sim_error *err) {
  char *end;
  long v = strtol(text, &end, 10);
  if (*end || v < 1 || v > 1024)
    return sim_fail(err, SIM_EINVAL, "--jobs '%s': a number of processes, 1..1024", text);
  *n = (unsigned)v;
  return SIM_OK;
}

void study_make_id(char *buf, size_t n, const char *prefix) {
  time_t now = time(NULL);
  struct tm tm;
  char ts[32];
  gmtime_r(&now, &tm);
  strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
  snprintf(buf, n, "%s-%s-%ld", prefix, ts, (long)getpid());
}

char *study_abspath(const char *path) {
  if (path[0] == '/') return sim_strdup(path);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return sim_strdup(path);
  size_t n = strlen(cwd) + strlen(path) + 2;
  char *p = sim_malloc(n);
  snprintf(p, n, "%s/%s", cwd, path);
  return p;
}
