/* Internals of loading shared by load.c and load_jobs.c: the document's
 * key locations and the YAML walker's state. */
#ifndef FABSIM_CFG_LOAD_INTERNAL_H
#define FABSIM_CFG_LOAD_INTERNAL_H

#include <yaml.h>

#include "config/cfg_internal.h"

enum { ORIGIN_DEFAULT, ORIGIN_FILE, ORIGIN_SET };

typedef struct cfg__slot {
  cfg_loc loc;    /* file points at doc->file or the literal "--set" */
  uint8_t origin; /* ORIGIN_* */
} cfg__slot;

/* Where each field of one `faults:` entry was written (line 0: not given). */
typedef struct cfg__fault_loc {
  cfg_loc entry;
  cfg_loc field[CFG__FF_N];
} cfg__fault_loc;

/* Where each field of one `jobs:` entry was written (line 0: not given),
 * and each key of its workload (wl_key: schema indices). */
typedef struct cfg__job_loc {
  cfg_loc entry;
  cfg_loc field[CFG__JF_N];
  uint32_t *wl_key; /* owned */
  cfg_loc *wl_loc;  /* owned */
  uint32_t nwl;
} cfg__job_loc;

/* Where each field of one `fabric.classes` entry was written (line 0: not
 * given), and the class id it listed. */
typedef struct cfg__class_loc {
  cfg_loc entry;
  cfg_loc field[CFG__CF_N];
  uint32_t id;
} cfg__class_loc;

struct cfg_doc {
  char *file;           /* label of the scenario source, owned */
  cfg__fault_loc *floc; /* per entry of the faults list in effect, owned */
  uint32_t nfloc;
  cfg__job_loc *jloc; /* per entry of the jobs list in effect, owned */
  uint32_t njloc;
  cfg__class_loc cloc[CFG_CLASSES]; /* per entry of fabric.classes in effect */
  uint32_t ncloc;
  uint32_t scope; /* 0, or 1 + the job whose workload workload.* keys name (cfg_doc_scope_job) */
  size_t nkeys;
  cfg__slot slot[]; /* one per schema key, same order */
};

extern const char cfg__set_label[];

/* Where values are being read from. For --set, line is the 1-based index of
 * the argument and col0 the 1-based column of the value in "key=value". */
typedef struct loader {
  cfg_scenario *s;
  cfg_doc *doc;
  const char *label;
  const char *buf; /* the text being parsed, for reader-error offsets */
  size_t len;
  uint32_t set_index; /* 0 while reading the file */
  uint32_t col0;
  sim_error *err;
  yaml_document_t *ydoc;
  bool job_sets; /* a --set jobs[J].FIELD was applied: cfg__jobs_check_sets checks */
} loader;

/* "label:line:col: [key: ]message" -> SIM_ECONFIG */
int cfg__fail_loc(loader *ld, cfg_loc l, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
cfg_loc cfg__loc_of(const loader *ld, yaml_mark_t m);
int cfg__yaml_is_null(const yaml_node_t *n);
const char *cfg__yaml_kind_name(const yaml_node_t *n); /* "a mapping", "a list", "a value" */
/* The jobs list from a YAML sequence of mappings (load_jobs.c); replaces the
 * list and its locations only when every entry is valid. */
int cfg__set_jobs(loader *ld, int i, const char *key, const yaml_node_t *v);
void cfg__job_locs_free(cfg_doc *doc);
/* --set jobs[J].FIELD=VALUE (FIELD: a job's field but workload, or
 * workload.KEY): entry J of the list in effect takes the value (kl: the
 * key's location), which is located at the --set; J past the list is
 * refused there. The entry's own checks (cfg__job_check: placement explicit
 * with nodes, ...) and unique names wait for every --set:
 * cfg__jobs_check_sets. */
int cfg__set_job_key(loader *ld, const char *key, cfg_loc kl, const yaml_node_t *v);
int cfg__jobs_check_sets(loader *ld);
/* fabric.classes from a YAML sequence of mappings (load_classes.c);
 * replaces the table and its locations only when every entry is valid. */
int cfg__set_classes(loader *ld, int i, const char *key, const yaml_node_t *v);
/* "fabric.classes[2]" or "fabric.classes[2].lossless": where that entry or
 * field was written (a field not given: its entry). 0 when key names none. */
int cfg__class_where(const cfg_doc *doc, const char *key, cfg_loc *out);
/* "jobs[3]", "jobs[3].gpus" or "jobs[3].workload.collective.op": where
 * that entry, field or workload key was written (a key not given: its
 * workload mapping, else the entry). 0 when key names no job. */
int cfg__job_where(const cfg_doc *doc, const char *key, cfg_loc *out);
/* Once the presets are applied: each job's derived workload keys it did not
 * give (e.g. workload.compute_efficiency by cluster.gpu) take the
 * scenario's resolved value, as the top-level workload's do. */
void cfg__jobs_presets(cfg_scenario *s, const cfg_doc *doc);

#endif
