/* The capabilities of the backend interface (fabsim/backend.h, be_ops) answer
 * as documented, for every fidelity and through the telemetry tap:
 *   analytic, flow: no per-port telemetry (SIM_EINVAL), no parallel info
 *     (false), the gather a no-op; faults: flow has them, analytic not;
 *   packet: per-port telemetry, whose rows hold what the fabric carried
 *     (the utilization integrated over the rows is the wire bits of the
 *     transfer over the port's rate: the serialization time, closed form)
 *     and every watched port in every row; parallel info only on the
 *     parallel engine (sequential mode here: one rank, nothing crosses);
 *   the tap: exactly the capabilities of the backend it wraps, and the same
 *     answers (the same rows, byte for byte). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/backend.h"
#include "fabsim/tel_tap.h"
#include "fixture.h"

/* 16 hosts of one GPU and one NIC, radix-8 2-tier tree (4 leaves), RoCE.
 * The packet fidelity first: link rates are line rates (headers on the wire). */
static const char *const sets[] = {"simulation.fidelity=packet", "cluster.nodes=16",
                                   "cluster.gpus_per_node=1",    "cluster.nic.per_node=1",
                                   "fabric.switch_radix=8",      "fabric.transport=roce"};
enum { NSETS = sizeof sets / sizeof *sets };
static const uint64_t BYTES = 1000000;

enum { ANALYTIC, FLOW, PACKET };

static be_backend *make(const fixture *f, sim_ctx *sim, int fidelity) {
  return fidelity == ANALYTIC ? be_analytic_create(sim, f->t, &f->cfg)
         : fidelity == FLOW   ? be_flow_create(sim, f->t, &f->cfg)
                              : be_packet_create(sim, f->t, &f->cfg);
}

static void on_done(sim_ctx *sim, void *ctx) { *(simtime_ps *)ctx = sim_now(sim); }

/* One transfer gpu4 -> gpu0 (another leaf: through leaf0-nic0), to its end. */
static simtime_ps run_one(be_backend *b, sim_ctx *sim) {
  be_xfer x = {.src_gpu = 4, .dst_gpu = 0, .bytes = BYTES, .flow_hash = 1};
  simtime_ps end = SIM_TIME_MAX;
  be_submit_phase(b, &x, 1, 1, on_done, &end);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(end != SIM_TIME_MAX);
  return end;
}

/* No per-port telemetry and no parallel info: the wrappers say so, before
 * and after a run, directly and through the tap; NULL too. */
static void no_caps(const fixture *f, int fidelity, bool tap) {
  sim_ctx *sim = sim_create(1);
  be_backend *b = make(f, sim, fidelity);
  tel_tap *tp;
  if (tap) b = tel_tap_wrap(b, &tp);
  assert_null(b->ops->port_sampling);
  assert_null(b->ops->port_gather);
  assert_null(b->ops->port_samples);
  assert_null(b->ops->parallel_info);
  /* faults: as the fidelity (flow has them, analytic not), the tap the same */
  assert_int_equal(b->ops->link_state != NULL, fidelity == FLOW);
  assert_int_equal(b->ops->reroute != NULL, fidelity == FLOW);
  tel_portmap m;
  tel_portmap_build(&m, f->t);
  assert_int_equal(tel_port_sampling_start(b, &m, NULL, 0), SIM_EINVAL);
  be_port_spec spec = {.nports = m.nports, .channel_of_port = m.channel_of_port, .bps = m.bps};
  assert_int_equal(be_port_sampling_start(b, &spec), SIM_EINVAL);
  simtime_ps end = run_one(b, sim);
  be_port_samples_gather(b, end); /* a no-op */
  be_port_samples s;
  assert_int_equal(be_port_samples_get(b, end, &s), SIM_EINVAL);
  be_parallel_info pi = {.ranks = 77};
  assert_false(be_parallel_info_get(b, &pi));
  assert_int_equal(pi.ranks, 77); /* nothing filled */
  tel_portmap_free(&m);
  be_destroy(b);
  sim_destroy(sim);
}

static void test_analytic(void **state) {
  fixture *f = *state;
  no_caps(f, ANALYTIC, false);
  no_caps(f, ANALYTIC, true);
}

static void test_flow(void **state) {
  fixture *f = *state;
  no_caps(f, FLOW, false);
  no_caps(f, FLOW, true);
}

static void test_null(void **state) {
  (void)state;
  be_port_spec spec = {0};
  be_port_samples s;
  be_parallel_info pi;
  assert_int_equal(be_port_sampling_start(NULL, &spec), SIM_EINVAL);
  be_port_samples_gather(NULL, 0);
  assert_int_equal(be_port_samples_get(NULL, 0, &s), SIM_EINVAL);
  assert_false(be_parallel_info_get(NULL, &pi));
}

/* A copy of the rows (the view dies with the backend), to compare two runs. */
typedef struct rows {
  be_port_samples s; /* sizes only: its arrays are copied below */
  uint16_t *util;
  be_port_queue *q;
  uint32_t *qrow;
  size_t nq;
} rows;

/* The packet fidelity with per-port telemetry on m's ports, leaf0-nic0
 * watched; rows copied into r. */
static simtime_ps packet_rows(const fixture *f, const tel_portmap *m, uint32_t watch, bool tap,
                              rows *r) {
  sim_ctx *sim = sim_create(1);
  be_backend *b = make(f, sim, PACKET);
  tel_tap *tp;
  if (tap) b = tel_tap_wrap(b, &tp);
  assert_non_null(b->ops->port_sampling);
  assert_non_null(b->ops->link_state);
  be_port_samples s;
  assert_int_equal(be_port_samples_get(b, 0, &s), SIM_EINVAL); /* not started */
  assert_int_equal(tel_port_sampling_start(b, m, &watch, 1), SIM_OK);
  simtime_ps end = run_one(b, sim);
  be_port_samples_gather(b, end); /* sequential engine: a no-op */
  assert_int_equal(be_port_samples_get(b, end, &r->s), SIM_OK);
  be_parallel_info pi;
  assert_false(be_parallel_info_get(b, &pi)); /* not on the parallel engine */
  size_t cells = (size_t)r->s.nrows * r->s.nports;
  r->util = sim_malloc((cells ? cells : 1) * sizeof *r->util);
  memcpy(r->util, r->s.util, cells * sizeof *r->util);
  r->nq = r->s.qrow[r->s.nrows];
  r->q = sim_malloc((r->nq ? r->nq : 1) * sizeof *r->q);
  memcpy(r->q, r->s.queues, r->nq * sizeof *r->q);
  r->qrow = sim_malloc((r->s.nrows + 1) * sizeof *r->qrow);
  memcpy(r->qrow, r->s.qrow, (r->s.nrows + 1) * sizeof *r->qrow);
  r->s.util = r->s.paused = r->s.marks = NULL;
  r->s.queues = NULL;
  r->s.qrow = NULL;
  r->s.bps = NULL;
  be_destroy(b);
  sim_destroy(sim);
  return end;
}

static void test_packet_ports(void **state) {
  fixture *f = *state;
  tel_portmap m;
  tel_portmap_build(&m, f->t);
  uint32_t port;
  assert_int_equal(tel_port_find(f->t, &m, "leaf0-nic0", &port), SIM_OK);
  rows r, rt;
  simtime_ps end = packet_rows(f, &m, port, false, &r);
  assert_int_equal(r.s.nports, m.nports);
  assert_true(r.s.nrows >= 2);
  assert_true(r.s.interval >= SIM_PS_PER_US && r.s.interval % SIM_PS_PER_US == 0);
  assert_true((simtime_ps)(r.s.nrows - 1) * r.s.interval < end);
  /* the rows' busy time on leaf0-nic0 is the transfer's serialization,
   * payload plus per-packet headers (RoCE: 82 bytes with the preamble),
   * less at most a packet per row: a packet counts in the row where it
   * starts, and a row is at most fully busy */
  double busy = 0;
  for (uint32_t k = 0; k < r.s.nrows; k++) {
    simtime_ps st = (simtime_ps)k * r.s.interval, en = st + r.s.interval;
    if (en > end) en = end;
    busy += (double)r.util[(size_t)k * r.s.nports + port] / UINT16_MAX * (double)(en - st);
  }
  double ps_per_byte = 8.0 / (double)m.bps[port] * 1e12, mtu = f->cfg.fabric.mtu;
  double wire_ps = (double)BYTES * (mtu + 82) / mtu * ps_per_byte;
  double packet_ps = (mtu + 82) * ps_per_byte;
  printf("  leaf0-nic0 busy %.3f us, wire time %.3f us, %u rows of %.0f ns\n", busy / 1e6,
         wire_ps / 1e6, r.s.nrows, (double)r.s.interval / 1e3);
  assert_true(busy <= wire_ps * 1.001);
  assert_true(busy >= wire_ps - r.s.nrows * packet_ps);
  /* the watched port is in every row's queues; each row deepest first
   * (ties by port), ports in range */
  for (uint32_t k = 0; k < r.s.nrows; k++) {
    bool seen = false;
    for (uint32_t i = r.qrow[k]; i < r.qrow[k + 1]; i++) {
      assert_true(r.q[i].port < r.s.nports);
      if (i > r.qrow[k])
        assert_true(r.q[i - 1].bytes > r.q[i].bytes ||
                    (r.q[i - 1].bytes == r.q[i].bytes && r.q[i - 1].port < r.q[i].port));
      seen |= r.q[i].port == port;
    }
    if (!seen)
      fail_msg("row %u of %u: leaf0-nic0 not among its %u queues", k, r.s.nrows,
               r.qrow[k + 1] - r.qrow[k]);
  }
  /* through the tap: the same rows */
  assert_int_equal(packet_rows(f, &m, port, true, &rt), end);
  assert_int_equal(rt.s.nrows, r.s.nrows);
  assert_int_equal(rt.s.interval, r.s.interval);
  assert_int_equal(rt.nq, r.nq);
  assert_memory_equal(rt.util, r.util, (size_t)r.s.nrows * r.s.nports * sizeof *r.util);
  assert_memory_equal(rt.q, r.q, r.nq * sizeof *r.q);
  assert_memory_equal(rt.qrow, r.qrow, (r.s.nrows + 1) * sizeof *r.qrow);
  sim_free(r.util);
  sim_free(r.q);
  sim_free(r.qrow);
  sim_free(rt.util);
  sim_free(rt.q);
  sim_free(rt.qrow);
  tel_portmap_free(&m);
}

/* The packet fidelity on the parallel engine's sequential mode (the factory
 * picks it for simulation.engine=parallel): one rank, so no link is cut and
 * no event crosses; the events are the engine's (its busiest rank's too). */
static void test_packet_parallel_info(void **state) {
  (void)state;
  const char *psets[NSETS + 1];
  memcpy(psets, sets, sizeof sets);
  psets[NSETS] = "simulation.engine=parallel";
  fixture f;
  load(&f, psets, NSETS + 1);
  assert_true(be_packet_parallel(&f.cfg));
  for (int tap = 0; tap < 2; tap++) {
    sim_ctx *sim = sim_create(1);
    be_backend *b;
    sim_error err = {0};
    assert_int_equal(be_create(&b, sim, f.t, &f.cfg, f.doc, &err), SIM_OK);
    tel_tap *tp;
    if (tap) b = tel_tap_wrap(b, &tp);
    run_one(b, sim);
    be_stats st;
    b->ops->stats(b, &st); /* a collective on this engine, as the CLI calls it */
    be_parallel_info pi;
    assert_true(be_parallel_info_get(b, &pi));
    assert_int_equal(pi.ranks, 1);
    assert_non_null(pi.scheme);
    assert_int_equal(pi.cut_links, 0);
    assert_true(pi.events > 0);
    assert_int_equal(pi.events_max, pi.events);
    assert_int_equal(pi.sent_remote, 0);
    assert_true(pi.crossing_frac == 0);
    assert_true(pi.windows > 0);
    be_destroy(b);
    sim_destroy(sim);
  }
  unload(&f);
}

static int setup(void **state) {
  fixture *f = sim_malloc(sizeof *f);
  load(f, sets, NSETS);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  unload(*state);
  sim_free(*state);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_analytic),
      cmocka_unit_test(test_flow),
      cmocka_unit_test(test_null),
      cmocka_unit_test(test_packet_ports),
      cmocka_unit_test(test_packet_parallel_info),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
