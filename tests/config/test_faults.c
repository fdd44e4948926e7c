/* The faults: list: YAML block and flow forms, --set, per-kind validation
 * with file:line:col locations, cfg_where of entries and fields, dump round
 * trip, reliability.reconvergence defaults by transport. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cfg_fixture.h"
#include "fabsim/config.h"

static cfg_doc *load(cfg_scenario *s, const char *yaml, const char *const *sets, int nsets) {
  return cfx_load(s, "f.yaml", yaml, sets, nsets);
}

static void expect_error(const char *yaml, const char *set, const char *msg) {
  cfx_expect_error("f.yaml", yaml, set, msg);
}

static const char block[] =
    "simulation.fidelity: flow\n"
    "faults:\n"
    "  - {at: 1ms, kind: link-down, target: leaf0-spine0, duration: 2ms}\n"
    "  - at: 250us\n"
    "    kind: link-degraded\n"
    "    target: p1.leaf0-p1.spine0\n"
    "    factor: 0.5\n"
    "    ber: 1e-7\n"
    "  - {at: 3ms, kind: link-flap, target: leaf1-spine1, duration: 100us, period: 1ms, count: 4}\n"
    "  - {at: 5ms, kind: gpu-slowdown, target: gpu3, factor: 0.8}\n"
    "  - {at: 6ms, kind: node-fail, target: node2}\n";

static void test_block_and_flow(void **state) {
  cfg_scenario s;
  cfg_doc *doc;
  cfg_loc l;
  (void)state;
  doc = load(&s, block, NULL, 0);
  assert_int_equal(s.faults.n, 5);
  assert_int_equal(s.faults.v[0].kind, CFG_FAULT_LINK_DOWN);
  assert_int_equal(s.faults.v[0].at, SIM_PS_PER_MS);
  assert_int_equal(s.faults.v[0].duration, 2 * SIM_PS_PER_MS);
  assert_string_equal(s.faults.v[0].target, "leaf0-spine0");
  assert_int_equal(s.faults.v[1].at, 250 * SIM_PS_PER_US);
  assert_true(s.faults.v[1].factor == 0.5 && s.faults.v[1].ber == 1e-7);
  assert_int_equal(s.faults.v[2].count, 4);
  assert_int_equal(s.faults.v[2].period, SIM_PS_PER_MS);
  assert_true(s.faults.v[3].factor == 0.8);
  assert_int_equal(s.faults.v[4].kind, CFG_FAULT_NODE_FAIL);
  assert_int_equal(s.faults.v[4].index, 4);
  l = cfg_where(doc, "faults[1].factor");
  assert_int_equal(l.line, 7);
  assert_int_equal(l.col, 13);
  l = cfg_where(doc, "faults[3]"); /* the entry */
  assert_int_equal(l.line, 10);
  assert_int_equal(l.col, 5);
  l = cfg_where(doc, "faults[0].ber"); /* not given: its entry */
  assert_int_equal(l.line, 3);
  assert_int_equal(cfg_where(doc, "faults[9].at").line, 0);
  cfg_free(&s, doc);
}

static void test_set_and_round_trip(void **state) {
  const char *sets[] = {"simulation.fidelity=flow",
                        "faults=[{at: 1ms, kind: link-down, target: leaf0-spine0}, "
                        "{at: 2ms, kind: link-flap, target: leaf0-spine1, duration: 10us, "
                        "period: 20us}]"};
  cfg_scenario s, b;
  cfg_doc *doc, *db;
  char *text, *again;
  sim_error err = {0};
  (void)state;
  doc = load(&s, NULL, sets, 2);
  assert_int_equal(s.faults.n, 2);
  assert_int_equal(s.faults.v[1].count, 1); /* default */
  assert_string_equal(cfg_where(doc, "faults[1].period").file, "--set");
  /* the error of a later check points into the --set text */
  assert_int_equal(cfg_fail_at(doc, "faults[1].target", &err, "no such link"), SIM_ECONFIG);
  assert_string_equal(err.msg, "--set:2:94: faults[1].target: no such link");
  text = cfg_dump(&s);
  assert_non_null(strstr(text,
                         "faults: [{at: 1ms, kind: link-down, target: \"leaf0-spine0\"}, "
                         "{at: 2ms, kind: link-flap, target: \"leaf0-spine1\", duration: "
                         "10us, period: 20us, count: 1}]\n"));
  db = load(&b, text, NULL, 0);
  again = cfg_dump(&b);
  assert_string_equal(text, again);
  assert_int_equal(b.faults.n, 2);
  sim_free(text);
  sim_free(again);
  cfg_free(&b, db);
  cfg_free(&s, doc);
  /* a --set replaces the file's list; [] clears it */
  const char *clear[] = {"faults=[]"};
  doc = load(&s, block, clear, 1);
  assert_int_equal(s.faults.n, 0);
  cfg_free(&s, doc);
}

static void test_errors(void **state) {
  (void)state;
  expect_error(
      "simulation.fidelity: flow\nfaults:\n  - at: 1ms\n    kind: gpu-slowdown\n"
      "    target: gpu3\n    factor: 1.5\n",
      NULL, "f.yaml:6:13: faults[0].factor: 1.5 is out of range; allowed (0, 1]");
  expect_error(
      "simulation.fidelity: flow\nfaults:\n  - {at: 1ms, kind: gpu-slowdown, target: gpu3}\n", NULL,
      "f.yaml:3:5: faults[0].factor: missing; gpu-slowdown needs a factor, allowed "
      "(0, 1] (such as factor: 0.8)");
  expect_error(
      "simulation.fidelity: flow\nfaults:\n  - {at: 1ms, kind: link-down, target: a}\n"
      "  - {at: 1ms, kind: link-flap, target: a, duration: 2ms, period: 1ms}\n",
      NULL,
      "f.yaml:4:66: faults[1].period: must exceed duration (the time down in each "
      "cycle); allowed a time > duration");
  expect_error(
      "simulation.fidelity: flow\nfaults:\n  - {at: 1ms, kind: link-down, target: a, "
      "factor: 0.5}\n",
      NULL,
      "f.yaml:3:51: faults[0].factor: not used by link-down; allowed for "
      "link-degraded, gpu-slowdown");
  expect_error("faults:\n  - {at: 1ms, kind: link-down, targte: a}\n", NULL,
               "f.yaml:2:32: faults[0]: unknown field 'targte' (did you mean 'target'?); allowed "
               "at, kind, target, factor, ber, duration, period, count");
  expect_error("faults:\n  - {at: 1ms, kind: link-dwn, target: a}\n", NULL,
               "f.yaml:2:21: faults[0].kind: 'link-dwn' is not a fault kind; allowed link-down, "
               "link-up, link-flap, link-degraded, switch-down, switch-up, nic-down, nic-up, "
               "gpu-slowdown, gpu-fail, node-fail, sdc");
  expect_error("faults:\n  - {at: soon, kind: sdc, target: gpu1}\n", NULL,
               "f.yaml:2:10: faults[0].at: expected a time such as 500ns, got 'soon'; units: ps, "
               "ns, us (or \u00b5s), ms, s, min, h, d; a plain number is only accepted for 0");
  expect_error("faults:\n  - link-down\n", NULL,
               "f.yaml:2:5: faults[0]: expected a mapping such as {at: 1ms, kind: link-down, "
               "target: leaf0-spine0}, got a value");
  expect_error("faults:\n  - {at: 1ms, kind: sdc, target: gpu1, at: 2ms}\n", NULL,
               "f.yaml:2:40: faults[0].at: duplicate field (first set at line 2, column 10)");
  expect_error("faults:\n  - {at: 1ms, kind: link-degraded, target: a, factor: 0.5, ber: 1}\n",
               NULL,
               "f.yaml:2:65: faults[0].ber: 1 is out of range; allowed [0, 1), bit errors "
               "per bit");
  /* network faults need a dynamic fidelity; GPU kinds do not */
  expect_error(
      "faults:\n  - {at: 1ms, kind: sdc, target: gpu1}\n  - {at: 1ms, kind: "
      "switch-down, target: spine0}\n",
      NULL,
      "f.yaml:3:21: faults[1].kind: switch-down needs simulation.fidelity flow or "
      "packet; the analytic fidelity has no link state (use --set "
      "simulation.fidelity=flow)");
  expect_error(NULL, "faults=3",
               "--set:1:8: faults: expected a list of faults such as [{at: 1ms, kind: "
               "link-down, target: leaf0-spine0}]");
  expect_error(NULL, "faults=[{at: 1ms, kind: link-down}]",
               "--set:1:9: faults[0].target: missing; allowed a name as `fabsim topo` prints it "
               "(such as target: leaf0-spine0)");
}

/* Fault schedules stay under the horizon of simulated time (2^62 ps, 53.4
 * days): no derived time (at + duration, a flap's last cycle, a reroute
 * after it) may wrap a simtime_ps. Refused at the key that takes it past. */
static void test_horizon(void **state) {
  (void)state;
  const char *pre = "simulation.fidelity: flow\nfaults:\n  - ";
  char y[256];
  snprintf(y, sizeof y, "%s{at: 60d, kind: link-down, target: a}\n", pre);
  expect_error(y, NULL,
               "f.yaml:3:10: faults[0].at: the fault comes at 60 days, past the horizon of "
               "simulated time (2^62 ps, 53.4 days); allowed: the fault before 53.4 days");
  snprintf(y, sizeof y, "%s{at: 30d, kind: link-down, target: a, duration: 30d}\n", pre);
  expect_error(y, NULL,
               "f.yaml:3:53: faults[0].duration: the recovery (at + duration) comes at 60 days, "
               "past the horizon of simulated time (2^62 ps, 53.4 days); allowed: the recovery "
               "(at + duration) before 53.4 days");
  /* each value fits 2^64 ps (213.5 days); their sum wraps it */
  snprintf(y, sizeof y,
           "%s{at: 1ms, kind: gpu-slowdown, target: gpu0, factor: 0.5, "
           "duration: 213d}\n",
           pre);
  expect_error(y, NULL,
               "f.yaml:3:72: faults[0].duration: the recovery (at + duration) comes at 213 days, "
               "past the horizon of simulated time (2^62 ps, 53.4 days); allowed: the recovery "
               "(at + duration) before 53.4 days");
  /* period x count: 10^6 cycles of 200 days */
  snprintf(y, sizeof y,
           "%s{at: 1ms, kind: link-flap, target: a, duration: 1s, period: 200d, "
           "count: 1000000}\n",
           pre);
  expect_error(y, NULL,
               "f.yaml:3:78: faults[0].count: the last cycle (at + (count - 1) x period) comes "
               "at 2e+08 days, past the horizon of simulated time (2^62 ps, 53.4 days); allowed: "
               "the last cycle (at + (count - 1) x period) before 53.4 days");
  snprintf(y, sizeof y,
           "%s{at: 1ms, kind: link-down, target: a}\nreliability:\n  "
           "reconvergence: 100d\n",
           pre);
  expect_error(y, NULL,
               "f.yaml:5:18: reliability.reconvergence: a reroute 100 days after a fault is past "
               "the horizon of simulated time (2^62 ps, 53.4 days); allowed: less than 53.4 days");
  /* just under: 53 days of flapping */
  cfg_scenario s;
  snprintf(y, sizeof y,
           "%s{at: 1ms, kind: link-flap, target: a, duration: 1h, period: 1d, "
           "count: 53}\n",
           pre);
  cfg_doc *doc = load(&s, y, NULL, 0);
  assert_int_equal(s.faults.v[0].count, 53);
  cfg_free(&s, doc);
}

static void test_reconvergence(void **state) {
  cfg_scenario s;
  cfg_doc *doc;
  const char *roce[] = {"fabric.transport=roce"};
  const char *autoset[] = {"fabric.transport=ethernet", "reliability.reconvergence=auto"};
  const char *fixed[] = {"reliability.reconvergence=50us"};
  (void)state;
  doc = load(&s, NULL, NULL, 0);
  assert_int_equal(s.reliability.reconvergence, SIM_PS_PER_S);
  cfg_free(&s, doc);
  doc = load(&s, NULL, roce, 1);
  assert_int_equal(s.reliability.reconvergence, 200 * SIM_PS_PER_MS);
  cfg_free(&s, doc);
  doc = load(&s, NULL, autoset, 2);
  assert_int_equal(s.reliability.reconvergence, 200 * SIM_PS_PER_MS);
  cfg_free(&s, doc);
  doc = load(&s, NULL, fixed, 1);
  assert_int_equal(s.reliability.reconvergence, 50 * SIM_PS_PER_US);
  cfg_free(&s, doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_block_and_flow), cmocka_unit_test(test_set_and_round_trip),
      cmocka_unit_test(test_errors),         cmocka_unit_test(test_reconvergence),
      cmocka_unit_test(test_horizon),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
