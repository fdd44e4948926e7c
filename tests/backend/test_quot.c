/* A pool's quotient by its segments (be_quot_build): checked against its
 * definition, by brute force, on real plans (tree AllReduce, ring
 * broadcast; several channels, two queue pairs so bytes differ) over
 * symmetric and asymmetric fabrics and placements (fat-trees of 2 and 3
 * tiers, oversubscribed, multi-plane, rail-optimized; all GPUs, nodes with
 * gaps, uneven node blocks) under static, ECMP and spray routing:
 *   - every channel of a class has, per segment, the same transfers' count
 *     and bytes as the class's first member (routed here, transfer by
 *     transfer), the class's capacity is each member's, a channel no
 *     transfer crosses is in none, and the per-segment runs are those;
 *   - the transfer classes, weighted, are exactly the multiset of the
 *     transfers' (segment, bytes, path latency, set of channel classes);
 *   - every GPU of a class is an end of as many transfers per segment;
 * and, on the symmetric ones, the quotient is much smaller than the pool
 * (the point of it). Bad input is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"

/* Per item and segment: count and bytes (dense: small fabrics only). */
typedef struct hist {
  uint32_t nseg;
  uint32_t *count;
  uint64_t *bytes;
} hist;

static void hist_init(hist *h, uint32_t items, uint32_t nseg) {
  h->nseg = nseg;
  h->count = sim_calloc((size_t)items * nseg, sizeof *h->count);
  h->bytes = sim_calloc((size_t)items * nseg, sizeof *h->bytes);
}

static void hist_free(hist *h) {
  sim_free(h->count);
  sim_free(h->bytes);
}

static bool hist_same(const hist *h, uint32_t a, uint32_t b) {
  size_t n = h->nseg;
  return !memcmp(h->count + a * n, h->count + b * n, n * sizeof *h->count) &&
         !memcmp(h->bytes + a * n, h->bytes + b * n, n * sizeof *h->bytes);
}

typedef struct sig {
  uint32_t seg, n;
  uint64_t bytes;
  simtime_ps lat;
  uint32_t cls[TOPO_MAX_PATH];
} sig;

static int sig_cmp(const void *a, const void *b) {
  const sig *x = a, *y = b;
  if (x->seg != y->seg) return x->seg < y->seg ? -1 : 1;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
  if (x->lat != y->lat) return x->lat < y->lat ? -1 : 1;
  if (x->n != y->n) return x->n < y->n ? -1 : 1;
  return memcmp(x->cls, y->cls, x->n * sizeof *x->cls);
}

static int u32_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* The sorted set of path[0..n) into out; its size. */
static uint32_t set_of(const uint32_t *path, uint32_t n, uint32_t *out) {
  memcpy(out, path, n * sizeof *path);
  qsort(out, n, sizeof *out, u32_cmp);
  uint32_t m = 0;
  for (uint32_t j = 0; j < n; j++)
    if (m == 0 || out[m - 1] != out[j]) out[m++] = out[j];
  return m;
}

/* Check q against the definition on plan p's pool. */
static void check_quot(const fixture *f, const coll_plan *p, topo_split split, const be_quot *q) {
  const topo *t = f->t;
  size_t n = p->pool_n;
  uint32_t nlinkch = 2 * topo_link_count(t), ng = topo_gpu_count(t);
  uint32_t nch = nlinkch + (split == TOPO_SPLIT_POOLS ? topo_pool_count(t) : 0);
  assert_int_equal(q->nseg, p->ncuts - 1);
  assert_int_equal(q->nchan, nch);
  hist ch, gp;
  hist_init(&ch, nch, q->nseg);
  hist_init(&gp, ng, q->nseg);
  topo_path *paths = sim_malloc(n * sizeof *paths);
  simtime_ps *lat = sim_malloc(n * sizeof *lat);
  uint32_t *seg = sim_malloc(n * sizeof *seg);
  uint64_t *seg_bytes = sim_calloc(q->nseg, sizeof *seg_bytes);
  uint32_t s = 0;
  for (size_t i = 0; i < n; i++) {
    while (i >= p->cuts[s + 1]) s++;
    const be_xfer *x = &p->pool[i];
    topo_path *pt = &paths[i];
    pt->n = 0;
    if (x->src_gpu != x->dst_gpu) topo_route(t, x->src_gpu, x->dst_gpu, x->flow_hash, pt);
    lat[i] = pt->n ? topo_path_latency(t, pt) : 0;
    if (split == TOPO_SPLIT_POOLS)
      for (uint32_t j = 0; j < pt->n; j++) pt->ch[j] = topo_spray_channel(t, pt->ch[j]);
    seg[i] = s;
    seg_bytes[s] += x->bytes;
    for (uint32_t j = 0; j < pt->n; j++) {
      ch.count[(size_t)pt->ch[j] * q->nseg + s]++;
      ch.bytes[(size_t)pt->ch[j] * q->nseg + s] += x->bytes;
    }
    gp.count[(size_t)x->src_gpu * q->nseg + s]++;
    gp.count[(size_t)x->dst_gpu * q->nseg + s]++;
  }
  for (s = 0; s < q->nseg; s++) assert_int_equal(q->seg_bytes[s], seg_bytes[s]);
  /* channel classes */
  uint32_t *members = sim_calloc(q->ncc + 1, sizeof *members);
  for (uint32_t c = 0; c < nch; c++) {
    uint32_t k = q->cc_of[c];
    bool crossed = false;
    for (s = 0; s < q->nseg; s++) crossed |= ch.count[(size_t)c * q->nseg + s] > 0;
    if (k == UINT32_MAX) {
      assert_false(crossed);
      continue;
    }
    assert_true(crossed);
    assert_true(k < q->ncc);
    assert_true(q->cc_first[k] <= c);
    assert_true(hist_same(&ch, c, q->cc_first[k]));
    rate_bps cap = c < nlinkch ? topo_link_at(t, topo_channel_link(c))->bps : topo_pool_bps(t, c);
    assert_int_equal(q->cc_cap[k], cap);
    members[k]++;
  }
  for (uint32_t k = 0; k < q->ncc; k++)
    if (members[k]) assert_int_equal(members[k], q->cc_members[k]);
  for (s = 0; s < q->nseg; s++) {
    uint32_t listed = 0;
    for (size_t e = q->seg_cc_off[s]; e < q->seg_cc_off[s + 1]; e++, listed++) {
      const be_quot_entry *en = &q->seg_cc[e];
      if (e > q->seg_cc_off[s]) assert_true(en->cls > q->seg_cc[e - 1].cls);
      size_t at = (size_t)q->cc_first[en->cls] * q->nseg + s;
      assert_int_equal(en->count, ch.count[at]);
      assert_int_equal(en->bytes, ch.bytes[at]);
      assert_true(en->count > 0);
    }
    uint32_t want = 0; /* classes whose members carry something in s */
    for (uint32_t k = 0; k < q->ncc; k++)
      want += members[k] && ch.count[(size_t)q->cc_first[k] * q->nseg + s] > 0;
    assert_int_equal(listed, want);
  }
  /* transfer classes: the same multiset of signatures */
  sig *mine = sim_malloc(n * sizeof *mine), *theirs = sim_malloc(n * sizeof *theirs);
  for (size_t i = 0; i < n; i++) {
    uint32_t cl[TOPO_MAX_PATH];
    for (uint32_t j = 0; j < paths[i].n; j++) cl[j] = q->cc_of[paths[i].ch[j]];
    mine[i] = (sig){.seg = seg[i], .bytes = p->pool[i].bytes, .lat = lat[i]};
    mine[i].n = set_of(cl, paths[i].n, mine[i].cls);
  }
  size_t m = 0;
  for (s = 0; s < q->nseg; s++)
    for (uint32_t k = q->seg_tc[s]; k < q->seg_tc[s + 1]; k++) {
      assert_true(q->tc_w[k] > 0);
      for (uint64_t w = 0; w < q->tc_w[k]; w++, m++) {
        assert_true(m < n);
        theirs[m] = (sig){.seg = s, .bytes = q->tc_bytes[k], .lat = q->tc_lat[k]};
        theirs[m].n = q->tc_poff[k + 1] - q->tc_poff[k];
        memcpy(theirs[m].cls, q->tc_path + q->tc_poff[k], theirs[m].n * sizeof(uint32_t));
      }
    }
  assert_int_equal(m, n);
  assert_int_equal(q->seg_tc[q->nseg], q->ntc);
  qsort(mine, n, sizeof *mine, sig_cmp);
  qsort(theirs, n, sizeof *theirs, sig_cmp);
  for (size_t i = 0; i < n; i++) assert_int_equal(sig_cmp(&mine[i], &theirs[i]), 0);
  /* GPU classes */
  uint32_t *first = sim_malloc(q->ngc * sizeof *first), *gm = sim_calloc(q->ngc, sizeof *gm);
  for (uint32_t k = 0; k < q->ngc; k++) first[k] = UINT32_MAX;
  for (uint32_t g = 0; g < ng; g++) {
    uint32_t k = q->gc_of[g];
    assert_true(k < q->ngc);
    if (first[k] == UINT32_MAX) first[k] = g;
    assert_true(hist_same(&gp, g, first[k]));
    gm[k]++;
  }
  for (uint32_t k = 0; k < q->ngc; k++) assert_int_equal(gm[k], q->gc_members[k]);
  for (s = 0; s < q->nseg; s++)
    for (size_t e = q->seg_gc_off[s]; e < q->seg_gc_off[s + 1]; e++)
      assert_int_equal(q->seg_gc[e].count, gp.count[(size_t)first[q->seg_gc[e].cls] * q->nseg + s]);
  sim_free(first);
  sim_free(gm);
  sim_free(mine);
  sim_free(theirs);
  sim_free(members);
  sim_free(paths);
  sim_free(lat);
  sim_free(seg);
  sim_free(seg_bytes);
  hist_free(&ch);
  hist_free(&gp);
}

typedef struct placement {
  const char *name;
  uint32_t skip_node;  /* nodes n with n % skip_node == 1 left out (0: none) */
  uint32_t short_node; /* this node takes only half its GPUs (UINT32_MAX: none) */
} placement;

/* Plan op/algorithm over the placement's ranks; false when not offered. */
static bool build(coll_plan *p, const fixture *f, cfg_coll_op op, cfg_coll_algorithm a,
                  const placement *pl) {
  uint32_t ng = topo_gpu_count(f->t), gpn = ng / topo_node_count(f->t), n = 0;
  uint32_t *ranks = sim_malloc(ng * sizeof *ranks);
  for (uint32_t g = 0; g < ng; g++) {
    uint32_t node = g / gpn;
    if (pl->skip_node && node % pl->skip_node == 1) continue;
    if (node == pl->short_node && g % gpn >= gpn / 2) continue;
    ranks[n++] = g;
  }
  coll_spec s = {.op = op,
                 .algorithm = a,
                 .protocol = CFG_PROTO_SIMPLE,
                 .bytes = 3u << 20,
                 .ranks = ranks,
                 .nranks = n,
                 .channels = 3,
                 .chunk = 1u << 16,
                 .qps = 2};
  sim_error err = {0};
  int rc = coll_plan_build(p, f->t, &s, &err);
  sim_free(ranks);
  if (rc != SIM_OK) fail_msg("%s", err.msg);
  return p->pool && p->ncuts >= 2;
}

static void check_fabric(const char *const *sets, int nsets, bool symmetric) {
  fixture f;
  load(&f, sets, nsets);
  static const placement pls[] = {
      {"all", 0, UINT32_MAX}, {"gaps", 3, UINT32_MAX}, {"uneven", 0, 1}};
  static const struct {
    cfg_coll_op op;
    cfg_coll_algorithm a;
  } plans[] = {{CFG_COLL_ALLREDUCE, CFG_ALGO_TREE}, {CFG_COLL_BROADCAST, CFG_ALGO_RING}};
  topo_split split = topo_split_of(&f.cfg);
  for (size_t k = 0; k < sizeof pls / sizeof *pls; k++)
    for (size_t j = 0; j < sizeof plans / sizeof *plans; j++) {
      coll_plan p;
      if (!build(&p, &f, plans[j].op, plans[j].a, &pls[k])) {
        coll_plan_free(&p);
        continue;
      }
      be_slice sl = {.pool = p.pool, .pool_n = p.pool_n, .cuts = p.cuts, .ncuts = p.ncuts};
      be_quot q;
      assert_int_equal(be_quot_build(&q, f.t, &sl, split), SIM_OK);
      check_quot(&f, &p, split, &q);
      if (symmetric && k == 0 && j == 0) /* the tree over every GPU: few classes */
        assert_true(q.ntc * 4 < p.pool_n);
      /* every phase is a window of whole segments */
      for (size_t i = 0; i < p.nphases; i++) {
        be_slice w = sl;
        w.off = (size_t)(p.phases[i].x - p.pool);
        w.n = p.phases[i].n;
        uint32_t lo, hi;
        assert_true(be_quot_window(&q, &w, &lo, &hi));
        assert_int_equal(q.cuts[lo], w.off);
        assert_int_equal(q.cuts[hi], w.off + w.n);
      }
      be_quot_free(&q);
      coll_plan_free(&p);
    }
  unload(&f);
}

static void test_fat_tree(void **state) {
  (void)state;
  const char *const two[] = {"cluster.nodes=4", "fabric.switch_radix=8"};
  check_fabric(two, 2, true);
  const char *const three[] = {"cluster.nodes=16", "fabric.switch_radix=8", "fabric.tiers=3"};
  check_fabric(three, 3, true);
  const char *const over[] = {"cluster.nodes=6", "fabric.switch_radix=8",
                              "fabric.oversubscription=3"};
  check_fabric(over, 3, false);
}

static void test_routing(void **state) {
  (void)state;
  const char *const ecmp[] = {"cluster.nodes=16", "fabric.switch_radix=8", "fabric.tiers=3",
                              "fabric.routing=ecmp"};
  check_fabric(ecmp, 4, false);
  const char *const spray[] = {"cluster.nodes=16", "fabric.switch_radix=8", "fabric.tiers=3",
                               "fabric.routing=spray"};
  check_fabric(spray, 4, false);
}

static void test_planes_rails(void **state) {
  (void)state;
  const char *const planes[] = {"cluster.nodes=16", "fabric.topology=multi-plane",
                                "fabric.switch_radix=8"};
  check_fabric(planes, 3, true);
  const char *const rail[] = {"cluster.nodes=8", "fabric.topology=rail-optimized",
                              "fabric.switch_radix=16", "fabric.transport=roce"};
  check_fabric(rail, 4, false);
}

/* No cuts, cuts that do not cover the pool, adaptive routing: refused,
 * nothing kept; a slice off the cuts has no window. */
static void test_refused(void **state) {
  (void)state;
  const char *const sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  be_xfer pool[4] = {{.src_gpu = 0, .dst_gpu = 8, .bytes = 1000},
                     {.src_gpu = 1, .dst_gpu = 9, .bytes = 1000},
                     {.src_gpu = 8, .dst_gpu = 0, .bytes = 1000},
                     {.src_gpu = 9, .dst_gpu = 1, .bytes = 1000}};
  size_t cuts[] = {0, 2, 4}, bad[] = {0, 2, 3};
  be_slice sl = {.pool = pool, .pool_n = 4};
  be_quot q;
  assert_int_equal(be_quot_build(&q, f.t, &sl, TOPO_SPLIT_NONE), SIM_EINVAL);
  sl.cuts = bad;
  sl.ncuts = 3;
  assert_int_equal(be_quot_build(&q, f.t, &sl, TOPO_SPLIT_NONE), SIM_EINVAL);
  sl.cuts = cuts;
  assert_int_equal(be_quot_build(&q, f.t, &sl, TOPO_SPLIT_ADAPTIVE), SIM_EINVAL);
  assert_null(q.cc_of);
  assert_int_equal(be_quot_build(&q, f.t, &sl, TOPO_SPLIT_NONE), SIM_OK);
  assert_int_equal(q.nseg, 2);
  assert_int_equal(q.ntc, 2); /* one class per segment: the two directions of one rail */
  uint32_t lo, hi;
  be_slice w = sl;
  w.off = 1;
  w.n = 2;
  assert_false(be_quot_window(&q, &w, &lo, &hi));
  w.off = 2;
  assert_true(be_quot_window(&q, &w, &lo, &hi));
  assert_true(lo == 1 && hi == 2);
  be_xfer other[4];
  memcpy(other, pool, sizeof pool);
  w.pool = other;
  assert_false(be_quot_window(&q, &w, &lo, &hi));
  be_quot_free(&q);
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fat_tree), cmocka_unit_test(test_routing),
      cmocka_unit_test(test_planes_rails), cmocka_unit_test(test_refused)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
