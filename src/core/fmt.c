/* Human-readable numbers for the terminal and messages: one rule for every
 * figure a person reads (docs/changes.md, issue 29).
 *
 * - A figure with a unit is scaled by its magnitude so the mantissa sits in
 *   [1, 1000): SI steps of 1000 (ps..s, b/s..Pb/s, B/s..PB/s, W..GW,
 *   mWh..GWh, $..$T) or binary steps of 1024 for bytes (B, KiB .. EiB, which
 *   also move up at 1000, so no mantissa has more than three integer digits).
 * - The mantissa has 4 significant digits, trailing zeros dropped (12.35 us,
 *   30.7 ms, 400 Gb/s); one that rounds to 1000 moves to the next unit
 *   (999.95 W is 1 kW).
 * - Past the largest unit, or for a plain number >= 1000, the figure is an
 *   integer with thousands separators (12,346 s; 1,234,567).
 * - Below the smallest unit or 1, as many decimals as 4 significant digits
 *   need, never more than 20 (0.0001234). Never e-notation.
 * - A fraction (MFU, utilization) is a percentage with 3 significant digits:
 *   0.52913 is 52.9%.
 * - A duration a person plans by (MTTF, a checkpoint interval) is in
 *   seconds under a minute, then min under an hour, h under 48 h, then days.
 * - Counts are integers with thousands separators; a counted word takes its
 *   plural unless the count is 1 (1 switch, 2 switches).
 * - A negative figure is its magnitude's text after a '-'. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/core.h"

/* The terminal's edge: a figure that is not finite is never printed. */
static void finite_or_exit(double v, const char *what) {
  if (isfinite(v)) return;
  fprintf(stderr,
          "fabsim: the terminal: a %s figure is %s, not a number a run can report (a bug: "
          "please report the scenario)\n",
          what,
          isnan(v) ? "nan"
          : v > 0  ? "inf"
                   : "-inf");
  exit(1);
}

/* digits (an optional '-' then decimal digits) with a ',' every three. */
static void group_digits(char *buf, size_t n, const char *digits) {
  size_t w = 0, len = strlen(digits), lead = digits[0] == '-';
  for (size_t i = 0; i < len && w + 1 < n; i++) {
    if (i > lead && (len - i) % 3 == 0 && w + 2 < n) buf[w++] = ',';
    buf[w++] = digits[i];
  }
  if (n) buf[w < n ? w : n - 1] = '\0';
}

const char *sim_fmt_count(char *buf, size_t n, uint64_t v) {
  char tmp[32];
  snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
  group_digits(buf, n, tmp);
  return buf;
}

/* m >= 0 with sig significant digits in fixed notation, trailing zeros
 * dropped; >= 1000 as a grouped integer. */
static void mantissa(char *buf, size_t n, double m, int sig) {
  char tmp[400];
  if (m >= 1000) {
    snprintf(tmp, sizeof tmp, "%.0f", m);
    group_digits(buf, n, tmp);
    return;
  }
  int decimals = m > 0 ? sig - 1 - (int)floor(log10(m)) : 0;
  if (decimals < 0) decimals = 0;
  if (decimals > 20) decimals = 20;
  snprintf(tmp, sizeof tmp, "%.*f", decimals, m);
  if (strchr(tmp, '.')) {
    size_t l = strlen(tmp);
    while (tmp[l - 1] == '0') tmp[--l] = '\0';
    if (tmp[l - 1] == '.') tmp[--l] = '\0';
  }
  snprintf(buf, n, "%s", tmp);
}

/* A unit ladder: names from the smallest, the step between them, and which
 * one the value is given in. */
typedef struct ladder {
  const char *const *name;
  int count, base;
  double step;
  const char *prefix; /* before the number ("$") instead of a unit after it */
} ladder;

static const char *const seconds_u[] = {"ps", "ns", "us", "ms", "s"};
static const char *const bytes_u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
static const char *const bits_u[] = {"b/s", "kb/s", "Mb/s", "Gb/s", "Tb/s", "Pb/s"};
static const char *const byterate_u[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
static const char *const watts_u[] = {"W", "kW", "MW", "GW"};
static const char *const wh_u[] = {"mWh", "Wh", "kWh", "MWh", "GWh"};
static const char *const usd_u[] = {"", "K", "M", "B", "T"};

static const ladder ladders[] = {
    [SIM_UNIT_SECONDS] = {seconds_u, 5, 4, 1000, NULL},
    [SIM_UNIT_BYTES] = {bytes_u, 7, 0, 1024, NULL},
    [SIM_UNIT_BITRATE] = {bits_u, 6, 0, 1000, NULL},
    [SIM_UNIT_BYTERATE] = {byterate_u, 6, 0, 1000, NULL},
    [SIM_UNIT_WATTS] = {watts_u, 4, 0, 1000, NULL},
    [SIM_UNIT_WATTHOURS] = {wh_u, 5, 1, 1000, NULL},
    [SIM_UNIT_USD] = {usd_u, 5, 0, 1000, "$"},
};

static void scaled(char *buf, size_t n, double v, const ladder *l) {
  int u = l->base;
  double m = v;
  if (m >= 1000)
    while (m >= 1000 && u + 1 < l->count) m /= l->step, u++;
  else
    while (m > 0 && m < 1 && u > 0) m *= l->step, u--;
  char num[400];
  mantissa(num, sizeof num, m, 4);
  if (strtod(num, NULL) >= 1000 && m < 1000 && u + 1 < l->count) /* 999.95 -> 1 k */
    mantissa(num, sizeof num, m / l->step, 4), u++;
  if (l->prefix) snprintf(buf, n, "%s%s%s", l->prefix, num, l->name[u]);
  else snprintf(buf, n, "%s %s", num, l->name[u]);
}

/* s >= 1 in s, min, h or days: the first unit whose 4-digit mantissa
 * rounds below its next step (59.99 s, 59.99 min, 47.99 h), days grouped. */
static void duration(char *buf, size_t n, double s) {
  static const struct {
    const char *name;
    double s, below;
  } u[] = {{"s", 1, 60}, {"min", 60, 60}, {"h", 3600, 48}, {"days", 86400, INFINITY}};
  char num[400];
  for (size_t i = 0;; i++) {
    if (s / u[i].s >= u[i].below) continue;
    mantissa(num, sizeof num, s / u[i].s, 4);
    if (strtod(num, NULL) < u[i].below) { /* (only days, the last, are grouped) */
      snprintf(buf, n, "%s %s", num, u[i].name);
      return;
    }
  }
}

const char *sim_fmt(char *buf, size_t n, double v, sim_unit unit) {
  static const char *const what[] = {
      [SIM_UNIT_NUMBER] = "plain",     [SIM_UNIT_COUNT] = "count",
      [SIM_UNIT_SECONDS] = "seconds",  [SIM_UNIT_BYTES] = "bytes",
      [SIM_UNIT_BITRATE] = "bit rate", [SIM_UNIT_BYTERATE] = "byte rate",
      [SIM_UNIT_WATTS] = "power",      [SIM_UNIT_WATTHOURS] = "energy",
      [SIM_UNIT_USD] = "dollar",       [SIM_UNIT_PERCENT] = "fraction",
      [SIM_UNIT_DURATION] = "duration"};
  finite_or_exit(v, what[unit]);
  if (n == 0) return buf;
  const char *sign = "";
  if (v < 0) sign = "-";
  v = fabs(v); /* and -0 is 0 */
  char body[448];
  switch (unit) {
  case SIM_UNIT_NUMBER: mantissa(body, sizeof body, v, 4); break;
  case SIM_UNIT_COUNT: mantissa(body, sizeof body, round(v), 4); break;
  case SIM_UNIT_DURATION:
    if (v < 1) scaled(body, sizeof body, v, &ladders[SIM_UNIT_SECONDS]);
    else duration(body, sizeof body, v);
    break;
  case SIM_UNIT_PERCENT:
    mantissa(body, sizeof body, v * 100, 3);
    snprintf(body + strlen(body), sizeof body - strlen(body), "%%");
    break;
  default: scaled(body, sizeof body, v, &ladders[unit]); break;
  }
  if (!strcmp(body, "0") || !strncmp(body, "0 ", 2) || !strcmp(body, "$0") || !strcmp(body, "0%"))
    sign = ""; /* no "-0" */
  snprintf(buf, n, "%s%s", sign, body);
  return buf;
}

const char *sim_fmt_bytes(char *buf, size_t n, uint64_t bytes) {
  return sim_fmt(buf, n, (double)bytes, SIM_UNIT_BYTES);
}

const char *sim_fmt_rate(char *buf, size_t n, uint64_t bps) {
  return sim_fmt(buf, n, (double)bps, SIM_UNIT_BITRATE);
}

const char *sim_fmt_seconds(char *buf, size_t n, double s) {
  return sim_fmt(buf, n, s, SIM_UNIT_SECONDS);
}

const char *sim_fmt_usd(char *buf, size_t n, double usd) {
  return sim_fmt(buf, n, usd, SIM_UNIT_USD);
}

const char *sim_fmt_noun(char *buf, size_t n, uint64_t count, const char *word) {
  char num[32], w[64];
  const char *bar = strchr(word, '|'); /* "leaf|leaves": an irregular plural */
  size_t len = bar ? (size_t)(bar - word) : strlen(word);
  if (count == 1 || len >= sizeof w - 3) {
    snprintf(w, sizeof w, "%.*s", (int)len, word);
  } else if (bar) {
    snprintf(w, sizeof w, "%s", bar + 1);
  } else {
    char last = len ? word[len - 1] : 0, before = len > 1 ? word[len - 2] : 0;
    if (last == 's' || last == 'x' || (last == 'h' && (before == 'c' || before == 's')))
      snprintf(w, sizeof w, "%.*ses", (int)len, word);
    else if (last == 'y' && !strchr("aeiou", before))
      snprintf(w, sizeof w, "%.*sies", (int)len - 1, word);
    else snprintf(w, sizeof w, "%.*ss", (int)len, word);
  }
  snprintf(buf, n, "%s %s", sim_fmt_count(num, sizeof num, count), w);
  return buf;
}
