/* The telemetry around a run. Before it: the watched ports and NICs
 * (output.ports, checked against the topology, errors located at the key)
 * and the telemetry tap around the backend, so every phase of any workload
 * is logged. After it: the tel, with output.sample_interval or about 500
 * samples over the run's real length; the tap's replay (at the packet
 * fidelity the switch ports come from the backend's own samples instead:
 * real queues and pauses, fabsim/tel_tap.h); the workload's events and the
 * run's event log. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run/run_internal.h"

/* expected / 500, rounded down to 1, 2 or 5 x 10^k ps, at least 1 ns. */
static simtime_ps auto_interval(simtime_ps expected) {
  simtime_ps want = expected / 500, step = SIM_PS_PER_NS;
  if (want <= SIM_PS_PER_NS) return SIM_PS_PER_NS;
  while (step <= want / 10) step *= 10;
  if (5 * step <= want) return 5 * step;
  if (2 * step <= want) return 2 * step;
  return step;
}

/* output.ports: "none" or comma-separated port and NIC names. */
static int parse_watch(run_telemetry *o, const topo *t, const cfg_scenario *cfg, const cfg_doc *doc,
                       sim_error *err) {
  const char *s = cfg->output.ports;
  if (!strcmp(s, "none")) return SIM_OK;
  size_t n = strlen(s);
  o->watch_ports = sim_malloc((n + 1) * sizeof *o->watch_ports);
  o->watch_nics = sim_malloc((n + 1) * sizeof *o->watch_nics);
  char item[128];
  for (const char *p = s; *p;) {
    size_t len = strcspn(p, ",");
    const char *q = p;
    while (len && (*q == ' ')) q++, len--;
    while (len && q[len - 1] == ' ') len--;
    if (len == 0 || len >= sizeof item)
      return cfg_fail_at(doc, "output.ports", err,
                         "'%s' has an empty or overlong entry; allowed: none, or names such as "
                         "leaf0-spine0,nic3 separated by commas",
                         s);
    memcpy(item, q, len);
    item[len] = '\0';
    uint32_t id, v;
    bool twice = false;
    if (tel_port_find(t, &o->ports, item, &id) == SIM_OK) {
      for (size_t i = 0; i < o->nwatch_ports; i++) twice |= o->watch_ports[i] == id;
      o->watch_ports[o->nwatch_ports++] = id;
    } else if (topo_find_vertex(t, item, &v) == SIM_OK && topo_vertex_at(t, v)->kind == TOPO_NIC &&
               topo_vertex_at(t, v)->index < topo_nic_count(t)) { /* (not a storage server's) */
      uint32_t nic = topo_vertex_at(t, v)->index;
      for (size_t i = 0; i < o->nwatch_nics; i++) twice |= o->watch_nics[i] == nic;
      o->watch_nics[o->nwatch_nics++] = nic;
    } else {
      uint32_t p0 = o->ports.nports ? 0 : UINT32_MAX;
      char example[96] = "leaf0-spine0";
      if (p0 != UINT32_MAX) tel_port_name(t, &o->ports, p0, example, sizeof example);
      return cfg_fail_at(doc, "output.ports", err,
                         "'%s' is neither a switch port nor a NIC of this topology; a port is "
                         "SWITCH-PEER (e.g. %s: the port of the first toward the second), a NIC "
                         "nicN; `fabsim topo --dot -` lists the names",
                         item, example);
    }
    if (twice) /* each watched port is one column of timeseries.csv and one series row */
      return cfg_fail_at(doc, "output.ports", err,
                         "'%s' names %s twice; allowed: each port or NIC once", s, item);
    p += strcspn(p, ",");
    if (*p == ',') p++;
  }
  return SIM_OK;
}

int run__telemetry_begin(run_telemetry *o, be_backend **be, const cfg_scenario *cfg,
                         const cfg_doc *doc, const topo *t, sim_error *err) {
  memset(o, 0, sizeof *o);
  tel_portmap_build(&o->ports, t);
  int rc = parse_watch(o, t, cfg, doc, err);
  if (rc != SIM_OK) return rc;
  *be = tel_tap_wrap(*be, &o->tap);
  if (cfg->output.flows) tel_tap_flows_keep(o->tap, cfg->output.max_flows);
  /* a fidelity with per-port telemetry (packet): real queue depths, pauses, marks, utilization */
  if (tel_port_sampling_start(*be, &o->ports, o->watch_ports, o->nwatch_ports) == SIM_OK)
    o->port_samples = *be;
  return SIM_OK;
}

void run__telemetry_free(run_telemetry *o) {
  tel_portmap_free(&o->ports);
  sim_free(o->watch_ports);
  sim_free(o->watch_nics);
  memset(o, 0, sizeof *o);
}

static void workload_events(tel *tl, const coll_exec *exec, const cfg_scenario *cfg) {
  char what[160];
  if (cfg->workload.kind == CFG_WORKLOAD_COLLECTIVE)
    snprintf(what, sizeof what, "%s of %llu bytes over %u ranks", cfg_coll_op_name(exec->plan->op),
             (unsigned long long)exec->plan->bytes, exec->plan->nranks);
  else
    snprintf(what, sizeof what, "%s traffic, %llu flows",
             cfg_traffic_pattern_name(cfg->workload.traffic.pattern),
             (unsigned long long)coll_plan_flows(exec->plan));
  tel_event(tl, exec->start, "job", "workload-start", what, NAN);
  if (exec->finished)
    tel_event(tl, exec->end, "job", "workload-end", "finished",
              sim_ps_to_s(exec->end - exec->start));
}

/* A training job of a jobs: list: its steps' start and end, and how its
 * collectives were timed when not on the run's fabric. */
static void train_events(tel *tl, const run_job *job) {
  char what[320];
  uint32_t n = wl_job_steps_done(job->train);
  if (!n) return;
  const wl_step *first = wl_job_step(job->train, 0), *last = wl_job_step(job->train, n - 1);
  snprintf(what, sizeof what, "%s: training, %u step%s over %u GPUs", job->cfg->name,
           job->view.workload.steps, job->view.workload.steps == 1 ? "" : "s", job->cfg->gpus);
  tel_event(tl, first->start_ps, "job", "workload-start", what, NAN);
  if (first->comm_model != CFG_COMM_LIVE) {
    snprintf(what, sizeof what,
             "%s shares no link with another job: its collectives were timed once each on a "
             "fresh backend of the fabric (comm_model %s), so the fabric's series of this run do "
             "not show its traffic",
             job->cfg->name, cfg_comm_model_name(first->comm_model));
    tel_event(tl, first->start_ps, "job", "note", what, NAN);
  }
  if (job->finished)
    tel_event(tl, last->end_ps, "job", "workload-end", job->cfg->name,
              sim_ps_to_s(last->end_ps - first->start_ps));
}

/* Each job of a jobs: list: its collective's (or steps') start and end, named. */
static void jobs_events(tel *tl, const run_jobs *js) {
  char what[200];
  for (uint32_t j = 0; j < js->n; j++) {
    const run_job *job = &js->v[j];
    if (job->train) train_events(tl, job);
    if (!job->exec.plan) continue; /* training, or not started: the run stopped before */
    if (job->cfg->workload.kind == CFG_WORKLOAD_TRAFFIC)
      snprintf(what, sizeof what, "%s: %s traffic, %llu flows", job->cfg->name,
               cfg_traffic_pattern_name(job->cfg->workload.traffic.pattern),
               (unsigned long long)coll_plan_flows(&job->plan));
    else
      snprintf(what, sizeof what, "%s: %s of %llu bytes over %u ranks", job->cfg->name,
               cfg_coll_op_name(job->plan.op), (unsigned long long)job->plan.bytes,
               job->plan.nranks);
    tel_event(tl, job->exec.start, "job", "workload-start", what, NAN);
    if (job->exec.finished)
      tel_event(tl, job->exec.end, "job", "workload-end", job->cfg->name,
                sim_ps_to_s(job->exec.end - job->exec.start));
  }
}

/* A NIC's line rate in the line-rate invariant: the modelled rate of its
 * link into the fabric (cluster.nic.bandwidth x its efficiency, what every
 * fidelity lets it move; a port's is its link's, tel_portmap), never the
 * raw bandwidth: one bound for the two ends of a link. The compute NICs
 * are alike: NIC 0's. */
static rate_bps nic_line_bps(const topo *t, rate_bps raw) {
  if (topo_nic_count(t) == 0) return raw;
  uint32_t v = topo_nic_vertex(t, 0);
  rate_bps most = 0;
  for (uint32_t l = 0; l < topo_link_count(t); l++) {
    const topo_link *k = topo_link_at(t, l);
    if (k->kind == TOPO_LINK_ENDPOINT && (k->a == v || k->b == v) && k->bps > most) most = k->bps;
  }
  return most ? most : raw;
}

/* A row offered more than its line rate at the analytic fidelity, carried
 * on (tel_config.carry): a warning in the log and events.csv. That
 * fidelity times each operation alone (transfers of one operation share
 * links, operations in flight together do not), so two that overlap on a
 * link can ask more than it carries; the series show the link at its line
 * rate, the excess queued into the next rows, and the step time does not
 * include the wait. */
static void carry_warning(tel *tl, const run_setup *s, run_events *log) {
  tel_over o;
  double left;
  if (!tel_line_carried(tl, &o, &left)) return;
  char name[96], detail[640], tail[160] = "";
  if (o.port) tel_port_name(s->t, &s->tel.ports, o.entity, name, sizeof name);
  else snprintf(name, sizeof name, "nic%u (%s)", o.entity, o.dir == TEL_RX ? "rx" : "tx");
  if (left > 0)
    snprintf(tail, sizeof tail, "; %.6g bytes were still queued at the end, not in the series",
             left);
  snprintf(detail, sizeof detail,
           "%s was offered %.6g Gb/s in the row at %.6g s, above its line rate of %.6g Gb/s: "
           "operations in flight together share no link at the analytic fidelity, so the series "
           "show it at its line rate with the excess queued into the next rows%s; the step time "
           "does not include that contention (--set simulation.fidelity=flow models it)",
           name, o.gbps, sim_ps_to_s(o.at), o.line, tail);
  /* in time order, after output.max_events capped the log (kept past it) */
  run_event_insert(log, o.at, "telemetry", "warning", detail);
  tel_event(tl, o.at, "telemetry", "warning", detail, NAN);
}

int run_telemetry_make(tel **out, const run_setup *s, run_events *log, bool *complete,
                       sim_error *err) {
  const run_telemetry *o = &s->tel;
  const cfg_scenario *cfg = &s->cfg;
  const topo *t = s->t;
  simtime_ps end = sim_now(s->sim);
  simtime_ps want = cfg->output.sample_interval ? cfg->output.sample_interval : auto_interval(end);
  /* at most output.max_rows rows, whatever was asked: sampling costs what
   * the rows cost, not what the clock spans at the interval asked for */
  simtime_ps interval = tel_interval_fit(end, want, cfg->output.max_rows);
  tel_config tc = {.interval = interval,
                   .requested = interval != want ? want : 0,
                   .gpus = topo_gpu_count(t),
                   .nics = topo_nic_count(t),
                   .ports = o->ports.nports,
                   .nic_bps = cfg->cluster.nic.bandwidth,
                   .port_bps = o->ports.bps,
                   .watch_ports = o->watch_ports,
                   .nwatch_ports = o->nwatch_ports,
                   .watch_nics = o->watch_nics,
                   .nwatch_nics = o->nwatch_nics,
                   .max_rows = cfg->output.max_rows,
                   .nic_line_bps = nic_line_bps(t, cfg->cluster.nic.bandwidth),
                   /* series spread phase by phase (the tap; at the packet fidelity the
                    * ports are the backend's own samples); only the analytic fidelity
                    * lets a backlog outlive the run (a real excess, said in a warning):
                    * elsewhere links are shared, and what is left is a bug */
                   .carry = TEL_CARRY_NICS | (o->port_samples ? 0 : TEL_CARRY_PORTS),
                   .carry_may_remain = cfg->simulation.fidelity == CFG_FIDELITY_ANALYTIC};
  *out = NULL;
  int rc = tel_create(out, &tc, err);
  if (rc != SIM_OK) return rc;
  tel *tl = *out;
  if (interval != want) { /* said in the files: summary.json and events.csv */
    char what[320], a[32], b[32];
    if (want < SIM_PS_PER_NS) snprintf(a, sizeof a, "%llu ps", (unsigned long long)want);
    else sim_fmt_seconds(a, sizeof a, sim_ps_to_s(want));
    sim_fmt_seconds(b, sizeof b, sim_ps_to_s(interval));
    double rows = ceil((double)end / (double)want);
    snprintf(what, sizeof what,
             "a sample interval of %s would give %.4g rows over the run's %.6g s: the rows are "
             "every %s instead, at most output.max_rows (%u); raise it for finer rows",
             a, rows, sim_ps_to_s(end), b, cfg->output.max_rows);
    tel_event(tl, 0, "telemetry", "interval-widened", what, sim_ps_to_s(interval));
  }
  /* GPU states from the phases only where nothing else runs on the GPUs:
   * a training step's compute is not in the phase log (with training jobs in
   * jobs:, the GPU series are the training jobs' alone) */
  bool synthetic = (cfg->workload.kind == CFG_WORKLOAD_COLLECTIVE ||
                    cfg->workload.kind == CFG_WORKLOAD_TRAFFIC) &&
                   !run_jobs_training(&s->jobs);
  if (s->jobs.n) jobs_events(tl, &s->jobs);
  else if (synthetic) workload_events(tl, &s->w.exec, cfg);
  if (o->port_samples) { /* ports from the backend's samples; the tap feeds NICs and GPUs only */
    tel_portmap none = o->ports;
    uint32_t nch = 2 * topo_link_count(t);
    none.nports = 0;
    none.port_of_channel = sim_malloc((nch ? nch : 1) * sizeof *none.port_of_channel);
    for (uint32_t c = 0; c < nch; c++) none.port_of_channel[c] = UINT32_MAX;
    tel_tap_replay(o->tap, tl, &none, synthetic ? TEL_TAP_GPUS : 0);
    sim_free(none.port_of_channel);
    tel_port_samples_replay(o->port_samples, tl, end);
  } else {
    tel_tap_replay(o->tap, tl, &o->ports, synthetic ? TEL_TAP_GPUS : 0);
  }
  if (s->training) run_job_gpu_series(tl, s->tr.job, end);
  if (run_jobs_training(&s->jobs)) {
    const wl_job **trains = sim_malloc(s->jobs.n * sizeof *trains);
    uint32_t n = 0;
    for (uint32_t j = 0; j < s->jobs.n; j++)
      if (s->jobs.v[j].train) trains[n++] = s->jobs.v[j].train;
    run_jobs_gpu_series(tl, trains, n, end);
    sim_free(trains);
  }
  /* the summary's event log (faults, throttling, stragglers, root cause)
   * goes to events.csv and the database too: one log, in integer picoseconds */
  for (size_t i = 0; i < log->n; i++)
    tel_event(tl, log->v[i].at, log->v[i].component, log->v[i].kind, log->v[i].detail, NAN);
  bool said = false; /* a phase that stopped says so itself (the log's "stopped") */
  for (size_t i = 0; i < log->n && !said; i++) said = !strcmp(log->v[i].kind, "stopped");
  if (!*complete && !said)
    tel_event(tl, end, "job", "stopped",
              "stopped before the end (Ctrl-C); figures cover the time reached", sim_ps_to_s(end));
  else if (*complete && sim_interrupt_pending()) { /* Ctrl-C during the replay: honoured, marked */
    *complete = false;
    tel_event(tl, end, "job", "stopped",
              "stopped (Ctrl-C) after the simulation had ended; its figures cover the whole run",
              sim_ps_to_s(end));
  }
  tel_close_rows(tl, end);
  if (cfg->simulation.fidelity == CFG_FIDELITY_ANALYTIC) carry_warning(tl, s, log);
  tel_finish(tl, end);
  return SIM_OK;
}
