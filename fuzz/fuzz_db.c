/* libFuzzer target for results databases a user names (src/output/db.c,
 * db_merge.c, db_order.c, table.c, report.c): the bytes are the SQLite
 * file. As `fabsim compare --db FILE` reads it: its runs are read (all of
 * them, one sweep's, one id), labelled as compare labels them, tabled and
 * drawn into a comparison report.html with their series. As `fabsim sweep
 * --db FILE` finishes with it: its runs merged into another database (what
 * rank 0 does with each rank's file) and one sweep's runs renumbered in
 * place. Any file must be read or refused with a message, never crash or
 * leak; the summaries' JSON text inside is the file's too. Seeds: the
 * databases of a run and of a sweep (make fuzz-smoke writes them with the
 * Release build). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sqlite3.h>
#include <unistd.h>

#include "fabsim/out.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char db_path[64], merged_path[64], report_dir[64], report_file[96];

static void cleanup(void) {
  unlink(db_path);
  unlink(merged_path);
  unlink(report_file);
  rmdir(report_dir);
}

/* The database file and the report's folder, one per fuzzing process. */
static void once(void) {
  if (db_path[0]) return;
  snprintf(db_path, sizeof db_path, "/tmp/fabsim-fuzz-db.%ld.sqlite", (long)getpid());
  snprintf(merged_path, sizeof merged_path, "/tmp/fabsim-fuzz-db.%ld.merged", (long)getpid());
  snprintf(report_dir, sizeof report_dir, "/tmp/fabsim-fuzz-db.%ld", (long)getpid());
  snprintf(report_file, sizeof report_file, "%s/report.html", report_dir);
  atexit(cleanup);
}

/* The sweep id of the file's first sweep run, else "sweep" (into id). */
static void first_sweep(char *id, size_t cap) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  snprintf(id, cap, "sweep");
  if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "SELECT sweep FROM runs WHERE sweep IS NOT NULL LIMIT 1", -1, &st,
                         NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    snprintf(id, cap, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
}

/* a refusal says why; a success gives an array */
static void expect(int rc, const json_t *runs, const sim_error *err) {
  if (rc != SIM_OK ? err->msg[0] == '\0' : !json_is_array(runs)) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  once();
  FILE *f = fopen(db_path, "wb");
  if (!f) return 0;
  size_t put = fwrite(data, 1, size, f);
  if (fclose(f) != 0 || put != size) return 0;

  sim_error err = {0};
  json_t *runs = NULL;
  int rc = out_db_read_runs(db_path, NULL, NULL, 0, &runs, &err);
  expect(rc, runs, &err);
  if (rc == SIM_OK) {
    for (size_t i = 0; i < json_array_size(runs); i++) { /* as compare --db labels them */
      json_t *r = json_array_get(runs, i);
      const char *point = json_string_value(json_object_get(r, "point"));
      char label[256];
      snprintf(label, sizeof label, "run %lld: %s",
               (long long)json_integer_value(json_object_get(r, "run_id")),
               point ? point : "defaults");
      json_object_set_new(r, "label", json_string(label));
    }
    FILE *null = fopen("/dev/null", "w");
    if (null) {
      out_compare_table(null, runs);
      static const char *const keys[] = {"fabric.routing"};
      out_sweep_table(null, runs, keys, 1);
      fclose(null);
    }
    if (out_compare_report(db_path, runs, report_dir, &err) != SIM_OK && err.msg[0] == '\0')
      __builtin_trap();
  }
  json_decref(runs);
  runs = NULL;
  /* one sweep's runs, and one id that may be missing */
  char sweep[128];
  first_sweep(sweep, sizeof sweep);
  err = (sim_error){0};
  expect(rc = out_db_read_runs(db_path, sweep, NULL, 0, &runs, &err), runs, &err);
  json_decref(runs);
  runs = NULL;
  const int64_t id = 1;
  err = (sim_error){0};
  expect(rc = out_db_read_runs(db_path, NULL, &id, 1, &runs, &err), runs, &err);
  json_decref(runs);
  /* merged into a new database, then one sweep's runs put in folder order */
  err = (sim_error){0};
  unlink(merged_path);
  size_t n = 0;
  if (out_db_merge(merged_path, db_path, db_path, &n, &err) != SIM_OK && err.msg[0] == '\0')
    __builtin_trap();
  static const char *const dirs[] = {"b", "a"};
  err = (sim_error){0};
  if (out_db_order_runs(db_path, sweep, dirs, 2, &n, &err) != SIM_OK && err.msg[0] == '\0')
    __builtin_trap();
  unlink(db_path);
  return 0;
}
