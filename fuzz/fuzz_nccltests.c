/* libFuzzer target for the nccl-tests output reader (fabsim calibrate): any
 * bytes must parse or fail with a message, never crash, hang or leak. Seeds:
 * examples/nccl-tests/ and fuzz/corpus_nccltests/ (make fuzz-smoke copies them). */
#include <stddef.h>
#include <stdint.h>

#include "fabsim/calib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cal_run r;
  sim_error err = {0};
  if (cal_nccltests_parse(&r, "fuzz.txt", (const char *)data, size, CAL_OP_UNKNOWN, &err) == SIM_OK)
    cal_run_free(&r);
  return 0;
}
