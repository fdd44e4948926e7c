/* Power and cooling against hand sums: IT power at 0 and 100 % utilization,
 * facility power and energy per step, rack throttling over the cooling
 * capacity or power cap, per-GPU throttle factors, JSON keys. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/power.h"
#include "fixture.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * (fabs((double)(b)) + 1))

/* 8 nodes of 8 H100 (700 W TDP, 70 W idle), 8 NICs of 25 W, 3 kW servers,
 * 4 nodes per rack (2 racks). */
static void setup(fixture *f, pwr_model *m, const char *const *extra, int nextra) {
  /* the closed forms below are written for a 3 kW server besides GPUs and NICs */
  const char *sets[16] = {"cluster.nodes=8", "power.rack.cooling=liquid", "power.node_w=3000"};
  int n = 3;
  sim_error err = {0};
  for (int i = 0; i < nextra; i++) sets[n++] = extra[i];
  load(f, sets, n);
  if (pwr_init(m, &f->cfg, f->doc, topo_inventory_get(f->t), &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

/* The default server power reproduces the DGX datasheets' maximum at full load:
 * 8 GPUs at TDP + 8 NICs + power.node_w. */
static void test_dgx_presets(void **state) {
  (void)state;
  static const struct {
    const char *gpu;
    double kw;
  } dgx[] = {{"cluster.gpu=H100", 10.2}, {"cluster.gpu=A100", 6.5}, {"cluster.gpu=B200", 14.3}};
  for (size_t i = 0; i < sizeof dgx / sizeof *dgx; i++) {
    const char *sets[] = {"cluster.nodes=1", dgx[i].gpu};
    fixture f;
    load(&f, sets, 2);
    double w = 8 * f.cfg.power.gpu_tdp_w + 8 * f.cfg.power.nic_w + f.cfg.power.node_w;
    NEAR(w * 1e-3, dgx[i].kw);
    unload(&f);
  }
}

static void test_power_hand_sums(void **state) {
  (void)state;
  fixture f;
  pwr_model m;
  pwr_summary s;
  setup(&f, &m, NULL, 0);
  const topo_inventory *inv = topo_inventory_get(f.t);
  double fabric_kw = (double)inv->switches * f.cfg.fabric.switch_radix * 12 * 1e-3 +
                     (double)inv->transceivers * 9 * 1e-3;
  assert_true(m.racks == 2);
  /* idle: 64 GPUs x 70 W + 8 x (3000 + 8 x 25) W + fabric */
  pwr_summarize(&m, 0, 1, 3600, &s);
  NEAR(s.gpu_kw, 64 * 0.070);
  NEAR(s.it_kw, 64 * 0.070 + 8 * 3.2 + fabric_kw);
  NEAR(s.facility_kw, s.it_kw * 1.2);
  NEAR(s.energy_mwh_per_run, s.facility_kw * 1e-3);
  /* full load: 64 x 700 W */
  pwr_summarize(&m, 1, 2, 3600, &s);
  NEAR(s.gpu_kw, 64 * 0.700);
  NEAR(s.it_kw, 64 * 0.700 + 8 * 3.2 + fabric_kw);
  NEAR(s.energy_kwh_per_step, s.facility_kw * 2 / 3600);
  NEAR(s.cost_usd_per_step, s.energy_kwh_per_step * 0.08);
  assert_int_equal(s.racks_throttled, 0);
  NEAR(pwr_gpu_w(&m, 0.5), 385);
  pwr_free(&m);
  unload(&f);
}

static void test_throttle(void **state) {
  (void)state;
  fixture f;
  pwr_model m;
  /* rack demand at full load: 4 x (8 x 700 + 3000 + 200) = 35.2 kW; cooling 30 kW.
   * GPU budget = (30000 - 4 x 3200) / 32 = 537.5 W; f = cbrt((537.5-70)/(700-70)). */
  const char *sets[] = {"power.rack.cooling_kw=30"};
  setup(&f, &m, sets, 1);
  NEAR(pwr_rack_demand_w(&m, 0, 1), 35200);
  double want = cbrt((537.5 - 70) / 630.0);
  NEAR(pwr_rack_throttle(&m, 0, 1), want);
  NEAR(pwr_rack_throttle(&m, 1, 1), want);
  /* at 50 % utilization the rack draws 4 x (8 x 385 + 3200) = 25.1 kW: no throttle */
  NEAR(pwr_rack_throttle(&m, 0, 0.5), 1);
  /* delivered power equals the limit for a throttled rack */
  pwr_summary s;
  pwr_summarize(&m, 1, 1, 1, &s);
  NEAR(s.gpu_kw + s.server_kw + s.nic_kw, 2 * 30.0);
  assert_int_equal(s.racks_throttled, 2);
  NEAR(s.min_throttle, want);
  assert_true(s.it_kw < s.it_demand_kw);
  /* per-GPU factors; a cooling failure in rack 1 (10 kW: cannot idle its GPUs) */
  pwr_set_rack_limit(&m, 0, 0); /* lift rack 0 */
  pwr_set_rack_limit(&m, 1, 10);
  double g[70];
  pwr_gpu_throttle(&m, 1, g, 70);
  NEAR(g[0], 1);
  NEAR(g[31], 1);
  NEAR(g[32], PWR_MIN_THROTTLE);
  NEAR(g[63], PWR_MIN_THROTTLE);
  NEAR(g[64], 1); /* beyond the cluster */
  pwr_free(&m);
  unload(&f);
}

static void test_cap_and_summary(void **state) {
  (void)state;
  fixture f;
  pwr_model m;
  /* a 33 kW cap under 120 kW liquid cooling: GPU budget (33000 - 12800) / 32 = 631.25 W */
  const char *sets[] = {"power.rack.cap_kw=33"};
  setup(&f, &m, sets, 1);
  NEAR(pwr_rack_throttle(&m, 0, 1), cbrt((631.25 - 70) / 630.0));
  pwr_summary s;
  pwr_summarize(&m, 1, 3600, 3600, &s);
  assert_true(s.it_kw > 0 && s.it_kw < s.it_demand_kw); /* the cap takes from the demand */
  NEAR(s.facility_kw, s.it_kw * m.pue);
  NEAR(s.energy_kwh_per_step, s.facility_kw); /* an hour's step */
  assert_int_equal(s.racks_throttled, 2);
  /* the cap, not cooling, limits these racks; a cooling failure below it is cooling's, and
   * one above it leaves the cap in force */
  assert_string_equal(pwr_rack_limit_name(&m, 0), "power cap");
  pwr_set_rack_limit(&m, 1, 20);
  assert_string_equal(pwr_rack_limit_name(&m, 1), "cooling");
  pwr_set_rack_limit(&m, 1, 200);
  assert_string_equal(pwr_rack_limit_name(&m, 1), "power cap");
  NEAR(m.rack_limit_w[1], 33e3);
  pwr_free(&m);
  unload(&f);
  setup(&f, &m, NULL, 0); /* no cap: cooling */
  assert_string_equal(pwr_rack_limit_name(&m, 0), "cooling");
  pwr_free(&m);
  unload(&f);
  /* utilization above 1 is an error located at the key */
  const char *bad[] = {"cluster.nodes=8", "power.utilization=1.5"};
  sim_error err = {0};
  load(&f, bad, 2);
  assert_int_equal(pwr_init(&m, &f.cfg, f.doc, topo_inventory_get(f.t), &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "--set:2:"));
  assert_non_null(strstr(err.msg, "power.utilization"));
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_power_hand_sums),
      cmocka_unit_test(test_dgx_presets),
      cmocka_unit_test(test_throttle),
      cmocka_unit_test(test_cap_and_summary),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
