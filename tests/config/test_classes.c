/* fabric.classes and the class a workload names (workload.traffic_class,
 * jobs[j].traffic_class): the defaults of a scenario that says nothing (the
 * packet fidelity's queues as before, nothing new dumped), the table in
 * block and flow style with ecn nested or dotted, --set, name and number
 * references, the dump's round trip, and every bad value refused at its
 * file:line:col with what is allowed. */
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
  return cfx_load(s, "c.yaml", yaml, sets, nsets);
}

static void expect_error(const char *yaml, const char *set, const char *msg) {
  cfx_expect_error("c.yaml", yaml, set, msg);
}

/* Nothing said: 7 and 6 strict (levels 2 and 1), 0..5 level 0 weight 1,
 * lossless as the transport, ECN the fabric's, the whole buffer, names
 * tc0..tc7; the dump has neither key. */
static void test_defaults(void **state) {
  (void)state;
  static const struct {
    const char *set;
    bool lossless;
  } tr[] = {{"fabric.transport=infiniband", true},
            {"fabric.transport=roce", true},
            {"fabric.transport=ethernet", false}};
  for (size_t t = 0; t < 3; t++) {
    cfg_scenario s;
    const char *sets[2] = {tr[t].set, "fabric.roce.pfc=true"};
    cfg_doc *doc = load(&s, NULL, sets, 2);
    const cfg_class_table *c = &s.fabric.classes;
    assert_int_equal(c->n, 0);
    for (uint32_t k = 0; k < CFG_CLASSES; k++) {
      char name[8];
      snprintf(name, sizeof name, "tc%u", k);
      assert_string_equal(c->v[k].name, name);
      assert_int_equal(c->v[k].priority, k == 7 ? 2 : k == 6 ? 1 : 0);
      assert_int_equal(c->v[k].weight, 1);
      assert_true(c->v[k].lossless == tr[t].lossless);
      assert_true(c->v[k].ecn_kmin == s.fabric.ecn.kmin && c->v[k].ecn_kmax == s.fabric.ecn.kmax);
      assert_true(c->v[k].ecn_pmax == s.fabric.ecn.pmax && c->v[k].buffer == 1.0);
    }
    assert_int_equal(s.workload.tclass, 0);
    assert_false(cfg_classes_used(&s));
    char *dump = cfg_dump(&s);
    assert_null(strstr(dump, "classes: ["));
    assert_null(strstr(dump, "traffic_class"));
    sim_free(dump);
    cfg_free(&s, doc);
  }
  cfg_scenario s;
  const char *sets[2] = {"fabric.transport=roce", "fabric.roce.pfc=false"};
  cfg_doc *doc = load(&s, NULL, sets, 2);
  assert_false(s.fabric.classes.v[0].lossless); /* RoCE without PFC: tail drop */
  cfg_free(&s, doc);
}

static const char table[] =
    "fabric:\n"
    "  transport: roce\n"
    "  classes:\n"
    "    - id: 6\n"
    "      name: latency\n"
    "      priority: 1\n"
    "      ecn: {kmin: 20KB, kmax: 80KB, pmax: 0.5}\n"
    "    - {name: bulk, weight: 3, ecn.kmin: 1MB, buffer: 0.25}\n"
    "    - {id: 3, name: storage, lossless: false}\n"
    "workload:\n"
    "  traffic_class: latency\n";

static void test_table(void **state) {
  (void)state;
  cfg_scenario s;
  cfg_doc *doc = load(&s, table, NULL, 0);
  const cfg_class_table *t = &s.fabric.classes;
  assert_int_equal(t->n, 3);
  assert_int_equal(t->order[0], 6);
  assert_int_equal(t->order[1], 1); /* no id: its position */
  assert_int_equal(t->order[2], 3);
  const cfg_tclass *lat = &t->v[6], *bulk = &t->v[1], *st = &t->v[3];
  assert_string_equal(lat->name, "latency");
  assert_int_equal(lat->priority, 1);
  assert_int_equal(lat->ecn_kmin, 20000);
  assert_int_equal(lat->ecn_kmax, 80000);
  assert_true(lat->ecn_pmax == 0.5 && lat->lossless);
  assert_string_equal(bulk->name, "bulk");
  assert_int_equal(bulk->priority, 0); /* a listed class: level 0 unless it says */
  assert_int_equal(bulk->weight, 3);
  assert_int_equal(bulk->ecn_kmin, 1000000);
  assert_true(bulk->ecn_kmax == s.fabric.ecn.kmax && bulk->buffer == 0.25);
  assert_false(st->lossless);
  assert_int_equal(t->v[7].priority, 2); /* unlisted: as before */
  assert_string_equal(t->v[7].name, "tc7");
  assert_int_equal(s.workload.tclass, 6);
  assert_true(cfg_classes_used(&s));
  cfg_loc l = cfg_where(doc, "fabric.classes[1].weight");
  assert_int_equal(l.line, 8);
  assert_int_equal(l.col, 28);
  l = cfg_where(doc, "fabric.classes[0].ecn.kmax");
  assert_int_equal(l.line, 7);
  /* the dump loads back to the same scenario */
  char *dump = cfg_dump(&s), *again;
  cfg_scenario s2;
  cfg_doc *doc2 = load(&s2, dump, NULL, 0);
  again = cfg_dump(&s2);
  assert_string_equal(dump, again);
  assert_int_equal(s2.workload.tclass, 6);
  sim_free(dump);
  sim_free(again);
  cfg_free(&s2, doc2);
  cfg_free(&s, doc);
}

/* --set replaces the table; a class by number; jobs name theirs. */
static void test_set_and_jobs(void **state) {
  (void)state;
  cfg_scenario s;
  const char *sets[] = {"fabric.classes=[{id: 5, name: gold, weight: 7}]",
                        "workload.traffic_class=5"};
  cfg_doc *doc = load(&s, table, sets, 2);
  assert_int_equal(s.fabric.classes.n, 1);
  assert_int_equal(s.fabric.classes.v[5].weight, 7);
  assert_string_equal(s.fabric.classes.v[6].name, "tc6"); /* the file's table is gone */
  assert_int_equal(s.workload.tclass, 5);
  cfg_free(&s, doc);
  static const char jobs[] =
      "fabric.classes: [{id: 2, name: gold, weight: 3}]\n"
      "jobs:\n"
      "  - {name: a, gpus: 8, traffic_class: gold, workload: {kind: collective}}\n"
      "  - {name: b, gpus: 8, traffic_class: 4, workload: {kind: collective}}\n"
      "  - {name: c, gpus: 8, workload: {kind: collective}}\n";
  doc = load(&s, jobs, NULL, 0);
  assert_int_equal(s.jobs.v[0].workload.tclass, 2);
  assert_int_equal(s.jobs.v[1].workload.tclass, 4);
  assert_int_equal(s.jobs.v[2].workload.tclass, 0);
  char *dump = cfg_dump(&s);
  assert_non_null(strstr(dump, "traffic_class: \"gold\""));
  assert_null(strstr(dump, "traffic_class: \"0\"")); /* c's default is not written */
  sim_free(dump);
  cfg_free(&s, doc);
  /* a class may be given its own default name */
  doc = load(&s, "fabric.classes: [{id: 2, name: tc2}]\nworkload.traffic_class: tc2\n", NULL, 0);
  assert_int_equal(s.workload.tclass, 2);
  cfg_free(&s, doc);
}

static void test_errors(void **state) {
  (void)state;
  expect_error("fabric.classes: [{id: 8}]\n", NULL,
               "c.yaml:1:23: fabric.classes[0].id: expected an integer 0..7, got '8'");
  expect_error("fabric.classes: [{id: 1}, {id: 1}]\n", NULL,
               "c.yaml:1:32: fabric.classes[1].id: class 1 is also fabric.classes[0] (line 1); "
               "each class is listed once (an entry without id is its position in the list)");
  expect_error("fabric.classes: [{name: a}, {id: 5, name: a}]\n", NULL,
               "c.yaml:1:43: fabric.classes[1].name: 'a' is also the name of fabric.classes[0] "
               "(line 1); names are unique");
  expect_error("fabric.classes: [{wieght: 2}]\n", NULL,
               "c.yaml:1:19: fabric.classes[0]: 'wieght' is not a class field; did you mean "
               "'weight'?");
  expect_error("fabric.classes: [{weight: 0}]\n", NULL,
               "c.yaml:1:27: fabric.classes[0].weight: expected an integer 1..1000, got '0'");
  expect_error("fabric.classes: [{priority: 9}]\n", NULL,
               "c.yaml:1:29: fabric.classes[0].priority: expected an integer 0..7, got '9'");
  expect_error("fabric.classes: [{buffer: 1.5}]\n", NULL,
               "c.yaml:1:27: fabric.classes[0].buffer: 1.5 is out of range; allowed (0, 1]");
  expect_error("fabric.classes: [{ecn: {pmax: 2}}]\n", NULL,
               "c.yaml:1:31: fabric.classes[0].ecn.pmax: 2 is out of range; allowed [0, 1]");
  /* issue 27, defect 9: class 5 named tc2 made traffic_class: tc2 name class 2 */
  expect_error("fabric.classes: [{id: 5, name: tc2}]\n", NULL,
               "c.yaml:1:32: fabric.classes[0].name: 'tc2' is the default name of class 2, and "
               "this is class 5; allowed: another name, or tc5");
  expect_error("fabric.classes: [{name: tc1}]\n", NULL, /* no id: class 0 */
               "c.yaml:1:25: fabric.classes[0].name: 'tc1' is the default name of class 1, and "
               "this is class 0; allowed: another name, or tc0");
  expect_error("fabric.classes: [{name: '7'}]\n", NULL,
               "c.yaml:1:25: fabric.classes[0].name: '7' is not a class name; allowed 1..32 "
               "letters, digits, '-' and '_', not all digits (a number names a class by its id)");
  expect_error("fabric.classes: [{}, {}, {}, {}, {}, {}, {}, {}, {}]\n", NULL,
               "c.yaml:1:17: fabric.classes: 9 classes; allowed at most 8 (ids 0..7)");
  expect_error("fabric.classes: [{id: 3, lossless: false}]\n", NULL,
               "c.yaml:1:36: fabric.classes[0].lossless: InfiniBand is lossless on every "
               "virtual lane (credit-based flow control); allowed: true, or a lossy class on "
               "fabric.transport roce or ethernet");
  expect_error("fabric.classes: [{id: 3, ecn: {kmin: 2MB, kmax: 1MB}}]\n", NULL,
               "c.yaml:1:49: fabric.classes[0].ecn.kmax: ecn.kmin (2000000 B) is above ecn.kmax "
               "(1000000 B); marking starts at kmin and reaches pmax at kmax, so kmin <= kmax");
  expect_error("workload.traffic_class: gold\n", NULL,
               "c.yaml:1:25: workload.traffic_class: 'gold' is not a traffic class; allowed a "
               "class id 0..7 or a name (tc0, tc1, tc2, tc3, tc4, tc5, tc6, tc7)");
  expect_error(NULL, "workload.traffic_class=8",
               "--set:1:24: workload.traffic_class: '8' is not a traffic class; allowed a class "
               "id 0..7 or a name (tc0, tc1, tc2, tc3, tc4, tc5, tc6, tc7)");
  expect_error(
      "fabric.classes: [{id: 2, name: gold}]\n"
      "jobs:\n"
      "  - {name: a, gpus: 8, traffic_class: silver, workload: {kind: collective}}\n",
      NULL,
      "c.yaml:3:39: jobs[0].traffic_class: 'silver' is not a traffic class; allowed a "
      "class id 0..7 or a name (tc0, tc1, gold, tc3, tc4, tc5, tc6, tc7)");
  expect_error(
      "jobs:\n"
      "  - {name: a, gpus: 8, workload: {kind: collective, traffic_class: 1}}\n",
      NULL,
      "c.yaml:2:53: jobs[0].workload.traffic_class: a job's class is the job's own "
      "field: jobs[0].traffic_class");
  expect_error("fabric.classes: 3\n", NULL,
               "c.yaml:1:17: fabric.classes: expected a list of classes such as [{id: 6, name: "
               "latency, priority: 1}, {id: 0, name: bulk, weight: 3}]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_set_and_jobs),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
