/* bench_phold --engine pdes: PHOLD on the parallel engine (src/pdes), over
 * the MPI ranks when started by mpirun, else sequential. Prints per-rank
 * events/s (over the wall time, and over the time outside synchronization),
 * the share of wall time in synchronization (the collectives, waiting for
 * the slowest rank included), windows/s and a digest of every LP's final
 * state (equal for any number of ranks). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "phold.h"
#include "pdes/phold.h"

static void usage(void) {
  fprintf(
      stderr,
      "usage: [mpirun -np N] bench_phold --engine pdes [--lps N] [--start E] [--remote R]\n"
      "         [--events M] [--seed S] [--lookahead-ns L] [--mean-ns D] [--partition blocks|rr]\n"
      "         [--exchange auto|sparse|dense]\n"
      "  defaults: --lps 16384 --start 4 --remote 0.25 --events 20000000 --seed 1\n"
      "            --lookahead-ns 1000 --mean-ns 1000 --partition blocks --exchange auto\n"
      "  delay = lookahead + Exp(mean); the lookahead is the engine's window;\n"
      "  auto: dense exchange up to 8 ranks, sparse beyond\n");
}

int phold_pdes_main(int argc, char **argv) {
  uint64_t nlps = 16384, start = 4, target = 20000000, seed = 1, la_ns = 1000, mean_ns = 1000;
  double remote = 0.25;
  int rr = 0;
  pdes_exchange exchange = PDES_EXCHANGE_AUTO;
  for (int i = 1; i < argc; i++) {
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
    if (!strcmp(a, "--engine")) {
      i++;
      continue;
    }
    if (!strcmp(a, "--exchange")) {
      if (!strcmp(v, "sparse")) exchange = PDES_EXCHANGE_SPARSE;
      else if (!strcmp(v, "dense")) exchange = PDES_EXCHANGE_DENSE;
      else if (strcmp(v, "auto")) {
        usage();
        return 2;
      }
      i++;
      continue;
    }
    if (!strcmp(a, "--partition")) {
      if (strcmp(v, "blocks") && strcmp(v, "rr")) {
        usage();
        return 2;
      }
      rr = !strcmp(v, "rr");
      i++;
      continue;
    }
    if (!strcmp(a, "--lps")) nlps = strtoull(v, &end, 10);
    else if (!strcmp(a, "--start")) start = strtoull(v, &end, 10);
    else if (!strcmp(a, "--events")) target = strtoull(v, &end, 10);
    else if (!strcmp(a, "--seed")) seed = strtoull(v, &end, 10);
    else if (!strcmp(a, "--lookahead-ns")) la_ns = strtoull(v, &end, 10);
    else if (!strcmp(a, "--mean-ns")) mean_ns = strtoull(v, &end, 10);
    else if (!strcmp(a, "--remote")) remote = strtod(v, &end);
    else {
      usage();
      return 2;
    }
    if (!end || *end || end == v) {
      usage();
      return 2;
    }
    i++;
  }
  if (nlps == 0 || nlps > (1u << 28) || start == 0 || start > 1000 || remote < 0 || remote > 1 ||
      la_ns == 0) {
    usage();
    return 2;
  }
  sim_error err = {0};
  bool parallel = pdes_comm_built() && pdes_comm_launched();
  if (parallel && pdes_comm_init(&err) != SIM_OK) {
    fprintf(stderr, "bench_phold: %s\n", err.msg);
    return 1;
  }
  uint32_t rank = pdes_comm_rank(), size = pdes_comm_size();
  pdes_phold_cfg cfg = {.nlps = (uint32_t)nlps,
                        .start = (uint32_t)start,
                        .remote = remote,
                        .mean_ps = mean_ns * SIM_PS_PER_NS,
                        .lookahead_ps = la_ns * SIM_PS_PER_NS,
                        .seed = seed,
                        .exchange = exchange};
  uint32_t *part = sim_malloc(nlps * sizeof *part);
  for (uint32_t i = 0; i < nlps; i++)
    part[i] = rr ? i % size : (uint32_t)((uint64_t)i * size / nlps);
  pdes_phold *m = NULL;
  if (pdes_phold_create(&m, &cfg, parallel, part, &err) != SIM_OK) {
    fprintf(stderr, "bench_phold: %s\n", err.msg);
    return 1;
  }
  simtime_ps end = pdes_phold_horizon(&cfg, target);
  pdes_comm_barrier();
  pdes_phold_run(m, end);
  pdes_stats st;
  pdes_stats_get(pdes_phold_engine(m), &st);
  size_t words = nlps * PDES_PHOLD_STATE_WORDS;
  uint64_t *state = sim_calloc(words, sizeof *state);
  pdes_phold_state(m, state);
  void **parts = NULL;
  size_t *lens = NULL;
  pdes_comm_gather_bytes(&st, sizeof st, &parts, &lens);
  if (rank == 0) {
    uint64_t digest = 0, events = 0, remote_ev = 0;
    for (size_t i = 0; i < words; i++) digest = sim_hash_u64(digest ^ state[i]);
    double wall = 0, sync_max = 0;
    for (uint32_t r = 0; r < size; r++) {
      const pdes_stats *s = parts[r];
      events += s->events;
      remote_ev += s->sent_remote;
      if (s->wall_s > wall) wall = s->wall_s;
    }
    printf("phold (pdes) lps=%" PRIu64 " start=%" PRIu64 " remote=%.2f lookahead=%" PRIu64
           " ns mean=%" PRIu64 " ns seed=%" PRIu64 " ranks=%u partition=%s exchange=%s\n",
           nlps, start, remote, la_ns, mean_ns, seed, size, rr ? "rr" : "blocks",
           exchange == PDES_EXCHANGE_DENSE    ? "dense"
           : exchange == PDES_EXCHANGE_SPARSE ? "sparse"
                                              : "auto");
    printf("  events      %" PRIu64 " committed, %" PRIu64 " crossed ranks (%.1f%%)\n", events,
           remote_ev, events ? 100.0 * (double)remote_ev / (double)events : 0.0);
    printf("  sim time    %.3f us\n", (double)end / (double)SIM_PS_PER_US);
    printf("  wall        %.3f s\n", wall);
    printf("  rate        %.2f M events/s total\n", (double)events / wall / 1e6);
    printf("  windows     %" PRIu64 " (%.0f /s), %.0f events per window\n",
           ((const pdes_stats *)parts[0])->windows,
           (double)((const pdes_stats *)parts[0])->windows / wall,
           (double)events / (double)((const pdes_stats *)parts[0])->windows);
    for (uint32_t r = 0; r < size; r++) {
      const pdes_stats *s = parts[r];
      if (s->sync_s > sync_max) sync_max = s->sync_s;
      printf("  rank %-4u   %" PRIu64
             " events, %.2f M events/s (%.2f M/s outside sync), sync %.1f%% of %.3f s\n",
             r, s->events, (double)s->events / s->wall_s / 1e6,
             s->wall_s > s->sync_s ? (double)s->events / (s->wall_s - s->sync_s) / 1e6 : 0.0,
             s->wall_s > 0 ? 100.0 * s->sync_s / s->wall_s : 0.0, s->wall_s);
    }
    printf("  digest      %016" PRIx64 " (every LP's final state)\n", digest);
  }
  if (parts)
    for (uint32_t r = 0; r < size; r++) sim_free(parts[r]);
  sim_free(parts);
  sim_free(lens);
  sim_free(state);
  sim_free(part);
  pdes_phold_destroy(m);
  if (parallel) pdes_comm_finalize();
  return 0;
}
