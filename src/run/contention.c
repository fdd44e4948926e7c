/* Collectives of several training jobs timed by class and stretched while
 * other jobs' collectives share their links (run_internal.h,
 * run__contention).
 *
 * A job that times its collectives (reuse, symmetric) knows each distinct
 * collective's time alone, T_c. Its plan, routed as the fabric routes it
 * (topo_route: static D-mod-K or the ECMP hash of each transfer), puts
 * B_c(ch) bytes on each switch-to-switch channel, so alone it loads the
 * channel at the mean rate r_c(ch) = 8 B_c(ch) / T_c. While collectives of
 * other jobs are in flight, each channel's capacity C(ch) (the link's rate x
 * fabric.link_efficiency) is shared max-min among the classes in flight on
 * it, each one flow asking its mean rate (water-filling); class c then gets
 * a(ch) <= r_c(ch) there, and runs at the pace of its worst channel:
 *
 *     stretch(c | S) = max(1, max over ch of r_c(ch) / a(ch)),
 *
 * S the other jobs' collectives in flight whose channels meet c's. A
 * collective's remaining work (in picoseconds alone) drains at 1 / stretch;
 * whenever S changes its end moves.
 *
 * Traffic classes (fabric.classes; each job's jobs[].traffic_class): a
 * channel is shared as the flow fidelity shares it (src/flow/net.c), per
 * channel: the classes of higher strict priority levels take what they ask
 * first; on what they leave, the classes of the collective's level share
 * by weighted max-min (a class asking less than its weighted part takes
 * only what it asks); a class's collectives share its part max-min. A
 * collective of a level that the ones above leave nothing waits (stretch
 * infinite) until they end. Everything of one class: as above, bit for
 * bit. Exact for collectives whose traffic is
 * steady over their time and that share one bottleneck (two equal rings on
 * one link: each stretched 2x on its bandwidth-bound time, as the flow
 * fidelity gives); approximate otherwise: the stretch applies to a
 * collective's whole time (its latency too), a class's traffic is its mean,
 * and collectives of the same job still do not slow each other (as under
 * reuse alone). tests/run/test_jobs.c compares it with live runs.
 *
 * Cost: routing every class's plan once (the transfers reuse measures);
 * per start or end of a collective, every other job's collective in flight
 * is revisited, its stretch memoized by (job, class, S).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/ev.h"
#include "run/run_internal.h"

typedef struct cnt_load {
  uint32_t ch;
  double bps; /* the class's mean rate on the channel alone */
} cnt_load;

typedef struct cnt_class {
  cnt_load *load; /* switch-to-switch channels, ascending */
  uint32_t nload;
  double fixed;     /* of its time alone, the share that is latency (launch, protocol) */
  simtime_ps alone; /* a plan's time alone (a training class's is its job's) */
} cnt_class;

/* A job the stretching times: a training job (its classes) or a plan run
 * as one task (a collective or traffic job: one class). */
typedef struct cnt_job {
  run__contention *c;
  wl_job *j;               /* training; NULL: a plan */
  void (*done)(void *ctx); /* a plan's end */
  void *done_ctx;
  uint32_t group; /* jobs of different groups share no link */
  uint8_t tclass; /* its traffic class (jobs[].traffic_class) */
  cnt_class *cls;
  uint32_t ncls;
  int8_t **meets; /* [other job][cls * other ncls + other cls]: -1 unknown, 0, 1 */
} cnt_job;

typedef struct cnt_inst {
  uint32_t job, cls, node;
  double work;    /* remaining, in picoseconds alone */
  double stretch; /* picoseconds per picosecond alone, now */
  simtime_ps since;
  ev_id ev;
  bool used;
} cnt_inst;

typedef struct cnt_active { /* a class of a job in flight, and how many times */
  uint32_t job, cls, count;
} cnt_active;

typedef struct cnt_memo {
  uint64_t hash;
  uint32_t off, len; /* the key in keys[] */
  double stretch;
} cnt_memo;

struct run__contention {
  sim_ctx *sim;
  const topo *t;
  double *cap; /* per channel, bits/s; 0: not switch-to-switch */
  cnt_job *jobs;
  uint32_t njobs;
  cnt_inst *inst;
  size_t ninst, inst_cap;
  cnt_active *act;
  size_t nact, act_cap;
  cnt_memo *memo; /* open addressing, size a power of 2 */
  size_t memo_n, memo_cap;
  uint32_t *keys;
  size_t nkeys, keys_cap;
  uint32_t *key; /* scratch */
  size_t key_cap;
  double *dem;   /* scratch: demands on a channel */
  uint8_t *dcls; /* scratch: their traffic classes */
  size_t dem_cap, dcls_cap;
  uint32_t prio[CFG_CLASSES]; /* fabric.classes: strict priority level and weight by class */
  double weight[CFG_CLASSES];
};

/* ---- loads ---------------------------------------------------------------------------- */

static int cmp_load(const void *a, const void *b) {
  const cnt_load *x = a, *y = b;
  return (x->ch > y->ch) - (x->ch < y->ch);
}

/* A plan's bytes per switch-to-switch channel, over all its phases and
 * repetitions, as rates while it moves data: over `alone` less its launch
 * and protocol latency. O(transfers x hops + loads log). */
static void plan_loads(run__contention *c, const coll_plan *p, simtime_ps alone, cnt_class *out) {
  size_t cap = 0, n = 0;
  cnt_load *v = NULL;
  for (size_t ph = 0; ph < p->nphases; ph++) {
    const coll_phase *f = &p->phases[ph];
    for (size_t k = 0; k < f->n; k++) {
      topo_path path;
      if (topo_route(c->t, f->x[k].src_gpu, f->x[k].dst_gpu, f->x[k].flow_hash, &path) != SIM_OK)
        continue; /* no route (a fault): the backend says so when it runs */
      for (uint32_t h = 0; h < path.n; h++) {
        if (c->cap[path.ch[h]] == 0) continue;
        sim_grow((void **)&v, &cap, n + 1, sizeof *v);
        v[n++] = (cnt_load){.ch = path.ch[h], .bps = (double)f->x[k].bytes * (double)f->repeat};
      }
    }
  }
  simtime_ps fixed = p->launch;
  for (size_t ph = 0; ph < p->nphases; ph++) fixed += p->phases[ph].start + p->phases[ph].fixed;
  out->fixed = alone > fixed ? (double)fixed / (double)alone : 0;
  if (n) qsort(v, n, sizeof *v, cmp_load);
  size_t m = 0; /* merge equal channels; bytes -> bits/s over the data-moving time */
  for (size_t i = 0; i < n; i++) {
    if (m && v[m - 1].ch == v[i].ch) v[m - 1].bps += v[i].bps;
    else v[m++] = v[i];
  }
  double busy_s = sim_ps_to_s(alone) * (1 - out->fixed);
  for (size_t i = 0; i < m; i++) v[i].bps = busy_s > 0 ? v[i].bps * 8 / busy_s : 0;
  out->load = v;
  out->nload = (uint32_t)m;
}

/* A training job's class: its plan built, loaded, freed. */
static int class_loads(run__contention *c, wl_job *j, uint32_t cls, cnt_class *out,
                       sim_error *err) {
  const coll_plan *p;
  int rc = wl_job_class_plan(j, cls, &p, err);
  if (rc != SIM_OK) return rc;
  plan_loads(c, p, wl_job_class_measured(j, cls), out);
  wl_job_class_plan_free(j, cls);
  return SIM_OK;
}

/* Class a of job x and class b of job y have a channel in common. Memoized. */
static bool meets(run__contention *c, uint32_t x, uint32_t a, uint32_t y, uint32_t b) {
  cnt_job *jx = &c->jobs[x], *jy = &c->jobs[y];
  if (jx->group != jy->group) return false;
  int8_t *m = &jx->meets[y][(size_t)a * jy->ncls + b];
  if (*m >= 0) return *m;
  const cnt_class *p = &jx->cls[a], *q = &jy->cls[b];
  bool hit = false;
  for (uint32_t i = 0, k = 0; !hit && i < p->nload && k < q->nload;) {
    if (p->load[i].ch == q->load[k].ch) hit = true;
    else if (p->load[i].ch < q->load[k].ch) i++;
    else k++;
  }
  *m = hit;
  jy->meets[x][(size_t)b * jx->ncls + a] = hit;
  return hit;
}

/* ---- the stretch ---------------------------------------------------------------------- */

/* Class q's rate on channel ch (0 when it does not use it). O(log). */
static double rate_on(const cnt_class *q, uint32_t ch) {
  uint32_t lo = 0, hi = q->nload;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (q->load[mid].ch < ch) lo = mid + 1;
    else hi = mid;
  }
  return lo < q->nload && q->load[lo].ch == ch ? q->load[lo].bps : 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Max-min share of demand d0 when it and dem[0 .. n) (scratch of n + 1
 * entries) share capacity cap: the water level L with sum min(d, L) = cap,
 * then min(d0, L). O(n log n). */
static double maxmin_share(double cap, double d0, double *dem, size_t n) {
  double total = d0;
  for (size_t i = 0; i < n; i++) total += dem[i];
  if (total <= cap) return d0;
  dem[n] = d0;
  qsort(dem, n + 1, sizeof *dem, cmp_double);
  double left = cap;
  size_t rest = n + 1;
  for (size_t i = 0; i <= n && dem[i] * (double)rest <= left; i++) {
    left -= dem[i];
    rest--;
  }
  double level = rest ? left / (double)rest : cap;
  return d0 < level ? d0 : level;
}

/* What the classes of one strict priority level ask on a channel, D[k]
 * (0: absent), share `room` by weighted max-min: class k0's part, min(D_k0,
 * w_k0 L) with L such that the parts fill the room or every class has
 * what it asks. O(classes^2). */
static double weighted_part(const run__contention *c, const double *D, uint32_t lm, uint8_t k0,
                            double room) {
  double w = 0, total = 0;
  uint32_t left = lm;
  for (uint32_t k = 0; k < CFG_CLASSES; k++)
    if (lm >> k & 1) w += c->weight[k], total += D[k];
  if (total <= room) return D[k0];
  for (;;) { /* the class asking least per weight takes what it asks while that fits */
    uint32_t m = CFG_CLASSES;
    for (uint32_t k = 0; k < CFG_CLASSES; k++)
      if (left >> k & 1 && (m == CFG_CLASSES || D[k] / c->weight[k] < D[m] / c->weight[m])) m = k;
    if (m == CFG_CLASSES || D[m] / c->weight[m] * w > room) break;
    if (m == k0) return D[k0];
    room -= D[m];
    w -= c->weight[m];
    left &= ~(1u << m);
  }
  return room > 0 ? c->weight[k0] * (room / w) : 0;
}

/* Max-min share of demand d0 of traffic class k0 on a channel of capacity
 * cap beside demands dem[0 .. n) of classes dcls[0 .. n) (scratch: dem
 * holds n + 1): the levels above k0's take what they ask, k0's class gets
 * its weighted part of what is left, its collectives share that max-min.
 * All of k0's class: maxmin_share on cap, bit for bit. O(n log n). */
static double class_share(const run__contention *c, double cap, double d0, uint8_t k0, double *dem,
                          const uint8_t *dcls, size_t n) {
  size_t same = 0;
  for (size_t i = 0; i < n; i++) same += dcls[i] == k0;
  if (same == n) return maxmin_share(cap, d0, dem, n);
  double D[CFG_CLASSES] = {0}, above = 0;
  uint32_t lv = c->prio[k0], lm = 1u << k0;
  size_t m = 0;
  D[k0] = d0;
  for (size_t i = 0; i < n; i++) {
    uint8_t k = dcls[i];
    if (c->prio[k] > lv) above += dem[i];
    if (c->prio[k] != lv) continue;
    D[k] += dem[i];
    lm |= 1u << k;
    if (k == k0) dem[m++] = dem[i]; /* m <= i: in place */
  }
  double room = cap > above ? cap - above : 0;
  double part = lm == 1u << k0 ? (D[k0] < room ? D[k0] : room) : weighted_part(c, D, lm, k0, room);
  return maxmin_share(part, d0, dem, m);
}

/* stretch(c | S), S = key[2 ..] as (job, class, count) triples; infinite
 * while the classes above take all of a channel it needs. */
static double stretch_of(run__contention *c, const uint32_t *key, size_t len) {
  const cnt_class *cl = &c->jobs[key[0]].cls[key[1]];
  double worst = 1;
  for (uint32_t i = 0; i < cl->nload; i++) {
    uint32_t ch = cl->load[i].ch;
    size_t n = 0;
    for (size_t k = 2; k < len; k += 3) {
      double r = rate_on(&c->jobs[key[k]].cls[key[k + 1]], ch);
      for (uint32_t m = 0; r > 0 && m < key[k + 2]; m++) {
        sim_grow((void **)&c->dem, &c->dem_cap, n + 2, sizeof *c->dem);
        sim_grow((void **)&c->dcls, &c->dcls_cap, n + 1, sizeof *c->dcls);
        c->dcls[n] = c->jobs[key[k]].tclass;
        c->dem[n++] = r;
      }
    }
    if (!n || cl->load[i].bps <= 0) continue;
    double a =
        class_share(c, c->cap[ch], cl->load[i].bps, c->jobs[key[0]].tclass, c->dem, c->dcls, n);
    if (a <= 0) return INFINITY;
    double s = cl->load[i].bps / a;
    if (s > worst) worst = s;
  }
  return cl->fixed + (1 - cl->fixed) * worst; /* the latency does not stretch */
}

static uint64_t key_hash(const uint32_t *k, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) {
    h ^= k[i];
    h *= 1099511628211ull;
  }
  return h;
}

static void memo_grow(run__contention *c) {
  size_t cap = c->memo_cap ? 2 * c->memo_cap : 256;
  cnt_memo *m = sim_calloc(cap, sizeof *m);
  for (size_t i = 0; i < c->memo_cap; i++) {
    if (!c->memo[i].len) continue;
    size_t at = c->memo[i].hash & (cap - 1);
    while (m[at].len) at = (at + 1) & (cap - 1);
    m[at] = c->memo[i];
  }
  sim_free(c->memo);
  c->memo = m;
  c->memo_cap = cap;
}

/* stretch(c | S) for the key, memoized. */
static double memo_stretch(run__contention *c, const uint32_t *key, size_t len) {
  if (len == 2) return 1; /* nothing of another job meets it */
  if (2 * (c->memo_n + 1) > c->memo_cap) memo_grow(c);
  uint64_t h = key_hash(key, len);
  size_t at = h & (c->memo_cap - 1);
  for (; c->memo[at].len; at = (at + 1) & (c->memo_cap - 1)) {
    const cnt_memo *e = &c->memo[at];
    if (e->hash == h && e->len == len && !memcmp(c->keys + e->off, key, len * sizeof *key))
      return e->stretch;
  }
  double s = stretch_of(c, key, len);
  sim_grow((void **)&c->keys, &c->keys_cap, c->nkeys + len, sizeof *c->keys);
  memcpy(c->keys + c->nkeys, key, len * sizeof *key);
  c->memo[at] =
      (cnt_memo){.hash = h, .off = (uint32_t)c->nkeys, .len = (uint32_t)len, .stretch = s};
  c->nkeys += len;
  c->memo_n++;
  return s;
}

/* The stretch of class `cls` of job x now: S from the collectives in flight
 * (c->act, kept sorted by job, then class). */
static double stretch_now(run__contention *c, uint32_t x, uint32_t cls) {
  size_t len = 0;
  sim_grow((void **)&c->key, &c->key_cap, 2 + 3 * c->nact, sizeof *c->key);
  c->key[len++] = x;
  c->key[len++] = cls;
  for (size_t i = 0; i < c->nact; i++) {
    const cnt_active *a = &c->act[i];
    if (a->job == x || !meets(c, x, cls, a->job, a->cls)) continue;
    c->key[len++] = a->job;
    c->key[len++] = a->cls;
    c->key[len++] = a->count;
  }
  return memo_stretch(c, c->key, len);
}

/* ---- collectives in flight ------------------------------------------------------------ */

static void active_add(run__contention *c, uint32_t job, uint32_t cls, int delta) {
  size_t i = 0;
  while (i < c->nact && (c->act[i].job < job || (c->act[i].job == job && c->act[i].cls < cls))) i++;
  if (i < c->nact && c->act[i].job == job && c->act[i].cls == cls) {
    c->act[i].count = (uint32_t)((int)c->act[i].count + delta);
    if (c->act[i].count == 0) {
      memmove(c->act + i, c->act + i + 1, (c->nact - i - 1) * sizeof *c->act);
      c->nact--;
    }
    return;
  }
  sim_grow((void **)&c->act, &c->act_cap, c->nact + 1, sizeof *c->act);
  memmove(c->act + i + 1, c->act + i, (c->nact - i) * sizeof *c->act);
  c->act[i] = (cnt_active){.job = job, .cls = cls, .count = 1};
  c->nact++;
}

static void on_end(sim_ctx *sim, void *obj, uint64_t arg);

/* (Re)schedules instance k's end from its remaining work at its stretch;
 * none while it is stopped (stretch infinite: a revisit restarts it). */
static void schedule_end(run__contention *c, size_t k) {
  cnt_inst *x = &c->inst[k];
  if (isinf(x->stretch)) {
    x->ev = 0; /* never a handle: ev_cancel does nothing */
    return;
  }
  double d = ceil(x->work * x->stretch);
  simtime_ps now = sim_now(c->sim);
  simtime_ps dur = d < (double)(SIM_TIME_MAX - now) ? (simtime_ps)d : SIM_TIME_MAX - now;
  x->ev = ev_schedule_in(c->sim, dur, on_end, c, k);
}

/* Every other job's collective in flight: its work done so far at its old
 * stretch, then its stretch now; its end moves when the stretch changed. */
static void revisit(run__contention *c, uint32_t changed_job) {
  simtime_ps now = sim_now(c->sim);
  for (size_t k = 0; k < c->ninst; k++) {
    cnt_inst *x = &c->inst[k];
    if (!x->used || x->job == changed_job) continue;
    double s = stretch_now(c, x->job, x->cls);
    if (s == x->stretch) continue;
    x->work -= (double)(now - x->since) / x->stretch;
    if (x->work < 0) x->work = 0;
    x->since = now;
    x->stretch = s;
    ev_cancel(c->sim, x->ev);
    schedule_end(c, k);
  }
}

static void on_end(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)sim;
  run__contention *c = obj;
  cnt_inst *x = &c->inst[arg];
  uint32_t job = x->job, node = x->node;
  x->used = false;
  active_add(c, job, x->cls, -1);
  revisit(c, job);
  if (c->jobs[job].j) wl_job_coll_end(c->jobs[job].j, node); /* may start its next ones */
  else c->jobs[job].done(c->jobs[job].done_ctx);
}

static void on_start(void *ctx, uint32_t cls, uint32_t node, simtime_ps alone_ps) {
  cnt_job *cj = ctx;
  run__contention *c = cj->c;
  uint32_t job = (uint32_t)(cj - c->jobs);
  size_t k = 0;
  while (k < c->ninst && c->inst[k].used) k++;
  if (k == c->ninst) {
    sim_grow((void **)&c->inst, &c->inst_cap, c->ninst + 1, sizeof *c->inst);
    c->ninst++;
  }
  active_add(c, job, cls, +1);
  cnt_inst *x = &c->inst[k];
  *x = (cnt_inst){.job = job,
                  .cls = cls,
                  .node = node,
                  .work = (double)alone_ps,
                  .stretch = stretch_now(c, job, cls),
                  .since = sim_now(c->sim),
                  .used = true};
  schedule_end(c, k);
  revisit(c, job);
}

/* ---- create and free ------------------------------------------------------------------ */

run__contention *run__contention_create(const topo *t, const cfg_scenario *cfg, sim_ctx *sim) {
  run__contention *c = sim_calloc(1, sizeof *c);
  c->sim = sim;
  c->t = t;
  for (uint32_t k = 0; k < CFG_CLASSES; k++) {
    c->prio[k] = cfg->fabric.classes.v[k].priority;
    c->weight[k] = cfg->fabric.classes.v[k].weight;
  }
  uint32_t nch = 2 * topo_link_count(t);
  c->cap = sim_calloc(nch ? nch : 1, sizeof *c->cap);
  for (uint32_t ch = 0; ch < nch; ch++)
    if (topo_vertex_at(t, topo_channel_src(t, ch))->kind == TOPO_SWITCH &&
        topo_vertex_at(t, topo_channel_dst(t, ch))->kind == TOPO_SWITCH)
      c->cap[ch] =
          (double)topo_link_at(t, topo_channel_link(ch))->bps * cfg->fabric.link_efficiency;
  return c;
}

/* A new job (its meets tables are made at run__contention_seal). */
static cnt_job *add_job(run__contention *c, uint32_t group, uint8_t tclass, uint32_t ncls) {
  c->jobs = sim_realloc(c->jobs, (size_t)(c->njobs + 1) * sizeof *c->jobs);
  cnt_job *cj = &c->jobs[c->njobs++];
  memset(cj, 0, sizeof *cj);
  cj->c = c;
  cj->group = group;
  cj->tclass = tclass;
  cj->ncls = ncls;
  cj->cls = sim_calloc(ncls ? ncls : 1, sizeof *cj->cls);
  return cj;
}

int run__contention_add_training(run__contention *c, wl_job *j, uint32_t group, uint8_t tclass,
                                 sim_error *err) {
  cnt_job *cj = add_job(c, group, tclass, wl_job_classes(j));
  cj->j = j;
  for (uint32_t k = 0; k < cj->ncls; k++) {
    int rc = class_loads(c, j, k, &cj->cls[k], err);
    if (rc != SIM_OK) return rc;
  }
  return SIM_OK;
}

uint32_t run__contention_add_plan(run__contention *c, const coll_plan *p, simtime_ps alone,
                                  uint32_t group, uint8_t tclass, void (*done)(void *ctx),
                                  void *ctx) {
  cnt_job *cj = add_job(c, group, tclass, 1);
  cj->done = done;
  cj->done_ctx = ctx;
  plan_loads(c, p, alone, &cj->cls[0]);
  cj->cls[0].alone = alone;
  return c->njobs - 1;
}

void run__contention_seal(run__contention *c) {
  for (uint32_t x = 0; x < c->njobs; x++) {
    cnt_job *cj = &c->jobs[x];
    cj->meets = sim_calloc(c->njobs, sizeof *cj->meets);
    for (uint32_t y = 0; y < c->njobs; y++) {
      size_t m = (size_t)cj->ncls * c->jobs[y].ncls;
      cj->meets[y] = sim_malloc(m ? m : 1);
      memset(cj->meets[y], -1, m);
    }
    if (!cj->j) continue;
    wl_coll_timer tm = {.ctx = cj, .start = on_start};
    wl_job_set_coll_timer(cj->j, &tm);
  }
}

void run__contention_start_plan(run__contention *c, uint32_t id) {
  on_start(&c->jobs[id], 0, 0, c->jobs[id].cls[0].alone);
}

void run__contention_free(run__contention *c) {
  if (!c) return;
  for (uint32_t x = 0; x < c->njobs; x++) {
    cnt_job *cj = &c->jobs[x];
    for (uint32_t k = 0; k < cj->ncls; k++) sim_free(cj->cls[k].load);
    sim_free(cj->cls);
    for (uint32_t y = 0; cj->meets && y < c->njobs; y++) sim_free(cj->meets[y]);
    sim_free(cj->meets);
  }
  sim_free(c->jobs);
  sim_free(c->cap);
  sim_free(c->inst);
  sim_free(c->act);
  sim_free(c->memo);
  sim_free(c->keys);
  sim_free(c->key);
  sim_free(c->dem);
  sim_free(c->dcls);
  sim_free(c);
}

size_t run__contention_memo(const run__contention *c) { return c ? c->memo_n : 0; }
