/* Event engine: a two-tier priority queue of 128-bit keys over a pool of
 * event slots.
 *
 * Keys and order
 *   Each key is (time << 64) | (seq << EV_SLOT_BITS) | slot. seq is unique and
 *   increases with every ev_schedule, so comparing keys as unsigned 128-bit
 *   integers orders events by (time, insertion sequence): a total order. When
 *   seq would overflow its bits, every pending key is renumbered in order
 *   (ev__renumber), which preserves the order exactly.
 *
 * Tiers (a calendar queue whose current day is a heap)
 *   - near: a 4-ary min-heap holding every pending key with time < near_end.
 *   - buckets: bucket j holds, unsorted, the keys with time in
 *     [far_base + j*W, far_base + (j+1)*W), W = 2^shift; buckets below `cur`
 *     are empty, and near_end = far_base + cur*W.
 *   - overflow: unsorted keys with time >= far_base + nb*W.
 *   When the heap runs dry, bucket `cur` is heapified into it (O(k)); when the
 *   buckets run out, the overflow is spread into a new set of buckets whose
 *   width is chosen from its time span and count (about EV_BUCKET_TARGET keys
 *   per bucket). The minimum is always the heap top, so the order is the one
 *   a single heap would give; only the cost changes: O(1) amortized inserts
 *   and pops from a heap of a few dozen keys for smooth time distributions,
 *   and never worse than one heap (a bucket can hold everything).
 *
 * Slots: a slot is free (on the free list) or referenced by exactly one
 * pending key. A cancelled slot keeps fn == NULL until its key is popped.
 *
 * Running handler: while a handler runs, its own key is still at heap[0]
 * (top_pending); if the handler's first ev_schedule lands in the heap it
 * overwrites that key and sifts down once instead of a pop and a push. The
 * running event's slot is already free, so its handle is stale from then on.
 *
 * Limits: at most 2^EV_SLOT_BITS (64 M) events pending at once (fatal, with a
 * message, beyond that). Cost: schedule O(1) amortized (heap: O(log4 k)),
 * pop O(log4 k) with k the current bucket's size, cancel O(1).
 */
#include <assert.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ev_internal.h"

typedef unsigned __int128 ev__key;

enum { EV_SLOT_BITS = 26, EV_BUCKET_TARGET = 16, EV_MAX_BUCKETS = 1 << 16 };
#define EV_SLOT_MASK ((1u << EV_SLOT_BITS) - 1u)
#define EV_SEQ_LIMIT (1ULL << (64 - EV_SLOT_BITS))
#define EV_NO_SLOT UINT32_MAX

typedef struct ev__slot {
  ev_fn fn; /* NULL: cancelled (while pending) */
  void *obj;
  uint64_t arg;
  uint32_t gen;       /* bumped on every release; part of ev_id */
  uint32_t next_free; /* free-list link, valid while free */
} ev__slot;

typedef struct ev__vec {
  ev__key *k;
  size_t n, cap;
} ev__vec;

struct sim_ctx {
  simtime_ps now;
  uint64_t seed;
  uint64_t seq;
  uint64_t events;
  size_t pending; /* keys in all tiers, cancelled ones included */
  size_t cancelled;
  /* near tier */
  ev__key *heap; /* heap + 1 is 64-byte aligned: siblings share a cache line */
  void *heap_mem;
  size_t n, cap;
  simtime_ps near_end;
  /* far tier */
  ev__vec *buckets;
  size_t nb, cur, buckets_cap;
  unsigned shift;
  simtime_ps far_base;
  ev__vec overflow;
  /* slots */
  ev__slot *slots;
  size_t nslots, slots_cap;
  uint32_t free_head;
  bool top_pending;
  bool stop;
  /* co-engine (sim_set_coengine): its events before co_reached have run */
  sim_co_fn co;
  void *co_obj;
  simtime_ps co_reached;
  uint64_t co_events;
  bool co_stopped; /* sim_co_stop: ev_run returns at once from now on */
};

/* An interrupt (Ctrl-C) is process-wide by nature: the one flag here that
 * is not simulation state. A signal handler may set it. */
static volatile sig_atomic_t interrupt_flag;
void sim_interrupt_note(void) { interrupt_flag = 1; }
void sim_interrupt_clear(void) { interrupt_flag = 0; }
bool sim_interrupt_pending(void) { return interrupt_flag != 0; }

sim_ctx *sim_create(uint64_t seed) {
  sim_ctx *sim = sim_calloc(1, sizeof *sim);
  sim->seed = seed;
  sim->free_head = EV_NO_SLOT;
  return sim;
}

void sim_destroy(sim_ctx *sim) {
  if (!sim) return;
  for (size_t i = 0; i < sim->buckets_cap; i++) sim_free(sim->buckets[i].k);
  sim_free(sim->buckets);
  sim_free(sim->overflow.k);
  sim_free(sim->heap_mem);
  sim_free(sim->slots);
  sim_free(sim);
}

simtime_ps sim_now(const sim_ctx *sim) { return sim->now; }
const simtime_ps *sim_now_ptr(const sim_ctx *sim) { return &sim->now; }
uint64_t sim_seed(const sim_ctx *sim) { return sim->seed; }
uint64_t sim_events(const sim_ctx *sim) { return sim->events + sim->co_events; }

void sim_set_coengine(sim_ctx *sim, sim_co_fn fn, void *obj) {
  sim->co = fn;
  sim->co_obj = obj;
  sim->co_reached = sim->now;
}

void sim_set_co_events(sim_ctx *sim, uint64_t n) { sim->co_events = n; }
bool sim_has_coengine(const sim_ctx *sim) { return sim->co != NULL; }
void sim_co_stop(sim_ctx *sim) {
  sim->co_stopped = true;
  sim->stop = true;
}
bool sim_co_stopped(const sim_ctx *sim) { return sim->co_stopped; }
size_t sim_pending(const sim_ctx *sim) {
  return sim->pending - sim->cancelled - (sim->top_pending ? 1 : 0);
}

void sim_rng_stream(const sim_ctx *sim, sim_rng *r, const char *stream) {
  sim_rng_init(r, sim->seed, stream);
}

static inline simtime_ps ev__time(ev__key k) { return (simtime_ps)(k >> 64); }
static inline uint32_t ev__slot_of(ev__key k) { return (uint32_t)k & EV_SLOT_MASK; }

/* ---- near tier: 4-ary heap ------------------------------------------- */

/* Grow so that the 4 children of node i, at 4i+1 .. 4i+4, fill one 64-byte
 * line: heap[1] sits on a line boundary. */
static void ev__heap_reserve(sim_ctx *sim, size_t need) {
  if (need <= sim->cap) return;
  size_t cap = sim->cap ? sim->cap : 256;
  while (cap < need) cap *= 2;
  void *mem = sim_malloc(cap * sizeof(ev__key) + 128);
  uintptr_t line = ((uintptr_t)mem + 64 + 63) & ~(uintptr_t)63;
  ev__key *heap = (ev__key *)(line - sizeof(ev__key));
  if (sim->n) memcpy(heap, sim->heap, sim->n * sizeof *heap);
  sim_free(sim->heap_mem);
  sim->heap_mem = mem;
  sim->heap = heap;
  sim->cap = cap;
}

static void ev__sift_up(ev__key *heap, size_t i, ev__key x) {
  while (i > 0) {
    size_t parent = (i - 1) >> 2;
    if (heap[parent] <= x) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = x;
}

/* Place x in the hole at i (x >= every ancestor of i). Bottom-up (Floyd):
 * walk the hole down along the smallest child to a leaf without comparing
 * against x, then sift x up from there; new keys usually belong low. */
static void ev__sift_down(ev__key *heap, size_t n, size_t i, ev__key x) {
  size_t top = i;
  for (;;) {
    size_t c = (i << 2) + 1;
    if (c + 4 <= n) {
      size_t a = heap[c + 1] < heap[c] ? c + 1 : c;
      size_t b = heap[c + 3] < heap[c + 2] ? c + 3 : c + 2;
      size_t best = heap[b] < heap[a] ? b : a;
      heap[i] = heap[best];
      i = best;
    } else {
      if (c >= n) break;
      size_t best = c;
      for (size_t j = c + 1; j < n; j++)
        if (heap[j] < heap[best]) best = j;
      heap[i] = heap[best];
      i = best;
    }
  }
  while (i > top) {
    size_t parent = (i - 1) >> 2;
    if (heap[parent] <= x) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = x;
}

static void ev__heap_pop(sim_ctx *sim) {
  assert(sim->n > 0);
  sim->n--;
  if (sim->n > 0) ev__sift_down(sim->heap, sim->n, 0, sim->heap[sim->n]);
}

/* Move a bucket's keys into the (empty) heap and heapify. O(k). */
static void ev__heap_load(sim_ctx *sim, ev__vec *v) {
  assert(sim->n == 0);
  ev__heap_reserve(sim, v->n);
  memcpy(sim->heap, v->k, v->n * sizeof *v->k);
  sim->n = v->n;
  v->n = 0;
  if (sim->n > 1)
    for (size_t i = (sim->n - 2) >> 2; i != SIZE_MAX; i--)
      ev__sift_down(sim->heap, sim->n, i, sim->heap[i]);
}

/* ---- far tier: buckets and overflow ----------------------------------- */

static inline void ev__vec_push(ev__vec *v, ev__key k) {
  if (v->n == v->cap) sim_grow((void **)&v->k, &v->cap, v->n + 1, sizeof *v->k);
  v->k[v->n++] = k;
}

/* Place a key in whichever tier covers its time. Never touches top_pending. */
static inline void ev__insert(sim_ctx *sim, ev__key x) {
  simtime_ps t = ev__time(x);
  if (t < sim->near_end) {
    ev__heap_reserve(sim, sim->n + 1);
    ev__sift_up(sim->heap, sim->n++, x);
    return;
  }
  uint64_t idx = (t - sim->far_base) >> sim->shift;
  ev__vec_push(idx < sim->nb ? &sim->buckets[idx] : &sim->overflow, x);
}

/* The buckets are exhausted: spread the overflow over a fresh set sized from
 * its span and count. Every key moves once per rebuild. O(overflow + nb). */
static void ev__rebuild(sim_ctx *sim) {
  ev__vec *o = &sim->overflow;
  assert(o->n > 0 && sim->n == 0);
  simtime_ps lo = SIM_TIME_MAX, hi = 0;
  for (size_t i = 0; i < o->n; i++) {
    simtime_ps t = ev__time(o->k[i]);
    if (t < lo) lo = t;
    if (t > hi) hi = t;
  }
  uint64_t span = hi - lo + 1;
  uint64_t width = (uint64_t)((double)span * EV_BUCKET_TARGET / (double)o->n);
  unsigned shift = 0;
  while (shift < 63 && (1ULL << (shift + 1)) <= width) shift++;
  uint64_t nb = (span >> shift) + 1;
  if (nb > EV_MAX_BUCKETS) nb = EV_MAX_BUCKETS;
  if (nb > sim->buckets_cap) {
    sim->buckets = sim_realloc(sim->buckets, nb * sizeof *sim->buckets);
    memset(sim->buckets + sim->buckets_cap, 0, (nb - sim->buckets_cap) * sizeof *sim->buckets);
    sim->buckets_cap = nb;
  }
  sim->nb = nb;
  sim->cur = 0;
  sim->shift = shift;
  sim->far_base = lo;
  sim->near_end = lo;
  /* Swap the overflow out so that keys beyond the new range land in a fresh one. */
  ev__vec old = *o;
  o->k = NULL;
  o->n = o->cap = 0;
  for (size_t i = 0; i < old.n; i++) ev__insert(sim, old.k[i]);
  if (o->cap == 0) { /* nothing spilled: keep the old storage for next time */
    *o = old;
    o->n = 0;
  } else {
    sim_free(old.k);
  }
}

/* Make heap[0] the minimum pending key. Returns false if nothing is pending. */
static bool ev__refill(sim_ctx *sim) {
  while (sim->n == 0) {
    if (sim->cur < sim->nb) {
      ev__vec *b = &sim->buckets[sim->cur++];
      simtime_ps off = (simtime_ps)sim->cur << sim->shift;
      sim->near_end = off > SIM_TIME_MAX - sim->far_base ? SIM_TIME_MAX : sim->far_base + off;
      if (b->n) ev__heap_load(sim, b);
    } else if (sim->overflow.n) {
      ev__rebuild(sim);
    } else {
      return false;
    }
  }
  return true;
}

static int ev__key_cmp(const void *a, const void *b) {
  ev__key x = *(const ev__key *)a, y = *(const ev__key *)b;
  return x < y ? -1 : x > y;
}

/* Reassign sequence numbers 0 .. n-1 in key order across all tiers; the
 * relative order of all pending keys is unchanged. O(n log n), once every
 * 2^38 events. Called with top_pending false. */
static void ev__renumber(sim_ctx *sim) {
  ev__vec all = {0};
  for (size_t i = 0; i < sim->n; i++) ev__vec_push(&all, sim->heap[i]);
  for (size_t b = 0; b < sim->nb; b++) {
    for (size_t i = 0; i < sim->buckets[b].n; i++) ev__vec_push(&all, sim->buckets[b].k[i]);
    sim->buckets[b].n = 0;
  }
  for (size_t i = 0; i < sim->overflow.n; i++) ev__vec_push(&all, sim->overflow.k[i]);
  sim->overflow.n = 0;
  sim->n = 0;
  if (all.n) qsort(all.k, all.n, sizeof *all.k, ev__key_cmp);
  for (size_t i = 0; i < all.n; i++) {
    ev__key k = all.k[i];
    ev__insert(sim, ((ev__key)ev__time(k) << 64) | ((ev__key)i << EV_SLOT_BITS) | ev__slot_of(k));
  }
  sim->seq = all.n;
  sim_free(all.k);
}

void ev__debug_renumber(sim_ctx *sim) {
  bool pending = sim->top_pending;
  assert(!pending && "call between events");
  (void)pending;
  ev__renumber(sim);
}

/* ---- slots ------------------------------------------------------------ */

static inline uint32_t ev__slot_alloc(sim_ctx *sim) {
  uint32_t s = sim->free_head;
  if (s != EV_NO_SLOT) {
    sim->free_head = sim->slots[s].next_free;
    return s;
  }
  if (sim->nslots > EV_SLOT_MASK) {
    fprintf(stderr, "fabsim: more than %u events pending at once; reduce the scenario size\n",
            EV_SLOT_MASK + 1u);
    exit(3);
  }
  sim_grow((void **)&sim->slots, &sim->slots_cap, sim->nslots + 1, sizeof *sim->slots);
  s = (uint32_t)sim->nslots++;
  sim->slots[s].gen = 1;
  return s;
}

static inline void ev__slot_release(sim_ctx *sim, uint32_t s) {
  sim->slots[s].gen++;
  sim->slots[s].next_free = sim->free_head;
  sim->free_head = s;
}

/* ---- public API ------------------------------------------------------- */

ev_id ev_schedule(sim_ctx *sim, simtime_ps at, ev_fn fn, void *obj, uint64_t arg) {
  assert(at >= sim->now && "events cannot be scheduled in the past");
  assert(fn != NULL);
  uint32_t s = ev__slot_alloc(sim);
  ev__slot *slot = &sim->slots[s];
  slot->fn = fn;
  slot->obj = obj;
  slot->arg = arg;
  if (sim->seq >= EV_SEQ_LIMIT) {
    if (sim->top_pending) { /* drop the running event's key first */
      sim->top_pending = false;
      sim->pending--;
      ev__heap_pop(sim);
    }
    ev__renumber(sim);
  }
  ev__key x = ((ev__key)at << 64) | ((ev__key)sim->seq++ << EV_SLOT_BITS) | s;
  if (sim->top_pending && at < sim->near_end) {
    sim->top_pending = false;
    ev__sift_down(sim->heap, sim->n, 0, x);
  } else {
    sim->pending++;
    ev__insert(sim, x);
  }
  return ((uint64_t)slot->gen << 32) | s;
}

bool ev_cancel(sim_ctx *sim, ev_id id) {
  uint32_t s = (uint32_t)id, gen = (uint32_t)(id >> 32);
  if (s >= sim->nslots) return false;
  ev__slot *slot = &sim->slots[s];
  if (slot->gen != gen || slot->fn == NULL) return false;
  slot->fn = NULL;
  sim->cancelled++;
  return true;
}

void ev_stop(sim_ctx *sim) { sim->stop = true; }

/* Run the event at the top of the heap: drop it if it was cancelled (false),
 * else run it (true). */
static inline bool ev__run_top(sim_ctx *sim) {
  ev__key top = sim->heap[0];
  uint32_t s = ev__slot_of(top);
  ev__slot *slot = &sim->slots[s];
  ev_fn fn = slot->fn;
  if (!fn) { /* cancelled */
    sim->cancelled--;
    sim->pending--;
    ev__slot_release(sim, s);
    ev__heap_pop(sim);
    return false;
  }
  void *obj = slot->obj;
  uint64_t arg = slot->arg;
  ev__slot_release(sim, s);
  sim->now = ev__time(top);
  sim->top_pending = true;
  fn(sim, obj, arg);
  if (sim->top_pending) {
    sim->top_pending = false;
    sim->pending--;
    ev__heap_pop(sim);
  }
  sim->events++;
  return true;
}

/* ev_run with a co-engine: before this context's next event (or the end of
 * the run), the co-engine runs its events up to that time; it may stop
 * earlier at an event it scheduled here, so the top is looked at again. */
static uint64_t ev__run_co(sim_ctx *sim, simtime_ps until) {
  uint64_t start = sim->events;
  if (sim->co_stopped) return 0;
  sim->stop = false;
  while (!sim->stop) {
    bool have = ev__refill(sim);
    if (have && !sim->slots[ev__slot_of(sim->heap[0])].fn) { /* cancelled: drop it */
      ev__run_top(sim);
      continue;
    }
    simtime_ps next = have ? ev__time(sim->heap[0]) : SIM_TIME_MAX;
    simtime_ps bound = next <= until ? next : (until == SIM_TIME_MAX ? SIM_TIME_MAX : until + 1);
    if (sim->co_reached < bound) {
      simtime_ps r = sim->co(sim->co_obj, bound);
      assert(r >= sim->co_reached && r <= bound);
      sim->co_reached = r;
      continue;
    }
    if (!have || next > until) break;
    ev__run_top(sim);
    sim->co_reached = sim->now; /* it may have given the co-engine events from now on */
  }
  return sim->events - start;
}

uint64_t ev_run(sim_ctx *sim, simtime_ps until) {
  if (sim->co) return ev__run_co(sim, until);
  uint64_t start = sim->events;
  sim->stop = false;
  while (!sim->stop && ev__refill(sim) && ev__time(sim->heap[0]) <= until) ev__run_top(sim);
  return sim->events - start;
}
