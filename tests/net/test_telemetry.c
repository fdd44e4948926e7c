/* Packet telemetry (the per-port telemetry capability, fabsim/backend.h,
 * replayed by tel_port_samples_replay): an incast's real queue depth and PFC pause
 * time reach the tel's port series, on the congested port in full when it
 * is watched; sampling does not change the run (same end, same counters);
 * the rows stay bounded on a long run. */
#include "fabsim/tel_tap.h"
#include "net/net_test.h"

/* 12 senders on other leaves -> host 0, 1 MB each, 2 MB switch buffers: the
 * spine -> leaf0 ports fill and leaf0 PAUSEs them (switch ports, so in the
 * series; pauses of NIC ports are not switch ports). */
static const char *const incast[] = {"cluster.nodes=16",       "cluster.gpus_per_node=1",
                                     "cluster.nic.per_node=1", "fabric.switch_radix=8",
                                     "fabric.transport=roce",  "fabric.switch.buffer=2MB"};

typedef struct tel_run {
  simtime_ps end;
  be_stats st;
  tel *tel;
  tel_portmap m;
  uint32_t watched[5]; /* leaf0-nic0 (the receiver's port), spine0..3-leaf0 (PAUSEd by leaf0) */
} tel_run;

static void done(sim_ctx *sim, void *ctx) { ((tel_run *)ctx)->end = sim_now(sim); }

static void run(const fixture *f, const be_xfer *x, size_t n, bool sample, tel_run *r) {
  memset(r, 0, sizeof *r);
  r->end = SIM_TIME_MAX;
  sim_ctx *sim = sim_create(f->cfg.simulation.seed);
  be_backend *b = be_packet_create(sim, f->t, &f->cfg);
  tel_portmap_build(&r->m, f->t);
  assert_int_equal(tel_port_find(f->t, &r->m, "leaf0-nic0", &r->watched[0]), SIM_OK);
  for (uint32_t k = 0; k < 4; k++) {
    char name[32];
    snprintf(name, sizeof name, "spine%u-leaf0", k);
    assert_int_equal(tel_port_find(f->t, &r->m, name, &r->watched[1 + k]), SIM_OK);
  }
  if (sample) assert_int_equal(tel_port_sampling_start(b, &r->m, r->watched, 5), SIM_OK);
  be_submit_phase(b, x, n, 1, done, r);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(r->end != SIM_TIME_MAX);
  assert_int_equal(sim_now(sim), r->end); /* no sample event outlives the traffic */
  b->ops->stats(b, &r->st);
  if (sample) {
    tel_config tc = {.interval = r->end / 100 ? r->end / 100 : 1,
                     .gpus = topo_gpu_count(f->t),
                     .nics = topo_nic_count(f->t),
                     .ports = r->m.nports,
                     .nic_bps = f->cfg.cluster.nic.bandwidth,
                     .port_bps = r->m.bps,
                     .watch_ports = r->watched,
                     .nwatch_ports = 5};
    sim_error err = {0};
    assert_int_equal(tel_create(&r->tel, &tc, &err), SIM_OK);
    tel_port_samples_replay(b, r->tel, r->end);
    tel_finish(r->tel, r->end);
  }
  be_destroy(b);
  sim_destroy(sim);
}

static void test_incast_series(void **state) {
  (void)state;
  fixture f;
  fx_load(&f, incast, 6);
  be_xfer x[12];
  for (uint32_t i = 0; i < 12; i++)
    x[i] = (be_xfer){.src_gpu = 4 + i, .dst_gpu = 0, .bytes = 1000000, .flow_hash = i + 1};
  tel_run plain, sampled;
  run(&f, x, 12, false, &plain);
  run(&f, x, 12, true, &sampled);
  /* sampling reads counters only */
  assert_int_equal(plain.end, sampled.end);
  assert_memory_equal(&plain.st, &sampled.st, sizeof plain.st);
  assert_true(sampled.st.pfc_pauses > 0);
  tel *t = sampled.tel;
  unsigned obs = tel_observed(t);
  assert_true(obs & TEL_OBS_PORT_QUEUE);
  assert_true(obs & TEL_OBS_PORT_PFC);
  assert_true(obs & TEL_OBS_PORT_UTIL);
  double qmax = 0, paused = 0, wq = 0, wutil = 0, spine_paused = 0, spine_q = 0;
  for (size_t i = 0; i < tel_rows(t); i++) {
    const tel_port_row *p = tel_port_row_at(t, i);
    if (p->queue_max_bytes > qmax) qmax = p->queue_max_bytes;
    paused += p->pfc_paused_s;
    const tel_watch_row *w = tel_watch_row_at(t, i, 0);
    if (w->queue_max_bytes > wq) wq = w->queue_max_bytes;
    wutil += w->util * sim_ps_to_s(tel_row_length(t, i));
    for (uint32_t k = 1; k < 5; k++) {
      spine_paused += tel_watch_row_at(t, i, k)->pfc_paused_s;
      if (tel_watch_row_at(t, i, k)->queue_max_bytes > spine_q)
        spine_q = tel_watch_row_at(t, i, k)->queue_max_bytes;
    }
  }
  tel_totals tot;
  tel_totals_get(t, &tot);
  printf(
      "  incast: %zu rows, deepest queue %.0f B (run %llu B), paused %.1f us in the series "
      "(all ports incl. NICs %.1f us), leaf0-nic0 deepest %.0f B, busy %.1f of %.1f us; "
      "spine-leaf0 ports paused %.1f us, deepest %.0f B\n",
      tel_rows(t), qmax, (unsigned long long)sampled.st.max_queue_bytes, paused * 1e6,
      sim_ps_to_s(sampled.st.pfc_paused) * 1e6, wq, wutil * 1e6, sim_ps_to_s(sampled.end) * 1e6,
      spine_paused * 1e6, spine_q);
  assert_true(qmax > 0);
  assert_true(qmax <= (double)sampled.st.max_queue_bytes);
  assert_true(paused > 0);
  assert_true(paused <= sim_ps_to_s(sampled.st.pfc_paused) * 1.0001);
  assert_true(wq > 0);           /* the congested port, in full */
  assert_true(spine_paused > 0); /* the ports it PAUSEs, in full */
  assert_true(spine_paused <= paused * 1.0001);
  assert_true(wutil > 0.8 * sim_ps_to_s(sampled.end)); /* leaf0-nic0 busy most of the run */
  assert_true(tot.pfc_paused > 0);
  tel_destroy(t);
  tel_portmap_free(&plain.m);
  tel_portmap_free(&sampled.m);
  fx_unload(&f);
}

/* Phases far apart (idle fabric in between): rows halve instead of growing,
 * and the idle time schedules nothing. */
static int phases_left;
static const be_xfer *next_x;
static void again(sim_ctx *sim, void *ctx) {
  be_backend *b = ctx;
  (void)sim;
  if (--phases_left > 0) be_submit_phase(b, next_x, 1, 1, again, b);
}
static void start_later(sim_ctx *sim, void *obj, uint64_t arg) {
  (void)sim;
  (void)arg;
  be_submit_phase(obj, next_x, 1, 1, again, obj);
}

static void test_long_run_bounded(void **state) {
  (void)state;
  fixture f;
  fx_load(&f, incast, 6);
  be_xfer x = {.src_gpu = 4, .dst_gpu = 0, .bytes = 100000, .flow_hash = 1};
  next_x = &x;
  phases_left = 3;
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_packet_create(sim, f.t, &f.cfg);
  tel_portmap m;
  tel_portmap_build(&m, f.t);
  assert_int_equal(tel_port_sampling_start(b, &m, NULL, 0), SIM_OK);
  be_submit_phase(b, &x, 1, 1, again, b);
  ev_run(sim, SIM_TIME_MAX);
  ev_schedule(sim, 50 * SIM_PS_PER_MS, start_later, b, 0); /* 50 ms later: ~50,000 first rows */
  phases_left = 1;
  ev_run(sim, SIM_TIME_MAX);
  simtime_ps end = sim_now(sim);
  assert_true(end > 50 * SIM_PS_PER_MS);
  tel_config tc = {.interval = end / 500,
                   .gpus = topo_gpu_count(f.t),
                   .nics = topo_nic_count(f.t),
                   .ports = m.nports,
                   .nic_bps = f.cfg.cluster.nic.bandwidth,
                   .port_bps = m.bps};
  tel *t;
  sim_error err = {0};
  assert_int_equal(tel_create(&t, &tc, &err), SIM_OK);
  tel_port_samples_replay(b, t, end);
  tel_finish(t, end);
  tel_totals tot;
  tel_totals_get(t, &tot);
  /* 4 x 100 kB over leaf0-nic0 (and the spine hops): the port bytes survive the halvings */
  printf("  long run: %.3f ms, port bytes %.0f\n", sim_ps_to_s(end) * 1e3, tot.port_bytes);
  assert_true(tot.port_bytes > 3 * 4 * 100000 * 0.95); /* three switch ports each */
  tel_destroy(t);
  tel_portmap_free(&m);
  be_destroy(b);
  sim_destroy(sim);
  fx_unload(&f);
}

static void test_not_packet(void **state) {
  (void)state;
  fixture f;
  fx_load(&f, incast, 6);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_flow_create(sim, f.t, &f.cfg);
  tel_portmap m;
  tel_portmap_build(&m, f.t);
  assert_int_equal(tel_port_sampling_start(b, &m, NULL, 0), SIM_EINVAL);
  tel_portmap_free(&m);
  be_destroy(b);
  sim_destroy(sim);
  fx_unload(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_incast_series),
                                     cmocka_unit_test(test_long_run_bounded),
                                     cmocka_unit_test(test_not_packet)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
