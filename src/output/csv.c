/* timeseries.csv (one row per sample interval, one column per series) and
 * events.csv (time-ordered event log). Numbers are the shortest text that
 * reads back exactly, so the files are deterministic byte for byte. */
#include <math.h>

#include "output/out_internal.h"

void out__timeseries_csv(out__buf *b, const out__series *s) {
  char name[128];
  out__puts(b, "time_s,interval_s");
  for (size_t c = 0; c < s->ncols; c++) {
    out__col_name(&s->cols[c], name, sizeof name);
    out__puts(b, ",");
    out__csv_field(b, name);
  }
  out__puts(b, "\n");
  for (size_t i = 0; i < s->rows; i++) {
    out__num(b, s->t[i]);
    out__puts(b, ",");
    out__num(b, s->len[i]);
    for (size_t c = 0; c < s->ncols; c++) {
      out__puts(b, ",");
      out__num(b, s->v[i * s->ncols + c]);
    }
    out__puts(b, "\n");
  }
}

void out__events_csv(out__buf *b, const tel *t) {
  out__puts(b, "time_s,component,kind,effect,value\n");
  size_t n = t ? tel_event_count(t) : 0;
  for (size_t i = 0; i < n; i++) {
    tel_event_view e;
    tel_event_at(t, i, &e);
    out__num(b, (double)e.at / 1e12);
    out__puts(b, ",");
    out__csv_field(b, e.component);
    out__puts(b, ",");
    out__csv_field(b, e.kind);
    out__puts(b, ",");
    out__csv_field(b, e.effect);
    out__puts(b, ",");
    out__num(b, e.value);
    out__puts(b, "\n");
  }
}

static void leaves(const json_t *j, char *name, size_t len, size_t cap, out__leaf_fn fn,
                   void *ctx) {
  if (json_is_number(j)) {
    fn(ctx, name, json_number_value(j));
  } else if (json_is_boolean(j)) {
    fn(ctx, name, json_is_true(j) ? 1 : 0);
  } else if (json_is_object(j)) {
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)j, k, v) {
      int n = snprintf(name + len, cap - len, "%s%s", len ? "." : "", k);
      if (n > 0 && len + (size_t)n < cap) leaves(v, name, len + (size_t)n, cap, fn, ctx);
    }
  } else if (json_is_array(j)) {
    for (size_t i = 0; i < json_array_size(j); i++) {
      int n = snprintf(name + len, cap - len, "%s%zu", len ? "." : "", i);
      if (n > 0 && len + (size_t)n < cap)
        leaves(json_array_get(j, i), name, len + (size_t)n, cap, fn, ctx);
    }
  }
  name[len] = '\0';
}

void out__json_leaves(const json_t *j, out__leaf_fn fn, void *ctx) {
  char name[512] = "";
  leaves(j, name, 0, sizeof name, fn, ctx);
}
