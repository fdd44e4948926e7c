/* DCQCN reaction point against its update rules, step by step, and the
 * null model. Line rate 400 Gb/s, MODEL-INPUTS defaults: g = 1/256, alpha
 * every 1 us, decrease at most every 4 us, increase timer 300 us, F = 1,
 * Rai = 80 Mb/s and Rhai = 800 Mb/s (x 400/25), Rmin = 1 Gb/s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "fabsim/cc.h"

static const rate_bps LINE = 400000000000ull;
#define US SIM_PS_PER_US

static void near(double got, double want) {
  if (fabs(got - want) > 1e-9 * fabs(want) + 1e-12) fail_msg("got %.17g, want %.17g", got, want);
}

static void test_defaults(void **state) {
  (void)state;
  cc_params p;
  cc_defaults(&p, LINE);
  assert_int_equal(p.rai, 80000000);
  assert_int_equal(p.rhai, 800000000);
  assert_int_equal(p.rmin, 1000000000);
  near(p.g, 1.0 / 256);
  assert_ptr_equal(cc_by_name("dcqcn"), &cc_dcqcn_ops);
  assert_ptr_equal(cc_by_name("none"), &cc_none_ops);
  assert_null(cc_by_name("hpcc"));
  cc_state s;
  cc_none_ops.init(&s, &p, LINE, 0);
  assert_int_equal(cc_none_ops.rate(&s, &p, 5 * US), LINE);
}

static void test_decrease_and_recovery(void **state) {
  (void)state;
  cc_params p;
  cc_defaults(&p, LINE);
  cc_state s;
  const cc_ops *o = &cc_dcqcn_ops;
  o->init(&s, &p, LINE, 0);
  assert_int_equal(o->rate(&s, &p, 100 * US), LINE); /* no CNP: line rate */
  simtime_ps t0 = 100 * US;
  o->on_cnp(&s, &p, t0); /* alpha = 1: Rt = Rc, Rc halves at once */
  double rc, rt, alpha;
  cc_dcqcn_peek(&s, &rc, &rt, &alpha);
  near(rc, LINE / 2.0);
  near(rt, (double)LINE);
  near(alpha, 1.0);
  assert_int_equal(o->rate(&s, &p, t0 + 1), LINE / 2);
  /* alpha: the first tick still counts that CNP, then decays (1 - g)^k */
  o->rate(&s, &p, t0 + 10 * US);
  cc_dcqcn_peek(&s, NULL, NULL, &alpha);
  near(alpha, pow(1 - 1.0 / 256, 9));
  /* increases every 300 us: fast recovery (stage 1 <= F), additive, hyper */
  o->rate(&s, &p, t0 + 300 * US);
  cc_dcqcn_peek(&s, &rc, &rt, NULL);
  near(rc, 0.75 * LINE);
  near(rt, (double)LINE);
  o->rate(&s, &p, t0 + 600 * US); /* Rt + Rai clamps to line */
  cc_dcqcn_peek(&s, &rc, &rt, NULL);
  near(rc, 0.875 * LINE);
  o->rate(&s, &p, t0 + 900 * US);
  cc_dcqcn_peek(&s, &rc, NULL, NULL);
  near(rc, 0.9375 * LINE);
  /* converges back to exactly line rate, and stops */
  assert_int_equal(o->rate(&s, &p, t0 + 100000 * US), LINE);
}

static void test_decrease_period(void **state) {
  (void)state;
  cc_params p;
  cc_defaults(&p, LINE);
  cc_state s;
  const cc_ops *o = &cc_dcqcn_ops;
  o->init(&s, &p, LINE, 0);
  o->on_cnp(&s, &p, 0);      /* decrease at 0: Rc = L/2, alpha 1 */
  o->on_cnp(&s, &p, 1 * US); /* waits for the next check, at 4 us */
  double rc, alpha;
  cc_dcqcn_peek(&s, &rc, NULL, NULL);
  near(rc, LINE / 2.0);
  o->rate(&s, &p, 4 * US - 1);
  cc_dcqcn_peek(&s, &rc, NULL, NULL);
  near(rc, LINE / 2.0);
  o->rate(&s, &p, 4 * US);
  /* alpha ticks at 1, 2, 3, 4 us: tick 1 (CNP of t=0): 1; tick 2 (CNP of
   * t=1us): 1; ticks 3, 4 decay; then the decrease uses that alpha */
  double a = pow(1 - 1.0 / 256, 2);
  cc_dcqcn_peek(&s, &rc, NULL, &alpha);
  near(alpha, a);
  near(rc, LINE / 2.0 * (1 - a / 2));
}

static void test_min_rate(void **state) {
  (void)state;
  cc_params p;
  cc_defaults(&p, LINE);
  cc_state s;
  const cc_ops *o = &cc_dcqcn_ops;
  o->init(&s, &p, LINE, 0);
  for (simtime_ps t = 0; t < 2000 * US; t += 4 * US) o->on_cnp(&s, &p, t);
  assert_int_equal(o->rate(&s, &p, 2000 * US), p.rmin);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_decrease_and_recovery),
      cmocka_unit_test(test_decrease_period),
      cmocka_unit_test(test_min_rate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
