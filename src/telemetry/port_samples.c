/* Per-port telemetry from a backend that samples its own ports (the
 * capability be_ops.port_sampling, port_samples: the packet fidelity's real
 * queues, pauses, marks and utilization) into a tel's port group. With
 * tap.c, the telemetry files that know the backend interface. */
#include <stdlib.h>

#include "fabsim/tel_tap.h"

int tel_port_sampling_start(be_backend *b, const tel_portmap *m, const uint32_t *watch,
                            uint32_t nwatch) {
  be_port_spec spec = {.nports = m->nports,
                       .channel_of_port = m->channel_of_port,
                       .bps = m->bps,
                       .watch = watch,
                       .nwatch = nwatch};
  return be_port_sampling_start(b, &spec);
}

/* ---- replay ---------------------------------------------------------------------- */

typedef struct later {
  simtime_ps at;
  uint32_t port;
  uint32_t kind; /* 0: pause off, 1: queue back to 0 */
} later;

static int later_cmp(const void *a, const void *b) {
  const later *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  return x->port < y->port ? -1 : x->port > y->port;
}

static void replay(const be_port_samples *s, tel *t, simtime_ps end) {
  size_t P = s->nports;
  int64_t *rate = sim_calloc(P ? P : 1, sizeof *rate);
  later *lt = sim_malloc(2 * (P ? P : 1) * sizeof *lt);
  for (uint32_t r = 0; r < s->nrows; r++) {
    simtime_ps st = (simtime_ps)r * s->interval, en = st + s->interval;
    if (st >= end) break;
    if (en > end) en = end;
    simtime_ps len = en - st;
    size_t nl = 0;
    for (size_t p = 0; p < P; p++) {
      /* utilization as a rate over the row (the tel integrates it exactly) */
      int64_t want = (int64_t)((double)s->util[r * P + p] / UINT16_MAX * (double)s->bps[p]);
      if (want != rate[p]) tel_port_rate(t, st, (uint32_t)p, want - rate[p]);
      rate[p] = want;
      if (s->marks[r * P + p]) tel_port_ecn(t, st, (uint32_t)p, s->marks[r * P + p]);
      if (s->paused[r * P + p]) { /* paused time at the start of the row */
        simtime_ps x = (simtime_ps)((double)s->paused[r * P + p] / UINT16_MAX * (double)len);
        tel_port_pause(t, st, (uint32_t)p, true);
        lt[nl++] = (later){st + (x ? x : 1), (uint32_t)p, 0};
      }
    }
    for (uint32_t i = s->qrow[r]; i < s->qrow[r + 1]; i++) {
      const be_port_queue *q = &s->queues[i];
      tel_port_queue(t, st, q->port, q->bytes);
      lt[nl++] = (later){en - 1 > st ? en - 1 : st, q->port, 1};
    }
    qsort(lt, nl, sizeof *lt, later_cmp);
    for (size_t j = 0; j < nl; j++) {
      if (lt[j].kind == 0) tel_port_pause(t, lt[j].at, lt[j].port, false);
      else tel_port_queue(t, lt[j].at, lt[j].port, 0);
    }
  }
  /* after the last row the fabric was idle (sampling stops with the traffic) */
  simtime_ps idle = (simtime_ps)s->nrows * s->interval;
  for (size_t p = 0; p < P && idle < end; p++)
    if (rate[p]) tel_port_rate(t, idle, (uint32_t)p, -rate[p]);
  sim_free(rate);
  sim_free(lt);
}

void tel_port_samples_replay(be_backend *b, tel *t, simtime_ps end) {
  be_port_samples s;
  if (be_port_samples_get(b, end, &s) == SIM_OK) replay(&s, t, end);
}
