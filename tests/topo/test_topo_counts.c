/* Vertex, link and switch counts against the closed forms, full size and
 * partially populated, plus structural invariants every build must satisfy
 * (no switch uses more than radix ports, every leaf has exactly u uplinks,
 * NICs sit where the contract says). */
#include "topo/test_topo_common.h"

/* Walk the graph and check it against the closed forms of `c`. O(V + L). */
static void check_counts(const tcase *c) {
  topo *t = tc_build(c);
  texpect e = tc_expect(c);
  const topo_inventory *inv = topo_inventory_get(t);
  const uint64_t G = c->gpn ? c->gpn : 8, N = c->npn ? c->npn : 8, P = e.planes;

  assert_int_equal(inv->nodes, e.nodes);
  assert_int_equal(topo_node_count(t), e.nodes);
  assert_int_equal(inv->gpus, e.nodes * G);
  assert_int_equal(topo_gpu_count(t), e.nodes * G);
  assert_int_equal(inv->endpoints, e.nodes * N);
  assert_int_equal(inv->max_nodes, e.max_nodes);
  assert_int_equal(inv->planes, P);
  assert_int_equal(inv->tiers, c->tiers);
  assert_int_equal(inv->leaf_up, e.u);
  assert_int_equal(inv->leaf_down, e.d);
  assert_true(fabs(inv->oversubscription - (double)e.d / (double)e.u) < 1e-12);
  assert_int_equal(inv->switches_by_tier[TOPO_TIER_LEAF], P * e.leaves);
  assert_int_equal(inv->switches_by_tier[TOPO_TIER_SPINE], P * e.spines);
  assert_int_equal(inv->switches_by_tier[TOPO_TIER_CORE], P * e.cores);
  assert_int_equal(inv->switches, P * (e.leaves + e.spines + e.cores));
  assert_int_equal(inv->links_endpoint_switch, e.nodes * N);
  assert_int_equal(inv->links_switch_switch, P * (e.ls_links + e.sc_links));
  /* N > G: a PCIe switch a GPU, its link to the GPU and one to each NIC */
  const uint64_t S = N > G ? G : 0;
  assert_int_equal(topo_vertex_count(t), e.nodes * (G + 1 + N + S) + inv->switches);
  assert_int_equal(topo_link_count(t),
                   e.nodes * (G + G + (S ? N : 0) + N) + inv->links_switch_switch);

  /* structure */
  uint64_t kinds[TOPO_PCIE_SWITCH + 1] = {0}, by_tier[4] = {0};
  for (uint32_t v = 0; v < topo_vertex_count(t); v++) {
    const topo_vertex *x = topo_vertex_at(t, v);
    kinds[x->kind]++;
    if (x->kind == TOPO_NIC) {
      uint32_t fabric_ports = 0, i = x->index, node = i / (uint32_t)N, local = i % (uint32_t)N;
      for (uint32_t p = 0; p < x->nports; p++) {
        uint32_t ch = topo_port_channel(t, v, p);
        assert_int_equal(topo_channel_src(t, ch), v);
        const topo_vertex *y = topo_vertex_at(t, topo_channel_dst(t, ch));
        if (y->kind != TOPO_SWITCH) continue;
        fabric_ports++;
        assert_int_equal(y->tier, TOPO_TIER_LEAF);
        assert_int_equal(y->plane, x->plane);
        if (tc_is(c, "rail-optimized"))
          assert_int_equal(y->index, (node / e.d) * N + local); /* leaf (group, rail) */
        else if (tc_is(c, "multi-plane"))
          assert_int_equal(y->index, (node * (N / P) + local / P) / e.d);
        else assert_int_equal(y->index, i / e.d); /* consecutive */
      }
      assert_int_equal(fabric_ports, 1);
      assert_int_equal(x->plane, tc_is(c, "multi-plane") ? local % P : 0);
      continue;
    }
    if (x->kind != TOPO_SWITCH) continue;
    by_tier[x->tier]++;
    assert_true(x->nports <= c->k); /* never more ports than the radix */
    uint32_t to[4] = {0}, nics = 0;
    for (uint32_t p = 0; p < x->nports; p++) {
      const topo_vertex *y = topo_vertex_at(t, topo_channel_dst(t, topo_port_channel(t, v, p)));
      assert_int_equal(y->plane, x->plane);
      if (y->kind == TOPO_NIC) nics++;
      else to[y->tier]++;
    }
    switch (x->tier) {
    case TOPO_TIER_LEAF:
      assert_int_equal(to[TOPO_TIER_SPINE], e.u);
      assert_true(nics >= 1 && nics <= e.d);
      break;
    case TOPO_TIER_SPINE:
      assert_int_equal(nics, 0);
      assert_true(to[TOPO_TIER_LEAF] >= 1 && to[TOPO_TIER_LEAF] <= (c->tiers == 2 ? c->k : e.half));
      assert_int_equal(to[TOPO_TIER_CORE], e.cores ? e.half : 0);
      break;
    default: { /* a bundle of m links to spine c of every pod, c its group */
      assert_int_equal(to[TOPO_TIER_SPINE], e.pods * e.bundle);
      uint32_t per_pod[64] = {0}, group = (uint32_t)(x->index / (e.half / e.bundle));
      for (uint32_t p = 0; p < x->nports; p++) {
        const topo_vertex *y = topo_vertex_at(t, topo_channel_dst(t, topo_port_channel(t, v, p)));
        assert_int_equal(y->index % e.u, group);
        if (y->pod < 64) per_pod[y->pod]++;
      }
      for (uint32_t pod = 0; pod < e.pods && pod < 64; pod++)
        assert_int_equal(per_pod[pod], e.bundle);
      break;
    }
    }
  }
  assert_int_equal(kinds[TOPO_GPU], e.nodes * G);
  assert_int_equal(kinds[TOPO_NVSWITCH], e.nodes);
  assert_int_equal(kinds[TOPO_NIC], e.nodes * N);
  assert_int_equal(kinds[TOPO_PCIE_SWITCH], e.nodes * S);
  assert_int_equal(by_tier[TOPO_TIER_LEAF], P * e.leaves);
  assert_int_equal(by_tier[TOPO_TIER_SPINE], P * e.spines);
  assert_int_equal(by_tier[TOPO_TIER_CORE], P * e.cores);
  topo_free(t);
}

static const uint32_t radices[] = {4, 8, 16, 32, 64};

static void test_full_size_fat_tree(void **state) {
  (void)state;
  static const double os[] = {1, 2, 3};
  for (size_t r = 0; r < 5; r++)
    for (uint32_t tiers = 2; tiers <= 3; tiers++)
      for (size_t o = 0; o < 3; o++) {
        if (radices[r] == 64 && tiers == 3) continue; /* test_radix64_three_tier */
        tcase c = {"fat-tree", radices[r], tiers, 1, os[o], 0, 8, 8};
        check_counts(&c);
      }
}

static void test_full_size_multi_plane(void **state) {
  (void)state;
  static const uint32_t planes[] = {1, 2, 8};
  for (size_t r = 0; r < 5; r++)
    for (uint32_t tiers = 2; tiers <= 3; tiers++)
      for (size_t p = 0; p < 3; p++) {
        if (tiers == 3 && radices[r] >= 32) continue; /* keep the suite fast */
        tcase c = {"multi-plane", radices[r], tiers, planes[p], 1, 0, 8, 8};
        check_counts(&c);
      }
  /* oversubscribed planes */
  tcase c = {"multi-plane", 16, 3, 2, 3, 0, 8, 8};
  check_counts(&c);
}

static void test_full_size_rail(void **state) {
  (void)state;
  static const double os[] = {1, 3};
  for (size_t r = 0; r < 5; r++)
    for (uint32_t tiers = 2; tiers <= 3; tiers++)
      for (size_t o = 0; o < 2; o++) {
        if (radices[r] == 64 && tiers == 3) continue;
        uint32_t n = radices[r] == 4 ? 4 : 8; /* radix-4 2-tier has 4 leaves: 4 rails */
        tcase c = {"rail-optimized", radices[r], tiers, 1, os[o], 0, n, n};
        check_counts(&c);
      }
}

static void test_small_nodes(void **state) {
  (void)state;
  /* NICs shared by GPUs (N < G) and several NICs per GPU (N > G) */
  tcase a = {"fat-tree", 8, 2, 1, 1, 0, 8, 4};
  tcase b = {"fat-tree", 8, 3, 1, 1, 0, 4, 8};
  tcase m = {"multi-plane", 8, 2, 4, 1, 0, 4, 8};
  check_counts(&a);
  check_counts(&b);
  check_counts(&m);
}

static void test_partial_population(void **state) {
  (void)state;
  /* literal closed forms, k = 8, o = 1: u = d = 4, k/2 = 4 */
  struct {
    tcase c;
    uint64_t leaves, spines, cores; /* per plane */
  } cases[] = {
      {{"fat-tree", 8, 2, 1, 1, 3, 8, 8}, 6, 4, 0}, /* 24 NICs on 6 leaves */
      /* 10 leaves, 3 pods: bundles of 2 (3 x 2 of 8 core ports), 2 cores per group */
      {{"fat-tree", 8, 3, 1, 1, 5, 8, 8}, 10, 12, 8},
      {{"fat-tree", 8, 3, 1, 1, 1, 8, 8}, 2, 4, 0},  /* one pod: no cores */
      {{"fat-tree", 8, 3, 1, 3, 7, 8, 8}, 10, 6, 4}, /* u=2,d=6: 56 NICs, 3 pods, bundles of 2 */
      /* 20 NICs per plane, 2 pods: bundles of 4, one core per group */
      {{"multi-plane", 8, 3, 2, 1, 5, 8, 8}, 5, 8, 4},
      {{"multi-plane", 64, 2, 8, 1, 100, 8, 8}, 4, 32, 0},
      {{"rail-optimized", 8, 2, 1, 1, 5, 4, 4}, 8, 4, 0},    /* 2 groups x 4 rails */
      {{"rail-optimized", 8, 3, 1, 1, 9, 8, 8}, 24, 24, 16}, /* 6 pods: no bundle fits */
      {{"rail-optimized", 8, 3, 1, 1, 5, 8, 8}, 16, 16, 8},  /* 4 pods: bundles of 2 */
      /* radix 64, 3:1 (16 up / 48 down): 1,024 nodes fill 171 leaves in 6 pods; bundles of
       * 8 (48 of 64 core ports), 4 cores per group: 64 cores, not 512 */
      {{"fat-tree", 64, 3, 1, 3, 1024, 8, 8}, 171, 96, 64},
      /* radix 64, 1:1: 2,048 nodes, 16 pods: bundles of 4, 8 cores per group */
      {{"fat-tree", 64, 3, 1, 1, 2048, 8, 8}, 512, 512, 256},
      {{"fat-tree", 16, 3, 1, 1, 65, 8, 8}, 65, 72, 64}, /* 9 pods: no bundle > 1 fits 16 */
      /* radix 12 (6 up): 96 NICs on 16 leaves, 3 pods: bundles of 3 (9 of 12 ports) */
      {{"fat-tree", 12, 3, 1, 1, 12, 8, 8}, 16, 18, 12},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    topo *t = tc_build(&cases[i].c);
    const topo_inventory *inv = topo_inventory_get(t);
    uint64_t P = inv->planes;
    assert_int_equal(inv->nodes, cases[i].c.nodes);
    assert_int_equal(inv->switches_by_tier[TOPO_TIER_LEAF], P * cases[i].leaves);
    assert_int_equal(inv->switches_by_tier[TOPO_TIER_SPINE], P * cases[i].spines);
    assert_int_equal(inv->switches_by_tier[TOPO_TIER_CORE], P * cases[i].cores);
    topo_free(t);
    check_counts(&cases[i].c);
  }
}

static void test_deepseek_v3(void **state) {
  (void)state;
  /* radix 64, 2 tiers, 8 planes, 8 GPUs/NICs per node: 2048 nodes, 16,384 GPUs */
  tcase c = {"multi-plane", 64, 2, 8, 1, 0, 8, 8};
  topo *t = tc_build(&c);
  const topo_inventory *inv = topo_inventory_get(t);
  assert_int_equal(inv->max_nodes, 2048);
  assert_int_equal(inv->nodes, 2048);
  assert_int_equal(inv->gpus, 16384);
  assert_int_equal(inv->switches, 8 * (64 + 32));
  assert_int_equal(inv->tiers, 2);
  topo_free(t);
  check_counts(&c);
}

static void test_radix64_three_tier(void **state) {
  (void)state;
  /* k^3/4 = 65,536 endpoints, 5k^2/4 = 5,120 switches */
  tcase c = {"fat-tree", 64, 3, 1, 1, 0, 8, 8};
  topo *t = tc_build(&c);
  const topo_inventory *inv = topo_inventory_get(t);
  assert_int_equal(inv->endpoints, 65536);
  assert_int_equal(inv->switches, 5120);
  assert_int_equal(inv->switches_by_tier[TOPO_TIER_LEAF], 2048);
  assert_int_equal(inv->switches_by_tier[TOPO_TIER_SPINE], 2048);
  assert_int_equal(inv->switches_by_tier[TOPO_TIER_CORE], 1024);
  assert_int_equal(inv->links_switch_switch, 2 * 2048 * 32);
  assert_int_equal(inv->nodes, 8192);
  /* different pods: u * k/2 = 32 * 32 paths */
  assert_int_equal(topo_path_count(t, 0, 65535), 1024);
  texpect e = tc_expect(&c);
  for (uint32_t i = 0; i < 64; i++) tc_check_route(t, &e, 3, i * 997, 65535 - i * 1021, i);
  topo_free(t);
  check_counts(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_full_size_fat_tree), cmocka_unit_test(test_full_size_multi_plane),
      cmocka_unit_test(test_full_size_rail),     cmocka_unit_test(test_small_nodes),
      cmocka_unit_test(test_partial_population), cmocka_unit_test(test_deepseek_v3),
      cmocka_unit_test(test_radix64_three_tier),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
