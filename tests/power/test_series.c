/* Power over time (src/power/series.c) against closed forms: the energy of a
 * flat load is pwr_summarize's, the swing of a square wave between compute
 * and idle is (TDP - idle) x GPUs x PUE, the ramp's definition, and a
 * sinusoid's energy lands in its band (Parseval). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/power.h"
#include "fixture.h"

#define REL(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol)*fabs((double)(b)))

static const double two_pi = 6.283185307179586476925286766559;

/* 8 nodes of 8 H100 (700 W TDP, 70 W idle), 2 racks of 4; cap: a rack
 * cap of 33 kW (each rack throttles at full load) or none. */
static void setup_cap(fixture *f, pwr_model *m, bool cap) {
  const char *sets[] = {"cluster.nodes=8", "power.rack.cooling=liquid", "power.rack.cap_kw=33"};
  sim_error err = {0};
  load(f, sets, cap ? 3 : 2);
  if (pwr_init(m, &f->cfg, f->doc, topo_inventory_get(f->t), &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

static void setup(fixture *f, pwr_model *m) { setup_cap(f, m, false); }

/* Every GPU computes the whole run: sum of P x len = facility kW x time. */
static void flat_load_energy(bool cap) {
  fixture f;
  pwr_model m;
  setup_cap(&f, &m, cap);
  assert_true(cap == (pwr_rack_throttle(&m, 0, 1) < 1));
  enum { N = 9 };
  double start[N], len[N], u[N], kw[N], t = 0;
  for (int i = 0; i < N; i++) {
    len[i] = i == N - 1 ? 0.0137 : 0.25; /* the last row is short */
    start[i] = t, t += len[i], u[i] = 1;
  }
  pwr_series_in in = {.rows = N, .start_s = start, .len_s = len, .compute = u, .throttle_u = 1};
  pwr_over_time o;
  pwr_over_time_of(&m, &in, kw, NULL, NULL, &o, NULL);
  pwr_summary s;
  pwr_summarize(&m, 1, 1, t, &s);
  REL(o.energy_kwh, s.facility_kw * t / 3600, 1e-9);
  REL(o.energy_kwh * 1e-3, s.energy_mwh_per_run, 1e-9);
  REL(o.peak_kw, s.facility_kw, 1e-12);
  REL(o.mean_kw, s.facility_kw, 1e-12);
  assert_true(o.ramp_kw_per_s == 0 && o.swing_max_kw == 0);
  assert_int_equal(o.dft_rows, N - 1); /* the short row is left out of the spectrum */
  pwr_free(&m);
  unload(&f);
}

static void test_flat_load_energy(void **state) {
  (void)state;
  flat_load_energy(false);
  flat_load_energy(true); /* racks throttled at full load: p = idle + (TDP - idle) f^3 */
}

/* Steps of 4 rows: 3 computing, 1 waiting on the network (idle power). */
static void test_square_wave_swing_and_ramp(void **state) {
  (void)state;
  fixture f;
  pwr_model m;
  setup(&f, &m);
  enum { STEPS = 5, N = 4 * STEPS };
  double start[N], len[N], u[N], sb[STEPS], se[STEPS];
  for (int i = 0; i < N; i++) start[i] = 0.1 * i, len[i] = 0.1, u[i] = i % 4 == 3 ? 0 : 1;
  for (int k = 0; k < STEPS; k++) sb[k] = 0.4 * k, se[k] = 0.4 * (k + 1);
  pwr_series_in in = {.rows = N,
                      .start_s = start,
                      .len_s = len,
                      .compute = u,
                      .throttle_u = -1,
                      .steps = STEPS,
                      .step_begin_s = sb,
                      .step_end_s = se};
  pwr_over_time o;
  pwr_over_time_of(&m, &in, NULL, NULL, NULL, &o, NULL);
  double closed = (700.0 - 70.0) * 64 * 1.2 * 1e-3; /* (TDP - idle) x GPUs x PUE, kW */
  REL(o.swing_mean_kw, closed, 1e-12);
  REL(o.swing_max_kw, closed, 1e-12);
  assert_int_equal(o.steps_resolved, STEPS);
  REL(o.ramp_kw_per_s, closed / 0.1, 1e-12); /* one row's change over one row's time */
  REL(o.peak_kw - o.trough_kw, closed, 1e-12);
  /* mean = trough + 3/4 of the swing */
  REL(o.mean_kw, o.trough_kw + 0.75 * closed, 1e-12);
  /* steps shorter than two rows: no swing to report */
  double sb1[1] = {0}, se1[1] = {0.1};
  in.steps = 1, in.step_begin_s = sb1, in.step_end_s = se1;
  pwr_over_time_of(&m, &in, NULL, NULL, NULL, &o, NULL);
  assert_int_equal(o.steps_resolved, 0);
  assert_true(isnan(o.swing_mean_kw));
  pwr_free(&m);
  unload(&f);
}

/* 3 sin(2 pi 0.7 t) + 0.5 sin(2 pi 12 t) over 10 s at 100 Hz: 4.5 kW^2 in
 * [0.5, 1) Hz, 0.125 in [10, 20), nothing in [1, 10), and the whole is the
 * variance. */
static void test_band_power_of_sinusoids(void **state) {
  (void)state;
  enum { N = 1000 };
  double x[N], dt = 0.01, var = 0;
  for (int i = 0; i < N; i++)
    x[i] = 5 + 3 * sin(two_pi * 0.7 * i * dt) + 0.5 * sin(two_pi * 12 * i * dt);
  for (int i = 0; i < N; i++) var += (x[i] - 5) * (x[i] - 5) / N;
  size_t bins;
  REL(pwr_band_power(x, N, dt, 0.5, 1, &bins), 4.5, 1e-9);
  assert_int_equal(bins, 5); /* 0.5, 0.6, ..., 0.9 Hz */
  REL(pwr_band_power(x, N, dt, 10, 20, &bins), 0.125, 1e-9);
  assert_true(pwr_band_power(x, N, dt, 1, 10, &bins) < 1e-20);
  REL(pwr_band_power(x, N, dt, 0, INFINITY, &bins), var, 1e-9);
  assert_int_equal(bins, N / 2);
  /* a band above the Nyquist frequency holds no bin */
  assert_true(pwr_band_power(x, N, dt, 60, 80, &bins) == 0 && bins == 0);
}

/* The bands through pwr_over_time_of: a facility series swinging at 2.5 Hz
 * (rows of 0.1 s: compute 1, 1, 0, 0, ...) has its fundamental in [2, 3). */
static void test_band_rms_of_facility(void **state) {
  (void)state;
  fixture f;
  pwr_model m;
  setup(&f, &m);
  enum { N = 400 };
  double start[N], len[N], u[N];
  for (int i = 0; i < N; i++) start[i] = 0.1 * i, len[i] = 0.1, u[i] = (i / 2) % 2 ? 0 : 1;
  double lo[] = {0, 2, 3}, hi[] = {2, 3, 5}, rms[3];
  pwr_series_in in = {.rows = N,
                      .start_s = start,
                      .len_s = len,
                      .compute = u,
                      .throttle_u = -1,
                      .bands = 3,
                      .band_lo_hz = lo,
                      .band_hi_hz = hi};
  pwr_over_time o;
  pwr_over_time_of(&m, &in, NULL, NULL, NULL, &o, rms);
  double a = (700.0 - 70.0) * 64 * 1.2 * 1e-3 / 2; /* the square wave's half swing */
  REL(o.variance_kw2, a * a, 1e-9);
  /* a square wave of 4 samples a period has all its variance in its
   * fundamental (the DFT of +a +a -a -a is 0 at k = 2): a^2 in [2, 3) */
  REL(rms[1], a, 1e-9);
  assert_true(rms[0] < 1e-9 * a && rms[2] < 1e-9 * a);
  assert_true(o.nyquist_hz == 5 && fabs(o.resolution_hz - 0.025) < 1e-15);
  pwr_free(&m);
  unload(&f);
}

/* power.bands: bad text at its key, file:line:col. */
static void test_bands_checked(void **state) {
  (void)state;
  static const char *const bad[] = {"power.bands=2-1", "power.bands=-1-2", "power.bands=1-2,1.5-3",
                                    "power.bands=1-x", "power.bands=1"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cfg_scenario cfg;
    cfg_doc *doc = NULL;
    sim_error err = {0};
    const char *sets[] = {bad[i]};
    assert_int_equal(cfg_load(&cfg, &doc, NULL, sets, 1, &err), SIM_ECONFIG);
    assert_non_null(strstr(err.msg, "--set:1:"));
    assert_non_null(strstr(err.msg, "power.bands"));
  }
  fixture f;
  const char *good[] = {"power.bands=0.1-1,1-20,20-60"};
  load(&f, good, 1);
  double lo[4], hi[4];
  assert_int_equal(cfg_power_bands(&f.cfg, lo, hi, 4), 3);
  assert_true(lo[0] == 0.1 && hi[0] == 1 && lo[2] == 20 && hi[2] == 60);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flat_load_energy),
      cmocka_unit_test(test_square_wave_swing_and_ramp),
      cmocka_unit_test(test_band_power_of_sinusoids),
      cmocka_unit_test(test_band_rms_of_facility),
      cmocka_unit_test(test_bands_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
