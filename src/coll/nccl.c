/* NCCL's size rules and per-channel limits, as the tuner and the
 * builders use them (coll_internal.h). Every constant is read from
 * NVIDIA/nccl master (2.2x/2.3x): src/enqueue.cc (channels by size, the
 * chunk of each algorithm), src/graph/tuning.cc (the per-channel caps),
 * src/transport/nvls.cc (NVLS channels and chunks), src/graph/connect.cc
 * (the compute channels); docs/validation.md, "Collectives", lists each.
 *
 * fabsim's channels and NCCL's. NCCL's topology search finds graph
 * channels (one ring or tree a NIC on a node of 8 GPUs and 8 NICs: a NIC
 * of 50 GB/s holds one channel at sm90SpeedArrayInter's 40-48 GB/s, not
 * two), and connect.cc doubles them into compute channels
 * ("nChannels = comm->nChannels = std::min(MAXCHANNELS, nChannels * 2)"):
 * 16 on an 8-NIC H100 node (NVIDIA/nccl#1453's log: "Channel 00/16" on
 * 8-NIC H100 nodes), channels c and c + 8 on the same NIC. fabsim's
 * channel is the graph channel: one a NIC by default, each carrying the
 * data of its two compute channels. So:
 *   - the tuning model's caps multiply the graph's channel count
 *     (`graphs[a]->nChannels * perChMax...`): they apply per fabsim channel;
 *   - the channels-by-size rule counts compute channels, 2k for k fabsim
 *     channels; when it leaves nc of them, compute channel j runs on fabsim
 *     channel j mod k: nc <= k leaves nc fabsim channels of S/nc each; k <
 *     nc < 2k puts two compute channels on nc - k of the NICs, whose S 2/nc
 *     paces the collective: fabsim runs ceil(nc/2) channels (S/ceil(nc/2)
 *     each; exact for even nc, 1/(nc+1) fast for odd).
 */
#include "coll/coll_internal.h"

/* NCCL's rows: Ampere (and MI300X, which has none: RCCL's tuner is its
 * own), Hopper, Blackwell. */
int coll__nccl_arch(cfg_gpu g) {
  if (g == CFG_GPU_A100 || g == CFG_GPU_MI300X) return COLL_ARCH_AMPERE;
  return g == CFG_GPU_B200 ? COLL_ARCH_BLACKWELL : COLL_ARCH_HOPPER;
}

/* tuning.cc's column: one node, two, more (index2 = nNodes <= 2 ? nNodes - 1 : 2). */
static int node_col(uint32_t m) { return m <= 1 ? 0 : m == 2 ? 1 : 2; }

double coll__nccl_tree_cap(cfg_gpu g, uint32_t m, cfg_coll_protocol p) {
  /* perChMaxTreeBws, perChMaxTreeLL128Bws (GB/s): Ampere, Hopper, Blackwell x N1/N2/N4 */
  static const double tree[COLL_NARCH][3] = {
      {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
  static const double ll128[COLL_NARCH][3] = {
      {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
  const double(*row)[3] = p == CFG_PROTO_LL128 ? ll128 : tree;
  return row[coll__nccl_arch(g)][node_col(m)] * 1e9;
}

double coll__nccl_nvlstree_cap(cfg_gpu g, uint32_t m) {
  /* perChMaxNVLSTreeBws (GB/s), N2 / N4 (NVLSTree needs two nodes) */
  static const double cap[COLL_NARCH][2] = {{23.6, 17.8}, {57.7, 45.5}, {96.0, 80.0}};
  return cap[coll__nccl_arch(g)][m <= 2 ? 0 : 1] * 1e9;
}

double coll__nccl_tree_correction(cfg_coll_protocol p, uint64_t bytes) {
  /* treeCorrectionFactor [LL, LL128, Simple][log2i(bytes >> 6)], 64 B to
   * 256 MiB ("Trees are not perfectly sticking to the model for medium
   * sizes"); ncclTopoGetAlgoTime applies it to the tree's AllReduce for
   * 0 <= logSize < 23, the same table from 2.1x to 2.29 */
  static const double f[3][23] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
       .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
       .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
  uint64_t v = bytes >> 6;
  if (v == 0) return 1.0; /* log2i(0) < 0: not applied */
  int l = 0;
  while (v >>= 1) l++;
  if (l >= 23) return 1.0;
  return f[p == CFG_PROTO_LL ? 0 : p == CFG_PROTO_LL128 ? 1 : 2][l];
}

uint32_t coll__nccl_channels(const coll_spec *s, cfg_coll_algorithm a, cfg_coll_protocol p) {
  /* maxThreads (NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640,
   * NCCL_SIMPLE_MAX_NTHREADS 512) x threadThresholds (NCCL_LL_THREAD_THRESHOLD 8,
   * NCCL_LL128_THREAD_THRESHOLD 8, NCCL_SIMPLE_THREAD_THRESHOLD 64; ring LL x nRanks) */
  uint64_t nt = p == CFG_PROTO_LL128 ? 640 : 512;
  uint64_t thr = p == CFG_PROTO_SIMPLE ? 64 : 8;
  if (p == CFG_PROTO_LL && a == CFG_ALGO_RING) thr *= s->nranks;
  uint64_t k = s->channels, nc = 2 * k;
  while (nc > 1 && s->bytes < nc * nt * thr) nc--;
  return (uint32_t)(nc <= k ? nc : (nc + 1) / 2);
}

/* NCCL's NVLS compute channels (nvls.cc ncclNvlsTuning): NVLS_NCHANNELS_SM90
 * 16 on Hopper; Blackwell NVLS_NCHANNELS_SM100_NVL 24 on one node, across
 * nodes NVLS_NCHANNELS_SM100 32, which ncclNvlsTreeSm100Tuning keeps on two
 * nodes and lowers to 24 on more (NICs of 48-96 GB/s: 400 Gb/s class). */
static uint32_t nvls_channels(cfg_gpu g, uint32_t m) {
  if (coll__nccl_arch(g) != COLL_ARCH_BLACKWELL) return 16;
  return m <= 1 ? 24 : m == 2 ? 32 : 24;
}

uint64_t coll__nvls_unit(const coll_spec *s, uint32_t m, uint32_t heads) {
  uint64_t ops = (uint64_t)nvls_channels(s->gpu, m) * heads, S = s->bytes;
  uint64_t chunk = 128 * 1024; /* NCCL_NVLS_CHUNKSIZE */
  if (m <= 1) {                /* enqueue.cc, NCCL_ALGO_NVLS */
    if (S < 64 * ops * chunk && chunk > 65536) chunk = 65536;
    if (S < 8 * ops * chunk && chunk > 32768) chunk = 32768;
    if (S < 2 * ops * chunk && chunk > 16384) chunk = 16384;
  } else { /* NCCL_ALGO_NVLS_TREE: nvlsTreeMaxChunkSize 64 KiB from four nodes
              (Blackwell: 64 KiB, the NIC under the GPU's PCIe switch) */
    if (m >= 4 || coll__nccl_arch(s->gpu) == COLL_ARCH_BLACKWELL) chunk = 65536;
    if (S < 16 * ops * chunk && chunk > 131072) chunk = 131072;
    if (S < 4 * ops * chunk && chunk > 65536) chunk = 65536;
    if (S < ops * chunk && chunk > 32768) chunk = 32768;
  }
  uint64_t unit = ops * chunk;
  return unit < S ? unit : S;
}
