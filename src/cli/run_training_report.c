/* fabsim run, workload.kind training: the operator's view of the job once
 * it ran (run_training.c runs it): steps, events, root cause against the
 * fault-free baseline, failure cost, SDC detection, power, and their lines
 * in the terminal summary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/run_training.h"
#include "fabsim/out.h"
#include "fabsim/reliability.h"
#include "fabsim/rootcause.h"

/* ---- summary --------------------------------------------------------------------------- */

static json_t *steps_json(const wl_job *j, const wl_job *base) {
  json_t *a = json_array();
  for (uint32_t k = 0; k < wl_job_steps_done(j); k++) {
    const wl_step *s = wl_job_step(j, k);
    json_t *e = json_object();
    json_object_set_new(e, "step", json_integer(k + 1));
    json_object_set_new(e, "start_s", json_real(s->start_s));
    json_object_set_new(e, "time_s", json_real(s->time_s));
    json_object_set_new(e, "compute_s", json_real(s->compute_s));
    json_object_set_new(e, "exposed_comm_s", json_real(s->exposed_comm_s));
    json_object_set_new(e, "bubble_s", json_real(s->bubble_s));
    const wl_step *b = base && k < wl_job_steps_done(base) ? wl_job_step(base, k) : NULL;
    json_object_set_new(e, "baseline_s", b ? json_real(b->time_s) : json_null());
    json_array_append_new(a, e);
  }
  return a;
}

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

/* Network faults of the scenario, for the root cause: when each was active. */
static rel_rc_net *network_faults(const cfg_scenario *cfg, uint32_t *n) {
  rel_rc_net *v = sim_calloc(cfg->faults.n ? cfg->faults.n : 1, sizeof *v);
  *n = 0;
  for (uint32_t i = 0; i < cfg->faults.n; i++) {
    const cfg_fault *f = &cfg->faults.v[i];
    if (!cfg_fault_is_network(f->kind) || f->kind == CFG_FAULT_LINK_UP ||
        f->kind == CFG_FAULT_SWITCH_UP || f->kind == CFG_FAULT_NIC_UP)
      continue;
    rel_rc_net *x = &v[(*n)++];
    x->at_s = sim_ps_to_s(f->at);
    x->until_s = -1;
    if (f->kind == CFG_FAULT_LINK_FLAP)
      x->until_s = sim_ps_to_s(f->at + (simtime_ps)f->count * f->period);
    else if (f->duration) x->until_s = sim_ps_to_s(f->at + f->duration);
    for (uint32_t k = 0; k < cfg->faults.n; k++) { /* an explicit -up entry ends it */
      const cfg_fault *u = &cfg->faults.v[k];
      bool up = u->kind == CFG_FAULT_LINK_UP || u->kind == CFG_FAULT_SWITCH_UP ||
                u->kind == CFG_FAULT_NIC_UP;
      if (up && u->at > f->at && !strcmp(u->target, f->target) &&
          (x->until_s < 0 || sim_ps_to_s(u->at) < x->until_s))
        x->until_s = sim_ps_to_s(u->at);
    }
    x->component = f->target;
    x->kind = cfg_fault_kind_name(f->kind);
  }
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

static json_t *root_cause(cli_training *tr, json_t *events) {
  const wl_job *j = tr->job, *b = tr->base;
  uint32_t nrun = wl_job_steps_done(j), nbase = b ? wl_job_steps_done(b) : 0;
  if (!b || !nrun || !nbase) return json_array();
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
    for (uint32_t k = 0; k < (side ? nbase : nrun) && k < tr->nfab[side]; k++) {
      rel_rc_step *x = side ? &base[k] : &run[k];
      x->fabric = tr->fab[side][k].observed;
      x->pfc_paused_s = tr->fab[side][k].pfc_paused_s;
      x->ecn_marks = tr->fab[side][k].ecn_marks;
    }
  rel_rc_slow *slow = sim_calloc(nev ? nev : 1, sizeof *slow);
  uint32_t ngpu = topo_gpu_count(tr->t);
  uint32_t nslow = 0;
  for (size_t i = 0; i < nev; i++) {
    const wl_gpu_event *e = &ev[i];
    if ((e->kind != WL_GPU_SLOWDOWN && e->kind != WL_GPU_THERMAL) || e->stage == WL_NO_STAGE)
      continue;
    slow[nslow++] = (rel_rc_slow){.at_s = sim_ps_to_s(e->at),
                                  .until_s = -1,
                                  .factor = e->factor,
                                  .gpu = e->gpu,
                                  .node = topo_gpu_node(tr->t, e->gpu),
                                  .rack = cli__gpu_rack(tr, e->gpu),
                                  .stage = e->stage,
                                  .thermal = e->kind == WL_GPU_THERMAL};
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
  rel_rc_net *net = network_faults(tr->cfg, &nnet);
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
  json_t *rc = rel_root_cause(&in);
  size_t i;
  json_t *e;
  json_array_foreach(rc, i, e) { /* a step over its baseline: a straggler event */
    const json_t *causes = json_object_get(e, "causes");
    const json_t *c0 = json_array_get(causes, 0);
    double end = json_real_value(json_object_get(e, "start_s")) +
                 json_real_value(json_object_get(e, "time_s"));
    cli_event_add(events, end, c0 ? json_string_value(json_object_get(c0, "component")) : "job",
                  "straggler", json_string_value(json_object_get(e, "text")));
  }
  sim_free(net);
  sim_free(slow);
  sim_free(arr);
  sim_free(run);
  sim_free(base);
  return rc;
}

/* Checkpoint interval, write time and restart time of the scenario
 * (interval auto: Daly's for the job's nodes). The keys were checked when
 * the scenario was loaded (config/validate.c), so this cannot fail. */
static void checkpoint_model(const cli_training *tr, uint32_t gpus, double *tau, double *delta,
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

static json_t *failure_json(cli_training *tr, json_t *events) {
  simtime_ps at, step_start;
  if (!wl_job_stopped(tr->job, &at, &step_start)) return json_null();
  size_t nev;
  const wl_gpu_event *ev = wl_job_events(tr->job, &nev), *f = NULL;
  for (size_t i = 0; i < nev; i++)
    if (ev[i].kind == WL_GPU_FAIL || ev[i].kind == WL_NODE_FAIL || ev[i].kind == WL_TRANSFER_FAIL)
      f = &ev[i];
  if (!f) return json_null();
  const wl_parallel *p = wl_job_parallel(tr->job);
  uint32_t gpus = p->dp * p->tp * p->pp;
  double tau, delta, restart;
  bool is_auto;
  checkpoint_model(tr, gpus, &tau, &delta, &restart, &is_auto);
  rel_failure_cost c;
  rel_failure_cost_of(sim_ps_to_s(at), tau, delta, restart, gpus, &c);
  uint32_t done = wl_job_steps_done(tr->job);
  double step_s = done                                      ? wl_job_step(tr->job, done - 1)->time_s
                  : tr->base && wl_job_steps_done(tr->base) ? wl_job_step(tr->base, 0)->time_s
                                                            : 0;
  char comp[32];
  const char *kind = f->kind == WL_NODE_FAIL  ? "node-fail"
                     : f->kind == WL_GPU_FAIL ? "gpu-fail"
                                              : "transfer-failed";
  if (f->kind == WL_NODE_FAIL) snprintf(comp, sizeof comp, "node%u", topo_gpu_node(tr->t, f->gpu));
  else snprintf(comp, sizeof comp, "gpu%u", f->gpu);
  json_t *o = json_object();
  json_object_set_new(o, "at_s", json_real(c.at_s));
  json_object_set_new(o, "component", json_string(comp));
  json_object_set_new(o, "kind", json_string(kind));
  if (f->kind == WL_TRANSFER_FAIL) { /* the root cause is the fabric's: say what broke */
    json_object_set_new(o, "dst_gpu", json_integer(f->dst_gpu));
    json_object_set_new(o, "cause", json_string(f->cause ? f->cause : "unknown"));
  }
  json_object_set_new(o, "node", json_integer(topo_gpu_node(tr->t, f->gpu)));
  json_object_set_new(o, "step", json_integer(f->step + 1));
  json_object_set_new(o, "steps_completed", json_integer(done));
  json_object_set_new(o, "step_progress_s", json_real(sim_ps_to_s(at - step_start)));
  json_object_set_new(o, "checkpoint_interval_s", json_real(tau));
  json_object_set_new(o, "checkpoint_interval_auto", json_boolean(is_auto));
  json_object_set_new(o, "checkpoint_write_s", json_real(delta));
  json_object_set_new(o, "since_checkpoint_s", json_real(c.since_checkpoint_s));
  json_object_set_new(o, "lost_work_s", json_real(c.lost_work_s));
  json_object_set_new(o, "lost_gpu_hours", json_real(c.lost_gpu_hours));
  json_object_set_new(o, "lost_steps", json_real(step_s > 0 ? c.lost_work_s / step_s : 0));
  json_object_set_new(o, "expected_lost_work_s", json_real(c.expected_lost_work_s));
  json_object_set_new(o, "restart_s", json_real(c.restart_s));
  json_object_set_new(o, "recompute_s", json_real(c.lost_work_s));
  json_object_set_new(o, "restart_cost_s", json_real(c.restart_cost_s));
  char detail[320];
  if (f->kind == WL_NODE_FAIL)
    snprintf(detail, sizeof detail, "node fails with its %u GPUs (gpu%u first)",
             tr->cfg->cluster.gpus_per_node, f->gpu);
  else if (f->kind == WL_GPU_FAIL)
    snprintf(detail, sizeof detail, "GPU fails (node%u)", topo_gpu_node(tr->t, f->gpu));
  else
    snprintf(detail, sizeof detail,
             "a transfer gpu%u->gpu%u of the job's collectives failed (%s): the collective lost "
             "data, the communicator aborts",
             f->gpu, f->dst_gpu, f->cause ? f->cause : "unknown");
  if (f->kind != WL_TRANSFER_FAIL) /* a transfer's failure: in the job-stopped event */
    cli_event_add(events, c.at_s, comp, kind, detail);
  char why[200] = "";
  if (f->kind == WL_TRANSFER_FAIL)
    snprintf(why, sizeof why, "transfer gpu%u->gpu%u failed (%s); ", f->gpu, f->dst_gpu,
             f->cause ? f->cause : "unknown");
  snprintf(detail, sizeof detail,
           "%sthe synchronous job stops in step %u (%.6g s into it): %.6g s of work since the "
           "last checkpoint lost (%.4g GPU-hours), restart %.6g s + recompute %.6g s = %.6g s",
           why, f->step + 1, sim_ps_to_s(at - step_start), c.lost_work_s, c.lost_gpu_hours,
           c.restart_s, c.lost_work_s, c.restart_cost_s);
  cli_event_add(events, c.at_s, "job", "job-stopped", detail);
  return o;
}

static json_t *sdc_json(cli_training *tr, json_t *events) {
  json_t *a = json_array();
  size_t nev;
  const wl_gpu_event *ev = wl_job_events(tr->job, &nev);
  uint32_t every = tr->cfg->reliability.sdc_check_interval, done = wl_job_steps_done(tr->job);
  const wl_parallel *p = wl_job_parallel(tr->job);
  for (size_t i = 0; i < nev; i++) {
    const wl_gpu_event *e = &ev[i];
    if (e->kind != WL_GPU_SDC) continue;
    char comp[32], detail[320];
    snprintf(comp, sizeof comp, "gpu%u", e->gpu);
    json_t *o = json_object();
    json_object_set_new(o, "at_s", json_real(sim_ps_to_s(e->at)));
    json_object_set_new(o, "gpu", json_integer(e->gpu));
    json_object_set_new(o, "step", json_integer(e->step + 1));
    json_object_set_new(o, "check_interval", json_integer(every));
    bool replicas = p->dp > 1 && e->stage != WL_NO_STAGE;
    /* beyond the simulated steps the reduction comes in the next step */
    uint64_t diverge = !replicas ? 0 : e->diverged ? (uint64_t)e->diverge_step + 1 : done + 1;
    json_object_set_new(o, "diverge_step",
                        diverge ? json_integer((json_int_t)diverge) : json_null());
    json_object_set_new(o, "diverge_at_s",
                        e->diverged ? json_real(sim_ps_to_s(e->diverge_at)) : json_null());
    uint64_t detect = rel_sdc_detect_step(diverge, every);
    json_object_set_new(o, "detect_step", detect ? json_integer((json_int_t)detect) : json_null());
    double detect_at = NAN;
    bool estimated = false;
    if (detect && detect <= done) {
      const wl_step *s = wl_job_step(tr->job, (uint32_t)detect - 1);
      detect_at = s->start_s + s->time_s;
    } else if (detect && done) { /* extrapolated at the last step's length */
      const wl_step *s = wl_job_step(tr->job, done - 1);
      detect_at = s->start_s + s->time_s + (double)(detect - done) * s->time_s;
      estimated = true;
    }
    json_object_set_new(o, "detect_at_s", isfinite(detect_at) ? json_real(detect_at) : json_null());
    json_object_set_new(o, "detect_estimated", json_boolean(estimated));
    json_array_append_new(a, o);
    if (!replicas)
      snprintf(detail, sizeof detail,
               "silent data corruption; no data-parallel replica to diverge "
               "from (dp = 1): replica checksums cannot detect it");
    else if (!every)
      snprintf(detail, sizeof detail,
               "silent data corruption: replicas diverge in step %llu%s; never detected "
               "(reliability.sdc_check_interval = 0)",
               (unsigned long long)diverge, e->diverged ? "" : " (after the simulated steps)");
    else
      snprintf(detail, sizeof detail,
               "silent data corruption: replicas diverge in step %llu%s; replica checksums every "
               "%u steps detect it at the end of step %llu (%s%.6g s)",
               (unsigned long long)diverge, e->diverged ? "" : " (after the simulated steps)",
               every, (unsigned long long)detect, estimated ? "about " : "", detect_at);
    cli_event_add(events, sim_ps_to_s(e->at), comp, "sdc", detail);
    if (e->diverged) {
      snprintf(detail, sizeof detail,
               "corrupted data from gpu%u enters the gradient reduction of "
               "step %llu: replicas diverge",
               e->gpu, (unsigned long long)diverge);
      cli_event_add(events, sim_ps_to_s(e->diverge_at), comp, "sdc-diverge", detail);
    }
    if (detect && !estimated) {
      snprintf(detail, sizeof detail, "replica checksums differ at the end of step %llu",
               (unsigned long long)detect);
      cli_event_add(events, detect_at, comp, "sdc-detected", detail);
    }
  }
  return a;
}

/* GPU slowdowns of the fault list (thermal ones are logged per rack). */
static void slowdown_events(cli_training *tr, json_t *events) {
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
               topo_gpu_node(tr->t, e->gpu), cli__gpu_rack(tr, e->gpu));
    else
      snprintf(detail, sizeof detail,
               "runs at %.3g of its speed (node%u, rack %u, pipeline stage %u): the synchronous "
               "job waits for it",
               e->factor, topo_gpu_node(tr->t, e->gpu), cli__gpu_rack(tr, e->gpu), e->stage);
    cli_event_add(events, sim_ps_to_s(e->at), comp, "gpu-slowdown", detail);
  }
}

static int by_time(const void *a, const void *b) {
  double x = json_number_value(json_object_get(*(json_t *const *)a, "at_s"));
  double y = json_number_value(json_object_get(*(json_t *const *)b, "at_s"));
  return x < y ? -1 : x > y;
}

/* Events in time order (stable: insertion order among equal times). */
static void sort_events(json_t *events) {
  size_t n = json_array_size(events);
  json_t **v = sim_malloc((n ? n : 1) * sizeof *v);
  for (size_t i = 0; i < n; i++) v[i] = json_incref(json_array_get(events, i));
  /* insertion sort: stable, and the log is nearly sorted */
  for (size_t i = 1; i < n; i++)
    for (size_t k = i; k > 0 && by_time(&v[k - 1], &v[k]) > 0; k--) {
      json_t *t = v[k];
      v[k] = v[k - 1];
      v[k - 1] = t;
    }
  json_array_clear(events);
  for (size_t i = 0; i < n; i++) json_array_append_new(events, v[i]);
  sim_free(v);
}

void cli_training_summary(cli_training *tr, json_t *summary, json_t *events) {
  uint32_t done = wl_job_steps_done(tr->job);
  const wl_step *s0 = done ? wl_job_step(tr->job, 0) : NULL;
  if (s0) json_object_set_new(summary, "step", cli_step_json(s0, tr->cfg));
  json_object_set_new(summary, "steps", steps_json(tr->job, tr->base));
  slowdown_events(tr, events);
  json_object_set_new(summary, "failure", failure_json(tr, events));
  json_object_set_new(summary, "sdc", sdc_json(tr, events));
  json_object_set_new(summary, "root_cause", root_cause(tr, events));
  /* power at the job's real utilization (compute share of the steps done);
   * racks throttle as they did in the run (at the fault-free utilization) */
  double total = 0;
  for (uint32_t k = 0; k < done; k++) total += wl_job_step(tr->job, k)->time_s;
  double u = cli__job_utilization(tr->job), step_s = done ? total / done : 0;
  json_t *pw = pwr_summary_json(&tr->pwr, u, step_s, tr->cfg->reliability.days * 86400.0);
  json_object_set_new(pw, "utilization_source", json_string("job"));
  /* the racks' throttling in the run was decided at the fault-free utilization */
  json_object_set_new(pw, "throttle_utilization",
                      tr->base ? json_real(tr->utilization) : json_null());
  json_object_set_new(summary, "power", pw);
  sort_events(events);
}

/* ---- text ------------------------------------------------------------------------------ */

static double num(const json_t *o, const char *k) {
  return json_number_value(json_object_get(o, k));
}

void cli_training_text(const json_t *summary) {
  char a[64], b[64], c[64];
  const json_t *steps = json_object_get(summary, "steps");
  size_t n = json_array_size(steps);
  if (n > 1 || (n && !json_is_null(json_object_get(json_array_get(steps, 0), "baseline_s")))) {
    double sum = 0, base = 0;
    bool have_base = true;
    size_t i;
    const json_t *e;
    json_array_foreach(steps, i, e) {
      sum += num(e, "time_s");
      have_base = have_base && json_is_number(json_object_get(e, "baseline_s"));
      base += num(e, "baseline_s");
    }
    printf("  steps      %zu done, mean %s", n, out_fmt_seconds(a, sizeof a, sum / (double)n));
    if (have_base) printf(" (fault-free %s)", out_fmt_seconds(b, sizeof b, base / (double)n));
    printf("\n");
  }
  const json_t *f = json_object_get(summary, "failure");
  if (json_is_object(f)) {
    printf("failure      %s %s at %s in step %d: job stopped\n",
           json_string_value(json_object_get(f, "kind")),
           json_string_value(json_object_get(f, "component")),
           out_fmt_seconds(a, sizeof a, num(f, "at_s")), (int)num(f, "step"));
    if (json_is_string(json_object_get(f, "cause")))
      printf("  cause      transfer gpu%d->gpu%d: %s; the collective lost data\n",
             atoi(json_string_value(json_object_get(f, "component")) + 3), (int)num(f, "dst_gpu"),
             json_string_value(json_object_get(f, "cause")));
    printf(
        "  lost       %s of work since the last checkpoint (%.4g GPU-hours; checkpoint every "
        "%s%s; at a random time the loss averages %s)\n",
        out_fmt_seconds(a, sizeof a, num(f, "lost_work_s")), num(f, "lost_gpu_hours"),
        out_fmt_seconds(b, sizeof b, num(f, "checkpoint_interval_s")),
        json_is_true(json_object_get(f, "checkpoint_interval_auto")) ? " (Daly)" : "",
        out_fmt_seconds(c, sizeof c, num(f, "expected_lost_work_s")));
    printf("  restart    %s + recompute %s = %s\n",
           out_fmt_seconds(a, sizeof a, num(f, "restart_s")),
           out_fmt_seconds(b, sizeof b, num(f, "recompute_s")),
           out_fmt_seconds(c, sizeof c, num(f, "restart_cost_s")));
  }
  size_t i;
  const json_t *e;
  json_array_foreach(json_object_get(summary, "sdc"), i, e) {
    printf("sdc          gpu%d at %s: ", (int)num(e, "gpu"),
           out_fmt_seconds(a, sizeof a, num(e, "at_s")));
    if (json_is_null(json_object_get(e, "diverge_step"))) printf("no replicas to diverge from\n");
    else if (json_is_null(json_object_get(e, "detect_step")))
      printf("replicas diverge in step %d, never detected (no replica checksums)\n",
             (int)num(e, "diverge_step"));
    else
      printf("replicas diverge in step %d, detected at the end of step %d (%s%s)\n",
             (int)num(e, "diverge_step"), (int)num(e, "detect_step"),
             json_is_true(json_object_get(e, "detect_estimated")) ? "about " : "",
             out_fmt_seconds(b, sizeof b, num(e, "detect_at_s")));
  }
  const json_t *rc = json_object_get(summary, "root_cause");
  json_array_foreach(rc, i, e) {
    if (i == 5) {
      printf("  ...        %zu more steps in summary.json root_cause\n", json_array_size(rc) - 5);
      break;
    }
    printf("%-12s %s\n", i ? "" : "root cause", json_string_value(json_object_get(e, "text")));
  }
}
