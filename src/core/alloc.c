/* The one allocation entry point. Out of memory is fatal and says how much.
 *
 * It also keeps the bytes live (the allocator's usable size of every block
 * it handed out and has not had back: malloc_usable_size, or malloc_size on
 * macOS; elsewhere nothing is counted) against the limit a run sets
 * (sim_alloc_limit: simulation.memory_limit), so a run whose structures
 * grow past it while it is built or runs (a plan, an event log) stops with
 * exit status 3 and a message that names the limit, instead of the
 * machine's out-of-memory killer or swap (issue 27, defect 3). The check is
 * one comparison per allocation, at the one place every structure of a
 * run passes through: memory the libraries allocate themselves (SQLite,
 * jansson) and the process's code are not counted. The counters are
 * process-wide by nature, as the allocator is; fabsim allocates from one
 * thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#define SIM__USABLE(p) malloc_usable_size(p)
#elif defined(__APPLE__)
#include <malloc/malloc.h>
#define SIM__USABLE(p) malloc_size(p)
#else
#define SIM__USABLE(p) ((size_t)0)
#endif

#include "fabsim/core.h"

static size_t live, peak, limit = SIZE_MAX; /* bytes; see the header comment */
static char limit_what[256];

static void sim__oom(size_t size) {
  fprintf(stderr,
          "fabsim: out of memory allocating %zu bytes; reduce the scenario size "
          "(cluster.nodes) or run on a machine with more memory\n",
          size);
  fflush(stderr);
  exit(3);
}

static void sim__over_limit(size_t size) {
  fprintf(stderr,
          "fabsim: the run's structures would hold %.4g MiB with %zu bytes more, past %s; "
          "raise it, or reduce the scenario (cluster.nodes, the workload's sizes, "
          "output.max_events) or run at a cheaper simulation.fidelity\n",
          (double)live / 1048576, size, limit_what);
  fflush(stderr);
  exit(3);
}

static void *counted(void *p, size_t size) {
  if (!p) sim__oom(size);
  live += SIM__USABLE(p);
  if (live > peak) peak = live;
  if (live > limit) sim__over_limit(size);
  return p;
}

static void uncount(void *p) {
  size_t u = p ? SIM__USABLE(p) : 0;
  live = live > u ? live - u : 0;
}

void sim_alloc_limit(uint64_t bytes, const char *what) {
  limit = bytes && bytes < SIZE_MAX ? (size_t)bytes : SIZE_MAX;
  snprintf(limit_what, sizeof limit_what, "%s", what ? what : "the memory limit");
  if (live > limit) sim__over_limit(0);
}

size_t sim_alloc_live(void) { return live; }
size_t sim_alloc_peak(void) { return peak; }

void *sim_malloc(size_t size) { return counted(malloc(size ? size : 1), size); }

void *sim_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) sim__oom(SIZE_MAX);
  return counted(calloc(n ? n : 1, size ? size : 1), n * size);
}

void *sim_realloc(void *p, size_t size) {
  size_t before = p ? SIM__USABLE(p) : 0;
  void *q = realloc(p, size ? size : 1);
  if (!q) sim__oom(size);
  live = live > before ? live - before : 0; /* p is gone (or is q) */
  return counted(q, size);
}

char *sim_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = sim_malloc(n);
  memcpy(d, s, n);
  return d;
}

void sim_free(void *p) {
  uncount(p);
  free(p);
}

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
