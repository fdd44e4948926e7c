/* Model parameter counts and per-GPU memory against closed forms: the ZeRO
 * formulas and the activation formula of MODEL-INPUTS.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/workload.h"
#include "fixture.h"

typedef struct setup {
  fixture f;
  wl_model m;
  wl_parallel p;
} setup;

static void prepare(setup *s, const char *const *sets, int n) {
  sim_error err = {0};
  load(&s->f, sets, n);
  if (wl_model_from_cfg(&s->m, &s->f.cfg, s->f.doc, &err) != SIM_OK) fail_msg("%s", err.msg);
  if (wl_parallel_from_cfg(&s->p, &s->m, &s->f.cfg, s->f.doc, topo_gpu_count(s->f.t), &err) !=
      SIM_OK)
    fail_msg("%s", err.msg);
}

static void assert_close(double got, double want) {
  if (fabs(got - want) > 1e-9 * fabs(want)) fail_msg("got %.17g, want %.17g", got, want);
}

/* A small dense transformer without embeddings: P = L x 12 h^2 exactly. */
#define SMALL                                                                 \
  "cluster.nodes=1", "workload.model.layers=4", "workload.model.hidden=1024", \
      "workload.model.heads=16", "workload.model.seq_len=2048", "workload.model.vocab=0"

static void test_param_counts(void **state) {
  (void)state;
  setup s;
  const char *mlp[] = {"cluster.nodes=1", "workload.model.mlp_layers=[784,128,10]"};
  prepare(&s, mlp, 2);
  assert_int_equal(s.m.kind, WL_MODEL_MLP);
  assert_close(s.m.params, 784 * 128 + 128 + 128 * 10 + 10); /* 101,770 */
  assert_int_equal(s.m.layers, 2);
  unload(&s.f);

  const char *dense[] = {SMALL};
  prepare(&s, dense, 6);
  assert_close(s.m.params, 4 * 12.0 * 1024 * 1024);
  assert_close(s.m.params_active, s.m.params);
  unload(&s.f);

  /* Llama-2-7B shape: SwiGLU 11008, vocab 32000 -> 6.74 B. */
  const char *llama[] = {"workload.model.ffn_hidden=11008", "workload.model.gated_ffn=true"};
  prepare(&s, llama, 2);
  double h = 4096, want = 32 * (4 * h * h + 3 * h * 11008) + 2 * 32000 * h;
  assert_close(s.m.params, want);
  assert_true(fabs(s.m.params - 6.74e9) < 0.01e9);
  unload(&s.f);

  /* MoE: 2 dense layers then 6 MoE layers of 16 experts (top 2, 1 shared). */
  const char *moe[] = {"workload.model.layers=8",         "workload.model.hidden=512",
                       "workload.model.heads=8",          "workload.model.vocab=1000",
                       "workload.model.experts=16",       "workload.model.top_k=2",
                       "workload.model.shared_experts=1", "workload.model.expert_hidden=256",
                       "workload.model.dense_layers=2"};
  prepare(&s, moe, 9);
  h = 512;
  double attn = 4 * h * h, ffn = 2 * h * 4 * h, ex = 2 * h * 256, router = h * 16,
         emb = 2 * 1000 * h;
  assert_int_equal(s.m.kind, WL_MODEL_MOE);
  assert_close(s.m.params, emb + 2 * (attn + ffn) + 6 * (attn + router + 17 * ex));
  assert_close(s.m.params_active, emb + 2 * (attn + ffn) + 6 * (attn + router + 3 * ex));
  assert_close(wl_layer_expert_params(&s.m, 5), 16 * ex);
  assert_close(wl_layer_expert_params(&s.m, 1), 0);
  unload(&s.f);

  /* A given count scales every part; the shape stays. */
  const char *given[] = {"workload.model.params=70e9"};
  prepare(&s, given, 1);
  assert_close(s.m.params, 70e9);
  double sum = s.m.embedding + s.m.head;
  for (uint32_t l = 0; l < s.m.layers; l++) sum += wl_layer_params(&s.m, l, false);
  assert_close(sum, 70e9);
  unload(&s.f);
}

/* ZeRO: 16P, 4P + 12P/Nd, 2P + 14P/Nd, 16P/Nd for mixed-precision Adam. */
static void test_zero_stages(void **state) {
  (void)state;
  const char *z[4] = {"workload.parallel.zero=0", "workload.parallel.zero=1",
                      "workload.parallel.zero=2", "workload.parallel.zero=3"};
  for (int stage = 0; stage < 4; stage++) {
    setup s;
    const char *sets[] = {SMALL, z[stage]};
    prepare(&s, sets, 7);
    double P = s.m.params, Nd = s.p.dp;
    assert_int_equal(s.p.dp, 8);
    wl_memory mem;
    wl_memory_compute(&mem, &s.m, &s.p, &s.f.cfg);
    double states = mem.weights + mem.gradients + mem.optimizer;
    static const double fixed[4] = {16, 4, 2, 0}, sharded[4] = {0, 12, 14, 16};
    assert_close(states, fixed[stage] * P + sharded[stage] * P / Nd);
    assert_close(mem.weights, stage >= 3 ? 2 * P / Nd : 2 * P);
    assert_close(mem.total, states + mem.activations);
    assert_close(mem.gpu_memory, 80.0 * (1ull << 30));
    unload(&s.f);
  }
  /* fp32 Adam: 4 + 4 + 8; mixed SGD with momentum: 2 + 2 + 8. */
  setup s;
  const char *fp32[] = {SMALL, "workload.precision=fp32"};
  prepare(&s, fp32, 7);
  wl_memory mem;
  wl_memory_compute(&mem, &s.m, &s.p, &s.f.cfg);
  assert_close(mem.weights + mem.gradients + mem.optimizer, 16 * s.m.params);
  assert_close(mem.optimizer, 8 * s.m.params);
  unload(&s.f);
  const char *sgd[] = {SMALL, "workload.optimizer=sgd"};
  prepare(&s, sgd, 7);
  wl_memory_compute(&mem, &s.m, &s.p, &s.f.cfg);
  assert_close(mem.weights + mem.gradients + mem.optimizer, 12 * s.m.params);
  unload(&s.f);
}

/* Korthikanti et al.'s setting (arXiv 2205.05198 sec. 4.1): attention
 * scores stored (no FlashAttention), dropout after them and after the two
 * projections, 16-bit. */
#define KORTHIKANTI "workload.attention=unfused", "workload.model.dropout=true"

/* Activations, Table 2 of Korthikanti et al.: s b h (34 + 5 a s / h) / t
 * with sequence parallelism, s b h (10 + 24/t + 5 a s / (h t)) without;
 * selective recomputation drops the 5 a s / h; full keeps 2 s b h (/t with
 * sequence parallelism); x L layers on stage 0. */
static void test_activations(void **state) {
  (void)state;
  double sb = 2048.0 * 2, h = 1024, a = 16, sq = 2048, L = 4;
  const char *tps[] = {"workload.parallel.tp=1", "workload.parallel.tp=2",
                       "workload.parallel.tp=4"};
  for (int i = 0; i < 3; i++) {
    for (int sp = 0; sp < 2; sp++) {
      setup s;
      const char *sets[] = {SMALL, KORTHIKANTI, tps[i], "workload.micro_batch=2",
                            sp ? "workload.parallel.sequence_parallel=true"
                               : "workload.parallel.sequence_parallel=false"};
      prepare(&s, sets, 11);
      double t = s.p.tp;
      double layer =
          sp ? sb * h * (34 + 5 * a * sq / h) / t : sb * h * (10 + 24 / t + 5 * a * sq / (h * t));
      wl_memory mem;
      wl_memory_compute(&mem, &s.m, &s.p, &s.f.cfg);
      assert_close(mem.activations, L * layer);
      double sel = sp ? sb * h * 34 / t : sb * h * (10 + 24 / t);
      assert_close(mem.activations_by_recompute[CFG_RECOMPUTE_SELECTIVE], L * sel);
      double input = 2 * sb * h / (sp ? t : 1);
      assert_close(mem.activations_by_recompute[CFG_RECOMPUTE_FULL], L * input + layer);
      assert_close(
          wl_layer_activations(&s.m, &s.p, s.f.cfg.workload.precision, 0, CFG_RECOMPUTE_NONE),
          layer);
      unload(&s.f);
    }
  }
  /* Pipeline 1F1B: stage 0 holds min(pp, m) micro-batches of its L/pp layers,
   * so L layers' worth for one micro-batch; the last stage holds one. */
  setup s;
  const char *pp[] = {SMALL, KORTHIKANTI, "workload.parallel.pp=2", "workload.global_batch=16"};
  prepare(&s, pp, 10);
  assert_int_equal(s.p.dp, 4);
  assert_int_equal(s.p.micro_batches, 4);
  double layer = 2048.0 * h * (34 + 5 * a * sq / h);
  wl_memory m0, m1;
  wl_memory_stage(&m0, &s.m, &s.p, &s.f.cfg, 0);
  wl_memory_stage(&m1, &s.m, &s.p, &s.f.cfg, 1);
  assert_close(m0.activations, L * layer);
  assert_close(m1.activations, 2 * layer);
  assert_close(m0.weights, 2 * s.m.params / 2);
  unload(&s.f);
  /* fp32 doubles all but the dropout masks (a byte per element: s b (a s +
   * 2 h)); the last stage adds fp32 logits 4 s b v / t. */
  const char *fp32[] = {"cluster.nodes=1",
                        "workload.model.layers=2",
                        "workload.model.hidden=1024",
                        "workload.model.heads=16",
                        "workload.model.seq_len=2048",
                        "workload.model.vocab=5000",
                        "workload.precision=fp32",
                        KORTHIKANTI};
  prepare(&s, fp32, 9);
  wl_memory mem;
  wl_memory_compute(&mem, &s.m, &s.p, &s.f.cfg);
  double masks = 2048.0 * (a * sq + 2 * h);
  assert_close(mem.activations, 2 * (2 * layer - masks) + 4.0 * 2048 * 5000);
  unload(&s.f);
  /* MLP: (in + out) x batch x 2 bytes per layer. */
  const char *mlp[] = {"cluster.nodes=1", "workload.model.mlp_layers=784,128,10",
                       "workload.micro_batch=32"};
  prepare(&s, mlp, 3);
  wl_memory_compute(&mem, &s.m, &s.p, &s.f.cfg);
  assert_close(mem.activations, ((784 + 128) + (128 + 10)) * 32.0 * 2);
  assert_close(mem.weights, 2 * 101770.0);
  assert_close(mem.params_per_gpu, 101770);
  unload(&s.f);
}

/* Experts are sharded over ep, and ZeRO shards them over dp / ep. */
/* Activations held by the schedule on stage 0, in layers' worth of one
 * micro-batch: 1F1B holds L (pp micro-batches of L/pp layers); interleaved
 * with v chunks holds L (1 + (pp-1)/(pp v)) (Narayanan et al. 2021, sec.
 * 2.2.2: its 2 (pp-1) + (v-1) pp + 1 warm-up chunks of L/(v pp) layers);
 * DualPipe holds pp + 1 chunks of L/pp layers (DeepSeek-V3 Table 2). */
static void test_schedule_activations(void **state) {
  (void)state;
  const char *cases[][3] = {
      {"workload.pipeline.schedule=1f1b", "workload.parallel.virtual_stages=1", "16"},
      {"workload.pipeline.schedule=interleaved", "workload.parallel.virtual_stages=2", "16"},
      {"workload.pipeline.schedule=interleaved", "workload.parallel.virtual_stages=4", "16"},
      {"workload.pipeline.schedule=dualpipe", "workload.parallel.virtual_stages=1", "16"},
  };
  double L = 16, pp = 4;
  for (int i = 0; i < 4; i++) {
    setup s;
    const char *sets[] = {"cluster.nodes=1",
                          "workload.model.layers=16",
                          "workload.model.hidden=1024",
                          "workload.model.heads=16",
                          "workload.model.seq_len=2048",
                          "workload.model.vocab=0",
                          "workload.parallel.pp=4",
                          "workload.global_batch=16",
                          cases[i][0],
                          cases[i][1]};
    prepare(&s, sets, 10);
    double layer =
        wl_layer_activations(&s.m, &s.p, s.f.cfg.workload.precision, 0, CFG_RECOMPUTE_NONE);
    wl_memory mem;
    wl_memory_stage(&mem, &s.m, &s.p, &s.f.cfg, 0);
    double v = s.p.vstages;
    double want = i == 0 ? L : i < 3 ? L * (1 + (pp - 1) / (pp * v)) : (pp + 1) * L / pp;
    assert_close(mem.activations, want * layer);
    unload(&s.f);
  }
}

/* The split over stages (Megatron-LM's --decoder-first/last-pipeline-num-
 * layers): the chunks cover the layers in virtual-stage order with no gap;
 * without end counts, floor(k L / n) as before; with them, stage 0 and the
 * last stage hold what is given (split over their chunks, the lighter chunk
 * at the model's ends) and the others share the rest evenly. Llama 3 405B
 * (arXiv 2407.21783 sec. 3.3.2): 126 layers, 16 stages x 2 chunks, one
 * layer fewer on each end stage: 7 + 14 x 8 + 7. */
static void check_cover(const setup *s) {
  uint32_t n = s->p.schedule == CFG_SCHED_INTERLEAVED ? s->p.pp * s->p.vstages : s->p.pp, at = 0;
  for (uint32_t k = 0; k < n; k++) {
    wl_chunk c;
    wl_stage_chunk(&s->m, &s->p, k % s->p.pp, k / s->p.pp, &c);
    assert_int_equal(c.first, at);
    assert_true(c.count >= 1);
    assert_int_equal(c.embedding, k == 0);
    assert_int_equal(c.head, k == n - 1);
    at += c.count;
  }
  assert_int_equal(at, s->m.layers);
}

static void test_stage_split(void **state) {
  (void)state;
  setup s;
  const char *llama[] = {"cluster.nodes=32",
                         "workload.model.layers=126",
                         "workload.parallel.tp=8",
                         "workload.parallel.pp=16",
                         "workload.pipeline.schedule=interleaved",
                         "workload.parallel.virtual_stages=2",
                         "workload.global_batch=32",
                         "workload.pipeline.first_stage_layers=7",
                         "workload.pipeline.last_stage_layers=7"};
  prepare(&s, llama, 9);
  check_cover(&s);
  wl_chunk c;
  wl_stage_chunk(&s.m, &s.p, 0, 0, &c);
  assert_int_equal(c.count, 3); /* with the embedding */
  wl_stage_chunk(&s.m, &s.p, 0, 1, &c);
  assert_int_equal(c.count, 4);
  wl_stage_chunk(&s.m, &s.p, 15, 0, &c);
  assert_int_equal(c.count, 4);
  wl_stage_chunk(&s.m, &s.p, 15, 1, &c);
  assert_int_equal(c.count, 3); /* with the output layer */
  for (uint32_t st = 0; st < 16; st++)
    assert_int_equal(wl_stage_layer_count(&s.m, &s.p, st), st == 0 || st == 15 ? 7 : 8);
  unload(&s.f);
  /* no end counts: floor(k L / n) over the virtual stages, as before */
  prepare(&s, llama, 7);
  check_cover(&s);
  for (uint32_t k = 0; k < 32; k++) {
    wl_stage_chunk(&s.m, &s.p, k % 16, k / 16, &c);
    assert_int_equal(c.first, k * 126 / 32);
    assert_int_equal(c.count, (k + 1) * 126 / 32 - k * 126 / 32);
  }
  unload(&s.f);
  /* 1F1B, one end given: 61 layers on 16 stages, 1 on the last, 60 / 15 = 4 elsewhere */
  const char *one[] = {"cluster.nodes=2", "workload.model.layers=61", "workload.model.heads=16",
                       "workload.parallel.pp=16", "workload.pipeline.last_stage_layers=1"};
  prepare(&s, one, 5);
  check_cover(&s);
  for (uint32_t st = 0; st < 16; st++)
    assert_int_equal(wl_stage_layer_count(&s.m, &s.p, st), st == 15 ? 1 : 4);
  unload(&s.f);
  /* DualPipe: GPU s holds stages s and pp - 1 - s of the same split */
  const char *dual[] = {"cluster.nodes=1",
                        "workload.model.layers=10",
                        "workload.parallel.pp=4",
                        "workload.pipeline.schedule=dualpipe",
                        "workload.global_batch=16",
                        "workload.pipeline.first_stage_layers=1",
                        "workload.pipeline.last_stage_layers=3"};
  prepare(&s, dual, 7);
  check_cover(&s);
  assert_int_equal(wl_stage_layer_count(&s.m, &s.p, 0), 1 + 3);
  assert_int_equal(wl_stage_layer_count(&s.m, &s.p, 1), 3 + 3);
  unload(&s.f);
}

/* Recomputation on the memory side (Megatron-LM's names): full uniform
 * keeps each group of N layers' input; block recomputes the first N layers
 * of the chunk and keeps the rest whole; the backward recomputes a group
 * after freeing the later layers, holding the checkpoints up to it and its
 * activations (the peak: the last group, or for block nothing above what
 * was kept once the kept layers are freed); selective drops its modules'
 * tensors. One stage of 4
 * layers (h = 1024, s = 2048, a = 16, tp 1, 16-bit, FlashAttention): a
 * layer keeps per token 2h + 2h (norm 1 in, out) + 6h (Q K V) + 4a (the
 * logsumexp) + 2h (O) + 2h + 2h (norm 2 in, out) + 8h + 8h (GELU in, out)
 * = 32h + 4a. */
static void test_recompute_memory(void **state) {
  (void)state;
  double T = 2048, h = 1024, a = 16, layer = T * (32 * h + 4 * a), input = 2 * T * h;
  struct {
    const char *a, *b, *c;
    double want;
  } cases[] = {
      {"workload.recompute=none", NULL, NULL, 4 * layer},
      {"workload.recompute=selective", NULL, NULL, 4 * (layer - T * 4 * a)}, /* core_attn */
      {"workload.recompute=selective", "workload.recompute_modules=[layernorm]", NULL,
       4 * (layer - T * 4 * h)},
      {"workload.recompute=selective", "workload.recompute_modules=[mlp]", NULL,
       4 * (layer - T * 16 * h)}, /* keeps its input (the norm's output) only */
      {"workload.recompute=full", NULL, NULL, 4 * input + layer},
      {"workload.recompute=full", "workload.recompute_layers=2", NULL, 2 * input + 2 * layer},
      {"workload.recompute=full", "workload.recompute_layers=3", NULL, input + 3 * layer},
      {"workload.recompute=full", "workload.recompute_method=block", "workload.recompute_layers=1",
       input + 3 * layer},
      {"workload.recompute=full", "workload.recompute_method=block", "workload.recompute_layers=4",
       4 * input + layer},
      {"workload.recompute=full", "workload.recompute_method=block", "workload.recompute_layers=0",
       4 * layer},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    setup s;
    const char *sets[] = {SMALL, cases[i].a, cases[i].b, cases[i].c};
    prepare(&s, sets, 7 + (cases[i].b != NULL) + (cases[i].c != NULL));
    wl_memory mem;
    wl_memory_compute(&mem, &s.m, &s.p, &s.f.cfg);
    assert_close(mem.activations, cases[i].want);
    unload(&s.f);
  }
  /* fp8 keeps GEMM-only inputs in a byte: the two norm outputs (QKV, up
   * inputs) and the GELU output: 32h - (h + h + 4h) */
  setup s;
  const char *fp8[] = {SMALL, "workload.precision=fp8"};
  prepare(&s, fp8, 7);
  assert_close(wl_layer_activations(&s.m, &s.p, CFG_PRECISION_FP8, 0, CFG_RECOMPUTE_NONE),
               T * (26 * h + 4 * a));
  unload(&s.f);
  /* MoE (8 experts of width 512, top 2, 1 shared, gated): per token 2h + 2h (norm 2 in, out) +
   * 4E (router) + k 2h (dispatched) + (k + shared) f_e (2 x 2 + 2) */
  const char *moe[] = {SMALL,
                       "workload.model.experts=8",
                       "workload.model.top_k=2",
                       "workload.model.shared_experts=1",
                       "workload.model.expert_hidden=512",
                       "workload.model.gated_ffn=true"};
  prepare(&s, moe, 11);
  double attn = 2 * h + 2 * h + 6 * h + 4 * a + 2 * h;
  assert_close(wl_layer_activations(&s.m, &s.p, CFG_PRECISION_BF16, 1, CFG_RECOMPUTE_NONE),
               T * (attn + 4 * h + 4 * 8 + 2 * 2 * h + 3 * 512 * 6));
  unload(&s.f);
  /* torchtitan's selective op (gated feed-forward of width 3h, 16-bit):
   * the layer's input 2h, Q's and V's projections 2h + 2h, the core's
   * output 2h and logsumexp 4a, the gate's output 2 x 3h, the down
   * projection's output 2h: 16h + 4a; fp8 keeps the same 16-bit tensors */
  const char *op[] = {SMALL, "workload.model.gated_ffn=true", "workload.model.ffn_hidden=3072",
                      "workload.recompute=selective", "workload.recompute_modules=[op]"};
  prepare(&s, op, 10);
  assert_close(wl_layer_activations(&s.m, &s.p, CFG_PRECISION_BF16, 0, CFG_RECOMPUTE_SELECTIVE),
               T * (16 * h + 4 * a));
  assert_close(wl_layer_activations(&s.m, &s.p, CFG_PRECISION_FP8, 0, CFG_RECOMPUTE_SELECTIVE),
               T * (16 * h + 4 * a));
  unload(&s.f);
}

static void test_expert_sharding(void **state) {
  (void)state;
  setup s;
  const char *moe[] = {
      "cluster.nodes=2",        "workload.model.layers=2", "workload.model.hidden=512",
      "workload.model.heads=8", "workload.model.vocab=0",  "workload.model.experts=16",
      "workload.model.top_k=2", "workload.parallel.ep=4",  "workload.parallel.zero=1"};
  prepare(&s, moe, 9);
  assert_int_equal(s.p.dp, 16);
  double E = wl_layer_expert_params(&s.m, 0) + wl_layer_expert_params(&s.m, 1);
  double D = s.m.params - E;
  wl_memory mem;
  wl_memory_compute(&mem, &s.m, &s.p, &s.f.cfg);
  assert_close(mem.params_per_gpu, D + E / 4);
  assert_close(mem.optimizer, 12 * (D / 16 + (E / 4) / 4));
  unload(&s.f);
}

/* 70 B on 64 GPUs does not fit unsplit; the suggestion is the smallest
 * tp x pp that fits, and no smaller one does. */
static void test_search(void **state) {
  (void)state;
  setup s;
  const char *big[] = {"cluster.nodes=8",          "workload.model.params=70e9",
                       "workload.model.layers=80", "workload.model.hidden=8192",
                       "workload.model.heads=64",  "workload.global_batch=256"};
  prepare(&s, big, 6);
  wl_memory mem, bm;
  wl_parallel best;
  wl_memory_compute(&mem, &s.m, &s.p, &s.f.cfg);
  assert_false(mem.fits);
  assert_true(wl_memory_search(&best, &bm, &s.m, &s.p, &s.f.cfg));
  assert_true(bm.fits);
  assert_int_equal((uint64_t)best.dp * best.tp * best.pp, 64);
  uint32_t mp = best.tp * best.pp;
  for (uint32_t tp = 1; tp <= 8; tp *= 2)
    for (uint32_t pp = 1; tp * pp < mp; pp++) {
      if (64 % (tp * pp)) continue;
      wl_parallel q = s.p;
      q.tp = tp, q.pp = pp, q.dp = 64 / (tp * pp), q.micro_batches = 256 / q.dp;
      for (uint32_t z = 0; z <= 3; z++)
        for (int rc = 0; rc < 3; rc++) {
          q.zero = z, q.recompute = (cfg_recompute)rc;
          wl_memory mm;
          wl_memory_compute(&mm, &s.m, &q, &s.f.cfg);
          assert_false(mm.fits);
        }
    }
  unload(&s.f);
  /* Nothing fits: 1 T parameters on one node. */
  const char *huge[] = {"cluster.nodes=1", "workload.model.params=1e12"};
  prepare(&s, huge, 2);
  assert_false(wl_memory_search(&best, &bm, &s.m, &s.p, &s.f.cfg));
  unload(&s.f);
}

/* The error must be located at the value of --set number `at` (1-based). */
static void expect_error(const char *const *sets, int n, int at, const char *text) {
  fixture f;
  wl_model m;
  wl_parallel p;
  sim_error err = {0};
  char msg[512];
  snprintf(msg, sizeof msg, "--set:%d:%d: %s", at,
           (int)(strchr(sets[at - 1], '=') - sets[at - 1]) + 2, text);
  load(&f, sets, n);
  int rc = wl_model_from_cfg(&m, &f.cfg, f.doc, &err);
  if (rc == SIM_OK) rc = wl_parallel_from_cfg(&p, &m, &f.cfg, f.doc, topo_gpu_count(f.t), &err);
  assert_int_equal(rc, SIM_ECONFIG);
  if (strcmp(err.msg, msg)) fail_msg("got:  %s\nwant: %s", err.msg, msg);
  unload(&f);
}

static void test_errors(void **state) {
  (void)state;
  const char *a[] = {"cluster.nodes=1", "workload.parallel.tp=3"};
  expect_error(a, 2, 2,
               "workload.parallel.tp: 3 does not divide the 32 attention heads "
               "(workload.model.heads)");
  const char *b[] = {"cluster.nodes=1", "workload.parallel.dp=4", "workload.parallel.tp=4"};
  expect_error(b, 3, 2, "workload.parallel.dp: dp x tp x pp = 16 GPUs but the job has 8");
  const char *c[] = {"cluster.nodes=1", "workload.global_batch=12"};
  expect_error(c, 2, 2,
               "workload.global_batch: 12 sequences is not a multiple of dp x "
               "micro_batch = 8");
  const char *d[] = {"cluster.nodes=1", "workload.model.mlp_layers=[784]"};
  expect_error(d, 2, 2,
               "workload.model.mlp_layers: an MLP needs at least two widths (input "
               "and output), got 1");
  const char *e[] = {"cluster.nodes=1", "workload.parallel.ep=2"};
  expect_error(e, 2, 2,
               "workload.parallel.ep: expert parallelism needs experts "
               "(workload.model.experts > 0); use 1");
  const char *g[] = {"cluster.nodes=1", "workload.model.experts=8", "workload.model.top_k=9"};
  expect_error(g, 3, 3,
               "workload.model.top_k: 9 exceeds the 8 routed experts "
               "(workload.model.experts)");
  const char *h[] = {"cluster.nodes=1", "workload.model.experts=8", "workload.parallel.ep=16",
                     "workload.parallel.dp=1"};
  expect_error(h, 4, 3,
               "workload.parallel.ep: 16 does not divide the 8 experts "
               "(workload.model.experts)");
  const char *i[] = {"cluster.nodes=1", "workload.compute_efficiency=1.5"};
  expect_error(i, 2, 2,
               "workload.compute_efficiency: 1.5 is above 1; it is a fraction of "
               "the GPU's peak");
  const char *k[] = {"cluster.nodes=1", "workload.recompute=selective",
                     "workload.recompute_modules=[op, layernorm]"};
  expect_error(k, 3, 3,
               "workload.recompute_modules: op (torchtitan's selective op policy) with other "
               "modules; op stands alone");
  const char *j[] = {"cluster.nodes=1", "workload.parallel.pp=40"};
  expect_error(j, 2, 2,
               "workload.parallel.pp: 40 stages for 32 layers; every stage needs "
               "at least one layer");
}

static void test_rank_placement(void **state) {
  (void)state;
  wl_parallel p = {.dp = 4, .tp = 2, .pp = 3};
  p.order = CFG_ORDER_TP_PP_DP;
  assert_int_equal(wl_rank_gpu(&p, 0, 0, 1), 1);
  assert_int_equal(wl_rank_gpu(&p, 0, 1, 0), 2);
  assert_int_equal(wl_rank_gpu(&p, 1, 0, 0), 6);
  p.order = CFG_ORDER_TP_DP_PP;
  assert_int_equal(wl_rank_gpu(&p, 1, 0, 0), 2);
  assert_int_equal(wl_rank_gpu(&p, 0, 1, 0), 8);
  p.order = CFG_ORDER_DP_PP_TP;
  assert_int_equal(wl_rank_gpu(&p, 1, 0, 0), 1);
  assert_int_equal(wl_rank_gpu(&p, 0, 1, 0), 4);
  assert_int_equal(wl_rank_gpu(&p, 0, 0, 1), 12);
  /* every order is a bijection onto 0 .. 23 */
  for (int o = 0; o <= CFG_ORDER_DP_PP_TP; o++) {
    bool seen[24] = {0};
    p.order = (cfg_rank_order)o;
    for (uint32_t d = 0; d < 4; d++)
      for (uint32_t s = 0; s < 3; s++)
        for (uint32_t t = 0; t < 2; t++) {
          uint32_t g = wl_rank_gpu(&p, d, s, t);
          assert_true(g < 24 && !seen[g]);
          seen[g] = true;
        }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_param_counts),
      cmocka_unit_test(test_zero_stages),
      cmocka_unit_test(test_activations),
      cmocka_unit_test(test_expert_sharding),
      cmocka_unit_test(test_schedule_activations),
      cmocka_unit_test(test_search),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_rank_placement),
      cmocka_unit_test(test_stage_split),
      cmocka_unit_test(test_recompute_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
