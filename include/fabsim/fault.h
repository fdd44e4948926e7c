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
  cfg_fault spec;  /* as written (spec.target still the name) */
  uint32_t link;   /* link kinds, nic kinds: the link; else UINT32_MAX */
  uint32_t vertex; /* switch kinds: the switch; nic kinds: the NIC vertex */
  uint32_t gpu;    /* gpu kinds: the GPU; node-fail: the node's first GPU */
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

/* ---- the scheduler --------------------------------------------------------- */

typedef struct flt_sched flt_sched; /* opaque */

/* One line of the scheduler's event log. */
typedef struct flt_event {
  simtime_ps at;
  char component[48]; /* element as `fabsim topo` names it (leaf0-spine0, gpu3) */
  const char *kind;   /* static: a fault kind, "reroute", "recover", "transfer-failed" */
  char effect[200];   /* what happened, measured ("rerouted 37 flows") */
  double value;       /* the figure of the effect (flows moved, factor, bytes), or 0 */
  uint32_t fault;     /* index into the scheduled list of the fault this is (a reroute: the
                         fault that asked for it); FLT_NO_FAULT: a failed transfer */
} flt_event;
#define FLT_NO_FAULT UINT32_MAX

/* Schedule every fault of f[0..n) as engine events on sim (n may be 0: the
 * scheduler then only records transfer failures). Must be called before the
 * workload submits anything, at time 0: the scheduler's events are inserted
 * first, so a fault at time T acts before any workload event at T (events
 * order by time, then insertion); faults at one time act in list order.
 *
 * Network kinds: the physical change reaches the backend at once through
 * ops->link_state (switch-down: every link of the switch; nic-down: the
 * NIC's link to its leaf; link-flap: `count` down/up cycles; a `duration`
 * schedules the matching recovery). A link is down while any fault holds it
 * down. Routing follows cfg->reliability.reconvergence later: ops->reroute
 * over the physical state at that moment (one reroute per instant). Degraded
 * links keep their routes (routing does not see a lower rate or errors).
 * be must offer link_state and reroute when any network fault is given
 * (SIM_ENOTSUP otherwise; cfg_load refuses that at the analytic fidelity).
 *
 * GPU kinds call hooks (see flt_sched_set_hooks): slowdown(factor) and, after
 * a duration, slowdown(1.0); fail(gpu, whole_node) for gpu-fail and
 * node-fail (gpu = the node's first GPU); sdc(gpu). A hook must not call
 * back into the scheduler. Without hooks the event is still logged, marked
 * as having no effect on the run.
 *
 * The scheduler sets be->on_failure (it owns that slot): every failed
 * transfer is counted and logged (the first FLT_LOG_FAILURES individually,
 * the rest summed at flt_sched_finish). Unroutable faults are impossible
 * here: f comes from flt_resolve. Cost: O(n + flap cycles) events; each
 * reroute costs what the backend's reroute costs. */
flt_sched *flt_sched_start(sim_ctx *sim, const topo *t, be_backend *be, const flt_fault *f,
                           uint32_t n, const cfg_scenario *cfg, const flt_gpu_hooks *hooks,
                           sim_error *err);
/* Replace the GPU hooks (the workload may register them after start, before
 * the run). NULL: none. */
void flt_sched_set_hooks(flt_sched *s, const flt_gpu_hooks *hooks);
enum { FLT_LOG_FAILURES = 32 };
/* After the run: adds the summary of failures not logged one by one. */
void flt_sched_finish(flt_sched *s);
size_t flt_sched_event_count(const flt_sched *s);
const flt_event *flt_sched_event(const flt_sched *s, size_t i); /* in time order */
uint64_t flt_sched_failures(const flt_sched *s);                /* transfers reported failed */
void flt_sched_free(flt_sched *s);

#ifdef __cplusplus
}
#endif
#endif
