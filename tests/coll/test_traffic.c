/* Synthetic traffic plans and queue-pair splitting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"

static void test_permutation_is_derangement(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=16"};
  fixture f;
  load(&f, sets, 1);
  coll_traffic_spec s = {.pattern = CFG_TRAFFIC_PERMUTATION, .bytes = 1000, .qps = 1, .seed = 5};
  coll_plan p, q;
  sim_error err = {0};
  assert_int_equal(coll_traffic_build(&p, f.t, &s, &err), SIM_OK);
  assert_int_equal(p.nphases, 1);
  assert_int_equal(p.phases[0].n, 128);
  uint8_t seen_src[128] = {0}, seen_dst[128] = {0};
  for (size_t i = 0; i < 128; i++) {
    be_xfer *x = &p.phases[0].x[i];
    assert_int_not_equal(x->src_gpu, x->dst_gpu);
    seen_src[x->src_gpu]++;
    seen_dst[x->dst_gpu]++;
    assert_int_equal(x->bytes, 1000);
  }
  for (size_t i = 0; i < 128; i++) {
    assert_int_equal(seen_src[i], 1);
    assert_int_equal(seen_dst[i], 1);
  }
  /* seeded: same seed same plan, other seed another plan */
  assert_int_equal(coll_traffic_build(&q, f.t, &s, &err), SIM_OK);
  assert_memory_equal(p.phases[0].x, q.phases[0].x, 128 * sizeof(be_xfer));
  coll_plan_free(&q);
  s.seed = 6;
  assert_int_equal(coll_traffic_build(&q, f.t, &s, &err), SIM_OK);
  assert_memory_not_equal(p.phases[0].x, q.phases[0].x, 128 * sizeof(be_xfer));
  coll_plan_free(&q);
  coll_plan_free(&p);
  unload(&f);
}

static void test_incast_pair_alltoall(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4"};
  fixture f;
  load(&f, sets, 1);
  coll_plan p;
  sim_error err = {0};
  /* incast: GPU 0's rail on the other nodes first (8, 16, 24), then node 0's */
  coll_traffic_spec s = {.pattern = CFG_TRAFFIC_INCAST, .bytes = 10, .senders = 5, .qps = 1};
  assert_int_equal(coll_traffic_build(&p, f.t, &s, &err), SIM_OK);
  uint32_t want[] = {8, 16, 24, 9, 17};
  for (int i = 0; i < 5; i++) {
    assert_int_equal(p.phases[0].x[i].src_gpu, want[i]);
    assert_int_equal(p.phases[0].x[i].dst_gpu, 0);
  }
  coll_plan_free(&p);
  s.senders = 32;
  assert_int_equal(coll_traffic_build(&p, f.t, &s, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "needs 33 GPUs"));
  s.pattern = CFG_TRAFFIC_PAIR;
  assert_int_equal(coll_traffic_build(&p, f.t, &s, &err), SIM_OK);
  assert_int_equal(p.phases[0].n, 1);
  assert_int_equal(p.phases[0].x[0].dst_gpu, 31);
  coll_plan_free(&p);
  s.pattern = CFG_TRAFFIC_ALL_TO_ALL;
  assert_int_equal(coll_traffic_build(&p, f.t, &s, &err), SIM_OK);
  assert_int_equal(coll_plan_flows(&p), 32 * 31);
  coll_plan_free(&p);
  /* staggered: one phase per flow */
  s.pattern = CFG_TRAFFIC_PERMUTATION;
  s.stagger = 1000;
  assert_int_equal(coll_traffic_build(&p, f.t, &s, &err), SIM_OK);
  assert_int_equal(p.nphases, 32);
  assert_int_equal(p.stagger, 1000);
  coll_plan_free(&p);
  unload(&f);
}

static void test_qp_split(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  coll_plan p;
  sim_error err = {0};
  coll_traffic_spec s = {.pattern = CFG_TRAFFIC_PAIR, .bytes = 1003, .qps = 4};
  assert_int_equal(coll_traffic_build(&p, f.t, &s, &err), SIM_OK);
  assert_int_equal(p.phases[0].n, 4);
  assert_int_equal(coll_plan_flows(&p), 1);
  uint64_t total = 0;
  for (int i = 0; i < 4; i++) {
    total += p.phases[0].x[i].bytes;
    for (int j = 0; j < i; j++)
      assert_int_not_equal(p.phases[0].x[i].flow_hash, p.phases[0].x[j].flow_hash);
  }
  assert_int_equal(total, 1003);
  assert_int_equal(p.phases[0].x[0].bytes, 251);
  assert_int_equal(p.phases[0].x[3].bytes, 250);
  coll_plan_free(&p);
  unload(&f);
}

/* Staggered flows on the analytic backend: flow i starts at i * stagger, so
 * with no overlap the plan ends at (n-1) * stagger + one flow's time. */
static void test_staggered_exec(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  coll_plan p;
  sim_error err = {0};
  coll_traffic_spec s = {.pattern = CFG_TRAFFIC_PERMUTATION,
                         .bytes = 4096,
                         .qps = 1,
                         .stagger = 1000000000 /* 1 ms */};
  assert_int_equal(coll_traffic_build(&p, f.t, &s, &err), SIM_OK);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_analytic_create(sim, f.t, &f.cfg);
  coll_exec e;
  coll_exec_start(&e, b, &p, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(e.finished);
  simtime_ps one = f.cfg.cluster.scale_up.latency +
                   sim_serialization_ps(4096, fx_achievable(f.cfg.cluster.scale_up.bandwidth,
                                                            f.cfg.cluster.scale_up.efficiency));
  assert_int_equal(e.end - e.start, 7 * 1000000000ull + one);
  be_destroy(b);
  sim_destroy(sim);
  coll_plan_free(&p);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_permutation_is_derangement),
      cmocka_unit_test(test_incast_pair_alltoall),
      cmocka_unit_test(test_qp_split),
      cmocka_unit_test(test_staggered_exec),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
