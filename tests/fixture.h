/* Shared by tests: a scenario loaded from --set strings and its topology.
 * Include after <cmocka.h> (uses fail_msg). */
#ifndef FABSIM_TEST_FIXTURE_H
#define FABSIM_TEST_FIXTURE_H

#include "fabsim/topo.h"

typedef struct fixture {
  cfg_scenario cfg;
  cfg_doc *doc;
  topo *t;
} fixture;

/* Load defaults + sets (no file) and build the topology; fails the test on error. */
static inline void load(fixture *f, const char *const *sets, int nsets) {
  sim_error err = {0};
  if (cfg_load(&f->cfg, &f->doc, NULL, sets, nsets, &err) != SIM_OK) fail_msg("%s", err.msg);
  if (topo_build(&f->t, &f->cfg, f->doc, &err) != SIM_OK) fail_msg("%s", err.msg);
}

/* A link's rate in the topology: line rate x its class's efficiency, as
 * topo_build rounds it (analytic and flow fidelities). */
static inline rate_bps fx_achievable(rate_bps line, double efficiency) {
  return efficiency >= 1.0 ? line : (rate_bps)((double)line * efficiency + 0.5);
}

static inline void unload(fixture *f) {
  topo_free(f->t);
  cfg_free(&f->cfg, f->doc);
}

#endif
