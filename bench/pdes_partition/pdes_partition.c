/* bench_pdes_partition: how a scenario's fabric would spread over N ranks
 * for the parallel packet backend (one LP per topology vertex): scheme,
 * endpoints and LPs per rank, links cut (by kind) and the lookahead the cut
 * allows ("in-node": PCIe and scale-up links). Feeds the wall-time model of
 * docs/parallel.md.
 *
 *   bench_pdes_partition [SCENARIO.yaml] [--set KEY=VALUE]... [--ranks N,N,...]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/config.h"
#include "fabsim/pdes.h"
#include "fabsim/topo.h"

int main(int argc, char **argv) {
  const char *scenario = NULL, *ranks = "1,2,8,64,1024";
  const char **sets = calloc((size_t)argc + 1, sizeof *sets);
  int nsets = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--set") && i + 1 < argc) sets[nsets++] = argv[++i];
    else if (!strcmp(argv[i], "--ranks") && i + 1 < argc) ranks = argv[++i];
    else if (argv[i][0] != '-' && !scenario) scenario = argv[i];
    else {
      fprintf(stderr, "usage: bench_pdes_partition [SCENARIO.yaml] [--set KEY=VALUE]... [--ranks N,N,...]\n");
      return 2;
    }
  }
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_error err = {0};
  if (cfg_load(&cfg, &doc, scenario, sets, nsets, &err) != SIM_OK || topo_build(&t, &cfg, doc, &err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  const topo_inventory *inv = topo_inventory_get(t);
  printf("fabric: %" PRIu64 " GPUs, %" PRIu64 " endpoints, %" PRIu64 " switches, %u planes, %u tiers; "
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
      printf("%6u  %-10s  %6u  %7u..%-7u  %6u..%-6u  %9" PRIu64 "  %7" PRIu64 "  %7" PRIu64 "  %7" PRIu64
             "  %9s\n",
             p.nranks, p.scheme, p.units, p.endpoints_min, p.endpoints_max, p.vertices_min, p.vertices_max,
             p.cut_links, p.cut_by_kind[TOPO_LINK_FABRIC], p.cut_by_kind[TOPO_LINK_ENDPOINT],
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
