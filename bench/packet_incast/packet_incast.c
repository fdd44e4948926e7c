/* Packet fidelity: an N-to-1 incast (default 32 senders x 1 MB = 1,000,000
 * bytes each) behind one leaf of a 2-tier fat-tree (radix 64: the 33 hosts
 * share one leaf), 1 us per link, at 100 or 400 Gb/s, on RoCE with PFC
 * (default; DCQCN on), RoCE without congestion control, InfiniBand and lossy
 * Ethernet (--transport, --cc). Prints wall seconds, peak RSS, simulated time
 * against the ideal N S / (rate x payload/wire), FCT mean/p50/p99/max, the
 * network counters, and packets and events per wall second.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

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
  fprintf(stderr,
          "usage: bench_packet_incast [--senders N] [--bytes B] [--rate Gbps] [--transport T]\n"
          "                           [--cc dcqcn|none] [--latency 1us] [--set KEY=V]...\n"
          "  defaults: --senders 32 --bytes 1000000 --rate 400 --transport roce --cc dcqcn\n"
          "            --latency 1us (2 tiers, radix 64, one GPU and NIC per node)\n");
}

int main(int argc, char **argv) {
  uint64_t senders = 32, bytes = 1000000, rate = 400;
  const char *transport = "roce", *cc = "dcqcn", *latency = "1us";
  const char *extra[16];
  int nextra = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      usage();
      return 2;
    }
    if (!strcmp(a, "--senders")) senders = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--bytes")) bytes = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--rate")) rate = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--transport")) transport = v;
    else if (!strcmp(a, "--cc")) cc = v;
    else if (!strcmp(a, "--latency")) latency = v;
    else if (!strcmp(a, "--set") && nextra < 16) extra[nextra++] = v;
    else {
      usage();
      return 2;
    }
    i++;
  }
  if (senders < 1 || senders > 4096) {
    usage();
    return 2;
  }
  char s_nodes[64], s_link[64], s_nic[64], s_tr[64], s_cc[64], s_lat[64];
  snprintf(s_nodes, sizeof s_nodes, "cluster.nodes=%" PRIu64, senders + 1);
  snprintf(s_link, sizeof s_link, "fabric.link_bandwidth=%" PRIu64 "Gbps", rate);
  snprintf(s_nic, sizeof s_nic, "cluster.nic.bandwidth=%" PRIu64 "Gbps", rate);
  snprintf(s_tr, sizeof s_tr, "fabric.transport=%s", transport);
  snprintf(s_cc, sizeof s_cc, "fabric.roce.cc=%s", cc);
  snprintf(s_lat, sizeof s_lat, "fabric.link_latency=%s", latency);
  const char *sets[32] = {s_nodes,
                          "cluster.gpus_per_node=1",
                          "cluster.nic.per_node=1",
                          "fabric.tiers=2",
                          "fabric.switch_radix=64",
                          s_link,
                          s_nic,
                          s_tr,
                          s_cc,
                          s_lat,
                          "simulation.fidelity=packet"};
  int nsets = 11;
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
  be_xfer *x = sim_malloc(senders * sizeof *x);
  for (uint32_t i = 0; i < senders; i++)
    x[i] = (be_xfer){.src_gpu = i + 1, .dst_gpu = 0, .bytes = bytes, .flow_hash = sim_hash_u64(i)};
  sim_ctx *sim = sim_create(cfg.simulation.seed);
  be_backend *b = be_packet_create(sim, t, &cfg);
  double t1 = sim_wall_s(), c1 = cpu_s();
  be_submit_phase(b, x, senders, 1, NULL, NULL);
  uint64_t events = ev_run(sim, SIM_TIME_MAX);
  double t2 = sim_wall_s(), wall = t2 - t1, cpu = cpu_s() - c1;
  be_stats st;
  b->ops->stats(b, &st);
  net__ext ext;
  net__ext_stats(b, &ext);
  double hdr = cfg.fabric.transport == CFG_TRANSPORT_INFINIBAND ? 26 : 82;
  double ideal = (double)senders * (double)bytes * 8 /
                 ((double)cfg.cluster.nic.bandwidth * cfg.fabric.mtu / (cfg.fabric.mtu + hdr));
  printf("packet_incast: %" PRIu64 " x %" PRIu64 " bytes -> 1, %" PRIu64
         " Gb/s, %s latency, %s, cc %s\n",
         senders, bytes, rate, latency, transport, cc);
  printf("  finished      %s (%" PRIu64 " of %" PRIu64 " transfers)\n",
         st.transfers == senders ? "yes" : "NO", st.transfers, senders);
  printf("  wall          %.3f s simulation (+ %.3f s setup), CPU %.3f s\n", wall, t1 - t0, cpu);
  printf("  peak RSS      %.1f MiB\n", peak_rss_mib());
  printf("  sim time      %.3f us (ideal N S / goodput %.3f us, x%.4f)\n",
         sim_ps_to_s(sim_now(sim)) * 1e6, ideal * 1e6, sim_ps_to_s(sim_now(sim)) / ideal);
  printf("  FCT           mean %.2f us, p50 %.2f us, p99 %.2f us, max %.2f us\n",
         st.fct_mean_s * 1e6, sim_ps_to_s(st.fct_p50) * 1e6, sim_ps_to_s(st.fct_p99) * 1e6,
         sim_ps_to_s(st.fct_max) * 1e6);
  printf("  packets       %" PRIu64 " data (+%" PRIu64 " retransmitted), %.2f M/s wall\n",
         st.packets, st.retransmits, (double)st.packets / wall / 1e6);
  printf("  events        %" PRIu64 ", %.2f M/s wall, %.2f M/s CPU\n", events,
         (double)events / wall / 1e6, (double)events / cpu / 1e6);
  printf("  network       ECN marks %" PRIu64 ", CNPs %" PRIu64 ", PFC pauses %" PRIu64
         " (%.1f us paused), drops %" PRIu64 ", timeouts %" PRIu64 ", max queue %" PRIu64 " B\n",
         st.ecn_marks, st.cnps, st.pfc_pauses, sim_ps_to_s(st.pfc_paused) * 1e6, st.drops,
         ext.timeouts, st.max_queue_bytes);
  int rc = st.transfers == senders ? 0 : 1;
  be_destroy(b);
  sim_destroy(sim);
  sim_free(x);
  topo_free(t);
  cfg_free(&cfg, doc);
  return rc;
}
