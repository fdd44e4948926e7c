/* Internals shared by the files of the serving module (inf__ prefix).
 *
 *   cost.c   a replica's iteration time and KV-cache capacity
 *   trace.c  requests: Vidur's CSV, the Poisson stream
 *   sched.c  continuous batching over replicas, the figures
 *   comm.c   a replica's AllReduce by src/coll's tuner model
 *   setup.c  the scenario's checks and the run of workload.kind inference
 */
#ifndef FABSIM_INF_INTERNAL_H
#define FABSIM_INF_INTERNAL_H

#include "fabsim/infer.h"

/* An iteration's time in whole picoseconds (at least 1). */
simtime_ps inf__iter_ps(const inf_model *im, const inf_batch *b);
double inf__head_dim(const wl_model *m);
double inf__kv_heads_gpu(const wl_model *m, uint32_t tp);

/* comm.c: the tuner's AllReduce over GPUs 0 .. tp-1 of t (inf_comm's fn). */
inf_nccl *inf__nccl_new(const topo *t, const cfg_scenario *cfg, uint32_t tp);
void inf__nccl_free(inf_nccl *c);
double inf__nccl_allreduce_s(void *ctx, uint64_t bytes);

#endif
