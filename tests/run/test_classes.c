/* Traffic classes end to end (fabric.classes; jobs[j].traffic_class,
 * workload.traffic_class), through the run layer as fabsim run drives it,
 * on a 2-tier fat-tree of radix 8 at oversubscription 7 (7 nodes of one
 * GPU and one 100 Gb/s NIC per leaf, one uplink), every efficiency 1.
 * Jobs a (nodes 0 -> 7) and b (nodes 1 -> 8) send S = 16 MiB each over
 * leaf 0's one uplink, B = 100 Gb/s:
 *   - weights 3:1: a gets 3B/4 until it ends at 4S/(3B), b then has S/3
 *     through and ends at 2S/B (the link stays full): a's time is its alone
 *     time + S/(3B), b's + S/B, exactly at the flow fidelity; the packet
 *     fidelity's slowdowns (shared over alone: headers and the path's
 *     latency cancel) within 1 % of 4/3 and 2: one deficit round robin
 *     round is 4 packets (1.3 us) of a 1.8 ms transfer, the first round
 *     trip before both queues fill another few us;
 *   - strict priority for a small transfer (64 KiB, from 200 us, while b's
 *     bulk queues are full): its alone time plus at most one packet time
 *     (a 4,138-byte frame at B, 331 ns) per hop of its four fabric hops at
 *     the packet fidelity, where in the bulk's class it waits behind the
 *     queue (tested too, so the bound can fail);
 *   - an explicit table of the defaults runs bit for bit as no table;
 *   - under incast (RoCE, no congestion control, a 2 MB switch buffer) a
 *     lossless class is paused and drops nothing, a lossy one drops and is
 *     never paused; a lossy class's buffer share caps its queue;
 *   - per-class ECN thresholds: the class with a low Kmin is marked, the
 *     one with a high Kmin is not;
 *   - pause victims: an incast that crosses the spine stops the flows of
 *     another job queued at the spine (be_job_pauses). */
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

static const char fabric[] =
    "cluster: {nodes: 14, gpus_per_node: 1, nic: {bandwidth: 100Gbps, efficiency: 1}, pcie: "
    "{efficiency: 1}}\n"
    "fabric: {topology: fat-tree, tiers: 2, switch_radix: 8, link_efficiency: 1, "
    "link_bandwidth: 100Gbps, oversubscription: 7}\n"
    "output: {database: none, report: false}\n";

/* The scenario (fabric, then `rest`) run as fabsim run runs it: jobs on
 * the one backend, then each alone (jobs), or the workload. */
static void run(run_setup *s, be_stats *st, const char *fidelity, const char *rest) {
  char path[64], text[4096];
  snprintf(path, sizeof path, "/tmp/fabsim-test-classes-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  int n = snprintf(text, sizeof text, "%ssimulation: {fidelity: %s, seed: 1}\n%s", fabric, fidelity,
                   rest);
  assert_true(n > 0 && (size_t)n < sizeof text);
  assert_true(write(fd, text, (size_t)n) == n);
  close(fd);
  sim_error err = {0};
  memset(s, 0, sizeof *s);
  int rc = run_setup_load(s, path, NULL, 0, &err);
  unlink(path);
  if (rc != SIM_OK || run_setup_begin(s, &err) != SIM_OK) fail_msg("%s", err.msg);
  if (s->jobs.n) {
    if (run_jobs_start(&s->jobs, s->sim, s->be, s->doc, &err) != SIM_OK) fail_msg("%s", err.msg);
  } else {
    run_workload_start(&s->w, s->be);
  }
  if (run_jobs_training(&s->jobs)) { /* training jobs drive the simulation */
    bool complete = false;
    if (run_jobs_run(&s->jobs, s->sim, s->doc, &complete, &err) != SIM_OK) fail_msg("%s", err.msg);
    assert_true(complete);
  } else {
    ev_run(s->sim, SIM_TIME_MAX);
  }
  s->be->ops->stats(s->be, st);
  if (s->jobs.n) {
    run_jobs_end(&s->jobs, s->sim);
    if (run_jobs_alone(&s->jobs, s->doc, s->t, &err) != SIM_OK) fail_msg("%s", err.msg);
  }
}

static const char *pair_jobs(char *buf, size_t cap, const char *classes, const char *ca,
                             const char *cb) {
  snprintf(buf, cap,
           "fabric.transport: infiniband\n"
           "fabric.classes: %s\n"
           "jobs:\n"
           "  - {name: a, gpus: 2, placement: explicit, nodes: [0, 7], traffic_class: %s,\n"
           "     workload: {kind: traffic, traffic: {pattern: pair, size: 16MiB}}}\n"
           "  - {name: b, gpus: 2, placement: explicit, nodes: [1, 8], traffic_class: %s,\n"
           "     workload: {kind: traffic, traffic: {pattern: pair, size: 16MiB}}}\n",
           classes, ca, cb);
  return buf;
}

static const char weights[] = "[{id: 1, name: gold, weight: 3}, {id: 2, name: bronze}]";

static void test_weights_flow(void **state) {
  (void)state;
  char buf[1024];
  run_setup s;
  be_stats st;
  run(&s, &st, "flow", pair_jobs(buf, sizeof buf, weights, "gold", "bronze"));
  double sb = 16.0 * 1024 * 1024 * 8 / 100e9; /* S / B */
  const run_job *a = &s.jobs.v[0], *b = &s.jobs.v[1];
  assert_true(a->finished && b->finished && a->have_alone && b->have_alone);
  assert_float_equal(a->res.time_s, a->alone.time_s + sb / 3, 1e-12);
  assert_float_equal(b->res.time_s, b->alone.time_s + sb, 1e-12);
  assert_true(st.class_bytes[1] == 16u << 20 && st.class_bytes[2] == 16u << 20);
  run_setup_free(&s);
  /* the same jobs in one class: each B / 2 (the solver's one-class path) */
  run(&s, &st, "flow", pair_jobs(buf, sizeof buf, weights, "gold", "gold"));
  assert_float_equal(s.jobs.v[0].res.time_s, s.jobs.v[0].alone.time_s + sb, 1e-12);
  run_setup_free(&s);
}

/* The same jobs at the analytic fidelity: timed and stretched while they
 * share the uplink (src/run/contention.c), by the classes' weights as the
 * flow fidelity shares it: a at 3B/4 then b alone, within 0.5 % (the
 * stretch takes a transfer's time alone less its launch as its
 * bandwidth-bound part: 2.5 us more than S / B here, the path's latency);
 * b at strict priority over a: b as alone, a after it. One class: each
 * B / 2, as without classes. */
static void test_classes_timed(void **state) {
  (void)state;
  char buf[1024];
  run_setup s;
  be_stats st;
  double sb = 16.0 * 1024 * 1024 * 8 / 100e9; /* S / B */
  run(&s, &st, "analytic", pair_jobs(buf, sizeof buf, weights, "gold", "bronze"));
  const run_job *a = &s.jobs.v[0], *b = &s.jobs.v[1];
  print_message("timed 3:1: a %.6g (alone %.6g), b %.6g (alone %.6g), S/B %.6g ms\n",
                a->res.time_s * 1e3, a->alone.time_s * 1e3, b->res.time_s * 1e3,
                b->alone.time_s * 1e3, sb * 1e3);
  assert_true(a->timed && b->timed && a->finished && b->finished);
  assert_float_equal(a->res.time_s, a->alone.time_s + sb / 3, 5e-3 * a->res.time_s);
  assert_float_equal(b->res.time_s, b->alone.time_s + sb, 5e-3 * b->res.time_s);
  run_setup_free(&s);
  run(&s, &st, "analytic",
      pair_jobs(buf, sizeof buf, "[{id: 1, name: bulk}, {id: 5, name: first, priority: 1}]", "bulk",
                "first"));
  a = &s.jobs.v[0], b = &s.jobs.v[1];
  assert_true(a->timed && b->timed);
  assert_float_equal(b->res.time_s, b->alone.time_s, 1e-9 * b->res.time_s);
  assert_float_equal(a->res.time_s, a->alone.time_s + sb, 5e-3 * a->res.time_s);
  run_setup_free(&s);
  run(&s, &st, "analytic", pair_jobs(buf, sizeof buf, weights, "gold", "gold"));
  assert_float_equal(s.jobs.v[0].res.time_s, s.jobs.v[0].alone.time_s + sb,
                     5e-3 * s.jobs.v[0].res.time_s);
  assert_true(s.jobs.v[0].res.time_s == s.jobs.v[1].res.time_s);
  run_setup_free(&s);
}

static void test_weights_packet(void **state) {
  (void)state;
  char buf[1024];
  run_setup s;
  be_stats st;
  run(&s, &st, "packet", pair_jobs(buf, sizeof buf, weights, "gold", "bronze"));
  const run_job *a = &s.jobs.v[0], *b = &s.jobs.v[1];
  assert_true(a->finished && b->finished);
  if (a->slowdown < 4.0 / 3 * 0.99 || a->slowdown > 4.0 / 3 * 1.01 || b->slowdown < 2 * 0.99 ||
      b->slowdown > 2 * 1.01)
    fail_msg("slowdowns %.4f and %.4f, want 4/3 and 2 within 1 %%", a->slowdown, b->slowdown);
  assert_int_equal(st.drops, 0);
  run_setup_free(&s);
}

static const char *latency_jobs(char *buf, size_t cap, const char *rpc_class) {
  snprintf(buf, cap,
           "fabric.transport: infiniband\n"
           "fabric.classes: [{id: 6, name: latency, priority: 1}, {id: 0, name: bulk}]\n"
           "jobs:\n"
           "  - {name: bulk, gpus: 2, placement: explicit, nodes: [0, 7], traffic_class: bulk,\n"
           "     workload: {kind: traffic, traffic: {pattern: pair, size: 16MiB}}}\n"
           "  - {name: rpc, gpus: 2, placement: explicit, nodes: [1, 8], traffic_class: %s,\n"
           "     start: 200us, workload: {kind: traffic, traffic: {pattern: pair, size: 64KiB}}}\n",
           rpc_class);
  return buf;
}

static void test_strict_priority_packet(void **state) {
  (void)state;
  char buf[1024];
  run_setup s;
  be_stats st;
  double pkt = (4096.0 + 26 + 16) * 8 / 100e9; /* the largest frame's time at B */
  run(&s, &st, "packet", latency_jobs(buf, sizeof buf, "latency"));
  const run_job *rpc = &s.jobs.v[1];
  assert_true(rpc->finished && rpc->have_alone);
  assert_true(rpc->res.time_s >= rpc->alone.time_s);
  if (rpc->res.time_s > rpc->alone.time_s + 4 * pkt)
    fail_msg("rpc %.4g us against %.4g us alone: more than a packet per hop", rpc->res.time_s * 1e6,
             rpc->alone.time_s * 1e6);
  double prio = rpc->res.time_s;
  run_setup_free(&s);
  run(&s, &st, "packet", latency_jobs(buf, sizeof buf, "bulk")); /* behind the bulk queue */
  rpc = &s.jobs.v[1];
  assert_true(rpc->res.time_s > rpc->alone.time_s + 4 * pkt);
  assert_true(rpc->res.time_s > prio + 1e-6);
  run_setup_free(&s);
}

/* Every class listed with its default: the same run, bit for bit. */
static void test_explicit_defaults(void **state) {
  (void)state;
  static const char incast[] =
      "fabric.transport: roce\nfabric.switch.buffer: 2MB\n"
      "workload: {kind: traffic, traffic: {pattern: incast, senders: 6, size: 1MiB}}\n";
  static const char table[] =
      "fabric.classes: [{id: 7, priority: 2}, {id: 6, priority: 1}, {id: 0}, {id: 1}, {id: 2}, "
      "{id: 3}, {id: 4}, {id: 5}]\n";
  char buf[1024];
  run_setup s;
  be_stats a, b;
  run(&s, &a, "packet", incast);
  run_setup_free(&s);
  snprintf(buf, sizeof buf, "%s%s", incast, table);
  run(&s, &b, "packet", buf);
  run_setup_free(&s);
  assert_true(a.packets > 0 && a.ecn_marks > 0);
  assert_int_equal(a.ecn_marks, b.ecn_marks);
  assert_int_equal(a.pfc_pauses, b.pfc_pauses);
  assert_int_equal(a.pfc_paused, b.pfc_paused);
  assert_int_equal(a.max_queue_bytes, b.max_queue_bytes);
  assert_int_equal(a.fct_max, b.fct_max);
  assert_int_equal(a.cnps, b.cnps);
}

/* Incast of 6 x 1 MiB into one port, class 1 lossless or lossy. */
static void incast_class(be_stats *st, const char *lossless, const char *buffer) {
  char buf[1024];
  run_setup s;
  snprintf(buf, sizeof buf,
           "fabric.transport: roce\nfabric.switch.buffer: 2MB\nfabric.roce.cc: none\n"
           "fabric.classes: [{id: 1, name: c, lossless: %s, buffer: %s}]\n"
           "workload: {kind: traffic, traffic_class: c, traffic: {pattern: incast, senders: 6, "
           "size: 1MiB}}\n",
           lossless, buffer);
  run(&s, st, "packet", buf);
  assert_false(s.w.failed);
  run_setup_free(&s);
}

static void test_lossless_lossy_incast(void **state) {
  (void)state;
  be_stats pfc, drop, capped;
  incast_class(&pfc, "true", "1");
  assert_true(pfc.class_pfc_pauses[1] > 0 && pfc.class_pfc_paused[1] > 0);
  assert_int_equal(pfc.class_drops[1], 0);
  assert_int_equal(pfc.drops, 0);
  assert_true(pfc.class_bytes[1] == 6u << 20 && pfc.class_bytes[0] == 0);
  incast_class(&drop, "false", "1");
  assert_true(drop.class_drops[1] > 0 && drop.retransmits > 0);
  assert_int_equal(drop.class_pfc_pauses[1], 0);
  assert_int_equal(drop.pfc_pauses, 0);
  assert_true(drop.class_bytes[1] == 6u << 20); /* retransmitted: all delivered */
  /* 2 % of the shared buffer (under 40 kB): the class's queue stays under
   * it plus its 4 KB reserve, where the whole buffer (the dynamic threshold
   * alone: about alpha / (1 + alpha) = 1/9 of it) let it grow past */
  incast_class(&capped, "false", "0.02");
  if (capped.class_max_queue[1] > 4096 + 40000 || drop.class_max_queue[1] <= 4096 + 40000)
    fail_msg("max queue %llu with a 2 %% share, %llu with all",
             (unsigned long long)capped.class_max_queue[1],
             (unsigned long long)drop.class_max_queue[1]);
  assert_true(capped.class_drops[1] > 0 && capped.class_bytes[1] == 6u << 20);
}

static void test_ecn_per_class(void **state) {
  (void)state;
  char buf[1024];
  run_setup s;
  be_stats st;
  snprintf(buf, sizeof buf,
           "fabric.transport: roce\n"
           "fabric.classes: [{id: 1, name: low, ecn: {kmin: 5KB, kmax: 10KB}}, {id: 2, name: "
           "high, ecn: {kmin: 50MB, kmax: 60MB}}]\n"
           "jobs:\n"
           "  - {name: a, gpus: 2, placement: explicit, nodes: [0, 7], traffic_class: low,\n"
           "     workload: {kind: traffic, traffic: {pattern: pair, size: 4MiB}}}\n"
           "  - {name: b, gpus: 2, placement: explicit, nodes: [1, 8], traffic_class: high,\n"
           "     workload: {kind: traffic, traffic: {pattern: pair, size: 4MiB}}}\n");
  run(&s, &st, "packet", buf);
  assert_true(st.class_ecn_marks[1] > 0);
  assert_int_equal(st.class_ecn_marks[2], 0);
  assert_int_equal(st.ecn_marks, st.class_ecn_marks[1]);
  run_setup_free(&s);
}

/* Job incast (node 8 and two of leaf 0 into node 0) fills leaf 0; its
 * packets from node 8 stuck at the spine's input hold it over the
 * threshold: leaf 0 PAUSEs the spine, where job other's ring (nodes 3 and
 * 9, one direction through the spine into leaf 0) has packets queued. */
static void test_pause_victims(void **state) {
  (void)state;
  run_setup s;
  be_stats st;
  run(&s, &st, "packet",
      "fabric.transport: roce\nfabric.switch.buffer: 2MB\nfabric.roce.cc: none\n"
      "jobs:\n"
      "  - {name: incast, gpus: 4, placement: explicit, nodes: [0, 1, 2, 8],\n"
      "     workload: {kind: traffic, traffic: {pattern: incast, senders: 3, size: 4MiB}}}\n"
      "  - {name: other, gpus: 2, placement: explicit, nodes: [3, 9],\n"
      "     workload: {kind: collective, collective: {op: allreduce, size: 8MiB, algorithm: ring, "
      "channels: 1}}}\n");
  const be_job_pauses *p = &s.jobs.pauses;
  assert_true(s.jobs.have_pauses);
  assert_int_equal(p->njobs, 2);
  assert_true(p->caused[0] > 0 && p->paused[0] > 0);
  assert_true(p->pauses[0 * 2 + 1] > 0);                            /* incast's stopped other's */
  assert_true(p->flows[0 * 2 + 1] >= p->pauses[0 * 2 + 1]);         /* at least one flow each */
  assert_int_equal(p->pauses[0 * 2 + 0] + p->pauses[1 * 2 + 1], 0); /* none of its own */
  assert_true(s.jobs.v[1].slowdown > 1.2);
  assert_int_equal(p->caused[0] + p->caused[1], st.pfc_pauses);
  run_setup_free(&s);
}

/* A training job's collectives and a collective job carry their jobs'
 * classes: the bytes each class carried are the jobs' (analytic, which
 * counts bytes per class too), nothing on class 0. */
static void test_jobs_carry_class(void **state) {
  (void)state;
  run_setup s;
  be_stats st;
  run(&s, &st, "analytic",
      "fabric.classes: [{id: 3, name: train}, {id: 5, name: coll}]\n"
      "jobs:\n"
      "  - {name: t, gpus: 4, placement: explicit, nodes: [0, 1, 2, 3], traffic_class: train,\n"
      "     workload: {kind: training, model: {layers: 2, hidden: 1024, heads: 8, seq_len: 512, "
      "vocab: 1000}, parallel: {tp: 1, pp: 1, zero: 1}, micro_batch: 1, global_batch: 8, "
      "bucket_size: 4MiB, steps: 1}}\n"
      "  - {name: c, gpus: 2, placement: explicit, nodes: [7, 8], traffic_class: coll,\n"
      "     workload: {kind: collective, collective: {op: allreduce, size: 8MiB}}}\n");
  assert_true(s.jobs.v[0].finished && s.jobs.v[1].finished);
  assert_true(st.class_bytes[3] > 0 && st.class_bytes[5] > 0);
  assert_int_equal(st.class_bytes[0], 0);
  uint64_t sum = 0;
  for (int k = 0; k < 8; k++) sum += st.class_bytes[k];
  assert_true(sum == st.bytes);
  run_setup_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_weights_flow),           cmocka_unit_test(test_weights_packet),
      cmocka_unit_test(test_strict_priority_packet), cmocka_unit_test(test_explicit_defaults),
      cmocka_unit_test(test_lossless_lossy_incast),  cmocka_unit_test(test_ecn_per_class),
      cmocka_unit_test(test_pause_victims),          cmocka_unit_test(test_classes_timed),
      cmocka_unit_test(test_jobs_carry_class),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
