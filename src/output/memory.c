/* What `fabsim memory` prints (per-GPU memory of a training setup and the
 * smallest parallelism that fits: run_memory_of's result), and a training
 * run's step as JSON and text, from the typed results of src/run and
 * src/workload. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/out_internal.h"

static json_int_t round_int(double v) { return (json_int_t)llround(v); }

static json_t *model_json(const wl_model *m) {
  json_t *o = json_object();
  json_object_set_new(o, "kind", json_string(wl_model_kind_name(m->kind)));
  json_object_set_new(o, "params", json_integer(round_int(m->params)));
  json_object_set_new(o, "params_active", json_integer(round_int(m->params_active)));
  json_object_set_new(o, "layers", json_integer(m->layers));
  if (m->kind == WL_MODEL_MLP) {
    json_t *w = json_array();
    for (uint32_t i = 0; i < m->nwidths; i++)
      json_array_append_new(w, json_integer((json_int_t)m->widths[i]));
    json_object_set_new(o, "widths", w);
    return o;
  }
  json_object_set_new(o, "hidden", json_integer(m->hidden));
  json_object_set_new(o, "heads", json_integer(m->heads));
  json_object_set_new(o, "seq_len", json_integer(m->seq_len));
  json_object_set_new(o, "vocab", json_integer(m->vocab));
  json_object_set_new(o, "ffn_hidden", json_integer(m->ffn_hidden));
  if (m->kind == WL_MODEL_MOE) {
    json_object_set_new(o, "experts", json_integer(m->experts));
    json_object_set_new(o, "top_k", json_integer(m->top_k));
    json_object_set_new(o, "shared_experts", json_integer(m->shared_experts));
    json_object_set_new(o, "expert_hidden", json_integer(m->expert_hidden));
    json_object_set_new(o, "dense_layers", json_integer(m->dense_layers));
  }
  return o;
}

static json_t *parallel_json(const wl_parallel *p, const cfg_scenario *cfg) {
  json_t *o = json_object();
  json_object_set_new(o, "gpus", json_integer((json_int_t)p->dp * p->tp * p->pp));
  json_object_set_new(o, "dp", json_integer(p->dp));
  json_object_set_new(o, "tp", json_integer(p->tp));
  json_object_set_new(o, "pp", json_integer(p->pp));
  json_object_set_new(o, "ep", json_integer(p->ep));
  json_object_set_new(o, "zero", json_integer(p->zero));
  json_object_set_new(o, "sequence_parallel", json_boolean(p->sp));
  json_object_set_new(o, "order", json_string(cfg_rank_order_name(p->order)));
  json_object_set_new(o, "recompute", json_string(cfg_recompute_name(p->recompute)));
  if (p->recompute == CFG_RECOMPUTE_SELECTIVE) {
    json_t *mods = json_array();
    for (int k = 0; k < CFG_RCMOD_COUNT; k++)
      if (p->rc_modules >> k & 1u)
        json_array_append_new(mods,
                              json_string(cfg_recompute_module_name((cfg_recompute_module)k)));
    json_object_set_new(o, "recompute_modules", mods);
  }
  if (p->recompute == CFG_RECOMPUTE_FULL) {
    json_object_set_new(o, "recompute_method",
                        json_string(cfg_recompute_method_name(p->rc_method)));
    json_object_set_new(o, "recompute_layers", json_integer(p->rc_layers));
  }
  json_object_set_new(o, "attention", json_string(p->flash ? "flash" : "unfused"));
  json_object_set_new(o, "schedule", json_string(cfg_schedule_name(p->schedule)));
  json_object_set_new(o, "virtual_stages", json_integer(p->vstages));
  json_object_set_new(o, "first_stage_layers", json_integer(p->first_layers));
  json_object_set_new(o, "last_stage_layers", json_integer(p->last_layers));
  json_object_set_new(o, "precision", json_string(cfg_precision_name(cfg->workload.precision)));
  json_object_set_new(o, "optimizer", json_string(cfg_optimizer_name(cfg->workload.optimizer)));
  json_object_set_new(o, "micro_batch", json_integer(p->micro_batch));
  json_object_set_new(o, "micro_batches", json_integer(p->micro_batches));
  json_object_set_new(o, "global_batch", json_integer((json_int_t)p->global_batch));
  return o;
}

static json_t *bytes_json(const wl_memory *mem) {
  json_t *b = json_object();
  json_object_set_new(b, "weights", json_integer(round_int(mem->weights)));
  json_object_set_new(b, "gradients", json_integer(round_int(mem->gradients)));
  json_object_set_new(b, "optimizer", json_integer(round_int(mem->optimizer)));
  json_object_set_new(b, "activations", json_integer(round_int(mem->activations)));
  json_object_set_new(b, "total", json_integer(round_int(mem->total)));
  return b;
}

json_t *out_memory_json(const cfg_scenario *cfg, const run_memory *r) {
  const wl_model *m = &r->model;
  const wl_parallel *p = &r->parallel, *best = &r->best;
  const wl_memory *mem = &r->mem, *bm = &r->best_mem;
  bool found = r->found;
  json_t *o = json_object();
  json_object_set_new(o, "model", model_json(m));
  json_object_set_new(o, "parallel", parallel_json(p, cfg));
  json_object_set_new(o, "params", json_integer(round_int(m->params)));
  json_object_set_new(o, "params_per_gpu", json_integer(round_int(mem->params_per_gpu)));
  json_object_set_new(o, "stage", json_integer(mem->stage));
  json_object_set_new(o, "bytes_per_gpu", bytes_json(mem));
  json_t *a = json_object();
  for (int k = 0; k < 3; k++)
    json_object_set_new(a, cfg_recompute_name((cfg_recompute)k),
                        json_integer(round_int(mem->activations_by_recompute[k])));
  json_object_set_new(o, "activations_by_recompute", a);
  json_t *d = json_object(); /* activations = layers_held x per layer (at most layer_bytes
                                each) + logits + recompute_bytes */
  json_object_set_new(d, "layers", json_integer(mem->layers));
  json_object_set_new(d, "layers_held", json_real(mem->layers_held));
  json_object_set_new(d, "layer_bytes", json_integer(round_int(mem->layer_bytes)));
  json_object_set_new(d, "logits_bytes", json_integer(round_int(mem->logits)));
  json_object_set_new(d, "recompute_bytes", json_integer(round_int(mem->recompute_bytes)));
  json_object_set_new(o, "activations_detail", d);
  json_object_set_new(o, "gpu_memory_bytes", json_integer(round_int(mem->gpu_memory)));
  json_object_set_new(o, "fits", json_boolean(mem->fits));
  if (!mem->fits && found) {
    json_t *s = json_object();
    json_object_set_new(s, "dp", json_integer(best->dp));
    json_object_set_new(s, "tp", json_integer(best->tp));
    json_object_set_new(s, "pp", json_integer(best->pp));
    json_object_set_new(s, "zero", json_integer(best->zero));
    json_object_set_new(s, "recompute", json_string(cfg_recompute_name(best->recompute)));
    json_object_set_new(s, "bytes_per_gpu", bytes_json(bm));
    json_object_set_new(o, "suggestion", s);
  } else {
    json_object_set_new(o, "suggestion", json_null());
  }
  return o;
}

static void print_model(const wl_model *m) {
  char a[64], b[64];
  if (m->kind == WL_MODEL_MLP) {
    printf("model        MLP, %s parameters (weights and biases), widths",
           sim_fmt_count(a, sizeof a, (uint64_t)llround(m->params)));
    for (uint32_t i = 0; i < m->nwidths; i++)
      printf("%s %llu", i ? "," : "", (unsigned long long)m->widths[i]);
    printf("\n");
    return;
  }
  printf("model        %s, %s B parameters",
         m->kind == WL_MODEL_MOE ? "mixture of experts" : "dense transformer",
         sim_fmt(a, sizeof a, m->params / 1e9, SIM_UNIT_NUMBER));
  if (m->kind == WL_MODEL_MOE)
    printf(" (%s B active per token)",
           sim_fmt(a, sizeof a, m->params_active / 1e9, SIM_UNIT_NUMBER));
  printf(": %u layers, hidden %u, %u heads, sequence %s, vocabulary %s\n", m->layers, m->hidden,
         m->heads, sim_fmt_count(a, sizeof a, m->seq_len), sim_fmt_count(b, sizeof b, m->vocab));
  if (m->kind == WL_MODEL_MOE)
    printf(
        "             %u routed experts (top %u) + %u shared, expert width %u, %u dense layers "
        "first\n",
        m->experts, m->top_k, m->shared_experts, m->expert_hidden, m->dense_layers);
}

static void print_parallel(const wl_parallel *p, const cfg_scenario *cfg) {
  char a[64];
  printf("parallelism  %s GPUs = dp %u x tp %u x pp %u",
         sim_fmt_count(a, sizeof a, (uint64_t)p->dp * p->tp * p->pp), p->dp, p->tp, p->pp);
  if (p->ep > 1) printf(" (ep %u)", p->ep);
  printf(", ZeRO %u, %s, %s, %u micro-batch%s of %u\n", p->zero,
         cfg_precision_name(cfg->workload.precision), cfg_optimizer_name(cfg->workload.optimizer),
         p->micro_batches, p->micro_batches == 1 ? "" : "es", p->micro_batch);
}

void out_memory_print(const cfg_scenario *cfg, const run_memory *r) {
  const wl_model *m = &r->model;
  const wl_parallel *p = &r->parallel, *best = &r->best;
  const wl_memory *mem = &r->mem, *bm = &r->best_mem;
  bool found = r->found;
  char a[64], b[64], c[64], d[64];
  print_model(m);
  print_parallel(p, cfg);
  printf("per GPU      %s parameters on stage %u (the one needing most memory)\n",
         sim_fmt_count(a, sizeof a, (uint64_t)llround(mem->params_per_gpu)), mem->stage);
  printf("  weights      %s\n", sim_fmt_bytes(a, sizeof a, (uint64_t)llround(mem->weights)));
  printf("  gradients    %s\n", sim_fmt_bytes(a, sizeof a, (uint64_t)llround(mem->gradients)));
  printf("  optimizer    %s\n", sim_fmt_bytes(a, sizeof a, (uint64_t)llround(mem->optimizer)));
  printf("  activations  %s (recompute %s; none %s, selective %s, full %s)\n",
         sim_fmt_bytes(a, sizeof a, (uint64_t)llround(mem->activations)),
         cfg_recompute_name(p->recompute),
         sim_fmt_bytes(b, sizeof b, (uint64_t)llround(mem->activations_by_recompute[0])),
         sim_fmt_bytes(c, sizeof c, (uint64_t)llround(mem->activations_by_recompute[1])),
         sim_fmt_bytes(d, sizeof d, (uint64_t)llround(mem->activations_by_recompute[2])));
  if (m->kind != WL_MODEL_MLP)
    printf(
        "               %u layers, %s layer-micro-batches in flight x up to %s (%s "
        "attention)%s%s%s%s\n",
        mem->layers, sim_fmt(d, sizeof d, mem->layers_held, SIM_UNIT_NUMBER),
        sim_fmt_bytes(a, sizeof a, (uint64_t)llround(mem->layer_bytes)),
        p->flash ? "flash" : "unfused", mem->logits > 0 ? " + logits " : "",
        mem->logits > 0 ? sim_fmt_bytes(b, sizeof b, (uint64_t)llround(mem->logits)) : "",
        mem->recompute_bytes > 0 ? " + recomputing " : "",
        mem->recompute_bytes > 0
            ? sim_fmt_bytes(c, sizeof c, (uint64_t)llround(mem->recompute_bytes))
            : "");
  printf("  total        %s of %s: %s\n", sim_fmt_bytes(a, sizeof a, (uint64_t)llround(mem->total)),
         sim_fmt_bytes(b, sizeof b, (uint64_t)llround(mem->gpu_memory)),
         mem->fits ? "fits" : "does NOT fit");
  if (mem->fits) return;
  if (!found) {
    printf(
        "suggestion   nothing fits on %llu GPUs (tp up to %u, any pp, ZeRO 0-3, any recompute)\n",
        (unsigned long long)p->dp * p->tp * p->pp, cfg->cluster.gpus_per_node);
    return;
  }
  printf("suggestion   dp %u x tp %u x pp %u, ZeRO %u, recompute %s: %s per GPU\n", best->dp,
         best->tp, best->pp, best->zero, cfg_recompute_name(best->recompute),
         sim_fmt_bytes(a, sizeof a, (uint64_t)llround(bm->total)));
}

/* ---- fabsim run, workload.kind: training: the step ----------------------------------- */

static json_t *step_json(const wl_step *s, const wl_model *m, const wl_parallel *p,
                         const cfg_scenario *cfg, const wl_memory *mem) {
  json_t *o = json_object();
  json_object_set_new(o, "time_s", json_real(s->time_s));
  json_object_set_new(o, "compute_s", json_real(s->compute_s));
  json_object_set_new(o, "forward_s", json_real(s->forward_s));
  json_object_set_new(o, "backward_s", json_real(s->backward_s));
  json_object_set_new(o, "optimizer_s", json_real(s->optimizer_s));
  json_object_set_new(o, "memory_bound_s", json_real(s->memory_bound_s));
  json_object_set_new(o, "memory_bound_frac", json_real(s->memory_bound_frac));
  json_object_set_new(o, "comm_sm_lost_s", json_real(s->comm_sm_lost_s));
  json_object_set_new(o, "exposed_comm_s", json_real(s->exposed_comm_s));
  json_object_set_new(o, "bubble_s", json_real(s->bubble_s));
  json_object_set_new(o, "bubble_frac", json_real(s->bubble_frac));
  json_object_set_new(o, "bubble_frac_1f1b", json_real(s->bubble_frac_1f1b));
  json_object_set_new(o, "bubble_frac_schedule", json_real(s->bubble_frac_schedule));
  json_object_set_new(o, "schedule", json_string(cfg_schedule_name(s->parallel.schedule)));
  json_object_set_new(o, "gpu_idle_frac", json_real(s->gpu_idle_frac));
  json_object_set_new(o, "mfu", json_real(s->mfu));
  json_object_set_new(o, "tokens_per_s", json_real(s->tokens_per_s));
  json_object_set_new(o, "tokens", json_real(s->tokens));
  json_object_set_new(o, "model_flops", json_real(s->model_flops));
  json_object_set_new(o, "gpus", json_integer(s->gpus));
  json_t *c = json_object();
  for (int k = 0; k < WL_COMM_KINDS; k++) {
    const wl_comm_total *t = &s->comm[k];
    if (!t->count) continue;
    json_t *e = json_object();
    json_object_set_new(e, "group", json_integer(t->group));
    json_object_set_new(e, "count", json_integer((json_int_t)t->count));
    json_object_set_new(e, "bytes", json_integer((json_int_t)t->bytes));
    json_object_set_new(e, "time_s", json_real(t->time_s));
    json_object_set_new(c, wl_comm_kind_name((wl_comm_kind)k), e);
  }
  json_object_set_new(o, "collectives", c);
  json_t *st = json_array();
  for (uint32_t i = 0; i < s->nstages; i++) {
    const wl_stage_time *x = &s->stages[i];
    wl_memory sm;
    wl_memory_stage(&sm, m, p, cfg, i);
    json_t *e = json_object();
    json_object_set_new(e, "compute_s", json_real(x->compute_s));
    json_object_set_new(e, "exposed_comm_s", json_real(x->exposed_comm_s));
    json_object_set_new(e, "bubble_s", json_real(x->bubble_s));
    json_object_set_new(e, "forward_s", json_real(x->forward_s));
    json_object_set_new(e, "backward_s", json_real(x->backward_s));
    json_object_set_new(e, "recompute_s", json_real(x->recompute_s));
    json_object_set_new(e, "optimizer_s", json_real(x->optimizer_s));
    json_object_set_new(e, "layers", json_integer(x->layers));
    json_object_set_new(e, "embedding", json_boolean(x->embedding));
    json_object_set_new(e, "output_layer", json_boolean(x->head));
    json_object_set_new(e, "memory_bytes", json_integer(round_int(sm.total)));
    json_object_set_new(e, "activations_bytes", json_integer(round_int(sm.activations)));
    json_array_append_new(st, e);
  }
  json_object_set_new(o, "stages", st);
  json_object_set_new(o, "model", model_json(m));
  json_object_set_new(o, "parallel", parallel_json(p, cfg));
  json_t *mj = json_object();
  json_object_set_new(mj, "bytes_per_gpu", json_integer(round_int(mem->total)));
  json_object_set_new(mj, "gpu_memory_bytes", json_integer(round_int(mem->gpu_memory)));
  json_object_set_new(mj, "fits", json_boolean(mem->fits));
  json_object_set_new(o, "memory", mj);
  json_object_set_new(o, "comm_model", json_string(cfg_comm_model_name(s->comm_model)));
  json_t *d = json_object();
  json_object_set_new(d, "nodes", json_integer((json_int_t)s->nodes));
  json_object_set_new(d, "comm_nodes", json_integer((json_int_t)s->comm_nodes));
  json_object_set_new(d, "classes", json_integer((json_int_t)s->classes));
  json_object_set_new(d, "transfers_live", json_integer((json_int_t)s->transfers_estimate));
  json_object_set_new(d, "transfers_measured", json_integer((json_int_t)s->transfers_measured));
  json_object_set_new(o, "dag", d);
  return o;
}

json_t *out__step_json(const wl_step *s, const cfg_scenario *cfg) {
  wl_memory mem;
  wl_memory_compute(&mem, &s->model, &s->parallel, cfg);
  return step_json(s, &s->model, &s->parallel, cfg, &mem);
}

/* The pipeline's stages in one line: the spread of their compute, and the
 * stage that computes longest with its parts and memory. */
static void print_stages(const wl_step *s, const cfg_scenario *cfg) {
  char a[64], b[64], c[64], d[64];
  uint32_t slow = 0, lo = UINT32_MAX, hi = 0;
  for (uint32_t i = 0; i < s->nstages; i++) {
    const wl_stage_time *x = &s->stages[i];
    if (x->compute_s > s->stages[slow].compute_s) slow = i;
    lo = x->layers < lo ? x->layers : lo;
    hi = x->layers > hi ? x->layers : hi;
  }
  const wl_stage_time *x = &s->stages[slow];
  wl_memory sm;
  wl_memory_stage(&sm, &s->model, &s->parallel, cfg, slow);
  printf("  stages     %u of %u", s->nstages, lo); /* "4 of 20-21 layers" */
  if (hi > lo) printf("-%u", hi);
  printf(
      " layers; longest compute: stage %u (%u layers%s%s) %s + exposed comm %s + bubble %s, "
      "%s\n",
      slow, x->layers, x->embedding ? " + embedding" : "", x->head ? " + output layer" : "",
      sim_fmt_seconds(a, sizeof a, x->compute_s), sim_fmt_seconds(b, sizeof b, x->exposed_comm_s),
      sim_fmt_seconds(c, sizeof c, x->bubble_s),
      sim_fmt_bytes(d, sizeof d, (uint64_t)(double)round_int(sm.total)));
}

void out__step_text(const wl_step *s, const cfg_scenario *cfg) {
  char a[64], b[64], c[64], d[64];
  const wl_parallel *par = &s->parallel;
  wl_memory mem;
  wl_memory_compute(&mem, &s->model, par, cfg);
  double params = (double)round_int(s->model.params); /* as summary.json's integer */
  if (params >= 1e9)
    snprintf(a, sizeof a, "%s B", sim_fmt(b, sizeof b, params / 1e9, SIM_UNIT_NUMBER));
  else sim_fmt_count(a, sizeof a, (uint64_t)params);
  printf("training     %s, %s params, dp %d x tp %d x pp %d", wl_model_kind_name(s->model.kind), a,
         (int)par->dp, (int)par->tp, (int)par->pp);
  if (par->ep > 1) printf(" (ep %d)", (int)par->ep);
  int mb = (int)par->micro_batches;
  printf(", ZeRO %d, %d micro-batch%s of %d\n", (int)par->zero, mb, mb == 1 ? "" : "es",
         (int)par->micro_batch);
  printf("  step       %s = compute %s + exposed comm %s + bubble %s\n",
         sim_fmt_seconds(a, sizeof a, s->time_s), sim_fmt_seconds(b, sizeof b, s->compute_s),
         sim_fmt_seconds(c, sizeof c, s->exposed_comm_s),
         sim_fmt_seconds(d, sizeof d, s->bubble_s));
  printf(
      "  compute    %s memory-bound (%s bound by HBM bandwidth); %s lost to the SMs of "
      "communication kernels\n",
      sim_fmt(c, sizeof c, s->memory_bound_frac, SIM_UNIT_PERCENT),
      sim_fmt_seconds(a, sizeof a, s->memory_bound_s),
      sim_fmt_seconds(b, sizeof b, s->comm_sm_lost_s));
  printf("  GPUs       %s idle, MFU %s, %s tokens/s\n",
         sim_fmt(b, sizeof b, s->gpu_idle_frac, SIM_UNIT_PERCENT),
         sim_fmt(c, sizeof c, s->mfu, SIM_UNIT_PERCENT),
         sim_fmt_count(a, sizeof a, (uint64_t)llround(s->tokens_per_s)));
  printf("  memory     %s per GPU of %s%s\n",
         sim_fmt_bytes(a, sizeof a, (uint64_t)(double)round_int(mem.total)),
         sim_fmt_bytes(b, sizeof b, (uint64_t)(double)round_int(mem.gpu_memory)),
         mem.fits ? "" : " (does NOT fit: see fabsim memory)");
  if (s->nstages > 1) print_stages(s, cfg);
  for (int k = 0; k < WL_COMM_KINDS; k++) {
    const wl_comm_total *t = &s->comm[k];
    if (!t->count) continue;
    printf("  %-18s %6s x over %3d ranks, %s, %s in all\n", wl_comm_kind_name((wl_comm_kind)k),
           sim_fmt_count(c, sizeof c, (uint64_t)t->count), (int)t->group,
           sim_fmt_bytes(a, sizeof a, (uint64_t)(double)t->bytes),
           sim_fmt_seconds(b, sizeof b, t->time_s));
  }
  printf("  collectives %s (%s DAG nodes, %s distinct collectives)\n",
         cfg_comm_model_name(s->comm_model), sim_fmt_count(a, sizeof a, (uint64_t)(double)s->nodes),
         sim_fmt_count(b, sizeof b, (uint64_t)(double)s->classes));
}
