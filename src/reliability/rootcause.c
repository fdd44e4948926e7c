/* Root cause of a run with faults: failure cost, SDC detection, and the
 * attribution of each step's time above its fault-free baseline
 * (formulas in include/fabsim/rootcause.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/rootcause.h"

void rel_failure_cost_of(double at_s, double tau, double delta, double restart_s, uint32_t gpus,
                         rel_failure_cost *out) {
  memset(out, 0, sizeof *out);
  out->at_s = at_s;
  out->interval_s = tau;
  out->write_s = delta;
  out->restart_s = restart_s;
  double cycle = tau + delta;
  double phase = cycle > 0 && isfinite(cycle) ? fmod(at_s, cycle) : at_s;
  out->since_checkpoint_s = phase;
  out->lost_work_s = phase < tau ? phase : tau;
  out->expected_lost_work_s =
      cycle > 0 && isfinite(cycle) ? (tau * tau / 2 + tau * delta) / cycle : at_s;
  out->restart_cost_s = restart_s + out->lost_work_s;
  out->lost_gpu_hours = out->lost_work_s * gpus / 3600.0;
}

uint64_t rel_sdc_detect_step(uint64_t diverge_step, uint32_t every) {
  if (every == 0 || diverge_step == 0) return 0;
  return (diverge_step + every - 1) / every * every;
}

/* "41.2 ms": three significant digits in a readable unit. */
static const char *fmt_s(char *buf, size_t n, double s) {
  double a = fabs(s);
  if (a >= 1) snprintf(buf, n, "%.3g s", s);
  else if (a >= 1e-3) snprintf(buf, n, "%.3g ms", s * 1e3);
  else snprintf(buf, n, "%.3g us", s * 1e6);
  return buf;
}

/* "1,023" */
static const char *fmt_count(char *buf, size_t n, uint64_t v) {
  char tmp[32];
  int len = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v), w = 0;
  for (int i = 0; i < len && (size_t)w + 2 < n; i++) {
    if (i && (len - i) % 3 == 0) buf[w++] = ',';
    buf[w++] = tmp[i];
  }
  buf[w] = '\0';
  return buf;
}

/* Causes of a step, joined by "; " (truncated at n). */
static void append(char *buf, size_t n, const char *text) {
  size_t len = strlen(buf);
  if (len + 3 < n) snprintf(buf + len, n - len, "%s%s", len ? "; " : "", text);
}

/* Append a cause to e (grown one at a time: a step has a few). */
static void cause(rel_rc_entry *e, const char *component, const char *kind, double effect,
                  const char *text) {
  e->causes = sim_realloc(e->causes, ((size_t)e->ncauses + 1) * sizeof *e->causes);
  rel_rc_cause *c = &e->causes[e->ncauses++];
  snprintf(c->component, sizeof c->component, "%s", component);
  c->kind = kind;
  c->effect_s = effect;
  snprintf(c->text, sizeof c->text, "%s", text);
}

static bool slow_during(const rel_rc_slow *x, double start, double end) {
  return x->at_s < end && (x->until_s < 0 || x->until_s > start) && x->factor < 1;
}

/* The slowest GPU of stage s slow during [start, end), or -1. */
static int slowest(const rel_rc_input *in, uint32_t s, double start, double end) {
  int best = -1;
  for (uint32_t i = 0; i < in->nslow; i++) {
    const rel_rc_slow *x = &in->slow[i];
    if (x->stage != s || !slow_during(x, start, end)) continue;
    if (best < 0 || x->factor < in->slow[best].factor) best = (int)i;
  }
  return best;
}

void rel_root_cause(const rel_rc_input *in, rel_rc_result *out) {
  uint32_t n = in->nrun < in->nbase ? in->nrun : in->nbase;
  char a[32], b[32], c[32], text[512], comp[64];
  out->v = sim_calloc(n ? n : 1, sizeof *out->v);
  out->n = 0;
  for (uint32_t k = 0; k < n; k++) {
    const rel_rc_step *r = &in->run[k], *z = &in->base[k];
    double excess = r->time_s - z->time_s, end = r->start_s + r->time_s;
    if (!(z->time_s > 0) || excess <= in->threshold_frac * z->time_s) continue;
    rel_rc_entry *ent = &out->v[out->n];
    double gpu_total = 0;
    uint32_t ns = r->nstages < z->nstages ? r->nstages : z->nstages;
    /* GPUs: each slowed stage's compute increase */
    double *effect = sim_calloc(ns ? ns : 1, sizeof *effect);
    for (uint32_t s = 0; s < ns; s++) {
      double d = r->stage_compute_s[s] - z->stage_compute_s[s];
      if (d > 0 && slowest(in, s, r->start_s, end) >= 0) effect[s] = d;
      gpu_total += effect[s];
    }
    /* In a pipeline the slowest stage sets the pace and the others' delays
     * overlap it: the excess goes to the stages by decreasing compute
     * increase, each up to its increase, until none is left. */
    double *share = sim_calloc(ns ? ns : 1, sizeof *share), left = excess;
    for (;;) {
      int best = -1;
      for (uint32_t s = 0; s < ns; s++)
        if (effect[s] > 0 && share[s] == 0 && (best < 0 || effect[s] > effect[best])) best = (int)s;
      if (best < 0 || left <= 0) break;
      share[best] = effect[best] < left ? effect[best] : left;
      left -= share[best];
    }
    gpu_total = excess - (left > 0 ? left : 0);
    char lead_text[1024] = "";
    for (uint32_t s = 0; s < ns; s++) {
      if (share[s] <= 0) continue;
      const rel_rc_slow *x = &in->slow[slowest(in, s, r->start_s, end)];
      double e = share[s];
      uint32_t alike = 0; /* GPUs of the stage at that speed (a throttled rack: all of its) */
      for (uint32_t i = 0; i < in->nslow; i++)
        alike += in->slow[i].stage == s && slow_during(&in->slow[i], r->start_s, end) &&
                 in->slow[i].factor == x->factor;
      uint32_t slowed = 0; /* GPUs slow in this step, any stage: they do not wait, they work */
      for (uint32_t i = 0; i < in->nslow; i++) slowed += slow_during(&in->slow[i], r->start_s, end);
      uint32_t others = in->gpus > slowed ? in->gpus - slowed : 0;
      char more[64] = "", wait[160];
      if (others)
        snprintf(wait, sizeof wait, "the other %s GPUs waited %s in %s",
                 fmt_count(b, sizeof b, others), fmt_s(c, sizeof c, e),
                 in->wait_in ? in->wait_in : "collectives");
      else
        snprintf(wait, sizeof wait, "every GPU of the job is slowed; the step takes %s longer",
                 fmt_s(c, sizeof c, e));
      if (alike > 1)
        snprintf(more, sizeof more, " with %s more GPUs", fmt_count(a, sizeof a, alike - 1));
      snprintf(comp, sizeof comp, "gpu%u", x->gpu);
      snprintf(text, sizeof text,
               "%s%s %s to %.3g (node%u, rack %u): stage %u computes %s longer; %s", comp, more,
               !x->thermal    ? "slowed"
               : x->power_cap ? "throttled by the rack's power cap"
                              : "throttled by the rack's cooling",
               x->factor, x->node, x->rack, x->stage, fmt_s(a, sizeof a, effect[s]), wait);
      cause(ent, comp,
            !x->thermal    ? "gpu-slowdown"
            : x->power_cap ? "power-cap-throttle"
                           : "thermal-throttle",
            e, text);
      append(lead_text, sizeof lead_text, text);
    }
    sim_free(effect);
    sim_free(share);
    /* the rest: network faults active during the step, else unexplained */
    double rest = excess - gpu_total;
    char fabric[160] = "";
    if (r->fabric && z->fabric &&
        (r->pfc_paused_s > z->pfc_paused_s || r->ecn_marks > z->ecn_marks))
      snprintf(fabric, sizeof fabric,
               "; PFC paused queues %s (fault-free %s), %llu ECN marks (%llu)",
               fmt_s(a, sizeof a, r->pfc_paused_s), fmt_s(b, sizeof b, z->pfc_paused_s),
               (unsigned long long)r->ecn_marks, (unsigned long long)z->ecn_marks);
    if (rest > 0.01 * excess) {
      double dexp = 0;
      for (uint32_t s = 0; s < ns; s++)
        dexp += (r->stage_exposed_s[s] - z->stage_exposed_s[s]) / (ns ? ns : 1);
      uint32_t active = 0, first = 0;
      for (uint32_t i = 0; i < in->nnet; i++) {
        const rel_rc_net *x = &in->net[i];
        if (x->at_s < end && (x->until_s < 0 || x->until_s > r->start_s)) {
          if (!active) first = i;
          active++;
        }
      }
      if (active) {
        const rel_rc_net *x = &in->net[first];
        char d1[32], d2[32];
        snprintf(text, sizeof text,
                 "%s %s at %s: exposed communication %s%s%s, every GPU waited %s%s%s", x->component,
                 x->kind, fmt_s(c, sizeof c, x->at_s), dexp >= 0 ? "+" : "",
                 fmt_s(d1, sizeof d1, dexp), ns > 1 ? " (mean over stages)" : "",
                 fmt_s(d2, sizeof d2, rest),
                 active > 1 ? " (with the other network faults of the step)" : "", fabric);
        cause(ent, x->component, x->kind, rest, text);
        append(lead_text, sizeof lead_text, text);
      } else {
        char d1[32];
        snprintf(text, sizeof text, "%s not explained by a fault (contention or pipeline timing)%s",
                 fmt_s(d1, sizeof d1, rest), fabric);
        cause(ent, "job", "other", rest, text);
        append(lead_text, sizeof lead_text, text);
      }
    }
    ent->step = k + 1;
    ent->index = k;
    ent->start_s = r->start_s;
    ent->time_s = r->time_s;
    ent->baseline_s = z->time_s;
    ent->excess_s = excess;
    ent->excess_frac = excess / z->time_s;
    snprintf(ent->text, sizeof ent->text, "step %u +%.1f %%: %s", k + 1, 100 * excess / z->time_s,
             lead_text);
    out->n++;
  }
}

void rel_rc_result_free(rel_rc_result *r) {
  for (uint32_t i = 0; r->v && i < r->n; i++) sim_free(r->v[i].causes);
  sim_free(r->v);
  r->v = NULL;
  r->n = 0;
}
