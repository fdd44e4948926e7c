/* Fat-tree planning and wiring: validation, sizes, NIC placement, the
 * leaf-spine-core links of every plane.
 *
 * A leaf of radix k with oversubscription o keeps up = max(1, floor(k/(1+o)))
 * ports toward spines and down = k - up toward NICs.
 *   2-tier: every leaf has one link to each of the `up` spines; a spine has k
 *     ports, so a plane holds at most k leaves = k * down endpoints.
 *   3-tier: a pod is k/2 leaves and `up` spines; spine c of a pod has k/2 down
 *     links (its pod's leaves) and k/2 up links into core group c; there are
 *     `up` groups; a core has k ports, so a plane holds at most k pods =
 *     k * (k/2) * down endpoints (k^3/4 at o = 1). At full size a group is
 *     k/2 cores and each up link of spine c goes to its own core.
 * Partial population builds only the switches the nodes need: the leaves
 * and pods their NICs fill, all `up` spines per pod (a leaf reaches every
 * spine of its pod over one link each), no spine at all over a single leaf
 * (one crossbar: nothing leaves it), and cores only when there is more than
 * one pod, cabled as an operator cables a partial build for full bisection
 * between the P pods present: every spine keeps its k/2 up links, in bundles
 * of m parallel links to each of (k/2)/m cores of its group, m the largest
 * divisor of k/2 with m * P <= k (each core then has m links to each pod:
 * m * P of its k ports). Up link j of spine c goes to core c * (k/2)/m + j/m
 * as the (j mod m)-th link of its bundle; at full size (P = k) m = 1 and this
 * is the wiring above. The up links, hence every cut between pods and the
 * bisection, are the full build's; the cores are `up` x (k/2)/m instead of
 * `up` x k/2 (6 pods of radix 64: bundles of 8, 4 cores per group). The
 * full build's switches stay in the inventory (capacity planning:
 * topo_inventory.switches_full).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "topo/topo_internal.h"

int topo__fail(const cfg_doc *doc, const char *key, sim_error *err, const char *fmt, ...) {
  char msg[800];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (doc) return cfg_fail_at(doc, key, err, "%s", msg);
  return sim_fail(err, SIM_ECONFIG, "%s: %s", key, msg);
}

static uint32_t div_ceil(uint32_t a, uint32_t b) { return a / b + (a % b != 0); }

/* Keys that make the fabric hold more nodes, for the "does not fit" message. */
static void raise_hint(const topo *t, char *buf, size_t n) {
  const char *more_tiers = t->s.tiers == 2 ? ", fabric.tiers (to 3)" : "";
  const char *planes = t->kind == CFG_TOPO_MULTI_PLANE && t->planes < t->npn
                           ? ", fabric.planes (up to cluster.nic.per_node)"
                           : "";
  snprintf(buf, n,
           "raise fabric.switch_radix%s%s or fabric.oversubscription, or lower cluster.nodes",
           more_tiers, planes);
}

/* Spine-core links per (spine, core) pair when `pods` pods of a 3-tier
 * plane are built: the largest divisor m of k/2 with m * pods <= k (see the
 * header comment; 1 at full size). O(k). */
static uint32_t core_bundle(uint32_t k, uint32_t pods) {
  uint32_t half = k / 2, m = half;
  while (m > 1 && (half % m || (uint64_t)m * pods > k)) m--;
  return m;
}

/* Switches per plane for `nodes` nodes (see the header comment). O(k). */
static void shape_switches(const topo *t, uint32_t nodes, uint32_t *leaves, uint32_t *pods,
                           uint32_t *spines, uint32_t *cores, uint32_t *bundle) {
  const topo__shape *s = &t->s;
  if (t->kind == CFG_TOPO_RAIL_OPTIMIZED)
    *leaves = div_ceil(nodes, s->down) * t->npn; /* every rail's leaf in each group */
  else *leaves = div_ceil(nodes * (t->npn / t->planes), s->down);
  *pods = s->tiers == 2 ? 1 : div_ceil(*leaves, s->half);
  *spines = *leaves > 1 ? *pods * s->up : 0;
  *bundle = s->tiers == 3 && *pods > 1 ? core_bundle(s->k, *pods) : 1;
  *cores = s->tiers == 3 && *pods > 1 ? s->up * (s->half / *bundle) : 0;
}

int topo__plan(topo *t, const cfg_scenario *cfg, const cfg_doc *doc, sim_error *err) {
  const uint32_t G = cfg->cluster.gpus_per_node, N = cfg->cluster.nic.per_node;
  const uint32_t k = cfg->fabric.switch_radix, tiers = cfg->fabric.tiers;
  const double o = cfg->fabric.oversubscription;
  topo__shape *s = &t->s;

  if (G < 1 || G > TOPO__MAX_PER_NODE)
    return topo__fail(doc, "cluster.gpus_per_node", err, "%u GPUs per node; allowed 1 .. %d", G,
                      TOPO__MAX_PER_NODE);
  if (N < 1 || N > TOPO__MAX_PER_NODE)
    return topo__fail(doc, "cluster.nic.per_node", err, "%u NICs per node; allowed 1 .. %d", N,
                      TOPO__MAX_PER_NODE);
  if (k < 2 || k % 2 || k > TOPO__MAX_RADIX)
    return topo__fail(doc, "fabric.switch_radix", err,
                      "radix %u; a switch radix must be even, 2 .. %d", k, TOPO__MAX_RADIX);
  if (tiers != 2 && tiers != 3)
    return topo__fail(doc, "fabric.tiers", err, "%u tiers; fat-trees have 2 or 3 tiers", tiers);
  if (!(o >= 1.0) || !isfinite(o))
    return topo__fail(doc, "fabric.oversubscription", err,
                      "%g; the leaf down:up ratio must be a finite number >= 1", o);

  if (cfg->fabric.topology == CFG_TOPO_FILE)
    return topo__fail(doc, "fabric.topology", err,
                      "file: this command builds generated fabrics only; allowed: fat-tree, "
                      "multi-plane, rail-optimized (fabsim run and topo read fabric files)");
  t->kind = cfg->fabric.topology;
  t->gpn = G;
  t->npn = N;
  t->planes = 1;
  if (t->kind == CFG_TOPO_MULTI_PLANE) {
    uint32_t P = cfg->fabric.planes;
    if (P < 1 || P > N || N % P)
      return topo__fail(doc, "fabric.planes", err,
                        "%u planes with %u NICs per node; a multi-plane fabric needs 1 .. "
                        "cluster.nic.per_node planes dividing it (NIC i goes to plane i mod "
                        "planes)",
                        P, N);
    t->planes = P;
  } else if (cfg->fabric.planes != 1) {
    return topo__fail(doc, "fabric.planes", err,
                      "%u planes on a %s fabric; only fabric.topology: multi-plane has planes",
                      cfg->fabric.planes, cfg_topology_name(t->kind));
  }

  s->k = k;
  s->half = k / 2;
  s->tiers = tiers;
  double up = floor((double)k / (1.0 + o));
  s->up = up < 1.0 ? 1u : (uint32_t)up;
  s->down = k - s->up;
  if (s->up > s->half || s->down < 1)
    return topo__fail(doc, "fabric.oversubscription", err,
                      "radix %u leaves %u up / %u down ports; needs at least one of each and "
                      "no more up than down",
                      k, s->up, s->down);
  s->max_leaves = tiers == 2 ? k : k * s->half;
  s->max_endpoints = (uint64_t)s->max_leaves * s->down;

  uint64_t max_nodes;
  if (t->kind == CFG_TOPO_RAIL_OPTIMIZED) max_nodes = (uint64_t)(s->max_leaves / N) * s->down;
  else max_nodes = s->max_endpoints / (N / t->planes);
  if (max_nodes > UINT32_MAX) max_nodes = UINT32_MAX;
  t->max_nodes = (uint32_t)max_nodes;
  char hint[200];
  raise_hint(t, hint, sizeof hint);
  if (max_nodes == 0)
    return topo__fail(doc, "fabric.switch_radix", err,
                      "a %u-tier %s fabric of radix %u has %u leaves per plane, too few for one "
                      "node's %u NICs (one leaf per rail); raise fabric.switch_radix or "
                      "fabric.tiers",
                      tiers, cfg_topology_name(t->kind), k, s->max_leaves, N);

  uint32_t nodes = cfg->cluster.nodes ? cfg->cluster.nodes : t->max_nodes;
  if (nodes > max_nodes)
    return topo__fail(doc, "cluster.nodes", err,
                      "%u nodes do not fit: a %u-tier %s fabric of radix %u (%u down / %u up "
                      "per leaf%s) holds at most %u nodes of %u NICs; %s",
                      nodes, tiers, cfg_topology_name(t->kind), k, s->down, s->up,
                      t->planes > 1 ? ", per plane" : "", t->max_nodes, N, hint);
  uint32_t slots = nodes;
  nodes = topo__storage_plan(t, cfg, nodes, &slots);
  if (slots > max_nodes)
    return topo__fail(doc, "storage.servers", err,
                      "%u storage servers (%u node slots from slot %u, their own leaves) do not "
                      "fit beside the %u nodes: the fabric holds %u; %s",
                      t->sto_servers, slots - t->cnodes, t->cnodes, t->cnodes, t->max_nodes, hint);
  t->nodes = nodes;

  shape_switches(t, slots, &s->leaves, &s->pods, &s->spines, &s->cores, &s->bundle);
  s->sc_links = s->cores ? s->spines * s->half : 0;
  s->ls_links = s->spines ? s->leaves * s->up : 0;
  s->switches = s->leaves + s->spines + s->cores;
  uint32_t fl, fp, fs, fc, fm; /* the full build, per plane */
  shape_switches(t, t->max_nodes, &fl, &fp, &fs, &fc, &fm);
  s->switches_full = (uint64_t)fl + fs + fc;
  s->links_full = (uint64_t)(fs ? fl * s->up : 0) + (fc ? (uint64_t)fs * s->half : 0);

  uint64_t gpus = (uint64_t)nodes * G, nics = (uint64_t)nodes * N;
  uint64_t psw = N > G ? gpus : 0, pcie = gpus + (N > G ? nics : 0); /* build.c */
  uint64_t nv = gpus + nodes + nics + psw + (uint64_t)t->planes * s->switches;
  uint64_t nl = gpus + pcie + nics + (uint64_t)t->planes * (s->ls_links + s->sc_links);
  if (nv > TOPO__MAX_ELEMS || nl > TOPO__MAX_ELEMS) {
    /* elements grow about linearly with nodes: suggest a count that fits */
    uint64_t worst = nv > nl ? nv : nl;
    uint64_t fits = (uint64_t)nodes * TOPO__MAX_ELEMS / worst;
    return topo__fail(doc, "cluster.nodes", err,
                      "%u nodes%s make %llu vertices and %llu links, more than the %d of each "
                      "fabsim builds; set cluster.nodes to at most about %llu",
                      nodes, cfg->cluster.nodes ? "" : " (the full fabric)", (unsigned long long)nv,
                      (unsigned long long)nl, TOPO__MAX_ELEMS, (unsigned long long)fits);
  }

  t->gpus = (uint32_t)gpus;
  t->nics = (uint32_t)nics;
  t->v_gpu = 0;
  t->v_nvs = t->gpus;
  t->v_nic = t->v_nvs + nodes;
  t->v_psw = t->v_nic + t->nics;
  t->v_sw = t->v_psw + (uint32_t)psw;
  t->nvertices = (uint32_t)nv;
  t->l_nvlink = 0;
  t->l_pcie = t->gpus;
  t->l_endpoint = t->l_pcie + (uint32_t)pcie;
  t->l_fabric = t->l_endpoint + t->nics;
  t->nlinks = (uint32_t)nl;
  t->ecmp_seed = cfg->fabric.ecmp.hash_seed;
  t->routing = cfg->fabric.routing;
  t->polarized = cfg->fabric.ecmp.polarized;
  return SIM_OK;
}

topo__place topo__nic_place(const topo *t, uint32_t nic) {
  topo__place p;
  uint32_t node = nic / t->npn, i = nic % t->npn;
  if (node >= t->sto_node0) node += t->sto_gap; /* storage servers: leaves of their own */
  if (t->kind == CFG_TOPO_RAIL_OPTIMIZED) {
    /* group of `down` nodes; one leaf per rail in each group */
    p.plane = 0;
    p.leaf = (node / t->s.down) * t->npn + i;
    p.slot = node % t->s.down;
  } else {
    uint32_t per = t->npn / t->planes;       /* NICs per node in each plane */
    uint32_t j = node * per + i / t->planes; /* endpoint index within the plane */
    p.plane = i % t->planes;
    p.leaf = j / t->s.down;
    p.slot = j % t->s.down;
  }
  return p;
}

uint32_t topo__switch_v(const topo *t, uint32_t plane, uint32_t tier, uint32_t index) {
  uint32_t base = t->v_sw + plane * t->s.switches;
  switch (tier) {
  case TOPO_TIER_LEAF: return base + index;
  case TOPO_TIER_SPINE: return base + t->s.leaves + index;
  default: return base + t->s.leaves + t->s.spines + index;
  }
}

static void set_link(topo_link *l, uint32_t a, uint32_t b, rate_bps bps, simtime_ps lat) {
  l->a = a;
  l->b = b;
  l->kind = TOPO_LINK_FABRIC;
  l->bps = bps;
  l->latency = lat;
}

void topo__wire_fabric(topo *t, const cfg_scenario *cfg) {
  const topo__shape *s = &t->s;
  const rate_bps bps = cfg->fabric.link_bandwidth;
  const simtime_ps lat = cfg->fabric.link_latency;
  for (uint32_t p = 0; p < t->planes; p++) {
    topo_link *ls = t->link + t->l_fabric + p * (s->ls_links + s->sc_links);
    topo_link *sc = ls + s->ls_links;
    for (uint32_t L = 0; L < s->leaves; L++) {
      uint32_t pod = s->tiers == 3 ? L / s->half : 0;
      for (uint32_t c = 0; c < s->up; c++)
        set_link(&ls[L * s->up + c], topo__switch_v(t, p, TOPO_TIER_LEAF, L),
                 topo__switch_v(t, p, TOPO_TIER_SPINE, pod * s->up + c), bps, lat);
    }
    if (!s->sc_links) continue;
    uint32_t group = s->half / s->bundle; /* cores per group */
    for (uint32_t pod = 0; pod < s->pods; pod++)
      for (uint32_t c = 0; c < s->up; c++)
        for (uint32_t j = 0; j < s->half; j++)
          set_link(&sc[(pod * s->up + c) * s->half + j],
                   topo__switch_v(t, p, TOPO_TIER_SPINE, pod * s->up + c),
                   topo__switch_v(t, p, TOPO_TIER_CORE, c * group + j / s->bundle), bps, lat);
  }
}
