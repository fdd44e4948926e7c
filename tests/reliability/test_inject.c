/* Faults inside a simulation at the flow fidelity: a link failure in the
 * middle of a ring AllReduce (completes, every byte delivered, later by the
 * stall before routing reconverges, reroute logged); a failure in one plane
 * of a multi-plane fabric leaves the other plane's traffic bit-identical; a
 * node cut off from the fabric fails its transfers with "no route" and the
 * collective still ends; resolution of names with did-you-mean. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fabsim/coll.h"
#include "fabsim/fault.h"
#include "fixture.h"
#include "flow/flow_internal.h"

/* One fault given as scenario text on top of `sets`. */
static void load_with(fixture *f, const char *const *sets, int nsets) { load(f, sets, nsets); }

static void ring(const fixture *f, coll_plan *plan, uint32_t n, uint64_t bytes) {
  uint32_t ranks[64];
  for (uint32_t i = 0; i < n; i++) ranks[i] = i;
  coll_spec spec = {.op = CFG_COLL_ALLREDUCE,
                    .algorithm = CFG_ALGO_RING,
                    .bytes = bytes,
                    .ranks = ranks,
                    .nranks = n,
                    .channels = 1,
                    .chunk = 1 << 20};
  sim_error err = {0};
  assert_int_equal(coll_plan_build(plan, f->t, &spec, &err), SIM_OK);
}

typedef struct run_out {
  simtime_ps dur;
  be_stats st;
  flt_event ev[64];
  size_t nev;
} run_out;

/* Run the plan on a flow (or packet) backend with the scenario's faults. */
static bool explicit_reps; /* flow: repetition shortcut off */

static void run_on(const fixture *f, const coll_plan *plan, run_out *o, bool packet) {
  sim_ctx *sim = sim_create(1);
  be_backend *b =
      packet ? be_packet_create(sim, f->t, &f->cfg) : be_flow_create(sim, f->t, &f->cfg);
  if (!packet && explicit_reps) flow__set_shortcut(b, false);
  flt_fault *ff = NULL;
  uint32_t nf = 0;
  sim_error err = {0};
  coll_exec e;
  assert_int_equal(flt_resolve(&ff, &nf, f->t, &f->cfg, f->doc, &err), SIM_OK);
  flt_sched *s = flt_sched_start(sim, f->t, b, ff, nf, &f->cfg, NULL, &err);
  assert_non_null(s);
  coll_exec_start(&e, b, plan, NULL, NULL);
  ev_run(sim, SIM_TIME_MAX);
  assert_true(e.finished);
  flt_sched_finish(s);
  o->dur = e.end - e.start;
  b->ops->stats(b, &o->st);
  o->nev = flt_sched_event_count(s) < 64 ? flt_sched_event_count(s) : 64;
  for (size_t i = 0; i < o->nev; i++) o->ev[i] = *flt_sched_event(s, i);
  flt_sched_free(s);
  sim_free(ff);
  be_destroy(b);
  sim_destroy(sim);
}

static void run(const fixture *f, const coll_plan *plan, run_out *o) { run_on(f, plan, o, false); }

static const flt_event *find_event(const run_out *o, const char *kind) {
  for (size_t i = 0; i < o->nev; i++)
    if (strcmp(o->ev[i].kind, kind) == 0) return &o->ev[i];
  return NULL;
}

/* The leaf-spine link a transfer src -> dst of the plan crosses. */
static void link_of(const fixture *f, const coll_plan *plan, uint32_t src, uint32_t dst, char *name,
                    size_t n) {
  for (size_t k = 0; k < plan->nphases; k++)
    for (size_t i = 0; i < plan->phases[k].n; i++) {
      const be_xfer *x = &plan->phases[k].x[i];
      topo_path p;
      if (x->src_gpu != src || x->dst_gpu != dst) continue;
      assert_int_equal(topo_route(f->t, src, dst, x->flow_hash, &p), SIM_OK);
      for (uint32_t j = 0; j < p.n; j++) {
        const topo_link *l = topo_link_at(f->t, topo_channel_link(p.ch[j]));
        if (l->kind == TOPO_LINK_FABRIC) {
          topo_link_name(f->t, topo_channel_link(p.ch[j]), name, n);
          return;
        }
      }
    }
  fail_msg("no transfer gpu%u -> gpu%u crosses the fabric", src, dst);
}

/* Ring AllReduce of S = 1 GiB over 16 GPUs of 2 nodes, one channel: 30 steps
 * of S/16 per transfer; the two fabric transfers of each step (gpu0 -> gpu8,
 * gpu8 -> gpu0: each node's last GPU hands the chunk over NVLink to the GPU
 * on the next node's rail) run at the NIC's achievable rate B on disjoint
 * links and are the bottleneck (NVLink is faster). At T = 10 ms the leaf-spine link of
 * gpu0 -> gpu8 goes down: that flow stalls (rate 0) for the reconvergence
 * delay d = 1 ms, then moves to another spine, again alone on its links at
 * B. Nothing else changes, so the closed form is t_fault = t_base + d
 * (the step in progress waits d; the other steps are untouched), to the
 * picosecond rounding of each rate change. */
static void test_link_down_mid_allreduce(void **state) {
  (void)state;
  const char *base[] = {"cluster.nodes=2", "fabric.switch_radix=8", "simulation.fidelity=flow",
                        "reliability.reconvergence=1ms"};
  fixture f;
  coll_plan plan;
  run_out a, b;
  char link[64], fault[160];
  load(&f, base, 4);
  ring(&f, &plan, 16, 1ull << 30);
  link_of(&f, &plan, 0, 8, link, sizeof link);
  run(&f, &plan, &a);
  unload(&f);
  assert_true(a.dur > 20 * SIM_PS_PER_MS); /* 10 ms falls mid-collective */

  snprintf(fault, sizeof fault, "faults=[{at: 10ms, kind: link-down, target: %s}]", link);
  const char *sets[] = {base[0], base[1], base[2], base[3], fault};
  load_with(&f, sets, 5);
  run(&f, &plan, &b);
  /* completes with every byte, nothing failed */
  assert_int_equal(b.st.transfers, coll_plan_transfers(&plan));
  assert_int_equal(b.st.bytes, coll_plan_bytes(&plan));
  assert_int_equal(b.st.bytes, a.st.bytes);
  assert_int_equal(b.st.transfers_failed, 0);
  /* the link carries the ring's flow gpu0 -> gpu8 up and, under D-mod-K
   * (destination 0 takes the same spine from the other side), gpu8 -> gpu0
   * down: both stall and move */
  assert_int_equal(b.st.flows_rerouted, 2);
  /* later by the stall d = 1 ms (within 1 ns of rounding) */
  simtime_ps d = SIM_PS_PER_MS, late = b.dur - a.dur;
  if (late + SIM_PS_PER_NS < d || late > d + SIM_PS_PER_NS)
    fail_msg("base %llu ps, with the fault %llu ps: %llu ps later, want 1 ms",
             (unsigned long long)a.dur, (unsigned long long)b.dur, (unsigned long long)late);
  /* the log: the fault at 10 ms, the reroute 1 ms later moving both flows */
  const flt_event *down = find_event(&b, "link-down"), *rr = find_event(&b, "reroute");
  assert_non_null(down);
  assert_non_null(rr);
  assert_int_equal(down->at, 10 * SIM_PS_PER_MS);
  assert_string_equal(down->component, link);
  assert_int_equal(rr->at, 11 * SIM_PS_PER_MS);
  assert_int_equal(down->fault, 0); /* each line names its fault in the list */
  assert_int_equal(rr->fault, 0);   /* a reroute: the fault that asked for it */
  assert_true(rr->value == 2.0);
  assert_non_null(strstr(rr->effect, "rerouted 2 flows in flight"));
  /* the repetition shortcut resumes after the fault: same result as every
   * repetition run explicitly, with far fewer events */
  run_out c;
  explicit_reps = true;
  run(&f, &plan, &c);
  explicit_reps = false;
  assert_int_equal(c.dur, b.dur);
  assert_int_equal(c.st.bytes, b.st.bytes);
  assert_int_equal(c.st.flows_rerouted, b.st.flows_rerouted);
  unload(&f);
  coll_plan_free(&plan);
}

/* A degraded link (half rate) for the whole run stretches only the fabric
 * transfer that crosses it: a step then takes (S/16) / (B_link/2) instead of
 * (S/16) / B_nic (the achievable rates), so the 30 steps take
 * t_base + 30 x (S/16) (2/B_link - 1/B_nic). Checked to 1 %. */
static void test_degraded_link(void **state) {
  (void)state;
  const char *base[] = {"cluster.nodes=2", "fabric.switch_radix=8", "simulation.fidelity=flow"};
  fixture f;
  coll_plan plan;
  run_out a, b;
  char link[64], fault[160];
  load(&f, base, 3);
  ring(&f, &plan, 16, 1ull << 30);
  link_of(&f, &plan, 0, 8, link, sizeof link);
  run(&f, &plan, &a);
  unload(&f);
  snprintf(fault, sizeof fault, "faults=[{at: 0s, kind: link-degraded, target: %s, factor: 0.5}]",
           link);
  const char *sets[] = {base[0], base[1], base[2], fault};
  load_with(&f, sets, 4);
  run(&f, &plan, &b);
  /* the degraded link is a switch-to-switch link: half of 400 Gb/s x
   * fabric.link_efficiency, below the NICs' 400 Gb/s x nic.efficiency */
  double bits = (double)(1ull << 30) / 16 * 8;
  double nic = 400e9 * f.cfg.cluster.nic.efficiency,
         slow = 0.5 * 400e9 * f.cfg.fabric.link_efficiency;
  double step = bits * (1 / slow - 1 / nic) * 1e12; /* ps */
  double want = (double)a.dur + 30 * step;
  if (fabs((double)b.dur - want) > 0.01 * want)
    fail_msg("degraded: %llu ps, want %.0f ps", (unsigned long long)b.dur, want);
  assert_int_equal(b.st.bytes, a.st.bytes);
  assert_non_null(find_event(&b, "link-degraded"));
  assert_null(find_event(&b, "reroute")); /* routing does not see a slow link */
  unload(&f);
  coll_plan_free(&plan);
}

/* Two planes, node 0 -> node 1 traffic on both (GPU g uses NIC g, plane
 * g mod 2). A spine-leaf link of plane 1 used by that traffic goes down at
 * 50 us: plane-0 transfers finish at exactly the same picosecond as without
 * the fault; plane-1 ones later; only plane-1 flows were rerouted. */
typedef struct done_at {
  sim_ctx *sim;
  simtime_ps at;
} done_at;
static void on_done(sim_ctx *sim, void *ctx) { ((done_at *)ctx)->at = sim_now(sim); }

static void planes(const char *fault, simtime_ps *p0, simtime_ps *p1, be_stats *st, char *link,
                   size_t n) {
  const char *base[] = {"fabric.topology=multi-plane",
                        "fabric.planes=2",
                        "cluster.nodes=4",
                        "fabric.switch_radix=8",
                        "simulation.fidelity=flow",
                        "reliability.reconvergence=20us",
                        fault};
  fixture f;
  be_xfer x0[4], x1[4];
  done_at d0 = {0}, d1 = {0};
  load(&f, base, fault ? 7 : 6);
  for (uint32_t i = 0; i < 4; i++) {
    x0[i] = (be_xfer){.src_gpu = 2 * i, .dst_gpu = 8 + 2 * i, .bytes = 8 << 20, .flow_hash = i};
    x1[i] = (be_xfer){.src_gpu = 2 * i + 1, .dst_gpu = 9 + 2 * i, .bytes = 8 << 20, .flow_hash = i};
  }
  if (link) { /* the fabric link of plane-1 transfer 0 */
    topo_path p;
    assert_int_equal(topo_route(f.t, x1[0].src_gpu, x1[0].dst_gpu, x1[0].flow_hash, &p), SIM_OK);
    for (uint32_t j = 0; j < p.n; j++)
      if (topo_link_at(f.t, topo_channel_link(p.ch[j]))->kind == TOPO_LINK_FABRIC) {
        topo_link_name(f.t, topo_channel_link(p.ch[j]), link, n);
        break;
      }
  }
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_flow_create(sim, f.t, &f.cfg);
  flt_fault *ff = NULL;
  uint32_t nf = 0;
  sim_error err = {0};
  assert_int_equal(flt_resolve(&ff, &nf, f.t, &f.cfg, f.doc, &err), SIM_OK);
  flt_sched *s = flt_sched_start(sim, f.t, b, ff, nf, &f.cfg, NULL, &err);
  be_submit_phase(b, x0, 4, 3, on_done, &d0);
  be_submit_phase(b, x1, 4, 3, on_done, &d1);
  ev_run(sim, SIM_TIME_MAX);
  *p0 = d0.at;
  *p1 = d1.at;
  b->ops->stats(b, st);
  flt_sched_free(s);
  sim_free(ff);
  be_destroy(b);
  sim_destroy(sim);
  unload(&f);
}

static void test_planes_isolate_faults(void **state) {
  (void)state;
  simtime_ps a0, a1, b0, b1;
  be_stats sa, sb;
  char link[64], fault[160];
  planes(NULL, &a0, &a1, &sa, link, sizeof link);
  assert_non_null(strstr(link, "p1."));
  snprintf(fault, sizeof fault, "faults=[{at: 50us, kind: link-down, target: %s}]", link);
  planes(fault, &b0, &b1, &sb, NULL, 0);
  assert_true(a0 > 50 * SIM_PS_PER_US && a1 > 50 * SIM_PS_PER_US); /* the fault hits mid-flow */
  assert_int_equal(b0, a0);                                        /* plane 0: to the picosecond */
  assert_true(b1 > a1); /* plane 1: stalled for the reconvergence */
  assert_true(sb.flows_rerouted >= 1 && sb.flows_rerouted <= 4); /* plane-1 flows only */
  assert_int_equal(sb.bytes, sa.bytes);
  assert_int_equal(sb.transfers_failed, 0);
}

/* One NIC per node: node 1's NIC port down cuts it off. Its transfers fail
 * with "no route" (reported, counted, logged), the collective still ends. */
static void test_no_route_fails_transfers(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2",
                        "cluster.nic.per_node=1",
                        "fabric.switch_radix=8",
                        "simulation.fidelity=flow",
                        "reliability.reconvergence=10us",
                        "faults=[{at: 100us, kind: nic-down, target: nic1}]"};
  fixture f;
  coll_plan plan;
  run_out o;
  load(&f, sets, 6);
  ring(&f, &plan, 16, 64ull << 20);
  run(&f, &plan, &o);
  assert_true(o.st.transfers_failed > 0);
  assert_int_equal(o.st.transfers + o.st.transfers_failed, coll_plan_transfers(&plan));
  assert_true(o.st.bytes < coll_plan_bytes(&plan));
  const flt_event *e = find_event(&o, "transfer-failed");
  assert_non_null(e);
  assert_non_null(strstr(e->effect, "failed: no route"));
  assert_non_null(find_event(&o, "nic-down"));
  /* each line names its fault in the list; a failed transfer is no fault's */
  for (size_t i = 0; i < o.nev; i++)
    assert_int_equal(o.ev[i].fault, strcmp(o.ev[i].kind, "transfer-failed") ? 0 : FLT_NO_FAULT);
  unload(&f);
  coll_plan_free(&plan);
}

/* The same AllReduce with gpu0 -> gpu8's link flapping: down 200 us in each
 * of 3 cycles of 2 ms from 10 ms, routing 50 us behind. Each cycle stalls
 * the flow for 50 us, until the reroute moves it off the link; when the link
 * comes back routing returns to it only after the next reroute, which may
 * move the flow back (a path change while it runs costs nothing in the fluid
 * model). So the run is later by 3 x 50 us, and the log holds 6 flap
 * changes and 6 reroutes. A switch-down of every spine but one, then
 * switch-up, also completes with every byte. */
static void test_flap_and_switch(void **state) {
  (void)state;
  const char *base[] = {"cluster.nodes=2", "fabric.switch_radix=8", "simulation.fidelity=flow",
                        "reliability.reconvergence=50us"};
  fixture f;
  coll_plan plan;
  run_out a, b, c;
  char link[64], fault[200];
  load(&f, base, 4);
  ring(&f, &plan, 16, 1ull << 30);
  link_of(&f, &plan, 0, 8, link, sizeof link);
  run(&f, &plan, &a);
  unload(&f);
  snprintf(fault, sizeof fault,
           "faults=[{at: 10ms, kind: link-flap, target: %s, duration: 200us, period: 2ms, "
           "count: 3}]",
           link);
  const char *sets[] = {base[0], base[1], base[2], base[3], fault};
  load_with(&f, sets, 5);
  run(&f, &plan, &b);
  unload(&f);
  assert_int_equal(b.st.bytes, a.st.bytes);
  simtime_ps late = b.dur - a.dur, want = 3 * 50 * SIM_PS_PER_US;
  if (late + SIM_PS_PER_NS < want || late > want + SIM_PS_PER_NS)
    fail_msg("flap: %llu ps later, want %llu", (unsigned long long)late, (unsigned long long)want);
  size_t flaps = 0, reroutes = 0;
  for (size_t i = 0; i < b.nev; i++) {
    flaps += strcmp(b.ev[i].kind, "link-flap") == 0;
    reroutes += strcmp(b.ev[i].kind, "reroute") == 0;
  }
  assert_int_equal(flaps, 6);
  assert_int_equal(reroutes, 6);

  const char *sw[] = {base[0], base[1], base[2], base[3],
                      "faults=[{at: 5ms, kind: switch-down, target: spine0}, {at: 5ms, kind: "
                      "switch-down, target: spine1}, {at: 5ms, kind: switch-down, target: spine2}, "
                      "{at: 9ms, kind: switch-up, target: spine1}]"};
  load_with(&f, sw, 5);
  run(&f, &plan, &c);
  assert_int_equal(c.st.bytes, a.st.bytes);
  assert_int_equal(c.st.transfers_failed, 0);
  assert_true(c.dur >= a.dur);
  assert_non_null(find_event(&c, "switch-up"));
  unload(&f);
  coll_plan_free(&plan);
}

/* The same fault at the flow and packet fidelities (ring AllReduce of
 * 64 MiB over 16 GPUs, one channel; gpu0 -> gpu8's leaf-spine link down at
 * 1 ms, routing 20 us later). Both complete with every byte and nothing
 * failed; the flow run is later by exactly the 20 us stall; the packet run
 * loses what was on and queued for the link and its transport recovers it,
 * so it is later by at least the stall, and by no more than the stall plus
 * two retransmission timeouts (cluster.nic.rto, 1 ms). Measured: flow
 * 2564.282 -> 2584.282 us (+20.000); packet 2628.114 -> 2648.971 us
 * (+20.857: 250 packets dropped on the link, resent on each new hole's NACK
 * once the path moved, well before any timeout). */
static void test_cross_fidelity(void **state) {
  (void)state;
  const char *base[] = {"cluster.nodes=2", "fabric.switch_radix=8", "simulation.fidelity=flow",
                        "reliability.reconvergence=20us"};
  fixture f;
  coll_plan plan;
  run_out fa, fb, pa, pb;
  char link[64], fault[160];
  load(&f, base, 4);
  ring(&f, &plan, 16, 64ull << 20);
  link_of(&f, &plan, 0, 8, link, sizeof link);
  run_on(&f, &plan, &fa, false);
  run_on(&f, &plan, &pa, true);
  unload(&f);
  snprintf(fault, sizeof fault, "faults=[{at: 1ms, kind: link-down, target: %s}]", link);
  const char *sets[] = {base[0], base[1], base[2], base[3], fault};
  load_with(&f, sets, 5);
  run_on(&f, &plan, &fb, false);
  run_on(&f, &plan, &pb, true);
  unload(&f);
  simtime_ps stall = 20 * SIM_PS_PER_US, fl = fb.dur - fa.dur, pk = pb.dur - pa.dur;
  print_message(
      "flow: %.3f us -> %.3f us (+%.3f us); packet: %.3f us -> %.3f us (+%.3f us), "
      "%llu retransmits, %llu drops\n",
      fa.dur / 1e6, fb.dur / 1e6, fl / 1e6, pa.dur / 1e6, pb.dur / 1e6, pk / 1e6,
      (unsigned long long)pb.st.retransmits, (unsigned long long)pb.st.drops);
  assert_true(fl + SIM_PS_PER_NS >= stall && fl <= stall + SIM_PS_PER_NS);
  assert_true(pk >= stall && pk <= stall + 2 * SIM_PS_PER_MS);
  assert_int_equal(pb.st.bytes, pa.st.bytes);
  assert_int_equal(fb.st.bytes, pb.st.bytes);
  assert_int_equal(pb.st.transfers_failed, 0);
  assert_true(pb.st.flows_rerouted >= 1);
  assert_non_null(find_event(&pb, "reroute"));
  coll_plan_free(&plan);
}

static void expect_resolve_error(const char *fault, const char *want) {
  const char *sets[] = {"cluster.nodes=2", "fabric.switch_radix=8", "simulation.fidelity=flow",
                        fault};
  fixture f;
  flt_fault *ff = NULL;
  uint32_t nf = 0;
  sim_error err = {0};
  load(&f, sets, 4);
  assert_int_equal(flt_resolve(&ff, &nf, f.t, &f.cfg, f.doc, &err), SIM_ECONFIG);
  if (strcmp(err.msg, want) != 0) fail_msg("got:  %s\nwant: %s", err.msg, want);
  unload(&f);
}

/* A schedule built by hand (not through the scenario's validation) whose
 * times would wrap simulated time is refused by the scheduler. */
static void test_schedule_overflow(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "fabric.switch_radix=8", "simulation.fidelity=flow",
                        "faults=[{at: 1ms, kind: link-flap, target: leaf0-spine1, duration: 1ms, "
                        "period: 2ms, count: 3}]"};
  fixture f;
  flt_fault *ff = NULL;
  uint32_t nf = 0;
  sim_error err = {0};
  load(&f, sets, 4);
  assert_int_equal(flt_resolve(&ff, &nf, f.t, &f.cfg, f.doc, &err), SIM_OK);
  sim_ctx *sim = sim_create(1);
  be_backend *b = be_flow_create(sim, f.t, &f.cfg);
  ff[0].spec.period = UINT64_MAX / 2; /* x (count - 1) = 2 wraps */
  assert_null(flt_sched_start(sim, f.t, b, ff, nf, &f.cfg, NULL, &err));
  assert_int_equal(err.code, SIM_ERANGE);
  ff[0].spec.kind = CFG_FAULT_LINK_DOWN; /* at + duration wraps */
  ff[0].spec.duration = UINT64_MAX - 1;
  assert_null(flt_sched_start(sim, f.t, b, ff, nf, &f.cfg, NULL, &err));
  assert_int_equal(err.code, SIM_ERANGE);
  be_destroy(b);
  sim_destroy(sim);
  sim_free(ff);
  unload(&f);
}

static void test_resolve(void **state) {
  (void)state;
  const char *sets[] = {"cluster.nodes=2", "fabric.switch_radix=8", "simulation.fidelity=flow",
                        "faults=[{at: 1ms, kind: link-down, target: leaf0-spine1}, {at: 1ms, "
                        "kind: switch-down, target: spine2}, {at: 1ms, kind: nic-down, target: "
                        "nic9}, {at: 1ms, kind: node-fail, target: node1}, {at: 1ms, kind: sdc, "
                        "target: gpu3}]"};
  fixture f;
  flt_fault *ff = NULL;
  uint32_t nf = 0, l;
  sim_error err = {0};
  load(&f, sets, 4);
  assert_int_equal(flt_resolve(&ff, &nf, f.t, &f.cfg, f.doc, &err), SIM_OK);
  assert_int_equal(nf, 5);
  assert_int_equal(topo_find_link(f.t, "leaf0-spine1", &l), SIM_OK);
  assert_int_equal(ff[0].link, l);
  assert_int_equal(topo_vertex_at(f.t, ff[1].vertex)->kind, TOPO_SWITCH);
  assert_int_equal(topo_link_at(f.t, ff[2].link)->kind, TOPO_LINK_ENDPOINT);
  assert_int_equal(ff[3].gpu, 8);
  assert_int_equal(ff[4].gpu, 3);
  sim_free(ff);
  unload(&f);
  expect_resolve_error("faults=[{at: 1ms, kind: link-down, target: lef0-spine1}]",
                       "--set:4:44: faults[0].target: no element 'lef0' in this fabric; did you "
                       "mean 'leaf0'?");
  expect_resolve_error("faults=[{at: 1ms, kind: switch-down, target: spine99}]",
                       "--set:4:46: faults[0].target: no switch 'spine99' in this fabric; names "
                       "are as in `fabsim topo --dot -` (gpu0, nic0, leaf0, spine0, leaf0-spine0, "
                       "node0)");
  expect_resolve_error("faults=[{at: 1ms, kind: link-down, target: spine0}]",
                       "--set:4:44: faults[0].target: 'spine0' is not a link; name a link by its "
                       "two ends (such as leaf0-spine0), or use a switch-down/switch-up kind");
  expect_resolve_error("faults=[{at: 1ms, kind: link-down, target: leaf0-leaf1}]",
                       "--set:4:44: faults[0].target: leaf0 and leaf1 are not linked; name a link "
                       "of `fabsim topo` (such as leaf0's uplinks)");
  /* a partial 3-tier build's bundles: a link is named with its position */
  const char *b3[] = {"cluster.nodes=5", "fabric.switch_radix=8", "fabric.tiers=3",
                      "simulation.fidelity=flow",
                      "faults=[{at: 1ms, kind: link-down, target: spine4-core1/1}, {at: 1ms, "
                      "kind: switch-down, target: core7}]"};
  load(&f, b3, 5);
  assert_int_equal(flt_resolve(&ff, &nf, f.t, &f.cfg, f.doc, &err), SIM_OK);
  assert_int_equal(topo_find_link(f.t, "spine4-core1/1", &l), SIM_OK);
  assert_int_equal(ff[0].link, l);
  assert_int_equal(ff[1].vertex, topo_switch_vertex(f.t, 0, TOPO_TIER_CORE, 7));
  sim_free(ff);
  unload(&f);
  b3[4] = "faults=[{at: 1ms, kind: link-down, target: spine4-core1}]";
  load(&f, b3, 5);
  assert_int_equal(flt_resolve(&ff, &nf, f.t, &f.cfg, f.doc, &err), SIM_ECONFIG);
  assert_string_equal(err.msg,
                      "--set:5:44: faults[0].target: 'spine4-core1' names a bundle of 2 "
                      "parallel links; name one of them: spine4-core1/0 .. "
                      "spine4-core1/1");
  unload(&f);
  expect_resolve_error("faults=[{at: 1ms, kind: gpu-fail, target: gpu99}]",
                       "--set:4:43: faults[0].target: no GPU 'gpu99' in this fabric; names are "
                       "as in `fabsim topo --dot -` (gpu0, nic0, leaf0, spine0, leaf0-spine0, "
                       "node0)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_link_down_mid_allreduce),
      cmocka_unit_test(test_degraded_link),
      cmocka_unit_test(test_planes_isolate_faults),
      cmocka_unit_test(test_no_route_fails_transfers),
      cmocka_unit_test(test_flap_and_switch),
      cmocka_unit_test(test_cross_fidelity),
      cmocka_unit_test(test_resolve),
      cmocka_unit_test(test_schedule_overflow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
