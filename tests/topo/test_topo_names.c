/* Names: every vertex and link name round-trips through find; literal names
 * from the contract; strict rejection of near misses; DOT export. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#endif
#include "topo/test_topo_common.h"

#include <stdlib.h>

static void round_trip(const tcase *c) {
  topo *t = tc_build(c);
  char buf[96];
  for (uint32_t v = 0; v < topo_vertex_count(t); v++) {
    uint32_t got = UINT32_MAX;
    topo_vertex_name(t, v, buf, sizeof buf);
    if (topo_find_vertex(t, buf, &got) != SIM_OK || got != v)
      fail_msg("vertex %u named %s found as %u", v, buf, got);
  }
  for (uint32_t l = 0; l < topo_link_count(t); l++) {
    uint32_t got = UINT32_MAX;
    topo_link_name(t, l, buf, sizeof buf);
    if (topo_find_link(t, buf, &got) != SIM_OK || got != l)
      fail_msg("link %u named %s found as %u", l, buf, got);
  }
  for (uint32_t ch = 0; ch < 2 * topo_link_count(t); ch++) {
    uint32_t got = UINT32_MAX;
    topo_channel_name(t, ch, buf, sizeof buf);
    if (topo_find_channel(t, buf, &got) != SIM_OK || got != ch)
      fail_msg("channel %u named %s found as %u", ch, buf, got);
  }
  topo_free(t);
}

static void test_round_trip(void **state) {
  (void)state;
  const tcase cases[] = {
      {"fat-tree", 8, 3, 1, 1, 5, 8, 8},       {"fat-tree", 8, 2, 1, 1, 0, 8, 4},
      {"multi-plane", 8, 3, 2, 1, 0, 8, 8},    {"multi-plane", 8, 2, 4, 1, 0, 4, 8},
      {"rail-optimized", 8, 3, 1, 1, 0, 4, 4}, {"multi-plane", 8, 3, 2, 1, 5, 8, 8},
      {"rail-optimized", 8, 3, 1, 1, 5, 8, 8},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) round_trip(&cases[i]);
}

static uint32_t find_v(const topo *t, const char *name) {
  uint32_t v = UINT32_MAX;
  if (topo_find_vertex(t, name, &v) != SIM_OK) fail_msg("no vertex %s", name);
  return v;
}

/* A partial 3-tier build's bundles (3 pods of radix 8: 2 parallel links
 * from each spine to each of 2 cores of its group): each link is named
 * with its position, "<spine>-<core>/<r>"; the bare pair names no single
 * link (SIM_EINVAL); positions past the bundle, a suffix on a single link,
 * and a malformed suffix are unknown. */
static void test_bundle_names(void **state) {
  (void)state;
  tcase c = {"fat-tree", 8, 3, 1, 1, 5, 8, 8};
  topo *t = tc_build(&c);
  char buf[64];
  uint32_t l0, l1, ch, spine0 = find_v(t, "spine0"), core0 = find_v(t, "core0");
  assert_int_equal(topo_bundle_size(t), 2);
  assert_int_equal(topo_find_link(t, "spine0-core0/0", &l0), SIM_OK);
  assert_int_equal(topo_find_link(t, "core0-spine0/1", &l1), SIM_OK);
  assert_int_equal(l1, l0 + 1);
  assert_string_equal(topo_link_name(t, l1, buf, sizeof buf), "spine0-core0/1");
  assert_int_equal(topo_find_channel(t, "core0-spine0/1", &ch), SIM_OK);
  assert_int_equal(topo_channel_src(t, ch), core0);
  assert_int_equal(topo_channel_dst(t, ch), spine0);
  assert_string_equal(topo_channel_name(t, ch, buf, sizeof buf), "core0-spine0/1");
  assert_int_equal(topo_find_link(t, "spine0-core0", &l0), SIM_EINVAL);
  assert_int_equal(topo_find_channel(t, "core0-spine0", &ch), SIM_EINVAL);
  const char *bad[] = {"spine0-core0/2", "spine0-core0/01", "spine0-core0/",   "spine0-core0/x",
                       "leaf0-spine0/0", "spine0-core2/0",  "spine0-core0/-1", "spine0/0-core0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (topo_find_link(t, bad[i], &l0) != SIM_ENOENT) fail_msg("accepted link '%s'", bad[i]);
  /* spine 0 (group 0) reaches cores 0 and 1, spine 1 (group 1) cores 2 and 3 */
  assert_int_equal(topo_find_link(t, "spine0-core1/1", &l0), SIM_OK);
  assert_int_equal(topo_find_link(t, "spine1-core2/1", &l0), SIM_OK);
  assert_int_equal(topo_find_link(t, "spine1-core0/0", &l0), SIM_ENOENT);
  topo_free(t);
}

static void test_literal_names(void **state) {
  (void)state;
  tcase c = {"fat-tree", 8, 3, 1, 1, 0, 8, 8}; /* d = 4: nic17 on leaf4 */
  topo *t = tc_build(&c);
  char buf[64];
  assert_int_equal(find_v(t, "gpu17"), topo_gpu_vertex(t, 17));
  assert_int_equal(find_v(t, "nic17"), topo_nic_vertex(t, 17));
  assert_string_equal(topo_vertex_name(t, topo_gpu_vertex(t, 17), buf, sizeof buf), "gpu17");
  assert_int_equal(topo_vertex_at(t, find_v(t, "nvs2"))->kind, TOPO_NVSWITCH);
  assert_int_equal(topo_vertex_at(t, find_v(t, "nvs2"))->node, 2);
  assert_int_equal(find_v(t, "leaf4"), topo_nic_leaf(t, 17));
  assert_int_equal(find_v(t, "spine3"), topo_switch_vertex(t, 0, TOPO_TIER_SPINE, 3));
  assert_int_equal(find_v(t, "core7"), topo_switch_vertex(t, 0, TOPO_TIER_CORE, 7));
  uint32_t l;
  const char *links[] = {"gpu17-nvs2",   "gpu17-nic17",  "nic17-leaf4",
                         "leaf0-spine0", "spine0-core0", "leaf4-spine5"};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
    assert_int_equal(topo_find_link(t, links[i], &l), SIM_OK);
    assert_string_equal(topo_link_name(t, l, buf, sizeof buf), links[i]);
  }
  /* the other order names the same link */
  uint32_t l2;
  assert_int_equal(topo_find_link(t, "spine0-leaf0", &l2), SIM_OK);
  assert_int_equal(topo_find_link(t, "leaf0-spine0", &l), SIM_OK);
  assert_int_equal(l, l2);
  /* channel 2l goes a -> b */
  assert_int_equal(topo_channel_src(t, 2 * l), find_v(t, "leaf0"));
  assert_int_equal(topo_channel_dst(t, 2 * l), find_v(t, "spine0"));

  const char *bad[] = {"",       "gpu",      "gpu-1", "gpu01",         "leaf0x",
                       "Leaf0",  "p0.leaf0", " gpu0", "gpu4294967296", "nvs9999",
                       "core16", "spine32",  "node0", "gpu+1",         "nic 1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint32_t v;
    if (topo_find_vertex(t, bad[i], &v) != SIM_ENOENT) fail_msg("accepted vertex '%s'", bad[i]);
  }
  const char *bad_links[] = {"leaf0-core0", "leaf0--spine0", "nvs0-nic0", "leaf0",
                             "gpu0-gpu1",   "leaf0-spine0-", "-leaf0",    "gpu17-nic16"};
  for (size_t i = 0; i < sizeof bad_links / sizeof bad_links[0]; i++)
    if (topo_find_link(t, bad_links[i], &l) != SIM_ENOENT)
      fail_msg("accepted link '%s'", bad_links[i]);
  /* truncation keeps a terminated prefix */
  char tiny[4];
  assert_string_equal(topo_vertex_name(t, topo_gpu_vertex(t, 17), tiny, sizeof tiny), "gpu");
  topo_free(t);
}

static void test_plane_prefix(void **state) {
  (void)state;
  tcase c = {"multi-plane", 8, 2, 2, 1, 0, 8, 8};
  topo *t = tc_build(&c);
  char buf[64];
  uint32_t v = find_v(t, "p1.leaf0");
  assert_int_equal(v, topo_switch_vertex(t, 1, TOPO_TIER_LEAF, 0));
  assert_int_equal(v, topo_nic_leaf(t, 1));
  assert_string_equal(topo_vertex_name(t, v, buf, sizeof buf), "p1.leaf0");
  uint32_t l;
  assert_int_equal(topo_find_link(t, "nic1-p1.leaf0", &l), SIM_OK);
  assert_int_equal(topo_find_link(t, "p0.leaf0-p0.spine3", &l), SIM_OK);
  assert_int_equal(topo_find_link(t, "p0.leaf0-p1.spine3", &l), SIM_ENOENT);
  assert_int_equal(topo_find_vertex(t, "leaf0", &v), SIM_ENOENT);
  assert_int_equal(topo_find_vertex(t, "p2.leaf0", &v), SIM_ENOENT);
  assert_int_equal(topo_find_vertex(t, "p01.leaf0", &v), SIM_ENOENT);
  assert_int_equal(topo_find_vertex(t, "p1.gpu0", &v), SIM_ENOENT);
  assert_int_equal(topo_find_vertex(t, "p1leaf0", &v), SIM_ENOENT);
  topo_free(t);
}

static char *dot_of(const topo *t, bool collapse) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  assert_int_equal(topo_write_dot(t, f, collapse), SIM_OK);
  fclose(f);
  return text;
}

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static void test_dot(void **state) {
  (void)state;
  tcase c = {"fat-tree", 8, 2, 1, 1, 2, 8, 8};
  topo *t = tc_build(&c);
  char *full = dot_of(t, false), *box = dot_of(t, true);
  assert_non_null(strstr(full, "graph fabsim {"));
  assert_non_null(strstr(full, "\"leaf0\" -- \"spine0\""));
  assert_non_null(strstr(full, "\"gpu0\" -- \"nvs0\""));
  assert_non_null(strstr(full, "\"nic3\" -- \"leaf0\""));
  assert_int_equal(count(full, " -- "), topo_link_count(t));
  assert_null(strstr(box, "gpu0"));
  assert_non_null(strstr(box, "\"node1\" -- \"leaf2\""));
  /* endpoint links and fabric links only */
  const topo_inventory *inv = topo_inventory_get(t);
  assert_int_equal(count(box, " -- "), inv->links_endpoint_switch + inv->links_switch_switch);
  assert_int_equal(count(full, "}"), count(full, "{"));
  free(full);
  free(box);
  topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),   cmocka_unit_test(test_literal_names),
      cmocka_unit_test(test_plane_prefix), cmocka_unit_test(test_dot),
      cmocka_unit_test(test_bundle_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
