/* Tables of runs' headline figures: the sweep's table (a row per run), the
 * comparison's (a row per figure, a column per run) and sweep.csv. The runs
 * come from a results database (out_db_read_runs); the figures are the union
 * of their headline figures (out_headline), so a run lacking one shows "-". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/out_internal.h"

/* The runs' headline figures (the figure table's rows, read from each
 * run's summary), and their union in the table's order: a run lacking a
 * figure shows "-". */
typedef struct figs {
  size_t nr;
  out__headline *of; /* nr: each run's figures */
  const out__fig_value **all;
  size_t n;
} figs;

/* The same figure: one row of the table, of the run or of the same job. */
static bool same_figure(const out__fig_value *a, const out__fig_value *b) {
  return a->fig == b->fig && (a->job ? b->job && !strcmp(a->job, b->job) : !b->job);
}

static void figs_of(figs *f, const json_t *runs) {
  f->nr = json_array_size(runs);
  f->of = sim_calloc(f->nr ? f->nr : 1, sizeof *f->of);
  size_t cap = 0;
  for (size_t r = 0; r < f->nr; r++)
    cap +=
        (out__headline_of_summary(&f->of[r], json_object_get(json_array_get(runs, r), "summary")),
         f->of[r].n);
  f->all = sim_calloc(cap ? cap : 1, sizeof *f->all);
  f->n = 0;
  for (size_t r = 0; r < f->nr; r++)
    for (size_t k = 0; k < f->of[r].n; k++) {
      bool have = false;
      for (size_t m = 0; m < f->n && !have; m++) have = same_figure(f->all[m], &f->of[r].v[k]);
      if (!have) f->all[f->n++] = &f->of[r].v[k];
    }
}

static void figs_free(figs *f) {
  for (size_t r = 0; r < f->nr; r++) out__headline_free(&f->of[r]);
  sim_free(f->of);
  sim_free(f->all);
}

/* Run r's value of figure k (of f->all), or NULL when it lacks it. */
static const out__fig_value *figure_of(const figs *f, size_t r, size_t k) {
  for (size_t i = 0; i < f->of[r].n; i++)
    if (same_figure(&f->of[r].v[i], f->all[k])) return &f->of[r].v[i];
  return NULL;
}

/* A figure by the one rule (its row's kind); "-" where the run lacks it. */
static void fmt_value(char *buf, size_t n, const out__fig_value *v) {
  if (!v) snprintf(buf, n, "-");
  else out__figure_fmt(buf, n, v->fig, v->value);
}

/* The value of key in a point label "k1=v1 k2=v2" ("-" when absent). */
void out__point_value(const char *point, const char *key, char *out, size_t n) {
  size_t kl = strlen(key);
  snprintf(out, n, "-");
  for (const char *p = point; p && *p;) {
    while (*p == ' ') p++;
    if (!strncmp(p, key, kl) && p[kl] == '=') {
      size_t l = strcspn(p + kl + 1, " ");
      snprintf(out, n, "%.*s", (int)l, p + kl + 1);
      return;
    }
    p = strchr(p, ' ');
  }
}

/* text as a value of kind k (0 plain number, 1 size, 2 bandwidth, 3 time), in
 * the kind's base unit (B, b/s, s). */
static bool read_as(int k, const char *text, double *out) {
  sim_error e = {0};
  uint64_t v = 0;
  if (k == 0) {
    char *end;
    double x = strtod(text, &end);
    *out = x;
    return end != text && !*end && isfinite(x);
  }
  int rc = k == 1   ? cfg_parse_size(text, &v, &e)
           : k == 2 ? cfg_parse_bandwidth(text, &v, &e)
                    : cfg_parse_time(text, &v, &e);
  *out = k == 3 ? (double)v / 1e12 : (double)v; /* seconds: the nearest double to v ps */
  return rc == SIM_OK;
}

const char *out__param_values(const json_t *runs, const char *key, double *v) {
  static const char *const units[] = {"", "B", "b/s", "s"};
  size_t n = json_array_size(runs);
  for (int k = 0; k < 4; k++) {
    bool all = true;
    for (size_t r = 0; r < n && all; r++) {
      char text[96];
      out__point_value(json_string_value(json_object_get(json_array_get(runs, r), "point")), key,
                       text, sizeof text);
      v[r] = NAN;
      if (strcmp(text, "-")) all = read_as(k, text, &v[r]);
    }
    if (all) return units[k];
  }
  return NULL;
}

void out_sweep_table(FILE *f, const json_t *runs, const char *const *keys, size_t nkeys) {
  figs fg;
  figs_of(&fg, runs);
  size_t nf = fg.n, nr = json_array_size(runs), ncol = 1 + nkeys + nf;
  char ***cell = sim_calloc(nr + 1, sizeof *cell);
  size_t *w = sim_calloc(ncol, sizeof *w);
  for (size_t r = 0; r <= nr; r++) {
    cell[r] = sim_calloc(ncol, sizeof **cell);
    for (size_t c = 0; c < ncol; c++) cell[r][c] = sim_calloc(96, 1);
  }
  snprintf(cell[0][0], 96, "#");
  for (size_t k = 0; k < nkeys; k++) snprintf(cell[0][1 + k], 96, "%s", keys[k]);
  for (size_t k = 0; k < nf; k++) out__fig_label(fg.all[k], cell[0][1 + nkeys + k], 96);
  for (size_t r = 0; r < nr; r++) {
    const json_t *run = json_array_get(runs, r);
    const char *point = json_string_value(json_object_get(run, "point"));
    snprintf(cell[r + 1][0], 96, "%zu%s", r + 1,
             json_is_false(json_object_get(run, "complete")) ? "*" : "");
    for (size_t k = 0; k < nkeys; k++) out__point_value(point, keys[k], cell[r + 1][1 + k], 96);
    for (size_t k = 0; k < nf; k++) fmt_value(cell[r + 1][1 + nkeys + k], 96, figure_of(&fg, r, k));
  }
  for (size_t r = 0; r <= nr; r++)
    for (size_t c = 0; c < ncol; c++)
      if (strlen(cell[r][c]) > w[c]) w[c] = strlen(cell[r][c]);
  for (size_t r = 0; r <= nr; r++) {
    for (size_t c = 0; c < ncol; c++)
      fprintf(f, c <= nkeys ? "%-*s%s" : "%*s%s", (int)w[c], cell[r][c],
              c + 1 < ncol ? "  " : "\n");
    for (size_t c = 0; c < ncol; c++) sim_free(cell[r][c]);
    sim_free(cell[r]);
  }
  sim_free(cell);
  sim_free(w);
  figs_free(&fg);
}

void out_compare_table(FILE *f, const json_t *runs) {
  figs fg;
  figs_of(&fg, runs);
  size_t nr = json_array_size(runs), nf = fg.n;
  size_t wl = 6;
  int wc = 24;
  for (size_t r = 0; r < nr; r++) {
    int l = (int)strlen(json_string_value(json_object_get(json_array_get(runs, r), "label")));
    if (l > wc) wc = l;
  }
  for (size_t k = 0; k < nf; k++) {
    char label[200];
    out__fig_label(fg.all[k], label, sizeof label);
    if (strlen(label) > wl) wl = strlen(label);
  }
  fprintf(f, "%-*s", (int)wl, "figure");
  for (size_t r = 0; r < nr; r++)
    fprintf(f, "  %*s", wc, json_string_value(json_object_get(json_array_get(runs, r), "label")));
  fprintf(f, "\n");
  for (size_t k = 0; k < nf; k++) {
    char label[200];
    out__fig_label(fg.all[k], label, sizeof label);
    fprintf(f, "%-*s", (int)wl, label);
    const out__fig_value *base = nr ? figure_of(&fg, 0, k) : NULL;
    for (size_t r = 0; r < nr; r++) {
      const out__fig_value *v = figure_of(&fg, r, k);
      char a[64], cellbuf[160], pct[64];
      fmt_value(a, sizeof a, v);
      if (r > 0 && v && base && base->value != 0) {
        double rel = (v->value - base->value) / fabs(base->value);
        sim_fmt(pct, sizeof pct, rel, SIM_UNIT_PERCENT);
        snprintf(cellbuf, sizeof cellbuf, "%s (%s%s)", a, rel > 0 && strcmp(pct, "0%") ? "+" : "",
                 pct);
      } else {
        snprintf(cellbuf, sizeof cellbuf, "%s", a);
      }
      fprintf(f, "  %*s", wc, cellbuf);
    }
    fprintf(f, "\n");
  }
  figs_free(&fg);
}

/* A number of sweep.csv: an integer in plain digits (up to 2^53, where every
 * integer is exact), else the shortest text that reads back exactly. */
static void csv_num(out__buf *b, double v) {
  if (v == floor(v) && fabs(v) <= 9007199254740992.0) out__printf(b, "%.0f", v == 0 ? 0 : v);
  else out__num(b, v);
}

char *out_sweep_csv(const json_t *runs, const char *const *keys, size_t nkeys) {
  static const char *const spread_keys[] = {"stdev", "min", "max"};
  figs fg;
  figs_of(&fg, runs);
  size_t nf = fg.n, nr = json_array_size(runs);
  out__buf b = {0};
  /* each key's values as numbers in one unit, or NULL: as written (categorical) */
  double *kv = sim_calloc(nkeys * (nr ? nr : 1), sizeof *kv);
  const char **ku = sim_calloc(nkeys ? nkeys : 1, sizeof *ku);
  out__puts(&b, "point,complete"); /* no run id: parallel runs end in any order */
  for (size_t k = 0; k < nkeys; k++) {
    char h[256];
    ku[k] = out__param_values(runs, keys[k], kv + k * nr);
    snprintf(h, sizeof h, "%s%s%s%s", keys[k], ku[k] && ku[k][0] ? " (" : "", ku[k] ? ku[k] : "",
             ku[k] && ku[k][0] ? ")" : "");
    out__puts(&b, ",");
    out__csv_field(&b, h);
  }
  /* a step figure that some run has over several steps: its mean, then its spread */
  bool *spread = sim_calloc(nf ? nf : 1, sizeof *spread);
  for (size_t k = 0; k < nf; k++) {
    const char *unit = fg.all[k]->fig->unit;
    char name[160];
    out__fig_name(fg.all[k], name, sizeof name);
    for (size_t r = 0; r < nr && !spread[k]; r++) {
      const out__fig_value *v = figure_of(&fg, r, k);
      spread[k] = v && v->steps;
    }
    for (size_t m = 0; m < (spread[k] ? 4u : 1u); m++)
      out__printf(&b, ",%s%s%s%s%s%s", name, m ? "_" : "", m ? spread_keys[m - 1] : "",
                  unit[0] ? " (" : "", unit, unit[0] ? ")" : "");
  }
  out__puts(&b, "\n");
  for (size_t r = 0; r < nr; r++) {
    const json_t *run = json_array_get(runs, r);
    const char *point = json_string_value(json_object_get(run, "point"));
    out__printf(&b, "%zu,%d", r + 1, json_is_true(json_object_get(run, "complete")));
    for (size_t k = 0; k < nkeys; k++) {
      char v[96];
      out__puts(&b, ",");
      out__point_value(point, keys[k], v, sizeof v);
      if (ku[k]) csv_num(&b, kv[k * nr + r]); /* a number in the header's unit ("": absent) */
      else if (strcmp(v, "-")) out__csv_field(&b, v);
    }
    for (size_t k = 0; k < nf; k++) {
      const out__fig_value *v = figure_of(&fg, r, k);
      out__puts(&b, ",");
      if (v) csv_num(&b, v->value);
      for (size_t m = 0; spread[k] && m < 3; m++) { /* one step: no spread, its own figure */
        const double sp[] = {v ? v->stdev : 0, v ? v->min : 0, v ? v->max : 0};
        out__puts(&b, ",");
        if (v && v->steps) csv_num(&b, sp[m]);
        else if (v) csv_num(&b, m ? v->value : 0);
      }
    }
    out__puts(&b, "\n");
  }
  sim_free(spread);
  sim_free(kv);
  sim_free(ku);
  figs_free(&fg);
  return b.p;
}
