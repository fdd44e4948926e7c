/* fabsim calibrate's pipeline below the verb (include/fabsim/calib.h,
 * cal_calibrate): read every file, check the output's name before anything
 * is spent, give shapeless files the base's, fit, write the fragment. */
#include <stdio.h>
#include <string.h>

#include "fabsim/calib.h"

/* The base as the fragment's header names it: the scenario or the
 * defaults, the --set overrides, the GPU read from the files. */
static void describe_inputs(char *buf, size_t n, const cal_base *b, const cal_fit *fit) {
  int used = snprintf(buf, n, "%s", b->path ? b->path : "fabsim's defaults");
  for (int i = 0; i < b->nsets && used < (int)n; i++)
    used += snprintf(buf + used, n - (size_t)used, " --set %s", b->sets[i]);
  if (fit->gpu[0] && used < (int)n)
    snprintf(buf + used, n - (size_t)used, ", cluster.gpu %s from the files", fit->gpu);
}

int cal_calibrate(const cal_request *q, cal_calibration *c, sim_error *err) {
  memset(c, 0, sizeof *c);
  c->runs = sim_calloc(q->nfiles ? q->nfiles : 1, sizeof *c->runs);
  int rc;
  for (; c->nruns < q->nfiles; c->nruns++)
    if ((rc = cal_nccltests_read(&c->runs[c->nruns], q->files[c->nruns], err)) != SIM_OK) return rc;
  /* before the fit: nothing spent; then files without rank lines take the
   * base's shape, which their rows must fit */
  if ((rc = cal_output_check(q->output, c->runs, c->nruns, err)) != SIM_OK ||
      (rc = cal_runs_shape_from_base(c->runs, c->nruns, &q->base, err)) != SIM_OK ||
      (rc = cal_fit_run(&c->fit, &q->base, c->runs, c->nruns, err)) != SIM_OK)
    return rc;
  c->fitted = true;
  char inputs[1024];
  describe_inputs(inputs, sizeof inputs, &q->base, &c->fit);
  char *frag = cal_fit_fragment(&c->fit, inputs);
  /* again: the name may have become something else during the fit */
  rc = cal_output_check(q->output, c->runs, c->nruns, err) != SIM_OK ||
               sim_write_file_atomic(q->output, frag, strlen(frag), err) != SIM_OK
           ? SIM_EIO
           : SIM_OK;
  sim_free(frag);
  return rc;
}

void cal_calibration_free(cal_calibration *c) {
  if (c->fitted) cal_fit_free(&c->fit);
  for (size_t i = 0; i < c->nruns; i++) cal_run_free(&c->runs[i]);
  sim_free(c->runs);
  memset(c, 0, sizeof *c);
}
