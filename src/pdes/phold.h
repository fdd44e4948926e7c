/* PHOLD on the parallel engine: the benchmark and the identity test's model.
 *
 * N LPs, each starting with `start` events. Running an event updates the
 * LP's count and digest and sends one new event after lookahead + Exp(mean)
 * to a uniformly chosen other LP with probability `remote`, else to itself.
 * Each LP draws from its own RNG stream (seed, LP id), so the run is a
 * function of the configuration only, whatever the partition.
 */
#ifndef FABSIM_PDES_PHOLD_H
#define FABSIM_PDES_PHOLD_H

#include "fabsim/pdes.h"

typedef struct pdes_phold_cfg {
  uint32_t nlps;
  uint32_t start;          /* events per LP at time 0 */
  double remote;           /* probability an event goes to another LP */
  simtime_ps mean_ps;      /* mean of the exponential part of the delay */
  simtime_ps lookahead_ps; /* fixed part of every delay; the engine's lookahead */
  uint64_t seed;
  pdes_exchange exchange; /* pdes_cfg.exchange */
} pdes_phold_cfg;

/* Words of state per LP that pdes_phold_state returns. */
enum { PDES_PHOLD_STATE_WORDS = 6 };

typedef struct pdes_phold pdes_phold;

/* parallel: over the MPI ranks (pdes_comm_init first); lp_rank as in
 * pdes_cfg (NULL: blocks). Collective when parallel. */
int pdes_phold_create(pdes_phold **m, const pdes_phold_cfg *cfg, bool parallel,
                      const uint32_t *lp_rank, sim_error *err);
void pdes_phold_destroy(pdes_phold *m);
pdes *pdes_phold_engine(pdes_phold *m);
/* Run to `until`; returns the events this rank ran. Collective. */
uint64_t pdes_phold_run(pdes_phold *m, simtime_ps until);
/* The state of every LP (count, digest, last time, RNG words), in LP order,
 * nlps * PDES_PHOLD_STATE_WORDS words into out on rank 0 (out: that many
 * words, on every rank). Collective. */
void pdes_phold_state(pdes_phold *m, uint64_t *out);
/* The simulated time at which about `events` events have run in total. */
simtime_ps pdes_phold_horizon(const pdes_phold_cfg *cfg, uint64_t events);

#endif
