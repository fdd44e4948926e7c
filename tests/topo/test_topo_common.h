/* Shared helpers of the topo tests (header-only; each test_*.c is its own
 * executable). Scenarios go through the real config loader with --set
 * strings, so the topology sees the real defaults.
 *
 * The expected sizes below are the closed forms from the topology contract,
 * written independently of src/topo: a leaf keeps u = max(1, floor(k/(1+o)))
 * up ports and d = k - u down ports; 2-tier planes hold k leaves; 3-tier
 * planes hold k pods of k/2 leaves and u spines, with u groups of k/2 cores.
 * A partial fabric builds what its nodes need: a single leaf has no spine;
 * P pods of a 3-tier plane (1 < P < k) keep every spine's k/2 up links, in
 * bundles of m parallel links to each of (k/2)/m cores of its group, m the
 * largest divisor of k/2 with m P <= k (so u (k/2)/m cores).
 */
#ifndef TEST_TOPO_COMMON_H
#define TEST_TOPO_COMMON_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fabsim/config.h"
#include "fabsim/topo.h"

typedef struct tcase {
  const char *kind; /* fabric.topology */
  uint32_t k, tiers;
  uint32_t planes; /* multi-plane only */
  double o;        /* oversubscription */
  uint32_t nodes;  /* 0: full size */
  uint32_t gpn, npn;
} tcase;

static inline bool tc_is(const tcase *c, const char *kind) { return strcmp(c->kind, kind) == 0; }

/* Build from a case plus extra "key=value" overrides. */
static inline int tc_build_extra(const tcase *c, const char *const *extra, int nextra, topo **t,
                                 sim_error *err) {
  char buf[12][96];
  const char *sets[24];
  int n = 0;
  snprintf(buf[n], sizeof buf[n], "fabric.topology=%s", c->kind), n++;
  snprintf(buf[n], sizeof buf[n], "fabric.switch_radix=%u", c->k), n++;
  snprintf(buf[n], sizeof buf[n], "fabric.tiers=%u", c->tiers), n++;
  snprintf(buf[n], sizeof buf[n], "fabric.oversubscription=%g", c->o > 0 ? c->o : 1.0), n++;
  snprintf(buf[n], sizeof buf[n], "cluster.gpus_per_node=%u", c->gpn ? c->gpn : 8), n++;
  snprintf(buf[n], sizeof buf[n], "cluster.nic.per_node=%u", c->npn ? c->npn : 8), n++;
  if (c->nodes) snprintf(buf[n], sizeof buf[n], "cluster.nodes=%u", c->nodes), n++;
  if (tc_is(c, "multi-plane")) snprintf(buf[n], sizeof buf[n], "fabric.planes=%u", c->planes), n++;
  for (int i = 0; i < n; i++) sets[i] = buf[i];
  for (int i = 0; i < nextra && n < 24; i++) sets[n++] = extra[i];
  cfg_scenario cfg;
  cfg_doc *doc = NULL;
  *t = NULL;
  int rc = cfg_load_buffer(&cfg, &doc, "test", "", 0, sets, n, err);
  if (rc != SIM_OK) return rc;
  rc = topo_build(t, &cfg, doc, err);
  cfg_free(&cfg, doc);
  return rc;
}

static inline topo *tc_build(const tcase *c) {
  topo *t = NULL;
  sim_error err = {0};
  int rc = tc_build_extra(c, NULL, 0, &t, &err);
  if (rc != SIM_OK) fail_msg("build %s k=%u tiers=%u: %s", c->kind, c->k, c->tiers, err.msg);
  return t;
}

typedef struct texpect {
  uint64_t u, d, half, planes;
  uint64_t max_nodes, nodes;
  uint64_t leaves, pods, spines, cores; /* per plane */
  uint64_t bundle;                      /* parallel links per (spine, core) pair */
  uint64_t ls_links, sc_links;          /* per plane */
} texpect;

static inline uint64_t tc_ceil(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static inline texpect tc_expect(const tcase *c) {
  texpect e;
  uint64_t k = c->k, N = c->npn ? c->npn : 8;
  double o = c->o > 0 ? c->o : 1.0;
  e.u = (uint64_t)floor((double)k / (1.0 + o));
  if (e.u < 1) e.u = 1;
  e.d = k - e.u;
  e.half = k / 2;
  e.planes = tc_is(c, "multi-plane") ? c->planes : 1;
  uint64_t max_leaves = c->tiers == 2 ? k : k * (k / 2);
  if (tc_is(c, "rail-optimized")) e.max_nodes = max_leaves / N * e.d;
  else e.max_nodes = max_leaves * e.d / (N / e.planes);
  e.nodes = c->nodes ? c->nodes : e.max_nodes;
  if (tc_is(c, "rail-optimized")) e.leaves = tc_ceil(e.nodes, e.d) * N;
  else e.leaves = tc_ceil(e.nodes * N / e.planes, e.d);
  e.bundle = 1;
  if (c->tiers == 2) {
    e.pods = 1;
    e.spines = e.u;
    e.cores = 0;
  } else {
    e.pods = tc_ceil(e.leaves, e.half);
    e.spines = e.pods * e.u;
    if (e.pods > 1)
      for (uint64_t m = e.half; m >= 1; m--)
        if (e.half % m == 0 && m * e.pods <= k) {
          e.bundle = m;
          break;
        }
    e.cores = e.pods > 1 ? e.u * (e.half / e.bundle) : 0;
  }
  if (e.leaves == 1) e.spines = 0; /* one leaf is one crossbar: nothing goes up */
  e.ls_links = e.spines ? e.leaves * e.u : 0;
  e.sc_links = e.cores ? e.spines * e.half : 0;
  return e;
}

/* The leaf a GPU's traffic leaves the node from toward dst (after the
 * cross-plane NVLink hop, if any): the NIC of src's node with dst NIC's local
 * index when planes differ. */
static inline uint32_t tc_src_nic(const topo *t, uint32_t src, uint32_t dst) {
  uint32_t snic = topo_gpu_nic(t, src), dnic = topo_gpu_nic(t, dst);
  const topo_vertex *a = topo_vertex_at(t, topo_nic_vertex(t, snic));
  const topo_vertex *b = topo_vertex_at(t, topo_nic_vertex(t, dnic));
  if (a->plane == b->plane) return snic;
  uint32_t npn = topo_nic_count(t) / topo_node_count(t);
  return topo_gpu_node(t, src) * npn + dnic % npn;
}

/* PCIe channels between a GPU and its NIC: one, or two through the GPU's
 * PCIe switch when a node has more NICs than GPUs. */
static inline uint32_t tc_pcie_hops(const topo *t) {
  return topo_nic_count(t) > topo_gpu_count(t) ? 2 : 1;
}

/* Whether GPU vertex g reaches NIC vertex n over PCIe: a link between them,
 * or one to a PCIe switch of g's that has a link to n. */
static inline bool tc_pcie_reaches(const topo *t, uint32_t g, uint32_t n) {
  uint32_t l;
  if (topo_link_between(t, g, n, &l) == SIM_OK) return true;
  const topo_vertex *x = topo_vertex_at(t, g);
  for (uint32_t i = 0; i < x->nports; i++) {
    uint32_t y = topo_channel_dst(t, topo_port_channel(t, g, i));
    if (topo_vertex_at(t, y)->kind == TOPO_PCIE_SWITCH && topo_link_between(t, y, n, &l) == SIM_OK)
      return true;
  }
  return false;
}

/* NVLink channels a cross-node route needs: none when src GPU is cabled
 * (PCIe) to the NIC it leaves through, else src -> nvs -> sibling. */
static inline uint32_t tc_nvlink_hops(const topo *t, uint32_t src, uint32_t dst) {
  if (topo_gpu_node(t, src) == topo_gpu_node(t, dst)) return 2;
  return tc_pcie_reaches(t, topo_gpu_vertex(t, src), topo_nic_vertex(t, tc_src_nic(t, src, dst)))
             ? 0
             : 2;
}

/* Closed-form path count and channel count between two GPUs. */
static inline void tc_expect_path(const topo *t, const texpect *e, uint32_t tiers, uint32_t src,
                                  uint32_t dst, uint64_t *paths, uint32_t *hops) {
  if (topo_gpu_node(t, src) == topo_gpu_node(t, dst)) {
    *paths = 1;
    *hops = 2;
    return;
  }
  uint32_t snic = tc_src_nic(t, src, dst), dnic = topo_gpu_nic(t, dst);
  uint32_t nv = tc_nvlink_hops(t, src, dst) + 2 * (tc_pcie_hops(t) - 1);
  const topo_vertex *ls = topo_vertex_at(t, topo_nic_leaf(t, snic));
  const topo_vertex *ld = topo_vertex_at(t, topo_nic_leaf(t, dnic));
  if (ls == ld) {
    *paths = 1;
    *hops = nv + 4;
  } else if (tiers == 2 || ls->pod == ld->pod) {
    *paths = e->u;
    *hops = nv + 6;
  } else { /* the parallel links of a bundle are distinct paths */
    *paths = e->u * e->half * e->bundle;
    *hops = nv + 8;
  }
}

/* A routed path is a chain of channels from src GPU to dst GPU that goes up
 * and then down the tiers once, never revisits a vertex, stays in the
 * destination NIC's plane, and crosses NVLink exactly when it must. */
static inline void tc_check_route(const topo *t, const texpect *e, uint32_t tiers, uint32_t src,
                                  uint32_t dst, uint64_t flow) {
  topo_path p;
  assert_int_equal(topo_route(t, src, dst, flow, &p), SIM_OK);
  uint64_t want_paths;
  uint32_t want_hops;
  tc_expect_path(t, e, tiers, src, dst, &want_paths, &want_hops);
  if (p.n != want_hops) fail_msg("gpu%u -> gpu%u: %u channels, want %u", src, dst, p.n, want_hops);
  assert_true(p.n <= TOPO_MAX_PATH);
  assert_int_equal(topo_channel_src(t, p.ch[0]), topo_gpu_vertex(t, src));
  assert_int_equal(topo_channel_dst(t, p.ch[p.n - 1]), topo_gpu_vertex(t, dst));
  uint32_t seen[TOPO_MAX_PATH + 1];
  seen[0] = topo_gpu_vertex(t, src);
  int16_t plane = topo_vertex_at(t, topo_nic_vertex(t, topo_gpu_nic(t, dst)))->plane;
  int last_tier = 0;
  bool descending = false;
  uint32_t nvlink = 0;
  for (uint32_t i = 0; i < p.n; i++) {
    assert_true(topo_channel_link(p.ch[i]) < topo_link_count(t));
    if (i + 1 < p.n)
      assert_int_equal(topo_channel_dst(t, p.ch[i]), topo_channel_src(t, p.ch[i + 1]));
    uint32_t v = topo_channel_dst(t, p.ch[i]);
    for (uint32_t j = 0; j <= i; j++) assert_int_not_equal(seen[j], v);
    seen[i + 1] = v;
    if (topo_link_at(t, topo_channel_link(p.ch[i]))->kind == TOPO_LINK_SCALE_UP) nvlink++;
    const topo_vertex *x = topo_vertex_at(t, v);
    if (x->kind == TOPO_SWITCH) {
      assert_int_equal(x->plane, plane);
      if (x->tier < last_tier) descending = true;
      if (descending) assert_true(x->tier < last_tier);
      else assert_true(x->tier > last_tier);
      last_tier = x->tier;
    }
    if (x->kind == TOPO_NIC) assert_int_equal(x->plane, plane);
  }
  assert_int_equal(nvlink, tc_nvlink_hops(t, src, dst));
  uint64_t got = topo_path_count(t, src, dst);
  if (got != want_paths)
    fail_msg("gpu%u -> gpu%u: %llu paths, want %llu", src, dst, (unsigned long long)got,
             (unsigned long long)want_paths);
}

#endif
