/* Router statistics of mixture-of-experts token routing (model in coll.h).
 *
 * A pool of P router decisions, each a top-k choice over the E experts of an
 * expert-parallel group of m nodes x G GPUs (expert e on node e / (E/m), on
 * that node's GPU (e mod E/m) / (E/mG), the contiguous placement of
 * Megatron and DeepSpeed). Affinities are the Gumbel-max form of sampling
 * without replacement by popularity: s_e = log w_e + Gumbel, so the top k of
 * s are k experts drawn without replacement with probabilities w (uniform
 * routing when every w_e is equal). Popularity: w_e = (1 + r_e)^-skew, r a
 * seeded permutation of the experts (the hot ones sit on random GPUs).
 * Node limit M' = min(M, m) < m: DeepSeek-V3's node-limited routing, the M'
 * nodes with the highest sum of their top ceil(k/M') affinities, then the
 * top k experts of those nodes.
 *
 * Cost: O(P E) draws and O(P E k) selection, once per group shape; the
 * pool's shares are what dispatch and combine read (coll_moe_build). */
#include <math.h>
#include <string.h>

#include "coll/coll_internal.h"

enum { ROUTER_POOL = 4096 };

/* The k largest of s[0..n) (k <= n), indices into top[], largest first. O(n k). */
static void top_k(const double *s, uint32_t n, uint32_t k, uint32_t *top) {
  uint32_t have = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (have == k && s[i] <= s[top[k - 1]]) continue;
    uint32_t j = have < k ? have++ : k - 1;
    while (j > 0 && s[top[j - 1]] < s[i]) {
      top[j] = top[j - 1];
      j--;
    }
    top[j] = i;
  }
}

typedef struct router {
  uint32_t m, g, experts, k, span; /* span: M' nodes allowed, m when unlimited */
  uint32_t per_node, per_gpu;      /* experts per node, per GPU */
  double *logw;                    /* [E] log popularity */
  double *score;                   /* [E] this token's affinities */
  double *node_score;              /* [m] */
  double *allowed;                 /* [E] affinities of the allowed nodes' experts, else -inf */
  uint32_t *top, *node_top;        /* [k], [span] */
  uint8_t *hit_node, *hit_gpu;     /* [m], [m G] this token's marks */
} router;

static void router_popularity(router *r, double skew, sim_rng *rng) {
  uint32_t *rank = sim_malloc(r->experts * sizeof *rank);
  for (uint32_t e = 0; e < r->experts; e++) rank[e] = e;
  for (uint32_t e = r->experts; e > 1; e--) { /* Fisher-Yates */
    uint32_t j = (uint32_t)sim_rng_below(rng, e), t = rank[e - 1];
    rank[e - 1] = rank[j];
    rank[j] = t;
  }
  for (uint32_t e = 0; e < r->experts; e++) r->logw[e] = -skew * log1p((double)rank[e]);
  sim_free(rank);
}

/* One token: mark the nodes and GPUs its k experts lie on; count the
 * expert assignments per GPU. */
typedef struct counts {
  uint32_t *node, *gpu, *load; /* [m], [m G], [m G] */
} counts;

static void router_token(router *r, sim_rng *rng, counts *out) {
  for (uint32_t e = 0; e < r->experts; e++) {
    double u = sim_rng_uniform(rng);
    r->score[e] = r->logw[e] - log(-log(u > 0 ? u : 0x1.0p-53));
  }
  const double *pick = r->score;
  if (r->span < r->m) {
    uint32_t q = (r->k + r->span - 1) / r->span;
    if (q > r->per_node) q = r->per_node;
    for (uint32_t b = 0; b < r->m; b++) {
      top_k(r->score + (size_t)b * r->per_node, r->per_node, q, r->top);
      double sum = 0;
      for (uint32_t i = 0; i < q; i++) sum += r->score[(size_t)b * r->per_node + r->top[i]];
      r->node_score[b] = sum;
    }
    top_k(r->node_score, r->m, r->span, r->node_top);
    for (uint32_t e = 0; e < r->experts; e++) r->allowed[e] = -INFINITY;
    for (uint32_t i = 0; i < r->span; i++) {
      size_t base = (size_t)r->node_top[i] * r->per_node;
      memcpy(r->allowed + base, r->score + base, r->per_node * sizeof *r->allowed);
    }
    pick = r->allowed;
  }
  top_k(pick, r->experts, r->k, r->top);
  memset(r->hit_node, 0, r->m);
  memset(r->hit_gpu, 0, (size_t)r->m * r->g);
  for (uint32_t i = 0; i < r->k; i++) {
    uint32_t e = r->top[i], b = e / r->per_node, gl = b * r->g + (e % r->per_node) / r->per_gpu;
    out->load[gl]++;
    if (!r->hit_gpu[gl]++) out->gpu[gl]++;
    if (!r->hit_node[b]++) out->node[b]++;
  }
}

/* Counts of the pool -> shares of a token. Under uniform popularity every
 * node (and every GPU) is alike by symmetry, so each gets the pool's mean:
 * the pool's sampling error (about 1.5 % per node at P = 4096, where a
 * group's real batch of m G T tokens varies far less) would otherwise make
 * one node a persistent hot spot that no real batch has. */
static void shares(coll_moe_routing *out, const uint32_t *node, const uint32_t *gpu,
                   const uint32_t *load, bool uniform) {
  size_t n = (size_t)out->nodes * out->per_node;
  double nodes = 0, gpus = 0, most = 0, all = 0, P = out->tokens;
  for (uint32_t b = 0; b < out->nodes; b++) nodes += node[b];
  for (size_t i = 0; i < n; i++) {
    gpus += gpu[i];
    all += load[i];
    if (load[i] > most) most = load[i];
  }
  for (uint32_t b = 0; b < out->nodes; b++)
    out->node_share[b] = uniform ? nodes / P / out->nodes : node[b] / P;
  for (size_t i = 0; i < n; i++) {
    out->gpu_share[i] = uniform ? gpus / P / (double)n : gpu[i] / P;
    out->expert_share[i] = uniform ? all / P / (double)n : load[i] / P;
  }
  out->nodes_per_token = nodes / P;
  out->gpus_per_token = gpus / P;
  out->imbalance = uniform || all == 0 ? 1 : most * (double)n / all;
}

int coll_moe_routing_sample(coll_moe_routing *out, const coll_moe_router_spec *s, sim_error *err) {
  memset(out, 0, sizeof *out);
  uint32_t mg = s->nodes * s->per_node;
  if (s->nodes == 0 || s->per_node == 0 || s->experts == 0 || s->experts % mg != 0)
    return sim_fail(err, SIM_EINVAL,
                    "%u experts do not spread evenly over %u nodes x %u GPUs; use a multiple",
                    s->experts, s->nodes, s->per_node);
  if (!(s->skew >= 0) || !isfinite(s->skew))
    return sim_fail(err, SIM_EINVAL, "expert skew %g: a finite value >= 0", s->skew);
  router r = {.m = s->nodes, .g = s->per_node, .experts = s->experts, .k = s->top_k};
  r.span = s->node_limit && s->node_limit < s->nodes ? s->node_limit : s->nodes;
  r.per_node = s->experts / s->nodes;
  r.per_gpu = r.per_node / s->per_node;
  if (s->top_k == 0 || s->top_k > r.span * r.per_node)
    return sim_fail(err, SIM_EINVAL,
                    "top_k %u outside 1..%u (the experts on the %u node%s a token may reach)",
                    s->top_k, r.span * r.per_node, r.span, r.span == 1 ? "" : "s");
  out->nodes = s->nodes;
  out->per_node = s->per_node;
  out->tokens = ROUTER_POOL;
  out->node_share = sim_calloc(s->nodes, sizeof *out->node_share);
  out->gpu_share = sim_calloc(mg, sizeof *out->gpu_share);
  out->expert_share = sim_calloc(mg, sizeof *out->expert_share);
  counts c = {sim_calloc(s->nodes, sizeof *c.node), sim_calloc(mg, sizeof *c.gpu),
              sim_calloc(mg, sizeof *c.load)};
  r.logw = sim_malloc(s->experts * sizeof *r.logw);
  r.score = sim_malloc(s->experts * sizeof *r.score);
  r.allowed = sim_malloc(s->experts * sizeof *r.allowed);
  r.node_score = sim_malloc(s->nodes * sizeof *r.node_score);
  r.top = sim_malloc(s->top_k * sizeof *r.top);
  r.node_top = sim_malloc(r.span * sizeof *r.node_top);
  r.hit_node = sim_malloc(s->nodes);
  r.hit_gpu = sim_malloc(mg);
  sim_rng rng;
  sim_rng_init(&rng, s->seed, "moe.router");
  router_popularity(&r, s->skew, &rng);
  for (uint32_t i = 0; i < ROUTER_POOL; i++) router_token(&r, &rng, &c);
  shares(out, c.node, c.gpu, c.load, s->skew == 0);
  sim_free(c.node);
  sim_free(c.gpu);
  sim_free(c.load);
  sim_free(r.logw);
  sim_free(r.score);
  sim_free(r.allowed);
  sim_free(r.node_score);
  sim_free(r.top);
  sim_free(r.node_top);
  sim_free(r.hit_node);
  sim_free(r.hit_gpu);
  return SIM_OK;
}

void coll_moe_routing_free(coll_moe_routing *r) {
  sim_free(r->node_share);
  sim_free(r->gpu_share);
  sim_free(r->expert_share);
  memset(r, 0, sizeof *r);
}
