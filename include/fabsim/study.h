/* fabsim study: sweeps and comparisons below the verbs (src/study).
 *
 * A study runs a scenario at several points, each point a `fabsim run` of
 * its own process (at most `parallel` at once), every run into one results
 * database, and hands back the runs in point order. A sweep's points are the
 * cross product of --vary values; a comparison's are scenario files (or runs
 * already in a database). Under mpirun a sweep's points are spread over the
 * ranks and every rank's runs gathered into rank 0's database.
 *
 * Errors come back as sim_error; a study prints nothing. Bad input is
 * SIM_EINVAL (a message to print after the program's name) or SIM_ECONFIG (a
 * scenario check's message, which may begin with its location, "FILE:LINE:COL: "
 * or "--set:N:COL: ", printed as it is then); any other code is a failure.
 * An error reported on another MPI rank comes back with its code and an empty
 * message. Lines for the user while a study goes on (a point that ended, a
 * warning, an error after which the study goes on) reach the caller's hooks.
 */
#ifndef FABSIM_STUDY_H
#define FABSIM_STUDY_H

#include <jansson.h>
#include <sys/types.h>

#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A sweep has at most this many points (the cross product of its --vary lists). */
#define STUDY_MAX_POINTS 10000

/* ---- points ---------------------------------------------------------------------------- */

/* One key a sweep varies and the values it takes, in order. */
typedef struct study_vary {
  char *key;
  char **values;
  size_t n;
} study_vary;

/* Append the --vary argument text ("KEY=V1,V2,..."; blanks around KEY do not
 * count) to list[*n] (grown with sim_realloc). SIM_EINVAL, nothing appended:
 * no '=', no key or no value, an empty value, or a key already varied. */
int study_vary_add(study_vary **list, size_t *n, const char *text, sim_error *err);
void study_vary_free(study_vary *list, size_t n);
/* The number of points, the product of the lists' lengths; 0 above
 * STUDY_MAX_POINTS. */
size_t study_vary_points(const study_vary *list, size_t n);
/* Point p's values as --set texts ("KEY=VALUE", owned by the caller: sim_free
 * each) into sets[0..n), in --vary order, the last --vary varying fastest
 * (point 0: every first value; point 1: the last key's second value ...).
 * label (may be NULL) gets "k1=v1 k2=v2", cut at cap. */
void study_vary_point(const study_vary *list, size_t n, size_t p, char **sets, char *label,
                      size_t cap);

/* One run of a study: `fabsim run ARGS...` into its own output.dir.
 * Public: every field; status and wall_s set when it has ended. */
typedef struct study_point {
  char **args; /* after "run", NULL-terminated (owned) */
  size_t nargs;
  char *dir;   /* its output.dir, absolute (owned) */
  char *label; /* "fabric.routing=adaptive cluster.nodes=64", "rail-roce" (owned) */
  pid_t pid;
  int status;        /* exit status; -1 not run; 128+n killed by signal n */
  double wall_s;     /* wall-clock seconds it ran */
  char *stderr_head; /* a sweep's failed point: the first 10 lines of its
                        stderr.txt, each after two blanks (owned; NULL otherwise) */
} study_point;

void study_point_arg(study_point *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void study_points_free(study_point *points, size_t n);

/* ---- hooks: what the caller hears while a study runs ----------------------------------- */

typedef struct study_hooks {
  void *ctx;
  /* A point ended: the k-th of n to end (its status and wall_s are set). */
  void (*point_end)(void *ctx, const study_point *p, size_t k, size_t n);
  /* A message for the user (as the errors above: SIM_ECONFIG located, other
   * codes after the program's name): a warning, or an error after which the
   * study goes on (a point that could not start, a rank's runs not merged). */
  void (*report)(void *ctx, const sim_error *e);
} study_hooks;

/* The number of processes a study runs at once by default: the CPUs online. */
unsigned study_parallel_default(void);
/* --jobs N: 1..1024, else SIM_EINVAL. */
int study_parallel_parse(const char *text, unsigned *n, sim_error *err);

/* Run the points, at most `parallel` at once, each as `SELF run ARGS...`
 * (self NULL: this process's executable) with FABSIM_SWEEP=study_id,
 * FABSIM_SWEEP_POINT=label and FABSIM_NO_MPI=1 in its environment, stdout
 * discarded, stderr into DIR/stderr.txt. A Ctrl-C, as the caller's signal
 * handler notes it (sim_interrupt_note; installed without SA_RESTART, so
 * that waiting for the points returns), is passed to the running points as
 * SIGINT, which finish their files; no new point starts; *interrupted
 * tells. The pool installs no handler of its own. Returns the number of
 * points that did not exit 0. */
size_t study_points_run(study_point *points, size_t n, unsigned parallel, const char *self,
                        const char *study_id, const study_hooks *h, bool *interrupted);

/* The runs of study_id in the database at db renumbered in the points' order
 * (out_db_order_runs), Ctrl-C held off for the transaction. No database: done. */
int study_order_ids(const char *db, const char *study_id, const study_point *points, size_t n,
                    sim_error *err);
/* The runs of study_id in db (out_db_read_runs items), in point order, each
 * with "label": its point's label; runs of no point are left out. */
int study_collect_runs(const char *db, const char *study_id, const study_point *points, size_t n,
                       json_t **runs, sim_error *err);

/* "sweep-<UTC time>-<pid>": distinct for every invocation. */
void study_make_id(char *buf, size_t n, const char *prefix);
/* path made absolute against the working directory (owned). */
char *study_abspath(const char *path);

/* ---- a sweep --------------------------------------------------------------------------- */

typedef struct study_sweep_args {
  const char *scenario; /* NULL: defaults only */
  const char *const *sets;
  int nsets;
  const study_vary *vary;
  size_t nvary;
  unsigned parallel;   /* points at once (per rank) */
  bool parallel_given; /* else under MPI one per rank */
  const char *out;     /* the sweep's folder, as given */
  const char *db;      /* NULL: OUT/results.sqlite */
  const char *self;    /* the fabsim executable; NULL: this process's */
} study_sweep_args;

typedef struct study_sweep {
  /* public */
  bool idle;           /* begin: this process has nothing to do (a rank other than 0
                          under mpirun of a binary built without MPI) */
  uint32_t rank, size; /* begin: the MPI rank and ranks (0 and 1 without MPI) */
  char id[96];         /* prepare: the sweep id, rank 0's on every rank */
  char *outabs, *db;   /* prepare: the folder and the database, absolute */
  const char **keys;   /* prepare: the keys varied, in --vary order (owned array) */
  size_t nkeys;
  unsigned parallel;   /* prepare: points at once on this rank */
  study_point *points; /* prepare: every point, in point order (statuses from run) */
  size_t npoints;
  size_t failed;    /* run, rank 0: points that did not exit 0 */
  bool interrupted; /* run, rank 0: Ctrl-C (on any rank) */
  size_t errors;    /* run: errors reported through the hooks */
  json_t *runs;     /* run, rank 0: the sweep's runs in point order, labelled (owned) */
  /* private */
  const study_sweep_args *args;
  const study_hooks *hooks;
  bool mpi;       /* MPI initialized here (finalized by end) */
  char *rank_db;  /* where this rank's points write: db on rank 0 */
  char *rank_dir; /* rank > 0: the private folder of rank_db */
  int lock;       /* rank 0 holds the folder while the sweep writes it */
  bool created;
} study_sweep;

/* MPI as the launcher asks (s->idle: nothing to do here). Every step after
 * this one, and study_sweep_end, is called on every rank alike. */
int study_sweep_begin(study_sweep *s, const study_hooks *h, sim_error *err);
/* Count the points, make the paths and the sweep id, build every point and
 * check it on rank 0 with every check its run makes before it simulates
 * (run_check): a bad --vary value is SIM_EINVAL "--vary KEY=VALUE: KEY: ...",
 * another scenario error that only this point's values bring out is
 * SIM_ECONFIG naming "(the sweep's point k1=v1 ...)". Then take the folder
 * (one sweep per folder) and check the database (SIM_EINVAL). Nothing is
 * written before every point passed. a and h must outlive the sweep. */
int study_sweep_prepare(study_sweep *s, const study_sweep_args *a, sim_error *err);
/* This rank's points (r, r + size, ...), every rank's statuses and runs to
 * rank 0 (merged into its database), the run ids in point order and, on rank
 * 0, s->runs, s->failed, s->interrupted and the failed points' stderr_head.
 * Errors after which it goes on are reported (s->errors counts them); an
 * error returned: rank 0 could not read the runs back. */
int study_sweep_run(study_sweep *s, sim_error *err);
/* The end, on every rank: rank 0's exit status (status) to every rank,
 * returned; the folder unlocked, this rank's files and everything freed, MPI
 * finalized. s may be in any state after begin. */
int study_sweep_end(study_sweep *s, int status);

/* ---- a comparison ---------------------------------------------------------------------- */

typedef struct study_compare_args {
  const char *const *files; /* scenarios, run in this order ... */
  int nfiles;
  const char *const *sets; /* ... each with these --set values */
  int nsets;
  unsigned parallel;
  const char *out;    /* the folder of the runs and the report, as given */
  const char *db;     /* instead of files: runs from this database, */
  const int64_t *ids; /* these (nids 0: every run) */
  size_t nids;
  const char *self; /* the fabsim executable; NULL: this process's */
} study_compare_args;

typedef struct study_compare {
  char *outabs;        /* the folder, absolute */
  char *db;            /* the database (files: OUT/results.sqlite) */
  study_point *points; /* files: one per file, in order */
  size_t npoints;
  size_t failed;    /* points that did not exit 0 */
  bool interrupted; /* Ctrl-C */
  size_t errors;    /* errors reported through the hooks */
  json_t *runs;     /* the runs in file (or run id) order, labelled (owned; NULL: none read) */
  size_t nruns;
  char *fidelities; /* runs of different fidelities: "label [fidelity], ..." (each
                       label then names its fidelity); NULL when all alike */
} study_compare;

/* Check every file (run_check, SIM_ECONFIG) before any runs, run them into
 * OUT/1-NAME, OUT/2-NAME, ... and read the runs back labelled by file name;
 * or read a database's runs (SIM_EINVAL: not a readable results database;
 * SIM_ECONFIG: no run of an id given), labelled "run ID: POINT-or-NAME",
 * in the order of the ids given (none: run id order). A run's failure
 * is in c->failed and the points' statuses, not an error. Then the labels
 * name the fidelities if the runs differ in fidelity (c->fidelities). */
int study_compare_run(study_compare *c, const study_compare_args *a, const study_hooks *h,
                      sim_error *err);
void study_compare_free(study_compare *c);

#ifdef __cplusplus
}
#endif
#endif
