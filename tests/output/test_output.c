/* Output writers: numbers that read back exactly, CSV quoting, summary
 * leaves, series columns from telemetry, the database round trip (and its
 * refusal of a file that is not a database), the report's script safety,
 * OpenMetrics framing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/out_internal.h"

static void test_numbers_and_csv(void **state) {
  (void)state;
  double v[] = {0, 1, 0.1, 2e-5, 1.0 / 3, 110.909709962, 1e300, -4.5};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    out__buf b = {0};
    out__num(&b, v[i]);
    assert_true(strtod(b.p, NULL) == v[i]);
    assert_true(strlen(b.p) <= 24);
    out__buf_free(&b);
  }
  out__buf b = {0};
  out__num(&b, 2e-5);
  assert_string_equal(b.p, "2e-05");
  b.len = 0;
  out__num(&b, NAN);
  assert_int_equal(b.len, 0);
  out__csv_field(&b, "plain");
  out__puts(&b, "|");
  out__csv_field(&b, "a,b \"c\"");
  assert_string_equal(b.p, "plain|\"a,b \"\"c\"\"\"");
  out__buf_free(&b);
}

static void leaf(void *ctx, const char *name, double v) {
  out__buf *b = ctx;
  out__printf(b, "%s=%g;", name, v);
}

static void test_json_leaves(void **state) {
  (void)state;
  json_t *j = json_pack("{s:i, s:{s:[{s:f}], s:s, s:b, s:n}}", "gpus", 8, "net", "fct", "p99", 2.5,
                        "name", "x", "ok", 1, "none");
  out__buf b = {0};
  out__json_leaves(j, leaf, &b);
  assert_string_equal(b.p, "gpus=8;net.fct.0.p99=2.5;net.ok=1;");
  out__buf_free(&b);
  json_decref(j);
}

static tel *small_tel(void) {
  tel *t = NULL;
  uint32_t wp[1] = {1}, wn[1] = {0};
  rate_bps bps[2] = {100000000000ULL, 100000000000ULL};
  tel_config c = {.interval = SIM_PS_PER_US,
                  .gpus = 2,
                  .nics = 2,
                  .ports = 2,
                  .nic_bps = 100000000000ULL,
                  .port_bps = bps,
                  .watch_ports = wp,
                  .nwatch_ports = 1,
                  .watch_nics = wn,
                  .nwatch_nics = 1};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  tel_nic_rate(t, 0, 0, TEL_TX, 50000000000LL);
  tel_port_rate(t, 0, 1, 100000000000LL);
  tel_gpu_state_set(t, 0, 0, TEL_GPU_NETWORK);
  tel_event(t, 500000, "leaf0-spine0", "shared-channel", "2 transfers, \"quoted\"", 2);
  tel_finish(t, 3 * SIM_PS_PER_US);
  return t;
}

static void test_series_and_csv(void **state) {
  (void)state;
  tel *t = small_tel();
  out__series s;
  out__series_build(&s, t, NULL, NULL);
  assert_int_equal(s.rows, 3);
  out__buf b = {0};
  out__timeseries_csv(&b, &s);
  const char *header =
      "time_s,interval_s,gpu_idle,gpu_compute,gpu_network,gpu_bubble,gpu_checkpoint,gpu_down,"
      "nic_tx_gbps_total,nic_tx_gbps_p50,nic_tx_gbps_p99,nic_tx_gbps_max,nic_tx_active,"
      "nic_rx_gbps_total,nic_rx_gbps_p50,nic_rx_gbps_p99,nic_rx_gbps_max,nic_rx_active,"
      "port_util_mean,port_util_p50,port_util_p99,port_util_max,port1:gbps,port1:util,"
      "nic0:tx_gbps,nic0:rx_gbps,nic0:util\n";
  assert_memory_equal(b.p, header, strlen(header));
  assert_non_null(strstr(
      b.p, "\n1e-06,1e-06,0.5,0,0.5,0,0,0,50,0,50,50,1,0,0,0,0,0,0.5,0,1,1,100,1,50,0,0.5\n"));
  /* the peaks (report.html merges their rows by the greatest): p99s and maxima */
  static const char *const peaks[] = {"nic_tx_gbps_p99", "nic_tx_gbps_max", "nic_rx_gbps_p99",
                                      "nic_rx_gbps_max", "port_util_p99",   "port_util_max"};
  size_t npeaks = 0;
  for (size_t c = 0; c < s.ncols; c++) {
    bool want = false;
    for (size_t k = 0; k < sizeof peaks / sizeof *peaks; k++)
      want |= !s.cols[c].entity[0] && !strcmp(s.cols[c].metric, peaks[k]);
    assert_int_equal(s.cols[c].peak, want);
    npeaks += s.cols[c].peak;
  }
  assert_int_equal(npeaks, 6);
  b.len = 0;
  out__events_csv(&b, t);
  assert_string_equal(b.p,
                      "time_s,component,kind,effect,value\n"
                      "5e-07,leaf0-spine0,shared-channel,\"2 transfers, \"\"quoted\"\"\",2\n");
  out__buf_free(&b);
  out__series_free(&s);
  tel_destroy(t);
}

static void test_database_round_trip(void **state) {
  (void)state;
  char dir[] = "/tmp/fabsim-test-db-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/r.sqlite", dir);
  tel *t = small_tel();
  out__series s;
  out__series_build(&s, t, NULL, NULL);
  json_t *sum = json_pack("{s:s, s:{s:s, s:[], s:i}, s:s, s:{s:f, s:f}}", "fabsim_version", "0.1.0",
                          "scenario", "file", "x.yaml", "overrides", "seed", 3, "fidelity", "flow",
                          "sim", "sim_time_s", 3e-6, "wall_s", 0.5);
  sim_error err = {0};
  for (int k = 0; k < 2; k++) {
    out__db_run r = {.summary = sum,
                     .scenario_yaml = "a: 1\n",
                     .started_at = "now",
                     .dir = dir,
                     .sweep = k ? "sw" : NULL,
                     .point = k ? "a=1" : NULL,
                     .complete = k == 0};
    int64_t id = 0;
    assert_int_equal(out__db_append(path, &r, &s, t, NULL, 5, &id, &err), SIM_OK);
    assert_int_equal(id, k + 1);
  }
  json_t *runs = NULL;
  assert_int_equal(out_db_read_runs(path, "sw", NULL, 0, &runs, &err), SIM_OK);
  assert_int_equal(json_array_size(runs), 1);
  json_t *r0 = json_array_get(runs, 0);
  assert_string_equal(json_string_value(json_object_get(r0, "point")), "a=1");
  assert_true(json_is_false(json_object_get(r0, "complete")));
  assert_int_equal(json_integer_value(json_object_get(
                       json_object_get(json_object_get(r0, "summary"), "scenario"), "seed")),
                   3);
  json_decref(runs);
  int64_t ids[2] = {2, 1};
  assert_int_equal(out_db_read_runs(path, NULL, ids, 2, &runs, &err), SIM_OK);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "run_id")), 2);
  json_decref(runs);
  int64_t missing = 9;
  assert_int_equal(out_db_read_runs(path, NULL, &missing, 1, &runs, &err), SIM_ENOENT);
  json_t *tt, *vv;
  assert_int_equal(out_db_series(path, 1, "nic_tx_gbps_total", &tt, &vv, &err), SIM_OK);
  assert_int_equal(json_array_size(vv), 3);
  assert_true(json_real_value(json_array_get(vv, 0)) == 50);
  json_decref(tt);
  json_decref(vv);
  /* a file that is not a database is an error, not a crash */
  char bad[256];
  snprintf(bad, sizeof bad, "%s/bad.sqlite", dir);
  FILE *f = fopen(bad, "w");
  fputs("not a database, just text that is long enough to have a header page ...........", f);
  fclose(f);
  out__db_run r = {
      .summary = sum, .scenario_yaml = "", .started_at = "", .dir = dir, .complete = true};
  int64_t id;
  assert_int_equal(out__db_append(bad, &r, &s, t, NULL, 5, &id, &err), SIM_EIO);
  assert_non_null(strstr(err.msg, "bad.sqlite"));
  remove(bad);
  remove(path);
  rmdir(dir);
  json_decref(sum);
  out__series_free(&s);
  tel_destroy(t);
}

static void test_report_is_script_safe(void **state) {
  (void)state;
  char dir[] = "/tmp/fabsim-test-report-XXXXXX";
  assert_non_null(mkdtemp(dir));
  json_t *d = json_pack("{s:s, s:s}", "mode", "run", "evil", "</script><script>alert(1)</script>");
  sim_error err = {0};
  assert_int_equal(out__report_write(d, dir, "t <&>", &err), SIM_OK);
  char path[256];
  snprintf(path, sizeof path, "%s/report.html", dir);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *html = malloc((size_t)n + 1);
  assert_int_equal(fread(html, 1, (size_t)n, f), (size_t)n);
  html[n] = '\0';
  fclose(f);
  assert_null(strstr(html, "alert(1)</script>"));
  assert_non_null(strstr(html, "\\u003c/script>\\u003cscript>alert(1)\\u003c/script>"));
  assert_non_null(strstr(html, "<title>t &lt;&amp;&gt;</title>"));
  assert_null(strstr(html, "@FABSIM_"));
  assert_null(strstr(html, "sourceMappingURL"));
  /* exactly the page's three scripts open and close */
  int open = 0, close = 0;
  for (char *p = html; (p = strstr(p, "<script")); p++) open++;
  for (char *p = html; (p = strstr(p, "</script>")); p++) close++;
  assert_int_equal(open, 3);
  assert_int_equal(close, 3);
  free(html);
  remove(path);
  rmdir(dir);
  json_decref(d);
}

static void test_openmetrics(void **state) {
  (void)state;
  tel *t = small_tel();
  json_t *sum =
      json_pack("{s:{s:s, s:i}, s:{s:f, s:f}, s:{s:f}}", "scenario", "file", "a\"b.yaml", "seed", 7,
                "sim", "sim_time_s", 1.5, "wall_s", 9.0, "network", "bytes", 10.0);
  out__buf b = {0};
  out__openmetrics(&b, sum, t);
  assert_non_null(
      strstr(b.p,
             "# TYPE fabsim_sim_sim_time_s "
             "gauge\nfabsim_sim_sim_time_s{scenario=\"a\\\"b.yaml\",seed=\"7\"} 1.5\n"));
  assert_null(strstr(b.p, "wall_s")); /* no wall clock: deterministic */
  assert_non_null(strstr(b.p, "fabsim_nic_tx_bytes_total{"));
  assert_true(b.len > 6 && !strcmp(b.p + b.len - 6, "# EOF\n"));
  out__buf_free(&b);
  json_decref(sum);
  tel_destroy(t);
}

/* No figure that is not a finite number leaves (issue 27, defect 10): a
 * non-finite real no longer vanishes from its object (jansson's json_real
 * is NULL for it) but becomes a marker every JSON writer refuses, naming
 * the figure; an infinity refuses a text file; the run's writer checks the
 * summary before it writes any file. Integers above 2^63 stay positive. */
static void test_nonfinite_refused(void **state) {
  (void)state;
  sim_error err = {0};
  char dir[] = "/tmp/fabsim-test-nonfinite-XXXXXX";
  assert_non_null(mkdtemp(dir));
  json_t *o = json_object(), *cost = json_object(), *list = json_array();
  json_object_set_new(o, "ok", json_real(1.5));
  json_array_append_new(list, json_real(2));
  json_array_append_new(list, json_real(1e308 * 10));
  json_object_set_new(cost, "list", list);
  json_object_set_new(o, "cost", cost);
  assert_non_null(json_object_get(cost, "list")); /* it did not vanish */
  assert_int_equal(json_array_size(list), 2);
  assert_int_equal(out_json_check(o, "summary.json", &err), SIM_ERANGE);
  assert_string_equal(err.msg,
                      "summary.json: the figure cost.list.1 is inf, not a number a run can "
                      "report; nothing was written (a bug: please report the scenario)");
  assert_int_equal(out_write_json(o, dir, "summary.json", &err), SIM_ERANGE);
  char path[256];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  assert_int_equal(access(path, F_OK), -1);
  json_object_set_new(o, "nan", json_real(NAN));
  json_array_remove(list, 1);
  assert_int_equal(out_json_check(o, "x", &err), SIM_ERANGE);
  assert_non_null(strstr(err.msg, "the figure nan is nan"));
  json_object_del(o, "nan");
  assert_int_equal(out_json_check(o, "x", &err), SIM_OK);
  assert_int_equal(out_write_json(o, dir, "summary.json", &err), SIM_OK);
  remove(path);
  /* the run's writer: nothing at all is written for such a summary */
  json_object_set_new(o, "bad", json_real(-INFINITY));
  out_run r = {.summary = o, .dir = dir, .database = "none", .complete = true};
  assert_int_equal(out_write_run(&r, &err), SIM_ERANGE);
  assert_non_null(strstr(err.msg, "summary.json: the figure bad is -inf"));
  snprintf(path, sizeof path, "%s/timeseries.csv", dir);
  assert_int_equal(access(path, F_OK), -1);
  json_decref(o);
  /* text files: an infinity is refused, a NAN is an empty field as before */
  out__buf b = {0};
  out__num(&b, 1);
  out__num(&b, NAN);
  assert_int_equal(out__write(&b, dir, "a.csv", &err), SIM_OK);
  out__num(&b, INFINITY);
  assert_int_equal(out__write(&b, dir, "b.csv", &err), SIM_ERANGE);
  assert_string_equal(err.msg,
                      "b.csv: a figure is inf, not a number a run can report; nothing "
                      "was written (a bug: please report the scenario)");
  out__buf_free(&b);
  snprintf(path, sizeof path, "%s/b.csv", dir);
  assert_int_equal(access(path, F_OK), -1);
  snprintf(path, sizeof path, "%s/a.csv", dir);
  remove(path);
  rmdir(dir);
  /* 2^64 - 1 bytes: positive, not -1 */
  json_t *u = out_json_u64(UINT64_MAX), *v = out_json_u64((uint64_t)1 << 62);
  assert_true(json_is_real(u) && json_real_value(u) == 18446744073709551616.0);
  assert_true(json_is_integer(v) && json_integer_value(v) == (json_int_t)1 << 62);
  json_decref(u);
  json_decref(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nonfinite_refused),   cmocka_unit_test(test_numbers_and_csv),
      cmocka_unit_test(test_json_leaves),         cmocka_unit_test(test_series_and_csv),
      cmocka_unit_test(test_database_round_trip), cmocka_unit_test(test_report_is_script_safe),
      cmocka_unit_test(test_openmetrics),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
