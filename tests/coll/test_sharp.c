/* In-switch reduction (NVLS, CollNet), NCCL's tree across nodes, the
 * pipelined ring and the tuner's choice among them (src/coll/sharp.c,
 * tree.c, tune.c) on the analytic backend against closed forms. */
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

enum { MAXR = 128 };

static simtime_ps path_latency(const fixture *f, uint32_t a, uint32_t b) {
  topo_path p;
  assert_int_equal(topo_route(f->t, a, b, 0, &p), SIM_OK);
  return topo_path_latency(f->t, &p);
}
static double path_rate(const fixture *f, uint32_t a, uint32_t b) {
  topo_path p;
  assert_int_equal(topo_route(f->t, a, b, 0, &p), SIM_OK);
  return (double)topo_path_bottleneck(f->t, &p) / 8;
}

static coll_spec spec_of(const fixture *f, const uint32_t *ranks, uint32_t n, cfg_coll_algorithm a,
                         cfg_coll_protocol p, uint64_t S) {
  return coll_test_allreduce(f, ranks, n, a, p, S);
}

static void assert_close(double got, double want, double rel, const char *what) {
  if (fabs(got - want) > rel * want + 1e-11)
    fail_msg("%s: got %.12g s, want %.12g s", what, got, want);
}

/* Runs spec; checks the tuner's estimate for the same (fixed) algorithm
 * equals the run. */
static double run_checked(const fixture *f, const coll_spec *s, coll_result *r) {
  coll_plan p;
  sim_error err = {0};
  if (coll_plan_build(&p, f->t, s, &err) != SIM_OK) fail_msg("%s", err.msg);
  double t = coll_test_run(f, &p, r);
  cfg_coll_algorithm a;
  cfg_coll_protocol pp;
  uint32_t k;
  double est;
  coll_tune(f->t, s, &a, &pp, &k, &est);
  assert_int_equal(a, p.algorithm);
  assert_close(est, t, 1e-6, "estimate vs run");
  coll_plan_free(&p);
  return t;
}

/* NCCL's NVLS and NVLSTree unit (enqueue.cc, nvls.cc), written out
 * independently of src/coll/nccl.c: 16 NVLS channels on Hopper x heads x
 * the chunk by size (NCCL_NVLS_CHUNKSIZE 128 KiB; NVLSTree's
 * nvlsTreeMaxChunkSize 64 KiB from four nodes), at most S. */
static uint64_t nccl_unit(uint64_t S, uint32_t m, uint32_t heads) {
  uint64_t ops = 16ull * heads, c = 131072;
  if (m == 1) {
    if (S < 64 * ops * c) c = 65536;
    if (S < 8 * ops * c) c = 32768;
    if (S < 2 * ops * c) c = 16384;
  } else {
    if (m >= 4) c = 65536;
    if (S < 4 * ops * c && c > 65536) c = 65536;
    if (S < ops * c && c > 32768) c = 32768;
  }
  return ops * c < S ? ops * c : S;
}

/* NVLS on one DGX H100 as NCCL pipelines it (sharp.c, tune.c
 * nvls_pipeline_ps): one phase of the stream, every port S (n+1)/(n e)
 * each way (pairs of P(S) = ceil(S (n+1) / (n (n-1) e))), then its fixed
 * delay: the first unit u reduced through the switch and multicast (each
 * u a port at 1/e: pf(u) = ceil(u / ((n-1) e)) a pair) before the stream
 * runs, less the unit's share of the stream, and NCCL's 25 us less the
 * path the phase pays; no launch:
 *   t = 25 us + (n-1)/B (P(S) + 2 pf(u) - P(u))
 *     = latency + S (n+1)/(n e B) + fill and drain ~ u (n-1)/(n e B);
 * u = 16 channels x 8 heads x NCCL's chunk: 4 KiB all of S (chunk 16 KiB),
 * 16 MiB 4 MiB (32 KiB), 64 MiB 8 MiB (64 KiB), 1 GiB 16 MiB (128 KiB).
 * busbw -> 2(n-1)/(n+1) e B for large S. Fails without the fill. */
static void test_nvls_closed_form(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[8], n = 8;
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  double B = path_rate(&f, 0, 1), e = 0.85;
  static const uint64_t sizes[] = {4096, 16u << 20, 64u << 20, 1u << 30};
  static const uint64_t units[] = {4096, 4u << 20, 8u << 20, 16u << 20};
  for (size_t i = 0; i < 4; i++) {
    uint64_t S = sizes[i], u = nccl_unit(S, 1, n);
    assert_int_equal(u, units[i]);
    coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_NVLS, CFG_PROTO_SIMPLE, S);
    assert_true(s.nvls);
    coll_plan p;
    sim_error err = {0};
    assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
    assert_int_equal(p.nphases, 1);
    assert_int_equal(p.phases[0].n, n * (n - 1));
    assert_int_equal(p.launch, 0);
    double P = ceil((double)S * (n + 1) / ((double)n * (n - 1) * e) - 1e-6);
    double Pu = ceil((double)u * (n + 1) / ((double)n * (n - 1) * e) - 1e-6);
    double pf = ceil((double)u / ((n - 1) * e) - 1e-6);
    for (size_t j = 0; j < p.phases[0].n; j++)
      assert_true(fabs((double)p.phases[0].x[j].bytes - P) <= 1);
    coll_plan_free(&p);
    coll_result r;
    double t = run_checked(&f, &s, &r);
    double want = 25e-6 + (n - 1) * (P + 2 * pf - Pu) / B;
    assert_close(t, want, 1e-6, "nvls");
    if (S == (1u << 30)) /* within the latency (1.2 %) and the fill (1.4 %) of the asymptote */
      assert_close(r.busbw_GBps, 2.0 * (n - 1) / (n + 1) * e * B / 1e9, 0.03, "nvls busbw");
  }
  /* refused without the hardware, disabled, or with LL */
  coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_NVLS, CFG_PROTO_SIMPLE, 1 << 20);
  coll_plan p;
  sim_error err = {0};
  s.nvls = false;
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_EINVAL);
  s.nvls = true;
  s.gpu = CFG_GPU_A100;
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_EINVAL);
  s.gpu = CFG_GPU_H100;
  s.protocol = CFG_PROTO_LL;
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_EINVAL);
  unload(&f);
  /* across nodes NVLS needs SHARP (collnet) */
  const char *two[] = {"cluster.nodes=2"};
  load(&f, two, 1);
  uint32_t r16[16];
  for (uint32_t i = 0; i < 16; i++) r16[i] = i;
  s = spec_of(&f, r16, 16, CFG_ALGO_NVLS, CFG_PROTO_SIMPLE, 1 << 20);
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_EINVAL);
  unload(&f);
}

/* The tuner on one DGX H100: NVLS for large messages (its 25 us latency
 * loses to the ring's LL at small ones), never when disabled or on A100. */
static void test_nvls_tuner(void **state) {
  (void)state;
  static const char *const gpus[] = {"cluster.gpu=H100", "cluster.gpu=A100"};
  for (int gi = 0; gi < 2; gi++) {
    const char *sets[] = {"cluster.nodes=1", gpus[gi]};
    fixture f;
    load(&f, sets, 2);
    uint32_t ranks[8];
    for (uint32_t i = 0; i < 8; i++) ranks[i] = i;
    for (int on = 0; on < 2; on++)
      for (uint64_t S = 8; S <= (1ull << 30); S *= 64) {
        coll_spec s = spec_of(&f, ranks, 8, CFG_ALGO_AUTO, CFG_PROTO_AUTO, S);
        s.nvls = s.nvls && on;
        cfg_coll_algorithm a;
        cfg_coll_protocol p;
        uint32_t k;
        double est;
        coll_tune(f.t, &s, &a, &p, &k, &est);
        bool can = gi == 0 && on;
        if (!can) assert_true(a != CFG_ALGO_NVLS);
        if (S <= 4096) assert_true(a != CFG_ALGO_NVLS);
        if (can && S == (1ull << 30)) {
          assert_int_equal(a, CFG_ALGO_NVLS);
          assert_int_equal(p, CFG_PROTO_SIMPLE);
        }
        /* the pick is no slower than the ring with any protocol */
        static const cfg_coll_protocol all[] = {CFG_PROTO_LL, CFG_PROTO_LL128, CFG_PROTO_SIMPLE};
        for (int i = 0; i < 3; i++) {
          coll_spec r = s;
          r.algorithm = CFG_ALGO_RING;
          r.protocol = all[i];
          double e1;
          coll_tune(f.t, &r, &a, &p, &k, &e1);
          assert_true(est <= e1 * (1 + 1e-12));
        }
      }
    unload(&f);
  }
}

/* CollNet over 4 nodes: in one steady-state phase the NVLink reduce-scatter
 * and all-gather (direct: 2 S/g a pair; with NVLS S (g+1)/(g (g-1) e)) and
 * each NIC's S/g up the aggregation tree and back:
 *   t = max(alpha_nv + nvlink load / B_nv, alpha_net + S/g x GPUs per NIC / B_nic)
 *       + (latency - alpha_net),
 * latency 2 (3.7 + (g-1) 0.4) + 31 us (NCCL's CollNet Direct) or 25 + 18 us
 * (NVLS across nodes). With 2 NICs for 8 GPUs the NICs bound it: t ~ S / (per-node
 * NIC bandwidth) + the aggregation latency. */
static void test_collnet_closed_form(void **state) {
  (void)state;
  static const char *const nics[] = {"cluster.nic.per_node=8", "cluster.nic.per_node=2"};
  for (int ni = 0; ni < 2; ni++)
    for (int nv = 0; nv < 2; nv++) {
      const char *sets[] = {
          "cluster.nodes=4", "fabric.sharp=true", nics[ni],
          nv ? "workload.collective.nvls=true" : "workload.collective.nvls=false"};
      fixture f;
      load(&f, sets, 4);
      uint32_t ranks[32], n = 32, g = 8, m = 4;
      for (uint32_t i = 0; i < n; i++) ranks[i] = i;
      double Bnv = path_rate(&f, 0, 1), Bnic = path_rate(&f, 0, 8);
      simtime_ps a_nv = path_latency(&f, 0, 1), a_net = path_latency(&f, 0, 8);
      uint32_t per_nic = g / f.cfg.cluster.nic.per_node;
      for (uint64_t S = 1 << 20; S <= (1u << 30); S *= 1024) {
        coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_COLLNET, CFG_PROTO_AUTO, S);
        assert_true(s.sharp);
        coll_plan p;
        sim_error err = {0};
        assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
        assert_int_equal(p.protocol, CFG_PROTO_SIMPLE);
        assert_int_equal(p.phases[0].n, m * (g * (g - 1) + g));
        coll_plan_free(&p);
        double share = ceil((double)S / g);
        double pair =
            nv ? ceil((double)S * (g + 1) / ((double)g * (g - 1) * 0.85) - 1e-6) : 2 * share;
        double lat = nv ? 43e-6 : 2 * (3.7e-6 + (g - 1) * 0.4e-6) + 31e-6;
        double want = fmax(sim_ps_to_s(a_nv) + (g - 1) * pair / Bnv,
                           sim_ps_to_s(a_net) + per_nic * share / Bnic) +
                      (lat - sim_ps_to_s(a_net));
        double t = run_checked(&f, &s, NULL);
        assert_close(t, want, 1e-6, "collnet");
        if (ni == 1 && S == (1u << 30)) /* NIC-bound: bytes / per-node NIC bandwidth + latency */
          assert_close(t, (double)S / (f.cfg.cluster.nic.per_node * Bnic) + lat, 1e-3,
                       "collnet nic");
      }
      unload(&f);
    }
  /* refused without SHARP or on one node */
  const char *sets[] = {"cluster.nodes=4"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[32];
  for (uint32_t i = 0; i < 32; i++) ranks[i] = i;
  coll_spec s = spec_of(&f, ranks, 32, CFG_ALGO_COLLNET, CFG_PROTO_SIMPLE, 1 << 20);
  coll_plan p;
  sim_error err = {0};
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_EINVAL);
  s.sharp = true;
  s.nranks = 8;
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_EINVAL);
  unload(&f);
}

/* NVLSTree over 2, 3 and 4 H100 nodes, 8 or 2 NICs a node (h heads, one a
 * NIC), as NCCL pipelines it (sharp.c, tune.c nvls_pipeline_ps). One
 * phase, the stream: every GPU port S (g+1)/(g e) each way (nv_S = (g-1)
 * ceil(S (g+1) / (g (g-1) e)) / B_nv) against the busiest head NIC's
 * degree in the two node trees x ceil(S/(2h)) (net_S); then its fixed
 * delay, the fill and drain of NCCL's first unit u (16 NVLS channels x h
 * heads x NCCL's chunk): its in-node reduce and multicast (each (g-1)
 * ceil(u / ((g-1) e)) / B_nv), the trees' 2H levels (level l: the busiest
 * head NIC's c_l edges x Du = ceil(u/(2h)) / B_nic) less the unit's share
 * of the stream (max(nv_u, net_u)); the stream past the unit held to NCCL's
 * cap (perChMaxNVLSTreeBws x h: busbw 2(n-1)/n (S-u) / t <= 8 x 57.7 GB/s
 * on 2 nodes, 45.5 from 3); NCCL's latency L = 25 us + 2 floor(log2 m) x
 * 20.9 us less the network path the phase pays:
 *   t = max(alpha_nv + nv_S, alpha_net + net_S) + 2 (g-1) pf / B_nv
 *       + sum_l c_l Du / B_nic - max(nv_u, net_u) + cap excess + L - alpha_net.
 * Levels, by hand from NCCL's trees: 2 nodes (A 1 -> 0, B 0 -> 1) up 1,
 * down 1; 3 nodes (A 1 -> 2 -> 0, B 2 -> 0 -> 1) 1, 1 | 1, 1; 4 nodes (A 1,
 * 3 -> 2 -> 0; B 0, 2 -> 1 -> 3) up 2, 1, down 1, 2. The tuner's estimate
 * (from the shape, tune.c) equals the run. Refused on one node, on A100
 * and without NVLS. Fails without the fill and the cap. */
static void test_nvlstree_closed_form(void **state) {
  (void)state;
  static const char *const nodes[] = {"cluster.nodes=2", "cluster.nodes=3", "cluster.nodes=4"};
  static const uint32_t degree[] = {2, 3, 4}, log2m_of[] = {1, 1, 2}, H_of[] = {1, 2, 2};
  static const uint32_t levels[3][4] = {{1, 1}, {1, 1, 1, 1}, {2, 1, 1, 2}};
  static const char *const nics[] = {"cluster.nic.per_node=8", "cluster.nic.per_node=2"};
  for (int mi = 0; mi < 3; mi++)
    for (int ni = 0; ni < 2; ni++) {
      const char *sets[] = {nodes[mi], nics[ni]};
      fixture f;
      load(&f, sets, 2);
      uint32_t g = 8, m = topo_node_count(f.t), n = m * g, h = f.cfg.cluster.nic.per_node;
      uint32_t ranks[MAXR];
      for (uint32_t i = 0; i < n; i++) ranks[i] = i;
      double Bnv = path_rate(&f, 0, 1), Bnic = path_rate(&f, 0, 8), e = 0.85;
      simtime_ps a_net = 0;
      for (uint32_t j = g; j < n; j += g) /* the farthest head pair */
        if (path_latency(&f, 0, j) > a_net) a_net = path_latency(&f, 0, j);
      double lat = 25e-6 + 2.0 * log2m_of[mi] * 20.9e-6, cap = m == 2 ? 57.7e9 : 45.5e9;
      for (uint64_t S = 1 << 20; S <= (1u << 30); S *= 1024) {
        uint64_t u = nccl_unit(S, m, h);
        coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_NVLSTREE, CFG_PROTO_AUTO, S);
        assert_true(s.nvls);
        coll_plan p;
        sim_error err = {0};
        assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
        assert_int_equal(p.protocol, CFG_PROTO_SIMPLE);
        assert_int_equal(p.nphases, 1);
        assert_int_equal(p.phases[0].n, m * g + 4 * h * (m - 1));
        for (size_t j = 0; j < p.phases[0].n; j++) { /* heads cross on their own rail */
          const be_xfer *x = &p.phases[0].x[j];
          if (x->src_gpu / g != x->dst_gpu / g)
            assert_int_equal(topo_xfer_nic(f.t, x->src_gpu, x->flow_hash) % h,
                             topo_xfer_nic(f.t, x->dst_gpu, x->flow_hash) % h);
        }
        coll_plan_free(&p);
        double nv = (g - 1) * ceil((double)S * (g + 1) / ((double)g * (g - 1) * e) - 1e-6) / Bnv;
        double net = degree[mi] * ceil((double)S / (2.0 * h)) / Bnic;
        double nv_u = (g - 1) * ceil((double)u * (g + 1) / ((double)g * (g - 1) * e) - 1e-6) / Bnv;
        double Du = ceil((double)u / (2.0 * h)), net_u = degree[mi] * Du / Bnic;
        double fill = 2 * (g - 1) * ceil((double)u / ((g - 1) * e) - 1e-6) / Bnv;
        for (uint32_t l = 0; l < 2 * H_of[mi]; l++) fill += levels[mi][l] * Du / Bnic;
        fill -= fmax(nv_u, net_u);
        double excess = 0;
        if (S > u)
          excess = fmax(0, 2.0 * (n - 1) / n * (double)(S - u) / (h * cap) -
                               (fmax(nv, net) - fmax(nv_u, net_u)));
        double want = fmax(sim_ps_to_s(path_latency(&f, 0, 1)) + nv, sim_ps_to_s(a_net) + net) +
                      fill + excess + lat - sim_ps_to_s(a_net);
        double t = run_checked(&f, &s, NULL);
        assert_close(t, want, 1e-6, "nvlstree");
      }
      unload(&f);
    }
  /* refused: one node, A100, NVLS off */
  static const char *const bad[][2] = {{"cluster.nodes=1", "cluster.gpu=H100"},
                                       {"cluster.nodes=4", "cluster.gpu=A100"},
                                       {"cluster.nodes=4", "workload.collective.nvls=false"}};
  for (int b = 0; b < 3; b++) {
    fixture f;
    load(&f, bad[b], 2);
    uint32_t ranks[32], n = topo_gpu_count(f.t);
    for (uint32_t i = 0; i < n; i++) ranks[i] = i;
    coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_NVLSTREE, CFG_PROTO_SIMPLE, 1 << 20);
    coll_plan p;
    sim_error err = {0};
    assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "nvlstree"));
    unload(&f);
  }
}

/* The tuner across H100 nodes (NCCL's tuning model, tuning.cc, picks
 * NVLSTree for large AllReduce at scale; fabsim's estimates decide, the
 * in-switch algorithms' without their fill as NCCL's model): at 64 nodes
 * and 1 GiB NVLSTree beats the ring (whose 1,022 steps' latencies its
 * slices no longer hide) and the tree (NIC-bound at its interior heads,
 * and at most NCCL's perChMaxTreeBws, 8 x 36 GB/s); 8 B stays on the LL
 * tree (NVLSTree's 25 + 12 x 20.9 us); without NVLS it is never picked,
 * and the ring (7.9 ms) beats the capped tree (8.1 ms), where NCCL's own
 * model keeps the tree: it charges the ring's 1,022 steps 1.4 x their full
 * hop latency, which fabsim's slices partly hide (docs/validation.md). */
static void test_nvlstree_tuner(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=64"};
  fixture f;
  load(&f, sets, 1);
  uint32_t n = 512;
  uint32_t *ranks = sim_malloc(n * sizeof *ranks);
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  for (int on = 0; on < 2; on++) {
    static const uint64_t sizes[] = {8, 1ull << 30};
    for (int i = 0; i < 2; i++) {
      coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_AUTO, CFG_PROTO_AUTO, sizes[i]);
      s.nvls = s.nvls && on;
      cfg_coll_algorithm a;
      cfg_coll_protocol p;
      uint32_t k;
      double est;
      coll_tune(f.t, &s, &a, &p, &k, &est);
      if (i == 0) {
        assert_int_equal(a, CFG_ALGO_TREE);
        assert_int_equal(p, CFG_PROTO_LL);
      } else {
        assert_int_equal(a, on ? CFG_ALGO_NVLSTREE : CFG_ALGO_RING);
      }
    }
  }
  sim_free(ranks);
  unload(&f);
}

/* NCCL's tree across nodes: a chain in each node under the node-level
 * double binary tree, H = (g-1) + ceil(log2 m), C + 2H - 1 steps; only the
 * chains' heads cross nodes, 2 trees x 2 directions x (m-1) edges a
 * channel, each between two heads of the channel's rail. The tuner picks it for small multi-node
 * AllReduce and the ring for large, and its estimate equals the run. */
static void test_tree_across_nodes(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[32], n = 32, g = 8, m = 4, k = 8;
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  uint64_t S = 64u << 20, C = S / (2 * k) / (1 << 20);
  coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_TREE, CFG_PROTO_SIMPLE, S);
  coll_plan p;
  sim_error err = {0};
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
  uint64_t steps = 0;
  for (size_t i = 0; i < p.nphases; i++) steps += p.phases[i].repeat;
  assert_int_equal(steps, C + 2 * ((g - 1) + 2) - 1);
  uint32_t inter = 0;
  for (size_t j = 0; j < p.pool_n; j++)
    if (topo_gpu_node(f.t, p.pool[j].src_gpu) != topo_gpu_node(f.t, p.pool[j].dst_gpu)) {
      inter++;
      /* channel c's heads are the GPUs of local index c (its rotation) in
       * every node: an inter-node edge joins two of one rail */
      assert_int_equal(p.pool[j].src_gpu % g, p.pool[j].dst_gpu % g);
    }
  assert_int_equal(inter, k * 2 * 2 * (m - 1));
  coll_plan_free(&p);
  run_checked(&f, &s, NULL);
  for (uint64_t size = 8; size <= (1ull << 30); size *= 32) {
    coll_spec a = spec_of(&f, ranks, n, CFG_ALGO_AUTO, CFG_PROTO_AUTO, size);
    cfg_coll_algorithm alg;
    cfg_coll_protocol pr;
    uint32_t kk;
    double est;
    coll_tune(f.t, &a, &alg, &pr, &kk, &est);
    if (size <= (64u << 10)) assert_int_equal(alg, CFG_ALGO_TREE);
    if (size >= (1u << 30)) assert_int_equal(alg, CFG_ALGO_RING);
  }
  unload(&f);
}

/* The ring pipelines its steps in slices: across 16 nodes, Simple (2
 * slices a step) hides the hop latency behind half of every step's
 * transfer:
 *   t = launch + N (alpha + t_data) + max(0, H - N t_data / 2),
 * N = 2(n-1) steps, H = (N - Ni)(3.4 us - alpha)+ + Ni (14 us - alpha)+ with
 * Ni = 2(m-1); t_data the step's chunk on a NIC or the k chunks on an
 * NVLink port, whichever is slower. At 1 GiB the latency is hidden
 * entirely; at 16 MiB only part of it. */
static void test_ring_pipelined(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=16"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[MAXR], n = 128, m = 16, k = 8;
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  double Bnv = path_rate(&f, 0, 1), Bnic = path_rate(&f, 0, 8);
  /* the slowest hop paces the lock-step ring: to the last node (other leaf) */
  simtime_ps alpha = path_latency(&f, 0, 120);
  assert_true(alpha > path_latency(&f, 0, 8));
  double N = 2.0 * (n - 1), Ni = 2.0 * (m - 1);
  for (uint64_t S = 16u << 20; S <= (1u << 30); S *= 64) {
    coll_spec s = spec_of(&f, ranks, n, CFG_ALGO_RING, CFG_PROTO_SIMPLE, S);
    double chunk = ceil((double)S / (n * k));
    double t_data = fmax(k * chunk / Bnv, chunk / Bnic);
    double a = sim_ps_to_s(alpha);
    double H = (N - Ni) * fmax(0, 3.4e-6 - a) + Ni * fmax(0, 14e-6 - a);
    double want = 8.4e-6 + N * (a + t_data) + fmax(0, H - N * t_data / 2);
    double t = run_checked(&f, &s, NULL);
    assert_close(t, want, 1e-6, "ring simple");
    if (S == (1u << 30)) assert_true(H < N * t_data / 2);
    else assert_true(H > N * t_data / 2);
  }
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nvls_closed_form),    cmocka_unit_test(test_nvls_tuner),
      cmocka_unit_test(test_collnet_closed_form), cmocka_unit_test(test_tree_across_nodes),
      cmocka_unit_test(test_ring_pipelined),      cmocka_unit_test(test_nvlstree_closed_form),
      cmocka_unit_test(test_nvlstree_tuner),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
