/* The busiest ports of a window sliding over a pool (src/coll/busiest.c,
 * used by the tree's protocol latencies) against summing each window
 * afresh, as phase_busiest_s does: per GPU the NVLink bytes out and in of
 * the window's transfers inside a node, per NIC the bytes out and in of
 * those across nodes; the largest of each, and whether any crosses nodes.
 * Windows slide forward, jump, shrink, empty and come back (seeded). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"
#include "coll/coll_internal.h"

static void brute(const topo *t, const be_xfer *x, size_t lo, size_t hi, uint64_t *nv,
                  uint64_t *nic, bool *crosses) {
  uint32_t ng = topo_gpu_count(t), nn = topo_nic_count(t);
  uint64_t *l = sim_calloc(2 * (size_t)ng + 2 * (size_t)nn, sizeof *l);
  uint64_t *nv_out = l, *nv_in = l + ng, *nic_out = l + 2 * ng, *nic_in = l + 2 * ng + nn;
  *nv = *nic = 0;
  *crosses = false;
  for (size_t i = lo; i < hi; i++) {
    uint64_t a, b;
    if (topo_gpu_node(t, x[i].src_gpu) != topo_gpu_node(t, x[i].dst_gpu)) {
      a = nic_out[topo_gpu_nic(t, x[i].src_gpu)] += x[i].bytes;
      b = nic_in[topo_gpu_nic(t, x[i].dst_gpu)] += x[i].bytes;
      *crosses = true;
      if (a > *nic) *nic = a;
      if (b > *nic) *nic = b;
    } else {
      a = nv_out[x[i].src_gpu] += x[i].bytes;
      b = nv_in[x[i].dst_gpu] += x[i].bytes;
      if (a > *nv) *nv = a;
      if (b > *nv) *nv = b;
    }
  }
  sim_free(l);
}

static void test_window_matches_sum(void **state) {
  (void)state;
  const char *const sets[] = {"cluster.nodes=4"};
  fixture f;
  load(&f, sets, 1);
  enum { N = 400 };
  uint32_t ng = topo_gpu_count(f.t);
  be_xfer pool[N];
  uint64_t r = 12345;
  for (size_t i = 0; i < N; i++) {
    r = sim_hash_u64(r);
    pool[i] = (be_xfer){.src_gpu = (uint32_t)(r % ng),
                        .dst_gpu = (uint32_t)((r >> 20) % ng),
                        .bytes = 1000 * (1 + (r >> 40) % 4)}; /* few distinct loads */
  }
  coll__busy_window *w = coll__busy_window_new(f.t, pool);
  size_t lo = 0, hi = 0;
  for (int step = 0; step < 300; step++) {
    r = sim_hash_u64(r);
    switch (r % 4) {
    case 0: /* slide */
      lo += (r >> 8) % 20;
      hi += (r >> 16) % 30;
      break;
    case 1: /* jump */
      lo = (r >> 8) % N;
      hi = lo + (r >> 20) % 150;
      break;
    case 2: /* shrink */ lo += (hi - lo) / 3; break;
    default: /* empty */ hi = lo;
    }
    if (hi > N) hi = N;
    if (lo > hi) lo = hi;
    uint64_t nv, nic, bnv, bnic;
    bool cr, bcr;
    coll__busy_window_move(w, lo, hi, &nv, &nic, &cr);
    brute(f.t, pool, lo, hi, &bnv, &bnic, &bcr);
    assert_int_equal(nv, bnv);
    assert_int_equal(nic, bnic);
    assert_int_equal(cr, bcr);
  }
  coll__busy_window_free(w);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_window_matches_sum)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
