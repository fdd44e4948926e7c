/* fabsim run: summary.json pieces and terminal lines from the run layer's
 * typed results (run_print.c). The one JSON writer and the one terminal
 * writer of a run's training, power and events. */
#ifndef FABSIM_CLI_RUN_PRINT_H
#define FABSIM_CLI_RUN_PRINT_H

#include "cli/cli.h"
#include "fabsim/run.h"

/* events[]: {at_s, component, kind, detail} in the log's order. */
json_t *cli_events_json(const run_events *log);
/* power: pwr_summary_json plus utilization_source (and, for a job,
 * throttle_utilization). */
json_t *cli_power_json(const run_power *p);
json_t *cli_root_cause_json(const rel_rc_result *rc);
/* step, steps, failure, sdc, root_cause and power into the summary. */
void cli_training_json(const run_training_result *r, const cfg_scenario *cfg, json_t *summary);

/* The summary's extra lines of a training run (after cli_training_print). */
void cli_training_text(const run_training_result *r);
void cli_power_text(const run_power *p);
void cli_events_text(const run_events *log);

#endif
