/* Event engine: a calendar queue of 128-bit keys (fabsim/evq.h) over a pool
 * of event slots.
 *
 * Keys and order
 *   Each key is (time << 64) | (seq << EV_SLOT_BITS) | slot. seq is unique and
 *   increases with every ev_schedule, so comparing keys as unsigned 128-bit
 *   integers orders events by (time, insertion sequence): a total order. When
 *   seq would overflow its bits, every pending key is renumbered in order
 *   (ev__renumber), which preserves the order exactly.
 *
 * Queue (fabsim/evq.h: a calendar queue whose current day is a 4-ary heap,
 * shared with src/pdes): the keys leave in the order of their 128-bit
 * values, whatever the tiers; O(1) amortized inserts and pops from a heap of
 * a few dozen keys for smooth time distributions, never worse than one heap.
 *
 * Slots: a slot is free (on the free list) or referenced by exactly one
 * pending key. A cancelled slot keeps fn == NULL until its key is popped.
 *
 * Same-instant FIFO: a key due at the current time (at == now) goes to a
 * FIFO instead of the heap. Its sequence is above every key already pending
 * at now (those in the heap were scheduled before the clock reached now,
 * since every key scheduled at the clock's time goes to the FIFO), and its
 * time below every later key, so the order is unchanged: the heap's keys at
 * now, then the FIFO in insertion order, then the rest. It saves a heap
 * insert and pop (O(log4 k) each) for every event scheduled at the current
 * instant (the packet fidelity's deferred same-instant runs and wakes); the
 * FIFO is empty whenever the clock moves (spilled into the heap if the
 * clock goes back, ev_run's ran-dry case, and before renumbering).
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

#define EVQ_NAME ev__q
#define EVQ_KEY ev__key
#define EVQ_LESS(a, b) ((a) < (b))
#define EVQ_TIME(k) ((simtime_ps)((k) >> 64))
#include "fabsim/evq.h"

enum { EV_SLOT_BITS = 26 };
#define EV_SLOT_MASK ((1u << EV_SLOT_BITS) - 1u)
#define EV_SEQ_LIMIT (1ULL << (64 - EV_SLOT_BITS))
#define EV_NO_SLOT UINT32_MAX

typedef struct ev__slot {
  ev_fn fn; /* NULL: cancelled (while pending) */
  void *obj;
  uint64_t arg;
  uint32_t gen; /* bumped on every release; part of ev_id */
  union {
    uint32_t next_free; /* free-list link, valid while free */
    uint32_t beside;    /* while pending: scheduled by ev_schedule_beside */
  };
} ev__slot;

struct sim_ctx {
  simtime_ps now;
  simtime_ps own_now; /* the last event not beside the run (ev_schedule_beside) */
  uint64_t seed;
  uint64_t seq;
  uint64_t events;
  size_t pending; /* keys in all tiers, cancelled ones included */
  size_t cancelled;
  ev__q q;
  ev__key *fifo; /* keys at now scheduled while the clock read now: [fifo_head, fifo_n) */
  size_t fifo_head, fifo_n, fifo_cap;
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
  bool co_stopped;   /* sim_co_stop: ev_run returns at once from now on */
  bool past_horizon; /* an event due at or past SIM_HORIZON_PS: ev_run returns at once */
  simtime_ps horizon_due;
  double bound_s; /* sim_set_run_bound: one ev_run's wall time at most (0: none) */
  bool cut;       /* the last ev_run returned for the bound or an interrupt */
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
  ev__q_destroy(&sim->q);
  sim_free(sim->fifo);
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

static int ev__key_cmp(const void *a, const void *b) {
  ev__key x = *(const ev__key *)a, y = *(const ev__key *)b;
  return x < y ? -1 : x > y;
}

/* Move the same-instant FIFO's keys into the heap tier (their order is
 * their keys' order either way). */
static void ev__fifo_spill(sim_ctx *sim) {
  for (size_t i = sim->fifo_head; i < sim->fifo_n; i++) ev__q_insert(&sim->q, sim->fifo[i]);
  sim->fifo_head = sim->fifo_n = 0;
}

static inline bool ev__fifo_has(const sim_ctx *sim) { return sim->fifo_head < sim->fifo_n; }

/* Reassign sequence numbers 0 .. n-1 in key order across all tiers; the
 * relative order of all pending keys is unchanged. O(n log n), once every
 * 2^38 events. Called with top_pending false. */
static void ev__renumber(sim_ctx *sim) {
  ev__fifo_spill(sim);
  ev__q_vec all = {0};
  ev__q_take_all(&sim->q, &all);
  if (all.n) qsort(all.k, all.n, sizeof *all.k, ev__key_cmp);
  for (size_t i = 0; i < all.n; i++) {
    ev__key k = all.k[i];
    ev__q_insert(&sim->q,
                 ((ev__key)ev__time(k) << 64) | ((ev__key)i << EV_SLOT_BITS) | ev__slot_of(k));
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
    sim_fatal("more than %u events pending at once; reduce the scenario size", EV_SLOT_MASK + 1u);
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

/* The hot paths, inlined whatever their size (the compiler's estimate left
 * the schedule and the run of one event out of line: +3 % instructions on
 * the packet benchmarks); their cold parts are functions of their own. */
#define EV__HOT static inline __attribute__((always_inline))

/* Sequence numbers ran out: renumber (the running event's key dropped first). */
static void ev__seq_wrap(sim_ctx *sim) {
  if (sim->top_pending) {
    sim->top_pending = false;
    sim->pending--;
    ev__q_pop(&sim->q);
  }
  ev__renumber(sim);
}

static void ev__fifo_grow(sim_ctx *sim) {
  sim_grow((void **)&sim->fifo, &sim->fifo_cap, sim->fifo_n + 1, sizeof *sim->fifo);
}

EV__HOT ev_id ev__schedule(sim_ctx *sim, simtime_ps at, ev_fn fn, void *obj, uint64_t arg,
                           bool beside) {
  assert(fn != NULL);
  if (at < sim->now) at = SIM_TIME_MAX; /* a sum that wrapped: past the horizon */
  uint32_t s = ev__slot_alloc(sim);
  ev__slot *slot = &sim->slots[s];
  slot->fn = fn;
  slot->obj = obj;
  slot->arg = arg;
  slot->beside = beside;
  if (sim->seq >= EV_SEQ_LIMIT) ev__seq_wrap(sim);
  ev__key x = ((ev__key)at << 64) | ((ev__key)sim->seq++ << EV_SLOT_BITS) | s;
  if (at == sim->now) { /* after every key pending at now: the same-instant FIFO */
    if (sim->fifo_n == sim->fifo_cap) ev__fifo_grow(sim);
    sim->fifo[sim->fifo_n++] = x;
    sim->pending++;
  } else if (sim->top_pending && ev__q_near(&sim->q, at)) {
    sim->top_pending = false;
    ev__q_replace_top(&sim->q, x);
  } else {
    sim->pending++;
    ev__q_insert(&sim->q, x);
  }
  return ((uint64_t)slot->gen << 32) | s;
}

inline __attribute__((always_inline)) ev_id ev_schedule(sim_ctx *sim, simtime_ps at, ev_fn fn,
                                                        void *obj, uint64_t arg) {
  return ev__schedule(sim, at, fn, obj, arg, false);
}

inline __attribute__((always_inline)) ev_id ev_schedule_beside(sim_ctx *sim, simtime_ps at,
                                                               ev_fn fn, void *obj, uint64_t arg) {
  return ev__schedule(sim, at, fn, obj, arg, true);
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

bool sim_past_horizon(const sim_ctx *sim, simtime_ps *due) {
  if (due) *due = sim->horizon_due;
  return sim->past_horizon;
}

int sim_horizon_fail(const sim_ctx *sim, sim_error *err) {
  char due[80], at[64], hz[64], hd[64];
  if (sim->horizon_due == SIM_TIME_MAX)
    snprintf(due, sizeof due, "past 2^64 ps (a sum that saturated)");
  else
    snprintf(due, sizeof due, "at %s",
             sim_fmt_seconds(at, sizeof at, sim_ps_to_s(sim->horizon_due)));
  return sim_fail(err, SIM_ERANGE,
                  "simulated time would pass the horizon of %s (2^62 ps, %s): an "
                  "event was due %s, with the clock at %s; the run stops without a figure. "
                  "Allowed: a scenario whose transfers, latencies and steps end before the "
                  "horizon (smaller sizes, faster links, shorter latencies or fewer steps)",
                  sim_fmt_seconds(hz, sizeof hz, sim_ps_to_s(SIM_HORIZON_PS)),
                  sim_fmt(hd, sizeof hd, sim_ps_to_s(SIM_HORIZON_PS), SIM_UNIT_DURATION), due,
                  sim_fmt_seconds(at, sizeof at, sim_ps_to_s(sim->now)));
}

simtime_ps sim_next_time(sim_ctx *sim) {
  if (sim->top_pending || ev__fifo_has(sim)) return sim->now;
  if (!ev__q_ready(&sim->q)) return SIM_TIME_MAX;
  return ev__time(sim->q.heap[0]);
}

simtime_ps sim_slice_end(sim_ctx *sim, simtime_ps ran_to, simtime_ps slice) {
  simtime_ps from = ran_to > sim->now ? ran_to : sim->now;
  if (!sim->co) {
    simtime_ps next = sim_next_time(sim);
    if (next != SIM_TIME_MAX && next > 0 && next - 1 > from) from = next - 1; /* (next 0: none) */
  }
  return sim_time_add(from, slice);
}

/* The top event is due at or past the horizon and not cancelled: the run
 * stops before it, for good (true). */
static inline bool ev__horizon(sim_ctx *sim, simtime_ps t) {
  if (t < SIM_HORIZON_PS || !sim->slots[ev__slot_of(sim->q.heap[0])].fn) return false;
  sim->past_horizon = true;
  sim->horizon_due = t;
  return true;
}

/* An event taken off its slot (the slot released): its handler and
 * arguments, fn NULL when it was cancelled. The FIFO's and the heap's runs
 * share it. */
typedef struct ev__taken {
  ev_fn fn;
  void *obj;
  uint64_t arg;
  bool beside;
} ev__taken;

EV__HOT ev__taken ev__take(sim_ctx *sim, uint32_t s) {
  const ev__slot *slot = &sim->slots[s];
  ev__taken e = {slot->fn, slot->obj, slot->arg, slot->beside};
  if (!e.fn) sim->cancelled--;
  ev__slot_release(sim, s);
  return e;
}

/* Is the next event the FIFO's head (due now, after the heap's keys at
 * now)? */
static inline bool ev__fifo_next(const sim_ctx *sim) {
  return ev__fifo_has(sim) && !(sim->q.n && ev__time(sim->q.heap[0]) == sim->now);
}

/* Run the FIFO's head event (due now): drop it if it was cancelled (false),
 * else run it (true). */
EV__HOT bool ev__run_fifo(sim_ctx *sim) {
  ev__key k = sim->fifo[sim->fifo_head++];
  if (sim->fifo_head == sim->fifo_n) sim->fifo_head = sim->fifo_n = 0;
  sim->pending--;
  ev__taken e = ev__take(sim, ev__slot_of(k));
  if (!e.fn) return false;
  if (!e.beside) sim->own_now = sim->now;
  e.fn(sim, e.obj, e.arg);
  sim->events++;
  return true;
}

/* Run the event at the top of the heap: drop it if it was cancelled (false),
 * else run it (true). */
EV__HOT bool ev__run_top(sim_ctx *sim) {
  ev__key top = sim->q.heap[0];
  ev__taken e = ev__take(sim, ev__slot_of(top));
  if (!e.fn) {
    sim->pending--;
    ev__q_pop(&sim->q);
    return false;
  }
  sim->now = ev__time(top);
  if (!e.beside) sim->own_now = sim->now;
  sim->top_pending = true;
  e.fn(sim, e.obj, e.arg);
  if (sim->top_pending) {
    sim->top_pending = false;
    sim->pending--;
    ev__q_pop(&sim->q);
  }
  sim->events++;
  return true;
}

/* ev_run with a co-engine: before this context's next event (or the end of
 * the run), the co-engine runs its events up to that time; it may stop
 * earlier at an event it scheduled here, so the top is looked at again. */
static uint64_t ev__run_co(sim_ctx *sim, simtime_ps until) {
  uint64_t start = sim->events;
  if (sim->co_stopped || sim->past_horizon) return 0;
  sim->stop = false;
  while (!sim->stop) {
    if (ev__fifo_next(sim)) { /* due now: the co-engine has reached now */
      if (sim->now > until) break;
      ev__run_fifo(sim);
      sim->co_reached = sim->now;
      continue;
    }
    bool have = ev__q_ready(&sim->q);
    if (have && !sim->slots[ev__slot_of(sim->q.heap[0])].fn) { /* cancelled: drop it */
      ev__run_top(sim);
      continue;
    }
    simtime_ps next = have ? ev__time(sim->q.heap[0]) : SIM_TIME_MAX;
    simtime_ps bound = next <= until ? next : (until == SIM_TIME_MAX ? SIM_TIME_MAX : until + 1);
    if (sim->co_reached < bound) {
      simtime_ps r = sim->co(sim->co_obj, bound);
      assert(r >= sim->co_reached && r <= bound);
      sim->co_reached = r;
      continue;
    }
    if (!have || next > until || ev__horizon(sim, next)) break;
    ev__run_top(sim);
    sim->co_reached = sim->now; /* it may have given the co-engine events from now on */
  }
  return sim->events - start;
}

void sim_set_run_bound(sim_ctx *sim, double wall_s) { sim->bound_s = wall_s > 0 ? wall_s : 0; }
double sim_run_bound(const sim_ctx *sim) { return sim->bound_s; }
bool sim_run_cut(const sim_ctx *sim) { return sim->cut; }

/* Under a bound (sim_set_run_bound), after an event: an interrupt noted, or
 * the bound's wall time passed (the clock read every EV_CLOCK_EVERY events,
 * a few ns an event). */
enum { EV_CLOCK_EVERY = 32 };
static bool ev__over_bound(const sim_ctx *sim, uint64_t ran, double t0) {
  if (interrupt_flag) return true;
  return ran % EV_CLOCK_EVERY == 0 && sim_wall_s() - t0 >= sim->bound_s;
}

uint64_t ev_run(sim_ctx *sim, simtime_ps until) {
  sim->cut = false;
  if (sim->co) return ev__run_co(sim, until);
  uint64_t start = sim->events;
  if (sim->past_horizon) return 0;
  sim->stop = false;
  bool bounded = sim->bound_s > 0;
  double t0 = bounded ? sim_wall_s() : 0;
  simtime_ps t;
  while (!sim->stop) {
    if (ev__fifo_next(sim)) {
      if (sim->now > until) break;
      ev__run_fifo(sim);
    } else {
      if (!ev__q_ready(&sim->q) || (t = ev__time(sim->q.heap[0])) > until || ev__horizon(sim, t))
        break;
      ev__run_top(sim);
    }
    if (bounded && ev__over_bound(sim, sim->events - start, t0)) {
      sim->cut = true; /* the next ev_run goes on from this event's successor */
      break;
    }
  }
  if (sim->pending == sim->cancelled) { /* ran dry: what ran beside it does not count */
    ev__fifo_spill(sim);                /* (cancelled keys at now) */
    sim->now = sim->own_now;
  }
  return sim->events - start;
}

bool ev_run_interruptible(sim_ctx *sim, simtime_ps until) {
  if (sim->co) {
    ev_run(sim, until);
    return sim->co_stopped;
  }
  double bound = sim->bound_s;
  sim->bound_s = SIM_RUN_BOUND_S; /* an interrupt is seen after the event it came in */
  bool stopped = false;
  for (;;) {
    if (interrupt_flag) {
      simtime_ps next = sim_next_time(sim);
      stopped = next != SIM_TIME_MAX && next <= until && !sim->past_horizon;
      break;
    }
    ev_run(sim, until);
    if (!sim->cut) break;
  }
  sim->bound_s = bound;
  return stopped;
}
