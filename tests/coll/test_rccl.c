/* RCCL's choices on an AMD GPU (src/coll/rccl.c) against RCCL's published
 * tables (ROCm/rccl 0cbce2a): the MSCCL allpairs AllReduces' ranges
 * (tools/msccl-algorithms/allreduce-allpairs-8n-*-op.xml: minBytes,
 * maxBytes, proto, nchannels, nchunksperloop), tuning_model_5's latencies
 * and bandwidth ratios (src/graph/tuning.cc) as closed forms, and what
 * fabsim's tuner then runs per size on one MI300X node. NVIDIA GPUs keep
 * NCCL's choices (never the allpairs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"
#include "coll/coll_internal.h"
#include "coll/coll_test.h"

static coll_spec spec_of(const uint32_t *ranks, uint32_t n, uint64_t S) {
  return (coll_spec){.op = CFG_COLL_ALLREDUCE,
                     .algorithm = CFG_ALGO_AUTO,
                     .protocol = CFG_PROTO_AUTO,
                     .bytes = S,
                     .ranks = ranks,
                     .nranks = n,
                     .channels = 8,
                     .chunk = 1 << 20,
                     .gpu = CFG_GPU_MI300X};
}

/* The XML files' ranges, for float elements: a size runs MSCCL when its
 * element count is a multiple of the file's chunks per loop. */
static void test_msccl_ranges(void **state) {
  (void)state;
  static const uint32_t r[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  static const struct {
    uint64_t S;
    bool msccl;
    cfg_coll_protocol p;
    uint32_t ch;
  } want[] = {
      {8, false, 0, 0},                       /* 2 floats: not 256 chunks */
      {512, false, 0, 0},                     /* 128 floats */
      {1024, true, CFG_PROTO_LL, 4},          /* ll-32tb: 256 chunks, <= 64 KiB */
      {65536, true, CFG_PROTO_LL, 4},         /* its maxBytes */
      {65536 + 2048, true, CFG_PROTO_LL, 8},  /* ll-64tb: 512 chunks */
      {65536 + 1024, false, 0, 0},            /* 16,640 floats: not 512 chunks */
      {524288 - 2048, true, CFG_PROTO_LL, 8}, /* below 512 KiB */
      {524288, true, CFG_PROTO_SIMPLE, 8},    /* simple: 512 KiB to 16 MiB */
      {16777216, true, CFG_PROTO_SIMPLE, 8},  /* its maxBytes */
      {16777216 + 2048, false, 0, 0},         /* RCCL's tuner beyond */
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    coll_spec s = spec_of(r, 8, want[i].S);
    cfg_coll_protocol p = CFG_PROTO_AUTO;
    uint32_t ch = 0;
    assert_int_equal(coll__rccl_msccl(&s, 1, &p, &ch), want[i].msccl);
    if (want[i].msccl) {
      assert_int_equal(p, want[i].p);
      assert_int_equal(ch, want[i].ch);
    }
  }
  coll_spec s = spec_of(r, 8, 1 << 20);
  cfg_coll_protocol p;
  uint32_t ch;
  assert_false(coll__rccl_msccl(&s, 2, &p, &ch)); /* one node only */
  s.gpu = CFG_GPU_H100;
  assert_false(coll__rccl_msccl(&s, 1, &p, &ch)); /* RCCL's files, not NCCL's */
  s = spec_of(r, 4, 1 << 20);
  assert_false(coll__rccl_msccl(&s, 1, &p, &ch)); /* ngpus="8" */
}

/* tuning_model_5 on one node of 8: latency + S / bw, us, at S -> 0 the
 * latencies baseLat + steps x hwLat: ring LL 12 + 14 x 0.8, ring Simple
 * 17 + 14 x 2.1, tree LL 12 + 2 x 7 x 0.9; tree Simple and LL128 off. The
 * ring LL / Simple crossover: 23.2 us = S (1/0.08 - 1) / (1000 x B x 8/14). */
static void test_tuning_model(void **state) {
  (void)state;
  static const uint32_t r[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  coll_spec s = spec_of(r, 8, 1);
  const double B = 300; /* GB/s of bus bandwidth: any */
  assert_float_equal(coll__rccl_time_us(&s, 1, B, CFG_ALGO_RING, CFG_PROTO_LL), 23.2, 0.01);
  assert_float_equal(coll__rccl_time_us(&s, 1, B, CFG_ALGO_RING, CFG_PROTO_SIMPLE), 46.4, 0.01);
  assert_float_equal(coll__rccl_time_us(&s, 1, B, CFG_ALGO_TREE, CFG_PROTO_LL), 24.6, 0.01);
  assert_true(isinf(coll__rccl_time_us(&s, 1, B, CFG_ALGO_TREE, CFG_PROTO_SIMPLE)));
  assert_true(isinf(coll__rccl_time_us(&s, 1, B, CFG_ALGO_RING, CFG_PROTO_LL128)));
  /* ReduceScatter and AllGather: n - 1 ring steps; Broadcast: n (RCCL's count) */
  s.op = CFG_COLL_ALLGATHER;
  assert_float_equal(coll__rccl_time_us(&s, 1, B, CFG_ALGO_RING, CFG_PROTO_LL), 12 + 7 * 0.8, 0.01);
  assert_true(isinf(coll__rccl_time_us(&s, 1, B, CFG_ALGO_TREE, CFG_PROTO_LL)));
  s.op = CFG_COLL_BROADCAST;
  assert_float_equal(coll__rccl_time_us(&s, 1, B, CFG_ALGO_RING, CFG_PROTO_SIMPLE), 17 + 8 * 2.1,
                     0.01);
  s.op = CFG_COLL_ALLREDUCE;
  /* 1 MiB: the ring's LL at 0.08 x B x 8/14 */
  s.bytes = 1 << 20;
  double bw = B * 0.08 * 8 / 14;
  assert_float_equal(coll__rccl_time_us(&s, 1, B, CFG_ALGO_RING, CFG_PROTO_LL),
                     23.2 + (double)s.bytes / (1000 * bw), 0.01);
  double cross = 23.2 * 1000 * B * 8.0 / 14.0 / (1 / 0.08 - 1);
  cfg_coll_algorithm a;
  cfg_coll_protocol p;
  s.bytes = (uint64_t)(0.9 * cross);
  coll__rccl_pick(&s, 1, B, &a, &p);
  assert_int_equal(a, CFG_ALGO_RING);
  assert_int_equal(p, CFG_PROTO_LL);
  s.bytes = (uint64_t)(1.1 * cross);
  coll__rccl_pick(&s, 1, B, &a, &p);
  assert_int_equal(a, CFG_ALGO_RING);
  assert_int_equal(p, CFG_PROTO_SIMPLE);
  /* a protocol RCCL leaves off on gfx942 stays when the scenario fixes it */
  s.protocol = CFG_PROTO_LL128;
  coll__rccl_pick(&s, 1, B, &a, &p);
  assert_int_equal(p, CFG_PROTO_LL128);
  s.protocol = CFG_PROTO_AUTO;
  /* channels: 56 lowered while S < nc x 256 x threshold (LL ring 8 x 8) */
  s.bytes = 10 * 256 * 64;
  assert_int_equal(coll__rccl_channels(&s, CFG_ALGO_RING, CFG_PROTO_LL), 2); /* 10 of 56 */
  s.bytes = 1ull << 30;
  assert_int_equal(coll__rccl_channels(&s, CFG_ALGO_RING, CFG_PROTO_SIMPLE), 8);
}

/* fabsim's tuner on one MI300X node per size: what RCCL runs, with RCCL's
 * latencies: 13.6 us at 1 KiB (the allpairs' LL launch 12 us and its two
 * xGMI hops of 0.8 us), the ring's 12 + 14 x 0.8 below it. */
static void test_mi300x_node(void **state) {
  (void)state;
  const char *sets[] = {"cluster.gpu=MI300X", "cluster.nodes=1"};
  fixture f;
  load(&f, sets, 2);
  uint32_t r[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  static const struct {
    uint64_t S;
    cfg_coll_algorithm a;
    cfg_coll_protocol p;
  } want[] = {
      {512, CFG_ALGO_RING, CFG_PROTO_LL},          {1024, CFG_ALGO_PAIRWISE, CFG_PROTO_LL},
      {262144, CFG_ALGO_PAIRWISE, CFG_PROTO_LL},   {4 << 20, CFG_ALGO_PAIRWISE, CFG_PROTO_SIMPLE},
      {32 << 20, CFG_ALGO_RING, CFG_PROTO_SIMPLE}, {1ull << 34, CFG_ALGO_RING, CFG_PROTO_SIMPLE}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    coll_spec s = coll_spec_from_cfg(&f.cfg, CFG_COLL_ALLREDUCE, want[i].S, r, 8);
    assert_ptr_equal(s.latency, coll__rccl_latency());
    coll_plan p;
    sim_error err = {0};
    assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
    assert_int_equal(p.algorithm, want[i].a);
    assert_int_equal(p.protocol, want[i].p);
    double t = coll_test_run(&f, &p, NULL);
    if (want[i].S == 1024) assert_float_equal(t * 1e6, 13.6, 0.1);
    if (want[i].S == 512) assert_float_equal(t * 1e6, 23.2, 0.1);
    coll_plan_free(&p);
  }
  unload(&f);
  /* a latency the scenario sets is kept */
  const char *own[] = {"cluster.gpu=MI300X", "cluster.nodes=1",
                       "workload.collective.latency.ll.launch=9us"};
  load(&f, own, 3);
  coll_spec s = coll_spec_from_cfg(&f.cfg, CFG_COLL_ALLREDUCE, 1024, r, 8);
  assert_ptr_equal(s.latency, &f.cfg.workload.collective.latency);
  unload(&f);
  /* NVIDIA: NCCL's model, never the allpairs */
  const char *h100[] = {"cluster.gpu=H100", "cluster.nodes=1"};
  load(&f, h100, 2);
  for (uint64_t S = 1024; S <= (64u << 20); S *= 4) {
    coll_spec h = coll_spec_from_cfg(&f.cfg, CFG_COLL_ALLREDUCE, S, r, 8);
    assert_ptr_equal(h.latency, &f.cfg.workload.collective.latency);
    cfg_coll_algorithm a;
    cfg_coll_protocol p;
    uint32_t k;
    coll_tune(f.t, &h, &a, &p, &k, NULL);
    assert_int_not_equal(a, CFG_ALGO_PAIRWISE);
  }
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_msccl_ranges),
      cmocka_unit_test(test_tuning_model),
      cmocka_unit_test(test_mi300x_node),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
