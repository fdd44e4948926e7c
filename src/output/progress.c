/* The progress lines (out_progress_draw: a training run's, and the one
 * run_drive_sim draws between its slices of simulated time). The run's
 * Ctrl-C handler is the verb's (src/cli/cmd_run.c). */
#include <stdio.h>
#include <string.h>

#include "fabsim/ev.h"
#include "output/out_internal.h"

static void fmt_eta(char *buf, size_t n, double s) {
  if (s < 0 || s != s || s > 1e7) {
    snprintf(buf, n, "--");
    return;
  }
  long secs = (long)(s + 0.5);
  if (secs < 60) snprintf(buf, n, "%lds", secs);
  else if (secs < 3600) snprintf(buf, n, "%ldm%02lds", secs / 60, secs % 60);
  else snprintf(buf, n, "%ldh%02ldm", secs / 3600, secs / 60 % 60);
}

/* run_drive_sim's line (p->what NULL). */
static void draw(const run_progress *p) {
  char t[32], eta[32], line[160], r[32];
  sim_fmt_seconds(t, sizeof t, sim_ps_to_s(p->now));
  sim_fmt(r, sizeof r, p->rate / 1e6, SIM_UNIT_NUMBER);
  double elapsed = p->wall - p->started;
  if (p->expected > 0) {
    double frac = (double)p->now / (double)p->expected;
    if (frac > 0.99) frac = p->final ? 1 : 0.99;
    fmt_eta(eta, sizeof eta, frac > 0 ? elapsed * (1 - frac) / frac : -1);
    snprintf(line, sizeof line, "  sim %s  %3.0f%%  %s Mevents/s  ETA %s", t, frac * 100, r, eta);
  } else {
    fmt_eta(eta, sizeof eta, elapsed);
    snprintf(line, sizeof line, "  sim %s  %s Mevents/s  %s", t, r, eta);
  }
  fprintf(stderr, "\r%-72s%s", line, p->final ? "\r" : "");
  if (p->final) fprintf(stderr, "%-72s\r", "");
  fflush(stderr);
}

void out_progress_draw(void *ctx, const run_progress *p) {
  char t[32], line[160], eta[32], r[32];
  (void)ctx;
  if (!p->what) {
    draw(p);
    return;
  }
  sim_fmt_seconds(t, sizeof t, sim_ps_to_s(p->now));
  int n = snprintf(line, sizeof line, "  %s sim %s  step %u/%u", p->what, t, p->step, p->steps);
  if (p->expected > 0 && n > 0 && (size_t)n < sizeof line) {
    double frac = (double)p->now / (double)p->expected, el = sim_wall_s() - p->started;
    if (frac > 0.99) frac = 0.99;
    fmt_eta(eta, sizeof eta, frac > 0 ? el * (1 - frac) / frac : 0);
    n += snprintf(line + n, sizeof line - (size_t)n, "  %3.0f%%  ETA %s", frac * 100, eta);
  }
  if (n > 0 && (size_t)n < sizeof line)
    snprintf(line + n, sizeof line - (size_t)n, "  %s Mevents/s",
             sim_fmt(r, sizeof r, p->rate / 1e6, SIM_UNIT_NUMBER));
  fprintf(stderr, "\r%-72s", p->final ? "" : line);
  if (p->final) fprintf(stderr, "\r");
  fflush(stderr);
}
