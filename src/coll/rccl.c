/* RCCL's choices on AMD GPUs (coll_internal.h), where fabsim's tuner
 * otherwise follows NCCL's (tune.c, nccl.c). Read from ROCm/rccl develop
 * 0cbce2a (October 2024; RCCL 2.22, the version of ROCm 6.3's
 * measurements); docs/validation.md, "RCCL's model (AMD GPUs)", cites each
 * constant by file.
 *
 * What RCCL runs for an AllReduce on one MI300X node (gfx942, 8 GPUs, each
 * pair joined by its own xGMI link):
 *   - MSCCL first (src/misc/msccl/msccl_lifecycle.cc, mscclSchedulerSelectAlgo):
 *     RCCL ships MSCCL "allpairs" AllReduces for 8 GPUs
 *     (tools/msccl-algorithms/allreduce-allpairs-8n-*.xml) and loads them
 *     where its topology model says so (src/graph/rome_models.cc: the
 *     8 x MI300X model without NICs, rome_model_79, "mscclEnabled=1"; a
 *     one-node communicator drops its NICs, ncclTopoTrimSystem). One runs
 *     when the element count divides into its chunks per loop and the
 *     bytes fall in its range: out of place, LL on 4 channels up to
 *     64 KiB (256 chunks), LL on 8 from 64 KiB + 1 to 512 KiB - 1 (512),
 *     Simple on 8 from 512 KiB to 16 MiB (512). Every rank sends each peer
 *     its 1/n share directly (reduce-scatter), then the reduced shares
 *     (all-gather): two exchanges over the seven links instead of the
 *     ring's 14 steps.
 *   - otherwise RCCL's tuner (src/graph/tuning.cc): NCCL's formula
 *     time = latency + size / bandwidth with RCCL's own tables; gfx942
 *     takes tuning_model_5 (rome_models.cc: "tuning=5" on every MI300X
 *     model), LL128 is off (only gfx90a enables it; model 5's LL128 ratios
 *     are 0) and the tree's Simple is skipped on one gfx94 node.
 * fabsim runs MSCCL's allpairs as its pairwise AllReduce (coll__plan_allpairs)
 * and RCCL's tuner picks among its ring and tree; each is then timed by
 * fabsim's own mechanism with RCCL's latencies (coll__rccl_latency). */
#include <math.h>

#include "coll/coll_internal.h"

bool coll__gpu_amd(cfg_gpu g) { return g == CFG_GPU_MI300X; }

/* tuning.cc baseLat (us): LL 12, LL128 12, Simple 17 for ring and tree;
 * tuning_model_5 hwLat NVLINK row (xGMI is RCCL's LINK_NVL): ring LL 0.8,
 * Simple 2.1, tree LL 0.9, Simple 2.3 (LL128 0). The network hops stay
 * NCCL's (the fabric's, not the GPU's: model 5's NET row, ring Simple
 * 320 us, is a bias of RCCL's choice, not a latency anyone measured). */
static const cfg_coll_latency rccl_latency = {
    .ll = {12000000, 800000, 2700000, 12000000, 900000, 5000000},
    .ll128 = {12000000, 0, 4000000, 12000000, 0, 8500000},
    .simple = {17000000, 2100000, 14000000, 17000000, 2300000, 14000000},
    .nvls = {25000000, 18000000},
    .nvlstree = {25000000, 20900000},
    .collnet = {3700000, 31000000},
};

const cfg_coll_latency *coll__rccl_latency(void) { return &rccl_latency; }

bool coll__rccl_msccl(const coll_spec *s, uint32_t nodes, cfg_coll_protocol *p, uint32_t *ch) {
  /* allreduce-allpairs-8n-{ll-32tb,ll-64tb,simple}-op.xml: minBytes,
   * maxBytes, proto, nchannels, nchunksperloop */
  static const struct {
    uint64_t lo, hi;
    cfg_coll_protocol p;
    uint32_t ch, chunks;
  } algo[3] = {{0, 65536, CFG_PROTO_LL, 4, 256},
               {65537, 524287, CFG_PROTO_LL, 8, 512},
               {524288, 16777216, CFG_PROTO_SIMPLE, 8, 512}};
  if (!coll__gpu_amd(s->gpu) || s->op != CFG_COLL_ALLREDUCE || nodes != 1 || s->nranks != 8)
    return false;
  uint64_t count = s->bytes / COLL_RCCL_ELEM; /* rccl-tests' float */
  for (int i = 0; i < 3; i++)
    if (s->bytes % COLL_RCCL_ELEM == 0 && count > 0 && count % algo[i].chunks == 0 &&
        s->bytes >= algo[i].lo && s->bytes <= algo[i].hi) {
      *p = algo[i].p;
      *ch = algo[i].ch;
      return true;
    }
  return false;
}

/* log2i of NCCL and RCCL (floor; 0 for 0 and 1) */
static int rccl_log2i(uint64_t v) {
  int l = 0;
  while (v >>= 1) l++;
  return l;
}

double coll__rccl_time_us(const coll_spec *s, uint32_t nodes, double bus_gbs, cfg_coll_algorithm a,
                          cfg_coll_protocol p) {
  /* tuning_model_5: bwRatio [<= 2 nodes, more][tree, ring][LL, LL128, Simple] */
  static const double ratio[2][2][3] = {{{0.06, 0, 0.11}, {0.08, 0, 1.00}},
                                        {{0.06, 0, 0.59}, {0.08, 0, 1.00}}};
  /* hwLat [NVLINK, NET][tree, ring][LL, LL128, Simple] (us) */
  static const double hw[2][2][3] = {{{0.9, 0, 2.3}, {0.8, 0, 2.1}},
                                     {{10.5, 0, 25.0}, {9.5, 0, 320.0}}};
  static const double base[3] = {12.0, 12.0, 17.0};
  /* treeCorrectionFactor, ringCorrectionFactor by log2(size / 64), 0..26 */
  static const double tcf[3][27] = {
      {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9,
       1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
      {0},
      {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
       0.1, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8}};
  static const double rcf[3][27] = {
      {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0,
       0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
      {0},
      {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
       0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.8, 1.0, 1.0, 1.0}};
  int pi = p == CFG_PROTO_LL ? 0 : p == CFG_PROTO_LL128 ? 1 : 2, ai = a == CFG_ALGO_TREE ? 0 : 1;
  uint32_t n = s->nranks, m = nodes ? nodes : 1;
  if (pi == 1) return INFINITY;                      /* LL128: gfx90a only */
  if (ai == 0 && pi == 2 && m == 1) return INFINITY; /* tree Simple: not on one gfx94 node */
  if (ai == 0 && s->op != CFG_COLL_ALLREDUCE) return INFINITY;
  double bw = bus_gbs * ratio[m > 2][ai][pi];
  bool rs_ag = s->op == CFG_COLL_REDUCESCATTER || s->op == CFG_COLL_ALLGATHER;
  double nsteps = s->op == CFG_COLL_ALLREDUCE ? 2.0 * (n - 1) : rs_ag ? n - 1 : n;
  double ninter = m == 1 ? 0 : s->op == CFG_COLL_ALLREDUCE ? 2.0 * m : m - 1;
  /* a gfx94 node's Broadcast on the LL ring: busBw x 1.65 */
  if (s->op == CFG_COLL_BROADCAST && ai == 1 && pi == 0 && m == 1) bw *= 1.65;
  double intra = hw[0][ai][pi], inter = hw[1][ai][pi];
  if (m > 1) intra = fmax(intra, pi == 2 ? 3.0 : 1.0); /* getNetOverhead 1 us, x3 Simple */
  double lat = base[pi];
  if (ai == 1) {
    bw *= n / nsteps;
    lat += (nsteps - ninter) * intra + ninter * inter;
  } else {
    bw *= 0.5;
    lat += 2 * ((double)(n / m - 1) * intra + rccl_log2i(m) * inter);
  }
  int ls = rccl_log2i(s->bytes >> 6);
  if (ls > 26) ls = 26;
  if (ai == 0) bw *= tcf[pi][ls];
  if (ai == 1 && m > 1) bw *= rcf[pi][ls];
  return bw > 0 ? lat + (double)s->bytes / (1000.0 * bw) : INFINITY;
}

uint32_t coll__rccl_channels(const coll_spec *s, cfg_coll_algorithm a, cfg_coll_protocol p) {
  /* nChannels: rome_model_79's 28 rings, doubled by connect.cc (<= 64);
   * getChannnelThreadInfo lowers them while bytes < nc x nt x threshold,
   * never the threads (NCCL_MAX_NTHREADS 256 on AMD; thresholds LL 8 x
   * nRanks on the ring, Simple 64). fabsim's channels stand for RCCL's
   * 56 in proportion. */
  uint64_t nc = COLL_RCCL_CHANNELS, thr = p == CFG_PROTO_SIMPLE ? 64 : 8;
  if (p == CFG_PROTO_LL && a == CFG_ALGO_RING) thr *= s->nranks;
  while (nc > 1 && s->bytes < nc * 256 * thr) nc--;
  uint64_t k = coll__ceil_div(nc * s->channels, COLL_RCCL_CHANNELS);
  return (uint32_t)(k < 1 ? 1 : k);
}

void coll__rccl_pick(const coll_spec *s, uint32_t nodes, double bus_gbs, cfg_coll_algorithm *a,
                     cfg_coll_protocol *p) {
  static const cfg_coll_algorithm algos[2] = {CFG_ALGO_RING, CFG_ALGO_TREE};
  static const cfg_coll_protocol protos[2] = {CFG_PROTO_LL, CFG_PROTO_SIMPLE};
  double best = INFINITY;
  /* what the scenario fixes stands, also where RCCL would not run it */
  *a = s->algorithm == CFG_ALGO_TREE ? CFG_ALGO_TREE : CFG_ALGO_RING;
  *p = s->protocol != CFG_PROTO_AUTO ? s->protocol : CFG_PROTO_SIMPLE;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      if (s->algorithm != CFG_ALGO_AUTO && s->algorithm != algos[i]) continue;
      if (s->protocol != CFG_PROTO_AUTO && s->protocol != protos[j]) continue;
      double t = coll__rccl_time_us(s, nodes, bus_gbs, algos[i], protos[j]);
      if (t < best) best = t, *a = algos[i], *p = protos[j];
    }
}

int coll__plan_allpairs(coll_plan *p, const coll_spec *s) {
  uint32_t n = s->nranks;
  uint64_t share = coll__ceil_div(s->bytes, n);
  for (int pass = 0; pass < 2; pass++) { /* reduce-scatter, then all-gather */
    coll_phase *ph = coll__add_phase(p, (size_t)n * (n - 1), 1);
    size_t j = 0;
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t d = 1; d < n; d++)
        coll__xfer(&ph->x[j++], s->ranks[i], s->ranks[(i + d) % n], share, (uint64_t)pass * n + d);
  }
  return SIM_OK;
}
