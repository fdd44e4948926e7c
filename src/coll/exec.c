/* Runs a plan's phases one after another on a backend. */
#include "fabsim/coll.h"

static void exec_next(sim_ctx *sim, void *obj) {
  coll_exec *e = obj;
  if (e->next == e->plan->nphases) {
    e->end = sim_now(sim);
    e->finished = true;
    if (e->done) e->done(sim, e->ctx);
    return;
  }
  const coll_phase *ph = &e->plan->phases[e->next++];
  be_submit_phase(e->b, ph->x, ph->n, ph->repeat, exec_next, e);
}

static void exec_begin(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)arg;
  exec_next(sim, obj);
}

void coll_exec_start(coll_exec *e, be_backend *b, const coll_plan *plan, be_done_fn done,
                     void *ctx) {
  e->b = b;
  e->plan = plan;
  e->next = 0;
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
