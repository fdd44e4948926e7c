/* fabsim run layer (src/run): what `fabsim run` does, below the verb, as a
 * tested library that returns typed results. The verb (src/cli/cmd_run.c)
 * parses arguments, calls this and prints; summary.json and the terminal
 * text are both built from the structs here (run_result; src/output's
 * out_run_summary and out_run_print, one writer each), so nothing inside reads its own output
 * back. The layer installs no signal handler and prints nothing.
 *
 * A training run (workload.kind training): a job of workload.steps steps on
 * the run's backend, disturbed by the scenario's GPU faults (played through
 * the job's hooks, wl_job_hooks, by the fault scheduler of src/reliability)
 * and by racks over their cooling (src/power), and, when anything may
 * disturb it, the same steps on a second, fault-free simulation of the same
 * scenario (the baseline). Afterwards run_training_report derives the
 * operator's view: failure and its cost, silent data corruption, root cause
 * of each slow step against the baseline, power.
 *
 * Simulated time is integer picoseconds throughout (run_event.at, the
 * steps' bounds); seconds are formed only where a figure is written. */
#ifndef FABSIM_RUN_H
#define FABSIM_RUN_H

#include "fabsim/backend.h"
#include "fabsim/coll.h"
#include "fabsim/config.h"
#include "fabsim/fault.h"
#include "fabsim/infer.h"
#include "fabsim/place.h"
#include "fabsim/power.h"
#include "fabsim/rootcause.h"
#include "fabsim/tel_tap.h"
#include "fabsim/topo.h"
#include "fabsim/trace.h"
#include "fabsim/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the run's event log ------------------------------------------------------------ */

/* One line of the log the operator reads (summary.json events[], events.csv,
 * the database's events): what happened to which component, when. */
typedef struct run_event {
  simtime_ps at;
  char *component;  /* owned */
  const char *kind; /* static: a fault kind, "straggler", "job-stopped", ... */
  char *detail;     /* owned */
} run_event;

typedef struct run_events {
  run_event *v;
  size_t n, cap;
} run_events;

void run_event_add(run_events *log, simtime_ps at, const char *component, const char *kind,
                   const char *detail);
/* Insert in time order: after every event at or before `at`; returns its
 * index. O(n). */
size_t run_event_insert(run_events *log, simtime_ps at, const char *component, const char *kind,
                        const char *detail);
/* Stable by time (insertion order among equal times). O(n^2) worst, O(n)
 * on the nearly sorted logs runs make. */
void run_events_sort(run_events *log);
void run_events_free(run_events *log);
/* At most `max` events (0: no bound) reach the outputs: a longer log keeps
 * its earliest `max` (stably by time), then one "events-truncated" event,
 * at the first left out, saying how many and until when (issue 27, defect
 * 14: a flapping link's millions of events). A log within it is left as
 * it is. O(n log n) when it caps. */
void run_events_cap(run_events *log, size_t max);

/* Every fault of the scenario timed at or after the workload's end (`end`)
 * had no effect on it: a "fault-after-end" event for each, inserted in time
 * order. `stopped`: a fault stopped the workload (it failed) at `end`, so
 * the faults at `end` itself are that stop's cause, not after it. Returns how many; their indices
 * into cfg->faults go to idx and their event details (owned by the log) to detail (room for
 * cfg->faults.n each), so the caller can warn at faults[i].at. */
size_t run_faults_after_end(const cfg_scenario *cfg, simtime_ps end, bool stopped, run_events *log,
                            uint32_t *idx, const char **detail);
/* Go-back-N recovery under per-packet or per-flowlet routing at the packet
 * fidelity (adaptive, spray): modelled as such NICs behave, a retransmission
 * storm with no loss, which surprises. A "warning" event at 0 in the log and
 * its detail (owned by the log); NULL and nothing added otherwise. */
const char *run_reordering_warning(const cfg_scenario *cfg, run_events *log);
/* A collective (workload.kind collective) that leaves NICs of the nodes it
 * spans idle (coll_plan_idle_nics: fewer channels than NICs, ranks that
 * skip the GPUs of some NICs) runs below what the nodes can do, which NCCL
 * would not: a "warning" event at 0 and its detail (owned by the log);
 * NULL and nothing added otherwise. */
const char *run_idle_nic_warning(const cfg_scenario *cfg, const coll_plan *plan, const topo *t,
                                 run_events *log);

/* Power of the run: a training job's at its real utilization (the racks
 * throttle as in the run), others' at power.utilization. */
typedef struct run_power {
  const pwr_model *model; /* borrowed from the run */
  double utilization, step_s, run_s;
  const char *source; /* "job" or "power.utilization" */
  bool job;           /* a training job's (then throttle_utilization below is reported) */
  pwr_summary sum;
  bool have_throttle_utilization; /* a baseline ran */
  double throttle_utilization;
} run_power;

/* Power of a run that is not a training job: power.utilization over the
 * run's time as one "step" of step_s. m is the caller's (pwr_free it, also
 * on error); bad power keys: SIM_ECONFIG at the key. */
int run_power_of(run_power *out, pwr_model *m, const cfg_scenario *cfg, const cfg_doc *doc,
                 const topo *t, double step_s, sim_error *err);

/* ---- faults ----------------------------------------------------------------------- */

/* When a network fault was active: [at, until) (until_set false: still
 * active when the run stopped), as the fault scheduler's log recorded it:
 * a down kind from the event that applied it until its recovery after its
 * duration or the first later -up entry of its target, whichever came
 * first; a flap's episode lasts count x period unless an -up ends it. */
typedef struct run_fault_window {
  simtime_ps at, until;
  bool until_set;
  const char *component; /* the fault's target, borrowed */
  const char *kind;      /* static */
} run_fault_window;

/* The windows of the network down kinds of f[0..n) (the list fs plays;
 * fs NULL: none) that the run reached, in list order, into out (room for
 * n). Returns how many. O(log lines x -up entries x n). */
uint32_t run_fault_windows(const flt_sched *fs, const flt_fault *f, uint32_t n,
                           run_fault_window *out);

/* The scheduler's log (faults, reroutes, failed transfers) into `log`. With
 * `job_logs_gpu` (a training job: its report logs each GPU fault with what
 * it did to the job) the scheduler's own lines for GPU faults are left out. */
void run_fault_log(const flt_sched *fs, const flt_fault *f, uint32_t n, bool job_logs_gpu,
                   run_events *log);

/* ---- a collective or traffic run ---------------------------------------------------- */

/* The run of any workload kind but training's own loop: the listener that
 * keeps the first failed transfer (training too), and for a collective,
 * traffic or traces what ran and what it measured. */
/* A pair's zero-byte one-way latency (traffic pattern pair), as the sum of
 * its parts (coll_p2p): what starts it, its routed path, what completes it. */
typedef struct run_pair_latency {
  double start_s, path_s, finish_s;
} run_pair_latency;
double run_pair_latency_s(const run_pair_latency *l); /* the sum */

typedef struct run_workload {
  /* public */
  coll_plan plan; /* collective, traffic */
  coll_exec exec;
  coll_result res;             /* res.time_s: the traces' too */
  run_pair_latency pair;       /* traffic pattern pair: zero-byte one-way latency */
  const trc_set *trace_set;    /* workload.kind trace: the traces and */
  trc_result trace;            /* the run's figures */
  const inf_result *inference; /* workload.kind inference: the serving figures (else NULL) */
  /* the outcome: a job that lost a transfer has failed (training: the job
   * itself stops there, wl_job); every output reads these */
  bool failed, stopped;
  uint64_t failures; /* transfers reported failed (be_stats.transfers_failed) */
  be_failure first;  /* the first of them, as the backend reported it */
  bool have_first;
  bool gpu_failed;         /* traces: a GPU or node failure stopped the job */
  trc_failure gpu_failure; /* (training: the job's own report has it) */
  /* private */
  flt_gpu_hooks hooks; /* traces: the runner's, for the fault scheduler (setup.c) */
  cfg_workload_kind kind;
  be_failure_fn prev_failure; /* the listener before ours (the fault scheduler's log) */
  void *prev_failure_ctx;
  trc_set *trs;
  trc_runner *trr;
  inf_job *inf; /* workload.kind inference (src/run/inference.c) */
  inf_result *inf_res;
} run_workload;

/* Take be->on_failure (ahead of the listener there, e.g. the fault
 * scheduler's) and build the plan or the trace runner. Bad input:
 * SIM_ECONFIG located at the key (traces: trc_load's errors). Free with
 * run_workload_free after be_destroy, either way. */
int run_workload_begin(run_workload *w, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                       be_backend *be, sim_error *err);
/* Submit the plan or start the traces (not for training). */
void run_workload_start(run_workload *w, be_backend *be);
/* Once the simulation stopped (complete, or stopped early): the result, the
 * outcome from the backend's counters `net` (or the training `job`'s), and a
 * "job-failed" event into `log` when a collective or traffic lost data. */
void run_workload_end(run_workload *w, sim_ctx *sim, const be_stats *net, bool complete,
                      const wl_job *job, run_events *log);
void run_workload_free(run_workload *w);
/* Bytes a traffic run delivered: every flow's when it ran to its end, else
 * what the backend delivered (`net`: transfers completed) before the stop. */
double run_traffic_bytes(const run_workload *w, const be_stats *net);

/* A rough length of a plan, for the progress line's percent (0: unknown):
 * per phase, the busiest GPU's bytes over its path's first hop rate, plus
 * latency; staggered phases overlap. O(transfers). */
simtime_ps run_plan_estimate(const coll_plan *p, const topo *t, const cfg_scenario *cfg);

/* ---- several jobs on one fabric (jobs:) ------------------------------------------------ */

/* One job of the scenario's jobs: list, placed and planned (collective,
 * traffic and training workloads; docs/shared-fabric.md, "Several jobs").
 * A training job runs workload.steps steps of its own DAG over its GPUs
 * (wl_job_create_on), its collectives live on the shared backend, so they
 * meet the other jobs' transfers on the links they share. */
/* Another job a job may meet on a link, and where (plc_sharing_of). */
typedef struct run_job_share {
  uint32_t job; /* index in the jobs: list */
  plc_sharing where;
} run_job_share;

typedef struct run_job {
  /* public */
  const cfg_job *cfg; /* the scenario's entry: name, gpus, placement, start */
  cfg_scenario view;  /* the scenario with the job's workload in place (shallow copy) */
  uint32_t *nodes;    /* its nodes, ascending (the collective's rank order); owned */
  uint32_t nnodes;
  plc_metrics metrics;   /* of the nodes in that order */
  coll_plan plan;        /* collective, traffic: over the job's GPUs */
  run_pair_latency pair; /* traffic pattern pair: zero-byte one-way latency */
  coll_exec exec;        /* collective, traffic: in the shared run, start = cfg->start */
  wl_job *train;         /* training: the job on the shared backend (owned) */
  wl_job *train_alone;   /* training: the same steps alone (owned; more than one job) */
  coll_result res;       /* in the shared run, from the job's start (training: time_s, the
                            steps from the job's start to the last one's end) */
  bool finished;         /* the job's collective or steps ran to their end */
  coll_result alone;     /* the same plan alone on the same fabric (more than one job) */
  bool have_alone;
  double slowdown;       /* res.time_s / alone.time_s; 1 for a single job; 0: unknown */
  run_job_share *shares; /* the other jobs it may meet on a link, in list order (owned) */
  uint32_t nshares;
  bool isolated;  /* shares no link, at analytic or flow, no network faults: runs as alone,
                     so a training job keeps its comm model (reuse, symmetric: timed on a
                     fresh backend before the run) */
  uint32_t group; /* jobs that may meet, transitively (a connected set of shares) */
  bool timed;     /* training that may share links, timed by class and stretched while
                     other jobs' collectives share its links (src/run/contention.c) */
  /* private */
  be_backend *be;
  bool train_started;
  struct run__contention *cnt; /* timed collective or traffic job: its task there */
  uint32_t task;
  struct run_ckpt *ckpt; /* training with workload.checkpoint.every or data_loading: its
                            writes and reads (run_jobs_start; owned); NULL */
  trc_set *trs;          /* trace: its traces and their runner over the job's GPUs, and */
  trc_runner *trr;       /* (owned) */
  trc_result trace;      /* the figures (run_jobs_end; owned) */
} run_job;

typedef struct run_jobs {
  run_job *v; /* owned; n 0: the scenario has no jobs: list */
  uint32_t n;
  /* pause victims between the jobs (fabsim/backend.h be_job_pauses), from
   * run_jobs_end: a fidelity that has them (packet), more than one job */
  be_job_pauses pauses; /* arrays the backend's: valid until it is destroyed */
  bool have_pauses;
  const topo *t;           /* private: the fabric (fresh backends for the training jobs' timing) */
  const flt_fault *faults; /* private: the scenario's faults, resolved (not owned) */
  uint32_t nfaults;
  struct run__contention *contention; /* private: the timed jobs' stretching (owned) */
  struct run_storage *storage; /* private: storage.attach separate, a job checkpoints or loads:
                                  the one storage fabric every job writes to (owned) */
} run_jobs;

/* Places the jobs in list order, each onto the nodes the earlier ones left
 * free (plc_place; errors located at jobs[j].placement or .nodes), finds
 * the jobs that share no link with another (run_job.isolated), and plans
 * each job's collective over its GPUs, or builds its training job on `be`
 * (errors at jobs[j].workload.*). A training job that may share a link
 * runs its collectives live (workload.comm_model auto means live there;
 * reuse and symmetric, which time each collective alone, would hide the
 * other jobs and are refused, naming the job it may meet); an isolated one
 * keeps the comm model it would have alone. Nothing simulated. Free with
 * run_jobs_free either way, after be_destroy. O(jobs^2 x nodes + jobs x
 * (nodes log nodes + plan or DAG)). */
int run_jobs_begin(run_jobs *js, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                   be_backend *be, const flt_fault *faults, uint32_t nfaults, sim_error *err);
/* True when a job trains (then run_jobs_run drives the simulation). */
bool run_jobs_training(const run_jobs *js);
/* Times what must be timed before the run (each training job's classes
 * under reuse and symmetric, on a fresh backend; each timed collective or
 * traffic job alone, its baseline) and sets up the stretching of timed
 * jobs, then schedules each job's plan (or its training job's start, or its
 * timed task) on `be` at its start time (then ev_run, or run_jobs_run when
 * a job trains). Errors: a plan a class cannot build, a timed job that does
 * not finish alone; SIM_EINTR when an interrupt (Ctrl-C) stopped the timing
 * (no job is scheduled: the run has nothing to do). */
int run_jobs_start(run_jobs *js, sim_ctx *sim, be_backend *be, const cfg_doc *doc, sim_error *err);
/* The simulation until every job has ended (training: its steps done or
 * stopped), in slices of simulated time; an interrupt noted by the caller's
 * signal handler (sim_interrupt_note) stops after the current slice
 * (*complete false). Later events (faults past the end) stay pending.
 * Errors: a training job's (SIM_ERANGE past the horizon, a stall). */
int run_jobs_run(run_jobs *js, sim_ctx *sim, const cfg_doc *doc, bool *complete, sim_error *err);
/* The GPU faults of the scenario, into the training or trace job that
 * holds the GPU (ctx is js; a GPU of no such job: no effect). */
flt_gpu_hooks run_jobs_hooks(run_jobs *js);
/* Once the simulation stopped: each job's result, and the pause victims
 * between jobs where the fidelity counts them (run_jobs.pauses; the jobs'
 * GPUs were given to the backend at run_jobs_begin). Returns the last
 * job's end (the run's length). */
simtime_ps run_jobs_end(run_jobs *js, sim_ctx *sim);
/* With more than one job: each job alone on a fresh backend of the same
 * fabric and the same GPUs, under the same faults (the fabric's, and those
 * of its own GPUs: a fault is the fabric's whoever runs on it, so the
 * slowdown is what the other jobs and its own checkpoint writes cost), and
 * its slowdown; a training job's alone run writes no checkpoints and loads
 * no data, and is its checkpoints' baseline (run_ckpt_account); a single
 * job that writes checkpoints runs alone for that too. Call after a
 * complete run (the plans' transfer pools are free again). O(jobs x one
 * run). SIM_EINTR when an interrupt (Ctrl-C) stopped it: the jobs not yet
 * run alone have no baseline (have_alone false, no slowdown). */
int run_jobs_alone(run_jobs *js, const cfg_doc *doc, const topo *t, sim_error *err);
/* Each job's checkpoint writes as events ("JOB/checkpointK"). */
void run_jobs_events(const run_jobs *js, run_events *log);
/* The earliest GPU or node failure that stopped a training or trace job
 * (the other jobs ran on): the job's index and the failure; false when no
 * job stopped so. O(jobs x events). */
bool run_jobs_failure(const run_jobs *js, uint32_t *job, trc_failure *f);
/* A job so stopped fails the run: w's outcome (failed, gpu_failed and its
 * failure, unless a failure is already set) and a "job-stopped" event. */
void run_jobs_outcome(const run_jobs *js, run_workload *w, run_events *log);
/* Why job j's time differs from its alone time, in one line: the excess and
 * the jobs it may meet and where ("" when it runs as fast as alone). */
void run_job_cause(const run_jobs *js, const run_job *job, const topo *t, char *buf, size_t n);
void run_jobs_free(run_jobs *js);

/* ---- a training run ----------------------------------------------------------------- */

/* A step's bounds and fabric counters (the counters: packet fidelity). */
typedef struct run_step_record {
  simtime_ps start, end;
  bool observed;
  double pfc_paused_s;
  uint64_t ecn_marks;
} run_step_record;

/* Where a training run is, for a progress line (run_progress_fn). */
typedef struct run_progress {
  const char *what;    /* "fault-free:" (the baseline) or "run:"; NULL: run_drive_sim's */
  simtime_ps now;      /* simulated time reached */
  uint32_t step;       /* the step running, 1-based */
  uint32_t steps;      /* workload.steps */
  simtime_ps expected; /* the run's expected end (the baseline's), 0: unknown */
  double started;      /* wall clock (out_wall_now) when this part began */
  double rate;         /* events per second of wall time, lately */
  double wall;         /* run_drive_sim: wall clock at this call */
  bool final;          /* the last call: clear the line */
} run_progress;

typedef struct run_progress_fn {
  void *ctx;
  void (*draw)(void *ctx, const run_progress *p);
} run_progress_fn;

/* Run sim to the end like ev_run(sim, SIM_TIME_MAX), in slices of simulated
 * time so that progress (NULL: none) can draw a line (simulated time,
 * percent of expected, events/s, ETA; started: the wall clock at the start)
 * about 5 times a second, and stop cleanly once an interrupt is noted
 * (sim_interrupt_pending: the caller's signal handler): after the current
 * slice. Returns SIM_OK when the queue ran empty, SIM_EINTR when stopped,
 * SIM_ERANGE when an event was due past the horizon of simulated time
 * (sim_past_horizon). Slicing never changes results: events run in the same
 * order; an idle stretch of simulated time costs one slice (sim_slice_end).
 * Under mpirun the ranks slice differently, each by its own clock: the
 * parallel engine's results do not depend on where its runs stop, only its
 * window count does (docs/parallel.md, section 7.2). */
int run_drive_sim(sim_ctx *sim, simtime_ps expected, double started,
                  const run_progress_fn *progress);

/* Checkpoints of a training run (workload.checkpoint.*; src/run/checkpoint.c):
 * each written by `writers` GPUs to the storage servers, after step
 * after_step (1-based), from start to end (0: never finished). The steps
 * it overlapped (first_step .. last_step, 1-based; 0: none) took slowdown_s
 * longer in all than the same steps of the baseline (the job without
 * checkpoints and faults); sync: stall_s, the job's wait for the write. */
struct run_training;
/* The storage fabric of storage.attach separate (topo_build_storage): its
 * scenario, topology and backend on the run's simulation, shared by every
 * job that writes or reads there. */
typedef struct run_storage {
  cfg_scenario *cfg;
  topo *t;
  be_backend *be;
} run_storage;
int run_storage_begin(run_storage *s, const cfg_scenario *cfg, const cfg_doc *doc, sim_ctx *sim,
                      sim_error *err);
void run_storage_free(run_storage *s);
typedef struct run_checkpoint {
  uint32_t after_step, writers;
  uint64_t bytes;
  simtime_ps start, end;
  uint32_t first_step, last_step;
  double slowdown_s, stall_s;
  /* transfers of the write that failed (be_failure): then the checkpoint
   * was not written (end: when its last transfer ended or failed) */
  uint32_t failed;
  uint64_t undelivered; /* bytes the failed transfers did not deliver */
  const char *cause;    /* the first failure's (static) */
} run_checkpoint;

typedef struct run_ckpt {
  /* public */
  uint32_t every; /* 0: no checkpoints (nothing below but `load` is set) */
  bool sync, separate;
  uint64_t size;    /* bytes of one checkpoint */
  uint32_t writers; /* GPUs writing a share each */
  run_checkpoint *v;
  size_t n; /* taken (started or waiting) */
  /* workload.data_loading: each next step's tokens read at a step's end by
   * `readers` GPUs (tensor rank 0 of stage 0 of each replica), load_bytes in
   * all per step; loads done, the longest, and any still reading when the
   * next step ended (a loader that fell behind) */
  bool load;
  uint32_t readers;
  uint64_t load_bytes;
  size_t loads, loads_late;
  simtime_ps load_max;
  size_t loads_failed;    /* reads with a failed transfer: not in loads, nor load_max */
  const char *load_cause; /* the first failed read's cause (static) */
  /* private */
  const cfg_scenario *cfg;
  wl_job *job;
  sim_ctx *sim;
  be_backend *be;            /* where the writes go: the run's, or the storage fabric's */
  run_storage own;           /* separate, no shared storage given: built here */
  const run_storage *shared; /* separate: the storage fabric (own or the caller's) */
  be_xfer *x; /* nx = writers x pieces: each writer's share over every server endpoint */
  size_t nx;
  uint32_t pieces;
  be_xfer *rx; /* nrx: each reader's share from every server endpoint */
  size_t nrx;
  size_t cap, started, done;
  bool inflight, draining, load_inflight;
  simtime_ps load_start;
  uint8_t *role;              /* per GPU of be's fabric: 1 a writer, 2 a reader (jobs share it) */
  uint32_t role_n;            /* GPUs in role */
  bool load_failed_now;       /* a transfer of the read in flight failed */
  be_failure_fn prev_failure; /* be's listener before ours (handed every failure); free
                                 the run_ckpt after be, whose listener points here */
  void *prev_failure_ctx;
} run_ckpt;
/* The checkpoint's bytes: workload.checkpoint.size, else the model's
 * parameters x (weight + optimizer bytes per parameter). */
uint64_t run_ckpt_size(const cfg_scenario *cfg, const wl_model *m);
/* Plans the writes of `job` (on the run's backend `be`; separate: on
 * `storage`, or when NULL a storage fabric built here on be's simulation).
 * No-op without workload.checkpoint.every and data_loading. Free with
 * run_ckpt_free either way. */
int run_ckpt_begin(run_ckpt *c, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                   be_backend *be, const run_storage *storage, wl_job *job, sim_error *err);
/* From the job's on_step callback: step `step` (0-based) ended at `end`. */
void run_ckpt_step(run_ckpt *c, uint32_t step, simtime_ps end);
/* A write or read still in flight. */
bool run_ckpt_busy(const run_ckpt *c);
/* After the job: runs a write still in flight to its end (ev_run on the
 * job's simulation), then run_ckpt_account against tr's baseline; SIM_ERANGE
 * (sim_horizon_fail) when one was due past the horizon of simulated time. */
int run_ckpt_finish(run_ckpt *c, const struct run_training *tr, sim_error *err);
/* Each checkpoint's steps overlapped (job's steps) and their excess over
 * the same steps of `base` (the job without checkpoints; NULL: unknown,
 * slowdown_s 0); sync: each write's stall. O(checkpoints x steps). */
void run_ckpt_account(run_ckpt *c, const wl_job *job, const wl_job *base);
/* Each write as an event at its start and one at its end, components
 * "checkpointK", or "JOB/checkpointK" for a job of a jobs: list. */
void run_ckpt_events(const run_ckpt *c, const char *job, run_events *log);
void run_ckpt_free(run_ckpt *c);

typedef struct run_training {
  /* public */
  wl_job *job;          /* the run's job */
  wl_job *base;         /* the fault-free baseline; NULL when nothing could disturb the job */
  flt_gpu_hooks hooks;  /* the job's GPU-fault hooks, for the fault scheduler */
  double utilization;   /* the baseline's utilization the racks throttled at; 0: no baseline */
  bool stopped_in_base; /* Ctrl-C during the baseline: the job did not run */
  const char *warning;  /* network faults with a comm_model that times collectives once:
                           the detail of the log's "warning" event (owned by the log); NULL */
  /* private */
  const cfg_scenario *cfg;
  const cfg_doc *doc;
  const topo *t;
  const flt_fault *faults; /* the scenario's, resolved (flt_resolve); borrowed */
  uint32_t nfaults;
  sim_ctx *sim; /* the run's */
  pwr_model pwr;
  bool have_pwr;
  double *throttle; /* per GPU, from the racks' cooling at the fault-free utilization */
  uint32_t throttled_gpus;
  sim_ctx *base_sim;
  be_backend *base_be;
  be_backend *be;          /* the run's */
  be_stats last;           /* its counters at the end of the previous step */
  run_events *log;         /* while running */
  run_step_record *rec[2]; /* per step, [0] the run, [1] the baseline */
  size_t nrec[2], reccap[2];
  be_stats base_last;
  run_ckpt ckpt; /* public: the checkpoints (ckpt.every 0: none) */
} run_training;

/* Job and power model on the run's backend `be`; `faults` (flt_resolve's,
 * borrowed until run_training_report) are the scenario's: the caller's fault
 * scheduler plays them, GPU kinds through tr->hooks (flt_sched_set_hooks).
 * Horizon checks and bad input: SIM_ECONFIG located at the key. Free with
 * run_training_free either way. */
int run_training_begin(run_training *tr, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                       be_backend *be, const flt_fault *faults, uint32_t nfaults, sim_error *err);
/* When anything may disturb the job (faults, a rack that could exceed its
 * limit): the fault-free baseline first, then the racks throttled at its
 * utilization (thermal events into `log`); then the job. Both are driven in
 * slices of simulated time: progress (NULL: none) between them, and an
 * interrupt the caller's signal handler noted (sim_interrupt_note) stops the
 * run cleanly after the current slice (*complete false: the steps done so
 * far are reported; during the baseline the job does not run and
 * stopped_in_base is set). The library installs no signal handler. */
int run_training_run(run_training *tr, run_events *log, const run_progress_fn *progress,
                     bool *complete, sim_error *err);
/* Free after be_destroy of the run's backend (its callbacks point into the job). */
void run_training_free(run_training *tr);

/* The job's GPU timeline (wl_job_gpu_timeline) replayed into tl's GPU
 * state counts up to `end`, as groups of GPUs per stage; a job stopped by a
 * failure is down from then on. O(bins x stages). */
struct tel;
void run_job_gpu_series(struct tel *tl, const wl_job *job, simtime_ps end);
/* The same for several jobs on disjoint GPUs (a jobs: list), their moves
 * merged in time order. O(sum of bins x stages, log). */
void run_jobs_gpu_series(struct tel *tl, const wl_job *const *jobs, uint32_t njobs, simtime_ps end);

/* Step k's bounds and fabric counters (0-based, k < steps done) of the run
 * or, with `baseline`, of the fault-free baseline; NULL past them. */
const run_step_record *run_training_step(const run_training *tr, bool baseline, uint32_t k);

/* A job's utilization: the compute share of its steps done (0: none). */
double run_job_utilization(const wl_job *j);
/* The rack of a GPU (power.rack.servers per rack). */
uint32_t run_gpu_rack(const run_training *tr, uint32_t gpu);

/* The failure that stopped the job (happened false: none). */
typedef struct run_failure {
  bool happened;
  wl_gpu_event_kind kind; /* WL_GPU_FAIL, WL_NODE_FAIL or WL_TRANSFER_FAIL */
  const char *kind_name;  /* "gpu-fail", "node-fail", "transfer-failed" */
  char component[32];     /* gpuN or nodeN */
  simtime_ps at, step_start;
  uint32_t gpu, dst_gpu, node;
  const char *cause; /* transfer-failed: be_failure.cause, "unknown" if none */
  uint32_t step;     /* 1-based step it broke */
  uint32_t steps_completed;
  double checkpoint_interval_s, checkpoint_write_s;
  bool checkpoint_interval_auto; /* Daly's */
  rel_failure_cost cost;
  double lost_steps; /* lost_work_s over the last step's length */
} run_failure;

/* One silent data corruption and when replica checksums detect it. */
typedef struct run_sdc {
  simtime_ps at;
  uint32_t gpu, step; /* 1-based */
  uint32_t check_interval;
  uint64_t diverge_step; /* 1-based; 0: no replica to diverge from */
  bool diverged;         /* within the simulated steps, at diverge_at */
  simtime_ps diverge_at;
  uint64_t detect_step; /* 0: never */
  bool detect_known;    /* detect_at holds a time (false also past SIM_TIME_MAX) */
  bool detect_estimated;
  simtime_ps detect_at; /* extrapolated at the last step's length when estimated */
} run_sdc;

/* ---- a training job's steps, summarized once (report.c) -------------------------------- */

/* The figures of a step that have a spread over the steps. */
typedef enum {
  RUN_STEP_TIME,         /* time_s */
  RUN_STEP_COMPUTE,      /* compute_s */
  RUN_STEP_EXPOSED_COMM, /* exposed_comm_s */
  RUN_STEP_BUBBLE,       /* bubble_s */
  RUN_STEP_MFU,          /* mfu (a rate) */
  RUN_STEP_TOKENS_PER_S, /* tokens_per_s (a rate) */
  RUN_STEP_NFIGS
} run_step_fig;

/* summary.json's step_stats key of figure f ("time_s", ..., "tokens_per_s"). */
const char *run_step_fig_key(run_step_fig f);

typedef struct run_stat {
  double mean, stdev, min, max;
} run_stat;

/* The steps' spread, computed once after the run: for each figure the mean
 * over the steps done, the population standard deviation (divided by N:
 * these steps, not an estimate of others), the least and the greatest.
 * Times: the arithmetic mean. Rates (mfu, tokens_per_s): the time-weighted
 * mean, sum(rate x time) / sum(time), the rate over all the steps together,
 * as a training log's average over its interval; their stdev, min and max
 * are of the per-step rates. steps 0: no step done (no figure). */
typedef struct run_step_stats {
  uint32_t steps;
  run_stat fig[RUN_STEP_NFIGS];
} run_step_stats;

/* j's steps done (wl_job_steps_done) summarized; O(steps). */
void run_step_stats_of(const wl_job *j, run_step_stats *out);

typedef struct run_training_result {
  const wl_job *job, *base; /* their steps (wl_job_step) are the steps of the result */
  run_failure failure;
  run_sdc *sdc; /* owned */
  uint32_t nsdc;
  rel_rc_result root_cause;
  run_power power;
  const run_ckpt
      *ckpt; /* checkpoints, data loading; NULL: neither (borrowed from the run_training) */
  run_step_stats steps; /* job's steps summarized (run_step_stats_of) */
} run_training_result;

/* The operator's view once the job ran: the failure and its cost (through
 * rel_failure_cost_of), SDC detection, each slow step's root cause against
 * the baseline and the network faults' windows (run_fault_windows of fs,
 * the scheduler that played tr's faults, finished; NULL: none), power; their
 * events into `log`, which ends sorted by time. Valid while tr lives. */
void run_training_report(run_training *tr, const flt_sched *fs, run_events *log,
                         run_training_result *out);
void run_training_result_free(run_training_result *r);

/* ---- the per-flow log (output.flows; flows.c) ---------------------------------------------- */

/* Every transfer the run's backend reported (tel_tap_flows: one repetition
 * of one transfer of a phase, as the fidelity timed it), at most
 * output.max_flows of them, the earliest by (start, phase, transfer), for
 * flows.csv and the database's flows table. Public fields. */
typedef struct run_flows {
  bool on;           /* output.flows */
  const tel_flow *v; /* sorted; the tap's (valid until the backend is destroyed) */
  size_t n;
  uint64_t left;           /* transfers past output.max_flows, not in v (then an event says so) */
  bool spread;             /* routing spreads a transfer's bytes over its equal-cost paths (spray,
                              or adaptive per packet; adaptive at the packet fidelity): a row's
                              path is its ECMP path (see docs/outputs.md), not every byte's */
  uint32_t *job_of_gpu;    /* owned: the jobs: list's job of each GPU (UINT32_MAX: none); NULL
                              without a jobs: list */
  const cfg_scenario *cfg; /* job names (cfg->jobs), class names (fabric.classes) */
} run_flows;

/* After the run (rank 0): the tap's rows into f, and when output.max_flows
 * left some out a "flows-truncated" event in `log` saying how many and
 * from when. Nothing when output.flows is off. */
struct run_setup;
void run_flows_collect(run_flows *f, const struct run_setup *s, run_events *log);
void run_flows_free(run_flows *f);

/* ---- what `fabsim run` reports ----------------------------------------------------------- */

/* What a run ran, decided once when it opens (run_result.kind): a jobs:
 * list, else workload.kind. Every encoder dispatches on it; a new kind of
 * workload adds a value here and its part of the result. */
typedef enum {
  RUN_KIND_COLLECTIVE,
  RUN_KIND_TRAFFIC,
  RUN_KIND_TRAINING,
  RUN_KIND_TRACE,
  RUN_KIND_INFERENCE, /* serving: w->inference */
  RUN_KIND_JOBS       /* a jobs: list (the top-level workload is then the default, unused) */
} run_kind;

/* Where a run's outputs come from, beside its scenario: the wall clock at
 * its start (UTC, ISO 8601) and, for a point of a sweep (src/study starts
 * each as `fabsim run` with FABSIM_SWEEP and FABSIM_SWEEP_POINT in its
 * environment), the sweep's id and the point's "key=value ..." (else NULL). */
typedef struct run_provenance {
  const char *started_at, *sweep, *point;
} run_provenance;

/* One run's results and counters, typed: all the edge (src/output:
 * out_run_summary, out_run_print, out_run_files, out_run_report) reads, so
 * an encoder takes the result alone. Public fields; the session fills
 * them as the run goes and frees what it owns (log, pm, training, tel,
 * flows, job_steps) at close. What the result borrows (cfg, t, ports, w,
 * jobs, the scenario's names) lives as long as the session. */
typedef struct run_result {
  /* the command line: summary.json's "scenario" (file NULL: defaults only) */
  const char *scenario;
  const char *const *sets;
  int nsets;
  const cfg_scenario *cfg;   /* the scenario as run (every key resolved) */
  const topo *t;             /* its topology */
  const tel_portmap *ports;  /* the telemetry's switch ports (their names), or NULL */
  run_provenance provenance; /* when it started, the sweep point it is */
  run_kind kind;             /* what it ran: the part of the result that holds it */
  const run_workload
      *w; /* the setup's: plan, result, outcome (collective, traffic, traces; training: outcome) */
  be_stats net;
  uint64_t events;
  double sim_time_s, wall_s;
  run_events log;  /* the summary's "events", events.csv, the database's events */
  run_power power; /* collective and traffic runs (training: the job's, in training) */
  pwr_model pm;    /* power's model */
  bool have_power;
  be_parallel_info par;         /* the parallel engine's partition and effort; ranks 0: not on it */
  const run_jobs *jobs;         /* the setup's jobs: list (n 0: none) */
  run_training_result training; /* workload.kind training: run_training_report's */
  bool complete;                /* ran to its end (false: stopped early, Ctrl-C) */
  tel *tel;                     /* run_telemetry_make's, or NULL */
  run_flows flows;              /* output.flows (flows.on false: none) */
  run_step_stats *job_steps;    /* jobs->n of them (owned): each training job's steps summarized
                                   (steps 0: not a training job, or no step done); NULL: no jobs */
} run_result;

/* ---- fabsim memory: a training setup's memory per GPU (memory.c) ------------------------ */

typedef struct run_memory {
  wl_model model;
  wl_parallel parallel;
  wl_memory mem; /* on the stage that needs most */
  bool found;    /* it does not fit, and best does: */
  wl_parallel best;
  wl_memory best_mem;
} run_memory;

/* The scenario's model (workload.model.*) under its parallelism
 * (workload.parallel.*) on t's GPUs: memory per GPU, checked
 * (wl_memory_check), and when it does not fit the smallest tp x pp (then
 * ZeRO stage and recomputation) that does (wl_memory_search). Errors are
 * the scenario's, located at the key (SIM_ECONFIG). Closed forms only. */
int run_memory_of(run_memory *r, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                  sim_error *err);

/* ---- one run's setup ----------------------------------------------------------------- */

/* The scenario and its topology, every key checked (cfg_load, topo_build):
 * what every verb that reads a scenario starts from. `scenario` NULL:
 * defaults and sets only. On error *doc and *t are NULL and nothing is left
 * to free; errors are located at the key (SIM_ECONFIG) or name the file. */
int run_scenario_load(cfg_scenario *cfg, cfg_doc **doc, topo **t, const char *scenario,
                      const char *const *sets, int nsets, sim_error *err);

/* The telemetry around a run: the topology's switch ports, the ports and
 * NICs output.ports watches (checked against the topology), the tap around
 * the backend that logs every phase of any workload, and the backend that
 * samples its own ports when it can (packet: real queues and pauses). */
typedef struct run_telemetry {
  tel_portmap ports;
  uint32_t *watch_ports, *watch_nics; /* owned */
  uint32_t nwatch_ports, nwatch_nics;
  tel_tap *tap;             /* owned by the backend it wraps */
  be_backend *port_samples; /* the tapped backend when it samples its own ports; NULL */
} run_telemetry;

/* Everything a run is made of before anything is simulated, assembled in
 * one place for `fabsim run` and the tests alike: the scenario and topology
 * (run_setup_load), then (run_setup_begin) the simulation, the fidelity's
 * backend (be_create) behind the telemetry tap, the faults resolved against
 * the topology once and scheduled before the workload submits anything, the
 * workload built and, for a training run, its job, whose hooks take the GPU
 * faults. Every check of the input runs here, so bad input is refused before
 * the first event. */
typedef struct run_setup {
  /* public, from run_setup_load */
  cfg_scenario cfg;
  cfg_doc *doc; /* NULL: nothing loaded */
  topo *t;
  bool training; /* workload.kind training */
  /* public, from run_setup_begin */
  sim_ctx *sim;
  be_backend *be;    /* the run's backend, behind the telemetry tap */
  be_backend *inner; /* the fidelity's own, before the tap wrapped it */
  run_telemetry tel;
  flt_fault *faults; /* flt_resolve's; owned */
  uint32_t nfaults;
  flt_sched *fs;   /* NULL without faults */
  run_workload w;  /* with jobs: the failure listener alone */
  run_training tr; /* training only */
  run_jobs jobs;   /* the scenario's jobs: (none: n 0) */
} run_setup;

/* run_scenario_load into s (zeroed first). Free with run_setup_free either
 * way. */
int run_setup_load(run_setup *s, const char *scenario, const char *const *sets, int nsets,
                   sim_error *err);
/* The rest of the setup, in the order above. Returns SIM_ECONFIG for every
 * error the scenario's input caused: keys located in err (a backend, fault,
 * output.ports, workload, jobs or power key, a training horizon), and any
 * error of the backend, the faults or the workload (e.g. a trace file that
 * cannot be read: err keeps its own code); other errors of the training
 * job's setup come back as they are. Nothing has been simulated either way. */
int run_setup_begin(run_setup *s, sim_error *err);
/* Every check `fabsim run` makes of its input before the first event, and
 * nothing else: run_setup_load and run_setup_begin (one code path, so the
 * two cannot drift) and run_setup_free, nothing simulated, no MPI call (the
 * packet fidelity's parallel engine is checked as the serial packet
 * backend, setup.c says why). What sweep and compare ask of each point
 * before any runs. Returns run_setup_load's code or run_setup_begin's, the
 * error located in err as they locate it. Cost: the run's setup (topology,
 * backend, plans or the training job's graph), no simulated event. */
int run_check(const char *scenario, const char *const *sets, int nsets, sim_error *err);
/* Everything run_setup_load and run_setup_begin made, in the order the
 * callbacks require (the scheduler, the backend, then the workload and job
 * its callbacks point into); any part may be missing. */
void run_setup_free(run_setup *s);

/* ---- the session: one `fabsim run` below the verb (session.c) ---------------------------- */

/* What the session asks of its caller (the verb, or a test). */
typedef struct run_session_hooks {
  void *ctx;
  /* one line for the user's stderr (no newline): a warning, located where
   * the scenario has the key */
  void (*warn)(void *ctx, const char *line);
  /* output.database before output.dir is taken: SIM_OK, or its error with
   * *db the path it names (freed by the session; NULL: none) */
  int (*check_database)(void *ctx, const cfg_scenario *cfg, const char **db, sim_error *err);
  /* the scenario is loaded: from here on the run honours Ctrl-C (NULL: none) */
  void (*loaded)(void *ctx);
  const run_progress_fn *progress; /* the progress line (NULL: none) */
} run_session_hooks;

typedef struct run_session run_session;
/* The handle, and under mpirun the MPI job (pdes_comm_init; the ranks but
 * 0 send stdout and stderr to /dev/null). Errors come back as SIM_ECONFIG
 * (bad input: the verb's exit 2) or SIM_EIO (the run failed), err's message
 * for the user (empty: nothing to say); *out is set either way, for
 * run_session_close. */
int run_session_new(run_session **out, sim_error *err);
/* Every check before anything is simulated: the scenario (run_setup_load),
 * the MPI rank policy (more than one rank runs only the packet fidelity's
 * parallel engine), output.dir taken on rank 0 (sim_dir_lock, and
 * output.database through the hook), the wall clock at the start, then
 * run_setup_begin and the setup's warnings. sets must live until close. */
int run_session_open(run_session *h, const char *scenario, const char *const *sets, int nsets,
                     const run_session_hooks *hooks, sim_error *err);
/* The simulation and what it measured; on rank 0 also power, the training
 * report, the faults after the end (warnings), the capped log and the
 * telemetry: the result the edge reports (out_run_report). */
int run_session_execute(run_session *h, sim_error *err);
/* Rank 0 (or no MPI): the one that reports. */
bool run_session_reports(const run_session *h);
const run_setup *run_session_setup(const run_session *h);
const run_result *run_session_result(const run_session *h);
/* The result's provenance (run_result.provenance). */
const run_provenance *run_session_provenance(const run_session *h);
/* After the report: how the run ended, and for a stopped one the line
 * (no newline) that says what the files cover. */
typedef enum {
  RUN_SESSION_DONE,
  RUN_SESSION_JOB_FAILED, /* the simulated job failed (out_run_failed_print) */
  RUN_SESSION_STOPPED     /* Ctrl-C: msg says where */
} run_session_end;
run_session_end run_session_outcome(const run_session *h, char *msg, size_t n);
/* Everything the run made; output.dir released (after bad input a folder
 * the run made is removed again); the MPI job finalized. NULL: nothing. */
void run_session_close(run_session *h, bool bad_input);

/* After the run (complete or stopped early), what it measured as a tel
 * (finished, for out_write_run): output.sample_interval, or about 500
 * samples over the run's real length; the tap's phases (at the packet
 * fidelity the switch ports from the backend's own samples); a collective's
 * or traffic's start and end, a training job's GPU timeline; every event of
 * `log`, and "stopped" when not *complete; a row offered more than its line
 * rate at the analytic fidelity adds its warning to `log`. The replay is not cut: an
 * interrupt (Ctrl-C) noted by its end makes *complete false (the run is
 * marked stopped; its figures are whole). *out: the caller's (tel_destroy,
 * also on error). */
int run_telemetry_make(tel **out, const run_setup *s, run_events *log, bool *complete,
                       sim_error *err);

#ifdef __cplusplus
}
#endif
#endif
