/* The faults of a run (fabsim/run.h): when each network fault was active,
 * for the root cause, and the scheduler's log into the run's. */
#include <string.h>

#include "fabsim/run.h"

static bool is_up(cfg_fault_kind k) {
  return k == CFG_FAULT_LINK_UP || k == CFG_FAULT_SWITCH_UP || k == CFG_FAULT_NIC_UP;
}

uint32_t run_fault_windows(const flt_fault *f, uint32_t n, run_fault_window *out) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++) {
    const cfg_fault *c = &f[i].spec;
    if (!cfg_fault_is_network(c->kind) || is_up(c->kind)) continue;
    run_fault_window *w = &out[m++];
    *w = (run_fault_window){
        .at = c->at, .component = c->target, .kind = cfg_fault_kind_name(c->kind)};
    if (c->kind == CFG_FAULT_LINK_FLAP) {
      w->until = c->at + (simtime_ps)c->count * c->period;
      w->until_set = true;
    } else if (c->duration) {
      w->until = c->at + c->duration;
      w->until_set = true;
    }
    for (uint32_t k = 0; k < n; k++) { /* an explicit -up entry ends it */
      const cfg_fault *u = &f[k].spec;
      if (is_up(u->kind) && u->at > c->at && !strcmp(u->target, c->target) &&
          (!w->until_set || u->at < w->until)) {
        w->until = u->at;
        w->until_set = true;
      }
    }
  }
  return m;
}

/* A line the scheduler logged for a GPU fault of f: its kind, or the
 * recovery of a GPU target. */
static bool gpu_fault_line(const flt_event *e, const flt_fault *f, uint32_t n) {
  static const char *const kinds[] = {"gpu-slowdown", "gpu-fail", "node-fail", "sdc", "recover"};
  bool kind = false;
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) kind |= !strcmp(e->kind, kinds[i]);
  if (!kind) return false;
  for (uint32_t i = 0; i < n; i++)
    if (!cfg_fault_is_network(f[i].spec.kind) && !strcmp(f[i].spec.target, e->component))
      return true;
  return false;
}

void run_fault_log(const flt_sched *fs, const flt_fault *f, uint32_t n, bool job_logs_gpu,
                   run_events *log) {
  for (size_t i = 0; i < flt_sched_event_count(fs); i++) {
    const flt_event *e = flt_sched_event(fs, i);
    if (job_logs_gpu && gpu_fault_line(e, f, n)) continue;
    run_event_add(log, e->at, e->component, e->kind, e->effect);
  }
}
