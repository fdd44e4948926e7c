/* Flow fidelity internals, shared by the solver (net.c), the backend (flow.c),
 * the tests and the benchmark. Not a public interface.
 *
 * The network of flows (flow__net) owns every flow in flight, the per-channel
 * lists of the flows crossing each channel, and the max-min fair solver. The
 * backend owns phases, repetitions and events; it adds and removes flows and
 * asks for a solve, then applies the rates the solver reports as changed.
 */
#ifndef FABSIM_FLOW_INTERNAL_H
#define FABSIM_FLOW_INTERNAL_H

#include "fabsim/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One transfer in flight. Lives in the net's pool, addressed by a uint32 id
 * (ids are reused, LIFO, after flow__net_remove). */
typedef struct flow__flow {
  /* backend-owned state (the net never reads it) */
  double rate;          /* bits/s in force since t_last */
  double rem;           /* bits left to drain at t_last */
  simtime_ps t_last;    /* when rem was last brought up to date */
  simtime_ps t_end;     /* scheduled drain end; SIM_TIME_MAX: none */
  ev_id ev;             /* pending drain end, or give-up when t_end is none (flow.c); 0: none */
  uint32_t phase, xfer; /* owner phase id, transfer index within it */
  /* net-owned state */
  double new_rate;             /* result of the last solve that covered this flow */
  const uint32_t *path;        /* channels; storage owned by the caller of add */
  uint32_t n;                  /* path length, 1..TOPO_MAX_PATH */
  uint32_t seen;               /* solve epoch that collected it into a component */
  uint32_t frozen;             /* solve epoch that fixed its rate */
  uint8_t cls;                 /* traffic class 0..7 (be_xfer.tclass) */
  uint32_t pos[TOPO_MAX_PATH]; /* index of this flow in each path channel's list */
} flow__flow;

typedef struct flow__chan {
  uint32_t *ids; /* flows crossing this channel, unordered */
  uint32_t n, cap;
} flow__chan;

typedef struct flow__net {
  const topo *t;
  uint32_t nch;     /* channels: 2 x links, then spray pools (topo_pool_count) if any */
  uint32_t nlinkch; /* 2 x links */
  double *cap;      /* per channel, bits/s */
  flow__chan *ch;   /* per channel flow lists */
  /* flow pool */
  flow__flow *fl;
  uint32_t nfl, flcap; /* high-water, capacity */
  uint32_t *free_ids;
  uint32_t nfree;
  uint32_t live;        /* flows in the network */
  uint32_t max_sharing; /* most flows seen on one channel at once */
  /* channels touched by adds and removes since the last solve */
  uint32_t *dirty;
  uint32_t ndirty;
  uint8_t *is_dirty;
  /* solve scratch: per channel arrays sized once, flow arrays grown to the
   * high-water mark, so a solve never allocates after warm-up */
  uint32_t epoch;
  uint32_t *ch_epoch;
  double *rem, *key; /* capacity left; fair share rem / cnt (heap key) */
  uint32_t *cnt;     /* unfrozen flows on the channel */
  uint32_t *heap, *hpos, hn;
  uint32_t *comp_ch;
  uint32_t ncomp_ch;
  uint32_t *comp_fl;
  size_t comp_fl_cap, ncomp_fl;
  uint32_t comp_cm;  /* traffic classes of the collected flows (mask) */
  uint32_t *changed; /* output of a solve: flows whose new_rate != rate */
  size_t changed_cap, nchanged;
  /* traffic classes (flow__net_set_classes): strict priority level and
   * weight of each class; scratch of the classed solve, [channel * 8 +
   * class], made at its first use: unfrozen flows, frozen rates summed and
   * each class's per-flow share; per channel the rate taken by higher
   * levels */
  uint32_t prio[8];
  double weight[8];
  uint32_t *cu;
  double *cf, *cs, *cused;
  uint64_t class_solves, class_fallbacks; /* components with two classes or more; see net.c */
  /* counters (benchmarks, tests) */
  uint64_t solves, solved_flows, solved_channels;
} flow__net;

void flow__net_init(flow__net *net, const topo *t);
/* With spray pools: channel ids past the links are pools of links that
 * sprayed flows load alike (topo_spray_channel), of topo_pool_bps capacity. */
void flow__net_init_pools(flow__net *net, const topo *t, bool pools);
void flow__net_free(flow__net *net);
/* Add a flow over `path` (n >= 1 distinct channels, kept alive by the caller
 * until the flow is removed). Its backend fields are zeroed except t_end
 * (SIM_TIME_MAX). Marks the path dirty. O(n) amortized. */
uint32_t flow__net_add(flow__net *net, const uint32_t *path, uint32_t n);
/* The same for a flow of traffic class cls (flow__net_add: class 0). */
uint32_t flow__net_add_class(flow__net *net, const uint32_t *path, uint32_t n, uint8_t cls);
/* The classes' strict priority levels and weights (fabric.classes; by
 * default 7 and 6 strict at levels 2 and 1, the rest level 0, weight 1). */
void flow__net_set_classes(flow__net *net, const cfg_class_table *t);
/* Change channel c's capacity (faults: 0 = down); marks it dirty. O(1). */
void flow__net_set_cap(flow__net *net, uint32_t c, double cap);
/* Remove a flow and mark its path dirty. O(n^2) with n the path length. */
void flow__net_remove(flow__net *net, uint32_t id);
static inline flow__flow *flow__net_flow(flow__net *net, uint32_t id) { return &net->fl[id]; }
/* Max-min fair rates for every flow in a component touching a dirty channel;
 * the flows whose rate changes are listed in net->changed. See net.c for the
 * algorithm and its cost. */
void flow__net_solve(flow__net *net);

/* Test hook: enable (default) or disable the repetition shortcut. */
void flow__set_shortcut(be_backend *b, bool on);
/* Benchmark hook: the net of a flow backend, read-only. */
const flow__net *flow__backend_net(const be_backend *b);

#ifdef __cplusplus
}
#endif
#endif
