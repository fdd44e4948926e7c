/* PFC congestion spreading (head-of-line blocking).
 *
 * 2-tier fat-tree of radix 8 (4 hosts per leaf, 4 spines), RoCE with PFC, no
 * congestion control, ECMP. Seven hosts of leaves 1 and 2 send 2 MB each to
 * host 0 on leaf 0; the innocent host 7 (leaf 1) sends 2 MB to host 12 on
 * leaf 3, whose receiver is idle, with an ECMP hash that puts it on the same
 * leaf-1 uplink as the incast flow of host 4. The spine's port toward leaf 0
 * backs up, the spine PAUSEs that uplink, the uplink's queue blocks the
 * innocent flow too, leaf 1 PAUSEs host 7's NIC: the innocent flow slows
 * down although nothing on its own path is oversubscribed. Counters show the
 * PAUSEs the innocent NIC received and how long it stood. On lossy Ethernet
 * nothing is PAUSEd; the incast drops instead (and so does the innocent flow
 * where it meets the incast's line-rate senders on the shared uplink). */
#include "net/net_test.h"

typedef struct two {
  simtime_ps incast_end, innocent_end;
} two;

static void incast_done(sim_ctx *sim, void *ctx) { ((two *)ctx)->incast_end = sim_now(sim); }
static void innocent_done(sim_ctx *sim, void *ctx) { ((two *)ctx)->innocent_end = sim_now(sim); }

/* The leaf uplink (first fabric hop after the leaf) of a routed path. */
static uint32_t uplink(const topo *t, uint32_t src, uint32_t dst, uint64_t hash) {
  topo_path p;
  assert_int_equal(topo_route(t, src, dst, hash, &p), SIM_OK);
  for (uint32_t j = 0; j < p.n; j++) {
    const topo_vertex *a = topo_vertex_at(t, topo_channel_src(t, p.ch[j]));
    if (a->kind == TOPO_SWITCH && a->tier == TOPO_TIER_LEAF) return p.ch[j];
  }
  fail_msg("no uplink");
  return 0;
}

static void run(const char *transport, bool with_incast, two *r, net__port_stats *nic7,
                net__port_stats *up, be_stats *st) {
  char tr[64];
  snprintf(tr, sizeof tr, "fabric.transport=%s", transport);
  const char *sets[] = {"cluster.nodes=16",      "cluster.gpus_per_node=1",
                        "fabric.switch_radix=8", tr,
                        "fabric.roce.cc=none",   "fabric.switch.buffer=2MB"};
  fixture f;
  fx_load(&f, sets, 6);
  const topo *t = f.t;
  be_xfer in[7];
  uint32_t senders[7] = {4, 5, 6, 8, 9, 10, 11};
  for (int i = 0; i < 7; i++)
    in[i] = (be_xfer){.src_gpu = senders[i],
                      .dst_gpu = 0,
                      .bytes = 2000000,
                      .flow_hash = sim_hash_u64((uint64_t)senders[i])};
  uint32_t shared = uplink(t, 4, 0, in[0].flow_hash);
  uint64_t h = 1;
  while (uplink(t, 7, 12, h) != shared) h++;
  be_xfer innocent = {.src_gpu = 7, .dst_gpu = 12, .bytes = 2000000, .flow_hash = h};
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_packet_create(sim, t, &f.cfg);
  memset(r, 0, sizeof *r);
  if (with_incast) be_submit_phase(b, in, 7, 1, incast_done, r);
  be_submit_phase(b, &innocent, 1, 1, innocent_done, r);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(r->innocent_end > 0);
  /* the innocent NIC's port toward its leaf, and the shared uplink */
  topo_path p;
  topo_route(t, 7, 12, h, &p);
  assert_int_equal(net__port_stats_of(b, p.ch[1], nic7), SIM_OK);
  assert_int_equal(net__port_stats_of(b, shared, up), SIM_OK);
  b->ops->stats(b, st);
  be_destroy(b);
  sim_destroy(sim);
  fx_unload(&f);
}

static void test_spreading(void **state) {
  (void)state;
  two alone, hol, lossy;
  net__port_stats nic_a, up_a, nic_h, up_h, nic_l, up_l;
  be_stats st_a, st_h, st_l;
  run("roce", false, &alone, &nic_a, &up_a, &st_a);
  run("roce", true, &hol, &nic_h, &up_h, &st_h);
  run("ethernet", true, &lossy, &nic_l, &up_l, &st_l);
  printf("  innocent alone        %.1f us\n", sim_ps_to_s(alone.innocent_end) * 1e6);
  printf(
      "  innocent, roce+pfc    %.1f us (incast %.1f us); innocent NIC: %llu PAUSEs, paused %.1f "
      "us; "
      "shared uplink: %llu PAUSEs, paused %.1f us; fabric: %llu PAUSEs\n",
      sim_ps_to_s(hol.innocent_end) * 1e6, sim_ps_to_s(hol.incast_end) * 1e6,
      (unsigned long long)nic_h.pauses_rx, sim_ps_to_s(nic_h.paused) * 1e6,
      (unsigned long long)up_h.pauses_rx, sim_ps_to_s(up_h.paused) * 1e6,
      (unsigned long long)st_h.pfc_pauses);
  printf("  innocent, lossy eth   %.1f us (incast %.1f us, %llu drops)\n",
         sim_ps_to_s(lossy.innocent_end) * 1e6, sim_ps_to_s(lossy.incast_end) * 1e6,
         (unsigned long long)st_l.drops);
  assert_int_equal(nic_a.pauses_rx, 0);
  assert_true(hol.innocent_end > 3 * alone.innocent_end); /* fair sharing would cost < 1.2x */
  assert_true(nic_h.pauses_rx > 0 && nic_h.paused > 0);
  assert_true(up_h.pauses_rx > 0 && up_h.paused > 0);
  assert_int_equal(st_h.drops, 0);
  assert_int_equal(nic_l.pauses_rx, 0); /* lossy: drops, never pauses */
  assert_true(st_l.drops > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_spreading)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
