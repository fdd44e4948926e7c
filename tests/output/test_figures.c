/* The one figure table (src/output/figures.c) read both ways gives the same
 * figures: a run's headline from the rows' getters over the typed result
 * (what report.html shows) equals the headline read back through the rows'
 * keys from the summary.json of the same run (what sweeps and comparisons
 * read from a database), for every kind of run: a collective, traffic at
 * the packet fidelity (FCT, ECN marks, drops), training over several steps
 * (means and spreads), traces and a jobs: list (each job's figures). And
 * every row is sound: a getter, a key, a label, a formatting kind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/out.h"
#include "output/out_internal.h"

static void quiet(void *ctx, const char *line) {
  (void)ctx;
  (void)line;
}
static int no_database(void *ctx, const cfg_scenario *cfg, const char **db, sim_error *err) {
  (void)ctx;
  (void)cfg;
  (void)err;
  *db = NULL;
  return SIM_OK;
}

/* Run examples/<file> with sets (and output.dir in a fresh folder, no
 * database); the headline both ways must be equal. Returns how many
 * figures it has and, in *spread, how many carry a spread over steps. */
static size_t both_ways(const char *file, const char *const *extra, int nextra, size_t *spread) {
  const char *src = getenv("FABSIM_SOURCE_DIR");
  char path[4096], dir[] = "/tmp/fabsim-test-figures-XXXXXX", dirset[4200];
  snprintf(path, sizeof path, "%s/examples/%s", src ? src : "..", file);
  assert_non_null(mkdtemp(dir));
  snprintf(dirset, sizeof dirset, "output.dir=%s/o", dir);
  const char *sets[16] = {dirset, "output.database=none"};
  int nsets = 2;
  for (int i = 0; i < nextra && nsets < 16; i++) sets[nsets++] = extra[i];
  run_session *h = NULL;
  sim_error err = {0};
  run_session_hooks hooks = {.warn = quiet, .check_database = no_database};
  if (run_session_new(&h, &err) != SIM_OK || run_session_open(h, path, sets, nsets, &hooks, &err) ||
      run_session_execute(h, &err) != SIM_OK)
    fail_msg("%s: %s", file, err.msg);
  const run_result *r = run_session_result(h);
  json_t *summary = out_run_summary(r);
  out__headline typed;
  out__headline_of_result(&typed, r);
  json_t *a = out__headline_json(&typed), *b = out_headline(summary);
  if (!json_equal(a, b)) {
    char *ta = out_json_text(a), *tb = out_json_text(b);
    fail_msg("%s: the getters give\n%s\nthe keys give\n%s", file, ta, tb);
  }
  size_t n = typed.n;
  *spread = 0;
  for (size_t i = 0; i < typed.n; i++) *spread += typed.v[i].steps > 1;
  out__headline_free(&typed);
  json_decref(a);
  json_decref(b);
  json_decref(summary);
  run_session_close(h, false);
  char rm[4200];
  snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
  assert_int_equal(system(rm), 0);
  return n;
}

static void collective(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  size_t spread, n = both_ways("default.yaml", sets, 1, &spread);
  assert_true(n >= 7); /* time, busbw, algbw, FCT p50 and p99, sharing, cost, bisection */
}

static void traffic_packet(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "simulation.fidelity=packet"};
  size_t spread, n = both_ways("tour/roce.yaml", sets, 2, &spread);
  assert_true(n >= 9); /* with ECN marks, PFC paused time and drops */
}

static void training_steps(void **state) {
  (void)state;
  const char *sets[] = {"workload.steps=3", "simulation.fidelity=analytic"};
  size_t spread, n = both_ways("mlp-1node.yaml", sets, 2, &spread);
  assert_true(n >= 5);
  assert_int_equal(spread, 5); /* step time, exposed comm, bubble, MFU, tokens/s */
}

static void trace(void **state) {
  (void)state;
  const char *sets[] = {"simulation.fidelity=analytic"};
  size_t spread;
  assert_true(both_ways("trace.yaml", sets, 1, &spread) >= 3);
}

static void jobs(void **state) {
  (void)state;
  const char *sets[] = {"simulation.fidelity=analytic"};
  size_t spread;
  assert_true(both_ways("shared/two-jobs.yaml", sets, 1, &spread) >= 6);
  assert_true(both_ways("shared/jobs-checkpoint.yaml", sets, 1, &spread) >= 4);
}

/* Serving: the latency tails, output tokens/s and goodput (6 rows). */
static void inference(void **state) {
  (void)state;
  const char *sets[] = {"workload.inference.requests=200"};
  size_t spread;
  assert_true(both_ways("inference-70b-8gpu.yaml", sets, 1, &spread) >= 6);
}

/* Every row: a getter, a key, a name, a label; a step row's step figure in
 * range; each (name, scope) once, so a figure has one row. */
static void rows_sound(void **state) {
  (void)state;
  size_t n;
  const out__figure *f = out__figures(&n);
  assert_true(n > 0);
  for (size_t i = 0; i < n; i++) {
    assert_non_null(f[i].get);
    assert_true(f[i].key[0] && f[i].name[0] && f[i].label[0]);
    assert_true(f[i].scale > 0);
    assert_true(f[i].scope & (OUT__FIG_RUN | OUT__FIG_JOB));
    assert_true(f[i].step < RUN_STEP_NFIGS);
    for (size_t k = 0; k < i; k++)
      assert_false(!strcmp(f[i].label, f[k].label) && (f[i].scope & f[k].scope));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rows_sound),     cmocka_unit_test(collective),
      cmocka_unit_test(traffic_packet), cmocka_unit_test(training_steps),
      cmocka_unit_test(trace),          cmocka_unit_test(jobs),
      cmocka_unit_test(inference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
