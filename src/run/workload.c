/* fabsim run for a collective, synthetic traffic or Chakra traces
 * (fabsim/run.h): the plan or the trace runner, the listener that keeps the
 * first failed transfer, and what the run measured once it stopped. A
 * training job has its own (training.c); the listener serves it too. */
#include <stdio.h>
#include <string.h>

#include "run/run_internal.h"

/* Ahead of the fault scheduler's listener (which logs failures): keeps the
 * first, for the outputs' "why", and hands every failure on. */
static void on_failure(void *ctx, const be_failure *f) {
  run_workload *w = ctx;
  if (!w->have_first) w->first = *f, w->have_first = true;
  if (w->prev_failure) w->prev_failure(w->prev_failure_ctx, f);
}

int run__traffic_plan(coll_plan *plan, run_pair_latency *pair, const cfg_scenario *cfg,
                      const cfg_doc *doc, const topo *t, const uint32_t *gpus, uint32_t ngpus,
                      sim_error *err) {
  coll_p2p p2p = coll_p2p_of(cfg);
  coll_traffic_spec spec = {
      .pattern = cfg->workload.traffic.pattern,
      .bytes = cfg->workload.traffic.size,
      .senders = cfg->workload.traffic.senders,
      .stagger =
          cfg->workload.traffic.start == CFG_START_STAGGERED ? cfg->workload.traffic.stagger : 0,
      .qps = cfg->workload.qps_per_connection,
      .seed = cfg->simulation.seed,
      .gpus = gpus,
      .ngpus = ngpus,
      .p2p = &p2p,
  };
  if (coll_traffic_build(plan, t, &spec, err) != SIM_OK) {
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return cfg_fail_at(doc, "workload.traffic.pattern", err, "%s", msg);
  }
  coll_plan_set_class(plan, cfg->workload.tclass);
  /* the last phase starts (phases - 1) x stagger in: refused past the
   * horizon of simulated time, where start times would wrap */
  if (plan->nphases > 1 &&
      (double)spec.stagger * (double)(plan->nphases - 1) >= (double)WL_HORIZON_PS)
    return cfg_fail_at(doc, "workload.traffic.stagger", err,
                       "%zu phases started %.6g s apart: the last starts at %.4g s, past the "
                       "horizon of simulated time, %.4g s (2^62 ps, %.1f days); allowed: at most "
                       "%.6g s",
                       plan->nphases, sim_ps_to_s(spec.stagger),
                       sim_ps_to_s(spec.stagger) * (double)(plan->nphases - 1),
                       sim_ps_to_s(WL_HORIZON_PS), sim_ps_to_s(WL_HORIZON_PS) / 86400,
                       sim_ps_to_s(WL_HORIZON_PS / 2 / (plan->nphases - 1)));
  if (spec.pattern == CFG_TRAFFIC_PAIR) {
    const be_xfer *x = &plan->phases[0].x[0];
    topo_path p;
    simtime_ps start, finish;
    topo_route(t, x->src_gpu, x->dst_gpu, x->flow_hash, &p);
    coll_p2p_parts(t, &p2p, x->src_gpu, x->dst_gpu, &start, &finish);
    *pair = (run_pair_latency){.start_s = sim_ps_to_s(start),
                               .path_s = sim_ps_to_s(topo_path_latency(t, &p)),
                               .finish_s = sim_ps_to_s(finish)};
  }
  return SIM_OK;
}

int run__one_gpu_check(const cfg_workload *wl, uint32_t ngpus, const cfg_doc *doc, const char *key,
                       sim_error *err) {
  if (wl->kind != CFG_WORKLOAD_COLLECTIVE || wl->collective.ranks != 0 || ngpus != 1) return SIM_OK;
  return cfg_fail_at(doc, key, err,
                     "1 GPU runs no collective (its time would be 0 s), as "
                     "workload.collective.ranks 1 does not; allowed: at least 2 GPUs");
}

int run_workload_begin(run_workload *w, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                       be_backend *be, sim_error *err) {
  memset(w, 0, sizeof *w);
  w->kind = cfg->workload.kind;
  w->prev_failure = be->on_failure; /* ours ahead of the scheduler's log (a training job
                                       takes the slot at its start, ahead of ours) */
  w->prev_failure_ctx = be->on_failure_ctx;
  be->on_failure = on_failure;
  be->on_failure_ctx = w;
  if (cfg->jobs.n) return SIM_OK; /* each job has its own plan (run_jobs) */
  switch (cfg->workload.kind) {
  case CFG_WORKLOAD_COLLECTIVE: {
    /* the key that made the cluster 1 GPU */
    const char *key =
        cfg_where(doc, "cluster.gpus_per_node").line ? "cluster.gpus_per_node" : "cluster.nodes";
    int rc = run__one_gpu_check(&cfg->workload, topo_gpu_count(t), doc, key, err);
    return rc == SIM_OK ? coll_plan_from_cfg(&w->plan, t, cfg, doc, NULL, 0, err) : rc;
  }
  case CFG_WORKLOAD_TRAINING: return SIM_OK; /* run_training */
  case CFG_WORKLOAD_INFERENCE: return run__inference_begin(w, cfg, doc, t, err);
  case CFG_WORKLOAD_TRACE: { /* Chakra traces: read, matched, planned */
    int rc = trc_load(&w->trs, cfg, doc, topo_gpu_count(t), err);
    if (rc == SIM_OK) rc = trc_runner_create(&w->trr, w->trs, cfg, doc, t, be, err);
    if (rc == SIM_OK) w->hooks = trc_runner_hooks(w->trr);
    w->trace_set = w->trs;
    return rc;
  }
  default: return run__traffic_plan(&w->plan, &w->pair, cfg, doc, t, NULL, 0, err);
  }
}

void run_workload_start(run_workload *w, be_backend *be) {
  if (w->inf) run__inference_start(w);
  else if (w->trr) trc_runner_start(w->trr);
  else coll_exec_start(&w->exec, be, &w->plan, NULL, NULL);
}

void run_workload_end(run_workload *w, sim_ctx *sim, const be_stats *net, bool complete,
                      const wl_job *job, run_events *log) {
  if (!w->exec.finished) w->exec.end = sim_now(sim);
  if (w->exec.plan) coll_result_of(&w->exec, &w->res);
  if (w->trr) {
    trc_runner_result(w->trr, &w->trace);
    w->res.time_s = w->trace.time_s;
  }
  w->stopped = !complete;
  w->failures = net->transfers_failed;
  w->gpu_failed = w->trr && trc_runner_failed(w->trr, &w->gpu_failure);
  w->failed = job ? wl_job_stopped(job, NULL, NULL) : w->failures > 0 || w->gpu_failed;
  if (!w->failed || job) return; /* training: its report logs job-stopped */
  char detail[256];
  if (w->gpu_failed) {
    const trc_failure *f = &w->gpu_failure;
    snprintf(detail, sizeof detail,
             "%s%u failed: the traces' job stopped after %u of %u iterations",
             f->whole_node ? "the node of gpu" : "gpu", f->gpu, w->trace.iterations_done,
             w->trace.iterations);
    run_event_add(log, f->at, "job", "job-failed", detail);
    return;
  }
  snprintf(detail, sizeof detail,
           "%llu transfer%s failed (the first gpu%u->gpu%u: %s): the %s "
           "did not deliver its data",
           (unsigned long long)w->failures, w->failures == 1 ? "" : "s", w->first.src_gpu,
           w->first.dst_gpu, w->have_first && w->first.cause ? w->first.cause : "unknown",
           cfg_workload_kind_name(w->kind));
  run_event_add(log, w->have_first ? w->first.at : sim_now(sim), "job", "job-failed", detail);
}

void run_workload_free(run_workload *w) {
  run__inference_free(w);
  coll_plan_free(&w->plan);
  trc_result_free(&w->trace);
  trc_runner_free(w->trr);
  trc_set_free(w->trs);
  memset(w, 0, sizeof *w);
}

double run_pair_latency_s(const run_pair_latency *l) {
  return l->start_s + l->path_s + l->finish_s;
}

double run_traffic_bytes(const run_workload *w, const be_stats *net) {
  if (!w->failed && !w->stopped) return (double)w->plan.bytes * (double)coll_plan_flows(&w->plan);
  return (double)net->bytes;
}
