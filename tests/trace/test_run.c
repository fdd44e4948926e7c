/* The example Chakra job (example_trace.h) run on the fabric, checked against
 * its closed form: the iteration is the critical path's compute plus each
 * collective's and the transfer's time as fabsim computes them alone. Also:
 * the checked-in files are the generator's bytes; roofline compute; rank
 * classes; determinism; the CLI refuses a bad trace with exit 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <math.h>

#include <cmocka.h>
#include <jansson.h>

#include "fabsim/coll.h"
#include "fabsim/trace.h"

#include "trace/run_fixture.h"

/* state: the fidelity */
static void test_closed_form(void **state) {
  const char *sets[7];
  memcpy(sets, base_sets, sizeof base_sets);
  sets[5] = *state;
  fixture f;
  load(&f, sets, 6);
  trc_set *s = example_set(per_rank, EX_RANKS);
  assert_int_equal(s->ngroups, 2);
  assert_int_equal(s->ninstances, 2);
  assert_int_equal(s->npairs, 1);
  trc_result r;
  run_set(&f, s, &r);
  simtime_ps ar = alone_coll(&f, CFG_COLL_ALLREDUCE, EX_AR_BYTES, EX_RANKS);
  simtime_ps ag = alone_coll(&f, CFG_COLL_ALLGATHER, EX_AG_BYTES * EX_AG_RANKS, EX_AG_RANKS);
  simtime_ps p2p = alone_xfer(&f, 0, 4, EX_P2P_BYTES);
  simtime_ps us = 1000000;
  simtime_ps want = EX_FWD_SLOW_US * us + ar + EX_BWD_US * us + ag + p2p + EX_OPT_US * us;
  print_message(
      "iteration %.3f us = 150 + AllReduce %.3f + 200 + AllGather %.3f + send %.3f + "
      "50 us\n",
      (double)r.time_ps / 1e6, (double)ar / 1e6, (double)ag / 1e6, (double)p2p / 1e6);
  assert_true(ar > 0 && ag > 0 && p2p > 0);
  assert_int_equal(r.time_ps, want);
  /* per rank: compute exactly its nodes; compute + exposed + idle = iteration */
  for (uint32_t i = 0; i < EX_RANKS; i++) {
    double c = (i == 3 ? EX_FWD_SLOW_US : EX_FWD_US) + EX_BWD_US + EX_OPT_US;
    assert_float_equal(r.ranks[i].compute_s, c * 1e-6, 1e-12);
    assert_float_equal(r.ranks[i].compute_s + r.ranks[i].exposed_comm_s + r.ranks[i].idle_s,
                       r.time_s, 1e-12);
  }
  /* rank 3 arrives last at the AllReduce: its communication is the
   * collectives' own time; the others waited 50 us for it there */
  assert_float_equal(r.ranks[3].comm_s, (double)(ar + ag) * 1e-12, 1e-12);
  assert_float_equal(r.ranks[7].comm_s, (double)(50 * us + ar) * 1e-12, 1e-12);
  assert_float_equal(r.ranks[0].comm_s, (double)(50 * us + ar + ag + p2p) * 1e-12, 1e-12);
  assert_float_equal(r.ranks[0].end_s, r.time_s, 1e-15);
  assert_float_equal(r.ranks[4].end_s, r.time_s, 1e-15);
  trc_result_free(&r);
  trc_set_free(s);
  unload(&f);
}

static void test_roofline(void **state) {
  (void)state;
  const char *sets[8];
  memcpy(sets, base_sets, sizeof base_sets);
  sets[6] = "workload.trace.compute=roofline";
  sets[7] = "workload.compute_efficiency=0.5";
  fixture f;
  load(&f, sets, 8);
  trc_set *s = example_set(per_rank, EX_RANKS);
  trc_result r;
  run_set(&f, s, &r);
  /* max(num_ops / (989e12 x 0.5), 64 MiB / (3.35 TB/s x hbm_efficiency)) per node, ceil to ps */
  double flops = f.cfg.cluster.gpu_flops * 0.5,
         hbm = (double)f.cfg.cluster.hbm_bandwidth / 8 * f.cfg.cluster.hbm_efficiency;
  double mem = (double)EX_TENSOR_BYTES / hbm;
  double fwd = fmax((double)EX_FWD_OPS / flops, mem), bwd = fmax((double)EX_BWD_OPS / flops, mem);
  double opt = fmax((double)EX_OPT_OPS / flops, mem);
  assert_true(opt == mem && fwd > mem); /* both sides of the roofline are exercised */
  for (uint32_t i = 0; i < EX_RANKS; i++)
    assert_float_equal(r.ranks[i].compute_s, fwd + bwd + opt, 3e-12);
  trc_result_free(&r);
  trc_set_free(s);
  unload(&f);
}

/* One trace per rank class: ranks 5-7 run one file (they are alike) and the
 * figures are those of one file per rank. */
static void test_classes(void **state) {
  (void)state;
  fixture f;
  load(&f, base_sets, 6);
  static const uint32_t cls[EX_RANKS] = {0, 1, 2, 3, 4, 5, 5, 5};
  trc_set *a = example_set(per_rank, EX_RANKS), *b = example_set(cls, 6);
  trc_result ra, rb;
  run_set(&f, a, &ra);
  run_set(&f, b, &rb);
  assert_int_equal(ra.time_ps, rb.time_ps);
  for (uint32_t i = 0; i < EX_RANKS; i++)
    assert_memory_equal(&ra.ranks[i], &rb.ranks[i], sizeof ra.ranks[i]);
  trc_result_free(&ra);
  trc_result_free(&rb);
  trc_set_free(a);
  trc_set_free(b);
  unload(&f);
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) fail_msg("cannot open %s", path);
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  rewind(fp);
  uint8_t *b = malloc((size_t)n + 1);
  *len = fread(b, 1, (size_t)n, fp);
  fclose(fp);
  return b;
}

static void reduce_instead(trc_write_node *n) { n[1].comm_type = TRC_REDUCE; }

/* A REDUCE (no fabsim collective) is refused when the run is planned, at the
 * key, naming the file and node; a host op (is_cpu_op) runs beside the
 * compute stream. */
static void test_unmodelled(void **state) {
  (void)state;
  fixture f;
  load(&f, base_sets, 6);
  trc_trace *tr = sim_calloc(EX_RANKS, sizeof *tr);
  for (uint32_t r = 0; r < EX_RANKS; r++) {
    trc_write_node n[6];
    size_t k = ex_nodes(r, n), len;
    reduce_instead(n);
    uint8_t *buf = trc_write("0.0.4", n, k, &len);
    sim_error err = {0};
    if (trc_parse(&tr[r], "et.x.et", buf, len, &err) != SIM_OK) fail_msg("%s", err.msg);
    sim_free(buf);
  }
  trc_set *s;
  sim_error err = {0};
  if (trc_set_create(&s, tr, EX_RANKS, per_rank, EX_RANKS, &err) != SIM_OK) fail_msg("%s", err.msg);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_analytic_create(sim, f.t, &f.cfg);
  trc_runner *r = NULL;
  assert_int_equal(trc_runner_create(&r, s, &f.cfg, f.doc, f.t, b, &err), SIM_ECONFIG);
  assert_null(r);
  fail_contains(err.msg,
                "workload.trace.path: et.x.et: byte 78, node 2: a REDUCE collective, "
                "which fabsim does not model");
  be_destroy(b);
  sim_destroy(sim);
  trc_set_free(s);
  /* one rank: a 30 us host op and a 20 us compute node, both from the start,
   * then 10 us of compute after both: 40 us, 30 of them computing */
  static const uint64_t d12[] = {1, 2};
  trc_write_node h[3] = {
      {.id = 1, .kind = TRC_HOST, .duration_us = 30},
      {.id = 2, .kind = TRC_COMPUTE, .duration_us = 20},
      {.id = 3, .kind = TRC_COMPUTE, .duration_us = 10, .deps = d12, .ndeps = 2}};
  size_t len;
  uint8_t *buf = trc_write("0.0.4", h, 3, &len);
  trc_trace *one = sim_calloc(1, sizeof *one);
  if (trc_parse(one, "host.et", buf, len, &err) != SIM_OK) fail_msg("%s", err.msg);
  sim_free(buf);
  assert_int_equal(one->nodes[0].kind, TRC_HOST);
  static const uint32_t zero[1] = {0};
  if (trc_set_create(&s, one, 1, zero, 1, &err) != SIM_OK) fail_msg("%s", err.msg);
  trc_result res;
  run_set(&f, s, &res);
  assert_int_equal(res.time_ps, 40000000);
  assert_float_equal(res.ranks[0].compute_s, 30e-6, 1e-15);
  assert_float_equal(res.ranks[0].idle_s, 10e-6, 1e-15);
  trc_result_free(&res);
  trc_set_free(s);
  /* times past the horizon of simulated time (2^62 ps, 4.61e12 us) */
  static const uint64_t d1[] = {1};
  trc_write_node big[2] = {
      {.id = 1, .kind = TRC_COMPUTE, .duration_us = 3000000000000ull},
      {.id = 2, .kind = TRC_COMPUTE, .duration_us = 3000000000000ull, .deps = d1, .ndeps = 1}};
  const char *want[2] = {"node 1: duration_micros 5000000000000; allowed: at most 4611686018427",
                         "node 2: the nodes' durations up to here add up past the horizon"};
  for (int c = 0; c < 2; c++) {
    if (c == 0) big[0].duration_us = 5000000000000ull;
    else big[0].duration_us = 3000000000000ull;
    buf = trc_write("0.0.4", big, 2, &len);
    one = sim_calloc(1, sizeof *one);
    if (trc_parse(one, "big.et", buf, len, &err) != SIM_OK) fail_msg("%s", err.msg);
    sim_free(buf);
    if (trc_set_create(&s, one, 1, zero, 1, &err) != SIM_OK) fail_msg("%s", err.msg);
    sim = sim_create(1);
    b = be_analytic_create(sim, f.t, &f.cfg);
    r = NULL;
    assert_int_equal(trc_runner_create(&r, s, &f.cfg, f.doc, f.t, b, &err), SIM_ECONFIG);
    fail_contains(err.msg, want[c]);
    be_destroy(b);
    sim_destroy(sim);
    trc_set_free(s);
  }
  unload(&f);
}

/* examples/traces/ holds exactly what the generator writes. */
static void test_checked_in(void **state) {
  (void)state;
  const char *src = getenv("FABSIM_SOURCE_DIR");
  if (!src) fail_msg("FABSIM_SOURCE_DIR is not set");
  for (uint32_t r = 0; r < EX_RANKS; r++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/traces/et.%u.et", src, r);
    size_t a, b;
    uint8_t *want = ex_trace(r, &a), *have = slurp(path, &b);
    assert_int_equal(a, b);
    assert_memory_equal(want, have, a);
    sim_free(want);
    free(have);
  }
}

static int run_cli(const char *args, char *out, size_t cap) {
  const char *bin = getenv("FABSIM_BIN"), *src = getenv("FABSIM_SOURCE_DIR");
  if (!bin || !src) fail_msg("FABSIM_BIN and FABSIM_SOURCE_DIR must be set");
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "cd %s && %s run examples/trace.yaml %s 2>&1", src, bin, args);
  FILE *p = popen(cmd, "r");
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The scenario runs, twice to the same bytes; a missing rank file is exit 2
 * naming the key, the file and the rank. */
static void test_cli(void **state) {
  (void)state;
  char out[16384], dir[64];
  snprintf(dir, sizeof dir, "/tmp/fabsim-trace-test-%d", (int)getpid());
  for (int k = 0; k < 2; k++) {
    char args[256];
    snprintf(args, sizeof args,
             "--quiet --set output.dir=%s/%d --set output.report=false "
             "--set output.database=none",
             dir, k);
    assert_int_equal(run_cli(args, out, sizeof out), 0);
  }
  /* the same summary but for the wall clock */
  json_t *js[2];
  for (int k = 0; k < 2; k++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%d/summary.json", dir, k);
    json_error_t je;
    js[k] = json_load_file(path, 0, &je);
    if (!js[k]) fail_msg("%s: %s", path, je.text);
    json_object_del(json_object_get(js[k], "sim"), "wall_s");
    json_object_del(js[k], "scenario"); /* the inputs: the two --set output.dir differ */
  }
  const json_t *tr = json_object_get(js[0], "trace");
  assert_int_equal(json_integer_value(json_object_get(tr, "iterations")), 1);
  assert_non_null(tr);
  assert_int_equal(json_array_size(json_object_get(tr, "per_rank")), EX_RANKS);
  assert_true(json_integer_value(json_object_get(tr, "time_ps")) > 0);
  assert_true(json_equal(js[0], js[1]));
  json_decref(js[0]);
  json_decref(js[1]);
  char args[512];
  /* two iterations and gpu5 failing in the second: exit 4, the failure and
   * the one iteration done in the summary and on the terminal */
  snprintf(args, sizeof args,
           "--set output.dir=%s/5 --set workload.steps=2 --set 'faults=[{at: 2ms, kind: "
           "gpu-fail, target: gpu5}]'",
           dir);
  assert_int_equal(run_cli(args, out, sizeof out), 4);
  assert_non_null(strstr(out, "failure      gpu5 failed at 2 ms: the job stopped after 1 of 2"));
  char path[256];
  snprintf(path, sizeof path, "%s/5/summary.json", dir);
  json_error_t je;
  json_t *sj = json_load_file(path, 0, &je);
  if (!sj) fail_msg("%s: %s", path, je.text);
  assert_string_equal(json_string_value(json_object_get(sj, "outcome")), "failed");
  assert_string_equal(json_string_value(json_object_get(json_object_get(sj, "failure"), "kind")),
                      "gpu-fail");
  tr = json_object_get(sj, "trace");
  assert_int_equal(json_integer_value(json_object_get(tr, "iterations_done")), 1);
  assert_int_equal(json_array_size(json_object_get(tr, "iteration_s")), 1);
  json_decref(sj);
  snprintf(args, sizeof args, "--set output.dir=%s/2 --set workload.trace.path=traces/nope.%%d.et",
           dir);
  assert_int_equal(run_cli(args, out, sizeof out), 2);
  assert_non_null(strstr(out, "workload.trace.path"));
  assert_non_null(strstr(out, "rank 0"));
  assert_non_null(strstr(out, "nope.0.et"));
  snprintf(args, sizeof args, "--set output.dir=%s/3 --set workload.trace.ranks=9", dir);
  assert_int_equal(run_cli(args, out, sizeof out), 2);
  assert_non_null(strstr(out, "workload.trace.ranks"));
  /* a truncated rank file: exit 2 at the key, with the file and byte */
  const char *src = getenv("FABSIM_SOURCE_DIR");
  snprintf(args, sizeof args,
           "mkdir -p %s/tr && cp %s/examples/traces/*.et %s/tr/ && truncate -s "
           "-2 %s/tr/et.3.et",
           dir, src, dir, dir);
  assert_int_equal(system(args), 0);
  snprintf(args, sizeof args, "--set output.dir=%s/4 --set workload.trace.path=%s/tr/et.%%d.et",
           dir, dir);
  assert_int_equal(run_cli(args, out, sizeof out), 2);
  print_message("  %s", out);
  assert_non_null(strstr(out, "workload.trace.path: rank 3: "));
  assert_non_null(strstr(out, "tr/et.3.et: byte "));
  assert_non_null(strstr(out, "truncated: the Node message after node 4 needs"));
  snprintf(args, sizeof args, "rm -rf %s", dir);
  assert_int_equal(system(args), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(test_closed_form, "simulation.fidelity=analytic"),
      cmocka_unit_test_prestate(test_closed_form, "simulation.fidelity=flow"),
      cmocka_unit_test(test_roofline),
      cmocka_unit_test(test_unmodelled),
      cmocka_unit_test(test_classes),
      cmocka_unit_test(test_checked_in),
      cmocka_unit_test(test_cli),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
