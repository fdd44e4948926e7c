/* The congestion-control registry, shared defaults, and the null model. */
#include <string.h>

#include "fabsim/cc.h"

typedef struct none_state {
  rate_bps max;
} none_state;

_Static_assert(sizeof(none_state) <= CC_STATE_BYTES, "cc_state too small");

static void none_init(cc_state *s, const cc_params *p, rate_bps max_rate, simtime_ps now) {
  (void)p;
  (void)now;
  ((none_state *)s->b)->max = max_rate ? max_rate : 1;
}

static rate_bps none_rate(cc_state *s, const cc_params *p, simtime_ps now) {
  (void)p;
  (void)now;
  return ((none_state *)s->b)->max;
}

const cc_ops cc_none_ops = {.name = "none", .init = none_init, .rate = none_rate};

const cc_ops *cc_by_name(const char *name) {
  if (!strcmp(name, "none")) return &cc_none_ops;
  if (!strcmp(name, "dcqcn")) return &cc_dcqcn_ops;
  return NULL;
}

static rate_bps scale(uint64_t bps_at_25g, rate_bps line) {
  unsigned __int128 v = (unsigned __int128)bps_at_25g * line / 25000000000ULL;
  return v == 0 ? 1 : (rate_bps)v;
}

void cc_defaults(cc_params *p, rate_bps line) {
  memset(p, 0, sizeof *p);
  p->line = line;
  p->g = 1.0 / 256.0;
  p->alpha_period = SIM_PS_PER_US;
  p->decrease_period = 4 * SIM_PS_PER_US;
  p->increase_period = 300 * SIM_PS_PER_US;
  p->fast_recovery = 1;
  p->rai = scale(5000000, line);
  p->rhai = scale(50000000, line);
  p->rmin = 1000000000;
}
