/* Continuous batching over replicas (inf_run): a discrete-event simulation
 * of a request stream, in integer picoseconds.
 *
 * Events: a request arrives (dispatched to a replica: round-robin, or the
 * one with the fewest requests waiting and running, lowest index on a
 * tie); a replica's iteration ends. At equal times iteration ends come
 * first, by replica index, then arrivals in stream order. A replica
 * starts its next iteration as soon as one ends, or when a request reaches
 * it idle.
 *
 * A request holds num_tokens (prompt + generated) and num_computed (tokens
 * in its KV cache); an iteration schedules num_tokens - num_computed new
 * tokens of it (capped by the token budget), and when its cache then holds
 * every token it samples the next one (the first: its time to first
 * token). A sequence holds ceil(num_computed / block) KV blocks.
 *
 * Building an iteration (chunk true, vLLM's V1 scheduler): the running
 * sequences in admission order, each its pending tokens within the budget
 * (a decode 1, a prompt its next chunk); when a sequence needs a block and
 * none is free the last admitted running sequence is preempted (its
 * blocks freed, its tokens recomputed later: it goes back to the head of
 * the queue), the sequence itself when it is the last; then, unless a
 * sequence was preempted, waiting requests in order while the batch has
 * room (max_batch sequences), the budget tokens and their first chunk
 * blocks. chunk false (prefill first, as vLLM's V0 without chunked
 * prefill): an iteration admits the waiting prompts that fit whole, in
 * order; when none fits it runs every running sequence's decode.
 *
 * O(iterations x batch) time, O(requests) memory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer/inf_internal.h"

enum { WAITING, RUNNING, DONE };
#define NIL UINT32_MAX

typedef struct req {
  uint32_t tokens, computed, generated, output, prompt;
  uint32_t prev, next; /* the replica's waiting or running list */
  uint32_t replica;
  uint64_t blocks;
  simtime_ps arrival, first, done;
  uint8_t state;
} req;

typedef struct list {
  uint32_t head, tail, n;
} list;

typedef struct slot {
  uint32_t r, q;
} slot;

typedef struct replica {
  list waiting, running;
  uint64_t free_blocks;
  bool busy;
  simtime_ps end;
  slot *batch;
  uint32_t nbatch;
  uint32_t *snap; /* the running list at the iteration's start */
} replica;

typedef struct sim {
  const inf_model *im;
  const inf_sched *s;
  req *r;
  replica *rep;
  uint64_t preemptions, iterations, batch_sum;
  /* time integrals */
  simtime_ps first, last; /* the integrals run from the first arrival */
  double waiting_area, system_area, kv_area;
  uint64_t waiting, system, kv_used;
  double waiting_max, kv_max;
  uint32_t rr;
  /* the series: areas per bin (request-ps, block-ps), bins of bin_ps */
  simtime_ps bin_ps;
  double bw[INF_BINS], bk[INF_BINS];
} sim;

/* Bins of at least 1 ms, doubled (pairs merged) until `span` fits. */
static void bins_fit(sim *S, simtime_ps span) {
  while (span >= S->bin_ps * INF_BINS) {
    for (int i = 0; i < INF_BINS / 2; i++) {
      S->bw[i] = S->bw[2 * i] + S->bw[2 * i + 1];
      S->bk[i] = S->bk[2 * i] + S->bk[2 * i + 1];
    }
    for (int i = INF_BINS / 2; i < INF_BINS; i++) S->bw[i] = S->bk[i] = 0;
    S->bin_ps *= 2;
  }
}

/* The constant counts over [a, b) (from the first arrival) into the bins. */
static void bins_add(sim *S, simtime_ps a, simtime_ps b) {
  bins_fit(S, b);
  for (simtime_ps t = a; t < b;) {
    uint64_t i = t / S->bin_ps;
    simtime_ps end = (i + 1) * S->bin_ps < b ? (i + 1) * S->bin_ps : b;
    double dt = (double)(end - t);
    S->bw[i] += dt * (double)S->waiting;
    S->bk[i] += dt * (double)S->kv_used;
    t = end;
  }
}

static void list_push_back(req *r, list *l, uint32_t i) {
  r[i].prev = l->tail, r[i].next = NIL;
  if (l->tail != NIL) r[l->tail].next = i;
  else l->head = i;
  l->tail = i;
  l->n++;
}

static void list_push_front(req *r, list *l, uint32_t i) {
  r[i].next = l->head, r[i].prev = NIL;
  if (l->head != NIL) r[l->head].prev = i;
  else l->tail = i;
  l->head = i;
  l->n++;
}

static void list_remove(req *r, list *l, uint32_t i) {
  if (r[i].prev != NIL) r[r[i].prev].next = r[i].next;
  else l->head = r[i].next;
  if (r[i].next != NIL) r[r[i].next].prev = r[i].prev;
  else l->tail = r[i].prev;
  r[i].prev = r[i].next = NIL;
  l->n--;
}

/* The time integrals up to `now`. */
static void advance(sim *S, simtime_ps now) {
  double dt = (double)(now - S->last);
  if (now > S->last) bins_add(S, S->last - S->first, now - S->first);
  S->waiting_area += dt * (double)S->waiting;
  S->system_area += dt * (double)S->system;
  S->kv_area += dt * (double)S->kv_used;
  S->last = now;
}

static uint64_t blocks_for(const sim *S, uint64_t tokens) {
  uint64_t b = S->im->block;
  return (tokens + b - 1) / b;
}

static void set_blocks(sim *S, replica *p, req *q, uint64_t blocks) {
  p->free_blocks += q->blocks;
  S->kv_used -= q->blocks;
  p->free_blocks -= blocks;
  S->kv_used += blocks;
  q->blocks = blocks;
  double used = (double)S->kv_used;
  if (used > S->kv_max) S->kv_max = used;
}

static void count_waiting(sim *S, int64_t d) {
  S->waiting = (uint64_t)((int64_t)S->waiting + d);
  if ((double)S->waiting > S->waiting_max) S->waiting_max = (double)S->waiting;
}

static void preempt(sim *S, replica *p, uint32_t i) {
  req *q = &S->r[i];
  list_remove(S->r, &p->running, i);
  set_blocks(S, p, q, 0);
  q->computed = 0; /* recomputed: prompt and generated tokens prefilled again */
  q->state = WAITING;
  list_push_front(S->r, &p->waiting, i);
  count_waiting(S, 1);
  S->preemptions++;
}

static void add(replica *p, uint32_t i, uint32_t q) { p->batch[p->nbatch++] = (slot){i, q}; }

/* Blocks for request i to hold `tokens`, preempting the last running
 * sequences while none is free. False when i itself was preempted. */
static bool reserve(sim *S, replica *p, uint32_t i, uint64_t tokens, bool *preempted) {
  uint64_t need = blocks_for(S, tokens);
  req *q = &S->r[i];
  while (need > q->blocks && need - q->blocks > p->free_blocks) {
    uint32_t victim = p->running.tail;
    preempt(S, p, victim);
    *preempted = true;
    if (victim == i) return false;
  }
  set_blocks(S, p, q, need);
  return true;
}

static bool admit(sim *S, replica *p, uint32_t i, uint32_t q) {
  req *r = &S->r[i];
  uint64_t need = blocks_for(S, (uint64_t)r->computed + q);
  if (need > p->free_blocks) return false;
  list_remove(S->r, &p->waiting, i);
  count_waiting(S, -1);
  list_push_back(S->r, &p->running, i);
  r->state = RUNNING;
  set_blocks(S, p, r, need);
  add(p, i, q);
  return true;
}

static void build_chunked(sim *S, replica *p) {
  uint32_t budget = S->s->max_tokens, n = 0;
  bool preempted = false;
  for (uint32_t i = p->running.head; i != NIL; i = S->r[i].next) p->snap[n++] = i;
  for (uint32_t k = 0; k < n && budget > 0; k++) {
    uint32_t i = p->snap[k];
    req *q = &S->r[i];
    if (q->state != RUNNING) continue; /* preempted for an earlier one */
    uint32_t want = q->tokens - q->computed, t = want < budget ? want : budget;
    if (!reserve(S, p, i, (uint64_t)q->computed + t, &preempted)) continue;
    add(p, i, t);
    budget -= t;
  }
  if (preempted && p->nbatch) return;
  while (p->waiting.head != NIL && p->running.n < S->s->max_batch && budget > 0) {
    uint32_t i = p->waiting.head;
    req *q = &S->r[i];
    uint32_t want = q->tokens - q->computed, t = want < budget ? want : budget;
    if (!admit(S, p, i, t)) break;
    budget -= t;
  }
}

static void build_prefill_first(sim *S, replica *p) {
  uint32_t budget = S->s->max_tokens, n = 0;
  while (p->waiting.head != NIL && p->running.n < S->s->max_batch) {
    uint32_t i = p->waiting.head;
    uint32_t want = S->r[i].tokens - S->r[i].computed;
    if (want > budget || !admit(S, p, i, want)) break;
    budget -= want;
  }
  if (p->nbatch) return;
  bool preempted = false;
  for (uint32_t i = p->running.head; i != NIL; i = S->r[i].next) p->snap[n++] = i;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t i = p->snap[k];
    req *q = &S->r[i];
    if (q->state != RUNNING) continue;
    if (reserve(S, p, i, (uint64_t)q->computed + 1, &preempted)) add(p, i, 1);
  }
}

/* Start replica p's next iteration at `now` if it has work. */
static void start(sim *S, replica *p, simtime_ps now) {
  p->nbatch = 0;
  if (S->s->chunk) build_chunked(S, p);
  else build_prefill_first(S, p);
  if (!p->nbatch) {
    p->busy = false;
    return;
  }
  inf_batch b = {0};
  for (uint32_t k = 0; k < p->nbatch; k++) {
    const req *q = &S->r[p->batch[k].r];
    double t = p->batch[k].q, c = q->computed;
    if (q->computed + p->batch[k].q == q->tokens) b.sampled++;
    if (t == 1 && q->computed > 0 && q->generated > 0) {
      b.decode_seqs++;
      b.decode_kv += c + 1;
    } else {
      b.prefill_seqs++;
      b.prefill_tokens += t;
      b.prefill_pairs += t * c + t * (t + 1) / 2;
      b.prefill_kv += c + t;
    }
  }
  p->busy = true;
  p->end = now + inf__iter_ps(S->im, &b);
  S->iterations++;
  S->batch_sum += p->nbatch;
}

static void finish(sim *S, replica *p, simtime_ps now) {
  for (uint32_t k = 0; k < p->nbatch; k++) {
    uint32_t i = p->batch[k].r;
    req *q = &S->r[i];
    q->computed += p->batch[k].q;
    if (q->computed < q->tokens) continue;
    q->generated++;
    q->tokens++;
    if (q->generated == 1) q->first = now;
    if (q->generated < q->output) continue;
    q->done = now;
    q->state = DONE;
    list_remove(S->r, &p->running, i);
    set_blocks(S, p, q, 0);
    S->system--;
  }
  p->nbatch = 0;
}

static uint32_t dispatch(sim *S) {
  const inf_sched *s = S->s;
  if (s->dispatch == CFG_INF_ROUND_ROBIN) return S->rr++ % s->replicas;
  uint32_t best = 0;
  uint64_t load = UINT64_MAX;
  for (uint32_t k = 0; k < s->replicas; k++) {
    uint64_t l = (uint64_t)S->rep[k].waiting.n + S->rep[k].running.n;
    if (l < load) load = l, best = k;
  }
  return best;
}

long inf_unservable(const inf_model *im, const inf_sched *s, const inf_requests *q, char *why,
                    size_t cap) {
  for (size_t i = 0; i < q->n; i++) {
    const inf_request *r = &q->r[i];
    uint64_t need = (uint64_t)r->prompt + r->output - 1; /* the last token is not cached */
    uint64_t blocks = (need + im->block - 1) / im->block;
    if (blocks > im->kv_blocks) {
      snprintf(why, cap,
               "a request of %u prompt and %u output tokens needs %llu tokens of KV cache; a "
               "replica holds %llu",
               r->prompt, r->output, (unsigned long long)(blocks * im->block),
               (unsigned long long)im->kv_tokens);
      return (long)i;
    }
    if (!s->chunk && r->prompt + (uint64_t)r->output - 1 > s->max_tokens) {
      snprintf(why, cap,
               "without chunked prefill a prompt is prefilled whole (recomputed with its "
               "output after a preemption): %llu tokens, over max_tokens %u",
               (unsigned long long)r->prompt + r->output - 1, s->max_tokens);
      return (long)i;
    }
  }
  return -1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Nearest-rank percentiles of v[0..n) (sorted here). */
static inf_dist dist_of(double *v, size_t n) {
  inf_dist d = {0};
  if (!n) return d;
  qsort(v, n, sizeof *v, cmp_double);
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  const double ps[3] = {0.50, 0.90, 0.99};
  double *out[3] = {&d.p50, &d.p90, &d.p99};
  for (int k = 0; k < 3; k++) {
    size_t rank = (size_t)ceil(ps[k] * (double)n);
    *out[k] = v[rank ? rank - 1 : 0];
  }
  d.mean = sum / (double)n;
  d.max = v[n - 1];
  return d;
}

static void figures(inf_result *o, const sim *S, const inf_requests *q) {
  const inf_sched *s = S->s;
  size_t n = q->n, nt = 0;
  double *ttft = sim_malloc((n ? n : 1) * sizeof *ttft);
  double *tpot = sim_malloc((n ? n : 1) * sizeof *tpot);
  double *e2e = sim_malloc((n ? n : 1) * sizeof *e2e);
  double in = 0, out = 0;
  uint64_t ok_ttft = 0, ok_tpot = 0, ok_both = 0;
  simtime_ps last = 0;
  for (size_t i = 0; i < n; i++) {
    const req *r = &S->r[i];
    double a = sim_ps_to_s(r->first - r->arrival), e = sim_ps_to_s(r->done - r->arrival);
    ttft[i] = a, e2e[i] = e;
    bool t_ok = a <= s->slo_ttft_s, p_ok = true;
    if (r->output > 1) {
      double tp = (e - a) / (r->output - 1);
      tpot[nt++] = tp;
      p_ok = tp <= s->slo_tpot_s;
    }
    ok_ttft += t_ok, ok_tpot += p_ok, ok_both += t_ok && p_ok;
    in += r->prompt, out += r->output;
    if (r->done > last) last = r->done;
  }
  o->requests = o->completed = n;
  o->ttft = dist_of(ttft, n);
  o->tpot = dist_of(tpot, nt);
  o->e2e = dist_of(e2e, n);
  o->span_s = n ? sim_ps_to_s(last - q->r[0].arrival) : 0;
  double span = o->span_s > 0 ? o->span_s : 1, gpus = o->gpus ? o->gpus : 1;
  o->rps = (double)n / span;
  o->input_tps = in / span;
  o->output_tps = out / span;
  o->rps_per_gpu = o->rps / gpus;
  o->output_tps_per_gpu = o->output_tps / gpus;
  double c = n ? (double)n : 1;
  o->slo_ttft = (double)ok_ttft / c, o->slo_tpot = (double)ok_tpot / c;
  o->slo_both = (double)ok_both / c;
  o->goodput_rps = (double)ok_both / span;
  double T = S->last > S->first ? (double)(S->last - S->first) : 1;
  double blocks = (double)S->im->kv_blocks * s->replicas;
  o->waiting_mean = S->waiting_area / T;
  o->waiting_max = S->waiting_max;
  o->in_system_mean = S->system_area / T;
  o->kv_mean = S->kv_area / T / blocks;
  o->kv_max = S->kv_max / blocks;
  o->preemptions = S->preemptions;
  o->iterations = S->iterations;
  o->batch_mean = S->iterations ? (double)S->batch_sum / (double)S->iterations : 0;
  simtime_ps len = S->last - S->first;
  o->series.bin_s = sim_ps_to_s(S->bin_ps);
  o->series.nbins = (uint32_t)(len ? (len - 1) / S->bin_ps + 1 : 0);
  for (uint32_t i = 0; i < o->series.nbins; i++) {
    simtime_ps lo = i * S->bin_ps, hi = lo + S->bin_ps < len ? lo + S->bin_ps : len;
    double w = (double)(hi - lo);
    o->series.waiting[i] = S->bw[i] / w;
    o->series.kv[i] = S->bk[i] / w / blocks;
  }
  sim_free(ttft);
  sim_free(tpot);
  sim_free(e2e);
}

int inf_run(inf_result *out, const inf_model *im, const inf_sched *s, const inf_requests *q,
            sim_error *err) {
  char why[256];
  memset(out, 0, sizeof *out); /* padding too: results compare byte for byte */
  long bad = inf_unservable(im, s, q, why, sizeof why);
  if (bad >= 0) return sim_fail(err, SIM_EINVAL, "request %ld: %s", bad + 1, why);
  sim S = {.im = im, .s = s, .bin_ps = SIM_PS_PER_MS};
  S.r = sim_calloc(q->n ? q->n : 1, sizeof *S.r);
  S.rep = sim_calloc(s->replicas, sizeof *S.rep);
  for (uint32_t k = 0; k < s->replicas; k++) {
    replica *p = &S.rep[k];
    p->waiting = p->running = (list){NIL, NIL, 0};
    p->free_blocks = im->kv_blocks;
    p->batch = sim_malloc(((size_t)s->max_batch + 1) * sizeof *p->batch);
    p->snap = sim_malloc(((size_t)s->max_batch + 1) * sizeof *p->snap);
  }
  for (size_t i = 0; i < q->n; i++)
    S.r[i] = (req){.tokens = q->r[i].prompt,
                   .prompt = q->r[i].prompt,
                   .output = q->r[i].output,
                   .arrival = q->r[i].arrival,
                   .prev = NIL,
                   .next = NIL};
  size_t next = 0;
  S.first = S.last = q->n ? q->r[0].arrival : 0;
  for (;;) {
    uint32_t who = NIL;
    simtime_ps t_end = SIM_TIME_MAX;
    for (uint32_t k = 0; k < s->replicas; k++)
      if (S.rep[k].busy && S.rep[k].end < t_end) t_end = S.rep[k].end, who = k;
    bool arrivals = next < q->n;
    if (who == NIL && !arrivals) break;
    if (who != NIL && (!arrivals || t_end <= q->r[next].arrival)) {
      replica *p = &S.rep[who];
      advance(&S, t_end);
      finish(&S, p, t_end);
      start(&S, p, t_end);
      continue;
    }
    simtime_ps now = q->r[next].arrival;
    advance(&S, now);
    uint32_t k = dispatch(&S);
    replica *p = &S.rep[k];
    S.r[next].replica = k;
    S.r[next].state = WAITING;
    list_push_back(S.r, &p->waiting, (uint32_t)next);
    count_waiting(&S, 1);
    S.system++;
    next++;
    if (!p->busy) start(&S, p, now);
  }
  out->gpus = im->tp * s->replicas;
  out->kv_tokens = im->kv_tokens;
  out->kv_token_bytes = im->kv_token_bytes;
  out->kv_token_gpu = im->kv_token_gpu;
  out->weights_per_gpu = im->weights_per_gpu;
  if (q->n)
    inf_alone_s(im, q->r[0].prompt, q->r[0].output, s->chunk ? s->max_tokens : UINT32_MAX,
                &out->alone_ttft_s, &out->alone_e2e_s);
  figures(out, &S, q);
  for (uint32_t k = 0; k < s->replicas; k++) {
    sim_free(S.rep[k].batch);
    sim_free(S.rep[k].snap);
  }
  sim_free(S.rep);
  sim_free(S.r);
  return SIM_OK;
}
