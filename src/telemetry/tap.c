/* Telemetry tap: a pass-through backend that logs phases, and their replay
 * into a tel (see fabsim/tel_tap.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/tel_tap.h"
#include "telemetry/tap_nic.h"

/* ---- port map ------------------------------------------------------------------ */

void tel_portmap_build(tel_portmap *m, const topo *t) {
  uint32_t nch = 2 * topo_link_count(t);
  memset(m, 0, sizeof *m);
  m->port_of_channel = sim_malloc((nch ? nch : 1) * sizeof *m->port_of_channel);
  for (uint32_t ch = 0; ch < nch; ch++)
    m->port_of_channel[ch] =
        topo_vertex_at(t, topo_channel_src(t, ch))->kind == TOPO_SWITCH ? m->nports++ : UINT32_MAX;
  m->channel_of_port = sim_malloc((m->nports ? m->nports : 1) * sizeof *m->channel_of_port);
  m->bps = sim_malloc((m->nports ? m->nports : 1) * sizeof *m->bps);
  for (uint32_t ch = 0; ch < nch; ch++) {
    uint32_t p = m->port_of_channel[ch];
    if (p == UINT32_MAX) continue;
    m->channel_of_port[p] = ch;
    m->bps[p] = topo_link_at(t, topo_channel_link(ch))->bps;
  }
}

void tel_portmap_free(tel_portmap *m) {
  sim_free(m->port_of_channel);
  sim_free(m->channel_of_port);
  sim_free(m->bps);
  memset(m, 0, sizeof *m);
}

const char *tel_port_name(const topo *t, const tel_portmap *m, uint32_t port, char *buf, size_t n) {
  if (port >= m->nports) {
    snprintf(buf, n, "?port%u", port);
    return buf;
  }
  return topo_channel_name(t, m->channel_of_port[port], buf, n);
}

int tel_port_find(const topo *t, const tel_portmap *m, const char *name, uint32_t *port) {
  uint32_t ch;
  if (topo_find_channel(t, name, &ch) != SIM_OK || m->port_of_channel[ch] == UINT32_MAX)
    return SIM_ENOENT;
  *port = m->port_of_channel[ch];
  return SIM_OK;
}

/* ---- the tap backend ------------------------------------------------------------------ */

typedef struct tap_entry {
  uint32_t ch;
  uint64_t bytes; /* all repetitions */
} tap_entry;

typedef struct tap_phase {
  simtime_ps start, end; /* end: SIM_TIME_MAX while running */
  size_t first, count;   /* entries */
  size_t gfirst, gcount; /* GPUs */
  void *pending;         /* its tap_done while running (freed at destroy if never done) */
} tap_phase;

enum { TAP_MAX_EVENTS = 64 };

typedef struct tap_event {
  simtime_ps at;
  uint32_t ch, users; /* ch UINT32_MAX: the "more phases" note */
} tap_event;

struct tel_tap {
  be_backend base; /* first: be_backend * <-> tel_tap * */
  be_backend *inner;
  be_ops ops; /* tap_ops less what inner does not have */
  tap_event *ev;
  size_t nev, evcap;
  tap_phase *ph;
  size_t nph, phcap;
  tap_entry *ent;
  size_t nent, entcap;
  uint32_t *gpus;
  size_t ngpus, gcap;
  uint64_t *ch_bytes;  /* scratch per channel */
  uint32_t *ch_users;  /* scratch per channel */
  uint32_t *touched;   /* scratch: channels touched by the phase being logged */
  uint64_t *gpu_stamp; /* last phase (index + 1) that listed the GPU */
  uint32_t events, last_ch, last_users;
  /* the backend's routing (fabric.routing), so bytes land on the ports the
   * analytic and flow fidelities use (topo_split_of): adaptive per flowlet
   * counts the transfers of the phases in flight as they do (load); spray
   * and adaptive per packet spread each transfer evenly over the links of
   * the pools it crosses (pool_bytes, pool_users scratch). The packet
   * fidelity decides those per packet: there the ports are the fluid
   * approximation of the same policy. */
  topo_split split;
  uint32_t *load;
  uint64_t *pool_bytes;
  uint32_t *pool_users, *pool_touched, npools;
  struct tap_pool *tp; /* slices of a pool (static and ECMP routing): NULL until one comes */
  tel__niclog nic;     /* each phase's transfers on their NICs, when they moved (tap_nic.c) */
};

/* A pool's routes and the window of it logged last: what each channel and
 * GPU carries in the window, kept as slices move (see tap_submit_slice). */
typedef struct tap_pool {
  const be_xfer *pool;
  size_t n;
  size_t *off; /* n + 1: transfer i's channels are ch[off[i] .. off[i + 1]) */
  uint32_t *ch;
  size_t lo, hi;    /* the window */
  uint32_t *users;  /* per channel: the window's transfers on it */
  uint64_t *bytes;  /* per channel: their bytes */
  uint64_t *busy;   /* bit per channel: users > 0 */
  uint32_t *gusers; /* per GPU: ends of the window's transfers on it */
  uint64_t *gbusy;  /* bit per GPU: gusers > 0 */
  uint32_t nch, ng;
  uint8_t *switched; /* per channel: 1 when one of its ends is a switch */
  uint32_t *nics;    /* per transfer: the NIC it leaves from, then the one it arrives at */
} tap_pool;

typedef struct tap_done {
  tel_tap *tap;
  size_t idx;
  be_done_fn done;
  void *ctx;
  uint32_t *paths; /* adaptive: the channels its transfers were counted on */
  size_t npaths;
} tap_done;

/* The NIC a path of channels ch[0..n) leaves the host from (nic[0]) and
 * arrives at (nic[1]), or UINT32_MAX: the ends of its endpoint links (a:
 * the NIC, so channel 2l leaves it). O(n). */
static void path_nics(const topo *t, const uint32_t *ch, size_t n, uint32_t nic[2]) {
  nic[0] = nic[1] = UINT32_MAX;
  for (size_t j = 0; j < n; j++) {
    const topo_link *k = topo_link_at(t, topo_channel_link(ch[j]));
    uint32_t i = topo_vertex_at(t, k->a)->index;
    /* a storage server's NIC (index past the compute nodes') has no NIC series */
    if (k->kind == TOPO_LINK_ENDPOINT && i < topo_nic_count(t)) nic[ch[j] & 1] = i;
  }
}

/* A backend's be_xfer_end: its phase's ctx is the tap's tap_done. */
static void tap_xfer(void *ctx, const be_xfer_end *e) {
  tel_tap *tap = ctx;
  const tap_done *d = e->phase;
  tel__niclog_report(&tap->nic, d->idx, e->xfer, e->n, e->start, e->period, e->reps, e->delivered,
                     e->latency);
}

static void tap_phase_done(sim_ctx *sim, void *obj) {
  tap_done *d = obj;
  be_done_fn done = d->done;
  void *ctx = d->ctx;
  for (size_t k = 0; k < d->npaths; k++) d->tap->load[d->paths[k]]--;
  sim_free(d->paths);
  tel__niclog_end(&d->tap->nic, d->idx, sim_now(sim));
  d->tap->ph[d->idx].end = sim_now(sim);
  d->tap->ph[d->idx].pending = NULL;
  sim_free(d);
  if (done) done(sim, ctx);
}

static bool is_fabric_channel(const topo *t, uint32_t ch) {
  topo_lkind k = topo_link_at(t, topo_channel_link(ch))->kind;
  return k == TOPO_LINK_ENDPOINT || k == TOPO_LINK_FABRIC;
}

/* The most shared fabric channel of this phase (its channels touched[0..nt),
 * their transfers ch_users), as an event when > 1. */
static void log_sharing(tel_tap *tap, const uint32_t *touched, const uint32_t *ch_users,
                        uint32_t nt, simtime_ps now) {
  const topo *t = tap->base.topo;
  uint32_t best = UINT32_MAX, users = 1;
  for (uint32_t k = 0; k < nt; k++) {
    uint32_t ch = touched[k];
    if (ch_users[ch] > users && is_fabric_channel(t, ch)) {
      users = ch_users[ch];
      best = ch;
    } else if (ch_users[ch] == users && best != UINT32_MAX && ch < best &&
               is_fabric_channel(t, ch)) {
      best = ch;
    }
  }
  if (best == UINT32_MAX || (best == tap->last_ch && users == tap->last_users)) return;
  tap->last_ch = best;
  tap->last_users = users;
  if (tap->events > TAP_MAX_EVENTS) return;
  sim_grow((void **)&tap->ev, &tap->evcap, tap->nev + 1, sizeof *tap->ev);
  tap->ev[tap->nev++] = (tap_event){
      .at = now, .ch = tap->events++ == TAP_MAX_EVENTS ? UINT32_MAX : best, .users = users};
}

static void replay_events(const tel_tap *tap, tel *tl) {
  const topo *t = tap->base.topo;
  for (size_t i = 0; i < tap->nev; i++) {
    const tap_event *e = &tap->ev[i];
    char name[112], effect[200];
    if (e->ch == UINT32_MAX) {
      tel_event(tl, e->at, "fabric", "shared-channel",
                "more phases share channels; further ones are not logged", (double)e->users);
      continue;
    }
    rate_bps bps = topo_link_at(t, topo_channel_link(e->ch))->bps;
    snprintf(effect, sizeof effect,
             "%u transfers of one phase share it: each gets at most 1/%u of %.4g Gb/s", e->users,
             e->users, (double)bps / 1e9);
    tel_event(tl, e->at, topo_channel_name(t, e->ch, name, sizeof name), "shared-channel", effect,
              (double)e->users);
  }
}

/* Log a phase of x[0..n) starting now; its completion record (pass
 * tap_phase_done and it to the inner backend). */
static tap_done *tap_log(be_backend *b, const be_xfer *x, size_t n, uint64_t repeat,
                         be_done_fn done, void *ctx) {
  tel_tap *tap = (tel_tap *)b;
  const topo *t = b->topo;
  size_t idx = tap->nph;
  sim_grow((void **)&tap->ph, &tap->phcap, tap->nph + 1, sizeof *tap->ph);
  tap_phase *p = &tap->ph[tap->nph++];
  p->start = sim_now(b->sim);
  p->end = SIM_TIME_MAX;
  p->first = tap->nent;
  p->gfirst = tap->ngpus;
  uint32_t *nics = tel__niclog_phase(&tap->nic, p->start, repeat, x, n, NULL);
  uint32_t nt = 0, np = 0, *paths = NULL;
  size_t npaths = 0, pcap = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t g[2] = {x[i].src_gpu, x[i].dst_gpu};
    for (int k = 0; k < 2; k++)
      if (tap->gpu_stamp[g[k]] != idx + 1) {
        tap->gpu_stamp[g[k]] = idx + 1;
        sim_grow((void **)&tap->gpus, &tap->gcap, tap->ngpus + 1, sizeof *tap->gpus);
        tap->gpus[tap->ngpus++] = g[k];
      }
    nics[2 * i] = nics[2 * i + 1] = UINT32_MAX;
    if (x[i].src_gpu == x[i].dst_gpu) continue;
    topo_path path;
    if (tap->load) {
      topo_route_adaptive(t, NULL, x[i].src_gpu, x[i].dst_gpu, x[i].flow_hash, tap->load, &path);
      sim_grow((void **)&paths, &pcap, npaths + path.n, sizeof *paths);
      for (uint32_t j = 0; j < path.n; j++) tap->load[paths[npaths++] = path.ch[j]]++;
    } else {
      topo_route(t, x[i].src_gpu, x[i].dst_gpu, x[i].flow_hash, &path);
    }
    path_nics(t, path.ch, path.n, nics + 2 * i);
    for (uint32_t j = 0; j < path.n; j++) {
      uint32_t ch = path.ch[j], pool = tap->npools ? topo_spray_channel(t, ch) : ch;
      if (pool != ch) { /* spray: spread below, once per pool */
        uint32_t q = pool - 2 * topo_link_count(t);
        if (tap->pool_users[q]++ == 0) tap->pool_touched[np++] = q;
        tap->pool_bytes[q] += x[i].bytes;
        continue;
      }
      if (tap->ch_users[ch]++ == 0) tap->touched[nt++] = ch;
      tap->ch_bytes[ch] += x[i].bytes;
    }
  }
  for (uint32_t k = 0; k < np; k++) {
    uint32_t q = tap->pool_touched[k], pool = 2 * topo_link_count(t) + q;
    uint32_t nm = topo_pool_members(t, pool, NULL, 0);
    uint32_t *m = sim_malloc(nm * sizeof *m);
    topo_pool_members(t, pool, m, nm);
    for (uint32_t j = 0; j < nm; j++) { /* users: transfers' worth of load, rounded up */
      if (tap->ch_users[m[j]] == 0) tap->touched[nt++] = m[j];
      tap->ch_users[m[j]] += (tap->pool_users[q] + nm - 1) / nm;
      tap->ch_bytes[m[j]] += tap->pool_bytes[q] / nm;
    }
    sim_free(m);
    tap->pool_users[q] = 0;
    tap->pool_bytes[q] = 0;
  }
  for (uint32_t k = 0; k < nt; k++) {
    uint32_t ch = tap->touched[k];
    topo_vkind src = topo_vertex_at(t, topo_channel_src(t, ch))->kind;
    topo_vkind dst = topo_vertex_at(t, topo_channel_dst(t, ch))->kind;
    if (src == TOPO_SWITCH || dst == TOPO_SWITCH) {
      sim_grow((void **)&tap->ent, &tap->entcap, tap->nent + 1, sizeof *tap->ent);
      tap->ent[tap->nent++] = (tap_entry){.ch = ch, .bytes = tap->ch_bytes[ch] * repeat};
    }
  }
  log_sharing(tap, tap->touched, tap->ch_users, nt, p->start);
  for (uint32_t k = 0; k < nt; k++)
    tap->ch_users[tap->touched[k]] = 0, tap->ch_bytes[tap->touched[k]] = 0;
  p->count = tap->nent - p->first;
  p->gcount = tap->ngpus - p->gfirst;
  tap_done *d = sim_malloc(sizeof *d);
  *d = (tap_done){
      .tap = tap, .idx = idx, .done = done, .ctx = ctx, .paths = paths, .npaths = npaths};
  p->pending = d;
  return d;
}

static void tap_submit(be_backend *b, const be_xfer *x, size_t n, uint64_t repeat, be_done_fn done,
                       void *ctx) {
  tap_done *d = tap_log(b, x, n, repeat, done, ctx);
  be_submit_phase(((tel_tap *)b)->inner, x, n, repeat, tap_phase_done, d);
}

/* ---- slices of a pool: the window's counts kept as it moves ------------------------------ */

static void tap_pool_free(tel_tap *tap) {
  tap_pool *tp = tap->tp;
  if (!tp) return;
  sim_free(tp->off);
  sim_free(tp->ch);
  sim_free(tp->users);
  sim_free(tp->bytes);
  sim_free(tp->busy);
  sim_free(tp->gusers);
  sim_free(tp->gbusy);
  sim_free(tp->switched);
  sim_free(tp->nics);
  sim_free(tp);
  tap->tp = NULL;
}

/* Route every transfer of sl's pool once. O(total path length). */
static tap_pool *tap_pool_build(tel_tap *tap, const be_slice *sl) {
  const topo *t = tap->base.topo;
  uint32_t nch = 2 * topo_link_count(t), ng = topo_endpoint_count(t);
  tap_pool *tp = sim_calloc(1, sizeof *tp);
  size_t n = sl->pool_n, words = 0, cap = 0;
  tp->pool = sl->pool;
  tp->n = n;
  tp->off = sim_malloc((n + 1) * sizeof *tp->off);
  tp->nics = sim_malloc((2 * n + 1) * sizeof *tp->nics);
  for (size_t i = 0; i < n; i++) {
    const be_xfer *x = &sl->pool[i];
    topo_path path = {0};
    if (x->src_gpu != x->dst_gpu) topo_route(t, x->src_gpu, x->dst_gpu, x->flow_hash, &path);
    path_nics(t, path.ch, path.n, tp->nics + 2 * i);
    tp->off[i] = words;
    sim_grow((void **)&tp->ch, &cap, words + path.n + 1, sizeof *tp->ch);
    for (uint32_t j = 0; j < path.n; j++) tp->ch[words++] = path.ch[j];
  }
  tp->off[n] = words;
  tp->users = sim_calloc(nch ? nch : 1, sizeof *tp->users);
  tp->bytes = sim_calloc(nch ? nch : 1, sizeof *tp->bytes);
  tp->busy = sim_calloc(nch / 64 + 1, sizeof *tp->busy);
  tp->nch = nch;
  tp->ng = ng;
  tp->switched = sim_malloc(nch ? nch : 1);
  for (uint32_t ch = 0; ch < nch; ch++)
    tp->switched[ch] = topo_vertex_at(t, topo_channel_src(t, ch))->kind == TOPO_SWITCH ||
                       topo_vertex_at(t, topo_channel_dst(t, ch))->kind == TOPO_SWITCH;
  tp->gusers = sim_calloc(ng ? ng : 1, sizeof *tp->gusers);
  tp->gbusy = sim_calloc(ng / 64 + 1, sizeof *tp->gbusy);
  return tp;
}

/* Count pool transfer i into the window (sign +1) or out of it (-1). */
static void tap_pool_count(tap_pool *tp, size_t i, int sign) {
  const be_xfer *x = &tp->pool[i];
  uint32_t g[2] = {x->src_gpu, x->dst_gpu};
  for (int k = 0; k < 2; k++) {
    uint32_t v = g[k];
    if (sign > 0 && tp->gusers[v]++ == 0) tp->gbusy[v / 64] |= 1ull << (v % 64);
    else if (sign < 0 && --tp->gusers[v] == 0) tp->gbusy[v / 64] &= ~(1ull << (v % 64));
  }
  for (size_t w = tp->off[i]; w < tp->off[i + 1]; w++) {
    uint32_t ch = tp->ch[w];
    if (sign > 0) {
      tp->bytes[ch] += x->bytes;
      if (tp->users[ch]++ == 0) tp->busy[ch / 64] |= 1ull << (ch % 64);
    } else {
      tp->bytes[ch] -= x->bytes;
      if (--tp->users[ch] == 0) tp->busy[ch / 64] &= ~(1ull << (ch % 64));
    }
  }
}

/* The same log as tap_log(pool + off, n) from the window's counts: its
 * channels and GPUs are those with a count, each channel's bytes the sum of
 * its transfers' (the order of the entries differs; replay does not depend
 * on it). O(what enters and leaves + channels and GPUs of the window). */
static tap_done *tap_log_window(tel_tap *tap, const be_slice *sl, uint64_t repeat, be_done_fn done,
                                void *ctx) {
  tap_pool *tp = tap->tp;
  size_t lo = sl->off, hi = sl->off + sl->n, r[2][2];
  int k = sim_range_minus(tp->lo, tp->hi, lo, hi, r);
  for (int q = 0; q < k; q++)
    for (size_t i = r[q][0]; i < r[q][1]; i++) tap_pool_count(tp, i, -1);
  k = sim_range_minus(lo, hi, tp->lo, tp->hi, r);
  for (int q = 0; q < k; q++)
    for (size_t i = r[q][0]; i < r[q][1]; i++) tap_pool_count(tp, i, +1);
  tp->lo = lo;
  tp->hi = hi;
  size_t idx = tap->nph;
  sim_grow((void **)&tap->ph, &tap->phcap, tap->nph + 1, sizeof *tap->ph);
  tap_phase *p = &tap->ph[tap->nph++];
  p->start = sim_now(tap->base.sim);
  p->end = SIM_TIME_MAX;
  p->first = tap->nent;
  p->gfirst = tap->ngpus;
  tel__niclog_phase(&tap->nic, p->start, repeat, tp->pool + lo, hi - lo, tp->nics + 2 * lo);
  /* channels and GPUs in ascending order: replay then walks its meters forward */
  uint32_t nt = 0;
  for (uint32_t wd = 0; wd <= tp->nch / 64; wd++)
    for (uint64_t bits = tp->busy[wd]; bits; bits &= bits - 1)
      tap->touched[nt++] = wd * 64 + (uint32_t)__builtin_ctzll(bits);
  sim_grow((void **)&tap->ent, &tap->entcap, tap->nent + nt, sizeof *tap->ent);
  for (uint32_t j = 0; j < nt; j++) {
    uint32_t ch = tap->touched[j];
    if (tp->switched[ch])
      tap->ent[tap->nent++] = (tap_entry){.ch = ch, .bytes = tp->bytes[ch] * repeat};
  }
  log_sharing(tap, tap->touched, tp->users, nt, p->start);
  for (uint32_t wd = 0; wd <= tp->ng / 64; wd++)
    for (uint64_t bits = tp->gbusy[wd]; bits; bits &= bits - 1) {
      sim_grow((void **)&tap->gpus, &tap->gcap, tap->ngpus + 1, sizeof *tap->gpus);
      tap->gpus[tap->ngpus++] = wd * 64 + (uint32_t)__builtin_ctzll(bits);
    }
  p->count = tap->nent - p->first;
  p->gcount = tap->ngpus - p->gfirst;
  tap_done *d = sim_malloc(sizeof *d);
  *d = (tap_done){.tap = tap, .idx = idx, .done = done, .ctx = ctx, .paths = NULL, .npaths = 0};
  p->pending = d;
  return d;
}

/* Slices of one pool at a time under static or ECMP routing (adaptive
 * routes by the load of the moment, spray spreads per pool: those and
 * other pools are logged as phases). */
static void tap_submit_slice(be_backend *b, const be_slice *sl, uint64_t repeat, be_done_fn done,
                             void *ctx) {
  tel_tap *tap = (tel_tap *)b;
  tap_done *d;
  if (tap->load || tap->npools || sl->pool_n >= UINT32_MAX ||
      (tap->tp && (tap->tp->pool != sl->pool || tap->tp->n != sl->pool_n))) {
    d = tap_log(b, sl->pool + sl->off, sl->n, repeat, done, ctx);
  } else {
    if (!tap->tp) tap->tp = tap_pool_build(tap, sl);
    d = tap_log_window(tap, sl, repeat, done, ctx);
  }
  be_submit_slice(tap->inner, sl, repeat, tap_phase_done, d);
}

static void tap_pool_release(be_backend *b, const be_xfer *pool) {
  tel_tap *tap = (tel_tap *)b;
  if (tap->tp && tap->tp->pool == pool) tap_pool_free(tap);
  be_pool_release(tap->inner, pool);
}

static void tap_stats(const be_backend *b, be_stats *out) {
  const tel_tap *tap = (const tel_tap *)b;
  tap->inner->ops->stats(tap->inner, out);
}

static void tap_destroy(be_backend *b) {
  tel_tap *tap = (tel_tap *)b;
  be_destroy(tap->inner);
  for (size_t i = 0; i < tap->nph; i++)
    if (tap->ph[i].pending) {
      sim_free(((tap_done *)tap->ph[i].pending)->paths);
      sim_free(tap->ph[i].pending);
    }
  tap_pool_free(tap);
  tel__niclog_free(&tap->nic);
  sim_free(tap->load);
  sim_free(tap->pool_bytes);
  sim_free(tap->pool_users);
  sim_free(tap->pool_touched);
  sim_free(tap->ph);
  sim_free(tap->ent);
  sim_free(tap->gpus);
  sim_free(tap->ch_bytes);
  sim_free(tap->ch_users);
  sim_free(tap->touched);
  sim_free(tap->gpu_stamp);
  sim_free(tap->ev);
  sim_free(tap);
}

/* Faults and the capabilities go straight to the inner backend; its
 * failure reports come back through tap_failure to whoever set the tap's
 * on_failure. (Per-port bytes are still attributed along the paths routed
 * at submission.) */
static void tap_link_state(be_backend *b, uint32_t link, double rate_factor, double ber) {
  tel_tap *tap = (tel_tap *)b;
  tap->inner->ops->link_state(tap->inner, link, rate_factor, ber);
}

static void tap_reroute(be_backend *b, const topo_health *h) {
  tel_tap *tap = (tel_tap *)b;
  tap->inner->ops->reroute(tap->inner, h);
}

static int tap_port_sampling(be_backend *b, const be_port_spec *spec) {
  return be_port_sampling_start(((tel_tap *)b)->inner, spec);
}

static void tap_port_gather(be_backend *b, simtime_ps end) {
  be_port_samples_gather(((tel_tap *)b)->inner, end);
}

static int tap_port_samples(be_backend *b, simtime_ps end, be_port_samples *out) {
  return be_port_samples_get(((tel_tap *)b)->inner, end, out);
}

static bool tap_parallel_info(const be_backend *b, be_parallel_info *out) {
  return be_parallel_info_get(((const tel_tap *)b)->inner, out);
}

static int tap_job_owners(be_backend *b, const uint32_t *job_of_gpu, uint32_t njobs) {
  return be_job_owners_set(((tel_tap *)b)->inner, job_of_gpu, njobs);
}

static bool tap_job_pauses(const be_backend *b, be_job_pauses *out) {
  return be_job_pauses_get(((const tel_tap *)b)->inner, out);
}

static void tap_failure(void *ctx, const be_failure *f) {
  tel_tap *tap = ctx;
  if (tap->base.on_failure) tap->base.on_failure(tap->base.on_failure_ctx, f);
}

/* Every operation; the tap's own table leaves out those the inner backend
 * does not have, so the tap has exactly its capabilities. */
static const be_ops tap_ops = {
    .name = "telemetry-tap",
    .submit_phase = tap_submit,
    .stats = tap_stats,
    .destroy = tap_destroy,
    .link_state = tap_link_state,
    .reroute = tap_reroute,
    .port_sampling = tap_port_sampling,
    .port_gather = tap_port_gather,
    .port_samples = tap_port_samples,
    .parallel_info = tap_parallel_info,
    .submit_slice = tap_submit_slice,
    .pool_release = tap_pool_release,
    .job_owners = tap_job_owners,
    .job_pauses = tap_job_pauses,
};

be_backend *tel_tap_wrap(be_backend *inner, tel_tap **out) {
  tel_tap *tap = sim_calloc(1, sizeof *tap);
  tap->base = *inner;
  const be_ops *in = inner->ops;
  tap->ops = tap_ops;
  if (!in->link_state || !in->reroute) { /* faults: both or neither (fabsim/backend.h) */
    tap->ops.link_state = NULL;
    tap->ops.reroute = NULL;
  }
  if (!in->port_sampling) tap->ops.port_sampling = NULL;
  if (!in->port_gather) tap->ops.port_gather = NULL;
  if (!in->port_samples) tap->ops.port_samples = NULL;
  if (!in->parallel_info) tap->ops.parallel_info = NULL;
  if (!in->job_owners) tap->ops.job_owners = NULL;
  if (!in->job_pauses) tap->ops.job_pauses = NULL;
  tap->base.ops = &tap->ops;
  tap->inner = inner;
  inner->on_failure = tap_failure;
  inner->on_failure_ctx = tap;
  inner->on_xfer = tap_xfer;
  inner->on_xfer_ctx = tap;
  uint32_t nch = 2 * topo_link_count(inner->topo);
  tap->ch_bytes = sim_calloc(nch ? nch : 1, sizeof *tap->ch_bytes);
  tap->ch_users = sim_calloc(nch ? nch : 1, sizeof *tap->ch_users);
  tap->touched = sim_malloc((nch ? nch : 1) * sizeof *tap->touched);
  tap->split = inner->cfg ? topo_split_of(inner->cfg) : TOPO_SPLIT_NONE;
  if (tap->split == TOPO_SPLIT_ADAPTIVE) tap->load = sim_calloc(nch ? nch : 1, sizeof *tap->load);
  if (tap->split == TOPO_SPLIT_POOLS) {
    tap->npools = topo_pool_count(inner->topo);
    tap->pool_bytes = sim_calloc(tap->npools ? tap->npools : 1, sizeof *tap->pool_bytes);
    tap->pool_users = sim_calloc(tap->npools ? tap->npools : 1, sizeof *tap->pool_users);
    tap->pool_touched = sim_malloc((tap->npools ? tap->npools : 1) * sizeof *tap->pool_touched);
  }
  uint32_t g = topo_endpoint_count(inner->topo); /* GPUs and storage endpoints */
  tap->gpu_stamp = sim_calloc(g ? g : 1, sizeof *tap->gpu_stamp);
  tap->last_ch = UINT32_MAX;
  tel__niclog_init(&tap->nic, topo_nic_count(inner->topo));
  *out = tap;
  return &tap->base;
}

/* ---- replay ----------------------------------------------------------------------------- */

typedef struct tap_mark {
  simtime_ps at;
  uint32_t start; /* 0: a phase ends, 1: it starts (ends first at equal times) */
  size_t idx;
} tap_mark;

static int mark_cmp(const void *a, const void *b) {
  const tap_mark *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A switch port's share of a phase (NICs: tel__niclog_replay). */
static void feed(tel *tl, const tel_portmap *m, simtime_ps at, uint32_t ch, uint64_t bytes,
                 int64_t rate) {
  uint32_t port = m->port_of_channel[ch];
  if (port != UINT32_MAX) {
    if (rate) tel_port_rate(tl, at, port, rate);
    else tel_port_bytes(tl, at, port, bytes);
  }
}

void tel_tap_replay(tel_tap *tap, tel *tl, const tel_portmap *m, unsigned flags) {
  const topo *t = tap->base.topo;
  replay_events(tap, tl);
  tap_mark *marks = sim_malloc((2 * tap->nph + 1) * sizeof *marks);
  size_t nm = 0;
  for (size_t i = 0; i < tap->nph; i++) {
    if (tap->ph[i].end == SIM_TIME_MAX) continue;
    marks[nm++] = (tap_mark){.at = tap->ph[i].start, .start = 1, .idx = i};
    marks[nm++] = (tap_mark){.at = tap->ph[i].end, .start = 0, .idx = i};
  }
  qsort(marks, nm, sizeof *marks, mark_cmp);
  uint32_t ngpu = topo_endpoint_count(t), gpus = topo_gpu_count(t);
  uint32_t *active = sim_calloc(ngpu ? ngpu : 1, sizeof *active);
  for (size_t k = 0; k < nm; k++) {
    const tap_phase *p = &tap->ph[marks[k].idx];
    simtime_ps dur = p->end - p->start;
    for (size_t e = p->first; e < p->first + p->count; e++) {
      const tap_entry *en = &tap->ent[e];
      if (dur == 0) {
        if (marks[k].start) feed(tl, m, marks[k].at, en->ch, en->bytes, 0);
        continue;
      }
      unsigned __int128 r = (unsigned __int128)en->bytes * 8u * SIM_PS_PER_S / dur;
      int64_t rate = r > INT64_MAX ? INT64_MAX : (int64_t)r;
      if (rate == 0) continue;
      feed(tl, m, marks[k].at, en->ch, 0, marks[k].start ? rate : -rate);
    }
    if (!(flags & TEL_TAP_GPUS)) continue;
    for (size_t g = p->gfirst; g < p->gfirst + p->gcount; g++) {
      uint32_t gpu = tap->gpus[g];
      if (gpu >= gpus) continue; /* a storage server's endpoint: no GPU series */
      if (marks[k].start && active[gpu]++ == 0)
        tel_gpu_state_set(tl, marks[k].at, gpu, TEL_GPU_NETWORK);
      else if (!marks[k].start && --active[gpu] == 0)
        tel_gpu_state_set(tl, marks[k].at, gpu, TEL_GPU_IDLE);
    }
  }
  sim_free(active);
  sim_free(marks);
  tel__niclog_replay(&tap->nic, tl);
}
