/* Several jobs on one fabric (run_jobs, src/run/jobs.c; jobs: in the
 * scenario): jobs on disjoint leaves each give exactly their alone result
 * (slowdown 1) at the analytic and flow fidelities; two jobs whose rings
 * cross the one spine of the fabric share its links, and at the flow
 * fidelity two equal flows on one bottleneck each get half of it, so the
 * bandwidth term of each job's time doubles; placement errors are located
 * at the job's key, before anything is simulated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabsim/ev.h"
#include "fabsim/run.h"
#include "fabsim/workload.h"

/* A 2-tier fat-tree of radix 8 (4 nodes of one GPU and NIC per leaf, 4
 * uplinks per leaf), cluster.nodes nodes, static routing (InfiniBand),
 * then `jobs` as YAML. */
static char *scenario_file(uint32_t nodes, const char *fidelity, const char *jobs) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/fabsim-test-jobs-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f,
          "cluster: {nodes: %u, gpus_per_node: 1, nic: {bandwidth: 100Gbps}}\n"
          "fabric: {topology: fat-tree, tiers: 2, switch_radix: 8, transport: infiniband}\n"
          "simulation: {fidelity: %s, seed: 1}\n"
          "%s",
          nodes, fidelity, jobs);
  fclose(f);
  return path;
}

/* Loads, sets up, runs every job together, then each alone. */
static void run_all(run_setup *s, const char *path) {
  sim_error err = {0};
  if (run_setup_load(s, path, NULL, 0, &err) != SIM_OK) fail_msg("%s", err.msg);
  unlink(path);
  if (run_setup_begin(s, &err) != SIM_OK) fail_msg("%s", err.msg);
  if (run_jobs_start(&s->jobs, s->sim, s->be, s->doc, &err) != SIM_OK) fail_msg("%s", err.msg);
  if (run_jobs_training(&s->jobs)) {
    bool complete = false;
    if (run_jobs_run(&s->jobs, s->sim, s->doc, &complete, &err) != SIM_OK) fail_msg("%s", err.msg);
    assert_true(complete);
  } else {
    ev_run(s->sim, SIM_TIME_MAX);
  }
  run_jobs_end(&s->jobs, s->sim);
  if (run_jobs_alone(&s->jobs, s->doc, s->t, &err) != SIM_OK) fail_msg("%s", err.msg);
}

static const char disjoint[] =
    "jobs:\n"
    "  - {name: a, gpus: 4, placement: topology-aware,\n"
    "     workload: {kind: collective, collective: {op: allreduce, size: 16MiB}}}\n"
    "  - {name: b, gpus: 4, placement: explicit, nodes: [4, 5, 6, 7], start: 30us,\n"
    "     workload: {kind: collective, collective: {op: allreduce, size: 16MiB}}}\n";

static void check_disjoint(const char *fidelity) {
  run_setup s;
  run_all(&s, scenario_file(8, fidelity, disjoint));
  assert_int_equal(s.jobs.n, 2);
  for (uint32_t j = 0; j < 2; j++) {
    const run_job *job = &s.jobs.v[j];
    assert_true(job->finished && job->have_alone);
    assert_int_equal(job->metrics.leaves, 1);
    assert_int_equal(job->metrics.ring_spine_pairs, 0);
    assert_int_equal(job->nodes[0], 4 * j); /* a: leaf 0, b: leaf 1 */
    /* nothing shared: exactly the alone time (both from integer picoseconds) */
    assert_true(job->res.time_s > 0);
    assert_true(job->res.time_s == job->alone.time_s);
    assert_true(job->slowdown == 1.0);
  }
  assert_int_equal(s.jobs.v[0].exec.start, 0);
  assert_int_equal(s.jobs.v[1].exec.start, 30 * SIM_PS_PER_US); /* b starts at its start */
  run_setup_free(&s);
}

static void test_disjoint_leaves_analytic(void **state) {
  (void)state;
  check_disjoint("analytic");
}

static void test_disjoint_leaves_flow(void **state) {
  (void)state;
  check_disjoint("flow");
}

/* Oversubscription 7 at radix 8: 7 nodes per leaf and one uplink, to the
 * fabric's one spine, at the NICs' 100 Gb/s, every efficiency 1. Job a on
 * nodes 0 and 7, job b on nodes 1 and 8: both rings cross between leaf 0
 * and leaf 1 through the same two links, one per direction. A 2-rank ring
 * AllReduce of S bytes sends S per rank (2 (n-1)/n S); alone it runs at
 * B = 100 Gb/s, shared each of the two equal flows on a link gets B / 2,
 * so the shared time is the alone time plus exactly S x 8 / B. */
static const char shared[] =
    "cluster.nic.efficiency: 1\n"
    "cluster.pcie.efficiency: 1\n"
    "fabric.link_efficiency: 1\n"
    "fabric.link_bandwidth: 100Gbps\n"
    "fabric.oversubscription: 7\n"
    "jobs:\n"
    "  - {name: a, gpus: 2, placement: explicit, nodes: [0, 7],\n"
    "     workload: {kind: collective, collective: {op: allreduce, size: 64MiB, algorithm: "
    "ring, channels: 1, protocol: simple}}}\n"
    "  - {name: b, gpus: 2, placement: explicit, nodes: [1, 8],\n"
    "     workload: {kind: collective, collective: {op: allreduce, size: 64MiB, algorithm: "
    "ring, channels: 1, protocol: simple}}}\n";

static void test_shared_spine_flow(void **state) {
  (void)state;
  run_setup s;
  run_all(&s, scenario_file(14, "flow", shared));
  double extra = 64.0 * 1024 * 1024 * 8 / 100e9; /* S x 8 / B */
  for (uint32_t j = 0; j < 2; j++) {
    const run_job *job = &s.jobs.v[j];
    assert_true(job->finished && job->have_alone);
    assert_int_equal(job->metrics.leaves, 2);
    assert_int_equal(job->metrics.ring_spine_pairs, 2);
    assert_true(job->slowdown > 1.9 && job->slowdown < 2.0);
    assert_float_equal(job->res.time_s, job->alone.time_s + extra, 1e-12);
  }
  run_setup_free(&s);
}

/* The same two AllReduces at the analytic fidelity: timed (its backend
 * would charge whichever job submits second for the whole phase), each
 * stretched while the other shares the uplink: within 0.1 % of the closed
 * form, the same for both. And a 1 KiB AllReduce beside a 64 MiB one on
 * the same uplink costs the long one under 1 % (live analytic: 1.84x). */
static void test_shared_spine_analytic(void **state) {
  (void)state;
  run_setup s;
  run_all(&s, scenario_file(14, "analytic", shared));
  double extra = 64.0 * 1024 * 1024 * 8 / 100e9;
  for (uint32_t j = 0; j < 2; j++) {
    const run_job *job = &s.jobs.v[j];
    assert_true(job->timed && job->finished && job->have_alone);
    assert_float_equal(job->res.time_s, job->alone.time_s + extra, 1e-3 * job->res.time_s);
  }
  assert_true(s.jobs.v[0].res.time_s == s.jobs.v[1].res.time_s);
  run_setup_free(&s);
  char yaml[1200];
  snprintf(yaml, sizeof yaml, "%s", shared);
  char *small = strstr(yaml, "size: 64MiB");
  memcpy(small, "size: 1KiB ", 11); /* job a: 1 KiB */
  run_all(&s, scenario_file(14, "analytic", yaml));
  assert_true(s.jobs.v[1].slowdown < 1.01); /* a few microseconds of sharing */
  run_setup_free(&s);
}

/* Two traffic jobs (pattern pair: rank 0 sends S to its last rank) on the
 * fabric above: node 0 -> 7 and node 1 -> 8 share leaf 0's one uplink, so
 * each flow gets B / 2 and takes exactly S x 8 / B longer than alone; the
 * pattern runs over the job's GPUs only. */
static const char shared_traffic[] =
    "cluster.nic.efficiency: 1\n"
    "cluster.pcie.efficiency: 1\n"
    "fabric.link_efficiency: 1\n"
    "fabric.link_bandwidth: 100Gbps\n"
    "fabric.oversubscription: 7\n"
    "jobs:\n"
    "  - {name: a, gpus: 2, placement: explicit, nodes: [0, 7],\n"
    "     workload: {kind: traffic, traffic: {pattern: pair, size: 16MiB}}}\n"
    "  - {name: b, gpus: 2, placement: explicit, nodes: [1, 8],\n"
    "     workload: {kind: traffic, traffic: {pattern: pair, size: 16MiB}}}\n";

static void test_shared_traffic_flow(void **state) {
  (void)state;
  run_setup s;
  run_all(&s, scenario_file(14, "flow", shared_traffic));
  double extra = 16.0 * 1024 * 1024 * 8 / 100e9;
  for (uint32_t j = 0; j < 2; j++) {
    const run_job *job = &s.jobs.v[j];
    assert_int_equal(job->plan.nphases, 1);
    assert_int_equal(job->plan.phases[0].n, 1);
    assert_int_equal(job->plan.phases[0].x[0].src_gpu, job->nodes[0]); /* 1 GPU per node */
    assert_int_equal(job->plan.phases[0].x[0].dst_gpu, job->nodes[1]);
    assert_true(job->finished && job->have_alone);
    assert_float_equal(job->res.time_s, job->alone.time_s + extra, 1e-12);
  }
  run_setup_free(&s);
}

/* A small transformer trained data-parallel over the job's GPUs: two
 * micro-batches per GPU, ZeRO 1 (gradients reduce-scattered in 4 MiB
 * buckets during the last backward pass, weights gathered after). */
#define TRAINING_MODEL                                                                       \
  "model: {layers: 2, hidden: 1024, heads: 8, seq_len: 512, vocab: 1000}, "                  \
  "parallel: {tp: 1, pp: 1, zero: 1}, micro_batch: 1, global_batch: %u, bucket_size: 4MiB, " \
  "steps: 2"

/* jobs: from a format with %u for each job's global batch. */
static char *training_jobs(const char *fmt, uint32_t batch_a, uint32_t batch_b) {
  static char text[2048];
  snprintf(text, sizeof text, fmt, batch_a, batch_b);
  return text;
}

/* Two training jobs on disjoint leaves (a on leaf 0, b on leaf 1) share no
 * link: each runs exactly its alone steps, and b, a translated copy of a,
 * exactly a's (its ranks are laid out over its own GPUs). */
static const char train_disjoint[] =
    "jobs:\n"
    "  - {name: a, gpus: 4, placement: explicit, nodes: [0, 1, 2, 3],\n"
    "     workload: {kind: training, " TRAINING_MODEL
    "}}\n"
    "  - {name: b, gpus: 4, placement: explicit, nodes: [4, 5, 6, 7],\n"
    "     workload: {kind: training, " TRAINING_MODEL "}}\n";

static void check_train_disjoint(const char *fidelity) {
  run_setup s;
  run_all(&s, scenario_file(8, fidelity, training_jobs(train_disjoint, 8, 8)));
  const run_job *a = &s.jobs.v[0], *b = &s.jobs.v[1];
  for (uint32_t j = 0; j < 2; j++) {
    const run_job *job = &s.jobs.v[j];
    assert_non_null(job->train);
    assert_true(job->finished && job->have_alone);
    assert_int_equal(wl_job_steps_done(job->train), 2);
    assert_true(job->res.time_s > 0);
    assert_true(job->res.time_s == job->alone.time_s);
    assert_true(job->slowdown == 1.0);
    for (uint32_t k = 0; k < 2; k++)
      assert_true(wl_job_step(job->train, k)->time_s == wl_job_step(job->train_alone, k)->time_s);
  }
  assert_true(a->res.time_s == b->res.time_s);
  assert_true(wl_job_step(a->train, 0)->exposed_comm_s > 0); /* it communicates */
  assert_true(a->isolated && b->isolated);
  assert_int_equal(a->nshares, 0);
  char cause[200];
  run_job_cause(&s.jobs, a, s.t, cause, sizeof cause);
  assert_string_equal(cause, ""); /* as fast as alone: no cause */
  run_setup_free(&s);
}

/* Isolated jobs keep the comm model they would have alone: under reuse,
 * timed on a fresh backend before the run, replayed from the job's start
 * (b starts 1 ms in): still exactly the alone steps. */
static void test_train_isolated_reuse(void **state) {
  (void)state;
  static const char fmt[] =
      "jobs:\n"
      "  - {name: a, gpus: 4, placement: explicit, nodes: [0, 1, 2, 3],\n"
      "     workload: {kind: training, comm_model: reuse, " TRAINING_MODEL
      "}}\n"
      "  - {name: b, gpus: 4, placement: explicit, nodes: [4, 5, 6, 7], start: 1ms,\n"
      "     workload: {kind: training, comm_model: symmetric, " TRAINING_MODEL "}}\n";
  run_setup s;
  run_all(&s, scenario_file(8, "flow", training_jobs(fmt, 8, 8)));
  for (uint32_t j = 0; j < 2; j++) {
    const run_job *job = &s.jobs.v[j];
    assert_true(job->isolated);
    assert_int_equal(wl_job_step(job->train, 0)->comm_model,
                     j ? CFG_COMM_SYMMETRIC : CFG_COMM_REUSE);
    assert_int_equal(wl_job_step(job->train, 0)->start_ps, job->cfg->start);
    assert_true(job->finished && job->res.time_s == job->alone.time_s);
    for (uint32_t k = 0; k < 2; k++)
      assert_true(wl_job_step(job->train, k)->time_s == wl_job_step(job->train_alone, k)->time_s);
  }
  run_setup_free(&s);
}

/* What makes a job not isolated: a leaf in common (each names the other),
 * the packet fidelity (shared buffers and pauses), a network fault. */
static void test_isolation_rules(void **state) {
  (void)state;
  static const char two[] =
      "jobs:\n"
      "  - {name: a, gpus: 2, placement: explicit, nodes: [0, 1],\n"
      "     workload: {kind: collective, collective: {size: 1MiB}}}\n"
      "  - {name: b, gpus: 2, placement: explicit, nodes: [2, 5],\n"
      "     workload: {kind: collective, collective: {size: 1MiB}}}\n"
      "  - {name: c, gpus: 2, placement: explicit, nodes: [8, 9],\n"
      "     workload: {kind: collective, collective: {size: 1MiB}}}\n";
  run_setup s;
  sim_error err = {0};
  const char *fid[] = {"flow", "packet"};
  for (int f = 0; f < 2; f++) {
    const char *path = scenario_file(12, fid[f], two);
    if (run_setup_load(&s, path, NULL, 0, &err) != SIM_OK) fail_msg("%s", err.msg);
    unlink(path);
    if (run_setup_begin(&s, &err) != SIM_OK) fail_msg("%s", err.msg);
    assert_int_equal(s.jobs.v[0].nshares, 1); /* b, on leaf 0 */
    assert_int_equal(s.jobs.v[0].shares[0].job, 1);
    assert_int_equal(s.jobs.v[0].shares[0].where.leaves, 1);
    assert_int_equal(s.jobs.v[1].nshares, 1);
    assert_int_equal(s.jobs.v[1].shares[0].job, 0);
    assert_int_equal(s.jobs.v[2].nshares, 0); /* leaf 2 */
    assert_false(s.jobs.v[0].isolated || s.jobs.v[1].isolated);
    assert_true(s.jobs.v[2].isolated == (f == 0));
    run_setup_free(&s);
  }
  char yaml[1200];
  snprintf(yaml, sizeof yaml, "faults: [{at: 1s, kind: link-down, target: leaf1-spine0}]\n%s", two);
  const char *path = scenario_file(12, "flow", yaml);
  if (run_setup_load(&s, path, NULL, 0, &err) != SIM_OK) fail_msg("%s", err.msg);
  unlink(path);
  if (run_setup_begin(&s, &err) != SIM_OK) fail_msg("%s", err.msg);
  assert_false(s.jobs.v[2].isolated);
  run_setup_free(&s);
}

static void test_train_disjoint_analytic(void **state) {
  (void)state;
  check_train_disjoint("analytic");
}

static void test_train_disjoint_flow(void **state) {
  (void)state;
  check_train_disjoint("flow");
}

/* One training job in jobs: over every GPU of the cluster is the same run
 * as the scenario's workload: (comm_model live, as jobs: runs it): the same
 * steps, bit for bit. */
static void test_train_one_job_is_workload(void **state) {
  (void)state;
  run_setup s, w;
  sim_error err = {0};
  run_all(&s, scenario_file(8, "flow",
                            training_jobs("jobs:\n  - {name: a, gpus: 8, placement: packed,\n"
                                          "     workload: {kind: training, " TRAINING_MODEL "}}\n",
                                          16, 0)));
  const char *path = scenario_file(
      8, "flow",
      training_jobs("workload: {kind: training, comm_model: live, " TRAINING_MODEL "}\n", 16, 0));
  if (run_setup_load(&w, path, NULL, 0, &err) != SIM_OK) fail_msg("%s", err.msg);
  unlink(path);
  if (run_setup_begin(&w, &err) != SIM_OK) fail_msg("%s", err.msg);
  run_events log;
  memset(&log, 0, sizeof log);
  bool complete;
  if (run_training_run(&w.tr, &log, NULL, &complete, &err) != SIM_OK) fail_msg("%s", err.msg);
  run_events_free(&log);
  const wl_job *one = s.jobs.v[0].train, *alone = w.tr.job;
  assert_int_equal(wl_job_steps_done(one), 2);
  assert_int_equal(wl_job_steps_done(alone), 2);
  for (uint32_t k = 0; k < 2; k++) {
    const wl_step *x = wl_job_step(one, k), *y = wl_job_step(alone, k);
    assert_true(x->time_s == y->time_s);
    assert_true(x->compute_s == y->compute_s);
    assert_true(x->exposed_comm_s == y->exposed_comm_s);
  }
  run_setup_free(&w);
  run_setup_free(&s);
}

/* Two training jobs whose gradient rings cross the one spine of the
 * oversubscribed fabric (a on nodes 0 and 7, b on 1 and 8, as `shared`):
 * at the flow fidelity they share its links while both reduce, so each
 * step's exposed communication grows and its compute does not. */
static const char train_shared[] =
    "cluster.nic.efficiency: 1\n"
    "fabric.link_bandwidth: 100Gbps\n"
    "fabric.oversubscription: 7\n"
    "jobs:\n"
    "  - {name: a, gpus: 2, placement: explicit, nodes: [0, 7],\n"
    "     workload: {kind: training, " TRAINING_MODEL
    "}}\n"
    "  - {name: b, gpus: 2, placement: explicit, nodes: [1, 8],\n"
    "     workload: {kind: training, " TRAINING_MODEL "}}\n";

static void test_train_shared_flow(void **state) {
  (void)state;
  run_setup s;
  run_all(&s, scenario_file(14, "flow", training_jobs(train_shared, 4, 4)));
  for (uint32_t j = 0; j < 2; j++) {
    const run_job *job = &s.jobs.v[j];
    assert_true(job->finished && job->have_alone);
    assert_true(job->slowdown > 1.05);
    const wl_step *x = wl_job_step(job->train, 0), *y = wl_job_step(job->train_alone, 0);
    assert_true(x->compute_s == y->compute_s);
    assert_true(x->exposed_comm_s > y->exposed_comm_s);
    assert_float_equal(x->time_s - y->time_s, x->exposed_comm_s - y->exposed_comm_s, 1e-9);
    char cause[600], want[64];
    run_job_cause(&s.jobs, job, s.t, cause, sizeof cause);
    snprintf(want, sizeof want, "it may share links with %s (2 common leaves, first leaf0)",
             j ? "a" : "b");
    if (!strstr(cause, want) || !strstr(cause, "longer than alone"))
      fail_msg("cause '%s' lacks '%s'", cause, want);
  }
  run_setup_free(&s);
}

/* The same two jobs timed by class (comm_model reuse: their group runs no
 * live job): each collective is stretched while the other job's shares its
 * links. Their rings saturate the one uplink alone, so two at once get half
 * of it each: within 1 % of the live run, step by step and in the job's
 * slowdown, and the compute is the same. */
static void test_train_shared_timed(void **state) {
  (void)state;
  run_setup live, timed;
  char yaml[2600];
  run_all(&live, scenario_file(14, "flow", training_jobs(train_shared, 4, 4)));
  snprintf(yaml, sizeof yaml, "%s", training_jobs(train_shared, 4, 4));
  for (char *p = yaml; (p = strstr(p, "kind: training,"));) { /* every job: comm_model reuse */
    memmove(p + 34, p + 15, strlen(p + 15) + 1);
    memcpy(p, "kind: training, comm_model: reuse,", 34);
    p += 34;
  }
  run_all(&timed, scenario_file(14, "flow", yaml));
  for (uint32_t j = 0; j < 2; j++) {
    const run_job *x = &timed.jobs.v[j], *y = &live.jobs.v[j];
    assert_true(x->timed && !y->timed);
    assert_int_equal(wl_job_step(x->train, 0)->comm_model, CFG_COMM_REUSE);
    /* the two share the uplink (well above alone: the exposed rings take
     * most of a step) and the timed slowdown is the live one */
    assert_true(x->slowdown > 1.5);
    assert_float_equal(x->slowdown, y->slowdown, 0.01 * y->slowdown);
    for (uint32_t k = 0; k < 2; k++) {
      const wl_step *a = wl_job_step(x->train, k), *b = wl_job_step(y->train, k);
      assert_float_equal(a->time_s, b->time_s, 0.01 * b->time_s);
      assert_float_equal(a->compute_s, b->compute_s, 1e-9 * b->compute_s);
    }
  }
  run_setup_free(&timed);
  run_setup_free(&live);
}

/* A GPU fault reaches the job that holds the GPU: a slowdown on job b's
 * GPU 5 halves b's compute speed and leaves a, on its own leaf, as it was.
 * The alone baselines run under the same faults (a fault is the fabric's,
 * whoever runs there), so both slowdowns are exactly 1: nothing is shared. */
static void test_train_fault_to_its_job(void **state) {
  (void)state;
  run_setup s;
  char yaml[2600];
  snprintf(yaml, sizeof yaml,
           "faults: [{at: 0s, kind: gpu-slowdown, target: gpu5, factor: 0.5}]\n%s",
           training_jobs(train_disjoint, 8, 8));
  run_all(&s, scenario_file(8, "flow", yaml));
  const run_job *a = &s.jobs.v[0], *b = &s.jobs.v[1];
  const wl_step *sa = wl_job_step(a->train, 0), *sb = wl_job_step(b->train, 0);
  assert_float_equal(sb->compute_s, 2 * sa->compute_s, 1e-9 * sa->compute_s);
  assert_true(sb->time_s > sa->time_s);
  assert_true(wl_job_step(b->train_alone, 0)->compute_s == sb->compute_s);
  assert_true(a->slowdown == 1.0 && b->slowdown == 1.0);
  run_setup_free(&s);
}

/* A link fault is the fabric's: two collective jobs on disjoint leaves (a
 * on leaves 0 and 1, b on 2 and 3), b's node 8 NIC link degraded to a
 * quarter of its rate from 0: b alone is exactly as slow as b shared
 * (slowdown 1: its alone baseline has the fault too), and slower than a. */
static void test_link_fault_in_alone(void **state) {
  (void)state;
  static const char yaml[] =
      "faults: [{at: 0s, kind: link-degraded, target: nic8-leaf2, factor: 0.25}]\n"
      "jobs:\n"
      "  - {name: a, gpus: 4, placement: explicit, nodes: [0, 1, 4, 5],\n"
      "     workload: {kind: collective, collective: {size: 16MiB, algorithm: ring}}}\n"
      "  - {name: b, gpus: 4, placement: explicit, nodes: [8, 9, 12, 13],\n"
      "     workload: {kind: collective, collective: {size: 16MiB, algorithm: ring}}}\n";
  run_setup s;
  run_all(&s, scenario_file(16, "flow", yaml));
  const run_job *a = &s.jobs.v[0], *b = &s.jobs.v[1];
  for (uint32_t j = 0; j < 2; j++) {
    const run_job *job = &s.jobs.v[j];
    assert_true(job->finished && job->have_alone);
    assert_false(job->isolated); /* a network fault: nothing is isolated */
    assert_true(job->slowdown == 1.0);
  }
  assert_true(b->res.time_s > 1.5 * a->res.time_s);
  run_setup_free(&s);
}

/* Setup errors, located, nothing simulated. */
static void check_refused(uint32_t nodes, const char *jobs, const char *want) {
  run_setup s;
  sim_error err = {0};
  const char *path = scenario_file(nodes, "flow", jobs);
  int rc = run_setup_load(&s, path, NULL, 0, &err);
  if (rc == SIM_OK) rc = run_setup_begin(&s, &err);
  unlink(path);
  assert_int_equal(rc, SIM_ECONFIG);
  if (!strstr(err.msg, want)) fail_msg("'%s' does not contain '%s'", err.msg, want);
  if (s.sim) assert_int_equal(sim_events(s.sim), 0);
  run_setup_free(&s);
}

static void test_refused(void **state) {
  (void)state;
  check_refused(8,
                "jobs:\n  - {name: a, gpus: 8, placement: packed, workload: {kind: collective}}\n"
                "  - {name: b, gpus: 4, placement: packed, workload: {kind: collective}}\n",
                ":6:35: jobs[1].placement: placement: packed wants 4 nodes");
  check_refused(8,
                "jobs:\n  - {name: a, gpus: 4, workload: {kind: collective}}\n"
                "  - {name: a, gpus: 4, workload: {kind: collective}}\n",
                ":6:12: jobs[1].name: 'a' is also the name of jobs[0]");
  /* a trace job's files are read at setup: a missing one is refused at its key */
  check_refused(8, "jobs:\n  - {name: a, gpus: 4, workload: {kind: trace, trace: {path: x.et}}}\n",
                ":5:62: jobs[0].workload.trace.path: rank 0: cannot open x.et");
  /* a and b share leaf 0 and a runs live: b may not time its collectives
   * by class (the stretching cannot see a's live transfers) */
  static const char reuse_fmt[] =
      "jobs:\n  - {name: a, gpus: 2, workload: {kind: training, comm_model: live, " TRAINING_MODEL
      "}}\n"
      "  - {name: b, gpus: 2, workload: {kind: training, comm_model: reuse, " TRAINING_MODEL "}}\n";
  check_refused(8, training_jobs(reuse_fmt, 4, 4),
                "jobs[1].workload.comm_model: reuse times each collective by class, but this job "
                "may share links with job 'a' and the jobs it may meet run live");
  check_refused(8,
                "jobs:\n  - {name: a, gpus: 4, workload: {kind: collective, collective: "
                "{algorithm: pairwise}}}\n",
                ":5:77: jobs[0].workload.collective.algorithm: pairwise only implements alltoall");
  check_refused(8, "jobs:\n  - {name: a, gpus: 4, workload: {kind: collective, colective: {}}}\n",
                "jobs[0].workload.colective: unknown key");
  check_refused(8,
                "workload: {kind: collective}\n"
                "jobs:\n  - {name: a, gpus: 4, workload: {kind: collective}}\n",
                ":4:18: workload.kind: a scenario with jobs: has no top-level workload");
  check_refused(8,
                "jobs:\n  - {name: a, gpus: 2, placement: explicit, nodes: [0, 0], workload: "
                "{kind: collective}}\n",
                "jobs[0].nodes: placement: node 0 is listed twice");
}

/* scenario.yaml (cfg_dump) of a scenario with jobs loads back to itself. */
static void test_dump_round_trip(void **state) {
  (void)state;
  static const char yaml[] =
      "cluster: {nodes: 8, gpus_per_node: 1}\n"
      "jobs:\n"
      "  - {name: \"a b\", gpus: 2, placement: explicit, nodes: [3, 1], start: 2us,\n"
      "     workload: {kind: collective, collective.op: allgather, collective: {size: 3MiB}}}\n"
      "  - {name: c, gpus: 4, placement: spread, workload: {kind: collective}}\n";
  cfg_scenario a, b;
  cfg_doc *da, *db;
  sim_error err = {0};
  if (cfg_load_buffer(&a, &da, "a", yaml, strlen(yaml), NULL, 0, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(a.jobs.n, 2);
  assert_int_equal(a.jobs.v[0].workload.collective.op, CFG_COLL_ALLGATHER);
  assert_int_equal(a.jobs.v[0].workload.collective.size, 3 << 20);
  assert_int_equal(a.jobs.v[1].workload.collective.op, CFG_COLL_ALLREDUCE); /* the default */
  char *text = cfg_dump(&a);
  if (cfg_load_buffer(&b, &db, "b", text, strlen(text), NULL, 0, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  char *again = cfg_dump(&b);
  assert_string_equal(text, again);
  sim_free(text);
  sim_free(again);
  cfg_free(&a, da);
  cfg_free(&b, db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_disjoint_leaves_analytic),
      cmocka_unit_test(test_disjoint_leaves_flow),
      cmocka_unit_test(test_shared_spine_flow),
      cmocka_unit_test(test_shared_spine_analytic),
      cmocka_unit_test(test_shared_traffic_flow),
      cmocka_unit_test(test_train_disjoint_analytic),
      cmocka_unit_test(test_train_disjoint_flow),
      cmocka_unit_test(test_train_one_job_is_workload),
      cmocka_unit_test(test_train_isolated_reuse),
      cmocka_unit_test(test_isolation_rules),
      cmocka_unit_test(test_train_shared_flow),
      cmocka_unit_test(test_train_shared_timed),
      cmocka_unit_test(test_train_fault_to_its_job),
      cmocka_unit_test(test_link_fault_in_alone),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_dump_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
