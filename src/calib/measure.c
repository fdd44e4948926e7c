/* One collective from a scenario, as fabsim run and fabsim calibrate
 * simulate it (include/fabsim/calib.h).
 *
 * cal_simulate runs one collective of a given op,
 * size and rank count (its spec from the scenario by coll_spec_from_cfg,
 * as fabsim run's) on the analytic backend, the fidelity fabsim
 * calibrate fits with (one routing pass per phase: microseconds for the
 * clusters nccl-tests measures).
 *
 * nccl-tests' sendrecv_perf is no fabsim collective: each rank sends the
 * buffer to the next rank and receives from the previous one, all at once.
 * Its plan here is that one phase (rank i -> rank i+1 mod n, S bytes each),
 * with NCCL's point-to-point protocol choice (LL up to 16 KiB per peer,
 * NCCL_P2P_LL_THRESHOLD, else Simple, as coll_tune picks for all-to-all):
 * the protocol's wire bytes, its launch overhead, and its per-hop latency
 * (network when a pair crosses nodes) above the routed path's, so
 *   t = launch + alpha + max(0, hop - alpha) + w S / B
 * with alpha and B the slowest pair's path latency and rate.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/calib.h"

static bool fabsim_op(cal_op op, cfg_coll_op *out) {
  switch (op) {
  case CAL_OP_ALLREDUCE: *out = CFG_COLL_ALLREDUCE; return true;
  case CAL_OP_ALLGATHER: *out = CFG_COLL_ALLGATHER; return true;
  case CAL_OP_REDUCESCATTER: *out = CFG_COLL_REDUCESCATTER; return true;
  case CAL_OP_ALLTOALL: *out = CFG_COLL_ALLTOALL; return true;
  case CAL_OP_BROADCAST: *out = CFG_COLL_BROADCAST; return true;
  default: return false;
  }
}

bool cal_op_simulated(cal_op op) {
  cfg_coll_op c;
  return op == CAL_OP_SENDRECV || fabsim_op(op, &c);
}

static simtime_ps us_ps(double us) { return us > 0 ? (simtime_ps)llround(us * 1e6) : 0; }

/* sendrecv_perf's one phase (see the top of the file). */
static void plan_sendrecv(coll_plan *p, const topo *t, const cfg_scenario *cfg, uint64_t bytes,
                          uint32_t n) {
  memset(p, 0, sizeof *p);
  cfg_coll_protocol proto = cfg->workload.collective.protocol;
  if (proto == CFG_PROTO_AUTO || proto == CFG_PROTO_LL128) /* p2p runs LL or Simple */
    proto = bytes <= 16384 ? CFG_PROTO_LL : CFG_PROTO_SIMPLE;
  coll_protocol_params q = {.wire_num = 1, .wire_den = 1};
  if (proto != CFG_PROTO_NONE)
    q = coll_protocol_params_of(&cfg->workload.collective.latency, CFG_ALGO_PAIRWISE, proto);
  p->op = CFG_COLL_BROADCAST; /* point-to-point: bus factor 1 */
  p->algorithm = CFG_ALGO_PAIRWISE;
  p->protocol = proto;
  p->bytes = bytes;
  p->nranks = n;
  p->channels = 1;
  p->qps = 1;
  p->chunk = bytes;
  p->launch = us_ps(q.launch_us);
  p->phases = sim_calloc(1, sizeof *p->phases);
  p->nphases = p->phases_cap = 1;
  coll_phase *ph = &p->phases[0];
  ph->x = sim_calloc(n, sizeof *ph->x);
  ph->n = n;
  ph->repeat = 1;
  simtime_ps alpha = 0;
  bool crosses = false;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t dst = (i + 1) % n;
    uint64_t wire = (bytes * q.wire_num + q.wire_den - 1) / q.wire_den;
    ph->x[i] = (be_xfer){.src_gpu = i, .dst_gpu = dst, .bytes = wire, .flow_hash = i};
    topo_path path;
    if (topo_route(t, i, dst, i, &path) == SIM_OK) {
      simtime_ps a = topo_path_latency(t, &path);
      if (a > alpha) alpha = a;
    }
    crosses = crosses || topo_gpu_node(t, i) != topo_gpu_node(t, dst);
  }
  simtime_ps hop = us_ps(crosses ? q.hop_net_us : q.hop_nvlink_us);
  ph->fixed = proto == CFG_PROTO_NONE || hop <= alpha ? 0 : hop - alpha;
}

int cal_simulate(const topo *t, const cfg_scenario *cfg, cal_op op, uint64_t bytes, uint32_t ranks,
                 cal_sim *out, sim_error *err) {
  memset(out, 0, sizeof *out);
  cfg_coll_op cop = CFG_COLL_ALLREDUCE;
  if (op != CAL_OP_SENDRECV && !fabsim_op(op, &cop))
    return sim_fail(err, SIM_EINVAL,
                    "fabsim has no %s collective; allowed: allreduce, allgather, "
                    "reducescatter, alltoall, sendrecv, broadcast",
                    cal_op_name(op));
  if (ranks < 2 || ranks > topo_gpu_count(t))
    return sim_fail(err, SIM_EINVAL, "%u ranks on a cluster of %u GPUs; allowed: 2..%u", ranks,
                    topo_gpu_count(t), topo_gpu_count(t));
  coll_plan plan;
  int rc = SIM_OK;
  if (op == CAL_OP_SENDRECV) {
    plan_sendrecv(&plan, t, cfg, bytes, ranks);
  } else {
    uint32_t *ids = sim_malloc(ranks * sizeof *ids);
    for (uint32_t i = 0; i < ranks; i++) ids[i] = i;
    coll_spec spec = coll_spec_from_cfg(cfg, cop, bytes, ids, ranks);
    rc = coll_plan_build(&plan, t, &spec, err);
    sim_free(ids);
    if (rc != SIM_OK) return rc;
  }
  sim_ctx *sim = sim_create(cfg->simulation.seed);
  be_backend *b = be_analytic_create(sim, t, cfg);
  coll_exec e;
  coll_exec_start(&e, b, &plan, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  be_stats st;
  b->ops->stats(b, &st);
  if (!e.finished || st.transfers_failed)
    rc = sim_fail(err, SIM_EINVAL,
                  "%s of %llu bytes over %u ranks did not complete (%llu "
                  "transfers failed)",
                  cal_op_name(op), (unsigned long long)bytes, ranks,
                  (unsigned long long)st.transfers_failed);
  else {
    out->time_s = sim_ps_to_s(e.end - e.start);
    out->algbw_GBps = out->time_s > 0 ? (double)bytes / out->time_s / 1e9 : 0;
    out->busbw_GBps = out->algbw_GBps * cal_bus_factor(op, ranks);
    out->algorithm = plan.algorithm;
    out->protocol = plan.protocol;
    out->channels = plan.channels;
  }
  be_destroy(b);
  sim_destroy(sim);
  coll_plan_free(&plan);
  return rc;
}
