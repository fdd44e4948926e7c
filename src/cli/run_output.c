/* fabsim run: the files after the run, from the run layer's telemetry
 * (run_telemetry_make) and the summary, through out_write_run. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/run_output.h"

static const char *port_name_cb(void *ctx, uint32_t port, char *buf, size_t n) {
  const cli_run_output *o = ctx;
  return tel_port_name(o->s->t, &o->s->tel.ports, port, buf, n);
}

static const char *nic_name_cb(void *ctx, uint32_t nic, char *buf, size_t n) {
  (void)ctx;
  snprintf(buf, n, "nic%u", nic);
  return buf;
}

void cli_run_output_begin(cli_run_output *o, const run_setup *s) {
  memset(o, 0, sizeof *o);
  o->s = s;
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(o->started_at, sizeof o->started_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int cli_run_output_telemetry(cli_run_output *o, const run_events *log, bool *complete,
                             sim_error *err) {
  return run_telemetry_make(&o->tel, o->s, log, complete, err);
}

int cli_run_output_write(cli_run_output *o, json_t *summary, const char *scenario_yaml,
                         bool complete, bool failed, sim_error *err) {
  const cfg_scenario *cfg = &o->s->cfg;
  out_run r = {.summary = summary,
               .scenario_yaml = scenario_yaml,
               .tel = o->tel,
               .names = {.ctx = o, .port = port_name_cb, .nic = nic_name_cb},
               .complete = complete,
               .failed = failed,
               .dir = cfg->output.dir,
               .database = cfg->output.database,
               .report = cfg->output.report,
               .openmetrics = cfg->output.openmetrics,
               .top_ports = cfg->output.top_ports,
               .started_at = o->started_at};
  return out_write_run(&r, err);
}

void cli_run_output_free(cli_run_output *o) {
  tel_destroy(o->tel);
  memset(o, 0, sizeof *o);
}
