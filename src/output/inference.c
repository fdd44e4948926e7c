/* The serving figures at the edge (out_inference.h): built from the typed
 * inf_result, never read back. Times in seconds in JSON, in people's units
 * on the terminal. */
#include <string.h>

#include "output/out_inference.h"

#include "fabsim/out.h"

static void dist_line(FILE *f, const char *label, const inf_dist *d) {
  char a[32], b[32], c[32], m[32];
  fprintf(f, "  %-10s p50 %s  p90 %s  p99 %s  (mean %s)\n", label,
          sim_fmt_seconds(a, sizeof a, d->p50), sim_fmt_seconds(b, sizeof b, d->p90),
          sim_fmt_seconds(c, sizeof c, d->p99), sim_fmt_seconds(m, sizeof m, d->mean));
}

void out__inference_print(FILE *f, const inf_result *r, const cfg_scenario *cfg) {
  const cfg_workload *w = &cfg->workload;
  char a[32], b[32], c[32], d[32], e[32], g[32];
  bool trace = w->inference.trace && w->inference.trace[0] && strcmp(w->inference.trace, "none");
  fprintf(f, "serving      %s x TP %u (%s), %s",
          sim_fmt_noun(a, sizeof a, w->inference.replicas, "replica"), w->inference.tp,
          sim_fmt_noun(b, sizeof b, r->gpus, "GPU"),
          sim_fmt_noun(c, sizeof c, r->requests, "request"));
  if (trace) fprintf(f, " from %s\n", w->inference.trace);
  else
    fprintf(f, " (Poisson %s/s, %u prompt / %u output tokens)\n",
            sim_fmt(d, sizeof d, w->inference.rate, SIM_UNIT_NUMBER), w->inference.prompt_tokens,
            w->inference.output_tokens);
  fprintf(f, "  KV cache   %s a token (%s a GPU), %s tokens a replica; weights %s a GPU\n",
          sim_fmt(a, sizeof a, r->kv_token_bytes, SIM_UNIT_BYTES),
          sim_fmt(b, sizeof b, r->kv_token_gpu, SIM_UNIT_BYTES),
          sim_fmt_count(c, sizeof c, r->kv_tokens),
          sim_fmt(d, sizeof d, r->weights_per_gpu, SIM_UNIT_BYTES));
  dist_line(f, "TTFT", &r->ttft);
  dist_line(f, "TPOT", &r->tpot);
  dist_line(f, "latency", &r->e2e);
  fprintf(f, "  throughput %s requests/s, %s output tokens/s; a GPU: %s requests/s, %s tokens/s\n",
          sim_fmt(a, sizeof a, r->rps, SIM_UNIT_NUMBER),
          sim_fmt(b, sizeof b, r->output_tps, SIM_UNIT_NUMBER),
          sim_fmt(c, sizeof c, r->rps_per_gpu, SIM_UNIT_NUMBER),
          sim_fmt(d, sizeof d, r->output_tps_per_gpu, SIM_UNIT_NUMBER));
  fprintf(f, "  SLO        TTFT <= %s: %s, TPOT <= %s: %s, both: %s; goodput %s requests/s\n",
          sim_fmt_seconds(a, sizeof a, sim_ps_to_s(w->inference.slo_ttft)),
          sim_fmt(b, sizeof b, r->slo_ttft, SIM_UNIT_PERCENT),
          sim_fmt_seconds(c, sizeof c, sim_ps_to_s(w->inference.slo_tpot)),
          sim_fmt(d, sizeof d, r->slo_tpot, SIM_UNIT_PERCENT),
          sim_fmt(e, sizeof e, r->slo_both, SIM_UNIT_PERCENT),
          sim_fmt(g, sizeof g, r->goodput_rps, SIM_UNIT_NUMBER));
  fprintf(f,
          "  queue      %s waiting on average, %s at most; KV cache %s used on average, %s "
          "at most\n",
          sim_fmt(a, sizeof a, r->waiting_mean, SIM_UNIT_NUMBER),
          sim_fmt_count(b, sizeof b, (uint64_t)r->waiting_max),
          sim_fmt(c, sizeof c, r->kv_mean, SIM_UNIT_PERCENT),
          sim_fmt(d, sizeof d, r->kv_max, SIM_UNIT_PERCENT));
  fprintf(f, "  batching   %s iterations of %s sequences on average, %s\n",
          sim_fmt_count(a, sizeof a, r->iterations),
          sim_fmt(b, sizeof b, r->batch_mean, SIM_UNIT_NUMBER),
          sim_fmt_noun(c, sizeof c, r->preemptions, "preemption"));
  fprintf(f, "  unloaded   TTFT %s, latency %s (the first request alone on a replica)\n",
          sim_fmt_seconds(a, sizeof a, r->alone_ttft_s),
          sim_fmt_seconds(b, sizeof b, r->alone_e2e_s));
}

static json_t *dist_json(const inf_dist *d) {
  json_t *o = json_object();
  json_object_set_new(o, "mean", json_real(d->mean));
  json_object_set_new(o, "p50", json_real(d->p50));
  json_object_set_new(o, "p90", json_real(d->p90));
  json_object_set_new(o, "p99", json_real(d->p99));
  json_object_set_new(o, "max", json_real(d->max));
  return o;
}

json_t *out__inference_json(const inf_result *r, const cfg_scenario *cfg) {
  const cfg_workload *w = &cfg->workload;
  json_t *o = json_object();
  json_object_set_new(o, "tp", json_integer(w->inference.tp));
  json_object_set_new(o, "replicas", json_integer(w->inference.replicas));
  json_object_set_new(o, "gpus", json_integer(r->gpus));
  json_object_set_new(o, "requests", out_json_u64(r->requests));
  json_object_set_new(o, "completed", out_json_u64(r->completed));
  json_object_set_new(o, "ttft_s", dist_json(&r->ttft));
  json_object_set_new(o, "tpot_s", dist_json(&r->tpot));
  json_object_set_new(o, "e2e_s", dist_json(&r->e2e));
  json_object_set_new(o, "span_s", json_real(r->span_s));
  json_object_set_new(o, "requests_per_s", json_real(r->rps));
  json_object_set_new(o, "input_tokens_per_s", json_real(r->input_tps));
  json_object_set_new(o, "output_tokens_per_s", json_real(r->output_tps));
  json_object_set_new(o, "requests_per_s_per_gpu", json_real(r->rps_per_gpu));
  json_object_set_new(o, "output_tokens_per_s_per_gpu", json_real(r->output_tps_per_gpu));
  /* per node: the nodes the replicas occupy (tp GPUs each, a replica within a node) */
  uint32_t per_node = cfg->cluster.gpus_per_node, per = per_node / w->inference.tp;
  uint32_t nodes = (w->inference.replicas + per - 1) / per;
  json_object_set_new(o, "nodes", json_integer(nodes));
  json_object_set_new(o, "output_tokens_per_s_per_node", json_real(r->output_tps / nodes));
  json_t *slo = json_object();
  json_object_set_new(slo, "ttft_s", json_real(sim_ps_to_s(w->inference.slo_ttft)));
  json_object_set_new(slo, "tpot_s", json_real(sim_ps_to_s(w->inference.slo_tpot)));
  json_object_set_new(slo, "ttft_met", json_real(r->slo_ttft));
  json_object_set_new(slo, "tpot_met", json_real(r->slo_tpot));
  json_object_set_new(slo, "both_met", json_real(r->slo_both));
  json_object_set_new(slo, "goodput_requests_per_s", json_real(r->goodput_rps));
  json_object_set_new(o, "slo", slo);
  json_object_set_new(o, "waiting_mean", json_real(r->waiting_mean));
  json_object_set_new(o, "waiting_max", json_real(r->waiting_max));
  json_object_set_new(o, "in_system_mean", json_real(r->in_system_mean));
  json_object_set_new(o, "kv_used_mean", json_real(r->kv_mean));
  json_object_set_new(o, "kv_used_max", json_real(r->kv_max));
  json_object_set_new(o, "kv_bytes_per_token", json_real(r->kv_token_bytes));
  json_object_set_new(o, "kv_bytes_per_token_per_gpu", json_real(r->kv_token_gpu));
  json_object_set_new(o, "kv_tokens_per_replica", out_json_u64(r->kv_tokens));
  json_object_set_new(o, "weights_bytes_per_gpu", json_real(r->weights_per_gpu));
  json_object_set_new(o, "iterations", out_json_u64(r->iterations));
  json_object_set_new(o, "batch_mean", json_real(r->batch_mean));
  json_object_set_new(o, "preemptions", out_json_u64(r->preemptions));
  json_object_set_new(o, "alone_ttft_s", json_real(r->alone_ttft_s));
  json_object_set_new(o, "alone_e2e_s", json_real(r->alone_e2e_s));
  json_t *ser = json_object(), *wq = json_array(), *kv = json_array();
  for (uint32_t i = 0; i < r->series.nbins; i++) {
    json_array_append_new(wq, json_real(r->series.waiting[i]));
    json_array_append_new(kv, json_real(r->series.kv[i]));
  }
  json_object_set_new(ser, "bin_s", json_real(r->series.bin_s));
  json_object_set_new(ser, "waiting", wq);
  json_object_set_new(ser, "kv_used", kv);
  json_object_set_new(o, "series", ser);
  return o;
}
