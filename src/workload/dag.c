/* One training step as a DAG per pipeline stage.
 *
 * Per stage, micro-batches run in 1F1B order (Narayanan et al. 2021):
 * min(pp - s - 1, m) warm-up forwards, then one forward and one backward
 * alternately, then the remaining backwards. A forward of stage s > 0 waits
 * for the activation send from stage s - 1; a backward of stage s < pp - 1
 * for the gradient send from stage s + 1.
 *
 * Inside a micro-batch, per transformer layer (Megatron-LM order):
 *   forward:  attention | TP AllReduce | EP dispatch | feed-forward |
 *             EP combine | TP AllReduce
 *   backward: the same in reverse, each computation twice the forward's
 *             FLOPs, plus what recomputation reruns (recompute.c).
 * Durations: each operation of the layer timed by its roofline (roofline.c:
 * GEMMs, attention core, element-wise operations), summed into the part's
 * computation; a backward is the input-gradient half (GEMMs, attention
 * core, element-wise) plus the weight-gradient GEMMs (deferred to a W under
 * DualPipe's zero-bubble split), plus the recomputed forward: the whole
 * forward of a layer full recomputation reruns, the selective modules'
 * operations otherwise (recompute.c). Each node keeps the share of its time
 * that memory-bound operations took, and the share recomputation took. The
 * last stage adds the output layer (never recomputed); the input embedding
 * is a lookup (not timed).
 *
 * Gradients: as the last micro-batch's backward pass produces each layer's
 * gradients, they fill buckets of workload.bucket_size, each reduced over the
 * data-parallel group as soon as it is full (AllReduce; ReduceScatter under
 * ZeRO 1-3; ZeRO 2-3 reduce after every micro-batch since gradients are not
 * kept whole). Without workload.grad_overlap all buckets wait for the end of
 * the backward pass. The optimizer (HBM-bound: read and write its states,
 * read the gradients, write the weights) waits for the last bucket; ZeRO 1-2
 * then AllGather the updated weights; ZeRO 3 AllGathers each layer's weights
 * before its forward and its backward instead.
 *
 * Consecutive computations with nothing between them merge into one node,
 * so a data-parallel-only step has a handful of nodes per micro-batch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload/wl_internal.h"

static simtime_ps secs_ps(double s) {
  if (!(s > 0)) return 0;
  double ps = ceil(s * 1e12);
  return ps >= 1.8e19 ? SIM_TIME_MAX : (simtime_ps)ps;
}

/* ---- graph primitives ------------------------------------------------------ */

static uint32_t add_node(wl__dag *d, uint32_t stage, uint8_t stream, uint8_t role) {
  sim_grow((void **)&d->nodes, &d->cap, d->n + 1, sizeof *d->nodes);
  uint32_t i = (uint32_t)d->n++;
  wl__node *x = &d->nodes[i];
  memset(x, 0, sizeof *x);
  x->stage = stage;
  x->stream = stream;
  x->role = role;
  x->peer = x->cls = x->first_edge = x->next = x->aux = WL__NONE;
  uint32_t *tail = &d->tail[stage * WL__STREAMS + stream];
  if (*tail == WL__NONE) d->head[stage * WL__STREAMS + stream] = i;
  else d->nodes[*tail].next = i;
  *tail = i;
  return i;
}

static void add_edge(wl__dag *d, uint32_t from, uint32_t to) {
  if (d->nedges + 1 > d->ecap) {
    size_t cap = d->ecap;
    sim_grow((void **)&d->edge_to, &cap, d->nedges + 1, sizeof *d->edge_to);
    sim_grow((void **)&d->edge_next, &d->ecap, d->nedges + 1, sizeof *d->edge_next);
  }
  uint32_t k = (uint32_t)d->nedges++;
  d->edge_to[k] = to;
  d->edge_next[k] = d->nodes[from].first_edge;
  d->nodes[from].first_edge = k;
  d->nodes[from].sealed = true;
  d->nodes[to].deps++;
}

/* A computation on stage s, merged into the stream's last node when that is
 * an unsealed computation of the same role and `fresh` is false (a node that
 * will receive a dependency must be fresh). */
static uint32_t compute(wl__dag *d, uint32_t s, uint8_t role, wl__cost c, double rc, bool fresh) {
  uint32_t tail = d->tail[s * WL__STREAMS + WL__COMPUTE];
  if (!fresh && tail != WL__NONE) {
    wl__node *x = &d->nodes[tail];
    if (x->cls == WL__NONE && x->role == role && !x->sealed) {
      x->dur += secs_ps(c.t);
      x->mem += secs_ps(c.mem);
      x->rc += secs_ps(rc);
      return tail;
    }
  }
  uint32_t i = add_node(d, s, WL__COMPUTE, role);
  d->nodes[i].dur = secs_ps(c.t);
  d->nodes[i].mem = secs_ps(c.mem);
  d->nodes[i].rc = secs_ps(rc);
  return i;
}

/* ---- communication classes -------------------------------------------------- */

static uint32_t group_size(const wl__dag *d, wl_comm_kind k) {
  const wl_parallel *p = d->p;
  switch (k) {
  case WL_COMM_TP_ALLREDUCE: return p->tp;
  case WL_COMM_EP_DISPATCH:
  case WL_COMM_EP_COMBINE: return p->ep;
  case WL_COMM_PP_SEND: return 2;
  case WL_COMM_DP_ALLREDUCE:
  case WL_COMM_DP_REDUCESCATTER:
  case WL_COMM_DP_ALLGATHER: return p->dp;
  default: return p->dp / p->ep;
  }
}

static uint32_t group_count(const wl__dag *d, wl_comm_kind k) {
  const wl_parallel *p = d->p;
  switch (k) {
  case WL_COMM_TP_ALLREDUCE: return p->dp;
  case WL_COMM_EP_DISPATCH:
  case WL_COMM_EP_COMBINE: return p->tp * (p->dp / p->ep);
  case WL_COMM_PP_SEND: return p->dp * p->tp;
  case WL_COMM_DP_ALLREDUCE:
  case WL_COMM_DP_REDUCESCATTER:
  case WL_COMM_DP_ALLGATHER: return p->tp;
  default: return p->tp * p->ep;
  }
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* The GPUs of group g of class c, ascending. */
static void group_ranks(const wl__dag *d, const wl__class *c, uint32_t g, uint32_t *out) {
  const wl_parallel *p = d->p;
  uint32_t n = group_size(d, c->kind), s = c->stage, ep = p->ep;
  for (uint32_t k = 0; k < n; k++) {
    switch (c->kind) {
    case WL_COMM_TP_ALLREDUCE: out[k] = wl_rank_gpu(p, g, s, k); break;
    case WL_COMM_EP_DISPATCH:
    case WL_COMM_EP_COMBINE: out[k] = wl_rank_gpu(p, (g / p->tp) * ep + k, s, g % p->tp); break;
    case WL_COMM_DP_ALLREDUCE:
    case WL_COMM_DP_REDUCESCATTER:
    case WL_COMM_DP_ALLGATHER: out[k] = wl_rank_gpu(p, k, s, g); break;
    case WL_COMM_PP_SEND: out[k] = 0; break;
    default: out[k] = wl_rank_gpu(p, k * ep + g / p->tp, s, g % p->tp); break;
    }
  }
  qsort(out, n, sizeof *out, cmp_u32);
}

/* Rings per collective, as collective libraries open them: one per group
 * member in the first node (each leaves on its own NIC), at most one per NIC;
 * a group inside one node needs one. */
static uint32_t group_channels(const wl__dag *d, const uint32_t *r, uint32_t n) {
  uint32_t node = topo_gpu_node(d->t, r[0]), k = 0;
  for (uint32_t i = 0; i < n; i++) k += topo_gpu_node(d->t, r[i]) == node;
  if (k == n) return 1;
  uint32_t nics = d->cfg->cluster.nic.per_node;
  return k > nics ? nics : k ? k : 1;
}

static uint64_t class_transfers(const wl__dag *d, const wl__class *c) {
  uint64_t q = d->cfg->workload.qps_per_connection, n = c->group;
  uint64_t groups = group_count(d, c->kind);
  if (c->kind == WL_COMM_PP_SEND) return groups * q;
  uint32_t *r = sim_malloc(n * sizeof *r);
  group_ranks(d, c, 0, r);
  uint64_t k = group_channels(d, r, (uint32_t)n), nodes = 1;
  for (uint32_t i = 1; i < n; i++)
    nodes += topo_gpu_node(d->t, r[i]) != topo_gpu_node(d->t, r[i - 1]);
  sim_free(r);
  if (c->kind == WL_COMM_EP_DISPATCH || c->kind == WL_COMM_EP_COMBINE) /* fabric + NVLink hop */
    return groups * n * (nodes + n / nodes) * q;
  return groups * n * k * q;
}

/* SMs a GPU's kernel of class c holds: expert-parallel kernels a fixed
 * count (workload.overlap.ep_sms), a pipeline send one channel, other
 * collectives one per channel (NCCL runs a thread block per channel). */
static uint32_t class_sms(const wl__dag *d, const wl__class *c) {
  if (d->cfg->workload.overlap.sm_offload) return 0;
  if (c->kind == WL_COMM_EP_DISPATCH || c->kind == WL_COMM_EP_COMBINE)
    return d->cfg->workload.overlap.ep_sms;
  if (c->kind == WL_COMM_PP_SEND) return 1;
  uint32_t *r = sim_malloc(c->group * sizeof *r);
  group_ranks(d, c, 0, r);
  uint32_t k = group_channels(d, r, c->group);
  sim_free(r);
  return k;
}

static uint32_t class_of(wl__dag *d, wl_comm_kind kind, uint32_t stage, uint32_t peer,
                         uint64_t bytes) {
  /* Classes are few (a handful per stage); scan the stage's recent ones. */
  for (size_t i = d->ncls; i-- > 0;) {
    const wl__class *c = &d->cls[i];
    if (c->stage != stage) break; /* classes are created stage by stage */
    if (c->kind == kind && c->peer == peer && c->bytes == bytes) return (uint32_t)i;
  }
  for (size_t i = 0; i < d->ncls; i++) {
    const wl__class *c = &d->cls[i];
    if (c->kind == kind && c->stage == stage && c->peer == peer && c->bytes == bytes)
      return (uint32_t)i;
  }
  sim_grow((void **)&d->cls, &d->clscap, d->ncls + 1, sizeof *d->cls);
  wl__class *c = &d->cls[d->ncls];
  memset(c, 0, sizeof *c);
  c->kind = kind;
  c->stage = stage;
  c->peer = peer;
  c->bytes = bytes;
  c->group = group_size(d, kind);
  c->transfers = class_transfers(d, c);
  c->sms = class_sms(d, c);
  return (uint32_t)d->ncls++;
}

static uint32_t comm(wl__dag *d, uint32_t s, uint8_t stream, wl_comm_kind kind, uint64_t bytes,
                     uint32_t peer) {
  uint32_t c = class_of(d, kind, s, peer, bytes);
  uint32_t i = add_node(d, s, stream, WL__COMM);
  d->nodes[i].cls = c;
  d->nodes[i].peer = peer;
  d->cls[c].instances++;
  return i;
}

/* ---- plans ------------------------------------------------------------------ */

static int plan_sends(wl__dag *d, wl__class *c) {
  const wl_parallel *p = d->p;
  uint32_t q = d->cfg->workload.qps_per_connection ? d->cfg->workload.qps_per_connection : 1;
  size_t n = (size_t)p->dp * p->tp * q, w = 0;
  coll_plan *pl = &c->plan;
  pl->op = CFG_COLL_BROADCAST;
  pl->algorithm = CFG_ALGO_RING;
  pl->bytes = c->bytes;
  pl->nranks = 2;
  pl->channels = 1;
  pl->qps = q;
  pl->chunk = c->bytes;
  pl->phases = sim_calloc(1, sizeof *pl->phases);
  pl->nphases = 1;
  pl->phases[0].x = sim_calloc(n ? n : 1, sizeof(be_xfer));
  pl->phases[0].n = n;
  pl->phases[0].repeat = 1;
  for (uint32_t dd = 0; dd < p->dp; dd++)
    for (uint32_t t = 0; t < p->tp; t++) {
      uint32_t src = wl_rank_gpu(p, dd, c->stage, t), dst = wl_rank_gpu(p, dd, c->peer, t);
      for (uint32_t k = 0; k < q; k++) {
        be_xfer *x = &pl->phases[0].x[w++];
        x->src_gpu = src;
        x->dst_gpu = dst;
        x->bytes = c->bytes / q + (k < c->bytes % q);
        x->flow_hash = sim_hash_u64(((uint64_t)src << 32 | dst) ^ sim_hash_u64(k + 0x5eedull));
      }
    }
  return SIM_OK;
}

/* Elements per token of a dispatch (fp8 when training in fp8, as DeepSeek-V3
 * dispatches) or a combine. */
static uint32_t ep_elem_bytes(const wl__dag *d, wl_comm_kind k) {
  if (k == WL_COMM_EP_DISPATCH && d->cfg->workload.precision == CFG_PRECISION_FP8) return 1;
  return (uint32_t)d->abytes;
}

/* The router statistics every expert-parallel group shares (all have the
 * shape of the first: whole node blocks of the same size), drawn once per
 * step from simulation.seed; NULL for balanced routing, or a group that is
 * not whole node blocks (coll_moe_build then says why). */
static int moe_routing(wl__dag *d, const uint32_t *ranks, uint32_t n, const coll_moe_routing **out,
                       sim_error *err) {
  *out = NULL;
  const cfg_scenario *cfg = d->cfg;
  if (cfg->workload.model.routing != CFG_MOE_SAMPLED) return SIM_OK;
  if (d->moe.tokens == 0) {
    uint32_t m = 1;
    for (uint32_t i = 1; i < n; i++)
      m += topo_gpu_node(d->t, ranks[i]) != topo_gpu_node(d->t, ranks[i - 1]);
    if (n % m != 0) return SIM_OK;
    coll_moe_router_spec rs = {.nodes = m,
                               .per_node = n / m,
                               .experts = d->m->experts,
                               .top_k = d->m->top_k,
                               .node_limit = cfg->workload.model.node_limit,
                               .skew = cfg->workload.model.expert_skew,
                               .seed = cfg->simulation.seed};
    int rc = coll_moe_routing_sample(&d->moe, &rs, err);
    if (rc != SIM_OK) return rc;
  }
  *out = &d->moe;
  return SIM_OK;
}

static int group_plan(wl__dag *d, const wl__class *c, const uint32_t *ranks, coll_plan *out,
                      sim_error *err) {
  uint32_t n = c->group, q = d->cfg->workload.qps_per_connection;
  if (c->kind == WL_COMM_EP_DISPATCH || c->kind == WL_COMM_EP_COMBINE) {
    const coll_moe_routing *routing;
    int rc = moe_routing(d, ranks, n, &routing, err);
    if (rc != SIM_OK) return rc;
    uint32_t elem = ep_elem_bytes(d, c->kind);
    coll_moe_spec spec = {
        .dir = c->kind == WL_COMM_EP_DISPATCH ? COLL_MOE_DISPATCH : COLL_MOE_COMBINE,
        .ranks = ranks,
        .nranks = n,
        .tokens = c->bytes / ((uint64_t)d->m->hidden * elem),
        .hidden = d->m->hidden,
        .elem_bytes = elem,
        .experts = d->m->experts,
        .top_k = d->m->top_k,
        .node_limit = d->cfg->workload.model.node_limit,
        .chunks = d->cfg->workload.overlap.ep_chunks, /* the two hops pipelined */
        .qps = q,
        .routing = routing,
    };
    return coll_moe_build(out, d->t, &spec, NULL, err);
  }
  static const cfg_coll_op ops[WL_COMM_KINDS] = {
      [WL_COMM_TP_ALLREDUCE] = CFG_COLL_ALLREDUCE,
      [WL_COMM_DP_ALLREDUCE] = CFG_COLL_ALLREDUCE,
      [WL_COMM_DP_REDUCESCATTER] = CFG_COLL_REDUCESCATTER,
      [WL_COMM_DP_ALLGATHER] = CFG_COLL_ALLGATHER,
      [WL_COMM_EDP_ALLREDUCE] = CFG_COLL_ALLREDUCE,
      [WL_COMM_EDP_REDUCESCATTER] = CFG_COLL_REDUCESCATTER,
      [WL_COMM_EDP_ALLGATHER] = CFG_COLL_ALLGATHER,
  };
  cfg_coll_op op = ops[c->kind];
  cfg_coll_algorithm algo = CFG_ALGO_RING; /* tensor parallel: a ring over NVLink */
  if (c->kind != WL_COMM_TP_ALLREDUCE && cfg_coll_algorithm_offered(op, d->p->dp_algorithm))
    algo = d->p->dp_algorithm; /* else ring: e.g. hierarchical has no ReduceScatter */
  coll_spec spec = coll_spec_from_cfg(d->cfg, op, c->bytes, ranks, n);
  spec.algorithm = algo; /* the parallel group's own, and a channel a NIC its ranks reach */
  spec.channels = group_channels(d, ranks, n);
  return coll_plan_build(out, d->t, &spec, err);
}

int wl__class_plan(wl__dag *d, wl__class *c, sim_error *err) {
  if (c->built) return SIM_OK;
  memset(&c->plan, 0, sizeof c->plan);
  if (c->kind == WL_COMM_PP_SEND) {
    c->built = true;
    int rc = plan_sends(d, c);
    coll_plan_set_class(&c->plan, d->cfg->workload.tclass); /* the job's traffic class */
    return rc;
  }
  /* One plan per group, merged in lock step pairwise (a tree of merges:
   * O(transfers x log groups), where merging one by one is quadratic). */
  uint32_t n = c->group, groups = group_count(d, c->kind);
  uint32_t *ranks = sim_malloc(n * sizeof *ranks);
  coll_plan *plans = sim_calloc(groups, sizeof *plans);
  int rc = SIM_OK;
  uint32_t built = 0;
  for (; built < groups && rc == SIM_OK; built++) {
    group_ranks(d, c, built, ranks);
    rc = group_plan(d, c, ranks, &plans[built], err);
  }
  for (uint32_t step = 1; step < groups && rc == SIM_OK; step *= 2)
    for (uint32_t i = 0; i + step < groups && rc == SIM_OK; i += 2 * step)
      rc = coll_plan_merge(&plans[i], &plans[i + step], err);
  if (rc == SIM_OK) {
    c->plan = plans[0];
    c->built = true;
    coll_plan_set_class(&c->plan, d->cfg->workload.tclass); /* the job's traffic class */
  } else {
    for (uint32_t i = 0; i < built; i++) coll_plan_free(&plans[i]);
  }
  sim_free(plans);
  sim_free(ranks);
  return rc;
}

/* ---- the step --------------------------------------------------------------- */

/* A computation, an in-layer collective, or gradients produced. */
enum { SEG_COMPUTE, SEG_COMM, SEG_GRADS };
typedef struct seg {
  uint8_t kind, role;
  bool fresh;    /* compute: its own node (ZeRO 3 gathers into it) */
  wl__cost c;    /* compute */
  double rc;     /* compute: of c.t, forwards recomputed */
  double gd, ge; /* compute (fresh), comm: ZeRO-3 gathers before it, dense and expert
                    parameters per GPU; grads: parameters whose gradients are done */
  wl_comm_kind comm;
  uint64_t bytes;
} seg;
typedef struct segs {
  seg *v;
  size_t n, cap;
} segs;

/* One stage while its DAG is built; first/count/embedding/head describe
 * the chunk being built. */
typedef struct stage_build {
  uint32_t s, first, count;  /* layers [first, first + count) */
  bool embedding, head;      /* the chunk holds layer 0's embedding / the output layer */
  double tokens;             /* per micro-batch */
  double pending, pending_e; /* gradient bytes waiting for a bucket */
  segs f, g;                 /* scratch: the chunk(s) being built */
} stage_build;

static double layer_dense_params(const wl__dag *d, uint32_t l) {
  return (wl_layer_params(d->m, l, false) - wl_layer_expert_params(d->m, l)) / d->p->tp;
}
static double layer_expert_params(const wl__dag *d, uint32_t l) {
  return wl_layer_expert_params(d->m, l) / ((double)d->p->tp * d->p->ep);
}

/* Layer l's attention part and feed-forward part, and the output layer, for
 * one micro-batch of the chunk being built (roofline.c). */
static void attention_part(const wl__dag *d, const stage_build *b, wl__part *o) {
  wl__part_attention(&d->hw, d->m, d->p, b->tokens, o);
}

static void ffn_part(const wl__dag *d, const stage_build *b, uint32_t l, wl__part *o) {
  wl__part_ffn(&d->hw, d->m, d->p, b->tokens, l, o);
}

static void head_part(const wl__dag *d, const stage_build *b, wl__part *o) {
  wl__part_head(&d->hw, d->m, d->p, b->tokens, o);
}

static wl__cost sum(wl__cost a, wl__cost b) {
  return (wl__cost){a.t + b.t, a.mem + b.mem, a.ops + b.ops};
}

/* A part's backward: input gradients, weight gradients unless deferred
 * (zb), and what recomputation reruns of its forward (rc, recompute.c). */
static wl__cost backward_cost(const wl__part *x, bool zb, wl__cost rc) {
  wl__cost c = sum(x->bin, rc);
  if (!zb) c = sum(c, x->bw);
  return c;
}

static uint64_t whole(double bytes) { return bytes > 0 ? (uint64_t)ceil(bytes) : 0; }

/* Emits full buckets (all of them when `all`), each depending on `after`.
 * FSDP2 (ZeRO 3, per_param) has no buckets: what is pending goes in one
 * reduction when `all` (a layer's gradients, emit). */
static void flush_buckets(wl__dag *d, stage_build *b, uint32_t after, bool all) {
  const wl_parallel *p = d->p;
  double cap = (double)d->cfg->workload.bucket_size;
  if (p->zero >= 3 && d->cfg->workload.zero_impl == CFG_ZERO_PER_PARAM) cap = INFINITY;
  wl_comm_kind k = p->zero ? WL_COMM_DP_REDUCESCATTER : WL_COMM_DP_ALLREDUCE;
  wl_comm_kind ke = p->zero ? WL_COMM_EDP_REDUCESCATTER : WL_COMM_EDP_ALLREDUCE;
  double *pend[2] = {&b->pending, &b->pending_e};
  bool active[2] = {p->dp > 1, p->dp / p->ep > 1};
  for (int e = 0; e < 2; e++) {
    if (!active[e]) *pend[e] = 0;
    while (*pend[e] >= cap || (all && *pend[e] > 0)) {
      double size = *pend[e] >= cap ? cap : *pend[e];
      uint32_t x = comm(d, b->s, WL__DP, e ? ke : k, whole(size), WL__NONE);
      add_edge(d, after, x);
      *pend[e] -= size;
    }
  }
}

/* ZeRO 3: gather the weights of `dense` and `expert` parameters (per GPU)
 * before node `before` (which must be fresh). */
static void gather_before(wl__dag *d, stage_build *b, double dense, double expert,
                          uint32_t before) {
  const wl_parallel *p = d->p;
  if (p->zero < 3) return;
  if (p->dp > 1 && dense > 0)
    add_edge(d, comm(d, b->s, WL__DP, WL_COMM_DP_ALLGATHER, whole(dense * d->wbytes), WL__NONE),
             before);
  if (p->dp / p->ep > 1 && expert > 0)
    add_edge(d, comm(d, b->s, WL__DP, WL_COMM_EDP_ALLGATHER, whole(expert * d->wbytes), WL__NONE),
             before);
}

double wl__grad_reduce_bytes(const cfg_scenario *cfg, double gbytes) {
  switch (cfg->workload.grad_reduce) {
  case CFG_GRAD_REDUCE_BF16: return 2;
  case CFG_GRAD_REDUCE_FP32: return 4;
  case CFG_GRAD_REDUCE_AUTO: break;
  }
  return gbytes;
}

/* FSDP2's per-parameter sharding (workload.zero_impl per_param, ZeRO 3;
 * PyTorch torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py): the
 * elements of `dense` and `expert` parameters (per GPU) whose groups gather
 * (sharded over more than one rank), and the copies FSDP2 runs on the
 * compute stream for them: foreach_all_gather_copy_out reads the all-gather
 * output and writes the unsharded parameters (split_with_sizes_copy, one
 * kernel); foreach_reduce_scatter_copy_in reads the unsharded gradients and
 * writes the reduce-scatter input in the reduce dtype (chunk_cat, one
 * kernel). The all-gather's copy-in (the local shard, 1/dp of it) runs on
 * its own stream beside the computation: not charged. None otherwise. */
static double fsdp2_elems(const wl__dag *d, double dense, double expert) {
  const wl_parallel *p = d->p;
  if (p->zero < 3 || d->cfg->workload.zero_impl != CFG_ZERO_PER_PARAM) return 0;
  return (p->dp > 1 ? dense : 0) + (p->dp / p->ep > 1 ? expert : 0);
}

static wl__cost fsdp2_copy(const wl__dag *d, double elems, double bytes_per_elem) {
  if (!(elems > 0)) return (wl__cost){0, 0, 0};
  wl__cost c = wl__eltwise(&d->hw, elems * bytes_per_elem);
  c.t += d->hw.gap;
  return c;
}

/* The all-gather's copy-out before the computation that uses the weights. */
static wl__cost copy_out(const wl__dag *d, double dense, double expert) {
  return fsdp2_copy(d, fsdp2_elems(d, dense, expert), 2 * d->wbytes);
}

/* Dispatch or combine: S = T x hidden x element bytes per rank, T the
 * rank's tokens of a micro-batch (split over tp). */
static uint64_t ep_bytes(const wl__dag *d, const stage_build *b, wl_comm_kind k) {
  uint64_t tokens = whole(b->tokens / d->p->tp);
  return tokens * d->m->hidden * ep_elem_bytes(d, k);
}

static seg *push(segs *L, uint8_t kind) {
  sim_grow((void **)&L->v, &L->cap, L->n + 1, sizeof *L->v);
  seg *x = &L->v[L->n++];
  memset(x, 0, sizeof *x);
  x->kind = kind;
  return x;
}

static void seg_compute(segs *L, uint8_t role, wl__cost c, bool fresh, double gd, double ge) {
  seg *x = push(L, SEG_COMPUTE);
  x->role = role;
  x->c = c;
  x->rc = 0;
  x->fresh = fresh;
  x->gd = gd;
  x->ge = ge;
}

static void seg_comm(segs *L, wl_comm_kind kind, uint64_t bytes) {
  seg *x = push(L, SEG_COMM);
  x->comm = kind;
  x->bytes = bytes;
}

/* Gradients of `dense` and `expert` parameters done by the last segment
 * (a computation): under FSDP2 it also copies them into the reduce-scatter
 * input (reading them, writing the reduce dtype). */
static void seg_grads(const wl__dag *d, segs *L, double dense, double expert) {
  double n = fsdp2_elems(d, dense, expert);
  if (n > 0 && L->n > 0 && L->v[L->n - 1].kind == SEG_COMPUTE) {
    wl__cost c = fsdp2_copy(d, n, d->gbytes + d->rbytes);
    L->v[L->n - 1].c.t += c.t;
    L->v[L->n - 1].c.mem += c.mem;
  }
  seg *x = push(L, SEG_GRADS);
  x->gd = dense;
  x->ge = expert;
}

static bool has_head(const wl__dag *d, const stage_build *b) {
  return b->head && d->m->vocab > 0 && d->m->kind != WL_MODEL_MLP;
}

/* One micro-batch's forward through the chunk (Megatron-LM order). */
static void forward(const wl__dag *d, const stage_build *b, segs *L) {
  const wl_model *m = d->m;
  const wl_parallel *p = d->p;
  uint64_t tp_bytes = whole(b->tokens * m->hidden * d->abytes);
  uint64_t disp = ep_bytes(d, b, WL_COMM_EP_DISPATCH), comb = ep_bytes(d, b, WL_COMM_EP_COMBINE);
  wl__part A, F, H;
  attention_part(d, b, &A);
  L->n = 0;
  for (uint32_t l = b->first; l < b->first + b->count; l++) {
    bool fresh = L->n == 0 || p->zero >= 3, moe = wl_layer_is_moe(m, l) && p->ep > 1;
    bool attn = m->kind != WL_MODEL_MLP;
    double emb = l == 0 ? m->embedding / p->tp : 0;
    double gd = layer_dense_params(d, l) + emb, ge = layer_expert_params(d, l);
    ffn_part(d, b, l, &F);
    seg_compute(L, WL__FWD, sum(attn ? A.fwd : F.fwd, copy_out(d, gd, ge)), fresh, gd, ge);
    if (attn) {
      if (p->tp > 1) seg_comm(L, WL_COMM_TP_ALLREDUCE, tp_bytes);
      if (moe) seg_comm(L, WL_COMM_EP_DISPATCH, disp);
      /* dropless dispatch: the host waits for the token counts (kernels_moe.c) */
      seg_compute(L, WL__FWD, moe ? wl__moe_host_bound(&d->hw, A.fwd, F.fwd) : F.fwd, false, 0, 0);
      if (moe) seg_comm(L, WL_COMM_EP_COMBINE, comb);
      if (p->tp > 1) seg_comm(L, WL_COMM_TP_ALLREDUCE, tp_bytes);
    }
  }
  if (has_head(d, b)) {
    head_part(d, b, &H);
    seg_compute(L, WL__FWD, sum(H.fwd, copy_out(d, m->head / p->tp, 0)), p->zero >= 3,
                m->head / p->tp, 0);
  }
}

/* One micro-batch's backward through the chunk: each computation is its
 * part's input gradients and weight gradients (backward_cost); a backward
 * that defers its weight gradients (zb) leaves them to weight_grads.
 * `grads`: the gradients are done here (the last micro-batch, or every one
 * under ZeRO 2-3). */
static void backward(const wl__dag *d, const stage_build *b, bool grads, bool zb, segs *L) {
  const wl_model *m = d->m;
  const wl_parallel *p = d->p;
  wl__part A, F, H;
  attention_part(d, b, &A);
  uint64_t tp_bytes = whole(b->tokens * m->hidden * d->abytes);
  uint64_t disp = ep_bytes(d, b, WL_COMM_EP_DISPATCH), comb = ep_bytes(d, b, WL_COMM_EP_COMBINE);
  L->n = 0;
  grads = grads && !zb;
  if (has_head(d, b)) { /* the output layer is never recomputed */
    head_part(d, b, &H);
    seg_compute(L, WL__BWD,
                sum(backward_cost(&H, zb, (wl__cost){0, 0, 0}), copy_out(d, m->head / p->tp, 0)),
                true, m->head / p->tp, 0);
    if (grads) seg_grads(d, L, m->head / p->tp, 0);
  }
  for (uint32_t l = b->first + b->count; l-- > b->first;) {
    bool moe = wl_layer_is_moe(m, l) && p->ep > 1, attn = m->kind != WL_MODEL_MLP;
    wl__cost ra, rf;
    double emb = l == 0 ? m->embedding / p->tp : 0;
    double gd = layer_dense_params(d, l) + emb, ge = layer_expert_params(d, l);
    if (attn && p->tp > 1) {
      seg_comm(L, WL_COMM_TP_ALLREDUCE, tp_bytes);
      L->v[L->n - 1].gd = gd;
      L->v[L->n - 1].ge = ge;
    }
    if (moe) seg_comm(L, WL_COMM_EP_DISPATCH, disp); /* output gradients out */
    bool fresh = L->n == 0 || (p->zero >= 3 && !(attn && p->tp > 1));
    ffn_part(d, b, l, &F);
    wl__recompute_cost(&d->hw, m, p, b->tokens, b->first, l, &A, &F, &ra, &rf);
    seg_compute(L, WL__BWD, sum(backward_cost(&F, zb, rf), copy_out(d, gd, ge)), fresh, gd, ge);
    L->v[L->n - 1].rc = rf.t;
    if (moe) seg_comm(L, WL_COMM_EP_COMBINE, comb); /* input gradients back */
    if (attn) {
      if (p->tp > 1) seg_comm(L, WL_COMM_TP_ALLREDUCE, tp_bytes);
      seg_compute(L, WL__BWD, backward_cost(&A, zb, ra), false, 0, 0);
      L->v[L->n - 1].rc = ra.t;
    }
    if (grads) seg_grads(d, L, gd, ge);
  }
}

/* The weight-gradient GEMMs of a backward that deferred them: no
 * communication. */
static void weight_grads(const wl__dag *d, const stage_build *b, bool grads, segs *L) {
  const wl_model *m = d->m;
  const wl_parallel *p = d->p;
  wl__part A, F, H;
  attention_part(d, b, &A);
  L->n = 0;
  if (has_head(d, b)) {
    head_part(d, b, &H);
    seg_compute(L, WL__BWD, H.bw, true, 0, 0);
    if (grads) seg_grads(d, L, m->head / p->tp, 0);
  }
  for (uint32_t l = b->first + b->count; l-- > b->first;) {
    double emb = l == 0 ? m->embedding / p->tp : 0;
    ffn_part(d, b, l, &F);
    seg_compute(L, WL__BWD, sum(F.bw, A.bw), L->n == 0, 0, 0);
    if (grads) seg_grads(d, L, layer_dense_params(d, l) + emb, layer_expert_params(d, l));
  }
}

/* Emitting a chunk: its last computation, the collective the next one
 * waits for (overlapped: on WL__XCOMM), its first and last nodes. */
typedef struct chunk_emit {
  const segs *L;
  size_t i;
  uint32_t x, wait, first, last;
  uint32_t defer; /* tensor-parallel overlap: a collective the computation after next waits for */
  bool grads;     /* flush all buckets at the end */
} chunk_emit;

/* Emits segments of ce from ce->i: in order to the end (`group` false), or
 * up to and including the next run of collectives (`group`). `xcomm`:
 * collectives on WL__XCOMM, the computation after them waits by an edge.
 * Returns true when the chunk is done. */
static bool emit(wl__dag *d, stage_build *b, chunk_emit *ce, bool xcomm, bool group) {
  bool overlap = d->cfg->workload.grad_overlap, in_comm = false;
  for (; ce->i < ce->L->n; ce->i++) {
    const seg *g = &ce->L->v[ce->i];
    if (group && in_comm && g->kind != SEG_COMM) return false;
    /* tensor-parallel overlap (Megatron's --tp-comm-overlap): the collective
     * is split with the GEMM next to it and runs under it; modelled as the
     * collective running beside the next computation, which the one after
     * (or the next collective on the compute stream) waits for */
    bool tpx = !xcomm && g->kind == SEG_COMM && g->comm == WL_COMM_TP_ALLREDUCE &&
               d->cfg->workload.overlap.tp && ce->x != WL__NONE;
    if (g->kind == SEG_COMPUTE) {
      bool dep = ce->wait != WL__NONE;
      ce->x = compute(d, b->s, g->role, g->c, g->rc, g->fresh || dep);
      if (dep) add_edge(d, ce->wait, ce->x);
      ce->wait = ce->defer;
      ce->defer = WL__NONE;
      if (g->fresh) gather_before(d, b, g->gd, g->ge, ce->x);
      if (ce->first == WL__NONE) ce->first = ce->x;
    } else if (tpx) {
      uint32_t c = comm(d, b->s, WL__XCOMM, g->comm, g->bytes, WL__NONE);
      if (g->gd > 0 || g->ge > 0) gather_before(d, b, g->gd, g->ge, c);
      add_edge(d, ce->x, c);
      if (ce->defer != WL__NONE) add_edge(d, ce->defer, c);
      ce->defer = c;
    } else if (g->kind == SEG_COMM) {
      uint32_t c = comm(d, b->s, xcomm ? WL__XCOMM : WL__COMPUTE, g->comm, g->bytes, WL__NONE);
      if (g->gd > 0 || g->ge > 0) gather_before(d, b, g->gd, g->ge, c);
      if (!xcomm) { /* its input is the overlapped collective's output */
        if (ce->defer != WL__NONE) add_edge(d, ce->defer, c);
        if (ce->wait != WL__NONE) add_edge(d, ce->wait, c);
        ce->defer = ce->wait = WL__NONE;
      }
      if (xcomm) {
        if (ce->x != WL__NONE && !in_comm) add_edge(d, ce->x, c);
        ce->wait = c;
      }
      if (ce->first == WL__NONE) ce->first = c;
      in_comm = true;
    } else {
      b->pending += g->gd * d->rbytes;
      b->pending_e += g->ge * d->rbytes;
      /* FSDP2 reduces each fully_shard unit's gradients (a layer's) in one
       * reduce-scatter (foreach_reduce): no buckets */
      if (overlap) flush_buckets(d, b, ce->x, fsdp2_elems(d, g->gd, g->ge) > 0);
    }
  }
  return true;
}

static void emit_end(wl__dag *d, stage_build *b, chunk_emit *ce) {
  ce->last = ce->wait != WL__NONE ? ce->wait : ce->x;
  if (ce->x != WL__NONE) d->nodes[ce->x].sealed = true;
  if (ce->last != WL__NONE) d->nodes[ce->last].sealed = true;
  if (ce->grads) flush_buckets(d, b, ce->last, true);
}

/* A chunk on its own: in-layer collectives on the compute stream. */
static void emit_chunk(wl__dag *d, stage_build *b, const segs *L, bool grads, uint32_t *first,
                       uint32_t *last) {
  chunk_emit ce = {.L = L,
                   .x = WL__NONE,
                   .wait = WL__NONE,
                   .defer = WL__NONE,
                   .first = WL__NONE,
                   .grads = grads};
  emit(d, b, &ce, false, false);
  uint32_t pend = ce.defer != WL__NONE ? ce.defer : ce.wait;
  if (pend != WL__NONE) { /* an overlapped collective still in flight: the chunk ends with it */
    uint32_t z = compute(d, b->s, d->nodes[ce.x].role, (wl__cost){0, 0, 0}, 0, true);
    add_edge(d, pend, z);
  }
  ce.last = d->tail[b->s * WL__STREAMS + WL__COMPUTE];
  d->nodes[ce.last].sealed = true;
  if (grads) flush_buckets(d, b, ce.last, true);
  *first = ce.first;
  *last = ce.last;
}

/* A forward (fw) and a backward (bw) overlapped: their computations
 * alternate on the compute stream, a run of computations of one, then
 * (while its collectives run on WL__XCOMM) a run of the other's. */
static void emit_pair(wl__dag *d, stage_build *b, const segs *fw, const segs *bw, bool grads,
                      chunk_emit *F, chunk_emit *B) {
  *F = (chunk_emit){.L = fw, .x = WL__NONE, .wait = WL__NONE, .defer = WL__NONE, .first = WL__NONE};
  *B = (chunk_emit){.L = bw,
                    .x = WL__NONE,
                    .wait = WL__NONE,
                    .defer = WL__NONE,
                    .first = WL__NONE,
                    .grads = grads};
  bool fdone = false, bdone = false;
  while (!fdone || !bdone) {
    if (!fdone) fdone = emit(d, b, F, true, true);
    if (!bdone) bdone = emit(d, b, B, true, true);
  }
  emit_end(d, b, F);
  emit_end(d, b, B);
}

/* Optimizer on the stage's shard (all its chunks), then (ZeRO 1-2) the
 * weights gathered back. */
static void optimizer(wl__dag *d, stage_build *b) {
  const wl_parallel *p = d->p;
  double dense = 0, expert = 0;
  for (uint32_t c = 0; c < p->vstages; c++) {
    wl_chunk k;
    wl_stage_chunk(d->m, p, b->s, c, &k);
    for (uint32_t l = k.first; l < k.first + k.count; l++) {
      dense += layer_dense_params(d, l);
      expert += layer_expert_params(d, l);
    }
    if (k.embedding) dense += d->m->embedding / p->tp;
    if (k.head) dense += d->m->head / p->tp;
  }
  double ne = (double)p->dp / p->ep;
  double local = p->zero ? dense / p->dp + expert / ne : dense + expert;
  wl__cost opt = wl__optimizer(&d->hw, local, d->wbytes, d->gbytes, d->obytes);
  uint32_t x = compute(d, b->s, WL__OPT, opt, 0, true);
  uint32_t dp_tail = d->tail[b->s * WL__STREAMS + WL__DP];
  if (dp_tail != WL__NONE) add_edge(d, dp_tail, x);
  if (p->zero == 0 || p->zero >= 3) return;
  double cap = (double)d->cfg->workload.bucket_size;
  double left[2] = {p->dp > 1 ? dense * d->wbytes : 0, ne > 1 ? expert * d->wbytes : 0};
  uint32_t after = x;
  for (int e = 0; e < 2; e++)
    while (left[e] > 0) {
      double size = left[e] >= cap ? cap : left[e];
      uint32_t g = comm(d, b->s, WL__DP, e ? WL_COMM_EDP_ALLGATHER : WL_COMM_DP_ALLGATHER,
                        whole(size), WL__NONE);
      if (after != WL__NONE) add_edge(d, after, g);
      after = WL__NONE; /* the rest follow in stream order */
      left[e] -= size;
    }
}

/* The pipelines of the schedule: chunk c of stage s feeds chunk *nc of
 * stage *ns in its forward pass (false: the last of its pipeline). */
static bool next_chunk(const wl_parallel *p, uint32_t s, uint32_t c, int dir, uint32_t *ns,
                       uint32_t *nc) {
  if (p->schedule == CFG_SCHED_INTERLEAVED) {
    int64_t k = (int64_t)c * p->pp + s + dir;
    if (k < 0 || k >= (int64_t)p->pp * p->vstages) return false;
    *ns = (uint32_t)(k % p->pp);
    *nc = (uint32_t)(k / p->pp);
    return true;
  }
  if (c == 1) dir = -dir; /* dualpipe's reverse direction */
  int64_t t = (int64_t)s + dir;
  if (t < 0 || t >= p->pp) return false;
  *ns = (uint32_t)t;
  *nc = c;
  return true;
}

static void set_chunk(const wl__dag *d, stage_build *b, uint32_t c) {
  wl_chunk k;
  wl_stage_chunk(d->m, d->p, b->s, c, &k);
  b->first = k.first;
  b->count = k.count;
  b->embedding = k.embedding;
  b->head = k.head;
}

typedef struct pipe_nodes {
  uint32_t mpc;                /* micro-batches per chunk */
  uint32_t *ff, *fl, *bf, *bl; /* [(s vstages + c) mpc + j]: first/last node */
  uint32_t *fsend, *bsend;     /* the send out of it, or WL__NONE */
} pipe_nodes;

static double send_bytes(const wl__dag *d, uint32_t to_s, uint32_t to_c) {
  const wl_model *m = d->m;
  const wl_parallel *p = d->p;
  if (m->kind != WL_MODEL_MLP)
    return (double)p->micro_batch * m->seq_len * m->hidden * d->abytes / p->tp;
  wl_chunk k;
  wl_stage_chunk(m, p, to_s, to_c, &k);
  return (double)p->micro_batch * (double)m->widths[k.first] * d->abytes;
}

/* The send of a forward (dir +1) or backward (dir -1) of chunk c,
 * micro-batch j, after its last node `last`. */
static void pipe_send(wl__dag *d, pipe_nodes *pn, uint32_t s, uint32_t c, uint32_t j, int dir,
                      uint32_t last) {
  uint32_t ns, nc;
  if (!next_chunk(d->p, s, c, dir, &ns, &nc)) return;
  double bytes = dir > 0 ? send_bytes(d, ns, nc) : send_bytes(d, s, c);
  uint32_t x = comm(d, s, dir > 0 ? WL__SEND_FWD : WL__SEND_BWD, WL_COMM_PP_SEND, whole(bytes), ns);
  add_edge(d, last, x);
  size_t at = ((size_t)s * d->p->vstages + c) * pn->mpc + j;
  (dir > 0 ? pn->fsend : pn->bsend)[at] = x;
}

/* Stage s's schedule (schedule.c) as nodes. */
static void build_stage(wl__dag *d, pipe_nodes *pn, stage_build *b, wl__op *ops, size_t nops) {
  const wl_parallel *p = d->p;
  uint32_t v = p->vstages, mpc = pn->mpc, fcnt[2] = {0}, bcnt[2] = {0};
  uint32_t *fc = v > 2 ? sim_calloc(v, sizeof *fc) : fcnt,
           *bc = v > 2 ? sim_calloc(v, sizeof *bc) : bcnt;
  uint32_t *wq = sim_malloc((2 * (size_t)v * mpc + 1) * sizeof *wq); /* deferred W: c mpc + j */
  size_t wh = 0, wt = 0;
  bool every = p->zero >= 2; /* gradients reduced after every micro-batch */
  size_t base = (size_t)b->s * v * mpc;
  for (size_t k = 0; k < nops; k++) {
    const wl__op *o = &ops[k];
    if (o->kind == WL__OP_F) {
      uint32_t j = fc[o->c]++;
      size_t at = base + (size_t)o->c * mpc + j;
      set_chunk(d, b, o->c);
      forward(d, b, &b->f);
      emit_chunk(d, b, &b->f, false, &pn->ff[at], &pn->fl[at]);
      pipe_send(d, pn, b->s, o->c, j, +1, pn->fl[at]);
    } else if (o->kind == WL__OP_B) {
      uint32_t j = bc[o->c]++;
      size_t at = base + (size_t)o->c * mpc + j;
      bool grads = every || j == mpc - 1;
      set_chunk(d, b, o->c);
      backward(d, b, grads, o->zb, &b->f);
      emit_chunk(d, b, &b->f, grads && !o->zb, &pn->bf[at], &pn->bl[at]);
      pipe_send(d, pn, b->s, o->c, j, -1, pn->bl[at]);
      if (o->zb) wq[wt++] = o->c * mpc + j;
    } else if (o->kind == WL__OP_W) {
      uint32_t c = wq[wh] / mpc, j = wq[wh] % mpc, f, l;
      bool grads = every || j == mpc - 1;
      wh++;
      set_chunk(d, b, c);
      weight_grads(d, b, grads, &b->f);
      emit_chunk(d, b, &b->f, grads, &f, &l);
    } else { /* FB: forward of c, backward of c2 overlapped */
      uint32_t jf = fc[o->c]++, jb = bc[o->c2]++;
      size_t af = base + (size_t)o->c * mpc + jf, ab = base + (size_t)o->c2 * mpc + jb;
      bool grads = every || jb == mpc - 1;
      set_chunk(d, b, o->c);
      forward(d, b, &b->f);
      set_chunk(d, b, o->c2);
      backward(d, b, grads, false, &b->g);
      chunk_emit F, B;
      emit_pair(d, b, &b->f, &b->g, grads, &F, &B);
      pn->ff[af] = F.first;
      pn->fl[af] = F.last;
      pn->bf[ab] = B.first;
      pn->bl[ab] = B.last;
      /* the pair runs as one unit, its parts interleaved finer than the
       * DAG's (DualPipe splits both into attention, dispatch, MLP and
       * combine): both outputs leave when the pair ends */
      pipe_send(d, pn, b->s, o->c, jf, +1, F.last);
      pipe_send(d, pn, b->s, o->c2, jb, -1, B.last);
      if (pn->fsend[af] != WL__NONE) add_edge(d, B.last, pn->fsend[af]);
      if (pn->bsend[ab] != WL__NONE) add_edge(d, F.last, pn->bsend[ab]);
    }
  }
  if (fc != fcnt) sim_free(fc);
  if (bc != bcnt) sim_free(bc);
  sim_free(wq);
}

void wl__moe_draw(wl__dag *d) {
  const wl_parallel *p = d->p;
  if (d->m->experts == 0 || p->ep < 2) return;
  uint32_t *ranks = sim_malloc(p->ep * sizeof *ranks);
  for (uint32_t k = 0; k < p->ep; k++) ranks[k] = wl_rank_gpu(p, k, 0, 0); /* group 0, stage 0 */
  qsort(ranks, p->ep, sizeof *ranks, cmp_u32);
  const coll_moe_routing *r;
  sim_error err = {0};
  if (moe_routing(d, ranks, p->ep, &r, &err) == SIM_OK && r) d->hw.expert_load = r->imbalance;
  sim_free(ranks);
}

void wl__dag_build(wl__dag *d) {
  const wl_parallel *p = d->p;
  const wl_model *m = d->m;
  uint32_t pp = p->pp, v = p->vstages;
  size_t nstreams = (size_t)pp * WL__STREAMS;
  d->head = sim_malloc(nstreams * sizeof *d->head);
  d->tail = sim_malloc(nstreams * sizeof *d->tail);
  for (size_t i = 0; i < nstreams; i++) d->head[i] = d->tail[i] = WL__NONE;
  pipe_nodes pn = {.mpc =
                       p->schedule == CFG_SCHED_DUALPIPE ? p->micro_batches / 2 : p->micro_batches};
  size_t blocks = (size_t)pp * v * pn.mpc;
  pn.ff = sim_malloc(blocks * sizeof *pn.ff);
  pn.fl = sim_malloc(blocks * sizeof *pn.fl);
  pn.bf = sim_malloc(blocks * sizeof *pn.bf);
  pn.bl = sim_malloc(blocks * sizeof *pn.bl);
  pn.fsend = sim_malloc(blocks * sizeof *pn.fsend);
  pn.bsend = sim_malloc(blocks * sizeof *pn.bsend);
  for (size_t i = 0; i < blocks; i++) pn.fsend[i] = pn.bsend[i] = WL__NONE;
  size_t nops = 0;
  for (uint32_t s = 0; s < pp; s++) {
    size_t k = wl__schedule(p, s, NULL);
    if (k > nops) nops = k;
  }
  wl__op *ops = sim_malloc((nops ? nops : 1) * sizeof *ops);
  stage_build b = {0};
  for (uint32_t s = 0; s < pp; s++) {
    b.s = s;
    b.pending = b.pending_e = 0;
    b.tokens = (double)p->micro_batch * m->seq_len;
    size_t n = wl__schedule(p, s, ops);
    build_stage(d, &pn, &b, ops, n);
    optimizer(d, &b);
  }
  /* Each send feeds the same micro-batch's chunk on the next stage. */
  for (uint32_t s = 0; s < pp; s++)
    for (uint32_t c = 0; c < v; c++)
      for (uint32_t j = 0; j < pn.mpc; j++) {
        size_t at = ((size_t)s * v + c) * pn.mpc + j;
        uint32_t ns, nc;
        if (pn.fsend[at] != WL__NONE && next_chunk(p, s, c, +1, &ns, &nc))
          add_edge(d, pn.fsend[at], pn.ff[((size_t)ns * v + nc) * pn.mpc + j]);
        if (pn.bsend[at] != WL__NONE && next_chunk(p, s, c, -1, &ns, &nc))
          add_edge(d, pn.bsend[at], pn.bf[((size_t)ns * v + nc) * pn.mpc + j]);
      }
  sim_free(b.f.v);
  sim_free(b.g.v);
  sim_free(ops);
  sim_free(pn.ff);
  sim_free(pn.fl);
  sim_free(pn.bf);
  sim_free(pn.bl);
  sim_free(pn.fsend);
  sim_free(pn.bsend);
}

void wl__dag_free(wl__dag *d) {
  for (size_t i = 0; i < d->ncls; i++)
    if (d->cls[i].built) coll_plan_free(&d->cls[i].plan);
  sim_free(d->cls);
  sim_free(d->nodes);
  sim_free(d->edge_to);
  sim_free(d->edge_next);
  sim_free(d->head);
  sim_free(d->tail);
  coll_moe_routing_free(&d->moe);
  memset(d, 0, sizeof *d);
}
