/* Running `fabsim run` in child processes (sweep, compare) (spawn.c); their
 * tables are printed by the output module (out_sweep_table, out_compare_table). */
#ifndef FABSIM_CLI_SPAWN_H
#define FABSIM_CLI_SPAWN_H

#include <sys/types.h>

#include "cli/cli.h"
#include "fabsim/out.h"

/* One `fabsim run` to make: argv after "run", its output.dir, its label. */
typedef struct cli_job {
  char **args; /* owned, NULL-terminated */
  size_t nargs;
  char *dir;   /* output.dir of the run (owned) */
  char *label; /* "fabric.routing=adaptive cluster.nodes=64" (owned) */
  pid_t pid;
  int status; /* exit code; -1 not run; 128+n killed by signal n */
  double wall_s;
} cli_job;

/* --jobs N of sweep and compare: how many runs at once. */
typedef struct cli_jobs {
  unsigned n; /* default: the number of CPUs */
  bool given; /* on the command line */
} cli_jobs;
cli_jobs cli_jobs_default(void);
/* cli_opt.take for --jobs (ctx: a cli_jobs): 1..1024, else printed, CLI_BAD_INPUT. */
int cli_take_jobs(void *ctx, const char *opt, const char *value);

void cli_job_arg(cli_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_jobs_free(cli_job *jobs, size_t n);

/* Run the jobs, at most `parallel` at once, each as `SELF run ARGS...` with
 * FABSIM_SWEEP=sweep_id and FABSIM_SWEEP_POINT=label in its environment,
 * stdout discarded, stderr to DIR/stderr.txt. Prints "[k/n] label: ..." to
 * stderr as each ends unless quiet. On SIGINT the children (which get it
 * too) finish their files; no new job starts. Returns the number of jobs
 * that did not exit 0; *interrupted tells a Ctrl-C. */
size_t cli_jobs_run(cli_job *jobs, size_t n, unsigned parallel, const char *sweep_id, bool quiet,
                    bool *interrupted);

/* The runs of sweep_id in the database db renumbered in the jobs' order
 * (out_db_order_runs), once every job has ended (under MPI, every rank's
 * runs merged): the runs present, whether all ran, some failed or Ctrl-C
 * stopped the rest. Ctrl-C and SIGTERM wait for the transaction
 * (milliseconds); were the process killed outright, the database would stay
 * whole, its ids in finishing order. Prints an error; CLI_OK or CLI_FAILED. */
int cli_jobs_order_ids(const char *db, const char *sweep_id, const cli_job *jobs, size_t n);

/* "sweep-<time>-<pid>": distinct for every invocation. */
void cli_run_id(char *buf, size_t n, const char *prefix);
/* dir made absolute against the working directory (owned). */
char *cli_abspath(const char *path);

#endif
