/* The capabilities of the backend interface (fabsim/backend.h, be_ops):
 * optional operations, answered SIM_EINVAL or false here for a fidelity
 * without them, so no caller asks for a fidelity by name. */
#include "fabsim/backend.h"

int be_port_sampling_start(be_backend *b, const be_port_spec *spec) {
  if (!b || !b->ops->port_sampling) return SIM_EINVAL;
  return b->ops->port_sampling(b, spec);
}

void be_port_samples_gather(be_backend *b, simtime_ps end) {
  if (b && b->ops->port_gather) b->ops->port_gather(b, end);
}

int be_port_samples_get(be_backend *b, simtime_ps end, be_port_samples *out) {
  if (!b || !b->ops->port_samples) return SIM_EINVAL;
  return b->ops->port_samples(b, end, out);
}

bool be_parallel_info_get(const be_backend *b, be_parallel_info *out) {
  return b && b->ops->parallel_info && b->ops->parallel_info(b, out);
}

int be_job_owners_set(be_backend *b, const uint32_t *job_of_gpu, uint32_t njobs) {
  if (!b || !b->ops->job_owners) return SIM_EINVAL;
  return b->ops->job_owners(b, job_of_gpu, njobs);
}

bool be_job_pauses_get(const be_backend *b, be_job_pauses *out) {
  return b && b->ops->job_pauses && b->ops->job_pauses(b, out);
}

void be_submit_slice(be_backend *b, const be_slice *sl, uint64_t repeat, be_done_fn done,
                     void *ctx) {
  if (b->ops->submit_slice) b->ops->submit_slice(b, sl, repeat, done, ctx);
  else b->ops->submit_phase(b, sl->pool + sl->off, sl->n, repeat, done, ctx);
}

void be_pool_release(be_backend *b, const be_xfer *pool) {
  if (b && b->ops->pool_release) b->ops->pool_release(b, pool);
}
