/* The flow solver with traffic classes (src/flow/net.c): strict priority
 * levels over weighted classes, a class's flows sharing its part equally,
 * checked against closed forms on hand-made channels (capacity C = 100):
 *   - one channel, weights 3:1, one flow each: 3C/4 and C/4;
 *   - one channel, weights 1:1, three flows against one: C/6 each and C/2
 *     (classes share by weight, not flows);
 *   - strict priority: the high class takes the channel, the low one
 *     what the high one cannot use;
 *   - two bottlenecks: a1 (class A, weight 3) and b1 (class B, weight 1)
 *     on X, a1, a2, a3 (class A) on Y. Y holds class A's flows at C/3
 *     each, so on X class A takes only C/3 and b1 gets the rest, 2C/3:
 *     the solver waits for X until a1 is fixed at Y (a solver that fixed
 *     b1 at its weighted part C/4 first would leave 5C/12 of X unused);
 *   - the same flow set added in another order gets bit-identical rates;
 *   - one class solves exactly as before (no class scratch made). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/backend.h"
#include "flow/flow_internal.h"
#include "fixture.h"

enum { X = 0, Y = 1, P0 = 2 }; /* channels X, Y; P0.. private ones */
static const double C = 100.0;

static void solve_apply(flow__net *net) {
  flow__net_solve(net);
  for (size_t i = 0; i < net->nchanged; i++) {
    flow__flow *f = flow__net_flow(net, net->changed[i]);
    f->rate = f->new_rate;
  }
}

/* A net over a small fabric's channels, X and Y of capacity C, private
 * channels large; classes: 1 (A) weight wa, 2 (B) weight wb, 7 strict. */
static void net_init(fixture *f, flow__net *net, uint32_t wa, uint32_t wb) {
  const char *sets[] = {"cluster.nodes=2"};
  load(f, sets, 1);
  f->cfg.fabric.classes.v[1].weight = wa;
  f->cfg.fabric.classes.v[2].weight = wb;
  flow__net_init(net, f->t);
  flow__net_set_classes(net, &f->cfg.fabric.classes);
  assert_true(net->nch > P0 + 8);
  for (uint32_t c = 0; c < net->nch; c++) flow__net_set_cap(net, c, c < P0 ? C : 1e6 * C);
}

static const uint32_t path_x[] = {X}, path_y[] = {Y}, path_xy[] = {X, Y};

static void test_weights_one_channel(void **state) {
  (void)state;
  fixture f;
  flow__net net;
  net_init(&f, &net, 3, 1);
  uint32_t a = flow__net_add_class(&net, path_x, 1, 1);
  uint32_t b = flow__net_add_class(&net, path_x, 1, 2);
  solve_apply(&net);
  assert_float_equal(flow__net_flow(&net, a)->rate, 0.75 * C, 1e-9);
  assert_float_equal(flow__net_flow(&net, b)->rate, 0.25 * C, 1e-9);
  assert_int_equal(net.class_solves, 1);
  /* b leaves: a alone gets all of X (a one-class component solves as before) */
  flow__net_remove(&net, b);
  solve_apply(&net);
  assert_true(flow__net_flow(&net, a)->rate == C);
  assert_int_equal(net.class_solves, 1);
  flow__net_free(&net);
  unload(&f);
}

static void test_classes_not_flows(void **state) {
  (void)state;
  fixture f;
  flow__net net;
  net_init(&f, &net, 1, 1);
  uint32_t a[3], b = flow__net_add_class(&net, path_x, 1, 2);
  for (int i = 0; i < 3; i++) a[i] = flow__net_add_class(&net, path_x, 1, 1);
  solve_apply(&net);
  for (int i = 0; i < 3; i++) assert_float_equal(flow__net_flow(&net, a[i])->rate, C / 6, 1e-9);
  assert_float_equal(flow__net_flow(&net, b)->rate, C / 2, 1e-9);
  flow__net_free(&net);
  unload(&f);
}

static void test_strict_priority(void **state) {
  (void)state;
  fixture f;
  flow__net net;
  net_init(&f, &net, 1, 1);
  uint32_t hi = flow__net_add_class(&net, path_x, 1, 7),
           lo = flow__net_add_class(&net, path_x, 1, 1);
  solve_apply(&net);
  assert_true(flow__net_flow(&net, hi)->rate == C);
  assert_true(flow__net_flow(&net, lo)->rate == 0.0);
  /* the high flow also crosses Y, where three more class-7 flows hold it
   * to C/4: the low class gets the 3C/4 of X it leaves */
  flow__net_remove(&net, hi);
  uint32_t path_hi[] = {X, Y};
  hi = flow__net_add_class(&net, path_hi, 2, 7);
  for (int i = 0; i < 3; i++) flow__net_add_class(&net, path_y, 1, 7);
  solve_apply(&net);
  assert_float_equal(flow__net_flow(&net, hi)->rate, C / 4, 1e-9);
  assert_float_equal(flow__net_flow(&net, lo)->rate, 0.75 * C, 1e-9);
  flow__net_free(&net);
  unload(&f);
}

/* The two-bottleneck closed form of the header; `order` permutes the adds. */
static void two_bottlenecks(const int order[4], double out[4]) {
  fixture f;
  flow__net net;
  net_init(&f, &net, 3, 1);
  const uint32_t *paths[4] = {path_xy, path_x, path_y, path_y}; /* a1, b1, a2, a3 */
  const uint32_t len[4] = {2, 1, 1, 1};
  const uint8_t cls[4] = {1, 2, 1, 1};
  uint32_t id[4];
  for (int k = 0; k < 4; k++) {
    int i = order[k];
    id[i] = flow__net_add_class(&net, paths[i], len[i], cls[i]);
  }
  solve_apply(&net);
  for (int i = 0; i < 4; i++) out[i] = flow__net_flow(&net, id[i])->rate;
  assert_int_equal(net.class_fallbacks, 0);
  flow__net_free(&net);
  unload(&f);
}

static void test_two_bottlenecks(void **state) {
  (void)state;
  static const int fwd[4] = {0, 1, 2, 3}, rev[4] = {3, 2, 1, 0};
  double r[4], q[4];
  two_bottlenecks(fwd, r);
  assert_float_equal(r[0], C / 3, 1e-9);     /* a1: held at Y */
  assert_float_equal(r[1], 2 * C / 3, 1e-9); /* b1: the rest of X, not its C/4 */
  assert_float_equal(r[2], C / 3, 1e-9);
  assert_float_equal(r[3], C / 3, 1e-9);
  two_bottlenecks(rev, q);
  for (int i = 0; i < 4; i++) assert_true(q[i] == r[i]); /* order-free, bit for bit */
}

/* One class on shared channels: plain max-min (flow__net_add, class 0),
 * no class scratch made. */
static void test_one_class_unchanged(void **state) {
  (void)state;
  fixture f;
  flow__net net;
  net_init(&f, &net, 3, 1);
  uint32_t a = flow__net_add(&net, path_xy, 2), b = flow__net_add(&net, path_x, 1);
  uint32_t c = flow__net_add(&net, path_y, 1), d = flow__net_add(&net, path_y, 1);
  solve_apply(&net);
  assert_true(flow__net_flow(&net, a)->rate == C / 3);
  assert_true(flow__net_flow(&net, b)->rate == C - C / 3);
  assert_true(flow__net_flow(&net, c)->rate == C / 3 && flow__net_flow(&net, d)->rate == C / 3);
  assert_null(net.cu);
  assert_int_equal(net.class_solves, 0);
  flow__net_free(&net);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_weights_one_channel), cmocka_unit_test(test_classes_not_flows),
      cmocka_unit_test(test_strict_priority),     cmocka_unit_test(test_two_bottlenecks),
      cmocka_unit_test(test_one_class_unchanged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
