/* The run layer's training run (src/run) on a tiny job, against closed
 * forms: a job whose fault comes after its end runs exactly its fault-free
 * baseline; a GPU throttled to f from the start stretches each step by
 * C (1/f - 1) and the root cause gives that excess to the GPU; a GPU failure
 * stops the job at its integer-picosecond time and loses min(phase, tau) of
 * work (phase = t mod (tau + delta)); the network fault windows follow the
 * scheduler's log; the event log stays in time order, stable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/run.h"
#include "fixture.h"

/* 8 GPUs of one node, data parallel only, one bucket reduced after the
 * backward pass (tests/workload/test_job.c): step = compute + AllReduce. */
#define DP8                                                                                   \
  "cluster.nodes=1", "workload.precision=bf16", "workload.model.layers=4",                    \
      "workload.model.hidden=1024", "workload.model.heads=16", "workload.model.seq_len=2048", \
      "workload.model.vocab=0", "workload.global_batch=8", "workload.bucket_size=1TiB",       \
      "workload.grad_overlap=false", "workload.kind=training", "workload.steps=3",            \
      "simulation.fidelity=analytic", "reliability.checkpoint.interval=300us",                \
      "reliability.checkpoint.write_time=900us", "reliability.restart_time=10s"

static void assert_rel(double got, double want, double rel) {
  if (fabs(got - want) > rel * fabs(want) + 1e-12)
    fail_msg("got %.15g, want %.15g (rel %.3g)", got, want, rel);
}

typedef struct harness {
  run_setup s;
  run_events log;
  run_training_result res;
} harness;

/* The training run as fabsim run drives it (run_setup: one resolver, one
 * scheduler whose GPU faults reach the job through its hooks). `fault`: a
 * faults= override or NULL. */
static void run(harness *h, const char *fault) {
  const char *sets[] = {DP8, fault};
  memset(h, 0, sizeof *h);
  sim_error err = {0};
  run_setup *s = &h->s;
  if (run_setup_load(s, NULL, sets, (int)(sizeof sets / sizeof *sets) - (fault ? 0 : 1), &err) !=
          SIM_OK ||
      run_setup_begin(s, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_true(s->training);
  bool complete = false;
  if (run_training_run(&s->tr, &h->log, NULL, &complete, &err) != SIM_OK) fail_msg("%s", err.msg);
  assert_true(complete);
  if (s->fs) {
    flt_sched_finish(s->fs);
    run_fault_log(s->fs, s->faults, s->nfaults, true, &h->log);
  }
  run_training_report(&s->tr, s->fs, &h->log, &h->res);
}

static void finish(harness *h) {
  run_training_result_free(&h->res);
  run_events_free(&h->log);
  run_setup_free(&h->s);
}

static size_t count_kind(const run_events *log, const char *kind) {
  size_t n = 0;
  for (size_t i = 0; i < log->n; i++) n += !strcmp(log->v[i].kind, kind);
  return n;
}

static void assert_sorted(const run_events *log) {
  for (size_t i = 1; i < log->n; i++) assert_true(log->v[i - 1].at <= log->v[i].at);
}

/* A fault after the job's end: the baseline runs (there is a fault) and the
 * job's steps equal it exactly; nothing to explain, no failure. */
static void test_fault_free_equals_baseline(void **state) {
  (void)state;
  harness h;
  run(&h, "faults=[{at: 100s, kind: gpu-slowdown, target: gpu1, factor: 0.5}]");
  const run_training_result *r = &h.res;
  assert_non_null(r->base);
  assert_int_equal(wl_job_steps_done(r->job), 3);
  assert_int_equal(wl_job_steps_done(r->base), 3);
  double busy = 0, total = 0;
  for (uint32_t k = 0; k < 3; k++) {
    const wl_step *s = wl_job_step(r->job, k), *b = wl_job_step(r->base, k);
    assert_true(s->time_s == b->time_s);
    assert_true(s->start_s == b->start_s);
    assert_true(run_training_step(&h.s.tr, false, k)->end ==
                run_training_step(&h.s.tr, true, k)->end); /* integer ps */
    assert_true(run_training_step(&h.s.tr, false, k)->end -
                    run_training_step(&h.s.tr, false, k)->start >
                0);
    busy += b->compute_s;
    total += b->time_s;
  }
  assert_false(r->failure.happened);
  assert_int_equal(r->nsdc, 0);
  assert_int_equal(r->root_cause.n, 0);
  assert_int_equal(count_kind(&h.log, "straggler"), 0);
  /* power at the job's utilization, the compute share of its steps */
  assert_true(r->power.job && r->power.have_throttle_utilization);
  assert_rel(r->power.utilization, busy / total, 1e-12);
  assert_rel(r->power.throttle_utilization, busy / total, 1e-12);
  /* the fault never happened: one fault-after-end event, at its time to the picosecond */
  uint32_t idx[1];
  const char *detail[1];
  simtime_ps end = sim_now(h.s.sim);
  assert_true(end < 100 * SIM_PS_PER_S);
  assert_int_equal(run_faults_after_end(&h.s.cfg, end, false, &h.log, idx, detail), 1);
  assert_int_equal(idx[0], 0);
  assert_non_null(strstr(detail[0], "came after the workload ended"));
  assert_true(h.log.v[h.log.n - 1].at == 100 * SIM_PS_PER_S);
  assert_string_equal(h.log.v[h.log.n - 1].kind, "fault-after-end");
  assert_sorted(&h.log);
  finish(&h);
}

/* Throttled to f from the start: step = C / f + A, excess C (1/f - 1), all
 * of it the GPU's; one straggler event per step at the step's end. */
static void test_slowdown_root_cause(void **state) {
  (void)state;
  harness h;
  const double f = 0.8;
  run(&h, "faults=[{at: 0s, kind: gpu-slowdown, target: gpu5, factor: 0.8}]");
  const run_training_result *r = &h.res;
  assert_int_equal(r->root_cause.n, 3);
  size_t straggler = 0;
  for (uint32_t k = 0; k < 3; k++) {
    const wl_step *s = wl_job_step(r->job, k), *b = wl_job_step(r->base, k);
    double C = b->compute_s, A = b->exposed_comm_s;
    assert_rel(s->time_s, C / f + A, 1e-9);
    const rel_rc_entry *e = &r->root_cause.v[k];
    assert_int_equal(e->step, k + 1);
    assert_rel(e->excess_s, C * (1 / f - 1), 1e-9);
    assert_true(e->ncauses >= 1);
    assert_string_equal(e->causes[0].component, "gpu5");
    assert_string_equal(e->causes[0].kind, "gpu-slowdown");
    assert_rel(e->causes[0].effect_s, C * (1 / f - 1), 1e-9);
    for (size_t i = 0; i < h.log.n; i++) /* at the step's end, in integer picoseconds */
      if (!strcmp(h.log.v[i].kind, "straggler") &&
          h.log.v[i].at == run_training_step(&h.s.tr, false, k)->end) {
        assert_string_equal(h.log.v[i].component, "gpu5");
        straggler++;
      }
  }
  assert_int_equal(straggler, 3);
  /* the slowdown once, from the job's report (the scheduler's own line left out) */
  assert_int_equal(count_kind(&h.log, "gpu-slowdown"), 1);
  assert_sorted(&h.log);
  finish(&h);
}

/* A GPU failure in step 2: the job stops at its time, to the picosecond;
 * the work since the last checkpoint is min(phase, tau) with phase = t mod
 * (tau + delta) (tau 300 us, delta 900 us: here it strikes during a
 * checkpoint write, so tau is lost), restart 10 s + that recompute. */
static void test_gpu_fail_cost(void **state) {
  (void)state;
  harness h;
  run(&h, NULL); /* fault-free: the step's length */
  simtime_ps T0 =
      run_training_step(&h.s.tr, false, 0)->end - run_training_step(&h.s.tr, false, 0)->start;
  double step1 = wl_job_step(h.res.job, 0)->time_s;
  finish(&h);
  simtime_ps at_ns = T0 * 3 / 2 / SIM_PS_PER_NS, at = at_ns * SIM_PS_PER_NS;
  char fault[128];
  snprintf(fault, sizeof fault, "faults=[{at: %lluns, kind: gpu-fail, target: gpu3}]",
           (unsigned long long)at_ns);
  run(&h, fault);
  const run_failure *f = &h.res.failure;
  assert_true(f->happened);
  assert_int_equal(f->kind, WL_GPU_FAIL);
  assert_string_equal(f->component, "gpu3");
  assert_true(f->at == at);
  assert_int_equal(f->step, 2);
  assert_int_equal(f->steps_completed, 1);
  assert_true(wl_job_step(h.res.job, 0)->time_s == step1); /* before it: the fault-free step */
  double tau = 300e-6, delta = 900e-6, t = sim_ps_to_s(at), phase = fmod(t, tau + delta);
  double lost = phase < tau ? phase : tau;
  assert_true(phase > tau); /* it struck while the checkpoint was written: tau lost */
  assert_false(f->checkpoint_interval_auto);
  assert_rel(f->checkpoint_interval_s, tau, 1e-12);
  assert_rel(f->checkpoint_write_s, delta, 1e-12);
  assert_rel(f->cost.lost_work_s, lost, 1e-9);
  assert_rel(f->cost.lost_gpu_hours, lost * 8 / 3600, 1e-9);
  assert_rel(f->cost.restart_cost_s, 10 + lost, 1e-12);
  assert_rel(f->cost.expected_lost_work_s, (tau * tau / 2 + tau * delta) / (tau + delta), 1e-12);
  assert_rel(f->lost_steps, lost / step1, 1e-9);
  /* its events at the failure's integer time */
  size_t seen = 0;
  for (size_t i = 0; i < h.log.n; i++)
    if (!strcmp(h.log.v[i].kind, "gpu-fail") || !strcmp(h.log.v[i].kind, "job-stopped")) {
      assert_true(h.log.v[i].at == at);
      seen++;
    }
  assert_int_equal(seen, 2);
  assert_sorted(&h.log);
  finish(&h);
}

/* The windows of `faults` played by the scheduler on a flow backend up to
 * `until` (no workload), as run_fault_windows reads them from its log. */
static uint32_t windows(const char *faults, simtime_ps until, run_setup *s, run_fault_window *w,
                        uint32_t room) {
  const char *sets[] = {"cluster.nodes=4", "fabric.switch_radix=8", "simulation.fidelity=flow",
                        "workload.collective.size=1MiB", faults};
  sim_error err = {0};
  if (run_setup_load(s, NULL, sets, 5, &err) != SIM_OK || run_setup_begin(s, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_true(s->nfaults <= room);
  ev_run(s->sim, until);
  flt_sched_finish(s->fs);
  return run_fault_windows(s->fs, s->faults, s->nfaults, w);
}

/* Windows as the scheduler played them: the duration's recovery, a flap's
 * last recovery ((count - 1) x period + duration), the first later -up of the same target,
 * whichever comes first; -up entries and GPU faults have none; in list order; a recovery the run
 * did not reach leaves the window open, a fault it did not reach has none. */
static void test_fault_windows(void **state) {
  (void)state;
  const simtime_ps ms = SIM_PS_PER_MS;
  run_setup s;
  run_fault_window w[9];
  uint32_t n = windows(
      "faults=[{at: 1ms, kind: link-down, target: leaf0-spine0, duration: 2ms},"
      " {at: 5ms, kind: link-flap, target: leaf1-spine0, count: 3, period: 1ms, duration: 0.5ms},"
      " {at: 10ms, kind: switch-down, target: spine1}, {at: 12ms, kind: switch-up, target: spine1},"
      " {at: 11ms, kind: switch-up, target: spine1}, {at: 20ms, kind: nic-down, target: nic3},"
      " {at: 0s, kind: gpu-slowdown, target: gpu1, factor: 0.5},"
      " {at: 2ms, kind: link-up, target: leaf0-spine0},"
      " {at: 40ms, kind: link-down, target: leaf2-spine0, duration: 10ms}]",
      30 * ms, &s, w, 9);
  assert_int_equal(n, 4);
  assert_string_equal(w[0].component, "leaf0-spine0");
  assert_string_equal(w[0].kind, "link-down");
  assert_true(w[0].at == 1 * ms && w[0].until_set && w[0].until == 2 * ms); /* the link-up */
  assert_true(w[1].at == 5 * ms && w[1].until_set && w[1].until == 7 * ms + ms / 2);
  assert_string_equal(w[1].kind, "link-flap");
  assert_true(w[2].at == 10 * ms && w[2].until_set && w[2].until == 11 * ms);
  assert_string_equal(w[2].component, "spine1");
  assert_true(w[3].at == 20 * ms && !w[3].until_set);
  run_setup_free(&s);
  /* an -up before the fault does not end it: its duration does; a recovery
   * after the run stopped leaves it open */
  n = windows(
      "faults=[{at: 1ms, kind: link-down, target: leaf0-spine0, duration: 2ms},"
      " {at: 0s, kind: link-up, target: leaf0-spine0},"
      " {at: 4ms, kind: link-down, target: leaf1-spine0, duration: 10ms}]",
      6 * ms, &s, w, 9);
  assert_int_equal(n, 2);
  assert_true(w[0].at == 1 * ms && w[0].until_set && w[0].until == 3 * ms);
  assert_true(w[1].at == 4 * ms && !w[1].until_set);
  run_setup_free(&s);
}

/* The log: inserted in time order after equal times; sorted stably. */
static void test_event_order(void **state) {
  (void)state;
  run_events log = {0};
  run_event_add(&log, 5, "a", "k", "1");
  run_event_add(&log, 1, "b", "k", "2");
  run_event_add(&log, 5, "c", "k", "3");
  run_event_add(&log, 0, "d", "k", NULL);
  run_events_sort(&log);
  const char *want[] = {"d", "b", "a", "c"};
  for (size_t i = 0; i < 4; i++) assert_string_equal(log.v[i].component, want[i]);
  assert_string_equal(log.v[0].detail, "");
  assert_int_equal(run_event_insert(&log, 1, "e", "k", "x"), 2); /* after b, before a */
  assert_int_equal(run_event_insert(&log, 9, "f", "k", "x"), 5);
  run_events_free(&log);
  assert_int_equal(log.n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fault_free_equals_baseline),
      cmocka_unit_test(test_slowdown_root_cause),
      cmocka_unit_test(test_gpu_fail_cost),
      cmocka_unit_test(test_fault_windows),
      cmocka_unit_test(test_event_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
