/* Protocols and the tuner.
 *
 * The constants are NCCL's public tuning model (src/graph/tuning.cc,
 * NCCL 2.2x): base latency per algorithm and protocol (our launch
 * overhead), per-hop latency over NVLink and over the network (these
 * latencies come from the scenario, workload.collective.latency.*, whose
 * defaults are NCCL's; fabsim calibrate fits them), the
 * protocols' line formats, and the thread counts and bytes-per-thread
 * thresholds that decide how many channels a message gets
 * (src/enqueue.cc). docs/validation.md, "Collectives", lists each with its
 * source. The mechanism is ours: protocol bytes ride on the transfers, the
 * latency beyond the routed path's becomes a fixed delay per phase, the
 * launch a delay per call, so all three fidelities see them alike.
 */
#include <math.h>

#include "coll/coll_internal.h"

enum { PROTO_LL, PROTO_LL128, PROTO_SIMPLE, NPROTO };

static int proto_index(cfg_coll_protocol p) {
  return p == CFG_PROTO_LL ? PROTO_LL : p == CFG_PROTO_LL128 ? PROTO_LL128 : PROTO_SIMPLE;
}

/* NCCL's defaults, used when a spec carries no latencies: the same figures
 * as the schema's defaults of workload.collective.latency.* (a test in
 * tests/calib checks they agree). */
static const cfg_coll_latency nccl_latency = {
    /* launch, NVLink hop, network hop; the tree's launch, NVLink hop, network hop (ps) */
    .ll = {6600000, 600000, 2700000, 6800000, 600000, 5000000},
    .ll128 = {14000000, 1900000, 4000000, 14000000, 1250000, 8500000},
    .simple = {8400000, 3400000, 14000000, 8400000, 4000000, 14000000},
};

static double ps_us(simtime_ps ps) { return (double)ps / 1e6; }

coll_protocol_params coll_protocol_params_of(const cfg_coll_latency *lat, cfg_coll_algorithm a,
                                             cfg_coll_protocol p) {
  static const uint32_t num[NPROTO] = {2, 16, 1}, den[NPROTO] = {1, 15, 1};
  if (!lat) lat = &nccl_latency;
  int i = proto_index(p);
  const cfg_proto_latency *l = i == PROTO_LL ? &lat->ll : i == PROTO_LL128 ? &lat->ll128 : &lat->simple;
  bool tree = a == CFG_ALGO_TREE;
  return (coll_protocol_params){
      .wire_num = num[i], .wire_den = den[i],
      .launch_us = ps_us(tree ? l->tree_launch : l->launch),
      .hop_nvlink_us = ps_us(tree ? l->tree_nvlink_hop : l->nvlink_hop),
      .hop_net_us = ps_us(tree ? l->tree_network_hop : l->network_hop)};
}

/* What the tuner and the latency model need to know of the ranks'
 * placement: nodes m, ranks per node g (first node), NICs per node, and the
 * routed latency and achievable rate of one hop inside a node and one
 * across nodes (0 when there is no such pair). O(ranks) + two routes. */
typedef struct probe {
  uint32_t m, g, npn;
  simtime_ps wire_intra, wire_inter;
  double b_intra, b_inter; /* bytes/s */
} probe;

static void probe_of(const topo *t, const coll_spec *s, probe *pr) {
  *pr = (probe){0};
  coll__node_blocks(t, s->ranks, s->nranks, &pr->m, &pr->g);
  pr->npn = topo_nic_count(t) / topo_node_count(t);
  topo_path p;
  if (s->nranks >= 2 && topo_gpu_node(t, s->ranks[1]) == topo_gpu_node(t, s->ranks[0]) &&
      topo_route(t, s->ranks[0], s->ranks[1], 0, &p) == SIM_OK) {
    pr->wire_intra = topo_path_latency(t, &p);
    pr->b_intra = (double)topo_path_bottleneck(t, &p) / 8;
  }
  for (uint32_t i = 1; i < s->nranks; i++)
    if (topo_gpu_node(t, s->ranks[i]) != topo_gpu_node(t, s->ranks[0])) {
      /* same local index: the rail a rail-aligned hop uses */
      uint32_t dst = s->ranks[i], want = coll__gpu_local(t, s->ranks[0]);
      for (uint32_t j = i; j < s->nranks && topo_gpu_node(t, s->ranks[j]) == topo_gpu_node(t, dst); j++)
        if (coll__gpu_local(t, s->ranks[j]) == want) dst = s->ranks[j];
      if (topo_route(t, s->ranks[0], dst, 0, &p) == SIM_OK) {
        pr->wire_inter = topo_path_latency(t, &p);
        pr->b_inter = (double)topo_path_bottleneck(t, &p) / 8;
      }
      break;
    }
}

static simtime_ps us_ps(double us) { return us > 0 ? (simtime_ps)llround(us * 1e6) : 0; }

/* Protocol latency above the routed path's, per hop. */
static simtime_ps above(double hop_us, simtime_ps wire) {
  simtime_ps h = us_ps(hop_us);
  return h > wire ? h - wire : 0;
}

/* Steps of a ring phase and how many of them cross nodes (NCCL's count:
 * a piece of data crosses every node boundary once per pass). */
static void ring_steps(cfg_coll_op op, uint32_t n, uint32_t m, uint64_t *steps, uint64_t *inter) {
  uint64_t passes = op == CFG_COLL_ALLREDUCE ? 2 : 1;
  *steps = passes * (n - 1);
  *inter = m > 1 ? passes * (m - 1) : 0;
}

/* Closed-form time of a ring (AllReduce, ReduceScatter, AllGather,
 * Broadcast as n-1 steps) with protocol p and k channels, seconds: every
 * step moves one chunk per channel; a GPU's NVLink port carries all k, a
 * NIC the channels it serves (rail-aligned rings, one NIC per channel). */
static double ring_estimate(const probe *pr, const coll_spec *s, cfg_coll_protocol p, uint32_t k) {
  coll_protocol_params q = coll_protocol_params_of(s->latency, CFG_ALGO_RING, p);
  uint32_t n = s->nranks;
  uint64_t steps, inter;
  ring_steps(s->op, n, pr->m, &steps, &inter);
  double chunk = (double)coll__ceil_div(coll__ceil_div(s->bytes, (uint64_t)n * k) * q.wire_num, q.wire_den);
  double step = 0;
  if (pr->g > 1 && pr->b_intra > 0) step = sim_ps_to_s(pr->wire_intra) + k * chunk / pr->b_intra;
  if (pr->m > 1 && pr->b_inter > 0) {
    uint32_t nics = pr->npn < k ? pr->npn : k, per_nic = (k + nics - 1) / nics;
    double net = sim_ps_to_s(pr->wire_inter) + per_nic * chunk / pr->b_inter;
    if (net > step) step = net;
  }
  simtime_ps wire = pr->m > 1 ? pr->wire_inter : pr->wire_intra; /* every step's, lock-step */
  simtime_ps fixed = (simtime_ps)(steps - inter) * above(q.hop_nvlink_us, wire) +
                     (simtime_ps)inter * above(q.hop_net_us, wire);
  return q.launch_us * 1e-6 + (double)steps * step + sim_ps_to_s(fixed);
}

/* NCCL's channel rule: fewer channels while the message is under
 * channels x threads x bytes per thread (ring LL: x ranks). */
static uint32_t tune_channels(const coll_spec *s, cfg_coll_protocol p) {
  static const uint64_t threads[NPROTO] = {512, 640, 512}, per_thread[NPROTO] = {8, 8, 64};
  int i = proto_index(p);
  uint64_t unit = threads[i] * per_thread[i] * (i == PROTO_LL ? s->nranks : 1);
  uint32_t nc = s->channels;
  while (nc > 1 && s->bytes < nc * unit) nc--;
  return nc;
}

void coll_tune(const topo *t, const coll_spec *s, cfg_coll_algorithm *algorithm,
               cfg_coll_protocol *protocol, uint32_t *channels, double *est_s) {
  probe pr;
  probe_of(t, s, &pr);
  cfg_coll_algorithm a = s->algorithm;
  if (a == CFG_ALGO_AUTO)
    a = s->op != CFG_COLL_ALLTOALL ? CFG_ALGO_RING : pr.m > 1 ? CFG_ALGO_PXN : CFG_ALGO_PAIRWISE;
  static const cfg_coll_protocol all[NPROTO] = {CFG_PROTO_LL, CFG_PROTO_LL128, CFG_PROTO_SIMPLE};
  cfg_coll_protocol best = s->protocol;
  double best_t = INFINITY;
  if (a == CFG_ALGO_PAIRWISE || a == CFG_ALGO_PXN) {
    /* point-to-point: LL up to 16 KiB per peer (NCCL_P2P_LL_THRESHOLD), else Simple */
    if (best == CFG_PROTO_AUTO)
      best = s->nranks && s->bytes / s->nranks <= 16384 ? CFG_PROTO_LL : CFG_PROTO_SIMPLE;
  } else {
    for (int i = 0; i < NPROTO; i++) {
      if (s->protocol != CFG_PROTO_AUTO && all[i] != s->protocol) continue;
      double e = ring_estimate(&pr, s, all[i], tune_channels(s, all[i]));
      if (e < best_t) best_t = e, best = all[i];
    }
  }
  *algorithm = a;
  *protocol = best;
  *channels = a == CFG_ALGO_RING ? tune_channels(s, best) : s->channels;
  if (est_s) *est_s = a == CFG_ALGO_RING ? ring_estimate(&pr, s, best, *channels) : NAN;
}

void coll__apply_protocol(coll_plan *p, const topo *t, const coll_spec *s) {
  if (p->protocol == CFG_PROTO_NONE || p->nphases == 0) return;
  probe pr;
  probe_of(t, s, &pr);
  coll_protocol_params q = coll_protocol_params_of(s->latency, p->algorithm, p->protocol);
  p->launch = us_ps(q.launch_us);
  /* A step already costs its slowest transfer's routed latency (the
   * phase ends with it): a hop of the protocol adds what it takes beyond
   * that; across nodes every ring step waits for a network hop. */
  simtime_ps w_intra = pr.wire_intra, w_inter = pr.m > 1 ? pr.wire_inter : pr.wire_intra;
  /* wire bytes: the pool once, phases that are not slices of it each */
  if (q.wire_num != q.wire_den) {
    for (size_t j = 0; j < p->pool_n; j++)
      p->pool[j].bytes = coll__ceil_div(p->pool[j].bytes * q.wire_num, q.wire_den);
    for (size_t i = 0; i < p->nphases; i++)
      if (!p->phases[i].in_pool)
        for (size_t j = 0; j < p->phases[i].n; j++)
          p->phases[i].x[j].bytes = coll__ceil_div(p->phases[i].x[j].bytes * q.wire_num, q.wire_den);
  }
  bool ring = p->algorithm == CFG_ALGO_RING && p->op != CFG_COLL_BROADCAST && p->nphases == 1;
  for (size_t i = 0; i < p->nphases; i++) {
    coll_phase *ph = &p->phases[i];
    if (ring) {
      uint64_t steps, ninter;
      ring_steps(p->op, s->nranks, pr.m, &steps, &ninter);
      ph->fixed = (simtime_ps)(steps - ninter) * above(q.hop_nvlink_us, w_inter) +
                  (simtime_ps)ninter * above(q.hop_net_us, w_inter);
      continue;
    }
    bool crosses = false;
    for (size_t j = 0; j < ph->n && !crosses; j++)
      crosses = topo_gpu_node(t, ph->x[j].src_gpu) != topo_gpu_node(t, ph->x[j].dst_gpu);
    ph->fixed = (simtime_ps)ph->repeat *
                (crosses ? above(q.hop_net_us, w_inter) : above(q.hop_nvlink_us, w_intra));
  }
}
