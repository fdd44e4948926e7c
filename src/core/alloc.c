/* The one allocation entry point. Out of memory is fatal and says how much. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/core.h"

static void sim__oom(size_t size) {
  fprintf(stderr,
          "fabsim: out of memory allocating %zu bytes; reduce the scenario size "
          "(cluster.nodes) or run on a machine with more memory\n",
          size);
  fflush(stderr);
  exit(3);
}

void *sim_malloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) sim__oom(size);
  return p;
}

void *sim_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) sim__oom(SIZE_MAX);
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) sim__oom(n * size);
  return p;
}

void *sim_realloc(void *p, size_t size) {
  void *q = realloc(p, size ? size : 1);
  if (!q) sim__oom(size);
  return q;
}

char *sim_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = sim_malloc(n);
  memcpy(d, s, n);
  return d;
}

void sim_free(void *p) { free(p); }

void sim_grow(void **items, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return;
  size_t ncap = *cap ? *cap : 16;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2 / elem) sim__oom(SIZE_MAX);
    ncap *= 2;
  }
  *items = sim_realloc(*items, ncap * elem);
  *cap = ncap;
}
