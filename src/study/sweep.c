/* A sweep: the cross product of --vary values, each point a `fabsim run` in
 * its own process (at most `parallel` at once), all in one results database.
 *
 * Under mpirun (N ranks) rank r runs points r, r+N, ...; SQLite never sees
 * two machines: rank 0's points write the database itself, every other rank's
 * points write a database of that rank in a private folder of its node-local
 * TMPDIR, whose bytes travel to rank 0 over MPI and are merged there (one
 * transaction per rank file, each through a new temporary beside the sweep's
 * database), after which rank 0 alone holds the runs, exactly as one process
 * would. No file of the sweep has a name another user could guess or a
 * folder another user could write: the rank's folder is mkdtemp(3)'s (mode
 * 0700, so nothing can be planted beside the database or its SQLite
 * journal), rank 0's temporaries mkstemps(3)'s (O_EXCL, mode 0600, never a
 * file or symlink already there).
 *
 * Run ids: each point appends its run when it ends, so the ids come out in
 * the order the points finished (machine load; under MPI, rank by rank).
 * Once every point has ended (all done, a point failed, or Ctrl-C), rank 0
 * renumbers the sweep's runs in point order in one transaction
 * (study_order_ids): the same sweep gives the same ids, whatever the
 * parallelism, the load or the number of ranks. */
#define _DEFAULT_SOURCE /* mkstemps, mkdtemp */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabsim/out.h"
#include "fabsim/pdes.h"
#include "fabsim/run.h"
#include "fabsim/study.h"

/* An error after which the sweep goes on: to the hooks, counted. */
static void report(study_sweep *s, const sim_error *e) {
  s->errors++;
  if (s->hooks && s->hooks->report) s->hooks->report(s->hooks->ctx, e);
}

/* Every rank takes rank 0's verdict (one rank: rc itself). */
static int agree(const study_sweep *s, int rc) {
  if (s->size <= 1) return rc;
  int32_t verdict = rc;
  pdes_comm_bcast(&verdict, sizeof verdict);
  return verdict;
}

/* An error of rank 0 to every rank: its code (the message stays on rank 0). */
static int agree_error(const study_sweep *s, int rc, sim_error *err) {
  int all = agree(s, rc);
  if (all != SIM_OK && rc == SIM_OK) {
    err->code = all;
    err->msg[0] = '\0';
  }
  return all;
}

/* ---- MPI: the points of other ranks into rank 0's database ------------------------------ */

/* A point of rank r > 0 first wrote its run to the rank's database; its
 * files then name the sweep's database, as a point of rank 0 does. */
static void rename_db_in_point(study_sweep *s, const study_point *p) {
  static const char *const files[] = {"summary.json", "scenario.yaml", "report.html"};
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", p->dir, files[f]);
    sim_error err = {0};
    if (sim_replace_in_file(path, s->rank_db, s->db, &err) != SIM_OK) report(s, &err);
  }
}

/* The statuses and wall times of every rank's points into s->points on rank
 * 0, and whether any rank was interrupted. */
static void gather_statuses(study_sweep *s) {
  uint32_t rank = s->rank, size = s->size;
  size_t npoints = s->npoints, mine = 0;
  for (size_t p = rank; p < npoints; p += size) mine++;
  int64_t *st = sim_calloc(2 * mine + 2, sizeof *st);
  size_t k = 0;
  for (size_t p = rank; p < npoints; p += size, k++) {
    st[2 * k] = s->points[p].status;
    memcpy(&st[2 * k + 1], &s->points[p].wall_s, sizeof(double));
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
        s->points[p].status = (int)o[2 * j];
        memcpy(&s->points[p].wall_s, &o[2 * j + 1], sizeof(double));
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
static void remove_rank_dir(study_sweep *s) {
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
 * into rank 0's; their points' files renamed to it first. */
static void gather_databases(study_sweep *s) {
  uint32_t rank = s->rank, size = s->size;
  void **names = NULL, **parts = NULL;
  size_t *name_lens = NULL, *lens = NULL;
  pdes_comm_gather_bytes(s->rank_db, strlen(s->rank_db) + 1, &names, &name_lens);
  if (rank != 0)
    for (size_t p = rank; p < s->npoints; p += size) rename_db_in_point(s, &s->points[p]);
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
        out_db_merge(s->db, tmp, names[r], NULL, &err) != SIM_OK)
      report(s, &err);
    if (tmp[0]) unlink(tmp);
  }
  for (uint32_t r = 0; parts && r < size; r++) sim_free(parts[r]);
  sim_free(parts);
  sim_free(lens);
  for (uint32_t r = 0; names && r < size; r++) sim_free(names[r]);
  sim_free(names);
  sim_free(name_lens);
}

/* ---- the steps of a sweep ------------------------------------------------------------------ */

int study_sweep_begin(study_sweep *s, const study_hooks *h, sim_error *err) {
  memset(s, 0, sizeof *s);
  s->lock = -1;
  s->hooks = h;
  s->size = 1;
  sim_launcher l = sim_launcher_get();
  s->mpi = pdes_comm_built() && l.launched;
  if (!pdes_comm_built() && l.launched) {
    /* Under mpirun without MPI built in: rank 0 runs every point, the others stop. */
    if (l.rank != 0) {
      s->idle = true;
      return SIM_OK;
    }
    sim_error note;
    sim_fail(&note, SIM_ENOTSUP,
             "built without MPI: this process runs every point (install libopenmpi-dev and "
             "rebuild to spread them over the ranks)");
    if (h && h->report) h->report(h->ctx, &note);
  }
  if (s->mpi) {
    if (pdes_comm_init(err) != SIM_OK) {
      s->mpi = false;
      return err->code == SIM_ECONFIG ? SIM_EIO : err->code;
    }
    s->rank = pdes_comm_rank();
    s->size = pdes_comm_size();
  }
  return SIM_OK;
}

/* The folder, the database and the sweep id; rank r > 0 its own database:
 * node-local, results.sqlite in a new folder of TMPDIR that only this user
 * can enter (mkdtemp: a random name, mode 0700), so that nobody can replace
 * the database, nor plant a symlink where SQLite will create its journal,
 * between its creation and the points' writes; rank 0 learns each rank's
 * name with its bytes (gather_databases) to rewrite the paths a point
 * recorded. */
static int make_paths(study_sweep *s, sim_error *err) {
  const study_sweep_args *a = s->args;
  s->outabs = study_abspath(a->out);
  s->db = a->db ? study_abspath(a->db) : NULL;
  if (!s->db) {
    size_t n = strlen(s->outabs) + 32;
    s->db = sim_malloc(n);
    snprintf(s->db, n, "%s/results.sqlite", s->outabs);
  }
  if (s->rank == 0) study_make_id(s->id, sizeof s->id, "sweep");
  pdes_comm_bcast(s->id, sizeof s->id); /* one sweep id over all ranks */
  s->rank_db = sim_strdup(s->db);
  if (s->rank == 0) return SIM_OK;
  const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  size_t n = strlen(tmpdir) + strlen(s->id) + 64;
  char *dir = sim_malloc(n);
  snprintf(dir, n, "%s/fabsim-%s-rank%u-XXXXXX", tmpdir, s->id, s->rank);
  if (!mkdtemp(dir)) {
    int e = errno;
    sim_free(dir);
    return sim_fail(err, SIM_EIO,
                    "rank %u: cannot create a folder in %s: %s; allowed: TMPDIR a folder this "
                    "user can write",
                    s->rank, tmpdir, strerror(e));
  }
  s->rank_dir = dir;
  sim_free(s->rank_db);
  s->rank_db = sim_malloc(n + 16);
  snprintf(s->rank_db, n + 16, "%s/results.sqlite", dir);
  return SIM_OK;
}

/* Check one point in-process, every check its run makes before the first
 * event (run_check: scenario, topology, backend, output.ports, faults,
 * workload, jobs, training job, power), nothing simulated. An error at a
 * --vary value names it; one elsewhere (the file, a common --set) that only
 * this point's values bring out names the point (`label`). */
static int check_point(const study_sweep_args *a, const char **sets, int nsets, const char *label,
                       sim_error *err) {
  sim_error e = {0};
  if (run_check(a->scenario, sets, nsets, &e) == SIM_OK) return SIM_OK;
  int line = 0, col = 0, used = 0;
  /* "--set:N:COL: msg": N past the common --set values is a --vary value. */
  if (sscanf(e.msg, "--set:%d:%d: %n", &line, &col, &used) == 2 && used > 0 && line > a->nsets)
    return sim_fail(err, SIM_EINVAL, "--vary %s: %s", sets[line - 1], e.msg + used);
  return sim_fail(err, SIM_ECONFIG, "%s (the sweep's point %s)", e.msg, label);
}

/* Every point, each checked on rank 0 before any runs (the verdict goes to
 * every rank). */
static int build_points(study_sweep *s, sim_error *err) {
  const study_sweep_args *a = s->args;
  int rc = SIM_OK, nsets = a->nsets + (int)a->nvary;
  s->points = sim_calloc(s->npoints, sizeof *s->points);
  const char **sets = sim_calloc((size_t)nsets + 1, sizeof *sets);
  for (int k = 0; k < a->nsets; k++) sets[k] = a->sets[k];
  for (size_t p = 0; p < s->npoints && rc == SIM_OK; p++) {
    study_point *pt = &s->points[p];
    char label[2048];
    study_vary_point(a->vary, a->nvary, p, (char **)(sets + a->nsets), label, sizeof label);
    if (s->rank == 0) rc = check_point(a, sets, nsets, label, err);
    if (a->scenario) study_point_arg(pt, "%s", a->scenario);
    for (int k = 0; k < nsets; k++) study_point_arg(pt, "--set=%s", sets[k]);
    for (size_t v = 0; v < a->nvary; v++) sim_free((void *)sets[a->nsets + (int)v]);
    size_t dl = strlen(s->outabs) + 32;
    pt->dir = sim_malloc(dl);
    snprintf(pt->dir, dl, "%s/point-%03zu", s->outabs, p + 1);
    study_point_arg(pt, "--set=output.dir=%s", pt->dir);
    study_point_arg(pt, "--set=output.database=%s", s->rank_db);
    study_point_arg(pt, "--quiet");
    pt->label = sim_strdup(label);
    pt->status = -1;
  }
  sim_free(sets);
  return agree_error(s, rc, err);
}

/* One sweep per folder: a second one would mix its points, sweep.csv and
 * report.html with ours (each point's folder is locked by its run too). */
static int lock_dir(study_sweep *s, sim_error *err) {
  const study_sweep_args *a = s->args;
  int rc = SIM_OK;
  if (s->rank == 0) {
    sim_error e = {0};
    int lrc = sim_dir_lock(s->outabs, &s->lock, &s->created, &e);
    if (lrc != SIM_OK) { /* the folder given is the problem: bad input, as output.dir's */
      rc =
          sim_fail(err, SIM_EINVAL, "--out %s: %s%s", a->out, e.msg,
                   lrc == SIM_EBUSY ? "; give this sweep another --out, or wait for that one to end"
                                    : "; allowed: a folder this user can create and write");
    } else if (out_db_check(s->db, true, &e) != SIM_OK) {
      /* the database every point adds to: one that is not would fail every
       * point, after it ran */
      rc = sim_fail(err, SIM_EINVAL,
                    "--db %s: %s; allowed: a fabsim results database, or a path that does not "
                    "exist yet (it is created)",
                    a->db ? a->db : s->db, e.msg);
      sim_dir_unlock(s->lock, s->outabs, s->created); /* a folder it made goes again */
      s->lock = -1;
    }
  }
  return agree_error(s, rc, err);
}

int study_sweep_prepare(study_sweep *s, const study_sweep_args *a, sim_error *err) {
  s->args = a;
  s->parallel = a->parallel;
  if (s->size > 1 && !a->parallel_given) s->parallel = 1; /* the ranks are the parallelism */
  s->npoints = study_vary_points(a->vary, a->nvary);
  if (s->npoints == 0) {
    sim_fail(err, SIM_EINVAL, "the sweep has more than 10,000 points; split it");
    if (s->rank != 0) err->msg[0] = '\0'; /* said once */
    return SIM_EINVAL;
  }
  s->keys = sim_calloc(a->nvary + 1, sizeof *s->keys);
  for (size_t v = 0; v < a->nvary; v++) s->keys[s->nkeys++] = a->vary[v].key;
  int rc = make_paths(s, err);
  if (rc == SIM_OK) rc = build_points(s, err);
  if (rc == SIM_OK) rc = lock_dir(s, err);
  return rc;
}

/* The first lines of a failed point's stderr.txt, each after two blanks. */
static char *stderr_head(const study_point *p) {
  char path[4200], line[1024];
  snprintf(path, sizeof path, "%s/stderr.txt", p->dir);
  FILE *f = fopen(path, "r");
  size_t len = 0;
  char *head = sim_calloc(1, 1);
  for (int k = 0; f && k < 10 && fgets(line, sizeof line, f); k++) {
    size_t l = strlen(line);
    head = sim_realloc(head, len + l + 3);
    snprintf(head + len, l + 3, "  %s", line);
    len += l + 2;
  }
  if (f) fclose(f);
  return head;
}

int study_sweep_run(study_sweep *s, sim_error *err) {
  uint32_t rank = s->rank, size = s->size;
  /* shallow copies; s->points owns them */
  study_point *mine = sim_calloc(s->npoints / size + 1, sizeof *mine);
  size_t nmine = 0;
  for (size_t p = rank; p < s->npoints; p += size) mine[nmine++] = s->points[p];
  study_points_run(mine, nmine, s->parallel, s->args->self, s->id, s->hooks, &s->interrupted);
  for (size_t p = rank, k = 0; p < s->npoints; p += size, k++) {
    s->points[p].status = mine[k].status;
    s->points[p].wall_s = mine[k].wall_s;
    s->points[p].pid = mine[k].pid;
  }
  sim_free(mine);
  if (size > 1) {
    gather_statuses(s);
    gather_databases(s);
  }
  if (rank != 0) return SIM_OK;
  sim_error e = {0};
  if (study_order_ids(s->db, s->id, s->points, s->npoints, &e) != SIM_OK) report(s, &e);
  for (size_t p = 0; p < s->npoints; p++) {
    s->failed += s->points[p].status != 0;
    if (s->points[p].status != 0) s->points[p].stderr_head = stderr_head(&s->points[p]);
  }
  int rc = study_collect_runs(s->db, s->id, s->points, s->npoints, &s->runs, err);
  return rc == SIM_ECONFIG || rc == SIM_EINVAL ? SIM_EIO : rc;
}

int study_sweep_end(study_sweep *s, int status) {
  if (s->idle) return status;
  status = agree(s, status); /* every rank exits as rank 0 does */
  remove_rank_dir(s);        /* (gone already unless the sweep ended early) */
  study_points_free(s->points, s->npoints);
  s->points = NULL;
  json_decref(s->runs);
  s->runs = NULL;
  sim_free(s->db);
  sim_free(s->rank_db);
  sim_free(s->keys);
  s->keys = NULL;
  sim_dir_unlock(s->lock, s->outabs, false);
  s->lock = -1;
  sim_free(s->outabs);
  s->db = s->rank_db = s->outabs = NULL;
  if (s->mpi) pdes_comm_finalize();
  s->mpi = false;
  return status;
}
