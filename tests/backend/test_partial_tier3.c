/* A partial 3-tier fat-tree (issue 13, defect 10) builds the cores its pods
 * need, spines cabled to them in bundles of parallel links
 * (src/topo/fattree.c), and routes link for link as the full build does:
 *   - static D-mod-K: shift permutations are collision-free on every fabric
 *     channel when the nodes fill whole pods, as on the full build;
 *   - static and adaptive paths, and ECMP's down link at a core, are the
 *     full build's for the same GPUs (a core of the partial build's bundle
 *     position r standing for the full build's core q m + r);
 *   - collective figures (a ring AllReduce step, random permutations) are
 *     the full build's for the same nodes at the analytic, flow and packet
 *     fidelities, under static routing, and at analytic and flow under
 *     adaptive and spray.
 * Fabric: radix 8 (4 up, 4 down), 3 tiers, 4 GPUs and 4 NICs per node: a
 * node per leaf, a pod per 4 nodes, 8 pods (32 nodes) at full size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/backend.h"
#include "fabsim/coll.h"
#include "fixture.h"

enum { GPN = 4, FULL_NODES = 32 };

static void load_fabric(fixture *f, uint32_t nodes, const char *routing, const char *fidelity) {
  char n[48], r[48], fid[64];
  snprintf(n, sizeof n, "cluster.nodes=%u", nodes);
  snprintf(r, sizeof r, "fabric.routing=%s", routing);
  snprintf(fid, sizeof fid, "simulation.fidelity=%s", fidelity);
  const char *sets[] = {n,
                        r,
                        fid,
                        "fabric.switch_radix=8",
                        "fabric.tiers=3",
                        "cluster.gpus_per_node=4",
                        "cluster.nic.per_node=4",
                        "fabric.adaptive.flowlet_gap=2us"};
  load(f, sets, 8);
}

/* The full build's name of a channel's vertex: a core of a bundle stands
 * for core q m + r, r the link's position in its bundle. */
static void vertex_key(const topo *t, uint32_t v, uint32_t link, char *buf, size_t n) {
  const topo_vertex *x = topo_vertex_at(t, v);
  uint32_t m = topo_bundle_size(t);
  if (x->kind == TOPO_SWITCH && x->tier == TOPO_TIER_CORE && m > 1) {
    char name[64];
    topo_link_name(t, link, name, sizeof name);
    const char *slash = strrchr(name, '/');
    assert_non_null(slash);
    snprintf(buf, n, "core%u", x->index * m + (uint32_t)strtoul(slash + 1, NULL, 10));
    return;
  }
  topo_vertex_name(t, v, buf, n);
}

static void path_key(const topo *t, const topo_path *p, char *buf, size_t n) {
  size_t w = 0;
  buf[0] = '\0';
  for (uint32_t j = 0; j < p->n && w < n; j++) {
    char a[64], b[64];
    uint32_t l = topo_channel_link(p->ch[j]);
    vertex_key(t, topo_channel_src(t, p->ch[j]), l, a, sizeof a);
    vertex_key(t, topo_channel_dst(t, p->ch[j]), l, b, sizeof b);
    w += (size_t)snprintf(buf + w, n - w, "%s>%s ", a, b);
  }
}

/* Shift permutations over the GPUs of nodes that fill whole pods: under
 * static routing no fabric channel carries two transfers. */
static void test_shift_collision_free(void **state) {
  (void)state;
  static const uint32_t nodes[] = {8, 12, 20, FULL_NODES}; /* 2, 3, 5 and 8 pods */
  for (size_t c = 0; c < sizeof nodes / sizeof *nodes; c++) {
    fixture f;
    load_fabric(&f, nodes[c], "static", "analytic");
    uint32_t g = topo_gpu_count(f.t), nch = 2 * topo_link_count(f.t);
    uint32_t *use = sim_calloc(nch, sizeof *use);
    for (uint32_t shift = 1; shift < g; shift++) {
      memset(use, 0, nch * sizeof *use);
      for (uint32_t s = 0; s < g; s++) {
        uint32_t d = (s + shift) % g;
        if (topo_gpu_node(f.t, s) == topo_gpu_node(f.t, d)) continue;
        topo_path p;
        assert_int_equal(topo_route(f.t, s, d, sim_hash_u64(s), &p), SIM_OK);
        for (uint32_t j = 0; j < p.n; j++)
          if (topo_link_at(f.t, topo_channel_link(p.ch[j]))->kind == TOPO_LINK_FABRIC &&
              ++use[p.ch[j]] > 1)
            fail_msg("%u nodes, shift %u: channel %u carries two transfers", nodes[c], shift,
                     p.ch[j]);
      }
    }
    sim_free(use);
    unload(&f);
  }
}

/* Every pair of GPUs of the partial build: its static path is the full
 * build's, hop for hop; adaptive over the same sequence of transfers (each
 * counted as it is placed) likewise; ECMP goes down a bundle at the
 * position it came up on. */
static void test_same_paths_as_full(void **state) {
  (void)state;
  static const uint32_t nodes[] = {5, 8, 12, 20};
  fixture full_s, full_a;
  load_fabric(&full_s, FULL_NODES, "static", "analytic");
  load_fabric(&full_a, FULL_NODES, "static", "analytic");
  uint32_t nch_full = 2 * topo_link_count(full_a.t);
  for (size_t c = 0; c < sizeof nodes / sizeof *nodes; c++) {
    fixture f, e;
    load_fabric(&f, nodes[c], "static", "analytic");
    load_fabric(&e, nodes[c], "ecmp", "analytic");
    assert_true(topo_bundle_size(f.t) > 1 || nodes[c] > 16);
    uint32_t g = topo_gpu_count(f.t), nch = 2 * topo_link_count(f.t);
    uint32_t *load_p = sim_calloc(nch, sizeof *load_p), *load_f = sim_calloc(nch_full, 4);
    char kp[1024], kf[1024];
    uint64_t bundled = 0;
    for (uint32_t s = 0; s < g; s++)
      for (uint32_t d = 0; d < g; d++) {
        if (s == d) continue;
        topo_path p, q;
        assert_int_equal(topo_route(f.t, s, d, 0, &p), SIM_OK);
        assert_int_equal(topo_route(full_s.t, s, d, 0, &q), SIM_OK);
        path_key(f.t, &p, kp, sizeof kp);
        path_key(full_s.t, &q, kf, sizeof kf);
        if (strcmp(kp, kf))
          fail_msg("%u nodes, static gpu%u -> gpu%u:\n %s\n %s", nodes[c], s, d, kp, kf);
        assert_int_equal(topo_route_adaptive(f.t, NULL, s, d, 0, load_p, &p), SIM_OK);
        assert_int_equal(topo_route_adaptive(full_a.t, NULL, s, d, 0, load_f, &q), SIM_OK);
        for (uint32_t j = 0; j < p.n; j++) load_p[p.ch[j]]++;
        for (uint32_t j = 0; j < q.n; j++) load_f[q.ch[j]]++;
        path_key(f.t, &p, kp, sizeof kp);
        path_key(full_a.t, &q, kf, sizeof kf);
        if (strcmp(kp, kf))
          fail_msg("%u nodes, adaptive gpu%u -> gpu%u:\n %s\n %s", nodes[c], s, d, kp, kf);
        assert_int_equal(topo_route(e.t, s, d, sim_hash_u64((uint64_t)s << 32 | d), &p), SIM_OK);
        for (uint32_t j = 0; j + 1 < p.n; j++) {
          const topo_vertex *y = topo_vertex_at(e.t, topo_channel_dst(e.t, p.ch[j]));
          if (y->kind != TOPO_SWITCH || y->tier != TOPO_TIER_CORE) continue;
          char up[64], down[64];
          topo_link_name(e.t, topo_channel_link(p.ch[j]), up, sizeof up);
          topo_link_name(e.t, topo_channel_link(p.ch[j + 1]), down, sizeof down);
          if (topo_bundle_size(e.t) > 1) {
            assert_string_equal(strrchr(up, '/'), strrchr(down, '/'));
            bundled++;
          }
        }
      }
    assert_true(bundled > 0 || topo_bundle_size(e.t) == 1);
    sim_free(load_p);
    sim_free(load_f);
    unload(&f);
    unload(&e);
  }
  unload(&full_s);
  unload(&full_a);
}

static simtime_ps phase_time(const fixture *f, const be_xfer *x, size_t n, int fidelity) {
  return fx_phase_end(f, x, n, fidelity, NULL);
}

/* One step of a ring AllReduce over the GPUs of `nodes` nodes (4 channels). */
static be_xfer *ring_step(const topo *t, uint32_t nodes, size_t *n) {
  uint32_t g = nodes * GPN, *ranks = sim_malloc(g * sizeof *ranks);
  for (uint32_t i = 0; i < g; i++) ranks[i] = i;
  coll_spec s = {.op = CFG_COLL_ALLREDUCE,
                 .algorithm = CFG_ALGO_RING,
                 .bytes = (1u << 20) * (uint64_t)g * 4,
                 .ranks = ranks,
                 .nranks = g,
                 .channels = 4,
                 .chunk = 1u << 20};
  coll_plan p;
  sim_error err = {0};
  assert_int_equal(coll_plan_build(&p, t, &s, &err), SIM_OK);
  *n = p.phases[0].n;
  be_xfer *x = sim_malloc(*n * sizeof *x);
  memcpy(x, p.phases[0].x, *n * sizeof *x);
  coll_plan_free(&p);
  sim_free(ranks);
  return x;
}

/* Every GPU of `nodes` nodes to another, a seeded random derangement (two
 * sends each, 1 and 2 MiB): static and adaptive collide on fabric links,
 * across pods too, so a path that differs from the full build's shows. */
static be_xfer *permutation(uint32_t nodes, size_t *n) {
  uint32_t g = nodes * GPN, *dst = sim_malloc(g * sizeof *dst);
  sim_rng r;
  sim_rng_init(&r, 11, "test-partial-permutation");
  be_xfer *x = sim_calloc(2 * (size_t)g, sizeof *x);
  *n = 0;
  for (int round = 0; round < 2; round++) {
    for (uint32_t i = 0; i < g; i++) dst[i] = i;
    for (uint32_t i = g - 1; i > 0; i--) { /* Sattolo: one cycle, no fixed point */
      uint32_t j = (uint32_t)sim_rng_below(&r, i), t = dst[i];
      dst[i] = dst[j], dst[j] = t;
    }
    for (uint32_t i = 0; i < g; i++)
      x[(*n)++] = (be_xfer){.src_gpu = i,
                            .dst_gpu = dst[i],
                            .bytes = (round + 1u) << 20,
                            .flow_hash = sim_hash_u64((uint64_t)round << 32 | i)};
  }
  sim_free(dst);
  return x;
}

static void same_figures(const char *routing, int max_fidelity) {
  static const char *const fid[] = {"analytic", "flow", "packet"};
  static const uint32_t nodes[] = {6, 12};
  for (size_t c = 0; c < sizeof nodes / sizeof *nodes; c++)
    for (int k = 0; k <= max_fidelity; k++) {
      fixture part, full;
      load_fabric(&part, nodes[c], routing, fid[k]);
      load_fabric(&full, FULL_NODES, routing, fid[k]);
      for (int w = 0; w < 2; w++) {
        size_t n;
        be_xfer *x = w ? permutation(nodes[c], &n) : ring_step(part.t, nodes[c], &n);
        simtime_ps tp = phase_time(&part, x, n, k), tf = phase_time(&full, x, n, k);
        printf("  %-8s %-8s %2u nodes %-5s partial %.3f us, full %.3f us\n", routing, fid[k],
               nodes[c], w ? "perm" : "ring", sim_ps_to_s(tp) * 1e6, sim_ps_to_s(tf) * 1e6);
        if (tp != tf)
          fail_msg("%s %s %u nodes %s: partial %llu ps, full %llu ps", routing, fid[k], nodes[c],
                   w ? "perm" : "ring", (unsigned long long)tp, (unsigned long long)tf);
        sim_free(x);
      }
      unload(&part);
      unload(&full);
    }
}

static void test_figures_static(void **state) {
  (void)state;
  same_figures("static", 2);
}

static void test_figures_adaptive_spray(void **state) {
  (void)state;
  same_figures("adaptive", 1);
  same_figures("spray", 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shift_collision_free),
      cmocka_unit_test(test_same_paths_as_full),
      cmocka_unit_test(test_figures_static),
      cmocka_unit_test(test_figures_adaptive_spray),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
