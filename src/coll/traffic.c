/* Synthetic traffic patterns as plans (see coll_traffic_build in coll.h). */
#include <string.h>

#include "coll/coll_internal.h"

enum { TRAFFIC_MAX_FLOWS = 50000000 };

typedef struct flow_pair {
  uint32_t src, dst;
} flow_pair;

/* A uniformly random derangement of 0..n-1 (n >= 2): Sattolo's algorithm
 * gives a single n-cycle, which has no fixed point. */
static void derangement(uint32_t *perm, uint32_t n, uint64_t seed) {
  sim_rng r;
  sim_rng_init(&r, seed, "traffic.permutation");
  for (uint32_t i = 0; i < n; i++) perm[i] = i;
  for (uint32_t i = n - 1; i > 0; i--) {
    uint32_t j = (uint32_t)sim_rng_below(&r, i);
    uint32_t tmp = perm[i];
    perm[i] = perm[j];
    perm[j] = tmp;
  }
}

static int traffic_pairs(const topo *t, const coll_traffic_spec *s, flow_pair **out, uint64_t *nout,
                         sim_error *err) {
  uint32_t n = s->gpus ? s->ngpus : topo_gpu_count(t);
  uint32_t g = topo_gpu_count(t) / topo_node_count(t); /* GPUs per node */
  uint32_t nodes = n / g;
  flow_pair *f = NULL;
  uint64_t nf = 0;
  if (n < 2)
    return sim_fail(err, SIM_EINVAL, "synthetic traffic needs at least 2 GPUs; the cluster has %u",
                    n);
  switch (s->pattern) {
  case CFG_TRAFFIC_PAIR:
    f = sim_malloc(sizeof *f);
    f[0] = (flow_pair){0, n - 1};
    nf = 1;
    break;
  case CFG_TRAFFIC_INCAST: {
    if (s->senders > n - 1)
      return sim_fail(err, SIM_EINVAL, "incast of %u senders needs %u GPUs; the cluster has %u",
                      s->senders, s->senders + 1, n);
    f = sim_malloc(s->senders * sizeof *f);
    /* GPU 0's rail on the other nodes first, then the other local indexes. */
    for (uint32_t local = 0; local < g && nf < s->senders; local++)
      for (uint32_t node = 1; node < nodes && nf < s->senders; node++)
        f[nf++] = (flow_pair){node * g + local, 0};
    for (uint32_t local = 1; local < g && nf < s->senders; local++) f[nf++] = (flow_pair){local, 0};
    break;
  }
  case CFG_TRAFFIC_PERMUTATION: {
    uint32_t *perm = sim_malloc(n * sizeof *perm);
    derangement(perm, n, s->seed);
    f = sim_malloc(n * sizeof *f);
    for (uint32_t i = 0; i < n; i++) f[nf++] = (flow_pair){i, perm[i]};
    sim_free(perm);
    break;
  }
  case CFG_TRAFFIC_ALL_TO_ALL:
    if ((uint64_t)n * (n - 1) > TRAFFIC_MAX_FLOWS)
      return sim_fail(err, SIM_EINVAL,
                      "all-to-all over %u GPUs is %llu flows; at most %d: lower cluster.nodes", n,
                      (unsigned long long)n * (n - 1), TRAFFIC_MAX_FLOWS);
    f = sim_malloc((size_t)n * (n - 1) * sizeof *f);
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t k = 1; k < n; k++) f[nf++] = (flow_pair){i, (i + k) % n};
    break;
  }
  if (s->gpus) /* pattern ranks -> the GPUs it runs over */
    for (uint64_t i = 0; i < nf; i++) f[i] = (flow_pair){s->gpus[f[i].src], s->gpus[f[i].dst]};
  *out = f;
  *nout = nf;
  return SIM_OK;
}

coll_p2p coll_p2p_of(const cfg_scenario *cfg) {
  return (coll_p2p){.nvlink_start = cfg->cluster.scale_up.start,
                    .nic_start = cfg->cluster.nic.start,
                    .nic_finish = cfg->cluster.nic.finish};
}

void coll_p2p_parts(const topo *t, const coll_p2p *p, uint32_t src_gpu, uint32_t dst_gpu,
                    simtime_ps *start, simtime_ps *finish) {
  bool nvlink = topo_gpu_node(t, src_gpu) == topo_gpu_node(t, dst_gpu);
  *start = nvlink ? p->nvlink_start : p->nic_start;
  *finish = nvlink ? 0 : p->nic_finish;
}

/* Each phase's start and fixed: the largest of its transfers' parts. */
static void traffic_p2p(coll_plan *plan, const topo *t, const coll_p2p *p) {
  for (size_t i = 0; i < plan->nphases; i++) {
    coll_phase *ph = &plan->phases[i];
    for (size_t k = 0; k < ph->n; k++) {
      simtime_ps s, f;
      coll_p2p_parts(t, p, ph->x[k].src_gpu, ph->x[k].dst_gpu, &s, &f);
      if (s > ph->start) ph->start = s;
      if (f > ph->fixed) ph->fixed = f;
    }
  }
}

int coll_traffic_build(coll_plan *plan, const topo *t, const coll_traffic_spec *s, sim_error *err) {
  memset(plan, 0, sizeof *plan);
  plan->bytes = s->bytes;
  plan->channels = 1;
  plan->stagger = s->stagger;
  flow_pair *f = NULL;
  uint64_t nf = 0;
  int rc = traffic_pairs(t, s, &f, &nf, err);
  if (rc != SIM_OK) return rc;
  plan->nranks = s->gpus ? s->ngpus : topo_gpu_count(t);
  if (s->stagger == 0) {
    coll_phase *ph = coll__add_phase(plan, nf, 1);
    for (uint64_t i = 0; i < nf; i++)
      ph->x[i] = (be_xfer){.src_gpu = f[i].src,
                           .dst_gpu = f[i].dst,
                           .bytes = s->bytes,
                           .flow_hash = sim_hash_u64((uint64_t)f[i].src << 32 | f[i].dst)};
  } else {
    for (uint64_t i = 0; i < nf; i++) {
      coll_phase *ph = coll__add_phase(plan, 1, 1);
      ph->x[0] = (be_xfer){.src_gpu = f[i].src,
                           .dst_gpu = f[i].dst,
                           .bytes = s->bytes,
                           .flow_hash = sim_hash_u64((uint64_t)f[i].src << 32 | f[i].dst)};
    }
  }
  sim_free(f);
  coll__split_qps(plan, s->qps, false);
  if (s->p2p) traffic_p2p(plan, t, s->p2p);
  return SIM_OK;
}
