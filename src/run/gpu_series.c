/* Training jobs' GPU states as telemetry series (fabsim/run.h). */
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
 * idle for the rest; so the series are exact at bin boundaries and the order
 * inside a bin (a few ms in a long run) is lost. A job that stopped on a
 * failure is down from then on. Several jobs (jobs:) have disjoint GPUs and
 * timelines of their own bin widths: their moves are merged in time order
 * (the sampler takes its events in time order). */
enum { STATE_DOWN = WL_GPU_STATES + 1 };

typedef struct gpu_move {
  simtime_ps at;
  uint32_t job, bin; /* bin UINT32_MAX: the stop, after the job's bins */
  uint32_t group;    /* over all jobs: job's first group + stage * 2 + (0 slowed, 1 others) */
  uint8_t to;        /* WL_GPU_STATES: idle; STATE_DOWN */
} gpu_move;

static int move_cmp(const void *a, const void *b) {
  const gpu_move *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  if (x->job != y->job) return x->job < y->job ? -1 : 1;
  if (x->bin != y->bin) return x->bin < y->bin ? -1 : 1;
  return x->group < y->group ? -1 : x->group > y->group;
}

typedef struct moves {
  gpu_move *v;
  size_t n, cap;
  uint32_t *size; /* GPUs per group */
  uint32_t ngroups;
} moves;

static void add_move(moves *m, gpu_move x) {
  sim_grow((void **)&m->v, &m->cap, m->n + 1, sizeof *m->v);
  m->v[m->n++] = x;
}

/* Job k's groups and its moves up to `end`. O(bins x stages). */
static void job_moves(moves *m, const wl_job *job, uint32_t k, simtime_ps end) {
  wl_gpu_timeline g;
  wl_job_gpu_timeline(job, &g);
  if (!g.nstages || !g.gpus_per_stage) return;
  uint32_t first = m->ngroups, ngroups = 2 * g.nstages;
  m->ngroups += ngroups;
  m->size = sim_realloc(m->size, (size_t)m->ngroups * sizeof *m->size);
  for (uint32_t s = 0; s < g.nstages; s++) {
    uint32_t slow = g.slow_gpus[s] < g.gpus_per_stage ? g.slow_gpus[s] : g.gpus_per_stage;
    m->size[first + 2 * s] = slow;
    m->size[first + 2 * s + 1] = g.gpus_per_stage - slow;
  }
  for (uint32_t b = 0; b < g.nbins; b++) {
    simtime_ps t0 = (simtime_ps)b * g.bin_ps;
    if (t0 >= end) break;
    for (uint32_t gr = 0; gr < ngroups; gr++) {
      if (!m->size[first + gr]) continue;
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
      for (uint8_t st = 0; st <= WL_GPU_STATES; st++) {
        if (st < WL_GPU_STATES && d[st] == 0) continue;
        add_move(m, (gpu_move){.at = at, .job = k, .bin = b, .group = first + gr, .to = st});
        if (st < WL_GPU_STATES) at += d[st];
      }
    }
  }
  simtime_ps stop = 0, step_start = 0;
  if (wl_job_stopped(job, &stop, &step_start) && stop <= end)
    for (uint32_t gr = 0; gr < ngroups; gr++) /* the job is down: failed or restarting */
      if (m->size[first + gr])
        add_move(
            m, (gpu_move){
                   .at = stop, .job = k, .bin = UINT32_MAX, .group = first + gr, .to = STATE_DOWN});
}

void run_jobs_gpu_series(tel *tl, const wl_job *const *jobs, uint32_t njobs, simtime_ps end) {
  static const tel_gpu_state state_of[STATE_DOWN + 1] = {
      TEL_GPU_COMPUTE, TEL_GPU_NETWORK, TEL_GPU_BUBBLE, TEL_GPU_IDLE, TEL_GPU_DOWN};
  moves m = {0};
  for (uint32_t k = 0; k < njobs; k++) job_moves(&m, jobs[k], k, end);
  if (m.n) qsort(m.v, m.n, sizeof *m.v, move_cmp);
  uint8_t *cur = sim_malloc(m.ngroups ? m.ngroups : 1);
  memset(cur, WL_GPU_STATES, m.ngroups); /* idle */
  for (size_t i = 0; i < m.n; i++) {
    const gpu_move *x = &m.v[i];
    if (cur[x->group] == x->to) continue;
    tel_gpu_count_move(tl, x->at < end ? x->at : end, state_of[cur[x->group]], state_of[x->to],
                       m.size[x->group]);
    cur[x->group] = x->to;
  }
  sim_free(cur);
  sim_free(m.v);
  sim_free(m.size);
}

void run_job_gpu_series(tel *tl, const wl_job *job, simtime_ps end) {
  run_jobs_gpu_series(tl, &job, 1, end);
}
