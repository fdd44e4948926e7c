/* The telemetry tap's NIC series: each NIC's bytes when its transfers moved
 * them (be_xfer_end), not spread over their phase.
 *
 * While a phase runs the log keeps the NICs of its transfers (the tap's
 * routes) and what the backend reports of each: its "sent" and "delivered"
 * offsets (summed over its repetitions when they come one by one), and the
 * repetitions' starts as runs (first start, period, count): one run for a
 * phase of alike repetitions (analytic, a fast-forwarded flow phase), one
 * per repetition at worst. Its transfers then fold into one window per NIC
 * and direction (at once when the backend reported the whole phase in one
 * record, as the analytic fidelity does at submission; else when it ends):
 * in each repetition a NIC sends its transfers' bytes evenly from the
 * repetition's start until the last of them has left (their mean "sent"
 * over the repetitions), and receives them from its first transfer's first
 * byte (mean "delivered" - "sent") to its last one's last; runs of
 * consecutive NICs with alike windows are one record (a symmetric
 * collective: a few per phase). So a NIC that finished early is idle from
 * there on, each NIC's series sums exactly to its transfers' bytes, and a
 * NIC with one transfer per phase (the closed forms of
 * tests/telemetry/test_tap_nic.c) follows it exactly; several transfers of
 * a NIC share its window at their mean rate. A transfer the backend never
 * reported moves over its whole repetition.
 *
 * Replay walks the tel's intervals in time order with the phases active in
 * each and feeds every NIC's bytes of the interval as one count
 * (tel_nic_bytes): a window's cumulative bytes at t are floor(bytes x
 * G(t) / G(end)), G its busy time up to t (closed form per run). NICs that
 * every window covers alike are one class, fed once through its first NIC
 * (tel__nic_classes; "NIC classes" below).
 * Cost: memory 8 bytes per transfer of the phases in flight (none for a
 * pool's slices: the tap's routes), 24 more for those reported one by one,
 * O(NIC windows + runs) for every phase; the fold O(transfers + NICs / 64)
 * per phase; replay O(windows log windows + NICs) once, then O(sum over
 * phases of windows' classes x intervals spanned) and O(classes log
 * classes) per row.
 */
#include <stdlib.h>
#include <string.h>

#include "telemetry/tap_nic.h"

#define NONE UINT32_MAX

void tel__niclog_init(tel__niclog *l, uint32_t nics) {
  memset(l, 0, sizeof *l);
  l->nics = nics;
}

uint32_t *tel__niclog_phase(tel__niclog *l, simtime_ps start, uint64_t repeat, const be_xfer *x,
                            size_t n, const uint32_t *nics) {
  uint32_t *own = NULL;
  if (!nics && l->spare && l->spare_cap >= 2 * n) { /* the last ended phase's, reused */
    own = l->spare;
    l->spare = NULL;
  } else if (!nics) {
    own = sim_malloc((2 * n + 1) * sizeof *own);
  }
  sim_grow((void **)&l->ph, &l->phcap, l->nph + 1, sizeof *l->ph);
  l->ph[l->nph++] = (tel__nic_phase){.x = x,
                                     .nics = nics ? nics : own,
                                     .own = own,
                                     .n = n,
                                     .start = start,
                                     .end = SIM_TIME_MAX,
                                     .repeat = repeat,
                                     .run_first = SIZE_MAX,
                                     .run_last = SIZE_MAX};
  return own;
}

/* Does the run hold a repetition starting at s? */
static bool nic_run_has(const tel__nic_run *r, simtime_ps s) {
  if (s == r->start) return true;
  if (s < r->start || r->count < 2 || r->period == 0) return false;
  return (s - r->start) % r->period == 0 && (s - r->start) / r->period < r->count;
}

/* The repetitions [start + k period, k < reps) into phase p's runs; they
 * come in time order (each transfer of a repetition names its start). */
static void add_reps(tel__niclog *l, tel__nic_phase *p, simtime_ps start, simtime_ps period,
                     uint64_t reps) {
  tel__nic_run *last = p->run_last == SIZE_MAX ? NULL : &l->run[p->run_last];
  if (last && nic_run_has(last, start)) return;
  if (last && reps == 1 && last->count == 1 && start > last->start) {
    last->period = start - last->start; /* a second repetition sets the period */
    last->count = 2;
    return;
  }
  if (last && last->count >= 2 && (reps == 1 || period == last->period) &&
      start == last->start + last->period * last->count) {
    last->count += reps;
    return;
  }
  /* last points into l->run, which sim_grow may move: link by index */
  size_t last_i = p->run_last;
  sim_grow((void **)&l->run, &l->runcap, l->nrun + 1, sizeof *l->run);
  l->run[l->nrun] =
      (tel__nic_run){.start = start, .period = period, .count = reps, .next = SIZE_MAX};
  if (last_i != SIZE_MAX) l->run[last_i].next = l->nrun;
  else p->run_first = l->nrun;
  p->run_last = l->nrun++;
}

/* ---- folding a phase into windows ---------------------------------------------------------- */

/* Per NIC and direction while folding one phase. */
typedef struct fold_slot {
  uint64_t bytes;
  simtime_ps lo, hi; /* the window's offsets in a repetition */
} fold_slot;

static void fold_begin(tel__niclog *l) {
  if (l->fold[0]) return;
  for (int d = 0; d < 2; d++) {
    l->fold[d] = sim_malloc((l->nics ? l->nics : 1) * sizeof(fold_slot));
    l->touched[d] = sim_calloc(l->nics / 64 + 1, sizeof(uint64_t));
  }
}

static void fold_add(tel__niclog *l, int d, uint32_t nic, uint64_t bytes, simtime_ps lo,
                     simtime_ps hi) {
  fold_slot *s = &((fold_slot *)l->fold[d])[nic];
  uint64_t bit = 1ull << (nic % 64);
  if (!(l->touched[d][nic / 64] & bit)) {
    l->touched[d][nic / 64] |= bit;
    *s = (fold_slot){bytes, lo, hi};
    return;
  }
  s->bytes += bytes;
  if (lo < s->lo) s->lo = lo;
  if (hi > s->hi) s->hi = hi;
}

/* Transfer i of p: bytes over [0, sent) at its source NIC, [deliv - sent,
 * deliv) at its destination NIC. */
static void fold_xfer(tel__niclog *l, const tel__nic_phase *p, size_t i, simtime_ps sent,
                      simtime_ps deliv) {
  uint32_t src = p->nics[2 * i], dst = p->nics[2 * i + 1];
  uint64_t bytes = p->x[i].bytes, R = p->repeat ? p->repeat : 1;
  if (p->lost) /* a repetition's share */
    bytes -= p->lost[i].bytes / R < bytes ? p->lost[i].bytes / R : bytes;
  if (src != NONE) fold_add(l, 0, src, bytes, 0, sent);
  if (dst != NONE) fold_add(l, 1, dst, bytes, deliv - sent, deliv);
}

/* The slots into p's windows, NIC by NIC (runs of alike ones merged). */
static void fold_finish(tel__niclog *l, tel__nic_phase *p) {
  p->win_first = l->nwin;
  size_t words = l->nics / 64 + 1;
  for (int d = 0; d < 2; d++) {
    for (size_t wd = 0; wd < words; wd++)
      for (uint64_t bits = l->touched[d][wd]; bits; bits &= bits - 1) {
        uint32_t nic = (uint32_t)(wd * 64 + (size_t)__builtin_ctzll(bits));
        const fold_slot *s = &((fold_slot *)l->fold[d])[nic];
        simtime_ps w = s->hi > s->lo ? s->hi - s->lo : 1;
        tel__nic_win *last = l->nwin > p->win_first ? &l->win[l->nwin - 1] : NULL;
        if (last && last->dir == (unsigned)d && last->nic + last->count == nic &&
            last->bytes == s->bytes && last->a == s->lo && last->w == w) {
          last->count++;
          continue;
        }
        sim_grow((void **)&l->win, &l->wincap, l->nwin + 1, sizeof *l->win);
        l->win[l->nwin++] = (tel__nic_win){
            .nic = nic, .count = 1, .dir = d ? 1u : 0u, .bytes = s->bytes, .a = s->lo, .w = w};
      }
    memset(l->touched[d], 0, words * sizeof(uint64_t));
  }
  p->win_n = l->nwin - p->win_first;
  p->folded = true;
}

void tel__niclog_report(tel__niclog *l, size_t phase, size_t xfer, size_t n, simtime_ps start,
                        simtime_ps period, uint64_t reps, const simtime_ps *delivered,
                        const simtime_ps *latency) {
  tel__nic_phase *p = &l->ph[phase];
  if (p->folded || !p->x || xfer >= p->n || reps == 0) return;
  if (n > p->n - xfer) n = p->n - xfer;
  add_reps(l, p, start, reps > 1 ? period : 0, reps);
  if (!p->sum && xfer == 0 && n == p->n && reps == p->repeat) { /* all of it, alike */
    fold_begin(l);
    for (size_t i = 0; i < n; i++) {
      simtime_ps lat = latency && latency[i] < delivered[i] ? latency[i] : 0;
      fold_xfer(l, p, i, delivered[i] - lat, delivered[i]);
    }
    fold_finish(l, p);
    return;
  }
  if (!p->sum) p->sum = sim_calloc(p->n ? p->n : 1, sizeof *p->sum);
  for (size_t i = 0; i < n; i++) {
    tel__nic_sum *x = &p->sum[xfer + i];
    simtime_ps lat = latency && latency[i] < delivered[i] ? latency[i] : 0;
    x->reps += reps;
    x->sent += (delivered[i] - lat) * reps;
    x->delivered += delivered[i] * reps;
  }
}

bool tel__niclog_failed(tel__niclog *l, uint32_t src, uint32_t dst, uint64_t bytes,
                        uint64_t delivered, size_t *phase, size_t *xfer) {
  for (size_t k = 0; k < l->nph; k++) {
    tel__nic_phase *p = &l->ph[k];
    if (p->folded || !p->x) continue;
    for (size_t i = 0; i < p->n; i++) {
      const be_xfer *x = &p->x[i];
      if (x->src_gpu != src || x->dst_gpu != dst || x->bytes != bytes) continue;
      /* one failure a repetition: a transfer that failed in each is done with (two
       * alike transfers that both fail are two transfers, even when part delivered) */
      if (p->lost && p->lost[i].fails >= (p->repeat ? p->repeat : 1)) continue;
      if (!p->lost) p->lost = sim_calloc(p->n ? p->n : 1, sizeof *p->lost);
      p->lost[i].bytes += bytes - (delivered < bytes ? delivered : bytes);
      p->lost[i].fails++;
      if (phase) *phase = k;
      if (xfer) *xfer = i;
      return true;
    }
  }
  return false;
}

const be_xfer *tel__niclog_xfer(const tel__niclog *l, size_t phase, size_t xfer) {
  const tel__nic_phase *p = phase < l->nph ? &l->ph[phase] : NULL;
  return p && p->x && xfer < p->n ? &p->x[xfer] : NULL;
}

void tel__niclog_end(tel__niclog *l, size_t phase, simtime_ps end) {
  tel__nic_phase *p = &l->ph[phase];
  p->end = end;
  if (!p->folded && p->x) {
    uint64_t R = p->repeat ? p->repeat : 1;
    simtime_ps each = (end - p->start) / R; /* a repetition's share: for unreported ones */
    fold_begin(l);
    for (size_t i = 0; i < p->n; i++) {
      const tel__nic_sum *x = p->sum ? &p->sum[i] : NULL;
      if (x && x->reps) fold_xfer(l, p, i, x->sent / x->reps, x->delivered / x->reps);
      else fold_xfer(l, p, i, each, each);
    }
    fold_finish(l, p);
  }
  if (p->own && (!l->spare || l->spare_cap < 2 * p->n)) { /* keep the larger for the next */
    sim_free(l->spare);
    l->spare = p->own;
    l->spare_cap = 2 * p->n;
  } else {
    sim_free(p->own);
  }
  sim_free(p->sum);
  sim_free(p->lost);
  p->own = NULL;
  p->sum = NULL;
  p->lost = NULL;
  p->nics = NULL;
  p->x = NULL;
}

void tel__niclog_free(tel__niclog *l) {
  for (size_t i = 0; i < l->nph; i++) {
    sim_free(l->ph[i].own);
    sim_free(l->ph[i].sum);
    sim_free(l->ph[i].lost);
  }
  sim_free(l->spare);
  sim_free(l->ph);
  sim_free(l->run);
  sim_free(l->win);
  for (int d = 0; d < 2; d++) {
    sim_free(l->fold[d]);
    sim_free(l->touched[d]);
  }
  memset(l, 0, sizeof *l);
}

/* ---- replay ----------------------------------------------------------------------------- */

/* A phase's repetitions during replay: its runs, contiguous, and the
 * repetitions before each. */
typedef struct replay_phase {
  size_t idx;
  simtime_ps start, end; /* the phase's */
  tel__nic_run *runs;    /* into the replay's array */
  uint64_t *before;      /* repetitions in the runs before run r */
  size_t nruns;
  uint64_t reps;
  simtime_ps span; /* the shortest repetition: from its start to the next one's (or the end) */
} replay_phase;

/* Busy time up to t of windows [s + k P + a, s + k P + a + w), k < c: the
 * whole windows, then those t is inside (several only when windows
 * overlap). O(1), or O(overlapping windows). */
static tel__u128 nic_run_busy(const tel__nic_run *r, simtime_ps a, simtime_ps w, simtime_ps t) {
  if (t <= r->start + a) return 0;
  simtime_ps u = t - r->start - a, P = r->period ? r->period : SIM_TIME_MAX;
  uint64_t whole = u < w ? 0 : (u - w) / P + 1, begun = (u - 1) / P + 1;
  if (whole > r->count) whole = r->count;
  if (begun > r->count) begun = r->count;
  tel__u128 g = (tel__u128)whole * w;
  for (uint64_t k = whole; k < begun; k++) g += u - k * P;
  return g;
}

/* Bytes of `total` a window (offset a, width w in each repetition) has
 * moved by t: evenly over its busy time; all of it at SIM_TIME_MAX. */
static uint64_t moved(const replay_phase *rp, uint64_t total, simtime_ps a, simtime_ps w,
                      simtime_ps t) {
  if (t == SIM_TIME_MAX) return total;
  size_t lo = 0, hi = rp->nruns; /* the runs starting before t */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (rp->runs[mid].start < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return 0;
  tel__u128 g = (tel__u128)rp->before[lo - 1] * w + nic_run_busy(&rp->runs[lo - 1], a, w, t);
  tel__u128 all = (tel__u128)rp->reps * w;
  return g >= all ? total : (uint64_t)((tel__u128)total * g / all);
}

static int start_cmp(const void *pa, const void *pb) {
  const replay_phase *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Each ended phase with windows and its runs (a phase none of whose
 * transfers was reported: its repetitions evenly over its span). */
static replay_phase *gather(const tel__niclog *l, size_t *np, tel__nic_run **runs,
                            uint64_t **before) {
  size_t n = 0, nr = 0;
  for (size_t i = 0; i < l->nph; i++) {
    if (l->ph[i].end == SIM_TIME_MAX || l->ph[i].win_n == 0) continue;
    n++;
    nr++;
    for (size_t r = l->ph[i].run_first; r != SIZE_MAX; r = l->run[r].next) nr++;
  }
  replay_phase *rp = sim_malloc((n ? n : 1) * sizeof *rp);
  *runs = sim_malloc((nr ? nr : 1) * sizeof **runs);
  *before = sim_malloc((nr ? nr : 1) * sizeof **before);
  size_t k = 0, w = 0;
  for (size_t i = 0; i < l->nph; i++) {
    const tel__nic_phase *p = &l->ph[i];
    if (p->end == SIM_TIME_MAX || p->win_n == 0) continue;
    replay_phase *q = &rp[k++];
    *q = (replay_phase){
        .idx = i, .start = p->start, .end = p->end, .runs = *runs + w, .before = *before + w};
    if (p->run_first == SIZE_MAX) {
      uint64_t R = p->repeat ? p->repeat : 1;
      q->runs[q->nruns++] =
          (tel__nic_run){.start = p->start, .period = (p->end - p->start) / R, .count = R};
    } else {
      for (size_t r = p->run_first; r != SIZE_MAX; r = l->run[r].next)
        q->runs[q->nruns++] = l->run[r];
    }
    q->span = SIM_TIME_MAX;
    for (size_t r = 0; r < q->nruns; r++) {
      const tel__nic_run *u = &q->runs[r];
      q->before[r] = q->reps;
      q->reps += u->count;
      simtime_ps last = u->start + (u->count - 1) * u->period,
                 next = r + 1 < q->nruns ? q->runs[r + 1].start : p->end;
      if (u->count > 1 && u->period < q->span) q->span = u->period;
      if (next > last && next - last < q->span) q->span = next - last;
    }
    w += q->nruns;
  }
  qsort(rp, k, sizeof *rp, start_cmp);
  *np = k;
  return rp;
}

/* ---- NIC classes ----------------------------------------------------------------------- */

/* The NICs the log's windows feed alike, numbered by their first NIC
 * (tel__nic_classes), and each window's classes. A window covers a run of
 * consecutive NICs and feeds each the same bytes at the same times, which
 * depend on its content only (its phase, direction, bytes, offset and
 * width): windows of equal content are one group. The NICs between two
 * consecutive window ends (a segment) are alike; segments covered by the
 * same groups are one class: each window adds two 64-bit hashes of its
 * content to the segments it covers (a difference array, prefix-summed),
 * and segments with equal sums are alike (a NIC is in one window per
 * phase and direction; distinct sets collide with odds ~ segments^2 /
 * 2^128). A class is fed once per group: by the first of the group's
 * windows that covers it. O(W log W + NICs + the segments the windows
 * cover). */
typedef struct nic_classes {
  uint32_t *of, n; /* per NIC its class; classes */
  uint32_t *first; /* per class its first NIC */
  size_t *woff;    /* per window of the log: its classes wcls[woff[k] .. woff[k + 1]) */
  uint32_t *wcls;
} nic_classes;

static uint64_t mix64(uint64_t x) { /* splitmix64's finalizer */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static int u32_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static size_t seg_of(const uint32_t *bp, size_t nbp, uint32_t nic) { /* lower bound */
  size_t lo = 0, hi = nbp;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (bp[mid] < nic) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Two hashes of each window's content, into h[2k], h[2k + 1]. */
static uint64_t *window_hashes(const tel__niclog *l) {
  uint64_t *h = sim_malloc((2 * l->nwin + 1) * sizeof *h);
  for (size_t i = 0; i < l->nph; i++)
    for (size_t k = l->ph[i].win_first; k < l->ph[i].win_first + l->ph[i].win_n; k++) {
      const tel__nic_win *w = &l->win[k];
      for (uint64_t j = 0; j < 2; j++) {
        uint64_t x = mix64(j ^ ((uint64_t)i << 1));
        x = mix64(x ^ w->dir);
        x = mix64(x ^ w->bytes);
        x = mix64(x ^ w->a);
        h[2 * k + j] = mix64(x ^ w->w);
      }
    }
  return h;
}

typedef struct seg_key { /* a segment's (or a window's) hashes and index */
  uint64_t h[2];
  uint32_t s;
} seg_key;

static int seg_cmp(const void *pa, const void *pb) {
  const seg_key *a = pa, *b = pb;
  for (int i = 0; i < 2; i++)
    if (a->h[i] != b->h[i]) return a->h[i] < b->h[i] ? -1 : 1;
  return (a->s > b->s) - (a->s < b->s);
}

/* The segments' boundaries: 0, nics and every window's ends, sorted, unique. */
static uint32_t *boundaries(const tel__niclog *l, size_t *nbp) {
  uint32_t *bp = sim_malloc((2 * l->nwin + 2) * sizeof *bp);
  size_t n = 0;
  bp[n++] = 0;
  bp[n++] = l->nics;
  for (size_t k = 0; k < l->nwin; k++) {
    bp[n++] = l->win[k].nic;
    bp[n++] = l->win[k].nic + l->win[k].count;
  }
  qsort(bp, n, sizeof *bp, u32_cmp);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (u == 0 || bp[i] != bp[u - 1]) bp[u++] = bp[i];
  *nbp = u;
  return bp;
}

/* Each segment's class (numbered in NIC order) into cls[0..S); returns how many. */
static uint32_t segment_classes(const tel__niclog *l, const uint32_t *bp, size_t nbp,
                                const uint64_t *wh, uint32_t *cls) {
  size_t S = nbp - 1;
  uint64_t *diff = sim_calloc(2 * (S + 1), sizeof *diff);
  for (size_t k = 0; k < l->nwin; k++) {
    size_t s0 = seg_of(bp, nbp, l->win[k].nic),
           s1 = seg_of(bp, nbp, l->win[k].nic + l->win[k].count);
    for (int i = 0; i < 2; i++) {
      diff[2 * s0 + i] += wh[2 * k + i];
      diff[2 * s1 + i] -= wh[2 * k + i];
    }
  }
  seg_key *key = sim_malloc((S ? S : 1) * sizeof *key);
  uint64_t run[2] = {0, 0};
  for (size_t s = 0; s < S; s++) {
    for (int i = 0; i < 2; i++) run[i] += diff[2 * s + i];
    key[s] = (seg_key){{run[0], run[1]}, (uint32_t)s};
  }
  sim_free(diff);
  qsort(key, S, sizeof *key, seg_cmp);
  uint32_t *rep = sim_malloc((S ? S : 1) * sizeof *rep); /* per segment: its group's first */
  for (size_t i = 0; i < S; i++)
    rep[key[i].s] =
        i && !memcmp(key[i].h, key[i - 1].h, sizeof key[i].h) ? rep[key[i - 1].s] : key[i].s;
  sim_free(key);
  uint32_t n = 0;
  for (size_t s = 0; s < S; s++) cls[s] = rep[s] == s ? n++ : cls[rep[s]];
  sim_free(rep);
  return n;
}

/* Per window its group: the index of the first window of equal content. */
static size_t *window_groups(const tel__niclog *l, const uint64_t *wh) {
  size_t W = l->nwin;
  seg_key *key = sim_malloc((W ? W : 1) * sizeof *key);
  size_t *group = sim_malloc((W ? W : 1) * sizeof *group);
  for (size_t k = 0; k < W; k++) key[k] = (seg_key){{wh[2 * k], wh[2 * k + 1]}, (uint32_t)k};
  qsort(key, W, sizeof *key, seg_cmp);
  for (size_t i = 0; i < W; i++)
    group[key[i].s] =
        i && !memcmp(key[i].h, key[i - 1].h, sizeof key[i].h) ? group[key[i - 1].s] : key[i].s;
  sim_free(key);
  return group;
}

/* The classes, or false when they would not pay (then NIC by NIC): the
 * windows cover more segments in all than there are NICs four times over,
 * or there are more classes than a quarter of the NICs. */
static bool classes_build(const tel__niclog *l, nic_classes *c) {
  memset(c, 0, sizeof *c);
  size_t nbp;
  uint32_t *bp = boundaries(l, &nbp);
  size_t covered = 0;
  for (size_t k = 0; k < l->nwin; k++)
    covered += seg_of(bp, nbp, l->win[k].nic + l->win[k].count) - seg_of(bp, nbp, l->win[k].nic);
  if (l->nics == 0 || covered > 4 * (size_t)l->nics) {
    sim_free(bp);
    return false;
  }
  uint64_t *wh = window_hashes(l);
  uint32_t *scls = sim_malloc(nbp * sizeof *scls);
  c->n = segment_classes(l, bp, nbp, wh, scls);
  if ((size_t)c->n * 4 > l->nics) { /* fewer than 4 NICs a class: a row's sort of the
                                       classes would cost more than selecting among NICs */
    sim_free(wh);
    sim_free(scls);
    sim_free(bp);
    return false;
  }
  size_t *group = window_groups(l, wh);
  c->of = sim_malloc(l->nics * sizeof *c->of);
  c->first = sim_malloc((c->n ? c->n : 1) * sizeof *c->first);
  for (size_t s = nbp - 1; s-- > 0;) {
    for (uint32_t i = bp[s]; i < bp[s + 1]; i++) c->of[i] = scls[s];
    c->first[scls[s]] = bp[s]; /* last written: the lowest segment */
  }
  c->woff = sim_malloc((l->nwin + 1) * sizeof *c->woff);
  c->wcls = sim_malloc((covered ? covered : 1) * sizeof *c->wcls);
  size_t *stamp = sim_calloc(c->n ? c->n : 1, sizeof *stamp);
  size_t m = 0;
  for (size_t k = 0; k < l->nwin; k++) {
    c->woff[k] = m;
    size_t s0 = seg_of(bp, nbp, l->win[k].nic),
           s1 = seg_of(bp, nbp, l->win[k].nic + l->win[k].count);
    for (size_t s = s0; s < s1; s++)
      if (stamp[scls[s]] != group[k] + 1) stamp[scls[s]] = group[k] + 1, c->wcls[m++] = scls[s];
  }
  c->woff[l->nwin] = m;
  sim_free(stamp);
  sim_free(group);
  sim_free(wh);
  sim_free(scls);
  sim_free(bp);
  return true;
}

static void classes_free(nic_classes *c) {
  sim_free(c->of);
  sim_free(c->first);
  sim_free(c->woff);
  sim_free(c->wcls);
}

/* ---- feeding ------------------------------------------------------------------------------ */

/* A window's width in every repetition: its mean, but never past the end
 * of the shortest repetition (q->span). The mean of alike repetitions fits
 * in each (normal runs: unchanged); when one repetition stalled (a link
 * down until routing reconverged) the mean of a transfer that crossed the
 * link is longer than the others, and unclamped its windows overlapped one
 * another and ran past the phase's end, where what was left came out at
 * once: NIC series far above the line rate (issue 27, defect 7). Clamped,
 * a NIC's bytes of a repetition move within the repetition, so no faster
 * than its line rate (each repetition lasts at least their serialization). */
static simtime_ps win_width(const replay_phase *q, const tel__nic_win *win) {
  if (q->span == SIM_TIME_MAX || win->a + win->w <= q->span) return win->w;
  return q->span > win->a ? q->span - win->a : 1;
}

/* Phase q's bytes in [x0, y0) into acc, per class (c) or per NIC (c
 * NULL); touched: the entities first given any. */
static void phase_bytes(const tel__niclog *l, const nic_classes *c, const replay_phase *q,
                        simtime_ps x0, simtime_ps y0, uint64_t *acc[2], uint32_t *touched,
                        uint32_t *nt) {
  const tel__nic_phase *p = &l->ph[q->idx];
  uint64_t R = p->repeat;
  if (q->end <= y0)
    y0 = SIM_TIME_MAX; /* its last interval: what is left (mean offsets may
                          reach past a short last repetition) */
  for (size_t k = p->win_first; k < p->win_first + p->win_n; k++) {
    const tel__nic_win *win = &l->win[k];
    uint64_t total = win->bytes * R;
    simtime_ps w = win_width(q, win);
    uint64_t b = moved(q, total, win->a, w, y0) - moved(q, total, win->a, w, x0);
    if (b == 0) continue;
    size_t n = c ? c->woff[k + 1] - c->woff[k] : win->count;
    for (size_t j = 0; j < n; j++) {
      uint32_t e = c ? c->wcls[c->woff[k] + j] : win->nic + (uint32_t)j;
      if (acc[0][e] == 0 && acc[1][e] == 0) touched[(*nt)++] = e;
      acc[win->dir][e] += b;
    }
  }
}

static void replay(const tel__niclog *l, tel *t, bool by_class) {
  simtime_ps I = tel_interval(t);
  size_t np;
  tel__nic_run *runs;
  uint64_t *before;
  replay_phase *rp = gather(l, &np, &runs, &before);
  nic_classes cls, *c = NULL;
  if (by_class && classes_build(l, &cls)) {
    c = &cls;
    tel__nic_classes(t, c->of, c->n);
  }
  uint32_t ne = c ? c->n : t->c.nics; /* entities fed: classes or NICs */
  uint64_t *acc[2] = {sim_calloc(ne ? ne : 1, sizeof(uint64_t)),
                      sim_calloc(ne ? ne : 1, sizeof(uint64_t))};
  uint32_t *touched = sim_malloc((ne ? ne : 1) * sizeof *touched);
  size_t *active = sim_malloc((np ? np : 1) * sizeof *active), na = 0, next = 0;
  uint64_t j = 0;
  while (next < np || na) {
    if (na == 0) j = rp[next].start / I; /* skip idle intervals */
    simtime_ps x0 = (simtime_ps)j * I, y0 = x0 + I < x0 ? SIM_TIME_MAX : x0 + I;
    while (next < np && rp[next].start < y0) active[na++] = next++;
    uint32_t nt = 0;
    for (size_t k = 0; k < na; k++) phase_bytes(l, c, &rp[active[k]], x0, y0, acc, touched, &nt);
    for (uint32_t k = 0; k < nt; k++) {
      uint32_t e = touched[k], nic = c ? c->first[e] : e;
      for (int d = 0; d < 2; d++)
        if (acc[d][e]) tel_nic_bytes(t, x0, nic, d ? TEL_RX : TEL_TX, acc[d][e]);
      acc[0][e] = acc[1][e] = 0;
    }
    size_t keep = 0; /* a phase that ended gave all its bytes (phase_bytes) */
    for (size_t k = 0; k < na; k++)
      if (rp[active[k]].end > y0) active[keep++] = active[k];
    na = keep;
    j++;
  }
  if (c) classes_free(c);
  sim_free(active);
  sim_free(touched);
  sim_free(acc[0]);
  sim_free(acc[1]);
  sim_free(rp);
  sim_free(runs);
  sim_free(before);
}

void tel__niclog_replay(const tel__niclog *l, tel *t) { replay(l, t, true); }
void tel__niclog_replay_each(const tel__niclog *l, tel *t) { replay(l, t, false); }
