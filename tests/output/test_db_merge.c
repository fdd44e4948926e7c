/* out_db_merge against its closed form: merging a database of m runs into
 * one of k runs gives k + m runs, the new ones numbered k+1..k+m in the
 * source's run_id order, every table keyed by run_id holding the union of
 * both sides' rows (each row under its run's new id), and the source's path
 * replaced by the destination's in the copied runs' text columns. A failed
 * merge changes nothing (one transaction). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/out_internal.h"

static tel *small_tel(void) {
  tel *t = NULL;
  rate_bps bps[2] = {100000000000ULL, 100000000000ULL};
  tel_config c = {.interval = SIM_PS_PER_US,
                  .gpus = 2,
                  .nics = 2,
                  .ports = 2,
                  .nic_bps = 100000000000ULL,
                  .port_bps = bps};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  tel_nic_rate(t, 0, 0, TEL_TX, 50000000000LL);
  tel_port_rate(t, 0, 1, 100000000000LL);
  tel_event(t, 500000, "leaf0-spine0", "shared-channel", "two transfers", 2);
  tel_finish(t, 3 * SIM_PS_PER_US);
  return t;
}

/* n runs into path, labelled "<tag>1".."<tag>n" (runs.point), each with the
 * event log and series of small_tel; run i's output_dir is "<where>/p<i>". */
static void write_runs(const char *path, const char *tag, int n, const char *where) {
  tel *t = small_tel();
  out__series s;
  out__series_build(&s, t, NULL, NULL);
  json_t *sum = json_pack("{s:s, s:{s:s, s:[], s:i}, s:s, s:{s:f, s:f}}", "fabsim_version", "0.1.0",
                          "scenario", "file", "x.yaml", "overrides", "seed", 3, "fidelity", "flow",
                          "sim", "sim_time_s", 3e-6, "wall_s", 0.5);
  sim_error err = {0};
  for (int i = 1; i <= n; i++) {
    char point[32], dir[512], yaml[600];
    snprintf(point, sizeof point, "%s%d", tag, i);
    snprintf(dir, sizeof dir, "%s/p%d", where, i);
    snprintf(yaml, sizeof yaml, "output:\n  database: %s\n", where);
    out__db_run r = {.summary = sum,
                     .scenario_yaml = yaml,
                     .started_at = "now",
                     .dir = dir,
                     .sweep = "sw",
                     .point = point,
                     .complete = true};
    int64_t id = 0;
    assert_int_equal(out__db_append(path, &r, &s, t, NULL, 5, &id, &err), SIM_OK);
    assert_int_equal(id, i);
  }
  json_decref(sum);
  out__series_free(&s);
  tel_destroy(t);
}

static long long query_int(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  long long v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

/* The text of one column of one run. */
static void run_text(const char *path, int64_t id, const char *col, char *out, size_t n) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  char *sql = sqlite3_mprintf("SELECT \"%w\" FROM runs WHERE run_id = %lld", col, (long long)id);
  assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  sqlite3_free(sql);
}

static const char *const keyed[] = {"metrics", "series", "timeseries", "events", "hot_ports"};
enum { NKEYED = sizeof keyed / sizeof keyed[0] };

static long long rows_of(const char *path, const char *table, int64_t id) {
  char sql[160];
  if (id)
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE run_id = %lld", table, (long long)id);
  else snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
  return query_int(path, sql);
}

static void test_merge_is_the_union_renumbered(void **state) {
  (void)state;
  char dir[] = "/tmp/fabsim-test-merge-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char dst[256], src[256], where[256];
  snprintf(dst, sizeof dst, "%s/results.sqlite", dir);
  snprintf(src, sizeof src, "%s/rank1.sqlite", dir);
  snprintf(where, sizeof where, "/node-local/fabsim-rank1.sqlite"); /* the name the points used */
  write_runs(dst, "a", 2, dst);
  write_runs(src, "b", 3, where);
  long long before_dst[NKEYED], per_run_src[NKEYED];
  for (int k = 0; k < NKEYED; k++) {
    before_dst[k] = rows_of(dst, keyed[k], 0);
    per_run_src[k] = rows_of(src, keyed[k], 1);
    assert_true(per_run_src[k] > 0 || !strcmp(keyed[k], "hot_ports"));
  }
  size_t merged = 0;
  sim_error err = {0};
  assert_int_equal(out_db_merge(dst, src, where, &merged, &err), SIM_OK);
  assert_int_equal(merged, 3);
  /* 2 + 3 runs, ids 1..5, the source's in its order after the destination's */
  assert_int_equal(query_int(dst, "SELECT count(*) FROM runs"), 5);
  assert_int_equal(query_int(dst, "SELECT max(run_id) FROM runs"), 5);
  static const char *const points[] = {"a1", "a2", "b1", "b2", "b3"};
  char text[600];
  for (int64_t id = 1; id <= 5; id++) {
    run_text(dst, id, "point", text, sizeof text);
    assert_string_equal(text, points[id - 1]);
  }
  /* every keyed table: the union, each copied run with its own rows */
  for (int k = 0; k < NKEYED; k++) {
    assert_int_equal(rows_of(dst, keyed[k], 0), before_dst[k] + 3 * per_run_src[k]);
    for (int64_t id = 3; id <= 5; id++)
      assert_int_equal(rows_of(dst, keyed[k], id), per_run_src[k]);
  }
  /* the source's path became the destination's in the copied runs' text */
  run_text(dst, 4, "output_dir", text, sizeof text);
  char want[600];
  snprintf(want, sizeof want, "%s/p2", dst);
  assert_string_equal(text, want);
  run_text(dst, 4, "scenario_yaml", text, sizeof text);
  snprintf(want, sizeof want, "output:\n  database: %s\n", dst);
  assert_string_equal(text, want);
  run_text(dst, 1, "output_dir", text, sizeof text); /* the destination's own runs: untouched */
  snprintf(want, sizeof want, "%s/p1", dst);
  assert_string_equal(text, want);
  remove(dst);
  remove(src);
  rmdir(dir);
}

static void test_merge_into_nothing_takes_the_schema(void **state) {
  (void)state;
  char dir[] = "/tmp/fabsim-test-merge-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char dst[256], src[256];
  snprintf(dst, sizeof dst, "%s/new.sqlite", dir);
  snprintf(src, sizeof src, "%s/rank2.sqlite", dir);
  write_runs(src, "b", 2, src);
  sim_error err = {0};
  assert_int_equal(out_db_merge(dst, src, src, NULL, &err), SIM_OK);
  assert_int_equal(query_int(dst, "SELECT count(*) FROM runs"), 2);
  for (int k = 0; k < NKEYED; k++)
    assert_int_equal(rows_of(dst, keyed[k], 0), rows_of(src, keyed[k], 0));
  /* the same schema: the database reader reads it */
  json_t *runs = NULL;
  assert_int_equal(out_db_read_runs(dst, "sw", NULL, 0, &runs, &err), SIM_OK);
  assert_int_equal(json_array_size(runs), 2);
  json_decref(runs);
  remove(dst);
  remove(src);
  rmdir(dir);
}

static void test_failed_merge_changes_nothing(void **state) {
  (void)state;
  char dir[] = "/tmp/fabsim-test-merge-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char dst[256], bad[256];
  snprintf(dst, sizeof dst, "%s/results.sqlite", dir);
  snprintf(bad, sizeof bad, "%s/bad.sqlite", dir);
  write_runs(dst, "a", 2, dst);
  FILE *f = fopen(bad, "w");
  fputs("not a database, just text that is long enough to have a header page ...........", f);
  fclose(f);
  sim_error err = {0};
  size_t merged = 7;
  assert_int_equal(out_db_merge(dst, bad, bad, &merged, &err), SIM_EIO);
  assert_int_equal(merged, 7);
  assert_non_null(strstr(err.msg, "merging the results of"));
  assert_non_null(strstr(err.msg, "bad.sqlite"));
  assert_int_equal(query_int(dst, "SELECT count(*) FROM runs"), 2);
  remove(dst);
  remove(bad);
  rmdir(dir);
}

static void exec_sql(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
}

/* Schema versions (PRAGMA user_version): a run writes OUT__DB_VERSION (2:
 * with the flows table); a destination of schema 1 (no flows table) takes
 * the table and the version from a newer source; a file of a newer schema
 * than this fabsim's is refused by the check, the reader, the writer and
 * the merger, and left as it was. */
static void test_schema_versions(void **state) {
  (void)state;
  char dir[] = "/tmp/fabsim-test-merge-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char dst[256], src[256];
  snprintf(dst, sizeof dst, "%s/old.sqlite", dir);
  snprintf(src, sizeof src, "%s/rank1.sqlite", dir);
  write_runs(dst, "a", 1, dst);
  write_runs(src, "b", 2, src);
  assert_int_equal(query_int(src, "PRAGMA user_version"), OUT__DB_VERSION);
  assert_int_equal(OUT__DB_VERSION, 2);
  exec_sql(dst, "DROP TABLE flows; PRAGMA user_version = 1"); /* as written before flows */
  sim_error err = {0};
  assert_int_equal(out_db_merge(dst, src, src, NULL, &err), SIM_OK);
  assert_int_equal(query_int(dst, "SELECT count(*) FROM runs"), 3);
  assert_int_equal(
      query_int(dst, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'flows'"),
      1);
  assert_int_equal(query_int(dst, "PRAGMA user_version"), 2);
  /* a newer schema: refused everywhere, nothing changed */
  exec_sql(src, "PRAGMA user_version = 99");
  err = (sim_error){0};
  assert_int_equal(out_db_merge(dst, src, src, NULL, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "newer fabsim"));
  assert_non_null(strstr(err.msg, "rank1.sqlite"));
  assert_int_equal(query_int(dst, "SELECT count(*) FROM runs"), 3);
  assert_int_equal(query_int(dst, "PRAGMA user_version"), 2);
  err = (sim_error){0};
  assert_int_equal(out_db_check(src, false, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "schema 99"));
  json_t *runs = NULL;
  assert_int_equal(out_db_read_runs(src, NULL, NULL, 0, &runs, &err), SIM_ECONFIG);
  assert_null(runs);
  out__db_run r = {.summary = json_object(), .scenario_yaml = "", .started_at = "", .dir = dir};
  int64_t id = 0;
  assert_int_not_equal(out__db_append(src, &r, NULL, NULL, NULL, 0, &id, &err), SIM_OK);
  json_decref((json_t *)r.summary);
  assert_int_equal(query_int(src, "PRAGMA user_version"), 99);
  assert_int_equal(query_int(src, "SELECT count(*) FROM runs"), 2);
  remove(dst);
  remove(src);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_merge_is_the_union_renumbered),
      cmocka_unit_test(test_merge_into_nothing_takes_the_schema),
      cmocka_unit_test(test_failed_merge_changes_nothing),
      cmocka_unit_test(test_schema_versions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
