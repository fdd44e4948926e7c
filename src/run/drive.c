/* The training job driven in slices of simulated time (fabsim/run.h): the
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
