/* The tables of runs' headline figures and sweep.csv, against hand-made
 * runs: the figures are the union of the runs' (a run lacking one shows "-"
 * or an empty CSV field), a key's value comes from the run's point, numbers
 * in the CSV read back exactly, and the comparison's differences are
 * (value - first) / |first|. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/out.h"

/* Two runs as out_db_read_runs gives them: the second lacks the bus
 * bandwidth and did not complete; "size" is not a key of the points. */
static json_t *two_runs(void) {
  json_t *a = json_pack("{s:s, s:s, s:b, s:{s:[{s:f, s:f}], s:{s:f}}}", "label", "first", "point",
                        "cluster.nodes=2 workload.collective.size=1MiB", "complete", 1, "summary",
                        "collectives", "time_s", 4.0442866e-05, "busbw_GBps", 48.6, "topology",
                        "cost_usd", 81000.0);
  json_t *b = json_pack("{s:s, s:s, s:b, s:{s:[{s:f}], s:{s:f}}}", "label", "second", "point",
                        "cluster.nodes=4 workload.collective.size=64MiB", "complete", 0, "summary",
                        "collectives", "time_s", 0.1 + 0.2, "topology", "cost_usd", 137000.0);
  json_t *runs = json_array();
  json_array_append_new(runs, a);
  json_array_append_new(runs, b);
  return runs;
}

static char *print_to_string(void (*print)(FILE *, const json_t *, const char *const *, size_t),
                             const json_t *runs, const char *const *keys, size_t nkeys) {
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  assert_non_null(f);
  print(f, runs, keys, nkeys);
  fclose(f);
  return text;
}

static void compare_adapter(FILE *f, const json_t *runs, const char *const *keys, size_t nkeys) {
  (void)keys;
  (void)nkeys;
  out_compare_table(f, runs);
}

static void test_sweep_csv(void **state) {
  (void)state;
  json_t *runs = two_runs();
  const char *keys[] = {"cluster.nodes", "workload.collective.size", "size"};
  char *csv = out_sweep_csv(runs, keys, 3);
  /* the keys' values as numbers: a count, a size in bytes; "size" in no point: empty */
  assert_string_equal(csv,
                      "point,complete,cluster.nodes,workload.collective.size (B),size,time_s (s),"
                      "busbw_GBps (GB/s),cost_usd (USD)\n"
                      "1,1,2,1048576,,4.0442866e-05,48.6,81000\n"
                      "2,0,4,67108864,,0.30000000000000004,,137000\n");
  assert_true(strtod("0.30000000000000004", NULL) == 0.1 + 0.2); /* read back exactly */
  sim_free(csv);
  json_decref(runs);
}

static void test_sweep_table(void **state) {
  (void)state;
  json_t *runs = two_runs();
  const char *keys[] = {"cluster.nodes"};
  char *text = print_to_string(out_sweep_table, runs, keys, 1);
  /* keys left-aligned, figures right-aligned, two blanks apart; "2*": incomplete */
  assert_string_equal(text,
                      "#   cluster.nodes  collective time  bus bandwidth  fabric cost\n"
                      "1   2                     40.44 us      48.6 GB/s         $81K\n"
                      "2*  4                       300 ms              -        $137K\n");
  free(text);
  json_decref(runs);
}

static void test_compare_table(void **state) {
  (void)state;
  json_t *runs = two_runs();
  char *text = print_to_string(compare_adapter, runs, NULL, 0);
  /* figures as wide as the longest label, runs 24 wide; 0.3 s against
   * 40.442866 us: +741,687 % (3 significant digits, grouped); the cost
   * (137000 - 81000) / 81000 = +69.1 % */
  assert_string_equal(text,
                      "figure                              first                    second\n"
                      "collective time                  40.44 us        300 ms (+741,687%)\n"
                      "bus bandwidth                   48.6 GB/s                         -\n"
                      "fabric cost                          $81K            $137K (+69.1%)\n");
  free(text);
  json_decref(runs);
}

/* Runs with jobs: each job's figures are named by the job, after the
 * run's, in job order; a job lacking one (b has no bus bandwidth, the
 * second run has no job b) shows "-". */
static void test_jobs_figures(void **state) {
  (void)state;
  json_t *a = json_pack(
      "{s:s, s:s, s:b, s:{s:[{s:s, s:f, s:f, s:[{s:f}]}, {s:s, s:f, s:f, s:{s:f, s:f}}]}}", "label",
      "one", "point", "", "complete", 1, "summary", "jobs", "name", "a", "time_s", 0.002,
      "slowdown", 1.5, "collectives", "busbw_GBps", 100.0, "name", "b", "time_s", 2.0, "slowdown",
      1.0, "step", "time_s", 1.0, "mfu", 0.4);
  json_t *b =
      json_pack("{s:s, s:s, s:b, s:{s:[{s:s, s:f, s:f}]}}", "label", "two", "point", "", "complete",
                1, "summary", "jobs", "name", "a", "time_s", 0.001, "slowdown", 1.0);
  json_t *runs = json_array();
  json_array_append_new(runs, a);
  json_array_append_new(runs, b);
  json_t *h = out_headline(json_object_get(a, "summary"));
  assert_int_equal(json_array_size(h), 7);
  assert_string_equal(json_string_value(json_object_get(json_array_get(h, 0), "name")),
                      "jobs.a.time_s");
  assert_string_equal(json_string_value(json_object_get(json_array_get(h, 6), "label")),
                      "b: model FLOPs utilization");
  json_decref(h);
  char *text = print_to_string(compare_adapter, runs, NULL, 0);
  assert_string_equal(
      text,
      "figure                                           one                       two\n"
      "a: time                                         2 ms               1 ms (-50%)\n"
      "a: slowdown against alone                        1.5                1 (-33.3%)\n"
      "a: bus bandwidth                            100 GB/s                         -\n"
      "b: time                                          2 s                         -\n"
      "b: slowdown against alone                          1                         -\n"
      "b: step time                                     1 s                         -\n"
      "b: model FLOPs utilization                       40%                         -\n");
  free(text);
  json_decref(runs);
}

/* A run of point "KEY=V" for each of n values, with one figure. */
static json_t *runs_of(const char *key, const char *const *vals, size_t n) {
  json_t *runs = json_array();
  for (size_t i = 0; i < n; i++) {
    char point[128];
    snprintf(point, sizeof point, "%s=%s", key, vals[i]);
    json_array_append_new(
        runs, json_pack("{s:s, s:s, s:b, s:{s:{s:f}}}", "label", point, "point", point, "complete",
                        1, "summary", "traffic", "time_s", 1e-3 * (double)(i + 1)));
  }
  return runs;
}

/* Every field of column col (0-based) of the CSV's data rows reads back as a
 * number with nothing left over: no unit, no separator, no quote. */
static void assert_numeric_column(const char *csv, int col, const double *want, size_t n) {
  const char *line = strchr(csv, '\n') + 1;
  for (size_t r = 0; r < n; r++, line = strchr(line, '\n') + 1) {
    const char *f = line;
    for (int c = 0; c < col; c++) f = strchr(f, ',') + 1;
    char *end;
    double v = strtod(f, &end);
    assert_true(end > f && (*end == ',' || *end == '\n'));
    assert_true(v == want[r]);
  }
}

/* Each kind of swept value is a column of numbers in its base unit, named
 * with that unit; values of no single kind stay as written, quoted where
 * CSV needs it. */
static void test_sweep_csv_numbers(void **state) {
  (void)state;
  static const struct {
    const char *key, *vals[3], *header;
    double want[3];
  } cases[] = {
      {"workload.collective.size",
       {"64KB", "1MiB", "4GB"},
       "workload.collective.size (B)",
       {64000, 1048576, 4e9}},
      {"fabric.link_bandwidth",
       {"100Gbps", "400Gb/s", "1.6Tbps"},
       "fabric.link_bandwidth (b/s)",
       {1e11, 4e11, 1.6e12}},
      {"fabric.link_latency",
       {"500ns", "1us", "2.5us"},
       "fabric.link_latency (s)",
       {500e-9, 1e-6, 2.5e-6}},
      {"cluster.nodes", {"2", "16", "1024"}, "cluster.nodes", {2, 16, 1024}},
      {"fabric.ecmp.hash_seed", {"0", "0.5", "1e3"}, "fabric.ecmp.hash_seed", {0, 0.5, 1000}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_t *runs = runs_of(cases[i].key, cases[i].vals, 3);
    const char *keys[] = {cases[i].key};
    char *csv = out_sweep_csv(runs, keys, 1), head[160];
    snprintf(head, sizeof head, "point,complete,%s,time_s (s)\n", cases[i].header);
    assert_memory_equal(csv, head, strlen(head));
    assert_numeric_column(csv, 2, cases[i].want, 3);
    sim_free(csv);
    json_decref(runs);
  }
  /* categorical: as written; a size mixed with a name is not a number */
  const char *mixed[] = {"1MiB", "auto", "a,b"};
  json_t *runs = runs_of("k", mixed, 3);
  const char *keys[] = {"k"};
  char *csv = out_sweep_csv(runs, keys, 1);
  assert_string_equal(csv,
                      "point,complete,k,time_s (s)\n"
                      "1,1,1MiB,0.001\n"
                      "2,1,auto,0.002\n"
                      "3,1,\"a,b\",0.003\n");
  sim_free(csv);
  json_decref(runs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sweep_csv),    cmocka_unit_test(test_sweep_csv_numbers),
      cmocka_unit_test(test_sweep_table),  cmocka_unit_test(test_compare_table),
      cmocka_unit_test(test_jobs_figures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
