/* Collective -> plan: validation, dispatch to the algorithm builders (ring.c,
 * tree.c, hd.c, hier.c, a2a.c; moe.c for MoE dispatch/combine), the plan's
 * storage and the nccl-tests figures of merit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"

double coll_busbw_factor(cfg_coll_op op, uint32_t n) {
  if (n <= 1) return op == CFG_COLL_BROADCAST ? 1.0 : 0.0;
  switch (op) {
  case CFG_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
  case CFG_COLL_REDUCESCATTER:
  case CFG_COLL_ALLGATHER:
  case CFG_COLL_ALLTOALL: return (double)(n - 1) / n;
  case CFG_COLL_BROADCAST: return 1.0;
  }
  return 0.0;
}

uint64_t coll__hash(uint32_t src, uint32_t dst, uint64_t salt) {
  return sim_hash_u64(((uint64_t)src << 32 | dst) ^ sim_hash_u64(salt + 0x9e3779b97f4a7c15ULL));
}

coll_phase *coll__add_phase(coll_plan *p, size_t n, uint64_t repeat) {
  if (p->nphases == p->phases_cap) {
    p->phases_cap = p->phases_cap ? 2 * p->phases_cap : 8;
    p->phases = sim_realloc(p->phases, p->phases_cap * sizeof *p->phases);
  }
  coll_phase *ph = &p->phases[p->nphases++];
  ph->x = sim_calloc(n ? n : 1, sizeof *ph->x);
  ph->n = n;
  ph->repeat = repeat;
  ph->start = 0;
  ph->fixed = 0;
  ph->in_pool = false;
  return ph;
}

static bool same_xfers(const be_xfer *a, const be_xfer *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i].src_gpu != b[i].src_gpu || a[i].dst_gpu != b[i].dst_gpu || a[i].bytes != b[i].bytes ||
        a[i].flow_hash != b[i].flow_hash || a[i].tclass != b[i].tclass)
      return false;
  return true;
}

void coll__push_step(coll_plan *p, const be_xfer *x, size_t n, uint64_t repeat) {
  if (n == 0 || repeat == 0) return;
  coll_phase *last = p->nphases ? &p->phases[p->nphases - 1] : NULL;
  if (last && last->n == n && same_xfers(last->x, x, n)) {
    last->repeat += repeat;
    return;
  }
  coll_phase *ph = coll__add_phase(p, n, repeat);
  memcpy(ph->x, x, n * sizeof *x);
}

be_xfer *coll__pool(coll_plan *p, size_t n) {
  p->pool = sim_calloc(n ? n : 1, sizeof *p->pool);
  p->pool_n = n;
  return p->pool;
}

void coll__push_slice(coll_plan *p, size_t off, size_t n, uint64_t repeat) {
  if (n == 0 || repeat == 0) return;
  coll_phase *last = p->nphases ? &p->phases[p->nphases - 1] : NULL;
  if (last && last->in_pool && last->x == p->pool + off && last->n == n) {
    last->repeat += repeat;
    return;
  }
  if (p->nphases == p->phases_cap) {
    p->phases_cap = p->phases_cap ? 2 * p->phases_cap : 8;
    p->phases = sim_realloc(p->phases, p->phases_cap * sizeof *p->phases);
  }
  p->phases[p->nphases++] =
      (coll_phase){.x = p->pool + off, .n = n, .repeat = repeat, .in_pool = true};
}

void coll_plan_set_class(coll_plan *p, uint8_t tclass) {
  for (size_t i = 0; i < p->pool_n; i++) p->pool[i].tclass = tclass;
  for (size_t i = 0; i < p->nphases; i++)
    for (size_t k = 0; !p->phases[i].in_pool && k < p->phases[i].n; k++)
      p->phases[i].x[k].tclass = tclass;
}

/* q transfers of about x.bytes/q (the first ones one byte larger when it
 * does not divide), each with its own flow hash (its NIC selector kept
 * with keep_nic). */
static be_xfer *split_each(const be_xfer *x, size_t n, uint32_t q, bool keep_nic) {
  be_xfer *y = sim_calloc(n > 0 ? n * q : 1, sizeof *y);
  for (size_t j = 0; j < n; j++)
    for (uint32_t k = 0; k < q; k++) {
      be_xfer *z = &y[j * q + k];
      *z = x[j];
      z->bytes = x[j].bytes / q + (k < x[j].bytes % q);
      z->flow_hash = sim_hash_u64(x[j].flow_hash + k + 1);
      if (keep_nic)
        z->flow_hash = topo_flow_hash_nic(z->flow_hash, (uint32_t)(x[j].flow_hash >> 56));
    }
  return y;
}

/* Split every transfer of every phase over q queue pairs. Slices of the pool
 * stay slices of the split pool. */
void coll__split_qps(coll_plan *p, uint32_t q, bool keep_nic) {
  p->qps = q ? q : 1;
  if (p->qps == 1) return;
  be_xfer *pool = p->pool ? split_each(p->pool, p->pool_n, q, keep_nic) : NULL;
  for (size_t i = 0; i < p->nphases; i++) {
    coll_phase *ph = &p->phases[i];
    if (ph->in_pool) {
      ph->x = pool + (size_t)(ph->x - p->pool) * q;
    } else {
      be_xfer *x = split_each(ph->x, ph->n, q, keep_nic);
      sim_free(ph->x);
      ph->x = x;
    }
    ph->n *= q;
  }
  sim_free(p->pool);
  p->pool = pool;
  p->pool_n *= q;
}

uint32_t coll__channel_sel(const topo *t, uint32_t c) {
  uint32_t k = topo_nics_per_gpu(t), npn = topo_nic_count(t) / topo_node_count(t);
  return k > 1 ? (c % npn) % k : 0;
}

void coll__xfer_ch(const topo *t, be_xfer *x, uint32_t src, uint32_t dst, uint64_t bytes,
                   uint64_t salt, uint32_t c) {
  coll__xfer(x, src, dst, bytes, salt);
  if (topo_nics_per_gpu(t) > 1)
    x->flow_hash = topo_flow_hash_nic(x->flow_hash, coll__channel_sel(t, c));
}

uint32_t coll__gpu_local(const topo *t, uint32_t gpu) {
  uint32_t per_node = topo_gpu_count(t) / topo_node_count(t);
  return gpu % per_node;
}

int32_t coll__gpu_plane(const topo *t, uint32_t gpu) {
  return topo_vertex_at(t, topo_nic_vertex(t, topo_gpu_nic(t, gpu)))->plane;
}

bool coll__node_blocks(const topo *t, const uint32_t *ranks, uint32_t n, uint32_t *nodes,
                       uint32_t *per_node) {
  uint32_t m = 0, g = 0;
  bool uniform = true;
  for (uint32_t i = 0; i < n;) {
    uint32_t node = topo_gpu_node(t, ranks[i]), j = i;
    while (j < n && topo_gpu_node(t, ranks[j]) == node) j++;
    if (m == 0) g = j - i;
    else if (j - i != g) uniform = false;
    m++;
    i = j;
  }
  *nodes = m;
  *per_node = g;
  return uniform;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* The positions where the phases that are slices of the pool start and
 * end, with 0 and pool_n, ascending and distinct (be_slice.cuts): none for a
 * plan of one phase, which keeps nothing between slices. O(phases log phases). */
static void plan_cuts(coll_plan *p) {
  if (!p->pool || p->nphases < 2) return;
  p->cuts = sim_malloc((2 * p->nphases + 2) * sizeof *p->cuts);
  size_t n = 0;
  p->cuts[n++] = 0;
  p->cuts[n++] = p->pool_n;
  for (size_t i = 0; i < p->nphases; i++)
    if (p->phases[i].in_pool) {
      size_t off = (size_t)(p->phases[i].x - p->pool);
      p->cuts[n++] = off;
      p->cuts[n++] = off + p->phases[i].n;
    }
  qsort(p->cuts, n, sizeof *p->cuts, cmp_size);
  p->ncuts = 0;
  for (size_t i = 0; i < n; i++)
    if (p->ncuts == 0 || p->cuts[p->ncuts - 1] != p->cuts[i]) p->cuts[p->ncuts++] = p->cuts[i];
}

double coll__bw_factor(const coll_spec *s, cfg_coll_algorithm a) {
  const cfg_coll_bandwidth *b = s->bandwidth;
  double f = !b                       ? 1
             : a == CFG_ALGO_RING     ? b->ring
             : a == CFG_ALGO_TREE     ? b->tree
             : a == CFG_ALGO_NVLS     ? b->nvls
             : a == CFG_ALGO_NVLSTREE ? b->nvlstree
             : a == CFG_ALGO_COLLNET  ? b->collnet
                                      : 1;
  return f > 0 && f < 1 ? f : 1;
}

uint64_t coll__bw_bytes(const coll_spec *s, cfg_coll_algorithm a, uint64_t bytes) {
  double f = coll__bw_factor(s, a), b = ceil((double)bytes / f);
  return f == 1 || b >= 18446744073709551615.0 ? bytes : (uint64_t)b;
}

/* Every transfer of the plan at its algorithm's bandwidth factor. O(transfers). */
static void apply_bandwidth(coll_plan *p, const coll_spec *s) {
  if (coll__bw_factor(s, p->algorithm) == 1) return;
  for (size_t j = 0; j < p->pool_n; j++)
    p->pool[j].bytes = coll__bw_bytes(s, p->algorithm, p->pool[j].bytes);
  for (size_t i = 0; i < p->nphases; i++)
    for (size_t j = 0; !p->phases[i].in_pool && j < p->phases[i].n; j++)
      p->phases[i].x[j].bytes = coll__bw_bytes(s, p->algorithm, p->phases[i].x[j].bytes);
}

int coll_plan_build(coll_plan *plan, const topo *t, const coll_spec *spec, sim_error *err) {
  memset(plan, 0, sizeof *plan);
  coll_spec tuned = *spec;
  const coll_spec *s = &tuned;
  if (spec->nranks >= 2 && spec->channels >= 1 &&
      (spec->algorithm == CFG_ALGO_AUTO || spec->protocol == CFG_PROTO_AUTO)) {
    coll_tune(t, spec, &tuned.algorithm, &tuned.protocol, &tuned.channels, NULL);
  } else if (spec->algorithm == CFG_ALGO_AUTO) {
    tuned.algorithm = spec->op == CFG_COLL_ALLTOALL ? CFG_ALGO_PAIRWISE : CFG_ALGO_RING;
  }
  if (tuned.protocol == CFG_PROTO_AUTO) tuned.protocol = CFG_PROTO_SIMPLE;
  plan->protocol = s->protocol;
  plan->op = s->op;
  plan->algorithm = s->algorithm;
  plan->bytes = s->bytes;
  plan->nranks = s->nranks;
  plan->channels = s->channels;
  plan->chunk = s->chunk;
  plan->qps = 1;
  if (s->nranks == 0 || s->channels == 0 || s->chunk == 0)
    return sim_fail(err, SIM_EINVAL, "a collective needs ranks, channels and chunk >= 1");
  for (uint32_t i = 0; i < s->nranks; i++)
    if ((i > 0 && s->ranks[i] <= s->ranks[i - 1]) || s->ranks[i] >= topo_gpu_count(t))
      return sim_fail(err, SIM_EINVAL,
                      "collective ranks must be distinct GPUs of the cluster in ascending order");
  if (s->algorithm == CFG_ALGO_NODE_LIMITED)
    return sim_fail(err, SIM_EINVAL,
                    "node-limited is the MoE dispatch/combine (coll_moe_build, training "
                    "workload), not a %s algorithm",
                    cfg_coll_op_name(s->op));
  uint32_t nodes = 0, per = 0;
  coll__node_blocks(t, s->ranks, s->nranks, &nodes, &per);
  cfg_coll_protocol mp;
  uint32_t mc;
  /* RCCL's MSCCL allpairs AllReduce (rccl.c): where RCCL would run it */
  bool msccl = s->algorithm == CFG_ALGO_PAIRWISE && coll__rccl_msccl(s, nodes, &mp, &mc);
  if (!msccl && !cfg_coll_algorithm_offered(s->op, s->algorithm))
    return sim_fail(err, SIM_EINVAL,
                    "%s has no '%s' algorithm here (allreduce: ring, tree, halving-doubling, "
                    "hierarchical, nvls, collnet, nvlstree; reducescatter, allgather: ring, "
                    "halving-doubling; broadcast: "
                    "ring; alltoall: pairwise, pxn)",
                    cfg_coll_op_name(s->op), cfg_coll_algorithm_name(s->algorithm));
  if ((s->algorithm == CFG_ALGO_NVLS || s->algorithm == CFG_ALGO_COLLNET ||
       s->algorithm == CFG_ALGO_NVLSTREE) &&
      (s->protocol == CFG_PROTO_LL || s->protocol == CFG_PROTO_LL128))
    return sim_fail(err, SIM_EINVAL, "%s runs the simple protocol only (as NCCL's)",
                    cfg_coll_algorithm_name(s->algorithm));
  if (s->nranks == 1 || s->bytes == 0) return SIM_OK; /* nothing moves */
  int rc = SIM_OK;
  switch (s->algorithm) {
  case CFG_ALGO_RING:
    rc = s->op == CFG_COLL_BROADCAST ? coll__plan_broadcast(plan, t, s)
                                     : coll__plan_ring(plan, t, s);
    break;
  case CFG_ALGO_TREE: rc = coll__plan_tree(plan, t, s); break;
  case CFG_ALGO_HALVING_DOUBLING: rc = coll__plan_hd(plan, t, s); break;
  case CFG_ALGO_HIERARCHICAL: rc = coll__plan_hier(plan, t, s, err); break;
  case CFG_ALGO_PAIRWISE:
    rc = s->op == CFG_COLL_ALLREDUCE ? coll__plan_allpairs(plan, s) : coll__plan_pairwise(plan, s);
    break;
  case CFG_ALGO_PXN: rc = coll__plan_pxn(plan, t, s); break;
  case CFG_ALGO_NVLS: rc = coll__plan_nvls(plan, t, s, err); break;
  case CFG_ALGO_COLLNET: rc = coll__plan_collnet(plan, t, s, err); break;
  case CFG_ALGO_NVLSTREE: rc = coll__plan_nvlstree(plan, t, s, err); break;
  case CFG_ALGO_NODE_LIMITED: /* rejected above */
  case CFG_ALGO_AUTO: break;  /* resolved above */
  }
  if (rc == SIM_OK) {
    apply_bandwidth(plan, s);
    coll__apply_protocol(plan, t, s);
    coll__split_qps(plan, s->qps, topo_nics_per_gpu(t) > 1);
    plan_cuts(plan);
  } else {
    coll_plan_free(plan);
  }
  return rc;
}

void coll_plan_free(coll_plan *plan) {
  for (size_t i = 0; i < plan->nphases; i++)
    if (!plan->phases[i].in_pool) sim_free(plan->phases[i].x);
  sim_free(plan->phases);
  sim_free(plan->pool);
  sim_free(plan->cuts);
  memset(plan, 0, sizeof *plan);
}

int coll_plan_merge(coll_plan *into, coll_plan *from, sim_error *err) {
  if (into->nphases != from->nphases)
    return sim_fail(err, SIM_EINVAL, "plans of %zu and %zu phases cannot run in lock step",
                    into->nphases, from->nphases);
  for (size_t i = 0; i < into->nphases; i++)
    if (into->phases[i].repeat != from->phases[i].repeat)
      return sim_fail(
          err, SIM_EINVAL, "phase %zu repeats %llu times in one plan and %llu in the other", i,
          (unsigned long long)into->phases[i].repeat, (unsigned long long)from->phases[i].repeat);
  for (size_t i = 0; i < into->nphases; i++) {
    coll_phase *a = &into->phases[i];
    const coll_phase *b = &from->phases[i];
    be_xfer *x = sim_malloc((a->n + b->n ? a->n + b->n : 1) * sizeof *x);
    if (a->n) memcpy(x, a->x, a->n * sizeof *x);
    if (b->n) memcpy(x + a->n, b->x, b->n * sizeof *x);
    if (!a->in_pool) sim_free(a->x);
    a->x = x;
    a->n += b->n;
    a->in_pool = false;
  }
  sim_free(into->pool); /* no phase points into it any more */
  sim_free(into->cuts);
  into->pool = NULL;
  into->pool_n = 0;
  into->cuts = NULL;
  into->ncuts = 0;
  coll_plan_free(from);
  return SIM_OK;
}

uint64_t coll_plan_flows(const coll_plan *plan) {
  return coll_plan_transfers(plan) / (plan->qps ? plan->qps : 1);
}

bool coll_phase_slice(const coll_plan *plan, size_t i, const be_xfer **pool, size_t *pool_n,
                      size_t *off) {
  const coll_phase *ph = &plan->phases[i];
  if (!ph->in_pool) return false;
  *pool = plan->pool;
  *pool_n = plan->pool_n;
  *off = (size_t)(ph->x - plan->pool);
  return true;
}

/* Marks node of gpu (nodes[]) and, across nodes, its NIC (used[]). */
static void mark_xfer(const topo *t, const be_xfer *x, uint8_t *nodes, uint8_t *used) {
  uint32_t a = topo_gpu_node(t, x->src_gpu), b = topo_gpu_node(t, x->dst_gpu);
  if (a == b) return;
  nodes[a] = nodes[b] = 1;
  used[topo_xfer_nic(t, x->src_gpu, x->flow_hash)] = 1;
  used[topo_xfer_nic(t, x->dst_gpu, x->flow_hash)] = 1;
}

void coll_plan_idle_nics(const coll_plan *plan, const topo *t, uint32_t *idle, uint32_t *total) {
  uint32_t nn = topo_node_count(t), nics = topo_nic_count(t), npn = nics / nn;
  uint8_t *nodes = sim_calloc((size_t)nn + nics, 1), *used = nodes + nn;
  for (size_t j = 0; j < plan->pool_n; j++) mark_xfer(t, &plan->pool[j], nodes, used);
  for (size_t i = 0; i < plan->nphases; i++)
    for (size_t j = 0; !plan->phases[i].in_pool && j < plan->phases[i].n; j++)
      mark_xfer(t, &plan->phases[i].x[j], nodes, used);
  *idle = *total = 0;
  for (uint32_t a = 0; a < nn; a++)
    for (uint32_t i = 0; nodes[a] && i < npn; i++) {
      (*total)++;
      *idle += !used[a * npn + i];
    }
  sim_free(nodes);
}

uint64_t coll_plan_transfers(const coll_plan *plan) {
  uint64_t n = 0;
  for (size_t i = 0; i < plan->nphases; i++) n += plan->phases[i].n * plan->phases[i].repeat;
  return n;
}

uint64_t coll_plan_bytes(const coll_plan *plan) {
  uint64_t b = 0;
  for (size_t i = 0; i < plan->nphases; i++) {
    uint64_t sum = 0;
    for (size_t j = 0; j < plan->phases[i].n; j++) sum += plan->phases[i].x[j].bytes;
    b += sum * plan->phases[i].repeat;
  }
  return b;
}
