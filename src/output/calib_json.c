/* fabsim calibrate --json (include/fabsim/out.h, out_calib_json): the fit
 * of include/fabsim/calib.h as one JSON object; the verb prints it. */
#include <string.h>

#include "fabsim/calib.h"
#include "output/out_internal.h"

static const char *const param_kinds[] = {"efficiency", "latency-factor", "bandwidth-factor"};

static json_t *range_json(const cal_rms *r, double target) {
  json_t *o = json_object();
  json_object_set_new(o, "rows", json_integer((json_int_t)r->rows));
  json_object_set_new(o, "rms_log_residual_before", r->rows ? json_real(r->before) : json_null());
  json_object_set_new(o, "rms_log_residual_after", r->rows ? json_real(r->after) : json_null());
  json_object_set_new(o, "target", json_real(target));
  json_object_set_new(o, "met", r->rows ? json_boolean(r->after <= target) : json_null());
  return o;
}

static json_t *algorithms_json(const cal_fit *f) {
  json_t *o = json_object(), *tried = json_array();
  json_object_set_new(o, "kept", json_string(cal_algos_name(f->algos)));
  for (int a = 0; a < CAL_NALGOS; a++) {
    if (!f->tried[a]) continue;
    json_t *t = json_object();
    json_object_set_new(t, "set", json_string(cal_algos_name((cal_algos)a)));
    json_object_set_new(t, "objective", json_real(f->cost[a]));
    json_object_set_new(t, "parameters", json_integer(f->nfitted[a]));
    json_array_append_new(tried, t);
  }
  json_object_set_new(o, "tried", tried);
  return o;
}

json_t *out_calib_json(const cal_fit *f, const char *written) {
  json_t *o = json_object();
  json_t *files = json_array();
  for (size_t i = 0; i < f->nfiles; i++) {
    const cal_file_fit *ff = &f->files[i];
    json_t *j = json_object(), *rows = json_array();
    json_object_set_new(j, "file", json_string(ff->run->name));
    json_object_set_new(j, "op", json_string(cal_op_name(ff->run->op)));
    json_object_set_new(j, "ranks", json_integer(ff->run->ranks));
    json_object_set_new(j, "nodes", json_integer(ff->run->nodes));
    json_object_set_new(j, "gpus_per_node", json_integer(ff->run->gpus_per_node));
    if (ff->run->shape_from_base)
      json_object_set_new(j, "shape_from_base", json_string(ff->run->shape_why));
    json_object_set_new(j, "busbw_table", json_boolean(ff->run->busbw_table));
    if (ff->run->aborted_line)
      json_object_set_new(j, "aborted_line", json_integer(ff->run->aborted_line));
    for (size_t k = 0; k < ff->run->n; k++) {
      const cal_row *w = &ff->rows[k];
      json_t *r = json_object();
      json_object_set_new(r, "bytes", json_integer((json_int_t)w->bytes));
      json_object_set_new(r, "line", json_integer(w->line));
      json_object_set_new(r, "measured_us", json_real(w->measured_us));
      json_object_set_new(r, "before_us", w->used ? json_real(w->before_us) : json_null());
      json_object_set_new(r, "fitted_us", w->used ? json_real(w->fitted_us) : json_null());
      json_object_set_new(r, "measured_busbw_GBps", json_real(w->measured_busbw_GBps));
      json_object_set_new(r, "fitted_busbw_GBps",
                          w->used ? json_real(w->fitted_busbw_GBps) : json_null());
      json_object_set_new(r, "residual",
                          w->used ? json_real(w->fitted_us / w->measured_us - 1) : json_null());
      json_object_set_new(r, "algorithm", json_string(cfg_coll_algorithm_name(w->algorithm)));
      json_object_set_new(r, "protocol", json_string(cfg_coll_protocol_name(w->protocol)));
      json_array_append_new(rows, r);
    }
    json_object_set_new(j, "rows", rows);
    json_object_set_new(j, "rms_log_residual_before", json_real(ff->rms_before));
    json_object_set_new(j, "rms_log_residual_after", json_real(ff->rms_after));
    json_object_set_new(j, "small", range_json(&ff->small, CAL_TARGET_SMALL));
    json_object_set_new(j, "large", range_json(&ff->large, CAL_TARGET_LARGE));
    json_array_append_new(files, j);
  }
  json_object_set_new(o, "files", files);
  json_t *params = json_array();
  for (int p = 0; p < CAL_NPARAM; p++) {
    json_t *j = json_object();
    json_object_set_new(j, "name", json_string(cal_param_name((cal_param)p)));
    json_object_set_new(j, "kind", json_string(param_kinds[cal_param_kind_of((cal_param)p)]));
    json_object_set_new(j, "fitted", json_boolean(f->fitted[p]));
    json_object_set_new(j, "before", json_real(f->before[p]));
    json_object_set_new(j, "after", json_real(f->after[p]));
    json_array_append_new(params, j);
  }
  json_object_set_new(o, "parameters", params);
  char sets[64][128];
  size_t n = cal_fit_sets(f, sets, 64);
  json_t *keys = json_object();
  for (size_t i = 0; i < n && i < 64; i++) {
    char *eq = strchr(sets[i], '=');
    *eq = 0;
    json_object_set_new(keys, sets[i], json_string(eq + 1));
  }
  json_object_set_new(o, "keys", keys);
  json_object_set_new(o, "gpu_from_files", f->gpu[0] ? json_string(f->gpu) : json_null());
  json_object_set_new(o, "rows", json_integer((json_int_t)f->rows_used));
  json_object_set_new(o, "rows_skipped", json_integer((json_int_t)f->rows_skipped));
  json_object_set_new(o, "algorithms", algorithms_json(f));
  json_object_set_new(o, "rms_log_residual_before", json_real(f->rms_before));
  json_object_set_new(o, "rms_log_residual_after", json_real(f->rms_after));
  json_object_set_new(o, "evaluations", json_integer(f->evaluations));
  json_object_set_new(o, "written", json_string(written));
  return o;
}
