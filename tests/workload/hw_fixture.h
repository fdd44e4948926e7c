/* Shared by the compute tests (test_roofline.c, test_kernels.c): a scenario's
 * wl__hw and a relative comparison. Include after <cmocka.h> and fixture.h. */
#ifndef FABSIM_TEST_HW_FIXTURE_H
#define FABSIM_TEST_HW_FIXTURE_H

#include <math.h>

#include "workload/wl_internal.h"

static inline void assert_rel(double got, double want, double rel) {
  if (fabs(got - want) > rel * fabs(want))
    fail_msg("got %.15g, want %.15g (rel %.3g)", got, want, rel);
}

/* Loads the scenario of `sets` into f and the GPU's figures into hw. */
static inline void hw_of(const char *const *sets, int n, wl__hw *hw, fixture *f) {
  load(f, sets, n);
  wl__hw_init(hw, &f->cfg);
}

#endif
