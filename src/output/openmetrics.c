/* metrics.txt: the run's final figures as OpenMetrics text, for users who
 * feed dashboards (node_exporter's textfile collector, a Pushgateway).
 * Every numeric leaf of the summary becomes a gauge fabsim_<path>, plus the
 * telemetry totals as counters. Labels name the scenario and seed. */
#include <ctype.h>
#include <string.h>

#include "output/out_internal.h"

typedef struct om_ctx {
  out__buf *b;
  const char *labels;
} om_ctx;

static void metric_name(char *out, size_t n, const char *path) {
  size_t w = 0;
  w += (size_t)snprintf(out, n, "fabsim_");
  for (const char *c = path; *c && w + 1 < n; c++) out[w++] = isalnum((unsigned char)*c) ? *c : '_';
  out[w < n ? w : n - 1] = '\0';
}

static void gauge(void *ctx, const char *path, double v) {
  om_ctx *o = ctx;
  char name[600];
  if (!strncmp(path, "scenario.", 9) || !strncmp(path, "sim.wall_s", 10)) return;
  metric_name(name, sizeof name, path);
  out__printf(o->b, "# TYPE %s gauge\n%s{%s} ", name, name, o->labels);
  out__num(o->b, v);
  out__puts(o->b, "\n");
}

static void counter(out__buf *b, const char *labels, const char *name, const char *help, double v) {
  out__printf(b, "# TYPE %s counter\n# HELP %s %s\n%s_total{%s} ", name, name, help, name, labels);
  out__num(b, v);
  out__puts(b, "\n");
}

static void label_escape(out__buf *b, const char *s) {
  for (; *s; s++) {
    if (*s == '\\' || *s == '"') out__puts(b, "\\");
    if (*s == '\n') {
      out__puts(b, "\\n");
      continue;
    }
    out__putn(b, s, 1);
  }
}

void out__openmetrics(out__buf *b, const json_t *summary, const tel *t) {
  out__buf labels = {0};
  const json_t *sc = json_object_get(summary, "scenario");
  const char *file = json_string_value(json_object_get(sc, "file"));
  out__puts(&labels, "scenario=\"");
  label_escape(&labels, file ? file : "");
  out__printf(&labels, "\",seed=\"%lld\"",
              (long long)json_integer_value(json_object_get(sc, "seed")));
  om_ctx o = {.b = b, .labels = labels.p};
  out__json_leaves(summary, gauge, &o);
  if (t) {
    tel_totals tot;
    tel_totals_get(t, &tot);
    unsigned obs = tel_observed(t);
    if (obs & TEL_OBS_NIC) {
      counter(b, labels.p, "fabsim_nic_tx_bytes", "Bytes sent by all NICs.", tot.nic_bytes[TEL_TX]);
      counter(b, labels.p, "fabsim_nic_rx_bytes", "Bytes received by all NICs.",
              tot.nic_bytes[TEL_RX]);
    }
    if (obs & TEL_OBS_PORT_UTIL)
      counter(b, labels.p, "fabsim_switch_port_bytes", "Bytes sent by all switch ports.",
              tot.port_bytes);
    if (obs & TEL_OBS_PORT_ECN)
      counter(b, labels.p, "fabsim_ecn_marks", "ECN marks at switch ports.", (double)tot.ecn_marks);
    if (obs & TEL_OBS_PORT_PFC)
      counter(b, labels.p, "fabsim_pfc_paused_seconds", "Time switch ports spent paused, summed.",
              sim_ps_to_s(tot.pfc_paused));
  }
  out__puts(b, "# EOF\n");
  out__buf_free(&labels);
}
