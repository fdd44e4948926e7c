/* report.html: one self-contained page. The template, its style, the page
 * script (report/) and Chart.js (report/node_modules, pinned by
 * report/package-lock.json) are compiled into the binary (the build turns
 * them into C arrays, see report/embed.cmake), and the run's data goes in
 * as one JSON block, so the file opens offline and needs nothing else.
 *
 * Inside the script blocks of code "</" is written "<\/" (harmless to the
 * library and the page script); in the data block every '<' is \u003c, so
 * no data can close its block early or change how the page parses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/out_internal.h"

extern const unsigned char out__asset_template[], out__asset_app[], out__asset_css[],
    out__asset_chartjs[];
extern const size_t out__asset_template_len, out__asset_app_len, out__asset_css_len,
    out__asset_chartjs_len;

const json_t *out__json_path(const json_t *j, const char *path) {
  char part[64];
  while (j && *path) {
    size_t n = strcspn(path, ".");
    if (n >= sizeof part) return NULL;
    memcpy(part, path, n);
    part[n] = '\0';
    path += n + (path[n] == '.');
    if (json_is_array(j)) j = json_array_get(j, (size_t)strtoul(part, NULL, 10));
    else j = json_object_get(j, part);
  }
  return j;
}

/* ---- the run's data object ----------------------------------------------------------------- */

static json_t *num_or_null(double v) { return v == v ? json_real(v) : json_null(); }

enum { REPORT_MAX_POINTS = 2000 };

/* The series for the page: at most REPORT_MAX_POINTS points per column
 * (consecutive samples merged k at a time; the CSV and database keep all). */
static json_t *series_json(const out__series *s) {
  json_t *o = json_object(), *t = json_array(), *len = json_array(), *cols = json_array();
  size_t k = (s->rows + REPORT_MAX_POINTS - 1) / REPORT_MAX_POINTS;
  if (k < 1) k = 1;
  for (size_t i = 0; i < s->rows; i += k) {
    double l = 0;
    for (size_t j = i; j < i + k && j < s->rows; j++) l += s->len[j];
    json_array_append_new(t, json_real(s->t[i]));
    json_array_append_new(len, json_real(l));
  }
  for (size_t c = 0; c < s->ncols; c++) {
    json_t *col = json_object(), *v = json_array();
    bool by_max = s->cols[c].peak; /* peaks stay visible; the others: time-weighted mean */
    json_object_set_new(col, "metric", json_string(s->cols[c].metric));
    json_object_set_new(col, "entity", json_string(s->cols[c].entity));
    json_object_set_new(col, "unit", json_string(s->cols[c].unit));
    for (size_t i = 0; i < s->rows; i += k) {
      double acc = 0, l = 0;
      for (size_t j = i; j < i + k && j < s->rows; j++) {
        double x = s->v[j * s->ncols + c];
        if (by_max) acc = j == i || x > acc ? x : acc;
        else acc += x * s->len[j];
        l += s->len[j];
      }
      json_array_append_new(v, json_real(by_max || l == 0 ? acc : acc / l));
    }
    json_object_set_new(col, "values", v);
    json_array_append_new(cols, col);
  }
  json_object_set_new(o, "t", t);
  json_object_set_new(o, "len", len);
  json_object_set_new(o, "merged", json_integer((json_int_t)k));
  json_object_set_new(o, "cols", cols);
  return o;
}

static json_t *observed_json(unsigned obs) {
  static const char *const names[] = {"gpu",      "nic",      "port_util", "port_queue",
                                      "port_ecn", "port_pfc", "fct",       "steps"};
  json_t *a = json_array();
  for (unsigned k = 0; k < sizeof names / sizeof names[0]; k++)
    if (obs & (1u << k)) json_array_append_new(a, json_string(names[k]));
  return a;
}

json_t *out__report_data(const json_t *summary, json_t *headline, const char *scenario_yaml,
                         const tel *t, const out__series *s, const out_names *names,
                         uint32_t top_ports) {
  json_t *d = json_object();
  json_object_set_new(d, "mode", json_string("run"));
  json_object_set(d, "summary", (json_t *)summary);
  json_object_set_new(d, "scenario_yaml", json_string(scenario_yaml ? scenario_yaml : ""));
  json_object_set_new(d, "headline", headline);
  json_object_set_new(d, "series", series_json(s));
  json_t *ev = json_array(), *hot = json_array(), *fct = json_array(), *steps = json_array();
  json_t *tm = json_object();
  if (t) {
    for (size_t i = 0; i < tel_event_count(t); i++) {
      tel_event_view e;
      tel_event_at(t, i, &e);
      json_t *o = json_object();
      json_object_set_new(o, "t", json_real((double)e.at / 1e12));
      json_object_set_new(o, "component", json_string(e.component));
      json_object_set_new(o, "kind", json_string(e.kind));
      json_object_set_new(o, "effect", json_string(e.effect));
      json_object_set_new(o, "value", num_or_null(e.value));
      json_array_append_new(ev, o);
    }
    tel_port_total *top = sim_malloc((top_ports ? top_ports : 1) * sizeof *top);
    size_t n = (tel_observed(t) & TEL_OBS_PORT_UTIL) ? tel_top_ports(t, top, top_ports) : 0;
    for (size_t i = 0; i < n; i++) {
      char name[96];
      if (names && names->port) names->port(names->ctx, top[i].port, name, sizeof name);
      else snprintf(name, sizeof name, "port%u", top[i].port);
      json_t *o = json_object();
      json_object_set_new(o, "port", json_string(name));
      json_object_set_new(o, "bytes", json_real(top[i].bytes));
      json_object_set_new(o, "util", json_real(top[i].util));
      json_object_set_new(o, "queue_max_bytes", out_json_u64(top[i].queue_max_bytes));
      json_object_set_new(o, "ecn_marks", out_json_u64(top[i].ecn_marks));
      json_object_set_new(o, "pfc_paused_s", json_real(sim_ps_to_s(top[i].pfc_paused)));
      json_array_append_new(hot, o);
    }
    sim_free(top);
    for (size_t b = 0; b < TEL_FCT_BUCKETS; b++) {
      uint64_t c = tel_fct_count(t, b);
      if (!c) continue;
      json_t *o = json_object();
      json_object_set_new(o, "lo_us", json_real(sim_ps_to_s(tel_fct_bucket_lo(b)) * 1e6));
      json_object_set_new(o, "hi_us", json_real(sim_ps_to_s(tel_fct_bucket_lo(b + 1)) * 1e6));
      json_object_set_new(o, "count", json_integer((json_int_t)c));
      json_array_append_new(fct, o);
    }
    for (size_t i = 0; i < tel_step_count(t); i++) {
      const tel_step *st = tel_step_at(t, i);
      json_t *o = json_object();
      json_object_set_new(o, "step", json_integer((json_int_t)st->step));
      json_object_set_new(o, "begin_s", json_real(sim_ps_to_s(st->begin)));
      json_object_set_new(o, "end_s", json_real(sim_ps_to_s(st->end)));
      for (int k = 0; k < TEL_GPU_NSTATES; k++)
        json_object_set_new(o, tel_gpu_state_name((tel_gpu_state)k), json_real(st->frac[k]));
      json_array_append_new(steps, o);
    }
    json_object_set_new(tm, "interval_s", json_real((double)tel_interval(t) / 1e12));
    json_object_set_new(tm, "observed", observed_json(tel_observed(t)));
    json_object_set_new(tm, "truncated", json_boolean(tel_truncated(t)));
  }
  json_object_set_new(d, "events", ev);
  json_object_set_new(d, "hot_ports", hot);
  json_object_set_new(d, "fct_hist", fct);
  json_object_set_new(d, "steps", steps);
  json_object_set_new(d, "telemetry", tm);
  return d;
}

/* ---- assembling the page ------------------------------------------------------------------- */

/* Append text, writing "</" as "<\/" (inside <script> blocks). */
static void put_script_safe(out__buf *b, const char *s, size_t n) {
  size_t from = 0;
  for (size_t i = 0; i + 1 < n; i++)
    if (s[i] == '<' && s[i + 1] == '/') {
      out__putn(b, s + from, i + 1 - from);
      out__puts(b, "\\");
      from = i + 1;
    }
  out__putn(b, s + from, n - from);
}

/* The data block: every '<' as \u003c (same JSON), so no sequence in the
 * data can close the block or open a comment or script inside it. */
static void put_json_safe(out__buf *b, const char *s) {
  for (const char *p = s; *p;) {
    size_t n = strcspn(p, "<");
    out__putn(b, p, n);
    p += n;
    if (*p == '<') {
      out__puts(b, "\\u003c");
      p++;
    }
  }
}

static void put_html_escaped(out__buf *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '<': out__puts(b, "&lt;"); break;
    case '>': out__puts(b, "&gt;"); break;
    case '&': out__puts(b, "&amp;"); break;
    case '"': out__puts(b, "&quot;"); break;
    default: out__putn(b, s, 1);
    }
  }
}

/* Chart.js without its trailing source-map comment (nothing to fetch offline). */
static size_t chartjs_len(void) {
  const char *s = (const char *)out__asset_chartjs;
  size_t n = out__asset_chartjs_len;
  static const char tag[] = "//# sourceMappingURL=";
  for (size_t i = n; i-- > 0;)
    if (s[i] == '\n' || i == 0) {
      size_t at = s[i] == '\n' ? i + 1 : i;
      if (n - at >= sizeof tag - 1 && !memcmp(s + at, tag, sizeof tag - 1)) return at;
      if (n - at > 1) break; /* the last non-empty line is not the comment */
    }
  return n;
}

/* The template holds @FABSIM_NAME@ marks (inside a comment in style and
 * script blocks: / *@FABSIM_NAME@* /); each is replaced by its content. */
int out__report_write(const json_t *data, const char *dir, const char *title, sim_error *err) {
  const char *tpl = (const char *)out__asset_template;
  size_t tlen = out__asset_template_len, at = 0;
  out__buf b = {0};
  int rc = out_json_check(data, "report.html", err);
  if (rc != SIM_OK) return rc;
  char *json = json_dumps(data, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
  if (!json) return sim_fail(err, SIM_EIO, "cannot serialize the report data");
  static const char mark[] = "@FABSIM_";
  for (size_t i = 0; i + sizeof mark - 1 <= tlen;) {
    if (memcmp(tpl + i, mark, sizeof mark - 1)) {
      i++;
      continue;
    }
    size_t name = i + sizeof mark - 1, e = name;
    while (e < tlen && tpl[e] != '@') e++;
    size_t from = i, to = e + 1;
    if (from >= 2 && !memcmp(tpl + from - 2, "/*", 2) && to + 2 <= tlen &&
        !memcmp(tpl + to, "*/", 2)) {
      from -= 2;
      to += 2;
    }
    out__putn(&b, tpl + at, from - at);
    size_t nl = e - name;
    const char *nm = tpl + name;
    if (nl == 5 && !memcmp(nm, "TITLE", 5)) put_html_escaped(&b, title);
    else if (nl == 3 && !memcmp(nm, "CSS", 3))
      out__putn(&b, (const char *)out__asset_css, out__asset_css_len);
    else if (nl == 7 && !memcmp(nm, "CHARTJS", 7))
      put_script_safe(&b, (const char *)out__asset_chartjs, chartjs_len());
    else if (nl == 3 && !memcmp(nm, "APP", 3))
      put_script_safe(&b, (const char *)out__asset_app, out__asset_app_len);
    else if (nl == 4 && !memcmp(nm, "DATA", 4)) put_json_safe(&b, json);
    else {
      rc = sim_fail(err, SIM_EIO, "report template: unknown mark %.*s (a build problem)", (int)nl,
                    nm);
      break;
    }
    at = i = to;
  }
  if (rc == SIM_OK) {
    out__putn(&b, tpl + at, tlen - at);
    rc = out__write(&b, dir, "report.html", err);
  }
  free(json);
  out__buf_free(&b);
  return rc;
}

/* ---- comparison report ---------------------------------------------------------------------- */

static const char *const compare_series[] = {
    "nic_tx_gbps_total", "nic_tx_gbps_max", "port_util_max", "port_queue_max_bytes",
    "pfc_paused_s",      "gpu_network",     "gpu_compute"};

/* The keys the runs' points vary ("k1=v1 k2=v2"; keys in order of first
 * appearance, those with two or more distinct values): [{"key", "unit": the
 * numbers' unit or null when categorical, "values": numbers or null, "text":
 * as written}], for the page to draw a numeric key as an axis. */
static json_t *params_json(const json_t *runs) {
  json_t *keys = json_array(), *out = json_array();
  size_t nr = json_array_size(runs);
  for (size_t r = 0; r < nr; r++) {
    const char *p = json_string_value(json_object_get(json_array_get(runs, r), "point"));
    while (p && *p) {
      size_t l = strcspn(p, " "), e = strcspn(p, "=");
      if (e < l) {
        char k[128];
        snprintf(k, sizeof k, "%.*s", (int)e, p);
        bool have = false;
        for (size_t i = 0; i < json_array_size(keys) && !have; i++)
          have = !strcmp(json_string_value(json_array_get(keys, i)), k);
        if (!have) json_array_append_new(keys, json_string(k));
      }
      p += l + (p[l] == ' ');
    }
  }
  double *v = sim_calloc(nr ? nr : 1, sizeof *v);
  for (size_t i = 0; i < json_array_size(keys); i++) {
    const char *k = json_string_value(json_array_get(keys, i));
    json_t *text = json_array(), *vals = json_array();
    bool varies = false;
    for (size_t r = 0; r < nr; r++) {
      char t[96];
      out__point_value(json_string_value(json_object_get(json_array_get(runs, r), "point")), k, t,
                       sizeof t);
      varies = varies || (r > 0 && strcmp(t, json_string_value(json_array_get(text, 0))));
      json_array_append_new(text, json_string(t));
    }
    const char *unit = out__param_values(runs, k, v);
    for (size_t r = 0; r < nr; r++)
      json_array_append_new(vals, unit ? num_or_null(v[r]) : json_null());
    if (varies) {
      json_array_append_new(
          out, json_pack("{s:s, s:o, s:o, s:o}", "key", k, "unit",
                         unit ? json_string(unit) : json_null(), "values", vals, "text", text));
    } else {
      json_decref(vals);
      json_decref(text);
    }
  }
  sim_free(v);
  json_decref(keys);
  return out;
}

int out_compare_report(const char *dbpath, const json_t *runs, const char *dir, sim_error *err) {
  json_t *d = json_object(), *items = json_array();
  int rc = SIM_OK;
  json_object_set_new(d, "mode", json_string("compare"));
  for (size_t i = 0; i < json_array_size(runs) && rc == SIM_OK; i++) {
    const json_t *r = json_array_get(runs, i);
    json_t *o = json_object(), *series = json_object();
    json_int_t id = json_integer_value(json_object_get(r, "run_id"));
    json_object_set(o, "label", json_object_get(r, "label"));        /* the label names the run */
    json_t *summary = json_deep_copy(json_object_get(r, "summary")); /* no wall clock on the page */
    json_object_del(json_object_get(summary, "sim"), "wall_s");
    json_object_set_new(o, "headline", out_headline(summary));
    json_object_set_new(o, "summary", summary);
    for (size_t k = 0; k < sizeof compare_series / sizeof compare_series[0] && rc == SIM_OK; k++) {
      json_t *t, *v;
      rc = out_db_series(dbpath, id, compare_series[k], &t, &v, err);
      if (json_array_size(t)) {
        json_t *s = json_object();
        json_object_set_new(s, "t", t);
        json_object_set_new(s, "v", v);
        json_object_set_new(series, compare_series[k], s);
      } else {
        json_decref(t);
        json_decref(v);
      }
    }
    json_object_set_new(o, "series", series);
    json_array_append_new(items, o);
  }
  json_object_set_new(d, "runs", items);
  json_object_set_new(d, "params", params_json(runs));
  if (rc == SIM_OK) rc = out__report_write(d, dir, "fabsim comparison", err);
  json_decref(d);
  return rc;
}
