/* The fit of link efficiencies and protocol latencies to nccl-tests rows
 * (include/fabsim/calib.h, cal_fit_run).
 *
 * Model: each row is simulated as fabsim run would (cal_simulate) on a
 * cluster of the file's shape, with the tuner's algorithm, protocol and
 * channels, among the algorithms of one candidate set (cal_algos).
 * Parameters:
 *   - NVLink efficiency (cluster.scale_up.efficiency), when a file is one
 *     node: its large rows run at NVLink rates;
 *   - NIC efficiency (cluster.nic.efficiency), when a file spans nodes;
 *   - one latency factor per protocol the tuner runs on some row: it scales
 *     every workload.collective.latency.<protocol>.* key of the base (launch
 *     and per-hop, ring and tree), keeping the ratios of NCCL's tuning model;
 *     small rows are all latency;
 *   - one latency factor per in-switch algorithm the tuner runs on some row
 *     (nvls, nvlstree, collnet: their workload.collective.latency.<algo>.*
 *     keys); those rows carry no protocol latency;
 *   - one bandwidth factor per algorithm (ring, tree, nvls, nvlstree,
 *     collnet) the tuner runs on some row: workload.collective.bandwidth.*,
 *     the rate its transfers achieve beside the links' efficiencies.
 * Objective: sum over rows of soft_l1(ln(t_model / t_measured)), scale 0.1;
 * on log time, so a 10% miss at 8 B weighs what it weighs at 8 GiB.
 * Search: compass search (each parameter in turn, +step then -step, kept
 * when strictly better; all steps halved after a sweep without a move),
 * first without the in-switch and bandwidth factors, then with them from
 * that point,
 * inside the bounds, efficiencies snapped to 1e-4 and latencies to whole
 * nanoseconds, so the written keys reproduce the fitted model exactly.
 * Algorithms: the candidate sets of cal_algos, fitted each from the base,
 * the simplest first (the ring alone, then with the tree, then with NVLS
 * and NVLSTree); a richer set replaces the kept one when
 *   n ln(cost_kept / cost_richer) > chi2_0.95(k),
 * k the parameters it fits beyond the kept set's (at least 1), n the rows:
 * the likelihood-ratio test of nested models with Gaussian residuals of
 * unknown variance, the objective standing for the sum of squares.
 * Deterministic: fixed order, no randomness. Cost per evaluation: one
 * analytic run per row, and one topology per file when an efficiency moved;
 * one search per candidate set tried.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fabsim/calib.h"

enum { MAX_EVALS = 3000 };
/* the precision of a printed time, relative: the residual no fit can be
 * told to beat (the likelihood-ratio test's floor) */
static const double PRINT_SIGMA = 1e-3;
static const double SOFT_L1_SCALE = 0.1;
static const double EFF_MIN = 0.3, EFF_MAX = 1.0, EFF_STEP0 = 0.08, EFF_STEP_MIN = 1e-4;
static const double LAT_LN_MIN = -2.0794415416798357 /* ln 1/8 */, LAT_LN_MAX = 2.0794415416798357;
static const double LAT_STEP0 = 0.4, LAT_STEP_MIN = 1e-3;

const char *cal_param_name(cal_param p) {
  static const char *const names[CAL_NPARAM] = {
      "cluster.scale_up.efficiency",          "cluster.nic.efficiency",
      "workload.collective.latency.ll",       "workload.collective.latency.ll128",
      "workload.collective.latency.simple",   "workload.collective.latency.nvls",
      "workload.collective.latency.nvlstree", "workload.collective.latency.collnet",
      "workload.collective.bandwidth.ring",   "workload.collective.bandwidth.tree",
      "workload.collective.bandwidth.nvls",   "workload.collective.bandwidth.nvlstree",
      "workload.collective.bandwidth.collnet"};
  return (unsigned)p < CAL_NPARAM ? names[p] : "unknown";
}

cal_param_kind cal_param_kind_of(cal_param p) {
  return p <= CAL_PARAM_NIC_EFF  ? CAL_KIND_EFFICIENCY
         : p < CAL_PARAM_BW_RING ? CAL_KIND_LATENCY
                                 : CAL_KIND_BANDWIDTH;
}

cfg_coll_algorithm cal_param_algorithm(cal_param p) {
  switch (p) {
  case CAL_PARAM_LAT_NVLS:
  case CAL_PARAM_BW_NVLS: return CFG_ALGO_NVLS;
  case CAL_PARAM_LAT_NVLSTREE:
  case CAL_PARAM_BW_NVLSTREE: return CFG_ALGO_NVLSTREE;
  case CAL_PARAM_LAT_COLLNET:
  case CAL_PARAM_BW_COLLNET: return CFG_ALGO_COLLNET;
  case CAL_PARAM_BW_RING: return CFG_ALGO_RING;
  case CAL_PARAM_BW_TREE: return CFG_ALGO_TREE;
  default: return CFG_ALGO_AUTO;
  }
}

const char *cal_algos_name(cal_algos a) {
  static const char *const names[CAL_NALGOS] = {"every algorithm", "no NVLS", "ring only"};
  return (unsigned)a < CAL_NALGOS ? names[a] : "unknown";
}

/* The bandwidth factor of file rows run as algorithm a (CAL_NPARAM: none). */
static cal_param bandwidth_param(cfg_coll_algorithm a) {
  switch (a) {
  case CFG_ALGO_RING: return CAL_PARAM_BW_RING;
  case CFG_ALGO_TREE: return CAL_PARAM_BW_TREE;
  case CFG_ALGO_NVLS: return CAL_PARAM_BW_NVLS;
  case CFG_ALGO_NVLSTREE: return CAL_PARAM_BW_NVLSTREE;
  case CFG_ALGO_COLLNET: return CAL_PARAM_BW_COLLNET;
  default: return CAL_NPARAM;
  }
}

/* The bandwidth factors as a cfg_coll_bandwidth field, by parameter. */
static double *bandwidth_field(cfg_coll_bandwidth *b, cal_param p) {
  switch (p) {
  case CAL_PARAM_BW_RING: return &b->ring;
  case CAL_PARAM_BW_TREE: return &b->tree;
  case CAL_PARAM_BW_NVLS: return &b->nvls;
  case CAL_PARAM_BW_NVLSTREE: return &b->nvlstree;
  default: return &b->collnet;
  }
}

/* One file's cluster, loaded once from the base with the file's shape;
 * its topology is rebuilt only when an efficiency moves (latency steps,
 * half of the search, reuse it). */
typedef struct shape {
  cfg_scenario cfg;
  cfg_doc *doc;
  topo *t;       /* owned; built for eff[] */
  double eff[2]; /* NVLink, NIC efficiency t was built with */
} shape;

typedef struct fitter {
  const cal_run *runs;
  size_t nruns;
  shape *shapes;
  cfg_coll_latency lat0; /* the base's latencies (the first file's cfg) */
  double x[CAL_NPARAM];  /* efficiencies as values, latency factors as ln */
  bool on[CAL_NPARAM];
  uint32_t evals;
} fitter;

static simtime_ps scale_ns(simtime_ps v, double f) {
  return (simtime_ps)llround((double)v * f / 1000.0) * 1000;
}

/* The latencies for ln factors x[LAT_*], rounded to whole nanoseconds;
 * keys whose factor is 1 keep the base's exact values. */
static void latency_of(const cfg_coll_latency *base, const double *x, cfg_coll_latency *out) {
  *out = *base;
  size_t n;
  const cal_latency_key *k = cal_latency_keys(&n);
  for (size_t i = 0; i < n; i++) {
    if (x[k[i].param] == 0) continue;
    simtime_ps v = scale_ns(cal_latency_get(base, &k[i]), exp(x[k[i].param]));
    memcpy((char *)out + k[i].offset, &v, sizeof v);
  }
}

/* The latency factor a row informs: its in-switch algorithm's (CollNet
 * over NVLS runs on the nvls keys), else its protocol's. */
static cal_param latency_param(const cal_row *w, const cfg_scenario *cfg) {
  coll_spec sp = {0};
  coll_spec_set_hw(&sp, cfg);
  switch (w->algorithm) {
  case CFG_ALGO_NVLS: return CAL_PARAM_LAT_NVLS;
  case CFG_ALGO_NVLSTREE: return CAL_PARAM_LAT_NVLSTREE;
  case CFG_ALGO_COLLNET: return sp.nvls ? CAL_PARAM_LAT_NVLS : CAL_PARAM_LAT_COLLNET;
  default:
    return w->protocol == CFG_PROTO_LL      ? CAL_PARAM_LAT_LL
           : w->protocol == CFG_PROTO_LL128 ? CAL_PARAM_LAT_LL128
                                            : CAL_PARAM_LAT_SIMPLE;
  }
}

/* The scenario of file i under parameters x (a shallow copy: shares the
 * loaded scenario's strings, never freed). */
static cfg_scenario scenario_at(const fitter *F, size_t i, const double *x) {
  cfg_scenario c = F->shapes[i].cfg;
  if (F->on[CAL_PARAM_NVLINK_EFF]) c.cluster.scale_up.efficiency = x[CAL_PARAM_NVLINK_EFF];
  if (F->on[CAL_PARAM_NIC_EFF]) c.cluster.nic.efficiency = x[CAL_PARAM_NIC_EFF];
  latency_of(&F->shapes[i].cfg.workload.collective.latency, x, &c.workload.collective.latency);
  for (int p = CAL_PARAM_BW_RING; p < CAL_NPARAM; p++)
    if (F->on[p]) *bandwidth_field(&c.workload.collective.bandwidth, (cal_param)p) = x[p];
  return c;
}

static double soft_l1(double r) {
  double z = r / SOFT_L1_SCALE;
  return 2 * SOFT_L1_SCALE * SOFT_L1_SCALE * (sqrt(1 + z * z) - 1);
}

static bool row_used(const cal_point *p) { return p->bytes > 0 && p->time_us > 0; }

static void rms_add(double *sq, size_t *n, double res) {
  *sq += res * res;
  (*n)++;
}
static double rms_of(double sq, size_t n) { return n ? sqrt(sq / (double)n) : 0; }

/* Simulate every used row of every file at x; rows (optional, per file)
 * get the model's figures; *cost the objective, *sq the sum of squared log
 * residuals. */
static int evaluate(fitter *F, const double *x, cal_file_fit *rows, bool before, double *cost,
                    double *sq, sim_error *err) {
  *cost = 0;
  if (sq) *sq = 0;
  F->evals++;
  for (size_t i = 0; i < F->nruns; i++) {
    const cal_run *r = &F->runs[i];
    cfg_scenario c = scenario_at(F, i, x);
    shape *sh = &F->shapes[i];
    int rc = SIM_OK;
    if (!sh->t || sh->eff[0] != c.cluster.scale_up.efficiency ||
        sh->eff[1] != c.cluster.nic.efficiency) {
      if (sh->t) topo_free(sh->t);
      sh->t = NULL;
      if ((rc = topo_build(&sh->t, &c, sh->doc, err)) != SIM_OK) return rc;
      sh->eff[0] = c.cluster.scale_up.efficiency;
      sh->eff[1] = c.cluster.nic.efficiency;
    }
    const topo *t = sh->t;
    double fsq = 0, ssq = 0, lsq = 0;
    size_t used = 0, ns = 0, nl = 0;
    for (size_t j = 0; j < r->n && rc == SIM_OK; j++) {
      const cal_point *p = &r->pt[j];
      if (!row_used(p)) continue;
      cal_sim s;
      rc = cal_simulate(t, &c, r->op, p->bytes, r->ranks, &s, err);
      if (rc != SIM_OK) break;
      double us = s.time_s * 1e6, res = log(us / p->time_us);
      *cost += soft_l1(res);
      rms_add(&fsq, &used, res);
      if (p->bytes < CAL_SMALL_BYTES) rms_add(&ssq, &ns, res);
      else rms_add(&lsq, &nl, res);
      if (rows) {
        cal_row *w = &rows[i].rows[j];
        if (before) w->before_us = us;
        w->fitted_us = us;
        w->fitted_busbw_GBps = s.busbw_GBps;
        w->algorithm = s.algorithm;
        w->protocol = s.protocol;
      }
    }
    if (rc != SIM_OK) {
      char msg[sizeof err->msg];
      snprintf(msg, sizeof msg, "%s", err->msg);
      return sim_fail(err, rc, "%s: %s", r->name, msg);
    }
    if (sq) *sq += fsq;
    if (rows) {
      cal_file_fit *ff = &rows[i];
      if (before) {
        ff->rms_before = rms_of(fsq, used);
        ff->small.before = rms_of(ssq, ns);
        ff->large.before = rms_of(lsq, nl);
      }
      ff->rms_after = rms_of(fsq, used);
      ff->small.after = rms_of(ssq, ns);
      ff->large.after = rms_of(lsq, nl);
      ff->small.rows = ns;
      ff->large.rows = nl;
    }
  }
  return SIM_OK;
}

static void bounds(cal_param p, double *lo, double *hi, double *step0, double *step_min) {
  bool eff = cal_param_kind_of(p) != CAL_KIND_LATENCY; /* efficiencies, bandwidth factors */
  *lo = eff ? EFF_MIN : LAT_LN_MIN;
  *hi = eff ? EFF_MAX : LAT_LN_MAX;
  *step0 = eff ? EFF_STEP0 : LAT_STEP0;
  *step_min = eff ? EFF_STEP_MIN : LAT_STEP_MIN;
}

static double snap(cal_param p, double v) {
  double lo, hi, s0, smin;
  bounds(p, &lo, &hi, &s0, &smin);
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  if (cal_param_kind_of(p) != CAL_KIND_LATENCY) v = round(v * 1e4) / 1e4;
  return v;
}

/* Compass search from F->x, with Hooke and Jeeves' pattern moves.
 * O(evaluations x rows). */
static int search(fitter *F, double *step, sim_error *err) {
  double best;
  int rc = evaluate(F, F->x, NULL, false, &best, NULL, err);
  bool any = false;
  for (int p = 0; p < CAL_NPARAM; p++) any = any || F->on[p];
  while (rc == SIM_OK && any && F->evals < MAX_EVALS) {
    bool moved = false, open = false;
    double x0[CAL_NPARAM];
    memcpy(x0, F->x, sizeof x0);
    for (int p = 0; p < CAL_NPARAM && rc == SIM_OK; p++) {
      double lo, hi, s0, smin;
      bounds((cal_param)p, &lo, &hi, &s0, &smin);
      if (!F->on[p] || step[p] < smin) continue;
      open = true;
      for (int dir = 1; dir >= -1 && rc == SIM_OK; dir -= 2) {
        double y[CAL_NPARAM];
        memcpy(y, F->x, sizeof y);
        y[p] = snap((cal_param)p, F->x[p] + dir * step[p]);
        if (y[p] == F->x[p]) continue;
        double c;
        rc = evaluate(F, y, NULL, false, &c, NULL, err);
        if (rc == SIM_OK && c < best * (1 - 1e-12)) {
          best = c;
          F->x[p] = y[p];
          moved = true;
          break;
        }
      }
    }
    if (!open) break;
    if (!moved)
      for (int p = 0; p < CAL_NPARAM; p++) step[p] /= 2;
    /* Hooke and Jeeves' pattern move: on along the sweep's direction while
     * that pays (a valley of parameters that trade, a sweep at a time) */
    while (moved && rc == SIM_OK && F->evals < MAX_EVALS) {
      double y[CAL_NPARAM], c;
      bool differs = false;
      for (int p = 0; p < CAL_NPARAM; p++) {
        y[p] = F->on[p] ? snap((cal_param)p, 2 * F->x[p] - x0[p]) : F->x[p];
        differs = differs || y[p] != F->x[p];
      }
      if (!differs) break;
      rc = evaluate(F, y, NULL, false, &c, NULL, err);
      if (rc != SIM_OK || !(c < best * (1 - 1e-12))) break;
      memcpy(x0, F->x, sizeof x0);
      memcpy(F->x, y, sizeof y);
      best = c;
    }
  }
  return rc;
}

/* cluster.gpu from a device name ("NVIDIA H100 80GB HBM3"), or NULL. */
static const char *gpu_of(const char *device) {
  static const char *const known[] = {"H100", "H800", "A100", "B200", "H200", "MI300X"};
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (strstr(device, known[i])) return known[i];
  return NULL;
}

static bool sets_key(const cal_base *b, const char *key) {
  size_t n = strlen(key);
  for (int i = 0; i < b->nsets; i++)
    if (!strncmp(b->sets[i], key, n) && b->sets[i][n] == '=') return true;
  return false;
}

int cal_runs_shape_from_base(cal_run *runs, size_t nruns, const cal_base *base, sim_error *err) {
  for (size_t i = 0; i < nruns; i++) {
    if (!runs[i].shape_from_base) continue;
    cfg_scenario cfg;
    cfg_doc *doc = NULL;
    int rc = cfg_load(&cfg, &doc, base->path, base->sets, base->nsets, err);
    if (rc != SIM_OK) return rc;
    uint32_t nodes = cfg.cluster.nodes, gpn = cfg.cluster.gpus_per_node;
    cfg_free(&cfg, doc);
    if ((rc = cal_run_set_shape(&runs[i], nodes, gpn, err)) != SIM_OK) return rc;
  }
  return SIM_OK;
}

/* cluster.gpu from the files when the base says nothing of it. */
static int infer_gpu(cal_fit *out, const cal_base *base, const cal_run *runs, size_t nruns,
                     sim_error *err) {
  if (base->path || sets_key(base, "cluster.gpu")) return SIM_OK;
  for (size_t i = 0; i < nruns; i++) {
    const char *g = gpu_of(runs[i].gpu);
    if (!g)
      return sim_fail(err, SIM_ECONFIG,
                      "%s: cannot tell the GPU from its device name '%s'%s (fabsim knows "
                      "H100, H800, A100, B200, H200, MI300X); describe the cluster with --base "
                      "SCENARIO or --set cluster.gpu=...",
                      runs[i].name, runs[i].gpu, runs[i].gpu[0] ? "" : " (the file prints none)");
    if (out->gpu[0] && strcmp(out->gpu, g))
      return sim_fail(err, SIM_ECONFIG,
                      "%s measured %s GPUs, %s measured %s: one calibration is one cluster; "
                      "calibrate each apart",
                      runs[0].name, out->gpu, runs[i].name, g);
    snprintf(out->gpu, sizeof out->gpu, "%s", g);
  }
  return SIM_OK;
}

/* Does the candidate set apply to file r: an AllReduce (the collective
 * whose algorithm NCCL picks among several) without an NCCL_ALGO echo
 * (which holds it to what it ran)? */
static bool algos_apply(const cal_run *r) { return r->op == CAL_OP_ALLREDUCE && !r->nccl_algo[0]; }

/* Load the base with file r's shape over it, under the candidate set. */
static int load_shape(shape *s, const cal_base *base, const char *gpu, const cal_run *r,
                      cal_algos algos, sim_error *err) {
  enum { EXTRA = 8 + 7 };
  char extra[EXTRA][64];
  const char **sets = sim_calloc((size_t)base->nsets + EXTRA, sizeof *sets);
  int n = 0, k = 0;
  for (int i = 0; i < base->nsets; i++) sets[n++] = base->sets[i];
  if (algos_apply(r) && algos >= CAL_ALGOS_NO_NVLS)
    snprintf(extra[k++], sizeof extra[0], "workload.collective.nvls=false");
  if (algos_apply(r) && algos == CAL_ALGOS_RING)
    snprintf(extra[k++], sizeof extra[0], "workload.collective.algorithm=ring");
  /* what the run's NCCL_ALGO / NCCL_PROTO left NCCL (checked by the parser) */
  int e = cal_run_env_sets(r, extra + k, 8, err);
  if (e < 0) {
    sim_free(sets);
    return SIM_ECONFIG;
  }
  k += e;
  if (gpu[0]) snprintf(extra[k++], sizeof extra[0], "cluster.gpu=%s", gpu);
  snprintf(extra[k++], sizeof extra[0], "cluster.nodes=%u", r->nodes);
  snprintf(extra[k++], sizeof extra[0], "cluster.gpus_per_node=%u", r->gpus_per_node);
  snprintf(extra[k++], sizeof extra[0], "simulation.fidelity=analytic");
  snprintf(extra[k++], sizeof extra[0], "workload.kind=collective");
  for (int i = 0; i < k; i++) sets[n++] = extra[i];
  int rc = cfg_load(&s->cfg, &s->doc, base->path, sets, n, err);
  sim_free(sets);
  if (rc != SIM_OK) {
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return sim_fail(err, rc, "%s (the base scenario with the shape of %s: %u nodes x %u GPUs)", msg,
                    r->name, r->nodes, r->gpus_per_node);
  }
  return SIM_OK;
}

static void free_shapes(shape *sh, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (sh[i].t) topo_free(sh[i].t);
    if (sh[i].doc) cfg_free(&sh[i].cfg, sh[i].doc);
  }
  sim_free(sh);
}

/* One fit under one candidate set (the search of the top of the file):
 * out gets rows, residuals, parameters; *cost the objective at the end. */
static int fit_one(cal_fit *out, const cal_base *base, const cal_run *runs, size_t nruns,
                   cal_algos algos, double *cost_out, sim_error *err) {
  fitter F = {.runs = runs, .nruns = nruns};
  int rc = SIM_OK;
  F.shapes = sim_calloc(nruns, sizeof *F.shapes);
  out->files = sim_calloc(nruns, sizeof *out->files);
  out->nfiles = nruns;
  out->rows_used = out->rows_skipped = 0;
  for (size_t i = 0; i < nruns && rc == SIM_OK; i++) {
    rc = load_shape(&F.shapes[i], base, out->gpu, &runs[i], algos, err);
    out->files[i].run = &runs[i];
    out->files[i].rows = sim_calloc(runs[i].n ? runs[i].n : 1, sizeof *out->files[i].rows);
    for (size_t j = 0; j < runs[i].n; j++) {
      const cal_point *p = &runs[i].pt[j];
      out->files[i].rows[j] = (cal_row){.bytes = p->bytes,
                                        .line = p->line,
                                        .used = row_used(p),
                                        .measured_us = p->time_us,
                                        .measured_busbw_GBps = p->busbw_GBps};
      out->rows_used += row_used(p);
      out->rows_skipped += !row_used(p);
    }
  }
  if (rc != SIM_OK) goto done;
  if (out->rows_used == 0) {
    rc = sim_fail(err, SIM_EINVAL, "no row with a size above 0 to fit");
    goto done;
  }
  /* starting point: the base (first file's values; every file shares them) */
  const cfg_scenario *c0 = &F.shapes[0].cfg;
  F.x[CAL_PARAM_NVLINK_EFF] = c0->cluster.scale_up.efficiency;
  F.x[CAL_PARAM_NIC_EFF] = c0->cluster.nic.efficiency;
  for (int p = CAL_PARAM_BW_RING; p < CAL_NPARAM; p++)
    F.x[p] =
        *bandwidth_field((cfg_coll_bandwidth *)&c0->workload.collective.bandwidth, (cal_param)p);
  for (size_t i = 0; i < nruns; i++) {
    if (runs[i].nodes == 1) F.on[CAL_PARAM_NVLINK_EFF] = true;
    else F.on[CAL_PARAM_NIC_EFF] = true;
  }
  double cost, sq;
  if ((rc = evaluate(&F, F.x, out->files, true, &cost, &sq, err)) != SIM_OK) goto done;
  out->rms_before = sqrt(sq / (double)out->rows_used);
  for (size_t i = 0; i < nruns; i++) /* the protocols and algorithms the rows run on */
    for (size_t j = 0; j < runs[i].n; j++) {
      const cal_row *w = &out->files[i].rows[j];
      if (!w->used) continue;
      if (w->protocol != CFG_PROTO_NONE) F.on[latency_param(w, &F.shapes[i].cfg)] = true;
      cal_param b = bandwidth_param(w->algorithm);
      if (b < CAL_NPARAM) F.on[b] = true;
    }
  for (int p = 0; p < CAL_NPARAM; p++) {
    out->fitted[p] = F.on[p];
    out->before[p] = cal_param_kind_of((cal_param)p) == CAL_KIND_LATENCY ? 1.0 : F.x[p];
  }
  /* two stages: the protocols and efficiencies first, then with the
   * in-switch and bandwidth factors too, from there (a switch factor moves
   * the tuner's picks, and alone at the start it can pull the search into a
   * worse basin; a bandwidth factor trades with the efficiencies; the
   * second stage only accepts what lowers the objective) */
  bool sw[CAL_NPARAM] = {0}, second = false;
  double step[CAL_NPARAM];
  for (int p = 0; p < CAL_NPARAM; p++) {
    double lo, hi, smin;
    bounds((cal_param)p, &lo, &hi, &step[p], &smin);
    if (p < CAL_PARAM_LAT_NVLS) continue;
    sw[p] = F.on[p];
    second = second || sw[p];
    F.on[p] = false;
  }
  if ((rc = search(&F, step, err)) != SIM_OK) goto done;
  if (second) { /* the new parameters from their first step, the others from 8x their last */
    for (int p = 0; p < CAL_NPARAM; p++) {
      double lo, hi, s0, smin;
      bounds((cal_param)p, &lo, &hi, &s0, &smin);
      step[p] = s0;
      F.on[p] = F.on[p] || sw[p];
    }
    if ((rc = search(&F, step, err)) != SIM_OK) goto done;
  }
  if ((rc = evaluate(&F, F.x, out->files, false, &cost, &sq, err)) != SIM_OK) goto done;
  *cost_out = cost;
  out->rms_after = sqrt(sq / (double)out->rows_used);
  for (int p = 0; p < CAL_NPARAM; p++) {
    double lo, hi, s0, smin;
    bounds((cal_param)p, &lo, &hi, &s0, &smin);
    out->after[p] = cal_param_kind_of((cal_param)p) == CAL_KIND_LATENCY ? exp(F.x[p]) : F.x[p];
    out->at_bound[p] = out->fitted[p] && (F.x[p] <= lo || F.x[p] >= hi);
  }
  out->lat_before = c0->workload.collective.latency;
  latency_of(&out->lat_before, F.x, &out->lat_after);
  out->evaluations += F.evals;
done:
  free_shapes(F.shapes, nruns);
  return rc;
}

/* The candidate sets worth fitting: the base's own always; without NVLS
 * where an AllReduce file is free to pick (no NCCL_ALGO echo) and the base
 * allows NVLS on a GPU that has it; the ring alone where such a file is
 * free and the base leaves the algorithm to the tuner. */
static int candidates(const cal_base *base, const char *gpu, const cal_run *runs, size_t nruns,
                      bool *tried, sim_error *err) {
  tried[CAL_ALGOS_ALL] = true;
  bool free_file = false;
  for (size_t i = 0; i < nruns; i++) free_file = free_file || algos_apply(&runs[i]);
  if (base->keep_algorithms || !free_file) return SIM_OK;
  shape sh = {0};
  size_t i = 0;
  while (!algos_apply(&runs[i])) i++;
  int rc = load_shape(&sh, base, gpu, &runs[i], CAL_ALGOS_ALL, err);
  if (rc != SIM_OK) return rc;
  coll_spec sp = {0};
  coll_spec_set_hw(&sp, &sh.cfg);
  tried[CAL_ALGOS_NO_NVLS] = sp.nvls;
  tried[CAL_ALGOS_RING] = sh.cfg.workload.collective.algorithm == CFG_ALGO_AUTO;
  cfg_free(&sh.cfg, sh.doc);
  return SIM_OK;
}

/* The model before the fit as the base gives it (the candidate set of
 * every algorithm, fitted last): from `all` into f, same files and rows. */
static void before_of(cal_fit *f, const cal_fit *all) {
  f->rms_before = all->rms_before;
  for (size_t i = 0; i < f->nfiles; i++) {
    cal_file_fit *d = &f->files[i];
    const cal_file_fit *s = &all->files[i];
    d->rms_before = s->rms_before;
    d->small.before = s->small.before;
    d->large.before = s->large.before;
    for (size_t j = 0; j < d->run->n; j++) d->rows[j].before_us = s->rows[j].before_us;
  }
}

/* chi-squared's 95% point by degrees of freedom (1..8; more: 8's) */
static double chi2_95(uint32_t k) {
  static const double q[] = {3.841, 5.991, 7.815, 9.488, 11.070, 12.592, 14.067, 15.507};
  return q[(k < 1 ? 1 : k > 8 ? 8 : k) - 1];
}

static uint32_t count_fitted(const cal_fit *f) {
  uint32_t n = 0;
  for (int p = 0; p < CAL_NPARAM; p++) n += f->fitted[p];
  return n;
}

int cal_fit_run(cal_fit *out, const cal_base *base, const cal_run *runs, size_t nruns,
                sim_error *err) {
  memset(out, 0, sizeof *out);
  int rc = SIM_OK;
  if (nruns == 0) return sim_fail(err, SIM_EINVAL, "no nccl-tests files to fit");
  for (size_t i = 0; i < nruns; i++)
    if (!cal_op_simulated(runs[i].op))
      return sim_fail(err, SIM_ECONFIG,
                      "%s: fabsim has no %s collective to fit it with; allowed: all_reduce, "
                      "all_gather, reduce_scatter, alltoall, sendrecv, broadcast",
                      runs[i].name, cal_op_name(runs[i].op));
  if ((rc = infer_gpu(out, base, runs, nruns, err)) != SIM_OK) return rc;
  bool tried[CAL_NALGOS] = {0};
  if ((rc = candidates(base, out->gpu, runs, nruns, tried, err)) != SIM_OK) return rc;
  /* the simplest set first; a richer one replaces it when the likelihood
   * ratio says the rows ask for it (see the top of the file) */
  cal_fit best = {0}, f;
  bool have = false;
  uint32_t evals = 0;
  for (int a = CAL_NALGOS - 1; a >= 0 && rc == SIM_OK; a--) {
    if (!tried[a]) continue;
    f = *out; /* the GPU inferred */
    f.evaluations = 0;
    double cost = 0;
    rc = fit_one(&f, base, runs, nruns, (cal_algos)a, &cost, err);
    evals += f.evaluations;
    if (rc != SIM_OK) {
      cal_fit_free(&f);
      break;
    }
    out->tried[a] = true;
    out->cost[a] = cost;
    out->nfitted[a] = f.nfitted[a] = count_fitted(&f);
    /* the costs with a floor of the files' precision: a residual of 0.1%
     * a row (nccl-tests prints 4 to 6 digits), so two fits at the
     * rounding's noise do not differ by their ratio */
    double n = (double)f.rows_used, floor = n * PRINT_SIGMA * PRINT_SIGMA;
    uint32_t k =
        f.nfitted[a] > best.nfitted[best.algos] ? f.nfitted[a] - best.nfitted[best.algos] : 1;
    bool richer = have && n * log((best.cost[best.algos] + floor) / (cost + floor)) > chi2_95(k);
    if (!have || richer) {
      if (have) cal_fit_free(&best);
      best = f;
      best.algos = (cal_algos)a;
      best.cost[a] = cost;
      best.nfitted[a] = out->nfitted[a];
      have = true;
    } else {
      if (a == CAL_ALGOS_ALL) before_of(&best, &f); /* "before": the base as given */
      cal_fit_free(&f);
    }
  }
  if (rc != SIM_OK) {
    if (have) cal_fit_free(&best);
    cal_fit_free(out);
    return rc;
  }
  memcpy(best.tried, out->tried, sizeof best.tried);
  memcpy(best.cost, out->cost, sizeof best.cost);
  memcpy(best.nfitted, out->nfitted, sizeof best.nfitted);
  best.evaluations = evals;
  *out = best;
  return SIM_OK;
}

void cal_fit_free(cal_fit *f) {
  for (size_t i = 0; i < f->nfiles; i++) sim_free(f->files[i].rows);
  sim_free(f->files);
  f->files = NULL;
  f->nfiles = 0;
}
