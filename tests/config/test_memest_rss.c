/* The memory estimate (src/config/memest.c) is an upper bound of what a run
 * takes: each small case runs `fabsim run` in a child, its peak RSS read
 * with wait4's rusage, against the estimate of the same scenario; the
 * estimate must cover it and stay within a factor of 4 of it (the margin
 * docs/validation.md, "Memory estimate", states). No timing. The cases
 * cover each fidelity, collectives and an all-to-all (whose queue pairs
 * grow as GPUs squared at the packet fidelity: 11.0 MiB against an
 * estimate of 10.2 MiB before it counted a phase's transfers). What grows
 * with simulated work instead (FCT samples of long runs, a training step
 * at the flow fidelity: docs/validation.md) is not covered. */
#define _DEFAULT_SOURCE /* wait4 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fabsim/config.h"

typedef struct mcase {
  const char *scenario; /* under examples/ */
  const char *sets[6];
} mcase;

static const mcase cases[] = {
    {"default.yaml", {"cluster.nodes=16", "simulation.fidelity=analytic"}},
    {"default.yaml", {"cluster.nodes=16", "simulation.fidelity=flow"}},
    {"default.yaml",
     {"cluster.nodes=2", "workload.collective.size=1MiB", "simulation.fidelity=packet"}},
    {"tour/ib.yaml", {"simulation.fidelity=packet"}},
    {"tour/ib.yaml", {"simulation.fidelity=flow"}},
    {"deepseek-8plane.yaml",
     {"cluster.nodes=2", "workload.collective.op=alltoall", "workload.collective.size=1MiB",
      "simulation.fidelity=packet"}},
};

/* Peak RSS in bytes of `fabsim run` on c, in a child. */
static uint64_t peak_rss(const char *bin, const char *src, const mcase *c, const char *dir) {
  char scen[1024], outdir[512];
  snprintf(scen, sizeof scen, "%s/examples/%s", src, c->scenario);
  snprintf(outdir, sizeof outdir, "output.dir=%s", dir);
  const char *argv[32];
  int k = 0;
  argv[k++] = bin;
  argv[k++] = "run";
  argv[k++] = scen;
  for (int i = 0; i < 6 && c->sets[i]; i++) {
    argv[k++] = "--set";
    argv[k++] = c->sets[i];
  }
  argv[k++] = "--set";
  argv[k++] = outdir;
  argv[k++] = "--quiet";
  argv[k] = NULL;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout)) _exit(127);
    execv(bin, (char *const *)argv);
    _exit(127);
  }
  int st = 0;
  struct rusage ru;
  assert_int_equal(wait4(pid, &st, 0, &ru), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  return (uint64_t)ru.ru_maxrss * 1024; /* Linux: KiB */
}

static void test_upper_bound(void **state) {
  (void)state;
#if defined(__SANITIZE_ADDRESS__)
  skip(); /* the sanitizers' shadow memory is most of the RSS of their build */
#endif
  const char *bin = getenv("FABSIM_BIN"), *src = getenv("FABSIM_SOURCE_DIR");
  if (!bin || !src) fail_msg("FABSIM_BIN and FABSIM_SOURCE_DIR must be set");
  char dir[64];
  snprintf(dir, sizeof dir, "/tmp/fabsim-memest-%d", (int)getpid());
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const mcase *c = &cases[i];
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/%s", src, c->scenario);
    int n = 0;
    while (n < 6 && c->sets[n]) n++;
    cfg_scenario s;
    cfg_doc *doc = NULL;
    sim_error err = {0};
    if (cfg_load(&s, &doc, path, c->sets, n, &err)) fail_msg("%s", err.msg);
    cfg_memory m;
    cfg_memory_estimate(&s, &m);
    cfg_free(&s, doc);
    uint64_t peak = peak_rss(bin, src, c, dir);
    printf("  %-22s %-40s estimate %6.1f MiB, peak RSS %6.1f MiB\n", c->scenario, c->sets[0],
           (double)m.bytes / (1 << 20), (double)peak / (1 << 20));
    assert_true(peak <= m.bytes);
    assert_true(m.bytes <= 4 * peak);
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_upper_bound)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
