/* Child `fabsim run` processes for sweep and compare. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/spawn.h"

cli_jobs cli_jobs_default(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return (cli_jobs){.n = cpus > 0 ? (unsigned)cpus : 1, .given = false};
}

int cli_take_jobs(void *ctx, const char *opt, const char *value) {
  cli_jobs *j = ctx;
  char *end;
  (void)opt;
  long n = strtol(value, &end, 10);
  if (*end || n < 1 || n > 1024) {
    fprintf(stderr, "fabsim: --jobs '%s': a number of processes, 1..1024\n", value);
    return CLI_BAD_INPUT;
  }
  j->n = (unsigned)n;
  j->given = true;
  return CLI_OK;
}

void cli_job_arg(cli_job *j, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = sim_malloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  j->args = sim_realloc(j->args, (j->nargs + 2) * sizeof *j->args);
  j->args[j->nargs++] = s;
  j->args[j->nargs] = NULL;
}

void cli_jobs_free(cli_job *jobs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < jobs[i].nargs; k++) sim_free(jobs[i].args[k]);
    sim_free(jobs[i].args);
    sim_free(jobs[i].dir);
    sim_free(jobs[i].label);
  }
  sim_free(jobs);
}

void cli_run_id(char *buf, size_t n, const char *prefix) {
  time_t now = time(NULL);
  struct tm tm;
  char ts[32];
  gmtime_r(&now, &tm);
  strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
  snprintf(buf, n, "%s-%s-%ld", prefix, ts, (long)getpid());
}

char *cli_abspath(const char *path) {
  if (path[0] == '/') return sim_strdup(path);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return sim_strdup(path);
  size_t n = strlen(cwd) + strlen(path) + 2;
  char *p = sim_malloc(n);
  snprintf(p, n, "%s/%s", cwd, path);
  return p;
}

/* ---- running ------------------------------------------------------------------------ */

static volatile sig_atomic_t jobs_stop; /* set by SIGINT/SIGTERM only */
static void on_stop(int sig) {
  (void)sig;
  jobs_stop = 1;
}

static pid_t start(cli_job *j, const char *self, const char *sweep_id) {
  sim_error err = {0};
  char errpath[4200];
  if (sim_mkdirs(j->dir, &err) != SIM_OK) {
    fprintf(stderr, "fabsim: %s\n", err.msg);
    return -1;
  }
  snprintf(errpath, sizeof errpath, "%s/stderr.txt", j->dir);
  char **argv = sim_calloc(j->nargs + 3, sizeof *argv);
  argv[0] = (char *)self;
  argv[1] = (char *)"run";
  for (size_t k = 0; k < j->nargs; k++) argv[k + 2] = j->args[k];
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int out = open("/dev/null", O_WRONLY), er = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (out >= 0) dup2(out, STDOUT_FILENO);
    if (er >= 0) dup2(er, STDERR_FILENO);
    setenv("FABSIM_SWEEP", sweep_id, 1);
    setenv("FABSIM_NO_MPI", "1", 1); /* under mpirun the point is not an MPI rank */
    setenv("FABSIM_SWEEP_POINT", j->label, 1);
    execv(self, argv);
    fprintf(stderr, "fabsim: cannot run %s: %s\n", self, strerror(errno));
    _exit(127);
  }
  sim_free(argv);
  return pid;
}

size_t cli_jobs_run(cli_job *jobs, size_t n, unsigned parallel, const char *sweep_id, bool quiet,
                    bool *interrupted) {
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) snprintf(self, sizeof self, "fabsim");
  else self[len] = '\0';
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop; /* no SA_RESTART: waitpid returns EINTR */
  sigemptyset(&sa.sa_mask);
  jobs_stop = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  size_t next = 0, running = 0, finished = 0, failed = 0;
  bool forwarded = false;
  double *t0 = sim_calloc(n ? n : 1, sizeof *t0);
  for (size_t i = 0; i < n; i++) jobs[i].status = -1;
  if (parallel < 1) parallel = 1;
  for (;;) {
    while (!jobs_stop && running < parallel && next < n) {
      cli_job *j = &jobs[next];
      t0[next++] = sim_wall_s();
      j->pid = start(j, self, sweep_id);
      if (j->pid > 0) running++;
      else j->status = 1;
    }
    if (running == 0) break;
    int st;
    pid_t pid = waitpid(-1, &st, 0);
    if (pid < 0) {
      if (errno != EINTR) break;
      if (jobs_stop &&
          !forwarded) { /* a Ctrl-C at the terminal reaches them too; kill -INT may not */
        for (size_t i = 0; i < next; i++)
          if (jobs[i].pid > 0 && jobs[i].status == -1) kill(jobs[i].pid, SIGINT);
        forwarded = true;
      }
      continue;
    }
    for (size_t i = 0; i < next; i++) {
      cli_job *j = &jobs[i];
      if (j->pid != pid) continue;
      j->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      j->wall_s = sim_wall_s() - t0[i];
      running--;
      finished++;
      if (!quiet)
        fprintf(stderr, "[%zu/%zu] %s: %s (%.1f s)\n", finished, n, j->label,
                j->status == 0                 ? "done"
                : j->status == CLI_INTERRUPTED ? "stopped"
                                               : "FAILED",
                j->wall_s);
    }
  }
  for (size_t i = 0; i < n; i++) failed += jobs[i].status != 0;
  *interrupted = jobs_stop != 0;
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  sim_free(t0);
  return failed;
}

int cli_jobs_order_ids(const char *db, const char *sweep_id, const cli_job *jobs, size_t n) {
  const char **dirs = sim_calloc(n + 1, sizeof *dirs);
  for (size_t p = 0; p < n; p++) dirs[p] = jobs[p].dir;
  sigset_t stop, old;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop, &old);
  sim_error err = {0};
  int rc = out_db_order_runs(db, sweep_id, dirs, n, NULL, &err);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (rc != SIM_OK) cli_error(err.msg);
  sim_free(dirs);
  return rc == SIM_OK ? CLI_OK : CLI_FAILED;
}
