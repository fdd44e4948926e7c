/* A pool's quotient by its segments (fabsim/backend.h, be_quot).
 *
 * Channels and GPUs: each sees the pool's transfers in pool order, so in
 * segment order; its histogram is the list of runs (segment, transfers,
 * bytes), one per segment it appears in. Pass one hashes every histogram
 * as it goes (O(1) state per channel or GPU) and interns (kind, hash, runs)
 * into classes, the lowest member first; pass two walks the pool again and
 * checks every member's runs against its class's first member's, entry by
 * entry, so a class is exactly the channels (GPUs) with equal histograms,
 * or the build fails. Transfers: interned by (segment, bytes, latency, the
 * sorted set of their channel classes), compared in full. Class ids are
 * given in order of first appearance: transfer classes come out grouped by
 * segment, channel and GPU classes ascending by their lowest member.
 *
 * Memory while building: the routed paths (4 bytes per channel crossed),
 * 40 bytes per channel and GPU, the interning tables; kept: per channel
 * and GPU its class, per class a few words, per segment its runs. */
#include <string.h>

#include "fabsim/backend.h"

#define NONE UINT32_MAX

static uint64_t mix(uint64_t h, uint64_t v) { return sim_hash_u64(h ^ sim_hash_u64(v + h)); }

/* ---- interning: open addressing over class ids by a 64-bit hash ------------------------- */

typedef struct itab {
  uint32_t *slot; /* class id + 1; 0: empty */
  size_t cap;     /* power of two, at least twice the classes */
  uint64_t *hash; /* per class */
  size_t n, hcap;
} itab;

static void itab_init(itab *tb) {
  memset(tb, 0, sizeof *tb);
  tb->cap = 1024;
  tb->slot = sim_calloc(tb->cap, sizeof *tb->slot);
}

static void itab_free(itab *tb) {
  sim_free(tb->slot);
  sim_free(tb->hash);
  memset(tb, 0, sizeof *tb);
}

/* The class of hash h for which eq(ctx, class) holds, or NONE. */
static uint32_t itab_find(const itab *tb, uint64_t h, bool (*eq)(const void *, uint32_t),
                          const void *ctx) {
  for (size_t i = (size_t)h & (tb->cap - 1); tb->slot[i]; i = (i + 1) & (tb->cap - 1)) {
    uint32_t c = tb->slot[i] - 1;
    if (tb->hash[c] == h && eq(ctx, c)) return c;
  }
  return NONE;
}

/* A new class of hash h: its id (the classes so far). */
static uint32_t itab_add(itab *tb, uint64_t h) {
  if (2 * (tb->n + 1) > tb->cap) {
    sim_free(tb->slot);
    tb->cap *= 2;
    tb->slot = sim_calloc(tb->cap, sizeof *tb->slot);
    for (size_t c = 0; c < tb->n; c++) {
      size_t i = (size_t)tb->hash[c] & (tb->cap - 1);
      while (tb->slot[i]) i = (i + 1) & (tb->cap - 1);
      tb->slot[i] = (uint32_t)c + 1;
    }
  }
  sim_grow((void **)&tb->hash, &tb->hcap, tb->n + 1, sizeof *tb->hash);
  uint32_t c = (uint32_t)tb->n++;
  tb->hash[c] = h;
  size_t i = (size_t)h & (tb->cap - 1);
  while (tb->slot[i]) i = (i + 1) & (tb->cap - 1);
  tb->slot[i] = c + 1;
  return c;
}

/* ---- histograms: runs of (segment, count, bytes) ------------------------------------------ */

typedef struct seg_run {
  uint32_t seg, count; /* the run being counted (seg NONE: none yet) */
  uint64_t bytes;
  uint64_t h;    /* hash of the runs before it (pass one); the item's class (pass two) */
  uint32_t n, k; /* runs before it */
} seg_run;

static void seg_runs_reset(seg_run *r, size_t n) {
  for (size_t i = 0; i < n; i++) r[i] = (seg_run){.seg = NONE};
}

static void seg_run_fold_hash(seg_run *r) {
  r->h = mix(mix(r->h, (uint64_t)r->seg << 32 | r->count), r->bytes);
  r->n++;
}

/* Pass one: one more transfer of segment s with `bytes` on r. */
static inline void seg_run_hash(seg_run *r, uint32_t s, uint64_t bytes) {
  if (r->seg != s) {
    if (r->seg != NONE) seg_run_fold_hash(r);
    r->seg = s;
    r->count = 0;
    r->bytes = 0;
  }
  r->count++;
  r->bytes += bytes;
}

/* Classes of items (channels or GPUs) by their histograms: per class its
 * first member and its runs (written by the first member in pass two). */
typedef struct hclass {
  itab tb;
  uint32_t *of; /* per item */
  uint32_t *first, *members;
  uint64_t *color;   /* per class: what must match besides the runs */
  uint32_t *nruns;   /* per class */
  size_t *roff;      /* per class: its runs in rl[roff .. roff + nruns) */
  be_quot_entry *rl; /* (cls holds the segment here) */
  size_t cap_first, cap_members, cap_color, cap_nruns;
  bool ok; /* pass two found every member equal to its first */
} hclass;

typedef struct hkey {
  const hclass *hc;
  uint64_t color, h;
  uint32_t n;
} hkey;

static bool hclass_eq(const void *ctx, uint32_t c) {
  const hkey *k = ctx;
  return k->hc->color[c] == k->color && k->hc->nruns[c] == k->n;
}

/* After pass one: intern every item (0 .. n) by (color, hash, runs). */
static void hclass_intern(hclass *hc, seg_run *r, const uint64_t *color, size_t n) {
  itab_init(&hc->tb);
  hc->of = sim_malloc((n ? n : 1) * sizeof *hc->of);
  for (size_t i = 0; i < n; i++) {
    if (r[i].seg != NONE) seg_run_fold_hash(&r[i]);
    hkey k = {.hc = hc, .color = color[i], .h = r[i].h, .n = r[i].n};
    uint64_t h = mix(mix(k.color, k.h), k.n);
    uint32_t c = itab_find(&hc->tb, h, hclass_eq, &k);
    if (c == NONE) {
      c = itab_add(&hc->tb, h);
      sim_grow((void **)&hc->first, &hc->cap_first, c + 1, sizeof *hc->first);
      sim_grow((void **)&hc->members, &hc->cap_members, c + 1, sizeof *hc->members);
      sim_grow((void **)&hc->color, &hc->cap_color, c + 1, sizeof *hc->color);
      sim_grow((void **)&hc->nruns, &hc->cap_nruns, c + 1, sizeof *hc->nruns);
      hc->first[c] = (uint32_t)i;
      hc->members[c] = 0;
      hc->color[c] = k.color;
      hc->nruns[c] = k.n;
    }
    hc->members[c]++;
    hc->of[i] = c;
  }
  seg_runs_reset(r, n);
  for (size_t i = 0; i < n; i++) r[i].h = hc->of[i]; /* pass two: the class, at hand */
  size_t nc = hc->tb.n, total = 0;
  hc->roff = sim_malloc((nc + 1) * sizeof *hc->roff);
  for (size_t c = 0; c < nc; c++) hc->roff[c] = total, total += hc->nruns[c];
  hc->roff[nc] = total;
  hc->rl = sim_malloc((total ? total : 1) * sizeof *hc->rl);
  hc->ok = true;
}

/* Pass two: item i's run r is complete (the pool has moved past its
 * segment): its first member writes it, the others compare. */
static void seg_run_check(hclass *hc, seg_run *r, uint32_t i, const seg_run *all) {
  uint32_t c = (uint32_t)r->h, f = hc->first[c];
  be_quot_entry e = {.cls = r->seg, .count = r->count, .bytes = r->bytes};
  if (r->k >= hc->nruns[c]) {
    hc->ok = false;
  } else if (f == i) {
    hc->rl[hc->roff[c] + r->k] = e;
  } else {
    const seg_run *fr = &all[f];
    be_quot_entry g;
    if (fr->k > r->k) g = hc->rl[hc->roff[c] + r->k];
    else if (fr->k == r->k && fr->seg == r->seg)
      g = (be_quot_entry){.cls = fr->seg, .count = fr->count, .bytes = fr->bytes};
    else g = (be_quot_entry){.cls = NONE};
    if (g.cls != e.cls || g.count != e.count || g.bytes != e.bytes) hc->ok = false;
  }
  r->k++;
}

static inline void seg_run_walk(hclass *hc, seg_run *all, uint32_t i, uint32_t s, uint64_t bytes) {
  seg_run *r = &all[i];
  if (r->seg != s) {
    if (r->seg != NONE) seg_run_check(hc, r, i, all);
    r->seg = s;
    r->count = 0;
    r->bytes = 0;
  }
  r->count++;
  r->bytes += bytes;
}

/* End of pass two: the last runs, first members before the others. */
static void hclass_finish(hclass *hc, seg_run *r, size_t n) {
  for (int firsts = 1; firsts >= 0; firsts--)
    for (size_t i = 0; i < n; i++) {
      bool is_first = hc->first[hc->of[i]] == i;
      if (is_first != (bool)firsts) continue;
      if (r[i].seg != NONE) seg_run_check(hc, &r[i], (uint32_t)i, r);
      if (r[i].k != hc->nruns[hc->of[i]]) hc->ok = false;
    }
}

static void hclass_free(hclass *hc) {
  itab_free(&hc->tb);
  sim_free(hc->of);
  sim_free(hc->first);
  sim_free(hc->members);
  sim_free(hc->color);
  sim_free(hc->nruns);
  sim_free(hc->roff);
  sim_free(hc->rl);
  memset(hc, 0, sizeof *hc);
}

/* Per segment, the runs of every class (from its first member's), by class. */
static void seg_entries(const hclass *hc, uint32_t nseg, size_t **off, be_quot_entry **out) {
  size_t nc = hc->tb.n, total = hc->roff[nc];
  *off = sim_calloc((size_t)nseg + 1, sizeof **off);
  *out = sim_malloc((total ? total : 1) * sizeof **out);
  for (size_t j = 0; j < total; j++) (*off)[hc->rl[j].cls + 1]++;
  for (uint32_t s = 0; s < nseg; s++) (*off)[s + 1] += (*off)[s];
  size_t *fill = sim_malloc(((size_t)nseg + 1) * sizeof *fill);
  memcpy(fill, *off, ((size_t)nseg + 1) * sizeof *fill);
  for (size_t c = 0; c < nc; c++)
    for (size_t j = hc->roff[c]; j < hc->roff[c + 1]; j++)
      (*out)[fill[hc->rl[j].cls]++] =
          (be_quot_entry){.cls = (uint32_t)c, .count = hc->rl[j].count, .bytes = hc->rl[j].bytes};
  sim_free(fill);
}

/* ---- transfer classes ---------------------------------------------------------------------- */

/* A transfer's key: segment, bytes, its path as channel classes in path
 * order (and, spraying, its latency: a pool's members may differ in it;
 * otherwise the path's channel classes fix it, their color holding each
 * hop's link and vertex latency). */
typedef struct tkey {
  const be_quot *q;
  const uint32_t *tc_seg, *tc_key, *tc_koff;
  uint32_t seg, n;
  uint64_t bytes;
  simtime_ps lat; /* spraying only: part of the key */
  bool spray;
  const uint32_t *path;
} tkey;

static bool tclass_eq(const void *ctx, uint32_t c) {
  const tkey *k = ctx;
  const be_quot *q = k->q;
  if (k->tc_seg[c] != k->seg || q->tc_bytes[c] != k->bytes ||
      (k->spray && q->tc_lat[c] != k->lat) || k->tc_koff[c + 1] - k->tc_koff[c] != k->n)
    return false;
  return k->n == 0 || !memcmp(k->tc_key + k->tc_koff[c], k->path, k->n * sizeof *k->path);
}

/* The set of class k's channel classes, ascending, from its key. */
static uint32_t path_set(const uint32_t *key, uint32_t n, uint32_t *out) {
  uint32_t m = 0;
  for (uint32_t j = 0; j < n; j++) { /* insertion: paths are short */
    uint32_t v = key[j], i = m;
    bool dup = false;
    for (uint32_t r = 0; r < m; r++) dup |= out[r] == v;
    if (dup) continue;
    while (i > 0 && out[i - 1] > v) out[i] = out[i - 1], i--;
    out[i] = v;
    m++;
  }
  return m;
}

/* Transfer classes from the routed paths (channel classes known; lat per
 * transfer when spraying, else NULL: computed for each class's first). */
static void transfer_classes(be_quot *q, const topo *t, const be_xfer *pool, const uint8_t *len,
                             const uint32_t *ch, const simtime_ps *lat, const uint32_t *cc_of) {
  itab tb;
  itab_init(&tb);
  uint32_t *tc_seg = NULL, *tc_key = NULL, *tc_koff = NULL;
  size_t cap_seg = 0, cap_w = 0, cap_b = 0, cap_l = 0, cap_ko = 0, cap_k = 0, words = 0;
  size_t cap_po = 0, cap_p = 0, pwords = 0;
  q->seg_tc = sim_calloc((size_t)q->nseg + 1, sizeof *q->seg_tc);
  q->seg_bytes = sim_calloc(q->nseg ? q->nseg : 1, sizeof *q->seg_bytes);
  q->tc_of = sim_malloc((q->pool_n ? q->pool_n : 1) * sizeof *q->tc_of);
  sim_grow((void **)&tc_koff, &cap_ko, 1, sizeof *tc_koff);
  sim_grow((void **)&q->tc_poff, &cap_po, 1, sizeof *q->tc_poff);
  tc_koff[0] = q->tc_poff[0] = 0;
  uint32_t s = 0;
  size_t w = 0, total = 0;
  for (size_t i = 0; i < q->pool_n; i++) total += len[i];
  for (size_t i = 0; i < q->pool_n; i++) {
    while (i >= q->cuts[s + 1]) q->seg_tc[++s] = (uint32_t)tb.n;
    uint32_t path[TOPO_MAX_PATH], n = len[i];
    for (uint32_t j = 0; j < n; j++) {
      if (w + j + 32 < total) __builtin_prefetch(&cc_of[ch[w + j + 32]]);
      path[j] = cc_of[ch[w + j]];
    }
    tkey k = {.q = q,
              .tc_seg = tc_seg,
              .tc_key = tc_key,
              .tc_koff = tc_koff,
              .seg = s,
              .n = n,
              .bytes = pool[i].bytes,
              .lat = lat ? lat[i] : 0,
              .spray = lat != NULL,
              .path = path};
    uint64_t h = mix(mix(mix(s, k.bytes), k.lat), n);
    for (uint32_t j = 0; j < n; j++) h = mix(h, path[j]);
    uint32_t c = itab_find(&tb, h, tclass_eq, &k);
    if (c == NONE) {
      c = itab_add(&tb, h);
      sim_grow((void **)&tc_seg, &cap_seg, c + 1, sizeof *tc_seg);
      sim_grow((void **)&q->tc_w, &cap_w, c + 1, sizeof *q->tc_w);
      sim_grow((void **)&q->tc_bytes, &cap_b, c + 1, sizeof *q->tc_bytes);
      sim_grow((void **)&q->tc_lat, &cap_l, c + 1, sizeof *q->tc_lat);
      sim_grow((void **)&tc_koff, &cap_ko, c + 2, sizeof *tc_koff);
      sim_grow((void **)&tc_key, &cap_k, words + n + 1, sizeof *tc_key);
      sim_grow((void **)&q->tc_poff, &cap_po, c + 2, sizeof *q->tc_poff);
      sim_grow((void **)&q->tc_path, &cap_p, pwords + n + 1, sizeof *q->tc_path);
      tc_seg[c] = s;
      q->tc_w[c] = 0;
      q->tc_bytes[c] = k.bytes;
      topo_path tp = {.n = n};
      memcpy(tp.ch, ch + w, n * sizeof *ch);
      q->tc_lat[c] = lat ? lat[i] : n ? topo_path_latency(t, &tp) : 0;
      memcpy(tc_key + words, path, n * sizeof *path);
      words += n;
      tc_koff[c + 1] = (uint32_t)words;
      pwords += path_set(path, n, q->tc_path + pwords);
      q->tc_poff[c + 1] = (uint32_t)pwords;
    }
    w += n;
    q->tc_of[i] = c;
    q->tc_w[c]++;
    q->seg_bytes[s] += pool[i].bytes;
  }
  while (s < q->nseg) q->seg_tc[++s] = (uint32_t)tb.n;
  q->ntc = (uint32_t)tb.n;
  sim_free(tc_seg);
  sim_free(tc_key);
  sim_free(tc_koff);
  itab_free(&tb);
}

/* ---- the build ------------------------------------------------------------------------------ */

/* Route x; spraying, its latency (on the path taken, before it becomes
 * pools) into *lat. */
static void route(const topo *t, topo_split split, const be_xfer *x, topo_path *p,
                  simtime_ps *lat) {
  p->n = 0;
  if (x->src_gpu != x->dst_gpu) topo_route(t, x->src_gpu, x->dst_gpu, x->flow_hash, p);
  if (split != TOPO_SPLIT_POOLS) return;
  *lat = p->n ? topo_path_latency(t, p) : 0;
  for (uint32_t j = 0; j < p->n; j++) p->ch[j] = topo_spray_channel(t, p->ch[j]);
}

/* What a channel class must share besides its runs, exactly: capacity,
 * kinds (the link's and its two ends'; spray pools one of their own) and
 * latencies (the link's, its far end's): a color, numbered in order of
 * first appearance. O(channels), few colors. */
typedef struct chan_color {
  rate_bps cap;
  uint32_t kinds;
  simtime_ps link_lat, vertex_lat;
} chan_color;

typedef struct ckey {
  const chan_color *tab, *c;
} ckey;

static bool color_eq(const void *ctx, uint32_t i) {
  const ckey *k = ctx;
  const chan_color *a = &k->tab[i], *b = k->c;
  return a->cap == b->cap && a->kinds == b->kinds && a->link_lat == b->link_lat &&
         a->vertex_lat == b->vertex_lat;
}

static void channel_colors(const topo *t, uint32_t nch, uint32_t nlinkch, uint64_t *id,
                           rate_bps *cap_of) {
  itab tb;
  itab_init(&tb);
  chan_color *tab = NULL;
  size_t cap = 0;
  for (uint32_t ch = 0; ch < nch; ch++) {
    chan_color c = {.kinds = 0xffff};
    if (ch >= nlinkch) {
      c.cap = topo_pool_bps(t, ch);
    } else {
      const topo_link *l = topo_link_at(t, topo_channel_link(ch));
      const topo_vertex *dst = topo_vertex_at(t, topo_channel_dst(t, ch));
      c.cap = topo_channel_bps(t, ch); /* a storage drive link: its direction's rate */
      c.kinds = (uint32_t)l->kind |
                (uint32_t)topo_vertex_at(t, topo_channel_src(t, ch))->kind << 4 |
                (uint32_t)dst->kind << 8;
      c.link_lat = l->latency;
      c.vertex_lat = dst->latency;
    }
    ckey k = {.tab = tab, .c = &c};
    uint64_t h = mix(mix(mix(mix(c.cap, c.kinds), c.link_lat), c.vertex_lat), 7);
    uint32_t i = itab_find(&tb, h, color_eq, &k);
    if (i == NONE) {
      i = itab_add(&tb, h);
      sim_grow((void **)&tab, &cap, i + 1, sizeof *tab);
      tab[i] = c;
    }
    id[ch] = i;
    cap_of[ch] = c.cap;
  }
  sim_free(tab);
  itab_free(&tb);
}

/* Route every transfer once: path lengths, channels (flat), latencies
 * (spraying only; else NULL). */
static size_t quot_route(const topo *t, const be_slice *sl, topo_split split, uint8_t **len,
                         uint32_t **ch, simtime_ps **lat) {
  size_t n = sl->pool_n, cap = 0, words = 0;
  *len = sim_malloc(n ? n : 1);
  *lat = split == TOPO_SPLIT_POOLS ? sim_malloc((n ? n : 1) * sizeof **lat) : NULL;
  *ch = NULL;
  for (size_t i = 0; i < n; i++) {
    topo_path p;
    simtime_ps l = 0;
    route(t, split, &sl->pool[i], &p, &l);
    if (*lat) (*lat)[i] = l;
    (*len)[i] = (uint8_t)p.n;
    sim_grow((void **)ch, &cap, words + p.n + 1, sizeof **ch);
    memcpy(*ch + words, p.ch, p.n * sizeof **ch);
    words += p.n;
  }
  return words;
}

enum { AHEAD = 32 }; /* channels looked up ahead of use: the state is far bigger than the caches */

/* Pass one (check false: hash) or two (check: compare with the first
 * members) over the pool's channels and GPUs. */
static void quot_pass(const be_quot *q, const be_xfer *pool, const uint8_t *len, const uint32_t *ch,
                      size_t words, seg_run *cr, seg_run *gr, hclass *cc, hclass *gc, bool check) {
  uint32_t s = 0;
  size_t w = 0;
  for (size_t i = 0; i < q->pool_n; i++) {
    while (i >= q->cuts[s + 1]) s++;
    const be_xfer *x = &pool[i];
    if (i + AHEAD / 2 < q->pool_n) {
      __builtin_prefetch(&gr[pool[i + AHEAD / 2].src_gpu], 1);
      __builtin_prefetch(&gr[pool[i + AHEAD / 2].dst_gpu], 1);
    }
    for (uint32_t j = 0; j < len[i]; j++, w++) {
      if (w + AHEAD < words) __builtin_prefetch(&cr[ch[w + AHEAD]], 1);
      if (check) seg_run_walk(cc, cr, ch[w], s, x->bytes);
      else seg_run_hash(&cr[ch[w]], s, x->bytes);
    }
    if (check) {
      seg_run_walk(gc, gr, x->src_gpu, s, 0);
      seg_run_walk(gc, gr, x->dst_gpu, s, 0);
    } else {
      seg_run_hash(&gr[x->src_gpu], s, 0);
      seg_run_hash(&gr[x->dst_gpu], s, 0);
    }
  }
}

/* Channel and GPU classes: pass one hashes, pass two checks. */
static int quot_classes(const be_quot *q, const topo *t, const be_slice *sl, const uint8_t *len,
                        const uint32_t *ch, size_t words, hclass *cc, hclass *gc,
                        rate_bps *cap_of) {
  size_t nitems = q->nchan > q->ngpu ? q->nchan : q->ngpu;
  seg_run *cr = sim_malloc(((size_t)q->nchan ? q->nchan : 1) * sizeof *cr);
  seg_run *gr = sim_malloc(((size_t)q->ngpu ? q->ngpu : 1) * sizeof *gr);
  uint64_t *color = sim_malloc((nitems ? nitems : 1) * sizeof *color);
  seg_runs_reset(cr, q->nchan);
  seg_runs_reset(gr, q->ngpu);
  quot_pass(q, sl->pool, len, ch, words, cr, gr, cc, gc, false);
  channel_colors(t, q->nchan, 2 * topo_link_count(t), color, cap_of);
  hclass_intern(cc, cr, color, q->nchan);
  memset(color, 0, q->ngpu * sizeof *color);
  hclass_intern(gc, gr, color, q->ngpu);
  quot_pass(q, sl->pool, len, ch, words, cr, gr, cc, gc, true);
  hclass_finish(cc, cr, q->nchan);
  hclass_finish(gc, gr, q->ngpu);
  sim_free(cr);
  sim_free(gr);
  sim_free(color);
  return cc->ok && gc->ok ? SIM_OK : SIM_EINVAL;
}

/* The kept tables of the channel and GPU classes. */
static void quot_keep(be_quot *q, hclass *cc, hclass *gc, const rate_bps *cap_of) {
  q->cc_of = sim_malloc(((size_t)q->nchan ? q->nchan : 1) * sizeof *q->cc_of);
  q->ncc = (uint32_t)cc->tb.n;
  q->cc_cap = sim_malloc((q->ncc ? q->ncc : 1) * sizeof *q->cc_cap);
  q->cc_first = sim_malloc((q->ncc ? q->ncc : 1) * sizeof *q->cc_first);
  q->cc_members = sim_malloc((q->ncc ? q->ncc : 1) * sizeof *q->cc_members);
  for (uint32_t c = 0; c < q->ncc; c++) {
    q->cc_cap[c] = cap_of[cc->first[c]];
    q->cc_first[c] = cc->first[c];
    q->cc_members[c] = cc->members[c];
  }
  /* channels no transfer crosses: in classes without runs, never listed */
  for (uint32_t c = 0; c < q->nchan; c++) q->cc_of[c] = cc->nruns[cc->of[c]] ? cc->of[c] : NONE;
  seg_entries(cc, q->nseg, &q->seg_cc_off, &q->seg_cc);
  q->ngc = (uint32_t)gc->tb.n;
  q->gc_of = gc->of;
  gc->of = NULL;
  q->gc_members = gc->members;
  gc->members = NULL;
  seg_entries(gc, q->nseg, &q->seg_gc_off, &q->seg_gc);
}

int be_quot_build(be_quot *q, const topo *t, const be_slice *sl, topo_split split) {
  memset(q, 0, sizeof *q);
  size_t n = sl->pool_n;
  if (!sl->cuts || sl->ncuts < 2 || sl->cuts[0] != 0 || sl->cuts[sl->ncuts - 1] != n ||
      split == TOPO_SPLIT_ADAPTIVE || n >= NONE)
    return SIM_EINVAL;
  q->pool = sl->pool;
  q->pool_n = n;
  q->split = split;
  q->nseg = (uint32_t)(sl->ncuts - 1);
  q->cuts = sim_malloc(sl->ncuts * sizeof *q->cuts);
  memcpy(q->cuts, sl->cuts, sl->ncuts * sizeof *q->cuts);
  q->nchan = 2 * topo_link_count(t) + (split == TOPO_SPLIT_POOLS ? topo_pool_count(t) : 0);
  q->ngpu = topo_gpu_count(t);
  uint8_t *len;
  uint32_t *ch;
  simtime_ps *lat;
  size_t words = quot_route(t, sl, split, &len, &ch, &lat);
  rate_bps *cap_of = sim_malloc(((size_t)q->nchan ? q->nchan : 1) * sizeof *cap_of);
  hclass cc = {0}, gc = {0};
  int rc = words < NONE ? quot_classes(q, t, sl, len, ch, words, &cc, &gc, cap_of) : SIM_EINVAL;
  if (rc == SIM_OK) {
    quot_keep(q, &cc, &gc, cap_of);
    transfer_classes(q, t, sl->pool, len, ch, lat, q->cc_of);
  }
  hclass_free(&cc);
  hclass_free(&gc);
  sim_free(cap_of);
  sim_free(len);
  sim_free(lat);
  sim_free(ch);
  if (rc != SIM_OK) be_quot_free(q);
  return rc;
}

void be_quot_free(be_quot *q) {
  sim_free(q->cuts);
  sim_free(q->seg_bytes);
  sim_free(q->cc_of);
  sim_free(q->cc_cap);
  sim_free(q->cc_first);
  sim_free(q->cc_members);
  sim_free(q->seg_cc_off);
  sim_free(q->seg_cc);
  sim_free(q->seg_tc);
  sim_free(q->tc_w);
  sim_free(q->tc_bytes);
  sim_free(q->tc_lat);
  sim_free(q->tc_poff);
  sim_free(q->tc_path);
  sim_free(q->tc_of);
  sim_free(q->gc_of);
  sim_free(q->gc_members);
  sim_free(q->seg_gc_off);
  sim_free(q->seg_gc);
  memset(q, 0, sizeof *q);
}

/* Index of position v in the cuts, or NONE. */
static uint32_t cut_index(const be_quot *q, size_t v) {
  uint32_t lo = 0, hi = q->nseg + 1;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (q->cuts[m] < v) lo = m + 1;
    else hi = m;
  }
  return lo <= q->nseg && q->cuts[lo] == v ? lo : NONE;
}

bool be_quot_window(const be_quot *q, const be_slice *sl, uint32_t *slo, uint32_t *shi) {
  if (!q->pool || sl->pool != q->pool || sl->pool_n != q->pool_n) return false;
  *slo = cut_index(q, sl->off);
  *shi = cut_index(q, sl->off + sl->n);
  return *slo != NONE && *shi != NONE && *slo <= *shi;
}
