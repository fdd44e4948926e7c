/* JSON output through jansson; atomic files; the check that no figure
 * that is not a finite number leaves in any of them (fabsim/out.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/out_internal.h"

enum { OUT_JSON_FLAGS = JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12) };

/* The key of the marker object a non-finite real becomes. */
static const char nonfinite_key[] = "fabsim: not a finite number";

json_t *out_json_real(double v) {
  if (isfinite(v)) return (json_real)(v); /* (json_real): jansson's, not the macro */
  json_t *o = json_object();
  json_object_set_new(o, nonfinite_key, json_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"));
  return o;
}

json_t *out_json_u64(uint64_t v) {
  return v <= INT64_MAX ? json_integer((json_int_t)v) : (json_real)((double)v);
}

/* The first marker under j, its path into path[0..cap) from len on. */
static const json_t *find_marker(const json_t *j, char *path, size_t len, size_t cap) {
  const json_t *hit = NULL;
  if (json_is_object(j)) {
    const json_t *m = json_object_get(j, nonfinite_key);
    if (m) return m;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)j, k, v) {
      int n = snprintf(path + len, cap - len, "%s%s", len ? "." : "", k);
      size_t at = n > 0 && len + (size_t)n < cap ? len + (size_t)n : len;
      if ((hit = find_marker(v, path, at, cap))) return hit;
    }
  } else if (json_is_array(j)) {
    for (size_t i = 0; i < json_array_size(j) && !hit; i++) {
      int n = snprintf(path + len, cap - len, "%s%zu", len ? "." : "", i);
      size_t at = n > 0 && len + (size_t)n < cap ? len + (size_t)n : len;
      hit = find_marker(json_array_get(j, i), path, at, cap);
    }
  }
  if (!hit) path[len] = '\0';
  return hit;
}

int out_json_check(const json_t *root, const char *what, sim_error *err) {
  char path[512] = "";
  const json_t *m = root ? find_marker(root, path, 0, sizeof path) : NULL;
  if (!m) return SIM_OK;
  return sim_fail(err, SIM_ERANGE,
                  "%s: the figure %s is %s, not a number a run can report; nothing was written "
                  "(a bug: please report the scenario)",
                  what, path[0] ? path : "(top)", json_string_value(m));
}

char *out_json_text(const json_t *root) {
  sim_error err = {0};
  if (out_json_check(root, "the JSON output", &err) != SIM_OK) {
    fprintf(stderr, "fabsim: %s\n", err.msg);
    exit(1);
  }
  return json_dumps(root, OUT_JSON_FLAGS);
}

int out_write_json(const json_t *root, const char *dir, const char *name, sim_error *err) {
  int rc = out_json_check(root, name, err);
  if (rc != SIM_OK) return rc;
  char *text = json_dumps(root, OUT_JSON_FLAGS);
  if (!text) return sim_fail(err, SIM_EIO, "cannot serialize %s", name);
  size_t len = strlen(text);
  char *buf = sim_malloc(len + 2);
  memcpy(buf, text, len);
  buf[len++] = '\n';
  free(text);
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
    rc = sim_fail(err, SIM_EIO, "%s/%s: path too long", dir, name);
  } else {
    rc = sim_write_file_atomic(path, buf, len, err);
  }
  sim_free(buf);
  return rc;
}

void out_print_json(json_t *root) {
  char *text = out_json_text(root);
  puts(text);
  free(text);
  json_decref(root);
}
