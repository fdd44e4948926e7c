/* Tables of runs' headline figures: the sweep's table (a row per run), the
 * comparison's (a row per figure, a column per run) and sweep.csv. The runs
 * come from a results database (out_db_read_runs); the figures are the union
 * of their headline figures (out_headline), so a run lacking one shows "-". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/out_internal.h"

/* A headline figure by the one rule (sim_fmt): its unit, or for a figure
 * without one its name's kind (a fraction as a percentage, a count with
 * separators); "-" where the run lacks it. */
static void fmt_value(char *buf, size_t n, const json_t *v, const json_t *fig) {
  static const struct {
    const char *unit;
    double scale;
    sim_unit kind;
  } units[] = {{"s", 1, SIM_UNIT_SECONDS},      {"us", 1e-6, SIM_UNIT_SECONDS},
               {"USD", 1, SIM_UNIT_USD},        {"b/s", 1, SIM_UNIT_BITRATE},
               {"Gb/s", 1e9, SIM_UNIT_BITRATE}, {"GB/s", 1e9, SIM_UNIT_BYTERATE}};
  static const struct {
    const char *name;
    sim_unit kind;
  } unitless[] = {{"mfu", SIM_UNIT_PERCENT},
                  {"ecn_marks", SIM_UNIT_COUNT},
                  {"drops", SIM_UNIT_COUNT},
                  {"max_link_sharing", SIM_UNIT_COUNT}};
  if (!json_is_number(v)) {
    snprintf(buf, n, "-");
    return;
  }
  double x = json_number_value(v);
  const char *unit = json_string_value(json_object_get(fig, "unit"));
  const char *name = json_string_value(json_object_get(fig, "name"));
  const char *stem = name && strrchr(name, '.') ? strrchr(name, '.') + 1 : name ? name : "";
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (!strcmp(unit, units[i].unit)) {
      sim_fmt(buf, n, x * units[i].scale, units[i].kind);
      return;
    }
  for (size_t i = 0; !unit[0] && i < sizeof unitless / sizeof unitless[0]; i++)
    if (!strcmp(stem, unitless[i].name)) {
      sim_fmt(buf, n, x, unitless[i].kind);
      return;
    }
  char num[40];
  sim_fmt(num, sizeof num, x, SIM_UNIT_NUMBER);
  snprintf(buf, n, "%s%s%s", num, unit[0] ? " " : "", unit);
}

/* Union of the runs' headline figures, in their canonical order. */
static json_t *figures_of(const json_t *runs) {
  json_t *all = json_array();
  for (size_t i = 0; i < json_array_size(runs); i++) {
    json_t *h = out_headline(json_object_get(json_array_get(runs, i), "summary"));
    for (size_t k = 0; k < json_array_size(h); k++) {
      json_t *f = json_array_get(h, k);
      const char *label = json_string_value(json_object_get(f, "label"));
      bool have = false;
      for (size_t m = 0; m < json_array_size(all) && !have; m++)
        have = !strcmp(json_string_value(json_object_get(json_array_get(all, m), "label")), label);
      if (!have) json_array_append(all, f);
    }
    json_decref(h);
  }
  return all;
}

/* A new reference to the run's figure of that label (out_headline's object), or NULL. */
static json_t *figure_of(const json_t *run, const char *label) {
  json_t *h = out_headline(json_object_get(run, "summary"));
  json_t *v = NULL;
  for (size_t k = 0; k < json_array_size(h) && !v; k++) {
    json_t *f = json_array_get(h, k);
    if (!strcmp(json_string_value(json_object_get(f, "label")), label)) v = json_incref(f);
  }
  json_decref(h);
  return v;
}

/* A new reference to the figure's value, or NULL. */
static json_t *figure_value(const json_t *run, const char *label) {
  json_t *f = figure_of(run, label);
  json_t *v = f ? json_real(json_number_value(json_object_get(f, "value"))) : NULL;
  json_decref(f);
  return v;
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
  json_t *figs = figures_of(runs);
  size_t nf = json_array_size(figs), nr = json_array_size(runs), ncol = 1 + nkeys + nf;
  char ***cell = sim_calloc(nr + 1, sizeof *cell);
  size_t *w = sim_calloc(ncol, sizeof *w);
  for (size_t r = 0; r <= nr; r++) {
    cell[r] = sim_calloc(ncol, sizeof **cell);
    for (size_t c = 0; c < ncol; c++) cell[r][c] = sim_calloc(96, 1);
  }
  snprintf(cell[0][0], 96, "#");
  for (size_t k = 0; k < nkeys; k++) snprintf(cell[0][1 + k], 96, "%s", keys[k]);
  for (size_t k = 0; k < nf; k++) {
    const json_t *fg = json_array_get(figs, k);
    snprintf(cell[0][1 + nkeys + k], 96, "%s", json_string_value(json_object_get(fg, "label")));
  }
  for (size_t r = 0; r < nr; r++) {
    const json_t *run = json_array_get(runs, r);
    const char *point = json_string_value(json_object_get(run, "point"));
    snprintf(cell[r + 1][0], 96, "%zu%s", r + 1,
             json_is_false(json_object_get(run, "complete")) ? "*" : "");
    for (size_t k = 0; k < nkeys; k++) out__point_value(point, keys[k], cell[r + 1][1 + k], 96);
    for (size_t k = 0; k < nf; k++) {
      const json_t *fg = json_array_get(figs, k);
      json_t *v = figure_value(run, json_string_value(json_object_get(fg, "label")));
      fmt_value(cell[r + 1][1 + nkeys + k], 96, v, fg);
      json_decref(v);
    }
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
  json_decref(figs);
}

void out_compare_table(FILE *f, const json_t *runs) {
  json_t *figs = figures_of(runs);
  size_t nr = json_array_size(runs), nf = json_array_size(figs);
  size_t wl = 6;
  int wc = 24;
  for (size_t r = 0; r < nr; r++) {
    int l = (int)strlen(json_string_value(json_object_get(json_array_get(runs, r), "label")));
    if (l > wc) wc = l;
  }
  for (size_t k = 0; k < nf; k++) {
    size_t l = strlen(json_string_value(json_object_get(json_array_get(figs, k), "label")));
    if (l > wl) wl = l;
  }
  fprintf(f, "%-*s", (int)wl, "figure");
  for (size_t r = 0; r < nr; r++)
    fprintf(f, "  %*s", wc, json_string_value(json_object_get(json_array_get(runs, r), "label")));
  fprintf(f, "\n");
  for (size_t k = 0; k < nf; k++) {
    const json_t *fg = json_array_get(figs, k);
    const char *label = json_string_value(json_object_get(fg, "label"));
    fprintf(f, "%-*s", (int)wl, label);
    json_t *base = figure_value(json_array_get(runs, 0), label);
    for (size_t r = 0; r < nr; r++) {
      json_t *v = figure_value(json_array_get(runs, r), label);
      char a[64], cellbuf[160], pct[64];
      fmt_value(a, sizeof a, v, fg);
      if (r > 0 && json_is_number(v) && json_is_number(base) && json_number_value(base) != 0) {
        double rel =
            (json_number_value(v) - json_number_value(base)) / fabs(json_number_value(base));
        sim_fmt(pct, sizeof pct, rel, SIM_UNIT_PERCENT);
        snprintf(cellbuf, sizeof cellbuf, "%s (%s%s)", a, rel > 0 && strcmp(pct, "0%") ? "+" : "",
                 pct);
      } else {
        snprintf(cellbuf, sizeof cellbuf, "%s", a);
      }
      fprintf(f, "  %*s", wc, cellbuf);
      json_decref(v);
    }
    json_decref(base);
    fprintf(f, "\n");
  }
  json_decref(figs);
}

/* A number of sweep.csv: an integer in plain digits (up to 2^53, where every
 * integer is exact), else the shortest text that reads back exactly. */
static void csv_num(out__buf *b, double v) {
  if (v == floor(v) && fabs(v) <= 9007199254740992.0) out__printf(b, "%.0f", v == 0 ? 0 : v);
  else out__num(b, v);
}

/* A step figure's spread beside its mean in sweep.csv (out_headline's keys). */
static const char *const spread_keys[] = {"stdev", "min", "max"};

char *out_sweep_csv(const json_t *runs, const char *const *keys, size_t nkeys) {
  json_t *figs = figures_of(runs);
  size_t nf = json_array_size(figs), nr = json_array_size(runs);
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
    const json_t *fg = json_array_get(figs, k);
    const char *unit = json_string_value(json_object_get(fg, "unit"));
    const char *name = json_string_value(json_object_get(fg, "name"));
    const char *label = json_string_value(json_object_get(fg, "label"));
    for (size_t r = 0; r < nr && !spread[k]; r++) {
      json_t *f = figure_of(json_array_get(runs, r), label);
      spread[k] = json_object_get(f, "stdev") != NULL;
      json_decref(f);
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
      json_t *f =
          figure_of(run, json_string_value(json_object_get(json_array_get(figs, k), "label")));
      out__puts(&b, ",");
      if (f) csv_num(&b, json_number_value(json_object_get(f, "value")));
      for (size_t m = 0; spread[k] && m < 3; m++) { /* one step: no spread, its own figure */
        const json_t *x = json_object_get(f, spread_keys[m]);
        out__puts(&b, ",");
        if (json_is_number(x)) csv_num(&b, json_number_value(x));
        else if (f) csv_num(&b, m ? json_number_value(json_object_get(f, "value")) : 0);
      }
      json_decref(f);
    }
    out__puts(&b, "\n");
  }
  sim_free(spread);
  sim_free(kv);
  sim_free(ku);
  json_decref(figs);
  return b.p;
}
