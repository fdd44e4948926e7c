/* The run layer's collective and traffic run (src/run/workload.c): a
 * traffic run that ends delivers every flow's bytes (flows x bytes per
 * flow); a collective whose GPUs lose their leaf fails, keeps the first
 * failed transfer as the backend reported it and logs "job-failed" at its
 * integer-picosecond time; power at power.utilization is pwr_summarize's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/run.h"
#include "fixture.h"

typedef struct harness {
  run_setup s;
  run_events log;
  be_stats net;
} harness;

/* A collective or traffic run as fabsim run drives it (run_setup). */
static void run(harness *h, const char *const *sets, int n) {
  memset(h, 0, sizeof *h);
  sim_error err = {0};
  run_setup *s = &h->s;
  if (run_setup_load(s, NULL, sets, n, &err) != SIM_OK || run_setup_begin(s, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  run_workload_start(&s->w, s->be);
  ev_run(s->sim, SIM_TIME_MAX);
  s->be->ops->stats(s->be, &h->net);
  if (s->fs) {
    flt_sched_finish(s->fs);
    run_fault_log(s->fs, s->faults, s->nfaults, false, &h->log);
  }
  run_workload_end(&s->w, s->sim, &h->net, true, NULL, &h->log);
}

static void finish(harness *h) {
  run_events_free(&h->log);
  run_setup_free(&h->s);
}

static void test_traffic_delivers_all(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "workload.kind=traffic",
                        "workload.traffic.pattern=permutation", "workload.traffic.size=1MiB",
                        "simulation.fidelity=flow"};
  harness h;
  run(&h, sets, 5);
  assert_false(h.s.w.failed);
  assert_false(h.s.w.stopped);
  uint64_t flows = coll_plan_flows(&h.s.w.plan);
  assert_true(flows > 0);
  assert_true(run_traffic_bytes(&h.s.w, &h.net) == (double)flows * 1048576.0);
  assert_true(h.net.bytes == flows * 1048576u); /* the backend delivered the same */
  assert_true(h.s.w.res.time_s > 0);
  /* power at power.utilization over the run's time as one step */
  pwr_model m;
  run_power p;
  sim_error err = {0};
  if (run_power_of(&p, &m, &h.s.cfg, h.s.doc, h.s.t, h.s.w.res.time_s, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  pwr_summary want;
  pwr_summarize(&m, h.s.cfg.power.utilization, h.s.w.res.time_s, h.s.cfg.reliability.days * 86400.0,
                &want);
  assert_true(p.utilization == h.s.cfg.power.utilization);
  assert_false(p.job);
  assert_string_equal(p.source, "power.utilization");
  assert_true(p.sum.it_kw == want.it_kw && p.sum.energy_kwh_per_step == want.energy_kwh_per_step);
  pwr_free(&m);
  finish(&h);
}

static void test_collective_fails(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4", "workload.collective.size=64MiB",
                        "simulation.fidelity=flow",
                        "faults=[{at: 1us, kind: switch-down, target: leaf0}]"};
  harness h;
  run(&h, sets, 4);
  assert_true(h.s.w.failed);
  assert_true(h.s.w.failures > 0 && h.s.w.failures == h.net.transfers_failed);
  assert_true(h.s.w.have_first);
  assert_true(h.s.w.first.at >= SIM_PS_PER_US);
  size_t failed_events = 0;
  for (size_t i = 0; i < h.log.n; i++)
    if (!strcmp(h.log.v[i].kind, "job-failed")) {
      assert_true(h.log.v[i].at == h.s.w.first.at);
      assert_string_equal(h.log.v[i].component, "job");
      failed_events++;
    }
  assert_int_equal(failed_events, 1);
  assert_int_equal(h.log.v[0].at, SIM_PS_PER_US); /* the fault itself, first */
  assert_string_equal(h.log.v[0].kind, "switch-down");
  finish(&h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_traffic_delivers_all),
      cmocka_unit_test(test_collective_fails),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
