/* Private to src/core and its tests. */
#ifndef FABSIM_EV_INTERNAL_H
#define FABSIM_EV_INTERNAL_H
#include "fabsim/ev.h"

/* Renumber every pending key now (normally done when sequence numbers run
 * out, once every 2^38 events); exposed so tests can check order is kept. */
void ev__debug_renumber(sim_ctx *sim);

#endif
