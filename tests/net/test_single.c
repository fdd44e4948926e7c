/* One flow without contention: the marginal goodput of a long transfer is the
 * bottleneck rate times payload / wire size, per transport (IB 26 B header;
 * RoCEv2 and Ethernet 62 B + 20 B preamble/IFG). Measured as
 * (S2 - S1) / (FCT(S2) - FCT(S1)), which cancels latency and the one RETH. */
#include "net/net_test.h"

/* The smallest latency of a link with one: a transfer's end reaches its
 * phase that much later (both engines; docs/parallel.md, section 7.2). */
static simtime_ps end_gap(const topo *t) {
  simtime_ps g = SIM_TIME_MAX;
  for (uint32_t l = 0; l < topo_link_count(t); l++)
    if (topo_link_at(t, l)->latency && topo_link_at(t, l)->latency < g)
      g = topo_link_at(t, l)->latency;
  return g;
}

static simtime_ps fct_of(const fixture *f, uint32_t src, uint32_t dst, uint64_t bytes,
                         fx_result *r) {
  be_xfer x = {.src_gpu = src, .dst_gpu = dst, .bytes = bytes, .flow_hash = 7};
  fx_run(f, &x, 1, 1, r);
  assert_int_equal(r->st.transfers, 1);
  assert_int_equal(r->st.bytes, bytes);
  assert_int_equal(r->st.drops, 0);
  assert_int_equal(r->st.retransmits, 0);
  assert_true(r->st.observed & BE_OBS_FCT);
  assert_int_equal(r->st.fct_max + end_gap(f->t), r->end);
  return r->st.fct_max;
}

static void check(const char *transport, const char *cc, uint32_t gpn, uint32_t src, uint32_t dst,
                  rate_bps rate) {
  char t[64], g[64], c[64];
  snprintf(t, sizeof t, "fabric.transport=%s", transport);
  snprintf(g, sizeof g, "cluster.gpus_per_node=%u", gpn);
  snprintf(c, sizeof c, "fabric.roce.cc=%s", cc);
  const char *sets[] = {"cluster.nodes=2", g, "fabric.switch_radix=8", t, c};
  fixture f;
  fx_load(&f, sets, 5);
  /* payload moves at line rate x the link class's efficiency, headers included */
  double eff = rate ? f.cfg.cluster.scale_up.efficiency : f.cfg.cluster.nic.efficiency;
  if (!rate) rate = f.cfg.cluster.nic.bandwidth;
  fx_result r1, r2;
  uint64_t s1 = 4ull << 20, s2 = 36ull << 20;
  simtime_ps t1 = fct_of(&f, src, dst, s1, &r1), t2 = fct_of(&f, src, dst, s2, &r2);
  double goodput = (double)(s2 - s1) * 8 / sim_ps_to_s(t2 - t1);
  double want = (double)rate * fmin(eff, fx_efficiency(&f.cfg));
  double whole = (double)s2 * 8 / sim_ps_to_s(t2);
  printf(
      "  %-10s %-5s gpn %u: marginal goodput %.4f Gb/s, closed form %.4f Gb/s (%.4f %%), "
      "whole transfer %.4f Gb/s, %llu packets, link utilization %.4f\n",
      transport, cc, gpn, goodput / 1e9, want / 1e9, 100 * (goodput / want - 1), whole / 1e9,
      (unsigned long long)r2.st.packets, r2.st.link_utilization_max);
  assert_true(fabs(goodput / want - 1) < 0.005);
  assert_true(fabs(whole / want - 1) < 0.02); /* latency included */
  assert_int_equal(r2.st.packets, (s2 + f.cfg.fabric.mtu - 1) / f.cfg.fabric.mtu);
  fx_unload(&f);
}

static void test_infiniband(void **state) {
  (void)state;
  check("infiniband", "none", 1, 0, 1, 0);
}
static void test_roce(void **state) {
  (void)state;
  check("roce", "dcqcn", 1, 0, 1, 0);
}
static void test_ethernet(void **state) {
  (void)state;
  check("ethernet", "dcqcn", 1, 0, 1, 0);
}
/* Same node: the packets cross NVLink through the scale-up switch. */
static void test_nvlink(void **state) {
  (void)state;
  check("infiniband", "none", 2, 0, 1, 450000000000ull * 8);
  check("roce", "dcqcn", 2, 0, 1, 450000000000ull * 8);
}

/* A zero-byte RDMA WRITE still sends one packet and is acknowledged. */
static void test_zero_bytes(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "cluster.gpus_per_node=1", "fabric.switch_radix=8"};
  fixture f;
  fx_load(&f, sets, 3);
  be_xfer x[2] = {{.src_gpu = 0, .dst_gpu = 1, .bytes = 0},
                  {.src_gpu = 1, .dst_gpu = 1, .bytes = 5}};
  fx_result r;
  fx_run(&f, x, 2, 3, &r);
  assert_int_equal(r.st.transfers, 6);
  assert_int_equal(r.st.packets, 3);
  assert_true(r.end > 0);
  fx_unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_infiniband), cmocka_unit_test(test_roce),
      cmocka_unit_test(test_ethernet),   cmocka_unit_test(test_nvlink),
      cmocka_unit_test(test_zero_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
