/* One training step: build the DAG (dag.c), run it on a backend, and account
 * where each stage's time went.
 *
 * Executor: a node starts when its dependencies are done and it is the head
 * of its stream. Computations are timers; a collective is submitted to the
 * backend as its class's plan (live), or, under comm_model reuse, waits the
 * time that plan took when it ran once alone on the fabric.
 *
 * Symmetry (the assumption that makes 16,384 GPUs cheap): every data-
 * parallel replica and tensor-parallel rank of a stage does the same work at
 * the same time, so the DAG has one representative per stage, and each
 * collective is every group of the stage at once. Live, the fabric sees all
 * transfers of all concurrent collectives. Reuse additionally assumes that a
 * collective of a given kind, stage and size takes the same time every time
 * it runs, which ignores contention between different collectives in flight
 * together (e.g. gradient buckets with pipeline sends). Symmetric also
 * assumes the stages alike: a collective is measured on the first stage that
 * runs it (sends: per direction), which holds when the stages sit on
 * translated copies of the same fabric (tp-dp-pp on a fat-tree). auto takes
 * the first of live, reuse, symmetric that submits at most 2 M transfers
 * (live at the packet fidelity: 20 k).
 *
 * Accounting per stage: at every start and end of one of its nodes the time
 * since the previous change goes to compute (a computation running), else
 * exposed communication (a collective of the stage, or a pipeline send into
 * or out of it, in flight), else bubble. So compute + exposed + bubble is the
 * step time for every stage, exactly.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "workload/wl_internal.h"

enum { TRANSFERS_MAX = 2000000 }; /* auto: what a mode may submit */
#define MAX_NODES 20000000ull

const char *wl_comm_kind_name(wl_comm_kind k) {
  static const char *const names[WL_COMM_KINDS] = {
      "tp_allreduce",     "ep_dispatch",  "ep_combine",    "pp_send",           "dp_allreduce",
      "dp_reducescatter", "dp_allgather", "edp_allreduce", "edp_reducescatter", "edp_allgather",
  };
  return k < WL_COMM_KINDS ? names[k] : "(invalid)";
}

typedef struct stage_acc {
  simtime_ps last;
  uint32_t comm; /* collectives in flight touching the stage */
  bool busy;     /* a computation running */
  simtime_ps compute, exposed, bubble, by_role[3];
  simtime_ps wait;    /* of compute: a full-speed GPU's wait for the stage's slowest */
  simtime_ps sm_lost; /* of compute: what communication kernels' SMs took from it */
} stage_acc;

typedef struct run run;
typedef struct slot {
  coll_exec e;
  run *r;
  uint32_t node;
} slot;

struct run {
  wl__dag *d;
  be_backend *b;
  sim_ctx *sim;
  bool reuse;    /* reuse or symmetric: timers of measured durations */
  size_t failed; /* the class whose plan could not be built */
  simtime_ps t0;
  stage_acc *acc;
  uint32_t *cur; /* per stream: the node at its head */
  slot *slots;
  size_t nslots;
  size_t done;
  /* the job around the DAG (wl_job_*) */
  const wl_model *m;
  const wl_parallel *p;
  const cfg_scenario *cfg;
  uint32_t steps_want, steps_done;
  wl_step *steps;            /* steps_done filled, and the one running; grown as steps start */
  size_t stepcap, stepsinit; /* capacity; entries initialised from proto */
  wl_step proto;             /* what every step shares before it runs (comm model, transfers) */
  uint32_t *deps0;           /* each node's dependency count, to rerun the DAG */
  uint32_t ngpu;
  uint32_t *gpu_stage;             /* WL_NO_STAGE: outside the job */
  double *gpu_speed;               /* 1: full speed; the lower of the two below */
  double *gpu_fault, *gpu_thermal; /* the last slowdown fault's factor; the rack's throttle */
  double *stage_speed;             /* the slowest GPU of the stage (symmetry: the representative) */
  uint32_t *sm_busy;               /* per stage: SMs held by communication kernels in flight */
  double sms;                      /* cluster.gpu_sms */
  uint32_t *run_node;              /* per stage: the computation running, or WL__NONE */
  ev_id *run_ev;
  simtime_ps *run_end;
  wl_gpu_event *ev;
  size_t nev, evcap;
  bool running, stopped;
  simtime_ps stop_at;
  wl_coll_timer timer; /* reuse, symmetric: who times each collective (none: its measured time) */
  void (*on_step)(void *ctx, uint32_t step, simtime_ps start, simtime_ps end);
  void *on_step_ctx;
  bool hold, held;            /* wl_job_hold: the next step waits for wl_job_release */
  const char *past_horizon;   /* what would have taken the job past WL_HORIZON_PS (static) */
  be_failure_fn prev_failure; /* the backend's failure listener before the job took it */
  void *prev_failure_ctx;
  /* what the stages did over time (wl_job_gpu_timeline): [bin][stage][state] */
  simtime_ps *tl;
  simtime_ps *tl_wait; /* [bin][stage]: a full-speed GPU's wait for the stage's slowest */
  uint32_t *ever_slow; /* per stage: its GPUs slowed below full speed at some time */
  uint8_t *was_slow;   /* per GPU: counted in ever_slow */
  simtime_ps tl_width;
  uint32_t tl_n;
};

/* Halve the timeline's resolution: bins 2b and 2b+1 become bin b. */
static void tl_coarsen(run *r) {
  size_t w = (size_t)r->p->pp * WL_GPU_STATES;
  for (uint32_t b = 0; b < WL_GPU_BINS / 2; b++)
    for (size_t k = 0; k < w; k++)
      r->tl[b * w + k] = r->tl[2 * b * w + k] + r->tl[(2 * b + 1) * w + k];
  memset(r->tl + (size_t)WL_GPU_BINS / 2 * w, 0, (size_t)WL_GPU_BINS / 2 * w * sizeof *r->tl);
  size_t pp = r->p->pp;
  for (uint32_t b = 0; b < WL_GPU_BINS / 2; b++)
    for (size_t k = 0; k < pp; k++)
      r->tl_wait[b * pp + k] = r->tl_wait[2 * b * pp + k] + r->tl_wait[(2 * b + 1) * pp + k];
  memset(r->tl_wait + (size_t)WL_GPU_BINS / 2 * pp, 0,
         (size_t)WL_GPU_BINS / 2 * pp * sizeof *r->tl_wait);
  r->tl_width *= 2;
  r->tl_n = (r->tl_n + 1) / 2;
}

/* Stage s spent [from, to) in state k (0 compute, 1 exposed, 2 bubble). */
static void tl_add(run *r, uint32_t s, unsigned k, simtime_ps from, simtime_ps to) {
  if (to > WL_HORIZON_PS) to = WL_HORIZON_PS; /* (the job stops there: wl_job_run_until) */
  if (!r->tl || to <= from) return;
  /* WL_GPU_BINS bins of at most WL_HORIZON_PS / WL_GPU_BINS cover the
   * horizon: the width never doubles past that, the product never wraps */
  while (to > r->tl_width * WL_GPU_BINS) tl_coarsen(r);
  size_t w = (size_t)r->p->pp * WL_GPU_STATES;
  while (from < to) {
    simtime_ps b = from / r->tl_width, end = (b + 1) * r->tl_width;
    if (end > to) end = to;
    r->tl[b * w + (size_t)s * WL_GPU_STATES + k] += end - from;
    /* computing at the speed of its slowest GPU: the others are done
     * early, and wait the rest (a full-speed GPU: (1 - speed) of it) */
    if (k == 0 && r->stage_speed && r->stage_speed[s] < 1)
      r->tl_wait[b * r->p->pp + s] +=
          (simtime_ps)llround((double)(end - from) * (1 - r->stage_speed[s]));
    if (b + 1 > r->tl_n) r->tl_n = (uint32_t)b + 1;
    from = end;
  }
}

/* The share of stage s's SMs its computation has while communication
 * kernels hold sm_busy of them (at least one SM is left to it). */
static double sm_share(const run *r, uint32_t s) {
  if (!r->sm_busy || r->sm_busy[s] == 0) return 1;
  double busy = r->sm_busy[s] >= r->sms ? r->sms - 1 : r->sm_busy[s];
  return (r->sms - busy) / r->sms;
}

/* The speed stage s computes at: its slowest GPU's, less the SMs taken. */
static double speed_of(const run *r, uint32_t s) {
  return (r->stage_speed ? r->stage_speed[s] : 1) * sm_share(r, s);
}

static void account(run *r, uint32_t s, simtime_ps now) {
  stage_acc *a = &r->acc[s];
  simtime_ps dt = now - a->last;
  unsigned k = a->busy ? 0 : a->comm ? 1 : 2;
  if (k == 0) {
    a->compute += dt;
    double share = sm_share(r, s);
    if (share < 1) a->sm_lost += (simtime_ps)llround((double)dt * (1 - share));
    if (r->stage_speed && r->stage_speed[s] < 1)
      a->wait += (simtime_ps)llround((double)dt * (1 - r->stage_speed[s]));
  } else if (k == 1) {
    a->exposed += dt;
  } else {
    a->bubble += dt;
  }
  tl_add(r, s, k, a->last, now);
  a->last = now;
}

static void node_start(run *r, uint32_t i);
static void sm_take(run *r, uint32_t s, uint32_t sms, bool start, simtime_ps now);

/* `work` picoseconds of compute at `speed` of full speed, rounded up;
 * false (and the job marked past its horizon) when that would end past
 * WL_HORIZON_PS: the caller schedules nothing. */
static bool slowed(run *r, double work, double speed, simtime_ps now, simtime_ps *out) {
  double d = ceil(work / speed);
  if (!(d < (double)(WL_HORIZON_PS - now))) {
    if (!r->past_horizon) r->past_horizon = "a computation slowed by a gpu-slowdown fault";
    r->running = false;
    ev_stop(r->sim);
    return false;
  }
  *out = (simtime_ps)d;
  return true;
}

static void try_start(run *r, uint32_t i) {
  wl__node *x = &r->d->nodes[i];
  if (x->deps == 0 && r->cur[x->stage * WL__STREAMS + x->stream] == i) node_start(r, i);
}

static void step_finished(run *r, simtime_ps now);

static bool gradient_reduction(wl_comm_kind k) {
  return k == WL_COMM_DP_ALLREDUCE || k == WL_COMM_DP_REDUCESCATTER || k == WL_COMM_EDP_ALLREDUCE ||
         k == WL_COMM_EDP_REDUCESCATTER;
}

static void node_end(run *r, uint32_t i) {
  wl__dag *d = r->d;
  wl__node *x = &d->nodes[i];
  simtime_ps now = sim_now(r->sim);
  if (r->stopped) return; /* the job failed: whatever was in flight is lost */
  account(r, x->stage, now);
  if (x->cls == WL__NONE) {
    r->acc[x->stage].busy = false;
    r->acc[x->stage].by_role[x->role] += now - x->start;
    if (r->run_node) r->run_node[x->stage] = WL__NONE;
  } else {
    r->acc[x->stage].comm--;
    if (x->peer != WL__NONE) {
      account(r, x->peer, now);
      r->acc[x->peer].comm--;
    }
    const wl__class *c = &d->cls[x->cls];
    sm_take(r, x->stage, c->sms, false, now);
    if (x->peer != WL__NONE) sm_take(r, x->peer, c->sms, false, now);
    wl_comm_total *t = &r->steps[r->steps_done].comm[c->kind];
    t->count++;
    t->bytes += c->bytes;
    t->time_s += sim_ps_to_s(now - x->start);
    t->group = c->group;
  }
  r->done++;
  uint32_t *cur = &r->cur[x->stage * WL__STREAMS + x->stream];
  *cur = x->next;
  if (x->next != WL__NONE) try_start(r, x->next);
  for (uint32_t e = x->first_edge; e != WL__NONE; e = d->edge_next[e]) {
    uint32_t to = d->edge_to[e];
    if (--d->nodes[to].deps == 0) try_start(r, to);
  }
  if (r->done == d->n && r->running) step_finished(r, now);
}

static void node_end_ev(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)sim;
  node_end(obj, (uint32_t)arg);
}

static void slot_done(sim_ctx *sim, void *ctx) {
  slot *s = ctx;
  (void)sim;
  node_end(s->r, s->node);
}

/* The computation running on stage s (if any) finishes its remaining
 * work at the speed now in effect; it ran at `old` until now. */
static void respeed(run *r, uint32_t s, double old, simtime_ps now) {
  uint32_t i = r->run_node ? r->run_node[s] : WL__NONE;
  double sp = speed_of(r, s);
  if (i == WL__NONE || sp == old || r->run_end[s] <= now) return;
  simtime_ps dur;
  ev_cancel(r->sim, r->run_ev[s]);
  if (!slowed(r, (double)(r->run_end[s] - now) * old, sp, now, &dur)) return;
  r->run_ev[s] = ev_schedule_in(r->sim, dur, node_end_ev, r, i);
  r->run_end[s] = now + dur;
}

/* A communication kernel of `sms` SMs starts (+) or ends (-) on stage s
 * (accounted up to now by the caller). */
static void sm_take(run *r, uint32_t s, uint32_t sms, bool start, simtime_ps now) {
  if (!sms || !r->sm_busy) return;
  double old = speed_of(r, s);
  if (start) r->sm_busy[s] += sms;
  else r->sm_busy[s] -= sms;
  respeed(r, s, old, now);
}

static void node_start(run *r, uint32_t i) {
  wl__dag *d = r->d;
  wl__node *x = &d->nodes[i];
  simtime_ps now = sim_now(r->sim);
  x->start = now;
  account(r, x->stage, now);
  if (x->cls == WL__NONE) {
    r->acc[x->stage].busy = true;
    simtime_ps dur = x->dur;
    double sp = speed_of(r, x->stage);
    if (sp < 1 && !slowed(r, (double)x->dur, sp, now, &dur)) return;
    ev_id id = ev_schedule_in(r->sim, dur, node_end_ev, r, i);
    if (r->run_node) {
      r->run_node[x->stage] = i;
      r->run_ev[x->stage] = id;
      r->run_end[x->stage] = now + dur;
    }
    return;
  }
  r->acc[x->stage].comm++;
  if (x->peer != WL__NONE) {
    account(r, x->peer, now);
    r->acc[x->peer].comm++;
  }
  wl__class *c = &d->cls[x->cls];
  sm_take(r, x->stage, c->sms, true, now);
  if (x->peer != WL__NONE) sm_take(r, x->peer, c->sms, true, now); /* the receiving kernel */
  if (gradient_reduction(c->kind))
    for (size_t k = 0; k < r->nev; k++) { /* corrupted data leaves the GPU here */
      wl_gpu_event *e = &r->ev[k];
      if (e->kind == WL_GPU_SDC && !e->diverged && e->stage == x->stage) {
        e->diverged = true;
        e->diverge_step = r->steps_done;
        e->diverge_at = now;
      }
    }
  if (r->reuse && r->timer.start) {
    r->timer.start(r->timer.ctx, x->cls, i, c->measured); /* ends by wl_job_coll_end */
  } else if (r->reuse) {
    ev_schedule_in(r->sim, c->measured, node_end_ev, r, i);
  } else {
    slot *s = &r->slots[x->aux];
    s->r = r;
    s->node = i;
    coll_exec_start(&s->e, r->b, &c->plan, slot_done, s);
  }
}

/* Two classes that differ at most in their stage (sends: same direction). */
static bool same_shape(const wl__class *a, const wl__class *b) {
  if (a->kind != b->kind || a->bytes != b->bytes) return false;
  return a->kind != WL_COMM_PP_SEND || (a->peer > a->stage) == (b->peer > b->stage);
}

/* Representative of each class: itself, or under `symmetric` the first
 * class of the same shape. O(classes^2) worst case; classes are few. */
static void representatives(const wl__dag *d, bool symmetric, uint32_t *rep) {
  for (size_t i = 0; i < d->ncls; i++) {
    rep[i] = (uint32_t)i;
    for (size_t j = 0; symmetric && j < i; j++)
      if (rep[j] == j && same_shape(&d->cls[i], &d->cls[j])) {
        rep[i] = (uint32_t)j;
        break;
      }
  }
}

static void measured(sim_ctx *sim, void *ctx) {
  (void)ctx;
  ev_stop(sim);
}

/* Reuse: each representative class once, alone, one after another (plans
 * freed after), its time copied to the classes it stands for. */
static int measure_classes(run *r, const uint32_t *rep, sim_error *err) {
  wl__dag *d = r->d;
  sim_test_pause("timing"); /* tests: the classes about to be timed */
  for (size_t i = 0; i < d->ncls; i++) {
    wl__class *c = &d->cls[i];
    if (rep[i] != i) {
      c->measured = d->cls[rep[i]].measured;
      continue;
    }
    int rc = wl__class_plan(d, c, err);
    if (rc != SIM_OK) {
      r->failed = i;
      return rc;
    }
    coll_exec e;
    coll_exec_start(&e, r->b, &c->plan, measured, NULL);
    /* measured() stops it: faults stay pending; Ctrl-C: SIM_EINTR, not measured */
    if (!e.finished && ev_run_interruptible(r->sim, SIM_TIME_MAX)) {
      coll_plan_free(&c->plan);
      c->built = false;
      return SIM_EINTR;
    }
    c->measured = e.end - e.start;
    coll_plan_free(&c->plan);
    c->built = false;
    if (r->stopped) break; /* a failure (GPU, node, transfer) while timing: the job is over */
  }
  return SIM_OK;
}

/* A collective the placement cannot build (e.g. an expert-parallel group
 * that is not whole node blocks) is bad input: located at the key that
 * shapes it. */
static int plan_error(const cfg_doc *doc, const wl__class *c, sim_error *err) {
  char msg[sizeof err->msg];
  const char *key = c->kind == WL_COMM_TP_ALLREDUCE ? "workload.parallel.tp"
                    : c->kind == WL_COMM_EP_DISPATCH || c->kind == WL_COMM_EP_COMBINE
                        ? "workload.parallel.ep"
                        : "workload.parallel.dp_algorithm";
  snprintf(msg, sizeof msg, "%s", err->msg);
  return cfg_fail_at(doc, key, err, "%s (%s on stage %u)", msg, wl_comm_kind_name(c->kind),
                     c->stage);
}

static uint64_t nodes_bound(const wl_model *m, const wl_parallel *p, const cfg_scenario *cfg) {
  double grads = 0;
  for (uint32_t l = 0; l < m->layers; l++) grads += wl_layer_params(m, l, false);
  grads = (grads + m->embedding + m->head) * 4 / p->tp;
  double buckets = grads / (double)cfg->workload.bucket_size + 2.0 * p->pp;
  double per_mb = 16.0 * (m->layers + 2.0 * p->pp) + 4.0 * p->pp;
  double total = (double)p->micro_batches * (per_mb + (p->zero >= 2 ? buckets : 0)) + 2 * buckets;
  return total > 1e18 ? UINT64_MAX : (uint64_t)total;
}

static void summarize(run *r, wl_step *o, const wl_model *m, const wl_parallel *p,
                      const cfg_scenario *cfg, simtime_ps end) {
  double pp = p->pp;
  o->time_s = sim_ps_to_s(end - r->t0);
  o->nstages = p->pp;
  o->stages = sim_calloc(p->pp, sizeof *o->stages);
  for (uint32_t s = 0; s < p->pp; s++) {
    account(r, s, end);
    const stage_acc *a = &r->acc[s];
    wl_stage_time *st = &o->stages[s];
    st->compute_s = sim_ps_to_s(a->compute);
    st->exposed_comm_s = sim_ps_to_s(a->exposed);
    st->bubble_s = sim_ps_to_s(a->bubble);
    st->forward_s = sim_ps_to_s(a->by_role[WL__FWD]);
    st->backward_s = sim_ps_to_s(a->by_role[WL__BWD]);
    st->optimizer_s = sim_ps_to_s(a->by_role[WL__OPT]);
    o->compute_s += st->compute_s / pp;
    o->exposed_comm_s += st->exposed_comm_s / pp;
    o->bubble_s += st->bubble_s / pp;
    o->forward_s += st->forward_s / pp;
    o->backward_s += st->backward_s / pp;
    o->optimizer_s += st->optimizer_s / pp;
    o->comm_sm_lost_s += sim_ps_to_s(a->sm_lost) / pp;
  }
  /* The share of compute (at full speed) in memory-bound operations: every
   * compute node runs once per step. O(nodes). */
  double mem = 0, nominal = 0;
  for (size_t i = 0; i < r->d->n; i++) {
    const wl__node *x = &r->d->nodes[i];
    if (x->cls != WL__NONE) continue;
    mem += sim_ps_to_s(x->mem);
    nominal += sim_ps_to_s(x->dur);
    if (x->stage < p->pp) o->stages[x->stage].recompute_s += sim_ps_to_s(x->rc);
  }
  for (uint32_t s = 0; s < p->pp; s++) { /* what each stage holds */
    wl_stage_time *st = &o->stages[s];
    for (uint32_t c = 0; c < p->vstages; c++) {
      wl_chunk k;
      wl_stage_chunk(m, p, s, c, &k);
      st->layers += k.count;
      st->embedding = st->embedding || k.embedding;
      st->head = st->head || k.head;
    }
  }
  o->memory_bound_s = mem / pp;
  o->memory_bound_frac = nominal > 0 ? mem / nominal : 0;
  /* GPU-time computing: a stage's slowed GPUs compute all of its compute
   * time, the others less what they waited for them */
  double per = (double)p->dp * p->tp, busy = 0;
  for (uint32_t s = 0; s < p->pp; s++) {
    double slow = r->ever_slow && r->ever_slow[s] < per ? r->ever_slow[s] : per;
    if (!r->ever_slow) slow = per;
    busy += sim_ps_to_s(r->acc[s].compute) * per - sim_ps_to_s(r->acc[s].wait) * (per - slow);
  }
  o->gpus = p->dp * p->tp * p->pp;
  o->tokens = (double)p->global_batch * m->seq_len;
  o->model_flops = 6 * m->params_active * o->tokens;
  if (o->time_s > 0) {
    o->gpu_idle_frac = 1 - busy / (per * pp * o->time_s);
    o->bubble_frac = o->bubble_s / o->time_s;
    o->tokens_per_s = o->tokens / o->time_s;
    o->mfu = o->model_flops / (o->time_s * wl__peak_flops(cfg) * o->gpus);
  }
  o->bubble_frac_1f1b = (pp - 1) / (p->micro_batches + pp - 1);
  double v = p->vstages, mb = p->micro_batches;
  if (p->schedule == CFG_SCHED_INTERLEAVED) o->bubble_frac_schedule = (pp - 1) / (v * mb + pp - 1);
  else if (p->schedule == CFG_SCHED_1F1B) o->bubble_frac_schedule = o->bubble_frac_1f1b;
  else if (o->time_s > 0) { /* F, B: a chunk's forward and whole backward, the mean over GPUs
                               (each runs m of them); W = F as the report's table takes it */
    double F = o->forward_s / mb, B = o->backward_s / mb;
    o->bubble_frac_schedule = (pp / 2 - 1) * ((F + B) + B - 3 * F) / o->time_s;
  }
}

/* ---- the job: steps one after another, GPU faults ------------------------------ */

struct wl_job {
  wl_model m;
  wl_parallel p;
  wl__dag d;
  run r;
  uint32_t *rep;
  uint32_t *gpu_map; /* wl_job_create_on's GPUs (p.gpu_map); NULL: the cluster's 0 .. n-1 */
  bool started;
  bool measured; /* reuse, symmetric: the classes' times are known (wl_job_measure) */
};

static void start_step(run *r) {
  wl__dag *d = r->d;
  sim_grow((void **)&r->steps, &r->stepcap, r->steps_done + 1, sizeof *r->steps);
  if (r->stepsinit <= r->steps_done) {
    r->steps[r->steps_done] = r->proto;
    r->stepsinit = r->steps_done + 1;
  }
  size_t nstreams = (size_t)r->p->pp * WL__STREAMS;
  for (size_t i = 0; i < d->n; i++) d->nodes[i].deps = r->deps0[i];
  memset(r->acc, 0, r->p->pp * sizeof *r->acc);
  r->t0 = sim_now(r->sim);
  for (uint32_t s = 0; s < r->p->pp; s++) r->acc[s].last = r->t0;
  memcpy(r->cur, d->head, nstreams * sizeof *r->cur);
  r->done = 0;
  for (size_t i = 0; i < nstreams; i++)
    if (r->cur[i] != WL__NONE) try_start(r, r->cur[i]);
}

static void step_finished(run *r, simtime_ps now) {
  wl_step *o = &r->steps[r->steps_done];
  summarize(r, o, r->m, r->p, r->cfg, now);
  o->start_s = sim_ps_to_s(r->t0);
  o->start_ps = r->t0;
  o->end_ps = now;
  o->model = *r->m;
  o->parallel = *r->p;
  o->nodes = r->d->n;
  o->classes = r->d->ncls;
  for (size_t i = 0; i < r->d->n; i++) o->comm_nodes += r->d->nodes[i].cls != WL__NONE;
  if (r->on_step) r->on_step(r->on_step_ctx, r->steps_done, r->t0, now);
  r->steps_done++;
  if (r->steps_done < r->steps_want && r->hold) {
    r->hold = false;
    r->held = true; /* wl_job_release starts it */
  } else if (r->steps_done < r->steps_want) {
    start_step(r);
  } else {
    r->running = false;
    ev_stop(r->sim); /* later events (faults past the end) stay pending */
  }
}

static wl_gpu_event *add_event(run *r, wl_gpu_event_kind kind, simtime_ps now, uint32_t gpu) {
  sim_grow((void **)&r->ev, &r->evcap, r->nev + 1, sizeof *r->ev);
  wl_gpu_event *e = &r->ev[r->nev++];
  memset(e, 0, sizeof *e);
  e->kind = kind;
  e->at = now;
  e->gpu = gpu;
  e->stage = gpu < r->ngpu ? r->gpu_stage[gpu] : WL_NO_STAGE;
  e->step = r->steps_done;
  e->factor = 1;
  return e;
}

void wl_job_slowdown(wl_job *j, simtime_ps now, uint32_t gpu, double factor, bool thermal) {
  run *r = &j->r;
  if (r->stopped || !(factor > 0)) return;
  if (factor > 1) factor = 1;
  for (size_t k = r->nev; k-- > 0;) /* the same fault played twice (by two players) counts once */
    if (r->ev[k].gpu == gpu &&
        (r->ev[k].kind == WL_GPU_SLOWDOWN || r->ev[k].kind == WL_GPU_THERMAL)) {
      if (r->ev[k].at == now && r->ev[k].factor == factor) return;
      break;
    }
  wl_gpu_event *e = add_event(r, thermal ? WL_GPU_THERMAL : WL_GPU_SLOWDOWN, now, gpu);
  e->factor = factor;
  if (e->stage == WL_NO_STAGE) return;
  uint32_t s = e->stage;
  double was = r->gpu_speed[gpu], old = r->stage_speed[s], sp = old, old_eff = speed_of(r, s);
  if (thermal) r->gpu_thermal[gpu] = factor;
  else r->gpu_fault[gpu] = factor; /* a later fault replaces an earlier one; the rack's stays */
  factor = r->gpu_fault[gpu] < r->gpu_thermal[gpu] ? r->gpu_fault[gpu] : r->gpu_thermal[gpu];
  r->gpu_speed[gpu] = factor;
  if (factor <= old) {
    sp = factor;
  } else if (was <= old) { /* the slowest GPU got faster: O(GPUs) rescan */
    sp = 1;
    for (uint32_t g = 0; g < r->ngpu; g++)
      if (r->gpu_stage[g] == s && r->gpu_speed[g] < sp) sp = r->gpu_speed[g];
  }
  if (sp != old && r->running) account(r, s, now); /* the time before, at the old speed */
  r->stage_speed[s] = sp;
  if (factor < 1 && !r->was_slow[gpu]) r->was_slow[gpu] = 1, r->ever_slow[s]++;
  /* the computation in progress finishes its remaining work at the new speed */
  if (sp != old) respeed(r, s, old_eff, now);
}

static void hook_slowdown(void *ctx, simtime_ps now, uint32_t gpu, double factor) {
  wl_job_slowdown(ctx, now, gpu, factor, false);
}

static void hook_fail(void *ctx, simtime_ps now, uint32_t gpu, bool whole_node) {
  wl_job *j = ctx;
  run *r = &j->r;
  if (r->stopped || r->steps_done >= r->steps_want) return; /* after the job: nothing to stop */
  add_event(r, whole_node ? WL_NODE_FAIL : WL_GPU_FAIL, now, gpu);
  r->stopped = true;
  r->running = false;
  r->stop_at = now;
  ev_stop(r->sim);
}

/* A transfer of the job's collectives failed: the job fails there (see
 * workload.h), after the previous listener heard of it. A failure after the
 * job's end or stop (transfers in flight abandoned) changes nothing. */
static void on_transfer_failed(void *ctx, const be_failure *f) {
  wl_job *j = ctx;
  run *r = &j->r;
  if (r->prev_failure) r->prev_failure(r->prev_failure_ctx, f);
  if (r->stopped || r->steps_done >= r->steps_want) return; /* (also while timing, reuse) */
  if (f->src_gpu >= r->ngpu || r->gpu_stage[f->src_gpu] == WL_NO_STAGE)
    return; /* another job's transfer (jobs: several on one backend) */
  simtime_ps now = sim_now(r->sim);
  wl_gpu_event *e = add_event(r, WL_TRANSFER_FAIL, now, f->src_gpu);
  e->dst_gpu = f->dst_gpu;
  e->cause = f->cause;
  r->stopped = true;
  r->running = false;
  r->stop_at = now;
  ev_stop(r->sim);
}

static void hook_sdc(void *ctx, simtime_ps now, uint32_t gpu) {
  wl_job *j = ctx;
  if (j->r.stopped) return;
  for (size_t k = 0; k < j->r.nev; k++)
    if (j->r.ev[k].kind == WL_GPU_SDC && j->r.ev[k].gpu == gpu && j->r.ev[k].at == now) return;
  add_event(&j->r, WL_GPU_SDC, now, gpu);
}

flt_gpu_hooks wl_job_hooks(wl_job *j) {
  return (flt_gpu_hooks){.ctx = j, .slowdown = hook_slowdown, .fail = hook_fail, .sdc = hook_sdc};
}

int wl_job_create(wl_job **out, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                  be_backend *b, uint32_t steps, sim_error *err) {
  return wl_job_create_on(out, cfg, doc, t, b, steps, NULL, topo_gpu_count(t), err);
}

int wl_job_create_on(wl_job **out, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                     be_backend *b, uint32_t steps, const uint32_t *gpus, uint32_t ngpus,
                     sim_error *err) {
  wl_job *j = sim_calloc(1, sizeof *j);
  wl__dag *d = &j->d;
  run *r = &j->r;
  int rc;
  *out = NULL;
  if ((rc = wl_model_from_cfg(&j->m, cfg, doc, err)) != SIM_OK) goto fail;
  if ((rc = wl_parallel_from_cfg(&j->p, &j->m, cfg, doc, ngpus, err)) != SIM_OK) goto fail;
  if (gpus) { /* the job's GPUs: its ranks' layout maps onto them */
    j->gpu_map = sim_malloc((ngpus ? ngpus : 1) * sizeof *j->gpu_map);
    memcpy(j->gpu_map, gpus, ngpus * sizeof *gpus);
    j->p.gpu_map = j->gpu_map;
  }
  const wl_model *m = &j->m;
  const wl_parallel *p = &j->p;
  wl_memory mem; /* the summary reports it: refuse what it cannot represent */
  wl_memory_compute(&mem, m, p, cfg);
  if ((rc = wl_memory_check(&mem, m, cfg, doc, err)) != SIM_OK) goto fail;
  uint64_t bound = nodes_bound(m, p, cfg);
  if (bound > MAX_NODES) {
    rc = cfg_fail_at(doc, "workload.global_batch", err,
                     "a step of %u micro-batches over %u layers needs about %llu DAG nodes "
                     "(limit %llu); use fewer micro-batches or a larger workload.bucket_size",
                     p->micro_batches, m->layers, (unsigned long long)bound, MAX_NODES);
    goto fail;
  }
  d->m = m;
  d->p = p;
  d->cfg = cfg;
  d->t = t;
  wl__hw_init(&d->hw, cfg);
  wl_bytes_per_param(cfg->workload.precision, cfg->workload.optimizer, &d->wbytes, &d->gbytes,
                     &d->obytes);
  d->abytes = cfg->workload.precision == CFG_PRECISION_FP32 ? 4 : 2;
  d->rbytes = wl__grad_reduce_bytes(cfg, d->gbytes);
  wl__moe_draw(d);
  wl__dag_build(d);

  r->d = d;
  r->b = b;
  r->sim = b->sim;
  r->m = m;
  r->p = p;
  r->cfg = cfg;
  r->steps_want = steps ? steps : 1;
  uint32_t *rep = j->rep = sim_malloc((d->ncls ? d->ncls : 1) * sizeof *rep);
  uint64_t live = 0, reuse = 0, symmetric = 0;
  representatives(d, true, rep);
  for (size_t i = 0; i < d->ncls; i++) {
    live += d->cls[i].transfers * d->cls[i].instances;
    reuse += d->cls[i].transfers;
    symmetric += rep[i] == i ? d->cls[i].transfers : 0;
  }
  cfg_comm_model cm = cfg->workload.comm_model;
  /* every packet of a live step costs events: 100 times less there */
  uint64_t live_max =
      cfg->simulation.fidelity == CFG_FIDELITY_PACKET ? TRANSFERS_MAX / 100 : TRANSFERS_MAX;
  if (cm == CFG_COMM_AUTO)
    cm = live <= live_max         ? CFG_COMM_LIVE
         : reuse <= TRANSFERS_MAX ? CFG_COMM_REUSE
                                  : CFG_COMM_SYMMETRIC;
  r->proto.transfers_estimate = live;
  r->proto.comm_model = cm;
  r->proto.transfers_measured = cm == CFG_COMM_LIVE ? 0 : cm == CFG_COMM_REUSE ? reuse : symmetric;
  r->reuse = cm != CFG_COMM_LIVE;
  if (!r->reuse) {
    for (size_t i = 0; i < d->ncls; i++)
      if ((rc = wl__class_plan(d, &d->cls[i], err)) != SIM_OK) {
        rc = plan_error(doc, &d->cls[i], err);
        goto fail;
      }
    for (size_t i = 0; i < d->n; i++)
      if (d->nodes[i].cls != WL__NONE) d->nodes[i].aux = (uint32_t)r->nslots++;
    r->slots = sim_calloc(r->nslots ? r->nslots : 1, sizeof *r->slots);
  } else { /* each class measured later is built now, to be refused before the run */
    representatives(d, cm == CFG_COMM_SYMMETRIC, rep);
    for (size_t i = 0; i < d->ncls; i++) {
      if (rep[i] != i) continue;
      if ((rc = wl__class_plan(d, &d->cls[i], err)) != SIM_OK) {
        rc = plan_error(doc, &d->cls[i], err);
        goto fail;
      }
      coll_plan_free(&d->cls[i].plan); /* one at a time: measure_classes builds it again */
      d->cls[i].built = false;
    }
  }
  r->acc = sim_calloc(p->pp, sizeof *r->acc);
  r->cur = sim_malloc((size_t)p->pp * WL__STREAMS * sizeof *r->cur);
  r->deps0 = sim_malloc((d->n ? d->n : 1) * sizeof *r->deps0);
  for (size_t i = 0; i < d->n; i++) r->deps0[i] = d->nodes[i].deps;
  r->ngpu = topo_gpu_count(t);
  r->gpu_stage = sim_malloc((r->ngpu ? r->ngpu : 1) * sizeof *r->gpu_stage);
  r->gpu_speed = sim_malloc((r->ngpu ? r->ngpu : 1) * sizeof *r->gpu_speed);
  r->gpu_fault = sim_malloc((r->ngpu ? r->ngpu : 1) * sizeof *r->gpu_fault);
  r->gpu_thermal = sim_malloc((r->ngpu ? r->ngpu : 1) * sizeof *r->gpu_thermal);
  for (uint32_t g = 0; g < r->ngpu; g++) {
    r->gpu_stage[g] = WL_NO_STAGE;
    r->gpu_speed[g] = r->gpu_fault[g] = r->gpu_thermal[g] = 1;
  }
  for (uint32_t dd = 0; dd < p->dp; dd++)
    for (uint32_t s = 0; s < p->pp; s++)
      for (uint32_t tt = 0; tt < p->tp; tt++) {
        uint32_t g = wl_rank_gpu(p, dd, s, tt);
        if (g < r->ngpu) r->gpu_stage[g] = s;
      }
  r->tl = sim_calloc((size_t)WL_GPU_BINS * p->pp * WL_GPU_STATES, sizeof *r->tl);
  r->tl_width = 1000; /* 1 ns; doubles as the job outgrows WL_GPU_BINS bins */
  r->tl_wait = sim_calloc((size_t)WL_GPU_BINS * p->pp, sizeof *r->tl_wait);
  r->ever_slow = sim_calloc(p->pp, sizeof *r->ever_slow);
  r->was_slow = sim_calloc(r->ngpu ? r->ngpu : 1, 1);
  r->stage_speed = sim_malloc(p->pp * sizeof *r->stage_speed);
  r->sm_busy = sim_calloc(p->pp, sizeof *r->sm_busy);
  r->sms = cfg->cluster.gpu_sms;
  r->run_node = sim_malloc(p->pp * sizeof *r->run_node);
  r->run_ev = sim_calloc(p->pp, sizeof *r->run_ev);
  r->run_end = sim_calloc(p->pp, sizeof *r->run_end);
  for (uint32_t s = 0; s < p->pp; s++) {
    r->stage_speed[s] = 1;
    r->run_node[s] = WL__NONE;
  }
  *out = j;
  return SIM_OK;
fail:
  wl_job_free(j);
  return rc;
}

/* The job takes the backend's failure listener (workload.h: from here on). */
static void listen(wl_job *j) {
  run *r = &j->r;
  j->started = true;
  r->prev_failure = r->b->on_failure;
  r->prev_failure_ctx = r->b->on_failure_ctx;
  r->b->on_failure = on_transfer_failed;
  r->b->on_failure_ctx = j;
}

int wl_job_measure(wl_job *j, be_backend *b, const cfg_doc *doc, sim_error *err) {
  run *r = &j->r;
  if (!r->reuse || j->measured || j->started) return SIM_OK;
  be_backend *own = r->b;
  sim_ctx *own_sim = r->sim;
  r->b = b; /* measure_classes runs the plans on r->b's simulation */
  r->sim = b->sim;
  representatives(&j->d, r->proto.comm_model == CFG_COMM_SYMMETRIC, j->rep);
  int rc = measure_classes(r, j->rep, err);
  r->b = own;
  r->sim = own_sim;
  if (rc == SIM_EINTR) return sim_fail(err, rc, "stopped (Ctrl-C) while timing the collectives");
  if (rc != SIM_OK) return plan_error(doc, &j->d.cls[r->failed], err);
  j->measured = true;
  return SIM_OK;
}

int wl_job_start(wl_job *j, sim_error *err) {
  if (j->started) return SIM_OK;
  if (j->r.reuse && !j->measured)
    return sim_fail(err, SIM_EINVAL,
                    "wl_job_start: the job times its collectives (comm model %s) and they were "
                    "not measured (wl_job_measure)",
                    cfg_comm_model_name(j->r.proto.comm_model));
  listen(j);
  j->r.running = true;
  start_step(&j->r);
  return SIM_OK;
}

int wl_job_run_until(wl_job *j, simtime_ps until, const cfg_doc *doc, sim_error *err) {
  run *r = &j->r;
  wl__dag *d = &j->d;
  int rc;
  if (!j->started) {
    listen(j);
    if (r->reuse && !j->measured) {
      representatives(d, r->proto.comm_model == CFG_COMM_SYMMETRIC, j->rep);
      if ((rc = measure_classes(r, j->rep, err)) == SIM_EINTR)
        return sim_fail(err, rc, "stopped (Ctrl-C) while timing the collectives");
      if (rc != SIM_OK) return plan_error(doc, &d->cls[r->failed], err);
      if (r->stopped) return SIM_OK; /* failed while its collectives were being timed */
    }
    r->t0 = sim_now(r->sim); /* a failure before the first step: nothing done in it */
    r->running = true;
    start_step(r);
  }
  if (r->running && !r->stopped) ev_run(r->sim, until); /* returns early at the job's end */
  if (!r->past_horizon && r->running && sim_past_horizon(r->sim, NULL))
    r->past_horizon = "an event of the run (a transfer, a latency, a checkpoint) due past it";
  if (!r->past_horizon && r->running && sim_now(r->sim) >= WL_HORIZON_PS)
    r->past_horizon = "an event of the run";
  if (r->past_horizon) {
    r->running = false;
    return sim_fail(err, SIM_ERANGE,
                    "simulated time would pass the horizon of %.4g s (2^62 ps, %.1f days) in "
                    "step %u, at %.6g s: %s; the job stops here. Slow it less, or simulate "
                    "fewer steps",
                    sim_ps_to_s(WL_HORIZON_PS), sim_ps_to_s(WL_HORIZON_PS) / 86400,
                    r->steps_done + 1, sim_ps_to_s(sim_now(r->sim)), r->past_horizon);
  }
  /* nothing pending: stalled, unless a co-engine (the parallel packet engine)
   * still holds events past `until` (sim_pending counts this context's only) */
  if (r->running && !r->stopped && sim_pending(r->sim) == 0 &&
      (until == SIM_TIME_MAX || !sim_has_coengine(r->sim)))
    return sim_fail(err, SIM_EINVAL, "training step stalled with %zu of %zu nodes done (a bug)",
                    r->done, d->n);
  return SIM_OK;
}

void wl_job_set_coll_timer(wl_job *j, const wl_coll_timer *t) {
  memset(&j->r.timer, 0, sizeof j->r.timer);
  if (t) j->r.timer = *t;
}

void wl_job_coll_end(wl_job *j, uint32_t node) { node_end(&j->r, node); }

uint32_t wl_job_classes(const wl_job *j) { return (uint32_t)j->d.ncls; }

cfg_comm_model wl_job_comm_model(const wl_job *j) { return j->r.proto.comm_model; }

simtime_ps wl_job_class_measured(const wl_job *j, uint32_t cls) {
  return cls < j->d.ncls ? j->d.cls[cls].measured : 0;
}

int wl_job_class_plan(wl_job *j, uint32_t cls, const coll_plan **out, sim_error *err) {
  wl__class *c = &j->d.cls[cls];
  int rc = wl__class_plan(&j->d, c, err);
  *out = rc == SIM_OK ? &c->plan : NULL;
  return rc;
}

void wl_job_class_plan_free(wl_job *j, uint32_t cls) {
  wl__class *c = &j->d.cls[cls];
  if (!c->built || j->r.slots) return; /* live: the executor's plans stay */
  coll_plan_free(&c->plan);
  c->built = false;
}

bool wl_job_active(const wl_job *j) { return !j->started || (j->r.running && !j->r.stopped); }

int wl_job_run(wl_job *j, const cfg_doc *doc, sim_error *err) {
  int rc = SIM_OK;
  while (rc == SIM_OK && wl_job_active(j)) rc = wl_job_run_until(j, SIM_TIME_MAX, doc, err);
  return rc;
}

void wl_job_hold(wl_job *j) { j->r.hold = true; }

void wl_job_release(wl_job *j) {
  run *r = &j->r;
  r->hold = false;
  if (!r->held) return;
  r->held = false;
  if (r->running && !r->stopped) start_step(r);
}

void wl_job_on_step(wl_job *j,
                    void (*fn)(void *ctx, uint32_t step, simtime_ps start, simtime_ps end),
                    void *ctx) {
  j->r.on_step = fn;
  j->r.on_step_ctx = ctx;
}

simtime_ps wl_job_step_compute_ps(const wl_job *j) {
  uint32_t pp = j->p.pp ? j->p.pp : 1;
  simtime_ps *sum = sim_calloc(pp, sizeof *sum), most = 0;
  for (size_t i = 0; i < j->d.n; i++) {
    const wl__node *x = &j->d.nodes[i];
    if (x->cls == WL__NONE && x->stage < pp) sum[x->stage] += x->dur;
  }
  for (uint32_t s = 0; s < pp; s++)
    if (sum[s] > most) most = sum[s];
  sim_free(sum);
  return most;
}

uint32_t wl_job_steps_done(const wl_job *j) { return j->r.steps_done; }
const wl_step *wl_job_step(const wl_job *j, uint32_t k) {
  return k < j->r.steps_done ? &j->r.steps[k] : NULL;
}
const wl_gpu_event *wl_job_events(const wl_job *j, size_t *n) {
  *n = j->r.nev;
  return j->r.ev;
}
bool wl_job_stopped(const wl_job *j, simtime_ps *at, simtime_ps *step_start) {
  if (at) *at = j->r.stop_at;
  if (step_start) *step_start = j->r.t0;
  return j->r.stopped;
}
uint32_t wl_job_gpu_stage(const wl_job *j, uint32_t gpu) {
  return gpu < j->r.ngpu ? j->r.gpu_stage[gpu] : WL_NO_STAGE;
}
const wl_parallel *wl_job_parallel(const wl_job *j) { return &j->p; }

void wl_job_gpu_timeline(const wl_job *j, wl_gpu_timeline *out) {
  const run *r = &j->r;
  out->bin_ps = r->tl_width;
  out->nbins = r->tl_n;
  out->nstages = j->p.pp;
  out->gpus_per_stage = j->p.dp * j->p.tp;
  out->t = r->tl;
  out->wait = r->tl_wait;
  out->slow_gpus = r->ever_slow;
}

void wl_job_free(wl_job *j) {
  if (!j) return;
  run *r = &j->r;
  for (size_t k = 0; k < r->stepsinit; k++) wl_step_free(&r->steps[k]);
  sim_free(r->steps);
  sim_free(r->acc);
  sim_free(r->cur);
  sim_free(r->slots);
  sim_free(r->deps0);
  sim_free(r->gpu_stage);
  sim_free(r->gpu_speed);
  sim_free(r->gpu_fault);
  sim_free(r->gpu_thermal);
  sim_free(r->stage_speed);
  sim_free(r->sm_busy);
  sim_free(r->tl);
  sim_free(r->tl_wait);
  sim_free(r->ever_slow);
  sim_free(r->was_slow);
  sim_free(r->run_node);
  sim_free(r->run_ev);
  sim_free(r->run_end);
  sim_free(r->ev);
  sim_free(j->rep);
  sim_free(j->gpu_map);
  wl__dag_free(&j->d);
  sim_free(j);
}

int wl_step_run(wl_step *out, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                be_backend *b, sim_error *err) {
  wl_job *j;
  memset(out, 0, sizeof *out);
  int rc = wl_job_create(&j, cfg, doc, t, b, 1, err);
  if (rc != SIM_OK) return rc;
  if ((rc = wl_job_run(j, doc, err)) == SIM_OK && j->r.steps_done == 1) {
    *out = j->r.steps[0];
    j->r.steps[0].stages = NULL; /* moved */
  }
  wl_job_free(j);
  return rc;
}

void wl_step_free(wl_step *s) {
  sim_free(s->stages);
  s->stages = NULL;
  s->nstages = 0;
}
