/* fabsim run: simulate a scenario's workload and report what it measured. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fabsim/out.h"
#include "fabsim/run.h"

static const char run_help[] =
    "usage: fabsim run [SCENARIO.yaml] [--set KEY=VALUE]... [--json] [--quiet]\n"
    "\n"
    "Simulate the scenario's workload (workload.kind: a collective, synthetic\n"
    "traffic, a training step or Chakra execution traces) on its cluster at the\n"
    "chosen fidelity\n"
    "(simulation.fidelity: analytic, flow or packet) and print a summary.\n"
    "\n"
    "  SCENARIO.yaml      scenario file (optional: every key has a default)\n"
    "  --set KEY=VALUE    override one key, after the file (repeatable)\n"
    "  --json             print the summary JSON instead of the table\n"
    "  --quiet, -q        print nothing (no progress line either); only write the files\n"
    "\n"
    "Files, in output.dir (default fabsim-out), each written whole or not at all:\n"
    "  summary.json     every figure; \"complete\": false when stopped early\n"
    "  scenario.yaml    the fully resolved scenario (re-run it: same result)\n"
    "  timeseries.csv   one row per output.sample_interval (default: about 500\n"
    "                   rows): GPU states, NIC throughput (total, p50, p99, max),\n"
    "                   switch ports (utilization, queues, ECN, PFC pause where the\n"
    "                   fidelity has them), and every port or NIC in output.ports\n"
    "  events.csv       time, component, kind, effect, value\n"
    "  report.html      one self-contained page of charts (output.report)\n"
    "  results.sqlite   tables runs, metrics, series, timeseries, events, hot_ports;\n"
    "                   output.database names another file to share it between runs\n"
    "  metrics.txt      the final figures as OpenMetrics text (output.openmetrics)\n"
    "\n"
    "Faults (the scenario's faults: list, power.rack.cooling_failure) act during\n"
    "the run; a training run (workload.steps steps) is also simulated without\n"
    "them, and summary.json gains events, steps, root_cause (each slow step's\n"
    "extra time by the component that caused it), failure, sdc and power.\n"
    "\n"
    "While it runs, a progress line on stderr (simulated time, percent of the\n"
    "expected length, events/s, ETA) when stderr is a terminal. Ctrl-C stops the\n"
    "run cleanly in any phase (setup, timing, simulation, jobs alone, telemetry):\n"
    "the files are finished, cover the simulated time reached and say \"complete\":\n"
    "false (while they are written: they are finished first); exit 130. A second\n"
    "Ctrl-C kills at once.\n"
    "\n"
    "Parallel: mpirun -np N fabsim run ... runs the packet fidelity over N MPI ranks\n"
    "(simulation.engine: auto, the default, or parallel); rank 0 alone prints and\n"
    "writes, the files equal those of --set simulation.engine=parallel on one\n"
    "process, and summary.json's sim.parallel says how the ranks shared the work.\n"
    "\n"
    "Exit status: 0 done, 1 the run failed (e.g. cannot write output), 2 bad input\n"
    "(or output.dir in use by another run), 3 out of memory, 4 the simulated job\n"
    "failed (a transfer lost, a GPU or node down: summary.json's \"outcome\" is\n"
    "\"failed\" and \"failure\" says why), 130 stopped by Ctrl-C.\n"
    "Example: fabsim run examples/default.yaml --set workload.collective.size=256MiB\n";

static void warn(void *ctx, const char *line) {
  (void)ctx;
  fprintf(stderr, "%s\n", line);
}

static int check_database(void *ctx, const cfg_scenario *cfg, const char **db, sim_error *err) {
  (void)ctx;
  char *path = out_database_path(cfg->output.dir, cfg->output.database);
  *db = path;
  return path ? out_db_check(path, true, err) : SIM_OK;
}

/* the verbs' one Ctrl-C handler holds for every phase, from the setup to
 * the last file (a co-engine votes on the note over its ranks) */
static void loaded(void *ctx) { sim_interrupts_arm(ctx); }

/* Prints err (if it says something); returns its exit code. */
static int fail(const sim_error *err) {
  if (err->msg[0]) cli_error(err->msg);
  return err->code == SIM_ECONFIG ? CLI_BAD_INPUT : CLI_FAILED;
}

/* Rank 0: the report, its files, the terminal, the exit code. */
static int report(const run_session *h, const cli_args *a) {
  sim_error err = {0};
  const run_result *r = run_session_result(h);
  /* the files are written whole: a Ctrl-C now is honoured after them
   * (exit 130), and they say what the run reached */
  out_print how = a->json ? OUT_PRINT_JSON : a->quiet ? OUT_PRINT_NONE : OUT_PRINT_TEXT;
  if (out_run_report(r, how, &err) != SIM_OK) {
    cli_error(err.msg);
    return CLI_FAILED;
  }
  char msg[4400];
  switch (run_session_outcome(h, msg, sizeof msg)) {
  case RUN_SESSION_JOB_FAILED: out_run_failed_print(r); return CLI_JOB_FAILED;
  case RUN_SESSION_STOPPED: fprintf(stderr, "%s\n", msg); return CLI_INTERRUPTED;
  default: return CLI_OK;
  }
}

int cli_cmd_run(int argc, char **argv) {
  sim_interrupts v = {0};
  run_progress_fn progress = {.draw = out_progress_draw};
  cli_args a = {0};
  run_session *h;
  sim_error err = {0};
  int rc = run_session_new(&h, &err) != SIM_OK ? fail(&err) : CLI_OK; /* MPI: ranks > 0 quiet */
  if (rc == CLI_OK) rc = cli_parse(&a, argc, argv, "jq", run_help);
  if (rc == CLI_OK) {
    bool show = !a.quiet && isatty(STDERR_FILENO); /* ranks > 0: /dev/null */
    run_session_hooks hooks = {.ctx = &v,
                               .warn = warn,
                               .check_database = check_database,
                               .loaded = loaded,
                               .progress = show ? &progress : NULL};
    if (run_session_open(h, a.scenario, a.sets, a.nsets, &hooks, &err) != SIM_OK ||
        run_session_execute(h, &err) != SIM_OK)
      rc = fail(&err);
    else if (run_session_reports(h)) rc = report(h, &a);
  }
  run_session_close(h, rc == CLI_BAD_INPUT);
  sim_interrupts_disarm(&v); /* the handlers before the run, and no note left behind */
  cli_args_free(&a);
  return rc < 0 ? CLI_OK : rc;
}
