/* Monte Carlo of whole training runs: failures, lost work, restarts, spares.
 *
 * One run covers `days` of wall time. From the start of a checkpoint segment
 * (tau compute + delta write) the time to the next failure X is exponential
 * with mean M (memoryless, so it is drawn afresh after every restart); the
 * floor(X / s) whole segments before it are committed and the rest is lost.
 * A failure's cause is drawn by rate; a node-swap cause takes the spare whose
 * repair completes first (spares leave in order and repair takes a fixed
 * time, so a FIFO of return times suffices), or waits no_spare_delay_s more
 * when none is free. At the end of the run, work since the last checkpoint
 * counts (the job saves as it stops).
 *
 * Cost: O(runs x interruptions per run); memory: one FIFO of `spares` times.
 * Deterministic for p->seed (one RNG stream, "reliability").
 */
#include <math.h>
#include <string.h>

#include "fabsim/reliability.h"

typedef struct spare_fifo {
  double *back_at; /* return times of spares in use, nondecreasing */
  uint32_t head, count, cap;
} spare_fifo;

/* Take a spare free at time t, if any; it returns at t + repair. */
static bool spare_take(spare_fifo *f, double t, double repair) {
  while (f->count > 0 && f->back_at[f->head] <= t) {
    f->head = (f->head + 1) % f->cap;
    f->count--;
  }
  if (f->count == f->cap) return false;
  f->back_at[(f->head + f->count) % f->cap] = t + repair;
  f->count++;
  return true;
}

static int draw_cause(sim_rng *rng, const double *cum, double total) {
  double u = sim_rng_uniform(rng) * total;
  for (int i = 0; i < REL_CAUSES - 1; i++)
    if (u < cum[i]) return i;
  return REL_CAUSES - 1;
}

void rel_monte_carlo(const rel_params *p, double interval_s, rel_result *r) {
  double cum[REL_CAUSES], rate = 0;
  double run_s = p->days * 86400.0, tau = interval_s, seg = interval_s + p->write_s;
  double sum = 0, sumsq = 0, interruptions = 0;
  sim_rng rng;
  spare_fifo fifo = {0};
  for (int i = 0; i < REL_CAUSES; i++) {
    rate += p->rate[i];
    cum[i] = rate;
  }
  double lambda = p->nodes * rate;
  r->runs = p->runs;
  if (p->runs == 0 || !(seg > 0)) return;
  sim_rng_init(&rng, p->seed, "reliability");
  fifo.cap = p->spares;
  fifo.back_at = p->spares ? sim_calloc(p->spares, sizeof *fifo.back_at) : NULL;
  for (uint32_t run = 0; run < p->runs; run++) {
    double t = 0, useful = 0;
    fifo.head = fifo.count = 0;
    for (;;) {
      double x = lambda > 0 ? sim_rng_exp(&rng, 1.0 / lambda) : INFINITY;
      double left = run_s - t;
      if (!(x < left)) { /* the run ends first */
        double k = floor(left / seg);
        useful += k * tau + fmin(left - k * seg, tau);
        break;
      }
      useful += floor(x / seg) * tau;
      t += x;
      interruptions++;
      double restart = p->restart_s;
      if (rel_cause_at(draw_cause(&rng, cum, rate))->node_swap &&
          !(fifo.cap > 0 && spare_take(&fifo, t, p->repair_s)))
        restart += p->no_spare_delay_s;
      t += restart;
      if (t >= run_s) break;
    }
    double ettr = run_s > 0 ? useful / run_s : 0;
    sum += ettr;
    sumsq += ettr * ettr;
  }
  double n = p->runs, mean = sum / n;
  double var = n > 1 ? fmax(0.0, (sumsq - n * mean * mean) / (n - 1)) : 0;
  r->ettr_mc = mean;
  r->ettr_mc_ci95 = 1.96 * sqrt(var / n);
  r->interruptions_mc = interruptions / n;
  sim_free(fifo.back_at);
}
