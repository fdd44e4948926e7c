/* The network of flows and its max-min fair solver.
 *
 * State
 *   Every channel keeps the list of flows crossing it (unordered; a flow
 *   remembers its index in each list, so removal is a swap with the last).
 *   Flows live in a pool of reused ids. Adding or removing a flow marks the
 *   channels of its path dirty.
 *
 * Solve (progressive filling, restricted to what changed)
 *   1. Component: starting from the dirty channels, collect every flow on
 *      them, then every channel those flows cross, and so on: the connected
 *      components (flows linked by shared channels) touched by the change.
 *      Rates outside them cannot change: max-min fairness couples flows only
 *      through shared channels.
 *   2. Water-filling: each channel's fair share is (capacity left) / (flows
 *      not yet fixed). Repeatedly take the channel with the smallest share
 *      (a heap keyed by (share, channel id)), fix all its unfixed flows at
 *      that share, and take their rates off every other channel they cross.
 *      The result is the unique max-min fair allocation.
 *   3. Report the flows whose rate changed (exact comparison).
 *
 * Determinism: the arithmetic does not depend on the order of the flow
 * lists. Within one heap pop every fixed flow gets the same share, so the
 * subtractions it causes on another channel are of equal values, and pops
 * happen in (share, channel id) order. The same flow set on the same channels
 * therefore always gets bit-identical rates, whatever the history.
 *
 * Cost: with F flows and C channels in the touched components and L the
 * path length (<= TOPO_MAX_PATH): collection O(F L), water-filling
 * O(C + F L log C) (each fixed flow updates the heap keys of its other
 * channels), nothing outside the components. No allocation once the scratch
 * arrays have reached the flow high-water mark.
 *
 * Traffic classes (a component whose flows are of two classes or more;
 * one class solves as above, bit for bit): what the packet fidelity's
 * ports converge to, strict priority levels over weighted classes, the
 * flows of a class sharing its part equally.
 *   Levels: the highest priority level's flows are solved first, alone, on
 *   the full capacities; each lower level then on what the levels above
 *   left of each channel (a strict-priority class takes all it can use).
 *   One channel, one level: classes k with flows there get A_k = w_k x L,
 *   the level L such that the A_k, a class whose flows are all fixed (at
 *   rates summing to F_k) taking only F_k when that is less, fill the
 *   channel (weighted max-min among the classes); a class's unfixed flows
 *   each get its per-flow share (A_k - F_k) / (its unfixed flows).
 *   Several channels: a flow's rate is the smallest per-flow share of its
 *   class on its path. Channels are taken in (smallest share, id) order; a
 *   channel whose every unfixed flow of the level has its smallest share
 *   there is a bottleneck of them all: they are fixed at their shares, and
 *   the shares of the channels they also cross are recomputed (a share only
 *   grows as flows elsewhere are fixed below it). A channel with a flow
 *   held tighter elsewhere waits until a flow on it is fixed. The result:
 *   every flow has a channel where the channel is full at its level, its
 *   class gets its weighted part (or all the other classes there are held
 *   elsewhere), and no flow of its class there has more (hierarchical
 *   max-min fairness: no flow can gain without taking from one that has no
 *   more at their shared bottleneck, by the classes' weights). Should no
 *   channel qualify while flows are left (a cycle of flows each held
 *   tighter at the next channel), the smallest share is fixed anyway, that
 *   channel's flows of that class only (counted in class_fallbacks; the
 *   allocation may then leave that channel short of full).
 *   Cost: per channel and level O(classes) to compute its shares; a
 *   channel's check O(its flows x L); a channel is checked again only
 *   after a flow on it is fixed. Scratch: 20 bytes per (channel, class).
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "flow/flow_internal.h"

#define NOT_IN_HEAP UINT32_MAX

void flow__net_init(flow__net *net, const topo *t) { flow__net_init_pools(net, t, false); }

void flow__net_init_pools(flow__net *net, const topo *t, bool pools) {
  memset(net, 0, sizeof *net);
  net->t = t;
  for (uint32_t k = 0; k < 8; k++) {
    net->prio[k] = k == 7 ? 2 : k == 6 ? 1 : 0;
    net->weight[k] = 1;
  }
  net->nlinkch = 2 * topo_link_count(t);
  net->nch = net->nlinkch + (pools ? topo_pool_count(t) : 0);
  size_t n = net->nch ? net->nch : 1;
  net->cap = sim_malloc(n * sizeof *net->cap);
  for (uint32_t c = 0; c < net->nch; c++)
    net->cap[c] = c < net->nlinkch ? (double)topo_channel_bps(t, c) : (double)topo_pool_bps(t, c);
  net->ch = sim_calloc(n, sizeof *net->ch);
  net->dirty = sim_malloc(n * sizeof *net->dirty);
  net->is_dirty = sim_calloc(n, sizeof *net->is_dirty);
  net->ch_epoch = sim_calloc(n, sizeof *net->ch_epoch);
  net->rem = sim_malloc(n * sizeof *net->rem);
  net->key = sim_malloc(n * sizeof *net->key);
  net->cnt = sim_malloc(n * sizeof *net->cnt);
  net->heap = sim_malloc(n * sizeof *net->heap);
  net->hpos = sim_malloc(n * sizeof *net->hpos);
  for (size_t c = 0; c < n; c++) net->hpos[c] = NOT_IN_HEAP;
  net->comp_ch = sim_malloc(n * sizeof *net->comp_ch);
}

void flow__net_free(flow__net *net) {
  for (uint32_t c = 0; c < net->nch; c++) sim_free(net->ch[c].ids);
  sim_free(net->cap);
  sim_free(net->ch);
  sim_free(net->fl);
  sim_free(net->free_ids);
  sim_free(net->dirty);
  sim_free(net->is_dirty);
  sim_free(net->ch_epoch);
  sim_free(net->rem);
  sim_free(net->key);
  sim_free(net->cnt);
  sim_free(net->heap);
  sim_free(net->hpos);
  sim_free(net->comp_ch);
  sim_free(net->comp_fl);
  sim_free(net->changed);
  sim_free(net->cu);
  sim_free(net->cf);
  sim_free(net->cs);
  sim_free(net->cused);
  memset(net, 0, sizeof *net);
}

void flow__net_set_classes(flow__net *net, const cfg_class_table *t) {
  for (uint32_t k = 0; k < 8; k++) {
    net->prio[k] = t->v[k].priority;
    net->weight[k] = t->v[k].weight ? (double)t->v[k].weight : 1.0;
  }
}

static void mark_dirty(flow__net *net, uint32_t c) {
  if (net->is_dirty[c]) return;
  net->is_dirty[c] = 1;
  net->dirty[net->ndirty++] = c;
}

void flow__net_set_cap(flow__net *net, uint32_t c, double cap) {
  if (net->cap[c] == cap) return;
  net->cap[c] = cap;
  mark_dirty(net, c);
}

uint32_t flow__net_add(flow__net *net, const uint32_t *path, uint32_t n) {
  return flow__net_add_class(net, path, n, 0);
}

uint32_t flow__net_add_class(flow__net *net, const uint32_t *path, uint32_t n, uint8_t cls) {
  assert(n >= 1 && n <= TOPO_MAX_PATH);
  uint32_t id;
  if (net->nfree) {
    id = net->free_ids[--net->nfree];
  } else {
    if (net->nfl == net->flcap) {
      net->flcap = net->flcap ? 2 * net->flcap : 1024;
      net->fl = sim_realloc(net->fl, net->flcap * sizeof *net->fl);
      net->free_ids = sim_realloc(net->free_ids, net->flcap * sizeof *net->free_ids);
    }
    id = net->nfl++;
  }
  flow__flow *f = &net->fl[id];
  f->rate = f->rem = f->new_rate = 0.0;
  f->t_last = 0;
  f->t_end = SIM_TIME_MAX;
  f->ev = 0;
  f->phase = f->xfer = 0;
  f->path = path;
  f->n = n;
  f->seen = f->frozen = 0;
  f->cls = cls & 7;
  for (uint32_t j = 0; j < n; j++) {
    uint32_t c = path[j];
    assert(c < net->nch);
    flow__chan *ch = &net->ch[c];
    if (ch->n == ch->cap) {
      ch->cap = ch->cap ? 2 * ch->cap : 4;
      ch->ids = sim_realloc(ch->ids, ch->cap * sizeof *ch->ids);
    }
    f->pos[j] = ch->n;
    ch->ids[ch->n++] = id;
    if (ch->n > net->max_sharing) net->max_sharing = ch->n;
    mark_dirty(net, c);
  }
  net->live++;
  return id;
}

void flow__net_remove(flow__net *net, uint32_t id) {
  flow__flow *f = &net->fl[id];
  for (uint32_t j = 0; j < f->n; j++) {
    uint32_t c = f->path[j];
    flow__chan *ch = &net->ch[c];
    uint32_t at = f->pos[j], last = ch->ids[--ch->n];
    assert(ch->ids[at] == id);
    if (last != id) {
      ch->ids[at] = last;
      flow__flow *g = &net->fl[last];
      uint32_t k = 0;
      while (g->path[k] != c) k++;
      g->pos[k] = at;
    }
    mark_dirty(net, c);
  }
  f->n = 0;
  net->free_ids[net->nfree++] = id;
  net->live--;
}

/* ---- indexed binary min-heap of channels keyed by (key[c], c) ---------- */

static inline bool less(const flow__net *net, uint32_t a, uint32_t b) {
  if (net->key[a] != net->key[b]) return net->key[a] < net->key[b];
  return a < b; /* ties by channel id: a total order */
}

static void sift_up(flow__net *net, uint32_t i) {
  uint32_t c = net->heap[i];
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (!less(net, c, net->heap[p])) break;
    net->heap[i] = net->heap[p];
    net->hpos[net->heap[i]] = i;
    i = p;
  }
  net->heap[i] = c;
  net->hpos[c] = i;
}

static void sift_down(flow__net *net, uint32_t i) {
  uint32_t c = net->heap[i], n = net->hn;
  for (;;) {
    uint32_t l = 2 * i + 1;
    if (l >= n) break;
    uint32_t m = l + 1 < n && less(net, net->heap[l + 1], net->heap[l]) ? l + 1 : l;
    if (!less(net, net->heap[m], c)) break;
    net->heap[i] = net->heap[m];
    net->hpos[net->heap[i]] = i;
    i = m;
  }
  net->heap[i] = c;
  net->hpos[c] = i;
}

static void heap_remove_at(flow__net *net, uint32_t i) {
  uint32_t c = net->heap[i];
  net->hpos[c] = NOT_IN_HEAP;
  if (--net->hn == i) return;
  uint32_t moved = net->heap[net->hn];
  net->heap[i] = moved;
  net->hpos[moved] = i;
  sift_down(net, i);
  sift_up(net, net->hpos[moved]);
}

/* Epoch stamps wrap after 2^32 solves: clear them all once. */
static uint32_t next_epoch(flow__net *net) {
  if (++net->epoch == 0) {
    memset(net->ch_epoch, 0, net->nch * sizeof *net->ch_epoch);
    for (uint32_t i = 0; i < net->nfl; i++) net->fl[i].seen = net->fl[i].frozen = 0;
    net->epoch = 1;
  }
  return net->epoch;
}

/* Step 1: the components touching the dirty channels, and their classes. */
static void collect(flow__net *net, uint32_t e) {
  uint32_t nc = 0;
  for (uint32_t i = 0; i < net->ndirty; i++) {
    uint32_t c = net->dirty[i];
    net->is_dirty[c] = 0;
    if (net->ch_epoch[c] != e) {
      net->ch_epoch[c] = e;
      net->comp_ch[nc++] = c;
    }
  }
  net->ndirty = 0;
  size_t nf = 0;
  uint32_t cm = 0;
  for (uint32_t i = 0; i < nc; i++) {
    const flow__chan *ch = &net->ch[net->comp_ch[i]];
    for (uint32_t k = 0; k < ch->n; k++) {
      uint32_t id = ch->ids[k];
      flow__flow *f = &net->fl[id];
      if (f->seen == e) continue;
      f->seen = e;
      cm |= 1u << f->cls;
      if (nf == net->comp_fl_cap)
        sim_grow((void **)&net->comp_fl, &net->comp_fl_cap, nf + 1, sizeof *net->comp_fl);
      net->comp_fl[nf++] = id;
      for (uint32_t j = 0; j < f->n; j++) {
        uint32_t c2 = f->path[j];
        if (net->ch_epoch[c2] != e) {
          net->ch_epoch[c2] = e;
          net->comp_ch[nc++] = c2;
        }
      }
    }
  }
  net->ncomp_ch = nc;
  net->ncomp_fl = nf;
  net->comp_cm = cm;
}

/* Step 2: progressive filling over the collected components. */
static void fill(flow__net *net, uint32_t e) {
  net->hn = 0;
  for (uint32_t i = 0; i < net->ncomp_ch; i++) {
    uint32_t c = net->comp_ch[i];
    uint32_t n = net->ch[c].n;
    if (n == 0) continue;
    net->cnt[c] = n;
    net->rem[c] = net->cap[c];
    net->key[c] = net->cap[c] / n;
    net->heap[net->hn] = c;
    net->hpos[c] = net->hn++;
  }
  for (uint32_t i = net->hn / 2; i-- > 0;) sift_down(net, i);
  while (net->hn > 0) {
    uint32_t c = net->heap[0];
    double share = net->key[c] > 0.0 ? net->key[c] : 0.0;
    heap_remove_at(net, 0);
    const flow__chan *ch = &net->ch[c];
    for (uint32_t k = 0; k < ch->n; k++) {
      flow__flow *f = &net->fl[ch->ids[k]];
      if (f->frozen == e) continue;
      f->frozen = e;
      f->new_rate = share;
      for (uint32_t j = 0; j < f->n; j++) {
        uint32_t c2 = f->path[j];
        if (c2 == c) continue;
        uint32_t at = net->hpos[c2];
        assert(at != NOT_IN_HEAP); /* a channel leaves the heap only once all its flows are fixed */
        net->rem[c2] -= share;
        if (--net->cnt[c2] == 0) {
          heap_remove_at(net, at);
        } else {
          net->key[c2] = net->rem[c2] / net->cnt[c2];
          sift_down(net, at); /* shares only grow, up to rounding: */
          sift_up(net, net->hpos[c2]);
        }
      }
    }
  }
}

/* ---- traffic classes (see the header comment) ----------------------------- */

#define CL(c, k) ((size_t)(c)*8 + (k))

/* Channel c's per-flow share of each class of level mask lm with unfixed
 * flows (cs), weighted max-min among the classes on what the levels above
 * left; key[c] the smallest of them (+inf: none). O(classes^2). */
static void class_shares(flow__net *net, uint32_t c, uint32_t lm) {
  double room = net->cap[c] - net->cused[c], w = 0.0, fin_w[8], fin_f[8];
  uint32_t nfin = 0;
  net->key[c] = INFINITY;
  for (uint32_t k = 0; k < 8; k++) {
    if (!(lm >> k & 1)) continue;
    if (net->cu[CL(c, k)]) {
      w += net->weight[k];
    } else if (net->cf[CL(c, k)] > 0.0) { /* all fixed: it takes its F_k at most; */
      uint32_t j = nfin++;                /* kept sorted by F_k / w_k, then k */
      while (j > 0 && fin_f[j - 1] / fin_w[j - 1] > net->cf[CL(c, k)] / net->weight[k]) {
        fin_f[j] = fin_f[j - 1], fin_w[j] = fin_w[j - 1];
        j--;
      }
      fin_f[j] = net->cf[CL(c, k)], fin_w[j] = net->weight[k];
    }
  }
  if (w == 0.0) return;
  if (room < 0.0) room = 0.0;
  double wt = w;
  for (uint32_t i = 0; i < nfin; i++) wt += fin_w[i];
  for (uint32_t i = 0; i < nfin && fin_f[i] / fin_w[i] <= room / wt; i++) {
    room -= fin_f[i]; /* a class held elsewhere takes less than its part */
    wt -= fin_w[i];
  }
  double level = room > 0.0 ? room / wt : 0.0;
  for (uint32_t k = 0; k < 8; k++) {
    if (!(lm >> k & 1) || !net->cu[CL(c, k)]) continue;
    double sh = (net->weight[k] * level - net->cf[CL(c, k)]) / net->cu[CL(c, k)];
    net->cs[CL(c, k)] = sh > 0.0 ? sh : 0.0;
    if (net->cs[CL(c, k)] < net->key[c]) net->key[c] = net->cs[CL(c, k)];
  }
}

/* Smallest share of flow f's class on its path. */
static double flow_share(const flow__net *net, const flow__flow *f) {
  double m = INFINITY;
  for (uint32_t j = 0; j < f->n; j++)
    if (net->cs[CL(f->path[j], f->cls)] < m) m = net->cs[CL(f->path[j], f->cls)];
  return m;
}

/* Fix the unfixed flows of classes `fix` on channel c at their class's
 * share there; every other channel they cross gets its shares of level
 * mask lm recomputed and (re)enters the heap while it has unfixed flows of
 * the level. Scratch: net->changed (rebuilt after the fill) holds the
 * flows fixed, net->is_dirty (all clear during a solve) marks channels. */
static void class_fix(flow__net *net, uint32_t e, uint32_t c, uint32_t fix, uint32_t lm) {
  const flow__chan *ch = &net->ch[c];
  size_t nfix = 0;
  for (uint32_t i = 0; i < ch->n; i++) {
    flow__flow *f = &net->fl[ch->ids[i]];
    if (f->frozen == e || !(fix >> f->cls & 1)) continue;
    double r = net->cs[CL(c, f->cls)];
    f->frozen = e;
    f->new_rate = r;
    for (uint32_t j = 0; j < f->n; j++) {
      uint32_t c2 = f->path[j];
      net->cu[CL(c2, f->cls)]--;
      net->cf[CL(c2, f->cls)] += r; /* equal values within a round: order-free */
      net->cnt[c2]--;
    }
    if (nfix == net->changed_cap)
      sim_grow((void **)&net->changed, &net->changed_cap, nfix + 1, sizeof *net->changed);
    net->changed[nfix++] = ch->ids[i];
  }
  for (size_t i = 0; i < nfix; i++) {
    const flow__flow *f = &net->fl[net->changed[i]];
    for (uint32_t j = 0; j < f->n; j++) {
      uint32_t c2 = f->path[j], at = net->hpos[c2];
      if (net->is_dirty[c2]) continue;
      net->is_dirty[c2] = 1;
      if (net->cnt[c2] == 0) {
        if (at != NOT_IN_HEAP) heap_remove_at(net, at);
        continue;
      }
      class_shares(net, c2, lm);
      if (at == NOT_IN_HEAP) {
        net->heap[net->hn] = c2;
        net->hpos[c2] = net->hn++;
        sift_up(net, net->hpos[c2]);
      } else {
        sift_down(net, at);
        sift_up(net, net->hpos[c2]);
      }
    }
  }
  for (size_t i = 0; i < nfix; i++) {
    const flow__flow *f = &net->fl[net->changed[i]];
    for (uint32_t j = 0; j < f->n; j++) net->is_dirty[f->path[j]] = 0;
  }
}

/* Is every unfixed flow of level mask lm on channel c held tightest here? */
static bool class_safe(const flow__net *net, uint32_t e, uint32_t c, uint32_t lm) {
  const flow__chan *ch = &net->ch[c];
  for (uint32_t i = 0; i < ch->n; i++) {
    const flow__flow *f = &net->fl[ch->ids[i]];
    if (f->frozen == e || !(lm >> f->cls & 1)) continue;
    if (flow_share(net, f) < net->cs[CL(c, f->cls)]) return false;
  }
  return true;
}

/* One priority level (its classes lm) over the collected component. */
static void class_level(flow__net *net, uint32_t e, uint32_t lm) {
  net->hn = 0;
  for (uint32_t i = 0; i < net->ncomp_ch; i++) {
    uint32_t c = net->comp_ch[i];
    net->cnt[c] = 0;
    for (uint32_t k = 0; k < 8; k++) net->cu[CL(c, k)] = 0, net->cf[CL(c, k)] = 0.0;
    const flow__chan *ch = &net->ch[c];
    for (uint32_t j = 0; j < ch->n; j++) {
      const flow__flow *f = &net->fl[ch->ids[j]];
      if (!(lm >> f->cls & 1)) continue;
      net->cu[CL(c, f->cls)]++;
      net->cnt[c]++;
    }
  }
  for (uint32_t i = 0; i < net->ncomp_ch; i++) {
    uint32_t c = net->comp_ch[i];
    if (!net->cnt[c]) continue;
    class_shares(net, c, lm);
    net->heap[net->hn] = c;
    net->hpos[c] = net->hn++;
  }
  for (uint32_t i = net->hn / 2; i-- > 0;) sift_down(net, i);
  for (;;) {
    while (net->hn > 0) {
      uint32_t c = net->heap[0];
      heap_remove_at(net, 0);
      if (class_safe(net, e, c, lm)) class_fix(net, e, c, lm, lm);
      /* else it waits: class_fix puts it back once a flow on it is fixed */
    }
    /* Left: channels whose flows are each held tighter elsewhere. The
     * smallest share (ties: lower channel, then class) is fixed, its class
     * on that channel only. O(C) per fallback. */
    uint32_t best = UINT32_MAX, bk = 0;
    for (uint32_t i = 0; i < net->ncomp_ch; i++) {
      uint32_t c = net->comp_ch[i];
      if (!net->cnt[c]) continue;
      for (uint32_t k = 0; k < 8; k++)
        if (lm >> k & 1 && net->cu[CL(c, k)] &&
            (best == UINT32_MAX || net->cs[CL(c, k)] < net->cs[CL(best, bk)] ||
             (net->cs[CL(c, k)] == net->cs[CL(best, bk)] && c < best)))
          best = c, bk = k;
    }
    if (best == UINT32_MAX) break;
    net->class_fallbacks++;
    class_fix(net, e, best, 1u << bk, lm);
  }
  for (uint32_t i = 0; i < net->ncomp_ch; i++) { /* what this level takes, in class order */
    uint32_t c = net->comp_ch[i];
    for (uint32_t k = 0; k < 8; k++)
      if (lm >> k & 1) net->cused[c] += net->cf[CL(c, k)];
  }
}

/* Step 2 with traffic classes: the levels present in the component (classes
 * mask cm), highest first. */
static void fill_classes(flow__net *net, uint32_t e, uint32_t cm) {
  size_t n = (size_t)(net->nch ? net->nch : 1) * 8;
  if (!net->cu) {
    net->cu = sim_malloc(n * sizeof *net->cu);
    net->cf = sim_malloc(n * sizeof *net->cf);
    net->cs = sim_calloc(n, sizeof *net->cs);
    net->cused = sim_malloc((net->nch ? net->nch : 1) * sizeof *net->cused);
  }
  net->class_solves++;
  for (uint32_t i = 0; i < net->ncomp_ch; i++) net->cused[net->comp_ch[i]] = 0.0;
  for (uint32_t done = 0; done != cm;) {
    uint32_t top = 0, lm = 0;
    for (uint32_t k = 0; k < 8; k++)
      if ((cm & ~done) >> k & 1 && net->prio[k] >= top) top = net->prio[k];
    for (uint32_t k = 0; k < 8; k++)
      if ((cm & ~done) >> k & 1 && net->prio[k] == top) lm |= 1u << k;
    class_level(net, e, lm);
    done |= lm;
  }
}

void flow__net_solve(flow__net *net) {
  net->nchanged = 0;
  if (net->ndirty == 0) return;
  uint32_t e = next_epoch(net);
  collect(net, e);
  uint32_t cm = net->comp_cm; /* two classes or more: the classed fill */
  if (cm & (cm - 1)) fill_classes(net, e, cm);
  else fill(net, e);
  for (size_t i = 0; i < net->ncomp_fl; i++) {
    uint32_t id = net->comp_fl[i];
    if (net->fl[id].new_rate == net->fl[id].rate) continue;
    if (net->nchanged == net->changed_cap)
      sim_grow((void **)&net->changed, &net->changed_cap, net->nchanged + 1, sizeof *net->changed);
    net->changed[net->nchanged++] = id;
  }
  net->solves++;
  net->solved_flows += net->ncomp_fl;
  net->solved_channels += net->ncomp_ch;
}
