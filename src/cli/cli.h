/* fabsim CLI internals: shared argument handling and JSON views. */
#ifndef FABSIM_CLI_H
#define FABSIM_CLI_H

#include <jansson.h>

#include "fabsim/config.h"
#include "fabsim/topo.h"

/* Exit codes: the contract scripts rely on. 3 is out of memory (sim_malloc);
 * CLI_JOB_FAILED: the run itself worked, the simulated job failed (a
 * transfer lost, a GPU or node down): the files say how and what it cost. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_BAD_INPUT = 2, CLI_JOB_FAILED = 4, CLI_INTERRUPTED = 130 };

typedef struct cli_args {
  const char *scenario; /* NULL: defaults only */
  const char **sets;    /* --set values, in order */
  int nsets;
  bool json;
  bool quiet;
  const char *dot; /* topo --dot FILE */
  bool dot_collapse;
  const char *export_file; /* topo --export FILE */
} cli_args;

/* ---- the argv helper (args.c): one table-driven parser for every verb ---- */

/* One option of a verb. Set exactly one target: flag (no value), last,
 * list and count, or take. */
typedef struct cli_opt {
  const char *name;  /* "--set" */
  const char *alias; /* "-s", or NULL */
  bool value;        /* takes a value: NAME VALUE */
  bool inline_value; /* also NAME=VALUE */
  bool *flag;        /* no value: set to true */
  const char **last; /* a value: the last one given wins */
  const char **list; /* a repeatable value: appended to list[*count] (room for argc) */
  int *count;
  /* a value the verb reads itself: CLI_OK, or it printed why and CLI_BAD_INPUT */
  int (*take)(void *ctx, const char *opt, const char *value);
  void *ctx;
} cli_opt;

/* --set KEY=VALUE (also -s, and --set=KEY=VALUE), repeatable: every verb
 * that reads a scenario takes it alike; values appended to list[*count]. */
cli_opt cli_opt_set(const char **list, int *count);

/* A verb's command line: its options, what it does with the rest, and its
 * usage messages (printf formats of one %s, the argument, ending in "\n";
 * NULL: the defaults below). */
typedef struct cli_argv {
  const cli_opt *opts;
  size_t nopts;
  const char *help; /* --help, -h: printed on stdout, the parse returns -1 */
  /* positional arguments, in order (room for argc); max_positional 0: any
   * number, else more are refused with too_many */
  const char **positional;
  int *npositional;
  int max_positional;
  const char *too_many;
  const char *unknown; /* an option not in opts; "fabsim: unknown option '%s' (see --help)\n" */
  const char *missing; /* a value option last; "fabsim: %s needs a value (see --help)\n" */
  /* sweep's reading: an argument last on the line is missing its value when
   * its second letter is a short value option's ("-s", "-j"), any other is
   * unknown (even "--set") */
  bool missing_short_only;
  /* pass-through: every argument that is not an option of opts (and --help)
   * is kept in rest[*nrest] in order instead of refused; rest may be argv */
  char **rest;
  int *nrest;
} cli_argv;

/* Parse argv against spec, left to right; the first bad argument is printed
 * and CLI_BAD_INPUT returned. CLI_OK, or -1 after --help. */
int cli_argv_parse(const cli_argv *spec, int argc, char **argv);
/* "fabsim: one scenario file only; '%s' is a second (see --help)\n" */
extern const char cli_one_scenario[];

/* Parse [scenario.yaml] [--set k=v]... and the verb's flags (allowed is a
 * string of the flags this verb takes: "j" --json, "q" --quiet, "d" --dot).
 * On a usage error prints it and returns CLI_BAD_INPUT; on --help prints
 * `help` and returns -1; else CLI_OK. */
int cli_parse(cli_args *a, int argc, char **argv, const char *allowed, const char *help);
void cli_args_free(cli_args *a);

/* Load scenario and topology; on failure prints the error and returns the
 * exit code (CLI_BAD_INPUT). */
int cli_load(const cli_args *a, cfg_scenario *cfg, cfg_doc **doc, topo **t);

/* Print an error: location-prefixed messages verbatim, others after "fabsim: ". */
void cli_error(const char *msg);

int cli_cmd_run(int argc, char **argv);
int cli_cmd_topo(int argc, char **argv);
int cli_cmd_memory(int argc, char **argv);
int cli_cmd_reliability(int argc, char **argv);
int cli_cmd_sweep(int argc, char **argv);
int cli_cmd_compare(int argc, char **argv);
int cli_cmd_calibrate(int argc, char **argv);

#endif
