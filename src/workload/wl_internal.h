/* Internals shared by the files of the workload module (wl__ prefix).
 *
 *   model.c   model, parallelism, rank placement (public API)
 *   memory.c  per-GPU memory and the fitting search (public API)
 *   schedule.c the order of forward/backward chunks per stage (1f1b,
 *             interleaved, dualpipe)
 *   dag.c     one step as a DAG per pipeline stage, communication classes
 *   step.c    the executor on a backend and the step figures
 *
 * The DAG describes one representative rank per pipeline stage: every
 * data-parallel replica and tensor-parallel rank of a stage computes the same
 * thing at the same time, so a compute node stands for all of them and a
 * communication node for the same collective in every group of the stage
 * (all its transfers submitted together: the fabric sees them all).
 */
#ifndef FABSIM_WL_INTERNAL_H
#define FABSIM_WL_INTERNAL_H

#include "fabsim/coll.h"
#include "fabsim/workload.h"

#define WL__NONE UINT32_MAX

/* Streams of a stage run their nodes in order, one at a time; collectives
 * inside a layer (tensor, expert parallel) sit on the compute stream because
 * the next computation needs their result. */
enum { WL__COMPUTE, WL__SEND_FWD, WL__SEND_BWD, WL__DP, WL__XCOMM, WL__STREAMS };
/* WL__XCOMM: in-layer collectives taken off the compute stream where a
 * framework overlaps them (dualpipe's overlapped chunk pairs, tensor-
 * parallel overlap): the computation after one waits for it by an edge. */
enum { WL__FWD, WL__BWD, WL__OPT, WL__COMM };

typedef struct wl__node {
  simtime_ps dur; /* compute nodes */
  simtime_ps start;
  uint32_t stage;
  uint32_t peer;       /* pipeline sends: the other stage; else WL__NONE */
  uint32_t cls;        /* communication class; WL__NONE for compute */
  uint32_t deps;       /* unmet dependencies */
  uint32_t first_edge; /* successors: edge list */
  uint32_t next;       /* next node of the same stream */
  uint32_t aux;        /* executor: slot of a live collective */
  uint8_t stream, role;
  bool sealed; /* has successors or ends a block: never merged into */
} wl__node;

/* A distinct collective: kind, stage and size. Its plan covers every group
 * of the stage; built on first use. */
typedef struct wl__class {
  wl_comm_kind kind;
  uint32_t stage, peer;
  uint64_t bytes;     /* S as nccl-tests counts it; pipeline sends: per rank */
  uint32_t group;     /* ranks per group */
  uint64_t transfers; /* per instance, without repetitions (estimate) */
  uint64_t instances;
  coll_plan plan;
  bool built;
  simtime_ps measured; /* reuse: the time of one instance alone */
} wl__class;

typedef struct wl__dag {
  /* inputs (borrowed) */
  const wl_model *m;
  const wl_parallel *p;
  const cfg_scenario *cfg;
  const topo *t;
  double peak, hbm;                      /* FLOP/s at the precision x efficiency; HBM bytes/s */
  double wbytes, gbytes, obytes, abytes; /* per parameter; per activation element */
  /* graph */
  wl__node *nodes;
  size_t n, cap;
  uint32_t *edge_to, *edge_next;
  size_t nedges, ecap;
  wl__class *cls;
  size_t ncls, clscap;
  uint32_t *head, *tail; /* [stage * WL__STREAMS + stream] */
  coll_moe_routing moe;  /* MoE router statistics, drawn at the first EP plan (tokens 0: not yet) */
} wl__dag;

/* One entry of a stage's schedule: a forward (F) or backward (B) of chunk
 * c, the deferred weight-gradient half of the oldest backward that deferred
 * it (W), or a forward of chunk c overlapped with a backward of chunk c2
 * (FB). A B with zb set defers its weight gradients to a later W. The
 * micro-batch is the next one of that chunk (each chunk runs its
 * micro-batches in order). */
enum { WL__OP_F, WL__OP_B, WL__OP_W, WL__OP_FB };
typedef struct wl__op {
  uint8_t kind, c, c2;
  bool zb;
} wl__op;

/* Stage s's schedule into out (NULL: count only); returns the entries.
 * At most 3 x vstages x micro_batches. O(that). */
size_t wl__schedule(const wl_parallel *p, uint32_t s, wl__op *out);

/* Build the step's DAG from the inputs set in d (wl_step_run bounds its
 * size first). O(nodes). */
void wl__dag_build(wl__dag *d);
void wl__dag_free(wl__dag *d);
/* Expand class c into its plan (all groups of its stage merged phase by
 * phase). */
int wl__class_plan(wl__dag *d, wl__class *c, sim_error *err);
/* Compute peak for the scenario's precision, FLOP/s (before efficiency). */
double wl__peak_flops(const cfg_scenario *cfg);

#endif
