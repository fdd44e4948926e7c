/* Loading scenarios: defaults, presets, overrides, --set, nesting, key
 * locations and the dump round trip. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/cfg_internal.h"
#include "fabsim/config.h"

#define GiB (1ULL << 30)
#define NS 1000ULL
#define GBPS 1000000000ULL

static cfg_doc *load(cfg_scenario *s, const char *yaml, const char *const *sets, int nsets) {
  sim_error err = {0};
  cfg_doc *doc = NULL;
  int rc = cfg_load_buffer(s, &doc, "s.yaml", yaml, yaml ? strlen(yaml) : 0, sets, nsets, &err);
  if (rc != SIM_OK) fail_msg("unexpected error: %s", err.msg);
  assert_non_null(doc);
  return doc;
}

/* The first key whose value differs, or NULL when a and b are the same scenario. */
static const char *first_difference(const cfg_scenario *a, const cfg_scenario *b) {
  for (size_t i = 0; i < cfg__nkeys(); i++) {
    const cfg__key *k = cfg__key_at(i);
    const char *pa = (const char *)a + k->offset, *pb = (const char *)b + k->offset;
    if (k->type == CFG__STRING) {
      const char *sa, *sb;
      memcpy(&sa, pa, sizeof sa);
      memcpy(&sb, pb, sizeof sb);
      if (strcmp(sa, sb) != 0) return k->name;
    } else if (k->type == CFG__FAULTS) {
      const cfg_fault_list *la = (const void *)pa, *lb = (const void *)pb;
      if (la->n != lb->n) return k->name;
      for (uint32_t j = 0; j < la->n; j++) {
        const cfg_fault *x = &la->v[j], *y = &lb->v[j];
        if (x->at != y->at || x->kind != y->kind || strcmp(x->target, y->target) != 0 ||
            x->factor != y->factor || x->ber != y->ber || x->duration != y->duration ||
            x->period != y->period || x->count != y->count || x->index != y->index)
          return k->name;
      }
    } else if (k->type == CFG__CLASSES) { /* every class resolved, its name by value */
      const cfg_class_table *ta = (const void *)pa, *tb = (const void *)pb;
      if (ta->n != tb->n || memcmp(ta->order, tb->order, sizeof ta->order) != 0) return k->name;
      for (uint32_t j = 0; j < CFG_CLASSES; j++) {
        const cfg_tclass *x = &ta->v[j], *y = &tb->v[j];
        if (strcmp(x->name, y->name) != 0 || x->priority != y->priority || x->weight != y->weight ||
            x->lossless != y->lossless || x->ecn_kmin != y->ecn_kmin ||
            x->ecn_kmax != y->ecn_kmax || x->ecn_pmax != y->ecn_pmax || x->buffer != y->buffer)
          return k->name;
      }
    } else if (k->type == CFG__LIST) { /* by content: each scenario owns its items */
      const cfg_u64_list *la = (const void *)pa, *lb = (const void *)pb;
      if (la->n != lb->n || (la->n && memcmp(la->v, lb->v, la->n * sizeof *la->v) != 0))
        return k->name;
    } else if (k->type == CFG__JOBS) { /* every field of every job, as the dump writes them */
      cfg__buf ta = {0}, tb = {0};
      cfg__jobs_text((const void *)pa, &ta);
      cfg__jobs_text((const void *)pb, &tb);
      char *xa = cfg__buf_take(&ta), *xb = cfg__buf_take(&tb);
      bool same = strcmp(xa, xb) == 0;
      sim_free(xa);
      sim_free(xb);
      if (!same) return k->name;
    } else if (memcmp(pa, pb, k->width) != 0) {
      return k->name;
    }
  }
  return NULL;
}

static void assert_same(const cfg_scenario *a, const cfg_scenario *b) {
  const char *diff = first_difference(a, b);
  if (diff) fail_msg("scenarios differ at %s", diff);
}

static void assert_defaults(const cfg_scenario *s) {
  assert_int_equal(s->cluster.nodes, 0);
  assert_int_equal(s->cluster.gpus_per_node, 8);
  assert_int_equal(s->cluster.gpu, CFG_GPU_H100);
  assert_true(s->cluster.gpu_flops == 989e12);
  assert_int_equal(s->cluster.gpu_memory, 80 * GiB);
  assert_int_equal(s->cluster.hbm_bandwidth, 3350 * GBPS * 8);
  assert_int_equal(s->cluster.scale_up.bandwidth, 450 * GBPS * 8);
  assert_int_equal(s->cluster.scale_up.latency, 500 * NS);
  assert_int_equal(s->cluster.scale_up.start, 3000 * NS);
  assert_int_equal(s->cluster.nic.bandwidth, 400 * GBPS);
  assert_int_equal(s->cluster.nic.per_node, 8);
  assert_int_equal(s->cluster.nic.latency, 200 * NS);
  assert_int_equal(s->cluster.nic.start, 800 * NS);
  assert_int_equal(s->cluster.nic.finish, 500 * NS);
  assert_int_equal(s->cluster.pcie.bandwidth, 64 * GBPS * 8);
  assert_int_equal(s->cluster.pcie.latency, 200 * NS);
  assert_int_equal(s->fabric.topology, CFG_TOPO_FAT_TREE);
  assert_int_equal(s->fabric.tiers, 2);
  assert_int_equal(s->fabric.planes, 1);
  assert_int_equal(s->fabric.switch_radix, 64);
  assert_true(s->fabric.oversubscription == 1.0);
  assert_int_equal(s->fabric.link_bandwidth, 400 * GBPS);
  assert_int_equal(s->fabric.link_latency, 200 * NS);
  assert_int_equal(s->fabric.switch_latency, 130 * NS);
  assert_int_equal(s->fabric.transport, CFG_TRANSPORT_INFINIBAND);
  assert_int_equal(s->fabric.routing, CFG_ROUTING_STATIC); /* InfiniBand: subnet-manager routing */
  assert_int_equal(s->fabric.mtu, 4096);
  assert_int_equal(s->fabric.ecmp.hash_seed, 0);
  assert_true(s->cost.switch_usd == 25000);
  assert_true(s->cost.transceiver_usd == 1000);
  assert_true(s->cost.nic_usd == 1500);
  assert_true(s->cost.cable_usd == 100);
  assert_true(s->cost.optical_endpoint_links);
  assert_int_equal(s->workload.kind, CFG_WORKLOAD_COLLECTIVE);
  assert_int_equal(s->workload.collective.op, CFG_COLL_ALLREDUCE);
  assert_int_equal(s->workload.collective.algorithm, CFG_ALGO_AUTO);
  assert_int_equal(s->workload.collective.protocol, CFG_PROTO_AUTO);
  assert_int_equal(s->workload.collective.size, GiB);
  assert_int_equal(s->workload.collective.ranks, 0);
  assert_int_equal(s->simulation.seed, 1);
  assert_int_equal(s->simulation.fidelity, CFG_FIDELITY_ANALYTIC);
  assert_string_equal(s->output.dir, "fabsim-out");
  assert_false(s->output.flows); /* output.flows: off, at most 100,000 rows when on */
  assert_int_equal(s->output.max_flows, 100000);
}

static void test_empty_is_defaults(void **state) {
  static const char *const inputs[] = {"", "# nothing\n\n   # but comments\n", "---\n", "~\n",
                                       "cluster:\ncost:\n"};
  cfg_scenario s;
  cfg_doc *doc;
  sim_error err = {0};
  (void)state;
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    doc = load(&s, inputs[i], NULL, 0);
    assert_defaults(&s);
    cfg_loc l = cfg_where(doc, "cluster.nodes");
    assert_string_equal(l.file, "default");
    assert_int_equal(l.line, 0);
    assert_int_equal(l.col, 0);
    cfg_free(&s, doc);
  }
  assert_int_equal(cfg_load(&s, &doc, NULL, NULL, 0, &err), SIM_OK); /* no file at all */
  assert_defaults(&s);
  cfg_free(&s, doc);
}

static void test_presets_by_gpu(void **state) {
  static const struct {
    const char *gpu;
    double flops;
    uint64_t mem, hbm, scale_up, nic, pcie;
  } want[] = {
      {"cluster.gpu=H100", 989e12, 80 * GiB, 26800 * GBPS, 3600 * GBPS, 400 * GBPS, 512 * GBPS},
      {"cluster.gpu=H800", 989e12, 80 * GiB, 26800 * GBPS, 1600 * GBPS, 400 * GBPS, 512 * GBPS},
      {"cluster.gpu=A100", 312e12, 80 * GiB, 16312 * GBPS, 2400 * GBPS, 200 * GBPS, 256 * GBPS},
      {"cluster.gpu=B200", 2250e12, 192000000000ULL, 64000 * GBPS, 7200 * GBPS, 400 * GBPS,
       512 * GBPS},
      {"cluster.gpu=H200", 989e12, 141000000000ULL, 38400 * GBPS, 3600 * GBPS, 400 * GBPS,
       512 * GBPS},
      {"cluster.gpu=MI300X", 1307.4e12, 192000000000ULL, 42400 * GBPS, 3584 * GBPS, 400 * GBPS,
       512 * GBPS},
  };
  (void)state;
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    cfg_scenario s;
    cfg_doc *doc = load(&s, NULL, &want[i].gpu, 1);
    assert_int_equal(s.cluster.gpu, (int)i);
    assert_true(s.cluster.gpu_flops == want[i].flops);
    assert_int_equal(s.cluster.gpu_memory, want[i].mem);
    assert_int_equal(s.cluster.hbm_bandwidth, want[i].hbm);
    assert_int_equal(s.cluster.scale_up.bandwidth, want[i].scale_up);
    assert_int_equal(s.cluster.nic.bandwidth, want[i].nic);
    assert_int_equal(s.cluster.pcie.bandwidth, want[i].pcie);
    assert_int_equal(s.cluster.scale_up.latency, 500 * NS);
    cfg_free(&s, doc);
  }
}

static void test_explicit_beats_preset(void **state) {
  const char *yaml =
      "cluster:\n  gpu: A100\n  nic:\n    bandwidth: 400Gbps\n"
      "  gpu_flops: 1e15\n";
  const char *sets[] = {"cluster.gpu_memory=40GiB"};
  cfg_scenario s;
  cfg_doc *doc;
  (void)state;
  doc = load(&s, yaml, sets, 1);
  assert_int_equal(s.cluster.nic.bandwidth, 400 * GBPS); /* A100 preset would be 200 */
  assert_true(s.cluster.gpu_flops == 1e15);
  assert_int_equal(s.cluster.gpu_memory, 40 * GiB);
  assert_int_equal(s.cluster.hbm_bandwidth, 16312 * GBPS); /* unset: still the A100 preset */
  cfg_free(&s, doc);

  /* the GPU chosen by --set drives presets of keys the file did not set */
  const char *b200[] = {"cluster.gpu=B200"};
  doc = load(&s, "cluster.gpu: A100\ncluster.pcie.bandwidth: 16GB/s\n", b200, 1);
  assert_int_equal(s.cluster.hbm_bandwidth, 64000 * GBPS);
  assert_int_equal(s.cluster.pcie.bandwidth, 128 * GBPS);
  cfg_free(&s, doc);
}

static void test_transport_preset(void **state) {
  const char *roce[] = {"fabric.transport=roce"};
  const char *eth[] = {"fabric.transport=ethernet"};
  const char *pinned[] = {"fabric.transport=roce", "fabric.switch_latency=300ns"};
  const char *ib_ecmp[] = {"fabric.routing=ecmp"};
  cfg_scenario s;
  cfg_doc *doc;
  (void)state;
  doc = load(&s, NULL, roce, 1);
  assert_int_equal(s.fabric.switch_latency, 600 * NS);
  assert_int_equal(s.fabric.routing, CFG_ROUTING_ECMP); /* switches hash the 5-tuple */
  cfg_free(&s, doc);
  doc = load(&s, NULL, eth, 1);
  assert_int_equal(s.fabric.switch_latency, 600 * NS);
  assert_int_equal(s.fabric.routing, CFG_ROUTING_ECMP);
  cfg_free(&s, doc);
  doc = load(&s, NULL, pinned, 2);
  assert_int_equal(s.fabric.switch_latency, 300 * NS);
  cfg_free(&s, doc);
  doc = load(&s, NULL, ib_ecmp, 1); /* a routing set by hand stays */
  assert_int_equal(s.fabric.transport, CFG_TRANSPORT_INFINIBAND);
  assert_int_equal(s.fabric.routing, CFG_ROUTING_ECMP);
  cfg_free(&s, doc);
}

/* Sum of the reliability.rate.* (per 1,000 node-days). */
static double rate_total(const cfg_scenario *s) {
  const __typeof__(s->reliability.rate) *r = &s->reliability.rate;
  return r->faulty_gpu + r->hbm + r->software + r->network + r->host + r->sram + r->gsp + r->nic +
         r->nccl + r->sdc + r->thermal + r->other_hardware + r->dependency;
}

/* reliability.rates fills the reliability.rate.* a scenario did not set: the
 * default is Llama 3's Table 5 as before; rsc-1 and rsc-2 sum to the research
 * clusters' r_f (6.50 and 2.34 per 1,000 node-days, Kokolis et al.) in Table
 * 5's proportions (each rate written to 6 significant digits). A rate set by
 * hand stays, and the preset chosen by --set drives the others. */
static void test_reliability_rates_preset(void **state) {
  static const struct {
    const char *set;
    double total;
  } want[] = {{"reliability.rates=llama3-16k", 419 / 110.592},
              {"reliability.rates=rsc-1", 6.50},
              {"reliability.rates=rsc-2", 2.34}};
  cfg_scenario s;
  cfg_doc *doc;
  (void)state;
  doc = load(&s, NULL, NULL, 0);
  assert_int_equal(s.reliability.rates, CFG_RATES_LLAMA3_16K);
  assert_true(s.reliability.rate.faulty_gpu == 1.33825 && s.reliability.rate.hbm == 0.651042);
  cfg_free(&s, doc);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    doc = load(&s, NULL, &want[i].set, 1);
    assert_int_equal(s.reliability.rates, (int)i);
    double t = rate_total(&s);
    assert_true(fabs(t - want[i].total) < 1e-6 * want[i].total);
    assert_true(fabs(s.reliability.rate.faulty_gpu / t - 148.0 / 419) < 1e-5);
    assert_true(fabs(s.reliability.rate.network / t - 35.0 / 419) < 1e-5);
    assert_true(fabs(s.reliability.rate.dependency / t - 2.0 / 419) < 1e-5);
    cfg_free(&s, doc);
  }
  assert_string_equal(cfg_rel_rates_name(CFG_RATES_RSC_2), "rsc-2");
  /* hand-set rates stay (a zero too); the preset fills the rest */
  const char *yaml = "reliability:\n  rates: rsc-2\n  rate:\n    network: 5\n    software: 0\n";
  doc = load(&s, yaml, NULL, 0);
  assert_true(s.reliability.rate.network == 5 && s.reliability.rate.software == 0);
  assert_true(s.reliability.rate.hbm == 0.4021); /* rsc-2 */
  cfg_free(&s, doc);
  const char *rsc1[] = {"reliability.rates=rsc-1"};
  doc = load(&s, yaml, rsc1, 1);
  assert_true(s.reliability.rate.network == 5 && s.reliability.rate.software == 0);
  assert_true(s.reliability.rate.hbm == 1.11695); /* rsc-1, chosen after the file */
  cfg_free(&s, doc);
}

static void test_derived_rules(void **state) {
  cfg_scenario s;
  cfg_doc *doc;
  (void)state;
  doc = load(&s, "cluster.gpus_per_node: 4\n", NULL, 0);
  assert_int_equal(s.cluster.nic.per_node, 4);
  assert_int_equal(s.fabric.planes, 1);
  cfg_free(&s, doc);

  doc = load(&s, "fabric.topology: multi-plane\n", NULL, 0);
  assert_int_equal(s.fabric.planes, 8); /* one plane per NIC */
  cfg_free(&s, doc);

  doc = load(&s, "fabric.topology: multi-plane\ncluster.nic.per_node: 4\n", NULL, 0);
  assert_int_equal(s.fabric.planes, 4);
  cfg_free(&s, doc);

  doc = load(&s, "fabric: {topology: multi-plane, planes: 2}\ncluster.nic.per_node: 16\n", NULL, 0);
  assert_int_equal(s.fabric.planes, 2);
  assert_int_equal(s.cluster.nic.per_node, 16);
  cfg_free(&s, doc);

  doc = load(&s, "workload.collective.op: alltoall\n", NULL, 0);
  assert_int_equal(s.workload.collective.algorithm, CFG_ALGO_AUTO); /* the tuner's */
  cfg_free(&s, doc);

  doc = load(&s, "workload.collective: {op: broadcast, algorithm: ring}\n", NULL, 0);
  assert_int_equal(s.workload.collective.op, CFG_COLL_BROADCAST);
  assert_int_equal(s.workload.collective.algorithm, CFG_ALGO_RING);
  cfg_free(&s, doc);

  doc = load(&s, "fabric.planes: 1\nfabric.topology: rail-optimized\n", NULL, 0);
  assert_int_equal(s.fabric.topology, CFG_TOPO_RAIL_OPTIMIZED);
  cfg_free(&s, doc);
}

static void test_set_without_file(void **state) {
  const char *sets[] = {"cluster.nodes=16", "  fabric.transport = roce", "output.dir=\"a b\""};
  cfg_scenario s;
  cfg_doc *doc = NULL;
  sim_error err = {0};
  cfg_loc l;
  (void)state;
  assert_int_equal(cfg_load(&s, &doc, NULL, sets, 3, &err), SIM_OK);
  assert_int_equal(s.cluster.nodes, 16);
  assert_int_equal(s.fabric.transport, CFG_TRANSPORT_ROCE);
  assert_string_equal(s.output.dir, "a b");
  l = cfg_where(doc, "fabric.transport");
  assert_string_equal(l.file, "--set");
  assert_int_equal(l.line, 2);
  assert_int_equal(l.col, 22); /* the 'r' of roce */
  l = cfg_where(doc, "cluster.nodes");
  assert_int_equal(l.line, 1);
  assert_int_equal(l.col, 15);
  cfg_free(&s, doc);
}

static void test_set_overrides_file(void **state) {
  const char *sets[] = {"cluster.nodes=8", "cluster.nodes=16"};
  cfg_scenario s;
  cfg_doc *doc;
  cfg_loc l;
  (void)state;
  doc = load(&s, "cluster:\n  nodes: 4\n  gpu: B200\n", sets, 2);
  assert_int_equal(s.cluster.nodes, 16); /* the last --set wins */
  assert_int_equal(s.cluster.gpu, CFG_GPU_B200);
  l = cfg_where(doc, "cluster.nodes");
  assert_string_equal(l.file, "--set");
  assert_int_equal(l.line, 2);
  assert_int_equal(l.col, 15);
  l = cfg_where(doc, "cluster.gpu");
  assert_string_equal(l.file, "s.yaml");
  assert_int_equal(l.line, 3);
  assert_int_equal(l.col, 8);
  cfg_free(&s, doc);
}

static void test_nested_and_dotted_agree(void **state) {
  const char *nested =
      "cluster:\n"
      "  nodes: 4\n"
      "  nic:\n"
      "    bandwidth: 800Gbps\n"
      "    per_node: 4\n"
      "fabric:\n"
      "  topology: multi-plane\n"
      "  ecmp:\n"
      "    hash_seed: 7\n"
      "workload:\n"
      "  collective:\n"
      "    op: allgather\n"
      "    size: 64MiB\n";
  const char *dotted =
      "cluster.nodes: 4\n"
      "cluster.nic.bandwidth: 800Gbps\n"
      "cluster.nic.per_node: 4\n"
      "fabric.topology: multi-plane\n"
      "fabric.ecmp.hash_seed: 7\n"
      "workload.collective.op: allgather\n"
      "workload.collective.size: 64MiB\n";
  const char *mixed =
      "cluster: {nodes: 4, nic.bandwidth: 800Gbps}\n"
      "cluster.nic: {per_node: 4}\n"
      "fabric: {topology: multi-plane, ecmp.hash_seed: 7}\n"
      "workload.collective: {op: allgather, size: 64MiB}\n";
  const char *sets[] = {"cluster.nodes=4",
                        "cluster.nic.bandwidth=800Gbps",
                        "cluster.nic.per_node=4",
                        "fabric.topology=multi-plane",
                        "fabric.ecmp.hash_seed=7",
                        "workload.collective.op=allgather",
                        "workload.collective.size=64MiB"};
  cfg_scenario a, b, c, d;
  cfg_doc *da, *db, *dc, *dd;
  (void)state;
  da = load(&a, nested, NULL, 0);
  db = load(&b, dotted, NULL, 0);
  dc = load(&c, mixed, NULL, 0);
  dd = load(&d, NULL, sets, 7);
  assert_int_equal(a.cluster.nic.bandwidth, 800 * GBPS);
  assert_int_equal(a.fabric.planes, 4);
  assert_int_equal(a.fabric.ecmp.hash_seed, 7);
  assert_int_equal(a.workload.collective.size, 64ULL << 20);
  assert_same(&a, &b);
  assert_same(&a, &c);
  assert_same(&a, &d);
  cfg_free(&a, da);
  cfg_free(&b, db);
  cfg_free(&c, dc);
  cfg_free(&d, dd);
}

static void test_yaml_forms(void **state) {
  const char *yaml =
      "cluster:\n"
      "  nic: {bandwidth: &fast \"800 Gbps\"}\n"
      "  nodes: !!str 12\n"
      "fabric:\n"
      "  link_bandwidth: *fast\n"
      "  oversubscription: '1.5'\n"
      "cost.optical_endpoint_links: False\n"
      "output.dir: |-\n"
      "  multi word dir\n"
      "---\n";
  cfg_scenario s;
  cfg_doc *doc;
  cfg_loc l;
  (void)state;
  doc = load(&s, yaml, NULL, 0);
  assert_int_equal(s.cluster.nic.bandwidth, 800 * GBPS);
  assert_int_equal(s.fabric.link_bandwidth, 800 * GBPS);
  assert_int_equal(s.cluster.nodes, 12);
  assert_true(s.fabric.oversubscription == 1.5);
  assert_false(s.cost.optical_endpoint_links);
  assert_string_equal(s.output.dir, "multi word dir");
  l = cfg_where(doc, "fabric.link_bandwidth"); /* through an alias: where the text is */
  assert_int_equal(l.line, 2);
  assert_int_equal(l.col, 20);
  cfg_free(&s, doc);
}

static void test_fail_at(void **state) {
  cfg_scenario s;
  cfg_doc *doc;
  sim_error err = {0};
  const char *sets[] = {"fabric.tiers=3"};
  (void)state;
  doc = load(&s, "cluster:\n  nodes: 4096\n", sets, 1);
  assert_int_equal(cfg_fail_at(doc, "cluster.nodes", &err, "%u nodes do not fit %d", 4096u, 7),
                   SIM_ECONFIG);
  assert_int_equal(err.code, SIM_ECONFIG);
  assert_string_equal(err.msg, "s.yaml:2:10: cluster.nodes: 4096 nodes do not fit 7");
  cfg_fail_at(doc, "fabric.tiers", &err, "too few");
  assert_string_equal(err.msg, "--set:1:14: fabric.tiers: too few");
  cfg_fail_at(doc, "fabric.switch_radix", &err, "radix %d", 64);
  assert_string_equal(err.msg, "scenario: fabric.switch_radix: radix 64");
  cfg_fail_at(NULL, "cluster.nodes", &err, "no location");
  assert_string_equal(err.msg, "cluster.nodes: no location");
  cfg_fail_at(doc, "not.a.key", &err, "x");
  assert_string_equal(err.msg, "scenario: not.a.key: x");
  cfg_free(&s, doc);
}

static void round_trip(const char *yaml, const char *const *sets, int nsets) {
  cfg_scenario a, b;
  cfg_doc *da, *db;
  char *text, *again;
  da = load(&a, yaml, sets, nsets);
  text = cfg_dump(&a);
  db = load(&b, text, NULL, 0);
  if (first_difference(&a, &b)) fail_msg("dump does not reload:\n%s", text);
  again = cfg_dump(&b);
  assert_string_equal(text, again); /* canonical: a fixed point */
  sim_free(text);
  sim_free(again);
  cfg_free(&a, da);
  cfg_free(&b, db);
}

static void test_dump_round_trip(void **state) {
  const char *b200[] = {"cluster.gpu=B200", "fabric.transport=ethernet", "fabric.mtu=9000"};
  const char *odd[] = {"fabric.oversubscription=1.37",
                       "cluster.gpu_flops=1.234567890123e15",
                       "fabric.ecmp.hash_seed=18446744073709551615",
                       "simulation.seed=0",
                       "cluster.nic.bandwidth=1234567bps",
                       "fabric.link_latency=1ps",
                       "workload.collective.size=12345B",
                       "cost.switch_usd=0.1",
                       "cluster.hbm_bandwidth=12bps",
                       "fabric.switch_latency=0"};
  (void)state;
  round_trip("", NULL, 0);
  round_trip("cluster.gpu: A100\n", NULL, 0);
  round_trip(NULL, b200, 3);
  round_trip(NULL, odd, 10);
  /* 64 nodes: the full build's all-to-all (524,288 GPUs) needs about 28,000 GiB to run */
  round_trip(
      "fabric: {topology: multi-plane, tiers: 3}\ncluster.nodes: 64\n"
      "workload.collective.op: alltoall\n",
      NULL, 0);
  round_trip("output.flows: true\noutput.max_flows: 7\n", NULL, 0); /* quiet keys, set */
  round_trip("output.dir: \"quote \\\" back \\\\ \xc3\xbc # not a comment\"\n", NULL, 0);
  /* (control characters are refused at load: tests/config/test_errors.c) */
  round_trip("output.dir: \"\\u00a0 \\ufeff \\U0001F600 \\uffff end\"\n", NULL, 0);
  round_trip(
      "cost.nic_usd: -0\ncost.cable_usd: 4.9e-324\n"
      "cluster.gpu_flops: 9.876543210987654e17\n", /* number keys: at most 1e18 */
      NULL, 0);
}

/* Every shipped scenario (every .yaml under examples/): its resolved dump loads
 * again to the same scenario, and dumps to the same text (issue 27, defect
 * 8: a job's traffic_class was written twice, and the dump of
 * examples/shared/priority-classes.yaml did not load). */
static size_t round_trip_tree(const char *dir) {
  size_t n = 0;
  DIR *d = opendir(dir);
  if (!d) fail_msg("cannot read %s", dir);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char path[4096];
    struct stat st;
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      n += round_trip_tree(path);
      continue;
    }
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
    cfg_scenario a, b;
    cfg_doc *da = NULL, *db = NULL;
    sim_error err = {0};
    if (cfg_load(&a, &da, path, NULL, 0, &err) != SIM_OK) fail_msg("%s", err.msg);
    char *text = cfg_dump(&a);
    if (cfg_load_buffer(&b, &db, path, text, strlen(text), NULL, 0, &err) != SIM_OK)
      fail_msg("the dump of %s does not load: %s", path, err.msg);
    const char *diff = first_difference(&a, &b);
    if (diff) fail_msg("the dump of %s loads to another scenario: %s differs", path, diff);
    char *again = cfg_dump(&b);
    if (strcmp(text, again) != 0) fail_msg("the dump of %s is not a fixed point", path);
    sim_free(text);
    sim_free(again);
    cfg_free(&a, da);
    cfg_free(&b, db);
    n++;
  }
  closedir(d);
  return n;
}

static void test_dump_round_trip_examples(void **state) {
  char dir[4096];
  const char *src = getenv("FABSIM_SOURCE_DIR");
  (void)state;
  snprintf(dir, sizeof dir, "%s/examples", src ? src : "..");
  assert_true(round_trip_tree(dir) >= 20); /* the examples are there */
}

static void test_dump_text(void **state) {
  cfg_scenario s;
  cfg_doc *doc;
  char *text;
  (void)state;
  doc = load(&s, NULL, NULL, 0);
  text = cfg_dump(&s);
  assert_non_null(strstr(text, "\ncluster:\n  nodes: 0\n  gpus_per_node: 8\n  gpu: H100\n"));
  assert_non_null(strstr(text, "\n  nic:\n    bandwidth: 400Gbps\n    per_node: 8\n"));
  assert_non_null(strstr(text, "\n  scale_up:\n    bandwidth: 450GB/s\n    latency: 500ns\n"));
  assert_non_null(strstr(text, "\n  ecmp:\n    hash_seed: 0\n    polarized: false\ncost:\n"));
  assert_non_null(strstr(text, "\n    size: 1GiB\n"));
  assert_non_null(strstr(text, "\noutput:\n  dir: \"fabsim-out\"\n"));
  sim_free(text);
  cfg_free(&s, doc);
}

static void test_load_file(void **state) {
  char path[] = "/tmp/fabsim-cfg-XXXXXX";
  const char *yaml = "cluster:\n  nodes: 2\n  nodez: 3\n";
  cfg_scenario s;
  cfg_doc *doc = (cfg_doc *)1;
  sim_error err = {0};
  int fd = mkstemp(path);
  char want[256];
  (void)state;
  assert_true(fd >= 0);
  assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
  close(fd);
  assert_int_equal(cfg_load(&s, &doc, path, NULL, 0, &err), SIM_ECONFIG);
  assert_null(doc);
  snprintf(want, sizeof want, "%s:3:3: cluster.nodez: unknown key; did you mean 'cluster.nodes'?",
           path);
  assert_string_equal(err.msg, want);
  const char *fix[] = {"cluster.nodes=5"};
  FILE *f = fopen(path, "w");
  fputs("cluster:\n  nodes: 2\n", f);
  fclose(f);
  assert_int_equal(cfg_load(&s, &doc, path, fix, 1, &err), SIM_OK);
  assert_int_equal(s.cluster.nodes, 5);
  cfg_free(&s, doc);
  unlink(path);

  assert_int_equal(cfg_load(&s, &doc, path, NULL, 0, &err), SIM_EIO);
  assert_int_equal(err.code, SIM_EIO);
  snprintf(want, sizeof want, "%s: cannot read: No such file or directory", path);
  assert_string_equal(err.msg, want);
  assert_int_equal(cfg_load(&s, &doc, "/", NULL, 0, &err), SIM_EIO);
  assert_string_equal(err.msg, "/: is a folder; a scenario is a regular file");
}

static void test_two_scenarios_at_once(void **state) {
  const char *x[] = {"cluster.gpu=A100"};
  cfg_scenario a, b;
  cfg_doc *da, *db;
  (void)state;
  da = load(&a, "cluster.nodes: 3\n", NULL, 0);
  db = load(&b, "cluster.nodes: 5\n", x, 1);
  assert_int_equal(cfg_where(da, "cluster.nodes").line, 1);
  cfg_free(&a, da);
  assert_int_equal(b.cluster.nodes, 5);
  assert_int_equal(b.cluster.nic.bandwidth, 200 * GBPS);
  assert_string_equal(cfg_where(db, "cluster.gpu").file, "--set");
  cfg_free(&b, db);
  cfg_free(NULL, NULL);
}

static void test_enum_names(void **state) {
  (void)state;
  assert_string_equal(cfg_topology_name(CFG_TOPO_FAT_TREE), "fat-tree");
  assert_string_equal(cfg_topology_name(CFG_TOPO_MULTI_PLANE), "multi-plane");
  assert_string_equal(cfg_topology_name(CFG_TOPO_RAIL_OPTIMIZED), "rail-optimized");
  assert_string_equal(cfg_transport_name(CFG_TRANSPORT_INFINIBAND), "infiniband");
  assert_string_equal(cfg_transport_name(CFG_TRANSPORT_ROCE), "roce");
  assert_string_equal(cfg_transport_name(CFG_TRANSPORT_ETHERNET), "ethernet");
  assert_string_equal(cfg_routing_name(CFG_ROUTING_ECMP), "ecmp");
  assert_string_equal(cfg_routing_name(CFG_ROUTING_ADAPTIVE), "adaptive");
  assert_string_equal(cfg_routing_name(CFG_ROUTING_SPRAY), "spray");
  assert_string_equal(cfg_routing_name(CFG_ROUTING_STATIC), "static");
  assert_string_equal(cfg_fidelity_name(CFG_FIDELITY_ANALYTIC), "analytic");
  assert_string_equal(cfg_fidelity_name(CFG_FIDELITY_FLOW), "flow");
  assert_string_equal(cfg_fidelity_name(CFG_FIDELITY_PACKET), "packet");
  assert_string_equal(cfg_gpu_name(CFG_GPU_H100), "H100");
  assert_string_equal(cfg_gpu_name(CFG_GPU_H800), "H800");
  assert_string_equal(cfg_gpu_name(CFG_GPU_A100), "A100");
  assert_string_equal(cfg_gpu_name(CFG_GPU_B200), "B200");
  assert_string_equal(cfg_coll_op_name(CFG_COLL_ALLREDUCE), "allreduce");
  assert_string_equal(cfg_coll_op_name(CFG_COLL_REDUCESCATTER), "reducescatter");
  assert_string_equal(cfg_coll_op_name(CFG_COLL_ALLGATHER), "allgather");
  assert_string_equal(cfg_coll_op_name(CFG_COLL_BROADCAST), "broadcast");
  assert_string_equal(cfg_coll_op_name(CFG_COLL_ALLTOALL), "alltoall");
  assert_string_equal(cfg_coll_algorithm_name(CFG_ALGO_RING), "ring");
  assert_string_equal(cfg_coll_algorithm_name(CFG_ALGO_PAIRWISE), "pairwise");
  assert_string_equal(cfg_gpu_name((cfg_gpu)42), "(invalid)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_is_defaults),
      cmocka_unit_test(test_presets_by_gpu),
      cmocka_unit_test(test_explicit_beats_preset),
      cmocka_unit_test(test_transport_preset),
      cmocka_unit_test(test_reliability_rates_preset),
      cmocka_unit_test(test_derived_rules),
      cmocka_unit_test(test_set_without_file),
      cmocka_unit_test(test_set_overrides_file),
      cmocka_unit_test(test_nested_and_dotted_agree),
      cmocka_unit_test(test_yaml_forms),
      cmocka_unit_test(test_fail_at),
      cmocka_unit_test(test_dump_round_trip),
      cmocka_unit_test(test_dump_round_trip_examples),
      cmocka_unit_test(test_dump_text),
      cmocka_unit_test(test_load_file),
      cmocka_unit_test(test_two_scenarios_at_once),
      cmocka_unit_test(test_enum_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
