/* A GPU's PCIe link shared by its NICs (cloud shapes with two NICs a GPU):
 * the GPU reaches its NICs through a PCIe switch, over its own x16 link,
 * so what its NICs carry together is bounded by that link's rate, as
 * NCCL's topology counts it (NVIDIA/nccl src/graph/topo.cc: one GPU-to-
 * switch link whose bandwidth src/graph/search.cc takes each channel's
 * share off). The closed form: a ring AllGather across 2 nodes of one GPU
 * sends (n-1)/n of the buffer out of each GPU, so its busbw is the GPU's
 * send rate, min(k x NIC rate, PCIe rate) with k NICs a GPU, each rate its
 * line rate x its efficiency. Checked at the analytic, flow and packet
 * fidelities. Fails with a PCIe link a NIC from the GPU (before: 2 NICs of
 * 400 Gb/s gave 2 x 46 = 92 GB/s from a GPU whose x16 Gen5 link carries
 * 57.6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "fixture.h"
#include "coll/coll_test.h"

enum { SIZE = 256u << 20 };

/* The busbw (GB/s) of a ring AllGather of SIZE bytes over both GPUs of a
 * 2-node, 1-GPU-a-node cluster with nics NICs a node, one channel a NIC,
 * at fidelity fid; *bound gets min(k x NIC, PCIe) in GB/s. */
static double allgather_busbw(const char *nic_bw, const char *pcie_bw, uint32_t nics, int fid,
                              double *bound) {
  static const char *const fidelity[] = {"simulation.fidelity=analytic", "simulation.fidelity=flow",
                                         "simulation.fidelity=packet"};
  char per[40], nb[64], pb[64];
  snprintf(per, sizeof per, "cluster.nic.per_node=%u", nics);
  snprintf(nb, sizeof nb, "cluster.nic.bandwidth=%s", nic_bw);
  snprintf(pb, sizeof pb, "cluster.pcie.bandwidth=%s", pcie_bw);
  const char *sets[] = {
      "cluster.gpu=B200",      "cluster.nodes=2", "cluster.gpus_per_node=1", per, nb, pb,
      "fabric.transport=roce", fidelity[fid]};
  fixture f;
  load(&f, sets, sizeof sets / sizeof *sets);
  assert_int_equal(topo_nics_per_gpu(f.t), nics);
  double nic = (double)fx_achievable(f.cfg.cluster.nic.bandwidth, f.cfg.cluster.nic.efficiency),
         pcie = (double)fx_achievable(f.cfg.cluster.pcie.bandwidth, f.cfg.cluster.pcie.efficiency);
  *bound = (nics * nic < pcie ? nics * nic : pcie) / 8e9;
  uint32_t ranks[2] = {0, 1};
  coll_spec s = {.op = CFG_COLL_ALLGATHER,
                 .algorithm = CFG_ALGO_RING,
                 .bytes = SIZE,
                 .ranks = ranks,
                 .nranks = 2,
                 .channels = nics,
                 .chunk = 1 << 20,
                 .protocol = CFG_PROTO_SIMPLE};
  coll_spec_set_hw(&s, &f.cfg);
  coll_plan p;
  sim_error err = {0};
  if (coll_plan_build(&p, f.t, &s, &err) != SIM_OK) fail_msg("%s", err.msg);
  double t = sim_ps_to_s(coll_test_run_on(&f, &p, fid));
  coll_plan_free(&p);
  unload(&f);
  return (double)SIZE / 2 / t / 1e9;
}

/* Within 2 % below the bound (the ring's latency and fill at 256 MiB), never above. */
static void expect(const char *what, double got, double bound, int fid) {
  if (got > bound * 1.0001 || got < bound * 0.98)
    fail_msg("%s at fidelity %d: busbw %.2f GB/s, want min(k x NIC, PCIe) = %.2f", what, fid, got,
             bound);
}

static void test_two_nics_bounded_by_pcie(void **state) {
  (void)state;
  for (int fid = 0; fid < 3; fid++) {
    double bound, got;
    /* 2 x 400 Gb/s NICs (2 x 46 GB/s) behind a x16 Gen5 link (57.6): PCIe */
    got = allgather_busbw("400Gbps", "64GB/s", 2, fid, &bound);
    assert_true(bound > 57.5 && bound < 57.7);
    expect("2 x 400G, Gen5", got, bound, fid);
    /* 2 x 100 Gb/s: the NICs, both driven (2 x 11.5) */
    got = allgather_busbw("100Gbps", "64GB/s", 2, fid, &bound);
    assert_true(bound > 22.9 && bound < 23.1);
    expect("2 x 100G, Gen5", got, bound, fid);
    /* a Gen6 link (115.2) lets both 400 Gb/s NICs run (92) */
    got = allgather_busbw("400Gbps", "128GB/s", 2, fid, &bound);
    assert_true(bound > 91.9 && bound < 92.1);
    expect("2 x 400G, Gen6", got, bound, fid);
  }
}

/* One NIC a GPU: its own PCIe link, no switch; the NIC bounds it (46). */
static void test_one_nic_unchanged(void **state) {
  (void)state;
  for (int fid = 0; fid < 3; fid++) {
    double bound, got = allgather_busbw("400Gbps", "64GB/s", 1, fid, &bound);
    assert_true(bound > 45.9 && bound < 46.1);
    expect("1 x 400G, Gen5", got, bound, fid);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_nics_bounded_by_pcie),
      cmocka_unit_test(test_one_nic_unchanged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
