/* fabsim memory below the verb: a training setup's memory per GPU and,
 * when it does not fit, the smallest setup on the same GPUs that does. */
#include <string.h>

#include "fabsim/run.h"

int run_memory_of(run_memory *r, const cfg_scenario *cfg, const cfg_doc *doc, const topo *t,
                  sim_error *err) {
  memset(r, 0, sizeof *r);
  int rc = wl_model_from_cfg(&r->model, cfg, doc, err);
  if (rc == SIM_OK)
    rc = wl_parallel_from_cfg(&r->parallel, &r->model, cfg, doc, topo_gpu_count(t), err);
  if (rc != SIM_OK) return rc;
  wl_memory_compute(&r->mem, &r->model, &r->parallel, cfg);
  if ((rc = wl_memory_check(&r->mem, &r->model, cfg, doc, err)) != SIM_OK) return rc;
  r->found = !r->mem.fits && wl_memory_search(&r->best, &r->best_mem, &r->model, &r->parallel, cfg);
  return SIM_OK;
}
