/* Slices of a pool (be_ops.submit_slice, be_pool_release): the analytic
 * fidelity and the telemetry tap keep a pool's routes and its window's
 * counts from one slice to the next; every figure must be what the plain
 * path (submit_phase on the same transfers) gives. Checked on real tree
 * AllReduce plans (their phases are windows sliding over one pool), with
 * a second collective running at the same time on part of the ranks (its
 * phases change the counts under the window), the first one run twice
 * (its pool released and routed again) and once more while its first run
 * is under way (two windows of one pool at once), under static, ECMP, spray and
 * adaptive routing: completion times, be_stats (transfers, bytes, busiest
 * channel, FCT percentiles and mean), and the tap's replay (NIC, port and
 * GPU totals, the shared-channel events) identical, byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fabsim/tel_tap.h"
#include "fixture.h"

typedef struct outcome {
  simtime_ps end_a[2], end_b, end_c;
  be_stats st;
  tel_totals tot;
  size_t events;
  simtime_ps first_event;
} outcome;

typedef struct runner {
  be_backend *b;
  coll_plan *a, *bplan;
  coll_exec ea, eb, ec; /* ec: plan a once more, while ea runs it */
  int runs_a;
  outcome *o;
} runner;

static void a_done(sim_ctx *sim, void *ctx) {
  runner *r = ctx;
  r->o->end_a[r->runs_a] = sim_now(sim) - r->ea.start;
  if (++r->runs_a < 2) coll_exec_start(&r->ea, r->b, r->a, a_done, r); /* the same pool again */
}

static void b_done(sim_ctx *sim, void *ctx) {
  runner *r = ctx;
  r->o->end_b = sim_now(sim) - r->eb.start;
}

static void c_done(sim_ctx *sim, void *ctx) {
  runner *r = ctx;
  r->o->end_c = sim_now(sim) - r->ec.start;
}

static void b_start(sim_ctx *sim, void *obj, uint64_t arg) {
  runner *r = obj;
  (void)sim;
  if (arg) coll_exec_start(&r->ec, r->b, r->a, c_done, r);
  else coll_exec_start(&r->eb, r->b, r->bplan, b_done, r);
}

static void build_tree(coll_plan *p, const fixture *f, uint32_t nranks, uint64_t bytes) {
  uint32_t *ranks = sim_malloc(nranks * sizeof *ranks);
  for (uint32_t i = 0; i < nranks; i++) ranks[i] = i;
  coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                 .algorithm = CFG_ALGO_TREE,
                 .protocol = CFG_PROTO_SIMPLE,
                 .bytes = bytes,
                 .ranks = ranks,
                 .nranks = nranks,
                 .channels = 2,
                 .chunk = bytes / 32};
  sim_error err = {0};
  assert_int_equal(coll_plan_build(p, f->t, &s, &err), SIM_OK);
  assert_non_null(p->pool);
  assert_true(p->nphases > 4);
  sim_free(ranks);
}

/* Run tree A (all GPUs, twice) and tree B (half of them, starting during
 * A's first run) on one analytic backend under the tap; slices: as the
 * executor submits them, else with the capability hidden (the plain path). */
static void run(const fixture *f, bool slices, outcome *o) {
  memset(o, 0, sizeof *o);
  sim_ctx *sim = sim_create(1);
  be_backend *inner = be_analytic_create(sim, f->t, &f->cfg);
  be_ops plain_inner = *inner->ops;
  if (!slices) {
    plain_inner.submit_slice = NULL;
    plain_inner.pool_release = NULL;
    inner->ops = &plain_inner;
  }
  tel_tap *tap = NULL;
  be_backend *b = tel_tap_wrap(inner, &tap);
  be_ops plain_tap = *b->ops;
  if (!slices) {
    plain_tap.submit_slice = NULL;
    plain_tap.pool_release = NULL;
    b->ops = &plain_tap;
  }
  coll_plan a, bp;
  uint32_t n = topo_gpu_count(f->t);
  build_tree(&a, f, n, 64ull << 20);
  build_tree(&bp, f, n / 2, 16ull << 20);
  runner r = {.b = b, .a = &a, .bplan = &bp, .o = o};
  coll_exec_start(&r.ea, b, &a, a_done, &r);
  ev_schedule(sim, 20 * SIM_PS_PER_S / 1000000, b_start, &r, 0); /* 20 us in */
  ev_schedule(sim, 50 * SIM_PS_PER_S / 1000000, b_start, &r, 1); /* the same pool twice at once */
  ev_run(sim, SIM_TIME_MAX);
  assert_int_equal(r.runs_a, 2);
  assert_true(r.eb.finished && r.ec.finished);
  b->ops->stats(b, &o->st);

  tel_portmap pm;
  tel_portmap_build(&pm, f->t);
  tel *t = NULL;
  simtime_ps end = sim_now(sim);
  tel_config c = {.interval = end / 50 + 1,
                  .gpus = topo_gpu_count(f->t),
                  .nics = topo_nic_count(f->t),
                  .ports = pm.nports,
                  .nic_bps = f->cfg.cluster.nic.bandwidth,
                  .port_bps = pm.bps};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  tel_tap_replay(tap, t, &pm, TEL_TAP_GPUS);
  tel_finish(t, end);
  tel_totals_get(t, &o->tot);
  o->events = tel_event_count(t);
  tel_destroy(t);
  tel_portmap_free(&pm);
  be_destroy(b);
  coll_plan_free(&a);
  coll_plan_free(&bp);
  sim_destroy(sim);
}

static void check_routing(const char *routing) {
  char set[64];
  snprintf(set, sizeof set, "fabric.routing=%s", routing);
  const char *const sets[] = {"cluster.nodes=8", "fabric.switch_radix=8", "fabric.tiers=3", set};
  fixture f;
  load(&f, sets, 4);
  outcome s, p;
  run(&f, true, &s);
  run(&f, false, &p);
  assert_true(s.end_a[0] > 0 && s.end_b > 0);
  assert_int_equal(s.end_a[0], p.end_a[0]);
  assert_int_equal(s.end_a[1], p.end_a[1]);
  assert_int_equal(s.end_b, p.end_b);
  assert_int_equal(s.end_c, p.end_c);
  assert_int_equal(s.st.transfers, p.st.transfers);
  assert_int_equal(s.st.bytes, p.st.bytes);
  assert_int_equal(s.st.max_link_sharing, p.st.max_link_sharing);
  assert_true(s.st.max_link_sharing > 1);
  assert_int_equal(s.st.fct_p50, p.st.fct_p50);
  assert_int_equal(s.st.fct_p99, p.st.fct_p99);
  assert_int_equal(s.st.fct_p999, p.st.fct_p999);
  assert_int_equal(s.st.fct_max, p.st.fct_max);
  assert_true(s.st.fct_mean_s == p.st.fct_mean_s);
  assert_true(s.tot.nic_bytes[TEL_TX] == p.tot.nic_bytes[TEL_TX]);
  assert_true(s.tot.nic_bytes[TEL_RX] == p.tot.nic_bytes[TEL_RX]);
  assert_true(s.tot.port_bytes == p.tot.port_bytes);
  assert_true(s.tot.port_bytes > 0);
  for (int g = 0; g < TEL_GPU_NSTATES; g++) assert_true(s.tot.gpu_frac[g] == p.tot.gpu_frac[g]);
  assert_int_equal(s.events, p.events);
  unload(&f);
}

static void test_static(void **state) {
  (void)state;
  check_routing("static");
}

static void test_ecmp(void **state) {
  (void)state;
  check_routing("ecmp");
}

static void test_spray(void **state) {
  (void)state;
  check_routing("spray");
}

static void test_adaptive(void **state) {
  (void)state;
  check_routing("adaptive");
}

/* Without the capability, be_submit_slice is submit_phase on the slice and
 * be_pool_release a no-op (also for NULL). */
static void test_fallback(void **state) {
  (void)state;
  const char *const sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_analytic_create(sim, f.t, &f.cfg);
  be_ops ops = *b->ops;
  ops.submit_slice = NULL;
  ops.pool_release = NULL;
  b->ops = &ops;
  be_xfer pool[3] = {{.src_gpu = 0, .dst_gpu = 8, .bytes = 1000},
                     {.src_gpu = 1, .dst_gpu = 9, .bytes = 2000},
                     {.src_gpu = 2, .dst_gpu = 10, .bytes = 4000}};
  be_slice sl = {.pool = pool, .pool_n = 3, .off = 1, .n = 2};
  be_submit_slice(b, &sl, 3, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  be_pool_release(b, pool);
  be_pool_release(NULL, pool);
  be_stats st;
  b->ops->stats(b, &st);
  assert_int_equal(st.transfers, 2 * 3);
  assert_int_equal(st.bytes, (2000 + 4000) * 3);
  be_destroy(b);
  sim_destroy(sim);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_static), cmocka_unit_test(test_ecmp),
                                     cmocka_unit_test(test_spray), cmocka_unit_test(test_adaptive),
                                     cmocka_unit_test(test_fallback)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
