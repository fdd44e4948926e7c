/* fabsim run: the edge. summary.json's training, power and event objects
 * and the terminal's lines, each built from the run layer's typed results
 * (fabsim/run.h); nothing here reads a figure back from JSON. Seconds are
 * formed here, from integer picoseconds, with sim_ps_to_s. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/run_print.h"
#include "fabsim/out.h"

json_t *cli_events_json(const run_events *log) {
  json_t *a = json_array();
  for (size_t i = 0; i < log->n; i++) {
    const run_event *e = &log->v[i];
    json_t *o = json_object();
    json_object_set_new(o, "at_s", json_real(sim_ps_to_s(e->at)));
    json_object_set_new(o, "component", json_string(e->component));
    json_object_set_new(o, "kind", json_string(e->kind));
    json_object_set_new(o, "detail", json_string(e->detail));
    json_array_append_new(a, o);
  }
  return a;
}

json_t *cli_power_json(const run_power *p) {
  json_t *pw = pwr_summary_json(p->model, p->utilization, p->step_s, p->run_s);
  json_object_set_new(pw, "utilization_source", json_string(p->source));
  if (p->job) /* the racks' throttling in the run was decided at the fault-free utilization */
    json_object_set_new(
        pw, "throttle_utilization",
        p->have_throttle_utilization ? json_real(p->throttle_utilization) : json_null());
  return pw;
}

static json_t *steps_json(const wl_job *j, const wl_job *base) {
  json_t *a = json_array();
  for (uint32_t k = 0; k < wl_job_steps_done(j); k++) {
    const wl_step *s = wl_job_step(j, k);
    json_t *e = json_object();
    json_object_set_new(e, "step", json_integer(k + 1));
    json_object_set_new(e, "start_s", json_real(s->start_s));
    json_object_set_new(e, "time_s", json_real(s->time_s));
    json_object_set_new(e, "compute_s", json_real(s->compute_s));
    json_object_set_new(e, "exposed_comm_s", json_real(s->exposed_comm_s));
    json_object_set_new(e, "bubble_s", json_real(s->bubble_s));
    const wl_step *b = base && k < wl_job_steps_done(base) ? wl_job_step(base, k) : NULL;
    json_object_set_new(e, "baseline_s", b ? json_real(b->time_s) : json_null());
    json_array_append_new(a, e);
  }
  return a;
}

static json_t *failure_json(const run_failure *f) {
  if (!f->happened) return json_null();
  const rel_failure_cost *c = &f->cost;
  json_t *o = json_object();
  json_object_set_new(o, "at_s", json_real(c->at_s));
  json_object_set_new(o, "component", json_string(f->component));
  json_object_set_new(o, "kind", json_string(f->kind_name));
  if (f->kind == WL_TRANSFER_FAIL) { /* the root cause is the fabric's: say what broke */
    json_object_set_new(o, "dst_gpu", json_integer(f->dst_gpu));
    json_object_set_new(o, "cause", json_string(f->cause));
  }
  json_object_set_new(o, "node", json_integer(f->node));
  json_object_set_new(o, "step", json_integer(f->step));
  json_object_set_new(o, "steps_completed", json_integer(f->steps_completed));
  json_object_set_new(o, "step_progress_s", json_real(sim_ps_to_s(f->at - f->step_start)));
  json_object_set_new(o, "checkpoint_interval_s", json_real(f->checkpoint_interval_s));
  json_object_set_new(o, "checkpoint_interval_auto", json_boolean(f->checkpoint_interval_auto));
  json_object_set_new(o, "checkpoint_write_s", json_real(f->checkpoint_write_s));
  json_object_set_new(o, "since_checkpoint_s", json_real(c->since_checkpoint_s));
  json_object_set_new(o, "lost_work_s", json_real(c->lost_work_s));
  json_object_set_new(o, "lost_gpu_hours", json_real(c->lost_gpu_hours));
  json_object_set_new(o, "lost_steps", json_real(f->lost_steps));
  json_object_set_new(o, "expected_lost_work_s", json_real(c->expected_lost_work_s));
  json_object_set_new(o, "restart_s", json_real(c->restart_s));
  json_object_set_new(o, "recompute_s", json_real(c->lost_work_s));
  json_object_set_new(o, "restart_cost_s", json_real(c->restart_cost_s));
  return o;
}

static json_t *sdc_json(const run_training_result *r) {
  json_t *a = json_array();
  for (uint32_t i = 0; i < r->nsdc; i++) {
    const run_sdc *e = &r->sdc[i];
    json_t *o = json_object();
    json_object_set_new(o, "at_s", json_real(sim_ps_to_s(e->at)));
    json_object_set_new(o, "gpu", json_integer(e->gpu));
    json_object_set_new(o, "step", json_integer(e->step));
    json_object_set_new(o, "check_interval", json_integer(e->check_interval));
    json_object_set_new(o, "diverge_step",
                        e->diverge_step ? json_integer((json_int_t)e->diverge_step) : json_null());
    json_object_set_new(o, "diverge_at_s",
                        e->diverged ? json_real(sim_ps_to_s(e->diverge_at)) : json_null());
    json_object_set_new(o, "detect_step",
                        e->detect_step ? json_integer((json_int_t)e->detect_step) : json_null());
    json_object_set_new(o, "detect_at_s",
                        e->detect_known ? json_real(e->detect_at_s) : json_null());
    json_object_set_new(o, "detect_estimated", json_boolean(e->detect_estimated));
    json_array_append_new(a, o);
  }
  return a;
}

json_t *cli_root_cause_json(const rel_rc_result *rc) {
  json_t *out = json_array();
  for (uint32_t i = 0; i < rc->n; i++) {
    const rel_rc_entry *x = &rc->v[i];
    json_t *causes = json_array();
    for (uint32_t k = 0; k < x->ncauses; k++) {
      const rel_rc_cause *c = &x->causes[k];
      json_t *o = json_object();
      json_object_set_new(o, "component", json_string(c->component));
      json_object_set_new(o, "kind", json_string(c->kind));
      json_object_set_new(o, "effect_s", json_real(c->effect_s));
      json_object_set_new(o, "text", json_string(c->text));
      json_array_append_new(causes, o);
    }
    json_t *e = json_object();
    json_object_set_new(e, "step", json_integer((json_int_t)x->step));
    json_object_set_new(e, "start_s", json_real(x->start_s));
    json_object_set_new(e, "time_s", json_real(x->time_s));
    json_object_set_new(e, "baseline_s", json_real(x->baseline_s));
    json_object_set_new(e, "excess_s", json_real(x->excess_s));
    json_object_set_new(e, "excess_frac", json_real(x->excess_frac));
    json_object_set_new(e, "text", json_string(x->text));
    json_object_set_new(e, "causes", causes);
    json_array_append_new(out, e);
  }
  return out;
}

void cli_training_json(const run_training_result *r, const cfg_scenario *cfg, json_t *summary) {
  uint32_t done = wl_job_steps_done(r->job);
  if (done) json_object_set_new(summary, "step", cli_step_json(wl_job_step(r->job, 0), cfg));
  json_object_set_new(summary, "steps", steps_json(r->job, r->base));
  json_object_set_new(summary, "failure", failure_json(&r->failure));
  json_object_set_new(summary, "sdc", sdc_json(r));
  json_object_set_new(summary, "root_cause", cli_root_cause_json(&r->root_cause));
  json_object_set_new(summary, "power", cli_power_json(&r->power));
}

/* ---- terminal -------------------------------------------------------------------------- */

static void steps_text(const run_training_result *r) {
  char a[64], b[64];
  uint32_t n = wl_job_steps_done(r->job), nb = r->base ? wl_job_steps_done(r->base) : 0;
  if (!(n > 1 || (n && nb))) return;
  double sum = 0, base = 0;
  for (uint32_t k = 0; k < n; k++) {
    sum += wl_job_step(r->job, k)->time_s;
    if (k < nb) base += wl_job_step(r->base, k)->time_s;
  }
  printf("  steps      %u done, mean %s", n, out_fmt_seconds(a, sizeof a, sum / (double)n));
  if (n <= nb) printf(" (fault-free %s)", out_fmt_seconds(b, sizeof b, base / (double)n));
  printf("\n");
}

static void failure_text(const run_failure *f) {
  char a[64], b[64], c[64];
  if (!f->happened) return;
  printf("failure      %s %s at %s in step %d: job stopped\n", f->kind_name, f->component,
         out_fmt_seconds(a, sizeof a, f->cost.at_s), (int)f->step);
  if (f->kind == WL_TRANSFER_FAIL)
    printf("  cause      transfer gpu%d->gpu%d: %s; the collective lost data\n", (int)f->gpu,
           (int)f->dst_gpu, f->cause);
  printf(
      "  lost       %s of work since the last checkpoint (%.4g GPU-hours; checkpoint every "
      "%s%s; at a random time the loss averages %s)\n",
      out_fmt_seconds(a, sizeof a, f->cost.lost_work_s), f->cost.lost_gpu_hours,
      out_fmt_seconds(b, sizeof b, f->checkpoint_interval_s),
      f->checkpoint_interval_auto ? " (Daly)" : "",
      out_fmt_seconds(c, sizeof c, f->cost.expected_lost_work_s));
  printf("  restart    %s + recompute %s = %s\n", out_fmt_seconds(a, sizeof a, f->cost.restart_s),
         out_fmt_seconds(b, sizeof b, f->cost.lost_work_s),
         out_fmt_seconds(c, sizeof c, f->cost.restart_cost_s));
}

void cli_training_text(const run_training_result *r) {
  char a[64], b[64];
  steps_text(r);
  failure_text(&r->failure);
  for (uint32_t i = 0; i < r->nsdc; i++) {
    const run_sdc *e = &r->sdc[i];
    printf("sdc          gpu%d at %s: ", (int)e->gpu,
           out_fmt_seconds(a, sizeof a, sim_ps_to_s(e->at)));
    if (!e->diverge_step) printf("no replicas to diverge from\n");
    else if (!e->detect_step)
      printf("replicas diverge in step %d, never detected (no replica checksums)\n",
             (int)e->diverge_step);
    else
      printf("replicas diverge in step %d, detected at the end of step %d (%s%s)\n",
             (int)e->diverge_step, (int)e->detect_step, e->detect_estimated ? "about " : "",
             out_fmt_seconds(b, sizeof b, e->detect_known ? e->detect_at_s : 0));
  }
  const rel_rc_result *rc = &r->root_cause;
  for (uint32_t i = 0; i < rc->n; i++) {
    if (i == 5) {
      printf("  ...        %u more steps in summary.json root_cause\n", rc->n - 5);
      break;
    }
    printf("%-12s %s\n", i ? "" : "root cause", rc->v[i].text);
  }
}

void cli_power_text(const run_power *p) {
  printf(
      "power        IT %.4g kW, facility %.4g kW (PUE %.3g), %.4g kWh per step at "
      "utilization %.0f%%",
      p->sum.it_kw, p->sum.facility_kw, p->model->pue, p->sum.energy_kwh_per_step,
      100 * p->utilization);
  uint32_t hot = p->sum.racks_throttled;
  if (hot) printf(", %u rack%s throttled", hot, hot == 1 ? "" : "s");
  printf("\n");
}

void cli_events_text(const run_events *log) {
  enum { SHOW = 8 };
  if (!log->n) return; /* the operator's first look: what happened, in time order */
  printf("events       %zu in summary.json events[] and events.csv%s\n", log->n,
         log->n > SHOW ? "; the first:" : ":");
  for (size_t i = 0; i < log->n && i < SHOW; i++) {
    const run_event *e = &log->v[i];
    char at[32];
    size_t len = strlen(e->detail);
    printf("  %-10s %s %s%s%.*s%s\n", out_fmt_seconds(at, sizeof at, sim_ps_to_s(e->at)),
           e->component, e->kind, len ? ": " : "", len > 160 ? 157 : 160, e->detail,
           len > 160 ? "..." : "");
  }
}
