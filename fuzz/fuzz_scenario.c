/* libFuzzer target for the scenario parser: any bytes, as a file and as
 * --set overrides, must load or fail with a message, never crash or leak.
 *
 * Input layout: the bytes up to the first "\n@@\n" are the YAML file; each
 * following line (after that separator) is one --set argument. Seeds live in
 * fuzz/corpus/.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fabsim/config.h"

enum { MAX_SETS = 8 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char sep[] = "\n@@\n";
  const char *text = (const char *)data;
  size_t yaml_len = size;
  char *sets_copy = NULL;
  const char *sets[MAX_SETS];
  int nsets = 0;
  cfg_scenario s;
  cfg_doc *doc = NULL;
  sim_error err = {0};

  for (size_t i = 0; i + sizeof sep - 1 <= size; i++) {
    if (memcmp(text + i, sep, sizeof sep - 1) == 0) {
      yaml_len = i;
      break;
    }
  }
  if (yaml_len < size) { /* split the tail into NUL-terminated lines */
    size_t off = yaml_len + sizeof sep - 1, n = size - off;
    sets_copy = sim_malloc(n + 1);
    memcpy(sets_copy, text + off, n);
    sets_copy[n] = '\0';
    for (char *p = sets_copy; p && nsets < MAX_SETS;) {
      char *nl = strchr(p, '\n');
      if (nl) *nl = '\0';
      sets[nsets++] = p;
      p = nl ? nl + 1 : NULL;
    }
  }

  if (cfg_load_buffer(&s, &doc, "fuzz.yaml", text, yaml_len, sets, nsets, &err) == SIM_OK) {
    char *dump = cfg_dump(&s);
    cfg_scenario again;
    cfg_doc *doc2 = NULL;
    /* what was accepted must dump to text that loads again */
    if (cfg_load_buffer(&again, &doc2, "dump", dump, strlen(dump), NULL, 0, &err) != SIM_OK)
      __builtin_trap();
    (void)cfg_where(doc, "cluster.nodes");
    cfg_free(&again, doc2);
    sim_free(dump);
    cfg_free(&s, doc);
  } else if (doc != NULL || err.msg[0] == '\0') {
    __builtin_trap(); /* a failure must leave nothing behind and say why */
  }
  sim_free(sets_copy);
  return 0;
}
