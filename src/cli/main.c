/* fabsim: a simulator of AI-training cluster fabrics. Verb dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char main_help[] =
    "usage: fabsim VERB [SCENARIO.yaml] [--set KEY=VALUE]... [options]\n"
    "\n"
    "fabsim simulates the backend fabric of AI training clusters: GPUs on NVLink\n"
    "inside servers, one NIC per GPU, and the scale-out fabric (fat-tree,\n"
    "multi-plane, rail-optimized) with the collectives that load it.\n"
    "\n"
    "verbs:\n"
    "  run       simulate the scenario's workload and print a summary\n"
    "  topo      build the cluster and fabric; inventory, cost, bisection, DOT\n"
    "  memory    per-GPU training memory; the smallest parallelism that fits\n"
    "  reliability  failures, checkpoint intervals, ETTR, spares, power over a run\n"
    "  sweep     run the cross product of --vary values in parallel; one table\n"
    "  compare   put scenarios (or runs from a database) side by side\n"
    "  calibrate fit link efficiencies and protocol latencies to nccl-tests output\n"
    "  version   print the version\n"
    "  help      this text; 'fabsim VERB --help' for a verb's options\n"
    "\n"
    "scenarios:\n"
    "  A scenario is a YAML file; every key has a default, so it may be empty or\n"
    "  absent. --set KEY=VALUE overrides any key, after the file (repeatable).\n"
    "  Quantities take units: 400Gbps, 50GB/s, 500ns, 32MiB. Every key, its\n"
    "  default and its units: docs/scenario.md. A bad value is reported as\n"
    "  FILE:LINE:COL: KEY: what is wrong; what is allowed.\n"
    "\n"
    "what a run leaves in output.dir (default fabsim-out):\n"
    "  summary.json     every figure, as one JSON object (\"complete\": false if stopped)\n"
    "  scenario.yaml    the fully resolved scenario; re-running it gives the same result\n"
    "  timeseries.csv   sampled telemetry (output.sample_interval): GPUs, NICs, ports\n"
    "  events.csv       the event log: time, component, kind, effect\n"
    "  report.html      one self-contained page with charts; opens offline\n"
    "  results.sqlite   runs, metrics, timeseries, events (output.database)\n"
    "  Same scenario and seed, same files, byte for byte (wall-clock fields aside).\n"
    "\n"
    "exit status: 0 done, 1 failed (e.g. cannot write), 2 bad input (nothing was\n"
    "simulated), 3 out of memory, 4 the simulated job failed (a transfer lost, a GPU\n"
    "or node down: the files are written and say \"outcome\": \"failed\"), 130\n"
    "stopped by Ctrl-C (the files are finished and marked incomplete).\n"
    "\n"
    "examples:\n"
    "  fabsim run examples/default.yaml\n"
    "  fabsim topo --set fabric.topology=multi-plane --set fabric.switch_radix=64\n"
    "  fabsim memory --set workload.model.params=70e9 --set workload.parallel.tp=8\n"
    "  fabsim run --set cluster.nodes=4 --set workload.collective.size=64MiB --json\n"
    "  fabsim sweep examples/default.yaml --vary fabric.routing=ecmp,adaptive --jobs 2\n"
    "  fabsim compare examples/default.yaml examples/rail-roce.yaml\n"
    "  fabsim calibrate examples/nccl-tests/*.txt -o calibration.yaml\n"
    "\n"
    "see also: man fabsim, docs/tour.md (questions and their answers), docs/scenario.md\n";

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
      !strcmp(argv[1], "-h")) {
    fputs(main_help, argc < 2 ? stderr : stdout);
    return argc < 2 ? CLI_BAD_INPUT : CLI_OK;
  }
  const char *verb = argv[1];
  if (!strcmp(verb, "version") || !strcmp(verb, "--version")) {
    printf("fabsim %s\n", FABSIM_VERSION);
    return CLI_OK;
  }
  if (!strcmp(verb, "run")) return cli_cmd_run(argc - 2, argv + 2);
  if (!strcmp(verb, "topo")) return cli_cmd_topo(argc - 2, argv + 2);
  if (!strcmp(verb, "memory")) return cli_cmd_memory(argc - 2, argv + 2);
  if (!strcmp(verb, "reliability")) return cli_cmd_reliability(argc - 2, argv + 2);
  if (!strcmp(verb, "sweep")) return cli_cmd_sweep(argc - 2, argv + 2);
  if (!strcmp(verb, "compare")) return cli_cmd_compare(argc - 2, argv + 2);
  if (!strcmp(verb, "calibrate")) return cli_cmd_calibrate(argc - 2, argv + 2);
  fprintf(stderr,
          "fabsim: unknown verb '%s'; verbs: run, topo, memory, reliability, sweep, compare, "
          "calibrate, version, help\n",
          verb);
  return CLI_BAD_INPUT;
}
