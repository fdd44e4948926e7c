/* The nccl-tests output reader (include/fabsim/calib.h).
 *
 * The table is read by its header, not by position: the header line names
 * the columns ("size count type redop root time algbw busbw #wrong time ..."
 * in current versions; older ones print "error" for "#wrong" and leave out
 * redop and root for some collectives), so the first time/algbw/busbw are
 * the out-of-place ones and the second time the in-place one.
 *
 * Cost: one pass over the text, O(rows + ranks log ranks).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "fabsim/calib.h"

enum { MAX_COLS = 24, MAX_TOK = 64 };

typedef struct tok {
  const char *p;
  size_t n;
  uint32_t col; /* 1-based column in the line, for messages */
} tok;

/* Columns the reader needs, by index into a row's tokens (-1: absent). */
typedef struct layout {
  int size, time, algbw, busbw, wrong, time_ip;
  int ncols;
  uint32_t line;
} layout;

typedef struct parser {
  const char *name;
  cal_run *run;
  sim_error *err;
  char **hosts;
  size_t nhosts, hosts_cap;
  size_t pt_cap;
  bool saw_end; /* a line nccl-tests prints after its table */
  bool md;      /* the table is a busbw table ("| size | busbw (GB/s) |") */
  layout lay;
  cal_op op_line; /* from "Collective test starting:" */
} parser;

static const struct {
  const char *key;
  cal_op op;
} op_names[] = {
    {"allreduce", CAL_OP_ALLREDUCE},
    {"all_reduce", CAL_OP_ALLREDUCE},
    {"allgather", CAL_OP_ALLGATHER},
    {"all_gather", CAL_OP_ALLGATHER},
    {"reducescatter", CAL_OP_REDUCESCATTER},
    {"reduce_scatter", CAL_OP_REDUCESCATTER},
    {"alltoall", CAL_OP_ALLTOALL},
    {"all_to_all", CAL_OP_ALLTOALL},
    {"sendrecv", CAL_OP_SENDRECV},
    {"broadcast", CAL_OP_BROADCAST},
    {"reduce", CAL_OP_REDUCE},
};

const char *cal_op_name(cal_op op) {
  static const char *const names[] = {"unknown",  "allreduce", "allgather", "reducescatter",
                                      "alltoall", "sendrecv",  "broadcast", "reduce"};
  return (unsigned)op < sizeof names / sizeof *names ? names[op] : "unknown";
}

/* The first operation named anywhere in text (case-insensitive); longer
 * names first, so "reduce_scatter" is not read as "reduce". */
cal_op cal_op_parse(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    for (size_t k = 0; k < sizeof op_names / sizeof *op_names; k++) {
      size_t m = strlen(op_names[k].key);
      if (i + m <= len && strncasecmp(text + i, op_names[k].key, m) == 0) {
        const char *after = text + i + m;
        size_t left = len - i - m;
        if (op_names[k].op == CAL_OP_REDUCE &&
            ((left >= 8 && strncasecmp(after, "_scatter", 8) == 0) ||
             (left >= 7 && strncasecmp(after, "scatter", 7) == 0)))
          continue; /* reduce_scatter / reducescatter: matched by their own key */
        return op_names[k].op;
      }
    }
  }
  return CAL_OP_UNKNOWN;
}

double cal_bus_factor(cal_op op, uint32_t ranks) {
  double n = ranks;
  switch (op) {
  case CAL_OP_ALLREDUCE: return ranks ? 2.0 * (n - 1) / n : 0;
  case CAL_OP_ALLGATHER:
  case CAL_OP_REDUCESCATTER:
  case CAL_OP_ALLTOALL: return ranks ? (n - 1) / n : 0;
  default: return 1.0;
  }
}

static int fail_at(parser *ps, uint32_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(parser *ps, uint32_t line, uint32_t col, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (line) return sim_fail(ps->err, SIM_ECONFIG, "%s:%u:%u: %s", ps->name, line, col, what);
  return sim_fail(ps->err, SIM_ECONFIG, "%s: %s", ps->name, what);
}

static size_t split(const char *s, size_t n, tok *t, size_t cap) {
  size_t k = 0, i = 0;
  while (i < n && k < cap) {
    while (i < n && isspace((unsigned char)s[i])) i++;
    if (i >= n) break;
    size_t b = i;
    while (i < n && !isspace((unsigned char)s[i])) i++;
    t[k++] = (tok){.p = s + b, .n = i - b, .col = (uint32_t)b + 1};
  }
  return k;
}

static bool tok_is(const tok *t, const char *w) {
  return t->n == strlen(w) && strncmp(t->p, w, t->n) == 0;
}

static bool tok_number(const tok *t, double *v) {
  char buf[MAX_TOK];
  if (t->n == 0 || t->n >= sizeof buf) return false;
  memcpy(buf, t->p, t->n);
  buf[t->n] = 0;
  char *end;
  *v = strtod(buf, &end);
  return *end == 0 && isfinite(*v);
}

/* Half a unit of the last digit the token prints ("12.34": 0.005,
 * "12646": 0.5): the rounding of a printed figure. */
static double tok_half_unit(const tok *t) {
  const char *dot = memchr(t->p, '.', t->n);
  double h = 0.5;
  if (dot)
    for (size_t i = (size_t)(dot - t->p) + 1; i < t->n && isdigit((unsigned char)t->p[i]); i++)
      h /= 10;
  return h;
}

static bool tok_digits(const tok *t) {
  for (size_t i = 0; i < t->n; i++)
    if (!isdigit((unsigned char)t->p[i])) return false;
  return t->n > 0;
}

/* "#       size         count      type   redop ...", or the same without
 * its "#" (a console copy, dstack's) */
static bool read_header(parser *ps, const tok *t, size_t k, uint32_t line) {
  size_t o = k > 0 && tok_is(&t[0], "#") ? 1 : 0;
  if (k < o + 3 || !tok_is(&t[o], "size") || !tok_is(&t[o + 1], "count")) return false;
  layout L = {
      .size = -1, .time = -1, .algbw = -1, .busbw = -1, .wrong = -1, .time_ip = -1, .line = line};
  for (size_t i = o; i < k; i++) {
    int c = (int)(i - o); /* a row has no leading "#" */
    if (tok_is(&t[i], "size")) L.size = c;
    else if (tok_is(&t[i], "time")) {
      if (L.time < 0) L.time = c;
      else if (L.time_ip < 0) L.time_ip = c;
    } else if (tok_is(&t[i], "algbw") && L.algbw < 0) L.algbw = c;
    else if (tok_is(&t[i], "busbw") && L.busbw < 0) L.busbw = c;
    else if ((tok_is(&t[i], "#wrong") || tok_is(&t[i], "wrong") || tok_is(&t[i], "error")) &&
             L.wrong < 0)
      L.wrong = c;
  }
  L.ncols = (int)(k - o);
  if (L.time < 0 || L.algbw < 0 || L.busbw < 0) return false;
  ps->lay = L;
  return true;
}

/* "#  Rank  0 Group  0 Pid 313 on host-0 device  0 [0x18] NVIDIA H100 80GB HBM3" */
static int read_rank(parser *ps, const char *s, size_t n, const tok *t, size_t k) {
  size_t on = 0;
  for (size_t i = 2; i + 1 < k; i++)
    if (tok_is(&t[i], "on")) {
      on = i;
      break;
    }
  if (!on) return SIM_OK; /* not a rank line after all */
  if (ps->nhosts == ps->hosts_cap) {
    ps->hosts_cap = ps->hosts_cap ? 2 * ps->hosts_cap : 64;
    ps->hosts = sim_realloc(ps->hosts, ps->hosts_cap * sizeof *ps->hosts);
  }
  char *h = sim_malloc(t[on + 1].n + 1);
  memcpy(h, t[on + 1].p, t[on + 1].n);
  h[t[on + 1].n] = 0;
  ps->hosts[ps->nhosts++] = h;
  if (ps->run->ranks == 0) { /* the device name of rank 0: what follows "[...]" */
    const char *br = memchr(s, ']', n);
    if (br) {
      const char *b = br + 1, *e = s + n;
      while (b < e && isspace((unsigned char)*b)) b++;
      while (e > b && isspace((unsigned char)e[-1])) e--;
      size_t m =
          (size_t)(e - b) < sizeof ps->run->gpu - 1 ? (size_t)(e - b) : sizeof ps->run->gpu - 1;
      memcpy(ps->run->gpu, b, m);
      ps->run->gpu[m] = 0;
    }
  }
  ps->run->ranks++;
  return SIM_OK;
}

static int read_row(parser *ps, const tok *t, size_t k, uint32_t line) {
  const layout *L = &ps->lay;
  if ((int)k < L->ncols)
    return fail_at(ps, line, k ? t[k - 1].col : 1,
                   "a row of the results table with fewer columns than its header (line "
                   "truncated?); allowed: every column the header names");
  double v[4];
  const int idx[4] = {L->size, L->time, L->algbw, L->busbw};
  static const char *const names[4] = {"size", "time", "algbw", "busbw"};
  if (!tok_digits(&t[L->size]))
    return fail_at(ps, line, t[L->size].col,
                   "size '%.*s' is not a whole number of bytes; allowed: the byte count "
                   "nccl-tests prints (K, M and G are its command line's units, not its table's)",
                   (int)(t[L->size].n < 40 ? t[L->size].n : 40), t[L->size].p);
  for (int i = 0; i < 4; i++)
    if (!tok_number(&t[idx[i]], &v[i]) || v[i] < 0) {
      return fail_at(ps, line, t[idx[i]].col,
                     "the %s column is not a non-negative number; allowed: numbers as nccl-tests "
                     "print them",
                     names[i]);
    }
  if (L->wrong >= 0 && !tok_is(&t[L->wrong], "N/A")) {
    double w;
    bool num = tok_number(&t[L->wrong], &w);
    /* "#wrong" counts wrong elements; the older "error" column is a relative
     * error (0e+00 or a rounding-size number). */
    if (!num || (w != 0 && (w >= 1 || w < 0)))
      return fail_at(ps, line, t[L->wrong].col,
                     "this size failed nccl-tests' own check (#wrong/error is not 0): the "
                     "measurement is not valid; allowed: rows with #wrong 0");
  }
  if (v[0] >= 18446744073709551615.0) return fail_at(ps, line, t[L->size].col, "size out of range");
  if (v[0] > 0 && v[1] == 0)
    return fail_at(ps, line, t[L->time].col,
                   "a time of 0 us for %.0f bytes cannot be a measurement; allowed: a time above "
                   "0 (rows of size 0 are read and left out of the fit)",
                   v[0]);
  /* algbw = size / time (GB/s = bytes / us / 1e3), within what both print */
  if (v[0] > 0) {
    double alg = v[0] / (v[1] * 1e3);
    double tol = tok_half_unit(&t[L->algbw]) + alg * tok_half_unit(&t[L->time]) / v[1];
    if (fabs(v[2] - alg) > tol * 1.01 + 1e-9)
      return fail_at(ps, line, t[L->algbw].col,
                     "algbw %.*s GB/s, but size / time = %.0f B / %.*s us = %.4g GB/s: the row is "
                     "not one measurement; allowed: the columns as nccl-tests printed them",
                     (int)t[L->algbw].n, t[L->algbw].p, v[0], (int)t[L->time].n, t[L->time].p, alg);
  }
  cal_run *r = ps->run;
  if (r->n == ps->pt_cap) {
    ps->pt_cap = ps->pt_cap ? 2 * ps->pt_cap : 32;
    r->pt = sim_realloc(r->pt, ps->pt_cap * sizeof *r->pt);
  }
  double tip = -1;
  if (L->time_ip >= 0 && L->time_ip < (int)k && !tok_number(&t[L->time_ip], &tip)) tip = -1;
  r->pt[r->n++] = (cal_point){.bytes = (uint64_t)v[0],
                              .time_us = v[1],
                              .algbw_GBps = v[2],
                              .busbw_GBps = v[3],
                              .time_us_inplace = tip,
                              .line = line};
  return SIM_OK;
}

static bool contains(const char *s, size_t n, const char *w) {
  size_t m = strlen(w);
  for (size_t i = 0; i + m <= n; i++)
    if (memcmp(s + i, w, m) == 0) return true;
  return false;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first row whose busbw / algbw is not bus factor f (both columns
 * print 2 decimals: compared where that is precise), or -1. */
static long factor_mismatch(const cal_run *r, double f) {
  for (size_t i = 0; i < r->n; i++) {
    const cal_point *p = &r->pt[i];
    if (p->algbw_GBps >= 1.0 && fabs(p->busbw_GBps - p->algbw_GBps * f) > 0.011 + 0.006 * f)
      return (long)i;
  }
  return -1;
}

/* The rank count whose bus factor is f (AllReduce 2(n-1)/n, AllGather,
 * ReduceScatter, AllToAll (n-1)/n), 0 when f does not tell it. */
static uint32_t implied_ranks(cal_op op, double f) {
  double n = 0;
  if (op == CAL_OP_ALLREDUCE && f < 2) n = 2 / (2 - f);
  else if ((op == CAL_OP_ALLGATHER || op == CAL_OP_REDUCESCATTER || op == CAL_OP_ALLTOALL) && f < 1)
    n = 1 / (1 - f);
  return n >= 2 && n < 1e7 ? (uint32_t)lround(n) : 0;
}

/* Hosts, the collective, and the rows' internal consistency. */
static int finish(parser *ps, cal_op op) {
  cal_run *r = ps->run;
  if (ps->lay.line == 0)
    return fail_at(ps, 0, 0,
                   "no nccl-tests results table (a line '#  size  count  type ... time  algbw  "
                   "busbw', with or without its '#', or a busbw table '| size | busbw (GB/s) "
                   "|'); allowed: the output of all_reduce_perf, all_gather_perf, "
                   "reduce_scatter_perf, alltoall_perf, sendrecv_perf (nccl-tests or rccl-tests)");
  if (r->n == 0) return fail_at(ps, ps->lay.line, 1, "the results table has no rows");
  if (!ps->saw_end && !ps->md)
    return fail_at(ps, r->pt[r->n - 1].line + 1, 1,
                   "the file ends without a line nccl-tests prints after its table ('Out of "
                   "bounds values', 'Avg bus bandwidth', 'Collective test concluded', or a "
                   "'Test failure' that ended the run): truncated; allowed: the whole output "
                   "of one nccl-tests run");
  if (op == CAL_OP_UNKNOWN) op = ps->op_line;
  if (op == CAL_OP_UNKNOWN) op = cal_op_parse(ps->name, strlen(ps->name));
  if (op == CAL_OP_UNKNOWN)
    return fail_at(ps, 0, 0,
                   "cannot tell which collective this file measured; name it as OP:FILE, OP "
                   "one of allreduce, allgather, reducescatter, alltoall, sendrecv, broadcast, "
                   "reduce");
  r->op = op;
  char probe[8][64];
  if (cal_run_env_sets(r, probe, 8, ps->err) < 0) return SIM_ECONFIG;
  if (r->ranks == 0 || ps->md) { /* a busbw table's times wait for its shape */
    r->ranks = 0;
    r->shape_from_base = true;
    snprintf(r->shape_why, sizeof r->shape_why, "%s",
             ps->md ? "a busbw table: no rank lines" : "no rank lines ('Using devices')");
    return SIM_OK;
  }
  qsort(ps->hosts, ps->nhosts, sizeof *ps->hosts, cmp_str);
  uint32_t run_len = 0;
  for (size_t i = 0; i < ps->nhosts; i++) {
    if (i == 0 || strcmp(ps->hosts[i], ps->hosts[i - 1])) {
      r->nodes++;
      run_len = 0;
    }
    if (++run_len > r->gpus_per_node) r->gpus_per_node = run_len;
  }
  double f = cal_bus_factor(op, r->ranks);
  long bad = factor_mismatch(r, f);
  if (bad < 0) return SIM_OK;
  const cal_point *p = &r->pt[bad];
  double ratio = p->busbw_GBps / p->algbw_GBps;
  uint32_t more = implied_ranks(op, ratio);
  if (more > r->ranks) { /* a post that kept only some rank lines */
    snprintf(r->shape_why, sizeof r->shape_why,
             "%u rank lines, busbw / algbw %.4f says about %u ranks", r->ranks, ratio, more);
    r->shape_from_base = true;
    r->ranks = r->nodes = r->gpus_per_node = 0;
    return SIM_OK;
  }
  return fail_at(ps, p->line, 1,
                 "busbw / algbw = %.3f, but %s over %u ranks has nccl-tests bus factor %.3f: "
                 "the output of another collective, or of another rank count",
                 ratio, cal_op_name(op), r->ranks, f);
}

int cal_run_set_shape(cal_run *r, uint32_t nodes, uint32_t gpus_per_node, sim_error *err) {
  uint64_t ranks = (uint64_t)nodes * gpus_per_node;
  if (ranks < 2 || ranks > UINT32_MAX)
    return sim_fail(err, SIM_ECONFIG,
                    "%s: %s, so its shape is the base's: %u nodes x %u GPUs is %llu ranks; "
                    "allowed: at least 2 (--set cluster.nodes=N --set cluster.gpus_per_node=G)",
                    r->name, r->shape_why, nodes, gpus_per_node, (unsigned long long)ranks);
  double f = cal_bus_factor(r->op, (uint32_t)ranks);
  if (r->busbw_table)
    for (size_t i = 0; i < r->n; i++) {
      cal_point *p = &r->pt[i];
      p->algbw_GBps = p->busbw_GBps / f;
      p->time_us = p->bytes ? (double)p->bytes / (p->algbw_GBps * 1e3) : 0;
    }
  long bad = factor_mismatch(r, f);
  if (bad >= 0) {
    const cal_point *p = &r->pt[bad];
    double ratio = p->busbw_GBps / p->algbw_GBps;
    uint32_t says = implied_ranks(r->op, ratio);
    char hint[64] = "";
    if (says) snprintf(hint, sizeof hint, " (busbw / algbw says about %u ranks)", says);
    return sim_fail(err, SIM_ECONFIG,
                    "%s:%u:1: busbw / algbw = %.3f, but %s over the base's %u nodes x %u GPUs "
                    "has bus factor %.3f (the file: %s); allowed: the shape it measured as "
                    "--set cluster.nodes=N --set cluster.gpus_per_node=G%s",
                    r->name, p->line, ratio, cal_op_name(r->op), nodes, gpus_per_node, f,
                    r->shape_why, hint);
  }
  r->nodes = nodes;
  r->gpus_per_node = gpus_per_node;
  r->ranks = (uint32_t)ranks;
  return SIM_OK;
}

/* "NCCL INFO NCCL_ALGO set by environment to VALUE": the first of the
 * ranks' echoes, into out (cap bytes) and its line. */
static void read_env(const char *s, size_t n, const char *var, char *out, size_t cap, uint32_t *at,
                     uint32_t line) {
  char what[64];
  snprintf(what, sizeof what, "%s set by environment to ", var);
  size_t m = strlen(what);
  if (out[0]) return;
  for (size_t i = 0; i + m <= n; i++)
    if (memcmp(s + i, what, m) == 0) {
      size_t len = n - i - m;
      while (len && (s[i + m + len - 1] == ' ' || s[i + m + len - 1] == '.')) len--;
      if (len >= cap) len = cap - 1;
      memcpy(out, s + i + m, len);
      out[len] = 0;
      *at = line;
      return;
    }
}

/* What launchers put before each line of a rank's output: "[0] " (mpirun
 * --tag-output of older launchers, srun --label's "0: " is not one), Open
 * MPI's "[1,0]<stdout>:" (--tag-output: job, rank and stream). Returns
 * its length, 0 without one. */
static size_t launcher_prefix(const char *s, size_t n) {
  size_t b = 0;
  while (b < n && isspace((unsigned char)s[b])) b++;
  if (b >= n || s[b] != '[') return 0;
  size_t e = b + 1;
  while (e < n && (isdigit((unsigned char)s[e]) || (s[e] == ',' && e > b + 1))) e++;
  if (e >= n || e == b + 1 || s[e] != ']' || s[e - 1] == ',') return 0;
  e++;
  static const char *const streams[] = {"<stdout>:", "<stderr>:", "<stddiag>:"};
  for (size_t i = 0; i < sizeof streams / sizeof *streams; i++) {
    size_t m = strlen(streams[i]);
    if (e + m <= n && memcmp(s + e, streams[i], m) == 0) return e + m;
  }
  return e;
}

/* The name as messages, the printout and the fragment show it: control
 * characters (a newline in a file name) as \xNN, so no name can start a
 * line of its own in a terminal or a scenario file. */
static void name_text(char *out, size_t cap, const char *name) {
  size_t w = 0;
  for (const unsigned char *c = (const unsigned char *)name; *c && w + 5 < cap; c++) {
    if (*c < 0x20 || *c == 0x7f) w += (size_t)snprintf(out + w, cap - w, "\\x%02x", *c);
    else out[w++] = (char)*c;
  }
  out[w] = 0;
}

/* "HOST: Test NCCL failure common.cu:1204 '...'", "Test CUDA failure",
 * " .. HOST pid 7: Test failure common.cu:915": nccl-tests' abort. */
static bool test_failure(const char *s, size_t n) {
  return contains(s, n, "Test NCCL failure") || contains(s, n, "Test CUDA failure") ||
         contains(s, n, "Test HIP failure") || contains(s, n, ": Test failure");
}

/* The cells of a markdown table line "| a | b |", trimmed. */
static size_t md_cells(const char *s, size_t n, tok *c, size_t cap) {
  size_t k = 0, i = 0;
  while (i < n && s[i] != '|') i++;
  while (i < n && k < cap) {
    size_t b = ++i;
    while (i < n && s[i] != '|') i++;
    if (i >= n) break; /* text after the last '|' is no cell */
    size_t e = i;
    while (b < e && isspace((unsigned char)s[b])) b++;
    while (e > b && isspace((unsigned char)s[e - 1])) e--;
    c[k++] = (tok){.p = s + b, .n = e - b, .col = (uint32_t)b + 1};
  }
  return k;
}

static bool cell_has(const tok *c, const char *w) {
  size_t m = strlen(w);
  for (size_t i = 0; i + m <= c->n; i++)
    if (strncasecmp(c->p + i, w, m) == 0) return true;
  return false;
}

/* "| Message Size (Bytes) | ND H100 V5 (GB/s) |": a busbw table, as cloud
 * benchmark guides publish nccl-tests' curve (Azure's AI-benchmarking-guide). */
static int md_header(parser *ps, const char *s, size_t n, uint32_t line) {
  tok c[4];
  size_t k = md_cells(s, n, c, 4);
  if (k != 2 || !cell_has(&c[0], "size") || !cell_has(&c[1], "GB/s")) return SIM_OK;
  ps->md = true;
  ps->run->busbw_table = true;
  ps->lay.line = line;
  return SIM_OK;
}

/* The bytes a size label stands for: digits, or digits and K, M or G as a
 * table of a power-of-two sweep renders them ("65K", "132K", "268M", "1G":
 * 2^16, 2^17, 2^28, 2^30, rounded in decimal or binary units): the power of
 * two nearest to the label, within 5 % in one of the two units and the same
 * in both where both are that close. 0 when it is neither. */
static uint64_t md_size(const tok *c) {
  size_t d = 0;
  while (d < c->n && isdigit((unsigned char)c->p[d])) d++;
  if (d == 0 || d > 12) return 0;
  uint64_t v = strtoull(c->p, NULL, 10);
  if (d == c->n) return v;
  if (d + 1 != c->n && !(d + 2 == c->n && (c->p[d + 1] == 'B' || c->p[d + 1] == 'b'))) return 0;
  const char *units = "KMG";
  const char *u = strchr(units, toupper((unsigned char)c->p[d]));
  if (!u) return 0;
  int e = (int)(u - units) + 1;
  uint64_t pick = 0;
  for (int bin = 0; bin < 2; bin++) {
    double x = (double)v * pow(bin ? 1024 : 1000, e);
    double p2 = exp2(round(log2(x)));
    if (fabs(log(p2 / x)) > log(1.05)) continue;
    if (pick && (uint64_t)p2 != pick) return 0;
    pick = (uint64_t)p2;
  }
  return pick;
}

/* "| 65K | 2.72 |" */
static int md_row(parser *ps, const char *s, size_t n, uint32_t line) {
  tok c[4];
  size_t k = md_cells(s, n, c, 4);
  bool rule = k >= 1 && c[0].n > 0; /* |---|---| */
  for (size_t i = 0; rule && i < c[0].n; i++) rule = c[0].p[i] == '-' || c[0].p[i] == ':';
  if (rule) return SIM_OK;
  if (k != 2)
    return fail_at(ps, line, 1,
                   "a row of the busbw table with %zu cells; allowed: '| size | busbw |'", k);
  uint64_t bytes = md_size(&c[0]);
  if (!bytes)
    return fail_at(ps, line, c[0].col,
                   "size '%.*s' is neither a byte count nor a power of two rendered with K, M "
                   "or G (within 5 %%); allowed: 1048576, 1M, 65K (2^16)",
                   (int)(c[0].n < 40 ? c[0].n : 40), c[0].p);
  double bw;
  if (!tok_number(&c[1], &bw) || bw <= 0)
    return fail_at(ps, line, c[1].col,
                   "busbw '%.*s' is not a number above 0; allowed: GB/s as the table prints it",
                   (int)(c[1].n < 40 ? c[1].n : 40), c[1].p);
  cal_run *r = ps->run;
  if (r->n && bytes <= r->pt[r->n - 1].bytes)
    return fail_at(ps, line, c[0].col,
                   "size %llu bytes after %llu: the sizes of a sweep grow; allowed: one curve, "
                   "smallest size first",
                   (unsigned long long)bytes, (unsigned long long)r->pt[r->n - 1].bytes);
  if (r->n == ps->pt_cap) {
    ps->pt_cap = ps->pt_cap ? 2 * ps->pt_cap : 32;
    r->pt = sim_realloc(r->pt, ps->pt_cap * sizeof *r->pt);
  }
  r->pt[r->n++] =
      (cal_point){.bytes = bytes, .busbw_GBps = bw, .time_us_inplace = -1, .line = line};
  return SIM_OK;
}

int cal_nccltests_parse(cal_run *out, const char *name, const char *text, size_t len, cal_op op,
                        sim_error *err) {
  memset(out, 0, sizeof *out);
  name_text(out->name, sizeof out->name, name);
  parser ps = {.name = out->name, .run = out, .err = err};
  int rc = SIM_OK;
  uint32_t line = 0;
  tok t[MAX_COLS];
  for (size_t i = 0; i < len && rc == SIM_OK;) {
    const char *s = text + i;
    const char *nl = memchr(s, '\n', len - i);
    size_t n = nl ? (size_t)(nl - s) : len - i;
    i += n + 1;
    line++;
    if (n && s[n - 1] == '\r') n--;
    for (size_t pre; (pre = launcher_prefix(s, n)) > 0;) { /* "[1,0]<stdout>:[0] ..." */
      s += pre;
      n -= pre;
    }
    if (contains(s, n, "NCCL INFO") || contains(s, n, "NCCL WARN")) {
      read_env(s, n, "NCCL_ALGO", out->nccl_algo, sizeof out->nccl_algo, &out->nccl_algo_line,
               line);
      read_env(s, n, "NCCL_PROTO", out->nccl_proto, sizeof out->nccl_proto, &out->nccl_proto_line,
               line);
      continue;
    }
    if (ps.md) { /* a busbw table ends at its first line that is not a row */
      size_t b = 0;
      while (b < n && (s[b] == ' ' || s[b] == '\t')) b++;
      if (!ps.saw_end && b < n && s[b] == '|') rc = md_row(&ps, s, n, line);
      else ps.saw_end = true;
      continue;
    }
    size_t k = split(s, n, t, MAX_COLS);
    if (k == 0) continue;
    size_t o = tok_is(&t[0], "#") ? 1 : 0; /* the closing lines come with or without "#" */
    if (o && k >= 3 && tok_is(&t[1], "Rank")) {
      rc = read_rank(&ps, s, n, t, k);
    } else if (k >= o + 5 && tok_is(&t[o], "Out") && tok_is(&t[o + 1], "of") &&
               tok_is(&t[o + 2], "bounds")) {
      ps.saw_end = ps.lay.line != 0;
      if (!tok_is(&t[k - 1], "OK"))
        rc = fail_at(&ps, line, t[k - 1].col,
                     "nccl-tests' own check failed ('%.*s'): the measurement is not valid; "
                     "allowed: runs whose 'Out of bounds values' line says 0 OK",
                     (int)n, s);
    } else if (k >= o + 3 && tok_is(&t[o], "Avg") && tok_is(&t[o + 1], "bus")) {
      ps.saw_end = ps.lay.line != 0;
      if (!tok_number(&t[k - 1], &out->avg_busbw_GBps)) out->avg_busbw_GBps = 0;
    } else if (contains(s, n, "Collective test starting:")) {
      ps.op_line = cal_op_parse(s, n);
    } else if (contains(s, n, "Collective test concluded")) {
      ps.saw_end = ps.lay.line != 0;
    } else if (!ps.lay.line) { /* text before the table (launcher noise) */
      if (!read_header(&ps, t, k, line) && t[0].p[0] == '|') rc = md_header(&ps, s, n, line);
    } else if (!ps.saw_end && out->n && test_failure(s, n)) {
      out->aborted_line = line; /* the run died after its last row */
      ps.saw_end = true;
    } else if (!o && !ps.saw_end && isdigit((unsigned char)t[0].p[0])) {
      /* a row starts with its size, digits; other lines inside the table
       * (launcher and MPI noise) are not rows */
      rc = read_row(&ps, t, k, line);
    }
  }
  if (rc == SIM_OK) rc = finish(&ps, op);
  for (size_t i = 0; i < ps.nhosts; i++) sim_free(ps.hosts[i]);
  sim_free(ps.hosts);
  if (rc != SIM_OK) cal_run_free(out);
  return rc;
}

void cal_run_free(cal_run *r) {
  sim_free(r->pt);
  r->pt = NULL;
  r->n = 0;
}

/* "OP:FILE" names the collective of a file whose text and name do not. */
static cal_op op_prefix(const char *arg, const char **path) {
  const char *colon = strchr(arg, ':');
  *path = arg;
  if (!colon || colon == arg) return CAL_OP_UNKNOWN;
  struct stat st;
  if (stat(arg, &st) == 0) return CAL_OP_UNKNOWN; /* a file whose name has a colon */
  cal_op op = cal_op_parse(arg, (size_t)(colon - arg));
  if (op != CAL_OP_UNKNOWN) *path = colon + 1;
  return op;
}

int cal_nccltests_read(cal_run *out, const char *arg, sim_error *err) {
  memset(out, 0, sizeof *out);
  const char *path;
  cal_op op = op_prefix(arg, &path);
  char shown[256]; /* the path as messages show it */
  name_text(shown, sizeof shown, path);
  struct stat st;
  if (stat(path, &st) != 0)
    return sim_fail(err, SIM_ECONFIG, "%s: cannot read: %s", shown, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return sim_fail(err, SIM_ECONFIG,
                    "%s: not a regular file; allowed: a file of nccl-tests output", shown);
  if (st.st_size > CAL_NCCLTESTS_MAX_BYTES)
    return sim_fail(err, SIM_ECONFIG,
                    "%s: %lld bytes, over the %d MiB an nccl-tests output "
                    "can take; allowed: one run's output",
                    shown, (long long)st.st_size, CAL_NCCLTESTS_MAX_BYTES >> 20);
  FILE *f = fopen(path, "rb");
  if (!f) return sim_fail(err, SIM_ECONFIG, "%s: cannot read: %s", shown, strerror(errno));
  size_t cap = (size_t)st.st_size + 1, len = 0;
  char *text = sim_malloc(cap);
  size_t k;
  while (len < cap - 1 && (k = fread(text + len, 1, cap - 1 - len, f)) > 0) len += k;
  int rc = ferror(f) ? sim_fail(err, SIM_ECONFIG, "%s: read failed", shown) : SIM_OK;
  fclose(f);
  if (rc == SIM_OK) rc = cal_nccltests_parse(out, path, text, len, op, err);
  if (rc == SIM_OK) {
    out->dev = (uint64_t)st.st_dev;
    out->ino = (uint64_t)st.st_ino;
  }
  sim_free(text);
  return rc;
}
