/* The class path (slices that carry their pool's cuts: the analytic
 * fidelity times, and the telemetry tap logs and replays, classes of a
 * pool's quotient, be_quot) against the two exact paths it must agree with
 * to the bit: the per-transfer slice path (the same slices without cuts)
 * and the plain path (every phase through submit_phase). Each case runs a
 * collective on the analytic backend under the tap three times and
 * compares completion times, be_stats (transfers, bytes, busiest channel,
 * FCT percentiles and mean) and the replayed telemetry: every row of the
 * GPU, NIC and port groups, watched ports and NICs, the totals, the top
 * ports and every event. Cases: symmetric fabrics (fat-tree of 3 tiers,
 * multi-plane) where classes are few, and those where symmetry breaks and
 * classes split or the exact path takes over: oversubscription, ECMP
 * collisions, spray pools, adaptive routing (per packet: pools; per
 * flowlet no classes: routed by the counts of the moment), nodes left out, uneven node blocks, a
 * ring broadcast, and another collective on the fabric at the same time. A shortcut that moved any
 * figure fails here; the class path is checked to have run where it applies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "backend/analytic_internal.h"
#include "fabsim/coll.h"
#include "fabsim/tel_tap.h"
#include "fixture.h"

enum { CLASSES, PER_TRANSFER, PLAIN, NMODES };

typedef struct ccase {
  const char *sets[6];
  int nsets;
  cfg_coll_op op;
  cfg_coll_algorithm algo;
  uint32_t skip_node;  /* nodes n with n % skip_node == 1 left out (0: none) */
  uint32_t short_node; /* this node takes half its GPUs (UINT32_MAX: none) */
  bool second;         /* another collective on half the GPUs, 20 us in */
  bool classes;        /* the class path must have timed phases */
} ccase;

typedef struct outcome {
  simtime_ps end[2];
  be_stats st;
  uint64_t class_phases;
  tel *tl;
} outcome;

typedef struct runner {
  be_backend *b;
  coll_plan *p[2];
  coll_exec e[2];
  outcome *o;
} runner;

static void done0(sim_ctx *sim, void *ctx) {
  runner *r = ctx;
  r->o->end[0] = sim_now(sim) - r->e[0].start;
}

static void done1(sim_ctx *sim, void *ctx) {
  runner *r = ctx;
  r->o->end[1] = sim_now(sim) - r->e[1].start;
}

static void start1(sim_ctx *sim, void *obj, uint64_t arg) {
  runner *r = obj;
  (void)sim;
  (void)arg;
  coll_exec_start(&r->e[1], r->b, r->p[1], done1, r);
}

static void build(coll_plan *p, const fixture *f, const ccase *c, uint32_t upto, uint64_t bytes) {
  uint32_t ng = topo_gpu_count(f->t), gpn = ng / topo_node_count(f->t), n = 0;
  uint32_t *ranks = sim_malloc(ng * sizeof *ranks);
  for (uint32_t g = 0; g < upto; g++) {
    uint32_t node = g / gpn;
    if (c->skip_node && node % c->skip_node == 1) continue;
    if (node == c->short_node && g % gpn >= gpn / 2) continue;
    ranks[n++] = g;
  }
  coll_spec s = {.op = c->op,
                 .algorithm = c->algo,
                 .protocol = CFG_PROTO_SIMPLE,
                 .bytes = bytes,
                 .ranks = ranks,
                 .nranks = n,
                 .channels = 2,
                 .chunk = bytes / 192, /* 48 chunks per tree: a steady state repeats */
                 .qps = 2};
  sim_error err = {0};
  if (coll_plan_build(p, f->t, &s, &err) != SIM_OK) fail_msg("%s", err.msg);
  assert_non_null(p->pool);
  assert_true(p->nphases > 4);
  sim_free(ranks);
}

static void run(const fixture *f, const ccase *c, int mode, outcome *o) {
  memset(o, 0, sizeof *o);
  sim_ctx *sim = sim_create(1);
  be_backend *inner = be_analytic_create(sim, f->t, &f->cfg);
  be_ops plain_inner = *inner->ops, plain_tap;
  if (mode == PLAIN) {
    plain_inner.submit_slice = NULL;
    plain_inner.pool_release = NULL;
    inner->ops = &plain_inner;
  }
  tel_tap *tap = NULL;
  be_backend *b = tel_tap_wrap(inner, &tap);
  if (mode == PLAIN) {
    plain_tap = *b->ops;
    plain_tap.submit_slice = NULL;
    plain_tap.pool_release = NULL;
    b->ops = &plain_tap;
  }
  uint32_t ng = topo_gpu_count(f->t);
  coll_plan p[2];
  build(&p[0], f, c, ng, 12ull << 20);
  if (c->second) build(&p[1], f, c, ng / 2, 4ull << 20);
  size_t *cuts[2] = {p[0].cuts, c->second ? p[1].cuts : NULL};
  for (int k = 0; k < 1 + c->second; k++)
    if (mode != CLASSES) p[k].cuts = NULL; /* slices without their cuts */
  runner r = {.b = b, .p = {&p[0], &p[1]}, .o = o};
  coll_exec_start(&r.e[0], b, &p[0], done0, &r);
  if (c->second) ev_schedule(sim, 20 * SIM_PS_PER_S / 1000000, start1, &r, 0);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(r.e[0].finished && (!c->second || r.e[1].finished));
  b->ops->stats(b, &o->st);
  o->class_phases = be__analytic_class_phases(inner);

  tel_portmap pm;
  tel_portmap_build(&pm, f->t);
  simtime_ps end = sim_now(sim);
  uint32_t watch_ports[] = {0, pm.nports / 3, pm.nports - 1}, watch_nics[] = {0, 5};
  tel_config tc = {.interval = end / 40 + 1,
                   .gpus = ng,
                   .nics = topo_nic_count(f->t),
                   .ports = pm.nports,
                   .nic_bps = f->cfg.cluster.nic.bandwidth,
                   .port_bps = pm.bps,
                   .watch_ports = watch_ports,
                   .nwatch_ports = 3,
                   .watch_nics = watch_nics,
                   .nwatch_nics = 2};
  assert_int_equal(tel_create(&o->tl, &tc, NULL), SIM_OK);
  tel_tap_replay(tap, o->tl, &pm, TEL_TAP_GPUS);
  tel_finish(o->tl, end);
  tel_portmap_free(&pm);
  be_destroy(b);
  for (int k = 0; k < 1 + c->second; k++) {
    p[k].cuts = cuts[k];
    coll_plan_free(&p[k]);
  }
  sim_destroy(sim);
}

/* Every figure of a and b equal, bit for bit. */
static void same(const outcome *a, const outcome *b) {
  assert_int_equal(a->end[0], b->end[0]);
  assert_int_equal(a->end[1], b->end[1]);
  assert_int_equal(a->st.transfers, b->st.transfers);
  assert_int_equal(a->st.bytes, b->st.bytes);
  assert_int_equal(a->st.max_link_sharing, b->st.max_link_sharing);
  assert_int_equal(a->st.fct_p50, b->st.fct_p50);
  assert_int_equal(a->st.fct_p99, b->st.fct_p99);
  assert_int_equal(a->st.fct_p999, b->st.fct_p999);
  assert_int_equal(a->st.fct_max, b->st.fct_max);
  assert_true(a->st.fct_mean_s == b->st.fct_mean_s);
  const tel *x = a->tl, *y = b->tl;
  assert_int_equal(tel_rows(x), tel_rows(y));
  assert_int_equal(tel_observed(x), tel_observed(y));
  for (size_t i = 0; i < tel_rows(x); i++) {
    assert_memory_equal(tel_gpu_row_at(x, i), tel_gpu_row_at(y, i), sizeof(tel_gpu_row));
    assert_memory_equal(tel_nic_row_at(x, i), tel_nic_row_at(y, i), sizeof(tel_nic_row));
    assert_memory_equal(tel_port_row_at(x, i), tel_port_row_at(y, i), sizeof(tel_port_row));
    for (uint32_t w = 0; w < tel_watch_count(x); w++)
      assert_memory_equal(tel_watch_row_at(x, i, w), tel_watch_row_at(y, i, w),
                          sizeof(tel_watch_row));
  }
  tel_totals tx, ty;
  tel_totals_get(x, &tx);
  tel_totals_get(y, &ty);
  assert_memory_equal(&tx, &ty, sizeof tx);
  assert_true(tx.port_bytes > 0 && tx.nic_bytes[TEL_TX] > 0);
  tel_port_total px[8], py[8];
  size_t nx = tel_top_ports(x, px, 8), ny = tel_top_ports(y, py, 8);
  assert_int_equal(nx, ny);
  assert_memory_equal(px, py, nx * sizeof *px);
  assert_int_equal(tel_event_count(x), tel_event_count(y));
  for (size_t i = 0; i < tel_event_count(x); i++) {
    tel_event_view ex, ey;
    tel_event_at(x, i, &ex);
    tel_event_at(y, i, &ey);
    assert_int_equal(ex.at, ey.at);
    assert_string_equal(ex.component, ey.component);
    assert_string_equal(ex.effect, ey.effect);
  }
}

static void check(const ccase *c) {
  fixture f;
  load(&f, c->sets, c->nsets);
  outcome o[NMODES];
  for (int m = 0; m < NMODES; m++) run(&f, c, m, &o[m]);
  same(&o[CLASSES], &o[PLAIN]);
  same(&o[PER_TRANSFER], &o[PLAIN]);
  if (c->classes) assert_true(o[CLASSES].class_phases > 0);
  else assert_int_equal(o[CLASSES].class_phases, 0);
  assert_int_equal(o[PER_TRANSFER].class_phases, 0);
  assert_int_equal(o[PLAIN].class_phases, 0);
  for (int m = 0; m < NMODES; m++) tel_destroy(o[m].tl);
  unload(&f);
}

#define TIER3 "cluster.nodes=16", "fabric.switch_radix=8", "fabric.tiers=3"

static void test_symmetric(void **state) {
  (void)state;
  ccase tree3 = {{TIER3}, 3, CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, 0, UINT32_MAX, false, true};
  check(&tree3);
  ccase planes = {{"cluster.nodes=16", "fabric.topology=multi-plane", "fabric.switch_radix=8"},
                  3,
                  CFG_COLL_ALLREDUCE,
                  CFG_ALGO_TREE,
                  0,
                  UINT32_MAX,
                  false,
                  true};
  check(&planes);
}

static void test_routing(void **state) {
  (void)state;
  ccase ecmp = {{TIER3, "fabric.routing=ecmp"},
                4,
                CFG_COLL_ALLREDUCE,
                CFG_ALGO_TREE,
                0,
                UINT32_MAX,
                false,
                true};
  check(&ecmp);
  ccase spray = {{TIER3, "fabric.routing=spray"},
                 4,
                 CFG_COLL_ALLREDUCE,
                 CFG_ALGO_TREE,
                 0,
                 UINT32_MAX,
                 false,
                 true};
  check(&spray);
  /* adaptive per packet: split over pools, as spray; per flowlet: routed by the counts */
  ccase packet = {{TIER3, "fabric.routing=adaptive"},
                  4,
                  CFG_COLL_ALLREDUCE,
                  CFG_ALGO_TREE,
                  0,
                  UINT32_MAX,
                  false,
                  true};
  check(&packet);
  ccase flowlet = {{TIER3, "fabric.routing=adaptive", "fabric.adaptive.flowlet_gap=1us"},
                   5,
                   CFG_COLL_ALLREDUCE,
                   CFG_ALGO_TREE,
                   0,
                   UINT32_MAX,
                   false,
                   false};
  check(&flowlet);
}

static void test_asymmetric(void **state) {
  (void)state;
  ccase over = {{"cluster.nodes=6", "fabric.switch_radix=8", "fabric.oversubscription=3"},
                3,
                CFG_COLL_ALLREDUCE,
                CFG_ALGO_TREE,
                0,
                UINT32_MAX,
                false,
                true};
  check(&over);
  ccase gaps = {{TIER3}, 3, CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, 3, UINT32_MAX, false, true};
  check(&gaps);
  ccase uneven = {{TIER3}, 3, CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, 0, 2, false, true};
  check(&uneven);
  ccase bcast = {{TIER3}, 3, CFG_COLL_BROADCAST, CFG_ALGO_RING, 0, UINT32_MAX, false, true};
  check(&bcast);
}

/* Another collective on the fabric: the class window is counted on the
 * channels when it starts, and the per-transfer path takes over. */
static void test_other_job(void **state) {
  (void)state;
  ccase two = {{TIER3}, 3, CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, 0, UINT32_MAX, true, true};
  check(&two);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_symmetric), cmocka_unit_test(test_routing),
      cmocka_unit_test(test_asymmetric), cmocka_unit_test(test_other_job)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
