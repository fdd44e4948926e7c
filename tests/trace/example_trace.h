/* The example job of examples/traces/ (tools/chakra_gen.c writes it; the
 * trace tests check the checked-in files are exactly its output and run it).
 *
 * 8 ranks (2 nodes x 4 GPUs in examples/trace.yaml), one iteration:
 *   1 forward   compute 100 us (rank 3: 150 us: the others wait for it)
 *   2 AllReduce over every rank (no pg_name), 64 MiB from each rank
 *   3 backward  compute 200 us
 *   4 AllGather over process group "tp0" = ranks 0-3 only, 8 MiB from each
 *   5 rank 0 sends 16 MiB to rank 4 (tag 7), rank 4 receives it
 *   6 optimizer compute 50 us
 * So the iteration is 150 + t(AllReduce) + 200 + t(AllGather) + t(send) + 50
 * us, each t the operation's time alone (ranks 0 and 4 end last). Compute
 * nodes also carry num_ops and tensor_size (workload.trace.compute roofline).
 */
#ifndef FABSIM_TEST_EXAMPLE_TRACE_H
#define FABSIM_TEST_EXAMPLE_TRACE_H
#include "fabsim/trace.h"

enum {
  EX_RANKS = 8,
  EX_FWD_US = 100,
  EX_FWD_SLOW_US = 150, /* rank 3 */
  EX_BWD_US = 200,
  EX_OPT_US = 50,
  EX_AG_RANKS = 4
};
#define EX_AR_BYTES (64ull << 20)
#define EX_AG_BYTES (8ull << 20) /* per rank: S = 4 x this */
#define EX_P2P_BYTES (16ull << 20)
#define EX_FWD_OPS 60000000000ull /* num_ops of the forward node */
#define EX_BWD_OPS 120000000000ull
#define EX_OPT_OPS 1000000000ull
#define EX_TENSOR_BYTES (64ull << 20) /* tensor_size of each compute node */

/* Rank r's nodes (at most 6) into n; returns how many. */
static inline size_t ex_nodes(uint32_t r, trc_write_node *n) {
  static const uint64_t d1[] = {1}, d2[] = {2}, d3[] = {3}, d4[] = {4}, d5[] = {5};
  size_t k = 0;
  n[k++] = (trc_write_node){.id = 1,
                            .name = "forward",
                            .kind = TRC_COMPUTE,
                            .duration_us = r == 3 ? EX_FWD_SLOW_US : EX_FWD_US,
                            .num_ops = EX_FWD_OPS,
                            .tensor_size = EX_TENSOR_BYTES};
  n[k++] = (trc_write_node){.id = 2,
                            .name = "nccl:all_reduce",
                            .kind = TRC_COLL,
                            .comm_type = TRC_ALL_REDUCE,
                            .bytes = EX_AR_BYTES,
                            .deps = d1,
                            .ndeps = 1};
  n[k++] = (trc_write_node){.id = 3,
                            .name = "backward",
                            .kind = TRC_COMPUTE,
                            .duration_us = EX_BWD_US,
                            .num_ops = EX_BWD_OPS,
                            .tensor_size = EX_TENSOR_BYTES,
                            .deps = d2,
                            .ndeps = 1};
  bool ag = r < EX_AG_RANKS;
  if (ag)
    n[k++] = (trc_write_node){.id = 4,
                              .name = "nccl:all_gather",
                              .kind = TRC_COLL,
                              .comm_type = TRC_ALL_GATHER,
                              .bytes = EX_AG_BYTES,
                              .pg_name = "tp0",
                              .deps = d3,
                              .ndeps = 1};
  bool p2p = r == 0 || r == 4;
  if (p2p)
    n[k++] = (trc_write_node){.id = 5,
                              .name = r == 0 ? "nccl:send" : "nccl:recv",
                              .kind = r == 0 ? TRC_SEND : TRC_RECV,
                              .bytes = EX_P2P_BYTES,
                              .peer = r == 0 ? 4 : 0,
                              .tag = 7,
                              .deps = ag ? d4 : d3,
                              .ndeps = 1};
  n[k++] = (trc_write_node){.id = 6,
                            .name = "optimizer",
                            .kind = TRC_COMPUTE,
                            .duration_us = EX_OPT_US,
                            .num_ops = EX_OPT_OPS,
                            .tensor_size = EX_TENSOR_BYTES,
                            .deps = p2p  ? d5
                                    : ag ? d4
                                         : d3,
                            .ndeps = 1};
  return k;
}

/* Rank r's trace as Chakra ET bytes (sim_free). */
static inline uint8_t *ex_trace(uint32_t r, size_t *len) {
  trc_write_node n[6];
  size_t k = ex_nodes(r, n);
  return trc_write("0.0.4", n, k, len);
}
#endif
