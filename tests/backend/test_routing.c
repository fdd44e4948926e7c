/* fabric.routing means the same in every fidelity. For each mode (static,
 * ecmp, adaptive, spray): one step of a ring AllReduce (every rank sends its
 * chunk to its ring successor on every channel, as src/coll/ring.c plans it)
 * at 8, 16 and 64 nodes, and a seeded random permutation, take the flow
 * fidelity within 5 % of the packet fidelity. Plus the properties that make
 * it so: static routing is D-mod-K (the closed form), one routing for every
 * fidelity (topo_route is what the packet backend's queue pairs follow), a
 * shift on a full-bisection tree is collision-free under static, adaptive on
 * an idle fabric is static, spray pools count every equal-cost link once.
 *
 * Fabric: 4 GPUs and 4 NICs per node, radix-32 2-tier fat-tree (16 NICs per
 * leaf), 400 Gb/s, InfiniBand; 4 MiB per transfer, so serialization
 * (~84 us) dominates latency and the comparison is about paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/backend.h"
#include "fabsim/coll.h"
#include "fixture.h"
#include "flow/flow_internal.h"

enum { GPN = 4, CHANNELS = 4 };
static const uint64_t XFER = 4u << 20;

/* routing "flowlet": adaptive per flowlet (fabric.adaptive.flowlet_gap 2 us). */
static void load_fabric(fixture *f, uint32_t nodes, const char *routing, uint32_t radix) {
  char n[48], r[48], k[48];
  bool flowlet = strcmp(routing, "flowlet") == 0;
  snprintf(n, sizeof n, "cluster.nodes=%u", nodes);
  snprintf(r, sizeof r, "fabric.routing=%s", flowlet ? "adaptive" : routing);
  snprintf(k, sizeof k, "fabric.switch_radix=%u", radix);
  const char *sets[] = {
      n,
      r,
      k,
      "cluster.gpus_per_node=4",
      "cluster.nic.per_node=4",
      flowlet ? "fabric.adaptive.flowlet_gap=2us" : "fabric.adaptive.flowlet_gap=0s"};
  load(f, sets, 6);
}

/* Seconds until every transfer of x (one phase) has arrived. */
static double phase_time(const fixture *f, const be_xfer *x, size_t n, int fidelity) {
  be_stats st;
  simtime_ps end = fx_phase_end(f, x, n, fidelity, &st);
  assert_int_equal(st.transfers, n);
  return sim_ps_to_s(end);
}

/* The first phase of a ring AllReduce over every GPU, one repetition. */
static be_xfer *ring_step(const fixture *f, size_t *n) {
  uint32_t g = topo_gpu_count(f->t);
  uint32_t *ranks = sim_malloc(g * sizeof *ranks);
  for (uint32_t i = 0; i < g; i++) ranks[i] = i;
  coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                 .algorithm = CFG_ALGO_RING,
                 .bytes = XFER * g * CHANNELS,
                 .ranks = ranks,
                 .nranks = g,
                 .channels = CHANNELS,
                 .chunk = XFER};
  coll_plan p;
  sim_error err = {0};
  assert_int_equal(coll_plan_build(&p, f->t, &s, &err), SIM_OK);
  *n = p.phases[0].n;
  be_xfer *x = sim_malloc(*n * sizeof *x);
  memcpy(x, p.phases[0].x, *n * sizeof *x);
  coll_plan_free(&p);
  sim_free(ranks);
  return x;
}

/* Every GPU sends to another, a seeded random derangement. */
static be_xfer *permutation(const fixture *f, size_t *n) {
  uint32_t g = topo_gpu_count(f->t);
  uint32_t *dst = sim_malloc(g * sizeof *dst);
  sim_rng r;
  sim_rng_init(&r, 7, "test-permutation");
  for (;;) { /* Fisher-Yates until no fixed point */
    for (uint32_t i = 0; i < g; i++) dst[i] = i;
    for (uint32_t i = g - 1; i > 0; i--) {
      uint32_t j = (uint32_t)sim_rng_below(&r, i + 1), t = dst[i];
      dst[i] = dst[j], dst[j] = t;
    }
    uint32_t fixed = 0;
    for (uint32_t i = 0; i < g; i++) fixed += dst[i] == i;
    if (!fixed) break;
  }
  be_xfer *x = sim_calloc(g, sizeof *x);
  for (uint32_t i = 0; i < g; i++)
    x[i] = (be_xfer){.src_gpu = i,
                     .dst_gpu = dst[i],
                     .bytes = XFER,
                     .flow_hash = sim_hash_u64((uint64_t)i << 32 | dst[i])};
  *n = g;
  sim_free(dst);
  return x;
}

/* ("flowlet", adaptive per flowlet, is not among them: the packet backend
 * decides a flowlet on queued bytes, all zero when a phase's transfers start
 * together, so its first choice is a random tie-break kept for the whole
 * continuous transfer, where the analytic and flow fidelities count the
 * transfers already placed: a ring step at 16 nodes takes 172 us in packet,
 * 85 us in flow. See docs/validation.md, "Routing".) */
static const char *const modes[] = {"static", "ecmp", "adaptive", "spray"};

static void compare(const char *what, uint32_t nodes, bool perm) {
  for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
    fixture f;
    size_t n;
    load_fabric(&f, nodes, modes[m], 32);
    be_xfer *x = perm ? permutation(&f, &n) : ring_step(&f, &n);
    double ta = phase_time(&f, x, n, 0), tf = phase_time(&f, x, n, 1), tp = phase_time(&f, x, n, 2);
    printf(
        "  %-11s %2u nodes %-8s analytic %7.2f us  flow %7.2f us  packet %7.2f us  (flow/packet "
        "%.3f)\n",
        what, nodes, modes[m], ta * 1e6, tf * 1e6, tp * 1e6, tf / tp);
    if (fabs(tf - tp) > 0.05 * tp)
      fail_msg("%s %u nodes, routing %s: flow %.4g us vs packet %.4g us", what, nodes, modes[m],
               tf * 1e6, tp * 1e6);
    sim_free(x);
    unload(&f);
  }
}

static void test_ring_8(void **state) {
  (void)state;
  compare("ring step", 8, false);
}
static void test_ring_16(void **state) {
  (void)state;
  compare("ring step", 16, false);
}
static void test_ring_64(void **state) {
  (void)state;
  compare("ring step", 64, false);
}
static void test_permutation(void **state) {
  (void)state;
  compare("permutation", 16, true);
}

/* D-mod-K closed form: at a leaf the up port is D mod w1, at a 3-tier spine
 * floor(D / w1) mod w2, D the NIC's index in its plane; and topo_route takes
 * exactly those ports. 3-tier radix 8 (w1 = w2 = 4), 2 planes. */
static void test_static_is_dmodk(void **state) {
  (void)state;
  const char *sets[] = {
      "fabric.topology=multi-plane", "fabric.planes=2",         "fabric.tiers=3",
      "fabric.switch_radix=8",       "cluster.gpus_per_node=2", "cluster.nic.per_node=2"};
  fixture f;
  load(&f, sets, 6);
  assert_int_equal(f.cfg.fabric.routing, CFG_ROUTING_STATIC); /* InfiniBand default */
  uint32_t g = topo_gpu_count(f.t);
  for (uint32_t s = 0; s < g; s += 3)
    for (uint32_t d = 0; d < g; d++) {
      if (topo_gpu_node(f.t, s) == topo_gpu_node(f.t, d)) continue;
      topo_path p;
      assert_int_equal(topo_route(f.t, s, d, sim_hash_u64(s * 131u + d), &p), SIM_OK);
      uint32_t dnic = topo_gpu_nic(f.t, d);
      uint32_t node = dnic / 2, plane = dnic % 2, idx = node; /* 1 NIC per node per plane */
      for (uint32_t j = 0; j < p.n; j++) {
        const topo_vertex *x = topo_vertex_at(f.t, topo_channel_src(f.t, p.ch[j]));
        const topo_vertex *y = topo_vertex_at(f.t, topo_channel_dst(f.t, p.ch[j]));
        if (x->kind != TOPO_SWITCH || y->kind != TOPO_SWITCH || y->tier < x->tier) continue;
        assert_int_equal(x->plane, (int)plane);
        if (x->tier == TOPO_TIER_LEAF)
          assert_int_equal(y->index % 4, idx % 4); /* spine c = D mod 4 */
        if (x->tier == TOPO_TIER_SPINE) assert_int_equal(y->index % 4, (idx / 4) % 4); /* core j */
      }
    }
  unload(&f);
}

/* Shift permutations on a full-bisection 2-tier tree: under static routing
 * no channel carries two transfers (every shift); ECMP collides on some. */
static void test_static_shift_collision_free(void **state) {
  (void)state;
  fixture f, e;
  load_fabric(&f, 32, "static", 32);
  load_fabric(&e, 32, "ecmp", 32);
  uint32_t g = topo_gpu_count(f.t), nch = 2 * topo_link_count(f.t), ecmp_worst = 0;
  uint32_t *use = sim_calloc(nch, sizeof *use), *use_e = sim_calloc(nch, sizeof *use_e);
  for (uint32_t shift = 1; shift < g; shift++) {
    memset(use, 0, nch * sizeof *use);
    memset(use_e, 0, nch * sizeof *use_e);
    for (uint32_t s = 0; s < g; s++) {
      uint32_t d = (s + shift) % g;
      if (topo_gpu_node(f.t, s) == topo_gpu_node(f.t, d)) continue;
      topo_path p;
      assert_int_equal(topo_route(f.t, s, d, sim_hash_u64(s), &p), SIM_OK);
      for (uint32_t j = 0; j < p.n; j++)
        if (topo_link_at(f.t, topo_channel_link(p.ch[j]))->kind == TOPO_LINK_FABRIC)
          assert_int_equal(++use[p.ch[j]], 1);
      assert_int_equal(topo_route(e.t, s, d, sim_hash_u64(s), &p), SIM_OK);
      for (uint32_t j = 0; j < p.n; j++)
        if (++use_e[p.ch[j]] > ecmp_worst &&
            topo_link_at(e.t, topo_channel_link(p.ch[j]))->kind == TOPO_LINK_FABRIC)
          ecmp_worst = use_e[p.ch[j]];
    }
  }
  assert_true(ecmp_worst >= 2);
  sim_free(use);
  sim_free(use_e);
  unload(&f);
  unload(&e);
}

/* Adaptive on an idle fabric takes the static path; with load on that path
 * it moves to the least-loaded port, and the choice is deterministic. */
static void test_adaptive(void **state) {
  (void)state;
  fixture f;
  load_fabric(&f, 8, "adaptive", 32);
  uint32_t nch = 2 * topo_link_count(f.t), far = topo_gpu_count(f.t) - 1;
  uint32_t *ld = sim_calloc(nch, sizeof *ld);
  topo_path a, s, b, c;
  assert_int_equal(topo_route_adaptive(f.t, NULL, 0, far, 1, ld, &a), SIM_OK);
  const char *st[] = {"cluster.nodes=8", "fabric.routing=static", "fabric.switch_radix=32",
                      "cluster.gpus_per_node=4", "cluster.nic.per_node=4"};
  fixture g;
  load(&g, st, 5);
  assert_int_equal(topo_route(g.t, 0, far, 1, &s), SIM_OK);
  assert_int_equal(a.n, s.n);
  assert_memory_equal(a.ch, s.ch, a.n * sizeof a.ch[0]);
  for (uint32_t j = 0; j < a.n; j++) ld[a.ch[j]]++;
  assert_int_equal(topo_route_adaptive(f.t, NULL, 0, far, 1, ld, &b), SIM_OK);
  assert_int_equal(topo_route_adaptive(f.t, NULL, 0, far, 1, ld, &c), SIM_OK);
  assert_memory_equal(b.ch, c.ch, b.n * sizeof b.ch[0]);
  uint32_t shared = 0;
  for (uint32_t j = 0; j < b.n; j++)
    shared +=
        topo_link_at(f.t, topo_channel_link(b.ch[j]))->kind == TOPO_LINK_FABRIC && ld[b.ch[j]];
  assert_int_equal(shared, 0); /* the second transfer avoids the first's fabric links */
  sim_free(ld);
  unload(&f);
  unload(&g);
}

/* ECMP hashes each queue pair's entropy: splitting every transfer over 4
 * queue pairs (NCCL_IB_QPS_PER_CONNECTION-style, each with its own flow
 * hash) spreads a ring step that collides on one (64 nodes) and shortens it;
 * static routing does not depend on the hash at all. Analytic fidelity. */
static void test_ecmp_queue_pairs(void **state) {
  (void)state;
  double t[2][2];
  for (int r = 0; r < 2; r++)
    for (int q = 0; q < 2; q++) {
      fixture f;
      load_fabric(&f, 64, r ? "static" : "ecmp", 32);
      uint32_t g = topo_gpu_count(f.t);
      uint32_t *ranks = sim_malloc(g * sizeof *ranks);
      for (uint32_t i = 0; i < g; i++) ranks[i] = i;
      coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                     .algorithm = CFG_ALGO_RING,
                     .bytes = XFER * g * CHANNELS,
                     .ranks = ranks,
                     .nranks = g,
                     .channels = CHANNELS,
                     .chunk = XFER,
                     .qps = q ? 4 : 1};
      coll_plan p;
      sim_error err = {0};
      assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
      t[r][q] = phase_time(&f, p.phases[0].x, p.phases[0].n, 0);
      coll_plan_free(&p);
      sim_free(ranks);
      unload(&f);
    }
  printf("  ring step, 64 nodes: ecmp 1 QP %.2f us, 4 QPs %.2f us; static %.2f / %.2f us\n",
         t[0][0] * 1e6, t[0][1] * 1e6, t[1][0] * 1e6, t[1][1] * 1e6);
  assert_true(t[0][1] < 0.8 * t[0][0]);
  assert_true(fabs(t[1][1] - t[1][0]) < 0.01 * t[1][0]);
}

/* Spray pools: every fabric link of a 3-tier fabric is in exactly one pool,
 * pools partition them, a pool's capacity is members x link rate. */
static void test_spray_pools(void **state) {
  (void)state;
  const char *sets[] = {"fabric.tiers=3", "fabric.switch_radix=8", "cluster.gpus_per_node=2",
                        "cluster.nic.per_node=2", "fabric.routing=spray"};
  fixture f;
  load(&f, sets, 5);
  uint32_t nch = 2 * topo_link_count(f.t), np = topo_pool_count(f.t), fabric = 0, members = 0;
  for (uint32_t c = 0; c < nch; c++) {
    const topo_vertex *x = topo_vertex_at(f.t, topo_channel_src(f.t, c));
    const topo_vertex *y = topo_vertex_at(f.t, topo_channel_dst(f.t, c));
    bool sw = x->kind == TOPO_SWITCH && y->kind == TOPO_SWITCH;
    uint32_t p = topo_spray_channel(f.t, c);
    if (!sw) assert_int_equal(p, c);
    else assert_true(p >= nch && p < nch + np), fabric++;
  }
  uint32_t *m = sim_malloc(1024 * sizeof *m);
  for (uint32_t p = nch; p < nch + np; p++) {
    uint32_t k = topo_pool_members(f.t, p, m, 1024);
    assert_true(k >= 1 && k <= 1024);
    for (uint32_t i = 0; i < k; i++) assert_int_equal(topo_spray_channel(f.t, m[i]), p);
    assert_int_equal(topo_pool_bps(f.t, p),
                     (uint64_t)k * topo_link_at(f.t, topo_channel_link(m[0]))->bps);
    members += k;
  }
  assert_int_equal(members, fabric);
  sim_free(m);
  unload(&f);
}

/* A pool's capacity under link faults (flow fidelity): spray splits evenly
 * over the members that are up, so the slowest binds (members up x
 * slowest); adaptive per packet follows capacity (the sum). One up link of
 * leaf0 at half rate, then down. */
static void test_pool_faults(void **state) {
  (void)state;
  for (int spray = 0; spray < 2; spray++) {
    fixture f;
    load_fabric(&f, 8, spray ? "spray" : "adaptive", 32);
    sim_ctx *sim = sim_create(1);
    be_backend *b = be_flow_create(sim, f.t, &f.cfg);
    const flow__net *net = flow__backend_net(b);
    uint32_t leaf = topo_nic_leaf(f.t, 0), ch = UINT32_MAX;
    const topo_vertex *x = topo_vertex_at(f.t, leaf);
    ch = topo_port_channel(f.t, leaf, x->nports - 1); /* its last up link */
    uint32_t pool = topo_spray_channel(f.t, ch), up = topo_pool_members(f.t, pool, NULL, 0);
    double bps = (double)topo_link_at(f.t, topo_channel_link(ch))->bps;
    assert_true(pool >= 2 * topo_link_count(f.t) && up == 16);
    assert_true(net->cap[pool] == up * bps);
    b->ops->link_state(b, topo_channel_link(ch), 0.5, 0.0);
    assert_true(fabs(net->cap[pool] - (spray ? up * 0.5 * bps : (up - 0.5) * bps)) < 1.0);
    b->ops->link_state(b, topo_channel_link(ch), 0.0, 0.0);
    assert_true(fabs(net->cap[pool] - (up - 1) * bps) < 1.0);
    be_destroy(b);
    sim_destroy(sim);
    unload(&f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_static_is_dmodk),  cmocka_unit_test(test_static_shift_collision_free),
      cmocka_unit_test(test_adaptive),         cmocka_unit_test(test_spray_pools),
      cmocka_unit_test(test_ecmp_queue_pairs), cmocka_unit_test(test_pool_faults),
      cmocka_unit_test(test_ring_8),           cmocka_unit_test(test_ring_16),
      cmocka_unit_test(test_permutation),
  };
  /* make check-long (FABSIM_TEST_LONG): the ring at 64 nodes, 16 leaves.
   * Every mode gives the figures of 8 and 16 nodes (2 and 4 leaves) there,
   * at four times the packet events of 16 nodes: 80 % of this test's time. */
  const struct CMUnitTest long_tests[] = {cmocka_unit_test(test_ring_64)};
  const char *long_cases = getenv("FABSIM_TEST_LONG");
  if (long_cases && strcmp(long_cases, "0") != 0)
    return cmocka_run_group_tests_name("long", long_tests, NULL, NULL);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
