/* NCCL's pipeline inside one operation (src/coll/nccl.c, sharp.c, tune.c):
 * channels by size against NCCL's rule, the tree's per-channel caps and the
 * ring/tree choice on two nodes against NCCL's tuning model, NVLSTree's
 * cap, NVLSTree paying its path per hop (issue 27, defect 11), two NICs a
 * GPU, and the three fidelities on the curve's shape. The closed forms of
 * NVLS's and NVLSTree's fill are in test_sharp.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"
#include "coll/coll_internal.h"
#include "coll/coll_test.h"

static coll_spec spec_of(const fixture *f, const uint32_t *ranks, uint32_t n, cfg_coll_algorithm a,
                         cfg_coll_protocol p, uint64_t S) {
  return coll_test_allreduce(f, ranks, n, a, p, S);
}

static uint32_t *iota(uint32_t n) {
  uint32_t *r = sim_malloc(n * sizeof *r);
  for (uint32_t i = 0; i < n; i++) r[i] = i;
  return r;
}

/* Runs spec on the analytic fidelity: its time; *res its figures. */
static double run_spec(const fixture *f, const coll_spec *s, coll_result *res) {
  coll_plan p;
  sim_error err = {0};
  if (coll_plan_build(&p, f->t, s, &err) != SIM_OK) fail_msg("%s", err.msg);
  double t = coll_test_run(f, &p, res);
  coll_plan_free(&p);
  return t;
}

/* NCCL's channels by size (enqueue.cc topoGetAlgoInfo): from comm->nChannels
 * compute channels, nc-- while nBytes < nc x nt x threadThreshold (nt:
 * NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640,
 * NCCL_SIMPLE_MAX_NTHREADS 512; threadThreshold NCCL_LL_THREAD_THRESHOLD 8
 * (x nRanks for the ring's LL), NCCL_LL128_THREAD_THRESHOLD 8,
 * NCCL_SIMPLE_THREAD_THRESHOLD 64). comm->nChannels is twice the graph's
 * channels (connect.cc), one graph channel a NIC: 16 on an 8-NIC node,
 * compute channel j on NIC j mod 8. fabsim runs the graph channels, so nc
 * <= 8 compute channels are nc of its channels, and 8 < nc < 16 put two on
 * nc - 8 NICs: ceil(nc/2) channels of the busiest NIC's share. Fails with
 * the rule counted from fabsim's 8 channels (before: 8 channels from
 * 8 x threads x threshold, where NCCL has 8 < nc < 16). */
static void test_channels_by_size(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  uint32_t n = 16, *ranks = iota(n);
  static const cfg_coll_algorithm algo[2] = {CFG_ALGO_RING, CFG_ALGO_TREE};
  static const cfg_coll_protocol proto[3] = {CFG_PROTO_LL, CFG_PROTO_LL128, CFG_PROTO_SIMPLE};
  static const uint64_t nt[3] = {512, 640, 512}, thr[3] = {8, 8, 64};
  uint32_t halves = 0;
  for (int a = 0; a < 2; a++)
    for (int p = 0; p < 3; p++)
      for (uint64_t S = 1024; S <= (64u << 20); S += S / 4) {
        uint64_t unit = nt[p] * thr[p] * (a == 0 && p == 0 ? n : 1), nc = 16;
        while (nc > 1 && S < nc * unit) nc--;
        uint32_t want = (uint32_t)(nc <= 8 ? nc : (nc + 1) / 2);
        coll_spec s = spec_of(&f, ranks, n, algo[a], proto[p], S);
        cfg_coll_algorithm ga;
        cfg_coll_protocol gp;
        uint32_t k;
        double est;
        coll_tune(f.t, &s, &ga, &gp, &k, &est);
        if (k != want)
          fail_msg("%s %s, %llu B: %u channels, NCCL's rule %u (%llu compute channels)",
                   cfg_coll_algorithm_name(algo[a]), cfg_coll_protocol_name(proto[p]),
                   (unsigned long long)S, k, want, (unsigned long long)nc);
        halves += nc > 8 && nc < 16;
      }
  assert_true(halves > 0); /* the sweep meets the shared-NIC range */
  sim_free(ranks);
  unload(&f);
}

/* NCCL's pick between the ring and the tree (Simple or LL128) for a large
 * AllReduce on two nodes of g GPUs, graph ch channels of bw GB/s
 * (tuning.cc: nNodes <= 2 uses bwIntra; ring busBw ch bw, LL128 x 0.92
 * within ch perChMaxRingLL128Bws; tree min(0.92 ch bw, ch perChMaxTreeBws),
 * LL128 x 120/128 within ch perChMaxTreeLL128Bws; algBw ring busBw n /
 * (2(n-1)), tree busBw / 2). Latency is negligible at these sizes. 1: ring. */
static int nccl_prefers_ring(bool a100, uint32_t n, double ch, double bw) {
  double tree_cap = a100 ? 23.6 : 41.4, tree_ll128 = a100 ? 20.0 : 36.7,
         ring_ll128 = a100 ? 20.0 : 36.7;
  double ring = fmax(ch * bw, fmin(ch * bw * .92, ch * ring_ll128)) * n / (2.0 * (n - 1));
  double tree_s = fmin(ch * bw * .92, ch * tree_cap);
  double tree = fmax(tree_s, fmin(tree_s * 120 / 128, ch * tree_ll128)) / 2;
  return ring > tree;
}

/* Two nodes, NVLS off, 256 MiB to 4 GiB: fabsim picks what NCCL's model
 * picks between the ring and the tree, at the graph NCCL's search gives
 * 8 NICs (8 channels of 24 GB/s for HDR on A100, 40-48 GB/s for NDR on
 * H100: one a NIC); and the tree's busbw is at most NCCL's cap,
 * 2(n-1)/n x channels x perChMaxTreeBws / 2. Fails without the caps: A100
 * took the tree (254 GB/s busbw at 8 GiB, above the NICs' 184). */
static void test_ring_or_tree_on_two_nodes(void **state) {
  (void)state;
  static const char *const gpus[] = {"cluster.gpu=A100", "cluster.gpu=H100"};
  static const double bws[2][3] = {{24, 24, 24}, {40, 45, 48}};
  for (int gi = 0; gi < 2; gi++) {
    const char *sets[] = {"cluster.nodes=2", gpus[gi], "workload.collective.nvls=false"};
    fixture f;
    load(&f, sets, 3);
    uint32_t n = 16, *ranks = iota(n);
    for (int b = 0; b < 3; b++) assert_int_equal(nccl_prefers_ring(gi == 0, n, 8, bws[gi][b]), 1);
    for (uint64_t S = 256u << 20; S <= (4ull << 30); S *= 4) {
      coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_AUTO, CFG_PROTO_AUTO, S);
      cfg_coll_algorithm a;
      cfg_coll_protocol p;
      uint32_t k;
      double est;
      coll_tune(f.t, &s, &a, &p, &k, &est);
      if (a != CFG_ALGO_RING)
        fail_msg("%s, %llu B: fabsim picks %s, NCCL's model the ring", gpus[gi],
                 (unsigned long long)S, cfg_coll_algorithm_name(a));
      coll_result r;
      s.algorithm = CFG_ALGO_TREE;
      s.protocol = CFG_PROTO_SIMPLE;
      run_spec(&f, &s, &r);
      double cap = (gi == 0 ? 23.6e9 : 41.4e9) * 8 / 2 * 2.0 * (n - 1) / n;
      assert_true(r.busbw_GBps * 1e9 <= cap * (1 + 1e-9));
      if (S == (4ull << 30)) assert_true(r.busbw_GBps * 1e9 >= 0.97 * cap);
    }
    sim_free(ranks);
    unload(&f);
  }
}

/* NCCL's measured tree correction (tuning.cc treeCorrectionFactor, applied
 * in ncclTopoGetAlgoTime at log2i(bytes >> 6)): two H100 nodes, the LL tree
 * forced, where NCCL's LL bound (llMaxBws 39 GB/s across 2 nodes, algbw
 * half of it) sets the rate: time = NCCL's latency 6.8 + 2 (7 x 0.6 + 5.0)
 * = 25.2 us + S / (19.5 GB/s x f(S)), f = 0.6 at 64 KiB, 0.4 at 512 KiB,
 * 0.6 at 2 MiB; and the Simple tree at 256 MiB (f 0.9 would apply below
 * 256 MiB only: log2i 22). Fails without the correction (512 KiB: 52.1 us,
 * not 92.4). */
static void test_tree_correction(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  uint32_t n = 16, *ranks = iota(n);
  static const uint64_t size[] = {64u << 10, 512u << 10, 2u << 20};
  static const double share[] = {0.6, 0.4, 0.6};
  for (int i = 0; i < 3; i++) {
    coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_TREE, CFG_PROTO_LL, size[i]);
    coll_result r;
    double t = run_spec(&f, &s, &r) * 1e6;
    double want = 25.2 + (double)size[i] / (19.5e3 * share[i]);
    if (fabs(t / want - 1) > 0.005)
      fail_msg("%llu B: LL tree %.3f us, NCCL's corrected model %.3f us",
               (unsigned long long)size[i], t, want);
  }
  for (int i = 0; i < 23; i++) /* the table's ends: 1 below 64 B and from 512 MiB */
    assert_true(coll__nccl_tree_correction(CFG_PROTO_LL, 64ull << i) <= 1.0);
  assert_true(coll__nccl_tree_correction(CFG_PROTO_LL, 63) == 1.0);
  assert_true(coll__nccl_tree_correction(CFG_PROTO_SIMPLE, 256ull << 20) == 0.9);
  assert_true(coll__nccl_tree_correction(CFG_PROTO_SIMPLE, 512ull << 20) == 1.0);
  assert_true(coll__nccl_tree_correction(CFG_PROTO_LL128, 1u << 20) == 0.6);
  sim_free(ranks);
  unload(&f);
}

/* One rank a node (tuning.cc ncclTopoTuneModel: "With ppn=1 latencies are
 * fully exposed, use the Tree network latency"): an 8-byte ring LL
 * AllReduce over m nodes of one GPU and one NIC takes NCCL's 6.6 us launch
 * and 2 (m - 1) network hops of the tree's 5.0 us (the ring's own is 2.7):
 * 16.6 us on 2 nodes, 36.6 on 4. Fails without: 12.0 and 22.8 us. */
static void test_ring_one_rank_a_node(void **state) {
  (void)state;
  static const char *const nodes[] = {"cluster.nodes=2", "cluster.nodes=4"};
  for (uint32_t i = 0; i < 2; i++) {
    const char *sets[] = {nodes[i], "cluster.gpus_per_node=1", "cluster.nic.per_node=1"};
    fixture f;
    load(&f, sets, 3);
    uint32_t m = 2u << i, *ranks = iota(m);
    coll_spec s = spec_of(&f, ranks, m, CFG_ALGO_RING, CFG_PROTO_LL, 8);
    coll_result r;
    double t = run_spec(&f, &s, &r) * 1e6, want = 6.6 + 2.0 * (m - 1) * 5.0;
    if (fabs(t / want - 1) > 0.005) fail_msg("%u nodes: ring LL %.3f us, NCCL's %.3f", m, t, want);
    sim_free(ranks);
    unload(&f);
  }
}

/* NVLSTree on two H100 nodes at 8 GiB: busbw at NCCL's cap, 8 heads x
 * perChMaxNVLSTreeBws 57.7 GB/s = 461.6 GB/s (within the fill and latency),
 * not NVLS's one-node rate (524 GB/s before the cap, +13.5 %); from 4 nodes
 * at most 8 x 45.5 = 364, where the NICs bound it below that (31/32 x 8 x
 * 46 = 356.5: a head NIC carries 2S/h each way). Fails without the cap. */
static void test_nvlstree_cap(void **state) {
  (void)state;
  static const uint32_t nodes[] = {2, 4};
  static const double cap[] = {8 * 57.7, 8 * 45.5};
  for (int i = 0; i < 2; i++) {
    char set[32];
    snprintf(set, sizeof set, "cluster.nodes=%u", nodes[i]);
    const char *sets[] = {set};
    fixture f;
    load(&f, sets, 1);
    uint32_t n = nodes[i] * 8, *ranks = iota(n);
    coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_NVLSTREE, CFG_PROTO_SIMPLE, 8ull << 30);
    coll_result r;
    run_spec(&f, &s, &r);
    double nic = 2.0 * (n - 1) / n * 8 * 50 * 0.92 / 2; /* 2S/h each way at 46 GB/s */
    if (r.busbw_GBps > cap[i] || r.busbw_GBps < 0.98 * fmin(cap[i], nic))
      fail_msg("%u nodes: NVLSTree busbw %.2f GB/s; NCCL's cap %.1f, the NICs' %.1f", nodes[i],
               r.busbw_GBps, cap[i], nic);
    sim_free(ranks);
    unload(&f);
  }
}

/* Issue 27, defect 11: NVLSTree pays its routed path's latency at every
 * step, as the ring and the tree do. With a 1 ms switch latency on 4 nodes
 * every network step of its pipeline (2 x 2 levels of the node trees)
 * crosses the leaf (about 1 ms), so the collective takes at least 4 ms
 * more than with the default switches; before, its one phase paid the
 * path once (+0.9 ms) and NCCL's 2 floor(log2 m) x 20.9 us hop latencies
 * stood for the rest. */
static void test_nvlstree_pays_its_path(void **state) {
  (void)state;
  double t[2];
  simtime_ps alpha = 0;
  for (int slow = 0; slow < 2; slow++) {
    const char *sets[] = {"cluster.nodes=4",
                          slow ? "fabric.switch_latency=1ms" : "cluster.nodes=4"};
    fixture f;
    load(&f, sets, 2);
    uint32_t n = 32, *ranks = iota(n);
    coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_NVLSTREE, CFG_PROTO_SIMPLE, 64u << 20);
    t[slow] = run_spec(&f, &s, NULL);
    if (slow) {
      topo_path p;
      assert_int_equal(topo_route(f.t, 0, 8, 0, &p), SIM_OK);
      alpha = topo_path_latency(f.t, &p);
    }
    sim_free(ranks);
    unload(&f);
  }
  assert_true(sim_ps_to_s(alpha) > 1e-3);
  if (t[1] - t[0] < 4 * sim_ps_to_s(alpha) - 2e-4)
    fail_msg("a 1 ms switch adds %.6g s to NVLSTree on 4 nodes; 4 network steps pay %.6g s",
             t[1] - t[0], 4 * sim_ps_to_s(alpha));
}

/* Two NICs a GPU (16 a node of 8 GPUs, cloud shapes): NCCL spreads a GPU's
 * channels over its NICs; every NIC carries traffic, and where the NICs
 * bound it (100 Gb/s ports) the ring's, the tree's and NVLSTree's busbw
 * double against 8 NICs a node (1.85-2.02 x: the tree's pipeline and the
 * latencies do not scale with the NICs). Fewer channels than NICs leave some idle
 * (coll_plan_idle_nics, which `fabsim run` warns of). Fails with one NIC a
 * GPU used (before: busbw the same with 16 NICs as with 8, 16 idle). */
static void test_two_nics_per_gpu(void **state) {
  (void)state;
  static const cfg_coll_algorithm algo[] = {CFG_ALGO_RING, CFG_ALGO_TREE, CFG_ALGO_NVLSTREE};
  double bus[2][3];
  for (int two = 0; two < 2; two++) {
    const char *sets[] = {"cluster.nodes=4", "cluster.nic.bandwidth=100Gbps",
                          two ? "cluster.nic.per_node=16" : "cluster.nic.per_node=8"};
    fixture f;
    load(&f, sets, 3);
    assert_int_equal(topo_nics_per_gpu(f.t), two ? 2 : 1);
    uint32_t n = 32, *ranks = iota(n);
    for (int a = 0; a < 3; a++) {
      coll_spec s = spec_of(&f, ranks, n, algo[a], CFG_PROTO_SIMPLE, 1u << 30);
      coll_plan p;
      sim_error err = {0};
      assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
      uint32_t idle, total;
      coll_plan_idle_nics(&p, f.t, &idle, &total);
      assert_int_equal(total, 4 * (two ? 16 : 8));
      assert_int_equal(idle, 0);
      coll_result r;
      coll_test_run(&f, &p, &r);
      bus[two][a] = r.busbw_GBps;
      coll_plan_free(&p);
    }
    if (two) { /* 8 channels for 16 NICs: half of them idle */
      coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_RING, CFG_PROTO_SIMPLE, 1u << 30);
      s.channels = 8;
      coll_plan p;
      sim_error err = {0};
      assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
      uint32_t idle, total;
      coll_plan_idle_nics(&p, f.t, &idle, &total);
      assert_int_equal(idle, 32);
      coll_plan_free(&p);
    }
    sim_free(ranks);
    unload(&f);
  }
  for (int a = 0; a < 3; a++)
    if (bus[1][a] / bus[0][a] < 1.85 || bus[1][a] / bus[0][a] > 2.02)
      fail_msg("%s: busbw %.2f GB/s with 16 NICs a node, %.2f with 8",
               cfg_coll_algorithm_name(algo[a]), bus[1][a], bus[0][a]);
}

static double run_fidelity(const fixture *f, const coll_plan *p, int fid) {
  return sim_ps_to_s(coll_test_run_on(f, p, fid));
}

/* The curve's shape on the three fidelities, the packet fidelity the
 * reference: AllReduce over 2 H100 nodes at 64 KiB (LL tree), 1 MiB (LL128
 * tree), 16 and 256 MiB (NVLSTree: one phase and its pipeline's delay), as
 * the tuner picks them. The analytic and flow fidelities give the same
 * time (1 %); the packet fidelity ends each step when its last ACK is back
 * (docs/validation.md, "The packet fidelity's transfer ends at its
 * sender"): a step's longest path back and a link latency more, which
 * the comparison adds to the analytic time (steps: the plan's phases x
 * their repeats). With it, every size within 5 % of the packet fidelity; so the
 * busbw's rise over the curve is the same on all three. */
static void test_fidelities_agree_on_the_curve(void **state) {
  (void)state;
  fixture fa, fp;
  const char *sa[] = {"cluster.nodes=2"}, *sp[] = {"cluster.nodes=2", "simulation.fidelity=packet"};
  load(&fa, sa, 1);
  load(&fp, sp, 2);
  uint32_t n = 16, *ranks = iota(n);
  static const uint64_t sizes[] = {64u << 10, 1u << 20, 16u << 20, 256u << 20};
  for (size_t i = 0; i < 4; i++) {
    coll_spec s = spec_of(&fa, ranks, n, CFG_ALGO_AUTO, CFG_PROTO_AUTO, sizes[i]);
    coll_plan p, q;
    sim_error err = {0};
    assert_int_equal(coll_plan_build(&p, fa.t, &s, &err), SIM_OK);
    coll_spec sq = s;
    coll_spec_set_hw(&sq, &fp.cfg);
    assert_int_equal(coll_plan_build(&q, fp.t, &sq, &err), SIM_OK);
    assert_int_equal(p.algorithm, q.algorithm);
    uint64_t steps = 0;
    double returns = 0;
    for (size_t j = 0; j < p.nphases; j++) { /* a step's longest path back and a link latency */
      simtime_ps back = 0;
      for (size_t x = 0; x < p.phases[j].n; x++) {
        topo_path path;
        assert_int_equal(topo_route(fa.t, p.phases[j].x[x].dst_gpu, p.phases[j].x[x].src_gpu,
                                    p.phases[j].x[x].flow_hash, &path),
                         SIM_OK);
        if (topo_path_latency(fa.t, &path) > back) back = topo_path_latency(fa.t, &path);
      }
      steps += p.phases[j].repeat;
      returns += (double)p.phases[j].repeat * sim_ps_to_s(back + fa.cfg.fabric.link_latency);
    }
    double ta = run_fidelity(&fa, &p, 0), tf = run_fidelity(&fa, &p, 1),
           tp = run_fidelity(&fp, &q, 2);
    double want = ta + returns;
    print_message(
        "  %8llu B %-8s analytic %.2f us, flow %.2f, packet %.2f (analytic + %llu "
        "returns %.2f)\n",
        (unsigned long long)sizes[i], cfg_coll_algorithm_name(p.algorithm), ta * 1e6, tf * 1e6,
        tp * 1e6, (unsigned long long)steps, want * 1e6);
    if (fabs(tf - ta) > 0.01 * ta) fail_msg("flow %.9g s, analytic %.9g s", tf, ta);
    if (fabs(want - tp) > 0.05 * tp)
      fail_msg("%llu B: packet %.9g s, analytic + returns %.9g s", (unsigned long long)sizes[i], tp,
               want);
    coll_plan_free(&p);
    coll_plan_free(&q);
  }
  sim_free(ranks);
  unload(&fa);
  unload(&fp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_channels_by_size), cmocka_unit_test(test_ring_or_tree_on_two_nodes),
      cmocka_unit_test(test_nvlstree_cap),     cmocka_unit_test(test_nvlstree_pays_its_path),
      cmocka_unit_test(test_two_nics_per_gpu), cmocka_unit_test(test_fidelities_agree_on_the_curve),
      cmocka_unit_test(test_tree_correction),  cmocka_unit_test(test_ring_one_rank_a_node),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
