/* Faults inside a simulation (fabsim/fault.h): the scenario's faults
 * resolved against the topology, and the scheduler that plays them on a
 * running simulation through the backend's fault ops and the workload's GPU
 * hooks, with an event log of what each fault did.
 *
 * Physical state: per link, how many active faults hold it down (a switch
 * down holds all its links; a NIC down its link to the leaf) and its
 * degradation (rate factor, BER). Every change goes to the backend at once
 * (link_state). Routing's view (topo_health) is the physical state as of the
 * last reroute; a reroute runs `reliability.reconvergence` after each
 * up/down change, at most one per instant.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/fault.h"

/* ---- resolution --------------------------------------------------------------- */

/* A vertex name close to `name` (a typo of the word, the same number), or
 * NULL. Candidates: every element word with the plane prefix and number of
 * the input. O(words). */
static const char *suggest_vertex(const topo *t, const char *name, char *buf, size_t n) {
  static const char *const words[] = {"gpu", "nic", "leaf", "spine", "core", "nvs", "node"};
  const char *body = name, *digits;
  char prefix[16] = "";
  uint32_t v;
  size_t best = 3;
  const char *found = NULL;
  if (name[0] == 'p' && strchr(name, '.') && (size_t)(strchr(name, '.') - name) < sizeof prefix) {
    size_t pl = (size_t)(strchr(name, '.') - name) + 1;
    memcpy(prefix, name, pl);
    prefix[pl] = '\0';
    body = name + pl;
  }
  digits = body;
  while (*digits && (*digits < '0' || *digits > '9')) digits++;
  for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
    char cand[64];
    snprintf(cand, sizeof cand, "%s%s%s", prefix, words[w], digits);
    size_t d = sim_edit_distance(name, strlen(name), cand, strlen(cand));
    bool exists = topo_find_vertex(t, cand, &v) == SIM_OK ||
                  (strcmp(words[w], "node") == 0 && *digits &&
                   strtoul(digits, NULL, 10) < topo_node_count(t) && !prefix[0]);
    if (d > 0 && d < best && exists) {
      best = d;
      snprintf(buf, n, "%s", cand);
      found = buf;
    }
  }
  return found;
}

/* "node<n>" (not a graph vertex): its first GPU. */
static bool parse_node(const topo *t, const char *name, uint32_t *first_gpu) {
  char *end;
  unsigned long n;
  if (strncmp(name, "node", 4) != 0 || name[4] < '0' || name[4] > '9') return false;
  n = strtoul(name + 4, &end, 10);
  if (*end || n >= topo_node_count(t)) return false;
  *first_gpu = (uint32_t)n * (topo_gpu_count(t) / topo_node_count(t));
  return true;
}

static int fail_target(const cfg_doc *doc, uint32_t i, sim_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_target(const cfg_doc *doc, uint32_t i, sim_error *err, const char *fmt, ...) {
  char key[48], msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(key, sizeof key, "faults[%u].target", i);
  return cfg_fail_at(doc, key, err, "%s", msg);
}

/* "unknown element 'x'; did you mean 'y'?" for one name. */
static int fail_unknown(const topo *t, const cfg_doc *doc, uint32_t i, const char *name,
                        const char *what, sim_error *err) {
  char hint[64];
  if (suggest_vertex(t, name, hint, sizeof hint))
    return fail_target(doc, i, err, "no %s '%s' in this fabric; did you mean '%s'?", what, name,
                       hint);
  return fail_target(doc, i, err,
                     "no %s '%s' in this fabric; names are as in `fabsim topo --dot -` "
                     "(gpu0, nic0, leaf0, spine0, leaf0-spine0, node0)",
                     what, name);
}

static int resolve_link(const topo *t, const cfg_doc *doc, uint32_t i, const char *name,
                        flt_fault *f, sim_error *err) {
  const char *dash = strchr(name, '-');
  char a[64];
  uint32_t va, vb, l;
  const topo_link *L;
  int found = topo_find_link(t, name, &l);
  if (found == SIM_EINVAL)
    return fail_target(doc, i, err,
                       "'%s' names a bundle of %u parallel links; name one of them: %s/0 .. "
                       "%s/%u",
                       name, topo_bundle_size(t), name, name, topo_bundle_size(t) - 1);
  if (found == SIM_OK) {
    L = topo_link_at(t, l);
    if (L->kind != TOPO_LINK_FABRIC && L->kind != TOPO_LINK_ENDPOINT)
      return fail_target(doc, i, err,
                         "'%s' is inside a server (%s); link faults apply to fabric "
                         "links (leaf0-spine0) and NIC links (nic0-leaf0)",
                         name, L->kind == TOPO_LINK_PCIE ? "PCIe" : "NVLink");
    f->link = l;
    return SIM_OK;
  }
  if (!dash) {
    if (topo_find_vertex(t, name, &va) == SIM_OK)
      return fail_target(doc, i, err,
                         "'%s' is not a link; name a link by its two ends (such as "
                         "leaf0-spine0), or use a %s kind",
                         name,
                         topo_vertex_at(t, va)->kind == TOPO_SWITCH ? "switch-down/switch-up"
                         : topo_vertex_at(t, va)->kind == TOPO_NIC  ? "nic-down/nic-up"
                                                                    : "gpu");
    return fail_unknown(t, doc, i, name, "link", err);
  }
  if ((size_t)(dash - name) >= sizeof a) return fail_unknown(t, doc, i, name, "link", err);
  memcpy(a, name, (size_t)(dash - name));
  a[dash - name] = '\0';
  if (topo_find_vertex(t, a, &va) != SIM_OK) return fail_unknown(t, doc, i, a, "element", err);
  if (topo_find_vertex(t, dash + 1, &vb) != SIM_OK)
    return fail_unknown(t, doc, i, dash + 1, "element", err);
  return fail_target(doc, i, err,
                     "%s and %s are not linked; name a link of `fabsim topo` (such "
                     "as %s's uplinks)",
                     a, dash + 1, a);
}

int flt_resolve(flt_fault **out, uint32_t *n, const topo *t, const cfg_scenario *cfg,
                const cfg_doc *doc, sim_error *err) {
  uint32_t nf = cfg->faults.n;
  flt_fault *v = sim_calloc(nf ? nf : 1, sizeof *v);
  int rc = SIM_OK;
  *out = NULL;
  *n = 0;
  for (uint32_t i = 0; i < nf && rc == SIM_OK; i++) {
    flt_fault *f = &v[i];
    const char *name = cfg->faults.v[i].target;
    uint32_t x;
    f->spec = cfg->faults.v[i];
    f->link = f->vertex = f->gpu = UINT32_MAX;
    switch (f->spec.kind) {
    case CFG_FAULT_LINK_DOWN:
    case CFG_FAULT_LINK_UP:
    case CFG_FAULT_LINK_FLAP:
    case CFG_FAULT_LINK_DEGRADED: rc = resolve_link(t, doc, i, name, f, err); break;
    case CFG_FAULT_SWITCH_DOWN:
    case CFG_FAULT_SWITCH_UP:
      if (topo_find_vertex(t, name, &x) != SIM_OK)
        rc = fail_unknown(t, doc, i, name, "switch", err);
      else if (topo_vertex_at(t, x)->kind != TOPO_SWITCH)
        rc = fail_target(doc, i, err, "'%s' is not a fabric switch (leaf0, spine0, core0)", name);
      else f->vertex = x;
      break;
    case CFG_FAULT_NIC_DOWN:
    case CFG_FAULT_NIC_UP:
      if (topo_find_vertex(t, name, &x) != SIM_OK) rc = fail_unknown(t, doc, i, name, "NIC", err);
      else if (topo_vertex_at(t, x)->kind != TOPO_NIC)
        rc = fail_target(doc, i, err, "'%s' is not a NIC (nic0 .. nic%u)", name,
                         topo_nic_count(t) - 1);
      else {
        uint32_t nic = topo_vertex_at(t, x)->index;
        f->vertex = x;
        if (topo_link_between(t, x, topo_nic_leaf(t, nic), &f->link) != SIM_OK)
          rc = fail_target(doc, i, err, "'%s' has no link to a leaf", name);
      }
      break;
    case CFG_FAULT_NODE_FAIL:
      if (parse_node(t, name, &f->gpu)) break;
      __attribute__((fallthrough)); /* a GPU names its node too */
    case CFG_FAULT_GPU_SLOWDOWN:
    case CFG_FAULT_GPU_FAIL:
    case CFG_FAULT_SDC:
      if (topo_find_vertex(t, name, &x) != SIM_OK)
        rc = fail_unknown(t, doc, i, name, f->spec.kind == CFG_FAULT_NODE_FAIL ? "node" : "GPU",
                          err);
      else if (topo_vertex_at(t, x)->kind != TOPO_GPU)
        rc = fail_target(doc, i, err, "'%s' is not a %s (gpu0 .. gpu%u%s)", name,
                         f->spec.kind == CFG_FAULT_NODE_FAIL ? "node or GPU" : "GPU",
                         topo_gpu_count(t) - 1,
                         f->spec.kind == CFG_FAULT_NODE_FAIL ? ", node0 .." : "");
      else {
        f->gpu = topo_vertex_at(t, x)->index;
        if (f->spec.kind == CFG_FAULT_NODE_FAIL)
          f->gpu = topo_gpu_node(t, f->gpu) * (topo_gpu_count(t) / topo_node_count(t));
      }
      break;
    }
  }
  if (rc != SIM_OK) {
    sim_free(v);
    return rc;
  }
  *out = v;
  *n = nf;
  return SIM_OK;
}

/* ---- the scheduler ---------------------------------------------------------------- */

/* What a scheduled event does (low 3 bits of its arg; the fault index above). */
enum { ACT_APPLY, ACT_RECOVER, ACT_FLAP_DOWN, ACT_FLAP_UP, ACT_REROUTE };

struct flt_sched {
  sim_ctx *sim;
  const topo *t;
  be_backend *be;
  const cfg_scenario *cfg;
  flt_fault *f; /* copy, targets borrowed from the scenario */
  uint32_t n;
  flt_gpu_hooks hooks;
  bool have_hooks;
  uint32_t *held; /* per link: active faults holding it down */
  double *factor; /* per link: degradation in force (1 = none) */
  double *ber;
  topo_health phys;       /* physical state, what the next reroute sees */
  simtime_ps reroute_at;  /* the pending reroute's time, or SIM_TIME_MAX */
  uint32_t reroute_cause; /* fault index that asked for it */
  flt_event *log;
  size_t nlog, logcap;
  uint64_t failures, unlogged_failures, unlogged_bytes;
};

/* One line of the log, at now, for fault `fault` (FLT_NO_FAULT: none). */
static flt_event *log_event(flt_sched *s, uint32_t fault, const char *component, const char *kind,
                            double value, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static flt_event *log_event(flt_sched *s, uint32_t fault, const char *component, const char *kind,
                            double value, const char *fmt, ...) {
  va_list ap;
  flt_event *e;
  if (s->nlog == s->logcap) sim_grow((void **)&s->log, &s->logcap, s->nlog + 1, sizeof *s->log);
  e = &s->log[s->nlog++];
  e->at = sim_now(s->sim);
  snprintf(e->component, sizeof e->component, "%s", component);
  e->kind = kind;
  e->value = value;
  e->fault = fault;
  va_start(ap, fmt);
  vsnprintf(e->effect, sizeof e->effect, fmt, ap);
  va_end(ap);
  return e;
}

static void link_push(flt_sched *s, uint32_t l) {
  double factor = s->held[l] ? 0.0 : s->factor[l];
  topo_health_set_link(&s->phys, l, s->held[l] == 0);
  s->be->ops->link_state(s->be, l, factor, s->held[l] ? 0.0 : s->ber[l]);
}

static void on_event(sim_ctx *sim, void *obj, uint64_t arg);

/* Routing reconverges reconvergence after now (one reroute per instant). */
static void want_reroute(flt_sched *s, uint32_t cause) {
  simtime_ps at;
  if (__builtin_add_overflow(sim_now(s->sim), s->cfg->reliability.reconvergence, &at))
    at = SIM_TIME_MAX; /* never: routing does not reconverge within simulated time */
  if (at == s->reroute_at) return;
  s->reroute_at = at;
  s->reroute_cause = cause;
  ev_schedule(s->sim, at, on_event, s, ((uint64_t)cause << 3) | ACT_REROUTE);
}

/* Hold (+1) or release (-1) the links of fault i: its link, or every link of
 * its switch. Returns how many links changed state. */
static uint32_t hold(flt_sched *s, uint32_t i, int delta) {
  const flt_fault *f = &s->f[i];
  uint32_t changed = 0;
  if (f->link != UINT32_MAX) {
    uint32_t l = f->link;
    if (delta < 0 && s->held[l] == 0) return 0; /* an -up with nothing down */
    s->held[l] = (uint32_t)((int)s->held[l] + delta);
    if ((delta > 0 && s->held[l] == 1) || (delta < 0 && s->held[l] == 0))
      changed++, link_push(s, l);
    return changed;
  }
  const topo_vertex *x = topo_vertex_at(s->t, f->vertex);
  if ((delta > 0) == !s->phys.vertex_ok[f->vertex]) return 0; /* already down / up */
  topo_health_set_vertex(&s->phys, f->vertex, delta < 0);
  for (uint32_t p = 0; p < x->nports; p++) {
    uint32_t l = topo_channel_link(topo_port_channel(s->t, f->vertex, p));
    if (delta < 0 && s->held[l] == 0) continue;
    s->held[l] = (uint32_t)((int)s->held[l] + delta);
    if ((delta > 0 && s->held[l] == 1) || (delta < 0 && s->held[l] == 0))
      changed++, link_push(s, l);
  }
  return changed;
}

/* The -up kinds find what they undo by target: the link, or the switch. */
static void apply_network(flt_sched *s, uint32_t i, int act) {
  const flt_fault *f = &s->f[i];
  const char *name = f->spec.target;
  uint32_t changed;
  switch (f->spec.kind) {
  case CFG_FAULT_LINK_DEGRADED:
    if (act == ACT_APPLY) {
      s->factor[f->link] = f->spec.factor;
      s->ber[f->link] = f->spec.ber;
    } else {
      s->factor[f->link] = 1.0;
      s->ber[f->link] = 0.0;
    }
    if (!s->held[f->link]) link_push(s, f->link);
    if (act == ACT_APPLY)
      log_event(s, i, name, "link-degraded", f->spec.factor,
                "runs at %.3g of its rate, bit error rate %.3g (routing keeps it)", f->spec.factor,
                f->spec.ber);
    else log_event(s, i, name, "recover", 1.0, "back to its full rate after %s", "link-degraded");
    return;
  case CFG_FAULT_LINK_UP:
  case CFG_FAULT_SWITCH_UP:
  case CFG_FAULT_NIC_UP:
    changed = hold(s, i, -1);
    if (changed)
      log_event(s, i, name, cfg_fault_kind_name(f->spec.kind), (double)changed,
                "%u link%s up; routing takes %s back after %g ms", changed, changed == 1 ? "" : "s",
                changed == 1 ? "it" : "them", (double)s->cfg->reliability.reconvergence / 1e9);
    else log_event(s, i, name, cfg_fault_kind_name(f->spec.kind), 0, "nothing was down");
    if (changed) want_reroute(s, i);
    return;
  default: break;
  }
  /* down kinds: apply, recover (after duration), flap cycles */
  bool down = act == ACT_APPLY || act == ACT_FLAP_DOWN;
  changed = hold(s, i, down ? +1 : -1);
  if (f->spec.kind == CFG_FAULT_LINK_FLAP)
    log_event(s, i, name, "link-flap", down ? 0.0 : 1.0, "%s (flap)", down ? "down" : "up");
  else if (down)
    log_event(s, i, name, cfg_fault_kind_name(f->spec.kind), (double)changed,
              "%u link%s down; flows on %s stall until routing reconverges in %g ms", changed,
              changed == 1 ? "" : "s", changed == 1 ? "it" : "them",
              (double)s->cfg->reliability.reconvergence / 1e9);
  else
    log_event(s, i, name, "recover", (double)changed, "%u link%s up after %s", changed,
              changed == 1 ? "" : "s", cfg_fault_kind_name(f->spec.kind));
  if (changed) want_reroute(s, i);
}

static void apply_gpu(flt_sched *s, uint32_t i, int act) {
  const flt_fault *f = &s->f[i];
  const char *name = f->spec.target;
  bool hooked = s->have_hooks && (f->spec.kind == CFG_FAULT_GPU_SLOWDOWN ? s->hooks.slowdown != NULL
                                  : f->spec.kind == CFG_FAULT_SDC        ? s->hooks.sdc != NULL
                                                                         : s->hooks.fail != NULL);
  const char *none = hooked ? "" : " (no workload hook: no effect on this run)";
  simtime_ps now = sim_now(s->sim);
  switch (f->spec.kind) {
  case CFG_FAULT_GPU_SLOWDOWN: {
    double factor = act == ACT_APPLY ? f->spec.factor : 1.0;
    if (hooked) s->hooks.slowdown(s->hooks.ctx, now, f->gpu, factor);
    if (act == ACT_APPLY)
      log_event(s, i, name, "gpu-slowdown", factor, "gpu%u computes at %.3g of its speed%s", f->gpu,
                factor, none);
    else log_event(s, i, name, "recover", factor, "gpu%u back to full speed%s", f->gpu, none);
    return;
  }
  case CFG_FAULT_GPU_FAIL:
  case CFG_FAULT_NODE_FAIL: {
    bool node = f->spec.kind == CFG_FAULT_NODE_FAIL;
    if (hooked) s->hooks.fail(s->hooks.ctx, now, f->gpu, node);
    if (node)
      log_event(s, i, name, "node-fail", 0,
                "node %u failed (gpu%u and the rest of its node); the synchronous job stops%s",
                topo_gpu_node(s->t, f->gpu), f->gpu, none);
    else
      log_event(s, i, name, "gpu-fail", 0, "gpu%u failed; the synchronous job stops%s", f->gpu,
                none);
    return;
  }
  case CFG_FAULT_SDC:
    if (hooked) s->hooks.sdc(s->hooks.ctx, now, f->gpu);
    log_event(s, i, name, "sdc", 0, "silent data corruption on gpu%u%s", f->gpu, none);
    return;
  default: return;
  }
}

static void reroute(flt_sched *s, uint32_t cause) {
  be_stats before, after;
  s->reroute_at = SIM_TIME_MAX;
  s->be->ops->stats(s->be, &before);
  s->be->ops->reroute(s->be, &s->phys);
  s->be->ops->stats(s->be, &after);
  uint64_t moved = after.flows_rerouted - before.flows_rerouted;
  uint64_t failed = after.transfers_failed - before.transfers_failed;
  log_event(s, cause, s->f[cause].spec.target, "reroute", (double)moved,
            "routing reconverged (%u element%s down): rerouted %llu flow%s in flight; %llu "
            "transfer%s left without a route failed",
            s->phys.down, s->phys.down == 1 ? "" : "s", (unsigned long long)moved,
            moved == 1 ? "" : "s", (unsigned long long)failed, failed == 1 ? "" : "s");
}

static void on_event(sim_ctx *sim, void *obj, uint64_t arg) {
  flt_sched *s = obj;
  uint32_t i = (uint32_t)(arg >> 3);
  int act = (int)(arg & 7);
  (void)sim;
  if (act == ACT_REROUTE) {
    reroute(s, i);
    return;
  }
  if (cfg_fault_is_network(s->f[i].spec.kind)) apply_network(s, i, act);
  else apply_gpu(s, i, act);
}

static void on_failure(void *ctx, const be_failure *f) {
  flt_sched *s = ctx;
  char comp[48];
  s->failures++;
  if (s->failures > FLT_LOG_FAILURES) {
    s->unlogged_failures++;
    s->unlogged_bytes += f->bytes - f->bytes_delivered;
    return;
  }
  snprintf(comp, sizeof comp, "gpu%u", f->src_gpu);
  log_event(s, FLT_NO_FAULT, comp, "transfer-failed", (double)(f->bytes - f->bytes_delivered),
            "transfer gpu%u->gpu%u failed: %s (%llu of %llu bytes undelivered)", f->src_gpu,
            f->dst_gpu, f->cause, (unsigned long long)(f->bytes - f->bytes_delivered),
            (unsigned long long)f->bytes);
}

static void sched(flt_sched *s, simtime_ps at, uint32_t i, int act) {
  ev_schedule(s->sim, at, on_event, s, ((uint64_t)i << 3) | (uint64_t)act);
}

/* Every time fault c's schedule derives, plus a reroute `reconv` after
 * it, fits a simtime_ps (cfg's validation keeps them under its horizon,
 * 2^62 ps; this guards callers that build specs themselves). */
static bool schedule_fits(const cfg_fault *c, simtime_ps reconv) {
  simtime_ps last = c->at, cycles, end;
  if (c->kind == CFG_FAULT_LINK_FLAP && c->count > 1 &&
      (__builtin_mul_overflow((simtime_ps)(c->count - 1), c->period, &cycles) ||
       __builtin_add_overflow(last, cycles, &last)))
    return false;
  return !__builtin_add_overflow(last, c->duration, &end) &&
         !__builtin_add_overflow(end, reconv, &end);
}

flt_sched *flt_sched_start(sim_ctx *sim, const topo *t, be_backend *be, const flt_fault *f,
                           uint32_t n, const cfg_scenario *cfg, const flt_gpu_hooks *hooks,
                           sim_error *err) {
  uint32_t nl = topo_link_count(t);
  for (uint32_t i = 0; i < n; i++)
    if (cfg_fault_is_network(f[i].spec.kind) && (!be->ops->link_state || !be->ops->reroute)) {
      sim_fail(err, SIM_ENOTSUP,
               "faults[%u]: the %s backend cannot model %s; use "
               "simulation.fidelity flow or packet",
               f[i].spec.index, be->ops->name, cfg_fault_kind_name(f[i].spec.kind));
      return NULL;
    }
  for (uint32_t i = 0; i < n; i++)
    if (!schedule_fits(&f[i].spec, cfg->reliability.reconvergence)) {
      sim_fail(err, SIM_ERANGE,
               "faults[%u]: its schedule (at, duration, period x count, "
               "reliability.reconvergence after it) passes the range of simulated time",
               f[i].spec.index);
      return NULL;
    }
  flt_sched *s = sim_calloc(1, sizeof *s);
  s->sim = sim;
  s->t = t;
  s->be = be;
  s->cfg = cfg;
  s->n = n;
  s->f = sim_malloc((n ? n : 1) * sizeof *s->f);
  if (n) memcpy(s->f, f, n * sizeof *f);
  s->held = sim_calloc(nl ? nl : 1, sizeof *s->held);
  s->factor = sim_malloc((nl ? nl : 1) * sizeof *s->factor);
  s->ber = sim_calloc(nl ? nl : 1, sizeof *s->ber);
  for (uint32_t l = 0; l < nl; l++) s->factor[l] = 1.0;
  topo_health_init(&s->phys, t);
  s->reroute_at = SIM_TIME_MAX;
  flt_sched_set_hooks(s, hooks);
  be->on_failure = on_failure;
  be->on_failure_ctx = s;
  for (uint32_t i = 0; i < n; i++) {
    const cfg_fault *c = &s->f[i].spec;
    if (c->kind == CFG_FAULT_LINK_FLAP) {
      for (uint32_t k = 0; k < c->count; k++) {
        sched(s, c->at + (simtime_ps)k * c->period, i, ACT_FLAP_DOWN);
        sched(s, c->at + (simtime_ps)k * c->period + c->duration, i, ACT_FLAP_UP);
      }
      continue;
    }
    sched(s, c->at, i, ACT_APPLY);
    if (c->duration) sched(s, c->at + c->duration, i, ACT_RECOVER);
  }
  return s;
}

void flt_sched_set_hooks(flt_sched *s, const flt_gpu_hooks *hooks) {
  s->have_hooks = hooks != NULL;
  if (hooks) s->hooks = *hooks;
  else memset(&s->hooks, 0, sizeof s->hooks);
}

void flt_sched_finish(flt_sched *s) {
  if (s->unlogged_failures == 0) return;
  log_event(s, FLT_NO_FAULT, "fabric", "transfer-failed", (double)s->unlogged_failures,
            "%llu more transfers failed: no route (%llu bytes undelivered)",
            (unsigned long long)s->unlogged_failures, (unsigned long long)s->unlogged_bytes);
  s->unlogged_failures = 0;
}

size_t flt_sched_event_count(const flt_sched *s) { return s ? s->nlog : 0; }
const flt_event *flt_sched_event(const flt_sched *s, size_t i) {
  return s && i < s->nlog ? &s->log[i] : NULL;
}
uint64_t flt_sched_failures(const flt_sched *s) { return s ? s->failures : 0; }

void flt_sched_free(flt_sched *s) {
  if (!s) return;
  if (s->be && s->be->on_failure == on_failure) s->be->on_failure = NULL;
  topo_health_free(&s->phys);
  sim_free(s->f);
  sim_free(s->held);
  sim_free(s->factor);
  sim_free(s->ber);
  sim_free(s->log);
  sim_free(s);
}
