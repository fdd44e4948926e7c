/* libFuzzer target for the nccl-tests output reader (fabsim calibrate): any
 * bytes must parse or fail with a message, never crash, hang or leak. The
 * reader also takes the collective from the "Collective test starting"
 * line (cal_op_parse) and the NCCL_ALGO and NCCL_PROTO values NCCL echoes
 * ("NCCL INFO NCCL_ALGO set by environment to ..."), which it checks
 * through src/calib/ncclenv.c (cal_run_env_sets): this target reaches both.
 * Seeds: examples/nccl-tests/, validate/curves/ (the published curves of
 * the validation table) and fuzz/corpus_nccltests/ (make fuzz-smoke passes
 * all three). */
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
