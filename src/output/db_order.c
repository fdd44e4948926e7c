/* A sweep's run ids in point order (fabsim sweep calls this at its end).
 *
 * The points of a sweep run in parallel processes (and on MPI ranks, whose
 * databases rank 0 merges rank by rank), each appending its run when it
 * finishes, so AUTOINCREMENT hands out the ids in the order the points
 * happened to finish: machine load, not the scenario. out_db_order_runs then
 * permutes the ids the sweep's runs hold so that they follow point order.
 * The set of ids is kept: with no other writer the sweep's runs hold the next
 * ids after those the database held when it began, so they end up exactly
 * the ids they would have had if the points had finished in point order; a
 * run another process added meanwhile keeps its id (the sweep's ids then
 * interleave with it, still in point order among themselves).
 *
 * Why renumber in place rather than give each point a database of its own
 * and merge them at the end: the runs are in the database as soon as each
 * point ends (a sweep killed outright loses none of them, only their order),
 * and nothing a point wrote names a run id, so no point file changes.
 *
 * The runs row and every row keyed by run_id (metrics, series, timeseries,
 * events, hot_ports, and any table a later schema adds: read from the
 * database, not listed here) move in one IMMEDIATE transaction: all or
 * nothing. The foreign keys have no ON UPDATE action, so they are checked at
 * COMMIT (defer_foreign_keys), and each id goes through its negative on the
 * way (old -> -new -> new), so no two rows ever share a key. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "output/out_internal.h"

static int exec(sqlite3 *db, const char *sql) {
  return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? SIM_OK : SIM_EIO;
}

/* temp.order_pos: each folder's place in dirs (the first, for a repeated one). */
static int load_positions(sqlite3 *db, const char *const *dirs, size_t n) {
  sqlite3_stmt *st = NULL;
  if (exec(db, "CREATE TEMP TABLE order_pos (dir TEXT PRIMARY KEY, k INTEGER NOT NULL)") !=
          SIM_OK ||
      sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO temp.order_pos (dir, k) VALUES (?,?)", -1, &st,
                         NULL) != SQLITE_OK)
    return SIM_EIO;
  int rc = SIM_OK;
  for (size_t i = 0; i < n && rc == SIM_OK; i++) {
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, dirs[i], -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
    if (sqlite3_step(st) != SQLITE_DONE) rc = SIM_EIO;
  }
  sqlite3_finalize(st);
  return rc;
}

/* temp.order_map (old_id, new_id): the sweep's runs whose id changes. The
 * k-th run in point order (a run in no folder of dirs last, in id order)
 * takes the k-th smallest id the sweep holds. *n: how many. */
static int plan(sqlite3 *db, const char *sweep, size_t ndirs, size_t *n) {
  static const char sql[] =
      "WITH s AS (SELECT r.run_id AS id, coalesce(p.k, ?2) AS k FROM main.runs r "
      "           LEFT JOIN temp.order_pos p ON p.dir = r.output_dir WHERE r.sweep = ?1),"
      "     by_point AS (SELECT id, row_number() OVER (ORDER BY k, id) AS i FROM s),"
      "     by_id AS (SELECT id, row_number() OVER (ORDER BY id) AS i FROM s) "
      "INSERT INTO temp.order_map (old_id, new_id) "
      "SELECT by_point.id, by_id.id FROM by_point JOIN by_id USING (i) WHERE by_point.id != "
      "by_id.id";
  sqlite3_stmt *st = NULL;
  if (exec(db,
           "CREATE TEMP TABLE order_map (old_id INTEGER PRIMARY KEY, new_id INTEGER NOT NULL)") !=
          SIM_OK ||
      sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    return SIM_EIO;
  sqlite3_bind_text(st, 1, sweep, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, (sqlite3_int64)ndirs);
  int rc = sqlite3_step(st) == SQLITE_DONE ? SIM_OK : SIM_EIO;
  sqlite3_finalize(st);
  *n = rc == SIM_OK ? (size_t)sqlite3_changes(db) : 0;
  return rc;
}

/* Every table with a run_id column, runs first: old -> -new, then -new -> new. */
static int move_ids(sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT m.name FROM main.sqlite_master m WHERE m.type = 'table' AND "
                         "EXISTS (SELECT 1 FROM pragma_table_info(m.name, 'main') "
                         "WHERE name = 'run_id') ORDER BY m.name != 'runs', m.rowid",
                         -1, &st, NULL) != SQLITE_OK)
    return SIM_EIO;
  char **tables = NULL;
  size_t nt = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    tables = sim_realloc(tables, (nt + 1) * sizeof *tables);
    tables[nt++] = sim_strdup((const char *)sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  int rc = SIM_OK;
  for (size_t t = 0; t < nt && rc == SIM_OK; t++) {
    char *sql = sqlite3_mprintf(
        "UPDATE main.\"%w\" SET run_id = -(SELECT new_id FROM temp.order_map WHERE old_id = "
        "run_id) WHERE run_id IN (SELECT old_id FROM temp.order_map);"
        "UPDATE main.\"%w\" SET run_id = -run_id WHERE run_id IN "
        "(SELECT -new_id FROM temp.order_map);",
        tables[t], tables[t]);
    rc = exec(db, sql);
    sqlite3_free(sql);
  }
  for (size_t t = 0; t < nt; t++) sim_free(tables[t]);
  sim_free(tables);
  return rc;
}

int out_db_order_runs(const char *path, const char *sweep, const char *const *dirs, size_t ndirs,
                      size_t *moved, sim_error *err) {
  struct stat st;
  size_t n = 0;
  if (moved) *moved = 0;
  if (stat(path, &st) != 0 && errno == ENOENT) return SIM_OK; /* no point wrote a run */
  sqlite3 *db = NULL;
  int rc = out__db_open(path, true, &db, err);
  if (rc != SIM_OK) return rc;
  const char *what = "cannot start a transaction";
  if (exec(db, "BEGIN IMMEDIATE") != SIM_OK) goto fail;
  what = "cannot order the sweep's runs";
  if (exec(db, "PRAGMA defer_foreign_keys = ON") != SIM_OK ||
      load_positions(db, dirs, ndirs) != SIM_OK || plan(db, sweep, ndirs, &n) != SIM_OK ||
      (n && move_ids(db) != SIM_OK))
    goto rollback;
  what = "cannot commit the sweep's run ids";
  if (exec(db, "COMMIT") != SIM_OK) goto rollback;
  sqlite3_close(db);
  if (moved) *moved = n;
  return SIM_OK;
rollback:
  rc = out__db_fail(db, err, path, what);
  exec(db, "ROLLBACK");
  sqlite3_close(db);
  return rc;
fail:
  rc = out__db_fail(db, err, path, what);
  sqlite3_close(db);
  return rc;
}
