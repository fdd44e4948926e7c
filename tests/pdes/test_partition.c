/* Fabric partitioning for the parallel engine: by plane on multi-plane
 * fabrics, by pod on 3-tier ones, balanced, with the cut and lookahead. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/config.h"
#include "fabsim/pdes.h"
#include "fabsim/topo.h"

static topo *build(const char **sets, int n) {
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_error err = {0};
  assert_int_equal(cfg_load(&cfg, &doc, NULL, sets, n, &err), SIM_OK);
  assert_int_equal(topo_build(&t, &cfg, doc, &err), SIM_OK);
  cfg_free(&cfg, doc);
  return t;
}

static void test_by_plane(void **state) {
  (void)state;
  const char *sets[] = {"fabric.topology=multi-plane", "fabric.planes=4",
                        "cluster.nic.per_node=4",      "cluster.gpus_per_node=4",
                        "fabric.switch_radix=8",       "cluster.nodes=16",
                        "cluster.pcie.latency=250ns",  "fabric.link_latency=120ns"};
  topo *t = build(sets, 8);
  pdes_partition p;
  sim_error err = {0};
  assert_int_equal(pdes_partition_fabric(&p, t, 4, &err), SIM_OK);
  assert_string_equal(p.scheme, "plane");
  assert_int_equal(p.endpoints_min, 16);
  assert_int_equal(p.endpoints_max, 16);
  for (uint32_t v = 0; v < topo_vertex_count(t); v++) {
    const topo_vertex *x = topo_vertex_at(t, v);
    assert_true(p.vertex_rank[v] < 4);
    if (x->kind == TOPO_SWITCH || x->kind == TOPO_NIC)
      assert_int_equal(p.vertex_rank[v], (uint32_t)x->plane);
  }
  /* only PCIe links of the NICs not on their node's rank are cut: 3 of 4 */
  assert_int_equal(p.cut_by_kind[TOPO_LINK_FABRIC], 0);
  assert_int_equal(p.cut_by_kind[TOPO_LINK_ENDPOINT], 0);
  assert_int_equal(p.cut_by_kind[TOPO_LINK_SCALE_UP], 0);
  assert_int_equal(p.cut_by_kind[TOPO_LINK_PCIE], 16 * 3);
  assert_int_equal(p.lookahead_ps, 250 * SIM_PS_PER_NS);
  pdes_partition_free(&p);
  /* more ranks than planes: leaves split a plane; the fabric links are cut */
  assert_int_equal(pdes_partition_fabric(&p, t, 8, &err), SIM_OK);
  assert_string_equal(p.scheme, "plane+leaf");
  assert_int_equal(p.endpoints_min, 8);
  assert_int_equal(p.endpoints_max, 8);
  assert_true(p.cut_by_kind[TOPO_LINK_FABRIC] > 0);
  assert_int_equal(p.lookahead_ps, 120 * SIM_PS_PER_NS);
  pdes_partition_free(&p);
  assert_int_equal(pdes_partition_fabric(&p, t, 1, &err), SIM_OK);
  assert_int_equal(p.cut_links, 0);
  assert_int_equal(p.lookahead_ps, SIM_TIME_MAX);
  pdes_partition_free(&p);
  assert_int_equal(pdes_partition_fabric(&p, t, 0, &err), SIM_EINVAL);
  assert_int_equal(pdes_partition_fabric(&p, t, 10000, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "10000 ranks"));
  topo_free(t);
}

static void test_by_pod(void **state) {
  (void)state;
  const char *sets[] = {"fabric.tiers=3", "fabric.switch_radix=8", "cluster.nodes=128",
                        "cluster.gpus_per_node=1", "cluster.nic.per_node=1"};
  topo *t = build(sets, 5);
  pdes_partition p;
  sim_error err = {0};
  assert_int_equal(pdes_partition_fabric(&p, t, 4, &err), SIM_OK); /* 8 pods of 16 endpoints */
  assert_string_equal(p.scheme, "pod");
  assert_int_equal(p.endpoints_min, 32);
  assert_int_equal(p.endpoints_max, 32);
  for (uint32_t v = 0; v < topo_vertex_count(t); v++) {
    const topo_vertex *x = topo_vertex_at(t, v);
    if (x->kind == TOPO_SWITCH && x->tier < TOPO_TIER_CORE)
      assert_int_equal(p.vertex_rank[v], x->pod / 2);
  }
  /* only spine-core links are cut */
  assert_int_equal(p.cut_links, p.cut_by_kind[TOPO_LINK_FABRIC]);
  for (uint32_t l = 0; l < topo_link_count(t); l++) {
    const topo_link *k = topo_link_at(t, l);
    if (p.vertex_rank[k->a] != p.vertex_rank[k->b])
      assert_true(topo_vertex_at(t, k->a)->tier == TOPO_TIER_CORE ||
                  topo_vertex_at(t, k->b)->tier == TOPO_TIER_CORE);
  }
  pdes_partition_free(&p);
  assert_int_equal(pdes_partition_fabric(&p, t, 16, &err), SIM_OK); /* beyond 8 pods: leaves */
  assert_string_equal(p.scheme, "leaf");
  assert_int_equal(p.endpoints_min, 8);
  assert_int_equal(p.endpoints_max, 8);
  assert_int_equal(p.cut_by_kind[TOPO_LINK_ENDPOINT], 0);
  pdes_partition_free(&p);
  assert_int_equal(pdes_partition_fabric(&p, t, 64, &err),
                   SIM_OK); /* beyond 32 leaves: half leaves */
  assert_string_equal(p.scheme, "subleaf");
  assert_int_equal(p.endpoints_min, 2);
  assert_int_equal(p.endpoints_max, 2);
  assert_int_equal(p.cut_by_kind[TOPO_LINK_ENDPOINT], 64); /* the NICs of each leaf's second half */
  pdes_partition_free(&p);
  assert_int_equal(pdes_partition_fabric(&p, t, 129, &err),
                   SIM_EINVAL); /* one endpoint per rank at most */
  topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_by_plane),
      cmocka_unit_test(test_by_pod),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
