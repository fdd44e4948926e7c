/* fabsim sweep: the cross product of --vary values, each point a `fabsim
 * run` in its own process (at most --jobs at once), all in one results
 * database; a table, sweep.csv and a comparison report.html at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/spawn.h"

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
    "Every value is checked before anything runs: a bad one is reported as\n"
    "'--vary KEY=VALUE: KEY: what is wrong' with exit status 2. Each point writes\n"
    "all the files of `fabsim run` into its folder; DIR/sweep.csv holds the table,\n"
    "DIR/report.html compares the points side by side. In the database the points\n"
    "of one sweep share runs.sweep, and runs.point names the values:\n"
    "  sqlite3 DIR/results.sqlite \"SELECT point, value FROM runs JOIN metrics USING (run_id)\n"
    "                              WHERE name = 'collectives.0.busbw_GBps'\"\n"
    "\n"
    "Exit status: 0 every point ran, 1 a point failed (its stderr.txt is shown),\n"
    "2 bad input, 130 stopped by Ctrl-C (points finished so far are in the table).\n"
    "\n"
    "Example: fabsim sweep examples/default.yaml --vary fabric.routing=ecmp,adaptive \\\n"
    "           --vary workload.collective.size=64MiB,1GiB --jobs 2\n";

typedef struct vary {
  char *key;
  char **values;
  size_t n;
} vary;

typedef struct sweep_args {
  const char *scenario, *out, *db;
  const char **sets;
  int nsets;
  vary *vary;
  size_t nvary;
  unsigned jobs;
  bool json, quiet;
} sweep_args;

static void free_args(sweep_args *a) {
  for (size_t i = 0; i < a->nvary; i++) {
    for (size_t k = 0; k < a->vary[i].n; k++) sim_free(a->vary[i].values[k]);
    sim_free(a->vary[i].values);
    sim_free(a->vary[i].key);
  }
  sim_free(a->vary);
  sim_free(a->sets);
}

static int add_vary(sweep_args *a, const char *text) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text || !eq[1]) {
    fprintf(stderr, "fabsim: --vary '%s': write KEY=V1,V2,... (see --help)\n", text);
    return CLI_BAD_INPUT;
  }
  a->vary = sim_realloc(a->vary, (a->nvary + 1) * sizeof *a->vary);
  vary *v = &a->vary[a->nvary++];
  memset(v, 0, sizeof *v);
  v->key = sim_malloc((size_t)(eq - text) + 1);
  memcpy(v->key, text, (size_t)(eq - text));
  v->key[eq - text] = '\0';
  for (const char *p = eq + 1;;) {
    size_t len = strcspn(p, ",");
    if (len == 0) {
      fprintf(stderr, "fabsim: --vary '%s': an empty value (see --help)\n", text);
      return CLI_BAD_INPUT;
    }
    v->values = sim_realloc(v->values, (v->n + 1) * sizeof *v->values);
    v->values[v->n] = sim_malloc(len + 1);
    memcpy(v->values[v->n], p, len);
    v->values[v->n++][len] = '\0';
    if (!p[len]) break;
    p += len + 1;
  }
  return CLI_OK;
}

static int parse(sweep_args *a, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  a->sets = sim_calloc((size_t)argc + 1, sizeof *a->sets);
  a->out = "fabsim-sweep";
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  a->jobs = cpus > 0 ? (unsigned)cpus : 1;
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    bool next = i + 1 < argc;
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
      fputs(sweep_help, stdout);
      return -1;
    } else if ((!strcmp(s, "--set") || !strcmp(s, "-s")) && next) {
      a->sets[a->nsets++] = argv[++i];
    } else if (!strncmp(s, "--set=", 6)) {
      a->sets[a->nsets++] = s + 6;
    } else if (!strcmp(s, "--vary") && next) {
      if (add_vary(a, argv[++i]) != CLI_OK) return CLI_BAD_INPUT;
    } else if (!strncmp(s, "--vary=", 7)) {
      if (add_vary(a, s + 7) != CLI_OK) return CLI_BAD_INPUT;
    } else if ((!strcmp(s, "--jobs") || !strcmp(s, "-j")) && next) {
      char *end;
      long j = strtol(argv[++i], &end, 10);
      if (*end || j < 1 || j > 1024) {
        fprintf(stderr, "fabsim: --jobs '%s': a number of processes, 1..1024\n", argv[i]);
        return CLI_BAD_INPUT;
      }
      a->jobs = (unsigned)j;
    } else if (!strcmp(s, "--out") && next) {
      a->out = argv[++i];
    } else if (!strcmp(s, "--db") && next) {
      a->db = argv[++i];
    } else if (!strcmp(s, "--json")) {
      a->json = true;
    } else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
      a->quiet = true;
    } else if (s[0] == '-' && s[1]) {
      fprintf(stderr, "fabsim: %s '%s' (see --help)\n",
              next || strchr("sj", s[1]) == NULL ? "unknown option" : "a value is missing after", s);
      return CLI_BAD_INPUT;
    } else if (!a->scenario) {
      a->scenario = s;
    } else {
      fprintf(stderr, "fabsim: one scenario file only; '%s' is a second (see --help)\n", s);
      return CLI_BAD_INPUT;
    }
  }
  if (a->nvary == 0) {
    fprintf(stderr, "fabsim: sweep needs at least one --vary KEY=V1,V2,... (see --help)\n");
    return CLI_BAD_INPUT;
  }
  return CLI_OK;
}

/* Check one point in-process (scenario and topology), as its run will. */
static int check_point(const sweep_args *a, const char **sets, int nsets) {
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_error err = {0};
  int rc = cfg_load(&cfg, &doc, a->scenario, sets, nsets, &err);
  if (rc == SIM_OK) {
    rc = topo_build(&t, &cfg, doc, &err);
    if (t) topo_free(t);
    cfg_free(&cfg, doc);
  }
  if (rc == SIM_OK) return CLI_OK;
  int line = 0, col = 0, used = 0;
  /* "--set:N:COL: msg": N past the common --set values is a --vary value. */
  if (sscanf(err.msg, "--set:%d:%d: %n", &line, &col, &used) == 2 && used > 0 && line > a->nsets)
    fprintf(stderr, "fabsim: --vary %s: %s\n", sets[line - 1], err.msg + used);
  else
    cli_error(err.msg);
  return CLI_BAD_INPUT;
}

int cli_cmd_sweep(int argc, char **argv) {
  sweep_args a;
  cli_job *jobs = NULL;
  json_t *runs = NULL;
  char *db = NULL, *outabs = NULL;
  size_t npoints = 1;
  int rc = parse(&a, argc, argv);
  if (rc != CLI_OK) goto out;
  for (size_t i = 0; i < a.nvary; i++) {
    npoints *= a.vary[i].n;
    if (npoints > 10000) {
      fprintf(stderr, "fabsim: the sweep has more than 10,000 points; split it\n");
      rc = CLI_BAD_INPUT;
      goto out;
    }
  }
  outabs = cli_abspath(a.out);
  db = a.db ? cli_abspath(a.db) : NULL;
  if (!db) {
    size_t n = strlen(outabs) + 32;
    db = sim_malloc(n);
    snprintf(db, n, "%s/results.sqlite", outabs);
  }
  jobs = sim_calloc(npoints, sizeof *jobs);
  const char **sets = sim_calloc((size_t)a.nsets + a.nvary + 1, sizeof *sets);
  for (size_t p = 0; p < npoints; p++) {
    cli_job *j = &jobs[p];
    size_t rest = p, lablen = 0;
    char label[2048] = "";
    for (int k = 0; k < a.nsets; k++) sets[k] = a.sets[k];
    for (size_t v = a.nvary; v-- > 0;) { /* the last --vary varies fastest */
      const vary *vy = &a.vary[v];
      size_t idx = rest % vy->n;
      rest /= vy->n;
      size_t n = strlen(vy->key) + strlen(vy->values[idx]) + 2;
      char *kv = sim_malloc(n);
      snprintf(kv, n, "%s=%s", vy->key, vy->values[idx]);
      sets[a.nsets + (int)v] = kv;
    }
    for (size_t v = 0; v < a.nvary; v++)
      lablen += (size_t)snprintf(label + lablen, sizeof label - (lablen < sizeof label ? lablen : sizeof label),
                                 "%s%s", v ? " " : "", sets[a.nsets + (int)v]);
    if (p == 0 || a.nvary > 0) rc = check_point(&a, sets, a.nsets + (int)a.nvary);
    if (a.scenario) cli_job_arg(j, "%s", a.scenario);
    for (int k = 0; k < a.nsets + (int)a.nvary; k++) cli_job_arg(j, "--set=%s", sets[k]);
    for (size_t v = 0; v < a.nvary; v++) sim_free((void *)sets[a.nsets + (int)v]);
    size_t dl = strlen(outabs) + 32;
    j->dir = sim_malloc(dl);
    snprintf(j->dir, dl, "%s/point-%03zu", outabs, p + 1);
    cli_job_arg(j, "--set=output.dir=%s", j->dir);
    cli_job_arg(j, "--set=output.database=%s", db);
    cli_job_arg(j, "--quiet");
    j->label = sim_strdup(label);
    if (rc != CLI_OK) break;
  }
  sim_free(sets);
  if (rc != CLI_OK) goto out;
  char id[96];
  cli_run_id(id, sizeof id, "sweep");
  if (!a.quiet)
    fprintf(stderr, "sweep %s: %zu points, %u at a time, in %s\n", id, npoints, a.jobs, a.out);
  bool interrupted = false;
  size_t failed = cli_jobs_run(jobs, npoints, a.jobs, id, a.quiet, &interrupted);
  sim_error err = {0};
  if (out_db_read_runs(db, id, NULL, 0, &runs, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_FAILED;
    goto out;
  }
  /* Table order is point order, whatever order the points finished in. */
  json_t *ordered = json_array();
  for (size_t p = 0; p < npoints; p++)
    for (size_t i = 0; i < json_array_size(runs); i++) {
      json_t *r = json_array_get(runs, i);
      if (!strcmp(json_string_value(json_object_get(r, "output_dir")), jobs[p].dir)) {
        json_object_set_new(r, "label", json_string(jobs[p].label));
        json_array_append(ordered, r);
      }
    }
  json_decref(runs);
  runs = ordered;
  const char **keys = sim_calloc(a.nvary + 1, sizeof *keys);
  for (size_t v = 0; v < a.nvary; v++) keys[v] = a.vary[v].key;
  if (a.json) {
    char *text = out_json_text(runs);
    puts(text);
    free(text);
  } else {
    cli_print_sweep_table(stdout, runs, keys, a.nvary);
  }
  char *csv = cli_sweep_csv(runs, keys, a.nvary), path[4200];
  snprintf(path, sizeof path, "%s/sweep.csv", outabs);
  if (sim_write_file_atomic(path, csv, strlen(csv), &err) != SIM_OK ||
      (json_array_size(runs) && out_compare_report(db, runs, outabs, &err) != SIM_OK)) {
    cli_error(err.msg);
    rc = CLI_FAILED;
  }
  sim_free(csv);
  sim_free(keys);
  if (!a.quiet && rc == CLI_OK)
    fprintf(stderr, "written      %s/: sweep.csv, report.html; database %s\n", a.out, db);
  for (size_t p = 0; p < npoints && failed && !interrupted; p++) {
    if (jobs[p].status == 0) continue;
    char ep[4200];
    snprintf(ep, sizeof ep, "%s/stderr.txt", jobs[p].dir);
    FILE *f = fopen(ep, "r");
    fprintf(stderr, "fabsim: point %zu (%s) failed with exit status %d:\n", p + 1, jobs[p].label, jobs[p].status);
    char line[1024];
    for (int k = 0; f && k < 10 && fgets(line, sizeof line, f); k++) fprintf(stderr, "  %s", line);
    if (f) fclose(f);
  }
  if (rc == CLI_OK) rc = interrupted ? CLI_INTERRUPTED : failed ? CLI_FAILED : CLI_OK;
out:
  json_decref(runs);
  if (jobs) cli_jobs_free(jobs, npoints);
  sim_free(db);
  sim_free(outabs);
  free_args(&a);
  return rc < 0 ? CLI_OK : rc;
}
