/* The per-flow log (output.flows): the telemetry tap's rows (tel_tap_flows)
 * with what the edge needs to name them, and the event that says when
 * output.max_flows left rows out (as output.max_events does for events). */
#include <stdio.h>

#include "run/run_internal.h"

/* A job whose transfers the run's backend never sees: a training job whose
 * collectives are timed once each apart from the run (comm_model reuse or
 * symmetric; *timed false), or a jobs: list's job timed by class while it
 * may share links (src/run/contention.c: jobs that may meet at the analytic
 * fidelity, or beside a training job that is not live; *timed true). Its
 * name, or NULL when every transfer of the run crosses the run's backend. */
static const char *apart(const run_setup *s, bool *timed) {
  *timed = false;
  if (s->training && s->tr.job && wl_job_comm_model(s->tr.job) != CFG_COMM_LIVE)
    return "the training job";
  for (uint32_t j = 0; j < s->jobs.n; j++) {
    const run_job *job = &s->jobs.v[j];
    *timed = job->timed;
    if (job->timed || (job->train && wl_job_comm_model(job->train) != CFG_COMM_LIVE))
      return job->cfg->name;
  }
  return NULL;
}

int run__flows_check(const run_setup *s, sim_error *err) {
  bool timed;
  const char *who = s->cfg.output.flows ? apart(s, &timed) : NULL;
  if (!who) return SIM_OK;
  if (timed)
    return cfg_fail_at(s->doc, "output.flows", err,
                       "%s may share links with another job and is timed by class apart from "
                       "the run's backend (jobs that may meet at the analytic fidelity, or beside "
                       "a training job that is not live), so the run has no record of each of its "
                       "transfers; allowed: output.flows at simulation.fidelity flow or packet "
                       "with every training job's workload.comm_model live, or output.flows false",
                       who);
  return cfg_fail_at(s->doc, "output.flows", err,
                     "%s times its collectives once each apart from the run's fabric "
                     "(workload.comm_model reuse or symmetric), so the run has no record of each "
                     "of its transfers; allowed: output.flows with workload.comm_model live, or "
                     "output.flows false",
                     who);
}

void run_flows_collect(run_flows *f, const run_setup *s, run_events *log) {
  const cfg_scenario *cfg = &s->cfg;
  *f = (run_flows){.on = cfg->output.flows, .cfg = cfg};
  if (!f->on || !s->tel.tap) return;
  simtime_ps from, to;
  f->v = tel_tap_flows(s->tel.tap, sim_now(s->sim), &f->n, &f->left, &from, &to);
  topo_split split = topo_split_of(cfg);
  f->spread = split == TOPO_SPLIT_POOLS ||
              (split == TOPO_SPLIT_ADAPTIVE && cfg->simulation.fidelity == CFG_FIDELITY_PACKET);
  if (s->jobs.n) f->job_of_gpu = run__job_of_gpu(&s->jobs, s->t);
  if (!f->left) return;
  char detail[256];
  snprintf(detail, sizeof detail,
           "%llu more transfers, starting from %.6g s to %.6g s, are not in flows.csv: "
           "output.max_flows is %u; raise it to keep them",
           (unsigned long long)f->left, sim_ps_to_s(from), sim_ps_to_s(to), cfg->output.max_flows);
  run_event_insert(log, from, "fabsim", "flows-truncated", detail);
}

void run_flows_free(run_flows *f) {
  sim_free(f->job_of_gpu);
  *f = (run_flows){0};
}
