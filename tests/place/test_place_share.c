/* plc_may_share_links against the routes themselves: on every fabric kind,
 * for seeded random pairs of jobs, when it says "no" the channels of every
 * route between two GPUs of one job (many flow hashes, so every equal-cost
 * up port is taken) and those of the other job have nothing in common; and
 * the hand-made cases where it must say "yes" (a shared leaf, a shared pod
 * both jobs leave) or "no" (disjoint leaves; a shared pod one job stays in). */
#include <stdlib.h>

#include "place/test_place_common.h"

enum { HASHES = 16 };

/* Marks in `used` (one byte per channel) every channel of a route between
 * GPUs of two distinct nodes of the job (every pair of local GPUs whose
 * NICs share a plane: topo_route refuses the others; HASHES flow hashes
 * each). */
static void mark_routes(const topo *t, const uint32_t *nodes, uint32_t n, uint8_t *used) {
  uint32_t gpn = topo_gpu_count(t) / topo_node_count(t), routed = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++)
      for (uint32_t g = 0; g < gpn * gpn && i != j; g++)
        for (uint64_t h = 0; h < HASHES; h++) {
          topo_path p;
          if (topo_route(t, nodes[i] * gpn + g / gpn, nodes[j] * gpn + g % gpn, h * 0x9e3779b9u,
                         &p) != SIM_OK)
            continue;
          routed++;
          for (uint32_t k = 0; k < p.n; k++) used[p.ch[k]] |= 1;
        }
  assert_true(n < 2 || routed > 0);
}

/* Whether two jobs' routes have a channel in common. */
static bool routes_meet(const topo *t, const uint32_t *a, uint32_t na, const uint32_t *b,
                        uint32_t nb) {
  size_t nch = 2 * (size_t)topo_link_count(t);
  uint8_t *ua = calloc(nch, 1), *ub = calloc(nch, 1);
  mark_routes(t, a, na, ua);
  mark_routes(t, b, nb, ub);
  bool meet = false;
  for (size_t c = 0; c < nch && !meet; c++) meet = ua[c] && ub[c];
  free(ua);
  free(ub);
  return meet;
}

/* Random pairs of jobs (a seeded shuffle of the nodes, cut into two jobs
 * of random sizes): "no" is always right, and both answers occur. */
static void check_random_pairs(const pcase *c) {
  topo *t = pc_build(c);
  uint32_t n = topo_node_count(t), *perm = malloc(n * sizeof *perm);
  uint64_t s = 12345;
  uint32_t no = 0, yes = 0;
  for (uint32_t trial = 0; trial < 40; trial++) {
    for (uint32_t i = 0; i < n; i++) perm[i] = i;
    /* trials in pairs: a packed split (contiguous nodes), then a shuffled one */
    for (uint32_t i = n - 1; i > 0 && trial % 2; i--) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      uint32_t j = (uint32_t)(s >> 33) % (i + 1), x = perm[i];
      perm[i] = perm[j];
      perm[j] = x;
    }
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t na = 2 + (uint32_t)(s >> 33) % (n / 2 - 1), nb = 2 + (uint32_t)(s >> 40) % (n / 2 - 1);
    uint32_t off = trial % 2 ? 0 : (uint32_t)(s >> 20) % (n - na - nb + 1);
    const uint32_t *a = perm + off, *b = perm + off + na;
    bool share = plc_may_share_links(t, a, na, b, nb);
    assert_true(share == plc_may_share_links(t, b, nb, a, na)); /* symmetric */
    if (!share && routes_meet(t, a, na, b, nb))
      fail_msg("%s tiers %u trial %u: said no, but routes meet", c->kind, c->tiers, trial);
    no += !share;
    yes += share;
  }
  assert_true(no > 0 && yes > 0);
  free(perm);
  topo_free(t);
}

static void test_random_pairs(void **state) {
  (void)state;
  const pcase *cases[] = {&PC_FT2, &PC_FT3, &PC_MP2, &PC_MP3, &PC_RAIL, &PC_RAIL3};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_random_pairs(cases[i]);
}

/* By hand on the 3-tier fat-tree (4 pods of 4 leaves of 4 nodes). */
static void test_cases(void **state) {
  (void)state;
  topo *t = pc_build(&PC_FT3);
  const uint32_t leaf0[] = {0, 1}, leaf0b[] = {2, 3}, leaf1[] = {4, 5};
  const uint32_t leaf0_pod1[] = {3, 16}, leaf1_pod2[] = {4, 32}, leaf2_pod0[] = {8, 9};
  assert_true(plc_may_share_links(t, leaf0, 2, leaf0b, 2)); /* one leaf: conservative yes */
  assert_false(plc_may_share_links(t, leaf0, 2, leaf1, 2)); /* two leaves of one pod */
  /* both leave pod 0 (to pods 1 and 2): they can meet on its core links */
  assert_true(plc_may_share_links(t, leaf0_pod1, 2, leaf1_pod2, 2));
  assert_true(routes_meet(t, leaf0_pod1, 2, leaf1_pod2, 2));
  /* one of them stays in pod 0: the pod's core links carry only the other */
  assert_false(plc_may_share_links(t, leaf0_pod1, 2, leaf2_pod0, 2));
  assert_false(routes_meet(t, leaf0_pod1, 2, leaf2_pod0, 2));
  topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_pairs),
      cmocka_unit_test(test_cases),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
