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
 */
#include <assert.h>
#include <string.h>

#include "flow/flow_internal.h"

#define NOT_IN_HEAP UINT32_MAX

void flow__net_init(flow__net *net, const topo *t) { flow__net_init_pools(net, t, false); }

void flow__net_init_pools(flow__net *net, const topo *t, bool pools) {
  memset(net, 0, sizeof *net);
  net->t = t;
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
  memset(net, 0, sizeof *net);
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

/* Step 1: the components touching the dirty channels. */
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
  for (uint32_t i = 0; i < nc; i++) {
    const flow__chan *ch = &net->ch[net->comp_ch[i]];
    for (uint32_t k = 0; k < ch->n; k++) {
      uint32_t id = ch->ids[k];
      flow__flow *f = &net->fl[id];
      if (f->seen == e) continue;
      f->seen = e;
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

void flow__net_solve(flow__net *net) {
  net->nchanged = 0;
  if (net->ndirty == 0) return;
  uint32_t e = next_epoch(net);
  collect(net, e);
  fill(net, e);
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
