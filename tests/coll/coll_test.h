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

/* Runs p to its end on a fresh simulation of fidelity fid (0 analytic, 1
 * flow, 2 packet) over f's fabric: the plan's simulated time. */
static inline simtime_ps coll_test_run_on(const fixture *f, const coll_plan *p, int fid) {
  sim_ctx *sim = sim_create(1);
  be_backend *b = fid == 0   ? be_analytic_create(sim, f->t, &f->cfg)
                  : fid == 1 ? be_flow_create(sim, f->t, &f->cfg)
                             : be_packet_create(sim, f->t, &f->cfg);
  coll_exec e;
  coll_exec_start(&e, b, p, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(e.finished);
  be_destroy(b);
  sim_destroy(sim);
  return e.end - e.start;
}

/* An AllReduce of S bytes over ranks[0..n) of f's cluster with algorithm a
 * and protocol p, a channel a NIC, 1 MiB chunks, NCCL's default latencies
 * and the hardware's NVLS and SHARP. */
static inline coll_spec coll_test_allreduce(const fixture *f, const uint32_t *ranks, uint32_t n,
                                            cfg_coll_algorithm a, cfg_coll_protocol p, uint64_t S) {
  coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                 .algorithm = a,
                 .bytes = S,
                 .ranks = ranks,
                 .nranks = n,
                 .channels = f->cfg.cluster.nic.per_node,
                 .chunk = 1 << 20,
                 .protocol = p};
  coll_spec_set_hw(&s, &f->cfg);
  return s;
}

#endif
