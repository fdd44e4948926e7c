/* sim_read_file and sim_replace_in_file (a sweep's points renamed to the
 * sweep's database): every occurrence replaced left to right without
 * overlap, the file rewritten whole, an absent file left absent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabsim/core.h"

static void replaced(const char *text, const char *from, const char *to, const char *want) {
  char dir[] = "/tmp/fabsim-test-replace-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/f.txt", dir);
  sim_error err = {0};
  assert_int_equal(sim_write_file_atomic(path, text, strlen(text), &err), SIM_OK);
  assert_int_equal(sim_replace_in_file(path, from, to, &err), SIM_OK);
  size_t n = 0;
  char *got = sim_read_file(path, &n);
  assert_non_null(got);
  assert_int_equal(n, strlen(want));
  assert_memory_equal(got, want, n);
  sim_free(got);
  remove(path);
  rmdir(dir);
}

static void test_replace(void **state) {
  (void)state;
  replaced("db: /tmp/r1.sqlite\ndir: /tmp/r1.sqlite-x\n", "/tmp/r1.sqlite", "/out/results.sqlite",
           "db: /out/results.sqlite\ndir: /out/results.sqlite-x\n");
  replaced("aaa", "aa", "b", "ba"); /* left to right, no overlap */
  replaced("abc", "x", "y", "abc"); /* nothing to replace */
  replaced("abc", "", "y", "abc");  /* an empty pattern replaces nothing */
  replaced("", "a", "b", "");       /* an empty file stays empty */
  replaced("xax", "x", "", "a");    /* to nothing */
}

static void test_absent_file(void **state) {
  (void)state;
  sim_error err = {0};
  const char *path = "/tmp/fabsim-test-replace-absent/none.txt";
  assert_int_equal(sim_replace_in_file(path, "a", "b", &err), SIM_OK);
  assert_int_equal(access(path, F_OK), -1);
  size_t n = 7;
  assert_null(sim_read_file(path, &n));
  assert_int_equal(n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_replace),
      cmocka_unit_test(test_absent_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
