/* The one table of a run's headline figures: what report.html's headline,
 * the sweep's table, sweep.csv and `fabsim compare` show, in the order they
 * show it. A row says where summary.json keeps the figure (key), what it is
 * called (name, label), its unit and how the one formatting rule writes it
 * for a person (kind, scale), which way is better, and how to read it from
 * the typed result of a run (get). A run's own report reads the rows'
 * getters; runs read back from a results database read the rows' keys (the
 * figures as summary.json wrote them); tests/output/test_figures.c checks
 * that both give the same figures for every kind of run.
 *
 * Adding a figure is adding a row here (and, when it is new to
 * summary.json, its key in run_summary.c): every format follows. */
#include <stdlib.h>
#include <string.h>

#include "output/out_internal.h"

/* ---- getters over the typed result ---------------------------------------------------- */

static bool is_collective(const out__fig_src *s) {
  return !s->job && s->r->kind == RUN_KIND_COLLECTIVE;
}
static bool is_traffic(const out__fig_src *s) { return !s->job && s->r->kind == RUN_KIND_TRAFFIC; }
/* A job of a jobs: list that runs a collective (not training, trace or traffic). */
static bool job_collective(const run_job *j) {
  return j && !j->train && !j->trr && j->cfg->workload.kind != CFG_WORKLOAD_TRAFFIC;
}
/* The run's collective completed: it has a time and bandwidths. */
static bool collective_whole(const out__fig_src *s) {
  return is_collective(s) && !s->r->w->failed && !s->r->w->stopped;
}

static bool get_coll_time(const out__fig_src *s, double *v) {
  *v = s->r->w->res.time_s;
  return collective_whole(s);
}
static bool get_busbw(const out__fig_src *s, double *v) {
  if (s->job) {
    *v = s->job->res.busbw_GBps;
    return job_collective(s->job) && s->job->finished;
  }
  *v = s->r->w->res.busbw_GBps;
  return collective_whole(s);
}
static bool get_algbw(const out__fig_src *s, double *v) {
  *v = s->r->w->res.algbw_GBps;
  return collective_whole(s);
}
static bool get_traffic_time(const out__fig_src *s, double *v) {
  *v = s->r->w->res.time_s;
  return is_traffic(s);
}
static bool get_throughput(const out__fig_src *s, double *v) {
  double t = s->r->w->res.time_s;
  *v = t > 0 ? run_traffic_bytes(s->r->w, &s->r->net) * 8 / t / 1e9 : 0;
  return is_traffic(s);
}

/* The training steps of the run or the job (NULL: none), their summary in *st. */
static const wl_job *steps_of(const out__fig_src *s, const run_step_stats **st) {
  if (s->job) {
    *st = s->r->job_steps ? &s->r->job_steps[s->ji] : NULL;
    return s->job->train;
  }
  *st = &s->r->training.steps;
  return s->r->kind == RUN_KIND_TRAINING ? s->r->training.job : NULL;
}
/* A step figure: its mean over the steps (run_step_stats) when there are
 * several, the one step's otherwise. */
static bool step_figure(const out__fig_src *s, run_step_fig f, double *v) {
  const run_step_stats *st;
  const wl_job *j = steps_of(s, &st);
  if (!j || !wl_job_steps_done(j)) return false;
  const wl_step *one = wl_job_step(j, 0);
  double first[RUN_STEP_NFIGS] = {one->time_s,   one->compute_s, one->exposed_comm_s,
                                  one->bubble_s, one->mfu,       one->tokens_per_s};
  *v = st && st->steps > 1 ? st->fig[f].mean : first[f];
  return true;
}
static bool get_step_time(const out__fig_src *s, double *v) {
  return step_figure(s, RUN_STEP_TIME, v);
}
static bool get_exposed(const out__fig_src *s, double *v) {
  return step_figure(s, RUN_STEP_EXPOSED_COMM, v);
}
static bool get_bubble(const out__fig_src *s, double *v) {
  return step_figure(s, RUN_STEP_BUBBLE, v);
}
static bool get_mfu(const out__fig_src *s, double *v) { return step_figure(s, RUN_STEP_MFU, v); }
static bool get_tokens(const out__fig_src *s, double *v) {
  return step_figure(s, RUN_STEP_TOKENS_PER_S, v);
}

static bool get_fct_p50(const out__fig_src *s, double *v) {
  *v = sim_ps_to_s(s->r->net.fct_p50) * 1e6;
  return s->r->net.observed & BE_OBS_FCT;
}
static bool get_fct_p99(const out__fig_src *s, double *v) {
  *v = sim_ps_to_s(s->r->net.fct_p99) * 1e6;
  return s->r->net.observed & BE_OBS_FCT;
}
static bool get_sharing(const out__fig_src *s, double *v) {
  *v = s->r->net.max_link_sharing;
  return true;
}
/* A counter only the packet fidelity observes (the others have no queues). */
static bool get_ecn(const out__fig_src *s, double *v) {
  *v = (double)(json_int_t)s->r->net.ecn_marks;
  return s->r->net.observed & BE_OBS_PACKETS;
}
static bool get_pfc_paused(const out__fig_src *s, double *v) {
  *v = sim_ps_to_s(s->r->net.pfc_paused);
  return s->r->net.observed & BE_OBS_PACKETS;
}
static bool get_drops(const out__fig_src *s, double *v) {
  *v = (double)(json_int_t)s->r->net.drops;
  return s->r->net.observed & BE_OBS_PACKETS;
}
static bool get_cost(const out__fig_src *s, double *v) {
  *v = topo_inventory_get(s->r->t)->cost_usd;
  return true;
}
static bool get_bisection(const out__fig_src *s, double *v) {
  *v = (double)(json_int_t)topo_inventory_get(s->r->t)->bisection_bandwidth_bps;
  return true;
}

/* Serving (RUN_KIND_INFERENCE): the latency distributions' tails and the
 * throughput a sweep over the request rate draws as its curve. */
static const inf_result *serving(const out__fig_src *s) {
  return !s->job && s->r->kind == RUN_KIND_INFERENCE ? s->r->w->inference : NULL;
}
static bool get_ttft_p50(const out__fig_src *s, double *v) {
  const inf_result *i = serving(s);
  *v = i ? i->ttft.p50 : 0;
  return i && i->completed;
}
static bool get_ttft_p99(const out__fig_src *s, double *v) {
  const inf_result *i = serving(s);
  *v = i ? i->ttft.p99 : 0;
  return i && i->completed;
}
static bool get_tpot_p50(const out__fig_src *s, double *v) {
  const inf_result *i = serving(s);
  *v = i ? i->tpot.p50 : 0;
  return i && i->completed;
}
static bool get_tpot_p99(const out__fig_src *s, double *v) {
  const inf_result *i = serving(s);
  *v = i ? i->tpot.p99 : 0;
  return i && i->completed;
}
static bool get_output_tps(const out__fig_src *s, double *v) {
  const inf_result *i = serving(s);
  *v = i ? i->output_tps : 0;
  return i != NULL;
}
static bool get_goodput(const out__fig_src *s, double *v) {
  const inf_result *i = serving(s);
  *v = i ? i->goodput_rps : 0;
  return i != NULL;
}

static bool get_job_time(const out__fig_src *s, double *v) {
  *v = s->job->res.time_s;
  return s->job->finished;
}
static bool get_job_slowdown(const out__fig_src *s, double *v) {
  *v = s->job->slowdown;
  return s->job->have_alone && s->job->slowdown > 0;
}

/* ---- the table ---------------------------------------------------------------------- */

#define LOWER false
#define HIGHER true
#define NO_STEP (-1)

/* In the order every format shows them: a run's figures (OUT__FIG_RUN), then
 * for each job of a jobs: list its figures (OUT__FIG_JOB), named
 * "jobs.<job>.<name>" and labelled "<job>: <label>". A job's key is of its
 * object in summary.json's jobs[]. */
static const out__figure figures[] = {
    {"time_s", "time_s", "time", "s", SIM_UNIT_SECONDS, 1, LOWER, NO_STEP, OUT__FIG_JOB,
     get_job_time},
    {"slowdown", "slowdown", "slowdown against alone", "", SIM_UNIT_NUMBER, 1, LOWER, NO_STEP,
     OUT__FIG_JOB, get_job_slowdown},
    {"collectives.0.time_s", "time_s", "collective time", "s", SIM_UNIT_SECONDS, 1, LOWER, NO_STEP,
     OUT__FIG_RUN, get_coll_time},
    {"collectives.0.busbw_GBps", "busbw_GBps", "bus bandwidth", "GB/s", SIM_UNIT_BYTERATE, 1e9,
     HIGHER, NO_STEP, OUT__FIG_RUN | OUT__FIG_JOB, get_busbw},
    {"collectives.0.algbw_GBps", "algbw_GBps", "algorithm bandwidth", "GB/s", SIM_UNIT_BYTERATE,
     1e9, HIGHER, NO_STEP, OUT__FIG_RUN, get_algbw},
    {"traffic.time_s", "time_s", "traffic time", "s", SIM_UNIT_SECONDS, 1, LOWER, NO_STEP,
     OUT__FIG_RUN, get_traffic_time},
    {"traffic.throughput_Gbps", "throughput_Gbps", "aggregate throughput", "Gb/s", SIM_UNIT_BITRATE,
     1e9, HIGHER, NO_STEP, OUT__FIG_RUN, get_throughput},
    {"step.time_s", "step_time_s", "step time", "s", SIM_UNIT_SECONDS, 1, LOWER, RUN_STEP_TIME,
     OUT__FIG_RUN | OUT__FIG_JOB, get_step_time},
    {"step.exposed_comm_s", "exposed_comm_s", "exposed communication per step", "s",
     SIM_UNIT_SECONDS, 1, LOWER, RUN_STEP_EXPOSED_COMM, OUT__FIG_RUN | OUT__FIG_JOB, get_exposed},
    {"step.bubble_s", "bubble_s", "pipeline bubble per step", "s", SIM_UNIT_SECONDS, 1, LOWER,
     RUN_STEP_BUBBLE, OUT__FIG_RUN, get_bubble},
    {"step.mfu", "mfu", "model FLOPs utilization", "", SIM_UNIT_PERCENT, 1, HIGHER, RUN_STEP_MFU,
     OUT__FIG_RUN | OUT__FIG_JOB, get_mfu},
    {"step.tokens_per_s", "tokens_per_s", "tokens per second", "", SIM_UNIT_NUMBER, 1, HIGHER,
     RUN_STEP_TOKENS_PER_S, OUT__FIG_RUN, get_tokens},
    {"inference.ttft_s.p50", "ttft_p50_s", "TTFT p50", "s", SIM_UNIT_SECONDS, 1, LOWER, NO_STEP,
     OUT__FIG_RUN, get_ttft_p50},
    {"inference.ttft_s.p99", "ttft_p99_s", "TTFT p99", "s", SIM_UNIT_SECONDS, 1, LOWER, NO_STEP,
     OUT__FIG_RUN, get_ttft_p99},
    {"inference.tpot_s.p50", "tpot_p50_s", "TPOT p50", "s", SIM_UNIT_SECONDS, 1, LOWER, NO_STEP,
     OUT__FIG_RUN, get_tpot_p50},
    {"inference.tpot_s.p99", "tpot_p99_s", "TPOT p99", "s", SIM_UNIT_SECONDS, 1, LOWER, NO_STEP,
     OUT__FIG_RUN, get_tpot_p99},
    {"inference.output_tokens_per_s", "output_tokens_per_s", "output tokens/s", "", SIM_UNIT_NUMBER,
     1, HIGHER, NO_STEP, OUT__FIG_RUN, get_output_tps},
    {"inference.slo.goodput_requests_per_s", "goodput_rps", "goodput requests/s", "",
     SIM_UNIT_NUMBER, 1, HIGHER, NO_STEP, OUT__FIG_RUN, get_goodput},
    {"network.fct_us.p50", "fct_p50_us", "FCT p50", "us", SIM_UNIT_SECONDS, 1e-6, LOWER, NO_STEP,
     OUT__FIG_RUN, get_fct_p50},
    {"network.fct_us.p99", "fct_p99_us", "FCT p99", "us", SIM_UNIT_SECONDS, 1e-6, LOWER, NO_STEP,
     OUT__FIG_RUN, get_fct_p99},
    {"network.max_link_sharing", "max_link_sharing", "most transfers on one link", "",
     SIM_UNIT_COUNT, 1, LOWER, NO_STEP, OUT__FIG_RUN, get_sharing},
    {"network.ecn_marks", "ecn_marks", "ECN marks", "", SIM_UNIT_COUNT, 1, LOWER, NO_STEP,
     OUT__FIG_RUN, get_ecn},
    {"network.pfc_paused_s", "pfc_paused_s", "PFC paused time", "s", SIM_UNIT_SECONDS, 1, LOWER,
     NO_STEP, OUT__FIG_RUN, get_pfc_paused},
    {"network.drops", "drops", "drops", "", SIM_UNIT_COUNT, 1, LOWER, NO_STEP, OUT__FIG_RUN,
     get_drops},
    {"topology.cost_usd", "cost_usd", "fabric cost", "USD", SIM_UNIT_USD, 1, LOWER, NO_STEP,
     OUT__FIG_RUN, get_cost},
    {"topology.bisection_bandwidth_bps", "bisection_bps", "bisection bandwidth", "b/s",
     SIM_UNIT_BITRATE, 1, HIGHER, NO_STEP, OUT__FIG_RUN, get_bisection},
};

const out__figure *out__figures(size_t *n) {
  *n = sizeof figures / sizeof figures[0];
  return figures;
}

void out__figure_fmt(char *buf, size_t n, const out__figure *f, double v) {
  sim_fmt(buf, n, v * f->scale, f->kind);
}

/* ---- one run's headline ------------------------------------------------------------- */

/* Append row f's figure (of a job when job is not NULL), taken by one of
 * the two readers: the getter (src) or the summary's key (owner). */
static void add(out__headline *h, const out__figure *f, const char *job, const out__fig_src *src,
                const json_t *owner) {
  out__fig_value x = {.fig = f, .job = job};
  if (src) {
    if (!f->get(src, &x.value)) return;
    const run_step_stats *st;
    if (f->step >= 0 && steps_of(src, &st) && st && st->steps > 1) {
      x.steps = st->steps;
      x.stdev = st->fig[f->step].stdev;
      x.min = st->fig[f->step].min;
      x.max = st->fig[f->step].max;
    }
  } else {
    const json_t *v = out__json_path(owner, f->key);
    const json_t *stats = f->step >= 0 ? json_object_get(owner, "step_stats") : NULL;
    json_int_t steps = json_integer_value(json_object_get(stats, "steps"));
    const json_t *st =
        steps > 1 ? json_object_get(stats, run_step_fig_key((run_step_fig)f->step)) : NULL;
    if (st) v = json_object_get(st, "mean");
    if (!json_is_number(v)) return;
    x.value = json_number_value(v);
    if (st) {
      x.steps = (uint32_t)steps;
      x.stdev = json_number_value(json_object_get(st, "stdev"));
      x.min = json_number_value(json_object_get(st, "min"));
      x.max = json_number_value(json_object_get(st, "max"));
    }
  }
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 32;
    h->v = sim_realloc(h->v, h->cap * sizeof *h->v);
  }
  h->v[h->n++] = x;
}

/* Every row in scope for the run, then for each job. */
static void collect(out__headline *h, const out__fig_src *src, const json_t *summary) {
  size_t n = sizeof figures / sizeof figures[0];
  memset(h, 0, sizeof *h);
  for (size_t i = 0; i < n; i++)
    if (figures[i].scope & OUT__FIG_RUN) add(h, &figures[i], NULL, src, summary);
  if (src) {
    const run_jobs *js = src->r->jobs;
    for (uint32_t j = 0; js && j < js->n; j++) {
      out__fig_src js_src = *src;
      js_src.job = &js->v[j];
      js_src.ji = j;
      for (size_t i = 0; i < n; i++)
        if (figures[i].scope & OUT__FIG_JOB) add(h, &figures[i], js->v[j].cfg->name, &js_src, NULL);
    }
    return;
  }
  const json_t *jobs = json_object_get(summary, "jobs");
  for (size_t j = 0; j < json_array_size(jobs); j++) {
    const json_t *job = json_array_get(jobs, j);
    const char *name = json_string_value(json_object_get(job, "name"));
    for (size_t i = 0; name && i < n; i++)
      if (figures[i].scope & OUT__FIG_JOB) add(h, &figures[i], name, NULL, job);
  }
}

void out__headline_of_result(out__headline *h, const run_result *r) {
  out__fig_src src = {.r = r};
  collect(h, &src, NULL);
}

void out__headline_of_summary(out__headline *h, const json_t *summary) {
  collect(h, NULL, summary);
}

void out__headline_free(out__headline *h) {
  sim_free(h->v);
  memset(h, 0, sizeof *h);
}

void out__fig_name(const out__fig_value *x, char *name, size_t n) {
  snprintf(name, n, "%s%s%s%s", x->job ? "jobs." : "", x->job ? x->job : "", x->job ? "." : "",
           x->fig->name);
}

void out__fig_label(const out__fig_value *x, char *label, size_t n) {
  snprintf(label, n, "%s%s%s", x->job ? x->job : "", x->job ? ": " : "", x->fig->label);
}

json_t *out__headline_json(const out__headline *h) {
  json_t *a = json_array();
  for (size_t i = 0; i < h->n; i++) {
    const out__fig_value *x = &h->v[i];
    char name[160], label[200];
    out__fig_name(x, name, sizeof name);
    out__fig_label(x, label, sizeof label);
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "label", json_string(label));
    json_object_set_new(o, "unit", json_string(x->fig->unit));
    json_object_set_new(o, "better", json_string(x->fig->higher ? "higher" : "lower"));
    json_object_set_new(o, "value", json_real(x->value));
    if (x->steps) {
      json_object_set_new(o, "steps", json_integer(x->steps));
      json_object_set_new(o, "stdev", json_real(x->stdev));
      json_object_set_new(o, "min", json_real(x->min));
      json_object_set_new(o, "max", json_real(x->max));
    }
    json_array_append_new(a, o);
  }
  return a;
}

json_t *out_headline(const json_t *summary) {
  out__headline h;
  out__headline_of_summary(&h, summary);
  json_t *a = out__headline_json(&h);
  out__headline_free(&h);
  return a;
}
