/* The simulation driven in slices of simulated time (fabsim/run.h): a
 * training job (run__drive) or any run to its end (run_drive_sim); the
 * caller's progress callback between slices and a clean stop when the
 * caller's signal handler noted an interrupt. No signals, no printing. */

#include "run/run_internal.h"

/* The job in slices of simulated time of about 0.05-0.2 s of wall time
 * each (slicing never changes results): progress->draw between slices (at
 * most every 0.2 s), and an interrupt noted by the caller's signal handler
 * (sim_interrupt_note) stops after the event it came in (sim_set_run_bound;
 * *complete false). */
int run__drive(const cfg_doc *doc, uint32_t steps, wl_job *job, sim_ctx *sim, const char *what,
               const run_progress_fn *progress, simtime_ps expected, bool *complete,
               sim_error *err) {
  simtime_ps slice = SIM_PS_PER_US, horizon = 0;
  double started = sim_wall_s(), last_draw = started;
  uint64_t last_events = sim_events(sim);
  run_progress p = {.what = what, .steps = steps, .expected = expected, .started = started};
  bool show = progress && progress->draw, drawn = false, timing_stopped = false, cut = false;
  int rc = SIM_OK;
  bool co = sim_has_coengine(sim); /* then the stop is the one every rank agreed on */
  double bound = sim_run_bound(sim);
  sim_set_run_bound(sim, SIM_RUN_BOUND_S); /* a stop is seen after the event it came in */
  while (rc == SIM_OK && wl_job_active(job) &&
         !(co ? sim_co_stopped(sim) : sim_interrupt_pending())) {
    double t0 = sim_wall_s();
    if (!cut) horizon = sim_slice_end(sim, horizon, slice); /* an idle stretch: one slice */
    rc = wl_job_run_until(job, horizon, doc, err);
    cut = sim_run_cut(sim); /* the bound ended it first: the slice goes on */
    if (rc == SIM_EINTR) {  /* stopped while its collectives were timed: it never started */
      timing_stopped = true;
      rc = SIM_OK;
      break;
    }
    if (sim_now(sim) > 0) sim_test_pause("simulate"); /* tests: simulated time has advanced */
    double now = sim_wall_s(), dt = now - t0;
    simtime_ps cap = expected ? expected / 200 + 1 : SIM_TIME_MAX / 8;
    if (dt < 0.05) slice = slice > cap / 4 ? cap : slice * 4;
    else if ((cut || dt > 0.2) && slice > 1) slice = slice / 4 + 1;
    if (show && now - last_draw >= 0.2) {
      p.rate = (double)(sim_events(sim) - last_events) / (now - last_draw);
      last_events = sim_events(sim);
      last_draw = now;
      p.now = sim_now(sim);
      p.step = wl_job_steps_done(job) + 1;
      progress->draw(progress->ctx, &p);
      drawn = true;
    }
  }
  if (drawn) {
    p.now = sim_now(sim);
    p.step = wl_job_steps_done(job) + 1;
    p.final = true;
    progress->draw(progress->ctx, &p);
  }
  sim_set_run_bound(sim, bound);
  *complete = !timing_stopped &&
              !((co ? sim_co_stopped(sim) : sim_interrupt_pending()) && wl_job_active(job));
  return rc;
}

int run_drive_sim(sim_ctx *sim, simtime_ps expected, double started,
                  const run_progress_fn *progress) {
  /* Slices of at most 1/200 of the expected run: growing through an empty
   * stretch must not end in one slice that holds all the work. */
  simtime_ps cap = expected ? expected / 200 + 1 : SIM_TIME_MAX;
  simtime_ps slice = expected ? expected / 2000 + 1 : SIM_PS_PER_US;
  double last_draw = sim_wall_s();
  run_progress p = {.expected = expected, .started = started};
  bool show = progress && progress->draw, drawn = false, cut = false;
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
    if (show && wall - last_draw >= 0.2) {
      uint64_t ev = sim_events(sim);
      p.rate = (double)(ev - last_events) / (wall - last_draw);
      last_events = ev;
      last_draw = wall;
      p.now = sim_now(sim);
      p.wall = wall;
      progress->draw(progress->ctx, &p);
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
  if (drawn) {
    p.now = sim_now(sim);
    p.wall = sim_wall_s();
    p.final = true;
    progress->draw(progress->ctx, &p);
  }
  sim_set_run_bound(sim, bound);
  return past ? SIM_ERANGE : stopped ? SIM_EINTR : SIM_OK;
}
