/* fabsim telemetry tap: telemetry for fidelities that do not feed it.
 *
 * The analytic and flow fidelities know rates only inside their models; what
 * the outside sees is phases (fabsim/backend.h): a set of transfers that
 * starts at one time and ends, as a whole, later. The tap wraps any backend,
 * forwards every call unchanged (results are bit-identical with and without
 * it) and keeps, per phase, its start, its end and what it moves: bytes per
 * channel of the routed paths and the GPUs taking part. After the run,
 * tel_tap_replay feeds that log to a tel in time order:
 *   NICs        each NIC's bytes when its transfers moved them: TX from each
 *               repetition's start until its last transfer's last byte left,
 *               RX from its first transfer's first byte to its last one's
 *               last, as the backend reported them (be_xfer_end,
 *               src/telemetry/tap_nic.c), so a NIC that finished early
 *               shows idle;
 *   ports       switch egress channels (see tel_portmap), as if each phase
 *               moved its bytes at a constant rate from start to end; a
 *               phase in flight at a reroute or a link's change of state
 *               (be_reroute_rec) is cut there: what each transfer had sent
 *               on the channels it crossed until then, the rest on its
 *               paths from then on;
 *   GPUs        NETWORK while a phase involving the GPU runs, else IDLE
 *               (only with TEL_TAP_GPUS: a workload that feeds GPU states
 *               itself leaves it out).
 * A phase still running when the run stops (Ctrl-C) is left out.
 *
 * A fidelity that samples its own switch ports (the per-port telemetry
 * capability of fabsim/backend.h: the packet fidelity) feeds the port group
 * instead, from its real queues, pauses, marks and utilization
 * (tel_port_sampling_start, tel_port_samples_replay below); the tap then
 * feeds NICs and GPUs only (replayed with an empty tel_portmap).
 *
 * These (tap.c, tap_nic.c, port_samples.c) are the telemetry files that
 * know the backend interface and the topology: the bridge, so that the
 * sampler itself stays core-only.
 *
 * Cost: routing every transfer once at submission (as the analytic fidelity
 * does), O(channels touched) memory per phase whose channels and bytes (GPUs)
 * differ from every phase logged before (an equal list is held once: a
 * training run's steps repeat their phases), else O(1); replay O(log
 * entries); the
 * NIC series O(transfers) per phase and O(NICs) per phase and interval
 * (tap_nic.c).
 * Slices of a pool (be_submit_slice) under static or ECMP routing: the pool
 * is routed once and the window's bytes per channel and GPUs kept as it
 * moves, so a phase costs what enters and leaves plus its channels and
 * GPUs (logged in ascending order), not its transfers' paths. When the
 * slices carry their pool's cuts, the pool's quotient by its segments
 * (be_quot) is built instead and handed to the inner backend with each
 * slice, and a phase is logged as its window of segments: O(the quotient's
 * runs). The replay then feeds channels and GPUs in parts that every
 * logged phase feeds alike, once per part, and the tel keeps one meter
 * per part: its rows, totals and top ports are those of feeding every
 * member, bit for bit (src/telemetry/tap_replay.c).
 */
#ifndef FABSIM_TEL_TAP_H
#define FABSIM_TEL_TAP_H

#include "fabsim/backend.h"
#include "fabsim/telemetry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Switch egress ports of a topology, numbered densely for telemetry: the
 * channels that leave a fabric switch, in channel order. A port is named
 * "<switch>-<peer>": leaf0-spine3 is leaf0's port toward spine3, and
 * spine3-leaf0 the other direction of the same link. */
typedef struct tel_portmap {
  uint32_t nports;
  uint32_t *port_of_channel; /* UINT32_MAX: not a switch egress channel */
  uint32_t *channel_of_port;
  rate_bps *bps; /* per port */
} tel_portmap;
void tel_portmap_build(tel_portmap *m, const topo *t);
void tel_portmap_free(tel_portmap *m);
/* "leaf0-spine3" for a port; buf of n bytes. */
const char *tel_port_name(const topo *t, const tel_portmap *m, uint32_t port, char *buf, size_t n);
/* Parse a port name; SIM_OK or SIM_ENOENT. */
int tel_port_find(const topo *t, const tel_portmap *m, const char *name, uint32_t *port);

typedef struct tel_tap tel_tap;
enum { TEL_TAP_GPUS = 1u << 0 };

/* Wraps inner; the result owns inner (be_destroy destroys both) and *tap
 * stays valid until then. The tap needs no tel during the run, so the tel
 * can be made after it, with an interval fitted to the run's real length. */
be_backend *tel_tap_wrap(be_backend *inner, tel_tap **tap);
/* Feed the phase log to t (see above), and as events the most shared
 * fabric channel of each phase where more than one transfer shares one
 * (kind "shared-channel", at most 64). Call once, after the run and before
 * tel_finish. */
void tel_tap_replay(tel_tap *tap, tel *t, const tel_portmap *m, unsigned flags);

/* ---- the per-flow log (output.flows; tap_flows.c) ------------------------------------- */

/* One transfer as the backend reported it (be_xfer_end): one repetition of
 * one transfer of one phase. start is its repetition's start, end its last
 * byte's arrival (start + delivered), so end - start is its flow completion
 * time as the fidelity timed it. */
typedef struct tel_flow {
  simtime_ps start, end;
  uint64_t bytes;
  uint64_t phase;            /* the tap's phase index: phases in submission order, from 0 */
  uint64_t xfer;             /* its index among the phase's transfers (a slice's) */
  uint32_t src_gpu, dst_gpu; /* be_xfer's: GPU (or storage endpoint) indices */
  uint32_t src_nic, dst_nic; /* the NICs its path leaves and enters by; UINT32_MAX: none */
  uint8_t tclass;
  uint8_t npath;                /* channels in path (0: no route, or GPU to itself) */
  uint32_t path[TOPO_MAX_PATH]; /* the channels it was routed on (see tel_tap_flows_keep) */
} tel_flow;

/* Keep the flow log, at most max rows (>= 1): the earliest by (start,
 * phase, xfer), whatever order the reports come in, so the rows kept are
 * the same however the backend orders its reports. Before any phase. The
 * path of a row is routing's when the backend reports the transfer
 * (topo_route_health on the view of the last reroute: the analytic fidelity
 * reports at submission, flow and packet at completion, so a transfer moved
 * by a reroute shows the path it finished on); under adaptive routing the
 * path the tap counted it on, as the analytic and flow fidelities do; under
 * spray the ECMP path of its flow hash (the bytes spread over the pools it
 * crosses). Cost: O(log max + path) per transfer reported, O(max) memory;
 * nothing without this call. */
void tel_tap_flows_keep(tel_tap *tap, size_t max);
/* After the run, which ended at `until`: the rows kept, sorted by (start,
 * phase, xfer) (NULL, 0 when not kept; valid until the tap is destroyed),
 * and how many reported transfers were left out past max, the earliest and
 * latest start of those (*left 0: none). A row that ends after `until` is
 * dropped, not counted: the analytic fidelity reports a phase's times at
 * its submission, so a run stopped early (Ctrl-C, a failed job) has rows
 * of phases it never finished. The first call fixes the result. */
const tel_flow *tel_tap_flows(tel_tap *tap, simtime_ps until, size_t *n, uint64_t *left,
                              simtime_ps *left_from, simtime_ps *left_to);

/* Per-port telemetry of a backend that has it (be_port_sampling_start with
 * m's ports and the watched ones, whose queues are kept in every row):
 * before any phase; b may be the tap. SIM_EINVAL when b has no per-port
 * telemetry (the analytic and flow fidelities: the tap's ports stand in). */
int tel_port_sampling_start(be_backend *b, const tel_portmap *m, const uint32_t *watch,
                            uint32_t nwatch);
/* Feed t's port group from b's samples, up to end (the run's end): once,
 * after the run (and after be_port_samples_gather on the parallel engine),
 * before tel_finish; nothing else may feed t's ports. Nothing when b has no
 * samples. */
void tel_port_samples_replay(be_backend *b, tel *t, simtime_ps end);

#ifdef __cplusplus
}
#endif
#endif
