/* Error codes and messages: one table (SIM_ERRNO_MAP), one formatter. */
#include <stdio.h>

#include "fabsim/core.h"

const char *sim_strerror(int code) {
  switch (code) {
  case SIM_OK:
    return "ok";
#define SIM__ERR_CASE(name, value, text) \
  case value:                            \
    return text;
    SIM_ERRNO_MAP(SIM__ERR_CASE)
#undef SIM__ERR_CASE
  default:
    return "unknown error";
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
