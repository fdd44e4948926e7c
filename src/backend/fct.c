/* Flow completion time percentiles (nearest rank: the smallest sample with
 * at least p of all samples at or below it). */
#include <math.h>
#include <stdlib.h>

#include "fabsim/backend.h"

void be_fct_add(be_fct *f, simtime_ps fct) {
  if (f->n == f->cap) sim_grow((void **)&f->v, &f->cap, f->n + 1, sizeof *f->v);
  f->v[f->n++] = fct;
}

static int fct_cmp(const void *a, const void *b) {
  simtime_ps x = *(const simtime_ps *)a, y = *(const simtime_ps *)b;
  return x < y ? -1 : x > y;
}

static simtime_ps rank(const be_fct *f, double p) {
  size_t r = (size_t)ceil(p * (double)f->n);
  if (r < 1) r = 1;
  if (r > f->n) r = f->n;
  return f->v[r - 1];
}

void be_fct_summarize(be_fct *f, be_stats *st) {
  if (f->n == 0) return;
  qsort(f->v, f->n, sizeof *f->v, fct_cmp);
  st->fct_p50 = rank(f, 0.50);
  st->fct_p99 = rank(f, 0.99);
  st->fct_p999 = rank(f, 0.999);
  st->fct_max = f->v[f->n - 1];
  /* Exact integer sum, then quotient + remainder/n: the same multiset of
   * samples repeated k times gives a bit-identical mean. */
  unsigned __int128 sum = 0;
  for (size_t i = 0; i < f->n; i++) sum += f->v[i];
  unsigned __int128 q = sum / f->n, r = sum % f->n;
  st->fct_mean_s = ((double)q + (double)r / (double)f->n) * 1e-12;
  st->observed |= BE_OBS_FCT;
}

void be_fct_free(be_fct *f) {
  sim_free(f->v);
  f->v = NULL;
  f->n = f->cap = 0;
}
