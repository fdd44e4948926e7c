/* Determinism and cross-fidelity.
 *   Same seed, same scenario: identical stats, bit for bit (RNG streams are
 *     per component: ECN marking, spraying; event order is total).
 *   Ring AllReduce without congestion pathologies (one ring: every channel
 *     carries one flow at a time): the packet fidelity agrees with the flow
 *     fidelity within 5 % (the difference is the per-packet header overhead,
 *     ACK traffic and store-and-forward pipelining). */
#include "fabsim/coll.h"
#include "net/net_test.h"

static void run_once(const fixture *f, be_stats *st, net__ext *ext) {
  be_xfer x[16];
  for (uint32_t i = 0; i < 16; i++)
    x[i] = (be_xfer){.src_gpu = i,
                     .dst_gpu = (i * 5 + 3) % 16,
                     .bytes = 300000 + 1000 * i,
                     .flow_hash = sim_hash_u64(i),
                     .tclass = (uint8_t)(i % 3)};
  x[15].dst_gpu = 0; /* a little incast */
  x[14].dst_gpu = 0;
  fx_result r;
  fx_run(f, x, 16, 2, &r);
  *st = r.st;
  *ext = r.ext;
}

static void test_determinism(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=16",      "cluster.gpus_per_node=1",
                        "fabric.switch_radix=8", "fabric.transport=roce",
                        "fabric.routing=spray",  "fabric.switch.buffer=1MB",
                        "fabric.ecn.kmin=20KB",  "fabric.ecn.kmax=200KB"};
  fixture f;
  fx_load(&f, sets, 8);
  be_stats a, b;
  net__ext ea, eb;
  run_once(&f, &a, &ea);
  run_once(&f, &b, &eb);
  printf("  packets %llu, marks %llu, cnps %llu, pauses %llu, out-of-order %llu, FCT p99 %.2f us\n",
         (unsigned long long)a.packets, (unsigned long long)a.ecn_marks, (unsigned long long)a.cnps,
         (unsigned long long)a.pfc_pauses, (unsigned long long)a.out_of_order,
         sim_ps_to_s(a.fct_p99) * 1e6);
  assert_true(a.ecn_marks > 0 && a.out_of_order > 0);
  assert_memory_equal(&a, &b, sizeof a);
  assert_memory_equal(&ea, &eb, sizeof ea);
  /* another seed sprays differently */
  f.cfg.simulation.seed = 2;
  run_once(&f, &b, &eb);
  assert_true(memcmp(&a, &b, sizeof a) != 0);
  fx_unload(&f);
  /* adaptive routing with flowlets, go-back-N on a lossy fabric */
  const char *sets2[] = {"cluster.nodes=16",         "cluster.gpus_per_node=1",
                         "fabric.switch_radix=8",    "fabric.transport=ethernet",
                         "fabric.routing=adaptive",  "fabric.adaptive.flowlet_gap=2us",
                         "fabric.switch.buffer=1MB", "cluster.nic.recovery=go-back-n"};
  fx_load(&f, sets2, 8);
  run_once(&f, &a, &ea);
  run_once(&f, &b, &eb);
  printf("  lossy adaptive/flowlet: packets %llu, drops %llu, retransmits %llu, timeouts %llu\n",
         (unsigned long long)a.packets, (unsigned long long)a.drops,
         (unsigned long long)a.retransmits, (unsigned long long)ea.timeouts);
  assert_memory_equal(&a, &b, sizeof a);
  assert_memory_equal(&ea, &eb, sizeof ea);
  fx_unload(&f);
}

static simtime_ps ring(const fixture *f, bool packet, uint32_t nranks, uint64_t bytes) {
  uint32_t ranks[64];
  for (uint32_t i = 0; i < nranks; i++) ranks[i] = i;
  coll_spec spec = {.op = CFG_COLL_ALLREDUCE,
                    .algorithm = CFG_ALGO_RING,
                    .bytes = bytes,
                    .ranks = ranks,
                    .nranks = nranks,
                    .channels = 1,
                    .chunk = 1 << 20};
  coll_plan plan;
  sim_error err = {0};
  assert_int_equal(coll_plan_build(&plan, f->t, &spec, &err), SIM_OK);
  sim_ctx *sim = sim_create(1);
  be_backend *b =
      packet ? be_packet_create(sim, f->t, &f->cfg) : be_flow_create(sim, f->t, &f->cfg);
  coll_exec e;
  coll_exec_start(&e, b, &plan, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(e.finished);
  be_stats st;
  b->ops->stats(b, &st);
  assert_int_equal(st.transfers, coll_plan_transfers(&plan));
  be_destroy(b);
  sim_destroy(sim);
  coll_plan_free(&plan);
  return e.end - e.start;
}

static void cross(const char *transport, const char *nodes, const char *gpn, uint32_t nranks) {
  char tr[64];
  snprintf(tr, sizeof tr, "fabric.transport=%s", transport);
  const char *sets[] = {nodes, gpn, "fabric.switch_radix=8", tr};
  fixture f;
  fx_load(&f, sets, 4);
  uint64_t bytes = 64ull << 20;
  simtime_ps p = ring(&f, true, nranks, bytes), fl = ring(&f, false, nranks, bytes);
  double rel = (double)p / (double)fl - 1;
  printf("  %-10s %u ranks (%s, %s): packet %.2f us, flow %.2f us, packet/flow - 1 = %+.2f %%\n",
         transport, nranks, nodes, gpn, sim_ps_to_s(p) * 1e6, sim_ps_to_s(fl) * 1e6, 100 * rel);
  assert_true(fabs(rel) < 0.05);
  fx_unload(&f);
}

static void test_cross_fidelity(void **state) {
  (void)state;
  cross("infiniband", "cluster.nodes=1", "cluster.gpus_per_node=8", 8); /* NVLink */
  cross("infiniband", "cluster.nodes=4", "cluster.gpus_per_node=2", 8); /* NVLink + fabric */
  cross("roce", "cluster.nodes=4", "cluster.gpus_per_node=2", 8);
  cross("roce", "cluster.nodes=8", "cluster.gpus_per_node=1", 8);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_determinism),
      cmocka_unit_test(test_cross_fidelity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
