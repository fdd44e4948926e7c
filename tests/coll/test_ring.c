/* Ring collectives on the analytic backend against their closed forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/coll.h"

typedef struct fixture {
  cfg_scenario cfg;
  cfg_doc *doc;
  topo *t;
} fixture;

static void load(fixture *f, const char *const *sets, int nsets) {
  sim_error err = {0};
  int rc = cfg_load(&f->cfg, &f->doc, NULL, sets, nsets, &err);
  if (rc) fail_msg("%s", err.msg);
  rc = topo_build(&f->t, &f->cfg, f->doc, &err);
  if (rc) fail_msg("%s", err.msg);
}

/* A link's rate in the topology: line rate x its class's efficiency. */
static rate_bps fx_achievable(rate_bps line, double efficiency) {
  return efficiency >= 1.0 ? line : (rate_bps)((double)line * efficiency + 0.5);
}

static void unload(fixture *f) {
  topo_free(f->t);
  cfg_free(&f->cfg, f->doc);
}

/* Run one collective over the first n GPUs; returns seconds. */
static double run_coll(fixture *f, cfg_coll_op op, uint64_t bytes, uint32_t n, uint32_t channels,
                       coll_result *res) {
  uint32_t ranks[64];
  assert_true(n <= 64);
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  coll_spec spec = {.op = op,
                    .algorithm = op == CFG_COLL_ALLTOALL ? CFG_ALGO_PAIRWISE : CFG_ALGO_RING,
                    .bytes = bytes,
                    .ranks = ranks,
                    .nranks = n,
                    .channels = channels,
                    .chunk = 1 << 20};
  coll_plan plan;
  sim_error err = {0};
  assert_int_equal(coll_plan_build(&plan, f->t, &spec, &err), SIM_OK);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_analytic_create(sim, f->t, &f->cfg);
  coll_exec e;
  coll_exec_start(&e, b, &plan, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(e.finished);
  coll_result r;
  coll_result_of(&e, &r);
  if (res) *res = r;
  be_stats st;
  b->ops->stats(b, &st);
  assert_int_equal(st.transfers, coll_plan_transfers(&plan));
  be_destroy(b);
  sim_destroy(sim);
  coll_plan_free(&plan);
  return r.time_s;
}

/* Simulated time is whole picoseconds, rounded up per transfer: allow one
 * picosecond per step on top of a relative tolerance. */
static void assert_close_steps(double got, double want, double steps) {
  if (fabs(got - want) > 1e-12 * fabs(want) + steps * 1e-12)
    fail_msg("got %.15g, want %.15g", got, want);
}
static void assert_close(double got, double want, double rel) {
  if (fabs(got - want) > rel * fabs(want))
    fail_msg("got %.15g, want %.15g (rel %.3g)", got, want, rel);
}

/* One node: ring over NVLink. t = 2(n-1) (alpha + S / (n B)), any channel count. */
static void test_allreduce_one_node(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  double B =
      (double)fx_achievable(f.cfg.cluster.scale_up.bandwidth, f.cfg.cluster.scale_up.efficiency) /
      8; /* bytes/s */
  double alpha = sim_ps_to_s(f.cfg.cluster.scale_up.latency);
  uint64_t S = 1ull << 30;
  for (uint32_t k = 1; k <= 8; k *= 2) {
    coll_result r;
    double t = run_coll(&f, CFG_COLL_ALLREDUCE, S, 8, k, &r);
    assert_close_steps(t, 14 * (alpha + (double)S / (8 * B)), 14);
    assert_close(r.algbw_GBps, (double)S / t / 1e9, 1e-12);
    assert_close(r.busbw_GBps, r.algbw_GBps * 2 * 7 / 8, 1e-12);
  }
  /* ReduceScatter and AllGather: n-1 steps of S/n. */
  double t_rs = run_coll(&f, CFG_COLL_REDUCESCATTER, S, 8, 4, NULL);
  double t_ag = run_coll(&f, CFG_COLL_ALLGATHER, S, 8, 4, NULL);
  assert_close_steps(t_rs, 7 * (alpha + (double)S / (8 * B)), 7);
  assert_close(t_ag, t_rs, 1e-12);
  /* Fewer ranks in the node: n = 4. */
  assert_close_steps(run_coll(&f, CFG_COLL_ALLREDUCE, S, 4, 2, NULL),
                     6 * (alpha + (double)S / (4 * B)), 6);
  unload(&f);
}

/* Two nodes on one leaf: each of the k rings crosses the network twice, each
 * crossing on its own NIC pair; the NIC (400 Gb/s) is the bottleneck. */
static void test_allreduce_two_nodes(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  const cfg_scenario *c = &f.cfg;
  double nic = (double)fx_achievable(c->cluster.nic.bandwidth, c->cluster.nic.efficiency) / 8;
  double alpha = sim_ps_to_s(2 * c->cluster.pcie.latency + 2 * c->cluster.nic.latency +
                             2 * c->fabric.link_latency + c->fabric.switch_latency);
  uint64_t S = 1ull << 30;
  uint32_t n = 16, k = 8;
  coll_result r;
  double t = run_coll(&f, CFG_COLL_ALLREDUCE, S, n, k, &r);
  double step = alpha + (double)S / (n * k) / nic;
  assert_close_steps(t, 2 * (n - 1) * step, 30);
  assert_close(r.busbw_GBps, 2.0 * (n - 1) / n * (double)S / t / 1e9, 1e-12);
  /* One channel: one NIC pair carries everything, k times slower in bytes. */
  double t1 = run_coll(&f, CFG_COLL_ALLREDUCE, S, n, 1, NULL);
  assert_close_steps(t1, 2 * (n - 1) * (alpha + (double)S / n / nic), 30);
  unload(&f);
}

/* Pairwise all-to-all in one node: n-1 phases, each GPU sending S/n. */
static void test_alltoall_one_node(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  double B =
      (double)fx_achievable(f.cfg.cluster.scale_up.bandwidth, f.cfg.cluster.scale_up.efficiency) /
      8;
  double alpha = sim_ps_to_s(f.cfg.cluster.scale_up.latency);
  uint64_t S = 64ull << 20;
  coll_result r;
  double t = run_coll(&f, CFG_COLL_ALLTOALL, S, 8, 1, &r);
  assert_close_steps(t, 7 * (alpha + (double)S / 8 / B), 7);
  assert_close(r.busbw_GBps, r.algbw_GBps * 7 / 8, 1e-12);
  unload(&f);
}

/* Pipelined broadcast down a chain: (n-1 + C-1) steps of one chunk. */
static void test_broadcast_pipeline(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  double B =
      (double)fx_achievable(f.cfg.cluster.scale_up.bandwidth, f.cfg.cluster.scale_up.efficiency) /
      8;
  double alpha = sim_ps_to_s(f.cfg.cluster.scale_up.latency);
  uint64_t S = 16ull << 20; /* 16 chunks of 1 MiB */
  coll_result r;
  double t = run_coll(&f, CFG_COLL_BROADCAST, S, 8, 1, &r);
  assert_close_steps(t, (7 + 16 - 1) * (alpha + (double)(1 << 20) / B), 22);
  assert_close(r.busbw_GBps, r.algbw_GBps, 1e-12);
  unload(&f);
}

/* Link sharing by counting: two transfers over one channel each get half. */
static void done_count(sim_ctx *sim, void *ctx) {
  (void)sim;
  (*(int *)ctx)++;
}

static void test_analytic_sharing(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_analytic_create(sim, f.t, &f.cfg);
  be_xfer one[1] = {{.src_gpu = 0, .dst_gpu = 1, .bytes = 1 << 20}};
  be_xfer two[2] = {{.src_gpu = 0, .dst_gpu = 1, .bytes = 1 << 20},
                    {.src_gpu = 0, .dst_gpu = 2, .bytes = 1 << 20}};
  int done = 0;
  be_submit_phase(b, one, 1, 1, done_count, &done);
  ev_run(sim, SIM_TIME_MAX);
  simtime_ps t_one = sim_now(sim);
  be_submit_phase(b, two, 2, 3, done_count, &done);
  ev_run(sim, SIM_TIME_MAX);
  simtime_ps t_two = sim_now(sim) - t_one;
  assert_int_equal(done, 2);
  simtime_ps alpha = f.cfg.cluster.scale_up.latency;
  rate_bps bw = fx_achievable(f.cfg.cluster.scale_up.bandwidth, f.cfg.cluster.scale_up.efficiency);
  assert_int_equal(t_one, alpha + sim_serialization_ps(1 << 20, bw));
  assert_int_equal(t_two, 3 * (alpha + sim_serialization_ps(1 << 20, bw / 2)));
  be_stats st;
  b->ops->stats(b, &st);
  assert_int_equal(st.transfers, 7);
  assert_int_equal(st.bytes, 7u << 20);
  assert_int_equal(st.max_link_sharing, 2);
  be_destroy(b);
  sim_destroy(sim);
  unload(&f);
}

static void test_bad_specs(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[] = {0, 2, 1};
  coll_plan p;
  sim_error err = {0};
  coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                 .algorithm = CFG_ALGO_PAIRWISE,
                 .bytes = 8,
                 .ranks = ranks,
                 .nranks = 2,
                 .channels = 1,
                 .chunk = 1};
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "pairwise"));
  s.algorithm = CFG_ALGO_RING;
  s.nranks = 3;
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "ascending"));
  /* One rank or no bytes: nothing moves, zero time. */
  s.nranks = 1;
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_OK);
  assert_int_equal(p.nphases, 0);
  coll_plan_free(&p);
  assert_true(coll_busbw_factor(CFG_COLL_ALLREDUCE, 1) == 0.0);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_allreduce_one_node), cmocka_unit_test(test_allreduce_two_nodes),
      cmocka_unit_test(test_alltoall_one_node),  cmocka_unit_test(test_broadcast_pipeline),
      cmocka_unit_test(test_analytic_sharing),   cmocka_unit_test(test_bad_specs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
