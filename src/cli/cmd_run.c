/* fabsim run: simulate a scenario's workload and report what it measured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fabsim/backend.h"
#include "fabsim/fault.h"
#include "fabsim/pdes.h"
#include "fabsim/out.h"

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

/* A warning on stderr at the scenario's line of `key` (or without one when
 * the key came from a default or --set). */
static void warn_at(const cfg_doc *doc, const char *key, const char *detail) {
  cfg_loc l = cfg_where(doc, key);
  if (l.line) fprintf(stderr, "%s:%u:%u: warning: %s: %s\n", l.file, l.line, l.col, key, detail);
  else fprintf(stderr, "fabsim: warning: %s\n", detail);
}

/* Every fault at or after the workload's end (`end`) had no effect (but
 * the one that stopped it, when it failed): a "fault-after-end" event each,
 * and a warning located at its faults[i].at. */
static void warn_faults_after_end(const cfg_scenario *cfg, const cfg_doc *doc, simtime_ps end,
                                  bool failed, run_events *log) {
  uint32_t *idx = sim_malloc((cfg->faults.n ? cfg->faults.n : 1) * sizeof *idx);
  const char **detail = sim_malloc((cfg->faults.n ? cfg->faults.n : 1) * sizeof *detail);
  size_t n = run_faults_after_end(cfg, end, failed, log, idx, detail);
  for (size_t i = 0; i < n; i++) {
    char key[48];
    snprintf(key, sizeof key, "faults[%u].at", idx[i]);
    warn_at(doc, key, detail[i]);
  }
  sim_free(idx);
  sim_free(detail);
}

/* Ranks of the MPI job this process was started in by a launcher (1: none). */
static long mpi_ranks(void) {
  sim_launcher l = sim_launcher_get();
  return l.launched ? l.size : 1;
}

/* One run's state, from the loaded scenario to the files. */
typedef struct run_verb {
  cli_args a;
  run_setup s; /* the scenario, topology, backend, faults, workload and job */
  run_result r;
  char started_at[32]; /* wall clock at the start, UTC */
  bool rank0;
  const char *stopped_after; /* the phase after the simulation a Ctrl-C stopped, or NULL */
  cli_lock lock;
  double t0; /* wall clock at the start */
} run_verb;

/* Prints err; returns its exit code: bad input for a config error (for any
 * error when `any_is_bad`), else CLI_FAILED. */
static int fail(const sim_error *err, bool any_is_bad) {
  cli_error(err->msg);
  return any_is_bad || err->code == SIM_ECONFIG ? CLI_BAD_INPUT : CLI_FAILED;
}

/* Before anything is simulated: output.dir, then the run's setup (the
 * run layer's: backend, telemetry tap, faults, workload, job). */
static int setup(run_verb *v) {
  sim_error err = {0};
  int rc;
  if (v->rank0 && (rc = cli_output_lock(&v->s.cfg, v->s.doc, &v->lock)) != CLI_OK)
    return rc; /* one run per output.dir */
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(v->started_at, sizeof v->started_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
  sim_test_pause("setup"); /* tests: output.dir taken, the topology not yet built */
  if ((rc = run_setup_begin(&v->s, &err)) != SIM_OK) {
    cli_error(err.msg);
    return rc == SIM_ECONFIG ? CLI_BAD_INPUT : CLI_FAILED;
  }
  const char *w = run_reordering_warning(&v->s.cfg, &v->r.log);
  if (w) warn_at(v->s.doc, "cluster.nic.recovery", w);
  w = run_idle_nic_warning(&v->s.cfg, &v->s.w.plan, v->s.t, &v->r.log);
  if (w) warn_at(v->s.doc, "workload.collective.channels", w);
  return CLI_OK;
}

/* A phase after the simulation stopped by Ctrl-C (rc SIM_EINTR): the run
 * is marked stopped, with an event saying what is missing. */
static void stopped_in(run_verb *v, const char *what) {
  v->r.complete = false;
  v->stopped_after = what;
  char detail[300];
  snprintf(detail, sizeof detail, "stopped (Ctrl-C) while %s", what);
  run_event_add(&v->r.log, sim_now(v->s.sim), "job", "stopped", detail);
}

/* The simulation, then what it measured. */
static int simulate(run_verb *v) {
  sim_error err = {0};
  run_setup *s = &v->s;
  run_result *r = &v->r;
  bool show = !v->a.quiet && isatty(STDERR_FILENO); /* ranks > 0: /dev/null */
  if (s->training) {
    /* the job drives the simulation itself (and stops it at its end or
     * failure, leaving later events pending), with its own progress line */
    run_progress_fn progress = {.draw = out_progress_draw};
    if (run_training_run(&s->tr, &r->log, show ? &progress : NULL, &v->r.complete, &err) != SIM_OK)
      return fail(&err, false);
    if (s->tr.warning) fprintf(stderr, "fabsim: warning: %s\n", s->tr.warning);
  } else if (s->jobs.n) { /* every job on the one backend from its start time */
    int rc = run_jobs_start(&s->jobs, s->sim, s->be, s->doc, &err);
    out_progress prog = {.show = show, .started = v->t0};
    if (rc == SIM_EINTR) { /* Ctrl-C while jobs were timed alone: none started */
      stopped_in(v, "the jobs' collectives were timed before the run: no job ran");
      v->stopped_after = NULL; /* the simulation itself was stopped, at its start */
    } else if (rc != SIM_OK) {
      return fail(&err, false);
    } else if (run_jobs_training(&s->jobs)) { /* the training jobs drive it, in slices */
      if (run_jobs_run(&s->jobs, s->sim, s->doc, &v->r.complete, &err) != SIM_OK)
        return fail(&err, false);
    } else {
      v->r.complete = out_progress_run(s->sim, &prog) == SIM_OK;
    }
  } else {
    run_workload_start(&s->w, s->be);
    out_progress prog = {
        .show = show, .expected = run_plan_estimate(&s->w.plan, s->t, &s->cfg), .started = v->t0};
    v->r.complete = out_progress_run(s->sim, &prog) == SIM_OK; /* Ctrl-C: stop, finish outputs */
  }
  sim_ctx *sim = s->sim;
  if (sim_past_horizon(sim, NULL)) { /* no figure: the run could not reach its end */
    sim_horizon_fail(sim, &err);
    return fail(&err, false);
  }
  s->be->ops->stats(s->be, &r->net); /* the parallel engine: collectives, then */
  be_port_samples_gather(s->tel.port_samples, sim_now(sim)); /* only rank 0 writes */
  be_parallel_info_get(s->inner, &r->par);
  r->events = sim_events(sim);
  r->sim_time_s = sim_ps_to_s(sim_now(sim));
  r->wall_s = sim_wall_s() - v->t0;
  if (s->fs) { /* the faults, reroutes and failed transfers into the summary's events */
    flt_sched_finish(s->fs);
    run_fault_log(s->fs, s->faults, s->nfaults, s->training, &r->log);
  }
  run_workload_end(&s->w, sim, &r->net, v->r.complete, s->training ? s->tr.job : NULL, &r->log);
  if (s->jobs.n) { /* the run's length is the last job's end; then each job alone */
    s->w.res.time_s = sim_ps_to_s(run_jobs_end(&s->jobs, sim));
    int rc = v->r.complete && !s->w.failed ? run_jobs_alone(&s->jobs, s->doc, s->t, &err) : SIM_OK;
    if (rc == SIM_EINTR)
      stopped_in(v, "each job ran alone: the jobs not yet run alone have no slowdown");
    else if (rc != SIM_OK) return fail(&err, false);
    run_jobs_events(&s->jobs, &r->log);
    run_jobs_outcome(&s->jobs, &s->w, &r->log);
  }
  return CLI_OK;
}

/* Rank 0: the run's report, its files, the terminal, the exit code. */
static int report(run_verb *v) {
  sim_error err = {0};
  run_setup *s = &v->s;
  run_result *r = &v->r;
  const cfg_scenario *cfg = &s->cfg;
  int rc = CLI_OK;
  if (!s->training) {
    r->have_power = true; /* its model is freed at teardown, also after an error */
    if (run_power_of(&r->power, &r->pm, cfg, s->doc, s->t, s->w.res.time_s, &err) != SIM_OK)
      return fail(&err, true);
  } else {
    run_training_report(&s->tr, s->fs, &r->log, &r->training);
  }
  if (v->r.complete)
    warn_faults_after_end(cfg, s->doc, s->training ? sim_now(s->sim) : s->w.exec.end, s->w.failed,
                          &r->log);
  run_events_cap(&r->log, cfg->output.max_events); /* every output reads the capped log */
  sim_test_pause("telemetry"); /* tests: the simulation is over, the replay not begun */
  bool was_complete = v->r.complete;
  if (run_telemetry_make(&r->tel, s, &r->log, &v->r.complete, &err) != SIM_OK) {
    cli_error(err.msg);
    return CLI_FAILED;
  }
  if (was_complete && !v->r.complete) v->stopped_after = "the telemetry was replayed";
  /* from here on the files are written whole: a Ctrl-C now is honoured
   * after them (exit 130), and they say what the run reached */
  out_print how = v->a.json ? OUT_PRINT_JSON : v->a.quiet ? OUT_PRINT_NONE : OUT_PRINT_TEXT;
  if (out_run_report(s, r, v->started_at, how, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_FAILED;
  }
  if (s->w.failed && rc == CLI_OK) {
    out_run_failed_print(cfg, r);
    rc = CLI_JOB_FAILED;
  } else if (!v->r.complete && rc == CLI_OK) {
    if (v->stopped_after)
      fprintf(stderr,
              "fabsim: stopped (Ctrl-C) after the simulation, while %s; the files in %s are "
              "whole and marked \"complete\": false\n",
              v->stopped_after, cfg->output.dir);
    else
      fprintf(stderr,
              "fabsim: stopped at %.6g s of simulated time; the files in %s are whole and "
              "marked \"complete\": false\n",
              r->sim_time_s, cfg->output.dir);
    rc = CLI_INTERRUPTED;
  } else if (sim_interrupt_pending() && rc == CLI_OK) {
    fprintf(stderr,
            "fabsim: stopped (Ctrl-C) while the files were written; they are whole, in %s, and "
            "cover the whole run\n",
            cfg->output.dir);
    rc = CLI_INTERRUPTED;
  }
  return rc;
}

/* Everything the run made. */
static void teardown(run_verb *v, int rc) {
  run_events_free(&v->r.log);
  if (v->r.have_power) pwr_free(&v->r.pm);
  run_training_result_free(&v->r.training);
  tel_destroy(v->r.tel);
  cli_output_unlock(&v->lock, rc); /* before run_setup_free: it names output.dir */
  run_setup_free(&v->s);
}

int cli_cmd_run(int argc, char **argv) {
  run_verb verb, *v = &verb;
  memset(v, 0, sizeof *v);
  v->r.complete = true;
  v->lock = (cli_lock)CLI_LOCK_NONE;
  sim_error err = {0};
  /* Under mpirun every rank runs this function; rank 0 alone speaks and
   * writes. One simulation over the ranks is the packet fidelity on the
   * parallel engine; anything else would be N copies of one run. */
  bool mpi = pdes_comm_launched() && pdes_comm_built();
  int rc = CLI_OK;
  if (mpi) {
    if (pdes_comm_init(&err) != SIM_OK) {
      cli_error(err.msg);
      rc = CLI_FAILED;
      goto out;
    }
    if (pdes_comm_rank() != 0) { /* quiet: rank 0 says everything */
      if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) {
        rc = CLI_FAILED;
        goto out;
      }
    }
  }
  if ((rc = cli_parse(&v->a, argc, argv, "jq", run_help)) != CLI_OK) goto out;
  v->t0 = sim_wall_s();
  if (run_setup_load(&v->s, v->a.scenario, v->a.sets, v->a.nsets, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_BAD_INPUT;
    goto out;
  }
  v->r.w = &v->s.w;
  v->r.jobs = &v->s.jobs;
  v->r.scenario = v->a.scenario;
  v->r.sets = v->a.sets;
  v->r.nsets = v->a.nsets;
  v->rank0 = !mpi || pdes_comm_rank() == 0;
  if (mpi_ranks() > 1 && !be_packet_parallel(&v->s.cfg)) {
    cli_error(
        "run under mpirun with more than one rank runs the packet fidelity on the parallel "
        "engine (simulation.fidelity=packet, simulation.engine=auto or parallel); this "
        "scenario would run as N copies writing one folder. Start one process, or use "
        "mpirun with fabsim sweep to spread the points of a sweep over the ranks");
    rc = CLI_BAD_INPUT;
  }
  /* one Ctrl-C handler for every phase, from the setup to the last file */
  out_interrupt ih;
  out_interrupt_begin(&ih);
  if (rc == CLI_OK) rc = setup(v);
  if (rc == CLI_OK) rc = simulate(v);
  if (rc == CLI_OK && v->rank0) rc = report(v);
  teardown(v, rc);
  out_interrupt_end(&ih);
out:
  cli_args_free(&v->a);
  if (mpi) pdes_comm_finalize();
  return rc < 0 ? CLI_OK : rc;
}
