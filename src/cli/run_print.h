/* fabsim run at the edge: summary.json (run_json.c) and the terminal
 * summary (run_text.c), each the one writer of its kind, both from the run
 * layer's typed results and the run's counters. */
#ifndef FABSIM_CLI_RUN_PRINT_H
#define FABSIM_CLI_RUN_PRINT_H

#include "cli/cli.h"
#include "fabsim/run.h"

/* What the verb prints and writes: the run layer's results and the run's
 * counters. */
typedef struct cli_run_result {
  const run_workload
      *w; /* the setup's: plan, result, outcome (collective, traffic, traces; training: outcome) */
  be_stats net;
  uint64_t events;
  double sim_time_s, wall_s;
  run_events log;  /* the summary's "events", events.csv, the database's events */
  run_power power; /* collective and traffic runs (training: the job's, in its result) */
  pwr_model pm;    /* power's model */
  bool have_power;
  be_parallel_info par; /* the parallel engine's partition and effort; ranks 0: not on it */
  const run_jobs *jobs; /* the setup's jobs: list (n 0: none) */
} cli_run_result;

/* summary.json: every figure of the run, in its fixed key order (a training
 * run's step, steps, failure, sdc, root_cause, power: cli_training_json). */
json_t *cli_run_summary_json(const cli_args *a, const cfg_scenario *cfg, const topo *t,
                             const cli_run_result *r);
/* The terminal summary; `written`: the output folder, or NULL. */
void cli_run_print(const cfg_scenario *cfg, const topo *t, const cli_run_result *r,
                   const run_training_result *tres, const char *written);

/* How the fidelity f treats traffic classes, one sentence (summary.json
 * traffic_classes.model and the terminal; the analytic fidelity's says it
 * does not model them). */
const char *cli_classes_model(cfg_fidelity f);
/* events[]: {at_s, component, kind, detail} in the log's order. */
json_t *cli_events_json(const run_events *log);
/* power: pwr_summary_json plus utilization_source (and, for a job,
 * throttle_utilization). */
json_t *cli_power_json(const run_power *p);
json_t *cli_root_cause_json(const rel_rc_result *rc);
/* step, steps, failure, sdc, root_cause and power into the summary. */
void cli_training_json(const run_training_result *r, const cfg_scenario *cfg, json_t *summary);

/* The summary's extra lines of a training run (after cli_step_text). */
void cli_training_text(const run_training_result *r);
void cli_power_text(const run_power *p);
void cli_events_text(const run_events *log);
/* A training run's progress line on stderr (run_progress_fn.draw). */
void cli_progress_draw(void *ctx, const run_progress *p);

#endif
