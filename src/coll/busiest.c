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

/* value -> ports with that load; open addressing, a count may drop to 0 */
typedef struct load_set {
  uint64_t *key;
  uint32_t *count;
  uint8_t *used;
  size_t cap, nused, live;
} load_set;

struct coll__busy_window {
  const topo *t;
  const be_xfer *pool;
  size_t lo, hi;
  uint64_t *nv_out, *nv_in, *nic_out, *nic_in;
  load_set nv, nic;
  size_t crossing; /* transfers of the window across nodes */
};

static void set_init(load_set *s, size_t cap) {
  s->cap = cap;
  s->key = sim_malloc(cap * sizeof *s->key);
  s->count = sim_malloc(cap * sizeof *s->count);
  s->used = sim_calloc(cap, 1);
  s->nused = s->live = 0;
}

static void set_free(load_set *s) {
  sim_free(s->key);
  sim_free(s->count);
  sim_free(s->used);
}

static size_t set_slot(const load_set *s, uint64_t key) {
  size_t i = (size_t)sim_hash_u64(key) & (s->cap - 1);
  while (s->used[i] && s->key[i] != key) i = (i + 1) & (s->cap - 1);
  return i;
}

static void set_add(load_set *s, uint64_t key, uint32_t count);

/* Rehash into a table sized for the values with ports (zero counts go). */
static void set_rebuild(load_set *s) {
  load_set old = *s;
  size_t cap = 64;
  while (cap < 4 * old.live) cap *= 2;
  set_init(s, cap);
  for (size_t i = 0; i < old.cap; i++)
    if (old.used[i] && old.count[i] > 0) set_add(s, old.key[i], old.count[i]);
  set_free(&old);
}

static void set_add(load_set *s, uint64_t key, uint32_t count) {
  if (2 * (s->nused + 1) > s->cap) set_rebuild(s);
  size_t i = set_slot(s, key);
  if (!s->used[i]) {
    s->used[i] = 1;
    s->key[i] = key;
    s->count[i] = 0;
    s->nused++;
  }
  if (s->count[i] == 0) s->live++;
  s->count[i] += count;
}

static void set_sub(load_set *s, uint64_t key) {
  size_t i = set_slot(s, key);
  if (--s->count[i] == 0) s->live--;
}

static uint64_t set_max(load_set *s) {
  if (s->nused > 2 * s->live + 1024) set_rebuild(s);
  uint64_t m = 0;
  for (size_t i = 0; i < s->cap; i++)
    if (s->used[i] && s->count[i] > 0 && s->key[i] > m) m = s->key[i];
  return m;
}

/* A port's load goes from *v to *v + delta (delta may be negative). */
static void port_move(load_set *s, uint64_t *v, int64_t delta) {
  if (*v) set_sub(s, *v);
  *v = (uint64_t)((int64_t)*v + delta);
  if (*v) set_add(s, *v, 1);
}

static void window_count(coll__busy_window *w, size_t i, int sign) {
  const be_xfer *x = &w->pool[i];
  const topo *t = w->t;
  int64_t d = sign * (int64_t)x->bytes;
  if (topo_gpu_node(t, x->src_gpu) != topo_gpu_node(t, x->dst_gpu)) {
    port_move(&w->nic, &w->nic_out[topo_gpu_nic(t, x->src_gpu)], d);
    port_move(&w->nic, &w->nic_in[topo_gpu_nic(t, x->dst_gpu)], d);
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
  set_init(&w->nv, 64);
  set_init(&w->nic, 64);
  return w;
}

/* [a, b) less [c, d): up to two ranges, r[k][0..1]; returns how many. */
static int range_minus(size_t a, size_t b, size_t c, size_t d, size_t r[2][2]) {
  int k = 0;
  size_t e = b < c ? b : c, f = a > d ? a : d;
  if (a < e) r[k][0] = a, r[k++][1] = e;
  if (f < b) r[k][0] = f, r[k++][1] = b;
  return k;
}

void coll__busy_window_move(coll__busy_window *w, size_t lo, size_t hi, uint64_t *nv_max,
                            uint64_t *nic_max, bool *crosses) {
  size_t r[2][2];
  int k = range_minus(w->lo, w->hi, lo, hi, r);
  for (int q = 0; q < k; q++)
    for (size_t i = r[q][0]; i < r[q][1]; i++) window_count(w, i, -1);
  k = range_minus(lo, hi, w->lo, w->hi, r);
  for (int q = 0; q < k; q++)
    for (size_t i = r[q][0]; i < r[q][1]; i++) window_count(w, i, +1);
  w->lo = lo;
  w->hi = hi;
  *nv_max = set_max(&w->nv);
  *nic_max = set_max(&w->nic);
  *crosses = w->crossing > 0;
}

void coll__busy_window_free(coll__busy_window *w) {
  if (!w) return;
  sim_free(w->nv_out);
  set_free(&w->nv);
  set_free(&w->nic);
  sim_free(w);
}
