/* Telemetry logs: the event log (strings in one pool), the FCT histogram and
 * training-step records. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry/tel_internal.h"

static size_t pool_add(tel *t, const char *s) {
  size_t n = strlen(s ? s : "") + 1;
  sim_grow((void **)&t->pool, &t->pool_cap, t->pool_len + n, 1);
  memcpy(t->pool + t->pool_len, s ? s : "", n);
  t->pool_len += n;
  return t->pool_len - n;
}

void tel_event(tel *t, simtime_ps at, const char *component, const char *kind, const char *effect,
               double value) {
  assert(!t->finished);
  sim_grow((void **)&t->events, &t->events_cap, t->nevents + 1, sizeof *t->events);
  tel__event *e = &t->events[t->nevents];
  e->at = at;
  e->component = pool_add(t, component);
  e->kind = pool_add(t, kind);
  e->effect = pool_add(t, effect);
  e->value = value;
  e->seq = t->nevents++;
}

/* ---- FCT histogram: 4 buckets per octave; values below 4 ps exact ---------------- */

static size_t fct_bucket(simtime_ps v) {
  if (v < 4) return (size_t)v;
  int l = 63 - __builtin_clzll(v);
  return (size_t)l * 4 + ((v >> (l - 2)) & 3);
}

simtime_ps tel_fct_bucket_lo(size_t b) {
  if (b < 4) return b;
  if (b >= TEL_FCT_BUCKETS) return SIM_TIME_MAX;
  size_t l = b / 4, q = b % 4;
  if (l < 2) return 4; /* buckets 4..7 are never used */
  return (simtime_ps)(4 | q) << (l - 2);
}

void tel_fct(tel *t, simtime_ps fct) {
  t->fct[fct_bucket(fct)]++;
  t->fct_n++;
  t->observed |= TEL_OBS_FCT;
}

uint64_t tel_fct_count(const tel *t, size_t b) { return b < TEL_FCT_BUCKETS ? t->fct[b] : 0; }

/* ---- steps ----------------------------------------------------------------------------- */

void tel_step_begin(tel *t, simtime_ps now, uint64_t step) {
  assert(!t->finished && !t->step_open);
  tel__gpu_advance(t, now);
  memcpy(t->step_mark, t->gpu_cum, sizeof t->step_mark);
  t->step_begin = now;
  t->step_no = step;
  t->step_open = true;
}

void tel_step_end(tel *t, simtime_ps now, uint64_t step) {
  assert(!t->finished && t->step_open && step == t->step_no);
  (void)step;
  tel__gpu_advance(t, now);
  sim_grow((void **)&t->steps, &t->steps_cap, t->nsteps + 1, sizeof *t->steps);
  tel_step *s = &t->steps[t->nsteps++];
  s->step = t->step_no;
  s->begin = t->step_begin;
  s->end = now;
  double denom = (double)t->c.gpus * (double)(now - t->step_begin);
  for (int k = 0; k < TEL_GPU_NSTATES; k++)
    s->frac[k] = denom > 0 ? (double)(t->gpu_cum[k] - t->step_mark[k]) / denom : 0;
  t->step_open = false;
  t->observed |= TEL_OBS_STEPS;
}

size_t tel_step_count(const tel *t) { return t->nsteps; }
const tel_step *tel_step_at(const tel *t, size_t i) { return &t->steps[i]; }

/* ---- finish and read ------------------------------------------------------------------- */

/* seq is unique, so this total order makes qsort stable in effect. */
static int event_cmp(const void *a, const void *b) {
  const tel__event *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void tel__log_finish(tel *t) {
  if (t->nevents > 1) qsort(t->events, t->nevents, sizeof *t->events, event_cmp);
}

size_t tel_event_count(const tel *t) { return t->nevents; }

void tel_event_at(const tel *t, size_t i, tel_event_view *out) {
  const tel__event *e = &t->events[i];
  out->at = e->at;
  out->component = t->pool + e->component;
  out->kind = t->pool + e->kind;
  out->effect = t->pool + e->effect;
  out->value = e->value;
}

void tel__log_free(tel *t) {
  sim_free(t->events);
  sim_free(t->pool);
  sim_free(t->steps);
}
