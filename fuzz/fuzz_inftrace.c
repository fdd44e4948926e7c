/* libFuzzer target for the serving model's request-trace reader
 * (workload.inference.trace: Vidur's CSV columns): any bytes must parse or
 * fail with a message, never crash, hang or leak. Seeds:
 * fuzz/corpus_inftrace/ and examples/inference/ (make fuzz-smoke). */
#include <stddef.h>
#include <stdint.h>

#include "fabsim/infer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  inf_requests q;
  sim_error err = {0};
  if (inf_trace_parse(&q, (const char *)data, size, "fuzz.csv", &err) == SIM_OK)
    inf_requests_free(&q);
  return 0;
}
