#!/usr/bin/env bash
# fabric.topology: file with rdma-core ibnetdiscover output
# (examples/fabrics/ib-2tier.topo, docs/fabric-import.md): it imports as the
# 2-tier fat-tree it is, gives the same inventory and run figures as the
# generated one, and a malformed file is refused with its line.
. "$(dirname "$0")/lib.sh"
EX=$SRC/examples/fabrics/ib-2tier.yaml

expect_exit 0 "$FABSIM" topo "$EX" --json
cp "$WORK/out" imp.json
expect_json imp.json '.endpoints == 16 and .switches == 8 and .nodes == 4 and .tiers == 2'
expect_json imp.json '.switch_radix == 8 and .bisection_bandwidth_bps == 3.2e12'
# the generated twin: same inventory, cost and bisection
gen=(--set cluster.nodes=4 --set cluster.gpus_per_node=4 --set fabric.switch_radix=8)
expect_exit 0 "$FABSIM" topo "${gen[@]}" --json
cmp -s "$WORK/out" imp.json && pass || fail "ibnetdiscover inventory differs from the generated"
for fid in analytic flow; do
  expect_exit 0 "$FABSIM" run "$EX" --set simulation.fidelity=$fid --set output.dir=i-$fid --json
  jq -S '.collectives' "$WORK/out" > i-$fid.json
  expect_exit 0 "$FABSIM" run "$EX" --set simulation.fidelity=$fid --set output.dir=g-$fid --json \
    --set fabric.topology=fat-tree --set fabric.file=none "${gen[@]}"
  jq -S '.collectives' "$WORK/out" > g-$fid.json
  cmp -s i-$fid.json g-$fid.json && pass || fail "$fid: collective figures differ"
done

# malformed files: file:line, exit 2
cp "$SRC/examples/fabrics/ib-2tier.topo" ok.topo
printf 'fabric:\n  topology: file\n  file: f.topo\n' > s.yaml
bad() {
  expect_exit 2 "$FABSIM" topo s.yaml --set cluster.gpus_per_node=4 "${@:3}"
  expect_err "$2"
}
sed '11s/4xNDR/4xZDR/' ok.topo > f.topo
bad speed "f.topo:11:49"
expect_err "no link width and speed; allowed: a word such as 4xNDR"
sed '11s/"H-946dae0300c20000"/"H-00000000deadbeef"/' ok.topo > f.topo
bad peer "f.topo:11:1: ibnetdiscover: peer 'H-00000000deadbeef' is no Switch or Ca of the file"
sed 's/^Ca\t1 "H-946dae0300c20036"/Rt\t1 "H-946dae0300c20036"/' ok.topo > f.topo
bad router "ibnetdiscover: a router; allowed: switches and CAs"
# a node id twice (two Ca blocks of one GUID)
{ cat ok.topo; printf 'Ca\t1 "H-946dae0300c20036"\t\t# "gpu-node04 mlx5_3"\n'; } > f.topo
bad dup "'H-946dae0300c20036': 'H-946dae0300c20036' is taken by the node at line"
cp ok.topo f.topo
bad map "names no server in it" --set 'fabric.map.server=^(nothing)'
# a link missing (both its ends' lines): leaf01 - spine04
grep -v -e '"S-fc6a1c0300a10103"\[1\]' -e '"S-fc6a1c0300a10000"\[8\]' ok.topo > f.topo
bad spine "f.topo:"
expect_err "up links where the first leaf has 3; allowed: every leaf alike"

finish
