/* libFuzzer target for the scenario parser: any bytes, as a file and as
 * --set overrides, must load or fail with a message, never crash or leak.
 * What loads must dump to text that loads again. A trace workload's files
 * are then found and matched as a run does it (src/trace/load.c: the
 * workload.trace.path pattern, the workload.trace.classes list): the file
 * is named examples/fuzz.yaml, so that run from the repository's root its
 * relative paths find the shipped traces, as examples/trace.yaml does.
 *
 * Input layout: the bytes up to the first "\n@@\n" are the YAML file; each
 * following line (after that separator) is one --set argument. Seeds:
 * fuzz/corpus/ and every shipped scenario (make fuzz-smoke copies them).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fabsim/config.h"
#include "fabsim/trace.h"

enum { MAX_SETS = 8, MAX_TRACE_GPUS = 256 };

/* The trace files of a trace workload (not a jobs: list's, whose workload
 * keys are each job's), found and matched. At most MAX_TRACE_GPUS GPUs, so
 * that a pattern over a million ranks costs what a refusal costs. */
static void load_traces(const cfg_scenario *s, const cfg_doc *doc) {
  if (s->workload.kind != CFG_WORKLOAD_TRACE || s->jobs.n) return;
  uint64_t gpus = (uint64_t)s->cluster.nodes * s->cluster.gpus_per_node; /* 0: full size */
  if (gpus == 0 || gpus > MAX_TRACE_GPUS) gpus = MAX_TRACE_GPUS;
  trc_set *set = NULL;
  sim_error err = {0};
  int rc = trc_load(&set, s, doc, (uint32_t)gpus, &err);
  if (rc == SIM_OK) trc_set_free(set);
  else if (set != NULL || err.msg[0] == '\0') __builtin_trap();
}

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

  if (cfg_load_buffer(&s, &doc, "examples/fuzz.yaml", text, yaml_len, sets, nsets, &err) ==
      SIM_OK) {
    char *dump = cfg_dump(&s);
    cfg_scenario again;
    cfg_doc *doc2 = NULL;
    /* what was accepted must dump to text that loads again */
    if (cfg_load_buffer(&again, &doc2, "dump", dump, strlen(dump), NULL, 0, &err) != SIM_OK)
      __builtin_trap();
    (void)cfg_where(doc, "cluster.nodes");
    load_traces(&s, doc);
    cfg_free(&again, doc2);
    sim_free(dump);
    cfg_free(&s, doc);
  } else if (doc != NULL || err.msg[0] == '\0') {
    __builtin_trap(); /* a failure must leave nothing behind and say why */
  }
  sim_free(sets_copy);
  return 0;
}
