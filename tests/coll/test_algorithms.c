/* Tree, halving-doubling and hierarchical collectives on the analytic
 * backend against their closed forms; byte conservation; busbw. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"
#include "coll/coll_test.h"

enum { MAXR = 64 };

/* Simulated time is whole picoseconds, rounded up per transfer (and rates
 * are whole bits per second): one picosecond per step on top of a relative
 * tolerance. */
static void assert_close_steps(double got, double want, double steps) {
  if (fabs(got - want) > 1e-12 * fabs(want) + steps * 1e-12)
    fail_msg("got %.15g, want %.15g (diff %.3g)", got, want, got - want);
}

static void build(const fixture *f, coll_plan *p, cfg_coll_op op, cfg_coll_algorithm a, uint64_t S,
                  const uint32_t *ranks, uint32_t n, uint32_t k, uint64_t chunk) {
  coll_spec s = {.op = op,
                 .algorithm = a,
                 .bytes = S,
                 .ranks = ranks,
                 .nranks = n,
                 .channels = k,
                 .chunk = chunk};
  sim_error err = {0};
  if (coll_plan_build(p, f->t, &s, &err) != SIM_OK) fail_msg("%s", err.msg);
}

static double time_of(const fixture *f, cfg_coll_op op, cfg_coll_algorithm a, uint64_t S,
                      const uint32_t *ranks, uint32_t n, uint32_t k, uint64_t chunk) {
  coll_plan p;
  build(f, &p, op, a, S, ranks, n, k, chunk);
  double t = coll_test_run(f, &p, NULL);
  coll_plan_free(&p);
  return t;
}

static void first_ranks(uint32_t *r, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) r[i] = i;
}

/* alpha (s) and bandwidth (bytes/s) of the routed path a -> b. */
static double alpha_of(const fixture *f, uint32_t a, uint32_t b) {
  topo_path p;
  assert_int_equal(topo_route(f->t, a, b, 0, &p), SIM_OK);
  return sim_ps_to_s(topo_path_latency(f->t, &p));
}
static double bw_of(const fixture *f, uint32_t a, uint32_t b) {
  topo_path p;
  assert_int_equal(topo_route(f->t, a, b, 0, &p), SIM_OK);
  return (double)topo_path_bottleneck(f->t, &p) / 8;
}

/* Bytes each GPU sends and receives over the whole plan. */
static void per_gpu_bytes(const coll_plan *p, uint64_t *out, uint64_t *in, uint32_t ngpus) {
  memset(out, 0, ngpus * sizeof *out);
  memset(in, 0, ngpus * sizeof *in);
  for (size_t i = 0; i < p->nphases; i++)
    for (size_t j = 0; j < p->phases[i].n; j++) {
      const be_xfer *x = &p->phases[i].x[j];
      out[x->src_gpu] += x->bytes * p->phases[i].repeat;
      in[x->dst_gpu] += x->bytes * p->phases[i].repeat;
    }
}

static uint64_t steps_of(const coll_plan *p) {
  uint64_t s = 0;
  for (size_t i = 0; i < p->nphases; i++) s += p->phases[i].repeat;
  return s;
}

/* ---- double binary tree ------------------------------------------------------ */

/* NCCL's parent rule (ncclGetBtree), written independently of tree.c's
 * child rule, and the mirror/shift of ncclGetDtree. */
static int btree_up(int n, int r) {
  if (r == 0) return -1;
  int bit = 1;
  while (!(bit & r)) bit <<= 1;
  int up = (r ^ bit) | (bit << 1);
  return up >= n ? r ^ bit : up;
}
static int dtree_up(int n, int r, int which) {
  if (which == 0) return btree_up(n, r);
  if (n % 2 == 0) {
    int u = btree_up(n, n - 1 - r);
    return u < 0 ? -1 : n - 1 - u;
  }
  int u = btree_up(n, (r - 1 + n) % n);
  return u < 0 ? -1 : (u + 1) % n;
}

typedef struct tree_model {
  int n, up[2][MAXR], height[2][MAXR], depth[2][MAXR], h;
} tree_model;

/* NCCL's double binary tree over n ranks or (chain) the one-node chain,
 * rank r under r - 1 in both trees (NCCL's intra-node tree). */
static void tree_model_init(tree_model *m, int n, bool chain) {
  memset(m, 0, sizeof *m);
  m->n = n;
  for (int w = 0; w < 2; w++) {
    for (int r = 0; r < n; r++) m->up[w][r] = chain ? r - 1 : dtree_up(n, r, w);
    for (int r = 0; r < n; r++)
      for (int v = m->up[w][r]; v >= 0; v = m->up[w][v]) m->depth[w][r]++;
    for (int r = 0; r < n; r++) { /* height: longest chain of descendants */
      int h = 0;
      for (int v = r, d = 0; v >= 0; v = m->up[w][v], d++)
        if (m->height[w][v] < d) m->height[w][v] = d;
      (void)h;
    }
  }
  m->h = 0;
  for (int r = 0; r < n; r++)
    if (m->height[0][r] > m->h) m->h = m->height[0][r];
}

/* The pipelined schedule's cost on a uniform network: step s costs
 * alpha + c d_s / B, d_s the most chunks any GPU sends or receives; channel
 * ch's tree over the ranks rotated by ch (rotate: one node's GPUs) or the
 * same ranks (one GPU per node: no rotation inside a node). */
static double tree_model_time(const tree_model *m, uint64_t C, uint32_t k, bool rotate,
                              double alpha, double c, double B, uint64_t *steps) {
  int n = m->n;
  uint64_t S = C + 2 * (uint64_t)m->h - 1;
  double t = 0;
  for (uint64_t s = 0; s < S; s++) {
    int out[MAXR] = {0}, in[MAXR] = {0};
    for (uint32_t ch = 0; ch < k; ch++)
      for (int w = 0; w < 2; w++)
        for (int v = 0; v < n; v++) {
          int u = m->up[w][v];
          if (u < 0) continue;
          int rot = rotate ? (int)ch : 0;
          int gv = (v + rot) % n, gu = (u + rot) % n; /* channel rotation */
          uint64_t hv = (uint64_t)m->height[w][v], du = (uint64_t)(m->h + m->depth[w][u]);
          if (s >= hv && s - hv < C) out[gv]++, in[gu]++;
          if (s >= du && s - du < C) out[gu]++, in[gv]++;
        }
    int d = 0;
    for (int r = 0; r < n; r++) {
      if (out[r] > d) d = out[r];
      if (in[r] > d) d = in[r];
    }
    t += alpha + c * d / B;
  }
  *steps = S;
  return t;
}

static void test_tree_closed_forms(void **state) {
  (void)state;
  /* 32 nodes of one GPU on one leaf: the node-level double binary tree is
   * the rank-level one (tree.c) on a uniform network */
  const char *sets[] = {"cluster.nodes=32", "cluster.gpus_per_node=1", "cluster.nic.per_node=1"};
  fixture f;
  load(&f, sets, 3);
  double a = alpha_of(&f, 0, 1), B = bw_of(&f, 0, 1);
  uint32_t ranks[MAXR];
  first_ranks(ranks, MAXR);
  uint64_t MiB = 1 << 20;
  /* n = 2: C + 1 steps; the first and last carry one chunk per GPU. */
  {
    uint64_t S = 8 * MiB;
    double C = 4, c = (double)S / (2 * C);
    double t = time_of(&f, CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, S, ranks, 2, 1, MiB);
    assert_close_steps(t, (C + 1) * a + 2 * C * c / B, C + 1);
  }
  /* n = 4 (H = 2): C + 3 steps, degrees 2,2,3,4..4,3,2,2: (C+3) alpha + (4C+2) c/B. */
  {
    uint64_t S = 16 * MiB;
    double C = 8, c = (double)S / (2 * C);
    double t = time_of(&f, CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, S, ranks, 4, 1, MiB);
    assert_close_steps(t, (C + 3) * a + (4 * C + 2) * c / B, C + 3);
  }
  /* Any n, one and two channels: the step-by-step model, C + 2 ceil(log2 n) - 1 steps. */
  static const uint32_t ns[] = {3, 5, 6, 7, 8, 12, 13, 16, 31, 32};
  for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
    for (uint32_t k = 1; k <= 2; k++) {
      uint32_t n = ns[i];
      uint64_t S = 24 * MiB * k, C = 12;
      tree_model m;
      tree_model_init(&m, (int)n, false);
      int log2n = 0;
      while ((1u << log2n) < n) log2n++;
      assert_int_equal(m.h, log2n);
      coll_plan p;
      build(&f, &p, CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, S, ranks, n, k, MiB);
      uint64_t steps;
      double want = tree_model_time(&m, C, k, false, a, (double)MiB, B, &steps);
      assert_int_equal(steps_of(&p), C + 2 * (uint64_t)log2n - 1);
      assert_close_steps(coll_test_run(&f, &p, NULL), want, (double)steps);
      /* Every tree edge carries every chunk once up and once down. */
      assert_int_equal(coll_plan_bytes(&p), 2ull * 2 * (n - 1) * (S / 2));
      uint64_t out[MAXR], in[MAXR];
      per_gpu_bytes(&p, out, in, n);
      for (uint32_t r = 0; r < n; r++) {
        uint64_t want_in = 0;
        for (int w = 0; w < 2; w++) {
          uint64_t children = 0;
          for (uint32_t v = 0; v < n; v++) children += m.up[w][v] == (int)r;
          want_in += (children + (m.up[w][r] >= 0)) * (S / 2);
        }
        if (k == 1) assert_int_equal(in[r], want_in);
        assert_true(in[r] >= S); /* every rank receives the whole result */
      }
      coll_plan_free(&p);
    }
  /* One chunk: 2 ceil(log2 n) latency-bound steps. */
  {
    tree_model m;
    tree_model_init(&m, 32, false);
    uint64_t steps;
    double want = tree_model_time(&m, 1, 1, false, a, 512, B, &steps);
    assert_int_equal(steps, 10);
    assert_close_steps(time_of(&f, CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, 1024, ranks, 32, 1, MiB),
                       want, 10);
  }
  unload(&f);
}

/* One node: NCCL's tree is the chain of the node's GPUs (both trees), H =
 * g - 1, C + 2(g-1) - 1 steps; channel c's chain over the GPUs rotated by
 * c. One chunk is 2 (g-1) latency-bound steps, each moving both trees'
 * chunk over one edge: t = 2 (g-1) (alpha + 2 c / B), c = S/2. Without the
 * chain (the rank-level binary tree, before) one chunk took 2 ceil(log2 g)
 * steps: 6 on 8 GPUs, where NCCL's tuner counts 14. */
static void test_tree_one_node_chain(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  double a = alpha_of(&f, 0, 1), B = bw_of(&f, 0, 1);
  uint32_t ranks[8];
  first_ranks(ranks, 8);
  uint64_t MiB = 1 << 20;
  for (uint32_t n = 2; n <= 8; n++) {
    coll_plan p;
    build(&f, &p, CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, 1024, ranks, n, 1, MiB);
    assert_int_equal(steps_of(&p), 2 * (n - 1));
    assert_close_steps(coll_test_run(&f, &p, NULL), 2.0 * (n - 1) * (a + 2 * 512 / B),
                       2.0 * (n - 1));
    coll_plan_free(&p);
  }
  /* Many chunks, one and two channels: the step-by-step model of the chain. */
  for (uint32_t k = 1; k <= 2; k++) {
    uint64_t S = 24 * MiB * k, C = 12;
    tree_model m;
    tree_model_init(&m, 8, true);
    assert_int_equal(m.h, 7);
    coll_plan p;
    build(&f, &p, CFG_COLL_ALLREDUCE, CFG_ALGO_TREE, S, ranks, 8, k, MiB);
    uint64_t steps;
    double want = tree_model_time(&m, C, k, true, a, (double)MiB, B, &steps);
    assert_int_equal(steps_of(&p), C + 2 * 7 - 1);
    assert_close_steps(coll_test_run(&f, &p, NULL), want, (double)steps);
    assert_int_equal(coll_plan_bytes(&p), 2ull * 2 * 7 * (S / 2));
    coll_plan_free(&p);
  }
  unload(&f);
}

/* ---- recursive halving-doubling ------------------------------------------------ */

static void test_hd_one_node(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  double a = alpha_of(&f, 0, 1), B = bw_of(&f, 0, 1);
  uint32_t ranks[8];
  first_ranks(ranks, 8);
  double S = (double)(48u << 20);
  uint64_t Su = 48u << 20;
  /* n = 8 = 2^3 */
  for (uint32_t k = 1; k <= 4; k *= 2) {
    coll_result r;
    coll_plan p;
    build(&f, &p, CFG_COLL_ALLREDUCE, CFG_ALGO_HALVING_DOUBLING, Su, ranks, 8, k, 1);
    double t = coll_test_run(&f, &p, &r);
    assert_close_steps(t, 2 * 3 * a + 2.0 * 7 / 8 * S / B, 6);
    assert_close_steps(r.busbw_GBps, 2.0 * 7 / 8 * S / t / 1e9, 0);
    uint64_t out[8], in[8];
    per_gpu_bytes(&p, out, in, 8);
    for (int i = 0; i < 8; i++) {
      assert_int_equal(out[i], 2 * 7 * (Su / 8));
      assert_int_equal(in[i], 2 * 7 * (Su / 8));
    }
    coll_plan_free(&p);
    double rs = time_of(&f, CFG_COLL_REDUCESCATTER, CFG_ALGO_HALVING_DOUBLING, Su, ranks, 8, k, 1);
    double ag = time_of(&f, CFG_COLL_ALLGATHER, CFG_ALGO_HALVING_DOUBLING, Su, ranks, 8, k, 1);
    assert_close_steps(rs, 3 * a + 7.0 / 8 * S / B, 3);
    assert_close_steps(ag, 3 * a + 7.0 / 8 * S / B, 3);
  }
  /* n = 4: log2 n = 2 */
  assert_close_steps(time_of(&f, CFG_COLL_ALLREDUCE, CFG_ALGO_HALVING_DOUBLING, Su, ranks, 4, 1, 1),
                     4 * a + 1.5 * S / B, 4);
  /* n = 6: fold 2 ranks into their neighbours, halving-doubling over 4, unfold.
   * AllReduce: 2 (alpha + S/B) + 4 alpha + 2 (3/4) S/B.
   * ReduceScatter (blocks of S/6; survivors 0, 1 carry two): fold S, halving
   * steps of 3 and 2 blocks, unfold 1 block.
   * AllGather: fold 1 block, doubling steps of 2 and 3 blocks, unfold 5. */
  assert_close_steps(time_of(&f, CFG_COLL_ALLREDUCE, CFG_ALGO_HALVING_DOUBLING, Su, ranks, 6, 1, 1),
                     6 * a + 3.5 * S / B, 6);
  assert_close_steps(
      time_of(&f, CFG_COLL_REDUCESCATTER, CFG_ALGO_HALVING_DOUBLING, Su, ranks, 6, 1, 1),
      4 * a + (1 + 0.5 + 1.0 / 3 + 1.0 / 6) * S / B, 4);
  assert_close_steps(time_of(&f, CFG_COLL_ALLGATHER, CFG_ALGO_HALVING_DOUBLING, Su, ranks, 6, 1, 1),
                     4 * a + (1.0 / 6 + 1.0 / 3 + 0.5 + 5.0 / 6) * S / B, 4);
  /* Byte conservation, n = 6 and 7: every rank ends with its block (RS) or
   * every block (AG): what it received minus what it handed on. */
  for (uint32_t n = 5; n <= 7; n++) {
    uint64_t blk = Su / n / 8 * 8, Sn = blk * n, out[8], in[8];
    coll_plan p;
    build(&f, &p, CFG_COLL_ALLGATHER, CFG_ALGO_HALVING_DOUBLING, Sn, ranks, n, 1, 1);
    per_gpu_bytes(&p, out, in, 8);
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
      assert_true(in[i] >= (n - 1) * blk);
      total += in[i];
    }
    /* fold rem blocks; doubling over 4 survivors (mask 2, then 1), the
     * survivors standing for two ranks carrying two blocks: 4 + rem, then
     * 8 + 2 rem; unfold n-1 blocks to each folded rank. */
    uint64_t rem = n - 4;
    assert_int_equal(total, (rem + (4 + rem) + (8 + 2 * rem) + rem * (n - 1)) * blk);
    coll_plan_free(&p);
  }
  unload(&f);
}

/* Two nodes: masks 1, 2, 4 inside the node, mask 8 across it on each GPU's
 * own NIC (same local index). */
static void test_hd_two_nodes(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  double an = alpha_of(&f, 0, 1), Bn = bw_of(&f, 0, 1);
  double ax = alpha_of(&f, 0, 8), Bx = bw_of(&f, 0, 8);
  uint32_t ranks[16];
  first_ranks(ranks, 16);
  uint64_t Su = 64u << 20;
  double S = (double)Su;
  double rs = 3 * an + (0.5 + 0.25 + 0.125) * S / Bn + ax + S / 16 / Bx;
  for (uint32_t k = 1; k <= 8; k *= 2) {
    assert_close_steps(
        time_of(&f, CFG_COLL_ALLREDUCE, CFG_ALGO_HALVING_DOUBLING, Su, ranks, 16, k, 1), 2 * rs, 8);
    assert_close_steps(
        time_of(&f, CFG_COLL_REDUCESCATTER, CFG_ALGO_HALVING_DOUBLING, Su, ranks, 16, k, 1), rs, 4);
    assert_close_steps(
        time_of(&f, CFG_COLL_ALLGATHER, CFG_ALGO_HALVING_DOUBLING, Su, ranks, 16, k, 1), rs, 4);
  }
  unload(&f);
}

/* ---- hierarchical ------------------------------------------------------------------ */

static void test_hierarchical(void **state) {
  (void)state;
  static const char *const scen[][3] = {
      {"cluster.nodes=2", "fabric.topology=fat-tree", NULL},
      {"cluster.nodes=4", "fabric.topology=fat-tree", NULL},
      {"cluster.nodes=4", "fabric.topology=multi-plane", NULL},
      {"cluster.nodes=4", "fabric.topology=rail-optimized", NULL},
  };
  for (size_t sc = 0; sc < sizeof scen / sizeof *scen; sc++) {
    fixture f;
    load(&f, (const char *const *)scen[sc], 2);
    uint32_t m = topo_node_count(f.t), G = 8, n = m * G;
    double an = alpha_of(&f, 0, 1), Bn = bw_of(&f, 0, 1);
    double ax = alpha_of(&f, 0, 8), Bx = bw_of(&f, 0, 8);
    uint32_t ranks[MAXR];
    first_ranks(ranks, n);
    uint64_t Su = 256u << 20;
    double S = (double)Su;
    double want = 2 * (G - 1) * (an + S / G / Bn) + 2 * (m - 1) * (ax + S / (G * m) / Bx);
    for (uint32_t k = 1; k <= 8; k *= 2) {
      coll_plan p;
      coll_result r;
      build(&f, &p, CFG_COLL_ALLREDUCE, CFG_ALGO_HIERARCHICAL, Su, ranks, n, k, 1);
      double t = coll_test_run(&f, &p, &r);
      assert_close_steps(t, want, 2 * (G - 1) + 2 * (m - 1));
      assert_close_steps(r.busbw_GBps, 2.0 * (n - 1) / n * S / t / 1e9, 0);
      /* every rank sends and receives 2(n-1)/n S, as in a ring */
      uint64_t out[MAXR], in[MAXR];
      per_gpu_bytes(&p, out, in, n);
      for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(out[i], 2 * (n - 1) * (Su / n));
        assert_int_equal(in[i], 2 * (n - 1) * (Su / n));
      }
      /* cross-node transfers join GPUs of one local index: one rail, one plane */
      for (size_t ph = 0; ph < p.nphases; ph++)
        for (size_t j = 0; j < p.phases[ph].n; j++) {
          const be_xfer *x = &p.phases[ph].x[j];
          if (x->src_gpu / G != x->dst_gpu / G) assert_int_equal(x->src_gpu % G, x->dst_gpu % G);
        }
      coll_plan_free(&p);
    }
    /* The decomposition: intra ReduceScatter + inter AllReduce of S/G over
     * one rail + intra AllGather, each run alone. */
    uint32_t rail[8];
    for (uint32_t i = 0; i < m; i++) rail[i] = i * G;
    double parts = time_of(&f, CFG_COLL_REDUCESCATTER, CFG_ALGO_RING, Su, ranks, G, 1, 1) +
                   time_of(&f, CFG_COLL_ALLREDUCE, CFG_ALGO_RING, Su / G, rail, m, 1, 1) +
                   time_of(&f, CFG_COLL_ALLGATHER, CFG_ALGO_RING, Su, ranks, G, 1, 1);
    assert_close_steps(time_of(&f, CFG_COLL_ALLREDUCE, CFG_ALGO_HIERARCHICAL, Su, ranks, n, 1, 1),
                       parts, 2 * (G - 1) + 2 * (m - 1));
    unload(&f);
  }
  /* Ranks not in whole equal node blocks are refused. */
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[12];
  first_ranks(ranks, 12);
  coll_plan p;
  sim_error err = {0};
  coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                 .algorithm = CFG_ALGO_HIERARCHICAL,
                 .bytes = 1 << 20,
                 .ranks = ranks,
                 .nranks = 12,
                 .channels = 1,
                 .chunk = 1};
  assert_int_equal(coll_plan_build(&p, f.t, &s, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "same number of ranks"));
  assert_int_equal(p.nphases, 0);
  unload(&f);
}

/* ---- validation, busbw, the ring equivalences ------------------------------------- */

static void test_support_and_busbw(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[8];
  first_ranks(ranks, 8);
  for (int op = CFG_COLL_ALLREDUCE; op <= CFG_COLL_ALLTOALL; op++)
    for (int a = CFG_ALGO_RING; a <= CFG_ALGO_NODE_LIMITED; a++) {
      coll_plan p;
      sim_error err = {0};
      if (a == CFG_ALGO_COLLNET || a == CFG_ALGO_NVLSTREE) continue; /* need nodes: test_sharp.c */
      coll_spec s = {.op = (cfg_coll_op)op,
                     .algorithm = (cfg_coll_algorithm)a,
                     .bytes = 1 << 20,
                     .ranks = ranks,
                     .nranks = 8,
                     .channels = 2,
                     .chunk = 1 << 16,
                     .nvls = true};
      int rc = coll_plan_build(&p, f.t, &s, &err);
      bool ok = cfg_coll_algorithm_offered((cfg_coll_op)op, (cfg_coll_algorithm)a);
      assert_int_equal(rc, ok ? SIM_OK : SIM_EINVAL);
      if (!ok) {
        assert_int_equal(p.nphases, 0);
        continue;
      }
      coll_result r;
      double t = coll_test_run(&f, &p, &r);
      assert_true(t > 0);
      assert_close_steps(r.algbw_GBps, (double)(1 << 20) / t / 1e9, 0);
      double factor = op == CFG_COLL_ALLREDUCE   ? 2.0 * 7 / 8
                      : op == CFG_COLL_BROADCAST ? 1.0
                                                 : 7.0 / 8;
      assert_close_steps(r.busbw_GBps, r.algbw_GBps * factor, 0);
      coll_plan_free(&p);
    }
  /* The scenario accepts exactly the supported pairs. */
  static const char *const ops[] = {"allreduce", "reducescatter", "allgather", "broadcast",
                                    "alltoall"};
  for (int op = CFG_COLL_ALLREDUCE; op <= CFG_COLL_ALLTOALL; op++)
    for (int a = CFG_ALGO_RING; a <= CFG_ALGO_NODE_LIMITED; a++) {
      char o[64], al[64];
      snprintf(o, sizeof o, "workload.collective.op=%s", ops[op]);
      snprintf(al, sizeof al, "workload.collective.algorithm=%s",
               cfg_coll_algorithm_name((cfg_coll_algorithm)a));
      const char *s2[] = {"cluster.nodes=1", o, al, "fabric.sharp=true"};
      cfg_scenario cfg;
      cfg_doc *doc;
      sim_error err = {0};
      int rc = cfg_load(&cfg, &doc, NULL, s2, 4, &err);
      assert_int_equal(rc == SIM_OK,
                       cfg_coll_algorithm_offered((cfg_coll_op)op, (cfg_coll_algorithm)a));
      if (rc == SIM_OK) cfg_free(&cfg, doc);
      else assert_non_null(strstr(err.msg, "workload.collective.algorithm"));
    }
  unload(&f);
}

/* Queue-pair splitting keeps pooled phases (tree, broadcast) consistent, and
 * coll_plan_merge runs groups in lock step. */
static void test_qps_and_merge(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2"};
  fixture f;
  load(&f, sets, 1);
  uint32_t ranks[16];
  first_ranks(ranks, 16);
  static const cfg_coll_op ops[] = {CFG_COLL_ALLREDUCE, CFG_COLL_BROADCAST};
  static const cfg_coll_algorithm algos[] = {CFG_ALGO_TREE, CFG_ALGO_RING};
  for (int i = 0; i < 2; i++) {
    coll_plan one, three;
    build(&f, &one, ops[i], algos[i], 12u << 20, ranks, 16, 2, 1 << 20);
    coll_spec s = {.op = ops[i],
                   .algorithm = algos[i],
                   .bytes = 12u << 20,
                   .ranks = ranks,
                   .nranks = 16,
                   .channels = 2,
                   .chunk = 1 << 20,
                   .qps = 3};
    sim_error err = {0};
    assert_int_equal(coll_plan_build(&three, f.t, &s, &err), SIM_OK);
    assert_int_equal(coll_plan_transfers(&three), 3 * coll_plan_transfers(&one));
    assert_int_equal(coll_plan_flows(&three), coll_plan_transfers(&one));
    assert_int_equal(coll_plan_bytes(&three), coll_plan_bytes(&one));
    assert_int_equal(three.nphases, one.nphases);
    for (size_t ph = 0; ph < one.nphases; ph++) {
      assert_int_equal(three.phases[ph].n, 3 * one.phases[ph].n);
      for (size_t j = 0; j < one.phases[ph].n; j++)
        for (size_t q = 0; q < 3; q++) {
          assert_int_equal(three.phases[ph].x[3 * j + q].src_gpu, one.phases[ph].x[j].src_gpu);
          assert_int_equal(three.phases[ph].x[3 * j + q].dst_gpu, one.phases[ph].x[j].dst_gpu);
        }
    }
    double t1 = coll_test_run(&f, &one, NULL), t3 = coll_test_run(&f, &three, NULL);
    /* the same up to the byte a three-way split rounds up per transfer */
    if (fabs(t3 - t1) > 1e-5 * t1) fail_msg("op %d: %.12g vs %.12g", i, t1, t3);
    coll_plan_free(&one);
    coll_plan_free(&three);
  }
  /* Two groups of 8 (one per node) in lock step = both at once. */
  for (int i = 0; i < 2; i++) {
    cfg_coll_algorithm a = i ? CFG_ALGO_TREE : CFG_ALGO_HALVING_DOUBLING;
    coll_plan g0, g1;
    build(&f, &g0, CFG_COLL_ALLREDUCE, a, 8u << 20, ranks, 8, 1, 1 << 20);
    build(&f, &g1, CFG_COLL_ALLREDUCE, a, 8u << 20, ranks + 8, 8, 1, 1 << 20);
    uint64_t x0 = coll_plan_transfers(&g0), x1 = coll_plan_transfers(&g1);
    double alone = coll_test_run(&f, &g0, NULL);
    sim_error err = {0};
    assert_int_equal(coll_plan_merge(&g0, &g1, &err), SIM_OK);
    assert_int_equal(g1.nphases, 0);
    assert_int_equal(coll_plan_transfers(&g0), x0 + x1);
    assert_close_steps(coll_test_run(&f, &g0, NULL), alone, 0);
    coll_plan other;
    build(&f, &other, CFG_COLL_ALLREDUCE, CFG_ALGO_RING, 8u << 20, ranks, 8, 1, 1 << 20);
    assert_int_equal(coll_plan_merge(&g0, &other, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "lock step"));
    coll_plan_free(&other);
    coll_plan_free(&g0);
  }
  unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tree_closed_forms), cmocka_unit_test(test_tree_one_node_chain),
      cmocka_unit_test(test_hd_one_node),       cmocka_unit_test(test_hd_two_nodes),
      cmocka_unit_test(test_hierarchical),      cmocka_unit_test(test_support_and_busbw),
      cmocka_unit_test(test_qps_and_merge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
