/* Training jobs of a jobs: list (fabsim/run.h, run_job): each a wl_job over
 * its own GPUs on the run's one backend, started at its start time by an
 * event, its collectives live, so two jobs whose transfers cross the same
 * links share them as the fidelity shares any two flows. The simulation is
 * driven here in slices until every job has ended; the scenario's GPU
 * faults go to the training job that holds the GPU. Alone, each job runs
 * the same steps on a fresh backend of the same fabric, from time 0.
 *
 * Why live: reuse and symmetric time each collective once, alone on the
 * fabric, and replay that time; in a shared run that is exactly the
 * interaction the run is asked to measure, so they are refused here. */
#include <string.h>

#include "fabsim/ev.h"
#include "run/run_internal.h"

int run__job_train_begin(run_job *job, const cfg_doc *doc, const topo *t, be_backend *be,
                         const uint32_t *gpus, uint32_t ngpus, sim_error *err) {
  cfg_workload *w = &job->view.workload;
  if (w->comm_model == CFG_COMM_REUSE || w->comm_model == CFG_COMM_SYMMETRIC)
    return cfg_fail_at(doc, "workload.comm_model", err,
                       "%s times each collective alone and replays that time, which would hide "
                       "the other jobs on the fabric; a training job in jobs: runs its "
                       "collectives live (allowed: auto, live)",
                       cfg_comm_model_name(w->comm_model));
  w->comm_model = CFG_COMM_LIVE;
  int rc = wl_job_create_on(&job->train, &job->view, doc, t, be, w->steps, gpus, ngpus, err);
  if (rc == SIM_OK)
    rc = wl_check_horizon(&job->view, doc, (double)wl_job_step_compute_ps(job->train), w->steps,
                          "steps", "compute", err);
  return rc;
}

bool run_jobs_training(const run_jobs *js) {
  for (uint32_t j = 0; j < js->n; j++)
    if (js->v[j].train) return true;
  return false;
}

/* Still to run: a training job not started or with steps left; a
 * collective or traffic job not finished. */
static bool job_active(const run_job *job) {
  if (job->train) return !job->train_started || wl_job_active(job->train);
  return !job->exec.finished;
}

int run_jobs_run(run_jobs *js, sim_ctx *sim, const cfg_doc *doc, bool *complete, sim_error *err) {
  simtime_ps slice = SIM_PS_PER_US;
  int rc = SIM_OK;
  for (;;) {
    bool active = false;
    for (uint32_t j = 0; j < js->n; j++) active |= job_active(&js->v[j]);
    if (!active || sim_interrupt_pending() || sim_pending(sim) == 0) break;
    double t0 = sim_wall_s();
    simtime_ps now = sim_now(sim);
    simtime_ps until = now > SIM_TIME_MAX - slice ? SIM_TIME_MAX : now + slice;
    ev_run(sim, until); /* returns early when a job ends (ev_stop) */
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
    else if (dt > 0.2 && slice > 1) slice = slice / 4 + 1;
  }
  bool active = false;
  for (uint32_t j = 0; j < js->n; j++) active |= job_active(&js->v[j]);
  *complete = !(sim_interrupt_pending() && active);
  return rc;
}

/* The job (training) that holds GPU `gpu`, or NULL. O(jobs). */
static wl_job *holder(run_jobs *js, uint32_t gpu) {
  for (uint32_t j = 0; j < js->n; j++) {
    run_job *job = &js->v[j];
    if (job->train && wl_job_gpu_stage(job->train, gpu) != WL_NO_STAGE) return job->train;
  }
  return NULL;
}

static void hook_slowdown(void *ctx, simtime_ps now, uint32_t gpu, double factor) {
  wl_job *j = holder(ctx, gpu);
  if (!j) return;
  flt_gpu_hooks h = wl_job_hooks(j);
  h.slowdown(h.ctx, now, gpu, factor);
}

static void hook_fail(void *ctx, simtime_ps now, uint32_t gpu, bool whole_node) {
  wl_job *j = holder(ctx, gpu);
  if (!j) return;
  flt_gpu_hooks h = wl_job_hooks(j);
  h.fail(h.ctx, now, gpu, whole_node);
}

static void hook_sdc(void *ctx, simtime_ps now, uint32_t gpu) {
  wl_job *j = holder(ctx, gpu);
  if (!j) return;
  flt_gpu_hooks h = wl_job_hooks(j);
  h.sdc(h.ctx, now, gpu);
}

flt_gpu_hooks run_jobs_hooks(run_jobs *js) {
  return (flt_gpu_hooks){.ctx = js, .slowdown = hook_slowdown, .fail = hook_fail, .sdc = hook_sdc};
}

/* The span of a training job's steps from `start`: to the last step's end,
 * or to its stop. */
static simtime_ps train_end(const wl_job *j, simtime_ps start) {
  simtime_ps at, step_start, end = start;
  uint32_t n = wl_job_steps_done(j);
  if (n) end = wl_job_step(j, n - 1)->end_ps;
  if (wl_job_stopped(j, &at, &step_start) && at > end) end = at;
  return end;
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

int run__job_train_alone(run_job *job, const cfg_doc *doc, const topo *t, sim_error *err) {
  sim_ctx *sim = sim_create(job->view.simulation.seed);
  be_backend *be = NULL;
  const wl_parallel *p = wl_job_parallel(job->train);
  int rc = be_create(&be, sim, t, &job->view, doc, err);
  if (rc == SIM_OK) {
    cfg_doc_scope_job(doc, (int)job->cfg->index);
    rc = wl_job_create_on(&job->train_alone, &job->view, doc, t, be, job->view.workload.steps,
                          p->gpu_map, p->dp * p->tp * p->pp, err);
    if (rc == SIM_OK) rc = wl_job_run(job->train_alone, doc, err);
    cfg_doc_scope_job(doc, -1);
  }
  if (rc == SIM_OK) {
    memset(&job->alone, 0, sizeof job->alone);
    job->alone.time_s = sim_ps_to_s(train_end(job->train_alone, 0));
    job->have_alone = !wl_job_stopped(job->train_alone, NULL, NULL);
  }
  be_destroy(be);
  sim_destroy(sim);
  return rc;
}
