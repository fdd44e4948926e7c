/* docs/scenario.md carries the text cfg_schema_markdown() generates, so the
 * reference users read cannot drift from the schema the code enforces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/config.h"

/* Whole file, NUL-terminated, or NULL. Caller frees with sim_free. */
static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t len = 0, cap = 0, got;
  if (!f) return NULL;
  do {
    sim_grow((void **)&buf, &cap, len + 4096 + 1, 1);
    got = fread(buf + len, 1, cap - len - 1, f);
    len += got;
  } while (got > 0);
  buf[len] = '\0';
  fclose(f);
  return buf;
}

static void test_docs_contain_schema(void **state) {
  const char *src = getenv("FABSIM_SOURCE_DIR");
  char path[4096];
  char *doc, *generated;
  (void)state;
  if (!src) skip();
  snprintf(path, sizeof path, "%s/docs/scenario.md", src);
  doc = read_all(path);
  if (!doc) fail_msg("cannot read %s", path);
  generated = cfg_schema_markdown();
  if (!strstr(doc, generated)) {
    FILE *out = fopen("scenario-schema.md", "wb");
    if (out) {
      fputs(generated, out);
      fclose(out);
    }
    fail_msg(
        "%s does not contain the generated key reference; paste scenario-schema.md "
        "(written to the build folder) under '## Key reference'",
        path);
  }
  sim_free(generated);
  sim_free(doc);
}

/* Every key appears in the reference once, with its default. */
static void test_markdown_lists_every_key(void **state) {
  cfg_scenario s;
  cfg_doc *d;
  sim_error err = {0};
  char *md = cfg_schema_markdown(), *dump;
  (void)state;
  assert_int_equal(cfg_load_buffer(&s, &d, "x", "", 0, NULL, 0, &err), SIM_OK);
  dump = cfg_dump(&s);
  assert_non_null(strstr(md, "| `cluster.nodes` | integer 0..1000000 | `0` |"));
  assert_non_null(strstr(md, "| `fabric.link_bandwidth` | bandwidth > 0 | `400Gbps` |"));
  assert_non_null(strstr(md, "| `workload.collective.size` | size > 0 | `1GiB` |"));
  assert_non_null(strstr(md,
                         "by `cluster.gpu`: H100 `450GB/s`, H800 `200GB/s`, A100 "
                         "`300GB/s`, B200 `900GB/s`"));
  assert_non_null(strstr(md,
                         "by `fabric.transport`: infiniband `130ns`, roce `600ns`, "
                         "ethernet `600ns`"));
  assert_non_null(
      strstr(md, "### cluster\n\n| key | type | default | meaning |\n|---|---|---|---|\n"));
  size_t rows = 0; /* key rows: the fault entry tables at the end are not keys */
  char *entries = strstr(md, "\n#### fault entries");
  assert_non_null(entries);
  *entries = '\0';
  char *cls = strstr(md, "\n#### class entries"), *next = cls ? strstr(cls, "\n### ") : NULL;
  assert_non_null(next); /* nor the class entry table inside the fabric section */
  memmove(cls, next, strlen(next) + 1);
  for (const char *p = md; (p = strstr(p, "\n| `")) != NULL; p++)
    rows += strncmp(p, "\n| `workload.inference.", 23) != 0; /* dumped for that kind only */
  size_t leaves = 0; /* dump lines "  key: value"; section lines end in ':' */
  for (char *line = strtok(dump, "\n"); line; line = strtok(NULL, "\n"))
    if (line[0] != '#' && strstr(line, ": ")) leaves++;
  /* fabric.classes and workload.traffic_class: dumped only when set; output.max_rows,
   * output.max_events, output.flows, output.max_flows, power.timeseries and power.bands
   * fabric.file and fabric.map.server (quiet keys): only away from their defaults */
  assert_int_equal(rows, leaves + 10);
  sim_free(dump);
  sim_free(md);
  cfg_free(&s, d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_docs_contain_schema),
      cmocka_unit_test(test_markdown_lists_every_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
