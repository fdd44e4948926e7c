/* Internals shared by the files of the workload module (wl__ prefix).
 *
 *   model.c   model, parallelism, rank placement (public API)
 *   memory.c  per-GPU memory and the fitting search (public API)
 *   schedule.c the order of forward/backward chunks per stage (1f1b,
 *             interleaved, dualpipe)
 *   roofline.c each operation of a layer timed (compute side): GEMMs by
 *             gemm.c, the attention core by attention.c, the MoE layer's
 *             experts, permutations and host wait by kernels_moe.c
 *   recompute.c the forward that recomputation adds to a backward
 *   dag.c     one step as a DAG per pipeline stage, communication classes
 *   step.c    the executor on a backend and the step figures
 *
 * The DAG describes one representative rank per pipeline stage: every
 * data-parallel replica and tensor-parallel rank of a stage computes the same
 * thing at the same time, so a compute node stands for all of them and a
 * communication node for the same collective in every group of the stage
 * (all its transfers submitted together: the fabric sees them all).
 */
#ifndef FABSIM_WL_INTERNAL_H
#define FABSIM_WL_INTERNAL_H

#include "fabsim/coll.h"
#include "fabsim/workload.h"

#define WL__NONE UINT32_MAX

/* Streams of a stage run their nodes in order, one at a time; collectives
 * inside a layer (tensor, expert parallel) sit on the compute stream because
 * the next computation needs their result. */
enum { WL__COMPUTE, WL__SEND_FWD, WL__SEND_BWD, WL__DP, WL__XCOMM, WL__STREAMS };
/* WL__XCOMM: in-layer collectives taken off the compute stream where a
 * framework overlaps them (dualpipe's overlapped chunk pairs, tensor-
 * parallel overlap): the computation after one waits for it by an edge. */
enum { WL__FWD, WL__BWD, WL__OPT, WL__COMM };

typedef struct wl__node {
  simtime_ps dur; /* compute nodes */
  simtime_ps mem; /* compute nodes: of dur, operations bound by HBM bandwidth */
  simtime_ps rc;  /* compute nodes: of dur, forwards recomputed in a backward */
  simtime_ps start;
  uint32_t stage;
  uint32_t peer;       /* pipeline sends: the other stage; else WL__NONE */
  uint32_t cls;        /* communication class; WL__NONE for compute */
  uint32_t deps;       /* unmet dependencies */
  uint32_t first_edge; /* successors: edge list */
  uint32_t next;       /* next node of the same stream */
  uint32_t aux;        /* executor: slot of a live collective */
  uint8_t stream, role;
  bool sealed; /* has successors or ends a block: never merged into */
} wl__node;

/* A distinct collective: kind, stage and size. Its plan covers every group
 * of the stage; built on first use. */
typedef struct wl__class {
  wl_comm_kind kind;
  uint32_t stage, peer;
  uint64_t bytes;     /* S as nccl-tests counts it; pipeline sends: per rank */
  uint32_t group;     /* ranks per group */
  uint64_t transfers; /* per instance, without repetitions (estimate) */
  uint32_t sms;       /* SMs each GPU's kernel holds while it runs (0: offloaded) */
  uint64_t instances;
  coll_plan plan;
  bool built;
  simtime_ps measured; /* reuse: the time of one instance alone */
} wl__class;

/* ---- compute: each kernel's time (roofline.c, gemm.c, attention.c) ---- */

/* A class of GEMMs (gemm.c): the tensor-core peak they run at and what the
 * kernel model makes of it. */
typedef struct wl__rate {
  double peak; /* FLOP/s: the precision's dense peak */
  double eff;  /* kernel model: each SM's share of its peak in the main loop;
                  single-efficiency roofline: workload.compute_efficiency */
  double cap;  /* no GEMM above peak x cap (the GPU's measured maximum) */
  double in;   /* bytes per operand element */
} wl__rate;

/* What one GPU achieves at the training precision. */
typedef struct wl__hw {
  bool legacy;        /* workload.compute_efficiency set: the single-efficiency
                         roofline (GEMMs and attention at peak x it), no launch
                         gaps, no FP8 casts, no gradient-norm pass */
  wl__rate mm;        /* the precision's GEMMs (FP8 under fp8) */
  wl__rate mm16;      /* GEMMs kept in 16 bits under fp8 (output layer, router;
                         DeepSeek-V3 sec. 3.3.1); = mm otherwise */
  double gemm;        /* FLOP/s of a large GEMM: peak x the measured plateau
                         x clock (legacy: peak x compute_efficiency) */
  double attn;        /* FLOP/s peak of attention's matmuls (16-bit; TF32 under
                         fp32); legacy: x compute_efficiency */
  bool attn_fa2;      /* attention.c: FlashAttention-2's curve (A100 family) */
  double attn_scale;  /* attention.c: the curve's scale to this GPU */
  double sms;         /* cluster.gpu_sms */
  double clock;       /* tensor cores' sustained over burst rate (MSMF / MAMF;
                         1 legacy): GEMMs' and attention's rates scale by it */
  double gap;         /* s: launch gap per kernel on the stream (0 legacy) */
  bool fp8;           /* workload.precision fp8 (kernel model): operand casts */
  bool fp8_transpose; /* FP8 tensor cores need K-major operands (not B200) */
  cfg_fp8_recipe recipe;
  double hbm;         /* bytes/s: cluster.hbm_bandwidth x cluster.hbm_efficiency */
  double act;         /* bytes per activation element (2; fp32 4) */
  double wgrad;       /* bytes per weight-gradient element a GEMM moves (fp32
                         main gradient read and written; legacy: act) */
  double expert_load; /* the busiest GPU's expert tokens over the mean (router
                         statistics: coll_moe_routing.imbalance; 1 balanced) */
  double host_op;     /* s: the host's time to issue one kernel (0 legacy) */
  bool host_sync;     /* MoE forward waits for the token counts (ep > 1) */
  bool ggemm_streams; /* local experts' GEMMs one per expert over streams */
} wl__hw;

/* Seconds, and of them the time of memory-bound operations; ops: the
 * kernels the host issues for it (a kernel model's count: launch gaps are
 * counted per stream, ops per launch). */
typedef struct wl__cost {
  double t, mem, ops;
} wl__cost;

/* A layer part per micro-batch: its forward, its backward without weight
 * gradients (input-gradient GEMMs, attention core, element-wise) and its
 * weight-gradient GEMMs; rc[k]: the forward kernels (launch gaps included)
 * that selective recomputation of module k (cfg_recompute_module) reruns
 * in this part, as the forward costs them (an FP8 weight's cast is reused,
 * not repeated). */
typedef struct wl__part {
  wl__cost fwd, bin, bw;
  wl__cost rc[CFG_RCMOD_COUNT];
} wl__part;

void wl__hw_init(wl__hw *hw, const cfg_scenario *cfg);
/* gemm.c: hw->mm, mm16, sms from the GPU's tables (or the override). */
void wl__rates_init(wl__hw *hw, const cfg_scenario *cfg);
/* gemm.c: the measured plateau (MAMF / peak) of cluster.gpu at the training
 * precision. */
double wl__gemm_plateau(const cfg_scenario *cfg);
/* gemm.c: b GEMMs C[m x n] = A[m x k] B[k x n] in one kernel, `lowp`: at the
 * training precision (FP8 under fp8), else in 16 bits; its kernel time (no
 * launch gap). Memory-bound (mem = t) when its bytes take longer. */
wl__cost wl__gemm(const wl__hw *hw, bool lowp, double b, double m, double n, double k,
                  double out_bytes);
/* attention.c: the attention family of cluster.gpu. */
void wl__attn_init(wl__hw *hw, const cfg_scenario *cfg);
/* attention.c: the measured share of the 16-bit peak of a causal attention
 * pass at (seqlen, head dim), interpolated between the papers' points. */
double wl__attn_measured(const wl__hw *hw, double seq, double hd, bool bwd);
/* attention.c: the same for `seqs` sequences of `heads` heads on this GPU
 * (wave quantization against the benchmark's). */
double wl__attn_eff(const wl__hw *hw, double seqs, double seq, double heads, double hd, bool bwd);
/* An element-wise operation moving `bytes`: bytes / hbm, memory-bound (no
 * launch gap). */
wl__cost wl__eltwise(const wl__hw *hw, double bytes);
/* Bytes an FP8 GEMM's operand casts move for one tensor of `elems` elements
 * under the recipe (amax, cast, transposed copy, block scales), and the
 * kernels that move them. 0 unless hw->fp8. */
double wl__fp8_cast_bytes(const wl__hw *hw, double elems, double *kernels);
/* The cross-entropy over `logits` logits of the output layer (Megatron-LM's
 * unfused vocab-parallel kernels): forward cost *f in *kf kernels (the cast
 * to fp32, max, subtract, exp, sum, divide), backward *b in *kb (the scaled
 * softmax, the cast back to 16 bits); memory-bound, no launch gaps. */
void wl__cross_entropy(const wl__hw *hw, double logits, wl__cost *f, double *kf, wl__cost *b,
                       double *kb);
/* The optimizer step on `params` local parameters (weights, gradients and
 * optimizer states of w, g, o bytes each): the update reads and writes its
 * states, reads the gradients, writes the weights; the gradient norm for
 * clipping reads the gradients once more. */
wl__cost wl__optimizer(const wl__hw *hw, double params, double w, double g, double o);
/* kernels_moe.c: the MoE feed-forward's kernels as Megatron-Core runs them. */
/* Streams Transformer Engine's multi-stream grouped GEMM spreads the experts'
 * GEMMs over (transformer_engine/common/util/multi_stream.cpp). */
enum { WL__GEMM_STREAMS = 4 };
/* G local experts' GEMMs C[m x n] = A[m x k] B[k x n] (m tokens each):
 * one grouped kernel (hw->ggemm_streams false: gemm.c with b = G), or one
 * cuBLAS GEMM per expert round-robin over WL__GEMM_STREAMS streams: rounds
 * of WL__GEMM_STREAMS concurrent GEMMs (their tiles share the SMs: gemm.c
 * with b = the round's GEMMs), each round its own fixed time. *rounds gets
 * the launches a stream sees one after another (launch gaps), *ops the
 * GEMMs the host issues. */
wl__cost wl__expert_gemm(const wl__hw *hw, double G, double m, double n, double k, double out_bytes,
                         double *rounds, double *ops);
/* The forward of an MoE layer under a dropless dispatcher with a host
 * synchronization (hw->host_sync): the kernels from the wait to the next MoE
 * layer's (the experts' part f and the next layer's attention part a) run no
 * faster than the host issues them, after the wait itself: f plus
 * max(0, host_op x (a.ops + f.ops) - (a.t + f.t)) + the wait. f unchanged
 * otherwise. */
wl__cost wl__moe_host_bound(const wl__hw *hw, wl__cost a, wl__cost f);
/* Bytes the token permutations of one MoE layer's forward move (the same
 * again backward) for T tokens of h at `act` bytes, top k, the busiest
 * GPU's `load`; `sort`: expert parallelism with several local experts (the
 * received rows sorted by expert and back); *kernels their kernels. */
double wl__moe_permute_bytes(double T, double k, double h, double act, double load, bool sort,
                             double *kernels);
/* Bytes the fused router kernel moves for T tokens over E experts (either
 * way). */
double wl__moe_router_bytes(double T, double E, double act);
/* s: one host wait on the GPU (a stream synchronization and the small copy
 * back) */
double wl__host_wait_s(void);

/* Layer parts on one GPU for a micro-batch of `tokens` (MLP: attention is
 * empty and l's linear layer is the feed-forward). */
void wl__part_attention(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                        wl__part *out);
void wl__part_ffn(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                  uint32_t l, wl__part *out);
void wl__part_head(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                   wl__part *out);

/* Full recomputation reruns layer l of a chunk starting at layer `first`
 * (uniform: every layer; block: the chunk's first p->rc_layers). */
bool wl__layer_recomputed(const wl_parallel *p, uint32_t first, uint32_t l);
/* What recomputation adds to the backward of layer l (chunk from `first`)
 * for one micro-batch of `tokens`: *ra to its attention part, *rf to its
 * feed-forward part, given the parts' costs (full: their forwards;
 * selective: the forward of p->rc_modules' operations). recompute.c. */
void wl__recompute_cost(const wl__hw *hw, const wl_model *m, const wl_parallel *p, double tokens,
                        uint32_t first, uint32_t l, const wl__part *attn, const wl__part *ffn,
                        wl__cost *ra, wl__cost *rf);

typedef struct wl__dag {
  /* inputs (borrowed) */
  const wl_model *m;
  const wl_parallel *p;
  const cfg_scenario *cfg;
  const topo *t;
  wl__hw hw;                             /* what a GPU achieves (roofline.c) */
  double wbytes, gbytes, obytes, abytes; /* per parameter; per activation element */
  double rbytes;                         /* per gradient element a DP reduction carries */
  /* graph */
  wl__node *nodes;
  size_t n, cap;
  uint32_t *edge_to, *edge_next;
  size_t nedges, ecap;
  wl__class *cls;
  size_t ncls, clscap;
  uint32_t *head, *tail; /* [stage * WL__STREAMS + stream] */
  coll_moe_routing moe;  /* MoE router statistics, drawn at the first EP plan (tokens 0: not yet) */
} wl__dag;

/* One entry of a stage's schedule: a forward (F) or backward (B) of chunk
 * c, the deferred weight-gradient half of the oldest backward that deferred
 * it (W), or a forward of chunk c overlapped with a backward of chunk c2
 * (FB). A B with zb set defers its weight gradients to a later W. The
 * micro-batch is the next one of that chunk (each chunk runs its
 * micro-batches in order). */
enum { WL__OP_F, WL__OP_B, WL__OP_W, WL__OP_FB };
typedef struct wl__op {
  uint8_t kind, c, c2;
  bool zb;
} wl__op;

/* Stage s's schedule into out (NULL: count only); returns the entries.
 * At most 3 x vstages x micro_batches. O(that). */
size_t wl__schedule(const wl_parallel *p, uint32_t s, wl__op *out);

/* Bytes per gradient element of the data-parallel reductions under
 * workload.grad_reduce, for gradients of `gbytes` bytes (auto: gbytes). */
double wl__grad_reduce_bytes(const cfg_scenario *cfg, double gbytes);

/* Build the step's DAG from the inputs set in d (wl_step_run bounds its
 * size first). O(nodes). */
void wl__dag_build(wl__dag *d);
/* Before wl__dag_build: draw the MoE router statistics of the expert-parallel
 * groups (sampled routing, ep > 1) and set d->hw.expert_load from them. A
 * shape the router refuses is left to the dispatch plan, which says why. */
void wl__moe_draw(wl__dag *d);
void wl__dag_free(wl__dag *d);
/* Expand class c into its plan (all groups of its stage merged phase by
 * phase). */
int wl__class_plan(wl__dag *d, wl__class *c, sim_error *err);
/* Dense peak for the scenario's precision, FLOP/s (before efficiency):
 * cluster.gpu_flops, _fp8 or _fp32. */
double wl__peak_flops(const cfg_scenario *cfg);

#endif
