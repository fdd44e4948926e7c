/* Packet telemetry: the real queue depths, PFC pauses, ECN marks and port
 * utilization of a packet-fidelity run, sampled while it runs and replayed
 * into a tel afterwards (the tel is sized to the run's length, so it is made
 * after the run; see src/cli/run_output.c).
 *
 * While any phase is active, one event per sample row reads every switch
 * egress port's counters (O(ports)); rows start at 1 us and, when 256 are
 * full, neighbours merge and the row length doubles, so a run of any length
 * keeps between 128 and 256 rows (the tel's ~500 intervals then see each
 * row's values spread over it). The fabric idle (no phase) schedules
 * nothing, so the run's end time is unchanged.
 *
 * Memory: per row and port, utilization, PFC paused fraction and ECN marks
 * (2 bytes each, dense: ports x 1.5 KB at 256 rows; past 128 MiB, as on a
 * full 3-tier radix-64 fabric, fewer rows are kept, at least 32, so the
 * series get coarser instead), and the deepest queue only for the
 * max(64, ports/100 + 1) deepest ports of the row plus the watched ports
 * (sparse): the tel's per-row queue maximum and 99th percentile across ports
 * are exact, a port outside them shows 0 for that row.
 *
 * NIC throughput and GPU states still come from the telemetry tap (phases
 * at constant rate); the replay feeds the tel's port group only, so the tap
 * must be replayed without ports (an empty tel_portmap). */
#ifndef FABSIM_NET_TEL_H
#define FABSIM_NET_TEL_H

#include "fabsim/backend.h"
#include "fabsim/tel_tap.h"
#include "fabsim/telemetry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start sampling b, a packet backend (be_packet_create), before any phase:
 * the ports of m (copied), the watched ones (port ids, copied) kept in full.
 * SIM_EINVAL when b is not a packet backend. */
int net_tel_start(be_backend *b, const tel_portmap *m, const uint32_t *watch, uint32_t nwatch);
/* Feed t's port group from the samples, up to end (the run's end): call once
 * after the run, before tel_finish; nothing else may feed t's ports. */
void net_tel_replay(be_backend *b, tel *t, simtime_ps end);
/* On the parallel engine, before net_tel_replay and on every rank (a
 * collective): close the rows at end and merge every rank's samples. A
 * no-op otherwise. */
void net_tel_gather(be_backend *b, simtime_ps end);

#ifdef __cplusplus
}
#endif
#endif
