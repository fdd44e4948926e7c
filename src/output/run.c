/* out_write_run: every file a run leaves, and its row in the database;
 * out_run_files: the same for a run of the run layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/out_internal.h"

char *out_database_path(const char *dir, const char *database) {
  if (!database || !strcmp(database, "none")) return NULL;
  if (database[0] == '/') return sim_strdup(database);
  size_t n = strlen(dir) + strlen(database) + 2;
  char *p = sim_malloc(n);
  snprintf(p, n, "%s/%s", dir, database);
  return p;
}

/* A series value above its line rate (tel_over_line): SIM_ERANGE naming
 * the NIC or port, before any file is written. */
static int check_line_rates(const out_run *r, sim_error *err) {
  tel_over o;
  if (!r->tel || !tel_over_line(r->tel, &o)) return SIM_OK;
  char name[96];
  if (o.port && r->names.port) r->names.port(r->names.ctx, o.entity, name, sizeof name);
  else if (!o.port && r->names.nic) r->names.nic(r->names.ctx, o.entity, name, sizeof name);
  else snprintf(name, sizeof name, "%s%u", o.port ? "port" : "nic", o.entity);
  return sim_fail(err, SIM_ERANGE,
                  "timeseries.csv: %s%s moved %.6g Gb/s in the row at %.6g s, above its line rate "
                  "of %.6g Gb/s: a figure that cannot be true; nothing was written (a bug: "
                  "please report the scenario)",
                  name,
                  o.port            ? ""
                  : o.dir == TEL_RX ? " (rx)"
                                    : " (tx)",
                  o.gbps, sim_ps_to_s(o.at), o.line);
}

int out_write_run(const out_run *r, sim_error *err) {
  int rc = out_json_check(r->summary, "summary.json", err); /* before any file */
  if (rc == SIM_OK) rc = check_line_rates(r, err);
  if (rc != SIM_OK) return rc;
  out__series s;
  out__series_build(&s, r->tel, &r->names, r->power);
  char *db = out_database_path(r->dir, r->database);
  /* The files (the summary lists them: out_run_summary), then the database. */
  out__buf b = {0};
  out__timeseries_csv(&b, &s);
  rc = out__write(&b, r->dir, "timeseries.csv", err);
  b.len = 0;               /* (a buffer marked nonfinite stopped the run's files above) */
  sim_test_pause("write"); /* tests: one file written, the others not */
  if (rc == SIM_OK) {
    out__events_csv(&b, r->tel);
    rc = out__write(&b, r->dir, "events.csv", err);
    b.len = 0;
  }
  if (rc == SIM_OK && r->flows && r->flows->on && r->t) {
    out__flows_csv(&b, r->flows, r->t);
    rc = out__write(&b, r->dir, "flows.csv", err);
    b.len = 0;
  }
  if (rc == SIM_OK && r->openmetrics) {
    out__openmetrics(&b, r->summary, r->tel);
    rc = out__write(&b, r->dir, "metrics.txt", err);
    b.len = 0;
  }
  out__buf_free(&b);
  if (rc == SIM_OK && r->report) {
    char title[256];
    const json_t *sc = json_object_get(r->summary, "scenario");
    const char *file = json_string_value(json_object_get(sc, "file"));
    const char *slash = file ? strrchr(file, '/') : NULL;
    snprintf(title, sizeof title, "fabsim report: %s",
             file ? (slash ? slash + 1 : file) : "default scenario");
    /* The page carries no wall-clock figure, so the same run gives the same bytes. */
    json_t *summary = json_deep_copy(r->summary);
    json_object_del(json_object_get(summary, "sim"), "wall_s");
    json_t *headline;
    if (r->result) { /* the figures of the typed result */
      out__headline h;
      out__headline_of_result(&h, r->result);
      headline = out__headline_json(&h);
      out__headline_free(&h);
    } else {
      headline = out_headline(summary);
    }
    json_t *data =
        out__report_data(summary, headline, r->scenario_yaml, r->tel, &s, &r->names, r->top_ports);
    json_decref(summary);
    rc = out__report_write(data, r->dir, title, err);
    json_decref(data);
  }
  if (rc == SIM_OK && db) {
    out__db_run dr = {.summary = r->summary,
                      .scenario_yaml = r->scenario_yaml,
                      .started_at = r->started_at ? r->started_at : "",
                      .dir = r->dir,
                      .sweep = r->sweep,
                      .point = r->point,
                      .complete = r->complete && !r->failed,
                      .flows = r->flows,
                      .t = r->t};
    int64_t id = 0;
    if ((rc = sim_mkdirs(r->dir, err)) == SIM_OK)
      rc = out__db_append(db, &dr, &s, r->tel, &r->names, r->top_ports, &id, err);
  }
  sim_free(db);
  out__series_free(&s);
  return rc;
}

static const char *port_name_cb(void *ctx, uint32_t port, char *buf, size_t n) {
  const run_result *r = ctx;
  if (r->ports) return tel_port_name(r->t, r->ports, port, buf, n);
  snprintf(buf, n, "port%u", port);
  return buf;
}

static const char *nic_name_cb(void *ctx, uint32_t nic, char *buf, size_t n) {
  (void)ctx;
  snprintf(buf, n, "nic%u", nic);
  return buf;
}

int out_run_files(const run_result *r, const json_t *summary, sim_error *err) {
  const cfg_scenario *cfg = r->cfg;
  const run_provenance *p = &r->provenance;
  char *dump = cfg_dump(cfg);
  char path[4096];
  snprintf(path, sizeof path, "%s/scenario.yaml", cfg->output.dir);
  out_run o = {.summary = summary,
               .scenario_yaml = dump,
               .tel = r->tel,
               .names = {.ctx = (void *)r, .port = port_name_cb, .nic = nic_name_cb},
               .complete = r->complete,
               .failed = r->w->failed,
               .dir = cfg->output.dir,
               .database = cfg->output.database,
               .report = cfg->output.report,
               .openmetrics = cfg->output.openmetrics,
               .top_ports = cfg->output.top_ports,
               .started_at = p->started_at,
               .sweep = p->sweep,
               .point = p->point,
               .flows = &r->flows,
               .t = r->t,
               .result = r};
  if (cfg->power.timeseries) /* a training job's model, else the run's */
    o.power = r->kind == RUN_KIND_TRAINING ? &r->training.power : r->have_power ? &r->power : NULL;
  int rc = out_write_run(&o, err);
  if (rc == SIM_OK) rc = out_write_json(summary, cfg->output.dir, "summary.json", err);
  if (rc == SIM_OK) rc = sim_write_file_atomic(path, dump, strlen(dump), err);
  sim_free(dump);
  return rc;
}

int out_run_report(const run_result *r, out_print how, sim_error *err) {
  json_t *summary = out_run_summary(r);
  int rc = out_run_files(r, summary, err);
  if (rc == SIM_OK && how == OUT_PRINT_JSON) {
    char *text = out_json_text(summary);
    puts(text);
    free(text);
  } else if (rc == SIM_OK && how == OUT_PRINT_TEXT) {
    out_run_print(r, r->cfg->output.dir);
  }
  json_decref(summary);
  return rc;
}
