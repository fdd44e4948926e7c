/* Root cause: failure cost against its formula, SDC detection step against
 * the check interval, attribution of a step's excess to a slowed GPU, a
 * network fault, or nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/rootcause.h"

static void assert_near(double got, double want) {
  if (fabs(got - want) > 1e-9 * fabs(want) + 1e-12) fail_msg("got %.15g, want %.15g", got, want);
}

static void test_failure_cost(void **state) {
  (void)state;
  rel_failure_cost c;
  double tau = 1800, delta = 60, R = 600;
  /* 1 h into the window: cycle 1860 s, phase 1740 s (computing) */
  rel_failure_cost_of(3600, tau, delta, R, 16384, &c);
  assert_near(c.since_checkpoint_s, 1740);
  assert_near(c.lost_work_s, 1740);
  assert_near(c.restart_cost_s, R + 1740);
  assert_near(c.lost_gpu_hours, 1740.0 * 16384 / 3600);
  assert_near(c.expected_lost_work_s, (tau * tau / 2 + tau * delta) / (tau + delta));
  /* while the checkpoint is being written: all tau lost */
  rel_failure_cost_of(1830, tau, delta, R, 8, &c);
  assert_near(c.since_checkpoint_s, 1830);
  assert_near(c.lost_work_s, tau);
  /* 2 s in: 2 s lost */
  rel_failure_cost_of(2, tau, delta, R, 8, &c);
  assert_near(c.lost_work_s, 2);
  assert_near(c.restart_cost_s, 602);
}

static void test_sdc_detect(void **state) {
  (void)state;
  assert_int_equal(rel_sdc_detect_step(3, 0), 0); /* never compared */
  assert_int_equal(rel_sdc_detect_step(3, 1), 3);
  assert_int_equal(rel_sdc_detect_step(3, 4), 4);
  assert_int_equal(rel_sdc_detect_step(4, 4), 4);
  assert_int_equal(rel_sdc_detect_step(5, 4), 8);
  assert_int_equal(rel_sdc_detect_step(0, 4), 0); /* no divergence */
}

static void test_attribution(void **state) {
  (void)state;
  /* two steps of 1 s fault-free (0.8 compute, 0.2 exposed), one stage */
  double bc[1] = {0.8}, be[1] = {0.2};
  double c1[1] = {1.0}, e1[1] = {0.2};  /* step 1: GPU at 0.8 -> compute 1.0 */
  double c2[1] = {0.8}, e2[1] = {0.35}; /* step 2: a link down -> exposed +0.15 */
#define STEP(t0, t, c, e) \
  {.start_s = t0, .time_s = t, .stage_compute_s = c, .stage_exposed_s = e, .nstages = 1}
  rel_rc_step base[2] = {STEP(0, 1, bc, be), STEP(1, 1, bc, be)};
  rel_rc_step run[2] = {STEP(0, 1.2, c1, e1), STEP(1.2, 1.15, c2, e2)};
  rel_rc_slow slow[2] = {
      {.at_s = 0, .until_s = 1.2, .factor = 0.8, .gpu = 1234, .node = 154, .rack = 19},
      {.at_s = 1.2, .until_s = -1, .factor = 1, .gpu = 1234, .node = 154, .rack = 19}};
  rel_rc_net net[1] = {
      {.at_s = 1.3, .until_s = -1, .component = "leaf0-spine0", .kind = "link-down"}};
  rel_rc_input in = {.run = run,
                     .base = base,
                     .nrun = 2,
                     .nbase = 2,
                     .slow = slow,
                     .nslow = 2,
                     .net = net,
                     .nnet = 1,
                     .gpus = 1024,
                     .wait_in = "dp_allreduce",
                     .threshold_frac = 1e-3};
  rel_rc_result rc;
  rel_root_cause(&in, &rc);
  assert_int_equal(rc.n, 2);
  const rel_rc_entry *s1 = &rc.v[0], *s2 = &rc.v[1];
  assert_int_equal(s1->step, 1);
  assert_near(s1->excess_frac, 0.2);
  const rel_rc_cause *c = &s1->causes[0];
  assert_string_equal(c->component, "gpu1234");
  assert_string_equal(c->kind, "gpu-slowdown");
  assert_near(c->effect_s, 0.2);
  assert_non_null(strstr(s1->text, "step 1 +20.0 %: gpu1234 slowed to 0.8 (node154, rack 19)"));
  assert_non_null(strstr(s1->text, "the other 1,023 GPUs waited 200 ms in dp_allreduce"));
  assert_int_equal(s1->ncauses, 1);
  /* step 2: the slowdown ended when it began (and its compute is back at
   * the baseline): the link takes the excess */
  c = &s2->causes[0];
  assert_string_equal(c->component, "leaf0-spine0");
  assert_string_equal(c->kind, "link-down");
  assert_near(c->effect_s, 0.15);
  assert_null(strstr(c->text, "PFC"));
  rel_rc_result_free(&rc);
  /* at the packet fidelity the step's PFC pauses and ECN marks are quoted against the baseline's */
  run[1].fabric = base[1].fabric = true;
  run[1].pfc_paused_s = 0.03;
  run[1].ecn_marks = 500;
  base[1].ecn_marks = 20;
  rel_root_cause(&in, &rc);
  assert_non_null(strstr(rc.v[1].causes[0].text,
                         "; PFC paused queues 30 ms (fault-free 0 us), 500 ECN marks (20)"));
  rel_rc_result_free(&rc);
  run[1].fabric = base[1].fabric = false;
  /* nothing to blame: "other" */
  in.nnet = 0;
  rel_root_cause(&in, &rc);
  assert_string_equal(rc.v[1].causes[0].kind, "other");
  rel_rc_result_free(&rc);
  /* steps at their baseline are left out */
  in.run = base;
  rel_root_cause(&in, &rc);
  assert_int_equal(rc.n, 0);
  rel_rc_result_free(&rc);
}

/* A pipeline: the slowest stage sets the pace, the other's delay overlaps it. */
static void test_pipeline_pace(void **state) {
  (void)state;
  double bc[2] = {0.6, 0.6}, be[2] = {0.1, 0.1}, rc_[2] = {1.1, 0.9}, re[2] = {0.1, 0.1};
  rel_rc_step base = {
      .start_s = 0, .time_s = 1, .stage_compute_s = bc, .stage_exposed_s = be, .nstages = 2};
  rel_rc_step run = {
      .start_s = 0, .time_s = 1.5, .stage_compute_s = rc_, .stage_exposed_s = re, .nstages = 2};
  rel_rc_slow slow[2] = {{.until_s = -1, .factor = 0.55, .gpu = 3, .stage = 0},
                         {.until_s = -1, .factor = 0.67, .gpu = 40, .stage = 1}};
  rel_rc_input in = {.run = &run,
                     .base = &base,
                     .nrun = 1,
                     .nbase = 1,
                     .slow = slow,
                     .nslow = 2,
                     .gpus = 64,
                     .threshold_frac = 1e-3};
  rel_rc_result rc;
  rel_root_cause(&in, &rc);
  assert_int_equal(rc.v[0].ncauses, 1);
  assert_string_equal(rc.v[0].causes[0].component, "gpu3");
  assert_near(rc.v[0].causes[0].effect_s, 0.5);
  rel_rc_result_free(&rc);
  run.time_s = 1.7; /* more than stage 0 alone explains: stage 1 gets the rest, up to its 0.3 */
  rel_root_cause(&in, &rc);
  assert_int_equal(rc.v[0].ncauses, 2);
  assert_near(rc.v[0].causes[0].effect_s, 0.5);
  assert_near(rc.v[0].causes[1].effect_s, 0.2);
  rel_rc_result_free(&rc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_failure_cost),
      cmocka_unit_test(test_sdc_detect),
      cmocka_unit_test(test_attribution),
      cmocka_unit_test(test_pipeline_pace),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
