/* Internal to src/run: shared by its files. */
#ifndef FABSIM_RUN_INTERNAL_H
#define FABSIM_RUN_INTERNAL_H

#include "fabsim/run.h"

/* Run `job` on `sim` in slices of simulated time of about 0.05-0.2 s of
 * wall time each (slicing never changes results): a progress line on stderr
 * between slices when `show` (percent of `expected` when known), and Ctrl-C
 * stops after the current slice (*complete false). drive.c. */
int run__drive(const run_training *tr, wl_job *job, sim_ctx *sim, const char *what, bool show,
               simtime_ps expected, bool *complete, sim_error *err);

#endif
