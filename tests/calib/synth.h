/* Synthetic nccl-tests output from fabsim itself, for the calibration
 * tests (tests/calib/test_fit*.c): header-only, like tests/fixture.h. */
#ifndef FABSIM_TESTS_CALIB_SYNTH_H
#define FABSIM_TESTS_CALIB_SYNTH_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/calib.h"
#include "fixture.h"

/* fabsim's rows of `op` on nodes x per_node H100s under `truth` (--set
 * keys), sizes 8 B to 1 GiB by `factor`, written as nccl-tests prints them
 * and read back (times rounded as nccl-tests rounds them). `env`, when
 * given, is a line put before the output (an NCCL INFO echo of NCCL_ALGO,
 * say). */
static inline void calib_synth_by(cal_run *out, cal_op op, uint32_t nodes, uint32_t per_node,
                                  const char *const *truth, int ntruth, const char *env,
                                  uint64_t factor) {
  const char *sets[32];
  char a[64], b[64];
  int n = 0;
  for (int i = 0; i < ntruth; i++) sets[n++] = truth[i];
  snprintf(a, sizeof a, "cluster.nodes=%u", nodes);
  snprintf(b, sizeof b, "cluster.gpus_per_node=%u", per_node);
  sets[n++] = a;
  sets[n++] = b;
  fixture f;
  load(&f, sets, n);
  cal_run r = {.op = op, .ranks = nodes * per_node, .nodes = nodes, .gpus_per_node = per_node};
  snprintf(r.gpu, sizeof r.gpu, "NVIDIA H100 80GB HBM3");
  r.pt = calloc(32, sizeof *r.pt);
  for (uint64_t bytes = 8; bytes <= (1ull << 30); bytes *= factor) {
    cal_sim s;
    sim_error err = {0};
    if (cal_simulate(f.t, &f.cfg, op, bytes, r.ranks, &s, &err) != SIM_OK) fail_msg("%s", err.msg);
    r.pt[r.n++] = (cal_point){.bytes = bytes, .time_us = s.time_s * 1e6};
  }
  char *table = cal_nccltests_format(&r);
  size_t cap = strlen(table) + (env ? strlen(env) : 0) + 2;
  char *text = malloc(cap);
  snprintf(text, cap, "%s%s%s", env ? env : "", env ? "\n" : "", table);
  sim_free(table);
  char name[64];
  snprintf(name, sizeof name, "%s-%un.txt", cal_op_name(op), nodes);
  sim_error err = {0};
  if (cal_nccltests_parse(out, name, text, strlen(text), CAL_OP_UNKNOWN, &err) != SIM_OK)
    fail_msg("%s\n%s", err.msg, text);
  assert_int_equal(out->op, op);
  assert_int_equal(out->ranks, r.ranks);
  assert_int_equal(out->nodes, nodes);
  assert_int_equal(out->n, r.n);
  for (size_t i = 0; i < r.n; i++) /* nccl-tests' rounding: at most 0.005 us or 0.05% */
    assert_true(fabs(out->pt[i].time_us - r.pt[i].time_us) <= 0.0051 + 5e-4 * r.pt[i].time_us);
  free(text);
  free(r.pt);
  unload(&f);
}

/* The same by 8: 10 rows, enough for a latency and a rate per protocol. */
static inline void calib_synth(cal_run *out, cal_op op, uint32_t nodes, uint32_t per_node,
                               const char *const *truth, int ntruth, const char *env) {
  calib_synth_by(out, op, nodes, per_node, truth, ntruth, env, 8);
}

#endif
