/* The MoE feed-forward's kernels as Megatron-Core runs them (docs/
 * training.md, "Compute"; every figure's source in docs/validation.md,
 * "Small-expert MoE steps").
 *
 * Two mechanisms that a small-expert model (Qwen3-30B-A3B: 128 experts of
 * 768, top 8) meets where a large-expert one barely does:
 *
 * - The experts' GEMMs. Megatron-Core's grouped GEMM (--moe-grouped-gemm)
 *   is Transformer Engine's GroupedLinear, whose PyTorch backend is one
 *   cuBLAS GEMM per expert, round-robin over 4 compute streams
 *   (transformer_engine/pytorch/csrc/extensions/gemm.cpp "For now, we only
 *   have multi-stream cublas backend"; common/util/multi_stream.cpp
 *   num_compute_streams = 4). Each GEMM pays its own tile and wave
 *   quantization and its own fixed time; four run at once.
 * - The host. The dropless all-to-all dispatcher needs the token counts on
 *   the host (the all-to-all's split sizes, the grouped GEMM's m_splits):
 *   megatron/core/transformer/moe/token_dispatcher.py synchronizes the
 *   stream before the expert-parallel all-to-all (cuda_sync_point
 *   "before_ep_alltoall") once per MoE layer's forward. The host can then no
 *   longer run ahead: every kernel up to the next wait starts no earlier than
 *   the host issues it.
 *
 * - The tokens' permutations (Megatron-Core's fused permute, --moe-permute-
 *   fusion): before the dispatch each token's row is copied once per chosen
 *   expert (read T rows of h, write T k); with expert parallelism and more
 *   than one local expert the received rows are sorted by local expert
 *   (sort_chunks_by_idxs: read and write T k rows) and sorted back before
 *   the combine; the un-permute after the combine is the weighted sum
 *   roofline.c already charges. Each backward permutes the gradients the
 *   same way: the same bytes.
 *
 * Pure functions; O(1).
 */
#include <math.h>

#include "workload/wl_internal.h"

/* s: a host wait on the GPU: NVIDIA Technical Blog, "Getting Started with
 * CUDA Graphs" (A. Gray, 2019): a 2.9 us kernel takes 9.6 us with a stream
 * synchronization after each launch, 3.8 us without: 5.8 us a wait */
static const double HOST_WAIT = 9.6e-6 - 3.8e-6;

/* The fused router (Megatron-Core --moe-router-fusion: top-k, softmax and
 * the routing map in one kernel each way): reads the 16-bit logits, writes
 * the fp32 probabilities and the 1-byte routing map per token and expert */
static const double ROUTER_FP32 = 4, ROUTER_MAP = 1;

double wl__host_wait_s(void) { return HOST_WAIT; }

wl__cost wl__expert_gemm(const wl__hw *hw, double G, double m, double n, double k, double out_bytes,
                         double *rounds, double *ops) {
  *rounds = *ops = 0;
  if (!(G > 0)) return (wl__cost){0, 0, 0};
  if (!hw->ggemm_streams || hw->legacy) {
    *rounds = *ops = 1;
    return wl__gemm(hw, true, G, m, n, k, out_bytes);
  }
  double S = WL__GEMM_STREAMS, full = floor(G / S), rest = G - full * S;
  wl__cost r = wl__gemm(hw, true, S, m, n, k, out_bytes);
  wl__cost c = {full * r.t, full * r.mem, 0};
  if (rest > 0) {
    wl__cost x = wl__gemm(hw, true, rest, m, n, k, out_bytes);
    c.t += x.t;
    c.mem += x.mem;
  }
  *rounds = full + (rest > 0 ? 1 : 0);
  *ops = G;
  return c;
}

wl__cost wl__moe_host_bound(const wl__hw *hw, wl__cost a, wl__cost f) {
  if (!hw->host_sync || hw->legacy) return f;
  double host = hw->host_op * (a.ops + f.ops), gpu = a.t + f.t;
  f.t += fmax(0, host - gpu) + HOST_WAIT;
  return f;
}

double wl__moe_permute_bytes(double T, double k, double h, double act, double load, bool sort,
                             double *kernels) {
  double bytes = (1 + k) * T * h * act; /* permute: read T rows, write T k */
  *kernels = 1;
  if (sort) { /* the received rows by local expert, and back before the combine */
    bytes += 2 * (2 * T * k * load * h * act);
    *kernels += 2;
  }
  return bytes;
}

double wl__moe_router_bytes(double T, double E, double act) {
  return T * E * (act + ROUTER_FP32 + ROUTER_MAP);
}
