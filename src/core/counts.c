/* Counted multisets (fabsim/core.h, sim_counts): open addressing over
 * power-of-two tables, at most half full; a table is rebuilt (zero counts
 * dropped) to the smallest power of two, at least 64, holding 4 x its live
 * values. */
#include <assert.h>
#include <string.h>

#include "fabsim/core.h"

static void counts_alloc(sim_counts *c, size_t cap) {
  c->cap = cap;
  c->key = sim_malloc(cap * sizeof *c->key);
  c->count = sim_malloc(cap * sizeof *c->count);
  c->used = sim_calloc(cap, 1);
  c->nused = c->live = 0;
}

void sim_counts_init(sim_counts *c) { counts_alloc(c, 64); }

void sim_counts_free(sim_counts *c) {
  sim_free(c->key);
  sim_free(c->count);
  sim_free(c->used);
  memset(c, 0, sizeof *c);
}

void sim_counts_clear(sim_counts *c) {
  memset(c->used, 0, c->cap);
  c->nused = c->live = 0;
}

static size_t counts_slot(const sim_counts *c, uint64_t v) {
  size_t i = (size_t)sim_hash_u64(v) & (c->cap - 1);
  while (c->used[i] && c->key[i] != v) i = (i + 1) & (c->cap - 1);
  return i;
}

static void counts_rebuild(sim_counts *c) {
  sim_counts old = *c;
  size_t cap = 64;
  while (cap < 4 * old.live) cap *= 2;
  counts_alloc(c, cap);
  for (size_t i = 0; i < old.cap; i++)
    if (old.used[i] && old.count[i] > 0) sim_counts_add(c, old.key[i], old.count[i]);
  sim_counts_free(&old);
}

void sim_counts_add(sim_counts *c, uint64_t v, uint64_t n) {
  if (2 * (c->nused + 1) > c->cap) counts_rebuild(c);
  size_t i = counts_slot(c, v);
  if (!c->used[i]) {
    c->used[i] = 1;
    c->key[i] = v;
    c->count[i] = 0;
    c->nused++;
  }
  if (c->count[i] == 0) c->live++;
  c->count[i] += n;
}

void sim_counts_sub(sim_counts *c, uint64_t v) {
  size_t i = counts_slot(c, v);
  assert(c->used[i] && c->count[i] > 0);
  if (--c->count[i] == 0) c->live--;
}

void sim_counts_compact(sim_counts *c) {
  if (c->nused > 2 * c->live + 1024) counts_rebuild(c);
}

uint64_t sim_counts_max(sim_counts *c) {
  sim_counts_compact(c);
  uint64_t m = 0, v, n;
  for (size_t i = 0; i < c->cap; i++)
    if (sim_counts_at(c, i, &v, &n) && v > m) m = v;
  return m;
}
