/* Fault-aware routing (topo_route_health): with nothing down it is
 * topo_route exactly, over every pair of many fabrics; a fault in one plane
 * leaves the other planes' paths unchanged; failed links, switches and NICs
 * are avoided (paths stay valid up/down chains over usable elements, failing
 * over to another NIC of the node over NVLink); SIM_ENOENT when no path is
 * left. */
#include "topo/test_topo_common.h"

static const tcase cases[] = {
    {"fat-tree", 8, 2, 1, 1, 0, 8, 8},       {"fat-tree", 4, 3, 1, 1, 0, 2, 2},
    {"fat-tree", 8, 3, 1, 3, 0, 8, 8},       {"fat-tree", 8, 3, 1, 2, 5, 8, 4},
    {"multi-plane", 8, 2, 2, 1, 0, 8, 8},    {"multi-plane", 4, 3, 8, 1, 0, 8, 8},
    {"multi-plane", 8, 2, 4, 1, 0, 4, 8},    {"multi-plane", 8, 3, 2, 1, 5, 8, 8},
    {"rail-optimized", 8, 2, 1, 1, 0, 4, 4}, {"rail-optimized", 8, 3, 1, 1, 0, 4, 4},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static bool same_path(const topo_path *a, const topo_path *b) {
  return a->n == b->n && memcmp(a->ch, b->ch, a->n * sizeof a->ch[0]) == 0;
}

/* A chain from src to dst over usable links and vertices, switches and NICs
 * in one plane, going up the tiers and then down once, no vertex twice. */
static void check_valid(const topo *t, const topo_health *h, uint32_t src, uint32_t dst,
                        const topo_path *p) {
  uint32_t seen[TOPO_MAX_PATH + 1];
  int plane = -1, last_tier = 0;
  bool descending = false;
  assert_true(p->n >= 2 && p->n <= TOPO_MAX_PATH);
  assert_int_equal(topo_channel_src(t, p->ch[0]), topo_gpu_vertex(t, src));
  assert_int_equal(topo_channel_dst(t, p->ch[p->n - 1]), topo_gpu_vertex(t, dst));
  seen[0] = topo_gpu_vertex(t, src);
  for (uint32_t i = 0; i < p->n; i++) {
    uint32_t v = topo_channel_dst(t, p->ch[i]);
    const topo_vertex *x = topo_vertex_at(t, v);
    if (i + 1 < p->n) assert_int_equal(v, topo_channel_src(t, p->ch[i + 1]));
    if (!h->link_ok[topo_channel_link(p->ch[i])]) {
      char name[64];
      fail_msg("gpu%u -> gpu%u uses down link %s", src, dst,
               topo_link_name(t, topo_channel_link(p->ch[i]), name, sizeof name));
    }
    assert_true(h->vertex_ok[v]);
    for (uint32_t j = 0; j <= i; j++) assert_int_not_equal(seen[j], v);
    seen[i + 1] = v;
    if (x->kind == TOPO_NIC || x->kind == TOPO_SWITCH) {
      if (plane < 0) plane = x->plane;
      assert_int_equal(x->plane, plane);
    }
    if (x->kind == TOPO_SWITCH) {
      if (x->tier < last_tier) descending = true;
      if (descending) assert_true(x->tier < last_tier);
      else assert_true(x->tier > last_tier);
      last_tier = x->tier;
    }
  }
}

static bool uses_link(const topo_path *p, uint32_t l) {
  for (uint32_t i = 0; i < p->n; i++)
    if (topo_channel_link(p->ch[i]) == l) return true;
  return false;
}

static void test_no_fault_is_topo_route(void **state) {
  (void)state;
  for (size_t c = 0; c < NCASES; c++) {
    topo *t = tc_build(&cases[c]);
    topo_health h;
    uint32_t n = topo_gpu_count(t);
    topo_health_init(&h, t);
    for (uint32_t s = 0; s < n; s++)
      for (uint32_t d = 0; d < n; d++) {
        topo_path a, b, x;
        uint64_t hash = (uint64_t)s * 7919 + d;
        if (s == d) continue;
        assert_int_equal(topo_route(t, s, d, hash, &a), SIM_OK);
        assert_int_equal(topo_route_health(t, NULL, s, d, hash, &b), SIM_OK);
        assert_int_equal(topo_route_health(t, &h, s, d, hash, &x), SIM_OK);
        assert_true(same_path(&a, &b) && same_path(&a, &x));
      }
    /* something down far away (a link and back up): still identical */
    topo_health_set_link(&h, 0, false);
    topo_health_set_link(&h, 0, true);
    assert_int_equal(h.down, 0);
    topo_health_free(&h);
    topo_free(t);
  }
}

/* A fault in plane 1 (a leaf-spine link, a spine, a NIC port) never changes a
 * path in another plane. */
static void test_planes_isolated(void **state) {
  (void)state;
  for (size_t c = 0; c < NCASES; c++) {
    if (!tc_is(&cases[c], "multi-plane")) continue;
    topo *t = tc_build(&cases[c]);
    topo_health h;
    uint32_t n = topo_gpu_count(t), l, spine = topo_switch_vertex(t, 1, TOPO_TIER_SPINE, 0);
    uint32_t leaf = topo_switch_vertex(t, 1, TOPO_TIER_LEAF, 0);
    topo_health_init(&h, t);
    assert_int_equal(topo_link_between(t, leaf, topo_switch_vertex(t, 1, TOPO_TIER_SPINE, 1), &l),
                     SIM_OK);
    topo_health_set_link(&h, l, false);
    topo_health_set_vertex(&h, spine, false);
    for (uint32_t i = 0; i < topo_nic_count(t); i++) /* node 0's plane-1 NICs */
      if (topo_vertex_at(t, topo_nic_vertex(t, i))->plane == 1 &&
          i < topo_nic_count(t) / topo_node_count(t))
        topo_health_set_vertex(&h, topo_nic_vertex(t, i), false);
    uint64_t other = 0, moved = 0, in_plane1 = 0;
    for (uint32_t s = 0; s < n; s++)
      for (uint32_t d = 0; d < n; d++) {
        topo_path a, b;
        if (s == d || topo_gpu_node(t, s) == topo_gpu_node(t, d)) continue;
        assert_int_equal(topo_route(t, s, d, s ^ (d << 8), &a), SIM_OK);
        assert_int_equal(topo_route_health(t, &h, s, d, s ^ (d << 8), &b), SIM_OK);
        check_valid(t, &h, s, d, &b);
        int plane = topo_vertex_at(t, topo_nic_vertex(t, topo_gpu_nic(t, d)))->plane;
        if (plane != 1) {
          assert_true(same_path(&a, &b));
          other++;
        } else {
          in_plane1++;
          moved += !same_path(&a, &b);
        }
      }
    /* (with 2 NICs per GPU routing only uses the even planes: nothing moves) */
    if (!(other > 0 && (moved > 0 || in_plane1 == 0)))
      fail_msg("case %zu: other %llu moved %llu", c, (unsigned long long)other,
               (unsigned long long)moved);
    topo_health_free(&h);
    topo_free(t);
  }
}

/* One leaf-spine link, one spine, and (3 tiers) one spine-core link and one
 * core down: every pair still routes, around them. */
static void test_fabric_faults_avoided(void **state) {
  (void)state;
  for (size_t c = 0; c < NCASES; c++) {
    topo *t = tc_build(&cases[c]);
    topo_health h;
    uint32_t n = topo_gpu_count(t), l0, l1 = UINT32_MAX;
    uint32_t leaf = topo_switch_vertex(t, 0, TOPO_TIER_LEAF, 0);
    uint32_t sp0 = topo_switch_vertex(t, 0, TOPO_TIER_SPINE, 0);
    uint32_t sp1 = topo_switch_vertex(t, 0, TOPO_TIER_SPINE, 1);
    topo_health_init(&h, t);
    assert_int_equal(topo_link_between(t, leaf, sp0, &l0), SIM_OK);
    topo_health_set_link(&h, l0, false);
    if (cases[c].tiers == 3 && topo_switch_vertex(t, 0, TOPO_TIER_CORE, 0) != UINT32_MAX) {
      uint32_t core0 = topo_switch_vertex(t, 0, TOPO_TIER_CORE, 0);
      uint32_t g1 = cases[c].k / 2 / topo_bundle_size(t); /* group 1's first core */
      uint32_t core1 = topo_switch_vertex(t, 0, TOPO_TIER_CORE, g1);
      assert_int_equal(topo_link_between(t, sp1, core1, &l1), SIM_OK);
      topo_health_set_link(&h, l1, false);
      topo_health_set_vertex(&h, core0, false);
    } else if (topo_switch_vertex(t, 0, TOPO_TIER_SPINE, 2) != UINT32_MAX) {
      topo_health_set_vertex(&h, topo_switch_vertex(t, 0, TOPO_TIER_SPINE, 2), false);
    }
    uint64_t avoided = 0;
    for (uint32_t s = 0; s < n; s++)
      for (uint32_t d = 0; d < n; d++) {
        topo_path a, b;
        if (s == d) continue;
        assert_int_equal(topo_route(t, s, d, s * 31u + d, &a), SIM_OK);
        int rc = topo_route_health(t, &h, s, d, s * 31u + d, &b);
        if (rc != SIM_OK) fail_msg("case %zu: gpu%u -> gpu%u: no route", c, s, d);
        check_valid(t, &h, s, d, &b);
        if (uses_link(&a, l0) || (l1 != UINT32_MAX && uses_link(&a, l1))) avoided++;
        /* a path that never met a fault keeps its length */
        assert_int_equal(a.n, b.n);
      }
    assert_true(avoided > 0);
    topo_health_free(&h);
    topo_free(t);
  }
}

/* A NIC port down (at either end) fails over to another NIC of the node over
 * NVLink; a node with every NIC down is unreachable. */
static void test_nic_failover(void **state) {
  (void)state;
  const tcase c = {"fat-tree", 8, 2, 1, 1, 0, 8, 8};
  topo *t = tc_build(&c);
  topo_health h;
  uint32_t gpn = 8, far = topo_gpu_count(t) - 1, l;
  topo_path p;
  topo_health_init(&h, t);
  /* src side: gpu0's NIC link to its leaf */
  assert_int_equal(topo_link_between(t, topo_nic_vertex(t, 0), topo_nic_leaf(t, 0), &l), SIM_OK);
  topo_health_set_link(&h, l, false);
  assert_int_equal(topo_route_health(t, &h, 0, far, 5, &p), SIM_OK);
  check_valid(t, &h, 0, far, &p);
  assert_int_equal(topo_link_at(t, topo_channel_link(p.ch[0]))->kind, TOPO_LINK_SCALE_UP);
  assert_int_equal(topo_channel_dst(t, p.ch[1]), topo_gpu_vertex(t, 1)); /* NIC 1's GPU */
  /* dst side: the far GPU's NIC is down too */
  topo_health_set_vertex(&h, topo_nic_vertex(t, topo_gpu_nic(t, far)), false);
  assert_int_equal(topo_route_health(t, &h, 0, far, 5, &p), SIM_OK);
  check_valid(t, &h, 0, far, &p);
  assert_int_equal(topo_link_at(t, topo_channel_link(p.ch[p.n - 1]))->kind, TOPO_LINK_SCALE_UP);
  /* every NIC of the far node down: unreachable from other nodes, not inside */
  for (uint32_t i = 0; i < 8; i++)
    topo_health_set_vertex(&h, topo_nic_vertex(t, topo_gpu_nic(t, far - i)), false);
  assert_int_equal(topo_route_health(t, &h, 0, far, 5, &p), SIM_ENOENT);
  assert_int_equal(topo_route_health(t, &h, far - 1, far, 5, &p), SIM_OK);
  assert_int_equal(p.n, 2);
  /* a leaf down: the far GPU is reached through a NIC of its node on the
   * other leaf (a node's 8 NICs span two leaves of 4 down ports) */
  topo_health_free(&h);
  topo_health_init(&h, t);
  topo_health_set_vertex(&h, topo_nic_leaf(t, topo_gpu_nic(t, far)), false);
  assert_int_equal(topo_route_health(t, &h, 0, far, 5, &p), SIM_OK);
  check_valid(t, &h, 0, far, &p);
  assert_int_equal(topo_link_at(t, topo_channel_link(p.ch[p.n - 1]))->kind, TOPO_LINK_SCALE_UP);
  assert_int_equal(topo_route_health(t, &h, 0, gpn, 5, &p), SIM_OK);
  topo_health_free(&h);
  topo_free(t);

  /* two ports per GPU (NICs 2g, 2g+1 on planes 2g mod 4, 2g+1 mod 4, both
   * behind the GPU's PCIe switch): port 0 of GPU 0 down moves its traffic
   * to its own port 1 and the destination's port in that plane, with no
   * NVLink detour */
  const tcase c2 = {"multi-plane", 8, 2, 4, 1, 0, 4, 8};
  t = tc_build(&c2);
  topo_health_init(&h, t);
  far = topo_gpu_count(t) - 4; /* GPU 0 of the last node: port 0 in plane 0 as GPU 0's */
  topo_health_set_vertex(&h, topo_nic_vertex(t, 0), false);
  assert_int_equal(topo_route_health(t, &h, 0, far, 9, &p), SIM_OK);
  check_valid(t, &h, 0, far, &p);
  assert_int_equal(topo_vertex_at(t, topo_channel_dst(t, p.ch[0]))->kind, TOPO_PCIE_SWITCH);
  assert_int_equal(topo_channel_dst(t, p.ch[1]), topo_nic_vertex(t, 1));
  assert_int_equal(topo_channel_src(t, p.ch[p.n - 2]),
                   topo_nic_vertex(t, topo_gpu_nic(t, far) + 1));
  topo_health_free(&h);
  topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_fault_is_topo_route),
      cmocka_unit_test(test_planes_isolated),
      cmocka_unit_test(test_fabric_faults_avoided),
      cmocka_unit_test(test_nic_failover),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
