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
#include <string.h>

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
    /* the in-switch algorithms: NVLink hop, network hop (ps) */
    .nvls = {25000000, 18000000},
    .nvlstree = {25000000, 20900000},
    .collnet = {3700000, 31000000},
};

static double ps_us(simtime_ps ps) { return (double)ps / 1e6; }

coll_protocol_params coll_protocol_params_of(const cfg_coll_latency *lat, cfg_coll_algorithm a,
                                             cfg_coll_protocol p) {
  static const uint32_t num[NPROTO] = {2, 16, 1}, den[NPROTO] = {1, 15, 1};
  if (!lat) lat = &nccl_latency;
  int i = proto_index(p);
  const cfg_proto_latency *l = i == PROTO_LL      ? &lat->ll
                               : i == PROTO_LL128 ? &lat->ll128
                                                  : &lat->simple;
  bool tree = a == CFG_ALGO_TREE;
  return (coll_protocol_params){.wire_num = num[i],
                                .wire_den = den[i],
                                .launch_us = ps_us(tree ? l->tree_launch : l->launch),
                                .hop_nvlink_us = ps_us(tree ? l->tree_nvlink_hop : l->nvlink_hop),
                                .hop_net_us = ps_us(tree ? l->tree_network_hop : l->network_hop)};
}

/* What the tuner and the latency model need to know of the ranks'
 * placement: nodes m, ranks per node g (first node), NICs per node, and the
 * routed latency and achievable rate of one hop inside a node and one
 * across nodes (0 when there is no such pair). O(ranks) + three routes. */
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
  /* across nodes: to the same rail (the hop a rail-aligned ring takes) on
   * the next node and on the last, the farthest in index (other leaves and
   * pods): the slower of the two paces a lock-step ring */
  uint32_t want = coll__gpu_local(t, s->ranks[0]);
  uint32_t node0 = topo_gpu_node(t, s->ranks[0]);
  for (int end = 0; end < 2 && pr->m > 1; end++) {
    uint32_t i = 1;
    if (end) { /* the first rank of the last node */
      i = s->nranks - 1;
      while (i > 0 &&
             topo_gpu_node(t, s->ranks[i - 1]) == topo_gpu_node(t, s->ranks[s->nranks - 1]))
        i--;
    } else {
      while (i < s->nranks && topo_gpu_node(t, s->ranks[i]) == node0) i++;
    }
    uint32_t dst = s->ranks[i];
    for (uint32_t j = i; j < s->nranks && topo_gpu_node(t, s->ranks[j]) == topo_gpu_node(t, dst);
         j++)
      if (coll__gpu_local(t, s->ranks[j]) == want) dst = s->ranks[j];
    if (topo_route(t, s->ranks[0], dst, 0, &p) == SIM_OK) {
      simtime_ps w = topo_path_latency(t, &p);
      double b = (double)topo_path_bottleneck(t, &p) / 8;
      if (w > pr->wire_inter) pr->wire_inter = w;
      if (pr->b_inter == 0 || b < pr->b_inter) pr->b_inter = b;
    }
  }
}

static simtime_ps us_ps(double us) { return us > 0 ? (simtime_ps)llround(us * 1e6) : 0; }
static simtime_ps s_ps(double s) { return s > 0 ? (simtime_ps)llround(s * 1e12) : 0; }

/* Protocol latency above the routed path's, per hop. */
static simtime_ps above(double hop_us, simtime_ps wire) {
  simtime_ps h = us_ps(hop_us);
  return h > wire ? h - wire : 0;
}

/* NCCL's latencies for the ranks' placement (tuning.cc ncclTopoTuneModel):
 * with one rank a node (ppn 1) the ring's network hop is the tree's ("With
 * ppn=1 latencies are fully exposed, use the Tree network latency"; the
 * tree has it already, the in-switch algorithms need g > 1, point-to-point
 * is not in the model): a 2-rank ring LL across 2 nodes 6.6 + 2 x 5.0 us,
 * not 6.6 + 2 x 2.7. */
static coll_protocol_params params_at(const coll_spec *s, const probe *pr, cfg_coll_algorithm a,
                                      cfg_coll_protocol p) {
  coll_protocol_params q = coll_protocol_params_of(s->latency, a, p);
  if (pr->m > 1 && s->nranks == pr->m && a == CFG_ALGO_RING)
    q.hop_net_us = coll_protocol_params_of(s->latency, CFG_ALGO_TREE, p).hop_net_us;
  return q;
}

/* Steps of a ring phase and how many of them cross nodes (NCCL's count:
 * a piece of data crosses every node boundary once per pass). */
static void ring_steps(cfg_coll_op op, uint32_t n, uint32_t m, uint64_t *steps, uint64_t *inter) {
  uint64_t passes = op == CFG_COLL_ALLREDUCE ? 2 : 1;
  *steps = passes * (n - 1);
  *inter = m > 1 ? passes * (m - 1) : 0;
}

/* A ring channel's data-rate cap, bytes/s (INFINITY: none): LL128
 * perChMaxRingLL128Bws by architecture; LL llMaxBws, the whole ring's, so
 * 1/k of it per channel: on one node by architecture, across nodes the x86
 * Intel row by node count (fabsim does not model the host CPU). These are
 * the GPU threads' limits polling flags, not the wire's. */
static double ring_channel_cap(const coll_spec *s, uint32_t m, cfg_coll_protocol p, uint32_t k) {
  static const double ll128[COLL_NARCH] = {20.0, 36.7, 40.0};
  static const double ll_node[COLL_NARCH] = {87.7, 141.0, 282.0};
  static const double ll_net[2] = {39.0, 20.4}; /* 2 nodes, more */
  if (p == CFG_PROTO_LL128) return ll128[coll__nccl_arch(s->gpu)] * 1e9;
  if (p == CFG_PROTO_LL)
    return (m <= 1 ? ll_node[coll__nccl_arch(s->gpu)] : ll_net[m > 2]) * 1e9 / k;
  return INFINITY;
}

/* NCCL's limits on a tree channel's data rate, bytes/s (ncclTopoTuneModel,
 * "Various model refinements"; INFINITY: none), what a channel's share of
 * its ports (c: the NVLink port's over k channels, the NIC's over the
 * channels it serves) and NCCL's caps leave it:
 *   Simple  perChMaxTreeBws (coll__nccl_tree_cap; NCCL's bus bandwidth
 *           min(0.92 ch bw, ch cap) of which the algorithm gets half: a
 *           channel's 2 S/k at no more than the cap; the 0.92 is NCCL's own
 *           wire loss, which fabsim's achievable rates already hold);
 *   LL      min(c, cap) / 3.8, within llMaxBws (the whole tree's, 1/k a
 *           channel, as the ring's);
 *   LL128   min(c, cap) x 7/9 on one node (120/128 across nodes, which its
 *           wire bytes already are: the cap alone), within
 *           perChMaxTreeLL128Bws.
 * The caps multiply the tree graph's channels, one a NIC as fabsim's are
 * (nccl.c). These are the GPU threads' limits, not the wire's: a floor on
 * the tree's throughput (coll__tree_floor_ps), not on each step, since
 * NCCL forwards lines as they arrive and a small message's hops do not
 * each pay its whole chunk at the capped rate. */
static double tree_model_rate(const coll_spec *s, const probe *pr, cfg_coll_protocol p,
                              uint32_t k) {
  double cap = coll__nccl_tree_cap(s->gpu, pr->m, CFG_PROTO_SIMPLE);
  if (p != CFG_PROTO_LL && p != CFG_PROTO_LL128) return cap;
  uint32_t nics = pr->npn < k ? pr->npn : k, per_nic = nics ? (k + nics - 1) / nics : k;
  double ch = pr->g > 1 && pr->b_intra > 0 ? pr->b_intra / k : INFINITY;
  if (pr->m > 1 && pr->b_inter > 0) ch = fmin(ch, pr->b_inter / per_nic);
  double simple = fmin(ch, cap);
  if (p == CFG_PROTO_LL128)
    return fmin(pr->m > 1 ? cap : simple * 7.0 / 9.0,
                coll__nccl_tree_cap(s->gpu, pr->m, CFG_PROTO_LL128));
  return fmin(simple / 3.8, ring_channel_cap(s, pr->m, p, k));
}

/* The floor's rate: the model's, at NCCL's measured share of it for the
 * message's size (coll__nccl_tree_correction; NVIDIA GPUs: RCCL's table is
 * a choice bias, rccl.c). A floor, not a factor on fabsim's pipeline: where
 * the tree's own chunks and hops are slower than NCCL's corrected model,
 * they set the time, so no loss is counted twice. */
static double tree_floor_rate(const coll_spec *s, const probe *pr, cfg_coll_protocol p,
                              uint32_t k) {
  if (k == 0) return INFINITY;
  double r = tree_model_rate(s, pr, p, k);
  return coll__gpu_amd(s->gpu) ? r : r * coll__nccl_tree_correction(p, s->bytes);
}

/* Slices a ring step is forwarded in: Simple ALLREDUCE_CHUNKSTEPS /
 * ALLREDUCE_SLICESTEPS = (NCCL_STEPS/2) / (NCCL_STEPS/4) = 2 (collectives.h;
 * the same for ReduceScatter and AllGather); LL and LL128 forward each
 * thread's lines as their flags arrive, one unit being the threads' line
 * data (LL 512 threads x 8 data bytes of a 16-byte line, LL128 640 threads x
 * 16 bytes of 128-byte lines, 120/128 of it data). */
static double ring_slices(cfg_coll_protocol p, double chunk) {
  if (p != CFG_PROTO_LL && p != CFG_PROTO_LL128) return 2;
  double unit = p == CFG_PROTO_LL ? 512.0 * 8 : 640.0 * 16 * 120 / 128;
  return chunk > unit ? chunk / unit : 1;
}

/* Time of one ring step's data per channel at the probed rates (seconds),
 * without the path latency: a GPU's NVLink port carries all k channels, a
 * NIC the channels it serves (rail-aligned rings, one NIC per channel). */
static double ring_step_data_s(const probe *pr, double chunk_wire, uint32_t k) {
  double step = 0;
  if (pr->g > 1 && pr->b_intra > 0) step = k * chunk_wire / pr->b_intra;
  if (pr->m > 1 && pr->b_inter > 0) {
    uint32_t nics = pr->npn < k ? pr->npn : k, per_nic = (k + nics - 1) / nics;
    double net = per_nic * chunk_wire / pr->b_inter;
    if (net > step) step = net;
  }
  return step;
}

/* The ring phase's delay beyond its steps' transfers (seconds), as NCCL's
 * ring runs: a channel's step cannot beat its protocol's cap (LL, LL128),
 * and the steps pipeline: a rank forwards slice i of a step while slice
 * i+1 arrives, and the hop latency of one slice overlaps the transfer of
 * the others. In steady state a piece of data goes round the ring (n hops
 * of latency) while each rank sends n steps, so the latency beyond the
 * path's is hidden up to (1 - 1/slices) of every step's transfer time:
 *   fixed = steps (t_cap - t_data)+ + (H - steps (1 - 1/slices) t_step)+,
 * H the protocol's hop latencies above the path's (NCCL's count, as before),
 * t_step = max(t_data, t_cap). A lock-step ring (one slice) pays all of H. */
static double ring_delay_s(const probe *pr, const coll_spec *s, cfg_coll_protocol p,
                           const coll_protocol_params *q, uint32_t k) {
  uint64_t steps, inter;
  ring_steps(s->op, s->nranks, pr->m, &steps, &inter);
  double chunk = (double)coll__ceil_div(s->bytes, (uint64_t)s->nranks * k);
  double wire_chunk = (double)coll__ceil_div(
      coll__bw_bytes(s, CFG_ALGO_RING, (uint64_t)chunk) * q->wire_num, q->wire_den);
  double t_data = ring_step_data_s(pr, wire_chunk, k);
  double t_cap = chunk / ring_channel_cap(s, pr->m, p, k);
  double t_step = t_cap > t_data ? t_cap : t_data;
  simtime_ps wire = pr->m > 1 ? pr->wire_inter : pr->wire_intra; /* every step's, lock-step */
  double h = sim_ps_to_s((simtime_ps)(steps - inter) * above(q->hop_nvlink_us, wire) +
                         (simtime_ps)inter * above(q->hop_net_us, wire));
  double hidden = (double)steps * (1 - 1 / ring_slices(p, chunk)) * t_step;
  return (double)steps * (t_step - t_data) + (h > hidden ? h - hidden : 0);
}

/* Closed-form time of a ring (AllReduce, ReduceScatter, AllGather) with
 * protocol p and k channels, seconds: launch + steps (wire + t_data) +
 * ring_delay_s. */
static double ring_estimate(const probe *pr, const coll_spec *s, cfg_coll_protocol p, uint32_t k) {
  coll_protocol_params q = params_at(s, pr, CFG_ALGO_RING, p);
  uint64_t steps, inter;
  ring_steps(s->op, s->nranks, pr->m, &steps, &inter);
  double chunk = (double)coll__ceil_div(
      coll__bw_bytes(s, CFG_ALGO_RING, coll__ceil_div(s->bytes, (uint64_t)s->nranks * k)) *
          q.wire_num,
      q.wire_den);
  double step = 0;
  if (pr->g > 1 && pr->b_intra > 0) step = sim_ps_to_s(pr->wire_intra) + k * chunk / pr->b_intra;
  if (pr->m > 1 && pr->b_inter > 0) {
    uint32_t nics = pr->npn < k ? pr->npn : k, per_nic = (k + nics - 1) / nics;
    double net = sim_ps_to_s(pr->wire_inter) + per_nic * chunk / pr->b_inter;
    if (net > step) step = net;
  }
  return q.launch_us * 1e-6 + (double)steps * step + ring_delay_s(pr, s, p, &q, k);
}

/* Per-GPU NVLink and per-NIC byte counters for phase_busiest_s; zeroed. */
typedef struct port_loads {
  double *nv_out, *nv_in, *nic_out, *nic_in;
} port_loads;

static void port_loads_init(port_loads *l, const topo *t) {
  uint32_t ng = topo_gpu_count(t), nn = topo_nic_count(t);
  l->nv_out = sim_calloc(2 * (size_t)ng + 2 * (size_t)nn, sizeof *l->nv_out);
  l->nv_in = l->nv_out + ng;
  l->nic_out = l->nv_in + ng;
  l->nic_in = l->nic_out + nn;
}

/* One step of phase ph at the probed rates, seconds, without the path's
 * latency: its busiest GPU port's bytes at the NVLink rate (*nv, transfers
 * inside a node) and its busiest NIC's at the network rate (*net, transfers
 * across; 0 if none). Returns the larger. Leaves l zeroed. O(transfers of
 * the phase). */
static double phase_busiest_s(const topo *t, const coll_phase *ph, const probe *pr, port_loads *l,
                              double *nv, double *net) {
  for (size_t j = 0; j < ph->n; j++) {
    const be_xfer *x = &ph->x[j];
    if (topo_gpu_node(t, x->src_gpu) != topo_gpu_node(t, x->dst_gpu)) {
      l->nic_out[topo_xfer_nic(t, x->src_gpu, x->flow_hash)] += (double)x->bytes;
      l->nic_in[topo_xfer_nic(t, x->dst_gpu, x->flow_hash)] += (double)x->bytes;
    } else {
      l->nv_out[x->src_gpu] += (double)x->bytes;
      l->nv_in[x->dst_gpu] += (double)x->bytes;
    }
  }
  *nv = *net = 0;
  for (size_t j = 0; j < ph->n; j++) {
    const be_xfer *x = &ph->x[j];
    uint32_t a = topo_xfer_nic(t, x->src_gpu, x->flow_hash),
             b = topo_xfer_nic(t, x->dst_gpu, x->flow_hash);
    if (topo_gpu_node(t, x->src_gpu) != topo_gpu_node(t, x->dst_gpu)) {
      double v = (l->nic_out[a] > l->nic_in[b] ? l->nic_out[a] : l->nic_in[b]) / pr->b_inter;
      if (pr->b_inter > 0 && v > *net) *net = v;
    } else {
      double v = (l->nv_out[x->src_gpu] > l->nv_in[x->dst_gpu] ? l->nv_out[x->src_gpu]
                                                               : l->nv_in[x->dst_gpu]) /
                 pr->b_intra;
      if (pr->b_intra > 0 && v > *nv) *nv = v;
    }
  }
  for (size_t j = 0; j < ph->n; j++) {
    const be_xfer *x = &ph->x[j];
    l->nv_out[x->src_gpu] = l->nv_in[x->dst_gpu] = 0;
    l->nic_out[topo_xfer_nic(t, x->src_gpu, x->flow_hash)] =
        l->nic_in[topo_xfer_nic(t, x->dst_gpu, x->flow_hash)] = 0;
  }
  return *nv > *net ? *nv : *net;
}

/* Time of a built plan at the probed rates, seconds: every phase's step
 * takes the later of its busiest NVLink port's bytes plus the NVLink path's
 * latency and its busiest NIC's plus the network path's, repeated, then its
 * fixed delay; the launch first. Exact for plans whose every step is paced by its busiest port on
 * an uncongested fabric (tree, nvls, collnet). O(transfers listed). */
static double plan_estimate(const topo *t, const coll_plan *pl, const probe *pr) {
  port_loads l;
  port_loads_init(&l, t);
  double total = sim_ps_to_s(pl->launch);
  for (size_t i = 0; i < pl->nphases; i++) {
    double nv, net;
    phase_busiest_s(t, &pl->phases[i], pr, &l, &nv, &net);
    double step = nv > 0 ? nv + sim_ps_to_s(pr->wire_intra) : 0;
    if (net > 0 && net + sim_ps_to_s(pr->wire_inter) > step)
      step = net + sim_ps_to_s(pr->wire_inter);
    total += (double)pl->phases[i].repeat * step + sim_ps_to_s(pl->phases[i].fixed);
  }
  sim_free(l.nv_out);
  return total;
}

/* Build spec as algorithm a with protocol p and estimate it; INFINITY when
 * the plan cannot be built. */
static double candidate_estimate(const topo *t, const coll_spec *s, const probe *pr,
                                 cfg_coll_algorithm a, cfg_coll_protocol p, uint32_t k) {
  coll_spec c = *s;
  c.algorithm = a;
  c.protocol = p;
  c.channels = k;
  c.qps = 1;
  coll_plan pl;
  sim_error err;
  if (coll_plan_build(&pl, t, &c, &err) != SIM_OK) return INFINITY;
  double e = plan_estimate(t, &pl, pr);
  coll_plan_free(&pl);
  return e;
}

/* Tree candidates over whole node blocks are estimated from the tree's
 * shape, the built plan's figure without its transfers; others (one node,
 * uneven blocks) on their built plan, three builds and O(transfers x
 * phases) each, up to this many tree transfers (4 (n-1) channels: 4,096
 * GPUs at 8 channels; a 16,384-GPU build per candidate took 3.5 s). */
enum { TUNE_TREE_MAX_XFERS = 1 << 17 };

/* The tree's time from its shape (tree_cost.c), for trees too large to
 * build per candidate: the same figure as plan_estimate on the built plan
 * (tests/coll/test_protocol.c checks it). NAN when the ranks are not whole
 * node blocks of one size. */
static double tree_shape_estimate_s(const topo *t, const probe *pr, const coll_spec *s,
                                    cfg_coll_protocol p, uint32_t k) {
  coll_protocol_params q = coll_protocol_params_of(s->latency, CFG_ALGO_TREE, p);
  uint64_t per_tree = coll__ceil_div(s->bytes, 2ull * k);
  uint64_t nchunks = coll__ceil_div(per_tree, s->chunk ? s->chunk : 1);
  uint64_t chunk = coll__ceil_div(per_tree, nchunks);
  simtime_ps w_inter = pr->m > 1 ? pr->wire_inter : pr->wire_intra;
  coll_tree_rates r = {.wire_intra = pr->wire_intra,
                       .wire_inter = pr->wire_inter,
                       .hop_intra = above(q.hop_nvlink_us, pr->wire_intra),
                       .hop_inter = above(q.hop_net_us, w_inter),
                       .launch = us_ps(q.launch_us),
                       .b_intra = pr->b_intra,
                       .b_inter = pr->b_inter,
                       .npn = pr->npn,
                       .floor_rate = tree_floor_rate(s, pr, p, k)};
  uint64_t wire = coll__ceil_div(coll__bw_bytes(s, CFG_ALGO_TREE, chunk) * q.wire_num, q.wire_den);
  return coll__tree_cost_s(t, s, k, wire, nchunks, &r);
}

/* NCCL's latency of CollNet, us (tuning.cc, base latency 0;
 * workload.collective.latency.<algo>.*, defaults in parentheses): with
 * NVLS on the node NVLS's NVLink hop (25 us) and network hop (18 us);
 * CollNet Direct its network hop (31 us) plus two intra-node hops (3.7 us)
 * and 0.4 us of arity serialization per local rank beyond the first. */
static double collnet_latency_us(const coll_spec *s, const probe *pr) {
  const cfg_coll_latency *l = s->latency ? s->latency : &nccl_latency;
  return s->nvls ? ps_us(l->nvls.nvlink_hop) + ps_us(l->nvls.network_hop)
                 : 2 * (ps_us(l->collnet.nvlink_hop) + (pr->g - 1) * 0.4) +
                       ps_us(l->collnet.network_hop);
}

static uint32_t log2i(uint32_t m) {
  uint32_t r = 0;
  while ((2u << r) <= m) r++;
  return r;
}

/* NVLSTree's cap on its stream (perChMaxNVLSTreeBws per head,
 * coll__nccl_nvlstree_cap: bus bandwidth 2(n-1)/n x bytes / t at most h x
 * cap): what the stream's transfer time busy_s (seconds) falls short of
 * it for `bytes`, seconds. The NVLS threads' rate, the in-node stage's own
 * (NCCL's model at 2 H100 nodes: 8 heads x 57.7 = 462 GB/s, below NVLS's
 * 525 on one node). */
static double nvlstree_cap_s(const coll_spec *s, uint32_t m, uint32_t h, double bytes,
                             double busy_s) {
  double floor =
      2.0 * (s->nranks - 1) / s->nranks * bytes / (h * coll__nccl_nvlstree_cap(s->gpu, m));
  return floor > busy_s ? floor - busy_s : 0;
}

/* The heads of a node block: its rails with a rank (sharp.c, one head a NIC). */
static uint32_t nvlstree_head_count(const topo *t, const probe *pr, const uint32_t *r, uint32_t g) {
  uint32_t h = 0;
  for (uint32_t rail = 0; rail < pr->npn; rail++)
    for (uint32_t i = 0; i < g; i++)
      if (coll__gpu_on_rail(t, r[i], rail)) {
        h++;
        break;
      }
  return h;
}

/* The busiest head NIC's edges (out or in, per rail) in level l of the
 * node trees' pipeline (up: the children of height l-1 send; down: the
 * parents of depth l-1), or, l = 0, in the stream (every edge both ways:
 * the node's degree in the two trees). out, in: m zeroed counters, left
 * zeroed. O(m). */
static uint32_t level_edges(const tree_shape tr[2], uint32_t m, bool up, uint32_t l, uint32_t *out,
                            uint32_t *in) {
  for (int w = 0; w < 2; w++)
    for (uint32_t a = 0; a < m; a++) {
      int32_t u = tr[w].parent[a];
      if (u < 0) continue;
      if (l == 0) {
        out[a]++, in[a]++, out[u]++, in[u]++;
      } else if ((up ? tr[w].height[a] + 1 : tr[w].depth[a]) == l) {
        if (up) out[a]++, in[u]++;
        else out[u]++, in[a]++;
      }
    }
  uint32_t best = 0;
  for (uint32_t a = 0; a < m; a++) {
    if (out[a] > best) best = out[a];
    if (in[a] > best) best = in[a];
    out[a] = in[a] = 0;
  }
  return best;
}

/* What an in-switch plan's pipeline adds to its stream phase (sharp.c: one
 * phase of all S at the NVLS port loads and, NVLSTree, every tree edge),
 * its fixed delay, ps. NCCL runs a loop u at a time (coll__nvls_unit: NVLS
 * channels x heads x chunk, each (channel, head) one chunk moved whole);
 * the first unit crosses every stage before the stream runs, so with stage
 * times t_i(u) the plan takes
 *   latency + sum_i t_i(u) + (S - u)/B = latency + fill + S/B + drain,
 *   fill + drain = sum_i t_i(u) - t_stream(u):
 * NVLS the in-node reduce and the multicast (each u a GPU port at 1/e);
 * NVLSTree those and the node trees' 2H levels (level l: the busiest head
 * NIC's edges x u/(2h)). NCCL's latency (NVLS 25 us; NVLSTree 25 + 2
 * floor(log2 m) x 20.9 us) is spread over the stages, the NVLink hop half
 * on each in-node stage, the network hops evenly on the 2H levels, each
 * stage paying at least its routed path's latency; less the path the
 * stream's phase pays itself (the network's for NVLSTree). So on default
 * fabrics the latency is NCCL's, and with paths above the hops each step
 * pays its path, as the ring's and the tree's steps do (issue 27, defect
 * 11). NVLSTree's stream past the unit also waits for NCCL's cap. The fill
 * is a delay computed from the routed paths' rates, as the ring's and the
 * tree's are, not phases of its own: at 16,384 nodes 2H = 28 phases more
 * cost the run 3.5 x its CPU time. O(m log m) for NVLSTree, O(1) NVLS. */
static simtime_ps nvls_pipeline_ps(const topo *t, const probe *pr, const coll_spec *s,
                                   cfg_coll_algorithm a) {
  uint32_t m, g;
  double e = coll__nvls_efficiency(s->gpu);
  if (e == 0 || !coll__node_blocks(t, s->ranks, s->nranks, &m, &g) || g < 2 || pr->b_intra <= 0)
    return 0;
  const cfg_coll_latency *l = s->latency ? s->latency : &nccl_latency;
  bool tree = a == CFG_ALGO_NVLSTREE;
  simtime_ps w_nv = pr->wire_intra, w_net = pr->wire_inter, half;
  half = (tree ? l->nvlstree.nvlink_hop : l->nvls.nvlink_hop) / 2;
  simtime_ps lat = 2 * (half > w_nv ? half : w_nv);
  uint32_t h = tree ? nvlstree_head_count(t, pr, s->ranks, g) : g;
  if (h == 0 || (tree && (m < 2 || pr->b_inter <= 0))) return 0;
  uint64_t u = coll__nvls_unit(s, m, h);
  double one = (double)(g - 1) *
               (double)coll__bw_bytes(s, a, coll__nvls_pair_bytes(u, g, e, false)) / pr->b_intra;
  double nv_u = (double)(g - 1) *
                (double)coll__bw_bytes(s, a, coll__nvls_pair_bytes(u, g, e, true)) / pr->b_intra;
  double fill = 2 * one - nv_u, cap = 0;
  if (!tree) return s_ps(fill) + (lat > w_nv ? lat - w_nv : 0);
  tree_shape tr[2];
  coll__tree_shape_init(&tr[0], m, 1, 0);
  coll__tree_shape_init(&tr[1], m, 1, 1);
  uint32_t H = tr[0].h > tr[1].h ? tr[0].h : tr[1].h, *cnt = sim_calloc(2 * (size_t)m, sizeof *cnt);
  double d_u = (double)coll__ceil_div(u, 2ull * h);
  double deg = level_edges(tr, m, true, 0, cnt, cnt + m);
  double net_u = deg * d_u / pr->b_inter, levels = 0;
  for (int up = 1; up >= 0; up--)
    for (uint32_t lv = 1; lv <= H; lv++) levels += level_edges(tr, m, up, lv, cnt, cnt + m);
  fill = 2 * one + levels * d_u / pr->b_inter - fmax(nv_u, net_u);
  simtime_ps hop = 2 * (simtime_ps)log2i(m) * l->nvlstree.network_hop / (2 * (simtime_ps)H);
  lat += 2 * (simtime_ps)H * (hop > w_net ? hop : w_net);
  if (s->bytes > u) { /* the stream past the unit, at most NCCL's cap */
    double nv = (double)(g - 1) * (double)coll__nvls_pair_bytes(s->bytes, g, e, true) / pr->b_intra;
    double net = deg * (double)coll__ceil_div(s->bytes, 2ull * h) / pr->b_inter;
    cap = nvlstree_cap_s(s, m, h, (double)(s->bytes - u), fmax(nv, net) - fmax(nv_u, net_u));
  }
  sim_free(cnt);
  coll__tree_shape_free(&tr[0]);
  coll__tree_shape_free(&tr[1]);
  return s_ps(fill) + s_ps(cap) + (lat > w_net ? lat - w_net : 0);
}

/* NVLSTree's time from its shape (sharp.c), the figure plan_estimate gives
 * on the built plan without its m g + 4 h (m-1) transfers: the NVLS port
 * load against the busiest head NIC, D = S/(2h) times its node's degree
 * in the two trees, then (fill) the pipeline's delay nvls_pipeline_ps; or
 * (!fill) the tuner's view, as NCCL's model: NCCL's latency above the
 * path's and the cap, no fill. INFINITY where the plan cannot be built.
 * O(m log m + g). */
static double nvlstree_estimate_s(const topo *t, const probe *pr, const coll_spec *s, bool fill) {
  uint32_t m, g;
  double e = coll__nvls_efficiency(s->gpu);
  if (!s->nvls || e == 0 || !coll__node_blocks(t, s->ranks, s->nranks, &m, &g) || m < 2 || g < 2)
    return INFINITY;
  uint32_t h = nvlstree_head_count(t, pr, s->ranks, g);
  if (h == 0) return INFINITY;
  tree_shape tr[2];
  coll__tree_shape_init(&tr[0], m, 1, 0);
  coll__tree_shape_init(&tr[1], m, 1, 1);
  uint32_t *cnt = sim_calloc(2 * (size_t)m, sizeof *cnt);
  double deg = level_edges(tr, m, true, 0, cnt, cnt + m);
  sim_free(cnt);
  coll__tree_shape_free(&tr[0]);
  coll__tree_shape_free(&tr[1]);
  uint64_t pair = coll__bw_bytes(s, CFG_ALGO_NVLSTREE, coll__nvls_pair_bytes(s->bytes, g, e, true));
  uint64_t half = coll__bw_bytes(s, CFG_ALGO_NVLSTREE, coll__ceil_div(s->bytes, 2ull * h));
  double nv = (double)(g - 1) * (double)pair / pr->b_intra;
  double net = deg * (double)half / pr->b_inter;
  double step = fmax(nv + sim_ps_to_s(pr->wire_intra), net + sim_ps_to_s(pr->wire_inter));
  if (fill) return step + sim_ps_to_s(nvls_pipeline_ps(t, pr, s, CFG_ALGO_NVLSTREE));
  const cfg_coll_latency *l = s->latency ? s->latency : &nccl_latency;
  simtime_ps lat = l->nvlstree.nvlink_hop + 2 * (simtime_ps)log2i(m) * l->nvlstree.network_hop;
  return step + nvlstree_cap_s(s, m, h, (double)s->bytes, fmax(nv, net)) +
         sim_ps_to_s(lat > pr->wire_inter ? lat - pr->wire_inter : 0);
}

/* NVLS on one node without its fill, the tuner's view (coll_tune): all of
 * S in the stream, NCCL's 25 us latency above the path's. INFINITY where
 * the plan cannot be built. O(ranks). */
static double nvls_steady_s(const topo *t, const probe *pr, const coll_spec *s) {
  uint32_t m, g;
  double e = coll__nvls_efficiency(s->gpu);
  if (!s->nvls || e == 0 || !coll__node_blocks(t, s->ranks, s->nranks, &m, &g) || m != 1 || g < 2 ||
      pr->b_intra <= 0)
    return INFINITY;
  const cfg_coll_latency *l = s->latency ? s->latency : &nccl_latency;
  uint64_t pair = coll__bw_bytes(s, CFG_ALGO_NVLS, coll__nvls_pair_bytes(s->bytes, g, e, true));
  double nv = (double)(g - 1) * (double)pair / pr->b_intra;
  simtime_ps lat = l->nvls.nvlink_hop;
  return nv + sim_ps_to_s(pr->wire_intra) +
         sim_ps_to_s(lat > pr->wire_intra ? lat - pr->wire_intra : 0);
}

double coll__tree_estimate_s(const topo *t, const coll_spec *s, cfg_coll_protocol p, uint32_t k,
                             bool closed_form) {
  probe pr;
  probe_of(t, s, &pr);
  return closed_form ? tree_shape_estimate_s(t, &pr, s, p, k)
                     : candidate_estimate(t, s, &pr, CFG_ALGO_TREE, p, k);
}

/* RCCL's choice on an AMD GPU (rccl.c): MSCCL's allpairs where RCCL runs
 * it (algorithm and protocol auto), else RCCL's tuning model among ring and
 * tree, LL and Simple, for the bus bandwidth fabsim's GPU offers (its
 * xGMI ports on one node, its NICs' share across nodes), and RCCL's
 * channels by size. *est: fabsim's estimate of the pick. */
static void rccl_tune(const topo *t, const coll_spec *s, const probe *pr, cfg_coll_algorithm *a,
                      cfg_coll_protocol *p, uint32_t *k, double *est) {
  if (s->algorithm == CFG_ALGO_AUTO && s->protocol == CFG_PROTO_AUTO &&
      coll__rccl_msccl(s, pr->m, p, k)) {
    *a = CFG_ALGO_PAIRWISE;
    *est = candidate_estimate(t, s, pr, *a, *p, *k);
    return;
  }
  double bus = pr->b_intra;
  if (pr->m > 1 && pr->b_inter > 0) {
    double nic = pr->b_inter * (pr->g ? (double)pr->npn / pr->g : 1);
    bus = bus > 0 ? fmin(bus, nic) : nic;
  }
  coll__rccl_pick(s, pr->m, bus / 1e9, a, p);
  *k = coll__rccl_channels(s, *a, *p);
  if (*a == CFG_ALGO_RING) {
    *est = ring_estimate(pr, s, *p, *k);
    return;
  }
  *est = tree_shape_estimate_s(t, pr, s, *p, *k);
  if (isnan(*est)) *est = candidate_estimate(t, s, pr, *a, *p, *k);
}

void coll_tune(const topo *t, const coll_spec *s, cfg_coll_algorithm *algorithm,
               cfg_coll_protocol *protocol, uint32_t *channels, double *est_s) {
  probe pr;
  probe_of(t, s, &pr);
  static const cfg_coll_protocol all[NPROTO] = {CFG_PROTO_LL, CFG_PROTO_LL128, CFG_PROTO_SIMPLE};
  cfg_coll_algorithm best_a = s->algorithm;
  cfg_coll_protocol best_p = s->protocol;
  uint32_t best_k = s->channels;
  double best_t = INFINITY, best_full = INFINITY;
  bool any = s->algorithm == CFG_ALGO_AUTO;
  if (coll__gpu_amd(s->gpu) && s->op != CFG_COLL_ALLTOALL &&
      (any || s->algorithm == CFG_ALGO_RING || s->algorithm == CFG_ALGO_TREE)) {
    rccl_tune(t, s, &pr, &best_a, &best_p, &best_k, &best_full);
    goto done;
  }
  if (any && s->op == CFG_COLL_ALLTOALL) best_a = pr.m > 1 ? CFG_ALGO_PXN : CFG_ALGO_PAIRWISE;
  if (best_a == CFG_ALGO_PAIRWISE || best_a == CFG_ALGO_PXN) {
    /* point-to-point: LL up to 16 KiB per peer (NCCL_P2P_LL_THRESHOLD), else Simple */
    if (best_p == CFG_PROTO_AUTO)
      best_p = s->nranks && s->bytes / s->nranks <= 16384 ? CFG_PROTO_LL : CFG_PROTO_SIMPLE;
    goto done;
  }
  /* Rings (every op but all-to-all): the closed form. */
  if (any || s->algorithm == CFG_ALGO_RING)
    for (int i = 0; i < NPROTO; i++) {
      if (s->protocol != CFG_PROTO_AUTO && all[i] != s->protocol) continue;
      uint32_t k = coll__nccl_channels(s, CFG_ALGO_RING, all[i]);
      double e = ring_estimate(&pr, s, all[i], k);
      if (e < best_t) best_t = e, best_a = CFG_ALGO_RING, best_p = all[i], best_k = k;
    }
  /* AllReduce: the tree (every protocol), NVLS (one node), CollNet (SHARP)
   * and NVLSTree (NVLS, two nodes or more), Simple only, where the hardware
   * has them. */
  bool tree = s->algorithm == CFG_ALGO_TREE || (any && s->op == CFG_COLL_ALLREDUCE);
  bool big = 4ull * (s->nranks - 1) * s->channels > TUNE_TREE_MAX_XFERS;
  for (int i = 0; tree && i < NPROTO; i++) {
    if (s->protocol != CFG_PROTO_AUTO && all[i] != s->protocol) continue;
    uint32_t k = coll__nccl_channels(s, CFG_ALGO_TREE, all[i]);
    double e = tree_shape_estimate_s(t, &pr, s, all[i], k);
    if (isnan(e) && (!big || s->algorithm == CFG_ALGO_TREE))
      e = candidate_estimate(t, s, &pr, CFG_ALGO_TREE, all[i], k);
    if (isnan(e)) continue; /* uneven blocks too large to build per candidate */
    if (e < best_t) best_t = e, best_a = CFG_ALGO_TREE, best_p = all[i], best_k = k;
  }
  /* The in-switch algorithms compete on their time without their fill, as
   * NCCL's model has them (tuning.cc: latency + size / bandwidth, no
   * pipeline term for NVLS or NVLSTree); the estimate reported is the plan's
   * own, fill included (best_full). */
  static const cfg_coll_algorithm sharp[3] = {CFG_ALGO_NVLS, CFG_ALGO_COLLNET, CFG_ALGO_NVLSTREE};
  for (int i = 0; i < 3; i++) {
    bool has = i == 0 ? s->nvls && pr.m == 1 : i == 1 ? s->sharp && pr.m > 1 : s->nvls && pr.m > 1;
    bool want = s->algorithm == sharp[i] || (any && s->op == CFG_COLL_ALLREDUCE && has);
    if (!want || (s->protocol != CFG_PROTO_AUTO && s->protocol != CFG_PROTO_SIMPLE)) continue;
    /* NVLSTree from its shape: its plan grows as m g (g-1) */
    double e = i == 0   ? nvls_steady_s(t, &pr, s)
               : i == 2 ? nvlstree_estimate_s(t, &pr, s, false)
                        : candidate_estimate(t, s, &pr, sharp[i], CFG_PROTO_SIMPLE, s->channels);
    if (e < best_t || s->algorithm == sharp[i]) {
      best_t = e, best_a = sharp[i], best_p = CFG_PROTO_SIMPLE, best_k = s->channels;
      best_full = i == 0   ? candidate_estimate(t, s, &pr, sharp[i], CFG_PROTO_SIMPLE, s->channels)
                  : i == 2 ? nvlstree_estimate_s(t, &pr, s, true)
                           : e;
    }
  }
  if (best_a != CFG_ALGO_NVLS && best_a != CFG_ALGO_COLLNET && best_a != CFG_ALGO_NVLSTREE)
    best_full = best_t;
  if (best_a == CFG_ALGO_AUTO) best_a = CFG_ALGO_RING; /* no candidate: the ring */
  if (best_p == CFG_PROTO_AUTO) {                      /* a fixed algorithm we do not estimate */
    best_p = CFG_PROTO_SIMPLE;
  }
done:
  *algorithm = best_a;
  *protocol = best_p;
  *channels = best_k;
  if (est_s) *est_s = isfinite(best_full) ? best_full : NAN;
}

void coll_spec_set_hw(coll_spec *spec, const cfg_scenario *cfg) {
  spec->gpu = cfg->cluster.gpu;
  /* an AMD GPU's collectives run RCCL's latencies unless the scenario sets its own */
  if (coll__gpu_amd(spec->gpu) &&
      (!spec->latency || !memcmp(spec->latency, &nccl_latency, sizeof nccl_latency)))
    spec->latency = coll__rccl_latency();
  spec->nvls = cfg->workload.collective.nvls && coll__nvls_efficiency(cfg->cluster.gpu) > 0;
  spec->sharp = cfg->fabric.sharp && cfg->fabric.transport == CFG_TRANSPORT_INFINIBAND;
}

void coll__apply_protocol(coll_plan *p, const topo *t, const coll_spec *s) {
  if (p->protocol == CFG_PROTO_NONE || p->nphases == 0) return;
  probe pr;
  probe_of(t, s, &pr);
  if (p->algorithm == CFG_ALGO_COLLNET) { /* one phase, a pipeline's steady state */
    simtime_ps wire = pr.m > 1 ? pr.wire_inter : pr.wire_intra;
    p->launch = 0;
    p->phases[0].fixed = above(collnet_latency_us(s, &pr), wire);
    return;
  }
  if (p->algorithm == CFG_ALGO_NVLS || p->algorithm == CFG_ALGO_NVLSTREE) {
    /* one phase, the stream; the pipeline's fill, latency and cap after it */
    p->launch = 0;
    p->phases[0].fixed = nvls_pipeline_ps(t, &pr, s, p->algorithm);
    return;
  }
  coll_protocol_params q = params_at(s, &pr, p->algorithm, p->protocol);
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
          p->phases[i].x[j].bytes =
              coll__ceil_div(p->phases[i].x[j].bytes * q.wire_num, q.wire_den);
  }
  bool ring = p->algorithm == CFG_ALGO_RING && p->op != CFG_COLL_BROADCAST && p->nphases == 1;
  /* chunk pipelines without a cycle: the tree, the broadcast chain, the
   * pxn all-to-all (NVLink hop and fabric, chunk by chunk) */
  bool chunked =
      p->algorithm == CFG_ALGO_TREE || p->algorithm == CFG_ALGO_PXN || p->op == CFG_COLL_BROADCAST;
  bool tree = p->algorithm == CFG_ALGO_TREE;
  double busy = 0; /* the tree's steps' transfer time, seconds */
  port_loads l = {0};
  coll__busy_window *bw = NULL; /* chunked phases that are slices of the pool */
  if (chunked) port_loads_init(&l, t);
  for (size_t i = 0; i < p->nphases; i++) {
    coll_phase *ph = &p->phases[i];
    if (ring) {
      ph->fixed = s_ps(ring_delay_s(&pr, s, p->protocol, &q, p->channels));
      continue;
    }
    bool crosses = false;
    double nv, net, t_step = 0;
    if (chunked && ph->in_pool) { /* the busiest ports as the window slides */
      size_t lo = (size_t)(ph->x - p->pool);
      uint64_t nv_max, nic_max;
      if (!bw) bw = coll__busy_window_new(t, p->pool);
      coll__busy_window_move(bw, lo, lo + ph->n, &nv_max, &nic_max, &crosses);
      nv = pr.b_intra > 0 ? (double)nv_max / pr.b_intra : 0;
      net = pr.b_inter > 0 ? (double)nic_max / pr.b_inter : 0;
      t_step = nv > net ? nv : net;
    } else {
      if (chunked) t_step = phase_busiest_s(t, ph, &pr, &l, &nv, &net);
      for (size_t j = 0; j < ph->n && !crosses; j++)
        crosses = topo_gpu_node(t, ph->x[j].src_gpu) != topo_gpu_node(t, ph->x[j].dst_gpu);
    }
    simtime_ps hop = crosses ? above(q.hop_net_us, w_inter) : above(q.hop_nvlink_us, w_intra);
    if (!chunked) {
      ph->fixed = (simtime_ps)ph->repeat * hop;
      continue;
    }
    busy += (double)ph->repeat * t_step;
    /* The first step of a phase waits the hop (the pipeline advances a
     * level); its repeats are chunks in flight: NCCL keeps NCCL_STEPS = 8
     * per connection, so a repeat's hop overlaps the transfers of the 7
     * before it and only what they do not cover shows. */
    simtime_ps cover = s_ps((NCCL_STEPS - 1) * t_step);
    ph->fixed = hop + (simtime_ps)(ph->repeat - 1) * (hop > cover ? hop - cover : 0);
  }
  if (tree) /* NCCL's protocol limit on the tree's throughput: after the last step */
    p->phases[p->nphases - 1].fixed += coll__tree_floor_ps(
        s->bytes, p->channels, tree_floor_rate(s, &pr, p->protocol, p->channels), busy);
  coll__busy_window_free(bw);
  sim_free(l.nv_out);
}
