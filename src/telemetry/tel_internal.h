/* Internals shared by the files of the telemetry module (tel__ prefix).
 *
 *   sampler.c  meters, interval closing, aggregation, rows, totals, top-k
 *   log.c      event log, FCT histogram, training steps
 *   (tap_nic.c, the tap's NIC series, has its own header: tap_nic.h)
 */
#ifndef FABSIM_TEL_INTERNAL_H
#define FABSIM_TEL_INTERNAL_H

#include "fabsim/telemetry.h"

typedef unsigned __int128 tel__u128;

/* An integrated quantity of one entity: a rate (units per ps) that changes
 * at discrete times, plus discrete amounts. `acc` holds what accrued in the
 * interval `touched` since its start (or since the entity joined it), `cum`
 * what accrued since time 0, both up to `last`. An entity not touched in the
 * open interval accrues exactly rate x interval there, which is what lets a
 * close read every entity without writing any. */
typedef struct tel__meter {
  tel__u128 acc, cum;
  tel__u128 backlog, shown; /* line-rate carry (tel_config.carry): what rows could not show
                               yet, and what the last computed row showed (bit-ps) */
  uint64_t rate;
  simtime_ps last;
  uint64_t touched; /* interval index acc belongs to; UINT64_MAX: never */
} tel__meter;

/* A level (queue depth): the current value and the deepest in `touched`. */
typedef struct tel__level {
  uint64_t cur, max_in, max_all;
  uint64_t touched;
} tel__level;

/* A class's value and its members (weighted percentiles). */
typedef struct tel__wval {
  double v;
  uint64_t w;
} tel__wval;

/* Sampling state of one group (GPUs, NICs or ports). */
typedef struct tel__group {
  uint64_t open;         /* index of the open interval */
  simtime_ps open_start; /* open * interval */
  uint64_t touches;      /* entities touched in the open interval */
  bool prev_quiet;       /* the last closed row was full length and untouched */
  bool frozen;           /* max_rows reached: rows stop, totals go on */
  bool backlog;          /* the last computed row took or left a meter's carry */
} tel__group;

typedef struct tel__event {
  simtime_ps at;
  size_t component, kind, effect; /* offsets into the string pool */
  double value;
  uint64_t seq;
} tel__event;

struct tel {
  tel_config c; /* copies of the arrays below */
  rate_bps *port_bps;
  uint32_t *watch; /* watch_ports then watch_nics */
  uint32_t nwatch;
  unsigned observed;
  bool finished, truncated;
  simtime_ps end;
  tel_over over;       /* the first row value above its line rate (over.found) */
  tel_over carried;    /* the first offered above it and carried (tel_config.carry) */
  tel_over carry_last; /* the latest carried: the error when a backlog outlives the run */
  double carry_left;   /* bytes still carried at the end (tel_line_carried) */
  bool rows_closed;    /* tel_close_rows ran */

  /* GPUs: aggregated integrals only (per GPU: its state). */
  uint8_t *gpu_state;
  uint64_t gpu_count[TEL_GPU_NSTATES];
  tel__u128 gpu_acc[TEL_GPU_NSTATES], gpu_cum[TEL_GPU_NSTATES]; /* GPU-ps */
  simtime_ps gpu_last;
  tel__group gpu_g;
  tel_gpu_row *gpu_rows;
  size_t gpu_nrows, gpu_cap;

  tel__meter *nic[2]; /* bits x ps per ps: rate in bit/s; amounts in bit-ps */
  tel__group nic_g;
  tel_nic_row *nic_rows;
  size_t nic_nrows, nic_cap;

  tel__meter *port_bits, *port_pause, *port_ecn;
  tel__level *port_queue;
  tel__group port_g;
  tel_port_row *port_rows;
  size_t port_nrows, port_cap;

  tel_watch_row *watch_rows; /* rows x nwatch */
  size_t watch_cap;          /* in rows */

  double *scratch; /* max(nics, ports) values for percentiles */

  /* Classes (tel__port_classes): ports fed as one; the port meters above
   * are then per class (index: the class). NULL: every port is its own. */
  uint32_t *port_cls, nport_cls, *port_w; /* per port: its class; per class: members */
  rate_bps *port_cls_bps;                 /* per class: its members' line rate */
  uint32_t *nic_cls, nnic_cls, *nic_w;    /* the same for NICs (tel__nic_classes) */
  struct tel__wval *wscratch;             /* (value, members) per class, for percentiles */
  size_t cls_scratch;                     /* entries of wscratch (and at least of scratch) */

  /* log.c */
  tel__event *events;
  size_t nevents, events_cap;
  char *pool;
  size_t pool_len, pool_cap;
  uint64_t fct[TEL_FCT_BUCKETS];
  uint64_t fct_n;
  tel_step *steps;
  size_t nsteps, steps_cap;
  bool step_open;
  tel__u128 step_mark[TEL_GPU_NSTATES];
  simtime_ps step_begin;
  uint64_t step_no;
};

/* Integrate GPU states up to now (no interval closing). */
void tel__gpu_integrate(tel *t, simtime_ps now);
/* Close GPU intervals up to now, then integrate to now. */
void tel__gpu_advance(tel *t, simtime_ps now);
void tel__log_finish(tel *t);
void tel__log_free(tel *t);

/* Ports fed as one: cls[i] is port i's class,
 * ncls classes, each with a member, members of one class alike in line
 * rate. From then on a feed to any member is its class's: feed each class
 * once. Rows, watched entities, totals and the top ports read every entity
 * through its class, so they are what feeding every member alike gives, bit
 * for bit (sums still run in entity order), while closing a row costs
 * O(entities) additions plus O(classes log classes) instead of a meter read
 * per entity and a selection over all of them. Before any feed of the
 * group; copies cls. */
void tel__port_classes(tel *t, const uint32_t *cls, uint32_t ncls);
/* NICs fed as one, the same way: cls[i] is NIC i's class (both directions
 * of a NIC share it); the NIC meters are then per class. A row's total is
 * the exact sum of its NICs' meters, with or without classes. */
void tel__nic_classes(tel *t, const uint32_t *cls, uint32_t ncls);

#endif
