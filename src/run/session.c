/* fabsim run's session: one run from the loaded scenario to the result
 * the edge reports, below the verb (fabsim/run.h, run_session_*). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabsim/pdes.h"
#include "fabsim/run.h"

struct run_session {
  run_session_hooks h;
  run_setup s; /* the scenario, topology, backend, faults, workload and job */
  run_result r;
  char started_at[32]; /* wall clock at the start, UTC */
  bool mpi, rank0, opened;
  const char *stopped_after; /* the phase after the simulation a Ctrl-C stopped, or NULL */
  int lock_fd;               /* output.dir held by this run (sim_dir_lock); -1: not held */
  bool lock_created;         /* the run made the folder */
  double t0;                 /* wall clock at the start */
};

/* err's code normalized for the verb: SIM_ECONFIG (bad input) or SIM_EIO. */
static int fail(sim_error *err, bool bad) {
  err->code = bad ? SIM_ECONFIG : SIM_EIO;
  return err->code;
}

int run_session_new(run_session **out, sim_error *err) {
  run_session *h = sim_calloc(1, sizeof *h);
  *out = h;
  h->r.complete = true;
  h->lock_fd = -1;
  /* Under mpirun every rank runs the session; rank 0 alone speaks and
   * writes. One simulation over the ranks is the packet fidelity on the
   * parallel engine; anything else would be N copies of one run. */
  h->mpi = pdes_comm_launched() && pdes_comm_built();
  if (!h->mpi) return SIM_OK;
  if (pdes_comm_init(err) != SIM_OK) return fail(err, false);
  if (pdes_comm_rank() != 0) { /* quiet: rank 0 says everything */
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) {
      err->msg[0] = '\0';
      return fail(err, false);
    }
  }
  return SIM_OK;
}

/* A warning at the scenario's line of `key` (or without one when the key
 * came from a default or --set), through the warn hook. */
static void warn_at(const run_session *h, const char *key, const char *detail) {
  cfg_loc l = cfg_where(h->s.doc, key);
  char line[4096];
  if (l.line)
    snprintf(line, sizeof line, "%s:%u:%u: warning: %s: %s", l.file, l.line, l.col, key, detail);
  else snprintf(line, sizeof line, "fabsim: warning: %s", detail);
  h->h.warn(h->h.ctx, line);
}

/* Ranks of the MPI job this process was started in by a launcher (1: none). */
static long mpi_ranks(void) {
  sim_launcher l = sim_launcher_get();
  return l.launched ? l.size : 1;
}

/* Take output.dir for this run before anything is simulated: another run
 * writing it, a folder that cannot be made, or an output.database that is
 * not a regular file are refused (bad input, located at the key). */
static int output_lock(run_session *h, sim_error *err) {
  const cfg_scenario *cfg = &h->s.cfg;
  char msg[sizeof err->msg];
  int rc = SIM_OK;
  /* output.database: written at the end; a device, a folder or a file that
   * is not a results database there would fail only after the whole
   * simulation */
  const char *db = NULL;
  if (h->h.check_database(h->h.ctx, cfg, &db, err) != SIM_OK) {
    snprintf(msg, sizeof msg, "%s", err->msg);
    cfg_fail_at(h->s.doc, "output.database", err,
                "%s %s; allowed: a fabsim results database (runs are added to it), a path that "
                "does not exist yet (it is created), or none",
                db, msg);
    rc = SIM_ECONFIG;
  }
  sim_free((void *)db);
  if (rc == SIM_OK) rc = sim_dir_lock(cfg->output.dir, &h->lock_fd, &h->lock_created, err);
  if (rc == SIM_OK) return SIM_OK;
  if (rc != SIM_ECONFIG) {
    snprintf(msg, sizeof msg, "%s", err->msg);
    cfg_fail_at(h->s.doc, "output.dir", err, "%s%s", msg,
                rc == SIM_EBUSY ? "; two runs in one folder would leave a mix of both runs' "
                                  "files. Set output.dir to another folder, or wait for that "
                                  "run to end"
                                : "; allowed: a folder this user can create and write");
  }
  return fail(err, true);
}

int run_session_open(run_session *h, const char *scenario, const char *const *sets, int nsets,
                     const run_session_hooks *hooks, sim_error *err) {
  h->h = *hooks;
  h->t0 = sim_wall_s();
  h->opened = true;
  if (run_setup_load(&h->s, scenario, sets, nsets, err) != SIM_OK) return fail(err, true);
  h->r.w = &h->s.w;
  h->r.jobs = &h->s.jobs;
  h->r.cfg = &h->s.cfg; /* what the edge reads, through the result */
  h->r.t = h->s.t;
  h->r.ports = &h->s.tel.ports;
  h->r.scenario = scenario;
  h->r.sets = sets;
  h->r.nsets = nsets;
  h->rank0 = !h->mpi || pdes_comm_rank() == 0;
  if (h->h.loaded) h->h.loaded(h->h.ctx);
  if (mpi_ranks() > 1 && !be_packet_parallel(&h->s.cfg)) {
    snprintf(err->msg, sizeof err->msg, "%s",
             "run under mpirun with more than one rank runs the packet fidelity on the parallel "
             "engine (simulation.fidelity=packet, simulation.engine=auto or parallel); this "
             "scenario would run as N copies writing one folder. Start one process, or use "
             "mpirun with fabsim sweep to spread the points of a sweep over the ranks");
    return fail(err, true);
  }
  /* before anything is simulated: output.dir, then the run's setup
   * (backend, telemetry tap, faults, workload, job) */
  if (h->rank0 && output_lock(h, err) != SIM_OK) return err->code; /* one run per output.dir */
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(h->started_at, sizeof h->started_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
  h->r.provenance = (run_provenance){.started_at = h->started_at,
                                     .sweep = getenv("FABSIM_SWEEP"),
                                     .point = getenv("FABSIM_SWEEP_POINT")};
  sim_test_pause("setup"); /* tests: output.dir taken, the topology not yet built */
  int rc = run_setup_begin(&h->s, err);
  if (rc != SIM_OK) return fail(err, rc == SIM_ECONFIG);
  static const run_kind of_workload[] = {[CFG_WORKLOAD_COLLECTIVE] = RUN_KIND_COLLECTIVE,
                                         [CFG_WORKLOAD_TRAFFIC] = RUN_KIND_TRAFFIC,
                                         [CFG_WORKLOAD_TRAINING] = RUN_KIND_TRAINING,
                                         [CFG_WORKLOAD_TRACE] = RUN_KIND_TRACE,
                                         [CFG_WORKLOAD_INFERENCE] = RUN_KIND_INFERENCE};
  h->r.kind = h->s.jobs.n ? RUN_KIND_JOBS : of_workload[h->s.cfg.workload.kind]; /* once */
  const char *w = run_reordering_warning(&h->s.cfg, &h->r.log);
  if (w) warn_at(h, "cluster.nic.recovery", w);
  w = run_idle_nic_warning(&h->s.cfg, &h->s.w.plan, h->s.t, &h->r.log);
  if (w) warn_at(h, "workload.collective.channels", w);
  return SIM_OK;
}

/* Every fault at or after the workload's end (`end`) had no effect (but
 * the one that stopped it, when it failed): a "fault-after-end" event each,
 * and a warning located at its faults[i].at. */
static void warn_faults_after_end(run_session *h, simtime_ps end) {
  const cfg_scenario *cfg = &h->s.cfg;
  uint32_t *idx = sim_malloc((cfg->faults.n ? cfg->faults.n : 1) * sizeof *idx);
  const char **detail = sim_malloc((cfg->faults.n ? cfg->faults.n : 1) * sizeof *detail);
  size_t n = run_faults_after_end(cfg, end, h->s.w.failed, &h->r.log, idx, detail);
  for (size_t i = 0; i < n; i++) {
    char key[48];
    snprintf(key, sizeof key, "faults[%u].at", idx[i]);
    warn_at(h, key, detail[i]);
  }
  sim_free(idx);
  sim_free(detail);
}

/* A phase after the simulation stopped by Ctrl-C (rc SIM_EINTR): the run
 * is marked stopped, with an event saying what is missing. */
static void stopped_in(run_session *h, const char *what) {
  h->r.complete = false;
  h->stopped_after = what;
  char detail[300];
  snprintf(detail, sizeof detail, "stopped (Ctrl-C) while %s", what);
  run_event_add(&h->r.log, sim_now(h->s.sim), "job", "stopped", detail);
}

/* The simulation, then what it measured. */
static int simulate(run_session *h, sim_error *err) {
  run_setup *s = &h->s;
  run_result *r = &h->r;
  if (s->training) {
    /* the job drives the simulation itself (and stops it at its end or
     * failure, leaving later events pending), with its own progress line */
    if (run_training_run(&s->tr, &r->log, h->h.progress, &r->complete, err) != SIM_OK)
      return fail(err, err->code == SIM_ECONFIG);
    if (s->tr.warning) {
      char line[4096];
      snprintf(line, sizeof line, "fabsim: warning: %s", s->tr.warning);
      h->h.warn(h->h.ctx, line);
    }
  } else if (s->jobs.n) { /* every job on the one backend from its start time */
    int rc = run_jobs_start(&s->jobs, s->sim, s->be, s->doc, err);
    if (rc == SIM_EINTR) { /* Ctrl-C while jobs were timed alone: none started */
      stopped_in(h, "the jobs' collectives were timed before the run: no job ran");
      h->stopped_after = NULL; /* the simulation itself was stopped, at its start */
    } else if (rc != SIM_OK) {
      return fail(err, err->code == SIM_ECONFIG);
    } else if (run_jobs_training(&s->jobs)) { /* the training jobs drive it, in slices */
      if (run_jobs_run(&s->jobs, s->sim, s->doc, &r->complete, err) != SIM_OK)
        return fail(err, err->code == SIM_ECONFIG);
    } else {
      r->complete = run_drive_sim(s->sim, 0, h->t0, h->h.progress) == SIM_OK;
    }
  } else {
    run_workload_start(&s->w, s->be);
    simtime_ps expected = run_plan_estimate(&s->w.plan, s->t, &s->cfg);
    r->complete =
        run_drive_sim(s->sim, expected, h->t0, h->h.progress) == SIM_OK; /* Ctrl-C: stop */
  }
  sim_ctx *sim = s->sim;
  if (sim_past_horizon(sim, NULL)) { /* no figure: the run could not reach its end */
    sim_horizon_fail(sim, err);
    return fail(err, err->code == SIM_ECONFIG);
  }
  s->be->ops->stats(s->be, &r->net); /* the parallel engine: collectives, then */
  be_port_samples_gather(s->tel.port_samples, sim_now(sim)); /* only rank 0 writes */
  be_parallel_info_get(s->inner, &r->par);
  r->events = sim_events(sim);
  r->sim_time_s = sim_ps_to_s(sim_now(sim));
  if (s->w.inference) r->sim_time_s = s->w.res.time_s; /* its own loop, not the backend's */
  r->wall_s = sim_wall_s() - h->t0;
  if (s->fs) { /* the faults, reroutes and failed transfers into the summary's events */
    flt_sched_finish(s->fs);
    run_fault_log(s->fs, s->faults, s->nfaults, s->training, &r->log);
  }
  run_workload_end(&s->w, sim, &r->net, r->complete, s->training ? s->tr.job : NULL, &r->log);
  if (s->jobs.n) { /* the run's length is the last job's end; then each job alone */
    s->w.res.time_s = sim_ps_to_s(run_jobs_end(&s->jobs, sim));
    int rc = r->complete && !s->w.failed ? run_jobs_alone(&s->jobs, s->doc, s->t, err) : SIM_OK;
    if (rc == SIM_EINTR)
      stopped_in(h, "each job ran alone: the jobs not yet run alone have no slowdown");
    else if (rc != SIM_OK) return fail(err, err->code == SIM_ECONFIG);
    run_jobs_events(&s->jobs, &r->log);
    run_jobs_outcome(&s->jobs, &s->w, &r->log);
  }
  return SIM_OK;
}

/* Rank 0: what the report reads: power, the training report, the faults
 * after the end, the capped log, the telemetry. */
static int measure(run_session *h, sim_error *err) {
  run_setup *s = &h->s;
  run_result *r = &h->r;
  const cfg_scenario *cfg = &s->cfg;
  if (!s->training) {
    r->have_power = true; /* its model is freed at close, also after an error */
    if (run_power_of(&r->power, &r->pm, cfg, s->doc, s->t, s->w.res.time_s, err) != SIM_OK)
      return fail(err, true);
  } else {
    run_training_report(&s->tr, s->fs, &r->log, &r->training);
  }
  if (s->jobs.n) { /* each training job's steps, summarized once */
    r->job_steps = sim_calloc(s->jobs.n, sizeof *r->job_steps);
    for (uint32_t j = 0; j < s->jobs.n; j++)
      if (s->jobs.v[j].train) run_step_stats_of(s->jobs.v[j].train, &r->job_steps[j]);
  }
  if (r->complete) warn_faults_after_end(h, s->training ? sim_now(s->sim) : s->w.exec.end);
  run_flows_collect(&r->flows, s, &r->log);        /* output.flows (before the log is capped) */
  run_events_cap(&r->log, cfg->output.max_events); /* every output reads the capped log */
  sim_test_pause("telemetry"); /* tests: the simulation is over, the replay not begun */
  bool was_complete = r->complete;
  if (run_telemetry_make(&r->tel, s, &r->log, &r->complete, err) != SIM_OK) return fail(err, false);
  if (was_complete && !r->complete) h->stopped_after = "the telemetry was replayed";
  return SIM_OK;
}

int run_session_execute(run_session *h, sim_error *err) {
  int rc = simulate(h, err);
  if (rc == SIM_OK && h->rank0) rc = measure(h, err);
  return rc;
}

bool run_session_reports(const run_session *h) { return h->rank0; }
const run_setup *run_session_setup(const run_session *h) { return &h->s; }
const run_result *run_session_result(const run_session *h) { return &h->r; }
const run_provenance *run_session_provenance(const run_session *h) { return &h->r.provenance; }

run_session_end run_session_outcome(const run_session *h, char *msg, size_t n) {
  const char *dir = h->s.cfg.output.dir;
  msg[0] = '\0';
  if (h->s.w.failed) return RUN_SESSION_JOB_FAILED;
  if (!h->r.complete) {
    if (h->stopped_after)
      snprintf(msg, n,
               "fabsim: stopped (Ctrl-C) after the simulation, while %s; the files in %s are "
               "whole and marked \"complete\": false",
               h->stopped_after, dir);
    else
      snprintf(msg, n,
               "fabsim: stopped at %.6g s of simulated time; the files in %s are whole and "
               "marked \"complete\": false",
               h->r.sim_time_s, dir);
    return RUN_SESSION_STOPPED;
  }
  if (sim_interrupt_pending()) {
    snprintf(msg, n,
             "fabsim: stopped (Ctrl-C) while the files were written; they are whole, in %s, and "
             "cover the whole run",
             dir);
    return RUN_SESSION_STOPPED;
  }
  return RUN_SESSION_DONE;
}

void run_session_close(run_session *h, bool bad_input) {
  if (!h) return;
  run_events_free(&h->r.log);
  if (h->r.have_power) pwr_free(&h->r.pm);
  run_training_result_free(&h->r.training);
  tel_destroy(h->r.tel);
  run_flows_free(&h->r.flows);
  sim_free(h->r.job_steps);
  /* before run_setup_free: it names output.dir; after bad input a folder
   * the run made is removed again, so refused input leaves nothing behind */
  sim_dir_unlock(h->lock_fd, h->s.cfg.output.dir, h->lock_created && bad_input);
  if (h->opened) run_setup_free(&h->s);
  if (h->mpi) pdes_comm_finalize();
  sim_free(h);
}
