/* PHOLD model on the parallel engine (see phold.h). */
#include <string.h>

#include "pdes/phold.h"

typedef struct phold_lp {
  sim_rng rng;
  uint64_t handled;
  uint64_t digest;
  simtime_ps last;
} phold_lp;

struct pdes_phold {
  pdes_phold_cfg cfg;
  phold_lp *lps; /* all LPs; only those of this rank move */
  pdes *engine;
};

static void phold_send(pdes *p, pdes_phold *m, uint32_t id) {
  phold_lp *lp = &m->lps[id];
  uint32_t dst = id;
  if (m->cfg.nlps > 1 && sim_rng_uniform(&lp->rng) < m->cfg.remote) {
    dst = (uint32_t)sim_rng_below(&lp->rng, m->cfg.nlps - 1);
    if (dst >= id) dst++;
  }
  simtime_ps delay =
      m->cfg.lookahead_ps + (simtime_ps)sim_rng_exp(&lp->rng, (double)m->cfg.mean_ps);
  uint64_t payload[PDES_PAYLOAD_WORDS] = {id, lp->handled, 0, 0};
  pdes_send(p, id, dst, pdes_now(p) + delay, 0, payload);
}

static void phold_handle(pdes *p, const pdes_event *ev, void *model) {
  pdes_phold *m = model;
  phold_lp *lp = &m->lps[ev->dst];
  lp->handled++;
  lp->last = ev->time;
  lp->digest = sim_hash_u64(lp->digest ^ ev->time) ^
               sim_hash_u64(ev->payload[0] * 0x9e3779b97f4a7c15ULL + ev->payload[1]);
  phold_send(p, m, ev->dst);
}

int pdes_phold_create(pdes_phold **out, const pdes_phold_cfg *cfg, bool parallel,
                      const uint32_t *lp_rank, sim_error *err) {
  *out = NULL;
  pdes_phold *m = sim_calloc(1, sizeof *m);
  m->cfg = *cfg;
  pdes_fn handlers[1] = {phold_handle};
  pdes_cfg pc = {.nlps = cfg->nlps,
                 .lp_rank = lp_rank,
                 .lookahead_ps = cfg->lookahead_ps,
                 .handlers = handlers,
                 .nhandlers = 1,
                 .model = m,
                 .parallel = parallel,
                 .exchange = cfg->exchange};
  int rc = pdes_create(&m->engine, &pc, err);
  if (rc != SIM_OK) {
    sim_free(m);
    return rc;
  }
  m->lps = sim_calloc(cfg->nlps, sizeof *m->lps);
  for (uint32_t i = 0; i < cfg->nlps; i++) {
    if (!pdes_owns(m->engine, i)) continue;
    sim_rng_init_u64(&m->lps[i].rng, cfg->seed, i);
    for (uint32_t e = 0; e < cfg->start; e++) phold_send(m->engine, m, i);
  }
  *out = m;
  return SIM_OK;
}

void pdes_phold_destroy(pdes_phold *m) {
  if (!m) return;
  pdes_destroy(m->engine);
  sim_free(m->lps);
  sim_free(m);
}

pdes *pdes_phold_engine(pdes_phold *m) { return m->engine; }

uint64_t pdes_phold_run(pdes_phold *m, simtime_ps until) { return pdes_run(m->engine, until); }

void pdes_phold_state(pdes_phold *m, uint64_t *out) {
  size_t n = (size_t)m->cfg.nlps * PDES_PHOLD_STATE_WORDS;
  memset(out, 0, n * sizeof *out);
  for (uint32_t i = 0; i < m->cfg.nlps; i++) {
    if (!pdes_owns(m->engine, i)) continue;
    const phold_lp *lp = &m->lps[i];
    uint64_t *w = out + (size_t)i * PDES_PHOLD_STATE_WORDS;
    w[0] = lp->handled;
    w[1] = lp->digest;
    w[2] = lp->last;
    w[3] = lp->rng.s[0];
    w[4] = lp->rng.s[1];
    w[5] = lp->rng.s[2] ^ lp->rng.s[3];
  }
  if (pdes_nranks(m->engine) > 1) pdes_comm_reduce_sum_u64(out, out, n);
}

simtime_ps pdes_phold_horizon(const pdes_phold_cfg *cfg, uint64_t events) {
  /* nlps*start events are always in flight, each ~ mean + lookahead long. */
  double per_ps =
      (double)cfg->nlps * cfg->start / ((double)cfg->mean_ps + (double)cfg->lookahead_ps);
  return (simtime_ps)((double)events / per_ps);
}
