/* A replica's AllReduce by src/coll's tuner model (inf_nccl): coll_tune
 * over the replica's tp GPUs at the message size, with the scenario's
 * workload.collective keys (algorithm, protocol, latencies, NVLS) as every
 * collective of fabsim takes them (coll_spec_from_cfg). A direct-mapped
 * memo by size: the same size gives the same time whatever was asked
 * before (the value is recomputed on a miss), so results never depend on
 * the order of the calls. */
#include <math.h>

#include "fabsim/coll.h"
#include "infer/inf_internal.h"

enum { MEMO = 4096 };

struct inf_nccl {
  const topo *t;
  const cfg_scenario *cfg;
  uint32_t *ranks, n;
  uint64_t key[MEMO];
  double val[MEMO];
  bool have[MEMO];
};

double inf__nccl_allreduce_s(void *ctx, uint64_t bytes) {
  inf_nccl *c = ctx;
  size_t slot = (size_t)(sim_hash_u64(bytes) % MEMO);
  if (c->have[slot] && c->key[slot] == bytes) return c->val[slot];
  coll_spec spec =
      coll_spec_from_cfg(c->cfg, CFG_COLL_ALLREDUCE, bytes ? bytes : 1, c->ranks, c->n);
  cfg_coll_algorithm a;
  cfg_coll_protocol p;
  uint32_t ch;
  double est = NAN;
  coll_tune(c->t, &spec, &a, &p, &ch, &est);
  c->have[slot] = true, c->key[slot] = bytes, c->val[slot] = est;
  return est;
}

inf_nccl *inf__nccl_new(const topo *t, const cfg_scenario *cfg, uint32_t tp) {
  inf_nccl *c = sim_calloc(1, sizeof *c);
  c->t = t, c->cfg = cfg, c->n = tp;
  c->ranks = sim_malloc(tp * sizeof *c->ranks);
  for (uint32_t i = 0; i < tp; i++) c->ranks[i] = i;
  return c;
}

void inf__nccl_free(inf_nccl *c) {
  if (!c) return;
  sim_free(c->ranks);
  sim_free(c);
}
