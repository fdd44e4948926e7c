/* Pipeline schedules: the order in which one GPU stage runs the forward and
 * backward chunks of its micro-batches (the executor adds the dependencies
 * between stages; a stage runs its list in order).
 *
 * 1f1b (Narayanan et al. 2021, sec. 2.2.1): min(pp - s - 1, m) warm-up
 * forwards, then one forward and one backward alternately, then the
 * remaining backwards. With equal forward and backward times tf, tb and
 * free communication every stage idles (p - 1)(tf + tb) of a step of
 * (m + p - 1)(tf + tb): the bubble is (p-1)/(m+p-1) of the step.
 *
 * interleaved (sec. 2.2.2; Megatron-LM's schedule with virtual pipeline
 * stages): each GPU holds v chunks of L/(v p) layers, chunk c of stage s
 * being virtual stage c p + s. Micro-batches go in groups of p: the i-th
 * forward of a stage is chunk (i / p) mod v, the i-th backward chunk
 * v - 1 - (i / p) mod v; warm-up 2 (p - s - 1) + (v - 1) p forwards (at
 * most v m), then one forward and one backward alternately, then the rest.
 * A chunk takes 1/v of a stage's time, so the bubble is (p-1)(tf+tb)/v of
 * m (tf + tb) of work: (p-1)/(v m + p - 1) of the step. m must be a
 * multiple of p.
 *
 * dualpipe (DeepSeek-V3 technical report, arXiv 2412.19437, sec. 3.2.1,
 * and its public schedule, github.com/deepseek-ai/DualPipe): micro-batches
 * enter from both ends, m/2 each; GPU s holds stage s of the forward
 * direction and stage p - 1 - s of the reverse one. Phase 0 of a GPU is its
 * forward-direction chunk on the first half of the GPUs and its
 * reverse-direction chunk on the second half. With H = p/2 and
 * h = min(s, p - 1 - s), the steps:
 *   1  2 (H - h - 1) x F0
 *   2  (h + 1) x (F0 F1)
 *   3  (H - h - 1) x (B1 deferring its W, W, F1)
 *   4  (m/2 - p + h + 1) x (F0&B1, F1&B0); the two middle GPUs run the
 *      first F0, B1 one after the other
 *   5  (H - h - 1) x (B1, F1&B0)
 *   6  (h + 1) x (B1 B0), the second half of them deferring W
 *   7  (H - h - 1) x (W, B0 deferring its W)
 *   8  (h + 1) x W
 * F&B is a forward and a backward chunk overlapped: the DAG interleaves
 * their computations so the one's in-layer communication (expert
 * dispatch/combine, tensor-parallel collectives) runs under the other's
 * compute. A deferred W (Qi et al., "Zero Bubble Pipeline Parallelism",
 * ICLR 2024) is the weight-gradient half of a backward, run later from a
 * first-in first-out queue. The report's bubble (Table 2) is
 * (p/2 - 1)(F&B + B - 3W) per GPU, B the whole backward of a chunk.
 *
 * Cost: O(ops) = O(v m) per stage.
 */
#include "workload/wl_internal.h"

typedef struct sched {
  wl__op *out;
  size_t n;
} sched;

static void op(sched *q, uint8_t kind, uint8_t c, uint8_t c2, bool zb) {
  if (q->out) q->out[q->n] = (wl__op){.kind = kind, .c = c, .c2 = c2, .zb = zb};
  q->n++;
}

static void one_f_one_b(sched *q, const wl_parallel *p, uint32_t s) {
  uint32_t m = p->micro_batches, warm = p->pp - s - 1 < m ? p->pp - s - 1 : m;
  for (uint32_t j = 0; j < warm; j++) op(q, WL__OP_F, 0, 0, false);
  for (uint32_t i = 0; i + warm < m; i++) {
    op(q, WL__OP_F, 0, 0, false);
    op(q, WL__OP_B, 0, 0, false);
  }
  for (uint32_t i = 0; i < warm; i++) op(q, WL__OP_B, 0, 0, false);
}

static void interleaved(sched *q, const wl_parallel *p, uint32_t s) {
  uint64_t v = p->vstages, pp = p->pp, total = v * p->micro_batches;
  uint64_t warm = 2 * (pp - s - 1) + (v - 1) * pp;
  if (warm > total) warm = total;
#define FCHUNK(i) ((uint8_t)(((i) / pp) % v))
#define BCHUNK(i) ((uint8_t)(v - 1 - ((i) / pp) % v))
  for (uint64_t i = 0; i < warm; i++) op(q, WL__OP_F, FCHUNK(i), 0, false);
  for (uint64_t i = 0; i + warm < total; i++) {
    op(q, WL__OP_F, FCHUNK(warm + i), 0, false);
    op(q, WL__OP_B, BCHUNK(i), 0, false);
  }
  for (uint64_t i = total - warm; i < total; i++) op(q, WL__OP_B, BCHUNK(i), 0, false);
#undef FCHUNK
#undef BCHUNK
}

static void dualpipe(sched *q, const wl_parallel *p, uint32_t s) {
  uint32_t pp = p->pp, H = pp / 2, h = s < pp - 1 - s ? s : pp - 1 - s;
  uint32_t half = p->micro_batches / 2;
  uint8_t second = s >= H; /* phase ph is chunk ph ^ second */
  uint8_t c0 = second, c1 = (uint8_t)(1 - second);
  bool middle = s == H - 1 || s == H;
  for (uint32_t i = 0; i < 2 * (H - h - 1); i++) op(q, WL__OP_F, c0, 0, false);
  for (uint32_t i = 0; i < h + 1; i++) {
    op(q, WL__OP_F, c0, 0, false);
    op(q, WL__OP_F, c1, 0, false);
  }
  for (uint32_t i = 0; i < H - h - 1; i++) {
    op(q, WL__OP_B, c1, 0, true);
    op(q, WL__OP_W, 0, 0, false);
    op(q, WL__OP_F, c1, 0, false);
  }
  for (uint32_t i = 0; i < half - pp + h + 1; i++) {
    if (i == 0 && middle) {
      op(q, WL__OP_F, c0, 0, false);
      op(q, WL__OP_B, c1, 0, false);
    } else {
      op(q, WL__OP_FB, c0, c1, false);
    }
    op(q, WL__OP_FB, c1, c0, false);
  }
  for (uint32_t i = 0; i < H - h - 1; i++) {
    op(q, WL__OP_B, c1, 0, false);
    op(q, WL__OP_FB, c1, c0, false);
  }
  bool zb = false;
  for (uint32_t i = 0; i < h + 1; i++) {
    if (i == (h + 1) / 2 && h % 2 == 1) zb = true;
    op(q, WL__OP_B, c1, 0, zb);
    if (i == (h + 1) / 2 && h % 2 == 0) zb = true;
    op(q, WL__OP_B, c0, 0, zb);
  }
  for (uint32_t i = 0; i < H - h - 1; i++) {
    op(q, WL__OP_W, 0, 0, false);
    op(q, WL__OP_B, c0, 0, true);
  }
  for (uint32_t i = 0; i < h + 1; i++) op(q, WL__OP_W, 0, 0, false);
}

size_t wl__schedule(const wl_parallel *p, uint32_t s, wl__op *out) {
  sched q = {out, 0};
  switch (p->schedule) {
  case CFG_SCHED_INTERLEAVED: interleaved(&q, p, s); break;
  case CFG_SCHED_DUALPIPE: dualpipe(&q, p, s); break;
  case CFG_SCHED_1F1B: one_f_one_b(&q, p, s); break;
  }
  return q.n;
}
