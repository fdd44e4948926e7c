/* What NCCL_ALGO and NCCL_PROTO left NCCL, as scenario keys
 * (include/fabsim/calib.h, cal_run_env_sets). NCCL's parseList (graph/
 * tuning.cc): the value is a list of names, or ';'-separated sections
 * "function:list" where a section without a function applies to all; a
 * leading '^' excludes the list's names instead of keeping only them.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fabsim/calib.h"

enum { NALGO = 7, NPROTO = 3 };
static const char *const algo_names[NALGO] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
/* fabsim's algorithm for each (NULL: not modelled) */
static const char *const algo_fabsim[NALGO] = {"tree", "ring",     "collnet", "collnet",
                                               "nvls", "nvlstree", NULL};
static const char *const proto_names[NPROTO] = {"LL", "LL128", "Simple"};
static const char *const proto_fabsim[NPROTO] = {"ll", "ll128", "simple"};
enum { A_COLLNET = (1u << 2) | (1u << 3), A_NVLS = (1u << 4) | (1u << 5) };

static const char *trim(const char *s, size_t *n) {
  while (*n && (*s == ' ' || *s == '\t')) s++, (*n)--;
  while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t')) (*n)--;
  return s;
}

static int index_of(const char *const *names, int nnames, const char *s, size_t n) {
  for (int i = 0; i < nnames; i++)
    if (strlen(names[i]) == n && strncasecmp(names[i], s, n) == 0) return i;
  return -1;
}

/* The names of `value` left enabled for op, as a bit mask; false (and
 * the unknown name in bad) for a name not in names. */
static bool enabled(const char *value, cal_op op, const char *const *names, int nnames,
                    unsigned *mask, char *bad, size_t badcap) {
  unsigned all = (1u << nnames) - 1;
  *mask = all;
  for (const char *sec = value; *sec;) {
    const char *end = strchr(sec, ';');
    size_t n = end ? (size_t)(end - sec) : strlen(sec);
    const char *list = trim(sec, &n), *colon = memchr(list, ':', n);
    sec = end ? end + 1 : sec + strlen(sec);
    if (colon) {
      if (cal_op_parse(list, (size_t)(colon - list)) != op) continue;
      n -= (size_t)(colon + 1 - list);
      list = trim(colon + 1, &n);
    }
    bool neg = n && *list == '^';
    if (neg) list++, n--;
    unsigned m = 0;
    for (size_t i = 0; i < n;) {
      const char *comma = memchr(list + i, ',', n - i);
      size_t len = comma ? (size_t)(comma - (list + i)) : n - i;
      const char *item = trim(list + i, &len);
      i += (comma ? (size_t)(comma - (list + i)) : n - i) + 1;
      if (!len) continue;
      int k = index_of(names, nnames, item, len);
      if (k < 0) {
        snprintf(bad, badcap, "%.*s", (int)len, item);
        return false;
      }
      m |= 1u << k;
    }
    *mask = neg ? all & ~m : m;
  }
  return true;
}

static int count_bits(unsigned m) {
  int c = 0;
  for (; m; m &= m - 1) c++;
  return c;
}

/* The algorithm keys into sets; -1 on a bad name or PAT forced. */
static int algo_sets(const cal_run *r, char (*sets)[64], int cap, int n, sim_error *err) {
  unsigned m;
  char bad[64];
  if (!enabled(r->nccl_algo, r->op, algo_names, NALGO, &m, bad, sizeof bad))
    return sim_fail(err, SIM_ECONFIG,
                    "%s:%u: NCCL_ALGO '%s': unknown algorithm '%s'; allowed: Tree, Ring, "
                    "CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT",
                    r->name, r->nccl_algo_line, r->nccl_algo, bad),
           -1;
  if (r->op == CAL_OP_ALLTOALL || r->op == CAL_OP_SENDRECV) return n; /* point to point */
  unsigned modelled = m & ~(1u << 6);
  if (modelled == 0)
    return sim_fail(err, SIM_ECONFIG,
                    "%s:%u: NCCL_ALGO '%s' leaves %s only PAT, which fabsim does not model; "
                    "allowed: measurements with Tree, Ring, CollNet, NVLS or NVLSTree",
                    r->name, r->nccl_algo_line, r->nccl_algo, cal_op_name(r->op)),
           -1;
  int distinct = count_bits(modelled & ~A_COLLNET) + ((modelled & A_COLLNET) != 0);
  if (distinct == 1) {
    for (int k = 0; k < NALGO; k++)
      if (modelled & (1u << k)) {
        if (n < cap)
          snprintf(sets[n], sizeof sets[n], "workload.collective.algorithm=%s", algo_fabsim[k]);
        return n + 1;
      }
  }
  if (!(modelled & A_NVLS) && n < cap)
    snprintf(sets[n++], sizeof sets[0], "workload.collective.nvls=false");
  if (!(modelled & A_COLLNET) && n < cap) snprintf(sets[n++], sizeof sets[0], "fabric.sharp=false");
  return n;
}

int cal_run_env_sets(const cal_run *r, char (*sets)[64], int cap, sim_error *err) {
  int n = 0;
  if (r->nccl_algo[0] && (n = algo_sets(r, sets, cap, n, err)) < 0) return -1;
  if (!r->nccl_proto[0]) return n;
  unsigned m;
  char bad[64];
  if (!enabled(r->nccl_proto, r->op, proto_names, NPROTO, &m, bad, sizeof bad))
    return sim_fail(err, SIM_ECONFIG,
                    "%s:%u: NCCL_PROTO '%s': unknown protocol '%s'; allowed: LL, LL128, Simple",
                    r->name, r->nccl_proto_line, r->nccl_proto, bad),
           -1;
  if (count_bits(m) == 1 && r->op != CAL_OP_ALLTOALL && r->op != CAL_OP_SENDRECV)
    for (int k = 0; k < NPROTO; k++)
      if (m & (1u << k)) {
        if (n < cap)
          snprintf(sets[n], sizeof sets[n], "workload.collective.protocol=%s", proto_fabsim[k]);
        n++;
      }
  return n;
}
