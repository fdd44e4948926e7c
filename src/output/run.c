/* out_write_run: every file a run leaves, and its row in the database. */
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

static int write_file(out__buf *b, const out_run *r, const char *name, json_t *files,
                      sim_error *err) {
  int rc = out__write(b, r->dir, name, err);
  if (rc == SIM_OK) json_array_append_new(files, json_string(name));
  return rc;
}

static json_t *telemetry_json(const tel *t) {
  json_t *o = json_object();
  json_object_set_new(o, "interval_s", json_real((double)tel_interval(t) / 1e12));
  if (tel_interval_requested(t)) /* widened to fit output.max_rows (only then: as before) */
    json_object_set_new(o, "interval_requested_s",
                        json_real((double)tel_interval_requested(t) / 1e12));
  json_object_set_new(o, "samples", json_integer((json_int_t)tel_rows(t)));
  json_object_set_new(o, "truncated", json_boolean(tel_truncated(t)));
  json_object_set_new(o, "events", json_integer((json_int_t)tel_event_count(t)));
  tel_totals tot;
  tel_totals_get(t, &tot);
  unsigned obs = tel_observed(t);
  if (obs & TEL_OBS_NIC) {
    json_object_set_new(o, "nic_tx_bytes", json_real(tot.nic_bytes[TEL_TX]));
    json_object_set_new(o, "nic_rx_bytes", json_real(tot.nic_bytes[TEL_RX]));
  }
  if (obs & TEL_OBS_GPU) {
    json_t *g = json_object();
    for (int k = 0; k < TEL_GPU_NSTATES; k++)
      json_object_set_new(g, tel_gpu_state_name((tel_gpu_state)k), json_real(tot.gpu_frac[k]));
    json_object_set_new(o, "gpu_time_share", g);
  }
  return o;
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
  out__series_build(&s, r->tel, &r->names);
  json_t *files = json_array();
  char *db = out_database_path(r->dir, r->database);
  /* complete: the job ran to its end and succeeded; outcome says which of
   * done, failed (the job's fault: its summary says why) or stopped (Ctrl-C) */
  json_object_set_new(r->summary, "complete", json_boolean(r->complete && !r->failed));
  json_object_set_new(r->summary, "outcome",
                      json_string(r->failed     ? "failed"
                                  : r->complete ? "done"
                                                : "stopped"));
  if (r->tel) json_object_set_new(r->summary, "telemetry", telemetry_json(r->tel));
  /* Files first (so "files" in the summary lists what exists), then the database. */
  out__buf b = {0};
  out__timeseries_csv(&b, &s);
  rc = write_file(&b, r, "timeseries.csv", files, err);
  b.len = 0;               /* (a buffer marked nonfinite stopped the run's files above) */
  sim_test_pause("write"); /* tests: one file written, the others not */
  if (rc == SIM_OK) {
    out__events_csv(&b, r->tel);
    rc = write_file(&b, r, "events.csv", files, err);
    b.len = 0;
  }
  if (rc == SIM_OK && r->openmetrics) {
    out__openmetrics(&b, r->summary, r->tel);
    rc = write_file(&b, r, "metrics.txt", files, err);
    b.len = 0;
  }
  out__buf_free(&b);
  json_array_append_new(files, json_string("summary.json"));
  json_array_append_new(files, json_string("scenario.yaml"));
  if (r->report) json_array_append_new(files, json_string("report.html"));
  json_object_set_new(r->summary, "files", files);
  json_object_set_new(r->summary, "database", db ? json_string(r->database) : json_null());
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
    json_t *data = out__report_data(summary, r->scenario_yaml, r->tel, &s, &r->names, r->top_ports);
    json_decref(summary);
    rc = out__report_write(data, r->dir, title, err);
    json_decref(data);
  }
  if (rc == SIM_OK && db) {
    out__db_run dr = {.summary = r->summary,
                      .scenario_yaml = r->scenario_yaml,
                      .started_at = r->started_at ? r->started_at : "",
                      .dir = r->dir,
                      .sweep = getenv("FABSIM_SWEEP"),
                      .point = getenv("FABSIM_SWEEP_POINT"),
                      .complete = r->complete && !r->failed};
    int64_t id = 0;
    if ((rc = sim_mkdirs(r->dir, err)) == SIM_OK)
      rc = out__db_append(db, &dr, &s, r->tel, &r->names, r->top_ports, &id, err);
  }
  sim_free(db);
  out__series_free(&s);
  return rc;
}
