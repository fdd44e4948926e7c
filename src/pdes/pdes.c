/* Conservative parallel event engine: per-rank calendar queue (fabsim/evq.h,
 * shared with src/core/ev.c) of 24-byte keys (time, sending LP and sender
 * sequence, pool slot) over a pool of events; YAWNS windows of
 * the lookahead; one exchange of cross-rank events (and of the window hook's
 * sums and maxima) per window. The contract, and the proofs of identity and
 * termination, are in include/fabsim/pdes.h and docs/parallel.md.
 *
 * Invariants
 *   - the queue holds exactly the pending events of the LPs this rank owns,
 *     ordered by (time, tie): tie = (the kind's order << 62) | (sending LP <<
 *     PDES_SEQ_BITS) | that LP's send count, unique, so the order is total
 *     and the same on any number of ranks; each key names one pool slot; a slot is free (on
 * the free list) or named by exactly one key.
 *   - between windows the outboxes are empty; in a window, out[r] holds the
 *     events for rank r's LPs, every one with time >= window_end.
 *   - seq[lp] counts the events LP lp has sent (owned LPs only move).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/pdes.h"

#ifdef FABSIM_HAVE_MPI
#include <mpi.h>
static void pdes__red_op(void *in, void *inout, int *len, MPI_Datatype *dt);
#endif

enum { PDES_SEQ_BITS = 36, PDES_ORDER_SHIFT = 62 };
#define PDES_MAX_LPS (1u << (PDES_ORDER_SHIFT - PDES_SEQ_BITS))
_Static_assert(PDES_ORDERS == 1u << (64 - PDES_ORDER_SHIFT), "two bits of order");
#define PDES_SEQ_LIMIT (1ULL << PDES_SEQ_BITS)

_Static_assert(sizeof(pdes_event) == 64, "an event is one cache line");

typedef struct pdes__key {
  simtime_ps time;
  uint64_t tie;
  uint64_t slot;
} pdes__key;

#define EVQ_NAME pdes__q
#define EVQ_KEY pdes__key
#define EVQ_LESS(a, b) ((a).time < (b).time || ((a).time == (b).time && (a).tie < (b).tie))
#define EVQ_SIFT_TOP_DOWN /* as before the merge: see fabsim/evq.h */
#define EVQ_TIME(k) ((k).time)
#include "fabsim/evq.h"

typedef struct pdes_vec {
  pdes_event *e;
  size_t n, cap;
} pdes_vec;

struct pdes {
  uint32_t nlps, rank, nranks;
  bool parallel;
  bool dense; /* MPI_Alltoall(v) exchange instead of the sparse one */
#ifdef FABSIM_HAVE_MPI
  MPI_Op red_op; /* the sparse exchange's [min, sums, maxima] reduction */
#endif
  uint32_t *lp_rank;
  uint64_t *seq;
  pdes_fn *handlers;
  uint8_t *order; /* per kind, < PDES_ORDERS */
  uint32_t nhandlers;
  void *model;
  simtime_ps lookahead, now;
  simtime_ps
      window_end; /* while a window runs, its end (cross-rank sends land at or after it); else 0 */
  /* The window chosen by the last exchange, [win_start, win_end): it stays
   * open across pdes_run calls until every event in it has run, so that
   * where a caller's bounds fall never adds an exchange (win_open false: the
   * next run that must go past done_until exchanges first). */
  bool win_open;
  simtime_ps win_start, win_end;
  simtime_ps done_until; /* every event before it has run, on every rank: the last window's end */
  pdes_window_fn on_window;
  bool in_hook;
  simtime_ps run_until; /* the current pdes_run's bound (pdes_stop_before lowers it) */
  uint64_t red[2 * PDES_REDUCE_WORDS];  /* this rank's sums, then maxima, of the window */
  uint64_t gred[2 * PDES_REDUCE_WORDS]; /* the same over all ranks, from the last exchange */
  pdes__q q; /* pending keys; the minimum is q.heap[0] after pdes__q_refill */
  size_t pending;
  bool top_pending; /* q.heap[0] is the event running: its first send into the heap replaces it */
  pdes_event *pool;
  size_t pool_n, pool_cap;
  uint32_t *free_slots;
  size_t nfree, free_cap;
  /* cross-rank traffic of the current window */
  pdes_vec *out;
  pdes_vec in;
  pdes_stats st;
};

int pdes_create(pdes **out, const pdes_cfg *cfg, sim_error *err) {
  *out = NULL;
  uint32_t rank = 0, nranks = 1;
  if (cfg->parallel) {
    if (!pdes_comm_built())
      return sim_fail(err, SIM_ENOTSUP,
                      "parallel engine: fabsim was built without MPI "
                      "(install libopenmpi-dev and rebuild)");
    rank = pdes_comm_rank();
    nranks = pdes_comm_size();
  }
  if (cfg->nlps == 0 || cfg->nlps > PDES_MAX_LPS)
    return sim_fail(err, SIM_EINVAL, "parallel engine: %u logical processes; 1 .. %u allowed",
                    cfg->nlps, PDES_MAX_LPS);
  if (cfg->nhandlers == 0 || !cfg->handlers)
    return sim_fail(err, SIM_EINVAL, "parallel engine: no event handlers");
  if (cfg->on_window && cfg->lookahead_ps == 0)
    return sim_fail(err, SIM_EINVAL,
                    "parallel engine: a window hook needs a lookahead above 0 "
                    "(the windows it runs at are the lookahead wide)");
  if (nranks > 1 && cfg->lookahead_ps == 0)
    return sim_fail(err, SIM_EINVAL,
                    "parallel engine: lookahead 0 over %u ranks cannot make progress; partition "
                    "so that no zero-latency link is cut, or run on one rank",
                    nranks);
  pdes *p = sim_calloc(1, sizeof *p);
  p->nlps = cfg->nlps;
  p->rank = rank;
  p->nranks = nranks;
  p->parallel = cfg->parallel && nranks > 1;
  p->lookahead = cfg->lookahead_ps;
  p->on_window = cfg->on_window;
  p->dense =
      cfg->exchange == PDES_EXCHANGE_DENSE || (cfg->exchange == PDES_EXCHANGE_AUTO && nranks <= 8);
  p->model = cfg->model;
  p->nhandlers = cfg->nhandlers;
  p->handlers = sim_malloc(cfg->nhandlers * sizeof *p->handlers);
  memcpy(p->handlers, cfg->handlers, cfg->nhandlers * sizeof *p->handlers);
  p->order = sim_calloc(cfg->nhandlers, sizeof *p->order);
  for (uint32_t k = 0; cfg->order && k < cfg->nhandlers; k++)
    p->order[k] = cfg->order[k] < PDES_ORDERS ? cfg->order[k] : PDES_ORDERS - 1;
  p->lp_rank = sim_malloc(cfg->nlps * sizeof *p->lp_rank);
  p->seq = sim_calloc(cfg->nlps, sizeof *p->seq);
  p->out = sim_calloc(nranks, sizeof *p->out);
#ifdef FABSIM_HAVE_MPI
  p->red_op = MPI_OP_NULL;
  if (p->parallel) MPI_Op_create(pdes__red_op, 1, &p->red_op);
#endif
  for (uint32_t i = 0; i < cfg->nlps; i++) {
    uint32_t r = cfg->lp_rank ? cfg->lp_rank[i] : (uint32_t)((uint64_t)i * nranks / cfg->nlps);
    if (!cfg->parallel) r = 0;
    if (r >= nranks) {
      sim_fail(err, SIM_EINVAL, "parallel engine: LP %u is on rank %u of %u", i, r, nranks);
      pdes_destroy(p);
      return SIM_EINVAL;
    }
    p->lp_rank[i] = r;
  }
  *out = p;
  return SIM_OK;
}

void pdes_destroy(pdes *p) {
  if (!p) return;
#ifdef FABSIM_HAVE_MPI
  if (p->red_op != MPI_OP_NULL) MPI_Op_free(&p->red_op);
#endif
  for (uint32_t r = 0; r < p->nranks; r++) sim_free(p->out[r].e);
  sim_free(p->out);
  sim_free(p->in.e);
  pdes__q_destroy(&p->q);
  sim_free(p->pool);
  sim_free(p->free_slots);
  sim_free(p->seq);
  sim_free(p->lp_rank);
  sim_free(p->handlers);
  sim_free(p->order);
  sim_free(p);
}

uint32_t pdes_rank(const pdes *p) { return p->rank; }
uint32_t pdes_nranks(const pdes *p) { return p->nranks; }
uint32_t pdes_lp_rank(const pdes *p, uint32_t lp) { return p->lp_rank[lp]; }
simtime_ps pdes_now(const pdes *p) { return p->now; }
simtime_ps pdes_done_until(const pdes *p) { return p->done_until; }
void pdes_stop_before(pdes *p, simtime_ps t) {
  if (t == 0) t = 1; /* nothing runs before 0 anyway */
  if (t - 1 < p->run_until) p->run_until = t - 1;
}
void pdes_global_action(pdes *p, simtime_ps t) {
  if (p->win_open && t < p->win_start) p->win_open = false;
}

void pdes_reduce_add(pdes *p, unsigned word, uint64_t v) {
  assert(word < PDES_REDUCE_WORDS);
  p->red[word] += v;
}

void pdes_reduce_max(pdes *p, unsigned word, uint64_t v) {
  assert(word < PDES_REDUCE_WORDS);
  if (v > p->red[PDES_REDUCE_WORDS + word]) p->red[PDES_REDUCE_WORDS + word] = v;
}
void pdes_stats_get(const pdes *p, pdes_stats *s) { *s = p->st; }

/* ---- queue --------------------------------------------------------------------------- */

static void pdes__push(pdes *p, const pdes_event *ev) {
  uint64_t slot;
  if (p->nfree) {
    slot = p->free_slots[--p->nfree];
  } else {
    if (p->pool_n == p->pool_cap)
      sim_grow((void **)&p->pool, &p->pool_cap, p->pool_n + 1, sizeof *p->pool);
    slot = p->pool_n++;
  }
  p->pool[slot] = *ev;
  pdes__key x = {ev->time, ev->tie, slot};
  if (p->top_pending && pdes__q_near(&p->q, x.time)) { /* one sift instead of a pop and a push */
    p->top_pending = false;
    pdes__q_replace_top(&p->q, x);
    return;
  }
  pdes__q_insert(&p->q, x);
  p->pending++;
}

/* Remove q.heap[0] (after pdes__q_refill; its slot stays allocated: the
 * caller releases it). */
static void pdes__pop(pdes *p) {
  p->pending--;
  pdes__q_pop(&p->q);
}

static inline void pdes__release(pdes *p, uint64_t slot) {
  if (p->nfree == p->free_cap)
    sim_grow((void **)&p->free_slots, &p->free_cap, p->nfree + 1, sizeof *p->free_slots);
  p->free_slots[p->nfree++] = (uint32_t)slot;
}

static inline void pdes__vec_push(pdes_vec *v, const pdes_event *e) {
  if (v->n == v->cap) sim_grow((void **)&v->e, &v->cap, v->n + 1, sizeof *v->e);
  v->e[v->n++] = *e;
}

/* ---- sending and running ------------------------------------------------------------- */

void pdes_send(pdes *p, uint32_t src, uint32_t dst, simtime_ps at, uint32_t kind,
               const uint64_t payload[PDES_PAYLOAD_WORDS]) {
  assert(src < p->nlps && dst < p->nlps && kind < p->nhandlers);
  assert(p->lp_rank[src] == p->rank && "only an LP of this rank sends");
  assert(at >= p->now && "events cannot be sent into the past");
  if (p->seq[src] >= PDES_SEQ_LIMIT) {
    sim_fatal("LP %u sent 2^%d events; the parallel engine's sequence is full", src, PDES_SEQ_BITS);
  }
  pdes_event e;
  e.time = at;
  e.tie = (uint64_t)p->order[kind] << PDES_ORDER_SHIFT | ((uint64_t)src << PDES_SEQ_BITS) |
          p->seq[src]++;
  e.dst = dst;
  e.kind = kind;
  if (payload) memcpy(e.payload, payload, sizeof e.payload);
  else memset(e.payload, 0, sizeof e.payload);
  e.pad_ = 0;
  uint32_t r = p->lp_rank[dst];
  if (r == p->rank) {
    pdes__push(p, &e);
    return;
  }
  if (p->in_hook) {
    sim_fatal(
        "parallel engine: the window hook sent from LP %u to LP %u on rank %u; "
        "a hook sends to the LPs of its own rank only",
        src, dst, r);
  }
  if (at < p->window_end) {
    sim_fatal(
        "parallel engine: LP %u sent to LP %u on rank %u an event at %llu ps, inside "
        "the window ending at %llu ps: its delay is below the lookahead %llu ps (a model bug: "
        "the lookahead must bound every cross-rank delay)",
        src, dst, r, (unsigned long long)at, (unsigned long long)p->window_end,
        (unsigned long long)p->lookahead);
  }
  pdes__vec_push(&p->out[r], &e);
  p->st.sent_remote++;
}

static inline void pdes__run_top(pdes *p) {
  uint64_t slot = p->q.heap[0].slot;
  pdes_event e = p->pool[slot]; /* a copy: the handler's sends may move the pool */
  pdes__release(p, slot);
  /* the next event is one of the top's children or one the handler sends:
   * load the children's events while the handler runs (a miss each, else) */
  for (size_t j = 1; j <= 4 && j < p->q.n; j++) __builtin_prefetch(&p->pool[p->q.heap[j].slot]);
  p->now = e.time;
  p->top_pending = true; /* its key stays at the top until the handler's first local send */
  p->handlers[e.kind](p, &e, p->model);
  if (p->top_pending) {
    p->top_pending = false;
    pdes__pop(p);
  }
  p->st.events++;
}

#ifdef FABSIM_HAVE_MPI
/* One synchronization point: exchange the outboxes, learn the global minimum
 * of pending times. Returns it (SIM_TIME_MAX: nothing pending anywhere). */
static simtime_ps pdes__sync(pdes *p) {
  uint32_t nr = p->nranks;
  simtime_ps mine = pdes__q_refill(&p->q) ? p->q.heap[0].time : SIM_TIME_MAX;
  uint64_t total = 0;
  for (uint32_t r = 0; r < nr; r++) {
    total += p->out[r].n;
    for (size_t i = 0; i < p->out[r].n; i++)
      if (p->out[r].e[i].time < mine) mine = p->out[r].e[i].time;
  }
  /* [count for r, my minimum, my total sent, my window sums and maxima] to
   * every rank r. */
  enum { M = 3 + 2 * PDES_REDUCE_WORDS };
  uint64_t *sendm = sim_malloc(M * nr * sizeof *sendm), *recvm = sim_malloc(M * nr * sizeof *recvm);
  for (uint32_t r = 0; r < nr; r++) {
    sendm[M * r] = p->out[r].n;
    sendm[M * r + 1] = mine;
    sendm[M * r + 2] = total;
    memcpy(&sendm[M * r + 3], p->red, sizeof p->red);
  }
  MPI_Alltoall(sendm, M, MPI_UINT64_T, recvm, M, MPI_UINT64_T, MPI_COMM_WORLD);
  simtime_ps gmin = SIM_TIME_MAX;
  uint64_t gtotal = 0, incoming = 0;
  memset(p->gred, 0, sizeof p->gred);
  for (uint32_t r = 0; r < nr; r++) {
    const uint64_t *m = &recvm[M * r];
    incoming += m[0];
    if (m[1] < gmin) gmin = m[1];
    gtotal += m[2];
    for (int w = 0; w < PDES_REDUCE_WORDS; w++) {
      p->gred[w] += m[3 + w];
      if (m[3 + PDES_REDUCE_WORDS + w] > p->gred[PDES_REDUCE_WORDS + w])
        p->gred[PDES_REDUCE_WORDS + w] = m[3 + PDES_REDUCE_WORDS + w];
    }
  }
  if (gtotal) {
    /* Counts in events of 64 bytes: MPI_Datatype of one event. */
    MPI_Datatype evt;
    MPI_Type_contiguous((int)sizeof(pdes_event), MPI_BYTE, &evt);
    MPI_Type_commit(&evt);
    int *sc = sim_malloc(4 * nr * sizeof *sc), *sd = sc + nr, *rc = sc + 2 * nr, *rd = sc + 3 * nr;
    size_t soff = 0, roff = 0;
    for (uint32_t r = 0; r < nr; r++) {
      if (p->out[r].n > (size_t)INT32_MAX || recvm[M * r] > (uint64_t)INT32_MAX ||
          soff > INT32_MAX || roff > INT32_MAX) {
        sim_fatal("parallel engine: more than 2^31 events cross ranks in one window");
      }
      sc[r] = (int)p->out[r].n;
      sd[r] = (int)soff;
      rc[r] = (int)recvm[M * r];
      rd[r] = (int)roff;
      soff += p->out[r].n;
      roff += recvm[M * r];
    }
    pdes_vec sendbuf = {0};
    sim_grow((void **)&sendbuf.e, &sendbuf.cap, soff ? soff : 1, sizeof *sendbuf.e);
    for (uint32_t r = 0; r < nr; r++) {
      if (p->out[r].n) memcpy(sendbuf.e + sd[r], p->out[r].e, p->out[r].n * sizeof(pdes_event));
      p->out[r].n = 0;
    }
    if (p->in.cap < incoming) sim_grow((void **)&p->in.e, &p->in.cap, incoming, sizeof *p->in.e);
    MPI_Alltoallv(sendbuf.e, sc, sd, evt, p->in.e, rc, rd, evt, MPI_COMM_WORLD);
    for (size_t i = 0; i < incoming; i++) pdes__push(p, &p->in.e[i]);
    sim_free(sendbuf.e);
    sim_free(sc);
    MPI_Type_free(&evt);
  }
  sim_free(sendm);
  sim_free(recvm);
  return gmin;
}

/* The sparse exchange's reduction over [minimum time, sums, maxima]. */
static void pdes__red_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  uint64_t *a = in, *b = inout;
  for (int i = 0; i < *len; i++) {
    int w = i % (1 + 2 * PDES_REDUCE_WORDS);
    if (w == 0) b[i] = a[i] < b[i] ? a[i] : b[i];
    else if (w <= PDES_REDUCE_WORDS) b[i] += a[i];
    else if (a[i] > b[i]) b[i] = a[i];
  }
}

/* The same, as a sparse exchange (NBX: Hoefler, Siebert, Lumsdaine, "Scalable
 * communication protocols for dynamic sparse data exchange", PPoPP 2010):
 * a synchronous send to each rank this one has events for, receives of
 * whatever arrives, and a non-blocking barrier entered once this rank's sends
 * are matched; the barrier completing means every message of the window was
 * received. The minimum rides on an MPI_Iallreduce started first. Cost per
 * window: O(ranks written to) messages + O(log P) for the two collectives,
 * instead of the Alltoall's O(P). */
static simtime_ps pdes__sync_sparse(pdes *p) {
  enum { TAG = 0x7d5 };
  uint32_t nr = p->nranks;
  simtime_ps mine = pdes__q_refill(&p->q) ? p->q.heap[0].time : SIM_TIME_MAX, gmin = SIM_TIME_MAX;
  for (uint32_t r = 0; r < nr; r++)
    for (size_t i = 0; i < p->out[r].n; i++)
      if (p->out[r].e[i].time < mine) mine = p->out[r].e[i].time;
  /* [minimum, window sums, window maxima], reduced while the events move */
  uint64_t mv[1 + 2 * PDES_REDUCE_WORDS], gv[1 + 2 * PDES_REDUCE_WORDS];
  mv[0] = mine;
  memcpy(mv + 1, p->red, sizeof p->red);
  MPI_Request red, bar = MPI_REQUEST_NULL;
  MPI_Iallreduce(mv, gv, 1 + 2 * PDES_REDUCE_WORDS, MPI_UINT64_T, p->red_op, MPI_COMM_WORLD, &red);
  MPI_Request *sends = sim_malloc(nr * sizeof *sends);
  int nsends = 0;
  for (uint32_t r = 0; r < nr; r++) {
    if (!p->out[r].n) continue;
    if (p->out[r].n > (size_t)INT32_MAX / sizeof(pdes_event)) {
      sim_fatal("parallel engine: more than 2^25 events for one rank in one window");
    }
    MPI_Issend(p->out[r].e, (int)(p->out[r].n * sizeof(pdes_event)), MPI_BYTE, (int)r, TAG,
               MPI_COMM_WORLD, &sends[nsends++]);
  }
  bool barrier = false;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag) {
      int bytes = 0;
      MPI_Get_count(&st, MPI_BYTE, &bytes);
      size_t n = (size_t)bytes / sizeof(pdes_event);
      if (p->in.cap < n) sim_grow((void **)&p->in.e, &p->in.cap, n, sizeof *p->in.e);
      MPI_Recv(p->in.e, bytes, MPI_BYTE, st.MPI_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (size_t i = 0; i < n; i++) pdes__push(p, &p->in.e[i]);
      continue;
    }
    if (!barrier) {
      int done = 0;
      MPI_Testall(nsends, sends, &done, MPI_STATUSES_IGNORE);
      if (done) {
        MPI_Ibarrier(MPI_COMM_WORLD, &bar);
        barrier = true;
      }
    } else {
      int done = 0;
      MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
      if (done) break;
    }
  }
  for (uint32_t r = 0; r < nr; r++) p->out[r].n = 0;
  MPI_Wait(&red, MPI_STATUS_IGNORE);
  gmin = gv[0];
  memcpy(p->gred, gv + 1, sizeof p->gred);
  sim_free(sends);
  return gmin;
}
#endif

/* The window hook at a boundary: call it with the contributions of every
 * rank (combined by the exchange that just ran), fold what it scheduled into
 * t (the global minimum). */
static simtime_ps pdes__window_hook(pdes *p, simtime_ps t) {
  uint64_t g[2 * PDES_REDUCE_WORDS];
  memcpy(g, p->parallel ? p->gred : p->red, sizeof g); /* parallel: reduced in the exchange */
  memset(p->red, 0, sizeof p->red);
  p->in_hook = true;
  simtime_ps first = p->on_window(p, g, g + PDES_REDUCE_WORDS, p->model);
  p->in_hook = false;
  if (first < p->done_until) {
    sim_fatal(
        "parallel engine: the window hook scheduled an event at %llu ps, before "
        "the end of the window just run (%llu ps): a phase must start at least the "
        "lookahead (%llu ps) after the completion that triggers it",
        (unsigned long long)first, (unsigned long long)p->done_until,
        (unsigned long long)p->lookahead);
  }
  return first < t ? first : t;
}

uint64_t pdes_run(pdes *p, simtime_ps until) {
  uint64_t start = p->st.events;
  double t0 = sim_wall_s();
  if (!p->parallel && !p->on_window) {
    /* Sequential: one window covering everything; same key order. */
    p->window_end = SIM_TIME_MAX;
    while (pdes__q_refill(&p->q) && p->q.heap[0].time <= until) pdes__run_top(p);
    p->st.windows++;
    p->window_end = 0;
  } else {
    p->run_until = until;
    /* Windows [t, t + L): over the ranks, or on this process alone when a
     * window hook needs the same boundaries as the parallel run. An exchange
     * happens only when a window has run to its end and this call must go
     * further: the sequence of exchanges (and of the hook's collectives) is a
     * function of simulated time alone, the same on every rank however its
     * caller slices the run (a rank that stops inside a window resumes it). */
    for (;;) {
      if (p->win_open) {
        if (p->win_start == SIM_TIME_MAX) break; /* nothing pending anywhere */
        simtime_ps last = p->win_end - 1 < p->run_until ? p->win_end - 1 : p->run_until;
        p->window_end = p->win_end; /* sends across ranks must land at or after it */
        while (pdes__q_refill(&p->q) && p->q.heap[0].time <= last) pdes__run_top(p);
        p->window_end = 0;
        if (last < p->win_end - 1) break; /* the bound falls inside: resumed by the next call */
        p->win_open = false;
        p->done_until = p->win_end;
        p->st.windows++;
      }
      if (p->run_until < p->done_until || p->done_until == SIM_TIME_MAX) break;
      double s0 = sim_wall_s();
      simtime_ps t = SIM_TIME_MAX;
#ifdef FABSIM_HAVE_MPI
      if (p->parallel) t = p->dense ? pdes__sync(p) : pdes__sync_sparse(p);
#endif
      if (!p->parallel) t = pdes__q_refill(&p->q) ? p->q.heap[0].time : SIM_TIME_MAX;
      if (p->on_window) t = pdes__window_hook(p, t);
      p->st.sync_s += sim_wall_s() - s0;
      p->win_open = true;
      p->win_start = t;
      p->win_end = t > SIM_TIME_MAX - p->lookahead ? SIM_TIME_MAX : t + p->lookahead;
    }
  }
  p->st.wall_s += sim_wall_s() - t0;
  return p->st.events - start;
}
