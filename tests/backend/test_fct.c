/* FCT percentiles: nearest-rank definition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fabsim/backend.h"

static void test_percentiles(void **state) {
  (void)state;
  be_fct f = {0};
  be_stats st = {0};
  be_fct_summarize(&f, &st); /* no samples: nothing observed */
  assert_int_equal(st.observed, 0);
  for (simtime_ps i = 1000; i >= 1; i--) be_fct_add(&f, i * 1000); /* 1..1000 ns, reversed */
  be_fct_summarize(&f, &st);
  assert_true(st.observed & BE_OBS_FCT);
  assert_int_equal(st.fct_p50, 500000);
  assert_int_equal(st.fct_p99, 990000);
  assert_int_equal(st.fct_p999, 999000);
  assert_int_equal(st.fct_max, 1000000);
  assert_true(st.fct_mean_s > 500.4e-9 && st.fct_mean_s < 500.6e-9);
  be_fct_free(&f);
  /* one sample: every percentile is it */
  be_fct_add(&f, 7);
  be_fct_summarize(&f, &st);
  assert_int_equal(st.fct_p50, 7);
  assert_int_equal(st.fct_p999, 7);
  be_fct_free(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_percentiles)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
