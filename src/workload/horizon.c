/* A job that would pass the horizon of simulated time (WL_HORIZON_PS) is
 * refused before anything runs, at the key that takes it there
 * (fabsim/workload.h, wl_check_horizon): its repetitions at full speed, or a
 * gpu-slowdown whose factor stretches the compute left after it (at least
 * the job's compute less the fault's time). Both are lower bounds (compute
 * only), so what is refused would certainly pass. */
#include <math.h>
#include <stdio.h>

#include "fabsim/workload.h"

int wl_check_horizon(const cfg_scenario *cfg, const cfg_doc *doc, double each_ps, uint32_t n,
                     const char *unit, const char *what, sim_error *err) {
  double h = (double)WL_HORIZON_PS, total = each_ps * n;
  if (total >= h)
    return cfg_fail_at(doc, "workload.steps", err,
                       "%u %s of at least %.6g s of %s each pass the horizon of simulated "
                       "time, %.4g s (2^62 ps, %.1f days); allowed: at most %.0f %s",
                       n, unit, each_ps * 1e-12, what, h * 1e-12, h * 1e-12 / 86400,
                       floor((h - 1) / each_ps), unit);
  for (uint32_t i = 0; i < cfg->faults.n; i++) {
    const cfg_fault *f = &cfg->faults.v[i];
    double at = (double)f->at;
    if (f->kind != CFG_FAULT_GPU_SLOWDOWN || !(f->factor < 1) || at >= total) continue;
    double end = at + (total - at) / f->factor;
    if (end < h) continue;
    char key[64];
    snprintf(key, sizeof key, "faults[%u].factor", i);
    return cfg_fail_at(doc, key, err,
                       "%g stretches the %.6g s of %s left after %.6g s to %.4g s, past the "
                       "horizon of simulated time, %.4g s (2^62 ps, %.1f days); allowed: at least "
                       "%.3g for these %u %s",
                       f->factor, (total - at) * 1e-12, what, at * 1e-12, end * 1e-12, h * 1e-12,
                       h * 1e-12 / 86400, (total - at) / (h - at) * 1.001, n, unit);
  }
  return SIM_OK;
}
