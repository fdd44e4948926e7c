/* A replica's iteration time and KV-cache capacity (fabsim/infer.h states
 * the model; docs/inference.md its assumptions). Every kernel is timed by
 * the training step's roofline through fabsim/wl_kernels.h; this file only
 * says which kernels an iteration runs, on how many tokens. Pure; O(1). */
#include <math.h>

#include "infer/inf_internal.h"

/* Kernels of one layer besides the attention cores (launch gaps): norm,
 * QKV, rotary, output GEMM, AllReduce, norm, up, activation, down,
 * AllReduce, two residual adds. */
enum { LAYER_KERNELS = 12 };

static double weight_bytes_of(cfg_precision p) {
  switch (p) {
  case CFG_PRECISION_FP32: return 4;
  case CFG_PRECISION_FP8: return 1;
  case CFG_PRECISION_BF16:
  case CFG_PRECISION_FP16: break;
  }
  return 2;
}

double inf__head_dim(const wl_model *m) { return (double)m->hidden / m->heads; }

/* Key/value heads on each GPU: the replica's split over tp, at least one
 * (vLLM replicates a head over the GPUs when tp exceeds the heads). */
double inf__kv_heads_gpu(const wl_model *m, uint32_t tp) {
  double kv = m->kv_heads ? m->kv_heads : m->heads;
  return fmax(1, ceil(kv / tp));
}

int inf_model_init(inf_model *im, const cfg_scenario *cfg, const cfg_doc *doc, const wl_kernels *k,
                   const inf_comm *comm, sim_error *err) {
  const cfg_workload *w = &cfg->workload;
  *im = (inf_model){0};
  if (wl_model_from_cfg(&im->m, cfg, doc, err) != SIM_OK) return SIM_ECONFIG;
  const wl_model *m = &im->m;
  if (m->kind == WL_MODEL_MLP)
    return cfg_fail_at(doc, "workload.model.mlp_layers", err,
                       "serving runs a transformer (dense or MoE); allowed: no mlp_layers");
  uint32_t tp = w->inference.tp;
  if (m->heads % tp)
    return cfg_fail_at(doc, "workload.inference.tp", err,
                       "%u GPUs do not split the model's %u attention heads evenly; allowed: a "
                       "divisor of workload.model.heads",
                       tp, m->heads);
  im->tp = tp;
  im->block = w->inference.block;
  im->k = k;
  im->comm = comm ? *comm : (inf_comm){0};
  im->lowp = w->precision == CFG_PRECISION_FP8;
  im->weight_bytes = weight_bytes_of(w->precision);
  im->kv_bytes = w->inference.kv_bytes;
  im->kv_latent = w->inference.kv_latent;
  im->weights_per_gpu = m->params * im->weight_bytes / tp;
  double hd = inf__head_dim(m), L = m->layers;
  if (im->kv_latent) { /* MLA: the latent, whole on every GPU of the replica */
    im->kv_token_bytes = L * im->kv_latent * im->kv_bytes;
    im->kv_token_gpu = im->kv_token_bytes;
  } else {
    double kv = m->kv_heads ? m->kv_heads : m->heads;
    im->kv_token_bytes = 2 * L * kv * hd * im->kv_bytes;
    im->kv_token_gpu = 2 * L * inf__kv_heads_gpu(m, tp) * hd * im->kv_bytes;
  }
  double usable = w->inference.memory_utilization * (double)cfg->cluster.gpu_memory;
  im->kv_budget_gpu = usable - im->weights_per_gpu - (double)w->inference.kv_reserve;
  double blocks = floor(im->kv_budget_gpu / (im->kv_token_gpu * im->block));
  if (!(blocks >= 1))
    return cfg_fail_at(
        doc, "workload.inference.tp", err,
        "the weights (%.4g GB a GPU at tp %u) and kv_reserve leave no KV cache in "
        "%.4g GB (workload.inference.memory_utilization %.3g of cluster.gpu_memory); "
        "allowed: a larger tp, or a smaller kv_reserve",
        im->weights_per_gpu / 1e9, tp, usable / 1e9, w->inference.memory_utilization);
  im->kv_blocks = blocks >= 0x1p62 ? (uint64_t)1 << 62 : (uint64_t)blocks;
  im->kv_tokens = im->kv_blocks * im->block;
  return SIM_OK;
}

static double gemm(const inf_model *im, double b, double m, double n, double k, inf_iter *p) {
  double t = wl_kernels_gemm_s(im->k, im->lowp, b, m, n, k, NULL);
  p->gemm_s += t;
  return t;
}

static double elt(const inf_model *im, double bytes, inf_iter *p) {
  double t = wl_kernels_eltwise_s(im->k, bytes);
  p->other_s += t;
  return t;
}

/* One layer of the iteration on one GPU (T tokens); its kernel count into
 * *kernels. MoE: the experts the T tokens reach (the expectation under
 * uniform routing, E (1 - (1 - k/E)^T)), each a GEMM of its share. */
static void layer(const inf_model *im, const inf_batch *b, bool moe, inf_iter *p, double *kernels) {
  const wl_model *m = &im->m;
  double T = b->prefill_tokens + b->decode_seqs, h = m->hidden, tp = im->tp;
  double act = wl_kernels_act_bytes(im->k), hd = inf__head_dim(m);
  double heads = m->heads / tp, kvh = inf__kv_heads_gpu(m, im->tp);
  double kv_attn = im->kv_latent ? im->kv_latent / (2 * hd) : kvh; /* heads read per token */
  double g = m->gated ? 2 : 1;
  *kernels += LAYER_KERNELS;
  elt(im, 2 * T * h * act, p);                  /* norm */
  gemm(im, 1, T, (heads + 2 * kvh) * hd, h, p); /* QKV */
  elt(im, 2 * T * (heads + kvh) * hd * act, p); /* rotary embedding of Q and K */
  if (b->prefill_seqs) {
    double ctx = b->prefill_kv / b->prefill_seqs;
    p->attn_prefill_s +=
        wl_kernels_attention_s(im->k, b->prefill_seqs, b->prefill_tokens, b->prefill_pairs,
                               b->prefill_kv, ctx, heads, kv_attn, hd, im->kv_bytes, NULL);
    *kernels += 1;
  }
  if (b->decode_seqs) {
    double ctx = b->decode_kv / b->decode_seqs;
    p->attn_decode_s +=
        wl_kernels_attention_s(im->k, b->decode_seqs, b->decode_seqs, b->decode_kv, b->decode_kv,
                               ctx, heads, kv_attn, hd, im->kv_bytes, NULL);
    *kernels += 1;
  }
  gemm(im, 1, T, h, heads * hd, p); /* output projection */
  elt(im, 2 * T * h * act, p);      /* norm */
  if (!moe) {
    double f = m->ffn_hidden / tp;
    gemm(im, 1, T, g * f, h, p);
    elt(im, (g + 1) * T * f * act, p);
    gemm(im, 1, T, h, f, p);
  } else {
    double E = m->experts, k = m->top_k, fe = m->expert_hidden / tp;
    double reached = E * (1 - pow(1 - k / E, T)), per = T * k / fmax(reached, 1);
    gemm(im, 1, T, E, h, p); /* router */
    gemm(im, reached, per, g * fe, h, p);
    elt(im, (g + 1) * T * k * fe * act, p);
    gemm(im, reached, per, h, fe, p);
    if (m->shared_experts) {
      double sh = m->shared_experts * fe;
      gemm(im, 1, T, g * sh, h, p);
      elt(im, (g + 1) * T * sh * act, p);
      gemm(im, 1, T, h, sh, p);
    }
    elt(im, (k + 1) * T * h * act, p); /* the weighted sum of the experts' outputs */
    *kernels += 4;
  }
  elt(im, 2 * 3 * T * h * act, p); /* two residual adds */
}

/* `count` layers alike (MoE or dense) into *p, their kernels into *kernels. */
static void layers(const inf_model *im, const inf_batch *b, bool moe, uint32_t count, inf_iter *p,
                   double *kernels) {
  if (!count) return;
  inf_iter one = {0};
  double k = 0;
  layer(im, b, moe, &one, &k);
  p->gemm_s += count * one.gemm_s, p->other_s += count * one.other_s;
  p->attn_prefill_s += count * one.attn_prefill_s;
  p->attn_decode_s += count * one.attn_decode_s;
  *kernels += count * k;
}

double inf_iter_s(const inf_model *im, const inf_batch *b, inf_iter *parts) {
  inf_iter p = {0};
  const wl_model *m = &im->m;
  double T = b->prefill_tokens + b->decode_seqs;
  if (!(T > 0)) {
    if (parts) *parts = p;
    return 0;
  }
  double kernels = 0;
  uint32_t moe_layers = m->kind == WL_MODEL_MOE ? m->layers - m->dense_layers : 0;
  layers(im, b, false, m->layers - moe_layers, &p, &kernels);
  layers(im, b, true, moe_layers, &p, &kernels);
  /* the final norm and the output layer (vocab-parallel) on the sampling rows */
  double act = wl_kernels_act_bytes(im->k), h = m->hidden, S = b->sampled;
  if (S > 0) {
    p.head_s = wl_kernels_eltwise_s(im->k, 2 * S * h * act) +
               wl_kernels_gemm_s(im->k, false, 1, S, m->vocab / (double)im->tp, h, NULL);
    kernels += 2;
  }
  if (im->tp > 1 && im->comm.allreduce_s) {
    double ar = im->comm.allreduce_s(im->comm.ctx, (uint64_t)(T * h * act));
    p.comm_s = 2.0 * m->layers * ar;
  }
  p.gaps_s = kernels * wl_kernels_gap_s(im->k);
  p.total_s =
      p.gemm_s + p.attn_prefill_s + p.attn_decode_s + p.other_s + p.comm_s + p.gaps_s + p.head_s;
  if (parts) *parts = p;
  return p.total_s;
}

void inf_alone_s(const inf_model *im, uint32_t prompt, uint32_t output, uint32_t max_tokens,
                 double *ttft, double *e2e) {
  double t = 0;
  for (uint32_t done = 0; done < prompt;) {
    uint32_t q = prompt - done < max_tokens ? prompt - done : max_tokens;
    inf_batch b = {.prefill_seqs = 1,
                   .prefill_tokens = q,
                   .prefill_pairs = (double)q * done + (double)q * (q + 1) / 2,
                   .prefill_kv = (double)done + q,
                   .sampled = done + q == prompt};
    t += sim_ps_to_s(inf__iter_ps(im, &b));
    done += q;
  }
  *ttft = t;
  for (uint32_t j = 1; j < output; j++) {
    inf_batch b = {.decode_seqs = 1, .decode_kv = (double)prompt + j, .sampled = 1};
    t += sim_ps_to_s(inf__iter_ps(im, &b));
  }
  *e2e = t;
}

simtime_ps inf__iter_ps(const inf_model *im, const inf_batch *b) {
  double ps = nearbyint(inf_iter_s(im, b, NULL) * 1e12);
  return ps >= 1 ? (simtime_ps)ps : 1;
}
