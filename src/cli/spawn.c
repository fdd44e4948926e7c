/* Child `fabsim run` processes for sweep and compare, and their tables. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/spawn.h"

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

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
      t0[next++] = wall();
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
      j->wall_s = wall() - t0[i];
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

/* ---- tables ----------------------------------------------------------------------------- */

static void fmt_value(char *buf, size_t n, const json_t *v, const char *unit) {
  if (!json_is_number(v)) {
    snprintf(buf, n, "-");
    return;
  }
  double x = json_number_value(v);
  if (!strcmp(unit, "s")) out_fmt_seconds(buf, n, x);
  else if (!strcmp(unit, "USD")) out_fmt_usd(buf, n, x);
  else if (!strcmp(unit, "b/s")) out_fmt_rate(buf, n, (uint64_t)llround(x));
  else if (!strcmp(unit, "Gb/s")) out_fmt_rate(buf, n, (uint64_t)llround(x * 1e9));
  else if (unit[0]) snprintf(buf, n, "%.4g %s", x, unit);
  else snprintf(buf, n, "%.4g", x);
}

/* Union of the runs' headline figures, in their canonical order. */
static json_t *figures_of(const json_t *runs) {
  json_t *all = json_array();
  for (size_t i = 0; i < json_array_size(runs); i++) {
    json_t *h = out_headline(json_object_get(json_array_get(runs, i), "summary"));
    for (size_t k = 0; k < json_array_size(h); k++) {
      json_t *f = json_array_get(h, k);
      const char *label = json_string_value(json_object_get(f, "label"));
      bool have = false;
      for (size_t m = 0; m < json_array_size(all) && !have; m++)
        have = !strcmp(json_string_value(json_object_get(json_array_get(all, m), "label")), label);
      if (!have) json_array_append(all, f);
    }
    json_decref(h);
  }
  return all;
}

/* A new reference to the figure's value, or NULL. */
static json_t *figure_value(const json_t *run, const char *label) {
  json_t *h = out_headline(json_object_get(run, "summary"));
  json_t *v = NULL;
  for (size_t k = 0; k < json_array_size(h); k++) {
    json_t *f = json_array_get(h, k);
    if (!strcmp(json_string_value(json_object_get(f, "label")), label)) {
      v = json_real(json_number_value(json_object_get(f, "value")));
      break;
    }
  }
  json_decref(h);
  return v;
}

/* The value of key in a point label "k1=v1 k2=v2". */
static void point_value(const char *point, const char *key, char *out, size_t n) {
  size_t kl = strlen(key);
  snprintf(out, n, "-");
  for (const char *p = point; p && *p;) {
    while (*p == ' ') p++;
    if (!strncmp(p, key, kl) && p[kl] == '=') {
      size_t l = strcspn(p + kl + 1, " ");
      snprintf(out, n, "%.*s", (int)l, p + kl + 1);
      return;
    }
    p = strchr(p, ' ');
  }
}

void cli_print_sweep_table(FILE *f, const json_t *runs, const char *const *keys, size_t nkeys) {
  json_t *figs = figures_of(runs);
  size_t nf = json_array_size(figs), nr = json_array_size(runs), ncol = 1 + nkeys + nf;
  char ***cell = sim_calloc(nr + 1, sizeof *cell);
  size_t *w = sim_calloc(ncol, sizeof *w);
  for (size_t r = 0; r <= nr; r++) {
    cell[r] = sim_calloc(ncol, sizeof **cell);
    for (size_t c = 0; c < ncol; c++) cell[r][c] = sim_calloc(96, 1);
  }
  snprintf(cell[0][0], 96, "#");
  for (size_t k = 0; k < nkeys; k++) snprintf(cell[0][1 + k], 96, "%s", keys[k]);
  for (size_t k = 0; k < nf; k++) {
    const json_t *fg = json_array_get(figs, k);
    snprintf(cell[0][1 + nkeys + k], 96, "%s", json_string_value(json_object_get(fg, "label")));
  }
  for (size_t r = 0; r < nr; r++) {
    const json_t *run = json_array_get(runs, r);
    const char *point = json_string_value(json_object_get(run, "point"));
    snprintf(cell[r + 1][0], 96, "%zu%s", r + 1,
             json_is_false(json_object_get(run, "complete")) ? "*" : "");
    for (size_t k = 0; k < nkeys; k++) point_value(point, keys[k], cell[r + 1][1 + k], 96);
    for (size_t k = 0; k < nf; k++) {
      const json_t *fg = json_array_get(figs, k);
      json_t *v = figure_value(run, json_string_value(json_object_get(fg, "label")));
      fmt_value(cell[r + 1][1 + nkeys + k], 96, v, json_string_value(json_object_get(fg, "unit")));
      json_decref(v);
    }
  }
  for (size_t r = 0; r <= nr; r++)
    for (size_t c = 0; c < ncol; c++)
      if (strlen(cell[r][c]) > w[c]) w[c] = strlen(cell[r][c]);
  for (size_t r = 0; r <= nr; r++) {
    for (size_t c = 0; c < ncol; c++)
      fprintf(f, c <= nkeys ? "%-*s%s" : "%*s%s", (int)w[c], cell[r][c],
              c + 1 < ncol ? "  " : "\n");
    for (size_t c = 0; c < ncol; c++) sim_free(cell[r][c]);
    sim_free(cell[r]);
  }
  sim_free(cell);
  sim_free(w);
  json_decref(figs);
}

void cli_print_compare_table(FILE *f, const json_t *runs) {
  json_t *figs = figures_of(runs);
  size_t nr = json_array_size(runs), nf = json_array_size(figs);
  size_t wl = 6;
  int wc = 24;
  for (size_t r = 0; r < nr; r++) {
    int l = (int)strlen(json_string_value(json_object_get(json_array_get(runs, r), "label")));
    if (l > wc) wc = l;
  }
  for (size_t k = 0; k < nf; k++) {
    size_t l = strlen(json_string_value(json_object_get(json_array_get(figs, k), "label")));
    if (l > wl) wl = l;
  }
  fprintf(f, "%-*s", (int)wl, "figure");
  for (size_t r = 0; r < nr; r++)
    fprintf(f, "  %*s", wc, json_string_value(json_object_get(json_array_get(runs, r), "label")));
  fprintf(f, "\n");
  for (size_t k = 0; k < nf; k++) {
    const json_t *fg = json_array_get(figs, k);
    const char *label = json_string_value(json_object_get(fg, "label"));
    const char *unit = json_string_value(json_object_get(fg, "unit"));
    fprintf(f, "%-*s", (int)wl, label);
    json_t *base = figure_value(json_array_get(runs, 0), label);
    for (size_t r = 0; r < nr; r++) {
      json_t *v = figure_value(json_array_get(runs, r), label);
      char a[64], cellbuf[96];
      fmt_value(a, sizeof a, v, unit);
      if (r > 0 && json_is_number(v) && json_is_number(base) && json_number_value(base) != 0) {
        double pct =
            (json_number_value(v) - json_number_value(base)) / fabs(json_number_value(base)) * 100;
        snprintf(cellbuf, sizeof cellbuf, "%s (%+.1f%%)", a, pct);
      } else {
        snprintf(cellbuf, sizeof cellbuf, "%s", a);
      }
      fprintf(f, "  %*s", wc, cellbuf);
      json_decref(v);
    }
    json_decref(base);
    fprintf(f, "\n");
  }
  json_decref(figs);
}

char *cli_sweep_csv(const json_t *runs, const char *const *keys, size_t nkeys) {
  json_t *figs = figures_of(runs);
  size_t nf = json_array_size(figs);
  size_t cap = 4096, len = 0;
  char *s = sim_malloc(cap);
#define PUT(...)                                          \
  do {                                                    \
    int m_ = snprintf(NULL, 0, __VA_ARGS__);              \
    sim_grow((void **)&s, &cap, len + (size_t)m_ + 1, 1); \
    snprintf(s + len, cap - len, __VA_ARGS__);            \
    len += (size_t)m_;                                    \
  } while (0)
  PUT("point,complete"); /* no run id: parallel runs end in any order */
  for (size_t k = 0; k < nkeys; k++) PUT(",%s", keys[k]);
  for (size_t k = 0; k < nf; k++) {
    const json_t *fg = json_array_get(figs, k);
    const char *unit = json_string_value(json_object_get(fg, "unit"));
    PUT(",%s%s%s%s", json_string_value(json_object_get(fg, "name")), unit[0] ? " (" : "", unit,
        unit[0] ? ")" : "");
  }
  PUT("\n");
  for (size_t r = 0; r < json_array_size(runs); r++) {
    const json_t *run = json_array_get(runs, r);
    const char *point = json_string_value(json_object_get(run, "point"));
    PUT("%zu,%d", r + 1, json_is_true(json_object_get(run, "complete")));
    for (size_t k = 0; k < nkeys; k++) {
      char v[96];
      point_value(point, keys[k], v, sizeof v);
      PUT(",%s", v);
    }
    for (size_t k = 0; k < nf; k++) {
      json_t *v =
          figure_value(run, json_string_value(json_object_get(json_array_get(figs, k), "label")));
      if (json_is_number(v)) {
        char num[40];
        for (int prec = 6; prec <= 17; prec++) { /* the fewest digits that read back exactly */
          snprintf(num, sizeof num, "%.*g", prec, json_number_value(v));
          if (strtod(num, NULL) == json_number_value(v)) break;
        }
        PUT(",%s", num);
      } else {
        PUT(",");
      }
      json_decref(v);
    }
    PUT("\n");
  }
#undef PUT
  json_decref(figs);
  return s;
}
