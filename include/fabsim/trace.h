/* fabsim trace workloads: Chakra execution traces (workload.kind: trace).
 *
 * A Chakra ET file (github.com/mlcommons/chakra, schema/protobuf/et_def.proto;
 * the part fabsim reads: proto/chakra_et.proto) is a stream of
 * length-delimited protobuf messages: one GlobalMetadata, then Nodes. Each
 * rank of a job runs one trace, a DAG of nodes ordered by data_deps (ctrl_deps
 * are read past, as Chakra's own feeder does). What fabsim takes from a node:
 *   COMP_NODE         compute: duration_micros, or with
 *                     workload.trace.compute roofline and num_ops present
 *                     max(num_ops / (peak x efficiency), tensor_size / HBM)
 *   COMM_COLL_NODE    a collective: comm_type, comm_size (bytes this rank
 *                     contributes, Chakra's converter: the input tensors),
 *                     pg_name (process group; absent: every rank)
 *   COMM_SEND_NODE,   a point-to-point transfer: comm_size, comm_dst (send) /
 *   COMM_RECV_NODE    comm_src (recv), comm_tag
 *   MEM_LOAD/STORE    duration_micros, off the compute stream
 *   METADATA, INVALID no time; their dependencies still order the graph
 *   is_cpu_op true    a host operation of any type (PyTorch's CPU ops, the
 *                     c10d launcher of a collective whose GPU-side node
 *                     carries comm_type): duration_micros on the rank's host
 *                     stream, one at a time, as ASTRA-sim's CPU resource
 * Everything else (names, inputs/outputs, start_time_micros, the global
 * metadata's attributes) is read past. docs/training.md, "Chakra
 * traces", has the table.
 *
 * Matching across ranks (trc_set_create): a process group is the ranks whose
 * traces hold a collective naming it; the k-th collective of a group in a
 * rank's file order is the same call on every member (same comm_type and
 * comm_size, or the set is refused). The k-th send from a to b with tag t
 * pairs with the k-th recv at b from a with tag t (same size).
 *
 * Errors are recoverable (SIM_EIO for files, SIM_EINVAL for content) and say
 * the file, the byte offset and node id, and what is wrong.
 */
#ifndef FABSIM_TRACE_H
#define FABSIM_TRACE_H
#include <stdio.h>

#include "fabsim/backend.h"
#include "fabsim/config.h"
#include "fabsim/fault.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TRC_COMPUTE,
  TRC_COLL,
  TRC_SEND,
  TRC_RECV,
  TRC_MEM,   /* memory load or store: its duration, off the compute stream */
  TRC_OTHER, /* metadata, invalid: no time */
  TRC_HOST   /* is_cpu_op true (any type): its duration on the rank's host stream */
} trc_kind;

/* Chakra's CollectiveCommType values (et_def.proto). */
typedef enum {
  TRC_ALL_REDUCE = 0,
  TRC_REDUCE = 1,
  TRC_ALL_GATHER = 2,
  TRC_GATHER = 3,
  TRC_SCATTER = 4,
  TRC_BROADCAST = 5,
  TRC_ALL_TO_ALL = 6,
  TRC_REDUCE_SCATTER = 7,
  TRC_REDUCE_SCATTER_BLOCK = 8,
  TRC_BARRIER = 9
} trc_comm_type;
const char *trc_comm_type_name(int comm_type); /* "ALL_REDUCE", ...; "unknown" */

#define TRC_NO_GROUP UINT32_MAX

/* One node as read; read-only after parsing. */
typedef struct trc_node {
  uint64_t id;     /* the trace's node id */
  uint64_t offset; /* byte offset of its length prefix in the file */
  trc_kind kind;
  int comm_type;        /* TRC_COLL */
  uint64_t duration_us; /* duration_micros */
  uint64_t num_ops;     /* 0: absent */
  uint64_t tensor_size; /* bytes; 0: absent */
  uint64_t bytes;       /* comm_size */
  int64_t peer;         /* send: comm_dst; recv: comm_src; -1 absent */
  int64_t tag;          /* comm_tag, 0 absent */
  uint32_t pg;          /* index into trc_trace.pg_names; TRC_NO_GROUP: none */
  uint32_t call;        /* collective: k-th of its group in file order; send,
                           recv: k-th point-to-point node of the file */
  uint32_t ndeps;
  uint32_t *deps; /* its data_deps as indices into trc_trace.nodes,
                     ascending, each once */
} trc_node;

/* One parsed file. */
typedef struct trc_trace {
  char *name;      /* path as given, for messages */
  char *version;   /* GlobalMetadata.version */
  trc_node *nodes; /* file order */
  uint32_t n;
  uint32_t *order; /* a topological order of the nodes (n entries) */
  char **pg_names; /* the process groups the trace names, first use order */
  uint32_t npg;
  uint32_t *dep_pool;    /* private */
  uint32_t *child_start; /* n + 1: children of node i are children[child_start[i] ..
                            child_start[i + 1]) (the nodes depending on it) */
  uint32_t *children;
  uint32_t *call_start; /* npg + 2: collectives of group pg (npg: the default
                           group) are call_nodes[call_start[pg] .. call_start[pg + 1]) */
  uint32_t *call_nodes;
  uint32_t np2p; /* send and recv nodes */
} trc_trace;

/* Parse one file's bytes. name labels errors. Checks framing (varint and
 * message lengths against the bytes left), the metadata message first, node
 * types and attributes (a collective's comm_type and comm_size, a send's
 * comm_dst, a recv's comm_src), duplicate ids, dependencies on ids the file
 * does not hold, and cycles. O(bytes + nodes + deps x log nodes).
 * SIM_EINVAL with "name: byte B, node ID: what is wrong". */
int trc_parse(trc_trace *out, const char *name, const uint8_t *data, size_t len, sim_error *err);
void trc_trace_free(trc_trace *t);

/* Encode nodes as a Chakra ET stream (for the generator and tests): the
 * nodes' id, kind, comm_type, duration, bytes, peer, tag, pg (a name from
 * pg_names) and deps (as ids in deps_ids, ndeps each) are written as Chakra's
 * converter writes them. Returns a buffer (sim_free) and its length. */
typedef struct trc_write_node {
  uint64_t id;
  const char *name;
  trc_kind kind;
  int comm_type;
  uint64_t duration_us, num_ops, tensor_size, bytes;
  int64_t peer, tag;
  const char *pg_name;  /* NULL: none */
  const uint64_t *deps; /* ids (data_deps) */
  uint32_t ndeps;
} trc_write_node;
uint8_t *trc_write(const char *version, const trc_write_node *nodes, size_t n, size_t *len);

/* A job: one trace per rank, shared by the ranks of a class. */
typedef struct trc_group {
  char *name;      /* pg_name; "" for the default group (every rank) */
  uint32_t *ranks; /* ascending */
  uint32_t nranks;
  uint32_t ncalls; /* collectives per member */
  uint32_t first;  /* call k is instance first + k of the set */
} trc_group;

/* A send and the recv it pairs with. */
typedef struct trc_pair {
  uint32_t src, dst;             /* ranks */
  uint32_t send_node, recv_node; /* node indices in their ranks' traces */
  uint64_t bytes;
} trc_pair;

typedef struct trc_set {
  uint32_t nranks;
  trc_trace *traces; /* distinct files */
  uint32_t ntraces;
  uint32_t *rank_trace; /* nranks: the trace each rank runs */
  trc_group *groups;
  uint32_t ngroups;
  uint32_t **pg_group; /* per trace, per pg index (npg + 1: the default
                          group last) the group index, or TRC_NO_GROUP */
  uint32_t ninstances; /* collective calls over the job */
  trc_pair *pairs;
  uint32_t npairs;
  uint32_t **rank_pair; /* per rank, per point-to-point ordinal (trc_node.call) */
} trc_set;

/* Match traces over ranks (traces are moved in: freed with the set, also on
 * failure). rank_trace[r] < ntraces for each rank. Errors: SIM_EINVAL naming
 * the ranks and nodes that disagree (a collective's count, comm_type or
 * comm_size over its group; a send with no matching recv or sizes that
 * differ; a peer out of range; a cross-rank deadlock, found by playing the
 * runner's rules without time: O(nodes over ranks + deps)). */
int trc_set_create(trc_set **out, trc_trace *traces, uint32_t ntraces, const uint32_t *rank_trace,
                   uint32_t nranks, sim_error *err);
void trc_set_free(trc_set *s);

/* The scenario's traces (workload.trace.*): paths relative to the scenario
 * file's folder. Errors are SIM_ECONFIG at the key (file:line:col: key:
 * file: what is wrong). gpus: the cluster's, an upper bound on ranks. */
int trc_load(trc_set **out, const cfg_scenario *cfg, const cfg_doc *doc, uint32_t gpus,
             sim_error *err);

/* ---- running a set on a backend --------------------------------------------- */

/* Per rank, over the run (all its iterations): compute (its compute stream busy),
 * communication (a collective or transfer of the rank in flight), exposed
 * communication (in flight while the compute stream is idle), idle (neither);
 * compute + exposed + idle = time. */
typedef struct trc_rank_time {
  double compute_s, comm_s, exposed_comm_s, idle_s;
  double end_s; /* when its last node ended */
} trc_rank_time;

typedef struct trc_result {
  double time_s; /* the run: the last node of any rank ends (its last iteration) */
  simtime_ps time_ps;
  uint32_t iterations, iterations_done; /* asked (workload.steps), finished by every rank */
  double *iteration_s; /* owned, iterations_done: each from the previous one's end (the
                          first: from the start) to the end of its last rank */
  double compute_s, comm_s, exposed_comm_s, idle_s; /* means over ranks */
  uint32_t nranks;
  uint64_t nodes, compute_nodes, collectives, p2p; /* collectives: calls, not nodes */
  uint64_t coll_bytes, p2p_bytes;
  trc_rank_time *ranks; /* owned */
} trc_result;

typedef struct trc_runner trc_runner;
/* Plans every collective and transfer on topology t (rank r is GPU r) and
 * checks the nodes' times fit: workload.steps iterations, and each
 * gpu-slowdown of the scenario's faults, under the horizon of simulated time
 * (refused at the key otherwise). SIM_ECONFIG at workload.trace.path (or the
 * collective keys) when a plan cannot be built. */
int trc_runner_create(trc_runner **out, const trc_set *s, const cfg_scenario *cfg,
                      const cfg_doc *doc, const topo *t, be_backend *b, sim_error *err);
/* The same for a job of a jobs: list: rank r on GPU gpus[r] (ascending;
 * ngpus of them, at least the ranks: refused at workload.trace.ranks), on
 * a backend other jobs share: a GPU failure stops this job, not the
 * simulation. */
int trc_runner_create_on(trc_runner **out, const trc_set *s, const cfg_scenario *cfg,
                         const cfg_doc *doc, const topo *t, be_backend *b, const uint32_t *gpus,
                         uint32_t ngpus, sim_error *err);
/* A GPU or node of the job that failed (gpu: the GPU the fault named). */
typedef struct trc_failure {
  simtime_ps at;
  uint32_t gpu;
  bool whole_node;
} trc_failure;
/* The fault scheduler's hooks (ctx: the runner): gpu-slowdown sets the
 * rank's GPU speed (its compute nodes run at it; the node in progress
 * finishes its remaining work at the new speed); gpu-fail or node-fail of a
 * GPU the job runs on stops the job (ev_stop) there. No SDC hook: traces
 * carry no numerics to corrupt or checks to detect it. */
flt_gpu_hooks trc_runner_hooks(trc_runner *r);
/* True, with the failure, when a GPU or node failure stopped the job. */
bool trc_runner_failed(const trc_runner *r, trc_failure *f);
/* Schedule the start at sim_now; run the simulation afterwards (ev_run). */
void trc_runner_start(trc_runner *r);
/* True when every node of every rank ran. */
bool trc_runner_done(const trc_runner *r);
/* Figures; valid after the simulation ran (a stopped run: so far). */
void trc_runner_result(const trc_runner *r, trc_result *out);
void trc_result_free(trc_result *r);
void trc_runner_free(trc_runner *r);

#ifdef __cplusplus
}
#endif
#endif
