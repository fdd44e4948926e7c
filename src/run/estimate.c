/* A rough length of a collective or traffic plan (fabsim/run.h). */
#include "fabsim/run.h"

/* A rough length of the plan: per phase, the busiest GPU's bytes over its
 * path's first hop rate, plus latency; staggered phases overlap. Only for
 * the sample interval and the progress line's percent. O(transfers). */
simtime_ps run_plan_estimate(const coll_plan *p, const topo *t, const cfg_scenario *cfg) {
  uint32_t ngpu = topo_gpu_count(t);
  double *busy = sim_calloc(ngpu ? ngpu : 1, sizeof *busy);
  double total = 0, latest = 0;
  double nic = (double)cfg->cluster.nic.bandwidth, nvl = (double)cfg->cluster.scale_up.bandwidth;
  for (size_t i = 0; i < p->nphases; i++) {
    const coll_phase *ph = &p->phases[i];
    double worst = 0;
    for (size_t k = 0; k < ph->n; k++) {
      const be_xfer *x = &ph->x[k];
      bool local = topo_gpu_node(t, x->src_gpu) == topo_gpu_node(t, x->dst_gpu);
      double s = (busy[x->src_gpu] += (double)x->bytes * 8 / (local ? nvl : nic));
      if (s > worst) worst = s;
    }
    for (size_t k = 0; k < ph->n; k++) busy[ph->x[k].src_gpu] = 0;
    double phase = (worst + 5e-6) * (double)ph->repeat;
    if (p->stagger) {
      double end = (double)i * sim_ps_to_s(p->stagger) + phase;
      if (end > latest) latest = end;
    } else {
      total += phase;
    }
  }
  sim_free(busy);
  double s = p->stagger ? latest : total;
  return s > 1e6 ? SIM_PS_PER_S * 1000000 : (simtime_ps)(s * 1e12);
}
