/* fabsim placement: which nodes of a built topology a job runs on, in rank
 * order, and what that placement costs the job's traffic in switch tiers.
 *
 * A job is placed on whole nodes. The cluster's occupancy is a node set of
 * the nodes other jobs already hold (plc_nodeset, caller-owned). A policy
 * picks `nodes` free nodes and returns them in rank order (rank r runs on
 * out[r]); the policies model the schedulers operators meet:
 *   packed          the lowest free node indices in order: what a one-job
 *                   run does today (ranks 0 .. n-1 on nodes 0 .. n-1);
 *   spread          round-robin over the leaves (the leaves' order
 *                   interleaving the pods), rank r on the r-th pick: a
 *                   job scattered as widely as the free nodes allow;
 *   random          a seeded shuffle of the free nodes (the "place.random"
 *                   RNG stream of core): a fragmented cluster's allocation,
 *                   deterministic per seed;
 *   topology-aware  fewest leaves, then fewest pods, best fit (see
 *                   plc_place below and docs/shared-fabric.md);
 *   explicit        a node list given by the user, checked (in range,
 *                   distinct, free).
 *
 * Topology terms. A node's leaf is the leaf switch its first NIC is cabled
 * to (the NIC local GPU 0 uses): on a multi-plane fabric the same leaf index
 * in every plane; on a rail-optimized fabric rail 0's leaf of the node's
 * group, so "one leaf" means one group of leaf_down nodes whose traffic on
 * every rail stays in that rail's leaf. A node's pod is that leaf's pod
 * (3-tier fabrics; one pod in 2 tiers). Every job spans all planes of a
 * multi-plane fabric: planes are not a placement choice.
 *
 * Errors are sim_error with SIM_ERANGE (not enough free nodes) or SIM_EINVAL
 * (a bad request: zero nodes, a node set of another cluster size, an
 * explicit list out of range, repeated or taken), with a message naming the
 * figures. Nothing here keeps state between calls: each call is O(nodes)
 * plus its policy's cost, and allocates only its own scratch.
 */
#ifndef FABSIM_PLACE_H
#define FABSIM_PLACE_H

#include "fabsim/core.h"
#include "fabsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- node sets (occupancy) ------------------------------------------ */

/* A set of node indices 0 .. nodes-1, one bit each. Caller-owned. */
typedef struct plc_nodeset {
  uint32_t nodes;  /* public: the universe's size (the cluster's nodes) */
  uint64_t *words; /* private */
} plc_nodeset;

void plc_nodeset_init(plc_nodeset *s, uint32_t nodes); /* empty; O(nodes / 64) */
void plc_nodeset_free(plc_nodeset *s);
bool plc_nodeset_has(const plc_nodeset *s, uint32_t node); /* false when out of range */
void plc_nodeset_add(plc_nodeset *s, uint32_t node);       /* node < s->nodes */
/* Adds a placed job's nodes, so the next job sees them taken. */
void plc_nodeset_add_list(plc_nodeset *s, const uint32_t *nodes, uint32_t n);
uint32_t plc_nodeset_count(const plc_nodeset *s); /* members; O(nodes / 64) */

/* A fragmented cluster for tests and examples: round(fraction x nodes) of
 * the nodes, drawn uniformly without replacement from the free ones with the
 * "place.fragment" RNG stream of `seed`, become taken. Deterministic per
 * seed. SIM_EINVAL when fraction is outside [0, 1] or more nodes would be
 * taken than are free. O(nodes). */
int plc_fragment(plc_nodeset *taken, double fraction, uint64_t seed, sim_error *err);

/* ---- policies --------------------------------------------------------- */

/* X(enum, name as written in a scenario, what it models) */
#define PLC_POLICY_MAP(X)                                                          \
  X(PACKED, "packed", "lowest free node indices in order (one job today)")         \
  X(SPREAD, "spread", "round-robin over leaves, interleaving pods")                \
  X(RANDOM, "random", "seeded shuffle of the free nodes (a fragmented cluster)")   \
  X(TOPOLOGY_AWARE, "topology-aware", "fewest leaves, then fewest pods, best fit") \
  X(EXPLICIT, "explicit", "a given node list, checked")

typedef enum {
#define PLC__POLICY_ENUM(e, name, doc) PLC_##e,
  PLC_POLICY_MAP(PLC__POLICY_ENUM)
#undef PLC__POLICY_ENUM
      PLC_POLICY_COUNT
} plc_policy;

const char *plc_policy_name(plc_policy p);
/* SIM_OK and *out, or SIM_ENOENT for a name not in PLC_POLICY_MAP. */
int plc_policy_parse(const char *name, plc_policy *out);

typedef struct plc_request {
  plc_policy policy;
  uint32_t nodes;       /* how many nodes the job wants (> 0) */
  uint64_t seed;        /* PLC_RANDOM: the RNG seed (give each job its own:
                           one seed shuffles every free set the same way) */
  const uint32_t *list; /* PLC_EXPLICIT: `nodes` node indices in rank order */
} plc_request;

/* Nodes a job of `gpus` GPUs needs: ceil(gpus / GPUs per node). */
uint32_t plc_nodes_for_gpus(const topo *t, uint64_t gpus);

/* Places one job: out[0 .. req->nodes) gets its nodes in rank order (out is
 * caller-owned, req->nodes entries). taken may be NULL (an empty cluster);
 * otherwise taken->nodes must equal topo_node_count(t). Leaves `taken`
 * unchanged (plc_nodeset_add_list marks the job's nodes).
 *
 * topology-aware, as a tree-topology scheduler does (Slurm's topology/tree:
 * the lowest-level switch that satisfies the request, then its leaves by
 * best fit), with leaves counted first:
 *   1. k = the fewest leaves whose free nodes hold the job (the largest
 *      leaves first): exact;
 *   2. the fewest pods holding k such leaves: a single pod when one can
 *      (the best fit: the one whose chosen leaves keep the fewest free
 *      nodes unused), else pods added in order of the free nodes in their k
 *      largest leaves (greedy: the fewest pods is not guaranteed);
 *   3. in those pods, the k-1 leaves with the most free nodes and, last, the
 *      smallest leaf that still covers the rest (best fit); in each leaf its
 *      lowest free nodes;
 *   ranks follow (pod, leaf, node), so a ring crosses each boundary once.
 * Ties go to the lower index. O(nodes log nodes). */
int plc_place(const topo *t, const plc_nodeset *taken, const plc_request *req, uint32_t *out,
              sim_error *err);

/* ---- metrics ------------------------------------------------------------ */

/* What a placement costs a job's traffic. The ring is the job's nodes in rank
 * order, closed (pairs r -> r+1 and n-1 -> 0; none for one node, two for two
 * nodes, as a ring of two sends both ways). A pair's route is topo_route
 * from local GPU 0 of one node to local GPU 0 of the next (flow hash 0):
 * it crosses the spine when it climbs to tier 2 (the nodes are on different
 * leaves) and the core when it climbs to tier 3 (different pods); its hops
 * are the switches it traverses (1 on one leaf, 3 over a spine, 5 over a
 * core). Typed; the summary's JSON is built at the edge. */
typedef struct plc_metrics {
  uint32_t nodes;
  uint32_t leaves;           /* distinct leaves of the job's nodes */
  uint32_t pods;             /* distinct pods (1 on 2-tier fabrics) */
  uint32_t planes;           /* the fabric's planes, which every job spans */
  uint32_t ring_pairs;       /* n for n >= 2, else 0 */
  uint32_t ring_spine_pairs; /* pairs whose route crosses tier 2 */
  uint32_t ring_core_pairs;  /* pairs whose route crosses tier 3 */
  uint32_t ring_hops_min;    /* switch hops of the shortest pair (0: no pair) */
  uint32_t ring_hops_max;    /* ... of the longest: max - min is the imbalance */
} plc_metrics;

/* Metrics of nodes[0 .. n) (in rank order; in range and distinct, or
 * SIM_EINVAL). O(n x path). */
int plc_metrics_of(const topo *t, const uint32_t *nodes, uint32_t n, plc_metrics *m,
                   sim_error *err);

/* ---- sharing ------------------------------------------------------------ */

/* Whether two jobs, on the disjoint node lists a[0 .. na) and b[0 .. nb),
 * can meet on a fabric link under fabsim's up/down routing, whatever the
 * routing mode: only when they have a leaf switch in common (over all the
 * NICs of their nodes, every plane and rail), or a pod of one plane in
 * common while each also has NICs in another pod of that plane. "false" is
 * exact: no transfer of one can cross a link of the other, so at the
 * analytic and flow fidelities each runs exactly as it would alone.
 * O((na + nb) x NICs per node x log). */
bool plc_may_share_links(const topo *t, const uint32_t *a, uint32_t na, const uint32_t *b,
                         uint32_t nb);
/* Where two jobs may meet: plc_may_share_links is leaves || pods. */
typedef struct plc_sharing {
  uint32_t leaves;         /* leaf switches both have NICs on */
  uint32_t first_leaf;     /* the lowest one's vertex; UINT32_MAX: none */
  uint32_t pods;           /* pods (of one plane) both are in while both also leave them */
  uint32_t first_pod_leaf; /* a leaf (vertex) of the first such pod; UINT32_MAX: none */
} plc_sharing;
void plc_sharing_of(const topo *t, const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb,
                    plc_sharing *out);

#ifdef __cplusplus
}
#endif
#endif
