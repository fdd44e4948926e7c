/* MoE router statistics: distinct nodes and GPUs per token against their
 * hypergeometric closed forms, the node limit, hot experts, determinism per
 * seed, and dispatch bytes that follow the statistics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"

/* C(n - h, k) / C(n, k): a uniform k-subset of n misses h given items. */
static double miss(uint32_t n, uint32_t h, uint32_t k) {
  double p = 1;
  for (uint32_t i = 0; i < k; i++) p *= (double)(n - h - i) / (double)(n - i);
  return p > 0 ? p : 0;
}

static coll_moe_routing draw(uint32_t m, uint32_t g, uint32_t E, uint32_t k, uint32_t M,
                             double skew, uint64_t seed) {
  coll_moe_router_spec s = {.nodes = m,
                            .per_node = g,
                            .experts = E,
                            .top_k = k,
                            .node_limit = M,
                            .skew = skew,
                            .seed = seed};
  coll_moe_routing r;
  sim_error err = {0};
  if (coll_moe_routing_sample(&r, &s, &err) != SIM_OK) fail_msg("%s", err.msg);
  return r;
}

/* The pool's mean of a count per token bounded by k: standard error under
 * k / sqrt(P); 4 of them is the tolerance (seeded, so it cannot flake). */
static void assert_mean(double got, double want, uint32_t k, uint32_t P) {
  double tol = 4.0 * k / sqrt((double)P);
  if (fabs(got - want) > tol) fail_msg("got %.4f, want %.4f (+- %.4f)", got, want, tol);
}

/* Without a node limit a token's experts are a uniform k-subset of E:
 * nodes reached m (1 - C(E - E/m, k)/C(E, k)), GPUs mG (1 - C(E - E/mG, k)/C(E, k)). */
static void test_uniform_closed_form(void **state) {
  (void)state;
  static const uint32_t shapes[][4] = {
      {8, 8, 256, 8}, {4, 8, 64, 2}, {16, 4, 64, 6}, {2, 8, 16, 4}};
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    uint32_t m = shapes[i][0], g = shapes[i][1], E = shapes[i][2], k = shapes[i][3];
    coll_moe_routing r = draw(m, g, E, k, 0, 0, 7);
    assert_mean(r.nodes_per_token, m * (1 - miss(E, E / m, k)), k, r.tokens);
    assert_mean(r.gpus_per_token, m * g * (1 - miss(E, E / (m * g), k)), k, r.tokens);
    /* uniform popularity: every node and GPU alike, exactly */
    for (uint32_t b = 0; b < m; b++)
      assert_true(fabs(r.node_share[b] - r.nodes_per_token / m) < 1e-12);
    for (uint32_t i = 0; i < m * g; i++)
      assert_true(fabs(r.gpu_share[i] - r.gpus_per_token / (m * g)) < 1e-12);
    assert_true(r.imbalance == 1);
    coll_moe_routing_free(&r);
  }
}

/* Node limit M: never more than M nodes, and within the chosen nodes the
 * experts are exchangeable, so with M = 1 the GPUs reached are
 * G (1 - C(E/m - E/mG, k)/C(E/m, k)). DeepSeek-V3's shape (8 nodes, 256
 * experts, top-8, M = 4) reaches fewer than the balanced bound's 4 nodes
 * and 8 GPUs. */
static void test_node_limit(void **state) {
  (void)state;
  coll_moe_routing r = draw(8, 8, 256, 8, 1, 0, 3);
  assert_true(fabs(r.nodes_per_token - 1) < 1e-12);
  uint32_t pn = 256 / 8, pg = pn / 8;
  assert_mean(r.gpus_per_token, 8 * (1 - miss(pn, pg, 8)), 8, r.tokens);
  coll_moe_routing_free(&r);
  for (uint32_t M = 2; M <= 4; M++) {
    r = draw(8, 8, 256, 8, M, 0, 3);
    assert_true(r.nodes_per_token <= M + 1e-12);
    assert_true(r.nodes_per_token > M - 0.5); /* the chosen nodes hold the best scores */
    assert_true(r.gpus_per_token < 8);
    coll_moe_routing_free(&r);
  }
}

/* Hot experts: Zipf popularity concentrates load on the GPUs holding the
 * hot experts; uniform stays balanced. Same seed, same pool; another seed
 * places the hot experts elsewhere. */
static void test_skew_and_seed(void **state) {
  (void)state;
  coll_moe_routing u = draw(4, 8, 128, 8, 0, 0, 11), h = draw(4, 8, 128, 8, 0, 1.2, 11);
  assert_true(u.imbalance == 1);
  assert_true(h.imbalance > 2);
  /* the shares sum to the means; expert loads to k */
  double nodes = 0, load = 0;
  for (uint32_t b = 0; b < 4; b++) nodes += h.node_share[b];
  for (uint32_t i = 0; i < 32; i++) load += h.expert_share[i];
  assert_true(fabs(nodes - h.nodes_per_token) < 1e-9);
  assert_true(fabs(load - 8) < 1e-9);
  assert_true(h.gpus_per_token < u.gpus_per_token); /* hot experts share GPUs */
  coll_moe_routing h2 = draw(4, 8, 128, 8, 0, 1.2, 11), h3 = draw(4, 8, 128, 8, 0, 1.2, 12);
  assert_memory_equal(h.expert_share, h2.expert_share, 32 * sizeof *h.expert_share);
  assert_memory_not_equal(h.expert_share, h3.expert_share, 32 * sizeof *h.expert_share);
  coll_moe_routing_free(&u);
  coll_moe_routing_free(&h);
  coll_moe_routing_free(&h2);
  coll_moe_routing_free(&h3);
}

static void test_bad_input(void **state) {
  (void)state;
  coll_moe_routing r;
  sim_error err = {0};
  coll_moe_router_spec s = {.nodes = 4, .per_node = 8, .experts = 100, .top_k = 2};
  assert_int_equal(coll_moe_routing_sample(&r, &s, &err), SIM_EINVAL);
  s.experts = 64;
  s.top_k = 17; /* M = 1 node holds 16 experts */
  s.node_limit = 1;
  assert_int_equal(coll_moe_routing_sample(&r, &s, &err), SIM_EINVAL);
  s.top_k = 2;
  s.skew = -1;
  assert_int_equal(coll_moe_routing_sample(&r, &s, &err), SIM_EINVAL);
}

/* Dispatch with router statistics: each rank sends node B
 * floor(T share_B + r/mG) copies on its rail, and every GPU receives, over
 * the fabric to its rail and NVLink from it, what the pool's GPU shares say:
 * group totals within one token per transfer. */
static void test_dispatch_follows_routing(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4"};
  fixture f;
  load(&f, sets, 1);
  enum { m = 4, G = 8, n = m * G };
  uint32_t ranks[n];
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  coll_moe_routing r = draw(m, G, 128, 8, 2, 0.8, 5);
  uint64_t T = 1000, b = 64;
  coll_moe_spec s = {.dir = COLL_MOE_DISPATCH,
                     .ranks = ranks,
                     .nranks = n,
                     .tokens = T,
                     .hidden = 64,
                     .elem_bytes = 1,
                     .experts = 128,
                     .top_k = 8,
                     .node_limit = 2,
                     .routing = &r};
  coll_plan p;
  coll_moe_info info;
  sim_error err = {0};
  assert_int_equal(coll_moe_build(&p, f.t, &s, &info, &err), SIM_OK);
  uint64_t fab_to_node[m] = {0}, nvl_to[n] = {0};
  for (size_t ph = 0; ph < p.nphases; ph++)
    for (size_t j = 0; j < p.phases[ph].n; j++) {
      const be_xfer *x = &p.phases[ph].x[j];
      if (x->src_gpu / G != x->dst_gpu / G) {
        assert_int_equal(x->src_gpu % G, x->dst_gpu % G);
        fab_to_node[x->dst_gpu / G] += x->bytes / b;
      } else {
        nvl_to[x->dst_gpu] += x->bytes / b;
      }
    }
  for (uint32_t B = 0; B < m; B++) {
    double want = (double)(n - G) * T * r.node_share[B];
    assert_true(fabs(fab_to_node[B] - want) <= n);
  }
  for (uint32_t gpu = 0; gpu < n; gpu++) {
    /* from the node's other G - 1 rail GPUs: (G - 1) m T h_g / P */
    double want = (double)(G - 1) * m * T * r.gpu_share[gpu];
    assert_true(fabs(nvl_to[gpu] - want) <= G);
  }
  /* the balanced model is an upper bound on the fabric bytes */
  s.routing = NULL;
  coll_plan q;
  coll_moe_info bal;
  assert_int_equal(coll_moe_build(&q, f.t, &s, &bal, &err), SIM_OK);
  assert_true(info.fabric_bytes < bal.fabric_bytes);
  assert_true(info.nvlink_bytes < bal.nvlink_bytes);
  coll_plan_free(&q);
  /* a pool drawn for another shape is refused */
  coll_moe_routing other = draw(2, 8, 128, 8, 2, 0, 5);
  s.routing = &other;
  assert_int_equal(coll_moe_build(&q, f.t, &s, NULL, &err), SIM_EINVAL);
  coll_moe_routing_free(&other);
  coll_plan_free(&p);
  coll_moe_routing_free(&r);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_uniform_closed_form),
      cmocka_unit_test(test_node_limit),
      cmocka_unit_test(test_skew_and_seed),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_dispatch_follows_routing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
