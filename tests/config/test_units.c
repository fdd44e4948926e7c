/* Unit parsing and canonical formatting: prefixes, exponents, exactness,
 * limits and the messages a user sees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/cfg_internal.h"
#include "fabsim/config.h"

static uint64_t bw(const char *text) {
  sim_error err = {0};
  rate_bps v = 0;
  int rc = cfg_parse_bandwidth(text, &v, &err);
  if (rc != SIM_OK) fail_msg("'%s': %s", text, err.msg);
  return v;
}

static uint64_t tm(const char *text) {
  sim_error err = {0};
  simtime_ps v = 0;
  int rc = cfg_parse_time(text, &v, &err);
  if (rc != SIM_OK) fail_msg("'%s': %s", text, err.msg);
  return v;
}

static uint64_t sz(const char *text) {
  sim_error err = {0};
  uint64_t v = 0;
  int rc = cfg_parse_size(text, &v, &err);
  if (rc != SIM_OK) fail_msg("'%s': %s", text, err.msg);
  return v;
}

/* The message of a rejected value (asserts that it is rejected). */
static const char *bad(int (*parse)(const char *, uint64_t *, sim_error *), const char *text,
                       sim_error *err) {
  uint64_t v = 12345;
  assert_int_equal(parse(text, &v, err), SIM_ECONFIG);
  assert_int_equal(err->code, SIM_ECONFIG);
  assert_int_equal(v, 12345); /* untouched on failure */
  return err->msg;
}

#define BW_UNITS                                                                            \
  "units: bits/s: bps, Kbps, Mbps, Gbps, Tbps (or Kb/s, Mb/s, Gb/s, Tb/s); bytes/s: KB/s, " \
  "MB/s, GB/s, TB/s (x1000) or KiB/s, MiB/s, GiB/s, TiB/s (x1024); a plain number is bits/s"
#define TIME_UNITS \
  "units: ps, ns, us (or \xc2\xb5s), ms, s, min, h, d; a plain number is only accepted for 0"
#define SIZE_UNITS \
  "units: B, KB, MB, GB, TB (x1000) or KiB, MiB, GiB, TiB (x1024); a plain number is bytes"

static void test_bandwidth_bits(void **state) {
  (void)state;
  assert_int_equal(bw("400Gbps"), 400000000000ULL);
  assert_int_equal(bw("400 Gbps"), 400000000000ULL);
  assert_int_equal(bw("400Gb/s"), 400000000000ULL);
  assert_int_equal(bw("1.6Tbps"), 1600000000000ULL);
  assert_int_equal(bw("1Tb/s"), 1000000000000ULL);
  assert_int_equal(bw("25Mbps"), 25000000ULL);
  assert_int_equal(bw("5Mb/s"), 5000000ULL);
  assert_int_equal(bw("10Kbps"), 10000ULL);
  assert_int_equal(bw("10Kb/s"), 10000ULL);
  assert_int_equal(bw("100bps"), 100ULL);
  assert_int_equal(bw("7.5e9"), 7500000000ULL); /* plain number: bits/s */
  assert_int_equal(bw("1e-3Gbps"), 1000000ULL);
  assert_int_equal(bw("0"), 0);
  assert_int_equal(bw("18446744073709551615"), UINT64_MAX);
  assert_int_equal(bw("1844674407370955161.5"), 1844674407370955162ULL); /* 20 digits, rounded */
}

static void test_bandwidth_bytes(void **state) {
  (void)state;
  assert_int_equal(bw("50GB/s"), 400000000000ULL); /* decimal, x8 */
  assert_int_equal(bw("450GB/s"), 3600000000000ULL);
  assert_int_equal(bw("3.35TB/s"), 26800000000000ULL);
  assert_int_equal(bw("2.039TB/s"), 16312000000000ULL);
  assert_int_equal(bw("1KB/s"), 8000ULL);
  assert_int_equal(bw("1MB/s"), 8000000ULL);
  assert_int_equal(bw("1KiB/s"), 8192ULL); /* binary, x8 */
  assert_int_equal(bw("1MiB/s"), 8ULL << 20);
  assert_int_equal(bw("1GiB/s"), 8ULL << 30);
  assert_int_equal(bw("1TiB/s"), 8ULL << 40);
  assert_int_equal(bw("1.5GiB/s"), 12ULL << 30);
}

static void test_bandwidth_rounds_to_bit(void **state) {
  (void)state;
  assert_int_equal(bw("1.4bps"), 1);
  assert_int_equal(bw("1.5bps"), 2);
  assert_int_equal(bw("0.1KiB/s"), 819); /* 819.2 */
  assert_int_equal(bw("1e-30Gbps"), 0);
}

static void test_bandwidth_errors(void **state) {
  sim_error err = {0};
  (void)state;
  /* a plain number below 1 Mb/s: a unit forgotten (issue 27, defect 2) */
  assert_string_equal(bad(cfg_parse_bandwidth, "400", &err),
                      "'400' has no unit, so it is 400 bits/s, below 1 Mb/s: a unit forgotten? "
                      "Give one (e.g. 400Gbps); " BW_UNITS);
  assert_non_null(strstr(bad(cfg_parse_bandwidth, "999999", &err), "999999 bits/s, below"));
  assert_non_null(strstr(bad(cfg_parse_bandwidth, "0.5e6", &err), "500000 bits/s, below"));
  assert_int_equal(bw("1000000"), 1000000ULL);
  assert_int_equal(bw("400bps"), 400ULL); /* with its unit: as written */
  assert_string_equal(bad(cfg_parse_bandwidth, "400gbps", &err),
                      "unknown unit 'gbps' in '400gbps' (units are case-sensitive: did you "
                      "mean 'Gbps'?); " BW_UNITS);
  /* b is bits and B bytes: the hint keeps the one written */
  assert_string_equal(bad(cfg_parse_bandwidth, "5mb/s", &err),
                      "unknown unit 'mb/s' in '5mb/s' (units are case-sensitive: did you mean "
                      "'Mb/s'?); " BW_UNITS);
  assert_string_equal(bad(cfg_parse_bandwidth, "5mB/s", &err),
                      "unknown unit 'mB/s' in '5mB/s' (units are case-sensitive: did you mean "
                      "'MB/s'?); " BW_UNITS);
  assert_string_equal(bad(cfg_parse_bandwidth, "400GBps", &err),
                      "unknown unit 'GBps' in '400GBps'; " BW_UNITS);
  assert_string_equal(bad(cfg_parse_bandwidth, "-1Gbps", &err),
                      "'-1Gbps' is negative; a bandwidth must be >= 0");
  assert_string_equal(bad(cfg_parse_bandwidth, "nan", &err),
                      "expected a bandwidth such as 400Gbps, got 'nan'; " BW_UNITS);
  assert_string_equal(bad(cfg_parse_bandwidth, "inf", &err),
                      "expected a bandwidth such as 400Gbps, got 'inf'; " BW_UNITS);
  assert_string_equal(bad(cfg_parse_bandwidth, "Gbps", &err),
                      "expected a bandwidth such as 400Gbps, got 'Gbps'; " BW_UNITS);
  assert_string_equal(bad(cfg_parse_bandwidth, "", &err),
                      "missing value; expected a bandwidth such as 400Gbps");
  assert_string_equal(bad(cfg_parse_bandwidth, NULL, &err), "missing value; expected a bandwidth");
  assert_string_equal(bad(cfg_parse_bandwidth, "18446744073709551616", &err),
                      "'18446744073709551616' is too large (the limit is 2^64-1 bits/s)");
  assert_string_equal(bad(cfg_parse_bandwidth, "1e30Tbps", &err),
                      "'1e30Tbps' is too large (the limit is 2^64-1 bits/s)");
  assert_string_equal(bad(cfg_parse_bandwidth, "1e999999999999Tbps", &err),
                      "'1e999999999999Tbps' is too large (the limit is 2^64-1 bits/s)");
  assert_string_equal(bad(cfg_parse_bandwidth, "1.23456789012345678912Gbps", &err),
                      "'1.23456789012345678912Gbps' has more than 20 significant digits");
  assert_string_equal(bad(cfg_parse_bandwidth, "1mbps", &err),
                      "unknown unit 'mbps' in '1mbps' (units are case-sensitive: did you mean "
                      "'Mbps'?); " BW_UNITS);
  assert_string_equal(bad(cfg_parse_bandwidth, "0x10Gbps", &err),
                      "unknown unit 'x10Gbps' in '0x10Gbps'; " BW_UNITS);
}

static void test_size(void **state) {
  (void)state;
  assert_int_equal(sz("1GiB"), 1ULL << 30);
  assert_int_equal(sz("1GB"), 1000000000ULL);
  assert_int_equal(sz("1 GiB"), 1ULL << 30);
  assert_int_equal(sz("80GiB"), 80ULL << 30);
  assert_int_equal(sz("192GB"), 192000000000ULL);
  assert_int_equal(sz("1.5GB"), 1500000000ULL);
  assert_int_equal(sz("4.35GB"), 4350000000ULL); /* exact decimal, no float rounding */
  assert_int_equal(sz("0.5KiB"), 512);
  assert_int_equal(sz("1KB"), 1000);
  assert_int_equal(sz("1KiB"), 1024);
  assert_int_equal(sz("1MB"), 1000000);
  assert_int_equal(sz("1MiB"), 1 << 20);
  assert_int_equal(sz("2TB"), 2000000000000ULL);
  assert_int_equal(sz("2TiB"), 2ULL << 40);
  assert_int_equal(sz("7.5e9"), 7500000000ULL); /* plain number: bytes */
  assert_int_equal(sz("4096"), 4096);
  assert_int_equal(sz("12B"), 12);
  assert_int_equal(sz("1.000000000000000000e3B"), 1000);
  assert_int_equal(sz("000000000000000000000000000042"), 42);
}

static void test_size_errors(void **state) {
  sim_error err = {0};
  (void)state;
  assert_string_equal(bad(cfg_parse_size, "1.5B", &err), "'1.5B' is not a whole number of bytes");
  assert_string_equal(bad(cfg_parse_size, "0.1KiB", &err),
                      "'0.1KiB' is not a whole number of bytes");
  assert_string_equal(bad(cfg_parse_size, "1gib", &err),
                      "unknown unit 'gib' in '1gib' (units are case-sensitive: did you mean "
                      "'GiB'?); " SIZE_UNITS);
  assert_string_equal(bad(cfg_parse_size, "1Gb", &err),
                      "unknown unit 'Gb' in '1Gb' (units are case-sensitive: did you mean "
                      "'GB'?); " SIZE_UNITS);
  assert_string_equal(bad(cfg_parse_size, "16777216TiB", &err),
                      "'16777216TiB' is too large (the limit is 2^64-1 bytes)");
  assert_string_equal(bad(cfg_parse_size, "-5", &err), "'-5' is negative; a size must be >= 0");
  assert_string_equal(bad(cfg_parse_size, "1e-400B", &err),
                      "'1e-400B' is not a whole number of bytes");
}

static void test_time(void **state) {
  (void)state;
  assert_int_equal(tm("2.5us"), 2500000);
  assert_int_equal(tm("500ns"), 500000);
  assert_int_equal(tm("500 ns"), 500000);
  assert_int_equal(tm("1.5ns"), 1500);
  assert_int_equal(tm("7ps"), 7);
  assert_int_equal(tm("1\xc2\xb5s"), 1000000); /* micro sign */
  assert_int_equal(tm("1\xce\xbcs"), 1000000); /* Greek mu */
  assert_int_equal(tm("1ms"), 1000000000ULL);
  assert_int_equal(tm("1s"), 1000000000000ULL);
  assert_int_equal(tm("1min"), 60000000000000ULL);
  assert_int_equal(tm("1h"), 3600000000000000ULL);
  assert_int_equal(tm("1d"), 86400000000000000ULL);
  assert_int_equal(tm("1e3ns"), 1000000);
  assert_int_equal(tm("0"), 0);
  assert_int_equal(tm("0.0"), 0);
  assert_int_equal(tm("213d"), 213ULL * 86400000000000000ULL);
}

static void test_time_errors(void **state) {
  sim_error err = {0};
  (void)state;
  assert_string_equal(bad(cfg_parse_time, "500", &err), "'500' needs a unit; " TIME_UNITS);
  assert_string_equal(bad(cfg_parse_time, "0.5ps", &err),
                      "'0.5ps' is not a whole number of picoseconds (the clock resolution)");
  assert_string_equal(bad(cfg_parse_time, "214d", &err),
                      "'214d' is too large (the limit is 2^64-1 ps)");
  assert_string_equal(bad(cfg_parse_time, "1US", &err),
                      "unknown unit 'US' in '1US' (units are case-sensitive: did you mean "
                      "'us'?); " TIME_UNITS);
  assert_string_equal(bad(cfg_parse_time, "1 sec", &err),
                      "unknown unit 'sec' in '1 sec'; " TIME_UNITS);
  assert_string_equal(bad(cfg_parse_time, "-1ns", &err), "'-1ns' is negative; a time must be >= 0");
  assert_string_equal(bad(cfg_parse_time, "5ns\x01", &err),
                      "unknown unit 'ns\\x01' in '5ns\\x01'; " TIME_UNITS);
}

/* Canonical text parses back to exactly the same integer, for values of every
 * magnitude, including ones with no short form. */
static void test_format_round_trip(void **state) {
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  char text[CFG__VALUE_TEXT];
  (void)state;
  for (int i = 0; i < 20000; i++) {
    uint64_t v;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = x >> (x % 64); /* every magnitude */
    if (i % 3 == 0)
      v = (x % 1000) * (uint64_t[]){1, 1000, 1000000, 1000000000, 1ULL << 30, 8000000000ULL}[i % 6];
    cfg__format_bandwidth(text, sizeof text, v, i & 1);
    assert_int_equal(bw(text), v);
    cfg__format_time(text, sizeof text, v);
    assert_int_equal(tm(text), v);
    cfg__format_size(text, sizeof text, v);
    assert_int_equal(sz(text), v);
  }
}

static void test_format_readable(void **state) {
  char t[CFG__VALUE_TEXT];
  (void)state;
  cfg__format_bandwidth(t, sizeof t, 400000000000ULL, 0);
  assert_string_equal(t, "400Gbps");
  cfg__format_bandwidth(t, sizeof t, 3600000000000ULL, 1);
  assert_string_equal(t, "450GB/s");
  cfg__format_bandwidth(t, sizeof t, 26800000000000ULL, 1);
  assert_string_equal(t, "3.35TB/s");
  cfg__format_bandwidth(t, sizeof t, 12, 1); /* not whole bytes: falls back to bits */
  assert_string_equal(t, "12bps");
  cfg__format_bandwidth(t, sizeof t, 0, 0);
  assert_string_equal(t, "0bps");
  cfg__format_time(t, sizeof t, 500000);
  assert_string_equal(t, "500ns");
  cfg__format_time(t, sizeof t, 2500000);
  assert_string_equal(t, "2.5us");
  cfg__format_time(t, sizeof t, 0);
  assert_string_equal(t, "0ns");
  cfg__format_size(t, sizeof t, 1ULL << 30);
  assert_string_equal(t, "1GiB");
  cfg__format_size(t, sizeof t, 192000000000ULL);
  assert_string_equal(t, "192GB");
  cfg__format_size(t, sizeof t, 4096);
  assert_string_equal(t, "4KiB");
  cfg__format_size(t, sizeof t, 1234567);
  assert_string_equal(t, "1234567B");
  cfg__format_size(t, sizeof t, 1500000);
  assert_string_equal(t, "1.5MB");
  cfg__format_double(t, sizeof t, 989e12);
  assert_string_equal(t, "9.89e14");
  cfg__format_double(t, sizeof t, 25000);
  assert_string_equal(t, "25000");
  cfg__format_double(t, sizeof t, 0.1);
  assert_string_equal(t, "0.1");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bandwidth_bits),
      cmocka_unit_test(test_bandwidth_bytes),
      cmocka_unit_test(test_bandwidth_rounds_to_bit),
      cmocka_unit_test(test_bandwidth_errors),
      cmocka_unit_test(test_size),
      cmocka_unit_test(test_size_errors),
      cmocka_unit_test(test_time),
      cmocka_unit_test(test_time_errors),
      cmocka_unit_test(test_format_round_trip),
      cmocka_unit_test(test_format_readable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
