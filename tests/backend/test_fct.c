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

/* Counted samples are the multiset they stand for: 5,000 samples of 37
 * values added one by one in a scrambled order (merged when the pairs fill
 * up) and the same counts added at once give the same figures, which are
 * those of the sorted multiset: nearest rank and the exact mean. */
static void test_counted_samples(void **state) {
  (void)state;
  enum { N = 5000, V = 37 };
  be_fct one = {0}, many = {0};
  uint64_t count[V] = {0}, sum = 0;
  for (uint32_t i = 0; i < N; i++) {
    uint32_t v = (i * 7919u) % V; /* 7919 is prime: every value, scrambled */
    be_fct_add(&one, 1000 + (simtime_ps)v * 10);
    count[v]++;
    sum += 1000 + (uint64_t)v * 10;
  }
  for (uint32_t v = V; v-- > 0;) be_fct_add_n(&many, 1000 + (simtime_ps)v * 10, count[v]);
  be_fct_add_n(&many, 5, 0); /* no samples: nothing */
  be_stats a = {0}, b = {0};
  be_fct_summarize(&one, &a);
  be_fct_summarize(&many, &b);
  /* rank r of the sorted multiset: the value whose cumulative count reaches r */
  uint64_t want[3] = {2500, 4950, 4995}; /* ceil(p N) */
  simtime_ps got[3] = {a.fct_p50, a.fct_p99, a.fct_p999};
  for (int k = 0; k < 3; k++) {
    uint64_t cum = 0;
    uint32_t v = 0;
    while (cum + count[v] < want[k]) cum += count[v++];
    assert_int_equal(got[k], 1000 + (simtime_ps)v * 10);
  }
  assert_int_equal(a.fct_max, 1000 + (V - 1) * 10);
  assert_true(a.fct_mean_s == ((double)(sum / N) + (double)(sum % N) / N) * 1e-12);
  assert_int_equal(a.fct_p50, b.fct_p50);
  assert_int_equal(a.fct_p99, b.fct_p99);
  assert_int_equal(a.fct_p999, b.fct_p999);
  assert_int_equal(a.fct_max, b.fct_max);
  assert_true(a.fct_mean_s == b.fct_mean_s);
  /* summarizing leaves the recorder as it was: more samples may follow */
  be_fct_add(&one, 1);
  be_fct_summarize(&one, &a);
  assert_int_equal(a.fct_max, b.fct_max);
  be_fct_free(&one);
  be_fct_free(&many);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_percentiles),
                                     cmocka_unit_test(test_counted_samples)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
