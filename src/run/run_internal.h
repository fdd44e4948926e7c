/* Internal to src/run: shared by its files. */
#ifndef FABSIM_RUN_INTERNAL_H
#define FABSIM_RUN_INTERNAL_H

#include "fabsim/run.h"

/* Run `job` (of `steps` steps) on `sim` in slices of simulated time of
 * about 0.05-0.2 s of wall time each (slicing never changes results):
 * progress (may be NULL) between slices, percent of `expected` when known;
 * an interrupt (sim_interrupt_pending) stops after the current slice, or
 * the timing of its collectives before its first step (*complete false).
 * drive.c. */
int run__drive(const cfg_doc *doc, uint32_t steps, wl_job *job, sim_ctx *sim, const char *what,
               const run_progress_fn *progress, simtime_ps expected, bool *complete,
               sim_error *err);

/* Check output.ports against t and wrap *be with the telemetry tap (and
 * start the backend's own port samples where it has them); SIM_ECONFIG at
 * the key. telemetry.c. */
int run__telemetry_begin(run_telemetry *o, be_backend **be, const cfg_scenario *cfg,
                         const cfg_doc *doc, const topo *t, sim_error *err);
void run__telemetry_free(run_telemetry *o);
/* The job of each GPU of a jobs: list (UINT32_MAX: none), its nodes' GPUs;
 * caller frees. O(GPUs). */
uint32_t *run__job_of_gpu(const run_jobs *js, const topo *t);
/* output.flows with a job whose transfers the run's backend never sees (a
 * training job's collectives timed apart: comm_model reuse or symmetric,
 * or timed by class in a jobs: list): SIM_ECONFIG located at output.flows.
 * SIM_OK otherwise (flows.c). */
int run__flows_check(const run_setup *s, sim_error *err);

/* workload.kind traffic: the pattern's plan over gpus[0..ngpus) (NULL:
 * every GPU) and, for a pair, its zero-byte one-way latency; a last phase
 * past the horizon of simulated time is refused at
 * workload.traffic.stagger, a pattern that does not fit at
 * workload.traffic.pattern. workload.c. */
int run__traffic_plan(coll_plan *plan, run_pair_latency *pair, const cfg_scenario *cfg,
                      const cfg_doc *doc, const topo *t, const uint32_t *gpus, uint32_t ngpus,
                      sim_error *err);

/* A collective over every GPU of a 1-GPU cluster or job (workload.collective.ranks
 * 0) is refused, as ranks 1 is at load: SIM_ECONFIG at `key`. workload.c. */
/* workload.kind inference (inference.c): every check and the requests at
 * begin (SIM_ECONFIG at the key), the serving simulation at start (it
 * needs no event of the backend's), freed with the workload. */
int run__inference_begin(run_workload *w, const cfg_scenario *cfg, const cfg_doc *doc,
                         const topo *t, sim_error *err);
void run__inference_start(run_workload *w);
void run__inference_free(run_workload *w);
int run__one_gpu_check(const cfg_workload *wl, uint32_t ngpus, const cfg_doc *doc, const char *key,
                       sim_error *err);

/* A training job of a jobs: list (jobs_train.c): its wl_job over gpus on
 * `be` (errors located at jobs[j].workload.*, doc scoped by the caller);
 * its result once the run stopped; the end of its last step (or its stop);
 * the same steps alone on a fresh backend of the same fabric. */
/* A job's alone run (jobs.c): a fresh simulation and backend of the
 * fabric, with the scenario's faults scheduled on it (js->faults; GPU
 * hooks: none until the caller sets them). End frees all three. */
typedef struct run__alone {
  sim_ctx *sim;
  be_backend *be;
  flt_sched *fs;
} run__alone;
int run__alone_begin(run__alone *a, const run_jobs *js, const cfg_scenario *view,
                     const cfg_doc *doc, const topo *t, sim_error *err);
void run__alone_end(run__alone *a);

/* How a training job of a jobs: list times its collectives: as it would
 * alone (isolated), live (it may meet a job that runs live or submits
 * transfers: collective, traffic), or timed by class and stretched while
 * other jobs' collectives share its links: with the comm model it would
 * have alone (TIMED: run_jobs then stretches it unless every job of its
 * group came out live) or under reuse (TIMED_REUSE: it came out live but
 * its group is timed). */
typedef enum {
  RUN__TRAIN_ALONE,
  RUN__TRAIN_LIVE,
  RUN__TRAIN_TIMED,
  RUN__TRAIN_TIMED_REUSE
} run__train_mode;
/* A training job's checkpoints and data loading (run_ckpt) on the run's
 * backend, or on the jobs' one storage fabric (built by the first job that
 * needs it); a no-op without either. */
int run__job_train_storage(run_jobs *js, run_job *job, const cfg_doc *doc, be_backend *be,
                           sim_error *err);
int run__job_train_begin(const run_jobs *js, run_job *job, run__train_mode mode, const cfg_doc *doc,
                         const topo *t, be_backend *be, const uint32_t *gpus, uint32_t ngpus,
                         sim_error *err);

/* The stretching of timed jobs' collectives (contention.c), on the run's
 * simulation: add each timed job (training: its classes, measured, their
 * plans routable, and its collective timer set at seal; a collective or
 * traffic job: its plan as one task that took `alone` alone, ended by
 * done(ctx)), in `group` (jobs of different groups share no link) and its
 * traffic class `tclass` (cfg's fabric.classes), then seal; start a plan's
 * task at its start. Free after the run. */
typedef struct run__contention run__contention;
run__contention *run__contention_create(const topo *t, const cfg_scenario *cfg, sim_ctx *sim);
int run__contention_add_training(run__contention *c, wl_job *j, uint32_t group, uint8_t tclass,
                                 sim_error *err);
uint32_t run__contention_add_plan(run__contention *c, const coll_plan *p, simtime_ps alone,
                                  uint32_t group, uint8_t tclass, void (*done)(void *ctx),
                                  void *ctx);
void run__contention_seal(run__contention *c);
void run__contention_start_plan(run__contention *c, uint32_t id);
void run__contention_free(run__contention *c);
/* A training job's classes timed before the run (reuse, symmetric; a
 * no-op under live): on a fresh backend of the fabric, without faults. */
int run__job_train_measure(run_job *job, const topo *t, const cfg_doc *doc, sim_error *err);
/* The timed jobs of js on the stretching (jobs.c): training jobs measured
 * first; a collective or traffic job timed alone now (its alone baseline). */
int run__jobs_contention(run_jobs *js, sim_ctx *sim, const cfg_doc *doc, sim_error *err);
/* Distinct (class, collectives beside it) whose stretch was computed. */
size_t run__contention_memo(const run__contention *c);
void run__job_train_end(run_job *job, sim_ctx *sim);
simtime_ps run__job_train_last(const run_job *job);
int run__job_train_alone(const run_jobs *js, run_job *job, const cfg_doc *doc, const topo *t,
                         sim_error *err);

#endif
