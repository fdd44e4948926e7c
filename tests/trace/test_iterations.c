/* The example Chakra job over several iterations (workload.steps) and under
 * GPU faults played through the runner's hooks, against closed forms built
 * from the operations alone (run_fixture.h):
 *
 * - Iterations: each rank starts its next iteration when its own ends. The
 *   first is 150 + AR + 200 + AG + send + 50 us (rank 3's 150 us forward
 *   holds the AllReduce); from the second on, ranks 0 and 4 (the send's) reach
 *   the AllReduce last, 100 us into their iteration, so rank 3's extra 50 us
 *   is hidden: each later iteration is the first less 50 us (while the send
 *   outlasts those 50 us).
 * - A slowdown to f of a rank's GPU from t0 to t1 stretches its compute in
 *   progress: a node with w of work left at t0 ends at t0 + w / f, or, if
 *   that is past t1, at t1 + (w - (t1 - t0) f).
 * - A GPU or node failure stops the job at its time; a GPU outside the job
 *   changes nothing.
 * - Iterations or a slowdown that would pass the horizon of simulated time
 *   are refused at their key before anything runs.
 * Both fidelities without queues (analytic, flow). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trace/run_fixture.h"

static const simtime_ps US = 1000000;

/* The sets of the base scenario with the fidelity, then `more`. */
static void load_with(fixture *f, const char *fidelity, const char *const *more, int nmore) {
  const char *sets[16];
  memcpy(sets, base_sets, sizeof base_sets);
  sets[5] = fidelity;
  for (int i = 0; i < nmore; i++) sets[6 + i] = more[i];
  load(f, sets, 6 + nmore);
}

/* A hook call at a time: slowdown (factor > 0) or failure (factor 0). */
typedef struct hook_call {
  simtime_ps at;
  uint32_t gpu;
  double factor;
  bool whole_node;
  flt_gpu_hooks *h;
} hook_call;

static void fire(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)arg;
  hook_call *c = obj;
  if (c->factor > 0) c->h->slowdown(c->h->ctx, sim_now(sim), c->gpu, c->factor);
  else (c->h->fail)(c->h->ctx, sim_now(sim), c->gpu, c->whole_node);
}

/* Runs the example job with the hook calls; *failed: the runner's verdict. */
static void run_with(const fixture *f, hook_call *calls, size_t n, trc_result *out,
                     trc_failure *failed) {
  trc_set *s = example_set(per_rank, EX_RANKS);
  sim_ctx *sim = sim_create(1);
  be_backend *b = backend(sim, f);
  trc_runner *r;
  sim_error err = {0};
  if (trc_runner_create(&r, s, &f->cfg, f->doc, f->t, b, &err) != SIM_OK) fail_msg("%s", err.msg);
  flt_gpu_hooks h = trc_runner_hooks(r);
  assert_null(h.sdc); /* traces carry no numerics: the scheduler says "no effect" */
  for (size_t i = 0; i < n; i++) {
    calls[i].h = &h;
    ev_schedule(sim, calls[i].at, fire, &calls[i], 0);
  }
  trc_runner_start(r);
  ev_run(sim, SIM_TIME_MAX);
  memset(failed, 0, sizeof *failed);
  if (!trc_runner_failed(r, failed)) assert_true(trc_runner_done(r));
  else assert_false(trc_runner_done(r));
  trc_runner_result(r, out);
  be_destroy(b);
  trc_runner_free(r);
  sim_destroy(sim);
  trc_set_free(s);
}

/* The first iteration's closed form (test_run.c's) and the send alone. */
static simtime_ps first_iteration(const fixture *f, simtime_ps *p2p) {
  simtime_ps ar = alone_coll(f, CFG_COLL_ALLREDUCE, EX_AR_BYTES, EX_RANKS);
  simtime_ps ag = alone_coll(f, CFG_COLL_ALLGATHER, EX_AG_BYTES * EX_AG_RANKS, EX_AG_RANKS);
  *p2p = alone_xfer(f, 0, 4, EX_P2P_BYTES);
  return EX_FWD_SLOW_US * US + ar + EX_BWD_US * US + ag + *p2p + EX_OPT_US * US;
}

static void assert_parts(const trc_result *r) { /* compute + exposed + idle = the run */
  for (uint32_t i = 0; i < EX_RANKS; i++)
    assert_float_equal(r->ranks[i].compute_s + r->ranks[i].exposed_comm_s + r->ranks[i].idle_s,
                       r->time_s, 1e-12);
}

/* state: the fidelity */
static void test_iterations(void **state) {
  static const char *const steps[] = {"workload.steps=4"};
  fixture f;
  load_with(&f, *state, steps, 1);
  simtime_ps p2p, one = first_iteration(&f, &p2p), later = one - 50 * US;
  assert_true(p2p > 50 * US); /* the send outlasts rank 3's extra 50 us */
  trc_result r;
  trc_failure no;
  run_with(&f, NULL, 0, &r, &no);
  print_message("iterations %.3f, %.3f, %.3f, %.3f us\n", r.iteration_s[0] * 1e6,
                r.iteration_s[1] * 1e6, r.iteration_s[2] * 1e6, r.iteration_s[3] * 1e6);
  assert_int_equal(r.iterations, 4);
  assert_int_equal(r.iterations_done, 4);
  assert_int_equal(r.time_ps, one + 3 * later);
  assert_float_equal(r.iteration_s[0], (double)one * 1e-12, 1e-15);
  for (int k = 1; k < 4; k++) assert_float_equal(r.iteration_s[k], (double)later * 1e-12, 1e-15);
  for (uint32_t i = 0; i < EX_RANKS; i++) { /* four times each rank's nodes */
    double c = (i == 3 ? EX_FWD_SLOW_US : EX_FWD_US) + EX_BWD_US + EX_OPT_US;
    assert_float_equal(r.ranks[i].compute_s, 4 * c * 1e-6, 1e-12);
  }
  assert_parts(&r);
  assert_int_equal(r.nodes, 38); /* one iteration's nodes */
  trc_result_free(&r);
  unload(&f);
}

static void test_slowdown(void **state) {
  fixture f;
  load_with(&f, *state, NULL, 0);
  simtime_ps p2p, one = first_iteration(&f, &p2p);
  trc_result r;
  trc_failure no;
  /* rank 0 at 0.5 from 50 us on: forward 50 + 50 / 0.5 = 150 us (as rank 3's:
   * the AllReduce starts as before), backward 400, optimizer 100: +250 us */
  hook_call a[] = {{.at = 50 * US, .gpu = 0, .factor = 0.5}};
  run_with(&f, a, 1, &r, &no);
  assert_int_equal(r.time_ps, one + 250 * US);
  assert_float_equal(r.ranks[0].compute_s, (150 + 400 + 100) * 1e-6, 1e-12);
  assert_parts(&r);
  trc_result_free(&r);
  /* rank 3 (the critical forward, 150 us) at 0.5 from 50 to 150 us: 50 us of
   * work done by 50, 50 more by 150, the last 50 at full speed: ends at 200 */
  hook_call b[] = {{.at = 50 * US, .gpu = 3, .factor = 0.5},
                   {.at = 150 * US, .gpu = 3, .factor = 1}};
  run_with(&f, b, 2, &r, &no);
  assert_int_equal(r.time_ps, one + 50 * US);
  trc_result_free(&r);
  /* a slowdown while rank 3 is not computing (inside the AllReduce) and
   * lifted before its backward: nothing changes */
  hook_call c[] = {{.at = 151 * US, .gpu = 3, .factor = 0.1},
                   {.at = 152 * US, .gpu = 3, .factor = 1}};
  run_with(&f, c, 2, &r, &no);
  assert_int_equal(r.time_ps, one);
  trc_result_free(&r);
  unload(&f);
}

static void test_failure(void **state) {
  static const char *const steps[] = {"workload.steps=3"};
  fixture f;
  load_with(&f, *state, steps, 1);
  simtime_ps p2p, one = first_iteration(&f, &p2p);
  trc_result r;
  trc_failure got;
  /* gpu5 fails in the second iteration: the job stops there */
  hook_call a[] = {{.at = one + 300 * US, .gpu = 5, .factor = 0}};
  run_with(&f, a, 1, &r, &got);
  assert_int_equal(got.at, one + 300 * US);
  assert_int_equal(got.gpu, 5);
  assert_false(got.whole_node);
  assert_int_equal(r.time_ps, one + 300 * US);
  assert_int_equal(r.iterations_done, 1);
  assert_parts(&r);
  trc_result_free(&r);
  /* node 0's failure named by gpu1; a GPU's failure after the job: nothing */
  hook_call b[] = {{.at = 10 * US, .gpu = 1, .factor = 0, .whole_node = true}};
  run_with(&f, b, 1, &r, &got);
  assert_true(got.whole_node);
  assert_int_equal(r.time_ps, 10 * US);
  assert_int_equal(r.iterations_done, 0);
  trc_result_free(&r);
  hook_call c[] = {{.at = 100 * one, .gpu = 2, .factor = 0}};
  run_with(&f, c, 1, &r, &got);
  assert_int_equal(r.iterations_done, 3);
  assert_int_equal(got.at, 0);
  trc_result_free(&r);
  unload(&f);
}

/* One rank computing a us then b us. */
static trc_set *chain_set(uint64_t a, uint64_t b) {
  static const uint64_t d1[] = {1};
  trc_write_node n[2] = {{.id = 1, .kind = TRC_COMPUTE, .duration_us = a},
                         {.id = 2, .kind = TRC_COMPUTE, .duration_us = b, .deps = d1, .ndeps = 1}};
  size_t len;
  uint8_t *buf = trc_write("0.0.4", n, 2, &len);
  trc_trace *one = sim_calloc(1, sizeof *one);
  sim_error err = {0};
  if (trc_parse(one, "chain.et", buf, len, &err) != SIM_OK) fail_msg("%s", err.msg);
  sim_free(buf);
  static const uint32_t zero[1] = {0};
  trc_set *s;
  if (trc_set_create(&s, one, 1, zero, 1, &err) != SIM_OK) fail_msg("%s", err.msg);
  return s;
}

/* A GPU outside the job (one rank, on gpu0, of the 8-GPU cluster): its
 * slowdown or failure, or its node's, changes nothing. */
static void test_outside(void **state) {
  (void)state;
  static const char *const more[] = {"workload.trace.ranks=1"};
  fixture f;
  load_with(&f, "simulation.fidelity=analytic", more, 1);
  trc_set *s = chain_set(30, 20);
  sim_ctx *sim = sim_create(1);
  be_backend *b = backend(sim, &f);
  trc_runner *r;
  sim_error err = {0};
  if (trc_runner_create(&r, s, &f.cfg, f.doc, f.t, b, &err) != SIM_OK) fail_msg("%s", err.msg);
  flt_gpu_hooks h = trc_runner_hooks(r);
  trc_runner_start(r);
  h.slowdown(h.ctx, 0, 5, 0.5); /* gpu5: no rank of the job */
  (h.fail)(h.ctx, 0, 6, false);
  (h.fail)(h.ctx, 0, 7, true); /* node 1: gpus 4-7, none the job's */
  ev_run(sim, SIM_TIME_MAX);
  assert_false(trc_runner_failed(r, NULL));
  trc_result res;
  trc_runner_result(r, &res);
  assert_int_equal(res.time_ps, 50 * US);
  trc_result_free(&res);
  be_destroy(b);
  trc_runner_free(r);
  sim_destroy(sim);
  trc_set_free(s);
  unload(&f);
}

/* Refused at create, at the key: 2^62 ps is 4,611,686 s. */
static void test_horizon(void **state) {
  (void)state;
  struct {
    const char *set[2];
    uint64_t us; /* each of the chain's two nodes; 0: the example job */
    const char *want;
  } c[] = {
      /* the example: rank 3 computes 400 us per iteration, 400 s in all */
      {{"workload.steps=1000000", "workload.trace.ranks=8"}, 0, NULL},
      {{"workload.steps=1000000",
        "faults=[{at: 1s, kind: gpu-slowdown, target: gpu3, factor: 1e-5}]"},
       0,
       "faults[0].factor: 1e-05 stretches the 399 s of GPU compute left after 1 s to "
       "3.99e+07 s, past the horizon"},
      /* two 10^12 us nodes: 2 x 10^6 s per iteration; two fit, three do not */
      {{"workload.steps=2", "workload.trace.ranks=1"}, 1000000000000ull, NULL},
      {{"workload.steps=3", "workload.trace.ranks=1"},
       1000000000000ull,
       "workload.steps: 3 iterations of at least 2e+06 s of GPU compute each pass the horizon "
       "of simulated time, 4.612e+06 s (2^62 ps, 53.4 days); allowed: at most 2"},
  };
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    fixture f;
    load_with(&f, "simulation.fidelity=analytic", c[k].set, 2);
    trc_set *s = c[k].us ? chain_set(c[k].us, c[k].us) : example_set(per_rank, EX_RANKS);
    sim_ctx *sim = sim_create(1);
    be_backend *b = backend(sim, &f);
    trc_runner *r = NULL;
    sim_error err = {0};
    int rc = trc_runner_create(&r, s, &f.cfg, f.doc, f.t, b, &err);
    if (!c[k].want) {
      assert_int_equal(rc, SIM_OK);
    } else {
      assert_int_equal(rc, SIM_ECONFIG);
      fail_contains(err.msg, c[k].want);
    }
    trc_runner_free(r);
    be_destroy(b);
    sim_destroy(sim);
    trc_set_free(s);
    unload(&f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(test_iterations, "simulation.fidelity=analytic"),
      cmocka_unit_test_prestate(test_iterations, "simulation.fidelity=flow"),
      cmocka_unit_test_prestate(test_slowdown, "simulation.fidelity=analytic"),
      cmocka_unit_test_prestate(test_slowdown, "simulation.fidelity=flow"),
      cmocka_unit_test_prestate(test_failure, "simulation.fidelity=analytic"),
      cmocka_unit_test_prestate(test_failure, "simulation.fidelity=flow"),
      cmocka_unit_test(test_outside),
      cmocka_unit_test(test_horizon),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
