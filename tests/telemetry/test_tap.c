/* Telemetry tap: results unchanged by the tap; the replay puts every byte of
 * a phase on the NICs and switch ports of its routed paths, over the phase's
 * time; GPU states follow the phases; port names round-trip; a flow moved
 * by a reroute leaves its old path's ports when the link fails and its
 * bytes after that are on its new path's (issue 27, defect 7); phases that
 * repeat keep their channels and GPUs once (issue 27, defect 3). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fabsim/tel_tap.h"
#include "fixture.h"
#include "telemetry/tap_internal.h"

static const char *const sets[] = {"cluster.nodes=4"};

static simtime_ps run_plan(fixture *f, bool tap, tel_tap **tp, be_backend **keep, sim_ctx **simp,
                           const be_xfer *x, size_t n, uint64_t repeat) {
  sim_ctx *sim = sim_create(1);
  be_backend *be = be_analytic_create(sim, f->t, &f->cfg);
  if (tap) be = tel_tap_wrap(be, tp);
  coll_plan plan = {0};
  coll_phase ph = {.x = (be_xfer *)x, .n = n, .repeat = repeat};
  plan.phases = &ph;
  plan.nphases = 1;
  plan.nranks = 2;
  coll_exec e;
  coll_exec_start(&e, be, &plan, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(e.finished);
  *keep = be;
  *simp = sim;
  return e.end - e.start;
}

/* The tap's log replayed into a tel of `interval` over [0, end) (ports of
 * pm, the watched ones too); finished. */
static tel *replayed(const fixture *f, tel_tap *tap, const tel_portmap *pm, simtime_ps interval,
                     simtime_ps end, const uint32_t *watch, uint32_t nwatch) {
  tel *t = NULL;
  tel_config c = {.interval = interval,
                  .gpus = topo_gpu_count(f->t),
                  .nics = topo_nic_count(f->t),
                  .ports = pm->nports,
                  .nic_bps = f->cfg.cluster.nic.bandwidth,
                  .port_bps = pm->bps,
                  .watch_ports = watch,
                  .nwatch_ports = nwatch};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  tel_tap_replay(tap, t, pm, TEL_TAP_GPUS);
  tel_finish(t, end);
  return t;
}

static void test_replay_puts_bytes_on_paths(void **state) {
  (void)state;
  fixture f;
  load(&f, sets, 1);
  uint32_t last = topo_gpu_count(f.t) - 1;
  be_xfer x[2] = {{.src_gpu = 0, .dst_gpu = last, .bytes = 1000000, .flow_hash = 7},
                  {.src_gpu = 1, .dst_gpu = 2, .bytes = 500000, .flow_hash = 9}}; /* same node */
  tel_tap *tap = NULL;
  be_backend *plain, *tapped;
  sim_ctx *s1, *s2;
  simtime_ps t_plain = run_plan(&f, false, NULL, &plain, &s1, x, 2, 3);
  simtime_ps t_tap = run_plan(&f, true, &tap, &tapped, &s2, x, 2, 3);
  assert_int_equal(t_plain, t_tap); /* the tap changes nothing */

  tel_portmap pm;
  tel_portmap_build(&pm, f.t);
  tel *t = replayed(&f, tap, &pm, t_tap / 7 + 1, t_tap, NULL, 0);
  tel_totals tot;
  tel_totals_get(t, &tot);
  /* one NIC sends and one receives the cross-node transfer, 3 times; rates are
   * whole bit/s, so allow a byte per second of phase */
  assert_true(fabs(tot.nic_bytes[TEL_TX] - 3e6) < 1);
  assert_true(fabs(tot.nic_bytes[TEL_RX] - 3e6) < 1);
  topo_path p;
  topo_route(f.t, 0, last, 7, &p);
  uint32_t switch_hops = 0;
  for (uint32_t i = 0; i < p.n; i++) switch_hops += pm.port_of_channel[p.ch[i]] != UINT32_MAX;
  assert_true(switch_hops >= 1);
  assert_true(fabs(tot.port_bytes - 3e6 * switch_hops) < switch_hops);
  /* GPUs 0, 1, 2 and the last wait on the network for the whole phase */
  double share = 4.0 / topo_gpu_count(f.t);
  assert_true(fabs(tot.gpu_frac[TEL_GPU_NETWORK] - share) < 1e-9);
  /* the hottest port carries the transfer; its name parses back */
  tel_port_total top[1];
  assert_int_equal(tel_top_ports(t, top, 1), 1);
  char name[96];
  uint32_t back;
  tel_port_name(f.t, &pm, top[0].port, name, sizeof name);
  assert_int_equal(tel_port_find(f.t, &pm, name, &back), SIM_OK);
  assert_int_equal(back, top[0].port);
  assert_int_equal(tel_port_find(f.t, &pm, "leaf0-leaf1", &back), SIM_ENOENT);
  assert_int_equal(tel_port_find(f.t, &pm, "nic0-leaf0", &back), SIM_ENOENT); /* a NIC's port */
  tel_destroy(t);
  tel_portmap_free(&pm);
  be_destroy(plain);
  be_destroy(tapped);
  sim_destroy(s1);
  sim_destroy(s2);
  unload(&f);
}

/* The first channel of gpu 0 -> dst between two switches (a leaf's uplink). */
static uint32_t uplink(const topo *t, const topo_health *h, uint32_t dst, uint64_t hash) {
  topo_path p;
  assert_int_equal(topo_route_health(t, h, 0, dst, hash, &p), SIM_OK);
  for (uint32_t j = 0; j < p.n; j++)
    if (topo_vertex_at(t, topo_channel_src(t, p.ch[j]))->kind == TOPO_SWITCH &&
        topo_vertex_at(t, topo_channel_dst(t, p.ch[j]))->kind == TOPO_SWITCH)
      return p.ch[j];
  fail_msg("no uplink on the path");
  return 0;
}

typedef struct cut {
  be_backend *be;
  uint32_t link;
  topo_health *h;
} cut;

static void on_cut(sim_ctx *sim, void *obj, uint64_t arg) { /* down and rerouted at once */
  cut *c = obj;
  (void)sim, (void)arg;
  c->be->ops->link_state(c->be, c->link, 0.0, 0.0);
  c->be->ops->reroute(c->be, c->h);
}

static void test_reroute_splits_ports(void **state) {
  (void)state;
  static const char *const two_tier[] = {"cluster.nodes=4", "cluster.gpus_per_node=1",
                                         "fabric.switch_radix=4", "simulation.fidelity=flow"};
  fixture f;
  load(&f, two_tier, 4);
  uint32_t last = topo_gpu_count(f.t) - 1;
  be_xfer x = {.src_gpu = 0, .dst_gpu = last, .bytes = 100000000, .flow_hash = 7};
  simtime_ps alone = fx_phase_end(&f, &x, 1, 1, NULL);
  uint32_t old = uplink(f.t, NULL, last, 7);
  topo_health h;
  assert_int_equal(topo_health_init(&h, f.t), SIM_OK);
  topo_health_set_link(&h, topo_channel_link(old), false);
  uint32_t moved = uplink(f.t, &h, last, 7);
  assert_int_not_equal(moved, old);

  sim_ctx *sim = sim_create(1);
  tel_tap *tap = NULL;
  be_backend *be = tel_tap_wrap(be_flow_create(sim, f.t, &f.cfg), &tap);
  simtime_ps t1 = alone / 2 / SIM_PS_PER_NS * SIM_PS_PER_NS, end = SIM_TIME_MAX;
  cut c = {.be = be, .link = topo_channel_link(old), .h = &h};
  be_submit_phase(be, &x, 1, 1, fx__on_done, &end);
  ev_schedule(sim, t1, on_cut, &c, 0);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(end != SIM_TIME_MAX && end > t1);

  tel_portmap pm;
  tel_portmap_build(&pm, f.t);
  uint32_t watch[2] = {pm.port_of_channel[old], pm.port_of_channel[moved]};
  tel *t = replayed(&f, tap, &pm, t1, end, watch, 2);
  /* alone on its path the flow drains at the path's bottleneck from 0: by
   * t1 the old uplink carried bps x t1 of it, the new one the rest, after */
  double bps = 0;
  topo_path p;
  topo_route(f.t, 0, last, 7, &p);
  for (uint32_t j = 0; j < p.n; j++) {
    double r = (double)topo_channel_bps(f.t, p.ch[j]);
    if (bps == 0 || r < bps) bps = r;
  }
  double before = bps * sim_ps_to_s(t1) / 8;
  tel_port_total top[64];
  size_t n = tel_top_ports(t, top, 64);
  double on_old = -1, on_new = -1;
  for (size_t k = 0; k < n; k++) {
    if (top[k].port == watch[0]) on_old = top[k].bytes;
    if (top[k].port == watch[1]) on_new = top[k].bytes;
  }
  assert_true(fabs(on_old - before) < 2);
  assert_true(fabs(on_new - (1e8 - before)) < 2);
  assert_true(tel_rows(t) >= 2);
  assert_true(fabs(tel_watch_row_at(t, 0, 0)->gbps[0] - bps / 1e9) < 1e-6);
  assert_true(tel_watch_row_at(t, 0, 1)->gbps[0] == 0);
  for (size_t r = 1; r < tel_rows(t); r++) assert_true(tel_watch_row_at(t, r, 0)->gbps[0] == 0);
  assert_false(tel_over_line(t, NULL));
  tel_destroy(t);
  tel_portmap_free(&pm);
  topo_health_free(&h);
  be_destroy(be);
  sim_destroy(sim);
  unload(&f);
}

typedef struct again {
  be_backend *be;
  const be_xfer *x;
  size_t n, left;
} again;

static void submit_again(sim_ctx *sim, void *ctx) {
  again *a = ctx;
  (void)sim;
  if (a->left == 0) return;
  a->left--;
  be_submit_phase(a->be, a->x, a->n, 2, submit_again, a);
}

/* A training run submits the same phases step after step: the tap's log
 * holds each list of channels and GPUs once, so its memory per phase is
 * its times, not its paths again (3.4 MB a step of examples/dense-7b-64gpu
 * before). The series are those of the same phases logged apart. */
static void test_repeated_phases_held_once(void **state) {
  (void)state;
  fixture f;
  load(&f, sets, 1);
  uint32_t last = topo_gpu_count(f.t) - 1;
  be_xfer x[3] = {{.src_gpu = 0, .dst_gpu = last, .bytes = 1000000, .flow_hash = 7},
                  {.src_gpu = 1, .dst_gpu = last - 1, .bytes = 1000000, .flow_hash = 3},
                  {.src_gpu = 2, .dst_gpu = 3, .bytes = 500000, .flow_hash = 9}};
  sim_ctx *sim = sim_create(1);
  tel_tap *tap = NULL;
  be_backend *be = tel_tap_wrap(be_analytic_create(sim, f.t, &f.cfg), &tap);
  again a = {.be = be, .x = x, .n = 3, .left = 1};
  submit_again(sim, &a);
  ev_run(sim, SIM_TIME_MAX);
  size_t nent = tap->nent, ngpus = tap->ngpus, one = sim_now(sim);
  assert_true(nent > 0 && ngpus == 6);
  a.left = 500;
  submit_again(sim, &a);
  ev_run(sim, SIM_TIME_MAX);
  assert_int_equal(tap->nph, 501);
  assert_int_equal(tap->nent, nent); /* once, not 501 times */
  assert_int_equal(tap->ngpus, ngpus);
  simtime_ps end = sim_now(sim);
  assert_int_equal(end, 501 * one);
  tel_portmap pm;
  tel_portmap_build(&pm, f.t);
  tel *t = replayed(&f, tap, &pm, end / 50 + 1, end, NULL, 0);
  tel_totals tot;
  tel_totals_get(t, &tot); /* every phase's bytes, twice each (repeat 2) */
  assert_true(fabs(tot.nic_bytes[TEL_TX] - 501 * 2 * 2e6) < 501);
  tel_destroy(t);
  tel_portmap_free(&pm);
  be_destroy(be);
  sim_destroy(sim);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_replay_puts_bytes_on_paths),
                                     cmocka_unit_test(test_reroute_splits_ports),
                                     cmocka_unit_test(test_repeated_phases_held_once)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
