/* fabsim training workload: model, parallelism, per-GPU memory, and one
 * training step as a DAG of compute and communication run on a backend.
 *
 * Model (wl_model_from_cfg)
 *   A dense transformer (layers, hidden, heads, seq_len, vocab, feed-forward
 *   width, gated or not), a mixture of experts (the same plus routed and
 *   shared experts, top-k, leading dense layers), or a plain MLP given by its
 *   layer widths. Parameters are counted from the shape:
 *     attention (2 + 2 kv/a) h^2 per layer (Q, O; K, V kv/a as wide; no biases),
 *     feed-forward 2 h f (3 h f when gated) per dense layer,
 *     MoE layer: attention + router h E + (E + shared) x expert (2 or 3 h f_e),
 *     embedding v h and output layer h v (untied),
 *     MLP: sum over layers of in x out + out (weights and biases).
 *   When workload.model.params is set, every part is scaled by params/counted
 *   (the shape still gives activations and message sizes).
 *
 * Parallelism (wl_parallel_from_cfg)
 *   dp x tp x pp GPUs; ep divides dp (experts sharded over ep consecutive
 *   data-parallel ranks; expert gradients are reduced over the dp/ep ranks
 *   holding the same experts). Rank (d, s, t) -> GPU by workload.parallel.order,
 *   innermost first (tp-pp-dp: gpu = t + tp (s + pp d)).
 *
 * All functions are pure (no simulation state) except wl_step_run.
 */
#ifndef FABSIM_WORKLOAD_H
#define FABSIM_WORKLOAD_H

#include "fabsim/backend.h"
#include "fabsim/coll.h"
#include "fabsim/config.h"
#include "fabsim/fault.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { WL_MODEL_TRANSFORMER, WL_MODEL_MOE, WL_MODEL_MLP } wl_model_kind;

/* A model, derived from the scenario. Parameter figures are counts (already
 * scaled to workload.model.params when set). Read-only after derivation. */
typedef struct wl_model {
  wl_model_kind kind;
  double params;         /* total */
  double params_active;  /* used by one token (MoE: top_k routed + shared experts) */
  double embedding;      /* input embedding, vocab x hidden */
  double head;           /* output layer, hidden x vocab */
  double attention;      /* one layer's attention projections */
  double ffn;            /* one dense layer's feed-forward */
  double expert;         /* one expert's feed-forward */
  double router;         /* one MoE layer's router */
  double scale;          /* params / counted (1 when counted) */
  uint32_t layers;       /* transformer layers, or MLP linear layers */
  uint32_t dense_layers; /* leading layers with a dense feed-forward (all when dense) */
  uint32_t hidden, heads, seq_len, vocab, ffn_hidden, expert_hidden;
  uint32_t kv_heads; /* key/value heads (grouped-query attention; heads when not) */
  uint32_t head_dim; /* width of one head; 0: hidden / heads */
  uint32_t experts, top_k, shared_experts;
  bool gated;
  bool dropout;           /* dropout masks kept for the backward pass (memory only) */
  const uint64_t *widths; /* MLP: nwidths widths, owned by the scenario */
  uint32_t nwidths;
} wl_model;

/* Errors are SIM_ECONFIG located at the key to change (cfg_fail_at). */
int wl_model_from_cfg(wl_model *m, const cfg_scenario *cfg, const cfg_doc *doc, sim_error *err);
const char *wl_model_kind_name(wl_model_kind k);
/* Parameters of layer l (0-based): all of them, or those one token uses. */
double wl_layer_params(const wl_model *m, uint32_t l, bool active);
/* Routed-expert parameters of layer l (0 for dense layers). */
double wl_layer_expert_params(const wl_model *m, uint32_t l);
bool wl_layer_is_moe(const wl_model *m, uint32_t l);

typedef struct wl_parallel {
  uint32_t dp, tp, pp, ep, zero;
  bool sp; /* sequence parallel */
  cfg_rank_order order;
  cfg_recompute recompute;         /* granularity (Megatron-LM's --recompute-granularity) */
  uint32_t rc_modules;             /* selective: 1 << cfg_recompute_module of each module */
  cfg_recompute_method rc_method;  /* full: uniform or block */
  uint32_t rc_layers;              /* full: layers per group (uniform), per chunk (block) */
  bool flash;                      /* FlashAttention (else unfused: the scores are kept) */
  uint32_t first_layers;           /* layers of pipeline stage 0; 0: an even share */
  uint32_t last_layers;            /* layers of stage pp - 1; 0: an even share */
  cfg_schedule schedule;           /* pipeline schedule */
  uint32_t vstages;                /* model chunks per GPU: v (interleaved), 2 (dualpipe), else 1 */
  cfg_coll_algorithm dp_algorithm; /* data-parallel AllReduce (RS/AG: ring if not offered) */
  uint32_t micro_batch;            /* sequences per micro-batch */
  uint32_t micro_batches;          /* m: micro-batches per replica per step */
  uint64_t global_batch;           /* sequences per step */
  const uint32_t *gpu_map;         /* the job's i-th GPU is the cluster's gpu_map[i] (a job
                                      of a jobs: list, wl_job_create_on); NULL: GPU i is i */
} wl_parallel;

/* Resolves dp (0: gpus / (tp pp)) and the micro-batch count; checks the
 * combination against the model and `gpus`. */
int wl_parallel_from_cfg(wl_parallel *p, const wl_model *m, const cfg_scenario *cfg,
                         const cfg_doc *doc, uint32_t gpus, sim_error *err);
/* GPU of rank (data-parallel index d, stage s, tensor rank t): the cluster's
 * index (through p->gpu_map when set). */
uint32_t wl_rank_gpu(const wl_parallel *p, uint32_t d, uint32_t s, uint32_t t);
/* Transformer layers of GPU stage s over all its chunks. */
uint32_t wl_stage_layer_count(const wl_model *m, const wl_parallel *p, uint32_t s);

/* The model chunks GPU stage s holds (p->vstages of them, c = 0..): a
 * virtual stage of the schedule's pipelines, its layers [first, first +
 * count), whether it holds the input embedding (layer 0) and the output
 * layer (the last virtual stage of its pipeline).
 *   1f1b:        one chunk, stage s of pp.
 *   interleaved: chunk c is virtual stage c pp + s of v pp.
 *   dualpipe:    chunk 0 is stage s of the forward direction, chunk 1 stage
 *                pp - 1 - s of the reverse one: two copies of the parameters,
 *                each GPU holds the layers of stages s and pp - 1 - s.
 * The split (Megatron-LM's): stage 0 holds p->first_layers and stage pp - 1
 * p->last_layers when given, each split over its v chunks as evenly as
 * possible with the lighter chunks at the ends of the model (the
 * embedding's chunk first, the output layer's last); every other virtual
 * stage, in order, gets floor((i + 1) R / n) - floor(i R / n) of the R
 * layers left over the n of them. Neither given: floor split of all layers
 * over the v pp virtual stages. O(1). */
typedef struct wl_chunk {
  uint32_t first, count;
  bool embedding, head;
} wl_chunk;
void wl_stage_chunk(const wl_model *m, const wl_parallel *p, uint32_t s, uint32_t c, wl_chunk *out);

/* ---- memory --------------------------------------------------------------- */

/* Bytes per GPU on one pipeline stage. Doubles: exact for the closed forms
 * the tests check; rounded only for display. */
typedef struct wl_memory {
  uint32_t stage;        /* the stage reported (the one needing most memory) */
  double params_per_gpu; /* parameters held (before ZeRO sharding) */
  double weights, gradients, optimizer, activations, total;
  double activations_by_recompute[3]; /* indexed by cfg_recompute */
  /* how the activations add up (under p->recompute): held x per layer summed
   * over the chunks, plus the logits and the recomputation's working set */
  uint32_t layers;        /* transformer layers on the GPU (all chunks) */
  double layers_held;     /* layer-micro-batches in flight at the schedule's peak */
  double layer_bytes;     /* the largest one layer keeps for one micro-batch */
  double logits;          /* fp32 logits of the output layer (its stage only) */
  double recompute_bytes; /* full: one group's activations while it is recomputed */
  double gpu_memory;
  bool fits;
} wl_memory;

/* Bytes per parameter of each state for a precision and optimizer:
 * weights and gradients 4 (fp32) or 2 (bf16, fp16, fp8: 16-bit copies);
 * Adam: fp32 momentum and variance (8) + fp32 master weights unless the
 * weights are fp32 (4); SGD: momentum (4) + master (4 unless fp32). */
void wl_bytes_per_param(cfg_precision prec, cfg_optimizer opt, double *weights, double *gradients,
                        double *optimizer);
/* Activation bytes one micro-batch leaves on one GPU for layer l, under a
 * recompute granularity (Korthikanti et al. 2022 sec. 4, with the attention
 * kernel, the feed-forward width, MoE experts, fp8 storage and the
 * selective modules; see memory.c). Full: the layer's input. */
double wl_layer_activations(const wl_model *m, const wl_parallel *p, cfg_precision prec, uint32_t l,
                            cfg_recompute rc);
/* Per-GPU memory on stage s. */
void wl_memory_stage(wl_memory *out, const wl_model *m, const wl_parallel *p,
                     const cfg_scenario *cfg, uint32_t s);
/* The stage needing the most memory. O(layers). */
void wl_memory_compute(wl_memory *out, const wl_model *m, const wl_parallel *p,
                       const cfg_scenario *cfg);
/* SIM_ECONFIG, located at the key that makes it so, when a figure of `mem`
 * (parameters or bytes of any term, any recompute mode) cannot be
 * represented: at or above 2^63, or not finite. Doubles would carry such
 * a figure, but no integer output can. */
int wl_memory_check(const wl_memory *mem, const wl_model *m, const cfg_scenario *cfg,
                    const cfg_doc *doc, sim_error *err);
/* The smallest parallelism on the same dp x tp x pp GPUs that fits: fewest
 * model-parallel GPUs (tp x pp), then the cheapest ZeRO stage and
 * recomputation, then fewer stages. tp: powers of two within a node that
 * divide the heads; pp: at most one stage per layer; dp x tp x pp and the
 * global batch stay. Returns true and fills *best and *mem when one fits.
 * O(log gpus_per_node x divisors of the GPUs x 12 x layers). */
bool wl_memory_search(wl_parallel *best, wl_memory *mem, const wl_model *m, const wl_parallel *p,
                      const cfg_scenario *cfg);

/* ---- one training step ----------------------------------------------------- */

typedef enum {
  WL_COMM_TP_ALLREDUCE,
  WL_COMM_EP_DISPATCH, /* MoE token dispatch (coll_moe_build, node-limited) */
  WL_COMM_EP_COMBINE,
  WL_COMM_PP_SEND,
  WL_COMM_DP_ALLREDUCE,
  WL_COMM_DP_REDUCESCATTER,
  WL_COMM_DP_ALLGATHER,
  WL_COMM_EDP_ALLREDUCE, /* expert gradients over the dp/ep ranks holding the same experts */
  WL_COMM_EDP_REDUCESCATTER,
  WL_COMM_EDP_ALLGATHER,
  WL_COMM_KINDS
} wl_comm_kind;

const char *wl_comm_kind_name(wl_comm_kind k); /* "tp_allreduce", ... */

typedef struct wl_comm_total {
  uint64_t count; /* instances on the representative DAG (all stages) */
  uint64_t bytes; /* sum of S per instance, as nccl-tests counts S */
  double time_s;  /* sum of instance durations */
  uint32_t group; /* ranks per group */
} wl_comm_total;

typedef struct wl_stage_time {
  double compute_s, forward_s, backward_s, optimizer_s;
  double recompute_s; /* of backward_s: forwards recomputed (selective modules, full) */
  double exposed_comm_s, bubble_s;
  uint32_t layers;      /* transformer layers (all chunks) */
  bool embedding, head; /* holds the input embedding / the output layer */
} wl_stage_time;

/* Step figures. Each stage's wall time splits into compute (its compute
 * stream busy), exposed communication (idle while a collective of the stage
 * or a pipeline transfer into or out of it is in flight) and bubble (idle,
 * nothing in flight); per stage compute + exposed + bubble = time exactly.
 * The top-level figures are means over stages. */
typedef struct wl_step {
  double time_s, compute_s, forward_s, backward_s, optimizer_s;
  double exposed_comm_s, bubble_s, mfu, tokens_per_s;
  double gpu_idle_frac;        /* of all the job's GPU-time: not computing (a GPU done early
                                  waiting for its stage's slowed GPU is idle) */
  double bubble_frac;          /* bubble_s / time_s */
  double bubble_frac_1f1b;     /* (p-1)/(m+p-1), the 1F1B closed form */
  double bubble_frac_schedule; /* the schedule's closed form: 1F1B's; interleaved
                                  (p-1)/(v m + p - 1); dualpipe (p/2-1)(F&B + B - 3W)
                                  over the step, with F&B = F + B (nothing hidden), F and
                                  B a chunk's mean forward and backward, W = F */
  double memory_bound_s;       /* mean over stages: compute time, at full speed, of operations
                                  bound by HBM bandwidth (their bytes take longer than their
                                  FLOPs: element-wise, optimizer, small GEMMs) */
  double memory_bound_frac;    /* of all compute time at full speed */
  double comm_sm_lost_s;       /* mean over stages: of compute_s, the time communication
                                  kernels' SMs took (compute slowed to (SMs - held) / SMs
                                  while they ran) */
  double model_flops;          /* 6 x active params x tokens per step */
  double tokens;               /* per step */
  uint32_t gpus;               /* dp x tp x pp */
  cfg_comm_model comm_model;   /* in effect: live, reuse or symmetric */
  uint64_t nodes, comm_nodes, classes;
  uint64_t transfers_estimate; /* a live step would submit (repetitions not counted) */
  uint64_t transfers_measured; /* reuse, symmetric: submitted to measure */
  wl_comm_total comm[WL_COMM_KINDS];
  wl_stage_time *stages; /* pp entries, owned */
  uint32_t nstages;
  double start_s; /* simulated time the step started (wl_job: steps one after another) */
  simtime_ps start_ps, end_ps; /* the same and its end, exact */
  wl_model model;              /* as derived for the step (MLP widths borrowed from the scenario) */
  wl_parallel parallel;
} wl_step;

/* Simulate one step on `b` (its sim must be idle). Validation errors, a
 * step too large to build (over 20 M DAG nodes) and collectives the
 * placement cannot build are SIM_ECONFIG located at the key to change.
 * Free with wl_step_free. */
int wl_step_run(wl_step *out, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                be_backend *b, sim_error *err);
void wl_step_free(wl_step *s);

/* ---- a training job: steps one after another, GPU faults ------------------- */

/* The job runs workload.steps (or `steps`) copies of the step DAG back to
 * back on one backend: step k + 1 starts when every node of step k is done
 * (the optimizer and, under ZeRO 1-2, the weight AllGather included).
 *
 * GPU faults act on the representative of the GPU's pipeline stage (the
 * symmetry of wl_step_run): a synchronous job waits for its slowest member,
 * so the stage computes at the speed of its slowest GPU, from the fault's
 * time on (a computation in progress finishes its remaining work at the new
 * speed); the stage's other GPUs then wait for it in their next collective.
 * A GPU or node failure stops the job at once (transfers in flight are
 * abandoned; the job must outlive the backend's callbacks: free it after
 * be_destroy or never run the simulation again). So does a transfer of one
 * of its collectives that the backend reports failed (be_failure: no route,
 * retry limit): a collective that lost data has not reduced the gradients,
 * so a real job errors out there (NCCL aborts the communicator); the job
 * records it as a WL_TRANSFER_FAIL event and stops at its time. The job
 * takes be->on_failure when it starts (wl_job_run_until's first call) and
 * hands every failure on to the listener that held it before (e.g. the
 * fault scheduler's log); nothing may replace it after. Silent data corruption is
 * recorded, and leaves the GPU at the next gradient reduction of its stage
 * (data-parallel AllReduce or ReduceScatter): from there the replicas
 * differ. */
#define WL_NO_STAGE UINT32_MAX

typedef enum {
  WL_GPU_SLOWDOWN, /* a gpu-slowdown fault */
  WL_GPU_THERMAL,  /* a rack over its cooling capacity (src/power) */
  WL_GPU_FAIL,
  WL_NODE_FAIL,
  WL_GPU_SDC,
  WL_TRANSFER_FAIL /* a transfer of the job's collectives failed (be_failure): gpu -> dst_gpu */
} wl_gpu_event_kind;

typedef struct wl_gpu_event {
  wl_gpu_event_kind kind;
  simtime_ps at;
  uint32_t gpu;
  uint32_t stage; /* WL_NO_STAGE: the GPU is not in the job */
  uint32_t step;  /* 0-based step running at `at` (= steps done) */
  double factor;  /* slowdown, thermal: speed left, (0, 1] */
  bool diverged;  /* sdc: reached a gradient reduction within the simulated steps */
  uint32_t diverge_step;
  simtime_ps diverge_at;
  uint32_t dst_gpu;  /* transfer-fail: the receiving GPU */
  const char *cause; /* transfer-fail: be_failure.cause (static) */
} wl_gpu_event;

typedef struct wl_job wl_job;

/* The horizon of simulated time a job stays below: 2^62 ps (53.4 days).
 * Twice it still fits a simtime_ps, so the sum of two times under it never
 * wraps. A job that would pass it is refused before it runs where its
 * input shows it (cli: workload.steps, a gpu-slowdown's factor); one that
 * still reaches it (a stage slowed further at run time) stops with
 * SIM_ERANGE from wl_job_run_until, never with a wrapped time. */
#define WL_HORIZON_PS ((simtime_ps)1 << 62)

/* SIM_ECONFIG when n repetitions (`unit`: "steps", "iterations") of at
 * least each_ps of `what` ("compute") would pass WL_HORIZON_PS, at
 * workload.steps, or when a gpu-slowdown of cfg's faults would stretch the
 * rest past it, at faults[i].factor. Lower bounds: what is refused would
 * certainly pass. */
int wl_check_horizon(const cfg_scenario *cfg, const cfg_doc *doc, double each_ps, uint32_t n,
                     const char *unit, const char *what, sim_error *err);

/* Model, parallelism, DAG and (live) plans; errors as wl_step_run. */
int wl_job_create(wl_job **j, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                  be_backend *b, uint32_t steps, sim_error *err);
/* The same on `ngpus` GPUs of the cluster (a job of a jobs: list): the job's
 * i-th GPU is gpus[i] (copied), so its ranks are laid out over them as
 * wl_rank_gpu orders them, in place of GPUs 0 .. ngpus - 1. The GPUs are
 * whole nodes in node order (a node's GPUs consecutive), which is what the
 * node checks of its collectives assume. */
int wl_job_create_on(wl_job **j, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                     be_backend *b, uint32_t steps, const uint32_t *gpus, uint32_t ngpus,
                     sim_error *err);
/* Under the reuse and symmetric comm models: time the job's collectives now
 * on backend `b` (a fresh one of the same fabric, whose simulation this
 * runs) instead of on the job's own at its start, so the job can start from
 * an event (wl_job_start) on a backend others share. Plan errors as
 * wl_job_run_until's; SIM_EINTR when an interrupt (Ctrl-C) stopped the
 * timing (ev_run_interruptible), the job not measured. A no-op under live,
 * once measured, or once started. */
int wl_job_measure(wl_job *j, be_backend *b, const cfg_doc *doc, sim_error *err);
/* Who times a collective of a job that times its collectives (reuse,
 * symmetric): when a collective node of class `cls` starts, start() is
 * called instead of a timer of the class's measured time, and the timer's
 * owner ends it later with wl_job_coll_end(job, node) (from an event
 * handler of the job's simulation). Several jobs on one fabric use it to
 * stretch a collective while other jobs' collectives share its links
 * (src/run/contention.c). */
typedef struct wl_coll_timer {
  void *ctx;
  void (*start)(void *ctx, uint32_t cls, uint32_t node, simtime_ps alone_ps);
} wl_coll_timer;
/* Set (NULL: clear) before the job starts. */
void wl_job_set_coll_timer(wl_job *j, const wl_coll_timer *t);
/* A collective started through the timer is done now. */
void wl_job_coll_end(wl_job *j, uint32_t node);
/* The job's distinct collectives (classes): how many, each one's measured
 * time (reuse, symmetric: once measured; else 0), and its plan over the
 * cluster's GPUs, built on demand (the job keeps it; _free releases it
 * unless the live executor runs it). */
uint32_t wl_job_classes(const wl_job *j);
/* The comm model in effect (auto resolved at create: live, reuse, symmetric). */
cfg_comm_model wl_job_comm_model(const wl_job *j);
simtime_ps wl_job_class_measured(const wl_job *j, uint32_t cls);
int wl_job_class_plan(wl_job *j, uint32_t cls, const coll_plan **out, sim_error *err);
void wl_job_class_plan_free(wl_job *j, uint32_t cls);
/* Start the job now without running the simulation: from an event handler,
 * when the job runs beside others on one backend (the caller then runs the
 * simulation, wl_job_run_until each job or ev_run). Under live, or once
 * measured (wl_job_measure): the comm models that time collectives do it by
 * running a simulation, which an event handler may not; SIM_EINVAL
 * otherwise. Starting twice is a no-op. */
int wl_job_start(wl_job *j, sim_error *err);
/* The hooks for the fault scheduler (ctx is the job). The same fault
 * (kind, GPU, time, factor) delivered twice counts once. */
flt_gpu_hooks wl_job_hooks(wl_job *j);
/* GPU `gpu` runs at `factor` of its speed from `now` on (thermal: logged as
 * a thermal throttle). A GPU keeps one fault factor (the latest slowdown
 * fault; 1 ends it) and one thermal factor, and runs at the lower. Call
 * before wl_job_run for a throttle from the start. */
void wl_job_slowdown(wl_job *j, simtime_ps now, uint32_t gpu, double factor, bool thermal);
/* fn(ctx, step (0-based), start, end) as each step ends, before the next
 * starts (e.g. to read the backend's counters per step). */
void wl_job_on_step(wl_job *j,
                    void (*fn)(void *ctx, uint32_t step, simtime_ps start, simtime_ps end),
                    void *ctx);
/* From an on_step callback: the next step does not start until
 * wl_job_release (a synchronous checkpoint: the job waits for its write).
 * Release without a hold, or after the last step, is a no-op. The job must
 * be released from an event handler of its simulation (something must stay
 * pending meanwhile, or wl_job_run_until reports a stall). */
void wl_job_hold(wl_job *j);
void wl_job_release(wl_job *j);
/* Run until every step is done or the job stops on a failure; returns with
 * later events (e.g. faults past the end) still pending. */
int wl_job_run(wl_job *j, const cfg_doc *doc, sim_error *err);
/* The same in slices: start the job on the first call, then run events up
 * to `until` (or the job's end). Slicing never changes results. The first
 * call times the collectives (reuse, symmetric) unless measured: SIM_EINTR
 * when an interrupt stopped that, the job not started. */
int wl_job_run_until(wl_job *j, simtime_ps until, const cfg_doc *doc, sim_error *err);
/* The compute one step of the job needs at full speed on its busiest
 * stage: a lower bound on a step's length. O(DAG nodes). */
simtime_ps wl_job_step_compute_ps(const wl_job *j);
/* Not started yet, or steps left and not failed. */
bool wl_job_active(const wl_job *j);
uint32_t wl_job_steps_done(const wl_job *j);
const wl_step *wl_job_step(const wl_job *j, uint32_t k); /* k < steps done */
const wl_gpu_event *wl_job_events(const wl_job *j, size_t *n);
/* True when a failure (GPU, node, or a transfer of its collectives) stopped
 * the job: its time and the start of the step it broke. The failure is the
 * last WL_GPU_FAIL, WL_NODE_FAIL or WL_TRANSFER_FAIL event. */
bool wl_job_stopped(const wl_job *j, simtime_ps *at, simtime_ps *step_start);
uint32_t wl_job_gpu_stage(const wl_job *j, uint32_t gpu);
const wl_parallel *wl_job_parallel(const wl_job *j);

/* What the job's GPUs did over time, for the telemetry series: per bin of
 * bin_ps picoseconds from time 0 and per pipeline stage, the time spent in
 * compute, exposed communication and bubble (t[(bin * nstages + stage) *
 * WL_GPU_STATES + state], states in that order; the rest of a bin is idle).
 * Under the symmetry assumption every GPU of a stage (gpus_per_stage of
 * them) does the same. Memory is bounded: the bins start at 1 ns and double
 * in width whenever the job outgrows WL_GPU_BINS of them, so a run longer
 * than 4 us fills between half of them and all (a 10 s run: bins of about
 * 4 ms). Valid until wl_job_free. */
enum { WL_GPU_BINS = 4096, WL_GPU_STATES = 3 };
typedef struct wl_gpu_timeline {
  simtime_ps bin_ps;
  uint32_t nbins, nstages, gpus_per_stage;
  const simtime_ps *t;
  /* A stage computes at the speed of its slowest GPU (the symmetry above);
   * its other GPUs finish their share early and wait for it. wait[bin *
   * nstages + stage]: of the bin's compute time, what a full-speed GPU of
   * the stage spent waiting, (1 - speed) of it; slow_gpus[stage]: its GPUs
   * slowed at some time (they compute throughout), the others wait. */
  const simtime_ps *wait;
  const uint32_t *slow_gpus;
} wl_gpu_timeline;
void wl_job_gpu_timeline(const wl_job *j, wl_gpu_timeline *out);
void wl_job_free(wl_job *j);

#ifdef __cplusplus
}
#endif
/* What one GPU achieves at the scenario's precision: a large GEMM's FLOP/s
 * (peak x workload.compute_efficiency) and HBM bytes/s (x
 * cluster.hbm_efficiency), as the training step's roofline uses them
 * (src/workload/roofline.c). */
void wl_achievable(const cfg_scenario *cfg, double *flops, double *hbm_bytes_per_s);

#endif
