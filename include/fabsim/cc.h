/* Congestion control of a queue pair's sender (the reaction point) behind a
 * small vtable, so that DCQCN, and later HPCC, Swift or a UEC-style sender,
 * plug into the packet fidelity the same way.
 *
 * Contract
 *   The transport owns one cc_state per queue pair (inline, no allocation)
 *   and asks for the rate in force each time it paces a packet; signals
 *   (CNPs, ACKs) are fed in as they arrive. A model keeps its timers lazily:
 *   rate() catches up every timer that fell due since the last call, so no
 *   model schedules events of its own. Everything is deterministic: same
 *   calls, same rates, bit for bit.
 *
 * Cost: rate() is on the per-packet path and must be O(1) amortized.
 */
#ifndef FABSIM_CC_H
#define FABSIM_CC_H

#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CC_STATE_BYTES = 96 };

/* Per-model parameters, shared by every queue pair of a backend. */
typedef struct cc_params {
  rate_bps line; /* reference port rate the DCQCN steps scale from */
  /* DCQCN (Zhu et al., SIGCOMM 2015), defaults from MODEL-INPUTS.md */
  double g;                   /* alpha gain, 1/256 */
  simtime_ps alpha_period;    /* alpha update, 1 us */
  simtime_ps decrease_period; /* at most one rate decrease per 4 us */
  simtime_ps increase_period; /* rate-increase timer, 300 us */
  uint32_t fast_recovery;     /* F: fast-recovery stages, 1 */
  rate_bps rai, rhai, rmin;   /* additive 5 Mb/s, hyper 50 Mb/s per 25 Gb/s; min 1 Gb/s */
} cc_params;

/* Opaque per-queue-pair state, owned by the caller. */
typedef struct cc_state {
  _Alignas(8) unsigned char b[CC_STATE_BYTES];
} cc_state;

typedef struct cc_ops {
  const char *name;
  /* Required. */
  void (*init)(cc_state *s, const cc_params *p, rate_bps max_rate, simtime_ps now);
  /* Rate in force at `now` (1 <= rate <= max_rate). Calls must come with
   * non-decreasing `now`. */
  rate_bps (*rate)(cc_state *s, const cc_params *p, simtime_ps now);
  /* Optional signals (NULL: ignored). */
  void (*on_cnp)(cc_state *s, const cc_params *p, simtime_ps now);
  void (*on_ack)(cc_state *s, const cc_params *p, simtime_ps now, uint64_t bytes, bool ecn);
} cc_ops;

/* No congestion control: always max_rate. */
extern const cc_ops cc_none_ops;
/* DCQCN reaction point. */
extern const cc_ops cc_dcqcn_ops;

/* The model called `name` ("none", "dcqcn"), or NULL. */
const cc_ops *cc_by_name(const char *name);
/* MODEL-INPUTS defaults, increase steps scaled to `line` (x line / 25 Gb/s). */
void cc_defaults(cc_params *p, rate_bps line);

/* DCQCN introspection for tests: current and target rate (bits/s) and alpha. */
void cc_dcqcn_peek(const cc_state *s, double *rc, double *rt, double *alpha);

#ifdef __cplusplus
}
#endif
#endif
