/* A job's traces matched over ranks (fabsim/trace.h, "Matching across
 * ranks"). Ranks sharing a trace (a class) behave alike, so per-call checks
 * compare traces, not ranks: O(ranks x groups + calls x traces) for the
 * collectives, O(p2p nodes over ranks x log) for the sends and recvs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trc_internal.h"

static uint32_t find_group(trc_set *s, size_t *cap, const char *name) {
  for (uint32_t g = 0; g < s->ngroups; g++)
    if (strcmp(s->groups[g].name, name) == 0) return g;
  sim_grow((void **)&s->groups, cap, (size_t)s->ngroups + 1, sizeof *s->groups);
  trc_group *g = &s->groups[s->ngroups];
  memset(g, 0, sizeof *g);
  g->name = sim_strdup(name);
  g->ranks = sim_malloc((s->nranks ? s->nranks : 1) * sizeof *g->ranks);
  return s->ngroups++;
}

static const char *group_label(const trc_group *g, char *buf, size_t cap) {
  if (!g->name[0]) snprintf(buf, cap, "the default group (no pg_name: every rank)");
  else snprintf(buf, cap, "process group \"%s\"", g->name);
  return buf;
}

/* Groups and their members; every member's calls agree with the first
 * member's (count, comm_type, comm_size). */
static int match_groups(trc_set *s, sim_error *err) {
  size_t cap = 0;
  char lab[160];
  s->pg_group = sim_calloc(s->ntraces, sizeof *s->pg_group);
  for (uint32_t k = 0; k < s->ntraces; k++) {
    const trc_trace *t = &s->traces[k];
    s->pg_group[k] = sim_malloc(((size_t)t->npg + 1) * sizeof **s->pg_group);
    for (uint32_t p = 0; p <= t->npg; p++) {
      bool used = t->call_start[p + 1] > t->call_start[p];
      s->pg_group[k][p] =
          !used ? TRC_NO_GROUP : find_group(s, &cap, p < t->npg ? t->pg_names[p] : "");
    }
  }
  for (uint32_t r = 0; r < s->nranks; r++) { /* ranks ascending: members ascending */
    const trc_trace *t = &s->traces[s->rank_trace[r]];
    for (uint32_t p = 0; p <= t->npg; p++) {
      uint32_t g = s->pg_group[s->rank_trace[r]][p];
      if (g != TRC_NO_GROUP) s->groups[g].ranks[s->groups[g].nranks++] = r;
    }
  }
  for (uint32_t gi = 0; gi < s->ngroups; gi++) {
    trc_group *g = &s->groups[gi];
    if (!g->name[0] && g->nranks < s->nranks) { /* the default group is every rank */
      uint32_t miss = 0;
      for (uint32_t i = 0; i < g->nranks && g->ranks[i] == miss; i++) miss++;
      uint32_t r0 = g->ranks[0];
      const trc_trace *t0 = &s->traces[s->rank_trace[r0]];
      return sim_fail(err, SIM_EINVAL,
                      "%s: rank %u has collectives without pg_name (the "
                      "default group, every rank), but rank %u (%s) has none: the ranks "
                      "disagree on the group",
                      t0->name, r0, miss, s->traces[s->rank_trace[miss]].name);
    }
    /* the calls of each member's trace against the first member's */
    uint32_t r0 = g->ranks[0], k0 = s->rank_trace[r0];
    const trc_trace *t0 = &s->traces[k0];
    uint32_t p0 = 0;
    while (s->pg_group[k0][p0] != gi) p0++;
    g->ncalls = t0->call_start[p0 + 1] - t0->call_start[p0];
    g->first = s->ninstances;
    if (g->ncalls > UINT32_MAX - s->ninstances)
      return sim_fail(err, SIM_EINVAL, "%s: more than 2^32 collective calls", t0->name);
    s->ninstances += g->ncalls;
    for (uint32_t i = 1; i < g->nranks; i++) {
      uint32_t r = g->ranks[i], k = s->rank_trace[r];
      if (k == k0) continue;
      const trc_trace *t = &s->traces[k];
      uint32_t p = 0;
      while (s->pg_group[k][p] != gi) p++;
      uint32_t n = t->call_start[p + 1] - t->call_start[p];
      if (n != g->ncalls)
        return sim_fail(err, SIM_EINVAL,
                        "%s: rank %u makes %u collective calls on %s, rank %u "
                        "(%s) makes %u: the group's members must make the same calls",
                        t->name, r, n, group_label(g, lab, sizeof lab), r0, t0->name, g->ncalls);
      for (uint32_t c = 0; c < n; c++) {
        const trc_node *a = &t0->nodes[t0->call_nodes[t0->call_start[p0] + c]];
        const trc_node *b = &t->nodes[t->call_nodes[t->call_start[p] + c]];
        if (a->comm_type != b->comm_type || a->bytes != b->bytes)
          return sim_fail(err, SIM_EINVAL,
                          "%s: byte %llu, node %llu: call %u on %s is %s of "
                          "%llu bytes at rank %u, but %s of %llu bytes at rank %u (%s, node %llu): "
                          "the group disagrees",
                          t->name, (unsigned long long)b->offset, (unsigned long long)b->id, c,
                          group_label(g, lab, sizeof lab), trc_comm_type_name(b->comm_type),
                          (unsigned long long)b->bytes, r, trc_comm_type_name(a->comm_type),
                          (unsigned long long)a->bytes, r0, t0->name, (unsigned long long)a->id);
      }
    }
  }
  return SIM_OK;
}

typedef struct p2p_rec {
  uint32_t src, dst;
  int64_t tag;
  uint32_t seq; /* k-th of its (src, dst, tag) in file order */
  uint32_t rank, node;
} p2p_rec;

static int cmp_rec(const void *a, const void *b) {
  const p2p_rec *x = a, *y = b;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
  if (x->node != y->node) return x->node < y->node ? -1 : 1; /* file order */
  return 0;
}

static void number_seq(p2p_rec *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_rec);
  for (size_t i = 0; i < n; i++)
    v[i].seq = i && v[i - 1].src == v[i].src && v[i - 1].dst == v[i].dst && v[i - 1].tag == v[i].tag
                   ? v[i - 1].seq + 1
                   : 0;
}

static int cmp_rec_seq(const p2p_rec *x, const p2p_rec *y) {
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int unmatched(const trc_set *s, const p2p_rec *e, bool send, sim_error *err) {
  const trc_trace *t = &s->traces[s->rank_trace[e->rank]];
  const trc_node *x = &t->nodes[e->node];
  if (send)
    return sim_fail(err, SIM_EINVAL,
                    "%s: byte %llu, node %llu: rank %u sends %llu bytes to rank "
                    "%u (tag %lld, its send number %u there) with no matching recv in rank %u's "
                    "trace (%s)",
                    t->name, (unsigned long long)x->offset, (unsigned long long)x->id, e->src,
                    (unsigned long long)x->bytes, e->dst, (long long)e->tag, e->seq, e->dst,
                    s->traces[s->rank_trace[e->dst]].name);
  return sim_fail(err, SIM_EINVAL,
                  "%s: byte %llu, node %llu: rank %u receives %llu bytes from "
                  "rank %u (tag %lld, its recv number %u from there) with no matching send in rank "
                  "%u's trace (%s)",
                  t->name, (unsigned long long)x->offset, (unsigned long long)x->id, e->dst,
                  (unsigned long long)x->bytes, e->src, (long long)e->tag, e->seq, e->src,
                  s->traces[s->rank_trace[e->src]].name);
}

/* Sends and recvs paired: the k-th send a->b with tag t and the k-th recv
 * at b from a with tag t, of the same size. */
static int match_p2p(trc_set *s, sim_error *err) {
  size_t total = 0, ns = 0, nr = 0;
  for (uint32_t r = 0; r < s->nranks; r++) total += s->traces[s->rank_trace[r]].np2p;
  p2p_rec *snd = sim_malloc((total ? total : 1) * sizeof *snd);
  p2p_rec *rcv = sim_malloc((total ? total : 1) * sizeof *rcv);
  int rc = SIM_OK;
  s->rank_pair = sim_calloc(s->nranks ? s->nranks : 1, sizeof *s->rank_pair);
  for (uint32_t r = 0; r < s->nranks; r++) {
    const trc_trace *t = &s->traces[s->rank_trace[r]];
    s->rank_pair[r] = sim_malloc((t->np2p ? t->np2p : 1) * sizeof **s->rank_pair);
    for (uint32_t i = 0; i < t->n; i++) {
      const trc_node *x = &t->nodes[i];
      if (x->kind != TRC_SEND && x->kind != TRC_RECV) continue;
      if (x->peer < 0 || x->peer >= (int64_t)s->nranks || x->peer == (int64_t)r) {
        rc = sim_fail(err, SIM_EINVAL,
                      "%s: byte %llu, node %llu: rank %u %s rank %lld; allowed: "
                      "another rank of the job, 0..%u",
                      t->name, (unsigned long long)x->offset, (unsigned long long)x->id, r,
                      x->kind == TRC_SEND ? "sends to" : "receives from", (long long)x->peer,
                      s->nranks - 1);
        goto done;
      }
      uint32_t peer = (uint32_t)x->peer;
      if (x->kind == TRC_SEND) snd[ns++] = (p2p_rec){r, peer, x->tag, 0, r, i};
      else rcv[nr++] = (p2p_rec){peer, r, x->tag, 0, r, i};
    }
  }
  number_seq(snd, ns);
  number_seq(rcv, nr);
  s->pairs = sim_malloc((ns ? ns : 1) * sizeof *s->pairs);
  size_t i = 0, j = 0;
  while (i < ns || j < nr) {
    int c = i == ns ? 1 : j == nr ? -1 : cmp_rec_seq(&snd[i], &rcv[j]);
    if (c < 0) {
      rc = unmatched(s, &snd[i], true, err);
      goto done;
    }
    if (c > 0) {
      rc = unmatched(s, &rcv[j], false, err);
      goto done;
    }
    const trc_trace *ts = &s->traces[s->rank_trace[snd[i].rank]];
    const trc_trace *tr = &s->traces[s->rank_trace[rcv[j].rank]];
    const trc_node *a = &ts->nodes[snd[i].node], *b = &tr->nodes[rcv[j].node];
    if (a->bytes != b->bytes) {
      rc = sim_fail(err, SIM_EINVAL,
                    "%s: byte %llu, node %llu: rank %u receives %llu bytes from "
                    "rank %u (tag %lld), which sends %llu (%s, node %llu): the sizes disagree",
                    tr->name, (unsigned long long)b->offset, (unsigned long long)b->id, rcv[j].rank,
                    (unsigned long long)b->bytes, snd[i].rank, (long long)a->tag,
                    (unsigned long long)a->bytes, ts->name, (unsigned long long)a->id);
      goto done;
    }
    uint32_t p = s->npairs++;
    s->pairs[p] = (trc_pair){snd[i].rank, rcv[j].rank, snd[i].node, rcv[j].node, a->bytes};
    s->rank_pair[snd[i].rank][a->call] = p;
    s->rank_pair[rcv[j].rank][b->call] = p;
    i++, j++;
  }
done:
  sim_free(snd);
  sim_free(rcv);
  return rc;
}

/* Would every node run? The runner's rules without time (a call completes
 * when all members reached it, a pair when both sides did), as a worklist
 * over all ranks' nodes. A node left over waits forever: a cross-rank
 * deadlock (rank 0 in an AllReduce that rank 1 reaches only after a recv
 * from rank 0's later send). O(nodes over ranks + deps). */
typedef struct dl_state {
  const trc_set *s;
  uint32_t **left;   /* per rank, per node: deps not done */
  uint32_t *arrived; /* per call, then per pair */
  uint64_t *stack;   /* rank << 32 | node: done, children to release */
  size_t n, cap;
} dl_state;

static void dl_done(dl_state *d, uint32_t r, uint32_t i) {
  sim_grow((void **)&d->stack, &d->cap, d->n + 1, sizeof *d->stack);
  d->stack[d->n++] = (uint64_t)r << 32 | i;
}

static void dl_ready(dl_state *d, uint32_t r, uint32_t i) {
  const trc_set *s = d->s;
  uint32_t k = s->rank_trace[r];
  const trc_trace *t = &s->traces[k];
  const trc_node *x = &t->nodes[i];
  if (x->kind == TRC_COLL) {
    uint32_t gi = s->pg_group[k][x->pg == TRC_NO_GROUP ? t->npg : x->pg];
    const trc_group *g = &s->groups[gi];
    if (++d->arrived[g->first + x->call] < g->nranks) return;
    for (uint32_t m = 0; m < g->nranks; m++) {
      uint32_t q = g->ranks[m], kq = s->rank_trace[q], p = 0;
      const trc_trace *tq = &s->traces[kq];
      while (s->pg_group[kq][p] != gi) p++;
      dl_done(d, q, tq->call_nodes[tq->call_start[p] + x->call]);
    }
  } else if (x->kind == TRC_SEND || x->kind == TRC_RECV) {
    uint32_t pi = s->rank_pair[r][x->call];
    if (++d->arrived[s->ninstances + pi] < 2) return;
    dl_done(d, s->pairs[pi].src, s->pairs[pi].send_node);
    dl_done(d, s->pairs[pi].dst, s->pairs[pi].recv_node);
  } else {
    dl_done(d, r, i);
  }
}

/* What node i of rank r waits for, for the deadlock message. */
static size_t dl_describe(const dl_state *d, uint32_t r, uint32_t i, char *buf, size_t cap) {
  const trc_set *s = d->s;
  uint32_t k = s->rank_trace[r];
  const trc_trace *t = &s->traces[k];
  const trc_node *x = &t->nodes[i];
  char lab[96];
  if (x->kind == TRC_COLL) {
    const trc_group *g = &s->groups[s->pg_group[k][x->pg == TRC_NO_GROUP ? t->npg : x->pg]];
    snprintf(lab, sizeof lab, g->name[0] ? "\"%s\"" : "the default group%s", g->name);
    return (size_t)snprintf(buf, cap,
                            "rank %u (%s) waits at node %llu (%s, call %u of %s: %u "
                            "of %u ranks reach it)",
                            r, t->name, (unsigned long long)x->id, trc_comm_type_name(x->comm_type),
                            x->call, lab, d->arrived[g->first + x->call], g->nranks);
  }
  const trc_pair *p = &s->pairs[s->rank_pair[r][x->call]];
  return (size_t)snprintf(
      buf, cap,
      "rank %u (%s) waits at node %llu (%s rank %u, whose %s "
      "never starts)",
      r, t->name, (unsigned long long)x->id, x->kind == TRC_SEND ? "send to" : "recv from",
      x->kind == TRC_SEND ? p->dst : p->src, x->kind == TRC_SEND ? "recv" : "send");
}

static int check_deadlock(const trc_set *s, sim_error *err) {
  dl_state d = {.s = s};
  uint64_t total = 0, done = 0;
  int rc = SIM_OK;
  d.left = sim_calloc(s->nranks ? s->nranks : 1, sizeof *d.left);
  d.arrived = sim_calloc((size_t)s->ninstances + s->npairs + 1, sizeof *d.arrived);
  for (uint32_t r = 0; r < s->nranks; r++) {
    const trc_trace *t = &s->traces[s->rank_trace[r]];
    d.left[r] = sim_malloc((t->n ? t->n : 1) * sizeof **d.left);
    for (uint32_t i = 0; i < t->n; i++) d.left[r][i] = t->nodes[i].ndeps;
    total += t->n;
  }
  for (uint32_t r = 0; r < s->nranks; r++) {
    const trc_trace *t = &s->traces[s->rank_trace[r]];
    for (uint32_t i = 0; i < t->n; i++)
      if (!t->nodes[i].ndeps) dl_ready(&d, r, i);
  }
  while (d.n) {
    uint64_t v = d.stack[--d.n];
    uint32_t r = (uint32_t)(v >> 32), i = (uint32_t)v;
    const trc_trace *t = &s->traces[s->rank_trace[r]];
    done++;
    for (uint32_t c = t->child_start[i]; c < t->child_start[i + 1]; c++)
      if (--d.left[r][t->children[c]] == 0) dl_ready(&d, r, t->children[c]);
  }
  if (done < total) { /* the stuck nodes whose own dependencies are done */
    char msg[640];
    size_t used = 0;
    int shown = 0;
    for (uint32_t r = 0; r < s->nranks && shown < 3; r++) {
      const trc_trace *t = &s->traces[s->rank_trace[r]];
      for (uint32_t i = 0; i < t->n && shown < 3; i++) {
        trc_kind kd = t->nodes[i].kind;
        if (d.left[r][i] || (kd != TRC_COLL && kd != TRC_SEND && kd != TRC_RECV)) continue;
        if (shown++)
          used += (size_t)snprintf(msg + used, used < sizeof msg ? sizeof msg - used : 0, "; ");
        if (used < sizeof msg) used += dl_describe(&d, r, i, msg + used, sizeof msg - used);
      }
    }
    rc = sim_fail(err, SIM_EINVAL,
                  "deadlock: %llu of %llu nodes over the ranks can never run: "
                  "%s",
                  (unsigned long long)(total - done), (unsigned long long)total,
                  shown ? msg : "(no node waits at a call)");
  }
  for (uint32_t r = 0; r < s->nranks; r++) sim_free(d.left[r]);
  sim_free(d.left);
  sim_free(d.arrived);
  sim_free(d.stack);
  return rc;
}

int trc_set_create(trc_set **out, trc_trace *traces, uint32_t ntraces, const uint32_t *rank_trace,
                   uint32_t nranks, sim_error *err) {
  trc_set *s = sim_calloc(1, sizeof *s);
  s->traces = traces;
  s->ntraces = ntraces;
  s->nranks = nranks;
  s->rank_trace = sim_malloc((nranks ? nranks : 1) * sizeof *s->rank_trace);
  memcpy(s->rank_trace, rank_trace, nranks * sizeof *s->rank_trace);
  int rc = match_groups(s, err);
  if (rc == SIM_OK) rc = match_p2p(s, err);
  if (rc == SIM_OK) rc = check_deadlock(s, err);
  if (rc != SIM_OK) {
    trc_set_free(s);
    s = NULL;
  }
  *out = s;
  return rc;
}

void trc_set_free(trc_set *s) {
  if (!s) return;
  for (uint32_t g = 0; g < s->ngroups; g++) {
    sim_free(s->groups[g].name);
    sim_free(s->groups[g].ranks);
  }
  sim_free(s->groups);
  if (s->pg_group)
    for (uint32_t k = 0; k < s->ntraces; k++) sim_free(s->pg_group[k]);
  sim_free(s->pg_group);
  if (s->rank_pair)
    for (uint32_t r = 0; r < s->nranks; r++) sim_free(s->rank_pair[r]);
  sim_free(s->rank_pair);
  sim_free(s->pairs);
  for (uint32_t k = 0; k < s->ntraces; k++) trc_trace_free(&s->traces[k]);
  sim_free(s->traces);
  sim_free(s->rank_trace);
  sim_free(s);
}
