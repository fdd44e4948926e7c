/* The values of fabsim reliability's --sweep-* flags (rel_sweep_add): lists
 * in order, across repeated flags, named intervals, and each refusal with
 * the flag and the list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fabsim/reliability.h"

static void test_lists(void **state) {
  (void)state;
  rel_sweep sw = {0};
  sim_error err = {0};
  assert_int_equal(rel_sweep_add(&sw, "--sweep-gpus", "1024,4096", &err), SIM_OK);
  assert_int_equal(rel_sweep_add(&sw, "--sweep-gpus", "16384", &err), SIM_OK);
  assert_int_equal(sw.ngpus, 3);
  assert_int_equal(sw.gpus[0], 1024);
  assert_int_equal(sw.gpus[2], 16384);
  assert_int_equal(rel_sweep_add(&sw, "--sweep-spares", "0,16", &err), SIM_OK);
  assert_int_equal(sw.nspares, 2);
  assert_int_equal(sw.spares[1], 16);
  assert_int_equal(rel_sweep_add(&sw, "--sweep-interval", "10min,young,optimal", &err), SIM_OK);
  assert_int_equal(sw.nintervals, 3);
  assert_true(sw.interval[0] == 600.0);
  assert_true(sw.interval[1] == REL_IV_YOUNG);
  assert_true(sw.interval[2] == REL_IV_OPTIMAL);
  assert_string_equal(sw.interval_text[1], "young");
  rel_sweep_free(&sw);
}

static void refused(const char *flag, const char *list, const char *want) {
  rel_sweep sw = {0};
  sim_error err = {0};
  assert_int_equal(rel_sweep_add(&sw, flag, list, &err), SIM_EINVAL);
  if (!strstr(err.msg, want)) fail_msg("%s %s: got [%s], want [%s]", flag, list, err.msg, want);
  rel_sweep_free(&sw);
}

static void test_refusals(void **state) {
  (void)state;
  refused("--sweep-gpus", "0", "--sweep-gpus: '0' is not a list of integers >= 1");
  refused("--sweep-gpus", "10x", "'10x' is not a list");
  refused("--sweep-spares", "-1", "--sweep-spares: '-1' is not a list of integers >= 0");
  refused("--sweep-interval", "10parsecs", "--sweep-interval: ");
  refused("--sweep-interval", "10parsecs", "; or young, optimal");
  refused("--sweep-other", "1", "not a sweep");
  char many[1024] = "1";
  for (int i = 0; i < REL_SWEEP_MAX; i++) strcat(many, ",1");
  refused("--sweep-gpus", many, "is not a list");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lists),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
