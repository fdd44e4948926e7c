/* Every way a scenario is rejected, with the exact message a user reads:
 * "FILE:LINE:COL: KEY: what is wrong; what is allowed". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/config.h"

typedef struct bad_case {
  const char *yaml;    /* NULL: no file */
  const char *sets[3]; /* NULL-terminated --set arguments */
  const char *msg;     /* the whole expected message */
} bad_case;

static void check(const bad_case *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const bad_case *c = &cases[i];
    cfg_scenario s;
    cfg_doc *doc = (cfg_doc *)&s; /* must come back NULL */
    sim_error err = {0};
    int nsets = 0;
    while (nsets < 3 && c->sets[nsets]) nsets++;
    memset(&s, 0xab, sizeof s);
    int rc = cfg_load_buffer(&s, &doc, "e.yaml", c->yaml, c->yaml ? strlen(c->yaml) : 0, c->sets,
                             nsets, &err);
    if (rc != SIM_ECONFIG || err.code != SIM_ECONFIG || strcmp(err.msg, c->msg) != 0)
      fail_msg("case %zu (%s%s%s): rc %d\n  got:  %s\n  want: %s", i, c->yaml ? c->yaml : "",
               nsets ? " --set " : "", nsets ? c->sets[0] : "", rc, err.msg, c->msg);
    assert_null(doc);
    assert_null(s.output.dir); /* *out left empty */
    assert_int_equal(s.cluster.nodes, 0);
  }
}

#define CHECK(table) check(table, sizeof table / sizeof table[0])

static void test_structure_errors(void **state) {
  static const bad_case cases[] = {
      {"- a\n- b\n",
       {0},
       "e.yaml:1:1: expected a mapping of keys at the top level (such as 'cluster.nodes: 4'), "
       "got a list"},
      {"42\n",
       {0},
       "e.yaml:1:1: expected a mapping of keys at the top level (such as 'cluster.nodes: 4'), "
       "got a value"},
      {"cluster: {nodes: 4\n",
       {0},
       "e.yaml:2:1: YAML syntax error: did not find expected ',' or '}' (while parsing a flow "
       "mapping)"},
      {"cluster:\n\tnodes: 4\n",
       {0},
       "e.yaml:2:1: YAML syntax error: found character that cannot start any token (while "
       "scanning for the next token)"},
      {"cluster:\n  nodes: 4\n gpu: H100\n",
       {0},
       "e.yaml:3:2: YAML syntax error: did not find expected key (while parsing a block "
       "mapping)"},
      {"cluster.nodes: \x01\n",
       {0},
       "e.yaml:1:16: YAML syntax error: control characters are not allowed"},
      {"cluster.nodes: 4\n---\ncluster.nodes: 5\n",
       {0},
       "e.yaml:3:1: a second YAML document; a scenario is one document"},
      {"? [cluster]\n: 4\n",
       {0},
       "e.yaml:1:3: a key must be a name such as cluster.nodes, not a list"},
      {"cluster:\n  nodes: {a: 1}\n",
       {0},
       "e.yaml:2:10: cluster.nodes: expected a value (integer 0..1000000), got a mapping"},
      {"fabric.topology: [fat-tree]\n",
       {0},
       "e.yaml:1:18: fabric.topology: expected a value (one of: fat-tree, multi-plane, "
       "rail-optimized, file), got a list"},
      {"cluster: 4\n",
       {0},
       "e.yaml:1:10: cluster: expected a mapping of cluster.* keys, got a value"},
      {"cluster:\n  nic: [1, 2]\n",
       {0},
       "e.yaml:2:8: cluster.nic: expected a mapping of cluster.nic.* keys, got a list"},
  };
  (void)state;
  CHECK(cases);
}

static void test_unknown_keys(void **state) {
  static const bad_case cases[] = {
      {"cluster:\n  nodez: 4\n",
       {0},
       "e.yaml:2:3: cluster.nodez: unknown key; did you mean 'cluster.nodes'?"},
      {"clustr:\n  nodes: 4\n", {0}, "e.yaml:1:1: clustr: unknown key; did you mean 'cluster'?"},
      {"fabric.topolgy: fat-tree\n",
       {0},
       "e.yaml:1:1: fabric.topolgy: unknown key; did you mean 'fabric.topology'?"},
      {"nodes: 4\n", {0}, "e.yaml:1:1: nodes: unknown key; did you mean 'cluster.nodes'?"},
      {"fabric:\n  oversubscripton: 2\n",
       {0},
       "e.yaml:2:3: fabric.oversubscripton: unknown key; did you mean 'fabric.oversubscription'?"},
      {"fabric.nodes: 2\n",
       {0},
       "e.yaml:1:1: fabric.nodes: unknown key; did you mean 'cluster.nodes'?"},
      {"colour: red\n", {0}, "e.yaml:1:1: colour: unknown key (docs/scenario.md lists every key)"},
      {"cluster:\n  nic:\n    speed: 400Gbps\n",
       {0},
       "e.yaml:3:5: cluster.nic.speed: unknown key (docs/scenario.md lists every key)"},
  };
  (void)state;
  CHECK(cases);
}

static void test_value_errors(void **state) {
  static const bad_case cases[] = {
      {"cluster.nodes: four\n",
       {0},
       "e.yaml:1:16: cluster.nodes: expected an integer 0..1000000, got 'four'"},
      {"cluster:\n  gpus_per_node: 8.0\n",
       {0},
       "e.yaml:2:18: cluster.gpus_per_node: expected an integer 1..72, got '8.0'"},
      {"cluster.nodes:\n",
       {0},
       "e.yaml:1:15: cluster.nodes: missing value; expected an integer 0..1000000"},
      {"cost.optical_endpoint_links: yes\n",
       {0},
       "e.yaml:1:30: cost.optical_endpoint_links: expected true or false, got 'yes'"},
      {"output:\n  flows: maybe\n",
       {0},
       "e.yaml:2:10: output.flows: expected true or false, got 'maybe'"},
      {"fabric.oversubscription: lots\n",
       {0},
       "e.yaml:1:26: fabric.oversubscription: expected a number, got 'lots'"},
      {"fabric.oversubscription: .nan\n",
       {0},
       "e.yaml:1:26: fabric.oversubscription: expected a number, got '.nan'"},
      {"cost.nic_usd: 1e999\n", {0}, "e.yaml:1:15: cost.nic_usd: '1e999' is too large"},
      {"fabric.link_latency: 100 nsec\n",
       {0},
       "e.yaml:1:22: fabric.link_latency: unknown unit 'nsec' in '100 nsec'; units: ps, ns, us "
       "(or \xc2\xb5s), ms, s, min, h, d; a plain number is only accepted for 0"},
      {"fabric.link_latency: 100\n",
       {0},
       "e.yaml:1:22: fabric.link_latency: '100' needs a unit; units: ps, ns, us (or \xc2\xb5s), "
       "ms, s, min, h, d; a plain number is only accepted for 0"},
      {"workload.collective.size: 1.5B\n",
       {0},
       "e.yaml:1:27: workload.collective.size: '1.5B' is not a whole number of bytes"},
      {"cluster.gpu: H300\n",
       {0},
       "e.yaml:1:14: cluster.gpu: 'H300' is not one of: H100, H800, A100, B200, H200, MI300X"},
      {"cluster.gpu: b200\n",
       {0},
       "e.yaml:1:14: cluster.gpu: 'b200' is not one of: H100, H800, A100, B200, H200, MI300X (did "
       "you mean "
       "'B200'?)"},
      {"fabric.routing: random\n",
       {0},
       "e.yaml:1:17: fabric.routing: 'random' is not one of: ecmp, adaptive, spray, static"},
      {"simulation.fidelity: exact\n",
       {0},
       "e.yaml:1:22: simulation.fidelity: 'exact' is not one of: analytic, flow, packet"},
      {"reliability:\n  rates: RSC-1\n",
       {0},
       "e.yaml:2:10: reliability.rates: 'RSC-1' is not one of: llama3-16k, rsc-1, rsc-2 (did "
       "you mean 'rsc-1'?)"},
      {NULL,
       {"reliability.rates=rsc-3"},
       "--set:1:19: reliability.rates: 'rsc-3' is not one of: llama3-16k, rsc-1, rsc-2"},
      {"output.dir: ''\n", {0}, "e.yaml:1:13: output.dir: must not be empty"},
      {"output.dir: \"a\\0b\"\n", {0}, "e.yaml:1:13: output.dir: contains a NUL character"},
      /* issue 27, defect 12: control characters that YAML escapes let through (the reader
       * refuses them raw, but for tab) reached the terminal and events.csv */
      {"output.dir: \"a\\tb\"\n",
       {0},
       "e.yaml:1:13: output.dir: contains a control character (\\x09) at byte 2; allowed: "
       "printable text (it is shown on terminals and written into the output files)"},
      {"output.dir: \"\\e[31mred\"\n",
       {0},
       "e.yaml:1:13: output.dir: contains a control character (\\x1B) at byte 1; allowed: "
       "printable text (it is shown on terminals and written into the output files)"},
      {"workload.trace.path: \"a\\u0085b\"\n",
       {0},
       "e.yaml:1:22: workload.trace.path: contains a control character (U+0085) at byte 2; "
       "allowed: printable text (it is shown on terminals and written into the output files)"},
      {NULL,
       {"output.dir=a\tb"},
       "--set:1:12: output.dir: contains a control character (\\x09) at byte 2; allowed: "
       "printable text (it is shown on terminals and written into the output files)"},
      {"jobs:\n  - {name: \"a\\nb\", gpus: 8, workload: {kind: collective}}\n",
       {0},
       "e.yaml:2:12: jobs[0].name: contains a control character (\\x0A) at byte 2; allowed: "
       "printable text (it is shown on terminals and written into the output files)"},
      {"jobs:\n  - {name: a, gpus: 8, workload: {kind: collective, trace.classes: \"\\x7f\"}}\n",
       {0},
       "e.yaml:2:68: jobs[0].workload.trace.classes: contains a control character (\\x7F) at "
       "byte 1; allowed: printable text (it is shown on terminals and written into the output "
       "files)"},
      {"faults: [{at: 1ms, kind: gpu-fail, target: \"gpu1\\a\"}]\n",
       {0},
       "e.yaml:1:44: faults[0].target: contains a control character (\\x07) at byte 5; "
       "allowed: printable text (it is shown on terminals and written into the output files)"},
      {"cluster.nodes: 1\ncluster.nodes: 2\n",
       {0},
       "e.yaml:2:16: cluster.nodes: duplicate key (first set at line 1, column 16)"},
      {"cluster:\n  nodes: 1\ncluster.nodes: 2\n",
       {0},
       "e.yaml:3:16: cluster.nodes: duplicate key (first set at line 2, column 10)"},
      {"cluster:\n  nodes: 1\ncluster:\n  gpu: A100\n",
       {0},
       "e.yaml:4:3: cluster: duplicate key (first set at line 2, column 3)"},
  };
  (void)state;
  CHECK(cases);
}

static void test_range_errors(void **state) {
  static const bad_case cases[] = {
      {"cluster.nodes: -1\n",
       {0},
       "e.yaml:1:16: cluster.nodes: -1 is out of range (allowed 0..1000000)"},
      {"cluster.nodes: 1000001\n",
       {0},
       "e.yaml:1:16: cluster.nodes: 1000001 is out of range (allowed 0..1000000)"},
      {"cluster.gpus_per_node: 0\n",
       {0},
       "e.yaml:1:24: cluster.gpus_per_node: 0 is out of range (allowed 1..72)"},
      {"cluster.gpus_per_node: 73\n",
       {0},
       "e.yaml:1:24: cluster.gpus_per_node: 73 is out of range (allowed 1..72)"},
      {"cluster.nic.per_node: 0\n",
       {0},
       "e.yaml:1:23: cluster.nic.per_node: 0 is out of range (allowed 1..256)"},
      {"fabric.tiers: 4\n", {0}, "e.yaml:1:15: fabric.tiers: 4 is out of range (allowed 2..3)"},
      {"output.max_flows: 0\n",
       {0},
       "e.yaml:1:19: output.max_flows: 0 is out of range (allowed 1..100000000)"},
      {"fabric.tiers: 1\n", {0}, "e.yaml:1:15: fabric.tiers: 1 is out of range (allowed 2..3)"},
      {"fabric.switch_radix: 2\n",
       {0},
       "e.yaml:1:22: fabric.switch_radix: 2 is out of range (allowed 4..1024)"},
      {"fabric.planes: 0\n", {0}, "e.yaml:1:16: fabric.planes: 0 is out of range (allowed 1..256)"},
      {"fabric.mtu: 128\n",
       {0},
       "e.yaml:1:13: fabric.mtu: 128 is out of range (allowed 256..9216)"},
      {"fabric.mtu: 9217\n",
       {0},
       "e.yaml:1:13: fabric.mtu: 9217 is out of range (allowed 256..9216)"},
      {"fabric.oversubscription: 0.5\n",
       {0},
       "e.yaml:1:26: fabric.oversubscription: 0.5 is out of range (must be >= 1)"},
      {"cluster.gpu_flops: 0\n",
       {0},
       "e.yaml:1:20: cluster.gpu_flops: 0 is out of range (must be > 0)"},
      {"cost.nic_usd: -5\n", {0}, "e.yaml:1:15: cost.nic_usd: -5 is out of range (must be >= 0)"},
      {"cluster.nic.bandwidth: 0Gbps\n",
       {0},
       "e.yaml:1:24: cluster.nic.bandwidth: '0Gbps' is out of range (must be > 0)"},
      {"fabric.link_bandwidth: -400Gbps\n",
       {0},
       "e.yaml:1:24: fabric.link_bandwidth: '-400Gbps' is negative; a bandwidth must be >= 0"},
      {"cluster.gpu_memory: 0GiB\n",
       {0},
       "e.yaml:1:21: cluster.gpu_memory: '0GiB' is out of range (must be > 0)"},
      {"workload.collective.size: 0\n",
       {0},
       "e.yaml:1:27: workload.collective.size: '0' is out of range (must be > 0)"},
      {"simulation.seed: 18446744073709551616\n",
       {0},
       "e.yaml:1:18: simulation.seed: 18446744073709551616 is out of range (allowed 0..2^64-1)"},
      {"workload.collective.ranks: 4294967296\n",
       {0},
       "e.yaml:1:28: workload.collective.ranks: 4294967296 is out of range (allowed 0..2^32-1)"},
  };
  (void)state;
  CHECK(cases);
}

static void test_set_errors(void **state) {
  static const bad_case cases[] = {
      {NULL, {"cluster.nodes"}, "--set:1:1: expected key=value, got 'cluster.nodes'"},
      {NULL,
       {"cluster.nodes=4", "=4"},
       "--set:2:1: expected key=value, the key before '=' is missing"},
      {NULL,
       {"cluster.nodes=4", "fabric.switch_radx=64"},
       "--set:2:1: fabric.switch_radx: unknown key; did you mean 'fabric.switch_radix'?"},
      {NULL,
       {"  cluster.nodez=4"},
       "--set:1:3: cluster.nodez: unknown key; did you mean 'cluster.nodes'?"},
      {NULL,
       {"cluster=4"},
       "--set:1:1: cluster: is a section; set one of its keys (such as cluster.nodes)"},
      {NULL,
       {"fabric.ecmp=4"},
       "--set:1:1: fabric.ecmp: is a section; set one of its keys (such as fabric.ecmp.hash_seed)"},
      {NULL,
       {"cluster.nodes=x"},
       "--set:1:15: cluster.nodes: expected an integer 0..1000000, got 'x'"},
      {NULL,
       {"cluster.nodes="},
       "--set:1:15: cluster.nodes: missing value; expected an integer 0..1000000"},
      {NULL,
       {"cluster.nodes= {a: 1}"},
       "--set:1:16: cluster.nodes: expected a value (integer 0..1000000), got a mapping"},
      {NULL,
       {"cluster.gpu=[H100]"},
       "--set:1:13: cluster.gpu: expected a value (one of: H100, H800, A100, B200, H200, MI300X), "
       "got a list"},
      {NULL,
       {"output.dir=\"abc"},
       "--set:1:16: output.dir: YAML syntax error: found unexpected end of stream (while "
       "scanning a quoted scalar)"},
      {"cluster.nodes: 4\n",
       {"cluster.nic.bandwidth=400 gbps"},
       "--set:1:23: cluster.nic.bandwidth: unknown unit 'gbps' in '400 gbps' (units are "
       "case-sensitive: did you mean 'Gbps'?); units: bits/s: bps, Kbps, Mbps, Gbps, Tbps (or "
       "Kb/s, Mb/s, Gb/s, Tb/s); bytes/s: KB/s, MB/s, GB/s, TB/s (x1000) or KiB/s, MiB/s, GiB/s, "
       "TiB/s (x1024); a plain number is bits/s"},
      {NULL,
       {"cost.optical_endpoint_links=on"},
       "--set:1:29: cost.optical_endpoint_links: expected true or false, got 'on'"},
  };
  (void)state;
  CHECK(cases);
}

/* Checks across keys, each located at the key to change. */
static void test_validation_errors(void **state) {
  static const bad_case cases[] = {
      {"fabric.switch_radix: 63\n",
       {0},
       "e.yaml:1:22: fabric.switch_radix: 63 is odd; a fat-tree switch splits its ports evenly "
       "between down- and uplinks"},
      {"cluster.nic.per_node: 3\n",
       {0},
       "e.yaml:1:23: cluster.nic.per_node: 3 NICs cannot be shared evenly by 8 GPUs; use a "
       "divisor or a multiple of cluster.gpus_per_node (8)"},
      {"cluster: {gpus_per_node: 8, nic.per_node: 12}\n",
       {0},
       "e.yaml:1:43: cluster.nic.per_node: 12 NICs cannot be shared evenly by 8 GPUs; use a "
       "divisor or a multiple of cluster.gpus_per_node (8)"},
      {"fabric.planes: 2\n",
       {0},
       "e.yaml:1:16: fabric.planes: 2 planes need fabric.topology: multi-plane (fat-tree has one "
       "plane)"},
      {"fabric: {topology: rail-optimized, planes: 4}\n",
       {0},
       "e.yaml:1:44: fabric.planes: 4 planes need fabric.topology: multi-plane (rail-optimized "
       "has one plane)"},
      {"fabric: {topology: multi-plane, planes: 16}\n",
       {0},
       "e.yaml:1:41: fabric.planes: 16 planes exceed cluster.nic.per_node (8); every plane needs "
       "a NIC on each node"},
      {"fabric: {topology: multi-plane, planes: 3}\n",
       {0},
       "e.yaml:1:41: fabric.planes: 3 does not divide cluster.nic.per_node (8); every plane gets "
       "the same number of NICs per node"},
      {"fabric.mtu: 9000\n",
       {0},
       "e.yaml:1:13: fabric.mtu: 9000 is not an InfiniBand MTU; allowed 256, 512, 1024, 2048, "
       "4096"},
      {"fabric.mtu: 8192\n",
       {0},
       "e.yaml:1:13: fabric.mtu: 8192 is not an InfiniBand MTU; allowed 256, 512, 1024, 2048, "
       "4096"},
      {"workload.collective: {op: alltoall, algorithm: ring}\n",
       {0},
       "e.yaml:1:48: workload.collective.algorithm: ring does not implement alltoall; use "
       "pairwise (or leave the algorithm unset)"},
      {"workload.collective.algorithm: pairwise\n",
       {0},
       "e.yaml:1:32: workload.collective.algorithm: pairwise only implements alltoall; allreduce "
       "needs ring (or leave the algorithm unset)"},
      {"workload.collective.ranks: 1\n",
       {0},
       "e.yaml:1:28: workload.collective.ranks: 1 rank is not a collective; use 0 (every GPU) or "
       "at least 2"},
      {"cluster.nodes: 2\nworkload.collective.ranks: 32\n",
       {0},
       "e.yaml:2:28: workload.collective.ranks: 32 ranks exceed the 16 GPUs of the cluster (2 "
       "nodes x 8 GPUs)"},
      {"fabric.switch_radix: 64\n",
       {"fabric.switch_radix=65"},
       "--set:1:21: fabric.switch_radix: 65 is odd; a fat-tree switch splits its ports evenly "
       "between down- and uplinks"},
  };
  (void)state;
  CHECK(cases);
}

/* Values next to the limits that must be accepted. */
static void test_limits_accepted(void **state) {
  static const char *const ok[] = {
      "cluster.gpus_per_node: 72\ncluster.nic.per_node: 8\n",
      "fabric.transport: roce\nfabric.mtu: 9000\n",
      "fabric.transport: ethernet\nfabric.mtu: 9216\n",
      "fabric.mtu: 256\n",
      "cluster.gpus_per_node: 4\ncluster.nic.per_node: 8\n",
      "fabric.switch_radix: 4\nfabric.tiers: 3\n",
      "cluster.nodes: 2\nworkload.collective.ranks: 16\n",
      "cost: {switch_usd: 0, nic_usd: 0.0}\n",
      "fabric.link_latency: 0\n",
  };
  (void)state;
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    cfg_scenario s;
    cfg_doc *doc;
    sim_error err = {0};
    if (cfg_load_buffer(&s, &doc, "ok.yaml", ok[i], strlen(ok[i]), NULL, 0, &err) != SIM_OK)
      fail_msg("case %zu rejected: %s", i, err.msg);
    cfg_free(&s, doc);
  }
}

/* Resource limits (issue #13, defect 8): nesting, size, and what kind of
 * file is read. Each is refused before any YAML document is built. */
static char *nested(size_t levels, const char *prefix) {
  size_t p = strlen(prefix);
  char *y = malloc(p + 2 * levels + 2);
  memcpy(y, prefix, p);
  memset(y + p, '[', levels);
  memset(y + p + levels, ']', levels);
  y[p + 2 * levels] = '\n';
  y[p + 2 * levels + 1] = '\0';
  return y;
}

static int load_text(const char *yaml, size_t len, const char *set, sim_error *err) {
  cfg_scenario s;
  cfg_doc *doc = NULL;
  int rc = cfg_load_buffer(&s, &doc, "e.yaml", yaml, len, &set, set ? 1 : 0, err);
  if (rc == SIM_OK) cfg_free(&s, doc);
  return rc;
}

static void test_resource_limits(void **state) {
  sim_error err = {0};
  (void)state;
  /* 100,000 levels (200 KB): refused at the 17th, after a pass over 17 levels
   * (libyaml alone took 46 s on it) */
  char *y = nested(100000, "a: ");
  assert_int_equal(load_text(y, strlen(y), NULL, &err), SIM_ECONFIG);
  assert_string_equal(err.msg,
                      "e.yaml:1:19: YAML nested 17 levels deep here; allowed at most 16 "
                      "(the deepest valid scenario nests 4: the top mapping, a section, "
                      "its subsection, a list)");
  free(y);
  /* 16 levels are within the cap: the error is the key's own */
  y = nested(15, "cluster.nodes: ");
  assert_int_equal(load_text(y, strlen(y), NULL, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "e.yaml:1:16: cluster.nodes: expected a value"));
  free(y);
  /* the same in a --set value, located in the argument */
  y = nested(100000, "cluster.nodes=");
  y[strlen(y) - 1] = '\0';
  assert_int_equal(load_text(NULL, 0, y, &err), SIM_ECONFIG);
  assert_string_equal(err.msg,
                      "--set:1:31: cluster.nodes: YAML nested 17 levels deep here; "
                      "allowed at most 16 (the deepest valid scenario nests 4: the top "
                      "mapping, a section, its subsection, a list)");
  free(y);
  /* size: 4 MiB of comments is read; one byte more is not */
  size_t big = 4u << 20;
  y = malloc(big + 2);
  memset(y, '#', big + 1);
  y[big + 1] = '\0';
  assert_int_equal(load_text(y, big, NULL, &err), SIM_OK);
  assert_int_equal(load_text(y, big + 1, NULL, &err), SIM_ECONFIG);
  assert_string_equal(err.msg,
                      "e.yaml: 4194305 bytes; a scenario is at most 4194304 bytes (4 MiB)");
  free(y);
}

/* The fuzz corpus's deep-nesting seed (fuzz/corpus/deep.yaml: 1,000 flow
 * levels in the file, 3,000 in a --set) loads to the depth error at once. */
static void test_fuzz_deep_seed(void **state) {
  char path[4096], *text, *sep, *set;
  const char *src = getenv("FABSIM_SOURCE_DIR");
  cfg_scenario s;
  cfg_doc *doc = NULL;
  sim_error err = {0};
  long n;
  FILE *f;
  (void)state;
  snprintf(path, sizeof path, "%s/fuzz/corpus/deep.yaml", src ? src : "..");
  f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  rewind(f);
  text = calloc(1, (size_t)n + 1);
  assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  sep = strstr(text, "\n@@\n");
  assert_non_null(sep);
  set = sep + 4;
  set[strcspn(set, "\n")] = '\0';
  assert_int_equal(
      cfg_load_buffer(&s, &doc, "deep.yaml", text, (size_t)(sep - text + 1), NULL, 0, &err),
      SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "deep.yaml:2:43: YAML nested 17 levels deep here"));
  assert_int_equal(cfg_load_buffer(&s, &doc, "deep.yaml", NULL, 0, (const char **)&set, 1, &err),
                   SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "--set:1:24: faults: YAML nested 17 levels deep here"));
  free(text);
}

/* Only regular files are read: a device, a folder or a pipe is refused at
 * once (`fabsim run /dev/zero` read until memory ran out and then blamed
 * cluster.nodes). */
static void test_file_kinds(void **state) {
  static const struct {
    const char *path, *msg;
  } cases[] = {
      {"/dev/zero", "/dev/zero: is a character device; a scenario is a regular file"},
      {"/dev/null", "/dev/null: is a character device; a scenario is a regular file"},
      {"/", "/: is a folder; a scenario is a regular file"},
      {"/nonexistent/s.yaml", "/nonexistent/s.yaml: cannot read: No such file or directory"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cfg_scenario s;
    cfg_doc *doc = NULL;
    sim_error err = {0};
    assert_int_equal(cfg_load(&s, &doc, cases[i].path, NULL, 0, &err), SIM_EIO);
    assert_string_equal(err.msg, cases[i].msg);
    assert_null(doc);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_structure_errors), cmocka_unit_test(test_unknown_keys),
      cmocka_unit_test(test_value_errors),     cmocka_unit_test(test_range_errors),
      cmocka_unit_test(test_set_errors),       cmocka_unit_test(test_validation_errors),
      cmocka_unit_test(test_limits_accepted),  cmocka_unit_test(test_resource_limits),
      cmocka_unit_test(test_file_kinds),       cmocka_unit_test(test_fuzz_deep_seed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
