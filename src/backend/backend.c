/* Backend selection by simulation.fidelity. */
#include "fabsim/backend.h"

int be_create(be_backend **out, sim_ctx *sim, const topo *t, const cfg_scenario *cfg,
              const cfg_doc *doc, sim_error *err) {
  *out = NULL;
  switch (cfg->simulation.fidelity) {
  case CFG_FIDELITY_ANALYTIC:
    *out = be_analytic_create(sim, t, cfg);
    return SIM_OK;
  case CFG_FIDELITY_FLOW:
    *out = be_flow_create(sim, t, cfg);
    return SIM_OK;
  case CFG_FIDELITY_PACKET:
    *out = be_packet_create(sim, t, cfg);
    return SIM_OK;
  }
  cfg_fail_at(doc, "simulation.fidelity", err,
              "'%s' is not a fidelity of this version; allowed: analytic, flow, packet",
              cfg_fidelity_name(cfg->simulation.fidelity));
  if (err) err->code = SIM_ENOTSUP;
  return SIM_ENOTSUP;
}
