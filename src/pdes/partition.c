/* Partitioning a fabric's vertices over ranks (see pdes.h): units follow the
 * fabric (plane, then pod or leaf), contiguous runs of units balanced by
 * endpoint count; then the cut and the lookahead it allows. */
#include <string.h>

#include "fabsim/pdes.h"
#include "fabsim/topo.h"

#define PART_NONE UINT32_MAX

/* The unit of a vertex, or PART_NONE for the shared ones (2-tier spines,
 * cores) placed afterwards, and NICs, GPUs, scale-up switches (from their
 * leaf). unit = plane * per_plane + k: k the pod (3-tier), else the leaf;
 * with `fine` (3-tier, more ranks than pods) k is the leaf and a spine goes
 * with a leaf of its own pod. */
static uint32_t unit_of(const topo *t, uint32_t v, uint32_t per_plane, bool three_tier, bool fine,
                        uint32_t leaves_per_pod) {
  const topo_vertex *x = topo_vertex_at(t, v);
  if (x->kind != TOPO_SWITCH) return PART_NONE;
  uint32_t base = (uint32_t)(x->plane > 0 ? x->plane : 0) * per_plane;
  if (x->tier == TOPO_TIER_LEAF) return base + (three_tier && !fine ? x->pod : x->index);
  if (x->tier == TOPO_TIER_SPINE && three_tier)
    return base + (fine ? x->pod * leaves_per_pod + x->index % leaves_per_pod : x->pod);
  return PART_NONE;
}

int pdes_partition_fabric(pdes_partition *p, const topo *t, uint32_t nranks, sim_error *err) {
  memset(p, 0, sizeof *p);
  const topo_inventory *inv = topo_inventory_get(t);
  uint32_t nv = topo_vertex_count(t), nl = topo_link_count(t);
  uint32_t planes = inv->planes ? inv->planes : 1;
  bool three = inv->tiers == 3;
  /* units per plane: pods (3-tier) or leaves (2-tier, or 3-tier with more
   * ranks than pods: `fine`) */
  uint32_t pods = 0, leaves = 0;
  for (uint32_t v = 0; v < nv; v++) {
    const topo_vertex *x = topo_vertex_at(t, v);
    if (x->kind != TOPO_SWITCH || x->tier != TOPO_TIER_LEAF) continue;
    if (three && x->pod + 1 > pods) pods = x->pod + 1;
    if (x->index + 1 > leaves) leaves = x->index + 1;
  }
  if (leaves == 0) leaves = 1;
  bool fine = three && nranks > planes * pods;
  uint32_t per_plane = three && !fine ? pods : leaves;
  uint32_t leaves_per_pod = three && pods ? leaves / pods : 1;
  uint32_t nnics = topo_nic_count(t);
  /* More ranks than leaves: each leaf's NICs split into `split` sub-units
   * (the leaf with the first), cutting NIC-leaf links. */
  uint32_t *leaf_nics = sim_calloc(nv, sizeof *leaf_nics), most = 0;
  for (uint32_t n = 0; n < nnics; n++) {
    uint32_t c = ++leaf_nics[topo_nic_leaf(t, n)];
    if (c > most) most = c;
  }
  uint32_t split = 1;
  if (per_plane == leaves && nranks > planes * leaves)
    split = (nranks + planes * leaves - 1) / (planes * leaves);
  uint32_t nunits = planes * per_plane * split;
  if (nranks == 0 || nranks > nunits || split > (most ? most : 1)) {
    sim_free(leaf_nics);
    return sim_fail(err, SIM_EINVAL,
                    "partition: %u ranks for %u planes x %u leaves of at most %u endpoints; "
                    "1 .. %u",
                    nranks, planes, leaves, most, planes * leaves * (most ? most : 1));
  }
  uint32_t *unit = sim_malloc(nv * sizeof *unit);
  uint64_t *endpoints = sim_calloc(nunits, sizeof *endpoints);
  for (uint32_t v = 0; v < nv; v++) {
    unit[v] = unit_of(t, v, per_plane, three, fine, leaves_per_pod);
    if (unit[v] != PART_NONE) unit[v] *= split;
  }
  uint32_t *seen = sim_calloc(nv, sizeof *seen);
  for (uint32_t n = 0; n < nnics; n++) {
    uint32_t nv_ = topo_nic_vertex(t, n), leaf = topo_nic_leaf(t, n);
    uint32_t g = (uint32_t)((uint64_t)seen[leaf]++ * split / leaf_nics[leaf]);
    unit[nv_] = unit[leaf] == PART_NONE ? PART_NONE : unit[leaf] + g;
    if (unit[nv_] != PART_NONE) endpoints[unit[nv_]]++;
  }
  sim_free(seen);
  sim_free(leaf_nics);
  /* A node's GPUs and scale-up switch stay together (their links have no
   * propagation latency to look ahead with) on the unit of one of its NICs,
   * NIC (n mod NICs per node), so that nodes spread over the planes; the cut
   * is then the PCIe links to the node's other NICs. */
  uint32_t nodes = topo_node_count(t), npn = nodes ? nnics / nodes : 0,
           gpn = nodes ? topo_gpu_count(t) / nodes : 0;
  for (uint32_t g = 0; g < topo_gpu_count(t); g++) {
    uint32_t n = topo_gpu_node(t, g);
    uint32_t nic = npn ? n * npn + n % npn : topo_gpu_nic(t, g);
    unit[topo_gpu_vertex(t, g)] = unit[topo_nic_vertex(t, nic)];
  }
  /* Contiguous runs of units with about total/nranks endpoints each: unit u
   * goes to the rank its endpoint midpoint falls in. */
  uint32_t *unit_rank = sim_malloc(nunits * sizeof *unit_rank);
  uint64_t total = 0, before = 0;
  for (uint32_t u = 0; u < nunits; u++) total += endpoints[u];
  for (uint32_t u = 0; u < nunits; u++) {
    uint64_t mid2 = 2 * before + endpoints[u]; /* twice the midpoint */
    uint64_t r = total ? mid2 * nranks / (2 * total) : (uint64_t)u * nranks / nunits;
    if (r >= nranks) r = nranks - 1;
    if (u == 0) r = 0;
    /* keep every rank non-empty: at most nunits - u units remain for the ranks after r */
    if (u > 0 && r < unit_rank[u - 1]) r = unit_rank[u - 1];
    if (nranks - 1 - r > nunits - 1 - u) r = nranks - 1 - (nunits - 1 - u);
    if (u > 0 && r > unit_rank[u - 1] + 1) r = unit_rank[u - 1] + 1;
    unit_rank[u] = (uint32_t)r;
    before += endpoints[u];
  }
  p->nranks = nranks;
  p->units = nunits;
  p->vertex_rank = sim_malloc(nv * sizeof *p->vertex_rank);
  /* the ranks of each plane: first and count, for the shared switches */
  uint32_t *plane_first = sim_malloc(planes * sizeof *plane_first),
           *plane_n = sim_calloc(planes, sizeof *plane_n);
  for (uint32_t pl = 0; pl < planes; pl++) {
    uint32_t lo = unit_rank[pl * per_plane * split],
             hi = unit_rank[(pl + 1) * per_plane * split - 1];
    plane_first[pl] = lo;
    plane_n[pl] = hi - lo + 1;
  }
  for (uint32_t v = 0; v < nv; v++) {
    const topo_vertex *x = topo_vertex_at(t, v);
    if (unit[v] != PART_NONE) {
      p->vertex_rank[v] = unit_rank[unit[v]];
    } else if (x->kind == TOPO_SWITCH) {
      uint32_t pl = x->plane >= 0 ? (uint32_t)x->plane : 0;
      p->vertex_rank[v] = plane_first[pl] + x->index % plane_n[pl];
    } else {
      p->vertex_rank[v] = PART_NONE; /* scale-up and PCIe switches: below */
    }
  }
  for (uint32_t v = 0; v < nv; v++) {
    if (p->vertex_rank[v] != PART_NONE) continue;
    const topo_vertex *x = topo_vertex_at(t, v);
    uint32_t g0 = x->node * gpn;
    if (x->kind == TOPO_PCIE_SWITCH) g0 = x->index; /* with its GPU */
    p->vertex_rank[v] =
        (x->kind == TOPO_NVSWITCH || x->kind == TOPO_PCIE_SWITCH) && g0 < topo_gpu_count(t)
            ? p->vertex_rank[topo_gpu_vertex(t, g0)]
            : 0;
  }
  /* cut and lookahead */
  p->lookahead_ps = SIM_TIME_MAX;
  p->links = nl;
  for (uint32_t l = 0; l < nl; l++) {
    const topo_link *k = topo_link_at(t, l);
    if (p->vertex_rank[k->a] == p->vertex_rank[k->b]) continue;
    p->cut_links++;
    p->cut_by_kind[k->kind]++;
    if (k->latency < p->lookahead_ps) p->lookahead_ps = k->latency;
  }
  uint32_t *ne = sim_calloc(nranks, sizeof *ne), *nvr = sim_calloc(nranks, sizeof *nvr);
  for (uint32_t n = 0; n < nnics; n++) ne[p->vertex_rank[topo_nic_vertex(t, n)]]++;
  for (uint32_t v = 0; v < nv; v++) nvr[p->vertex_rank[v]]++;
  p->endpoints_min = p->vertices_min = UINT32_MAX;
  for (uint32_t r = 0; r < nranks; r++) {
    if (ne[r] < p->endpoints_min) p->endpoints_min = ne[r];
    if (ne[r] > p->endpoints_max) p->endpoints_max = ne[r];
    if (nvr[r] < p->vertices_min) p->vertices_min = nvr[r];
    if (nvr[r] > p->vertices_max) p->vertices_max = nvr[r];
  }
  if (nranks == 1) p->scheme = "one rank";
  else if (planes > 1 && nranks <= planes) p->scheme = "plane";
  else if (split > 1) p->scheme = planes > 1 ? "plane+subleaf" : "subleaf";
  else if (planes > 1) p->scheme = three && !fine ? "plane+pod" : "plane+leaf";
  else p->scheme = three && !fine ? "pod" : "leaf";
  sim_free(ne);
  sim_free(nvr);
  sim_free(plane_first);
  sim_free(plane_n);
  sim_free(unit_rank);
  sim_free(endpoints);
  sim_free(unit);
  return SIM_OK;
}

void pdes_partition_free(pdes_partition *p) {
  sim_free(p->vertex_rank);
  p->vertex_rank = NULL;
}
