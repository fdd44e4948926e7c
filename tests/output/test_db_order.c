/* out_db_order_runs against its definition: the runs of one sweep, appended
 * in any order, end up holding the same set of run ids, in the order of
 * their folders (the sweep's points); every row keyed by run_id moves with
 * its run; runs of other sweeps, or written by another process in between,
 * keep their ids; the database stays consistent (foreign keys, integrity,
 * sqlite_sequence). Each run here is told apart by k, its point number: its
 * sim_time_s (and metric) is k and its telemetry lasts k us, so it has k
 * samples per series. */
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

/* One run of sweep `sweep`, point k, folder "d/p<k>", appended to path; its id. */
static int64_t append(const char *path, const char *sweep, int k) {
  tel *t = NULL;
  rate_bps bps[1] = {100000000000ULL};
  tel_config c = {.interval = SIM_PS_PER_US,
                  .gpus = 1,
                  .nics = 1,
                  .ports = 1,
                  .nic_bps = 100000000000ULL,
                  .port_bps = bps};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  tel_port_rate(t, 0, 0, 100000000000LL);
  tel_event(t, 500000, "leaf0-spine0", "shared-channel", "two transfers", k);
  tel_finish(t, (simtime_ps)k * SIM_PS_PER_US);
  out__series s;
  out__series_build(&s, t, NULL, NULL);
  json_t *sum = json_pack("{s:s, s:{s:n, s:[], s:i}, s:s, s:{s:i, s:f}}", "fabsim_version", "0.1.0",
                          "scenario", "file", "overrides", "seed", 1, "fidelity", "flow", "sim",
                          "sim_time_s", k, "wall_s", 0.5);
  char point[32], dir[64];
  snprintf(point, sizeof point, "k=%d", k);
  snprintf(dir, sizeof dir, "d/p%d", k);
  out__db_run r = {.summary = sum,
                   .scenario_yaml = "",
                   .started_at = "now",
                   .dir = dir,
                   .sweep = sweep,
                   .point = point,
                   .complete = true};
  int64_t id = 0;
  sim_error err = {0};
  assert_int_equal(out__db_append(path, &r, &s, t, NULL, 5, &id, &err), SIM_OK);
  json_decref(sum);
  out__series_free(&s);
  tel_destroy(t);
  return id;
}

static long long query_int(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

/* Run `id` is point k of sweep `sweep`, with all of its own rows: metric
 * sim.sim_time_s = k, k samples per series, its event's value k. */
static void assert_run(const char *path, int64_t id, const char *sweep, int k) {
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM runs WHERE run_id = %lld AND sweep = '%s' AND point = 'k=%d' "
           "AND output_dir = 'd/p%d' AND sim_time_s = %d",
           (long long)id, sweep, k, k, k);
  assert_int_equal(query_int(path, sql), 1);
  snprintf(sql, sizeof sql,
           "SELECT value FROM metrics WHERE run_id = %lld AND name = 'sim.sim_time_s'",
           (long long)id);
  assert_int_equal(query_int(path, sql), k);
  snprintf(sql, sizeof sql,
           "SELECT count(DISTINCT t_s) FROM timeseries WHERE run_id = %lld AND metric = "
           "'port_util_max'",
           (long long)id);
  assert_int_equal(query_int(path, sql), k);
  snprintf(sql, sizeof sql, "SELECT value FROM events WHERE run_id = %lld", (long long)id);
  assert_int_equal(query_int(path, sql), k);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM series WHERE run_id = %lld", (long long)id);
  assert_true(query_int(path, sql) > 0);
}

/* No dangling child row, a whole file, and AUTOINCREMENT still past every id. */
static void assert_consistent(const char *path, long long runs) {
  assert_int_equal(query_int(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);
  assert_int_equal(query_int(path, "SELECT count(*) FROM runs"), runs);
  assert_int_equal(query_int(path, "SELECT min(run_id) FROM runs"), 1);
  assert_int_equal(query_int(path, "SELECT seq FROM sqlite_sequence WHERE name = 'runs'"), runs);
  static const char *const keyed[] = {"metrics", "series", "timeseries", "events", "hot_ports"};
  for (size_t t = 0; t < sizeof keyed / sizeof *keyed; t++) {
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE run_id < 1 OR run_id > %lld", keyed[t],
             runs);
    assert_int_equal(query_int(path, sql), 0);
  }
}

static const char *const dirs[] = {"d/p1", "d/p2", "d/p3", "d/p4"};

static int order(const char *path, size_t *moved) {
  sim_error err = {0};
  return out_db_order_runs(path, "sw", dirs, 4, moved, &err);
}

/* Two earlier runs, then points 3, 1, 4, 2 of the sweep finishing in that
 * order (ids 3..6): after, points 1..4 hold ids 3..6, the earlier runs 1, 2. */
static void test_finishing_order_becomes_point_order(void **state) {
  (void)state;
  char path[] = "/tmp/fabsim-order-XXXXXX";
  close(mkstemp(path));
  unlink(path);
  assert_int_equal(append(path, "old", 2), 1);
  assert_int_equal(append(path, "old", 1), 2);
  static const int finished[] = {3, 1, 4, 2};
  for (int i = 0; i < 4; i++) assert_int_equal(append(path, "sw", finished[i]), 3 + i);
  size_t moved = 99;
  assert_int_equal(order(path, &moved), SIM_OK);
  assert_int_equal(moved, 4); /* 3 1 4 2 -> 1 2 3 4: every run moves */
  assert_run(path, 1, "old", 2);
  assert_run(path, 2, "old", 1);
  for (int k = 1; k <= 4; k++) assert_run(path, 2 + k, "sw", k);
  assert_consistent(path, 6);
  /* once ordered, again: nothing moves */
  assert_int_equal(order(path, &moved), SIM_OK);
  assert_int_equal(moved, 0);
  /* the next run takes the next id */
  assert_int_equal(append(path, "new", 1), 7);
  unlink(path);
}

/* Another process's run between the sweep's (id 2): it keeps its id, the
 * sweep's runs keep ids 1 and 3, in point order; a point that wrote no run
 * (failed, or stopped before) leaves no gap of its own. */
static void test_other_writers_keep_their_ids(void **state) {
  (void)state;
  char path[] = "/tmp/fabsim-order-XXXXXX";
  close(mkstemp(path));
  unlink(path);
  assert_int_equal(append(path, "sw", 4), 1);
  assert_int_equal(append(path, "other", 9), 2);
  assert_int_equal(append(path, "sw", 1), 3);
  size_t moved = 0;
  assert_int_equal(order(path, &moved), SIM_OK);
  assert_int_equal(moved, 2);
  assert_run(path, 1, "sw", 1);
  assert_run(path, 2, "other", 9);
  assert_run(path, 3, "sw", 4);
  assert_consistent(path, 3);
  unlink(path);
}

/* A run of the sweep in no listed folder comes after the listed ones. */
static void test_unlisted_runs_last(void **state) {
  (void)state;
  char path[] = "/tmp/fabsim-order-XXXXXX";
  close(mkstemp(path));
  unlink(path);
  assert_int_equal(append(path, "sw", 7), 1);
  assert_int_equal(append(path, "sw", 2), 2);
  assert_int_equal(order(path, NULL), SIM_OK);
  assert_run(path, 1, "sw", 2);
  assert_run(path, 2, "sw", 7);
  assert_consistent(path, 2);
  unlink(path);
}

/* No database (no point wrote a run): nothing to do, and nothing created. A
 * file that is not a results database: an error naming it, nothing changed. */
static void test_no_database_and_foreign_file(void **state) {
  (void)state;
  char path[] = "/tmp/fabsim-order-XXXXXX";
  close(mkstemp(path));
  unlink(path);
  size_t moved = 5;
  assert_int_equal(order(path, &moved), SIM_OK);
  assert_int_equal(moved, 0);
  assert_int_equal(access(path, F_OK), -1);
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", 0, 0, 0),
                   SQLITE_OK);
  sqlite3_close(db);
  sim_error err = {0};
  assert_int_equal(out_db_order_runs(path, "sw", dirs, 4, NULL, &err), SIM_EIO);
  assert_non_null(strstr(err.msg, path));
  assert_int_equal(query_int(path, "SELECT count(*) FROM t"), 1);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_finishing_order_becomes_point_order),
      cmocka_unit_test(test_other_writers_keep_their_ids),
      cmocka_unit_test(test_unlisted_runs_last),
      cmocka_unit_test(test_no_database_and_foreign_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
