/* A packet-level prototype of the parallel packet backend, on the real
 * topology: one LP per vertex, store-and-forward packets routed hop by hop
 * (up/down routing, ECMP by flow hash), one FIFO per output channel owned by
 * the sending vertex, optional credit-based flow control (credits return on
 * the reverse channel: a second kind of event across the cut), and phases that
 * start together: every NIC sends `packets` packets of `bytes` to a NIC of
 * its plane (a shift or random permutation, different per phase); when every flow of a
 * phase has arrived (a global condition, through the engine's window hook),
 * the next phase starts `start_latency` after the last arrival. It exists to
 * test and measure what section 6 of docs/parallel.md plans for src/net: the
 * partition, the lookahead of its cut, packet arrivals across ranks, and
 * phase completion without breaking identity. */
#ifndef FABSIM_PDES_FABRIC_H
#define FABSIM_PDES_FABRIC_H

#include "fabsim/pdes.h"
#include "fabsim/topo.h"

typedef struct pdes_fabric_cfg {
  uint32_t packets; /* per flow and phase */
  uint32_t bytes;   /* per packet, on the wire */
  uint32_t phases;
  simtime_ps start_latency; /* from a phase's last arrival to the next phase (>= lookahead) */
  uint64_t seed;            /* flow hashes, random permutations */
  bool random;              /* phase k: a random single-cycle permutation of each plane's
                               NICs (Sattolo); else a shift by 1 + 7k mod (n - 1) */
  uint32_t credit_bytes;    /* 0: no flow control (infinite buffers); else credit-based flow
                               control (as InfiniBand): a channel's destination holds this many
                               bytes; a packet waits at the sender until they are free, and
                               frees them when it leaves (credits return after the link's
                               latency, on the reverse channel) */
  pdes_exchange exchange;
} pdes_fabric_cfg;

typedef struct pdes_fabric pdes_fabric;

/* vertex_rank: a partition (pdes_partition_fabric) when parallel, else NULL;
 * lookahead: that partition's (any value > 0 on one rank). Collective. */
int pdes_fabric_create(pdes_fabric **m, const topo *t, const pdes_fabric_cfg *cfg, bool parallel,
                       const uint32_t *vertex_rank, simtime_ps lookahead, sim_error *err);
void pdes_fabric_destroy(pdes_fabric *m);
pdes *pdes_fabric_engine(pdes_fabric *m);
/* Run to the end of the last phase. Collective. */
uint64_t pdes_fabric_run(pdes_fabric *m);
/* Words of state per vertex returned by pdes_fabric_state. */
enum { PDES_FABRIC_STATE_WORDS = 4 };
/* Every vertex's state in vertex order on rank 0 (out: vertices * words). Collective. */
void pdes_fabric_state(pdes_fabric *m, uint64_t *out);
/* End time of each phase (same on every rank): phases entries. */
const simtime_ps *pdes_fabric_phase_end(const pdes_fabric *m);

#endif
