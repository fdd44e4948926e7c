/* The one rule for figures a person reads (src/core/fmt.c): units by
 * magnitude with the mantissa in [1, 1000) and 4 significant digits,
 * rounding into the next unit, thousands separators, percentages with 3
 * significant digits, plural words, never e-notation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fabsim/core.h"

typedef struct row {
  double v;
  sim_unit unit;
  const char *want;
} row;

static const row rows[] = {
    /* seconds: ps .. s, then separators */
    {0, SIM_UNIT_SECONDS, "0 s"},
    {4.15167e-06, SIM_UNIT_SECONDS, "4.152 us"},
    {3.066e-2, SIM_UNIT_SECONDS, "30.66 ms"},
    {1.5e-12, SIM_UNIT_SECONDS, "1.5 ps"},
    {2.5e-16, SIM_UNIT_SECONDS, "0.00025 ps"},
    {999.95e-6, SIM_UNIT_SECONDS, "1 ms"},
    {999.94e-6, SIM_UNIT_SECONDS, "999.9 us"},
    {12345.6, SIM_UNIT_SECONDS, "12,346 s"},
    {-0.0025, SIM_UNIT_SECONDS, "-2.5 ms"},
    /* power and energy */
    {1e4, SIM_UNIT_WATTS, "10 kW"},
    {2e7, SIM_UNIT_WATTS, "20 MW"},
    {999.95, SIM_UNIT_WATTS, "1 kW"},
    {742.5, SIM_UNIT_WATTS, "742.5 W"},
    {3.5e6, SIM_UNIT_WATTHOURS, "3.5 MWh"},
    {0.0002299, SIM_UNIT_WATTHOURS, "0.2299 mWh"},
    {0.007033, SIM_UNIT_WATTHOURS, "7.033 mWh"},
    /* rates: SI */
    {9.537e-05 * 1e9, SIM_UNIT_BYTERATE, "95.37 kB/s"},
    {4e11, SIM_UNIT_BITRATE, "400 Gb/s"},
    {5.12e13, SIM_UNIT_BITRATE, "51.2 Tb/s"},
    {0.5, SIM_UNIT_BITRATE, "0.5 b/s"},
    /* bytes: binary, up at 1000 */
    {512, SIM_UNIT_BYTES, "512 B"},
    {1536, SIM_UNIT_BYTES, "1.5 KiB"},
    {1000 * 1024, SIM_UNIT_BYTES, "0.9766 MiB"},
    {80.0 * 1024 * 1024 * 1024, SIM_UNIT_BYTES, "80 GiB"},
    /* money */
    {123.456, SIM_UNIT_USD, "$123.5"},
    {1234567, SIM_UNIT_USD, "$1.235M"},
    {4.2e9, SIM_UNIT_USD, "$4.2B"},
    {-12500, SIM_UNIT_USD, "-$12.5K"},
    /* plain numbers, counts and fractions */
    {0.52913, SIM_UNIT_PERCENT, "52.9%"},
    {1, SIM_UNIT_PERCENT, "100%"},
    {0.0012345, SIM_UNIT_PERCENT, "0.123%"},
    {7608.6, SIM_UNIT_PERCENT, "760,860%"},
    {0.52913, SIM_UNIT_NUMBER, "0.5291"},
    {3, SIM_UNIT_NUMBER, "3"},
    {1234567.8, SIM_UNIT_NUMBER, "1,234,568"},
    {-0.00001234, SIM_UNIT_NUMBER, "-0.00001234"},
    {1234567.4, SIM_UNIT_COUNT, "1,234,567"},
    {-1234, SIM_UNIT_COUNT, "-1,234"},
    {-0.0, SIM_UNIT_NUMBER, "0"},
    /* durations a person plans by */
    {42.25, SIM_UNIT_DURATION, "42.25 s"},
    {59.9996, SIM_UNIT_DURATION, "1 min"},
    {450, SIM_UNIT_DURATION, "7.5 min"},
    {3599.99, SIM_UNIT_DURATION, "1 h"},
    {10500, SIM_UNIT_DURATION, "2.917 h"},
    {3 * 86400, SIM_UNIT_DURATION, "3 days"},
    {4000 * 86400.0, SIM_UNIT_DURATION, "4,000 days"},
};

static void test_table(void **state) {
  (void)state;
  char buf[64];
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    sim_fmt(buf, sizeof buf, rows[i].v, rows[i].unit);
    if (strcmp(buf, rows[i].want))
      fail_msg("row %zu: %.17g gives \"%s\", not \"%s\"", i, rows[i].v, buf, rows[i].want);
    assert_null(strchr(buf, 'e')); /* never e-notation */
  }
}

/* The typed wrappers the printers call follow the same rule. */
static void test_wrappers(void **state) {
  (void)state;
  char buf[64];
  assert_string_equal(sim_fmt_seconds(buf, sizeof buf, 3.066e-2), "30.66 ms");
  assert_string_equal(sim_fmt_seconds(buf, sizeof buf, 4.15167e-06), "4.152 us");
  assert_string_equal(sim_fmt_seconds(buf, sizeof buf, 12345.6), "12,346 s"); /* 1.235e+04 s */
  assert_string_equal(sim_fmt_seconds(buf, sizeof buf, 999.95e-6), "1 ms");   /* 1000 us */
  assert_string_equal(sim_fmt_usd(buf, sizeof buf, 123.456), "$123.5");
  assert_string_equal(sim_fmt_rate(buf, sizeof buf, 400000000000ull), "400 Gb/s");
  assert_string_equal(sim_fmt_rate(buf, sizeof buf, 12800ull), "12.8 kb/s");
  assert_string_equal(sim_fmt_bytes(buf, sizeof buf, 1536), "1.5 KiB");
  assert_string_equal(sim_fmt_usd(buf, sizeof buf, 1234567), "$1.235M");
  assert_string_equal(sim_fmt_count(buf, sizeof buf, 1234567), "1,234,567");
  assert_string_equal(sim_fmt_count(buf, sizeof buf, 0), "0");
  assert_string_equal(sim_fmt_count(buf, 6, 1234567), "1,234"); /* cut, never overrun */
}

static void test_nouns(void **state) {
  (void)state;
  char buf[64];
  assert_string_equal(sim_fmt_noun(buf, sizeof buf, 1, "switch"), "1 switch");
  assert_string_equal(sim_fmt_noun(buf, sizeof buf, 2, "switch"), "2 switches");
  assert_string_equal(sim_fmt_noun(buf, sizeof buf, 0, "GPU"), "0 GPUs");
  assert_string_equal(sim_fmt_noun(buf, sizeof buf, 1024, "GPU"), "1,024 GPUs");
  assert_string_equal(sim_fmt_noun(buf, sizeof buf, 3, "spine crossing"), "3 spine crossings");
  assert_string_equal(sim_fmt_noun(buf, sizeof buf, 2, "policy"), "2 policies");
  assert_string_equal(sim_fmt_noun(buf, sizeof buf, 2, "day"), "2 days");
  assert_string_equal(sim_fmt_noun(buf, sizeof buf, 1, "leaf|leaves"), "1 leaf");
  assert_string_equal(sim_fmt_noun(buf, sizeof buf, 4, "leaf|leaves"), "4 leaves");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_wrappers),
      cmocka_unit_test(test_nouns),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
