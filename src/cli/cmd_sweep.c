/* fabsim sweep: the cross product of --vary values, each point a `fabsim
 * run` in its own process (at most --jobs at once), all in one results
 * database; a table, sweep.csv and a comparison report.html at the end.
 *
 * Under mpirun (N ranks) rank r runs points r, r+N, ...; SQLite never sees
 * two machines: rank 0's points write the database itself, every other rank's
 * points write a database of that rank in a private folder of its node-local
 * TMPDIR, whose bytes travel to rank 0 over MPI and are merged there (one
 * transaction per rank file, each through a new temporary beside the sweep's
 * database), after which rank 0 alone prints the table and writes sweep.csv
 * and report.html, exactly as one process would. No file of the sweep has a
 * name another user could guess or a folder another user could write: the
 * rank's folder is mkdtemp(3)'s (mode 0700, so nothing can be planted beside
 * the database or its SQLite journal), rank 0's temporaries mkstemps(3)'s
 * (O_EXCL, mode 0600, never a file or symlink already there).
 *
 * Run ids: each point appends its run when it ends, so the ids come out in
 * the order the points finished (machine load; under MPI, rank by rank).
 * Once every point has ended (all done, a point failed, or Ctrl-C), rank 0
 * renumbers the sweep's runs in point order in one transaction
 * (out_db_order_runs, which says why in place rather than merging per-point
 * databases): the same sweep gives the same ids, whatever --jobs, the load
 * or the number of ranks. */
#define _DEFAULT_SOURCE /* mkstemps, mkdtemp */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/spawn.h"
#include "fabsim/run.h"
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
    "Every point is checked before any runs, with every check `fabsim run` makes\n"
    "before it simulates (keys, topology, fault targets, output.ports, the\n"
    "workload's plan, trace files, jobs, the training job, power): a bad value is\n"
    "reported as '--vary KEY=VALUE: KEY: what is wrong' with exit status 2, and\n"
    "nothing is run or written. Each point writes\n"
    "all the files of `fabsim run` into its folder; DIR/sweep.csv holds the table,\n"
    "DIR/report.html compares the points side by side. In the database the points\n"
    "of one sweep share runs.sweep, and runs.point names the values:\n"
    "  sqlite3 DIR/results.sqlite \"SELECT point, value FROM runs JOIN metrics USING (run_id)\n"
    "                              WHERE name = 'collectives.0.busbw_GBps'\"\n"
    "The sweep's run ids follow point order, whichever point finished first: at\n"
    "its end (also after Ctrl-C or a failed point) the sweep renumbers its runs,\n"
    "which take the next ids after those the database held when it began (if\n"
    "another process adds runs to it meanwhile, those keep their ids and the\n"
    "sweep's interleave with them, still in point order).\n"
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
  cli_jobs jobs;
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

static int take_vary(void *ctx, const char *opt, const char *value) {
  (void)opt;
  return add_vary(ctx, value);
}

static int parse(sweep_args *a, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  a->sets = sim_calloc((size_t)argc + 1, sizeof *a->sets);
  a->out = "fabsim-sweep";
  a->jobs = cli_jobs_default();
  int npos = 0;
  const cli_opt opts[] = {
      cli_opt_set(a->sets, &a->nsets),
      {.name = "--vary", .value = true, .inline_value = true, .take = take_vary, .ctx = a},
      {.name = "--jobs", .alias = "-j", .value = true, .take = cli_take_jobs, .ctx = &a->jobs},
      {.name = "--out", .value = true, .last = &a->out},
      {.name = "--db", .value = true, .last = &a->db},
      {.name = "--json", .flag = &a->json},
      {.name = "--quiet", .alias = "-q", .flag = &a->quiet},
  };
  const cli_argv spec = {.opts = opts,
                         .nopts = sizeof opts / sizeof opts[0],
                         .help = sweep_help,
                         .positional = &a->scenario,
                         .npositional = &npos,
                         .max_positional = 1,
                         .too_many = cli_one_scenario,
                         .missing = "fabsim: a value is missing after '%s' (see --help)\n",
                         .missing_short_only = true};
  int rc = cli_argv_parse(&spec, argc, argv);
  if (rc != CLI_OK) return rc;
  if (a->nvary == 0) {
    fprintf(stderr, "fabsim: sweep needs at least one --vary KEY=V1,V2,... (see --help)\n");
    return CLI_BAD_INPUT;
  }
  return CLI_OK;
}

/* Check one point in-process, every check its run makes before the first
 * event (run_check: scenario, topology, backend, output.ports, faults,
 * workload, jobs, training job, power), nothing simulated. An error at a
 * --vary value names it; one elsewhere (the file, a common --set) that only
 * this point's values bring out names the point (`label`). */
static int check_point(const sweep_args *a, const char **sets, int nsets, const char *label) {
  sim_error err = {0};
  if (run_check(a->scenario, sets, nsets, &err) == SIM_OK) return CLI_OK;
  int line = 0, col = 0, used = 0;
  /* "--set:N:COL: msg": N past the common --set values is a --vary value. */
  if (sscanf(err.msg, "--set:%d:%d: %n", &line, &col, &used) == 2 && used > 0 && line > a->nsets)
    fprintf(stderr, "fabsim: --vary %s: %s\n", sets[line - 1], err.msg + used);
  else {
    char msg[sizeof err.msg + 2048];
    snprintf(msg, sizeof msg, "%s (the sweep's point %s)", err.msg, label);
    cli_error(msg);
  }
  return CLI_BAD_INPUT;
}

/* ---- one sweep's state, every rank's ------------------------------------------------------ */

typedef struct sweep_run {
  sweep_args a;
  bool mpi;            /* MPI initialized here (finalized at the end) */
  uint32_t rank, size; /* 0 and 1 without MPI */
  char id[96];         /* the sweep id, rank 0's on every rank */
  char *outabs, *db;   /* --out and the database, absolute */
  char *rank_db;       /* where this rank's points write: db on rank 0 */
  char *rank_dir;      /* rank > 0: the private folder holding rank_db; NULL on rank 0 */
  cli_job *jobs;       /* every point, in point order */
  size_t npoints;
  int lock; /* rank 0 holds DIR while the sweep writes it */
  bool created;
  bool interrupted;
} sweep_run;

/* Every rank takes rank 0's verdict (one rank: rc itself). */
static int agree(const sweep_run *s, int rc) {
  if (s->size <= 1) return rc;
  int32_t verdict = rc;
  pdes_comm_bcast(&verdict, sizeof verdict);
  return verdict;
}

/* ---- MPI: the points of other ranks into rank 0's database ------------------------------ */

/* A point of rank r > 0 first wrote its run to the rank's database; its
 * files then name the sweep's database, as a point of rank 0 does. */
static void rename_db_in_point(const cli_job *j, const char *rank_db, const char *db) {
  static const char *const files[] = {"summary.json", "scenario.yaml", "report.html"};
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", j->dir, files[f]);
    sim_error err = {0};
    if (sim_replace_in_file(path, rank_db, db, &err) != SIM_OK) cli_error(err.msg);
  }
}

/* The statuses and wall times of every rank's points into s->jobs on rank 0,
 * and whether any rank was interrupted. */
static void gather_statuses(sweep_run *s) {
  uint32_t rank = s->rank, size = s->size;
  size_t npoints = s->npoints, mine = 0;
  for (size_t p = rank; p < npoints; p += size) mine++;
  int64_t *st = sim_calloc(2 * mine + 2, sizeof *st);
  size_t k = 0;
  for (size_t p = rank; p < npoints; p += size, k++) {
    st[2 * k] = s->jobs[p].status;
    memcpy(&st[2 * k + 1], &s->jobs[p].wall_s, sizeof(double));
  }
  st[2 * mine] = s->interrupted;
  void **parts = NULL;
  size_t *lens = NULL;
  pdes_comm_gather_bytes(st, (2 * mine + 1) * sizeof *st, &parts, &lens);
  if (rank == 0)
    for (uint32_t r = 1; r < size; r++) {
      const int64_t *o = parts[r];
      size_t j = 0;
      for (size_t p = r; p < npoints; p += size, j++) {
        s->jobs[p].status = (int)o[2 * j];
        memcpy(&s->jobs[p].wall_s, &o[2 * j + 1], sizeof(double));
      }
      if (o[2 * j]) s->interrupted = true;
    }
  for (uint32_t r = 0; parts && r < size; r++) sim_free(parts[r]);
  sim_free(parts);
  sim_free(lens);
  sim_free(st);
}

/* Rank r > 0: its database, SQLite's journals beside it and its private
 * folder, removed (when gathered, and at every exit: an interrupted sweep
 * gathers too). */
static void remove_rank_dir(sweep_run *s) {
  if (!s->rank_dir) return;
  static const char *const suffixes[] = {"", "-journal", "-wal", "-shm"};
  for (size_t k = 0; k < sizeof suffixes / sizeof *suffixes; k++) {
    char path[4200];
    snprintf(path, sizeof path, "%s%s", s->rank_db, suffixes[k]);
    unlink(path);
  }
  rmdir(s->rank_dir);
  sim_free(s->rank_dir);
  s->rank_dir = NULL;
}

/* Rank r's database bytes into a new file beside db, named into tmp (""
 * when none was made): ".NAME.rankR-XXXXXX.sqlite", made by mkstemps
 * (O_EXCL, mode 0600: a file or symlink planted at any name is never opened),
 * so no other writer of the folder can guess, plant or share it. */
static int write_temp_beside(const char *db, uint32_t r, const void *data, size_t len, char *tmp,
                             size_t cap, sim_error *err) {
  const char *slash = strrchr(db, '/');
  int dirlen = slash ? (int)(slash - db) : 0;
  if (snprintf(tmp, cap, "%.*s%s.%s.rank%u-XXXXXX.sqlite", dirlen, db, slash ? "/" : "",
               slash ? slash + 1 : db, r) >= (int)cap) {
    tmp[0] = '\0';
    return sim_fail(err, SIM_EIO, "%s: path too long", db);
  }
  int fd = mkstemps(tmp, (int)strlen(".sqlite"));
  if (fd < 0) {
    int e = errno;
    tmp[0] = '\0';
    return sim_fail(err, SIM_EIO, "%s: cannot create a temporary beside it: %s", db, strerror(e));
  }
  FILE *f = fdopen(fd, "wb");
  bool ok = f && fwrite(data, 1, len, f) == len;
  if (f ? fclose(f) != 0 : close(fd) != 0) ok = false;
  return ok ? SIM_OK : sim_fail(err, SIM_EIO, "%s: write failed: %s", tmp, strerror(errno));
}

/* The databases of ranks 1.. (their bytes and names sent over MPI) merged
 * into rank 0's; their points' files renamed to it first. Prints errors. */
static int gather_databases(sweep_run *s) {
  uint32_t rank = s->rank, size = s->size;
  int rc = SIM_OK;
  void **names = NULL, **parts = NULL;
  size_t *name_lens = NULL, *lens = NULL;
  pdes_comm_gather_bytes(s->rank_db, strlen(s->rank_db) + 1, &names, &name_lens);
  if (rank != 0)
    for (size_t p = rank; p < s->npoints; p += size)
      rename_db_in_point(&s->jobs[p], s->rank_db, s->db);
  size_t n = 0;
  void *bytes = rank == 0 ? NULL : sim_read_file(s->rank_db, &n);
  if (rank != 0) remove_rank_dir(s);
  pdes_comm_gather_bytes(bytes, n, &parts, &lens);
  sim_free(bytes);
  for (uint32_t r = 1; rank == 0 && r < size; r++) {
    if (lens[r] == 0) continue; /* no point of that rank wrote a run */
    char tmp[4200];
    sim_error err = {0};
    if (write_temp_beside(s->db, r, parts[r], lens[r], tmp, sizeof tmp, &err) != SIM_OK ||
        out_db_merge(s->db, tmp, names[r], NULL, &err) != SIM_OK) {
      cli_error(err.msg);
      rc = SIM_EIO;
    }
    if (tmp[0]) unlink(tmp);
  }
  for (uint32_t r = 0; parts && r < size; r++) sim_free(parts[r]);
  sim_free(parts);
  sim_free(lens);
  for (uint32_t r = 0; names && r < size; r++) sim_free(names[r]);
  sim_free(names);
  sim_free(name_lens);
  return rc;
}

/* ---- the steps of a sweep ------------------------------------------------------------------ */

/* MPI as the launcher asks. *skip: this process has nothing to do (a rank
 * other than 0 under mpirun of a binary built without MPI). */
static int start_mpi(sweep_run *s, bool *skip) {
  sim_launcher l = sim_launcher_get();
  s->mpi = pdes_comm_built() && l.launched;
  s->rank = 0;
  s->size = 1;
  *skip = false;
  if (!pdes_comm_built() && l.launched) {
    /* Under mpirun without MPI built in: rank 0 runs every point, the others stop. */
    if (l.rank != 0) {
      *skip = true;
      return CLI_OK;
    }
    fprintf(stderr,
            "fabsim: built without MPI: this process runs every point "
            "(install libopenmpi-dev and rebuild to spread them over the ranks)\n");
  }
  if (s->mpi) {
    sim_error err = {0};
    if (pdes_comm_init(&err) != SIM_OK) {
      cli_error(err.msg);
      return CLI_FAILED;
    }
    s->rank = pdes_comm_rank();
    s->size = pdes_comm_size();
  }
  return CLI_OK;
}

static int count_points(sweep_run *s) {
  if (s->size > 1 && !s->a.jobs.given) s->a.jobs.n = 1; /* the ranks are the parallelism */
  s->npoints = 1;
  for (size_t i = 0; i < s->a.nvary; i++) {
    s->npoints *= s->a.vary[i].n;
    if (s->npoints > 10000) {
      if (s->rank == 0)
        fprintf(stderr, "fabsim: the sweep has more than 10,000 points; split it\n");
      s->npoints = 0;
      return CLI_BAD_INPUT;
    }
  }
  return CLI_OK;
}

/* The folder, the database and the sweep id; rank r > 0 its own database:
 * node-local, results.sqlite in a new folder of TMPDIR that only this user
 * can enter (mkdtemp: a random name, mode 0700), so that nobody can replace
 * the database, nor plant a symlink where SQLite will create its journal,
 * between its creation and the points' writes; rank 0 learns each rank's
 * name with its bytes (gather_databases) to rewrite the paths a point
 * recorded. */
static int make_paths(sweep_run *s) {
  s->outabs = cli_abspath(s->a.out);
  s->db = s->a.db ? cli_abspath(s->a.db) : NULL;
  if (!s->db) {
    size_t n = strlen(s->outabs) + 32;
    s->db = sim_malloc(n);
    snprintf(s->db, n, "%s/results.sqlite", s->outabs);
  }
  if (s->rank == 0) cli_run_id(s->id, sizeof s->id, "sweep");
  pdes_comm_bcast(s->id, sizeof s->id); /* one sweep id over all ranks */
  s->rank_db = sim_strdup(s->db);
  if (s->rank == 0) return CLI_OK;
  const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  size_t n = strlen(tmpdir) + strlen(s->id) + 64;
  char *dir = sim_malloc(n);
  snprintf(dir, n, "%s/fabsim-%s-rank%u-XXXXXX", tmpdir, s->id, s->rank);
  if (!mkdtemp(dir)) {
    fprintf(stderr,
            "fabsim: rank %u: cannot create a folder in %s: %s; allowed: TMPDIR a "
            "folder this user can write\n",
            s->rank, tmpdir, strerror(errno));
    sim_free(dir);
    return CLI_FAILED;
  }
  s->rank_dir = dir;
  sim_free(s->rank_db);
  s->rank_db = sim_malloc(n + 16);
  snprintf(s->rank_db, n + 16, "%s/results.sqlite", dir);
  return CLI_OK;
}

/* Point p's --set values (the common ones, then one per --vary, owned) and
 * its label "k1=v1 k2=v2". */
static void point_sets(const sweep_args *a, size_t p, const char **sets, char *label, size_t n) {
  size_t rest = p, len = 0;
  for (int k = 0; k < a->nsets; k++) sets[k] = a->sets[k];
  for (size_t v = a->nvary; v-- > 0;) { /* the last --vary varies fastest */
    const vary *vy = &a->vary[v];
    size_t idx = rest % vy->n;
    rest /= vy->n;
    size_t kl = strlen(vy->key) + strlen(vy->values[idx]) + 2;
    char *kv = sim_malloc(kl);
    snprintf(kv, kl, "%s=%s", vy->key, vy->values[idx]);
    sets[a->nsets + (int)v] = kv;
  }
  label[0] = '\0';
  for (size_t v = 0; v < a->nvary; v++)
    len += (size_t)snprintf(label + len, n - (len < n ? len : n), "%s%s", v ? " " : "",
                            sets[a->nsets + (int)v]);
}

/* Every point's job, each checked on rank 0 before any runs (the verdict
 * goes to every rank). */
static int build_points(sweep_run *s) {
  const sweep_args *a = &s->a;
  int rc = CLI_OK, nsets = a->nsets + (int)a->nvary;
  s->jobs = sim_calloc(s->npoints, sizeof *s->jobs);
  const char **sets = sim_calloc((size_t)nsets + 1, sizeof *sets);
  for (size_t p = 0; p < s->npoints && rc == CLI_OK; p++) {
    cli_job *j = &s->jobs[p];
    char label[2048];
    point_sets(a, p, sets, label, sizeof label);
    if (s->rank == 0) rc = check_point(a, sets, nsets, label);
    if (a->scenario) cli_job_arg(j, "%s", a->scenario);
    for (int k = 0; k < nsets; k++) cli_job_arg(j, "--set=%s", sets[k]);
    for (size_t v = 0; v < a->nvary; v++) sim_free((void *)sets[a->nsets + (int)v]);
    size_t dl = strlen(s->outabs) + 32;
    j->dir = sim_malloc(dl);
    snprintf(j->dir, dl, "%s/point-%03zu", s->outabs, p + 1);
    cli_job_arg(j, "--set=output.dir=%s", j->dir);
    cli_job_arg(j, "--set=output.database=%s", s->rank_db);
    cli_job_arg(j, "--quiet");
    j->label = sim_strdup(label);
    j->status = -1;
  }
  sim_free(sets);
  return agree(s, rc);
}

/* One sweep per DIR: a second one would mix its points, sweep.csv and
 * report.html with ours (each point's folder is locked by its run too). */
static int lock_dir(sweep_run *s) {
  int rc = CLI_OK;
  if (s->rank == 0) {
    sim_error err = {0};
    int lrc = sim_dir_lock(s->outabs, &s->lock, &s->created, &err);
    if (lrc != SIM_OK) { /* the folder given is the problem: bad input, as output.dir's */
      fprintf(stderr, "fabsim: --out %s: %s%s\n", s->a.out, err.msg,
              lrc == SIM_EBUSY ? "; give this sweep another --out, or wait for that one to end"
                               : "; allowed: a folder this user can create and write");
      rc = CLI_BAD_INPUT;
    } else if (out_db_check(s->db, true, &err) != SIM_OK) {
      /* the database every point adds to: one that is not would fail every
       * point, after it ran */
      fprintf(stderr,
              "fabsim: --db %s: %s; allowed: a fabsim results database, or a path that does "
              "not exist yet (it is created)\n",
              s->a.db ? s->a.db : s->db, err.msg);
      sim_dir_unlock(s->lock, s->outabs, s->created); /* a folder it made goes again */
      s->lock = -1;
      rc = CLI_BAD_INPUT;
    }
  }
  return agree(s, rc);
}

/* This rank's points (r, r + size, ...), then every rank's results to rank 0. */
static int run_points(sweep_run *s) {
  uint32_t rank = s->rank, size = s->size;
  if (!s->a.quiet && rank == 0) {
    if (size > 1)
      fprintf(stderr, "sweep %s: %zu points over %u MPI ranks, %u at a time each, in %s\n", s->id,
              s->npoints, size, s->a.jobs.n, s->a.out);
    else
      fprintf(stderr, "sweep %s: %zu points, %u at a time, in %s\n", s->id, s->npoints, s->a.jobs.n,
              s->a.out);
  }
  /* shallow copies; s->jobs owns them */
  cli_job *mine = sim_calloc(s->npoints / size + 1, sizeof *mine);
  size_t nmine = 0;
  for (size_t p = rank; p < s->npoints; p += size) mine[nmine++] = s->jobs[p];
  cli_jobs_run(mine, nmine, s->a.jobs.n, s->id, s->a.quiet, &s->interrupted);
  for (size_t p = rank, k = 0; p < s->npoints; p += size, k++) {
    s->jobs[p].status = mine[k].status;
    s->jobs[p].wall_s = mine[k].wall_s;
    s->jobs[p].pid = mine[k].pid;
  }
  sim_free(mine);
  if (size == 1) return CLI_OK;
  gather_statuses(s);
  return gather_databases(s) == SIM_OK ? CLI_OK : CLI_FAILED;
}

/* The sweep's runs from the database, in point order (whatever order the
 * points finished in), each labelled with its point. */
static int ordered_runs(const sweep_run *s, json_t **out) {
  sim_error err = {0};
  json_t *runs = NULL;
  *out = NULL;
  if (out_db_read_runs(s->db, s->id, NULL, 0, &runs, &err) != SIM_OK) {
    cli_error(err.msg);
    return CLI_FAILED;
  }
  json_t *ordered = json_array();
  for (size_t p = 0; p < s->npoints; p++)
    for (size_t i = 0; i < json_array_size(runs); i++) {
      json_t *r = json_array_get(runs, i);
      if (!strcmp(json_string_value(json_object_get(r, "output_dir")), s->jobs[p].dir)) {
        json_object_set_new(r, "label", json_string(s->jobs[p].label));
        json_array_append(ordered, r);
      }
    }
  json_decref(runs);
  *out = ordered;
  return CLI_OK;
}

/* The table (or JSON) on stdout, DIR/sweep.csv and DIR/report.html. */
static int print_and_write(const sweep_run *s, const json_t *runs) {
  const sweep_args *a = &s->a;
  sim_error err = {0};
  int rc = CLI_OK;
  const char **keys = sim_calloc(a->nvary + 1, sizeof *keys);
  for (size_t v = 0; v < a->nvary; v++) keys[v] = a->vary[v].key;
  if (a->json) {
    char *text = out_json_text(runs);
    puts(text);
    free(text);
  } else {
    out_sweep_table(stdout, runs, keys, a->nvary);
  }
  char *csv = out_sweep_csv(runs, keys, a->nvary), path[4200];
  snprintf(path, sizeof path, "%s/sweep.csv", s->outabs);
  if (sim_write_file_atomic(path, csv, strlen(csv), &err) != SIM_OK ||
      (json_array_size(runs) && out_compare_report(s->db, runs, s->outabs, &err) != SIM_OK)) {
    cli_error(err.msg);
    rc = CLI_FAILED;
  }
  sim_free(csv);
  sim_free(keys);
  if (!a->quiet && rc == CLI_OK)
    fprintf(stderr, "written      %s/: sweep.csv, report.html; database %s\n", a->out, s->db);
  return rc;
}

/* The first lines of each failed point's stderr.txt. */
static void show_failures(const sweep_run *s) {
  for (size_t p = 0; p < s->npoints; p++) {
    const cli_job *j = &s->jobs[p];
    if (j->status == 0) continue;
    char ep[4200];
    snprintf(ep, sizeof ep, "%s/stderr.txt", j->dir);
    FILE *f = fopen(ep, "r");
    fprintf(stderr, "fabsim: point %zu (%s) failed with exit status %d:\n", p + 1, j->label,
            j->status);
    char line[1024];
    for (int k = 0; f && k < 10 && fgets(line, sizeof line, f); k++) fprintf(stderr, "  %s", line);
    if (f) fclose(f);
  }
}

/* Rank 0 after every point ran: rc so far in, the sweep's exit code out. */
static int report(const sweep_run *s, int rc) {
  size_t failed = 0;
  for (size_t p = 0; p < s->npoints; p++) failed += s->jobs[p].status != 0;
  json_t *runs = NULL;
  if (ordered_runs(s, &runs) != CLI_OK) return CLI_FAILED;
  if (print_and_write(s, runs) != CLI_OK) rc = CLI_FAILED;
  json_decref(runs);
  if (failed && !s->interrupted) show_failures(s);
  if (rc == CLI_OK) rc = s->interrupted ? CLI_INTERRUPTED : failed ? CLI_FAILED : CLI_OK;
  return rc;
}

int cli_cmd_sweep(int argc, char **argv) {
  sweep_run s;
  memset(&s, 0, sizeof s);
  s.lock = -1;
  bool skip = false;
  int rc = start_mpi(&s, &skip);
  if (skip || rc != CLI_OK) return rc;
  rc = parse(&s.a, argc, argv);
  if (rc == CLI_OK) rc = count_points(&s);
  if (rc == CLI_OK) rc = make_paths(&s);
  if (rc == CLI_OK) rc = build_points(&s);
  if (rc == CLI_OK) rc = lock_dir(&s);
  if (rc == CLI_OK) {
    rc = run_points(&s);
    if (s.rank == 0 && cli_jobs_order_ids(s.db, s.id, s.jobs, s.npoints) != CLI_OK) rc = CLI_FAILED;
    if (s.rank == 0) rc = report(&s, rc);
  }
  rc = agree(&s, rc);  /* every rank exits as rank 0 does */
  remove_rank_dir(&s); /* (gone already unless the sweep ended early) */
  if (s.jobs) cli_jobs_free(s.jobs, s.npoints);
  sim_free(s.db);
  sim_free(s.rank_db);
  sim_dir_unlock(s.lock, s.outabs, false);
  sim_free(s.outabs);
  free_args(&s.a);
  if (s.mpi) pdes_comm_finalize();
  return rc < 0 ? CLI_OK : rc;
}
