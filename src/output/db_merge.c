/* Merging one results database into another (a sweep's ranks into rank
 * 0's database): every run with new run ids, its rows in every table keyed
 * by run_id, in one transaction. The tables and columns are read from the
 * source's schema, so columns added later follow without a change here; a
 * table the destination lacks (an older schema) is made from the source's,
 * and the destination's schema version becomes the newer of the two. A
 * file of a schema newer than this fabsim's (OUT__DB_VERSION) is refused. */
#include <stdio.h>
#include <string.h>

#include "output/out_internal.h"

/* The statements of one merge (sqlite3_mprintf'd; freed by merge_free). */
typedef struct merge {
  sqlite3 *db;
  char *run_insert;   /* runs: ?1 the old run id; every column but run_id */
  char **row_inserts; /* one per table keyed by run_id: ?1 new id, ?2 old id */
  size_t ninserts;
  char why[256]; /* SQLite's message at the failure, before cleanup resets it */
} merge;

/* Keep SQLite's message of the failed step (finalizing a statement that was
 * still running resets it). */
static void merge_note(merge *m) {
  if (!m->why[0]) snprintf(m->why, sizeof m->why, "%s", sqlite3_errmsg(m->db));
}

static void merge_free(merge *m) {
  sqlite3_free(m->run_insert);
  for (size_t t = 0; t < m->ninserts; t++) sqlite3_free(m->row_inserts[t]);
  sim_free(m->row_inserts);
}

/* *list gains `item` (a column name quoted, or ?1), comma-separated. */
static void list_add(char **list, const char *fmt, const char *item) {
  char *piece = sqlite3_mprintf(fmt, item);
  char *joined = sqlite3_mprintf("%s%s%s", *list, (*list)[0] ? "," : "", piece);
  sqlite3_free(piece);
  sqlite3_free(*list);
  *list = joined;
}

/* The copy statement of r.table into main.table with run_id bound to ?1
 * (NULL when the table has no run_id column: nothing to copy per run). */
static int table_insert(sqlite3 *db, const char *table, char **sql) {
  sqlite3_stmt *info = NULL;
  char *pq = sqlite3_mprintf("PRAGMA r.table_info(%Q)", table);
  int rc = sqlite3_prepare_v2(db, pq, -1, &info, NULL);
  sqlite3_free(pq);
  *sql = NULL;
  if (rc != SQLITE_OK) return SIM_EIO;
  char *names = sqlite3_mprintf(""), *sel = sqlite3_mprintf("");
  bool keyed = false;
  while (sqlite3_step(info) == SQLITE_ROW) {
    const char *c = (const char *)sqlite3_column_text(info, 1);
    bool id = !strcmp(c, "run_id");
    keyed |= id;
    list_add(&names, "\"%w\"", c);
    list_add(&sel, id ? "?1" : "\"%w\"", c);
  }
  sqlite3_finalize(info);
  if (keyed)
    *sql = sqlite3_mprintf("INSERT INTO main.\"%w\" (%s) SELECT %s FROM r.\"%w\" WHERE run_id = ?2",
                           table, names, sel, table);
  sqlite3_free(names);
  sqlite3_free(sel);
  return SIM_OK;
}

/* Whether the destination has a table or index of that name (-1: error). */
static int have_in_main(sqlite3 *db, const char *name) {
  sqlite3_stmt *st = NULL;
  int have = -1;
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM main.sqlite_master WHERE name = ?1", -1, &st,
                         NULL) == SQLITE_OK &&
      sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    have = sqlite3_column_int(st, 0) > 0;
  sqlite3_finalize(st);
  return have;
}

/* The source's tables and indexes that the destination lacks (all of them
 * when rank 0 ran nothing yet; the flows table into a destination of
 * schema 1), and one copy statement per table keyed by run_id. */
static int prepare_tables(merge *m) {
  sqlite3_stmt *st = NULL;
  int rc = SIM_EIO;
  if (sqlite3_prepare_v2(m->db,
                         "SELECT type, name, sql FROM r.sqlite_master WHERE sql NOT NULL AND "
                         "name NOT LIKE 'sqlite_%' ORDER BY type = 'index', rowid",
                         -1, &st, NULL) != SQLITE_OK)
    goto out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *type = (const char *)sqlite3_column_text(st, 0);
    const char *name = (const char *)sqlite3_column_text(st, 1);
    int have = have_in_main(m->db, name);
    if (have < 0 || (!have && sqlite3_exec(m->db, (const char *)sqlite3_column_text(st, 2), NULL,
                                           NULL, NULL) != SQLITE_OK))
      goto out;
    if (strcmp(type, "table") || !strcmp(name, "runs")) continue;
    char *sql = NULL;
    if (table_insert(m->db, name, &sql) != SIM_OK) goto out;
    if (!sql) continue;
    m->row_inserts = sim_realloc(m->row_inserts, (m->ninserts + 1) * sizeof *m->row_inserts);
    m->row_inserts[m->ninserts++] = sql;
  }
  rc = SIM_OK;
out:
  if (rc != SIM_OK) merge_note(m);
  sqlite3_finalize(st);
  return rc;
}

/* The runs copy (every column but run_id, which the destination assigns),
 * and src_name -> dst in the source runs' text columns. */
static int prepare_runs(merge *m, const char *src_name, const char *dst) {
  sqlite3_stmt *info = NULL;
  if (sqlite3_prepare_v2(m->db, "PRAGMA r.table_info('runs')", -1, &info, NULL) != SQLITE_OK)
    return SIM_EIO;
  char *names = sqlite3_mprintf("");
  int rc = SIM_OK;
  while (sqlite3_step(info) == SQLITE_ROW) {
    const char *c = (const char *)sqlite3_column_text(info, 1);
    const char *type = (const char *)sqlite3_column_text(info, 2);
    if (!strcmp(c, "run_id")) continue;
    list_add(&names, "\"%w\"", c);
    if (!type || strcmp(type, "TEXT")) continue;
    char *u =
        sqlite3_mprintf("UPDATE r.runs SET \"%w\" = replace(\"%w\", %Q, %Q)", c, c, src_name, dst);
    int urc = sqlite3_exec(m->db, u, NULL, NULL, NULL);
    sqlite3_free(u);
    if (urc != SQLITE_OK) {
      merge_note(m);
      rc = SIM_EIO;
      break;
    }
  }
  sqlite3_finalize(info);
  m->run_insert = sqlite3_mprintf(
      "INSERT INTO main.runs (%s) SELECT %s FROM r.runs WHERE run_id = ?1", names, names);
  sqlite3_free(names);
  return rc;
}

/* One prepared statement with up to two ids bound, stepped to its end. */
static int step_once(sqlite3 *db, const char *sql, sqlite3_int64 a, sqlite3_int64 b) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return SIM_EIO;
  sqlite3_bind_int64(st, 1, a);
  if (sqlite3_bind_parameter_count(st) > 1) sqlite3_bind_int64(st, 2, b);
  int src = sqlite3_step(st);
  sqlite3_finalize(st);
  return src == SQLITE_DONE ? SIM_OK : SIM_EIO;
}

/* Every source run in run_id order, with its rows; *n counts them. */
static int copy_runs(merge *m, size_t *n) {
  sqlite3_stmt *runs = NULL;
  int rc = SIM_EIO;
  if (sqlite3_prepare_v2(m->db, "SELECT run_id FROM r.runs ORDER BY run_id", -1, &runs, NULL) !=
      SQLITE_OK)
    return rc;
  while (sqlite3_step(runs) == SQLITE_ROW) {
    sqlite3_int64 old = sqlite3_column_int64(runs, 0);
    if (step_once(m->db, m->run_insert, old, 0) != SIM_OK) goto out;
    sqlite3_int64 id = sqlite3_last_insert_rowid(m->db);
    for (size_t t = 0; t < m->ninserts; t++)
      if (step_once(m->db, m->row_inserts[t], id, old) != SIM_OK) goto out;
    (*n)++;
  }
  rc = SIM_OK;
out:
  if (rc != SIM_OK) merge_note(m);
  sqlite3_finalize(runs);
  return rc;
}

int out_db_merge(const char *dst, const char *src, const char *src_name, size_t *merged,
                 sim_error *err) {
  merge m = {0};
  size_t n = 0;
  int rc = SIM_EIO;
  char *q = NULL;
  if (sqlite3_open_v2(dst, &m.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
    goto fail;
  sqlite3_busy_timeout(m.db, 600000);
  q = sqlite3_mprintf("ATTACH %Q AS r", src);
  int vdst = 0, vsrc = 0;
  if (sqlite3_exec(m.db, q, NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_exec(m.db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
      out__db_version(m.db, "main", &vdst) != SIM_OK || out__db_version(m.db, "r", &vsrc) != SIM_OK)
    goto fail;
  if ((rc = out__db_newer(vdst, err, dst)) != SIM_OK ||
      (rc = out__db_newer(vsrc, err, src)) != SIM_OK) { /* nothing changed: err says which */
    sqlite3_exec(m.db, "ROLLBACK", NULL, NULL, NULL);
    goto out;
  }
  rc = SIM_EIO;
  char version[48]; /* the newer of the two: the destination now has every table of both */
  snprintf(version, sizeof version, "PRAGMA main.user_version = %d", vsrc > vdst ? vsrc : vdst);
  if (prepare_tables(&m) != SIM_OK || prepare_runs(&m, src_name, dst) != SIM_OK ||
      copy_runs(&m, &n) != SIM_OK || sqlite3_exec(m.db, version, NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_exec(m.db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    goto fail;
  if (merged) *merged = n;
  rc = SIM_OK;
  goto out;
fail:
  sim_fail(err, SIM_EIO, "%s: merging the results of %s: %s", dst, src,
           m.why[0] ? m.why
           : m.db   ? sqlite3_errmsg(m.db)
                    : "cannot open");
  if (m.db) sqlite3_exec(m.db, "ROLLBACK", NULL, NULL, NULL);
out:
  merge_free(&m);
  sqlite3_free(q);
  if (m.db) {
    sqlite3_exec(m.db, "DETACH r", NULL, NULL, NULL);
    sqlite3_close(m.db);
  }
  return rc;
}
