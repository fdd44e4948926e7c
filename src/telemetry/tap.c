/* Telemetry tap: a pass-through backend that logs phases, and their replay
 * into a tel (see fabsim/tel_tap.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry/tap_internal.h"

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

/* Routing's view after a reroute, shared by the phases routed on it. */
typedef struct tap_health {
  topo_health h;
  uint32_t refs; /* the tap (while it is the latest view) and each phase in flight */
} tap_health;

static tap_health *health_ref(tap_health *h) {
  if (h) h->refs++;
  return h;
}

static void health_unref(tap_health *h) {
  if (!h || --h->refs) return;
  topo_health_free(&h->h);
  sim_free(h);
}

typedef struct tap_done {
  tel_tap *tap;
  size_t idx;
  be_done_fn done;
  void *ctx;
  uint32_t *paths; /* adaptive: the channels its transfers were counted on */
  size_t npaths;
  uint32_t *off;              /* adaptive: transfer i's are paths[off[i] .. off[i + 1]) */
  tap_health *health;         /* entries of its own transfers: the view they were routed on */
  const struct tap_pool *win; /* a window of a pool (tap_log_window): its routes, from lo */
  size_t lo;
  uint32_t *ent_of; /* per channel, its entry + 1 (0: none), made at the first failure */
  /* rerouted (tap_moved): each transfer's bytes sent by the last reroute and
   * its path since, mv_paths[mv_off[i] .. mv_off[i + 1]) (NULL: never) */
  uint64_t *sent;
  uint32_t *mv_paths, *mv_off;
} tap_done;

static void done_free(tap_done *d) {
  sim_free(d->paths);
  sim_free(d->off);
  sim_free(d->ent_of);
  sim_free(d->sent);
  sim_free(d->mv_paths);
  sim_free(d->mv_off);
  health_unref(d->health);
  sim_free(d);
}

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

static bool counted_path(const tel_tap *tap, const tap_phase *p, const tap_done *d, size_t ph,
                         size_t i, topo_path *path, const uint32_t **ch, size_t *n);

/* The per-flow log's rows of a report (output.flows): each transfer on the
 * channels it is counted on (counted_path; a spray pool's id there, from a
 * reroute, makes it routing's path on the latest view). O(n x path). */
static void flows_report(tel_tap *tap, const tap_done *d, const be_xfer_end *e) {
  const tel__nic_phase *np = &tap->nic.ph[d->idx];
  uint32_t nlch = 2 * topo_link_count(tap->base.topo);
  for (size_t i = 0; i < e->n; i++) {
    size_t k = e->xfer + i;
    const be_xfer *x = tel__niclog_xfer(&tap->nic, d->idx, k);
    if (!x) continue;
    tel_flow row = {.start = e->start,
                    .bytes = x->bytes,
                    .phase = d->idx,
                    .xfer = k,
                    .src_gpu = x->src_gpu,
                    .dst_gpu = x->dst_gpu,
                    .src_nic = np->nics[2 * k],
                    .dst_nic = np->nics[2 * k + 1],
                    .tclass = x->tclass};
    topo_path path = {0};
    const uint32_t *ch = NULL;
    size_t n = 0;
    if (counted_path(tap, &tap->ph[d->idx], d, d->idx, k, &path, &ch, &n))
      for (size_t j = 0; j < n && j < TOPO_MAX_PATH; j++) row.path[row.npath++] = ch[j];
    for (size_t j = 0; j < row.npath; j++)
      if (row.path[j] >= nlch) { /* a pool's id: the route on the latest view */
        row.npath = 0;
        const topo_health *h = tap->health ? &tap->health->h : NULL;
        if (topo_route_health(tap->base.topo, h, x->src_gpu, x->dst_gpu, x->flow_hash, &path) ==
            SIM_OK) {
          memcpy(row.path, path.ch, path.n * sizeof *path.ch);
          row.npath = (uint8_t)path.n;
        }
        break;
      }
    tap__flows_add(tap->flows, &row, e->period, e->reps, e->delivered[i]);
  }
}

/* A backend's be_xfer_end: its phase's ctx is the tap's tap_done. */
static void tap_xfer(void *ctx, const be_xfer_end *e) {
  tel_tap *tap = ctx;
  const tap_done *d = e->phase;
  if (tap->flows) flows_report(tap, d, e); /* (before the NIC log may fold the phase) */
  tel__niclog_report(&tap->nic, d->idx, e->xfer, e->n, e->start, e->period, e->reps, e->delivered,
                     e->latency);
}

static void tap_phase_done(sim_ctx *sim, void *obj) {
  tap_done *d = obj;
  be_done_fn done = d->done;
  void *ctx = d->ctx;
  for (size_t k = 0; k < d->npaths; k++) d->tap->load[d->paths[k]]--;
  tel__niclog_end(&d->tap->nic, d->idx, sim_now(sim));
  d->tap->ph[d->idx].end = sim_now(sim);
  d->tap->ph[d->idx].pending = NULL;
  done_free(d);
  if (done) done(sim, ctx);
}

bool tap__is_fabric_channel(const topo *t, uint32_t ch) {
  topo_lkind k = topo_link_at(t, topo_channel_link(ch))->kind;
  return k == TOPO_LINK_ENDPOINT || k == TOPO_LINK_FABRIC;
}

/* The "shared-channel" event of a phase whose most shared fabric channel
 * is `best` with `users` transfers (UINT32_MAX: none shares one), unless it
 * repeats the last one. */
static void sharing_event(tel_tap *tap, uint32_t best, uint32_t users, simtime_ps now) {
  if (best == UINT32_MAX || (best == tap->last_ch && users == tap->last_users)) return;
  tap->last_ch = best;
  tap->last_users = users;
  if (tap->events > TAP_MAX_EVENTS) return;
  sim_grow((void **)&tap->ev, &tap->evcap, tap->nev + 1, sizeof *tap->ev);
  tap->ev[tap->nev++] = (tap_event){
      .at = now, .ch = tap->events++ == TAP_MAX_EVENTS ? UINT32_MAX : best, .users = users};
}

/* The most shared fabric channel of this phase (its channels touched[0..nt),
 * their transfers ch_users), as an event when > 1. */
static void log_sharing(tel_tap *tap, const uint32_t *touched, const uint32_t *ch_users,
                        uint32_t nt, simtime_ps now) {
  const topo *t = tap->base.topo;
  uint32_t best = UINT32_MAX, users = 1;
  for (uint32_t k = 0; k < nt; k++) {
    uint32_t ch = touched[k];
    if (ch_users[ch] > users && tap__is_fabric_channel(t, ch)) {
      users = ch_users[ch];
      best = ch;
    } else if (ch_users[ch] == users && best != UINT32_MAX && ch < best &&
               tap__is_fabric_channel(t, ch)) {
      best = ch;
    }
  }
  sharing_event(tap, best, users, now);
}

/* ---- lists logged once --------------------------------------------------------------- */

static uint64_t list_hash(const tel_tap *tap, bool gpus, size_t first, size_t count) {
  uint64_t h = sim_hash_u64(count + (gpus ? 1 : 0));
  for (size_t k = first; k < first + count; k++)
    h = gpus ? sim_hash_u64(h ^ tap->gpus[k])
             : sim_hash_u64(sim_hash_u64(h ^ tap->ent[k].ch) ^ tap->ent[k].bytes);
  return h ? h : 1;
}

static bool list_equal(const tel_tap *tap, bool gpus, size_t a, size_t b, size_t count) {
  if (gpus) return !memcmp(tap->gpus + a, tap->gpus + b, count * sizeof *tap->gpus);
  for (size_t k = 0; k < count; k++)
    if (tap->ent[a + k].ch != tap->ent[b + k].ch || tap->ent[a + k].bytes != tap->ent[b + k].bytes)
      return false;
  return true;
}

static size_t lists_slot(const tap_lists *l, uint64_t h, size_t i) {
  return (h + i) & (l->cap - 1);
}

static void lists_grow(tap_lists *l) {
  tap_lists o = *l;
  l->cap = o.cap ? 2 * o.cap : 64;
  l->hash = sim_calloc(l->cap, sizeof *l->hash);
  l->first = sim_malloc(l->cap * sizeof *l->first);
  l->count = sim_malloc(l->cap * sizeof *l->count);
  for (size_t k = 0; k < o.cap; k++) {
    if (!o.hash[k]) continue;
    size_t i = 0, s;
    while (l->hash[s = lists_slot(l, o.hash[k], i)]) i++;
    l->hash[s] = o.hash[k], l->first[s] = o.first[k], l->count[s] = o.count[k];
  }
  sim_free(o.hash);
  sim_free(o.first);
  sim_free(o.count);
}

static void lists_free(tap_lists *l) {
  sim_free(l->hash);
  sim_free(l->first);
  sim_free(l->count);
}

/* The list just logged at the end of the entries (GPUs), [*first, end):
 * when one equal to it was logged before, it is dropped and *first names
 * that one (true); else it is kept for the next. O(its length). */
static bool tap_intern(tel_tap *tap, bool gpus, size_t *first) {
  tap_lists *l = gpus ? &tap->gpu_lists : &tap->ent_lists;
  size_t end = gpus ? tap->ngpus : tap->nent, count = end - *first;
  if (count == 0) return false;
  if (2 * (l->n + 1) > l->cap) lists_grow(l);
  uint64_t h = list_hash(tap, gpus, *first, count);
  size_t i = 0, s;
  for (; l->hash[s = lists_slot(l, h, i)]; i++)
    if (l->hash[s] == h && l->count[s] == count &&
        list_equal(tap, gpus, l->first[s], *first, count)) {
      if (gpus) tap->ngpus = *first;
      else tap->nent = *first;
      *first = l->first[s];
      return true;
    }
  l->hash[s] = h, l->first[s] = *first, l->count[s] = count;
  l->n++;
  return true;
}

/* A phase's lists logged: each kept once (tap_intern). */
static void log_lists(tel_tap *tap, tap_phase *p) {
  p->shared = tap_intern(tap, false, &p->first);
  tap_intern(tap, true, &p->gfirst);
}

/* The members of spray pool `pool` that a sprayed transfer's bytes cross:
 * those up (a switch sprays over its ports that are up, as the flow
 * fidelity shares the pool), all when none is or none is down. *nm of them;
 * free the array. */
static uint32_t *pool_members_up(const tel_tap *tap, uint32_t pool, uint32_t *nm) {
  const topo *t = tap->base.topo;
  uint32_t n = topo_pool_members(t, pool, NULL, 0), up = 0;
  uint32_t *m = sim_malloc((n ? n : 1) * sizeof *m);
  topo_pool_members(t, pool, m, n);
  for (uint32_t j = 0; tap->link_down && j < n; j++)
    if (!tap->link_down[topo_channel_link(m[j])]) m[up++] = m[j];
  if (up == 0 || up == n) topo_pool_members(t, pool, m, n);
  *nm = up ? up : n;
  return m;
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
  *p = (tap_phase){.start = sim_now(b->sim),
                   .end = SIM_TIME_MAX,
                   .first = tap->nent,
                   .gfirst = tap->ngpus,
                   .repeat = repeat};
  uint32_t *nics = tel__niclog_phase(&tap->nic, p->start, repeat, x, n, NULL);
  uint32_t nt = 0, np = 0, *paths = NULL, *off = NULL;
  size_t npaths = 0, pcap = 0;
  const topo_health *h = tap->health ? &tap->health->h : NULL;
  if (tap->load) off = sim_calloc(n + 1, sizeof *off);
  uint32_t gpus = topo_gpu_count(t); /* endpoints past it: storage servers, no GPU series */
  for (size_t i = 0; i < n; i++) {
    uint32_t g[2] = {x[i].src_gpu, x[i].dst_gpu};
    for (int k = 0; k < 2; k++)
      if (g[k] < gpus && tap->gpu_stamp[g[k]] != idx + 1) {
        tap->gpu_stamp[g[k]] = idx + 1;
        sim_grow((void **)&tap->gpus, &tap->gcap, tap->ngpus + 1, sizeof *tap->gpus);
        tap->gpus[tap->ngpus++] = g[k];
      }
    nics[2 * i] = nics[2 * i + 1] = UINT32_MAX;
    if (off) off[i + 1] = off[i];
    if (x[i].src_gpu == x[i].dst_gpu) continue;
    topo_path path;
    if (tap->load) {
      if (topo_route_adaptive(t, h, x[i].src_gpu, x[i].dst_gpu, x[i].flow_hash, tap->load, &path) !=
          SIM_OK)
        continue; /* no route: it fails in the backend and moves nothing */
      sim_grow((void **)&paths, &pcap, npaths + path.n, sizeof *paths);
      for (uint32_t j = 0; j < path.n; j++) tap->load[paths[npaths++] = path.ch[j]]++;
      off[i + 1] = (uint32_t)npaths;
    } else if (topo_route_health(t, h, x[i].src_gpu, x[i].dst_gpu, x[i].flow_hash, &path) !=
               SIM_OK) {
      continue;
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
    uint32_t q = tap->pool_touched[k], pool = 2 * topo_link_count(t) + q, nm;
    uint32_t *m = pool_members_up(tap, pool, &nm);
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
  log_lists(tap, p);
  tap_done *d = sim_malloc(sizeof *d);
  *d = (tap_done){.tap = tap,
                  .idx = idx,
                  .done = done,
                  .ctx = ctx,
                  .paths = paths,
                  .npaths = npaths,
                  .off = off,
                  .health = health_ref(tap->health)};
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
  *p = (tap_phase){.start = sim_now(tap->base.sim),
                   .end = SIM_TIME_MAX,
                   .first = tap->nent,
                   .gfirst = tap->ngpus,
                   .repeat = repeat};
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
  uint32_t gpus = topo_gpu_count(tap->base.topo); /* past it: storage servers' endpoints */
  for (uint32_t wd = 0; wd <= tp->ng / 64; wd++)
    for (uint64_t bits = tp->gbusy[wd]; bits; bits &= bits - 1) {
      uint32_t g = wd * 64 + (uint32_t)__builtin_ctzll(bits);
      if (g >= gpus) continue;
      sim_grow((void **)&tap->gpus, &tap->gcap, tap->ngpus + 1, sizeof *tap->gpus);
      tap->gpus[tap->ngpus++] = g;
    }
  p->count = tap->nent - p->first;
  p->gcount = tap->ngpus - p->gfirst;
  log_lists(tap, p);
  tap_done *d = sim_malloc(sizeof *d);
  *d = (tap_done){.tap = tap, .idx = idx, .done = done, .ctx = ctx, .win = tp, .lo = lo};
  p->pending = d;
  return d;
}

/* ---- slices with cuts: the pool's quotient ---------------------------------------------- */

/* The quotient of sl's live pool (built at its first slice), or NULL when
 * it cannot be built. */
static tap_quot *quot_of(tel_tap *tap, const be_slice *sl) {
  if (tap->live_q && tap->live_q->q.pool == sl->pool && tap->live_q->q.pool_n == sl->pool_n)
    return tap->live_q;
  if (tap->live_q || tap->no_quot == sl->pool) return NULL; /* one live pool at a time */
  tap_quot *tq = sim_calloc(1, sizeof *tq);
  if (be_quot_build(&tq->q, tap->base.topo, sl, TOPO_SPLIT_NONE) != SIM_OK) {
    sim_free(tq);
    tap->no_quot = sl->pool;
    return NULL;
  }
  const topo *t = tap->base.topo;
  tq->nics = sim_malloc((2 * sl->pool_n + 1) * sizeof *tq->nics);
  for (size_t i = 0; i < sl->pool_n; i++) { /* routed again: the quotient keeps no paths */
    const be_xfer *x = &sl->pool[i];
    topo_path path = {0};
    if (x->src_gpu != x->dst_gpu) topo_route(t, x->src_gpu, x->dst_gpu, x->flow_hash, &path);
    path_nics(t, path.ch, path.n, tq->nics + 2 * i);
  }
  sim_grow((void **)&tap->tq, &tap->tqcap, tap->ntq + 1, sizeof *tap->tq);
  tap->tq[tap->ntq++] = tq;
  tap->live_q = tq;
  return tq;
}

/* Class c's members, ascending (CSR over the classes of `of`, n items). */
static void members_of(const uint32_t *of, uint32_t n, uint32_t ncls, uint32_t **off,
                       uint32_t **mem) {
  *off = sim_calloc((size_t)ncls + 1, sizeof **off);
  for (uint32_t i = 0; i < n; i++)
    if (of[i] != UINT32_MAX) (*off)[of[i] + 1]++;
  for (uint32_t c = 0; c < ncls; c++) (*off)[c + 1] += (*off)[c];
  *mem = sim_malloc(((*off)[ncls] ? (*off)[ncls] : 1) * sizeof **mem);
  uint32_t *fill = sim_malloc(((size_t)ncls + 1) * sizeof *fill);
  memcpy(fill, *off, ((size_t)ncls + 1) * sizeof *fill);
  for (uint32_t i = 0; i < n; i++)
    if (of[i] != UINT32_MAX) (*mem)[fill[of[i]]++] = i;
  sim_free(fill);
}

void tap__quot_members(tap_quot *tq) {
  if (tq->cc_moff) return;
  members_of(tq->q.cc_of, tq->q.nchan, tq->q.ncc, &tq->cc_moff, &tq->cc_mem);
  members_of(tq->q.gc_of, tq->q.ngpu, tq->q.ngc, &tq->gc_moff, &tq->gc_mem);
}

/* The pool is gone: keep what the replay reads (runs per segment, class
 * members), drop the rest. O(channels + GPUs). */
static void quot_release(tap_quot *tq) {
  be_quot *q = &tq->q;
  tap__quot_members(tq);
  sim_free(q->cc_of);
  sim_free(q->gc_of);
  sim_free(q->tc_w);
  sim_free(q->tc_bytes);
  sim_free(q->tc_lat);
  sim_free(q->tc_poff);
  sim_free(q->tc_path);
  sim_free(q->tc_of);
  q->cc_of = q->gc_of = q->tc_poff = q->tc_path = q->tc_of = NULL;
  q->tc_w = q->tc_bytes = NULL;
  q->tc_lat = NULL;
  q->pool = NULL;
  sim_free(tq->nics);
  tq->nics = NULL;
  tq->released = true;
}

static void quot_free(tap_quot *tq) {
  be_quot_free(&tq->q);
  sim_free(tq->cc_moff);
  sim_free(tq->cc_mem);
  sim_free(tq->gc_moff);
  sim_free(tq->gc_mem);
  sim_free(tq->nics);
  sim_free(tq);
}

/* Log a window of segments [slo, shi) of quotient k: O(its runs + channel
 * classes), none of its transfers. */
static tap_done *tap_log_quot(tel_tap *tap, uint32_t k, uint32_t slo, uint32_t shi, uint64_t repeat,
                              be_done_fn done, void *ctx) {
  const be_quot *q = &tap->tq[k]->q;
  size_t idx = tap->nph;
  sim_grow((void **)&tap->ph, &tap->phcap, tap->nph + 1, sizeof *tap->ph);
  tap_phase *p = &tap->ph[tap->nph++];
  *p = (tap_phase){.start = sim_now(tap->base.sim),
                   .end = SIM_TIME_MAX,
                   .first = tap->nent,
                   .gfirst = tap->ngpus,
                   .quot = k + 1,
                   .slo = slo,
                   .shi = shi,
                   .repeat = repeat};
  size_t lo = q->cuts[slo], hi = q->cuts[shi];
  tel__niclog_phase(&tap->nic, p->start, repeat, q->pool + lo, hi - lo, tap->tq[k]->nics + 2 * lo);
  /* the most shared fabric channel: a class's members share alike, and
   * the lowest member of the busiest classes is the lowest such channel */
  uint32_t *users = sim_calloc(q->ncc ? q->ncc : 1, sizeof *users);
  for (size_t e = q->seg_cc_off[slo]; e < q->seg_cc_off[shi]; e++)
    users[q->seg_cc[e].cls] += q->seg_cc[e].count;
  uint32_t best = UINT32_MAX, most = 1;
  for (uint32_t c = 0; c < q->ncc; c++) {
    uint32_t ch = q->cc_first[c];
    if (users[c] < most || (users[c] == most && (best == UINT32_MAX || ch > best)) ||
        !tap__is_fabric_channel(tap->base.topo, ch))
      continue;
    most = users[c];
    best = ch;
  }
  sim_free(users);
  sharing_event(tap, best, most, p->start);
  tap_done *d = sim_malloc(sizeof *d);
  *d = (tap_done){.tap = tap, .idx = idx, .done = done, .ctx = ctx};
  p->pending = d;
  return d;
}

/* Slices of one pool at a time under static or ECMP routing (adaptive
 * routes by the load of the moment, spray spreads per pool: those and
 * other pools are logged as phases): with cuts, as windows of its quotient
 * (which goes to the inner backend with the slice); without, by the
 * window's counts per channel. */
static void tap_submit_slice(be_backend *b, const be_slice *sl, uint64_t repeat, be_done_fn done,
                             void *ctx) {
  tel_tap *tap = (tel_tap *)b;
  tap_done *d;
  if (tap->health && tap->health->h.down) { /* routes off the links down: per phase, as routed */
    d = tap_log(b, sl->pool + sl->off, sl->n, repeat, done, ctx);
    be_submit_slice(tap->inner, sl, repeat, tap_phase_done, d);
    return;
  }
  tap_quot *tq = !tap->load && !tap->npools && sl->cuts && sl->n ? quot_of(tap, sl) : NULL;
  uint32_t slo, shi;
  if (tq && be_quot_window(&tq->q, sl, &slo, &shi)) {
    be_slice with = *sl;
    with.quot = &tq->q;
    d = tap_log_quot(tap, (uint32_t)(tap->ntq - 1), slo, shi, repeat, done, ctx);
    be_submit_slice(tap->inner, &with, repeat, tap_phase_done, d);
    return;
  }
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
  be_pool_release(tap->inner, pool); /* first: it may hold the quotient */
  if (tap->live_q && tap->live_q->q.pool == pool) {
    quot_release(tap->live_q);
    tap->live_q = NULL;
  }
  if (tap->no_quot == pool) tap->no_quot = NULL;
}

static void tap_stats(const be_backend *b, be_stats *out) {
  const tel_tap *tap = (const tel_tap *)b;
  tap->inner->ops->stats(tap->inner, out);
}

static void tap_destroy(be_backend *b) {
  tel_tap *tap = (tel_tap *)b;
  be_destroy(tap->inner);
  for (size_t i = 0; i < tap->nph; i++)
    if (tap->ph[i].pending) done_free(tap->ph[i].pending);
  tap_pool_free(tap);
  tel__niclog_free(&tap->nic);
  health_unref(tap->health);
  for (size_t i = 0; i < tap->ntq; i++) quot_free(tap->tq[i]);
  sim_free(tap->tq);
  sim_free(tap->load);
  sim_free(tap->pool_bytes);
  sim_free(tap->pool_users);
  sim_free(tap->pool_touched);
  sim_free(tap->ph);
  sim_free(tap->pc);
  sim_free(tap->ent);
  lists_free(&tap->ent_lists);
  lists_free(&tap->gpu_lists);
  sim_free(tap->link_down);
  sim_free(tap->gpus);
  sim_free(tap->ch_bytes);
  sim_free(tap->ch_users);
  sim_free(tap->touched);
  sim_free(tap->gpu_stamp);
  sim_free(tap->ev);
  tap__flows_free(tap->flows);
  sim_free(tap);
}

/* Faults and the capabilities go straight to the inner backend; its
 * failure reports come back through tap_failure to whoever set the tap's
 * on_failure, its reroutes through tap_moved (each phase's ports split at
 * the reroute: before it on the old paths, after it on the new ones). */
static void tap_link_state(be_backend *b, uint32_t link, double rate_factor, double ber) {
  tel_tap *tap = (tel_tap *)b;
  uint32_t nl = topo_link_count(b->topo);
  if (!tap->link_down) tap->link_down = sim_calloc(nl ? nl : 1, 1);
  if (link < nl) { /* the phases cut in the call see the link as it was, then as it is */
    tap->link_changing = link;
    tap->down_before = tap->link_down[link];
    tap->down_after = !(rate_factor > 0.0);
  }
  tap->inner->ops->link_state(tap->inner, link, rate_factor, ber);
  if (link < nl) tap->link_down[link] = tap->down_after;
  tap->link_changing = UINT32_MAX;
}

/* The links' state before (after) the change under way (tap_link_state). */
static void link_view(tel_tap *tap, bool after) {
  if (tap->link_changing != UINT32_MAX)
    tap->link_down[tap->link_changing] = after ? tap->down_after : tap->down_before;
}

static void tap_reroute(be_backend *b, const topo_health *h) {
  tel_tap *tap = (tel_tap *)b;
  const topo *t = b->topo;
  tap_health *v = sim_calloc(1, sizeof *v);
  if (topo_health_init(&v->h, t) == SIM_OK) {
    memcpy(v->h.link_ok, h->link_ok, topo_link_count(t) * sizeof *h->link_ok);
    memcpy(v->h.vertex_ok, h->vertex_ok, topo_vertex_count(t) * sizeof *h->vertex_ok);
    v->h.down = h->down;
    v->refs = 1;
    health_unref(tap->health); /* phases in flight keep theirs */
    tap->health = v;
  } else {
    sim_free(v);
  }
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

/* Take `bytes` off channel ch's entry in phase p (a spray pool's share
 * off each member, as tap_log put it there). */
static void unfeed_channel(tel_tap *tap, tap_phase *p, tap_done *d, uint32_t ch, uint64_t bytes) {
  const topo *t = tap->base.topo;
  uint32_t nlch = 2 * topo_link_count(t);
  if (ch >= nlch) { /* a spray pool: its members took an even share */
    uint32_t nm, *m = pool_members_up(tap, ch, &nm);
    for (uint32_t j = 0; j < nm; j++) unfeed_channel(tap, p, d, m[j], bytes / nm);
    sim_free(m);
    return;
  }
  if (p->shared) { /* other phases may name its entries: its own copy first */
    sim_grow((void **)&tap->ent, &tap->entcap, tap->nent + p->count, sizeof *tap->ent);
    memcpy(tap->ent + tap->nent, tap->ent + p->first, p->count * sizeof *tap->ent);
    p->first = tap->nent;
    tap->nent += p->count;
    p->shared = false;
    sim_free(d->ent_of);
    d->ent_of = NULL;
  }
  if (!d->ent_of) {
    d->ent_of = sim_calloc(nlch ? nlch : 1, sizeof *d->ent_of);
    for (size_t e = p->first; e < p->first + p->count; e++)
      d->ent_of[tap->ent[e].ch] = (uint32_t)(e - p->first + 1);
  }
  if (!d->ent_of[ch]) return; /* not a switch port */
  tap_entry *e = &tap->ent[p->first + d->ent_of[ch] - 1];
  e->bytes -= bytes < e->bytes ? bytes : e->bytes;
}

/* The channels transfer i of phase p (record d) is counted on now: its
 * path since the last reroute, its pool's route, its adaptive path, its
 * quotient's route (topo_route) or its route on the view it was routed on;
 * false when none (never counted). path: scratch. */
static bool counted_path(const tel_tap *tap, const tap_phase *p, const tap_done *d, size_t ph,
                         size_t i, topo_path *path, const uint32_t **ch, size_t *n) {
  const topo *t = tap->base.topo;
  if (d->mv_off) {
    *ch = d->mv_paths + d->mv_off[i];
    *n = d->mv_off[i + 1] - d->mv_off[i];
  } else if (d->win) {
    const tap_pool *tp = d->win;
    if (tap->tp != tp) return false; /* the pool is gone: nothing to match it with */
    *ch = tp->ch + tp->off[d->lo + i];
    *n = tp->off[d->lo + i + 1] - tp->off[d->lo + i];
  } else if (d->off) {
    *ch = d->paths + d->off[i];
    *n = d->off[i + 1] - d->off[i];
  } else {
    const be_xfer *x = tel__niclog_xfer(&tap->nic, ph, i);
    const topo_health *h = !p->quot && d->health ? &d->health->h : NULL;
    if (!x || x->src_gpu == x->dst_gpu ||
        topo_route_health(t, h, x->src_gpu, x->dst_gpu, x->flow_hash, path) != SIM_OK)
      return false;
    *ch = path->ch;
    *n = path->n;
  }
  return true;
}

/* The channel ch's bytes are counted on: a spray pool's id under spray
 * (kept as the backend gives it when it is one already). */
static uint32_t counted_channel(const tel_tap *tap, uint32_t ch) {
  const topo *t = tap->base.topo;
  return tap->npools && ch < 2 * topo_link_count(t) ? topo_spray_channel(t, ch) : ch;
}

/* Transfer i of phase `ph` failed with `lost` bytes undelivered: its
 * ports' entries move only what it delivered, on the channels it was
 * counted on (counted_path). A window of a quotient keeps its classes'
 * bytes unless rerouted (its entries then). */
static void unfeed_failed(tel_tap *tap, size_t ph, size_t i, uint64_t lost) {
  tap_phase *p = &tap->ph[ph];
  tap_done *d = p->pending;
  if (!d || (p->quot && !p->moved) || lost == 0) return;
  topo_path path = {0};
  const uint32_t *ch = NULL;
  size_t n = 0;
  if (!counted_path(tap, p, d, ph, i, &path, &ch, &n)) return;
  for (size_t j = 0; j < n; j++) unfeed_channel(tap, p, d, counted_channel(tap, ch[j]), lost);
}

/* `bytes` onto channel ch (a spray pool: an even share onto each member) in
 * the scratch of the entries being made (ch_bytes, touched[0..*nt)). */
static void put_bytes(tel_tap *tap, uint32_t ch, uint64_t bytes, uint32_t *nt) {
  const topo *t = tap->base.topo;
  if (ch >= 2 * topo_link_count(t)) {
    uint32_t nm, *m = pool_members_up(tap, ch, &nm);
    for (uint32_t j = 0; j < nm; j++) put_bytes(tap, m[j], bytes / nm, nt);
    sim_free(m);
    return;
  }
  if (tap->ch_users[ch]++ == 0) tap->touched[(*nt)++] = ch;
  tap->ch_bytes[ch] += bytes;
}

/* The scratch's switch ports as entries (the scratch emptied): first. */
static size_t put_entries(tel_tap *tap, uint32_t nt) {
  const topo *t = tap->base.topo;
  size_t first = tap->nent;
  for (uint32_t k = 0; k < nt; k++) {
    uint32_t ch = tap->touched[k];
    if ((topo_vertex_at(t, topo_channel_src(t, ch))->kind == TOPO_SWITCH ||
         topo_vertex_at(t, topo_channel_dst(t, ch))->kind == TOPO_SWITCH) &&
        tap->ch_bytes[ch]) {
      sim_grow((void **)&tap->ent, &tap->entcap, tap->nent + 1, sizeof *tap->ent);
      tap->ent[tap->nent++] = (tap_entry){.ch = ch, .bytes = tap->ch_bytes[ch]};
    }
    tap->ch_users[ch] = 0;
    tap->ch_bytes[ch] = 0;
  }
  return first;
}

/* The backend moved phase r->phase's transfers at a reroute (be_reroute_rec):
 * what they sent since the phase's ports last started (its start or the
 * last reroute) becomes a piece on the channels they were counted on, over
 * that time; what is left of all repetitions becomes the phase's entries on
 * the new paths, from now to its end. O(the phase's paths). */
static void tap_moved(void *ctx, const be_reroute_rec *r) {
  tel_tap *tap = ctx;
  tap_done *d = r->phase;
  tap_phase *p = &tap->ph[d->idx];
  simtime_ps now = sim_now(tap->base.sim);
  uint32_t nt = 0;
  topo_path path = {0};
  link_view(tap, false);
  for (size_t i = 0; i < r->n; i++) { /* before now: the old paths */
    const uint32_t *ch = NULL;
    size_t n = 0;
    uint64_t was = d->sent ? d->sent[i] : 0, b = r->sent[i] > was ? r->sent[i] - was : 0;
    if (b && counted_path(tap, p, d, d->idx, i, &path, &ch, &n))
      for (size_t j = 0; j < n; j++) put_bytes(tap, counted_channel(tap, ch[j]), b, &nt);
  }
  simtime_ps from = p->moved ? p->pstart : p->start;
  size_t first = put_entries(tap, nt);
  if (tap->nent > first && now > from) {
    sim_grow((void **)&tap->pc, &tap->pccap, tap->npc + 1, sizeof *tap->pc);
    tap->pc[tap->npc++] = (tap_phase){
        .start = from, .end = now, .first = first, .count = tap->nent - first, .repeat = 1};
  } else {
    tap->nent = first; /* nothing moved since: no piece */
  }
  nt = 0;
  link_view(tap, true);
  if (!d->sent) d->sent = sim_malloc((r->n ? r->n : 1) * sizeof *d->sent);
  for (size_t i = 0; i < r->n; i++) { /* from now: the new paths, the rest of every repetition */
    const be_xfer *x = tel__niclog_xfer(&tap->nic, d->idx, i);
    uint64_t all = x ? x->bytes * p->repeat : 0;
    d->sent[i] = r->sent[i];
    if (all > r->sent[i])
      for (uint32_t k = r->off[i]; k < r->off[i + 1]; k++)
        put_bytes(tap, counted_channel(tap, r->paths[k]), all - r->sent[i], &nt);
  }
  p->first = put_entries(tap, nt);
  p->count = tap->nent - p->first;
  p->shared = false;
  p->moved = true;
  p->pstart = now;
  sim_free(d->ent_of); /* its entries changed */
  d->ent_of = NULL;
  if (tap->load) /* adaptive: the phase's load is on its new paths, as the backend's */
    for (size_t k = 0; k < d->npaths; k++) tap->load[d->paths[k]]--;
  sim_free(d->mv_off);
  sim_free(d->mv_paths);
  d->mv_off = sim_malloc((r->n + 1) * sizeof *d->mv_off);
  memcpy(d->mv_off, r->off, (r->n + 1) * sizeof *d->mv_off);
  d->mv_paths = sim_malloc((r->off[r->n] ? r->off[r->n] : 1) * sizeof *d->mv_paths);
  memcpy(d->mv_paths, r->paths, r->off[r->n] * sizeof *d->mv_paths);
  if (tap->load) {
    d->npaths = 0;
    for (uint32_t k = 0; k < r->off[r->n]; k++)
      if (r->paths[k] < 2 * topo_link_count(tap->base.topo)) tap->load[r->paths[k]]++;
    sim_free(d->paths);
    d->paths = sim_malloc((r->off[r->n] ? r->off[r->n] : 1) * sizeof *d->paths);
    for (uint32_t k = 0; k < r->off[r->n]; k++)
      if (r->paths[k] < 2 * topo_link_count(tap->base.topo)) d->paths[d->npaths++] = r->paths[k];
  }
}

static void tap_failure(void *ctx, const be_failure *f) {
  tel_tap *tap = ctx;
  size_t ph, i;
  if (tel__niclog_failed(&tap->nic, f->src_gpu, f->dst_gpu, f->bytes, f->bytes_delivered, &ph, &i))
    unfeed_failed(tap, ph, i,
                  f->bytes - (f->bytes_delivered < f->bytes ? f->bytes_delivered : f->bytes));
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
  inner->on_reroute = tap_moved;
  inner->on_reroute_ctx = tap;
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
  tap->link_changing = UINT32_MAX;
  tel__niclog_init(&tap->nic, topo_nic_count(inner->topo));
  *out = tap;
  return &tap->base;
}
