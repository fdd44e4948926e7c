/* fabsim run: the terminal summary, the one text writer of a run, built
 * from the same typed results as summary.json (run_summary.c); nothing here
 * reads a figure back from JSON. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output/out_inference.h"
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
  printf("checkpoint   %s every %s (%s, %s storage) by %s\n", sim_fmt_bytes(a, sizeof a, c->size),
         sim_fmt_noun(b, sizeof b, c->every, "step"), c->sync ? "sync" : "async",
         c->separate ? "separate" : "backend", sim_fmt_noun(d, sizeof d, c->writers, "GPU"));
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
    printf("  after %-4u %s .. %s, %s", k->after_step,
           sim_fmt_seconds(a, sizeof a, sim_ps_to_s(k->start)),
           sim_fmt_seconds(b, sizeof b, sim_ps_to_s(k->end)),
           sim_fmt(e, sizeof e, s > 0 ? (double)k->bytes / s : 0, SIM_UNIT_BYTERATE));
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
  char a[64], b[64], c[64], d[64];
  if (!f->happened) return;
  printf("failure      %s %s at %s in step %d: job stopped\n", f->kind_name, f->component,
         sim_fmt_seconds(a, sizeof a, f->cost.at_s), (int)f->step);
  if (f->kind == WL_TRANSFER_FAIL)
    printf("  cause      transfer gpu%d->gpu%d: %s; the collective lost data\n", (int)f->gpu,
           (int)f->dst_gpu, f->cause);
  printf(
      "  lost       %s of work since the last checkpoint (%s GPU-hours; checkpoint every "
      "%s%s; at a random time the loss averages %s)\n",
      sim_fmt_seconds(a, sizeof a, f->cost.lost_work_s),
      sim_fmt(d, sizeof d, f->cost.lost_gpu_hours, SIM_UNIT_NUMBER),
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
  char a[64], b[64], c[64], d[64], e[64];
  printf("power        IT %s, facility %s (PUE %s), %s per step at utilization %s",
         sim_fmt(a, sizeof a, p->sum.it_kw * 1e3, SIM_UNIT_WATTS),
         sim_fmt(b, sizeof b, p->sum.facility_kw * 1e3, SIM_UNIT_WATTS),
         sim_fmt(c, sizeof c, p->model->pue, SIM_UNIT_NUMBER),
         sim_fmt(d, sizeof d, p->sum.energy_kwh_per_step * 1e3, SIM_UNIT_WATTHOURS),
         sim_fmt(e, sizeof e, p->utilization, SIM_UNIT_PERCENT));
  uint32_t hot = p->sum.racks_throttled;
  if (hot) printf(", %s throttled", sim_fmt_noun(a, sizeof a, hot, "rack"));
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
    char b[64];
    snprintf(out, cap, "training, %u of %s, mean %s", n,
             sim_fmt_noun(b, sizeof b, job->view.workload.steps, "step"),
             n ? sim_fmt_seconds(a, sizeof a, sum / n) : "-");
    return;
  }
  if (job->trr) {
    const trc_result *r = &job->trace;
    double sum = 0;
    for (uint32_t k = 0; k < r->iterations_done; k++) sum += r->iteration_s[k];
    char b[64], c[64];
    snprintf(out, cap, "trace, %s, %u of %s, mean %s", sim_fmt_noun(b, sizeof b, r->nranks, "rank"),
             r->iterations_done, sim_fmt_noun(c, sizeof c, r->iterations, "iteration"),
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
  char a[64], b[64], c[64];
  bool any = p->caused[j] > 0;
  for (uint32_t k = 0; k < p->njobs; k++) any |= p->flows[(size_t)k * p->njobs + j] > 0;
  if (!any) return; /* no PFC (InfiniBand credits, lossy classes) or no pause: no line */
  printf("  pfc        caused %s (%s paused upstream)",
         sim_fmt_noun(b, sizeof b, p->caused[j], "PAUSE"),
         sim_fmt_seconds(a, sizeof a, sim_ps_to_s(p->paused[j])));
  for (int dir = 0; dir < 2; dir++) {
    const char *sep = dir == 0 ? "; stopped flows of " : "; its flows stopped by ";
    for (uint32_t k = 0; k < p->njobs; k++) {
      size_t at = dir == 0 ? (size_t)j * p->njobs + k : (size_t)k * p->njobs + j;
      if (k == j || p->flows[at] == 0) continue;
      printf("%s%s (%s, %s)", sep, js->v[k].cfg->name,
             sim_fmt_noun(b, sizeof b, p->pauses[at], "pause"),
             sim_fmt_noun(c, sizeof c, p->flows[at], "flow"));
      sep = ", ";
    }
  }
  printf("\n");
}

/* A job's checkpoints and data loading in a line each (summary.json has
 * every write). */
static void job_storage_text(const run_ckpt *c) {
  char a[64], b[64], d[64], e[96], g[64];
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
      "  checkpoint %s every %s (%s, %s storage) by %s: %zu written, %s each on "
      "average, the steps %s longer\n",
      sim_fmt_bytes(a, sizeof a, c->size), sim_fmt_noun(e, sizeof e, c->every, "step"),
      c->sync ? "sync" : "async", c->separate ? "separate" : "backend",
      sim_fmt_noun(g, sizeof g, c->writers, "GPU"), done,
      sim_fmt_seconds(b, sizeof b, done ? secs / (double)done : 0),
      sim_fmt_seconds(d, sizeof d, slowed));
}

/* One line per job of a jobs: list: where it runs and what sharing cost it. */
static void jobs_text(const run_jobs *js, const topo *t, bool classes) {
  char a[64], b[64], w[160], n1[64], n2[64], n3[64], n4[64];
  for (uint32_t j = 0; j < js->n; j++) {
    const run_job *job = &js->v[j];
    const plc_metrics *m = &job->metrics;
    job_work_text(job, w, sizeof w);
    printf("job %-8s %s %s on %s, %s, %s: %s, %s\n", job->cfg->name,
           sim_fmt_noun(n1, sizeof n1, job->cfg->gpus, "GPU"),
           cfg_placement_name(job->cfg->placement),
           sim_fmt_noun(n2, sizeof n2, job->nnodes, "node"),
           sim_fmt_noun(n3, sizeof n3, m->leaves, "leaf|leaves"),
           sim_fmt_noun(n4, sizeof n4, m->ring_spine_pairs, "spine crossing"), w,
           job->finished ? sim_fmt_seconds(b, sizeof b, job->res.time_s) : "did not finish");
    if (job->have_alone)
      printf("  alone      %s, slowdown %sx, %s%s\n",
             sim_fmt_seconds(a, sizeof a, job->alone.time_s),
             sim_fmt(n1, sizeof n1, job->slowdown, SIM_UNIT_NUMBER),
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
  char a[64], b[64], c[64], d[64], e[64], f[64];
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
      printf(", max queue %s, %s (%s), %s, %s", sim_fmt_bytes(b, sizeof b, st->class_max_queue[k]),
             sim_fmt_noun(c, sizeof c, st->class_pfc_pauses[k], "PFC pause"),
             sim_fmt_seconds(d, sizeof d, sim_ps_to_s(st->class_pfc_paused[k])),
             sim_fmt_noun(e, sizeof e, st->class_ecn_marks[k], "ECN mark"),
             sim_fmt_noun(f, sizeof f, st->class_drops[k], "drop"));
    printf("\n");
  }
}

/* The workload's lines: the jobs, the collective, the training job, the traces or the traffic. */
static void workload_text(const cfg_scenario *cfg, const topo *t, const run_result *r) {
  const run_training_result *tres = &r->training;
  char a[64], b[64], c[64], d[64];
  if (r->kind == RUN_KIND_JOBS) {
    jobs_text(r->jobs, t, cfg_classes_used(cfg));
  } else if (r->kind == RUN_KIND_COLLECTIVE) {
    printf("%-12s %s, %s over %s, %s, protocol %s\n", cfg_coll_op_name(r->w->plan.op),
           cfg_coll_algorithm_name(r->w->plan.algorithm),
           sim_fmt_bytes(a, sizeof a, r->w->plan.bytes),
           sim_fmt_noun(b, sizeof b, r->w->plan.nranks, "rank"),
           sim_fmt_noun(c, sizeof c, r->w->plan.channels, "channel"),
           cfg_coll_protocol_name(r->w->plan.protocol));
    if (!r->w->failed && !r->w->stopped) {
      printf("  time       %s\n", sim_fmt_seconds(a, sizeof a, r->w->res.time_s));
      printf("  algbw      %s\n",
             sim_fmt(a, sizeof a, r->w->res.algbw_GBps * 1e9, SIM_UNIT_BYTERATE));
      printf("  busbw      %s\n",
             sim_fmt(a, sizeof a, r->w->res.busbw_GBps * 1e9, SIM_UNIT_BYTERATE));
    } else { /* no bandwidth for a collective that did not complete */
      printf("  time       %s, %s: no time or bandwidth; %s delivered\n",
             sim_fmt_seconds(a, sizeof a, r->w->res.time_s), r->w->failed ? "FAILED" : "stopped",
             sim_fmt_bytes(b, sizeof b, r->net.bytes));
    }
  } else if (r->kind == RUN_KIND_TRAINING) {
    if (wl_job_steps_done(tres->job)) out__step_text(wl_job_step(tres->job, 0), cfg);
    training_text(tres);
  } else if (r->kind == RUN_KIND_TRACE) {
    out__trace_print(stdout, &r->w->trace, r->w->trace_set);
  } else if (r->kind == RUN_KIND_INFERENCE) {
    if (r->w->inference) out__inference_print(stdout, r->w->inference, cfg);
  } else {
    uint64_t flows = coll_plan_flows(&r->w->plan);
    printf("traffic      %s, %s of %s%s\n", cfg_traffic_pattern_name(cfg->workload.traffic.pattern),
           sim_fmt_noun(a, sizeof a, flows, "flow"), sim_fmt_bytes(b, sizeof b, r->w->plan.bytes),
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

void out_run_print(const run_result *r, const char *written) {
  const cfg_scenario *cfg = r->cfg;
  const topo *t = r->t;
  const topo_inventory *inv = topo_inventory_get(t);
  char a[64], b[64], c[64], d[64], e[64], f[64], h[64];
  printf("fabsim %s, %s fidelity, seed %llu\n", FABSIM_VERSION,
         cfg_fidelity_name(cfg->simulation.fidelity), (unsigned long long)cfg->simulation.seed);
  printf("cluster      %s x %u %s = %s, %s at %s\n", sim_fmt_noun(a, sizeof a, inv->nodes, "node"),
         cfg->cluster.gpus_per_node, cfg_gpu_name(cfg->cluster.gpu),
         sim_fmt_noun(b, sizeof b, inv->gpus, "GPU"),
         sim_fmt_noun(c, sizeof c, inv->endpoints - inv->storage_nics, "NIC"),
         sim_fmt_rate(d, sizeof d, cfg->cluster.nic.bandwidth));
  printf("fabric       %s, %s, %s, radix %u, %s, %s, %s\n", cfg_topology_name(cfg->fabric.topology),
         sim_fmt_noun(a, sizeof a, inv->tiers, "tier"),
         sim_fmt_noun(b, sizeof b, inv->planes, "plane"), cfg->fabric.switch_radix,
         cfg_transport_name(cfg->fabric.transport),
         sim_fmt_noun(c, sizeof c, inv->switches, "switch"),
         sim_fmt_usd(d, sizeof d, inv->cost_usd));
  out_networks_print(t, cfg, 13);
  workload_text(cfg, t, r);
  if (r->net.observed & BE_OBS_FCT)
    printf("  fct        p50 %s, p99 %s, max %s\n",
           sim_fmt_seconds(a, sizeof a, sim_ps_to_s(r->net.fct_p50)),
           sim_fmt_seconds(b, sizeof b, sim_ps_to_s(r->net.fct_p99)),
           sim_fmt_seconds(c, sizeof c, sim_ps_to_s(r->net.fct_max)));
  if (r->net.observed & BE_OBS_PACKETS) {
    printf("network      %s, %s, %s, %s (%s paused)\n",
           sim_fmt_noun(a, sizeof a, r->net.packets, "packet"),
           sim_fmt_noun(b, sizeof b, r->net.ecn_marks, "ECN mark"),
           sim_fmt_noun(c, sizeof c, r->net.cnps, "CNP"),
           sim_fmt_noun(d, sizeof d, r->net.pfc_pauses, "PFC pause"),
           sim_fmt_seconds(e, sizeof e, sim_ps_to_s(r->net.pfc_paused)));
    printf("             %s, %s, max queue %s, busiest link %s\n",
           sim_fmt_noun(a, sizeof a, r->net.drops, "drop"),
           sim_fmt_noun(b, sizeof b, r->net.retransmits, "retransmit"),
           sim_fmt_bytes(c, sizeof c, r->net.max_queue_bytes),
           sim_fmt(d, sizeof d, r->net.link_utilization_max, SIM_UNIT_PERCENT));
  }
  if (cfg_classes_used(cfg)) classes_text(cfg, &r->net);
  if (r->w->gpu_failed) {
    const trc_failure *g = &r->w->gpu_failure;
    printf("failure      %sgpu%u failed at %s: the job stopped after %u of %s\n",
           g->whole_node ? "the node of " : "", g->gpu,
           sim_fmt_seconds(a, sizeof a, sim_ps_to_s(g->at)), r->w->trace.iterations_done,
           sim_fmt_noun(b, sizeof b, r->w->trace.iterations, "iteration"));
  } else if (r->w->failed && r->kind != RUN_KIND_TRAINING) {
    printf("failure      %s failed: the job failed",
           sim_fmt_noun(a, sizeof a, r->w->failures, "transfer"));
    if (r->w->have_first)
      printf(" (the first at %s: gpu%u->gpu%u, %s)",
             sim_fmt_seconds(b, sizeof b, sim_ps_to_s(r->w->first.at)), r->w->first.src_gpu,
             r->w->first.dst_gpu, r->w->first.cause ? r->w->first.cause : "unknown");
    printf("\n");
  }
  if (r->kind == RUN_KIND_TRAINING) {
    power_text(&r->training.power);
    out__power_mitigations_print(&r->training.power, r->tel, cfg, r->training.job);
  } else if (r->have_power) {
    power_text(&r->power);
  }
  events_text(&r->log);
  printf("sim          %s, %s, wall %s\n", sim_fmt_noun(a, sizeof a, r->events, "event"),
         sim_fmt_noun(b, sizeof b, r->net.transfers, "transfer"),
         sim_fmt_seconds(c, sizeof c, r->wall_s));
  if (r->par.ranks) {
    const be_parallel_info *p = &r->par;
    printf(
        "parallel     %s (%s), %s of %s cut, lookahead %s, %s, %s of events crossed ranks, "
        "%s of the engine's time in synchronization\n",
        sim_fmt_noun(a, sizeof a, p->ranks, "rank"), p->scheme,
        sim_fmt_count(b, sizeof b, p->cut_links), sim_fmt_noun(c, sizeof c, p->links, "link"),
        sim_fmt_seconds(d, sizeof d, sim_ps_to_s(p->lookahead)),
        sim_fmt_noun(e, sizeof e, p->windows, "window"),
        sim_fmt(f, sizeof f, p->crossing_frac, SIM_UNIT_PERCENT),
        sim_fmt(h, sizeof h, p->wall_max > 0 ? p->sync_max / p->wall_max : 0.0, SIM_UNIT_PERCENT));
  }
  if (written)
    printf("written      %s/: summary.json, scenario.yaml, timeseries.csv, events.csv%s%s\n",
           written, cfg->output.report ? ", report.html" : "",
           strcmp(cfg->output.database, "none") ? ", results.sqlite" : "");
}

/* stderr's line when the simulated job failed (exit 4). */
void out_run_failed_print(const run_result *r) {
  const cfg_scenario *cfg = r->cfg;
  const run_training_result *tres = &r->training;
  const char *kind = "transfer-failed", *component = "", *cause = NULL;
  char comp[32], at[64];
  double at_s = 0;
  if (r->kind == RUN_KIND_TRAINING) {
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
          "fabsim: the simulated job failed: %s %s at %s%s%s; the files in %s say "
          "\"outcome\": \"failed\"\n",
          kind, component, sim_fmt_seconds(at, sizeof at, at_s), cause ? ": " : "",
          cause ? cause : "", cfg->output.dir);
}
