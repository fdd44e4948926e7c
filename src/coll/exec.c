/* Runs a plan on a backend: after the plan's launch overhead, phases one
 * after another, each preceded by its start and followed by its fixed
 * latency; or (stagger > 0) phase i submitted at start + i x stagger + its
 * own start, all in flight together, the plan done the largest fixed
 * latency of a phase after the last one's transfers. A delay of 0 costs no
 * event; any other is one event. Phases
 * that are slices of the plan's pool go to the backend as slices
 * (be_submit_slice) when there are several, the pool released when the plan
 * ends. Every delay is added saturating (sim_time_add): a sum past 2^64 ps
 * is due past the horizon, where the run stops (ev_run), never wrapped. */
#include "fabsim/coll.h"

static void exec_finish(sim_ctx *sim, coll_exec *e) {
  e->end = sim_now(sim);
  e->finished = true;
  if (e->plan->pool) be_pool_release(e->b, e->plan->pool);
  if (e->done) e->done(sim, e->ctx);
}

static void exec_next(sim_ctx *sim, void *obj);

static void exec_submit(coll_exec *e, const coll_phase *ph, be_done_fn done) {
  const coll_plan *p = e->plan;
  if (ph->in_pool && p->nphases > 1) { /* one phase: nothing to keep between slices */
    be_slice sl = {.pool = p->pool,
                   .pool_n = p->pool_n,
                   .off = (size_t)(ph->x - p->pool),
                   .n = ph->n,
                   .cuts = p->cuts,
                   .ncuts = p->ncuts};
    be_submit_slice(e->b, &sl, ph->repeat, done, e);
  } else {
    be_submit_phase(e->b, ph->x, ph->n, ph->repeat, done, e);
  }
}

static void exec_next_ev(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)arg;
  exec_next(sim, obj);
}

/* A phase's transfers are done: its protocol latency (fixed) passes as
 * one event before the next phase starts. */
static void exec_phase_done(sim_ctx *sim, void *obj) {
  coll_exec *e = obj;
  simtime_ps fixed = e->plan->phases[e->next - 1].fixed;
  if (fixed == 0) exec_next(sim, obj);
  else ev_schedule(sim, sim_time_add(sim_now(sim), fixed), exec_next_ev, e, 0);
}

static void exec_submit_ev(sim_ctx *sim, void *obj, uint64_t arg) {
  coll_exec *e = obj;
  (void)sim;
  exec_submit(e, &e->plan->phases[arg], exec_phase_done);
}

static void exec_next(sim_ctx *sim, void *obj) {
  coll_exec *e = obj;
  if (e->next == e->plan->nphases) {
    exec_finish(sim, e);
    return;
  }
  const coll_phase *ph = &e->plan->phases[e->next++];
  if (ph->start == 0) exec_submit(e, ph, exec_phase_done);
  else ev_schedule(sim, sim_time_add(sim_now(sim), ph->start), exec_submit_ev, e, e->next - 1);
}

static void exec_finish_ev(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)arg;
  exec_finish(sim, obj);
}

/* The plan ends with its last staggered phase, plus the largest fixed
 * latency of its phases (exact when they are alike, as a pattern of one
 * kind of transfer: coll_traffic_build). */
static void exec_staggered_done(sim_ctx *sim, void *obj) {
  coll_exec *e = obj;
  if (--e->running || e->next != e->plan->nphases) return;
  if (e->stagger_fixed == 0) exec_finish(sim, e);
  else ev_schedule(sim, sim_time_add(sim_now(sim), e->stagger_fixed), exec_finish_ev, e, 0);
}

static void exec_staggered_submit(sim_ctx *sim, void *obj, uint64_t arg) {
  coll_exec *e = obj;
  const coll_phase *ph = &e->plan->phases[arg];
  (void)sim;
  e->next++;
  e->running++;
  exec_submit(e, ph, exec_staggered_done);
}

static void exec_begin(sim_ctx *sim, void *obj, uint64_t arg) {
  coll_exec *e = obj;
  (void)arg;
  if (e->plan->stagger == 0 || e->plan->nphases == 0) {
    /* the launch overhead first (one event), then the phases in order */
    if (e->plan->launch && e->plan->nphases)
      ev_schedule(sim, sim_time_add(sim_now(sim), e->plan->launch), exec_next_ev, e, 0);
    else exec_next(sim, obj);
    return;
  }
  /* One event per phase, scheduled up front: O(phases) pending events. */
  e->stagger_fixed = 0;
  for (size_t i = 0; i < e->plan->nphases; i++) {
    const coll_phase *ph = &e->plan->phases[i];
    if (ph->fixed > e->stagger_fixed) e->stagger_fixed = ph->fixed;
    simtime_ps off =
        i && e->plan->stagger > SIM_TIME_MAX / i ? SIM_TIME_MAX : (simtime_ps)i * e->plan->stagger;
    ev_schedule(sim, sim_time_add(sim_time_add(e->start, off), ph->start), exec_staggered_submit, e,
                i);
  }
}

void coll_exec_start(coll_exec *e, be_backend *b, const coll_plan *plan, be_done_fn done,
                     void *ctx) {
  e->b = b;
  e->plan = plan;
  e->next = 0;
  e->running = 0;
  e->done = done;
  e->ctx = ctx;
  e->start = sim_now(b->sim);
  e->end = 0;
  e->finished = false;
  ev_schedule(b->sim, e->start, exec_begin, e, 0);
}

void coll_result_of(const coll_exec *e, coll_result *r) {
  r->time_s = sim_ps_to_s(e->end - e->start);
  double bytes = (double)e->plan->bytes;
  r->algbw_GBps = r->time_s > 0 ? bytes / r->time_s / 1e9 : 0.0;
  r->busbw_GBps = r->algbw_GBps * coll_busbw_factor(e->plan->op, e->plan->nranks);
}
