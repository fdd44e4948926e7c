/* Memory a run will need, estimated from the scenario before anything is
 * built, and the memory the machine has (cfg_memory_estimate,
 * cfg_memory_available; checked in validate.c).
 *
 * Mechanism: the topology and the backend keep state per GPU (with its NIC,
 * server ports, the collective plan's per-rank steps and a slice's per-rank
 * state in the backend and the telemetry tap) and per link (two channels
 * with their queues, credits, telemetry); the packet fidelity also keeps a
 * flow or queue pair per transfer of a phase. The estimate is
 *   base + (per_gpu[fidelity] + per_rank) x GPUs + per_link[fidelity] x links
 *        + per_transfer[fidelity] x transfers of the largest phase,
 * with links = NICs x tiers (an endpoint link per NIC, one uplink per NIC and
 * tier above the leaves of a non-blocking fat-tree; fewer when
 * oversubscribed) and the transfers of a phase from the workload's pattern
 * (phase_transfers; at the analytic fidelity those of phases of their own
 * transfers only). What the estimate misses is still bounded while the run
 * goes: simulation.memory_limit holds for the allocator's running total
 * (sim_alloc_limit, set by the run's setup). The coefficients are peak RSS slopes measured with
 * /usr/bin/time on fat-trees (docs/validation.md, "Memory estimate"). Memory
 * that grows with simulated work rather than the scenario's size (the
 * per-transfer FCT samples of long collectives at the packet fidelity,
 * telemetry rows) is not in it: docs/validation.md lists it, measured. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config/cfg_internal.h"

/* bytes, indexed by cfg_fidelity (analytic, flow, packet). per_gpu: the
 * fabric's state per GPU (a permutation of 4 KB transfers); PER_RANK the
 * workload's (16,384-GPU AllReduces at the analytic fidelity: 4.7 to 5.1 KB
 * per GPU over the fabric's, most of it the telemetry tap's slice of a phase
 * and the plan's steps). per_transfer: what a transfer of a phase keeps
 * while it runs (flow: its flow; packet: its queue pair, path, packets in
 * flight and FCT sample), the RSS slope of all-to-alls of 32 to 128 GPUs
 * (tour/ib.yaml, 992 to 16,256 transfers): flow 346 B, packet 963 to
 * 1,081 B per transfer. The analytic fidelity keeps nothing per transfer of
 * a phase that is a slice of a pool (the symmetric collectives: their
 * windows and the tap's quotients, in PER_RANK), but a phase of its own
 * transfers (an all-to-all's pairs, a traffic pattern) is logged by the
 * telemetry tap hop by hop for its replay, with the plan's transfers and
 * the backend's times: 101.6 to 103.7 B per pair, the RSS slope of 3-tier
 * all-to-alls of 512 to 2,048 GPUs (issue 27, defect 3: 34.7, 112.8 and
 * 431.3 MiB; docs/validation.md, "Memory estimate"). */
static const uint64_t per_gpu[] = {0, 1330, 4000};
enum { PER_RANK = 5200 }; /* the workload's, at every fidelity */
static const uint64_t per_link[] = {750, 550, 2300};
static const uint64_t per_transfer[] = {110, 350, 1100};
enum { NCCL_MAX_CHANNELS = 32 }; /* NCCL's MAXCHANNELS: the most rings or trees of a collective */
/* The process before the scenario: code, libraries and tables (6.3 to 7.0
 * MiB peak RSS on the smallest runs), and what writing the outputs holds
 * whatever the run's size: SQLite's page cache (cache_size default -2000,
 * 2,000 KiB; sqlite.org/pragma.html#pragma_cache_size) and the report's
 * buffers. */
enum { BASE_BYTES = 10 << 20 };

uint64_t cfg_memory_nics(const cfg_scenario *s) {
  uint64_t per_node = s->cluster.nic.per_node ? s->cluster.nic.per_node : s->cluster.gpus_per_node;
  if (s->cluster.nodes) return (uint64_t)s->cluster.nodes * per_node;
  /* full size: a non-blocking fat-tree of radix k holds k (k/2)^(tiers-1)
   * NICs per plane (Al-Fares et al., SIGCOMM 2008: k^3/4 at 3 tiers) */
  uint64_t k = s->fabric.switch_radix, hosts = k;
  for (uint32_t t = 1; t < s->fabric.tiers; t++) hosts *= k / 2;
  return hosts * (s->fabric.planes ? s->fabric.planes : 1);
}

/* The most transfers one phase of the workload submits at once, from its
 * pattern (an upper bound: every pair of a group for an all-to-all, a
 * parent and two children on every channel for the other collectives), and
 * (*own) the most of them in phases of their own transfers rather than
 * slices of a pool: the all-to-alls' and traffic's. 128 bits: GPUs
 * squared. O(1). */
typedef unsigned __int128 u128;
static u128 phase_transfers(const cfg_workload *w, uint64_t gpus, uint64_t nics_per_node,
                            u128 *own) {
  u128 qps = w->qps_per_connection ? w->qps_per_connection : 1;
  uint64_t ch = w->collective.channels ? w->collective.channels : nics_per_node;
  if (ch == 0 || ch > NCCL_MAX_CHANNELS) ch = NCCL_MAX_CHANNELS;
  u128 coll = (u128)gpus * ch * 3 * qps, peers = gpus ? gpus - 1 : 0;
  *own = 0;
  switch (w->kind) {
  case CFG_WORKLOAD_TRAFFIC:
    if (w->traffic.pattern == CFG_TRAFFIC_ALL_TO_ALL) return *own = (u128)gpus * peers * qps;
    return *own = (u128)gpus * qps; /* pair, permutation, incast: a transfer per GPU at most */
  case CFG_WORKLOAD_COLLECTIVE:
    if (w->collective.op != CFG_COLL_ALLTOALL) return coll;
    if (w->collective.ranks && w->collective.ranks < gpus) peers = w->collective.ranks - 1;
    return *own = (u128)gpus * peers * qps;
  case CFG_WORKLOAD_TRAINING: { /* MoE: all-to-all within each expert-parallel group */
    u128 a2a = *own = (u128)gpus * (w->parallel.ep > 1 ? w->parallel.ep - 1 : 0) * qps;
    return a2a > coll ? a2a : coll;
  }
  default: return coll;
  }
}

void cfg_memory_estimate(const cfg_scenario *s, cfg_memory *m) {
  uint64_t nics = cfg_memory_nics(s);
  uint64_t per_node = s->cluster.nic.per_node ? s->cluster.nic.per_node : s->cluster.gpus_per_node;
  size_t f = (size_t)s->simulation.fidelity;
  if (f >= sizeof per_gpu / sizeof per_gpu[0]) f = sizeof per_gpu / sizeof per_gpu[0] - 1;
  memset(m, 0, sizeof *m);
  m->gpus = per_node ? nics / per_node * s->cluster.gpus_per_node : 0;
  m->links = nics * (s->fabric.tiers ? s->fabric.tiers : 1);
  m->per_gpu = per_gpu[f];
  m->per_link = per_link[f];
  m->per_rank = PER_RANK;
  u128 own, xfers = phase_transfers(&s->workload, m->gpus, per_node, &own);
  if (f == CFG_FIDELITY_ANALYTIC) xfers = own; /* a pool's slices: nothing per transfer */
  m->transfers = xfers > UINT64_MAX ? UINT64_MAX : (uint64_t)xfers;
  m->per_transfer = per_transfer[f];
  u128 b = (u128)BASE_BYTES + (u128)m->gpus * (m->per_gpu + m->per_rank) +
           (u128)m->links * m->per_link + xfers * m->per_transfer;
  m->bytes = b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

uint64_t cfg_memory_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  char line[128];
  unsigned long long kib = 0;
  if (f) {
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    fclose(f);
  }
  if (kib) return (uint64_t)kib * 1024;
#if defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
  long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && size > 0) return (uint64_t)pages * (uint64_t)size;
#endif
  return UINT64_MAX; /* unknown: no refusal */
}
