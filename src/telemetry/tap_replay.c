/* The telemetry tap's replay: its phase log into a tel (fabsim/tel_tap.h).
 *
 * Phases logged as entries feed each of their channels and GPUs. When the
 * log holds windows of pools' quotients (be_quot), channels and GPUs are
 * grouped first into parts that every logged phase feeds alike: the common
 * refinement of the channels' kinds and line rates, of each quotient's
 * classes, and of each entry phase's bytes per channel (its GPUs for the
 * GPUs). A phase then feeds each part it touches once, through one member,
 * and the tel keeps one meter per part of ports (tel__port_classes): its
 * rows are what feeding every member gives, bit for bit. NICs are not fed
 * from channels: the NIC log (tap_nic.c) feeds each NIC as its transfers
 * moved. Cost: O(the parts a phase touches) per phase and O(channels + GPUs
 * + entries) once, instead of O(channels and GPUs of every phase). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry/tap_internal.h"

#define NONE UINT32_MAX

void tap__replay_events(const tel_tap *tap, tel *tl) {
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

enum { MARK_GPUS = 1, MARK_PORTS = 2 };

typedef struct tap_mark {
  simtime_ps at;
  uint32_t start; /* 0: a phase ends, 1: it starts (ends first at equal times) */
  size_t idx;     /* tap__phase_at */
  unsigned what;  /* MARK_*: what changes (a rerouted phase's ports start later) */
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

/* The rate of `bytes` over a phase of `dur` ps (0: a phase of no length,
 * fed as bytes at its start). */
static int64_t rate_of(uint64_t bytes, simtime_ps dur) {
  if (dur == 0) return 0;
  unsigned __int128 r = (unsigned __int128)bytes * 8u * SIM_PS_PER_S / dur;
  return r > INT64_MAX ? INT64_MAX : (int64_t)r;
}

/* Feed one channel's share of a mark: what the entry loop did per entry. */
static void feed_mark(tel *tl, const tel_portmap *m, const tap_mark *mk, simtime_ps dur,
                      uint32_t ch, uint64_t bytes) {
  if (dur == 0) {
    if (mk->start) feed(tl, m, mk->at, ch, bytes, 0);
    return;
  }
  int64_t rate = rate_of(bytes, dur);
  if (rate) feed(tl, m, mk->at, ch, 0, mk->start ? rate : -rate);
}

/* The phases' marks (start and end of every phase that ended, and of
 * every piece), in time order, ends before starts at equal times. A
 * rerouted phase's ports start at its last reroute: a mark of their own. */
static tap_mark *marks_of(const tel_tap *tap, size_t *nm) {
  tap_mark *marks = sim_malloc((3 * (tap->nph + tap->npc) + 1) * sizeof *marks);
  size_t n = 0;
  for (size_t i = 0; i < tap->nph + tap->npc; i++) {
    const tap_phase *p = tap__phase_at(tap, i);
    unsigned all = MARK_GPUS | MARK_PORTS;
    if (p->end == SIM_TIME_MAX) continue;
    if (p->moved && p->pstart != p->start) {
      marks[n++] = (tap_mark){.at = p->start, .start = 1, .idx = i, .what = MARK_GPUS};
      marks[n++] = (tap_mark){.at = p->pstart, .start = 1, .idx = i, .what = MARK_PORTS};
    } else {
      marks[n++] = (tap_mark){.at = p->start, .start = 1, .idx = i, .what = all};
    }
    marks[n++] = (tap_mark){.at = p->end, .start = 0, .idx = i, .what = all};
  }
  qsort(marks, n, sizeof *marks, mark_cmp);
  *nm = n;
  return marks;
}

/* The log of entries only: every channel and GPU of every phase. */
static void replay_entries(tel_tap *tap, tel *tl, const tel_portmap *m, unsigned flags) {
  const topo *t = tap->base.topo;
  size_t nm;
  tap_mark *marks = marks_of(tap, &nm);
  uint32_t ngpu = topo_gpu_count(t);
  uint32_t *active = sim_calloc(ngpu ? ngpu : 1, sizeof *active);
  for (size_t k = 0; k < nm; k++) {
    const tap_phase *p = tap__phase_at(tap, marks[k].idx);
    simtime_ps dur = p->end - (p->moved ? p->pstart : p->start);
    for (size_t e = p->first; marks[k].what & MARK_PORTS && e < p->first + p->count; e++)
      feed_mark(tl, m, &marks[k], dur, tap->ent[e].ch, tap->ent[e].bytes);
    if (!(flags & TEL_TAP_GPUS) || !(marks[k].what & MARK_GPUS)) continue;
    for (size_t g = p->gfirst; g < p->gfirst + p->gcount; g++) {
      uint32_t gpu = tap->gpus[g];
      if (marks[k].start && active[gpu]++ == 0)
        tel_gpu_state_set(tl, marks[k].at, gpu, TEL_GPU_NETWORK);
      else if (!marks[k].start && --active[gpu] == 0)
        tel_gpu_state_set(tl, marks[k].at, gpu, TEL_GPU_IDLE);
    }
  }
  sim_free(active);
  sim_free(marks);
}

/* ---- parts: channels (GPUs) every phase feeds alike --------------------------------------- */

/* A partition of n items under refinement: part[i], and a table that
 * gives (old part, key) its new part within one refinement. Part ids grow
 * with refinements; the final ones are renumbered densely (parts_dense). */
typedef struct parts {
  uint32_t *part, n, nparts;
  uint32_t *told, *tnew; /* table: (told, tk2) -> tnew; tnew NONE: empty slot */
  uint64_t *tk2;
  size_t *used; /* slots in use, to empty the table in O(them) */
  size_t tcap, tn;
} parts;

static void parts_init(parts *p, uint32_t n) {
  memset(p, 0, sizeof *p);
  p->n = n;
  p->part = sim_calloc(n ? n : 1, sizeof *p->part);
  p->nparts = 1;
}

static void table_alloc(parts *p, size_t cap) {
  p->tcap = cap;
  p->told = sim_malloc(cap * sizeof *p->told);
  p->tnew = sim_malloc(cap * sizeof *p->tnew);
  p->tk2 = sim_malloc(cap * sizeof *p->tk2);
  p->used = sim_malloc(cap * sizeof *p->used);
  for (size_t i = 0; i < cap; i++) p->tnew[i] = NONE;
}

static void table_free(parts *p) {
  sim_free(p->told);
  sim_free(p->tnew);
  sim_free(p->tk2);
  sim_free(p->used);
}

static void parts_free(parts *p) {
  sim_free(p->part);
  table_free(p);
  memset(p, 0, sizeof *p);
}

/* Start a refinement (the table emptied). */
static void refine_begin(parts *p) {
  if (p->tcap == 0) table_alloc(p, 1024);
  for (size_t j = 0; j < p->tn; j++) p->tnew[p->used[j]] = NONE;
  p->tn = 0;
}

static size_t refine_slot(const parts *p, uint32_t old, uint64_t key) {
  size_t i = (size_t)sim_hash_u64(key ^ sim_hash_u64(old)) & (p->tcap - 1);
  while (p->tnew[i] != NONE && (p->told[i] != old || p->tk2[i] != key)) i = (i + 1) & (p->tcap - 1);
  return i;
}

/* Item i, in part part[i], is keyed `key` in this refinement: items of one
 * part with the same key stay together, apart from the others. Items not
 * keyed keep their part. O(1) amortized. */
static void refine(parts *p, uint32_t i, uint64_t key) {
  if (2 * (p->tn + 1) > p->tcap) { /* grow the table */
    parts o = *p;
    table_alloc(p, 2 * o.tcap);
    for (size_t j = 0; j < o.tn; j++) {
      size_t u = o.used[j], s = refine_slot(p, o.told[u], o.tk2[u]);
      p->told[s] = o.told[u], p->tk2[s] = o.tk2[u], p->tnew[s] = o.tnew[u];
      p->used[j] = s;
    }
    table_free(&o);
  }
  uint32_t old = p->part[i];
  size_t s = refine_slot(p, old, key);
  if (p->tnew[s] == NONE) {
    p->told[s] = old;
    p->tk2[s] = key;
    p->tnew[s] = p->nparts++;
    p->used[p->tn++] = s;
  }
  p->part[i] = p->tnew[s];
}

/* Parts renumbered 0 .. nparts - 1 in order of their lowest item. */
static void parts_dense(parts *p) {
  uint32_t *id = sim_malloc((size_t)p->nparts * sizeof *id), n = 0;
  for (uint32_t k = 0; k < p->nparts; k++) id[k] = NONE;
  for (uint32_t i = 0; i < p->n; i++) {
    if (id[p->part[i]] == NONE) id[p->part[i]] = n++;
    p->part[i] = id[p->part[i]];
  }
  p->nparts = n;
  sim_free(id);
}

/* The replay's view of the parts. */
typedef struct tap_parts {
  parts ch, gpu;
  uint32_t *ch_first;             /* per channel part: its lowest channel */
  uint32_t *g_w;                  /* per GPU part: members */
  uint32_t **cc_parts, **cc_poff; /* per quotient: per channel class, its parts */
  uint32_t **gc_parts, **gc_poff; /* per quotient: per GPU class, its parts */
} tap_parts;

/* Per class of a quotient, the parts of its members (CSR, each part once). */
static void class_parts(const parts *p, const uint32_t *moff, const uint32_t *mem, uint32_t ncls,
                        uint32_t *stamp, uint32_t **poff, uint32_t **out) {
  *poff = sim_calloc((size_t)ncls + 1, sizeof **poff);
  *out = sim_malloc((moff[ncls] ? moff[ncls] : 1) * sizeof **out);
  uint32_t n = 0;
  for (uint32_t c = 0; c < ncls; c++) {
    for (uint32_t j = moff[c]; j < moff[c + 1]; j++) {
      uint32_t k = p->part[mem[j]];
      if (stamp[k] == c + 1) continue;
      stamp[k] = c + 1;
      (*out)[n++] = k;
    }
    (*poff)[c + 1] = n;
  }
  for (uint32_t k = 0; k < p->nparts; k++) stamp[k] = 0;
}

/* Channels apart by kind and line rate (what the tel's ports and NICs
 * must share), then by every quotient's classes and entry phase's bytes. */
static void channel_parts(tel_tap *tap, parts *p) {
  const topo *t = tap->base.topo;
  uint32_t nch = 2 * topo_link_count(t);
  parts_init(p, nch);
  refine_begin(p);
  for (uint32_t c = 0; c < nch; c++) {
    const topo_link *l = topo_link_at(t, topo_channel_link(c));
    uint64_t kinds = (uint64_t)l->kind |
                     (uint64_t)topo_vertex_at(t, topo_channel_src(t, c))->kind << 4 |
                     (uint64_t)topo_vertex_at(t, topo_channel_dst(t, c))->kind << 8;
    refine(p, c, (uint64_t)l->bps << 12 | kinds); /* exact below 2^52 b/s */
  }
  for (size_t k = 0; k < tap->ntq; k++) {
    const tap_quot *tq = tap->tq[k];
    refine_begin(p);
    for (uint32_t c = 0; c < tq->q.ncc; c++)
      for (uint32_t j = tq->cc_moff[c]; j < tq->cc_moff[c + 1]; j++) refine(p, tq->cc_mem[j], c);
  }
  for (size_t i = 0; i < tap->nph + tap->npc; i++) {
    const tap_phase *ph = tap__phase_at(tap, i);
    if ((ph->quot && !ph->moved) || ph->count == 0) continue;
    refine_begin(p);
    for (size_t e = ph->first; e < ph->first + ph->count; e++)
      refine(p, tap->ent[e].ch, tap->ent[e].bytes);
  }
  parts_dense(p);
}

static void gpu_parts(tel_tap *tap, parts *p) {
  parts_init(p, topo_gpu_count(tap->base.topo));
  for (size_t k = 0; k < tap->ntq; k++) {
    const tap_quot *tq = tap->tq[k];
    refine_begin(p);
    for (uint32_t c = 0; c < tq->q.ngc; c++)
      for (uint32_t j = tq->gc_moff[c]; j < tq->gc_moff[c + 1]; j++) refine(p, tq->gc_mem[j], c);
  }
  for (size_t i = 0; i < tap->nph; i++) {
    const tap_phase *ph = &tap->ph[i];
    if (ph->quot || ph->gcount == 0) continue;
    refine_begin(p);
    for (size_t g = ph->gfirst; g < ph->gfirst + ph->gcount; g++) refine(p, tap->gpus[g], 1);
  }
  parts_dense(p);
}

/* The tel's classes of ports from the channel parts (a port is one
 * channel; parts keep kinds and line rates apart). */
static void tel_classes(const tap_parts *tp, tel *tl, const tel_portmap *m) {
  const parts *p = &tp->ch;
  if (!m->nports) return;
  uint32_t *id = sim_malloc((size_t)(p->nparts + 1) * sizeof *id), n = 0;
  uint32_t *cls = sim_malloc(m->nports * sizeof *cls);
  for (uint32_t k = 0; k <= p->nparts; k++) id[k] = NONE;
  for (uint32_t q = 0; q < m->nports; q++) {
    uint32_t k = p->part[m->channel_of_port[q]];
    if (id[k] == NONE) id[k] = n++;
    cls[q] = id[k];
  }
  tel__port_classes(tl, cls, n);
  sim_free(cls);
  sim_free(id);
}

static void tap_parts_build(tel_tap *tap, tap_parts *tp, tel *tl, const tel_portmap *m) {
  memset(tp, 0, sizeof *tp);
  for (size_t k = 0; k < tap->ntq; k++) tap__quot_members(tap->tq[k]);
  channel_parts(tap, &tp->ch);
  gpu_parts(tap, &tp->gpu);
  parts *p = &tp->ch;
  tp->ch_first = sim_malloc((p->nparts ? p->nparts : 1) * sizeof *tp->ch_first);
  for (uint32_t c = p->n; c-- > 0;) tp->ch_first[p->part[c]] = c;
  tp->g_w = sim_calloc(tp->gpu.nparts ? tp->gpu.nparts : 1, sizeof *tp->g_w);
  for (uint32_t g = 0; g < tp->gpu.n; g++) tp->g_w[tp->gpu.part[g]]++;
  size_t most = p->nparts > tp->gpu.nparts ? p->nparts : tp->gpu.nparts;
  uint32_t *stamp = sim_calloc(most ? most : 1, sizeof *stamp);
  tp->cc_parts = sim_calloc(tap->ntq ? tap->ntq : 1, sizeof *tp->cc_parts);
  tp->cc_poff = sim_calloc(tap->ntq ? tap->ntq : 1, sizeof *tp->cc_poff);
  tp->gc_parts = sim_calloc(tap->ntq ? tap->ntq : 1, sizeof *tp->gc_parts);
  tp->gc_poff = sim_calloc(tap->ntq ? tap->ntq : 1, sizeof *tp->gc_poff);
  for (size_t k = 0; k < tap->ntq; k++) {
    const tap_quot *tq = tap->tq[k];
    class_parts(&tp->ch, tq->cc_moff, tq->cc_mem, tq->q.ncc, stamp, &tp->cc_poff[k],
                &tp->cc_parts[k]);
    class_parts(&tp->gpu, tq->gc_moff, tq->gc_mem, tq->q.ngc, stamp, &tp->gc_poff[k],
                &tp->gc_parts[k]);
  }
  sim_free(stamp);
  tel_classes(tp, tl, m);
}

static void tap_parts_free(tap_parts *tp, size_t ntq) {
  parts_free(&tp->ch);
  parts_free(&tp->gpu);
  sim_free(tp->ch_first);
  sim_free(tp->g_w);
  for (size_t k = 0; k < ntq; k++) {
    sim_free(tp->cc_parts[k]);
    sim_free(tp->cc_poff[k]);
    sim_free(tp->gc_parts[k]);
    sim_free(tp->gc_poff[k]);
  }
  sim_free(tp->cc_parts);
  sim_free(tp->cc_poff);
  sim_free(tp->gc_parts);
  sim_free(tp->gc_poff);
}

/* ---- the replay by parts -------------------------------------------------------------------- */

typedef struct part_feed {
  tel *tl;
  const topo *t;
  const tel_portmap *m;
  const tap_parts *tp;
  uint32_t *stamp, *gstamp, *active; /* per channel part, per GPU part */
  uint32_t mark;                     /* index + 1 of the mark being fed */
  bool gpus;
} part_feed;

/* Channel part k's share of the mark (once per mark). */
static void feed_part(part_feed *f, const tap_mark *mk, simtime_ps dur, uint32_t k,
                      uint64_t bytes) {
  if (f->stamp[k] == f->mark) return;
  f->stamp[k] = f->mark;
  feed_mark(f->tl, f->m, mk, dur, f->tp->ch_first[k], bytes);
}

/* GPU part k takes part in the phase starting or ending at the mark. */
static void gpu_part(part_feed *f, const tap_mark *mk, uint32_t k) {
  if (!f->gpus || f->gstamp[k] == f->mark) return;
  f->gstamp[k] = f->mark;
  if (mk->start && f->active[k]++ == 0)
    tel_gpu_count_move(f->tl, mk->at, TEL_GPU_IDLE, TEL_GPU_NETWORK, f->tp->g_w[k]);
  else if (!mk->start && --f->active[k] == 0)
    tel_gpu_count_move(f->tl, mk->at, TEL_GPU_NETWORK, TEL_GPU_IDLE, f->tp->g_w[k]);
}

/* A window of quotient tq: each channel class's bytes on each member. */
static void feed_window(part_feed *f, const tel_tap *tap, const tap_mark *mk, const tap_phase *p,
                        uint64_t *bytes, uint32_t *ends) {
  uint32_t k = p->quot - 1;
  const be_quot *q = &tap->tq[k]->q;
  simtime_ps dur = p->end - p->start;
  memset(bytes, 0, (q->ncc ? q->ncc : 1) * sizeof *bytes);
  memset(ends, 0, (q->ngc ? q->ngc : 1) * sizeof *ends);
  for (size_t e = q->seg_cc_off[p->slo]; e < q->seg_cc_off[p->shi]; e++)
    bytes[q->seg_cc[e].cls] += q->seg_cc[e].bytes;
  for (size_t e = q->seg_gc_off[p->slo]; e < q->seg_gc_off[p->shi]; e++)
    ends[q->seg_gc[e].cls] += q->seg_gc[e].count;
  for (uint32_t c = 0; c < q->ncc && !p->moved; c++) {
    if (bytes[c] == 0) continue;
    const topo_vertex *src = topo_vertex_at(f->t, topo_channel_src(f->t, q->cc_first[c]));
    const topo_vertex *dst = topo_vertex_at(f->t, topo_channel_dst(f->t, q->cc_first[c]));
    if (src->kind != TOPO_SWITCH && dst->kind != TOPO_SWITCH) continue; /* not logged */
    for (uint32_t j = f->tp->cc_poff[k][c]; j < f->tp->cc_poff[k][c + 1]; j++)
      feed_part(f, mk, dur, f->tp->cc_parts[k][j], bytes[c] * p->repeat);
  }
  for (uint32_t c = 0; c < q->ngc && mk->what & MARK_GPUS; c++)
    if (ends[c])
      for (uint32_t j = f->tp->gc_poff[k][c]; j < f->tp->gc_poff[k][c + 1]; j++)
        gpu_part(f, mk, f->tp->gc_parts[k][j]);
}

static void replay_parts(tel_tap *tap, tel *tl, const tel_portmap *m, unsigned flags) {
  tap_parts tp;
  tap_parts_build(tap, &tp, tl, m);
  size_t nm, ncc = 1, ngc = 1;
  tap_mark *marks = marks_of(tap, &nm);
  for (size_t k = 0; k < tap->ntq; k++) {
    if (tap->tq[k]->q.ncc > ncc) ncc = tap->tq[k]->q.ncc;
    if (tap->tq[k]->q.ngc > ngc) ngc = tap->tq[k]->q.ngc;
  }
  uint64_t *bytes = sim_malloc(ncc * sizeof *bytes);
  uint32_t *ends = sim_malloc(ngc * sizeof *ends);
  part_feed f = {.tl = tl,
                 .t = tap->base.topo,
                 .m = m,
                 .tp = &tp,
                 .stamp = sim_calloc(tp.ch.nparts ? tp.ch.nparts : 1, sizeof(uint32_t)),
                 .gstamp = sim_calloc(tp.gpu.nparts ? tp.gpu.nparts : 1, sizeof(uint32_t)),
                 .active = sim_calloc(tp.gpu.nparts ? tp.gpu.nparts : 1, sizeof(uint32_t)),
                 .gpus = flags & TEL_TAP_GPUS};
  for (size_t k = 0; k < nm; k++) {
    const tap_phase *p = tap__phase_at(tap, marks[k].idx);
    simtime_ps dur = p->end - (p->moved ? p->pstart : p->start);
    f.mark = (uint32_t)k + 1;
    if (p->quot) feed_window(&f, tap, &marks[k], p, bytes, ends);
    if (p->quot && !p->moved) continue;
    for (size_t e = p->first; marks[k].what & MARK_PORTS && e < p->first + p->count; e++)
      feed_part(&f, &marks[k], dur, tp.ch.part[tap->ent[e].ch], tap->ent[e].bytes);
    for (size_t g = p->gfirst; marks[k].what & MARK_GPUS && g < p->gfirst + p->gcount; g++)
      gpu_part(&f, &marks[k], tp.gpu.part[tap->gpus[g]]);
  }
  sim_free(f.stamp);
  sim_free(f.gstamp);
  sim_free(f.active);
  sim_free(bytes);
  sim_free(ends);
  sim_free(marks);
  tap_parts_free(&tp, tap->ntq);
}

void tel_tap_replay(tel_tap *tap, tel *tl, const tel_portmap *m, unsigned flags) {
  tap__replay_events(tap, tl);
  if (tap->ntq) replay_parts(tap, tl, m, flags);
  else replay_entries(tap, tl, m, flags);
  tel__niclog_replay(&tap->nic, tl);
}
