/* The packet-level prototype (src/pdes/fabric.c) under mpirun with 1, 2 and
 * 4 ranks, partitioned by plane (a 4-plane fabric) and by pod (a 3-tier
 * fat-tree): every vertex's state (packets, digest of every packet's time
 * and identity, last time, its channels' busy times) and the end of every
 * phase (shift and random permutations, without and with credit flow
 * control) equal the sequential run's, which uses 1 ns windows for its phase
 * hook where the parallel run uses the partition's lookahead. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/config.h"
#include "pdes/fabric.h"

static int failures;

static topo *build(const char **sets, int n) {
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_error err = {0};
  if (cfg_load(&cfg, &doc, NULL, sets, n, &err) != SIM_OK ||
      topo_build(&t, &cfg, doc, &err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  cfg_free(&cfg, doc);
  return t;
}

static void run(const topo *t, const pdes_fabric_cfg *cfg, bool parallel, const uint32_t *part,
                simtime_ps la, uint64_t *state, simtime_ps *ends, uint64_t *events) {
  pdes_fabric *m = NULL;
  sim_error err = {0};
  if (pdes_fabric_create(&m, t, cfg, parallel, part, la, &err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  uint64_t ev = pdes_fabric_run(m);
  *events = parallel ? pdes_comm_sum_u64(ev) : ev;
  pdes_fabric_state(m, state);
  memcpy(ends, pdes_fabric_phase_end(m), cfg->phases * sizeof *ends);
  pdes_fabric_destroy(m);
}

static void check(const char *name, const char **sets, int nsets, bool random, uint32_t credits) {
  uint32_t rank = pdes_comm_rank(), size = pdes_comm_size();
  topo *t = build(sets, nsets);
  pdes_fabric_cfg cfg = {.packets = 20,
                         .bytes = 4096,
                         .phases = 3,
                         .start_latency = 200 * SIM_PS_PER_NS,
                         .seed = 9,
                         .random = random,
                         .credit_bytes = credits};
  size_t words = (size_t)topo_vertex_count(t) * PDES_FABRIC_STATE_WORDS;
  uint64_t *ref = calloc(words, 8), *got = calloc(words, 8), ev_ref, ev;
  simtime_ps ends_ref[3], ends[3];
  run(t, &cfg, false, NULL, SIM_PS_PER_NS, ref, ends_ref, &ev_ref);
  pdes_partition part;
  sim_error err = {0};
  if (pdes_partition_fabric(&part, t, size, &err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  for (int x = 0; x < 2; x++) {
    cfg.exchange = x ? PDES_EXCHANGE_DENSE : PDES_EXCHANGE_SPARSE;
    run(t, &cfg, true, part.vertex_rank,
        part.lookahead_ps == SIM_TIME_MAX ? SIM_PS_PER_NS : part.lookahead_ps, got, ends, &ev);
    if (rank == 0) {
      bool same =
          ev == ev_ref && !memcmp(got, ref, words * 8) && !memcmp(ends, ends_ref, sizeof ends);
      if (!same) {
        fprintf(stderr,
                "FAIL %s (%s exchange): %" PRIu64 " events vs %" PRIu64 "; phase ends %" PRIu64
                " %" PRIu64 " %" PRIu64 " vs %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                name, x ? "dense" : "sparse", ev, ev_ref, ends[0], ends[1], ends[2], ends_ref[0],
                ends_ref[1], ends_ref[2]);
        failures++;
      }
    }
  }
  if (rank == 0)
    printf("%-10s %u ranks (%s, %" PRIu64 " links cut, lookahead %" PRIu64 " ps): %" PRIu64
           " events, phases end at %.3f %.3f %.3f us\n",
           name, size, part.scheme, part.cut_links, part.lookahead_ps, ev_ref,
           (double)ends_ref[0] / 1e6, (double)ends_ref[1] / 1e6, (double)ends_ref[2] / 1e6);
  pdes_partition_free(&part);
  free(ref);
  free(got);
  topo_free(t);
}

int main(void) {
  sim_error err = {0};
  if (pdes_comm_init(&err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  const char *planes[] = {"fabric.topology=multi-plane", "fabric.planes=4",
                          "cluster.nic.per_node=4",      "cluster.gpus_per_node=4",
                          "fabric.switch_radix=8",       "cluster.nodes=16"};
  check("4 planes", planes, 6, false, 0);
  const char *pods[] = {"fabric.tiers=3", "fabric.switch_radix=8", "cluster.nodes=128",
                        "cluster.gpus_per_node=1", "cluster.nic.per_node=1"};
  check("3-tier", pods, 5, false, 0);
  check("3-tier rnd", pods, 5, true, 0);
  /* credit flow control, two packets of buffer per ingress: back-pressure,
   * and credit returns crossing ranks on the reverse channels */
  check("3-tier cr", pods, 5, true, 8192);
  uint64_t bad = pdes_comm_sum_u64((uint64_t)failures);
  uint32_t rank = pdes_comm_rank();
  pdes_comm_finalize();
  if (bad == 0 && rank == 0) printf("fabric prototype: every vertex equals the sequential run\n");
  return bad ? 1 : 0;
}
