/* A matched set of traces run on a backend (fabsim/trace.h).
 *
 * Each rank runs its DAG: a node is ready when every node it depends on is
 * done. Ready compute nodes queue on the rank's one compute stream (FIFO, in
 * the order they became ready); memory nodes take their duration beside it;
 * metadata nodes are done at once. A collective starts when every member of
 * its group has reached the call (each member's node ready), as one plan
 * (coll_plan_build) over the group's GPUs, and all members' nodes are done
 * when it ends; a send and its recv start together once both are ready, one
 * transfer on the backend, and both are done when it lands (NCCL's
 * rendezvous send/recv). Barriers and zero-byte or one-rank collectives
 * only synchronize (no time of their own).
 *
 * Iterations (workload.steps): each rank runs its DAG again as soon as its
 * own previous iteration has ended (no barrier between iterations: the
 * collectives synchronize the ranks, as in a real job). A call or pair is
 * re-armed when it ends; no member can reach it again before that, since
 * its own node of the call is part of the iteration it must finish first.
 *
 * GPU faults (flt_gpu_hooks): a slowdown to factor f makes the rank's GPU
 * stream run its compute nodes at f (the node in progress finishes its
 * remaining work at the new speed; host and memory nodes are not the GPU's
 * compute and keep their time); a GPU or node failure stops the job there.
 *
 * Plans are built once per distinct (group, operation, bytes) and shared
 * by the calls (the backend only reads transfer arrays). Everything runs in
 * the simulation's total event order: deterministic.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fabsim/workload.h"
#include "trace/trc_internal.h"

typedef struct trc_runner trc_runner;

typedef struct call_state {
  trc_runner *run;
  uint32_t group, k; /* call k of group */
  uint32_t arrived;
  int32_t plan; /* index into plans; -1: synchronization only */
  coll_exec exec;
} call_state;

typedef struct pair_state {
  trc_runner *run;
  uint32_t index;
  uint32_t arrived;
  be_xfer x;
} pair_state;

typedef struct stream {
  uint32_t *queue; /* ready nodes, FIFO */
  uint32_t qhead, qtail;
  bool busy;
  uint32_t node;    /* the node in progress */
  uint32_t seq;     /* its start's number: an end event of another is stale */
  simtime_ps since; /* the node in progress: the last (re)start of its timing */
  double work;      /* its work left at full speed at `since`, ps */
} stream;

enum { GPU_STREAM, HOST_STREAM };

typedef struct rank_state {
  uint32_t *left; /* per node: dependencies not yet done */
  stream st[2];   /* the GPU's compute stream, the host's */
  uint32_t comm;  /* collectives and transfers in flight (from arrival) */
  simtime_ps last, compute, comm_t, exposed, idle, end;
  uint32_t done; /* nodes done in this iteration */
  uint32_t iter; /* iterations finished */
  double speed;  /* the GPU's speed (1: full; a gpu-slowdown's factor) */
} rank_state;

typedef struct plan_key {
  uint32_t group;
  cfg_coll_op op;
  uint64_t bytes;
} plan_key;

struct trc_runner {
  const trc_set *s;
  const topo *t;
  sim_ctx *sim;
  be_backend *b;
  simtime_ps start;
  simtime_ps **node_ps; /* per trace, per node: its duration */
  rank_state *ranks;
  call_state *calls;
  pair_state *pairs;
  coll_plan *plans;
  plan_key *keys;
  size_t nplans;
  uint64_t nodes_total, nodes_done, compute_nodes, coll_bytes, p2p_bytes;
  uint32_t *work; /* pending completions: (rank, node) pairs */
  size_t nwork, workcap;
  bool draining;
  uint32_t iters;       /* workload.steps */
  simtime_ps *iter_end; /* per iteration: when its last rank finished it */
  bool failed;          /* a GPU or node of the job failed: the job stopped */
  trc_failure failure;
  simtime_ps gpu_ps;     /* the largest GPU stream's compute in one iteration */
  uint32_t *gpu;         /* per rank its GPU; NULL: rank r is GPU r */
  uint32_t *rank_of;     /* with gpu: per GPU of t its rank, or UINT32_MAX */
  uint32_t **group_gpus; /* with gpu: per group its members' GPUs (the plans' ranks) */
  bool shared;           /* on a backend other jobs share: a failure stops the job only */
};

static inline uint32_t gpu_of(const trc_runner *r, uint32_t rank) {
  return r->gpu ? r->gpu[rank] : rank;
}

/* The rank on GPU gpu, or UINT32_MAX: no rank of the job. */
static uint32_t rank_at(const trc_runner *r, uint32_t gpu) {
  if (r->gpu) return gpu < topo_gpu_count(r->t) ? r->rank_of[gpu] : UINT32_MAX;
  return gpu < r->s->nranks ? gpu : UINT32_MAX;
}

/* ---- preparation ---------------------------------------------------------- */

/* A node's recorded time: at most the horizon of simulated time (checked
 * at create), so no sum of two wraps. */
#define TRC_MAX_US (WL_HORIZON_PS / 1000000u)

static simtime_ps secs_ps(double s) {
  if (!(s > 0)) return 0;
  double ps = ceil(s * 1e12);
  return ps >= (double)WL_HORIZON_PS ? WL_HORIZON_PS : (simtime_ps)ps;
}

static int node_times(trc_runner *r, const cfg_scenario *cfg, const cfg_doc *doc, sim_error *err) {
  const trc_set *s = r->s;
  double flops, hbm; /* the training step's achievable rates */
  wl_achievable(cfg, &flops, &hbm);
  r->node_ps = sim_calloc(s->ntraces, sizeof *r->node_ps);
  for (uint32_t k = 0; k < s->ntraces; k++) {
    const trc_trace *t = &s->traces[k];
    r->node_ps[k] = sim_calloc(t->n ? t->n : 1, sizeof **r->node_ps);
    simtime_ps total = 0; /* every node's time: a bound on the rank's critical path's compute */
    simtime_ps gpu = 0;   /* its compute nodes': they run one at a time */
    for (uint32_t i = 0; i < t->n; i++) {
      const trc_node *x = &t->nodes[i];
      if (x->kind != TRC_COMPUTE && x->kind != TRC_MEM && x->kind != TRC_HOST) continue;
      if (x->duration_us > TRC_MAX_US)
        return cfg_fail_at(doc, "workload.trace.path", err,
                           "%s: byte %llu, node %llu: "
                           "duration_micros %llu; allowed: at most %llu (2^62 ps, the horizon "
                           "of simulated time)",
                           t->name, (unsigned long long)x->offset, (unsigned long long)x->id,
                           (unsigned long long)x->duration_us, (unsigned long long)TRC_MAX_US);
      simtime_ps d = x->duration_us * 1000000u;
      if (x->kind == TRC_COMPUTE && cfg->workload.trace.compute == CFG_TRACE_ROOFLINE &&
          x->num_ops && flops > 0) {
        double a = (double)x->num_ops / flops, m = hbm > 0 ? (double)x->tensor_size / hbm : 0;
        d = secs_ps(a > m ? a : m);
      }
      r->node_ps[k][i] = d;
      if (x->kind == TRC_COMPUTE) gpu += d;
      if ((total += d) >= WL_HORIZON_PS)
        return cfg_fail_at(doc, "workload.trace.path", err,
                           "%s: byte %llu, node %llu: the "
                           "nodes' durations up to here add up past the horizon of simulated "
                           "time, %.4g s (2^62 ps); allowed: less",
                           t->name, (unsigned long long)x->offset, (unsigned long long)x->id,
                           sim_ps_to_s(WL_HORIZON_PS));
    }
    if (gpu > r->gpu_ps) r->gpu_ps = gpu;
  }
  return SIM_OK;
}

static bool map_op(int comm_type, cfg_coll_op *op) {
  switch (comm_type) {
  case TRC_ALL_REDUCE: *op = CFG_COLL_ALLREDUCE; return true;
  case TRC_ALL_GATHER: *op = CFG_COLL_ALLGATHER; return true;
  case TRC_REDUCE_SCATTER:
  case TRC_REDUCE_SCATTER_BLOCK: *op = CFG_COLL_REDUCESCATTER; return true;
  case TRC_BROADCAST: *op = CFG_COLL_BROADCAST; return true;
  case TRC_ALL_TO_ALL: *op = CFG_COLL_ALLTOALL; return true;
  default: return false;
  }
}

/* The plan of each call (shared by equal calls). */
static int plan_calls(trc_runner *r, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                      sim_error *err) {
  const trc_set *s = r->s;
  size_t cap = 0;
  r->calls = sim_calloc(s->ninstances ? s->ninstances : 1, sizeof *r->calls);
  for (uint32_t gi = 0; gi < s->ngroups; gi++) {
    const trc_group *g = &s->groups[gi];
    uint32_t k0 = s->rank_trace[g->ranks[0]];
    const trc_trace *tr = &s->traces[k0];
    uint32_t p = 0;
    while (s->pg_group[k0][p] != gi) p++;
    for (uint32_t c = 0; c < g->ncalls; c++) {
      const trc_node *x = &tr->nodes[tr->call_nodes[tr->call_start[p] + c]];
      call_state *cs = &r->calls[g->first + c];
      cs->run = r, cs->group = gi, cs->k = c, cs->plan = -1;
      if (x->comm_type == TRC_BARRIER || x->bytes == 0 || g->nranks < 2) continue;
      cfg_coll_op op;
      if (!map_op(x->comm_type, &op))
        return cfg_fail_at(doc, "workload.trace.path", err,
                           "%s: byte %llu, node %llu: a %s "
                           "collective, which fabsim does not model; allowed: ALL_REDUCE, "
                           "ALL_GATHER, REDUCE_SCATTER(_BLOCK), BROADCAST, ALL_TO_ALL, BARRIER",
                           tr->name, (unsigned long long)x->offset, (unsigned long long)x->id,
                           trc_comm_type_name(x->comm_type));
      /* comm_size is what one rank contributes (Chakra's converter: the input
       * tensors); nccl-tests' S is the output for AllGather: n x input */
      uint64_t bytes = x->bytes;
      if (op == CFG_COLL_ALLGATHER) {
        if (bytes > UINT64_MAX / 4 / g->nranks)
          return cfg_fail_at(doc, "workload.trace.path", err,
                             "%s: node %llu: comm_size %llu "
                             "too large",
                             tr->name, (unsigned long long)x->id, (unsigned long long)bytes);
        bytes *= g->nranks;
      }
      size_t j = 0;
      while (j < r->nplans &&
             !(r->keys[j].group == gi && r->keys[j].op == op && r->keys[j].bytes == bytes))
        j++;
      if (j == r->nplans) {
        if (r->gpu && !r->group_gpus[gi]) { /* the members' GPUs, ascending as the ranks */
          r->group_gpus[gi] = sim_malloc(g->nranks * sizeof **r->group_gpus);
          for (uint32_t m = 0; m < g->nranks; m++) r->group_gpus[gi][m] = r->gpu[g->ranks[m]];
        }
        coll_spec spec = coll_spec_from_cfg(cfg, op, bytes,
                                            r->gpu ? r->group_gpus[gi] : g->ranks, /* ascending */
                                            g->nranks);
        size_t kcap = r->nplans;
        sim_grow((void **)&r->plans, &cap, r->nplans + 1, sizeof *r->plans);
        sim_grow((void **)&r->keys, &kcap, r->nplans + 1, sizeof *r->keys);
        memset(&r->plans[j], 0, sizeof r->plans[j]);
        sim_error e = {0};
        if (coll_plan_build(&r->plans[j], t, &spec, &e) != SIM_OK)
          return cfg_fail_at(doc, "workload.collective.algorithm", err,
                             "%s, node %llu (%s of "
                             "%llu bytes over %u ranks): %s",
                             tr->name, (unsigned long long)x->id, trc_comm_type_name(x->comm_type),
                             (unsigned long long)x->bytes, g->nranks, e.msg);
        coll_plan_set_class(&r->plans[j], cfg->workload.tclass);
        r->keys[j] = (plan_key){gi, op, bytes};
        r->nplans++;
      }
      cs->plan = (int32_t)j;
      r->coll_bytes += bytes;
    }
  }
  return SIM_OK;
}

int trc_runner_create(trc_runner **out, const trc_set *s, const cfg_scenario *cfg,
                      const cfg_doc *doc, const topo *t, be_backend *b, sim_error *err) {
  return trc_runner_create_on(out, s, cfg, doc, t, b, NULL, 0, err);
}

int trc_runner_create_on(trc_runner **out, const trc_set *s, const cfg_scenario *cfg,
                         const cfg_doc *doc, const topo *t, be_backend *b, const uint32_t *gpus,
                         uint32_t ngpus, sim_error *err) {
  trc_runner *r = sim_calloc(1, sizeof *r);
  r->s = s;
  r->t = t;
  r->b = b;
  r->sim = b->sim;
  r->iters = cfg->workload.steps ? cfg->workload.steps : 1;
  *out = NULL;
  uint32_t have = gpus ? ngpus : topo_gpu_count(t);
  if (s->nranks > have) {
    trc_runner_free(r);
    return cfg_fail_at(doc, "workload.trace.ranks", err, "%u ranks but the %s has %u GPUs",
                       s->nranks, gpus ? "job" : "cluster", have);
  }
  if (gpus) {
    r->shared = true;
    r->gpu = sim_malloc((s->nranks ? s->nranks : 1) * sizeof *r->gpu);
    r->rank_of = sim_malloc((topo_gpu_count(t) ? topo_gpu_count(t) : 1) * sizeof *r->rank_of);
    r->group_gpus = sim_calloc(s->ngroups ? s->ngroups : 1, sizeof *r->group_gpus);
    for (uint32_t g = 0; g < topo_gpu_count(t); g++) r->rank_of[g] = UINT32_MAX;
    for (uint32_t i = 0; i < s->nranks; i++) r->rank_of[r->gpu[i] = gpus[i]] = i;
  }
  int rc = node_times(r, cfg, doc, err);
  /* iterations of GPU compute (one node at a time per rank: a lower bound) */
  if (rc == SIM_OK)
    rc = wl_check_horizon(cfg, doc, (double)r->gpu_ps, r->iters, "iterations", "GPU compute", err);
  if (rc == SIM_OK) rc = plan_calls(r, cfg, doc, t, err);
  if (rc != SIM_OK) {
    trc_runner_free(r);
    return rc;
  }
  r->pairs = sim_calloc(s->npairs ? s->npairs : 1, sizeof *r->pairs);
  for (uint32_t p = 0; p < s->npairs; p++) {
    const trc_pair *q = &s->pairs[p];
    r->pairs[p] = (pair_state){
        r,
        p,
        0,
        {gpu_of(r, q->src), gpu_of(r, q->dst), q->bytes, sim_hash_u64(p), cfg->workload.tclass}};
    r->p2p_bytes += q->bytes;
  }
  r->ranks = sim_calloc(s->nranks ? s->nranks : 1, sizeof *r->ranks);
  for (uint32_t i = 0; i < s->nranks; i++) {
    const trc_trace *tr = &s->traces[s->rank_trace[i]];
    rank_state *rs = &r->ranks[i];
    rs->left = sim_malloc((tr->n ? tr->n : 1) * sizeof *rs->left);
    for (int w = 0; w < 2; w++)
      rs->st[w].queue = sim_malloc((tr->n ? tr->n : 1) * sizeof *rs->st[w].queue);
    for (uint32_t j = 0; j < tr->n; j++) {
      rs->left[j] = tr->nodes[j].ndeps;
      if (tr->nodes[j].kind == TRC_COMPUTE) r->compute_nodes++;
    }
    rs->speed = 1;
    r->nodes_total += (uint64_t)tr->n * r->iters;
  }
  r->iter_end = sim_calloc(r->iters, sizeof *r->iter_end);
  *out = r;
  return SIM_OK;
}

/* ---- execution ------------------------------------------------------------ */

/* Time of rank i up to now into its figures. */
static void account(trc_runner *r, uint32_t i) {
  rank_state *rs = &r->ranks[i];
  simtime_ps now = sim_now(r->sim), dt = now - rs->last;
  if (rs->st[GPU_STREAM].busy) rs->compute += dt;
  else if (rs->comm) rs->exposed += dt;
  else rs->idle += dt;
  if (rs->comm) rs->comm_t += dt;
  rs->last = now;
}

static void push_done(trc_runner *r, uint32_t rank, uint32_t node) {
  sim_grow((void **)&r->work, &r->workcap, r->nwork + 2, sizeof *r->work);
  r->work[r->nwork++] = rank;
  r->work[r->nwork++] = node;
}

static void drain(trc_runner *r);

static void compute_done(sim_ctx *sim, void *obj, uint64_t arg);

/* The stream's node ends when its work left runs at the stream's speed
 * (the host's: always full); earlier end events are stale from now on.
 * arg: rank << 32 | start number << 1 | stream. */
static void time_stream(trc_runner *r, uint32_t i, int which) {
  stream *q = &r->ranks[i].st[which];
  double speed = which == GPU_STREAM ? r->ranks[i].speed : 1, d = ceil(q->work / speed);
  simtime_ps left = d >= (double)WL_HORIZON_PS ? WL_HORIZON_PS : (simtime_ps)d;
  q->seq = (q->seq + 1) & 0x7fffffffu;
  ev_schedule(r->sim, q->since + left, compute_done, r,
              (uint64_t)i << 32 | (uint64_t)q->seq << 1 | (uint64_t)which);
}

static void start_stream(trc_runner *r, uint32_t i, int which) {
  stream *q = &r->ranks[i].st[which];
  if (q->busy || q->qhead == q->qtail || r->failed) return;
  q->node = q->queue[q->qhead++];
  account(r, i);
  q->busy = true;
  q->since = sim_now(r->sim);
  q->work = (double)r->node_ps[r->s->rank_trace[i]][q->node];
  time_stream(r, i, which);
}

static void compute_done(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)sim;
  trc_runner *r = obj;
  uint32_t i = (uint32_t)(arg >> 32), seq = (uint32_t)arg >> 1;
  int which = (int)(arg & 1);
  stream *q = &r->ranks[i].st[which];
  if (!q->busy || seq != q->seq || r->failed) return; /* re-timed by a slowdown, or stopped */
  account(r, i);
  q->busy = false;
  push_done(r, i, q->node);
  start_stream(r, i, which);
  drain(r);
}

static void mem_done(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)sim;
  trc_runner *r = obj;
  if (!r->failed) push_done(r, (uint32_t)(arg >> 32), (uint32_t)arg);
  drain(r);
}

static void comm_end(trc_runner *r, uint32_t rank, uint32_t node) {
  if (r->failed) return; /* the job stopped: what was in flight never ends for it */
  account(r, rank);
  r->ranks[rank].comm--;
  push_done(r, rank, node);
}

static void call_done(sim_ctx *sim, void *ctx) {
  (void)sim;
  call_state *cs = ctx;
  trc_runner *r = cs->run;
  const trc_set *s = r->s;
  const trc_group *g = &s->groups[cs->group];
  cs->arrived = 0; /* re-armed for the next iteration */
  for (uint32_t m = 0; m < g->nranks; m++) {
    uint32_t rank = g->ranks[m], k = s->rank_trace[rank];
    const trc_trace *t = &s->traces[k];
    uint32_t p = 0;
    while (s->pg_group[k][p] != cs->group) p++;
    comm_end(r, rank, t->call_nodes[t->call_start[p] + cs->k]);
  }
  drain(r);
}

static void pair_done(sim_ctx *sim, void *ctx) {
  (void)sim;
  pair_state *ps = ctx;
  trc_runner *r = ps->run;
  const trc_pair *q = &r->s->pairs[ps->index];
  ps->arrived = 0; /* re-armed for the next iteration */
  comm_end(r, q->src, q->send_node);
  comm_end(r, q->dst, q->recv_node);
  drain(r);
}

/* Node `node` of rank i has all its dependencies done. */
static void ready(trc_runner *r, uint32_t i, uint32_t node) {
  const trc_set *s = r->s;
  uint32_t k = s->rank_trace[i];
  const trc_node *x = &s->traces[k].nodes[node];
  rank_state *rs = &r->ranks[i];
  switch (x->kind) {
  case TRC_COMPUTE:
  case TRC_HOST: {
    int which = x->kind == TRC_HOST ? HOST_STREAM : GPU_STREAM;
    rs->st[which].queue[rs->st[which].qtail++] = node;
    start_stream(r, i, which);
    break;
  }
  case TRC_MEM:
    ev_schedule(r->sim, sim_now(r->sim) + r->node_ps[k][node], mem_done, r,
                (uint64_t)i << 32 | node);
    break;
  case TRC_OTHER: push_done(r, i, node); break;
  case TRC_COLL: {
    uint32_t gi = s->pg_group[k][x->pg == TRC_NO_GROUP ? s->traces[k].npg : x->pg];
    call_state *cs = &r->calls[s->groups[gi].first + x->call];
    account(r, i);
    rs->comm++;
    if (++cs->arrived < s->groups[gi].nranks) break;
    if (cs->plan < 0) call_done(r->sim, cs);
    else coll_exec_start(&cs->exec, r->b, &r->plans[cs->plan], call_done, cs);
    break;
  }
  case TRC_SEND:
  case TRC_RECV: {
    pair_state *ps = &r->pairs[s->rank_pair[i][x->call]];
    account(r, i);
    rs->comm++;
    if (++ps->arrived < 2) break;
    if (ps->x.bytes == 0) pair_done(r->sim, ps);
    else be_submit_phase(r->b, &ps->x, 1, 1, pair_done, ps);
    break;
  }
  }
}

/* Rank i's roots ready, in the trace's order. */
static void start_rank(trc_runner *r, uint32_t i) {
  const trc_trace *t = &r->s->traces[r->s->rank_trace[i]];
  if (t->n == 0) { /* nothing to run: every iteration ends at once */
    for (; r->ranks[i].iter < r->iters; r->ranks[i].iter++)
      if (r->iter_end[r->ranks[i].iter] < sim_now(r->sim))
        r->iter_end[r->ranks[i].iter] = sim_now(r->sim);
    return;
  }
  for (uint32_t j = 0; j < t->n; j++)
    if (t->nodes[t->order[j]].ndeps == 0) ready(r, i, t->order[j]);
}

/* Rank i finished an iteration: the job's iteration ends with its last
 * rank; the rank starts its next at once. */
static void iteration_end(trc_runner *r, uint32_t i) {
  const trc_trace *t = &r->s->traces[r->s->rank_trace[i]];
  rank_state *rs = &r->ranks[i];
  simtime_ps now = sim_now(r->sim);
  if (now > r->iter_end[rs->iter]) r->iter_end[rs->iter] = now;
  if (++rs->iter == r->iters) return;
  rs->done = 0; /* every node done: both streams idle and empty */
  for (int w = 0; w < 2; w++) rs->st[w].qhead = rs->st[w].qtail = 0;
  for (uint32_t j = 0; j < t->n; j++) rs->left[j] = t->nodes[j].ndeps;
  start_rank(r, i);
}

/* Completions in order: each node done releases its children. Iterative,
 * so long chains of instant nodes do not recurse. */
static void drain(trc_runner *r) {
  if (r->failed) r->nwork = 0; /* the job stopped: nothing more happens to it */
  if (r->draining) return;
  r->draining = true;
  size_t head = 0;
  while (head < r->nwork) {
    uint32_t i = r->work[head], node = r->work[head + 1];
    head += 2;
    const trc_trace *t = &r->s->traces[r->s->rank_trace[i]];
    rank_state *rs = &r->ranks[i];
    rs->done++;
    rs->end = sim_now(r->sim);
    r->nodes_done++;
    for (uint32_t c = t->child_start[node]; c < t->child_start[node + 1]; c++)
      if (--rs->left[t->children[c]] == 0) ready(r, i, t->children[c]);
    if (rs->done == t->n) iteration_end(r, i);
  }
  r->nwork = 0;
  r->draining = false;
}

static void start_all(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)sim, (void)arg;
  trc_runner *r = obj;
  r->draining = true; /* readiness first, then completions in order */
  for (uint32_t i = 0; i < r->s->nranks; i++) start_rank(r, i);
  r->draining = false;
  drain(r);
}

/* ---- GPU faults ------------------------------------------------------------- */

static void hook_slowdown(void *ctx, simtime_ps now, uint32_t gpu, double factor) {
  trc_runner *r = ctx;
  uint32_t i = rank_at(r, gpu);
  if (i == UINT32_MAX || r->failed || !(factor > 0)) return; /* not the job's GPU */
  if (factor > 1) factor = 1;
  rank_state *rs = &r->ranks[i];
  if (factor == rs->speed) return;
  stream *q = &rs->st[GPU_STREAM];
  if (q->busy) { /* the work done at the old speed, the rest at the new */
    q->work -= (double)(now - q->since) * rs->speed;
    if (q->work < 0) q->work = 0;
    q->since = now;
  }
  rs->speed = factor;
  if (q->busy) time_stream(r, i, GPU_STREAM);
}

static void hook_fail(void *ctx, simtime_ps now, uint32_t gpu, bool whole_node) {
  trc_runner *r = ctx;
  if (r->failed || trc_runner_done(r)) return; /* after the job: nothing to stop */
  bool hit = rank_at(r, gpu) != UINT32_MAX;
  uint32_t node = topo_gpu_node(r->t, gpu);
  for (uint32_t i = 0; whole_node && !hit && i < r->s->nranks; i++)
    hit = topo_gpu_node(r->t, gpu_of(r, i)) == node;
  if (!hit) return; /* no GPU of the job */
  for (uint32_t i = 0; i < r->s->nranks; i++) account(r, i);
  r->failed = true;
  r->failure = (trc_failure){now, gpu, whole_node};
  if (!r->shared) ev_stop(r->sim); /* on a shared backend the other jobs go on */
}

flt_gpu_hooks trc_runner_hooks(trc_runner *r) {
  return (flt_gpu_hooks){.ctx = r, .slowdown = hook_slowdown, .fail = hook_fail};
}

bool trc_runner_failed(const trc_runner *r, trc_failure *f) {
  if (r->failed && f) *f = r->failure;
  return r->failed;
}

void trc_runner_start(trc_runner *r) {
  r->start = sim_now(r->sim);
  for (uint32_t i = 0; i < r->s->nranks; i++) r->ranks[i].last = r->ranks[i].end = r->start;
  ev_schedule(r->sim, r->start, start_all, r, 0);
}

bool trc_runner_done(const trc_runner *r) { return r->nodes_done == r->nodes_total; }

void trc_runner_result(const trc_runner *r, trc_result *out) {
  const trc_set *s = r->s;
  memset(out, 0, sizeof *out);
  out->nranks = s->nranks;
  out->ranks = sim_calloc(s->nranks ? s->nranks : 1, sizeof *out->ranks);
  simtime_ps end = r->start;
  for (uint32_t i = 0; i < s->nranks; i++)
    if (r->ranks[i].end > end) end = r->ranks[i].end;
  if (!trc_runner_done(r) && sim_now(r->sim) > end) end = sim_now(r->sim);
  if (r->failed) end = r->failure.at;
  out->time_ps = end - r->start;
  out->time_s = sim_ps_to_s(out->time_ps);
  out->iterations = r->iters;
  out->iteration_s = sim_calloc(r->iters, sizeof *out->iteration_s);
  uint32_t done = UINT32_MAX;
  for (uint32_t i = 0; i < s->nranks; i++)
    if (r->ranks[i].iter < done) done = r->ranks[i].iter;
  out->iterations_done = s->nranks ? done : r->iters;
  for (uint32_t k = 0; k < out->iterations_done; k++)
    out->iteration_s[k] = sim_ps_to_s(r->iter_end[k] - (k ? r->iter_end[k - 1] : r->start));
  for (uint32_t i = 0; i < s->nranks; i++) {
    rank_state rs = r->ranks[i]; /* a copy: the tail up to the end counted here */
    simtime_ps dt = end > rs.last ? end - rs.last : 0;
    if (rs.st[GPU_STREAM].busy) rs.compute += dt;
    else if (rs.comm) rs.exposed += dt;
    else rs.idle += dt;
    if (rs.comm) rs.comm_t += dt;
    trc_rank_time *o = &out->ranks[i];
    o->compute_s = sim_ps_to_s(rs.compute);
    o->comm_s = sim_ps_to_s(rs.comm_t);
    o->exposed_comm_s = sim_ps_to_s(rs.exposed);
    o->idle_s = sim_ps_to_s(rs.idle);
    o->end_s = sim_ps_to_s(rs.end - r->start);
    out->compute_s += o->compute_s / s->nranks;
    out->comm_s += o->comm_s / s->nranks;
    out->exposed_comm_s += o->exposed_comm_s / s->nranks;
    out->idle_s += o->idle_s / s->nranks;
  }
  out->nodes = r->nodes_total / r->iters; /* one iteration's */
  out->compute_nodes = r->compute_nodes;
  out->collectives = s->ninstances;
  out->p2p = s->npairs;
  out->coll_bytes = r->coll_bytes;
  out->p2p_bytes = r->p2p_bytes;
}

void trc_result_free(trc_result *r) {
  sim_free(r->ranks);
  sim_free(r->iteration_s);
  r->ranks = NULL;
  r->iteration_s = NULL;
}

void trc_runner_free(trc_runner *r) {
  if (!r) return;
  for (size_t j = 0; j < r->nplans; j++) coll_plan_free(&r->plans[j]);
  sim_free(r->plans);
  sim_free(r->keys);
  if (r->node_ps)
    for (uint32_t k = 0; k < r->s->ntraces; k++) sim_free(r->node_ps[k]);
  sim_free(r->node_ps);
  if (r->ranks)
    for (uint32_t i = 0; i < r->s->nranks; i++) {
      sim_free(r->ranks[i].left);
      sim_free(r->ranks[i].st[GPU_STREAM].queue);
      sim_free(r->ranks[i].st[HOST_STREAM].queue);
    }
  sim_free(r->ranks);
  sim_free(r->calls);
  sim_free(r->pairs);
  sim_free(r->work);
  sim_free(r->iter_end);
  for (uint32_t g = 0; r->group_gpus && g < r->s->ngroups; g++) sim_free(r->group_gpus[g]);
  sim_free(r->group_gpus);
  sim_free(r->gpu);
  sim_free(r->rank_of);
  sim_free(r);
}
