/* fabsim serving: a model served by replicas under continuous batching
 * (workload.kind inference; docs/inference.md).
 *
 * Cost of one iteration of a replica (inf_iter_s): the replica's tp GPUs
 * run every layer of the model on the iteration's tokens, each kernel timed
 * by the training step's roofline (fabsim/wl_kernels.h: max of FLOPs and
 * bytes per kernel, the GPU's measured GEMM and attention rates):
 *   per layer: norm | QKV GEMM | rotary | attention of the prompt chunks
 *   (compute-bound) | attention of the decodes (reads each sequence's KV
 *   cache: memory-bound) | output GEMM | AllReduce | norm | feed-forward
 *   GEMMs and activation (MoE: the experts the tokens reach, each a GEMM of
 *   its tokens reading its weights) | AllReduce | residual adds;
 *   then the final norm and the output layer on the sequences that sample a
 *   token. The AllReduces (tp > 1: two a layer, of tokens x hidden x 2
 *   bytes) are timed by the caller's inf_comm (src/coll's NCCL tuner model
 *   in the run layer: launch, protocol and per-hop latencies, which decide
 *   a decode's small messages).
 * KV cache: bytes per token = 2 x layers x kv_heads x head_dim x kv_bytes
 * (MLA: layers x latent x kv_bytes); per GPU, a replica's kv_heads split
 * over tp (at least one head each; MLA's latent is held whole on every
 * GPU); capacity per replica, in tokens = (memory_utilization x HBM -
 * weights / tp - kv_reserve) / per-GPU bytes per token, in whole blocks.
 *
 * All functions are pure but inf_run, which simulates a request stream.
 */
#ifndef FABSIM_INFER_H
#define FABSIM_INFER_H

#include "fabsim/config.h"
#include "fabsim/core.h"
#include "fabsim/topo.h"
#include "fabsim/wl_kernels.h"
#include "fabsim/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- requests ------------------------------------------------------------ */

typedef struct inf_request {
  simtime_ps arrival;
  uint32_t prompt, output; /* tokens: prompt, generated (>= 1) */
} inf_request;

typedef struct inf_requests {
  inf_request *r; /* arrival order (non-decreasing); owned */
  size_t n;
} inf_requests;

/* A Vidur request trace: CSV with a header row naming arrived_at (seconds),
 * num_prefill_tokens and num_decode_tokens (any order; other columns
 * ignored), a row per request. SIM_EINVAL with "name:line: what is wrong;
 * what is allowed" for a missing column, a field that is not a number, a
 * negative or non-finite time, token counts below 1 or above 2^31, arrival
 * times that decrease, or no request. O(len). Free with inf_requests_free. */
int inf_trace_parse(inf_requests *out, const char *text, size_t len, const char *name,
                    sim_error *err);
/* n requests of prompt/output tokens arriving as a Poisson process of
 * `rate` per second from the core's RNG stream "inference" of `seed`
 * (n 0: those arriving before `until`). */
void inf_poisson(inf_requests *out, double rate, uint64_t n, simtime_ps until, uint32_t prompt,
                 uint32_t output, uint64_t seed);
void inf_requests_free(inf_requests *q);

/* ---- cost model ------------------------------------------------------------ */

/* The AllReduce of a replica's tp GPUs: seconds for `bytes` (S as
 * nccl-tests counts it). NULL fn: free (tests). */
typedef struct inf_comm {
  double (*allreduce_s)(void *ctx, uint64_t bytes);
  void *ctx;
} inf_comm;

typedef struct inf_model {
  wl_model m;             /* the model (workload.model.*) */
  uint32_t tp, block;     /* tensor parallel; tokens per KV block */
  double weights_per_gpu; /* bytes */
  double kv_token_bytes;  /* one token's KV cache, whole replica (the formula above) */
  double kv_token_gpu;    /* of it, on each GPU */
  double kv_budget_gpu;   /* bytes per GPU left for the KV cache */
  uint64_t kv_blocks;     /* per replica */
  uint64_t kv_tokens;     /* kv_blocks x block */
  double weight_bytes;    /* bytes per weight at workload.precision */
  double kv_bytes;        /* bytes per cached element */
  uint32_t kv_latent;     /* MLA latent elements per token and layer (0: K and V) */
  bool lowp;              /* GEMMs at workload.precision (fp8) */
  const wl_kernels *k;
  inf_comm comm;
} inf_model;

/* The model of a replica from the scenario (workload.model.*,
 * workload.inference.*, cluster.gpu_memory), its kernels from `k` (owned by
 * the caller) and its AllReduces from `comm`. SIM_ECONFIG at the key to
 * change: weights that leave no KV cache on a GPU, tp not dividing the
 * heads, an MLP model. */
int inf_model_init(inf_model *im, const cfg_scenario *cfg, const cfg_doc *doc, const wl_kernels *k,
                   const inf_comm *comm, sim_error *err);

/* What one iteration of a replica computes. Prompt chunks: q new tokens
 * after c cached ones each; decodes: one token after c cached. */
typedef struct inf_batch {
  uint32_t prefill_seqs; /* prompt chunks */
  double prefill_tokens; /* sum of q */
  double prefill_pairs;  /* sum of q c + q (q + 1) / 2: query-key pairs */
  double prefill_kv;     /* sum of c + q */
  uint32_t decode_seqs;  /* decodes */
  double decode_kv;      /* sum of c + 1 */
  uint32_t sampled;      /* sequences sampling a token (decodes + chunks ending a prompt) */
} inf_batch;

/* Seconds of the iteration's parts on each GPU of the replica. */
typedef struct inf_iter {
  double gemm_s, attn_prefill_s, attn_decode_s, other_s, comm_s, gaps_s, head_s, total_s;
} inf_iter;

/* One iteration's time; `parts` may be NULL. O(1) (one inf_comm call per
 * iteration size). */
double inf_iter_s(const inf_model *im, const inf_batch *b, inf_iter *parts);
/* A request alone on a replica (closed form for low load): its prompt in
 * one iteration (chunks of at most max_tokens when longer), then output - 1
 * decodes of batch 1: *ttft and *e2e seconds. */
void inf_alone_s(const inf_model *im, uint32_t prompt, uint32_t output, uint32_t max_tokens,
                 double *ttft, double *e2e);

/* ---- the scheduler ---------------------------------------------------------- */

typedef struct inf_sched {
  uint32_t replicas, max_batch, max_tokens;
  bool chunk;
  cfg_inf_dispatch dispatch;
  double slo_ttft_s, slo_tpot_s;
} inf_sched;

typedef struct inf_dist {
  double mean, p50, p90, p99, max;
} inf_dist;

/* The queue and the KV cache over time: INF_BINS bins of bin_s seconds
 * from the first arrival, each the time average over its stretch of the
 * requests waiting and of the share of all replicas' KV blocks in use. The
 * bins start at 1 ms and double in width whenever the run outgrows them
 * (pairs merged), so memory stays bounded; bins past the run's end are 0
 * (nbins: those the run reached). */
enum { INF_BINS = 256 };
typedef struct inf_series {
  double bin_s;
  uint32_t nbins;
  double waiting[INF_BINS], kv[INF_BINS];
} inf_series;

/* What a request stream got (seconds, per second). Percentiles are of the
 * completed requests (nearest rank); TPOT is (e2e - ttft) / (output - 1)
 * of requests generating more than one token. */
typedef struct inf_result {
  uint64_t requests, completed, preemptions, iterations;
  inf_dist ttft, tpot, e2e;
  double span_s; /* first arrival to last completion */
  double rps, input_tps, output_tps;
  double rps_per_gpu, output_tps_per_gpu;
  double slo_ttft, slo_tpot, slo_both; /* shares of completed requests meeting them */
  double goodput_rps;                  /* requests/s meeting both */
  double waiting_mean, waiting_max;    /* requests queued (time average, peak) */
  double in_system_mean;               /* requests arrived and not done (time average) */
  double kv_mean, kv_max;              /* KV-cache blocks in use over all replicas' */
  double batch_mean;                   /* sequences per iteration */
  uint32_t gpus;                       /* tp x replicas */
  uint64_t kv_tokens;                  /* per replica */
  double kv_token_bytes, kv_token_gpu, weights_per_gpu;
  double alone_ttft_s, alone_e2e_s; /* the stream's first request alone (inf_alone_s) */
  inf_series series;
} inf_result;

/* Simulate the requests over s->replicas replicas of `im`, to the last
 * request's end. Deterministic. SIM_EINVAL when a request could never run
 * (its prompt and output exceed a replica's KV cache; without chunking, a
 * prompt over max_tokens). O(iterations x batch + requests log requests). */
int inf_run(inf_result *out, const inf_model *im, const inf_sched *s, const inf_requests *q,
            sim_error *err);
/* The first request of q that could never run (its index), or -1; *why. */
long inf_unservable(const inf_model *im, const inf_sched *s, const inf_requests *q, char *why,
                    size_t cap);

/* ---- workload.kind inference: from a scenario ---------------------------- */

/* A replica's AllReduce over its tp GPUs (the first replica's, GPUs
 * 0 .. tp-1: every replica alike) by src/coll's tuner model (coll_tune: the
 * fastest of NCCL's algorithms and protocols by their closed forms on the
 * topology, with NCCL's launch and per-hop latencies). Memoized by size. */
typedef struct inf_nccl inf_nccl;

/* Everything a serving run needs, built and checked from a scenario. */
typedef struct inf_job {
  inf_model model;
  inf_sched sched;
  inf_requests requests;
  wl_kernels *kernels; /* owned */
  inf_nccl *nccl;      /* owned */
} inf_job;

/* Every check before anything runs, each SIM_ECONFIG located at its key
 * (file:line:col): a fidelity other than analytic (flow and packet are not
 * modelled yet), pipeline or expert parallelism, tp over a node or not
 * dividing the heads, tp x replicas over the cluster's GPUs,
 * memory_utilization over 1, a rate set beside a trace, neither requests
 * nor duration, the trace's own errors (its file:line), a request no
 * replica could hold. Free with inf_job_free (also after an error). */
int inf_job_from_cfg(inf_job *j, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                     sim_error *err);
void inf_job_free(inf_job *j);

#ifdef __cplusplus
}
#endif
#endif
