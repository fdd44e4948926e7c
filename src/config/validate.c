/* Resolution after loading: presets fill the keys nobody set, then the
 * checks that involve more than one key. Single values (types, units,
 * ranges) were already checked as they were read.
 *
 * Every error is raised with cfg_fail_at at the key the user should change,
 * so it carries that key's file:line:col (or "scenario:" when the key was
 * never set). The topology module, not this one, checks that cluster.nodes
 * fits the fabric.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/load_internal.h"

static int key_index(const char *name) { return cfg__find_key(name, strlen(name)); }

static int is_set(const cfg_doc *doc, const char *name) {
  int i = key_index(name);
  return i >= 0 && cfg__is_set(doc, (size_t)i);
}

/* Applies the schema's by-value preset to key i; the texts are ours, so a
 * failure is a bug in the table and reported as such. */
static int apply_preset(cfg_scenario *s, size_t i, int selector, sim_error *err) {
  const cfg__key *k = cfg__key_at(i);
  char msg[256];
  const char *text = k->by_value[selector];
  if (cfg__set_text(s, i, text, strlen(text), msg, sizeof msg) != SIM_OK)
    return sim_fail(err, SIM_ECONFIG, "preset of %s: %s", k->name, msg);
  return SIM_OK;
}

/* bytes x bps / 25 Gb/s, at least 1 byte, saturating. */
static uint64_t scale_by_link(uint64_t bytes_at_25g, rate_bps bps) {
  unsigned __int128 v = (unsigned __int128)bytes_at_25g * bps / 25000000000ULL;
  return v == 0 ? 1 : v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static int apply_presets(cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  int rc = SIM_OK;
  for (size_t i = 0; i < cfg__nkeys() && rc == SIM_OK; i++) {
    const cfg__key *k = cfg__key_at(i);
    if (cfg__is_set(doc, i) &&
        !(k->type == CFG__TIME && k->derive == CFG__DERIVE_TRANSPORT &&
          *(const simtime_ps *)(const void *)((const char *)s + k->offset) == CFG__TIME_AUTO))
      continue;
    const cfg__key *sel = cfg__preset_selector(k->derive);
    int v; /* the selector's value, an int-sized enum (schema.c asserts it) */
    if (!sel) continue;
    memcpy(&v, (const char *)s + sel->offset, sizeof v);
    rc = apply_preset(s, i, v, err);
  }
  /* The rules, in dependency order: planes follow nic.per_node. */
  if (!is_set(doc, "cluster.nic.per_node")) s->cluster.nic.per_node = s->cluster.gpus_per_node;
  if (!is_set(doc, "fabric.planes"))
    s->fabric.planes = s->fabric.topology == CFG_TOPO_MULTI_PLANE ? s->cluster.nic.per_node : 1;
  /* ECN thresholds scale with link speed (MODEL-INPUTS: 100 KB and 400 KB per 25 Gb/s). */
  if (!is_set(doc, "fabric.ecn.kmin"))
    s->fabric.ecn.kmin = scale_by_link(100000, s->fabric.link_bandwidth);
  if (!is_set(doc, "fabric.ecn.kmax"))
    s->fabric.ecn.kmax = scale_by_link(400000, s->fabric.link_bandwidth);
  return rc;
}

static int check_nics(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  uint32_t g = s->cluster.gpus_per_node, n = s->cluster.nic.per_node;
  if (g % n != 0 && n % g != 0)
    return cfg_fail_at(doc, "cluster.nic.per_node", err,
                       "%u NICs cannot be shared evenly by %u GPUs; use a divisor or a multiple "
                       "of cluster.gpus_per_node (%u)",
                       n, g, g);
  return SIM_OK;
}

static int check_planes(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  uint32_t p = s->fabric.planes, n = s->cluster.nic.per_node;
  /* fabric.topology file: the file gives the planes (src/topo/import.c) */
  if (s->fabric.topology == CFG_TOPO_FILE) return SIM_OK;
  if (strcmp(s->fabric.file, "none"))
    return cfg_fail_at(doc, "fabric.file", err,
                       "a fabric file with fabric.topology %s; allowed: fabric.topology: file, "
                       "or fabric.file none",
                       cfg_topology_name(s->fabric.topology));
  if (s->fabric.topology != CFG_TOPO_MULTI_PLANE) {
    if (p != 1)
      return cfg_fail_at(doc, "fabric.planes", err,
                         "%u planes need fabric.topology: multi-plane (%s has one plane)", p,
                         cfg_topology_name(s->fabric.topology));
    return SIM_OK;
  }
  if (p > n)
    return cfg_fail_at(doc, "fabric.planes", err,
                       "%u planes exceed cluster.nic.per_node (%u); every plane needs a NIC on "
                       "each node",
                       p, n);
  if (n % p != 0)
    return cfg_fail_at(doc, "fabric.planes", err,
                       "%u does not divide cluster.nic.per_node (%u); every plane gets the same "
                       "number of NICs per node",
                       p, n);
  return SIM_OK;
}

static int check_switch(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  uint32_t mtu = s->fabric.mtu;
  if (s->fabric.switch_radix % 2 != 0)
    return cfg_fail_at(doc, "fabric.switch_radix", err,
                       "%u is odd; a fat-tree switch splits its ports evenly between down- and "
                       "uplinks",
                       s->fabric.switch_radix);
  /* InfiniBand's MTU is one of five powers of two (IBTA spec, PortInfo NeighborMTU). */
  if (s->fabric.transport == CFG_TRANSPORT_INFINIBAND && ((mtu & (mtu - 1)) != 0 || mtu > 4096))
    return cfg_fail_at(doc, "fabric.mtu", err,
                       "%u is not an InfiniBand MTU; allowed 256, 512, 1024, 2048, 4096", mtu);
  return SIM_OK;
}

bool cfg_coll_algorithm_offered(cfg_coll_op op, cfg_coll_algorithm a) {
  if (a == CFG_ALGO_AUTO) return true;
  switch (op) {
  case CFG_COLL_ALLREDUCE:
    return a == CFG_ALGO_RING || a == CFG_ALGO_TREE || a == CFG_ALGO_HALVING_DOUBLING ||
           a == CFG_ALGO_HIERARCHICAL || a == CFG_ALGO_NVLS || a == CFG_ALGO_COLLNET ||
           a == CFG_ALGO_NVLSTREE;
  case CFG_COLL_REDUCESCATTER:
  case CFG_COLL_ALLGATHER: return a == CFG_ALGO_RING || a == CFG_ALGO_HALVING_DOUBLING;
  case CFG_COLL_BROADCAST: return a == CFG_ALGO_RING;
  case CFG_COLL_ALLTOALL: return a == CFG_ALGO_PAIRWISE || a == CFG_ALGO_PXN;
  }
  return false;
}

/* Achieved shares of line rates: (0, 1] (the schema checks > 0). */
static int check_efficiency(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  const struct {
    const char *key;
    double v;
  } e[] = {{"cluster.scale_up.efficiency", s->cluster.scale_up.efficiency},
           {"cluster.nic.efficiency", s->cluster.nic.efficiency},
           {"cluster.nic.rdma_efficiency", s->cluster.nic.rdma_efficiency},
           {"cluster.pcie.efficiency", s->cluster.pcie.efficiency},
           {"fabric.link_efficiency", s->fabric.link_efficiency}};
  for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
    if (e[i].v > 1)
      return cfg_fail_at(doc, e[i].key, err,
                         "%g is not a share of the line rate; allowed above 0, at most 1", e[i].v);
  return SIM_OK;
}

static int check_packet(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  if (s->fabric.ecn.kmin > s->fabric.ecn.kmax)
    return cfg_fail_at(doc, is_set(doc, "fabric.ecn.kmax") ? "fabric.ecn.kmax" : "fabric.ecn.kmin",
                       err, "kmin (%llu bytes) exceeds kmax (%llu bytes); kmin <= kmax",
                       (unsigned long long)s->fabric.ecn.kmin,
                       (unsigned long long)s->fabric.ecn.kmax);
  if (s->fabric.ecn.pmax > 1)
    return cfg_fail_at(doc, "fabric.ecn.pmax", err, "%g is not a probability; allowed 0..1",
                       s->fabric.ecn.pmax);
  if (s->fabric.pfc.xoff != 0 && s->fabric.pfc.xon >= s->fabric.pfc.xoff)
    return cfg_fail_at(doc, "fabric.pfc.xon", err,
                       "the resume offset (%llu bytes) must be below fabric.pfc.xoff (%llu bytes)",
                       (unsigned long long)s->fabric.pfc.xon,
                       (unsigned long long)s->fabric.pfc.xoff);
  return SIM_OK;
}

static int check_collective(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  cfg_coll_op op = s->workload.collective.op;
  cfg_coll_algorithm algo = s->workload.collective.algorithm;
  uint32_t ranks = s->workload.collective.ranks;
  uint64_t gpus = (uint64_t)s->cluster.nodes * s->cluster.gpus_per_node;
  const cfg_coll_bandwidth *bw = &s->workload.collective.bandwidth;
  const struct {
    const char *key;
    double v;
  } f[] = {{"workload.collective.bandwidth.ring", bw->ring},
           {"workload.collective.bandwidth.tree", bw->tree},
           {"workload.collective.bandwidth.nvls", bw->nvls},
           {"workload.collective.bandwidth.nvlstree", bw->nvlstree},
           {"workload.collective.bandwidth.collnet", bw->collnet}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (f[i].v > 1) /* the schema checks > 0 */
      return cfg_fail_at(doc, f[i].key, err,
                         "%g is not a share of the algorithm's modelled rate; allowed above 0, "
                         "at most 1",
                         f[i].v);
  if (algo == CFG_ALGO_NODE_LIMITED)
    return cfg_fail_at(doc, "workload.collective.algorithm", err,
                       "node-limited is the MoE dispatch/combine of training workloads; a "
                       "collective alltoall uses pairwise or pxn");
  if (algo != CFG_ALGO_AUTO && op == CFG_COLL_ALLTOALL && !cfg_coll_algorithm_offered(op, algo))
    return cfg_fail_at(doc, "workload.collective.algorithm", err,
                       "%s does not implement alltoall; use pairwise (or leave the algorithm "
                       "unset)",
                       cfg_coll_algorithm_name(algo));
  if (algo != CFG_ALGO_AUTO && op != CFG_COLL_ALLTOALL &&
      cfg_coll_algorithm_offered(CFG_COLL_ALLTOALL, algo))
    return cfg_fail_at(doc, "workload.collective.algorithm", err,
                       "%s only implements alltoall; %s needs ring (or leave the algorithm unset)",
                       cfg_coll_algorithm_name(algo), cfg_coll_op_name(op));
  if (!cfg_coll_algorithm_offered(op, algo))
    return cfg_fail_at(doc, "workload.collective.algorithm", err,
                       "%s does not implement %s; allowed: %s (or leave the algorithm unset)",
                       cfg_coll_algorithm_name(algo), cfg_coll_op_name(op),
                       op == CFG_COLL_BROADCAST ? "ring" : "ring, halving-doubling");
  if ((algo == CFG_ALGO_NVLS || algo == CFG_ALGO_NVLSTREE) &&
      (s->cluster.gpu == CFG_GPU_A100 || s->cluster.gpu == CFG_GPU_MI300X ||
       !s->workload.collective.nvls))
    return cfg_fail_at(doc, "workload.collective.algorithm", err,
                       "%s needs NVLink SHARP: NVSwitch generation 3 (cluster.gpu H100, H800, "
                       "H200 or B200; here %s) and workload.collective.nvls: true (here %s)",
                       cfg_coll_algorithm_name(algo), cfg_gpu_name(s->cluster.gpu),
                       s->workload.collective.nvls ? "true" : "false");
  if (algo == CFG_ALGO_COLLNET && !s->fabric.sharp)
    return cfg_fail_at(doc, "workload.collective.algorithm", err,
                       "collnet needs switches that reduce: set fabric.sharp: true");
  if (s->fabric.sharp && s->fabric.transport != CFG_TRANSPORT_INFINIBAND)
    return cfg_fail_at(doc, "fabric.sharp", err,
                       "SHARP is InfiniBand's (Quantum switches); fabric.transport is %s",
                       cfg_transport_name(s->fabric.transport));
  if (ranks == 1)
    return cfg_fail_at(doc, "workload.collective.ranks", err,
                       "1 rank is not a collective; use 0 (every GPU) or at least 2");
  if (s->cluster.nodes != 0 && ranks > gpus)
    return cfg_fail_at(doc, "workload.collective.ranks", err,
                       "%u ranks exceed the %llu GPUs of the cluster (%u nodes x %u GPUs)", ranks,
                       (unsigned long long)gpus, s->cluster.nodes, s->cluster.gpus_per_node);
  return SIM_OK;
}

/* Network faults change link state and routing, which only the dynamic
 * fidelities model. Located at the first network fault's kind. */
static int check_faults(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  char key[48];
  if (s->simulation.fidelity != CFG_FIDELITY_ANALYTIC) return SIM_OK;
  for (uint32_t i = 0; i < s->faults.n; i++) {
    if (!cfg_fault_is_network(s->faults.v[i].kind)) continue;
    snprintf(key, sizeof key, "faults[%u].kind", i);
    return cfg_fail_at(doc, key, err,
                       "%s needs simulation.fidelity flow or packet; the analytic fidelity has "
                       "no link state (use --set simulation.fidelity=flow)",
                       cfg_fault_kind_name(s->faults.v[i].kind));
  }
  return SIM_OK;
}

/* Fault schedules: every time one derives (at; at + duration; a flap's
 * cycles at + k x period and the last recovery at + (count - 1) x period +
 * duration) stays under CFG__HORIZON_PS, and so does routing's reconvergence
 * after it: no sum of them wraps a simtime_ps (faults at 150 d for 150 d
 * were scheduled at a wrapped time, 86 d). Located at the key that takes
 * the schedule past the horizon. Overflow-checked arithmetic throughout. */
static int past_horizon(const cfg_doc *doc, uint32_t i, const char *field, sim_error *err,
                        const char *what, unsigned __int128 t) {
  char key[48];
  snprintf(key, sizeof key, "faults[%u].%s", i, field);
  return cfg_fail_at(doc, key, err,
                     "%s comes at %.4g days, past the horizon of simulated time (2^62 ps, %.1f "
                     "days); allowed: %s before %.1f days",
                     what, (double)t / (86400.0 * SIM_PS_PER_S),
                     (double)CFG__HORIZON_PS / (86400.0 * SIM_PS_PER_S), what,
                     (double)CFG__HORIZON_PS / (86400.0 * SIM_PS_PER_S));
}

static int check_fault_times(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  const unsigned __int128 h = CFG__HORIZON_PS;
  bool network = false;
  for (uint32_t i = 0; i < s->faults.n; i++) {
    const cfg_fault *f = &s->faults.v[i];
    unsigned __int128 at = f->at, last = at;
    network |= cfg_fault_is_network(f->kind);
    if (at >= h) return past_horizon(doc, i, "at", err, "the fault", at);
    if (f->kind == CFG_FAULT_LINK_FLAP && f->count > 1) {
      last = at + (unsigned __int128)(f->count - 1) * f->period; /* < 2^96: no wrap */
      if (last >= h)
        return past_horizon(doc, i, "count", err, "the last cycle (at + (count - 1) x period)",
                            last);
    }
    if (last + f->duration >= h)
      return past_horizon(doc, i, "duration", err, "the recovery (at + duration)",
                          last + f->duration);
  }
  if (network && s->reliability.reconvergence >= CFG__HORIZON_PS)
    return cfg_fail_at(doc, "reliability.reconvergence", err,
                       "a reroute %.4g days after a fault is past the horizon of simulated time "
                       "(2^62 ps, %.1f days); allowed: less than %.1f days",
                       sim_ps_to_s(s->reliability.reconvergence) / 86400,
                       (double)CFG__HORIZON_PS / (86400.0 * SIM_PS_PER_S),
                       (double)CFG__HORIZON_PS / (86400.0 * SIM_PS_PER_S));
  return SIM_OK;
}

/* Bytes a channel of bps carries in t, rounded down (as the packet model). */
static uint64_t bytes_in(simtime_ps t, rate_bps bps) {
  unsigned __int128 b = (unsigned __int128)t * bps / (8 * SIM_PS_PER_S);
  return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

/* Header bytes per packet (transport headers + RETH) and preamble + IFG, as
 * the packet model counts them (src/net/net.c: hdr, RETH, pre). */
static uint32_t frame_bytes(const cfg_scenario *s) {
  return s->fabric.mtu + (s->fabric.transport == CFG_TRANSPORT_INFINIBAND ? 26 : 62) + 16;
}
static uint32_t preamble_bytes(const cfg_scenario *s) {
  return s->fabric.transport == CFG_TRANSPORT_INFINIBAND ? 0 : 20;
}

/* The RTO against the fabric's base RTT: a timer that fires before an ACK
 * can possibly be back resends every packet (cluster.nic.rto=0s ran 19 us of
 * simulated time in 60 s of wall time). The base RTT between the farthest
 * NICs of a fabric of T tiers (2T links, 2T-1 switches each way): each way
 * the sender's and receiver's NIC latency, the links' propagation and the
 * switches' forwarding, plus one data frame's serialization at the slower
 * of NIC and link rate, and the receiver holding its ACK for ack_every - 1
 * more frames (ACK coalescing). No queueing: a lower bound of any RTT. */
static int check_rto(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  char rto[CFG__VALUE_TEXT], rtt[CFG__VALUE_TEXT];
  uint32_t links = 2 * s->fabric.tiers, switches = links - 1;
  rate_bps slow = s->cluster.nic.bandwidth < s->fabric.link_bandwidth ? s->cluster.nic.bandwidth
                                                                      : s->fabric.link_bandwidth;
  simtime_ps frame = sim_serialization_ps(frame_bytes(s) + preamble_bytes(s), slow);
  simtime_ps way = 2 * s->cluster.nic.latency + links * s->fabric.link_latency +
                   switches * s->fabric.switch_latency;
  simtime_ps base = 2 * way + (simtime_ps)s->cluster.nic.ack_every * frame;
  if (s->cluster.nic.rto > base) return SIM_OK;
  cfg__format_time(rto, sizeof rto, s->cluster.nic.rto);
  cfg__format_time(rtt, sizeof rtt, base);
  return cfg_fail_at(doc, "cluster.nic.rto", err,
                     "%s does not exceed the fabric's base RTT of %s, so every packet would be "
                     "resent before its ACK could arrive; allowed: more than %s (NIC latency x 4, "
                     "%u links and %u switches each way, %u frames of %u bytes at the slower of "
                     "NIC and link rate); NICs use milliseconds (the default, 1ms)",
                     rto, rtt, rtt, links, switches, s->cluster.nic.ack_every,
                     frame_bytes(s) + preamble_bytes(s));
}

/* The switch buffer against what the packet model sets aside per port before
 * any sharing (src/net/net.c, kept in step): InfiniBand, credits for the
 * credit loop, (2 x link latency + switch latency) x rate + 4 frames, so a
 * link can run at line rate; Ethernet and RoCE, a 4 KB reserve for each of 8
 * traffic classes and, with PFC, headroom for the PAUSE's flight,
 * (3 x link latency + switch latency) x rate + 2 frames. A smaller buffer
 * would be silently exceeded (fabric.switch.buffer=1B reported queues of
 * 4 KiB); rate is the faster of NIC and link, over switch_radix ports. */
static int check_buffer(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  char have[CFG__VALUE_TEXT], need[CFG__VALUE_TEXT], port[CFG__VALUE_TEXT];
  rate_bps fast = s->cluster.nic.bandwidth > s->fabric.link_bandwidth ? s->cluster.nic.bandwidth
                                                                      : s->fabric.link_bandwidth;
  uint64_t frame = frame_bytes(s), wire = frame + preamble_bytes(s), per_port;
  const char *why;
  if (s->fabric.transport == CFG_TRANSPORT_INFINIBAND) {
    per_port = bytes_in(2 * s->fabric.link_latency + s->fabric.switch_latency, fast) + 4 * frame;
    why =
        "credits for its credit loop, (2 x link latency + switch latency) x rate + 4 packets, "
        "so that a link can run at line rate";
  } else if (s->fabric.transport == CFG_TRANSPORT_ROCE && s->fabric.roce.pfc) {
    per_port =
        8 * 4096 + bytes_in(3 * s->fabric.link_latency + s->fabric.switch_latency, fast) + 2 * wire;
    why =
        "a 4 KB reserve for each of 8 traffic classes and PFC headroom, (3 x link latency + "
        "switch latency) x rate + 2 packets";
  } else {
    per_port = 8 * 4096;
    why = "a 4 KB reserve for each of 8 traffic classes (a packet of the MTU in each)";
  }
  uint64_t min = per_port * s->fabric.switch_radix;
  if (s->fabric.sw.buffer >= min) return SIM_OK;
  cfg__format_size(have, sizeof have, s->fabric.sw.buffer);
  cfg__format_size(need, sizeof need, min);
  cfg__format_size(port, sizeof port, per_port);
  return cfg_fail_at(doc, "fabric.switch.buffer", err,
                     "%s is less than a switch needs before any queue can grow; allowed: at least "
                     "%s, %u ports x %s: per port %s",
                     have, need, s->fabric.switch_radix, port, why);
}

/* reliability.days: one training run. The longest published runs last
 * months (Llama 3 405B: 54 days, Meta 2024); the bound is ten years, past
 * any cluster's service life, and it bounds the Monte Carlo's work, which
 * grows with the failures a run sees (days 1e5 ran without end in sight). */
/* jobs: whole nodes, an explicit list as long as the job, no top-level
 * workload beside them, and each job's workload through the workload's own
 * checks (check_collective) with its keys named jobs[j].workload.*. Whether
 * the nodes are free is plc_place's question, at the run's setup. */
static int check_jobs(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  char key[64];
  uint32_t gpn = s->cluster.gpus_per_node;
  if (s->jobs.n == 0) return SIM_OK;
  for (size_t i = 0; i < cfg__nkeys(); i++)
    if (cfg__is_workload_key(i) && cfg__is_set(doc, i))
      return cfg_fail_at(doc, cfg__key_at(i)->name, err,
                         "a scenario with jobs: has no top-level workload; give each job its "
                         "workload: {...}");
  for (uint32_t j = 0; j < s->jobs.n; j++) {
    const cfg_job *job = &s->jobs.v[j];
    uint32_t nodes = job->gpus / gpn;
    if (job->gpus % gpn) {
      snprintf(key, sizeof key, "jobs[%u].gpus", j);
      return cfg_fail_at(doc, key, err,
                         "%u GPUs are not whole nodes of cluster.gpus_per_node %u; allowed: a "
                         "multiple of %u",
                         job->gpus, gpn, gpn);
    }
    if (job->placement == CFG_PLACE_EXPLICIT && job->nodes.n != nodes) {
      snprintf(key, sizeof key, "jobs[%u].nodes", j);
      return cfg_fail_at(doc, key, err, "%u nodes listed; the job's %u GPUs need %u nodes",
                         job->nodes.n, job->gpus, nodes);
    }
    if (job->start >= CFG__HORIZON_PS) {
      snprintf(key, sizeof key, "jobs[%u].start", j);
      return cfg_fail_at(doc, key, err, "past the horizon of simulated time (2^62 ps)");
    }
    cfg_scenario view = *s; /* the cluster as the job sees it: its nodes, its workload */
    view.cluster.nodes = nodes;
    view.workload = job->workload;
    cfg_doc_scope_job(doc, (int)j);
    int rc = check_collective(&view, doc, err);
    cfg_doc_scope_job(doc, -1);
    if (rc != SIM_OK) return rc;
  }
  return SIM_OK;
}

/* fabric.classes resolved (every class's defaults, then what no field
 * alone can say), and the class each workload names: the top-level
 * workload.traffic_class, each job's jobs[j].traffic_class. */
static int check_classes(cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  char msg[512], key[64];
  int bad_class = 0, bad_field = 0;
  if (cfg__classes_resolve(s, &bad_class, &bad_field, msg, sizeof msg) != SIM_OK) {
    snprintf(key, sizeof key, "fabric.classes[%d].%s", bad_class, cfg__class_field_name(bad_field));
    return cfg_fail_at(doc, key, err, "%s", msg);
  }
  if (cfg_class_find(&s->fabric.classes, s->workload.traffic_class, &s->workload.tclass, msg,
                     sizeof msg) != SIM_OK)
    return cfg_fail_at(doc, "workload.traffic_class", err, "%s", msg);
  for (uint32_t j = 0; j < s->jobs.n; j++) {
    cfg_workload *w = &s->jobs.v[j].workload;
    if (cfg_class_find(&s->fabric.classes, w->traffic_class, &w->tclass, msg, sizeof msg) == SIM_OK)
      continue;
    snprintf(key, sizeof key, "jobs[%u].traffic_class", j);
    return cfg_fail_at(doc, key, err, "%s", msg);
  }
  return SIM_OK;
}

/* A workload's checkpoints and data loading (the top level's, or a job's
 * with doc scoped to it): a training workload, and storage servers. */
static int check_storage_workload(const cfg_workload *w, const cfg_scenario *s, const cfg_doc *doc,
                                  sim_error *err) {
  if (w->data_loading && w->kind != CFG_WORKLOAD_TRAINING)
    return cfg_fail_at(doc, "workload.data_loading", err,
                       "a %s workload reads no training data; allowed: false, or workload.kind "
                       "training",
                       cfg_workload_kind_name(w->kind));
  if (w->data_loading && s->storage.servers == 0)
    return cfg_fail_at(doc, "workload.data_loading", err,
                       "data loading reads from storage servers; set storage.servers");
  if (w->checkpoint.every) {
    if (w->kind != CFG_WORKLOAD_TRAINING)
      return cfg_fail_at(doc, "workload.checkpoint.every", err,
                         "a %s workload writes no checkpoint; allowed: 0, or workload.kind "
                         "training",
                         cfg_workload_kind_name(w->kind));
    if (s->storage.servers == 0)
      return cfg_fail_at(doc, "workload.checkpoint.every", err,
                         "a checkpoint needs storage servers to write to; set storage.servers");
  }
  return SIM_OK;
}

/* storage.* and workload.checkpoint.*: a checkpoint needs servers to write
 * to and a training workload to write it (the scenario's, or each job's);
 * a server is a whole number of nodes of the fabric it is on (topo: its
 * NICs take the layout of that many nodes); the parallel engine does not
 * carry storage traffic yet. */
static int check_storage(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  int rc = s->jobs.n ? SIM_OK : check_storage_workload(&s->workload, s, doc, err);
  for (uint32_t j = 0; j < s->jobs.n && rc == SIM_OK; j++) {
    cfg_doc_scope_job(doc, (int)j);
    rc = check_storage_workload(&s->jobs.v[j].workload, s, doc, err);
    cfg_doc_scope_job(doc, -1);
  }
  if (rc != SIM_OK) return rc;
  if (s->storage.servers == 0) return SIM_OK;
  bool sep = s->storage.attach == CFG_STORAGE_SEPARATE;
  uint32_t per = sep ? s->storage.frontend.per_node : s->cluster.nic.per_node;
  if (s->storage.nic.per_server % per)
    return cfg_fail_at(doc, "storage.nic.per_server", err,
                       "%u ports per server on a fabric of %u NICs per node (%s); allowed: a "
                       "multiple of %u (a server takes the ports of whole nodes)",
                       s->storage.nic.per_server, per,
                       sep ? "storage.frontend.per_node" : "cluster.nic.per_node", per);
  if (s->simulation.engine == CFG_ENGINE_PARALLEL)
    return cfg_fail_at(doc, "storage.servers", err,
                       "storage servers are not yet supported by simulation.engine parallel; "
                       "allowed: 0, or engine sequential");
  return SIM_OK;
}

static int check_days(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  if (s->reliability.days <= CFG__DAYS_MAX) return SIM_OK;
  return cfg_fail_at(doc, "reliability.days", err,
                     "%g days is not one training run; allowed: more than 0 and at most %d (ten "
                     "years; the longest published runs last months, Llama 3: 54 days)",
                     s->reliability.days, CFG__DAYS_MAX);
}

/* The racks of the cluster (power.rack.servers nodes each, the last one
 * partly filled), as the power model counts them. */
static uint32_t racks_of(const cfg_scenario *s) {
  uint32_t per = s->power.rack.servers ? s->power.rack.servers : 1;
  return (uint32_t)(((uint64_t)s->cluster.nodes + per - 1) / per);
}

/* "RACK:KW" into rack and kW; false for anything else ("none" included). */
static bool parse_cooling(const char *text, uint32_t *rack, double *kw) {
  if (!text || !isdigit((unsigned char)text[0])) return false;
  char *end;
  errno = 0;
  unsigned long r = strtoul(text, &end, 10);
  if (errno || *end != ':' || r > UINT32_MAX) return false;
  const char *k = end + 1;
  double v = strtod(k, &end);
  if (end == k || *end || !(v > 0) || !isfinite(v)) return false;
  *rack = (uint32_t)r, *kw = v;
  return true;
}

bool cfg_cooling_failure(const cfg_scenario *s, uint32_t *rack, double *kw) {
  return parse_cooling(s->power.rack.cooling_failure, rack, kw);
}

/* power.bands: "LO-HI,LO-HI,..." into lo[], hi[] (up to max); the count, or
 * -1 with *why set for text that is not bands, increasing and apart. */
static long parse_bands(const char *text, double *lo, double *hi, size_t max, const char **why) {
  long n = 0;
  double prev = 0;
  const char *p = text;
  if (!strcmp(text, "none")) return 0;
  for (;;) {
    char *end;
    double a = strtod(p, &end);
    if (end == p || *end != '-') return *why = "a band is LO-HI", -1;
    p = end + 1;
    double b = strtod(p, &end);
    if (end == p || (*end && *end != ',')) return *why = "a band is LO-HI", -1;
    if (!isfinite(a) || !isfinite(b) || a < 0) return *why = "frequencies are finite, >= 0", -1;
    if (!(a < b)) return *why = "each band's LO is below its HI", -1;
    if (n > 0 && a < prev) return *why = "bands are increasing and do not overlap", -1;
    if ((size_t)n < max) lo[n] = a, hi[n] = b;
    n++, prev = b;
    if (!*end) return n;
    p = end + 1;
  }
}

size_t cfg_power_bands(const cfg_scenario *s, double *lo, double *hi, size_t max) {
  const char *why;
  long n = parse_bands(s->power.bands, lo, hi, max, &why);
  return n < 0 ? 0 : (size_t)n;
}

/* The reliability and power keys a run reads only at its end (a failure's
 * cost, the racks' power), checked here so that a bad one is refused before
 * anything is simulated, by every verb alike (they were once read only where
 * a run used them: after the simulation, or not at all). */
static int check_text_values(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  const char *iv = s->reliability.checkpoint.interval;
  simtime_ps t = 0;
  sim_error perr = {0};
  if (strcmp(iv, "auto") && (cfg_parse_time(iv, &t, &perr) != SIM_OK || t == 0))
    return cfg_fail_at(doc, "reliability.checkpoint.interval", err,
                       "'%s' is not a checkpoint interval; allowed: auto (Daly's interval) or a "
                       "duration > 0 (e.g. 30min, 2h)",
                       iv);
  const __typeof__(s->reliability.rate) *r = &s->reliability.rate;
  double sum = r->faulty_gpu + r->hbm + r->software + r->network + r->host + r->sram + r->gsp +
               r->nic + r->nccl + r->sdc + r->thermal + r->other_hardware + r->dependency;
  _Static_assert(sizeof *r == 13 * sizeof(double), "a reliability.rate.* missing from the sum");
  if (s->reliability.node_failure_rate > 0 && !(sum > 0))
    return cfg_fail_at(doc, "reliability.node_failure_rate", err,
                       "every reliability.rate.* is 0, so the rate cannot be split by cause; "
                       "allowed: set at least one reliability.rate.*, or node_failure_rate 0");
  const char *cf = s->power.rack.cooling_failure;
  uint32_t rack, racks = racks_of(s);
  double kw;
  if (strcmp(cf, "none") && (!parse_cooling(cf, &rack, &kw) || rack >= racks))
    return cfg_fail_at(doc, "power.rack.cooling_failure", err,
                       "'%s' is not RACK:KW with a rack of 0..%u (%u nodes, %u per rack) and "
                       "kW > 0 (e.g. 0:20); allowed: that, or none",
                       cf, racks - 1, s->cluster.nodes, s->power.rack.servers);
  const char *why = NULL;
  if (parse_bands(s->power.bands, NULL, NULL, 0, &why) < 0)
    return cfg_fail_at(doc, "power.bands", err,
                       "'%s': %s; allowed: LO-HI,LO-HI,... in Hz (0 <= LO < HI, increasing, "
                       "e.g. 0.1-1,1-20), or none",
                       s->power.bands, why);
  return SIM_OK;
}

/* A run that would need more memory than the machine has (or
 * simulation.memory_limit allows) is refused before it builds anything,
 * instead of being killed half-way: located at cluster.nodes, naming the
 * fidelity and the smaller fidelities' estimates. Cost: O(1). */
static int check_memory(cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  cfg_memory m;
  uint64_t avail = s->simulation.memory_limit ? s->simulation.memory_limit : cfg_memory_available();
  cfg_memory_estimate(s, &m);
  if (m.bytes <= avail) return SIM_OK;
  char need[32], have[32], alt[160] = "", x[32];
  cfg_fidelity fid = s->simulation.fidelity;
  for (int f = (int)fid - 1; f >= 0; f--) { /* the cheaper fidelities that fit */
    cfg_memory o;
    s->simulation.fidelity = (cfg_fidelity)f;
    cfg_memory_estimate(s, &o);
    if (o.bytes > avail) continue; /* never one that would be refused too */
    size_t len = strlen(alt);
    snprintf(alt + len, sizeof alt - len, ", or simulation.fidelity %s (%s)",
             cfg_fidelity_name((cfg_fidelity)f), sim_fmt_bytes(x, sizeof x, o.bytes));
  }
  s->simulation.fidelity = fid;
  return cfg_fail_at(
      doc, "cluster.nodes", err,
      "%llu GPUs and %llu links at simulation.fidelity %s need about %s (estimate: %llu B "
      "per GPU + %llu B per link + %llu B per transfer of a phase, %llu of them), more than "
      "the %s %s; allowed: fewer cluster.nodes%s",
      (unsigned long long)m.gpus, (unsigned long long)m.links, cfg_fidelity_name(fid),
      sim_fmt_bytes(need, sizeof need, m.bytes), (unsigned long long)(m.per_gpu + m.per_rank),
      (unsigned long long)m.per_link, (unsigned long long)m.per_transfer,
      (unsigned long long)m.transfers, sim_fmt_bytes(have, sizeof have, avail),
      s->simulation.memory_limit ? "of simulation.memory_limit"
                                 : "available on this machine (MemAvailable)",
      alt);
}

/* ---- what a run derives must be representable -------------------------------------- */

/* The largest value a number key takes (docs/validation.md, "Simulated
 * time"): far above any physical figure (a GPU of 10^18 FLOP/s, a switch
 * of 10^18 dollars), and small enough that every sum over a cluster and
 * every product of a few such inputs stays a finite double, so no
 * derived figure is infinite (issue 27, defect 10). */
#define CFG__DOUBLE_MAX 1e18

static const void *key_field(const cfg_scenario *s, const cfg__key *k) {
  return (const char *)s + k->offset;
}

/* Every number key at most CFG__DOUBLE_MAX and every time key below the
 * horizon of simulated time, in s (workload keys only: a job's view). */
static int check_key_values(const cfg_scenario *s, const cfg_doc *doc, bool workload_only,
                            sim_error *err) {
  for (size_t i = 0; i < cfg__nkeys(); i++) {
    const cfg__key *k = cfg__key_at(i);
    if (workload_only && !cfg__is_workload_key(i)) continue;
    if (k->type == CFG__DOUBLE) {
      double v;
      memcpy(&v, key_field(s, k), sizeof v);
      if (!(v <= CFG__DOUBLE_MAX))
        return cfg_fail_at(doc, k->name, err,
                           "%g is too large for the figures a run derives from it to be "
                           "represented (sums over the cluster would overflow); allowed: at "
                           "most %g",
                           v, CFG__DOUBLE_MAX);
    } else if (k->type == CFG__TIME && k->width == sizeof(simtime_ps)) {
      simtime_ps v;
      memcpy(&v, key_field(s, k), sizeof v);
      if (v != CFG__TIME_AUTO && v >= CFG__HORIZON_PS)
        return cfg_fail_at(doc, k->name, err,
                           "%.4g days reaches the horizon of simulated time (2^62 ps, %.1f "
                           "days); allowed: less",
                           (double)v / (86400.0 * SIM_PS_PER_S),
                           (double)CFG__HORIZON_PS / (86400.0 * SIM_PS_PER_S));
    }
  }
  return SIM_OK;
}

/* `value` bytes at key, of which a share 1/per cannot move faster than
 * `bps` (a lower bound on their time, `over` says where): refused when
 * that time reaches the horizon, with the most that fits. */
static int check_transfer_time(const cfg_doc *doc, const char *key, uint64_t value, double per,
                               double bps, const char *over, sim_error *err) {
  double h = (double)CFG__HORIZON_PS * 1e-12, t = (double)value / per * 8 / bps;
  char share[64] = "";
  if (!(bps > 0) || t < h) return SIM_OK;
  if (per > 1) snprintf(share, sizeof share, " (a rank's share: 1/%.0f of them)", per);
  return cfg_fail_at(doc, key, err,
                     "%llu bytes%s take at least %.4g days %s at %.4g Gb/s, past the horizon "
                     "of simulated time (2^62 ps, %.4g days); allowed: at most %.0f bytes",
                     (unsigned long long)value, share, t / 86400, over, bps / 1e9, h / 86400,
                     floor(h * bps / 8 * per * (1 - 1e-12)));
}

/* A workload's sizes against the fastest its bytes could move (so what is
 * refused certainly passes the horizon; the run stops at the horizon for
 * the rest, fabsim/ev.h): a collective's busiest rank sends at least its
 * share, size / ranks, out of its GPU (scale-up plus its NICs); a flow of
 * traffic leaves one GPU; a checkpoint enters the storage servers, each at
 * most at its drives' or its ports' rate. */
static int check_workload_horizon(const cfg_scenario *s, const cfg_workload *w, uint64_t gpus,
                                  const cfg_doc *doc, sim_error *err) {
  uint32_t gpn = s->cluster.gpus_per_node ? s->cluster.gpus_per_node : 1;
  uint32_t nics = s->cluster.nic.per_node / gpn ? s->cluster.nic.per_node / gpn : 1;
  if (s->cluster.nic.per_node % gpn) nics++;
  double egress =
      (double)s->cluster.scale_up.bandwidth + (double)s->cluster.nic.bandwidth * (double)nics;
  int rc = SIM_OK;
  if (w->kind == CFG_WORKLOAD_COLLECTIVE) {
    double ranks = w->collective.ranks ? w->collective.ranks : (double)(gpus ? gpus : 1);
    rc = check_transfer_time(doc, "workload.collective.size", w->collective.size, ranks, egress,
                             "out of its GPU's scale-up and NIC links", err);
  } else if (w->kind == CFG_WORKLOAD_TRAFFIC) {
    rc = check_transfer_time(doc, "workload.traffic.size", w->traffic.size, 1, egress,
                             "out of a GPU's scale-up and NIC links", err);
  }
  if (rc == SIM_OK && w->checkpoint.size && s->storage.servers) {
    double nic = (double)s->storage.nic.bandwidth * s->storage.nic.per_server,
           drives = (double)s->storage.write_bandwidth;
    rc = check_transfer_time(doc, "workload.checkpoint.size", w->checkpoint.size, 1,
                             (nic < drives ? nic : drives) * s->storage.servers,
                             "into the storage servers' ports and drives", err);
  }
  return rc;
}

static int check_representable(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  int rc = check_key_values(s, doc, false, err);
  uint64_t gpus = cfg_memory_nics(s) / (s->cluster.nic.per_node ? s->cluster.nic.per_node : 1) *
                  s->cluster.gpus_per_node;
  if (rc == SIM_OK && s->jobs.n == 0) rc = check_workload_horizon(s, &s->workload, gpus, doc, err);
  for (uint32_t j = 0; rc == SIM_OK && j < s->jobs.n; j++) {
    cfg_scenario view = *s; /* the job's workload where the top-level one would be */
    view.workload = s->jobs.v[j].workload;
    cfg_doc_scope_job(doc, (int)j);
    rc = check_key_values(&view, doc, true, err);
    if (rc == SIM_OK) rc = check_workload_horizon(s, &view.workload, s->jobs.v[j].gpus, doc, err);
    cfg_doc_scope_job(doc, -1);
  }
  return rc;
}

int cfg__resolve(cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  int rc = apply_presets(s, doc, err);
  if (rc == SIM_OK) rc = check_nics(s, doc, err);
  if (rc == SIM_OK) rc = check_planes(s, doc, err);
  if (rc == SIM_OK) rc = check_switch(s, doc, err);
  if (rc == SIM_OK) rc = check_collective(s, doc, err);
  if (rc == SIM_OK) cfg__jobs_presets(s, doc);
  if (rc == SIM_OK) rc = check_jobs(s, doc, err);
  if (rc == SIM_OK) rc = check_classes(s, doc, err);
  if (rc == SIM_OK) rc = check_efficiency(s, doc, err);
  if (rc == SIM_OK) rc = check_packet(s, doc, err);
  if (rc == SIM_OK) rc = check_faults(s, doc, err);
  if (rc == SIM_OK) rc = check_fault_times(s, doc, err);
  /* the packet fidelity alone has retransmission timers and switch buffers */
  if (rc == SIM_OK && s->simulation.fidelity == CFG_FIDELITY_PACKET) rc = check_rto(s, doc, err);
  if (rc == SIM_OK && s->simulation.fidelity == CFG_FIDELITY_PACKET) rc = check_buffer(s, doc, err);
  if (rc == SIM_OK) rc = check_storage(s, doc, err);
  if (rc == SIM_OK) rc = check_days(s, doc, err);
  if (rc == SIM_OK) rc = check_text_values(s, doc, err);
  if (rc == SIM_OK) rc = check_representable(s, doc, err);
  if (rc == SIM_OK) rc = check_memory(s, doc, err);
  return rc;
}
