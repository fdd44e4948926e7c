/* PHOLD: the standard synthetic benchmark for discrete-event engines.
 *
 * N logical processes (LPs); each starts with E events. Handling an event
 * schedules exactly one new event after lookahead + Exp(mean), to a uniformly
 * random other LP with probability `remote`, else to the same LP. Every event
 * is committed (sequential engine), so events/s is committed events per second.
 *
 * Each LP draws from its own RNG stream. The run ends at a simulated time
 * chosen so that about --events events execute. A checksum of per-LP counts
 * is printed so that runs can be compared for determinism.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/ev.h"
#include "phold.h"

typedef struct phold_lp {
  sim_rng rng;
  uint64_t handled;
  uint32_t id;
} phold_lp;

typedef struct phold {
  phold_lp *lps;
  uint32_t nlps;
  double remote;
  double mean_ps;
  simtime_ps lookahead_ps;
} phold;

typedef struct phold_sim {
  phold p;
  sim_ctx *sim;
} phold_sim;

static void phold_handle(sim_ctx *sim, void *obj, uint64_t arg);

static void phold_send(sim_ctx *sim, phold *p, phold_lp *lp) {
  uint32_t dst = lp->id;
  if (p->nlps > 1 && sim_rng_uniform(&lp->rng) < p->remote) {
    dst = (uint32_t)sim_rng_below(&lp->rng, p->nlps - 1);
    if (dst >= lp->id) dst++;
  }
  simtime_ps delay = p->lookahead_ps + (simtime_ps)sim_rng_exp(&lp->rng, p->mean_ps);
  ev_schedule_in(sim, delay, phold_handle, &p->lps[dst], (uint64_t)(uintptr_t)p);
}

static void phold_handle(sim_ctx *sim, void *obj, uint64_t arg) {
  phold_lp *lp = obj;
  phold *p = (phold *)(uintptr_t)arg;
  lp->handled++;
  phold_send(sim, p, lp);
}

static void usage(void) {
  fprintf(
      stderr,
      "usage: bench_phold [--lps N] [--start E] [--remote R] [--events M] [--seed S]\n"
      "  defaults: --lps 16384 --start 1 --remote 0.25 --events 30000000 --seed 1\n"
      "  mean delay 1 us, lookahead 1 ns\n"
      "  --engine pdes: the parallel engine, under mpirun (bench_phold --engine pdes --help)\n");
}

int main(int argc, char **argv) {
  uint64_t nlps = 16384, start = 1, target = 30000000, seed = 1;
  double remote = 0.25;
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--engine")) {
      if (!strcmp(argv[i + 1], "pdes")) return phold_pdes_main(argc, argv);
      if (strcmp(argv[i + 1], "ev")) {
        usage();
        return 2;
      }
    }
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--engine")) {
      i++;
      continue;
    }
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
    if (!strcmp(a, "--lps")) nlps = strtoull(v, &end, 10);
    else if (!strcmp(a, "--start")) start = strtoull(v, &end, 10);
    else if (!strcmp(a, "--events")) target = strtoull(v, &end, 10);
    else if (!strcmp(a, "--seed")) seed = strtoull(v, &end, 10);
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
  if (nlps == 0 || nlps > UINT32_MAX || start == 0 || remote < 0 || remote > 1) {
    usage();
    return 2;
  }

  phold p = {0};
  p.nlps = (uint32_t)nlps;
  p.remote = remote;
  p.mean_ps = (double)SIM_PS_PER_US;
  p.lookahead_ps = SIM_PS_PER_NS;
  p.lps = sim_calloc(nlps, sizeof *p.lps);
  sim_ctx *sim = sim_create(seed);
  for (uint32_t i = 0; i < p.nlps; i++) {
    p.lps[i].id = i;
    sim_rng_init_u64(&p.lps[i].rng, seed, i);
  }
  double t0 = sim_wall_s();
  for (uint32_t i = 0; i < p.nlps; i++)
    for (uint64_t e = 0; e < start; e++) phold_send(sim, &p, &p.lps[i]);
  /* Events in flight stay nlps*start; each takes ~mean+lookahead to fire. */
  double per_ps = (double)(nlps * start) / (p.mean_ps + (double)p.lookahead_ps);
  simtime_ps end = (simtime_ps)((double)target / per_ps);
  double t1 = sim_wall_s();
  uint64_t events = ev_run(sim, end);
  double t2 = sim_wall_s();

  uint64_t checksum = 0;
  for (uint32_t i = 0; i < p.nlps; i++) checksum = sim_hash_u64(checksum ^ p.lps[i].handled);
  double wall = t2 - t1;
  printf("phold lps=%" PRIu64 " start=%" PRIu64 " remote=%.2f seed=%" PRIu64 "\n", nlps, start,
         remote, seed);
  printf("  events      %" PRIu64 " committed\n", events);
  printf("  sim time    %.3f us\n", (double)end / (double)SIM_PS_PER_US);
  printf("  setup       %.3f s\n", t1 - t0);
  printf("  wall        %.3f s\n", wall);
  printf("  rate        %.2f M events/s\n", (double)events / wall / 1e6);
  printf("  checksum    %016" PRIx64 "\n", checksum);
  sim_destroy(sim);
  sim_free(p.lps);
  return 0;
}
