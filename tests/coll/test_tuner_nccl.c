/* fabsim's tuner (src/coll/tune.c) against NCCL's own tuning model
 * (NVIDIA/nccl src/graph/tuning.cc: ncclTopoTuneModel's bandwidth and
 * latency tables, ncclTopoGetAlgoTime's time = latency + size /
 * bandwidth with the tree's treeCorrectionFactor). The oracle below is
 * NCCL's model written out for one node of 8 Hopper GPUs on NVSwitch; the
 * graph's channels and per-channel bandwidth come from NCCL's topology
 * search, which fabsim does not run, so the oracle is evaluated at several
 * plausible graphs (src/graph/search.cc sm90SpeedArrayIntra, 18 NVLinks x
 * 20.6 GB/s a GPU; NVLS one channel a GPU) and the test asks only for the
 * picks they all agree on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fixture.h"
#include "coll/coll_test.h"

enum { NA = 3, NP = 3 }; /* tree, ring, nvls; LL, LL128, Simple */
enum { A_TREE, A_RING, A_NVLS };

typedef struct nccl_graph {
  double ring_ch, ring_bw, nvls_ch, nvls_bw; /* channels, GB/s a channel */
} nccl_graph;

/* NCCL's pick for an AllReduce of S bytes on one node of n Hopper GPUs
 * (NVLink, NVLS when nvls): *a, *p. */
static void nccl_pick(const nccl_graph *gr, uint32_t n, bool nvls, uint64_t S, int *a, int *p) {
  static const double base[NA][NP] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}};
  static const double hw[NA][NP] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}};
  static const double tcf[NP][24] = {{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
                                      .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
                                     {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
                                      .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
                                     {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
                                      .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
  const double ll_max = 141.0, tree_cap = 38.7, ring_ll128 = 36.7, tree_ll128 = 36.7;
  double nsteps = 2.0 * (n - 1), best = INFINITY;
  for (int al = 0; al < NA; al++)
    for (int pr = 0; pr < NP; pr++) {
      if (al == A_NVLS && (pr != 2 || !nvls)) continue;
      double ch = al == A_NVLS ? gr->nvls_ch : gr->ring_ch;
      double bw = al == A_NVLS ? gr->nvls_bw * 0.85 * (ch - 1) / ch * 2 : gr->ring_bw;
      double bus = ch * bw;
      if (al == A_RING && pr == 0) bus = fmin(ll_max, bus * .5);
      if (al == A_RING && pr == 1) bus = fmin(bus * .92, ch * ring_ll128);
      if (al == A_TREE) bus = fmin(bus * .92, ch * tree_cap);
      if (al == A_TREE && pr == 0) bus = fmin(bus / 3.8, ll_max);
      if (al == A_TREE && pr == 1) bus = fmin(bus * 7.0 / 9.0, ch * tree_ll128);
      bus *= al == A_TREE ? .5 : n / nsteps;
      double lat = al == A_RING   ? base[al][pr] + nsteps * hw[al][pr]
                   : al == A_TREE ? base[al][pr] + 2 * (n - 1) * hw[al][pr]
                                  : hw[al][pr];
      int ls = -1;
      for (uint64_t v = S >> 6; v > 1; v >>= 1) ls++;
      if (S >> 6) ls++;
      if (al == A_TREE && ls >= 0 && ls < 23) bus *= tcf[pr][ls];
      double t = lat + (double)S / (1000 * bus);
      if (t < best) best = t, *a = al, *p = pr;
    }
}

static const nccl_graph graphs[] = {
    {12, 30, 8, 40}, {16, 20, 8, 40}, {6, 60, 8, 40}, {24, 15, 8, 40}, {12, 30, 16, 20}};

/* fabsim's tuner on an AllReduce of S bytes over ranks[0..n), NVLS on or off. */
static void fabsim_pick(const fixture *f, const uint32_t *ranks, uint32_t n, uint64_t S, int nvls,
                        cfg_coll_algorithm *a, cfg_coll_protocol *p) {
  coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                 .algorithm = CFG_ALGO_AUTO,
                 .protocol = CFG_PROTO_AUTO,
                 .bytes = S,
                 .ranks = ranks,
                 .nranks = n,
                 .channels = f->cfg.cluster.nic.per_node,
                 .chunk = 1 << 20};
  coll_spec_set_hw(&s, &f->cfg);
  s.nvls = s.nvls && nvls;
  uint32_t k;
  double est;
  coll_tune(f->t, &s, a, p, &k, &est);
}

/* One DGX H100, every power of two from 8 B to 1 GiB, NVLS on and off:
 * fabsim's algorithm and protocol are NCCL's model's wherever the graphs
 * agree on it (NVLS on: at every size, the LL ring to 1 MiB, NVLS from 2
 * MiB; off: the ring throughout, its protocol where they agree). Never the
 * tree: NCCL's tree on one node is the chain, its LL at 1/3.8 of the
 * Simple rate, its channels capped (perChMaxTreeBws), at 0.5 algbw per
 * busbw against the ring's n/(2(n-1)). Fails without the tree's caps in
 * tune.c: fabsim took the LL chain from 256 KiB to 2 MiB. */
static void test_one_node_as_nccl(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=1", "cluster.gpu=H100"};
  fixture f;
  load(&f, sets, 2);
  uint32_t ranks[8];
  for (uint32_t i = 0; i < 8; i++) ranks[i] = i;
  static const cfg_coll_algorithm algo[NA] = {CFG_ALGO_TREE, CFG_ALGO_RING, CFG_ALGO_NVLS};
  static const cfg_coll_protocol proto[NP] = {CFG_PROTO_LL, CFG_PROTO_LL128, CFG_PROTO_SIMPLE};
  uint32_t agreed = 0;
  for (int on = 0; on < 2; on++)
    for (uint64_t S = 8; S <= (1ull << 30); S *= 2) {
      int a0 = 0, p0 = 0;
      bool same_a = true, same_p = true;
      nccl_pick(&graphs[0], 8, on, S, &a0, &p0);
      for (size_t gi = 1; gi < sizeof graphs / sizeof *graphs; gi++) {
        int a = 0, p = 0;
        nccl_pick(&graphs[gi], 8, on, S, &a, &p);
        same_a = same_a && a == a0;
        same_p = same_p && a == a0 && p == p0;
      }
      cfg_coll_algorithm a;
      cfg_coll_protocol p;
      fabsim_pick(&f, ranks, 8, S, on, &a, &p);
      assert_true(a != CFG_ALGO_TREE);
      if (same_a && a != algo[a0])
        fail_msg("NVLS %s, %llu B: fabsim picks algorithm %d, NCCL's model %d", on ? "on" : "off",
                 (unsigned long long)S, (int)a, (int)algo[a0]);
      if (same_p && p != proto[p0])
        fail_msg("NVLS %s, %llu B: fabsim picks protocol %d, NCCL's model %d", on ? "on" : "off",
                 (unsigned long long)S, (int)p, (int)proto[p0]);
      agreed += same_a + same_p;
      if (on) assert_true(same_a && same_p); /* every size decided with NVLS */
    }
  print_message("  %u of 112 algorithm and protocol picks decided by NCCL's model\n", agreed);
  unload(&f);
}

/* NCCL's pick between its tree's LL and LL128 for an AllReduce of S bytes
 * on m nodes of g Hopper GPUs (x86 Intel llMaxBws row), graph ch channels
 * of bw GB/s across nodes: 0 LL, 1 LL128, -1 when the two are within 10 %
 * of each other (too close to call for a model of another channel count). */
static int nccl_tree_protocol(uint32_t m, uint32_t g, double ch, double bw, uint64_t S) {
  double ll_max = m == 2 ? 39.0 : 20.4, tree_cap = m == 2 ? 41.4 : 36.0,
         tree_ll128 = m == 2 ? 36.7 : 29.0;
  uint32_t log2m = 0;
  while ((2u << log2m) <= m) log2m++;
  double bus = fmin(ch * bw * .92, ch * tree_cap);
  double ll = fmin(bus / 3.8, ll_max) * .5, ll128 = fmin(bus * 120 / 128, ch * tree_ll128) * .5;
  double lat_ll = 6.8 + 2 * ((g - 1) * 0.6 + log2m * 5.0);
  double lat_ll128 = 14.0 + 2 * ((g - 1) * 1.25 + log2m * 8.5);
  double t_ll = lat_ll + (double)S / (1000 * ll), t_ll128 = lat_ll128 + (double)S / (1000 * ll128);
  if (fabs(t_ll / t_ll128 - 1) < 0.1) return -1;
  return t_ll <= t_ll128 ? 0 : 1;
}

/* Across 2, 4 and 16 DGX H100 nodes, NVLS on and off, 8 B to 1 GiB in
 * steps of 4: the algorithm is the one fabsim picked before the tree's
 * protocol limits (the table, from main's build at 0759fff), and where it
 * is the tree (up to 2 MiB) its protocol is NCCL's model's choice between
 * the tree's LL and LL128 (at 16 channels of 24 GB/s and 8 of 48 alike)
 * where its two times differ by 10 % or more. The one change
 * the limits make across nodes: at 1 MiB the tree runs LL128, as NCCL's
 * model has it (its LL tree within llMaxBws, 39 GB/s on 2 nodes, 20.4 on
 * more); before, fabsim kept LL. */
static void test_multi_node_as_before(void **state) {
  (void)state;
  static const uint32_t nodes[] = {2, 4, 16};
  /* per node count, NVLS off then on: t tree, r ring, n NVLSTree, 8 B .. 1 GiB by 4x */
  static const char *const before[3][2] = {{"ttttttttttrrrr", "ttttttttttnnnn"},
                                           {"ttttttttttrrrr", "ttttttttttnnrr"},
                                           {"ttttttttttttrr", "ttttttttttnnnn"}};
  for (size_t ni = 0; ni < 3; ni++) {
    char set[32];
    snprintf(set, sizeof set, "cluster.nodes=%u", nodes[ni]);
    const char *sets[] = {set, "cluster.gpu=H100"};
    fixture f;
    load(&f, sets, 2);
    uint32_t n = nodes[ni] * 8;
    uint32_t *ranks = sim_malloc(n * sizeof *ranks);
    for (uint32_t i = 0; i < n; i++) ranks[i] = i;
    for (int on = 0; on < 2; on++) {
      size_t i = 0;
      for (uint64_t S = 8; S <= (1ull << 30); S *= 4, i++) {
        cfg_coll_algorithm a;
        cfg_coll_protocol p;
        fabsim_pick(&f, ranks, n, S, on, &a, &p);
        char c = before[ni][on][i];
        cfg_coll_algorithm want = c == 't'   ? CFG_ALGO_TREE
                                  : c == 'r' ? CFG_ALGO_RING
                                             : CFG_ALGO_NVLSTREE;
        if (a != want)
          fail_msg("%u nodes, NVLS %d, %llu B: algorithm %d, before %d", nodes[ni], on,
                   (unsigned long long)S, (int)a, (int)want);
        if (a != CFG_ALGO_TREE || S > (2u << 20)) continue;
        int w16 = nccl_tree_protocol(nodes[ni], 8, 16, 24, S),
            w8 = nccl_tree_protocol(nodes[ni], 8, 8, 48, S);
        assert_int_equal(w16, w8);
        if (w16 < 0) continue;
        if (p != (w16 ? CFG_PROTO_LL128 : CFG_PROTO_LL))
          fail_msg("%u nodes, NVLS %d, %llu B: the tree's protocol %d, NCCL's model %s", nodes[ni],
                   on, (unsigned long long)S, (int)p, w16 ? "LL128" : "LL");
      }
    }
    sim_free(ranks);
    unload(&f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_node_as_nccl),
      cmocka_unit_test(test_multi_node_as_before),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
