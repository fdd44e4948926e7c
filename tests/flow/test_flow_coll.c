/* Flow fidelity on collectives: cross-checks against the analytic fidelity,
 * the repetition shortcut against explicit repetition (including a phase
 * that arrives in the middle of a fast-forward), and determinism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/coll.h"
#include "flow/flow_internal.h"
#include "fixture.h"

typedef enum { ANALYTIC, FLOW, FLOW_EXPLICIT } kind;

static be_backend *make(kind k, sim_ctx *sim, const fixture *f) {
  if (k == ANALYTIC) return be_analytic_create(sim, f->t, &f->cfg);
  be_backend *b = be_flow_create(sim, f->t, &f->cfg);
  flow__set_shortcut(b, k == FLOW);
  return b;
}

static void build(const fixture *f, coll_plan *plan, cfg_coll_op op, uint64_t bytes, uint32_t n,
                  uint32_t first, uint32_t channels) {
  uint32_t ranks[256];
  assert_true(n <= 256);
  for (uint32_t i = 0; i < n; i++) ranks[i] = first + i;
  coll_spec spec = {.op = op,
                    .algorithm = op == CFG_COLL_ALLTOALL ? CFG_ALGO_PAIRWISE : CFG_ALGO_RING,
                    .bytes = bytes,
                    .ranks = ranks,
                    .nranks = n,
                    .channels = channels,
                    .chunk = 1 << 20};
  sim_error err = {0};
  assert_int_equal(coll_plan_build(plan, f->t, &spec, &err), SIM_OK);
}

/* Run one collective on ranks first .. first+n-1; returns simulated ps. */
static simtime_ps run_coll(const fixture *f, kind k, cfg_coll_op op, uint64_t bytes, uint32_t n,
                           uint32_t channels, be_stats *st) {
  coll_plan plan;
  build(f, &plan, op, bytes, n, 0, channels);
  sim_ctx *sim = sim_create(1);
  be_backend *b = make(k, sim, f);
  coll_exec e;
  coll_exec_start(&e, b, &plan, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(e.finished);
  be_stats s;
  b->ops->stats(b, &s);
  assert_int_equal(s.transfers, coll_plan_transfers(&plan));
  if (st) *st = s;
  be_destroy(b);
  sim_destroy(sim);
  coll_plan_free(&plan);
  return e.end - e.start;
}

static void assert_rel(simtime_ps got, simtime_ps want, double rel, simtime_ps ps) {
  double d = fabs((double)got - (double)want);
  if (d > rel * (double)want + (double)ps)
    fail_msg("got %llu ps, want %llu ps (rel %.3g + %llu ps)", (unsigned long long)got,
             (unsigned long long)want, rel, (unsigned long long)ps);
}

/* No two flows share a channel: flow and analytic agree (to rounding). */
static void test_cross_check_no_sharing(void **state) {
  (void)state;
  const char *one[] = {"cluster.nodes=1"};
  const char *two[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, one, 1);
  uint64_t S = 1ull << 30;
  simtime_ps a = run_coll(&f, ANALYTIC, CFG_COLL_ALLREDUCE, S, 8, 1, NULL);
  simtime_ps fl = run_coll(&f, FLOW, CFG_COLL_ALLREDUCE, S, 8, 1, NULL);
  assert_rel(fl, a, 0.05, 0);
  assert_rel(fl, a, 0, 14); /* in fact to a picosecond per step */
  cfg_coll_op ops[] = {CFG_COLL_ALLGATHER, CFG_COLL_BROADCAST, CFG_COLL_ALLTOALL};
  for (size_t i = 0; i < 3; i++) {
    a = run_coll(&f, ANALYTIC, ops[i], 64u << 20, 8, 1, NULL);
    fl = run_coll(&f, FLOW, ops[i], 64u << 20, 8, 1, NULL);
    assert_rel(fl, a, 0, 100);
  }
  unload(&f);
  load(&f, two, 1);
  a = run_coll(&f, ANALYTIC, CFG_COLL_ALLREDUCE, S, 16, 1, NULL);
  fl = run_coll(&f, FLOW, CFG_COLL_ALLREDUCE, S, 16, 1, NULL);
  assert_rel(fl, a, 0.05, 0);
  assert_rel(fl, a, 0, 30);
  unload(&f);
}

/* Symmetric sharing (8 rings in one node: 8 flows on every NVLink
 * direction): counting and max-min agree too. */
static void test_cross_check_symmetric(void **state) {
  (void)state;
  const char *one[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, one, 1);
  be_stats sa, sf;
  simtime_ps a = run_coll(&f, ANALYTIC, CFG_COLL_ALLREDUCE, 1ull << 30, 8, 8, &sa);
  simtime_ps fl = run_coll(&f, FLOW, CFG_COLL_ALLREDUCE, 1ull << 30, 8, 8, &sf);
  assert_rel(fl, a, 0, 14);
  assert_int_equal(sf.max_link_sharing, sa.max_link_sharing);
  assert_int_equal(sf.bytes, sa.bytes);
  unload(&f);
}

/* With ECMP collisions max-min never does worse than counting: every flow's
 * rate is at least the smallest equal share on its path. */
static void test_ecmp_bound(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4", "fabric.switch_radix=8"};
  fixture f;
  load(&f, sets, 2);
  cfg_coll_op ops[] = {CFG_COLL_ALLREDUCE, CFG_COLL_ALLTOALL};
  for (size_t i = 0; i < 2; i++) {
    simtime_ps a = run_coll(&f, ANALYTIC, ops[i], 256u << 20, 32, 8, NULL);
    simtime_ps fl = run_coll(&f, FLOW, ops[i], 256u << 20, 32, 8, NULL);
    assert_true(fl <= a + 64 * 8);
  }
  unload(&f);
  /* Multi-plane: cross-plane hops detour over NVLink first. */
  const char *mp[] = {"cluster.nodes=4", "fabric.topology=multi-plane", "fabric.switch_radix=4"};
  load(&f, mp, 3);
  for (size_t i = 0; i < 2; i++) {
    simtime_ps a = run_coll(&f, ANALYTIC, ops[i], 256u << 20, 32, 8, NULL);
    simtime_ps fl = run_coll(&f, FLOW, ops[i], 256u << 20, 32, 8, NULL);
    assert_true(fl <= a + 64 * 8);
    assert_int_equal(fl, run_coll(&f, FLOW_EXPLICIT, ops[i], 256u << 20, 32, 8, NULL));
  }
  unload(&f);
}

/* Repetition shortcut == explicit repetition, to the picosecond. */
static void test_repeat_shortcut(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4", "fabric.switch_radix=8"};
  fixture f;
  load(&f, sets, 2);
  be_stats s1, s2;
  simtime_ps t1 = run_coll(&f, FLOW, CFG_COLL_ALLREDUCE, 64u << 20, 32, 8, &s1);
  simtime_ps t2 = run_coll(&f, FLOW_EXPLICIT, CFG_COLL_ALLREDUCE, 64u << 20, 32, 8, &s2);
  assert_int_equal(t1, t2);
  assert_memory_equal(&s1, &s2, sizeof s1);
  /* A phase with rate changes inside each repetition (the parking lot). */
  uint64_t S = 9u << 17;
  be_xfer x[4] = {{.src_gpu = 0, .dst_gpu = 1, .bytes = S},
                  {.src_gpu = 0, .dst_gpu = 2, .bytes = 3 * S},
                  {.src_gpu = 3, .dst_gpu = 2, .bytes = S},
                  {.src_gpu = 4, .dst_gpu = 2, .bytes = S}};
  simtime_ps t[2];
  for (int k = 0; k < 2; k++) {
    sim_ctx *sim = sim_create(1);
    be_backend *b = make(k ? FLOW_EXPLICIT : FLOW, sim, &f);
    be_submit_phase(b, x, 4, 1000, NULL, NULL);
    uint64_t events = ev_run(sim, SIM_TIME_MAX);
    if (k == 0) assert_true(events < 100); /* one repetition, then one jump */
    t[k] = sim_now(sim);
    be_destroy(b);
    sim_destroy(sim);
  }
  assert_int_equal(t[0], t[1]);
  unload(&f);
}

/* Phase B arrives at `at` while phase A (repeat 40) may be fast-forwarding;
 * the end times of A and B must not depend on the shortcut. */
typedef struct arrival {
  be_backend *b;
  const be_xfer *x;
  size_t n;
  uint64_t repeat;
  simtime_ps end;
} arrival;

static void arrival_done(sim_ctx *sim, void *ctx) { ((arrival *)ctx)->end = sim_now(sim); }
static void arrival_go(sim_ctx *sim, void *obj, uint64_t arg) {
  arrival *a = obj;
  (void)sim;
  (void)arg;
  be_submit_phase(a->b, a->x, a->n, a->repeat, arrival_done, a);
}

static void two_phases(const fixture *f, kind k, const be_xfer *xa, size_t na, const be_xfer *xb,
                       size_t nb, simtime_ps at, simtime_ps *ea, simtime_ps *eb, be_stats *st) {
  sim_ctx *sim = sim_create(1);
  be_backend *b = make(k, sim, f);
  arrival A = {.b = b, .x = xa, .n = na, .repeat = 40}, B = {.b = b, .x = xb, .n = nb, .repeat = 3};
  ev_schedule(sim, 0, arrival_go, &A, 0);
  if (nb) ev_schedule(sim, at, arrival_go, &B, 0);
  ev_run(sim, SIM_TIME_MAX);
  *ea = A.end;
  *eb = B.end;
  b->ops->stats(b, st);
  be_destroy(b);
  sim_destroy(sim);
}

static void test_repeat_interrupted(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  uint64_t S = 9u << 17;
  be_xfer xa[4] = {{.src_gpu = 0, .dst_gpu = 1, .bytes = S},
                   {.src_gpu = 0, .dst_gpu = 2, .bytes = 3 * S},
                   {.src_gpu = 3, .dst_gpu = 2, .bytes = S},
                   {.src_gpu = 4, .dst_gpu = 2, .bytes = S}};
  be_xfer shared[2] = {{.src_gpu = 5, .dst_gpu = 2, .bytes = 2 * S},
                       {.src_gpu = 0, .dst_gpu = 6, .bytes = S}};
  be_xfer disjoint[1] = {{.src_gpu = 6, .dst_gpu = 7, .bytes = 5 * S}};
  /* One repetition of A alone. */
  simtime_ps d, unused;
  be_stats st;
  two_phases(&f, FLOW, xa, 4, NULL, 0, 0, &d, &unused, &st);
  d /= 40;
  simtime_ps lat = 0;
  {
    topo_path p;
    topo_route(f.t, 0, 1, 0, &p);
    lat = topo_path_latency(f.t, &p);
  }
  /* Arrivals: inside the first (explicit) repetition, at a repetition
   * boundary, mid-drain, in the latency tail, at A's very end and after. */
  simtime_ps ats[] = {d / 3,  5 * d, 7 * d + d / 3, 12 * d + d / 2, 20 * d - lat / 2,
                      40 * d, 41 * d};
  const be_xfer *bs[] = {shared, disjoint};
  size_t nbs[] = {2, 1};
  for (size_t i = 0; i < sizeof ats / sizeof *ats; i++)
    for (size_t j = 0; j < 2; j++) {
      simtime_ps a1, b1, a2, b2;
      be_stats s1, s2;
      two_phases(&f, FLOW, xa, 4, bs[j], nbs[j], ats[i], &a1, &b1, &s1);
      two_phases(&f, FLOW_EXPLICIT, xa, 4, bs[j], nbs[j], ats[i], &a2, &b2, &s2);
      if (a1 != a2 || b1 != b2)
        fail_msg("arrival %zu/%zu: A %llu vs %llu, B %llu vs %llu", i, j, (unsigned long long)a1,
                 (unsigned long long)a2, (unsigned long long)b1, (unsigned long long)b2);
      assert_int_equal(s1.transfers, s2.transfers);
      assert_int_equal(s1.bytes, s2.bytes);
      if (j == 0 && ats[i] < 40 * d) assert_true(a1 > 40 * d); /* B slowed A down */
    }
  unload(&f);
}

/* Same plan twice (and two simulations side by side): identical results. */
static void test_determinism(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4", "fabric.switch_radix=8"};
  fixture f;
  load(&f, sets, 2);
  coll_plan p1, p2;
  build(&f, &p1, CFG_COLL_ALLREDUCE, 96u << 20, 16, 0, 8);
  build(&f, &p2, CFG_COLL_ALLTOALL, 32u << 20, 24, 8, 1);
  simtime_ps ends[2][2];
  be_stats st[2];
  sim_ctx *sims[2];
  be_backend *bs[2];
  coll_exec e[2][2];
  for (int r = 0; r < 2; r++) {
    sims[r] = sim_create(1);
    bs[r] = make(FLOW, sims[r], &f);
    coll_exec_start(&e[r][0], bs[r], &p1, NULL, NULL); /* overlapping ranks: contention */
    coll_exec_start(&e[r][1], bs[r], &p2, NULL, NULL);
  }
  for (int r = 0; r < 2; r++) {
    ev_run(sims[r], SIM_TIME_MAX);
    for (int c = 0; c < 2; c++) {
      assert_true(e[r][c].finished);
      ends[r][c] = e[r][c].end;
    }
    bs[r]->ops->stats(bs[r], &st[r]);
  }
  assert_int_equal(ends[0][0], ends[1][0]);
  assert_int_equal(ends[0][1], ends[1][1]);
  assert_memory_equal(&st[0], &st[1], sizeof st[0]);
  assert_int_equal(st[0].transfers, coll_plan_transfers(&p1) + coll_plan_transfers(&p2));
  /* Run alone, each is faster than together. */
  simtime_ps alone = run_coll(&f, FLOW, CFG_COLL_ALLREDUCE, 96u << 20, 16, 8, NULL);
  assert_true(alone <= ends[0][0]);
  for (int r = 0; r < 2; r++) {
    be_destroy(bs[r]);
    sim_destroy(sims[r]);
  }
  coll_plan_free(&p1);
  coll_plan_free(&p2);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cross_check_no_sharing),
      cmocka_unit_test(test_cross_check_symmetric),
      cmocka_unit_test(test_ecmp_bound),
      cmocka_unit_test(test_repeat_shortcut),
      cmocka_unit_test(test_repeat_interrupted),
      cmocka_unit_test(test_determinism),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
