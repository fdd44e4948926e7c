/* fabsim power and cooling: IT and facility power of a cluster and its fabric,
 * energy and cost per step and per run, and racks that throttle their GPUs
 * when they draw more than their cooling capacity or power cap.
 *
 * Model (sources and assumptions: docs/reliability.md, "Power and cooling")
 *   GPU      idle + u x (TDP - idle) watts at utilization u in [0, 1]
 *   server   gpus_per_node GPUs + nic.per_node NICs x nic_w + node_w
 *   fabric   switches x switch_radix x switch_port_w + transceivers x transceiver_w
 *   facility IT x PUE
 *   racks    power.rack.servers servers each (the last one may hold fewer); the
 *            fabric's switches sit in network racks outside this model.
 *   throttle a rack whose demand exceeds its limit L = min(cooling, cap) cuts
 *            GPU power until it fits: each GPU gets p' = (L - non-GPU power) /
 *            GPUs; with throughput proportional to clock and dynamic power to
 *            clock^3 (voltage tracks clock), the GPU runs at factor
 *            f = cbrt((p' - idle) / (p - idle)), clamped to [PWR_MIN_THROTTLE, 1].
 *
 * A pwr_model is owned by the caller (pwr_init / pwr_free) and immutable but
 * for pwr_set_rack_limit; any number of readers may share it.
 */
#ifndef FABSIM_POWER_H
#define FABSIM_POWER_H

#include "fabsim/config.h"
#include "fabsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PWR_MIN_THROTTLE 0.1 /* a rack that cannot even idle its GPUs runs them at this */

typedef struct pwr_model {
  /* public, read-only */
  uint32_t nodes, gpus_per_node, nics_per_node, rack_nodes, racks;
  double gpu_tdp_w, gpu_idle_w, node_w, nic_w;
  double switch_w, optics_w; /* whole fabric */
  uint64_t switches, transceivers;
  double pue, usd_per_kwh;
  /* private: per-rack limit in watts (INFINITY = none) */
  double *rack_limit_w;
  double rack_cap_w; /* power.rack.cap_kw in watts (INFINITY = none) */
} pwr_model;

/* From a loaded scenario and its topology's inventory. SIM_ECONFIG (located
 * via doc) for a utilization outside 0..1. */
int pwr_init(pwr_model *m, const cfg_scenario *cfg, const cfg_doc *doc, const topo_inventory *inv,
             sim_error *err);
void pwr_free(pwr_model *m);

/* Override one rack's cooling limit in kW (e.g. a cooling failure; the rack's power cap, if
 * lower, still holds); <= 0 lifts it. */
void pwr_set_rack_limit(pwr_model *m, uint32_t rack, double kw);

/* What sets rack r's limit: "power cap" when power.rack.cap_kw is the lower (or the only)
 * one, else "cooling" (its cooling, reduced or not): a cap and cooling are told apart in
 * every message (issue 32). */
const char *pwr_rack_limit_name(const pwr_model *m, uint32_t rack);

/* Power of one GPU at utilization u, unthrottled. */
double pwr_gpu_w(const pwr_model *m, double u);
/* Servers in rack r. */
uint32_t pwr_rack_nodes(const pwr_model *m, uint32_t rack);
/* Demand of rack r at utilization u, watts, before throttling. */
double pwr_rack_demand_w(const pwr_model *m, uint32_t rack, double u);
/* Throughput factor of rack r's GPUs at utilization u: 1 unless over its limit. */
double pwr_rack_throttle(const pwr_model *m, uint32_t rack, double u);
/* Per-GPU throttle factors (GPU g is in node g / gpus_per_node, rack node /
 * rack_nodes) into out[0 .. n-1]; GPUs beyond the cluster get 1. O(n). */
void pwr_gpu_throttle(const pwr_model *m, double u, double *out, uint32_t n);

typedef struct pwr_summary {
  double gpu_kw, server_kw, nic_kw, switch_kw, optics_kw; /* delivered, after throttling */
  double it_demand_kw;                                    /* before throttling */
  double it_kw, facility_kw;
  double energy_kwh_per_step, cost_usd_per_step;
  double energy_mwh_per_run, cost_usd_per_run;
  uint32_t racks, racks_throttled;
  double min_throttle; /* smallest rack factor */
} pwr_summary;

/* Everything at utilization u for a step of step_s seconds and a run of run_s
 * seconds (the cluster drawing the same power throughout). O(racks). */
void pwr_summarize(const pwr_model *m, double u, double step_s, double run_s, pwr_summary *s);

/* ---- power over time (src/power/series.c) -------------------------------------------
 *
 * Rows of a sampled run (fabsim/telemetry.h): row i starts at start_s[i] and lasts len_s[i]
 * (rows are contiguous; only the last may be shorter), its GPUs computing compute[i] of their
 * GPU-time. A GPU computing draws TDP and any other state (communicating, waiting, idle,
 * checkpointing, down) draws gpu_idle_w: the model of pwr_summarize, so row i's GPUs draw
 * idle + compute[i] x (TDP - idle) x f^3 each, f their rack's throttle factor as the run
 * decided it (pwr_rack_throttle at throttle_u: a throttled GPU computes slower, so longer,
 * at less power), and a flat load gives pwr_summarize's figure at throttle_u. NICs,
 * switches, optics and servers draw their constant power (the model has no per-bit
 * energy). */
typedef struct pwr_series_in {
  size_t rows;
  const double *start_s, *len_s, *compute;
  const double *waiting; /* of GPU-time waiting on the network or a pipeline peer (exposed
                            communication and bubbles: what pacing fills); NULL: none */
  double throttle_u;     /* the utilization the run's racks were throttled at; < 0: none was */
  size_t steps;          /* training steps [step_begin_s, step_end_s); 0: the run is one */
  const double *step_begin_s, *step_end_s;
  size_t bands; /* spectrum bands [band_lo_hz, band_hi_hz) */
  const double *band_lo_hz, *band_hi_hz;
} pwr_series_in;

typedef struct pwr_over_time {
  double peak_kw, trough_kw, mean_kw, energy_kwh; /* facility power; energy = sum P x len */
  /* swing: peak - trough of the rows whose midpoint lies in a step, over steps with at
   * least two rows (steps_resolved of them): the mean and the largest; NAN when none */
  double swing_mean_kw, swing_max_kw;
  size_t steps_resolved;
  /* ramp: max over consecutive rows of |P[i+1] - P[i]| / ((len[i] + len[i+1]) / 2), kW/s:
   * the change of the rows' mean power over the time between their midpoints; 0 for one row */
  double ramp_kw_per_s;
  /* spectrum of the full-length rows (the short last row left out), mean removed */
  size_t dft_rows;
  double resolution_hz, nyquist_hz; /* 1 / (dft_rows x interval), 1 / (2 x interval) */
  double variance_kw2;              /* of those rows: the sum over every bin */
} pwr_over_time;

/* Row i's facility, IT and GPU power into facility_kw[i], it_kw[i], gpu_kw[i] (each may be
 * NULL) and the figures above into *out; band_rms_kw[b] (in->bands entries, may be NULL
 * when there are none): the RMS of the facility power's components in band b (the square
 * root of pwr_band_power), NAN for a band with no bin below the Nyquist frequency.
 * O(rows x bins in the bands) for the spectrum (a direct DFT of those bins only), O(rows)
 * for the rest; allocates O(rows). */
void pwr_over_time_of(const pwr_model *m, const pwr_series_in *in, double *facility_kw,
                      double *it_kw, double *gpu_kw, pwr_over_time *out, double *band_rms_kw);

/* ---- mitigations (src/power/mitigate.c) ---------------------------------------------
 *
 * Each read alone over the series of pwr_over_time_of (docs/power.md; Choukse et al., "Power
 * Stabilization for AI Training Datacenters", arXiv 2508.14318, 2025: software pacing, the GPU
 * power smoothing feature's floor and ramp rates, energy storage), with g[i] row i's GPU watts,
 * G the GPUs, idle / dyn the cluster's GPU watts idle and added at full compute:
 *   floor    every GPU draws at least F: c max(idle + dyn, G F) + (1 - c) max(idle, G F)
 *   pacing   GPUs waiting (network, bubble) draw P: g + waiting x G x max(0, P - idle / G)
 *   ramp     s[i] = clamp(g[i], s[i-1] - G Rdown dt, s[i-1] + G Rup dt), dt = (len[i-1] +
 *            len[i]) / 2: a fall held up burns energy, a rise held down slows the compute
 *   cap      s[i] = min(g[i], cap / PUE - rest of IT)
 *   battery  per rack E kWh, P kW, round trip eta, on IT power: above the run's mean it
 *            discharges, below it charges (eta of what it takes is stored); starts full
 * A row clipped below its demand (ramp, cap) computes at f = cbrt((s - idle) / (c dyn)) (the
 * racks' cubic power-performance curve), clamped to [PWR_MIN_THROTTLE, 1]: its compute takes
 * c len / f, so the row lasts len + c len (1 / f - 1) (the step-time cost) and uses
 * PUE x ((idle + rest) x that + c dyn f^2 len). */
typedef struct pwr_mitigation_cfg {
  double floor_w, pacing_w;                           /* per GPU, 0 = none */
  double ramp_up_w_per_s, ramp_down_w_per_s;          /* per GPU, 0 = no limit */
  double facility_cap_kw;                             /* 0 = none */
  double battery_kwh, battery_kw, battery_efficiency; /* per rack; kwh 0 = none, kw 0 = no limit */
} pwr_mitigation_cfg;

typedef enum {
  PWR_MIT_FLOOR,
  PWR_MIT_PACING,
  PWR_MIT_RAMP,
  PWR_MIT_BATTERY,
  PWR_MIT_CAP,
  PWR_MIT_N
} pwr_mit_kind;
const char *pwr_mit_name(pwr_mit_kind k); /* "floor", "pacing", "ramp", "battery", "cap" */
/* Whether c sets mitigation k. */
bool pwr_mit_on(const pwr_mitigation_cfg *c, pwr_mit_kind k);
/* The scenario's power.mitigation.* in watts and kW. */
void pwr_mitigation_cfg_of(const pwr_model *m, const cfg_scenario *cfg, pwr_mitigation_cfg *out);

typedef struct pwr_mitigated {
  pwr_over_time after;     /* the mitigated facility series' figures (rows at their own times) */
  double energy_kwh;       /* facility energy with the clipped rows stretched */
  double energy_added_kwh; /* energy_kwh - the series' before (battery: its round-trip loss) */
  double time_cost_s;      /* sum over rows of c len (1 / f - 1) */
  double min_throttle;     /* smallest f of a clipped row (1: none) */
  bool cap_met;            /* false: a row stayed above the cap at PWR_MIN_THROTTLE or idle */
  /* battery: IT energy, kWh, whole cluster */
  double capacity_kwh, charged_kwh, discharged_kwh, losses_kwh, soc_min_kwh, soc_end_kwh;
} pwr_mitigated;

/* Mitigation k over the rows of in (its bands and steps as pwr_over_time_of reads them):
 * the mitigated facility power of row i into facility_kw[i] (may be NULL) and the figures
 * into *out (band_rms_kw: as pwr_over_time_of's, may be NULL). O(rows) besides the bands. */
void pwr_mitigate(const pwr_model *m, const pwr_series_in *in, const pwr_mitigation_cfg *c,
                  pwr_mit_kind k, double *facility_kw, pwr_mitigated *out, double *band_rms_kw);

/* The one-sided power spectrum of x[0..n-1] (sampled every dt seconds, its mean removed)
 * summed over the bins k = 1 .. n/2 whose frequency k / (n dt) lies in [lo, hi): by
 * Parseval the sum over every bin is the variance of x, and a sinusoid of amplitude A at a
 * bin's frequency gives A^2 / 2 in its band. *bins: how many bins the band held. O(n x
 * bins). */
double pwr_band_power(const double *x, size_t n, double dt, double lo, double hi, size_t *bins);

#ifdef __cplusplus
}
#endif
#endif
