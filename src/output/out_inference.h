/* The serving figures (workload.kind inference, fabsim/infer.h) at the
 * edge: the terminal block and summary.json's "inference" object. Kept
 * apart from out_internal.h: run_text.c and run_summary.c call these two. */
#ifndef FABSIM_OUT_INFERENCE_H
#define FABSIM_OUT_INFERENCE_H

#include <stdio.h>

#include <jansson.h>

#include "fabsim/infer.h"

void out__inference_print(FILE *f, const inf_result *r, const cfg_scenario *cfg);
json_t *out__inference_json(const inf_result *r, const cfg_scenario *cfg);

#endif
