/* fabsim run, workload.kind training (fabsim/run.h): a job of
 * workload.steps steps on the run's backend, disturbed by the scenario's GPU
 * faults (the fault scheduler of src/reliability plays them through the
 * job's hooks, as it plays the network faults on the backend) and by racks over their cooling
 * (src/power), and the same steps on a second, fault-free simulation of the same scenario; both
 * driven in slices (drive.c). The operator's view of the result is report.c.
 *
 * The baseline costs one more run of the steps; it is only made when
 * something may disturb the job (a fault in the scenario, a rack that could
 * exceed its limit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/run.h"
#include "run/run_internal.h"

uint32_t run_gpu_rack(const run_training *tr, uint32_t gpu) {
  uint32_t node = topo_gpu_node(tr->t, gpu);
  return tr->pwr.rack_nodes ? node / tr->pwr.rack_nodes : 0;
}

/* power.rack.cooling_failure (checked when the scenario was loaded). */
static void apply_cooling_failure(pwr_model *m, const cfg_scenario *cfg) {
  uint32_t rack;
  double kw;
  if (cfg_cooling_failure(cfg, &rack, &kw) && rack < m->racks) pwr_set_rack_limit(m, rack, kw);
}

int run_training_begin(run_training *tr, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                       be_backend *be, const flt_fault *faults, uint32_t nfaults, sim_error *err) {
  memset(tr, 0, sizeof *tr);
  tr->faults = faults;
  tr->nfaults = nfaults;
  tr->cfg = cfg;
  tr->doc = doc;
  tr->t = t;
  int rc = pwr_init(&tr->pwr, cfg, doc, topo_inventory_get(t), err);
  if (rc == SIM_OK) {
    tr->have_pwr = true;
    apply_cooling_failure(&tr->pwr, cfg);
  }
  if (rc == SIM_OK) rc = wl_job_create(&tr->job, cfg, doc, t, be, cfg->workload.steps, err);
  if (rc == SIM_OK)
    rc = wl_check_horizon(cfg, doc, (double)wl_job_step_compute_ps(tr->job), cfg->workload.steps,
                          "steps", "compute", err);
  if (rc == SIM_OK) rc = run_ckpt_begin(&tr->ckpt, cfg, doc, t, be, NULL, tr->job, err);
  if (rc != SIM_OK) return rc;
  tr->hooks = wl_job_hooks(tr->job);
  tr->sim = be->sim;
  tr->be = be;
  return SIM_OK;
}

/* Racks over their limit at the job's fault-free utilization u throttle
 * their GPUs from the start: stragglers of the job. */
static void throttle_racks(run_training *tr, double u, run_events *log) {
  uint32_t n = topo_gpu_count(tr->t);
  tr->utilization = u;
  tr->throttle = sim_malloc((n ? n : 1) * sizeof *tr->throttle);
  pwr_gpu_throttle(&tr->pwr, u, tr->throttle, n);
  for (uint32_t g = 0; g < n; g++)
    if (tr->throttle[g] < 1) {
      wl_job_slowdown(tr->job, 0, g, tr->throttle[g], true);
      tr->throttled_gpus++;
    }
  char comp[32], detail[256];
  uint32_t per_rack = tr->pwr.rack_nodes * tr->pwr.gpus_per_node;
  for (uint32_t r = 0; r < tr->pwr.racks; r++) {
    double f = pwr_rack_throttle(&tr->pwr, r, u);
    if (f >= 1) continue;
    uint32_t first = r * per_rack, count = pwr_rack_nodes(&tr->pwr, r) * tr->pwr.gpus_per_node;
    snprintf(comp, sizeof comp, "rack%u", r);
    snprintf(detail, sizeof detail,
             "draws %.1f kW at the job's utilization %.2f, over its %.1f kW %s limit: its %u "
             "GPUs (gpu%u-gpu%u) throttle to %.3f of their speed",
             pwr_rack_demand_w(&tr->pwr, r, u) * 1e-3, u, tr->pwr.rack_limit_w[r] * 1e-3,
             pwr_rack_limit_name(&tr->pwr, r), count, first, first + count - 1, f);
    bool cap = !strcmp(pwr_rack_limit_name(&tr->pwr, r), "power cap");
    run_event_add(log, 0, comp, cap ? "power-cap-throttle" : "thermal-throttle", detail);
  }
}

/* Per step, at the packet fidelity: PFC pauses and ECN marks of the step
 * as events (the fabric's congestion the operator sees beside the faults). */
/* Keep step k's bounds and counters (side 0: the run, 1: the baseline). */
static void keep_step(run_training *tr, int side, uint32_t k, simtime_ps start, simtime_ps end,
                      const be_stats *st, const be_stats *last) {
  sim_grow((void **)&tr->rec[side], &tr->reccap[side], (size_t)k + 1, sizeof *tr->rec[side]);
  while (tr->nrec[side] <= k) tr->rec[side][tr->nrec[side]++] = (run_step_record){0};
  tr->rec[side][k] =
      (run_step_record){.start = start,
                        .end = end,
                        .observed = (st->observed & BE_OBS_PACKETS) != 0,
                        .pfc_paused_s = sim_ps_to_s(st->pfc_paused - last->pfc_paused),
                        .ecn_marks = st->ecn_marks - last->ecn_marks};
}

static void base_counters(void *ctx, uint32_t step, simtime_ps start, simtime_ps end) {
  run_training *tr = ctx;
  be_stats st;
  tr->base_be->ops->stats(tr->base_be, &st);
  keep_step(tr, 1, step, start, end, &st, &tr->base_last);
  tr->base_last = st;
}

static void step_counters(void *ctx, uint32_t step, simtime_ps start, simtime_ps end) {
  run_training *tr = ctx;
  be_stats st;
  char detail[256];
  tr->be->ops->stats(tr->be, &st);
  keep_step(tr, 0, step, start, end, &st, &tr->last);
  if (st.observed & BE_OBS_PACKETS) {
    uint64_t pauses = st.pfc_pauses - tr->last.pfc_pauses;
    uint64_t marks = st.ecn_marks - tr->last.ecn_marks;
    double paused = sim_ps_to_s(st.pfc_paused - tr->last.pfc_paused);
    if (pauses) {
      snprintf(detail, sizeof detail,
               "step %u: %llu PFC PAUSE frames, egress queues paused %.6g s in all (over %.6g s)",
               step + 1, (unsigned long long)pauses, paused, sim_ps_to_s(end - start));
      run_event_add(tr->log, end, "fabric", "pfc-pauses", detail);
    }
    uint64_t packets = st.packets - tr->last.packets;
    /* ECN: a burst worth the log when at least 0.1 % of the step's packets were marked */
    if (marks && (double)marks >= 1e-3 * (double)packets) {
      snprintf(detail, sizeof detail, "step %u: %llu packets ECN-marked, %.3g %% of the %llu sent",
               step + 1, (unsigned long long)marks,
               packets ? 100.0 * (double)marks / (double)packets : 0, (unsigned long long)packets);
      run_event_add(tr->log, end, "fabric", "ecn-marks", detail);
    }
  }
  tr->last = st;
  run_ckpt_step(&tr->ckpt, step, end);
}

/* A rack over its limit at utilization u. O(racks). */
static bool any_rack_throttles(const run_training *tr, double u) {
  for (uint32_t r = 0; r < tr->pwr.racks; r++)
    if (pwr_rack_throttle(&tr->pwr, r, u) < 1) return true;
  return false;
}

/* Could a rack throttle this job? Over its limit at full utilization, and
 * at the utilization one step shows at the analytic fidelity (cheap) plus
 * a margin of 0.05 for the fidelities' differences. Saves the baseline of a
 * job whose racks only exceed their limit at a utilization it never reaches. */
static bool may_throttle(const run_training *tr) {
  if (!any_rack_throttles(tr, 1)) return false;
  sim_ctx *sim = sim_create(tr->cfg->simulation.seed);
  be_backend *b = be_analytic_create(sim, tr->t, tr->cfg);
  wl_job *j = NULL;
  sim_error err = {0};
  bool may = true; /* when the estimate fails, the baseline decides */
  if (wl_job_create(&j, tr->cfg, tr->doc, tr->t, b, 1, &err) == SIM_OK &&
      wl_job_run(j, tr->doc, &err) == SIM_OK && wl_job_steps_done(j) == 1) {
    double u = run_job_utilization(j) + 0.05;
    may = any_rack_throttles(tr, u < 1 ? u : 1);
  }
  be_destroy(b);
  wl_job_free(j);
  sim_destroy(sim);
  return may;
}

const run_step_record *run_training_step(const run_training *tr, bool baseline, uint32_t k) {
  int side = baseline ? 1 : 0;
  return k < tr->nrec[side] ? &tr->rec[side][k] : NULL;
}

double run_job_utilization(const wl_job *j) {
  double busy = 0, total = 0;
  for (uint32_t k = 0; k < wl_job_steps_done(j); k++) {
    busy += wl_job_step(j, k)->compute_s;
    total += wl_job_step(j, k)->time_s;
  }
  return total > 0 ? busy / total : 0;
}

/* What a collective timed once (comm_model reuse or symmetric) cannot see:
 * a "warning" event and tr->warning (one per run: the caller names every
 * unseen cause in it). */
static void comm_model_warning(run_training *tr, run_events *log, const wl_step *s0,
                               const char *unseen) {
  if (!s0 || s0->comm_model == CFG_COMM_LIVE) return;
  char msg[320];
  snprintf(msg, sizeof msg,
           "workload.comm_model is %s: each collective was timed once, alone, before the first "
           "step, so %s; --set workload.comm_model=live to see them (slower)",
           cfg_comm_model_name(s0->comm_model), unseen);
  run_event_add(log, 0, "job", "warning", msg);
  tr->warning = log->v[log->n - 1].detail;
}

int run_training_run(run_training *tr, run_events *log, const run_progress_fn *progress,
                     bool *complete, sim_error *err) {
  int rc;
  tr->log = log;
  if (tr->cfg->faults.n > 0 || tr->ckpt.every || may_throttle(tr)) {
    /* the fault-free baseline first (without checkpoints): its utilization decides the
     * racks' throttling */
    tr->base_sim = sim_create(tr->cfg->simulation.seed);
    if ((rc = be_create(&tr->base_be, tr->base_sim, tr->t, tr->cfg, tr->doc, err)) != SIM_OK ||
        (rc = wl_job_create(&tr->base, tr->cfg, tr->doc, tr->t, tr->base_be,
                            tr->cfg->workload.steps, err)) != SIM_OK)
      return rc;
    tr->base_be->ops->stats(tr->base_be, &tr->base_last);
    wl_job_on_step(tr->base, base_counters, tr);
    if ((rc = run__drive(tr->doc, tr->cfg->workload.steps, tr->base, tr->base_sim,
                         "fault-free:", progress, 0, complete, err)) != SIM_OK)
      return rc;
    if (!*complete) { /* Ctrl-C during the baseline: the job never ran */
      char msg[200];
      snprintf(msg, sizeof msg,
               "stopped (Ctrl-C) while simulating the fault-free baseline, after "
               "%u of its %u steps: the job with its faults did not run",
               wl_job_steps_done(tr->base), tr->cfg->workload.steps);
      run_event_add(log, 0, "job", "stopped", msg);
      tr->stopped_in_base = true;
      return SIM_OK;
    }
    throttle_racks(tr, run_job_utilization(tr->base), log);
  }
  tr->be->ops->stats(tr->be, &tr->last);
  wl_job_on_step(tr->job, step_counters, tr);
  /* the fault-free steps' end, when known: the progress line's 100 % */
  simtime_ps expected = tr->nrec[1] ? tr->rec[1][tr->nrec[1] - 1].end : 0;
  if ((rc = run__drive(tr->doc, tr->cfg->workload.steps, tr->job, tr->sim, "run:", progress,
                       expected, complete, err)) != SIM_OK)
    return rc;
  if (*complete && (rc = run_ckpt_finish(&tr->ckpt, tr, err)) != SIM_OK) return rc;
  const wl_step *s0 = wl_job_step(tr->job, 0);
  bool network = false;
  for (uint32_t i = 0; i < tr->cfg->faults.n; i++)
    network = network || cfg_fault_is_network(tr->cfg->faults.v[i].kind);
  bool ckpt = tr->ckpt.every && !tr->ckpt.separate;
  if (ckpt || network) /* one warning, naming both when both are unseen */
    comm_model_warning(tr, log, s0,
                       ckpt && network ? "the checkpoint writes do not slow the steps' "
                                         "collectives and the network faults do not change "
                                         "the steps' times"
                       : ckpt          ? "the checkpoint writes do not slow the steps' collectives"
                                       : "the network faults do not change the steps' times");
  return SIM_OK;
}

void run_training_free(run_training *tr) {
  run_ckpt_free(&tr->ckpt);
  be_destroy(tr->base_be); /* before its job: the backend's callbacks point into it */
  wl_job_free(tr->base);
  sim_destroy(tr->base_sim);
  wl_job_free(tr->job);
  if (tr->have_pwr) pwr_free(&tr->pwr);
  sim_free(tr->throttle);
  sim_free(tr->rec[0]);
  sim_free(tr->rec[1]);
  memset(tr, 0, sizeof *tr);
}
