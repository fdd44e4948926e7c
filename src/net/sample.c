/* Packet telemetry sampler: the per-port telemetry capability of the
 * backend interface (be_ops.port_sampling, port_gather, port_samples; see
 * be_port_samples in fabsim/backend.h): rows of per-port samples taken while
 * phases run, read after the run (the telemetry module replays them).
 *
 * Row r covers [r x interval, (r + 1) x interval). The open row is closed by
 * one event at its end while a phase is active; when the backend goes idle
 * the event is cancelled (the run's end time must not move) and the open row
 * stays open until a phase starts again (same row: nothing to do; later: it
 * is closed, and the rows in between are appended empty) or the replay. A
 * row's deltas are taken from cumulative per-channel counters (tx bytes,
 * ECN marks, paused time); its deepest queue is the channel's max_bytes,
 * which the sampler resets at each row (net__chan_max_queue keeps the
 * whole-run maximum), so the hot path does not change.
 *
 * Cost: O(ports) per row closed, O(ports x rows) per halving, both bounded
 * by the 256-row cap; replay O(rows x ports).
 */
#include <stdlib.h>
#include <string.h>

#include "fabsim/pdes.h"
#include "net/net_internal.h"

/* Rows held: 256, fewer on fabrics so large that the dense per-port rows
 * would pass DENSE_BUDGET (6 bytes per port and row), never fewer than 32. */
enum { ROWS_MAX = 256, ROWS_MIN = 32, QUEUE_MIN_K = 64 };
#define DENSE_BUDGET ((size_t)128 << 20)
#define FIRST_INTERVAL SIM_PS_PER_US

typedef be_port_queue net__qrec; /* the rows are read in place (be_port_samples) */

struct net__samp {
  uint32_t nports, k;
  uint32_t rows_max; /* even; see ROWS_MAX */
  uint32_t *chan;    /* channel of each port */
  rate_bps *bps;     /* nominal rate of each port */
  uint8_t *watched;
  simtime_ps interval;
  uint32_t nrows;                  /* closed rows; the open one is nrows */
  uint16_t *util, *paused, *marks; /* [row * nports + port], fractions of 65535, marks saturate */
  net__qrec *q;                    /* sparse deepest queues, rows in order */
  size_t nq, qcap;
  uint32_t *qrow; /* rows_max + 1 offsets into q */
  uint64_t *bytes0, *marks0;
  simtime_ps *paused0;
  net__qrec *scratch; /* nports */
  ev_id ev;
  bool finished; /* samp_finish ran: the rows are final */
};

static void on_sample(sim_ctx *sim, void *obj, uint64_t arg);

static simtime_ps row_end(const net__samp *s) { return (simtime_ps)(s->nrows + 1) * s->interval; }

static uint16_t frac16(double x) {
  if (!(x > 0)) return 0;
  if (x >= 1) return UINT16_MAX;
  return (uint16_t)(x * UINT16_MAX + 0.5);
}

static int by_bytes_desc(const void *a, const void *b) {
  const net__qrec *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return x->port < y->port ? -1 : x->port > y->port;
}

static int by_port(const void *a, const void *b) {
  const net__qrec *x = a, *y = b;
  return x->port < y->port ? -1 : x->port > y->port;
}

/* Append the records in scratch[0..n) as row r's: the k deepest and every
 * watched port. */
static void q_append(net__samp *s, uint32_t r, size_t n) {
  qsort(s->scratch, n, sizeof *s->scratch, by_bytes_desc);
  size_t kept = 0;
  for (size_t j = 0; j < n; j++) {
    if (kept >= s->k && !s->watched[s->scratch[j].port]) continue;
    if (s->nq == s->qcap) sim_grow((void **)&s->q, &s->qcap, s->nq + 1, sizeof *s->q);
    s->q[s->nq++] = s->scratch[j];
    if (kept < s->k) kept++;
  }
  s->qrow[r + 1] = (uint32_t)s->nq;
}

/* Halve the rows: row j becomes rows 2j and 2j+1 merged. O(ports x rows). */
static void coarsen(net__samp *s) {
  size_t P = s->nports;
  uint32_t half = s->nrows / 2;
  net__qrec *old = s->q;
  uint32_t *oldrow = sim_malloc((s->nrows + 1) * sizeof *oldrow);
  memcpy(oldrow, s->qrow, (s->nrows + 1) * sizeof *oldrow);
  s->q = NULL;
  s->nq = s->qcap = 0;
  s->qrow[0] = 0;
  for (uint32_t j = 0; j < half; j++) {
    uint16_t *a = s->util + 2 * j * P, *b = a + P, *o = s->util + j * P;
    for (size_t p = 0; p < P; p++) o[p] = (uint16_t)(((uint32_t)a[p] + b[p] + 1) / 2);
    a = s->paused + 2 * j * P, b = a + P, o = s->paused + j * P;
    for (size_t p = 0; p < P; p++) o[p] = (uint16_t)(((uint32_t)a[p] + b[p] + 1) / 2);
    a = s->marks + 2 * j * P, b = a + P, o = s->marks + j * P;
    for (size_t p = 0; p < P; p++) {
      uint32_t m = (uint32_t)a[p] + b[p];
      o[p] = (uint16_t)(m > UINT16_MAX ? UINT16_MAX : m);
    }
    size_t n = 0; /* the two rows' queue records, one per port, deepest kept */
    for (uint32_t i = oldrow[2 * j]; i < oldrow[2 * j + 2]; i++) s->scratch[n++] = old[i];
    qsort(s->scratch, n, sizeof *s->scratch, by_port);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      if (m && s->scratch[m - 1].port == s->scratch[i].port) {
        if (s->scratch[i].bytes > s->scratch[m - 1].bytes)
          s->scratch[m - 1].bytes = s->scratch[i].bytes;
      } else {
        s->scratch[m++] = s->scratch[i];
      }
    }
    q_append(s, j, m);
  }
  sim_free(old);
  sim_free(oldrow);
  s->nrows = half;
  s->interval *= 2;
}

/* Close the open row with the counters as they are at `now` (the row may be
 * cut short by the end of the run). */
static void close_row(net__be *n, simtime_ps now) {
  net__samp *s = n->samp;
  size_t P = s->nports, r = s->nrows;
  simtime_ps start = (simtime_ps)r * s->interval, cut = now > start ? now - start : 1;
  double len = (double)(cut < s->interval ? cut : s->interval);
  size_t nq = 0;
  for (size_t p = 0; p < P; p++) {
    uint32_t c = s->chan[p];
    net__chan *ch = &n->ch[c];
    net__cold *cd = &n->cold[c];
    uint64_t bytes = ch->tx_bytes, marks = cd->marks_n;
    simtime_ps paused = net__paused_until(n, c, now);
    double bits = 8.0 * (double)(bytes - s->bytes0[p]);
    s->util[r * P + p] = frac16(bits / ((double)s->bps[p] * len / (double)SIM_PS_PER_S));
    s->paused[r * P + p] = frac16((double)(paused - s->paused0[p]) / len);
    uint64_t dm = marks - s->marks0[p];
    s->marks[r * P + p] = (uint16_t)(dm > UINT16_MAX ? UINT16_MAX : dm);
    s->bytes0[p] = bytes;
    s->marks0[p] = marks;
    s->paused0[p] = paused;
    if (ch->max_bytes > cd->run_max) cd->run_max = ch->max_bytes;
    bool mine = !n->par || net__par_owns(n, cd->src); /* par: each port from its own rank */
    if (mine && (ch->max_bytes || s->watched[p]))
      s->scratch[nq++] = (net__qrec){(uint32_t)p, ch->max_bytes};
    ch->max_bytes = ch->bytes; /* the next row starts at the current depth */
  }
  q_append(s, (uint32_t)r, nq);
  if (++s->nrows == s->rows_max) coarsen(s); /* the open row doubles with the rest */
}

/* An empty row (the fabric was idle throughout). */
static void empty_row(net__samp *s) {
  size_t P = s->nports, r = s->nrows;
  memset(s->util + r * P, 0, P * sizeof *s->util);
  memset(s->paused + r * P, 0, P * sizeof *s->paused);
  memset(s->marks + r * P, 0, P * sizeof *s->marks);
  s->qrow[r + 1] = s->qrow[r];
  if (++s->nrows == s->rows_max) coarsen(s);
}

static void on_sample(sim_ctx *sim, void *obj, uint64_t arg) {
  net__be *n = obj;
  (void)arg;
  n->samp->ev = 0;
  close_row(n, sim_now(sim));
  n->samp->ev = ev_schedule(sim, row_end(n->samp), on_sample, n, 0);
}

void net__samp_active(net__be *n) {
  net__samp *s = n->samp;
  if (!s || s->ev) return;
  simtime_ps now = sim_now(n->base.sim);
  if (now >= row_end(s)) {
    close_row(n, now); /* what happened up to the idle time, and stale packets since */
    while (now >= row_end(s)) empty_row(s);
  }
  s->ev = ev_schedule(n->base.sim, row_end(s), on_sample, n, 0);
}

void net__samp_idle(net__be *n) {
  net__samp *s = n->samp;
  if (!s || !s->ev) return;
  ev_cancel(n->base.sim, s->ev);
  s->ev = 0;
}

void net__samp_free(net__samp *s) {
  if (!s) return;
  sim_free(s->chan);
  sim_free(s->bps);
  sim_free(s->watched);
  sim_free(s->util);
  sim_free(s->paused);
  sim_free(s->marks);
  sim_free(s->q);
  sim_free(s->qrow);
  sim_free(s->bytes0);
  sim_free(s->marks0);
  sim_free(s->paused0);
  sim_free(s->scratch);
  sim_free(s);
}

int net__port_sampling(be_backend *b, const be_port_spec *m) {
  net__be *n = (net__be *)b;
  net__samp_free(n->samp);
  net__samp *s = sim_calloc(1, sizeof *s);
  size_t P = m->nports;
  s->nports = m->nports;
  s->k = m->nports / 100 + 1 > QUEUE_MIN_K ? m->nports / 100 + 1 : QUEUE_MIN_K;
  s->chan = sim_malloc((P ? P : 1) * sizeof *s->chan);
  s->bps = sim_malloc((P ? P : 1) * sizeof *s->bps);
  memcpy(s->chan, m->channel_of_port, P * sizeof *s->chan);
  for (size_t p = 0; p < P; p++) s->bps[p] = m->bps[p] ? m->bps[p] : 1;
  s->watched = sim_calloc(P ? P : 1, 1);
  for (uint32_t w = 0; w < m->nwatch; w++)
    if (m->watch[w] < P) s->watched[m->watch[w]] = 1;
  s->interval = FIRST_INTERVAL;
  size_t fit = DENSE_BUDGET / (6 * (P ? P : 1));
  s->rows_max = fit >= ROWS_MAX ? ROWS_MAX : fit <= ROWS_MIN ? ROWS_MIN : (uint32_t)fit & ~1u;
  size_t cells = (size_t)s->rows_max * (P ? P : 1);
  s->util = sim_malloc(cells * sizeof *s->util);
  s->paused = sim_malloc(cells * sizeof *s->paused);
  s->marks = sim_malloc(cells * sizeof *s->marks);
  s->qrow = sim_calloc(s->rows_max + 1, sizeof *s->qrow);
  s->bytes0 = sim_calloc(P ? P : 1, sizeof *s->bytes0);
  s->marks0 = sim_calloc(P ? P : 1, sizeof *s->marks0);
  s->paused0 = sim_calloc(P ? P : 1, sizeof *s->paused0);
  s->scratch = sim_malloc(2 * (P ? P : 1) * sizeof *s->scratch);
  n->samp = s;
  if (n->active_phases) net__samp_active(n);
  return SIM_OK;
}

/* ---- the parallel engine: every rank's rows on every rank ----------------- */

/* No more rows: the sample event off, the open row closed at end. Once:
 * the parallel engine's gathering and the replay both ask. */
static void samp_finish(net__be *n, simtime_ps end) {
  net__samp *s = n->samp;
  if (s->finished) return;
  s->finished = true;
  net__samp_idle(n);
  if (end > (simtime_ps)s->nrows * s->interval) close_row(n, end); /* the open row, up to end */
}

static int by_row(const void *a, const void *b) {
  const uint32_t *x = a, *y = b; /* (row, port, bytes) */
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Each rank sampled its own ports (the others' counters are zero there):
 * the dense rows add up, and each row's deepest queues are chosen again
 * from the union of the ranks' choices (which holds the k deepest of all;
 * a port is in one rank's choices only). */
static void samp_gather(net__be *n, simtime_ps end) {
  net__samp *s = n->samp;
  samp_finish(n, end);
  size_t cells = (size_t)s->nrows * s->nports;
  uint64_t *v = sim_malloc((cells ? 3 * cells : 1) * sizeof *v);
  for (size_t j = 0; j < cells; j++) {
    v[j] = s->util[j];
    v[cells + j] = s->paused[j];
    v[2 * cells + j] = s->marks[j];
  }
  pdes_comm_allreduce_u64(v, 3 * cells, false);
  for (size_t j = 0; j < cells; j++) {
    s->util[j] = (uint16_t)(v[j] > UINT16_MAX ? UINT16_MAX : v[j]);
    s->paused[j] = (uint16_t)(v[cells + j] > UINT16_MAX ? UINT16_MAX : v[cells + j]);
    s->marks[j] = (uint16_t)(v[2 * cells + j] > UINT16_MAX ? UINT16_MAX : v[2 * cells + j]);
  }
  sim_free(v);
  uint32_t *mine = sim_malloc((s->nq ? 3 * s->nq : 1) * sizeof *mine);
  for (uint32_t r = 0; r < s->nrows; r++)
    for (uint32_t i = s->qrow[r]; i < s->qrow[r + 1]; i++) {
      mine[3 * i] = r;
      mine[3 * i + 1] = s->q[i].port;
      mine[3 * i + 2] = s->q[i].bytes;
    }
  size_t bytes;
  uint32_t *all = pdes_comm_allgather_bytes(mine, 3 * s->nq * sizeof *mine, &bytes);
  sim_free(mine);
  size_t na = bytes / (3 * sizeof *all), i = 0;
  qsort(all, na, 3 * sizeof *all, by_row);
  s->nq = 0;
  s->qrow[0] = 0;
  for (uint32_t r = 0; r < s->nrows; r++) {
    size_t m = 0;
    for (; i < na && all[3 * i] == r; i++)
      s->scratch[m++] = (net__qrec){all[3 * i + 1], all[3 * i + 2]};
    q_append(s, r, m);
  }
  sim_free(all);
}

void net__port_gather(be_backend *b, simtime_ps end) {
  net__be *n = (net__be *)b;
  if (n->samp && n->par) samp_gather(n, end);
}

/* ---- the rows, read in place --------------------------------------------------- */

int net__port_samples(be_backend *b, simtime_ps end, be_port_samples *out) {
  net__be *n = (net__be *)b;
  net__samp *s = n->samp;
  if (!s) return SIM_EINVAL;
  samp_finish(n, end);
  *out = (be_port_samples){.nports = s->nports,
                           .nrows = s->nrows,
                           .interval = s->interval,
                           .util = s->util,
                           .paused = s->paused,
                           .marks = s->marks,
                           .queues = s->q,
                           .qrow = s->qrow,
                           .bps = s->bps};
  return SIM_OK;
}
