/* The fabric as a JSON graph (fabsim topo --export; docs/fabric-import.md):
 * what fabric.topology: file reads back (import.c) into the same fabric.
 *
 * One node or link a line, in vertex and link-id order, so the file is
 * deterministic and diffs line by line. Speeds are line rates (the
 * scenario's, before the efficiencies every fidelity applies), latencies
 * exact picoseconds. Ports are numbered from 1 in each vertex's port order
 * (its links in link-id order: a leaf's NICs by slot, then its up links).
 * Cost: O(vertices + links) lines, one buffer, written atomically.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_internal.h"

/* "400Gbps": the largest unit that divides the rate exactly. */
static const char *speed_text(char *buf, size_t n, rate_bps r) {
  static const struct {
    uint64_t div;
    const char *unit;
  } u[] = {{1000000000000ull, "Tbps"},
           {1000000000ull, "Gbps"},
           {1000000ull, "Mbps"},
           {1000ull, "Kbps"},
           {1ull, "bps"}};
  size_t i = 0;
  while (i + 1 < sizeof u / sizeof u[0] && (r < u[i].div || r % u[i].div)) i++;
  snprintf(buf, n, "%" PRIu64 "%s", r / u[i].div, u[i].unit);
  return buf;
}

static const char *time_text(char *buf, size_t n, simtime_ps ps) {
  if (ps && ps % 1000000 == 0) snprintf(buf, n, "%" PRIu64 "us", ps / 1000000);
  else if (ps && ps % 1000 == 0) snprintf(buf, n, "%" PRIu64 "ns", ps / 1000);
  else snprintf(buf, n, "%" PRIu64 "ps", ps);
  return buf;
}

static const char *const role_word[] = {"gpu", "nvswitch", "nic", "switch", "pcie-switch"};

static void write_vertex(FILE *b, const topo *t, uint32_t v) {
  const topo_vertex *x = &t->vert[v];
  char name[48], lat[32];
  topo_vertex_name(t, v, name, sizeof name);
  fprintf(b, "    {\"name\": \"%s\", \"role\": \"%s\"", name, role_word[x->kind]);
  if (x->kind != TOPO_SWITCH) fprintf(b, ", \"server\": \"node%u\"", x->node);
  if (x->kind == TOPO_NIC || x->kind == TOPO_SWITCH) fprintf(b, ", \"plane\": %d", x->plane);
  if (x->kind == TOPO_SWITCH) {
    fprintf(b, ", \"tier\": %u", x->tier);
    if (x->pod != UINT32_MAX) fprintf(b, ", \"pod\": %u", x->pod);
    fprintf(b, ", \"ports\": %u", t->s.k);
    if (x->tier == TOPO_TIER_LEAF) fprintf(b, ", \"uplinks\": %u", t->s.up);
  }
  if (x->kind != TOPO_GPU && x->kind != TOPO_PCIE_SWITCH)
    fprintf(b, ", \"latency\": \"%s\"", time_text(lat, sizeof lat, x->latency));
  fprintf(b, "}");
}

/* The 1-based port of vertex v that carries link l. O(ports of v). */
static uint32_t port_of(const topo *t, uint32_t v, uint32_t l) {
  const topo_vertex *x = &t->vert[v];
  for (uint32_t i = 0; i < x->nports; i++)
    if (t->port[x->first_port + i] >> 1 == l) return i + 1;
  return 0;
}

static void write_link(FILE *b, const topo *t, const cfg_scenario *cfg, uint32_t l) {
  const topo_link *k = &t->link[l];
  rate_bps line = k->kind == TOPO_LINK_SCALE_UP   ? cfg->cluster.scale_up.bandwidth
                  : k->kind == TOPO_LINK_PCIE     ? cfg->cluster.pcie.bandwidth
                  : k->kind == TOPO_LINK_ENDPOINT ? cfg->cluster.nic.bandwidth
                                                  : cfg->fabric.link_bandwidth;
  const char *cable = k->kind == TOPO_LINK_SCALE_UP                                     ? "nvlink"
                      : k->kind == TOPO_LINK_PCIE                                       ? "pcie"
                      : k->kind == TOPO_LINK_FABRIC || cfg->cost.optical_endpoint_links ? "optical"
                                                                                        : "copper";
  char a[48], bn[48], sp[32], lat[32];
  topo_vertex_name(t, k->a, a, sizeof a);
  topo_vertex_name(t, k->b, bn, sizeof bn);
  fprintf(b,
          "    {\"a\": \"%s\", \"a_port\": %u, \"b\": \"%s\", \"b_port\": %u, \"speed\": \"%s\", "
          "\"latency\": \"%s\", \"cable\": \"%s\"}",
          a, port_of(t, k->a, l), bn, port_of(t, k->b, l), speed_text(sp, sizeof sp, line),
          time_text(lat, sizeof lat, k->latency), cable);
}

int topo_export(const topo *t, const cfg_scenario *cfg, const char *path, sim_error *err) {
  if (t->sto_servers)
    return sim_fail(err, SIM_ECONFIG,
                    "--export %s: storage servers (storage.servers) are not exported yet; "
                    "allowed: a fabric of compute nodes",
                    path);
  char *text = NULL;
  size_t len = 0;
  FILE *b = open_memstream(&text, &len); /* the whole file, then one atomic write */
  if (!b) return sim_fail(err, SIM_EIO, "--export %s: out of memory", path);
  fprintf(b, "{\n  \"format\": \"fabsim-fabric\",\n  \"version\": 1,\n  \"tiers\": %u,\n",
          t->s.tiers);
  fprintf(b, "  \"nodes\": [\n");
  for (uint32_t n = 0; n < t->nodes; n++)
    fprintf(b, "    {\"name\": \"node%u\", \"role\": \"server\"},\n", n);
  for (uint32_t v = 0; v < t->nvertices; v++) {
    write_vertex(b, t, v);
    fprintf(b, v + 1 < t->nvertices ? ",\n" : "\n");
  }
  fprintf(b, "  ],\n  \"links\": [\n");
  for (uint32_t l = 0; l < t->nlinks; l++) {
    write_link(b, t, cfg, l);
    fprintf(b, l + 1 < t->nlinks ? ",\n" : "\n");
  }
  fprintf(b, "  ]\n}\n");
  int rc = fclose(b) == 0 ? SIM_OK : SIM_EIO;
  if (rc == SIM_OK && !strcmp(path, "-"))
    rc = fwrite(text, 1, len, stdout) == len ? SIM_OK : SIM_EIO;
  else if (rc == SIM_OK) rc = sim_write_file_atomic(path, text, len, err);
  if (rc != SIM_OK && err && !err->msg[0]) sim_fail(err, rc, "--export %s: write failed", path);
  free(text); /* open_memstream's, from malloc */
  return rc;
}
