/* Internals shared by the files of the coll module. */
#ifndef FABSIM_COLL_INTERNAL_H
#define FABSIM_COLL_INTERNAL_H
#include "fabsim/coll.h"

/* Append a phase of n zeroed transfers repeated `repeat` times. */
coll_phase *coll__add_phase(coll_plan *p, size_t n, uint64_t repeat);
/* Split every transfer over q queue pairs (sets p->qps). */
void coll__split_qps(coll_plan *p, uint32_t q);

#endif
