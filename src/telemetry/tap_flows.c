/* The telemetry tap's per-flow log (output.flows): one row per transfer the
 * backend reports (be_xfer_end), at most `max` of them.
 *
 * The rows kept are the earliest by (start, phase, xfer): a max-heap on
 * that key holds them while the run goes, so a report that comes later but
 * starts earlier (the packet fidelity reports a queue pair at its end)
 * still takes its place, and the set kept is the same whatever the order
 * of the reports. The key is unique: a transfer of a phase starts once per
 * repetition. After the run the heap is sorted in place, once.
 * Cost: O(log max) per row offered, O(1) for a row that starts after every
 * kept one once the heap is full, and the repetitions of one record after
 * such a row are counted in O(1); memory max rows of sizeof(tel_flow). */
#include <stdlib.h>
#include <string.h>

#include "telemetry/tap_internal.h"

struct tap_flows {
  tel_flow *v; /* a max-heap by row_after until sorted */
  size_t n, cap, max;
  bool sorted;
  uint64_t left; /* rows offered past max (or evicted by earlier ones) */
  simtime_ps left_from, left_to;
};

/* a after b in (start, phase, xfer) order */
static bool row_after(const tel_flow *a, const tel_flow *b) {
  if (a->start != b->start) return a->start > b->start;
  if (a->phase != b->phase) return a->phase > b->phase;
  return a->xfer > b->xfer;
}

static void note_left(tap_flows *f, simtime_ps start, uint64_t count, simtime_ps last) {
  if (!f->left || start < f->left_from) f->left_from = start;
  if (!f->left || last > f->left_to) f->left_to = last;
  f->left += count;
}

static void sift_down(tel_flow *v, size_t n, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && row_after(&v[l], &v[m])) m = l;
    if (r < n && row_after(&v[r], &v[m])) m = r;
    if (m == i) return;
    tel_flow t = v[i];
    v[i] = v[m];
    v[m] = t;
    i = m;
  }
}

void tel_tap_flows_keep(tel_tap *tap, size_t max) {
  if (tap->flows) return;
  tap->flows = sim_calloc(1, sizeof *tap->flows);
  tap->flows->max = max ? max : 1;
}

/* Offer one row; false when it sorts after every kept row of a full heap
 * (then so does every later repetition of the same transfer). */
static bool offer(tap_flows *f, const tel_flow *row) {
  if (f->n < f->max) {
    sim_grow((void **)&f->v, &f->cap, f->n + 1, sizeof *f->v);
    size_t i = f->n++;
    f->v[i] = *row;
    while (i && row_after(&f->v[i], &f->v[(i - 1) / 2])) { /* sift up */
      tel_flow t = f->v[i];
      f->v[i] = f->v[(i - 1) / 2];
      f->v[(i - 1) / 2] = t;
      i = (i - 1) / 2;
    }
    return true;
  }
  if (!row_after(&f->v[0], row)) return false;
  note_left(f, f->v[0].start, 1, f->v[0].start); /* the latest kept row goes */
  f->v[0] = *row;
  sift_down(f->v, f->n, 0);
  return true;
}

void tap__flows_add(tap_flows *f, const tel_flow *row, simtime_ps period, uint64_t reps,
                    simtime_ps delivered) {
  tel_flow r = *row;
  for (uint64_t k = 0; k < reps; k++) {
    r.start = row->start + k * period;
    r.end = r.start + delivered;
    if (!offer(f, &r)) {
      note_left(f, r.start, reps - k, row->start + (reps - 1) * period);
      return;
    }
  }
}

static int row_cmp(const void *a, const void *b) {
  return row_after(a, b) ? 1 : row_after(b, a) ? -1 : 0;
}

const tel_flow *tel_tap_flows(tel_tap *tap, simtime_ps until, size_t *n, uint64_t *left,
                              simtime_ps *left_from, simtime_ps *left_to) {
  tap_flows *f = tap->flows;
  *n = 0;
  *left = 0;
  *left_from = *left_to = 0;
  if (!f) return NULL;
  if (!f->sorted) {
    size_t k = 0; /* rows that end after the run did never completed in it */
    for (size_t i = 0; i < f->n; i++)
      if (f->v[i].end <= until) f->v[k++] = f->v[i];
    f->n = k;
    qsort(f->v, f->n, sizeof *f->v, row_cmp);
  }
  f->sorted = true;
  *n = f->n;
  *left = f->left;
  *left_from = f->left_from;
  *left_to = f->left_to;
  return f->v;
}

void tap__flows_free(tap_flows *f) {
  if (!f) return;
  sim_free(f->v);
  sim_free(f);
}
