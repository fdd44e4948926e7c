/* fabsim faults inside a simulation (src/reliability): the scenario's
 * `faults:` list resolved against the topology, and a scheduler that plays
 * it on a running simulation.
 *
 * Network faults (link down/up/flap/degraded, switch down/up, NIC port
 * down/up) change the physical state at once through the backend's
 * link_state op; routing reconverges after `reliability.reconvergence`
 * (default by transport: subnet-manager recompute on InfiniBand, routing
 * protocol convergence on Ethernet) through the backend's reroute op over a
 * topo_health mask. A fault in one plane of a multi-plane fabric only
 * touches that plane's links.
 *
 * GPU faults (slowdown, GPU or node failure, silent data corruption) are the
 * workload's business: the scheduler calls the hooks the workload registered
 * (flt_gpu_hooks) at the fault's time. A run without a workload that
 * registers hooks still records the event and its effect on transfers.
 *
 * Every fault and its consequence (reroute, transfer failed, job stopped)
 * goes to the scheduler's event log, kept until the run ends and then
 * replayed into the telemetry event log (tel_event).
 */
#ifndef FABSIM_FAULT_H
#define FABSIM_FAULT_H

#include "fabsim/backend.h"
#include "fabsim/config.h"
#include "fabsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One fault with its target resolved: a link, a vertex (switch, NIC) or a
 * GPU index, by kind. */
typedef struct flt_fault {
  cfg_fault spec;      /* as written (spec.target still the name) */
  uint32_t link;       /* link kinds, nic kinds: the link; else UINT32_MAX */
  uint32_t vertex;     /* switch kinds: the switch; nic kinds: the NIC vertex */
  uint32_t gpu;        /* gpu kinds: the GPU; node-fail: the node's first GPU */
} flt_fault;

/* Resolve cfg->faults against t. Unknown names are SIM_ECONFIG located at
 * faults[i].target with a did-you-mean from the topology's names. */
int flt_resolve(flt_fault **out, uint32_t *n, const topo *t, const cfg_scenario *cfg,
                const cfg_doc *doc, sim_error *err);

/* What the workload does when a GPU fault fires. Any hook may be NULL. */
typedef struct flt_gpu_hooks {
  void *ctx;
  void (*slowdown)(void *ctx, simtime_ps now, uint32_t gpu, double factor);
  void (*fail)(void *ctx, simtime_ps now, uint32_t gpu, bool whole_node);
  void (*sdc)(void *ctx, simtime_ps now, uint32_t gpu);
} flt_gpu_hooks;

#ifdef __cplusplus
}
#endif
#endif
