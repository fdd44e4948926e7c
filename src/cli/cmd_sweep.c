/* fabsim sweep: the cross product of --vary values, each point a `fabsim
 * run` in its own process (at most --jobs at once), all in one results
 * database; a table, sweep.csv and a comparison report.html at the end.
 *
 * Under mpirun (N ranks) rank r runs points r, r+N, ...; SQLite never sees
 * two machines: rank 0's points write the database itself, every other rank's
 * points write a database of that rank in its node-local TMPDIR, whose bytes
 * travel to rank 0 over MPI and are merged there (one transaction per rank
 * file), after which rank 0 alone prints the table and writes sweep.csv and
 * report.html, exactly as one process would. */
#define _DEFAULT_SOURCE /* mkstemps */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/spawn.h"
#include "fabsim/pdes.h"

static const char sweep_help[] =
    "usage: fabsim sweep [SCENARIO.yaml] [--set KEY=VALUE]... --vary KEY=V1,V2,... [--vary ...]\n"
    "                    [--jobs N] [--out DIR] [--db FILE] [--json] [--quiet]\n"
    "\n"
    "Run the scenario once for every combination of the --vary values (the cross\n"
    "product), each point a separate `fabsim run` process, up to N at a time, and\n"
    "print a table of the headline figures of every point.\n"
    "\n"
    "  SCENARIO.yaml        scenario file (optional: every key has a default)\n"
    "  --set KEY=VALUE      override one key for every point (repeatable)\n"
    "  --vary KEY=V1,V2,... the values one key takes (repeatable; the points are the\n"
    "                       cross product, the last --vary varying fastest)\n"
    "  --jobs N, -j N       points run in parallel (default: the number of CPUs)\n"
    "  --out DIR            where the points go: DIR/point-001/ ... (default fabsim-sweep)\n"
    "  --db FILE            the results database every point is added to\n"
    "                       (default DIR/results.sqlite; may hold earlier runs)\n"
    "  --json               print the points as JSON (run id, point, summary) instead\n"
    "  --quiet, -q          no per-point progress lines on stderr\n"
    "\n"
    "Every value is checked before anything runs: a bad one is reported as\n"
    "'--vary KEY=VALUE: KEY: what is wrong' with exit status 2. Each point writes\n"
    "all the files of `fabsim run` into its folder; DIR/sweep.csv holds the table,\n"
    "DIR/report.html compares the points side by side. In the database the points\n"
    "of one sweep share runs.sweep, and runs.point names the values:\n"
    "  sqlite3 DIR/results.sqlite \"SELECT point, value FROM runs JOIN metrics USING (run_id)\n"
    "                              WHERE name = 'collectives.0.busbw_GBps'\"\n"
    "\n"
    "Under MPI (mpirun -np N fabsim sweep ...) the points are spread over the N\n"
    "ranks (rank r runs points r, r+N, ...; --jobs at a time, default 1 per rank);\n"
    "rank 0 gathers every result into the one database and prints the same table\n"
    "as without MPI. DIR should be on a shared file system for the point folders\n"
    "to be in one place; the database never needs one.\n"
    "\n"
    "Exit status: 0 every point ran, 1 a point failed (its stderr.txt is shown),\n"
    "2 bad input (or DIR in use by another sweep), 130 stopped by Ctrl-C (points\n"
    "finished so far are in the table).\n"
    "\n"
    "Example: fabsim sweep examples/default.yaml --vary fabric.routing=ecmp,adaptive \\\n"
    "           --vary workload.collective.size=64MiB,1GiB --jobs 2\n";

typedef struct vary {
  char *key;
  char **values;
  size_t n;
} vary;

typedef struct sweep_args {
  const char *scenario, *out, *db;
  const char **sets;
  int nsets;
  vary *vary;
  size_t nvary;
  unsigned jobs;
  bool jobs_given;
  bool json, quiet;
} sweep_args;

static void free_args(sweep_args *a) {
  for (size_t i = 0; i < a->nvary; i++) {
    for (size_t k = 0; k < a->vary[i].n; k++) sim_free(a->vary[i].values[k]);
    sim_free(a->vary[i].values);
    sim_free(a->vary[i].key);
  }
  sim_free(a->vary);
  sim_free(a->sets);
}

static int add_vary(sweep_args *a, const char *text) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text || !eq[1]) {
    fprintf(stderr, "fabsim: --vary '%s': write KEY=V1,V2,... (see --help)\n", text);
    return CLI_BAD_INPUT;
  }
  /* the key as --set reads it: blanks around it do not count */
  size_t kb = 0, ke = (size_t)(eq - text);
  while (kb < ke && (text[kb] == ' ' || text[kb] == '\t')) kb++;
  while (ke > kb && (text[ke - 1] == ' ' || text[ke - 1] == '\t')) ke--;
  /* A key varied twice would make points whose two values of it fight
   * (the later --set wins) under two columns labelled alike. */
  for (size_t i = 0; i < a->nvary; i++)
    if (strlen(a->vary[i].key) == ke - kb && !memcmp(a->vary[i].key, text + kb, ke - kb)) {
      fprintf(stderr,
              "fabsim: --vary '%s': %s is varied twice; allowed: each key in one --vary "
              "with all its values, such as --vary %s=",
              text, a->vary[i].key, a->vary[i].key);
      for (size_t k = 0; k < a->vary[i].n; k++) fprintf(stderr, "%s,", a->vary[i].values[k]);
      fprintf(stderr, "%s\n", eq + 1);
      return CLI_BAD_INPUT;
    }
  a->vary = sim_realloc(a->vary, (a->nvary + 1) * sizeof *a->vary);
  vary *v = &a->vary[a->nvary++];
  memset(v, 0, sizeof *v);
  v->key = sim_malloc(ke - kb + 1);
  memcpy(v->key, text + kb, ke - kb);
  v->key[ke - kb] = '\0';
  for (const char *p = eq + 1;;) {
    size_t len = strcspn(p, ",");
    if (len == 0) {
      fprintf(stderr, "fabsim: --vary '%s': an empty value (see --help)\n", text);
      return CLI_BAD_INPUT;
    }
    v->values = sim_realloc(v->values, (v->n + 1) * sizeof *v->values);
    v->values[v->n] = sim_malloc(len + 1);
    memcpy(v->values[v->n], p, len);
    v->values[v->n++][len] = '\0';
    if (!p[len]) break;
    p += len + 1;
  }
  return CLI_OK;
}

static int parse(sweep_args *a, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  a->sets = sim_calloc((size_t)argc + 1, sizeof *a->sets);
  a->out = "fabsim-sweep";
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  a->jobs = cpus > 0 ? (unsigned)cpus : 1;
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    bool next = i + 1 < argc;
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
      fputs(sweep_help, stdout);
      return -1;
    } else if ((!strcmp(s, "--set") || !strcmp(s, "-s")) && next) {
      a->sets[a->nsets++] = argv[++i];
    } else if (!strncmp(s, "--set=", 6)) {
      a->sets[a->nsets++] = s + 6;
    } else if (!strcmp(s, "--vary") && next) {
      if (add_vary(a, argv[++i]) != CLI_OK) return CLI_BAD_INPUT;
    } else if (!strncmp(s, "--vary=", 7)) {
      if (add_vary(a, s + 7) != CLI_OK) return CLI_BAD_INPUT;
    } else if ((!strcmp(s, "--jobs") || !strcmp(s, "-j")) && next) {
      char *end;
      long j = strtol(argv[++i], &end, 10);
      if (*end || j < 1 || j > 1024) {
        fprintf(stderr, "fabsim: --jobs '%s': a number of processes, 1..1024\n", argv[i]);
        return CLI_BAD_INPUT;
      }
      a->jobs = (unsigned)j;
      a->jobs_given = true;
    } else if (!strcmp(s, "--out") && next) {
      a->out = argv[++i];
    } else if (!strcmp(s, "--db") && next) {
      a->db = argv[++i];
    } else if (!strcmp(s, "--json")) {
      a->json = true;
    } else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
      a->quiet = true;
    } else if (s[0] == '-' && s[1]) {
      fprintf(stderr, "fabsim: %s '%s' (see --help)\n",
              next || strchr("sj", s[1]) == NULL ? "unknown option" : "a value is missing after",
              s);
      return CLI_BAD_INPUT;
    } else if (!a->scenario) {
      a->scenario = s;
    } else {
      fprintf(stderr, "fabsim: one scenario file only; '%s' is a second (see --help)\n", s);
      return CLI_BAD_INPUT;
    }
  }
  if (a->nvary == 0) {
    fprintf(stderr, "fabsim: sweep needs at least one --vary KEY=V1,V2,... (see --help)\n");
    return CLI_BAD_INPUT;
  }
  return CLI_OK;
}

/* Check one point in-process (scenario and topology), as its run will. */
static int check_point(const sweep_args *a, const char **sets, int nsets) {
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_error err = {0};
  int rc = cfg_load(&cfg, &doc, a->scenario, sets, nsets, &err);
  if (rc == SIM_OK) {
    rc = topo_build(&t, &cfg, doc, &err);
    if (t) topo_free(t);
    cfg_free(&cfg, doc);
  }
  if (rc == SIM_OK) return CLI_OK;
  int line = 0, col = 0, used = 0;
  /* "--set:N:COL: msg": N past the common --set values is a --vary value. */
  if (sscanf(err.msg, "--set:%d:%d: %n", &line, &col, &used) == 2 && used > 0 && line > a->nsets)
    fprintf(stderr, "fabsim: --vary %s: %s\n", sets[line - 1], err.msg + used);
  else cli_error(err.msg);
  return CLI_BAD_INPUT;
}

/* ---- MPI: the points of other ranks into rank 0's database ------------------------------ */

/* Copy every run of the database file `src` (and its rows in every table
 * keyed by run_id) into `dst`, with new run ids, in one transaction; in the
 * runs' text columns the path src_name (where the runs were written) becomes
 * dst. The tables are read from src's schema, so columns added later follow. */
static int merge_db(const char *dst, const char *src, const char *src_name, sim_error *err) {
  sqlite3 *db = NULL;
  sqlite3_stmt *runs = NULL, *tabs = NULL;
  char **tables = NULL, **cols = NULL;
  size_t ntables = 0;
  int rc = SIM_EIO;
  char *q = NULL;
  if (sqlite3_open_v2(dst, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
    goto fail;
  sqlite3_busy_timeout(db, 600000);
  q = sqlite3_mprintf("ATTACH %Q AS r", src);
  if (sqlite3_exec(db, q, NULL, NULL, NULL) != SQLITE_OK) goto fail;
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) goto fail;
  /* A destination without the schema (rank 0 ran nothing yet) takes src's. */
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM main.sqlite_master WHERE name = 'runs'", -1,
                         &tabs, NULL) != SQLITE_OK ||
      sqlite3_step(tabs) != SQLITE_ROW)
    goto fail;
  bool have = sqlite3_column_int(tabs, 0) > 0;
  sqlite3_finalize(tabs);
  tabs = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT type, name, sql FROM r.sqlite_master WHERE sql NOT NULL AND "
                         "name NOT LIKE 'sqlite_%' ORDER BY type = 'index', rowid",
                         -1, &tabs, NULL) != SQLITE_OK)
    goto fail;
  while (sqlite3_step(tabs) == SQLITE_ROW) {
    const char *type = (const char *)sqlite3_column_text(tabs, 0);
    const char *name = (const char *)sqlite3_column_text(tabs, 1);
    if (!have &&
        sqlite3_exec(db, (const char *)sqlite3_column_text(tabs, 2), NULL, NULL, NULL) != SQLITE_OK)
      goto fail;
    if (strcmp(type, "table") || !strcmp(name, "runs")) continue;
    /* The table's columns, run_id replaced by the new id (?1). */
    sqlite3_stmt *info = NULL;
    char *pq = sqlite3_mprintf("PRAGMA r.table_info(%Q)", name);
    int prc = sqlite3_prepare_v2(db, pq, -1, &info, NULL);
    sqlite3_free(pq);
    if (prc != SQLITE_OK) goto fail;
    char *names = sqlite3_mprintf(""), *sel = sqlite3_mprintf("");
    bool keyed = false;
    while (sqlite3_step(info) == SQLITE_ROW) {
      const char *c = (const char *)sqlite3_column_text(info, 1);
      bool id = !strcmp(c, "run_id");
      keyed |= id;
      char *n2 = sqlite3_mprintf("%s%s\"%w\"", names, names[0] ? "," : "", c);
      char *s2 = id ? sqlite3_mprintf("%s%s?1", sel, sel[0] ? "," : "")
                    : sqlite3_mprintf("%s%s\"%w\"", sel, sel[0] ? "," : "", c);
      sqlite3_free(names);
      sqlite3_free(sel);
      names = n2;
      sel = s2;
    }
    sqlite3_finalize(info);
    if (keyed) {
      tables = sim_realloc(tables, (ntables + 1) * sizeof *tables);
      tables[ntables++] =
          sqlite3_mprintf("INSERT INTO main.\"%w\" (%s) SELECT %s FROM r.\"%w\" WHERE run_id = ?2",
                          name, names, sel, name);
    }
    sqlite3_free(names);
    sqlite3_free(sel);
  }
  sqlite3_finalize(tabs);
  tabs = NULL;
  /* runs: every column but run_id. */
  {
    sqlite3_stmt *info = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA r.table_info('runs')", -1, &info, NULL) != SQLITE_OK)
      goto fail;
    char *names = sqlite3_mprintf("");
    while (sqlite3_step(info) == SQLITE_ROW) {
      const char *c = (const char *)sqlite3_column_text(info, 1);
      if (!strcmp(c, "run_id")) continue;
      char *n2 = sqlite3_mprintf("%s%s\"%w\"", names, names[0] ? "," : "", c);
      sqlite3_free(names);
      names = n2;
    }
    sqlite3_finalize(info);
    cols = sim_calloc(1, sizeof *cols);
    cols[0] = sqlite3_mprintf("INSERT INTO main.runs (%s) SELECT %s FROM r.runs WHERE run_id = ?1",
                              names, names);
    sqlite3_free(names);
  }
  /* The path the points recorded, in the copy's text columns. */
  {
    sqlite3_stmt *info = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA r.table_info('runs')", -1, &info, NULL) != SQLITE_OK)
      goto fail;
    while (sqlite3_step(info) == SQLITE_ROW) {
      const char *type = (const char *)sqlite3_column_text(info, 2);
      if (!type || strcmp(type, "TEXT")) continue;
      char *u = sqlite3_mprintf("UPDATE r.runs SET \"%w\" = replace(\"%w\", %Q, %Q)",
                                (const char *)sqlite3_column_text(info, 1),
                                (const char *)sqlite3_column_text(info, 1), src_name, dst);
      int urc = sqlite3_exec(db, u, NULL, NULL, NULL);
      sqlite3_free(u);
      if (urc != SQLITE_OK) {
        sqlite3_finalize(info);
        goto fail;
      }
    }
    sqlite3_finalize(info);
  }
  if (sqlite3_prepare_v2(db, "SELECT run_id FROM r.runs ORDER BY run_id", -1, &runs, NULL) !=
      SQLITE_OK)
    goto fail;
  while (sqlite3_step(runs) == SQLITE_ROW) {
    sqlite3_int64 old = sqlite3_column_int64(runs, 0);
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(db, cols[0], -1, &ins, NULL) != SQLITE_OK) goto fail;
    sqlite3_bind_int64(ins, 1, old);
    int src_rc = sqlite3_step(ins);
    sqlite3_finalize(ins);
    if (src_rc != SQLITE_DONE) goto fail;
    sqlite3_int64 id = sqlite3_last_insert_rowid(db);
    for (size_t t = 0; t < ntables; t++) {
      if (sqlite3_prepare_v2(db, tables[t], -1, &ins, NULL) != SQLITE_OK) goto fail;
      sqlite3_bind_int64(ins, 1, id);
      sqlite3_bind_int64(ins, 2, old);
      src_rc = sqlite3_step(ins);
      sqlite3_finalize(ins);
      if (src_rc != SQLITE_DONE) goto fail;
    }
  }
  if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) goto fail;
  rc = SIM_OK;
  goto out;
fail:
  sim_fail(err, SIM_EIO, "%s: merging the results of %s: %s", dst, src,
           db ? sqlite3_errmsg(db) : "cannot open");
  if (db) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
out:
  sqlite3_finalize(runs);
  sqlite3_finalize(tabs);
  for (size_t t = 0; t < ntables; t++) sqlite3_free(tables[t]);
  sim_free(tables);
  if (cols) sqlite3_free(cols[0]);
  sim_free(cols);
  sqlite3_free(q);
  if (db) {
    sqlite3_exec(db, "DETACH r", NULL, NULL, NULL);
    sqlite3_close(db);
  }
  return rc;
}

/* The whole file (sim_malloc'd, *n bytes), or NULL with *n = 0 if absent. */
static void *file_bytes(const char *path, size_t *n) {
  *n = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, len = 0;
  char *b = sim_malloc(cap);
  for (size_t k; (k = fread(b + len, 1, cap - len, f)) > 0;) {
    len += k;
    if (len == cap) sim_grow((void **)&b, &cap, cap + 1, 1);
  }
  fclose(f);
  *n = len;
  return b;
}

/* Every `from` in the file at path becomes `to` (atomically); absent: nothing. */
static void replace_in_file(const char *path, const char *from, const char *to) {
  size_t n = 0, fl = strlen(from), tl = strlen(to);
  char *b = file_bytes(path, &n);
  if (!b || fl == 0) {
    sim_free(b);
    return;
  }
  size_t cap = n + 1, len = 0;
  char *o = sim_malloc(cap);
  for (size_t i = 0; i < n;) {
    bool hit = i + fl <= n && !memcmp(b + i, from, fl);
    size_t k = hit ? tl : 1;
    sim_grow((void **)&o, &cap, len + k + 1, 1);
    memcpy(o + len, hit ? to : b + i, k);
    len += k;
    i += hit ? fl : 1;
  }
  sim_error err = {0};
  if (sim_write_file_atomic(path, o, len, &err) != SIM_OK) cli_error(err.msg);
  sim_free(o);
  sim_free(b);
}

/* A point of rank r > 0 first wrote its run to the rank's database; its
 * files then name the sweep's database, as a point of rank 0 does. */
static void rename_db_in_point(const cli_job *j, const char *rank_db, const char *db) {
  static const char *const files[] = {"summary.json", "scenario.yaml", "report.html"};
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", j->dir, files[f]);
    replace_in_file(path, rank_db, db);
  }
}

/* After every rank ran its points: rank 0 merges the other ranks' databases
 * (their bytes sent over MPI) into db; the point statuses and wall times of
 * all ranks are gathered into jobs on rank 0. Returns SIM_OK or prints. */
static int gather_points(cli_job *jobs, size_t npoints, const char *rank_db, const char *db,
                         bool *interrupted) {
  uint32_t rank = pdes_comm_rank(), size = pdes_comm_size();
  int rc = SIM_OK;
  /* statuses and wall times of this rank's points, in point order */
  size_t mine = 0;
  for (size_t p = rank; p < npoints; p += size) mine++;
  int64_t *st = sim_calloc(2 * mine + 2, sizeof *st);
  size_t k = 0;
  for (size_t p = rank; p < npoints; p += size, k++) {
    st[2 * k] = jobs[p].status;
    memcpy(&st[2 * k + 1], &jobs[p].wall_s, sizeof(double));
  }
  st[2 * mine] = *interrupted;
  void **parts = NULL;
  size_t *lens = NULL;
  pdes_comm_gather_bytes(st, (2 * mine + 1) * sizeof *st, &parts, &lens);
  if (rank == 0)
    for (uint32_t r = 1; r < size; r++) {
      const int64_t *o = parts[r];
      size_t j = 0;
      for (size_t p = r; p < npoints; p += size, j++) {
        jobs[p].status = (int)o[2 * j];
        memcpy(&jobs[p].wall_s, &o[2 * j + 1], sizeof(double));
      }
      if (o[2 * j]) *interrupted = true;
    }
  for (uint32_t r = 0; parts && r < size; r++) sim_free(parts[r]);
  sim_free(parts);
  sim_free(lens);
  /* the databases of ranks 1.., with their names */
  void **names = NULL;
  size_t *name_lens = NULL;
  pdes_comm_gather_bytes(rank_db, strlen(rank_db) + 1, &names, &name_lens);
  if (rank != 0)
    for (size_t p = rank; p < npoints; p += size) rename_db_in_point(&jobs[p], rank_db, db);
  size_t n = 0;
  void *bytes = rank == 0 ? NULL : file_bytes(rank_db, &n);
  if (rank != 0) unlink(rank_db);
  pdes_comm_gather_bytes(bytes, n, &parts, &lens);
  sim_free(bytes);
  if (rank == 0) {
    for (uint32_t r = 1; r < size; r++) {
      if (lens[r] == 0) continue; /* no point of that rank wrote a run */
      char tmp[4200];
      snprintf(tmp, sizeof tmp, "%s.rank%u.tmp", db, r);
      sim_error err = {0};
      const char *from = names[r];
      if (sim_write_file_atomic(tmp, parts[r], lens[r], &err) != SIM_OK ||
          merge_db(db, tmp, from, &err) != SIM_OK) {
        cli_error(err.msg);
        rc = SIM_EIO;
      }
      unlink(tmp);
    }
  }
  for (uint32_t r = 0; parts && r < size; r++) sim_free(parts[r]);
  sim_free(parts);
  sim_free(lens);
  for (uint32_t r = 0; names && r < size; r++) sim_free(names[r]);
  sim_free(names);
  sim_free(name_lens);
  sim_free(st);
  return rc;
}

int cli_cmd_sweep(int argc, char **argv) {
  sweep_args a;
  cli_job *jobs = NULL, *mine = NULL;
  json_t *runs = NULL;
  char *db = NULL, *outabs = NULL, *rank_db = NULL;
  bool rank_tmp = false; /* rank_db is this rank's temporary database (rank > 0) */
  size_t npoints = 1, nmine = 0;
  int lock = -1; /* rank 0 holds DIR while the sweep writes it */
  bool created = false;
  bool mpi = pdes_comm_built() && pdes_comm_launched();
  uint32_t rank = 0, size = 1;
  if (!pdes_comm_built() && pdes_comm_launched()) {
    /* Under mpirun without MPI built in: rank 0 runs every point, the others stop. */
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = getenv("PMI_RANK");
    if (!r) r = getenv("PMIX_RANK");
    if (r && strtol(r, NULL, 10) != 0) return CLI_OK;
    fprintf(stderr,
            "fabsim: built without MPI: this process runs every point "
            "(install libopenmpi-dev and rebuild to spread them over the ranks)\n");
  }
  if (mpi) {
    sim_error err = {0};
    if (pdes_comm_init(&err) != SIM_OK) {
      cli_error(err.msg);
      return CLI_FAILED;
    }
    rank = pdes_comm_rank();
    size = pdes_comm_size();
  }
  int rc = parse(&a, argc, argv);
  if (rc != CLI_OK) goto out;
  if (size > 1 && !a.jobs_given) a.jobs = 1; /* the ranks are the parallelism */
  for (size_t i = 0; i < a.nvary; i++) {
    npoints *= a.vary[i].n;
    if (npoints > 10000) {
      if (rank == 0) fprintf(stderr, "fabsim: the sweep has more than 10,000 points; split it\n");
      rc = CLI_BAD_INPUT;
      goto out;
    }
  }
  outabs = cli_abspath(a.out);
  db = a.db ? cli_abspath(a.db) : NULL;
  if (!db) {
    size_t n = strlen(outabs) + 32;
    db = sim_malloc(n);
    snprintf(db, n, "%s/results.sqlite", outabs);
  }
  char id[96] = "";
  if (rank == 0) cli_run_id(id, sizeof id, "sweep");
  pdes_comm_bcast(id, sizeof id); /* one sweep id over all ranks */
  /* Rank r's database: node-local, a new file of a name nobody can guess or
   * plant (mkstemps: O_EXCL, mode 0600; a symlink there is not followed);
   * rank 0 learns each rank's name with its bytes (gather_points) to rewrite
   * the paths a point recorded. Removed when gathered, and at every exit
   * (an interrupted sweep gathers too). */
  const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  rank_db = sim_strdup(db);
  if (rank != 0) {
    size_t n = strlen(tmpdir) + strlen(id) + 64;
    sim_free(rank_db);
    rank_db = sim_malloc(n);
    snprintf(rank_db, n, "%s/fabsim-%s-rank%u-XXXXXX.sqlite", tmpdir, id, rank);
    int fd = mkstemps(rank_db, (int)strlen(".sqlite"));
    if (fd < 0) {
      fprintf(stderr,
              "fabsim: rank %u: cannot create a database in %s: %s; allowed: TMPDIR a "
              "folder this user can write\n",
              rank, tmpdir, strerror(errno));
      rank_tmp = false;
      rc = CLI_FAILED;
      goto out;
    }
    close(fd);
    rank_tmp = true;
  }
  jobs = sim_calloc(npoints, sizeof *jobs);
  const char **sets = sim_calloc((size_t)a.nsets + a.nvary + 1, sizeof *sets);
  for (size_t p = 0; p < npoints; p++) {
    cli_job *j = &jobs[p];
    size_t rest = p, lablen = 0;
    char label[2048] = "";
    for (int k = 0; k < a.nsets; k++) sets[k] = a.sets[k];
    for (size_t v = a.nvary; v-- > 0;) { /* the last --vary varies fastest */
      const vary *vy = &a.vary[v];
      size_t idx = rest % vy->n;
      rest /= vy->n;
      size_t n = strlen(vy->key) + strlen(vy->values[idx]) + 2;
      char *kv = sim_malloc(n);
      snprintf(kv, n, "%s=%s", vy->key, vy->values[idx]);
      sets[a.nsets + (int)v] = kv;
    }
    for (size_t v = 0; v < a.nvary; v++)
      lablen += (size_t)snprintf(label + lablen,
                                 sizeof label - (lablen < sizeof label ? lablen : sizeof label),
                                 "%s%s", v ? " " : "", sets[a.nsets + (int)v]);
    /* Rank 0 checks (and reports); the verdict goes to every rank below. */
    if (rank == 0) rc = check_point(&a, sets, a.nsets + (int)a.nvary);
    if (a.scenario) cli_job_arg(j, "%s", a.scenario);
    for (int k = 0; k < a.nsets + (int)a.nvary; k++) cli_job_arg(j, "--set=%s", sets[k]);
    for (size_t v = 0; v < a.nvary; v++) sim_free((void *)sets[a.nsets + (int)v]);
    size_t dl = strlen(outabs) + 32;
    j->dir = sim_malloc(dl);
    snprintf(j->dir, dl, "%s/point-%03zu", outabs, p + 1);
    cli_job_arg(j, "--set=output.dir=%s", j->dir);
    cli_job_arg(j, "--set=output.database=%s", rank_db);
    cli_job_arg(j, "--quiet");
    j->label = sim_strdup(label);
    j->status = -1;
    if (rc != CLI_OK) break;
  }
  sim_free(sets);
  if (size > 1) {
    int32_t verdict = rc;
    pdes_comm_bcast(&verdict, sizeof verdict);
    rc = verdict;
  }
  if (rc != CLI_OK) goto out;
  /* One sweep per DIR: a second one would mix its points, sweep.csv and
   * report.html with ours (each point's folder is locked by its run too). */
  if (rank == 0) {
    sim_error err = {0};
    int lrc = sim_dir_lock(outabs, &lock, &created, &err);
    if (lrc != SIM_OK) {
      fprintf(
          stderr, "fabsim: --out %s: %s%s\n", a.out, err.msg,
          lrc == SIM_EBUSY ? "; give this sweep another --out, or wait for that one to end" : "");
      rc = lrc == SIM_EBUSY ? CLI_BAD_INPUT : CLI_FAILED;
    }
  }
  if (size > 1) {
    int32_t verdict = rc;
    pdes_comm_bcast(&verdict, sizeof verdict);
    rc = verdict;
  }
  if (rc != CLI_OK) goto out;
  if (!a.quiet && rank == 0) {
    if (size > 1)
      fprintf(stderr, "sweep %s: %zu points over %u MPI ranks, %u at a time each, in %s\n", id,
              npoints, size, a.jobs, a.out);
    else fprintf(stderr, "sweep %s: %zu points, %u at a time, in %s\n", id, npoints, a.jobs, a.out);
  }
  /* This rank's points: r, r + size, ... (shallow copies; jobs owns them). */
  mine = sim_calloc(npoints / size + 1, sizeof *mine);
  for (size_t p = rank; p < npoints; p += size) mine[nmine++] = jobs[p];
  bool interrupted = false;
  cli_jobs_run(mine, nmine, a.jobs, id, a.quiet, &interrupted);
  for (size_t p = rank, k = 0; p < npoints; p += size, k++) {
    jobs[p].status = mine[k].status;
    jobs[p].wall_s = mine[k].wall_s;
    jobs[p].pid = mine[k].pid;
  }
  if (size > 1 && gather_points(jobs, npoints, rank_db, db, &interrupted) != SIM_OK)
    rc = CLI_FAILED;
  if (rank != 0) goto out;
  size_t failed = 0;
  for (size_t p = 0; p < npoints; p++) failed += jobs[p].status != 0;
  sim_error err = {0};
  if (out_db_read_runs(db, id, NULL, 0, &runs, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_FAILED;
    goto out;
  }
  /* Table order is point order, whatever order the points finished in. */
  json_t *ordered = json_array();
  for (size_t p = 0; p < npoints; p++)
    for (size_t i = 0; i < json_array_size(runs); i++) {
      json_t *r = json_array_get(runs, i);
      if (!strcmp(json_string_value(json_object_get(r, "output_dir")), jobs[p].dir)) {
        json_object_set_new(r, "label", json_string(jobs[p].label));
        json_array_append(ordered, r);
      }
    }
  json_decref(runs);
  runs = ordered;
  const char **keys = sim_calloc(a.nvary + 1, sizeof *keys);
  for (size_t v = 0; v < a.nvary; v++) keys[v] = a.vary[v].key;
  if (a.json) {
    char *text = out_json_text(runs);
    puts(text);
    free(text);
  } else {
    cli_print_sweep_table(stdout, runs, keys, a.nvary);
  }
  char *csv = cli_sweep_csv(runs, keys, a.nvary), path[4200];
  snprintf(path, sizeof path, "%s/sweep.csv", outabs);
  if (sim_write_file_atomic(path, csv, strlen(csv), &err) != SIM_OK ||
      (json_array_size(runs) && out_compare_report(db, runs, outabs, &err) != SIM_OK)) {
    cli_error(err.msg);
    rc = CLI_FAILED;
  }
  sim_free(csv);
  sim_free(keys);
  if (!a.quiet && rc == CLI_OK)
    fprintf(stderr, "written      %s/: sweep.csv, report.html; database %s\n", a.out, db);
  for (size_t p = 0; p < npoints && failed && !interrupted; p++) {
    if (jobs[p].status == 0) continue;
    char ep[4200];
    snprintf(ep, sizeof ep, "%s/stderr.txt", jobs[p].dir);
    FILE *f = fopen(ep, "r");
    fprintf(stderr, "fabsim: point %zu (%s) failed with exit status %d:\n", p + 1, jobs[p].label,
            jobs[p].status);
    char line[1024];
    for (int k = 0; f && k < 10 && fgets(line, sizeof line, f); k++) fprintf(stderr, "  %s", line);
    if (f) fclose(f);
  }
  if (rc == CLI_OK) rc = interrupted ? CLI_INTERRUPTED : failed ? CLI_FAILED : CLI_OK;
out:
  if (size > 1) { /* every rank exits as rank 0 does */
    int32_t final = rc;
    pdes_comm_bcast(&final, sizeof final);
    rc = final;
  }
  if (rank_tmp) unlink(rank_db); /* (gone already unless the sweep ended early) */
  json_decref(runs);
  sim_free(mine);
  if (jobs) cli_jobs_free(jobs, npoints);
  sim_free(db);
  sim_free(rank_db);
  sim_dir_unlock(lock, outabs, false);
  sim_free(outabs);
  free_args(&a);
  if (mpi) pdes_comm_finalize();
  return rc < 0 ? CLI_OK : rc;
}
