/* Writes the example Chakra job (tests/trace/example_trace.h) as
 * DIR/et.RANK.et, one file per rank, in the real Chakra ET format:
 *   fabsim_chakra_gen examples/traces
 * The trace tests check examples/traces/ holds exactly this output. */
#include <stdio.h>

#include "fabsim/core.h"
#include "trace/example_trace.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  for (uint32_t r = 0; r < EX_RANKS; r++) {
    char path[4096];
    size_t len;
    sim_error err = {0};
    uint8_t *buf = ex_trace(r, &len);
    snprintf(path, sizeof path, "%s/et.%u.et", argv[1], r);
    int rc = sim_write_file_atomic(path, buf, len, &err);
    sim_free(buf);
    if (rc != SIM_OK) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
  }
  return 0;
}
