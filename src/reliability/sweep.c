/* Reliability at a chosen checkpoint interval, and over a sweep of job
 * sizes, intervals and spare pools (fabsim reliability --sweep-*). */
#include <math.h>

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
