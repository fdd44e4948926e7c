/* fabsim run: telemetry around the run and the files after it (run_output.c). */
#ifndef FABSIM_CLI_RUN_OUTPUT_H
#define FABSIM_CLI_RUN_OUTPUT_H

#include "cli/cli.h"
#include "fabsim/coll.h"
#include "fabsim/out.h"
#include "fabsim/run.h"
#include "fabsim/tel_tap.h"
#include "fabsim/workload.h"

typedef struct cli_run_output {
  const topo *topo;
  tel *tel;
  tel_tap *tap;
  be_backend *port_samples; /* *be (tapped) when it samples its own ports (packet) */
  tel_portmap ports;
  uint32_t *watch_ports, *watch_nics;
  uint32_t nwatch_ports, nwatch_nics;
  char started_at[32]; /* wall clock, UTC */
  const wl_job *job;   /* a training run's job: its GPU timeline feeds the GPU series */
} cli_run_output;

/* Before the workload starts: check output.ports (SIM_ECONFIG located at
 * the key) and wrap *be with the telemetry tap. */
int cli_run_output_begin(cli_run_output *o, be_backend **be, const cfg_scenario *cfg,
                         const cfg_doc *doc, const topo *t, sim_error *err);
/* After the run (complete or stopped; exec NULL when no plan ran, as for a
 * training step): make the telemetry, replay the tap into it and write
 * every output file but summary.json and scenario.yaml (out_write_run);
 * `log`: the run's event log (into events.csv and the database);
 * `failed`: the simulated job failed (out_run.failed). */
int cli_run_output_end(cli_run_output *o, sim_ctx *sim, const coll_exec *exec, json_t *summary,
                       const run_events *log, const cfg_scenario *cfg, const char *scenario_yaml,
                       bool complete, bool failed, sim_error *err);
void cli_run_output_free(cli_run_output *o);

#endif
