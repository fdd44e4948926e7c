/* src/study against closed forms: the points of --vary lists (their count,
 * their order: the last --vary fastest, their labels), --jobs, a point that
 * fails its checks (its sim_error, nothing written), run ids and runs in
 * point order whatever order the points finished in, a database's runs
 * labelled and their fidelities marked; and one small sweep through the
 * process pool (the fabsim binary of FABSIM_BIN). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabsim/study.h"
#include "output/out_internal.h"

/* ---- points -------------------------------------------------------------------------- */

static void test_vary_parse(void **state) {
  (void)state;
  study_vary *v = NULL;
  size_t n = 0;
  sim_error err = {0};
  assert_int_equal(study_vary_add(&v, &n, " cluster.nodes\t=2,4,8", &err), SIM_OK);
  assert_int_equal(n, 1);
  assert_string_equal(v[0].key, "cluster.nodes");
  assert_int_equal(v[0].n, 3);
  assert_string_equal(v[0].values[0], "2");
  assert_string_equal(v[0].values[2], "8");
  assert_int_equal(study_vary_add(&v, &n, "fabric.routing=ecmp", &err), SIM_OK);
  assert_int_equal(n, 2);
  assert_int_equal(v[1].n, 1);
  /* refused, nothing appended */
  assert_int_equal(study_vary_add(&v, &n, "cluster.nodes", &err), SIM_EINVAL);
  assert_string_equal(err.msg, "--vary 'cluster.nodes': write KEY=V1,V2,... (see --help)");
  assert_int_equal(study_vary_add(&v, &n, "=1,2", &err), SIM_EINVAL);
  assert_int_equal(study_vary_add(&v, &n, "a=", &err), SIM_EINVAL);
  assert_int_equal(study_vary_add(&v, &n, "a=1,,2", &err), SIM_EINVAL);
  assert_string_equal(err.msg, "--vary 'a=1,,2': an empty value (see --help)");
  assert_int_equal(study_vary_add(&v, &n, "a=1,", &err), SIM_EINVAL);
  assert_int_equal(study_vary_add(&v, &n, "cluster.nodes =16", &err), SIM_EINVAL);
  assert_string_equal(err.msg,
                      "--vary 'cluster.nodes =16': cluster.nodes is varied twice; allowed: each "
                      "key in one --vary with all its values, such as --vary "
                      "cluster.nodes=2,4,8,16");
  assert_int_equal(n, 2);
  study_vary_free(v, n);
}

/* a=1,2 x b=x,y,z: six points, b fastest; point p is (p / 3, p % 3). */
static void test_points_in_order(void **state) {
  (void)state;
  study_vary *v = NULL;
  size_t n = 0;
  sim_error err = {0};
  assert_int_equal(study_vary_add(&v, &n, "a=1,2", &err), SIM_OK);
  assert_int_equal(study_vary_add(&v, &n, "b=x,y,z", &err), SIM_OK);
  assert_int_equal(study_vary_points(v, n), 6);
  static const char *const want[] = {"a=1 b=x", "a=1 b=y", "a=1 b=z",
                                     "a=2 b=x", "a=2 b=y", "a=2 b=z"};
  for (size_t p = 0; p < 6; p++) {
    char *sets[2] = {0}, label[64];
    study_vary_point(v, n, p, sets, label, sizeof label);
    assert_string_equal(label, want[p]);
    assert_string_equal(sets[0], p < 3 ? "a=1" : "a=2");
    static const char *const b[] = {"b=x", "b=y", "b=z"};
    assert_string_equal(sets[1], b[p % 3]);
    sim_free(sets[0]);
    sim_free(sets[1]);
  }
  /* a cut label stays a string */
  char *sets[2] = {0}, small[4];
  study_vary_point(v, n, 5, sets, small, sizeof small);
  assert_string_equal(small, "a=2");
  sim_free(sets[0]);
  sim_free(sets[1]);
  study_vary_free(v, n);
  /* 10 x 10 x 10 x 10 = 10,000 points: the most; one more list value is too many */
  v = NULL;
  n = 0;
  for (int k = 0; k < 4; k++) {
    char text[64];
    snprintf(text, sizeof text, "k%d=0,1,2,3,4,5,6,7,8,9", k);
    assert_int_equal(study_vary_add(&v, &n, text, &err), SIM_OK);
  }
  assert_int_equal(study_vary_points(v, n), STUDY_MAX_POINTS);
  assert_int_equal(study_vary_add(&v, &n, "k4=a,b", &err), SIM_OK);
  assert_int_equal(study_vary_points(v, n), 0);
  study_vary_free(v, n);
}

static void test_parallel(void **state) {
  (void)state;
  unsigned j = 7;
  sim_error err = {0};
  assert_int_equal(study_parallel_parse("1024", &j, &err), SIM_OK);
  assert_int_equal(j, 1024);
  assert_int_equal(study_parallel_parse("1", &j, &err), SIM_OK);
  assert_int_equal(j, 1);
  static const char *const bad[] = {"0", "1025", "-2", "3x", ""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_int_equal(study_parallel_parse(bad[i], &j, &err), SIM_EINVAL);
    assert_int_equal(j, 1);
  }
  assert_string_equal(err.msg, "--jobs '': a number of processes, 1..1024");
  assert_true(study_parallel_default() >= 1);
}

/* ---- a point that fails its checks ------------------------------------------------------ */

static int prepare(study_sweep *s, const study_sweep_args *a, sim_error *err) {
  assert_int_equal(study_sweep_begin(s, NULL, err), SIM_OK);
  assert_false(s->idle);
  return study_sweep_prepare(s, a, err);
}

static void test_failing_point(void **state) {
  (void)state;
  char dir[] = "/tmp/fabsim-study-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char out[128], db[128];
  snprintf(out, sizeof out, "%s/sweep", dir);
  snprintf(db, sizeof db, "%s/x.sqlite", dir);
  study_vary *v = NULL;
  size_t n = 0;
  sim_error err = {0};
  assert_int_equal(study_vary_add(&v, &n, "fabric.routing=ecmp,bogus", &err), SIM_OK);
  const char *sets[] = {"cluster.nodes=2"};
  study_sweep_args a = {
      .sets = sets, .nsets = 1, .vary = v, .nvary = n, .parallel = 1, .out = out, .db = db};
  study_sweep s;
  /* a --vary value: named as such */
  assert_int_equal(prepare(&s, &a, &err), SIM_EINVAL);
  assert_int_equal(err.code, SIM_EINVAL);
  assert_true(strncmp(err.msg, "--vary fabric.routing=bogus: fabric.routing: 'bogus' is not one of",
                      strlen("--vary fabric.routing=bogus: fabric.routing: 'bogus' is not")) == 0);
  assert_int_equal(s.npoints, 2);
  assert_int_equal(study_sweep_end(&s, 2), 2);
  struct stat st;
  assert_int_not_equal(stat(out, &st), 0); /* nothing written */
  assert_int_not_equal(stat(db, &st), 0);
  study_vary_free(v, n);
  /* a common --set that only the second point's value breaks: located, naming the point */
  v = NULL;
  n = 0;
  assert_int_equal(study_vary_add(&v, &n, "cluster.nodes=16,2", &err), SIM_OK);
  const char *fault[] = {"simulation.fidelity=flow",
                         "faults=[{at: 1us, kind: link-down, target: leaf1-spine0}]"};
  a.sets = fault;
  a.nsets = 2;
  a.vary = v;
  a.nvary = n;
  assert_int_equal(prepare(&s, &a, &err), SIM_ECONFIG);
  assert_true(strncmp(err.msg, "--set:2:", 8) == 0);
  assert_non_null(strstr(err.msg, "faults[0].target: no element 'leaf1'"));
  const char *tail = " (the sweep's point cluster.nodes=2)";
  assert_string_equal(err.msg + strlen(err.msg) - strlen(tail), tail);
  study_sweep_end(&s, 2);
  assert_int_not_equal(stat(out, &st), 0);
  /* good points, a database that is not one: refused before anything runs */
  a.sets = sets;
  a.nsets = 1;
  FILE *f = fopen(db, "w");
  fputs("not a database, not empty either", f);
  fclose(f);
  assert_int_equal(prepare(&s, &a, &err), SIM_EINVAL);
  assert_true(strncmp(err.msg, "--db ", 5) == 0);
  assert_non_null(strstr(err.msg, "; allowed: a fabsim results database"));
  study_sweep_end(&s, 2);
  assert_int_not_equal(stat(out, &st), 0); /* the folder it made goes again */
  unlink(db);
  rmdir(dir);
  study_vary_free(v, n);
}

/* One job of a shared fabric varied (issue 29): --vary 'jobs[1].placement=...'
 * passes every point's checks; an index past the scenario's jobs is the
 * --vary value's error. */
static void test_vary_one_job(void **state) {
  (void)state;
  const char *src = getenv("FABSIM_SOURCE_DIR");
  if (!src) skip();
  char file[512], dir[] = "/tmp/fabsim-study-jobs-XXXXXX";
  snprintf(file, sizeof file, "%s/examples/shared/two-jobs.yaml", src);
  assert_non_null(mkdtemp(dir));
  study_vary *v = NULL;
  size_t n = 0;
  sim_error err = {0};
  assert_int_equal(study_vary_add(&v, &n, "jobs[1].placement=packed,spread", &err), SIM_OK);
  study_sweep_args a = {.scenario = file, .vary = v, .nvary = n, .parallel = 1, .out = dir};
  study_sweep s;
  assert_int_equal(prepare(&s, &a, &err), SIM_OK);
  assert_string_equal(s.points[1].label, "jobs[1].placement=spread");
  study_sweep_end(&s, 0);
  study_vary_free(v, n);
  v = NULL;
  n = 0;
  assert_int_equal(study_vary_add(&v, &n, "jobs[2].placement=packed", &err), SIM_OK);
  a.vary = v;
  a.nvary = n;
  assert_int_equal(prepare(&s, &a, &err), SIM_EINVAL);
  assert_string_equal(err.msg,
                      "--vary jobs[2].placement=packed: jobs[2]: the scenario has 2 jobs; "
                      "allowed: jobs[0] to jobs[1]");
  study_sweep_end(&s, 2);
  study_vary_free(v, n);
  char lock[600];
  snprintf(lock, sizeof lock, "%s/.fabsim.lock", dir); /* the good sweep's, which held it */
  unlink(lock);
  assert_int_equal(rmdir(dir), 0);
}

/* ---- run ids and runs in point order ---------------------------------------------------- */

/* One run of study `id`, folder dirs[k], appended to path as a point that
 * just finished does; its run id. */
static int64_t append(const char *path, const char *id, const char *dir, const char *point,
                      const char *fidelity) {
  tel *t = NULL; /* a run without telemetry: no series, no events */
  tel_config c = {.interval = SIM_PS_PER_US, .gpus = 1, .nics = 1, .nic_bps = 1000000000ULL};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  tel_finish(t, SIM_PS_PER_US);
  json_t *sum = json_pack("{s:s, s:{s:s, s:[], s:i}, s:s, s:{s:i}}", "fabsim_version", "0.1.0",
                          "scenario", "file", "examples/x.yaml", "overrides", "seed", 1, "fidelity",
                          fidelity, "sim", "sim_time_s", 1);
  out__db_run r = {.summary = sum,
                   .scenario_yaml = "",
                   .started_at = "now",
                   .dir = dir,
                   .sweep = id,
                   .point = point,
                   .complete = true};
  int64_t rid = 0;
  sim_error err = {0};
  assert_int_equal(out__db_append(path, &r, NULL, t, NULL, 0, &rid, &err), SIM_OK);
  json_decref(sum);
  tel_destroy(t);
  return rid;
}

static const char *const dirs[] = {"/d/point-001", "/d/point-002", "/d/point-003"};
static const char *const labels[] = {"k=1", "k=2", "k=3"};

static study_point *points3(void) {
  study_point *p = sim_calloc(3, sizeof *p);
  for (size_t i = 0; i < 3; i++) {
    p[i].dir = sim_strdup(dirs[i]);
    p[i].label = sim_strdup(labels[i]);
  }
  return p;
}

/* Points 3, 1, 2 finished in that order, a run of another study between
 * them: after study_order_ids the sweep's runs hold ids 1, 3, 4 in point
 * order (the other run keeps 2), and study_collect_runs reads them back in
 * point order, labelled, without the other run. */
static void test_run_ids_in_point_order(void **state) {
  (void)state;
  char path[] = "/tmp/fabsim-study-db-XXXXXX";
  close(mkstemp(path));
  unlink(path);
  assert_int_equal(append(path, "sw", dirs[2], "k=3", "flow"), 1);
  assert_int_equal(append(path, "other", "/elsewhere", "k=9", "flow"), 2);
  assert_int_equal(append(path, "sw", dirs[0], "k=1", "flow"), 3);
  assert_int_equal(append(path, "sw", dirs[1], "k=2", "flow"), 4);
  study_point *p = points3();
  sim_error err = {0};
  assert_int_equal(study_order_ids(path, "sw", p, 3, &err), SIM_OK);
  json_t *runs = NULL;
  assert_int_equal(study_collect_runs(path, "sw", p, 3, &runs, &err), SIM_OK);
  assert_int_equal(json_array_size(runs), 3);
  static const int64_t want_id[] = {1, 3, 4};
  for (size_t i = 0; i < 3; i++) {
    const json_t *r = json_array_get(runs, i);
    assert_string_equal(json_string_value(json_object_get(r, "label")), labels[i]);
    assert_string_equal(json_string_value(json_object_get(r, "output_dir")), dirs[i]);
    assert_int_equal(json_integer_value(json_object_get(r, "run_id")), want_id[i]);
  }
  json_decref(runs);
  /* a point that wrote no run (it failed early) is left out, the others keep their order */
  p[1].dir[1] = 'x';
  assert_int_equal(study_collect_runs(path, "sw", p, 3, &runs, &err), SIM_OK);
  assert_int_equal(json_array_size(runs), 2);
  assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 1), "label")), "k=3");
  json_decref(runs);
  study_points_free(p, 3);
  unlink(path);
}

/* compare --db: labels "run ID: POINT", an unknown id and a missing file
 * refused as bad input, fidelities marked when they differ. */
static void test_compare_db(void **state) {
  (void)state;
  char path[] = "/tmp/fabsim-study-cmp-XXXXXX";
  close(mkstemp(path));
  unlink(path);
  append(path, "sw", dirs[0], "k=1", "flow");
  append(path, "sw", dirs[1], "k=2", "flow");
  append(path, "sw", dirs[2], "k=3", "packet");
  study_compare c;
  sim_error err = {0};
  const int64_t two[] = {2, 1};
  study_compare_args a = {.out = "/tmp", .db = path, .ids = two, .nids = 2};
  assert_int_equal(study_compare_run(&c, &a, NULL, &err), SIM_OK);
  assert_int_equal(c.nruns, 2);
  assert_null(c.fidelities); /* both flow */
  assert_string_equal(json_string_value(json_object_get(json_array_get(c.runs, 0), "label")),
                      "run 2: k=2"); /* in the order of the ids given */
  study_compare_free(&c);
  a.nids = 0; /* every run: one is at another fidelity */
  assert_int_equal(study_compare_run(&c, &a, NULL, &err), SIM_OK);
  assert_int_equal(c.nruns, 3);
  assert_string_equal(c.fidelities, "run 1: k=1 [flow], run 2: k=2 [flow], run 3: k=3 [packet]");
  assert_string_equal(json_string_value(json_object_get(json_array_get(c.runs, 2), "label")),
                      "run 3: k=3 [packet]");
  study_compare_free(&c);
  const int64_t missing[] = {99};
  a.ids = missing;
  a.nids = 1;
  assert_int_equal(study_compare_run(&c, &a, NULL, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "no run with id 99"));
  assert_null(c.runs);
  study_compare_free(&c);
  a.db = "/nonexistent/x.sqlite";
  assert_int_equal(study_compare_run(&c, &a, NULL, &err), SIM_EINVAL);
  assert_string_equal(err.msg,
                      "--db /nonexistent/x.sqlite: cannot read: No such file or "
                      "directory; allowed: a fabsim results database");
  study_compare_free(&c);
  unlink(path);
}

/* ---- one small sweep through the pool --------------------------------------------------- */

static size_t ended;
static void on_end(void *ctx, const study_point *p, size_t k, size_t n) {
  (void)ctx;
  assert_int_equal(p->status, 0);
  assert_int_equal(n, 3);
  assert_int_equal(k, ++ended);
}

/* Three points, three at a time, on the fabsim binary: every point ran,
 * the runs come back in point order with ids 1..3, each its own folder. */
static void test_sweep_runs(void **state) {
  (void)state;
  const char *bin = getenv("FABSIM_BIN");
  if (!bin) skip();
  char dir[] = "/tmp/fabsim-study-run-XXXXXX";
  assert_non_null(mkdtemp(dir));
  study_vary *v = NULL;
  size_t n = 0;
  sim_error err = {0};
  assert_int_equal(study_vary_add(&v, &n, "workload.collective.size=4MiB,1MiB,2MiB", &err), SIM_OK);
  const char *sets[] = {"cluster.nodes=2"};
  study_sweep_args a = {.sets = sets,
                        .nsets = 1,
                        .vary = v,
                        .nvary = n,
                        .parallel = 3,
                        .parallel_given = true,
                        .out = dir,
                        .self = bin};
  study_hooks h = {.point_end = on_end};
  study_sweep s;
  assert_int_equal(study_sweep_begin(&s, &h, &err), SIM_OK);
  assert_int_equal(study_sweep_prepare(&s, &a, &err), SIM_OK);
  assert_int_equal(s.nkeys, 1);
  assert_string_equal(s.keys[0], "workload.collective.size");
  assert_int_equal(study_sweep_run(&s, &err), SIM_OK);
  assert_int_equal(ended, 3);
  assert_int_equal(s.failed, 0);
  assert_int_equal(s.errors, 0);
  assert_false(s.interrupted);
  assert_int_equal(json_array_size(s.runs), 3);
  static const char *const want[] = {"workload.collective.size=4MiB",
                                     "workload.collective.size=1MiB",
                                     "workload.collective.size=2MiB"};
  for (size_t i = 0; i < 3; i++) {
    const json_t *r = json_array_get(s.runs, i);
    assert_string_equal(json_string_value(json_object_get(r, "label")), want[i]);
    assert_string_equal(json_string_value(json_object_get(r, "point")), want[i]);
    assert_int_equal(json_integer_value(json_object_get(r, "run_id")), (json_int_t)i + 1);
    char pd[128];
    snprintf(pd, sizeof pd, "%s/point-%03zu", dir, i + 1);
    assert_string_equal(json_string_value(json_object_get(r, "output_dir")), pd);
  }
  assert_int_equal(study_sweep_end(&s, 0), 0);
  study_vary_free(v, n);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vary_parse),   cmocka_unit_test(test_points_in_order),
      cmocka_unit_test(test_parallel),     cmocka_unit_test(test_failing_point),
      cmocka_unit_test(test_vary_one_job), cmocka_unit_test(test_run_ids_in_point_order),
      cmocka_unit_test(test_compare_db),   cmocka_unit_test(test_sweep_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
