/* N-to-1 incast of S bytes each behind one leaf (N = 8, S = 1 MB):
 *   InfiniBand (credits) and RoCE with PFC finish in about N S / (rate x
 *     payload/wire) with zero drops;
 *   lossy Ethernet drops at the receiver's leaf, retransmits, finishes later;
 *   RoCE with PFC and DCQCN (S = 8 MB, so that the control loop has time):
 *     ECN marks and CNPs appear and PFC pauses fall against the same incast
 *     without congestion control. */
#include "net/net_test.h"

enum { N = 8 };
static void incast_s(const char *const *extra, int nextra, uint64_t S, fx_result *r,
                     double *ideal_ps) {
  const char *sets[16] = {"cluster.nodes=9", "cluster.gpus_per_node=1", "fabric.switch_radix=32",
                          "fabric.switch.buffer=8MB"};
  int ns = 4;
  for (int i = 0; i < nextra; i++) sets[ns++] = extra[i];
  fixture f;
  fx_load(&f, sets, ns);
  be_xfer x[N];
  for (uint32_t i = 0; i < N; i++)
    x[i] = (be_xfer){.src_gpu = i + 1, .dst_gpu = 0, .bytes = S, .flow_hash = sim_hash_u64(i)};
  fx_run(&f, x, N, 1, r);
  *ideal_ps = (double)N * (double)S * 8 /
              ((double)f.cfg.cluster.nic.bandwidth *
               fmin(f.cfg.cluster.nic.efficiency, fx_efficiency(&f.cfg))) *
              1e12;
  assert_int_equal(r->st.transfers, N);
  fx_unload(&f);
}

static void incast(const char *const *extra, int nextra, fx_result *r, double *ideal_ps) {
  incast_s(extra, nextra, 1000000, r, ideal_ps);
}

static void show(const char *name, const fx_result *r, double ideal) {
  printf(
      "  %-22s %8.2f us (ideal %.2f, x%.4f)  drops %llu retx %llu pauses %llu paused %.1f us "
      "marks %llu cnps %llu maxq %llu B timeouts %llu\n",
      name, sim_ps_to_s(r->end) * 1e6, ideal * 1e-6, (double)r->end / ideal,
      (unsigned long long)r->st.drops, (unsigned long long)r->st.retransmits,
      (unsigned long long)r->st.pfc_pauses, sim_ps_to_s(r->st.pfc_paused) * 1e6,
      (unsigned long long)r->st.ecn_marks, (unsigned long long)r->st.cnps,
      (unsigned long long)r->st.max_queue_bytes, (unsigned long long)r->ext.timeouts);
}

static void test_lossless(void **state) {
  (void)state;
  fx_result ib, pfc;
  double ideal_ib, ideal_pfc;
  const char *a[] = {"fabric.transport=infiniband"};
  const char *b[] = {"fabric.transport=roce", "fabric.roce.cc=none"};
  incast(a, 1, &ib, &ideal_ib);
  incast(b, 2, &pfc, &ideal_pfc);
  show("infiniband", &ib, ideal_ib);
  show("roce pfc, no cc", &pfc, ideal_pfc);
  assert_int_equal(ib.st.drops, 0);
  assert_int_equal(pfc.st.drops, 0);
  assert_int_equal(ib.st.retransmits + pfc.st.retransmits, 0);
  assert_int_equal(pfc.ext.headroom_drops, 0);
  assert_true((double)ib.end >= ideal_ib && (double)ib.end < 1.03 * ideal_ib);
  assert_true((double)pfc.end >= ideal_pfc && (double)pfc.end < 1.03 * ideal_pfc);
  assert_true(pfc.st.pfc_pauses > 0);
}

static void test_lossy(void **state) {
  (void)state;
  fx_result pfc, eth, gbn;
  double ideal;
  const char *b[] = {"fabric.transport=roce", "fabric.roce.cc=none"};
  const char *e[] = {"fabric.transport=ethernet", "fabric.roce.cc=none"};
  const char *g[] = {"fabric.transport=ethernet", "fabric.roce.cc=none",
                     "cluster.nic.recovery=go-back-n"};
  incast(b, 2, &pfc, &ideal);
  incast(e, 2, &eth, &ideal);
  incast(g, 3, &gbn, &ideal);
  show("roce pfc, no cc", &pfc, ideal);
  show("ethernet selective", &eth, ideal);
  show("ethernet go-back-n", &gbn, ideal);
  assert_true(eth.st.drops > 0 && eth.st.retransmits > 0);
  assert_true(gbn.st.drops > 0 && gbn.st.retransmits > 0);
  assert_true(eth.end > pfc.end && gbn.end > pfc.end);
  assert_int_equal(eth.st.pfc_pauses + gbn.st.pfc_pauses, 0);
}

static void test_dcqcn(void **state) {
  (void)state;
  fx_result none, dcqcn;
  double ideal;
  const char *b[] = {"fabric.transport=roce", "fabric.roce.cc=none"};
  const char *d[] = {"fabric.transport=roce", "fabric.roce.cc=dcqcn"};
  incast_s(b, 2, 8000000, &none, &ideal); /* long enough for the control loop to act */
  incast_s(d, 2, 8000000, &dcqcn, &ideal);
  show("roce pfc, no cc", &none, ideal);
  show("roce pfc, dcqcn", &dcqcn, ideal);
  assert_int_equal(none.st.cnps, 0);
  assert_true(dcqcn.st.ecn_marks > 0 && dcqcn.st.cnps > 0);
  assert_true(dcqcn.st.pfc_pauses < none.st.pfc_pauses);
  assert_int_equal(dcqcn.st.drops, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lossless),
      cmocka_unit_test(test_lossy),
      cmocka_unit_test(test_dcqcn),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
