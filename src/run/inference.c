/* fabsim run for workload.kind inference: the serving model of src/infer
 * (fabsim/infer.h) from the scenario, checked at setup like every
 * workload, and simulated when the run starts. The serving simulation is
 * its own discrete-event loop (continuous batching over replicas, integer
 * picoseconds); it submits nothing to the backend: at the analytic
 * fidelity a replica's AllReduce is src/coll's tuner model over the
 * topology (docs/inference.md says what is not modelled yet). */
#include <string.h>

#include "run/run_internal.h"

int run__inference_begin(run_workload *w, const cfg_scenario *cfg, const cfg_doc *doc,
                         const topo *t, sim_error *err) {
  w->inf = sim_calloc(1, sizeof *w->inf);
  return inf_job_from_cfg(w->inf, cfg, doc, t, err);
}

void run__inference_start(run_workload *w) {
  sim_error err = {0};
  w->inf_res = sim_calloc(1, sizeof *w->inf_res);
  /* every request was checked servable at begin (inf_unservable) */
  if (inf_run(w->inf_res, &w->inf->model, &w->inf->sched, &w->inf->requests, &err) != SIM_OK)
    sim_fatal("serving run: %s", err.msg);
  w->inference = w->inf_res;
  w->res.time_s = w->inf_res->span_s + sim_ps_to_s(w->inf->requests.r[0].arrival);
}

void run__inference_free(run_workload *w) {
  if (w->inf) inf_job_free(w->inf);
  sim_free(w->inf);
  sim_free(w->inf_res);
  w->inf = NULL;
  w->inf_res = NULL;
  w->inference = NULL;
}
