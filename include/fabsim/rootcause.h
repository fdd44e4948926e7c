/* fabsim root cause: the operator's view of a run with faults
 * (src/reliability/rootcause.c).
 *
 * Failure cost: the simulated window is taken to start right after a
 * checkpoint completed; the job writes a checkpoint (stalling delta) after
 * every tau of compute. A failure at t (seconds into the window) is
 * phase = t mod (tau + delta) after the last completed checkpoint and loses
 * the compute done since, min(phase, tau) (a checkpoint being written when
 * the failure strikes is lost with it). Restart cost = restart time +
 * recomputing the lost work. Over a failure time uniform in the cycle the
 * expected lost work is (tau^2 / 2 + tau delta) / (tau + delta).
 *
 * SDC detection: replica checksums compared after every K-th step (steps
 * counted from 1): a corruption that makes replicas diverge in step d is
 * detected at the end of step ceil(d / K) x K; never when K = 0.
 *
 * Attribution: each step of the run against the same step of the same
 * scenario without faults (simulated alongside). The time above that
 * baseline goes first to slowed GPUs (the stage's compute increase: a
 * synchronous job waits for its slowest member, so every other GPU waits
 * that long in its next collective; in a pipeline the stages by decreasing
 * increase, each up to its increase, since the slowest sets the pace), the
 * rest to the network faults active during the step (exposed
 * communication), or to "other" when none is; where the fabric's PFC pauses
 * and ECN marks were observed, the step's against its baseline's are quoted
 * with it (a symptom, not a separate cause).
 * Pure functions; no simulation state.
 */
#ifndef FABSIM_ROOTCAUSE_H
#define FABSIM_ROOTCAUSE_H

#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rel_failure_cost {
  double at_s, interval_s, write_s, restart_s;
  double since_checkpoint_s;   /* wall time since the last completed checkpoint */
  double lost_work_s;          /* compute lost: min(phase, tau) */
  double expected_lost_work_s; /* over a failure time uniform in the cycle */
  double restart_cost_s;       /* restart_s + lost_work_s (recompute) */
  double lost_gpu_hours;       /* lost_work_s x gpus / 3600 */
} rel_failure_cost;

void rel_failure_cost_of(double at_s, double tau, double delta, double restart_s, uint32_t gpus,
                         rel_failure_cost *out);

/* Step (1-based) at whose end a divergence in step `diverge_step` (1-based)
 * is detected with checks every `every` steps; 0 = never (every = 0). */
uint64_t rel_sdc_detect_step(uint64_t diverge_step, uint32_t every);

/* One step as measured (faulted run or baseline). Arrays borrowed. */
typedef struct rel_rc_step {
  double start_s, time_s;
  const double *stage_compute_s, *stage_exposed_s; /* nstages each */
  uint32_t nstages;
  bool fabric;         /* the counters below were observed (packet fidelity) */
  double pfc_paused_s; /* egress queue time paused by PFC during the step */
  uint64_t ecn_marks;
} rel_rc_step;

/* A GPU running slow over [at_s, until_s) (until_s < 0: to the end). */
typedef struct rel_rc_slow {
  double at_s, until_s, factor;
  uint32_t gpu, node, rack, stage;
  bool thermal;
  bool power_cap; /* thermal: the rack's power cap binds, not its cooling */
} rel_rc_slow;

/* A network fault (or other timed event) that may explain exposed
 * communication: active over [at_s, until_s) (until_s < 0: to the end). */
typedef struct rel_rc_net {
  double at_s, until_s;
  const char *component, *kind; /* borrowed */
} rel_rc_net;

typedef struct rel_rc_input {
  const rel_rc_step *run, *base;
  uint32_t nrun, nbase;
  const rel_rc_slow *slow;
  uint32_t nslow;
  const rel_rc_net *net;
  uint32_t nnet;
  uint32_t gpus;         /* in the job */
  const char *wait_in;   /* where the others wait, e.g. "dp_allreduce" */
  double threshold_frac; /* steps with less excess are left out (e.g. 0.001) */
} rel_rc_input;

/* One cause of a slow step's excess time. */
typedef struct rel_rc_cause {
  char component[64]; /* gpuN, a network fault's target, or "job" */
  const char *kind;   /* static: gpu-slowdown, thermal-throttle, a fault kind, other */
  double effect_s;
  char text[512];
} rel_rc_cause;

/* A step whose time exceeds its baseline by more than threshold_frac. */
typedef struct rel_rc_entry {
  uint32_t step;  /* 1-based */
  uint32_t index; /* 0-based, into in->run */
  double start_s, time_s, baseline_s, excess_s, excess_frac;
  char text[1100];      /* "step k +x %: " and the causes joined by "; " */
  rel_rc_cause *causes; /* owned */
  uint32_t ncauses;
} rel_rc_entry;

typedef struct rel_rc_result {
  rel_rc_entry *v; /* owned */
  uint32_t n;
} rel_rc_result;

/* Each step of in->run whose time exceeds its baseline by more than
 * threshold_frac, with its causes (largest GPU stage first, then the network
 * or "other"). Free with rel_rc_result_free. O(steps x (stages + slow + net)). */
void rel_root_cause(const rel_rc_input *in, rel_rc_result *out);
void rel_rc_result_free(rel_rc_result *r);

#ifdef __cplusplus
}
#endif
#endif
