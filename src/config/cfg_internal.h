/* Internals shared by the files of the config module (cfg__ prefix).
 *
 *   units.c     number grammar, unit tables, cfg_parse_* and canonical formatting
 *   schema.c    the key table, enum names, lookup and suggestions, text -> field
 *   load.c      YAML and --set walking, key locations, cfg_load*, cfg_fail_at
 *   validate.c  presets (derived defaults) and cross-key validation
 *   dump.c      cfg_dump, cfg_schema_markdown and the text builder they share
 */
#ifndef FABSIM_CFG_INTERNAL_H
#define FABSIM_CFG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "fabsim/config.h"

/* ---- text builder --------------------------------------------------------- */

/* Growable NUL-terminated text; p is NULL until the first append. Owned by
 * whoever holds it; release with sim_free(b.p) or hand p to the caller. */
typedef struct cfg__buf {
  char *p;
  size_t len, cap;
} cfg__buf;

void cfg__buf_puts(cfg__buf *b, const char *s);
void cfg__buf_printf(cfg__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Never NULL: an empty builder yields a freshly allocated "". */
char *cfg__buf_take(cfg__buf *b);

/* User text for a message: at most `max` visible characters, non-printable
 * bytes escaped as \xNN, "..." when cut. out has room for cap bytes. */
void cfg__excerpt(char *out, size_t cap, const char *text, size_t len, size_t max);
/* Text a string value may hold: no control character (C0 with NUL and tab,
 * DEL, C1 as UTF-8): names and paths are printed on terminals and into
 * events.csv, where one would act, not show. SIM_ECONFIG and the first one
 * in msg ("contains a control character ..."); SIM_OK otherwise. O(len). */
int cfg__check_text(const char *text, size_t len, char *msg, size_t cap);
/* *dst (owned, freed) becomes a NUL-terminated copy of text[0 .. len). */
void cfg__text_set(char **dst, const char *text, size_t len);

/* ---- units ---------------------------------------------------------------- */

/* The public unit parsers on text that need not be NUL-terminated; the
 * message (no location, no key) goes to msg. */
int cfg__parse_bandwidth_n(const char *text, size_t len, rate_bps *out, char *msg, size_t cap);
int cfg__parse_time_n(const char *text, size_t len, simtime_ps *out, char *msg, size_t cap);
int cfg__parse_size_n(const char *text, size_t len, uint64_t *out, char *msg, size_t cap);

/* Canonical text with a unit that parses back to exactly v (at most three
 * decimals; the unit that reads shortest). out needs CFG__VALUE_TEXT bytes. */
enum { CFG__VALUE_TEXT = 48 };
void cfg__format_bandwidth(char *out, size_t cap, rate_bps v, int bytes_family);
void cfg__format_time(char *out, size_t cap, simtime_ps v);
void cfg__format_size(char *out, size_t cap, uint64_t v);
/* Shortest decimal text that strtod reads back as exactly v. */
void cfg__format_double(char *out, size_t cap, double v);

/* Strict number grammar shared by all numeric types: digits, optional
 * fraction, optional exponent; no sign, no hex, no inf/nan. Returns the
 * number of bytes consumed (0: no number at the start of text). */
size_t cfg__scan_number(const char *text, size_t len);

/* ---- schema --------------------------------------------------------------- */

typedef enum {
  CFG__UINT,      /* uint32_t or uint64_t field (width), range [min, max] */
  CFG__DOUBLE,    /* double, >= dmin (or > dmin when dmin_exclusive) */
  CFG__BANDWIDTH, /* rate_bps, >= min */
  CFG__TIME,      /* simtime_ps, >= min */
  CFG__SIZE,      /* uint64_t bytes, >= min */
  CFG__BOOL,
  CFG__STRING, /* char * owned by the scenario, never empty */
  CFG__ENUM,   /* C enum (int-sized), names[] indexed by value */
  CFG__LIST,   /* cfg_u64_list, each item in [min, max], at most CFG__LIST_MAX */
  CFG__FAULTS, /* cfg_fault_list (faults.c); YAML: a list of mappings */
  CFG__JOBS,   /* cfg_job_list (jobs.c); YAML: a list of mappings */
  CFG__CLASSES /* cfg_class_table (classes.c); YAML: a list of at most 8 mappings */
} cfg__type;

enum { CFG__LIST_MAX = 1024 };
/* A derived time key written as `auto`: resolved like an unset one. */
#define CFG__TIME_AUTO UINT64_MAX

/* How a key without an explicit value gets one, beyond `def`. */
typedef enum {
  CFG__DERIVE_NONE,      /* def always set */
  CFG__DERIVE_GPU,       /* by_value[cluster.gpu] */
  CFG__DERIVE_TRANSPORT, /* by_value[fabric.transport] */
  CFG__DERIVE_COST,      /* by_value[cost.model] */
  CFG__DERIVE_RATES,     /* by_value[reliability.rates] */
  CFG__DERIVE_RULE       /* a rule in validate.c; def_doc describes it */
} cfg__derive;

typedef struct cfg__key {
  const char *name; /* dotted, the contract with users */
  cfg__type type;
  const char *def; /* default as scenario text; NULL when derived */
  cfg__derive derive;
  const char *const *by_value; /* derived texts indexed by the controlling enum */
  const char *def_doc;         /* default column for DERIVE_RULE */
  uint64_t min, max;           /* UINT: range; BANDWIDTH/TIME/SIZE: min only */
  double dmin;                 /* DOUBLE */
  int dmin_exclusive;
  const char *const *names; /* ENUM */
  int nnames;
  int bytes_family;     /* BANDWIDTH: print as bytes/s (memory, NVLink, PCIe) */
  const char *doc;      /* one line */
  size_t offset, width; /* into cfg_scenario */
  int quiet;            /* cfg_dump writes it only when not at its default, so that
                           scenarios that never use it dump as before */
} cfg__key;

size_t cfg__nkeys(void);
const cfg__key *cfg__key_at(size_t i);
/* The enum key whose value indexes by_value for keys derived by it (cluster.gpu
 * for CFG__DERIVE_GPU, ...), or NULL (NONE, RULE). O(keys). */
const cfg__key *cfg__preset_selector(cfg__derive d);
/* Index of a leaf key, or -1. Not NUL-terminated input is fine. */
int cfg__find_key(const char *name, size_t len);
/* True when name (not a leaf) is a proper prefix section such as "cluster.nic". */
int cfg__is_section(const char *name, size_t len);
/* Closest leaf or section to an unknown name, or NULL when none is close. */
const char *cfg__suggest(const char *name, size_t len);

/* The fields of a list entry (jobs:, fabric.classes): the index of name in
 * names[0..n), or -1; and the message for a name that is none of them, with
 * a did-you-mean within two edits, else the allowed list ("'x' is not a
 * job field; allowed ..."). */
int cfg__field_find(const char *const *names, int n, const char *name, size_t len);
void cfg__field_unknown(const char *const *names, int n, const char *what, const char *allowed,
                        const char *name, size_t len, char *msg, size_t cap);
/* Parse text into key i of s. On failure returns SIM_ECONFIG and writes a
 * message without location or key into msg (cap bytes). Text need not be
 * NUL-terminated; embedded NULs are rejected. Replaces (and frees) a
 * previous string value. */
int cfg__set_text(cfg_scenario *s, size_t i, const char *text, size_t len, char *msg, size_t cap);
/* A list key's items: parse one item's text (message as cfg__set_text), and
 * replace the whole list with n values (copied). */
int cfg__parse_list_item(size_t i, const char *text, size_t len, uint64_t *out, char *msg,
                         size_t cap);
void cfg__set_list(cfg_scenario *s, size_t i, const uint64_t *v, uint32_t n);
/* Key i of s holds its default (defined for the quiet keys: cfg__key.quiet). */
bool cfg__at_default(const cfg_scenario *s, size_t i);
/* Type and range of key i for messages and docs ("integer 1..72"). */
void cfg__describe_type(const cfg__key *k, char *out, size_t cap);
/* Appends the value of key i of s as canonical scenario text (units, enum
 * names, strings double-quoted) that cfg__set_text reads back exactly. */
void cfg__value_text(const cfg_scenario *s, size_t i, cfg__buf *b);

/* A YAML double-quoted scalar that reads back to the same bytes. */
void cfg__quote_yaml(cfg__buf *b, const char *str);

/* ---- faults (faults.c) ---------------------------------------------------- */

/* The fields of one `faults:` entry, in the order messages and docs list them. */
enum {
  CFG__FF_AT,
  CFG__FF_KIND,
  CFG__FF_TARGET,
  CFG__FF_FACTOR,
  CFG__FF_BER,
  CFG__FF_DURATION,
  CFG__FF_PERIOD,
  CFG__FF_COUNT,
  CFG__FF_N
};
enum { CFG__FAULTS_MAX = 4096 };
const char *cfg__fault_field_name(int field);
int cfg__fault_field_find(const char *name, size_t len); /* CFG__FF_* or -1 */
/* Message for a field name that is none of ours, with a did-you-mean. */
void cfg__fault_unknown_field(const char *name, size_t len, char *msg, size_t cap);
/* Parse one field's text into f (message as cfg__set_text). */
int cfg__fault_set_field(cfg_fault *f, int field, const char *text, size_t len, char *msg,
                         size_t cap);
/* Once an entry is read: fields the kind does not use, missing required
 * ones, flap timing. On failure *field is the field at fault. Fills defaults
 * (flap count 1). */
int cfg__fault_check(cfg_fault *f, const uint8_t have[CFG__FF_N], int *field, char *msg,
                     size_t cap);
/* The list as one flow-style YAML line that loads back to the same list. */
void cfg__faults_text(const cfg_fault_list *l, cfg__buf *b);
void cfg__faults_free(cfg_fault_list *l);
/* Markdown tables of the entry fields and kinds (docs/scenario.md). */
void cfg__faults_markdown(cfg__buf *b);

/* ---- traffic classes (classes.c, load_classes.c) ---------------------------- */

/* The fields of one `fabric.classes` entry, in the order messages and docs
 * list them; cfg_tclass.given has bit (field - 1) for each field but id. */
enum {
  CFG__CF_ID,
  CFG__CF_NAME,
  CFG__CF_PRIORITY,
  CFG__CF_WEIGHT,
  CFG__CF_LOSSLESS,
  CFG__CF_ECN_KMIN,
  CFG__CF_ECN_KMAX,
  CFG__CF_ECN_PMAX,
  CFG__CF_BUFFER,
  CFG__CF_N
};
enum { CFG__CLASS_WEIGHT_MAX = 1000 };
const char *cfg__class_field_name(int field);
int cfg__class_field_find(const char *name, size_t len); /* CFG__CF_* or -1 */
void cfg__class_unknown_field(const char *name, size_t len, char *msg, size_t cap);
/* A listed entry before its fields: level 0, weight 1, the whole buffer. */
void cfg__class_init(cfg_tclass *c, uint32_t id);
/* Parse one field's text into c (CFG__CF_ID into *id); message as cfg__set_text. */
int cfg__class_set_field(cfg_tclass *c, uint32_t *id, int field, const char *text, size_t len,
                         char *msg, size_t cap);
bool cfg__class_given(const cfg_tclass *c, int field);
/* Once the presets are applied: every class's defaults (unlisted classes
 * as before; lossless by transport, ECN by fabric.ecn.*), then the checks
 * no single field can make (a lossy class on InfiniBand, kmin above kmax);
 * on failure *bad_class is the list position and *bad_field the field. */
int cfg__classes_resolve(cfg_scenario *s, int *bad_class, int *bad_field, char *msg, size_t cap);
void cfg__classes_free(cfg_class_table *t);
/* The listed classes as one flow-style YAML line that loads back to the same table. */
void cfg__classes_text(const cfg_class_table *t, cfg__buf *b);
/* Markdown table of the entry fields (docs/scenario.md). */
void cfg__classes_markdown(cfg__buf *b);

/* ---- workloads and jobs (schema.c, jobs.c) -------------------------------- */

/* Key i is a workload.* key: a job's workload takes it. */
bool cfg__is_workload_key(size_t i);
/* Key i is another kind's own section (workload.inference.* unless the kind
 * is inference): the written scenario leaves it out, as the key does nothing. */
bool cfg__other_kinds_key(cfg_workload_kind kind, size_t i);
/* cfg__set_text into a job's workload (key i a workload.* key). */
int cfg__set_workload_text(cfg_workload *w, size_t i, const char *text, size_t len, char *msg,
                           size_t cap);
/* A job's workload's keys as flow-style YAML pairs without the braces
 * ("kind: collective, collective.op: allreduce, ..."), every key but
 * traffic_class: a job's class is the job's own field (jobs[j].traffic_class),
 * which load refuses inside its workload. */
void cfg__workload_text(const cfg_workload *w, cfg__buf *b);
void cfg__workload_free(cfg_workload *w); /* its owned strings and lists */

/* The fields of one `jobs:` entry, in the order messages and docs list them. */
enum {
  CFG__JF_NAME,
  CFG__JF_GPUS,
  CFG__JF_PLACEMENT,
  CFG__JF_NODES,
  CFG__JF_START,
  CFG__JF_TRAFFIC_CLASS,
  CFG__JF_WORKLOAD,
  CFG__JF_N
};
enum { CFG__JOBS_MAX = 1024 };
const char *cfg__job_field_name(int field);
int cfg__job_field_find(const char *name, size_t len); /* CFG__JF_* or -1 */
void cfg__job_unknown_field(const char *name, size_t len, char *msg, size_t cap);
/* An entry at `index` with its workload at the schema's defaults. */
int cfg__job_init(cfg_job *j, uint32_t index, char *msg, size_t cap);
/* Parse one scalar field's text (name, gpus, placement, start). */
int cfg__job_set_field(cfg_job *j, int field, const char *text, size_t len, char *msg, size_t cap);
/* Once an entry is read: required fields, the workload kinds jobs run,
 * placement explicit with nodes. On failure *field is the field at fault. */
int cfg__job_check(const cfg_job *j, const uint8_t have[CFG__JF_N], int *field, char *msg,
                   size_t cap);
void cfg__job_free(cfg_job *j);
void cfg__jobs_free(cfg_job_list *l);
/* The list as one flow-style YAML line that loads back to the same list. */
void cfg__jobs_text(const cfg_job_list *l, cfg__buf *b);

/* ---- loading and validation ----------------------------------------------- */

/* Limits on what is read, so no input can take unbounded time or memory.
 * The deepest valid scenario nests 4 containers (the top mapping, a
 * section, its subsection, a key's list); the largest holds 4,096 faults
 * and lists of 1,024 items, well under 1 MiB. */
enum {
  CFG__YAML_DEPTH_USED = 4,
  CFG__YAML_DEPTH_MAX = 16,        /* 4x the deepest valid scenario */
  CFG__FILE_MAX = 4 * 1024 * 1024, /* bytes of a scenario file (or one --set value) */
  CFG__DAYS_MAX = 3650             /* reliability.days: ten years (validate.c) */
};
/* The horizon of simulated time every derived time stays below (validate.c:
 * fault schedules): 2^62 ps, 53.4 days, the workload's WL_HORIZON_PS, so
 * the sum of two such times never wraps a simtime_ps. */
#define CFG__HORIZON_PS ((simtime_ps)1 << 62)
/* The whole of a file fabsim reads as input (`what`: "a scenario"): a
 * regular file only (a folder, device, pipe or socket is refused without
 * reading), at most CFG__FILE_MAX bytes. *buf (sim_free) gets the bytes.
 * Errors are SIM_EIO (the file, not its text): "PATH: what is wrong; what
 * is allowed". */
int cfg__read_file(const char *path, const char *what, char **buf, size_t *len, sim_error *err);

/* True when key i got a value from the file or a --set. */
int cfg__is_set(const cfg_doc *doc, size_t i);
/* Fills every unset derived key, then checks what no single key can
 * (divisibility, combinations). Errors are located at the key at fault. */
int cfg__resolve(cfg_scenario *s, const cfg_doc *doc, sim_error *err);

#endif
