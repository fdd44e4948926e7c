/* --set jobs[J].FIELD=VALUE (issue 29): one job of a shared fabric changed
 * from the command line (and so varied by a sweep), the others untouched;
 * each value located at its --set, an index past the list refused there,
 * and a job's own checks (placement explicit with nodes, unique names) run
 * once every --set is applied. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cfg_fixture.h"

static const char two[] =
    "cluster: {nodes: 8}\n"
    "fabric:\n"
    "  classes:\n"
    "    - {id: 6, name: latency, priority: 1}\n"
    "    - {id: 0, name: bulk}\n"
    "jobs:\n"
    "  - {name: a, gpus: 16, workload: {kind: collective}}\n"
    "  - name: b\n"
    "    gpus: 16\n"
    "    placement: packed\n"
    "    traffic_class: bulk\n"
    "    workload: {kind: collective, collective: {size: 1MiB}}\n";

static void test_one_job_changes(void **state) {
  (void)state;
  const char *sets[] = {"jobs[1].traffic_class=latency", "jobs[0].placement=spread",
                        "jobs[1].workload.collective.size=4MiB", "jobs[1].start=20us"};
  cfg_scenario s;
  cfg_doc *doc = cfx_load(&s, "two.yaml", two, sets, 4);
  assert_int_equal(s.jobs.n, 2);
  assert_string_equal(s.jobs.v[1].workload.traffic_class, "latency");
  assert_string_equal(s.jobs.v[0].workload.traffic_class, "0"); /* untouched */
  assert_int_equal(s.jobs.v[0].placement, CFG_PLACE_SPREAD);
  assert_int_equal(s.jobs.v[1].placement, CFG_PLACE_PACKED);
  assert_int_equal(s.jobs.v[1].workload.collective.size, 4u << 20);
  assert_int_equal(s.jobs.v[1].start, 20 * SIM_PS_PER_US);
  assert_int_equal(s.jobs.v[0].start, 0);
  cfg_free(&s, doc);
  /* placement explicit and its nodes, in two --set (checked after both) */
  const char *expl[] = {"jobs[0].placement=explicit", "jobs[0].nodes=[2, 3]"};
  doc = cfx_load(&s, "two.yaml", two, expl, 2);
  assert_int_equal(s.jobs.v[0].placement, CFG_PLACE_EXPLICIT);
  assert_int_equal(s.jobs.v[0].nodes.n, 2);
  assert_int_equal(s.jobs.v[0].nodes.v[1], 3);
  cfg_free(&s, doc);
  /* a later --set of the whole list replaces it */
  const char *later[] = {"jobs[1].gpus=8", "jobs=[{name: c, gpus: 8, workload: {kind: traffic}}]"};
  doc = cfx_load(&s, "two.yaml", two, later, 2);
  assert_int_equal(s.jobs.n, 1);
  assert_int_equal(s.jobs.v[0].gpus, 8);
  cfg_free(&s, doc);
}

static void test_refused_at_the_set(void **state) {
  (void)state;
  cfx_expect_error("two.yaml", two, "jobs[2].gpus=8",
                   "--set:1:1: jobs[2]: the scenario has 2 jobs; allowed: jobs[0] to jobs[1]");
  cfx_expect_error("x.yaml", "jobs: [{name: a, gpus: 2, workload: {kind: collective}}]",
                   "jobs[1].gpus=8",
                   "--set:1:1: jobs[1]: the scenario has 1 job; allowed: jobs[0]");
  cfx_expect_error("none.yaml", "cluster: {nodes: 2}\n", "jobs[0].placement=spread",
                   "--set:1:1: jobs[0]: the scenario has no jobs; allowed: a job's field once a "
                   "jobs: list holds that job (in the file, or an earlier --set jobs=[...])");
  cfx_expect_error("two.yaml", two, "jobs[0].gpu=8",
                   "--set:1:1: jobs[0].gpu: 'gpu' is not a job field; did you mean 'gpus'?");
  cfx_expect_error("two.yaml", two, "jobs[0].placement=bogus",
                   "--set:1:19: jobs[0].placement: 'bogus' is not a placement; allowed packed, "
                   "spread, random, topology-aware, explicit (with nodes: [..])");
  cfx_expect_error("two.yaml", two, "jobs[1].traffic_class=nosuch",
                   "--set:1:23: jobs[1].traffic_class: 'nosuch' is not a traffic class; allowed a "
                   "class id 0..7 or a name (bulk, tc1, tc2, tc3, tc4, tc5, latency, tc7)");
  cfx_expect_error("two.yaml", two, "jobs[0].placement=explicit",
                   "--set:1:19: jobs[0].placement: placement explicit and nodes: [..] go "
                   "together (placement here: explicit)");
  cfx_expect_error("two.yaml", two, "jobs[1].name=a",
                   "--set:1:14: jobs[1].name: 'a' is also the name of jobs[0]; names are unique");
  cfx_expect_error("two.yaml", two, "jobs[0].workload.traffic_class=1",
                   "--set:1:1: jobs[0].workload.traffic_class: a job's class is the job's own "
                   "field: jobs[0].traffic_class");
  cfx_expect_error("two.yaml", two, "jobs[x].gpus=1",
                   "--set:1:1: jobs[x].gpus: unknown key; a job's field is set as jobs[J].FIELD "
                   "(FIELD one of name, gpus, placement, nodes, start, traffic_class, "
                   "workload.KEY)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_job_changes),
      cmocka_unit_test(test_refused_at_the_set),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
