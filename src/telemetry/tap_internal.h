/* Internals of the telemetry tap, shared by its log (tap.c) and its replay
 * (tap_replay.c). Not a public interface. */
#ifndef FABSIM_TAP_INTERNAL_H
#define FABSIM_TAP_INTERNAL_H

#include "fabsim/tel_tap.h"
#include "telemetry/tap_nic.h"
#include "telemetry/tel_internal.h"

typedef struct tap_entry {
  uint32_t ch;
  uint64_t bytes; /* all repetitions */
} tap_entry;

/* A logged phase: its channels' bytes and its GPUs as entries (first,
 * count; gfirst, gcount), or, for a window of a pool's quotient (quot > 0),
 * the quotient tap->tq[quot - 1], the window's segments and the repeat. */
typedef struct tap_phase {
  simtime_ps start, end; /* end: SIM_TIME_MAX while running */
  size_t first, count;   /* entries */
  size_t gfirst, gcount; /* GPUs */
  uint32_t quot, slo, shi;
  uint64_t repeat;
  void *pending; /* its tap_done while running (freed at destroy if never done) */
  /* rerouted (be_reroute_rec): its ports are its entries over [pstart, end),
   * a window of a quotient's too; what it moved before pstart is in pieces
   * (tel_tap.pc). GPUs and NICs keep [start, end). */
  bool moved;
  simtime_ps pstart;
  bool shared; /* its entries are a list other phases may name (tap_intern): copied before a change
                */
} tap_phase;

/* Lists of entries (or GPUs) logged once: a phase whose list equals one
 * logged before names that one, so phases that repeat (a training run's
 * steps) cost their times, not their channels again. Open addressing over
 * the lists' hashes. */
typedef struct tap_lists {
  uint64_t *hash; /* 0: an empty slot */
  size_t *first, *count;
  size_t cap, n;
} tap_lists;

enum { TAP_MAX_EVENTS = 64 };

typedef struct tap_event {
  simtime_ps at;
  uint32_t ch, users; /* ch UINT32_MAX: the "more phases" note */
} tap_event;

/* A pool's quotient (be_quot) as the tap keeps it. While its pool is live,
 * q is whole (the slices' windows are found in it, and the inner backend
 * may use it); once the pool is released only what the replay needs stays:
 * the segments' runs and each class's members (channels, GPUs) ascending. */
typedef struct tap_quot {
  be_quot q;      /* live: whole; released: its tables of classes by id and per segment */
  bool released;  /* the pool is gone: never matched again */
  uint32_t *nics; /* live: per transfer of the pool, the NIC it leaves from and the one it
                     arrives at (UINT32_MAX: none), for the NIC log (tap_nic.c) */
  uint32_t *cc_moff, *cc_mem; /* released: class c's channels cc_mem[cc_moff[c] .. c + 1) */
  uint32_t *gc_moff, *gc_mem; /* released: the same for GPU classes */
} tap_quot;

/* The per-flow log (tap_flows.c): rows kept, at most its max. */
typedef struct tap_flows tap_flows;
/* One row (start: the first repetition's) and its later repetitions,
 * `period` apart, each ending `delivered` after its start. */
void tap__flows_add(tap_flows *f, const tel_flow *row, simtime_ps period, uint64_t reps,
                    simtime_ps delivered);
void tap__flows_free(tap_flows *f);

struct tel_tap {
  be_backend base; /* first: be_backend * <-> tel_tap * */
  be_backend *inner;
  be_ops ops; /* tap_ops less what inner does not have */
  tap_event *ev;
  size_t nev, evcap;
  tap_phase *ph;
  size_t nph, phcap;
  tap_phase *pc; /* pieces of rerouted phases: the ports' bytes before a reroute (no GPUs) */
  size_t npc, pccap;
  tap_entry *ent;
  size_t nent, entcap;
  uint32_t *gpus;
  size_t ngpus, gcap;
  tap_lists ent_lists, gpu_lists; /* the entry lists and GPU lists logged (tap_intern) */
  uint64_t *ch_bytes;             /* scratch per channel */
  uint32_t *ch_users;             /* scratch per channel */
  uint32_t *touched;              /* scratch: channels touched by the phase being logged */
  uint64_t *gpu_stamp;            /* last phase (index + 1) that listed the GPU */
  uint32_t events, last_ch, last_users;
  /* the backend's routing (fabric.routing), so bytes land on the ports the
   * analytic and flow fidelities use (topo_split_of): adaptive per flowlet
   * counts the transfers of the phases in flight as they do (load); spray
   * and adaptive per packet spread each transfer evenly over the links of
   * the pools it crosses (pool_bytes, pool_users scratch). The packet
   * fidelity decides those per packet: there the ports are the fluid
   * approximation of the same policy. */
  topo_split split;
  uint32_t *load;
  uint64_t *pool_bytes;
  uint32_t *pool_users, *pool_touched, npools;
  struct tap_pool *tp; /* slices of a pool without cuts (static and ECMP): NULL until one comes */
  /* slices with cuts (static and ECMP): the pools' quotients, kept for the replay */
  tap_quot **tq;
  size_t ntq, tqcap;
  tap_quot *live_q;       /* the live pool's, or NULL */
  const be_xfer *no_quot; /* a live pool whose quotient could not be built */
  tel__niclog nic;        /* each phase's transfers on their NICs, when they moved (tap_nic.c) */
  /* routing's view as of the last reroute (a copy: the caller's changes
   * before the next), so a phase's bytes land on the paths the backend uses
   * and a transfer left without a route moves none; NULL: no fault yet.
   * Each phase in flight holds the view it was routed on (refs), so a
   * transfer that fails later takes its bytes off those same channels. */
  struct tap_health *health;
  uint8_t *link_down;     /* per link: 1 while down (link_state factor 0); NULL: none yet */
  uint32_t link_changing; /* the link whose state changes in the call under way (UINT32_MAX: */
  uint8_t down_before, down_after; /*   none), as it was and as it will be */
  tap_flows *flows; /* output.flows: the per-flow log (tel_tap_flows_keep); NULL: none */
};

/* Mark index idx of the replay: a phase (idx < nph) or a piece. */
static inline const tap_phase *tap__phase_at(const tel_tap *tap, size_t idx) {
  return idx < tap->nph ? &tap->ph[idx] : &tap->pc[idx - tap->nph];
}

/* The members of tq's classes (cc_moff ..., gc_moff ...), once. */
void tap__quot_members(tap_quot *tq);
/* Whether ch belongs to a fabric link (endpoint or switch to switch). */
bool tap__is_fabric_channel(const topo *t, uint32_t ch);
/* The shared-channel events (tel_tap_replay). */
void tap__replay_events(const tel_tap *tap, tel *tl);

#endif
