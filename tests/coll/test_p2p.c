/* The end-to-end latency of a point-to-point transfer as the sum of its
 * parts (coll_p2p, fabsim/coll.h): start + routed path + bytes at the
 * path's bottleneck + finish, the same parts charged by every fidelity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"
#include "coll/coll_test.h"

typedef enum { ANALYTIC, FLOW, PACKET } fid;

/* The pair plan GPU 0 -> last GPU of bytes, with or without its parts. */
static void pair_plan(coll_plan *p, const fixture *f, uint64_t bytes, bool parts) {
  coll_p2p p2p = coll_p2p_of(&f->cfg);
  coll_traffic_spec s = {
      .pattern = CFG_TRAFFIC_PAIR, .bytes = bytes, .qps = 1, .p2p = parts ? &p2p : NULL};
  sim_error err = {0};
  assert_int_equal(coll_traffic_build(p, f->t, &s, &err), SIM_OK);
}

static simtime_ps run(const fixture *f, const coll_plan *p, fid which) {
  return coll_test_run_on(f, p, which == ANALYTIC ? 0 : which == FLOW ? 1 : 2);
}

/* The closed form of the pair: start + path latency + bytes at the path's
 * bottleneck + finish. */
static simtime_ps closed_form(const fixture *f, uint64_t bytes) {
  uint32_t dst = topo_gpu_count(f->t) - 1;
  topo_path path;
  assert_int_equal(topo_route(f->t, 0, dst, sim_hash_u64(dst), &path), SIM_OK);
  coll_p2p p2p = coll_p2p_of(&f->cfg);
  simtime_ps start, finish;
  coll_p2p_parts(f->t, &p2p, 0, dst, &start, &finish);
  return start + topo_path_latency(f->t, &path) +
         sim_serialization_ps(bytes, topo_path_bottleneck(f->t, &path)) + finish;
}

/* Which parts a transfer gets: NVLink start only inside a node, the NIC's
 * start and finish across nodes; a traffic plan's phase waits the largest. */
static void test_parts(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "cluster.scale_up.start=3us", "cluster.nic.start=800ns",
                        "cluster.nic.finish=500ns"};
  fixture f;
  load(&f, sets, 4);
  coll_p2p p2p = coll_p2p_of(&f.cfg);
  assert_int_equal(p2p.nvlink_start, 3000000);
  assert_int_equal(p2p.nic_start, 800000);
  assert_int_equal(p2p.nic_finish, 500000);
  simtime_ps s, fin;
  coll_p2p_parts(f.t, &p2p, 0, 7, &s, &fin);
  assert_int_equal(s, 3000000);
  assert_int_equal(fin, 0);
  coll_p2p_parts(f.t, &p2p, 0, 8, &s, &fin);
  assert_int_equal(s, 800000);
  assert_int_equal(fin, 500000);
  /* a permutation mixes both kinds in its one phase: the larger of each */
  coll_traffic_spec spec = {
      .pattern = CFG_TRAFFIC_PERMUTATION, .bytes = 64, .qps = 1, .seed = 1, .p2p = &p2p};
  coll_plan p;
  sim_error err = {0};
  assert_int_equal(coll_traffic_build(&p, f.t, &spec, &err), SIM_OK);
  assert_int_equal(p.phases[0].start, 3000000);
  assert_int_equal(p.phases[0].fixed, 500000);
  coll_plan_free(&p);
  /* without parts: nothing added (the plan as before) */
  spec.p2p = NULL;
  assert_int_equal(coll_traffic_build(&p, f.t, &spec, &err), SIM_OK);
  assert_int_equal(p.phases[0].start, 0);
  assert_int_equal(p.phases[0].fixed, 0);
  coll_plan_free(&p);
  unload(&f);
}

/* A 64-byte pair and a 1 GiB pair on the analytic and flow fidelities equal
 * the closed form exactly: over NVLink, through one InfiniBand and RoCE
 * leaf, and across leaves (8 nodes: GPU 0's leaf holds 4 nodes). */
static void test_pair_closed_form(void **state) {
  (void)state;
  static const char *const shapes[][2] = {
      {"cluster.nodes=1", "fabric.transport=infiniband"},
      {"cluster.nodes=2", "fabric.transport=infiniband"},
      {"cluster.nodes=8", "fabric.transport=infiniband"},
      {"cluster.nodes=2", "fabric.transport=roce"},
      {"cluster.nodes=8", "fabric.transport=roce"},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    fixture f;
    load(&f, shapes[i], 2);
    for (int big = 0; big < 2; big++) {
      uint64_t bytes = big ? 1ull << 30 : 64;
      coll_plan p;
      pair_plan(&p, &f, bytes, true);
      simtime_ps want = closed_form(&f, bytes);
      assert_int_equal(run(&f, &p, ANALYTIC), want);
      assert_int_equal(run(&f, &p, FLOW), want);
      coll_plan_free(&p);
    }
    unload(&f);
  }
}

/* The parts are charged alike by every fidelity: with them the pair takes
 * exactly start + finish longer than without them, on analytic, flow and
 * packet, staggered or not. The packet fidelity's transfer ends when the
 * sender has its last ACK, one return path after the data landed (what
 * differs from the other two, with and without the parts: stated here). */
static void test_parts_alike_in_every_fidelity(void **state) {
  (void)state;
  static const char *const shapes[][3] = {
      {"cluster.nodes=1", "fabric.transport=infiniband", "simulation.fidelity=packet"},
      {"cluster.nodes=2", "fabric.transport=infiniband", "simulation.fidelity=packet"},
      {"cluster.nodes=8", "fabric.transport=roce", "simulation.fidelity=packet"},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    fixture f;
    load(&f, shapes[i], 3);
    uint32_t dst = topo_gpu_count(f.t) - 1;
    coll_p2p p2p = coll_p2p_of(&f.cfg);
    simtime_ps start, finish;
    coll_p2p_parts(f.t, &p2p, 0, dst, &start, &finish);
    assert_true(start > 0);
    coll_plan with, without;
    pair_plan(&with, &f, 64, true);
    pair_plan(&without, &f, 64, false);
    for (fid w = ANALYTIC; w <= PACKET; w++)
      assert_int_equal(run(&f, &with, w) - run(&f, &without, w), start + finish);
    /* staggered: the same parts */
    with.stagger = without.stagger = 1000;
    for (fid w = ANALYTIC; w <= PACKET; w++)
      assert_int_equal(run(&f, &with, w) - run(&f, &without, w), start + finish);
    /* packet vs analytic: the ACK's way back, at least the path again */
    with.stagger = 0;
    topo_path path;
    assert_int_equal(topo_route(f.t, 0, dst, sim_hash_u64(dst), &path), SIM_OK);
    simtime_ps a = run(&f, &with, ANALYTIC), pk = run(&f, &with, PACKET);
    assert_true(pk >= a + topo_path_latency(f.t, &path));
    assert_true(pk <= a + topo_path_latency(f.t, &path) + 2 * f.cfg.fabric.link_latency);
    coll_plan_free(&with);
    coll_plan_free(&without);
    unload(&f);
  }
}

/* Collectives are not charged the parts: NCCL's launch and per-hop
 * latencies (workload.collective.latency.*) already hold them. The same
 * AllReduce, AllGather and AllToAll take the same time whatever the parts. */
static double collective_s(const char *start, const char *finish, cfg_coll_op op, uint64_t bytes) {
  char s1[64], s2[64], s3[64];
  snprintf(s1, sizeof s1, "cluster.scale_up.start=%s", start);
  snprintf(s2, sizeof s2, "cluster.nic.start=%s", start);
  snprintf(s3, sizeof s3, "cluster.nic.finish=%s", finish);
  const char *sets[] = {"cluster.nodes=4", s1, s2, s3};
  fixture f;
  load(&f, sets, 4);
  uint32_t ranks[32];
  for (uint32_t i = 0; i < 32; i++) ranks[i] = i;
  coll_spec spec = {.op = op,
                    .algorithm = CFG_ALGO_AUTO,
                    .protocol = CFG_PROTO_AUTO,
                    .bytes = bytes,
                    .ranks = ranks,
                    .nranks = 32,
                    .channels = 8,
                    .chunk = 1 << 20,
                    .latency = &f.cfg.workload.collective.latency};
  coll_spec_set_hw(&spec, &f.cfg);
  coll_plan p;
  sim_error err = {0};
  assert_int_equal(coll_plan_build(&p, f.t, &spec, &err), SIM_OK);
  for (size_t i = 0; i < p.nphases; i++) assert_int_equal(p.phases[i].start, 0);
  double t = sim_ps_to_s(run(&f, &p, ANALYTIC));
  coll_plan_free(&p);
  unload(&f);
  return t;
}

static void test_collectives_not_charged(void **state) {
  (void)state;
  static const cfg_coll_op ops[] = {CFG_COLL_ALLREDUCE, CFG_COLL_ALLGATHER, CFG_COLL_ALLTOALL};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    for (uint64_t bytes = 8; bytes <= 64ull << 20; bytes <<= 13) {
      double a = collective_s("0ns", "0ns", ops[i], bytes);
      assert_true(a > 0);
      assert_true(a == collective_s("50us", "20us", ops[i], bytes));
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parts),
      cmocka_unit_test(test_pair_closed_form),
      cmocka_unit_test(test_parts_alike_in_every_fidelity),
      cmocka_unit_test(test_collectives_not_charged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
