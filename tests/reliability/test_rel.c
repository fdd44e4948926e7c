/* Reliability planning against closed forms: MTTF = 1/(N r), with the rates of
 * every reliability.rates preset (Llama 3, RSC-1, RSC-2), Young and Daly
 * intervals, by-cause counts summing to the total, Erlang B, the exact ETTR
 * against the Monte Carlo (within its 95 % confidence interval) and against
 * Kokolis et al.'s first-order estimate, and the Monte Carlo's determinism
 * for a seed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/reliability.h"
#include "fixture.h"

static void load_params(rel_params *p, const char *const *sets, int n) {
  fixture f;
  sim_error err = {0};
  load(&f, sets, n);
  if (rel_params_from_config(p, &f.cfg, f.doc, topo_node_count(f.t), &err) != SIM_OK)
    fail_msg("%s", err.msg);
  unload(&f);
}

static void test_mttf(void **state) {
  (void)state;
  /* 5 failures per 1,000 node-days on 512 nodes: MTTF = 1 / (512 x 0.005 / day). */
  const char *sets[] = {"cluster.nodes=64", "reliability.node_failure_rate=5"};
  rel_params p;
  rel_result r;
  load_params(&p, sets, 2);
  p.nodes = 512;
  p.runs = 0;
  rel_evaluate(&p, &r);
  double want_s = 86400.0 / (512 * 0.005);
  assert_true(fabs(r.mttf_s - want_s) < 1e-9 * want_s);
  assert_true(fabs(r.rate_per_node_day * 1e3 - 5) < 1e-12);
  assert_true(fabs(rel_mttf_s(100, 1e-6) - 1e4) < 1e-6);
  assert_true(isinf(rel_mttf_s(100, 0)));
  /* 54 days: 512 x 0.005 x 54 interruptions, split by cause, summing to it. */
  double sum = 0;
  for (int i = 0; i < REL_CAUSES; i++) sum += r.expected_by_cause[i];
  assert_true(fabs(r.expected_total - 512 * 0.005 * 54) < 1e-9);
  assert_true(fabs(sum - r.expected_total) < 1e-9);
}

/* The defaults reproduce the Llama 3 report: 419 interruptions in 54 days on
 * 2,048 nodes, 148 of them faulty GPUs. */
static void test_llama3_defaults(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=64"};
  rel_params p;
  rel_result r;
  load_params(&p, sets, 1);
  p.nodes = 2048;
  p.runs = 0;
  rel_evaluate(&p, &r);
  assert_true(fabs(r.expected_total - 419) < 0.01);
  assert_true(fabs(r.expected_by_cause[REL_GPU] - 148) < 0.01);
  assert_true(fabs(r.expected_by_cause[REL_SOFTWARE] - 54) < 0.01);
  double sum = 0;
  for (int i = 0; i < REL_CAUSES; i++) sum += r.expected_by_cause[i];
  assert_true(fabs(sum - r.expected_total) < 1e-9);
  /* 4 GPUs per node halve the per-GPU causes only. */
  const char *half[] = {"cluster.nodes=64", "cluster.gpus_per_node=4"};
  rel_params q;
  load_params(&q, half, 2);
  assert_true(fabs(q.rate[REL_GPU] - p.rate[REL_GPU] / 2) < 1e-15);
  assert_true(fabs(q.rate[REL_SOFTWARE] - p.rate[REL_SOFTWARE]) < 1e-15);
  /* checkpoint write time = size / bandwidth: 6.48 TB at 2 TB/s. */
  assert_true(fabs(p.write_s - 3.24) < 1e-9);
  assert_true(p.interval_s == 0); /* auto */
}

/* The research-cluster presets reach the model: per node of 8 GPUs the rates
 * sum to Kokolis et al.'s r_f (RSC-1 6.50, RSC-2 2.34 per 1,000 node-days),
 * so a job of N nodes fails every 1 / (N r_f); at RSC-1's rate that is the
 * paper's own projection, 1.8 h at 16,384 GPUs and 0.23 h at 131,072. Per-GPU
 * causes scale with GPUs per node as before, and a rate the scenario sets
 * stays over the preset. */
static void test_rsc_presets(void **state) {
  static const struct {
    const char *set;
    double rf; /* per 1,000 node-days */
  } c[] = {{"reliability.rates=rsc-1", 6.50}, {"reliability.rates=rsc-2", 2.34}};
  static const uint32_t nodes[] = {1, 128, 2048, 16384};
  (void)state;
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    const char *sets[] = {"cluster.nodes=64", c[i].set};
    rel_params p;
    rel_result r;
    load_params(&p, sets, 2);
    p.runs = 0;
    for (size_t j = 0; j < sizeof nodes / sizeof nodes[0]; j++) {
      p.nodes = nodes[j];
      rel_evaluate(&p, &r);
      double want_s = 86400.0 / (nodes[j] * c[i].rf * 1e-3);
      assert_true(fabs(r.rate_per_node_day * 1e3 - c[i].rf) < 1e-6 * c[i].rf);
      assert_true(fabs(r.mttf_s - want_s) < 1e-6 * want_s);
    }
  }
  rel_params p, q;
  rel_result r;
  const char *rsc1[] = {"cluster.nodes=64", "reliability.rates=rsc-1"};
  load_params(&p, rsc1, 2);
  p.runs = 0;
  p.nodes = 2048;
  rel_evaluate(&p, &r);
  assert_true(fabs(r.mttf_s / 3600 - 1.8) < 0.01);
  p.nodes = 16384;
  rel_evaluate(&p, &r);
  assert_true(fabs(r.mttf_s / 3600 - 0.23) < 0.005);
  const char *half[] = {"cluster.nodes=64", "reliability.rates=rsc-1", "cluster.gpus_per_node=4"};
  load_params(&q, half, 3);
  assert_true(fabs(q.rate[REL_GPU] - p.rate[REL_GPU] / 2) < 1e-15);
  assert_true(fabs(q.rate[REL_SOFTWARE] - p.rate[REL_SOFTWARE]) < 1e-15);
  const char *own[] = {"cluster.nodes=64", "reliability.rates=rsc-2", "reliability.rate.network=5"};
  load_params(&q, own, 3);
  assert_true(fabs(q.rate[REL_NETWORK] * 86400e3 - 5) < 1e-12);
  assert_true(fabs(q.rate[REL_GPU] * 86400e3 - 0.826539) < 1e-12); /* rsc-2's */
}

static void test_young_daly(void **state) {
  (void)state;
  double delta = 60, m = 3 * 3600;
  assert_true(fabs(rel_young_s(delta, m) - sqrt(2 * delta * m)) < 1e-9);
  double x = delta / (2 * m);
  double daly = sqrt(2 * delta * m) * (1 + sqrt(x) / 3 + x / 9) - delta;
  assert_true(fabs(rel_daly_s(delta, m) - daly) < 1e-9);
  /* delta >= 2M: Daly's interval is M. */
  assert_true(rel_daly_s(7200, 3600) == 3600);
  assert_true(rel_daly_s(8000, 3600) == 3600);
  /* Just below 2M the formula applies: sqrt(2dM)(1 + 1/3 + 1/9) - d. */
  double d2 = 7199.0;
  double x2 = d2 / 7200.0;
  assert_true(
      fabs(rel_daly_s(d2, 3600) - (sqrt(2 * d2 * 3600) * (1 + sqrt(x2) / 3 + x2 / 9) - d2)) < 1e-9);
}

static void test_ettr_closed_form(void **state) {
  (void)state;
  /* No failures: tau / (tau + delta). */
  assert_true(fabs(rel_ettr(600, 60, 300, INFINITY) - 600.0 / 660) < 1e-15);
  /* Small lambda agrees with the first-order expansion
   * tau/(tau+delta) x (1 - ((tau+delta)/2 + R)/M). */
  double tau = 600, delta = 10, R = 300, M = 1e7;
  double first = tau / (tau + delta) * (1 - ((tau + delta) / 2 + R) / M);
  assert_true(fabs(rel_ettr(tau, delta, R, M) - first) < 1e-8);
  /* Kokolis et al.'s estimate (arXiv 2410.21680), E[ETTR] = (1 - N r_f (u0 + dt / 2)) /
   * (1 + w / dt), is the same expansion to first order in lambda = N r_f: at RSC-1's rate
   * for 2,048 GPUs (256 nodes), dt = 1 h, w = 1 min, u0 = 10 min they differ by the
   * second-order terms, about (lambda (dt + w + u0))^2 / 2, and lambda w / 2. */
  double lam = 256 * 6.50e-3 / 86400, dt = 3600, w = 60, u0 = 600;
  double kokolis = (1 - lam * (u0 + dt / 2)) / (1 + w / dt);
  double second = pow(lam * (dt + w + u0), 2) / 2 + lam * w / 2;
  assert_true(fabs(rel_ettr(dt, w, u0, 1 / lam) - kokolis) < second);
  assert_true(fabs(kokolis - 0.938) < 0.001);
  /* Daly's interval is close to the optimum of the exact form. */
  rel_params p = {0};
  rel_result r;
  p.nodes = 1000;
  p.days = 30;
  p.rate[REL_SOFTWARE] = 1.0 / (1000 * 7200.0); /* M = 2 h */
  p.write_s = 60;
  p.restart_s = 600;
  rel_evaluate(&p, &r);
  assert_true(fabs(r.mttf_s - 7200) < 1e-6);
  assert_true(fabs(r.daly_s - r.optimal_s) < 0.05 * r.optimal_s);
  assert_true(rel_ettr(r.optimal_s, 60, 600, 7200) >= rel_ettr(r.daly_s, 60, 600, 7200) - 1e-12);
  assert_true(rel_ettr(r.optimal_s, 60, 600, 7200) >= rel_ettr(r.young_s, 60, 600, 7200) - 1e-12);
}

static void test_erlang_b(void **state) {
  (void)state;
  assert_true(rel_erlang_b(0, 5) == 1);
  assert_true(fabs(rel_erlang_b(1, 1) - 0.5) < 1e-15); /* a / (1 + a) */
  assert_true(fabs(rel_erlang_b(2, 1) - 0.2) < 1e-15); /* (a^2/2) / (1 + a + a^2/2) */
  assert_true(fabs(rel_erlang_b(3, 2) - (8.0 / 6) / (1 + 2 + 2 + 8.0 / 6)) < 1e-15);
}

/* A job with M = 2 h, 30 days: the Monte Carlo's 95 % interval holds the
 * exact ETTR, with and without node swaps that wait for a cold node. */
static void test_monte_carlo_matches(void **state) {
  (void)state;
  rel_params p = {0};
  rel_result r;
  p.nodes = 1000;
  p.days = 30;
  p.rate[REL_SOFTWARE] = 0.5 / (1000 * 7200.0);
  p.rate[REL_GPU] = 0.5 / (1000 * 7200.0); /* node swaps; no spares: +1 h each */
  p.write_s = 120;
  p.interval_s = 1800;
  p.restart_s = 600;
  p.no_spare_delay_s = 3600;
  p.repair_s = 86400;
  p.runs = 3000;
  p.seed = 7;
  rel_evaluate(&p, &r);
  assert_true(fabs(r.mean_restart_s - (600 + 0.5 * 3600)) < 1e-9);
  assert_true(r.ettr_mc_ci95 > 0 && r.ettr_mc_ci95 < 0.005);
  if (fabs(r.ettr_mc - r.ettr_closed) > r.ettr_mc_ci95)
    fail_msg("closed %.6f vs Monte Carlo %.6f +- %.6f", r.ettr_closed, r.ettr_mc, r.ettr_mc_ci95);
  /* Ample spares: every swap finds one; the restart is restart_s alone. */
  p.spares = 200;
  rel_evaluate(&p, &r);
  assert_true(r.p_no_spare < 1e-12);
  assert_true(fabs(r.mean_restart_s - 600) < 1e-6);
  if (fabs(r.ettr_mc - r.ettr_closed) > r.ettr_mc_ci95)
    fail_msg("spares: closed %.6f vs Monte Carlo %.6f +- %.6f", r.ettr_closed, r.ettr_mc,
             r.ettr_mc_ci95);
  assert_true(fabs(r.goodput_frac - r.ettr_closed * 1000 / 1200) < 1e-12);
}

/* A few spares against the Erlang loss estimate: between none and ample. */
static void test_spares_effect(void **state) {
  (void)state;
  rel_params p = {0};
  rel_result none, few, many;
  p.nodes = 2048;
  p.days = 54;
  p.rate[REL_GPU] = 3.0 / 1000 / 86400;
  p.write_s = 30;
  p.restart_s = 600;
  p.no_spare_delay_s = 7200;
  p.repair_s = 3 * 86400;
  p.runs = 300;
  p.seed = 3;
  rel_evaluate(&p, &none);
  p.spares = 16;
  rel_evaluate(&p, &few);
  p.spares = 64;
  rel_evaluate(&p, &many);
  assert_true(none.ettr_closed < few.ettr_closed && few.ettr_closed < many.ettr_closed);
  assert_true(none.ettr_mc < few.ettr_mc && few.ettr_mc < many.ettr_mc);
  /* offered load: 2048 x 3/1000 per day x 3 days = 18.4 spares, times the share of wall
   * time the job runs (swaps arrive only then), 1 / (1 + lambda R) at the fixed point */
  double up = 1 / (1 + few.lambda_per_s * few.mean_restart_s);
  assert_true(fabs(few.p_no_spare - rel_erlang_b(16, 2048 * 0.003 * 3 * up)) < 1e-9);
  assert_true(fabs(few.mean_restart_s - (600 + few.p_no_spare * 7200)) < 1e-6);
}

static void test_deterministic(void **state) {
  (void)state;
  rel_params p = {0};
  rel_result a, b, c;
  p.nodes = 512;
  p.days = 20;
  p.rate[REL_GPU] = 4.0 / 1000 / 86400;
  p.rate[REL_NCCL] = 1.0 / 1000 / 86400;
  p.write_s = 30;
  p.restart_s = 300;
  p.spares = 2;
  p.repair_s = 86400;
  p.no_spare_delay_s = 3600;
  p.runs = 500;
  p.seed = 42;
  rel_evaluate(&p, &a);
  rel_evaluate(&p, &b);
  assert_memory_equal(&a, &b, sizeof a);
  p.seed = 43;
  rel_evaluate(&p, &c);
  assert_true(c.ettr_mc != a.ettr_mc);
}

static void test_config_errors(void **state) {
  (void)state;
  fixture f;
  rel_params p;
  sim_error err = {0};
  /* a bad interval is refused when the scenario loads (config/validate.c),
   * located at its key, before any module reads it */
  const char *bad[] = {"cluster.nodes=4", "reliability.checkpoint.interval=soon"};
  cfg_scenario cfg;
  cfg_doc *doc;
  assert_int_equal(cfg_load(&cfg, &doc, NULL, bad, 2, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "--set:2:"));
  assert_non_null(strstr(err.msg, "reliability.checkpoint.interval"));
  assert_non_null(strstr(err.msg, "'soon' is not a checkpoint interval"));
  /* the reliability verb's own reader (its --sweep-interval list) says the same */
  double s;
  assert_int_equal(rel_parse_interval("soon", &s, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "'soon' is neither auto nor a duration"));
  const char *good[] = {"cluster.nodes=4", "reliability.checkpoint.interval=45min",
                        "reliability.checkpoint.write_time=2min"};
  load(&f, good, 3);
  assert_int_equal(rel_params_from_config(&p, &f.cfg, f.doc, 4, &err), SIM_OK);
  assert_true(fabs(p.interval_s - 2700) < 1e-9 && fabs(p.write_s - 120) < 1e-9);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mttf),
      cmocka_unit_test(test_llama3_defaults),
      cmocka_unit_test(test_rsc_presets),
      cmocka_unit_test(test_young_daly),
      cmocka_unit_test(test_ettr_closed_form),
      cmocka_unit_test(test_erlang_b),
      cmocka_unit_test(test_monte_carlo_matches),
      cmocka_unit_test(test_spares_effect),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_config_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
