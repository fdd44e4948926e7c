/* libFuzzer target for the fabric file readers (fabric.topology: file,
 * src/topo/import*.c, graph.c): a JSON or YAML graph, or ibnetdiscover
 * output (chosen by the first line, as fabsim chooses), then the checks
 * every fabric file passes. Any bytes must parse and check or fail with a
 * located message, never crash, hang or leak. Seeds: examples/fabrics/,
 * fuzz/corpus_fabric/ (make fuzz-smoke passes both). */
#include <stddef.h>
#include <stdint.h>

#include "topo/topo_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  topo__graph g;
  sim_error err = {0};
  topo__graph_init(&g, "fuzz");
  if (topo__import_graph(&g, (const char *)data, size, "^([^ ]+)", &err) != SIM_OK &&
      err.msg[0] == '\0')
    __builtin_trap(); /* a refusal says why */
  topo__graph_free(&g);
  return 0;
}
