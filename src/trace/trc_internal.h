/* Internals shared by the files of the trace module (trc__ prefix).
 *   chakra.c  one Chakra ET file: framing, decoding, dependencies; writing
 *   match.c   a job's traces matched over ranks (groups, calls, send/recv)
 *   load.c    the scenario's workload.trace.* keys -> files -> a set
 *   run.c     a set on a backend
 */
#ifndef FABSIM_TRC_INTERNAL_H
#define FABSIM_TRC_INTERNAL_H
#include <stdarg.h>

#include "fabsim/core.h"
#include "fabsim/trace.h"

/* A varint at data[*pos]: 0 (and *pos past it), -1 truncated, -2 too long. */
int trc__varint(const uint8_t *data, size_t len, size_t *pos, uint64_t *v);

#endif
