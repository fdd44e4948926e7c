/* Multi-plane fabrics: traffic stays in its plane; a transfer between GPUs
 * whose NICs sit on different planes first crosses NVLink inside the source
 * node to the GPU whose NIC is on the destination's plane (as topo_route and
 * NCCL's PXN do), then that plane only. Checked on the port counters. */
#include "net/net_test.h"

/* Bytes sent by switch ports of each plane, and by NVLink ports. */
static void plane_bytes(const fixture *f, const be_backend *b, uint64_t per_plane[2],
                        uint64_t *nvlink) {
  per_plane[0] = per_plane[1] = *nvlink = 0;
  for (uint32_t c = 0; c < 2 * topo_link_count(f->t); c++) {
    net__port_stats ps;
    assert_int_equal(net__port_stats_of(b, c, &ps), SIM_OK);
    const topo_vertex *s = topo_vertex_at(f->t, topo_channel_src(f->t, c));
    if (s->kind == TOPO_SWITCH) per_plane[s->plane] += ps.tx_bytes;
    if (topo_link_at(f->t, topo_channel_link(c))->kind == TOPO_LINK_SCALE_UP)
      *nvlink += ps.tx_bytes;
  }
}

static void run(const fixture *f, uint32_t src, uint32_t dst, uint64_t per_plane[2],
                uint64_t *nvlink) {
  be_xfer x = {.src_gpu = src, .dst_gpu = dst, .bytes = 1 << 20, .flow_hash = 3};
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_packet_create(sim, f->t, &f->cfg);
  fx_result r = {.end = SIM_TIME_MAX};
  be_submit_phase(b, &x, 1, 1, fx_done, &r);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(r.end != SIM_TIME_MAX);
  plane_bytes(f, b, per_plane, nvlink);
  be_destroy(b);
  sim_destroy(sim);
}

static void test_planes(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=4", "cluster.gpus_per_node=2", "fabric.topology=multi-plane",
                        "fabric.planes=2", "fabric.switch_radix=8",   "fabric.transport=roce"};
  fixture f;
  fx_load(&f, sets, 6);
  /* GPU g of node n uses NIC g on plane g: gpu0 (node 0) and gpu2 (node 1) share plane 0 */
  uint32_t p0 = (uint32_t)topo_vertex_at(f.t, topo_nic_vertex(f.t, topo_gpu_nic(f.t, 0)))->plane;
  uint32_t p2 = (uint32_t)topo_vertex_at(f.t, topo_nic_vertex(f.t, topo_gpu_nic(f.t, 2)))->plane;
  uint32_t p3 = (uint32_t)topo_vertex_at(f.t, topo_nic_vertex(f.t, topo_gpu_nic(f.t, 3)))->plane;
  assert_true(p0 == p2 && p3 != p0);
  uint64_t bytes[2], nv;
  run(&f, 0, 2, bytes, &nv); /* same plane */
  printf("  gpu0 -> gpu2: plane %u %llu B, plane %u %llu B, NVLink %llu B\n", p0,
         (unsigned long long)bytes[p0], 1 - p0, (unsigned long long)bytes[1 - p0],
         (unsigned long long)nv);
  assert_true(bytes[p0] > (1 << 20));
  assert_int_equal(bytes[1 - p0], 0);
  assert_int_equal(nv, 0);
  run(&f, 0, 3, bytes, &nv); /* cross-plane: NVLink to gpu1, then plane p3 */
  printf("  gpu0 -> gpu3: plane %u %llu B, plane %u %llu B, NVLink %llu B\n", p3,
         (unsigned long long)bytes[p3], p0, (unsigned long long)bytes[p0], (unsigned long long)nv);
  assert_true(bytes[p3] > (1 << 20));
  assert_true(bytes[p0] < (1 << 20) / 20); /* only the ACKs, whose reverse route uses plane p0 */
  assert_true(nv > 2 * (1 << 20));         /* gpu0 -> nvs -> gpu1 */
  fx_unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_planes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
