/* Telemetry rows as named columns: one definition that the CSV, the
 * database and the report all read, so they never disagree. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/out_internal.h"

/* ---- text builder ---------------------------------------------------------------- */

void out__putn(out__buf *b, const char *s, size_t n) {
  sim_grow((void **)&b->p, &b->cap, b->len + n + 1, 1);
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void out__puts(out__buf *b, const char *s) { out__putn(b, s, strlen(s)); }

void out__printf(out__buf *b, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n > 0) {
    sim_grow((void **)&b->p, &b->cap, b->len + (size_t)n + 1, 1);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, aq);
    b->len += (size_t)n;
  }
  va_end(aq);
}

void out__num(out__buf *b, double v) {
  if (isnan(v)) return;
  if (isinf(v)) { /* never written: out__write refuses the buffer */
    if (!b->nonfinite) b->nonfinite = v > 0 ? "inf" : "-inf";
    return;
  }
  if (v == 0) {
    out__puts(b, "0");
    return;
  }
  char s[40];
  for (int prec = 6; prec <= 17; prec++) { /* the fewest digits that read back exactly */
    snprintf(s, sizeof s, "%.*g", prec, v);
    if (strtod(s, NULL) == v) break;
  }
  out__puts(b, s);
}

void out__csv_field(out__buf *b, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    out__puts(b, s);
    return;
  }
  out__puts(b, "\"");
  for (const char *c = s; *c; c++) {
    if (*c == '"') out__puts(b, "\"");
    out__putn(b, c, 1);
  }
  out__puts(b, "\"");
}

void out__buf_free(out__buf *b) {
  sim_free(b->p);
  memset(b, 0, sizeof *b);
}

int out__write(const out__buf *b, const char *dir, const char *name, sim_error *err) {
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
    return sim_fail(err, SIM_EIO, "%s/%s: path too long", dir, name);
  if (b->nonfinite)
    return sim_fail(err, SIM_ERANGE,
                    "%s: a figure is %s, not a number a run can report; nothing was written (a "
                    "bug: please report the scenario)",
                    name, b->nonfinite);
  return sim_write_file_atomic(path, b->p ? b->p : "", b->len, err);
}

/* ---- columns ------------------------------------------------------------------------ */

typedef struct col_builder {
  out__series *s;
  size_t cap;
} col_builder;

/* A column; peak: its samples are peaks (a p99 or maximum, a queue), which
 * keep their greatest where rows are merged (report.html). */
static size_t add_col(col_builder *cb, const char *metric, const char *entity, const char *unit,
                      bool peak) {
  out__series *s = cb->s;
  sim_grow((void **)&s->cols, &cb->cap, s->ncols + 1, sizeof *s->cols);
  out__col *c = &s->cols[s->ncols];
  c->peak = peak;
  snprintf(c->metric, sizeof c->metric, "%s", metric);
  snprintf(c->entity, sizeof c->entity, "%s", entity);
  snprintf(c->unit, sizeof c->unit, "%s", unit);
  return s->ncols++;
}

void out__col_name(const out__col *c, char *buf, size_t n) {
  if (c->entity[0]) snprintf(buf, n, "%s:%s", c->entity, c->metric);
  else snprintf(buf, n, "%s", c->metric);
}

static const char *const dir_word[2] = {"tx", "rx"};

void out__series_build(out__series *s, const tel *t, const out_names *names,
                       const run_power *power) {
  memset(s, 0, sizeof *s);
  if (!t) return;
  col_builder cb = {.s = s};
  unsigned obs = tel_observed(t);
  char m[40], e[72];
  /* Pass 1: the columns, in a fixed order. */
  size_t gpu0 = 0, pwr0 = 0, nic0 = 0, util0 = 0, queue0 = 0, ecn0 = 0, pfc0 = 0, watch0;
  if (obs & TEL_OBS_GPU) {
    gpu0 = s->ncols;
    for (int k = 0; k < TEL_GPU_NSTATES; k++) {
      snprintf(m, sizeof m, "gpu_%s", tel_gpu_state_name((tel_gpu_state)k));
      add_col(&cb, m, "", "fraction", false);
    }
  }
  if (power && !(obs & TEL_OBS_GPU)) power = NULL; /* no states, no power over time */
  if (power) {
    pwr0 = s->ncols;
    add_col(&cb, "power_gpu_kw", "", "kW", false);
    add_col(&cb, "power_it_kw", "", "kW", false);
    add_col(&cb, "power_facility_kw", "", "kW", false);
  }
  if (obs & TEL_OBS_NIC) {
    nic0 = s->ncols;
    for (int d = 0; d < 2; d++) {
      static const char *const agg[] = {"total", "p50", "p99", "max"};
      for (int a = 0; a < 4; a++) {
        snprintf(m, sizeof m, "nic_%s_gbps_%s", dir_word[d], agg[a]);
        add_col(&cb, m, "", "Gb/s", a >= 2); /* p99, max */
      }
      snprintf(m, sizeof m, "nic_%s_active", dir_word[d]);
      add_col(&cb, m, "", "NICs", false);
    }
  }
  if (obs & TEL_OBS_PORT_UTIL) {
    util0 = s->ncols;
    add_col(&cb, "port_util_mean", "", "fraction", false);
    add_col(&cb, "port_util_p50", "", "fraction", false);
    add_col(&cb, "port_util_p99", "", "fraction", true);
    add_col(&cb, "port_util_max", "", "fraction", true);
  }
  if (obs & TEL_OBS_PORT_QUEUE) {
    queue0 = s->ncols;
    add_col(&cb, "port_queue_p99_bytes", "", "bytes", true);
    add_col(&cb, "port_queue_max_bytes", "", "bytes", true);
  }
  if (obs & TEL_OBS_PORT_ECN) {
    ecn0 = s->ncols;
    add_col(&cb, "ecn_marks", "", "marks", false);
  }
  if (obs & TEL_OBS_PORT_PFC) {
    pfc0 = s->ncols;
    add_col(&cb, "pfc_paused_s", "", "s", false);
    add_col(&cb, "pfc_paused_ports", "", "ports", false);
  }
  watch0 = s->ncols;
  uint32_t nw = tel_watch_count(t);
  for (uint32_t w = 0; w < nw; w++) {
    bool is_nic;
    uint32_t id = tel_watch_entity(t, w, &is_nic);
    if (is_nic) {
      if (names && names->nic) names->nic(names->ctx, id, e, sizeof e);
      else snprintf(e, sizeof e, "nic%u", id);
      add_col(&cb, "tx_gbps", e, "Gb/s", false);
      add_col(&cb, "rx_gbps", e, "Gb/s", false);
      add_col(&cb, "util", e, "fraction", false);
    } else {
      if (names && names->port) names->port(names->ctx, id, e, sizeof e);
      else snprintf(e, sizeof e, "port%u", id);
      add_col(&cb, "gbps", e, "Gb/s", false);
      add_col(&cb, "util", e, "fraction", false);
      if (obs & TEL_OBS_PORT_QUEUE) add_col(&cb, "queue_max_bytes", e, "bytes", true);
      if (obs & TEL_OBS_PORT_ECN) add_col(&cb, "ecn_marks", e, "marks", false);
      if (obs & TEL_OBS_PORT_PFC) add_col(&cb, "pfc_paused_s", e, "s", false);
    }
  }
  /* Pass 2: the values. */
  s->rows = tel_rows(t);
  size_t rows = s->rows ? s->rows : 1, nc = s->ncols ? s->ncols : 1;
  s->t = sim_malloc(rows * sizeof *s->t);
  s->len = sim_malloc(rows * sizeof *s->len);
  s->v = sim_calloc(rows * nc, sizeof *s->v);
  if (power) { /* the three columns, then strided into the rows */
    double *p = sim_malloc(3 * rows * sizeof *p);
    out__power_rows(power, t, p + 2 * rows, p + rows, p);
    for (size_t i = 0; i < s->rows; i++)
      for (size_t k = 0; k < 3; k++) s->v[i * s->ncols + pwr0 + k] = p[k * rows + i];
    sim_free(p);
  }
  for (size_t i = 0; i < s->rows; i++) {
    double *v = s->v + i * s->ncols;
    s->t[i] = (double)tel_row_start(t, i) / 1e12; /* correctly rounded, unlike x 1e-12 */
    s->len[i] = (double)tel_row_length(t, i) / 1e12;
    if (obs & TEL_OBS_GPU)
      for (int k = 0; k < TEL_GPU_NSTATES; k++) v[gpu0 + (size_t)k] = tel_gpu_row_at(t, i)->frac[k];
    if (obs & TEL_OBS_NIC) {
      const tel_nic_row *r = tel_nic_row_at(t, i);
      for (int d = 0; d < 2; d++) {
        double *o = v + nic0 + (size_t)d * 5;
        o[0] = r->total_gbps[d];
        o[1] = r->p50_gbps[d];
        o[2] = r->p99_gbps[d];
        o[3] = r->max_gbps[d];
        o[4] = r->active[d];
      }
    }
    const tel_port_row *p = tel_port_row_at(t, i);
    if (obs & TEL_OBS_PORT_UTIL) {
      v[util0] = p->util_mean;
      v[util0 + 1] = p->util_p50;
      v[util0 + 2] = p->util_p99;
      v[util0 + 3] = p->util_max;
    }
    if (obs & TEL_OBS_PORT_QUEUE) {
      v[queue0] = p->queue_p99_bytes;
      v[queue0 + 1] = p->queue_max_bytes;
    }
    if (obs & TEL_OBS_PORT_ECN) v[ecn0] = p->ecn_marks;
    if (obs & TEL_OBS_PORT_PFC) {
      v[pfc0] = p->pfc_paused_s;
      v[pfc0 + 1] = p->paused_ports;
    }
    size_t c = watch0;
    for (uint32_t w = 0; w < nw; w++) {
      bool is_nic;
      tel_watch_entity(t, w, &is_nic);
      const tel_watch_row *r = tel_watch_row_at(t, i, w);
      if (is_nic) {
        v[c++] = r->gbps[0];
        v[c++] = r->gbps[1];
        v[c++] = r->util;
      } else {
        v[c++] = r->gbps[0];
        v[c++] = r->util;
        if (obs & TEL_OBS_PORT_QUEUE) v[c++] = r->queue_max_bytes;
        if (obs & TEL_OBS_PORT_ECN) v[c++] = r->ecn_marks;
        if (obs & TEL_OBS_PORT_PFC) v[c++] = r->pfc_paused_s;
      }
    }
  }
}

void out__series_free(out__series *s) {
  sim_free(s->cols);
  sim_free(s->t);
  sim_free(s->len);
  sim_free(s->v);
  memset(s, 0, sizeof *s);
}
