/* A training job of several steps with GPU faults, against closed forms:
 * a GPU throttled to f in a data-parallel job stretches the step's compute
 * by 1/f (the other replicas wait for it), a failure stops the job at its
 * time, silent data corruption leaves the GPU at the next gradient
 * reduction. The faults are played the way the fault scheduler plays them:
 * events on the simulation calling the job's hooks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/workload.h"
#include "fixture.h"

/* 8 GPUs of one node, data parallel only, one bucket reduced after the
 * backward pass: step = compute + AllReduce, exactly. */
#define DP8                                                                                   \
  "cluster.nodes=1", "workload.precision=bf16", "workload.model.layers=4",                    \
      "workload.model.hidden=1024", "workload.model.heads=16", "workload.model.seq_len=2048", \
      "workload.model.vocab=0", "workload.global_batch=8", "workload.bucket_size=1TiB",       \
      "workload.grad_overlap=false"

static void assert_rel(double got, double want, double rel) {
  if (fabs(got - want) > rel * fabs(want) + 1e-10)
    fail_msg("got %.15g, want %.15g (rel %.3g)", got, want, rel);
}

typedef struct fault_at {
  flt_gpu_hooks h;
  int kind; /* 0 slowdown, 1 fail, 2 sdc */
  uint32_t gpu;
  double factor;
} fault_at;

static void fire(sim_ctx *sim, void *obj, uint64_t arg) {
  fault_at *f = obj;
  (void)arg;
  if (f->kind == 0) f->h.slowdown(f->h.ctx, sim_now(sim), f->gpu, f->factor);
  if (f->kind == 1) (f->h.fail)(f->h.ctx, sim_now(sim), f->gpu, false);
  if (f->kind == 2) f->h.sdc(f->h.ctx, sim_now(sim), f->gpu);
}

typedef struct harness {
  fixture f;
  sim_ctx *sim;
  be_backend *b;
  wl_job *j;
  fault_at faults[4];
} harness;

static void start(harness *h, uint32_t steps) {
  const char *sets[] = {DP8};
  load(&h->f, sets, (int)(sizeof sets / sizeof *sets));
  h->sim = sim_create(1);
  h->b = be_analytic_create(h->sim, h->f.t, &h->f.cfg);
  sim_error err = {0};
  if (wl_job_create(&h->j, &h->f.cfg, h->f.doc, h->f.t, h->b, steps, &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

static void schedule(harness *h, int i, int kind, double at_s, uint32_t gpu, double factor) {
  h->faults[i] = (fault_at){wl_job_hooks(h->j), kind, gpu, factor};
  ev_schedule(h->sim, (simtime_ps)llround(at_s * 1e12), fire, &h->faults[i], 0);
}

static void run(harness *h) {
  sim_error err = {0};
  if (wl_job_run(h->j, h->f.doc, &err) != SIM_OK) fail_msg("%s", err.msg);
}

static void stop(harness *h) {
  be_destroy(h->b);
  wl_job_free(h->j);
  sim_destroy(h->sim);
  unload(&h->f);
}

/* Fault-free: every step alike, back to back. */
static void baseline(wl_step *out, uint32_t steps, double *t0) {
  harness h;
  start(&h, steps);
  run(&h);
  assert_int_equal(wl_job_steps_done(h.j), steps);
  const wl_step *s0 = wl_job_step(h.j, 0);
  for (uint32_t k = 0; k < steps; k++) {
    const wl_step *s = wl_job_step(h.j, k);
    assert_rel(s->time_s, s0->time_s, 1e-12);
    assert_rel(s->start_s, k * s0->time_s, 1e-9);
  }
  *t0 = s0->time_s;
  *out = *s0;
  out->stages = NULL;
  stop(&h);
}

static void test_steps_and_throttle(void **state) {
  (void)state;
  wl_step b;
  double T0;
  baseline(&b, 3, &T0);
  double C = b.compute_s, A = b.exposed_comm_s, f = 0.8;
  assert_rel(C + A, T0, 1e-12);
  /* throttled from the start: compute / f + the same AllReduce */
  harness h;
  start(&h, 2);
  schedule(&h, 0, 0, 0, 5, f);
  run(&h);
  const wl_step *s = wl_job_step(h.j, 0);
  assert_rel(s->time_s, C / f + A, 1e-9);
  assert_rel(s->time_s - T0, C * (1 / f - 1), 1e-9); /* compute share x (1/f - 1) */
  assert_rel(wl_job_step(h.j, 1)->time_s, C / f + A, 1e-9);
  size_t n;
  const wl_gpu_event *e = wl_job_events(h.j, &n);
  assert_int_equal(n, 1);
  assert_int_equal(e[0].kind, WL_GPU_SLOWDOWN);
  assert_int_equal(e[0].gpu, 5);
  assert_int_equal(e[0].stage, 0);
  stop(&h);
  /* from a quarter of the first step's compute on: the rest of it at f */
  start(&h, 3);
  schedule(&h, 0, 0, C / 4, 2, f);
  run(&h);
  assert_rel(wl_job_step(h.j, 0)->time_s, C / 4 + 0.75 * C / f + A, 1e-9);
  assert_rel(wl_job_step(h.j, 2)->time_s, C / f + A, 1e-9);
  stop(&h);
  /* thermal 0.9 and a fault 0.6 on one GPU: the lower; the fault's end leaves the rack's */
  start(&h, 2);
  wl_job_slowdown(h.j, 0, 3, 0.9, true);
  schedule(&h, 0, 0, 0, 3, 0.6);
  schedule(&h, 1, 0, C / 0.6 + A, 3, 1); /* at the start of step 2 */
  run(&h);
  assert_rel(wl_job_step(h.j, 0)->time_s, C / 0.6 + A, 1e-9);
  assert_rel(wl_job_step(h.j, 1)->time_s, C / 0.9 + A, 1e-9);
  stop(&h);
  /* two GPUs: the slowest sets the pace */
  start(&h, 1);
  schedule(&h, 0, 0, 0, 1, 0.9);
  schedule(&h, 1, 0, 0, 6, 0.5);
  run(&h);
  assert_rel(wl_job_step(h.j, 0)->time_s, C / 0.5 + A, 1e-9);
  stop(&h);
}

static void test_failure_stops(void **state) {
  (void)state;
  wl_step b;
  double T0;
  baseline(&b, 1, &T0);
  harness h;
  start(&h, 4);
  double at = 1.5 * T0;
  schedule(&h, 0, 1, at, 3, 1);
  run(&h);
  assert_int_equal(wl_job_steps_done(h.j), 1);
  simtime_ps when, step_start;
  assert_true(wl_job_stopped(h.j, &when, &step_start));
  assert_rel(sim_ps_to_s(when), at, 1e-9);
  assert_rel(sim_ps_to_s(step_start), T0, 1e-9);
  size_t n;
  const wl_gpu_event *e = wl_job_events(h.j, &n);
  assert_int_equal(n, 1);
  assert_int_equal(e[0].kind, WL_GPU_FAIL);
  assert_int_equal(e[0].step, 1);
  stop(&h);
}

static void test_sdc_diverges(void **state) {
  (void)state;
  wl_step b;
  double T0;
  baseline(&b, 1, &T0);
  double C = b.compute_s - b.optimizer_s; /* forward + backward: the reduction starts here */
  harness h;
  start(&h, 3);
  schedule(&h, 0, 2, C / 2, 4, 1);         /* before step 0's reduction */
  schedule(&h, 1, 2, T0 + C + 1e-9, 7, 1); /* just after step 1's reduction started */
  run(&h);
  size_t n;
  const wl_gpu_event *e = wl_job_events(h.j, &n);
  assert_int_equal(n, 2);
  assert_true(e[0].diverged);
  assert_int_equal(e[0].diverge_step, 0);
  assert_rel(sim_ps_to_s(e[0].diverge_at), C, 1e-9);
  assert_true(e[1].diverged);
  assert_int_equal(e[1].diverge_step, 2);
  assert_rel(sim_ps_to_s(e[1].diverge_at), 2 * T0 + C, 1e-9);
  assert_int_equal(wl_job_steps_done(h.j), 3);
  stop(&h);
}

/* A GPU waiting for a straggler is not computing (#13): one of the 8 GPUs
 * at f from the start makes the stage compute C / f; the 7 others compute
 * C and wait C (1 / f - 1), in the step's idle share and in the timeline
 * that feeds the GPU series (wait per bin, the slowed GPU counted apart). */
static void test_straggler_wait(void **state) {
  (void)state;
  wl_step b;
  double T0;
  baseline(&b, 1, &T0);
  double C = b.compute_s, A = b.exposed_comm_s, f = 0.5;
  harness h;
  start(&h, 1);
  wl_job_slowdown(h.j, 0, 5, f, false);
  run(&h);
  const wl_step *s = wl_job_step(h.j, 0);
  double T = C / f + A;
  assert_rel(s->time_s, T, 1e-9);
  assert_rel(s->gpu_idle_frac, 1 - (C / f + 7 * C) / (8 * T), 1e-9);
  assert_true(s->gpu_idle_frac > 1 - s->compute_s / s->time_s); /* not the slowed GPU's view */
  wl_gpu_timeline g;
  wl_job_gpu_timeline(h.j, &g);
  assert_int_equal(g.slow_gpus[0], 1);
  double wait = 0, compute = 0;
  for (uint32_t k = 0; k < g.nbins; k++) {
    wait += sim_ps_to_s(g.wait[k]);
    compute += sim_ps_to_s(g.t[k * WL_GPU_STATES]);
  }
  assert_rel(compute, C / f, 1e-9);
  assert_rel(wait, C / f - C, 1e-6);
  stop(&h);
}

/* Simulated time never wraps (#13): a GPU slowed so far that its compute
 * would end past WL_HORIZON_PS stops the job with SIM_ERANGE, whether the
 * slowdown is in force when a computation starts or arrives during one;
 * short of the horizon the step is the closed form (never shorter than its
 * compute, as a wrapped time made it). */
static void test_horizon(void **state) {
  (void)state;
  wl_step b;
  double T0;
  baseline(&b, 1, &T0);
  double C = b.compute_s, A = b.exposed_comm_s;
  static const double factors[] = {1e-7, 1e-12, 1e-300};
  for (int k = 0; k < 3; k++)
    for (int during = 0; during < 2; during++) {
      harness h;
      sim_error err = {0};
      start(&h, 3);
      if (during) schedule(&h, 0, 0, C / 4, 0, factors[k]);
      else wl_job_slowdown(h.j, 0, 0, factors[k], false);
      int rc = wl_job_run(h.j, h.f.doc, &err);
      if (C * 1e12 / factors[k] < (double)WL_HORIZON_PS) { /* 1e-7 x 3 steps of C: within */
        assert_int_equal(rc, SIM_OK);
        assert_rel(wl_job_step(h.j, 0)->time_s,
                   during ? C / 4 + 0.75 * C / factors[k] + A : C / factors[k] + A, 1e-9);
      } else {
        assert_int_equal(rc, SIM_ERANGE);
        assert_non_null(strstr(err.msg, "horizon"));
        assert_false(wl_job_active(h.j));
        assert_int_equal(wl_job_steps_done(h.j), 0);
      }
      stop(&h);
    }
}

/* A transfer of the job's collectives that fails stops the job at its
 * time (a collective that lost data has not reduced anything), recorded as
 * WL_TRANSFER_FAIL; the listener the backend had before the job still
 * hears of it. */
typedef struct heard {
  int n;
  be_backend *b;
} heard;

static void listener(void *ctx, const be_failure *f) {
  (void)f;
  ((heard *)ctx)->n++;
}

static void lose_transfer(sim_ctx *sim, void *obj, uint64_t arg) {
  heard *x = obj;
  be_failure f = {.at = sim_now(sim),
                  .src_gpu = 3,
                  .dst_gpu = 4,
                  .bytes = 100,
                  .bytes_delivered = 40,
                  .cause = "retry limit"};
  (void)arg;
  x->b->on_failure(x->b->on_failure_ctx, &f);
}

static void test_transfer_failure(void **state) {
  (void)state;
  wl_step b;
  double T0;
  baseline(&b, 1, &T0);
  harness h;
  start(&h, 3);
  heard x = {0, h.b};
  h.b->on_failure = listener;
  h.b->on_failure_ctx = &x;
  double at = T0 + b.compute_s + 1e-9; /* in step 2's reduction */
  ev_schedule(h.sim, (simtime_ps)llround(at * 1e12), lose_transfer, &x, 0);
  run(&h);
  assert_int_equal(x.n, 1);
  assert_int_equal(wl_job_steps_done(h.j), 1);
  assert_false(wl_job_active(h.j));
  simtime_ps when, step_start;
  assert_true(wl_job_stopped(h.j, &when, &step_start));
  assert_rel(sim_ps_to_s(when), at, 1e-9);
  size_t n;
  const wl_gpu_event *e = wl_job_events(h.j, &n);
  assert_int_equal(n, 1);
  assert_int_equal(e[0].kind, WL_TRANSFER_FAIL);
  assert_int_equal(e[0].gpu, 3);
  assert_int_equal(e[0].dst_gpu, 4);
  assert_string_equal(e[0].cause, "retry limit");
  assert_int_equal(e[0].step, 1);
  stop(&h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_horizon),          cmocka_unit_test(test_straggler_wait),
      cmocka_unit_test(test_transfer_failure), cmocka_unit_test(test_steps_and_throttle),
      cmocka_unit_test(test_failure_stops),    cmocka_unit_test(test_sdc_diverges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
