/* Mitigations of the power swing (src/power/mitigate.c) against closed forms:
 * a battery of zero capacity changes nothing, a floor at compute power leaves
 * no swing and draws compute power throughout, a ramp limit holds every row's
 * change under limit x interval and costs the closed-form step time, a
 * battery's energy balances, pacing and a facility cap give their figures. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/power.h"
#include "fixture.h"

#define REL(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol)*fabs((double)(b)))

/* 8 nodes of 8 H100 (700 W TDP, 70 W idle), 2 racks of 4, PUE 1.2. */
enum { GPUS = 64 };
static const double TDP = 700, IDLE = 70, PUE = 1.2;

static void setup(fixture *f, pwr_model *m) {
  const char *sets[] = {"cluster.nodes=8", "power.rack.cooling=liquid"};
  sim_error err = {0};
  load(f, sets, 2);
  if (pwr_init(m, &f->cfg, f->doc, topo_inventory_get(f->t), &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

static void teardown(fixture *f, pwr_model *m) {
  pwr_free(m);
  unload(f);
}

/* A square wave of rows of 0.1 s, steps of 4 rows: the first waits on the
 * network, the other three compute. */
enum { STEPS = 6, N = 4 * STEPS };
typedef struct wave {
  double start[N], len[N], u[N], w[N], sb[STEPS], se[STEPS];
  pwr_series_in in;
} wave;

static void wave_init(wave *v) {
  for (int i = 0; i < N; i++) {
    v->start[i] = 0.1 * i, v->len[i] = 0.1, v->u[i] = i % 4 == 0 ? 0 : 1;
    v->w[i] = 1 - v->u[i];
  }
  for (int k = 0; k < STEPS; k++) v->sb[k] = 0.4 * k, v->se[k] = 0.4 * (k + 1);
  v->in = (pwr_series_in){.rows = N,
                          .start_s = v->start,
                          .len_s = v->len,
                          .compute = v->u,
                          .waiting = v->w,
                          .throttle_u = -1,
                          .steps = STEPS,
                          .step_begin_s = v->sb,
                          .step_end_s = v->se};
}

/* The cluster, its model and the wave: what every test starts from. */
typedef struct bench {
  fixture f;
  pwr_model m;
  wave v;
} bench;

static void bench_open(bench *b) {
  setup(&b->f, &b->m);
  wave_init(&b->v);
}

static void bench_close(bench *b) { teardown(&b->f, &b->m); }

/* Facility kW of the whole cluster drawing gpu_w per GPU. */
static double facility_kw(const pwr_model *m, double gpu_w) {
  pwr_summary s;
  pwr_summarize(m, 0, 0, 0, &s);
  return (GPUS * gpu_w * 1e-3 + s.server_kw + s.nic_kw + s.switch_kw + s.optics_kw) * PUE;
}

static void test_battery_of_zero_capacity_changes_nothing(void **state) {
  (void)state;
  bench b;
  bench_open(&b);
  double before[N], after[N];
  pwr_over_time o;
  pwr_over_time_of(&b.m, &b.v.in, before, NULL, NULL, &o, NULL);
  pwr_mitigation_cfg c = {.battery_kwh = 0, .battery_kw = 10, .battery_efficiency = 0.82};
  assert_false(pwr_mit_on(&c, PWR_MIT_BATTERY));
  pwr_mitigated x;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_BATTERY, after, &x, NULL);
  assert_memory_equal(before, after, sizeof before);
  assert_memory_equal(&o, &x.after, sizeof o);
  assert_true(x.energy_added_kwh == 0 && x.energy_kwh == o.energy_kwh && x.time_cost_s == 0);
  assert_true(x.charged_kwh == 0 && x.discharged_kwh == 0 && x.losses_kwh == 0);
  /* a battery that holds something does shave the peak */
  c.battery_kwh = 0.05;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_BATTERY, after, &x, NULL);
  assert_true(x.after.peak_kw < o.peak_kw && x.discharged_kwh > 0);
  bench_close(&b);
}

static void test_floor_at_compute_power(void **state) {
  (void)state;
  bench b;
  bench_open(&b);
  pwr_over_time o;
  pwr_over_time_of(&b.m, &b.v.in, NULL, NULL, NULL, &o, NULL);
  REL(o.swing_max_kw, (TDP - IDLE) * GPUS * PUE * 1e-3, 1e-12);
  pwr_mitigation_cfg c = {.floor_w = TDP};
  pwr_mitigated x;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_FLOOR, NULL, &x, NULL);
  assert_true(x.after.swing_max_kw == 0 && x.after.swing_mean_kw == 0);
  assert_true(x.after.ramp_kw_per_s == 0);
  /* energy = compute power x time: pwr_summarize's facility figure at full load */
  pwr_summary s;
  pwr_summarize(&b.m, 1, 0, N * 0.1, &s);
  REL(x.energy_kwh, s.facility_kw * N * 0.1 / 3600, 1e-12);
  REL(x.energy_kwh * 1e-3, s.energy_mwh_per_run, 1e-12);
  assert_true(x.time_cost_s == 0);
  /* a floor of 60 % of TDP: swing (TDP - 420) x GPUs x PUE, the waits drawing 420 W */
  c.floor_w = 0.6 * TDP;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_FLOOR, NULL, &x, NULL);
  REL(x.after.swing_max_kw, (TDP - 420) * GPUS * PUE * 1e-3, 1e-12);
  REL(x.energy_added_kwh, (420 - IDLE) * GPUS * PUE * STEPS * 0.1 / 3.6e6, 1e-9);
  bench_close(&b);
}

static void test_pacing_fills_the_waits(void **state) {
  (void)state;
  bench b;
  bench_open(&b);
  pwr_mitigation_cfg c = {.pacing_w = 350};
  pwr_mitigated x;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_PACING, NULL, &x, NULL);
  REL(x.after.swing_max_kw, (TDP - 350) * GPUS * PUE * 1e-3, 1e-12);
  REL(x.energy_added_kwh, (350 - IDLE) * GPUS * PUE * STEPS * 0.1 / 3.6e6, 1e-9);
  REL(x.after.trough_kw, facility_kw(&b.m, 350), 1e-12);
  /* no waiting state (idle, checkpoint, down): nothing to fill */
  b.v.in.waiting = NULL;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_PACING, NULL, &x, NULL);
  assert_true(x.energy_added_kwh == 0);
  bench_close(&b);
}

/* Ramp limits of R W/s per GPU: no row moves more than GPUS x R x 0.1 s (x PUE at the
 * facility); the first rise from idle takes three rows, each computing at
 * f_k = cbrt(k x GPUS x R x 0.1 / (GPUS x (TDP - idle))) and costing 0.1 (1 / f_k - 1) s; a
 * fall held up burns its difference. */
static void test_ramp_limit(void **state) {
  (void)state;
  bench b;
  bench_open(&b);
  const double R = 2000;
  pwr_mitigation_cfg c = {.ramp_up_w_per_s = R, .ramp_down_w_per_s = R};
  double kw[N], before[N];
  pwr_mitigated x;
  pwr_over_time o;
  pwr_over_time_of(&b.m, &b.v.in, before, NULL, NULL, &o, NULL);
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_RAMP, kw, &x, NULL);
  double limit_kw = GPUS * R * 0.1 * PUE * 1e-3, worst = 0;
  for (int i = 1; i < N; i++) worst = fmax(worst, fabs(kw[i] - kw[i - 1]));
  assert_true(worst <= limit_kw * (1 + 1e-12));
  assert_true(worst > 0.99 * limit_kw); /* the limit binds */
  REL(x.after.ramp_kw_per_s, limit_kw / 0.1, 1e-9);
  assert_true(o.ramp_kw_per_s > 2 * x.after.ramp_kw_per_s); /* and was not held before */
  assert_true(x.after.swing_max_kw < o.swing_max_kw);
  assert_true(x.time_cost_s > 0 && x.energy_added_kwh != 0 && x.cap_met);
  /* one step alone: [wait, compute x 3] */
  b.v.in.rows = 4, b.v.in.steps = 1;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_RAMP, kw, &x, NULL);
  double cost = 0;
  for (int k = 1; k <= 3; k++)
    cost += 0.1 * (1 / cbrt(k * GPUS * R * 0.1 / (GPUS * (TDP - IDLE))) - 1);
  REL(x.time_cost_s, cost, 1e-12);
  REL(kw[3], facility_kw(&b.m, IDLE + 3 * R * 0.1), 1e-12);
  /* a fall alone: [compute, wait] held to GPUS x R x 0.1 W less; the difference burned */
  b.v.u[0] = 1, b.v.u[1] = 0, b.v.in.rows = 2;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_RAMP, kw, &x, NULL);
  double held = TDP - R * 0.1; /* per GPU */
  REL(kw[1], facility_kw(&b.m, held), 1e-12);
  REL(x.energy_added_kwh, (held - IDLE) * GPUS * PUE * 0.1 / 3.6e6, 1e-9);
  assert_true(x.time_cost_s == 0);
  bench_close(&b);
}

/* Batteries of 50 Wh and 2 kW a rack (2 racks), 82 % round trip, on the IT power. */
static void test_battery_energy_balance(void **state) {
  (void)state;
  bench b;
  bench_open(&b);
  const double eta = 0.82;
  pwr_mitigation_cfg c = {.battery_kwh = 0.05, .battery_kw = 2, .battery_efficiency = eta};
  double kw[N], before[N], most = 0;
  pwr_over_time o;
  pwr_over_time_of(&b.m, &b.v.in, before, NULL, NULL, &o, NULL);
  pwr_mitigated x;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_BATTERY, kw, &x, NULL);
  REL(x.capacity_kwh, 0.1, 1e-15);
  assert_true(x.soc_min_kwh >= 0 && x.soc_end_kwh <= x.capacity_kwh);
  assert_true(x.discharged_kwh > 0 && x.charged_kwh > 0);
  /* it gives what it holds and eta of what it takes, no more */
  assert_true(x.discharged_kwh <= x.capacity_kwh + eta * x.charged_kwh + 1e-12);
  REL(x.soc_end_kwh, x.capacity_kwh + eta * x.charged_kwh - x.discharged_kwh, 1e-9);
  REL(x.losses_kwh, (1 - eta) * x.charged_kwh, 1e-12);
  /* the grid's IT energy = the load's + charged - discharged; each row within 2 kW a rack */
  double grid = 0, load = 0;
  for (int i = 0; i < N; i++) {
    grid += kw[i] / PUE * 0.1 / 3600, load += before[i] / PUE * 0.1 / 3600;
    most = fmax(most, fabs(kw[i] - before[i]) / PUE);
  }
  REL(most, 2 * 2, 1e-9); /* and the limit binds */
  REL(grid, load + x.charged_kwh - x.discharged_kwh, 1e-9);
  /* its energy cost: every kWh it delivered bought back at eta */
  REL(x.energy_added_kwh, x.discharged_kwh * (1 / eta - 1) * PUE, 1e-6);
  assert_true(x.after.peak_kw < o.peak_kw && x.after.swing_max_kw < o.swing_max_kw);
  assert_true(x.time_cost_s == 0);
  bench_close(&b);
}

/* A facility cap leaving each GPU idle + half its dynamic power: computing rows run at
 * f = cbrt(1/2) and take 0.1 / f s; a cap below the idle cluster cannot be met. */
static void test_facility_cap(void **state) {
  (void)state;
  bench b;
  bench_open(&b);
  double half = IDLE + (TDP - IDLE) / 2, kw[N];
  pwr_mitigation_cfg c = {.facility_cap_kw = facility_kw(&b.m, half)};
  pwr_mitigated x;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_CAP, kw, &x, NULL);
  double fc = cbrt(0.5);
  REL(x.min_throttle, fc, 1e-12);
  REL(x.time_cost_s, 3 * STEPS * 0.1 * (1 / fc - 1), 1e-9);
  REL(x.after.peak_kw, c.facility_cap_kw, 1e-12);
  assert_true(x.cap_met);
  /* energy: per computing row (idle + rest) x 0.1 / f + dynamic x f^2 x 0.1 */
  double rest = facility_kw(&b.m, 0), dyn = (TDP - IDLE) * GPUS * PUE * 1e-3;
  double e = STEPS * (facility_kw(&b.m, IDLE) * 0.1 +
                      3 * ((rest + IDLE * GPUS * PUE * 1e-3) * 0.1 / fc + dyn * fc * fc * 0.1));
  REL(x.energy_kwh, e / 3600, 1e-9);
  c.facility_cap_kw = facility_kw(&b.m, IDLE) / 2;
  pwr_mitigate(&b.m, &b.v.in, &c, PWR_MIT_CAP, kw, &x, NULL);
  assert_false(x.cap_met);
  REL(x.min_throttle, PWR_MIN_THROTTLE, 1e-15);
  bench_close(&b);
}

/* Bad power.mitigation.* at its key, file:line:col. */
static void test_mitigation_checked(void **state) {
  (void)state;
  static const char *const bad[][2] = {
      {"power.mitigation.floor=1.5", "power.mitigation.floor"},
      {"power.mitigation.pacing=2", "power.mitigation.pacing"},
      {"power.mitigation.battery.efficiency=1.1", "power.mitigation.battery.efficiency"},
      {"power.mitigation.ramp_up_w_per_s=1000", "power.timeseries"},
      {"power.mitigation.battery.kwh=5", "power.timeseries"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    fixture f;
    const char *sets[] = {"cluster.nodes=8", bad[i][0], "power.timeseries=true"};
    load(&f, sets, i < 3 ? 3 : 2);
    pwr_model m;
    sim_error err = {0};
    assert_int_equal(pwr_init(&m, &f.cfg, f.doc, topo_inventory_get(f.t), &err), SIM_ECONFIG);
    assert_non_null(strstr(err.msg, "--set:"));
    assert_non_null(strstr(err.msg, bad[i][1]));
    unload(&f);
  }
  static const char *const refused[] = {"power.mitigation.battery.efficiency=0",
                                        "power.mitigation.floor=-0.1"};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    cfg_scenario cfg;
    cfg_doc *doc = NULL;
    sim_error err = {0};
    assert_int_equal(cfg_load(&cfg, &doc, NULL, &refused[i], 1, &err), SIM_ECONFIG);
    assert_non_null(strstr(err.msg, "--set:1:"));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_battery_of_zero_capacity_changes_nothing),
      cmocka_unit_test(test_floor_at_compute_power),
      cmocka_unit_test(test_pacing_fills_the_waits),
      cmocka_unit_test(test_ramp_limit),
      cmocka_unit_test(test_battery_energy_balance),
      cmocka_unit_test(test_facility_cap),
      cmocka_unit_test(test_mitigation_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
