/* Placement at 16,384 GPUs: every policy's cost and what it does to a job.
 *
 * Two fabrics of 2,048 nodes x 8 GPUs (those of bench_flow_ring): a
 * multi-plane fat-tree (8 planes, radix 64, 2 tiers: 32 nodes per leaf) and a
 * single-plane 3-tier fat-tree of radix 64 (4 nodes per leaf, 128 per pod).
 * A seeded fraction of the nodes is taken first (plc_fragment), then one job
 * of --job nodes is placed by each policy. Prints per policy the leaves,
 * pods, ring spine and core crossings, the ring's hop range and the wall
 * time of plc_place + plc_metrics_of.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/place.h"

static void usage(void) {
  fprintf(stderr,
          "usage: bench_place [--fraction F] [--job NODES] [--seed S]\n"
          "  defaults: --fraction 0.5 --job 512 --seed 1\n");
}

static topo *build(bool multi, sim_error *err) {
  const char *mp[] = {"cluster.nodes=2048", "fabric.topology=multi-plane", "fabric.planes=8",
                      "fabric.switch_radix=64", "fabric.tiers=2"};
  const char *ft[] = {"cluster.nodes=2048", "fabric.topology=fat-tree", "fabric.switch_radix=64",
                      "fabric.tiers=3"};
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  if (cfg_load(&cfg, &doc, NULL, multi ? mp : ft, multi ? 5 : 4, err) != SIM_OK) return NULL;
  if (topo_build(&t, &cfg, doc, err) != SIM_OK) t = NULL;
  cfg_free(&cfg, doc);
  return t;
}

static int run(bool multi, double fraction, uint32_t job, uint64_t seed) {
  sim_error err = {0};
  topo *t = build(multi, &err);
  if (!t) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  plc_nodeset taken;
  plc_nodeset_init(&taken, topo_node_count(t));
  int rc = plc_fragment(&taken, fraction, seed, &err);
  uint32_t *out = sim_malloc((size_t)job * sizeof *out + 1);
  printf("%s: %u nodes, %u taken (fraction %.2f, seed %" PRIu64 "), job of %u nodes\n",
         multi ? "multi-plane 8 x radix 64, 2 tiers" : "fat-tree radix 64, 3 tiers",
         topo_node_count(t), plc_nodeset_count(&taken), fraction, seed, job);
  printf("  %-15s %7s %5s %12s %11s %9s %9s\n", "policy", "leaves", "pods", "spine pairs",
         "core pairs", "hops", "wall ms");
  for (int p = 0; p < PLC_EXPLICIT && rc == SIM_OK; p++) {
    plc_request req = {.policy = (plc_policy)p, .nodes = job, .seed = seed};
    plc_metrics m;
    double t0 = sim_wall_s();
    rc = plc_place(t, &taken, &req, out, &err);
    if (rc == SIM_OK) rc = plc_metrics_of(t, out, job, &m, &err);
    double t1 = sim_wall_s();
    if (rc != SIM_OK) break;
    printf("  %-15s %7u %5u %12u %11u %4u..%-4u %9.2f\n", plc_policy_name((plc_policy)p), m.leaves,
           m.pods, m.ring_spine_pairs, m.ring_core_pairs, m.ring_hops_min, m.ring_hops_max,
           (t1 - t0) * 1e3);
  }
  if (rc != SIM_OK) fprintf(stderr, "%s\n", err.msg);
  sim_free(out);
  plc_nodeset_free(&taken);
  topo_free(t);
  return rc == SIM_OK ? 0 : 2;
}

int main(int argc, char **argv) {
  double fraction = 0.5;
  uint32_t job = 512;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--fraction")) fraction = strtod(argv[++i], NULL);
    else if (i + 1 < argc && !strcmp(argv[i], "--job"))
      job = (uint32_t)strtoul(argv[++i], NULL, 10);
    else if (i + 1 < argc && !strcmp(argv[i], "--seed")) seed = strtoull(argv[++i], NULL, 10);
    else {
      usage();
      return 2;
    }
  }
  int rc = run(true, fraction, job, seed);
  if (rc == 0) rc = run(false, fraction, job, seed);
  return rc;
}
