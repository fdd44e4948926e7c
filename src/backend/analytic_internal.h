/* Analytic fidelity internals the tests read. Not a public interface. */
#ifndef FABSIM_ANALYTIC_INTERNAL_H
#define FABSIM_ANALYTIC_INTERNAL_H

#include "fabsim/backend.h"

/* Phases an analytic backend timed by classes (slices with cuts, be_quot)
 * so far: a test that compares the class path with the others checks that
 * it ran. */
uint64_t be__analytic_class_phases(const be_backend *b);

#endif
