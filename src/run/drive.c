/* The training job driven in slices of simulated time, with a progress
 * line on stderr and a clean stop on Ctrl-C (fabsim/run.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/out.h"
#include "run/run_internal.h"

/* ---- driving the job: progress line and Ctrl-C --------------------------------------- */

static volatile sig_atomic_t interrupted; /* the only state a signal handler may touch */

static void on_signal(int sig) {
  if (interrupted) { /* a second Ctrl-C kills at once */
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  interrupted = 1;
  sim_interrupt_note(); /* the parallel engine votes on it over its ranks */
}

static void draw(const run_training *tr, const wl_job *job, sim_ctx *sim, const char *what,
                 simtime_ps expected, double started, double rate, bool final) {
  char t[32], line[160];
  out_fmt_seconds(t, sizeof t, sim_ps_to_s(sim_now(sim)));
  int n = snprintf(line, sizeof line, "  %s sim %s  step %u/%u", what, t,
                   wl_job_steps_done(job) + 1, tr->cfg->workload.steps);
  if (expected > 0 && n > 0 && (size_t)n < sizeof line) {
    double frac = (double)sim_now(sim) / (double)expected, el = out_wall_now() - started;
    if (frac > 0.99) frac = 0.99;
    n += snprintf(line + n, sizeof line - (size_t)n, "  %3.0f%%  ETA %.0fs", frac * 100,
                  frac > 0 ? el * (1 - frac) / frac : 0);
  }
  if (n > 0 && (size_t)n < sizeof line)
    snprintf(line + n, sizeof line - (size_t)n, "  %.3g Mevents/s", rate / 1e6);
  fprintf(stderr, "\r%-72s", final ? "" : line);
  if (final) fprintf(stderr, "\r");
  fflush(stderr);
}

/* The job in slices of simulated time of about 0.05-0.2 s of wall time
 * each (slicing never changes results): the progress line between slices
 * when `show`, and Ctrl-C stops after the current slice (*complete false). */
int run__drive(const run_training *tr, wl_job *job, sim_ctx *sim, const char *what, bool show,
               simtime_ps expected, bool *complete, sim_error *err) {
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  interrupted = 0;
  sim_interrupt_clear();
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  simtime_ps slice = SIM_PS_PER_US, horizon = 0;
  double started = out_wall_now(), last_draw = started, rate = 0;
  uint64_t last_events = sim_events(sim);
  bool drawn = false;
  int rc = SIM_OK;
  bool co = sim_has_coengine(sim); /* then the stop is the one every rank agreed on */
  while (rc == SIM_OK && wl_job_active(job) && !(co ? sim_co_stopped(sim) : interrupted)) {
    double t0 = out_wall_now();
    if (sim_now(sim) > horizon) horizon = sim_now(sim);
    horizon = horizon > SIM_TIME_MAX - slice ? SIM_TIME_MAX : horizon + slice;
    rc = wl_job_run_until(job, horizon, tr->doc, err);
    if (sim_now(sim) > 0) sim_test_pause("simulate"); /* tests: simulated time has advanced */
    double now = out_wall_now(), dt = now - t0;
    simtime_ps cap = expected ? expected / 200 + 1 : SIM_TIME_MAX / 8;
    if (dt < 0.05) slice = slice > cap / 4 ? cap : slice * 4;
    else if (dt > 0.2 && slice > 1) slice = slice / 4 + 1;
    if (show && now - last_draw >= 0.2) {
      rate = (double)(sim_events(sim) - last_events) / (now - last_draw);
      last_events = sim_events(sim);
      last_draw = now;
      draw(tr, job, sim, what, expected, started, rate, false);
      drawn = true;
    }
  }
  if (drawn) draw(tr, job, sim, what, expected, started, rate, true);
  *complete = !((co ? sim_co_stopped(sim) : interrupted) && wl_job_active(job));
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  interrupted = 0;
  sim_interrupt_clear();
  return rc;
}
