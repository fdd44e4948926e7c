/* One run's setup: the scenario and topology, the backend behind the
 * telemetry tap, the faults resolved and scheduled, the workload and a
 * training job, in that order, every input check before the first event;
 * and run_check, the same setup made only to be checked and freed. */
#include <stdio.h>
#include <string.h>

#include "run/run_internal.h"

int run_scenario_load(cfg_scenario *cfg, cfg_doc **doc, topo **t, const char *scenario,
                      const char *const *sets, int nsets, sim_error *err) {
  *doc = NULL;
  *t = NULL;
  int rc = cfg_load(cfg, doc, scenario, sets, nsets, err);
  if (rc != SIM_OK) return rc;
  if (cfg->fabric.topology == CFG_TOPO_FILE)
    rc = topo_load_file(cfg, doc, t, scenario, sets, nsets, err);
  else rc = topo_build(t, cfg, *doc, err);
  if (rc == SIM_OK && cfg->storage.servers && cfg->storage.attach == CFG_STORAGE_SEPARATE) {
    /* the storage fabric builds, or the scenario is refused before anything runs */
    cfg_scenario derived;
    topo *st = NULL;
    if ((rc = topo_build_storage(&st, &derived, cfg, err)) != SIM_OK) {
      char msg[sizeof err->msg];
      snprintf(msg, sizeof msg, "%s", err->msg);
      rc = cfg_fail_at(*doc, "storage.attach", err, "%s", msg);
      topo_free(*t);
    }
    topo_free(st);
  }
  if (rc != SIM_OK) {
    cfg_free(cfg, *doc);
    *doc = NULL;
    *t = NULL;
  }
  return rc;
}

int run_setup_load(run_setup *s, const char *scenario, const char *const *sets, int nsets,
                   sim_error *err) {
  memset(s, 0, sizeof *s);
  int rc = run_scenario_load(&s->cfg, &s->doc, &s->t, scenario, sets, nsets, err);
  s->training = rc == SIM_OK && s->cfg.workload.kind == CFG_WORKLOAD_TRAINING;
  if (rc == SIM_OK) { /* what the estimate was checked against holds while it runs */
    uint64_t key = s->cfg.simulation.memory_limit, limit = key ? key : cfg_memory_available();
    char what[200];
    if (key)
      snprintf(what, sizeof what, "simulation.memory_limit (%.4g MiB)", (double)key / 1048576);
    else
      snprintf(what, sizeof what,
               "the %.4g MiB available when it started (simulation.memory_limit 0: "
               "MemAvailable)",
               (double)limit / 1048576);
    sim_alloc_limit(limit == UINT64_MAX ? 0 : limit, what);
  }
  return rc;
}

/* The backend of the run, or of a check. A check never makes the packet
 * fidelity's parallel engine: under mpirun its creation joins every rank
 * (MPI_Init, the partition over the ranks), which a check made on one rank
 * (sweep's rank 0) must not do. It makes the serial packet backend
 * instead: the same fabric from the same keys, so every later check (the
 * tap, the faults, the workload, the job) sees what the run will see. What
 * only the parallel engine checks depends on the ranks the run is started
 * on, not on the scenario (a partition over N ranks; one rank, as a
 * sweep's point runs, always partitions), and the run refuses it in its
 * own be_create, before the first event. */
static int make_backend(run_setup *s, bool check, sim_error *err) {
  if (check && be_packet_parallel(&s->cfg)) {
    s->be = be_packet_create(s->sim, s->t, &s->cfg);
    return SIM_OK;
  }
  return be_create(&s->be, s->sim, s->t, &s->cfg, s->doc, err);
}

/* Power keys only the inventory checks (power.utilization, idle above TDP):
 * a training job's model is made by run_training_begin; the power of any
 * other run is made after it (run_power_of), so it is checked here, before
 * the first event. O(racks). */
static int check_power(const run_setup *s, sim_error *err) {
  pwr_model m;
  int rc = pwr_init(&m, &s->cfg, s->doc, topo_inventory_get(s->t), err);
  if (rc == SIM_OK) pwr_free(&m);
  return rc;
}

/* run_setup_begin; `check`: the backend as make_backend says. */
static int setup_begin(run_setup *s, bool check, sim_error *err) {
  const cfg_scenario *cfg = &s->cfg;
  int rc;
  s->sim = sim_create(cfg->simulation.seed);
  if (make_backend(s, check, err) != SIM_OK) return SIM_ECONFIG;
  s->inner = s->be;
  if ((rc = run__telemetry_begin(&s->tel, &s->be, cfg, s->doc, s->t, err)) != SIM_OK) return rc;
  /* faults (fabsim/fault.h): resolved once, scheduled before the workload
   * submits anything; a training job's hooks take the GPU faults */
  if (flt_resolve(&s->faults, &s->nfaults, s->t, cfg, s->doc, err) != SIM_OK) return SIM_ECONFIG;
  if (s->nfaults &&
      !(s->fs = flt_sched_start(s->sim, s->t, s->be, s->faults, s->nfaults, cfg, NULL, err)))
    return SIM_ECONFIG;
  if (run_workload_begin(&s->w, cfg, s->doc, s->t, s->be, err) != SIM_OK) return SIM_ECONFIG;
  if (s->fs && s->w.hooks.ctx) flt_sched_set_hooks(s->fs, &s->w.hooks); /* traces' GPU faults */
  if (run_jobs_begin(&s->jobs, cfg, s->doc, s->t, s->be, s->faults, s->nfaults, err) != SIM_OK)
    return SIM_ECONFIG;
  if (s->fs && s->jobs.n) { /* GPU faults: into the training or trace job holding the GPU */
    flt_gpu_hooks h = run_jobs_hooks(&s->jobs);
    flt_sched_set_hooks(s->fs, &h);
  }
  if (s->training) {
    rc = run_training_begin(&s->tr, cfg, s->doc, s->t, s->be, s->faults, s->nfaults, err);
    if (rc != SIM_OK) return rc;
    if (s->fs) flt_sched_set_hooks(s->fs, &s->tr.hooks); /* GPU faults: into the job */
  } else if (check_power(s, err) != SIM_OK) {
    return SIM_ECONFIG;
  }
  return run__flows_check(s, err);
}

int run_setup_begin(run_setup *s, sim_error *err) { return setup_begin(s, false, err); }

int run_check(const char *scenario, const char *const *sets, int nsets, sim_error *err) {
  run_setup s;
  int rc = run_setup_load(&s, scenario, sets, nsets, err);
  if (rc == SIM_OK) rc = setup_begin(&s, true, err);
  run_setup_free(&s);
  return rc;
}

void run_setup_free(run_setup *s) {
  flt_sched_free(s->fs); /* before the backend it points to */
  sim_free(s->faults);
  be_destroy(s->be);
  run_workload_free(&s->w);  /* after be_destroy: its callbacks point into the trace runner */
  run_training_free(&s->tr); /* after be_destroy: the backend's callbacks point into the job */
  run_jobs_free(&s->jobs);   /* after be_destroy: it may hold the plans' transfer pools */
  run__telemetry_free(&s->tel);
  sim_destroy(s->sim);
  if (s->t) topo_free(s->t);
  if (s->doc) cfg_free(&s->cfg, s->doc);
  memset(s, 0, sizeof *s);
}
