/* What the study verbs (sweep, compare) share over fabsim/study.h: --jobs,
 * the lines a running study prints, its errors as exit statuses. */
#ifndef FABSIM_CLI_STUDY_IO_H
#define FABSIM_CLI_STUDY_IO_H

#include "cli/cli.h"
#include "fabsim/out.h"
#include "fabsim/study.h"

/* --jobs N, -j N: how many runs at once. */
typedef struct cli_jobs {
  unsigned n; /* default: the number of CPUs */
  bool given; /* on the command line */
} cli_jobs;
cli_jobs cli_jobs_default(void);
/* cli_opt.take for --jobs (ctx: a cli_jobs): 1..1024, else printed, CLI_BAD_INPUT. */
int cli_take_jobs(void *ctx, const char *opt, const char *value);

/* A study's error on stderr (nothing when its message is empty: another MPI
 * rank said it): SIM_ECONFIG as cli_error prints it, any other after
 * "fabsim: ". */
void cli_study_error(const sim_error *e);
/* The exit status of a study's error: 2 bad input, 130 interrupted, else 1. */
int cli_study_status(int code);
/* Hooks that print "[k/n] LABEL: done (1.2 s)" as each point ends (unless
 * *quiet) and every report (cli_study_error). */
study_hooks cli_study_hooks(const bool *quiet);

#endif
