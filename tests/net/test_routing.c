/* Static policies.
 *   static (D-mod-k): on a 2-tier fat-tree of radix 8 (4 hosts per leaf),
 *     the shift permutation host i -> host i + 4 sends every leaf's flows to
 *     the next leaf; the up port (dst mod 4) differs for the 4 flows of a leaf
 *     and so does the spine they come down from: no link carries two flows,
 *     every flow runs at line rate (the permutation takes as long as one flow
 *     alone), while ECMP hashing collides.
 *   polarized ECMP: with one hash at every switch, the spine a flow takes and
 *     the core it takes from there are the same index, so the flows leaving a
 *     pod use only `radix/2` of its radix^2/4 spine-core links; per-switch
 *     seeds spread them over more. */
#include "net/net_test.h"

static void shift(const char *routing, simtime_ps *alone, simtime_ps *all, uint32_t *sharing) {
  char ro[64];
  snprintf(ro, sizeof ro, "fabric.routing=%s", routing);
  const char *sets[] = {"cluster.nodes=32", "cluster.gpus_per_node=1", "fabric.switch_radix=8", ro};
  fixture f;
  fx_load(&f, sets, 4);
  be_xfer x[32];
  for (uint32_t i = 0; i < 32; i++)
    x[i] = (be_xfer){
        .src_gpu = i, .dst_gpu = (i + 4) % 32, .bytes = 2 << 20, .flow_hash = sim_hash_u64(i)};
  fx_result r;
  fx_run(&f, x, 1, 1, &r);
  *alone = r.end;
  fx_run(&f, x, 32, 1, &r);
  *all = r.end;
  *sharing = r.st.max_link_sharing;
  fx_unload(&f);
}

static void test_static(void **state) {
  (void)state;
  simtime_ps a, s, e;
  uint32_t sh_static, sh_ecmp;
  shift("static", &a, &s, &sh_static);
  shift("ecmp", &a, &e, &sh_ecmp);
  printf(
      "  shift permutation: alone %.1f us, static %.1f us (sharing %u), ecmp %.1f us (sharing "
      "%u)\n",
      sim_ps_to_s(a) * 1e6, sim_ps_to_s(s) * 1e6, sh_static, sim_ps_to_s(e) * 1e6, sh_ecmp);
  assert_int_equal(sh_static, 1);
  assert_true((double)s < 1.01 * (double)a);
  assert_true(sh_ecmp >= 2 && e > s);
}

/* Spine-core channels of pod 0 (upward) that carried data. */
static uint32_t used_core_links(bool polarized) {
  const char *sets[] = {"cluster.nodes=128",
                        "cluster.gpus_per_node=1",
                        "fabric.switch_radix=8",
                        "fabric.tiers=3",
                        polarized ? "fabric.ecmp.polarized=true" : "fabric.ecmp.polarized=false",
                        "fabric.routing=ecmp"};
  fixture f;
  fx_load(&f, sets, 6);
  /* pod 0 = hosts 0..15; each sends to a host in another pod */
  be_xfer x[16];
  for (uint32_t i = 0; i < 16; i++)
    x[i] = (be_xfer){
        .src_gpu = i, .dst_gpu = 16 + 7 * i, .bytes = 64 << 10, .flow_hash = sim_hash_u64(i + 99)};
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_packet_create(sim, f.t, &f.cfg);
  fx_result r = {.end = SIM_TIME_MAX};
  be_submit_phase(b, x, 16, 1, fx_done, &r);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(r.end != SIM_TIME_MAX);
  uint32_t used = 0;
  for (uint32_t c = 0; c < 2 * topo_link_count(f.t); c++) {
    const topo_vertex *s = topo_vertex_at(f.t, topo_channel_src(f.t, c));
    const topo_vertex *d = topo_vertex_at(f.t, topo_channel_dst(f.t, c));
    if (s->kind != TOPO_SWITCH || s->tier != TOPO_TIER_SPINE || s->pod != 0 ||
        d->tier != TOPO_TIER_CORE)
      continue;
    net__port_stats ps;
    net__port_stats_of(b, c, &ps);
    used += ps.tx_bytes > (32 << 10);
  }
  be_destroy(b);
  sim_destroy(sim);
  fx_unload(&f);
  return used;
}

static void test_polarized(void **state) {
  (void)state;
  uint32_t pol = used_core_links(true), seeded = used_core_links(false);
  printf("  spine-core links of pod 0 carrying data: polarized %u, per-switch seeds %u (of 16)\n",
         pol, seeded);
  assert_true(pol <= 4);
  assert_true(seeded > pol);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_static),
      cmocka_unit_test(test_polarized),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
