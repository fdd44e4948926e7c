/* fabsim sweep: argv -> the sweep (src/study, fabsim/study.h) -> its table,
 * sweep.csv and report.html (src/output). Under mpirun every rank runs this;
 * rank 0 alone prints. */
#include <stdio.h>
#include <string.h>

#include "cli/study_io.h"

static const char sweep_help[] =
    "usage: fabsim sweep [SCENARIO.yaml] [--set KEY=VALUE]... --vary KEY=V1,V2,... [--vary ...]\n"
    "                    [--jobs N] [--out DIR] [--db FILE] [--json] [--quiet]\n"
    "\n"
    "Run the scenario once for every combination of the --vary values (the cross\n"
    "product), each point a separate `fabsim run` process, up to N at a time, and\n"
    "print a table of the headline figures of every point.\n"
    "\n"
    "  SCENARIO.yaml        scenario file (optional: every key has a default)\n"
    "  --set KEY=VALUE      override one key for every point (repeatable)\n"
    "  --vary KEY=V1,V2,... the values one key takes (repeatable; the points are the\n"
    "                       cross product, the last --vary varying fastest)\n"
    "  --jobs N, -j N       points run in parallel (default: the number of CPUs)\n"
    "  --out DIR            where the points go: DIR/point-001/ ... (default fabsim-sweep)\n"
    "  --db FILE            the results database every point is added to\n"
    "                       (default DIR/results.sqlite; may hold earlier runs)\n"
    "  --json               print the points as JSON (run id, point, summary) instead\n"
    "  --quiet, -q          no per-point progress lines on stderr\n"
    "\n"
    "Every point is checked before any runs, with every check `fabsim run` makes\n"
    "before it simulates (keys, topology, fault targets, output.ports, the\n"
    "workload's plan, trace files, jobs, the training job, power): a bad value is\n"
    "reported as '--vary KEY=VALUE: KEY: what is wrong' with exit status 2, and\n"
    "nothing is run or written. Each point writes\n"
    "all the files of `fabsim run` into its folder; DIR/sweep.csv holds the table,\n"
    "DIR/report.html compares the points side by side. In the database the points\n"
    "of one sweep share runs.sweep, and runs.point names the values:\n"
    "  sqlite3 DIR/results.sqlite \"SELECT point, value FROM runs JOIN metrics USING (run_id)\n"
    "                              WHERE name = 'collectives.0.busbw_GBps'\"\n"
    "The sweep's run ids follow point order, whichever point finished first: at\n"
    "its end (also after Ctrl-C or a failed point) the sweep renumbers its runs,\n"
    "which take the next ids after those the database held when it began (if\n"
    "another process adds runs to it meanwhile, those keep their ids and the\n"
    "sweep's interleave with them, still in point order).\n"
    "\n"
    "Under MPI (mpirun -np N fabsim sweep ...) the points are spread over the N\n"
    "ranks (rank r runs points r, r+N, ...; --jobs at a time, default 1 per rank);\n"
    "rank 0 gathers every result into the one database and prints the same table\n"
    "as without MPI. DIR should be on a shared file system for the point folders\n"
    "to be in one place; the database never needs one.\n"
    "\n"
    "Exit status: 0 every point ran, 1 a point failed (its stderr.txt is shown),\n"
    "2 bad input (or DIR in use by another sweep), 130 stopped by Ctrl-C (points\n"
    "finished so far are in the table).\n"
    "\n"
    "Example: fabsim sweep examples/default.yaml --vary fabric.routing=ecmp,adaptive \\\n"
    "           --vary workload.collective.size=64MiB,1GiB --jobs 2\n";

typedef struct sweep_args {
  study_sweep_args study;
  const char **sets;
  study_vary *vary;
  size_t nvary;
  cli_jobs jobs;
  bool json, quiet;
} sweep_args;

static int take_vary(void *ctx, const char *opt, const char *value) {
  sweep_args *a = ctx;
  sim_error err = {0};
  (void)opt;
  if (study_vary_add(&a->vary, &a->nvary, value, &err) == SIM_OK) return CLI_OK;
  cli_study_error(&err);
  return CLI_BAD_INPUT;
}

static int parse(sweep_args *a, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  a->sets = sim_calloc((size_t)argc + 1, sizeof *a->sets);
  a->study.out = "fabsim-sweep";
  a->jobs = cli_jobs_default();
  int npos = 0;
  const cli_opt opts[] = {
      cli_opt_set(a->sets, &a->study.nsets),
      {.name = "--vary", .value = true, .inline_value = true, .take = take_vary, .ctx = a},
      {.name = "--jobs", .alias = "-j", .value = true, .take = cli_take_jobs, .ctx = &a->jobs},
      {.name = "--out", .value = true, .last = &a->study.out},
      {.name = "--db", .value = true, .last = &a->study.db},
      {.name = "--json", .flag = &a->json},
      {.name = "--quiet", .alias = "-q", .flag = &a->quiet},
  };
  const cli_argv spec = {.opts = opts,
                         .nopts = sizeof opts / sizeof opts[0],
                         .help = sweep_help,
                         .positional = &a->study.scenario,
                         .npositional = &npos,
                         .max_positional = 1,
                         .too_many = cli_one_scenario,
                         .missing = "fabsim: a value is missing after '%s' (see --help)\n",
                         .missing_short_only = true};
  int rc = cli_argv_parse(&spec, argc, argv);
  a->study.sets = a->sets;
  a->study.vary = a->vary;
  a->study.nvary = a->nvary;
  a->study.parallel = a->jobs.n;
  a->study.parallel_given = a->jobs.given;
  if (rc == CLI_OK && a->nvary == 0) {
    fprintf(stderr, "fabsim: sweep needs at least one --vary KEY=V1,V2,... (see --help)\n");
    return CLI_BAD_INPUT;
  }
  return rc;
}

/* Rank 0 after every point ran: the table (or JSON), sweep.csv, report.html,
 * the failed points' stderr; the exit status. */
static int report(const study_sweep *s, const sweep_args *a, int rc) {
  sim_error err = {0};
  out_sweep_print(stdout, s->runs, s->keys, s->nkeys, a->json);
  if (out_sweep_files(s->outabs, s->db, s->runs, s->keys, s->nkeys, &err) != SIM_OK) {
    cli_study_error(&err);
    rc = CLI_FAILED;
  } else if (!a->quiet) {
    fprintf(stderr, "written      %s/: sweep.csv, report.html; database %s\n", a->study.out, s->db);
  }
  for (size_t p = 0; p < s->npoints && s->failed && !s->interrupted; p++) {
    const study_point *pt = &s->points[p];
    if (pt->status == 0) continue;
    fprintf(stderr, "fabsim: point %zu (%s) failed with exit status %d:\n%s", p + 1, pt->label,
            pt->status, pt->stderr_head ? pt->stderr_head : "");
  }
  if (rc == CLI_OK) rc = s->interrupted ? CLI_INTERRUPTED : s->failed ? CLI_FAILED : CLI_OK;
  return rc;
}

int cli_cmd_sweep(int argc, char **argv) {
  sweep_args a;
  study_sweep s;
  sim_error err = {0};
  const study_hooks hooks = cli_study_hooks(&a.quiet);
  a.quiet = false;
  if (study_sweep_begin(&s, &hooks, &err) != SIM_OK) {
    cli_study_error(&err);
    return CLI_FAILED;
  }
  if (s.idle) return CLI_OK;
  int rc = parse(&a, argc, argv);
  if (rc == CLI_OK && study_sweep_prepare(&s, &a.study, &err) != SIM_OK) {
    cli_study_error(&err);
    rc = cli_study_status(err.code);
  }
  if (rc == CLI_OK) {
    if (!a.quiet && s.rank == 0 && s.size > 1)
      fprintf(stderr, "sweep %s: %zu points over %u MPI ranks, %u at a time each, in %s\n", s.id,
              s.npoints, s.size, s.parallel, a.study.out);
    else if (!a.quiet && s.rank == 0)
      fprintf(stderr, "sweep %s: %zu points, %u at a time, in %s\n", s.id, s.npoints, s.parallel,
              a.study.out);
    sim_interrupts v = {0};
    sim_interrupts_arm(&v); /* the pool passes a Ctrl-C to its points */
    int run = study_sweep_run(&s, &err);
    sim_interrupts_disarm(&v);
    if (s.rank == 0) {
      cli_study_error(&err);
      rc = run != SIM_OK || s.errors ? CLI_FAILED : CLI_OK;
      if (s.runs) rc = report(&s, &a, rc);
    }
  }
  rc = study_sweep_end(&s, rc); /* every rank exits as rank 0 does */
  study_vary_free(a.vary, a.nvary);
  sim_free(a.sets);
  return rc < 0 ? CLI_OK : rc;
}
