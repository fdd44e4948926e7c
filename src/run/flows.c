/* The per-flow log (output.flows): the telemetry tap's rows (tel_tap_flows)
 * with what the edge needs to name them, and the event that says when
 * output.max_flows left rows out (as output.max_events does for events). */
#include <stdio.h>

#include "run/run_internal.h"

void run_flows_collect(run_flows *f, const run_setup *s, run_events *log) {
  const cfg_scenario *cfg = &s->cfg;
  *f = (run_flows){.on = cfg->output.flows, .cfg = cfg};
  if (!f->on || !s->tel.tap) return;
  simtime_ps from, to;
  f->v = tel_tap_flows(s->tel.tap, &f->n, &f->left, &from, &to);
  topo_split split = topo_split_of(cfg);
  f->spread = split == TOPO_SPLIT_POOLS ||
              (split == TOPO_SPLIT_ADAPTIVE && cfg->simulation.fidelity == CFG_FIDELITY_PACKET);
  if (s->jobs.n) f->job_of_gpu = run__job_of_gpu(&s->jobs, s->t);
  if (!f->left) return;
  char detail[256];
  snprintf(detail, sizeof detail,
           "%llu more transfers, starting from %.6g s to %.6g s, are not in flows.csv: "
           "output.max_flows is %u; raise it to keep them",
           (unsigned long long)f->left, sim_ps_to_s(from), sim_ps_to_s(to), cfg->output.max_flows);
  run_event_insert(log, from, "fabsim", "flows-truncated", detail);
}

void run_flows_free(run_flows *f) {
  sim_free(f->job_of_gpu);
  *f = (run_flows){0};
}
