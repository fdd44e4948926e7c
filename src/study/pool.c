/* The points of a study as child `fabsim run` processes, and their runs read
 * back from the results database in point order. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabsim/ev.h"
#include "fabsim/out.h"
#include "fabsim/study.h"

static void report(const study_hooks *h, const sim_error *e) {
  if (h && h->report) h->report(h->ctx, e);
}

static pid_t start(study_point *p, const char *self, const char *study_id, const study_hooks *h) {
  sim_error err = {0};
  char errpath[4200];
  if (sim_mkdirs(p->dir, &err) != SIM_OK) {
    err.code = SIM_EIO;
    report(h, &err);
    return -1;
  }
  snprintf(errpath, sizeof errpath, "%s/stderr.txt", p->dir);
  char **argv = sim_calloc(p->nargs + 3, sizeof *argv);
  argv[0] = (char *)self;
  argv[1] = (char *)"run";
  for (size_t k = 0; k < p->nargs; k++) argv[k + 2] = p->args[k];
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int out = open("/dev/null", O_WRONLY), er = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (out >= 0) dup2(out, STDOUT_FILENO);
    if (er >= 0) dup2(er, STDERR_FILENO);
    setenv("FABSIM_SWEEP", study_id, 1);
    setenv("FABSIM_NO_MPI", "1", 1); /* under mpirun the point is not an MPI rank */
    setenv("FABSIM_SWEEP_POINT", p->label, 1);
    execv(self, argv);
    fprintf(stderr, "fabsim: cannot run %s: %s\n", self, strerror(errno));
    _exit(127);
  }
  sim_free(argv);
  return pid;
}

/* Point i of those started ended with wait status st. */
static void ended(study_point *points, size_t next, pid_t pid, int st, const double *t0,
                  size_t *finished, size_t n, const study_hooks *h) {
  for (size_t i = 0; i < next; i++) {
    study_point *p = &points[i];
    if (p->pid != pid) continue;
    p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    p->wall_s = sim_wall_s() - t0[i];
    ++*finished;
    if (h && h->point_end) h->point_end(h->ctx, p, *finished, n);
  }
}

size_t study_points_run(study_point *points, size_t n, unsigned parallel, const char *self,
                        const char *study_id, const study_hooks *h, bool *interrupted) {
  char exe[4096];
  if (!self) {
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) snprintf(exe, sizeof exe, "fabsim");
    else exe[len] = '\0';
    self = exe;
  }
  size_t next = 0, running = 0, finished = 0, failed = 0;
  bool forwarded = false;
  double *t0 = sim_calloc(n ? n : 1, sizeof *t0);
  for (size_t i = 0; i < n; i++) points[i].status = -1;
  if (parallel < 1) parallel = 1;
  for (;;) {
    while (!sim_interrupt_pending() && running < parallel && next < n) {
      study_point *p = &points[next];
      t0[next++] = sim_wall_s();
      p->pid = start(p, self, study_id, h);
      if (p->pid > 0) running++;
      else p->status = 1;
    }
    if (running == 0) break;
    int st;
    pid_t pid = waitpid(-1, &st, 0);
    if (pid < 0) {
      if (errno != EINTR) break;
      if (sim_interrupt_pending() &&
          !forwarded) { /* a Ctrl-C at the terminal reaches them too; kill -INT may not */
        for (size_t i = 0; i < next; i++)
          if (points[i].pid > 0 && points[i].status == -1) kill(points[i].pid, SIGINT);
        forwarded = true;
      }
      continue;
    }
    size_t before = finished;
    ended(points, next, pid, st, t0, &finished, n, h);
    running -= finished - before;
  }
  for (size_t i = 0; i < n; i++) failed += points[i].status != 0;
  *interrupted = sim_interrupt_pending();
  sim_free(t0);
  return failed;
}

int study_order_ids(const char *db, const char *study_id, const study_point *points, size_t n,
                    sim_error *err) {
  const char **dirs = sim_calloc(n + 1, sizeof *dirs);
  for (size_t p = 0; p < n; p++) dirs[p] = points[p].dir;
  sigset_t stop, old;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop, &old);
  int rc = out_db_order_runs(db, study_id, dirs, n, NULL, err);
  sigprocmask(SIG_SETMASK, &old, NULL);
  sim_free(dirs);
  return rc;
}

int study_collect_runs(const char *db, const char *study_id, const study_point *points, size_t n,
                       json_t **runs, sim_error *err) {
  json_t *all = NULL;
  *runs = NULL;
  if (out_db_read_runs(db, study_id, NULL, 0, &all, err) != SIM_OK) return err->code;
  json_t *ordered = json_array();
  for (size_t p = 0; p < n; p++)
    for (size_t i = 0; i < json_array_size(all); i++) {
      json_t *r = json_array_get(all, i);
      if (strcmp(json_string_value(json_object_get(r, "output_dir")), points[p].dir)) continue;
      json_object_set_new(r, "label", json_string(points[p].label));
      json_array_append(ordered, r);
    }
  json_decref(all);
  *runs = ordered;
  return SIM_OK;
}
