/* DCQCN reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015), as NIC firmware and the widely used ns-3 RDMA
 * simulations run it, with timers kept lazily.
 *
 * State: current rate Rc, target rate Rt, alpha, and three time grids:
 *   alpha ticks every alpha_period from the first CNP:
 *     alpha = (1 - g) alpha + g   if a CNP arrived since the last tick,
 *     alpha = (1 - g) alpha       otherwise;
 *   decrease checks every decrease_period from the first CNP: if a CNP
 *     arrived since the last check, Rt = Rc, Rc = max(Rmin, Rc (1 - alpha/2)),
 *     the increase stage resets and the increase timer restarts;
 *   increase events every increase_period after the last decrease:
 *     stage <= F            fast recovery   Rc = (Rt + Rc) / 2
 *     stage == F + 1        additive        Rt += Rai,  Rc = (Rt + Rc) / 2
 *     stage  > F + 1        hyper           Rt += i Rhai (i = stage - F - 1), Rc = (Rt + Rc) / 2
 *   (the byte counter is disabled, as in the common configurations).
 * The first CNP sets alpha = 1 and starts the grids at its arrival; its
 * decrease check is at that instant, so it halves the rate, as the paper's
 * reaction point does. Events falling at the same picosecond run in the order
 * alpha tick, decrease, increase.
 *
 * Laziness: nothing is scheduled. dcqcn_advance() replays every grid event up
 * to `now` in time order; runs of alpha ticks without a CNP collapse into one
 * power (exponentiation by squaring, deterministic), and increase events stop
 * once Rc and Rt are back at line rate. Cost per rate() call: O(1) plus the
 * increase events that fell due.
 */
#include "fabsim/cc.h"

typedef struct dcqcn {
  double rc, rt, alpha;
  double max;
  simtime_ps origin;  /* first CNP: origin of the alpha and decrease grids */
  simtime_ps t_alpha; /* next alpha tick */
  simtime_ps t_dec;   /* next decrease check, valid while cnp_dec */
  simtime_ps t_inc;   /* next increase event; SIM_TIME_MAX: none */
  uint32_t stage;
  bool active, cnp_alpha, cnp_dec;
} dcqcn;

_Static_assert(sizeof(dcqcn) <= CC_STATE_BYTES, "cc_state too small for DCQCN");

static double pow_u(double x, uint64_t k) {
  double r = 1.0;
  while (k) {
    if (k & 1) r *= x;
    x *= x;
    k >>= 1;
  }
  return r;
}

static void dcqcn_init(cc_state *s, const cc_params *p, rate_bps max_rate, simtime_ps now) {
  dcqcn *d = (dcqcn *)s->b;
  (void)p;
  (void)now;
  d->max = (double)(max_rate ? max_rate : 1);
  d->rc = d->rt = d->max;
  d->alpha = 1.0;
  d->origin = d->t_alpha = d->t_dec = 0;
  d->t_inc = SIM_TIME_MAX;
  d->stage = 0;
  d->active = d->cnp_alpha = d->cnp_dec = false;
}

static void increase(dcqcn *d, const cc_params *p) {
  uint32_t f = p->fast_recovery;
  d->stage++;
  if (d->stage > f + 1) d->rt += (double)(d->stage - f - 1) * (double)p->rhai;
  else if (d->stage == f + 1) d->rt += (double)p->rai;
  if (d->rt > d->max) d->rt = d->max;
  d->rc = (d->rt + d->rc) / 2;
  if (d->rc > d->max * (1 - 1e-9)) d->rc = d->max; /* converged: back at line rate */
  d->t_inc = d->rc == d->max && d->rt == d->max ? SIM_TIME_MAX : d->t_inc + p->increase_period;
}

static void decrease(dcqcn *d, const cc_params *p, simtime_ps at) {
  d->rt = d->rc;
  d->rc *= 1 - d->alpha / 2;
  if (d->rc < (double)p->rmin) d->rc = (double)p->rmin;
  if (d->rc > d->max) d->rc = d->max;
  d->stage = 0;
  d->cnp_dec = false;
  d->t_dec = at + p->decrease_period;
  d->t_inc = at + p->increase_period;
}

static void dcqcn_advance(dcqcn *d, const cc_params *p, simtime_ps now) {
  if (!d->active) return;
  for (;;) {
    simtime_ps dec = d->cnp_dec ? d->t_dec : SIM_TIME_MAX;
    simtime_ps other = dec < d->t_inc ? dec : d->t_inc;
    if (d->t_alpha <= now && d->t_alpha <= other) {
      /* every tick up to min(now, other) at once */
      simtime_ps limit = other < now ? other : now;
      uint64_t k = (limit - d->t_alpha) / p->alpha_period + 1;
      if (d->cnp_alpha) {
        d->alpha = (1 - p->g) * d->alpha + p->g;
        d->cnp_alpha = false;
        k--;
        d->t_alpha += p->alpha_period;
      }
      if (k) {
        d->alpha *= pow_u(1 - p->g, k);
        d->t_alpha += k * p->alpha_period;
      }
      continue;
    }
    if (other > now) break;
    if (dec <= d->t_inc) decrease(d, p, dec);
    else increase(d, p);
  }
}

static rate_bps dcqcn_rate(cc_state *s, const cc_params *p, simtime_ps now) {
  dcqcn *d = (dcqcn *)s->b;
  dcqcn_advance(d, p, now);
  rate_bps r = (rate_bps)d->rc;
  return r ? r : 1;
}

/* First grid point of the decrease checks at or after t. */
static simtime_ps next_check(const dcqcn *d, const cc_params *p, simtime_ps t) {
  simtime_ps k = (t - d->origin + p->decrease_period - 1) / p->decrease_period;
  return d->origin + k * p->decrease_period;
}

static void dcqcn_on_cnp(cc_state *s, const cc_params *p, simtime_ps now) {
  dcqcn *d = (dcqcn *)s->b;
  if (!d->active) {
    d->active = true;
    d->alpha = 1.0;
    d->origin = now;
    d->t_alpha = now + p->alpha_period;
  } else {
    dcqcn_advance(d, p, now);
  }
  d->cnp_alpha = true;
  if (!d->cnp_dec) {
    d->cnp_dec = true;
    d->t_dec = next_check(d, p, now);
  }
  dcqcn_advance(d, p, now);
}

const cc_ops cc_dcqcn_ops = {
    .name = "dcqcn", .init = dcqcn_init, .rate = dcqcn_rate, .on_cnp = dcqcn_on_cnp};

void cc_dcqcn_peek(const cc_state *s, double *rc, double *rt, double *alpha) {
  const dcqcn *d = (const dcqcn *)s->b;
  if (rc) *rc = d->rc;
  if (rt) *rt = d->rt;
  if (alpha) *alpha = d->alpha;
}
