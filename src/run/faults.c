/* The faults of a run (fabsim/run.h): when each network fault was active,
 * for the root cause, and the scheduler's log into the run's; both read the
 * scheduler's log, whose lines name the fault they belong to. */
#include <string.h>

#include "fabsim/run.h"

static bool is_up(cfg_fault_kind k) {
  return k == CFG_FAULT_LINK_UP || k == CFG_FAULT_SWITCH_UP || k == CFG_FAULT_NIC_UP;
}

uint32_t run_fault_windows(const flt_sched *fs, const flt_fault *f, uint32_t n,
                           run_fault_window *out) {
  /* slot i: fault i's window, open from the event that applied it */
  run_fault_window *win = sim_calloc(n ? n : 1, sizeof *win);
  bool *open = sim_calloc(n ? n : 1, sizeof *open);
  size_t nev = fs ? flt_sched_event_count(fs) : 0;
  for (size_t k = 0; k < nev; k++) { /* in time order */
    const flt_event *e = flt_sched_event(fs, k);
    if (e->fault >= n || !strcmp(e->kind, "reroute")) continue;
    const cfg_fault *c = &f[e->fault].spec;
    if (!cfg_fault_is_network(c->kind)) continue;
    if (is_up(c->kind)) { /* ends every earlier window of its target */
      for (uint32_t i = 0; i < n; i++) {
        run_fault_window *w = &win[i];
        if (open[i] && w->at < e->at && !strcmp(w->component, c->target) &&
            (!w->until_set || e->at < w->until)) {
          w->until = e->at;
          w->until_set = true;
        }
      }
      continue;
    }
    run_fault_window *w = &win[e->fault];
    if (!open[e->fault]) { /* applied */
      open[e->fault] = true;
      *w = (run_fault_window){
          .at = e->at, .component = c->target, .kind = cfg_fault_kind_name(c->kind)};
      if (c->kind == CFG_FAULT_LINK_FLAP) { /* the episode: up for good after the last down */
        w->until = e->at + (simtime_ps)(c->count - 1) * c->period + c->duration;
        w->until_set = true;
      }
    } else if (!strcmp(e->kind, "recover") && (!w->until_set || e->at < w->until)) {
      w->until = e->at; /* after its duration */
      w->until_set = true;
    }
  }
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    if (open[i]) out[m++] = win[i];
  sim_free(win);
  sim_free(open);
  return m;
}

/* A line the scheduler logged for a GPU fault (its kind, or its recovery). */
static bool gpu_fault_line(const flt_event *e, const flt_fault *f, uint32_t n) {
  return e->fault < n && !cfg_fault_is_network(f[e->fault].spec.kind);
}

void run_fault_log(const flt_sched *fs, const flt_fault *f, uint32_t n, bool job_logs_gpu,
                   run_events *log) {
  for (size_t i = 0; i < flt_sched_event_count(fs); i++) {
    const flt_event *e = flt_sched_event(fs, i);
    if (job_logs_gpu && gpu_fault_line(e, f, n)) continue;
    run_event_add(log, e->at, e->component, e->kind, e->effect);
  }
}
