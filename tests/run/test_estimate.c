/* The plan estimate (run_plan_estimate, src/run/estimate.c): per phase the
 * busiest GPU's bytes x 8 over its first hop rate (NVLink inside a node,
 * NIC across, each summed exactly) plus 5 us, times the phase's repeat;
 * phases in sequence add, staggered ones overlap. Checked against the closed
 * form on a hand-made plan, and against one pass over every phase's
 * transfers (the definition) for tree plans, whose phases are windows over a
 * pool that the estimate follows, and for hand-made pools whose windows
 * slide, jump, shrink and empty, with phases of their own between, and bytes
 * of many sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "fabsim/run.h"
#include "fixture.h"

/* The definition: one pass over each phase's transfers. */
static simtime_ps brute(const coll_plan *p, const topo *t, const cfg_scenario *cfg) {
  uint32_t ngpu = topo_gpu_count(t);
  uint64_t *nv = sim_calloc(ngpu, sizeof *nv), *net = sim_calloc(ngpu, sizeof *net);
  double total = 0, latest = 0;
  double nic = (double)cfg->cluster.nic.bandwidth, nvl = (double)cfg->cluster.scale_up.bandwidth;
  for (size_t i = 0; i < p->nphases; i++) {
    const coll_phase *ph = &p->phases[i];
    double worst = 0;
    for (size_t k = 0; k < ph->n; k++) {
      const be_xfer *x = &ph->x[k];
      bool local = topo_gpu_node(t, x->src_gpu) == topo_gpu_node(t, x->dst_gpu);
      (local ? nv : net)[x->src_gpu] += x->bytes;
    }
    for (uint32_t g = 0; g < ngpu; g++) {
      double s = (double)nv[g] * 8 / nvl + (double)net[g] * 8 / nic;
      if (s > worst) worst = s;
      nv[g] = net[g] = 0;
    }
    double phase = (worst + 5e-6) * (double)ph->repeat;
    if (p->stagger) {
      double end = (double)i * sim_ps_to_s(p->stagger) + phase;
      if (end > latest) latest = end;
    } else {
      total += phase;
    }
  }
  sim_free(nv);
  sim_free(net);
  double s = p->stagger ? latest : total;
  return s > 1e6 ? SIM_PS_PER_S * 1000000 : (simtime_ps)(s * 1e12);
}

static void test_closed_form(void **state) {
  (void)state;
  const char *const sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  uint32_t g = f.cfg.cluster.gpus_per_node;
  /* GPU 0: 3 MB over NVLink and 1 MB to the next node; GPU g: 2 MB across */
  be_xfer x[] = {{.src_gpu = 0, .dst_gpu = 1, .bytes = 1000000},
                 {.src_gpu = 0, .dst_gpu = g, .bytes = 1000000},
                 {.src_gpu = g, .dst_gpu = 0, .bytes = 2000000},
                 {.src_gpu = 0, .dst_gpu = 2, .bytes = 2000000}};
  coll_phase ph[] = {{.x = x, .n = 4, .repeat = 3}, {.x = x + 2, .n = 1, .repeat = 1}};
  coll_plan p = {.phases = ph, .nphases = 2};
  double nvl = (double)f.cfg.cluster.scale_up.bandwidth, nic = (double)f.cfg.cluster.nic.bandwidth;
  double gpu0 = 3e6 * 8 / nvl + 1e6 * 8 / nic, gpug = 2e6 * 8 / nic;
  double want = ((gpu0 > gpug ? gpu0 : gpug) + 5e-6) * 3 + (gpug + 5e-6);
  simtime_ps got = run_plan_estimate(&p, f.t, &f.cfg);
  assert_true(fabs((double)got - want * 1e12) <= 1.0);
  p.stagger = SIM_PS_PER_US; /* the second ends 1 us + its length after the start */
  want = (gpu0 > gpug ? gpu0 : gpug) + 5e-6;
  want *= 3;
  got = run_plan_estimate(&p, f.t, &f.cfg);
  assert_true(fabs((double)got - want * 1e12) <= 1.0);
  unload(&f);
}

static void test_tree_plans(void **state) {
  (void)state;
  const char *const sets[] = {"cluster.nodes=8"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[64];
  for (uint32_t i = 0; i < 64; i++) ranks[i] = i;
  const uint32_t sizes[] = {8, 24, 64};
  const uint64_t bytes[] = {1 << 20, 3000017, 1ull << 28};
  for (size_t a = 0; a < 3; a++)
    for (size_t b = 0; b < 3; b++) {
      coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                     .algorithm = CFG_ALGO_TREE,
                     .bytes = bytes[b],
                     .ranks = ranks,
                     .nranks = sizes[a],
                     .channels = 2 + (uint32_t)a,
                     .chunk = 1 << 17,
                     .protocol = b == 1 ? CFG_PROTO_LL128 : CFG_PROTO_NONE};
      coll_plan p;
      sim_error err = {0};
      if (coll_plan_build(&p, f.t, &s, &err) != SIM_OK) fail_msg("%s", err.msg);
      assert_true(p.nphases > 1);
      const be_xfer *pool;
      size_t pool_n, off;
      assert_true(coll_phase_slice(&p, 0, &pool, &pool_n, &off)); /* the window path runs */
      assert_int_equal(run_plan_estimate(&p, f.t, &f.cfg), brute(&p, f.t, &f.cfg));
      coll_plan_free(&p);
    }
  unload(&f);
}

static void test_pool_windows(void **state) {
  (void)state;
  const char *const sets[] = {"cluster.nodes=4"};
  fixture f;
  load(&f, sets, 1);
  enum { N = 600, PH = 200 };
  uint32_t ng = topo_gpu_count(f.t);
  be_xfer *pool = sim_malloc(N * sizeof *pool), own[3];
  coll_phase *ph = sim_calloc(PH, sizeof *ph);
  uint64_t r = 777;
  for (size_t i = 0; i < N; i++) {
    r = sim_hash_u64(r);
    pool[i] = (be_xfer){.src_gpu = (uint32_t)(r % (ng / 4)), /* few senders: long sums */
                        .dst_gpu = (uint32_t)((r >> 20) % ng),
                        .bytes = 1 + (r >> 32) % 10000019};
  }
  for (size_t k = 0; k < 3; k++) own[k] = pool[N - 1 - k];
  size_t lo = 0, hi = 0;
  for (size_t i = 0; i < PH; i++) {
    r = sim_hash_u64(r);
    switch (r % 5) {
    case 0: lo += (r >> 8) % 20, hi += (r >> 16) % 30; break;               /* slide */
    case 1: lo = (r >> 8) % N, hi = lo + (r >> 20) % 200; break;            /* jump */
    case 2: lo += (hi - lo) / 3; break;                                     /* shrink */
    case 3: hi = lo; break;                                                 /* empty */
    default: ph[i] = (coll_phase){.x = own, .n = 3, .repeat = 2}; continue; /* its own */
    }
    if (hi > N) hi = N;
    if (lo > hi) lo = hi;
    ph[i] =
        (coll_phase){.x = pool + lo, .n = hi - lo, .repeat = 1 + (r >> 40) % 3, .in_pool = true};
  }
  coll_plan p = {.phases = ph, .nphases = PH, .pool = pool, .pool_n = N};
  assert_int_equal(run_plan_estimate(&p, f.t, &f.cfg), brute(&p, f.t, &f.cfg));
  p.stagger = 3 * SIM_PS_PER_US;
  assert_int_equal(run_plan_estimate(&p, f.t, &f.cfg), brute(&p, f.t, &f.cfg));
  sim_free(ph);
  sim_free(pool);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_closed_form),
                                     cmocka_unit_test(test_tree_plans),
                                     cmocka_unit_test(test_pool_windows)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
