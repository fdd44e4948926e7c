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
 * Cost: O(total path length) per phase, independent of `repeat`, so a ring
 * AllReduce on 131,072 GPUs is one routing pass over n x channels transfers.
 */
#include <assert.h>

#include "fabsim/backend.h"

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
} analytic;

typedef struct analytic_phase {
  analytic *a;
  struct analytic_phase *prev, *next; /* in a->live */
  uint32_t *paths;                    /* flat: [len, ch0, ch1, ...] per transfer */
  size_t words;
  uint64_t transfers, bytes;
  be_done_fn done;
  void *ctx;
} analytic_phase;

static void phase_free(analytic_phase *ph) {
  analytic *a = ph->a;
  if (ph->prev) ph->prev->next = ph->next;
  else a->live = ph->next;
  if (ph->next) ph->next->prev = ph->prev;
  sim_free(ph->paths);
  sim_free(ph);
}

static void analytic_phase_done(sim_ctx *sim, void *obj, uint64_t arg) {
  analytic_phase *ph = obj;
  analytic *a = ph->a;
  (void)arg;
  for (size_t i = 0; i < ph->words;) {
    uint32_t len = ph->paths[i++];
    for (uint32_t j = 0; j < len; j++) {
      assert(a->sharing[ph->paths[i + j]] > 0);
      a->sharing[ph->paths[i + j]]--;
    }
    i += len;
  }
  a->st.transfers += ph->transfers;
  a->st.bytes += ph->bytes;
  be_done_fn done = ph->done;
  void *ctx = ph->ctx;
  phase_free(ph);
  if (done) done(sim, ctx);
}

static simtime_ps sat_add(simtime_ps a, simtime_ps b) {
  return a > SIM_TIME_MAX - b ? SIM_TIME_MAX : a + b;
}

static void analytic_submit_phase(be_backend *b, const be_xfer *x, size_t n, uint64_t repeat,
                                  be_done_fn done, void *ctx) {
  analytic *a = (analytic *)b;
  const topo *t = b->topo;
  analytic_phase *ph = sim_calloc(1, sizeof *ph);
  ph->a = a;
  ph->next = a->live;
  if (a->live) a->live->prev = ph;
  a->live = ph;
  ph->done = done;
  ph->ctx = ctx;
  size_t cap = 0;
  /* Route and count. Latency per transfer on its real path (a sprayed
   * transfer's equal-cost paths all have the same). */
  simtime_ps *lat = sim_malloc((n ? n : 1) * sizeof *lat);
  for (size_t i = 0; i < n; i++) {
    topo_path p = {0};
    if (x[i].src_gpu != x[i].dst_gpu) {
      if (a->split == TOPO_SPLIT_ADAPTIVE)
        topo_route_adaptive(t, NULL, x[i].src_gpu, x[i].dst_gpu, x[i].flow_hash, a->sharing, &p);
      else topo_route(t, x[i].src_gpu, x[i].dst_gpu, x[i].flow_hash, &p);
    }
    lat[i] = p.n ? topo_path_latency(t, &p) : 0;
    sim_grow((void **)&ph->paths, &cap, ph->words + 1 + p.n, sizeof *ph->paths);
    ph->paths[ph->words++] = p.n;
    for (uint32_t j = 0; j < p.n; j++) {
      uint32_t ch = a->split == TOPO_SPLIT_POOLS ? topo_spray_channel(t, p.ch[j]) : p.ch[j];
      ph->paths[ph->words++] = ch;
      if (++a->sharing[ch] > a->st.max_link_sharing) a->st.max_link_sharing = a->sharing[ch];
    }
  }
  /* Cost: the slowest transfer. */
  simtime_ps phase = 0;
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
    be_fct_add(&a->fct, tx);
    ph->bytes += x[i].bytes;
  }
  sim_free(lat);
  ph->transfers = (uint64_t)n * repeat;
  ph->bytes *= repeat;
  simtime_ps total = repeat && phase > SIM_TIME_MAX / repeat ? SIM_TIME_MAX : phase * repeat;
  ev_schedule(b->sim, sat_add(sim_now(b->sim), total), analytic_phase_done, ph, 0);
}

static void analytic_stats(const be_backend *b, be_stats *out) {
  analytic *a = (analytic *)b;
  *out = a->st;
  be_fct_summarize(&a->fct, out);
}

static void analytic_destroy(be_backend *b) {
  analytic *a = (analytic *)b;
  while (a->live) phase_free(a->live);
  sim_free(a->sharing);
  sim_free(a->cap);
  be_fct_free(&a->fct);
  sim_free(a);
}

static const be_ops analytic_ops = {
    .name = "analytic",
    .submit_phase = analytic_submit_phase,
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
    a->cap[c] = c < nch ? topo_link_at(t, topo_channel_link(c))->bps : topo_pool_bps(t, c);
  return &a->base;
}
