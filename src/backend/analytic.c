/* Analytic fidelity: alpha-beta cost on the real routed paths.
 *
 * A phase's transfers are routed as fabric.routing says, as the packet model
 * will (topo_split_of: static D-mod-K and ECMP by flow hash: topo_route;
 * adaptive per flowlet: per transfer, the least-loaded equal-cost port at
 * each hop given the transfers counted so far, topo_route_adaptive; spray,
 * and adaptive per packet: split over the equal-cost paths, counted on the
 * pools of links it loads alike, topo_spray_channel), then counted onto the
 * channels they cross. A transfer's rate is the
 * smallest channel rate along its path divided by the number of transfers
 * sharing that channel at submission (this phase's and any phase still in
 * flight); its time is the path latency (links and vertices) plus the
 * serialization of its bytes at that rate. The phase takes the time of its
 * slowest transfer, times `repeat`. Rates are fixed at submission: a phase
 * that starts later does not slow one already running (the flow fidelity
 * recomputes rates; this one only counts).
 *
 * Traffic classes (fabric.classes) are not modelled here: transfers of every
 * class count alike on a channel, as if one class (no strict priority, no
 * weights, nothing lossy); a run that uses classes at this fidelity says so
 * in its notes (docs/shared-fabric.md, "Traffic classes").
 *
 * Cost: O(total path length) per phase, independent of `repeat`, so a ring
 * AllReduce on 131,072 GPUs is one routing pass over n x channels transfers.
 *
 * Slices of a pool (be_ops.submit_slice; the tree's phases are windows
 * sliding over its pool): the pool is routed once, and a window stays
 * counted on the channels after its phase ends, until the next slice of
 * the same pool replaces it by what enters and leaves (or anything else is
 * submitted, or the pool is released: then it is taken off). The next
 * slice's transfers are re-timed only where a channel's count changed, and
 * the window's times are kept as a multiset (value -> count), which gives
 * the phase's slowest transfer and its FCT samples. Every figure is what
 * submit_phase gives for the same slice; the cost is O(paths of what enters
 * or leaves + transfers sharing a channel with them + distinct times) per
 * phase, O(total path length of the pool) memory.
 *
 * Classes (slices that carry their pool's cuts, be_slice.cuts): with
 * nothing else in flight, a transfer's time depends only on its bytes,
 * latency and the counts on its channels, and those are alike for the
 * members of a class of the pool's quotient by its segments (be_quot). So
 * the window is kept per class instead: each channel class's count moves
 * by the runs of the segments that enter and leave, each transfer class of
 * the window is timed once, and its time counts for its members (the
 * phase's slowest and the FCT samples). Every figure is the per-transfer
 * one. When anything else is in flight the per-transfer path takes the
 * pool over (a phase submitted while a class window runs first counts that
 * window on the channels, transfer by transfer). Cost per phase: O(runs of
 * the segments entering and leaving + transfer classes of the window x
 * their channel classes), memory O(classes) beside the quotient's.
 */
#include <assert.h>
#include <string.h>

#include "backend/analytic_internal.h"

/* A pool's routes and the window of it counted on the channels. */
typedef struct pool_cache {
  const be_xfer *pool; /* NULL: none cached */
  size_t n;
  size_t *off;     /* n + 1: transfer i's channels are ch[off[i] .. off[i + 1]) */
  uint32_t *ch;    /* channel (spray: pool channel) per hop */
  simtime_ps *lat; /* path latency */
  simtime_ps *tx;  /* time of a transfer in the window */
  rate_bps *rate;  /* its bottleneck: smallest capacity / count on its path */
  rate_bps *share; /* per channel of the window: capacity / count, as last timed */
  struct {
    uint64_t bytes;
    rate_bps rate;
    simtime_ps ser;
  } memo[256];       /* serialization times computed, by (bytes, rate) */
  uint64_t *prefix;  /* n + 1: bytes of transfers before i */
  size_t *by_ch_off; /* channels + 1: the pool's transfers on channel c are */
  uint32_t *by_ch;   /* by_ch[by_ch_off[c] .. by_ch_off[c + 1]), ascending */
  uint64_t *queued;  /* bit per transfer: to re-time at this move */
  uint32_t *dirty;   /* channels whose count changed */
  uint32_t *ch_mark; /* per channel: epoch when marked dirty */
  uint32_t *ch_was;  /* per dirty channel: its count when the window was last timed */
  size_t ndirty;
  uint32_t epoch;
  size_t lo, hi;   /* the window [lo, hi) */
  bool counted;    /* the window is counted on the channels (in sharing) */
  bool live;       /* its phase is in flight */
  bool released;   /* pool_release came while live: forget it at its end */
  sim_counts hist; /* times of the window's transfers */
} pool_cache;

/* The class path's window over a pool's quotient. */
typedef struct class_win {
  const be_xfer *pool; /* NULL: none */
  const be_quot *q;    /* &own, or the slice's (then owned by its caller) */
  be_quot own;
  const be_xfer *no_quot;    /* a pool whose quotient could not be built: per transfer */
  uint32_t slo, shi;         /* the window, in segments (equal: empty) */
  uint32_t *cnt;             /* per channel class: the window's transfers on each member */
  simtime_ps *tc_tx;         /* per transfer class: its time, as last timed (only with
                                be_backend.on_xfer: the report is per transfer) */
  bool live;                 /* its phase is in flight */
  bool released;             /* pool_release came while live */
  struct analytic_phase *ph; /* the phase in flight */
} class_win;

typedef struct analytic {
  be_backend base;    /* first: be_backend * <-> analytic * */
  uint32_t *sharing;  /* per channel and spray pool: transfers in flight on it */
  rate_bps *cap;      /* per channel and spray pool */
  uint32_t nchannels; /* channels + pools */
  topo_split split;   /* how fabric.routing is modelled (topo_split_of) */
  be_stats st;
  be_fct fct;                  /* one sample per transfer of one repetition */
  struct analytic_phase *live; /* phases in flight; owned: freed at destroy when a run
                                  stops before their completion event */
  pool_cache pc;               /* the slice path's pool (static and ECMP routing, spray) */
  class_win cw;                /* the class path's pool (slices with cuts) */
  uint64_t class_phases;       /* phases timed by classes (tests) */
} analytic;

typedef struct analytic_phase {
  analytic *a;
  struct analytic_phase *prev, *next; /* in a->live */
  uint32_t *paths;                    /* flat: [len, ch0, ch1, ...] per transfer */
  size_t words;
  uint64_t transfers, bytes;
  be_done_fn done;
  void *ctx;
  bool window;   /* the pool cache's window: stays counted at its end */
  bool by_class; /* the class window (never counted on the channels) */
  uint8_t cls;   /* its first transfer's traffic class: be_stats.class_bytes counts the
                    phase there (every plan fabsim builds is one class) */
} analytic_phase;

static void phase_free(analytic_phase *ph) {
  analytic *a = ph->a;
  if (ph->prev) ph->prev->next = ph->next;
  else a->live = ph->next;
  if (ph->next) ph->next->prev = ph->prev;
  sim_free(ph->paths);
  sim_free(ph);
}

static simtime_ps sat_add(simtime_ps a, simtime_ps b) {
  return a > SIM_TIME_MAX - b ? SIM_TIME_MAX : a + b;
}

/* ---- one transfer ------------------------------------------------------------------------ */

static void route_one(const analytic *a, const be_xfer *x, topo_path *p) {
  const topo *t = a->base.topo;
  p->n = 0;
  if (x->src_gpu == x->dst_gpu) return;
  if (a->split == TOPO_SPLIT_ADAPTIVE)
    topo_route_adaptive(t, NULL, x->src_gpu, x->dst_gpu, x->flow_hash, a->sharing, p);
  else topo_route(t, x->src_gpu, x->dst_gpu, x->flow_hash, p);
}

static uint32_t count_channel(const analytic *a, uint32_t ch) {
  return a->split == TOPO_SPLIT_POOLS ? topo_spray_channel(a->base.topo, ch) : ch;
}

/* A channel's count changed outside the counted window: its transfers
 * there are re-timed at the window's next move. */
static void pool_dirty(analytic *a, uint32_t ch) {
  pool_cache *pc = &a->pc;
  if (pc->ch_mark[ch] == pc->epoch) return;
  pc->ch_mark[ch] = pc->epoch;
  pc->ch_was[ch] = a->sharing[ch];
  pc->dirty[pc->ndirty++] = ch;
}

/* The transfers' times to the on_xfer hook (be_xfer_end), one record: the
 * same in every repetition, which starts `period` after the last. */
static void report_times(const be_backend *b, void *ctx, const simtime_ps *lat,
                         const simtime_ps *tx, size_t n, simtime_ps period, uint64_t repeat) {
  be_xfer_report(b, &(be_xfer_end){.phase = ctx,
                                   .xfer = 0,
                                   .n = n,
                                   .start = sim_now(b->sim),
                                   .period = period,
                                   .reps = repeat,
                                   .delivered = tx,
                                   .latency = lat});
}

static void analytic_phase_done(sim_ctx *sim, void *obj, uint64_t arg);
static void pool_uncount(analytic *a);
static void pool_forget(analytic *a);
static void class_materialize(analytic *a);
static void class_drop(analytic *a);

/* A phase of the analytic backend, in flight from now (linked into
 * a->live; its completion not scheduled yet). */
static analytic_phase *phase_new(analytic *a, be_done_fn done, void *ctx) {
  analytic_phase *ph = sim_calloc(1, sizeof *ph);
  ph->a = a;
  ph->next = a->live;
  if (a->live) a->live->prev = ph;
  a->live = ph;
  ph->done = done;
  ph->ctx = ctx;
  return ph;
}

/* ph completes after `phase` x repeat (saturating). */
static void phase_schedule(analytic *a, analytic_phase *ph, simtime_ps phase, uint64_t repeat) {
  simtime_ps total = repeat && phase > SIM_TIME_MAX / repeat ? SIM_TIME_MAX : phase * repeat;
  ev_schedule(a->base.sim, sat_add(sim_now(a->base.sim), total), analytic_phase_done, ph, 0);
}

static void analytic_submit_phase(be_backend *b, const be_xfer *x, size_t n, uint64_t repeat,
                                  be_done_fn done, void *ctx) {
  analytic *a = (analytic *)b;
  const topo *t = b->topo;
  pool_cache *pc = &a->pc;
  if (a->cw.live) class_materialize(a);          /* it must see the class window */
  if (pc->counted && !pc->live) pool_uncount(a); /* a retired window goes first */
  analytic_phase *ph = phase_new(a, done, ctx);
  size_t cap = 0;
  /* Route and count. Latency per transfer on its real path (a sprayed
   * transfer's equal-cost paths all have the same). */
  simtime_ps *lat = sim_malloc((n ? n : 1) * sizeof *lat);
  for (size_t i = 0; i < n; i++) {
    topo_path p;
    route_one(a, &x[i], &p);
    lat[i] = p.n ? topo_path_latency(t, &p) : 0;
    sim_grow((void **)&ph->paths, &cap, ph->words + 1 + p.n, sizeof *ph->paths);
    ph->paths[ph->words++] = p.n;
    for (uint32_t j = 0; j < p.n; j++) {
      uint32_t ch = count_channel(a, p.ch[j]);
      ph->paths[ph->words++] = ch;
      if (pc->counted) pool_dirty(a, ch); /* before the count changes */
      if (++a->sharing[ch] > a->st.max_link_sharing) a->st.max_link_sharing = a->sharing[ch];
    }
  }
  /* Cost: the slowest transfer. */
  simtime_ps phase = 0, *txs = b->on_xfer ? sim_malloc((n ? n : 1) * sizeof *txs) : NULL;
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t len = ph->paths[w++];
    rate_bps rate = UINT64_MAX;
    for (uint32_t j = 0; j < len; j++) {
      uint32_t ch = ph->paths[w++];
      rate_bps r = a->cap[ch] / a->sharing[ch];
      if (r < rate) rate = r;
    }
    simtime_ps tx = 0;
    if (len > 0) tx = sat_add(lat[i], sim_serialization_ps(x[i].bytes, rate ? rate : 1));
    if (tx > phase) phase = tx;
    if (txs) txs[i] = tx;
    be_fct_add(&a->fct, tx);
    ph->bytes += x[i].bytes;
  }
  if (txs) report_times(b, ctx, lat, txs, n, phase, repeat);
  sim_free(txs);
  sim_free(lat);
  ph->transfers = (uint64_t)n * repeat;
  ph->cls = n ? x[0].tclass & 7 : 0;
  ph->bytes *= repeat;
  phase_schedule(a, ph, phase, repeat);
}

static void analytic_phase_done(sim_ctx *sim, void *obj, uint64_t arg) {
  analytic_phase *ph = obj;
  analytic *a = ph->a;
  pool_cache *pc = &a->pc;
  (void)arg;
  for (size_t i = 0; i < ph->words;) {
    uint32_t len = ph->paths[i++];
    for (uint32_t j = 0; j < len; j++) {
      assert(a->sharing[ph->paths[i + j]] > 0);
      if (pc->counted) pool_dirty(a, ph->paths[i + j]);
      a->sharing[ph->paths[i + j]]--;
    }
    i += len;
  }
  a->st.transfers += ph->transfers;
  a->st.bytes += ph->bytes;
  a->st.class_bytes[ph->cls] += ph->bytes;
  if (ph->window) { /* the window stays counted until the next slice moves it */
    pc->live = false;
    if (pc->released) pool_forget(a);
  }
  if (ph->by_class) {
    a->cw.live = false;
    a->cw.ph = NULL;
    if (a->cw.released) class_drop(a);
  }
  be_done_fn done = ph->done;
  void *ctx = ph->ctx;
  phase_free(ph);
  if (done) done(sim, ctx);
}

/* ---- slices of a pool -------------------------------------------------------------------- */

/* Route every transfer of sl's pool once and index them by channel.
 * O(total path length). */
static void pool_build(analytic *a, const be_slice *sl) {
  const topo *t = a->base.topo;
  pool_cache *pc = &a->pc;
  size_t n = sl->pool_n, words = 0, cap = 0;
  pc->pool = sl->pool;
  pc->n = n;
  pc->off = sim_malloc((n + 1) * sizeof *pc->off);
  pc->lat = sim_malloc((n ? n : 1) * sizeof *pc->lat);
  pc->tx = sim_malloc((n ? n : 1) * sizeof *pc->tx);
  pc->rate = sim_malloc((n ? n : 1) * sizeof *pc->rate);
  pc->prefix = sim_malloc((n + 1) * sizeof *pc->prefix);
  pc->queued = sim_calloc(n / 64 + 1, sizeof *pc->queued);
  pc->prefix[0] = 0;
  for (size_t i = 0; i < n; i++) {
    topo_path p;
    route_one(a, &sl->pool[i], &p);
    pc->lat[i] = p.n ? topo_path_latency(t, &p) : 0;
    pc->off[i] = words;
    sim_grow((void **)&pc->ch, &cap, words + p.n + 1, sizeof *pc->ch);
    for (uint32_t j = 0; j < p.n; j++) pc->ch[words++] = count_channel(a, p.ch[j]);
    pc->prefix[i + 1] = pc->prefix[i] + sl->pool[i].bytes;
  }
  pc->off[n] = words;
  uint32_t nch = a->nchannels;
  pc->by_ch_off = sim_calloc((size_t)nch + 1, sizeof *pc->by_ch_off);
  for (size_t w = 0; w < words; w++) pc->by_ch_off[pc->ch[w] + 1]++;
  for (uint32_t c = 0; c < nch; c++) pc->by_ch_off[c + 1] += pc->by_ch_off[c];
  size_t *fill = sim_malloc(((size_t)nch + 1) * sizeof *fill);
  memcpy(fill, pc->by_ch_off, ((size_t)nch + 1) * sizeof *fill);
  pc->by_ch = sim_malloc((words ? words : 1) * sizeof *pc->by_ch);
  for (size_t i = 0; i < n; i++)
    for (size_t w = pc->off[i]; w < pc->off[i + 1]; w++) pc->by_ch[fill[pc->ch[w]]++] = (uint32_t)i;
  sim_free(fill);
  pc->dirty = sim_malloc((nch ? nch : 1) * sizeof *pc->dirty);
  pc->ch_mark = sim_calloc(nch ? nch : 1, sizeof *pc->ch_mark);
  pc->ch_was = sim_malloc((nch ? nch : 1) * sizeof *pc->ch_was);
  pc->share = sim_calloc(nch ? nch : 1, sizeof *pc->share);
  pc->epoch = 1;
  sim_counts_init(&pc->hist);
}

/* Take the window off the channels (its phase has ended). O(its paths). */
static void pool_uncount(analytic *a) {
  pool_cache *pc = &a->pc;
  if (!pc->counted) return;
  for (size_t i = pc->lo; i < pc->hi; i++)
    for (size_t w = pc->off[i]; w < pc->off[i + 1]; w++) {
      assert(a->sharing[pc->ch[w]] > 0);
      a->sharing[pc->ch[w]]--;
    }
  pc->counted = false;
  pc->ndirty = 0;
  pc->epoch++;
  sim_counts_clear(&pc->hist);
}

static void pool_forget(analytic *a) {
  pool_cache *pc = &a->pc;
  if (!pc->pool) return;
  pool_uncount(a);
  sim_free(pc->off);
  sim_free(pc->ch);
  sim_free(pc->lat);
  sim_free(pc->tx);
  sim_free(pc->rate);
  sim_free(pc->prefix);
  sim_free(pc->by_ch_off);
  sim_free(pc->by_ch);
  sim_free(pc->queued);
  sim_free(pc->dirty);
  sim_free(pc->ch_mark);
  sim_free(pc->ch_was);
  sim_free(pc->share);
  sim_counts_free(&pc->hist);
  memset(pc, 0, sizeof *pc);
}

/* sim_serialization_ps, remembered by (bytes, rate): a window's transfers
 * have few of each. */
static simtime_ps pool_serialization(pool_cache *pc, uint64_t bytes, rate_bps rate) {
  size_t k = (size_t)(sim_hash_u64(bytes ^ sim_hash_u64(rate)) & 255u);
  if (pc->memo[k].bytes != bytes || pc->memo[k].rate != rate || pc->memo[k].ser == 0) {
    pc->memo[k].bytes = bytes;
    pc->memo[k].rate = rate;
    pc->memo[k].ser = sim_serialization_ps(bytes, rate);
  }
  return pc->memo[k].ser;
}

/* Time pool transfer i at the channels' present shares (share[] up to date
 * on its channels): its rate and time. */
static void pool_time(analytic *a, size_t i) {
  pool_cache *pc = &a->pc;
  rate_bps rate = UINT64_MAX;
  for (size_t w = pc->off[i]; w < pc->off[i + 1]; w++)
    if (pc->share[pc->ch[w]] < rate) rate = pc->share[pc->ch[w]];
  pc->rate[i] = rate;
  pc->tx[i] = pc->off[i] == pc->off[i + 1]
                  ? 0
                  : sat_add(pc->lat[i], pool_serialization(pc, pc->pool[i].bytes, rate ? rate : 1));
}

/* Count [lo, hi) on the channels and time it, as submit_phase does. */
static void window_count(analytic *a, size_t lo, size_t hi) {
  pool_cache *pc = &a->pc;
  for (size_t i = lo; i < hi; i++)
    for (size_t w = pc->off[i]; w < pc->off[i + 1]; w++) {
      uint32_t ch = pc->ch[w];
      if (++a->sharing[ch] > a->st.max_link_sharing) a->st.max_link_sharing = a->sharing[ch];
    }
  for (size_t w = pc->off[lo]; w < pc->off[hi]; w++)
    pc->share[pc->ch[w]] = a->cap[pc->ch[w]] / a->sharing[pc->ch[w]];
  for (size_t i = lo; i < hi; i++) {
    pool_time(a, i);
    sim_counts_add(&pc->hist, pc->tx[i], 1);
  }
  pc->ndirty = 0;
  pc->epoch++;
  pc->lo = lo;
  pc->hi = hi;
  pc->counted = true;
}

/* Move the counted window to [lo, hi): what leaves comes off the channels,
 * what enters goes on. A transfer of the new window is re-timed when it
 * enters, or when a channel of its path changed count (here or, since the
 * last move, by other phases) so that its rate may have changed: the
 * channel's new share is below its rate, or its old share was its rate.
 * The busiest changed channel is the only count that can exceed what
 * max_link_sharing has seen: a channel of the window whose count did not
 * change had that count at the previous slice. */
static void window_move(analytic *a, size_t lo, size_t hi) {
  pool_cache *pc = &a->pc;
  size_t r[2][2], in[2][2];
  int k = sim_range_minus(pc->lo, pc->hi, lo, hi, r);
  for (int q = 0; q < k; q++)
    for (size_t i = r[q][0]; i < r[q][1]; i++) {
      sim_counts_sub(&pc->hist, pc->tx[i]);
      for (size_t w = pc->off[i]; w < pc->off[i + 1]; w++) {
        pool_dirty(a, pc->ch[w]);
        a->sharing[pc->ch[w]]--;
      }
    }
  int nin = sim_range_minus(lo, hi, pc->lo, pc->hi, in);
  for (int q = 0; q < nin; q++)
    for (size_t i = in[q][0]; i < in[q][1]; i++) {
      for (size_t w = pc->off[i]; w < pc->off[i + 1]; w++) {
        pool_dirty(a, pc->ch[w]);
        a->sharing[pc->ch[w]]++;
      }
      pc->queued[i / 64] |= 1ull << (i % 64);
    }
  for (size_t d = 0; d < pc->ndirty; d++) {
    uint32_t ch = pc->dirty[d], was = pc->ch_was[ch], now = a->sharing[ch];
    rate_bps r_was = was ? a->cap[ch] / was : UINT64_MAX,
             r_now = now ? a->cap[ch] / now : UINT64_MAX;
    /* even when the count is back where it was (another phase ended while
     * a transfer of the window entered): a channel the window did not
     * cross when last timed has no share kept */
    pc->share[ch] = r_now;
    if (was == now) continue; /* every share on it as it was */
    bool used = false;
    const uint32_t *it = pc->by_ch + pc->by_ch_off[ch], *end = pc->by_ch + pc->by_ch_off[ch + 1];
    for (size_t len = (size_t)(end - it); len > 0;) { /* the first at or after lo */
      size_t half = len / 2;
      if (it[half] < lo) it += half + 1, len -= half + 1;
      else len = half;
    }
    for (; it < end && *it < hi; it++) {
      uint32_t i = *it;
      used = true;
      if (r_now >= pc->rate[i] && (r_was != pc->rate[i] || r_now == r_was)) continue;
      pc->queued[i / 64] |= 1ull << (i % 64);
    }
    if (used && now > a->st.max_link_sharing) a->st.max_link_sharing = now;
  }
  /* re-time in pool order (the arrays are walked forward, not at random) */
  for (size_t wd = lo / 64; wd <= (hi - 1) / 64; wd++) {
    uint64_t bits = pc->queued[wd];
    pc->queued[wd] = 0;
    while (bits) {
      size_t i = wd * 64 + (size_t)__builtin_ctzll(bits);
      bits &= bits - 1;
      bool entering =
          (nin > 0 && i >= in[0][0] && i < in[0][1]) || (nin > 1 && i >= in[1][0] && i < in[1][1]);
      simtime_ps was = pc->tx[i];
      pool_time(a, i);
      if (entering || was != pc->tx[i]) {
        if (!entering) sim_counts_sub(&pc->hist, was);
        sim_counts_add(&pc->hist, pc->tx[i], 1);
      }
    }
  }
  pc->ndirty = 0;
  pc->epoch++;
  pc->lo = lo;
  pc->hi = hi;
}

/* ---- slices of a pool, by classes ---------------------------------------------------------- */

static void class_drop(analytic *a) {
  class_win *cw = &a->cw;
  if (cw->q == &cw->own) be_quot_free(&cw->own);
  sim_free(cw->cnt);
  sim_free(cw->tc_tx);
  const be_xfer *no_quot = cw->no_quot;
  memset(cw, 0, sizeof *cw);
  cw->no_quot = no_quot;
}

/* The class window in flight is counted on the channels, transfer by
 * transfer, and the per-transfer path takes its pool over: before anything
 * else is counted, so that it sees the window. O(the pool's paths). (A
 * pool released with its window in flight, against be_ops.pool_release,
 * cannot be read: its window is forgotten.) */
static void class_materialize(analytic *a) {
  class_win *cw = &a->cw;
  be_slice sl = {.pool = cw->pool, .pool_n = cw->q->pool_n};
  assert(cw->live && !a->pc.pool);
  if (cw->released) {
    cw->ph->by_class = false;
    class_drop(a);
    return;
  }
  pool_build(a, &sl);
  window_count(a, cw->q->cuts[cw->slo], cw->q->cuts[cw->shi]);
  a->pc.live = true;
  a->pc.released = cw->released;
  cw->ph->by_class = false;
  cw->ph->window = true;
  class_drop(a);
}

/* Move the class window to segments [slo, shi) and time it: the phase's
 * slowest transfer, its FCT samples (each class's time, its members
 * times), the busiest channel's count (a class whose count rose is in an
 * entering segment; the others had their count at the last move). */
static simtime_ps class_move(analytic *a, uint32_t slo, uint32_t shi) {
  class_win *cw = &a->cw;
  const be_quot *q = cw->q;
  for (int sign = -1; sign <= 1; sign += 2) {
    size_t r[2][2]; /* leaving: old less new; entering: new less old */
    int k = sign < 0 ? sim_range_minus(cw->slo, cw->shi, slo, shi, r)
                     : sim_range_minus(slo, shi, cw->slo, cw->shi, r);
    for (int j = 0; j < k; j++)
      for (size_t e = q->seg_cc_off[r[j][0]]; e < q->seg_cc_off[r[j][1]]; e++) {
        uint32_t c = q->seg_cc[e].cls;
        if (sign < 0) {
          assert(cw->cnt[c] >= q->seg_cc[e].count);
          cw->cnt[c] -= q->seg_cc[e].count;
        } else {
          cw->cnt[c] += q->seg_cc[e].count;
        }
      }
    if (sign > 0)
      for (int j = 0; j < k; j++)
        for (size_t e = q->seg_cc_off[r[j][0]]; e < q->seg_cc_off[r[j][1]]; e++)
          if (cw->cnt[q->seg_cc[e].cls] > a->st.max_link_sharing)
            a->st.max_link_sharing = cw->cnt[q->seg_cc[e].cls];
  }
  cw->slo = slo;
  cw->shi = shi;
  simtime_ps phase = 0;
  for (uint32_t k = q->seg_tc[slo]; k < q->seg_tc[shi]; k++) {
    simtime_ps tx = 0;
    if (q->tc_poff[k] < q->tc_poff[k + 1]) {
      rate_bps rate = UINT64_MAX;
      for (uint32_t j = q->tc_poff[k]; j < q->tc_poff[k + 1]; j++) {
        uint32_t c = q->tc_path[j];
        rate_bps r = q->cc_cap[c] / cw->cnt[c];
        if (r < rate) rate = r;
      }
      tx = sat_add(q->tc_lat[k], pool_serialization(&a->pc, q->tc_bytes[k], rate ? rate : 1));
    }
    if (tx > phase) phase = tx;
    if (cw->tc_tx) cw->tc_tx[k] = tx;
    be_fct_add_n(&a->fct, tx, q->tc_w[k]);
  }
  return phase;
}

/* The window's times per transfer to the on_xfer hook, from its classes
 * (the record the per-transfer path gives). O(the slice's transfers). */
static void class_report(analytic *a, const be_slice *sl, simtime_ps phase, uint64_t repeat,
                         void *ctx) {
  const class_win *cw = &a->cw;
  const be_quot *q = cw->q;
  simtime_ps *tx = sim_malloc((sl->n ? sl->n : 1) * sizeof *tx);
  simtime_ps *lat = sim_malloc((sl->n ? sl->n : 1) * sizeof *lat);
  for (size_t i = 0; i < sl->n; i++) {
    uint32_t k = q->tc_of[sl->off + i];
    tx[i] = cw->tc_tx[k];
    lat[i] = q->tc_lat[k];
  }
  report_times(&a->base, ctx, lat, tx, sl->n, phase, repeat);
  sim_free(tx);
  sim_free(lat);
}

/* The class path, when it applies (cuts, nothing else in flight, no
 * per-transfer cache): true when the slice was submitted. */
static bool class_submit(analytic *a, const be_slice *sl, uint64_t repeat, be_done_fn done,
                         void *ctx) {
  class_win *cw = &a->cw;
  if (!sl->cuts || a->pc.pool || (cw->pool && cw->pool != sl->pool) || cw->no_quot == sl->pool)
    return false;
  if (a->live) { /* its counts would change this slice's times: per transfer from here */
    if (cw->pool && !cw->live) class_drop(a);
    return false;
  }
  if (!cw->pool) {
    if (sl->quot && sl->quot->split == a->split && sl->quot->pool == sl->pool) {
      cw->q = sl->quot;
    } else if (be_quot_build(&cw->own, a->base.topo, sl, a->split) == SIM_OK) {
      cw->q = &cw->own;
    } else {
      cw->no_quot = sl->pool;
      return false;
    }
    cw->pool = sl->pool;
    cw->cnt = sim_calloc(cw->q->ncc ? cw->q->ncc : 1, sizeof *cw->cnt);
    if (a->base.on_xfer) cw->tc_tx = sim_malloc((cw->q->ntc ? cw->q->ntc : 1) * sizeof *cw->tc_tx);
  }
  uint32_t slo, shi;
  if (!be_quot_window(cw->q, sl, &slo, &shi) || slo == shi) {
    class_drop(a);
    cw->no_quot = sl->pool;
    return false;
  }
  simtime_ps phase = class_move(a, slo, shi);
  if (cw->tc_tx) class_report(a, sl, phase, repeat, ctx);
  a->class_phases++;
  analytic_phase *ph = phase_new(a, done, ctx);
  phase_schedule(a, ph, phase, repeat);
  ph->by_class = true;
  ph->transfers = (uint64_t)sl->n * repeat;
  ph->cls = sl->pool[sl->off].tclass & 7; /* sl->n > 0 here */
  uint64_t bytes = 0;
  for (uint32_t s = slo; s < shi; s++) bytes += cw->q->seg_bytes[s];
  ph->bytes = bytes * repeat;
  cw->live = true;
  cw->ph = ph;
  return true;
}

static void analytic_submit_slice(be_backend *b, const be_slice *sl, uint64_t repeat,
                                  be_done_fn done, void *ctx) {
  analytic *a = (analytic *)b;
  pool_cache *pc = &a->pc;
  if (a->split != TOPO_SPLIT_ADAPTIVE && sl->n > 0 && class_submit(a, sl, repeat, done, ctx))
    return;
  if (a->cw.live) class_materialize(a); /* what follows must see the class window */
  /* One pool at a time, one window of it in flight: anything else (and
   * adaptive routing, which routes by the counts) takes the plain path. */
  if (a->split == TOPO_SPLIT_ADAPTIVE || sl->n == 0 || sl->pool_n >= UINT32_MAX ||
      (pc->pool && (pc->pool != sl->pool || pc->n != sl->pool_n || pc->live))) {
    analytic_submit_phase(b, sl->pool + sl->off, sl->n, repeat, done, ctx);
    return;
  }
  if (!pc->pool) pool_build(a, sl);
  if (pc->counted) window_move(a, sl->off, sl->off + sl->n);
  else window_count(a, sl->off, sl->off + sl->n);
  /* Cost: the slowest transfer; the FCT samples: the window's times. */
  simtime_ps phase = 0;
  sim_counts *h = &pc->hist;
  sim_counts_compact(h);
  uint64_t v, n;
  for (size_t i = 0; i < h->cap; i++) {
    if (!sim_counts_at(h, i, &v, &n)) continue;
    if (v > phase) phase = v;
    be_fct_add_n(&a->fct, v, n);
  }
  if (b->on_xfer) report_times(b, ctx, pc->lat + sl->off, pc->tx + sl->off, sl->n, phase, repeat);
  analytic_phase *ph = phase_new(a, done, ctx);
  ph->window = true;
  ph->transfers = (uint64_t)sl->n * repeat;
  ph->cls = sl->n ? sl->pool[sl->off].tclass & 7 : 0;
  ph->bytes = (pc->prefix[sl->off + sl->n] - pc->prefix[sl->off]) * repeat;
  pc->live = true;
  phase_schedule(a, ph, phase, repeat);
}

static void analytic_pool_release(be_backend *b, const be_xfer *pool) {
  analytic *a = (analytic *)b;
  if (a->cw.no_quot == pool) a->cw.no_quot = NULL; /* its memory may hold another pool next */
  if (a->cw.pool == pool) {
    if (a->cw.live) a->cw.released = true;
    else class_drop(a);
  }
  if (a->pc.pool != pool) return;
  if (a->pc.live) a->pc.released = true;
  else pool_forget(a);
}

static void analytic_stats(const be_backend *b, be_stats *out) {
  analytic *a = (analytic *)b;
  *out = a->st;
  be_fct_summarize(&a->fct, out);
}

static void analytic_destroy(be_backend *b) {
  analytic *a = (analytic *)b;
  while (a->live) phase_free(a->live);
  pool_forget(a);
  class_drop(a);
  sim_free(a->sharing);
  sim_free(a->cap);
  be_fct_free(&a->fct);
  sim_free(a);
}

uint64_t be__analytic_class_phases(const be_backend *b) {
  return ((const analytic *)b)->class_phases;
}

static const be_ops analytic_ops = {
    .name = "analytic",
    .submit_phase = analytic_submit_phase,
    .submit_slice = analytic_submit_slice,
    .pool_release = analytic_pool_release,
    .stats = analytic_stats,
    .destroy = analytic_destroy,
};

be_backend *be_analytic_create(sim_ctx *sim, const topo *t, const cfg_scenario *cfg) {
  analytic *a = sim_calloc(1, sizeof *a);
  a->base.ops = &analytic_ops;
  a->base.sim = sim;
  a->base.topo = t;
  a->base.cfg = cfg;
  uint32_t nch = 2 * topo_link_count(t);
  a->split = topo_split_of(cfg);
  a->nchannels = nch + (a->split == TOPO_SPLIT_POOLS ? topo_pool_count(t) : 0);
  a->sharing = sim_calloc(a->nchannels ? a->nchannels : 1, sizeof *a->sharing);
  a->cap = sim_malloc((a->nchannels ? a->nchannels : 1) * sizeof *a->cap);
  for (uint32_t c = 0; c < a->nchannels; c++)
    a->cap[c] = c < nch ? topo_channel_bps(t, c) : topo_pool_bps(t, c);
  return &a->base;
}
