/* fabsim run, workload.kind training: the operator's view of the job once
 * it ran (training.c runs it), as typed results (fabsim/run.h): the failure
 * and its cost, SDC detection, root cause against the fault-free baseline,
 * power, and their events. summary.json and the terminal are built from
 * these at the edge (src/output/run_summary.c, run_text.c). */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/reliability.h"
#include "fabsim/run.h"

/* Where the others wait for a slow stage: the pipeline (sends and the
 * stages behind them) when there is one, else the data-parallel reduction,
 * by name. */
static const char *wait_in(const wl_step *s) {
  if (s && s->parallel.pp > 1) return "pipeline sends and the collectives after them";
  static const wl_comm_kind order[] = {WL_COMM_DP_ALLREDUCE, WL_COMM_DP_REDUCESCATTER,
                                       WL_COMM_TP_ALLREDUCE, WL_COMM_EP_DISPATCH,
                                       WL_COMM_PP_SEND,      WL_COMM_DP_ALLGATHER};
  for (size_t i = 0; s && i < sizeof order / sizeof *order; i++)
    if (s->comm[order[i]].count) return wl_comm_kind_name(order[i]);
  return "collectives";
}

/* The network faults' windows (run_fault_windows, from fs's log) in seconds, for the root cause. */
/* The network faults' windows, then the checkpoint writes on the backend
 * fabric (a storage burst on the links the gradients use; one on a separate
 * storage fabric meets them nowhere and explains nothing): a step's excess
 * goes to the first active, so a fault is named before a burst. */
static rel_rc_net *network_faults(const run_training *tr, const flt_sched *fs, uint32_t *n) {
  const run_ckpt *c = &tr->ckpt;
  size_t bursts = c->every && !c->separate ? c->n : 0, cap = tr->nfaults + bursts;
  run_fault_window *w = sim_calloc(tr->nfaults ? tr->nfaults : 1, sizeof *w);
  rel_rc_net *v = sim_calloc(cap ? cap : 1, sizeof *v);
  *n = run_fault_windows(fs, tr->faults, tr->nfaults, w);
  for (uint32_t i = 0; i < *n; i++)
    v[i] = (rel_rc_net){.at_s = sim_ps_to_s(w[i].at),
                        .until_s = w[i].until_set ? sim_ps_to_s(w[i].until) : -1,
                        .component = w[i].component,
                        .kind = w[i].kind};
  uint32_t first = *n;
  for (size_t i = 0; i < bursts; i++) {
    if (!c->v[i].end) continue;
    double at = sim_ps_to_s(c->v[i].start), until = sim_ps_to_s(c->v[i].end);
    if (*n > first && v[*n - 1].until_s >= at) { /* one write after another: one burst */
      v[*n - 1].until_s = until;
      continue;
    }
    v[(*n)++] = (rel_rc_net){
        .at_s = at, .until_s = until, .component = "storage", .kind = "checkpoint-burst"};
  }
  sim_free(w);
  return v;
}

/* Per-stage arrays of a step, for rel_rc_step. */
static void rc_step(const wl_step *s, double *compute, double *exposed, rel_rc_step *out) {
  for (uint32_t i = 0; i < s->nstages; i++) {
    compute[i] = s->stages[i].compute_s;
    exposed[i] = s->stages[i].exposed_comm_s;
  }
  *out = (rel_rc_step){.start_s = s->start_s,
                       .time_s = s->time_s,
                       .stage_compute_s = compute,
                       .stage_exposed_s = exposed,
                       .nstages = s->nstages};
}

/* The end of step k of the run (0-based, done). */
static simtime_ps step_end(const run_training *tr, uint32_t k) {
  assert(k < tr->nrec[0]);
  return tr->rec[0][k].end;
}

static void root_cause(run_training *tr, const flt_sched *fs, run_events *log, rel_rc_result *out) {
  const wl_job *j = tr->job, *b = tr->base;
  uint32_t nrun = wl_job_steps_done(j), nbase = b ? wl_job_steps_done(b) : 0;
  memset(out, 0, sizeof *out);
  if (!b || !nrun || !nbase) return;
  uint32_t pp = wl_job_step(j, 0)->nstages;
  size_t nev;
  const wl_gpu_event *ev = wl_job_events(j, &nev);
  rel_rc_step *run = sim_calloc(nrun, sizeof *run), *base = sim_calloc(nbase, sizeof *base);
  double *arr = sim_calloc(2 * (size_t)pp * (nrun + nbase), sizeof *arr);
  for (uint32_t k = 0; k < nrun; k++)
    rc_step(wl_job_step(j, k), arr + 2 * (size_t)pp * k, arr + 2 * (size_t)pp * k + pp, &run[k]);
  for (uint32_t k = 0; k < nbase; k++) {
    double *p = arr + 2 * (size_t)pp * (nrun + k);
    rc_step(wl_job_step(b, k), p, p + pp, &base[k]);
  }
  for (int side = 0; side < 2; side++) /* the fabric's counters, per step */
    for (uint32_t k = 0; k < (side ? nbase : nrun) && k < tr->nrec[side]; k++) {
      rel_rc_step *x = side ? &base[k] : &run[k];
      x->fabric = tr->rec[side][k].observed;
      x->pfc_paused_s = tr->rec[side][k].pfc_paused_s;
      x->ecn_marks = tr->rec[side][k].ecn_marks;
    }
  rel_rc_slow *slow = sim_calloc(nev ? nev : 1, sizeof *slow);
  uint32_t ngpu = topo_gpu_count(tr->t);
  uint32_t nslow = 0;
  for (size_t i = 0; i < nev; i++) {
    const wl_gpu_event *e = &ev[i];
    if ((e->kind != WL_GPU_SLOWDOWN && e->kind != WL_GPU_THERMAL) || e->stage == WL_NO_STAGE)
      continue;
    slow[nslow++] = (rel_rc_slow){
        .at_s = sim_ps_to_s(e->at),
        .until_s = -1,
        .factor = e->factor,
        .gpu = e->gpu,
        .node = topo_gpu_node(tr->t, e->gpu),
        .rack = run_gpu_rack(tr, e->gpu),
        .stage = e->stage,
        .thermal = e->kind == WL_GPU_THERMAL,
        .power_cap = e->kind == WL_GPU_THERMAL &&
                     !strcmp(pwr_rack_limit_name(&tr->pwr, run_gpu_rack(tr, e->gpu)), "power cap")};
  }
  /* a slowdown fault lasts until the GPU's next slowdown fault (factor 1:
   * its end); thermal throttles last. One pass from the end, O(slow). */
  double *next = sim_malloc((ngpu ? ngpu : 1) * sizeof *next);
  for (uint32_t g = 0; g < ngpu; g++) next[g] = -1;
  for (uint32_t i = nslow; i-- > 0;) {
    if (slow[i].thermal || slow[i].gpu >= ngpu) continue;
    slow[i].until_s = next[slow[i].gpu];
    next[slow[i].gpu] = slow[i].at_s;
  }
  sim_free(next);
  uint32_t nnet;
  rel_rc_net *net = network_faults(tr, fs, &nnet);
  rel_rc_input in = {.run = run,
                     .base = base,
                     .nrun = nrun,
                     .nbase = nbase,
                     .slow = slow,
                     .nslow = nslow,
                     .net = net,
                     .nnet = nnet,
                     .gpus = wl_job_step(j, 0)->gpus,
                     .wait_in = wait_in(wl_job_step(j, 0)),
                     .threshold_frac = 1e-3};
  rel_root_cause(&in, out);
  for (uint32_t i = 0; i < out->n; i++) { /* a step over its baseline: a straggler event */
    const rel_rc_entry *e = &out->v[i];
    run_event_add(log, step_end(tr, e->index), e->ncauses ? e->causes[0].component : "job",
                  "straggler", e->text);
  }
  sim_free(net);
  sim_free(slow);
  sim_free(arr);
  sim_free(run);
  sim_free(base);
}

/* Checkpoint interval, write time and restart time of the scenario
 * (interval auto: Daly's for the job's nodes). The keys were checked when
 * the scenario was loaded (config/validate.c), so this cannot fail. */
static void checkpoint_model(const run_training *tr, uint32_t gpus, double *tau, double *delta,
                             double *restart, bool *is_auto) {
  rel_params p;
  rel_result r;
  sim_error err = {0};
  uint32_t gpn = tr->cfg->cluster.gpus_per_node ? tr->cfg->cluster.gpus_per_node : 1;
  uint32_t nodes = (gpus + gpn - 1) / gpn;
  *tau = *delta = *restart = 0;
  *is_auto = false;
  if (rel_params_from_config(&p, tr->cfg, tr->doc, nodes ? nodes : 1, &err) != SIM_OK) return;
  p.runs = 0;
  rel_evaluate(&p, &r);
  *is_auto = p.interval_s <= 0;
  *tau = r.interval_s;
  *delta = p.write_s;
  *restart = p.restart_s;
}

/* The failure that stopped the job, its cost and its events. */
static void failure_of(run_training *tr, run_events *log, run_failure *o) {
  simtime_ps at, step_start;
  memset(o, 0, sizeof *o);
  if (!wl_job_stopped(tr->job, &at, &step_start)) return;
  size_t nev;
  const wl_gpu_event *ev = wl_job_events(tr->job, &nev), *f = NULL;
  for (size_t i = 0; i < nev; i++)
    if (ev[i].kind == WL_GPU_FAIL || ev[i].kind == WL_NODE_FAIL || ev[i].kind == WL_TRANSFER_FAIL)
      f = &ev[i];
  if (!f) return;
  const wl_parallel *p = wl_job_parallel(tr->job);
  uint32_t gpus = p->dp * p->tp * p->pp;
  o->happened = true;
  o->kind = f->kind;
  o->at = at;
  o->step_start = step_start;
  o->gpu = f->gpu;
  o->dst_gpu = f->dst_gpu;
  o->node = topo_gpu_node(tr->t, f->gpu);
  o->cause = f->cause ? f->cause : "unknown";
  o->step = f->step + 1;
  o->steps_completed = wl_job_steps_done(tr->job);
  double restart;
  checkpoint_model(tr, gpus, &o->checkpoint_interval_s, &o->checkpoint_write_s, &restart,
                   &o->checkpoint_interval_auto);
  rel_failure_cost *c = &o->cost;
  rel_failure_cost_of(sim_ps_to_s(at), o->checkpoint_interval_s, o->checkpoint_write_s, restart,
                      gpus, c);
  uint32_t done = o->steps_completed;
  double step_s = done                                      ? wl_job_step(tr->job, done - 1)->time_s
                  : tr->base && wl_job_steps_done(tr->base) ? wl_job_step(tr->base, 0)->time_s
                                                            : 0;
  o->lost_steps = step_s > 0 ? c->lost_work_s / step_s : 0;
  o->kind_name = f->kind == WL_NODE_FAIL  ? "node-fail"
                 : f->kind == WL_GPU_FAIL ? "gpu-fail"
                                          : "transfer-failed";
  if (f->kind == WL_NODE_FAIL) snprintf(o->component, sizeof o->component, "node%u", o->node);
  else snprintf(o->component, sizeof o->component, "gpu%u", f->gpu);
  char detail[512]; /* why (up to 199) and the costs */
  if (f->kind == WL_NODE_FAIL)
    snprintf(detail, sizeof detail, "node fails with its %u GPUs (gpu%u first)",
             tr->cfg->cluster.gpus_per_node, f->gpu);
  else if (f->kind == WL_GPU_FAIL) snprintf(detail, sizeof detail, "GPU fails (node%u)", o->node);
  else
    snprintf(detail, sizeof detail,
             "a transfer gpu%u->gpu%u of the job's collectives failed (%s): the collective lost "
             "data, the communicator aborts",
             f->gpu, f->dst_gpu, o->cause);
  if (f->kind != WL_TRANSFER_FAIL) /* a transfer's failure: in the job-stopped event */
    run_event_add(log, at, o->component, o->kind_name, detail);
  char why[200] = "";
  if (f->kind == WL_TRANSFER_FAIL)
    snprintf(why, sizeof why, "transfer gpu%u->gpu%u failed (%s); ", f->gpu, f->dst_gpu, o->cause);
  snprintf(detail, sizeof detail,
           "%sthe synchronous job stops in step %u (%.6g s into it): %.6g s of work since the "
           "last checkpoint lost (%.4g GPU-hours), restart %.6g s + recompute %.6g s = %.6g s",
           why, f->step + 1, sim_ps_to_s(at - step_start), c->lost_work_s, c->lost_gpu_hours,
           c->restart_s, c->lost_work_s, c->restart_cost_s);
  run_event_add(log, at, "job", "job-stopped", detail);
}

/* Each silent data corruption: when replicas diverge and when checksums
 * every reliability.sdc_check_interval steps detect it; its events. */
static void sdc_of(run_training *tr, run_events *log, run_training_result *res) {
  size_t nev;
  const wl_gpu_event *ev = wl_job_events(tr->job, &nev);
  uint32_t every = tr->cfg->reliability.sdc_check_interval, done = wl_job_steps_done(tr->job);
  const wl_parallel *p = wl_job_parallel(tr->job);
  res->sdc = sim_calloc(nev ? nev : 1, sizeof *res->sdc);
  for (size_t i = 0; i < nev; i++) {
    const wl_gpu_event *e = &ev[i];
    if (e->kind != WL_GPU_SDC) continue;
    char comp[32], detail[320];
    snprintf(comp, sizeof comp, "gpu%u", e->gpu);
    run_sdc *o = &res->sdc[res->nsdc++];
    bool replicas = p->dp > 1 && e->stage != WL_NO_STAGE;
    /* beyond the simulated steps the reduction comes in the next step */
    uint64_t diverge = !replicas ? 0 : e->diverged ? (uint64_t)e->diverge_step + 1 : done + 1;
    uint64_t detect = rel_sdc_detect_step(diverge, every);
    *o = (run_sdc){.at = e->at,
                   .gpu = e->gpu,
                   .step = e->step + 1,
                   .check_interval = every,
                   .diverge_step = diverge,
                   .diverged = e->diverged,
                   .diverge_at = e->diverge_at,
                   .detect_step = detect};
    if (detect && detect <= done) {
      o->detect_at = wl_job_step(tr->job, (uint32_t)detect - 1)->end_ps;
      o->detect_known = true;
    } else if (detect && done) { /* extrapolated at the last step's length */
      const wl_step *s = wl_job_step(tr->job, done - 1);
      simtime_ps len = s->end_ps - s->start_ps;
      uint64_t more = detect - done;
      o->detect_known = len == 0 || more <= (SIM_TIME_MAX - s->end_ps) / len;
      o->detect_at = o->detect_known ? s->end_ps + more * len : SIM_TIME_MAX;
      o->detect_estimated = true;
    }
    if (!replicas)
      snprintf(detail, sizeof detail,
               "silent data corruption; no data-parallel replica to diverge "
               "from (dp = 1): replica checksums cannot detect it");
    else if (!every)
      snprintf(detail, sizeof detail,
               "silent data corruption: replicas diverge in step %llu%s; never detected "
               "(reliability.sdc_check_interval = 0)",
               (unsigned long long)diverge, e->diverged ? "" : " (after the simulated steps)");
    else {
      char when[64];
      snprintf(when, sizeof when, "%s",
               done ? "at a time past 2^64 ps" : "no step ended to time it by");
      if (o->detect_known)
        snprintf(when, sizeof when, "%s%.6g s", o->detect_estimated ? "about " : "",
                 sim_ps_to_s(o->detect_at));
      snprintf(detail, sizeof detail,
               "silent data corruption: replicas diverge in step %llu%s; replica checksums every "
               "%u steps detect it at the end of step %llu (%s)",
               (unsigned long long)diverge, e->diverged ? "" : " (after the simulated steps)",
               every, (unsigned long long)detect, when);
    }
    run_event_add(log, e->at, comp, "sdc", detail);
    if (e->diverged) {
      snprintf(detail, sizeof detail,
               "corrupted data from gpu%u enters the gradient reduction of "
               "step %llu: replicas diverge",
               e->gpu, (unsigned long long)diverge);
      run_event_add(log, e->diverge_at, comp, "sdc-diverge", detail);
    }
    if (detect && !o->detect_estimated) {
      snprintf(detail, sizeof detail, "replica checksums differ at the end of step %llu",
               (unsigned long long)detect);
      run_event_add(log, step_end(tr, (uint32_t)detect - 1), comp, "sdc-detected", detail);
    }
  }
}

/* GPU slowdowns of the fault list (thermal ones are logged per rack). */
static void slowdown_events(run_training *tr, run_events *log) {
  size_t nev;
  const wl_gpu_event *ev = wl_job_events(tr->job, &nev);
  for (size_t i = 0; i < nev; i++) {
    const wl_gpu_event *e = &ev[i];
    if (e->kind != WL_GPU_SLOWDOWN) continue;
    char comp[32], detail[256];
    snprintf(comp, sizeof comp, "gpu%u", e->gpu);
    if (e->stage == WL_NO_STAGE)
      snprintf(detail, sizeof detail, "runs at %.3g of its speed; not in the job", e->factor);
    else if (e->factor >= 1)
      snprintf(detail, sizeof detail, "back to full speed (node%u, rack %u)",
               topo_gpu_node(tr->t, e->gpu), run_gpu_rack(tr, e->gpu));
    else
      snprintf(detail, sizeof detail,
               "runs at %.3g of its speed (node%u, rack %u, pipeline stage %u): the synchronous "
               "job waits for it",
               e->factor, topo_gpu_node(tr->t, e->gpu), run_gpu_rack(tr, e->gpu), e->stage);
    run_event_add(log, e->at, comp, "gpu-slowdown", detail);
  }
}

void run_training_report(run_training *tr, const flt_sched *fs, run_events *log,
                         run_training_result *out) {
  memset(out, 0, sizeof *out);
  out->job = tr->job;
  out->base = tr->base;
  out->ckpt = tr->ckpt.every || tr->ckpt.load ? &tr->ckpt : NULL;
  run_step_stats_of(tr->job, &out->steps);
  run_ckpt_events(&tr->ckpt, NULL, log);
  slowdown_events(tr, log);
  failure_of(tr, log, &out->failure);
  sdc_of(tr, log, out);
  root_cause(tr, fs, log, &out->root_cause);
  /* power at the job's real utilization (compute share of the steps done);
   * racks throttle as they did in the run (at the fault-free utilization) */
  uint32_t done = wl_job_steps_done(tr->job);
  double total = 0;
  for (uint32_t k = 0; k < done; k++) total += wl_job_step(tr->job, k)->time_s;
  run_power *pw = &out->power;
  pw->model = &tr->pwr;
  pw->utilization = run_job_utilization(tr->job);
  pw->step_s = done ? total / done : 0;
  pw->run_s = tr->cfg->reliability.days * 86400.0;
  pw->source = "job";
  pw->job = true;
  pwr_summarize(&tr->pwr, pw->utilization, pw->step_s, pw->run_s, &pw->sum);
  pw->have_throttle_utilization = tr->base != NULL;
  pw->throttle_utilization = tr->utilization;
  run_events_sort(log);
}

const char *run_step_fig_key(run_step_fig f) {
  static const char *const keys[RUN_STEP_NFIGS] = {"time_s",   "compute_s", "exposed_comm_s",
                                                   "bubble_s", "mfu",       "tokens_per_s"};
  return f < RUN_STEP_NFIGS ? keys[f] : "";
}

/* Figure f of step k. */
static double step_fig(const wl_job *j, uint32_t k, run_step_fig f) {
  const wl_step *s = wl_job_step(j, k);
  switch (f) {
  case RUN_STEP_TIME: return s->time_s;
  case RUN_STEP_COMPUTE: return s->compute_s;
  case RUN_STEP_EXPOSED_COMM: return s->exposed_comm_s;
  case RUN_STEP_BUBBLE: return s->bubble_s;
  case RUN_STEP_MFU: return s->mfu;
  default: return s->tokens_per_s;
  }
}

void run_step_stats_of(const wl_job *j, run_step_stats *out) {
  memset(out, 0, sizeof *out);
  uint32_t n = j ? wl_job_steps_done(j) : 0;
  out->steps = n;
  for (run_step_fig f = 0; n && f < RUN_STEP_NFIGS; f++) {
    bool rate = f == RUN_STEP_MFU || f == RUN_STEP_TOKENS_PER_S;
    double first = step_fig(j, 0, f), lo = first, hi = first, d = 0, wsum = 0, tsum = 0, ss = 0;
    for (uint32_t k = 0; k < n; k++) { /* about the first: equal steps give it exactly */
      double x = step_fig(j, k, f), t = wl_job_step(j, k)->time_s;
      d += x - first;
      wsum += (x - first) * t;
      tsum += t;
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
    double am = first + d / n; /* the spread is about the per-step values' own mean */
    for (uint32_t k = 0; k < n; k++) ss += (step_fig(j, k, f) - am) * (step_fig(j, k, f) - am);
    out->fig[f] = (run_stat){.mean = rate ? first + (tsum > 0 ? wsum / tsum : 0) : am,
                             .stdev = sqrt(ss / n),
                             .min = lo,
                             .max = hi};
  }
}

void run_training_result_free(run_training_result *r) {
  sim_free(r->sdc);
  rel_rc_result_free(&r->root_cause);
  memset(r, 0, sizeof *r);
}

int run_power_of(run_power *out, pwr_model *m, const cfg_scenario *cfg, const cfg_doc *doc,
                 const topo *t, double step_s, sim_error *err) {
  memset(out, 0, sizeof *out);
  int rc = pwr_init(m, cfg, doc, topo_inventory_get(t), err);
  if (rc != SIM_OK) return rc;
  *out = (run_power){.model = m,
                     .utilization = cfg->power.utilization,
                     .step_s = step_s,
                     .run_s = cfg->reliability.days * 86400.0,
                     .source = "power.utilization"};
  pwr_summarize(m, out->utilization, out->step_s, out->run_s, &out->sum);
  return SIM_OK;
}
