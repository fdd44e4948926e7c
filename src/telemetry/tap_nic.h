/* Private to src/telemetry: the telemetry tap's NIC log (tap_nic.c), shared
 * by tap.c, which feeds it, and tap_nic.c. Like tap.c it knows the backend
 * interface; the sampler (tel_internal.h) does not. */
#ifndef FABSIM_TAP_NIC_H
#define FABSIM_TAP_NIC_H

#include "fabsim/backend.h"
#include "telemetry/tel_internal.h"

typedef struct tel__nic_sum { /* a transfer's reports, summed over its repetitions */
  uint64_t reps;
  simtime_ps sent, delivered; /* offsets in their repetitions */
} tel__nic_sum;

typedef struct tel__nic_run { /* repetitions start, start + period, ... (count of them) */
  simtime_ps start, period;
  uint64_t count;
  size_t next; /* the phase's next run, SIZE_MAX: none */
} tel__nic_run;

typedef struct tel__nic_win {        /* NICs nic .. nic + count - 1 of a phase, one direction */
  uint32_t nic, count : 31, dir : 1; /* dir: TEL_TX, TEL_RX */
  uint64_t bytes;                    /* per repetition, each NIC */
  simtime_ps a, w;                   /* busy over [a, a + w) of each repetition */
} tel__nic_win;

/* A transfer's failures: at most one a repetition. */
typedef struct tel__nic_lost {
  uint64_t bytes, fails;
} tel__nic_lost;

typedef struct tel__nic_phase {
  /* while it runs (then NULL): */
  const be_xfer *x;     /* its transfers (the caller's) */
  const uint32_t *nics; /* per transfer the NIC it leaves from and the one it arrives at
                           (UINT32_MAX: none): `own`, or the tap's (a pool's) */
  uint32_t *own;
  tel__nic_sum *sum;   /* per transfer, from the first report that is not all of it at once */
  tel__nic_lost *lost; /* per transfer, what its failures did not deliver (NULL: none failed) */
  size_t n;
  bool folded; /* its windows are made */
  simtime_ps start, end;
  uint64_t repeat;
  size_t run_first, run_last; /* SIZE_MAX: nothing reported */
  size_t win_first, win_n;
} tel__nic_phase;

/* Phases in the order the tap logs them (index = the tap's phase index). */
typedef struct tel__niclog {
  uint32_t nics; /* NIC ids are below it */
  tel__nic_phase *ph;
  size_t nph, phcap;
  tel__nic_run *run;
  size_t nrun, runcap;
  tel__nic_win *win;
  size_t nwin, wincap;
  void *fold[2];        /* per NIC and direction, folding one phase (lazily allocated) */
  uint64_t *touched[2]; /* bit per NIC: its slot holds this fold's */
  uint32_t *spare;      /* an ended phase's `own`, for the next one */
  size_t spare_cap;
} tel__niclog;

void tel__niclog_init(tel__niclog *l, uint32_t nics);
/* A phase of transfers x[0..n) starts (x is read until it ends); nics: the
 * NICs of each (2 per transfer, read until it ends), or NULL: then the
 * returned array of 2n is the log's, for the caller to fill now. */
uint32_t *tel__niclog_phase(tel__niclog *l, simtime_ps start, uint64_t repeat, const be_xfer *x,
                            size_t n, const uint32_t *nics);
/* A backend's be_xfer_end for transfers [xfer, xfer + n) of a phase in
 * flight: all of it at once (the analytic fidelity) folds the phase now,
 * else summed. O(n). */
void tel__niclog_report(tel__niclog *l, size_t phase, size_t xfer, size_t n, simtime_ps start,
                        simtime_ps period, uint64_t reps, const simtime_ps *delivered,
                        const simtime_ps *latency);
/* A transfer from GPU src to dst of `bytes` failed having delivered
 * `delivered` of them (be_failure): the first phase in flight, not yet
 * folded, with such a transfer moves only what it delivered, so a NIC's
 * series never counts bytes that did not leave it. true with that phase's
 * index and the transfer's (either pointer may be NULL) when one matched.
 * O(phases + n). */
bool tel__niclog_failed(tel__niclog *l, uint32_t src, uint32_t dst, uint64_t bytes,
                        uint64_t delivered, size_t *phase, size_t *xfer);
/* Transfer `xfer` of phase `phase` while the phase is in flight (NULL
 * after it ended). */
const be_xfer *tel__niclog_xfer(const tel__niclog *l, size_t phase, size_t xfer);
/* The phase ended; its transfers fold into windows per NIC if they have not.
 * O(n + NICs / 64). */
void tel__niclog_end(tel__niclog *l, size_t phase, simtime_ps end);
/* Feed the ended phases' NIC bytes to t's NIC group (nothing else may feed
 * it), once per class of NICs the windows cover alike (tel__nic_classes):
 * rows, watched NICs and totals as feeding each NIC gives, bit for bit.
 * _each feeds NIC by NIC (the reference the tests compare with). */
void tel__niclog_replay(const tel__niclog *l, tel *t);
void tel__niclog_replay_each(const tel__niclog *l, tel *t);
void tel__niclog_free(tel__niclog *l);

#endif
