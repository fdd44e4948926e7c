/* Units: the number grammar, unit tables, exact conversion to integers and
 * the canonical text cfg_dump writes back.
 *
 * Conversion is exact decimal arithmetic (mantissa x unit x 10^exp in 128
 * bits), never floating point, so "4.35GB" is 4350000000 bytes and not
 * 4349999999.99. Sizes and times must come out whole (bytes, picoseconds);
 * bandwidths round to the nearest bit/s.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_internal.h"

__extension__ typedef unsigned __int128 cfg__u128;

typedef struct unit {
  const char *name;
  uint64_t factor; /* base units (bits/s, ps, bytes) per one of this unit */
} unit;

typedef enum { ROUND_EXACT, ROUND_NEAREST } rounding;

typedef struct unit_kind {
  const char *what;           /* "bandwidth" */
  const char *example;        /* "400Gbps" */
  const char *base;           /* "bits/s" for overflow messages */
  const char *resolution_msg; /* when ROUND_EXACT leaves a fraction */
  const unit *units;
  size_t nunits;
  rounding round;
  int plain_means_base; /* a number without unit is in base units */
  int bits_and_bytes;   /* b and B name different units */
  const char *accepted; /* the list users see */
  uint64_t plain_min;   /* a plain number (not 0) below it is refused: a unit forgotten */
  const char *plain_min_text;
} unit_kind;

#define K10 UINT64_C(1000)
#define K2 UINT64_C(1024)

static const unit bandwidth_units[] = {
    {"bps", 1},
    {"Kbps", K10},
    {"Mbps", K10 *K10},
    {"Gbps", K10 *K10 *K10},
    {"Tbps", K10 *K10 *K10 *K10},
    {"Kb/s", K10},
    {"Mb/s", K10 *K10},
    {"Gb/s", K10 *K10 *K10},
    {"Tb/s", K10 *K10 *K10 *K10},
    {"KB/s", 8 * K10},
    {"MB/s", 8 * K10 *K10},
    {"GB/s", 8 * K10 *K10 *K10},
    {"TB/s", 8 * K10 *K10 *K10 *K10},
    {"KiB/s", 8 * K2},
    {"MiB/s", 8 * K2 *K2},
    {"GiB/s", 8 * K2 *K2 *K2},
    {"TiB/s", 8 * K2 *K2 *K2 *K2},
};

static const unit time_units[] = {
    {"ps", 1},
    {"ns", SIM_PS_PER_NS},
    {"us", SIM_PS_PER_US},
    {"\xc2\xb5s", SIM_PS_PER_US}, /* U+00B5 micro sign */
    {"\xce\xbcs", SIM_PS_PER_US}, /* U+03BC Greek mu, what many keyboards give */
    {"ms", SIM_PS_PER_MS},
    {"s", SIM_PS_PER_S},
    {"min", 60 * SIM_PS_PER_S},
    {"h", 3600 * SIM_PS_PER_S},
    {"d", 86400 * SIM_PS_PER_S},
};

static const unit size_units[] = {
    {"B", 1},
    {"KB", K10},
    {"MB", K10 *K10},
    {"GB", K10 *K10 *K10},
    {"TB", K10 *K10 *K10 *K10},
    {"KiB", K2},
    {"MiB", K2 *K2},
    {"GiB", K2 *K2 *K2},
    {"TiB", K2 *K2 *K2 *K2},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* No link of a cluster runs below 1 Mb/s: a plain "400" meant 400Gbps, not
 * 400 bits/s (issue 27, defect 2), so it is refused with the units. */
static const unit_kind bandwidth_kind = {
    .what = "bandwidth",
    .example = "400Gbps",
    .base = "bits/s",
    .units = bandwidth_units,
    .nunits = NELEM(bandwidth_units),
    .round = ROUND_NEAREST,
    .plain_means_base = 1,
    .bits_and_bytes = 1,
    .accepted =
        "bits/s: bps, Kbps, Mbps, Gbps, Tbps (or Kb/s, Mb/s, Gb/s, Tb/s); "
        "bytes/s: KB/s, MB/s, GB/s, TB/s (x1000) or KiB/s, MiB/s, GiB/s, TiB/s (x1024); "
        "a plain number is bits/s",
    .plain_min = K10 * K10,
    .plain_min_text = "1 Mb/s"};

static const unit_kind time_kind = {
    .what = "time",
    .example = "500ns",
    .base = "ps",
    .resolution_msg = "is not a whole number of picoseconds (the clock resolution)",
    .units = time_units,
    .nunits = NELEM(time_units),
    .round = ROUND_EXACT,
    .accepted =
        "ps, ns, us (or \xc2\xb5s), ms, s, min, h, d; a plain number is only accepted for 0"};

static const unit_kind size_kind = {
    .what = "size",
    .example = "1GiB",
    .base = "bytes",
    .resolution_msg = "is not a whole number of bytes",
    .units = size_units,
    .nunits = NELEM(size_units),
    .round = ROUND_EXACT,
    .plain_means_base = 1,
    .accepted = "B, KB, MB, GB, TB (x1000) or KiB, MiB, GiB, TiB (x1024); a plain number is bytes"};

/* ---- messages --------------------------------------------------------------- */

void cfg__text_set(char **dst, const char *text, size_t len) {
  char *copy = sim_malloc(len + 1);
  memcpy(copy, text, len);
  copy[len] = '\0';
  sim_free(*dst);
  *dst = copy;
}

void cfg__excerpt(char *out, size_t cap, const char *text, size_t len, size_t max) {
  static const char hex[] = "0123456789abcdef";
  size_t o = 0, shown = 0, i;
  if (cap == 0) return;
  for (i = 0; i < len && shown < max; i++, shown++) {
    unsigned char c = (unsigned char)text[i];
    if (c >= 0x20 && c != 0x7f) { /* printable ASCII and UTF-8 bytes pass */
      if (o + 1 >= cap) break;
      out[o++] = (char)c;
    } else {
      if (o + 4 >= cap) break;
      out[o++] = '\\';
      out[o++] = 'x';
      out[o++] = hex[c >> 4];
      out[o++] = hex[c & 15];
    }
  }
  if (i < len && o + 3 < cap) {
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o] = '\0';
}

int cfg__check_text(const char *text, size_t len, char *msg, size_t cap) {
  const unsigned char *p = (const unsigned char *)text;
  for (size_t i = 0; i < len; i++) {
    bool c0 = p[i] < 0x20 || p[i] == 0x7f, c1 = p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 &&
                                                p[i + 1] <= 0x9f; /* U+0080..U+009F */
    if (!c0 && !c1) continue;
    snprintf(msg, cap,
             "contains a control character (%s%02X) at byte %zu; allowed: printable text (it is "
             "shown on terminals and written into the output files)",
             c0 ? "\\x" : "U+00", c0 ? p[i] : p[i + 1], i + 1);
    return SIM_ECONFIG;
  }
  return SIM_OK;
}

/* ---- numbers ---------------------------------------------------------------- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

size_t cfg__scan_number(const char *t, size_t len) {
  size_t i = 0, int_digits = 0, frac_digits = 0;
  while (i < len && is_digit(t[i])) i++, int_digits++;
  if (i < len && t[i] == '.') {
    size_t j = i + 1;
    while (j < len && is_digit(t[j])) j++, frac_digits++;
    if (int_digits + frac_digits == 0) return 0;
    i = j;
  }
  if (int_digits + frac_digits == 0) return 0;
  if (i < len && (t[i] == 'e' || t[i] == 'E')) {
    size_t j = i + 1;
    if (j < len && (t[j] == '+' || t[j] == '-')) j++;
    if (j < len && is_digit(t[j])) {
      while (j < len && is_digit(t[j])) j++;
      i = j;
    }
  }
  return i;
}

/* The scanned number as mant x 10^exp10 with at most 20 significant digits
 * (enough for any uint64). Returns 0 when more precision was written. */
static int decimal_of(const char *t, size_t n, cfg__u128 *mant, long *exp10) {
  cfg__u128 m = 0;
  long e = 0, x = 0;
  int ndig = 0, in_frac = 0, xneg = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    char c = t[i];
    if (c == '.') {
      in_frac = 1;
      continue;
    }
    if (!is_digit(c)) break;
    if (m == 0 && c == '0') { /* leading zero: not significant */
      if (in_frac) e--;
      continue;
    }
    if (ndig < 20) {
      m = m * 10 + (cfg__u128)(c - '0');
      ndig++;
      if (in_frac) e--;
    } else if (c != '0') {
      return 0;
    } else if (!in_frac) {
      e++; /* trailing zero of the integer part beyond 20 digits */
    }
  }
  if (i < n) { /* exponent */
    i++;
    if (t[i] == '+' || t[i] == '-') xneg = t[i++] == '-';
    for (; i < n; i++)
      if (x < 1000000) x = x * 10 + (t[i] - '0');
  }
  *mant = m;
  *exp10 = e + (xneg ? -x : x);
  return 1;
}

typedef enum { CONV_OK, CONV_OVERFLOW, CONV_FRACTION } conv_result;

/* The largest unit factor (1d in ps) keeps mant x factor in 128 bits. */
#define MAX_FACTOR (86400 * SIM_PS_PER_S)

/* mant x 10^exp10 x factor as a uint64 under the given rounding. */
static conv_result scale(cfg__u128 mant, long exp10, uint64_t factor, rounding r, uint64_t *out) {
  cfg__u128 n;
  assert(factor <= MAX_FACTOR);
  n = mant * factor; /* < 10^20 x MAX_FACTOR < 2^127 */
  if (n == 0) {
    *out = 0;
    return CONV_OK;
  }
  if (exp10 >= 0) {
    for (long i = 0; i < exp10; i++) {
      n *= 10;
      if (n > UINT64_MAX) return CONV_OVERFLOW;
    }
    if (n > UINT64_MAX) return CONV_OVERFLOW;
    *out = (uint64_t)n;
    return CONV_OK;
  }
  cfg__u128 q = 0, rem = n, p = 1;
  if (-exp10 <= 38) {
    for (long i = 0; i < -exp10; i++) p *= 10;
    q = n / p;
    rem = n % p;
  } else {
    p = 0; /* stands for a power of ten beyond any n: q = 0, never rounds up */
  }
  if (rem != 0) {
    if (r == ROUND_EXACT) return CONV_FRACTION;
    if (p != 0 && rem >= p - rem) q++;
  }
  if (q > UINT64_MAX) return CONV_OVERFLOW;
  *out = (uint64_t)q;
  return CONV_OK;
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

/* Case-insensitive unique match, for the "did you mean" of a wrong-case unit.
 * Where bits and bytes both exist, b vs B is a different unit, not a typo. */
static const char *unit_case_hint(const unit_kind *k, const char *u, size_t n) {
  const char *hit = NULL;
  for (size_t i = 0; i < k->nunits; i++) {
    const char *name = k->units[i].name;
    size_t j;
    if (strlen(name) != n) continue;
    for (j = 0; j < n; j++) {
      char a = u[j], b = name[j];
      if (k->bits_and_bytes && a != b && (b == 'b' || b == 'B')) break;
      if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
      if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
      if (a != b) break;
    }
    if (j == n) {
      if (hit) return NULL;
      hit = name;
    }
  }
  return hit;
}

/* Parse "number [space] unit". On failure writes a message (no location). */
static int parse_with_unit(const unit_kind *k, const char *text, size_t len, uint64_t *out,
                           char *msg, size_t cap) {
  char shown[96];
  size_t b = 0, e = len, nlen, ulen;
  const char *u;
  cfg__u128 mant;
  uint64_t factor = 1, v;
  long exp10;
  int rc = SIM_ECONFIG;

  while (b < e && is_space(text[b])) b++;
  while (e > b && is_space(text[e - 1])) e--;
  cfg__excerpt(shown, sizeof shown, text + b, e - b, 64);
  if (memchr(text, '\0', len)) {
    snprintf(msg, cap, "contains a NUL character; expected a %s such as %s", k->what, k->example);
    goto out;
  }
  if (b == e) {
    snprintf(msg, cap, "missing value; expected a %s such as %s", k->what, k->example);
    goto out;
  }
  if (text[b] == '-' && cfg__scan_number(text + b + 1, e - b - 1) > 0) {
    snprintf(msg, cap, "'%s' is negative; a %s must be >= 0", shown, k->what);
    goto out;
  }
  nlen = cfg__scan_number(text + b, e - b);
  if (nlen == 0) {
    snprintf(msg, cap, "expected a %s such as %s, got '%s'; units: %s", k->what, k->example, shown,
             k->accepted);
    goto out;
  }
  u = text + b + nlen;
  while (u < text + e && is_space(*u)) u++;
  ulen = (size_t)(text + e - u);
  if (!decimal_of(text + b, nlen, &mant, &exp10)) {
    snprintf(msg, cap, "'%s' has more than 20 significant digits", shown);
    goto out;
  }
  if (ulen == 0) {
    if (!k->plain_means_base && mant != 0) {
      snprintf(msg, cap, "'%s' needs a unit; units: %s", shown, k->accepted);
      goto out;
    }
  } else {
    size_t i;
    for (i = 0; i < k->nunits; i++)
      if (strlen(k->units[i].name) == ulen && memcmp(k->units[i].name, u, ulen) == 0) break;
    if (i == k->nunits) {
      char ushown[48];
      const char *hint = unit_case_hint(k, u, ulen);
      cfg__excerpt(ushown, sizeof ushown, u, ulen, 16);
      if (hint)
        snprintf(msg, cap,
                 "unknown unit '%s' in '%s' (units are case-sensitive: did you mean "
                 "'%s'?); units: %s",
                 ushown, shown, hint, k->accepted);
      else snprintf(msg, cap, "unknown unit '%s' in '%s'; units: %s", ushown, shown, k->accepted);
      goto out;
    }
    factor = k->units[i].factor;
  }
  switch (scale(mant, exp10, factor, k->round, &v)) {
  case CONV_OK:
    if (ulen == 0 && v != 0 && v < k->plain_min) {
      snprintf(msg, cap,
               "'%s' has no unit, so it is %llu %s, below %s: a unit forgotten? Give one "
               "(e.g. %s%s); units: %s",
               shown, (unsigned long long)v, k->base, k->plain_min_text, shown, "Gbps",
               k->accepted);
      break;
    }
    *out = v;
    rc = SIM_OK;
    break;
  case CONV_OVERFLOW:
    snprintf(msg, cap, "'%s' is too large (the limit is 2^64-1 %s)", shown, k->base);
    break;
  case CONV_FRACTION: snprintf(msg, cap, "'%s' %s", shown, k->resolution_msg); break;
  }
out:
  return rc;
}

int cfg__parse_bandwidth_n(const char *text, size_t len, rate_bps *out, char *msg, size_t cap) {
  return parse_with_unit(&bandwidth_kind, text, len, out, msg, cap);
}
int cfg__parse_time_n(const char *text, size_t len, simtime_ps *out, char *msg, size_t cap) {
  return parse_with_unit(&time_kind, text, len, out, msg, cap);
}
int cfg__parse_size_n(const char *text, size_t len, uint64_t *out, char *msg, size_t cap) {
  return parse_with_unit(&size_kind, text, len, out, msg, cap);
}

static int parse_public(const unit_kind *k, const char *text, uint64_t *out, sim_error *err) {
  char msg[sizeof err->msg];
  uint64_t v = 0;
  if (!text) return sim_fail(err, SIM_ECONFIG, "missing value; expected a %s", k->what);
  if (parse_with_unit(k, text, strlen(text), &v, msg, sizeof msg) != SIM_OK)
    return sim_fail(err, SIM_ECONFIG, "%s", msg);
  if (out) *out = v;
  return SIM_OK;
}

int cfg_parse_bandwidth(const char *text, rate_bps *out, sim_error *err) {
  return parse_public(&bandwidth_kind, text, out, err);
}
int cfg_parse_time(const char *text, simtime_ps *out, sim_error *err) {
  return parse_public(&time_kind, text, out, err);
}
int cfg_parse_size(const char *text, uint64_t *out, sim_error *err) {
  return parse_public(&size_kind, text, out, err);
}

/* ---- canonical text ----------------------------------------------------------- */

static uint64_t factor_of(const unit *table, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(table[i].name, name) == 0) return table[i].factor;
  return 0;
}

/* v in the unit among `names` that reads shortest, exact to at most three
 * decimals, with an integer part >= 1; earlier names win ties. Returns 0 when
 * no listed unit qualifies (always the case for v == 0). */
static int format_in(char *out, size_t cap, uint64_t v, const unit *table, size_t ntable,
                     const char *const *names, size_t n) {
  char best[CFG__VALUE_TEXT] = "", cand[CFG__VALUE_TEXT];
  for (size_t i = 0; i < n; i++) {
    uint64_t f = factor_of(table, ntable, names[i]);
    if (f == 0 || v < f) continue;
    cfg__u128 frac = (cfg__u128)(v % f) * 1000;
    if (frac % f != 0) continue;
    unsigned milli = (unsigned)(frac / f);
    if (milli == 0) {
      snprintf(cand, sizeof cand, "%llu%s", (unsigned long long)(v / f), names[i]);
    } else {
      char d[12];
      snprintf(d, sizeof d, "%03u", milli);
      for (int z = 2; z > 0 && d[z] == '0'; z--) d[z] = '\0';
      snprintf(cand, sizeof cand, "%llu.%s%s", (unsigned long long)(v / f), d, names[i]);
    }
    if (best[0] == '\0' || strlen(cand) < strlen(best)) memcpy(best, cand, sizeof best);
  }
  if (best[0] == '\0') return 0;
  snprintf(out, cap, "%s", best);
  return 1;
}

void cfg__format_bandwidth(char *out, size_t cap, rate_bps v, int bytes_family) {
  static const char *const bits[] = {"Tbps", "Gbps", "Mbps", "Kbps", "bps"};
  static const char *const bytes[] = {"TB/s",  "GB/s",  "MB/s",  "KB/s",
                                      "TiB/s", "GiB/s", "MiB/s", "KiB/s"};
  const size_t nt = NELEM(bandwidth_units);
  if (bytes_family && format_in(out, cap, v, bandwidth_units, nt, bytes, NELEM(bytes))) return;
  if (!format_in(out, cap, v, bandwidth_units, nt, bits, NELEM(bits))) snprintf(out, cap, "0bps");
}

void cfg__format_time(char *out, size_t cap, simtime_ps v) {
  static const char *const names[] = {"s", "ms", "us", "ns", "ps"};
  if (!format_in(out, cap, v, time_units, NELEM(time_units), names, NELEM(names)))
    snprintf(out, cap, "0ns");
}

void cfg__format_size(char *out, size_t cap, uint64_t v) {
  static const char *const names[] = {"TiB", "GiB", "MiB", "KiB", "TB", "GB", "MB", "KB", "B"};
  if (!format_in(out, cap, v, size_units, NELEM(size_units), names, NELEM(names)))
    snprintf(out, cap, "0B");
}

void cfg__format_double(char *out, size_t cap, double v) {
  char tmp[64];
  if (v == floor(v) && fabs(v) < 1e6) {
    snprintf(out, cap, "%.0f", v);
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (strtod(tmp, NULL) == v) break;
  }
  /* "9.89e+14" -> "9.89e14": the exponent without '+' or leading zeros */
  char *e = strchr(tmp, 'e');
  if (e) {
    char *src = e + 1, *dst = e + 1;
    if (*src == '+') src++;
    else if (*src == '-') *dst++ = *src++;
    while (*src == '0' && src[1]) src++;
    memmove(dst, src, strlen(src) + 1);
  }
  snprintf(out, cap, "%s", tmp);
}
