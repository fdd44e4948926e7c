/* libFuzzer target for the unit parsers (src/config/units.c): a bandwidth,
 * a time and a size, as every scenario value, --set, --vary and calibrate
 * fragment spells them. Any bytes must parse or fail with a message, never
 * crash; and what parses must come back exactly: the canonical text
 * cfg_dump writes for the value (cfg__format_*) parses to the same integer
 * (bandwidths in both their bits and bytes families), so a resolved
 * scenario.yaml reruns to the same numbers. Seeds: fuzz/corpus_units/. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config/cfg_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef int (*parse_fn)(const char *, size_t, uint64_t *, char *, size_t);

/* text parses (or fails with a message); a value formats back to itself */
static void check(parse_fn parse, void (*format)(char *, size_t, uint64_t), const char *text,
                  size_t len) {
  char msg[256] = "", canon[CFG__VALUE_TEXT];
  uint64_t v = 0, again = 0;
  if (parse(text, len, &v, msg, sizeof msg) != SIM_OK) {
    if (msg[0] == '\0') __builtin_trap(); /* a refusal says why */
    return;
  }
  format(canon, sizeof canon, v);
  if (parse(canon, strlen(canon), &again, msg, sizeof msg) != SIM_OK || again != v)
    __builtin_trap();
}

static void format_bits(char *out, size_t cap, uint64_t v) {
  cfg__format_bandwidth(out, cap, v, 0);
}
static void format_bytes(char *out, size_t cap, uint64_t v) {
  cfg__format_bandwidth(out, cap, v, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  check(cfg__parse_bandwidth_n, format_bits, text, size);
  check(cfg__parse_bandwidth_n, format_bytes, text, size);
  check(cfg__parse_time_n, cfg__format_time, text, size);
  check(cfg__parse_size_n, cfg__format_size, text, size);
  return 0;
}
