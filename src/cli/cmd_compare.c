/* fabsim compare: scenarios side by side (each run in its own process), or
 * runs already in a results database; a table of the headline figures with
 * differences to the first, and a comparison report.html. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/spawn.h"
#include "fabsim/run.h"

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

static void free_args(compare_args *a) {
  sim_free(a->files);
  sim_free(a->sets);
  sim_free(a->ids);
}

/* "examples/rail-roce.yaml" -> "rail-roce". */
static void base_label(const char *path, char *out, size_t n) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  size_t len = strlen(b);
  if (len > 5 && !strcmp(b + len - 5, ".yaml")) len -= 5;
  else if (len > 4 && !strcmp(b + len - 4, ".yml")) len -= 4;
  snprintf(out, n, "%.*s", (int)len, b);
}

/* Every check the scenario's run makes before its first event (run_check),
 * before any scenario runs. */
static int check_scenario(const char *file, const compare_args *a) {
  sim_error err = {0};
  if (run_check(file, a->sets, a->nsets, &err) == SIM_OK) return CLI_OK;
  cli_error(err.msg);
  return CLI_BAD_INPUT;
}

/* Run the scenarios; *db and *runs get the database and its runs. */
static int run_scenarios(const compare_args *a, const char *outabs, char **db, json_t **runs,
                         bool *interrupted) {
  size_t n = (size_t)a->nfiles;
  int rc = CLI_OK;
  for (size_t i = 0; i < n && rc == CLI_OK; i++) rc = check_scenario(a->files[i], a);
  if (rc != CLI_OK) return rc;
  size_t dl = strlen(outabs) + 32;
  *db = sim_malloc(dl);
  snprintf(*db, dl, "%s/results.sqlite", outabs);
  cli_job *jobs = sim_calloc(n, sizeof *jobs);
  for (size_t i = 0; i < n; i++) {
    char label[128];
    base_label(a->files[i], label, sizeof label);
    for (size_t k = 0; k < i; k++) /* the same file name twice: tell them apart */
      if (!strcmp(jobs[k].label, label)) {
        size_t l = strlen(label);
        snprintf(label + l, sizeof label - l, "#%zu", i + 1);
        break;
      }
    jobs[i].label = sim_strdup(label);
    size_t pl = strlen(outabs) + strlen(label) + 32;
    jobs[i].dir = sim_malloc(pl);
    snprintf(jobs[i].dir, pl, "%s/%zu-%s", outabs, i + 1, label);
    cli_job_arg(&jobs[i], "%s", a->files[i]);
    for (int k = 0; k < a->nsets; k++) cli_job_arg(&jobs[i], "--set=%s", a->sets[k]);
    cli_job_arg(&jobs[i], "--set=output.dir=%s", jobs[i].dir);
    cli_job_arg(&jobs[i], "--set=output.database=%s", *db);
    cli_job_arg(&jobs[i], "--quiet");
  }
  char id[96];
  cli_run_id(id, sizeof id, "compare");
  size_t failed = cli_jobs_run(jobs, n, a->jobs.n, id, a->quiet, interrupted);
  if (cli_jobs_order_ids(*db, id, jobs, n) != CLI_OK) rc = CLI_FAILED; /* ids in file order */
  sim_error err = {0};
  json_t *all = NULL;
  if (out_db_read_runs(*db, id, NULL, 0, &all, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_FAILED;
  } else {
    *runs = json_array();
    for (size_t i = 0; i < n; i++)
      for (size_t k = 0; k < json_array_size(all); k++) {
        json_t *r = json_array_get(all, k);
        if (strcmp(json_string_value(json_object_get(r, "output_dir")), jobs[i].dir)) continue;
        json_object_set_new(r, "label", json_string(jobs[i].label));
        json_array_append(*runs, r);
      }
    json_decref(all);
  }
  for (size_t i = 0; i < n && failed && !*interrupted; i++) {
    if (jobs[i].status == 0) continue;
    fprintf(stderr, "fabsim: %s failed with exit status %d; see %s/stderr.txt\n", a->files[i],
            jobs[i].status, jobs[i].dir);
  }
  if (rc == CLI_OK && failed) rc = *interrupted ? CLI_INTERRUPTED : CLI_FAILED;
  cli_jobs_free(jobs, n);
  return rc;
}

static void label_db_runs(json_t *runs) {
  for (size_t i = 0; i < json_array_size(runs); i++) {
    json_t *r = json_array_get(runs, i);
    const char *point = json_string_value(json_object_get(r, "point"));
    const char *file = json_string_value(json_object_get(r, "scenario"));
    char base[128] = "defaults", label[256];
    if (file) base_label(file, base, sizeof base);
    snprintf(label, sizeof label, "run %lld: %s",
             (long long)json_integer_value(json_object_get(r, "run_id")), point ? point : base);
    json_object_set_new(r, "label", json_string(label));
  }
}

/* Runs simulated at different fidelities differ by their models as well as
 * by their scenarios: then each label names its fidelity ("default
 * [packet]", in the table, report.html and --json alike) and a warning says
 * so. Runs of one fidelity keep their labels. */
static void mark_fidelities(json_t *runs) {
  const char *first = NULL;
  bool mixed = false;
  for (size_t i = 0; i < json_array_size(runs); i++) {
    const json_t *sum = json_object_get(json_array_get(runs, i), "summary");
    const char *f = json_string_value(json_object_get(sum, "fidelity"));
    if (!f) f = "?";
    if (!first) first = f;
    mixed |= strcmp(f, first) != 0;
  }
  if (!mixed) return;
  char list[1024] = "";
  size_t o = 0;
  for (size_t i = 0; i < json_array_size(runs); i++) {
    json_t *r = json_array_get(runs, i);
    const char *f = json_string_value(json_object_get(json_object_get(r, "summary"), "fidelity"));
    char label[300];
    snprintf(label, sizeof label, "%s [%s]", json_string_value(json_object_get(r, "label")),
             f ? f : "?");
    if (o < sizeof list)
      o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", label);
    json_object_set_new(r, "label", json_string(label));
  }
  fprintf(stderr,
          "fabsim: warning: the runs were simulated at different fidelities (%s): their "
          "differences are partly the fidelities' models, not only the scenarios'; for a like "
          "comparison, --set simulation.fidelity=... on every run\n",
          list);
}

int cli_cmd_compare(int argc, char **argv) {
  compare_args a;
  json_t *runs = NULL;
  char *db = NULL, *outabs = NULL;
  bool interrupted = false;
  sim_error err = {0};
  int rc = parse(&a, argc, argv);
  if (rc != CLI_OK) goto out;
  outabs = cli_abspath(a.out);
  if (a.db) {
    db = sim_strdup(a.db);
    if (access(db, R_OK) != 0) /* absent, or not this user's to read */
      sim_fail(&err, SIM_EIO, "cannot read: %s", strerror(errno));
    if (err.msg[0] || out_db_check(db, false, &err) != SIM_OK) {
      fprintf(stderr, "fabsim: --db %s: %s; allowed: a fabsim results database\n", db, err.msg);
      rc = CLI_BAD_INPUT;
      goto out;
    }
    if (out_db_read_runs(db, NULL, a.ids, a.nids, &runs, &err) != SIM_OK) {
      cli_error(err.msg);
      rc = err.code == SIM_ENOENT ? CLI_BAD_INPUT : CLI_FAILED;
      goto out;
    }
    label_db_runs(runs);
  } else {
    rc = run_scenarios(&a, outabs, &db, &runs, &interrupted);
    if (rc == CLI_BAD_INPUT || !runs) goto out;
  }
  mark_fidelities(runs);
  if (json_array_size(runs) == 0) {
    fprintf(stderr, "fabsim: no runs to compare\n");
    rc = CLI_FAILED;
    goto out;
  }
  if (a.json) {
    char *text = out_json_text(runs);
    puts(text);
    free(text);
  } else {
    out_compare_table(stdout, runs);
  }
  if (sim_mkdirs(outabs, &err) != SIM_OK || out_compare_report(db, runs, outabs, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_FAILED;
  } else if (!a.quiet) {
    fprintf(stderr, "written      %s/report.html%s%s\n", a.out, a.db ? "" : "; database ",
            a.db ? "" : db);
  }
out:
  json_decref(runs);
  sim_free(db);
  sim_free(outabs);
  free_args(&a);
  return rc < 0 ? CLI_OK : rc;
}
