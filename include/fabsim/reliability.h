/* fabsim reliability planning over a whole training run.
 *
 * A job on N nodes fails as a Poisson process of rate lambda = N x r, where r
 * (per node) is the sum of per-cause rates; MTTF = 1 / lambda. The job writes
 * a checkpoint (stalling delta seconds) after every tau seconds of compute;
 * an interruption loses the work since the last checkpoint and costs a
 * restart. This module gives the classic intervals (Young, Daly), an exact
 * closed form for the effective training time ratio (ETTR) of that model, a
 * seeded Monte Carlo of whole runs with a 95 % confidence interval, and the
 * effect of hot spare nodes (an Erlang loss system: spares are servers, node
 * repair is the service time).
 *
 * Units: seconds (double) throughout; this is planning arithmetic over weeks,
 * not simulated time. No state beyond the structs the caller owns.
 */
#ifndef FABSIM_RELIABILITY_H
#define FABSIM_RELIABILITY_H

#include "fabsim/config.h"
#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Interruption causes, in the order of Meta's Llama 3 report (Table 5). */
typedef enum {
  REL_GPU,
  REL_HBM,
  REL_SOFTWARE,
  REL_NETWORK,
  REL_HOST,
  REL_SRAM,
  REL_GSP,
  REL_NIC,
  REL_NCCL,
  REL_SDC,
  REL_THERMAL,
  REL_OTHER_HARDWARE,
  REL_DEPENDENCY,
  REL_CAUSES
} rel_cause;

/* Scaling of a cause's rate with the node's make-up. */
typedef enum { REL_PER_NODE, REL_PER_GPU, REL_PER_NIC } rel_scope;

typedef struct rel_cause_info {
  const char *key;   /* the reliability.rate.<key> suffix and JSON name */
  const char *label; /* for tables */
  rel_scope scope;   /* default rates are per 8-GPU, 8-NIC node */
  bool node_swap;    /* the failed node leaves the job (a spare can take its place) */
} rel_cause_info;

const rel_cause_info *rel_cause_at(int cause);

/* Inputs. All public; fill by hand or with rel_params_from_config. */
typedef struct rel_params {
  uint32_t nodes, gpus_per_node;
  double days;
  double rate[REL_CAUSES]; /* interruptions per node per second, after scaling */
  double write_s;          /* checkpoint write stall, delta */
  double interval_s;       /* compute between checkpoints, tau; <= 0 = Daly's */
  double restart_s;
  uint32_t spares;
  double repair_s;         /* a failed node is back in the spare pool after this */
  double no_spare_delay_s; /* extra restart delay of a node swap without a free spare */
  uint32_t runs;           /* Monte Carlo runs; 0 = skip the Monte Carlo */
  uint64_t seed;
} rel_params;

/* From a loaded scenario: per-cause rates scaled by gpus and NICs per node
 * (or reliability.node_failure_rate split in their proportion), checkpoint
 * write time (or size / bandwidth), interval (auto -> 0). `nodes` is the job
 * size. Bad values are SIM_ECONFIG errors located at the key via doc. */
int rel_params_from_config(rel_params *p, const cfg_scenario *cfg, const cfg_doc *doc,
                           uint32_t nodes, sim_error *err);

/* Parse an interval: "auto" -> 0, else a duration > 0 in seconds. */
int rel_parse_interval(const char *text, double *seconds, sim_error *err);

/* ---- closed forms ---------------------------------------------------------- */

/* MTTF of the job, seconds: 1 / (nodes x rate per node per second); INFINITY at rate 0. */
double rel_mttf_s(double nodes, double rate_per_node_s);
/* Young (1974): sqrt(2 delta M). */
double rel_young_s(double delta, double mttf);
/* Daly (2006): sqrt(2 delta M) [1 + (1/3) sqrt(delta/2M) + (1/9)(delta/2M)] - delta
 * for delta < 2M, else M. */
double rel_daly_s(double delta, double mttf);
/* Exact ETTR of the model: failures (rate 1/M) strike during compute and
 * checkpoint writes, never during a restart of mean length R:
 *   ETTR = tau / E[wall time per segment] = tau lambda / ((e^{lambda(tau+delta)} - 1)(1 + lambda
 * R)). At lambda = 0: tau / (tau + delta). */
double rel_ettr(double tau, double delta, double mean_restart, double mttf);
/* Erlang B: probability that all `servers` are busy for offered load a (Poisson
 * arrivals, any service time). 1 when servers = 0. */
double rel_erlang_b(uint32_t servers, double load);

typedef struct rel_result {
  double lambda_per_s, mttf_s;
  double rate_per_node_day;             /* r, interruptions per node per day */
  double expected_total;                /* lambda x days: interruptions over the run */
  double expected_by_cause[REL_CAUSES]; /* sums to expected_total */
  double young_s, daly_s, optimal_s;    /* optimal: maximizes the exact ETTR */
  double interval_s;                    /* the interval used */
  double swap_frac;                     /* share of interruptions that swap a node */
  double p_no_spare;                    /* Erlang B of the spare pool */
  double mean_restart_s;
  double ettr_closed;
  double goodput_frac; /* ETTR x nodes / (nodes + spares) */
  /* Monte Carlo (when runs > 0): mean ETTR over runs and half width of its 95 % CI. */
  uint32_t runs;
  double ettr_mc, ettr_mc_ci95, interruptions_mc;
} rel_result;

/* Closed forms and, when p->runs > 0, the Monte Carlo. O(runs x interruptions
 * per run). Deterministic for p->seed. */
void rel_evaluate(const rel_params *p, rel_result *r);

/* The Monte Carlo alone: `runs` runs of `days`, each a Poisson failure
 * process (time to next failure exponential with mean M, paused while
 * restarting), causes drawn by rate, node-swap causes taking the free spare
 * with the earliest return; writes mean ETTR, CI half width and mean
 * interruptions per run. */
void rel_monte_carlo(const rel_params *p, double interval_s, rel_result *r);

/* ---- at a chosen interval, and over sizes, intervals and spares ---------------- */

/* Checkpoint interval choices besides a duration (seconds > 0). */
enum { REL_IV_AUTO = 0, REL_IV_YOUNG = -1, REL_IV_OPTIMAL = -2 };

/* p evaluated at the interval `choice` (seconds, or REL_IV_*; REL_IV_AUTO:
 * Daly's, as rel_evaluate chooses; an interval that is not a positive
 * number: the whole run): closed forms, then the Monte Carlo at that
 * interval when p.runs > 0. */
void rel_evaluate_at(rel_params p, double choice, rel_result *r);

enum { REL_SWEEP_MAX = 64 };
/* The values a sweep takes: each list empty for the base's own value. */
typedef struct rel_sweep {
  uint32_t gpus[REL_SWEEP_MAX];
  int ngpus;
  double interval[REL_SWEEP_MAX];           /* seconds, or REL_IV_* */
  const char *interval_text[REL_SWEEP_MAX]; /* as given (borrowed) */
  int nintervals;
  uint32_t spares[REL_SWEEP_MAX];
  int nspares;
  char *lists[REL_SWEEP_MAX + 1]; /* the interval lists as given, owned (rel_sweep_free) */
  int nlists;
} rel_sweep;
/* Add one flag's comma-separated list to sw: "--sweep-gpus" (integers
 * >= 1), "--sweep-spares" (integers >= 0) or "--sweep-interval" (durations,
 * auto, young, optimal). SIM_EINVAL, err naming the flag and the list, for
 * anything else or past REL_SWEEP_MAX values. */
int rel_sweep_add(rel_sweep *sw, const char *flag, const char *list, sim_error *err);
void rel_sweep_free(rel_sweep *sw);
/* One row of a sweep: its inputs, its result, its interval as given. */
typedef struct rel_sweep_row {
  rel_params p;
  rel_result r;
  const char *choice; /* "scenario" when the sweep has no intervals */
} rel_sweep_row;
/* Every (GPUs, interval, spares) combination of sw over base, GPUs
 * outermost, into *rows (sim_malloc'd, *n of them; caller frees with
 * sim_free). SIM_EINVAL when a GPU count is not a multiple of
 * base->gpus_per_node (err says which), nothing evaluated. Cost: one
 * rel_evaluate_at per row. */
int rel_sweep_run(const rel_params *base, const rel_sweep *sw, rel_sweep_row **rows, size_t *n,
                  sim_error *err);

#ifdef __cplusplus
}
#endif
#endif
