#!/usr/bin/env bash
# fabsim calibrate: the shipped samples fit and the fragment runs (alone and
# as --set over a base scenario), the JSON contract, refusals naming
# FILE:LINE with exit 2, the atomic write.
. "$(dirname "$0")/lib.sh"
S="$SRC/examples/nccl-tests"

expect_exit 0 "$FABSIM" calibrate --help;  expect_out "usage: fabsim calibrate"
expect_exit 0 "$FABSIM" --help;            expect_out "calibrate"
expect_exit 2 "$FABSIM" calibrate;         expect_err "at least one nccl-tests output file"
expect_exit 2 "$FABSIM" calibrate --bogus "$S/all_gather_perf-h100-1node.txt"; expect_err "unknown option '--bogus'"

# --- the shipped samples: a table per file, the parameters, calibration.yaml written here.
# make test fits four of them together (5.6 CPU s; the all-to-all sample adds
# 4.3 s to the joint fit and no line checked here; calib/test_nccltests reads
# it); make check-long (FABSIM_TEST_LONG) fits all five.
samples=("$S"/all_gather_perf-h100-1node.txt "$S"/all_reduce_perf-h100-1node.txt
         "$S"/all_reduce_perf-h100-4nodes.txt "$S"/sendrecv_perf-h100-2nodes.txt)
[ "${FABSIM_TEST_LONG:-0}" != 0 ] && samples=("$S"/*.txt)
expect_exit 0 "$FABSIM" calibrate "${samples[@]}"
expect_out "all_reduce_perf-h100-4nodes.txt: allreduce, 32 GPUs (4 nodes x 8)"
expect_out "sendrecv_perf-h100-2nodes.txt: sendrecv, 16 GPUs (2 nodes x 8)"
expect_out "cluster.nic.efficiency"; expect_out "residual"
# the 1-node AllReduce sample was a ring: the NVLS factor runs to its bound and says so
expect_out "latency nvls                     x1        x8: nvlink_hop 25us -> 200us"
expect_out "at the factor's bound (1/8..8): the rows ask for more than a latency gives; if the cluster did not run nvls, say so"
grep -q "nvlstree:" calibration.yaml && pass || fail "calibration.yaml lacks the nvlstree keys"
[ -s calibration.yaml ] && pass || fail "calibration.yaml not written in the current folder"
ls -a | grep -q '^\.calibration\.yaml\.' && fail "a temporary was left behind" || pass
# the fragment alone is a scenario fabsim run accepts
expect_exit 0 "$FABSIM" run calibration.yaml --set cluster.nodes=2 --set output.dir=alone --json
expect_json "$WORK/out" '.collectives[0].busbw_GBps > 0'
# ... and over a base as the --set arguments of its header
sets=$(sed -n 's/^#     --set \([^ ]*\).*/--set \1/p' calibration.yaml)
[ -n "$sets" ] && pass || fail "the fragment's header lists no --set arguments"
# shellcheck disable=SC2086
expect_exit 0 "$FABSIM" run "$SRC/examples/default.yaml" $sets --set cluster.nodes=2 \
  --set output.dir=over --set output.database=none --json
cp "$WORK/out" over.json
expect_exit 0 "$FABSIM" run "$SRC/examples/default.yaml" --set cluster.nodes=2 \
  --set output.dir=plain --set output.database=none --json
cp "$WORK/out" plain.json
[ "$(jq .collectives[0].time_s over.json)" != "$(jq .collectives[0].time_s plain.json)" ] && pass \
  || fail "the calibrated keys did not change the collective's time"

# --- JSON, -o, --base
expect_exit 0 "$FABSIM" calibrate "$S/all_gather_perf-h100-1node.txt" -o res/cal.yaml \
  --base "$SRC/examples/default.yaml" --json
cp "$WORK/out" cal.json
[ -s res/cal.yaml ] && pass || fail "-o res/cal.yaml not written"
expect_json cal.json '.written == "res/cal.yaml" and .gpu_from_files == null'
expect_json cal.json '.files[0].op == "allgather" and .files[0].ranks == 8 and (.files[0].rows | length) == 31'
expect_json cal.json '[.parameters[] | select(.name == "cluster.scale_up.efficiency")][0].fitted == true'
expect_json cal.json '[.parameters[] | select(.name == "cluster.nic.efficiency")][0].fitted == false'
expect_json cal.json '.rms_log_residual_after <= .rms_log_residual_before'
expect_json cal.json '.keys["cluster.scale_up.efficiency"] != null and (.keys | has("cluster.nic.efficiency") | not)'
expect_json cal.json '[.files[0].rows[] | select(.residual == null)] | length == 0'
# same inputs, same fragment
expect_exit 0 "$FABSIM" calibrate "$S/all_gather_perf-h100-1node.txt" -o res/cal2.yaml --base "$SRC/examples/default.yaml"
cmp -s res/cal.yaml res/cal2.yaml && pass || fail "two fits of the same file differ"

# --- refusals: exit 2, FILE:LINE named, nothing written
head -n 45 "$S/all_reduce_perf-h100-4nodes.txt" > truncated.txt
expect_exit 2 "$FABSIM" calibrate truncated.txt -o never.yaml
expect_err "truncated.txt:46:1:"; expect_err "truncated"
[ ! -e never.yaml ] && pass || fail "a refused input wrote the fragment"
sed '45s/    0 /    3 /' "$S/all_reduce_perf-h100-4nodes.txt" > wrong.txt
expect_exit 2 "$FABSIM" calibrate wrong.txt -o never.yaml; expect_err "wrong.txt:45:"
sed '50s/ 60\.[0-9]*/ sixty/' "$S/all_reduce_perf-h100-4nodes.txt" > garbled.txt
expect_exit 2 "$FABSIM" calibrate garbled.txt -o never.yaml; expect_err "garbled.txt:50:"
expect_exit 2 "$FABSIM" calibrate missing.txt; expect_err "missing.txt: cannot read"
expect_exit 2 "$FABSIM" calibrate "$S"; expect_err "not a regular file"
sed 's/NVIDIA H100 80GB HBM3/NVIDIA L40S/' "$S/all_gather_perf-h100-1node.txt" > l40s.txt
expect_exit 2 "$FABSIM" calibrate l40s.txt; expect_err "cannot tell the GPU"
expect_exit 0 "$FABSIM" calibrate l40s.txt --set cluster.gpu=H100 -o l40s.yaml
expect_exit 2 "$FABSIM" calibrate "$S/all_gather_perf-h100-1node.txt" --set cluster.nic.efficiency=fast
expect_err "--set:1:"
# the collective named on the command line: OP:FILE
grep -v 'Collective test starting' "$S/all_gather_perf-h100-1node.txt" > run7.log
expect_exit 2 "$FABSIM" calibrate run7.log; expect_err "name it as OP:FILE"
expect_exit 0 "$FABSIM" calibrate allgather:run7.log -o run7.yaml
# a fragment that cannot be written: exit 1
mkdir ro && chmod 500 ro
if [ "$(id -u)" != 0 ]; then
  expect_exit 1 "$FABSIM" calibrate "$S/all_gather_perf-h100-1node.txt" -o ro/cal.yaml
fi
expect_exit 1 "$FABSIM" calibrate "$S/all_gather_perf-h100-1node.txt" -o "$S/"
finish
