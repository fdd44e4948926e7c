#!/usr/bin/env bash
# Checkpoint writes and data-loading reads whose transfers fail are not done
# (issue 27, defect 6): with the storage servers' leaf down, the write after
# step 1 has no route; it was reported written (0 s, "0 GB/s") and the read
# counted among the reads. Now the checkpoint is "failed" (its transfers,
# the bytes undelivered, the cause) with no time or bandwidth, the read is in
# reads_failed, and events say checkpoint-failed.
. "$(dirname "$0")/lib.sh"
E=$SRC/examples
SMALL=(--set workload.model.layers=2 --set workload.steps=3 --set workload.data_loading=true
       --set reliability.reconvergence=1ms)

expect_exit 4 timeout 60 "$FABSIM" run "$E/shared/checkpoint-burst.yaml" "${SMALL[@]}" \
  --set 'faults=[{at: 0s, kind: switch-down, target: leaf2}]' --set output.dir=down
expect_out "after 1    42.97 ms .. 42.97 ms, FAILED: 64 transfers failed (no route), 8.695 GiB undelivered"
expect_out "0 reads, the longest 0 s, 1 failed (no route)"
J=down/summary.json
expect_json $J '.checkpoints.list[0].failed == {"transfers": 64, "bytes_undelivered": 9336520704, "cause": "no route"}'
expect_json $J '.checkpoints.list[0].time_s == null and .checkpoints.list[0].bandwidth_GBps == null'
expect_json $J '.data_loading.reads == 0 and .data_loading.reads_failed == 1'
expect_json $J '.data_loading.read_failure_cause == "no route"'
expect_json $J '[.events[] | select(.kind == "checkpoint-failed")] | length == 1'
expect_json $J '[.events[] | select(.kind == "checkpoint-end")] | length == 0'
grep -q ',checkpoint1,checkpoint-failed,"not written: 64 of its transfers failed' down/events.csv \
  && pass || fail "down/events.csv: no checkpoint-failed row"

# without the fault: written, as before (no "failed", no reads_failed)
expect_exit 0 timeout 60 "$FABSIM" run "$E/shared/checkpoint-burst.yaml" "${SMALL[@]}" --set output.dir=up --quiet
expect_json up/summary.json '.checkpoints.list | length == 2 and all(.[]; has("failed") | not)'
expect_json up/summary.json '.checkpoints.list[0].bandwidth_GBps > 100'
expect_json up/summary.json '.data_loading.reads == 2 and (.data_loading | has("reads_failed") | not)'
finish
