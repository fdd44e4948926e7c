/* fabsim workload: one GPU's kernels, timed as the training step times them
 * (src/workload/roofline.c, gemm.c, attention.c), for the serving model
 * (src/infer): a GEMM from its shape, the attention core of queries over a
 * key/value context, an element-wise pass, the launch gap. One roofline:
 * the serving model composes these, it never times a kernel itself.
 *
 * A handle is made from a scenario (cluster.gpu, the precision, the
 * efficiencies, workload.cuda_graphs) and is read-only after. O(1) per call.
 */
#ifndef FABSIM_WL_KERNELS_H
#define FABSIM_WL_KERNELS_H

#include <stdbool.h>

#include "fabsim/config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wl_kernels wl_kernels;

wl_kernels *wl_kernels_new(const cfg_scenario *cfg);
void wl_kernels_free(wl_kernels *k);

/* b GEMMs C[m x n] = A[m x k] B[k x n] in one kernel at the scenario's
 * precision (16 bits: lowp false), as src/workload/gemm.c times them (tile
 * and wave quantization, split-K, the measured plateau, bound by its bytes
 * where they take longer: a decode's skinny GEMM reads its weights). Seconds,
 * no launch gap; *mem_bound (may be NULL): its bytes set the time. */
double wl_kernels_gemm_s(const wl_kernels *k, bool lowp, double b, double m, double n, double kk,
                         bool *mem_bound);
/* The attention core (FlashAttention) of `seqs` sequences on this GPU:
 * `heads` query heads and `kv_heads` key/value heads of width hd; q_tokens
 * queries in all, appended to contexts so that each query attends to the
 * keys before it and itself: `pairs` query-key pairs in all (a sequence of
 * q new queries after c cached tokens: q c + q (q + 1) / 2), kv_tokens
 * keys and values read (sum of c + q), of kv_bytes each element.
 * FLOPs 4 x pairs x heads x hd at the FlashAttention papers' measured share
 * of the 16-bit peak at context `ctx` (attention.c, with its wave
 * quantization), against the bytes: Q and O (2 q_tokens heads hd x the
 * activation bytes) and K, V (2 kv_tokens kv_heads hd kv_bytes). Seconds,
 * no launch gap; *mem_bound as above. */
double wl_kernels_attention_s(const wl_kernels *k, double seqs, double q_tokens, double pairs,
                              double kv_tokens, double ctx, double heads, double kv_heads,
                              double hd, double kv_bytes, bool *mem_bound);
/* An element-wise pass moving `bytes` through HBM (seconds, no launch gap). */
double wl_kernels_eltwise_s(const wl_kernels *k, double bytes);
/* The launch gap of one kernel (0.9 us from a stream, 0.5 us from a CUDA
 * graph; 0 under workload.compute_efficiency). */
double wl_kernels_gap_s(const wl_kernels *k);
/* Bytes of an activation element (2; fp32 4) and the achievable HBM bytes/s. */
double wl_kernels_act_bytes(const wl_kernels *k);
double wl_kernels_hbm(const wl_kernels *k);

#ifdef __cplusplus
}
#endif
#endif
