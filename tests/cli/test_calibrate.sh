#!/usr/bin/env bash
# fabsim calibrate: a measured sample fits and the fragment runs (alone and
# as --set over a base scenario), the JSON contract, refusals naming
# FILE:LINE with exit 2 (issue 27: -o that is not a regular file or names
# an input, before the fit; a file name that would write keys), the atomic
# write; and the keys it fits reach a collective, a training step and a
# trace (one mapping, coll_spec_from_cfg). Kept to small fits: the
# detection of algorithms and the recovery of known parameters are
# tests/calib/test_fit*.c.
. "$(dirname "$0")/lib.sh"
S="$SRC/examples/nccl-tests"
AG="$S/all_gather_perf-h100-1node-together.txt" # measured, 1 node: one candidate set, fast
SR="$S/sendrecv_perf-h100-2nodes-xxrjun.txt"    # measured, 2 nodes

expect_exit 0 "$FABSIM" calibrate --help;  expect_out "usage: fabsim calibrate"
expect_exit 0 "$FABSIM" --help;            expect_out "calibrate"
expect_exit 2 "$FABSIM" calibrate;         expect_err "at least one nccl-tests output file"
expect_exit 2 "$FABSIM" calibrate --bogus "$AG"; expect_err "unknown option '--bogus'"

# --- two measured files: a table per file, the residuals by size range, the parameters
expect_exit 0 "$FABSIM" calibrate "$AG" "$SR"
expect_out "all_gather_perf-h100-1node-together.txt: allgather, 8 GPUs (1 node x 8)"
expect_out "sendrecv_perf-h100-2nodes-xxrjun.txt: sendrecv, 16 GPUs (2 nodes x 8)"
expect_out "cluster.nic.efficiency"; expect_out "residual"
expect_out "(not fitted: size 0)"; expect_out "rows left out of the fit: 4 (size 0)"
grep -Eq "^    under 64 KiB  [0-9.]+ -> [0-9.]+ over 9 rows \(target 0.1: (met|missed)\)" "$WORK/out" \
  && pass || fail "no rms under 64 KiB against its target"
grep -Eq "^    from 64 KiB   [0-9.]+ -> [0-9.]+ over 10 rows \(target 0.05: (met|missed)\)" "$WORK/out" \
  && pass || fail "no rms from 64 KiB against its target"
grep -q "bandwidth:" calibration.yaml && pass || fail "calibration.yaml lacks the ring's bandwidth factor"
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

# --- the keys reach every workload (issue 26: one mapping). Every launch
# key and the in-switch NVLink hops 1 ms longer: each candidate of the
# tuner 1 ms slower, its picks unchanged, so a collective takes exactly
# 1 ms more, the trace's iteration (an AllReduce and an AllGather on its
# critical path) 2 ms, each training class 1 ms a call. On main the trace
# and the step did not move.
MS="--set workload.collective.latency.ll.launch=1006.6us --set workload.collective.latency.ll.tree_launch=1006.8us
  --set workload.collective.latency.ll128.launch=1014us --set workload.collective.latency.ll128.tree_launch=1014us
  --set workload.collective.latency.simple.launch=1008.4us --set workload.collective.latency.simple.tree_launch=1008.4us
  --set workload.collective.latency.nvls.nvlink_hop=1025us --set workload.collective.latency.nvlstree.nvlink_hop=1025us"
reach() { # reach NAME SCENARIO [--set...]: NAME.json, the run's summary
  local n=$1 f=$2; shift 2
  expect_exit 0 "$FABSIM" run "$SRC/examples/$f" --set output.dir="$n" --set output.database=none "$@" --json
  cp "$WORK/out" "$n.json"
}
reach c0 default.yaml; reach c1 default.yaml $MS
reach t0 trace.yaml;   reach t1 trace.yaml $MS
reach s0 dense-7b-64gpu.yaml; reach s1 dense-7b-64gpu.yaml $MS
d() { jq -n --slurpfile a "$1" --slurpfile b "$2" "\$b[0]$3 - \$a[0]$3"; }
[ "$(jq -n "$(d c0.json c1.json '.collectives[0].time_s') | (. - 0.001) | fabs < 1e-9")" = true ] \
  && pass || fail "the collective moved by $(d c0.json c1.json '.collectives[0].time_s') s, not 1 ms"
[ "$(jq -n "$(d t0.json t1.json '.trace.iteration_s[0]') | (. - 0.002) | fabs < 1e-9")" = true ] \
  && pass || fail "the trace iteration moved by $(d t0.json t1.json '.trace.iteration_s[0]') s, not 2 ms"
for c in dp_reducescatter dp_allgather; do
  calls=$(jq ".step.collectives.$c.count" s0.json)
  [ "$(jq -n "$(d s0.json s1.json ".step.collectives.$c.time_s") | (. - $calls * 0.001) | fabs < 1e-6")" = true ] \
    && pass || fail "training class $c moved by $(d s0.json s1.json ".step.collectives.$c.time_s") s, not $calls ms"
done
# the step: at least the gathers after the optimizer, exposed
[ "$(jq -n "$(d s0.json s1.json '.step.time_s') > $(jq '.step.collectives.dp_allgather.count' s0.json) * 0.001")" = true ] \
  && pass || fail "the training step moved by $(d s0.json s1.json '.step.time_s') s"
# a bandwidth factor: an 8 GiB ring AllReduce (Simple, bandwidth-bound) at half the rate takes twice as long
R="--set cluster.nodes=2 --set workload.collective.algorithm=ring --set workload.collective.protocol=simple --set workload.collective.size=8GiB"
# shellcheck disable=SC2086
reach b0 default.yaml $R; reach b1 default.yaml $R --set workload.collective.bandwidth.ring=0.5
[ "$(jq -n --slurpfile a b0.json --slurpfile b b1.json '$b[0].collectives[0].time_s / $a[0].collectives[0].time_s | . > 1.99 and . < 2.0')" = true ] \
  && pass || fail "bandwidth.ring=0.5 did not double an 8 GiB ring AllReduce"
expect_exit 2 "$FABSIM" run "$SRC/examples/default.yaml" --set workload.collective.bandwidth.tree=1.5
expect_err "workload.collective.bandwidth.tree"; expect_err "at most 1"

# --- JSON, -o, --base
expect_exit 0 "$FABSIM" calibrate "$AG" -o res/cal.yaml --base "$SRC/examples/default.yaml" --json
cp "$WORK/out" cal.json
[ -s res/cal.yaml ] && pass || fail "-o res/cal.yaml not written"
expect_json cal.json '.written == "res/cal.yaml" and .gpu_from_files == null'
expect_json cal.json '.files[0].op == "allgather" and .files[0].ranks == 8 and (.files[0].rows | length) == 31'
expect_json cal.json '.rows == 27 and .rows_skipped == 4 and .files[0].small.rows == 9 and .files[0].large.rows == 18'
expect_json cal.json '.files[0].small.target == 0.1 and .files[0].large.target == 0.05 and (.files[0].large.met | type) == "boolean"'
expect_json cal.json '[.parameters[] | select(.name == "cluster.scale_up.efficiency")][0].fitted == true'
expect_json cal.json '[.parameters[] | select(.name == "cluster.nic.efficiency")][0].fitted == false'
expect_json cal.json '[.parameters[] | select(.name == "workload.collective.bandwidth.ring")][0] | .fitted and .kind == "bandwidth-factor"'
expect_json cal.json '.algorithms.kept == "every algorithm"'
expect_json cal.json '.rms_log_residual_after <= .rms_log_residual_before'
expect_json cal.json '.keys["cluster.scale_up.efficiency"] != null and (.keys | has("cluster.nic.efficiency") | not)'
expect_json cal.json '[.files[0].rows[] | select(.residual == null)] | length == 4'
# same inputs, same fragment
expect_exit 0 "$FABSIM" calibrate "$AG" -o res/cal2.yaml --base "$SRC/examples/default.yaml"
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
# issue 27, defect 13: no row dropped silently
sed 's/^ *1048576 / 1M /' "$AG" > k.txt
expect_exit 2 "$FABSIM" calibrate allgather:k.txt -o never.yaml; expect_err "size '1M' is not a whole number"
sed 's/# Out of bounds values : 0 OK/# Out of bounds values : 7 FAILED/' "$AG" > failed.txt
expect_exit 2 "$FABSIM" calibrate allgather:failed.txt -o never.yaml; expect_err "own check failed"
sed 's/   725\.24  370\.13/   625.24  370.13/; s/   732\.87  366\.28/   632.87  366.28/' "$AG" > algbw.txt
expect_exit 2 "$FABSIM" calibrate allgather:algbw.txt -o never.yaml; expect_err "algbw 366.28 GB/s, but size / time"
sed 's/^/[1,0]<stdout>:/' "$AG" > tagged.txt
expect_exit 0 "$FABSIM" calibrate allgather:tagged.txt -o tagged.yaml --json
expect_json "$WORK/out" '.rows == 27'
[ ! -e never.yaml ] && pass || fail "a refused input wrote the fragment"
sed 's/NVIDIA H100 80GB HBM3/NVIDIA L40S/' "$AG" > l40s.txt
expect_exit 2 "$FABSIM" calibrate allgather:l40s.txt; expect_err "cannot tell the GPU"
expect_exit 0 "$FABSIM" calibrate allgather:l40s.txt --set cluster.gpu=H100 -o l40s.yaml
expect_exit 2 "$FABSIM" calibrate "$AG" --set cluster.nic.efficiency=fast
expect_err "--set:1:"
# the collective named on the command line: OP:FILE
grep -v 'Collective test starting' "$AG" > run7.log
expect_exit 2 "$FABSIM" calibrate run7.log; expect_err "name it as OP:FILE"
expect_exit 0 "$FABSIM" calibrate allgather:run7.log -o run7.yaml
# a file without rank lines (a console copy): the shape is the base's, and
# its rows must agree with it before the fit (validate/curves/ has such files)
NEB="$SRC/validate/curves/all_reduce_perf-h100-2node-ib-nebius.txt"
expect_exit 2 "$FABSIM" calibrate "$NEB" --set cluster.gpu=H100 --set cluster.nodes=4 -o never.yaml
expect_err "nebius.txt:24:1: busbw / algbw = 1.879, but allreduce over the base's 4 nodes x 8 GPUs"
expect_err "says about 16 ranks"
expect_exit 2 "$FABSIM" calibrate "$NEB" --set cluster.nodes=2 -o never.yaml
expect_err "cannot tell the GPU from its device name '' (the file prints none)"

# --- issue 27, defects 1 and 16: -o is a new name or a regular file, never an
# input; refused with exit 2 before the fit (nothing printed, nothing replaced)
mkdir adir && ln -s adir dirlink && mkfifo fifo && cp "$AG" input.txt
# a device: as root a private node of the null device, so that a binary
# that regressed replaces that node, never /dev/null itself
dev=/dev/null
if [ "$(id -u)" = 0 ] && mknod nulldev c 1 3 2>/dev/null; then dev=nulldev; fi
for o in adir adir/ dirlink "$S/" fifo "$dev" input.txt; do
  expect_exit 2 "$FABSIM" calibrate allgather:input.txt -o "$o"
  expect_err "allowed: a new file name or a regular file"
  [ ! -s "$WORK/out" ] && pass || fail "-o $o: the fit ran before the refusal"
done
expect_err "input.txt: is input.txt, one of the nccl-tests files read"
[ -d adir ] && [ -L dirlink ] && [ -p fifo ] && [ -c "$dev" ] && cmp -s input.txt "$AG" && pass \
  || fail "a refused -o changed its target"
# a symlink to a regular file is replaced by the fragment, its target left alone
echo keep > target.txt && ln -s target.txt filelink
expect_exit 0 "$FABSIM" calibrate allgather:input.txt -o filelink
[ ! -L filelink ] && [ "$(cat target.txt)" = keep ] && pass || fail "-o through a symlink wrote its target"
# a fragment that cannot be written: exit 1
mkdir ro && chmod 500 ro
if [ "$(id -u)" != 0 ]; then
  expect_exit 1 "$FABSIM" calibrate "$AG" -o ro/cal.yaml
fi

# --- issue 27, defect 12: a file name cannot write keys into the fragment
evil=$'x\nworkload:\n  kind: traffic\n#all_gather_perf.txt'
cp "$AG" "$evil"
expect_exit 0 "$FABSIM" calibrate "$evil" -o evil.yaml
grep -q '^  kind: traffic' evil.yaml && fail "the file name wrote a key into the fragment" || pass
grep -qF 'x\x0aworkload:\x0a' evil.yaml && pass || fail "the name is not shown escaped"
expect_exit 0 "$FABSIM" run evil.yaml --set output.dir=evil --json
expect_json "$WORK/out" '.collectives[0].busbw_GBps > 0'
# make check-long (FABSIM_TEST_LONG): every shipped sample fitted together
if [ "${FABSIM_TEST_LONG:-0}" != 0 ]; then
  mkdir -p all && cd all
  expect_exit 0 "$FABSIM" calibrate "$S"/*.txt; expect_out "residual"
  cd ..
fi
finish
