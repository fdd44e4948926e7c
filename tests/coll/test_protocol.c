/* Protocols, the tuner and rail-aligned rings (src/coll/tune.c, ring.c) on
 * the analytic backend against closed forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"
#include "coll/coll_test.h"
#include "coll/coll_internal.h"

enum { MAXR = 64 };

static void build(const fixture *f, coll_plan *p, cfg_coll_op op, cfg_coll_algorithm a,
                  cfg_coll_protocol proto, uint64_t S, uint32_t n, uint32_t k) {
  uint32_t ranks[MAXR];
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  coll_spec s = {.op = op,
                 .algorithm = a,
                 .bytes = S,
                 .ranks = ranks,
                 .nranks = n,
                 .channels = k,
                 .chunk = 1 << 20,
                 .protocol = proto};
  sim_error err = {0};
  if (coll_plan_build(p, f->t, &s, &err) != SIM_OK) fail_msg("%s", err.msg);
}

static simtime_ps path_latency(const fixture *f, uint32_t a, uint32_t b) {
  topo_path p;
  assert_int_equal(topo_route(f->t, a, b, 0, &p), SIM_OK);
  return topo_path_latency(f->t, &p);
}

static double ceil_div(double a, double b) { return ceil(a / b); }

/* One node, uniform NVLink: ring AllReduce with protocol p, k channels,
 * N = 2(n-1) steps of chunk c = ceil(S/(n k)) data, w c wire bytes:
 *   t = launch + N (alpha + t_data) + N (t_step - t_data)
 *       + max(0, N max(0, hop - alpha) - N (1 - 1/slices) t_step)
 * t_data = k w c / B, t_step = max(t_data, c / cap): the step's transfer at
 * the protocol's per-channel cap (H100, one node: LL 141 GB/s over the k
 * channels, LL128 36.7 GB/s a channel, Simple none), and the hop latency
 * hidden behind all but one slice of each step (Simple 2 slices, LL c/4 KiB,
 * LL128 c/9600 B). Busbw counts the data. */
static void test_protocol_closed_forms(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  const uint32_t n = 8, k = 8;
  double B =
      (double)fx_achievable(f.cfg.cluster.scale_up.bandwidth, f.cfg.cluster.scale_up.efficiency) /
      8;
  simtime_ps alpha = path_latency(&f, 0, 1);
  static const cfg_coll_protocol ps[] = {CFG_PROTO_LL, CFG_PROTO_LL128, CFG_PROTO_SIMPLE};
  static const uint64_t sizes[] = {4096, 1u << 20, 256u << 20};
  for (size_t i = 0; i < 3; i++)
    for (size_t j = 0; j < 3; j++) {
      coll_plan p;
      build(&f, &p, CFG_COLL_ALLREDUCE, CFG_ALGO_RING, ps[i], sizes[j], n, k);
      assert_int_equal(p.protocol, ps[i]);
      coll_protocol_params q = coll_protocol_params_of(NULL, CFG_ALGO_RING, ps[i]);
      double chunk = ceil_div((double)sizes[j], (double)n * k);
      double wire = ceil_div(chunk * q.wire_num, q.wire_den);
      simtime_ps hop = (simtime_ps)llround(q.hop_nvlink_us * 1e6);
      double steps = 2.0 * (n - 1);
      double t_data = k * wire / B;
      double cap = ps[i] == CFG_PROTO_LL ? 141e9 / k : ps[i] == CFG_PROTO_LL128 ? 36.7e9 : INFINITY;
      double t_step = fmax(t_data, chunk / cap);
      double slices = ps[i] == CFG_PROTO_SIMPLE
                          ? 2
                          : fmax(1, chunk / (ps[i] == CFG_PROTO_LL ? 4096.0 : 9600.0));
      double h = steps * sim_ps_to_s(hop > alpha ? hop - alpha : 0);
      double want = q.launch_us * 1e-6 + steps * (sim_ps_to_s(alpha) + t_data) +
                    steps * (t_step - t_data) + fmax(0, h - steps * (1 - 1 / slices) * t_step);
      coll_result r;
      double got = coll_test_run(&f, &p, &r);
      if (fabs(got - want) > 1e-9 * want + 4e-12 * steps)
        fail_msg("protocol %s, %llu bytes: got %.12g s, want %.12g s",
                 cfg_coll_protocol_name(ps[i]), (unsigned long long)sizes[j], got, want);
      /* nccl-tests' definitions, on the data (not the wire) bytes */
      assert_true(fabs(r.algbw_GBps - (double)sizes[j] / got / 1e9) < 1e-9 * r.algbw_GBps);
      assert_true(fabs(r.busbw_GBps - r.algbw_GBps * 2.0 * (n - 1) / n) < 1e-9 * r.busbw_GBps);
      /* the tuner's estimate is the same closed form */
      uint32_t ranks[MAXR];
      for (uint32_t g = 0; g < n; g++) ranks[g] = g;
      coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                     .algorithm = CFG_ALGO_RING,
                     .bytes = sizes[j],
                     .ranks = ranks,
                     .nranks = n,
                     .channels = p.channels,
                     .chunk = 1 << 20,
                     .protocol = ps[i]};
      cfg_coll_algorithm a;
      cfg_coll_protocol pp;
      uint32_t kk;
      double est;
      coll_tune(f.t, &s, &a, &pp, &kk, &est);
      assert_int_equal(pp, ps[i]);
      coll_plan_free(&p);
      if (kk == k && fabs(est - want) > 1e-9 * want)
        fail_msg("estimate %.12g, closed form %.12g", est, want);
    }
  /* none: the ideal transfers, no launch, no fixed delay, no protocol bytes */
  coll_plan p;
  build(&f, &p, CFG_COLL_ALLREDUCE, CFG_ALGO_RING, CFG_PROTO_NONE, 1u << 20, n, k);
  assert_int_equal(p.launch, 0);
  assert_int_equal(p.phases[0].fixed, 0);
  assert_int_equal(coll_plan_bytes(&p),
                   2ull * (n - 1) * n * k * (uint64_t)ceil_div(1u << 20, n * k));
  coll_plan_free(&p);
  unload(&f);
}

/* Across nodes the analytic run equals the tuner's closed form (rail-aligned
 * rings, NIC-bound steps, NCCL's count of network hops), for every protocol. */
static void test_multinode_estimate(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4", "fabric.routing=static"};
  fixture f;
  load(&f, sets, 2);
  uint32_t ranks[MAXR], n = 32;
  for (uint32_t g = 0; g < n; g++) ranks[g] = g;
  static const cfg_coll_protocol ps[] = {CFG_PROTO_LL, CFG_PROTO_LL128, CFG_PROTO_SIMPLE};
  for (size_t i = 0; i < 3; i++) {
    coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                   .algorithm = CFG_ALGO_RING,
                   .bytes = 64u << 20,
                   .ranks = ranks,
                   .nranks = n,
                   .channels = 8,
                   .chunk = 1 << 20,
                   .protocol = ps[i]};
    cfg_coll_algorithm a;
    cfg_coll_protocol pp;
    uint32_t k;
    double est;
    coll_tune(f.t, &s, &a, &pp, &k, &est);
    assert_int_equal(k, 8);
    coll_plan p;
    sim_error err = {0};
    assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
    double got = coll_test_run(&f, &p, NULL);
    if (fabs(got - est) > 1e-6 * est)
      fail_msg("%s: simulated %.9g s, estimate %.9g s", cfg_coll_protocol_name(ps[i]), got, est);
    coll_plan_free(&p);
  }
  unload(&f);
}

/* The tuner on one DGX H100, ring asked for: auto picks the protocol whose closed form is
 * fastest; going up in size it moves LL -> LL128 -> Simple exactly once
 * each, and at every size its pick is no slower than the others. Channels
 * follow NCCL's rule: fewer while S < channels x threads x bytes per thread
 * (Simple: 512 threads x 64 B). */
static void test_tuner_crossovers(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[8];
  for (uint32_t g = 0; g < 8; g++) ranks[g] = g;
  coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                 .algorithm = CFG_ALGO_RING,
                 .ranks = ranks,
                 .nranks = 8,
                 .channels = 8,
                 .chunk = 1 << 20,
                 .protocol = CFG_PROTO_AUTO};
  cfg_coll_protocol last = CFG_PROTO_LL;
  int switches = 0;
  for (uint64_t S = 8; S <= (4ull << 30); S *= 2) {
    s.bytes = S;
    cfg_coll_algorithm a;
    cfg_coll_protocol p;
    uint32_t k;
    double est;
    coll_tune(f.t, &s, &a, &p, &k, &est);
    assert_int_equal(a, CFG_ALGO_RING);
    if (S == 8) assert_int_equal(p, CFG_PROTO_LL);
    if (S == (4ull << 30)) assert_int_equal(p, CFG_PROTO_SIMPLE);
    assert_true(p >= last); /* LL < LL128 < SIMPLE in the enum */
    switches += p != last;
    last = p;
    static const cfg_coll_protocol all[] = {CFG_PROTO_LL, CFG_PROTO_LL128, CFG_PROTO_SIMPLE};
    for (int i = 0; i < 3; i++) {
      coll_spec t1 = s;
      t1.protocol = all[i];
      cfg_coll_algorithm a1;
      cfg_coll_protocol p1;
      uint32_t k1;
      double e1;
      coll_tune(f.t, &t1, &a1, &p1, &k1, &e1);
      assert_true(est <= e1);
    }
    if (p == CFG_PROTO_SIMPLE) {
      uint32_t want = 8;
      while (want > 1 && S < want * 512ull * 64) want--;
      assert_int_equal(k, want);
    }
  }
  assert_int_equal(switches, 2);
  /* the plan reports what the tuner picked */
  coll_plan p;
  build(&f, &p, CFG_COLL_ALLREDUCE, CFG_ALGO_RING, CFG_PROTO_AUTO, 64 * 1024, 8, 8);
  assert_int_equal(p.algorithm, CFG_ALGO_RING);
  assert_true(p.protocol != CFG_PROTO_AUTO && p.protocol != CFG_PROTO_NONE);
  assert_true(p.channels >= 1 && p.channels <= 8);
  coll_plan_free(&p);
  /* alltoall: pairwise in one node, pxn across nodes */
  build(&f, &p, CFG_COLL_ALLTOALL, CFG_ALGO_AUTO, CFG_PROTO_AUTO, 1 << 20, 8, 8);
  assert_int_equal(p.algorithm, CFG_ALGO_PAIRWISE);
  coll_plan_free(&p);
  unload(&f);
  const char *two[] = {"cluster.nodes=2"};
  load(&f, two, 1);
  build(&f, &p, CFG_COLL_ALLTOALL, CFG_ALGO_AUTO, CFG_PROTO_AUTO, 1 << 20, 16, 8);
  assert_int_equal(p.algorithm, CFG_ALGO_PXN);
  coll_plan_free(&p);
  unload(&f);
}

/* One DGX H100 without NVLS, 8 B AllReduce: NCCL's tuning model (tuning.cc)
 * gives the ring LL 6.6 + 14 x 0.6 = 15.0 us and the tree, a chain of the
 * node's GPUs, 6.8 + 2 x 7 x 0.6 = 15.2 us, and picks the ring. fabsim's
 * tree is that chain now (14 NVLink steps of 0.6 us each: the 0.5 us
 * NVSwitch path and 0.1 above it), and auto picks the ring as NCCL does.
 * With the rank-level binary tree (6 steps) the tree took 10.4 us and won. */
static void test_tuner_one_node_small(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[8];
  for (uint32_t g = 0; g < 8; g++) ranks[g] = g;
  coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                 .algorithm = CFG_ALGO_AUTO,
                 .bytes = 8,
                 .ranks = ranks,
                 .nranks = 8,
                 .channels = 8,
                 .chunk = 1 << 20,
                 .protocol = CFG_PROTO_AUTO};
  double tree = coll__tree_estimate_s(f.t, &s, CFG_PROTO_LL, 1, false);
  /* + each step's few bytes, the LL tree's at 1/3.8 of the NVLink rate
   * (tune.c, tree_limits): 1.2 ns in all */
  assert_true(fabs(tree - 15.2e-6) < 2e-9);
  cfg_coll_algorithm a;
  cfg_coll_protocol p;
  uint32_t k;
  double est;
  coll_tune(f.t, &s, &a, &p, &k, &est);
  assert_int_equal(a, CFG_ALGO_RING);
  assert_int_equal(p, CFG_PROTO_LL);
  assert_true(fabs(est - 15.0e-6) < 1e-9);
  unload(&f);
}

static uint32_t rail_of(const fixture *f, uint32_t gpu) {
  return topo_gpu_nic(f->t, gpu) % (topo_nic_count(f->t) / topo_node_count(f->t));
}

/* Rings stay on their rail: every inter-node transfer of a ring joins two
 * NICs of one rail (on fat-tree, rail-optimized and multi-plane fabrics),
 * and with one channel per NIC every NIC sends exactly one ring's hop (also
 * with 4 NICs for 8 GPUs). */
static void test_rail_aligned_rings(void **state) {
  (void)state;
  static const char *const scen[][3] = {
      {"cluster.nodes=4", "fabric.topology=fat-tree", "cluster.nic.per_node=8"},
      {"cluster.nodes=5", "fabric.topology=rail-optimized", "cluster.nic.per_node=8"},
      {"cluster.nodes=3", "fabric.topology=multi-plane", "cluster.nic.per_node=8"},
      {"cluster.nodes=4", "fabric.topology=fat-tree", "cluster.nic.per_node=4"},
  };
  for (size_t sc = 0; sc < 4; sc++) {
    fixture f;
    load(&f, scen[sc], 3);
    uint32_t m = topo_node_count(f.t), n = m * 8, k = topo_nic_count(f.t) / m;
    static const cfg_coll_op ops[] = {CFG_COLL_ALLREDUCE, CFG_COLL_ALLGATHER};
    for (int o = 0; o < 2; o++) {
      coll_plan p;
      build(&f, &p, ops[o], CFG_ALGO_RING, CFG_PROTO_SIMPLE, 64u << 20, n, k);
      uint32_t sent[MAXR] = {0}, got[MAXR] = {0}, inter = 0;
      for (size_t j = 0; j < p.phases[0].n; j++) {
        const be_xfer *x = &p.phases[0].x[j];
        if (topo_gpu_node(f.t, x->src_gpu) == topo_gpu_node(f.t, x->dst_gpu)) continue;
        assert_int_equal(rail_of(&f, x->src_gpu), rail_of(&f, x->dst_gpu));
        sent[topo_gpu_nic(f.t, x->src_gpu)]++;
        got[topo_gpu_nic(f.t, x->dst_gpu)]++;
        inter++;
      }
      assert_int_equal(inter, k * m); /* every ring crosses every node boundary once */
      for (uint32_t i = 0; i < topo_nic_count(f.t); i++) {
        assert_int_equal(sent[i], 1);
        assert_int_equal(got[i], 1);
      }
      assert_true(coll_test_run(&f, &p, NULL) > 0);
      coll_plan_free(&p);
    }
    unload(&f);
  }
}

/* The tree's time from its shape (tree_cost.c, what the tuner uses above
 * 4,096 GPUs, where building the plan per candidate is too slow) equals the
 * estimate on the built plan: even and odd node counts (tree B mirrored or
 * shifted), 8, 2 and 1 GPUs per node, 8 and 2 NICs, 1 to 16 channels, 8 B to
 * 4 GiB (one chunk to thousands), each protocol. */
static void test_tree_shape_estimate(void **state) {
  (void)state;
  static const char *const shapes[][3] = {
      {"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.nic.per_node=8"},
      {"cluster.nodes=7", "cluster.gpus_per_node=8", "cluster.nic.per_node=8"},
      {"cluster.nodes=64", "cluster.gpus_per_node=8", "cluster.nic.per_node=8"},
      {"cluster.nodes=13", "cluster.gpus_per_node=8", "cluster.nic.per_node=2"},
      {"cluster.nodes=33", "cluster.gpus_per_node=2", "cluster.nic.per_node=2"},
      {"cluster.nodes=40", "cluster.gpus_per_node=1", "cluster.nic.per_node=1"}};
  static const uint32_t chans[] = {1, 3, 8, 16};
  static const cfg_coll_protocol all[] = {CFG_PROTO_LL, CFG_PROTO_LL128, CFG_PROTO_SIMPLE};
  double worst = 0;
  for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
    fixture f;
    load(&f, shapes[si], 3);
    uint32_t n = topo_gpu_count(f.t);
    uint32_t *ranks = sim_malloc(n * sizeof *ranks);
    for (uint32_t i = 0; i < n; i++) ranks[i] = i;
    coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                   .algorithm = CFG_ALGO_TREE,
                   .ranks = ranks,
                   .nranks = n,
                   .chunk = 1 << 20,
                   .gpu = CFG_GPU_H100};
    for (size_t ci = 0; ci < sizeof chans / sizeof *chans; ci++)
      for (uint64_t S = 8; S <= (4ull << 30); S *= 32) {
        s.bytes = S;
        s.channels = chans[ci];
        for (int i = 0; i < 3; i++) {
          double plan = coll__tree_estimate_s(f.t, &s, all[i], chans[ci], false);
          double shape = coll__tree_estimate_s(f.t, &s, all[i], chans[ci], true);
          double r = fabs(shape / plan - 1);
          if (r > worst) worst = r;
          if (r > 1e-9)
            fail_msg("%s %s %s, %u channels, %llu B, protocol %d: plan %.6f us, shape %.6f us",
                     shapes[si][0], shapes[si][1], shapes[si][2], chans[ci], (unsigned long long)S,
                     i, plan * 1e6, shape * 1e6);
        }
      }
    sim_free(ranks);
    unload(&f);
  }
  print_message("  largest relative difference %.2g\n", worst);
}

/* Above 4,096 GPUs the tuner weighs the tree from its shape: 16,384 H100
 * (2,048 nodes of 8) get the tree for a 1 GiB AllReduce, as NCCL's tuner
 * picks it at that scale, not a ring of 2 x 16,383 steps. */
static void test_tree_at_scale(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2048", "fabric.tiers=3"};
  fixture f;
  load(&f, sets, 2);
  uint32_t n = topo_gpu_count(f.t);
  uint32_t *ranks = sim_malloc(n * sizeof *ranks);
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                 .algorithm = CFG_ALGO_AUTO,
                 .bytes = 1ull << 30,
                 .ranks = ranks,
                 .nranks = n,
                 .channels = 8,
                 .chunk = 1 << 20,
                 .protocol = CFG_PROTO_AUTO,
                 .gpu = CFG_GPU_H100};
  cfg_coll_algorithm a;
  cfg_coll_protocol p;
  uint32_t k;
  double est;
  coll_tune(f.t, &s, &a, &p, &k, &est);
  assert_int_equal(a, CFG_ALGO_TREE);
  s.algorithm = CFG_ALGO_RING;
  double ring;
  coll_tune(f.t, &s, &a, &p, &k, &ring);
  print_message("  16,384 GPUs, 1 GiB: tree %.3f ms, ring %.3f ms\n", est * 1e3, ring * 1e3);
  assert_true(est < ring);
  sim_free(ranks);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tree_shape_estimate),   cmocka_unit_test(test_tree_at_scale),
      cmocka_unit_test(test_protocol_closed_forms), cmocka_unit_test(test_multinode_estimate),
      cmocka_unit_test(test_tuner_crossovers),      cmocka_unit_test(test_tuner_one_node_small),
      cmocka_unit_test(test_rail_aligned_rings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
