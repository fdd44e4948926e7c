/* A rough length of a collective or traffic plan (fabsim/run.h).
 *
 * Per phase, the busiest GPU's bytes over its path's first hop rate, plus
 * latency; staggered phases overlap. A GPU's busy time is the sum, in the
 * phase's transfer order, of its transfers' bytes x 8 / (NVLink or NIC
 * rate); the terms are not negative, so the phase's largest partial sum is
 * the largest GPU's total.
 *
 * Phases that are slices of the plan's pool (the tree: windows sliding over
 * it, coll_phase_slice) follow the window: only the GPUs sending a transfer
 * that enters or leaves have their sum taken again, over their transfers in
 * the window in pool order (the same additions in the same order as a pass
 * over the phase, so the same figures bit for bit), and an indexed max-heap
 * over the GPUs gives the busiest. Cost: O(pool) once, then per move
 * O(changed GPUs x (their window transfers + log GPUs)); other phases
 * O(transfers). */
#include "fabsim/run.h"

typedef struct est_rates {
  const topo *t;
  double nvl, nic;
} est_rates;

static double xfer_s(const est_rates *r, const be_xfer *x) {
  bool local = topo_gpu_node(r->t, x->src_gpu) == topo_gpu_node(r->t, x->dst_gpu);
  return (double)x->bytes * 8 / (local ? r->nvl : r->nic);
}

/* The window over a pool: transfers by sending GPU (pool positions in
 * ascending order), each GPU's busy time, a max-heap of GPUs by it. */
typedef struct est_window {
  const be_xfer *pool;
  size_t lo, hi;
  uint32_t ngpu;
  uint32_t *start, *idx; /* idx[start[g] .. start[g+1]): g's transfers */
  double *val;
  uint32_t *heap, *pos;
  uint32_t *mark, *dirty, stamp; /* GPUs whose sum is taken again */
} est_window;

static bool heap_above(const est_window *w, uint32_t a, uint32_t b) {
  return w->val[w->heap[a]] > w->val[w->heap[b]];
}

static void heap_swap(est_window *w, uint32_t a, uint32_t b) {
  uint32_t g = w->heap[a];
  w->heap[a] = w->heap[b];
  w->heap[b] = g;
  w->pos[w->heap[a]] = a;
  w->pos[w->heap[b]] = b;
}

static void heap_set(est_window *w, uint32_t g, double v) {
  w->val[g] = v;
  uint32_t i = w->pos[g];
  while (i > 0 && heap_above(w, i, (i - 1) / 2)) {
    heap_swap(w, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
  for (;;) {
    uint32_t l = 2 * i + 1, m = i;
    if (l < w->ngpu && heap_above(w, l, m)) m = l;
    if (l + 1 < w->ngpu && heap_above(w, l + 1, m)) m = l + 1;
    if (m == i) break;
    heap_swap(w, i, m);
    i = m;
  }
}

static void window_init(est_window *w, const be_xfer *pool, size_t pool_n, uint32_t ngpu) {
  w->pool = pool;
  w->lo = w->hi = 0;
  w->ngpu = ngpu;
  w->start = sim_calloc((size_t)ngpu + 1, sizeof *w->start);
  w->idx = sim_malloc((pool_n ? pool_n : 1) * sizeof *w->idx);
  for (size_t i = 0; i < pool_n; i++) w->start[pool[i].src_gpu + 1]++;
  for (uint32_t g = 0; g < ngpu; g++) w->start[g + 1] += w->start[g];
  uint32_t *fill = sim_malloc(((size_t)ngpu + 1) * sizeof *fill);
  for (uint32_t g = 0; g <= ngpu; g++) fill[g] = w->start[g];
  for (size_t i = 0; i < pool_n; i++) w->idx[fill[pool[i].src_gpu]++] = (uint32_t)i;
  sim_free(fill);
  w->val = sim_calloc(ngpu, sizeof *w->val);
  w->heap = sim_malloc(ngpu * sizeof *w->heap);
  w->pos = sim_malloc(ngpu * sizeof *w->pos);
  for (uint32_t g = 0; g < ngpu; g++) w->heap[g] = w->pos[g] = g;
  w->mark = sim_calloc(ngpu, sizeof *w->mark);
  w->dirty = sim_malloc(ngpu * sizeof *w->dirty);
  w->stamp = 0;
}

static void window_free(est_window *w) {
  if (!w->pool) return;
  sim_free(w->start);
  sim_free(w->idx);
  sim_free(w->val);
  sim_free(w->heap);
  sim_free(w->pos);
  sim_free(w->mark);
  sim_free(w->dirty);
  w->pool = NULL;
}

/* First of g's transfers at pool position >= i. */
static uint32_t first_from(const est_window *w, uint32_t g, size_t i) {
  uint32_t a = w->start[g], b = w->start[g + 1];
  while (a < b) {
    uint32_t m = a + (b - a) / 2;
    if (w->idx[m] < i) a = m + 1;
    else b = m;
  }
  return a;
}

/* Marks the senders of [a, b) dirty; returns the dirty count. */
static uint32_t mark_range(est_window *w, size_t a, size_t b, uint32_t nd) {
  for (size_t i = a; i < b; i++) {
    uint32_t g = w->pool[i].src_gpu;
    if (w->mark[g] != w->stamp) {
      w->mark[g] = w->stamp;
      w->dirty[nd++] = g;
    }
  }
  return nd;
}

/* Moves the window to [lo, hi); returns the busiest GPU's busy time. */
static double window_move(est_window *w, const est_rates *r, size_t lo, size_t hi) {
  if (++w->stamp == 0) { /* wrapped: clear the marks */
    for (uint32_t g = 0; g < w->ngpu; g++) w->mark[g] = 0;
    w->stamp = 1;
  }
  uint32_t nd = 0;
  size_t d[2][2]; /* what leaves, then what enters */
  for (int q = 0, k = sim_range_minus(w->lo, w->hi, lo, hi, d); q < k; q++)
    nd = mark_range(w, d[q][0], d[q][1], nd);
  for (int q = 0, k = sim_range_minus(lo, hi, w->lo, w->hi, d); q < k; q++)
    nd = mark_range(w, d[q][0], d[q][1], nd);
  w->lo = lo;
  w->hi = hi;
  for (uint32_t k = 0; k < nd; k++) {
    uint32_t g = w->dirty[k];
    double s = 0;
    for (uint32_t j = first_from(w, g, lo); j < w->start[g + 1] && w->idx[j] < hi; j++)
      s += xfer_s(r, &w->pool[w->idx[j]]);
    heap_set(w, g, s);
  }
  return w->ngpu ? w->val[w->heap[0]] : 0;
}

/* A phase with its own transfers: one pass (busy: zeros, left zeroed). */
static double phase_worst(const est_rates *r, const coll_phase *ph, double *busy) {
  double worst = 0;
  for (size_t k = 0; k < ph->n; k++) {
    const be_xfer *x = &ph->x[k];
    double s = (busy[x->src_gpu] += xfer_s(r, x));
    if (s > worst) worst = s;
  }
  for (size_t k = 0; k < ph->n; k++) busy[ph->x[k].src_gpu] = 0;
  return worst;
}

simtime_ps run_plan_estimate(const coll_plan *p, const topo *t, const cfg_scenario *cfg) {
  uint32_t ngpu = topo_gpu_count(t);
  double *busy = sim_calloc(ngpu ? ngpu : 1, sizeof *busy);
  est_window w = {0};
  double total = 0, latest = 0;
  est_rates r = {.t = t,
                 .nvl = (double)cfg->cluster.scale_up.bandwidth,
                 .nic = (double)cfg->cluster.nic.bandwidth};
  for (size_t i = 0; i < p->nphases; i++) {
    const coll_phase *ph = &p->phases[i];
    const be_xfer *pool;
    size_t pool_n, off;
    double worst;
    if (p->nphases > 1 && coll_phase_slice(p, i, &pool, &pool_n, &off) && pool_n <= UINT32_MAX) {
      if (w.pool != pool) {
        window_free(&w);
        window_init(&w, pool, pool_n, ngpu);
      }
      worst = window_move(&w, &r, off, off + ph->n);
    } else {
      worst = phase_worst(&r, ph, busy);
    }
    double phase = (worst + 5e-6) * (double)ph->repeat;
    if (p->stagger) {
      double end = (double)i * sim_ps_to_s(p->stagger) + phase;
      if (end > latest) latest = end;
    } else {
      total += phase;
    }
  }
  window_free(&w);
  sim_free(busy);
  double s = p->stagger ? latest : total;
  return s > 1e6 ? SIM_PS_PER_S * 1000000 : (simtime_ps)(s * 1e12);
}
