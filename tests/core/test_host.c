/* The host readings of src/core/host.c: the MPI launcher as each launcher's
 * variables describe it (Open MPI, PMI, PMIx), FABSIM_NO_MPI overriding
 * them; the wall clock never going back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "fabsim/core.h"

static const char *const vars[] = {
    "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
    "MPI_LOCALNRANKS",      "FABSIM_NO_MPI"};

static void clear(void) {
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

static void test_no_launcher(void **state) {
  (void)state;
  clear();
  sim_launcher l = sim_launcher_get();
  assert_false(l.launched);
  assert_int_equal(l.size, 1);
  assert_int_equal(l.rank, 0);
}

static void test_open_mpi(void **state) {
  (void)state;
  clear();
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("PMI_SIZE", "9", 1); /* Open MPI's own variables come first */
  sim_launcher l = sim_launcher_get();
  assert_true(l.launched);
  assert_int_equal(l.size, 4);
  assert_int_equal(l.rank, 3);
  clear();
}

static void test_pmi_and_pmix(void **state) {
  (void)state;
  clear();
  setenv("PMI_SIZE", "8", 1);
  setenv("PMI_RANK", "5", 1);
  sim_launcher l = sim_launcher_get();
  assert_true(l.launched);
  assert_int_equal(l.size, 8);
  assert_int_equal(l.rank, 5);
  clear();
  setenv("PMIX_RANK", "2", 1); /* PMIx tells the rank, not the size */
  l = sim_launcher_get();
  assert_true(l.launched);
  assert_int_equal(l.size, 1);
  assert_int_equal(l.rank, 2);
  clear();
  setenv("MPI_LOCALNRANKS", "2", 1); /* MPICH's hydra without PMI_SIZE */
  assert_true(sim_launcher_get().launched);
  clear();
}

static void test_no_mpi_overrides(void **state) {
  (void)state;
  clear();
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("FABSIM_NO_MPI", "1", 1);
  sim_launcher l = sim_launcher_get();
  assert_false(l.launched);
  assert_int_equal(l.size, 1);
  assert_int_equal(l.rank, 0);
  setenv("FABSIM_NO_MPI", "0", 1); /* "0" and "" do not switch MPI off */
  assert_true(sim_launcher_get().launched);
  setenv("FABSIM_NO_MPI", "", 1);
  assert_true(sim_launcher_get().launched);
  clear();
}

static void test_wall_clock_is_monotonic(void **state) {
  (void)state;
  double last = sim_wall_s();
  for (int i = 0; i < 1000; i++) {
    double now = sim_wall_s();
    assert_true(now >= last);
    last = now;
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_launcher),
      cmocka_unit_test(test_open_mpi),
      cmocka_unit_test(test_pmi_and_pmix),
      cmocka_unit_test(test_no_mpi_overrides),
      cmocka_unit_test(test_wall_clock_is_monotonic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
