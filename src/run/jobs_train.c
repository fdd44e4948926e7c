/* Training jobs of a jobs: list (fabsim/run.h, run_job): each a wl_job over
 * its own GPUs on the run's one backend, started at its start time by an
 * event. The simulation is driven here in slices until every job has
 * ended; the scenario's GPU faults go to the training job that holds the
 * GPU. Alone, each job runs the same steps on a fresh backend of the same
 * fabric, from time 0.
 *
 * Comm model: a job that may meet another on a link runs its collectives
 * live, so two jobs whose transfers cross the same links share them as the
 * fidelity shares any two flows; reuse and symmetric time each collective
 * once, alone on the fabric, and replay that time, which in a shared run
 * would hide exactly the interaction the run is asked to measure, so they
 * are refused there. An isolated job (run_job.isolated: no link in common
 * with any other job) runs exactly as alone, so it keeps the comm model it
 * would have alone; under reuse and symmetric its collectives are timed on a
 * fresh backend of the same fabric before the run (wl_job_measure), and the
 * shared run replays those times from its start. */
#include <string.h>

#include "fabsim/ev.h"
#include "run/run_internal.h"

int run__job_train_begin(const run_jobs *js, run_job *job, run__train_mode mode, const cfg_doc *doc,
                         const topo *t, be_backend *be, const uint32_t *gpus, uint32_t ngpus,
                         sim_error *err) {
  cfg_workload *w = &job->view.workload;
  if (mode == RUN__TRAIN_LIVE) {
    const char *other = job->nshares ? js->v[job->shares[0].job].cfg->name : "?";
    if ((w->comm_model == CFG_COMM_REUSE || w->comm_model == CFG_COMM_SYMMETRIC) &&
        !job->nshares) /* live for the storage traffic on the backend alone */
      return cfg_fail_at(doc, "workload.comm_model", err,
                         "%s times each collective by class, but checkpoint writes or data "
                         "loading on the backend fabric (storage.attach backend) reach every "
                         "job's links, which timed collectives cannot see; allowed here: auto, "
                         "live, or storage.attach separate",
                         cfg_comm_model_name(w->comm_model));
    if (w->comm_model == CFG_COMM_REUSE || w->comm_model == CFG_COMM_SYMMETRIC)
      return cfg_fail_at(doc, "workload.comm_model", err,
                         "%s times each collective by class, but this job may share links with "
                         "job '%s' and the jobs it may meet run live (the packet fidelity, a "
                         "collective or traffic job, or a job set to live among them), which "
                         "timed collectives cannot see; allowed here: auto, live",
                         cfg_comm_model_name(w->comm_model), other);
    w->comm_model = CFG_COMM_LIVE;
  } else if (mode == RUN__TRAIN_TIMED_REUSE) {
    w->comm_model = CFG_COMM_REUSE;
  }
  int rc = wl_job_create_on(&job->train, &job->view, doc, t, be, w->steps, gpus, ngpus, err);
  if (rc == SIM_OK) w->comm_model = wl_job_comm_model(job->train); /* the alone run's too */
  if (rc == SIM_OK)
    rc = wl_check_horizon(&job->view, doc, (double)wl_job_step_compute_ps(job->train), w->steps,
                          "steps", "compute", err);
  return rc;
}

static int measure_alone(wl_job *wj, const run_job *job, const topo *t, const cfg_doc *doc,
                         sim_error *err);

int run__job_train_measure(run_job *job, const topo *t, const cfg_doc *doc, sim_error *err) {
  return measure_alone(job->train, job, t, doc, err);
}

/* Times a job's collectives (reuse, symmetric) on a fresh backend of the
 * fabric, without faults; a no-op under live. */
static int measure_alone(wl_job *wj, const run_job *job, const topo *t, const cfg_doc *doc,
                         sim_error *err) {
  sim_ctx *sim = sim_create(job->view.simulation.seed);
  be_backend *be = NULL;
  int rc = be_create(&be, sim, t, &job->view, doc, err);
  if (rc == SIM_OK) {
    cfg_doc_scope_job(doc, (int)job->cfg->index);
    rc = wl_job_measure(wj, be, doc, err);
    cfg_doc_scope_job(doc, -1);
  }
  be_destroy(be);
  sim_destroy(sim);
  return rc;
}

bool run_jobs_training(const run_jobs *js) {
  for (uint32_t j = 0; j < js->n; j++)
    if (js->v[j].train) return true;
  return false;
}

/* Still to run: a training job not started, with steps left or with a
 * checkpoint still writing; a collective or traffic job not finished. */
static bool job_active(const run_job *job) {
  if (job->train)
    return !job->train_started || wl_job_active(job->train) ||
           (job->ckpt && run_ckpt_busy(job->ckpt));
  if (job->trr) return !trc_runner_done(job->trr) && !trc_runner_failed(job->trr, NULL);
  return !job->exec.finished;
}

static void job_step(void *ctx, uint32_t step, simtime_ps start, simtime_ps end) {
  (void)start;
  run_ckpt_step(ctx, step, end);
}

int run__job_train_storage(run_jobs *js, run_job *job, const cfg_doc *doc, be_backend *be,
                           sim_error *err) {
  const cfg_workload *w = &job->view.workload;
  if (!w->checkpoint.every && !w->data_loading) return SIM_OK;
  int rc = SIM_OK;
  if (job->view.storage.attach == CFG_STORAGE_SEPARATE && !js->storage) {
    js->storage = sim_calloc(1, sizeof *js->storage); /* one storage fabric for all */
    rc = run_storage_begin(js->storage, &job->view, doc, be->sim, err);
  }
  job->ckpt = sim_calloc(1, sizeof *job->ckpt);
  cfg_doc_scope_job(doc, (int)job->cfg->index);
  if (rc == SIM_OK)
    rc = run_ckpt_begin(job->ckpt, &job->view, doc, js->t, be, js->storage, job->train, err);
  cfg_doc_scope_job(doc, -1);
  if (rc == SIM_OK) wl_job_on_step(job->train, job_step, job->ckpt);
  return rc;
}

int run_jobs_run(run_jobs *js, sim_ctx *sim, const cfg_doc *doc, bool *complete, sim_error *err) {
  simtime_ps slice = SIM_PS_PER_US;
  int rc = SIM_OK;
  double bound = sim_run_bound(sim);
  sim_set_run_bound(sim, SIM_RUN_BOUND_S); /* a stop is seen after the event it came in */
  for (; rc == SIM_OK;) {
    bool active = false;
    for (uint32_t j = 0; j < js->n; j++) active |= job_active(&js->v[j]);
    if (!active || sim_interrupt_pending() || sim_pending(sim) == 0) break;
    if (sim_past_horizon(sim, NULL)) {
      rc = sim_horizon_fail(sim, err);
      break;
    }
    double t0 = sim_wall_s();
    simtime_ps until = sim_slice_end(sim, sim_now(sim), slice); /* idle: one slice */
    ev_run(sim, until); /* returns early when a job ends (ev_stop), or for the bound */
    bool cut = sim_run_cut(sim);
    /* each running training job's own checks (horizon, stall) over the slice */
    for (uint32_t j = 0; j < js->n && rc == SIM_OK; j++) {
      run_job *job = &js->v[j];
      if (!job->train || !job->train_started || !wl_job_active(job->train)) continue;
      cfg_doc_scope_job(doc, (int)job->cfg->index);
      rc = wl_job_run_until(job->train, sim_now(sim), doc, err);
      cfg_doc_scope_job(doc, -1);
    }
    if (rc != SIM_OK) break;
    double dt = sim_wall_s() - t0; /* slices of about 0.05-0.2 s: never changes results */
    if (dt < 0.05 && slice < SIM_TIME_MAX / 8) slice *= 4;
    else if ((cut || dt > 0.2) && slice > 1) slice = slice / 4 + 1;
  }
  sim_set_run_bound(sim, bound);
  bool active = false;
  for (uint32_t j = 0; j < js->n; j++) active |= job_active(&js->v[j]);
  *complete = !(sim_interrupt_pending() && active);
  return rc;
}

/* The hooks of the job (training or trace) on GPU `gpu`'s node: the job
 * holds the node's GPUs (jobs take whole nodes). false: no such job.
 * O(jobs + nodes of the job). */
static bool holder(run_jobs *js, uint32_t gpu, flt_gpu_hooks *h) {
  uint32_t node = topo_gpu_node(js->t, gpu);
  for (uint32_t j = 0; j < js->n; j++) {
    run_job *job = &js->v[j];
    if (job->train && wl_job_gpu_stage(job->train, gpu) != WL_NO_STAGE) {
      *h = wl_job_hooks(job->train);
      return true;
    }
    if (!job->trr) continue;
    for (uint32_t i = 0; i < job->nnodes; i++)
      if (job->nodes[i] == node) {
        *h = trc_runner_hooks(job->trr);
        return true;
      }
  }
  return false;
}

static void hook_slowdown(void *ctx, simtime_ps now, uint32_t gpu, double factor) {
  flt_gpu_hooks h;
  if (holder(ctx, gpu, &h) && h.slowdown) h.slowdown(h.ctx, now, gpu, factor);
}

static void hook_fail(void *ctx, simtime_ps now, uint32_t gpu, bool whole_node) {
  flt_gpu_hooks h;
  if (holder(ctx, gpu, &h) && h.fail) h.fail(h.ctx, now, gpu, whole_node);
}

static void hook_sdc(void *ctx, simtime_ps now, uint32_t gpu) {
  flt_gpu_hooks h;
  if (holder(ctx, gpu, &h) && h.sdc) h.sdc(h.ctx, now, gpu); /* traces have no SDC hook */
}

flt_gpu_hooks run_jobs_hooks(run_jobs *js) {
  return (flt_gpu_hooks){.ctx = js, .slowdown = hook_slowdown, .fail = hook_fail, .sdc = hook_sdc};
}

/* The end of a training job's steps: the last step's end, or its stop
 * (`start` when it did nothing). */
static simtime_ps train_end(const wl_job *j, simtime_ps start) {
  simtime_ps at, step_start, end = start;
  uint32_t n = wl_job_steps_done(j);
  if (n) end = wl_job_step(j, n - 1)->end_ps;
  if (wl_job_stopped(j, &at, &step_start) && at > end) end = at;
  return end;
}

/* When its first step started (a job that times its collectives on its own
 * backend does that first), or `start` when none did. */
static simtime_ps train_begin(const wl_job *j, simtime_ps start) {
  return wl_job_steps_done(j) ? wl_job_step(j, 0)->start_ps : start;
}

void run__job_train_end(run_job *job, sim_ctx *sim) {
  simtime_ps start = job->cfg->start;
  bool stopped = wl_job_stopped(job->train, NULL, NULL);
  (void)sim;
  job->finished = job->train_started && !stopped && !wl_job_active(job->train);
  memset(&job->res, 0, sizeof job->res);
  if (job->train_started) job->res.time_s = sim_ps_to_s(train_end(job->train, start) - start);
}

simtime_ps run__job_train_last(const run_job *job) {
  return job->train_started ? train_end(job->train, job->cfg->start) : 0;
}

typedef struct alone_train {
  wl_job *j;
  bool started;
} alone_train;

static void alone_start(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)sim;
  (void)arg;
  alone_train *a = obj;
  sim_error err;
  a->started = wl_job_start(a->j, &err) == SIM_OK; /* live or measured */
}

/* The job alone: its steps from its start on a fresh backend under the
 * same faults (its GPUs' through its hooks), timed as in the shared run. */
int run__job_train_alone(const run_jobs *js, run_job *job, const cfg_doc *doc, const topo *t,
                         sim_error *err) {
  run__alone a;
  alone_train at = {0};
  const wl_parallel *p = wl_job_parallel(job->train);
  int rc = run__alone_begin(&a, js, &job->view, doc, t, err);
  cfg_doc_scope_job(doc, (int)job->cfg->index);
  if (rc == SIM_OK)
    rc = wl_job_create_on(&job->train_alone, &job->view, doc, t, a.be, job->view.workload.steps,
                          p->gpu_map, p->dp * p->tp * p->pp, err);
  cfg_doc_scope_job(doc, -1);
  if (rc == SIM_OK && a.fs) {
    flt_gpu_hooks h = wl_job_hooks(job->train_alone);
    flt_sched_set_hooks(a.fs, &h);
  }
  if (rc == SIM_OK) rc = measure_alone(job->train_alone, job, t, doc, err);
  if (rc == SIM_OK) {
    at.j = job->train_alone;
    ev_schedule(a.sim, job->cfg->start, alone_start, &at, 0); /* after the faults at that time */
    while (!at.started && sim_pending(a.sim)) ev_run(a.sim, job->cfg->start);
    bool complete = true; /* in slices: Ctrl-C stops it (SIM_EINTR, no baseline) */
    cfg_doc_scope_job(doc, (int)job->cfg->index);
    if (at.started)
      rc = run__drive(doc, job->view.workload.steps, job->train_alone, a.sim, "alone:", NULL, 0,
                      &complete, err);
    cfg_doc_scope_job(doc, -1);
    if (rc == SIM_OK && !complete) rc = SIM_EINTR;
  }
  if (rc == SIM_OK && at.started) {
    memset(&job->alone, 0, sizeof job->alone);
    job->alone.time_s = sim_ps_to_s(train_end(job->train_alone, job->cfg->start) -
                                    train_begin(job->train_alone, job->cfg->start));
    job->have_alone = !wl_job_stopped(job->train_alone, NULL, NULL);
  }
  run__alone_end(&a);
  return rc;
}
