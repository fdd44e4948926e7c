/* The nccl-tests output reader: the shipped samples (examples/nccl-tests/),
 * the older column layout, launcher prefixes, and every refusal with its
 * file:line:col. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/calib.h"

static char *slurp(const char *rel, size_t *len) {
  const char *src = getenv("FABSIM_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", src ? src : "..", rel);
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (fread(b, 1, (size_t)n, f) != (size_t)n) fail_msg("short read %s", path);
  fclose(f);
  b[n] = 0;
  *len = (size_t)n;
  return b;
}

static void test_allreduce_sample(void **state) {
  (void)state;
  size_t n;
  char *t = slurp("examples/nccl-tests/all_reduce_perf-h100-4nodes.txt", &n);
  cal_run r;
  sim_error err = {0};
  assert_int_equal(cal_nccltests_parse(&r, "ar.txt", t, n, CAL_OP_UNKNOWN, &err), SIM_OK);
  assert_int_equal(r.op, CAL_OP_ALLREDUCE); /* from "Collective test starting:" */
  assert_int_equal(r.ranks, 32);
  assert_int_equal(r.nodes, 4);
  assert_int_equal(r.gpus_per_node, 8);
  assert_string_equal(r.gpu, "NVIDIA H100 80GB HBM3");
  assert_int_equal(r.n, 31); /* 8 B .. 8 GiB, factor 2 */
  assert_int_equal(r.pt[0].bytes, 8);
  assert_int_equal(r.pt[30].bytes, 8589934592ull);
  assert_true(r.pt[30].busbw_GBps > 360 && r.pt[30].busbw_GBps < 370);
  assert_true(r.pt[30].time_us_inplace > 0);
  assert_true(r.avg_busbw_GBps > 100);
  cal_run_free(&r);
  free(t);
}

static const char older[] =
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5\n"
    "#\n"
    "# Using devices\n"
    "#   Rank  0 Pid   1200 on     gpu-a device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
    "#   Rank  1 Pid   1201 on     gpu-a device  1 [0x0b] NVIDIA A100-SXM4-80GB\n"
    "#   Rank  2 Pid   1300 on     gpu-b device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
    "#   Rank  3 Pid   1301 on     gpu-b device  1 [0x0b] NVIDIA A100-SXM4-80GB\n"
    "#\n"
    "#       size         count    type   redop     time   algbw   busbw  error     time   "
    "algbw   busbw  error\n"
    "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  "
    "(GB/s)  (GB/s)\n"
    "[0]            8             2   float     sum    11.02    0.00    0.00  0e+00    10.87    "
    "0.00    0.00  0e+00\n"
    "[0] gpu-a:1200:1200 [0] NCCL INFO 8 Bytes -> Algo 1 proto 0 time 9.5\n"
    "  1073741824     268435456   float     sum   9039.4  118.79  178.18  0e+00   9024.0  "
    "118.99  178.48  0e+00\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 89.17\n";

static void test_older_layout_and_prefixes(void **state) {
  (void)state;
  cal_run r;
  sim_error err = {0};
  /* the operation from the file name */
  if (cal_nccltests_parse(&r, "runs/all_reduce_perf.log", older, sizeof older - 1, CAL_OP_UNKNOWN,
                          &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(r.op, CAL_OP_ALLREDUCE);
  assert_int_equal(r.ranks, 4);
  assert_int_equal(r.nodes, 2);
  assert_int_equal(r.gpus_per_node, 2);
  assert_int_equal(r.n, 2);
  assert_int_equal(r.pt[1].bytes, 1073741824ull);
  assert_true(r.pt[1].time_us > 9039 && r.pt[1].time_us < 9040);
  assert_string_equal(r.gpu, "NVIDIA A100-SXM4-80GB");
  cal_run_free(&r);
}

/* Parse text (with one substitution) and expect a refusal containing want. */
static void expect_refusal(const char *text, const char *from, const char *to, cal_op op,
                           const char *name, const char *want) {
  char buf[4096];
  const char *p = from ? strstr(text, from) : NULL;
  if (from && !p) fail_msg("test text has no '%s'", from);
  if (p) {
    size_t a = (size_t)(p - text);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)a, text, to, p + strlen(from));
  } else {
    snprintf(buf, sizeof buf, "%s", text);
  }
  cal_run r;
  sim_error err = {0};
  int rc = cal_nccltests_parse(&r, name, buf, strlen(buf), op, &err);
  if (rc == SIM_OK) fail_msg("accepted; wanted a refusal with '%s'", want);
  assert_int_equal(rc, SIM_ECONFIG);
  if (!strstr(err.msg, want)) fail_msg("message '%s' lacks '%s'", err.msg, want);
}

static void test_refusals(void **state) {
  (void)state;
  const char *ar = "x/all_reduce_perf.txt";
  /* truncated: the file stops inside the table */
  expect_refusal(older, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 89.17\n", "",
                 CAL_OP_UNKNOWN, ar, "truncated");
  /* a row cut short */
  expect_refusal(older, "118.99  178.48  0e+00\n", "\n", CAL_OP_UNKNOWN, ar,
                 "all_reduce_perf.txt:13:");
  /* a number that is not one */
  expect_refusal(older, "9039.4", "9O39.4", CAL_OP_UNKNOWN, ar, "time column");
  /* the measurement failed its own check */
  expect_refusal(older, "118.79  178.18  0e+00", "118.79  178.18  3e+00", CAL_OP_UNKNOWN, ar,
                 "own check");
  /* the output of another collective named as this one */
  expect_refusal(older, NULL, NULL, CAL_OP_ALLGATHER, ar, "bus factor");
  /* no way to tell the operation */
  expect_refusal(older, NULL, NULL, CAL_OP_UNKNOWN, "x/measured.txt", "OP:FILE");
  /* no rank lines at all */
  char norank[sizeof older];
  size_t k = 0;
  for (const char *l = older; *l;) {
    const char *e = strchr(l, '\n');
    size_t m = e ? (size_t)(e - l) + 1 : strlen(l);
    if (!strstr(l, "Rank") || (e && strstr(l, "Rank") > e)) {
      memcpy(norank + k, l, m);
      k += m;
    }
    l += m;
  }
  norank[k] = 0;
  /* no rank lines, or fewer than busbw / algbw says: the shape is the
   * base's, and the rows must agree with it */
  cal_run r;
  sim_error err = {0};
  assert_int_equal(cal_nccltests_parse(&r, ar, norank, strlen(norank), CAL_OP_UNKNOWN, &err),
                   SIM_OK);
  assert_true(r.shape_from_base);
  assert_int_equal(r.ranks, 0);
  assert_int_equal(cal_run_set_shape(&r, 1, 3, &err), SIM_ECONFIG);
  if (!strstr(err.msg, "says about 4 ranks")) fail_msg("%s", err.msg);
  assert_int_equal(cal_run_set_shape(&r, 1, 1, &err), SIM_ECONFIG);
  assert_int_equal(cal_run_set_shape(&r, 2, 2, &err), SIM_OK);
  assert_int_equal(r.ranks, 4);
  cal_run_free(&r);
  const char *rank3 =
      "#   Rank  3 Pid   1301 on     gpu-b device  1 [0x0b] NVIDIA A100-SXM4-80GB\n";
  char three[sizeof older];
  const char *at = strstr(older, rank3);
  snprintf(three, sizeof three, "%.*s%s", (int)(at - older), older, at + strlen(rank3));
  assert_int_equal(cal_nccltests_parse(&r, ar, three, strlen(three), CAL_OP_UNKNOWN, &err), SIM_OK);
  assert_true(r.shape_from_base);
  if (!strstr(r.shape_why, "3 rank lines")) fail_msg("%s", r.shape_why);
  assert_string_equal(r.gpu, "NVIDIA A100-SXM4-80GB");
  cal_run_free(&r);
  /* not nccl-tests output */
  expect_refusal("hello\nworld\n", NULL, NULL, CAL_OP_UNKNOWN, ar, "no nccl-tests results table");
  expect_refusal("", NULL, NULL, CAL_OP_UNKNOWN, ar, "no nccl-tests results table");
}

/* Issue 27, defect 13: rows are never dropped silently. A size in -b's
 * units, a time of 0, a time its algbw does not agree with, a run whose own
 * check failed: refused at FILE:LINE:COL. Rows of size 0 (nccl-tests -b 0)
 * are read and counted (the fit leaves them out and says so). */
static void test_rows_not_dropped(void **state) {
  (void)state;
  const char *ar = "x/all_reduce_perf.txt";
  expect_refusal(older, "  1073741824     268435456", "          1G     268435456", CAL_OP_UNKNOWN,
                 ar, "all_reduce_perf.txt:13:11: size '1G' is not a whole number");
  expect_refusal(older, "  1073741824     268435456", "         64K     268435456", CAL_OP_UNKNOWN,
                 ar, "size '64K'");
  expect_refusal(older, "9039.4  118.79", "   0.0  118.79", CAL_OP_UNKNOWN, ar,
                 "all_reduce_perf.txt:13:49: a time of 0 us");
  expect_refusal(older, "118.79  178.18", "128.79  193.19", CAL_OP_UNKNOWN, ar,
                 "all_reduce_perf.txt:13:54: algbw 128.79 GB/s, but size / time");
  expect_refusal(older, "# Out of bounds values : 0 OK", "# Out of bounds values : 2 FAILED",
                 CAL_OP_UNKNOWN, ar, "all_reduce_perf.txt:14:28: nccl-tests' own check failed");
  /* size 0: read, kept as a row (used by nothing) */
  char buf[4096];
  const char *at = strstr(older, "  1073741824");
  snprintf(buf, sizeof buf,
           "%.*s           0             0   float     sum     0.88    0.00    "
           "0.00  0e+00     0.93    0.00    0.00  0e+00\n%s",
           (int)(at - older), older, at);
  cal_run r;
  sim_error err = {0};
  if (cal_nccltests_parse(&r, ar, buf, strlen(buf), CAL_OP_UNKNOWN, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(r.n, 3);
  assert_int_equal(r.pt[1].bytes, 0);
  cal_run_free(&r);
}

/* Open MPI's --tag-output ("[1,0]<stdout>:" before every line) is read as
 * the plain output. */
static void test_tag_output(void **state) {
  (void)state;
  char buf[8192];
  size_t w = 0;
  for (const char *l = older; *l;) {
    const char *e = strchr(l, '\n');
    size_t m = e ? (size_t)(e - l) + 1 : strlen(l);
    w += (size_t)snprintf(buf + w, sizeof buf - w, "[1,%d]<stdout>:%.*s", (int)(w % 3), (int)m, l);
    l += m;
  }
  cal_run r;
  sim_error err = {0};
  if (cal_nccltests_parse(&r, "all_reduce_perf.log", buf, w, CAL_OP_UNKNOWN, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(r.ranks, 4);
  assert_int_equal(r.n, 2);
  assert_true(r.pt[1].time_us > 9039 && r.pt[1].time_us < 9040);
  cal_run_free(&r);
}

/* Issue 27, defect 12: a file name with a newline or another control
 * character cannot start a line of its own: in messages and in the
 * fragment it shows as \x0a. */
static void test_name_escaped(void **state) {
  (void)state;
  const char *evil = "x\nworkload:\n  kind: traffic\n#/all_reduce_perf.txt";
  cal_run r;
  sim_error err = {0};
  if (cal_nccltests_parse(&r, evil, older, sizeof older - 1, CAL_OP_UNKNOWN, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_null(strchr(r.name, '\n'));
  assert_non_null(strstr(r.name, "x\\x0aworkload:\\x0a"));
  cal_row row = {.bytes = 8};
  cal_file_fit ff = {.run = &r, .rows = &row};
  cal_fit f = {.files = &ff, .nfiles = 1, .rows_used = 1};
  char *frag = cal_fit_fragment(&f, "base\nworkload:\n  kind: traffic");
  for (const char *l = frag; l; l = strchr(l, '\n')) {
    if (*l == '\n') l++;
    if (*l && *l != '#') fail_msg("a line that is not a comment:\n%s", frag);
  }
  sim_free(frag);
  cal_run_free(&r);
  expect_refusal(older, "9039.4", "9O39.4", CAL_OP_UNKNOWN, evil, "x\\x0aworkload:");
}

/* Every shipped sample (examples/nccl-tests/): the measured ones (named
 * -together, -oci, -gcp-a3mega, -xxrjun: each names its source in its
 * header) and the older ones (docs/validation.md says which fabsim wrote)
 * read as they are: collective, GPUs, nodes, rows (those of size 0 too). */
/* A shipped file (DIR/FILE of the source tree), parsed or the test fails. */
static void read_shipped(cal_run *r, const char *dir, const char *file) {
  char rel[256];
  snprintf(rel, sizeof rel, "%s/%s", dir, file);
  size_t n;
  char *t = slurp(rel, &n);
  sim_error err = {0};
  if (cal_nccltests_parse(r, file, t, n, CAL_OP_UNKNOWN, &err) != SIM_OK) fail_msg("%s", err.msg);
  free(t);
}

static void test_every_sample(void **state) {
  (void)state;
  static const struct {
    const char *file;
    cal_op op;
    uint32_t ranks, nodes;
    size_t rows, zero;
  } s[] = {
      {"all_reduce_perf-h100-1node-together.txt", CAL_OP_ALLREDUCE, 8, 1, 31, 0},
      {"all_gather_perf-h100-1node-together.txt", CAL_OP_ALLGATHER, 8, 1, 31, 4},
      {"all_reduce_perf-h100-2nodes-gcp-a3mega.txt", CAL_OP_ALLREDUCE, 16, 2, 31, 0},
      {"all_reduce_perf-h100-2nodes-oci.txt", CAL_OP_ALLREDUCE, 16, 2, 5, 0},
      {"alltoall_perf-h100-2nodes-xxrjun.txt", CAL_OP_ALLTOALL, 16, 2, 10, 0},
      {"sendrecv_perf-h100-2nodes-xxrjun.txt", CAL_OP_SENDRECV, 16, 2, 10, 0},
      {"all_gather_perf-h100-1node.txt", CAL_OP_ALLGATHER, 8, 1, 31, 0},
      {"all_reduce_perf-h100-1node.txt", CAL_OP_ALLREDUCE, 8, 1, 31, 0}, /* fabsim's */
      {"alltoall_perf-h100-4nodes.txt", CAL_OP_ALLTOALL, 32, 4, 24, 0},
      {"sendrecv_perf-h100-2nodes.txt", CAL_OP_SENDRECV, 16, 2, 28, 0},
  };
  for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
    cal_run r;
    read_shipped(&r, "examples/nccl-tests", s[i].file);
    assert_int_equal(r.op, s[i].op);
    assert_int_equal(r.ranks, s[i].ranks);
    assert_int_equal(r.nodes, s[i].nodes);
    assert_int_equal(r.n, s[i].rows);
    size_t zero = 0;
    for (size_t j = 0; j < r.n; j++) zero += r.pt[j].bytes == 0;
    assert_int_equal(zero, s[i].zero);
    cal_run_free(&r);
  }
}

/* Every curve shipped under validate/curves/ is read as it was published:
 * nccl-tests and rccl-tests output with and without its "#" (console
 * copies), without rank lines or with some of them (the shape is then the
 * base's and must agree with busbw / algbw), without the "Avg bus
 * bandwidth" line (nccl-tests 2.17 ends with "Collective test concluded"),
 * a run that aborted after its last row, and Azure's busbw tables. */
static void test_every_curve(void **state) {
  (void)state;
  static const struct {
    const char *file;
    cal_op op;
    uint32_t ranks;      /* from rank lines; 0: the base's */
    uint32_t nodes, gpn; /* the shape (the case's in validate/cases.json) */
    size_t rows;
    bool table, aborted;
  } s[] = {
      {"all_gather_perf-b200-2node-roce-gke-dranet.txt", CAL_OP_ALLGATHER, 16, 2, 8, 24, 0, 0},
      {"all_gather_perf-b200-2x1gpu-roce-gke-nvidia-dra.txt", CAL_OP_ALLGATHER, 2, 2, 1, 28, 0, 0},
      {"all_gather_perf-h200-2x1gpu-roce-gke-dranet-demo.txt", CAL_OP_ALLGATHER, 2, 2, 1, 24, 0, 0},
      {"all_reduce_busbw-a100-1node-azure-nd.txt", CAL_OP_ALLREDUCE, 0, 1, 8, 24, 1, 0},
      {"all_reduce_busbw-h100-1node-azure-nd.txt", CAL_OP_ALLREDUCE, 0, 1, 8, 24, 1, 0},
      {"all_reduce_busbw-h200-1node-azure-nd.txt", CAL_OP_ALLREDUCE, 0, 1, 8, 24, 1, 0},
      {"all_reduce_perf-a100-2node-roce-oci-b4.txt", CAL_OP_ALLREDUCE, 0, 2, 8, 4, 0, 0},
      {"all_reduce_perf-b200-2node-lambda.txt", CAL_OP_ALLREDUCE, 0, 2, 8, 29, 0, 0},
      {"all_reduce_perf-b200-2node-roce-gcp-a4.txt", CAL_OP_ALLREDUCE, 0, 2, 8, 11, 0, 0},
      {"all_reduce_perf-h100-128node-roce-ring-ll128.txt", CAL_OP_ALLREDUCE, 0, 128, 8, 5, 0, 1},
      {"all_reduce_perf-h100-2node-ib-nccl-tests-309.txt", CAL_OP_ALLREDUCE, 16, 2, 8, 32, 0, 0},
      {"all_reduce_perf-h100-2node-ib-nebius.txt", CAL_OP_ALLREDUCE, 0, 2, 8, 31, 0, 0},
      {"all_reduce_perf-h100-4node-ib-nccl-tests-309.txt", CAL_OP_ALLREDUCE, 32, 4, 8, 32, 0, 0},
      {"all_reduce_perf-h100-8node-ib-nccl-tests-309.txt", CAL_OP_ALLREDUCE, 64, 8, 8, 14, 0, 0},
      {"all_reduce_perf-h200-2x1gpu-roce-gke-dranet.txt", CAL_OP_ALLREDUCE, 2, 2, 1, 24, 0, 0},
      {"all_reduce_perf-mi300x-1node-rocm-blog.txt", CAL_OP_ALLREDUCE, 8, 1, 8, 32, 0, 0},
      {"all_reduce_perf-mi300x-2node-roce-oci.txt", CAL_OP_ALLREDUCE, 0, 2, 8, 5, 0, 0},
  };
  for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
    cal_run r;
    sim_error err = {0};
    read_shipped(&r, "validate/curves", s[i].file);
    if (r.op != s[i].op || r.n != s[i].rows || r.busbw_table != s[i].table ||
        (r.aborted_line != 0) != s[i].aborted || r.ranks != s[i].ranks ||
        r.shape_from_base != (s[i].ranks == 0))
      fail_msg("%s: op %d rows %zu table %d aborted %u ranks %u", s[i].file, r.op, r.n,
               r.busbw_table, r.aborted_line, r.ranks);
    if (r.shape_from_base && cal_run_set_shape(&r, s[i].nodes, s[i].gpn, &err) != SIM_OK)
      fail_msg("%s", err.msg);
    assert_int_equal(r.nodes, s[i].nodes);
    assert_int_equal(r.gpus_per_node, s[i].gpn);
    for (size_t j = 0; j < r.n; j++) assert_true(r.pt[j].bytes == 0 || r.pt[j].time_us > 0);
    if (s[i].table) { /* 1K .. 8G: 2^10 .. 2^33, time = S x 2(n-1)/n / busbw */
      for (size_t j = 0; j < r.n; j++) assert_int_equal(r.pt[j].bytes, 1ull << (10 + j));
      double want = 8589934592.0 * 1.75 / (r.pt[23].busbw_GBps * 1e3);
      assert_true(fabs(r.pt[23].time_us / want - 1) < 1e-12);
    }
    cal_run_free(&r);
  }
}

/* A busbw table's refusals: a label that is no power of two, sizes that do
 * not grow, a busbw of 0, a row of other cells. */
static void test_busbw_table_refusals(void **state) {
  (void)state;
  static const char tab[] =
      "## NCCL Bandwidth\n\n"
      "| Message Size (Bytes) | ND H100 V5 (GB/s) |\n"
      "| -------------------- | ----------------- |\n"
      "| 1K                   | 0.07              |\n"
      "| 2K                   | 0.14              |\n"
      "| 4K                   | 0.27              |\n"
      "\nnext paragraph\n";
  cal_run r;
  sim_error err = {0};
  assert_int_equal(cal_nccltests_parse(&r, "ar_busbw.md", tab, strlen(tab), CAL_OP_ALLREDUCE, &err),
                   SIM_OK);
  assert_int_equal(r.n, 3);
  assert_int_equal(r.pt[2].bytes, 4096);
  cal_run_free(&r);
  /* rank lines beside a busbw table: its times still wait for the shape */
  char ranked[sizeof tab + 128];
  snprintf(ranked, sizeof ranked, "#  Rank  0 Group  0 Pid 1 on h0 device  0 [0x1] NVIDIA H100\n%s",
           tab);
  assert_int_equal(
      cal_nccltests_parse(&r, "ar_busbw.md", ranked, strlen(ranked), CAL_OP_ALLREDUCE, &err),
      SIM_OK);
  assert_true(r.shape_from_base && r.ranks == 0 && r.pt[0].time_us == 0);
  assert_int_equal(cal_run_set_shape(&r, 1, 8, &err), SIM_OK);
  assert_true(fabs(r.pt[0].time_us - 1024 * 1.75 / 70.0) < 1e-9);
  cal_run_free(&r);
  expect_refusal(tab, "| 2K ", "| 100K ", CAL_OP_ALLREDUCE, "t.md", "t.md:6:3: size '100K'");
  expect_refusal(tab, "| 4K ", "| 1K ", CAL_OP_ALLREDUCE, "t.md", "sizes of a sweep grow");
  expect_refusal(tab, "0.27", "0.00", CAL_OP_ALLREDUCE, "t.md", "above 0");
  expect_refusal(tab, "| 0.14              |", "| 0.14 | 3 |", CAL_OP_ALLREDUCE, "t.md", "3 cells");
}

static void test_op_names(void **state) {
  (void)state;
  assert_int_equal(cal_op_parse("reduce_scatter_perf", 19), CAL_OP_REDUCESCATTER);
  assert_int_equal(cal_op_parse("reducescatter", 13), CAL_OP_REDUCESCATTER);
  assert_int_equal(cal_op_parse("reduce_perf", 11), CAL_OP_REDUCE);
  assert_int_equal(cal_op_parse("ALL_GATHER", 10), CAL_OP_ALLGATHER);
  assert_int_equal(cal_op_parse("nothing", 7), CAL_OP_UNKNOWN);
  assert_true(cal_bus_factor(CAL_OP_ALLREDUCE, 8) == 1.75);
  assert_true(cal_bus_factor(CAL_OP_ALLGATHER, 8) == 0.875);
  assert_true(cal_bus_factor(CAL_OP_SENDRECV, 8) == 1.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_allreduce_sample), cmocka_unit_test(test_older_layout_and_prefixes),
      cmocka_unit_test(test_refusals),         cmocka_unit_test(test_rows_not_dropped),
      cmocka_unit_test(test_tag_output),       cmocka_unit_test(test_name_escaped),
      cmocka_unit_test(test_every_sample),     cmocka_unit_test(test_op_names),
      cmocka_unit_test(test_every_curve),      cmocka_unit_test(test_busbw_table_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
