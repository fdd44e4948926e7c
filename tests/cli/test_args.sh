#!/usr/bin/env bash
# The argv helper (src/cli/args.c) through the verbs: every verb reads
# --help, options with and without values, --set=KEY=VALUE, repeatable
# options and positional arguments the same way, and refuses a bad command
# line with its usage message and exit status 2 before anything runs. The
# messages are each verb's own, word for word as before the helper.
. "$(dirname "$0")/lib.sh"
D=$SRC/examples/default.yaml

for v in run topo memory reliability sweep compare calibrate; do
  expect_exit 0 "$FABSIM" $v --help; expect_out "usage: fabsim $v"
  expect_exit 0 "$FABSIM" $v -h;     expect_out "usage: fabsim $v"
done

# unknown options and missing values
expect_exit 2 "$FABSIM" topo --bogus;          expect_err "fabsim: unknown option '--bogus' (see --help)"
expect_exit 2 "$FABSIM" topo --quiet;          expect_err "fabsim: unknown option '--quiet' (see --help)"
expect_exit 2 "$FABSIM" topo --set;            expect_err "fabsim: --set needs a value (see --help)"
expect_exit 2 "$FABSIM" topo --dot;            expect_err "fabsim: --dot needs a value (see --help)"
expect_exit 2 "$FABSIM" memory --dot x;        expect_err "fabsim: unknown option '--dot' (see --help)"
expect_exit 2 "$FABSIM" memory a.yaml b.yaml;  expect_err "fabsim: one scenario file only; 'b.yaml' is a second (see --help)"
expect_exit 2 "$FABSIM" calibrate -o;          expect_err "fabsim: -o needs a value (see --help)"
expect_exit 2 "$FABSIM" calibrate --bogus x;   expect_err "fabsim: unknown option '--bogus' (see --help)"
expect_exit 2 "$FABSIM" calibrate;             expect_err "calibrate needs at least one nccl-tests output file"
expect_exit 2 "$FABSIM" compare --jobs;        expect_err "fabsim: unknown option or missing value '--jobs' (see --help)"
expect_exit 2 "$FABSIM" compare --bogus a b;   expect_err "fabsim: unknown option or missing value '--bogus' (see --help)"
expect_exit 2 "$FABSIM" compare -j 0 a b;      expect_err "fabsim: --jobs '0': a number of processes, 1..1024"
expect_exit 2 "$FABSIM" compare a.yaml;        expect_err "compare needs two or more scenarios"
# sweep: a short option last lacks its value; a long one last reads as unknown
expect_exit 2 "$FABSIM" sweep --vary a=1 -s;   expect_err "fabsim: a value is missing after '-s' (see --help)"
expect_exit 2 "$FABSIM" sweep --vary a=1 -j;   expect_err "fabsim: a value is missing after '-j' (see --help)"
expect_exit 2 "$FABSIM" sweep --vary a=1 --out; expect_err "fabsim: unknown option '--out' (see --help)"
expect_exit 2 "$FABSIM" sweep --vary;          expect_err "fabsim: unknown option '--vary' (see --help)"
expect_exit 2 "$FABSIM" sweep --jobs=2 --vary a=1; expect_err "fabsim: unknown option '--jobs=2' (see --help)"
expect_exit 2 "$FABSIM" sweep a b --vary a=1;  expect_err "fabsim: one scenario file only; 'b' is a second (see --help)"
expect_exit 2 "$FABSIM" sweep --vary a=1 --vary=a=2; expect_err "a is varied twice"
expect_exit 2 "$FABSIM" sweep "$D";            expect_err "sweep needs at least one --vary"
# the first bad argument wins, left to right; --help after a bad one is not reached
expect_exit 2 "$FABSIM" topo --bogus --help;   expect_err "unknown option '--bogus'"
# reliability's own flags are read first, wherever they stand
expect_exit 2 "$FABSIM" reliability --bogus --sweep-gpus x
expect_err "fabsim: --sweep-gpus: 'x' is not a list of integers >= 1 (e.g. 1024,4096)"
expect_exit 2 "$FABSIM" reliability --sweep-spares; expect_err "fabsim: --sweep-spares needs a value (see --help)"

# values: --set twice (the later wins), --set=KEY=VALUE, a flag among them
expect_exit 0 "$FABSIM" topo "$D" --set cluster.nodes=2 --json --set=cluster.nodes=4
expect_json "$WORK/out" '.nodes == 4'
expect_exit 0 "$FABSIM" topo -s cluster.nodes=2 --json
expect_json "$WORK/out" '.nodes == 2'
expect_exit 0 "$FABSIM" reliability --set cluster.nodes=4 --sweep-gpus 8,16 --json
expect_json "$WORK/out" '(.sweep | length) == 2'
# a repeatable option of the verb's own: two --sweep-interval lists add up
expect_exit 0 "$FABSIM" reliability --sweep-interval 10min --sweep-interval 20min,auto --json
expect_json "$WORK/out" '(.sweep | length) == 3'

finish
