#!/usr/bin/env bash
# fabric.topology: file refuses a malformed fabric before anything runs:
# exit 2 and "file:line:col: key: what is wrong; what is allowed".
. "$(dirname "$0")/lib.sh"

# a small valid fabric to break: 2 nodes of 2 GPUs, 2 leaves, 2 spines
expect_exit 0 "$FABSIM" topo --set cluster.nodes=2 --set cluster.gpus_per_node=2 \
  --set fabric.switch_radix=4 --export ok.json
printf 'fabric:\n  topology: file\n  file: f.json\n' > s.yaml
expect_exit 0 "$FABSIM" topo s.yaml --set fabric.file=ok.json

# bad FILE EXPECTED: s.yaml on FILE exits 2 with EXPECTED on stderr
bad() {
  cp "$1" f.json
  expect_exit 2 "$FABSIM" run s.yaml --quiet --set output.dir=o
  expect_err "$2"
  cat "$WORK/err" >> messages.txt
  [ ! -e o ] && pass || fail "$1: a refused fabric wrote outputs"
}

# line of the first match of a fixed string in ok.json
line_of() { grep -nF -- "$1" ok.json | head -1 | cut -d: -f1; }

# dangling link endpoint
sed 's/"b": "spine1", "b_port": 2/"b": "spine9", "b_port": 2/' ok.json > dangling.json
l=$(grep -nF '"b": "spine9"' dangling.json | head -1 | cut -d: -f1)
bad dangling.json "f.json:$l:5: links["
expect_err "'spine9' names no node; allowed: a name listed in nodes"

# duplicate name
sed 's/"name": "gpu1"/"name": "gpu0"/' ok.json > dup.json
bad dup.json "'gpu0' is taken by the node at line"
expect_err "f.json:$(line_of '"name": "gpu1"'):5: nodes["

# speed out of range
sed '0,/"speed": "400Gbps"/s//"speed": "20Tbps"/' ok.json > speed.json
bad speed.json "is out of range; allowed 1Mbps .. 10Tbps"
sed '0,/"speed": "400Gbps"/s//"speed": "fast"/' ok.json > speed2.json
bad speed2.json ".speed: "

# a GPU without a NIC: drop gpu1's PCIe link
grep -v '"a": "gpu1", "a_port": 2, "b": "nic1"' ok.json > nonic.json
bad nonic.json "GPU 'gpu1' has no NIC"
expect_err "f.json:$(line_of '"name": "gpu1"'):5: nodes["

# disconnected: a switch with nothing on it
sed 's/^  "nodes": \[$/  "nodes": [\n    {"name": "lonely", "role": "switch", "tier": 2, "ports": 4},/' ok.json > disc.json
bad disc.json "'lonely'"

# a port used twice
sed '0,/"a": "leaf1", "a_port": 3/s//"a": "leaf1", "a_port": 4/' ok.json > port.json
bad port.json "port 4 of 'leaf1' is already cabled by links["

# a port beyond the switch's
sed '0,/"a": "leaf1", "a_port": 3/s//"a": "leaf1", "a_port": 9/' ok.json > port2.json
bad port2.json "port 9 of 'leaf1', which has 4 ports; allowed 1 .. 4"

# unknown role, unknown key, syntax
sed 's/"role": "nvswitch"/"role": "nvlink-switch"/' ok.json > role.json
bad role.json "is not a role; allowed server, gpu, nvswitch, pcie-switch, nic, switch"
sed '0,/"cable": "optical"/s//"colour": "blue"/' ok.json > key.json
bad key.json "unknown key; allowed a, a_port, b, b_port, speed, latency, cable"
head -c 300 ok.json > cut.json
bad cut.json "f.json:"
expect_err ": syntax: "

# a cable between roles that are never cabled
sed '0,/"a": "nic0", "a_port": 2, "b": "leaf0"/s//"a": "gpu0", "a_port": 3, "b": "leaf0"/' \
  ok.json > role2.json
bad role2.json "cannot be cabled to a switch"

# not a fat-tree fabsim builds: one spine cabled twice to a leaf, none to another
sed '0,/"b": "spine1", "b_port": 1/s//"b": "spine0", "b_port": 3/' ok.json > tree.json
bad tree.json "f.json:"
expect_err "allowed: a fat-tree as docs/fabric-import.md describes"

# speeds that differ within a class (per-tier speeds: not yet)
sed '0,/"speed": "400Gbps", "latency": "200ns", "cable": "optical"}/s//"speed": "200Gbps", "latency": "200ns", "cable": "optical"}/' \
  ok.json > mixed.json
bad mixed.json "one speed per link class"

# the scenario's own keys must agree with the file
expect_exit 2 "$FABSIM" topo s.yaml --set fabric.file=ok.json --set fabric.switch_radix=8
expect_err "fabric.switch_radix: the scenario sets it, but fabric.file (ok.json) gives 4"
# a missing file, and a file without fabric.topology: file
expect_exit 2 "$FABSIM" topo s.yaml --set fabric.file=missing.json
expect_err "--set:1:13: fabric.file: cannot read 'missing.json'"
expect_exit 2 "$FABSIM" topo --set fabric.file=ok.json
expect_err "fabric.file: a fabric file with fabric.topology fat-tree"
expect_exit 2 "$FABSIM" topo --set fabric.topology=file
expect_err "fabric.topology: file needs fabric.file"

[ -n "${FABRIC_SHOW:-}" ] && cat messages.txt >&2
finish
