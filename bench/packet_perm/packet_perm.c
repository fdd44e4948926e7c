/* Packet fidelity at scale: permutation traffic on 3-tier fat-trees.
 *
 * Every host (one GPU and one NIC per node) sends one flow of --bytes (default
 * 2 MB = 2,000,000 bytes) to a distinct other host (a seeded random
 * derangement), all starting at once; ECMP; 1 us per link; RoCE with PFC and
 * the default DCQCN (--transport, --routing, --cc to change). Radix k gives
 * k^3/4 hosts: 8 -> 128, 16 -> 1,024, 32 -> 8,192.
 *
 * Prints wall and CPU seconds (the machine is shared: CPU time is what
 * fabsim costs, wall time also counts waiting for a core) (setup, simulation), peak RSS, simulated
 * time, FCT mean/p50/p99/max, packets and events, and their rates per wall second.
 *
 * --engine parallel runs the packet fidelity on the parallel engine
 * (src/net/parallel.c): its sequential mode alone, over the ranks under mpirun
 * (rank 0 prints; the partition, windows, events per rank and the share of
 * time in synchronization are added).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fabsim/pdes.h"
#include "net/net_internal.h"

static double cpu_s(void) { /* this process, user + system: what fabsim costs on a shared machine */
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static double peak_rss_mib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

static void usage(void) {
  fprintf(
      stderr,
      "usage: bench_packet_perm [--radix K] [--rate Gbps] [--bytes B] [--transport T]\n"
      "                         [--routing R] [--cc dcqcn|none] [--latency 1us] [--set KEY=V]...\n"
      "                         [--engine sequential|parallel]\n"
      "  defaults: --radix 8 --rate 400 --bytes 2000000 --transport roce --routing ecmp\n"
      "            --cc dcqcn --latency 1us (3 tiers; one GPU and NIC per node)\n");
}

int main(int argc, char **argv) {
  uint64_t radix = 8, rate = 400, bytes = 2000000;
  const char *transport = "roce", *routing = "ecmp", *cc = "dcqcn", *latency = "1us";
  const char *extra[16], *engine = "sequential";
  int nextra = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      usage();
      return 2;
    }
    if (!strcmp(a, "--radix")) radix = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--rate")) rate = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--bytes")) bytes = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--transport")) transport = v;
    else if (!strcmp(a, "--routing")) routing = v;
    else if (!strcmp(a, "--cc")) cc = v;
    else if (!strcmp(a, "--latency")) latency = v;
    else if (!strcmp(a, "--set") && nextra < 16) extra[nextra++] = v;
    else if (!strcmp(a, "--engine")) engine = v;
    else {
      usage();
      return 2;
    }
    i++;
  }
  uint64_t hosts = radix * radix * radix / 4;
  char s_nodes[64], s_radix[64], s_link[64], s_nic[64], s_tr[64], s_ro[64], s_cc[64], s_lat[64];
  snprintf(s_nodes, sizeof s_nodes, "cluster.nodes=%" PRIu64, hosts);
  snprintf(s_radix, sizeof s_radix, "fabric.switch_radix=%" PRIu64, radix);
  snprintf(s_link, sizeof s_link, "fabric.link_bandwidth=%" PRIu64 "Gbps", rate);
  snprintf(s_nic, sizeof s_nic, "cluster.nic.bandwidth=%" PRIu64 "Gbps", rate);
  snprintf(s_tr, sizeof s_tr, "fabric.transport=%s", transport);
  snprintf(s_ro, sizeof s_ro, "fabric.routing=%s", routing);
  snprintf(s_cc, sizeof s_cc, "fabric.roce.cc=%s", cc);
  snprintf(s_lat, sizeof s_lat, "fabric.link_latency=%s", latency);
  const char *sets[32] = {s_nodes,
                          "cluster.gpus_per_node=1",
                          "cluster.nic.per_node=1",
                          "fabric.tiers=3",
                          s_radix,
                          s_link,
                          s_nic,
                          s_tr,
                          s_ro,
                          s_cc,
                          s_lat,
                          "simulation.fidelity=packet"};
  bool par = !strcmp(engine, "parallel");
  if (!par && strcmp(engine, "sequential")) {
    usage();
    return 2;
  }
  sets[12] = par ? "simulation.engine=parallel" : "simulation.engine=sequential";
  int nsets = 13;
  for (int i = 0; i < nextra; i++) sets[nsets++] = extra[i];

  double t0 = sim_wall_s();
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_error err = {0};
  if (cfg_load(&cfg, &doc, NULL, sets, nsets, &err) != SIM_OK ||
      topo_build(&t, &cfg, doc, &err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  uint32_t n = topo_gpu_count(t);
  be_xfer *x = sim_malloc(n * sizeof *x);
  uint32_t *dst = sim_malloc(n * sizeof *dst);
  sim_rng r;
  sim_rng_init(&r, cfg.simulation.seed, "bench.perm");
  for (uint32_t i = 0; i < n; i++) dst[i] = i;
  for (uint32_t i = n - 1; i > 0; i--) { /* Sattolo: a single cycle, so no fixed point */
    uint32_t j = (uint32_t)sim_rng_below(&r, i), tmp = dst[i];
    dst[i] = dst[j];
    dst[j] = tmp;
  }
  for (uint32_t i = 0; i < n; i++)
    x[i] = (be_xfer){.src_gpu = i,
                     .dst_gpu = dst[i],
                     .bytes = bytes,
                     .flow_hash = sim_hash_u64((uint64_t)i << 32 | dst[i])};
  sim_ctx *sim = sim_create(cfg.simulation.seed);
  be_backend *b =
      par ? be_packet_create_parallel(sim, t, &cfg, &err) : be_packet_create(sim, t, &cfg);
  if (!b) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  bool rank0 = !par || pdes_comm_rank() == 0;
  if (!rank0 && !freopen("/dev/null", "w", stdout)) return 3;
  double t1 = sim_wall_s(), c1 = cpu_s();
  be_submit_phase(b, x, n, 1, NULL, NULL);
  /* run in 1 us slices to sample the event queue's size; the horizon is
   * kept here because sim_now stays at the last event run (a gap of more
   * than a slice with no events must not stall the loop) */
  uint64_t events = 0;
  size_t pending_max = 0;
  simtime_ps horizon = 0;
  if (par) events = ev_run(sim, SIM_TIME_MAX); /* the engine runs as ev.c's co-engine */
  while (!par && sim_pending(sim) > 0) {
    horizon += SIM_PS_PER_US;
    events += ev_run(sim, horizon);
    if (sim_pending(sim) > pending_max) pending_max = sim_pending(sim);
  }
  double t2 = sim_wall_s(), cpu = cpu_s() - c1;
  be_stats st;
  b->ops->stats(b, &st);
  net__ext ext;
  net__ext_stats(b, &ext);
  be_parallel_info pi = {0};
  if (par) {
    be_parallel_info_get(b, &pi);
    events = sim_events(sim); /* this context's and the engine's, all ranks */
  }
  double wall = t2 - t1;
  printf("packet_perm: radix %" PRIu64 ", %u hosts, %" PRIu64
         " Gb/s, %s latency, %s, %s, cc %s, "
         "%" PRIu64 " bytes per flow\n",
         radix, n, rate, latency, transport, routing, cc, bytes);
  printf("  finished      %s (%" PRIu64 " of %u transfers)\n", st.transfers == n ? "yes" : "NO",
         st.transfers, n);
  printf("  wall          %.3f s simulation (+ %.3f s setup), CPU %.3f s\n", wall, t1 - t0, cpu);
  printf("  peak RSS      %.1f MiB\n", peak_rss_mib());
  printf("  sim time      %.3f us\n", sim_ps_to_s(sim_now(sim)) * 1e6);
  printf("  FCT           mean %.2f us, p50 %.2f us, p99 %.2f us, max %.2f us\n",
         st.fct_mean_s * 1e6, sim_ps_to_s(st.fct_p50) * 1e6, sim_ps_to_s(st.fct_p99) * 1e6,
         sim_ps_to_s(st.fct_max) * 1e6);
  printf("  packets       %" PRIu64 " data (+%" PRIu64 " retransmitted, %" PRIu64
         " ACKs), %.2f M/s wall\n",
         st.packets, st.retransmits, ext.acks, (double)st.packets / wall / 1e6);
  printf("  events        %" PRIu64 ", %.2f M/s wall, %.2f M/s CPU, %.1f per data packet\n", events,
         (double)events / wall / 1e6, (double)events / cpu / 1e6,
         (double)events / (double)(st.packets ? st.packets : 1));
  printf("  network       ECN marks %" PRIu64 ", CNPs %" PRIu64 ", PFC pauses %" PRIu64
         " (%.1f us paused), drops %" PRIu64 ", max queue %" PRIu64
         " B, link utilization max %.3f\n",
         st.ecn_marks, st.cnps, st.pfc_pauses, sim_ps_to_s(st.pfc_paused) * 1e6, st.drops,
         st.max_queue_bytes, st.link_utilization_max);
  if (par)
    printf("  parallel      %u rank%s (%s), %" PRIu64 " of %" PRIu64
           " links cut, lookahead %.0f ns, "
           "%" PRIu64 " windows, %.1f%% of events crossed ranks; busiest rank %" PRIu64
           " events, %.3f s in the engine of which %.3f s synchronizing: %.2f M events/s per rank "
           "outside synchronization\n",
           pi.ranks, pi.ranks == 1 ? "" : "s", pi.scheme, pi.cut_links, pi.links,
           (double)pi.lookahead / SIM_PS_PER_NS, pi.windows, 100.0 * pi.crossing_frac,
           pi.events_max, pi.wall_max, pi.sync_max,
           pi.wall_max > pi.sync_max ? (double)pi.events_max / (pi.wall_max - pi.sync_max) / 1e6
                                     : 0.0);
  printf("  memory        packet pool %" PRIu64 " (most alive %" PRIu64
         "), events pending at most %zu, "
         "max link sharing %u\n",
         ext.pkts_alloc, ext.inflight_max, pending_max, st.max_link_sharing);
  int rc = st.transfers == n ? 0 : 1;
  be_destroy(b);
  sim_destroy(sim);
  sim_free(x);
  sim_free(dst);
  topo_free(t);
  cfg_free(&cfg, doc);
  if (par && pdes_comm_launched() && pdes_comm_built()) pdes_comm_finalize();
  return rc;
}
