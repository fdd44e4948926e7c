/* What the study verbs share: --jobs, the lines of a running study, errors. */
#include <stdio.h>

#include "cli/study_io.h"

cli_jobs cli_jobs_default(void) {
  return (cli_jobs){.n = study_parallel_default(), .given = false};
}

int cli_take_jobs(void *ctx, const char *opt, const char *value) {
  cli_jobs *j = ctx;
  sim_error err = {0};
  (void)opt;
  if (study_parallel_parse(value, &j->n, &err) != SIM_OK) {
    cli_study_error(&err);
    return CLI_BAD_INPUT;
  }
  j->given = true;
  return CLI_OK;
}

void cli_study_error(const sim_error *e) {
  if (!e->msg[0]) return;
  if (e->code == SIM_ECONFIG) cli_error(e->msg);
  else fprintf(stderr, "fabsim: %s\n", e->msg);
}

int cli_study_status(int code) {
  if (code == SIM_OK) return CLI_OK;
  if (code == SIM_EINVAL || code == SIM_ECONFIG) return CLI_BAD_INPUT;
  return code == SIM_EINTR ? CLI_INTERRUPTED : CLI_FAILED;
}

static void on_point_end(void *ctx, const study_point *p, size_t k, size_t n) {
  if (*(const bool *)ctx) return;
  fprintf(stderr, "[%zu/%zu] %s: %s (%s)\n", k, n, p->label,
          p->status == 0                 ? "done"
          : p->status == CLI_INTERRUPTED ? "stopped"
                                         : "FAILED",
          sim_fmt_seconds((char[32]){0}, 32, p->wall_s));
}

static void on_report(void *ctx, const sim_error *e) {
  (void)ctx;
  cli_study_error(e);
}

study_hooks cli_study_hooks(const bool *quiet) {
  return (study_hooks){.ctx = (void *)quiet, .point_end = on_point_end, .report = on_report};
}
