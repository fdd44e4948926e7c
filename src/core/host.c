/* What a process learns from its host rather than from the scenario: the
 * wall clock and the MPI launcher's environment. Neither may reach a
 * simulated result. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabsim/core.h"

double sim_wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The first of the variables that is set, or NULL. */
static const char *first_env(const char *a, const char *b, const char *c) {
  const char *v = getenv(a);
  if (!v && b) v = getenv(b);
  if (!v && c) v = getenv(c);
  return v;
}

sim_launcher sim_launcher_get(void) {
  sim_launcher l = {.launched = false, .size = 1, .rank = 0};
  const char *off = getenv("FABSIM_NO_MPI");
  if (off && *off && strcmp(off, "0") != 0) return l;
  l.launched = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK") ||
               getenv("MPI_LOCALNRANKS");
  if (!l.launched) return l;
  const char *n = first_env("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL);
  const char *r = first_env("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK");
  if (n) l.size = strtol(n, NULL, 10);
  if (r) l.rank = strtol(r, NULL, 10);
  return l;
}
