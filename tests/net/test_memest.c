/* The packet fidelity's memory estimate (src/config/memest.c) against the
 * structures the packet backend allocates, counted with sizeof: per link
 * two channels, each with its hot and cold state, per-class queue and
 * ingress state and a sharing counter; per GPU a queue pair with its hot
 * path copy and a vertex for the GPU and its NIC. The estimate was measured
 * (peak RSS slopes); it must cover what is counted here and stay within a
 * small factor of it (the rest is the topology, routing tables and
 * telemetry). */
#include "net/net_test.h"

static void test_counted_sizes(void **state) {
  (void)state;
  fixture f;
  const char *sets[] = {"cluster.nodes=16"};
  fx_load(&f, sets, 1);
  cfg_memory m;
  cfg_memory_estimate(&f.cfg, &m);
  size_t per_channel = sizeof(net__chan) + sizeof(net__cold) +
                       NET__CLASSES * (sizeof(net__cq) + sizeof(net__ci)) + sizeof(uint32_t);
  size_t per_link = 2 * per_channel;
  size_t per_gpu = sizeof(net__qp) + sizeof(net__qhot) + 2 * sizeof(net__vert) +
                   2 * TOPO_MAX_PATH * sizeof(uint32_t);
  printf("  counted: %zu B per link (channel %zu), %zu B per GPU; estimate %llu, %llu\n", per_link,
         per_channel, per_gpu, (unsigned long long)m.per_link, (unsigned long long)m.per_gpu);
  assert_true(m.per_link >= per_link);
  assert_true(m.per_link <= 4 * per_link);
  assert_true(m.per_gpu >= per_gpu);
  assert_true(m.per_gpu <= 16 * per_gpu);
  /* the counts the estimate uses are the topology's (1:1, 2 tiers) */
  assert_int_equal(m.gpus, topo_gpu_count(f.t));
  assert_int_equal(m.links, topo_nic_count(f.t) + topo_inventory_get(f.t)->links_switch_switch);
  fx_unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_counted_sizes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
