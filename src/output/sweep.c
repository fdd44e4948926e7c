/* What a sweep and a comparison print and leave in their folder, from the
 * runs a study read back (out_db_read_runs items, each with a "label"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/out.h"

/* The runs as JSON text on f. */
static void print_json(FILE *f, const json_t *runs) {
  char *text = out_json_text(runs);
  fprintf(f, "%s\n", text);
  free(text);
}

void out_sweep_print(FILE *f, const json_t *runs, const char *const *keys, size_t nkeys,
                     bool json) {
  if (json) print_json(f, runs);
  else out_sweep_table(f, runs, keys, nkeys);
}

int out_sweep_files(const char *dir, const char *db, const json_t *runs, const char *const *keys,
                    size_t nkeys, sim_error *err) {
  char *csv = out_sweep_csv(runs, keys, nkeys), path[4200];
  snprintf(path, sizeof path, "%s/sweep.csv", dir);
  int rc = sim_write_file_atomic(path, csv, strlen(csv), err);
  sim_free(csv);
  if (rc == SIM_OK && json_array_size(runs)) rc = out_compare_report(db, runs, dir, err);
  return rc;
}

void out_compare_print(FILE *f, const json_t *runs, bool json) {
  if (json) print_json(f, runs);
  else out_compare_table(f, runs);
}

int out_compare_files(const char *dir, const char *db, const json_t *runs, sim_error *err) {
  int rc = sim_mkdirs(dir, err);
  return rc == SIM_OK ? out_compare_report(db, runs, dir, err) : rc;
}
