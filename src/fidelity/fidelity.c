/* The backend factory: simulation.fidelity (and simulation.engine) -> the
 * backend that runs it. A module of its own above the fidelities, so that
 * src/backend (the interface) depends on none of them: the flow (src/flow)
 * and packet (src/net) fidelities include the interface, and this file
 * calls their constructors and asks the parallel engine (src/pdes) whether
 * mpirun started the process. */
#include <stdio.h>

#include "fabsim/backend.h"
#include "fabsim/pdes.h"

bool be_packet_parallel(const cfg_scenario *cfg) {
  if (cfg->simulation.fidelity != CFG_FIDELITY_PACKET) return false;
  if (cfg->simulation.engine == CFG_ENGINE_AUTO) return pdes_comm_launched() && pdes_comm_built();
  return cfg->simulation.engine == CFG_ENGINE_PARALLEL;
}

int be_create(be_backend **out, sim_ctx *sim, const topo *t, const cfg_scenario *cfg,
              const cfg_doc *doc, sim_error *err) {
  *out = NULL;
  switch (cfg->simulation.fidelity) {
  case CFG_FIDELITY_ANALYTIC: *out = be_analytic_create(sim, t, cfg); return SIM_OK;
  case CFG_FIDELITY_FLOW: *out = be_flow_create(sim, t, cfg); return SIM_OK;
  case CFG_FIDELITY_PACKET:
    if (!be_packet_parallel(cfg)) {
      *out = be_packet_create(sim, t, cfg);
      return SIM_OK;
    }
    if (!(*out = be_packet_create_parallel(sim, t, cfg, err))) {
      char msg[sizeof err->msg];
      snprintf(msg, sizeof msg, "%s", err->msg);
      int code = err->code;
      cfg_fail_at(doc, "simulation.engine", err, "%s", msg);
      err->code = code;
      return code;
    }
    return SIM_OK;
  }
  cfg_fail_at(doc, "simulation.fidelity", err,
              "'%s' is not a fidelity of this version; allowed: analytic, flow, packet",
              cfg_fidelity_name(cfg->simulation.fidelity));
  if (err) err->code = SIM_ENOTSUP;
  return SIM_ENOTSUP;
}
