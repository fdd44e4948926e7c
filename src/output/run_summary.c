/* fabsim run: summary.json, the one JSON writer of a run, built from the
 * run layer's typed results (fabsim/run.h) and the run's counters. Seconds
 * are formed here, from integer picoseconds, with sim_ps_to_s. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output/out_inference.h"
#include "output/out_internal.h"

static json_t *events_json(const run_events *log) {
  json_t *a = json_array();
  for (size_t i = 0; i < log->n; i++) {
    const run_event *e = &log->v[i];
    json_t *o = json_object();
    json_object_set_new(o, "at_s", json_real(sim_ps_to_s(e->at)));
    json_object_set_new(o, "component", json_string(e->component));
    json_object_set_new(o, "kind", json_string(e->kind));
    json_object_set_new(o, "detail", json_string(e->detail));
    json_array_append_new(a, o);
  }
  return a;
}

static json_t *power_json(const run_power *p, const cfg_scenario *cfg, const tel *t,
                          const wl_job *job) {
  json_t *pw = out__power_json(p->model, p->utilization, p->step_s, p->run_s);
  if (cfg->power.timeseries)
    json_object_set_new(pw, "over_time", out__power_over_time_json(p, t, cfg, job));
  out__power_mitigations_add(pw, p, t, cfg, job);
  json_object_set_new(pw, "utilization_source", json_string(p->source));
  if (p->job) /* the racks' throttling in the run was decided at the fault-free utilization */
    json_object_set_new(
        pw, "throttle_utilization",
        p->have_throttle_utilization ? json_real(p->throttle_utilization) : json_null());
  return pw;
}

static json_t *steps_json(const wl_job *j, const wl_job *base) {
  json_t *a = json_array();
  for (uint32_t k = 0; k < wl_job_steps_done(j); k++) {
    const wl_step *s = wl_job_step(j, k);
    json_t *e = json_object();
    json_object_set_new(e, "step", json_integer(k + 1));
    json_object_set_new(e, "start_s", json_real(s->start_s));
    json_object_set_new(e, "time_s", json_real(s->time_s));
    json_object_set_new(e, "compute_s", json_real(s->compute_s));
    json_object_set_new(e, "comm_sm_lost_s", json_real(s->comm_sm_lost_s));
    json_object_set_new(e, "exposed_comm_s", json_real(s->exposed_comm_s));
    json_object_set_new(e, "bubble_s", json_real(s->bubble_s));
    const wl_step *b = base && k < wl_job_steps_done(base) ? wl_job_step(base, k) : NULL;
    json_object_set_new(e, "baseline_s", b ? json_real(b->time_s) : json_null());
    json_array_append_new(a, e);
  }
  return a;
}

/* step_stats: run_step_stats_of's, a figure each. */
static json_t *step_stats_json(const run_step_stats *st) {
  json_t *o = json_object();
  json_object_set_new(o, "steps", json_integer(st->steps));
  for (run_step_fig f = 0; f < RUN_STEP_NFIGS; f++) {
    json_t *e = json_object();
    json_object_set_new(e, "mean", json_real(st->fig[f].mean));
    json_object_set_new(e, "stdev", json_real(st->fig[f].stdev));
    json_object_set_new(e, "min", json_real(st->fig[f].min));
    json_object_set_new(e, "max", json_real(st->fig[f].max));
    json_object_set_new(o, run_step_fig_key(f), e);
  }
  return o;
}

static json_t *failure_json(const run_failure *f) {
  if (!f->happened) return json_null();
  const rel_failure_cost *c = &f->cost;
  json_t *o = json_object();
  json_object_set_new(o, "at_s", json_real(c->at_s));
  json_object_set_new(o, "component", json_string(f->component));
  json_object_set_new(o, "kind", json_string(f->kind_name));
  if (f->kind == WL_TRANSFER_FAIL) { /* the root cause is the fabric's: say what broke */
    json_object_set_new(o, "dst_gpu", json_integer(f->dst_gpu));
    json_object_set_new(o, "cause", json_string(f->cause));
  }
  json_object_set_new(o, "node", json_integer(f->node));
  json_object_set_new(o, "step", json_integer(f->step));
  json_object_set_new(o, "steps_completed", json_integer(f->steps_completed));
  json_object_set_new(o, "step_progress_s", json_real(sim_ps_to_s(f->at - f->step_start)));
  json_object_set_new(o, "checkpoint_interval_s", json_real(f->checkpoint_interval_s));
  json_object_set_new(o, "checkpoint_interval_auto", json_boolean(f->checkpoint_interval_auto));
  json_object_set_new(o, "checkpoint_write_s", json_real(f->checkpoint_write_s));
  json_object_set_new(o, "since_checkpoint_s", json_real(c->since_checkpoint_s));
  json_object_set_new(o, "lost_work_s", json_real(c->lost_work_s));
  json_object_set_new(o, "lost_gpu_hours", json_real(c->lost_gpu_hours));
  json_object_set_new(o, "lost_steps", json_real(f->lost_steps));
  json_object_set_new(o, "expected_lost_work_s", json_real(c->expected_lost_work_s));
  json_object_set_new(o, "restart_s", json_real(c->restart_s));
  json_object_set_new(o, "recompute_s", json_real(c->lost_work_s));
  json_object_set_new(o, "restart_cost_s", json_real(c->restart_cost_s));
  return o;
}

static json_t *sdc_json(const run_training_result *r) {
  json_t *a = json_array();
  for (uint32_t i = 0; i < r->nsdc; i++) {
    const run_sdc *e = &r->sdc[i];
    json_t *o = json_object();
    json_object_set_new(o, "at_s", json_real(sim_ps_to_s(e->at)));
    json_object_set_new(o, "gpu", json_integer(e->gpu));
    json_object_set_new(o, "step", json_integer(e->step));
    json_object_set_new(o, "check_interval", json_integer(e->check_interval));
    json_object_set_new(o, "diverge_step",
                        e->diverge_step ? json_integer((json_int_t)e->diverge_step) : json_null());
    json_object_set_new(o, "diverge_at_s",
                        e->diverged ? json_real(sim_ps_to_s(e->diverge_at)) : json_null());
    json_object_set_new(o, "detect_step",
                        e->detect_step ? json_integer((json_int_t)e->detect_step) : json_null());
    json_object_set_new(o, "detect_at_s",
                        e->detect_known ? json_real(sim_ps_to_s(e->detect_at)) : json_null());
    json_object_set_new(o, "detect_estimated", json_boolean(e->detect_estimated));
    json_array_append_new(a, o);
  }
  return a;
}

static json_t *root_cause_json(const rel_rc_result *rc) {
  json_t *out = json_array();
  for (uint32_t i = 0; i < rc->n; i++) {
    const rel_rc_entry *x = &rc->v[i];
    json_t *causes = json_array();
    for (uint32_t k = 0; k < x->ncauses; k++) {
      const rel_rc_cause *c = &x->causes[k];
      json_t *o = json_object();
      json_object_set_new(o, "component", json_string(c->component));
      json_object_set_new(o, "kind", json_string(c->kind));
      json_object_set_new(o, "effect_s", json_real(c->effect_s));
      json_object_set_new(o, "text", json_string(c->text));
      json_array_append_new(causes, o);
    }
    json_t *e = json_object();
    json_object_set_new(e, "step", json_integer((json_int_t)x->step));
    json_object_set_new(e, "start_s", json_real(x->start_s));
    json_object_set_new(e, "time_s", json_real(x->time_s));
    json_object_set_new(e, "baseline_s", json_real(x->baseline_s));
    json_object_set_new(e, "excess_s", json_real(x->excess_s));
    json_object_set_new(e, "excess_frac", json_real(x->excess_frac));
    json_object_set_new(e, "text", json_string(x->text));
    json_object_set_new(e, "causes", causes);
    json_array_append_new(out, e);
  }
  return out;
}

/* The checkpoints of a training run: their size, writers and placement,
 * then each write's times, bandwidth and cost to the steps it overlapped. */
static json_t *checkpoints_json(const run_ckpt *c) {
  json_t *o = json_object(), *list = json_array();
  json_object_set_new(o, "every", json_integer(c->every));
  json_object_set_new(o, "mode", json_string(c->sync ? "sync" : "async"));
  json_object_set_new(o, "attach", json_string(c->separate ? "separate" : "backend"));
  json_object_set_new(o, "bytes", out_json_u64(c->size));
  json_object_set_new(o, "writers", json_integer(c->writers));
  for (size_t i = 0; i < c->n; i++) {
    const run_checkpoint *k = &c->v[i];
    json_t *e = json_object();
    bool written = k->end && !k->failed; /* a failed write has no time or bandwidth */
    double s = written ? sim_ps_to_s(k->end - k->start) : 0;
    json_object_set_new(e, "after_step", json_integer(k->after_step));
    json_object_set_new(e, "start_s", json_real(sim_ps_to_s(k->start)));
    json_object_set_new(e, "end_s", k->end ? json_real(sim_ps_to_s(k->end)) : json_null());
    json_object_set_new(e, "bytes", out_json_u64(k->bytes));
    json_object_set_new(e, "time_s", written ? json_real(s) : json_null());
    json_object_set_new(e, "bandwidth_GBps",
                        written && s > 0 ? json_real((double)k->bytes / s / 1e9) : json_null());
    if (k->failed) {
      json_t *f = json_object();
      json_object_set_new(f, "transfers", json_integer(k->failed));
      json_object_set_new(f, "bytes_undelivered", out_json_u64(k->undelivered));
      json_object_set_new(f, "cause", json_string(k->cause ? k->cause : "unknown"));
      json_object_set_new(e, "failed", f);
    }
    json_object_set_new(e, "first_step", k->first_step ? json_integer(k->first_step) : json_null());
    json_object_set_new(e, "last_step", k->last_step ? json_integer(k->last_step) : json_null());
    json_object_set_new(e, "steps_slowed_s", json_real(k->slowdown_s));
    json_object_set_new(e, "stall_s", json_real(k->stall_s));
    json_array_append_new(list, e);
  }
  json_object_set_new(o, "list", list);
  return o;
}

/* "checkpoints" and "data_loading" of a training run or job, when it has them. */
static void storage_json(const run_ckpt *c, json_t *into) {
  if (c && c->every) json_object_set_new(into, "checkpoints", checkpoints_json(c));
  if (c && c->load) {
    json_t *o = json_object();
    json_object_set_new(o, "readers", json_integer(c->readers));
    json_object_set_new(o, "bytes_per_step", out_json_u64(c->load_bytes));
    json_object_set_new(o, "reads", json_integer((json_int_t)c->loads));
    json_object_set_new(o, "reads_late", json_integer((json_int_t)c->loads_late));
    if (c->loads_failed) { /* reads whose tokens did not arrive: not in reads */
      json_object_set_new(o, "reads_failed", json_integer((json_int_t)c->loads_failed));
      json_object_set_new(o, "read_failure_cause", json_string(c->load_cause));
    }
    json_object_set_new(o, "max_time_s", json_real(sim_ps_to_s(c->load_max)));
    json_object_set_new(into, "data_loading", o);
  }
}

static void training_json(const run_training_result *r, const cfg_scenario *cfg, const tel *t,
                          json_t *summary) {
  storage_json(r->ckpt, summary);
  uint32_t done = wl_job_steps_done(r->job);
  if (done) json_object_set_new(summary, "step", out__step_json(wl_job_step(r->job, 0), cfg));
  json_object_set_new(summary, "steps", steps_json(r->job, r->base));
  if (done) json_object_set_new(summary, "step_stats", step_stats_json(&r->steps));
  json_object_set_new(summary, "failure", failure_json(&r->failure));
  json_object_set_new(summary, "sdc", sdc_json(r));
  json_object_set_new(summary, "root_cause", root_cause_json(&r->root_cause));
  json_object_set_new(summary, "power", power_json(&r->power, cfg, t, r->job));
}

/* The failure object of a collective or traffic run: what broke first. */
static json_t *transfer_failure_json(const run_result *r) {
  json_t *f = json_object();
  if (r->w->gpu_failed) { /* traces: a GPU or node of the job failed */
    const trc_failure *g = &r->w->gpu_failure;
    char comp[32];
    snprintf(comp, sizeof comp, "gpu%u", g->gpu);
    json_object_set_new(f, "kind", json_string(g->whole_node ? "node-fail" : "gpu-fail"));
    json_object_set_new(f, "transfers_failed", json_integer((json_int_t)r->w->failures));
    json_object_set_new(f, "at_s", json_real(sim_ps_to_s(g->at)));
    json_object_set_new(f, "component", json_string(comp));
    return f;
  }
  json_object_set_new(f, "kind", json_string("transfer-failed"));
  json_object_set_new(f, "transfers_failed", json_integer((json_int_t)r->w->failures));
  if (r->w->have_first) {
    char comp[32];
    snprintf(comp, sizeof comp, "gpu%u", r->w->first.src_gpu);
    json_object_set_new(f, "at_s", json_real(sim_ps_to_s(r->w->first.at)));
    json_object_set_new(f, "component", json_string(comp));
    json_object_set_new(f, "dst_gpu", json_integer(r->w->first.dst_gpu));
    json_object_set_new(f, "cause", json_string(r->w->first.cause ? r->w->first.cause : "unknown"));
  }
  return f;
}

/* A counter the fidelity observed, or null: the analytic and flow models have
 * no queues, so they report no pauses or drops rather than zero. */
static json_t *observed_int(const be_stats *st, unsigned what, uint64_t v) {
  return (st->observed & what) ? json_integer((json_int_t)v) : json_null();
}

static json_t *network_json(const be_stats *st) {
  json_t *n = json_object();
  json_object_set_new(n, "transfers", json_integer((json_int_t)st->transfers));
  json_object_set_new(n, "transfers_failed", json_integer((json_int_t)st->transfers_failed));
  json_object_set_new(n, "flows_rerouted", json_integer((json_int_t)st->flows_rerouted));
  json_object_set_new(n, "bytes", out_json_u64(st->bytes));
  json_object_set_new(n, "max_link_sharing", json_integer(st->max_link_sharing));
  json_object_set_new(n, "packets", observed_int(st, BE_OBS_PACKETS, st->packets));
  json_object_set_new(n, "ecn_marks", observed_int(st, BE_OBS_PACKETS, st->ecn_marks));
  json_object_set_new(n, "cnps", observed_int(st, BE_OBS_PACKETS, st->cnps));
  json_object_set_new(n, "pfc_pauses", observed_int(st, BE_OBS_PACKETS, st->pfc_pauses));
  json_object_set_new(
      n, "pfc_paused_s",
      (st->observed & BE_OBS_PACKETS) ? json_real(sim_ps_to_s(st->pfc_paused)) : json_null());
  json_object_set_new(n, "drops", observed_int(st, BE_OBS_PACKETS, st->drops));
  json_object_set_new(n, "retransmits", observed_int(st, BE_OBS_PACKETS, st->retransmits));
  json_object_set_new(n, "out_of_order", observed_int(st, BE_OBS_PACKETS, st->out_of_order));
  json_object_set_new(n, "max_queue_bytes", observed_int(st, BE_OBS_PACKETS, st->max_queue_bytes));
  json_object_set_new(
      n, "link_utilization_max",
      (st->observed & BE_OBS_PACKETS) ? json_real(st->link_utilization_max) : json_null());
  if (st->observed & BE_OBS_FCT) {
    json_t *f = json_object();
    json_object_set_new(f, "p50", json_real(sim_ps_to_s(st->fct_p50) * 1e6));
    json_object_set_new(f, "p99", json_real(sim_ps_to_s(st->fct_p99) * 1e6));
    json_object_set_new(f, "p999", json_real(sim_ps_to_s(st->fct_p999) * 1e6));
    json_object_set_new(f, "max", json_real(sim_ps_to_s(st->fct_max) * 1e6));
    json_object_set_new(f, "mean", json_real(st->fct_mean_s * 1e6));
    json_object_set_new(n, "fct_us", f);
  } else {
    json_object_set_new(n, "fct_us", json_null());
  }
  return n;
}

/* The jobs a job may meet on a link: name, how many leaves (and pods, whose
 * core links both use) in common, the first of them. */
static json_t *shares_json(const run_jobs *js, const run_job *job, const topo *t) {
  json_t *a = json_array();
  char name[64];
  for (uint32_t k = 0; k < job->nshares; k++) {
    const plc_sharing *w = &job->shares[k].where;
    json_t *o = json_object();
    json_object_set_new(o, "job", json_string(js->v[job->shares[k].job].cfg->name));
    json_object_set_new(o, "leaves", json_integer(w->leaves));
    json_object_set_new(o, "first_leaf",
                        w->leaves
                            ? json_string(topo_vertex_name(t, w->first_leaf, name, sizeof name))
                            : json_null());
    json_object_set_new(o, "pods", json_integer(w->pods));
    json_array_append_new(a, o);
  }
  return a;
}

const char *out__classes_model(cfg_fidelity f) {
  switch (f) {
  case CFG_FIDELITY_PACKET:
    return "per port: strict priority levels, deficit round robin within a level (quantum: "
           "weight x the largest frame); PFC per lossless class, tail drop for lossy ones; ECN "
           "thresholds and buffer share per class";
  case CFG_FIDELITY_FLOW:
    return "per channel: strict priority levels, weighted max-min among the classes of a level, "
           "a class's flows sharing its part equally; no queues, so no pauses, marks or drops; "
           "jobs timed by class (jobs[].timed) are stretched by the same levels and weights, per "
           "channel on the mean rates their collectives ask";
  case CFG_FIDELITY_ANALYTIC: break;
  }
  return "not modelled within a phase at the analytic fidelity: transfers of every class count "
         "alike on a channel (no priority, no weights, nothing lossy); jobs that may share links "
         "are timed (jobs[].timed) and stretched by the classes' levels and weights, per channel "
         "on the mean rates their collectives ask; bytes per class";
}

/* traffic_classes: how the fidelity treats them, and per class its
 * configuration and what the run measured of it (the queue counters: the
 * packet fidelity's, null at the others). */
static json_t *classes_json(const cfg_scenario *cfg, const be_stats *st) {
  json_t *o = json_object(), *a = json_array();
  json_object_set_new(o, "model", json_string(out__classes_model(cfg->simulation.fidelity)));
  for (uint32_t k = 0; k < CFG_CLASSES; k++) {
    const cfg_tclass *c = &cfg->fabric.classes.v[k];
    json_t *e = json_object();
    json_object_set_new(e, "id", json_integer(k));
    json_object_set_new(e, "name", json_string(c->name ? c->name : ""));
    json_object_set_new(e, "priority", json_integer(c->priority));
    json_object_set_new(e, "weight", json_integer(c->weight));
    json_object_set_new(e, "lossless", json_boolean(c->lossless));
    json_object_set_new(e, "buffer_share", json_real(c->buffer));
    json_object_set_new(e, "ecn_kmin_bytes", json_integer((json_int_t)c->ecn_kmin));
    json_object_set_new(e, "ecn_kmax_bytes", json_integer((json_int_t)c->ecn_kmax));
    json_object_set_new(e, "ecn_pmax", json_real(c->ecn_pmax));
    json_object_set_new(e, "bytes", out_json_u64(st->class_bytes[k]));
    json_object_set_new(e, "max_queue_bytes",
                        observed_int(st, BE_OBS_PACKETS, st->class_max_queue[k]));
    json_object_set_new(e, "pfc_pauses", observed_int(st, BE_OBS_PACKETS, st->class_pfc_pauses[k]));
    json_object_set_new(e, "pfc_paused_s",
                        (st->observed & BE_OBS_PACKETS)
                            ? json_real(sim_ps_to_s(st->class_pfc_paused[k]))
                            : json_null());
    json_object_set_new(e, "ecn_marks", observed_int(st, BE_OBS_PACKETS, st->class_ecn_marks[k]));
    json_object_set_new(e, "drops", observed_int(st, BE_OBS_PACKETS, st->class_drops[k]));
    json_array_append_new(a, e);
  }
  json_object_set_new(o, "classes", a);
  return o;
}

/* A job's PFC: PAUSE frames its congestion caused and the time they held
 * upstream ports, the other jobs' flows they stopped (victims) and the
 * jobs whose PAUSEs stopped its own (paused_by); fabsim/backend.h
 * be_job_pauses defines each. Pairs with nothing are left out. */
static json_t *job_pfc_json(const run_jobs *js, uint32_t j) {
  const be_job_pauses *p = &js->pauses;
  json_t *o = json_object(), *vic = json_array(), *by = json_array();
  json_object_set_new(o, "pauses_caused", json_integer((json_int_t)p->caused[j]));
  json_object_set_new(o, "paused_s", json_real(sim_ps_to_s(p->paused[j])));
  for (uint32_t k = 0; k < p->njobs; k++)
    for (int dir = 0; dir < 2; dir++) {
      size_t at = dir == 0 ? (size_t)j * p->njobs + k : (size_t)k * p->njobs + j;
      if (k == j || p->flows[at] == 0) continue;
      json_t *e = json_object();
      json_object_set_new(e, "job", json_string(js->v[k].cfg->name));
      json_object_set_new(e, "pauses", json_integer((json_int_t)p->pauses[at]));
      json_object_set_new(e, "flows", json_integer((json_int_t)p->flows[at]));
      json_array_append_new(dir == 0 ? vic : by, e);
    }
  json_object_set_new(o, "victims", vic);
  json_object_set_new(o, "paused_by", by);
  return o;
}

/* jobs[]: per job its placement, its collective and its slowdown against
 * the same job alone (null when not computed: one job, or it did not finish). */
static json_t *jobs_json(const run_jobs *js, const run_step_stats *steps, const topo *t,
                         bool classes) {
  json_t *arr = json_array();
  /* each job's pfc: where the fidelity counts pauses, when the scenario
   * uses classes or a PAUSE was sent (a run without either writes what it
   * wrote before the block existed) */
  bool pfc = js->have_pauses && classes;
  for (uint32_t j = 0; js->have_pauses && j < js->n; j++) pfc |= js->pauses.caused[j] > 0;
  for (uint32_t j = 0; j < js->n; j++) {
    const run_job *job = &js->v[j];
    const plc_metrics *m = &job->metrics;
    json_t *o = json_object(), *nodes = json_array(), *pl = json_object(), *colls = json_array();
    json_t *c = json_object();
    json_object_set_new(o, "name", json_string(job->cfg->name));
    json_object_set_new(o, "gpus", json_integer(job->cfg->gpus));
    for (uint32_t i = 0; i < job->nnodes; i++)
      json_array_append_new(nodes, json_integer(job->nodes[i]));
    json_object_set_new(o, "nodes", nodes);
    json_object_set_new(pl, "policy", json_string(cfg_placement_name(job->cfg->placement)));
    json_object_set_new(pl, "leaves", json_integer(m->leaves));
    json_object_set_new(pl, "pods", json_integer(m->pods));
    json_object_set_new(pl, "ring_spine_pairs", json_integer(m->ring_spine_pairs));
    json_object_set_new(pl, "ring_core_pairs", json_integer(m->ring_core_pairs));
    json_object_set_new(pl, "ring_hops_min", json_integer(m->ring_hops_min));
    json_object_set_new(pl, "ring_hops_max", json_integer(m->ring_hops_max));
    json_object_set_new(o, "placement", pl);
    json_object_set_new(o, "start_s", json_real(sim_ps_to_s(job->cfg->start)));
    json_object_set_new(o, "shares", shares_json(js, job, t));
    json_object_set_new(o, "isolated", json_boolean(job->isolated));
    json_object_set_new(o, "timed", json_boolean(job->timed));
    json_object_set_new(o, "kind", json_string(cfg_workload_kind_name(job->cfg->workload.kind)));
    if (classes) /* the class its transfers carry (written when the scenario uses classes) */
      json_object_set_new(o, "traffic_class",
                          json_string(job->view.fabric.classes.v[job->cfg->workload.tclass].name));
    if (pfc) json_object_set_new(o, "pfc", job_pfc_json(js, j));
    if (job->train) { /* as a single training run's step and steps (baseline: alone) */
      json_decref(colls);
      json_decref(c);
      const wl_job *tj = job->train;
      if (wl_job_steps_done(tj))
        json_object_set_new(o, "step", out__step_json(wl_job_step(tj, 0), &job->view));
      json_object_set_new(o, "steps", steps_json(tj, job->train_alone));
      if (wl_job_steps_done(tj)) json_object_set_new(o, "step_stats", step_stats_json(&steps[j]));
      storage_json(job->ckpt, o);
    } else if (job->trr) { /* as a trace run's */
      json_decref(colls);
      json_decref(c);
      json_object_set_new(o, "trace", out__trace_json(&job->trace, job->trs, &job->view));
    } else if (job->cfg->workload.kind == CFG_WORKLOAD_TRAFFIC) { /* as a traffic run's */
      json_decref(colls);
      json_object_set_new(
          c, "pattern", json_string(cfg_traffic_pattern_name(job->cfg->workload.traffic.pattern)));
      json_object_set_new(c, "flows", json_integer((json_int_t)coll_plan_flows(&job->plan)));
      json_object_set_new(c, "bytes_per_flow", out_json_u64(job->plan.bytes));
      json_object_set_new(c, "time_s", job->finished ? json_real(job->res.time_s) : json_null());
      json_object_set_new(o, "traffic", c);
    } else {
      json_object_set_new(c, "op", json_string(cfg_coll_op_name(job->plan.op)));
      json_object_set_new(c, "algorithm",
                          json_string(cfg_coll_algorithm_name(job->plan.algorithm)));
      json_object_set_new(c, "bytes", out_json_u64(job->plan.bytes));
      json_object_set_new(c, "ranks", json_integer(job->plan.nranks));
      json_object_set_new(c, "time_s", job->finished ? json_real(job->res.time_s) : json_null());
      json_object_set_new(c, "algbw_GBps",
                          job->finished ? json_real(job->res.algbw_GBps) : json_null());
      json_object_set_new(c, "busbw_GBps",
                          job->finished ? json_real(job->res.busbw_GBps) : json_null());
      json_array_append_new(colls, c);
      json_object_set_new(o, "collectives", colls);
    }
    json_object_set_new(o, "time_s", job->finished ? json_real(job->res.time_s) : json_null());
    json_object_set_new(o, "alone_time_s",
                        job->have_alone ? json_real(job->alone.time_s) : json_null());
    json_object_set_new(
        o, "slowdown",
        job->have_alone && job->slowdown > 0 ? json_real(job->slowdown) : json_null());
    char cause[600];
    run_job_cause(js, job, t, cause, sizeof cause);
    json_object_set_new(o, "cause", cause[0] ? json_string(cause) : json_null());
    json_array_append_new(arr, o);
  }
  return arr;
}

static json_t *telemetry_json(const tel *t) {
  json_t *o = json_object();
  json_object_set_new(o, "interval_s", json_real((double)tel_interval(t) / 1e12));
  if (tel_interval_requested(t)) /* widened to fit output.max_rows (only then: as before) */
    json_object_set_new(o, "interval_requested_s",
                        json_real((double)tel_interval_requested(t) / 1e12));
  json_object_set_new(o, "samples", json_integer((json_int_t)tel_rows(t)));
  json_object_set_new(o, "truncated", json_boolean(tel_truncated(t)));
  json_object_set_new(o, "events", json_integer((json_int_t)tel_event_count(t)));
  tel_totals tot;
  tel_totals_get(t, &tot);
  unsigned obs = tel_observed(t);
  if (obs & TEL_OBS_NIC) {
    json_object_set_new(o, "nic_tx_bytes", json_real(tot.nic_bytes[TEL_TX]));
    json_object_set_new(o, "nic_rx_bytes", json_real(tot.nic_bytes[TEL_RX]));
  }
  if (obs & TEL_OBS_GPU) {
    json_t *g = json_object();
    for (int k = 0; k < TEL_GPU_NSTATES; k++)
      json_object_set_new(g, tel_gpu_state_name((tel_gpu_state)k), json_real(tot.gpu_frac[k]));
    json_object_set_new(o, "gpu_time_share", g);
  }
  return o;
}

/* The files a run writes (out_write_run and its caller), in the order
 * summary.json lists them. */
static json_t *files_json(const cfg_scenario *cfg) {
  json_t *files = json_array();
  json_array_append_new(files, json_string("timeseries.csv"));
  json_array_append_new(files, json_string("events.csv"));
  if (cfg->output.flows) json_array_append_new(files, json_string("flows.csv"));
  if (cfg->output.openmetrics) json_array_append_new(files, json_string("metrics.txt"));
  json_array_append_new(files, json_string("summary.json"));
  json_array_append_new(files, json_string("scenario.yaml"));
  if (cfg->output.report) json_array_append_new(files, json_string("report.html"));
  return files;
}

json_t *out_run_summary(const run_result *r) {
  const cfg_scenario *cfg = r->cfg;
  const topo *t = r->t;
  json_t *o = json_object();
  json_object_set_new(o, "fabsim_version", json_string(FABSIM_VERSION));
  json_object_set_new(o, "scenario", out_scenario_json(r->scenario, r->sets, r->nsets, cfg));
  json_object_set_new(o, "fidelity", json_string(cfg_fidelity_name(cfg->simulation.fidelity)));
  json_object_set_new(o, "gpus", json_integer(topo_gpu_count(t)));
  json_object_set_new(o, "nodes", json_integer(topo_node_count(t)));
  json_object_set_new(o, "topology", out_topo_json(t, cfg));
  if (r->kind == RUN_KIND_JOBS) {
    json_object_set_new(o, "jobs", jobs_json(r->jobs, r->job_steps, t, cfg_classes_used(cfg)));
  } else if (r->kind == RUN_KIND_COLLECTIVE) {
    json_t *colls = json_array();
    json_t *c = json_object();
    json_object_set_new(c, "op", json_string(cfg_coll_op_name(r->w->plan.op)));
    json_object_set_new(c, "algorithm", json_string(cfg_coll_algorithm_name(r->w->plan.algorithm)));
    json_object_set_new(c, "bytes", out_json_u64(r->w->plan.bytes));
    json_object_set_new(c, "ranks", json_integer(r->w->plan.nranks));
    json_object_set_new(c, "channels", json_integer(r->w->plan.channels));
    json_object_set_new(c, "protocol", json_string(cfg_coll_protocol_name(r->w->plan.protocol)));
    json_object_set_new(c, "qps_per_connection", json_integer(r->w->plan.qps));
    json_object_set_new(c, "transfers", json_integer((json_int_t)coll_plan_transfers(&r->w->plan)));
    /* a collective that failed or was stopped has no time and no bandwidth:
     * what was delivered, over the time it took, instead */
    bool whole = !r->w->failed && !r->w->stopped;
    json_object_set_new(c, "time_s", whole ? json_real(r->w->res.time_s) : json_null());
    json_object_set_new(c, "algbw_GBps", whole ? json_real(r->w->res.algbw_GBps) : json_null());
    json_object_set_new(c, "busbw_GBps", whole ? json_real(r->w->res.busbw_GBps) : json_null());
    json_object_set_new(c, "elapsed_s", json_real(r->w->res.time_s));
    json_object_set_new(c, "delivered_bytes", out_json_u64(r->net.bytes));
    json_array_append_new(colls, c);
    json_object_set_new(o, "collectives", colls);
  } else if (r->kind == RUN_KIND_TRAINING) {
    /* step, steps, failure, sdc, root_cause, power: training_json */
  } else if (r->kind == RUN_KIND_TRACE) {
    json_object_set_new(o, "trace", out__trace_json(&r->w->trace, r->w->trace_set, cfg));
  } else if (r->kind == RUN_KIND_INFERENCE) {
    if (r->w->inference)
      json_object_set_new(o, "inference", out__inference_json(r->w->inference, cfg));
  } else {
    json_t *tr = json_object();
    json_object_set_new(tr, "pattern",
                        json_string(cfg_traffic_pattern_name(cfg->workload.traffic.pattern)));
    json_object_set_new(tr, "flows", json_integer((json_int_t)coll_plan_flows(&r->w->plan)));
    json_object_set_new(tr, "bytes_per_flow", out_json_u64(r->w->plan.bytes));
    json_object_set_new(tr, "qps_per_connection", json_integer(r->w->plan.qps));
    json_object_set_new(tr, "staggered", json_boolean(r->w->plan.stagger > 0));
    json_object_set_new(tr, "time_s", json_real(r->w->res.time_s));
    /* what was delivered over the time it took (stopped or failed: part of it) */
    double total = run_traffic_bytes(r->w, &r->net);
    json_object_set_new(tr, "delivered_bytes",
                        total < 0x1p64 ? out_json_u64((uint64_t)total) : json_real(total));
    json_object_set_new(tr, "throughput_Gbps",
                        json_real(r->w->res.time_s > 0 ? total * 8 / r->w->res.time_s / 1e9 : 0));
    if (cfg->workload.traffic.pattern == CFG_TRAFFIC_PAIR) {
      const run_pair_latency *l = &r->w->pair;
      json_t *parts = json_object();
      json_object_set_new(parts, "start", json_real(l->start_s * 1e6));
      json_object_set_new(parts, "path", json_real(l->path_s * 1e6));
      json_object_set_new(parts, "finish", json_real(l->finish_s * 1e6));
      json_object_set_new(tr, "latency_us", json_real(run_pair_latency_s(l) * 1e6));
      json_object_set_new(tr, "latency_parts_us", parts);
    }
    json_object_set_new(o, "traffic", tr);
  }
  if (r->kind != RUN_KIND_TRAINING) /* training: training_json */
    json_object_set_new(o, "failure", r->w->failed ? transfer_failure_json(r) : json_null());
  json_object_set_new(o, "network", network_json(&r->net));
  if (cfg_classes_used(cfg)) json_object_set_new(o, "traffic_classes", classes_json(cfg, &r->net));
  if (r->have_power) json_object_set_new(o, "power", power_json(&r->power, cfg, r->tel, NULL));
  json_object_set_new(o, "events", events_json(&r->log));
  json_t *sim = json_object();
  json_object_set_new(sim, "events", json_integer((json_int_t)r->events));
  json_object_set_new(sim, "sim_time_s", json_real(r->sim_time_s));
  json_object_set_new(sim, "wall_s", json_real(r->wall_s)); /* the only wall-clock field */
  if (r->par.ranks) { /* how it ran: varies with the rank count, the results do not */
    const be_parallel_info *p = &r->par;
    json_t *j = json_object();
    json_object_set_new(j, "ranks", json_integer(p->ranks));
    json_object_set_new(j, "partition", json_string(p->scheme));
    json_object_set_new(j, "cut_links", json_integer((json_int_t)p->cut_links));
    json_object_set_new(j, "lookahead_ns", json_real((double)p->lookahead / SIM_PS_PER_NS));
    json_object_set_new(j, "windows", json_integer((json_int_t)p->windows));
    json_object_set_new(j, "events_busiest_rank", json_integer((json_int_t)p->events_max));
    json_object_set_new(j, "crossing_frac", json_real(p->crossing_frac));
    json_object_set_new(j, "engine_wall_s", json_real(p->wall_max));
    json_object_set_new(j, "sync_wall_s", json_real(p->sync_max));
    json_object_set_new(sim, "parallel", j);
  }
  json_object_set_new(o, "sim", sim);
  if (r->kind == RUN_KIND_TRAINING) training_json(&r->training, cfg, r->tel, o);
  /* complete: the job ran to its end and succeeded; outcome says which of
   * done, failed (the job's fault: its summary says why) or stopped (Ctrl-C) */
  bool failed = r->w->failed;
  json_object_set_new(o, "complete", json_boolean(r->complete && !failed));
  json_object_set_new(o, "outcome",
                      json_string(failed        ? "failed"
                                  : r->complete ? "done"
                                                : "stopped"));
  if (r->tel) json_object_set_new(o, "telemetry", telemetry_json(r->tel));
  json_object_set_new(o, "files", files_json(cfg));
  char *db = out_database_path(cfg->output.dir, cfg->output.database);
  json_object_set_new(o, "database", db ? json_string(cfg->output.database) : json_null());
  sim_free(db);
  return o;
}
