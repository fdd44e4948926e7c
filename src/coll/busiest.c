/* The busiest ports of a window sliding over a plan's pool: what
 * phase_busiest_s (tune.c) finds per phase, kept as the window moves, for
 * chunked pipelines (the tree) whose every phase is a slice of the pool.
 *
 * Loads are exact integer byte counts per GPU NVLink port (out and in) and
 * per NIC (out and in, transfers across nodes); the nonzero ones are kept
 * as a multiset (value -> ports), whose largest value is the busiest port.
 * A port of the window carries a transfer of it, so the largest load over
 * the ports is the largest over the window's transfers' ends, as
 * phase_busiest_s takes it. Cost: O(transfers entering and leaving +
 * distinct loads) per move. */
#include <string.h>

#include "coll/coll_internal.h"

struct coll__busy_window {
  const topo *t;
  const be_xfer *pool;
  size_t lo, hi;
  uint64_t *nv_out, *nv_in, *nic_out, *nic_in;
  sim_counts nv, nic; /* load -> ports with that load (nonzero loads) */
  size_t crossing;    /* transfers of the window across nodes */
};

/* A port's load goes from *v to *v + delta (delta may be negative). */
static void port_move(sim_counts *s, uint64_t *v, int64_t delta) {
  if (*v) sim_counts_sub(s, *v);
  *v = (uint64_t)((int64_t)*v + delta);
  if (*v) sim_counts_add(s, *v, 1);
}

static void window_count(coll__busy_window *w, size_t i, int sign) {
  const be_xfer *x = &w->pool[i];
  const topo *t = w->t;
  int64_t d = sign * (int64_t)x->bytes;
  if (topo_gpu_node(t, x->src_gpu) != topo_gpu_node(t, x->dst_gpu)) {
    port_move(&w->nic, &w->nic_out[topo_xfer_nic(t, x->src_gpu, x->flow_hash)], d);
    port_move(&w->nic, &w->nic_in[topo_xfer_nic(t, x->dst_gpu, x->flow_hash)], d);
    w->crossing = (size_t)((ptrdiff_t)w->crossing + sign);
  } else {
    port_move(&w->nv, &w->nv_out[x->src_gpu], d);
    port_move(&w->nv, &w->nv_in[x->dst_gpu], d);
  }
}

coll__busy_window *coll__busy_window_new(const topo *t, const be_xfer *pool) {
  coll__busy_window *w = sim_calloc(1, sizeof *w);
  uint32_t ng = topo_gpu_count(t), nn = topo_nic_count(t);
  w->t = t;
  w->pool = pool;
  w->nv_out = sim_calloc(2 * (size_t)ng + 2 * (size_t)nn + 1, sizeof *w->nv_out);
  w->nv_in = w->nv_out + ng;
  w->nic_out = w->nv_in + ng;
  w->nic_in = w->nic_out + nn;
  sim_counts_init(&w->nv);
  sim_counts_init(&w->nic);
  return w;
}

enum { AHEAD = 16 }; /* transfers whose ports are fetched ahead: the loads outgrow the caches */

static void window_range(coll__busy_window *w, size_t a, size_t b, int sign) {
  const topo *t = w->t;
  for (size_t i = a; i < b; i++) {
    if (i + AHEAD < b) {
      const be_xfer *x = &w->pool[i + AHEAD];
      __builtin_prefetch(&w->nv_out[x->src_gpu], 1);
      __builtin_prefetch(&w->nv_in[x->dst_gpu], 1);
      __builtin_prefetch(&w->nic_out[topo_xfer_nic(t, x->src_gpu, x->flow_hash)], 1);
      __builtin_prefetch(&w->nic_in[topo_xfer_nic(t, x->dst_gpu, x->flow_hash)], 1);
    }
    window_count(w, i, sign);
  }
}

void coll__busy_window_move(coll__busy_window *w, size_t lo, size_t hi, uint64_t *nv_max,
                            uint64_t *nic_max, bool *crosses) {
  size_t r[2][2];
  int k = sim_range_minus(w->lo, w->hi, lo, hi, r);
  for (int q = 0; q < k; q++) window_range(w, r[q][0], r[q][1], -1);
  k = sim_range_minus(lo, hi, w->lo, w->hi, r);
  for (int q = 0; q < k; q++) window_range(w, r[q][0], r[q][1], +1);
  w->lo = lo;
  w->hi = hi;
  *nv_max = sim_counts_max(&w->nv);
  *nic_max = sim_counts_max(&w->nic);
  *crosses = w->crossing > 0;
}

void coll__busy_window_free(coll__busy_window *w) {
  if (!w) return;
  sim_free(w->nv_out);
  sim_counts_free(&w->nv);
  sim_counts_free(&w->nic);
  sim_free(w);
}
