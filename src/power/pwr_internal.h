/* src/power internals shared by series.c and mitigate.c. */
#ifndef FABSIM_PWR_INTERNAL_H
#define FABSIM_PWR_INTERNAL_H

#include "fabsim/power.h"

/* The cluster's GPU watts when every GPU idles (*idle) and the watts its computing adds at
 * full compute (*dynamic), each rack at its throttle at u (none for u < 0). O(racks). */
void pwr__gpu_watts(const pwr_model *m, double u, double *idle, double *dynamic);
/* IT kW besides the GPUs: servers, NICs, switches, optics (constant). */
double pwr__rest_kw(const pwr_model *m);
/* Row i's GPU watts: idle + compute[i] x dynamic. */
static inline double pwr__row_gpu_w(const pwr_series_in *in, size_t i, double idle,
                                    double dynamic) {
  return idle + in->compute[i] * dynamic;
}
/* The figures of pwr_over_time (peak, trough, mean, energy, swing, ramp, spectrum and the
 * bands' RMS into band_rms_kw, may be NULL) of the facility series kw[0 .. in->rows - 1]. */
void pwr__figures(const pwr_series_in *in, const double *kw, pwr_over_time *out,
                  double *band_rms_kw);

#endif
