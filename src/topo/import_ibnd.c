#include "topo/topo_internal.h"
int topo__parse_ibnd(topo__graph *g, const char *buf, size_t len, const char *map_server,
                     sim_error *err) {
  (void)buf;
  (void)len;
  (void)map_server;
  return topo__gfail(g, 1, 1, "file", err, "ibnetdiscover: not yet");
}
