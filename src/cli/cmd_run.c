/* fabsim run: simulate a scenario's workload and report what it measured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/run_output.h"
#include "cli/run_print.h"
#include "fabsim/backend.h"
#include "fabsim/calib.h"
#include "fabsim/coll.h"
#include "fabsim/fault.h"
#include "fabsim/pdes.h"
#include "fabsim/trace.h"
#include "fabsim/out.h"
#include "net/net_tel.h"

static const char run_help[] =
    "usage: fabsim run [SCENARIO.yaml] [--set KEY=VALUE]... [--json] [--quiet]\n"
    "\n"
    "Simulate the scenario's workload (workload.kind: a collective, synthetic\n"
    "traffic, a training step or Chakra execution traces) on its cluster at the\n"
    "chosen fidelity\n"
    "(simulation.fidelity: analytic, flow or packet) and print a summary.\n"
    "\n"
    "  SCENARIO.yaml      scenario file (optional: every key has a default)\n"
    "  --set KEY=VALUE    override one key, after the file (repeatable)\n"
    "  --json             print the summary JSON instead of the table\n"
    "  --quiet, -q        print nothing (no progress line either); only write the files\n"
    "\n"
    "Files, in output.dir (default fabsim-out), each written whole or not at all:\n"
    "  summary.json     every figure; \"complete\": false when stopped early\n"
    "  scenario.yaml    the fully resolved scenario (re-run it: same result)\n"
    "  timeseries.csv   one row per output.sample_interval (default: about 500\n"
    "                   rows): GPU states, NIC throughput (total, p50, p99, max),\n"
    "                   switch ports (utilization, queues, ECN, PFC pause where the\n"
    "                   fidelity has them), and every port or NIC in output.ports\n"
    "  events.csv       time, component, kind, effect, value\n"
    "  report.html      one self-contained page of charts (output.report)\n"
    "  results.sqlite   tables runs, metrics, series, timeseries, events, hot_ports;\n"
    "                   output.database names another file to share it between runs\n"
    "  metrics.txt      the final figures as OpenMetrics text (output.openmetrics)\n"
    "\n"
    "Faults (the scenario's faults: list, power.rack.cooling_failure) act during\n"
    "the run; a training run (workload.steps steps) is also simulated without\n"
    "them, and summary.json gains events, steps, root_cause (each slow step's\n"
    "extra time by the component that caused it), failure, sdc and power.\n"
    "\n"
    "While it runs, a progress line on stderr (simulated time, percent of the\n"
    "expected length, events/s, ETA) when stderr is a terminal. Ctrl-C stops the\n"
    "run cleanly: the files are finished, cover the simulated time reached and say\n"
    "\"complete\": false; a second Ctrl-C kills at once.\n"
    "\n"
    "Parallel: mpirun -np N fabsim run ... runs the packet fidelity over N MPI ranks\n"
    "(simulation.engine: auto, the default, or parallel); rank 0 alone prints and\n"
    "writes, the files equal those of --set simulation.engine=parallel on one\n"
    "process, and summary.json's sim.parallel says how the ranks shared the work.\n"
    "\n"
    "Exit status: 0 done, 1 the run failed (e.g. cannot write output), 2 bad input\n"
    "(or output.dir in use by another run), 3 out of memory, 4 the simulated job\n"
    "failed (a transfer lost, a GPU or node down: summary.json's \"outcome\" is\n"
    "\"failed\" and \"failure\" says why), 130 stopped by Ctrl-C.\n"
    "Example: fabsim run examples/default.yaml --set workload.collective.size=256MiB\n";

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* What the verb prints and writes: the run layer's results and the run's
 * counters. */
typedef struct run_result {
  run_workload w; /* plan, result, outcome (collective, traffic, traces; training: outcome) */
  be_stats net;
  uint64_t events;
  double sim_time_s, wall_s;
  run_events log;  /* the summary's "events", events.csv, the database's events */
  run_power power; /* collective and traffic runs (training: the job's, in its result) */
  pwr_model pm;    /* power's model */
  bool have_power;
  be_parallel_info par; /* the parallel engine's partition and effort; ranks 0: not on it */
} run_result;

/* The failure object of a collective or traffic run: what broke first. */
static json_t *failure_json(const run_result *r) {
  json_t *f = json_object();
  json_object_set_new(f, "kind", json_string("transfer-failed"));
  json_object_set_new(f, "transfers_failed", json_integer((json_int_t)r->w.failures));
  if (r->w.have_first) {
    char comp[32];
    snprintf(comp, sizeof comp, "gpu%u", r->w.first.src_gpu);
    json_object_set_new(f, "at_s", json_real(sim_ps_to_s(r->w.first.at)));
    json_object_set_new(f, "component", json_string(comp));
    json_object_set_new(f, "dst_gpu", json_integer(r->w.first.dst_gpu));
    json_object_set_new(f, "cause", json_string(r->w.first.cause ? r->w.first.cause : "unknown"));
  }
  return f;
}

/* A counter the fidelity observed, or null: the analytic and flow models have
 * no queues, so they report no pauses or drops rather than zero. */
static json_t *observed_int(const be_stats *st, unsigned what, uint64_t v) {
  return (st->observed & what) ? json_integer((json_int_t)v) : json_null();
}

static json_t *network_json(const be_stats *st) {
  json_t *n = json_object();
  json_object_set_new(n, "transfers", json_integer((json_int_t)st->transfers));
  json_object_set_new(n, "transfers_failed", json_integer((json_int_t)st->transfers_failed));
  json_object_set_new(n, "flows_rerouted", json_integer((json_int_t)st->flows_rerouted));
  json_object_set_new(n, "bytes", json_integer((json_int_t)st->bytes));
  json_object_set_new(n, "max_link_sharing", json_integer(st->max_link_sharing));
  json_object_set_new(n, "packets", observed_int(st, BE_OBS_PACKETS, st->packets));
  json_object_set_new(n, "ecn_marks", observed_int(st, BE_OBS_PACKETS, st->ecn_marks));
  json_object_set_new(n, "cnps", observed_int(st, BE_OBS_PACKETS, st->cnps));
  json_object_set_new(n, "pfc_pauses", observed_int(st, BE_OBS_PACKETS, st->pfc_pauses));
  json_object_set_new(
      n, "pfc_paused_s",
      (st->observed & BE_OBS_PACKETS) ? json_real(sim_ps_to_s(st->pfc_paused)) : json_null());
  json_object_set_new(n, "drops", observed_int(st, BE_OBS_PACKETS, st->drops));
  json_object_set_new(n, "retransmits", observed_int(st, BE_OBS_PACKETS, st->retransmits));
  json_object_set_new(n, "out_of_order", observed_int(st, BE_OBS_PACKETS, st->out_of_order));
  json_object_set_new(n, "max_queue_bytes", observed_int(st, BE_OBS_PACKETS, st->max_queue_bytes));
  json_object_set_new(
      n, "link_utilization_max",
      (st->observed & BE_OBS_PACKETS) ? json_real(st->link_utilization_max) : json_null());
  if (st->observed & BE_OBS_FCT) {
    json_t *f = json_object();
    json_object_set_new(f, "p50", json_real(sim_ps_to_s(st->fct_p50) * 1e6));
    json_object_set_new(f, "p99", json_real(sim_ps_to_s(st->fct_p99) * 1e6));
    json_object_set_new(f, "p999", json_real(sim_ps_to_s(st->fct_p999) * 1e6));
    json_object_set_new(f, "max", json_real(sim_ps_to_s(st->fct_max) * 1e6));
    json_object_set_new(f, "mean", json_real(st->fct_mean_s * 1e6));
    json_object_set_new(n, "fct_us", f);
  } else {
    json_object_set_new(n, "fct_us", json_null());
  }
  return n;
}

/* Bytes a traffic run delivered: every flow's when it ran to its end, else
 * what the backend delivered (transfers completed) before the stop. */
static double traffic_bytes(const run_result *r) {
  if (!r->w.failed && !r->w.stopped)
    return (double)r->w.plan.bytes * (double)coll_plan_flows(&r->w.plan);
  return (double)r->net.bytes;
}

static json_t *summary_json(const cli_args *a, const cfg_scenario *cfg, const topo *t,
                            const run_result *r) {
  json_t *o = json_object();
  json_object_set_new(o, "fabsim_version", json_string(FABSIM_VERSION));
  json_object_set_new(o, "scenario", cli_scenario_json(a, cfg));
  json_object_set_new(o, "fidelity", json_string(cfg_fidelity_name(cfg->simulation.fidelity)));
  json_object_set_new(o, "gpus", json_integer(topo_gpu_count(t)));
  json_object_set_new(o, "nodes", json_integer(topo_node_count(t)));
  json_object_set_new(o, "topology", cli_topo_json(t, cfg));
  if (cfg->workload.kind == CFG_WORKLOAD_COLLECTIVE) {
    json_t *colls = json_array();
    json_t *c = json_object();
    json_object_set_new(c, "op", json_string(cfg_coll_op_name(r->w.plan.op)));
    json_object_set_new(c, "algorithm", json_string(cfg_coll_algorithm_name(r->w.plan.algorithm)));
    json_object_set_new(c, "bytes", json_integer((json_int_t)r->w.plan.bytes));
    json_object_set_new(c, "ranks", json_integer(r->w.plan.nranks));
    json_object_set_new(c, "channels", json_integer(r->w.plan.channels));
    json_object_set_new(c, "protocol", json_string(cfg_coll_protocol_name(r->w.plan.protocol)));
    json_object_set_new(c, "qps_per_connection", json_integer(r->w.plan.qps));
    json_object_set_new(c, "transfers", json_integer((json_int_t)coll_plan_transfers(&r->w.plan)));
    /* a collective that failed or was stopped has no time and no bandwidth:
     * what was delivered, over the time it took, instead */
    bool whole = !r->w.failed && !r->w.stopped;
    json_object_set_new(c, "time_s", whole ? json_real(r->w.res.time_s) : json_null());
    json_object_set_new(c, "algbw_GBps", whole ? json_real(r->w.res.algbw_GBps) : json_null());
    json_object_set_new(c, "busbw_GBps", whole ? json_real(r->w.res.busbw_GBps) : json_null());
    json_object_set_new(c, "elapsed_s", json_real(r->w.res.time_s));
    json_object_set_new(c, "delivered_bytes", json_integer((json_int_t)r->net.bytes));
    json_array_append_new(colls, c);
    json_object_set_new(o, "collectives", colls);
  } else if (cfg->workload.kind == CFG_WORKLOAD_TRAINING) {
    /* step, steps, failure, sdc, root_cause, power: cli_training_summary */
  } else if (cfg->workload.kind == CFG_WORKLOAD_TRACE) {
    json_object_set_new(o, "trace", trc_result_json(&r->w.trace, r->w.trace_set, cfg));
  } else {
    json_t *tr = json_object();
    json_object_set_new(tr, "pattern",
                        json_string(cfg_traffic_pattern_name(cfg->workload.traffic.pattern)));
    json_object_set_new(tr, "flows", json_integer((json_int_t)coll_plan_flows(&r->w.plan)));
    json_object_set_new(tr, "bytes_per_flow", json_integer((json_int_t)r->w.plan.bytes));
    json_object_set_new(tr, "qps_per_connection", json_integer(r->w.plan.qps));
    json_object_set_new(tr, "staggered", json_boolean(r->w.plan.stagger > 0));
    json_object_set_new(tr, "time_s", json_real(r->w.res.time_s));
    /* what was delivered over the time it took (stopped or failed: part of it) */
    double total = traffic_bytes(r);
    json_object_set_new(tr, "delivered_bytes", json_integer((json_int_t)total));
    json_object_set_new(tr, "throughput_Gbps",
                        json_real(r->w.res.time_s > 0 ? total * 8 / r->w.res.time_s / 1e9 : 0));
    if (cfg->workload.traffic.pattern == CFG_TRAFFIC_PAIR)
      json_object_set_new(tr, "latency_us", json_real(r->w.pair_latency_s * 1e6));
    json_object_set_new(o, "traffic", tr);
  }
  if (cfg->workload.kind != CFG_WORKLOAD_TRAINING) /* training: cli_training_summary */
    json_object_set_new(o, "failure", r->w.failed ? failure_json(r) : json_null());
  json_object_set_new(o, "network", network_json(&r->net));
  if (r->have_power) json_object_set_new(o, "power", cli_power_json(&r->power));
  json_object_set_new(o, "events", cli_events_json(&r->log));
  json_t *sim = json_object();
  json_object_set_new(sim, "events", json_integer((json_int_t)r->events));
  json_object_set_new(sim, "sim_time_s", json_real(r->sim_time_s));
  json_object_set_new(sim, "wall_s", json_real(r->wall_s)); /* the only wall-clock field */
  if (r->par.ranks) { /* how it ran: varies with the rank count, the results do not */
    const be_parallel_info *p = &r->par;
    json_t *j = json_object();
    json_object_set_new(j, "ranks", json_integer(p->ranks));
    json_object_set_new(j, "partition", json_string(p->scheme));
    json_object_set_new(j, "cut_links", json_integer((json_int_t)p->cut_links));
    json_object_set_new(j, "lookahead_ns", json_real((double)p->lookahead / SIM_PS_PER_NS));
    json_object_set_new(j, "windows", json_integer((json_int_t)p->windows));
    json_object_set_new(j, "events_busiest_rank", json_integer((json_int_t)p->events_max));
    json_object_set_new(j, "crossing_frac", json_real(p->crossing_frac));
    json_object_set_new(j, "engine_wall_s", json_real(p->wall_max));
    json_object_set_new(j, "sync_wall_s", json_real(p->sync_max));
    json_object_set_new(sim, "parallel", j);
  }
  json_object_set_new(o, "sim", sim);
  return o;
}

static void print_summary(const cfg_scenario *cfg, const topo *t, const run_result *r,
                          const run_training_result *tres, const json_t *summary,
                          const char *written) {
  const topo_inventory *inv = topo_inventory_get(t);
  char a[64], b[64], c[64];
  printf("fabsim %s, %s fidelity, seed %llu\n", FABSIM_VERSION,
         cfg_fidelity_name(cfg->simulation.fidelity), (unsigned long long)cfg->simulation.seed);
  printf("cluster      %s nodes x %u %s = %s GPUs, %s NICs at %s\n",
         out_fmt_count(a, sizeof a, inv->nodes), cfg->cluster.gpus_per_node,
         cfg_gpu_name(cfg->cluster.gpu), out_fmt_count(b, sizeof b, inv->gpus),
         out_fmt_count(c, sizeof c, inv->endpoints),
         out_fmt_rate(c + 32, 32, cfg->cluster.nic.bandwidth));
  printf("fabric       %s, %u tiers, %u plane%s, radix %u, %s, %s switches, %s\n",
         cfg_topology_name(cfg->fabric.topology), inv->tiers, inv->planes,
         inv->planes == 1 ? "" : "s", cfg->fabric.switch_radix,
         cfg_transport_name(cfg->fabric.transport), out_fmt_count(a, sizeof a, inv->switches),
         out_fmt_usd(b, sizeof b, inv->cost_usd));
  if (cfg->workload.kind == CFG_WORKLOAD_COLLECTIVE) {
    printf("%-12s %s, %s over %u ranks, %u channel%s, protocol %s\n",
           cfg_coll_op_name(r->w.plan.op), cfg_coll_algorithm_name(r->w.plan.algorithm),
           out_fmt_bytes(a, sizeof a, r->w.plan.bytes), r->w.plan.nranks, r->w.plan.channels,
           r->w.plan.channels == 1 ? "" : "s", cfg_coll_protocol_name(r->w.plan.protocol));
    if (!r->w.failed && !r->w.stopped) {
      printf("  time       %s\n", out_fmt_seconds(a, sizeof a, r->w.res.time_s));
      printf("  algbw      %.2f GB/s\n", r->w.res.algbw_GBps);
      printf("  busbw      %.2f GB/s\n", r->w.res.busbw_GBps);
    } else { /* no bandwidth for a collective that did not complete */
      printf("  time       %s, %s: no time or bandwidth; %s delivered\n",
             out_fmt_seconds(a, sizeof a, r->w.res.time_s), r->w.failed ? "FAILED" : "stopped",
             out_fmt_bytes(b, sizeof b, r->net.bytes));
    }
  } else if (cfg->workload.kind == CFG_WORKLOAD_TRAINING) {
    if (json_object_get(summary, "step")) cli_training_print(json_object_get(summary, "step"));
    cli_training_text(tres);
  } else if (cfg->workload.kind == CFG_WORKLOAD_TRACE) {
    trc_result_print(stdout, &r->w.trace, r->w.trace_set);
  } else {
    uint64_t flows = coll_plan_flows(&r->w.plan);
    printf("traffic      %s, %s flows of %s%s\n",
           cfg_traffic_pattern_name(cfg->workload.traffic.pattern),
           out_fmt_count(a, sizeof a, flows), out_fmt_bytes(b, sizeof b, r->w.plan.bytes),
           r->w.plan.stagger ? ", staggered" : ", starting together");
    printf("  time       %s\n", out_fmt_seconds(a, sizeof a, r->w.res.time_s));
    double total = traffic_bytes(r);
    if (r->w.res.time_s > 0)
      printf("  throughput %s aggregate%s\n",
             out_fmt_rate(a, sizeof a, (uint64_t)(total * 8 / r->w.res.time_s)),
             r->w.failed || r->w.stopped ? " (delivered so far)" : "");
    if (cfg->workload.traffic.pattern == CFG_TRAFFIC_PAIR)
      printf("  latency    %s one-way, zero-byte\n",
             out_fmt_seconds(a, sizeof a, r->w.pair_latency_s));
  }
  if (r->net.observed & BE_OBS_FCT)
    printf("  fct        p50 %s, p99 %s, max %s\n",
           out_fmt_seconds(a, sizeof a, sim_ps_to_s(r->net.fct_p50)),
           out_fmt_seconds(b, sizeof b, sim_ps_to_s(r->net.fct_p99)),
           out_fmt_seconds(c, sizeof c, sim_ps_to_s(r->net.fct_max)));
  if (r->net.observed & BE_OBS_PACKETS) {
    printf("network      %s packets, %s ECN marks, %s CNPs, %s PFC pauses (%s paused)\n",
           out_fmt_count(a, sizeof a, r->net.packets), out_fmt_count(b, sizeof b, r->net.ecn_marks),
           out_fmt_count(c, sizeof c, r->net.cnps), out_fmt_count(c + 24, 24, r->net.pfc_pauses),
           out_fmt_seconds(c + 48, 16, sim_ps_to_s(r->net.pfc_paused)));
    printf("             %s drops, %s retransmits, max queue %s, busiest link %.0f%%\n",
           out_fmt_count(a, sizeof a, r->net.drops), out_fmt_count(b, sizeof b, r->net.retransmits),
           out_fmt_bytes(c, sizeof c, r->net.max_queue_bytes), r->net.link_utilization_max * 100);
  }
  if (r->w.failed && cfg->workload.kind != CFG_WORKLOAD_TRAINING) {
    printf("failure      %s transfer%s failed: the job failed",
           out_fmt_count(a, sizeof a, r->w.failures), r->w.failures == 1 ? "" : "s");
    if (r->w.have_first)
      printf(" (the first at %s: gpu%u->gpu%u, %s)",
             out_fmt_seconds(b, sizeof b, sim_ps_to_s(r->w.first.at)), r->w.first.src_gpu,
             r->w.first.dst_gpu, r->w.first.cause ? r->w.first.cause : "unknown");
    printf("\n");
  }
  if (cfg->workload.kind == CFG_WORKLOAD_TRAINING) cli_power_text(&tres->power);
  else if (r->have_power) cli_power_text(&r->power);
  cli_events_text(&r->log);
  printf("sim          %s events, %s transfers, wall %.3f s\n",
         out_fmt_count(a, sizeof a, r->events), out_fmt_count(b, sizeof b, r->net.transfers),
         r->wall_s);
  if (r->par.ranks) {
    const be_parallel_info *p = &r->par;
    printf(
        "parallel     %u rank%s (%s), %s of %s links cut, lookahead %g ns, %s windows, "
        "%.1f%% of events crossed ranks, %.0f%% of the engine's time in synchronization\n",
        p->ranks, p->ranks == 1 ? "" : "s", p->scheme, out_fmt_count(a, sizeof a, p->cut_links),
        out_fmt_count(b, sizeof b, p->links), (double)p->lookahead / SIM_PS_PER_NS,
        out_fmt_count(c, sizeof c, p->windows), 100.0 * p->crossing_frac,
        p->wall_max > 0 ? 100.0 * p->sync_max / p->wall_max : 0.0);
  }
  if (written)
    printf("written      %s/: summary.json, scenario.yaml, timeseries.csv, events.csv%s%s\n",
           written, cfg->output.report ? ", report.html" : "",
           strcmp(cfg->output.database, "none") ? ", results.sqlite" : "");
}

/* Every fault at or after the workload's end (`end`) had no effect: a
 * "fault-after-end" event each, and a warning located at its faults[i].at. */
static void warn_faults_after_end(const cfg_scenario *cfg, const cfg_doc *doc, simtime_ps end,
                                  run_events *log) {
  uint32_t *idx = sim_malloc((cfg->faults.n ? cfg->faults.n : 1) * sizeof *idx);
  const char **detail = sim_malloc((cfg->faults.n ? cfg->faults.n : 1) * sizeof *detail);
  size_t n = run_faults_after_end(cfg, end, log, idx, detail);
  for (size_t i = 0; i < n; i++) {
    char key[48];
    snprintf(key, sizeof key, "faults[%u].at", idx[i]);
    cfg_loc l = cfg_where(doc, key);
    if (l.line)
      fprintf(stderr, "%s:%u:%u: warning: %s: %s\n", l.file, l.line, l.col, key, detail[i]);
    else fprintf(stderr, "fabsim: warning: %s\n", detail[i]);
  }
  sim_free(idx);
  sim_free(detail);
}

/* stderr's line when the simulated job failed (exit 4). */
static void print_job_failed(const cfg_scenario *cfg, const run_result *r,
                             const run_training_result *tres) {
  const char *kind = "transfer-failed", *component = "", *cause = NULL;
  char comp[32];
  double at_s = 0;
  if (cfg->workload.kind == CFG_WORKLOAD_TRAINING) {
    const run_failure *f = &tres->failure;
    kind = f->kind_name;
    component = f->component;
    at_s = f->cost.at_s;
    if (f->kind == WL_TRANSFER_FAIL) cause = f->cause;
  } else if (r->w.have_first) {
    snprintf(comp, sizeof comp, "gpu%u", r->w.first.src_gpu);
    component = comp;
    at_s = sim_ps_to_s(r->w.first.at);
    cause = r->w.first.cause ? r->w.first.cause : "unknown";
  }
  fprintf(stderr,
          "fabsim: the simulated job failed: %s %s at %.6g s%s%s; the files in %s say "
          "\"outcome\": \"failed\"\n",
          kind, component, at_s, cause ? ": " : "", cause ? cause : "", cfg->output.dir);
}

/* Ranks of the MPI job this process was started in by a launcher (1: none). */
static long mpi_ranks(void) {
  if (!pdes_comm_launched()) return 1;
  const char *n = getenv("OMPI_COMM_WORLD_SIZE");
  if (!n) n = getenv("PMI_SIZE");
  return n ? strtol(n, NULL, 10) : 1;
}

int cli_cmd_run(int argc, char **argv) {
  cli_args a;
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_ctx *sim = NULL;
  be_backend *be = NULL;
  run_result r;
  run_training tr;
  run_training_result tres;
  flt_fault *faults = NULL;
  uint32_t nfaults = 0;
  flt_sched *fs = NULL;
  memset(&r, 0, sizeof r);
  memset(&tr, 0, sizeof tr);
  memset(&tres, 0, sizeof tres);
  cli_run_output ro = {0};
  bool complete = true;
  cli_lock lock = CLI_LOCK_NONE;
  sim_error err = {0};
  memset(&a, 0, sizeof a);
  /* Under mpirun every rank runs this function; rank 0 alone speaks and
   * writes. One simulation over the ranks is the packet fidelity on the
   * parallel engine; anything else would be N copies of one run. */
  bool mpi = pdes_comm_launched() && pdes_comm_built();
  if (mpi) {
    if (pdes_comm_init(&err) != SIM_OK) {
      cli_error(err.msg);
      pdes_comm_finalize();
      return CLI_FAILED;
    }
    if (pdes_comm_rank() != 0) { /* quiet: rank 0 says everything */
      if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) {
        pdes_comm_finalize();
        return CLI_FAILED;
      }
    }
  }
  int rc = cli_parse(&a, argc, argv, "jq", run_help);
  if (rc != CLI_OK) goto out;
  double t0 = wall_now();
  if ((rc = cli_load(&a, &cfg, &doc, &t)) != CLI_OK) goto out;
  if (mpi_ranks() > 1 && !be_packet_parallel(&cfg)) {
    cli_error(
        "run under mpirun with more than one rank runs the packet fidelity on the parallel "
        "engine (simulation.fidelity=packet, simulation.engine=auto or parallel); this "
        "scenario would run as N copies writing one folder. Start one process, or use "
        "mpirun with fabsim sweep to spread the points of a sweep over the ranks");
    rc = CLI_BAD_INPUT;
    goto done;
  }
  bool rank0 = !mpi || pdes_comm_rank() == 0;
  if (rank0 && (rc = cli_output_lock(&cfg, doc, &lock)) != CLI_OK)
    goto done; /* one run per output.dir */

  sim = sim_create(cfg.simulation.seed);
  if (be_create(&be, sim, t, &cfg, doc, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_BAD_INPUT;
    goto done;
  }
  be_backend *inner = be; /* before the telemetry tap wraps it */
  if (cli_run_output_begin(&ro, &be, &cfg, doc, t, &err) != SIM_OK) { /* telemetry tap */
    cli_error(err.msg);
    rc = err.code == SIM_ECONFIG ? CLI_BAD_INPUT : CLI_FAILED;
    goto done;
  }
  /* faults (fabsim/fault.h): resolved once, scheduled before the workload
   * submits anything; a training job's hooks take the GPU faults */
  if (flt_resolve(&faults, &nfaults, t, &cfg, doc, &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_BAD_INPUT;
    goto done;
  }
  if (nfaults && !(fs = flt_sched_start(sim, t, be, faults, nfaults, &cfg, NULL, &err))) {
    cli_error(err.msg);
    rc = CLI_BAD_INPUT;
    goto done;
  }
  if (run_workload_begin(&r.w, &cfg, doc, t, be, &err) != SIM_OK) { /* located at the key */
    cli_error(err.msg);
    rc = CLI_BAD_INPUT;
    goto done;
  }
  if (cfg.workload.kind == CFG_WORKLOAD_TRAINING) {
    if (run_training_begin(&tr, &cfg, doc, t, be, faults, nfaults, &err) != SIM_OK) {
      cli_error(err.msg);
      rc = err.code == SIM_ECONFIG ? CLI_BAD_INPUT : CLI_FAILED;
      goto done;
    }
    if (fs) flt_sched_set_hooks(fs, &tr.hooks); /* GPU faults: into the job at their times */
  }
  if (cfg.workload.kind == CFG_WORKLOAD_TRAINING) {
    /* the job drives the simulation itself (and stops it at its end or
     * failure, leaving later events pending), with its own progress line */
    if (run_training_run(&tr, &r.log, !a.quiet && isatty(STDERR_FILENO), &complete, &err) !=
        SIM_OK) {
      cli_error(err.msg);
      rc = err.code == SIM_ECONFIG ? CLI_BAD_INPUT : CLI_FAILED;
      goto done;
    }
    if (tr.warning) fprintf(stderr, "fabsim: warning: %s\n", tr.warning);
  } else {
    run_workload_start(&r.w, be);
    out_progress prog = {.show = !a.quiet && isatty(STDERR_FILENO), /* ranks > 0: /dev/null */
                         .expected = run_plan_estimate(&r.w.plan, t, &cfg),
                         .started = t0};
    complete = out_progress_run(sim, &prog) == SIM_OK; /* Ctrl-C: stop, finish the outputs */
  }
  be->ops->stats(be, &r.net);              /* the parallel engine: collectives, then */
  net_tel_gather(ro.packet, sim_now(sim)); /* only rank 0 writes */
  be_parallel_info_get(inner, &r.par);
  r.events = sim_events(sim);
  r.sim_time_s = sim_ps_to_s(sim_now(sim));
  r.wall_s = wall_now() - t0;
  if (fs) { /* the faults, reroutes and failed transfers into the summary's events */
    flt_sched_finish(fs);
    run_fault_log(fs, faults, nfaults, cfg.workload.kind == CFG_WORKLOAD_TRAINING, &r.log);
  }
  run_workload_end(&r.w, sim, &r.net, complete,
                   cfg.workload.kind == CFG_WORKLOAD_TRAINING ? tr.job : NULL, &r.log);
  if (!rank0) goto done;
  if (cfg.workload.kind != CFG_WORKLOAD_TRAINING) {
    r.have_power = true; /* its model is freed at done, also after an error */
    if (run_power_of(&r.power, &r.pm, &cfg, doc, t, r.w.res.time_s, &err) != SIM_OK) {
      cli_error(err.msg);
      rc = CLI_BAD_INPUT;
      goto done;
    }
  } else {
    run_training_report(&tr, &r.log, &tres);
    ro.job = tr.job; /* its GPU timeline feeds the GPU series */
  }
  if (complete)
    warn_faults_after_end(&cfg, doc,
                          cfg.workload.kind == CFG_WORKLOAD_TRAINING ? sim_now(sim) : r.w.exec.end,
                          &r.log);
  json_t *summary = summary_json(&a, &cfg, t, &r);
  if (cfg.workload.kind == CFG_WORKLOAD_TRAINING) cli_training_json(&tres, &cfg, summary);
  char *dump = cfg_dump(&cfg);
  char path[4096];
  snprintf(path, sizeof path, "%s/scenario.yaml", cfg.output.dir);
  if (cli_run_output_end(&ro, sim, &r.w.exec, summary, &r.log, &cfg, dump, complete, r.w.failed,
                         &err) != SIM_OK ||
      out_write_json(summary, cfg.output.dir, "summary.json", &err) != SIM_OK ||
      sim_write_file_atomic(path, dump, strlen(dump), &err) != SIM_OK) {
    cli_error(err.msg);
    rc = CLI_FAILED;
  } else if (a.json) {
    char *text = out_json_text(summary);
    puts(text);
    free(text);
  } else if (!a.quiet) {
    print_summary(&cfg, t, &r, &tres, summary, cfg.output.dir);
  }
  if (r.w.failed && rc == CLI_OK) {
    print_job_failed(&cfg, &r, &tres);
    rc = CLI_JOB_FAILED;
  } else if (!complete && rc == CLI_OK) {
    fprintf(stderr,
            "fabsim: stopped at %.6g s of simulated time; the files in %s are whole and "
            "marked \"complete\": false\n",
            r.sim_time_s, cfg.output.dir);
    rc = CLI_INTERRUPTED;
  }
  sim_free(dump);
  json_decref(summary);
done:
  run_events_free(&r.log);
  if (r.have_power) pwr_free(&r.pm);
  run_training_result_free(&tres);
  flt_sched_free(fs); /* before the backend it points to */
  sim_free(faults);
  be_destroy(be);
  run_workload_free(&r.w); /* after be_destroy: its callbacks point into the trace runner */
  run_training_free(&tr);  /* after be_destroy: the backend's callbacks point into the job */
  cli_run_output_free(&ro);
  sim_destroy(sim);
  if (t) topo_free(t);
  cli_output_unlock(&lock, rc); /* before cfg_free: it names output.dir */
  if (doc) cfg_free(&cfg, doc);
out:
  cli_args_free(&a);
  if (mpi) pdes_comm_finalize();
  return rc < 0 ? CLI_OK : rc;
}
