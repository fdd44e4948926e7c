/* The latency keys the fit scales (include/fabsim/calib.h,
 * cal_latency_keys): every workload.collective.latency.* key, in schema
 * order, with its latency factor and its place in cfg_coll_latency. One
 * table for the fit (fit.c), the fragment (fragment.c) and the printout
 * (src/cli/cmd_calibrate.c), so a key is named once.
 */
#include <stddef.h>
#include <string.h>

#include "fabsim/calib.h"

#define PROTO(p, P)                                                                \
  {P, "workload.collective.latency." #p ".launch", "launch",                       \
   offsetof(cfg_coll_latency, p.launch)},                                          \
      {P, "workload.collective.latency." #p ".nvlink_hop", "nvlink_hop",           \
       offsetof(cfg_coll_latency, p.nvlink_hop)},                                  \
      {P, "workload.collective.latency." #p ".network_hop", "network_hop",         \
       offsetof(cfg_coll_latency, p.network_hop)},                                 \
      {P, "workload.collective.latency." #p ".tree_launch", "tree_launch",         \
       offsetof(cfg_coll_latency, p.tree_launch)},                                 \
      {P, "workload.collective.latency." #p ".tree_nvlink_hop", "tree_nvlink_hop", \
       offsetof(cfg_coll_latency, p.tree_nvlink_hop)},                             \
  {                                                                                \
    P, "workload.collective.latency." #p ".tree_network_hop", "tree_network_hop",  \
        offsetof(cfg_coll_latency, p.tree_network_hop)                             \
  }
#define SWITCH(a, P)                                                    \
  {P, "workload.collective.latency." #a ".nvlink_hop", "nvlink_hop",    \
   offsetof(cfg_coll_latency, a.nvlink_hop)},                           \
  {                                                                     \
    P, "workload.collective.latency." #a ".network_hop", "network_hop", \
        offsetof(cfg_coll_latency, a.network_hop)                       \
  }

static const cal_latency_key keys[] = {
    PROTO(ll, CAL_PARAM_LAT_LL),
    PROTO(ll128, CAL_PARAM_LAT_LL128),
    PROTO(simple, CAL_PARAM_LAT_SIMPLE),
    SWITCH(nvls, CAL_PARAM_LAT_NVLS),
    SWITCH(nvlstree, CAL_PARAM_LAT_NVLSTREE),
    SWITCH(collnet, CAL_PARAM_LAT_COLLNET),
};
_Static_assert(sizeof keys / sizeof *keys * sizeof(simtime_ps) == sizeof(cfg_coll_latency),
               "a key for every latency");

const cal_latency_key *cal_latency_keys(size_t *n) {
  *n = sizeof keys / sizeof *keys;
  return keys;
}

simtime_ps cal_latency_get(const cfg_coll_latency *l, const cal_latency_key *k) {
  simtime_ps v;
  memcpy(&v, (const char *)l + k->offset, sizeof v);
  return v;
}
