/* Permutation traffic on a full-bisection 2-tier fat-tree (radix 8: 8 leaves
 * of 4 hosts, 4 spines; 32 hosts, one GPU and NIC each): every host sends
 * S bytes to a distinct other host on another leaf, all at once.
 *
 * With ECMP, flows hash onto leaf uplinks and spine downlinks independently,
 * so some links carry two or three flows while others idle: the phase ends
 * when the most shared link has drained, and aggregate throughput falls well
 * below line rate. Aggregate throughput is reported as a fraction of line
 * rate: T1 / T, with T the time the whole permutation takes and T1 the FCT of
 * one such flow alone on the fabric (line rate x payload/wire, plus latency).
 * Adaptive routing (per packet, least-queued uplink) and packet spraying
 * spread every flow over all spines and recover most of it. The transport
 * keeps out-of-order packets (selective), as NICs used with AR and spraying.
 * Switches have 2 MB (256 KB per port, as InfiniBand switches carve per-port
 * buffers): adaptive routing sees downstream congestion only through
 * backpressure (credits, PAUSE), so deep buffers hide it. Measured (this
 * seed, 8 MiB flows): ECMP 0.335 (IB) and 0.326 (RoCE): three flows share
 * the worst link, so the permutation takes 3x one flow; adaptive 0.876 (IB)
 * and 0.847 (RoCE): local queue depths balance each leaf's uplinks but not
 * per destination, so some spine downlinks still carry more than their
 * share; spray 0.957 (IB) and 0.917 (RoCE): every flow is spread over all
 * spines, what remains is queueing from random bursts and ACK overhead. */
#include "net/net_test.h"

enum { HOSTS = 32, PER_LEAF = 4 };
static const uint64_t S = 8 << 20;

/* A seeded derangement whose every pair crosses leaves. */
static void permutation(uint32_t *dst) {
  sim_rng r;
  sim_rng_init(&r, 42, "test.perm");
  for (;;) {
    for (uint32_t i = 0; i < HOSTS; i++) dst[i] = i;
    for (uint32_t i = HOSTS - 1; i > 0; i--) {
      uint32_t j = (uint32_t)sim_rng_below(&r, i + 1), t = dst[i];
      dst[i] = dst[j];
      dst[j] = t;
    }
    bool ok = true;
    for (uint32_t i = 0; i < HOSTS; i++) ok = ok && dst[i] / PER_LEAF != i / PER_LEAF;
    if (ok) return;
  }
}

static double run(const char *transport, const char *routing, fx_result *r) {
  char t[64], ro[64];
  snprintf(t, sizeof t, "fabric.transport=%s", transport);
  snprintf(ro, sizeof ro, "fabric.routing=%s", routing);
  const char *sets[] = {
      "cluster.nodes=32",    "cluster.gpus_per_node=1", "fabric.switch_radix=8", t, ro,
      "fabric.roce.cc=none", "fabric.switch.buffer=2MB"};
  fixture f;
  fx_load(&f, sets, 7);
  uint32_t dst[HOSTS];
  permutation(dst);
  be_xfer x[HOSTS];
  for (uint32_t i = 0; i < HOSTS; i++)
    x[i] = (be_xfer){.src_gpu = i, .dst_gpu = dst[i], .bytes = S, .flow_hash = sim_hash_u64(i + 1)};
  fx_result alone;
  fx_run(&f, x, 1, 1, &alone);
  fx_run(&f, x, HOSTS, 1, r);
  double agg = (double)alone.end / (double)r->end;
  printf(
      "  %-10s %-8s aggregate %.3f of line rate  (end %.1f us, FCT p50 %.1f us max %.1f us, "
      "max sharing %u, out-of-order %llu, retx %llu, pauses %llu)\n",
      transport, routing, agg, sim_ps_to_s(r->end) * 1e6, sim_ps_to_s(r->st.fct_p50) * 1e6,
      sim_ps_to_s(r->st.fct_max) * 1e6, r->st.max_link_sharing,
      (unsigned long long)r->st.out_of_order, (unsigned long long)r->st.retransmits,
      (unsigned long long)r->st.pfc_pauses);
  fx_unload(&f);
  return agg;
}

static void check(const char *transport) {
  fx_result r;
  double ecmp = run(transport, "ecmp", &r);
  assert_true(r.st.max_link_sharing >= 2); /* collisions */
  double ar = run(transport, "adaptive", &r);
  assert_int_equal(r.st.retransmits, 0);
  double spray = run(transport, "spray", &r);
  assert_int_equal(r.st.retransmits, 0);
  assert_true(r.st.out_of_order > 0);
  assert_int_equal(r.ext.headroom_drops, 0);
  assert_true(ecmp < 0.5);
  assert_true(ar > 0.8 && spray > 0.85);
}

static void test_infiniband(void **state) {
  (void)state;
  check("infiniband");
}

static void test_roce(void **state) {
  (void)state;
  check("roce");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_infiniband),
      cmocka_unit_test(test_roce),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
