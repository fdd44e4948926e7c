/* Parallel engine, sequential mode (no MPI needed): the key order (time,
 * sending LP, sender sequence), zero-delay self events, run in pieces,
 * configuration errors, PHOLD determinism, and windows that do not depend
 * on the bounds a run is cut at. The multi-rank identity is
 * tests/pdes/mpi_identity.c under mpirun. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pdes/phold.h"

typedef struct trace {
  simtime_ps t[256];
  uint64_t tag[256];
  uint32_t lp[256];
  size_t n;
} trace;

static void record(pdes *p, const pdes_event *ev, void *model) {
  trace *tr = model;
  assert_true(tr->n < 256);
  assert_int_equal(pdes_now(p), ev->time);
  tr->t[tr->n] = ev->time;
  tr->lp[tr->n] = ev->dst;
  tr->tag[tr->n++] = ev->payload[0];
}

/* A zero-delay self event at the same time, and a chain. */
static void chain(pdes *p, const pdes_event *ev, void *model) {
  record(p, ev, model);
  if (ev->payload[1] > 0) {
    uint64_t pl[PDES_PAYLOAD_WORDS] = {ev->payload[0] + 1, ev->payload[1] - 1, 0, 0};
    pdes_send(p, ev->dst, ev->dst, ev->time, 1, pl);
  }
}

static pdes *make(trace *tr, uint32_t nlps) {
  pdes_fn h[2] = {record, chain};
  pdes_cfg cfg = {.nlps = nlps, .lookahead_ps = 10, .handlers = h, .nhandlers = 2, .model = tr};
  pdes *p = NULL;
  sim_error err = {0};
  assert_int_equal(pdes_create(&p, &cfg, &err), SIM_OK);
  return p;
}

static void test_key_order(void **state) {
  (void)state;
  static trace tr;
  memset(&tr, 0, sizeof tr);
  pdes *p = make(&tr, 4);
  uint64_t pl[PDES_PAYLOAD_WORDS] = {0};
  /* Sent in this order; at time 50 the sending LP decides, then its sequence. */
  pl[0] = 1;
  pdes_send(p, 3, 0, 50, 0, pl);
  pl[0] = 2;
  pdes_send(p, 1, 2, 50, 0, pl);
  pl[0] = 3;
  pdes_send(p, 1, 0, 50, 0, pl);
  pl[0] = 4;
  pdes_send(p, 2, 1, 20, 0, pl);
  pl[0] = 5;
  pdes_send(p, 0, 3, 50, 0, pl);
  assert_int_equal(pdes_run(p, SIM_TIME_MAX), 5);
  uint64_t want[] = {4, 5, 2, 3, 1};
  for (size_t i = 0; i < 5; i++) assert_int_equal(tr.tag[i], want[i]);
  pdes_destroy(p);
}

/* pdes_cfg.order: at one time, a kind of lower order runs first, whatever
 * the sending LP; within one order, (sending LP, its count) as above. */
static void test_kind_order(void **state) {
  (void)state;
  static trace tr;
  memset(&tr, 0, sizeof tr);
  pdes_fn h[3] = {record, record, record};
  const uint8_t order[3] = {2, 0, 1};
  pdes_cfg cfg = {
      .nlps = 4, .lookahead_ps = 10, .handlers = h, .nhandlers = 3, .order = order, .model = &tr};
  pdes *p = NULL;
  sim_error err = {0};
  assert_int_equal(pdes_create(&p, &cfg, &err), SIM_OK);
  uint64_t pl[PDES_PAYLOAD_WORDS] = {0};
  pl[0] = 1;
  pdes_send(p, 0, 1, 50, 0, pl); /* order 2 */
  pl[0] = 2;
  pdes_send(p, 3, 1, 50, 2, pl); /* order 1 */
  pl[0] = 3;
  pdes_send(p, 2, 1, 50, 1, pl); /* order 0 */
  pl[0] = 4;
  pdes_send(p, 1, 1, 50, 2, pl); /* order 1, a lower sending LP */
  pl[0] = 5;
  pdes_send(p, 3, 1, 40, 0, pl); /* earlier: time first */
  assert_int_equal(pdes_run(p, SIM_TIME_MAX), 5);
  uint64_t want[] = {5, 3, 4, 2, 1};
  for (size_t i = 0; i < 5; i++) assert_int_equal(tr.tag[i], want[i]);
  pdes_destroy(p);
}

/* The same rule over enough keys to fill the queue's heap, buckets and
 * overflow: 240 events at few distinct times (ties everywhere) sent in a
 * scrambled order leave sorted by (time, sending LP, that LP's count). */
typedef struct sent {
  simtime_ps t;
  uint64_t tag; /* src << 16 | the src's count */
} sent;

static int sent_cmp(const void *a, const void *b) {
  const sent *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->tag < y->tag ? -1 : x->tag > y->tag;
}

static void test_key_order_many(void **state) {
  (void)state;
  enum { N = 240, LPS = 16 };
  static trace tr;
  memset(&tr, 0, sizeof tr);
  pdes *p = make(&tr, LPS);
  sent want[N];
  uint64_t count[LPS] = {0}, x = 12345;
  static const simtime_ps times[] = {0, 1, 3, 1000000, 1000001, 1ULL << 40, (1ULL << 40) + 2};
  for (size_t i = 0; i < N; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    uint32_t src = (uint32_t)(x >> 33) % LPS, dst = (uint32_t)(x >> 45) % LPS;
    simtime_ps t = times[(x >> 20) % (sizeof times / sizeof times[0])];
    uint64_t pl[PDES_PAYLOAD_WORDS] = {(uint64_t)src << 16 | count[src]++, 0, 0, 0};
    want[i] = (sent){t, pl[0]};
    pdes_send(p, src, dst, t, 0, pl);
  }
  assert_int_equal(pdes_run(p, SIM_TIME_MAX), N);
  qsort(want, N, sizeof *want, sent_cmp);
  for (size_t i = 0; i < N; i++) {
    assert_int_equal(tr.t[i], want[i].t);
    assert_int_equal(tr.tag[i], want[i].tag);
  }
  pdes_destroy(p);
}

static void test_zero_delay_self_and_pieces(void **state) {
  (void)state;
  static trace tr;
  memset(&tr, 0, sizeof tr);
  pdes *p = make(&tr, 2);
  uint64_t pl[PDES_PAYLOAD_WORDS] = {100, 3, 0, 0};
  pdes_send(p, 0, 0, 5, 1, pl); /* 4 events at t=5 on LP 0 */
  pl[0] = 200;
  pl[1] = 0;
  pdes_send(p, 1, 1, 7, 1, pl);
  assert_int_equal(pdes_run(p, 4), 0);
  assert_int_equal(pdes_run(p, 5), 4);
  assert_int_equal(pdes_now(p), 5);
  assert_int_equal(pdes_run(p, SIM_TIME_MAX), 1);
  uint64_t want[] = {100, 101, 102, 103, 200};
  for (size_t i = 0; i < 5; i++) assert_int_equal(tr.tag[i], want[i]);
  pdes_stats st;
  pdes_stats_get(p, &st);
  assert_int_equal(st.events, 5);
  assert_int_equal(st.sent_remote, 0);
  pdes_destroy(p);
}

static simtime_ps no_hook(pdes *p, const uint64_t *sum, const uint64_t *max, void *model) {
  (void)p;
  (void)sum;
  (void)max;
  (void)model;
  return SIM_TIME_MAX;
}

static void test_config_errors(void **state) {
  (void)state;
  pdes_fn h[1] = {record};
  pdes *p = NULL;
  sim_error err = {0};
  pdes_cfg cfg = {.nlps = 0, .lookahead_ps = 1, .handlers = h, .nhandlers = 1};
  assert_int_equal(pdes_create(&p, &cfg, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "logical processes"));
  cfg.nlps = 4;
  cfg.nhandlers = 0;
  assert_int_equal(pdes_create(&p, &cfg, &err), SIM_EINVAL);
  cfg.nhandlers = 1;
  uint32_t part[4] = {0, 0, 1, 0}; /* rank 1 of 1 */
  cfg.lp_rank = part;
  cfg.parallel = true; /* without mpirun: one rank */
  int rc = pdes_create(&p, &cfg, &err);
  if (pdes_comm_built()) {
    assert_int_equal(rc, SIM_EINVAL);
    assert_non_null(strstr(err.msg, "LP 2 is on rank 1 of 1"));
  } else {
    assert_int_equal(rc, SIM_ENOTSUP);
    assert_non_null(strstr(err.msg, "without MPI"));
  }
  assert_null(p);
  cfg.parallel = false;
  cfg.lp_rank = NULL;
  cfg.lookahead_ps = 0;
  cfg.on_window = no_hook; /* a window hook needs windows: L > 0 */
  assert_int_equal(pdes_create(&p, &cfg, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "window hook"));
  cfg.on_window = NULL;
  cfg.lookahead_ps = 1;
  cfg.lp_rank = part; /* sequential mode ignores the partition */
  assert_int_equal(pdes_create(&p, &cfg, &err), SIM_OK);
  assert_int_equal(pdes_nranks(p), 1);
  assert_true(pdes_owns(p, 2));
  pdes_destroy(p);
}

static void phold_state(const pdes_phold_cfg *cfg, uint64_t *state, uint64_t *events) {
  pdes_phold *m = NULL;
  sim_error err = {0};
  assert_int_equal(pdes_phold_create(&m, cfg, false, NULL, &err), SIM_OK);
  *events = pdes_phold_run(m, pdes_phold_horizon(cfg, 20000));
  pdes_phold_state(m, state);
  pdes_phold_destroy(m);
}

static void test_phold_deterministic(void **state) {
  (void)state;
  pdes_phold_cfg cfg = {
      .nlps = 128, .start = 2, .remote = 0.5, .mean_ps = 1000000, .lookahead_ps = 1000, .seed = 5};
  size_t words = (size_t)cfg.nlps * PDES_PHOLD_STATE_WORDS;
  uint64_t *a = calloc(words, 8), *b = calloc(words, 8), ea, eb;
  phold_state(&cfg, a, &ea);
  phold_state(&cfg, b, &eb);
  assert_int_equal(ea, eb);
  assert_true(ea > 15000 && ea < 25000);
  assert_memory_equal(a, b, words * 8);
  uint64_t total = 0;
  for (uint32_t i = 0; i < cfg.nlps; i++) total += a[(size_t)i * PDES_PHOLD_STATE_WORDS];
  assert_int_equal(total, ea);
  cfg.seed = 6;
  phold_state(&cfg, b, &eb);
  assert_memory_not_equal(a, b, words * 8);
  free(a);
  free(b);
}

/* Windows do not depend on the bounds a caller runs to (issue 13): the
 * window hook sees the same boundaries, and the run the same windows, when
 * it is run in one call or in many pieces of odd sizes. Under MPI every
 * rank then makes the same exchanges whatever its bounds, which is what
 * keeps the ranks' collectives matched (tests/pdes/mpi_run.sh load). */
typedef struct ring_model {
  simtime_ps bound[4096]; /* pdes_done_until at each hook call */
  size_t nb;
  uint64_t ran;
} ring_model;

static void ring_hop(pdes *p, const pdes_event *ev, void *model) {
  ring_model *m = model;
  m->ran++;
  if (ev->time > 3000) return;
  simtime_ps d = 10 + (ev->time * 7 + ev->dst) % 23;
  pdes_send(p, ev->dst, (ev->dst + 1) % 4, ev->time + d, 0, NULL);
}

static simtime_ps ring_hook(pdes *p, const uint64_t *sum, const uint64_t *max, void *model) {
  (void)sum;
  (void)max;
  ring_model *m = model;
  assert_true(m->nb < 4096);
  m->bound[m->nb++] = pdes_done_until(p);
  return SIM_TIME_MAX;
}

static pdes *ring_make(ring_model *m) {
  pdes_fn h[1] = {ring_hop};
  pdes_cfg cfg = {.nlps = 4,
                  .lookahead_ps = 10,
                  .handlers = h,
                  .nhandlers = 1,
                  .model = m,
                  .on_window = ring_hook};
  pdes *p = NULL;
  sim_error err = {0};
  assert_int_equal(pdes_create(&p, &cfg, &err), SIM_OK);
  for (uint32_t lp = 0; lp < 4; lp++) pdes_send(p, lp, lp, 3 * lp, 0, NULL);
  return p;
}

static void test_windows_ignore_bounds(void **state) {
  (void)state;
  static ring_model whole, pieces;
  memset(&whole, 0, sizeof whole);
  memset(&pieces, 0, sizeof pieces);
  pdes *p = ring_make(&whole);
  pdes_run(p, SIM_TIME_MAX);
  pdes_stats a, b;
  pdes_stats_get(p, &a);
  pdes_destroy(p);
  p = ring_make(&pieces);
  for (simtime_ps u = 0, step = 1; u < 4000; u += step, step = step * 5 % 37 + 1) pdes_run(p, u);
  pdes_run(p, SIM_TIME_MAX);
  pdes_stats_get(p, &b);
  pdes_destroy(p);
  assert_true(whole.ran > 200);
  assert_int_equal(pieces.ran, whole.ran);
  assert_int_equal(b.windows, a.windows);
  assert_int_equal(pieces.nb, whole.nb); /* as many exchanges: one per window, + the last */
  assert_memory_equal(pieces.bound, whole.bound, whole.nb * sizeof *whole.bound);
}

/* A global action before the open window's start drops it (the next run
 * exchanges again); one at or after its start does not. */
static void test_global_action(void **state) {
  (void)state;
  static ring_model m;
  memset(&m, 0, sizeof m);
  pdes_fn h[1] = {ring_hop};
  pdes_cfg cfg = {.nlps = 4,
                  .lookahead_ps = 10,
                  .handlers = h,
                  .nhandlers = 1,
                  .model = &m,
                  .on_window = ring_hook};
  pdes *p = NULL;
  sim_error err = {0};
  assert_int_equal(pdes_create(&p, &cfg, &err), SIM_OK);
  pdes_send(p, 0, 1, 100, 0, NULL);
  pdes_run(p, 50); /* exchanged once: the window [100, 110) is open, not begun */
  assert_int_equal(m.nb, 1);
  pdes_run(p, 60);
  assert_int_equal(m.nb, 1);  /* no exchange: the window still holds */
  pdes_global_action(p, 100); /* at its start: it stays */
  pdes_run(p, 70);
  assert_int_equal(m.nb, 1);
  pdes_send(p, 2, 2, 80, 0, NULL); /* a global action at 80 gave LP 2 an event there */
  pdes_global_action(p, 80);
  pdes_run(p, 80);
  assert_int_equal(m.nb, 2); /* exchanged again: the window is [80, 90) */
  assert_int_equal(m.bound[1], 0);
  assert_int_equal(m.ran, 1);
  pdes_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_key_order),
      cmocka_unit_test(test_key_order_many),
      cmocka_unit_test(test_kind_order),
      cmocka_unit_test(test_zero_delay_self_and_pieces),
      cmocka_unit_test(test_config_errors),
      cmocka_unit_test(test_phold_deterministic),
      cmocka_unit_test(test_windows_ignore_bounds),
      cmocka_unit_test(test_global_action),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
