/* Placement metrics on hand-built cases and closed forms: leaves, pods, a
 * ring's spine and core crossings and its switch-hop range (1 hop on one
 * leaf, 3 over a spine, 5 over a core), checked against leaf and pod
 * membership computed from the topology contract. */
#include "place/test_place_common.h"

/* 2 leaves x 4 nodes, 8 nodes packed: the ring 0..7,0 leaves leaf 0 at 3->4
 * and leaf 1 at 7->0, so it crosses the spine exactly twice. */
static void test_two_leaves_packed(void **state) {
  (void)state;
  pcase c = PC_FT2;
  c.nodes = 8;
  topo *t = pc_build(&c);
  uint32_t out[8];
  pc_place(t, NULL, PLC_PACKED, 8, 0, out);
  plc_metrics m = pc_metrics(t, out, 8);
  assert_int_equal(m.nodes, 8);
  assert_int_equal(m.leaves, 2);
  assert_int_equal(m.pods, 1);
  assert_int_equal(m.planes, 1);
  assert_int_equal(m.ring_pairs, 8);
  assert_int_equal(m.ring_spine_pairs, 2);
  assert_int_equal(m.ring_core_pairs, 0);
  assert_int_equal(m.ring_hops_min, 1);
  assert_int_equal(m.ring_hops_max, 3);
  /* interleaved by hand: every pair crosses, and the hops are even */
  const uint32_t zig[] = {0, 4, 1, 5, 2, 6, 3, 7};
  m = pc_metrics(t, zig, 8);
  assert_int_equal(m.ring_spine_pairs, 8);
  assert_int_equal(m.ring_hops_min, 3);
  assert_int_equal(m.ring_hops_max, 3);
  topo_free(t);
}

static void test_small_rings(void **state) {
  (void)state;
  topo *t = pc_build(&PC_FT2);
  const uint32_t one[] = {5};
  plc_metrics m = pc_metrics(t, one, 1);
  assert_int_equal(m.leaves, 1);
  assert_int_equal(m.ring_pairs, 0);
  assert_int_equal(m.ring_spine_pairs, 0);
  assert_int_equal(m.ring_hops_min, 0);
  assert_int_equal(m.ring_hops_max, 0);
  const uint32_t two[] = {0, 4}; /* a ring of two sends both ways */
  m = pc_metrics(t, two, 2);
  assert_int_equal(m.ring_pairs, 2);
  assert_int_equal(m.ring_spine_pairs, 2);
  const uint32_t same[] = {0, 1};
  m = pc_metrics(t, same, 2);
  assert_int_equal(m.ring_spine_pairs, 0);
  assert_int_equal(m.ring_hops_max, 1);
  topo_free(t);
}

/* 3 tiers, 4 pods of 4 leaves of 4 nodes, all 64 packed: 16 leaf
 * boundaries, 4 of them pod boundaries; 1 hop inside a leaf, 5 over a core. */
static void test_three_tier_packed(void **state) {
  (void)state;
  topo *t = pc_build(&PC_FT3);
  uint32_t out[64];
  pc_place(t, NULL, PLC_PACKED, 64, 0, out);
  plc_metrics m = pc_metrics(t, out, 64);
  assert_int_equal(m.leaves, 16);
  assert_int_equal(m.pods, 4);
  assert_int_equal(m.ring_spine_pairs, 16);
  assert_int_equal(m.ring_core_pairs, 4);
  assert_int_equal(m.ring_hops_min, 1);
  assert_int_equal(m.ring_hops_max, 5);
  /* one node per pod, within a pod's leaves: 3 hops each, the ring balanced */
  const uint32_t pod0[] = {0, 4, 8, 12};
  m = pc_metrics(t, pod0, 4);
  assert_int_equal(m.pods, 1);
  assert_int_equal(m.ring_spine_pairs, 4);
  assert_int_equal(m.ring_core_pairs, 0);
  assert_int_equal(m.ring_hops_min, 3);
  assert_int_equal(m.ring_hops_max, 3);
  topo_free(t);
}

/* Closed form for any placement: a pair crosses the spine iff its nodes'
 * leaves differ, the core iff their pods differ; hops 1, 3 or 5. */
static void check_against_membership(const pcase *pc, const topo *t, const uint32_t *nodes,
                                     uint32_t n) {
  plc_metrics m = pc_metrics(t, nodes, n);
  uint32_t spine = 0, core = 0, hmin = n >= 2 ? 99 : 0, hmax = 0;
  for (uint32_t r = 0; n >= 2 && r < n; r++) {
    uint32_t a = nodes[r], b = nodes[(r + 1) % n];
    bool sl = pc_leaf_of(pc, a) == pc_leaf_of(pc, b), sp = pc_pod_of(pc, a) == pc_pod_of(pc, b);
    spine += !sl;
    core += !sp;
    uint32_t h = sl ? 1 : sp ? 3 : 5;
    if (h < hmin) hmin = h;
    if (h > hmax) hmax = h;
  }
  assert_int_equal(m.leaves, pc_distinct(pc, nodes, n, pc_leaf_of));
  assert_int_equal(m.pods, pc_distinct(pc, nodes, n, pc_pod_of));
  assert_int_equal(m.planes, pc->planes);
  assert_int_equal(m.ring_pairs, n >= 2 ? n : 0);
  assert_int_equal(m.ring_spine_pairs, spine);
  assert_int_equal(m.ring_core_pairs, core);
  assert_int_equal(m.ring_hops_min, hmin);
  assert_int_equal(m.ring_hops_max, hmax);
}

static void test_every_fabric_against_membership(void **state) {
  (void)state;
  const pcase *cases[] = {&PC_FT2, &PC_FT3, &PC_MP2, &PC_MP3, &PC_RAIL, &PC_RAIL3};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const pcase *pc = cases[c];
    topo *t = pc_build(pc);
    uint32_t out[128];
    for (uint64_t seed = 1; seed <= 30; seed++)
      for (uint32_t n = 1; n <= pc->nodes; n += 3) {
        for (int p = 0; p < PLC_EXPLICIT; p++) {
          pc_place(t, NULL, (plc_policy)p, n, seed, out);
          check_against_membership(pc, t, out, n);
        }
      }
    topo_free(t);
  }
}

/* Multi-plane: the job spans every plane; crossings as on one plane. */
static void test_multi_plane(void **state) {
  (void)state;
  topo *t = pc_build(&PC_MP3);
  uint32_t out[64];
  pc_place(t, NULL, PLC_PACKED, 32, 0, out); /* 2 pods of 4 leaves */
  plc_metrics m = pc_metrics(t, out, 32);
  assert_int_equal(m.planes, 2);
  assert_int_equal(m.leaves, 8);
  assert_int_equal(m.pods, 2);
  assert_int_equal(m.ring_spine_pairs, 8);
  assert_int_equal(m.ring_core_pairs, 2);
  assert_int_equal(m.ring_hops_max, 5);
  pc_place(t, NULL, PLC_SPREAD, 4, 0, out); /* one leaf in each pod */
  m = pc_metrics(t, out, 4);
  assert_int_equal(m.pods, 4);
  assert_int_equal(m.ring_core_pairs, 4);
  assert_int_equal(m.ring_hops_min, 5);
  topo_free(t);
}

/* Rail-optimized: a group of 4 nodes shares its rail leaves. */
static void test_rail_optimized(void **state) {
  (void)state;
  topo *t = pc_build(&PC_RAIL);
  uint32_t out[16];
  pc_place(t, NULL, PLC_PACKED, 8, 0, out);
  plc_metrics m = pc_metrics(t, out, 8);
  assert_int_equal(m.leaves, 2);
  assert_int_equal(m.ring_spine_pairs, 2);
  assert_int_equal(m.ring_hops_min, 1);
  assert_int_equal(m.ring_hops_max, 3);
  topo_free(t);
}

/* 8 NICs per node on leaves of 4 down ports: a node spans two leaves, and
 * its leaf is its first NIC's (the one local GPU 0 uses): node n on leaf 2n,
 * so 4 packed nodes are 4 leaves and every ring pair climbs to a spine. */
static void test_node_spanning_two_leaves(void **state) {
  (void)state;
  const pcase c = {"fat-tree", 8, 2, 1, 4, 8, 8};
  topo *t = pc_build(&c);
  uint32_t out[4];
  pc_place(t, NULL, PLC_PACKED, 4, 0, out);
  plc_metrics m = pc_metrics(t, out, 4);
  assert_int_equal(m.leaves, 4);
  assert_int_equal(m.ring_spine_pairs, 4);
  assert_int_equal(m.ring_hops_min, 3);
  assert_int_equal(m.ring_hops_max, 3);
  pc_place(t, NULL, PLC_TOPOLOGY_AWARE, 2, 0, out);
  assert_int_equal(pc_metrics(t, out, 2).leaves, 2);
  topo_free(t);
}

static void test_bad_lists(void **state) {
  (void)state;
  topo *t = pc_build(&PC_FT2);
  plc_metrics m;
  sim_error err = {0};
  const uint32_t range[] = {0, 32};
  assert_int_equal(plc_metrics_of(t, range, 2, &m, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "node 32 (rank 1) is out of range 0 .. 31"));
  const uint32_t dup[] = {3, 3};
  assert_int_equal(plc_metrics_of(t, dup, 2, &m, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "listed twice"));
  topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_leaves_packed),
      cmocka_unit_test(test_small_rings),
      cmocka_unit_test(test_three_tier_packed),
      cmocka_unit_test(test_every_fabric_against_membership),
      cmocka_unit_test(test_multi_plane),
      cmocka_unit_test(test_rail_optimized),
      cmocka_unit_test(test_node_spanning_two_leaves),
      cmocka_unit_test(test_bad_lists),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
