/* Reliability at a chosen checkpoint interval, and over a sweep of job
 * sizes, intervals and spare pools (fabsim reliability --sweep-*). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/reliability.h"

static double pick_interval(const rel_result *r, double choice) {
  if (choice > 0) return choice;
  if (choice == REL_IV_YOUNG) return r->young_s;
  if (choice == REL_IV_OPTIMAL) return r->optimal_s;
  return r->interval_s; /* auto: Daly, as rel_evaluate chose */
}

void rel_evaluate_at(rel_params p, double choice, rel_result *r) {
  uint32_t runs = p.runs;
  p.runs = 0;
  p.interval_s = 0;
  rel_evaluate(&p, r);
  r->interval_s = pick_interval(r, choice);
  if (!isfinite(r->interval_s) || r->interval_s <= 0) r->interval_s = p.days * 86400.0;
  r->ettr_closed = rel_ettr(r->interval_s, p.write_s, r->mean_restart_s, r->mttf_s);
  r->goodput_frac = r->ettr_closed * p.nodes / ((double)p.nodes + p.spares);
  p.runs = runs;
  if (runs > 0) rel_monte_carlo(&p, r->interval_s, r);
}

int rel_sweep_run(const rel_params *base, const rel_sweep *sw, rel_sweep_row **rows, size_t *n,
                  sim_error *err) {
  *rows = NULL;
  *n = 0;
  for (int i = 0; i < sw->ngpus; i++)
    if (sw->gpus[i] % base->gpus_per_node)
      return sim_fail(err, SIM_EINVAL,
                      "--sweep-gpus: %u is not a multiple of cluster.gpus_per_node (%u)",
                      sw->gpus[i], base->gpus_per_node);
  int ng = sw->ngpus ? sw->ngpus : 1, ni = sw->nintervals ? sw->nintervals : 1,
      ns = sw->nspares ? sw->nspares : 1;
  rel_sweep_row *v = sim_malloc((size_t)ng * (size_t)ni * (size_t)ns * sizeof *v);
  size_t k = 0;
  for (int i = 0; i < ng; i++) {
    uint32_t nodes = sw->ngpus ? sw->gpus[i] / base->gpus_per_node : base->nodes;
    for (int j = 0; j < ni; j++) {
      double choice = sw->nintervals ? sw->interval[j] : base->interval_s;
      for (int s = 0; s < ns; s++, k++) {
        v[k].p = *base;
        v[k].p.nodes = nodes;
        v[k].p.spares = sw->nspares ? sw->spares[s] : base->spares;
        v[k].choice = sw->nintervals ? sw->interval_text[j] : "scenario";
        rel_evaluate_at(v[k].p, choice, &v[k].r);
      }
    }
  }
  *rows = v;
  *n = k;
  return SIM_OK;
}

/* A comma-separated list of integers >= min into out (at most REL_SWEEP_MAX). */
static int add_counts(const char *flag, const char *list, uint32_t min, uint32_t *out, int *n,
                      sim_error *err) {
  for (const char *p = list; *p;) {
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (*p < '0' || *p > '9' || end == p || v < min || v > UINT32_MAX || (*end && *end != ',') ||
        *n == REL_SWEEP_MAX)
      return sim_fail(err, SIM_EINVAL, "%s: '%s' is not a list of integers >= %u (e.g. 1024,4096)",
                      flag, list, min);
    out[(*n)++] = (uint32_t)v;
    p = *end ? end + 1 : end;
  }
  return SIM_OK;
}

static int add_intervals(rel_sweep *sw, const char *list, sim_error *err) {
  if (sw->nlists > REL_SWEEP_MAX) /* every --sweep-interval adds a value */
    return sim_fail(err, SIM_EINVAL, "--sweep-interval: at most %d values", REL_SWEEP_MAX);
  char *text = sw->lists[sw->nlists++] = sim_strdup(list);
  for (char *tok = text, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    if (sw->nintervals == REL_SWEEP_MAX)
      return sim_fail(err, SIM_EINVAL, "--sweep-interval: at most %d values", REL_SWEEP_MAX);
    double s = 0;
    sim_error e = {0};
    if (!strcmp(tok, "young")) s = REL_IV_YOUNG;
    else if (!strcmp(tok, "optimal")) s = REL_IV_OPTIMAL;
    else if (rel_parse_interval(tok, &s, &e) != SIM_OK)
      return sim_fail(err, SIM_EINVAL, "--sweep-interval: %s; or young, optimal", e.msg);
    sw->interval_text[sw->nintervals] = tok;
    sw->interval[sw->nintervals++] = s;
  }
  return SIM_OK;
}

int rel_sweep_add(rel_sweep *sw, const char *flag, const char *list, sim_error *err) {
  if (!strcmp(flag, "--sweep-gpus")) return add_counts(flag, list, 1, sw->gpus, &sw->ngpus, err);
  if (!strcmp(flag, "--sweep-spares"))
    return add_counts(flag, list, 0, sw->spares, &sw->nspares, err);
  if (!strcmp(flag, "--sweep-interval")) return add_intervals(sw, list, err);
  return sim_fail(err, SIM_EINVAL,
                  "%s: not a sweep; allowed: --sweep-gpus, --sweep-interval, "
                  "--sweep-spares",
                  flag);
}

void rel_sweep_free(rel_sweep *sw) {
  for (int i = 0; i < sw->nlists; i++) sim_free(sw->lists[i]);
  sw->nlists = 0;
}
