/* Telemetry sampler: meters per entity, one aggregated row per interval and
 * group, watched entities in full, whole-run totals.
 *
 * Closing an interval reads every entity of the group once and writes none
 * (see tel__meter), so it is O(entities) plus two selections for the
 * percentiles. A row in which nothing was touched, following a full row in
 * which nothing was touched either, equals that row: it is copied in O(1),
 * so long quiet stretches (compute phases, idle fabric) cost nothing per
 * entity.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry/tel_internal.h"

static const char *const gpu_state_names[TEL_GPU_NSTATES] = {"idle",   "compute",    "network",
                                                             "bubble", "checkpoint", "down"};

const char *tel_gpu_state_name(tel_gpu_state s) {
  return (unsigned)s < TEL_GPU_NSTATES ? gpu_state_names[s] : "?";
}

/* ---- meters and levels ---------------------------------------------------------- */

/* Bring m into the group's open interval (counting a touch) and up to now. */
static void meter_touch(tel__group *g, tel__meter *m, simtime_ps now) {
  if (m->touched != g->open) {
    assert(m->last <= g->open_start);
    m->cum += (tel__u128)m->rate * (g->open_start - m->last);
    m->last = g->open_start;
    m->acc = 0;
    m->touched = g->open;
    g->touches++;
  }
  tel__u128 d = (tel__u128)m->rate * (now - m->last);
  m->acc += d;
  m->cum += d;
  m->last = now;
}

/* What m accrued in the open interval up to boundary b (read-only). */
static tel__u128 meter_value(const tel__group *g, const tel__meter *m, simtime_ps b) {
  if (m->touched == g->open) return m->acc + (tel__u128)m->rate * (b - m->last);
  return (tel__u128)m->rate * (b - g->open_start);
}

static tel__u128 meter_total(const tel__meter *m, simtime_ps end) {
  return m->cum + (tel__u128)m->rate * (end > m->last ? end - m->last : 0);
}

static void meter_rate(tel__meter *m, int64_t delta) {
  assert(delta >= 0 || m->rate >= (uint64_t)-delta);
  m->rate = (uint64_t)((int64_t)m->rate + delta);
}

static void level_touch(tel__group *g, tel__level *l, uint64_t v) {
  if (l->touched != g->open) {
    l->max_in = l->cur;
    l->touched = g->open;
    g->touches++;
  }
  l->cur = v;
  if (v > l->max_in) l->max_in = v;
  if (v > l->max_all) l->max_all = v;
}

static uint64_t level_value(const tel__group *g, const tel__level *l) {
  return l->touched == g->open ? l->max_in : l->cur;
}

/* ---- selection ---------------------------------------------------------------- */

static void swap_d(double *a, double *b) {
  double x = *a;
  *a = *b;
  *b = x;
}

/* k-th smallest (0-based) of a[0..n), reordering a. Deterministic. O(n) expected. */
static double select_kth(double *a, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a[mid] < a[lo]) swap_d(&a[mid], &a[lo]);
    if (a[hi] < a[lo]) swap_d(&a[hi], &a[lo]);
    if (a[hi] < a[mid]) swap_d(&a[hi], &a[mid]);
    double pivot = a[mid];
    size_t i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        swap_d(&a[i], &a[j]);
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

/* Nearest-rank percentile p of a[0..n): the smallest value with at least p
 * of all values at or below it. */
static double percentile(double *a, size_t n, double p) {
  if (n == 0) return 0;
  size_t r = (size_t)ceil(p * (double)n);
  if (r < 1) r = 1;
  if (r > n) r = n;
  return select_kth(a, n, r - 1);
}

static int wval_cmp(const void *a, const void *b) {
  double x = ((const tel__wval *)a)->v, y = ((const tel__wval *)b)->v;
  return (x > y) - (x < y);
}

/* percentile() of a multiset given as (value, members) pairs sorted by
 * value, n members in all: the same value. */
static double percentile_w(const tel__wval *a, size_t k, uint64_t n, double p) {
  if (n == 0 || k == 0) return 0;
  uint64_t r = (uint64_t)ceil(p * (double)n), cum = 0;
  if (r < 1) r = 1;
  if (r > n) r = n;
  for (size_t i = 0; i < k; i++)
    if ((cum += a[i].w) >= r) return a[i].v;
  return a[k - 1].v;
}

/* An entity's meter or level: its class's (tel__port_classes). */
static inline uint32_t port_at(const tel *t, uint32_t port) {
  return t->port_cls ? t->port_cls[port] : port;
}

/* ---- rows ------------------------------------------------------------------------ */

static tel_watch_row *watch_slot(tel *t, uint64_t row) {
  if (t->nwatch == 0) return NULL;
  if (row >= t->watch_cap) {
    size_t old = t->watch_cap;
    sim_grow((void **)&t->watch_rows, &t->watch_cap, (size_t)row + 1,
             t->nwatch * sizeof *t->watch_rows);
    memset(t->watch_rows + old * t->nwatch, 0,
           (t->watch_cap - old) * t->nwatch * sizeof *t->watch_rows);
  }
  return t->watch_rows + (size_t)row * t->nwatch;
}

/* After a row ending at b was stored (nrows now): open the next interval. */
static void group_next(tel *t, tel__group *g, simtime_ps b, size_t nrows) {
  g->prev_quiet = g->touches == 0 && b - g->open_start == t->c.interval;
  g->touches = 0;
  g->open++;
  g->open_start = b;
  if (nrows >= t->c.max_rows) {
    g->frozen = true;
    t->truncated = true;
  }
}

static bool can_copy(const tel *t, const tel__group *g, simtime_ps b, size_t nrows) {
  return nrows > 0 && !g->backlog && g->touches == 0 && g->prev_quiet &&
         b - g->open_start == t->c.interval;
}

static inline uint32_t nic_at(const tel *t, uint32_t nic) {
  return t->nic_cls ? t->nic_cls[nic] : nic;
}

/* One byte per row of slack (whole bytes spread over rows), in bit-ps. */
#define TEL__SLACK ((tel__u128)8 * SIM_PS_PER_S)

/* A row's bits of meter m over [open_start, b) (bit-ps: bits x 1e12)
 * against its line rate `bps`, the line-rate invariant: what the row shows
 * (m->shown). Without carry (tel_config.carry) the meter's value, the
 * first above the line rate kept as tel_over; with it, the value plus
 * what earlier rows carried, at most the line rate, the excess carried on
 * (m->backlog). A row that takes or leaves a backlog sets the group's
 * (can_copy: the next row is computed). Within the slack: as offered. */
static tel__u128 row_bits(tel *t, tel__group *g, tel__meter *m, rate_bps bps, simtime_ps b,
                          bool carry, tel_over who) {
  simtime_ps dt = b - g->open_start;
  tel__u128 v = meter_value(g, m, b) + m->backlog, cap = (tel__u128)bps * dt;
  if (m->backlog) g->backlog = true; /* this row is no copy of the last, nor the next of it */
  m->backlog = 0;
  if (v <= cap + TEL__SLACK) return m->shown = v;
  who.at = g->open_start;
  who.gbps = (double)v / (double)dt / 1e9;
  who.line = (double)bps / 1e9;
  who.found = true;
  if (!carry) {
    if (!t->over.found) t->over = who;
    return m->shown = v;
  }
  if (!t->carried.found) t->carried = who;
  t->carry_last = who;
  m->backlog = v - cap;
  g->backlog = true;
  return m->shown = cap;
}

/* The first of n entities in class c (only when the line rate was passed). */
static uint32_t member(const uint32_t *cls, uint32_t n, uint32_t c) {
  for (uint32_t i = 0; i < n; i++)
    if (cls[i] == c) return i;
  return c;
}

/* A NIC row's figures of direction d, every NIC its own: the total from
 * the exact sum of the meters, percentiles by selection. */
static void nic_dir_each(tel *t, simtime_ps b, double dt, int d, tel_nic_row *row) {
  tel__group *g = &t->nic_g;
  tel__u128 sum = 0;
  double max = 0;
  uint32_t active = 0;
  for (uint32_t i = 0; i < t->c.nics; i++) {
    tel__u128 m = row_bits(t, g, &t->nic[d][i], t->c.nic_line_bps, b, t->c.carry & TEL_CARRY_NICS,
                           (tel_over){.entity = i, .dir = d});
    double v = (double)m / dt / 1e9;
    t->scratch[i] = v;
    sum += m;
    active += v > 0;
    if (v > max) max = v;
  }
  row->total_gbps[d] = (double)sum / dt / 1e9;
  row->max_gbps[d] = max;
  row->active[d] = active;
  row->p50_gbps[d] = percentile(t->scratch, t->c.nics, 0.50);
  row->p99_gbps[d] = percentile(t->scratch, t->c.nics, 0.99);
}

/* The same from the classes: each class's value weighed by its members. */
static void nic_dir_classes(tel *t, simtime_ps b, double dt, int d, tel_nic_row *row) {
  tel__group *g = &t->nic_g;
  uint32_t k = t->nnic_cls;
  tel__u128 sum = 0;
  double max = 0;
  uint32_t active = 0;
  for (uint32_t c = 0; c < k; c++) {
    tel__u128 m = row_bits(t, g, &t->nic[d][c], t->c.nic_line_bps, b, t->c.carry & TEL_CARRY_NICS,
                           (tel_over){.entity = member(t->nic_cls, t->c.nics, c), .dir = d});
    double v = (double)m / dt / 1e9;
    t->wscratch[c] = (tel__wval){v, t->nic_w[c]};
    sum += m * t->nic_w[c];
    if (v > 0) active += t->nic_w[c];
    if (v > max) max = v;
  }
  row->total_gbps[d] = (double)sum / dt / 1e9;
  row->max_gbps[d] = max;
  row->active[d] = active;
  qsort(t->wscratch, k, sizeof *t->wscratch, wval_cmp);
  row->p50_gbps[d] = percentile_w(t->wscratch, k, t->c.nics, 0.50);
  row->p99_gbps[d] = percentile_w(t->wscratch, k, t->c.nics, 0.99);
}

static void close_nic(tel *t, simtime_ps b) {
  tel__group *g = &t->nic_g;
  sim_grow((void **)&t->nic_rows, &t->nic_cap, t->nic_nrows + 1, sizeof *t->nic_rows);
  tel_nic_row *row = &t->nic_rows[t->nic_nrows];
  tel_watch_row *w = watch_slot(t, g->open);
  uint32_t wp = t->c.nwatch_ports;
  if (can_copy(t, g, b, t->nic_nrows)) {
    *row = row[-1];
    if (w)
      for (uint32_t k = wp; k < t->nwatch; k++) w[k] = (w - t->nwatch)[k];
  } else {
    double dt = (double)(b - g->open_start);
    memset(row, 0, sizeof *row);
    g->backlog = false;
    for (int d = 0; d < 2; d++) {
      if (t->nic_cls) nic_dir_classes(t, b, dt, d, row);
      else nic_dir_each(t, b, dt, d, row);
    }
    for (uint32_t k = wp; w && k < t->nwatch; k++) {
      uint32_t i = nic_at(t, t->watch[k]);
      for (int d = 0; d < 2; d++) w[k].gbps[d] = (double)t->nic[d][i].shown / dt / 1e9;
      w[k].util = t->c.nic_bps ? w[k].gbps[0] * 1e9 / (double)t->c.nic_bps : 0;
    }
  }
  t->nic_nrows++;
  group_next(t, g, b, t->nic_nrows);
}

/* A port row's figures, every port its own. */
static void port_row_each(tel *t, simtime_ps b, double dt, tel_port_row *row) {
  tel__group *g = &t->port_g;
  uint32_t n = t->c.ports;
  double *util = t->scratch, *queue = t->scratch + (n ? n : 1);
  double sum = 0, umax = 0, qmax = 0, ecn = 0, paused = 0;
  uint32_t npaused = 0;
  for (uint32_t i = 0; i < n; i++) {
    tel__u128 bits = row_bits(t, g, &t->port_bits[i], t->port_bps[i], b,
                              t->c.carry & TEL_CARRY_PORTS, (tel_over){.port = true, .entity = i});
    double u = (double)bits / dt / (double)t->port_bps[i];
    double q = (double)level_value(g, &t->port_queue[i]);
    double p = (double)meter_value(g, &t->port_pause[i], b);
    util[i] = u;
    queue[i] = q;
    sum += u;
    if (u > umax) umax = u;
    if (q > qmax) qmax = q;
    ecn += (double)meter_value(g, &t->port_ecn[i], b);
    paused += p;
    npaused += p > 0;
  }
  row->util_mean = n ? sum / n : 0;
  row->util_max = umax;
  row->queue_max_bytes = qmax;
  row->ecn_marks = ecn;
  row->pfc_paused_s = paused * 1e-12;
  row->paused_ports = npaused;
  row->util_p50 = percentile(util, n, 0.50);
  row->util_p99 = percentile(util, n, 0.99);
  row->queue_p99_bytes = percentile(queue, n, 0.99);
}

/* The same from the classes: values per class (util, queue, pause, marks
 * in scratch[0..4k)), sums in port order, percentiles by weight. */
static void port_row_classes(tel *t, simtime_ps b, double dt, tel_port_row *row) {
  tel__group *g = &t->port_g;
  uint32_t n = t->c.ports, k = t->nport_cls, *cls = t->port_cls;
  double *util = t->scratch, *queue = util + k, *pause = queue + k, *ecn = pause + k;
  double sum = 0, umax = 0, qmax = 0, marks = 0, paused = 0;
  uint32_t npaused = 0;
  bool any_u = false, any_e = false, any_p = false;
  for (uint32_t c = 0; c < k; c++) {
    tel__u128 bits =
        row_bits(t, g, &t->port_bits[c], t->port_cls_bps[c], b, t->c.carry & TEL_CARRY_PORTS,
                 (tel_over){.port = true, .entity = member(cls, n, c)});
    util[c] = (double)bits / dt / (double)t->port_cls_bps[c];
    queue[c] = (double)level_value(g, &t->port_queue[c]);
    pause[c] = (double)meter_value(g, &t->port_pause[c], b);
    ecn[c] = (double)meter_value(g, &t->port_ecn[c], b);
    any_u |= util[c] != 0, any_e |= ecn[c] != 0, any_p |= pause[c] != 0;
    if (util[c] > umax) umax = util[c];
    if (queue[c] > qmax) qmax = queue[c];
    if (pause[c] > 0) npaused += t->port_w[c];
  }
  for (uint32_t i = 0; any_u && i < n; i++) sum += util[cls[i]]; /* + 0 changes no sum */
  for (uint32_t i = 0; any_e && i < n; i++) marks += ecn[cls[i]];
  for (uint32_t i = 0; any_p && i < n; i++) paused += pause[cls[i]];
  row->util_mean = n ? sum / n : 0;
  row->util_max = umax;
  row->queue_max_bytes = qmax;
  row->ecn_marks = marks;
  row->pfc_paused_s = paused * 1e-12;
  row->paused_ports = npaused;
  for (int pass = 0; pass < 2; pass++) {
    const double *v = pass ? queue : util;
    for (uint32_t c = 0; c < k; c++) t->wscratch[c] = (tel__wval){v[c], t->port_w[c]};
    qsort(t->wscratch, k, sizeof *t->wscratch, wval_cmp);
    if (pass) {
      row->queue_p99_bytes = percentile_w(t->wscratch, k, n, 0.99);
    } else {
      row->util_p50 = percentile_w(t->wscratch, k, n, 0.50);
      row->util_p99 = percentile_w(t->wscratch, k, n, 0.99);
    }
  }
}

static void close_port(tel *t, simtime_ps b) {
  tel__group *g = &t->port_g;
  sim_grow((void **)&t->port_rows, &t->port_cap, t->port_nrows + 1, sizeof *t->port_rows);
  tel_port_row *row = &t->port_rows[t->port_nrows];
  tel_watch_row *w = watch_slot(t, g->open);
  uint32_t wp = t->c.nwatch_ports;
  if (can_copy(t, g, b, t->port_nrows)) {
    *row = row[-1];
    if (w)
      for (uint32_t k = 0; k < wp; k++) w[k] = (w - t->nwatch)[k];
  } else {
    double dt = (double)(b - g->open_start);
    memset(row, 0, sizeof *row); /* padding too: rows compare byte for byte */
    g->backlog = false;
    if (t->port_cls) port_row_classes(t, b, dt, row);
    else port_row_each(t, b, dt, row);
    for (uint32_t k = 0; w && k < wp; k++) {
      uint32_t i = port_at(t, t->watch[k]);
      double bits = (double)t->port_bits[i].shown / dt;
      w[k].gbps[0] = bits / 1e9;
      w[k].gbps[1] = 0;
      w[k].util = bits / (double)t->port_bps[t->watch[k]];
      w[k].queue_max_bytes = (double)level_value(g, &t->port_queue[i]);
      w[k].ecn_marks = (double)meter_value(g, &t->port_ecn[i], b);
      w[k].pfc_paused_s = (double)meter_value(g, &t->port_pause[i], b) * 1e-12;
    }
  }
  t->port_nrows++;
  group_next(t, g, b, t->port_nrows);
}

static void close_gpu(tel *t, simtime_ps b) {
  tel__group *g = &t->gpu_g;
  tel__gpu_integrate(t, b);
  sim_grow((void **)&t->gpu_rows, &t->gpu_cap, t->gpu_nrows + 1, sizeof *t->gpu_rows);
  tel_gpu_row *row = &t->gpu_rows[t->gpu_nrows++];
  double denom = (double)t->c.gpus * (double)(b - g->open_start);
  for (int s = 0; s < TEL_GPU_NSTATES; s++) {
    row->frac[s] = denom > 0 ? (double)t->gpu_acc[s] / denom : 0;
    t->gpu_acc[s] = 0;
  }
  group_next(t, g, b, t->gpu_nrows);
}

typedef void (*close_fn)(tel *t, simtime_ps b);

static inline void group_advance(tel *t, tel__group *g, simtime_ps now, close_fn close) {
  while (!g->frozen && now - g->open_start >= t->c.interval)
    close(t, g->open_start + t->c.interval);
}

void tel__gpu_integrate(tel *t, simtime_ps now) {
  assert(now >= t->gpu_last);
  simtime_ps dt = now - t->gpu_last;
  for (int s = 0; s < TEL_GPU_NSTATES; s++) {
    tel__u128 d = (tel__u128)t->gpu_count[s] * dt;
    t->gpu_acc[s] += d;
    t->gpu_cum[s] += d;
  }
  t->gpu_last = now;
}

void tel__gpu_advance(tel *t, simtime_ps now) {
  group_advance(t, &t->gpu_g, now, close_gpu);
  tel__gpu_integrate(t, now);
}

/* ---- create / destroy ---------------------------------------------------------------- */

int tel_create(tel **out, const tel_config *c, sim_error *err) {
  *out = NULL;
  if (c->interval == 0)
    return sim_fail(err, SIM_EINVAL, "telemetry: the sample interval must be > 0");
  tel *t = sim_calloc(1, sizeof *t);
  t->c = *c;
  if (t->c.max_rows == 0) t->c.max_rows = 1000000;
  if (t->c.nic_line_bps == 0) t->c.nic_line_bps = c->nic_bps ? c->nic_bps : 1;
  t->port_bps = sim_malloc((c->ports ? c->ports : 1) * sizeof *t->port_bps);
  for (uint32_t i = 0; i < c->ports; i++) {
    rate_bps r = c->port_bps ? c->port_bps[i] : c->nic_bps;
    t->port_bps[i] = r ? r : 1;
  }
  t->nwatch = c->nwatch_ports + c->nwatch_nics;
  t->watch = sim_malloc((t->nwatch ? t->nwatch : 1) * sizeof *t->watch);
  for (uint32_t k = 0; k < c->nwatch_ports; k++) {
    assert(c->watch_ports[k] < c->ports);
    t->watch[k] = c->watch_ports[k];
  }
  for (uint32_t k = 0; k < c->nwatch_nics; k++) {
    assert(c->watch_nics[k] < c->nics);
    t->watch[c->nwatch_ports + k] = c->watch_nics[k];
  }
  t->c.port_bps = t->port_bps;
  t->c.watch_ports = t->watch;
  t->c.watch_nics = t->watch + c->nwatch_ports;

  t->gpu_state = sim_calloc(c->gpus ? c->gpus : 1, 1);
  t->gpu_count[TEL_GPU_IDLE] = c->gpus;
  for (int d = 0; d < 2; d++) t->nic[d] = sim_calloc(c->nics ? c->nics : 1, sizeof(tel__meter));
  size_t np = c->ports ? c->ports : 1;
  t->port_bits = sim_calloc(np, sizeof(tel__meter));
  t->port_pause = sim_calloc(np, sizeof(tel__meter));
  t->port_ecn = sim_calloc(np, sizeof(tel__meter));
  t->port_queue = sim_calloc(np, sizeof(tel__level));
  for (uint32_t i = 0; i < c->nics; i++) t->nic[0][i].touched = t->nic[1][i].touched = UINT64_MAX;
  for (uint32_t i = 0; i < c->ports; i++)
    t->port_bits[i].touched = t->port_pause[i].touched = t->port_ecn[i].touched =
        t->port_queue[i].touched = UINT64_MAX;
  size_t most = c->nics > c->ports ? c->nics : c->ports;
  t->scratch = sim_malloc(2 * (most ? most : 1) * sizeof *t->scratch);
  *out = t;
  return SIM_OK;
}

void tel_destroy(tel *t) {
  if (!t) return;
  tel__log_free(t);
  sim_free(t->port_bps);
  sim_free(t->watch);
  sim_free(t->gpu_state);
  sim_free(t->gpu_rows);
  for (int d = 0; d < 2; d++) sim_free(t->nic[d]);
  sim_free(t->nic_rows);
  sim_free(t->port_bits);
  sim_free(t->port_pause);
  sim_free(t->port_ecn);
  sim_free(t->port_queue);
  sim_free(t->port_rows);
  sim_free(t->watch_rows);
  sim_free(t->scratch);
  sim_free(t->port_cls);
  sim_free(t->port_w);
  sim_free(t->port_cls_bps);
  sim_free(t->nic_cls);
  sim_free(t->nic_w);
  sim_free(t->wscratch);
  sim_free(t);
}

/* ---- classes -------------------------------------------------------------------------------- */

static void class_setup(tel *t, const uint32_t *cls, uint32_t n, uint32_t ncls, uint32_t **of,
                        uint32_t **w) {
  *of = sim_malloc((n ? n : 1) * sizeof **of);
  *w = sim_calloc(ncls ? ncls : 1, sizeof **w);
  for (uint32_t i = 0; i < n; i++) {
    assert(cls[i] < ncls);
    (*of)[i] = cls[i];
    (*w)[cls[i]]++;
  }
  size_t most = t->c.nics > t->c.ports ? t->c.nics : t->c.ports;
  if (4 * (size_t)ncls > t->cls_scratch) { /* a value per class of each of four kinds */
    t->cls_scratch = 4 * (size_t)ncls;
    t->wscratch = sim_realloc(t->wscratch, t->cls_scratch * sizeof *t->wscratch);
    if (t->cls_scratch > 2 * most)
      t->scratch = sim_realloc(t->scratch, t->cls_scratch * sizeof *t->scratch);
  }
}

void tel__port_classes(tel *t, const uint32_t *cls, uint32_t ncls) {
  assert(!(t->observed &
           (TEL_OBS_PORT_UTIL | TEL_OBS_PORT_QUEUE | TEL_OBS_PORT_ECN | TEL_OBS_PORT_PFC)) &&
         !t->port_cls && ncls <= t->c.ports);
  class_setup(t, cls, t->c.ports, ncls, &t->port_cls, &t->port_w);
  t->nport_cls = ncls;
  t->port_cls_bps = sim_malloc((ncls ? ncls : 1) * sizeof *t->port_cls_bps);
  for (uint32_t i = t->c.ports; i-- > 0;) t->port_cls_bps[cls[i]] = t->port_bps[i];
  for (uint32_t i = 0; i < t->c.ports; i++) assert(t->port_cls_bps[cls[i]] == t->port_bps[i]);
}

void tel__nic_classes(tel *t, const uint32_t *cls, uint32_t ncls) {
  assert(!(t->observed & TEL_OBS_NIC) && !t->nic_cls && ncls <= t->c.nics);
  class_setup(t, cls, t->c.nics, ncls, &t->nic_cls, &t->nic_w);
  t->nnic_cls = ncls;
}

/* ---- feeding ----------------------------------------------------------------------------- */

void tel_gpu_count_move(tel *t, simtime_ps now, tel_gpu_state from, tel_gpu_state to, uint32_t n) {
  assert(!t->finished && (unsigned)from < TEL_GPU_NSTATES && (unsigned)to < TEL_GPU_NSTATES);
  tel__gpu_advance(t, now);
  if (n > t->gpu_count[from]) n = (uint32_t)t->gpu_count[from];
  t->gpu_count[from] -= n;
  t->gpu_count[to] += n;
  t->observed |= TEL_OBS_GPU;
}

void tel_gpu_state_set(tel *t, simtime_ps now, uint32_t gpu, tel_gpu_state s) {
  assert(!t->finished && gpu < t->c.gpus && (unsigned)s < TEL_GPU_NSTATES);
  tel__gpu_advance(t, now);
  uint8_t old = t->gpu_state[gpu];
  t->gpu_count[old]--;
  t->gpu_count[s]++;
  t->gpu_state[gpu] = (uint8_t)s;
  t->observed |= TEL_OBS_GPU;
}

static tel__meter *nic_meter(tel *t, simtime_ps now, uint32_t nic, tel_dir d) {
  assert(!t->finished && nic < t->c.nics && (unsigned)d < 2);
  group_advance(t, &t->nic_g, now, close_nic);
  tel__meter *m = &t->nic[d][nic_at(t, nic)];
  meter_touch(&t->nic_g, m, now);
  t->observed |= TEL_OBS_NIC;
  return m;
}

void tel_nic_bytes(tel *t, simtime_ps now, uint32_t nic, tel_dir d, uint64_t bytes) {
  tel__meter *m = nic_meter(t, now, nic, d);
  tel__u128 a = (tel__u128)bytes * 8u * SIM_PS_PER_S;
  m->acc += a;
  m->cum += a;
}

void tel_nic_rate(tel *t, simtime_ps now, uint32_t nic, tel_dir d, int64_t delta_bps) {
  meter_rate(nic_meter(t, now, nic, d), delta_bps);
}

static void port_enter(tel *t, simtime_ps now, uint32_t port, unsigned obs) {
  assert(!t->finished && port < t->c.ports);
  (void)port;
  group_advance(t, &t->port_g, now, close_port);
  t->observed |= obs;
}

void tel_port_bytes(tel *t, simtime_ps now, uint32_t port, uint64_t bytes) {
  port_enter(t, now, port, TEL_OBS_PORT_UTIL);
  tel__meter *m = &t->port_bits[port_at(t, port)];
  meter_touch(&t->port_g, m, now);
  tel__u128 a = (tel__u128)bytes * 8u * SIM_PS_PER_S;
  m->acc += a;
  m->cum += a;
}

void tel_port_rate(tel *t, simtime_ps now, uint32_t port, int64_t delta_bps) {
  port_enter(t, now, port, TEL_OBS_PORT_UTIL);
  tel__meter *m = &t->port_bits[port_at(t, port)];
  meter_touch(&t->port_g, m, now);
  meter_rate(m, delta_bps);
}

void tel_port_queue(tel *t, simtime_ps now, uint32_t port, uint64_t depth_bytes) {
  port_enter(t, now, port, TEL_OBS_PORT_QUEUE);
  level_touch(&t->port_g, &t->port_queue[port_at(t, port)], depth_bytes);
}

void tel_port_ecn(tel *t, simtime_ps now, uint32_t port, uint64_t marks) {
  port_enter(t, now, port, TEL_OBS_PORT_ECN);
  tel__meter *m = &t->port_ecn[port_at(t, port)];
  meter_touch(&t->port_g, m, now);
  m->acc += marks;
  m->cum += marks;
}

void tel_port_pause(tel *t, simtime_ps now, uint32_t port, bool paused) {
  port_enter(t, now, port, TEL_OBS_PORT_PFC);
  tel__meter *m = &t->port_pause[port_at(t, port)];
  meter_touch(&t->port_g, m, now);
  m->rate = paused ? 1 : 0;
}

/* ---- finish and read ---------------------------------------------------------------------- */

/* Bytes meter m of an entity with w members still carries; its group's
 * backlog (rows going on) aside. */
static double left_bytes(const tel__group *g, const tel__meter *m, uint64_t w) {
  return g->frozen ? 0 : (double)(m->backlog / SIM_PS_PER_S) / 8 * (double)w;
}

/* What is still carried at the end: counted, or tel_over (carry_last). */
static void carry_end(tel *t) {
  double left = 0;
  uint32_t nn = t->nic_cls ? t->nnic_cls : t->c.nics, np = t->port_cls ? t->nport_cls : t->c.ports;
  for (int d = 0; d < 2; d++)
    for (uint32_t i = 0; i < nn; i++)
      left += left_bytes(&t->nic_g, &t->nic[d][i], t->nic_cls ? t->nic_w[i] : 1);
  for (uint32_t i = 0; i < np; i++)
    left += left_bytes(&t->port_g, &t->port_bits[i], t->port_cls ? t->port_w[i] : 1);
  t->carry_left = left;
  if (left > 0 && !t->c.carry_may_remain && !t->over.found) t->over = t->carry_last;
}

void tel_close_rows(tel *t, simtime_ps end) {
  assert(!t->finished);
  if (t->rows_closed) return;
  tel__gpu_advance(t, end);
  if (!t->gpu_g.frozen && end > t->gpu_g.open_start) close_gpu(t, end);
  group_advance(t, &t->nic_g, end, close_nic);
  if (!t->nic_g.frozen && end > t->nic_g.open_start) close_nic(t, end);
  group_advance(t, &t->port_g, end, close_port);
  if (!t->port_g.frozen && end > t->port_g.open_start) close_port(t, end);
  assert(t->gpu_nrows == t->nic_nrows && t->nic_nrows == t->port_nrows);
  carry_end(t);
  t->rows_closed = true;
}

void tel_finish(tel *t, simtime_ps end) {
  tel_close_rows(t, end);
  t->end = end;
  tel__log_finish(t);
  t->finished = true;
}

simtime_ps tel_interval(const tel *t) { return t->c.interval; }

bool tel_over_line(const tel *t, tel_over *out) {
  if (out) *out = t->over;
  return t->over.found;
}

bool tel_line_carried(const tel *t, tel_over *first, double *left) {
  if (first) *first = t->carried;
  if (left) *left = t->carry_left;
  return t->carried.found;
}
simtime_ps tel_interval_requested(const tel *t) { return t->c.requested; }

simtime_ps tel_interval_fit(simtime_ps end, simtime_ps want, uint32_t max_rows) {
  if (want == 0 || max_rows == 0 || end / want < max_rows ||
      (end / want == max_rows && end % want == 0))
    return want; /* ceil(end / want) <= max_rows */
  simtime_ps need = end / max_rows + (end % max_rows != 0), step = 1; /* at least this */
  for (;;) {
    if (step >= need) return step;
    if (2 * step >= need) return 2 * step;
    if (5 * step >= need) return 5 * step;
    if (step > SIM_TIME_MAX / 10) return SIM_TIME_MAX;
    step *= 10;
  }
}
simtime_ps tel_end(const tel *t) { return t->end; }
unsigned tel_observed(const tel *t) { return t->observed; }
bool tel_truncated(const tel *t) { return t->truncated; }
size_t tel_rows(const tel *t) { return t->gpu_nrows; }
simtime_ps tel_row_start(const tel *t, size_t i) { return (simtime_ps)i * t->c.interval; }
simtime_ps tel_row_length(const tel *t, size_t i) {
  simtime_ps s = tel_row_start(t, i);
  return t->end - s < t->c.interval ? t->end - s : t->c.interval;
}
const tel_gpu_row *tel_gpu_row_at(const tel *t, size_t i) { return &t->gpu_rows[i]; }
const tel_nic_row *tel_nic_row_at(const tel *t, size_t i) { return &t->nic_rows[i]; }
const tel_port_row *tel_port_row_at(const tel *t, size_t i) { return &t->port_rows[i]; }
uint32_t tel_watch_count(const tel *t) { return t->nwatch; }
const tel_watch_row *tel_watch_row_at(const tel *t, size_t i, uint32_t w) {
  return &t->watch_rows[i * t->nwatch + w];
}
uint32_t tel_watch_entity(const tel *t, uint32_t w, bool *is_nic) {
  if (is_nic) *is_nic = w >= t->c.nwatch_ports;
  return t->watch[w];
}

static bool hotter(const tel_port_total *a, const tel_port_total *b) {
  return a->bytes > b->bytes || (a->bytes == b->bytes && a->port < b->port);
}

size_t tel_top_ports(const tel *t, tel_port_total *out, size_t k) {
  size_t n = 0;
  double secs = sim_ps_to_s(t->end);
  for (uint32_t i = 0; i < t->c.ports && k > 0; i++) {
    tel_port_total p;
    memset(&p, 0, sizeof p); /* padding too */
    p.port = i;
    uint32_t c = port_at(t, i);
    p.bytes = (double)meter_total(&t->port_bits[c], t->end) / 8e12;
    if (p.bytes <= 0) continue;
    if (n == k && !hotter(&p, &out[n - 1])) continue;
    p.util = secs > 0 ? p.bytes * 8 / ((double)t->port_bps[i] * secs) : 0;
    p.queue_max_bytes = t->port_queue[c].max_all;
    p.ecn_marks = (uint64_t)meter_total(&t->port_ecn[c], t->end);
    p.pfc_paused = (simtime_ps)meter_total(&t->port_pause[c], t->end);
    size_t j = n < k ? n++ : n - 1;
    while (j > 0 && hotter(&p, &out[j - 1])) {
      out[j] = out[j - 1];
      j--;
    }
    out[j] = p;
  }
  return n;
}

void tel_totals_get(const tel *t, tel_totals *o) {
  memset(o, 0, sizeof *o);
  for (int d = 0; d < 2; d++)
    for (uint32_t i = 0; i < t->c.nics; i++)
      o->nic_bytes[d] += (double)meter_total(&t->nic[d][nic_at(t, i)], t->end) / 8e12;
  for (uint32_t i = 0; i < t->c.ports; i++) {
    uint32_t c = port_at(t, i);
    o->port_bytes += (double)meter_total(&t->port_bits[c], t->end) / 8e12;
    o->ecn_marks += (uint64_t)meter_total(&t->port_ecn[c], t->end);
    o->pfc_paused += (simtime_ps)meter_total(&t->port_pause[c], t->end);
    if (t->port_queue[c].max_all > o->queue_max_bytes)
      o->queue_max_bytes = t->port_queue[c].max_all;
  }
  double denom = (double)t->c.gpus * (double)t->end;
  for (int s = 0; s < TEL_GPU_NSTATES; s++)
    o->gpu_frac[s] = denom > 0 ? (double)t->gpu_cum[s] / denom : 0;
  o->fct_count = t->fct_n;
}
