/* What the trace-runner tests share: the example job (example_trace.h) on
 * a 2 x 4-GPU cluster, run to its end, and each of its operations alone on a
 * fresh backend (the closed forms' terms). */
#ifndef FABSIM_TEST_TRACE_RUN_FIXTURE_H
#define FABSIM_TEST_TRACE_RUN_FIXTURE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fabsim/trace.h"
#include "fixture.h"
#include "trace/example_trace.h"

static const char *const base_sets[] = {"cluster.nodes=2",        "cluster.gpus_per_node=4",
                                        "cluster.gpu=H100",       "workload.kind=trace",
                                        "workload.trace.ranks=8", "simulation.fidelity=analytic"};

static inline trc_set *example_set(const uint32_t *rank_trace, uint32_t ntraces) {
  trc_trace *tr = calloc(ntraces, sizeof *tr);
  for (uint32_t k = 0; k < ntraces; k++) {
    size_t len;
    uint8_t *buf = ex_trace(k, &len);
    sim_error err = {0};
    char name[32];
    snprintf(name, sizeof name, "et.%u.et", k);
    if (trc_parse(&tr[k], name, buf, len, &err) != SIM_OK) fail_msg("%s", err.msg);
    sim_free(buf);
  }
  trc_trace *owned = sim_malloc(ntraces * sizeof *owned);
  memcpy(owned, tr, ntraces * sizeof *owned);
  free(tr);
  trc_set *s;
  sim_error err = {0};
  if (trc_set_create(&s, owned, ntraces, rank_trace, EX_RANKS, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  return s;
}

/* The scenario's fidelity (analytic or flow). */
static inline be_backend *backend(sim_ctx *sim, const fixture *f) {
  return f->cfg.simulation.fidelity == CFG_FIDELITY_FLOW ? be_flow_create(sim, f->t, &f->cfg)
                                                         : be_analytic_create(sim, f->t, &f->cfg);
}

static inline void run_set(const fixture *f, const trc_set *s, trc_result *out) {
  sim_ctx *sim = sim_create(1);
  be_backend *b = backend(sim, f);
  trc_runner *r;
  sim_error err = {0};
  if (trc_runner_create(&r, s, &f->cfg, f->doc, f->t, b, &err) != SIM_OK) fail_msg("%s", err.msg);
  trc_runner_start(r);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(trc_runner_done(r));
  trc_runner_result(r, out);
  be_destroy(b);
  trc_runner_free(r);
  sim_destroy(sim);
}

/* A collective alone on a fresh backend, as the runner plans it. */
static inline simtime_ps alone_coll(const fixture *f, cfg_coll_op op, uint64_t bytes, uint32_t n) {
  uint32_t ranks[EX_RANKS];
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  /* the one mapping from the scenario, as the trace runner's collectives */
  coll_spec spec = coll_spec_from_cfg(&f->cfg, op, bytes, ranks, n);
  coll_plan p = {0};
  sim_error err = {0};
  if (coll_plan_build(&p, f->t, &spec, &err) != SIM_OK) fail_msg("%s", err.msg);
  sim_ctx *sim = sim_create(1);
  be_backend *b = backend(sim, f);
  coll_exec e;
  coll_exec_start(&e, b, &p, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(e.finished);
  simtime_ps t = e.end - e.start;
  be_destroy(b);
  sim_destroy(sim);
  coll_plan_free(&p);
  return t;
}

static inline void fail_contains(const char *msg, const char *want) {
  print_message("  %s\n", msg);
  if (!strstr(msg, want)) fail_msg("'%s' not in: %s", want, msg);
}

static inline void xfer_done(sim_ctx *sim, void *ctx) { *(simtime_ps *)ctx = sim_now(sim); }

static inline simtime_ps alone_xfer(const fixture *f, uint32_t src, uint32_t dst, uint64_t bytes) {
  sim_ctx *sim = sim_create(1);
  be_backend *b = backend(sim, f);
  be_xfer x = {src, dst, bytes, sim_hash_u64(0), 0};
  simtime_ps end = 0;
  be_submit_phase(b, &x, 1, 1, xfer_done, &end);
  ev_run(sim, SIM_TIME_MAX);
  be_destroy(b);
  sim_destroy(sim);
  return end;
}

static const uint32_t per_rank[EX_RANKS] = {0, 1, 2, 3, 4, 5, 6, 7};

#endif
