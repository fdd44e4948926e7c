/* NIC classes (tel__nic_classes, tap_nic.c): the NIC log's replay feeds
 * once per class of NICs its windows cover alike, and the rows, the watched
 * NICs and the totals are byte for byte what feeding NIC by NIC gives
 * (tel__niclog_replay_each). Logs built by hand: a symmetric phase (one
 * class), head NICs with an extra transfer every 8th NIC, idle NICs, 8
 * interleaved classes, a seeded irregular phase (a class per NIC: the replay
 * goes NIC by NIC), repetitions reported one by one and overlapping phases;
 * the grouping must not merge NICs whose windows differ, nor split a
 * symmetric phase. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry/tap_nic.h"

enum { NICS = 256 };

/* One phase of n transfers nic src[i] -> dst[i] of bytes[i], starting at
 * `start`, `reps` repetitions of `period`, reported at once (each
 * delivered at its bytes at 50 GB/s) or one repetition at a time. */
static void phase(tel__niclog *l, simtime_ps start, uint64_t reps, simtime_ps period,
                  const uint32_t *src, const uint32_t *dst, const uint64_t *bytes, size_t n,
                  bool one_by_one, be_xfer *x, simtime_ps *deliv) {
  for (size_t i = 0; i < n; i++) x[i] = (be_xfer){.bytes = bytes[i]};
  size_t idx = l->nph;
  uint32_t *nics = tel__niclog_phase(l, start, reps, x, n, NULL);
  for (size_t i = 0; i < n; i++) {
    nics[2 * i] = src[i];
    nics[2 * i + 1] = dst[i];
    deliv[i] = (simtime_ps)(bytes[i] * 20) + 1000000; /* 50 GB/s, 1 us latency */
  }
  if (one_by_one)
    for (uint64_t r = 0; r < reps; r++)
      tel__niclog_report(l, idx, 0, n, start + r * period, 0, 1, deliv, NULL);
  else tel__niclog_report(l, idx, 0, n, start, period, reps, deliv, NULL);
  tel__niclog_end(l, idx, start + reps * period);
}

static tel *replayed(const tel__niclog *l, bool by_class, simtime_ps end, uint32_t *ncls) {
  static const uint32_t watch[] = {0, 1, 8, 9, 100, 255};
  tel_config c = {.interval = 700000, /* 0.7 us: windows straddle rows */
                  .gpus = NICS,
                  .nics = NICS,
                  .nic_bps = 400000000000ull,
                  .watch_nics = watch,
                  .nwatch_nics = 6};
  tel *t;
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  if (by_class) tel__niclog_replay(l, t);
  else tel__niclog_replay_each(l, t);
  *ncls = t->nic_cls ? t->nnic_cls : NICS;
  tel_finish(t, end);
  return t;
}

static void same_rows(const tel *a, const tel *b) {
  assert_int_equal(tel_rows(a), tel_rows(b));
  for (size_t i = 0; i < tel_rows(a); i++) {
    assert_memory_equal(tel_nic_row_at(a, i), tel_nic_row_at(b, i), sizeof(tel_nic_row));
    for (uint32_t w = 0; w < tel_watch_count(a); w++)
      assert_memory_equal(tel_watch_row_at(a, i, w), tel_watch_row_at(b, i, w),
                          sizeof(tel_watch_row));
  }
  tel_totals x, y;
  tel_totals_get(a, &x);
  tel_totals_get(b, &y);
  assert_memory_equal(&x, &y, sizeof x);
}

/* Build a log with `build`, replay it both ways, compare; the classes. */
static uint32_t compare(void (*build)(tel__niclog *, be_xfer *, simtime_ps *), simtime_ps end) {
  tel__niclog l;
  tel__niclog_init(&l, NICS);
  be_xfer *x = calloc(4 * NICS, sizeof *x);
  simtime_ps *deliv = calloc(4 * NICS, sizeof *deliv);
  build(&l, x, deliv);
  uint32_t k0, k1;
  tel *a = replayed(&l, true, end, &k1), *b = replayed(&l, false, end, &k0);
  assert_int_equal(k0, NICS);
  same_rows(a, b);
  tel_destroy(a);
  tel_destroy(b);
  tel__niclog_free(&l);
  free(x);
  free(deliv);
  return k1;
}

/* Every NIC sends 1 MB to the next: one class. */
static void build_ring(tel__niclog *l, be_xfer *x, simtime_ps *deliv) {
  uint32_t src[NICS], dst[NICS];
  uint64_t bytes[NICS];
  for (uint32_t i = 0; i < NICS; i++) src[i] = i, dst[i] = (i + 1) % NICS, bytes[i] = 1000000;
  phase(l, 0, 3, 30000000, src, dst, bytes, NICS, false, x, deliv);
}

/* The ring plus, every 8th NIC (a head), 256 KB more to the next head,
 * overlapping the ring's second repetition, reported one by one; NICs
 * 192.. idle in the second phase. */
static void build_heads(tel__niclog *l, be_xfer *x, simtime_ps *deliv) {
  build_ring(l, x, deliv);
  uint32_t src[NICS / 8], dst[NICS / 8];
  uint64_t bytes[NICS / 8];
  size_t n = 0;
  for (uint32_t i = 0; i < 192; i += 8) src[n] = i, dst[n] = (i + 8) % 192, bytes[n++] = 262144;
  phase(l, 35000000, 2, 9000000, src, dst, bytes, n, true, x + NICS, deliv + NICS);
}

/* Seeded irregular bytes: every NIC its own class. */
static void build_irregular(tel__niclog *l, be_xfer *x, simtime_ps *deliv) {
  uint32_t src[NICS], dst[NICS];
  uint64_t bytes[NICS], s = 12345;
  for (uint32_t i = 0; i < NICS; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    src[i] = i, dst[i] = (uint32_t)((i * 37 + 11) % NICS), bytes[i] = 1000 + (s >> 44);
  }
  phase(l, 1000000, 1, 60000000, src, dst, bytes, NICS, false, x, deliv);
}

/* Every NIC sends to the next, its bytes by its index mod 8: 8 classes of
 * 32 NICs none of which neighbours another of its class. */
static void build_eight(tel__niclog *l, be_xfer *x, simtime_ps *deliv) {
  uint32_t src[NICS], dst[NICS];
  uint64_t bytes[NICS];
  for (uint32_t i = 0; i < NICS; i++)
    src[i] = i, dst[i] = (i + 1) % NICS, bytes[i] = 1000000 + 1000 * (i % 8);
  phase(l, 0, 2, 30000000, src, dst, bytes, NICS, false, x, deliv);
}

static void test_ring_one_class(void **state) {
  (void)state;
  assert_int_equal(compare(build_ring, 100000000), 1);
}

static void test_heads(void **state) {
  (void)state;
  /* heads 0..184 (TX and RX), the rest of 0..191, and 192..255 (ring only):
   * NIC 0 is a head that sends to 8 and receives from 184 like every head */
  uint32_t k = compare(build_heads, 100000000);
  if (k != 2) fail_msg("%u classes, want 2 (heads, the others)", k);
}

static void test_eight(void **state) {
  (void)state;
  assert_int_equal(compare(build_eight, 100000000), 8);
}

static void test_irregular(void **state) {
  (void)state;
  /* nearly every NIC alone: classes would not pay, the replay goes NIC by NIC */
  assert_int_equal(compare(build_irregular, 100000000), NICS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ring_one_class),
      cmocka_unit_test(test_heads),
      cmocka_unit_test(test_eight),
      cmocka_unit_test(test_irregular),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
