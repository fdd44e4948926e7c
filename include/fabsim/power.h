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
} pwr_model;

/* From a loaded scenario and its topology's inventory. SIM_ECONFIG (located
 * via doc) for a utilization outside 0..1. */
int pwr_init(pwr_model *m, const cfg_scenario *cfg, const cfg_doc *doc, const topo_inventory *inv,
             sim_error *err);
void pwr_free(pwr_model *m);

/* Override one rack's limit in kW (e.g. a cooling failure); <= 0 lifts it. */
void pwr_set_rack_limit(pwr_model *m, uint32_t rack, double kw);

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

#ifdef __cplusplus
}
#endif
#endif
