/* All-to-All with cross-plane forwarding (pxn) and node-limited MoE
 * dispatch/combine: closed forms on the analytic backend, planes, node
 * limit, byte conservation. */
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

enum { MAXR = 64, G = 8 };

static void assert_close_steps(double got, double want, double steps) {
  if (fabs(got - want) > 1e-12 * fabs(want) + steps * 1e-12)
    fail_msg("got %.15g, want %.15g (diff %.3g)", got, want, got - want);
}

static double alpha_of(const fixture *f, uint32_t a, uint32_t b) {
  topo_path p;
  assert_int_equal(topo_route(f->t, a, b, 0, &p), SIM_OK);
  return sim_ps_to_s(topo_path_latency(f->t, &p));
}
static double bw_of(const fixture *f, uint32_t a, uint32_t b) {
  topo_path p;
  assert_int_equal(topo_route(f->t, a, b, 0, &p), SIM_OK);
  return (double)topo_path_bottleneck(f->t, &p) / 8;
}

static int plane_of(const fixture *f, uint32_t gpu) {
  return topo_vertex_at(f->t, topo_nic_vertex(f->t, topo_gpu_nic(f->t, gpu)))->plane;
}

/* The rail: the NIC's index within its node (PXN forwards to the peer's rail). */
static uint32_t rail_of(const fixture *f, uint32_t gpu) {
  return topo_gpu_nic(f->t, gpu) % (topo_nic_count(f->t) / topo_node_count(f->t));
}

/* A cross-node transfer's route: starts on the sender's own NIC (no NVLink
 * hop hidden in the route) and every switch on it is on `plane`. */
static void assert_on_plane(const fixture *f, const be_xfer *x, int plane) {
  topo_path p;
  assert_int_equal(topo_route(f->t, x->src_gpu, x->dst_gpu, x->flow_hash, &p), SIM_OK);
  assert_int_equal(topo_link_at(f->t, topo_channel_link(p.ch[0]))->kind, TOPO_LINK_PCIE);
  for (uint32_t i = 0; i < p.n; i++) {
    const topo_vertex *v = topo_vertex_at(f->t, topo_channel_dst(f->t, p.ch[i]));
    if (v->kind == TOPO_SWITCH || v->kind == TOPO_NIC) assert_int_equal(v->plane, plane);
    assert_int_not_equal(v->kind, TOPO_NVSWITCH);
  }
}

static void build_a2a_mode(const fixture *f, coll_plan *p, cfg_coll_algorithm a, uint64_t S,
                           uint32_t n, bool serial) {
  uint32_t ranks[MAXR];
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  coll_spec s = {.op = CFG_COLL_ALLTOALL,
                 .algorithm = a,
                 .bytes = S,
                 .ranks = ranks,
                 .nranks = n,
                 .channels = 1,
                 .chunk = 1,
                 .pxn_serial = serial};
  sim_error err = {0};
  if (coll_plan_build(p, f->t, &s, &err) != SIM_OK) fail_msg("%s", err.msg);
}
static void build_a2a(const fixture *f, coll_plan *p, cfg_coll_algorithm a, uint64_t S,
                      uint32_t n) {
  build_a2a_mode(f, p, a, S, n, false);
}

/* ---- pxn ------------------------------------------------------------------------- */

/* 8 planes, one NIC each: every cross-node pair with different local indexes
 * is cross-plane. b = S/n per peer, C = ceil(b / 1 MiB) chunks, K = 1 +
 * (m-1) C steps (a2a.c):
 *   serial:    alpha_nvl + m t_fwd + (m-1) t_net, t_fwd = (G-1) b / B_nvl,
 *              t_net = alpha_net + G b / B_nic;
 *   pipelined: t_nvl + ((m-1) C - 1) max(t_nvl, t_net) + max(t_own, t_net),
 *              t_nvl = alpha_nvl + (G-1) (b/K + b/C) / B_nvl,
 *              t_own = alpha_nvl + (G-1) (b/K) / B_nvl,
 *              t_net = alpha_net + G (b/C) / B_nic.
 * 64 MiB over 2, 4 and 8 nodes is 4, 2 and 1 chunks; with NVLink as slow as
 * the NIC's share the max() picks the forwarding. Before the chunk
 * pipeline (the forwarding of a whole node offset a phase ahead) 2 nodes
 * took alpha_nvl + 2 t_fwd + t_net. */
static void test_pxn_closed_form(void **state) {
  (void)state;
  static const char *const nodes[] = {"cluster.nodes=2", "cluster.nodes=4", "cluster.nodes=8"};
  static const char *const nvl[] = {"cluster.scale_up.bandwidth=900GB/s",
                                    "cluster.scale_up.bandwidth=20GB/s"};
  for (int ni = 0; ni < 3; ni++)
    for (int bi = 0; bi < 2; bi++) {
      const char *sets[] = {nodes[ni], "fabric.topology=multi-plane", nvl[bi]};
      fixture f;
      load(&f, sets, 3);
      uint32_t m = topo_node_count(f.t), n = m * G;
      uint64_t Su = 64u << 20, bu = Su / n, C = (bu + (1u << 20) - 1) >> 20;
      uint64_t K = 1 + (m - 1) * C;
      double b = (double)bu, own = (double)((bu + K - 1) / K), fwd = (double)((bu + C - 1) / C);
      double an = alpha_of(&f, 0, 1), Bn = bw_of(&f, 0, 1);
      double ax = alpha_of(&f, 0, 8), Bx = bw_of(&f, 0, 8);
      coll_plan p;
      build_a2a_mode(&f, &p, CFG_ALGO_PXN, Su, n, true);
      assert_int_equal(p.nphases, m);
      double tfwd = (G - 1) * b / Bn;
      assert_close_steps(coll_test_run(&f, &p, NULL), an + m * tfwd + (m - 1) * (ax + G * b / Bx),
                         m);
      coll_plan_free(&p);
      build_a2a(&f, &p, CFG_ALGO_PXN, Su, n);
      /* full nodes: an offset's last step forwards the same pairs as its others
       * (merged), but for the last offset's */
      assert_int_equal(p.nphases, m + (C > 1));
      double tnvl = an + (G - 1) * (own + fwd) / Bn, town = an + (G - 1) * own / Bn;
      double tnet = ax + G * fwd / Bx;
      double want = tnvl + (double)((m - 1) * C - 1) * fmax(tnvl, tnet) + fmax(town, tnet);
      assert_close_steps(coll_test_run(&f, &p, NULL), want, (double)K);
      coll_plan_free(&p);
      unload(&f);
    }
}

/* PXN forwards by rail (the NIC's index in its node), as NCCL does: on 4
 * planes over 8 NICs, local indexes l and l+4 share a plane but not a rail;
 * single-plane fat-tree and rail-optimized fabrics forward to the peer's
 * rail as well. */
static void test_pxn_planes(void **state) {
  (void)state;
  static const char *const scen[][3] = {
      {"cluster.nodes=4", "fabric.topology=multi-plane", "fabric.planes=4"},
      {"cluster.nodes=3", "fabric.topology=multi-plane", "fabric.planes=8"},
      {"cluster.nodes=3", "fabric.topology=multi-plane", "fabric.planes=2"},
      {"cluster.nodes=2", "fabric.topology=fat-tree", "fabric.planes=1"},
      {"cluster.nodes=3", "fabric.topology=rail-optimized", "fabric.planes=1"},
  };
  for (size_t sc = 0; sc < sizeof scen / sizeof *scen; sc++) {
    fixture f;
    load(&f, (const char *const *)scen[sc], 3);
    uint32_t m = topo_node_count(f.t), n = m * G;
    /* under one pipeline step (C = 1), divisible by m (K = m steps) */
    uint64_t chunk = 3u << 16, Su = chunk * n;
    for (int serial = 0; serial < 2; serial++) {
      coll_plan p;
      build_a2a_mode(&f, &p, CFG_ALGO_PXN, Su, n, serial);
      uint64_t in_fab[MAXR] = {0}, in_all[MAXR] = {0}, out_all[MAXR] = {0}, total = 0;
      static uint64_t nvl_pair[MAXR][MAXR];
      memset(nvl_pair, 0, sizeof nvl_pair);
      for (size_t ph = 0; ph < p.nphases; ph++)
        for (size_t j = 0; j < p.phases[ph].n; j++) {
          const be_xfer *x = &p.phases[ph].x[j];
          uint32_t s = x->src_gpu, d = x->dst_gpu;
          uint64_t bytes = x->bytes * p.phases[ph].repeat;
          in_all[d] += bytes;
          out_all[s] += bytes;
          total += bytes;
          if (s / G == d / G) {
            /* NVLink: S/n for d itself, plus S/n for each of the m-1 remote
             * ranks with d's local index exactly when the planes differ (all
             * in phase 0 when serial, else over the pipeline's steps). */
            nvl_pair[s][d] += bytes;
            if (serial) assert_int_equal(ph, 0);
          } else {
            assert_int_equal(rail_of(&f, s), rail_of(&f, d));
            assert_int_equal(plane_of(&f, s), plane_of(&f, d));
            assert_on_plane(&f, x, plane_of(&f, d));
            in_fab[d] += bytes;
            /* a same-plane direct send: its own connection over 2 channels */
            if (s % G != d % G) assert_int_equal(x->bytes, chunk / 2);
          }
        }
      for (uint32_t i = 0; i < n; i++)
        for (uint32_t d = 0; d < n; d++) {
          if (i / G != d / G || i == d) continue;
          uint64_t fwd = rail_of(&f, i) != rail_of(&f, d) ? m - 1 : 0;
          assert_int_equal(nvl_pair[i][d], chunk * (1 + fwd));
        }
      for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(in_fab[i], (uint64_t)(n - G) * chunk); /* every remote rank's S/n */
        assert_int_equal(in_all[i], out_all[i]);                /* relays pass on what they get */
      }
      /* Data volume: every pair's S/n once, plus one NVLink copy per cross-plane remote pair. */
      uint64_t cross = 0;
      for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
          cross += i / G != j / G && rail_of(&f, i) != rail_of(&f, j);
      assert_int_equal(total, ((uint64_t)n * (n - 1) + cross) * chunk);
      /* Every connection and channel across nodes is its own queue pair: the
       * transfers of one NIC pair in a phase hash apart (ECMP entropy), 2 per
       * sender (NCCL_NCHANNELS_PER_NET_PEER). */
      for (size_t ph = 0; ph < p.nphases; ph++) {
        const coll_phase *c = &p.phases[ph];
        for (size_t j = 0; j < c->n; j++) {
          const be_xfer *x = &c->x[j];
          if (x->src_gpu / G == x->dst_gpu / G) continue;
          uint32_t same = 0;
          for (size_t i = 0; i < c->n; i++) {
            const be_xfer *y = &c->x[i];
            if (y->src_gpu != x->src_gpu || y->dst_gpu != x->dst_gpu) continue;
            same++;
            if (i != j) assert_true(y->flow_hash != x->flow_hash);
          }
          assert_true(same % 2 == 0);
        }
      }
      assert_true(coll_test_run(&f, &p, NULL) > 0);
      coll_plan_free(&p);
    }
    unload(&f);
  }
}

/* ---- node-limited MoE ------------------------------------------------------------- */

static int moe_err(const fixture *f, coll_plan *p, coll_moe_info *info, coll_moe_dir dir,
                   uint32_t n, uint64_t T, uint32_t E, uint32_t K, uint32_t M, uint32_t chunks,
                   uint32_t elem, sim_error *err) {
  uint32_t ranks[MAXR];
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  coll_moe_spec s = {.dir = dir,
                     .ranks = ranks,
                     .nranks = n,
                     .tokens = T,
                     .hidden = 7168,
                     .elem_bytes = elem,
                     .experts = E,
                     .top_k = K,
                     .node_limit = M,
                     .chunks = chunks};
  return coll_moe_build(p, f->t, &s, info, err);
}

static int moe(const fixture *f, coll_plan *p, coll_moe_info *info, coll_moe_dir dir, uint32_t n,
               uint64_t T, uint32_t E, uint32_t K, uint32_t M, uint32_t chunks, uint32_t elem) {
  sim_error err = {0};
  int rc = moe_err(f, p, info, dir, n, T, E, K, M, chunks, elem, &err);
  if (rc != SIM_OK && rc != SIM_EINVAL) fail_msg("%s", err.msg);
  return rc;
}

/* Two nodes, M = 4 > m: each token reaches both nodes, 4 experts on 4 GPUs
 * per node, D = 8. Fabric: T copies to the same-rail GPU; NVLink: T tokens
 * to each of the other 7 GPUs.
 *   t = t1 + (C-1) max(t1, t2) + t2,  t1 = alpha_net + T b/(C B_nic),
 *   t2 = alpha_nvl + 7 T b/(C B_nvl). */
static void test_moe_closed_form(void **state) {
  (void)state;
  static const char *const topos[] = {"fabric.topology=fat-tree", "fabric.topology=multi-plane"};
  for (int tp = 0; tp < 2; tp++) {
    const char *sets[] = {"cluster.nodes=4", topos[tp]};
    fixture f;
    load(&f, sets, 2);
    double an = alpha_of(&f, 0, 1), Bn = bw_of(&f, 0, 1);
    double ax = alpha_of(&f, 0, 8), Bx = bw_of(&f, 0, 8);
    double b = 7168;
    uint64_t T = 4096;
    for (uint32_t C = 1; C <= 8; C *= 2) {
      coll_plan p;
      coll_moe_info info;
      assert_int_equal(moe(&f, &p, &info, COLL_MOE_DISPATCH, 16, T, 256, 8, 4, C, 1), SIM_OK);
      assert_int_equal(info.node_span, 2);
      assert_int_equal(info.gpus_per_token, 8);
      double t1 = ax + (double)T * b / C / Bx, t2 = an + 7.0 * (double)T * b / C / Bn;
      assert_close_steps(coll_test_run(&f, &p, NULL), t1 + (C - 1) * fmax(t1, t2) + t2, C + 1);
      coll_plan_free(&p);
    }
    /* Four nodes, M = 2, T = 4: 2 copies to each node (own included), 3
     * fabric transfers of 2 tokens per rank; 32 deliveries per rail GPU,
     * 4 to each GPU. t = alpha_net + 3 x 2b/B_nic + alpha_nvl + 7 x 4b/B_nvl. */
    coll_plan p;
    assert_int_equal(moe(&f, &p, NULL, COLL_MOE_DISPATCH, 32, 4, 64, 8, 2, 1, 1), SIM_OK);
    assert_close_steps(coll_test_run(&f, &p, NULL), ax + 6 * b / Bx + an + 28 * b / Bn, 2);
    coll_plan_free(&p);
    unload(&f);
  }
}

static void test_moe_node_limit_and_bytes(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4", "fabric.topology=multi-plane"};
  fixture f;
  load(&f, sets, 2);
  uint32_t n = 32, m = 4;
  uint64_t b = 7168;
  static const uint64_t Ts[] = {1, 3, 5, 8, 64};
  for (size_t ti = 0; ti < sizeof Ts / sizeof *Ts; ti++)
    for (uint32_t M = 1; M <= 4; M++) {
      uint64_t T = Ts[ti];
      coll_plan p;
      coll_moe_info info;
      assert_int_equal(moe(&f, &p, &info, COLL_MOE_DISPATCH, n, T, 64, 8, M, 1, 1), SIM_OK);
      uint32_t span = info.node_span, D = info.gpus_per_token;
      assert_int_equal(span, M);
      uint64_t to_node[MAXR][4] = {{0}}, fab_in[MAXR] = {0}, nvl_in[MAXR] = {0}, fab = 0, nvl = 0;
      for (size_t ph = 0; ph < p.nphases; ph++)
        for (size_t j = 0; j < p.phases[ph].n; j++) {
          const be_xfer *x = &p.phases[ph].x[j];
          assert_int_equal(x->bytes % b, 0);
          if (x->src_gpu / G == x->dst_gpu / G) {
            nvl_in[x->dst_gpu] += x->bytes;
            nvl += x->bytes;
            continue;
          }
          /* across the fabric only to the same rail, never off the plane */
          assert_int_equal(x->src_gpu % G, x->dst_gpu % G);
          assert_on_plane(&f, x, plane_of(&f, x->dst_gpu));
          to_node[x->src_gpu][x->dst_gpu / G] += x->bytes;
          fab_in[x->dst_gpu] += x->bytes;
          fab += x->bytes;
        }
      assert_int_equal(fab, info.fabric_bytes);
      assert_int_equal(nvl, info.nvlink_bytes);
      for (uint32_t r = 0; r < n; r++) {
        uint32_t remote = 0;
        uint64_t sent = 0;
        for (uint32_t node = 0; node < m; node++) {
          assert_true(to_node[r][node] <= T * b); /* one copy per token and node */
          remote += to_node[r][node] > 0;
          sent += to_node[r][node];
        }
        assert_true(sent <= T * M * b);
        if (T == 1) assert_true(remote <= M); /* a token reaches at most M nodes */
        /* The rail GPU holds T M' copies (its own node's included) and every
         * GPU gets T D token deliveries (its own share stays put). */
        uint64_t own_copies = T * span - (sent / b); /* the sender's own node */
        assert_true(own_copies <= T);
        uint64_t own = T * D / G + ((T * D) % G > 0); /* a -> a: offset 0 */
        assert_int_equal(nvl_in[r] + own * b, T * D * b);
      }
      /* group totals: T M' copies per rank, of which the ones to the own node stay */
      uint64_t copies = 0;
      for (uint32_t r = 0; r < n; r++) copies += fab_in[r];
      if ((T * span) % m == 0) assert_int_equal(copies, (uint64_t)n * T * span / m * (m - 1) * b);
      coll_plan_free(&p);
    }
  unload(&f);
}

static void test_moe_combine_and_errors(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  coll_plan d, c;
  assert_int_equal(moe(&f, &d, NULL, COLL_MOE_DISPATCH, 16, 100, 32, 6, 2, 1, 2), SIM_OK);
  assert_int_equal(moe(&f, &c, NULL, COLL_MOE_COMBINE, 16, 100, 32, 6, 2, 1, 2), SIM_OK);
  /* combine: the same transfers reversed, NVLink hop first */
  assert_int_equal(d.nphases, 2);
  assert_int_equal(c.nphases, 2);
  for (int ph = 0; ph < 2; ph++) {
    const coll_phase *a = &d.phases[ph], *r = &c.phases[1 - ph];
    assert_int_equal(a->n, r->n);
    for (size_t j = 0; j < a->n; j++) {
      assert_int_equal(a->x[j].src_gpu, r->x[j].dst_gpu);
      assert_int_equal(a->x[j].dst_gpu, r->x[j].src_gpu);
      assert_int_equal(a->x[j].bytes, r->x[j].bytes);
    }
  }
  assert_close_steps(coll_test_run(&f, &d, NULL), coll_test_run(&f, &c, NULL), 2);
  assert_int_equal(d.op, CFG_COLL_ALLTOALL);
  assert_int_equal(d.algorithm, CFG_ALGO_NODE_LIMITED);
  assert_int_equal(d.bytes, 100 * 7168 * 2);
  coll_plan_free(&d);
  coll_plan_free(&c);
  sim_error err = {0};
  /* refused: experts not spread evenly, top_k > E, nodes with too few
   * experts for a token's share, ragged node blocks */
  assert_int_equal(moe_err(&f, &d, NULL, COLL_MOE_DISPATCH, 16, 8, 40, 8, 4, 1, 1, &err),
                   SIM_EINVAL);
  assert_non_null(strstr(err.msg, "40 experts do not spread evenly over 16"));
  assert_int_equal(moe_err(&f, &d, NULL, COLL_MOE_DISPATCH, 16, 8, 16, 32, 4, 1, 1, &err),
                   SIM_EINVAL);
  assert_non_null(strstr(err.msg, "top_k 32 outside 1..16"));
  assert_int_equal(moe_err(&f, &d, NULL, COLL_MOE_DISPATCH, 16, 8, 16, 16, 1, 1, 1, &err),
                   SIM_EINVAL);
  assert_non_null(strstr(err.msg, "need 16 experts per node; each node holds 8"));
  assert_int_equal(moe_err(&f, &d, NULL, COLL_MOE_DISPATCH, 12, 8, 24, 8, 4, 1, 1, &err),
                   SIM_EINVAL);
  assert_non_null(strstr(err.msg, "same number of ranks on every node"));
  assert_int_equal(d.nphases, 0);
  /* one node: NVLink only; the plan still runs */
  assert_int_equal(moe(&f, &d, NULL, COLL_MOE_DISPATCH, 8, 8, 8, 2, 4, 4, 1), SIM_OK);
  assert_int_equal(d.nphases, 1);
  assert_true(coll_test_run(&f, &d, NULL) > 0);
  coll_plan_free(&d);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pxn_closed_form),
      cmocka_unit_test(test_pxn_planes),
      cmocka_unit_test(test_moe_closed_form),
      cmocka_unit_test(test_moe_node_limit_and_bytes),
      cmocka_unit_test(test_moe_combine_and_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
