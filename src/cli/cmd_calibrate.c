/* fabsim calibrate: fit the model to nccl-tests output of the user's own
 * cluster (src/calib) and write the fitted keys as a scenario fragment.
 * Arguments in, one library call, the result printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "fabsim/calib.h"
#include "fabsim/out.h"

static const char calibrate_help[] =
    "usage: fabsim calibrate FILE... [-o FILE] [--base SCENARIO.yaml] [--set KEY=VALUE]...\n"
    "                        [--keep-algorithms] [--json]\n"
    "\n"
    "Fit fabsim's collective model to nccl-tests output measured on your cluster\n"
    "(all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf,\n"
    "sendrecv_perf, broadcast_perf; any GPUs, nodes and sizes): the NVLink\n"
    "efficiency (from single-node files), the NIC efficiency (from multi-node\n"
    "files), one latency factor per protocol the rows run on (LL, LL128,\n"
    "Simple: it scales that protocol's workload.collective.latency.* keys) and\n"
    "per in-switch algorithm (NVLS, NVLSTree, CollNet), and one bandwidth factor\n"
    "per algorithm the rows run on (workload.collective.bandwidth.*). Which\n"
    "algorithms the cluster ran (NVLS or not, the tree or the ring alone) is\n"
    "decided from the rows unless a file's NCCL_ALGO echo or the base says it:\n"
    "each set is fitted and a richer one kept only when a likelihood-ratio test\n"
    "says the rows need it.\n"
    "Each row is simulated at the analytic fidelity on a cluster of the file's\n"
    "shape (nodes and GPUs per node from its rank lines; a file without them, or\n"
    "with fewer than busbw/algbw says, takes the base's cluster.nodes x\n"
    "cluster.gpus_per_node, which its rows must agree with); the fit minimizes a\n"
    "robust sum of log-time residuals over every row of every file.\n"
    "\n"
    "  FILE               nccl-tests or rccl-tests output (as printed, or a console\n"
    "                     copy without its '#'), or a busbw table '| size | busbw\n"
    "                     (GB/s) |' (sizes 1K, 65K, 1G: the nearest power of two);\n"
    "                     OP:FILE names the collective when neither the text nor\n"
    "                     the name does (allreduce:run7.log)\n"
    "  -o, --output FILE  where to write the fitted keys (default calibration.yaml)\n"
    "  --base SCENARIO    the cluster the files were measured on (fabric, NICs,\n"
    "                     GPU); default: fabsim's defaults with cluster.gpu from\n"
    "                     the files' device names (H100, H800, A100, B200,\n"
    "                     H200, MI300X)\n"
    "  --set KEY=VALUE    override a key of the base (repeatable)\n"
    "  --keep-algorithms  the base's algorithms as they are: no detection\n"
    "  --json             print the result as JSON instead of the tables\n"
    "\n"
    "Prints, per file, each size's measured and fitted time and busbw and the\n"
    "residual (fitted time / measured time - 1), the rms of ln(fitted / measured)\n"
    "under 64 KiB and from 64 KiB against the targets (0.10 and 0.05), then the\n"
    "parameters before and after. Rows of size 0 are read and left out (counted).\n"
    "The written file is a scenario fragment: `fabsim run FILE` runs it\n"
    "alone; over another scenario pass its keys as overrides (its header lists\n"
    "them as --set arguments): fabsim run BASE.yaml --set KEY=VALUE ...\n"
    "\n"
    "Exit status: 0 done, 1 the fragment could not be written, 2 bad input (a\n"
    "file that is not nccl-tests output, truncated, failed its own check, or\n"
    "whose columns disagree, named as FILE:LINE:COL; a bad base scenario or key;\n"
    "-o naming a folder, a device, a FIFO or an input file), before the fit.\n"
    "Example: fabsim calibrate examples/nccl-tests/*.txt -o my-cluster.yaml\n";

typedef struct cal_args {
  const char **files;
  int nfiles;
  const char **sets;
  int nsets;
  const char *base, *output;
  bool json, keep_algorithms;
} cal_args;

static int parse_args(cal_args *a, int argc, char **argv) {
  a->files = sim_calloc((size_t)argc + 1, sizeof *a->files);
  a->sets = sim_calloc((size_t)argc + 1, sizeof *a->sets);
  a->output = "calibration.yaml";
  const cli_opt opts[] = {
      {.name = "--output", .alias = "-o", .value = true, .last = &a->output},
      {.name = "--base", .value = true, .last = &a->base},
      cli_opt_set(a->sets, &a->nsets),
      {.name = "--json", .flag = &a->json},
      {.name = "--keep-algorithms", .flag = &a->keep_algorithms},
  };
  const cli_argv spec = {.opts = opts,
                         .nopts = sizeof opts / sizeof opts[0],
                         .help = calibrate_help,
                         .positional = a->files,
                         .npositional = &a->nfiles};
  int rc = cli_argv_parse(&spec, argc, argv);
  if (rc != CLI_OK) return rc;
  if (a->nfiles == 0) {
    fprintf(stderr, "fabsim: calibrate needs at least one nccl-tests output file (see --help)\n");
    return CLI_BAD_INPUT;
  }
  return CLI_OK;
}

int cli_cmd_calibrate(int argc, char **argv) {
  cal_args a = {0};
  cal_calibration c;
  sim_error err = {0};
  int rc = parse_args(&a, argc, argv);
  if (rc == CLI_OK) {
    cal_request q = {.files = a.files,
                     .nfiles = (size_t)a.nfiles,
                     .base = {.path = a.base,
                              .sets = a.sets,
                              .nsets = a.nsets,
                              .keep_algorithms = a.keep_algorithms},
                     .output = a.output};
    int st = cal_calibrate(&q, &c, &err);
    if (st != SIM_OK) cli_error(err.msg);
    rc = st == SIM_OK ? CLI_OK : c.fitted ? CLI_FAILED : CLI_BAD_INPUT;
    if (st == SIM_OK && a.json) out_print_json(out_calib_json(&c.fit, a.output));
    else if (st == SIM_OK) out_calib_print(&c.fit, a.output);
    cal_calibration_free(&c);
  }
  sim_free(a.files);
  sim_free(a.sets);
  return rc < 0 ? CLI_OK : rc;
}
