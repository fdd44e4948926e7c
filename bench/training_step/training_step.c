/* One training step at scale: the issue #4 speed questions as a program.
 *
 * Each case loads a scenario file with --set overrides, builds the topology
 * and simulates one step (wl_step_run) on the fidelity the case selects, in a
 * child process of its own so that the peak RSS reported is that case's
 * alone. Prints wall seconds (load + topology, step), peak RSS, and the
 * step's headline figures so that a reader can check the run did the work.
 *
 * Built-in cases (run from the repository root; examples/ is read):
 *   moe-16k-flow       DeepSeek-V3-like MoE, 16,384 GPUs, 8-plane 2-tier, flow
 *                      (the example's DualPipe schedule)
 *   moe-16k-interleaved-flow  the same with interleaved 1F1B, 2 chunks per GPU
 *   moe-131k-analytic  same model, 131,072 GPUs, 8-plane 3-tier, analytic
 * (both keep the example's 32 micro-batches per data-parallel replica, so the
 * global batch grows with the job)
 *   dense70b-1k-flow   70B dense TP8 x PP4 x DP32 on 1,024 GPUs, flow
 *   dense70b-1k-packet same at the packet fidelity (about a minute)
 * Default: the first four. `--case NAME` (repeatable) picks cases, `--all`
 * adds the packet one, `--scenario FILE [--set k=v ...]` runs one custom case.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_fork.h"
#include "fabsim/backend.h"
#include "fabsim/workload.h"

enum { MAX_SETS = 16 };

typedef struct bench_case {
  const char *name, *what, *file;
  const char *sets[MAX_SETS];
} bench_case;

static const bench_case cases[] = {
    {"moe-16k-flow",
     "DeepSeek-V3-like MoE, 16,384 GPUs, 8-plane 2-tier fat-tree, flow",
     "examples/deepseek-v3-moe.yaml",
     {"cluster.nodes=2048", "workload.global_batch=32768", "simulation.fidelity=flow"}},
    {"moe-16k-interleaved-flow",
     "DeepSeek-V3-like MoE, 16,384 GPUs, interleaved 1F1B (2 chunks per GPU), flow",
     "examples/deepseek-v3-moe.yaml",
     {"cluster.nodes=2048", "workload.global_batch=32768", "simulation.fidelity=flow",
      "workload.pipeline.schedule=interleaved", "workload.parallel.virtual_stages=2"}},
    {"moe-131k-analytic",
     "DeepSeek-V3-like MoE, 131,072 GPUs, 8-plane 3-tier fat-tree, analytic",
     "examples/deepseek-v3-moe.yaml",
     {"cluster.nodes=16384", "fabric.tiers=3", "workload.global_batch=262144",
      "simulation.fidelity=analytic"}},
    {"dense70b-1k-flow",
     "70B dense, TP8 x PP4 x DP32, 1,024 GPUs, flow",
     "examples/llama-70b-1024gpu.yaml",
     {"simulation.fidelity=flow"}},
    {"dense70b-1k-packet",
     "70B dense, TP8 x PP4 x DP32, 1,024 GPUs, packet",
     "examples/llama-70b-1024gpu.yaml",
     {"simulation.fidelity=packet"}},
};
enum { NCASES = sizeof cases / sizeof cases[0], DEFAULT_CASES = 4 };

static int nsets_of(const bench_case *c) {
  int n = 0;
  while (n < MAX_SETS && c->sets[n]) n++;
  return n;
}

/* The case itself, in the child. Exit code 0 when the step ran. */
static int run_case(const bench_case *c) {
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  topo *t = NULL;
  sim_ctx *sim = NULL;
  be_backend *b = NULL;
  wl_step st = {0};
  sim_error err = {0};
  int rc = 1;
  double t0 = sim_wall_s();
  if (cfg_load(&cfg, &doc, c->file, c->sets, nsets_of(c), &err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  if (topo_build(&t, &cfg, doc, &err) != SIM_OK) goto fail;
  sim = sim_create(cfg.simulation.seed);
  if (be_create(&b, sim, t, &cfg, doc, &err) != SIM_OK) goto fail;
  double t1 = sim_wall_s();
  if (wl_step_run(&st, &cfg, doc, t, b, &err) != SIM_OK) goto fail;
  double t2 = sim_wall_s();
  printf("%s: %s\n", c->name, c->what);
  printf("  command       ./build/fabsim run %s", c->file);
  for (int i = 0; i < nsets_of(c); i++) printf(" --set %s", c->sets[i]);
  printf("\n  GPUs          %u (%s, comm model %s, %" PRIu64 " transfers measured)\n", st.gpus,
         cfg_fidelity_name(cfg.simulation.fidelity), cfg_comm_model_name(st.comm_model),
         st.transfers_measured);
  printf(
      "  step          %.3f s simulated: compute %.3f s, exposed comm %.3f s, bubble %.3f s, "
      "MFU %.1f %%\n",
      st.time_s, st.compute_s, st.exposed_comm_s, st.bubble_s, st.mfu * 100.0);
  printf("  wall          %.3f s (load and topology %.3f s, step %.3f s)\n", t2 - t0, t1 - t0,
         t2 - t1);
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "%s: %s\n", c->name, err.msg);
  rc = 2;
done:
  fflush(stdout);
  wl_step_free(&st);
  be_destroy(b);
  if (sim) sim_destroy(sim);
  topo_free(t);
  cfg_free(&cfg, doc);
  return rc;
}

/* The run of one case, for bench_run_forked. */
static int run_one(const void *c) { return run_case(c); }

static void usage(void) {
  fprintf(stderr,
          "usage: bench_training_step [--case NAME]... [--all]\n"
          "       bench_training_step --scenario FILE [--set key=value]...\n"
          "cases:\n");
  for (int i = 0; i < NCASES; i++) fprintf(stderr, "  %-20s %s\n", cases[i].name, cases[i].what);
}

int main(int argc, char **argv) {
  bool pick[NCASES] = {0}, any = false;
  bench_case custom = {"custom", "scenario given on the command line", NULL, {0}};
  int ncustom = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--all")) {
      for (int k = 0; k < NCASES; k++) pick[k] = true;
      any = true;
    } else if (!strcmp(a, "--case") && v) {
      int k = 0;
      while (k < NCASES && strcmp(cases[k].name, v)) k++;
      if (k == NCASES) {
        usage();
        return 2;
      }
      pick[k] = any = true;
      i++;
    } else if (!strcmp(a, "--scenario") && v) {
      custom.file = v;
      i++;
    } else if (!strcmp(a, "--set") && v && ncustom < MAX_SETS - 1) {
      custom.sets[ncustom++] = v;
      i++;
    } else {
      usage();
      return strcmp(a, "--help") && strcmp(a, "-h") ? 2 : 0;
    }
  }
  if (custom.file) return bench_run_forked(run_one, &custom, 0);
  if (ncustom) {
    usage();
    return 2;
  }
  int rc = 0;
  for (int k = 0; k < NCASES; k++)
    if (any ? pick[k] : k < DEFAULT_CASES) rc |= bench_run_forked(run_one, &cases[k], 0);
  return rc;
}
