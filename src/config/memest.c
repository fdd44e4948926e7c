/* Memory a run will need, estimated from the scenario before anything is
 * built, and the memory the machine has (cfg_memory_estimate,
 * cfg_memory_available; checked in validate.c).
 *
 * Mechanism: the topology and the backend keep state per GPU (with its NIC,
 * server ports, transfer and queue pair) and per link (two channels with
 * their queues, credits, telemetry); the estimate is
 *   base + per_gpu[fidelity] x GPUs + per_link[fidelity] x links,
 * with links = NICs x tiers (an endpoint link per NIC, one uplink per NIC and
 * tier above the leaves of a non-blocking fat-tree; fewer when
 * oversubscribed). The coefficients are peak RSS slopes measured with
 * /usr/bin/time -v on 2- and 3-tier fat-trees (docs/validation.md, "Memory
 * estimate"): 2-tier radix 64 at 128 and 256 nodes, 3-tier radix 32 at 256 and
 * 512 nodes, 8 GPUs per node, a permutation of 4 KB transfers. Memory that
 * grows with simulated time (per-transfer FCT samples of long collectives,
 * time series) is not in it. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config/cfg_internal.h"

/* bytes, indexed by cfg_fidelity (analytic, flow, packet) */
static const uint64_t per_gpu[] = {0, 1330, 4000};
static const uint64_t per_link[] = {750, 550, 2300};
enum { BASE_BYTES = 8 << 20 }; /* the process before the scenario: code, libraries, tables */

uint64_t cfg_memory_nics(const cfg_scenario *s) {
  uint64_t per_node = s->cluster.nic.per_node ? s->cluster.nic.per_node : s->cluster.gpus_per_node;
  if (s->cluster.nodes) return (uint64_t)s->cluster.nodes * per_node;
  /* full size: a non-blocking fat-tree of radix k holds k (k/2)^(tiers-1)
   * NICs per plane (Al-Fares et al., SIGCOMM 2008: k^3/4 at 3 tiers) */
  uint64_t k = s->fabric.switch_radix, hosts = k;
  for (uint32_t t = 1; t < s->fabric.tiers; t++) hosts *= k / 2;
  return hosts * (s->fabric.planes ? s->fabric.planes : 1);
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
  unsigned __int128 b = (unsigned __int128)BASE_BYTES + (unsigned __int128)m->gpus * m->per_gpu +
                        (unsigned __int128)m->links * m->per_link;
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
