/* Model and parallelism from the scenario: parameter counts, layer split
 * over pipeline stages, rank placement, and the checks that involve the
 * model and the cluster together (each located at the key to change). */
#include <string.h>

#include "fabsim/coll.h"
#include "fabsim/workload.h"

const char *wl_model_kind_name(wl_model_kind k) {
  switch (k) {
  case WL_MODEL_TRANSFORMER: return "transformer";
  case WL_MODEL_MOE: return "moe";
  case WL_MODEL_MLP: return "mlp";
  }
  return "(invalid)";
}

bool wl_layer_is_moe(const wl_model *m, uint32_t l) {
  return m->kind == WL_MODEL_MOE && l >= m->dense_layers;
}

double wl_layer_params(const wl_model *m, uint32_t l, bool active) {
  if (m->kind == WL_MODEL_MLP) {
    double in = (double)m->widths[l], out = (double)m->widths[l + 1];
    return (in * out + out) * m->scale;
  }
  if (!wl_layer_is_moe(m, l)) return m->attention + m->ffn;
  double experts =
      active ? (double)m->top_k + m->shared_experts : (double)m->experts + m->shared_experts;
  return m->attention + m->router + experts * m->expert;
}

double wl_layer_expert_params(const wl_model *m, uint32_t l) {
  return wl_layer_is_moe(m, l) ? (double)m->experts * m->expert : 0.0;
}

static int model_mlp(wl_model *m, const cfg_scenario *cfg, const cfg_doc *doc, sim_error *err) {
  const cfg_u64_list *w = &cfg->workload.model.mlp_layers;
  if (w->n < 2)
    return cfg_fail_at(doc, "workload.model.mlp_layers", err,
                       "an MLP needs at least two widths (input and output), got %u", w->n);
  if (cfg->workload.model.experts > 0)
    return cfg_fail_at(doc, "workload.model.experts", err,
                       "an MLP (workload.model.mlp_layers) has no experts; use 0");
  m->kind = WL_MODEL_MLP;
  m->widths = w->v;
  m->nwidths = w->n;
  m->layers = w->n - 1;
  m->dense_layers = m->layers;
  m->seq_len = 1; /* one sample is one "token" */
  m->scale = 1;
  uint64_t widest = 0;
  for (uint32_t i = 0; i < w->n; i++) widest = w->v[i] > widest ? w->v[i] : widest;
  m->hidden = widest > UINT32_MAX ? UINT32_MAX : (uint32_t)widest;
  return SIM_OK;
}

int wl_model_from_cfg(wl_model *m, const cfg_scenario *cfg, const cfg_doc *doc, sim_error *err) {
  memset(m, 0, sizeof *m);
  int rc = SIM_OK;
  if (cfg->workload.model.mlp_layers.n > 0) {
    rc = model_mlp(m, cfg, doc, err);
    if (rc != SIM_OK) return rc;
  } else {
#define MC (&cfg->workload.model) /* the scenario's model keys */
    double h = MC->hidden;
    m->kind = MC->experts > 0 ? WL_MODEL_MOE : WL_MODEL_TRANSFORMER;
    m->layers = MC->layers;
    m->hidden = MC->hidden;
    m->heads = MC->heads;
    m->kv_heads = MC->kv_heads ? MC->kv_heads : MC->heads;
    if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
      return cfg_fail_at(doc, "workload.model.kv_heads", err,
                         "%u key/value heads for %u attention heads (workload.model.heads); "
                         "each key/value head serves a whole group of heads",
                         m->kv_heads, m->heads);
    m->head_dim = MC->head_dim;
    m->seq_len = MC->seq_len;
    m->vocab = MC->vocab;
    m->ffn_hidden = MC->ffn_hidden ? MC->ffn_hidden : 4 * MC->hidden;
    m->expert_hidden = MC->expert_hidden ? MC->expert_hidden : m->ffn_hidden;
    m->experts = MC->experts;
    m->top_k = MC->top_k;
    m->shared_experts = MC->shared_experts;
    m->gated = MC->gated_ffn;
    m->dropout = MC->dropout;
    double mats = m->gated ? 3 : 2;
    /* Q and O h x q, K and V h x q kv/heads each (grouped-query attention),
     * q = heads x head_dim the query width (h unless workload.model.head_dim
     * says otherwise) */
    double q = MC->head_dim ? (double)m->heads * MC->head_dim : h;
    m->attention = (2 + 2.0 * m->kv_heads / m->heads) * h * q;
    m->ffn = mats * h * m->ffn_hidden;
    m->expert = mats * h * m->expert_hidden;
    m->router = h * MC->experts;
    m->embedding = m->head = (double)MC->vocab * h;
    m->dense_layers = m->layers;
    m->scale = 1;
    if (m->kind == WL_MODEL_MOE) {
      if (MC->top_k > MC->experts)
        return cfg_fail_at(doc, "workload.model.top_k", err,
                           "%u exceeds the %u routed experts (workload.model.experts)", MC->top_k,
                           MC->experts);
      if (MC->dense_layers >= MC->layers)
        return cfg_fail_at(doc, "workload.model.dense_layers", err,
                           "%u leaves no MoE layer among the %u layers; use fewer, or "
                           "workload.model.experts: 0 for a dense model",
                           MC->dense_layers, MC->layers);
      m->dense_layers = MC->dense_layers;
    }
#undef MC
  }
  double total = m->embedding + m->head, active = total;
  for (uint32_t l = 0; l < m->layers; l++) {
    total += wl_layer_params(m, l, false);
    active += wl_layer_params(m, l, true);
  }
  double given = cfg->workload.model.params;
  if (given > 0) {
    double s = given / total;
    m->scale = s;
    if (m->kind != WL_MODEL_MLP) {
      m->attention *= s, m->ffn *= s, m->expert *= s, m->router *= s;
      m->embedding *= s, m->head *= s;
    }
    total = given;
    active *= s;
  }
  m->params = total;
  m->params_active = active;
  return SIM_OK;
}

/* ---- parallelism ---------------------------------------------------------- */

static int stage_split_check(const wl_model *m, const wl_parallel *p, const cfg_doc *doc,
                             sim_error *err);

int wl_parallel_from_cfg(wl_parallel *p, const wl_model *m, const cfg_scenario *cfg,
                         const cfg_doc *doc, uint32_t gpus, sim_error *err) {
#define PC (&cfg->workload.parallel) /* the scenario's parallel keys */
  memset(p, 0, sizeof *p);
  p->tp = PC->tp;
  p->pp = PC->pp;
  p->ep = PC->ep;
  p->zero = PC->zero;
  p->sp = PC->sequence_parallel;
  p->order = PC->order;
  p->recompute = cfg->workload.recompute;
  for (uint32_t i = 0; i < cfg->workload.recompute_modules.n; i++)
    p->rc_modules |= 1u << cfg->workload.recompute_modules.v[i];
  p->rc_method = cfg->workload.recompute_method;
  p->rc_layers = cfg->workload.recompute_layers;
  p->flash = cfg->workload.attention == CFG_ATTN_FLASH;
  p->first_layers = cfg->workload.pipeline.first_stage_layers;
  p->last_layers = cfg->workload.pipeline.last_stage_layers;
  p->micro_batch = cfg->workload.micro_batch;
  p->dp_algorithm = PC->dp_algorithm;
  p->schedule = cfg->workload.pipeline.schedule;
  p->vstages = p->schedule == CFG_SCHED_INTERLEAVED ? PC->virtual_stages
               : p->schedule == CFG_SCHED_DUALPIPE  ? 2
                                                    : 1;
  if (PC->virtual_stages > 1 && p->schedule != CFG_SCHED_INTERLEAVED)
    return cfg_fail_at(doc, "workload.parallel.virtual_stages", err,
                       "%u model chunks per GPU need workload.pipeline.schedule: interleaved "
                       "(it is %s)",
                       PC->virtual_stages, cfg_schedule_name(p->schedule));
  if (!cfg_coll_algorithm_offered(CFG_COLL_ALLREDUCE, p->dp_algorithm))
    return cfg_fail_at(doc, "workload.parallel.dp_algorithm", err,
                       "%s is not an AllReduce algorithm; allowed: ring, tree, halving-doubling, "
                       "hierarchical",
                       cfg_coll_algorithm_name(p->dp_algorithm));
  if (m->kind == WL_MODEL_MLP && p->tp > 1)
    return cfg_fail_at(doc, "workload.parallel.tp", err,
                       "an MLP (workload.model.mlp_layers) runs without tensor parallelism; use 1");
  if (m->kind != WL_MODEL_MLP && (p->tp > m->heads || m->heads % p->tp != 0))
    return cfg_fail_at(doc, "workload.parallel.tp", err,
                       "%u does not divide the %u attention heads (workload.model.heads)", p->tp,
                       m->heads);
  if (m->kind != WL_MODEL_MLP && m->kv_heads % p->tp != 0)
    return cfg_fail_at(doc, "workload.parallel.tp", err,
                       "%u does not divide the %u key/value heads (workload.model.kv_heads; "
                       "Megatron-LM splits them over tensor-parallel ranks)",
                       p->tp, m->kv_heads);
  if (p->pp > m->layers)
    return cfg_fail_at(doc, "workload.parallel.pp", err,
                       "%u stages for %u layers; every stage needs at least one layer", p->pp,
                       m->layers);
  if (p->recompute == CFG_RECOMPUTE_FULL && p->rc_method == CFG_RECOMPUTE_UNIFORM &&
      p->rc_layers == 0)
    return cfg_fail_at(doc, "workload.recompute_layers", err,
                       "0 layers per group: uniform full recomputation checkpoints groups of at "
                       "least one layer (Megatron-LM's --recompute-num-layers)");
  if (p->rc_modules >> CFG_RCMOD_OP & 1u && p->rc_modules != 1u << CFG_RCMOD_OP)
    return cfg_fail_at(doc, "workload.recompute_modules", err,
                       "op (torchtitan's selective op policy) with other modules; op stands alone");
  int rc = stage_split_check(m, p, doc, err);
  if (rc != SIM_OK) return rc;
  uint64_t mp = (uint64_t)p->tp * p->pp;
  if (PC->dp == 0) {
    if (mp > gpus)
      return cfg_fail_at(doc, p->pp > 1 ? "workload.parallel.pp" : "workload.parallel.tp", err,
                         "tp x pp = %llu GPUs but the job has %u", (unsigned long long)mp, gpus);
    p->dp = (uint32_t)(gpus / mp);
  } else {
    p->dp = PC->dp;
    if (mp * p->dp > gpus)
      return cfg_fail_at(doc, "workload.parallel.dp", err,
                         "dp x tp x pp = %llu GPUs but the job has %u",
                         (unsigned long long)(mp * p->dp), gpus);
  }
  if (p->ep > 1 && m->kind != WL_MODEL_MOE)
    return cfg_fail_at(doc, "workload.parallel.ep", err,
                       "expert parallelism needs experts (workload.model.experts > 0); use 1");
  if (m->kind == WL_MODEL_MOE && m->experts % p->ep != 0)
    return cfg_fail_at(doc, "workload.parallel.ep", err,
                       "%u does not divide the %u experts (workload.model.experts)", p->ep,
                       m->experts);
  if (p->dp % p->ep != 0)
    return cfg_fail_at(doc, "workload.parallel.ep", err,
                       "%u does not divide the data-parallel degree %u; expert-parallel groups are "
                       "made of data-parallel ranks",
                       p->ep, p->dp);
  uint64_t per_step = (uint64_t)p->dp * p->micro_batch;
  uint64_t gb = cfg->workload.global_batch;
  if (gb == 0) gb = per_step * (p->pp > 1 ? 4ull * p->pp : 1);
  if (gb % per_step != 0)
    return cfg_fail_at(doc, "workload.global_batch", err,
                       "%llu sequences is not a multiple of dp x micro_batch = %llu",
                       (unsigned long long)gb, (unsigned long long)per_step);
  if (gb / per_step > UINT32_MAX)
    return cfg_fail_at(doc, "workload.global_batch", err, "%llu micro-batches per step is too many",
                       (unsigned long long)(gb / per_step));
  p->global_batch = gb;
  p->micro_batches = (uint32_t)(gb / per_step);
  uint32_t mb = p->micro_batches;
  if (p->schedule == CFG_SCHED_INTERLEAVED) {
    if (p->pp < 2)
      return cfg_fail_at(doc, "workload.pipeline.schedule", err,
                         "the interleaved schedule needs pipeline stages (workload.parallel.pp "
                         ">= 2); use 1f1b");
    if ((uint64_t)p->pp * p->vstages > m->layers)
      return cfg_fail_at(doc, "workload.parallel.virtual_stages", err,
                         "%u stages x %u chunks for %u layers; every chunk needs a layer", p->pp,
                         p->vstages, m->layers);
    if (mb % p->pp != 0)
      return cfg_fail_at(doc, "workload.global_batch", err,
                         "the interleaved schedule runs micro-batches in groups of pp: %u "
                         "micro-batches is not a multiple of %u (Narayanan et al. 2021)",
                         mb, p->pp);
  }
  if (p->schedule == CFG_SCHED_DUALPIPE) {
    if (p->pp < 2 || p->pp % 2 != 0)
      return cfg_fail_at(doc, "workload.parallel.pp", err,
                         "DualPipe needs an even number of stages, at least 2 (it is %u)", p->pp);
    if (mb % 2 != 0 || mb < 2 * p->pp)
      return cfg_fail_at(doc, "workload.global_batch", err,
                         "DualPipe feeds half the micro-batches from each end: it needs an even "
                         "count of at least 2 pp = %u (it is %u)",
                         2 * p->pp, mb);
  }
  if (cfg->workload.compute_efficiency > 1)
    return cfg_fail_at(doc, "workload.compute_efficiency", err,
                       "%g is above 1; it is a fraction of the GPU's peak",
                       cfg->workload.compute_efficiency);
  if (cfg->cluster.hbm_efficiency > 1)
    return cfg_fail_at(doc, "cluster.hbm_efficiency", err,
                       "%g is above 1; it is a fraction of cluster.hbm_bandwidth",
                       cfg->cluster.hbm_efficiency);
  return SIM_OK;
#undef PC
}

uint32_t wl_rank_gpu(const wl_parallel *p, uint32_t d, uint32_t s, uint32_t t) {
  /* dims innermost first: 0 tp, 1 pp, 2 dp */
  static const uint8_t order[][3] = {
      [CFG_ORDER_TP_PP_DP] = {0, 1, 2}, [CFG_ORDER_TP_DP_PP] = {0, 2, 1},
      [CFG_ORDER_PP_TP_DP] = {1, 0, 2}, [CFG_ORDER_PP_DP_TP] = {1, 2, 0},
      [CFG_ORDER_DP_TP_PP] = {2, 0, 1}, [CFG_ORDER_DP_PP_TP] = {2, 1, 0},
  };
  uint32_t idx[3] = {t, s, d}, size[3] = {p->tp, p->pp, p->dp};
  const uint8_t *o = order[p->order];
  uint32_t i = idx[o[0]] + size[o[0]] * (idx[o[1]] + size[o[1]] * idx[o[2]]);
  return p->gpu_map ? p->gpu_map[i] : i;
}

/* floor(j n / d): the first j of d shares of n, spread evenly. */
static uint64_t share(uint64_t j, uint64_t n, uint64_t d) { return d ? j * n / d : 0; }

/* Virtual stage k = c pp + s of a pipeline of pp stages x v chunks: its
 * layers [*first, *first + *count) (wl_stage_chunk's split). */
static void virtual_stage(const wl_model *m, const wl_parallel *p, uint32_t pp, uint32_t v,
                          uint32_t k, uint32_t *first, uint32_t *count) {
  uint64_t F = p->first_layers, G = p->last_layers, L = m->layers;
  uint32_t c = k / pp, s = k % pp;
  uint64_t ends = (F ? 1 : 0) + (G ? 1 : 0), mid = ((uint64_t)pp - ends) * v, rest = L - F - G;
  /* chunks of stage 0 and of stage pp - 1 before k; the other virtual stages before it */
  uint64_t bf = F ? c + (s > 0) : 0, bl = G ? c : 0, bm = k - bf - bl;
  uint64_t before = share(bf, F, v) + (G - share(v - bl, G, v)) + share(bm, rest, mid);
  uint64_t n;
  if (F && s == 0) n = share(c + 1, F, v) - share(c, F, v); /* lighter chunks first */
  else if (G && s == pp - 1) n = share(v - c, G, v) - share(v - c - 1, G, v); /* lighter last */
  else n = share(bm + 1, rest, mid) - share(bm, rest, mid);
  *first = (uint32_t)before;
  *count = (uint32_t)n;
}

static int stage_split_check(const wl_model *m, const wl_parallel *p, const cfg_doc *doc,
                             sim_error *err) {
  uint64_t F = p->first_layers, G = p->last_layers, L = m->layers;
  uint32_t v = p->schedule == CFG_SCHED_INTERLEAVED ? p->vstages : 1;
  const char *key =
      G && !F ? "workload.pipeline.last_stage_layers" : "workload.pipeline.first_stage_layers";
  if (!F && !G) return SIM_OK;
  if (p->pp < 2)
    return cfg_fail_at(doc, key, err,
                       "a layer count for an end stage needs pipeline stages "
                       "(workload.parallel.pp >= 2; it is 1)");
  if (F && F < v)
    return cfg_fail_at(doc, "workload.pipeline.first_stage_layers", err,
                       "%llu layers for the %u model chunks of stage 0; every chunk needs one",
                       (unsigned long long)F, v);
  if (G && G < v)
    return cfg_fail_at(doc, "workload.pipeline.last_stage_layers", err,
                       "%llu layers for the %u model chunks of the last stage; every chunk "
                       "needs one",
                       (unsigned long long)G, v);
  uint64_t ends = (F ? 1 : 0) + (G ? 1 : 0), mid = ((uint64_t)p->pp - ends) * v;
  if (F + G > L || (mid == 0 && F + G != L) || L - F - G < mid)
    return cfg_fail_at(doc, key, err,
                       "first %llu + last %llu layers leave %lld for the other %llu virtual "
                       "stages of %u layers (workload.model.layers); each needs at least one"
                       "%s",
                       (unsigned long long)F, (unsigned long long)G,
                       (long long)L - (long long)(F + G), (unsigned long long)mid, m->layers,
                       mid == 0 ? ", and with no other stage the two must hold them all" : "");
  return SIM_OK;
}

void wl_stage_chunk(const wl_model *m, const wl_parallel *p, uint32_t s, uint32_t c,
                    wl_chunk *out) {
  uint32_t k = s, v = 1, n = p->pp; /* virtual stage k of a pipeline of n */
  if (p->schedule == CFG_SCHED_INTERLEAVED) {
    v = p->vstages;
    k = c * p->pp + s;
    n = p->pp * v;
  } else if (p->schedule == CFG_SCHED_DUALPIPE && c == 1) {
    k = p->pp - 1 - s;
  }
  virtual_stage(m, p, p->pp, v, k, &out->first, &out->count);
  out->embedding = k == 0;
  out->head = k == n - 1;
}

uint32_t wl_stage_layer_count(const wl_model *m, const wl_parallel *p, uint32_t s) {
  uint32_t n = 0;
  for (uint32_t c = 0; c < p->vstages; c++) {
    wl_chunk k;
    wl_stage_chunk(m, p, s, c, &k);
    n += k.count;
  }
  return n;
}
