/* Reading Chakra ET files and matching them over ranks: what is read from
 * the example job, and a clear error (file, byte offset, node id, what is
 * wrong) for every malformed, truncated or inconsistent input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fabsim/trace.h"
#include "fixture.h"
#include "trace/example_trace.h"

/* Fails the test unless parsing buf fails with a message holding each of
 * the NULL-terminated strings. */
static void parse_fails(const uint8_t *buf, size_t len, ...) {
  trc_trace t;
  sim_error err = {0};
  int rc = trc_parse(&t, "bad.et", buf, len, &err);
  if (rc == SIM_OK) {
    trc_trace_free(&t);
    fail_msg("parsed; expected an error");
  }
  assert_int_equal(rc, SIM_EINVAL);
  print_message("  %s\n", err.msg);
  va_list ap;
  va_start(ap, len);
  for (const char *s; (s = va_arg(ap, const char *));)
    if (!strstr(err.msg, s)) fail_msg("'%s' not in: %s", s, err.msg);
  va_end(ap);
}

static void test_reads_example(void **state) {
  (void)state;
  size_t len;
  uint8_t *buf = ex_trace(0, &len);
  trc_trace t;
  sim_error err = {0};
  if (trc_parse(&t, "et.0.et", buf, len, &err) != SIM_OK) fail_msg("%s", err.msg);
  assert_string_equal(t.version, "0.0.4");
  assert_int_equal(t.n, 6);
  assert_int_equal(t.nodes[0].kind, TRC_COMPUTE);
  assert_int_equal(t.nodes[0].duration_us, EX_FWD_US);
  assert_int_equal(t.nodes[0].num_ops, EX_FWD_OPS);
  assert_int_equal(t.nodes[0].tensor_size, EX_TENSOR_BYTES);
  assert_int_equal(t.nodes[1].kind, TRC_COLL);
  assert_int_equal(t.nodes[1].comm_type, TRC_ALL_REDUCE);
  assert_int_equal(t.nodes[1].bytes, EX_AR_BYTES);
  assert_int_equal(t.nodes[1].pg, TRC_NO_GROUP);
  assert_int_equal(t.nodes[3].comm_type, TRC_ALL_GATHER);
  assert_string_equal(t.pg_names[t.nodes[3].pg], "tp0");
  assert_int_equal(t.nodes[4].kind, TRC_SEND);
  assert_int_equal(t.nodes[4].peer, 4);
  assert_int_equal(t.nodes[4].tag, 7);
  assert_int_equal(t.nodes[4].bytes, EX_P2P_BYTES);
  assert_int_equal(t.nodes[2].ndeps, 1);
  assert_int_equal(t.nodes[2].deps[0], 1);
  assert_int_equal(t.nodes[0].offset, 8); /* after the 8-byte GlobalMetadata frame */
  trc_trace_free(&t);
  sim_free(buf);
}

/* Metadata then n nodes given as raw bytes. */
static size_t with_meta(uint8_t *out, const uint8_t *tail, size_t n) {
  static const uint8_t meta[] = {0x07, 0x0a, 0x05, '0', '.', '0', '.', '4'};
  memcpy(out, meta, sizeof meta);
  memcpy(out + sizeof meta, tail, n);
  return sizeof meta + n;
}

static void test_framing(void **state) {
  (void)state;
  size_t len;
  uint8_t *buf = ex_trace(0, &len), tmp[64];
  parse_fails(buf, 0, "bad.et: empty file", NULL);
  /* the last node cut short: its offset named, the bytes it needs and has */
  trc_trace t;
  sim_error err = {0};
  assert_int_equal(trc_parse(&t, "ok.et", buf, len, &err), SIM_OK);
  char at[64];
  snprintf(at, sizeof at, "byte %llu: truncated", (unsigned long long)t.nodes[5].offset);
  trc_trace_free(&t);
  parse_fails(buf, len - 3, at, "the Node message after node 5 needs", NULL);
  parse_fails(buf, 5, "byte 0: truncated: the GlobalMetadata message needs 7 bytes", NULL);
  sim_free(buf);
  /* a length prefix that ends with the file */
  static const uint8_t cut[] = {0x80};
  parse_fails(tmp, with_meta(tmp, cut, sizeof cut),
              "byte 8: truncated: the file ends inside "
              "the length",
              NULL);
  /* an 11-byte varint */
  static const uint8_t longv[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  parse_fails(tmp, with_meta(tmp, longv, sizeof longv), "byte 8: bad length", "longer than 10",
              NULL);
  /* a frame holding bytes that are no protobuf message (field 0, wire type 7) */
  static const uint8_t junk[] = {0x03, 0x07, 0xff, 0xff};
  parse_fails(tmp, with_meta(tmp, junk, sizeof junk),
              "byte 8: the first Node message is not a "
              "valid Chakra Node",
              NULL);
  /* a node type Chakra does not have (Node{id: 1, type: 9}) */
  static const uint8_t type9[] = {0x04, 0x08, 0x01, 0x18, 0x09};
  parse_fails(tmp, with_meta(tmp, type9, sizeof type9),
              "byte 8, node 1: node type 9 is not a "
              "Chakra NodeType",
              NULL);
}

static void write_fails(const trc_write_node *n, size_t k, ...) {
  size_t len;
  uint8_t *buf = trc_write("0.0.4", n, k, &len);
  trc_trace t;
  sim_error err = {0};
  int rc = trc_parse(&t, "bad.et", buf, len, &err);
  sim_free(buf);
  if (rc == SIM_OK) {
    trc_trace_free(&t);
    fail_msg("parsed; expected an error");
  }
  print_message("  %s\n", err.msg);
  va_list ap;
  va_start(ap, k);
  for (const char *s; (s = va_arg(ap, const char *));)
    if (!strstr(err.msg, s)) fail_msg("'%s' not in: %s", s, err.msg);
  va_end(ap);
}

static void test_graph(void **state) {
  (void)state;
  static const uint64_t d1[] = {1}, d2[] = {2}, d3[] = {3}, d9[] = {9};
  trc_write_node n[3] = {{.id = 1, .kind = TRC_COMPUTE, .duration_us = 1, .deps = d3, .ndeps = 1},
                         {.id = 2, .kind = TRC_COMPUTE, .duration_us = 1, .deps = d1, .ndeps = 1},
                         {.id = 3, .kind = TRC_COMPUTE, .duration_us = 1, .deps = d2, .ndeps = 1}};
  write_fails(n, 3, "node 1: dependency cycle (1 <- 3 <- 2 <- ...); 3 of 3 nodes can never start",
              NULL);
  n[0].deps = d9;
  write_fails(n, 3, "node 1: depends on node 9, which the file does not hold", NULL);
  n[0].ndeps = 0;
  n[2].id = 2;
  write_fails(n, 3, "node 2: duplicate node id (also at byte", NULL);
  n[2].id = 3;
  n[2].deps = d3; /* a node on itself */
  write_fails(n, 3, "node 3: dependency cycle", NULL);
  trc_write_node c = {.id = 1, .kind = TRC_COLL, .comm_type = 42, .bytes = 8};
  write_fails(&c, 1, "node 1: comm_type 42 is not a Chakra CollectiveCommType", NULL);
}

/* The example job with rank `rank`'s nodes changed by edit. */
static int example_with(int rank, void (*edit)(trc_write_node *n, size_t *k), trc_set **out,
                        sim_error *err) {
  trc_trace *tr = sim_calloc(EX_RANKS, sizeof *tr);
  uint32_t rt[EX_RANKS];
  for (uint32_t r = 0; r < EX_RANKS; r++) {
    trc_write_node n[6];
    size_t k = ex_nodes(r, n), len;
    if ((int)r == rank) edit(n, &k);
    uint8_t *buf = trc_write("0.0.4", n, k, &len);
    char name[32];
    snprintf(name, sizeof name, "et.%u.et", r);
    if (trc_parse(&tr[r], name, buf, len, err) != SIM_OK) fail_msg("%s", err->msg);
    sim_free(buf);
    rt[r] = r;
  }
  return trc_set_create(out, tr, EX_RANKS, rt, EX_RANKS, err);
}

static void ar_bigger(trc_write_node *n, size_t *k) { (void)k, n[1].bytes *= 2; }
static void ar_gone(trc_write_node *n, size_t *k) { /* forward -> backward */
  n[2].deps = n[1].deps;
  memmove(&n[1], &n[2], (*k - 2) * sizeof *n);
  (*k)--;
}
static void ag_type(trc_write_node *n, size_t *k) { (void)k, n[3].comm_type = TRC_REDUCE_SCATTER; }
static void no_recv(trc_write_node *n, size_t *k) { n[4].deps = n[3].deps, n[3] = n[4], (*k)--; }
static void recv_size(trc_write_node *n, size_t *k) { (void)k, n[3].bytes--; }
static void send_far(trc_write_node *n, size_t *k) { (void)k, n[4].peer = 8; }

static void set_fails(int rank, void (*edit)(trc_write_node *, size_t *), ...) {
  trc_set *s;
  sim_error err = {0};
  int rc = example_with(rank, edit, &s, &err);
  if (rc == SIM_OK) {
    trc_set_free(s);
    fail_msg("matched; expected an error");
  }
  assert_int_equal(rc, SIM_EINVAL);
  print_message("  %s\n", err.msg);
  va_list ap;
  va_start(ap, edit);
  for (const char *x; (x = va_arg(ap, const char *));)
    if (!strstr(err.msg, x)) fail_msg("'%s' not in: %s", x, err.msg);
  va_end(ap);
}

static void test_matching(void **state) {
  (void)state;
  set_fails(2, ar_bigger, "et.2.et: byte ", "node 2: call 0 on the default group",
            "ALL_REDUCE of "
            "134217728 bytes at rank 2, but ALL_REDUCE of 67108864 bytes at rank 0",
            "the group disagrees", NULL);
  set_fails(5, ar_gone, "rank 5 (et.5.et) has none", NULL);
  set_fails(1, ag_type, "process group \"tp0\"", "REDUCE_SCATTER of 8388608 bytes at rank 1", NULL);
  set_fails(4, no_recv, "et.0.et", "node 5: rank 0 sends 16777216 bytes to rank 4 (tag 7",
            "with no matching recv in rank 4's trace (et.4.et)", NULL);
  set_fails(4, recv_size, "et.4.et", "rank 4 receives 16777215 bytes from rank 0",
            "the sizes "
            "disagree",
            NULL);
  set_fails(0, send_far, "rank 0 sends to rank 8; allowed: another rank of the job, 0..7", NULL);
}

/* pg_name "" is no pg_name: both AllReduces are the default group's (the
 * empty name once made a second group of the same name, and matching wrote
 * past the group's members; found by fuzz_chakra). */
static void test_empty_pg_name(void **state) {
  (void)state;
  static const uint64_t d1[] = {1};
  trc_write_node n[2] = {
      {.id = 1, .kind = TRC_COLL, .comm_type = TRC_ALL_REDUCE, .bytes = 8, .pg_name = ""},
      {.id = 2, .kind = TRC_COLL, .comm_type = TRC_ALL_REDUCE, .bytes = 8, .deps = d1, .ndeps = 1}};
  size_t len;
  uint8_t *buf = trc_write("0.0.4", n, 2, &len);
  trc_trace *t = sim_malloc(sizeof *t);
  sim_error err = {0};
  if (trc_parse(t, "et.et", buf, len, &err) != SIM_OK) fail_msg("%s", err.msg);
  sim_free(buf);
  assert_int_equal(t->nodes[0].pg, TRC_NO_GROUP);
  assert_int_equal(t->npg, 0);
  static const uint32_t rank_trace[2] = {0, 0};
  trc_set *s;
  if (trc_set_create(&s, t, 1, rank_trace, 2, &err) != SIM_OK) fail_msg("%s", err.msg);
  assert_int_equal(s->ngroups, 1);
  assert_int_equal(s->groups[0].nranks, 2);
  assert_int_equal(s->groups[0].ncalls, 2);
  trc_set_free(s);
}

/* Rank 0 reaches the AllReduce before its send, rank 1 only after the recv:
 * neither can go on. */
static void test_deadlock(void **state) {
  (void)state;
  static const uint64_t d1[] = {1};
  trc_write_node a[2] = {
      {.id = 1, .kind = TRC_COLL, .comm_type = TRC_ALL_REDUCE, .bytes = 64},
      {.id = 2, .kind = TRC_SEND, .bytes = 8, .peer = 1, .deps = d1, .ndeps = 1}};
  trc_write_node b[2] = {{.id = 1, .kind = TRC_RECV, .bytes = 8, .peer = 0},
                         {.id = 2,
                          .kind = TRC_COLL,
                          .comm_type = TRC_ALL_REDUCE,
                          .bytes = 64,
                          .deps = d1,
                          .ndeps = 1}};
  trc_trace *tr = sim_calloc(2, sizeof *tr);
  const trc_write_node *w[2] = {a, b};
  for (int r = 0; r < 2; r++) {
    size_t len;
    uint8_t *buf = trc_write("0.0.4", w[r], 2, &len);
    sim_error err = {0};
    if (trc_parse(&tr[r], r ? "b.et" : "a.et", buf, len, &err) != SIM_OK) fail_msg("%s", err.msg);
    sim_free(buf);
  }
  static const uint32_t rt[2] = {0, 1};
  trc_set *s;
  sim_error err = {0};
  assert_int_equal(trc_set_create(&s, tr, 2, rt, 2, &err), SIM_EINVAL);
  print_message("  %s\n", err.msg);
  assert_non_null(strstr(err.msg,
                         "deadlock: 4 of 4 nodes over the ranks can never run: rank 0 "
                         "(a.et) waits at node 1 (ALL_REDUCE, call 0 of the default group: 1 of "
                         "2 ranks reach it); rank 1 (b.et) waits at node 1 (recv from rank 0, "
                         "whose send never starts)"));
}

/* trc_load: files by pattern relative to the scenario, classes, a missing rank. */
static void test_load(void **state) {
  (void)state;
  char dir[64], path[128], yaml[1024];
  snprintf(dir, sizeof dir, "/tmp/fabsim-chakra-%d", (int)getpid());
  snprintf(path, sizeof path, "mkdir -p %s/tr", dir);
  assert_int_equal(system(path), 0);
  for (uint32_t r = 0; r < EX_RANKS - 1; r++) { /* rank 7 missing */
    size_t len;
    uint8_t *buf = ex_trace(r, &len);
    sim_error err = {0};
    snprintf(path, sizeof path, "%s/tr/et.%u.et", dir, r);
    assert_int_equal(sim_write_file_atomic(path, buf, len, &err), SIM_OK);
    sim_free(buf);
  }
  snprintf(path, sizeof path, "%s/s.yaml", dir);
  static const char *const cases[][2] = {
      {"    path: tr/et.%d.et\n", "rank 7: cannot open"},
      {"    classes: 0-6:tr/et.6.et\n", "rank 7 is in no class: the rank is missing"},
      {"    classes: 0-5:tr/et.5.et,6-7:tr/et.6.et\n", NULL},
      {"    classes: 0-5:tr/et.5.et,5-7:tr/et.6.et\n", "rank 5 is in two classes"},
      {"    classes: 0-3\n", "is not a list of FIRST-LAST:FILE items"},
      {"    path: tr/et.%s.et\n", "only %d (the rank) may follow a %"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(yaml, sizeof yaml,
             "cluster:\n  nodes: 2\n  gpus_per_node: 4\nworkload:\n  kind: "
             "trace\n  trace:\n    ranks: 8\n%s",
             cases[i][0]);
    FILE *f = fopen(path, "w");
    fputs(yaml, f);
    fclose(f);
    cfg_scenario cfg;
    cfg_doc *doc;
    sim_error err = {0};
    if (cfg_load(&cfg, &doc, path, NULL, 0, &err) != SIM_OK) fail_msg("%s", err.msg);
    trc_set *s = NULL;
    int rc = trc_load(&s, &cfg, doc, 8, &err);
    if (!cases[i][1]) {
      if (rc != SIM_OK) fail_msg("%s", err.msg);
      assert_int_equal(s->ntraces, 2); /* each distinct file read once */
      assert_int_equal(s->rank_trace[7], 1);
      /* the classes disagree with the job: rank 5 runs et.5.et (no send/recv) */
      trc_set_free(s);
    } else {
      assert_int_equal(rc, SIM_ECONFIG);
      print_message("  %s\n", err.msg);
      if (!strstr(err.msg, cases[i][1])) fail_msg("'%s' not in: %s", cases[i][1], err.msg);
      assert_non_null(strstr(err.msg, "s.yaml:"));
      assert_null(s);
    }
    cfg_free(&cfg, doc);
  }
  snprintf(path, sizeof path, "rm -rf %s", dir);
  assert_int_equal(system(path), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reads_example), cmocka_unit_test(test_framing),
      cmocka_unit_test(test_graph),         cmocka_unit_test(test_matching),
      cmocka_unit_test(test_empty_pg_name), cmocka_unit_test(test_load),
      cmocka_unit_test(test_deadlock),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
