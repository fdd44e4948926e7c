/* Several jobs on one fabric (fabsim/run.h, run_jobs; issue 16): each job
 * placed with plc_place onto the nodes earlier jobs left free, its
 * collective planned over its own GPUs, started at its start time on the
 * run's one backend, and, when the run has more than one job, run again
 * alone on a fresh backend of the same fabric with the same placement: its
 * slowdown is the shared time over the alone time.
 *
 * The collective's ranks are the job's GPUs in ascending order (the order
 * coll_plan_build takes them), so the ring the plan runs is the nodes in
 * ascending order; the placement metrics are computed over that order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/calib.h"
#include "fabsim/ev.h"
#include "run/run_internal.h"

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Job j's nodes (placement) into job->nodes, ascending, and its metrics.
 * plc_place's errors are located at jobs[j].placement (explicit: nodes). */
static int place_job(run_job *job, const cfg_job *cj, const cfg_scenario *cfg, const cfg_doc *doc,
                     const topo *t, const plc_nodeset *taken, sim_error *err) {
  char key[48];
  uint32_t n = plc_nodes_for_gpus(t, cj->gpus);
  uint32_t *list = NULL;
  plc_request req = {.policy = (plc_policy)cj->placement,
                     .nodes = n,
                     .seed = cfg->simulation.seed + cj->index}; /* each job its own shuffle */
  if (cj->placement == CFG_PLACE_EXPLICIT) {
    list = sim_malloc(n * sizeof *list);
    for (uint32_t i = 0; i < n; i++)
      list[i] = cj->nodes.v[i] > UINT32_MAX ? UINT32_MAX : (uint32_t)cj->nodes.v[i];
    req.list = list;
  }
  job->nodes = sim_malloc(n * sizeof *job->nodes);
  job->nnodes = n;
  int rc = plc_place(t, taken, &req, job->nodes, err);
  sim_free(list);
  if (rc != SIM_OK) {
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    snprintf(key, sizeof key, "jobs[%u].%s", cj->index,
             cj->placement == CFG_PLACE_EXPLICIT ? "nodes" : "placement");
    return cfg_fail_at(doc, key, err, "%s", msg);
  }
  qsort(job->nodes, n, sizeof *job->nodes, cmp_u32);
  return plc_metrics_of(t, job->nodes, n, &job->metrics, err);
}

/* The job's GPUs, node by node (a node's GPUs consecutive), into a new
 * array of *n. */
static uint32_t *job_gpus(const run_job *job, const topo *t, uint32_t *n) {
  uint32_t gpn = topo_gpu_count(t) / topo_node_count(t);
  size_t total = (size_t)job->nnodes * gpn;
  uint32_t *gpus = sim_malloc((total ? total : 1) * sizeof *gpus);
  for (uint32_t i = 0; i < job->nnodes; i++)
    for (uint32_t g = 0; g < gpn; g++) gpus[i * gpn + g] = job->nodes[i] * gpn + g;
  *n = job->nnodes * gpn;
  return gpus;
}

/* The job's plan (its collective or traffic pattern) or its training job
 * over its GPUs, with the job's workload keys in errors. */
static int plan_job(run_job *job, const cfg_job *cj, const cfg_scenario *cfg, const cfg_doc *doc,
                    const topo *t, be_backend *be, sim_error *err) {
  uint32_t n;
  uint32_t *gpus = job_gpus(job, t, &n);
  job->view = *cfg; /* the scenario with the job's workload in place */
  job->view.workload = cj->workload;
  cfg_doc_scope_job(doc, (int)cj->index);
  int rc;
  switch (cj->workload.kind) {
  case CFG_WORKLOAD_TRAFFIC:
    rc = run__traffic_plan(&job->plan, &job->pair, &job->view, doc, t, gpus, n, err);
    break;
  case CFG_WORKLOAD_TRAINING: rc = run__job_train_begin(job, doc, t, be, gpus, n, err); break;
  default: rc = cal_collective_plan_on(&job->plan, t, &job->view, doc, gpus, n, err); break;
  }
  cfg_doc_scope_job(doc, -1);
  sim_free(gpus);
  return rc;
}

int run_jobs_begin(run_jobs *js, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                   be_backend *be, sim_error *err) {
  plc_nodeset taken;
  int rc = SIM_OK;
  memset(js, 0, sizeof *js);
  if (cfg->jobs.n == 0) return SIM_OK;
  js->v = sim_calloc(cfg->jobs.n, sizeof *js->v);
  js->n = cfg->jobs.n;
  plc_nodeset_init(&taken, topo_node_count(t));
  for (uint32_t j = 0; j < js->n && rc == SIM_OK; j++) {
    run_job *job = &js->v[j];
    job->cfg = &cfg->jobs.v[j];
    rc = place_job(job, job->cfg, cfg, doc, t, &taken, err);
    if (rc == SIM_OK) plc_nodeset_add_list(&taken, job->nodes, job->nnodes);
    if (rc == SIM_OK) rc = plan_job(job, job->cfg, cfg, doc, t, be, err);
  }
  plc_nodeset_free(&taken);
  return rc == SIM_OK ? SIM_OK : SIM_ECONFIG;
}

static void start_job(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)sim;
  (void)arg;
  run_job *job = obj;
  if (job->train) {
    sim_error err;
    job->train_started = wl_job_start(job->train, &err) == SIM_OK; /* live: always */
    return;
  }
  coll_exec_start(&job->exec, job->be, &job->plan, NULL, NULL);
}

void run_jobs_start(run_jobs *js, sim_ctx *sim, be_backend *be) {
  for (uint32_t j = 0; j < js->n; j++) {
    js->v[j].be = be;
    ev_schedule(sim, js->v[j].cfg->start, start_job, &js->v[j], 0);
  }
}

simtime_ps run_jobs_end(run_jobs *js, sim_ctx *sim) {
  simtime_ps last = 0;
  for (uint32_t j = 0; j < js->n; j++) {
    run_job *job = &js->v[j];
    job->slowdown = 1;
    if (job->train) {
      run__job_train_end(job, sim);
      if (run__job_train_last(job) > last) last = run__job_train_last(job);
      continue;
    }
    job->finished = job->exec.finished;
    if (!job->exec.finished) job->exec.end = sim_now(sim);
    if (job->exec.plan) coll_result_of(&job->exec, &job->res);
    if (job->exec.end > last) last = job->exec.end;
  }
  return last;
}

/* Job j alone: a fresh simulation and backend of the same fabric, the
 * same plan (the same GPUs), started at 0. */
static int run_alone(run_job *job, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                     sim_error *err) {
  sim_ctx *sim = sim_create(cfg->simulation.seed);
  be_backend *be = NULL;
  coll_exec e;
  memset(&e, 0, sizeof e);
  int rc = be_create(&be, sim, t, cfg, doc, err);
  if (rc == SIM_OK) {
    coll_exec_start(&e, be, &job->plan, NULL, NULL);
    ev_run(sim, SIM_TIME_MAX);
    if (!e.finished) e.end = sim_now(sim);
    coll_result_of(&e, &job->alone);
    job->have_alone = e.finished;
  }
  be_destroy(be);
  sim_destroy(sim);
  return rc;
}

int run_jobs_alone(run_jobs *js, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                   sim_error *err) {
  if (js->n < 2) return SIM_OK; /* one job: it is alone */
  for (uint32_t j = 0; j < js->n; j++) {
    run_job *job = &js->v[j];
    int rc = job->train ? run__job_train_alone(job, doc, t, err) : run_alone(job, cfg, doc, t, err);
    if (rc != SIM_OK) return rc;
    job->slowdown = job->have_alone && job->alone.time_s > 0 && job->finished
                        ? job->res.time_s / job->alone.time_s
                        : 0;
  }
  return SIM_OK;
}

void run_jobs_free(run_jobs *js) {
  for (uint32_t j = 0; j < js->n; j++) {
    coll_plan_free(&js->v[j].plan);
    wl_job_free(js->v[j].train);
    wl_job_free(js->v[j].train_alone);
    sim_free(js->v[j].nodes);
  }
  sim_free(js->v);
  memset(js, 0, sizeof *js);
}
