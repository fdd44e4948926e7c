/* One run's setup (run_setup, src/run/setup.c): what it builds for each
 * workload and fidelity, that bad input is refused located at the key with
 * nothing simulated (a bad key at load before any backend exists), and that
 * setup and free leave nothing behind at every point of failure (the ASan
 * build's leak check runs these); the telemetry it wires logs a
 * collective's start and end and every event of the run's log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fabsim/run.h"

/* setup of sets; returns run_setup_begin's code (load must succeed). */
static int begin(run_setup *s, const char *const *sets, int n, sim_error *err) {
  if (run_setup_load(s, NULL, sets, n, err) != SIM_OK) fail_msg("%s", err->msg);
  return run_setup_begin(s, err);
}

static void test_collective_flow(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "simulation.fidelity=flow",
                        "workload.collective.size=1MiB"};
  run_setup s;
  sim_error err = {0};
  assert_int_equal(begin(&s, sets, 3, &err), SIM_OK);
  assert_false(s.training);
  assert_non_null(s.sim);
  assert_non_null(s.be);
  assert_true(s.be != s.inner);    /* the telemetry tap wraps the fidelity's */
  assert_null(s.tel.port_samples); /* flow: the tap's ports stand in */
  assert_int_equal(s.nfaults, 0);
  assert_null(s.fs);                               /* no faults, no scheduler */
  assert_true(coll_plan_transfers(&s.w.plan) > 0); /* the plan is built, not submitted */
  assert_int_equal(sim_events(s.sim), 0);
  run_setup_free(&s);
}

static void test_packet_samples_ports(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "simulation.fidelity=packet",
                        "workload.collective.size=64KiB", "output.ports=nic0"};
  run_setup s;
  sim_error err = {0};
  assert_int_equal(begin(&s, sets, 4, &err), SIM_OK);
  assert_true(s.tel.port_samples == s.be); /* packet: the backend samples its own ports */
  assert_int_equal(s.tel.nwatch_nics, 1);
  assert_int_equal(s.tel.watch_nics[0], 0);
  assert_int_equal(s.tel.nwatch_ports, 0);
  run_setup_free(&s);
}

static void test_training_with_faults(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1",
                        "workload.kind=training",
                        "workload.steps=2",
                        "workload.model.layers=2",
                        "workload.model.hidden=512",
                        "workload.model.heads=8",
                        "workload.model.seq_len=256",
                        "workload.global_batch=8",
                        "simulation.fidelity=flow",
                        "faults=[{at: 1ms, kind: gpu-slowdown, target: gpu1, factor: 0.5}, "
                        "{at: 2ms, kind: link-down, target: nic0-leaf0, duration: 1us}]"};
  run_setup s;
  sim_error err = {0};
  assert_int_equal(begin(&s, sets, 10, &err), SIM_OK);
  assert_true(s.training);
  assert_non_null(s.tr.job); /* the job, its hooks given to the scheduler */
  assert_int_equal(s.nfaults, 2);
  assert_non_null(s.fs);
  assert_int_equal(sim_events(s.sim), 0);
  run_setup_free(&s);
}

/* A bad key in the scenario: refused by run_setup_load, located, before
 * any simulation or backend exists; nothing left to free. */
static void test_bad_key_before_backend(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "workload.collective.op=bogus"};
  run_setup s;
  sim_error err = {0};
  assert_int_equal(run_setup_load(&s, NULL, sets, 2, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "--set:2:"));
  assert_non_null(strstr(err.msg, "workload.collective.op"));
  assert_null(s.doc);
  assert_null(s.t);
  assert_null(s.sim);
  assert_null(s.be);
  run_setup_free(&s); /* safe: nothing made */
}

/* Keys only the built topology can check (a fault target, a watched port):
 * SIM_ECONFIG located at the key, nothing simulated, and free after the
 * partial setup is clean. */
static void test_bad_against_topology(void **state) {
  (void)state;
  static const struct {
    const char *set, *key;
  } cases[] = {
      {"faults=[{at: 1us, kind: link-down, target: nosuch}]", "faults[0].target"},
      {"output.ports=nosuch", "output.ports"},
      {"output.ports=nic0,nic0", "output.ports"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *sets[] = {"cluster.nodes=2", "simulation.fidelity=flow", cases[i].set};
    run_setup s;
    sim_error err = {0};
    assert_int_equal(begin(&s, sets, 3, &err), SIM_ECONFIG);
    if (!strstr(err.msg, "--set:3:") || !strstr(err.msg, cases[i].key))
      fail_msg("case %zu: %s", i, err.msg);
    assert_int_equal(sim_events(s.sim), 0);
    assert_int_equal(sim_now(s.sim), 0);
    run_setup_free(&s);
  }
}

/* A training job past the horizon of simulated time: refused by the job's
 * own check, after the backend and faults were made; free is clean. */
static void test_training_horizon_refused(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1", "workload.kind=training", "workload.steps=2",
                        "simulation.fidelity=analytic",
                        "faults=[{at: 0s, kind: gpu-slowdown, target: gpu0, factor: 1e-12}]"};
  run_setup s;
  sim_error err = {0};
  assert_int_equal(begin(&s, sets, 5, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "faults[0].factor"));
  assert_int_equal(sim_events(s.sim), 0);
  run_setup_free(&s);
}

/* The telemetry the setup wired: after a collective, the tel holds its
 * start and end and every event of the log given, in that count. */
static void test_telemetry_make(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "simulation.fidelity=flow",
                        "workload.collective.size=1MiB"};
  run_setup s;
  sim_error err = {0};
  assert_int_equal(begin(&s, sets, 3, &err), SIM_OK);
  run_workload_start(&s.w, s.be);
  ev_run(s.sim, SIM_TIME_MAX);
  assert_true(s.w.exec.finished);
  run_events log = {0};
  run_event_add(&log, 5, "gpu0", "straggler", "a test event");
  tel *tl = NULL;
  bool complete = true;
  assert_int_equal(run_telemetry_make(&tl, &s, &log, &complete, &err), SIM_OK);
  assert_true(complete);
  size_t n = tel_event_count(tl), start = 0, end = 0, mine = 0;
  for (size_t i = 0; i < n; i++) {
    tel_event_view e;
    tel_event_at(tl, i, &e);
    start += !strcmp(e.kind, "workload-start");
    end += !strcmp(e.kind, "workload-end");
    mine += !strcmp(e.kind, "straggler") && e.at == 5;
  }
  assert_int_equal(start, 1);
  assert_int_equal(end, 1);
  assert_int_equal(mine, 1);
  tel_destroy(tl);
  run_events_free(&log);
  run_setup_free(&s);
}

/* The training job of a few tiny layers on one node of 8 GPUs, and one more
 * set (`extra`) after it. */
#define TINY_TRAINING                                                                         \
  "cluster.nodes=1", "workload.kind=training", "workload.steps=1", "workload.model.layers=2", \
      "workload.model.hidden=512", "workload.model.heads=8", "workload.model.seq_len=256",    \
      "workload.global_batch=8"

/* run_check refuses what run_setup_begin refuses, with the same code and
 * message (one code path), for every kind of check the setup makes after
 * the scenario and topology loaded; and passes what it passes. Each bad
 * case loads cleanly, so a check of the load alone (what sweep and compare
 * did before) would let it through. */
static void test_check_as_setup(void **state) {
  (void)state;
  static const struct {
    const char *sets[10];
    int n;
    const char *key; /* NULL: accepted */
  } cases[] = {
      {{"cluster.nodes=2", "simulation.fidelity=flow", "workload.collective.size=1MiB"}, 3, NULL},
      {{"cluster.nodes=2", "simulation.fidelity=flow",
        "faults=[{at: 1us, kind: link-down, target: nosuch}]"},
       3,
       "faults[0].target"},
      {{"cluster.nodes=2", "output.ports=nosuchport"}, 2, "output.ports"},
      {{TINY_TRAINING, "workload.parallel.tp=3"}, 9, "workload.parallel.tp"},
      {{TINY_TRAINING, "workload.parallel.pp=16"}, 9, "workload.parallel.pp"},
      {{TINY_TRAINING, "workload.parallel.tp=2"}, 9, NULL},
      /* a plan the job builds only to time it (reuse, symmetric) is built at
       * create too: refused before the run as under live */
      {{TINY_TRAINING, "workload.parallel.dp_algorithm=collnet", "workload.comm_model=reuse"},
       10,
       "workload.parallel.dp_algorithm"},
      {{TINY_TRAINING, "workload.parallel.dp_algorithm=collnet", "workload.comm_model=symmetric"},
       10,
       "workload.parallel.dp_algorithm"},
      {{"cluster.nodes=2", "workload.kind=trace", "workload.trace.path=/nonexistent/et.%d.et",
        "workload.trace.ranks=16"},
       4,
       "workload.trace.path"},
      {{"cluster.nodes=2", "workload.collective.algorithm=nvls"},
       2,
       "workload.collective.algorithm"},
      {{"cluster.nodes=1", "workload.collective.algorithm=nvls"}, 2, NULL},
      {{"cluster.nodes=2", "power.utilization=2"}, 2, "power.utilization"},
      {{"cluster.nodes=2", "power.gpu_idle_w=2000"}, 2, "power.gpu_idle_w"},
      {{"cluster.nodes=2", "jobs=[{name: big, gpus: 64, workload: {kind: collective}}]"},
       2,
       "jobs[0]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    run_setup s;
    sim_error e1 = {0}, e2 = {0};
    if (run_setup_load(&s, NULL, cases[i].sets, cases[i].n, &e1) != SIM_OK)
      fail_msg("case %zu does not load: %s", i, e1.msg);
    int rc1 = run_setup_begin(&s, &e1);
    assert_int_equal(sim_events(s.sim), 0);
    run_setup_free(&s);
    int rc2 = run_check(NULL, cases[i].sets, cases[i].n, &e2);
    if (rc1 != rc2 || strcmp(e1.msg, e2.msg))
      fail_msg("case %zu: setup %d '%s', check %d '%s'", i, rc1, e1.msg, rc2, e2.msg);
    if (!cases[i].key) {
      if (rc2 != SIM_OK) fail_msg("case %zu refused: %s", i, e2.msg);
    } else if (rc2 == SIM_OK || !strstr(e2.msg, cases[i].key) || strncmp(e2.msg, "--set:", 6)) {
      fail_msg("case %zu: want an error at %s, got %d '%s'", i, cases[i].key, rc2, e2.msg);
    }
  }
}

/* A bad key is refused by run_check as by run_setup_load (nothing made). */
static void test_check_bad_key(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "workload.collective.op=bogus"};
  sim_error err = {0};
  assert_int_equal(run_check(NULL, sets, 2, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "--set:2:"));
  assert_non_null(strstr(err.msg, "workload.collective.op"));
  assert_int_equal(run_check("/nonexistent/scenario.yaml", NULL, 0, &err) != SIM_OK, 1);
  assert_non_null(strstr(err.msg, "/nonexistent/scenario.yaml"));
}

/* The packet fidelity on the parallel engine is checked (as the serial
 * packet backend: no MPI call), with the checks that follow the backend:
 * a good scenario passes, a bad fault target is still refused. */
static void test_check_parallel_engine(void **state) {
  (void)state;
  const char *good[] = {"cluster.nodes=4", "simulation.fidelity=packet",
                        "simulation.engine=parallel", "workload.collective.size=64KiB"};
  sim_error err = {0};
  if (run_check(NULL, good, 4, &err) != SIM_OK) fail_msg("%s", err.msg);
  const char *bad[] = {"cluster.nodes=4", "simulation.fidelity=packet",
                       "simulation.engine=parallel",
                       "faults=[{at: 1us, kind: switch-down, target: spine99}]"};
  assert_int_equal(run_check(NULL, bad, 4, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "faults[0].target"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_collective_flow),      cmocka_unit_test(test_packet_samples_ports),
      cmocka_unit_test(test_training_with_faults), cmocka_unit_test(test_bad_key_before_backend),
      cmocka_unit_test(test_bad_against_topology), cmocka_unit_test(test_training_horizon_refused),
      cmocka_unit_test(test_telemetry_make),       cmocka_unit_test(test_check_as_setup),
      cmocka_unit_test(test_check_bad_key),        cmocka_unit_test(test_check_parallel_engine),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
