/* Packet-level prototype on the parallel engine (see fabric.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdes/fabric.h"

enum { EV_INJECT = 0, EV_ARRIVE = 1, EV_CREDIT = 2, MAX_HOPS = 64 };
#define NO_CHANNEL UINT32_MAX

/* A packet's payload: [0] destination NIC, [1] flow hash, [2] phase << 32 |
 * sequence, [3] the channel it is on (at its next vertex: the one it came in
 * by; NO_CHANNEL before its first hop). */

/* Packets waiting for credits on a channel (owned by its source vertex). */
typedef struct fab_wait {
  simtime_ps ready;
  uint64_t pl[PDES_PAYLOAD_WORDS];
} fab_wait;
typedef struct fab_queue {
  fab_wait *w;
  size_t head, n, cap;
} fab_queue;
enum { RED_FLOWS_DONE = 0, RED_LAST_ARRIVAL = 1 };

typedef struct fab_vertex {
  uint64_t packets; /* NIC: received in the current phase; switch: forwarded */
  uint64_t digest;  /* of every packet seen: time, destination, sequence */
  simtime_ps last;
  uint32_t sent;  /* NIC: packets injected in the current phase */
  uint32_t phase; /* NIC: the phase it is sending */
} fab_vertex;

struct pdes_fabric {
  const topo *t;
  pdes_fabric_cfg cfg;
  pdes *engine;
  fab_vertex *v;         /* per vertex; only this rank's move */
  simtime_ps *busy;      /* per channel: free from (owned by the channel's source) */
  int64_t *credits;      /* per channel: bytes its destination can still take (credit mode) */
  fab_queue *queue;      /* per channel: packets waiting for credits (credit mode) */
  uint32_t *nic_up;      /* per NIC: the channel to its leaf */
  uint32_t **plane_nics; /* NICs per plane, in order */
  uint32_t *plane_n, *nic_pos;
  uint32_t planes, nics;
  /* global phase state, the same on every rank (from reduced values only) */
  uint32_t phase;
  uint64_t flows_done;
  simtime_ps phase_last;
  simtime_ps *phase_end;
  uint32_t *peers; /* [phase * nics + nic]: where nic sends in that phase */
};

static uint32_t peer(const pdes_fabric *m, uint32_t nic, uint32_t phase) {
  return m->peers[(size_t)phase * m->nics + nic];
}

/* Every phase's permutation, the same on every rank. */
static void make_peers(pdes_fabric *m) {
  m->peers = sim_malloc((size_t)m->cfg.phases * m->nics * sizeof *m->peers);
  uint32_t *perm = sim_malloc(m->nics * sizeof *perm);
  for (uint32_t k = 0; k < m->cfg.phases; k++)
    for (uint32_t pl = 0; pl < m->planes; pl++) {
      uint32_t n = m->plane_n[pl];
      for (uint32_t i = 0; i < n; i++) perm[i] = (i + 1 + (k * 7u) % (n - 1)) % n; /* never i */
      if (m->cfg.random) { /* Sattolo: a uniformly random n-cycle, so never i either */
        sim_rng r;
        sim_rng_init_u64(&r, m->cfg.seed, (uint64_t)k * m->planes + pl);
        for (uint32_t i = 0; i < n; i++) perm[i] = i;
        for (uint32_t i = n - 1; i > 0; i--) {
          uint32_t j = (uint32_t)sim_rng_below(&r, i), x = perm[i];
          perm[i] = perm[j];
          perm[j] = x;
        }
      }
      for (uint32_t i = 0; i < n; i++)
        m->peers[(size_t)k * m->nics + m->plane_nics[pl][i]] = m->plane_nics[pl][perm[i]];
    }
  sim_free(perm);
}

/* Put a packet on channel ch now: serialization after `ready` and the
 * channel's previous packet; its arrival is an event of the channel's
 * destination LP. In credit mode the buffer it leaves (the ingress of the
 * channel it came in by) is returned to that channel's source when it
 * departs, one link latency later. */
static void send_now(pdes *p, pdes_fabric *m, uint32_t from, uint32_t ch, simtime_ps ready,
                     const uint64_t payload[PDES_PAYLOAD_WORDS]) {
  const topo_link *l = topo_link_at(m->t, topo_channel_link(ch));
  simtime_ps depart = ready > m->busy[ch] ? ready : m->busy[ch];
  m->busy[ch] = depart + sim_serialization_ps(m->cfg.bytes, l->bps);
  uint64_t pl[PDES_PAYLOAD_WORDS] = {payload[0], payload[1], payload[2], ch};
  uint32_t in = (uint32_t)payload[3];
  if (m->cfg.credit_bytes && in != NO_CHANNEL) {
    uint64_t c[PDES_PAYLOAD_WORDS] = {in, m->cfg.bytes, 0, 0};
    pdes_send(p, from, topo_channel_src(m->t, in),
              depart + topo_link_at(m->t, topo_channel_link(in))->latency, EV_CREDIT, c);
  }
  pdes_send(p, from, topo_channel_dst(m->t, ch), m->busy[ch] + l->latency, EV_ARRIVE, pl);
}

static void transmit(pdes *p, pdes_fabric *m, uint32_t from, uint32_t ch, simtime_ps ready,
                     const uint64_t payload[PDES_PAYLOAD_WORDS]) {
  if (!m->cfg.credit_bytes) {
    send_now(p, m, from, ch, ready, payload);
    return;
  }
  fab_queue *q = &m->queue[ch];
  if (q->n == 0 && m->credits[ch] >= (int64_t)m->cfg.bytes) {
    m->credits[ch] -= m->cfg.bytes;
    send_now(p, m, from, ch, ready, payload);
    return;
  }
  if (q->head + q->n == q->cap) {
    if (q->head) { /* slide down before growing */
      memmove(q->w, q->w + q->head, q->n * sizeof *q->w);
      q->head = 0;
    } else {
      sim_grow((void **)&q->w, &q->cap, q->n + 1, sizeof *q->w);
    }
  }
  fab_wait *w = &q->w[q->head + q->n++];
  w->ready = ready;
  memcpy(w->pl, payload, sizeof w->pl);
}

/* Credits back from the destination of channel payload[0]: send what waits. */
static void on_credit(pdes *p, const pdes_event *ev, void *model) {
  pdes_fabric *m = model;
  uint32_t ch = (uint32_t)ev->payload[0];
  fab_queue *q = &m->queue[ch];
  m->credits[ch] += (int64_t)ev->payload[1];
  while (q->n && m->credits[ch] >= (int64_t)m->cfg.bytes) {
    fab_wait w = q->w[q->head++];
    q->n--;
    m->credits[ch] -= m->cfg.bytes;
    send_now(p, m, ev->dst, ch, w.ready > ev->time ? w.ready : ev->time, w.pl);
  }
  if (q->n == 0) q->head = 0;
}

static void on_inject(pdes *p, const pdes_event *ev, void *model) {
  pdes_fabric *m = model;
  uint32_t v = ev->dst, nic = (uint32_t)ev->payload[0];
  fab_vertex *x = &m->v[v];
  if (ev->payload[1] != x->phase) { /* a new phase */
    x->phase = (uint32_t)ev->payload[1];
    x->sent = 0;
  }
  uint32_t dst = peer(m, nic, x->phase);
  uint64_t pl[PDES_PAYLOAD_WORDS] = {dst,
                                     sim_hash_u64(m->cfg.seed ^ ((uint64_t)nic << 20) ^ x->phase),
                                     (uint64_t)x->phase << 32 | x->sent, NO_CHANNEL};
  uint32_t up = m->nic_up[nic];
  transmit(p, m, v, up, ev->time, pl);
  if (++x->sent < m->cfg.packets) {
    uint64_t next[PDES_PAYLOAD_WORDS] = {nic, x->phase, 0, 0};
    pdes_send(p, v, v, m->busy[up] > ev->time ? m->busy[up] : ev->time, EV_INJECT, next);
  }
}

static void on_arrive(pdes *p, const pdes_event *ev, void *model) {
  pdes_fabric *m = model;
  uint32_t v = ev->dst, dst_nic = (uint32_t)ev->payload[0];
  fab_vertex *x = &m->v[v];
  const topo_vertex *tv = topo_vertex_at(m->t, v);
  uint64_t phase = ev->payload[2] >> 32, seq = ev->payload[2] & 0xffffffffu;
  x->digest = sim_hash_u64(x->digest ^ ev->time) ^ sim_hash_u64(ev->payload[0] << 32 ^ seq);
  x->last = ev->time;
  x->packets++;
  if (tv->kind == TOPO_NIC) {
    if (m->cfg.credit_bytes) { /* consumed at once: its buffer is free again */
      uint32_t in = (uint32_t)ev->payload[3];
      uint64_t c[PDES_PAYLOAD_WORDS] = {in, m->cfg.bytes, 0, 0};
      pdes_send(p, v, topo_channel_src(m->t, in),
                ev->time + topo_link_at(m->t, topo_channel_link(in))->latency, EV_CREDIT, c);
    }
    if (x->packets == (uint64_t)m->cfg.packets * (phase + 1)) { /* the flow of this phase is in */
      pdes_reduce_add(p, RED_FLOWS_DONE, 1);
      pdes_reduce_max(p, RED_LAST_ARRIVAL, ev->time);
    }
    return;
  }
  uint32_t cand[MAX_HOPS];
  uint32_t n = topo_next_hops(m->t, v, dst_nic, cand, MAX_HOPS);
  if (n == 0) {
    sim_fatal("fabric prototype: no next hop at vertex %u for NIC %u", v, dst_nic);
  }
  uint32_t ch = cand[topo_ecmp_pick(m->t, v, ev->payload[1], n)];
  transmit(p, m, v, ch, ev->time + tv->latency, ev->payload);
}

/* Phase completion: every flow of the phase arrived -> the next phase starts
 * start_latency after the last arrival, on every rank's NICs. */
static simtime_ps on_window(pdes *p, const uint64_t sum[PDES_REDUCE_WORDS],
                            const uint64_t max[PDES_REDUCE_WORDS], void *model) {
  pdes_fabric *m = model;
  m->flows_done += sum[RED_FLOWS_DONE];
  if (max[RED_LAST_ARRIVAL] > m->phase_last) m->phase_last = max[RED_LAST_ARRIVAL];
  if (m->phase >= m->cfg.phases || m->flows_done < m->nics) return SIM_TIME_MAX;
  m->phase_end[m->phase] = m->phase_last;
  m->phase++;
  m->flows_done = 0;
  if (m->phase >= m->cfg.phases) return SIM_TIME_MAX;
  simtime_ps start = m->phase_last + m->cfg.start_latency;
  for (uint32_t nic = 0; nic < m->nics; nic++) {
    uint32_t v = topo_nic_vertex(m->t, nic);
    if (!pdes_owns(p, v)) continue;
    uint64_t pl[PDES_PAYLOAD_WORDS] = {nic, m->phase, 0, 0};
    pdes_send(p, v, v, start, EV_INJECT, pl);
  }
  return start;
}

int pdes_fabric_create(pdes_fabric **out, const topo *t, const pdes_fabric_cfg *cfg, bool parallel,
                       const uint32_t *vertex_rank, simtime_ps lookahead, sim_error *err) {
  *out = NULL;
  if (cfg->packets == 0 || cfg->bytes == 0 || cfg->phases == 0)
    return sim_fail(err, SIM_EINVAL, "fabric prototype: packets, bytes and phases must be above 0");
  if (cfg->start_latency < lookahead)
    return sim_fail(err, SIM_EINVAL,
                    "fabric prototype: the phase start latency (%llu ps) is below the "
                    "lookahead (%llu ps)",
                    (unsigned long long)cfg->start_latency, (unsigned long long)lookahead);
  pdes_fabric *m = sim_calloc(1, sizeof *m);
  m->t = t;
  m->cfg = *cfg;
  uint32_t nv = topo_vertex_count(t);
  m->nics = topo_nic_count(t);
  m->planes = topo_inventory_get(t)->planes ? topo_inventory_get(t)->planes : 1;
  m->plane_nics = sim_calloc(m->planes, sizeof *m->plane_nics);
  m->plane_n = sim_calloc(m->planes, sizeof *m->plane_n);
  m->nic_pos = sim_calloc(m->nics, sizeof *m->nic_pos);
  m->nic_up = sim_calloc(m->nics, sizeof *m->nic_up);
  for (uint32_t pl = 0; pl < m->planes; pl++)
    m->plane_nics[pl] = sim_calloc(m->nics, sizeof **m->plane_nics);
  for (uint32_t n = 0; n < m->nics; n++) {
    uint32_t nv_ = topo_nic_vertex(t, n), l = 0;
    const topo_vertex *x = topo_vertex_at(t, nv_);
    uint32_t pl = x->plane >= 0 ? (uint32_t)x->plane : 0;
    m->nic_pos[n] = m->plane_n[pl];
    m->plane_nics[pl][m->plane_n[pl]++] = n;
    if (topo_link_between(t, nv_, topo_nic_leaf(t, n), &l) != SIM_OK) {
      pdes_fabric_destroy(m);
      return sim_fail(err, SIM_EINVAL, "fabric prototype: NIC %u has no link to its leaf", n);
    }
    m->nic_up[n] = topo_link_at(t, l)->a == nv_ ? 2 * l : 2 * l + 1;
  }
  for (uint32_t pl = 0; pl < m->planes; pl++)
    if (m->plane_n[pl] < 2) {
      pdes_fabric_destroy(m);
      return sim_fail(err, SIM_EINVAL, "fabric prototype: plane %u has fewer than 2 NICs", pl);
    }
  make_peers(m);
  m->v = sim_calloc(nv, sizeof *m->v);
  m->busy = sim_calloc(2 * (size_t)topo_link_count(t), sizeof *m->busy);
  if (cfg->credit_bytes) {
    if (cfg->credit_bytes < cfg->bytes) {
      pdes_fabric_destroy(m);
      return sim_fail(err, SIM_EINVAL, "fabric prototype: credits (%u bytes) below one packet (%u)",
                      cfg->credit_bytes, cfg->bytes);
    }
    m->credits = sim_malloc(2 * (size_t)topo_link_count(t) * sizeof *m->credits);
    for (size_t c = 0; c < 2 * (size_t)topo_link_count(t); c++) m->credits[c] = cfg->credit_bytes;
    m->queue = sim_calloc(2 * (size_t)topo_link_count(t), sizeof *m->queue);
  }
  m->phase_end = sim_calloc(cfg->phases, sizeof *m->phase_end);
  pdes_fn handlers[3] = {on_inject, on_arrive, on_credit};
  pdes_cfg pc = {.nlps = nv,
                 .lp_rank = vertex_rank,
                 .lookahead_ps = lookahead,
                 .handlers = handlers,
                 .nhandlers = 3,
                 .model = m,
                 .parallel = parallel,
                 .exchange = cfg->exchange,
                 .on_window = on_window};
  int rc = pdes_create(&m->engine, &pc, err);
  if (rc != SIM_OK) {
    pdes_fabric_destroy(m);
    return rc;
  }
  for (uint32_t n = 0; n < m->nics; n++) {
    uint32_t v = topo_nic_vertex(t, n);
    if (!pdes_owns(m->engine, v)) continue;
    uint64_t pl[PDES_PAYLOAD_WORDS] = {n, 0, 0, 0};
    pdes_send(m->engine, v, v, 0, EV_INJECT, pl);
  }
  *out = m;
  return SIM_OK;
}

void pdes_fabric_destroy(pdes_fabric *m) {
  if (!m) return;
  pdes_destroy(m->engine);
  for (uint32_t pl = 0; pl < m->planes; pl++) sim_free(m->plane_nics[pl]);
  sim_free(m->plane_nics);
  sim_free(m->plane_n);
  sim_free(m->nic_pos);
  sim_free(m->nic_up);
  sim_free(m->v);
  sim_free(m->busy);
  sim_free(m->credits);
  if (m->queue)
    for (size_t c = 0; c < 2 * (size_t)topo_link_count(m->t); c++) sim_free(m->queue[c].w);
  sim_free(m->queue);
  sim_free(m->phase_end);
  sim_free(m->peers);
  sim_free(m);
}

pdes *pdes_fabric_engine(pdes_fabric *m) { return m->engine; }

uint64_t pdes_fabric_run(pdes_fabric *m) { return pdes_run(m->engine, SIM_TIME_MAX); }

const simtime_ps *pdes_fabric_phase_end(const pdes_fabric *m) { return m->phase_end; }

void pdes_fabric_state(pdes_fabric *m, uint64_t *out) {
  uint32_t nv = topo_vertex_count(m->t);
  size_t n = (size_t)nv * PDES_FABRIC_STATE_WORDS;
  memset(out, 0, n * sizeof *out);
  for (uint32_t v = 0; v < nv; v++) {
    if (!pdes_owns(m->engine, v)) continue;
    uint64_t *w = out + (size_t)v * PDES_FABRIC_STATE_WORDS;
    w[0] = m->v[v].packets;
    w[1] = m->v[v].digest;
    w[2] = m->v[v].last;
    /* the vertex's output channels, folded */
    const topo_vertex *x = topo_vertex_at(m->t, v);
    uint64_t h = 0;
    for (uint32_t i = 0; i < x->nports; i++) {
      uint32_t ch = topo_port_channel(m->t, v, i);
      h = sim_hash_u64(h ^ m->busy[ch]);
      if (m->credits)
        h = sim_hash_u64(h ^ (uint64_t)m->credits[ch] ^ (uint64_t)m->queue[ch].n << 40);
    }
    w[3] = h;
  }
  if (pdes_nranks(m->engine) > 1) pdes_comm_reduce_sum_u64(out, out, n);
}
