/* Routing: every route is a valid up/down chain from GPU to GPU with the
 * closed-form length and path count; cross-plane pairs go over NVLink first;
 * ECMP is deterministic and spreads; next hops; latency and bottleneck. */
#include "topo/test_topo_common.h"

static void all_pairs(const tcase *c) {
  topo *t = tc_build(c);
  texpect e = tc_expect(c);
  uint32_t n = topo_gpu_count(t);
  for (uint32_t s = 0; s < n; s++)
    for (uint32_t d = 0; d < n; d++)
      if (s != d) tc_check_route(t, &e, c->tiers, s, d, (uint64_t)s * n + d);
  topo_free(t);
}

static void sampled_pairs(const tcase *c, uint32_t samples) {
  topo *t = tc_build(c);
  texpect e = tc_expect(c);
  uint32_t n = topo_gpu_count(t);
  uint64_t x = 88172645463325252ULL; /* xorshift: fixed, reproducible pairs */
  for (uint32_t i = 0; i < samples; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint32_t s = (uint32_t)(x % n), d = (uint32_t)((x >> 32) % n);
    if (s != d) tc_check_route(t, &e, c->tiers, s, d, x);
  }
  topo_free(t);
}

static void test_routes_all_pairs(void **state) {
  (void)state;
  const tcase cases[] = {
      {"fat-tree", 8, 2, 1, 1, 0, 8, 8},    /* 32 GPUs */
      {"fat-tree", 4, 3, 1, 1, 0, 2, 2},    /* 16 GPUs, 4 pods */
      {"fat-tree", 8, 3, 1, 3, 0, 8, 8},    /* 192 GPUs, u = 2 */
      {"fat-tree", 8, 3, 1, 2, 5, 8, 4},    /* partial, shared NICs */
      {"multi-plane", 8, 2, 2, 1, 0, 8, 8}, /* 64 GPUs */
      {"multi-plane", 4, 3, 8, 1, 0, 8, 8}, /* 128 GPUs, 8 planes */
      {"multi-plane", 8, 2, 4, 1, 0, 4, 8}, /* 2 NICs per GPU */
      {"multi-plane", 8, 3, 2, 1, 5, 8, 8}, /* partial, 2 pods */
      {"rail-optimized", 8, 2, 1, 1, 0, 4, 4},
      {"rail-optimized", 8, 3, 1, 1, 0, 4, 4}, /* 128 GPUs */
      {"rail-optimized", 8, 3, 1, 1, 9, 8, 8}, /* partial */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) all_pairs(&cases[i]);
}

static void test_routes_sampled_large(void **state) {
  (void)state;
  const tcase cases[] = {
      {"fat-tree", 32, 3, 1, 1, 0, 8, 8},       {"multi-plane", 16, 3, 8, 1, 0, 8, 8},
      {"multi-plane", 64, 2, 8, 1, 0, 8, 8},    {"rail-optimized", 16, 3, 1, 1, 0, 8, 8},
      {"rail-optimized", 32, 2, 1, 3, 0, 8, 8},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) sampled_pairs(&cases[i], 3000);
}

static void test_path_counts(void **state) {
  (void)state;
  {
    /* k = 8, o = 1: u = 4; 2 GPUs/NICs per node, so nodes 0 and 1 share leaf0 */
    tcase c = {"fat-tree", 8, 2, 1, 1, 0, 2, 2};
    topo *t = tc_build(&c);
    assert_int_equal(topo_path_count(t, 0, 1), 1); /* same node */
    assert_int_equal(topo_path_count(t, 0, 2), 1); /* same leaf */
    assert_int_equal(topo_path_count(t, 0, 4), 4); /* leaf0 -> leaf1 over 4 spines */
    assert_int_equal(topo_path_count(t, 0, 0), 0);
    topo_free(t);
  }
  {
    /* 3-tier, k = 8: a pod is 4 leaves of 4 NICs = nodes 0 and 1 */
    tcase c = {"fat-tree", 8, 3, 1, 1, 0, 8, 8};
    topo *t = tc_build(&c);
    assert_int_equal(topo_path_count(t, 0, 4), 1);   /* same node, two leaves: NVLink */
    assert_int_equal(topo_path_count(t, 0, 8), 4);   /* same pod, other leaf: u */
    assert_int_equal(topo_path_count(t, 0, 16), 16); /* other pod: u * k/2 */
    topo_free(t);
  }
  {
    tcase c = {"fat-tree", 8, 3, 1, 3, 0, 8, 8}; /* u = 2, d = 6 */
    topo *t = tc_build(&c);
    assert_int_equal(topo_path_count(t, 0, 8), 2);          /* NIC 8 on leaf 1, same pod */
    assert_int_equal(topo_path_count(t, 0, 24 * 8 - 1), 8); /* last pod: 2 * 4 */
    topo_free(t);
  }
  {
    /* DeepSeek-V3 shape: 8 planes, leaf = 32 nodes; other leaf = u = 32 spines */
    tcase c = {"multi-plane", 64, 2, 8, 1, 0, 8, 8};
    topo *t = tc_build(&c);
    assert_int_equal(topo_path_count(t, 0, 8 * 31), 1);
    assert_int_equal(topo_path_count(t, 0, 8 * 32), 32);
    assert_int_equal(topo_path_count(t, 0, 8 * 32 + 3), 32); /* cross-plane too */
    topo_free(t);
  }
}

/* gpu0 and gpu4 share node 0 (on different leaves): the scale-up switch. */
static void test_same_node_path(void **state) {
  (void)state;
  tcase c = {"fat-tree", 8, 3, 1, 1, 0, 8, 8};
  topo *t = tc_build(&c);
  topo_path p;
  assert_int_equal(topo_route(t, 0, 4, 7, &p), SIM_OK);
  assert_int_equal(p.n, 2);
  const topo_link *a = topo_link_at(t, topo_channel_link(p.ch[0]));
  assert_int_equal(a->kind, TOPO_LINK_SCALE_UP);
  assert_int_equal(topo_vertex_at(t, topo_channel_dst(t, p.ch[0]))->kind, TOPO_NVSWITCH);
  assert_int_equal(topo_route(t, 3, 3, 0, &p), SIM_EINVAL);
  assert_int_equal(topo_route(t, 0, topo_gpu_count(t), 0, &p), SIM_EINVAL);
  topo_free(t);
}

static void test_cross_plane_nvlink(void **state) {
  (void)state;
  tcase c = {"multi-plane", 8, 2, 8, 1, 0, 8, 8};
  topo *t = tc_build(&c);
  topo_path p;
  /* gpu0 (plane 0) -> gpu9 (node 1, NIC 9 on plane 1): NVLink to gpu1 first */
  assert_int_equal(topo_route(t, 0, 9, 1, &p), SIM_OK);
  assert_int_equal(topo_link_at(t, topo_channel_link(p.ch[0]))->kind, TOPO_LINK_SCALE_UP);
  assert_int_equal(topo_channel_dst(t, p.ch[1]), topo_gpu_vertex(t, 1));
  assert_int_equal(topo_link_at(t, topo_channel_link(p.ch[2]))->kind, TOPO_LINK_PCIE);
  assert_int_equal(topo_channel_dst(t, p.ch[2]), topo_nic_vertex(t, 1));
  for (uint32_t i = 3; i + 2 < p.n; i++) {
    const topo_vertex *x = topo_vertex_at(t, topo_channel_dst(t, p.ch[i]));
    if (x->kind == TOPO_SWITCH) assert_int_equal(x->plane, 1);
  }
  /* every cross-plane pair crosses NVLink, every same-plane pair does not */
  texpect e = tc_expect(&c);
  for (uint32_t s = 0; s < 8; s++)
    for (uint32_t d = 8; d < topo_gpu_count(t); d += 3) {
      assert_int_equal(topo_route(t, s, d, d, &p), SIM_OK);
      uint32_t nv = 0;
      for (uint32_t i = 0; i < p.n; i++)
        nv += topo_link_at(t, topo_channel_link(p.ch[i]))->kind == TOPO_LINK_SCALE_UP;
      assert_int_equal(nv, s % 8 == d % 8 ? 0 : 2);
      tc_check_route(t, &e, 2, s, d, d);
    }
  topo_free(t);
}

static void test_rail_through_spine(void **state) {
  (void)state;
  tcase c = {"rail-optimized", 8, 2, 1, 1, 0, 4, 4}; /* d = 4 nodes per group */
  topo *t = tc_build(&c);
  topo_path p;
  /* gpu0 (node 0, rail 0) -> gpu5 (node 1, rail 1): leaf(0,0) -> spine -> leaf(0,1) */
  assert_int_equal(topo_route(t, 0, 5, 3, &p), SIM_OK);
  assert_int_equal(p.n, 6);
  for (uint32_t i = 0; i < p.n; i++)
    assert_int_not_equal(topo_link_at(t, topo_channel_link(p.ch[i]))->kind, TOPO_LINK_SCALE_UP);
  assert_int_equal(topo_channel_dst(t, p.ch[1]), topo_switch_vertex(t, 0, TOPO_TIER_LEAF, 0));
  assert_int_equal(topo_vertex_at(t, topo_channel_dst(t, p.ch[2]))->tier, TOPO_TIER_SPINE);
  assert_int_equal(topo_channel_dst(t, p.ch[3]), topo_switch_vertex(t, 0, TOPO_TIER_LEAF, 1));
  assert_int_equal(topo_path_count(t, 0, 5), 4);
  /* same rail, same group: one leaf */
  assert_int_equal(topo_path_count(t, 0, 4), 1);
  topo_free(t);
}

static void test_ecmp(void **state) {
  (void)state;
  tcase c = {"fat-tree", 8, 3, 1, 1, 0, 8, 8};
  const char *ecmp[] = {"fabric.routing=ecmp"}; /* InfiniBand defaults to static */
  topo *t;
  sim_error err0;
  assert_int_equal(tc_build_extra(&c, ecmp, 1, &t, &err0), SIM_OK);
  uint32_t leaf = topo_nic_leaf(t, 0);
  bool used[8] = {false}, core_used[32] = {false};
  uint32_t cores = 0;
  for (uint64_t f = 0; f < 512; f++) {
    topo_path a, b;
    assert_int_equal(topo_route(t, 0, 127, f, &a), SIM_OK);
    assert_int_equal(topo_route(t, 0, 127, f, &b), SIM_OK);
    assert_int_equal(a.n, b.n); /* deterministic */
    assert_memory_equal(a.ch, b.ch, a.n * sizeof a.ch[0]);
    uint32_t spine = topo_channel_dst(t, a.ch[2]);
    assert_int_equal(topo_channel_src(t, a.ch[2]), leaf);
    used[topo_vertex_at(t, spine)->index % 4] = true;
    uint32_t core = topo_vertex_at(t, topo_channel_dst(t, a.ch[3]))->index;
    if (!core_used[core]) cores++;
    core_used[core] = true;
    uint32_t pick = topo_ecmp_pick(t, leaf, f, 5);
    assert_true(pick < 5);
    assert_int_equal(pick, topo_ecmp_pick(t, leaf, f, 5));
    assert_int_equal(topo_ecmp_pick(t, leaf, f, 1), 0);
  }
  for (int i = 0; i < 4; i++) assert_true(used[i]); /* all 4 spines */
  assert_int_equal(cores, 16);                      /* all u * k/2 cores */

  /* another hash seed changes choices */
  const char *seed[] = {"fabric.ecmp.hash_seed=12345", "fabric.routing=ecmp"};
  topo *t2;
  sim_error err;
  assert_int_equal(tc_build_extra(&c, seed, 2, &t2, &err), SIM_OK);
  uint32_t differ = 0;
  for (uint64_t f = 0; f < 64; f++)
    differ += topo_ecmp_pick(t, leaf, f, 4) != topo_ecmp_pick(t2, leaf, f, 4);
  assert_true(differ > 0);
  topo_free(t2);
  topo_free(t);
}

static void test_next_hops(void **state) {
  (void)state;
  tcase c = {"multi-plane", 8, 3, 2, 1, 0, 8, 8}; /* per plane: 128 NICs, 8 pods */
  topo *t = tc_build(&c);
  uint32_t out[16];
  /* NIC 0 (plane 0) on p0.leaf0; NIC 2 also plane 0, endpoint 1, same leaf */
  uint32_t leaf0 = topo_switch_vertex(t, 0, TOPO_TIER_LEAF, 0);
  assert_int_equal(topo_nic_leaf(t, 0), leaf0);
  assert_int_equal(topo_next_hops(t, leaf0, 2, out, 16), 1);
  assert_int_equal(topo_channel_dst(t, out[0]), topo_nic_vertex(t, 2));
  /* remote: every up port, each to a spine of pod 0 */
  uint32_t far = topo_nic_count(t) - 2; /* plane 0, last pod */
  assert_int_equal(topo_next_hops(t, leaf0, far, out, 16), 4);
  for (int i = 0; i < 4; i++) {
    const topo_vertex *s = topo_vertex_at(t, topo_channel_dst(t, out[i]));
    assert_int_equal(s->tier, TOPO_TIER_SPINE);
    assert_int_equal(s->pod, 0);
  }
  assert_int_equal(topo_next_hops(t, leaf0, far, out, 2), 2); /* max respected */
  /* spine of pod 0: up to the 4 cores of its group; a core: down to the pod */
  uint32_t spine = topo_channel_dst(t, out[1]);
  assert_int_equal(topo_next_hops(t, spine, far, out, 16), 4);
  uint32_t core = topo_channel_dst(t, out[0]);
  assert_int_equal(topo_vertex_at(t, core)->tier, TOPO_TIER_CORE);
  assert_int_equal(topo_next_hops(t, core, far, out, 16), 1);
  assert_int_equal(topo_vertex_at(t, topo_channel_dst(t, out[0]))->pod, 7);
  /* wrong plane, GPUs, the destination NIC itself: nothing */
  assert_int_equal(topo_next_hops(t, leaf0, 1, out, 16), 0);
  assert_int_equal(topo_next_hops(t, topo_gpu_vertex(t, 0), far, out, 16), 0);
  assert_int_equal(topo_next_hops(t, topo_nic_vertex(t, far), far, out, 16), 0);
  /* a NIC's next hop is its leaf */
  assert_int_equal(topo_next_hops(t, topo_nic_vertex(t, 0), far, out, 16), 1);
  assert_int_equal(topo_channel_dst(t, out[0]), leaf0);
  topo_free(t);
}

static void test_latency_bottleneck(void **state) {
  (void)state;
  tcase c = {"fat-tree", 8, 2, 1, 1, 0, 8, 8};
  const char *sets[] = {
      "cluster.scale_up.latency=500ns",      "cluster.nic.latency=200ns",
      "cluster.pcie.latency=150ns",          "fabric.link_latency=100ns",
      "fabric.switch_latency=300ns",         "cluster.nic.bandwidth=400Gbps",
      "fabric.link_bandwidth=800Gbps",       "cluster.pcie.bandwidth=512Gbps",
      "cluster.scale_up.bandwidth=3600Gbps",
  };
  topo *t;
  sim_error err;
  assert_int_equal(tc_build_extra(&c, sets, 9, &t, &err), SIM_OK);
  topo_path p;
  assert_int_equal(topo_route(t, 0, 1, 0, &p), SIM_OK);
  assert_int_equal(topo_path_latency(t, &p), 500 * SIM_PS_PER_NS);
  /* achievable rates: line x efficiency (NVLink 0.824, NIC 0.92 by default) */
  assert_int_equal(topo_path_bottleneck(t, &p), 2966400000000ULL); /* 3.6e12 x 0.824 */
  /* gpu0 -> gpu31: PCIe, NIC, link, leaf, link, spine, link, leaf, link, NIC, PCIe */
  assert_int_equal(topo_route(t, 0, 31, 0, &p), SIM_OK);
  assert_int_equal(topo_path_latency(t, &p),
                   (2 * 150 + 2 * 200 + 4 * 100 + 3 * 300) * SIM_PS_PER_NS);
  assert_int_equal(topo_path_bottleneck(t, &p), 368000000000ULL);
  topo_free(t);
}

/* Two NICs a GPU (16 a node of 8 GPUs): GPU g's NICs are 2g and 2g+1 of
 * its node, both behind the GPU's PCIe switch pcisw<g>; a transfer's flow
 * hash picks one (its top byte's selector mod 2, topo_flow_hash_nic), the
 * same index at both ends, and the route leaves and enters through those
 * NICs (the switch's link to each), always over the GPU's one link to its
 * switch, so the two NICs share that link's rate. One NIC a GPU: the
 * selector changes nothing, and there is no PCIe switch. */
static void test_two_nics_per_gpu(void **state) {
  (void)state;
  tcase c = {"fat-tree", 16, 2, 1, 1, 2, 8, 16};
  topo *t = tc_build(&c);
  assert_int_equal(topo_nics_per_gpu(t), 2);
  uint32_t seen[32] = {0};
  for (uint32_t sel = 0; sel < 4; sel++) {
    uint64_t h = topo_flow_hash_nic(0x123456789abcdefull, sel);
    assert_int_equal(h & ~(0xffull << 56), 0x123456789abcdefull & ~(0xffull << 56));
    for (uint32_t g = 0; g < 8; g++) {
      uint32_t nic = topo_xfer_nic(t, g, h);
      assert_int_equal(nic, 2 * g + sel % 2);
      topo_path p;
      assert_int_equal(topo_route(t, g, 8 + g, h, &p), SIM_OK);
      /* GPU -> its switch (the same link for either NIC) -> that NIC, and
       * NIC -> switch -> GPU at the far end */
      char name[64];
      uint32_t sw = topo_channel_dst(t, p.ch[0]), up = topo_channel_link(p.ch[0]);
      assert_int_equal(topo_vertex_at(t, sw)->kind, TOPO_PCIE_SWITCH);
      snprintf(name, sizeof name, "gpu%u-pcisw%u", g, g);
      assert_int_equal(topo_find_link(t, name, &up), SIM_OK);
      assert_int_equal(topo_channel_link(p.ch[0]), up);
      assert_int_equal(topo_link_at(t, up)->kind, TOPO_LINK_PCIE);
      assert_int_equal(topo_link_at(t, up)->bps, topo_link_at(t, topo_channel_link(p.ch[1]))->bps);
      assert_int_equal(topo_channel_dst(t, p.ch[1]), topo_nic_vertex(t, nic));
      assert_int_equal(topo_channel_src(t, p.ch[p.n - 2]),
                       topo_nic_vertex(t, topo_xfer_nic(t, 8 + g, h)));
      /* GPU to NIC is cluster.pcie.latency in all, the switch in between */
      assert_int_equal(
          topo_link_at(t, up)->latency + topo_link_at(t, topo_channel_link(p.ch[1]))->latency,
          200 * SIM_PS_PER_NS); /* the default */
      assert_int_equal(topo_xfer_nic(t, 8 + g, h) - 16, nic);
      seen[nic]++;
    }
  }
  for (uint32_t i = 0; i < 16; i++) assert_int_equal(seen[i], 2);
  topo_free(t);
  tcase one = {"fat-tree", 16, 2, 1, 1, 2, 8, 8};
  t = tc_build(&one);
  assert_int_equal(topo_nics_per_gpu(t), 1);
  for (uint32_t sel = 0; sel < 2; sel++)
    assert_int_equal(topo_xfer_nic(t, 3, topo_flow_hash_nic(42, sel)), topo_gpu_nic(t, 3));
  topo_free(t);
}

/* The NICs' achievable rate: NCCL's (cluster.nic.efficiency 0.92) for
 * collectives and everything else, an RDMA write stream's
 * (cluster.nic.rdma_efficiency 0.9375, perftest's) for workload.kind
 * traffic. Fails without the traffic rate (0.92 for both). */
static void test_rdma_rate_for_traffic(void **state) {
  (void)state;
  tcase c = {"fat-tree", 8, 2, 1, 1, 2, 8, 8};
  static const char *const kinds[] = {"workload.kind=collective", "workload.kind=traffic"};
  static const rate_bps want[] = {368000000000ULL, 375000000000ULL};
  for (int i = 0; i < 2; i++) {
    const char *sets[] = {kinds[i], "cluster.nic.bandwidth=400Gbps"};
    topo *t;
    sim_error err;
    assert_int_equal(tc_build_extra(&c, sets, 2, &t, &err), SIM_OK);
    topo_path p;
    assert_int_equal(topo_route(t, 0, 8, 0, &p), SIM_OK);
    assert_int_equal(topo_path_bottleneck(t, &p), want[i]);
    topo_free(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_nics_per_gpu),
      cmocka_unit_test(test_rdma_rate_for_traffic),
      cmocka_unit_test(test_routes_all_pairs),
      cmocka_unit_test(test_routes_sampled_large),
      cmocka_unit_test(test_path_counts),
      cmocka_unit_test(test_same_node_path),
      cmocka_unit_test(test_cross_plane_nvlink),
      cmocka_unit_test(test_rail_through_spine),
      cmocka_unit_test(test_ecmp),
      cmocka_unit_test(test_next_hops),
      cmocka_unit_test(test_latency_bottleneck),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
