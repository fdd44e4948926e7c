/* Checkpoints written to storage servers during a training run
 * (src/run/checkpoint.c), against closed forms:
 *   - on a separate storage fabric a checkpoint of S bytes takes
 *     S / min(the servers' write bandwidth, the frontend NICs) plus a path
 *     latency, and leaves every step exactly as without checkpoints;
 *   - on the backend fabric the one writer's NIC uplink also carries its
 *     ring AllReduce flow: two flows on one link get half of it each, so the
 *     overlapped step's AllReduce takes its bandwidth term S_ar x 8 / B
 *     longer, exactly (flow fidelity);
 *   - sync: the job waits for the write; the steps are unchanged and the
 *     next one starts when the write ends;
 *   - the checkpoint's size: parameters x (2 + 12) bytes at bf16 Adam;
 *   - the root cause names the storage burst. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/run.h"

/* 2 nodes of 1 GPU and one 100 Gb/s NIC on one leaf (radix 8), data parallel
 * over both, one bucket reduced after the backward pass: step = compute +
 * a 2-rank ring AllReduce. One storage server on leaf 1. */
#define DP2                                                                                     \
  "cluster.nodes=2", "cluster.gpus_per_node=1", "cluster.nic.per_node=1",                       \
      "cluster.nic.bandwidth=100Gbps", "cluster.nic.efficiency=1", "cluster.pcie.efficiency=1", \
      "fabric.switch_radix=8", "fabric.tiers=2", "fabric.link_bandwidth=100Gbps",               \
      "fabric.link_efficiency=1", "workload.precision=bf16", "workload.model.layers=4",         \
      "workload.model.hidden=1024", "workload.model.heads=16", "workload.model.seq_len=2048",   \
      "workload.model.vocab=0", "workload.global_batch=2", "workload.bucket_size=1TiB",         \
      "workload.grad_overlap=false", "workload.kind=training", "workload.comm_model=live",      \
      "storage.servers=1", "storage.nic.per_server=1", "storage.nic.bandwidth=100Gbps",         \
      "workload.checkpoint.every=1", "workload.parallel.dp_algorithm=ring"

typedef struct harness {
  run_setup s;
  run_events log;
  run_training_result res;
} harness;

static void run(harness *h, const char *const *more, int nmore) {
  const char *sets[64] = {DP2};
  int n = 0;
  while (sets[n]) n++;
  for (int i = 0; i < nmore; i++) sets[n++] = more[i];
  memset(h, 0, sizeof *h);
  sim_error err = {0};
  run_setup *s = &h->s;
  if (run_setup_load(s, NULL, sets, n, &err) != SIM_OK || run_setup_begin(s, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  bool complete = false;
  if (run_training_run(&s->tr, &h->log, NULL, &complete, &err) != SIM_OK) fail_msg("%s", err.msg);
  assert_true(complete);
  run_training_report(&s->tr, s->fs, &h->log, &h->res);
}

static void finish(harness *h) {
  run_training_result_free(&h->res);
  run_events_free(&h->log);
  run_setup_free(&h->s);
}

static double step_s(const wl_job *j, uint32_t k) { return wl_job_step(j, k)->time_s; }

/* Separate fabric: 1 GB at min(write 8 GB/s, frontend 2 x 50 Gb/s) = 8 GB/s
 * = 64 Gb/s, from the 2 writers (ZeRO 1: both GPUs) over their own frontend
 * NICs; the steps are the baseline's, bit for bit. Then frontend-bound. */
static void check_separate(const char *fidelity, const char *write, double bound_bps,
                           uint32_t ports) {
  char fid[64], wr[64], np[64];
  snprintf(fid, sizeof fid, "simulation.fidelity=%s", fidelity);
  snprintf(wr, sizeof wr, "storage.write_bandwidth=%s", write);
  snprintf(np, sizeof np, "storage.nic.per_server=%u", ports);
  const char *more[] = {fid,
                        wr,
                        np,
                        "storage.attach=separate",
                        "storage.frontend.per_node=1",
                        "storage.frontend.bandwidth=50Gbps",
                        "storage.fabric.switch_radix=8",
                        "storage.fabric.link_bandwidth=400Gbps",
                        "workload.parallel.zero=1",
                        "workload.checkpoint.size=1GB",
                        "workload.steps=3"};
  harness h;
  run(&h, more, sizeof more / sizeof *more);
  const run_ckpt *c = h.res.ckpt;
  assert_non_null(c);
  assert_int_equal(c->writers, 2);
  assert_int_equal(c->nx, ports > 2 ? ports : 2); /* every endpoint takes a piece */
  assert_int_equal(c->n, 2);                      /* after steps 1 and 2, not after the last */
  const run_checkpoint *k = &c->v[0];
  assert_true(k->end > k->start);
  double want = 1e9 * 8 / bound_bps, got = sim_ps_to_s(k->end - k->start);
  if (got < want || got > want + 20e-6) /* + the path's latency */
    fail_msg("%s: checkpoint took %.9g s, want %.9g s (+ latency)", fidelity, got, want);
  /* the second waits for the first (one in flight), then takes as long */
  assert_true(c->v[1].start == k->end);
  for (uint32_t s = 0; s < 3; s++) assert_true(step_s(h.res.job, s) == step_s(h.res.base, s));
  assert_true(k->slowdown_s == 0);
  finish(&h);
}

static void test_separate(void **state) {
  (void)state;
  check_separate("flow", "8GB/s", 64e9, 1);     /* the drives */
  check_separate("flow", "1TB/s", 2 * 50e9, 1); /* the frontend NICs */
  check_separate("analytic", "8GB/s", 64e9, 1);
}

/* More server endpoints than writers: 4 ports make the server 4 one-NIC
 * nodes of 1 endpoint, each a quarter of its drives; the 2 writers' shares
 * go in 2 pieces each to all 4, so the checkpoint still writes at the whole
 * 8 GB/s (writing to 2 endpoints only, it took twice as long). */
static void test_separate_spread(void **state) {
  (void)state;
  check_separate("flow", "8GB/s", 64e9, 4);
  check_separate("analytic", "8GB/s", 64e9, 4);
}

/* Backend: the writer (ZeRO 0, dp rank 0: GPU 0) shares its NIC's uplink
 * with its ring flow; 2 flows on the 100 Gb/s link get 50 each, so the
 * ring's 2 phases of S_ar / 2 take S_ar x 8 / B longer in all. The
 * checkpoint (100 GB at <= 50 Gb/s: seconds) overlaps the whole step 2. */
static void test_backend_two_flows(void **state) {
  (void)state;
  const char *more[] = {"simulation.fidelity=flow", "storage.write_bandwidth=1TB/s",
                        "workload.checkpoint.size=100GB", "workload.steps=2"};
  harness h;
  run(&h, more, sizeof more / sizeof *more);
  const run_ckpt *c = h.res.ckpt;
  assert_int_equal(c->writers, 1);
  assert_int_equal(c->n, 1);
  const wl_step *s1 = wl_job_step(h.res.job, 1), *b1 = wl_job_step(h.res.base, 1);
  /* the AllReduce's bytes per rank: the model's gradients at bf16 */
  double sar = (double)s1->comm[WL_COMM_DP_ALLREDUCE].bytes;
  assert_true(sar > 0);
  double grow = sar * 8 / 100e9;
  assert_true(step_s(h.res.job, 0) == step_s(h.res.base, 0));
  if (fabs((s1->time_s - b1->time_s) - grow) > 1e-9)
    fail_msg("step 2 grew %.12g s, want S_ar x 8 / B = %.12g s", s1->time_s - b1->time_s, grow);
  assert_true(s1->compute_s == b1->compute_s);
  assert_true(fabs(c->v[0].slowdown_s - grow) < 1e-9);
  assert_int_equal(c->v[0].first_step, 2);
  /* the root cause names the burst */
  assert_int_equal(h.res.root_cause.n, 1);
  assert_non_null(strstr(h.res.root_cause.v[0].text, "storage checkpoint-burst"));
  finish(&h);
}

/* sync: the job waits for the write; the steps keep their times, step 2
 * starts when the write ends, the wait is the write. */
static void test_sync(void **state) {
  (void)state;
  const char *more[] = {"simulation.fidelity=flow", "storage.write_bandwidth=1GB/s",
                        "workload.checkpoint.size=100MB", "workload.checkpoint.mode=sync",
                        "workload.steps=2"};
  harness h;
  run(&h, more, sizeof more / sizeof *more);
  const run_checkpoint *k = &h.res.ckpt->v[0];
  const wl_step *s0 = wl_job_step(h.res.job, 0), *s1 = wl_job_step(h.res.job, 1);
  assert_true(k->start == s0->end_ps);
  assert_true(s1->start_ps == k->end);
  double got = sim_ps_to_s(k->end - k->start), want = 100e6 / 1e9;
  assert_true(got >= want && got < want + 20e-6);
  assert_true(fabs(k->stall_s - got) < 1e-15);
  for (uint32_t s = 0; s < 2; s++) assert_true(step_s(h.res.job, s) == step_s(h.res.base, s));
  finish(&h);
}

/* size auto: parameters x (2 + 12) bytes (bf16 weights, fp32 Adam moments
 * and master weights). */
static void test_size_auto(void **state) {
  (void)state;
  const char *more[] = {"simulation.fidelity=analytic", "workload.steps=2"};
  harness h;
  run(&h, more, sizeof more / sizeof *more);
  double params = wl_job_step(h.res.job, 0)->model.params;
  assert_true(h.res.ckpt->size == (uint64_t)(params * 14 + 0.5));
  finish(&h);
}

/* Servers on the backend fabric without a checkpoint: every step exactly
 * as on the fabric without them (their leaves carry nothing; the compute
 * nodes' NICs, routes and collectives are unchanged). */
static void test_idle_servers_change_nothing(void **state) {
  (void)state;
  const char *with[] = {"simulation.fidelity=flow", "workload.checkpoint.every=0",
                        "workload.steps=2", "storage.servers=2"};
  const char *without[] = {"simulation.fidelity=flow", "workload.checkpoint.every=0",
                           "workload.steps=2", "storage.servers=0"};
  harness a, b;
  run(&a, with, 4);
  run(&b, without, 4);
  assert_null(a.res.ckpt);
  for (uint32_t s = 0; s < 2; s++) assert_true(step_s(a.res.job, s) == step_s(b.res.job, s));
  finish(&a);
  finish(&b);
}

/* Data loading: each next step's tokens, global batch x seq_len x 4 bytes,
 * read by one GPU per replica at a step's end: 2 x 2,048 x 4 bytes over 2
 * readers, twice in 3 steps; no checkpoint block without checkpoints. */
static void test_data_loading(void **state) {
  (void)state;
  const char *more[] = {"simulation.fidelity=flow", "workload.checkpoint.every=0",
                        "workload.data_loading=true", "workload.steps=3"};
  harness h;
  run(&h, more, sizeof more / sizeof *more);
  const run_ckpt *c = h.res.ckpt;
  assert_non_null(c);
  assert_int_equal(c->every, 0);
  assert_int_equal(c->readers, 2);
  assert_int_equal(c->load_bytes, 2 * 2048 * 4);
  assert_int_equal(c->loads, 2);
  assert_int_equal(c->loads_late, 0);
  /* 8 KiB per reader over a 100 Gb/s path: well under a step */
  assert_true(c->load_max > 0 && sim_ps_to_s(c->load_max) < 1e-3);
  finish(&h);
}

/* Reads run at the drives' read rate, not their write rate: the 2 readers'
 * 2 x 2,048 x 4 bytes leave the one server endpoint's drive link at
 * storage.read_bandwidth (1 MB/s: 16.384 ms) while its writes would run at
 * 8 GB/s (2 us). */
static void check_read_rate(const char *fidelity) {
  char fid[64];
  snprintf(fid, sizeof fid, "simulation.fidelity=%s", fidelity);
  const char *more[] = {fid,
                        "workload.checkpoint.every=0",
                        "workload.data_loading=true",
                        "storage.write_bandwidth=8GB/s",
                        "storage.read_bandwidth=1MB/s",
                        "workload.steps=2"};
  harness h;
  run(&h, more, sizeof more / sizeof *more);
  const run_ckpt *c = h.res.ckpt;
  assert_int_equal(c->loads, 1);
  double got = sim_ps_to_s(c->load_max), want = 2.0 * 2048 * 4 / 1e6;
  if (got < want || got > want + 20e-6)
    fail_msg("%s: the read took %.9g s, want %.9g s (+ latency)", fidelity, got, want);
  finish(&h);
}

static void test_read_rate(void **state) {
  (void)state;
  check_read_rate("flow");
  check_read_rate("analytic");
}

/* Bad input, located at the key, before anything runs. */
static void test_errors(void **state) {
  (void)state;
  struct {
    const char *set, *key;
  } cases[] = {
      {"storage.servers=0", "workload.checkpoint.every"},
      {"workload.kind=collective", "workload.checkpoint.every"},
      {"storage.nic.per_server=3", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *sets[64] = {DP2};
    int n = 0;
    while (sets[n]) n++;
    sets[n++] = cases[i].set;
    cfg_scenario cfg;
    cfg_doc *doc;
    sim_error err = {0};
    int rc = cfg_load(&cfg, &doc, NULL, sets, n, &err);
    if (cases[i].key) {
      assert_int_equal(rc, SIM_ECONFIG);
      assert_non_null(strstr(err.msg, cases[i].key));
    } else {
      assert_int_equal(rc, SIM_OK); /* 3 ports of one NIC per node: 3 nodes */
      cfg_free(&cfg, doc);
    }
  }
  const char *sets[] = {DP2, "cluster.nic.per_node=2", "storage.nic.per_server=3"};
  cfg_scenario cfg;
  cfg_doc *doc;
  sim_error err = {0};
  assert_int_equal(cfg_load(&cfg, &doc, NULL, sets, sizeof sets / sizeof *sets, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "storage.nic.per_server"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_separate),
      cmocka_unit_test(test_separate_spread),
      cmocka_unit_test(test_backend_two_flows),
      cmocka_unit_test(test_sync),
      cmocka_unit_test(test_size_auto),
      cmocka_unit_test(test_idle_servers_change_nothing),
      cmocka_unit_test(test_data_loading),
      cmocka_unit_test(test_read_rate),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
