/* Graphviz export. O(vertices + links) lines; the caller owns `f` and should
 * write through a temporary file if it wants atomicity (sim_write_file_atomic).
 * Returns SIM_EIO if the stream reports a write error.
 */
#include <stdio.h>

#include "topo/topo_internal.h"

static const char *link_style(topo_lkind k) {
  switch (k) {
  case TOPO_LINK_SCALE_UP: return "color=darkgreen";
  case TOPO_LINK_PCIE: return "color=gray50";
  case TOPO_LINK_ENDPOINT: return "color=steelblue";
  case TOPO_LINK_FABRIC: break;
  }
  return "color=black";
}

static const char *switch_color(uint8_t tier) {
  return tier == TOPO_TIER_LEAF ? "lightblue" : tier == TOPO_TIER_SPINE ? "khaki" : "salmon";
}

/* Name of the DOT node drawn for vertex v (its node's box when collapsed). */
static const char *dot_name(const topo *t, uint32_t v, bool collapse, char *buf, size_t n) {
  const topo_vertex *x = &t->vert[v];
  if (collapse && x->kind != TOPO_SWITCH) {
    snprintf(buf, n, "node%u", x->node);
    return buf;
  }
  return topo_vertex_name(t, v, buf, n);
}

int topo_write_dot(const topo *t, FILE *f, bool collapse_nodes) {
  char a[48], b[48];
  fprintf(f,
          "graph fabsim {\n  graph [rankdir=BT, label=\"%s, %u-tier, radix %u, %u plane%s, %u "
          "nodes\"];\n",
          cfg_topology_name(t->kind), t->s.tiers, t->s.k, t->planes, t->planes == 1 ? "" : "s",
          t->nodes);
  fprintf(f, "  node [fontsize=10];\n");
  for (uint32_t n = 0; n < t->nodes; n++) {
    if (collapse_nodes) {
      fprintf(f, "  \"node%u\" [shape=box, style=rounded, label=\"node%u\\n%u GPU, %u NIC\"];\n", n,
              n, t->gpn, t->npn);
      continue;
    }
    fprintf(f, "  subgraph cluster_node%u {\n    label=\"node%u\";\n", n, n);
    for (uint32_t g = 0; g < t->gpn; g++)
      fprintf(f, "    \"%s\" [shape=circle];\n",
              topo_vertex_name(t, t->v_gpu + n * t->gpn + g, a, sizeof a));
    fprintf(f, "    \"%s\" [shape=diamond];\n", topo_vertex_name(t, t->v_nvs + n, a, sizeof a));
    for (uint32_t g = 0; topo__pcie_switched(t) && g < t->gpn; g++)
      fprintf(f, "    \"%s\" [shape=point];\n",
              topo_vertex_name(t, t->v_psw + n * t->gpn + g, a, sizeof a));
    for (uint32_t i = 0; i < t->npn; i++)
      fprintf(f, "    \"%s\" [shape=box];\n",
              topo_vertex_name(t, t->v_nic + n * t->npn + i, a, sizeof a));
    fprintf(f, "  }\n");
  }
  for (uint32_t v = t->v_sw; v < t->nvertices; v++)
    fprintf(f, "  \"%s\" [shape=box, style=filled, fillcolor=%s];\n",
            topo_vertex_name(t, v, a, sizeof a), switch_color(t->vert[v].tier));
  for (uint32_t l = 0; l < t->nlinks; l++) {
    const topo_link *k = &t->link[l];
    if (collapse_nodes && (k->kind == TOPO_LINK_SCALE_UP || k->kind == TOPO_LINK_PCIE)) continue;
    fprintf(f, "  \"%s\" -- \"%s\" [%s", dot_name(t, k->a, collapse_nodes, a, sizeof a),
            dot_name(t, k->b, collapse_nodes, b, sizeof b), link_style(k->kind));
    if (t->s.bundle > 1 && k->kind == TOPO_LINK_FABRIC && t->vert[k->b].tier == TOPO_TIER_CORE)
      fprintf(f, ", label=\"/%u\"", topo__bundle_pos(t, l)); /* its name's suffix */
    fprintf(f, "];\n");
  }
  fprintf(f, "}\n");
  return ferror(f) ? SIM_EIO : SIM_OK;
}
