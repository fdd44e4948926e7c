/* The fabric file readers (src/topo/graph.c, import_json.c, import_ibnd.c):
 * what a small graph and a small ibnetdiscover dump read into, the link
 * speed of every ibnetdiscover width and speed code against its closed
 * form (width x the nominal lane rate: SDR 2.5 .. XDR 200 Gb/s), each link
 * read once from its two ends, and located refusals. The whole import
 * (recognition, reload, link-for-link comparison) is checked end to end by
 * tests/cli/test_fabric_roundtrip.sh, test_fabric_errors.sh and
 * test_fabric_ibnd.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "topo/topo_internal.h"

static const char graph_yaml[] =
    "nodes:\n"
    "  - {name: n0, role: server}\n"
    "  - {name: g0, role: gpu, server: n0}\n"
    "  - {name: v0, role: nvswitch, server: n0}\n"
    "  - {name: c0, role: nic, server: n0}\n"
    "  - {name: s0, role: switch, ports: 4}\n"
    "links:\n"
    "  - {a: g0, b: v0, speed: 3600Gbps}\n"
    "  - {a: g0, b: c0, speed: 512Gbps, latency: 200ns}\n"
    "  - {a: c0, b: s0, speed: 400Gbps, a_port: 1, b_port: 3}\n";

static int read_text(topo__graph *g, const char *text, sim_error *err) {
  topo__graph_init(g, "t.yaml");
  return topo__import_graph(g, text, strlen(text), "^([^ ]+)", err);
}

static void test_graph_reads(void **state) {
  (void)state;
  topo__graph g;
  sim_error err = {0};
  assert_int_equal(read_text(&g, graph_yaml, &err), SIM_OK);
  assert_int_equal(g.nnodes, 5);
  assert_int_equal(g.nlinks, 3);
  assert_true(g.hosts);
  uint32_t c0, s0;
  assert_int_equal(topo__graph_find(&g, "c0", &c0), SIM_OK);
  assert_int_equal(topo__graph_find(&g, "s0", &s0), SIM_OK);
  assert_int_equal(g.node[c0].role, TOPO__R_NIC);
  assert_int_equal(g.node[c0].server, 0);
  assert_int_equal(g.node[s0].ports, 4);
  assert_int_equal(g.link[2].a, c0);
  assert_int_equal(g.link[2].b_port, 3);
  assert_true(g.link[2].bps == 400000000000ull);
  assert_true(g.link[1].latency == 200000ull);
  assert_int_equal(g.link[2].line, 10);
  topo__graph_free(&g);
}

/* text with `from` replaced by `to` reads to SIM_ECONFIG with msg in it */
static void refused(const char *from, const char *to, const char *msg) {
  char text[sizeof graph_yaml + 64];
  const char *at = strstr(graph_yaml, from);
  assert_non_null(at);
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - graph_yaml), graph_yaml, to,
           at + strlen(from));
  topo__graph g;
  sim_error err = {0};
  assert_int_equal(read_text(&g, text, &err), SIM_ECONFIG);
  if (!strstr(err.msg, msg)) fail_msg("'%s' lacks '%s'", err.msg, msg);
  topo__graph_free(&g);
}

static void test_graph_refusals(void **state) {
  (void)state;
  refused("b: s0, speed", "b: s9, speed", "t.yaml:10:5: links[2].b: 's9' names no node");
  refused("name: v0", "name: g0", "t.yaml:4:5: nodes[2].name: 'g0' is taken by the node at line 3");
  refused("400Gbps", "20Tbps", "t.yaml:10:27: links[2].speed: 20000000000000 b/s is out of range");
  refused("b_port: 3", "b_port: 5", "port 5 of 's0', which has 4 ports; allowed 1 .. 4");
  refused("{a: g0, b: c0, speed: 512Gbps, latency: 200ns}", "{a: g0, b: v0, speed: 512Gbps}",
          "nodes[1]: GPU 'g0' has no NIC");
  refused("role: switch", "role: router", "'router' is not a role");
}

/* One switch, two single-port CAs of two servers; every line as
 * ibnetdiscover prints it. */
static const char ibnd[] =
    "#\n# Topology file: generated on Mon Dec  7 12:00:00 2026\n#\n"
    "vendid=0x2c9\ndevid=0xd2f2\nswitchguid=0x10(10)\n"
    "Switch\t4 \"S-0000000000000010\"\t\t# \"leaf01\" enhanced port 0 lid 1 lmc 0\n"
    "[1]\t\"H-0000000000000020\"[1](21) \t\t# \"hostb mlx5_0\" lid 2 %s\n"
    "[2]\t\"H-0000000000000030\"[1](31) \t\t# \"hosta mlx5_0\" lid 3 %s\n"
    "\ncaguid=0x20\nCa\t1 \"H-0000000000000020\"\t\t# \"hostb mlx5_0\"\n"
    "[1](21) \t\"S-0000000000000010\"[1]\t\t# lid 2 lmc 0 \"leaf01\" lid 1 %s\n"
    "\ncaguid=0x30\nCa\t1 \"H-0000000000000030\"\t\t# \"hosta mlx5_0\"\n"
    "[1](31) \t\"S-0000000000000010\"[2]\t\t# lid 3 lmc 0 \"leaf01\" lid 1 %s\n";

static void test_ibnd_reads(void **state) {
  (void)state;
  static const struct {
    const char *code;
    rate_bps bps;
  } rates[] = {{"4xNDR", 400000000000ull},   {"4xHDR", 200000000000ull},
               {"4xEDR", 100000000000ull},   {"4xFDR", 56000000000ull},
               {"4xFDR10", 40000000000ull},  {"4xQDR", 40000000000ull},
               {"4xDDR", 20000000000ull},    {"1xSDR", 2500000000ull},
               {"12xXDR", 2400000000000ull}, {"2xNDR", 200000000000ull}};
  for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
    char text[2048];
    const char *c = rates[i].code;
    snprintf(text, sizeof text, ibnd, c, c, c, c);
    topo__graph g;
    sim_error err = {0};
    if (read_text(&g, text, &err) != SIM_OK) fail_msg("%s: %s", c, err.msg);
    assert_int_equal(g.nlinks, 2); /* each link once, from its two ends */
    assert_true(g.link[0].bps == rates[i].bps);
    assert_true(g.ibnd && g.no_latency && !g.hosts);
    /* servers and CAs by server name: hosta's before hostb's */
    uint32_t a, b, ca;
    assert_int_equal(topo__graph_find(&g, "hosta", &a), SIM_OK);
    assert_int_equal(topo__graph_find(&g, "hostb", &b), SIM_OK);
    assert_true(a < b);
    assert_int_equal(topo__graph_find(&g, "H-0000000000000030", &ca), SIM_OK);
    assert_int_equal(g.node[ca].server, a);
    assert_int_equal(g.node[ca].role, TOPO__R_NIC);
    topo__graph_free(&g);
  }
  char text[2048];
  snprintf(text, sizeof text, ibnd, "4xNDR", "4xNDR", "4xHDR", "4xNDR");
  topo__graph g;
  sim_error err = {0};
  assert_int_equal(read_text(&g, text, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "a speed that differs from the other end's"));
  topo__graph_free(&g);
  snprintf(text, sizeof text, ibnd, "4xNDR", "4xQQR", "4xNDR", "4xNDR");
  assert_int_equal(read_text(&g, text, &err), SIM_ECONFIG);
  assert_non_null(strstr(err.msg, "t.yaml:9:"));
  topo__graph_free(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_graph_reads),
      cmocka_unit_test(test_graph_refusals),
      cmocka_unit_test(test_ibnd_reads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
