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
 * COMMIT (defer_foreign_keys); a run only ever moves to an id no run holds
 * (move_ids), so no two rows share a key on the way. */
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

/* One UPDATE per table with a run_id column (runs first): ?1 the id a run
 * has, ?2 the (free) id it takes. */
typedef struct movers {
  sqlite3_stmt **st;
  size_t n;
} movers;

static void movers_free(movers *m) {
  for (size_t t = 0; t < m->n; t++) sqlite3_finalize(m->st[t]);
  sim_free(m->st);
}

static int movers_prepare(sqlite3 *db, movers *m) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT m.name FROM main.sqlite_master m WHERE m.type = 'table' AND "
                         "EXISTS (SELECT 1 FROM pragma_table_info(m.name, 'main') "
                         "WHERE name = 'run_id') ORDER BY m.name != 'runs', m.rowid",
                         -1, &st, NULL) != SQLITE_OK)
    return SIM_EIO;
  int rc = SIM_OK;
  while (rc == SIM_OK && sqlite3_step(st) == SQLITE_ROW) {
    char *sql = sqlite3_mprintf("UPDATE main.\"%w\" SET run_id = ?2 WHERE run_id = ?1",
                                (const char *)sqlite3_column_text(st, 0));
    m->st = sim_realloc(m->st, (m->n + 1) * sizeof *m->st);
    m->st[m->n] = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &m->st[m->n++], NULL) != SQLITE_OK) rc = SIM_EIO;
    sqlite3_free(sql);
  }
  sqlite3_finalize(st);
  return rc;
}

/* Run `from`'s rows in every table to the free id `to`. */
static int move_run(const movers *m, sqlite3_int64 from, sqlite3_int64 to) {
  for (size_t t = 0; t < m->n; t++) {
    sqlite3_reset(m->st[t]);
    sqlite3_bind_int64(m->st[t], 1, from);
    sqlite3_bind_int64(m->st[t], 2, to);
    if (sqlite3_step(m->st[t]) != SQLITE_DONE) return SIM_EIO;
  }
  return SIM_OK;
}

static int by_id(const void *a, const void *b) {
  sqlite3_int64 x = *(const sqlite3_int64 *)a, y = *(const sqlite3_int64 *)b;
  return (x > y) - (x < y);
}

/* temp.order_map applied. The runs that move hold the same ids before and
 * after, so the map is a permutation of them: disjoint cycles a1 -> a2 ->
 * ... -> ak -> a1. Each cycle moves ak's run to a spare id (below every id),
 * then a(k-1) to ak, ..., a1 to a2, and the spare to a1: every run's rows
 * move once, plus one run's per cycle (a run's time series is most of the
 * file: moving each run twice, through a negative id, took twice as long). */
static int move_ids(sqlite3 *db, size_t n) {
  sqlite3_int64 *old = sim_calloc(n, sizeof *old), *new = sim_calloc(n, sizeof *new), spare = 0;
  size_t *cycle = sim_calloc(n, sizeof *cycle), got = 0;
  bool *done = sim_calloc(n, sizeof *done);
  movers m = {0};
  sqlite3_stmt *st = NULL;
  int rc = movers_prepare(db, &m);
  if (rc == SIM_OK &&
      sqlite3_prepare_v2(db,
                         "SELECT old_id, new_id, (SELECT min(min(run_id), 0) - 1 FROM main.runs) "
                         "FROM temp.order_map ORDER BY old_id",
                         -1, &st, NULL) == SQLITE_OK)
    for (; got < n && sqlite3_step(st) == SQLITE_ROW; got++) {
      old[got] = sqlite3_column_int64(st, 0);
      new[got] = sqlite3_column_int64(st, 1);
      spare = sqlite3_column_int64(st, 2);
    }
  sqlite3_finalize(st);
  if (got != n) rc = SIM_EIO;
  for (size_t i = 0; i < n && rc == SIM_OK; i++) {
    size_t k = 0;
    for (size_t j = i; !done[j]; k++) { /* the cycle through old[i] */
      done[j] = true;
      cycle[k] = j;
      const sqlite3_int64 *next = bsearch(&new[j], old, n, sizeof *old, by_id);
      if (!next) { /* cannot happen: a new id no moving run holds */
        rc = SIM_EIO;
        break;
      }
      j = (size_t)(next - old);
    }
    if (k == 0 || rc != SIM_OK) continue;
    rc = move_run(&m, old[cycle[k - 1]], spare);
    for (size_t c = k - 1; c-- > 0 && rc == SIM_OK;)
      rc = move_run(&m, old[cycle[c]], new[cycle[c]]);
    if (rc == SIM_OK) rc = move_run(&m, spare, new[cycle[k - 1]]);
  }
  movers_free(&m);
  sim_free(old);
  sim_free(new);
  sim_free(cycle);
  sim_free(done);
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
      (n && move_ids(db, n) != SIM_OK))
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
