/* A comparison: scenario files side by side (each run in its own process),
 * or runs already in a results database, labelled for the table and the
 * report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabsim/out.h"
#include "fabsim/run.h"
#include "fabsim/study.h"

/* "examples/rail-roce.yaml" -> "rail-roce". */
static void base_label(const char *path, char *out, size_t n) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  size_t len = strlen(b);
  if (len > 5 && !strcmp(b + len - 5, ".yaml")) len -= 5;
  else if (len > 4 && !strcmp(b + len - 4, ".yml")) len -= 4;
  snprintf(out, n, "%.*s", (int)len, b);
}

/* One point per file, into OUT/K-NAME, all into c->db. */
static void build_points(study_compare *c, const study_compare_args *a) {
  size_t n = (size_t)a->nfiles;
  c->points = sim_calloc(n, sizeof *c->points);
  c->npoints = n;
  for (size_t i = 0; i < n; i++) {
    study_point *p = &c->points[i];
    char label[128];
    base_label(a->files[i], label, sizeof label);
    for (size_t k = 0; k < i; k++) /* the same file name twice: tell them apart */
      if (!strcmp(c->points[k].label, label)) {
        size_t l = strlen(label);
        snprintf(label + l, sizeof label - l, "#%zu", i + 1);
        break;
      }
    p->label = sim_strdup(label);
    size_t pl = strlen(c->outabs) + strlen(label) + 32;
    p->dir = sim_malloc(pl);
    snprintf(p->dir, pl, "%s/%zu-%s", c->outabs, i + 1, label);
    study_point_arg(p, "%s", a->files[i]);
    for (int k = 0; k < a->nsets; k++) study_point_arg(p, "--set=%s", a->sets[k]);
    study_point_arg(p, "--set=output.dir=%s", p->dir);
    study_point_arg(p, "--set=output.database=%s", c->db);
    study_point_arg(p, "--quiet");
  }
}

/* Every check each scenario's run makes before its first event (run_check),
 * before any scenario runs; then run them, ids in file order. */
static int compare_files(study_compare *c, const study_compare_args *a, const study_hooks *h,
                         sim_error *err) {
  for (int i = 0; i < a->nfiles; i++)
    if (run_check(a->files[i], a->sets, a->nsets, err) != SIM_OK) {
      err->code = SIM_ECONFIG;
      return SIM_ECONFIG;
    }
  size_t dl = strlen(c->outabs) + 32;
  c->db = sim_malloc(dl);
  snprintf(c->db, dl, "%s/results.sqlite", c->outabs);
  build_points(c, a);
  char id[96];
  study_make_id(id, sizeof id, "compare");
  c->failed = study_points_run(c->points, c->npoints, a->parallel, a->self, id, h, &c->interrupted);
  sim_error e = {0};
  if (study_order_ids(c->db, id, c->points, c->npoints, &e) != SIM_OK) {
    c->errors++;
    if (h && h->report) h->report(h->ctx, &e);
  }
  int rc = study_collect_runs(c->db, id, c->points, c->npoints, &c->runs, err);
  return rc == SIM_ECONFIG || rc == SIM_EINVAL ? SIM_EIO : rc;
}

/* A database's runs, labelled "run ID: POINT" (or the scenario's name). */
static int read_db(study_compare *c, const study_compare_args *a, sim_error *err) {
  sim_error e = {0};
  c->db = sim_strdup(a->db);
  if (access(c->db, R_OK) != 0) /* absent, or not this user's to read */
    sim_fail(&e, SIM_EIO, "cannot read: %s", strerror(errno));
  if (e.msg[0] || out_db_check(c->db, false, &e) != SIM_OK)
    return sim_fail(err, SIM_EINVAL, "--db %s: %s; allowed: a fabsim results database", c->db,
                    e.msg);
  int rc = out_db_read_runs(c->db, NULL, a->ids, a->nids, &c->runs, err);
  if (rc == SIM_ENOENT) return err->code = SIM_ECONFIG; /* no run of an id given */
  if (rc != SIM_OK) return err->code = rc == SIM_ECONFIG || rc == SIM_EINVAL ? SIM_EIO : rc;
  for (size_t i = 0; i < json_array_size(c->runs); i++) {
    json_t *r = json_array_get(c->runs, i);
    const char *point = json_string_value(json_object_get(r, "point"));
    const char *file = json_string_value(json_object_get(r, "scenario"));
    char base[128] = "defaults", label[256];
    if (file) base_label(file, base, sizeof base);
    snprintf(label, sizeof label, "run %lld: %s",
             (long long)json_integer_value(json_object_get(r, "run_id")), point ? point : base);
    json_object_set_new(r, "label", json_string(label));
  }
  return SIM_OK;
}

/* Runs simulated at different fidelities differ by their models as well as
 * by their scenarios: then each label names its fidelity ("default
 * [packet]", in the table, report.html and --json alike) and c->fidelities
 * lists them. Runs of one fidelity keep their labels. */
static void mark_fidelities(study_compare *c) {
  json_t *runs = c->runs;
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
  c->fidelities = sim_strdup(list);
}

int study_compare_run(study_compare *c, const study_compare_args *a, const study_hooks *h,
                      sim_error *err) {
  memset(c, 0, sizeof *c);
  c->outabs = study_abspath(a->out);
  int rc = a->db ? read_db(c, a, err) : compare_files(c, a, h, err);
  if (c->runs) mark_fidelities(c);
  c->nruns = json_array_size(c->runs);
  return rc;
}

void study_compare_free(study_compare *c) {
  json_decref(c->runs);
  study_points_free(c->points, c->npoints);
  sim_free(c->db);
  sim_free(c->outabs);
  sim_free(c->fidelities);
  memset(c, 0, sizeof *c);
}
