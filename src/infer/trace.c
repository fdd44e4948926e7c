/* Requests: Vidur's request-trace CSV (inf_trace_parse) and the Poisson
 * stream (inf_poisson). Vidur writes arrived_at, num_prefill_tokens and
 * num_decode_tokens among its request columns (microsoft/vidur,
 * vidur/request_generator/trace_replay_request_generator.py reads them).
 * No quoting: a field is the text between commas, blanks around it
 * ignored. O(len). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer/inf_internal.h"

enum { COL_ARRIVED, COL_PREFILL, COL_DECODE, COLS };
static const char *const COL_NAMES[COLS] = {"arrived_at", "num_prefill_tokens",
                                            "num_decode_tokens"};
static const double MAX_TOKENS = 2147483648.0; /* 2^31 */

typedef struct cursor {
  const char *p, *end;
  const char *name;
  unsigned line;
} cursor;

/* The next line's fields [start, end) into f (at most cap; *n all of
 * them); false at the end of the text. */
static bool next_line(cursor *c, const char **fs, const char **fe, size_t cap, size_t *n) {
  if (c->p >= c->end) return false;
  c->line++;
  *n = 0;
  const char *s = c->p;
  for (;;) {
    const char *e = s;
    while (e < c->end && *e != ',' && *e != '\n') e++;
    const char *a = s, *b = e;
    while (a < b && (*a == ' ' || *a == '\t' || *a == '\r')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r')) b--;
    if (*n < cap) fs[*n] = a, fe[*n] = b;
    (*n)++;
    if (e >= c->end || *e == '\n') {
      c->p = e < c->end ? e + 1 : e;
      return true;
    }
    s = e + 1;
  }
}

static bool blank(const char **fs, const char **fe, size_t n) { return n == 1 && fs[0] == fe[0]; }

/* A number: the whole field, finite. */
static bool number(const char *a, const char *b, double *v) {
  char buf[64];
  size_t len = (size_t)(b - a);
  if (len == 0 || len >= sizeof buf) return false;
  memcpy(buf, a, len);
  buf[len] = '\0';
  char *end;
  *v = strtod(buf, &end);
  return *end == '\0' && isfinite(*v);
}

enum { MAX_FIELDS = 64 };

int inf_trace_parse(inf_requests *out, const char *text, size_t len, const char *name,
                    sim_error *err) {
  *out = (inf_requests){0};
  cursor c = {text, text + len, name, 0};
  const char *fs[MAX_FIELDS], *fe[MAX_FIELDS];
  size_t n, col[COLS], cap = 0;
  bool header = false;
  while (next_line(&c, fs, fe, MAX_FIELDS, &n))
    if (!blank(fs, fe, n)) {
      header = true;
      break;
    }
  if (!header)
    return sim_fail(err, SIM_EINVAL,
                    "%s: empty; allowed: a header row naming "
                    "arrived_at, num_prefill_tokens, "
                    "num_decode_tokens, then a row per request",
                    name);
  for (int k = 0; k < COLS; k++) {
    col[k] = SIZE_MAX;
    for (size_t i = 0; i < n && i < MAX_FIELDS; i++)
      if ((size_t)(fe[i] - fs[i]) == strlen(COL_NAMES[k]) &&
          !memcmp(fs[i], COL_NAMES[k], strlen(COL_NAMES[k])))
        col[k] = i;
    if (col[k] == SIZE_MAX)
      return sim_fail(err, SIM_EINVAL,
                      "%s:%u: the header names no column %s; allowed: a header row naming "
                      "arrived_at, num_prefill_tokens and num_decode_tokens (Vidur's columns; "
                      "at most %d columns)",
                      name, c.line, COL_NAMES[k], MAX_FIELDS);
  }
  double prev = 0;
  while (next_line(&c, fs, fe, MAX_FIELDS, &n)) {
    if (blank(fs, fe, n)) continue;
    double v[COLS];
    for (int k = 0; k < COLS; k++) {
      if (col[k] >= n || !number(fs[col[k]], fe[col[k]], &v[k])) {
        inf_requests_free(out);
        return sim_fail(err, SIM_EINVAL, "%s:%u: %s: not a number; allowed: a decimal number", name,
                        c.line, COL_NAMES[k]);
      }
    }
    if (v[COL_ARRIVED] < 0 || v[COL_ARRIVED] * 1e12 >= (double)SIM_HORIZON_PS / 2) {
      inf_requests_free(out);
      return sim_fail(err, SIM_EINVAL,
                      "%s:%u: arrived_at %.9g s; allowed: 0 to %.6g s (seconds from the start)",
                      name, c.line, v[COL_ARRIVED], (double)SIM_HORIZON_PS / 2e12);
    }
    if (out->n && v[COL_ARRIVED] < prev) {
      inf_requests_free(out);
      return sim_fail(err, SIM_EINVAL,
                      "%s:%u: arrived_at %.9g s is before the previous request's %.9g s; "
                      "allowed: non-decreasing arrival times (the trace sorted by arrived_at)",
                      name, c.line, v[COL_ARRIVED], prev);
    }
    for (int k = COL_PREFILL; k <= COL_DECODE; k++)
      if (!(v[k] >= 1 && v[k] < MAX_TOKENS && v[k] == floor(v[k]))) {
        inf_requests_free(out);
        return sim_fail(err, SIM_EINVAL, "%s:%u: %s %.9g; allowed: a whole number 1 to 2^31 - 1",
                        name, c.line, COL_NAMES[k], v[k]);
      }
    prev = v[COL_ARRIVED];
    sim_grow((void **)&out->r, &cap, out->n + 1, sizeof *out->r);
    out->r[out->n++] = (inf_request){.arrival = (simtime_ps)llround(v[COL_ARRIVED] * 1e12),
                                     .prompt = (uint32_t)v[COL_PREFILL],
                                     .output = (uint32_t)v[COL_DECODE]};
  }
  if (!out->n)
    return sim_fail(err, SIM_EINVAL,
                    "%s: no request after the header; allowed: a row per "
                    "request",
                    name);
  return SIM_OK;
}

void inf_poisson(inf_requests *out, double rate, uint64_t n, simtime_ps until, uint32_t prompt,
                 uint32_t output, uint64_t seed) {
  sim_rng rng;
  sim_rng_init(&rng, seed, "inference");
  size_t cap = 0;
  *out = (inf_requests){0};
  double t = 0;
  for (;;) {
    t += sim_rng_exp(&rng, 1 / rate);
    double ps = nearbyint(t * 1e12);
    if (n ? out->n >= n : ps >= (double)until) break;
    if (ps >= (double)SIM_HORIZON_PS / 2) break;
    sim_grow((void **)&out->r, &cap, out->n + 1, sizeof *out->r);
    out->r[out->n++] = (inf_request){.arrival = (simtime_ps)ps, .prompt = prompt, .output = output};
  }
}

void inf_requests_free(inf_requests *q) {
  sim_free(q->r);
  *q = (inf_requests){0};
}
