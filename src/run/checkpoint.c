/* Checkpoints of a training run written to the storage servers
 * (workload.checkpoint.*, storage.*; fabsim/run.h run_ckpt).
 *
 * Size: the model's parameters x (weight + optimizer bytes per parameter,
 * wl_bytes_per_param: bf16 Adam 2 + 12 = 14 B) unless workload.checkpoint.size
 * gives it: what Megatron and DeepSpeed save (the weights and the fp32
 * optimizer state with its master weights; gradients are not saved).
 * Writers: under ZeRO (workload.parallel.zero >= 1, a distributed
 * optimizer) every GPU holds a shard of the optimizer state and writes an
 * equal share; without it the GPUs of data-parallel ranks 0 .. ep-1 (one
 * replica of every model-parallel and expert shard) write it all, in pieces
 * over every storage endpoint (spread), so the checkpoint writes at the
 * servers' whole write bandwidth, not at the part of it its writers'
 * endpoints would hold.
 *
 * When: after step k for every k multiple of workload.checkpoint.every that
 * has a step after it (a checkpoint after the last simulated step has no
 * step to collide with and is not taken). async: the write is submitted at
 * that step's end and the next step starts at once (the burst meets its
 * collectives on the links they share); sync: the next step waits for it
 * (wl_job_hold). One checkpoint is in flight at a time, as an async saver
 * keeps one outstanding: a checkpoint due while the previous one still
 * writes starts when it ends.
 *
 * Where: storage.attach backend, on the run's backend (the tap sees the
 * bytes, the spines carry both); separate, on a backend of the storage
 * fabric (topo_build_storage, run_storage: one for all the jobs of a jobs:
 * list) on the same simulation, which shares no link with the training
 * traffic (the nodes' PCIe and NVLink inside the node are
 * not shared in the model either: a known omission).
 *
 * Failures: a write or read with a transfer that failed (be_failure: no
 * route after a fault, a retry limit) is not done: the checkpoint is
 * "failed" (its transfers, the bytes they did not deliver, the first
 * cause) and has no time or bandwidth; the read counts in loads_failed,
 * not in loads (issue 27, defect 6). A listener on the backend the
 * transfers go to tells them apart from the others' by direction (GPU to
 * storage endpoint, or back) and GPU (a writer or reader of this job),
 * and hands every failure on.
 */
#include <stdio.h>
#include <string.h>

#include "fabsim/run.h"
#include "run/run_internal.h"

uint64_t run_ckpt_size(const cfg_scenario *cfg, const wl_model *m) {
  if (cfg->workload.checkpoint.size) return cfg->workload.checkpoint.size;
  double w, g, o;
  wl_bytes_per_param(cfg->workload.precision, cfg->workload.optimizer, &w, &g, &o);
  return (uint64_t)(m->params * (w + o) + 0.5);
}

/* The writers' GPUs in rank order (d, s, t), d outermost. */
static uint32_t writers_of(const wl_parallel *p, uint32_t *out) {
  uint32_t nd = p->zero >= 1 ? p->dp : (p->ep ? p->ep : 1), n = 0;
  for (uint32_t d = 0; d < nd; d++)
    for (uint32_t s = 0; s < p->pp; s++)
      for (uint32_t t = 0; t < p->tp; t++) out[n++] = wl_rank_gpu(p, d, s, t);
  return n;
}

/* `bytes` moved between the GPUs gpu[0..n) and every storage endpoint of st
 * (E in all): each GPU's equal share in p = ceil(E / n) pieces (1 when
 * n >= E), piece k of the n x p between GPU k mod n and endpoint k mod E
 * (server (k mod E) mod servers); write: GPU -> endpoint, else endpoint ->
 * GPU. Every endpoint holds an equal part of its server's drives, so the
 * pieces reach all of them (the same bytes each when n x p is a multiple of
 * E). Returns the transfers (owned by the caller), *nx of them, the pieces
 * summing to `bytes` exactly. O(n x p). */
static be_xfer *spread(const topo *st, const uint32_t *gpu, uint32_t n, uint64_t bytes, bool write,
                       uint64_t salt, size_t *nx, uint32_t *pieces) {
  uint32_t servers = topo_storage_servers(st), eps = topo_storage_endpoints(st);
  uint64_t slots = (uint64_t)servers * eps;
  *pieces = n >= slots ? 1 : (uint32_t)((slots + n - 1) / n);
  *nx = (size_t)n * *pieces;
  be_xfer *v = sim_calloc(*nx ? *nx : 1, sizeof *v);
  uint64_t share = bytes / *nx, rest = bytes % *nx;
  for (size_t k = 0; k < *nx; k++) {
    uint32_t slot = (uint32_t)(k % slots);
    uint32_t g = gpu[k % n], ep = topo_storage_endpoint(st, slot % servers, slot / servers);
    v[k].src_gpu = write ? g : ep;
    v[k].dst_gpu = write ? ep : g;
    v[k].bytes = share + (k < rest);
    v[k].flow_hash = sim_hash_u64(salt ^ k); /* its own entropy */
  }
  return v;
}

/* Data loading: the tokens of one step, global batch x seq_len x 4 bytes
 * (int32 token ids: Megatron's indexed datasets store uint16 below a 65,536
 * vocabulary, int32 above), read by tensor rank 0 of the first stage of
 * each data-parallel replica (its tensor ranks receive them over NVLink in
 * Megatron: not modelled), a replica's share each, spread over the servers'
 * endpoints (spread). A few MB per step: small against the checkpoint. */
static void plan_loads(run_ckpt *c, const wl_parallel *p, const topo *st) {
  c->readers = p->dp;
  c->load_bytes = p->global_batch * (uint64_t)c->cfg->workload.model.seq_len * 4;
  uint32_t *r = sim_malloc((c->readers ? c->readers : 1) * sizeof *r), pieces;
  for (uint32_t d = 0; d < c->readers; d++) r[d] = wl_rank_gpu(p, d, 0, 0);
  c->rx =
      spread(st, r, c->readers, c->load_bytes, false, 0x6c6f6164ull /* "load" */, &c->nrx, &pieces);
  sim_free(r);
}

int run_storage_begin(run_storage *s, const cfg_scenario *cfg, const cfg_doc *doc, sim_ctx *sim,
                      sim_error *err) {
  memset(s, 0, sizeof *s);
  s->cfg = sim_malloc(sizeof *s->cfg);
  int rc = topo_build_storage(&s->t, s->cfg, cfg, err);
  if (rc == SIM_OK) rc = be_create(&s->be, sim, s->t, s->cfg, doc, err);
  return rc;
}

void run_storage_free(run_storage *s) {
  be_destroy(s->be);
  topo_free(s->t);
  sim_free(s->cfg);
  memset(s, 0, sizeof *s);
}

/* A failed transfer on the backend the writes and reads go to. */
static void on_failure(void *ctx, const be_failure *f) {
  run_ckpt *c = ctx;
  uint32_t n = c->role_n;
  if (c->inflight && f->dst_gpu >= n && f->src_gpu < n && (c->role[f->src_gpu] & 1)) {
    run_checkpoint *k = &c->v[c->started - 1]; /* a write: GPU -> storage */
    if (!k->failed++) k->cause = f->cause;
    k->undelivered += f->bytes - f->bytes_delivered;
  } else if (c->load_inflight && f->src_gpu >= n && f->dst_gpu < n &&
             (c->role[f->dst_gpu] & 2)) { /* a read: storage -> GPU */
    if (!c->load_failed_now && !c->load_cause) c->load_cause = f->cause;
    c->load_failed_now = true;
  }
  if (c->prev_failure) c->prev_failure(c->prev_failure_ctx, f);
}

/* The writers' and readers' GPUs, and our listener ahead of be's. */
static void listen(run_ckpt *c, const topo *st) {
  c->role_n = topo_gpu_count(st);
  c->role = sim_calloc(c->role_n ? c->role_n : 1, 1);
  for (size_t i = 0; i < c->nx; i++)
    if (c->x[i].src_gpu < c->role_n) c->role[c->x[i].src_gpu] |= 1;
  for (size_t i = 0; i < c->nrx; i++)
    if (c->rx[i].dst_gpu < c->role_n) c->role[c->rx[i].dst_gpu] |= 2;
  c->prev_failure = c->be->on_failure;
  c->prev_failure_ctx = c->be->on_failure_ctx;
  c->be->on_failure = on_failure;
  c->be->on_failure_ctx = c;
}

int run_ckpt_begin(run_ckpt *c, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                   be_backend *be, const run_storage *storage, wl_job *job, sim_error *err) {
  memset(c, 0, sizeof *c);
  c->every = cfg->workload.checkpoint.every;
  c->load = cfg->workload.data_loading;
  if (!c->every && !c->load) return SIM_OK;
  c->cfg = cfg;
  c->job = job;
  c->sim = be->sim;
  c->sync = cfg->workload.checkpoint.mode == CFG_CKPT_SYNC;
  c->separate = cfg->storage.attach == CFG_STORAGE_SEPARATE;
  const wl_parallel *p = wl_job_parallel(job);
  const topo *st = t;
  c->be = be;
  if (c->separate) {
    if (!storage) {
      int rc = run_storage_begin(&c->own, cfg, doc, be->sim, err);
      if (rc != SIM_OK) return rc;
      storage = &c->own;
    }
    c->shared = storage;
    st = storage->t;
    c->be = storage->be;
  }
  wl_model m;
  int mrc = wl_model_from_cfg(&m, cfg, doc, err);
  if (mrc != SIM_OK) return mrc;
  c->size = run_ckpt_size(cfg, &m);
  uint32_t gpus = p->dp * p->tp * p->pp, *w = sim_malloc((gpus ? gpus : 1) * sizeof *w);
  c->writers = writers_of(p, w);
  c->x = spread(st, w, c->writers, c->size, true, 0x636b7074ull /* "ckpt" */, &c->nx, &c->pieces);
  sim_free(w);
  if (c->load) plan_loads(c, p, st);
  listen(c, st);
  return SIM_OK;
}

/* Start the next checkpoint due, now. */
static void ckpt_done(sim_ctx *sim, void *ctx);
static void ckpt_start(run_ckpt *c) {
  run_checkpoint *k = &c->v[c->started++];
  k->start = sim_now(c->sim);
  c->inflight = true;
  be_submit_phase(c->be, c->x, c->nx, 1, ckpt_done, c);
}

static void ckpt_done(sim_ctx *sim, void *ctx) {
  run_ckpt *c = ctx;
  run_checkpoint *k = &c->v[c->started - 1];
  k->end = sim_now(sim);
  c->inflight = false;
  if (!k->failed) c->done++; /* a failed write is not a checkpoint */
  if (c->started < c->n) {
    ckpt_start(c);
    return;
  }
  if (c->sync) wl_job_release(c->job);
  if (c->draining && !c->load_inflight) ev_stop(sim); /* the job is over: finish waits */
}

static void load_done(sim_ctx *sim, void *ctx) {
  run_ckpt *c = ctx;
  simtime_ps took = sim_now(sim) - c->load_start;
  if (c->load_failed_now) { /* the tokens did not arrive */
    c->loads_failed++;
    c->load_failed_now = false;
  } else {
    if (took > c->load_max) c->load_max = took;
    c->loads++;
  }
  c->load_inflight = false;
  if (c->draining && !c->inflight) ev_stop(sim);
}

void run_ckpt_step(run_ckpt *c, uint32_t step, simtime_ps end) {
  if (!c->every && !c->load) return; /* (nothing set: cfg is NULL) */
  bool more = step + 1 < c->cfg->workload.steps;
  if (c->load && more) { /* the next step's tokens; the step does not wait */
    if (c->load_inflight) {
      c->loads_late++; /* the previous read is still going: it carries on */
    } else {
      c->load_inflight = true;
      c->load_start = end;
      be_submit_phase(c->be, c->rx, c->nrx, 1, load_done, c);
    }
  }
  if (!c->every || (step + 1) % c->every || !more) return;
  sim_grow((void **)&c->v, &c->cap, c->n + 1, sizeof *c->v);
  run_checkpoint *k = &c->v[c->n++];
  memset(k, 0, sizeof *k);
  k->after_step = step + 1;
  k->bytes = c->size;
  k->writers = c->writers;
  if (c->sync) wl_job_hold(c->job);
  if (!c->inflight) ckpt_start(c);
}

bool run_ckpt_busy(const run_ckpt *c) { return c->inflight || c->load_inflight; }

int run_ckpt_finish(run_ckpt *c, const run_training *tr, sim_error *err) {
  if (!c->every && !c->load) return SIM_OK;
  /* a write (or read) still in flight when the last step ended: run until it is done */
  c->draining = true;
  while ((c->inflight || c->load_inflight) && !sim_interrupt_pending()) {
    uint64_t ran = ev_run(c->sim, SIM_TIME_MAX);
    if (ran == 0) break; /* nothing left to run: cannot finish */
  }
  c->draining = false;
  run_ckpt_account(c, tr->job, tr->base);
  /* a write or read due past the horizon of simulated time: no figure */
  return sim_past_horizon(c->sim, NULL) ? sim_horizon_fail(c->sim, err) : SIM_OK;
}

void run_ckpt_account(run_ckpt *c, const wl_job *job, const wl_job *base) {
  uint32_t nb = base ? wl_job_steps_done(base) : 0;
  for (size_t i = 0; i < c->n; i++) {
    run_checkpoint *k = &c->v[i];
    k->first_step = k->last_step = 0;
    k->slowdown_s = k->stall_s = 0;
    if (!k->end) continue;
    for (uint32_t s = 0; s < wl_job_steps_done(job); s++) {
      const wl_step *r = wl_job_step(job, s);
      if (r->end_ps <= k->start || r->start_ps >= k->end) continue;
      if (!k->first_step) k->first_step = s + 1;
      k->last_step = s + 1;
      if (s < nb) {
        const wl_step *b = wl_job_step(base, s);
        k->slowdown_s +=
            sim_ps_to_s(r->end_ps - r->start_ps) - sim_ps_to_s(b->end_ps - b->start_ps);
      }
    }
    if (c->sync && k->after_step - 1 < wl_job_steps_done(job)) {
      /* the job waited from the end of its step to the write's end */
      const wl_step *r = wl_job_step(job, k->after_step - 1);
      k->stall_s = k->end > r->end_ps ? sim_ps_to_s(k->end - r->end_ps) : 0;
    }
  }
}

void run_ckpt_free(run_ckpt *c) { /* after the backends: their listener points here */
  sim_free(c->role);
  run_storage_free(&c->own);
  sim_free(c->x);
  sim_free(c->rx);
  sim_free(c->v);
  memset(c, 0, sizeof *c);
}

void run_ckpt_events(const run_ckpt *c, const char *job, run_events *log) {
  char detail[320], comp[96], a[32];
  for (size_t i = 0; c->every && i < c->n; i++) {
    const run_checkpoint *k = &c->v[i];
    if (job) snprintf(comp, sizeof comp, "%.60s/checkpoint%zu", job, i + 1);
    else snprintf(comp, sizeof comp, "checkpoint%zu", i + 1);
    snprintf(detail, sizeof detail,
             "after step %u: %llu bytes from %u GPUs to %s storage servers (%s, %s)", k->after_step,
             (unsigned long long)k->bytes, k->writers,
             c->separate ? "the separate fabric's" : "the backend fabric's",
             c->sync ? "sync: the job waits" : "async: beside the next steps",
             c->separate ? "storage.attach separate" : "storage.attach backend");
    run_event_add(log, k->start, comp, "checkpoint-start", detail);
    if (!k->end) continue;
    if (k->failed) {
      snprintf(detail, sizeof detail,
               "not written: %u of its transfers failed (the first: %s), %llu bytes "
               "undelivered",
               k->failed, k->cause ? k->cause : "unknown", (unsigned long long)k->undelivered);
      run_event_add(log, k->end, comp, "checkpoint-failed", detail);
      continue;
    }
    double s = sim_ps_to_s(k->end - k->start);
    snprintf(a, sizeof a, "%.4g", s > 0 ? (double)k->bytes / s / 1e9 : 0);
    snprintf(detail, sizeof detail,
             "written in %.6g s (%s GB/s); the %u steps it overlapped took %.6g s longer than "
             "%s%s",
             s, a, k->first_step ? k->last_step - k->first_step + 1 : 0, k->slowdown_s,
             job ? "the job alone without checkpoints" : "without checkpoints",
             c->sync ? "; the job waited for it" : "");
    run_event_add(log, k->end, comp, "checkpoint-end", detail);
  }
}
