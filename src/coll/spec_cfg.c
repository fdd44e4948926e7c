/* A collective from a scenario (include/fabsim/coll.h, coll_spec_from_cfg
 * and coll_plan_from_cfg): the one place the workload.collective keys
 * become a coll_spec, so a key fabsim calibrate fits (a latency, a
 * bandwidth factor) reaches every caller: fabsim run's collectives and
 * jobs (src/run), training steps (src/workload), traces (src/trace) and
 * the calibration itself (src/calib). */
#include <stdio.h>
#include <string.h>

#include "coll/coll_internal.h"

coll_spec coll_spec_from_cfg(const cfg_scenario *cfg, cfg_coll_op op, uint64_t bytes,
                             const uint32_t *ranks, uint32_t n) {
  coll_spec s = {
      .op = op,
      .algorithm = cfg->workload.collective.algorithm,
      .bytes = bytes,
      .ranks = ranks,
      .nranks = n,
      .channels = cfg->workload.collective.channels ? cfg->workload.collective.channels
                                                    : cfg->cluster.nic.per_node,
      .chunk = cfg->workload.collective.chunk,
      .qps = cfg->workload.qps_per_connection,
      .protocol = cfg->workload.collective.protocol,
      .latency = &cfg->workload.collective.latency,
      .bandwidth = &cfg->workload.collective.bandwidth,
      .pxn_serial = !cfg->workload.overlap.pxn,
  };
  coll_spec_set_hw(&s, cfg); /* what the GPU and fabric offer the tuner (NVLS, SHARP) */
  return s;
}

int coll_plan_from_cfg(coll_plan *plan, const topo *t, const cfg_scenario *cfg, const cfg_doc *doc,
                       const uint32_t *gpus, uint32_t ngpus, sim_error *err) {
  memset(plan, 0, sizeof *plan);
  uint32_t have = gpus ? ngpus : topo_gpu_count(t);
  uint32_t n = cfg->workload.collective.ranks ? cfg->workload.collective.ranks : have;
  if (n > have)
    return cfg_fail_at(doc, "workload.collective.ranks", err,
                       "%u ranks but the %s has %u GPUs; allowed: %u..%u, or 0 for all", n,
                       gpus ? "job" : "cluster", have, gpus ? 2u : 1u, have);
  uint32_t *ids = NULL;
  if (!gpus) { /* GPUs 0..n-1 */
    ids = sim_malloc((n ? n : 1) * sizeof *ids);
    for (uint32_t i = 0; i < n; i++) ids[i] = i;
  }
  coll_spec spec = coll_spec_from_cfg(cfg, cfg->workload.collective.op,
                                      cfg->workload.collective.size, gpus ? gpus : ids, n);
  int rc = coll_plan_build(plan, t, &spec, err);
  sim_free(ids); /* the plan keeps GPU ids, not the array */
  if (rc != SIM_OK) {
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return cfg_fail_at(doc, "workload.collective.algorithm", err, "%s", msg);
  }
  coll_plan_set_class(plan, cfg->workload.tclass);
  return SIM_OK;
}
