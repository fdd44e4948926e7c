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
 * Activations of one transformer layer and micro-batch (Korthikanti et al.,
 * "Reducing Activation Recomputation in Large Transformer Models", 2022;
 * MODEL-INPUTS.md), 16-bit, s sequence, b micro-batch, h hidden, a heads,
 * t tensor-parallel degree:
 *   sequence parallel:  s b h (34 + 5 a s / h) / t
 *   without:            s b h (10 + 24/t + 5 a s / (h t))
 * The 24 s b h that tensor parallelism splits are 8 (attention) + 16 (the
 * feed-forward: two 4h-wide tensors of 2 bytes); here the 16 scales with the
 * feed-forward width f as 4 f / h (x 1.5 when gated: three f-wide tensors),
 * and an MoE layer's f is (top_k + shared) x expert_hidden, so the default
 * f = 4h gives the formula exactly. Selective recomputation drops the
 * 5 a s / h term; full recomputation keeps each layer's input, 2 s b h (/t
 * under sequence parallelism), plus one layer's activations while it is
 * recomputed. fp32 doubles every figure. The last stage also holds the
 * fp32 logits, 4 s b v / t. Under 1F1B, stage s holds min(pp - s, m)
 * micro-batches in flight, so stage 0 holds pp x (its layers): the whole
 * model's layers for one micro-batch (Narayanan et al. 2021).
 *
 * MLP: each linear layer keeps its input and pre-activation output, (in +
 * out) x b x bytes; full recomputation keeps the input only.
 *
 * Not counted: framework workspace, communication buckets, fragmentation.
 */
#include "workload/wl_internal.h"

void wl_bytes_per_param(cfg_precision prec, cfg_optimizer opt, double *weights, double *gradients,
                        double *optimizer) {
  bool fp32 = prec == CFG_PRECISION_FP32;
  double master = fp32 ? 0 : 4;
  *weights = fp32 ? 4 : 2;
  *gradients = fp32 ? 4 : 2;
  *optimizer = master + (opt == CFG_OPTIMIZER_ADAM ? 8 : 4);
}

double wl_layer_activations(const wl_model *m, const wl_parallel *p, cfg_precision prec, uint32_t l,
                            cfg_recompute rc) {
  double bytes = prec == CFG_PRECISION_FP32 ? 2 : 1; /* x 16-bit */
  double b = p->micro_batch;
  if (m->kind == WL_MODEL_MLP) {
    double in = (double)m->widths[l], out = (double)m->widths[l + 1];
    return (rc == CFG_RECOMPUTE_FULL ? in : in + out) * b * 2 * bytes;
  }
  double s = m->seq_len, h = m->hidden, a = m->heads, t = p->tp;
  double sp = p->sp ? t : 1;
  if (rc == CFG_RECOMPUTE_FULL) return 2 * s * b * h / sp * bytes;
  double f = wl_layer_is_moe(m, l) ? ((double)m->top_k + m->shared_experts) * m->expert_hidden
                                   : (double)m->ffn_hidden;
  double split = 8 + 4 * f / h * (m->gated ? 1.5 : 1);
  double act = s * b * h * (10 / sp + split / t);
  if (rc == CFG_RECOMPUTE_NONE) act += 5 * a * s * s * b / t;
  return act * bytes;
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
  double act[3] = {0, 0, 0}, widest = 0;
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
      for (int r = 0; r < 3; r++)
        act[r] +=
            held[c] * wl_layer_activations(m, p, cfg->workload.precision, l, (cfg_recompute)r);
      double one = wl_layer_activations(m, p, cfg->workload.precision, l, CFG_RECOMPUTE_NONE);
      if (one > widest) widest = one;
    }
    if (k.embedding) dense += m->embedding / t;
    if (k.head) dense += m->head / t;
    head = head || k.head;
  }
  sim_free(held);
  act[CFG_RECOMPUTE_FULL] += widest;                     /* the layer being recomputed */
  if (act[CFG_RECOMPUTE_FULL] > act[CFG_RECOMPUTE_NONE]) /* tiny models: never worse than none */
    act[CFG_RECOMPUTE_FULL] = act[CFG_RECOMPUTE_NONE];
  if (head && m->vocab > 0) {
    double logits = 4.0 * m->seq_len * p->micro_batch * m->vocab / t;
    for (int r = 0; r < 3; r++) act[r] += logits;
  }
  double w, g, o;
  wl_bytes_per_param(cfg->workload.precision, cfg->workload.optimizer, &w, &g, &o);
  double nd = p->dp, ne = (double)p->dp / p->ep;
  uint32_t z = p->zero;
  out->stage = s;
  out->params_per_gpu = dense + expert;
  out->weights = w * (dense / (z >= 3 ? nd : 1) + expert / (z >= 3 ? ne : 1));
  out->gradients = g * (dense / (z >= 2 ? nd : 1) + expert / (z >= 2 ? ne : 1));
  out->optimizer = o * (dense / (z >= 1 ? nd : 1) + expert / (z >= 1 ? ne : 1));
  for (int r = 0; r < 3; r++) out->activations_by_recompute[r] = act[r];
  out->activations = act[p->recompute];
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
