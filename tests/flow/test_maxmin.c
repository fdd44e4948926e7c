/* Flow fidelity against max-min closed forms: one flow alone, k flows on one
 * channel, a two-bottleneck (parking-lot) case where a flow that ends early
 * lets another speed up. Completion times are checked in picoseconds, within
 * one picosecond per rate change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fabsim/backend.h"
#include "fixture.h"

typedef struct rec {
  simtime_ps at;
  int fired;
} rec;

static void rec_done(sim_ctx *sim, void *ctx) {
  rec *r = ctx;
  r->at = sim_now(sim);
  r->fired++;
}

/* Submit each transfer as its own phase at time 0, run, record completions. */
static void run_each(const fixture *f, const be_xfer *x, size_t n, rec *out, be_stats *st) {
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_flow_create(sim, f->t, &f->cfg);
  memset(out, 0, n * sizeof *out);
  for (size_t i = 0; i < n; i++) be_submit_phase(b, &x[i], 1, 1, rec_done, &out[i]);
  ev_run(sim, SIM_TIME_MAX);
  for (size_t i = 0; i < n; i++) assert_int_equal(out[i].fired, 1);
  if (st) b->ops->stats(b, st);
  be_destroy(b);
  sim_destroy(sim);
}

static simtime_ps path_latency(const fixture *f, uint32_t src, uint32_t dst, uint64_t hash) {
  topo_path p;
  assert_int_equal(topo_route(f->t, src, dst, hash, &p), SIM_OK);
  return topo_path_latency(f->t, &p);
}

static rate_bps path_bottleneck(const fixture *f, uint32_t src, uint32_t dst, uint64_t hash) {
  topo_path p;
  assert_int_equal(topo_route(f->t, src, dst, hash, &p), SIM_OK);
  return topo_path_bottleneck(f->t, &p);
}

/* ceil(bytes * 8 * k / bps) picoseconds: bytes at bps / k. */
static simtime_ps ser_share(uint64_t bytes, rate_bps bps, uint64_t k) {
  unsigned __int128 num = (unsigned __int128)bytes * 8u * SIM_PS_PER_S * k;
  return (simtime_ps)((num + bps - 1) / bps);
}

static void assert_ps_near(simtime_ps got, simtime_ps want, simtime_ps tol) {
  simtime_ps d = got > want ? got - want : want - got;
  if (d > tol)
    fail_msg("got %llu ps, want %llu ps (+-%llu)", (unsigned long long)got,
             (unsigned long long)want, (unsigned long long)tol);
}

/* One flow alone gets its path bottleneck: latency + bytes / bottleneck, exactly. */
static void test_alone(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  uint64_t S = 3u << 20;
  const uint32_t pairs[][2] = {{0, 1}, {0, 8}, {3, 12}};
  for (size_t i = 0; i < 3; i++) {
    be_xfer x = {.src_gpu = pairs[i][0], .dst_gpu = pairs[i][1], .bytes = S, .flow_hash = 7};
    rec r;
    be_stats st;
    run_each(&f, &x, 1, &r, &st);
    simtime_ps want = path_latency(&f, x.src_gpu, x.dst_gpu, 7) +
                      sim_serialization_ps(S, path_bottleneck(&f, x.src_gpu, x.dst_gpu, 7));
    assert_int_equal(r.at, want);
    assert_int_equal(st.transfers, 1);
    assert_int_equal(st.bytes, S);
    assert_int_equal(st.max_link_sharing, 1);
  }
  unload(&f);
}

/* k flows leaving GPU0 share its uplink to the scale-up switch: 1/k each. */
static void test_k_share(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  rate_bps W = fx_achievable(f.cfg.cluster.scale_up.bandwidth, f.cfg.cluster.scale_up.efficiency);
  simtime_ps lat = path_latency(&f, 0, 1, 0);
  uint64_t S = 1u << 20;
  for (uint32_t k = 1; k <= 7; k++) {
    be_xfer x[7];
    rec r[7];
    for (uint32_t i = 0; i < k; i++) x[i] = (be_xfer){.src_gpu = 0, .dst_gpu = 1 + i, .bytes = S};
    be_stats st;
    run_each(&f, x, k, r, &st);
    for (uint32_t i = 0; i < k; i++) assert_ps_near(r[i].at, lat + ser_share(S, W, k), 1);
    assert_int_equal(st.max_link_sharing, k);
    assert_int_equal(st.transfers, k);
  }
  unload(&f);
}

/* The two directions of a link are separate channels: 0->1 and 1->0 both
 * run at full rate; 0->1 and 2->1 share GPU1's downlink. */
static void test_directions(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  rate_bps W = fx_achievable(f.cfg.cluster.scale_up.bandwidth, f.cfg.cluster.scale_up.efficiency);
  simtime_ps lat = path_latency(&f, 0, 1, 0);
  uint64_t S = 1u << 20;
  be_xfer opposite[2] = {{.src_gpu = 0, .dst_gpu = 1, .bytes = S},
                         {.src_gpu = 1, .dst_gpu = 0, .bytes = S}};
  be_xfer into[2] = {{.src_gpu = 0, .dst_gpu = 1, .bytes = S},
                     {.src_gpu = 2, .dst_gpu = 1, .bytes = S}};
  rec r[2];
  be_stats st;
  run_each(&f, opposite, 2, r, &st);
  assert_int_equal(r[0].at, lat + sim_serialization_ps(S, W));
  assert_int_equal(r[1].at, lat + sim_serialization_ps(S, W));
  assert_int_equal(st.max_link_sharing, 1);
  run_each(&f, into, 2, r, &st);
  assert_ps_near(r[0].at, lat + ser_share(S, W, 2), 1);
  assert_ps_near(r[1].at, lat + ser_share(S, W, 2), 1);
  assert_int_equal(st.max_link_sharing, 2);
  unload(&f);
}

/* Two bottlenecks. A: 0->1 (S), B: 0->2 (3S), C: 3->2 (S), D: 4->2 (S).
 * GPU2's downlink carries B, C, D: W/3 each. GPU0's uplink carries A and B;
 * B is limited elsewhere, so A takes the remainder 2W/3 and ends at 1.5u
 * (u = S at W). C and D end at 3u; B, having drained S, is then alone and
 * drains its last 2S at W: 5u. */
static void test_parking_lot(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  rate_bps W = fx_achievable(f.cfg.cluster.scale_up.bandwidth, f.cfg.cluster.scale_up.efficiency);
  simtime_ps lat = path_latency(&f, 0, 1, 0);
  uint64_t S = 9u << 17;
  simtime_ps u = ser_share(S, W, 1);
  be_xfer x[4] = {{.src_gpu = 0, .dst_gpu = 1, .bytes = S},
                  {.src_gpu = 0, .dst_gpu = 2, .bytes = 3 * S},
                  {.src_gpu = 3, .dst_gpu = 2, .bytes = S},
                  {.src_gpu = 4, .dst_gpu = 2, .bytes = S}};
  rec r[4];
  be_stats st;
  run_each(&f, x, 4, r, &st);
  /* u is rounded up to a picosecond and the flow fidelity rounds each rate
   * segment's drain time: a few ps over a flow's rate changes (the 3 u of
   * the closed forms carry u's rounding three times) */
  assert_ps_near(r[0].at, lat + u * 3 / 2, 3);
  assert_ps_near(r[1].at, lat + 5 * u, 5);
  assert_ps_near(r[2].at, lat + 3 * u, 3);
  assert_ps_near(r[3].at, lat + 3 * u, 3);
  assert_int_equal(st.max_link_sharing, 3);
  assert_int_equal(st.bytes, 6 * S);

  /* The same four as one phase: it ends with B. */
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_flow_create(sim, f.t, &f.cfg);
  rec one = {0};
  be_submit_phase(b, x, 4, 1, rec_done, &one);
  ev_run(sim, SIM_TIME_MAX);
  assert_int_equal(one.fired, 1);
  assert_int_equal(one.at, r[1].at);
  be_destroy(b);
  sim_destroy(sim);
  unload(&f);
}

/* Across the fabric: two flows into GPU8 share leaf->nic8 (400 Gb/s): half
 * each; when one (half the bytes) ends, the other gets the whole NIC. */
static void test_fabric_share(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  rate_bps nic = fx_achievable(f.cfg.cluster.nic.bandwidth, f.cfg.cluster.nic.efficiency);
  uint64_t S = 1u << 22;
  be_xfer x[2] = {{.src_gpu = 0, .dst_gpu = 8, .bytes = S, .flow_hash = 1},
                  {.src_gpu = 1, .dst_gpu = 8, .bytes = 2 * S, .flow_hash = 2}};
  assert_int_equal(path_bottleneck(&f, 0, 8, 1), nic);
  rec r[2];
  run_each(&f, x, 2, r, NULL);
  simtime_ps u = ser_share(S, nic, 1);
  assert_ps_near(r[0].at, path_latency(&f, 0, 8, 1) + 2 * u, 1);
  assert_ps_near(r[1].at, path_latency(&f, 1, 8, 2) + 3 * u, 2);
  unload(&f);
}

/* src == dst and zero bytes finish at once (zero bytes after the latency);
 * an empty phase and repeat = 0 complete immediately. */
static void test_degenerate(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  be_xfer x[3] = {{.src_gpu = 2, .dst_gpu = 2, .bytes = 1 << 20},
                  {.src_gpu = 2, .dst_gpu = 3, .bytes = 0},
                  {.src_gpu = 4, .dst_gpu = 4, .bytes = 0}};
  rec r[3];
  be_stats st;
  run_each(&f, x, 3, r, &st);
  assert_int_equal(r[0].at, 0);
  assert_int_equal(r[1].at, path_latency(&f, 2, 3, 0));
  assert_int_equal(r[2].at, 0);
  assert_int_equal(st.transfers, 3);
  assert_int_equal(st.max_link_sharing, 0);

  sim_ctx *sim = sim_create(1);
  be_backend *b = be_flow_create(sim, f.t, &f.cfg);
  rec a = {0}, c = {0}, d = {0};
  be_submit_phase(b, NULL, 0, 5, rec_done, &a);
  be_submit_phase(b, x, 1, 0, rec_done, &c);
  be_submit_phase(b, x, 1, 1000, rec_done, &d); /* local transfer, 1000 times */
  ev_run(sim, SIM_TIME_MAX);
  assert_int_equal(a.fired + c.fired + d.fired, 3);
  assert_int_equal(a.at + c.at + d.at, 0);
  b->ops->stats(b, &st);
  assert_int_equal(st.transfers, 1000);
  be_destroy(b);
  sim_destroy(sim);
  unload(&f);
}

/* simulation.fidelity=flow selects this backend. */
static void test_be_create(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1", "simulation.fidelity=flow"};
  fixture f;
  load(&f, sets, 2);
  sim_ctx *sim = sim_create(1);
  be_backend *b = NULL;
  sim_error err = {0};
  assert_int_equal(be_create(&b, sim, f.t, &f.cfg, f.doc, &err), SIM_OK);
  assert_string_equal(b->ops->name, "flow");
  be_destroy(b);
  sim_destroy(sim);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_alone),        cmocka_unit_test(test_k_share),
      cmocka_unit_test(test_directions),   cmocka_unit_test(test_parking_lot),
      cmocka_unit_test(test_fabric_share), cmocka_unit_test(test_degenerate),
      cmocka_unit_test(test_be_create),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
