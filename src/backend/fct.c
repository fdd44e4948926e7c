/* Flow completion time percentiles (nearest rank: the smallest sample with
 * at least p of all samples at or below it), over a multiset kept as
 * (value, count) pairs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/backend.h"

typedef struct fct_pair {
  simtime_ps v;
  uint64_t w;
} fct_pair;

static int pair_cmp(const void *a, const void *b) {
  simtime_ps x = ((const fct_pair *)a)->v, y = ((const fct_pair *)b)->v;
  return x < y ? -1 : x > y;
}

/* The pairs sorted by value, equal values merged: *n pairs. */
static fct_pair *sorted_pairs(const be_fct *f, size_t *n) {
  fct_pair *p = sim_malloc((f->n ? f->n : 1) * sizeof *p);
  for (size_t i = 0; i < f->n; i++) p[i] = (fct_pair){f->v[i], f->w[i]};
  qsort(p, f->n, sizeof *p, pair_cmp);
  size_t m = 0;
  for (size_t i = 0; i < f->n; i++) {
    if (m > 0 && p[m - 1].v == p[i].v) p[m - 1].w += p[i].w;
    else p[m++] = p[i];
  }
  *n = m;
  return p;
}

void be_fct_add_n(be_fct *f, simtime_ps fct, uint64_t count) {
  if (count == 0) return;
  if (f->n > 0 && f->v[f->n - 1] == fct) {
    f->w[f->n - 1] += count;
    return;
  }
  if (f->n == f->cap) {
    if (f->n > 0) { /* merge equal values; grow only if that frees less than half */
      size_t m;
      fct_pair *p = sorted_pairs(f, &m);
      for (size_t i = 0; i < m; i++) f->v[i] = p[i].v, f->w[i] = p[i].w;
      sim_free(p);
      f->n = m;
    }
    if (2 * f->n >= f->cap) {
      size_t cap = f->cap ? 2 * f->cap : 64;
      f->v = sim_realloc(f->v, cap * sizeof *f->v);
      f->w = sim_realloc(f->w, cap * sizeof *f->w);
      f->cap = cap;
    }
  }
  f->v[f->n] = fct;
  f->w[f->n++] = count;
}

void be_fct_add(be_fct *f, simtime_ps fct) { be_fct_add_n(f, fct, 1); }

/* The sample of rank r (1-based) of the sorted pairs. */
static simtime_ps at_rank(const fct_pair *p, size_t n, uint64_t r) {
  uint64_t cum = 0;
  for (size_t i = 0; i < n; i++) {
    cum += p[i].w;
    if (cum >= r) return p[i].v;
  }
  return p[n - 1].v;
}

static simtime_ps rank(const fct_pair *p, size_t n, uint64_t total, double q) {
  uint64_t r = (uint64_t)ceil(q * (double)total);
  if (r < 1) r = 1;
  if (r > total) r = total;
  return at_rank(p, n, r);
}

void be_fct_summarize(const be_fct *f, be_stats *st) {
  if (f->n == 0) return;
  size_t n;
  fct_pair *p = sorted_pairs(f, &n);
  uint64_t total = 0;
  /* Exact integer sum, then quotient + remainder/total: the same multiset
   * of samples repeated k times gives a bit-identical mean. */
  unsigned __int128 sum = 0;
  for (size_t i = 0; i < n; i++) {
    total += p[i].w;
    sum += (unsigned __int128)p[i].v * p[i].w;
  }
  st->fct_p50 = rank(p, n, total, 0.50);
  st->fct_p99 = rank(p, n, total, 0.99);
  st->fct_p999 = rank(p, n, total, 0.999);
  st->fct_max = p[n - 1].v;
  unsigned __int128 q = sum / total, r = sum % total;
  st->fct_mean_s = ((double)q + (double)r / (double)total) * 1e-12;
  st->observed |= BE_OBS_FCT;
  sim_free(p);
}

void be_fct_free(be_fct *f) {
  sim_free(f->v);
  sim_free(f->w);
  memset(f, 0, sizeof *f);
}
