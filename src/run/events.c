/* The run's event log: typed lines with integer-picosecond times, kept in
 * time order (stable) for summary.json, events.csv and the database. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/run.h"

static run_event *slot(run_events *log, size_t pos) {
  sim_grow((void **)&log->v, &log->cap, log->n + 1, sizeof *log->v);
  memmove(&log->v[pos + 1], &log->v[pos], (log->n - pos) * sizeof *log->v);
  log->n++;
  return &log->v[pos];
}

static void fill(run_event *e, simtime_ps at, const char *component, const char *kind,
                 const char *detail) {
  *e = (run_event){.at = at,
                   .component = sim_strdup(component ? component : ""),
                   .kind = kind,
                   .detail = sim_strdup(detail ? detail : "")};
}

void run_event_add(run_events *log, simtime_ps at, const char *component, const char *kind,
                   const char *detail) {
  fill(slot(log, log->n), at, component, kind, detail);
}

size_t run_event_insert(run_events *log, simtime_ps at, const char *component, const char *kind,
                        const char *detail) {
  size_t pos = log->n;
  while (pos > 0 && log->v[pos - 1].at > at) pos--;
  fill(slot(log, pos), at, component, kind, detail);
  return pos;
}

void run_events_sort(run_events *log) {
  /* insertion sort: stable, and the log is nearly sorted */
  for (size_t i = 1; i < log->n; i++)
    for (size_t k = i; k > 0 && log->v[k - 1].at > log->v[k].at; k--) {
      run_event t = log->v[k];
      log->v[k] = log->v[k - 1];
      log->v[k - 1] = t;
    }
}

/* (at, position): a total order that keeps equal times in log order. */
typedef struct ev_key {
  simtime_ps at;
  size_t pos;
} ev_key;

static int key_cmp(const void *a, const void *b) {
  const ev_key *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  return (x->pos > y->pos) - (x->pos < y->pos);
}

void run_events_cap(run_events *log, size_t max) {
  if (max == 0 || log->n <= max) return;
  ev_key *k = sim_malloc(log->n * sizeof *k);
  for (size_t i = 0; i < log->n; i++) k[i] = (ev_key){log->v[i].at, i};
  qsort(k, log->n, sizeof *k, key_cmp);
  run_event *v = sim_malloc((max + 1) * sizeof *v);
  for (size_t i = 0; i < log->n; i++) {
    run_event *e = &log->v[k[i].pos];
    if (i < max) {
      v[i] = *e;
      continue;
    }
    sim_free(e->component);
    sim_free(e->detail);
  }
  size_t left = log->n - max;
  simtime_ps from = k[max].at, to = k[log->n - 1].at;
  sim_free(k);
  sim_free(log->v);
  log->v = v;
  log->n = max;
  log->cap = max + 1;
  char detail[256];
  snprintf(detail, sizeof detail,
           "%zu more events, from %.6g s to %.6g s, are not in the outputs: output.max_events is "
           "%zu; raise it to keep them",
           left, sim_ps_to_s(from), sim_ps_to_s(to), max);
  run_event_add(log, from, "fabsim", "events-truncated", detail);
}

void run_events_free(run_events *log) {
  for (size_t i = 0; i < log->n; i++) {
    sim_free(log->v[i].component);
    sim_free(log->v[i].detail);
  }
  sim_free(log->v);
  memset(log, 0, sizeof *log);
}

size_t run_faults_after_end(const cfg_scenario *cfg, simtime_ps end, bool stopped, run_events *log,
                            uint32_t *idx, const char **detail_of) {
  size_t n = 0;
  for (uint32_t i = 0; i < cfg->faults.n; i++) {
    const cfg_fault *f = &cfg->faults.v[i];
    char at[32], endt[32], detail[512];
    if (f->at < end || (stopped && f->at == end)) continue; /* at `end`: the stop's cause */
    sim_fmt_seconds(at, sizeof at, sim_ps_to_s(f->at));
    sim_fmt_seconds(endt, sizeof endt, sim_ps_to_s(end));
    snprintf(detail, sizeof detail,
             "faults[%u] (%s of %s at %s) came after the workload ended (%s): it had no effect "
             "on it; allowed: faults[%u].at before %s",
             i, cfg_fault_kind_name(f->kind), f->target, at, endt, i, endt);
    size_t pos = run_event_insert(log, f->at, f->target, "fault-after-end", detail);
    idx[n] = i;
    detail_of[n++] = log->v[pos].detail;
  }
  return n;
}

const char *run_idle_nic_warning(const cfg_scenario *cfg, const coll_plan *plan, const topo *t,
                                 run_events *log) {
  uint32_t idle, total;
  uint32_t k = cfg->workload.collective.channels ? cfg->workload.collective.channels
                                                 : cfg->cluster.nic.per_node;
  /* fewer channels than set: NCCL's rule for a small message, not the setup */
  if (cfg->workload.kind != CFG_WORKLOAD_COLLECTIVE || cfg->jobs.n || plan->channels < k)
    return NULL;
  coll_plan_idle_nics(plan, t, &idle, &total);
  if (idle == 0) return NULL;
  char detail[400];
  snprintf(detail, sizeof detail,
           "the %s leaves %u of the %u NICs of its nodes idle (%u channels for %u NICs a node): "
           "it runs below what the nodes can do, where NCCL drives every NIC (a channel a NIC); "
           "workload.collective.channels 0 (one a NIC) or a multiple of cluster.nic.per_node",
           cfg_coll_op_name(plan->op), idle, total, plan->channels,
           topo_nic_count(t) / topo_node_count(t));
  run_event_add(log, 0, "fabric", "warning", detail);
  return log->v[log->n - 1].detail;
}

const char *run_reordering_warning(const cfg_scenario *cfg, run_events *log) {
  cfg_routing r = cfg->fabric.routing;
  if (cfg->simulation.fidelity != CFG_FIDELITY_PACKET ||
      cfg->cluster.nic.recovery != CFG_RECOVERY_GO_BACK_N ||
      (r != CFG_ROUTING_ADAPTIVE && r != CFG_ROUTING_SPRAY))
    return NULL;
  char detail[400];
  snprintf(detail, sizeof detail,
           "cluster.nic.recovery is go-back-n and fabric.routing is %s: packets of one queue pair "
           "take different paths and arrive out of order, and a go-back-n receiver drops each "
           "one and has the window resent (retransmissions without any loss, docs/faults.md); "
           "--set cluster.nic.recovery=selective for NICs with out-of-order placement",
           cfg_routing_name(r));
  run_event_add(log, 0, "fabric", "warning", detail);
  return log->v[log->n - 1].detail;
}
