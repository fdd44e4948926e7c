/* Calibration: the protocol latency keys and their defaults, one collective
 * from a scenario (cal_simulate, sendrecv's closed form), the nccl-tests
 * writer read back, and the fit recovering known parameters from output
 * fabsim wrote itself; the fragment loads alone and as --set overrides and
 * reproduces the fitted times. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/calib.h"
#include "calib/synth.h"
#include "fixture.h"

/* The schema's defaults of workload.collective.latency.* are NCCL's, the
 * table coll_protocol_params_of falls back on without a scenario. */
static void test_latency_defaults(void **state) {
  (void)state;
  fixture f;
  load(&f, NULL, 0);
  static const cfg_coll_protocol ps[] = {CFG_PROTO_LL, CFG_PROTO_LL128, CFG_PROTO_SIMPLE};
  static const cfg_coll_algorithm as[] = {CFG_ALGO_RING, CFG_ALGO_TREE, CFG_ALGO_PXN};
  for (size_t i = 0; i < 3; i++)
    for (size_t j = 0; j < 3; j++) {
      coll_protocol_params d = coll_protocol_params_of(NULL, as[j], ps[i]);
      coll_protocol_params c =
          coll_protocol_params_of(&f.cfg.workload.collective.latency, as[j], ps[i]);
      assert_true(d.launch_us == c.launch_us && d.hop_nvlink_us == c.hop_nvlink_us &&
                  d.hop_net_us == c.hop_net_us);
    }
  /* NCCL's figures (tuning.cc): ring LL 6.6 us launch, 0.6 NVLink, 2.7 network; tree LL128 */
  coll_protocol_params q = coll_protocol_params_of(NULL, CFG_ALGO_RING, CFG_PROTO_LL);
  assert_true(q.launch_us == 6.6 && q.hop_nvlink_us == 0.6 && q.hop_net_us == 2.7);
  q = coll_protocol_params_of(NULL, CFG_ALGO_TREE, CFG_PROTO_LL128);
  assert_true(q.launch_us == 14.0 && q.hop_nvlink_us == 1.25 && q.hop_net_us == 8.5);
  unload(&f);
  /* a key moves its parameter */
  const char *sets[] = {"workload.collective.latency.simple.tree_network_hop=21us"};
  load(&f, sets, 1);
  q = coll_protocol_params_of(&f.cfg.workload.collective.latency, CFG_ALGO_TREE, CFG_PROTO_SIMPLE);
  assert_true(q.hop_net_us == 21.0);
  unload(&f);
}

/* One-node ring AllReduce with LL and a launch of 20 us: the closed form
 * of coll.h, launch + 2(n-1)(alpha + t_step) + 2(n-1)(hop - alpha),
 * t_step = max(w S/(n B), S/(n cap)). */
static void test_simulate_latency_key(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1",
                        "workload.collective.protocol=ll",
                        "workload.collective.algorithm=ring",
                        "workload.collective.channels=1",
                        "workload.collective.latency.ll.launch=20us",
                        "workload.collective.latency.ll.nvlink_hop=3us"};
  fixture f;
  load(&f, sets, 6);
  cal_sim s;
  sim_error err = {0};
  uint64_t S = 8 * 1024;
  assert_int_equal(cal_simulate(f.t, &f.cfg, CAL_OP_ALLREDUCE, S, 8, &s, &err), SIM_OK);
  topo_path p;
  assert_int_equal(topo_route(f.t, 0, 1, 0, &p), SIM_OK);
  double alpha = sim_ps_to_s(topo_path_latency(f.t, &p));
  double B = (double)topo_path_bottleneck(f.t, &p) / 8;
  /* LL's per-channel cap on H100 (141 GB/s over one channel) paces each
   * step, and a 1 KiB chunk is one slice: no hop hidden (tests/coll/test_protocol.c) */
  double t_data = 2.0 * S / 8 / B, t_step = fmax(t_data, (double)S / 8 / 141e9);
  double want = 20e-6 + 14 * (alpha + t_step) + 14 * (3e-6 - alpha);
  if (!(fabs(s.time_s - want) < 14e-12)) /* serialization rounds to the ps per step */
    fail_msg("got %.12g want %.12g alpha %g B %g", s.time_s, want, alpha, B);
  assert_int_equal(s.protocol, CFG_PROTO_LL);
  assert_true(fabs(s.busbw_GBps - S / s.time_s / 1e9 * 2 * 7 / 8) < 1e-9);
  unload(&f);
}

/* sendrecv over 2 nodes: one phase, t = launch + alpha + (hop - alpha) + S/B
 * with the network hop (pairs cross nodes) and Simple above 16 KiB. */
static void test_sendrecv_closed_form(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  cal_sim s;
  sim_error err = {0};
  uint64_t S = 64 << 20;
  assert_int_equal(cal_simulate(f.t, &f.cfg, CAL_OP_SENDRECV, S, 16, &s, &err), SIM_OK);
  assert_int_equal(s.protocol, CFG_PROTO_SIMPLE);
  /* the slowest pair: the two that cross nodes (7 -> 8, 15 -> 0), at the NIC rate */
  topo_path p;
  assert_int_equal(topo_route(f.t, 7, 8, 7, &p), SIM_OK);
  double alpha = sim_ps_to_s(topo_path_latency(f.t, &p));
  double B = (double)topo_path_bottleneck(f.t, &p) / 8;
  double hop = 14e-6; /* Simple network hop */
  double want = 8.4e-6 + (alpha > hop ? alpha : hop) + (double)S / B;
  if (!(fabs(s.time_s - want) < 2e-12))
    fail_msg("got %.12g want %.12g alpha %g B %g", s.time_s, want, alpha, B);
  assert_true(fabs(s.busbw_GBps - (double)S / s.time_s / 1e9) < 1e-9);
  /* LL at 8 KiB: twice the bytes, LL's launch and hop */
  assert_int_equal(cal_simulate(f.t, &f.cfg, CAL_OP_SENDRECV, 8192, 16, &s, &err), SIM_OK);
  assert_int_equal(s.protocol, CFG_PROTO_LL);
  want = 6.6e-6 + (alpha > 2.7e-6 ? alpha : 2.7e-6) + 2.0 * 8192 / B;
  if (!(fabs(s.time_s - want) < 2e-12)) fail_msg("got %.12g want %.12g", s.time_s, want);
  assert_int_equal(cal_simulate(f.t, &f.cfg, CAL_OP_REDUCE, S, 16, &s, &err), SIM_EINVAL);
  unload(&f);
}

/* ---- synthetic nccl-tests output from fabsim itself ---- */

typedef struct shape {
  cal_op op;
  uint32_t nodes, per_node;
} shape;

static const shape shapes[] = {
    {CAL_OP_ALLREDUCE, 1, 8}, {CAL_OP_ALLGATHER, 1, 8}, {CAL_OP_ALLREDUCE, 4, 8},
    {CAL_OP_ALLTOALL, 4, 8},  {CAL_OP_SENDRECV, 2, 8},
};
enum { NSHAPES = sizeof shapes / sizeof *shapes };

static void synth(cal_run *out, const shape *sh, const char *const *truth, int ntruth) {
  calib_synth(out, sh->op, sh->nodes, sh->per_node, truth, ntruth, NULL);
}

/* NVLS off in the truth and the fit's base: NVLS and NVLSTree would take
 * the rows whose LL128 latency the fit must recover (their own latencies:
 * tests/calib/test_fit_switch.c). */
static const char *const no_nvls[] = {"workload.collective.nvls=false"};
static const char *const truth[] = {
    "workload.collective.nvls=false",
    "cluster.scale_up.efficiency=0.75",
    "cluster.nic.efficiency=0.8",
    "workload.collective.latency.ll.launch=13.2us",
    "workload.collective.latency.ll.nvlink_hop=1.2us",
    "workload.collective.latency.ll.network_hop=5.4us",
    "workload.collective.latency.ll.tree_launch=13.6us",
    "workload.collective.latency.ll.tree_nvlink_hop=1.2us",
    "workload.collective.latency.ll.tree_network_hop=10us",
    "workload.collective.latency.ll128.launch=21us",
    "workload.collective.latency.ll128.nvlink_hop=2.85us",
    "workload.collective.latency.ll128.network_hop=6us",
    "workload.collective.latency.ll128.tree_launch=21us",
    "workload.collective.latency.ll128.tree_nvlink_hop=1.875us",
    "workload.collective.latency.ll128.tree_network_hop=12.75us",
};
enum { NTRUTH = sizeof truth / sizeof *truth };

static void test_fit_recovers(void **state) {
  (void)state;
  cal_run runs[NSHAPES];
  for (size_t i = 0; i < NSHAPES; i++) synth(&runs[i], &shapes[i], truth, NTRUTH);
  cal_fit fit;
  /* cluster.gpu from the device names; the algorithms as the truth's (their
   * detection: tests/calib/test_fit_switch.c) */
  cal_base base = {.sets = no_nvls, .nsets = 1, .keep_algorithms = true};
  sim_error err = {0};
  if (cal_fit_run(&fit, &base, runs, NSHAPES, &err) != SIM_OK) fail_msg("%s", err.msg);
  print_message(
      "fit: nvlink %.4f (0.75), nic %.4f (0.8), ll x%.4f (2), ll128 x%.4f (1.5), "
      "simple x%.4f (1); rms %.5f -> %.5f, %u evaluations\n",
      fit.after[CAL_PARAM_NVLINK_EFF], fit.after[CAL_PARAM_NIC_EFF], fit.after[CAL_PARAM_LAT_LL],
      fit.after[CAL_PARAM_LAT_LL128], fit.after[CAL_PARAM_LAT_SIMPLE], fit.rms_before,
      fit.rms_after, fit.evaluations);
  assert_string_equal(fit.gpu, "H100");
  for (int p = 0; p < CAL_PARAM_BW_RING; p++)
    assert_true(fit.fitted[p] == (p <= CAL_PARAM_LAT_SIMPLE));
  /* the bandwidth factors of the algorithms the rows ran, at the truth's 1 */
  assert_true(fit.fitted[CAL_PARAM_BW_RING] && fit.fitted[CAL_PARAM_BW_TREE]);
  for (int p = CAL_PARAM_BW_RING; p < CAL_NPARAM; p++)
    assert_true(!fit.fitted[p] || fit.after[p] >= 0.99);
  assert_int_equal(fit.algos, CAL_ALGOS_ALL);
  assert_false(fit.tried[CAL_ALGOS_NO_NVLS] || fit.tried[CAL_ALGOS_RING]);
  assert_true(fit.before[CAL_PARAM_NIC_EFF] == 0.92); /* the defaults */
  assert_true(fabs(fit.after[CAL_PARAM_NVLINK_EFF] - 0.75) < 0.005);
  assert_true(fabs(fit.after[CAL_PARAM_NIC_EFF] - 0.8) < 0.005);
  assert_true(fabs(fit.after[CAL_PARAM_LAT_LL] / 2 - 1) < 0.03);
  assert_true(fabs(fit.after[CAL_PARAM_LAT_LL128] / 1.5 - 1) < 0.05);
  assert_true(fabs(fit.after[CAL_PARAM_LAT_SIMPLE] - 1) < 0.05);
  assert_true(fit.rms_before > 0.1);
  assert_true(fit.rms_after < 0.005);
  /* the residual of every row of every file */
  size_t rows = 0;
  for (size_t i = 0; i < fit.nfiles; i++) {
    assert_int_equal(fit.files[i].run->n, runs[i].n);
    for (size_t j = 0; j < runs[i].n; j++) {
      const cal_row *w = &fit.files[i].rows[j];
      assert_true(w->used);
      assert_int_equal(w->bytes, runs[i].pt[j].bytes);
      assert_true(fabs(w->fitted_us / w->measured_us - 1) < 0.02);
      rows++;
    }
  }
  assert_int_equal(rows, fit.rows_used);

  /* the fragment alone loads and holds the fitted values, exactly */
  char *frag = cal_fit_fragment(&fit, "defaults, cluster.gpu H100 from the files");
  cfg_scenario c;
  cfg_doc *doc;
  if (cfg_load_buffer(&c, &doc, "calibration.yaml", frag, strlen(frag), NULL, 0, &err) != SIM_OK)
    fail_msg("%s\n%s", err.msg, frag);
  assert_true(c.cluster.scale_up.efficiency == fit.after[CAL_PARAM_NVLINK_EFF]);
  assert_true(c.cluster.nic.efficiency == fit.after[CAL_PARAM_NIC_EFF]);
  assert_memory_equal(&c.workload.collective.latency, &fit.lat_after, sizeof fit.lat_after);
  assert_int_equal(c.cluster.gpu, CFG_GPU_H100);
  cfg_free(&c, doc);

  /* ... and as --set overrides over a base, with a file's shape: the
   * fitted time of every row */
  char sets[64][128];
  size_t n = cal_fit_sets(&fit, sets, 64);
  assert_true(n == 3 + 18 + 2); /* gpu, efficiencies, the protocols' keys, ring and tree */
  const char *argv[80];
  for (size_t i = 0; i < n; i++) argv[i] = sets[i];
  argv[n] = "cluster.nodes=4";
  argv[n + 1] = no_nvls[0]; /* the fit's base */
  fixture f;
  load(&f, argv, (int)n + 2);
  for (size_t j = 0; j < runs[2].n; j++) {
    cal_sim s;
    assert_int_equal(cal_simulate(f.t, &f.cfg, CAL_OP_ALLREDUCE, runs[2].pt[j].bytes, 32, &s, &err),
                     SIM_OK);
    assert_true(s.time_s * 1e6 == fit.files[2].rows[j].fitted_us);
  }
  unload(&f);
  sim_free(frag);
  cal_fit_free(&fit);
  for (size_t i = 0; i < NSHAPES; i++) cal_run_free(&runs[i]);
}

/* Same inputs, same fit, bit for bit; the base's own values are the start. */
static void test_fit_deterministic_and_refusals(void **state) {
  (void)state;
  cal_run r[2];
  synth(&r[0], &shapes[0], truth, NTRUTH);
  synth(&r[1], &shapes[1], truth, NTRUTH);
  cal_fit a, b;
  cal_base base = {.keep_algorithms = true};
  sim_error err = {0};
  assert_int_equal(cal_fit_run(&a, &base, r, 2, &err), SIM_OK);
  assert_int_equal(cal_fit_run(&b, &base, r, 2, &err), SIM_OK);
  assert_memory_equal(a.after, b.after, sizeof a.after);
  assert_int_equal(a.evaluations, b.evaluations);
  print_message("deterministic: %u evaluations\n", a.evaluations);
  assert_false(a.fitted[CAL_PARAM_NIC_EFF]); /* one node: the NIC is not measured */
  assert_true(a.after[CAL_PARAM_NIC_EFF] == a.before[CAL_PARAM_NIC_EFF]);
  cal_fit_free(&a);
  cal_fit_free(&b);
  /* a GPU fabsim does not know, without a base: refused, naming the file */
  snprintf(r[0].gpu, sizeof r[0].gpu, "NVIDIA L40S");
  assert_int_equal(cal_fit_run(&a, &base, r, 1, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "L40S"));
  assert_non_null(strstr(err.msg, r[0].name));
  /* ... accepted with cluster.gpu given */
  const char *sets[] = {"cluster.gpu=H100"};
  cal_base with = {.sets = sets, .nsets = 1};
  assert_int_equal(cal_fit_run(&a, &with, r, 1, &err), SIM_OK);
  assert_string_equal(a.gpu, "");
  cal_fit_free(&a);
  /* a collective fabsim does not simulate */
  r[1].op = CAL_OP_REDUCE;
  assert_int_equal(cal_fit_run(&a, &with, &r[1], 1, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "reduce"));
  /* a bad base key, located */
  snprintf(r[0].gpu, sizeof r[0].gpu, "NVIDIA H100 80GB HBM3");
  const char *bad[] = {"cluster.nic.efficiency=2x"};
  cal_base worse = {.sets = bad, .nsets = 1};
  assert_int_equal(cal_fit_run(&a, &worse, r, 1, &err), SIM_ECONFIG);
  if (!strstr(err.msg, "--set:1:")) fail_msg("%s", err.msg);
  cal_run_free(&r[0]);
  cal_run_free(&r[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_latency_defaults),
      cmocka_unit_test(test_simulate_latency_key),
      cmocka_unit_test(test_sendrecv_closed_form),
      cmocka_unit_test(test_fit_recovers),
      cmocka_unit_test(test_fit_deterministic_and_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
