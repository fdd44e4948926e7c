/* Storage servers as endpoints of the backend fabric, the separate storage
 * fabric and the management network (src/topo/storage.c), against hand
 * counts: where the servers sit (a leaf of their own after the compute
 * nodes), their routes and link rates (NIC ports, drives), the inventory and
 * cost of each network; a fabric without storage is laid out as before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/topo.h"
#include "fixture.h"

/* Radix 8, 2 tiers: 4 down / 4 up per leaf; 5 nodes of 2 GPUs and 2 NICs:
 * 10 NICs on leaves 0-2 (leaf 2 half full). 2 servers of 4 ports (span 2
 * nodes each) start on leaf 3, one node slot later: 8 NICs, leaves 3 and 4. */
#define BASE                                                                                     \
  "cluster.nodes=5", "cluster.gpus_per_node=2", "cluster.nic.per_node=2",                        \
      "cluster.nic.bandwidth=100Gbps", "cluster.nic.efficiency=1", "fabric.switch_radix=8",      \
      "fabric.tiers=2", "fabric.link_bandwidth=100Gbps", "fabric.link_efficiency=1",             \
      "cost.switch_usd=1000", "cost.nic_usd=100", "cost.transceiver_usd=10", "cost.cable_usd=1", \
      "cost.optical_endpoint_links=false"

static void test_backend_layout(void **state) {
  (void)state;
  const char *sets[] = {BASE,
                        "storage.servers=2",
                        "storage.nic.per_server=4",
                        "storage.nic.bandwidth=200Gbps",
                        "storage.write_bandwidth=8GB/s",
                        "storage.read_bandwidth=12GB/s",
                        "storage.server_usd=5000",
                        "storage.server_w=700"};
  fixture f;
  load(&f, sets, sizeof sets / sizeof *sets);
  const topo *t = f.t;
  assert_int_equal(topo_gpu_count(t), 10); /* the compute GPUs only */
  assert_int_equal(topo_node_count(t), 5);
  assert_int_equal(topo_storage_servers(t), 2);
  assert_int_equal(topo_storage_endpoints(t), 4); /* 2 nodes x 2 "GPUs" */
  assert_int_equal(topo_endpoint_count(t), 10 + 8);
  assert_int_equal(topo_storage_endpoint(t, 1, 3), 10 + 4 + 3);
  /* server 0 on leaf 3 (compute: leaves 0-2), server 1 on leaf 4 */
  assert_int_equal(topo_vertex_at(t, topo_storage_leaf(t, 0))->index, 3);
  assert_int_equal(topo_vertex_at(t, topo_storage_leaf(t, 1))->index, 4);
  /* gpu0 -> server 1's endpoint 3: NIC, leaf0, a spine, leaf4, the server's NIC, its drive */
  topo_path p;
  assert_int_equal(topo_route(t, 0, topo_storage_endpoint(t, 1, 3), 7, &p), SIM_OK);
  assert_int_equal(p.n, 6);
  const topo_link *last = topo_link_at(t, topo_channel_link(p.ch[p.n - 1]));
  assert_int_equal(last->kind, TOPO_LINK_PCIE);
  /* the drives: 8 GB/s over the server's 2 nodes x 2 PCIe links */
  assert_int_equal(last->bps, 16000000000ULL);
  /* each way its own rate: the write toward the endpoint (channel 2l + 1),
   * reads of 12 GB/s / 4 away from it (2l); a compute link's channels both
   * run at its bps */
  uint32_t drive = topo_channel_link(p.ch[p.n - 1]);
  assert_int_equal(p.ch[p.n - 1], 2 * drive + 1);
  assert_int_equal(topo_channel_bps(t, 2 * drive + 1), 16000000000ULL);
  assert_int_equal(topo_channel_bps(t, 2 * drive), 24000000000ULL);
  assert_int_equal(topo_channel_bps(t, p.ch[0]), topo_link_at(t, topo_channel_link(p.ch[0]))->bps);
  assert_int_equal(topo_channel_bps(t, p.ch[0] ^ 1u),
                   topo_link_at(t, topo_channel_link(p.ch[0]))->bps);
  const topo_link *port = topo_link_at(t, topo_channel_link(p.ch[p.n - 2]));
  assert_int_equal(port->kind, TOPO_LINK_ENDPOINT);
  assert_int_equal(port->bps, 200000000000ULL);
  /* inventory: 5 leaves + 4 spines; 10 + 8 endpoints; 18 endpoint links and 20 leaf-spine */
  const topo_inventory *inv = topo_inventory_get(t);
  assert_int_equal(inv->nodes, 5);
  assert_int_equal(inv->gpus, 10);
  assert_int_equal(inv->endpoints, 18);
  assert_int_equal(inv->storage_nics, 8);
  assert_int_equal(inv->switches, 9);
  assert_int_equal(inv->links_switch_switch, 20);
  assert_int_equal(inv->copper_cables, 18);
  /* 9 switches, 10 compute NICs (the servers' are in their price), 40 optics, 18 cables */
  assert_true(fabs(inv->cost_usd - (9 * 1000.0 + 10 * 100 + 40 * 10 + 18 * 1)) < 1e-9);
  assert_true(fabs(inv->storage_cost_usd - 10000.0) < 1e-9);
  assert_true(fabs(inv->storage_power_w - 1400.0) < 1e-9);
  unload(&f);
}

/* No storage: the same layout and inventory as a fabric that never had the keys. */
static void test_no_storage_unchanged(void **state) {
  (void)state;
  const char *sets[] = {BASE};
  fixture f;
  load(&f, sets, sizeof sets / sizeof *sets);
  assert_int_equal(topo_endpoint_count(f.t), topo_gpu_count(f.t));
  assert_int_equal(topo_storage_servers(f.t), 0);
  const topo_inventory *inv = topo_inventory_get(f.t);
  assert_int_equal(inv->switches, 7); /* 3 leaves, 4 spines */
  assert_int_equal(inv->endpoints, 10);
  assert_true(fabs(inv->cost_usd - (7 * 1000.0 + 10 * 100 + 24 * 10 + 10 * 1)) < 1e-9);
  unload(&f);
}

/* The separate storage fabric: a fat-tree of its own over the nodes' 1
 * frontend NIC each and the servers' 2 ports, its inventory priced alone;
 * GPU g is the same in both topologies. */
static void test_separate_fabric(void **state) {
  (void)state;
  const char *sets[] = {BASE,
                        "storage.servers=2",
                        "storage.attach=separate",
                        "storage.nic.per_server=2",
                        "storage.frontend.per_node=1",
                        "storage.frontend.bandwidth=50Gbps",
                        "storage.fabric.switch_radix=8",
                        "storage.fabric.link_bandwidth=100Gbps",
                        "storage.server_usd=5000",
                        "management.enabled=true",
                        "management.switch_ports=4",
                        "management.uplinks=2",
                        "management.aggregation_radix=8",
                        "management.switch_usd=300",
                        "management.aggregation_usd=900",
                        "management.cable_usd=2"};
  fixture f;
  load(&f, sets, sizeof sets / sizeof *sets);
  /* the backend fabric has no storage */
  assert_int_equal(topo_storage_servers(f.t), 0);
  assert_int_equal(topo_inventory_get(f.t)->switches, 7);
  cfg_scenario derived;
  topo *st = NULL;
  sim_error err = {0};
  if (topo_build_storage(&st, &derived, &f.cfg, &err) != SIM_OK) fail_msg("%s", err.msg);
  assert_int_equal(topo_gpu_count(st), 10);
  assert_int_equal(topo_storage_servers(st), 2);
  /* radix 8: 4 down per leaf; 5 frontend NICs on leaves 0-1, the servers' 4 on leaf 2 */
  assert_int_equal(topo_vertex_at(st, topo_storage_leaf(st, 0))->index, 2);
  assert_int_equal(topo_vertex_at(st, topo_storage_leaf(st, 1))->index, 2);
  const topo_inventory *si = topo_inventory_get(st);
  assert_int_equal(si->endpoints, 9);
  assert_int_equal(si->switches, 3 + 4);
  /* both GPUs of node 1 share its one frontend NIC at 50 Gb/s */
  topo_path p;
  assert_int_equal(topo_route(st, 2, topo_storage_endpoint(st, 0, 0), 1, &p), SIM_OK);
  assert_int_equal(topo_path_bottleneck(st, &p), 50000000000ULL);
  /* the networks: storage fabric priced alone (7 switches, 5 frontend NICs at 100 $, 12
   * leaf-spine links, 9 endpoint cables), management over 5 nodes + 2 servers + 7 + 7
   * switches = 21 ports: 6 access switches of 4 ports, 12 uplinks into 2 aggregation
   * switches of 8, 21 + 12 cables */
  topo_networks n;
  assert_int_equal(topo_networks_of(f.t, &f.cfg, &n, &err), SIM_OK);
  assert_true(n.separate);
  assert_int_equal(n.storage_fabric.switches, 7);
  assert_true(fabs(n.storage_fabric.cost_usd - (7 * 1000.0 + 5 * 100 + 24 * 10 + 9 * 1)) < 1e-9);
  assert_int_equal(n.management.ports, 21);
  assert_int_equal(n.management.switches, 6);
  assert_int_equal(n.management.aggregation, 2);
  assert_int_equal(n.management.cables, 33);
  assert_true(fabs(n.management.cost_usd - (6 * 300.0 + 2 * 900 + 33 * 2)) < 1e-9);
  assert_true(fabs(n.cost_usd - (10000.0 + n.storage_fabric.cost_usd + n.management.cost_usd)) <
              1e-9);
  topo_free(st);
  unload(&f);
}

/* Servers that do not fit beside the nodes are refused at storage.servers. */
static void test_does_not_fit(void **state) {
  (void)state;
  const char *sets[] = {BASE, "storage.servers=3", "storage.nic.per_server=16"};
  cfg_scenario cfg;
  cfg_doc *doc;
  topo *t = NULL;
  sim_error err = {0};
  assert_int_equal(cfg_load(&cfg, &doc, NULL, sets, sizeof sets / sizeof *sets, &err), SIM_OK);
  assert_int_equal(topo_build(&t, &cfg, doc, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "storage.servers"));
  cfg_free(&cfg, doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backend_layout),
      cmocka_unit_test(test_no_storage_unchanged),
      cmocka_unit_test(test_separate_fabric),
      cmocka_unit_test(test_does_not_fit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
