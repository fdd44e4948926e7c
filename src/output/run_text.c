/* fabsim run: the terminal summary, the one text writer of a run, built
 * from the same typed results as summary.json (run_summary.c); nothing here
 * reads a figure back from JSON. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output/out_internal.h"

static void steps_text(const run_training_result *r) {
  char a[64], b[64];
  uint32_t n = wl_job_steps_done(r->job), nb = r->base ? wl_job_steps_done(r->base) : 0;
  if (!(n > 1 || (n && nb))) return;
  double sum = 0, base = 0;
  for (uint32_t k = 0; k < n; k++) {
    sum += wl_job_step(r->job, k)->time_s;
    if (k < nb) base += wl_job_step(r->base, k)->time_s;
  }
  printf("  steps      %u done, mean %s", n, sim_fmt_seconds(a, sizeof a, sum / (double)n));
  if (n <= nb)
    printf(" (%s %s)", r->ckpt ? "without checkpoints or faults" : "fault-free",
           sim_fmt_seconds(b, sizeof b, base / (double)n));
  printf("\n");
}

/* ", N failed (cause)" when reads failed (issue 27, defect 6), else "". */
static const char *reads_failed(const run_ckpt *c, char *buf, size_t n) {
  buf[0] = '\0';
  if (c->loads_failed)
    snprintf(buf, n, ", %zu failed (%s)", c->loads_failed,
             c->load_cause ? c->load_cause : "unknown");
  return buf;
}

/* A line for the checkpoints, then one per write (at most 8, then a count). */
static void checkpoints_text(const run_ckpt *c) {
  char a[64], b[64], d[64], e[96];
  if (c && c->load)
    printf("data         %s per step read by %u GPUs, %zu reads, the longest %s%s%s\n",
           sim_fmt_bytes(a, sizeof a, c->load_bytes), c->readers, c->loads,
           sim_fmt_seconds(b, sizeof b, sim_ps_to_s(c->load_max)),
           c->loads_late ? " (some still reading when the next step ended)" : "",
           reads_failed(c, e, sizeof e));
  if (!c || !c->every) return;
  printf("checkpoint   %s every %u steps (%s, %s storage) by %u GPUs\n",
         sim_fmt_bytes(a, sizeof a, c->size), c->every, c->sync ? "sync" : "async",
         c->separate ? "separate" : "backend", c->writers);
  for (size_t i = 0; i < c->n; i++) {
    const run_checkpoint *k = &c->v[i];
    if (i == 8) {
      printf("  ...        %zu more in summary.json checkpoints.list\n", c->n - i);
      break;
    }
    if (!k->end) {
      printf("  after %-4u started at %s, not finished\n", k->after_step,
             sim_fmt_seconds(a, sizeof a, sim_ps_to_s(k->start)));
      continue;
    }
    if (k->failed) {
      printf("  after %-4u %s .. %s, FAILED: %u transfers failed (%s), %s undelivered\n",
             k->after_step, sim_fmt_seconds(a, sizeof a, sim_ps_to_s(k->start)),
             sim_fmt_seconds(b, sizeof b, sim_ps_to_s(k->end)), k->failed,
             k->cause ? k->cause : "unknown", sim_fmt_bytes(d, sizeof d, k->undelivered));
      continue;
    }
    double s = sim_ps_to_s(k->end - k->start);
    printf("  after %-4u %s .. %s, %.4g GB/s", k->after_step,
           sim_fmt_seconds(a, sizeof a, sim_ps_to_s(k->start)),
           sim_fmt_seconds(b, sizeof b, sim_ps_to_s(k->end)),
           s > 0 ? (double)k->bytes / s / 1e9 : 0);
    if (k->first_step == k->last_step && k->first_step)
      printf("; step %u took %s longer", k->first_step,
             sim_fmt_seconds(d, sizeof d, k->slowdown_s));
    else if (k->first_step)
      printf("; steps %u-%u took %s longer", k->first_step, k->last_step,
             sim_fmt_seconds(d, sizeof d, k->slowdown_s));
    if (c->sync) printf("; the job waited %s", sim_fmt_seconds(e, sizeof e, k->stall_s));
    printf("\n");
  }
}

static void failure_text(const run_failure *f) {
  char a[64], b[64], c[64];
  if (!f->happened) return;
  printf("failure      %s %s at %s in step %d: job stopped\n", f->kind_name, f->component,
         sim_fmt_seconds(a, sizeof a, f->cost.at_s), (int)f->step);
  if (f->kind == WL_TRANSFER_FAIL)
    printf("  cause      transfer gpu%d->gpu%d: %s; the collective lost data\n", (int)f->gpu,
           (int)f->dst_gpu, f->cause);
  printf(
      "  lost       %s of work since the last checkpoint (%.4g GPU-hours; checkpoint every "
      "%s%s; at a random time the loss averages %s)\n",
      sim_fmt_seconds(a, sizeof a, f->cost.lost_work_s), f->cost.lost_gpu_hours,
      sim_fmt_seconds(b, sizeof b, f->checkpoint_interval_s),
      f->checkpoint_interval_auto ? " (Daly)" : "",
      sim_fmt_seconds(c, sizeof c, f->cost.expected_lost_work_s));
  printf("  restart    %s + recompute %s = %s\n", sim_fmt_seconds(a, sizeof a, f->cost.restart_s),
         sim_fmt_seconds(b, sizeof b, f->cost.lost_work_s),
         sim_fmt_seconds(c, sizeof c, f->cost.restart_cost_s));
}

static void training_text(const run_training_result *r) {
  char a[64], b[64];
  steps_text(r);
  checkpoints_text(r->ckpt);
  failure_text(&r->failure);
  for (uint32_t i = 0; i < r->nsdc; i++) {
    const run_sdc *e = &r->sdc[i];
    printf("sdc          gpu%d at %s: ", (int)e->gpu,
           sim_fmt_seconds(a, sizeof a, sim_ps_to_s(e->at)));
    if (!e->diverge_step) printf("no replicas to diverge from\n");
    else if (!e->detect_step)
      printf("replicas diverge in step %d, never detected (no replica checksums)\n",
             (int)e->diverge_step);
    else
      printf("replicas diverge in step %d, detected at the end of step %d (%s%s)\n",
             (int)e->diverge_step, (int)e->detect_step, e->detect_estimated ? "about " : "",
             sim_fmt_seconds(b, sizeof b, e->detect_known ? sim_ps_to_s(e->detect_at) : 0));
  }
  const rel_rc_result *rc = &r->root_cause;
  for (uint32_t i = 0; i < rc->n; i++) {
    if (i == 5) {
      printf("  ...        %u more steps in summary.json root_cause\n", rc->n - 5);
      break;
    }
    printf("%-12s %s\n", i ? "" : "root cause", rc->v[i].text);
  }
}

static void power_text(const run_power *p) {
  printf(
      "power        IT %.4g kW, facility %.4g kW (PUE %.3g), %.4g kWh per step at "
      "utilization %.0f%%",
      p->sum.it_kw, p->sum.facility_kw, p->model->pue, p->sum.energy_kwh_per_step,
      100 * p->utilization);
  uint32_t hot = p->sum.racks_throttled;
  if (hot) printf(", %u rack%s throttled", hot, hot == 1 ? "" : "s");
  printf("\n");
}

static void events_text(const run_events *log) {
  enum { SHOW = 8 };
  if (!log->n) return; /* the operator's first look: what happened, in time order */
  printf("events       %zu in summary.json events[] and events.csv%s\n", log->n,
         log->n > SHOW ? "; the first:" : ":");
  for (size_t i = 0; i < log->n && i < SHOW; i++) {
    const run_event *e = &log->v[i];
    char at[32];
    size_t len = strlen(e->detail);
    printf("  %-10s %s %s%s%.*s%s\n", sim_fmt_seconds(at, sizeof at, sim_ps_to_s(e->at)),
           e->component, e->kind, len ? ": " : "", len > 160 ? 157 : 160, e->detail,
           len > 160 ? "..." : "");
  }
}

/* What a job of a jobs: list ran: its collective or traffic pattern and
 * size, or its training steps (done, mean step). */
static void job_work_text(const run_job *job, char *out, size_t cap) {
  char a[64];
  if (job->train) {
    uint32_t n = wl_job_steps_done(job->train);
    double sum = 0;
    for (uint32_t k = 0; k < n; k++) sum += wl_job_step(job->train, k)->time_s;
    snprintf(out, cap, "training, %u of %u step%s, mean %s", n, job->view.workload.steps,
             job->view.workload.steps == 1 ? "" : "s",
             n ? sim_fmt_seconds(a, sizeof a, sum / n) : "-");
    return;
  }
  if (job->trr) {
    const trc_result *r = &job->trace;
    double sum = 0;
    for (uint32_t k = 0; k < r->iterations_done; k++) sum += r->iteration_s[k];
    snprintf(out, cap, "trace, %u ranks, %u of %u iteration%s, mean %s", r->nranks,
             r->iterations_done, r->iterations, r->iterations == 1 ? "" : "s",
             r->iterations_done ? sim_fmt_seconds(a, sizeof a, sum / r->iterations_done) : "-");
    return;
  }
  snprintf(out, cap, "%s %s",
           job->cfg->workload.kind == CFG_WORKLOAD_TRAFFIC
               ? cfg_traffic_pattern_name(job->cfg->workload.traffic.pattern)
               : cfg_coll_op_name(job->plan.op),
           sim_fmt_bytes(a, sizeof a, job->plan.bytes));
}

/* A job's PFC line: the PAUSE frames its congestion caused and whose flows
 * they stopped, and whose PAUSEs stopped its own (be_job_pauses). */
static void job_pfc_text(const run_jobs *js, uint32_t j) {
  const be_job_pauses *p = &js->pauses;
  char a[64];
  bool any = p->caused[j] > 0;
  for (uint32_t k = 0; k < p->njobs; k++) any |= p->flows[(size_t)k * p->njobs + j] > 0;
  if (!any) return; /* no PFC (InfiniBand credits, lossy classes) or no pause: no line */
  printf("  pfc        caused %llu PAUSE%s (%s paused upstream)", (unsigned long long)p->caused[j],
         p->caused[j] == 1 ? "" : "s", sim_fmt_seconds(a, sizeof a, sim_ps_to_s(p->paused[j])));
  for (int dir = 0; dir < 2; dir++) {
    const char *sep = dir == 0 ? "; stopped flows of " : "; its flows stopped by ";
    for (uint32_t k = 0; k < p->njobs; k++) {
      size_t at = dir == 0 ? (size_t)j * p->njobs + k : (size_t)k * p->njobs + j;
      if (k == j || p->flows[at] == 0) continue;
      printf("%s%s (%llu pause%s, %llu flow%s)", sep, js->v[k].cfg->name,
             (unsigned long long)p->pauses[at], p->pauses[at] == 1 ? "" : "s",
             (unsigned long long)p->flows[at], p->flows[at] == 1 ? "" : "s");
      sep = ", ";
    }
  }
  printf("\n");
}

/* A job's checkpoints and data loading in a line each (summary.json has
 * every write). */
static void job_storage_text(const run_ckpt *c) {
  char a[64], b[64], d[64], e[96];
  if (c->load)
    printf("  data       %s per step read by %u GPUs, %zu reads, the longest %s%s%s\n",
           sim_fmt_bytes(a, sizeof a, c->load_bytes), c->readers, c->loads,
           sim_fmt_seconds(b, sizeof b, sim_ps_to_s(c->load_max)),
           c->loads_late ? " (some still reading when the next step ended)" : "",
           reads_failed(c, e, sizeof e));
  if (!c->every) return;
  double secs = 0, slowed = 0;
  size_t done = 0;
  for (size_t i = 0; i < c->n; i++)
    if (c->v[i].end && !c->v[i].failed) { /* a failed write is not written */
      done++;
      secs += sim_ps_to_s(c->v[i].end - c->v[i].start);
      slowed += c->v[i].slowdown_s + c->v[i].stall_s;
    }
  printf(
      "  checkpoint %s every %u steps (%s, %s storage) by %u GPUs: %zu written, %s each on "
      "average, the steps %s longer\n",
      sim_fmt_bytes(a, sizeof a, c->size), c->every, c->sync ? "sync" : "async",
      c->separate ? "separate" : "backend", c->writers, done,
      sim_fmt_seconds(b, sizeof b, done ? secs / (double)done : 0),
      sim_fmt_seconds(d, sizeof d, slowed));
}

/* One line per job of a jobs: list: where it runs and what sharing cost it. */
static void jobs_text(const run_jobs *js, const topo *t, bool classes) {
  char a[64], b[64], w[160];
  for (uint32_t j = 0; j < js->n; j++) {
    const run_job *job = &js->v[j];
    const plc_metrics *m = &job->metrics;
    job_work_text(job, w, sizeof w);
    printf("job %-8s %u GPUs %s on %u node%s, %u lea%s, %u spine crossing%s: %s, %s\n",
           job->cfg->name, job->cfg->gpus, cfg_placement_name(job->cfg->placement), job->nnodes,
           job->nnodes == 1 ? "" : "s", m->leaves, m->leaves == 1 ? "f" : "ves",
           m->ring_spine_pairs, m->ring_spine_pairs == 1 ? "" : "s", w,
           job->finished ? sim_fmt_seconds(b, sizeof b, job->res.time_s) : "did not finish");
    if (job->have_alone)
      printf("  alone      %s, slowdown %.3fx, %s%s\n",
             sim_fmt_seconds(a, sizeof a, job->alone.time_s), job->slowdown,
             job->nshares ? "may share links with " : "shares no link with another job",
             job->nshares ? js->v[job->shares[0].job].cfg->name : "");
    char cause[600];
    run_job_cause(js, job, t, cause, sizeof cause);
    if (cause[0]) printf("  cause      %s\n", cause);
    if (job->ckpt) job_storage_text(job->ckpt);
    if (classes)
      printf("  class      %s (%u)\n", job->view.fabric.classes.v[job->cfg->workload.tclass].name,
             job->cfg->workload.tclass);
    if (js->have_pauses) job_pfc_text(js, j);
  }
}

/* The traffic classes: how the fidelity treats them, then one line per
 * class that carried bytes or is listed in fabric.classes. */
static void classes_text(const cfg_scenario *cfg, const be_stats *st) {
  char a[64], b[64], c[64], d[64], e[64];
  const cfg_class_table *t = &cfg->fabric.classes;
  printf("classes      %s\n", out__classes_model(cfg->simulation.fidelity));
  for (uint32_t k = 0; k < CFG_CLASSES; k++) {
    bool listed = false;
    for (uint32_t i = 0; i < t->n; i++) listed |= t->order[i] == k;
    if (!listed && !st->class_bytes[k]) continue;
    const cfg_tclass *tc = &t->v[k];
    printf("  %-10s %u: priority %u, weight %u, %s, %s", tc->name, k, tc->priority, tc->weight,
           tc->lossless ? "lossless" : "lossy", sim_fmt_bytes(a, sizeof a, st->class_bytes[k]));
    if (st->observed & BE_OBS_PACKETS)
      printf(", max queue %s, %s PFC pauses (%s), %s ECN marks, %llu drops",
             sim_fmt_bytes(b, sizeof b, st->class_max_queue[k]),
             sim_fmt_count(c, sizeof c, st->class_pfc_pauses[k]),
             sim_fmt_seconds(d, sizeof d, sim_ps_to_s(st->class_pfc_paused[k])),
             sim_fmt_count(e, sizeof e, st->class_ecn_marks[k]),
             (unsigned long long)st->class_drops[k]);
    printf("\n");
  }
}

/* The workload's lines: the jobs, the collective, the training job, the traces or the traffic. */
static void workload_text(const cfg_scenario *cfg, const topo *t, const run_result *r) {
  const run_training_result *tres = &r->training;
  char a[64], b[64], c[64], d[64];
  if (r->jobs && r->jobs->n) {
    jobs_text(r->jobs, t, cfg_classes_used(cfg));
  } else if (cfg->workload.kind == CFG_WORKLOAD_COLLECTIVE) {
    printf("%-12s %s, %s over %u ranks, %u channel%s, protocol %s\n",
           cfg_coll_op_name(r->w->plan.op), cfg_coll_algorithm_name(r->w->plan.algorithm),
           sim_fmt_bytes(a, sizeof a, r->w->plan.bytes), r->w->plan.nranks, r->w->plan.channels,
           r->w->plan.channels == 1 ? "" : "s", cfg_coll_protocol_name(r->w->plan.protocol));
    if (!r->w->failed && !r->w->stopped) {
      printf("  time       %s\n", sim_fmt_seconds(a, sizeof a, r->w->res.time_s));
      printf("  algbw      %.2f GB/s\n", r->w->res.algbw_GBps);
      printf("  busbw      %.2f GB/s\n", r->w->res.busbw_GBps);
    } else { /* no bandwidth for a collective that did not complete */
      printf("  time       %s, %s: no time or bandwidth; %s delivered\n",
             sim_fmt_seconds(a, sizeof a, r->w->res.time_s), r->w->failed ? "FAILED" : "stopped",
             sim_fmt_bytes(b, sizeof b, r->net.bytes));
    }
  } else if (cfg->workload.kind == CFG_WORKLOAD_TRAINING) {
    if (wl_job_steps_done(tres->job)) out__step_text(wl_job_step(tres->job, 0), cfg);
    training_text(tres);
  } else if (cfg->workload.kind == CFG_WORKLOAD_TRACE) {
    trc_result_print(stdout, &r->w->trace, r->w->trace_set);
  } else {
    uint64_t flows = coll_plan_flows(&r->w->plan);
    printf("traffic      %s, %s flows of %s%s\n",
           cfg_traffic_pattern_name(cfg->workload.traffic.pattern),
           sim_fmt_count(a, sizeof a, flows), sim_fmt_bytes(b, sizeof b, r->w->plan.bytes),
           r->w->plan.stagger ? ", staggered" : ", starting together");
    printf("  time       %s\n", sim_fmt_seconds(a, sizeof a, r->w->res.time_s));
    double total = run_traffic_bytes(r->w, &r->net);
    if (r->w->res.time_s > 0)
      printf("  throughput %s aggregate%s\n",
             sim_fmt_rate(a, sizeof a, (uint64_t)(total * 8 / r->w->res.time_s)),
             r->w->failed || r->w->stopped ? " (delivered so far)" : "");
    if (cfg->workload.traffic.pattern == CFG_TRAFFIC_PAIR)
      printf("  latency    %s one-way, zero-byte: start %s + path %s + finish %s\n",
             sim_fmt_seconds(a, sizeof a, run_pair_latency_s(&r->w->pair)),
             sim_fmt_seconds(b, sizeof b, r->w->pair.start_s),
             sim_fmt_seconds(c, sizeof c, r->w->pair.path_s),
             sim_fmt_seconds(d, sizeof d, r->w->pair.finish_s));
  }
}

void out_run_print(const cfg_scenario *cfg, const topo *t, const run_result *r,
                   const char *written) {
  const topo_inventory *inv = topo_inventory_get(t);
  char a[64], b[64], c[64];
  printf("fabsim %s, %s fidelity, seed %llu\n", FABSIM_VERSION,
         cfg_fidelity_name(cfg->simulation.fidelity), (unsigned long long)cfg->simulation.seed);
  printf("cluster      %s nodes x %u %s = %s GPUs, %s NICs at %s\n",
         sim_fmt_count(a, sizeof a, inv->nodes), cfg->cluster.gpus_per_node,
         cfg_gpu_name(cfg->cluster.gpu), sim_fmt_count(b, sizeof b, inv->gpus),
         sim_fmt_count(c, sizeof c, inv->endpoints - inv->storage_nics),
         sim_fmt_rate(c + 32, 32, cfg->cluster.nic.bandwidth));
  printf("fabric       %s, %u tiers, %u plane%s, radix %u, %s, %s switches, %s\n",
         cfg_topology_name(cfg->fabric.topology), inv->tiers, inv->planes,
         inv->planes == 1 ? "" : "s", cfg->fabric.switch_radix,
         cfg_transport_name(cfg->fabric.transport), sim_fmt_count(a, sizeof a, inv->switches),
         sim_fmt_usd(b, sizeof b, inv->cost_usd));
  out_networks_print(t, cfg, 13);
  workload_text(cfg, t, r);
  if (r->net.observed & BE_OBS_FCT)
    printf("  fct        p50 %s, p99 %s, max %s\n",
           sim_fmt_seconds(a, sizeof a, sim_ps_to_s(r->net.fct_p50)),
           sim_fmt_seconds(b, sizeof b, sim_ps_to_s(r->net.fct_p99)),
           sim_fmt_seconds(c, sizeof c, sim_ps_to_s(r->net.fct_max)));
  if (r->net.observed & BE_OBS_PACKETS) {
    printf("network      %s packets, %s ECN marks, %s CNPs, %s PFC pauses (%s paused)\n",
           sim_fmt_count(a, sizeof a, r->net.packets), sim_fmt_count(b, sizeof b, r->net.ecn_marks),
           sim_fmt_count(c, sizeof c, r->net.cnps), sim_fmt_count(c + 24, 24, r->net.pfc_pauses),
           sim_fmt_seconds(c + 48, 16, sim_ps_to_s(r->net.pfc_paused)));
    printf("             %s drops, %s retransmits, max queue %s, busiest link %.0f%%\n",
           sim_fmt_count(a, sizeof a, r->net.drops), sim_fmt_count(b, sizeof b, r->net.retransmits),
           sim_fmt_bytes(c, sizeof c, r->net.max_queue_bytes), r->net.link_utilization_max * 100);
  }
  if (cfg_classes_used(cfg)) classes_text(cfg, &r->net);
  if (r->w->gpu_failed) {
    const trc_failure *g = &r->w->gpu_failure;
    printf("failure      %sgpu%u failed at %s: the job stopped after %u of %u iteration%s\n",
           g->whole_node ? "the node of " : "", g->gpu,
           sim_fmt_seconds(a, sizeof a, sim_ps_to_s(g->at)), r->w->trace.iterations_done,
           r->w->trace.iterations, r->w->trace.iterations == 1 ? "" : "s");
  } else if (r->w->failed && cfg->workload.kind != CFG_WORKLOAD_TRAINING) {
    printf("failure      %s transfer%s failed: the job failed",
           sim_fmt_count(a, sizeof a, r->w->failures), r->w->failures == 1 ? "" : "s");
    if (r->w->have_first)
      printf(" (the first at %s: gpu%u->gpu%u, %s)",
             sim_fmt_seconds(b, sizeof b, sim_ps_to_s(r->w->first.at)), r->w->first.src_gpu,
             r->w->first.dst_gpu, r->w->first.cause ? r->w->first.cause : "unknown");
    printf("\n");
  }
  if (cfg->workload.kind == CFG_WORKLOAD_TRAINING) power_text(&r->training.power);
  else if (r->have_power) power_text(&r->power);
  events_text(&r->log);
  printf("sim          %s events, %s transfers, wall %.3f s\n",
         sim_fmt_count(a, sizeof a, r->events), sim_fmt_count(b, sizeof b, r->net.transfers),
         r->wall_s);
  if (r->par.ranks) {
    const be_parallel_info *p = &r->par;
    printf(
        "parallel     %u rank%s (%s), %s of %s links cut, lookahead %g ns, %s windows, "
        "%.1f%% of events crossed ranks, %.0f%% of the engine's time in synchronization\n",
        p->ranks, p->ranks == 1 ? "" : "s", p->scheme, sim_fmt_count(a, sizeof a, p->cut_links),
        sim_fmt_count(b, sizeof b, p->links), (double)p->lookahead / SIM_PS_PER_NS,
        sim_fmt_count(c, sizeof c, p->windows), 100.0 * p->crossing_frac,
        p->wall_max > 0 ? 100.0 * p->sync_max / p->wall_max : 0.0);
  }
  if (written)
    printf("written      %s/: summary.json, scenario.yaml, timeseries.csv, events.csv%s%s\n",
           written, cfg->output.report ? ", report.html" : "",
           strcmp(cfg->output.database, "none") ? ", results.sqlite" : "");
}

/* stderr's line when the simulated job failed (exit 4). */
void out_run_failed_print(const cfg_scenario *cfg, const run_result *r) {
  const run_training_result *tres = &r->training;
  const char *kind = "transfer-failed", *component = "", *cause = NULL;
  char comp[32];
  double at_s = 0;
  if (cfg->workload.kind == CFG_WORKLOAD_TRAINING) {
    const run_failure *f = &tres->failure;
    kind = f->kind_name;
    component = f->component;
    at_s = f->cost.at_s;
    if (f->kind == WL_TRANSFER_FAIL) cause = f->cause;
  } else if (r->w->gpu_failed) {
    kind = r->w->gpu_failure.whole_node ? "node-fail" : "gpu-fail";
    snprintf(comp, sizeof comp, "gpu%u", r->w->gpu_failure.gpu);
    component = comp;
    at_s = sim_ps_to_s(r->w->gpu_failure.at);
  } else if (r->w->have_first) {
    snprintf(comp, sizeof comp, "gpu%u", r->w->first.src_gpu);
    component = comp;
    at_s = sim_ps_to_s(r->w->first.at);
    cause = r->w->first.cause ? r->w->first.cause : "unknown";
  }
  fprintf(stderr,
          "fabsim: the simulated job failed: %s %s at %.6g s%s%s; the files in %s say "
          "\"outcome\": \"failed\"\n",
          kind, component, at_s, cause ? ": " : "", cause ? cause : "", cfg->output.dir);
}
