/* Dotted keys: `cluster.nodes: 2` in a file is the same key as its nested
 * form (and as --set cluster.nodes=2), at the top level, inside a section
 * and in a job entry (`workload.collective.op: x`, the --set spelling
 * jobs[J].workload.collective.op); a key given both ways is refused as a
 * duplicate, and an unknown dotted key as an unknown nested one, with the
 * nearest key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cfg_fixture.h"

/* Each line's key is located where it was written: nothing dropped. */
static void test_top_level_dotted_is_nested(void **state) {
  (void)state;
  static const char *const forms[] = {
      "cluster.nodes: 2\ncluster.nic.per_node: 4\nworkload.collective.op: allgather\n",
      "cluster:\n  nodes: 2\n  nic.per_node: 4\nworkload:\n  collective.op: allgather\n",
      "cluster:\n  nodes: 2\n  nic:\n    per_node: 4\nworkload: {collective: {op: allgather}}\n"};
  for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
    cfg_scenario s;
    cfg_doc *doc = cfx_load(&s, "d.yaml", forms[f], NULL, 0);
    assert_int_equal(s.cluster.nodes, 2);
    assert_int_equal(s.cluster.nic.per_node, 4);
    assert_int_equal(s.workload.collective.op, CFG_COLL_ALLGATHER);
    assert_int_equal(cfg_where(doc, "cluster.nodes").line, 1 + (f > 0));
    assert_string_equal(cfg_where(doc, "cluster.nodes").file, "d.yaml");
    cfg_free(&s, doc);
  }
}

static void test_top_level_refused(void **state) {
  (void)state;
  cfx_expect_error("d.yaml", "cluster:\n  nodes: 1\ncluster.nodes: 2\n", NULL,
                   "d.yaml:3:16: cluster.nodes: duplicate key (first set at line 2, column 10)");
  cfx_expect_error("d.yaml", "cluster.nic.per_node: 2\ncluster:\n  nic: {per_node: 4}\n", NULL,
                   "d.yaml:3:19: cluster.nic.per_node: duplicate key (first set at line 1, "
                   "column 23)");
  cfx_expect_error("d.yaml", "cluster.nodez: 2\n", NULL,
                   "d.yaml:1:1: cluster.nodez: unknown key; did you mean 'cluster.nodes'?");
  cfx_expect_error("d.yaml", "cluster:\n  nic.per_nod: 2\n", NULL,
                   "d.yaml:2:3: cluster.nic.per_nod: unknown key; did you mean "
                   "'cluster.nic.per_node'?");
}

/* A job entry's workload.KEY fields: the same keys as under workload:,
 * mixed with it in any order. */
static void test_job_dotted_is_nested(void **state) {
  (void)state;
  static const char *const forms[] = {
      "jobs:\n  - name: a\n    gpus: 8\n    workload.kind: collective\n"
      "    workload.collective.op: allgather\n    workload.collective: {size: 1MiB}\n",
      "jobs:\n  - name: a\n    gpus: 8\n    workload.collective.op: allgather\n"
      "    workload: {kind: collective, collective.size: 1MiB}\n",
      "jobs:\n  - name: a\n    gpus: 8\n    workload:\n      kind: collective\n"
      "      collective: {op: allgather, size: 1MiB}\n"};
  for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
    cfg_scenario s;
    cfg_doc *doc = cfx_load(&s, "j.yaml", forms[f], NULL, 0);
    assert_int_equal(s.jobs.n, 1);
    assert_int_equal(s.jobs.v[0].workload.collective.op, CFG_COLL_ALLGATHER);
    assert_int_equal(s.jobs.v[0].workload.collective.size, 1u << 20);
    cfg_loc l = cfg_where(doc, "jobs[0].workload.collective.op");
    assert_int_equal(l.line, f == 0 ? 5 : f == 1 ? 4 : 6);
    cfg_free(&s, doc);
  }
}

static void test_job_refused(void **state) {
  (void)state;
  cfx_expect_error("j.yaml",
                   "jobs:\n  - name: a\n    gpus: 8\n    workload.kind: collective\n"
                   "    workload: {kind: traffic}\n",
                   NULL,
                   "j.yaml:5:16: jobs[0].workload.kind: duplicate key (first set at line 4, "
                   "column 20)");
  cfx_expect_error("j.yaml", "jobs:\n  - name: a\n    gpus: 8\n    workload.kindd: collective\n",
                   NULL,
                   "j.yaml:4:5: jobs[0].workload.kindd: unknown key; did you mean "
                   "'workload.kind'?");
  cfx_expect_error("j.yaml", "jobs:\n  - name: a\n    gpus: 8\n    workload.traffic_class: 3\n",
                   NULL,
                   "j.yaml:4:5: jobs[0].workload.traffic_class: a job's class is the job's own "
                   "field: jobs[0].traffic_class");
  /* a job still needs its workload, dotted or nested */
  cfx_expect_error(
      "j.yaml", "jobs:\n  - name: a\n    gpus: 8\n", NULL,
      "j.yaml:2:5: jobs[0].workload: missing; every job has a name, gpus and a workload");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_top_level_dotted_is_nested),
      cmocka_unit_test(test_top_level_refused),
      cmocka_unit_test(test_job_dotted_is_nested),
      cmocka_unit_test(test_job_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
