/* A trace run's figures (trc_result) as the summary's "trace" object and as
 * the terminal's lines. */
#include <stdio.h>

#include "output/out_internal.h"

json_t *out__trace_json(const trc_result *r, const trc_set *s, const cfg_scenario *cfg) {
  json_t *o = json_object();
  json_object_set_new(o, "ranks", json_integer(r->nranks));
  json_object_set_new(
      o, "compute_model",
      json_string(cfg->workload.trace.compute == CFG_TRACE_ROOFLINE ? "roofline" : "recorded"));
  json_t *files = json_array();
  for (uint32_t k = 0; k < s->ntraces; k++) {
    json_t *f = json_object();
    json_object_set_new(f, "path", json_string(s->traces[k].name));
    json_object_set_new(f, "version", json_string(s->traces[k].version));
    json_object_set_new(f, "nodes", json_integer(s->traces[k].n));
    json_array_append_new(files, f);
  }
  json_object_set_new(o, "files", files);
  json_t *groups = json_array();
  for (uint32_t g = 0; g < s->ngroups; g++) {
    json_t *j = json_object(), *ranks = json_array();
    json_object_set_new(j, "pg_name", json_string(s->groups[g].name));
    for (uint32_t i = 0; i < s->groups[g].nranks; i++)
      json_array_append_new(ranks, json_integer(s->groups[g].ranks[i]));
    json_object_set_new(j, "ranks", ranks);
    json_object_set_new(j, "calls", json_integer(s->groups[g].ncalls));
    json_array_append_new(groups, j);
  }
  json_object_set_new(o, "groups", groups);
  json_object_set_new(o, "nodes", json_integer((json_int_t)r->nodes));
  json_object_set_new(o, "compute_nodes", json_integer((json_int_t)r->compute_nodes));
  json_object_set_new(o, "collectives", json_integer((json_int_t)r->collectives));
  json_object_set_new(o, "collective_bytes", out_json_u64(r->coll_bytes));
  json_object_set_new(o, "p2p_transfers", json_integer((json_int_t)r->p2p));
  json_object_set_new(o, "p2p_bytes", out_json_u64(r->p2p_bytes));
  json_object_set_new(o, "time_s", json_real(r->time_s));
  json_object_set_new(o, "time_ps", out_json_u64(r->time_ps));
  json_object_set_new(o, "iterations", json_integer(r->iterations));
  json_object_set_new(o, "iterations_done", json_integer(r->iterations_done));
  json_t *its = json_array();
  for (uint32_t k = 0; k < r->iterations_done; k++)
    json_array_append_new(its, json_real(r->iteration_s[k]));
  json_object_set_new(o, "iteration_s", its);
  json_object_set_new(o, "compute_s", json_real(r->compute_s));
  json_object_set_new(o, "comm_s", json_real(r->comm_s));
  json_object_set_new(o, "exposed_comm_s", json_real(r->exposed_comm_s));
  json_object_set_new(o, "idle_s", json_real(r->idle_s));
  json_t *per = json_array();
  for (uint32_t i = 0; i < r->nranks; i++) {
    const trc_rank_time *t = &r->ranks[i];
    json_t *j = json_object();
    json_object_set_new(j, "rank", json_integer(i));
    json_object_set_new(j, "file", json_integer(s->rank_trace[i]));
    json_object_set_new(j, "compute_s", json_real(t->compute_s));
    json_object_set_new(j, "comm_s", json_real(t->comm_s));
    json_object_set_new(j, "exposed_comm_s", json_real(t->exposed_comm_s));
    json_object_set_new(j, "idle_s", json_real(t->idle_s));
    json_object_set_new(j, "end_s", json_real(t->end_s));
    json_array_append_new(per, j);
  }
  json_object_set_new(o, "per_rank", per);
  return o;
}

void out__trace_print(FILE *f, const trc_result *r, const trc_set *s) {
  char a[64], b[64], c[64], d[64], e[64], g[64], h[64];
  fprintf(f, "trace        %s, %s, %s: %s compute, %s in %s, %s\n",
          sim_fmt_noun(a, sizeof a, r->nranks, "rank"),
          sim_fmt_noun(b, sizeof b, s->ntraces, "file"),
          sim_fmt_noun(c, sizeof c, r->nodes, "node"), sim_fmt_count(d, sizeof d, r->compute_nodes),
          sim_fmt_noun(e, sizeof e, r->collectives, "collective call"),
          sim_fmt_noun(g, sizeof g, s->ngroups, "group"),
          sim_fmt_noun(h, sizeof h, r->p2p, "send/recv pair"));
  if (r->iterations <= 1 && r->iterations_done == r->iterations) {
    fprintf(f, "  iteration  %s\n", sim_fmt_seconds(a, sizeof a, r->time_s));
  } else {
    double sum = 0, lo = 0, hi = 0;
    for (uint32_t k = 0; k < r->iterations_done; k++) {
      double x = r->iteration_s[k];
      sum += x;
      if (k == 0 || x < lo) lo = x;
      if (k == 0 || x > hi) hi = x;
    }
    fprintf(f, "  iterations %u of %u done in %s", r->iterations_done, r->iterations,
            sim_fmt_seconds(a, sizeof a, r->time_s));
    if (r->iterations_done)
      fprintf(f, ": mean %s, fastest %s, slowest %s",
              sim_fmt_seconds(a, sizeof a, sum / r->iterations_done),
              sim_fmt_seconds(b, sizeof b, lo), sim_fmt_seconds(c, sizeof c, hi));
    fputc('\n', f);
  }
  fprintf(f, "  per rank   compute %s, communication %s (exposed %s), idle %s (means)\n",
          sim_fmt_seconds(a, sizeof a, r->compute_s), sim_fmt_seconds(b, sizeof b, r->comm_s),
          sim_fmt_seconds(c, sizeof c, r->exposed_comm_s), sim_fmt_seconds(d, sizeof d, r->idle_s));
  uint32_t slow = 0;
  for (uint32_t i = 1; i < r->nranks; i++)
    if (r->ranks[i].end_s > r->ranks[slow].end_s) slow = i;
  if (r->nranks)
    fprintf(f, "  last rank  %u ends at %s (compute %s, exposed communication %s)\n", slow,
            sim_fmt_seconds(a, sizeof a, r->ranks[slow].end_s),
            sim_fmt_seconds(b, sizeof b, r->ranks[slow].compute_s),
            sim_fmt_seconds(c, sizeof c, r->ranks[slow].exposed_comm_s));
}
