/* JSON output through jansson; atomic files. */
#include <stdlib.h>
#include <string.h>

#include "fabsim/out.h"

enum { OUT_JSON_FLAGS = JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12) };

char *out_json_text(const json_t *root) { return json_dumps(root, OUT_JSON_FLAGS); }

int out_write_json(const json_t *root, const char *dir, const char *name, sim_error *err) {
  char *text = out_json_text(root);
  if (!text) return sim_fail(err, SIM_EIO, "cannot serialize %s", name);
  size_t len = strlen(text);
  char *buf = sim_malloc(len + 2);
  memcpy(buf, text, len);
  buf[len++] = '\n';
  free(text);
  char path[4096];
  int rc;
  if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
    rc = sim_fail(err, SIM_EIO, "%s/%s: path too long", dir, name);
  } else {
    rc = sim_write_file_atomic(path, buf, len, err);
  }
  sim_free(buf);
  return rc;
}
