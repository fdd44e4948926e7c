/* Shared by tests/coll: run a plan on the analytic fidelity. Include after
 * <cmocka.h> and fixture.h. */
#ifndef FABSIM_TEST_COLL_H
#define FABSIM_TEST_COLL_H

#include "fabsim/coll.h"
#include "fixture.h"

/* Runs p to its end on a fresh simulation and analytic backend; checks that
 * it finished and that the backend moved every transfer and byte of the plan.
 * Returns the plan's time in seconds; *res (optional) gets its result. */
static inline double coll_test_run(const fixture *f, const coll_plan *p, coll_result *res) {
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_analytic_create(sim, f->t, &f->cfg);
  coll_exec e;
  coll_exec_start(&e, b, p, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(e.finished);
  coll_result r;
  coll_result_of(&e, &r);
  if (res) *res = r;
  be_stats st;
  b->ops->stats(b, &st);
  assert_int_equal(st.transfers, coll_plan_transfers(p));
  assert_int_equal(st.bytes, coll_plan_bytes(p));
  be_destroy(b);
  sim_destroy(sim);
  return r.time_s;
}

#endif
