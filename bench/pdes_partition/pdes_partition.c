/* bench_pdes_partition: how a scenario's fabric would spread over N ranks
 * for the parallel packet backend (one LP per topology vertex): scheme,
 * endpoints and LPs per rank, links cut (by kind) and the lookahead the cut
 * allows ("in-node": PCIe and scale-up links). Feeds the wall-time model of
 * docs/parallel.md.
 *
 *   bench_pdes_partition [SCENARIO.yaml] [--set KEY=VALUE]... [--ranks N,N,...]
 *
 * With --run, [mpirun -np N] runs the packet-level prototype (src/pdes/fabric.c:
 * every NIC sends --packets 4 KiB packets to a NIC of its plane (a shift
 * permutation, or with --random a random one per phase; with --credits B,
 * credit flow control with B bytes of buffer per ingress), --phases
 * times, each phase starting 1 us after the last arrival of the one before)
 * on the partition for N ranks, and prints its rate, synchronization share,
 * windows, the share of events that crossed ranks and a digest of every
 * vertex's final state (the same for any N).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/config.h"
#include "fabsim/pdes.h"
#include "fabsim/topo.h"
#include "pdes/fabric.h"

static int run_prototype(const topo *t, uint32_t packets, uint32_t phases, bool random,
                         uint32_t credits) {
  sim_error err = {0};
  bool parallel = pdes_comm_built() && pdes_comm_launched();
  if (parallel && pdes_comm_init(&err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  uint32_t rank = pdes_comm_rank(), size = pdes_comm_size();
  pdes_partition part;
  if (pdes_partition_fabric(&part, t, size, &err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  simtime_ps la = part.lookahead_ps == SIM_TIME_MAX ? 100 * SIM_PS_PER_NS : part.lookahead_ps;
  pdes_fabric_cfg cfg = {.packets = packets,
                         .bytes = 4096,
                         .phases = phases,
                         .start_latency = SIM_PS_PER_US,
                         .seed = 1,
                         .random = random,
                         .credit_bytes = credits};
  pdes_fabric *m = NULL;
  if (pdes_fabric_create(&m, t, &cfg, parallel, part.vertex_rank, la, &err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  pdes_comm_barrier();
  pdes_fabric_run(m);
  pdes_stats st;
  pdes_stats_get(pdes_fabric_engine(m), &st);
  size_t words = (size_t)topo_vertex_count(t) * PDES_FABRIC_STATE_WORDS;
  uint64_t *state = calloc(words, sizeof *state);
  pdes_fabric_state(m, state);
  void **parts = NULL;
  size_t *lens = NULL;
  pdes_comm_gather_bytes(&st, sizeof st, &parts, &lens);
  if (rank == 0) {
    uint64_t digest = 0, events = 0, crossed = 0;
    double wall = 0;
    for (size_t i = 0; i < words; i++) digest = sim_hash_u64(digest ^ state[i]);
    for (uint32_t r = 0; r < size; r++) {
      const pdes_stats *s = parts[r];
      events += s->events;
      crossed += s->sent_remote;
      if (s->wall_s > wall) wall = s->wall_s;
    }
    const pdes_stats *s0 = parts[0];
    printf("prototype: %u ranks (%s, %" PRIu64
           " links cut, lookahead %.0f ns), %u packets x %u phases per NIC, %s\n",
           size, part.scheme, part.cut_links, (double)la / 1000.0, packets, phases,
           random ? "random permutations" : "shift permutations");
    if (credits) printf("  credits     %lu bytes per ingress\n", (unsigned long)credits);
    printf("  events      %" PRIu64 ", %" PRIu64 " crossed ranks (%.2f%%)\n", events, crossed,
           events ? 100.0 * (double)crossed / (double)events : 0.0);
    printf("  sim time    %.3f us (phase ends:",
           (double)pdes_fabric_phase_end(m)[phases - 1] / 1e6);
    for (uint32_t k = 0; k < phases; k++)
      printf(" %.3f", (double)pdes_fabric_phase_end(m)[k] / 1e6);
    printf(")\n  wall        %.3f s, %.2f M events/s\n", wall, (double)events / wall / 1e6);
    printf("  windows     %" PRIu64 " (%.0f /s)\n", s0->windows, (double)s0->windows / wall);
    for (uint32_t r = 0; r < size; r++) {
      const pdes_stats *s = parts[r];
      printf("  rank %-4u   %" PRIu64 " events, %.2f M events/s (%.2f outside sync), sync %.1f%%\n",
             r, s->events, (double)s->events / s->wall_s / 1e6,
             s->wall_s > s->sync_s ? (double)s->events / (s->wall_s - s->sync_s) / 1e6 : 0.0,
             100.0 * s->sync_s / s->wall_s);
    }
    printf("  digest      %016" PRIx64 " (every vertex's final state)\n", digest);
  }
  for (uint32_t r = 0; parts && r < size; r++) sim_free(parts[r]);
  sim_free(parts);
  sim_free(lens);
  free(state);
  pdes_fabric_destroy(m);
  pdes_partition_free(&part);
  if (parallel) pdes_comm_finalize();
  return 0;
}

int main(int argc, char **argv) {
  const char *scenario = NULL, *ranks = "1,2,8,64,1024";
  bool run = false, random = false;
  unsigned long packets = 64, phases = 2, credits = 0;
  const char **sets = calloc((size_t)argc + 1, sizeof *sets);
  int nsets = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--set") && i + 1 < argc) sets[nsets++] = argv[++i];
    else if (!strcmp(argv[i], "--ranks") && i + 1 < argc) ranks = argv[++i];
    else if (!strcmp(argv[i], "--run")) run = true;
    else if (!strcmp(argv[i], "--random")) random = true;
    else if (!strcmp(argv[i], "--credits") && i + 1 < argc) credits = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--packets") && i + 1 < argc) packets = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--phases") && i + 1 < argc) phases = strtoul(argv[++i], NULL, 10);
    else if (argv[i][0] != '-' && !scenario) scenario = argv[i];
    else {
      fprintf(
          stderr,
          "usage: bench_pdes_partition [SCENARIO.yaml] [--set KEY=VALUE]... [--ranks N,N,...]\n"
          "       [mpirun -np N] bench_pdes_partition [SCENARIO.yaml] [--set KEY=VALUE]... --run\n"
          "             [--packets P] [--phases K] [--random] [--credits BYTES]\n");
      return 2;
    }
  }
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_error err = {0};
  if (cfg_load(&cfg, &doc, scenario, sets, nsets, &err) != SIM_OK ||
      topo_build(&t, &cfg, doc, &err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  if (run) {
    int rc = packets && phases && packets < (1ul << 30) && phases < 1000
                 ? run_prototype(t, (uint32_t)packets, (uint32_t)phases, random, (uint32_t)credits)
                 : 2;
    topo_free(t);
    cfg_free(&cfg, doc);
    free(sets);
    return rc;
  }
  const topo_inventory *inv = topo_inventory_get(t);
  printf("fabric: %" PRIu64 " GPUs, %" PRIu64 " endpoints, %" PRIu64
         " switches, %u planes, %u tiers; "
         "%u vertices (LPs), %u links\n",
         inv->gpus, inv->endpoints, inv->switches, inv->planes, inv->tiers, topo_vertex_count(t),
         topo_link_count(t));
  printf("%6s  %-10s  %6s  %15s  %13s  %9s  %7s  %7s  %7s  %9s\n", "ranks", "scheme", "units",
         "endpoints/rank", "LPs/rank", "cut links", "fabric", "nic", "in-node", "lookahead");
  for (const char *s = ranks; *s;) {
    char *end;
    unsigned long n = strtoul(s, &end, 10);
    pdes_partition p;
    if (pdes_partition_fabric(&p, t, (uint32_t)n, &err) != SIM_OK) {
      printf("%6lu  %s\n", n, err.msg);
    } else {
      char la[32];
      if (p.lookahead_ps == SIM_TIME_MAX) snprintf(la, sizeof la, "-");
      else snprintf(la, sizeof la, "%.0f ns", (double)p.lookahead_ps / 1000.0);
      printf("%6u  %-10s  %6u  %7u..%-7u  %6u..%-6u  %9" PRIu64 "  %7" PRIu64 "  %7" PRIu64
             "  %7" PRIu64 "  %9s\n",
             p.nranks, p.scheme, p.units, p.endpoints_min, p.endpoints_max, p.vertices_min,
             p.vertices_max, p.cut_links, p.cut_by_kind[TOPO_LINK_FABRIC],
             p.cut_by_kind[TOPO_LINK_ENDPOINT],
             p.cut_by_kind[TOPO_LINK_SCALE_UP] + p.cut_by_kind[TOPO_LINK_PCIE], la);
      pdes_partition_free(&p);
    }
    s = *end == ',' ? end + 1 : end;
    if (end == s && *s) break;
  }
  topo_free(t);
  cfg_free(&cfg, doc);
  free(sets);
  return 0;
}
