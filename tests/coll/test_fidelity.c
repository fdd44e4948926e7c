/* Every collective algorithm on the analytic and the flow fidelity: where
 * no two transfers of unequal size share a link the two agree within 5 %;
 * plans are deterministic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"

static double run(const fixture *f, const coll_plan *p, bool flow) {
  sim_ctx *sim = sim_create(1);
  be_backend *b =
      flow ? be_flow_create(sim, f->t, &f->cfg) : be_analytic_create(sim, f->t, &f->cfg);
  coll_exec e;
  coll_exec_start(&e, b, p, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(e.finished);
  be_stats st;
  b->ops->stats(b, &st);
  assert_int_equal(st.transfers, coll_plan_transfers(p));
  assert_int_equal(st.bytes, coll_plan_bytes(p));
  be_destroy(b);
  sim_destroy(sim);
  return sim_ps_to_s(e.end - e.start);
}

static void assert_same_plan(const coll_plan *a, const coll_plan *b) {
  assert_int_equal(a->nphases, b->nphases);
  for (size_t i = 0; i < a->nphases; i++) {
    assert_int_equal(a->phases[i].n, b->phases[i].n);
    assert_int_equal(a->phases[i].repeat, b->phases[i].repeat);
    for (size_t j = 0; j < a->phases[i].n; j++) {
      const be_xfer *x = &a->phases[i].x[j], *y = &b->phases[i].x[j];
      assert_true(x->src_gpu == y->src_gpu && x->dst_gpu == y->dst_gpu && x->bytes == y->bytes &&
                  x->flow_hash == y->flow_hash);
    }
  }
}

static void test_analytic_vs_flow(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4", "fabric.topology=multi-plane"};
  fixture f;
  load(&f, sets, 2);
  uint32_t ranks[32];
  for (uint32_t i = 0; i < 32; i++) ranks[i] = i;
  static const struct {
    cfg_coll_op op;
    cfg_coll_algorithm a;
    uint32_t n, k;
  } cases[] = {
      {CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, 32, 1},
      {CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, 32, 4},
      {CFG_COLL_ALLREDUCE, CFG_ALGO_HALVING_DOUBLING, 32, 8},
      {CFG_COLL_ALLREDUCE, CFG_ALGO_HALVING_DOUBLING, 24, 2},
      {CFG_COLL_REDUCESCATTER, CFG_ALGO_HALVING_DOUBLING, 32, 1},
      {CFG_COLL_ALLGATHER, CFG_ALGO_HALVING_DOUBLING, 32, 1},
      {CFG_COLL_ALLREDUCE, CFG_ALGO_HIERARCHICAL, 32, 8},
      {CFG_COLL_ALLTOALL, CFG_ALGO_PXN, 32, 1},
      {CFG_COLL_BROADCAST, CFG_ALGO_RING, 32, 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    coll_spec s = {.op = cases[i].op,
                   .algorithm = cases[i].a,
                   .bytes = 64u << 20,
                   .ranks = ranks,
                   .nranks = cases[i].n,
                   .channels = cases[i].k,
                   .chunk = 4u << 20};
    coll_plan p, q;
    sim_error err = {0};
    assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
    assert_int_equal(coll_plan_build(&q, f.t, &s, &err), SIM_OK);
    assert_same_plan(&p, &q);
    double ta = run(&f, &p, false), tf = run(&f, &p, true);
    if (fabs(tf - ta) > 0.05 * ta)
      fail_msg("%s %s n=%u: analytic %.9g s, flow %.9g s", cfg_coll_op_name(s.op),
               cfg_coll_algorithm_name(s.algorithm), s.nranks, ta, tf);
    coll_plan_free(&p);
    coll_plan_free(&q);
  }
  /* With protocols and the in-switch algorithms (fabsim's NCCL model): the
   * fixed delays are the same on both, the transfers agree. */
  static const struct {
    cfg_coll_algorithm a;
    cfg_coll_protocol p;
    uint32_t n;
    uint64_t S;
  } proto[] = {
      {CFG_ALGO_RING, CFG_PROTO_SIMPLE, 32, 1u << 30},
      {CFG_ALGO_RING, CFG_PROTO_LL128, 32, 16u << 20},
      {CFG_ALGO_RING, CFG_PROTO_LL, 32, 1u << 20},
      {CFG_ALGO_TREE, CFG_PROTO_SIMPLE, 32, 64u << 20},
      {CFG_ALGO_TREE, CFG_PROTO_LL, 32, 64u << 10},
      {CFG_ALGO_NVLS, CFG_PROTO_SIMPLE, 8, 1u << 30},
      {CFG_ALGO_COLLNET, CFG_PROTO_SIMPLE, 32, 1u << 30},
      {CFG_ALGO_NVLSTREE, CFG_PROTO_SIMPLE, 32, 1u << 30},
  };
  for (size_t i = 0; i < sizeof proto / sizeof *proto; i++) {
    coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                   .algorithm = proto[i].a,
                   .bytes = proto[i].S,
                   .ranks = ranks,
                   .nranks = proto[i].n,
                   .channels = 8,
                   .chunk = 1u << 20,
                   .protocol = proto[i].p,
                   .gpu = CFG_GPU_H100,
                   .nvls = true,
                   .sharp = true};
    coll_plan p;
    sim_error err = {0};
    assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
    double ta = run(&f, &p, false), tf = run(&f, &p, true);
    if (fabs(tf - ta) > 0.05 * ta)
      fail_msg("%s %s: analytic %.9g s, flow %.9g s", cfg_coll_algorithm_name(s.algorithm),
               cfg_coll_protocol_name(s.protocol), ta, tf);
    coll_plan_free(&p);
  }
  /* MoE dispatch, pipelined: the fabric and NVLink hops overlap on both. */
  coll_moe_spec ms = {.dir = COLL_MOE_DISPATCH,
                      .ranks = ranks,
                      .nranks = 32,
                      .tokens = 1024,
                      .hidden = 7168,
                      .elem_bytes = 1,
                      .experts = 256,
                      .top_k = 8,
                      .node_limit = 2,
                      .chunks = 4};
  coll_plan p, q;
  sim_error err = {0};
  assert_int_equal(coll_moe_build(&p, f.t, &ms, NULL, &err), SIM_OK);
  assert_int_equal(coll_moe_build(&q, f.t, &ms, NULL, &err), SIM_OK);
  assert_same_plan(&p, &q);
  double ta = run(&f, &p, false), tf = run(&f, &p, true);
  if (fabs(tf - ta) > 0.05 * ta) fail_msg("moe dispatch: analytic %.9g s, flow %.9g s", ta, tf);
  coll_plan_free(&p);
  coll_plan_free(&q);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_analytic_vs_flow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
