/* The job's GPU timeline (wl_job_gpu_timeline) against the step figures it
 * must add up to: per stage, the timeline's compute, exposed communication
 * and bubble summed over its bins equal the stage's compute_s,
 * exposed_comm_s and bubble_s summed over the steps, to the picosecond; the
 * bins stay at most WL_GPU_BINS however long the job, and every bin holds at
 * most its width per stage. A pipeline (PP 4) so that the bubble is there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/workload.h"
#include "fixture.h"

static void check(const char *const *sets, int nsets, uint32_t steps) {
  fixture f;
  load(&f, sets, nsets);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_analytic_create(sim, f.t, &f.cfg);
  sim_error err = {0};
  wl_job *j = NULL;
  if (wl_job_create(&j, &f.cfg, f.doc, f.t, b, steps, &err) != SIM_OK) fail_msg("%s", err.msg);
  if (wl_job_run(j, f.doc, &err) != SIM_OK) fail_msg("%s", err.msg);
  assert_int_equal(wl_job_steps_done(j), steps);

  wl_gpu_timeline g;
  wl_job_gpu_timeline(j, &g);
  const wl_parallel *p = wl_job_parallel(j);
  assert_int_equal(g.nstages, p->pp);
  assert_int_equal(g.gpus_per_stage, p->dp * p->tp);
  assert_true(g.nbins > 0 && g.nbins <= WL_GPU_BINS);
  assert_true(g.bin_ps * g.nbins >= sim_now(sim)); /* covers the run */
  for (uint32_t s = 0; s < g.nstages; s++) {
    simtime_ps sum[WL_GPU_STATES] = {0};
    for (uint32_t bin = 0; bin < g.nbins; bin++) {
      const simtime_ps *x = g.t + ((size_t)bin * g.nstages + s) * WL_GPU_STATES;
      assert_true(x[0] + x[1] + x[2] <= g.bin_ps);
      for (int k = 0; k < WL_GPU_STATES; k++) sum[k] += x[k];
    }
    double want[WL_GPU_STATES] = {0};
    for (uint32_t k = 0; k < steps; k++) {
      const wl_step *st = wl_job_step(j, k);
      want[0] += st->stages[s].compute_s;
      want[1] += st->stages[s].exposed_comm_s;
      want[2] += st->stages[s].bubble_s;
    }
    for (int k = 0; k < WL_GPU_STATES; k++)
      if (fabs(sim_ps_to_s(sum[k]) - want[k]) > 1e-12 * (want[k] + 1))
        fail_msg("stage %u state %d: timeline %.15g s, step figures %.15g s", s, k,
                 sim_ps_to_s(sum[k]), want[k]);
  }
  wl_job_free(j);
  be_destroy(b);
  sim_destroy(sim);
  unload(&f);
}

static void test_pipeline(void **state) {
  (void)state;
  const char *sets[] = {
      "cluster.nodes=4",         "workload.model.layers=8",     "workload.model.hidden=1024",
      "workload.model.heads=16", "workload.model.seq_len=1024", "workload.parallel.tp=2",
      "workload.parallel.pp=4",  "workload.global_batch=32"};
  check(sets, (int)(sizeof sets / sizeof *sets), 3);
}

static void test_many_steps(void **state) { /* the bins widen; nothing is lost */
  (void)state;
  const char *sets[] = {
      "cluster.nodes=1",        "workload.model.layers=2",    "workload.model.hidden=512",
      "workload.model.heads=8", "workload.model.seq_len=512", "workload.global_batch=8"};
  check(sets, (int)(sizeof sets / sizeof *sets), 200);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_pipeline),
                                     cmocka_unit_test(test_many_steps)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
