/* Telemetry sampler: exact integration, aggregation across entities, quiet
 * stretches, watched entities, totals and top-k, events, FCT buckets, steps,
 * the row limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/telemetry.h"

#define US SIM_PS_PER_US
#define G100 100000000000LL /* 100 Gb/s */

static tel *make(uint32_t gpus, uint32_t nics, uint32_t ports, simtime_ps interval) {
  tel *t = NULL;
  tel_config c = {.interval = interval,
                  .gpus = gpus,
                  .nics = nics,
                  .ports = ports,
                  .nic_bps = (rate_bps)G100 * 4};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  return t;
}

static void test_rate_integration(void **state) {
  (void)state;
  tel *t = make(1, 2, 0, 10 * US);
  /* NIC 0 at 100 Gb/s from 5 us to 25 us; NIC 1 at 300 Gb/s from 0 to 30 us. */
  tel_nic_rate(t, 0, 1, TEL_TX, 3 * G100);
  tel_nic_rate(t, 5 * US, 0, TEL_TX, G100);
  tel_nic_rate(t, 25 * US, 0, TEL_TX, -G100);
  tel_nic_rate(t, 30 * US, 1, TEL_TX, -3 * G100);
  tel_finish(t, 35 * US);
  assert_int_equal(tel_rows(t), 4);
  assert_int_equal(tel_row_length(t, 3), 5 * US);
  const tel_nic_row *r = tel_nic_row_at(t, 0);
  assert_true(fabs(r->total_gbps[TEL_TX] - 350) < 1e-9); /* 50 + 300 */
  assert_true(fabs(r->max_gbps[TEL_TX] - 300) < 1e-9);
  assert_int_equal(r->active[TEL_TX], 2);
  assert_int_equal(r->active[TEL_RX], 0);
  r = tel_nic_row_at(t, 1);
  assert_true(fabs(r->total_gbps[TEL_TX] - 400) < 1e-9);
  r = tel_nic_row_at(t, 2);
  assert_true(fabs(r->total_gbps[TEL_TX] - 350) < 1e-9);
  r = tel_nic_row_at(t, 3);
  assert_true(r->total_gbps[TEL_TX] == 0);
  tel_totals tot;
  tel_totals_get(t, &tot);
  /* 100 Gb/s x 20 us + 300 Gb/s x 30 us = 2,000,000 + 9,000,000 bits */
  assert_true(fabs(tot.nic_bytes[TEL_TX] - 11e6 / 8) < 1e-6);
  assert_int_equal(tel_observed(t), TEL_OBS_NIC);
  tel_destroy(t);
}

/* Bytes fed as counts and the same bytes fed as a rate give the same rows. */
static void test_counts_match_rates(void **state) {
  (void)state;
  tel *a = make(0, 1, 1, 2 * US), *b = make(0, 1, 1, 2 * US);
  for (int i = 0; i < 10; i++) tel_port_bytes(a, (simtime_ps)i * US, 0, 12500); /* 12.5 KB per us */
  tel_port_rate(b, 0, 0, G100);
  tel_port_rate(b, 10 * US, 0, -G100);
  tel_finish(a, 10 * US);
  tel_finish(b, 10 * US);
  assert_int_equal(tel_rows(a), 5);
  for (size_t i = 0; i < 5; i++)
    assert_true(fabs(tel_port_row_at(a, i)->util_mean - tel_port_row_at(b, i)->util_mean) < 1e-12);
  tel_destroy(a);
  tel_destroy(b);
}

/* Long quiet stretches: copied rows equal computed ones. */
static void test_quiet_rows(void **state) {
  (void)state;
  tel *t = make(0, 3, 0, US);
  tel_nic_rate(t, 0, 0, TEL_TX, G100);
  tel_nic_rate(t, 0, 1, TEL_TX, 2 * G100);
  tel_nic_rate(t, 500 * US, 2, TEL_RX, G100);
  tel_finish(t, 1000 * US);
  assert_int_equal(tel_rows(t), 1000);
  for (size_t i = 0; i < 1000; i++) {
    const tel_nic_row *r = tel_nic_row_at(t, i);
    assert_true(fabs(r->total_gbps[TEL_TX] - 300) < 1e-9);
    assert_true(fabs(r->total_gbps[TEL_RX] - (i >= 500 ? 100 : 0)) < 1e-9);
    assert_true(r->p50_gbps[TEL_TX] == 100 && r->p99_gbps[TEL_TX] == 200);
  }
  tel_destroy(t);
}

static void test_percentiles(void **state) {
  (void)state;
  tel *t = make(0, 100, 0, 10 * US);
  for (uint32_t i = 0; i < 100; i++)
    tel_nic_rate(t, 0, (i * 37) % 100, TEL_TX, (int64_t)(i + 1) * 1000000000LL);
  tel_finish(t, 10 * US);
  const tel_nic_row *r = tel_nic_row_at(t, 0);
  assert_true(fabs(r->p50_gbps[TEL_TX] - 50) < 1e-9);
  assert_true(fabs(r->p99_gbps[TEL_TX] - 99) < 1e-9);
  assert_true(fabs(r->max_gbps[TEL_TX] - 100) < 1e-9);
  assert_true(fabs(r->total_gbps[TEL_TX] - 5050) < 1e-9);
  tel_destroy(t);
}

static void test_ports_queue_ecn_pfc(void **state) {
  (void)state;
  rate_bps bps[4] = {(rate_bps)G100, (rate_bps)G100, (rate_bps)G100 * 4, (rate_bps)G100};
  uint32_t watch[1] = {2};
  tel *t = NULL;
  tel_config c = {
      .interval = 10 * US, .ports = 4, .port_bps = bps, .watch_ports = watch, .nwatch_ports = 1};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  tel_port_rate(t, 0, 2, 2 * G100); /* half of 400 Gb/s */
  tel_port_queue(t, 1 * US, 2, 5000);
  tel_port_queue(t, 2 * US, 2, 9000);
  tel_port_queue(t, 3 * US, 2, 1000); /* stays 1000 into the next rows */
  tel_port_ecn(t, 4 * US, 2, 7);
  tel_port_pause(t, 5 * US, 1, true);
  tel_port_pause(t, 15 * US, 1, false);
  tel_finish(t, 30 * US);
  const tel_port_row *r0 = tel_port_row_at(t, 0), *r1 = tel_port_row_at(t, 1),
                     *r2 = tel_port_row_at(t, 2);
  assert_true(r0->queue_max_bytes == 9000 && r1->queue_max_bytes == 1000 &&
              r2->queue_max_bytes == 1000);
  assert_true(r0->ecn_marks == 7 && r1->ecn_marks == 0);
  assert_true(fabs(r0->pfc_paused_s - 5e-6) < 1e-15 && fabs(r1->pfc_paused_s - 5e-6) < 1e-15);
  assert_int_equal(r0->paused_ports, 1);
  assert_int_equal(r2->paused_ports, 0);
  assert_true(fabs(r0->util_max - 0.5) < 1e-12 && fabs(r0->util_mean - 0.125) < 1e-12);
  const tel_watch_row *w = tel_watch_row_at(t, 0, 0);
  assert_true(fabs(w->util - 0.5) < 1e-12 && w->queue_max_bytes == 9000 && w->ecn_marks == 7);
  bool is_nic = true;
  assert_int_equal(tel_watch_entity(t, 0, &is_nic), 2);
  assert_false(is_nic);
  tel_totals tot;
  tel_totals_get(t, &tot);
  assert_int_equal(tot.ecn_marks, 7);
  assert_int_equal(tot.pfc_paused, 10 * US);
  assert_int_equal(tot.queue_max_bytes, 9000);
  unsigned want = TEL_OBS_PORT_UTIL | TEL_OBS_PORT_QUEUE | TEL_OBS_PORT_ECN | TEL_OBS_PORT_PFC;
  assert_int_equal(tel_observed(t), want);
  tel_destroy(t);
}

static void test_top_ports(void **state) {
  (void)state;
  tel *t = make(0, 0, 6, 10 * US);
  int64_t r[6] = {5, 9, 0, 9, 1, 7};
  for (uint32_t i = 0; i < 6; i++)
    if (r[i]) tel_port_rate(t, 0, i, r[i] * 1000000000LL);
  tel_finish(t, 10 * US);
  tel_port_total top[3];
  assert_int_equal(tel_top_ports(t, top, 3), 3);
  assert_int_equal(top[0].port, 1); /* ties: lower id first */
  assert_int_equal(top[1].port, 3);
  assert_int_equal(top[2].port, 5);
  assert_true(fabs(top[2].bytes - 7e9 * 1e-5 / 8) < 1e-6);
  tel_port_total all[10];
  assert_int_equal(tel_top_ports(t, all, 10), 5); /* idle ports are not listed */
  tel_destroy(t);
}

/* Moves of anonymous groups give the same rows as the GPUs one by one;
 * a move of more GPUs than the state holds moves only those. */
static void test_gpu_count_moves(void **state) {
  (void)state;
  tel *t = make(4, 0, 0, 10 * US);
  tel_gpu_count_move(t, 0, TEL_GPU_IDLE, TEL_GPU_COMPUTE, 4);
  tel_gpu_count_move(t, 5 * US, TEL_GPU_COMPUTE, TEL_GPU_NETWORK, 2);
  tel_gpu_count_move(t, 5 * US, TEL_GPU_COMPUTE, TEL_GPU_BUBBLE, 2);
  tel_gpu_count_move(t, 15 * US, TEL_GPU_BUBBLE, TEL_GPU_DOWN, 9); /* only 2 there */
  tel_finish(t, 20 * US);
  const tel_gpu_row *r = tel_gpu_row_at(t, 0);
  assert_true(fabs(r->frac[TEL_GPU_COMPUTE] - 0.5) < 1e-12);
  assert_true(fabs(r->frac[TEL_GPU_NETWORK] - 0.25) < 1e-12);
  assert_true(fabs(r->frac[TEL_GPU_BUBBLE] - 0.25) < 1e-12);
  r = tel_gpu_row_at(t, 1);
  assert_true(fabs(r->frac[TEL_GPU_NETWORK] - 0.5) < 1e-12);
  assert_true(fabs(r->frac[TEL_GPU_BUBBLE] - 0.25) < 1e-12);
  assert_true(fabs(r->frac[TEL_GPU_DOWN] - 0.25) < 1e-12);
  assert_true(r->frac[TEL_GPU_IDLE] == 0);
  assert_true(tel_observed(t) & TEL_OBS_GPU);
  tel_destroy(t);
}

static void test_gpu_states_and_steps(void **state) {
  (void)state;
  tel *t = make(4, 0, 0, 10 * US);
  for (uint32_t g = 0; g < 4; g++) tel_gpu_state_set(t, 0, g, TEL_GPU_COMPUTE);
  tel_step_begin(t, 0, 0);
  for (uint32_t g = 0; g < 2; g++) tel_gpu_state_set(t, 5 * US, g, TEL_GPU_NETWORK);
  for (uint32_t g = 2; g < 4; g++) tel_gpu_state_set(t, 5 * US, g, TEL_GPU_BUBBLE);
  tel_step_end(t, 20 * US, 0);
  for (uint32_t g = 0; g < 4; g++) tel_gpu_state_set(t, 20 * US, g, TEL_GPU_IDLE);
  tel_finish(t, 20 * US);
  const tel_gpu_row *r = tel_gpu_row_at(t, 0);
  assert_true(fabs(r->frac[TEL_GPU_COMPUTE] - 0.5) < 1e-12);
  assert_true(fabs(r->frac[TEL_GPU_NETWORK] - 0.25) < 1e-12);
  assert_true(fabs(r->frac[TEL_GPU_BUBBLE] - 0.25) < 1e-12);
  r = tel_gpu_row_at(t, 1);
  assert_true(r->frac[TEL_GPU_COMPUTE] == 0 && fabs(r->frac[TEL_GPU_NETWORK] - 0.5) < 1e-12);
  assert_int_equal(tel_step_count(t), 1);
  const tel_step *s = tel_step_at(t, 0);
  assert_int_equal(s->end, 20 * US);
  assert_true(fabs(s->frac[TEL_GPU_COMPUTE] - 0.25) < 1e-12);
  assert_true(fabs(s->frac[TEL_GPU_NETWORK] - 0.375) < 1e-12);
  assert_string_equal(tel_gpu_state_name(TEL_GPU_BUBBLE), "bubble");
  tel_destroy(t);
}

static void test_events_and_fct(void **state) {
  (void)state;
  tel *t = make(0, 0, 0, US);
  tel_event(t, 50, "leaf0-spine1", "link-down", "lost", NAN);
  tel_event(t, 10, "job", "start", "", 0);
  tel_event(t, 50, "gpu3", "restart", "back", 2.5);
  for (simtime_ps v = 0; v < 100000; v += 7) tel_fct(t, v);
  tel_fct(t, SIM_TIME_MAX);
  tel_finish(t, 100);
  assert_int_equal(tel_event_count(t), 3);
  tel_event_view e;
  tel_event_at(t, 0, &e);
  assert_string_equal(e.component, "job");
  tel_event_at(t, 1, &e);
  assert_string_equal(e.kind, "link-down");
  assert_true(isnan(e.value));
  tel_event_at(t, 2, &e);
  assert_string_equal(e.component, "gpu3");
  assert_true(e.value == 2.5);
  /* every value lands in the bucket whose range holds it */
  uint64_t n = 0;
  for (size_t b = 0; b < TEL_FCT_BUCKETS; b++) {
    n += tel_fct_count(t, b);
    if (b + 1 < TEL_FCT_BUCKETS) assert_true(tel_fct_bucket_lo(b) <= tel_fct_bucket_lo(b + 1));
  }
  assert_int_equal(n, 100000 / 7 + 1 + 1);
  assert_int_equal(tel_fct_count(t, TEL_FCT_BUCKETS - 1), 1);
  assert_int_equal(tel_fct_count(t, 0), 1);     /* the 0 */
  assert_true(tel_fct_count(t, 4 * 6 + 1) > 0); /* [80, 96) holds 84, 91 */
  assert_int_equal(tel_fct_bucket_lo(4 * 6 + 1), 80);
  tel_destroy(t);
}

static void test_row_limit(void **state) {
  (void)state;
  tel *t = NULL;
  tel_config c = {.interval = 1, .nics = 2, .max_rows = 100};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  tel_nic_rate(t, 0, 0, TEL_TX, G100);
  tel_nic_rate(t, SIM_PS_PER_MS, 0, TEL_TX, -G100); /* 1e9 intervals: must not loop over them */
  tel_finish(t, 2 * SIM_PS_PER_MS);
  assert_int_equal(tel_rows(t), 100);
  assert_true(tel_truncated(t));
  tel_totals tot;
  tel_totals_get(t, &tot);
  assert_true(fabs(tot.nic_bytes[TEL_TX] - 1e8 * 1e-3 * 1e3 / 8) < 1e-3); /* totals stay exact */
  tel_destroy(t);
  assert_int_equal(tel_create(&t, &(tel_config){.interval = 0}, NULL), SIM_EINVAL);
}

/* No row above its line rate reaches a file (issue 27, defect 7): the
 * first value above is kept (tel_over_line), for the writers to refuse;
 * one byte per row of slack, for whole bytes spread over rows. */
static void test_line_rate(void **state) {
  (void)state;
  tel *t = make(1, 2, 1, 10 * US); /* NICs at 400 Gb/s; the port at the NICs' rate */
  tel_over o;
  tel_nic_rate(t, 0, 0, TEL_TX, 4 * G100); /* at the line rate: fine */
  tel_nic_bytes(t, 0, 1, TEL_RX, 500001);  /* 400 Gb/s over 10 us, and one byte */
  tel_port_rate(t, 0, 0, 4 * G100);
  tel_finish(t, 20 * US);
  assert_false(tel_over_line(t, &o));
  tel_destroy(t);
  t = make(1, 2, 1, 10 * US);
  tel_nic_bytes(t, 12 * US, 1, TEL_RX, 500002); /* two bytes too many in the second row */
  tel_finish(t, 20 * US);
  assert_true(tel_over_line(t, &o));
  assert_false(o.port);
  assert_int_equal(o.entity, 1);
  assert_int_equal(o.dir, TEL_RX);
  assert_int_equal(o.at, 10 * US);
  assert_true(fabs(o.gbps - 400.0016) < 1e-9 && o.line == 400);
  tel_destroy(t);
  t = make(1, 2, 1, 10 * US);
  tel_port_rate(t, 5 * US, 0, 5 * G100); /* 500 Gb/s on a 400 Gb/s port */
  tel_finish(t, 20 * US);
  assert_true(tel_over_line(t, &o));
  assert_true(o.port && o.entity == 0 && o.at == 10 * US); /* the first full row */
  tel_destroy(t);
}

/* A tel whose NICs and ports carry what a row cannot show (tel_config
 * carry, the analytic fidelity's series: phases that share no link). */
static tel *make_carry(bool may_remain) {
  tel *t = NULL;
  tel_config c = {.interval = 10 * US,
                  .gpus = 1,
                  .nics = 1,
                  .ports = 1,
                  .nic_bps = (rate_bps)G100 * 4,
                  .nic_line_bps = (rate_bps)G100 * 3,
                  .carry = TEL_CARRY_NICS | TEL_CARRY_PORTS,
                  .carry_may_remain = may_remain};
  assert_int_equal(tel_create(&t, &c, NULL), SIM_OK);
  return t;
}

/* A port offered more than its line rate shows it at its line rate, the
 * excess queued into the next rows (bytes kept); a NIC's line rate is
 * nic_line_bps, its utilization still of nic_bps. Quiet rows after a
 * backlog are computed, not copied. A backlog left at the end is counted
 * (carry_may_remain), else it is tel_over. */
static void test_line_carry(void **state) {
  (void)state;
  tel *t = make_carry(true);
  tel_over o;
  double left = -1;
  tel_port_rate(t, 0, 0, 10 * G100); /* 1,000 Gb/s for 10 us on a 400 Gb/s port */
  tel_port_rate(t, 10 * US, 0, -10 * G100);
  tel_nic_bytes(t, 0, 0, TEL_TX, 500000); /* 400 Gb/s over a row, the NIC's line rate 300 */
  tel_finish(t, 50 * US);
  double util[] = {1, 1, 0.5, 0, 0}, nic[] = {300, 100, 0, 0, 0};
  assert_int_equal(tel_rows(t), 5);
  for (size_t i = 0; i < 5; i++) {
    assert_true(fabs(tel_port_row_at(t, i)->util_max - util[i]) < 1e-12);
    assert_true(fabs(tel_nic_row_at(t, i)->max_gbps[TEL_TX] - nic[i]) < 1e-9);
  }
  assert_false(tel_over_line(t, &o));
  assert_true(tel_line_carried(t, &o, &left));
  assert_true(o.port && o.entity == 0 && o.at == 0 && fabs(o.gbps - 1000) < 1e-9 && o.line == 400);
  assert_true(left == 0);
  tel_totals tot;
  tel_totals_get(t, &tot);
  assert_true(fabs(tot.nic_bytes[TEL_TX] - 500000) < 1e-6); /* totals as fed */
  tel_destroy(t);
  /* the run ends with bytes still queued: counted, or an error */
  for (int may = 0; may < 2; may++) {
    t = make_carry(may);
    tel_port_rate(t, 0, 0, 10 * G100);
    tel_port_rate(t, 10 * US, 0, -10 * G100);
    tel_finish(t, 20 * US);
    assert_true(tel_line_carried(t, &o, &left));
    assert_true(fabs(left - 250000) < 1e-6); /* 1e7 bits less two rows at 400 Gb/s */
    assert_int_equal(tel_over_line(t, &o), !may);
    if (!may) assert_true(o.port && o.at == 10 * US && o.line == 400);
    assert_true(fabs(tel_port_row_at(t, 1)->util_max - 1) < 1e-12);
    tel_destroy(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_line_rate),
      cmocka_unit_test(test_line_carry),
      cmocka_unit_test(test_rate_integration),
      cmocka_unit_test(test_counts_match_rates),
      cmocka_unit_test(test_quiet_rows),
      cmocka_unit_test(test_percentiles),
      cmocka_unit_test(test_ports_queue_ecn_pfc),
      cmocka_unit_test(test_top_ports),
      cmocka_unit_test(test_gpu_states_and_steps),
      cmocka_unit_test(test_gpu_count_moves),
      cmocka_unit_test(test_events_and_fct),
      cmocka_unit_test(test_row_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
