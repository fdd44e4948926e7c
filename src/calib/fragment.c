/* The fit as scenario keys: "key=value" strings (cal_fit_sets) and a YAML
 * fragment (cal_fit_fragment), include/fabsim/calib.h.
 *
 * Values are written so that loading them gives back the fitted numbers
 * bit for bit: efficiencies in the shortest decimal that reads back as the
 * same double, latencies in microseconds with every picosecond digit the
 * value has (they are whole nanoseconds after a fit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/calib.h"

static void double_text(char *out, size_t cap, double v) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(out, cap, "%.*g", prec, v);
    if (strtod(out, NULL) == v) return;
  }
}

static void time_text(char *out, size_t cap, simtime_ps ps) {
  unsigned long long whole = ps / 1000000, frac = ps % 1000000;
  if (!frac) {
    snprintf(out, cap, "%lluus", whole);
    return;
  }
  char f[8];
  snprintf(f, sizeof f, "%06llu", frac);
  for (int i = 5; i > 0 && f[i] == '0'; i--) f[i] = 0;
  snprintf(out, cap, "%llu.%sus", whole, f);
}

size_t cal_fit_sets(const cal_fit *f, char (*sets)[128], size_t cap) {
  size_t n = 0;
#define ADD(...)                                                 \
  do {                                                           \
    if (n < cap) snprintf(sets[n], sizeof sets[n], __VA_ARGS__); \
    n++;                                                         \
  } while (0)
  char v[64];
  if (f->gpu[0]) ADD("cluster.gpu=%s", f->gpu);
  if (f->fitted[CAL_PARAM_NVLINK_EFF]) {
    double_text(v, sizeof v, f->after[CAL_PARAM_NVLINK_EFF]);
    ADD("cluster.scale_up.efficiency=%s", v);
  }
  if (f->fitted[CAL_PARAM_NIC_EFF]) {
    double_text(v, sizeof v, f->after[CAL_PARAM_NIC_EFF]);
    ADD("cluster.nic.efficiency=%s", v);
  }
  bool ring = f->algos == CAL_ALGOS_RING;
  for (size_t i = 0; i < f->nfiles && ring; i++) /* expressible: every file's op has a ring */
    ring = f->files[i].run->op != CAL_OP_ALLTOALL && f->files[i].run->op != CAL_OP_SENDRECV;
  if (ring) ADD("workload.collective.algorithm=ring");
  size_t nk;
  const cal_latency_key *k = cal_latency_keys(&nk);
  for (size_t i = 0; i < nk; i++) {
    if (!f->fitted[k[i].param]) continue;
    time_text(v, sizeof v, cal_latency_get(&f->lat_after, &k[i]));
    ADD("%s=%s", k[i].key, v);
  }
  for (int p = CAL_PARAM_BW_RING; p < CAL_NPARAM; p++) {
    if (!f->fitted[p]) continue;
    double_text(v, sizeof v, f->after[p]);
    ADD("%s=%s", cal_param_name((cal_param)p), v);
  }
  if (f->algos >= CAL_ALGOS_NO_NVLS) ADD("workload.collective.nvls=false");
#undef ADD
  return n;
}

char *cal_fit_fragment(const cal_fit *f, const char *inputs) {
  enum { CAP = 64 };
  char sets[CAP][128];
  size_t n = cal_fit_sets(f, sets, CAP);
  if (n > CAP) n = CAP;
  size_t cap = 4096 + (n + f->nfiles) * 300 + (inputs ? 4 * strlen(inputs) : 0), len = 0;
  char *out = sim_malloc(cap);
#define PUT(...) len += (size_t)snprintf(out + len, cap - len, __VA_ARGS__)
  PUT("# fabsim calibrate: fitted to %zu nccl-tests file%s, %zu rows\n", f->nfiles,
      f->nfiles == 1 ? "" : "s", f->rows_used);
  for (size_t i = 0; i < f->nfiles; i++) PUT("#   %s\n", f->files[i].run->name); /* escaped */
  if (inputs && *inputs) {
    PUT("# cluster: ");
    for (const unsigned char *c = (const unsigned char *)inputs; *c; c++) /* one line */
      PUT(*c < 0x20 || *c == 0x7f ? "\\x%02x" : "%c", *c);
    PUT("\n");
  }
  if (f->tried[CAL_ALGOS_NO_NVLS] || f->tried[CAL_ALGOS_RING])
    PUT("# algorithms the rows say the cluster ran: %s\n", cal_algos_name(f->algos));
  PUT("# rms of ln(model time / measured time): %.4f before, %.4f after\n", f->rms_before,
      f->rms_after);
  PUT("# Alone: fabsim run THIS.yaml. Over another scenario (fabsim run takes one\n"
      "# scenario file), the same keys as overrides:\n#   fabsim run BASE.yaml");
  for (size_t i = 0; i < n; i++) PUT(" \\\n#     --set %s", sets[i]);
  PUT("\n");
  /* YAML: sections opened as the dotted names change (keys are in schema order) */
  char prev[128] = "";
  for (size_t i = 0; i < n; i++) {
    char *eq = strchr(sets[i], '=');
    *eq = 0;
    const char *key = sets[i], *val = eq + 1;
    size_t shared = 0, depth = 0;
    for (size_t j = 0; key[j] && key[j] == prev[j]; j++)
      if (key[j] == '.') shared = j + 1;
    for (size_t j = 0; j < shared; j++) depth += key[j] == '.';
    const char *at = key + shared, *dot;
    while ((dot = strchr(at, '.')) != NULL) {
      PUT("%*s%.*s:\n", (int)(2 * depth), "", (int)(dot - at), at);
      depth++;
      at = dot + 1;
    }
    PUT("%*s%s: %s\n", (int)(2 * depth), "", at, val);
    snprintf(prev, sizeof prev, "%.127s", key); /* keys are shorter (sets[][128]) */
  }
#undef PUT
  return out;
}
