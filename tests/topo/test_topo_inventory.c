/* Inventory: bisection bandwidth, optics and cost against hand-computed
 * figures; configuration errors and their messages. */
#include "topo/test_topo_common.h"

static const topo_inventory *build_inv(const tcase *c, const char *const *sets, int n, topo **t) {
  sim_error err = {0};
  if (tc_build_extra(c, sets, n, t, &err) != SIM_OK) fail_msg("build: %s", err.msg);
  return topo_inventory_get(*t);
}

static void test_bisection(void **state) {
  (void)state;
  const char *bw400[] = {"cluster.nic.bandwidth=400Gbps", "fabric.link_bandwidth=400Gbps"};
  const char *nic200[] = {"cluster.nic.bandwidth=200Gbps", "fabric.link_bandwidth=400Gbps"};
  const char *link100[] = {"cluster.nic.bandwidth=400Gbps", "fabric.link_bandwidth=100Gbps"};
  struct {
    tcase c;
    const char *const *sets;
    uint64_t bps;
  } cases[] = {
      /* min(E*nic, L*u*link [, pods*u*k/2*link]) / 2, summed over planes */
      {{"fat-tree", 8, 2, 1, 1, 0, 8, 8}, bw400, 6400000000000ULL},        /* 32x400G, 32 links */
      {{"fat-tree", 8, 2, 1, 3, 0, 8, 8}, bw400, 3200000000000ULL},        /* 8 leaves x 2 up */
      {{"fat-tree", 8, 3, 1, 1, 0, 8, 8}, bw400, 25600000000000ULL},       /* 128 x 400G / 2 */
      {{"fat-tree", 8, 3, 1, 1, 0, 8, 8}, link100, 6400000000000ULL},      /* 128 x 100G / 2 */
      {{"multi-plane", 8, 2, 2, 1, 0, 8, 8}, bw400, 12800000000000ULL},    /* 2 planes */
      {{"fat-tree", 8, 2, 1, 1, 0, 8, 8}, nic200, 3200000000000ULL},       /* NIC-bound */
      {{"fat-tree", 8, 2, 1, 1, 2, 2, 2}, bw400, 800000000000ULL},         /* one leaf */
      {{"multi-plane", 64, 2, 8, 1, 0, 8, 8}, bw400, 3276800000000000ULL}, /* DeepSeek-V3 */
      {{"rail-optimized", 8, 2, 1, 1, 0, 4, 4}, bw400, 6400000000000ULL},
      {{"rail-optimized", 8, 2, 1, 1, 0, 4, 4}, link100, 1600000000000ULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    topo *t;
    const topo_inventory *inv = build_inv(&cases[i].c, cases[i].sets, 2, &t);
    if (inv->bisection_bandwidth_bps != cases[i].bps)
      fail_msg("case %zu: bisection %llu, want %llu", i,
               (unsigned long long)inv->bisection_bandwidth_bps, (unsigned long long)cases[i].bps);
    topo_free(t);
  }
}

static void test_cost(void **state) {
  (void)state;
  tcase c = {"fat-tree", 8, 2, 1, 1, 0, 8, 8}; /* 12 switches, 32 NICs, 32 + 32 links */
  const char *copper[] = {"cost.switch_usd=1000", "cost.nic_usd=100", "cost.transceiver_usd=10",
                          "cost.cable_usd=1", "cost.optical_endpoint_links=false"};
  const char *optical[] = {"cost.switch_usd=1000", "cost.nic_usd=100", "cost.transceiver_usd=10",
                           "cost.cable_usd=1", "cost.optical_endpoint_links=true"};
  topo *t;
  const topo_inventory *inv = build_inv(&c, copper, 5, &t);
  assert_int_equal(inv->switches, 12);
  assert_int_equal(inv->links_switch_switch, 32);
  assert_int_equal(inv->links_endpoint_switch, 32);
  assert_int_equal(inv->transceivers, 64);
  assert_int_equal(inv->copper_cables, 32);
  assert_true(fabs(inv->cost_usd - 15872.0) < 1e-6);
  assert_true(fabs(inv->cost_per_endpoint_usd - 496.0) < 1e-9);
  topo_free(t);
  inv = build_inv(&c, optical, 5, &t);
  assert_int_equal(inv->transceivers, 128);
  assert_int_equal(inv->copper_cables, 0);
  assert_true(fabs(inv->cost_usd - 16480.0) < 1e-6);
  assert_true(fabs(inv->cost_per_endpoint_usd - 515.0) < 1e-9);
  topo_free(t);
}

/* A partial fabric is priced for what its nodes need (#13): one node of 8
 * GPUs on a radix-64 fat-tree is one leaf (its 8 NICs on 8 of 32 down
 * ports), no spine; the full build (64 leaves, 32 spines, 2,048 leaf-spine
 * links, 256 nodes) stays in the inventory for capacity planning. */
static void test_partial_priced(void **state) {
  (void)state;
  tcase c = {"fat-tree", 64, 2, 1, 1, 1, 8, 8};
  const char *cost[] = {"cost.switch_usd=1000", "cost.nic_usd=100", "cost.transceiver_usd=10",
                        "cost.cable_usd=1", "cost.optical_endpoint_links=false"};
  topo *t;
  const topo_inventory *inv = build_inv(&c, cost, 5, &t);
  assert_int_equal(inv->switches, 1);
  assert_int_equal(inv->switches_by_tier[TOPO_TIER_SPINE], 0);
  assert_int_equal(inv->links_switch_switch, 0);
  assert_int_equal(inv->transceivers, 0);
  assert_true(fabs(inv->cost_usd - (1000 + 8 * 100 + 8 * 1)) < 1e-6);
  assert_int_equal(inv->switches_full, 64 + 32);
  assert_true(fabs(inv->cost_usd_full - (96 * 1000.0 + 2048 * 100 + 2 * 2048 * 10 + 2048 * 1)) <
              1e-6);
  /* every GPU pair still routes, over the one leaf */
  topo_path p;
  assert_int_equal(topo_route(t, 0, 7, 1, &p), SIM_OK);
  topo_free(t);
  /* two leaves need the spines again (each leaf reaches each spine once) */
  tcase c2 = {"fat-tree", 64, 2, 1, 1, 5, 8, 8}; /* 40 NICs: 2 leaves */
  inv = build_inv(&c2, cost, 5, &t);
  assert_int_equal(inv->switches, 2 + 32);
  assert_int_equal(inv->links_switch_switch, 64);
  topo_free(t);
  /* a 3-tier build of one pod: its leaves and spines, no core */
  tcase c3 = {"fat-tree", 16, 3, 1, 1, 8, 8, 8}; /* 64 NICs on 8 leaves of 8 down: one pod */
  inv = build_inv(&c3, cost, 5, &t);
  assert_int_equal(inv->switches_by_tier[TOPO_TIER_CORE], 0);
  assert_int_equal(inv->switches, 8 + 8);
  assert_int_equal(inv->switches_full, 16 * 8 + 16 * 8 + 8 * 8);
  topo_free(t);
}

/* Build must fail with SIM_ECONFIG, no topology, and a message holding every
 * string of `want` (NULL-terminated). */
static void expect_error(const tcase *c, const char *const *sets, int n, const char *const *want) {
  topo *t = (topo *)1;
  sim_error err = {0};
  int rc = tc_build_extra(c, sets, n, &t, &err);
  if (rc != SIM_ECONFIG) fail_msg("%s k=%u: expected SIM_ECONFIG, got %d", c->kind, c->k, rc);
  assert_null(t);
  for (; *want; want++)
    if (!strstr(err.msg, *want)) fail_msg("message lacks \"%s\": %s", *want, err.msg);
}

static void test_nodes_exceed(void **state) {
  (void)state;
  {
    /* radix 64, 2 tiers: 64 x 32 = 2048 NICs = 256 nodes of 8 */
    tcase c = {"fat-tree", 64, 2, 1, 1, 300, 8, 8};
    const char *want[] = {"--set:",
                          "cluster.nodes",
                          "300 nodes do not fit",
                          "at most 256 nodes",
                          "fabric.switch_radix",
                          "fabric.tiers",
                          "fabric.oversubscription",
                          NULL};
    expect_error(&c, NULL, 0, want);
  }
  {
    tcase c = {"fat-tree", 8, 3, 1, 1, 17, 8, 8}; /* 128 NICs = 16 nodes */
    const char *want[] = {"cluster.nodes", "at most 16 nodes", "fabric.switch_radix", NULL};
    expect_error(&c, NULL, 0, want);
  }
  {
    tcase c = {"multi-plane", 8, 2, 2, 1, 9, 8, 8}; /* 32 per plane, 4 per node per plane */
    const char *want[] = {"cluster.nodes", "at most 8 nodes", "fabric.planes", NULL};
    expect_error(&c, NULL, 0, want);
  }
  {
    tcase c = {"rail-optimized", 8, 2, 1, 1, 5, 8, 8}; /* 8 leaves = 1 group of 4 nodes */
    const char *want[] = {"cluster.nodes", "at most 4 nodes", NULL};
    expect_error(&c, NULL, 0, want);
  }
  {
    /* the maximum itself builds */
    tcase c = {"fat-tree", 64, 2, 1, 1, 256, 8, 8};
    topo *t = tc_build(&c);
    assert_int_equal(topo_inventory_get(t)->nodes, 256);
    topo_free(t);
  }
}

static void test_invalid_shapes(void **state) {
  (void)state;
  {
    tcase c = {"rail-optimized", 4, 2, 1, 1, 0, 8, 8}; /* 4 leaves, 8 rails */
    const char *want[] = {"fabric.switch_radix", NULL};
    expect_error(&c, NULL, 0, want);
  }
  {
    tcase c = {"multi-plane", 8, 2, 3, 1, 0, 8, 8}; /* 3 does not divide 8 */
    const char *want[] = {"fabric.planes", NULL};
    expect_error(&c, NULL, 0, want);
  }
  {
    tcase c = {"fat-tree", 8, 2, 1, 1, 0, 8, 8};
    const char *sets[] = {"fabric.planes=2"};
    const char *want[] = {"fabric.planes", NULL};
    expect_error(&c, sets, 1, want);
  }
}

static void test_coexist(void **state) {
  (void)state;
  tcase a = {"fat-tree", 8, 2, 1, 1, 0, 8, 8}, b = {"multi-plane", 8, 3, 2, 1, 0, 8, 8};
  topo *ta = tc_build(&a), *tb = tc_build(&b);
  assert_int_equal(topo_inventory_get(ta)->planes, 1);
  assert_int_equal(topo_inventory_get(tb)->planes, 2);
  topo_free(tb);
  assert_int_equal(topo_path_count(ta, 0, 31), 4);
  topo_free(ta);
  topo_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bisection),    cmocka_unit_test(test_cost),
      cmocka_unit_test(test_nodes_exceed), cmocka_unit_test(test_invalid_shapes),
      cmocka_unit_test(test_coexist),      cmocka_unit_test(test_partial_priced),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
