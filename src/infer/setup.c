/* workload.kind inference from a scenario (inf_job_from_cfg): every check
 * before anything runs, each at its key; then the model, the scheduler's
 * settings, the requests and the AllReduce timer. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "infer/inf_internal.h"

/* Poisson streams longer than this are refused (memory: 32 bytes each). */
static const double MAX_REQUESTS = 1e8;

static bool given(const cfg_doc *doc, const char *key) { return cfg_where(doc, key).line != 0; }

static int check_deployment(const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                            sim_error *err) {
  const cfg_workload *w = &cfg->workload;
  if (cfg->simulation.fidelity != CFG_FIDELITY_ANALYTIC)
    return cfg_fail_at(doc, "simulation.fidelity", err,
                       "workload.kind inference runs at the analytic fidelity only: flow and "
                       "packet (serving traffic sharing the fabric, contention) are not modelled "
                       "yet (docs/inference.md); allowed: analytic");
  if (cfg->jobs.n)
    return cfg_fail_at(doc, "jobs", err,
                       "a serving workload beside jobs: is not modelled yet (docs/inference.md); "
                       "allowed: no jobs list with workload.kind inference");
  if (cfg->faults.n)
    return cfg_fail_at(doc, "faults", err,
                       "faults during serving (GPUs, links) are not modelled yet "
                       "(docs/inference.md); allowed: no faults with workload.kind inference");
  if (w->parallel.pp > 1)
    return cfg_fail_at(doc, "workload.parallel.pp", err,
                       "pipeline-parallel serving is not modelled yet (docs/inference.md); "
                       "allowed: 1 (a replica is workload.inference.tp GPUs)");
  if (w->parallel.ep > 1)
    return cfg_fail_at(doc, "workload.parallel.ep", err,
                       "expert-parallel decode (dispatch and combine across GPUs) is not "
                       "modelled yet (docs/inference.md); allowed: 1 (an MoE model's experts "
                       "split over workload.inference.tp)");
  uint32_t tp = w->inference.tp, per_node = cfg->cluster.gpus_per_node;
  if (tp > per_node)
    return cfg_fail_at(doc, "workload.inference.tp", err,
                       "%u GPUs span nodes: a replica's tensor parallelism stays within a node "
                       "of %u GPUs here; allowed: 1 to %u",
                       tp, per_node, per_node);
  uint64_t need = (uint64_t)tp * w->inference.replicas, have = topo_gpu_count(t);
  if (need > have)
    return cfg_fail_at(doc, "workload.inference.replicas", err,
                       "%u replicas of %u GPUs need %llu GPUs; the cluster has %llu; allowed: "
                       "at most %llu",
                       w->inference.replicas, tp, (unsigned long long)need,
                       (unsigned long long)have, (unsigned long long)(have / tp));
  if (w->inference.memory_utilization > 1)
    return cfg_fail_at(doc, "workload.inference.memory_utilization", err,
                       "%.6g of the GPU's memory; allowed: above 0, at most 1",
                       w->inference.memory_utilization);
  return SIM_OK;
}

static int load_trace(inf_requests *q, const cfg_scenario *cfg, const cfg_doc *doc,
                      sim_error *err) {
  const char *key = "workload.inference.trace";
  char path[4096];
  cfg_path_at(path, sizeof path, doc, key, cfg->workload.inference.trace);
  size_t len = 0;
  char *text = sim_read_file(path, &len);
  if (!text)
    return cfg_fail_at(doc, key, err,
                       "%s: cannot be read; allowed: a CSV file of requests "
                       "(Vidur's columns), relative to the scenario's folder",
                       path);
  int rc = inf_trace_parse(q, text, len, path, err);
  sim_free(text);
  if (rc == SIM_OK) return SIM_OK;
  char msg[sizeof err->msg];
  snprintf(msg, sizeof msg, "%s", err->msg);
  return cfg_fail_at(doc, key, err, "%s", msg);
}

static int make_requests(inf_requests *q, const cfg_scenario *cfg, const cfg_doc *doc,
                         sim_error *err) {
  const cfg_workload *w = &cfg->workload;
  if (strcmp(w->inference.trace, "none")) {
    if (given(doc, "workload.inference.rate"))
      return cfg_fail_at(doc, "workload.inference.rate", err,
                         "the requests come from workload.inference.trace; a rate beside it "
                         "would be ignored; allowed: one of the two");
    return load_trace(q, cfg, doc, err);
  }
  double rate = w->inference.rate;
  uint64_t n = w->inference.requests;
  simtime_ps until = w->inference.duration;
  if (!n && !until)
    return cfg_fail_at(doc, "workload.inference.requests", err,
                       "0 requests and no workload.inference.duration: nothing to serve; "
                       "allowed: a count, or 0 with a duration");
  double expect = n ? (double)n : rate * sim_ps_to_s(until);
  if (expect > MAX_REQUESTS)
    return cfg_fail_at(doc, n ? "workload.inference.requests" : "workload.inference.duration", err,
                       "about %.4g requests; allowed: at most %.0e", expect, MAX_REQUESTS);
  inf_poisson(q, rate, n, until, w->inference.prompt_tokens, w->inference.output_tokens,
              cfg->simulation.seed);
  if (!q->n)
    return cfg_fail_at(doc, "workload.inference.duration", err,
                       "no request arrives within %.6g s at %.6g requests/s (seed %llu); "
                       "allowed: a longer duration or a higher rate",
                       sim_ps_to_s(until), rate, (unsigned long long)cfg->simulation.seed);
  return SIM_OK;
}

int inf_job_from_cfg(inf_job *j, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                     sim_error *err) {
  const cfg_workload *w = &cfg->workload;
  memset(j, 0, sizeof *j);
  int rc = check_deployment(cfg, doc, t, err);
  if (rc != SIM_OK) return rc;
  j->kernels = wl_kernels_new(cfg);
  j->nccl = inf__nccl_new(t, cfg, w->inference.tp);
  inf_comm comm = {inf__nccl_allreduce_s, j->nccl};
  if ((rc = inf_model_init(&j->model, cfg, doc, j->kernels, &comm, err)) != SIM_OK) return rc;
  if (w->inference.tp > 1) {
    uint64_t top = (uint64_t)w->inference.max_tokens * j->model.m.hidden * 2;
    if (!isfinite(inf__nccl_allreduce_s(j->nccl, top)))
      return cfg_fail_at(doc, "workload.collective.algorithm", err,
                         "%s: the serving model times a replica's AllReduce by the tuner's "
                         "closed form, which has none for it; allowed: auto, ring, tree, nvls",
                         cfg_coll_algorithm_name(w->collective.algorithm));
  }
  j->sched = (inf_sched){.replicas = w->inference.replicas,
                         .max_batch = w->inference.max_batch,
                         .max_tokens = w->inference.max_tokens,
                         .chunk = w->inference.chunk,
                         .dispatch = w->inference.dispatch,
                         .slo_ttft_s = sim_ps_to_s(w->inference.slo_ttft),
                         .slo_tpot_s = sim_ps_to_s(w->inference.slo_tpot)};
  if ((rc = make_requests(&j->requests, cfg, doc, err)) != SIM_OK) return rc;
  char why[256];
  long bad = inf_unservable(&j->model, &j->sched, &j->requests, why, sizeof why);
  if (bad < 0) return SIM_OK;
  bool trace = strcmp(w->inference.trace, "none") != 0;
  const char *key = trace             ? "workload.inference.trace"
                    : !j->sched.chunk ? "workload.inference.max_tokens"
                                      : "workload.inference.prompt_tokens";
  return cfg_fail_at(doc, key, err,
                     "request %ld: %s; allowed: requests a replica can hold (a larger tp or "
                     "memory_utilization, a smaller kv_reserve)%s",
                     bad + 1, why, j->sched.chunk ? "" : ", or workload.inference.chunk true");
}

void inf_job_free(inf_job *j) {
  inf_requests_free(&j->requests);
  wl_kernels_free(j->kernels);
  inf__nccl_free(j->nccl);
  memset(j, 0, sizeof *j);
}
