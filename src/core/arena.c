/* Bump allocator. Invariant: every chunk's `used` <= `size`; allocations are
 * 16-byte aligned and zeroed; nothing is freed before sim_arena_free. */
#include <string.h>

#include "fabsim/core.h"

struct sim_arena_chunk {
  sim_arena_chunk *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
};

enum { SIM_ARENA_CHUNK = 1 << 20 };

void sim_arena_init(sim_arena *a) {
  a->head = NULL;
  a->used = 0;
}

void *sim_arena_alloc(sim_arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  sim_arena_chunk *c = a->head;
  if (!c || c->size - c->used < size) {
    size_t cap = size > SIM_ARENA_CHUNK ? size : SIM_ARENA_CHUNK;
    c = sim_malloc(sizeof *c + cap);
    c->size = cap;
    c->used = 0;
    c->next = a->head;
    a->head = c;
  }
  void *p = c->data + c->used;
  c->used += size;
  a->used += size;
  memset(p, 0, size);
  return p;
}

char *sim_arena_strdup(sim_arena *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = sim_arena_alloc(a, n);
  memcpy(d, s, n);
  return d;
}

void sim_arena_free(sim_arena *a) {
  sim_arena_chunk *c = a->head;
  while (c) {
    sim_arena_chunk *next = c->next;
    sim_free(c);
    c = next;
  }
  a->head = NULL;
  a->used = 0;
}
