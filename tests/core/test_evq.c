/* The generic event queue (fabsim/evq.h) against a sort: its pop order is
 * the keys' order, whatever the tiers, for both engines' key layouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "fabsim/core.h"

/* The sequential engine's layout: (time << 64) | tie, compared as integers. */
typedef unsigned __int128 k128;
#define EVQ_NAME q128
#define EVQ_KEY k128
#define EVQ_LESS(a, b) ((a) < (b))
#define EVQ_TIME(k) ((simtime_ps)((k) >> 64))
#include "fabsim/evq.h"

/* The parallel engine's layout: (time, tie) ordered, a payload not compared;
 * its sift (top-down), so that both sifts are checked. */
typedef struct kst {
  simtime_ps time;
  uint64_t tie;
  uint64_t slot;
} kst;
#define EVQ_NAME qst
#define EVQ_KEY kst
#define EVQ_LESS(a, b) ((a).time < (b).time || ((a).time == (b).time && (a).tie < (b).tie))
#define EVQ_TIME(k) ((k).time)
#define EVQ_SIFT_TOP_DOWN
#include "fabsim/evq.h"

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int cmp128(const void *a, const void *b) {
  k128 x = *(const k128 *)a, y = *(const k128 *)b;
  return x < y ? -1 : x > y;
}

static int cmpst(const void *a, const void *b) {
  const kst *x = a, *y = b;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  return x->tie < y->tie ? -1 : x->tie > y->tie;
}

/* Time distributions: few distinct times (ties everywhere), uniform, a span
 * of 2^50 ps (bucket rebuilds, overflow), bimodal. */
static simtime_ps draw_time(uint64_t *s, int dist) {
  uint64_t r = splitmix(s);
  switch (dist) {
  case 0: return r % 8;
  case 1: return r % 1000000;
  case 2: return r >> 14;
  default: return (r & 1) ? r % 100 : 1000000000 + r % 100;
  }
}

/* All keys in at once, in random order, then all out: the sort of the keys.
 * Ties: the tie word is the key beyond the time, inserted out of order. */
static void test_sorts_random_keys(void **state) {
  (void)state;
  enum { N = 50000 };
  k128 *want = malloc(N * sizeof *want);
  for (int dist = 0; dist < 4; dist++) {
    uint64_t s = 42 + (uint64_t)dist;
    q128 q = {0};
    for (uint64_t i = 0; i < N; i++) {
      uint64_t tie = splitmix(&s) << 20 | i; /* unique, random order */
      want[i] = ((k128)draw_time(&s, dist) << 64) | tie;
      q128_insert(&q, want[i]);
    }
    qsort(want, N, sizeof *want, cmp128);
    for (size_t i = 0; i < N; i++) {
      assert_true(q128_refill(&q));
      assert_true(q.heap[0] == want[i]);
      q128_pop(&q);
    }
    assert_false(q128_refill(&q));
    q128_destroy(&q);
  }
  free(want);
}

/* A simulation's pattern: pop the minimum, insert keys at or after it, and
 * sometimes replace the top (the engines' running-event shortcut); checked
 * against a linear scan for the minimum. Struct keys: (time, tie) order,
 * slot carried along. */
static void test_interleaved_against_scan(void **state) {
  (void)state;
  enum { OPS = 60000, CAP = 4096 };
  kst *ref = malloc(CAP * sizeof *ref);
  for (int dist = 0; dist < 4; dist++) {
    uint64_t s = 7 + (uint64_t)dist, tie = 0;
    size_t n = 0;
    qst q = {0};
    simtime_ps now = 0;
    for (int i = 0; i < 1000; i++) {
      kst k = {draw_time(&s, dist), splitmix(&s) >> 2 | 1ULL << 62, (uint64_t)i}; /* above tie++ */
      ref[n++] = k;
      qst_insert(&q, k);
    }
    for (int op = 0; op < OPS; op++) {
      size_t m = 0;
      for (size_t j = 1; j < n; j++)
        if (cmpst(&ref[j], &ref[m]) < 0) m = j;
      if (n == 0) {
        assert_false(qst_refill(&q));
        break;
      }
      assert_true(qst_refill(&q));
      assert_int_equal(q.heap[0].time, ref[m].time);
      assert_int_equal(q.heap[0].tie, ref[m].tie);
      assert_int_equal(q.heap[0].slot, ref[m].slot);
      assert_true(q.heap[0].time >= now);
      now = q.heap[0].time;
      ref[m] = ref[--n];
      int adds = (int)(splitmix(&s) % 3); /* 0, 1 or 2 new keys: the size wanders */
      kst k = {now + draw_time(&s, dist) % 5000, tie++, (uint64_t)op};
      if (adds > 0 && qst_near(&q, k.time)) {
        qst_replace_top(&q, k);
      } else {
        qst_pop(&q);
        if (adds > 0) qst_insert(&q, k);
      }
      if (adds > 0) ref[n++] = k;
      if (adds > 1 && n < CAP) {
        kst k2 = {now + draw_time(&s, dist) % 100, tie++, (uint64_t)op + OPS};
        ref[n++] = k2;
        qst_insert(&q, k2);
      }
    }
    qst_destroy(&q);
  }
  free(ref);
}

/* Equal times leave in tie order, however they were inserted (the parallel
 * engine's rule: sending LP, then its count, packed in tie). */
static void test_equal_times_by_tie(void **state) {
  (void)state;
  qst q = {0};
  uint64_t ties[] = {(3ULL << 36) | 0, (1ULL << 36) | 5, (1ULL << 36) | 2, (2ULL << 36) | 9, 7};
  for (int i = 0; i < 5; i++) qst_insert(&q, (kst){100, ties[i], (uint64_t)i});
  qst_insert(&q, (kst){99, UINT64_MAX, 5});
  uint64_t want_slot[] = {5, 4, 2, 1, 3, 0};
  for (int i = 0; i < 6; i++) {
    assert_true(qst_refill(&q));
    assert_int_equal(q.heap[0].slot, want_slot[i]);
    qst_pop(&q);
  }
  assert_false(qst_refill(&q));
  qst_destroy(&q);
}

/* Growth: a million keys in the heap tier itself (two keys 2^40 ps apart
 * make one bucket 2^43 wide; after its refill every key below that time goes
 * to the heap), heap + 1 on a 64-byte line, and _take_all handing back every
 * key once, which re-inserted leave in order again. */
static void test_growth_alignment_take_all(void **state) {
  (void)state;
  enum { N = 1 << 20 };
  q128 q = {0};
  uint64_t s = 99;
  q128_insert(&q, (k128)0);                    /* overflow */
  q128_insert(&q, ((k128)(1ULL << 40)) << 64); /* span 2^40: wide buckets */
  assert_true(q128_refill(&q));                /* bucket 0 is now the heap tier */
  for (uint64_t i = 1; i <= N; i++) {
    k128 k = ((k128)(splitmix(&s) % 1000) << 64) | i;
    assert_true(q128_near(&q, (simtime_ps)(k >> 64)));
    q128_insert(&q, k);
  }
  assert_true(q.n >= N);
  assert_int_equal((uintptr_t)(q.heap + 1) % 64, 0);
  q128_vec all = {0};
  q128_take_all(&q, &all);
  assert_int_equal(all.n, N + 2);
  assert_int_equal(q.n, 0);
  assert_false(q128_refill(&q));
  qsort(all.k, all.n, sizeof *all.k, cmp128);
  assert_true(all.k[0] == 0);
  for (size_t i = 1; i < all.n; i++) assert_true(all.k[i - 1] < all.k[i]);
  for (size_t i = 0; i < all.n; i++) q128_insert(&q, all.k[i]); /* back in: same order out */
  for (size_t i = 0; i < all.n; i++) {
    assert_true(q128_refill(&q));
    assert_true(q.heap[0] == all.k[i]);
    q128_pop(&q);
  }
  sim_free(all.k);
  q128_destroy(&q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sorts_random_keys),
      cmocka_unit_test(test_interleaved_against_scan),
      cmocka_unit_test(test_equal_times_by_tie),
      cmocka_unit_test(test_growth_alignment_take_all),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
