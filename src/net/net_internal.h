/* Packet fidelity internals, shared by the files of src/net, the tests and
 * the benchmarks. Not a public interface.
 *
 *   net.c        backend object: parameters, per-channel and per-vertex setup,
 *                stats, create/destroy
 *   port.c       egress ports (8 classes: strict priority levels over deficit
 *                round robin, fabric.classes),
 *                serialization, arrivals, switch buffer (MMU), ECN, PFC,
 *                InfiniBand/host credits
 *   route.c      paths per queue pair and per-hop choices (ECMP, polarized,
 *                static, adaptive, flowlet, spray)
 *   transport.c  reliable connection: sender pull and pacing, ACK/NACK, go-back-N
 *                and selective repeat, retransmission timeout, CNPs
 *   phase.c      be_ops.submit_phase: queue pairs per transfer, repetitions,
 *                completion, failures; be_ops.reroute
 *   sample.c     packet telemetry: per-port samples while phases run, read
 *                after the run (be_ops.port_sampling, port_gather, port_samples)
 *   parallel.c   the same model on the parallel engine (src/pdes): one LP per
 *                vertex, over MPI ranks or in its sequential mode (net__par_*)
 *
 * Faults (be_ops.link_state in port.c, be_ops.reroute in phase.c): a link
 *   that goes down loses what is on it and queued for it, and everything
 *   routed into it until routing reconverges (the transport recovers after
 *   the reroute); a degraded link serializes slower and/or loses each packet
 *   with its wire size's probability at the bit error rate; a queue pair
 *   that can no longer be routed, or that gives up after its retries, is
 *   reported failed and its phase still completes.
 *
 * Model in one paragraph
 *   Every channel of the topology (two per link) is an egress port at its
 *   source vertex. A packet is serialized at the link rate (wire size =
 *   payload + transport headers [+ preamble/IFG]), propagates, and arrives at
 *   the next vertex after that vertex's forwarding latency (counted from the
 *   header for cut-through, from the tail for store-and-forward). There it is
 *   routed to an egress port, admitted by the buffer (credits, PFC or tail
 *   drop) and queued. Transfers are RDMA WRITEs on queue pairs whose endpoints
 *   are the source and destination GPUs; the sender is pulled by its first
 *   port when that port is free, so injection is bounded by PCIe (credits into
 *   the NIC) and the NIC's port rate (pacing and credits).
 *
 * Events per packet per hop: one arrival (only the first packet on a link has
 *   its arrival pending; the next is scheduled when it arrives, so pending
 *   events stay near the number of busy links); one port wake when it had to
 *   queue behind another (an idle port sends at once). Credit returns, PFC
 *   thresholds, ECN and DCQCN timers create no per-packet events, and
 *   retransmission timeouts are one periodic scan, not an event per queue
 *   pair (far-future events would stretch the event queue's calendar).
 *   The sequential engine schedules all of these beside the run
 *   (ev_schedule_beside), as the parallel engine's LP events are: a stale
 *   packet discarded after the workload's last event does not end the run.
 *
 * Memory: a packet is 40 bytes plus a 4-byte queue link (+ 16 bytes while on
 *   a link), in chunked pools
 *   (stable addresses, no per-packet malloc after warm-up); a channel 128
 *   bytes hot (two cache lines) + 8 x 32 bytes per class + 8 bytes of round
 *   robin pointers + ~0.2 KB cold; a
 *   queue pair ~0.3 KB plus its paths.
 */
#ifndef FABSIM_NET_INTERNAL_H
#define FABSIM_NET_INTERNAL_H

#include "fabsim/cc.h"
#include "fabsim/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NET__NONE UINT32_MAX
enum {
  NET__CLASSES = 8,
  NET__CTRL_CLASS = 7,  /* CNPs (strict priority unless fabric.classes says otherwise) */
  NET__PKT_SHIFT = 12,  /* packets per pool chunk: 4096 */
  NET__MAX_CANDS = 1024 /* equal-cost next hops examined at one switch */
};

typedef enum { NET__DATA, NET__ACK, NET__NACK, NET__CNP } net__kind;
enum {
  NET__F_ECT = 1,   /* ECN-capable (RoCE/Ethernet data) */
  NET__F_CE = 2,    /* congestion experienced */
  NET__F_REV = 4,   /* travels the queue pair's reverse (ACK) path */
  NET__F_RETX = 8,  /* a retransmission */
  NET__F_HDRM = 16, /* occupies PFC headroom at the vertex holding it */
  NET__F_LOST = 32  /* on a link that failed, or corrupted (BER): discarded on arrival */
};
/* Per-channel flags (net__chan.lflags). */
enum {
  NET__L_ECN = 1,  /* src is a switch that ECN-marks */
  NET__L_DOWN = 2, /* the link is down: what is sent is lost */
  NET__L_BER = 4   /* bit errors: each packet lost with its wire size's probability */
};
/* Flow control of a channel into its destination vertex; NET__FC_CLASS: a
 * switch input whose classes differ (fabric.classes): PFC for the lossless
 * classes, tail drop for the others (net__fc_of). */
typedef enum { NET__FC_CREDIT, NET__FC_PFC, NET__FC_LOSSY, NET__FC_CLASS } net__fc;

/* A packet: 40 bytes. Its queue link lives apart (net__be.pnext), so that
 * queueing never touches a neighbour's cache line. */
typedef struct net__pkt {
  simtime_ps tail; /* when its tail is available at the vertex holding it */
  uint32_t qp;     /* owning queue pair */
  uint32_t psn;    /* DATA: sequence number; NACK: first missing */
  uint32_t aux;    /* NACK: end of the missing range */
  uint32_t ack;    /* ACK, NACK: cumulative (next expected PSN) */
  uint32_t next;   /* the channel its stored path takes at its next arrival
                    * (NONE: delivered there or unknown); a prefetch hint only,
                    * so that an arrival loads the output port in parallel
                    * with the queue pair's path instead of after it */
  uint32_t in_ch;  /* channel it entered the vertex holding it by; NONE at its source */
  uint16_t frame;  /* bytes in buffers: payload + headers */
  uint16_t epoch;  /* repetition of its queue pair (stale packets are ignored) */
  uint8_t kind, cls, hop, flags;
} net__pkt;

/* Credit returns in flight from a channel's destination back to its source,
 * in arrival order (the link delay is constant). */
typedef struct net__ring {
  simtime_ps *t;
  uint32_t *v; /* bytes | class << 24 */
  uint32_t head, n, cap;
} net__ring;

/* Packets on a link in arrival order (a ring, grown on demand): only the
 * first has its arrival event pending. */
typedef struct net__fentry {
  simtime_ps at;
  uint32_t pkt;
  uint32_t seq; /* its sender's net__be.sends when it left (sequential engine) */
} net__fentry;

/* The order of what happens at one vertex at one picosecond, the same on
 * both engines (so that ties resolve alike): credits returned (the
 * sequential engine reads them by time: before anything else), then PFC
 * frames, then packet arrivals, each kind by (sending vertex, its send
 * count), then port wakes and timer scans. The parallel engine gives these
 * as pdes kind orders (pdes_cfg.order); the sequential one keeps each
 * vertex's PFC frames and input links' head packets in a heap (net__due)
 * that an arrival event or a port wake runs up to now (port.c). */
enum { NET__ORD_CREDIT, NET__ORD_PFC, NET__ORD_ARRIVE, NET__ORD_WAKE };
/* due-count table: 2^bits slots, bits = log2(channels) + 1 within these */
enum { NET__DUE_BITS_MIN = 8, NET__DUE_BITS_MAX = 20 };

/* Something due at a vertex (sequential engine): the head packet of an
 * input channel, or a PFC frame. Heap order (at, key). */
typedef struct net__due {
  simtime_ps at;
  uint64_t key; /* NET__ORD_* << 62 | sending vertex << 32 | its send count */
  uint32_t c;   /* arrival: the channel in; PFC: the channel paused or resumed */
  uint32_t pfc; /* PFC: 1 | class << 1 | on << 4; 0: an arrival */
} net__due;

/* The cause of an XOFF frame in flight (sequential engine): a job, and the
 * next node of its (channel, class) FIFO or of the free list. */
typedef struct net__pfcause {
  uint32_t job, next;
} net__pfcause;

typedef struct net__dueheap {
  net__due *e;
  uint32_t n, cap;
} net__dueheap;

/* A channel's hot state: its egress port at the source vertex, the link and
 * the packets on it, in two cache lines (line 1: every arrival and
 * transmission; line 2: serialization and per-packet telemetry). Per-class
 * state is in net__cq / net__ci, the rest in net__cold. */
typedef struct net__chan {
  simtime_ps busy_until; /* end of the current serialization */
  simtime_ps wake_at;    /* pending wake event; SIM_TIME_MAX: none */
  simtime_ps lat;        /* propagation + forwarding latency of the vertex entered */
  net__fentry *fl;       /* packets on the link: ring of fl_cap (a power of two) */
  uint32_t fl_head, fl_n, fl_cap;
  uint32_t dst;     /* vertex entered */
  uint32_t bytes;   /* queued, all classes */
  uint32_t qp_head; /* source port: ring of queue pairs with data to send */
  uint8_t fc;       /* net__fc into dst */
  uint8_t dst_cut;  /* dst forwards cut-through */
  uint8_t lflags;   /* NET__L_*: ECN marking, link down, bit errors */
  uint8_t nonempty; /* classes with packets */
  uint8_t paused;   /* classes stopped by PFC from dst */
  uint8_t pad_rr;   /* (unused; deficit round robin keeps its pointers in net__be.rr) */
  uint8_t cblocked; /* waiting for credits */
  uint8_t xoff;     /* PFC input at dst: classes PAUSEd toward src */
  /* line 2 */
  simtime_ps ser_ps; /* serialization cache: ser_bytes -> ser_ps */
  simtime_ps busy;   /* summed serialization time */
  uint64_t tx_bytes, tx_pkts;
  double q_integral; /* bytes x ps, for the time-averaged depth */
  simtime_ps q_last;
  simtime_ps hdr_ps; /* serialization of preamble + headers (cut-through head) */
  uint32_t ser_bytes;
  uint32_t max_bytes;
} net__chan;

_Static_assert(sizeof(net__chan) == 128, "net__chan is two cache lines");

/* Per (channel, class): the egress queue, the credits the source holds,
 * the class's deficit (deficit round robin, bytes; 0 whenever the queue is
 * empty) and its deepest queue (telemetry). */
typedef struct net__cq {
  uint32_t head, tail; /* packet list (net__be.pnext) */
  uint32_t bytes;
  int32_t credits;
  int32_t deficit;
  uint32_t max_bytes;
} net__cq;

/* Per (channel, class): ingress accounting at the destination (PFC). */
typedef struct net__ci {
  uint32_t bytes, hdrm;
} net__ci;

/* Rarely touched per-channel state. */
typedef struct net__cold {
  rate_bps bps;
  simtime_ps prop;     /* propagation */
  uint32_t kmin, kmax; /* ECN thresholds at this port, bytes */
  uint32_t hdrm;       /* PFC input at dst: headroom in use, all classes */
  uint32_t src;
  uint32_t qp_count; /* queue pairs in the source ring */
  int32_t credit0;   /* credits per class granted by dst */
  uint8_t telemetry; /* counts toward max_queue_bytes (switch and NIC ports) */
  net__ring ring;
  uint64_t pauses_rx, drops, marks_n;
  simtime_ps paused_ps; /* summed time classes spent paused */
  /* faults (be_ops.link_state): the link's physical state, both channels */
  rate_bps bps0;      /* nominal rate */
  double ber;         /* bit error rate; 0: none */
  double loss_p;      /* loss probability of a loss_wire-byte packet */
  uint32_t loss_wire; /* (down: net__chan.lflags & NET__L_DOWN) */
  uint32_t run_max;   /* deepest queue before the sampler's last reset of max_bytes */
  simtime_ps paused_since[NET__CLASSES];
  simtime_ps down_at; /* par: when the link last went down (SIM_TIME_MAX: never); the
                       * receiving end loses what was on the wire then */
} net__cold;

typedef struct net__vert {
  uint64_t shared_size, shared_used; /* switch shared pool */
  uint32_t reserve;                  /* per queue */
  uint32_t hdrm_size;                /* PFC headroom per ingress port */
  uint32_t rr;                       /* spray round robin */
  uint8_t is_switch;
  uint8_t tier;
  uint16_t reorder; /* GPU: reordering degree learnt as a receiver
                     * (transport.c nack_lost); 0: none seen */
} net__vert;

typedef struct net__range {
  uint32_t lo, hi; /* [lo, hi) */
} net__range;

typedef struct net__flowlet {
  simtime_ps last;
  uint32_t ch;
} net__flowlet;

typedef struct net__qp {
  /* identity, fixed for the life of the phase */
  uint32_t phase, xfer, gen;
  uint32_t npkts, last_payload;
  uint64_t bytes, hash;
  const uint32_t *path[2]; /* [0] data, [1] ACK direction (copies of net__qhot's) */
  uint8_t plen[2];
  uint8_t cls;
  uint8_t in_ring, done, armed;
  uint8_t retries;    /* timeouts in a row (reset by progress) */
  uint8_t failed;     /* this repetition's transfer was reported failed */
  uint32_t armed_pos; /* index in its net__armset while armed */
  uint32_t job;       /* the job holding its source GPU (be_ops.job_owners); 0 without */
  uint32_t vstamp;    /* the last pause that counted it as a victim (net__be.pause_serial) */
  uint16_t epoch;     /* repetitions started, modulo 2^16 (mirrored in net__qhot) */
  rate_bps max_rate;
  simtime_ps start; /* of the current repetition */
  /* sender */
  uint32_t snd_nxt, snd_una, snd_max;
  uint32_t rr_next, rr_prev;
  simtime_ps next_send, last_progress, rto_cur;
  simtime_ps stalled_since; /* last progress before the current run of timeouts */
  rate_bps pace_rate;
  uint32_t pace_wire;
  simtime_ps pace_ps;
  net__range *rtx;
  uint32_t nrtx, rtx_cap;
  cc_state cc;
  /* receiver */
  uint32_t rcv_nxt, acked, nack_psn;
  uint32_t rcv_high; /* 1 + highest PSN received */
  uint32_t nack_hi;  /* selective: holes below it were reported (NACKed) */
  uint32_t ooo_words;
  uint64_t *ooo; /* received beyond rcv_nxt (selective), lazily allocated */
  simtime_ps last_cnp;
  net__flowlet *fl;  /* [2][TOPO_MAX_PATH], adaptive routing with flowlets only */
  uint32_t fl_stamp; /* flowlet state resets so far (kept across reuse of the id):
                      * par keeps flowlets per (switch, queue pair) stamped with it */
} net__qp;

/* What every hop needs of a queue pair, packed (32 bytes, two per line):
 * the per-hop path lookup never touches the full net__qp. */
typedef struct net__qhot {
  const uint32_t *path; /* data path; the ACK path at path + TOPO_MAX_PATH */
  uint32_t dnic[2];     /* NIC index at the fabric exit, per direction; NONE: no fabric */
  uint8_t plen[2];
  uint16_t epoch; /* repetitions started, modulo 2^16 */
  uint32_t pad[3];
} net__qhot;

typedef struct net__phase {
  const be_xfer *x;
  size_t n;
  uint64_t repeat, reps_done;
  be_done_fn done;
  void *ctx;
  uint32_t *qp;    /* per transfer: queue pair, NONE when it never enters the network */
  uint32_t *paths; /* flat storage the queue pairs point into */
  size_t paths_cap, qp_cap;
  size_t active;         /* queue pairs of this repetition not yet complete */
  uint64_t bytes;        /* payload of one repetition */
  uint64_t failed, lost; /* this repetition: transfers failed, their bytes not delivered */
  uint64_t cls_bytes[NET__CLASSES], cls_lost[NET__CLASSES]; /* the same by traffic class */
  bool live;
} net__phase;

/* Telemetry beyond be_stats (tests, benchmarks). */
typedef struct net__ext {
  uint64_t pfc_storms;     /* pauses that outlasted fabric.pfc.watchdog */
  uint64_t headroom_drops; /* lossless drops: PFC headroom overflowed (should stay 0) */
  uint64_t acks, nacks, timeouts, duplicates;
  uint64_t stale;        /* packets of a finished repetition (or failed or failed-over queue
                          * pair) dropped in flight */
  uint64_t qp_errors;    /* queue pairs that exhausted their retries (transfer failed) */
  uint64_t no_route;     /* transfers failed at a reroute: no path left */
  uint64_t link_drops;   /* packets lost on or routed into a link that is down */
  uint64_t ber_drops;    /* packets corrupted by bit errors */
  uint64_t reroutes;     /* be_ops.reroute calls */
  uint64_t pkts_alloc;   /* packet pool capacity (high-water) */
  uint64_t inflight_max; /* most packets alive at once */
  bool deadlock;         /* transfers left with nothing scheduled */
} net__ext;

typedef struct net__port_stats {
  uint64_t tx_bytes, tx_pkts, pauses_rx, drops, ecn_marks;
  simtime_ps busy, paused;
  uint32_t max_bytes;
  double avg_bytes; /* time-averaged queue depth */
} net__port_stats;

/* Queue pairs with a retransmission timer armed: scanned every RTO/16,
 * not one event each (transport.c). One per source vertex on both engines. */
typedef struct net__armset {
  uint32_t *q;
  uint32_t n, cap;
} net__armset;

/* A source vertex's retransmission scans on the sequential engine, as the
 * parallel engine runs them (transport.c): its armed queue pairs; `at`, its
 * next scan while the scans run (they stop at one that finds the set
 * empty); `ev`, that scan's event while the set is not empty (none after:
 * no timer outlives the traffic, and a re-arm before `at` takes it again). */
typedef struct net__vscan {
  net__armset set;
  simtime_ps at;
  ev_id ev;
} net__vscan;

typedef struct net__samp net__samp; /* sample.c */
typedef struct net__par net__par;   /* parallel.c */

/* Reachability cache of dynamic routing under faults (route.c). */
typedef struct net__reach {
  uint64_t key; /* vertex << 32 | destination NIC */
  uint32_t gen; /* valid when equal to net__be.reach_gen */
  uint8_t ok;
} net__reach;
enum { NET__REACH_SLOTS = 1 << 14 };

typedef struct net__be {
  be_backend base; /* first: be_backend * <-> net__be * */
  const topo *t;
  /* parameters */
  cfg_routing routing;
  cfg_recovery recovery;
  bool dynamic; /* routing decided per packet at switches */
  bool spray_rr;
  bool lossy;             /* the fabric can drop (NACK on gaps); set by a lossy fault too */
  bool ect;               /* data packets are ECN-capable */
  uint32_t mtu, hdr, pre; /* payload per packet, header bytes, preamble+IFG */
  uint32_t ack_frame, cnp_frame;
  uint64_t xoff, xon; /* PFC: static XOFF (0: dynamic), resume offset */
  double alpha;       /* dynamic threshold factor */
  double pmax;
  simtime_ps rto, cnp_interval, flowlet_gap, watchdog;
  uint32_t ack_every;
  const cc_ops *cc;
  cc_params ccp;
  /* traffic classes (fabric.classes, net.c setup_classes) */
  uint8_t top[256]; /* eligible classes -> those of its highest priority level */
  uint8_t nlevels;  /* distinct priority levels */
  uint8_t level_of[NET__CLASSES];
  uint8_t lossless; /* classes lossless at switch inputs (PFC; credits on InfiniBand) */
  int32_t quantum[NET__CLASSES]; /* deficit round robin: weight x the largest frame */
  double cls_pmax[NET__CLASSES];
  uint32_t *ecn_k; /* [channel * 8 + class] {kmin, kmax} pairs; NULL: net__cold's for all */
  double share[NET__CLASSES]; /* of each switch's shared buffer (fabric.classes buffer) */
  uint64_t *pool_used; /* [vertex * 8 + class] shared bytes; NULL: no class holds less than 1 */
  uint8_t *rr;         /* [channel * 8 + level] deficit round robin's current class */
  /* pause victims (be_ops.job_owners; NULL/0: not asked) */
  uint32_t *gpu_job;
  uint32_t njobs;
  uint32_t pause_serial;
  uint64_t *jp_caused, *jp_pauses, *jp_flows; /* see be_job_pauses */
  simtime_ps *jp_paused;
  uint32_t *pcause; /* [channel * 8 + class]: the job whose PAUSE holds it now */
  uint32_t *vjob;   /* [vertex * njobs + job]: bytes of the job buffered at the vertex */
  /* sequential engine: the causes of XOFF frames in flight, a FIFO per
   * (channel, class) (port.c cause_push); NULL: no job owners */
  uint32_t *pfq_head, *pfq_tail; /* [channel * 8 + class]: first and last node, or NET__NONE */
  net__pfcause *pfq;             /* the node pool */
  uint32_t pfq_n, pfq_cap, pfq_free;
  uint64_t *jo; /* be_ops.job_pauses' answer: caused, paused, pauses, flows */
  /* graph */
  net__chan *ch; /* 64-byte aligned (ch_mem is the allocation) */
  void *ch_mem;
  net__cq *cq; /* [channel * 8 + class] */
  net__ci *ci; /* [channel * 8 + class] */
  net__cold *cold;
  uint32_t nch;
  net__vert *vx;
  net__dueheap *due; /* per vertex (sequential engine): what waits for its instant's order */
  uint16_t *due_n;   /* 2^due_bits (sequential engine): events due, by (vertex, time) hash */
  uint32_t due_bits; /* about two slots per channel: one arrival event each at most */
  uint32_t *sends;   /* per vertex (sequential engine): packets and PFC frames sent (their
                      * order at an instant); not in net__vert, which stays 32 bytes */
  uint32_t nv;
  /* packet pool: chunks of 2^NET__PKT_SHIFT, stable addresses */
  net__pkt **pchunk;
  uint32_t **nchunk; /* queue links, same chunking */
  uint32_t npchunk, pchunk_cap;
  uint32_t pkt_free;
  uint64_t pkts_live;
  /* queue pairs */
  net__qp *qp;
  net__qhot *qh; /* parallel to qp */
  uint32_t nqp, qp_cap;
  uint32_t *qp_free;
  uint32_t nqp_free;
  net__vscan *vscan; /* sequential engine: per vertex, made at the first arm */
  simtime_ps scan_period;
  /* A queue pair's end reaches its phase end_gap later (both engines): the
   * smallest latency of a link with one (1 us if none), the parallel
   * engine's lookahead, the time within which every rank hears of it. */
  simtime_ps end_gap;
  /* phases */
  net__phase *ph;
  uint32_t nph, ph_cap;
  uint32_t active_phases;
  /* per channel: transfers routed over it now (max_link_sharing) */
  uint32_t *sharing;
  sim_rng *vseq;             /* sequential: [vertex * 2 + NET__RNG_ECN or _ROUTE], the
                              * parallel engine's streams, each made at its first draw */
  uint8_t *vseq_made;        /* ... whether vseq[i] is made */
  sim_rng *vber;             /* sequential: per vertex, as the parallel engine's (bit errors
                              * are faults: made at the first degraded link with a BER) */
  const topo_health *health; /* routing's view after the last reroute; NULL: all up */
  topo_health health_own;    /* the copy health points to */
  net__reach *reach;         /* NET__REACH_SLOTS, made at the first reroute */
  uint32_t reach_gen;        /* bumped at every reroute */
  uint32_t links_down;       /* links physically down now */
  uint32_t cands[NET__MAX_CANDS];
  be_stats st;
  be_fct fct;
  net__ext ext;
  net__samp *samp; /* packet telemetry (be_ops.port_sampling); NULL: off */
  /* the parallel engine (parallel.c); NULL: the sequential engine (ev.c) */
  net__par *par;
  sim_rng *vrng;           /* par: [vertex * 3 + NET__RNG_*], one stream per vertex */
  simtime_ps par_now;      /* par: the time of the event or global action running */
  const simtime_ps *now;   /* the clock net__now reads: ev.c's, or par_now */
  bool par_in_lp;          /* par: an LP's event is running (else a global action or the
                            * window hook: every rank alike) */
  const uint32_t *par_rcv; /* par, during a reroute: every queue pair's receiver's next PSN */
} net__be;

enum { NET__RNG_ECN, NET__RNG_ROUTE, NET__RNG_BER };

/* A random stream of vertex v (ECN marking at its egress ports, routing
 * choices, bit errors on links it sends on). Both engines draw from the
 * vertex's own streams ("net.v<v>.ecn", ".route", ".ber"), each vertex's
 * draws in its events' order, so ECN marks, adaptive and spraying choices
 * and a fault's losses are the same packets on both. The sequential engine
 * makes a stream at its first draw (net__vseq_make). */
sim_rng *net__vseq_make(net__be *n, unsigned k, uint32_t v);
static inline sim_rng *net__rng(net__be *n, unsigned k, uint32_t v) {
  if (n->par) return &n->vrng[(size_t)v * 3 + k];
  if (k == NET__RNG_BER) return &n->vber[v];
  size_t i = (size_t)v * 2 + k;
  return n->vseq_made[i] ? &n->vseq[i] : net__vseq_make(n, k, v);
}
static inline simtime_ps net__now(const net__be *n) { return *n->now; }

static inline net__pkt *net__pkt_at(net__be *n, uint32_t i) {
  return &n->pchunk[i >> NET__PKT_SHIFT][i & ((1u << NET__PKT_SHIFT) - 1)];
}
static inline uint32_t *net__pnext(net__be *n, uint32_t i) {
  return &n->nchunk[i >> NET__PKT_SHIFT][i & ((1u << NET__PKT_SHIFT) - 1)];
}
static inline net__cq *net__cq_at(net__be *n, uint32_t c, uint32_t k) {
  return &n->cq[(size_t)c * NET__CLASSES + k];
}
/* The flow control class k meets at channel c's destination. */
static inline net__fc net__fc_of(const net__be *n, const net__chan *ch, uint32_t k) {
  if (ch->fc != NET__FC_CLASS) return (net__fc)ch->fc;
  return (n->lossless >> k) & 1 ? NET__FC_PFC : NET__FC_LOSSY;
}

/* net.c */
uint32_t net__pkt_alloc(net__be *n);
void net__pkt_free(net__be *n, uint32_t i);

/* port.c */
/* Queue packet i (routed to channel c, admitted) and kick the port. */
void net__enqueue(net__be *n, uint32_t c, uint32_t i);
/* Try to start a transmission on channel c now; arranges its own wake. */
void net__port_kick(net__be *n, uint32_t c);
void net__ensure_wake(net__be *n, uint32_t c, simtime_ps at);
/* May port c start a packet of class cls and `frame` bytes now (not PAUSEd,
 * credits)? When credits lack, a wake for their return is arranged. */
bool net__can_send(net__be *n, uint32_t c, uint32_t cls, uint32_t frame, simtime_ps now);
/* Close the telemetry integrals at `now` (stats time). */
void net__port_settle(net__be *n, simtime_ps now);
/* Summed paused time of channel c's classes up to now, pauses still on included. */
simtime_ps net__paused_until(const net__be *n, uint32_t c, simtime_ps now);
/* Deepest queue of channel c over the run. */
static inline uint32_t net__chan_max_queue(const net__be *n, uint32_t c) {
  return n->ch[c].max_bytes > n->cold[c].run_max ? n->ch[c].max_bytes : n->cold[c].run_max;
}

/* sample.c: the sampler follows whether any phase is active */
void net__samp_active(net__be *n);
void net__samp_idle(net__be *n);
void net__samp_free(net__samp *s);
/* be_ops.port_sampling, port_gather, port_samples (fabsim/backend.h) */
int net__port_sampling(be_backend *b, const be_port_spec *spec);
void net__port_gather(be_backend *b, simtime_ps end);
int net__port_samples(be_backend *b, simtime_ps end, be_port_samples *out);

/* Link l's physical state (be_ops.link_state); see port.c. */
void net__link_state(be_backend *b, uint32_t link, double rate_factor, double ber);

/* route.c */
/* Data path [0] and ACK path [1] for a transfer into out (capacity
 * 2 * TOPO_MAX_PATH); lengths in len. SIM_OK, or an error when unroutable. */
int net__paths(net__be *n, const be_xfer *x, uint32_t *out, uint8_t len[2], uint32_t dnic[2]);
/* be_ops.reroute: every live queue pair moves to its path over h. */
void net__reroute(be_backend *b, const topo_health *h);
/* The channel packet p leaves vertex v by; NONE when a switch has no next
 * hop left toward its destination (after a reroute: dropped). */
uint32_t net__route(net__be *n, uint32_t v, net__pkt *p, const net__qhot *h);

/* Run packet i's arrival by channel c at its vertex (it is off the link). */
void net__arrive(net__be *n, uint32_t c, uint32_t i);
/* A port's wake, a PFC frame and a credit return at the port's vertex. */
void net__wake(net__be *n, uint32_t c);
/* job: the PAUSE's cause (be_job_pauses; 0 without owners) */
void net__pfc_rx(net__be *n, uint32_t c, uint32_t cls, bool on, uint32_t job);
void net__credit_rx(net__be *n, uint32_t c, uint32_t cls, uint32_t bytes);

/* parallel.c: the parallel engine's side of the model (n->par set) */
/* Is vertex v on this rank? */
bool net__par_owns(const net__be *n, uint32_t v);
/* Events: a port's wake, packet i onto channel c arriving at `at` (the
 * packet is copied into the event and freed here), a PFC frame and a credit
 * return from c's destination to its source, arriving at `at`. */
void net__par_wake(net__be *n, uint32_t c, simtime_ps at);
void net__par_arrival(net__be *n, uint32_t c, uint32_t i, simtime_ps at);
void net__par_pfc(net__be *n, uint32_t c, uint32_t cls, bool on, uint32_t job, simtime_ps at);
void net__par_credit(net__be *n, uint32_t c, uint32_t cls, uint32_t bytes, simtime_ps at);
/* The flowlet state of switch v for queue pair qi in direction dir (par:
 * per switch, as a switch's own table; the sequential engine keeps one per
 * hop of the path). */
net__flowlet *net__par_flowlet(net__be *n, uint32_t v, uint32_t qi, unsigned dir);
/* Retransmission timers per source vertex: qi's set, and a scan of it
 * arranged if none is pending. */
net__armset *net__par_armset(net__be *n, uint32_t qi);
void net__par_scan_soon(net__be *n, uint32_t qi);
/* A queue pair's end, at its sender: completed, or failed with `cause`;
 * the phase hears of it at the next window boundary (phase.c's
 * net__phase_end). */
void net__par_qp_end(net__be *n, uint32_t qi, const char *cause);
int net__par_create(net__be *n, sim_error *err);
void net__par_destroy(net__be *n);
void net__par_stats(net__be *n, be_stats *st, net__ext *ext);
/* v[0 .. count) summed over the ranks, in place (a collective). */
void net__par_sum_u64(net__be *n, uint64_t *v, size_t count);
/* be_ops.parallel_info: false on the sequential engine (n->par NULL) */
bool net__par_info(const be_backend *b, be_parallel_info *out);

/* transport.c */
void net__qp_reset(net__be *n, net__qp *q, simtime_ps now);
/* Source port c asks its queue pairs for the next packet; NONE if none may
 * send now (a pacing wake is arranged). */
uint32_t net__qp_pull(net__be *n, uint32_t c, simtime_ps now);
/* qi has something to send: into its source port's ring, and the port
 * kicked (parallel engine: on its sender's rank only, a no-op elsewhere). */
void net__qp_activate(net__be *n, uint32_t qi);
/* Stop watching qi's timeout (it completed or is released). */
void net__qp_disarm(net__be *n, uint32_t qi);
/* Stop qi's sender for good (completed or failed): out of its port's ring,
 * nothing to retransmit, timer disarmed. */
void net__qp_stop(net__be *n, uint32_t qi);
/* Take qi out of its source port's ring (before its path changes). */
void net__qp_unring(net__be *n, uint32_t qi);
/* The timeouts due at now among the queue pairs of set s: each goes back,
 * or gives up (and leaves the set). */
void net__armset_scan(net__be *n, net__armset *s, simtime_ps now);
/* Sequential engine: an event of vertex v at `now` that is ordered as a
 * port wake (NET__ORD_WAKE: a retransmission scan) goes once behind what
 * is due at v this picosecond: false when it must (the caller schedules
 * itself again at now), else true, what was due at v having run (port.c). */
bool net__wake_turn(net__be *n, uint32_t v, simtime_ps now, bool deferred);
/* Packet i has reached the end of its path. */
void net__deliver(net__be *n, uint32_t i);

/* phase.c */
void net__qp_complete(net__be *n, uint32_t qi);
/* The part of a queue pair's end that the phase sees (every rank, at the
 * window boundary after it, in (time, queue pair) order): its FCT, link
 * sharing, failure report, and the repetition's end `gap` later (a
 * global event, scheduled at at + gap): end_gap for an end at the sender
 * (its last ACK, its retry limit), 0 for one decided by a global action (a
 * reroute), alike in both engines. */
bool net__phase_end(net__be *n, uint32_t qi, simtime_ps at, const char *cause, uint64_t delivered,
                    simtime_ps gap); /* true: its repetition ended */
/* qi's transfer fails now with `cause` (static string), at its sender (a
 * transport event: its phase hears of it end_gap later): reported through
 * be_backend.on_failure, counted in be_stats.transfers_failed, and done for
 * its phase; its packets in flight become stale. */
void net__qp_fail(net__be *n, uint32_t qi, const char *cause);
/* Drop every packet of qi in flight (its epoch moves on); the sender's state
 * is kept (a repetition in progress continues with new packets). */
void net__qp_orphan_packets(net__be *n, uint32_t qi);
void net__submit_phase(be_backend *b, const be_xfer *x, size_t n, uint64_t repeat, be_done_fn done,
                       void *ctx);

/* Introspection for tests and benchmarks. */
void net__ext_stats(const be_backend *b, net__ext *out);
int net__port_stats_of(const be_backend *b, uint32_t ch, net__port_stats *out);

#ifdef __cplusplus
}
#endif
#endif
