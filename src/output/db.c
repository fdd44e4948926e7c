/* results.sqlite: every run a row of `runs`, its figures in `metrics`, its
 * sampled series in `timeseries`, its event log in `events`, its hottest
 * ports in `hot_ports` and, with output.flows, its transfers in `flows`. Many runs (a sweep's
 * parallel processes among them) may share one file: each run is appended in a single IMMEDIATE
 * transaction, so a run that dies half way leaves no trace and never harms
 * the runs before it; writers wait for each other (busy timeout) instead of
 * failing. The schema is created on first use; PRAGMA user_version says
 * which schema a file has (OUT__DB_VERSION): 1 before the flows table, 2
 * with it. A file of an older schema is brought up to this one when a run
 * is appended (every table is CREATE IF NOT EXISTS); one of a newer schema
 * (a newer fabsim wrote it) is refused by every reader and writer here,
 * before anything is read or written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output/out_internal.h"

enum { DB_BUSY_MS = 600000 };

static const char db_schema[] =
    "CREATE TABLE IF NOT EXISTS runs (\n"
    "  run_id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "  scenario TEXT,              -- the scenario file as given; NULL: defaults and --set only\n"
    "  overrides TEXT NOT NULL,    -- JSON array of the --set arguments\n"
    "  seed INTEGER NOT NULL,\n"
    "  fidelity TEXT NOT NULL,\n"
    "  version TEXT NOT NULL,      -- fabsim version\n"
    "  started_at TEXT NOT NULL,   -- wall clock, UTC, ISO 8601\n"
    "  wall_s REAL NOT NULL,       -- wall-clock seconds the run took\n"
    "  sim_time_s REAL,            -- simulated seconds\n"
    "  complete INTEGER NOT NULL,  -- 0: stopped early (Ctrl-C) or the job failed\n"
    "  output_dir TEXT NOT NULL,\n"
    "  sweep TEXT,                 -- fabsim sweep/compare id, else NULL\n"
    "  point TEXT,                 -- the sweep point: 'key=value key=value'\n"
    "  scenario_yaml TEXT NOT NULL,-- the fully resolved scenario\n"
    "  summary_json TEXT NOT NULL  -- summary.json as written\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS runs_by_scenario ON runs(scenario, seed);\n"
    "CREATE INDEX IF NOT EXISTS runs_by_sweep ON runs(sweep, point);\n"
    "CREATE TABLE IF NOT EXISTS metrics (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "  name TEXT NOT NULL,         -- path in summary.json: 'collectives.0.busbw_GBps'\n"
    "  value REAL,\n"
    "  PRIMARY KEY (run_id, name)\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX IF NOT EXISTS metrics_by_name ON metrics(name, value);\n"
    "CREATE TABLE IF NOT EXISTS series (   -- the columns of timeseries.csv, with units\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "  metric TEXT NOT NULL,       -- 'nic_tx_gbps_total', 'util', ...\n"
    "  entity TEXT NOT NULL,       -- '' for aggregates; a port or NIC name\n"
    "  unit TEXT NOT NULL,\n"
    "  PRIMARY KEY (run_id, metric, entity)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS timeseries (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "  metric TEXT NOT NULL,\n"
    "  entity TEXT NOT NULL DEFAULT '',\n"
    "  t_s REAL NOT NULL,          -- start of the sample interval\n"
    "  interval_s REAL NOT NULL,   -- its length (the last may be short)\n"
    "  value REAL,\n"
    "  PRIMARY KEY (run_id, metric, entity, t_s)  -- the index: one series, in time order\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS events (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "  t_s REAL NOT NULL,\n"
    "  component TEXT NOT NULL,    -- as fabsim topo names it: 'leaf0-spine3', 'gpu17'\n"
    "  kind TEXT NOT NULL,\n"
    "  effect TEXT NOT NULL,\n"
    "  value REAL\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS events_by_time ON events(run_id, t_s);\n"
    "CREATE INDEX IF NOT EXISTS events_by_component ON events(component, kind);\n"
    "CREATE TABLE IF NOT EXISTS hot_ports (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "  rank INTEGER NOT NULL,      -- 1 = the port that moved the most bytes\n"
    "  port TEXT NOT NULL,\n"
    "  bytes REAL NOT NULL,\n"
    "  utilization REAL NOT NULL,\n"
    "  queue_max_bytes INTEGER,\n"
    "  ecn_marks INTEGER,\n"
    "  pfc_paused_s REAL,\n"
    "  PRIMARY KEY (run_id, rank)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS flows (  -- output.flows: the rows of flows.csv\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "  id INTEGER NOT NULL,        -- 1, 2, ... in (start, phase, transfer) order\n"
    "  start_ps INTEGER NOT NULL,  -- simulated picoseconds\n"
    "  end_ps INTEGER NOT NULL,    -- its last byte's arrival\n"
    "  fct_ps INTEGER NOT NULL,    -- end_ps - start_ps\n"
    "  src TEXT NOT NULL,          -- as fabsim topo names it: 'gpu17'\n"
    "  dst TEXT NOT NULL,\n"
    "  src_nic TEXT NOT NULL,      -- '' : none (NVLink, the GPU itself)\n"
    "  dst_nic TEXT NOT NULL,\n"
    "  bytes INTEGER NOT NULL,\n"
    "  class TEXT NOT NULL,        -- its traffic class's name\n"
    "  job TEXT NOT NULL,          -- the jobs: list's name; '' : none\n"
    "  phase INTEGER NOT NULL,     -- its phase, in submission order from 0\n"
    "  path TEXT NOT NULL,         -- vertices joined by '>': 'gpu0>nic0>leaf0>spine1>...'\n"
    "  spread INTEGER NOT NULL,    -- 1: routing spreads its bytes; path is its ECMP path\n"
    "  PRIMARY KEY (run_id, id)\n"
    ") WITHOUT ROWID;\n";

int out__db_fail(sqlite3 *db, sim_error *err, const char *path, const char *what) {
  return sim_fail(err, SIM_EIO, "%s: %s: %s", path, what, db ? sqlite3_errmsg(db) : "cannot open");
}

/* A database is a regular file (or absent, to be created): a device or a
 * pipe given as output.database or compare --db is refused, not read. */
int out__db_open(const char *path, bool write, sqlite3 **db, sim_error *err) {
  int flags = write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  struct stat st;
  *db = NULL;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
    return sim_fail(err, SIM_EIO, "%s: is %s; a results database is a regular file", path,
                    S_ISDIR(st.st_mode)   ? "a folder"
                    : S_ISCHR(st.st_mode) ? "a character device"
                                          : "not a regular file");
  if (sqlite3_open_v2(path, db, flags, NULL) != SQLITE_OK) {
    int rc = out__db_fail(*db, err, path, "cannot open the results database");
    sqlite3_close(*db);
    *db = NULL;
    return rc;
  }
  sqlite3_busy_timeout(*db, DB_BUSY_MS);
  sqlite3_exec(*db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
  return SIM_OK;
}

int out__db_version(sqlite3 *db, const char *schema, int *version) {
  char sql[64];
  sqlite3_stmt *st = NULL;
  snprintf(sql, sizeof sql, "PRAGMA %s.user_version", schema);
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW
               ? SIM_OK
               : SIM_EIO;
  *version = rc == SIM_OK ? sqlite3_column_int(st, 0) : 0;
  sqlite3_finalize(st);
  return rc;
}

int out__db_newer(int version, sim_error *err, const char *path) {
  if (version <= OUT__DB_VERSION) return SIM_OK;
  return sim_fail(err, SIM_ECONFIG,
                  "%s%swas written by a newer fabsim (results schema %d; this one reads and "
                  "writes schema %d and older)",
                  path ? path : "", path ? ": " : "", version, OUT__DB_VERSION);
}

/* The file's schema version against ours, on an open database. */
static int check_version(sqlite3 *db, const char *path, sim_error *err) {
  int v = 0;
  if (out__db_version(db, "main", &v) != SIM_OK)
    return out__db_fail(db, err, path, "cannot read the schema version");
  return out__db_newer(v, err, path);
}

int out_db_check(const char *path, bool create, sim_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) {
    if (errno == ENOENT && create) return SIM_OK;
    return sim_fail(err, errno == ENOENT ? SIM_ENOENT : SIM_ECONFIG, "%s", strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    return sim_fail(err, SIM_ECONFIG, "is %s",
                    S_ISDIR(st.st_mode)    ? "a folder"
                    : S_ISCHR(st.st_mode)  ? "a character device"
                    : S_ISFIFO(st.st_mode) ? "a pipe"
                                           : "not a regular file");
  sqlite3 *db = NULL;
  sqlite3_stmt *st_tables = NULL;
  int rc = SIM_OK, tables = 0, runs = 0;
  /* the busy timeout before the schema is read: a sweep's workers write to
   * the same database, and a locked one is busy, not something else */
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
    sqlite3_busy_timeout(db, DB_BUSY_MS);
  if (!db || sqlite3_errcode(db) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &st_tables,
                         NULL) != SQLITE_OK) {
    int busy = db && (sqlite3_errcode(db) == SQLITE_BUSY || sqlite3_errcode(db) == SQLITE_LOCKED);
    rc = sim_fail(err, busy ? SIM_EIO : SIM_ECONFIG, "%s (%s)",
                  busy ? "stayed locked by another writer" : "is not an SQLite database",
                  db ? sqlite3_errmsg(db) : "cannot open");
    goto done;
  }
  for (int s; (s = sqlite3_step(st_tables)) != SQLITE_DONE;) {
    if (s != SQLITE_ROW) {
      rc = sim_fail(err, SIM_ECONFIG, "is not an SQLite database (%s)", sqlite3_errmsg(db));
      goto done;
    }
    tables++;
    const unsigned char *name = sqlite3_column_text(st_tables, 0);
    runs += name && !strcmp((const char *)name, "runs");
  }
  if (tables && !runs)
    rc = sim_fail(err, SIM_ECONFIG,
                  "is an SQLite database of %d tables but not a fabsim results database (no "
                  "table runs)",
                  tables);
  int version = 0;
  if (rc == SIM_OK && runs && out__db_version(db, "main", &version) == SIM_OK)
    rc = out__db_newer(version, err, NULL);
done:
  sqlite3_finalize(st_tables);
  sqlite3_close(db);
  return rc;
}

typedef struct ins {
  sqlite3_stmt *st;
  int64_t run;
  bool failed;
} ins;

static void metric_leaf(void *ctx, const char *name, double v) {
  ins *m = ctx;
  sqlite3_reset(m->st);
  sqlite3_bind_int64(m->st, 1, m->run);
  sqlite3_bind_text(m->st, 2, name, -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(m->st, 3, v);
  if (sqlite3_step(m->st) != SQLITE_DONE) m->failed = true;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s) {
  if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, i);
}

static double num_at(const json_t *o, const char *a, const char *b) {
  const json_t *x = json_object_get(o, a);
  return json_number_value(b ? json_object_get(x, b) : x);
}

static int insert_run(sqlite3 *db, const out__db_run *r, int64_t *id) {
  static const char sql[] =
      "INSERT INTO runs (scenario, overrides, seed, fidelity, version, started_at, wall_s, "
      "sim_time_s, complete, output_dir, sweep, point, scenario_yaml, summary_json) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return SIM_EIO;
  const json_t *sc = json_object_get(r->summary, "scenario");
  char *overrides = json_dumps(json_object_get(sc, "overrides"), JSON_COMPACT);
  char *summary = out_json_text(r->summary);
  bind_text_or_null(st, 1, json_string_value(json_object_get(sc, "file")));
  bind_text_or_null(st, 2, overrides ? overrides : "[]");
  sqlite3_bind_int64(st, 3, (sqlite3_int64)json_integer_value(json_object_get(sc, "seed")));
  bind_text_or_null(st, 4, json_string_value(json_object_get(r->summary, "fidelity")));
  bind_text_or_null(st, 5, json_string_value(json_object_get(r->summary, "fabsim_version")));
  bind_text_or_null(st, 6, r->started_at);
  sqlite3_bind_double(st, 7, num_at(r->summary, "sim", "wall_s"));
  sqlite3_bind_double(st, 8, num_at(r->summary, "sim", "sim_time_s"));
  sqlite3_bind_int(st, 9, r->complete);
  bind_text_or_null(st, 10, r->dir);
  bind_text_or_null(st, 11, r->sweep);
  bind_text_or_null(st, 12, r->point);
  bind_text_or_null(st, 13, r->scenario_yaml ? r->scenario_yaml : "");
  bind_text_or_null(st, 14, summary ? summary : "{}");
  int rc = sqlite3_step(st) == SQLITE_DONE ? SIM_OK : SIM_EIO;
  *id = sqlite3_last_insert_rowid(db);
  sqlite3_finalize(st);
  free(overrides);
  free(summary);
  return rc;
}

static int insert_series(sqlite3 *db, int64_t run, const out__series *s) {
  sqlite3_stmt *st = NULL, *cs = NULL;
  int rc = SIM_OK;
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO timeseries (run_id, metric, entity, t_s, interval_s, value) "
                         "VALUES (?,?,?,?,?,?)",
                         -1, &st, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO series (run_id, metric, entity, unit) VALUES (?,?,?,?)",
                         -1, &cs, NULL) != SQLITE_OK)
    rc = SIM_EIO;
  for (size_t c = 0; c < s->ncols && rc == SIM_OK; c++) {
    sqlite3_reset(cs);
    sqlite3_bind_int64(cs, 1, run);
    sqlite3_bind_text(cs, 2, s->cols[c].metric, -1, SQLITE_STATIC);
    sqlite3_bind_text(cs, 3, s->cols[c].entity, -1, SQLITE_STATIC);
    sqlite3_bind_text(cs, 4, s->cols[c].unit, -1, SQLITE_STATIC);
    if (sqlite3_step(cs) != SQLITE_DONE) rc = SIM_EIO;
    for (size_t i = 0; i < s->rows && rc == SIM_OK; i++) {
      sqlite3_reset(st);
      sqlite3_bind_int64(st, 1, run);
      sqlite3_bind_text(st, 2, s->cols[c].metric, -1, SQLITE_STATIC);
      sqlite3_bind_text(st, 3, s->cols[c].entity, -1, SQLITE_STATIC);
      sqlite3_bind_double(st, 4, s->t[i]);
      sqlite3_bind_double(st, 5, s->len[i]);
      sqlite3_bind_double(st, 6, s->v[i * s->ncols + c]);
      if (sqlite3_step(st) != SQLITE_DONE) rc = SIM_EIO;
    }
  }
  sqlite3_finalize(st);
  sqlite3_finalize(cs);
  return rc;
}

static int insert_events(sqlite3 *db, int64_t run, const tel *t) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(
          db,
          "INSERT INTO events (run_id, t_s, component, kind, effect, value) VALUES (?,?,?,?,?,?)",
          -1, &st, NULL) != SQLITE_OK)
    return SIM_EIO;
  int rc = SIM_OK;
  size_t n = t ? tel_event_count(t) : 0;
  for (size_t i = 0; i < n && rc == SIM_OK; i++) {
    tel_event_view e;
    tel_event_at(t, i, &e);
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_double(st, 2, (double)e.at / 1e12);
    sqlite3_bind_text(st, 3, e.component, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, e.kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, e.effect, -1, SQLITE_STATIC);
    if (e.value == e.value) sqlite3_bind_double(st, 6, e.value);
    else sqlite3_bind_null(st, 6);
    if (sqlite3_step(st) != SQLITE_DONE) rc = SIM_EIO;
  }
  sqlite3_finalize(st);
  return rc;
}

static int insert_hot_ports(sqlite3 *db, int64_t run, const tel *t, const out_names *names,
                            uint32_t k) {
  if (!t || k == 0 || !(tel_observed(t) & TEL_OBS_PORT_UTIL)) return SIM_OK;
  tel_port_total *top = sim_malloc(k * sizeof *top);
  size_t n = tel_top_ports(t, top, k);
  sqlite3_stmt *st = NULL;
  int rc = SIM_OK;
  if (sqlite3_prepare_v2(
          db,
          "INSERT INTO hot_ports (run_id, rank, port, bytes, utilization, queue_max_bytes, "
          "ecn_marks, pfc_paused_s) VALUES (?,?,?,?,?,?,?,?)",
          -1, &st, NULL) != SQLITE_OK)
    rc = SIM_EIO;
  unsigned obs = tel_observed(t);
  for (size_t i = 0; i < n && rc == SIM_OK; i++) {
    char name[96];
    if (names && names->port) names->port(names->ctx, top[i].port, name, sizeof name);
    else snprintf(name, sizeof name, "port%u", top[i].port);
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)i + 1);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 4, top[i].bytes);
    sqlite3_bind_double(st, 5, top[i].util);
    if (obs & TEL_OBS_PORT_QUEUE) sqlite3_bind_int64(st, 6, (sqlite3_int64)top[i].queue_max_bytes);
    else sqlite3_bind_null(st, 6);
    if (obs & TEL_OBS_PORT_ECN) sqlite3_bind_int64(st, 7, (sqlite3_int64)top[i].ecn_marks);
    else sqlite3_bind_null(st, 7);
    if (obs & TEL_OBS_PORT_PFC) sqlite3_bind_double(st, 8, sim_ps_to_s(top[i].pfc_paused));
    else sqlite3_bind_null(st, 8);
    if (sqlite3_step(st) != SQLITE_DONE) rc = SIM_EIO;
  }
  sqlite3_finalize(st);
  sim_free(top);
  return rc;
}

static int insert_flows(sqlite3 *db, int64_t run, const run_flows *f, const topo *t) {
  if (!f || !f->on || !t) return SIM_OK;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO flows (run_id, id, start_ps, end_ps, fct_ps, src, dst, "
                         "src_nic, dst_nic, bytes, class, job, phase, path, spread) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         -1, &st, NULL) != SQLITE_OK)
    return SIM_EIO;
  int rc = SIM_OK;
  out__flow_text o;
  for (size_t i = 0; i < f->n && rc == SIM_OK; i++) {
    const tel_flow *r = &f->v[i];
    out__flow_text_of(f, t, r, &o);
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)i + 1);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)r->start);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)r->end);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)(r->end - r->start));
    const char *text[] = {o.src, o.dst, o.src_nic, o.dst_nic};
    for (int k = 0; k < 4; k++) sqlite3_bind_text(st, 6 + k, text[k], -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 10, (sqlite3_int64)r->bytes);
    sqlite3_bind_text(st, 11, o.cls, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 12, o.job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 13, (sqlite3_int64)r->phase);
    sqlite3_bind_text(st, 14, o.path, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 15, f->spread ? 1 : 0);
    if (sqlite3_step(st) != SQLITE_DONE) rc = SIM_EIO;
  }
  sqlite3_finalize(st);
  return rc;
}

int out__db_append(const char *path, const out__db_run *r, const out__series *s, const tel *t,
                   const out_names *names, uint32_t top_ports, int64_t *run_id, sim_error *err) {
  sqlite3 *db = NULL;
  int rc = out__db_open(path, true, &db, err);
  if (rc != SIM_OK) return rc;
  const char *what = "cannot start a transaction";
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) goto fail;
  if ((rc = check_version(db, path, err)) != SIM_OK) goto refused; /* newer: left as it is */
  what = "cannot create the schema";
  char version[48];
  snprintf(version, sizeof version, "PRAGMA user_version = %d", OUT__DB_VERSION);
  if (sqlite3_exec(db, db_schema, NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_exec(db, version, NULL, NULL, NULL) != SQLITE_OK)
    goto rollback;
  what = "cannot add the run";
  if (insert_run(db, r, run_id) != SIM_OK) goto rollback;
  ins m = {.run = *run_id};
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO metrics (run_id, name, value) VALUES (?,?,?)",
                         -1, &m.st, NULL) != SQLITE_OK)
    goto rollback;
  out__json_leaves(r->summary, metric_leaf, &m);
  sqlite3_finalize(m.st);
  if (m.failed) goto rollback;
  what = "cannot add the time series";
  if (s && insert_series(db, *run_id, s) != SIM_OK) goto rollback;
  what = "cannot add the events";
  if (insert_events(db, *run_id, t) != SIM_OK) goto rollback;
  what = "cannot add the hot ports";
  if (insert_hot_ports(db, *run_id, t, names, top_ports) != SIM_OK) goto rollback;
  what = "cannot add the flows";
  if (insert_flows(db, *run_id, r->flows, r->t) != SIM_OK) goto rollback;
  what = "cannot commit";
  sim_test_pause("db-commit"); /* tests: kill -9 with the run's rows not yet committed */
  if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) goto rollback;
  sqlite3_close(db);
  return SIM_OK;
rollback:
  rc = out__db_fail(db, err, path, what);
refused:
  sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_close(db);
  return rc;
fail:
  rc = out__db_fail(db, err, path, what);
  sqlite3_close(db);
  return rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

int out_db_read_runs(const char *path, const char *sweep, const int64_t *ids, size_t nids,
                     json_t **out, sim_error *err) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  *out = NULL;
  int rc = out__db_open(path, false, &db, err);
  if (rc != SIM_OK) return rc;
  if ((rc = check_version(db, path, err)) != SIM_OK) goto done;
  const char *sql =
      sweep ? "SELECT run_id, scenario, point, complete, summary_json, output_dir FROM runs "
              "WHERE sweep = ?1 ORDER BY run_id"
            : "SELECT run_id, scenario, point, complete, summary_json, output_dir FROM runs "
              "WHERE ?1 IS NULL OR run_id = ?2 ORDER BY run_id";
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    rc = out__db_fail(db, err, path, "not a fabsim results database");
    goto done;
  }
  json_t *runs = json_array();
  for (size_t k = 0; k < (sweep || nids == 0 ? 1 : nids); k++) {
    sqlite3_reset(st);
    if (sweep) sqlite3_bind_text(st, 1, sweep, -1, SQLITE_STATIC);
    else if (nids) {
      sqlite3_bind_int(st, 1, 1);
      sqlite3_bind_int64(st, 2, ids[k]);
    } else {
      sqlite3_bind_null(st, 1);
    }
    size_t before = json_array_size(runs);
    while (sqlite3_step(st) == SQLITE_ROW) {
      json_t *o = json_object();
      json_object_set_new(o, "run_id", json_integer(sqlite3_column_int64(st, 0)));
      const unsigned char *sc = sqlite3_column_text(st, 1), *pt = sqlite3_column_text(st, 2);
      json_object_set_new(o, "scenario", sc ? json_string((const char *)sc) : json_null());
      json_object_set_new(o, "point", pt ? json_string((const char *)pt) : json_null());
      json_object_set_new(o, "complete", json_boolean(sqlite3_column_int(st, 3)));
      json_t *sum = json_loads((const char *)sqlite3_column_text(st, 4), 0, NULL);
      json_object_set_new(o, "summary", sum ? sum : json_object());
      json_object_set_new(o, "output_dir", json_string((const char *)sqlite3_column_text(st, 5)));
      json_array_append_new(runs, o);
    }
    if (!sweep && nids && json_array_size(runs) == before) {
      json_decref(runs);
      rc = sim_fail(err, SIM_ENOENT, "%s: no run with id %lld", path, (long long)ids[k]);
      goto done;
    }
  }
  *out = runs;
done:
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rc;
}

int out_db_series(const char *path, int64_t run_id, const char *metric, json_t **t_out,
                  json_t **v_out, sim_error *err) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int rc = out__db_open(path, false, &db, err);
  *t_out = json_array();
  *v_out = json_array();
  if (rc != SIM_OK) return rc;
  if (sqlite3_prepare_v2(
          db,
          "SELECT t_s, value FROM timeseries WHERE run_id = ? AND metric = ? AND entity = '' "
          "ORDER BY t_s",
          -1, &st, NULL) != SQLITE_OK) {
    rc = out__db_fail(db, err, path, "not a fabsim results database");
  } else {
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, metric, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
      json_array_append_new(*t_out, json_real(sqlite3_column_double(st, 0)));
      json_array_append_new(*v_out, json_real(sqlite3_column_double(st, 1)));
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rc;
}
