/* Shared by tests: a scenario loaded from --set strings and its topology.
 * Include after <cmocka.h> (uses fail_msg). */
#ifndef FABSIM_TEST_FIXTURE_H
#define FABSIM_TEST_FIXTURE_H

#include "fabsim/backend.h"
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

static inline void fx__on_done(sim_ctx *sim, void *ctx) { *(simtime_ps *)ctx = sim_now(sim); }

/* One phase x[0..n) alone on a fresh backend of the fixture's fabric
 * (fidelity 0 analytic, 1 flow, 2 packet): when its last transfer ended;
 * fails the test if it never does. st, when not NULL, gets the backend's
 * statistics after the run. */
static inline simtime_ps fx_phase_end(const fixture *f, const be_xfer *x, size_t n, int fidelity,
                                      be_stats *st) {
  sim_ctx *sim = sim_create(1);
  be_backend *b = fidelity == 0   ? be_analytic_create(sim, f->t, &f->cfg)
                  : fidelity == 1 ? be_flow_create(sim, f->t, &f->cfg)
                                  : be_packet_create(sim, f->t, &f->cfg);
  simtime_ps end = SIM_TIME_MAX;
  be_submit_phase(b, x, n, 1, fx__on_done, &end);
  ev_run(sim, SIM_TIME_MAX);
  if (end == SIM_TIME_MAX) fail_msg("the phase of %zu transfers never ended", n);
  if (st) b->ops->stats(b, st);
  be_destroy(b);
  sim_destroy(sim);
  return end;
}

static inline void unload(fixture *f) {
  topo_free(f->t);
  cfg_free(&f->cfg, f->doc);
}

#endif
