/* fabsim run: the files after the run (run_output.c). */
#ifndef FABSIM_CLI_RUN_OUTPUT_H
#define FABSIM_CLI_RUN_OUTPUT_H

#include "cli/cli.h"
#include "fabsim/out.h"
#include "fabsim/run.h"

typedef struct cli_run_output {
  const run_setup *s;  /* the run's; borrowed */
  tel *tel;            /* run_telemetry_make's */
  char started_at[32]; /* wall clock, UTC */
} cli_run_output;

/* When the run starts: its setup and the wall clock. */
void cli_run_output_begin(cli_run_output *o, const run_setup *s);
/* After the run (complete or stopped): its telemetry (run_telemetry_make:
 * `log`, the run's event log, goes into events.csv and the database;
 * *complete false when an interrupt was noted by the end of its replay),
 * then every output file but summary.json and scenario.yaml (out_write_run;
 * `failed`: the simulated job failed, out_run.failed). */
int cli_run_output_telemetry(cli_run_output *o, const run_events *log, bool *complete,
                             sim_error *err);
int cli_run_output_write(cli_run_output *o, json_t *summary, const char *scenario_yaml,
                         bool complete, bool failed, sim_error *err);
void cli_run_output_free(cli_run_output *o);

#endif
