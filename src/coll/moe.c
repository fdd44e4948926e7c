/* Node-limited MoE dispatch and combine (model and closed form in coll.h).
 *
 * Dispatch, per rank (A, a): fabric copies (A, a) -> (B, a) of
 *   copies(o, a) = floor(T M'/m) + [((o + a) mod m) < (T M' mod m)]
 * tokens, o = B - A (mod m), so each rank sends across the fabric to the
 * same-rail GPU of at most min(M', m-1) nodes per token, and the rail GPU
 * (B, a), having received sum_o copies(o, a) = T M' copies, fans them out
 * over NVLink as T D deliveries:
 *   deliveries(a -> g) = floor(T D/G) + [((g - a) mod G) < (T D mod G)].
 * Every GPU of the group thus receives exactly T D tokens (T D b bytes,
 * its own share without moving), and every rail GPU exactly T M' copies.
 */
#include <math.h>
#include <string.h>

#include "coll/coll_internal.h"

typedef struct moe_model {
  uint32_t m, g, span, d;
  uint64_t tokens, b;
  const coll_moe_routing *routing; /* NULL: the balanced expectation */
} moe_model;

/* Token copies rank (A, a) sends to node A + o (mod m), o != 0. */
static uint64_t fabric_copies(const moe_model *md, uint32_t A, uint32_t o, uint32_t a) {
  const coll_moe_routing *r = md->routing;
  if (!r) {
    uint64_t total = md->tokens * md->span;
    return total / md->m + ((o + a) % md->m < total % md->m);
  }
  double n = (double)md->m * md->g, r_idx = (double)A * md->g + a;
  return (uint64_t)floor((double)md->tokens * r->node_share[(A + o) % md->m] + r_idx / n);
}

/* Tokens the rail GPU (B, a) hands to (B, g), g != a, over NVLink. */
static uint64_t nvl_deliveries(const moe_model *md, uint32_t B, uint32_t a, uint32_t g) {
  const coll_moe_routing *r = md->routing;
  if (!r) {
    uint64_t total = md->tokens * md->d;
    return total / md->g + ((g + md->g - a) % md->g < total % md->g);
  }
  double G = md->g, idx = (double)a * md->g + g;
  return (uint64_t)floor((double)md->m * (double)md->tokens * r->gpu_share[(size_t)B * md->g + g] +
                         idx / (G * G));
}

static int moe_check(const topo *t, const coll_moe_spec *s, moe_model *md, sim_error *err) {
  if (s->nranks == 0 || s->hidden == 0 || s->elem_bytes == 0)
    return sim_fail(err, SIM_EINVAL, "MoE dispatch needs ranks, hidden >= 1 and elem_bytes >= 1");
  for (uint32_t i = 0; i < s->nranks; i++)
    if ((i > 0 && s->ranks[i] <= s->ranks[i - 1]) || s->ranks[i] >= topo_gpu_count(t))
      return sim_fail(
          err, SIM_EINVAL,
          "expert-parallel ranks must be distinct GPUs of the cluster in ascending order");
  if (!coll__node_blocks(t, s->ranks, s->nranks, &md->m, &md->g))
    return sim_fail(err, SIM_EINVAL,
                    "the expert-parallel group needs the same number of ranks on every node (the "
                    "first has %u); place whole nodes",
                    md->g);
  if (s->experts == 0 || s->experts % s->nranks != 0)
    return sim_fail(err, SIM_EINVAL,
                    "%u experts do not spread evenly over %u expert-parallel ranks; use a multiple",
                    s->experts, s->nranks);
  if (s->top_k == 0 || s->top_k > s->experts)
    return sim_fail(err, SIM_EINVAL, "top_k %u outside 1..%u (the experts)", s->top_k, s->experts);
  md->routing = s->routing;
  if (s->routing && (s->routing->nodes != md->m || s->routing->per_node != md->g))
    return sim_fail(err, SIM_EINVAL,
                    "router statistics drawn for %u nodes x %u GPUs, the group is %u x %u",
                    s->routing->nodes, s->routing->per_node, md->m, md->g);
  uint32_t span = s->node_limit ? s->node_limit : md->m;
  if (span > md->m) span = md->m;
  if (span > s->top_k) span = s->top_k;
  uint32_t per_node = s->experts / md->m, most = (s->top_k + span - 1) / span;
  if (most > per_node && !s->routing)
    return sim_fail(err, SIM_EINVAL,
                    "a token's %u experts on %u node%s need %u experts per node; each node holds "
                    "%u (raise experts or the node limit)",
                    s->top_k, span, span == 1 ? "" : "s", most, per_node);
  md->span = span;
  md->d = 0;
  for (uint32_t j = 0; j < span; j++) {
    uint32_t kj = s->top_k / span + (j < s->top_k % span);
    md->d += kj < md->g ? kj : md->g;
  }
  md->tokens = s->tokens;
  md->b = s->hidden * s->elem_bytes;
  return SIM_OK;
}

/* One hop as a list of transfers. */
typedef struct hop {
  be_xfer *x;
  size_t n;
} hop;

static void hop_add(hop *h, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t salt) {
  if (bytes) coll__xfer(&h->x[h->n++], src, dst, bytes, salt);
}

int coll_moe_build(coll_plan *p, const topo *t, const coll_moe_spec *s, coll_moe_info *info,
                   sim_error *err) {
  memset(p, 0, sizeof *p);
  if (info) memset(info, 0, sizeof *info);
  moe_model md;
  int rc = moe_check(t, s, &md, err);
  if (rc != SIM_OK) return rc;
  p->op = CFG_COLL_ALLTOALL;
  p->algorithm = CFG_ALGO_NODE_LIMITED;
  p->bytes = md.tokens * md.b;
  p->nranks = s->nranks;
  p->channels = 1;
  p->chunk = 0;
  p->qps = 1;
  bool dispatch = s->dir == COLL_MOE_DISPATCH;
  uint32_t chunks = s->chunks ? s->chunks : 1;
  size_t cap = (size_t)s->nranks * (md.m + md.g);
  hop fab = {sim_malloc(cap * sizeof *fab.x), 0}, nvl = {sim_malloc(cap * sizeof *nvl.x), 0};
  uint64_t fab_bytes = 0, nvl_bytes = 0;
  for (uint32_t ai = 0; ai < md.m; ai++)
    for (uint32_t a = 0; a < md.g; a++) {
      uint32_t self = s->ranks[(size_t)ai * md.g + a];
      for (uint32_t o = 1; o < md.m; o++) {
        uint32_t peer = s->ranks[(size_t)((ai + o) % md.m) * md.g + a];
        uint64_t bytes = fabric_copies(&md, ai, o, a) * md.b;
        fab_bytes += bytes;
        if (dispatch) hop_add(&fab, self, peer, bytes, 0x400);
        else hop_add(&fab, peer, self, bytes, 0x401);
      }
      for (uint32_t gl = 0; gl < md.g; gl++) {
        if (gl == a) continue;
        uint32_t peer = s->ranks[(size_t)ai * md.g + gl];
        uint64_t bytes = nvl_deliveries(&md, ai, a, gl) * md.b;
        nvl_bytes += bytes;
        if (dispatch) hop_add(&nvl, self, peer, bytes, 0x402);
        else hop_add(&nvl, peer, self, bytes, 0x403);
      }
    }
  hop *first = dispatch ? &fab : &nvl, *second = dispatch ? &nvl : &fab;
  if (first->n == 0 || second->n == 0) chunks = 1; /* one hop: nothing to overlap */
  for (size_t i = 0; i < first->n && chunks > 1; i++)
    first->x[i].bytes = coll__ceil_div(first->x[i].bytes, chunks);
  for (size_t i = 0; i < second->n && chunks > 1; i++)
    second->x[i].bytes = coll__ceil_div(second->x[i].bytes, chunks);
  if (chunks == 1) {
    coll__push_step(p, first->x, first->n, 1);
    coll__push_step(p, second->x, second->n, 1);
  } else {
    be_xfer *both = sim_malloc((first->n + second->n) * sizeof *both);
    memcpy(both, first->x, first->n * sizeof *both);
    memcpy(both + first->n, second->x, second->n * sizeof *both);
    coll__push_step(p, first->x, first->n, 1);
    coll__push_step(p, both, first->n + second->n, chunks - 1);
    coll__push_step(p, second->x, second->n, 1);
    sim_free(both);
  }
  sim_free(fab.x);
  sim_free(nvl.x);
  coll__split_qps(p, s->qps, false);
  if (info) {
    info->nodes = md.m;
    info->per_node = md.g;
    info->node_span = md.span;
    info->gpus_per_token = md.d;
    info->token_bytes = md.b;
    info->fabric_bytes = fab_bytes;
    info->nvlink_bytes = nvl_bytes;
  }
  return SIM_OK;
}
