/* The flow solver alone: random adds and removes on a small fat-tree with
 * ECMP, checking after every incremental solve that
 *   - the rates are feasible and max-min fair (every flow has a bottleneck:
 *     a saturated channel on which no flow gets more), and
 *   - they are bit-identical to a fresh network solving the same flows at
 *     once (incremental == full, independent of history). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/backend.h"
#include "flow/flow_internal.h"
#include "fixture.h"

/* Apply a solve's results as the backend does. */
static void solve_apply(flow__net *net) {
  flow__net_solve(net);
  for (size_t i = 0; i < net->nchanged; i++) {
    flow__flow *f = flow__net_flow(net, net->changed[i]);
    f->rate = f->new_rate;
  }
}

enum { MAXF = 400 };

typedef struct model {
  topo_path path[MAXF];
  uint32_t id[MAXF]; /* id in the net, or UINT32_MAX when not live */
} model;

static void check_maxmin(const fixture *fx, flow__net *net, const model *m) {
  uint32_t nch = 2 * topo_link_count(fx->t);
  double *load = calloc(nch, sizeof *load), *top = calloc(nch, sizeof *top);
  for (int i = 0; i < MAXF; i++) {
    if (m->id[i] == UINT32_MAX) continue;
    const flow__flow *f = flow__net_flow(net, m->id[i]);
    assert_true(f->rate > 0);
    for (uint32_t j = 0; j < m->path[i].n; j++) {
      uint32_t c = m->path[i].ch[j];
      load[c] += f->rate;
      if (f->rate > top[c]) top[c] = f->rate;
    }
  }
  for (uint32_t c = 0; c < nch; c++) assert_true(load[c] <= net->cap[c] * (1 + 1e-9));
  for (int i = 0; i < MAXF; i++) {
    if (m->id[i] == UINT32_MAX) continue;
    const flow__flow *f = flow__net_flow(net, m->id[i]);
    bool bottleneck = false;
    for (uint32_t j = 0; j < m->path[i].n && !bottleneck; j++) {
      uint32_t c = m->path[i].ch[j];
      bottleneck = load[c] >= net->cap[c] * (1 - 1e-9) && f->rate >= top[c] * (1 - 1e-12);
    }
    if (!bottleneck) fail_msg("flow %d (rate %.6g) has no bottleneck", i, f->rate);
  }
  free(load);
  free(top);
}

/* A fresh network with the live flows, added in a shuffled order. */
static void check_fresh(const fixture *fx, flow__net *net, const model *m, sim_rng *rng) {
  flow__net fresh;
  flow__net_init(&fresh, fx->t);
  int order[MAXF], n = 0;
  for (int i = 0; i < MAXF; i++)
    if (m->id[i] != UINT32_MAX) order[n++] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)sim_rng_below(rng, (uint64_t)i + 1), tmp = order[i];
    order[i] = order[j];
    order[j] = tmp;
  }
  uint32_t ids[MAXF];
  for (int k = 0; k < n; k++)
    ids[order[k]] = flow__net_add(&fresh, m->path[order[k]].ch, m->path[order[k]].n);
  solve_apply(&fresh);
  assert_int_equal(fresh.ncomp_fl, n);
  for (int k = 0; k < n; k++) {
    int i = order[k];
    double a = flow__net_flow(net, m->id[i])->rate, b = flow__net_flow(&fresh, ids[i])->rate;
    if (a != b) fail_msg("flow %d: incremental %.17g, fresh %.17g", i, a, b);
  }
  flow__net_free(&fresh);
}

static void test_random_incremental(void **state) {
  (void)state;
  /* 4 nodes x 8 GPUs on radix-8 leaves: traffic crosses spines with ECMP. */
  const char *sets[] = {"cluster.nodes=4", "fabric.switch_radix=8"};
  fixture fx;
  load(&fx, sets, 2);
  uint32_t gpus = topo_gpu_count(fx.t);
  static model m;
  for (int i = 0; i < MAXF; i++) m.id[i] = UINT32_MAX;
  flow__net net;
  flow__net_init(&net, fx.t);
  sim_rng rng;
  sim_rng_init(&rng, 42, "test_net");
  uint64_t solved = 0;
  for (int round = 0; round < 300; round++) {
    /* A batch of 1..8 changes, then one solve. */
    int changes = 1 + (int)sim_rng_below(&rng, 8);
    for (int k = 0; k < changes; k++) {
      int i = (int)sim_rng_below(&rng, MAXF);
      if (m.id[i] != UINT32_MAX) {
        flow__net_remove(&net, m.id[i]);
        m.id[i] = UINT32_MAX;
        continue;
      }
      uint32_t s = (uint32_t)sim_rng_below(&rng, gpus), d = (uint32_t)sim_rng_below(&rng, gpus - 1);
      if (d >= s) d++;
      assert_int_equal(topo_route(fx.t, s, d, sim_rng_u64(&rng), &m.path[i]), SIM_OK);
      m.id[i] = flow__net_add(&net, m.path[i].ch, m.path[i].n);
    }
    solve_apply(&net);
    solved += net.ncomp_fl;
    check_maxmin(&fx, &net, &m);
    if (round % 10 == 0) check_fresh(&fx, &net, &m, &rng);
  }
  /* Incremental: far fewer flows re-solved than live flows x solves. */
  assert_true(solved < 300ull * net.live);
  assert_int_equal(net.solves, 300);
  flow__net_free(&net);
  unload(&fx);
}

/* A flow added to a busy channel re-solves only its component; removing
 * everything leaves nothing to solve. */
static void test_components(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  flow__net net;
  flow__net_init(&net, f.t);
  topo_path p01, p02, p34;
  topo_route(f.t, 0, 1, 0, &p01);
  topo_route(f.t, 0, 2, 0, &p02);
  topo_route(f.t, 3, 4, 0, &p34);
  uint32_t a = flow__net_add(&net, p01.ch, p01.n);
  uint32_t c = flow__net_add(&net, p34.ch, p34.n);
  solve_apply(&net);
  assert_int_equal(net.ncomp_fl, 2);
  assert_int_equal(net.nchanged, 2);
  double W =
      (double)fx_achievable(f.cfg.cluster.scale_up.bandwidth, f.cfg.cluster.scale_up.efficiency);
  assert_true(flow__net_flow(&net, a)->rate == W);
  assert_true(flow__net_flow(&net, c)->rate == W);
  uint32_t b = flow__net_add(&net, p02.ch, p02.n);
  solve_apply(&net);
  assert_int_equal(net.ncomp_fl, 2); /* a and b; c untouched */
  assert_int_equal(net.nchanged, 2);
  assert_true(flow__net_flow(&net, a)->rate == W / 2);
  assert_true(flow__net_flow(&net, b)->rate == W / 2);
  assert_int_equal(net.max_sharing, 2);
  flow__net_remove(&net, a);
  solve_apply(&net);
  assert_int_equal(net.ncomp_fl, 1);
  assert_true(flow__net_flow(&net, b)->rate == W);
  flow__net_remove(&net, b);
  flow__net_remove(&net, c);
  solve_apply(&net);
  assert_int_equal(net.ncomp_fl, 0);
  assert_int_equal(net.live, 0);
  flow__net_solve(&net);
  assert_int_equal(net.nchanged, 0);
  flow__net_free(&net);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_incremental),
      cmocka_unit_test(test_components),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
