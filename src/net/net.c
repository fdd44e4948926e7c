/* Packet fidelity: the backend object, its parameters, per-channel and
 * per-vertex setup, the packet pool, stats.
 *
 * Parameters (MODEL-INPUTS.md)
 *   Headers: InfiniBand LRH+BTH+ICRC+VCRC = 26 B; RoCEv2 (and lossy
 *   Ethernet, which carries RoCEv2) 62 B in the frame plus 20 B of preamble
 *   and inter-frame gap on the wire; RETH +16 B on a message's first packet.
 *   An ACK/NACK adds a 4-byte AETH, a CNP 16 bytes.
 *
 * Flow control of a channel into vertex d
 *   d a fabric switch: InfiniBand credits; RoCE and Ethernet PFC for the
 *   lossless classes and tail drop for the lossy ones (fabric.classes; by
 *   default every class as fabric.roce.pfc says on RoCE, lossy on
 *   Ethernet). Anything else (NIC, GPU, NVSwitch: PCIe, NVLink and a NIC's
 *   receive path) is credit-based and lossless.
 *   Credits per class: InfiniBand switch inputs get fabric.switch.buffer /
 *   ports; host-side inputs enough for line rate over the credit loop,
 *   (2 x propagation + forwarding latency) x rate + 4 frames, at least 64 KB.
 *
 * Traffic classes (fabric.classes): the port scheduler's priority levels
 *   and deficit round robin quanta (weight x the largest frame, mtu +
 *   headers + RETH: port.c), ECN thresholds per class (scaled with the
 *   port's rate as fabric.ecn.*), buffer shares per class (port.c).
 *
 * Switch buffer (PFC and tail drop): fabric.switch.buffer shared, less a 4 KB
 *   reserve per queue (8 classes x ports) and, with PFC, headroom per input
 *   port of (3 x propagation + forwarding latency) x rate + 2 frames (covers
 *   the PAUSE's flight, the wire, the pipeline and one frame each end).
 *   Dynamic threshold: a queue may take alpha = 1/8 of the free shared
 *   buffer (PFC: before PAUSE; tail drop: before dropping).
 *
 * ECN: switch egress ports mark ECN-capable packets on enqueue with
 *   probability 0 below Kmin, rising linearly to Pmax at Kmax, 1 above; Kmin
 *   and Kmax scale with the port's rate relative to fabric.link_bandwidth.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "net/net_internal.h"

enum { RESERVE = 4096, ACK_EXTRA = 4, CNP_EXTRA = 16, RETH = 16, HOST_CREDIT_MIN = 65536 };

/* ---- packet pool -------------------------------------------------------- */

static void pool_grow(net__be *n) {
  if (n->npchunk == n->pchunk_cap) {
    n->pchunk_cap = n->pchunk_cap ? 2 * n->pchunk_cap : 16;
    n->pchunk = sim_realloc(n->pchunk, n->pchunk_cap * sizeof *n->pchunk);
    n->nchunk = sim_realloc(n->nchunk, n->pchunk_cap * sizeof *n->nchunk);
  }
  uint32_t per = 1u << NET__PKT_SHIFT, base = n->npchunk * per;
  n->pchunk[n->npchunk] = sim_malloc(per * sizeof(net__pkt));
  uint32_t *next = n->nchunk[n->npchunk] = sim_malloc(per * sizeof *next);
  n->npchunk++;
  for (uint32_t i = per; i-- > 0;) { /* lowest index first off the free list */
    next[i] = n->pkt_free;
    n->pkt_free = base + i;
  }
  n->ext.pkts_alloc = (uint64_t)n->npchunk * per;
}

uint32_t net__pkt_alloc(net__be *n) {
  if (n->pkt_free == NET__NONE) pool_grow(n);
  uint32_t i = n->pkt_free;
  n->pkt_free = *net__pnext(n, i);
  if (++n->pkts_live > n->ext.inflight_max) n->ext.inflight_max = n->pkts_live;
  return i;
}

void net__pkt_free(net__be *n, uint32_t i) {
  *net__pnext(n, i) = n->pkt_free;
  n->pkt_free = i;
  n->pkts_live--;
}

/* ---- setup ---------------------------------------------------------------- */

static uint64_t bytes_in(simtime_ps t, rate_bps bps) {
  unsigned __int128 b = (unsigned __int128)t * bps / (8 * SIM_PS_PER_S);
  return b > UINT32_MAX ? UINT32_MAX : (uint64_t)b;
}

static uint32_t clamp32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

static void setup_params(net__be *n, const cfg_scenario *cfg) {
  cfg_transport tr = cfg->fabric.transport;
  n->routing = cfg->fabric.routing;
  n->recovery = cfg->cluster.nic.recovery;
  n->dynamic = n->routing == CFG_ROUTING_ADAPTIVE || n->routing == CFG_ROUTING_SPRAY;
  n->spray_rr = cfg->fabric.spray.order == CFG_SPRAY_ROUND_ROBIN;
  n->lossy = false; /* setup_classes: a lossy class at switch inputs */
  n->ect = tr != CFG_TRANSPORT_INFINIBAND;
  n->mtu = cfg->fabric.mtu;
  n->hdr = tr == CFG_TRANSPORT_INFINIBAND ? 26 : 62;
  n->pre = tr == CFG_TRANSPORT_INFINIBAND ? 0 : 20;
  n->ack_frame = n->hdr + ACK_EXTRA;
  n->cnp_frame = n->hdr + CNP_EXTRA;
  n->xoff = cfg->fabric.pfc.xoff;
  n->xon = cfg->fabric.pfc.xon;
  n->alpha = 1.0 / 8.0;
  n->pmax = cfg->fabric.ecn.pmax;
  n->rto = cfg->cluster.nic.rto ? cfg->cluster.nic.rto : 1;
  n->cnp_interval = cfg->cluster.nic.cnp_interval;
  n->flowlet_gap = n->routing == CFG_ROUTING_ADAPTIVE ? cfg->fabric.adaptive.flowlet_gap : 0;
  n->watchdog = cfg->fabric.pfc.watchdog;
  n->ack_every = cfg->cluster.nic.ack_every ? cfg->cluster.nic.ack_every : 1;
  n->cc = n->ect && cfg->fabric.roce.cc == CFG_CC_DCQCN ? &cc_dcqcn_ops : &cc_none_ops;
  cc_defaults(&n->ccp, cfg->cluster.nic.bandwidth);
}

static net__fc fc_into(const net__be *n, const cfg_scenario *cfg, const topo_vertex *d) {
  if (d->kind != TOPO_SWITCH || cfg->fabric.transport == CFG_TRANSPORT_INFINIBAND)
    return NET__FC_CREDIT;
  return n->lossless == 0xff ? NET__FC_PFC : n->lossless == 0 ? NET__FC_LOSSY : NET__FC_CLASS;
}

/* The classes' scheduling (levels, the table from eligible classes to
 * those of the highest level present, quanta), lossless mask, Pmax and
 * buffer shares, from the resolved fabric.classes. O(256 x 8). */
static void setup_classes(net__be *n, const cfg_scenario *cfg) {
  const cfg_class_table *t = &cfg->fabric.classes;
  assert(t->v[0].name); /* resolved by cfg_load (a zeroed table would make every class lossy) */
  uint32_t max_frame = n->mtu + n->hdr + RETH;
  bool pools = false;
  n->lossless = 0;
  for (uint32_t k = 0; k < NET__CLASSES; k++) {
    const cfg_tclass *c = &t->v[k];
    uint32_t above = 0; /* distinct levels above k's */
    for (uint32_t p = c->priority + 1; p < NET__CLASSES; p++)
      for (uint32_t j = 0; j < NET__CLASSES; j++)
        if (t->v[j].priority == p) {
          above++;
          break;
        }
    n->level_of[k] = (uint8_t)above;
    n->quantum[k] = (int32_t)((c->weight ? c->weight : 1) * max_frame);
    n->cls_pmax[k] = c->ecn_pmax;
    n->share[k] = c->buffer > 0 && c->buffer < 1 ? c->buffer : 1;
    pools |= n->share[k] < 1;
    if (c->lossless) n->lossless |= (uint8_t)(1u << k);
  }
  for (uint32_t m = 1; m < 256; m++) {
    uint32_t best = UINT32_MAX, g = 0;
    for (uint32_t k = 0; k < NET__CLASSES; k++)
      if (m >> k & 1 && n->level_of[k] < best) best = n->level_of[k];
    for (uint32_t k = 0; k < NET__CLASSES; k++)
      if (m >> k & 1 && n->level_of[k] == best) g |= 1u << k;
    n->top[m] = (uint8_t)g;
  }
  if (pools)
    n->pool_used = sim_calloc((size_t)(n->nv ? n->nv : 1) * NET__CLASSES, sizeof(uint64_t));
}

/* Class k's ECN thresholds at a port of bps: kmin, kmax (scaled as the
 * fabric's), or false when they are the fabric's (the port's own). */
static bool class_ecn(const cfg_scenario *cfg, uint32_t k) {
  const cfg_tclass *c = &cfg->fabric.classes.v[k];
  return c->ecn_kmin != cfg->fabric.ecn.kmin || c->ecn_kmax != cfg->fabric.ecn.kmax;
}

static void setup_channels(net__be *n, const cfg_scenario *cfg) {
  const topo *t = n->t;
  uint32_t max_frame = n->mtu + n->hdr + RETH, max_wire = max_frame + n->pre;
  rate_bps ref = cfg->fabric.link_bandwidth ? cfg->fabric.link_bandwidth : 1;
  bool ecn_cls = false;
  for (uint32_t k = 0; k < NET__CLASSES; k++) ecn_cls |= class_ecn(cfg, k);
  if (ecn_cls)
    n->ecn_k = sim_malloc((size_t)(n->nch ? n->nch : 1) * NET__CLASSES * 2 * sizeof(uint32_t));
  for (uint32_t v = 0; v < n->nv; v++) {
    const topo_vertex *x = topo_vertex_at(t, v);
    n->vx[v].is_switch = x->kind == TOPO_SWITCH;
    n->vx[v].tier = x->tier;
    n->vx[v].reserve = RESERVE;
  }
  for (uint32_t c = 0; c < n->nch; c++) {
    net__chan *ch = &n->ch[c];
    net__cold *cd = &n->cold[c];
    const topo_link *l = topo_link_at(t, topo_channel_link(c));
    cd->src = topo_channel_src(t, c);
    ch->dst = topo_channel_dst(t, c);
    const topo_vertex *s = topo_vertex_at(t, cd->src), *d = topo_vertex_at(t, ch->dst);
    rate_bps bps = topo_channel_bps(t, c);
    cd->bps = cd->bps0 = bps ? bps : 1;
    cd->prop = l->latency;
    ch->lat = l->latency + d->latency;
    ch->hdr_ps = sim_serialization_ps(n->hdr + n->pre, cd->bps);
    ch->fc = (uint8_t)fc_into(n, cfg, d);
    ch->dst_cut = d->kind == TOPO_SWITCH ? cfg->fabric.sw.cut_through : d->kind != TOPO_GPU;
    ch->lflags = s->kind == TOPO_SWITCH && n->ect ? NET__L_ECN : 0;
    cd->telemetry = s->kind == TOPO_SWITCH || s->kind == TOPO_NIC;
    cd->kmin = clamp32((uint64_t)((unsigned __int128)cfg->fabric.ecn.kmin * cd->bps / ref));
    cd->kmax = clamp32((uint64_t)((unsigned __int128)cfg->fabric.ecn.kmax * cd->bps / ref));
    if (cd->kmax < cd->kmin) cd->kmax = cd->kmin;
    for (uint32_t k = 0; ecn_cls && k < NET__CLASSES; k++) {
      const cfg_tclass *tc = &cfg->fabric.classes.v[k];
      uint32_t *e = &n->ecn_k[((size_t)c * NET__CLASSES + k) * 2];
      e[0] = clamp32((uint64_t)((unsigned __int128)tc->ecn_kmin * cd->bps / ref));
      e[1] = clamp32((uint64_t)((unsigned __int128)tc->ecn_kmax * cd->bps / ref));
      if (e[1] < e[0]) e[1] = e[0];
    }
    uint64_t loop = bytes_in(2 * cd->prop + d->latency, cd->bps) + 4ull * max_frame;
    uint64_t credit = loop > HOST_CREDIT_MIN ? loop : HOST_CREDIT_MIN;
    if (d->kind == TOPO_SWITCH) {
      uint64_t per_port = cfg->fabric.sw.buffer / (d->nports ? d->nports : 1);
      credit = per_port > loop ? per_port : loop;
    }
    cd->credit0 = (int32_t)(credit > INT32_MAX ? INT32_MAX : credit);
    for (uint32_t k = 0; k < NET__CLASSES; k++) {
      net__cq *q = net__cq_at(n, c, k);
      q->credits = cd->credit0;
      q->head = q->tail = NET__NONE;
    }
    ch->wake_at = SIM_TIME_MAX;
    ch->qp_head = NET__NONE;
    cd->down_at = SIM_TIME_MAX;
    /* headroom of the input port (PFC) at the destination switch */
    if (ch->fc == NET__FC_PFC || ch->fc == NET__FC_CLASS) {
      uint64_t h = bytes_in(3 * cd->prop + d->latency, cd->bps) + 2ull * max_wire;
      if (h > n->vx[ch->dst].hdrm_size) n->vx[ch->dst].hdrm_size = clamp32(h);
    }
  }
  for (uint32_t v = 0; v < n->nv; v++) {
    net__vert *x = &n->vx[v];
    if (!x->is_switch) continue;
    uint64_t ports = topo_vertex_at(t, v)->nports;
    uint64_t carved = ports * NET__CLASSES * x->reserve + ports * x->hdrm_size;
    x->shared_size = cfg->fabric.sw.buffer > carved ? cfg->fabric.sw.buffer - carved : 0;
  }
}

/* ---- be_ops ------------------------------------------------------------- */

void net__port_settle(net__be *n, simtime_ps now) {
  for (uint32_t c = 0; c < n->nch; c++) {
    net__chan *ch = &n->ch[c];
    ch->q_integral += (double)ch->bytes * (double)(now - ch->q_last);
    ch->q_last = now;
  }
}

/* Time channel c has spent paused up to now, the pauses still on included;
 * *storms counts those on longer than the watchdog. */
static simtime_ps paused_until(const net__be *n, uint32_t c, simtime_ps now, uint64_t *storms);
simtime_ps net__paused_until(const net__be *n, uint32_t c, simtime_ps now) {
  return paused_until(n, c, now, NULL);
}

static simtime_ps paused_until(const net__be *n, uint32_t c, simtime_ps now, uint64_t *storms) {
  const net__chan *ch = &n->ch[c];
  const net__cold *cd = &n->cold[c];
  simtime_ps p = cd->paused_ps;
  for (int k = 0; k < NET__CLASSES; k++) {
    if (!(ch->paused & (1u << k))) continue;
    p += now - cd->paused_since[k];
    if (storms && n->watchdog && now - cd->paused_since[k] >= n->watchdog) (*storms)++;
  }
  return p;
}

static void net_stats(const be_backend *b, be_stats *out) {
  net__be *n = (net__be *)b; /* settling the integrals is bookkeeping, not state */
  simtime_ps now = sim_now(b->sim);
  net__port_settle(n, now);
  *out = n->st;
  out->pfc_paused = 0;
  out->max_queue_bytes = 0;
  out->link_utilization_max = 0;
  for (uint32_t c = 0; c < n->nch; c++) {
    const net__chan *ch = &n->ch[c];
    out->pfc_paused += paused_until(n, c, now, NULL);
    if (n->cold[c].telemetry && net__chan_max_queue(n, c) > out->max_queue_bytes)
      out->max_queue_bytes = net__chan_max_queue(n, c);
    for (uint32_t k = 0; k < NET__CLASSES; k++) { /* per class */
      uint32_t q = n->cq[(size_t)c * NET__CLASSES + k].max_bytes;
      if (n->cold[c].telemetry && q > out->class_max_queue[k]) out->class_max_queue[k] = q;
      if (ch->paused >> k & 1) out->class_pfc_paused[k] += now - n->cold[c].paused_since[k];
    }
    if (now > 0) {
      double u = (double)ch->busy / (double)now;
      if (u > out->link_utilization_max) out->link_utilization_max = u;
    }
  }
  be_fct_summarize(&n->fct, out); /* a copy is sorted: later samples keep arriving */
  out->observed |= BE_OBS_PACKETS;
  n->ext.deadlock = !n->par && n->active_phases > 0 && sim_pending(b->sim) == 0;
}

static void ext_local(const net__be *n, net__ext *out) {
  simtime_ps now = sim_now(n->base.sim);
  *out = n->ext;
  for (uint32_t c = 0; c < n->nch; c++) paused_until(n, c, now, &out->pfc_storms);
}

/* be_ops.stats; on the parallel engine a collective over the ranks. */
static void net_stats_all(const be_backend *b, be_stats *out) {
  net__be *n = (net__be *)b;
  net_stats(b, out);
  if (!n->par) return;
  net__ext ext;
  ext_local(n, &ext);
  net__par_stats(n, out, &ext);
}

void net__ext_stats(const be_backend *b, net__ext *out) {
  net__be *n = (net__be *)b;
  n->ext.deadlock = !n->par && n->active_phases > 0 && sim_pending(b->sim) == 0;
  ext_local(n, out);
  if (!n->par) return;
  be_stats st;
  net_stats(b, &st);
  net__par_stats(n, &st, out);
}

int net__port_stats_of(const be_backend *b, uint32_t c, net__port_stats *out) {
  net__be *n = (net__be *)b;
  if (c >= n->nch) return SIM_ENOENT;
  simtime_ps now = sim_now(b->sim);
  net__port_settle(n, now);
  const net__chan *ch = &n->ch[c];
  const net__cold *cd = &n->cold[c];
  out->tx_bytes = ch->tx_bytes;
  out->tx_pkts = ch->tx_pkts;
  out->pauses_rx = cd->pauses_rx;
  out->drops = cd->drops;
  out->ecn_marks = cd->marks_n;
  out->busy = ch->busy;
  out->paused = paused_until(n, c, now, NULL);
  out->max_bytes = net__chan_max_queue(n, c);
  out->avg_bytes = now ? ch->q_integral / (double)now : 0.0;
  return SIM_OK;
}

static void net_destroy(be_backend *b) {
  net__be *n = (net__be *)b;
  net__par_destroy(n);
  for (uint32_t c = 0; c < n->nch; c++) {
    sim_free(n->cold[c].ring.t);
    sim_free(n->cold[c].ring.v);
    sim_free(n->ch[c].fl);
  }
  for (uint32_t i = 0; i < n->nqp; i++) {
    sim_free(n->qp[i].rtx);
    sim_free(n->qp[i].ooo);
    sim_free(n->qp[i].fl);
  }
  for (uint32_t i = 0; i < n->nph; i++) {
    sim_free(n->ph[i].qp);
    sim_free(n->ph[i].paths);
  }
  for (uint32_t i = 0; i < n->npchunk; i++) {
    sim_free(n->pchunk[i]);
    sim_free(n->nchunk[i]);
  }
  sim_free(n->pchunk);
  sim_free(n->nchunk);
  for (uint32_t v = 0; n->vscan && v < n->nv; v++) sim_free(n->vscan[v].set.q);
  sim_free(n->vscan);
  sim_free(n->vber);
  sim_free(n->vseq);
  sim_free(n->vseq_made);
  sim_free(n->ph);
  sim_free(n->qp);
  sim_free(n->qh);
  sim_free(n->qp_free);
  sim_free(n->sharing);
  sim_free(n->ch_mem);
  sim_free(n->cq);
  sim_free(n->ci);
  sim_free(n->cold);
  for (uint32_t v = 0; n->due && v < n->nv; v++) sim_free(n->due[v].e);
  sim_free(n->due);
  sim_free(n->due_n);
  sim_free(n->sends);
  sim_free(n->vx);
  sim_free(n->rr);
  sim_free(n->ecn_k);
  sim_free(n->pool_used);
  sim_free(n->gpu_job);
  sim_free(n->jp_caused);
  sim_free(n->jp_paused);
  sim_free(n->jp_pauses);
  sim_free(n->jp_flows);
  sim_free(n->pcause);
  sim_free(n->vjob);
  sim_free(n->pfq_head);
  sim_free(n->pfq_tail);
  sim_free(n->pfq);
  sim_free(n->jo);
  be_fct_free(&n->fct);
  if (n->health_own.link_ok) topo_health_free(&n->health_own);
  net__samp_free(n->samp);
  sim_free(n->reach);
  sim_free(n);
}

/* be_ops.job_owners: the job of each GPU, for pause victims (port.c). */
static int net_job_owners(be_backend *b, const uint32_t *job_of_gpu, uint32_t njobs) {
  net__be *n = (net__be *)b;
  size_t g = topo_gpu_count(n->t), nj = njobs ? njobs : 1;
  void *held[] = {n->gpu_job, n->jp_caused, n->jp_paused, n->jp_pauses, n->jp_flows,
                  n->pcause,  n->vjob,      n->pfq_head,  n->pfq_tail,  n->pfq};
  for (size_t i = 0; i < sizeof held / sizeof *held; i++) sim_free(held[i]); /* set again */
  n->pfq = NULL;
  n->pfq_n = n->pfq_cap = 0;
  n->gpu_job = sim_malloc((g ? g : 1) * sizeof *n->gpu_job);
  memcpy(n->gpu_job, job_of_gpu, g * sizeof *n->gpu_job);
  n->njobs = njobs;
  n->jp_caused = sim_calloc(nj, sizeof *n->jp_caused);
  n->jp_paused = sim_calloc(nj, sizeof *n->jp_paused);
  n->jp_pauses = sim_calloc(nj * nj, sizeof *n->jp_pauses);
  n->jp_flows = sim_calloc(nj * nj, sizeof *n->jp_flows);
  n->pcause = sim_malloc((size_t)(n->nch ? n->nch : 1) * NET__CLASSES * sizeof *n->pcause);
  for (size_t i = 0; i < (size_t)n->nch * NET__CLASSES; i++) n->pcause[i] = UINT32_MAX;
  n->vjob = sim_calloc((size_t)(n->nv ? n->nv : 1) * nj, sizeof *n->vjob);
  size_t ncc = (size_t)(n->nch ? n->nch : 1) * NET__CLASSES;
  n->pfq_head = sim_malloc(ncc * sizeof *n->pfq_head);
  n->pfq_tail = sim_malloc(ncc * sizeof *n->pfq_tail);
  for (size_t i = 0; i < ncc; i++) n->pfq_head[i] = n->pfq_tail[i] = NET__NONE;
  n->pfq_free = NET__NONE;
  return SIM_OK;
}

/* be_ops.job_pauses: the counts so far, the pauses still holding a port
 * counted up to now, into arrays of their own (the model's are left as
 * they are); on the parallel engine every rank's summed (a collective).
 * O(channels x 8 + jobs^2). */
static bool net_job_pauses(const be_backend *b, be_job_pauses *out) {
  net__be *n = (net__be *)b;
  if (!n->gpu_job) return false;
  simtime_ps now = sim_now(b->sim);
  size_t nj = n->njobs;
  if (!n->jo) n->jo = sim_malloc((2 * nj + 2 * nj * nj) * sizeof *n->jo);
  uint64_t *caused = n->jo, *paused = caused + nj, *pauses = paused + nj, *flows = pauses + nj * nj;
  memcpy(caused, n->jp_caused, nj * sizeof *caused);
  memcpy(paused, n->jp_paused, nj * sizeof *paused);
  memcpy(pauses, n->jp_pauses, nj * nj * sizeof *pauses);
  memcpy(flows, n->jp_flows, nj * nj * sizeof *flows);
  for (uint32_t c = 0; c < n->nch; c++)
    for (uint32_t k = 0; k < NET__CLASSES; k++) {
      uint32_t j = n->pcause[(size_t)c * NET__CLASSES + k];
      if (n->ch[c].paused >> k & 1 && j < nj) paused[j] += now - n->cold[c].paused_since[k];
    }
  if (n->par) net__par_sum_u64(n, n->jo, 2 * nj + 2 * nj * nj);
  *out = (be_job_pauses){
      .njobs = n->njobs, .caused = caused, .paused = paused, .pauses = pauses, .flows = flows};
  return true;
}

static const be_ops net_ops = {
    .name = "packet",
    .submit_phase = net__submit_phase,
    .stats = net_stats_all,
    .destroy = net_destroy,
    .link_state = net__link_state,
    .reroute = net__reroute,
    .port_sampling = net__port_sampling,
    .port_gather = net__port_gather,
    .port_samples = net__port_samples,
    .parallel_info = net__par_info,
    .job_owners = net_job_owners,
    .job_pauses = net_job_pauses,
};

be_backend *be_packet_create(sim_ctx *sim, const topo *t, const cfg_scenario *cfg) {
  net__be *n = sim_calloc(1, sizeof *n);
  n->base.ops = &net_ops;
  n->base.sim = sim;
  n->base.topo = t;
  n->base.cfg = cfg;
  n->t = t;
  n->nv = topo_vertex_count(t);
  n->nch = 2 * topo_link_count(t);
  n->vx = sim_calloc(n->nv ? n->nv : 1, sizeof *n->vx);
  n->due = sim_calloc(n->nv ? n->nv : 1, sizeof *n->due);
  n->due_bits = NET__DUE_BITS_MIN;
  while (n->due_bits < NET__DUE_BITS_MAX && ((uint64_t)1 << n->due_bits) < 2 * (uint64_t)n->nch)
    n->due_bits++;
  n->due_n = sim_calloc((size_t)1 << n->due_bits, sizeof *n->due_n);
  n->sends = sim_calloc(n->nv ? n->nv : 1, sizeof *n->sends);
  size_t nch = n->nch ? n->nch : 1;
  n->ch_mem = sim_calloc(nch + 1, sizeof *n->ch); /* + 1: room to align to a cache line */
  n->ch = (net__chan *)(((uintptr_t)n->ch_mem + 63) & ~(uintptr_t)63);
  n->cq = sim_calloc(nch * NET__CLASSES, sizeof *n->cq);
  n->ci = sim_calloc(nch * NET__CLASSES, sizeof *n->ci);
  n->cold = sim_calloc(nch, sizeof *n->cold);
  n->sharing = sim_calloc(n->nch ? n->nch : 1, sizeof *n->sharing);
  n->pkt_free = NET__NONE;
  n->now = sim_now_ptr(sim);
  setup_params(n, cfg);
  setup_classes(n, cfg);
  n->lossy = cfg->fabric.transport != CFG_TRANSPORT_INFINIBAND && n->lossless != 0xff;
  n->rr = sim_calloc(nch * NET__CLASSES, sizeof *n->rr);
  setup_channels(n, cfg);
  n->vseq = sim_malloc((size_t)(n->nv ? n->nv : 1) * 2 * sizeof *n->vseq);
  n->vseq_made = sim_calloc((size_t)(n->nv ? n->nv : 1) * 2, 1);
  n->scan_period = n->rto / 16 ? n->rto / 16 : 1;
  n->end_gap = SIM_TIME_MAX; /* the smallest latency of a link with one: O(links) */
  for (uint32_t l = 0; l < topo_link_count(t); l++) {
    simtime_ps x = topo_link_at(t, l)->latency;
    if (x > 0 && x < n->end_gap) n->end_gap = x;
  }
  if (n->end_gap == SIM_TIME_MAX) n->end_gap = SIM_PS_PER_US;
  return &n->base;
}

be_backend *be_packet_create_parallel(sim_ctx *sim, const topo *t, const cfg_scenario *cfg,
                                      sim_error *err) {
  be_backend *b = be_packet_create(sim, t, cfg);
  if (net__par_create((net__be *)b, err) != SIM_OK) {
    net_destroy(b);
    return NULL;
  }
  return b;
}

sim_rng *net__vseq_make(net__be *n, unsigned k, uint32_t v) {
  static const char *const kinds[2] = {"ecn", "route"};
  char name[48];
  size_t i = (size_t)v * 2 + k;
  snprintf(name, sizeof name, "net.v%u.%s", v, kinds[k]);
  sim_rng_stream(n->base.sim, &n->vseq[i], name);
  n->vseq_made[i] = 1;
  return &n->vseq[i];
}
