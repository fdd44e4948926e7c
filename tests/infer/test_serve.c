/* The serving model (fabsim/infer.h) against closed forms: KV bytes per
 * token, low-load latency equal to the unloaded iterations, throughput
 * saturating at the batch- and memory-limited rates, Little's law, the
 * trace reader's checks, determinism. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/infer.h"
#include "fixture.h"

/* Llama 3 70B (Meta's config: 80 layers, hidden 8192, 64 heads, 8 KV heads,
 * SwiGLU 28672, vocab 128256) on one node of 8 H100. */
#define LLAMA70B                                                                            \
  "cluster.nodes=1", "workload.kind=inference", "workload.model.layers=80",                 \
      "workload.model.hidden=8192", "workload.model.heads=64", "workload.model.kv_heads=8", \
      "workload.model.ffn_hidden=28672", "workload.model.gated_ffn=true",                   \
      "workload.model.vocab=128256", "workload.cuda_graphs=true"

static void assert_rel(double got, double want, double rel, const char *what) {
  if (!(fabs(got - want) <= rel * fabs(want)))
    fail_msg("%s: got %.9g, want %.9g (rel %.3g)", what, got, want, rel);
}

typedef struct job_fx {
  fixture f;
  inf_job j;
} job_fx;

static void job_of(job_fx *x, const char *const *sets, int n) {
  sim_error err = {0};
  load(&x->f, sets, n);
  if (inf_job_from_cfg(&x->j, &x->f.cfg, x->f.doc, x->f.t, &err) != SIM_OK) fail_msg("%s", err.msg);
}

static void job_free(job_fx *x) {
  inf_job_free(&x->j);
  unload(&x->f);
}

static void run_job(job_fx *x, inf_result *r) {
  sim_error err = {0};
  if (inf_run(r, &x->j.model, &x->j.sched, &x->j.requests, &err) != SIM_OK) fail_msg("%s", err.msg);
}

/* The error a scenario gets, or "" when it loads. */
static void job_error(const char *const *sets, int n, char *msg, size_t cap) {
  fixture f;
  inf_job j;
  sim_error err = {0};
  load(&f, sets, n);
  int rc = inf_job_from_cfg(&j, &f.cfg, f.doc, f.t, &err);
  snprintf(msg, cap, "%s", rc == SIM_OK ? "" : err.msg);
  inf_job_free(&j);
  unload(&f);
}

/* 2 x layers x kv_heads x head_dim x bytes; per GPU the heads split over
 * tp, at least one each; MLA: layers x latent x bytes, whole on each GPU;
 * capacity (0.9 HBM - weights / tp) over the per-GPU bytes, whole blocks. */
static void test_kv_bytes(void **state) {
  (void)state;
  job_fx x;
  const char *s8[] = {LLAMA70B, "workload.inference.tp=8", "workload.inference.requests=1"};
  job_of(&x, s8, sizeof s8 / sizeof *s8);
  const inf_model *m = &x.j.model;
  assert_rel(m->kv_token_bytes, 2.0 * 80 * 8 * 128 * 2, 1e-12, "kv bytes a token");
  assert_rel(m->kv_token_gpu, 2.0 * 80 * 1 * 128 * 2, 1e-12, "kv bytes a token a GPU");
  double budget = 0.9 * 80 * 1073741824.0 - m->m.params * 2 / 8;
  uint64_t blocks = (uint64_t)floor(budget / (m->kv_token_gpu * 16));
  assert_int_equal(m->kv_blocks, blocks);
  assert_int_equal(m->kv_tokens, blocks * 16);
  assert_true(m->m.params > 70e9 && m->m.params < 71e9);
  job_free(&x);

  /* 4 KV heads on 8 GPUs: one head each, replicated */
  const char *s4[] = {LLAMA70B, "workload.model.kv_heads=4", "workload.inference.tp=8",
                      "workload.inference.requests=1"};
  job_of(&x, s4, sizeof s4 / sizeof *s4);
  assert_rel(x.j.model.kv_token_bytes, 2.0 * 80 * 4 * 128 * 2, 1e-12, "kv bytes, 4 heads");
  assert_rel(x.j.model.kv_token_gpu, 2.0 * 80 * 1 * 128 * 2, 1e-12, "a head each");
  job_free(&x);

  /* MLA (DeepSeek-V3: 61 layers, latent 512 + 64), fp8 cache */
  const char *mla[] = {LLAMA70B,
                       "workload.model.layers=61",
                       "workload.inference.kv_latent=576",
                       "workload.inference.kv_bytes=1",
                       "workload.inference.tp=8",
                       "workload.inference.requests=1"};
  job_of(&x, mla, sizeof mla / sizeof *mla);
  assert_rel(x.j.model.kv_token_bytes, 61.0 * 576, 1e-12, "MLA latent a token");
  assert_rel(x.j.model.kv_token_gpu, 61.0 * 576, 1e-12, "MLA latent on every GPU");
  job_free(&x);
}

/* One request alone: its TTFT is its prompt's iteration, its latency that
 * plus output - 1 decodes of batch 1, each from the cost model; and a
 * decode of batch 1 reads the weights: at least weights / HBM, and within
 * the roofline's kernels, launch gaps and AllReduces of it. */
static void test_low_load(void **state) {
  (void)state;
  job_fx x;
  const char *one[] = {LLAMA70B, "workload.inference.tp=8", "workload.inference.requests=1",
                       "workload.inference.prompt_tokens=1000",
                       "workload.inference.output_tokens=100"};
  job_of(&x, one, sizeof one / sizeof *one);
  const inf_model *m = &x.j.model;
  inf_batch pre = {.prefill_seqs = 1,
                   .prefill_tokens = 1000,
                   .prefill_pairs = 1000.0 * 1001 / 2,
                   .prefill_kv = 1000,
                   .sampled = 1};
  double ttft = nearbyint(inf_iter_s(m, &pre, NULL) * 1e12) * 1e-12, e2e = ttft;
  for (int j = 1; j < 100; j++) {
    inf_batch d = {.decode_seqs = 1, .decode_kv = 1000.0 + j, .sampled = 1};
    e2e += nearbyint(inf_iter_s(m, &d, NULL) * 1e12) * 1e-12;
  }
  inf_result r;
  run_job(&x, &r);
  assert_int_equal(r.completed, 1);
  assert_rel(r.ttft.p50, ttft, 1e-9, "ttft alone");
  assert_rel(r.e2e.p50, e2e, 1e-9, "e2e alone");
  assert_rel(r.tpot.p50, (e2e - ttft) / 99, 1e-9, "tpot alone");
  /* the decode's weight read: 70.6 GB / 8 GPUs at H100's achievable HBM */
  inf_iter parts;
  inf_batch d = {.decode_seqs = 1, .decode_kv = 1001, .sampled = 1};
  double t = inf_iter_s(m, &d, &parts);
  double hbm = x.f.cfg.cluster.hbm_bandwidth / 8.0 * x.f.cfg.cluster.hbm_efficiency;
  double weights_s = m->weights_per_gpu / hbm;
  assert_true(t > weights_s);
  assert_true(parts.gemm_s > 0.95 * weights_s * (1 - 2.0 * 128256 * 8192 / m->m.params / 8));
  assert_true(t < 1.6 * weights_s + parts.comm_s);
  assert_true(parts.comm_s > 0 && parts.comm_s < t);
  /* a prompt of 1000 tokens is compute-bound: about 2 x params x tokens
   * FLOPs over tp GPUs at the GEMM plateau, plus attention */
  inf_iter pp;
  double tp_s = inf_iter_s(m, &pre, &pp);
  double flops_s = 2 * m->m.params * 1000 / 8 / (989e12 * 0.8033 * 755.5 / 852.1);
  assert_true(pp.gemm_s > 0.9 * flops_s && pp.gemm_s < 1.4 * flops_s);
  assert_true(tp_s > pp.gemm_s);
  job_free(&x);

  /* a light Poisson load: every request is alone; the mean latency is the
   * unloaded one within a percent */
  const char *light[] = {LLAMA70B,
                         "workload.inference.tp=8",
                         "workload.inference.requests=200",
                         "workload.inference.rate=0.05",
                         "workload.inference.prompt_tokens=1000",
                         "workload.inference.output_tokens=100"};
  job_of(&x, light, sizeof light / sizeof *light);
  run_job(&x, &r);
  assert_int_equal(r.completed, 200);
  assert_rel(r.ttft.mean, ttft, 0.01, "mean ttft at 0.05 requests/s");
  assert_rel(r.e2e.mean, e2e, 0.01, "mean e2e at 0.05 requests/s");
  assert_rel(r.alone_ttft_s, ttft, 1e-9, "inf_alone_s ttft");
  assert_rel(r.alone_e2e_s, e2e, 1e-9, "inf_alone_s e2e");
  job_free(&x);
}

/* An MoE decode of one sequence reads the experts its token reaches, not
 * all of them: its GEMMs take about the active parameters' bytes over the
 * HBM bandwidth (DeepSeek-V3's shape: 256 experts, 8 routed + 1 shared a
 * token, fp8 weights, on 8 H200), far below the whole model's; a batch of
 * 64 tokens reaches about 256 (1 - (1 - 8/256)^64) = 221 experts a layer. */
static void test_moe_decode(void **state) {
  (void)state;
  job_fx x;
  const char *s[] = {"cluster.nodes=1",
                     "cluster.gpu=H200",
                     "workload.kind=inference",
                     "workload.precision=fp8",
                     "workload.model.layers=61",
                     "workload.model.hidden=7168",
                     "workload.model.heads=128",
                     "workload.model.ffn_hidden=18432",
                     "workload.model.gated_ffn=true",
                     "workload.model.vocab=129280",
                     "workload.model.experts=256",
                     "workload.model.top_k=8",
                     "workload.model.shared_experts=1",
                     "workload.model.expert_hidden=2048",
                     "workload.model.dense_layers=3",
                     "workload.inference.kv_latent=576",
                     "workload.inference.tp=8",
                     "workload.inference.requests=1"};
  job_of(&x, s, sizeof s / sizeof *s);
  const inf_model *m = &x.j.model;
  double hbm = x.f.cfg.cluster.hbm_bandwidth / 8.0 * x.f.cfg.cluster.hbm_efficiency;
  inf_iter one, many;
  inf_batch d1 = {.decode_seqs = 1, .decode_kv = 2048, .sampled = 1};
  inf_iter_s(m, &d1, &one);
  /* each GEMM kernel's fixed time (gemm.c: prologue, pipeline fill), a
   * GEMM of one element: 4 GEMMs in each of the 3 dense layers, 7 in each
   * of the 58 MoE layers (QKV, output, router, the routed experts' up and
   * down, the shared expert's up and down) */
  double t0 = wl_kernels_gemm_s(x.j.kernels, false, 1, 1, 1, 1, NULL);
  double active_s = (m->m.params_active - m->m.embedding - m->m.head) / 8 / hbm;
  assert_rel(one.gemm_s, active_s + (3 * 4 + 58 * 7) * t0, 0.1,
             "MoE decode GEMMs read the active weights");
  assert_true(one.gemm_s < 0.25 * m->weights_per_gpu / hbm);
  inf_batch d64 = {.decode_seqs = 64, .decode_kv = 64 * 2048.0, .sampled = 64};
  inf_iter_s(m, &d64, &many);
  double reached = 256 * (1 - pow(1 - 8.0 / 256, 64)); /* 221.6 */
  double experts_s = 58 * reached * 3 * 7168.0 * 2048 / 8 / hbm;
  assert_true(many.gemm_s > experts_s && many.gemm_s < m->weights_per_gpu / hbm);
  assert_true(many.gemm_s <
              1.3 * (experts_s + (m->m.params_active - m->m.embedding - m->m.head) / 8 / hbm +
                     (3 * 4 + 58 * 7) * t0));
  job_free(&x);
}

/* Overloaded (every request arrives in the first second), decode-heavy:
 * output tokens/s settle at the batch's: max_batch sequences per decode
 * iteration at the mean context; with a KV cache holding only K requests,
 * at K per iteration instead (fewer, and below the batch-limited rate). */
static void test_saturation(void **state) {
  (void)state;
  job_fx x;
  const char *batch[] = {LLAMA70B,
                         "workload.inference.tp=8",
                         "workload.inference.max_batch=32",
                         "workload.inference.requests=640",
                         "workload.inference.rate=1000",
                         "workload.inference.prompt_tokens=128",
                         "workload.inference.output_tokens=1024"};
  job_of(&x, batch, sizeof batch / sizeof *batch);
  inf_result r;
  run_job(&x, &r);
  inf_batch d = {.decode_seqs = 32, .decode_kv = 32 * (128 + 512.0), .sampled = 32};
  double want = 32 / inf_iter_s(&x.j.model, &d, NULL);
  assert_rel(r.output_tps, want, 0.05, "batch-limited output tokens/s");
  assert_true(r.batch_mean > 31 && r.batch_mean <= 32);
  assert_int_equal(r.preemptions, 0);
  double batch_limited = r.output_tps;
  job_free(&x);

  /* a KV cache of 8 requests' worth (the reserve leaves 8 x 1152 tokens
   * and a block) */
  job_of(&x, batch, sizeof batch / sizeof *batch);
  double keep = 8 * (128 + 1024.0) * x.j.model.kv_token_gpu + 16 * x.j.model.kv_token_gpu;
  char reserve[64];
  snprintf(reserve, sizeof reserve, "workload.inference.kv_reserve=%.0f",
           x.j.model.kv_budget_gpu - keep);
  job_free(&x);
  const char *mem[] = {LLAMA70B,
                       "workload.inference.tp=8",
                       "workload.inference.max_batch=32",
                       "workload.inference.requests=160",
                       "workload.inference.rate=1000",
                       "workload.inference.prompt_tokens=128",
                       "workload.inference.output_tokens=1024",
                       reserve};
  job_of(&x, mem, sizeof mem / sizeof *mem);
  assert_true(x.j.model.kv_tokens >= 8 * 1152 && x.j.model.kv_tokens < 9 * 1152);
  run_job(&x, &r);
  /* a sequence holds P + D/2 tokens on average over its life: the cache
   * keeps kv_tokens / (P + D/2) of them decoding (vLLM admits on the
   * tokens held now and preempts when the cache is full) */
  double held = 128 + 1024 / 2.0, B = (double)x.j.model.kv_tokens / held;
  inf_batch dm = {.decode_seqs = (uint32_t)B, .decode_kv = (uint32_t)B * held, .sampled = 1};
  double want_mem = floor(B) / inf_iter_s(&x.j.model, &dm, NULL);
  assert_true(r.output_tps < 0.6 * batch_limited);
  assert_rel(r.output_tps, want_mem, 0.15, "memory-limited output tokens/s");
  assert_true(r.preemptions > 0);
  assert_true(r.kv_max <= 1.0 && r.kv_max > 0.9);
  job_free(&x);
}

/* Little's law: the time-averaged number of requests in the system is the
 * arrival rate times the mean time in it: exactly with the observed rate
 * (the integral of the count is the sum of the times), and within 5 % with
 * the configured one over 4000 requests. */
static void test_little(void **state) {
  (void)state;
  job_fx x;
  const char *s[] = {LLAMA70B,
                     "workload.inference.tp=4",
                     "workload.inference.replicas=2",
                     "workload.inference.dispatch=least-loaded",
                     "workload.inference.requests=4000",
                     "workload.inference.rate=6",
                     "workload.inference.prompt_tokens=512",
                     "workload.inference.output_tokens=128"};
  job_of(&x, s, sizeof s / sizeof *s);
  inf_result r;
  run_job(&x, &r);
  assert_rel(r.in_system_mean, r.rps * r.e2e.mean, 1e-6, "L = observed rate x W");
  assert_rel(r.in_system_mean, 6 * r.e2e.mean, 0.05, "L = lambda x W");
  assert_true(r.in_system_mean > 1); /* loaded enough to queue */
  /* the series: its bins cover the run and average to the run's means */
  const inf_series *q = &r.series;
  assert_true(q->nbins > INF_BINS / 2 && q->nbins <= INF_BINS);
  double T = r.span_s, last = T - (q->nbins - 1) * q->bin_s, wsum = 0, ksum = 0, peak = 0;
  assert_true(last > 0 && last <= q->bin_s * (1 + 1e-9));
  for (uint32_t i = 0; i < q->nbins; i++) {
    double w = i + 1 < q->nbins ? q->bin_s : last;
    wsum += q->waiting[i] * w, ksum += q->kv[i] * w;
    if (q->waiting[i] > peak) peak = q->waiting[i];
  }
  assert_rel(wsum / T, r.waiting_mean, 1e-6, "series' mean queue");
  assert_rel(ksum / T, r.kv_mean, 1e-6, "series' mean KV use");
  assert_true(peak <= r.waiting_max);
  job_free(&x);
}

/* Without chunked prefill a prompt runs alone in its iteration and the
 * decodes wait for it (vLLM V0's prefill-first scheduling): at the same
 * load the first token comes sooner and the time between tokens has a
 * longer tail than with chunked prefill, where prompts ride along with the
 * decodes in chunks of the token budget (512 here; Sarathi-Serve's point). */
static void test_chunking(void **state) {
  (void)state;
  const char *c[] = {LLAMA70B, "workload.inference.tp=8", "workload.inference.requests=600",
                     "workload.inference.rate=6", "workload.inference.max_tokens=512"};
  const char *w[] = {LLAMA70B,
                     "workload.inference.tp=8",
                     "workload.inference.requests=600",
                     "workload.inference.rate=6",
                     "workload.inference.max_tokens=4096",
                     "workload.inference.chunk=false"};
  inf_result rc, rw;
  job_fx x;
  job_of(&x, c, sizeof c / sizeof *c);
  run_job(&x, &rc);
  job_free(&x);
  job_of(&x, w, sizeof w / sizeof *w);
  run_job(&x, &rw);
  job_free(&x);
  assert_true(rw.tpot.p99 > 1.2 * rc.tpot.p99);
  assert_true(rw.ttft.p50 < rc.ttft.p50);
}

/* Same scenario and seed: the same figures, bit for bit; another seed:
 * other arrivals. */
static void test_deterministic(void **state) {
  (void)state;
  const char *s[] = {LLAMA70B, "workload.inference.tp=8", "workload.inference.requests=300",
                     "workload.inference.rate=4"};
  const char *s2[] = {LLAMA70B, "workload.inference.tp=8", "workload.inference.requests=300",
                      "workload.inference.rate=4", "simulation.seed=7"};
  inf_result a, b, c;
  job_fx x;
  job_of(&x, s, sizeof s / sizeof *s);
  run_job(&x, &a);
  job_free(&x);
  job_of(&x, s, sizeof s / sizeof *s);
  run_job(&x, &b);
  job_free(&x);
  job_of(&x, s2, sizeof s2 / sizeof *s2);
  run_job(&x, &c);
  job_free(&x);
  assert_memory_equal(&a, &b, sizeof a);
  assert_true(a.e2e.mean != c.e2e.mean);
}

static void parse_fails(const char *csv, const char *want) {
  inf_requests q;
  sim_error err = {0};
  int rc = inf_trace_parse(&q, csv, strlen(csv), "t.csv", &err);
  if (rc == SIM_OK) fail_msg("accepted %s", csv);
  if (!strstr(err.msg, want)) fail_msg("'%s' lacks '%s'", err.msg, want);
}

static void test_trace(void **state) {
  (void)state;
  const char *ok =
      "id,arrived_at,num_prefill_tokens,num_decode_tokens\n"
      "0, 0.5 ,100,20\r\n"
      "\n"
      "1,0.5,7,1\n"
      "2,2.25,3000,64";
  inf_requests q;
  sim_error err = {0};
  assert_int_equal(inf_trace_parse(&q, ok, strlen(ok), "t.csv", &err), SIM_OK);
  assert_int_equal(q.n, 3);
  assert_int_equal(q.r[0].arrival, 500000000000ULL);
  assert_int_equal(q.r[0].prompt, 100);
  assert_int_equal(q.r[2].output, 64);
  assert_int_equal(q.r[2].arrival, 2250000000000ULL);
  inf_requests_free(&q);
  parse_fails("arrived_at,num_prefill_tokens,num_decode_tokens\n1,5,5\n0.5,5,5\n",
              "t.csv:3: arrived_at 0.5 s is before the previous");
  parse_fails("arrived_at,num_prefill_tokens\n1,5\n",
              "t.csv:1: the header names no column "
              "num_decode_tokens");
  parse_fails("arrived_at,num_prefill_tokens,num_decode_tokens\n1,x,5\n",
              "t.csv:2: "
              "num_prefill_tokens");
  parse_fails("arrived_at,num_prefill_tokens,num_decode_tokens\n1,5,0\n", "num_decode_tokens 0");
  parse_fails("arrived_at,num_prefill_tokens,num_decode_tokens\n-1,5,5\n", "arrived_at -1");
  parse_fails("arrived_at,num_prefill_tokens,num_decode_tokens\n", "no request");
  parse_fails("", "empty");
}

/* Bad deployments are refused at their key before anything runs. */
static void test_refused(void **state) {
  (void)state;
  char msg[1024];
  const char *big[] = {LLAMA70B, "workload.inference.tp=8",
                       "workload.inference.prompt_tokens=2000000"};
  job_error(big, sizeof big / sizeof *big, msg, sizeof msg);
  assert_non_null(strstr(msg, "workload.inference.prompt_tokens: request 1: a request of 2000000"));
  const char *tp1[] = {LLAMA70B, "workload.inference.tp=1"};
  job_error(tp1, sizeof tp1 / sizeof *tp1, msg, sizeof msg);
  assert_non_null(strstr(msg, "workload.inference.tp: the weights"));
  const char *flow[] = {LLAMA70B, "workload.inference.tp=8", "simulation.fidelity=flow"};
  job_error(flow, sizeof flow / sizeof *flow, msg, sizeof msg);
  assert_non_null(strstr(msg, "simulation.fidelity: workload.kind inference runs at the analytic"));
  const char *many[] = {LLAMA70B, "workload.inference.tp=8", "workload.inference.replicas=2"};
  job_error(many, sizeof many / sizeof *many, msg, sizeof msg);
  assert_non_null(strstr(msg, "workload.inference.replicas: 2 replicas of 8 GPUs need 16"));
  const char *nochunk[] = {LLAMA70B, "workload.inference.tp=8", "workload.inference.chunk=false",
                           "workload.inference.max_tokens=1024"};
  job_error(nochunk, sizeof nochunk / sizeof *nochunk, msg, sizeof msg);
  assert_non_null(strstr(msg, "workload.inference.max_tokens: request 1: without chunked"));
  const char *ok[] = {LLAMA70B, "workload.inference.tp=8"};
  job_error(ok, sizeof ok / sizeof *ok, msg, sizeof msg);
  assert_string_equal(msg, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kv_bytes),      cmocka_unit_test(test_low_load),
      cmocka_unit_test(test_saturation),    cmocka_unit_test(test_little),
      cmocka_unit_test(test_deterministic), cmocka_unit_test(test_trace),
      cmocka_unit_test(test_refused),       cmocka_unit_test(test_moe_decode),
      cmocka_unit_test(test_chunking),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
