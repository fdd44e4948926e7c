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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static int plan_job(const run_jobs *js, run_job *job, run__train_mode mode, const cfg_scenario *cfg,
                    const cfg_doc *doc, const topo *t, be_backend *be, sim_error *err) {
  const cfg_job *cj = job->cfg;
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
  case CFG_WORKLOAD_TRAINING:
    rc = run__job_train_begin(js, job, mode, doc, t, be, gpus, n, err);
    break;
  case CFG_WORKLOAD_INFERENCE:
    rc = cfg_fail_at(doc, "workload.kind", err,
                     "a serving job in a jobs: list is not modelled yet (docs/inference.md); "
                     "allowed: collective, traffic, training, trace");
    break;
  case CFG_WORKLOAD_TRACE: /* its ranks on the job's GPUs, in order */
    rc = trc_load(&job->trs, &job->view, doc, n, err);
    if (rc == SIM_OK)
      rc = trc_runner_create_on(&job->trr, job->trs, &job->view, doc, t, be, gpus, n, err);
    break;
  default: {
    char key[32];
    snprintf(key, sizeof key, "jobs[%u].gpus", cj->index);
    rc = run__one_gpu_check(&cj->workload, n, doc, key, err);
    if (rc == SIM_OK) rc = coll_plan_from_cfg(&job->plan, t, &job->view, doc, gpus, n, err);
    break;
  }
  }
  cfg_doc_scope_job(doc, -1);
  sim_free(gpus);
  return rc;
}

/* Whether the scenario's faults can change what a job's links do: a
 * network fault reroutes or degrades links no footprint test foresees. */
static bool network_faults(const run_jobs *js) {
  for (uint32_t i = 0; i < js->nfaults; i++)
    if (cfg_fault_is_network(js->faults[i].spec.kind)) return true;
  return false;
}

/* Checkpoints or data loading on the backend fabric (storage.attach
 * backend): their transfers go from a job's GPUs through the spines to the
 * storage servers, where no footprint of the jobs' nodes foresees them. */
static bool backend_storage(const run_jobs *js, const cfg_scenario *cfg) {
  if (cfg->storage.attach != CFG_STORAGE_BACKEND) return false;
  for (uint32_t j = 0; j < js->n; j++) {
    const cfg_workload *w = &js->v[j].cfg->workload;
    if (w->kind == CFG_WORKLOAD_TRAINING && (w->checkpoint.every || w->data_loading)) return true;
  }
  return false;
}

/* Each job's `shares` (the other jobs it may meet on a link, and where),
 * `group` (connected by shares) and `isolated`: at the analytic and flow
 * fidelities, without network faults, a job that can meet no other on a
 * link (plc_may_share_links) runs exactly as alone. The packet fidelity
 * shares switch buffers and pauses across ports, so nothing is isolated
 * there. O(jobs^2 x nodes). */
static void find_isolated(run_jobs *js, const cfg_scenario *cfg, const topo *t) {
  bool possible = cfg->simulation.fidelity != CFG_FIDELITY_PACKET && !network_faults(js) &&
                  !backend_storage(js, cfg);
  for (uint32_t a = 0; a < js->n; a++) js->v[a].group = a;
  for (uint32_t a = 0; a < js->n; a++) {
    run_job *x = &js->v[a];
    x->shares = sim_malloc(js->n * sizeof *x->shares);
    for (uint32_t b = 0; b < js->n; b++) {
      const run_job *y = &js->v[b];
      plc_sharing w;
      if (b == a) continue;
      plc_sharing_of(t, x->nodes, x->nnodes, y->nodes, y->nnodes, &w);
      if (w.leaves || w.pods) x->shares[x->nshares++] = (run_job_share){.job = b, .where = w};
    }
    x->isolated = possible && x->nshares == 0;
  }
  for (bool moved = true; moved;) { /* groups: the lowest index reachable by shares */
    moved = false;
    for (uint32_t a = 0; a < js->n; a++)
      for (uint32_t k = 0; k < js->v[a].nshares; k++) {
        uint32_t *g = &js->v[a].group, h = js->v[js->v[a].shares[k].job].group;
        if (h < *g) *g = h, moved = true;
      }
  }
}

/* A group of jobs that may meet runs live when it must: the packet
 * fidelity, a network fault (it moves traffic the timing cannot see),
 * storage traffic on the backend fabric (the same), a training job set to
 * comm_model live, a trace job (its DAG of compute and calls runs live only). Else, at the analytic
 * fidelity or when one of its training jobs times its collectives (too large to run live), the
 * whole group is timed and stretched: its training jobs by class, its collective and traffic jobs
 * each as one task. */
static bool group_live(const run_jobs *js, uint32_t g, const cfg_scenario *cfg) {
  if (cfg->simulation.fidelity == CFG_FIDELITY_PACKET || network_faults(js) ||
      backend_storage(js, cfg))
    return true;
  for (uint32_t a = 0; a < js->n; a++) {
    const cfg_job *cj = js->v[a].cfg;
    if (js->v[a].group != g || js->v[a].isolated) continue;
    if (cj->workload.kind == CFG_WORKLOAD_TRAINING && cj->workload.comm_model == CFG_COMM_LIVE)
      return true;
    if (cj->workload.kind == CFG_WORKLOAD_TRACE) return true; /* its DAG has no timed form */
  }
  return false;
}

/* Builds every job; then, in a group timed by class, a training job whose
 * comm model came out live (small enough) is built again under reuse, so the
 * whole group is timed one way, unless every job of it came out live. */
static int plan_jobs(run_jobs *js, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                     be_backend *be, sim_error *err) {
  int rc = SIM_OK;
  for (uint32_t a = 0; a < js->n && rc == SIM_OK; a++) {
    run_job *x = &js->v[a];
    run__train_mode mode = x->isolated                     ? RUN__TRAIN_ALONE
                           : group_live(js, x->group, cfg) ? RUN__TRAIN_LIVE
                                                           : RUN__TRAIN_TIMED;
    rc = plan_job(js, x, mode, cfg, doc, t, be, err);
  }
  for (uint32_t a = 0; a < js->n && rc == SIM_OK; a++) {
    run_job *x = &js->v[a];
    if (x->isolated || group_live(js, x->group, cfg)) continue;
    bool all_live = true;
    for (uint32_t b = 0; b < js->n; b++)
      if (js->v[b].group == x->group && js->v[b].train)
        all_live &= wl_job_comm_model(js->v[b].train) == CFG_COMM_LIVE;
    /* the analytic backend shares a link by counting the transfers present
     * when a phase is submitted, for the whole phase: the order jobs submit
     * in decides who pays. Jobs that may meet are timed there. */
    if (all_live && cfg->simulation.fidelity != CFG_FIDELITY_ANALYTIC) continue;
    x->timed = true;
    if (!x->train || wl_job_comm_model(x->train) != CFG_COMM_LIVE) continue;
    wl_job_free(x->train);
    x->train = NULL;
    rc = plan_job(js, x, RUN__TRAIN_TIMED_REUSE, cfg, doc, t, be, err);
  }
  return rc;
}

uint32_t *run__job_of_gpu(const run_jobs *js, const topo *t) {
  uint32_t g = topo_gpu_count(t), gpn = g / topo_node_count(t);
  uint32_t *owner = sim_malloc((g ? g : 1) * sizeof *owner);
  for (uint32_t i = 0; i < g; i++) owner[i] = UINT32_MAX;
  for (uint32_t j = 0; j < js->n; j++)
    for (uint32_t i = 0; i < js->v[j].nnodes; i++)
      for (uint32_t k = 0; k < gpn; k++) owner[js->v[j].nodes[i] * gpn + k] = j;
  return owner;
}

/* The job of each GPU, for the fidelities that count pause victims by job
 * (be_job_owners_set: the others answer SIM_EINVAL, nothing to do). */
static void set_owners(const run_jobs *js, const topo *t, be_backend *be) {
  uint32_t *owner = run__job_of_gpu(js, t);
  (void)be_job_owners_set(be, owner, js->n);
  sim_free(owner);
}

int run_jobs_begin(run_jobs *js, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                   be_backend *be, const flt_fault *faults, uint32_t nfaults, sim_error *err) {
  plc_nodeset taken;
  int rc = SIM_OK;
  memset(js, 0, sizeof *js);
  if (cfg->jobs.n == 0) return SIM_OK;
  js->v = sim_calloc(cfg->jobs.n, sizeof *js->v);
  js->n = cfg->jobs.n;
  js->t = t;
  js->faults = faults;
  js->nfaults = nfaults;
  plc_nodeset_init(&taken, topo_node_count(t));
  for (uint32_t j = 0; j < js->n && rc == SIM_OK; j++) {
    run_job *job = &js->v[j];
    job->cfg = &cfg->jobs.v[j];
    rc = place_job(job, job->cfg, cfg, doc, t, &taken, err);
    if (rc == SIM_OK) plc_nodeset_add_list(&taken, job->nodes, job->nnodes);
  }
  plc_nodeset_free(&taken);
  if (rc == SIM_OK) find_isolated(js, cfg, t);
  if (rc == SIM_OK && js->n > 1) set_owners(js, t, be);
  if (rc == SIM_OK) rc = plan_jobs(js, cfg, doc, t, be, err);
  return rc == SIM_OK ? SIM_OK : SIM_ECONFIG;
}

static void start_job(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)arg;
  run_job *job = obj;
  if (job->cnt) { /* timed: its plan as one task of the stretching */
    job->exec.plan = &job->plan;
    job->exec.start = sim_now(sim);
    run__contention_start_plan(job->cnt, job->task);
    return;
  }
  if (job->train) {
    sim_error err;
    job->train_started = wl_job_start(job->train, &err) == SIM_OK; /* live or measured */
    return;
  }
  if (job->trr) {
    trc_runner_start(job->trr);
    return;
  }
  coll_exec_start(&job->exec, job->be, &job->plan, NULL, NULL);
}

int run_jobs_start(run_jobs *js, sim_ctx *sim, be_backend *be, const cfg_doc *doc, sim_error *err) {
  int rc = SIM_OK;
  for (uint32_t j = 0; j < js->n && rc == SIM_OK; j++)
    if (js->v[j].train) rc = run__job_train_measure(&js->v[j], js->t, doc, err);
  for (uint32_t j = 0; j < js->n && rc == SIM_OK; j++)
    if (js->v[j].train) rc = run__job_train_storage(js, &js->v[j], doc, be, err);
  if (rc == SIM_OK) rc = run__jobs_contention(js, sim, doc, err);
  for (uint32_t j = 0; j < js->n && rc == SIM_OK; j++) {
    js->v[j].be = be;
    ev_schedule(sim, js->v[j].cfg->start, start_job, &js->v[j], 0);
  }
  return rc;
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
    if (job->trr) { /* started at its start, figures from there */
      trc_result_free(&job->trace);
      trc_runner_result(job->trr, &job->trace);
      job->finished = trc_runner_done(job->trr) && !trc_runner_failed(job->trr, NULL);
      memset(&job->res, 0, sizeof job->res);
      job->res.time_s = job->trace.time_s;
      simtime_ps end = job->cfg->start + job->trace.time_ps;
      if (end > last) last = end;
      continue;
    }
    job->finished = job->exec.finished;
    if (!job->exec.finished) job->exec.end = sim_now(sim);
    if (job->exec.plan) coll_result_of(&job->exec, &job->res);
    if (job->exec.end > last) last = job->exec.end;
  }
  /* the pause victims (a collective on the parallel engine: every rank) */
  js->have_pauses = js->n > 1 && be_job_pauses_get(js->v[0].be, &js->pauses);
  return last;
}

int run__alone_begin(run__alone *a, const run_jobs *js, const cfg_scenario *view,
                     const cfg_doc *doc, const topo *t, sim_error *err) {
  memset(a, 0, sizeof *a);
  sim_test_pause("alone"); /* tests: a job's run alone (its baseline) about to begin */
  a->sim = sim_create(view->simulation.seed);
  int rc = be_create(&a->be, a->sim, t, view, doc, err);
  if (rc == SIM_OK && js->nfaults &&
      !(a->fs = flt_sched_start(a->sim, t, a->be, js->faults, js->nfaults, view, NULL, err)))
    rc = SIM_ECONFIG;
  return rc;
}

void run__alone_end(run__alone *a) {
  flt_sched_free(a->fs);
  be_destroy(a->be);
  sim_destroy(a->sim);
  memset(a, 0, sizeof *a);
}

typedef struct alone_coll {
  coll_exec e;
  const coll_plan *plan;
  be_backend *be;
} alone_coll;

static void alone_start(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)sim;
  (void)arg;
  alone_coll *c = obj;
  coll_exec_start(&c->e, c->be, c->plan, NULL, NULL);
}

static void alone_trace_start(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)sim;
  (void)arg;
  trc_runner_start(obj);
}

/* A trace job alone: its traces on a fresh backend, from its start. */
static int run_alone_trace(const run_jobs *js, run_job *job, const cfg_doc *doc, const topo *t,
                           sim_error *err) {
  run__alone a;
  trc_runner *r = NULL;
  uint32_t n;
  uint32_t *gpus = job_gpus(job, t, &n);
  int rc = run__alone_begin(&a, js, &job->view, doc, t, err);
  cfg_doc_scope_job(doc, (int)job->cfg->index);
  if (rc == SIM_OK) rc = trc_runner_create_on(&r, job->trs, &job->view, doc, t, a.be, gpus, n, err);
  cfg_doc_scope_job(doc, -1);
  if (rc == SIM_OK && a.fs) {
    flt_gpu_hooks h = trc_runner_hooks(r);
    flt_sched_set_hooks(a.fs, &h);
  }
  if (rc == SIM_OK) {
    ev_schedule(a.sim, job->cfg->start, alone_trace_start, r, 0);
    if (ev_run_interruptible(a.sim, SIM_TIME_MAX)) rc = SIM_EINTR; /* Ctrl-C: no baseline */
  }
  if (rc == SIM_OK) {
    trc_result res;
    trc_runner_result(r, &res);
    memset(&job->alone, 0, sizeof job->alone);
    job->alone.time_s = res.time_s;
    job->have_alone = trc_runner_done(r) && !trc_runner_failed(r, NULL);
    trc_result_free(&res);
  }
  trc_runner_free(r);
  sim_free(gpus);
  run__alone_end(&a);
  return rc;
}

/* Job j alone: a fresh simulation and backend of the same fabric under
 * the same faults, the same plan (the same GPUs), started at its start, so
 * the faults meet it when they met it shared. */
static int run_alone(const run_jobs *js, run_job *job, const cfg_doc *doc, const topo *t,
                     sim_error *err) {
  run__alone a;
  alone_coll c = {.plan = &job->plan};
  int rc = run__alone_begin(&a, js, &job->view, doc, t, err);
  if (rc == SIM_OK) {
    c.be = a.be;
    ev_schedule(a.sim, job->cfg->start, alone_start, &c, 0);
    if (ev_run_interruptible(a.sim, SIM_TIME_MAX)) rc = SIM_EINTR; /* Ctrl-C: no baseline */
  }
  if (rc == SIM_OK) {
    if (c.e.plan && !c.e.finished) c.e.end = sim_now(a.sim);
    if (c.e.plan) coll_result_of(&c.e, &job->alone);
    job->have_alone = c.e.finished;
  }
  run__alone_end(&a);
  return rc;
}

int run_jobs_alone(run_jobs *js, const cfg_doc *doc, const topo *t, sim_error *err) {
  for (uint32_t j = 0; j < js->n; j++) {
    run_job *job = &js->v[j];
    /* one job is alone, unless it writes checkpoints: then its steps
     * without them are its baseline too */
    if (js->n < 2 && !job->ckpt) continue;
    int rc = job->train ? run__job_train_alone(js, job, doc, t, err)
             : job->trr ? run_alone_trace(js, job, doc, t, err)
             : job->cnt ? SIM_OK /* timed alone before the run */
                        : run_alone(js, job, doc, t, err);
    if (rc != SIM_OK) return rc; /* SIM_EINTR: this job and the next have no baseline */
    job->slowdown = job->have_alone && job->alone.time_s > 0 && job->finished
                        ? job->res.time_s / job->alone.time_s
                        : 0;
    if (job->ckpt) run_ckpt_account(job->ckpt, job->train, job->train_alone);
  }
  return SIM_OK;
}

/* Job job's GPU or node failure, if one stopped it. */
static bool job_failure(const run_job *job, trc_failure *f) {
  if (job->trr) return trc_runner_failed(job->trr, f);
  if (!job->train || !wl_job_stopped(job->train, NULL, NULL)) return false;
  size_t n;
  const wl_gpu_event *e = wl_job_events(job->train, &n);
  for (size_t i = n; i-- > 0;)
    if (e[i].kind == WL_GPU_FAIL || e[i].kind == WL_NODE_FAIL) {
      *f = (trc_failure){e[i].at, e[i].gpu, e[i].kind == WL_NODE_FAIL};
      return true;
    }
  return false; /* a transfer's failure: the run's transfer count has it */
}

bool run_jobs_failure(const run_jobs *js, uint32_t *job, trc_failure *f) {
  bool any = false;
  for (uint32_t j = 0; j < js->n; j++) {
    trc_failure g;
    if (!job_failure(&js->v[j], &g) || (any && g.at >= f->at)) continue;
    *f = g;
    *job = j;
    any = true;
  }
  return any;
}

void run_jobs_outcome(const run_jobs *js, run_workload *w, run_events *log) {
  uint32_t j;
  trc_failure f;
  if (w->gpu_failed || !run_jobs_failure(js, &j, &f)) return;
  char detail[200];
  w->failed = w->gpu_failed = true;
  w->gpu_failure = f;
  snprintf(detail, sizeof detail, "job %.64s stopped: gpu%u%s failed; the other jobs ran on",
           js->v[j].cfg->name, f.gpu, f.whole_node ? "'s node" : "");
  run_event_add(log, f.at, "job", "job-stopped", detail);
}

void run_jobs_events(const run_jobs *js, run_events *log) {
  for (uint32_t j = 0; j < js->n; j++)
    if (js->v[j].ckpt) run_ckpt_events(js->v[j].ckpt, js->v[j].cfg->name, log);
}

static void timed_done(void *ctx) {
  run_job *job = ctx;
  job->exec.end = sim_now(job->be->sim);
  job->exec.finished = true;
}

int run__jobs_contention(run_jobs *js, sim_ctx *sim, const cfg_doc *doc, sim_error *err) {
  int rc = SIM_OK;
  for (uint32_t j = 0; j < js->n && !js->contention; j++)
    if (js->v[j].timed) js->contention = run__contention_create(js->t, &js->v[j].view, sim);
  for (uint32_t j = 0; j < js->n && rc == SIM_OK; j++) {
    run_job *job = &js->v[j];
    if (!job->timed) continue;
    if (job->train) {
      rc = run__contention_add_training(js->contention, job->train, job->group,
                                        job->view.workload.tclass, err);
      continue;
    }
    rc = run_alone(js, job, doc, js->t, err); /* its time alone: the task's, and its baseline */
    if (rc == SIM_OK && !job->have_alone)
      rc = sim_fail(err, SIM_EINVAL, "job %s did not finish alone", job->cfg->name);
    if (rc != SIM_OK) break;
    job->cnt = js->contention;
    job->task = run__contention_add_plan(js->contention, &job->plan,
                                         (simtime_ps)llround(job->alone.time_s * 1e12), job->group,
                                         job->view.workload.tclass, timed_done, job);
  }
  if (rc == SIM_OK && js->contention) run__contention_seal(js->contention);
  return rc;
}

/* The job's own checkpoint writes: what they cost its steps (and its
 * stalls), into buf; 0 when nothing. */
static size_t own_writes(const run_job *job, char *buf, size_t n) {
  const run_ckpt *c = job->ckpt;
  double cost = 0, stall = 0;
  uint32_t first = 0, last = 0;
  for (size_t i = 0; c && i < c->n; i++) {
    cost += c->v[i].slowdown_s;
    stall += c->v[i].stall_s;
    if (c->v[i].first_step && (!first || c->v[i].first_step < first)) first = c->v[i].first_step;
    if (c->v[i].last_step > last) last = c->v[i].last_step;
  }
  if (!c || !(cost + stall > 1e-12)) return 0;
  int k =
      snprintf(buf, n,
               "its %zu checkpoint writes (%s) overlapped steps %u-%u and made them "
               "%.6g s longer",
               c->n, c->separate ? "separate storage fabric" : "backend fabric", first, last, cost);
  if (stall > 0 && k >= 0 && (size_t)k < n)
    k += snprintf(buf + k, n - (size_t)k, ", the job waited %.6g s for them", stall);
  return k > 0 ? (size_t)k : 0;
}

/* Other jobs' checkpoint writes on the backend fabric while the job ran. */
static size_t others_writes(const run_jobs *js, const run_job *job, char *buf, size_t n) {
  size_t len = 0;
  simtime_ps from = job->cfg->start, to = from + (simtime_ps)llround(job->res.time_s * 1e12);
  for (uint32_t j = 0; j < js->n && len < n; j++) {
    const run_ckpt *c = js->v[j].ckpt;
    if (&js->v[j] == job || !c || c->separate) continue;
    simtime_ps lo = SIM_TIME_MAX, hi = 0;
    for (size_t i = 0; i < c->n; i++)
      if (c->v[i].end && c->v[i].end > from && c->v[i].start < to) {
        if (c->v[i].start < lo) lo = c->v[i].start;
        if (c->v[i].end > hi) hi = c->v[i].end;
      }
    if (hi == 0) continue;
    len += (size_t)snprintf(buf + len, n - len,
                            "%s%s's checkpoint writes on the backend fabric "
                            "(%.6g-%.6g s)",
                            len ? ", " : "", js->v[j].cfg->name, sim_ps_to_s(lo), sim_ps_to_s(hi));
  }
  return len < n ? len : n - 1;
}

void run_job_cause(const run_jobs *js, const run_job *job, const topo *t, char *buf, size_t n) {
  char name[64];
  size_t len = 0;
  buf[0] = '\0';
  if (!job->have_alone || !job->finished || !(job->slowdown > 1 + 1e-9)) return;
  double extra = job->res.time_s - job->alone.time_s;
  len += (size_t)snprintf(buf, n, "%.6g s (%.1f %%) longer than alone: ", extra,
                          (job->slowdown - 1) * 100);
  size_t head = len;
  len += own_writes(job, buf + len, n - len);
  if (len > head && len < n - 2) len += (size_t)snprintf(buf + len, n - len, "; ");
  size_t mark = len;
  len += others_writes(js, job, buf + len, n - len);
  if (len > mark && len < n - 2) len += (size_t)snprintf(buf + len, n - len, "; ");
  if (!job->nshares) {
    if (len > head) buf[len - 2] = '\0'; /* the writes explain it */
    else if (js->n > 1)
      snprintf(buf + len, n - len,
               "it shares no link with another job; the others reach it through shared switch "
               "buffers and pause frames");
    return;
  }
  len += (size_t)snprintf(buf + len, n - len, "it may share links with ");
  for (uint32_t k = 0; k < job->nshares && len < n; k++) {
    const run_job_share *sh = &job->shares[k];
    const plc_sharing *w = &sh->where;
    bool leaf = w->leaves != 0;
    topo_vertex_name(t, leaf ? w->first_leaf : w->first_pod_leaf, name, sizeof name);
    uint32_t count = leaf ? w->leaves : w->pods;
    len += (size_t)snprintf(buf + len, n - len, "%s%s (%u common %s%s, first %s%s)", k ? ", " : "",
                            js->v[sh->job].cfg->name, count, leaf ? "lea" : "pod",
                            count == 1 ? (leaf ? "f" : "") : (leaf ? "ves" : "s"), name,
                            leaf ? "" : "'s pod");
  }
}

void run_jobs_free(run_jobs *js) {
  run__contention_free(js->contention);
  if (js->storage) run_storage_free(js->storage);
  sim_free(js->storage);
  for (uint32_t j = 0; j < js->n; j++) {
    sim_free(js->v[j].shares);
    coll_plan_free(&js->v[j].plan);
    trc_runner_free(js->v[j].trr);
    trc_set_free(js->v[j].trs);
    trc_result_free(&js->v[j].trace);
    if (js->v[j].ckpt) run_ckpt_free(js->v[j].ckpt);
    sim_free(js->v[j].ckpt);
    wl_job_free(js->v[j].train);
    wl_job_free(js->v[j].train_alone);
    sim_free(js->v[j].nodes);
  }
  sim_free(js->v);
  memset(js, 0, sizeof *js);
}
