/* Placement policies against closed forms: packed fills leaves in order,
 * spread uses min(n, leaves) leaves and min(n, pods) pods, random is
 * deterministic per seed, topology-aware uses the fewest leaves possible
 * (never more than packed) and the best-fitting leaf when one leaf fits,
 * explicit lists are checked; on 2- and 3-tier fat-trees, multi-plane and
 * rail-optimized fabrics. */
#include "place/test_place_common.h"

static const pcase *const ALL[] = {&PC_FT2, &PC_FT3, &PC_MP2, &PC_MP3, &PC_RAIL, &PC_RAIL3};
enum { NALL = sizeof ALL / sizeof ALL[0] };

static void test_packed_fills_leaves_in_order(void **state) {
  (void)state;
  for (int c = 0; c < NALL; c++) {
    const pcase *pc = ALL[c];
    topo *t = pc_build(pc);
    uint32_t npl = pc_nodes_per_leaf(pc), out[128];
    for (uint32_t n = 1; n <= pc->nodes; n++) {
      pc_place(t, NULL, PLC_PACKED, n, 0, out);
      for (uint32_t i = 0; i < n; i++) assert_int_equal(out[i], i); /* today's one job */
      plc_metrics m = pc_metrics(t, out, n);
      assert_int_equal(m.leaves, pc_ceil(n, npl));
      assert_int_equal(m.pods, pc_pod_of(pc, n - 1) + 1);
    }
    topo_free(t);
  }
}

static void test_packed_skips_taken(void **state) {
  (void)state;
  topo *t = pc_build(&PC_FT2);
  plc_nodeset taken;
  plc_nodeset_init(&taken, 32);
  const uint32_t held[] = {0, 2, 3, 9};
  plc_nodeset_add_list(&taken, held, 4);
  uint32_t out[5];
  pc_place(t, &taken, PLC_PACKED, 5, 0, out);
  const uint32_t want[] = {1, 4, 5, 6, 7};
  for (int i = 0; i < 5; i++) assert_int_equal(out[i], want[i]);
  plc_nodeset_free(&taken);
  topo_free(t);
}

static void test_spread_uses_min_n_leaves(void **state) {
  (void)state;
  for (int c = 0; c < NALL; c++) {
    const pcase *pc = ALL[c];
    topo *t = pc_build(pc);
    uint32_t L = pc_leaves(pc), P = pc_pods(pc), out[128];
    for (uint32_t n = 1; n <= pc->nodes; n++) {
      pc_place(t, NULL, PLC_SPREAD, n, 0, out);
      pc_check_valid(NULL, pc->nodes, out, n);
      uint32_t lmin = n < L ? n : L, pmin = n < P ? n : P;
      plc_metrics m = pc_metrics(t, out, n);
      assert_int_equal(m.leaves, lmin);
      assert_int_equal(m.pods, pmin);
      /* round-robin: the first min(n, L) ranks on distinct leaves, the first
       * min(n, P) on distinct pods */
      assert_int_equal(pc_distinct(pc, out, lmin, pc_leaf_of), lmin);
      assert_int_equal(pc_distinct(pc, out, pmin, pc_pod_of), pmin);
      /* up to one node per leaf, every ring pair climbs to a spine */
      if (n >= 2 && n <= L) assert_int_equal(m.ring_spine_pairs, n);
    }
    topo_free(t);
  }
}

static void test_spread_fragmented(void **state) {
  (void)state;
  topo *t = pc_build(&PC_FT3);
  for (uint64_t seed = 1; seed <= 50; seed++) {
    plc_nodeset taken;
    plc_nodeset_init(&taken, 64);
    assert_int_equal(plc_fragment(&taken, 0.6, seed, NULL), SIM_OK);
    uint32_t free_leaves = 0, out[64];
    for (uint32_t L = 0; L < 16; L++) {
      bool any = false;
      for (uint32_t i = 0; i < 4; i++) any |= !plc_nodeset_has(&taken, L * 4 + i);
      free_leaves += any;
    }
    for (uint32_t n = 1; n <= 64 - plc_nodeset_count(&taken); n++) {
      pc_place(t, &taken, PLC_SPREAD, n, 0, out);
      pc_check_valid(&taken, 64, out, n);
      assert_int_equal(pc_metrics(t, out, n).leaves, n < free_leaves ? n : free_leaves);
    }
    plc_nodeset_free(&taken);
  }
  topo_free(t);
}

static void test_random_deterministic_per_seed(void **state) {
  (void)state;
  for (int c = 0; c < NALL; c++) {
    const pcase *pc = ALL[c];
    topo *t = pc_build(pc);
    plc_nodeset taken;
    plc_nodeset_init(&taken, pc->nodes);
    assert_int_equal(plc_fragment(&taken, 0.25, 7, NULL), SIM_OK);
    uint32_t n = pc->nodes / 2, a[128], b[128], d[128];
    pc_place(t, &taken, PLC_RANDOM, n, 42, a);
    pc_place(t, &taken, PLC_RANDOM, n, 42, b);
    pc_place(t, &taken, PLC_RANDOM, n, 43, d);
    pc_check_valid(&taken, pc->nodes, a, n);
    pc_check_valid(&taken, pc->nodes, d, n);
    assert_memory_equal(a, b, n * sizeof *a);
    assert_memory_not_equal(a, d, n * sizeof *a);
    /* every free node is reachable: all of them when the job takes them all */
    uint32_t nfree = pc->nodes - plc_nodeset_count(&taken);
    pc_place(t, &taken, PLC_RANDOM, nfree, 42, a);
    pc_check_valid(&taken, pc->nodes, a, nfree);
    plc_nodeset_free(&taken);
    topo_free(t);
  }
}

/* Independent closed form: the fewest leaves holding n free nodes is the
 * shortest prefix of the leaves' free counts sorted in descending order. */
static uint32_t min_leaves(const pcase *pc, const plc_nodeset *taken, uint32_t n,
                           uint32_t *best_single) {
  uint32_t L = pc_leaves(pc), free_of[64] = {0};
  for (uint32_t i = 0; i < pc->nodes; i++)
    if (!plc_nodeset_has(taken, i)) free_of[pc_leaf_of(pc, i)]++;
  *best_single = UINT32_MAX; /* fewest free nodes of a leaf that fits n alone */
  for (uint32_t l = 0; l < L; l++)
    if (free_of[l] >= n && (*best_single == UINT32_MAX || free_of[l] < free_of[*best_single]))
      *best_single = l;
  for (uint32_t i = 0; i < L; i++) /* selection sort, descending */
    for (uint32_t j = i + 1; j < L; j++)
      if (free_of[j] > free_of[i]) {
        uint32_t x = free_of[i];
        free_of[i] = free_of[j];
        free_of[j] = x;
      }
  uint32_t sum = 0, k = 0;
  while (sum < n) sum += free_of[k++];
  return k;
}

/* Whether some pod's k fullest leaves hold n free nodes. */
static bool one_pod_fits(const pcase *pc, const plc_nodeset *taken, uint32_t n, uint32_t k) {
  for (uint32_t pod = 0; pod < pc_pods(pc); pod++) {
    uint32_t free_of[64] = {0}, L = pc_leaves(pc);
    for (uint32_t i = 0; i < pc->nodes; i++)
      if (!plc_nodeset_has(taken, i) && pc_pod_of(pc, i) == pod) free_of[pc_leaf_of(pc, i)]++;
    uint32_t sum = 0;
    for (uint32_t j = 0; j < k; j++) { /* take the fullest remaining leaf k times */
      uint32_t best = 0;
      for (uint32_t l = 1; l < L; l++)
        if (free_of[l] > free_of[best]) best = l;
      sum += free_of[best];
      free_of[best] = 0;
    }
    if (sum >= n) return true;
  }
  return false;
}

static void test_topology_aware_fragmented(void **state) {
  (void)state;
  for (int c = 0; c < NALL; c++) {
    const pcase *pc = ALL[c];
    topo *t = pc_build(pc);
    for (uint64_t seed = 1; seed <= 40; seed++) {
      plc_nodeset taken;
      plc_nodeset_init(&taken, pc->nodes);
      assert_int_equal(plc_fragment(&taken, 0.5, seed, NULL), SIM_OK);
      uint32_t nfree = pc->nodes - plc_nodeset_count(&taken), a[128], p[128];
      for (uint32_t n = 1; n <= nfree; n++) {
        pc_place(t, &taken, PLC_TOPOLOGY_AWARE, n, 0, a);
        pc_place(t, &taken, PLC_PACKED, n, 0, p);
        pc_check_valid(&taken, pc->nodes, a, n);
        uint32_t single, kmin = min_leaves(pc, &taken, n, &single);
        plc_metrics ma = pc_metrics(t, a, n), mp = pc_metrics(t, p, n);
        assert_true(ma.leaves <= mp.leaves);
        assert_int_equal(ma.leaves, kmin);
        if (single != UINT32_MAX) { /* one leaf fits: the best-fitting one */
          assert_int_equal(ma.leaves, 1);
          assert_int_equal(pc_leaf_of(pc, a[0]), single);
        }
        if (one_pod_fits(pc, &taken, n, kmin)) assert_int_equal(ma.pods, 1);
        /* ranks follow the tree: a ring crosses each leaf boundary once */
        assert_int_equal(ma.ring_spine_pairs, ma.leaves > 1 ? ma.leaves : 0);
      }
      plc_nodeset_free(&taken);
    }
    topo_free(t);
  }
}

/* 3 tiers: 2 leaves in one pod beat 4 leaves (packed) or 2 leaves in 2 pods;
 * the best fit picks the leaf that fits exactly. */
static void test_topology_aware_hand_cases(void **state) {
  (void)state;
  topo *t = pc_build(&PC_FT3); /* leaves of 4 nodes, pods of 4 leaves */
  /* free: pod 0 one node on each leaf (0, 4, 8, 12); pod 1 leaves 4 and 5
   * three each (16-18, 20-22); pod 2 leaf 8 three (32-34); pod 3 nothing */
  const uint32_t fr[] = {0, 4, 8, 12, 16, 17, 18, 20, 21, 22, 32, 33, 34};
  plc_nodeset taken;
  plc_nodeset_init(&taken, 64);
  for (uint32_t i = 0; i < 64; i++) {
    bool is_free = false;
    for (size_t j = 0; j < sizeof fr / sizeof fr[0]; j++) is_free |= fr[j] == i;
    if (!is_free) plc_nodeset_add(&taken, i);
  }
  uint32_t out[8];
  pc_place(t, &taken, PLC_TOPOLOGY_AWARE, 4, 0, out);
  plc_metrics m = pc_metrics(t, out, 4);
  assert_int_equal(m.leaves, 2);
  assert_int_equal(m.pods, 1);
  /* leaf 4 (lowest of the two largest) whole, then 1 node of leaf 5 */
  const uint32_t want[] = {16, 17, 18, 20};
  assert_memory_equal(out, want, sizeof want);
  pc_place(t, &taken, PLC_PACKED, 4, 0, out);
  assert_int_equal(pc_metrics(t, out, 4).leaves, 4);
  /* three nodes fit one leaf: leaves 4, 5 and 8 tie at 3, the lowest wins */
  pc_place(t, &taken, PLC_TOPOLOGY_AWARE, 3, 0, out);
  assert_int_equal(out[0], 16);
  assert_int_equal(out[2], 18);
  /* one node: the best fit is a leaf with exactly one free node (leaf 0) */
  pc_place(t, &taken, PLC_TOPOLOGY_AWARE, 1, 0, out);
  assert_int_equal(out[0], 0);
  /* 7 nodes need 3 leaves (3 + 3 + 1): pod 1's two and one more; pods
   * join greedily, pod 1 (6 in its top 3) then pod 0 or 2 */
  pc_place(t, &taken, PLC_TOPOLOGY_AWARE, 7, 0, out);
  m = pc_metrics(t, out, 7);
  assert_int_equal(m.leaves, 3);
  assert_int_equal(m.pods, 2);
  plc_nodeset_free(&taken);
  topo_free(t);
}

static void test_explicit_lists(void **state) {
  (void)state;
  topo *t = pc_build(&PC_FT2);
  plc_nodeset taken;
  plc_nodeset_init(&taken, 32);
  plc_nodeset_add(&taken, 5);
  uint32_t out[4];
  sim_error err = {0};
  const uint32_t ok[] = {31, 0, 17, 4};
  plc_request req = {.policy = PLC_EXPLICIT, .nodes = 4, .list = ok};
  assert_int_equal(plc_place(t, &taken, &req, out, &err), SIM_OK);
  assert_memory_equal(out, ok, sizeof ok); /* rank order as given */

  const uint32_t range[] = {1, 32, 2, 3};
  req.list = range;
  assert_int_equal(plc_place(t, &taken, &req, out, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "node 32 (rank 1) is out of range"));
  assert_non_null(strstr(err.msg, "0 .. 31"));

  const uint32_t dup[] = {1, 2, 3, 2};
  req.list = dup;
  assert_int_equal(plc_place(t, &taken, &req, out, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "node 2 is listed twice (ranks 1 and 3)"));

  const uint32_t held[] = {1, 2, 5, 3};
  req.list = held;
  assert_int_equal(plc_place(t, &taken, &req, out, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "node 5 (rank 2) is taken"));

  req.list = NULL;
  assert_int_equal(plc_place(t, &taken, &req, out, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "node list"));
  plc_nodeset_free(&taken);
  topo_free(t);
}

static void test_refusals(void **state) {
  (void)state;
  topo *t = pc_build(&PC_FT2);
  plc_nodeset taken;
  plc_nodeset_init(&taken, 32);
  assert_int_equal(plc_fragment(&taken, 0.5, 3, NULL), SIM_OK);
  uint32_t out[32];
  sim_error err = {0};
  for (int p = 0; p < PLC_EXPLICIT; p++) {
    plc_request req = {.policy = (plc_policy)p, .nodes = 17};
    assert_int_equal(plc_place(t, &taken, &req, out, &err), SIM_ERANGE);
    assert_non_null(strstr(err.msg, "wants 17 nodes, but only 16 of the cluster's 32 are free"));
    req.nodes = 16;
    assert_int_equal(plc_place(t, &taken, &req, out, &err), SIM_OK);
    pc_check_valid(&taken, 32, out, 16);
    req.nodes = 0;
    assert_int_equal(plc_place(t, &taken, &req, out, &err), SIM_EINVAL);
  }
  plc_nodeset other;
  plc_nodeset_init(&other, 31);
  plc_request req = {.policy = PLC_PACKED, .nodes = 1};
  assert_int_equal(plc_place(t, &other, &req, out, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "sized for 31 nodes, the cluster has 32"));
  plc_nodeset_free(&other);
  plc_nodeset_free(&taken);
  topo_free(t);
}

static void test_fragment(void **state) {
  (void)state;
  plc_nodeset a, b, d;
  plc_nodeset_init(&a, 1000);
  plc_nodeset_init(&b, 1000);
  plc_nodeset_init(&d, 1000);
  assert_int_equal(plc_fragment(&a, 0.3, 11, NULL), SIM_OK);
  assert_int_equal(plc_fragment(&b, 0.3, 11, NULL), SIM_OK);
  assert_int_equal(plc_fragment(&d, 0.3, 12, NULL), SIM_OK);
  assert_int_equal(plc_nodeset_count(&a), 300);
  assert_memory_equal(a.words, b.words, (1000 / 64 + 1) * sizeof *a.words);
  assert_memory_not_equal(a.words, d.words, (1000 / 64 + 1) * sizeof *a.words);
  /* a second call takes from the free nodes only: 300 + 350 */
  assert_int_equal(plc_fragment(&a, 0.35, 5, NULL), SIM_OK);
  assert_int_equal(plc_nodeset_count(&a), 650);
  sim_error err = {0};
  assert_int_equal(plc_fragment(&a, 0.4, 5, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "only 350 are free"));
  assert_int_equal(plc_fragment(&b, 1.5, 5, &err), SIM_EINVAL);
  assert_int_equal(plc_fragment(&b, -0.1, 5, &err), SIM_EINVAL);
  plc_nodeset_free(&a);
  plc_nodeset_free(&b);
  plc_nodeset_free(&d);
}

static void test_policy_names_and_gpus(void **state) {
  (void)state;
  for (int p = 0; p < PLC_POLICY_COUNT; p++) {
    plc_policy got;
    assert_int_equal(plc_policy_parse(plc_policy_name((plc_policy)p), &got), SIM_OK);
    assert_int_equal(got, p);
  }
  plc_policy got;
  assert_int_equal(plc_policy_parse("topology_aware", &got), SIM_ENOENT);
  assert_string_equal(plc_policy_name(PLC_TOPOLOGY_AWARE), "topology-aware");
  topo *t = pc_build(&PC_MP2); /* 2 GPUs per node */
  assert_int_equal(plc_nodes_for_gpus(t, 1), 1);
  assert_int_equal(plc_nodes_for_gpus(t, 2), 1);
  assert_int_equal(plc_nodes_for_gpus(t, 3), 2);
  assert_int_equal(plc_nodes_for_gpus(t, 64), 32);
  topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_packed_fills_leaves_in_order),
      cmocka_unit_test(test_packed_skips_taken),
      cmocka_unit_test(test_spread_uses_min_n_leaves),
      cmocka_unit_test(test_spread_fragmented),
      cmocka_unit_test(test_random_deterministic_per_seed),
      cmocka_unit_test(test_topology_aware_fragmented),
      cmocka_unit_test(test_topology_aware_hand_cases),
      cmocka_unit_test(test_explicit_lists),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_fragment),
      cmocka_unit_test(test_policy_names_and_gpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
