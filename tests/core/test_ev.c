/* Event engine: total order, determinism, cancellation, isolation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/ev_internal.h"

typedef struct trace {
  simtime_ps t[4096];
  uint64_t arg[4096];
  size_t n;
} trace;

static void record(sim_ctx *sim, void *obj, uint64_t arg) {
  trace *tr = obj;
  assert_true(tr->n < 4096);
  tr->t[tr->n] = sim_now(sim);
  tr->arg[tr->n++] = arg;
}

static void test_time_then_insertion_order(void **state) {
  (void)state;
  sim_ctx *sim = sim_create(1);
  static trace tr;
  tr.n = 0;
  /* Same time: run in insertion order; earlier times first. */
  ev_schedule(sim, 50, record, &tr, 0);
  ev_schedule(sim, 10, record, &tr, 1);
  ev_schedule(sim, 50, record, &tr, 2);
  ev_schedule(sim, 10, record, &tr, 3);
  ev_schedule(sim, 0, record, &tr, 4);
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 5);
  uint64_t want[] = {4, 1, 3, 0, 2};
  for (int i = 0; i < 5; i++) assert_int_equal(tr.arg[i], want[i]);
  assert_int_equal(sim_now(sim), 50);
  assert_int_equal(sim_events(sim), 5);
  assert_int_equal(sim_pending(sim), 0);
  sim_destroy(sim);
}

/* Handlers that schedule at "now" run after everything already queued at now. */
static void chain(sim_ctx *sim, void *obj, uint64_t arg) {
  record(sim, obj, arg);
  if (arg < 3) ev_schedule(sim, sim_now(sim), chain, obj, arg + 1);
}

static void test_schedule_at_now(void **state) {
  (void)state;
  sim_ctx *sim = sim_create(1);
  static trace tr;
  tr.n = 0;
  ev_schedule(sim, 7, chain, &tr, 0);
  ev_schedule(sim, 7, record, &tr, 100);
  ev_run(sim, SIM_TIME_MAX);
  uint64_t want[] = {0, 100, 1, 2, 3};
  assert_int_equal(tr.n, 5);
  for (int i = 0; i < 5; i++) assert_int_equal(tr.arg[i], want[i]);
  sim_destroy(sim);
}

static void test_cancel(void **state) {
  (void)state;
  sim_ctx *sim = sim_create(1);
  static trace tr;
  tr.n = 0;
  ev_id a = ev_schedule(sim, 5, record, &tr, 1);
  ev_id b = ev_schedule(sim, 6, record, &tr, 2);
  ev_schedule(sim, 1000000000, record, &tr, 3); /* far tier */
  ev_id d = ev_schedule(sim, 2000000000, record, &tr, 4);
  assert_true(ev_cancel(sim, a));
  assert_false(ev_cancel(sim, a));
  assert_true(ev_cancel(sim, d));
  assert_int_equal(sim_pending(sim), 2);
  ev_run(sim, SIM_TIME_MAX);
  assert_int_equal(tr.n, 2);
  assert_int_equal(tr.arg[0], 2);
  assert_int_equal(tr.arg[1], 3);
  assert_false(ev_cancel(sim, b)); /* already ran: stale handle */
  assert_false(ev_cancel(sim, 0));
  sim_destroy(sim);
}

static void test_run_until_and_stop(void **state) {
  (void)state;
  sim_ctx *sim = sim_create(1);
  static trace tr;
  tr.n = 0;
  for (uint64_t i = 0; i < 10; i++) ev_schedule(sim, i * 100, record, &tr, i);
  assert_int_equal(ev_run(sim, 450), 5);
  assert_int_equal(sim_pending(sim), 5);
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 5);
  assert_int_equal(tr.arg[9], 9);
  sim_destroy(sim);
}

/* Random workload: the engine must produce exactly the order of a reference
 * sort by (time, insertion index), across all tiers, with renumbering mixed in. */
typedef struct fuzz_state {
  sim_rng rng;
  uint64_t next_id;
  uint64_t *order;
  size_t n, cap;
  int mode;
} fuzz_state;

static void fuzz_handler(sim_ctx *sim, void *obj, uint64_t arg);

static simtime_ps fuzz_delay(fuzz_state *f) {
  switch (f->mode) {
  case 0: return (simtime_ps)sim_rng_exp(&f->rng, 1e6);
  case 1: return sim_rng_below(&f->rng, 3);                        /* many ties */
  case 2: return sim_rng_below(&f->rng, 2) ? 1 : 1000000000000ULL; /* bimodal */
  default: return (simtime_ps)1 << sim_rng_below(&f->rng, 50);     /* wide span */
  }
}

static void fuzz_handler(sim_ctx *sim, void *obj, uint64_t arg) {
  fuzz_state *f = obj;
  sim_grow((void **)&f->order, &f->cap, f->n + 1, sizeof *f->order);
  f->order[f->n++] = arg;
  if (f->next_id < 20000) {
    int k = (int)sim_rng_below(&f->rng, 3); /* 0..2 children */
    for (int i = 0; i < k; i++) ev_schedule_in(sim, fuzz_delay(f), fuzz_handler, f, f->next_id++);
  }
}

typedef struct ref_ev {
  simtime_ps t;
  uint64_t id;
} ref_ev;

static void run_mode(int mode, bool renumber, uint64_t *digest, size_t *count) {
  sim_ctx *sim = sim_create(42);
  fuzz_state f = {0};
  f.mode = mode;
  sim_rng_init_u64(&f.rng, 42, (uint64_t)mode);
  for (int i = 0; i < 500; i++) ev_schedule(sim, fuzz_delay(&f), fuzz_handler, &f, f.next_id++);
  ev_run(sim, 5000000);
  if (renumber) ev__debug_renumber(sim);
  ev_run(sim, SIM_TIME_MAX);
  /* Times are nondecreasing and every scheduled event ran exactly once. */
  assert_int_equal(f.n, f.next_id);
  uint64_t h = 0;
  for (size_t i = 0; i < f.n; i++) h = sim_hash_u64(h ^ f.order[i]);
  *digest = h;
  *count = f.n;
  sim_free(f.order);
  sim_destroy(sim);
}

static void monotone(sim_ctx *sim, void *obj, uint64_t arg) {
  simtime_ps *last = obj;
  (void)arg;
  assert_true(sim_now(sim) >= *last);
  *last = sim_now(sim);
}

static void test_order_matches_reference(void **state) {
  (void)state;
  /* Pre-scheduled random times (no handler-created events): the execution
   * order must be the stable sort of (time, insertion index). */
  for (int mode = 0; mode < 4; mode++) {
    sim_ctx *sim = sim_create(7);
    fuzz_state f = {0};
    f.mode = mode;
    sim_rng_init_u64(&f.rng, 7, (uint64_t)mode);
    enum { N = 3000 };
    static ref_ev ref[N];
    static trace tr;
    tr.n = 0;
    for (uint64_t i = 0; i < N; i++) {
      ref[i].t = fuzz_delay(&f);
      ref[i].id = i;
    }
    for (uint64_t i = 0; i < N; i++) ev_schedule(sim, ref[i].t, record, &tr, i);
    /* reference: insertion sort by time keeps ties in insertion order */
    for (size_t i = 1; i < N; i++) {
      ref_ev x = ref[i];
      size_t j = i;
      while (j > 0 && ref[j - 1].t > x.t) {
        ref[j] = ref[j - 1];
        j--;
      }
      ref[j] = x;
    }
    ev_run(sim, SIM_TIME_MAX);
    assert_int_equal(tr.n, N);
    for (size_t i = 0; i < N; i++) {
      assert_int_equal(tr.arg[i], ref[i].id);
      assert_int_equal(tr.t[i], ref[i].t);
    }
    sim_destroy(sim);
  }
  simtime_ps last = 0;
  sim_ctx *sim = sim_create(3);
  for (int i = 0; i < 1000; i++)
    ev_schedule(sim, (simtime_ps)(i * 7919 % 1000) * 1000, monotone, &last, 0);
  ev_run(sim, SIM_TIME_MAX);
  sim_destroy(sim);
}

static void test_determinism_and_renumber(void **state) {
  (void)state;
  for (int mode = 0; mode < 4; mode++) {
    uint64_t d1, d2;
    size_t n1, n2;
    run_mode(mode, false, &d1, &n1);
    run_mode(mode, true, &d2, &n2); /* renumbering keeps the order */
    assert_int_equal(n1, n2);
    assert_int_equal(d1, d2);
    assert_true(n1 >= 500);
  }
}

/* Two simulations interleaved in one process do not disturb each other. */
static void test_two_simulations_in_one_process(void **state) {
  (void)state;
  uint64_t alone, alone_n;
  {
    uint64_t d;
    size_t n;
    run_mode(0, false, &d, &n);
    alone = d;
    alone_n = n;
  }
  sim_ctx *a = sim_create(42), *b = sim_create(42);
  fuzz_state fa = {0}, fb = {0};
  sim_rng_init_u64(&fa.rng, 42, 0);
  sim_rng_init_u64(&fb.rng, 42, 0);
  for (int i = 0; i < 500; i++) {
    ev_schedule(a, fuzz_delay(&fa), fuzz_handler, &fa, fa.next_id++);
    ev_schedule(b, fuzz_delay(&fb), fuzz_handler, &fb, fb.next_id++);
  }
  /* Interleave: step each a little at a time. */
  for (simtime_ps t = 0; t < 100000000; t += 1000000) {
    ev_run(a, t);
    ev_run(b, t);
  }
  ev_run(a, 5000000);
  ev_run(b, SIM_TIME_MAX);
  ev_run(a, SIM_TIME_MAX);
  uint64_t ha = 0, hb = 0;
  for (size_t i = 0; i < fa.n; i++) ha = sim_hash_u64(ha ^ fa.order[i]);
  for (size_t i = 0; i < fb.n; i++) hb = sim_hash_u64(hb ^ fb.order[i]);
  assert_int_equal(fa.n, alone_n);
  assert_int_equal(ha, alone);
  assert_int_equal(hb, alone);
  sim_free(fa.order);
  sim_free(fb.order);
  sim_destroy(a);
  sim_destroy(b);
}

/* The horizon of simulated time (issue 27, defect 2): an event due at or
 * past 2^62 ps never runs, a cancelled one there is dropped as usual, a
 * sum that wrapped is taken as due past it, and the run stays stopped. */
static void test_horizon(void **state) {
  (void)state;
  sim_ctx *sim = sim_create(1);
  static trace tr;
  tr.n = 0;
  simtime_ps due;
  ev_schedule(sim, 10, record, &tr, 0);
  ev_id far = ev_schedule(sim, SIM_HORIZON_PS + 5, record, &tr, 1);
  ev_cancel(sim, far); /* cancelled: dropped, not a horizon */
  ev_schedule(sim, SIM_HORIZON_PS - 1, record, &tr, 2);
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 2);
  assert_false(sim_past_horizon(sim, NULL));
  assert_int_equal(sim_now(sim), SIM_HORIZON_PS - 1);
  ev_schedule(sim, SIM_HORIZON_PS, record, &tr, 3);
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 0);
  assert_true(sim_past_horizon(sim, &due));
  assert_int_equal(due, SIM_HORIZON_PS);
  assert_int_equal(tr.n, 2);
  assert_int_equal(sim_now(sim), SIM_HORIZON_PS - 1); /* the clock stays below it */
  assert_int_equal(sim_pending(sim), 1);
  ev_schedule(sim, SIM_HORIZON_PS - 1, record, &tr, 4);
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 0); /* for good */
  sim_error err = {0};
  assert_int_equal(sim_horizon_fail(sim, &err), SIM_ERANGE);
  assert_non_null(strstr(err.msg, "horizon of 4,611,686 s (2^62 ps, 53.38 days)"));
  sim_destroy(sim);
  /* a delay that wraps the sum: due past the horizon, not in the past */
  sim = sim_create(1);
  tr.n = 0;
  ev_schedule(sim, 1000, record, &tr, 0);
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 1);
  ev_schedule_in(sim, SIM_TIME_MAX - 10, record, &tr, 1);
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 0);
  assert_true(sim_past_horizon(sim, &due));
  assert_int_equal(due, SIM_TIME_MAX);
  assert_int_equal(sim_time_add(SIM_TIME_MAX - 1, 2), SIM_TIME_MAX);
  assert_int_equal(sim_time_add(3, 4), 7);
  sim_destroy(sim);
}

/* A run in slices jumps over an idle stretch (issue 27, defect 5): the
 * next slice ends `slice` after the instant before the next event. */
static void test_slice_end(void **state) {
  (void)state;
  static trace tr;
  tr.n = 0;
  sim_ctx *sim = sim_create(1);
  assert_int_equal(sim_slice_end(sim, 0, 100), 100); /* nothing pending */
  ev_schedule(sim, 36000 * SIM_PS_PER_S, record, &tr, 0);
  assert_int_equal(sim_next_time(sim), 36000 * SIM_PS_PER_S);
  assert_int_equal(sim_slice_end(sim, 50, 100), 36000 * SIM_PS_PER_S - 1 + 100);
  assert_int_equal(sim_slice_end(sim, SIM_TIME_MAX - 1, 100), SIM_TIME_MAX);
  /* 10 h of idle time in slices of 1 us: two slices, not 3.6e10 */
  simtime_ps to = 0;
  int slices = 0;
  while (sim_pending(sim) > 0 && slices < 10) {
    to = sim_slice_end(sim, to, SIM_PS_PER_US);
    ev_run(sim, to);
    slices++;
  }
  assert_int_equal(slices, 1);
  assert_int_equal(tr.n, 1);
  /* an event due at 0 (most runs start with one): a slice from 0, not to the
   * end of time (next - 1 wrapped: the whole run was one slice) */
  ev_schedule(sim, sim_now(sim), record, &tr, 1);
  assert_int_equal(sim_slice_end(sim, sim_now(sim), 100), sim_now(sim) + 100);
  sim_destroy(sim);
  sim = sim_create(1);
  ev_schedule(sim, 0, record, &tr, 2);
  assert_int_equal(sim_slice_end(sim, 0, 100), 100);
  sim_destroy(sim);
}

/* The run's work bound (sim_set_run_bound): a stop is seen after the event
 * it came in, however long the slice; the clock bound cuts a slice too;
 * events run in the same order whatever the cuts. */
typedef struct bounded {
  trace tr;
  size_t note_at; /* the event whose handler notes an interrupt (0: none) */
  double spin_s;  /* wall time each event takes */
} bounded;

static void bounded_event(sim_ctx *sim, void *obj, uint64_t arg) {
  bounded *b = obj;
  record(sim, &b->tr, arg);
  if (b->tr.n == b->note_at) sim_interrupt_note();
  for (double t0 = sim_wall_s(); sim_wall_s() - t0 < b->spin_s;) {
  }
}

static sim_ctx *bounded_sim(bounded *b, size_t n) {
  sim_ctx *sim = sim_create(1);
  b->tr.n = 0;
  for (size_t i = 0; i < n; i++) ev_schedule(sim, i / 3, bounded_event, b, i);
  return sim;
}

static void test_run_bound(void **state) {
  (void)state;
  static bounded b;
  /* no bound: an interrupt does not end ev_run (callers that need the end) */
  b = (bounded){.note_at = 10};
  sim_ctx *sim = bounded_sim(&b, 1000);
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 1000);
  assert_false(sim_run_cut(sim));
  sim_interrupt_clear();
  sim_destroy(sim);
  /* bound: it ends after the 10th event, mid-timestamp; the rest follows */
  sim = bounded_sim(&b, 1000);
  sim_set_run_bound(sim, 100);
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 10);
  assert_true(sim_run_cut(sim));
  assert_int_equal(sim_pending(sim), 990);
  sim_interrupt_clear();
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 990);
  assert_false(sim_run_cut(sim));
  for (size_t i = 0; i < 1000; i++) assert_int_equal(b.tr.arg[i], i);
  sim_destroy(sim);
  /* the clock: 1 ms events under a 1 us bound, at most 32 events a call */
  b = (bounded){.spin_s = 1e-3};
  sim = bounded_sim(&b, 100);
  sim_set_run_bound(sim, 1e-6);
  int calls = 0;
  while (sim_pending(sim) > 0) {
    uint64_t ran = ev_run(sim, SIM_TIME_MAX);
    assert_true(ran >= 1 && ran <= 32);
    calls++;
  }
  assert_int_equal(calls, 4);
  for (size_t i = 0; i < 100; i++) assert_int_equal(b.tr.arg[i], i);
  sim_set_run_bound(sim, 0);
  assert_true(sim_run_bound(sim) == 0);
  sim_destroy(sim);
  /* ev_run_interruptible: stopped after the event, events left */
  b = (bounded){.note_at = 7};
  sim = bounded_sim(&b, 100);
  assert_true(ev_run_interruptible(sim, SIM_TIME_MAX));
  assert_int_equal(b.tr.n, 7);
  sim_interrupt_clear();
  assert_false(ev_run_interruptible(sim, SIM_TIME_MAX));
  assert_int_equal(b.tr.n, 100);
  sim_destroy(sim);
}

/* An event beside the run (ev_schedule_beside) runs in order at its time,
 * but once the queue runs dry the clock is the last other event's, as a
 * co-engine's events never move it; a cancelled event left pending counts
 * as none. */
static void beside_then_own(sim_ctx *sim, void *obj, uint64_t arg) {
  record(sim, obj, arg);
  if (arg == 1) ev_schedule(sim, 30, record, obj, 2); /* an own event from one beside */
}

static void test_beside(void **state) {
  (void)state;
  static trace tr;
  sim_ctx *sim = sim_create(1);
  assert_true(ev_cancel(sim, ev_schedule(sim, 90, record, &tr, 4)));
  tr.n = 0;
  ev_schedule(sim, 10, record, &tr, 0);
  ev_schedule_beside(sim, 20, beside_then_own, &tr, 1);
  ev_schedule_beside(sim, 40, record, &tr, 3);
  assert_int_equal(ev_run(sim, 35), 3);
  assert_int_equal(sim_now(sim), 30); /* not dry: the clock where the run stopped */
  assert_int_equal(ev_run(sim, SIM_TIME_MAX), 1);
  assert_int_equal(tr.n, 4);
  assert_int_equal(tr.t[3], 40); /* it ran at its time */
  assert_int_equal(sim_now(sim), 30);
  ev_schedule_beside(sim, 50, record, &tr, 5);
  ev_run(sim, SIM_TIME_MAX);
  assert_int_equal(sim_now(sim), 30);
  sim_destroy(sim);
  /* nothing but events beside it: the clock stays where the run began */
  sim = sim_create(1);
  ev_schedule_beside(sim, 7, record, &tr, 6);
  ev_run(sim, SIM_TIME_MAX);
  assert_int_equal(sim_now(sim), 0);
  sim_destroy(sim);
}

/* Events scheduled at the current instant from handlers (the same-instant
 * FIFO), mixed with later ones, cancellations, runs that stop in the middle
 * of an instant and renumbering: every event runs once, in (time, insertion)
 * order, so the (time, insertion index) pairs that run strictly increase. */
typedef struct inst_state {
  sim_rng rng;
  uint64_t next_id, ran, cancelled;
  simtime_ps last_t;
  uint64_t last_id;
  ev_id ids[64];
} inst_state;

static void inst_handler(sim_ctx *sim, void *obj, uint64_t arg) {
  inst_state *f = obj;
  assert_true(sim_now(sim) > f->last_t || (sim_now(sim) == f->last_t && arg > f->last_id) ||
              f->ran == 0);
  f->last_t = sim_now(sim);
  f->last_id = arg;
  f->ran++;
  if (sim_rng_below(&f->rng, 500) == 0) ev_stop(sim); /* in the middle of an instant */
  if (f->next_id >= 40000) return;
  int k = (int)sim_rng_below(&f->rng, 4); /* 0..3 children, most at now */
  for (int i = 0; i < k; i++) {
    simtime_ps d = sim_rng_below(&f->rng, 4) ? 0 : sim_rng_below(&f->rng, 3);
    uint64_t id = f->next_id++;
    ev_id e = sim_rng_below(&f->rng, 2)
                  ? ev_schedule_in(sim, d, inst_handler, f, id)
                  : ev_schedule_beside(sim, sim_now(sim) + d, inst_handler, f, id);
    uint32_t j = (uint32_t)sim_rng_below(&f->rng, 64);
    if (f->ids[j] && sim_rng_below(&f->rng, 8) == 0 && ev_cancel(sim, f->ids[j])) f->cancelled++;
    f->ids[j] = e;
  }
}

static void test_same_instant_order(void **state) {
  (void)state;
  for (int renumber = 0; renumber < 2; renumber++) {
    sim_ctx *sim = sim_create(5);
    inst_state f = {0};
    sim_rng_init_u64(&f.rng, 5, (uint64_t)renumber);
    for (int i = 0; i < 200; i++)
      ev_schedule(sim, sim_rng_below(&f.rng, 3), inst_handler, &f, f.next_id++);
    ev_schedule(sim, 0, inst_handler, &f, f.next_id++); /* at the clock's time before any run */
    int rounds = 0;
    while (sim_pending(sim) > 0) {
      ev_run(sim, sim_now(sim) + 1); /* stops between instants, or at ev_stop */
      if (renumber && rounds++ % 3 == 0) ev__debug_renumber(sim);
    }
    assert_int_equal(f.ran + f.cancelled, f.next_id);
    assert_true(f.ran > 10000);
    sim_destroy(sim);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_horizon),
      cmocka_unit_test(test_beside),
      cmocka_unit_test(test_slice_end),
      cmocka_unit_test(test_run_bound),
      cmocka_unit_test(test_time_then_insertion_order),
      cmocka_unit_test(test_schedule_at_now),
      cmocka_unit_test(test_same_instant_order),
      cmocka_unit_test(test_cancel),
      cmocka_unit_test(test_run_until_and_stop),
      cmocka_unit_test(test_order_matches_reference),
      cmocka_unit_test(test_determinism_and_renumber),
      cmocka_unit_test(test_two_simulations_in_one_process),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
