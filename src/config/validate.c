/* Resolution after loading: presets fill the keys nobody set, then the
 * checks that involve more than one key. Single values (types, units,
 * ranges) were already checked as they were read.
 *
 * Every error is raised with cfg_fail_at at the key the user should change,
 * so it carries that key's file:line:col (or "scenario:" when the key was
 * never set). The topology module, not this one, checks that cluster.nodes
 * fits the fabric.
 */
#include <stdio.h>
#include <string.h>

#include "config/cfg_internal.h"

static int key_index(const char *name) { return cfg__find_key(name, strlen(name)); }

static int is_set(const cfg_doc *doc, const char *name) {
  int i = key_index(name);
  return i >= 0 && cfg__is_set(doc, (size_t)i);
}

/* Applies the schema's by-value preset to key i; the texts are ours, so a
 * failure is a bug in the table and reported as such. */
static int apply_preset(cfg_scenario *s, size_t i, int selector, sim_error *err) {
  const cfg__key *k = cfg__key_at(i);
  char msg[256];
  const char *text = k->by_value[selector];
  if (cfg__set_text(s, i, text, strlen(text), msg, sizeof msg) != SIM_OK)
    return sim_fail(err, SIM_ECONFIG, "preset of %s: %s", k->name, msg);
  return SIM_OK;
}

/* bytes x bps / 25 Gb/s, at least 1 byte, saturating. */
static uint64_t scale_by_link(uint64_t bytes_at_25g, rate_bps bps) {
  unsigned __int128 v = (unsigned __int128)bytes_at_25g * bps / 25000000000ULL;
  return v == 0 ? 1 : v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static int apply_presets(cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  int rc = SIM_OK;
  for (size_t i = 0; i < cfg__nkeys() && rc == SIM_OK; i++) {
    const cfg__key *k = cfg__key_at(i);
    if (cfg__is_set(doc, i) &&
        !(k->type == CFG__TIME && k->derive == CFG__DERIVE_TRANSPORT &&
          *(const simtime_ps *)(const void *)((const char *)s + k->offset) == CFG__TIME_AUTO))
      continue;
    if (k->derive == CFG__DERIVE_GPU) rc = apply_preset(s, i, (int)s->cluster.gpu, err);
    else if (k->derive == CFG__DERIVE_TRANSPORT)
      rc = apply_preset(s, i, (int)s->fabric.transport, err);
  }
  /* The rules, in dependency order: planes follow nic.per_node. */
  if (!is_set(doc, "cluster.nic.per_node")) s->cluster.nic.per_node = s->cluster.gpus_per_node;
  if (!is_set(doc, "fabric.planes"))
    s->fabric.planes = s->fabric.topology == CFG_TOPO_MULTI_PLANE ? s->cluster.nic.per_node : 1;
  /* ECN thresholds scale with link speed (MODEL-INPUTS: 100 KB and 400 KB per 25 Gb/s). */
  if (!is_set(doc, "fabric.ecn.kmin"))
    s->fabric.ecn.kmin = scale_by_link(100000, s->fabric.link_bandwidth);
  if (!is_set(doc, "fabric.ecn.kmax"))
    s->fabric.ecn.kmax = scale_by_link(400000, s->fabric.link_bandwidth);
  return rc;
}

static int check_nics(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  uint32_t g = s->cluster.gpus_per_node, n = s->cluster.nic.per_node;
  if (g % n != 0 && n % g != 0)
    return cfg_fail_at(doc, "cluster.nic.per_node", err,
                       "%u NICs cannot be shared evenly by %u GPUs; use a divisor or a multiple "
                       "of cluster.gpus_per_node (%u)", n, g, g);
  return SIM_OK;
}

static int check_planes(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  uint32_t p = s->fabric.planes, n = s->cluster.nic.per_node;
  if (s->fabric.topology != CFG_TOPO_MULTI_PLANE) {
    if (p != 1)
      return cfg_fail_at(doc, "fabric.planes", err,
                         "%u planes need fabric.topology: multi-plane (%s has one plane)", p,
                         cfg_topology_name(s->fabric.topology));
    return SIM_OK;
  }
  if (p > n)
    return cfg_fail_at(doc, "fabric.planes", err,
                       "%u planes exceed cluster.nic.per_node (%u); every plane needs a NIC on "
                       "each node", p, n);
  if (n % p != 0)
    return cfg_fail_at(doc, "fabric.planes", err,
                       "%u does not divide cluster.nic.per_node (%u); every plane gets the same "
                       "number of NICs per node", p, n);
  return SIM_OK;
}

static int check_switch(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  uint32_t mtu = s->fabric.mtu;
  if (s->fabric.switch_radix % 2 != 0)
    return cfg_fail_at(doc, "fabric.switch_radix", err,
                       "%u is odd; a fat-tree switch splits its ports evenly between down- and "
                       "uplinks", s->fabric.switch_radix);
  /* InfiniBand's MTU is one of five powers of two (IBTA spec, PortInfo NeighborMTU). */
  if (s->fabric.transport == CFG_TRANSPORT_INFINIBAND && ((mtu & (mtu - 1)) != 0 || mtu > 4096))
    return cfg_fail_at(doc, "fabric.mtu", err,
                       "%u is not an InfiniBand MTU; allowed 256, 512, 1024, 2048, 4096", mtu);
  return SIM_OK;
}

/* The algorithms coll_plan_build offers per op (kept in step with
 * coll_algorithm_supports; config does not depend on coll). */
static bool collective_offers(cfg_coll_op op, cfg_coll_algorithm a) {
  if (a == CFG_ALGO_AUTO) return true;
  switch (op) {
  case CFG_COLL_ALLREDUCE:
    return a == CFG_ALGO_RING || a == CFG_ALGO_TREE || a == CFG_ALGO_HALVING_DOUBLING ||
           a == CFG_ALGO_HIERARCHICAL;
  case CFG_COLL_REDUCESCATTER:
  case CFG_COLL_ALLGATHER: return a == CFG_ALGO_RING || a == CFG_ALGO_HALVING_DOUBLING;
  case CFG_COLL_BROADCAST: return a == CFG_ALGO_RING;
  case CFG_COLL_ALLTOALL: return a == CFG_ALGO_PAIRWISE || a == CFG_ALGO_PXN;
  }
  return false;
}

/* Achieved shares of line rates: (0, 1] (the schema checks > 0). */
static int check_efficiency(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  const struct {
    const char *key;
    double v;
  } e[] = {{"cluster.scale_up.efficiency", s->cluster.scale_up.efficiency},
           {"cluster.nic.efficiency", s->cluster.nic.efficiency},
           {"cluster.pcie.efficiency", s->cluster.pcie.efficiency},
           {"fabric.link_efficiency", s->fabric.link_efficiency}};
  for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
    if (e[i].v > 1)
      return cfg_fail_at(doc, e[i].key, err,
                         "%g is not a share of the line rate; allowed above 0, at most 1", e[i].v);
  return SIM_OK;
}

static int check_packet(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  if (s->fabric.ecn.kmin > s->fabric.ecn.kmax)
    return cfg_fail_at(doc, is_set(doc, "fabric.ecn.kmax") ? "fabric.ecn.kmax" : "fabric.ecn.kmin",
                       err, "kmin (%llu bytes) exceeds kmax (%llu bytes); kmin <= kmax",
                       (unsigned long long)s->fabric.ecn.kmin, (unsigned long long)s->fabric.ecn.kmax);
  if (s->fabric.ecn.pmax > 1)
    return cfg_fail_at(doc, "fabric.ecn.pmax", err, "%g is not a probability; allowed 0..1",
                       s->fabric.ecn.pmax);
  if (s->fabric.pfc.xoff != 0 && s->fabric.pfc.xon >= s->fabric.pfc.xoff)
    return cfg_fail_at(doc, "fabric.pfc.xon", err,
                       "the resume offset (%llu bytes) must be below fabric.pfc.xoff (%llu bytes)",
                       (unsigned long long)s->fabric.pfc.xon, (unsigned long long)s->fabric.pfc.xoff);
  return SIM_OK;
}

static int check_collective(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  cfg_coll_op op = s->workload.collective.op;
  cfg_coll_algorithm algo = s->workload.collective.algorithm;
  uint32_t ranks = s->workload.collective.ranks;
  uint64_t gpus = (uint64_t)s->cluster.nodes * s->cluster.gpus_per_node;
  if (algo == CFG_ALGO_NODE_LIMITED)
    return cfg_fail_at(doc, "workload.collective.algorithm", err,
                       "node-limited is the MoE dispatch/combine of training workloads; a "
                       "collective alltoall uses pairwise or pxn");
  if (algo != CFG_ALGO_AUTO && op == CFG_COLL_ALLTOALL && !collective_offers(op, algo))
    return cfg_fail_at(doc, "workload.collective.algorithm", err,
                       "%s does not implement alltoall; use pairwise (or leave the algorithm "
                       "unset)", cfg_coll_algorithm_name(algo));
  if (algo != CFG_ALGO_AUTO && op != CFG_COLL_ALLTOALL && collective_offers(CFG_COLL_ALLTOALL, algo))
    return cfg_fail_at(doc, "workload.collective.algorithm", err,
                       "%s only implements alltoall; %s needs ring (or leave the algorithm unset)",
                       cfg_coll_algorithm_name(algo), cfg_coll_op_name(op));
  if (!collective_offers(op, algo))
    return cfg_fail_at(doc, "workload.collective.algorithm", err,
                       "%s does not implement %s; allowed: %s (or leave the algorithm unset)",
                       cfg_coll_algorithm_name(algo), cfg_coll_op_name(op),
                       op == CFG_COLL_BROADCAST ? "ring" : "ring, halving-doubling");
  if (ranks == 1)
    return cfg_fail_at(doc, "workload.collective.ranks", err,
                       "1 rank is not a collective; use 0 (every GPU) or at least 2");
  if (s->cluster.nodes != 0 && ranks > gpus)
    return cfg_fail_at(doc, "workload.collective.ranks", err,
                       "%u ranks exceed the %llu GPUs of the cluster (%u nodes x %u GPUs)", ranks,
                       (unsigned long long)gpus, s->cluster.nodes, s->cluster.gpus_per_node);
  return SIM_OK;
}

/* Network faults change link state and routing, which only the dynamic
 * fidelities model. Located at the first network fault's kind. */
static int check_faults(const cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  char key[48];
  if (s->simulation.fidelity != CFG_FIDELITY_ANALYTIC) return SIM_OK;
  for (uint32_t i = 0; i < s->faults.n; i++) {
    if (!cfg_fault_is_network(s->faults.v[i].kind)) continue;
    snprintf(key, sizeof key, "faults[%u].kind", i);
    return cfg_fail_at(doc, key, err,
                       "%s needs simulation.fidelity flow or packet; the analytic fidelity has "
                       "no link state (use --set simulation.fidelity=flow)",
                       cfg_fault_kind_name(s->faults.v[i].kind));
  }
  return SIM_OK;
}

int cfg__resolve(cfg_scenario *s, const cfg_doc *doc, sim_error *err) {
  int rc = apply_presets(s, doc, err);
  if (rc == SIM_OK) rc = check_nics(s, doc, err);
  if (rc == SIM_OK) rc = check_planes(s, doc, err);
  if (rc == SIM_OK) rc = check_switch(s, doc, err);
  if (rc == SIM_OK) rc = check_collective(s, doc, err);
  if (rc == SIM_OK) rc = check_efficiency(s, doc, err);
  if (rc == SIM_OK) rc = check_packet(s, doc, err);
  if (rc == SIM_OK) rc = check_faults(s, doc, err);
  return rc;
}
