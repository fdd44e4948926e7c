/* The progress line, and the one Ctrl-C handler of a run.
 *
 * The run goes in slices of simulated time (ev_run with a bound), sized so
 * that each takes at most about 0.2 s of wall time; between slices the line is
 * redrawn and the stop flag read. A slice is also cut after the event an
 * interrupt came in, or after SIM_RUN_BOUND_S of wall time (sim_set_run_bound):
 * a stop never waits for a slice that holds much of the run. Events run in
 * exactly the order one ev_run(SIM_TIME_MAX) would run them, so results do
 * not depend on slicing.
 * (Under mpirun the ranks slice differently, each by its own clock: the
 * parallel engine's results do not depend on where its runs stop, only its
 * window count does; docs/parallel.md, section 7.2.)
 *
 * The handler (out_interrupt_begin, for the whole of a run: its setup, the
 * simulation, the phases after it, the files) only notes the interrupt
 * (sim_interrupt_note, a sig_atomic_t); every phase reads it at its safe
 * points. A second Ctrl-C restores the default action and re-raises, as
 * users expect. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/ev.h"
#include "output/out_internal.h"

static void on_signal(int sig) {
  if (sim_interrupt_pending()) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  sim_interrupt_note(); /* a co-engine votes on it over its ranks */
}

void out_interrupt_begin(out_interrupt *h) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sim_interrupt_clear();
  sigaction(SIGINT, &sa, &h->old_int);
  sigaction(SIGTERM, &sa, &h->old_term);
}

void out_interrupt_end(const out_interrupt *h) {
  sigaction(SIGINT, &h->old_int, NULL);
  sigaction(SIGTERM, &h->old_term, NULL);
  sim_interrupt_clear();
}

static void fmt_eta(char *buf, size_t n, double s) {
  if (s < 0 || s != s || s > 1e7) {
    snprintf(buf, n, "--");
    return;
  }
  long secs = (long)(s + 0.5);
  if (secs < 60) snprintf(buf, n, "%lds", secs);
  else if (secs < 3600) snprintf(buf, n, "%ldm%02lds", secs / 60, secs % 60);
  else snprintf(buf, n, "%ldh%02ldm", secs / 3600, secs / 60 % 60);
}

static void draw(const out_progress *p, sim_ctx *sim, double now, double rate, bool final) {
  char t[32], eta[32], line[160];
  sim_fmt_seconds(t, sizeof t, sim_ps_to_s(sim_now(sim)));
  double elapsed = now - p->started;
  if (p->expected > 0) {
    double frac = (double)sim_now(sim) / (double)p->expected;
    if (frac > 0.99) frac = final ? 1 : 0.99;
    fmt_eta(eta, sizeof eta, frac > 0 ? elapsed * (1 - frac) / frac : -1);
    snprintf(line, sizeof line, "  sim %s  %3.0f%%  %.3g Mevents/s  ETA %s", t, frac * 100,
             rate / 1e6, eta);
  } else {
    snprintf(line, sizeof line, "  sim %s  %.3g Mevents/s  %.0fs", t, rate / 1e6, elapsed);
  }
  fprintf(stderr, "\r%-72s%s", line, final ? "\r" : "");
  if (final) fprintf(stderr, "%-72s\r", "");
  fflush(stderr);
}

int out_progress_run(sim_ctx *sim, out_progress *p) {
  /* Slices of at most 1/200 of the expected run: growing through an empty
   * stretch must not end in one slice that holds all the work. */
  simtime_ps cap = p->expected ? p->expected / 200 + 1 : SIM_TIME_MAX;
  simtime_ps slice = p->expected ? p->expected / 2000 + 1 : SIM_PS_PER_US;
  double last_draw = sim_wall_s(), rate = 0;
  bool drawn = false, cut = false;
  uint64_t last_events = sim_events(sim);
  simtime_ps ran_to = sim_now(sim); /* ev_run leaves the clock at the last event, not here */
  /* with a co-engine (the parallel packet engine, maybe over MPI ranks) the
   * stop is the one its ranks agreed on, never this process's alone */
  bool co = sim_has_coengine(sim);
  double bound = sim_run_bound(sim);
  sim_set_run_bound(sim, SIM_RUN_BOUND_S); /* a stop is seen after the event it came in */
  while (sim_pending(sim) > 0 && !(co ? sim_co_stopped(sim) : sim_interrupt_pending()) &&
         !sim_past_horizon(sim, NULL)) {
    double t0 = sim_wall_s();
    if (!cut) ran_to = sim_slice_end(sim, ran_to, slice); /* an idle stretch: one slice */
    ev_run(sim, ran_to);
    cut = sim_run_cut(sim); /* the bound ended it first: the slice goes on */
    /* tests: simulated time has advanced (not once a stop is asked for: the
     * test's SIGCONT may have come already) */
    if (sim_now(sim) > 0 && !sim_interrupt_pending()) sim_test_pause("simulate");
    double dt = sim_wall_s() - t0;
    /* Aim at 0.05-0.2 s per slice: grow 4x up to the cap, shrink 4x. */
    if (dt < 0.05) slice = slice > cap / 4 ? cap : slice * 4;
    else if ((cut || dt > 0.2) && slice > 1) slice = slice / 4 + 1;
    double wall = sim_wall_s();
    if (p->show && wall - last_draw >= 0.2) {
      uint64_t ev = sim_events(sim);
      rate = (double)(ev - last_events) / (wall - last_draw);
      last_events = ev;
      last_draw = wall;
      draw(p, sim, wall, rate, false);
      drawn = true;
    }
  }
  bool stopped = co ? sim_co_stopped(sim) : sim_interrupt_pending() && sim_pending(sim) > 0;
  bool past = sim_past_horizon(sim, NULL);
  /* a co-engine's events after the last of this context's (late credits,
   * PFC RESUMEs): its end is known only to itself, on every MPI rank alike */
  if (!stopped && !past && co) {
    ev_run(sim, SIM_TIME_MAX);
    stopped = sim_co_stopped(sim);
  }
  if (drawn) draw(p, sim, sim_wall_s(), rate, true);
  sim_set_run_bound(sim, bound);
  return past ? SIM_ERANGE : stopped ? SIM_EINTR : SIM_OK;
}
