/* fabsim event engine: one simulation context, one totally ordered event queue.
 *
 * Events are ordered by (time, insertion sequence), so two events at the same
 * picosecond run in the order they were scheduled, on every machine and run.
 * Event storage is pooled inside the context; scheduling never calls malloc
 * once the pool has grown to the simulation's high-water mark.
 *
 * No globals: several contexts may live in one process.
 */
#ifndef FABSIM_EV_H
#define FABSIM_EV_H

#include <signal.h>

#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim_ctx sim_ctx;

/* A handler receives the context, the object it was scheduled for and a
 * 64-bit argument. It may schedule and cancel events freely. */
typedef void (*ev_fn)(sim_ctx *sim, void *obj, uint64_t arg);

/* Handle of a scheduled event, for ev_cancel. 0 is never a valid handle. */
typedef uint64_t ev_id;

sim_ctx *sim_create(uint64_t seed);
void sim_destroy(sim_ctx *sim);

simtime_ps sim_now(const sim_ctx *sim);
/* Where the context keeps its clock (for a model's hot path: one load). */
const simtime_ps *sim_now_ptr(const sim_ctx *sim);
uint64_t sim_seed(const sim_ctx *sim);
/* Events executed so far (cancelled events are not counted). */
uint64_t sim_events(const sim_ctx *sim);
/* Events currently pending. */
size_t sim_pending(const sim_ctx *sim);

/* Initialise a component's RNG stream from the context seed and a name. */
void sim_rng_stream(const sim_ctx *sim, sim_rng *r, const char *stream);

/* Schedule fn(sim, obj, arg) at absolute time `at` (at >= sim_now). O(log n).
 * A time before now can only be a sum that wrapped: it is taken as
 * SIM_TIME_MAX, past the horizon (see ev_run). */
ev_id ev_schedule(sim_ctx *sim, simtime_ps at, ev_fn fn, void *obj, uint64_t arg);
static inline ev_id ev_schedule_in(sim_ctx *sim, simtime_ps delay, ev_fn fn, void *obj,
                                   uint64_t arg) {
  return ev_schedule(sim, sim_now(sim) + delay, fn, obj, arg);
}
/* ev_schedule for an event of a model that runs beside the workload (the
 * packet model's arrivals, port wakes and retransmission scans: what the
 * parallel engine runs as its co-engine's events, which never move this
 * context's clock). It runs as any other, in the same order; but when ev_run
 * leaves nothing to run (cancelled events aside), the clock goes back to the
 * last event scheduled otherwise (0 if none), as a co-engine's last events
 * leave it. So a fabric that still carries stale packets when the workload
 * is over (a spurious retransmission of a queue pair already done,
 * discarded at its next hop) ends the run where the workload ended, on both
 * engines. */
ev_id ev_schedule_beside(sim_ctx *sim, simtime_ps at, ev_fn fn, void *obj, uint64_t arg);
/* Cancel a pending event. Returns true if it was pending; false if it already
 * ran or was cancelled (stale handles are detected by a generation count). */
bool ev_cancel(sim_ctx *sim, ev_id id);

/* Run events until the queue is empty, an event's time exceeds `until`, or
 * ev_stop is called. Returns the number of events executed by this call.
 * Once nothing is left to run (cancelled events aside), sim_now is the last
 * event's not scheduled beside the run (ev_schedule_beside).
 * An event due at or past SIM_HORIZON_PS is never run: the run stops before
 * it, for good (ev_run returns 0 from then on; the event stays pending), and
 * sim_past_horizon says so. A cancelled one is dropped as usual. */
uint64_t ev_run(sim_ctx *sim, simtime_ps until);
/* An event due at or past the horizon stopped the run (ev_run); *due (may
 * be NULL) gets its time (SIM_TIME_MAX for a wrapped or saturated sum). The
 * clock stays where the last event ran, below the horizon. */
bool sim_past_horizon(const sim_ctx *sim, simtime_ps *due);
/* SIM_ERANGE with the message every caller gives when sim_past_horizon:
 * where the clock stopped, when the event was due, and what to change. */
int sim_horizon_fail(const sim_ctx *sim, sim_error *err);
/* The time of the earliest pending event of this context (cancelled ones
 * included), SIM_TIME_MAX when none: where a run in slices of simulated
 * time can jump over an idle stretch. */
simtime_ps sim_next_time(sim_ctx *sim);
/* Where the next slice of a run in slices of simulated time ends: `slice`
 * after the later of `ran_to` (where the last slice ended), the clock and
 * the instant before the next pending event, so an idle stretch costs one
 * slice, not one per `slice` of it (with a co-engine, whose events this
 * context does not see, no jump). Saturates at SIM_TIME_MAX. */
simtime_ps sim_slice_end(sim_ctx *sim, simtime_ps ran_to, simtime_ps slice);
/* Ask ev_run to return after the current handler. */
void ev_stop(sim_ctx *sim);

/* A co-engine: another event engine (the parallel packet backend on
 * src/pdes) that runs beside this context. ev_run calls fn(obj, bound)
 * before it runs an event at time `bound` (or returns at until + 1): fn runs
 * its own events with time < bound and returns the time t <= bound before
 * which all of them have run; t < bound when it scheduled an event here at
 * t (from inside fn). This context's events at a time run before the
 * co-engine's at the same time; after each of them the co-engine may have
 * new events from that time on. sim_pending counts this context's events
 * only: ev_run(sim, SIM_TIME_MAX) is what runs a co-engine to its end.
 * sim_events counts the co-engine's events as it reports them
 * (sim_set_co_events). */
typedef simtime_ps (*sim_co_fn)(void *obj, simtime_ps bound);
void sim_set_coengine(sim_ctx *sim, sim_co_fn fn, void *obj);
void sim_set_co_events(sim_ctx *sim, uint64_t n);
bool sim_has_coengine(const sim_ctx *sim);
/* The co-engine stops the run for good (an interrupt every MPI rank agreed
 * on): ev_run returns at once, now and later. */
void sim_co_stop(sim_ctx *sim);
bool sim_co_stopped(const sim_ctx *sim);

/* Ctrl-C, process-wide: a signal handler notes it (async-signal-safe);
 * a co-engine votes on it with its other ranks so that all stop together. */
void sim_interrupt_note(void);
void sim_interrupt_clear(void);
bool sim_interrupt_pending(void);
/* The one Ctrl-C handler of a process (SIGINT and SIGTERM), as Lua's
 * lua.c: it only notes the interrupt (sim_interrupt_note), which the library
 * reads at its safe points (a run's phases, a study's pool); a second one
 * takes the default action at once. No SA_RESTART: a blocking wait returns
 * (EINTR). arm clears any earlier note; disarm (when armed) restores the
 * handlers before and leaves no note behind. src/core/interrupt.c. */
typedef struct sim_interrupts {
  bool armed;
  struct sigaction old_int, old_term;
} sim_interrupts;
void sim_interrupts_arm(sim_interrupts *v);
void sim_interrupts_disarm(sim_interrupts *v);
/* A bound on the work of one ev_run, for runs that a person may stop (the
 * progress line's slices, the training drive, the jobs loop): while
 * wall_s > 0, ev_run also returns after an event once an interrupt is noted
 * (sim_interrupt_pending, read after every event) or once wall_s seconds of
 * wall time have passed since it began (the clock read every 32 events),
 * and sim_run_cut says so until the next ev_run. The next ev_run goes on
 * from there: the same events in the same order, whatever the cuts. So a
 * stop is seen after one event, however long the slice of simulated time.
 * 0 (the default) clears it. Not for a co-engine (its ranks agree on a stop
 * themselves): there ev_run runs to `until` as before. */
void sim_set_run_bound(sim_ctx *sim, double wall_s);
#define SIM_RUN_BOUND_S 0.2 /* the bound of the loops that draw progress */
double sim_run_bound(const sim_ctx *sim);
bool sim_run_cut(const sim_ctx *sim);
/* ev_run(sim, until) that an interrupt stops: the same events in the same
 * order (ev_stop ends it as it ends ev_run), under a bound of 0.2 s
 * (sim_set_run_bound) with sim_interrupt_pending read after every event
 * (a co-engine's ranks agree on it themselves: one ev_run). true when it
 * returned for an interrupt, events before `until` left. For phases that
 * run a simulation to its end outside the progress loop (a job's time
 * alone, a class timed before a run). */
bool ev_run_interruptible(sim_ctx *sim, simtime_ps until);

#ifdef __cplusplus
}
#endif
#endif
