/* Error codes and messages: one table (SIM_ERRNO_MAP), one formatter. */
#include <stdio.h>

#include "fabsim/core.h"

const char *sim_strerror(int code) {
  switch (code) {
  case SIM_OK: return "ok";
#define SIM__ERR_CASE(name, value, text) \
  case value: return text;
    SIM_ERRNO_MAP(SIM__ERR_CASE)
#undef SIM__ERR_CASE
  default: return "unknown error";
  }
}

int sim_vfail(sim_error *err, int code, const char *fmt, va_list ap) {
  if (err) {
    err->code = code;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  }
  return code;
}

int sim_fail(sim_error *err, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sim_vfail(err, code, fmt, ap);
  va_end(ap);
  return code;
}

size_t sim_edit_distance(const char *a, size_t la, const char *b, size_t lb) {
  if (la > SIM_SUGGEST_MAX || lb > SIM_SUGGEST_MAX) return SIZE_MAX;
  size_t d[SIM_SUGGEST_MAX + 1][SIM_SUGGEST_MAX + 1];
  for (size_t i = 0; i <= la; i++) d[i][0] = i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = j;
  for (size_t i = 1; i <= la; i++) {
    for (size_t j = 1; j <= lb; j++) {
      size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  }
  return d[la][lb];
}
