/* Ring AllReduce on the flow fidelity at scale.
 *
 * Default: 1 GiB over every GPU of 2,048 nodes (16,384 GPUs), 8 channels,
 * on two fabrics: a multi-plane fat-tree (8 planes, radix 64, 2 tiers) and a
 * single-plane 3-tier fat-tree of radix 64. The plan is one phase of
 * n x channels transfers repeated 2(n-1) times, run with coll_exec_start on
 * the flow backend. Prints wall seconds (topology build, plan, simulation),
 * peak RSS, simulated time, bus bandwidth and solver counters.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fabsim/coll.h"
#include "flow/flow_internal.h"

static double peak_rss_mib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

static void usage(void) {
  fprintf(stderr,
          "usage: bench_flow_ring [--topology multi-plane|fat-tree|both] [--nodes N]\n"
          "                       [--bytes B] [--channels K] [--explicit R]\n"
          "  defaults: --topology both --nodes 2048 --bytes 1073741824 --channels 8 --explicit 0\n"
          "  --explicit R: also run R repetitions of the ring step with the repetition\n"
          "  shortcut off (what concurrent traffic costs) and report wall per repetition\n");
}

/* The ring step run `reps` times explicitly (shortcut off): wall per repetition. */
static void run_explicit(const topo *t, const cfg_scenario *cfg, const coll_plan *plan,
                         uint64_t reps) {
  if (reps == 0 || plan->nphases == 0) return;
  const coll_phase *ph = &plan->phases[0];
  sim_ctx *sim = sim_create(cfg->simulation.seed);
  be_backend *b = be_flow_create(sim, t, cfg);
  flow__set_shortcut(b, false);
  double t0 = sim_wall_s();
  be_submit_phase(b, ph->x, ph->n, reps, NULL, NULL);
  uint64_t events = ev_run(sim, SIM_TIME_MAX);
  double t1 = sim_wall_s();
  printf("  explicit      %" PRIu64 " repetitions: %.3f s wall, %.1f ms per repetition, %" PRIu64
         " events, sim %.3f us per repetition\n",
         reps, t1 - t0, (t1 - t0) * 1e3 / (double)reps, events,
         sim_ps_to_s(sim_now(sim)) * 1e6 / (double)reps);
  be_destroy(b);
  sim_destroy(sim);
}

/* Simulated seconds of the plan on the analytic fidelity, for comparison. */
static double analytic_time_s(const topo *t, const cfg_scenario *cfg, const coll_plan *plan) {
  sim_ctx *sim = sim_create(cfg->simulation.seed);
  be_backend *b = be_analytic_create(sim, t, cfg);
  coll_exec e;
  coll_exec_start(&e, b, plan, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  coll_result r;
  coll_result_of(&e, &r);
  be_destroy(b);
  sim_destroy(sim);
  return r.time_s;
}

static int run(const char *topology, uint64_t nodes, uint64_t bytes, uint64_t channels,
               uint64_t explicit_reps) {
  char nodes_set[64];
  snprintf(nodes_set, sizeof nodes_set, "cluster.nodes=%" PRIu64, nodes);
  const char *mp[] = {nodes_set,         "fabric.topology=multi-plane",
                      "fabric.planes=8", "fabric.switch_radix=64",
                      "fabric.tiers=2",  "simulation.fidelity=flow"};
  const char *ft[] = {nodes_set, "fabric.topology=fat-tree", "fabric.switch_radix=64",
                      "fabric.tiers=3", "simulation.fidelity=flow"};
  bool multi = !strcmp(topology, "multi-plane");
  const char *const *sets = multi ? mp : ft;
  int nsets = multi ? 6 : 5;
  int rc = 2;
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  uint32_t *ranks = NULL;
  coll_plan plan = {0};
  sim_ctx *sim = NULL;
  be_backend *b = NULL;
  sim_error err = {0};

  double t0 = sim_wall_s();
  if (cfg_load(&cfg, &doc, NULL, sets, nsets, &err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  if (topo_build(&t, &cfg, doc, &err) != SIM_OK) goto fail;
  double t1 = sim_wall_s();
  uint32_t n = topo_gpu_count(t);
  ranks = sim_malloc(n * sizeof *ranks);
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  coll_spec spec = {.op = CFG_COLL_ALLREDUCE,
                    .algorithm = CFG_ALGO_RING,
                    .bytes = bytes,
                    .ranks = ranks,
                    .nranks = n,
                    .channels = (uint32_t)channels,
                    .chunk = 1 << 20};
  if (coll_plan_build(&plan, t, &spec, &err) != SIM_OK) goto fail;
  double t2 = sim_wall_s();
  sim = sim_create(cfg.simulation.seed);
  if (be_create(&b, sim, t, &cfg, doc, &err) != SIM_OK) goto fail;
  coll_exec e;
  coll_exec_start(&e, b, &plan, NULL, NULL);
  uint64_t events = ev_run(sim, SIM_TIME_MAX);
  double t3 = sim_wall_s();
  double rss = peak_rss_mib();

  coll_result r;
  coll_result_of(&e, &r);
  be_stats st;
  b->ops->stats(b, &st);
  const flow__net *net = flow__backend_net(b);
  printf("flow_ring %s: %u GPUs, %u nodes, allreduce %" PRIu64 " bytes, %" PRIu64 " channels\n",
         topology, n, topo_node_count(t), bytes, channels);
  printf("  finished      %s\n", e.finished ? "yes" : "NO");
  printf("  sim time      %.6f ms (analytic %.6f ms)\n", r.time_s * 1e3,
         analytic_time_s(t, &cfg, &plan) * 1e3);
  printf("  busbw         %.3f GB/s (algbw %.3f GB/s)\n", r.busbw_GBps, r.algbw_GBps);
  printf("  transfers     %" PRIu64 " (%zu per repetition x %" PRIu64 ")\n", st.transfers,
         plan.nphases ? plan.phases[0].n : 0, plan.nphases ? plan.phases[0].repeat : 0);
  printf("  max sharing   %u flows on one channel\n", st.max_link_sharing);
  printf("  events        %" PRIu64 ", solves %" PRIu64 ", flows solved %" PRIu64
         ", channels solved %" PRIu64 "\n",
         events, net->solves, net->solved_flows, net->solved_channels);
  printf("  wall          %.3f s (topology %.3f s, plan %.3f s, simulation %.3f s)\n", t3 - t0,
         t1 - t0, t2 - t1, t3 - t2);
  printf("  peak RSS      %.1f MiB (process high-water mark)\n", rss);
  run_explicit(t, &cfg, &plan, explicit_reps);
  rc = e.finished ? 0 : 1;
  goto done;
fail:
  fprintf(stderr, "%s\n", err.msg);
done:
  be_destroy(b);
  if (sim) sim_destroy(sim);
  coll_plan_free(&plan);
  sim_free(ranks);
  topo_free(t);
  cfg_free(&cfg, doc);
  return rc;
}

int main(int argc, char **argv) {
  const char *topology = "both";
  uint64_t nodes = 2048, bytes = 1ull << 30, channels = 8, explicit_reps = 0;
  for (int i = 1; i < argc; i += 2) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage();
      return 0;
    }
    if (!v) {
      usage();
      return 2;
    }
    char *end = NULL;
    if (!strcmp(a, "--topology")) {
      topology = v;
      end = (char *)v + strlen(v);
    } else if (!strcmp(a, "--nodes")) nodes = strtoull(v, &end, 10);
    else if (!strcmp(a, "--bytes")) bytes = strtoull(v, &end, 10);
    else if (!strcmp(a, "--channels")) channels = strtoull(v, &end, 10);
    else if (!strcmp(a, "--explicit")) explicit_reps = strtoull(v, &end, 10);
    else {
      usage();
      return 2;
    }
    if (!end || *end || end == v) {
      usage();
      return 2;
    }
  }
  bool both = !strcmp(topology, "both");
  if ((!both && strcmp(topology, "multi-plane") && strcmp(topology, "fat-tree")) || nodes == 0 ||
      nodes > UINT32_MAX || channels == 0 || channels > 64) {
    usage();
    return 2;
  }
  int rc = 0;
  if (both || !strcmp(topology, "multi-plane"))
    rc |= run("multi-plane", nodes, bytes, channels, explicit_reps);
  if (both || !strcmp(topology, "fat-tree"))
    rc |= run("fat-tree", nodes, bytes, channels, explicit_reps);
  return rc;
}
