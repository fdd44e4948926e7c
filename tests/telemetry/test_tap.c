/* Telemetry tap: results unchanged by the tap; the replay puts every byte of
 * a phase on the NICs and switch ports of its routed paths, over the phase's
 * time; GPU states follow the phases; port names round-trip. */
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
  tel *t = NULL;
  tel_config c = {.interval = t_tap / 7 + 1,
                  .gpus = topo_gpu_count(f.t),
                  .nics = topo_nic_count(f.t),
                  .ports = pm.nports,
                  .nic_bps = f.cfg.cluster.nic.bandwidth,
                  .port_bps = pm.bps};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  tel_tap_replay(tap, t, &pm, TEL_TAP_GPUS);
  tel_finish(t, t_tap);
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

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_replay_puts_bytes_on_paths)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
