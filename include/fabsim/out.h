/* fabsim output: files a run leaves in output.dir, and number formatting for
 * the terminal. Every file is written whole or not at all (temp + rename). */
#ifndef FABSIM_OUT_H
#define FABSIM_OUT_H

#include <jansson.h>
#include <stdio.h>

#include "fabsim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Serialize `root` (2-space indent, keys in insertion order, reals with 12
 * significant digits) and write it atomically to dir/name. */
int out_write_json(const json_t *root, const char *dir, const char *name, sim_error *err);
/* The same text, for stdout. Caller frees with free(). */
char *out_json_text(const json_t *root);

/* Human formatting into buf (returns buf): 1,234,567 / 1.50 GiB /
 * 400 Gb/s / 12.3 us / $1.23M. */
const char *out_fmt_count(char *buf, size_t n, uint64_t v);
const char *out_fmt_bytes(char *buf, size_t n, uint64_t bytes);
const char *out_fmt_rate(char *buf, size_t n, uint64_t bps);
const char *out_fmt_seconds(char *buf, size_t n, double s);
const char *out_fmt_usd(char *buf, size_t n, double usd);

#ifdef __cplusplus
}
#endif
#endif
