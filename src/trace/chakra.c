/* Reading and writing one Chakra ET file (fabsim/trace.h).
 *
 * The stream framing (a varint length before each message) is read here;
 * each message is decoded by the protobuf-c code generated from
 * proto/chakra_et.proto. Every length is checked against the bytes left
 * before anything is decoded, so a truncated or corrupt file is an error
 * naming the byte offset, never a read past the buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra_et.pb-c.h"
#include "trace/trc_internal.h"

const char *trc_comm_type_name(int comm_type) {
  static const char *const names[] = {
      "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
      "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};
  return comm_type >= 0 && comm_type <= TRC_BARRIER ? names[comm_type] : "unknown";
}

/* A base-128 varint at data[*pos]: 0 and *pos past it; -1 the bytes end
 * inside it; -2 longer than 10 bytes or over 64 bits. */
int trc__varint(const uint8_t *data, size_t len, size_t *pos, uint64_t *v) {
  uint64_t x = 0;
  for (unsigned i = 0; i < 10; i++) {
    if (*pos + i >= len) return -1;
    uint8_t b = data[*pos + i];
    if (i == 9 && b > 1) return -2;
    x |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *pos += i + 1;
      *v = x;
      return 0;
    }
  }
  return -2;
}

/* The length prefix at *pos and the message it frames: on success *msg and
 * *mlen, *pos past the message. */
static int frame(const char *name, const uint8_t *data, size_t len, size_t *pos, const char *what,
                 const uint8_t **msg, size_t *mlen, sim_error *err) {
  size_t at = *pos;
  uint64_t n;
  int rc = trc__varint(data, len, pos, &n);
  if (rc == -1)
    return sim_fail(err, SIM_EINVAL,
                    "%s: byte %zu: truncated: the file ends inside the length "
                    "of the %s",
                    name, at, what);
  if (rc == -2)
    return sim_fail(err, SIM_EINVAL,
                    "%s: byte %zu: bad length of the %s: a varint longer "
                    "than 10 bytes (not a Chakra ET stream?)",
                    name, at, what);
  if (n > len - *pos)
    return sim_fail(err, SIM_EINVAL,
                    "%s: byte %zu: truncated: the %s needs %llu bytes, the "
                    "file has %zu left",
                    name, at, what, (unsigned long long)n, len - *pos);
  *msg = data + *pos;
  *mlen = (size_t)n;
  *pos += (size_t)n;
  return SIM_OK;
}

/* An integer-valued attribute, whichever integer field holds it. */
static bool attr_int(const ChakraProtoMsg__AttributeProto *a, int64_t *v, bool *too_big) {
  *too_big = false;
  switch (a->value_case) {
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: *v = a->int32_val; return true;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: *v = a->int64_val; return true;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *v = a->uint32_val; return true;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: *v = a->sint32_val; return true;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: *v = a->sint64_val; return true;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
    if (a->uint64_val > (uint64_t)INT64_MAX) *too_big = true;
    *v = (int64_t)(a->uint64_val & (uint64_t)INT64_MAX);
    return true;
  default: return false;
  }
}

static uint32_t intern_pg(trc_trace *t, size_t *cap, const char *s) {
  for (uint32_t i = 0; i < t->npg; i++)
    if (strcmp(t->pg_names[i], s) == 0) return i;
  sim_grow((void **)&t->pg_names, cap, t->npg + 1, sizeof *t->pg_names);
  t->pg_names[t->npg] = sim_strdup(s);
  return t->npg++;
}

typedef struct node_ctx {
  const char *file;
  size_t at;
  uint64_t id;
} node_ctx;

#define NODE_FAIL(c, ...) node_fail(c, err, __VA_ARGS__)
static int node_fail(const node_ctx *c, sim_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int node_fail(const node_ctx *c, sim_error *err, const char *fmt, ...) {
  char what[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return sim_fail(err, SIM_EINVAL, "%s: byte %zu, node %llu: %s", c->file, c->at,
                  (unsigned long long)c->id, what);
}

/* The attributes fabsim reads (names as Chakra's feeder reads them). */
static int node_attrs(trc_node *x, const ChakraProtoMsg__Node *m, trc_trace *t, size_t *pgcap,
                      const node_ctx *c, sim_error *err) {
  bool have_type = false, have_size = false, have_peer = false;
  for (size_t i = 0; i < m->n_attr; i++) /* a host op is no collective nor transfer */
    if (m->attr[i]->name && !strcmp(m->attr[i]->name, "is_cpu_op") &&
        m->attr[i]->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL &&
        m->attr[i]->bool_val && x->kind != TRC_OTHER)
      x->kind = TRC_HOST;
  for (size_t i = 0; i < m->n_attr; i++) {
    const ChakraProtoMsg__AttributeProto *a = m->attr[i];
    const char *nm = a->name ? a->name : "";
    int64_t v = 0;
    bool big = false, isint = attr_int(a, &v, &big);
    bool want_int = !strcmp(nm, "comm_type") || !strcmp(nm, "comm_size") ||
                    !strcmp(nm, "num_ops") || !strcmp(nm, "tensor_size") ||
                    (x->kind == TRC_SEND && !strcmp(nm, "comm_dst")) ||
                    (x->kind == TRC_RECV && !strcmp(nm, "comm_src")) || !strcmp(nm, "comm_tag");
    if (want_int && !isint)
      return NODE_FAIL(c, "attribute %s is not an integer (value field %d)", nm,
                       (int)a->value_case);
    if (want_int && (big || v < 0))
      return NODE_FAIL(c, "attribute %s is negative or over 2^63", nm);
    if (!strcmp(nm, "comm_type")) x->comm_type = (int)(v > 1000 ? 1000 : v), have_type = true;
    else if (!strcmp(nm, "comm_size")) x->bytes = (uint64_t)v, have_size = true;
    else if (!strcmp(nm, "num_ops")) x->num_ops = (uint64_t)v;
    else if (!strcmp(nm, "tensor_size")) x->tensor_size = (uint64_t)v;
    else if (!strcmp(nm, "comm_tag")) x->tag = v;
    else if ((x->kind == TRC_SEND && !strcmp(nm, "comm_dst")) ||
             (x->kind == TRC_RECV && !strcmp(nm, "comm_src")))
      x->peer = v, have_peer = true;
    else if (!strcmp(nm, "pg_name")) {
      if (a->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
        return NODE_FAIL(c, "attribute pg_name is not a string");
      /* an empty pg_name is no pg_name: the default group, every rank */
      if (x->kind == TRC_COLL)
        x->pg = a->string_val[0] ? intern_pg(t, pgcap, a->string_val) : TRC_NO_GROUP;
    }
  }
  if (x->kind == TRC_COLL) {
    if (!have_type) return NODE_FAIL(c, "a collective without comm_type");
    if (x->comm_type > TRC_BARRIER)
      return NODE_FAIL(c, "comm_type %d is not a Chakra CollectiveCommType (0..9)", x->comm_type);
    if (!have_size && x->comm_type != TRC_BARRIER)
      return NODE_FAIL(c, "a %s collective without comm_size", trc_comm_type_name(x->comm_type));
  }
  if (x->kind == TRC_SEND || x->kind == TRC_RECV) {
    if (!have_size)
      return NODE_FAIL(c, "a %s without comm_size", x->kind == TRC_SEND ? "send" : "recv");
    if (!have_peer)
      return NODE_FAIL(c, "a %s without %s", x->kind == TRC_SEND ? "send" : "recv",
                       x->kind == TRC_SEND ? "comm_dst" : "comm_src");
  }
  return SIM_OK;
}

static int node_kind(int type, trc_kind *k) {
  switch (type) {
  case CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE: *k = TRC_COMPUTE; return 0;
  case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE: *k = TRC_COLL; return 0;
  case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE: *k = TRC_SEND; return 0;
  case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE: *k = TRC_RECV; return 0;
  case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE:
  case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE: *k = TRC_MEM; return 0;
  case CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE:
  case CHAKRA_PROTO_MSG__NODE_TYPE__INVALID_NODE: *k = TRC_OTHER; return 0;
  default: return -1;
  }
}

/* Decode one Node message into t->nodes[t->n]; its dependency ids go to
 * *ids (grown), *nids of them. */
static int parse_node(trc_trace *t, size_t *pgcap, const uint8_t *msg, size_t mlen, size_t at,
                      const char *what, uint64_t **ids, size_t *idcap, size_t *nids,
                      sim_error *err) {
  node_ctx c = {t->name, at, 0};
  ChakraProtoMsg__Node *m = chakra_proto_msg__node__unpack(NULL, mlen, msg);
  if (!m)
    return sim_fail(err, SIM_EINVAL,
                    "%s: byte %zu: the %s is not a valid Chakra Node (corrupt "
                    "protobuf)",
                    t->name, at, what);
  int rc = SIM_OK;
  c.id = m->id;
  trc_node *x = &t->nodes[t->n];
  memset(x, 0, sizeof *x);
  x->id = m->id;
  x->offset = at;
  x->peer = -1;
  x->pg = TRC_NO_GROUP;
  x->duration_us = m->duration_micros;
  if (node_kind((int)m->type, &x->kind) != 0) {
    rc = NODE_FAIL(&c, "node type %d is not a Chakra NodeType (0..7)", (int)m->type);
    goto done;
  }
  if ((rc = node_attrs(x, m, t, pgcap, &c, err)) != SIM_OK) goto done;
  /* data_deps order the graph; ctrl_deps are read past, as Chakra's own
   * feeder does (src/feeder/et_feeder.cpp, readNode: data_deps only): in
   * PyTorch-derived traces they name the enclosing host op, which encloses
   * its children rather than preceding them, and is often not in the file */
  size_t nd = m->n_data_deps;
  if (nd > UINT32_MAX / 2) {
    rc = NODE_FAIL(&c, "%zu dependencies", nd);
    goto done;
  }
  sim_grow((void **)ids, idcap, *nids + nd, sizeof **ids);
  for (size_t i = 0; i < m->n_data_deps; i++) (*ids)[(*nids)++] = m->data_deps[i];
  x->ndeps = (uint32_t)nd;
  t->n++;
done:
  chakra_proto_msg__node__free_unpacked(m, NULL);
  return rc;
}

typedef struct id_index {
  uint64_t id;
  uint32_t i;
} id_index;

static int cmp_id(const void *a, const void *b) {
  const id_index *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}
static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Dependency ids -> node indices (sorted, duplicates merged); unknown ids
 * and duplicate node ids are errors. O((nodes + deps) log nodes). */
static int resolve_deps(trc_trace *t, const uint64_t *ids, sim_error *err) {
  int rc = SIM_OK;
  id_index *ix = sim_malloc((t->n ? t->n : 1) * sizeof *ix);
  for (uint32_t i = 0; i < t->n; i++) ix[i] = (id_index){t->nodes[i].id, i};
  qsort(ix, t->n, sizeof *ix, cmp_id);
  for (uint32_t i = 1; i < t->n; i++)
    if (ix[i].id == ix[i - 1].id) {
      const trc_node *a = &t->nodes[ix[i - 1].i], *b = &t->nodes[ix[i].i];
      rc = sim_fail(err, SIM_EINVAL,
                    "%s: byte %llu, node %llu: duplicate node id (also at byte "
                    "%llu)",
                    t->name, (unsigned long long)b->offset, (unsigned long long)b->id,
                    (unsigned long long)a->offset);
      goto done;
    }
  size_t total = 0;
  for (uint32_t i = 0; i < t->n; i++) total += t->nodes[i].ndeps;
  t->dep_pool = sim_malloc((total ? total : 1) * sizeof *t->dep_pool);
  size_t k = 0;
  for (uint32_t i = 0; i < t->n; i++) {
    trc_node *x = &t->nodes[i];
    uint32_t *d = t->dep_pool + k, nd = 0;
    for (uint32_t j = 0; j < x->ndeps; j++) {
      uint64_t want = ids[k + j];
      size_t lo = 0, hi = t->n;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ix[mid].id < want) lo = mid + 1;
        else hi = mid;
      }
      if (lo == t->n || ix[lo].id != want) {
        rc = sim_fail(err, SIM_EINVAL,
                      "%s: byte %llu, node %llu: depends on node %llu, which "
                      "the file does not hold",
                      t->name, (unsigned long long)x->offset, (unsigned long long)x->id,
                      (unsigned long long)want);
        goto done;
      }
      d[nd++] = ix[lo].i;
    }
    qsort(d, nd, sizeof *d, cmp_u32);
    uint32_t u = 0;
    for (uint32_t j = 0; j < nd; j++)
      if (u == 0 || d[u - 1] != d[j]) d[u++] = d[j];
    k += x->ndeps;
    x->deps = d;
    x->ndeps = u;
  }
done:
  sim_free(ix);
  return rc;
}

/* Children lists and a topological order (Kahn, ready nodes in file order);
 * a cycle is reported with the ids on it. O(nodes + deps). */
static int order_nodes(trc_trace *t, sim_error *err) {
  uint32_t n = t->n;
  int rc = SIM_OK;
  uint32_t *indeg = sim_calloc(n ? n : 1, sizeof *indeg);
  t->child_start = sim_calloc((size_t)n + 1, sizeof *t->child_start);
  size_t total = 0;
  for (uint32_t i = 0; i < n; i++) {
    indeg[i] = t->nodes[i].ndeps;
    total += indeg[i];
    for (uint32_t j = 0; j < t->nodes[i].ndeps; j++) t->child_start[t->nodes[i].deps[j] + 1]++;
  }
  for (uint32_t i = 0; i < n; i++) t->child_start[i + 1] += t->child_start[i];
  t->children = sim_malloc((total ? total : 1) * sizeof *t->children);
  uint32_t *fill = sim_malloc(((size_t)n + 1) * sizeof *fill);
  memcpy(fill, t->child_start, ((size_t)n + 1) * sizeof *fill);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < t->nodes[i].ndeps; j++) t->children[fill[t->nodes[i].deps[j]]++] = i;
  t->order = sim_malloc((n ? n : 1) * sizeof *t->order);
  uint32_t head = 0, tail = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!indeg[i]) t->order[tail++] = i;
  while (head < tail) {
    uint32_t u = t->order[head++];
    for (uint32_t c = t->child_start[u]; c < t->child_start[u + 1]; c++)
      if (--indeg[t->children[c]] == 0) t->order[tail++] = t->children[c];
  }
  if (tail < n) {
    uint32_t u = 0;
    while (!indeg[u]) u++;
    for (uint32_t step = 0; step < n;
         step++) { /* walk back along unfinished deps: into the cycle */
      const trc_node *x = &t->nodes[u];
      for (uint32_t j = 0; j < x->ndeps; j++)
        if (indeg[x->deps[j]]) {
          u = x->deps[j];
          break;
        }
    }
    char ids[256];
    size_t used = 0;
    uint32_t v = u;
    for (int k = 0; k < 8; k++) {
      used += (size_t)snprintf(ids + used, sizeof ids - used, "%s%llu", k ? " <- " : "",
                               (unsigned long long)t->nodes[v].id);
      const trc_node *x = &t->nodes[v];
      for (uint32_t j = 0; j < x->ndeps; j++)
        if (indeg[x->deps[j]]) {
          v = x->deps[j];
          break;
        }
      if (v == u || used >= sizeof ids - 32) break;
    }
    rc =
        sim_fail(err, SIM_EINVAL,
                 "%s: byte %llu, node %llu: dependency cycle (%s%s); %u of "
                 "%u nodes can never start",
                 t->name, (unsigned long long)t->nodes[u].offset,
                 (unsigned long long)t->nodes[u].id, ids, v == u ? " <- ..." : " ...", n - tail, n);
  }
  sim_free(fill);
  sim_free(indeg);
  return rc;
}

/* Each collective's call number within its group and the per-group call
 * lists (file order); each send and recv its point-to-point ordinal. O(n). */
static void number_calls(trc_trace *t) {
  uint32_t ng = t->npg + 1; /* the default group last */
  t->call_start = sim_calloc((size_t)ng + 1, sizeof *t->call_start);
  for (uint32_t i = 0; i < t->n; i++) {
    trc_node *x = &t->nodes[i];
    if (x->kind == TRC_COLL) {
      uint32_t g = x->pg == TRC_NO_GROUP ? t->npg : x->pg;
      x->call = t->call_start[g + 1]++;
    } else if (x->kind == TRC_SEND || x->kind == TRC_RECV) {
      x->call = t->np2p++;
    }
  }
  for (uint32_t g = 0; g < ng; g++) t->call_start[g + 1] += t->call_start[g];
  t->call_nodes = sim_malloc((t->call_start[ng] ? t->call_start[ng] : 1) * sizeof *t->call_nodes);
  for (uint32_t i = 0; i < t->n; i++) {
    const trc_node *x = &t->nodes[i];
    if (x->kind != TRC_COLL) continue;
    uint32_t g = x->pg == TRC_NO_GROUP ? t->npg : x->pg;
    t->call_nodes[t->call_start[g] + x->call] = i;
  }
}

int trc_parse(trc_trace *out, const char *name, const uint8_t *data, size_t len, sim_error *err) {
  memset(out, 0, sizeof *out);
  out->name = sim_strdup(name);
  size_t pos = 0, cap = 0, pgcap = 0, idcap = 0, nids = 0;
  uint64_t *ids = NULL;
  const uint8_t *msg;
  size_t mlen;
  int rc;
  if (len == 0) {
    rc = sim_fail(err, SIM_EINVAL,
                  "%s: empty file: a Chakra ET file starts with a "
                  "GlobalMetadata message",
                  name);
    goto err;
  }
  if ((rc = frame(name, data, len, &pos, "GlobalMetadata message", &msg, &mlen, err)) != SIM_OK)
    goto err;
  ChakraProtoMsg__GlobalMetadata *gm = chakra_proto_msg__global_metadata__unpack(NULL, mlen, msg);
  if (!gm) {
    rc = sim_fail(err, SIM_EINVAL,
                  "%s: byte 0: the first message is not a valid Chakra "
                  "GlobalMetadata (corrupt protobuf, or not a Chakra ET file)",
                  name);
    goto err;
  }
  out->version = sim_strdup(gm->version ? gm->version : "");
  chakra_proto_msg__global_metadata__free_unpacked(gm, NULL);
  while (pos < len) {
    size_t at = pos;
    if (out->n == UINT32_MAX - 1) {
      rc = sim_fail(err, SIM_EINVAL, "%s: byte %zu: more than 2^32 nodes", name, at);
      goto err;
    }
    char what[64] = "first Node message";
    if (out->n)
      snprintf(what, sizeof what, "Node message after node %llu",
               (unsigned long long)out->nodes[out->n - 1].id);
    if ((rc = frame(name, data, len, &pos, what, &msg, &mlen, err)) != SIM_OK) goto err;
    sim_grow((void **)&out->nodes, &cap, (size_t)out->n + 1, sizeof *out->nodes);
    if ((rc = parse_node(out, &pgcap, msg, mlen, at, what, &ids, &idcap, &nids, err)) != SIM_OK)
      goto err;
  }
  if ((rc = resolve_deps(out, ids, err)) != SIM_OK) goto err;
  if ((rc = order_nodes(out, err)) != SIM_OK) goto err;
  number_calls(out);
  sim_free(ids);
  return SIM_OK;
err:
  sim_free(ids);
  trc_trace_free(out);
  return rc;
}

void trc_trace_free(trc_trace *t) {
  if (!t) return;
  for (uint32_t i = 0; i < t->npg; i++) sim_free(t->pg_names[i]);
  sim_free(t->pg_names);
  sim_free(t->name);
  sim_free(t->version);
  sim_free(t->nodes);
  sim_free(t->order);
  sim_free(t->dep_pool);
  sim_free(t->child_start);
  sim_free(t->children);
  sim_free(t->call_start);
  sim_free(t->call_nodes);
  memset(t, 0, sizeof *t);
}

/* ---- writing ----------------------------------------------------------------- */

static void put_varint(uint8_t **buf, size_t *len, size_t *cap, uint64_t v) {
  sim_grow((void **)buf, cap, *len + 10, 1);
  do {
    uint8_t b = (uint8_t)(v & 0x7f);
    v >>= 7;
    (*buf)[(*len)++] = (uint8_t)(b | (v ? 0x80 : 0));
  } while (v);
}

static void put_msg(uint8_t **buf, size_t *len, size_t *cap, const ProtobufCMessage *m) {
  size_t n = protobuf_c_message_get_packed_size(m);
  put_varint(buf, len, cap, n);
  sim_grow((void **)buf, cap, *len + n, 1);
  *len += protobuf_c_message_pack(m, *buf + *len);
}

static ChakraProtoMsg__AttributeProto *attr_new(ChakraProtoMsg__AttributeProto *a,
                                                const char *name) {
  chakra_proto_msg__attribute_proto__init(a);
  a->name = (char *)name;
  return a;
}

uint8_t *trc_write(const char *version, const trc_write_node *nodes, size_t n, size_t *len) {
  static const int types[] = {[TRC_COMPUTE] = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE,
                              [TRC_COLL] = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE,
                              [TRC_SEND] = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE,
                              [TRC_RECV] = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE,
                              [TRC_MEM] = CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE,
                              [TRC_OTHER] = CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE,
                              [TRC_HOST] = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE};
  uint8_t *buf = NULL;
  size_t cap = 0;
  *len = 0;
  ChakraProtoMsg__GlobalMetadata gm;
  chakra_proto_msg__global_metadata__init(&gm);
  gm.version = (char *)version;
  put_msg(&buf, len, &cap, &gm.base);
  for (size_t i = 0; i < n; i++) {
    const trc_write_node *w = &nodes[i];
    ChakraProtoMsg__Node m;
    chakra_proto_msg__node__init(&m);
    ChakraProtoMsg__AttributeProto a[8], *ap[8];
    size_t na = 0;
    m.id = w->id;
    m.name = (char *)(w->name ? w->name : "");
    m.type = (ChakraProtoMsg__NodeType)types[w->kind];
    m.data_deps = (uint64_t *)w->deps;
    m.n_data_deps = w->ndeps;
    m.duration_micros = w->duration_us;
    ap[na] = attr_new(&a[na], "is_cpu_op");
    a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
    a[na++].bool_val = w->kind == TRC_HOST;
    if (w->kind == TRC_COMPUTE && w->num_ops) {
      ap[na] = attr_new(&a[na], "num_ops");
      a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
      a[na++].int64_val = (int64_t)w->num_ops;
    }
    if (w->kind == TRC_COMPUTE && w->tensor_size) {
      ap[na] = attr_new(&a[na], "tensor_size");
      a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
      a[na++].uint64_val = w->tensor_size;
    }
    if (w->kind == TRC_COLL) {
      ap[na] = attr_new(&a[na], "comm_type");
      a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
      a[na++].int64_val = w->comm_type;
    }
    if (w->kind == TRC_COLL || w->kind == TRC_SEND || w->kind == TRC_RECV) {
      ap[na] = attr_new(&a[na], "comm_size");
      a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
      a[na++].int64_val = (int64_t)w->bytes;
    }
    if (w->kind == TRC_SEND || w->kind == TRC_RECV) {
      ap[na] = attr_new(&a[na], w->kind == TRC_SEND ? "comm_dst" : "comm_src");
      a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL;
      a[na++].int32_val = (int32_t)w->peer;
      ap[na] = attr_new(&a[na], "comm_tag");
      a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL;
      a[na++].int32_val = (int32_t)w->tag;
    }
    if (w->pg_name) {
      ap[na] = attr_new(&a[na], "pg_name");
      a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
      a[na++].string_val = (char *)w->pg_name;
    }
    m.attr = ap;
    m.n_attr = na;
    put_msg(&buf, len, &cap, &m.base);
  }
  return buf;
}
