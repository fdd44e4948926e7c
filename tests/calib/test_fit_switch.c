/* Calibration of the in-switch algorithms (NVLS, NVLSTree, CollNet): their
 * latency keys move the model, the fit recovers them from nccl-tests output
 * fabsim wrote itself, and a file's NCCL_ALGO / NCCL_PROTO echo holds the
 * fit to what the measurement ran (cal_run_env_sets). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calib/synth.h"
#include "fabsim/calib.h"
#include "fixture.h"

/* One node, NVLS forced: the time at 8 B is the NVLink hop key (no launch:
 * NCCL's base latency of NVLS is 0) and moves one for one with it. */
static void test_nvls_key_moves_the_model(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1", "workload.collective.algorithm=nvls",
                        "workload.collective.latency.nvls.nvlink_hop=40us"};
  double t[2];
  for (int k = 0; k < 2; k++) {
    fixture f;
    load(&f, sets, k ? 3 : 2);
    cal_sim s;
    sim_error err = {0};
    if (cal_simulate(f.t, &f.cfg, CAL_OP_ALLREDUCE, 8, 8, &s, &err) != SIM_OK)
      fail_msg("%s", err.msg);
    assert_int_equal(s.algorithm, CFG_ALGO_NVLS);
    t[k] = s.time_s;
    unload(&f);
  }
  if (!(fabs(t[0] - 25e-6) < 0.5e-6 && fabs(t[1] - t[0] - 15e-6) < 1e-12))
    fail_msg("25 us default %.9g s, 40 us key %.9g s", t[0], t[1]);
}

/* truth: NVLS latencies x1.5, NVLSTree's x2, everything else fabsim's */
static const char *const truth[] = {
    "workload.collective.latency.nvls.nvlink_hop=37.5us",
    "workload.collective.latency.nvls.network_hop=27us",
    "workload.collective.latency.nvlstree.nvlink_hop=50us",
    "workload.collective.latency.nvlstree.network_hop=41.8us",
};

static void test_fit_recovers_switch_latencies(void **state) {
  (void)state;
  cal_run runs[3];
  const char *nvls[] = {truth[0], truth[1], truth[2], truth[3],
                        "workload.collective.algorithm=nvls"};
  const char *tree[] = {truth[0], truth[1], truth[2], truth[3],
                        "workload.collective.algorithm=nvlstree"};
  calib_synth(&runs[0], CAL_OP_ALLREDUCE, 1, 8, nvls, 5,
              "node000:1:1 [0] NCCL INFO NCCL_ALGO set by environment to NVLS");
  calib_synth(&runs[1], CAL_OP_ALLREDUCE, 4, 8, tree, 5,
              "node000:1:1 [0] NCCL INFO NCCL_ALGO set by environment to allreduce:nvlstree");
  calib_synth(&runs[2], CAL_OP_ALLREDUCE, 2, 8, truth, 4, NULL); /* the tuner's picks */
  assert_string_equal(runs[0].nccl_algo, "NVLS");
  assert_int_equal(runs[0].nccl_algo_line, 1);
  cal_fit fit;
  cal_base base = {.keep_algorithms = true}; /* detection: test_detects_nvls */
  sim_error err = {0};
  if (cal_fit_run(&fit, &base, runs, 3, &err) != SIM_OK) fail_msg("%s", err.msg);
  print_message("fit: nvls x%.4f (1.5), nvlstree x%.4f (2), ll x%.4f (1); rms %.5f -> %.5f\n",
                fit.after[CAL_PARAM_LAT_NVLS], fit.after[CAL_PARAM_LAT_NVLSTREE],
                fit.after[CAL_PARAM_LAT_LL], fit.rms_before, fit.rms_after);
  /* the forced files ran what they measured */
  for (size_t j = 0; j < runs[0].n; j++)
    assert_int_equal(fit.files[0].rows[j].algorithm, CFG_ALGO_NVLS);
  for (size_t j = 0; j < runs[1].n; j++)
    assert_int_equal(fit.files[1].rows[j].algorithm, CFG_ALGO_NVLSTREE);
  assert_true(fit.fitted[CAL_PARAM_LAT_NVLS] && fit.fitted[CAL_PARAM_LAT_NVLSTREE]);
  assert_false(fit.fitted[CAL_PARAM_LAT_COLLNET]); /* no SHARP on the default fabric */
  assert_false(fit.at_bound[CAL_PARAM_LAT_NVLS] || fit.at_bound[CAL_PARAM_LAT_NVLSTREE]);
  assert_true(fabs(fit.after[CAL_PARAM_LAT_NVLS] / 1.5 - 1) < 0.03);
  assert_true(fabs(fit.after[CAL_PARAM_LAT_NVLSTREE] / 2 - 1) < 0.03);
  assert_true(fabs(fit.after[CAL_PARAM_LAT_LL] - 1) < 0.03);
  assert_true(fit.rms_before > 0.1 && fit.rms_after < 0.01);
  /* the fragment carries the keys, and loads back to the fitted latencies */
  char *frag = cal_fit_fragment(&fit, "defaults");
  assert_non_null(strstr(frag, "nvlstree:"));
  cfg_scenario c;
  cfg_doc *doc;
  if (cfg_load_buffer(&c, &doc, "calibration.yaml", frag, strlen(frag), NULL, 0, &err) != SIM_OK)
    fail_msg("%s\n%s", err.msg, frag);
  assert_memory_equal(&c.workload.collective.latency, &fit.lat_after, sizeof fit.lat_after);
  cfg_free(&c, doc);
  sim_free(frag);
  cal_fit_free(&fit);
  for (int i = 0; i < 3; i++) cal_run_free(&runs[i]);
}

/* Which algorithms the cluster ran, told from the rows: fabsim's own
 * AllReduce curves on one node and on two, run with NVLS and NVLSTree (the
 * default) and without (workload.collective.nvls=false); the fit from the
 * defaults keeps every algorithm for the first and drops NVLS for the
 * second, and its fragment says so. */
static void detect(const char *const *truth, int ntruth, cal_fit *fit, char **frag) {
  cal_run runs[2];
  calib_synth_by(&runs[0], CAL_OP_ALLREDUCE, 1, 8, truth, ntruth, NULL, 32); /* 6 rows */
  calib_synth_by(&runs[1], CAL_OP_ALLREDUCE, 2, 8, truth, ntruth, NULL, 32);
  cal_base base = {0};
  sim_error err = {0};
  if (cal_fit_run(fit, &base, runs, 2, &err) != SIM_OK) fail_msg("%s", err.msg);
  print_message(
      "%s: kept %s; objectives ring %.3g (%u), no NVLS %.3g (%u), all %.3g (%u); "
      "rms %.4f\n",
      ntruth ? truth[0] : "defaults", cal_algos_name(fit->algos), fit->cost[CAL_ALGOS_RING],
      fit->nfitted[CAL_ALGOS_RING], fit->cost[CAL_ALGOS_NO_NVLS], fit->nfitted[CAL_ALGOS_NO_NVLS],
      fit->cost[CAL_ALGOS_ALL], fit->nfitted[CAL_ALGOS_ALL], fit->rms_after);
  for (int a = 0; a < CAL_NALGOS; a++) assert_true(fit->tried[a]);
  *frag = cal_fit_fragment(fit, "defaults");
  cal_fit_free(fit);
  for (int i = 0; i < 2; i++) cal_run_free(&runs[i]);
}

static void test_detects_nvls(void **state) {
  (void)state;
  cal_fit fit;
  char *frag;
  detect(NULL, 0, &fit, &frag);
  assert_int_equal(fit.algos, CAL_ALGOS_ALL);
  assert_null(strstr(frag, "nvls: false"));
  sim_free(frag);
  const char *off[] = {"workload.collective.nvls=false"};
  detect(off, 1, &fit, &frag);
  assert_int_not_equal(fit.algos, CAL_ALGOS_ALL);
  if (!strstr(frag, "    nvls: false\n")) fail_msg("%s", frag);
  sim_free(frag);
}

/* NCCL_ALGO / NCCL_PROTO in NCCL's syntax as scenario keys. */
static void env_case(cal_op op, const char *algo, const char *proto, int want_n,
                     const char *const *want) {
  cal_run r = {.op = op, .nccl_algo_line = 3, .nccl_proto_line = 4};
  snprintf(r.name, sizeof r.name, "run.log");
  snprintf(r.nccl_algo, sizeof r.nccl_algo, "%s", algo);
  snprintf(r.nccl_proto, sizeof r.nccl_proto, "%s", proto);
  char sets[8][64];
  sim_error err = {0};
  int n = cal_run_env_sets(&r, sets, 8, &err);
  if (n != want_n) fail_msg("'%s' '%s': %d keys (%s), want %d", algo, proto, n, err.msg, want_n);
  for (int i = 0; i < n; i++) assert_string_equal(sets[i], want[i]);
}

static void test_env_sets(void **state) {
  (void)state;
  env_case(CAL_OP_ALLREDUCE, "Ring", "", 1,
           (const char *const[]){"workload.collective.algorithm=ring"});
  env_case(CAL_OP_ALLREDUCE, "ring,tree", "LL128", 3,
           (const char *const[]){"workload.collective.nvls=false", "fabric.sharp=false",
                                 "workload.collective.protocol=ll128"});
  env_case(CAL_OP_ALLREDUCE, "^NVLS,nvlstree", "^LL", 1,
           (const char *const[]){"workload.collective.nvls=false"});
  env_case(CAL_OP_ALLREDUCE, "CollNetDirect,CollNetChain", "", 1,
           (const char *const[]){"workload.collective.algorithm=collnet"});
  env_case(CAL_OP_ALLGATHER, "allreduce:tree;allgather:ring", "", 1,
           (const char *const[]){"workload.collective.algorithm=ring"});
  env_case(CAL_OP_ALLREDUCE, "allgather:ring", "", 0, NULL); /* not this collective's */
  env_case(CAL_OP_ALLTOALL, "ring", "simple", 0, NULL);      /* point to point */
  /* refused, at the line */
  cal_run r = {.op = CAL_OP_ALLREDUCE, .nccl_algo_line = 3};
  snprintf(r.name, sizeof r.name, "run.log");
  snprintf(r.nccl_algo, sizeof r.nccl_algo, "ring,Foo");
  char sets[8][64];
  sim_error err = {0};
  assert_int_equal(cal_run_env_sets(&r, sets, 8, &err), -1);
  if (!strstr(err.msg, "run.log:3: NCCL_ALGO 'ring,Foo': unknown algorithm 'Foo'"))
    fail_msg("%s", err.msg);
  snprintf(r.nccl_algo, sizeof r.nccl_algo, "PAT");
  assert_int_equal(cal_run_env_sets(&r, sets, 8, &err), -1);
  assert_non_null(strstr(err.msg, "only PAT"));
}

/* The parser reads the echo and refuses a bad one while reading. */
static void test_parser_reads_env(void **state) {
  (void)state;
  cal_run r;
  calib_synth(&r, CAL_OP_ALLREDUCE, 1, 8, NULL, 0,
              "[0] host:1:1 [0] NCCL INFO NCCL_PROTO set by environment to Simple.");
  assert_string_equal(r.nccl_proto, "Simple");
  assert_string_equal(r.nccl_algo, "");
  cal_run_free(&r);
  /* the table of a good run behind a misspelt echo */
  cal_point pt[2] = {{.bytes = 1024, .time_us = 20}, {.bytes = 2048, .time_us = 21}};
  cal_run w = {
      .op = CAL_OP_ALLREDUCE, .ranks = 8, .nodes = 1, .gpus_per_node = 8, .pt = pt, .n = 2};
  snprintf(w.gpu, sizeof w.gpu, "NVIDIA H100 80GB HBM3");
  char *table = cal_nccltests_format(&w);
  size_t cap = strlen(table) + 128;
  char *text = malloc(cap);
  snprintf(text, cap, "host:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Rnig\n%s", table);
  sim_error err = {0};
  assert_int_equal(cal_nccltests_parse(&r, "x.log", text, strlen(text), CAL_OP_UNKNOWN, &err),
                   SIM_ECONFIG);
  if (!strstr(err.msg, "x.log:1: NCCL_ALGO 'Rnig': unknown algorithm 'Rnig'; allowed: Tree"))
    fail_msg("%s", err.msg);
  free(text);
  sim_free(table);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nvls_key_moves_the_model),
      cmocka_unit_test(test_fit_recovers_switch_latencies),
      cmocka_unit_test(test_detects_nvls),
      cmocka_unit_test(test_env_sets),
      cmocka_unit_test(test_parser_reads_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
