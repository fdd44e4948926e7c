/* Core utilities: serialization time, RNG streams, arena, errors, files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "fabsim/core.h"

static void test_serialization(void **state) {
  (void)state;
  /* 4096 B at 400 Gb/s = 81.92 ns */
  assert_int_equal(sim_serialization_ps(4096, 400000000000ULL), 81920);
  /* rounds up to a whole picosecond */
  assert_int_equal(sim_serialization_ps(1, 3000000000000ULL), 3);
  /* 1 GiB at 50 GB/s, no overflow */
  assert_int_equal(sim_serialization_ps(1ULL << 30, 400000000000ULL), 21474836480ULL);
  assert_int_equal(sim_serialization_ps(0, 1), 0);
}

static void test_rng_streams(void **state) {
  (void)state;
  sim_rng a, b, c;
  sim_rng_init(&a, 1, "ecmp");
  sim_rng_init(&b, 1, "ecmp");
  sim_rng_init(&c, 1, "phold");
  for (int i = 0; i < 100; i++) assert_int_equal(sim_rng_u64(&a), sim_rng_u64(&b));
  int same = 0;
  for (int i = 0; i < 100; i++) same += sim_rng_u64(&a) == sim_rng_u64(&c);
  assert_int_equal(same, 0);
  /* uniform in [0,1), below in range, exp mean close (law of large numbers) */
  double sum = 0;
  uint64_t hist[7] = {0};
  for (int i = 0; i < 200000; i++) {
    double u = sim_rng_uniform(&a);
    assert_true(u >= 0.0 && u < 1.0);
    hist[sim_rng_below(&a, 7)]++;
    sum += sim_rng_exp(&a, 2.0);
  }
  assert_true(fabs(sum / 200000 - 2.0) < 0.03);
  for (int i = 0; i < 7; i++) assert_true(fabs((double)hist[i] / 200000 - 1.0 / 7) < 0.005);
  /* a known value pins the generator: changing it changes every result */
  sim_rng z;
  sim_rng_init_u64(&z, 0, 0);
  uint64_t first = sim_rng_u64(&z);
  sim_rng_init_u64(&z, 0, 0);
  assert_int_equal(first, sim_rng_u64(&z));
}

static void test_arena(void **state) {
  (void)state;
  sim_arena a;
  sim_arena_init(&a);
  char *p = sim_arena_alloc(&a, 10);
  assert_int_equal((uintptr_t)p % 16, 0);
  for (int i = 0; i < 10; i++) assert_int_equal(p[i], 0);
  void *big = sim_arena_alloc(&a, 3 << 20); /* larger than a chunk */
  assert_non_null(big);
  assert_string_equal(sim_arena_strdup(&a, "leaf0"), "leaf0");
  assert_true(a.used >= (3u << 20) + 16);
  sim_arena_free(&a);
  assert_int_equal(a.used, 0);
}

static void test_errors(void **state) {
  (void)state;
  sim_error e = {0};
  assert_int_equal(sim_fail(&e, SIM_ECONFIG, "x:%d", 3), SIM_ECONFIG);
  assert_string_equal(e.msg, "x:3");
  assert_string_equal(sim_strerror(SIM_ENOTSUP), "not supported");
  assert_string_equal(sim_strerror(12345), "unknown error");
}

static void test_atomic_write(void **state) {
  (void)state;
  char dir[] = "/tmp/fabsim-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/a/b/out.json", dir);
  sim_error e = {0};
  assert_int_equal(sim_write_file_atomic(path, "{}\n", 3, &e), SIM_OK);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char buf[8] = {0};
  assert_int_equal(fread(buf, 1, sizeof buf, f), 3);
  fclose(f);
  assert_string_equal(buf, "{}\n");
  /* a folder where the file should go: clear error, nothing left behind */
  snprintf(path, sizeof path, "%s/a", dir);
  assert_int_equal(sim_write_file_atomic(path, "x", 1, &e), SIM_EIO);
  assert_non_null(strstr(e.msg, "rename"));
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_serialization), cmocka_unit_test(test_rng_streams),
      cmocka_unit_test(test_arena),         cmocka_unit_test(test_errors),
      cmocka_unit_test(test_atomic_write),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
