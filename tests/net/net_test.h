/* Shared fixture of the packet-fidelity tests: a scenario from --set
 * strings, its topology, and a runner for one phase of transfers. */
#ifndef FABSIM_TESTS_NET_TEST_H
#define FABSIM_TESTS_NET_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "net/net_internal.h"

typedef struct fixture {
  cfg_scenario cfg;
  cfg_doc *doc;
  topo *t;
} fixture;

/* The scenario says packet fidelity first (a set may override it): the
 * topology's link rates then leave room for the headers this backend sends. */
static inline void fx_load(fixture *f, const char *const *sets, int nsets) {
  sim_error err = {0};
  const char *all[64];
  if (nsets > 63) fail_msg("at most 63 sets");
  all[0] = "simulation.fidelity=packet";
  for (int i = 0; i < nsets; i++) all[i + 1] = sets[i];
  int rc = cfg_load(&f->cfg, &f->doc, NULL, all, nsets + 1, &err);
  if (rc) fail_msg("%s", err.msg);
  rc = topo_build(&f->t, &f->cfg, f->doc, &err);
  if (rc) fail_msg("%s", err.msg);
}

static inline void fx_unload(fixture *f) {
  topo_free(f->t);
  cfg_free(&f->cfg, f->doc);
}

typedef struct fx_result {
  simtime_ps end; /* when the phase's done fired */
  be_stats st;
  net__ext ext;
} fx_result;

static inline void fx_done(sim_ctx *sim, void *ctx) { ((fx_result *)ctx)->end = sim_now(sim); }

/* One phase of n transfers, `repeat` times, on a fresh packet backend. */
static inline void fx_run(const fixture *f, const be_xfer *x, size_t n, uint64_t repeat,
                          fx_result *r) {
  memset(r, 0, sizeof *r);
  sim_ctx *sim = sim_create(f->cfg.simulation.seed);
  be_backend *b = be_packet_create(sim, f->t, &f->cfg);
  r->end = SIM_TIME_MAX;
  be_submit_phase(b, x, n, repeat, fx_done, r);
  ev_run(sim, SIM_TIME_MAX);
  b->ops->stats(b, &r->st);
  net__ext_stats(b, &r->ext);
  be_destroy(b);
  sim_destroy(sim);
  if (r->end == SIM_TIME_MAX) fail_msg("the phase never finished (deadlock: %d)", r->ext.deadlock);
}

/* Goodput efficiency of a transport: payload / wire bytes per full packet. */
static inline double fx_efficiency(const cfg_scenario *c) {
  double hdr = c->fabric.transport == CFG_TRANSPORT_INFINIBAND ? 26 : 82;
  return (double)c->fabric.mtu / ((double)c->fabric.mtu + hdr);
}

#endif
