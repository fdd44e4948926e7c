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
 *             FLOPs (three times under full recomputation).
 * Durations: FLOPs from 2 x parameters x tokens (forward; 6 P T in all,
 * MODEL-INPUTS.md), each GPU's share under tp (and ep for experts), at the
 * precision's peak x workload.compute_efficiency, or the HBM time of the
 * weights and activations the operation touches when that is longer
 * (roofline). The last stage adds the output layer; the input embedding is
 * a lookup with no FLOPs.
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

double wl__peak_flops(const cfg_scenario *cfg) {
  double f = cfg->cluster.gpu_flops;
  switch (cfg->workload.precision) {
  case CFG_PRECISION_FP32: return f / 2; /* TF32 tensor cores: half of BF16 */
  case CFG_PRECISION_FP8: return 2 * f;  /* FP8 tensor cores: twice BF16 */
  case CFG_PRECISION_BF16:
  case CFG_PRECISION_FP16: break;
  }
  return f;
}

static simtime_ps secs_ps(double s) {
  if (!(s > 0)) return 0;
  double ps = ceil(s * 1e12);
  return ps >= 1.8e19 ? SIM_TIME_MAX : (simtime_ps)ps;
}

static double roofline(const wl__dag *d, double flops, double bytes) {
  double a = flops / d->peak, b = bytes / d->hbm;
  return a > b ? a : b;
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
  if (*tail == WL__NONE)
    d->head[stage * WL__STREAMS + stream] = i;
  else
    d->nodes[*tail].next = i;
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
static uint32_t compute(wl__dag *d, uint32_t s, uint8_t role, double seconds, bool fresh) {
  uint32_t tail = d->tail[s * WL__STREAMS + WL__COMPUTE];
  if (!fresh && tail != WL__NONE) {
    wl__node *x = &d->nodes[tail];
    if (x->cls == WL__NONE && x->role == role && !x->sealed) {
      x->dur += secs_ps(seconds);
      return tail;
    }
  }
  uint32_t i = add_node(d, s, WL__COMPUTE, role);
  d->nodes[i].dur = secs_ps(seconds);
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

static int group_plan(wl__dag *d, const wl__class *c, const uint32_t *ranks, coll_plan *out,
                      sim_error *err) {
  uint32_t n = c->group, q = d->cfg->workload.qps_per_connection;
  if (c->kind == WL_COMM_EP_DISPATCH || c->kind == WL_COMM_EP_COMBINE) {
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
        .chunks = 1,
        .qps = q,
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
  if (c->kind != WL_COMM_TP_ALLREDUCE && coll_algorithm_supports(op, d->p->dp_algorithm))
    algo = d->p->dp_algorithm; /* else ring: e.g. hierarchical has no ReduceScatter */
  coll_spec spec = {
      .op = op,
      .algorithm = algo,
      .bytes = c->bytes,
      .ranks = ranks,
      .nranks = n,
      .channels = group_channels(d, ranks, n),
      .chunk = d->cfg->workload.collective.chunk,
      .qps = q,
  };
  return coll_plan_build(out, d->t, &spec, err);
}

int wl__class_plan(wl__dag *d, wl__class *c, sim_error *err) {
  if (c->built) return SIM_OK;
  memset(&c->plan, 0, sizeof c->plan);
  if (c->kind == WL_COMM_PP_SEND) {
    c->built = true;
    return plan_sends(d, c);
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
  } else {
    for (uint32_t i = 0; i < built; i++) coll_plan_free(&plans[i]);
  }
  sim_free(plans);
  sim_free(ranks);
  return rc;
}

/* ---- the step --------------------------------------------------------------- */

typedef struct stage_build {
  uint32_t s, first, count;  /* layers [first, first + count) */
  double tokens;             /* per micro-batch */
  double pending, pending_e; /* gradient bytes waiting for a bucket */
} stage_build;

static double layer_dense_params(const wl__dag *d, uint32_t l) {
  return (wl_layer_params(d->m, l, false) - wl_layer_expert_params(d->m, l)) / d->p->tp;
}
static double layer_expert_params(const wl__dag *d, uint32_t l) {
  return wl_layer_expert_params(d->m, l) / ((double)d->p->tp * d->p->ep);
}

/* Forward seconds of layer l's attention part and feed-forward part. */
static double t_attention(const wl__dag *d, const stage_build *b) {
  if (d->m->kind == WL_MODEL_MLP) return 0;
  double P = d->m->attention / d->p->tp, h = d->m->hidden, sp = d->p->sp ? d->p->tp : 1;
  return roofline(d, 2 * b->tokens * P, P * d->wbytes + 2 * b->tokens * h * d->abytes / sp);
}

static double t_ffn(const wl__dag *d, const stage_build *b, uint32_t l) {
  const wl_model *m = d->m;
  double t = d->p->tp, sp = d->p->sp ? t : 1, h = m->hidden;
  if (m->kind == WL_MODEL_MLP) {
    double P = wl_layer_params(m, l, false), io = (double)m->widths[l] + (double)m->widths[l + 1];
    return roofline(d, 2 * b->tokens * P, P * d->wbytes + b->tokens * io * d->abytes);
  }
  if (!wl_layer_is_moe(m, l))
    return roofline(d, 2 * b->tokens * m->ffn / t,
                    m->ffn / t * d->wbytes + 2 * b->tokens * h * d->abytes / sp);
  double k = (double)m->top_k + m->shared_experts;
  double used = (m->router + k * m->expert) / t;
  double held = (m->router + ((double)m->experts / d->p->ep + m->shared_experts) * m->expert) / t;
  return roofline(d, 2 * b->tokens * used,
                  held * d->wbytes + 2 * b->tokens * h * k * d->abytes / sp);
}

static double t_head(const wl__dag *d, const stage_build *b) {
  double P = d->m->head / d->p->tp;
  return roofline(d, 2 * b->tokens * P,
                  P * d->wbytes + b->tokens * d->m->vocab * d->abytes / d->p->tp);
}

static uint64_t whole(double bytes) { return bytes > 0 ? (uint64_t)ceil(bytes) : 0; }

static bool last_stage(const wl__dag *d, const stage_build *b) { return b->s == d->p->pp - 1; }

/* Emits full buckets (all of them when `all`), each depending on `after`. */
static void flush_buckets(wl__dag *d, stage_build *b, uint32_t after, bool all) {
  const wl_parallel *p = d->p;
  double cap = (double)d->cfg->workload.bucket_size;
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

/* Dispatch or combine: S = T x hidden x element bytes per rank, T the
 * rank's tokens of a micro-batch (split over tp). */
static uint64_t ep_bytes(const wl__dag *d, const stage_build *b, wl_comm_kind k) {
  uint64_t tokens = whole(b->tokens / d->p->tp);
  return tokens * d->m->hidden * ep_elem_bytes(d, k);
}

static void layer_comm(wl__dag *d, stage_build *b, wl_comm_kind kind, uint64_t bytes) {
  comm(d, b->s, WL__COMPUTE, kind, bytes, WL__NONE);
}

static void forward(wl__dag *d, stage_build *b, uint32_t *first, uint32_t *last) {
  const wl_model *m = d->m;
  const wl_parallel *p = d->p;
  uint64_t tp_bytes = whole(b->tokens * m->hidden * d->abytes);
  uint64_t disp = ep_bytes(d, b, WL_COMM_EP_DISPATCH), comb = ep_bytes(d, b, WL_COMM_EP_COMBINE);
  *first = WL__NONE;
  for (uint32_t l = b->first; l < b->first + b->count; l++) {
    bool fresh = *first == WL__NONE || p->zero >= 3, moe = wl_layer_is_moe(m, l) && p->ep > 1;
    double ta = t_attention(d, b);
    uint32_t x = compute(d, b->s, WL__FWD, ta > 0 ? ta : t_ffn(d, b, l), fresh);
    double emb = l == 0 ? m->embedding / p->tp : 0;
    gather_before(d, b, layer_dense_params(d, l) + emb, layer_expert_params(d, l), x);
    if (*first == WL__NONE) *first = x;
    if (ta > 0) {
      if (p->tp > 1) layer_comm(d, b, WL_COMM_TP_ALLREDUCE, tp_bytes);
      if (moe) layer_comm(d, b, WL_COMM_EP_DISPATCH, disp);
      compute(d, b->s, WL__FWD, t_ffn(d, b, l), false);
      if (moe) layer_comm(d, b, WL_COMM_EP_COMBINE, comb);
      if (p->tp > 1) layer_comm(d, b, WL_COMM_TP_ALLREDUCE, tp_bytes);
    }
  }
  if (last_stage(d, b) && m->vocab > 0 && m->kind != WL_MODEL_MLP) {
    uint32_t x = compute(d, b->s, WL__FWD, t_head(d, b), p->zero >= 3);
    gather_before(d, b, m->head / p->tp, 0, x);
  }
  *last = d->tail[b->s * WL__STREAMS + WL__COMPUTE];
  d->nodes[*last].sealed = true;
}

static void backward(wl__dag *d, stage_build *b, bool grads, uint32_t *first, uint32_t *last) {
  const wl_model *m = d->m;
  const wl_parallel *p = d->p;
  double f = p->recompute == CFG_RECOMPUTE_FULL ? 3 : 2;
  bool overlap = d->cfg->workload.grad_overlap;
  uint64_t tp_bytes = whole(b->tokens * m->hidden * d->abytes);
  uint64_t disp = ep_bytes(d, b, WL_COMM_EP_DISPATCH), comb = ep_bytes(d, b, WL_COMM_EP_COMBINE);
  uint32_t x = WL__NONE;
  *first = WL__NONE;
  if (last_stage(d, b) && m->vocab > 0 && m->kind != WL_MODEL_MLP) {
    x = compute(d, b->s, WL__BWD, f * t_head(d, b), true);
    gather_before(d, b, m->head / p->tp, 0, x);
    *first = x;
    if (grads) b->pending += m->head / p->tp * d->gbytes;
    if (grads && overlap) flush_buckets(d, b, x, false);
  }
  for (uint32_t l = b->first + b->count; l-- > b->first;) {
    bool moe = wl_layer_is_moe(m, l) && p->ep > 1, attn = m->kind != WL_MODEL_MLP;
    double emb = l == 0 ? m->embedding / p->tp : 0;
    if (attn && p->tp > 1) {
      uint32_t c = comm(d, b->s, WL__COMPUTE, WL_COMM_TP_ALLREDUCE, tp_bytes, WL__NONE);
      if (*first == WL__NONE) *first = c;
      gather_before(d, b, layer_dense_params(d, l) + emb, layer_expert_params(d, l), c);
    }
    if (moe) layer_comm(d, b, WL_COMM_EP_DISPATCH, disp); /* output gradients out */
    bool fresh = *first == WL__NONE || (p->zero >= 3 && !(attn && p->tp > 1));
    x = compute(d, b->s, WL__BWD, f * t_ffn(d, b, l), fresh);
    if (fresh) gather_before(d, b, layer_dense_params(d, l) + emb, layer_expert_params(d, l), x);
    if (*first == WL__NONE) *first = x;
    if (moe) layer_comm(d, b, WL_COMM_EP_COMBINE, comb); /* input gradients back */
    if (attn) {
      if (p->tp > 1) layer_comm(d, b, WL_COMM_TP_ALLREDUCE, tp_bytes);
      x = compute(d, b->s, WL__BWD, f * t_attention(d, b), false);
    }
    if (grads) {
      b->pending += (layer_dense_params(d, l) + emb) * d->gbytes;
      b->pending_e += layer_expert_params(d, l) * d->gbytes;
      if (overlap) flush_buckets(d, b, x, false);
    }
  }
  *last = d->tail[b->s * WL__STREAMS + WL__COMPUTE];
  d->nodes[*last].sealed = true;
  if (grads) flush_buckets(d, b, *last, true);
}

/* Optimizer on the stage's shard, then (ZeRO 1-2) the weights gathered back. */
static void optimizer(wl__dag *d, stage_build *b) {
  const wl_parallel *p = d->p;
  double dense = 0, expert = 0;
  for (uint32_t l = b->first; l < b->first + b->count; l++) {
    dense += layer_dense_params(d, l);
    expert += layer_expert_params(d, l);
  }
  if (b->s == 0) dense += d->m->embedding / p->tp;
  if (last_stage(d, b)) dense += d->m->head / p->tp;
  double ne = (double)p->dp / p->ep;
  double local = p->zero ? dense / p->dp + expert / ne : dense + expert;
  double bytes = local * (2 * d->obytes + d->wbytes + d->gbytes);
  uint32_t x = compute(d, b->s, WL__OPT, bytes / d->hbm, true);
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

void wl__dag_build(wl__dag *d) {
  const wl_parallel *p = d->p;
  const wl_model *m = d->m;
  uint32_t pp = p->pp, mb = p->micro_batches;
  size_t nstreams = (size_t)pp * WL__STREAMS;
  d->head = sim_malloc(nstreams * sizeof *d->head);
  d->tail = sim_malloc(nstreams * sizeof *d->tail);
  for (size_t i = 0; i < nstreams; i++) d->head[i] = d->tail[i] = WL__NONE;
  size_t blocks = (size_t)pp * mb;
  uint32_t *ff = sim_malloc(blocks * sizeof *ff), *fl = sim_malloc(blocks * sizeof *fl);
  uint32_t *bf = sim_malloc(blocks * sizeof *bf), *bl = sim_malloc(blocks * sizeof *bl);
  for (uint32_t s = 0; s < pp; s++) {
    stage_build b = {.s = s};
    wl_stage_layers(m, p, s, &b.first, &b.count);
    b.tokens = (double)p->micro_batch * m->seq_len;
    uint32_t warm = pp - s - 1 < mb ? pp - s - 1 : mb;
    bool every = p->zero >= 2; /* gradients reduced after every micro-batch */
    size_t at = (size_t)s * mb;
    for (uint32_t j = 0; j < warm; j++) forward(d, &b, &ff[at + j], &fl[at + j]);
    for (uint32_t i = 0; i + warm < mb; i++) {
      forward(d, &b, &ff[at + warm + i], &fl[at + warm + i]);
      backward(d, &b, every || i == mb - 1, &bf[at + i], &bl[at + i]);
    }
    for (uint32_t i = mb - warm; i < mb; i++)
      backward(d, &b, every || i == mb - 1, &bf[at + i], &bl[at + i]);
    optimizer(d, &b);
  }
  /* Pipeline sends, in micro-batch order on each stage's send streams. */
  double send_bytes = (double)p->micro_batch * m->seq_len * m->hidden * d->abytes / p->tp;
  for (uint32_t s = 0; s + 1 < pp; s++) {
    uint32_t fl0, nl;
    wl_stage_layers(m, p, s + 1, &fl0, &nl);
    double bytes = m->kind == WL_MODEL_MLP
                       ? (double)p->micro_batch * (double)m->widths[fl0] * d->abytes
                       : send_bytes;
    for (uint32_t j = 0; j < mb; j++) {
      uint32_t x = comm(d, s, WL__SEND_FWD, WL_COMM_PP_SEND, whole(bytes), s + 1);
      add_edge(d, fl[(size_t)s * mb + j], x);
      add_edge(d, x, ff[(size_t)(s + 1) * mb + j]);
    }
    for (uint32_t j = 0; j < mb; j++) {
      uint32_t x = comm(d, s + 1, WL__SEND_BWD, WL_COMM_PP_SEND, whole(bytes), s);
      add_edge(d, bl[(size_t)(s + 1) * mb + j], x);
      add_edge(d, x, bf[(size_t)s * mb + j]);
    }
  }
  sim_free(ff);
  sim_free(fl);
  sim_free(bf);
  sim_free(bl);
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
  memset(d, 0, sizeof *d);
}
