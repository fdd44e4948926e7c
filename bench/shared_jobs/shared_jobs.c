/* Benchmark: several jobs on one fabric (jobs:), the whole run as fabsim run
 * does it (setup, the jobs together, then each alone), in a child process
 * so its peak RSS and CPU time are its own. Cases:
 *   two-16k-aware   two 8,192-GPU MoE jobs on a 16,384-GPU 8-plane fabric at
 *                   the flow fidelity, topology-aware: isolated (issue 16's
 *                   speed case: one step in under 10 s)
 *   two-16k-random  the same placed at random: timed and stretched
 * `--scenario FILE` runs one custom jobs scenario. Figures go in
 * docs/performance.md, never in tests.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_fork.h"
#include "fabsim/ev.h"
#include "fabsim/run.h"

typedef struct bench_case {
  const char *name, *what, *file;
} bench_case;

static const bench_case cases[] = {
    {"two-16k-aware", "two 8,192-GPU MoE jobs, 8-plane 16,384-GPU fabric, flow, topology-aware",
     "examples/shared/two-trainings-16k.yaml"},
    {"two-16k-random", "the same jobs placed at random (timed and stretched)",
     "examples/shared/two-trainings-16k-random.yaml"},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

/* The run, in the child: 0 when every job finished. */
static int run_case(const bench_case *c) {
  run_setup s;
  sim_error err = {0};
  bool complete = true;
  double t0 = sim_wall_s();
  const char *sets[] = {"output.dir=/tmp/bench-shared-jobs"};
  int rc = run_setup_load(&s, c->file, sets, 1, &err);
  if (rc == SIM_OK) rc = run_setup_begin(&s, &err);
  if (rc == SIM_OK) rc = run_jobs_start(&s.jobs, s.sim, s.be, s.doc, &err);
  if (rc == SIM_OK && run_jobs_training(&s.jobs))
    rc = run_jobs_run(&s.jobs, s.sim, s.doc, &complete, &err);
  else if (rc == SIM_OK) ev_run(s.sim, SIM_TIME_MAX);
  double t1 = sim_wall_s();
  if (rc == SIM_OK) {
    run_jobs_end(&s.jobs, s.sim);
    rc = run_jobs_alone(&s.jobs, s.doc, s.t, &err);
  }
  double t2 = sim_wall_s();
  if (rc != SIM_OK) {
    fprintf(stderr, "%s: %s\n", c->name, err.msg);
    run_setup_free(&s);
    return 2;
  }
  printf("%s: %s\n  command       ./build/fabsim run %s\n", c->name, c->what, c->file);
  for (uint32_t j = 0; j < s.jobs.n; j++) {
    const run_job *job = &s.jobs.v[j];
    printf("  job %-9s %.4f s shared, %.4f s alone, slowdown %.4f (%s)\n", job->cfg->name,
           job->res.time_s, job->alone.time_s, job->slowdown,
           job->isolated ? "isolated"
           : job->timed  ? "timed"
                         : "live");
  }
  printf("  wall          %.3f s (setup and the jobs together %.3f s, each alone %.3f s)\n",
         t2 - t0, t1 - t0, t2 - t1);
  fflush(stdout); /* the child leaves with _exit */
  run_setup_free(&s);
  return 0;
}

/* The run of one case, for bench_run_forked. */
static int run_one(const void *c) { return run_case(c); }

int main(int argc, char **argv) {
  bench_case custom = {"custom", "scenario given on the command line", NULL};
  int rc = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--scenario") && i + 1 < argc) {
      custom.file = argv[++i];
    } else {
      fprintf(stderr, "usage: bench_shared_jobs [--scenario FILE]\ncases:\n");
      for (int k = 0; k < NCASES; k++)
        fprintf(stderr, "  %-15s %s\n", cases[k].name, cases[k].what);
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (custom.file) return bench_run_forked(run_one, &custom, 1);
  for (int k = 0; k < NCASES; k++) rc |= bench_run_forked(run_one, &cases[k], 1);
  return rc;
}
