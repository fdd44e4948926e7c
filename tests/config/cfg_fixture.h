/* Shared by the config tests: a scenario from a YAML text (named `file` in
 * error locations) and --set strings, and the one error a bad one must
 * give. Include after <cmocka.h> (uses its asserts). */
#ifndef FABSIM_TEST_CFG_FIXTURE_H
#define FABSIM_TEST_CFG_FIXTURE_H

#include <string.h>

#include "fabsim/config.h"

/* The scenario loaded into s; its document (the caller frees it). Fails the
 * test on an error. */
static inline cfg_doc *cfx_load(cfg_scenario *s, const char *file, const char *yaml,
                                const char *const *sets, int nsets) {
  cfg_doc *doc = NULL;
  sim_error err = {0};
  if (cfg_load_buffer(s, &doc, file, yaml, yaml ? strlen(yaml) : 0, sets, nsets, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  return doc;
}

/* yaml with one --set (or none: NULL) is refused with exactly msg. */
static inline void cfx_expect_error(const char *file, const char *yaml, const char *set,
                                    const char *msg) {
  cfg_scenario s;
  cfg_doc *doc = NULL;
  sim_error err = {0};
  const char *sets[1] = {set};
  int rc = cfg_load_buffer(&s, &doc, file, yaml, yaml ? strlen(yaml) : 0, sets, set ? 1 : 0, &err);
  assert_int_equal(rc, SIM_ECONFIG);
  assert_null(doc);
  if (strcmp(err.msg, msg) != 0) fail_msg("got:  %s\nwant: %s", err.msg, msg);
}

#endif
