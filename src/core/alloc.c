/* The one allocation entry point. Out of memory is fatal: one settable
 * handler (Redis zmalloc's), by default sim_fatal with the size, exit 3.
 *
 * Process-wide state, the one exception to core's "no mutable globals" (as
 * zmalloc's handler and SQLite's fault simulator are): the handler, and the
 * test hook that fails one allocation on purpose, counting every sim_malloc,
 * sim_calloc and sim_realloc (sim_strdup, sim_grow and the arena come
 * through them). Counting costs one increment and one compare.
 *
 * It also keeps the bytes live (the allocator's usable size of every block
 * it handed out and has not had back: malloc_usable_size, or malloc_size on
 * macOS; elsewhere nothing is counted) against the limit a run sets
 * (sim_alloc_limit: simulation.memory_limit), so a run whose structures
 * grow past it while it is built or runs (a plan, an event log) stops with
 * exit status 3 and a message that names the limit, instead of the
 * machine's out-of-memory killer or swap (issue 27, defect 3). The check is
 * one comparison per allocation: memory the libraries allocate themselves
 * (SQLite, jansson) and the process's code are not counted. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

void sim_fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fabsim: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  exit(3);
}

static sim_oom_handler oom_handler;

void sim_set_oom_handler(sim_oom_handler h) { oom_handler = h; }

static void sim__oom(size_t size) {
  if (oom_handler) oom_handler(size); /* must not return; if it does, the default */
  sim_fatal(
      "out of memory allocating %zu bytes; reduce the scenario size (cluster.nodes) or run "
      "on a machine with more memory",
      size);
}

/* ---- the test hook ---------------------------------------------------------------------- */

/* FABSIM_TEST_ALLOC_FAIL, read at the first allocation:
 *   N        the N-th allocation of the process fails;
 *   each[:B[:S]]  every allocation fails once, each in a child process of
 *            its own (fork), up to the B-th, then every S-th (default: all):
 *            the child takes the out-of-memory path; the parent waits for
 *            it, checks it exited with status 3, and goes on as if nothing
 *            failed. At the parent's exit one line on stderr counts the
 *            children and names each that did not exit 3.
 * With either, a process that ends before any failure says on stderr how
 * many allocations it made ("fabsim: test hook: M allocations, ..."). */
static struct {
  int mode;           /* 0: unread; 1: off; 2: fail one; 3: each */
  uint64_t count;     /* allocations so far */
  uint64_t fail_at;   /* mode 2 (and sim_alloc_fail_at): the one that fails; 0: none */
  uint64_t bound;     /* mode 3: each allocation up to here ... */
  uint64_t stride;    /* ... then every stride-th */
  uint64_t children;  /* mode 3: children run */
  uint64_t bad;       /* mode 3: children that did not exit 3 */
  uint64_t first_bad; /* the first of those (its allocation number) */
  int first_status;   /* its wait status */
  pid_t parent;       /* the process that read the variable; 0 in a child of mode 3 */
} hook;

static void hook__report(void) {
  if (getpid() != hook.parent) return;
  if (hook.mode == 3) {
    fprintf(stderr,
            "fabsim: test hook: %" PRIu64 " allocations, %" PRIu64
            " failed one at a time in a "
            "child each; %" PRIu64 " did not exit 3",
            hook.count, hook.children, hook.bad);
    if (hook.bad)
      fprintf(stderr, " (the first: allocation %" PRIu64 ", wait status 0x%x)", hook.first_bad,
              (unsigned)hook.first_status);
    fputc('\n', stderr);
  } else if (hook.mode == 2 && hook.count < hook.fail_at) {
    fprintf(stderr,
            "fabsim: test hook: %" PRIu64 " allocations, allocation %" PRIu64 " never came\n",
            hook.count, hook.fail_at);
  }
}

static uint64_t hook__u64(const char *s, const char **end) {
  char *e;
  errno = 0;
  unsigned long long v = strtoull(s, &e, 10);
  *end = e;
  return errno || e == s ? 0 : (uint64_t)v;
}

static void hook__read(void) {
  const char *v = getenv("FABSIM_TEST_ALLOC_FAIL"), *end = "";
  hook.mode = 1;
  if (!v || !*v) return;
  hook.parent = getpid();
  if (!strncmp(v, "each", 4)) {
    hook.mode = 3;
    hook.bound = UINT64_MAX;
    hook.stride = 1;
    if (v[4] == ':') hook.bound = hook__u64(v + 5, &end);
    if (*end == ':') hook.stride = hook__u64(end + 1, &end);
    if (hook.stride == 0) hook.stride = 1;
  } else {
    hook.mode = 2;
    hook.fail_at = hook__u64(v, &end);
  }
  atexit(hook__report);
}

/* Mode 3: whether allocation n fails here (in a child forked for it). */
static bool hook__fork(uint64_t n) {
  if (n > hook.bound && (n - hook.bound) % hook.stride) return false;
  fflush(NULL); /* the child must not write the parent's buffered output again */
  pid_t pid = fork();
  if (pid == 0) { /* the child: this allocation fails, no other, nothing said at exit */
    hook.mode = 1;
    hook.parent = 0;
    return true;
  }
  if (pid < 0) sim_fatal("test hook: fork failed at allocation %" PRIu64, n);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  hook.children++;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 3) {
    if (!hook.bad++) hook.first_bad = n, hook.first_status = status;
  }
  return false;
}

/* Whether this allocation is to fail. */
static inline bool hook__fails(void) {
  if (hook.mode == 0) hook__read();
  uint64_t n = ++hook.count;
  if (n == hook.fail_at) return true;
  return hook.mode == 3 && hook__fork(n);
}

void sim_alloc_fail_at(uint64_t n) {
  if (hook.mode == 0) hook__read();
  hook.fail_at = n ? hook.count + n : 0;
}

uint64_t sim_alloc_count(void) { return hook.count; }

/* ---- the limit ------------------------------------------------------------------------------ */

static size_t live, peak, limit = SIZE_MAX; /* bytes; see the header comment */
static char limit_what[256];

static void sim__over_limit(size_t size) {
  char held[64], more[64];
  sim_fatal(
      "the run's structures would hold %s with %s more, past %s; raise it, or "
      "reduce the scenario (cluster.nodes, the workload's sizes, output.max_events) or run "
      "at a cheaper simulation.fidelity",
      sim_fmt_bytes(held, sizeof held, live), sim_fmt_noun(more, sizeof more, size, "byte"),
      limit_what);
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

/* ---- allocation ----------------------------------------------------------------------------- */

void *sim_malloc(size_t size) {
  return counted(hook__fails() ? NULL : malloc(size ? size : 1), size);
}

void *sim_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) sim__oom(SIZE_MAX);
  return counted(hook__fails() ? NULL : calloc(n ? n : 1, size ? size : 1), n * size);
}

void *sim_realloc(void *p, size_t size) {
  size_t before = p ? SIM__USABLE(p) : 0;
  void *q = hook__fails() ? NULL : realloc(p, size ? size : 1);
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
