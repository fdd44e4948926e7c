/* Per-GPU training memory: weights, gradients, optimizer states (ZeRO
 * sharding), activations (with and without recomputation), and the search
 * for the smallest parallelism that fits.
 *
 * States (MODEL-INPUTS.md, "Training memory and compute"): mixed-precision
 * Adam keeps 2 + 2 + 12 = 16 bytes per parameter; with data-parallel degree
 * Nd, ZeRO stage 1 shards the 12, stage 2 also the gradients, stage 3 also
 * the weights: 4P + 12P/Nd, 2P + 14P/Nd, 16P/Nd. Expert parameters are
 * sharded over the dp/ep ranks that hold the same experts.
 *
 * Activations of one transformer layer and micro-batch on one GPU: the
 * tensors the backward pass needs, as Korthikanti et al., "Reducing
 * Activation Recomputation in Large Transformer Models" (arXiv 2205.05198,
 * sec. 4.1) list them, per token (s b tokens, e bytes per element: 2, fp32
 * 4; q = 1 under fp8 for a tensor kept only as a GEMM's input, as FP8
 * training caches it: DeepSeek-V3 sec. 3.3.3, Transformer Engine; else e):
 *   attention: norm input e h, its output (the QKV input) q h, Q K V
 *     e h (1 + 2 kv/a) (kv key/value heads: grouped-query attention),
 *     the output O (input of the projection) e h (q h when only the
 *     projection keeps it: unfused, or core_attn recomputed), and the
 *     scores: unfused e a s (softmax output) + a s + e a s with dropout
 *     (mask, dropped output); FlashAttention keeps none of them, only the
 *     fp32 logsumexp per head, 4 a (Dao, FlashAttention-2, sec. 3.1);
 *     dropout mask of the output h (1 byte).
 *   dense feed-forward (width f, g = 2 when gated): norm input e h, its
 *     output q h, the up output g e f, the activation output q f, dropout
 *     mask h.
 *   MoE feed-forward: norm input e h, its output e h (router input,
 *     dispatch source), fp32 router scores 4 E, and per token k routed
 *     copies: the dispatched token q h, the expert's up output g e f_e and
 *     its activation output q f_e (the routing weight applied there, as
 *     Megatron-LM's grouped MLP does, so no expert output is kept); shared
 *     experts as a dense feed-forward of width shared x f_e.
 * Tensor parallelism t splits the head- and feed-forward-wide tensors;
 * the h-wide ones (norms, the tokens around the experts, masks) only with
 * sequence parallelism. With e = q = 2, unfused attention, dropout and f =
 * 4h this is Korthikanti's Table 2: s b h (10 + 24/t + 5 a s/(h t)), and
 * s b h (34 + 5 a s/h)/t with sequence parallelism.
 * Recomputation (Megatron-LM's names): selective drops what its modules
 * regenerate (core_attn: the scores or the logsumexp; layernorm: the norms'
 * outputs; mlp: a dense feed-forward keeps only its input; moe_act: the
 * experts' activation outputs); op, torchtitan's selective op policy
 * (pytorch/torchtitan torchtitan/parallelisms/parallelize_llama.py at
 * 1ea476e9f: the outputs of SDPA and of every odd-numbered aten.mm are
 * saved), keeps the layer's input e h, Q's and V's projections e h (1 +
 * kv/a), the core's output e h and logsumexp 4 a, the gate's output e f and
 * (gated) the down projection's e h; a MoE layer's feed-forward keeps its
 * usual tensors less the norm's output; full keeps each checkpointed group's input,
 * e s b h (/t under sequence parallelism): uniform, groups of N layers of
 * a chunk; block, the first N layers of each chunk, the others keep
 * everything. The micro-batch whose backward runs holds, while group g is
 * recomputed, the checkpoints up to g and g's activations (its later
 * layers already freed): the excess over what it kept counts once. The last stage also holds the
 * fp32 logits, 4 s b v / t. Stage s holds, per chunk, the micro-batches in flight at the schedule's
 * peak (held_at_peak): under 1F1B min(pp - s, m), so stage 0 holds the whole model's layers for one
 * micro-batch (Narayanan et al. 2021).
 *
 * MLP: each linear layer keeps its input and pre-activation output, (in +
 * out) x b x bytes; full recomputation keeps the input only.
 *
 * Not counted: framework workspace, communication buckets, fragmentation;
 * MLA's compressed attention (fabsim describes attention as 4 h^2
 * projections); experts'
 * tokens above the mean on a hot GPU.
 */
#include <math.h>

#include "workload/wl_internal.h"

void wl_bytes_per_param(cfg_precision prec, cfg_optimizer opt, double *weights, double *gradients,
                        double *optimizer) {
  bool fp32 = prec == CFG_PRECISION_FP32;
  double master = fp32 ? 0 : 4;
  *weights = fp32 ? 4 : 2;
  *gradients = fp32 ? 4 : 2;
  *optimizer = master + (opt == CFG_OPTIMIZER_ADAM ? 8 : 4);
}

static bool module_on(const wl_parallel *p, cfg_recompute rc, cfg_recompute_module k) {
  return rc == CFG_RECOMPUTE_SELECTIVE && (p->rc_modules >> k & 1u);
}

double wl_layer_activations(const wl_model *m, const wl_parallel *p, cfg_precision prec, uint32_t l,
                            cfg_recompute rc) {
  double e = prec == CFG_PRECISION_FP32 ? 4 : 2, q = prec == CFG_PRECISION_FP8 ? 1 : e;
  double b = p->micro_batch;
  if (m->kind == WL_MODEL_MLP) {
    double in = (double)m->widths[l], out = (double)m->widths[l + 1];
    return (rc == CFG_RECOMPUTE_FULL ? in : in + out) * b * e;
  }
  double s = m->seq_len, h = m->hidden, a = m->heads, t = p->tp, sp = p->sp ? t : 1;
  double T = s * b, drop = m->dropout ? 1 : 0, g = m->gated ? 2 : 1;
  if (rc == CFG_RECOMPUTE_FULL) return e * T * h / sp;
  bool ln = module_on(p, rc, CFG_RCMOD_LAYERNORM), core = module_on(p, rc, CFG_RCMOD_CORE_ATTN);
  double seq = 0, wide = 0; /* per token: h-wide (split with sequence parallelism), split by t */
  /* the query width: heads x head_dim (h unless workload.model.head_dim) */
  double qw = m->head_dim ? (double)m->heads * m->head_dim : h;
  if (module_on(p, rc, CFG_RCMOD_OP)) {
    /* torchtitan's op policy: the layer's input, the Q and V projections'
     * outputs, the attention core's output and statistics */
    seq += e * h;
    wide += e * qw * (2 + (double)m->kv_heads / m->heads);
    wide += p->flash ? 4 * a : e * a * s + drop * (a * s + e * a * s);
    if (!wl_layer_is_moe(m, l)) /* the gate (or up) output; the down one's when gated */
      return T * ((seq + (m->gated ? e * h : 0)) / sp + (wide + e * m->ffn_hidden) / t);
    ln = true; /* a MoE feed-forward keeps what it keeps, less its norm's output */
  } else {
    /* attention */
    seq += e * h + (ln ? 0 : q * h) + drop * h;
    wide += e * qw * (1 + 2.0 * m->kv_heads / m->heads); /* Q, K, V */
    if (!core) wide += p->flash ? 4 * a : e * a * s + drop * (a * s + e * a * s);
    wide += (p->flash && !core ? e : q) * qw;
  }
  /* feed-forward */
  seq += e * h + drop * h;
  if (!wl_layer_is_moe(m, l)) {
    double f = m->ffn_hidden;
    if (module_on(p, rc, CFG_RCMOD_MLP)) {
      seq += e * h; /* the checkpointed input */
    } else {
      seq += ln ? 0 : q * h;
      wide += g * e * f + q * f;
    }
  } else {
    double k = m->top_k, fe = m->expert_hidden, act = module_on(p, rc, CFG_RCMOD_MOE_ACT) ? 0 : q;
    seq += (ln ? 0 : e * h) + 4.0 * m->experts + k * q * h;
    wide += (k + m->shared_experts) * fe * (g * e + act);
  }
  return T * (seq / sp + wide / t);
}

/* One micro-batch of a chunk's layers [first, first + n): the bytes it
 * keeps, and (*work) what its own backward adds above that under full
 * recomputation: the backward reaches a checkpointed group after freeing
 * everything later, so while group g is recomputed the micro-batch holds
 * the checkpoints up to g and g's whole activations; *work is the largest
 * excess of that over what it kept (0 when the freed layers cover it). */
static double chunk_activations(const wl_model *m, const wl_parallel *p, cfg_precision prec,
                                uint32_t first, uint32_t n, cfg_recompute rc, double *work) {
  double kept = 0, peak = 0, inputs = 0;
  *work = 0;
  if (rc != CFG_RECOMPUTE_FULL) {
    for (uint32_t l = first; l < first + n; l++) kept += wl_layer_activations(m, p, prec, l, rc);
    return kept;
  }
  bool block = p->rc_method == CFG_RECOMPUTE_BLOCK;
  uint32_t group = block ? 1 : p->rc_layers ? p->rc_layers : 1;
  for (uint32_t i = 0; i < n; i += group) {
    uint32_t end = i + group < n ? i + group : n;
    double all = 0;
    for (uint32_t l = first + i; l < first + end; l++)
      all += wl_layer_activations(m, p, prec, l, CFG_RECOMPUTE_NONE);
    if (block && i >= p->rc_layers) { /* not checkpointed: keeps everything */
      kept += all;
      continue;
    }
    inputs += wl_layer_activations(m, p, prec, first + i, CFG_RECOMPUTE_FULL);
    if (inputs + all > peak) peak = inputs + all;
  }
  kept += inputs;
  *work = peak > kept ? peak - kept : 0;
  return kept;
}

/* Chunk-forwards held at the schedule's peak on stage s, per chunk
 * (held[c]): a forward adds one, a backward frees it (a backward that
 * defers its weight gradients keeps it until its W). 1f1b: min(pp - s, m)
 * of its one chunk (the closed form); interleaved: the warm-up forwards
 * plus one, 2 (pp - s - 1) + (v - 1) pp + 1 over the chunks in their order
 * (Narayanan et al. 2021: the first stage holds 1 + (pp - 1)/(pp v) times
 * 1F1B's); dualpipe: DeepSeek-V3 Table 2 gives pp + 1 chunks. O(ops). */
static void held_at_peak(const wl_parallel *p, uint32_t s, double *held) {
  uint32_t v = p->vstages;
  for (uint32_t c = 0; c < v; c++) held[c] = 0;
  if (p->schedule == CFG_SCHED_1F1B) {
    held[0] = p->pp - s < p->micro_batches ? p->pp - s : p->micro_batches;
    return;
  }
  size_t n = wl__schedule(p, s, NULL), wh = 0, wt = 0;
  wl__op *ops = sim_malloc((n ? n : 1) * sizeof *ops);
  uint8_t *wq = sim_malloc(n ? n : 1);
  double *now = sim_calloc(v, sizeof *now), total = 0, best = -1;
  wl__schedule(p, s, ops);
  for (size_t k = 0; k < n; k++) {
    const wl__op *o = &ops[k];
    if (o->kind == WL__OP_F || o->kind == WL__OP_FB) now[o->c]++, total++;
    if (total > best) { /* the peak: just after a forward, before a backward frees */
      best = total;
      for (uint32_t c = 0; c < v; c++) held[c] = now[c];
    }
    uint8_t bc = o->kind == WL__OP_FB ? o->c2 : o->c;
    if (o->kind == WL__OP_B && o->zb) {
      wq[wt++] = bc;
    } else if (o->kind == WL__OP_B || o->kind == WL__OP_FB) {
      now[bc]--, total--;
    } else if (o->kind == WL__OP_W) {
      now[wq[wh++]]--, total--;
    }
  }
  sim_free(now);
  sim_free(wq);
  sim_free(ops);
}

void wl_memory_stage(wl_memory *out, const wl_model *m, const wl_parallel *p,
                     const cfg_scenario *cfg, uint32_t s) {
  double dense = 0, expert = 0, t = p->tp;
  double act[3] = {0, 0, 0}, work[3] = {0, 0, 0}, held_layers = 0, widest = 0;
  cfg_precision prec = cfg->workload.precision;
  uint32_t layers = 0;
  bool head = false;
  double *held = sim_malloc(p->vstages * sizeof *held);
  held_at_peak(p, s, held);
  for (uint32_t c = 0; c < p->vstages; c++) {
    wl_chunk k;
    wl_stage_chunk(m, p, s, c, &k);
    for (uint32_t l = k.first; l < k.first + k.count; l++) {
      double all = wl_layer_params(m, l, false), e = wl_layer_expert_params(m, l);
      dense += (all - e) / t;
      expert += e / (t * p->ep);
      double one = wl_layer_activations(m, p, prec, l, p->recompute);
      if (one > widest) widest = one;
    }
    for (int r = 0; r < 3; r++) {
      double w;
      act[r] += held[c] * chunk_activations(m, p, prec, k.first, k.count, (cfg_recompute)r, &w);
      if (w > work[r]) work[r] = w;
    }
    held_layers += held[c] * k.count;
    layers += k.count;
    if (k.embedding) dense += m->embedding / t;
    if (k.head) dense += m->head / t;
    head = head || k.head;
  }
  sim_free(held);
  act[CFG_RECOMPUTE_FULL] += work[CFG_RECOMPUTE_FULL];   /* the group being recomputed */
  if (act[CFG_RECOMPUTE_FULL] > act[CFG_RECOMPUTE_NONE]) /* tiny models: never worse than none */
    act[CFG_RECOMPUTE_FULL] = act[CFG_RECOMPUTE_NONE];
  double logits = head && m->vocab > 0 && m->kind != WL_MODEL_MLP
                      ? 4.0 * m->seq_len * p->micro_batch * m->vocab / t
                      : 0;
  for (int r = 0; r < 3; r++) act[r] += logits;
  double w, g, o;
  wl_bytes_per_param(prec, cfg->workload.optimizer, &w, &g, &o);
  double nd = p->dp, ne = (double)p->dp / p->ep;
  uint32_t z = p->zero;
  out->stage = s;
  out->params_per_gpu = dense + expert;
  out->weights = w * (dense / (z >= 3 ? nd : 1) + expert / (z >= 3 ? ne : 1));
  out->gradients = g * (dense / (z >= 2 ? nd : 1) + expert / (z >= 2 ? ne : 1));
  out->optimizer = o * (dense / (z >= 1 ? nd : 1) + expert / (z >= 1 ? ne : 1));
  for (int r = 0; r < 3; r++) out->activations_by_recompute[r] = act[r];
  out->activations = act[p->recompute];
  out->layers = layers;
  out->layers_held = held_layers;
  out->layer_bytes = widest;
  out->logits = logits;
  out->recompute_bytes = p->recompute == CFG_RECOMPUTE_FULL ? work[CFG_RECOMPUTE_FULL] : 0;
  out->total = out->weights + out->gradients + out->optimizer + out->activations;
  out->gpu_memory = (double)cfg->cluster.gpu_memory;
  out->fits = out->total <= out->gpu_memory;
}

void wl_memory_compute(wl_memory *out, const wl_model *m, const wl_parallel *p,
                       const cfg_scenario *cfg) {
  wl_memory_stage(out, m, p, cfg, 0);
  for (uint32_t s = 1; s < p->pp; s++) {
    wl_memory mem;
    wl_memory_stage(&mem, m, p, cfg, s);
    if (mem.total > out->total) *out = mem;
  }
}

/* 2^63: the first figure no signed 64-bit integer (summary.json, the
 * terminal's byte counts) represents. */
#define REPRESENTABLE 9223372036854775808.0

static bool representable(double v) { return isfinite(v) && v >= 0 && v < REPRESENTABLE; }

int wl_memory_check(const wl_memory *mem, const wl_model *m, const cfg_scenario *cfg,
                    const cfg_doc *doc, sim_error *err) {
  const char *states_key = cfg->workload.model.params > 0 ? "workload.model.params"
                           : m->kind == WL_MODEL_MLP      ? "workload.model.mlp_layers"
                                                          : "workload.model.hidden";
  double states[] = {m->params, mem->params_per_gpu, mem->weights, mem->gradients, mem->optimizer};
  for (size_t i = 0; i < sizeof states / sizeof *states; i++)
    if (!representable(states[i]))
      return cfg_fail_at(doc, states_key, err,
                         "the model's parameters and their states per GPU (%.3g bytes of "
                         "optimizer states) pass 2^63, more than fabsim represents; use a smaller "
                         "model or more model-parallel GPUs",
                         mem->optimizer);
  double worst = mem->total;
  for (int r = 0; r < 3; r++)
    if (!(mem->activations_by_recompute[r] <= worst)) worst = mem->activations_by_recompute[r];
  if (representable(worst)) return SIM_OK;
  bool batch = m->kind == WL_MODEL_MLP || cfg->workload.micro_batch > m->seq_len;
  return cfg_fail_at(doc, batch ? "workload.micro_batch" : "workload.model.seq_len", err,
                     "activations of %.3g bytes per GPU pass 2^63, more than fabsim represents; "
                     "use a shorter workload.model.seq_len or a smaller workload.micro_batch",
                     worst);
}

/* Cost of a (zero, recompute) choice: ZeRO 1-2 move the same bytes as an
 * AllReduce, ZeRO 3 adds weight gathers, selective recomputation is nearly
 * free and full recomputation costs a third more compute. */
static unsigned choice_cost(uint32_t zero, int rc) {
  static const unsigned zero_cost[] = {0, 1, 2, 4};
  static const unsigned rc_cost[] = {0, 1, 5};
  return zero_cost[zero] + rc_cost[rc];
}

/* Lexicographic: fewer model-parallel GPUs, cheaper choice, fewer stages. */
static bool better(uint64_t mp, unsigned cost, uint32_t pp, uint64_t bmp, unsigned bcost,
                   uint32_t bpp) {
  if (mp != bmp) return mp < bmp;
  if (cost != bcost) return cost < bcost;
  return pp < bpp;
}

bool wl_memory_search(wl_parallel *best, wl_memory *mem, const wl_model *m, const wl_parallel *p,
                      const cfg_scenario *cfg) {
  uint64_t gpus = (uint64_t)p->dp * p->tp * p->pp;
  bool found = false;
  uint32_t max_tp = m->kind == WL_MODEL_MLP ? 1 : cfg->cluster.gpus_per_node;
  for (uint32_t tp = 1; tp <= max_tp; tp *= 2) {
    if ((m->kind != WL_MODEL_MLP && m->heads % tp != 0) || gpus % tp != 0) continue;
    for (uint32_t pp = 1; pp <= m->layers && (uint64_t)tp * pp <= gpus; pp++) {
      uint64_t mp = (uint64_t)tp * pp, dp = gpus / mp;
      if (gpus % mp != 0 || dp % p->ep != 0 || p->global_batch % (dp * p->micro_batch) != 0)
        continue;
      if (found && mp > (uint64_t)best->tp * best->pp) break;
      wl_parallel q = *p;
      q.tp = tp;
      q.pp = pp;
      q.dp = (uint32_t)dp;
      q.micro_batches = (uint32_t)(p->global_batch / (dp * p->micro_batch));
      if (pp != p->pp) q.first_layers = q.last_layers = 0; /* counts set for another pp */
      if (q.schedule == CFG_SCHED_INTERLEAVED &&
          (pp < 2 || q.micro_batches % pp != 0 || (uint64_t)pp * q.vstages > m->layers))
        continue;
      if (q.schedule == CFG_SCHED_DUALPIPE &&
          (pp < 2 || pp % 2 != 0 || q.micro_batches % 2 != 0 || q.micro_batches < 2 * pp))
        continue;
      for (uint32_t z = 0; z <= 3; z++) {
        for (int rc = 0; rc < 3; rc++) {
          unsigned cost = choice_cost(z, rc);
          if (found && !better(mp, cost, pp, (uint64_t)best->tp * best->pp,
                               choice_cost(best->zero, (int)best->recompute), best->pp))
            continue;
          q.zero = z;
          q.recompute = (cfg_recompute)rc;
          wl_memory mm;
          wl_memory_compute(&mm, m, &q, cfg);
          if (!mm.fits) continue;
          found = true;
          *best = q;
          *mem = mm;
        }
      }
    }
  }
  return found;
}
