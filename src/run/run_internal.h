/* Internal to src/run: shared by its files. */
#ifndef FABSIM_RUN_INTERNAL_H
#define FABSIM_RUN_INTERNAL_H

#include "fabsim/run.h"

/* Run `job` on `sim` in slices of simulated time of about 0.05-0.2 s of
 * wall time each (slicing never changes results): progress (may be NULL)
 * between slices, percent of `expected` when known; an interrupt
 * (sim_interrupt_pending) stops after the current slice (*complete false).
 * drive.c. */
int run__drive(const run_training *tr, wl_job *job, sim_ctx *sim, const char *what,
               const run_progress_fn *progress, simtime_ps expected, bool *complete,
               sim_error *err);

/* Check output.ports against t and wrap *be with the telemetry tap (and
 * start the backend's own port samples where it has them); SIM_ECONFIG at
 * the key. telemetry.c. */
int run__telemetry_begin(run_telemetry *o, be_backend **be, const cfg_scenario *cfg,
                         const cfg_doc *doc, const topo *t, sim_error *err);
void run__telemetry_free(run_telemetry *o);

/* workload.kind traffic: the pattern's plan over gpus[0..ngpus) (NULL:
 * every GPU) and, for a pair, its zero-byte one-way latency; a last phase
 * past the horizon of simulated time is refused at
 * workload.traffic.stagger, a pattern that does not fit at
 * workload.traffic.pattern. workload.c. */
int run__traffic_plan(coll_plan *plan, run_pair_latency *pair, const cfg_scenario *cfg,
                      const cfg_doc *doc, const topo *t, const uint32_t *gpus, uint32_t ngpus,
                      sim_error *err);

/* A training job of a jobs: list (jobs_train.c): its wl_job over gpus on
 * `be` (errors located at jobs[j].workload.*, doc scoped by the caller);
 * its result once the run stopped; the end of its last step (or its stop);
 * the same steps alone on a fresh backend of the same fabric. */
int run__job_train_begin(run_job *job, const cfg_doc *doc, const topo *t, be_backend *be,
                         const uint32_t *gpus, uint32_t ngpus, sim_error *err);
void run__job_train_end(run_job *job, sim_ctx *sim);
simtime_ps run__job_train_last(const run_job *job);
int run__job_train_alone(run_job *job, const cfg_doc *doc, const topo *t, sim_error *err);

#endif
