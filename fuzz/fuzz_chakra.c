/* libFuzzer target for the Chakra execution-trace reader (workload.kind:
 * trace): any bytes must parse or fail with a message, never crash, hang or
 * leak. A trace that parses is also matched as a one-rank job and as two
 * ranks running it (the cross-rank checks). Seeds: examples/traces/ and
 * fuzz/corpus_chakra/ (make fuzz-smoke copies them). */
#include <stddef.h>
#include <stdint.h>

#include "fabsim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sim_error err = {0};
  for (uint32_t nranks = 1; nranks <= 2; nranks++) {
    trc_trace *t = sim_malloc(sizeof *t);
    if (trc_parse(t, "fuzz.et", data, size, &err) != SIM_OK) {
      sim_free(t);
      return 0;
    }
    static const uint32_t rank_trace[2] = {0, 0};
    trc_set *s;
    if (trc_set_create(&s, t, 1, rank_trace, nranks, &err) == SIM_OK) trc_set_free(s);
  }
  return 0;
}
