/* A training job's GPU states as telemetry series (fabsim/run.h). */
#include <stdlib.h>
#include <string.h>

#include "fabsim/run.h"
#include "fabsim/telemetry.h"

/* A training job's GPU states: its timeline (wl_job_gpu_timeline) replayed
 * as moves of groups of GPUs. Each stage has two groups: its GPUs slowed at
 * some time (they set the stage's pace, wl_gpu_timeline.slow_gpus) and the
 * rest, which finish each computation early and wait for them (exposed
 * communication: they wait in the next collective, wl_gpu_timeline.wait).
 * Within a bin each group goes compute, exposed communication, bubble, then
 * idle for the rest, the moves of all groups sorted by time; so the series
 * are exact at bin boundaries and the order inside a bin (a few ms in a long
 * run) is lost. A job that stopped on a failure is down from then on. */
typedef struct gpu_move {
  simtime_ps at;
  uint32_t group; /* stage * 2 + (0 slowed GPUs, 1 the others) */
  uint8_t to;
} gpu_move;

static int move_cmp(const void *a, const void *b) {
  const gpu_move *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  return x->group < y->group ? -1 : x->group > y->group;
}

void run_job_gpu_series(tel *tl, const wl_job *job, simtime_ps end) {
  static const tel_gpu_state state_of[WL_GPU_STATES + 1] = {TEL_GPU_COMPUTE, TEL_GPU_NETWORK,
                                                            TEL_GPU_BUBBLE, TEL_GPU_IDLE};
  wl_gpu_timeline g;
  wl_job_gpu_timeline(job, &g);
  if (!g.nstages || !g.gpus_per_stage) return;
  uint32_t ngroups = 2 * g.nstages;
  uint32_t *size = sim_malloc(ngroups * sizeof *size);
  for (uint32_t s = 0; s < g.nstages; s++) {
    uint32_t slow = g.slow_gpus[s] < g.gpus_per_stage ? g.slow_gpus[s] : g.gpus_per_stage;
    size[2 * s] = slow;
    size[2 * s + 1] = g.gpus_per_stage - slow;
  }
  uint8_t *cur = sim_malloc(ngroups);
  memset(cur, WL_GPU_STATES, ngroups); /* idle */
  gpu_move *mv = sim_malloc((size_t)ngroups * (WL_GPU_STATES + 1) * sizeof *mv);
  for (uint32_t b = 0; b < g.nbins; b++) {
    simtime_ps t0 = (simtime_ps)b * g.bin_ps;
    if (t0 >= end) break;
    size_t n = 0;
    for (uint32_t gr = 0; gr < ngroups; gr++) {
      if (!size[gr]) continue;
      uint32_t s = gr / 2;
      const simtime_ps *x = g.t + ((size_t)b * g.nstages + s) * WL_GPU_STATES;
      simtime_ps d[WL_GPU_STATES] = {x[0], x[1], x[2]};
      if (gr % 2) { /* full speed: done early, then waiting for the slowest */
        simtime_ps w = g.wait[(size_t)b * g.nstages + s];
        if (w > d[0]) w = d[0];
        d[0] -= w;
        d[1] += w;
      }
      simtime_ps at = t0;
      for (uint8_t k = 0; k <= WL_GPU_STATES; k++) {
        if (k < WL_GPU_STATES && d[k] == 0) continue;
        mv[n++] = (gpu_move){.at = at, .group = gr, .to = k};
        if (k < WL_GPU_STATES) at += d[k];
      }
    }
    qsort(mv, n, sizeof *mv, move_cmp);
    for (size_t i = 0; i < n; i++) {
      if (cur[mv[i].group] == mv[i].to) continue;
      tel_gpu_count_move(tl, mv[i].at < end ? mv[i].at : end, state_of[cur[mv[i].group]],
                         state_of[mv[i].to], size[mv[i].group]);
      cur[mv[i].group] = mv[i].to;
    }
  }
  simtime_ps stop = 0, step_start = 0;
  if (wl_job_stopped(job, &stop, &step_start) && stop <= end)
    for (uint32_t gr = 0; gr < ngroups; gr++) /* the job is down: failed or restarting */
      if (size[gr]) tel_gpu_count_move(tl, stop, state_of[cur[gr]], TEL_GPU_DOWN, size[gr]);
  sim_free(mv);
  sim_free(cur);
  sim_free(size);
}
