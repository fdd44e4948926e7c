/* Human-readable numbers for the terminal and messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

const char *sim_fmt_count(char *buf, size_t n, uint64_t v) {
  char tmp[32];
  int len = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
  size_t w = 0;
  for (int i = 0; i < len && w + 1 < n; i++) {
    if (i > 0 && (len - i) % 3 == 0 && w + 2 < n) buf[w++] = ',';
    buf[w++] = tmp[i];
  }
  buf[w] = '\0';
  return buf;
}

const char *sim_fmt_bytes(char *buf, size_t n, uint64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    u++;
  }
  if (u == 0) snprintf(buf, n, "%llu B", (unsigned long long)bytes);
  else snprintf(buf, n, "%.2f %s", v, units[u]);
  return buf;
}

const char *sim_fmt_rate(char *buf, size_t n, uint64_t bps) {
  static const char *units[] = {"b/s", "Kb/s", "Mb/s", "Gb/s", "Tb/s", "Pb/s"};
  double v = (double)bps;
  int u = 0;
  while (v >= 1000.0 && u < 5) {
    v /= 1000.0;
    u++;
  }
  snprintf(buf, n, "%.4g %s", v, units[u]);
  return buf;
}

const char *sim_fmt_seconds(char *buf, size_t n, double s) {
  finite_or_exit(s, "seconds");
  if (s == 0) snprintf(buf, n, "0 s");
  else if (s < 1e-6) snprintf(buf, n, "%.3g ns", s * 1e9);
  else if (s < 1e-3) snprintf(buf, n, "%.4g us", s * 1e6);
  else if (s < 1) snprintf(buf, n, "%.4g ms", s * 1e3);
  else snprintf(buf, n, "%.4g s", s);
  return buf;
}

const char *sim_fmt_usd(char *buf, size_t n, double usd) {
  finite_or_exit(usd, "dollar");
  if (usd >= 1e9) snprintf(buf, n, "$%.2fB", usd / 1e9);
  else if (usd >= 1e6) snprintf(buf, n, "$%.2fM", usd / 1e6);
  else if (usd >= 1e3) snprintf(buf, n, "$%.1fK", usd / 1e3);
  else snprintf(buf, n, "$%.0f", usd);
  return buf;
}
