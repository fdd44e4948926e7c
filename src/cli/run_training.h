/* fabsim run, workload.kind training: the job of workload.steps steps, GPU
 * faults and rack throttling, the fault-free baseline (run_training.c); root
 * cause, failure cost, SDC, power and their text (run_training_report.c). */
#ifndef FABSIM_CLI_RUN_TRAINING_H
#define FABSIM_CLI_RUN_TRAINING_H

#include "cli/cli.h"
#include "fabsim/fault.h"
#include "fabsim/power.h"
#include "fabsim/workload.h"

/* A step's fabric counters (packet fidelity), for the root cause. */
typedef struct cli_step_fabric {
  bool observed;
  double pfc_paused_s;
  uint64_t ecn_marks;
} cli_step_fabric;

typedef struct cli_training {
  /* public */
  wl_job *job;
  flt_gpu_hooks hooks; /* GPU faults: the scenario's are played through these
                          (run_training.c); the same fault delivered twice counts once */
  /* private */
  const cfg_scenario *cfg;
  const cfg_doc *doc;
  const topo *t;
  sim_ctx *sim; /* the run's */
  pwr_model pwr;
  bool have_pwr;
  double *throttle;   /* per GPU, from the racks' cooling at the fault-free utilization */
  double utilization; /* that fault-free utilization; 0 when no baseline ran */
  uint32_t throttled_gpus;
  wl_job *base; /* the same steps without faults or throttling */
  sim_ctx *base_sim;
  be_backend *base_be;
  struct cli_gpu_fault *play; /* GPU faults of the scenario, as scheduled */
  uint32_t nplay;
  be_backend *be;                 /* the run's */
  be_stats last;                  /* its counters at the end of the previous step */
  json_t *events;                 /* while running */
  struct cli_step_fabric *fab[2]; /* per step, [0] the run, [1] the baseline */
  size_t nfab[2], fabcap[2];
  be_stats base_last;
} cli_training;

/* Job and power model. Errors are printed; returns a CLI exit code. */
int cli_training_begin(cli_training *tr, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                       be_backend *be);
/* When anything may disturb the job (faults, a rack that could exceed its
 * limit): the fault-free baseline first, then the racks throttled at its
 * utilization (thermal events into `events`); then the job, with a progress
 * line on stderr when `show`; Ctrl-C stops it cleanly (*complete false: the
 * steps done so far are reported). */
int cli_training_run(cli_training *tr, json_t *events, bool show, bool *complete);
/* Add step, steps, failure, sdc, root_cause and power to the summary and
 * the job's events to `events` (network fault events, already there, are
 * read for the root cause). */
void cli_training_summary(cli_training *tr, json_t *summary, json_t *events);
/* The summary's extra lines (after cli_training_print). */
void cli_training_text(const json_t *summary);
/* Free after be_destroy of the run's backend (its callbacks point into the job). */
void cli_training_free(cli_training *tr);

/* Internal to run_training*.c: the rack of a GPU (power.rack.servers per
 * rack); a job's utilization, the compute share of its steps done. */
uint32_t cli__gpu_rack(const cli_training *tr, uint32_t gpu);
double cli__job_utilization(const wl_job *j);

/* The power object for a run that is not a training job: power.utilization
 * over the run's time as one "step". NULL (and a message) on bad input. */
json_t *cli_power_json(const cfg_scenario *cfg, const cfg_doc *doc, const topo *t, double step_s);

/* One event of the summary's `events` array (at_s, component, kind, detail). */
void cli_event_add(json_t *events, double at_s, const char *component, const char *kind,
                   const char *detail);

#endif
