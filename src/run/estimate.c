/* A rough length of a collective or traffic plan (fabsim/run.h).
 *
 * Per phase, the busiest GPU's bytes over its path's first hop rate, plus
 * latency; staggered phases overlap. A GPU's busy time is its bytes sent
 * over NVLink (to its own node) x 8 / the NVLink rate plus its bytes sent
 * across nodes x 8 / the NIC rate, the byte sums exact integers (so the
 * figure does not depend on the order of the transfers).
 *
 * Phases that are slices of the plan's pool (the tree: windows sliding over
 * it, coll_phase_slice) follow the window: what enters and leaves moves its
 * sender's sums, and the GPUs sending anything in the window are listed, so
 * a move costs O(transfers entering and leaving + the window's senders).
 * Other phases: O(transfers). The figure feeds only the progress line (and
 * the size of its slices of simulated time), never a result. */
#include "fabsim/run.h"

#define NONE UINT32_MAX

/* Bytes a GPU sends in a phase or window: inside its node, across nodes. */
typedef struct est_sums {
  uint64_t nvl, nic;
} est_sums;

typedef struct est_rates {
  const topo *t;
  double nvl, nic;
} est_rates;

static bool is_local(const est_rates *r, const be_xfer *x) {
  return topo_gpu_node(r->t, x->src_gpu) == topo_gpu_node(r->t, x->dst_gpu);
}

static double busy_s(const est_rates *r, const est_sums *s) {
  return (double)s->nvl * 8 / r->nvl + (double)s->nic * 8 / r->nic;
}

/* The window over a pool: per GPU its sums, and the GPUs sending in it. */
typedef struct est_window {
  const be_xfer *pool;
  size_t lo, hi;
  est_sums *sum;           /* per GPU */
  uint32_t *pos, *senders; /* pos[g]: g's index in senders, NONE when it sends nothing */
  uint32_t nsenders;
} est_window;

static void window_init(est_window *w, const be_xfer *pool, uint32_t ngpu) {
  w->pool = pool;
  w->lo = w->hi = 0;
  w->sum = sim_calloc(ngpu ? ngpu : 1, sizeof *w->sum);
  w->pos = sim_malloc((ngpu ? ngpu : 1) * sizeof *w->pos);
  w->senders = sim_malloc((ngpu ? ngpu : 1) * sizeof *w->senders);
  for (uint32_t g = 0; g < ngpu; g++) w->pos[g] = NONE;
  w->nsenders = 0;
}

static void window_free(est_window *w) {
  if (!w->pool) return;
  sim_free(w->sum);
  sim_free(w->pos);
  sim_free(w->senders);
  w->pool = NULL;
}

/* Transfers [a, b) of the pool enter (sign +1) or leave (-1) the window. */
static void window_count(est_window *w, const est_rates *r, size_t a, size_t b, int sign) {
  for (size_t i = a; i < b; i++) {
    const be_xfer *x = &w->pool[i];
    uint32_t g = x->src_gpu;
    est_sums *s = &w->sum[g];
    uint64_t *v = is_local(r, x) ? &s->nvl : &s->nic;
    *v = sign > 0 ? *v + x->bytes : *v - x->bytes;
    if (sign > 0 && w->pos[g] == NONE) { /* a sender now */
      w->pos[g] = w->nsenders;
      w->senders[w->nsenders++] = g;
    }
  }
  if (sign > 0) return;
  for (size_t i = a; i < b; i++) { /* senders with nothing left go */
    uint32_t g = w->pool[i].src_gpu;
    if (w->pos[g] == NONE || w->sum[g].nvl || w->sum[g].nic) continue;
    uint32_t last = w->senders[--w->nsenders];
    w->senders[w->pos[g]] = last;
    w->pos[last] = w->pos[g];
    w->pos[g] = NONE;
  }
}

/* Moves the window to [lo, hi); returns the busiest GPU's busy time. */
static double window_move(est_window *w, const est_rates *r, size_t lo, size_t hi) {
  size_t d[2][2]; /* what leaves, then what enters */
  for (int q = 0, k = sim_range_minus(w->lo, w->hi, lo, hi, d); q < k; q++)
    window_count(w, r, d[q][0], d[q][1], -1);
  for (int q = 0, k = sim_range_minus(lo, hi, w->lo, w->hi, d); q < k; q++)
    window_count(w, r, d[q][0], d[q][1], +1);
  w->lo = lo;
  w->hi = hi;
  double worst = 0;
  for (uint32_t k = 0; k < w->nsenders; k++) {
    double s = busy_s(r, &w->sum[w->senders[k]]);
    if (s > worst) worst = s;
  }
  return worst;
}

/* A phase with its own transfers: one pass (sums: zeros, left zeroed). */
static double phase_worst(const est_rates *r, const coll_phase *ph, est_sums *sums) {
  double worst = 0;
  for (size_t k = 0; k < ph->n; k++) {
    const be_xfer *x = &ph->x[k];
    if (is_local(r, x)) sums[x->src_gpu].nvl += x->bytes;
    else sums[x->src_gpu].nic += x->bytes;
  }
  for (size_t k = 0; k < ph->n; k++) {
    double s = busy_s(r, &sums[ph->x[k].src_gpu]);
    if (s > worst) worst = s;
  }
  for (size_t k = 0; k < ph->n; k++) sums[ph->x[k].src_gpu] = (est_sums){0, 0};
  return worst;
}

simtime_ps run_plan_estimate(const coll_plan *p, const topo *t, const cfg_scenario *cfg) {
  uint32_t ngpu = topo_gpu_count(t);
  est_sums *sums = sim_calloc(ngpu ? ngpu : 1, sizeof *sums);
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
    if (p->nphases > 1 && coll_phase_slice(p, i, &pool, &pool_n, &off)) {
      if (w.pool != pool) {
        window_free(&w);
        window_init(&w, pool, ngpu);
      }
      worst = window_move(&w, &r, off, off + ph->n);
    } else {
      worst = phase_worst(&r, ph, sums);
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
  sim_free(sums);
  double s = p->stagger ? latest : total;
  return s > 1e6 ? SIM_PS_PER_S * 1000000 : (simtime_ps)(s * 1e12);
}
