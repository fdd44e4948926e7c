/* fabsim compare: argv -> the comparison (src/study, fabsim/study.h) -> its
 * table and report.html (src/output). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/study_io.h"

static const char compare_help[] =
    "usage: fabsim compare A.yaml B.yaml [C.yaml ...] [--set KEY=VALUE]... [--jobs N]\n"
    "                      [--out DIR] [--json] [--quiet]\n"
    "       fabsim compare --db FILE [RUN_ID ...] [--out DIR] [--json]\n"
    "\n"
    "Put runs side by side: a table of their headline figures (time, bandwidth,\n"
    "flow completion times, cost, ...) with each one's difference to the first, and\n"
    "DIR/report.html with the same figures and their time series as charts.\n"
    "\n"
    "The first form runs each scenario (with the same --set overrides, e.g. a\n"
    "common cluster size) as a `fabsim run` of its own, up to N at a time, into\n"
    "DIR/1-A/, DIR/2-B/, ..., all in DIR/results.sqlite. The second form compares\n"
    "runs already in a results database, by run id (default: every run in it;\n"
    "`sqlite3 FILE 'SELECT run_id, scenario, point FROM runs'` lists them).\n"
    "Every scenario is checked before any runs, with every check `fabsim run`\n"
    "makes before it simulates (keys, topology, fault targets, output.ports, the\n"
    "workload, jobs, the training job, power): one bad scenario is reported at\n"
    "its file:line:col with exit status 2, and nothing is run.\n"
    "\n"
    "  --set KEY=VALUE    override one key in every scenario (repeatable)\n"
    "  --jobs N, -j N     scenarios run in parallel (default: the number of CPUs)\n"
    "  --out DIR          where runs and report.html go (default fabsim-compare)\n"
    "  --db FILE          compare runs from this results database\n"
    "  --json             print the runs as JSON instead of the table\n"
    "  --quiet, -q        no progress lines on stderr\n"
    "\n"
    "Exit status: 0 done, 1 a run failed, 2 bad input, 130 stopped by Ctrl-C.\n"
    "\n"
    "Example: fabsim compare examples/default.yaml examples/rail-roce.yaml --set "
    "cluster.nodes=64\n";

typedef struct compare_args {
  const char **files, **sets, *out, *db;
  int nfiles, nsets;
  int64_t *ids;
  size_t nids;
  cli_jobs jobs;
  bool json, quiet;
} compare_args;

static int parse(compare_args *a, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  a->files = sim_calloc((size_t)argc + 1, sizeof *a->files);
  a->sets = sim_calloc((size_t)argc + 1, sizeof *a->sets);
  a->ids = sim_calloc((size_t)argc + 1, sizeof *a->ids);
  a->out = "fabsim-compare";
  a->jobs = cli_jobs_default();
  const cli_opt opts[] = {
      cli_opt_set(a->sets, &a->nsets),
      {.name = "--jobs", .alias = "-j", .value = true, .take = cli_take_jobs, .ctx = &a->jobs},
      {.name = "--out", .value = true, .last = &a->out},
      {.name = "--db", .value = true, .last = &a->db},
      {.name = "--json", .flag = &a->json},
      {.name = "--quiet", .alias = "-q", .flag = &a->quiet},
  };
  static const char bad[] = "fabsim: unknown option or missing value '%s' (see --help)\n";
  const cli_argv spec = {.opts = opts,
                         .nopts = sizeof opts / sizeof opts[0],
                         .help = compare_help,
                         .positional = a->files,
                         .npositional = &a->nfiles,
                         .unknown = bad,
                         .missing = bad};
  int rc = cli_argv_parse(&spec, argc, argv);
  if (rc != CLI_OK) return rc;
  if (a->db) { /* positional arguments are run ids */
    for (int i = 0; i < a->nfiles; i++) {
      char *end;
      long long id = strtoll(a->files[i], &end, 10);
      if (*end || id < 1) {
        fprintf(stderr, "fabsim: '%s' is not a run id; with --db, give run ids (see --help)\n",
                a->files[i]);
        return CLI_BAD_INPUT;
      }
      a->ids[a->nids++] = id;
    }
    if (a->nsets) {
      fprintf(stderr, "fabsim: --set does not apply to runs already in a database\n");
      return CLI_BAD_INPUT;
    }
  } else if (a->nfiles < 2) {
    fprintf(stderr, "fabsim: compare needs two or more scenarios, or --db FILE (see --help)\n");
    return CLI_BAD_INPUT;
  }
  return CLI_OK;
}

int cli_cmd_compare(int argc, char **argv) {
  compare_args a;
  study_compare c = {0};
  sim_error err = {0};
  int rc = parse(&a, argc, argv);
  if (rc != CLI_OK) goto out;
  const study_hooks hooks = cli_study_hooks(&a.quiet);
  const study_compare_args sa = {.files = a.files,
                                 .nfiles = a.db ? 0 : a.nfiles,
                                 .sets = a.sets,
                                 .nsets = a.nsets,
                                 .parallel = a.jobs.n,
                                 .out = a.out,
                                 .db = a.db,
                                 .ids = a.ids,
                                 .nids = a.nids};
  sim_interrupts v = {0};
  sim_interrupts_arm(&v); /* the pool passes a Ctrl-C to its points */
  int crc = study_compare_run(&c, &sa, &hooks, &err);
  sim_interrupts_disarm(&v);
  cli_study_error(&err);
  rc = c.errors ? CLI_FAILED : cli_study_status(crc);
  for (size_t i = 0; i < c.npoints && c.failed && !c.interrupted; i++)
    if (c.points[i].status != 0)
      fprintf(stderr, "fabsim: %s failed with exit status %d; see %s/stderr.txt\n", a.files[i],
              c.points[i].status, c.points[i].dir);
  if (rc == CLI_OK && c.failed) rc = c.interrupted ? CLI_INTERRUPTED : CLI_FAILED;
  if (crc != SIM_OK || !c.runs) goto out;
  if (c.fidelities)
    fprintf(stderr,
            "fabsim: warning: the runs were simulated at different fidelities (%s): their "
            "differences are partly the fidelities' models, not only the scenarios'; for a like "
            "comparison, --set simulation.fidelity=... on every run\n",
            c.fidelities);
  if (c.nruns == 0) {
    fprintf(stderr, "fabsim: no runs to compare\n");
    rc = CLI_FAILED;
    goto out;
  }
  out_compare_print(stdout, c.runs, a.json);
  if (out_compare_files(c.outabs, c.db, c.runs, &err) != SIM_OK) {
    cli_study_error(&err);
    rc = CLI_FAILED;
  } else if (!a.quiet) {
    fprintf(stderr, "written      %s/report.html%s%s\n", a.out, a.db ? "" : "; database ",
            a.db ? "" : c.db);
  }
out:
  study_compare_free(&c);
  sim_free(a.files);
  sim_free(a.sets);
  sim_free(a.ids);
  return rc < 0 ? CLI_OK : rc;
}
