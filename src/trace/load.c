/* The scenario's workload.trace.* keys -> trace files -> a matched set.
 *
 * Paths are relative to the folder of the scenario file that set the key
 * (a --set or default value: the working directory), so a scenario and its
 * traces move together. Each distinct file is read and parsed once, whatever
 * number of ranks run it. Every error is SIM_ECONFIG at the key, before any
 * simulation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trc_internal.h"

enum { TRC_FILE_MAX_MB = 1024 }; /* a trace file read whole: at most 1 GiB */

/* Only a regular file is read: opening a pipe does not wait for a writer
 * (O_NONBLOCK; a FIFO blocked the run forever), and a pipe, device or
 * folder is refused before a byte is read. */
static int read_all(const char *path, uint8_t **buf, size_t *len, sim_error *err) {
  int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return sim_fail(err, SIM_EIO, "cannot open %s: %s", path, strerror(errno));
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return sim_fail(err, SIM_EIO, "cannot read %s: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return sim_fail(err, SIM_EIO, "%s is %s; allowed: a regular file (a Chakra trace)", path,
                    S_ISDIR(st.st_mode)    ? "a folder"
                    : S_ISFIFO(st.st_mode) ? "a pipe"
                    : S_ISCHR(st.st_mode)  ? "a character device"
                                           : "not a regular file");
  }
  FILE *f = fdopen(fd, "rb"); /* (a regular file never blocks: O_NONBLOCK stays) */
  if (!f) {
    close(fd);
    return sim_fail(err, SIM_EIO, "cannot open %s: %s", path, strerror(errno));
  }
  if ((uint64_t)st.st_size > (uint64_t)TRC_FILE_MAX_MB << 20) {
    fclose(f);
    return sim_fail(err, SIM_EIO, "%s: %lld bytes; allowed: at most %d MiB per trace file", path,
                    (long long)st.st_size, TRC_FILE_MAX_MB);
  }
  size_t n = (size_t)st.st_size;
  *buf = sim_malloc(n ? n : 1);
  *len = fread(*buf, 1, n, f);
  int bad = ferror(f);
  fclose(f);
  if (bad || *len != n) {
    sim_free(*buf);
    *buf = NULL;
    return sim_fail(err, SIM_EIO, "%s: read error", path);
  }
  return SIM_OK;
}

/* "%d" -> rank; any other '%' is refused. */
static int expand(char *out, size_t cap, const char *pattern, uint32_t rank) {
  size_t o = 0;
  for (const char *p = pattern; *p; p++) {
    if (*p == '%') {
      if (p[1] != 'd') return -1;
      o += (size_t)snprintf(out + o, o < cap ? cap - o : 0, "%u", rank);
      p++;
    } else if (o + 1 < cap) {
      out[o++] = *p;
    }
    if (o >= cap) return -1;
  }
  out[o < cap ? o : cap - 1] = '\0';
  return 0;
}

typedef struct file_list {
  char **paths;
  uint32_t n;
  size_t cap;
} file_list;

static uint32_t file_index(file_list *fl, const char *path) {
  for (uint32_t i = 0; i < fl->n; i++)
    if (!strcmp(fl->paths[i], path)) return i;
  sim_grow((void **)&fl->paths, &fl->cap, (size_t)fl->n + 1, sizeof *fl->paths);
  fl->paths[fl->n] = sim_strdup(path);
  return fl->n++;
}

/* workload.trace.classes: FIRST-LAST:FILE items covering 0..nranks-1 once. */
static int parse_classes(file_list *fl, uint32_t *rank_trace, uint32_t nranks,
                         const cfg_scenario *cfg, const cfg_doc *doc, sim_error *err) {
  const char *key = "workload.trace.classes", *p = cfg->workload.trace.classes;
  for (uint32_t r = 0; r < nranks; r++) rank_trace[r] = UINT32_MAX;
  while (*p) {
    char *end;
    unsigned long a = strtoul(p, &end, 10), b = a;
    if (end == p) goto bad;
    if (*end == '-') {
      const char *q = end + 1;
      b = strtoul(q, &end, 10);
      if (end == q) goto bad;
    }
    if (*end != ':' || end[1] == ',' || !end[1]) goto bad;
    const char *file = end + 1;
    size_t flen = strcspn(file, ",");
    if (a > b || b >= nranks)
      return cfg_fail_at(doc, key, err,
                         "ranks %lu-%lu outside the job's 0..%u "
                         "(workload.trace.ranks)",
                         a, b, nranks - 1);
    char rel[2048], path[4096];
    snprintf(rel, sizeof rel, "%.*s", (int)flen, file);
    cfg_path_at(path, sizeof path, doc, key, rel);
    uint32_t k = file_index(fl, path);
    for (unsigned long r = a; r <= b; r++) {
      if (rank_trace[r] != UINT32_MAX)
        return cfg_fail_at(doc, key, err, "rank %lu is in two classes; allowed: each rank once", r);
      rank_trace[r] = k;
    }
    p = file + flen;
    if (*p == ',') p++;
  }
  for (uint32_t r = 0; r < nranks; r++)
    if (rank_trace[r] == UINT32_MAX)
      return cfg_fail_at(doc, key, err,
                         "rank %u is in no class: the rank is missing; allowed: "
                         "classes covering every rank 0..%u once",
                         r, nranks - 1);
  return SIM_OK;
bad:
  return cfg_fail_at(doc, key, err,
                     "'%s' is not a list of FIRST-LAST:FILE items; allowed: e.g. "
                     "0-3:a.et,4-7:b.et, or none",
                     cfg->workload.trace.classes);
}

int trc_load(trc_set **out, const cfg_scenario *cfg, const cfg_doc *doc, uint32_t gpus,
             sim_error *err) {
  *out = NULL;
  uint32_t nranks = cfg->workload.trace.ranks ? cfg->workload.trace.ranks : gpus;
  bool by_class = strcmp(cfg->workload.trace.classes, "none") != 0;
  const char *key = by_class ? "workload.trace.classes" : "workload.trace.path";
  file_list fl = {0};
  trc_trace *traces = NULL;
  uint32_t *rank_trace = sim_malloc((nranks ? nranks : 1) * sizeof *rank_trace);
  int rc = SIM_OK;
  if (nranks > gpus) {
    bool job = cfg->jobs.n > 0; /* a job of a jobs: list: gpus are the job's */
    rc = cfg_fail_at(doc, "workload.trace.ranks", err,
                     "%u ranks but the %s has %u GPUs (rank r runs on %s); allowed: 1..%u, "
                     "or 0 for all",
                     nranks, job ? "job" : "cluster", gpus, job ? "the job's r-th GPU" : "GPU r",
                     gpus);
    goto done;
  }
  if (by_class) {
    if ((rc = parse_classes(&fl, rank_trace, nranks, cfg, doc, err)) != SIM_OK) goto done;
  } else {
    const char *pat = cfg->workload.trace.path;
    if (!strcmp(pat, "none")) {
      rc = cfg_fail_at(doc, "workload.kind", err,
                       "trace needs workload.trace.path (or "
                       "workload.trace.classes): the Chakra ET files to run");
      goto done;
    }
    for (uint32_t r = 0; r < nranks; r++) {
      char rel[4096], path[4096];
      if (expand(rel, sizeof rel, pat, r) != 0) {
        rc = cfg_fail_at(doc, key, err,
                         "'%s': only %%d (the rank) may follow a %%; allowed: a "
                         "path, with %%d where the rank goes",
                         pat);
        goto done;
      }
      cfg_path_at(path, sizeof path, doc, key, rel);
      rank_trace[r] = file_index(&fl, path);
    }
  }
  traces = sim_calloc(fl.n ? fl.n : 1, sizeof *traces);
  for (uint32_t k = 0; k < fl.n; k++) {
    uint8_t *buf = NULL;
    size_t len = 0;
    sim_error e = {0};
    uint32_t r0 = 0;
    while (rank_trace[r0] != k) r0++;
    rc = read_all(fl.paths[k], &buf, &len, &e);
    if (rc == SIM_OK) rc = trc_parse(&traces[k], fl.paths[k], buf, len, &e);
    sim_free(buf);
    if (rc != SIM_OK) {
      char msg[sizeof e.msg];
      snprintf(msg, sizeof msg, "%s", e.msg);
      if (rc == SIM_EIO && !by_class)
        rc = cfg_fail_at(doc, key, err,
                         "rank %u: %s (the job has %u ranks, one file each: "
                         "workload.trace.ranks)",
                         r0, msg, nranks);
      else rc = cfg_fail_at(doc, key, err, "rank %u: %s", r0, msg);
      goto done;
    }
  }
  trc_set *s;
  sim_error e = {0};
  rc = trc_set_create(&s, traces, fl.n, rank_trace, nranks, &e);
  traces = NULL; /* moved */
  if (rc != SIM_OK) {
    char msg[sizeof e.msg];
    snprintf(msg, sizeof msg, "%s", e.msg);
    rc = cfg_fail_at(doc, key, err, "%s", msg);
    goto done;
  }
  *out = s;
done:
  if (traces)
    for (uint32_t k = 0; k < fl.n; k++) trc_trace_free(&traces[k]);
  sim_free(traces);
  for (uint32_t k = 0; k < fl.n; k++) sim_free(fl.paths[k]);
  sim_free(fl.paths);
  sim_free(rank_trace);
  return rc;
}
