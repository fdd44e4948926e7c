/* fabsim calibrate's terminal report (include/fabsim/out.h,
 * out_calib_print): the fit of include/fabsim/calib.h, file by file, then
 * the algorithm sets tried and the parameters before and after. */
#include <stdio.h>
#include <string.h>

#include "fabsim/calib.h"
#include "output/out_internal.h"

/* A plain figure (an rms, a factor, a table cell) by the one rule. */
static const char *num(char *buf, size_t n, double v) {
  return sim_fmt(buf, n, v, SIM_UNIT_NUMBER);
}

static void print_range(const char *what, const cal_rms *r, double target) {
  if (!r->rows) {
    printf("    %-13s no rows\n", what);
    return;
  }
  char a[32], b[32], c[32], d[48];
  printf("    %-13s %s -> %s over %s (target %s: %s)\n", what, num(a, sizeof a, r->before),
         num(b, sizeof b, r->after), sim_fmt_noun(d, sizeof d, r->rows, "row"),
         num(c, sizeof c, target), r->after <= target ? "met" : "missed");
}

static void print_file(const cal_file_fit *ff) {
  const cal_run *r = ff->run;
  printf("\n%s: %s, %u GPUs (%u node%s x %u)\n", r->name, cal_op_name(r->op), r->ranks, r->nodes,
         r->nodes == 1 ? "" : "s", r->gpus_per_node);
  if (r->shape_from_base) printf("  the shape is the base's: %s\n", r->shape_why);
  if (r->busbw_table)
    printf("  a busbw table: each time is size x bus factor / busbw (busbw's rounding included)\n");
  if (r->aborted_line)
    printf("  the run aborted at line %u after its last row: the rows before it are read\n",
           r->aborted_line);
  printf("  %12s %12s %12s %11s %11s %9s  %s\n", "size", "measured us", "fitted us", "busbw meas",
         "busbw fit", "residual", "as run");
  for (size_t k = 0; k < r->n; k++) {
    const cal_row *w = &ff->rows[k];
    char sz[32], m[32], ft[32], mb[32], fb[32];
    sim_fmt_bytes(sz, sizeof sz, w->bytes);
    num(m, sizeof m, w->measured_us);
    num(mb, sizeof mb, w->measured_busbw_GBps);
    if (!w->used) {
      printf("  %12s %12s %12s %11s %11s %9s  (not fitted: size 0)\n", sz, m, "-", mb, "-", "-");
      continue;
    }
    printf("  %12s %12s %12s %11s %11s %+8.1f%%  %s/%s\n", sz, m, num(ft, sizeof ft, w->fitted_us),
           mb, num(fb, sizeof fb, w->fitted_busbw_GBps), 100 * (w->fitted_us / w->measured_us - 1),
           cfg_coll_algorithm_name(w->algorithm), cfg_coll_protocol_name(w->protocol));
  }
  char a[32], b[32];
  printf("  rms of ln(fitted / measured time): %s before the fit, %s after\n",
         num(a, sizeof a, ff->rms_before), num(b, sizeof b, ff->rms_after));
  print_range("under 64 KiB", &ff->small, CAL_TARGET_SMALL);
  print_range("from 64 KiB", &ff->large, CAL_TARGET_LARGE);
}

static void us_text(char *out, size_t cap, simtime_ps ps) {
  sim_fmt_seconds(out, cap, sim_ps_to_s(ps));
}

void out_calib_print(const cal_fit *f, const char *written) {
  char ob[32], pb[32], pa[32];
  printf("fabsim calibrate: %zu file%s, %zu rows, %u model evaluations%s%s%s\n", f->nfiles,
         f->nfiles == 1 ? "" : "s", f->rows_used, f->evaluations, f->gpu[0] ? ", cluster.gpu " : "",
         f->gpu, f->gpu[0] ? " from the files" : "");
  for (size_t i = 0; i < f->nfiles; i++) print_file(&f->files[i]);
  if (f->tried[CAL_ALGOS_NO_NVLS] || f->tried[CAL_ALGOS_RING]) {
    printf("\nalgorithms (kept: %s; a richer set only when n ln(cost ratio) passes chi2 0.95)\n",
           cal_algos_name(f->algos));
    for (int a = CAL_NALGOS - 1; a >= 0; a--)
      if (f->tried[a])
        printf("  %-16s objective %s, %u parameters%s\n", cal_algos_name((cal_algos)a),
               num(ob, sizeof ob, f->cost[a]), f->nfitted[a],
               (cal_algos)a == f->algos ? "  <- kept" : "");
  }
  printf("\nparameters                                before     after\n");
  for (int p = 0; p < CAL_NPARAM; p++) {
    if (cal_param_kind_of((cal_param)p) == CAL_KIND_LATENCY) continue;
    if (cal_param_kind_of((cal_param)p) == CAL_KIND_BANDWIDTH && !f->fitted[p]) continue;
    printf("  %-38s %8s  %8s%s%s\n", cal_param_name((cal_param)p), num(pb, sizeof pb, f->before[p]),
           num(pa, sizeof pa, f->after[p]),
           f->fitted[p] ? "" : "  (not measured by these files: kept)",
           f->at_bound[p] && f->after[p] != f->before[p] ? "  (at its bound 0.3..1)" : "");
  }
  size_t nk;
  const cal_latency_key *k = cal_latency_keys(&nk);
  for (int p = CAL_PARAM_LAT_LL; p < CAL_PARAM_BW_RING; p++) {
    const char *name = cal_param_name((cal_param)p) + strlen("workload.collective.latency.");
    if (!f->fitted[p]) {
      printf("  latency %-30s x1 (no row ran on %s: kept)\n", name, name);
      continue;
    }
    printf("  latency %-30s x1        x%s:", name, num(pa, sizeof pa, f->after[p]));
    int shown = 0;
    for (size_t i = 0; i < nk && shown < 3; i++) {
      if (k[i].param != (cal_param)p) continue;
      char b[32], a[32];
      us_text(b, sizeof b, cal_latency_get(&f->lat_before, &k[i]));
      us_text(a, sizeof a, cal_latency_get(&f->lat_after, &k[i]));
      printf("%s %s %s -> %s", shown++ ? "," : "", k[i].field, b, a);
    }
    printf("%s\n", p <= CAL_PARAM_LAT_SIMPLE ? " (tree keys alike)" : "");
    if (f->at_bound[p])
      printf(
          "    at the factor's bound (1/8..8): the rows ask for more than a latency gives%s%s%s\n",
          p >= CAL_PARAM_LAT_NVLS ? "; if the cluster did not run " : "",
          p >= CAL_PARAM_LAT_NVLS ? name : "",
          p >= CAL_PARAM_LAT_NVLS ? ", say so (NCCL_ALGO in the file, or --set "
                                    "workload.collective.nvls=false / fabric.sharp=false)"
                                  : "");
  }
  printf("rms of ln(fitted / measured time) over every row: %s before, %s after\n",
         num(pb, sizeof pb, f->rms_before), num(pa, sizeof pa, f->rms_after));
  if (f->rows_skipped) printf("rows left out of the fit: %zu (size 0)\n", f->rows_skipped);
  printf(
      "written      %s: fabsim run %s, or over another scenario with the --set arguments "
      "in its header\n",
      written, written);
}
