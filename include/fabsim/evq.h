/* An event queue generated per key type: a calendar queue whose current day
 * is a 4-ary min-heap. Both event engines use it (src/core/ev.c with 16-byte
 * keys, src/pdes/pdes.c with 24-byte ones); it is a template, so that each
 * engine keeps its own key layout and its comparison is inlined into the
 * sifts (no comparator called through a pointer, no element size known only
 * at run time). Include it once per key type:
 *
 *   #define EVQ_NAME ev__q                  the queue type and function prefix
 *   #define EVQ_KEY ev__key                 the key, copied by value
 *   #define EVQ_LESS(a, b) ((a) < (b))      strict order of two keys (values)
 *   #define EVQ_TIME(k) ((simtime_ps)((k) >> 64))   the key's time
 *   #define EVQ_SIFT_TOP_DOWN               optional: the top-down sift
 *   #include "fabsim/evq.h"
 *
 * which defines the types EVQ_NAME and EVQ_NAME_vec and static
 * functions EVQ_NAME_insert, _refill, _pop, _replace_top, _near, _take_all,
 * _destroy; the parameters are #undef'd at the end.
 *
 * Order: keys leave in EVQ_LESS order, which must be total over the keys
 * pending together (no two keys equal) and agree with EVQ_TIME (a < b when
 * time(a) < time(b)). Keys of equal time are then ordered by what the key
 * carries beyond its time (ev: the insertion sequence; pdes: the sending LP,
 * then that LP's send count), never by the queue's shape, its tiers, or the
 * order of inserts: the pop order is the sort of the keys.
 *
 * Tiers
 *   - heap: every pending key with time < near_end, a 4-ary min-heap;
 *     heap + 1 is 64-byte aligned (the 4 children of a node share one line
 *     for 16-byte keys).
 *   - buckets: bucket j holds, unsorted, the keys with time in
 *     [far_base + j*W, far_base + (j+1)*W), W = 2^shift; buckets below cur
 *     are empty, and near_end = far_base + cur*W.
 *   - overflow: unsorted keys with time >= far_base + nb*W.
 *   When the heap runs dry, bucket cur is heapified into it (O(k)); when the
 *   buckets run out, the overflow is spread over a new set of buckets whose
 *   width comes from its time span and count (about EVQ_BUCKET_TARGET keys
 *   each). After _refill the minimum is heap[0].
 * Cost: insert O(1) amortized (into the heap O(log4 k)); pop O(log4 k), k the
 * current bucket's size; never worse than one heap.
 *
 * Fields: the owner engine may read heap[0 .. n) (heap[0] after _refill is
 * the minimum); everything else is private. A zeroed struct is an empty
 * queue; _destroy frees it. Storage grows through sim_malloc/sim_grow
 * (out-of-memory is fatal there).
 */
#ifndef FABSIM_EVQ_H
#define FABSIM_EVQ_H
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "fabsim/core.h"

enum { EVQ_BUCKET_TARGET = 16, EVQ_MAX_BUCKETS = 1 << 16 };
#define EVQ__CAT2(a, b) a##b
#define EVQ__CAT(a, b) EVQ__CAT2(a, b)
/* The sifts, refill and the cold paths are plain static functions: the
 * compiler inlines them where it pays, as it did for the engines' own
 * copies (static inline made it copy the sift into every caller: 0.2 M more
 * branch mispredictions per 2 M PHOLD events under callgrind). Unused ones
 * draw no warning. */
#define EVQ__FN static __attribute__((unused))
#endif

#if !defined(EVQ_NAME) || !defined(EVQ_KEY) || !defined(EVQ_LESS) || !defined(EVQ_TIME)
#error "define EVQ_NAME, EVQ_KEY, EVQ_LESS and EVQ_TIME before including fabsim/evq.h"
#endif

#define EVQ__F(name) EVQ__CAT(EVQ_NAME, name)
#define EVQ__VEC EVQ__F(_vec)

typedef struct EVQ__VEC {
  EVQ_KEY *k;
  size_t n, cap;
} EVQ__VEC;

typedef struct EVQ_NAME {
  /* public (read-only): the heap tier; heap[0] is the minimum after _refill */
  EVQ_KEY *heap;
  size_t n;
  /* private */
  void *heap_mem;
  size_t cap;
  simtime_ps near_end, far_base;
  EVQ__VEC *buckets;
  size_t nb, cur, buckets_cap;
  unsigned shift;
  EVQ__VEC overflow;
} EVQ_NAME;

EVQ__FN void EVQ__F(_destroy)(EVQ_NAME *q) {
  for (size_t i = 0; i < q->buckets_cap; i++) sim_free(q->buckets[i].k);
  sim_free(q->buckets);
  sim_free(q->overflow.k);
  sim_free(q->heap_mem);
  memset(q, 0, sizeof *q);
}

static inline void EVQ__F(_vec_push)(EVQ__VEC *v, EVQ_KEY k) {
  if (v->n == v->cap) sim_grow((void **)&v->k, &v->cap, v->n + 1, sizeof *v->k);
  v->k[v->n++] = k;
}

/* Is time t in the heap tier (a key at t may replace the top)? */
static inline bool EVQ__F(_near)(const EVQ_NAME *q, simtime_ps t) { return t < q->near_end; }

/* ---- heap tier ----------------------------------------------------------------- */

/* Grow so that heap[1] sits on a 64-byte line boundary. */
EVQ__FN void EVQ__F(_reserve)(EVQ_NAME *q, size_t need) {
  if (need <= q->cap) return;
  size_t cap = q->cap ? q->cap : 256;
  while (cap < need) cap *= 2;
  void *mem = sim_malloc(cap * sizeof(EVQ_KEY) + 128);
  uintptr_t line = ((uintptr_t)mem + 64 + 63) & ~(uintptr_t)63;
  EVQ_KEY *heap = (EVQ_KEY *)(line - sizeof(EVQ_KEY));
  if (q->n) memcpy(heap, q->heap, q->n * sizeof *heap);
  sim_free(q->heap_mem);
  q->heap_mem = mem;
  q->heap = heap;
  q->cap = cap;
}

/* Place x in the hole at i (x >= every ancestor of i). */
#ifdef EVQ_SIFT_TOP_DOWN
/* Top-down: move the smallest child up while it is below x; stops as soon as
 * x fits. The parallel engine's sift for its 24-byte struct keys (compared
 * field by field, with branches), as before the two queues were merged: the
 * bottom-up one ran 10 % fewer instructions there but more mispredicted
 * branches, and measured slower (docs/performance.md, "One event queue for
 * both engines"). */
EVQ__FN void EVQ__F(_sift_down)(EVQ_KEY *heap, size_t n, size_t i, EVQ_KEY x) {
  for (;;) {
    size_t c = (i << 2) + 1;
    if (c >= n) break;
    size_t best = c, end = c + 4 < n ? c + 4 : n;
    for (size_t j = c + 1; j < end; j++)
      if (EVQ_LESS(heap[j], heap[best])) best = j;
    if (!EVQ_LESS(heap[best], x)) break;
    heap[i] = heap[best];
    i = best;
  }
  heap[i] = x;
}
#else
/* Bottom-up (Floyd), the default: walk the hole down along the smallest
 * child to a leaf without comparing against x, then sift x up from there;
 * new keys usually belong low. The sequential engine's, for 128-bit integer
 * keys (branch-free compares). */
EVQ__FN void EVQ__F(_sift_down)(EVQ_KEY *heap, size_t n, size_t i, EVQ_KEY x) {
  size_t top = i;
  for (;;) {
    size_t c = (i << 2) + 1;
    if (c + 4 <= n) {
      size_t a = EVQ_LESS(heap[c + 1], heap[c]) ? c + 1 : c;
      size_t b = EVQ_LESS(heap[c + 3], heap[c + 2]) ? c + 3 : c + 2;
      size_t best = EVQ_LESS(heap[b], heap[a]) ? b : a;
      heap[i] = heap[best];
      i = best;
    } else {
      if (c >= n) break;
      size_t best = c;
      for (size_t j = c + 1; j < n; j++)
        if (EVQ_LESS(heap[j], heap[best])) best = j;
      heap[i] = heap[best];
      i = best;
    }
  }
  while (i > top) {
    size_t parent = (i - 1) >> 2;
    if (!EVQ_LESS(x, heap[parent])) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = x;
}
#endif

/* Remove heap[0] (n > 0). */
EVQ__FN void EVQ__F(_pop)(EVQ_NAME *q) {
  assert(q->n > 0);
  q->n--;
  if (q->n > 0) EVQ__F(_sift_down)(q->heap, q->n, 0, q->heap[q->n]);
}

/* Replace heap[0] by x, with _near(q, time(x)): one sift instead of a pop and
 * an insert (an engine whose running event's key is still at the top). */
static inline void EVQ__F(_replace_top)(EVQ_NAME *q, EVQ_KEY x) {
  assert(q->n > 0 && EVQ_TIME(x) < q->near_end);
  EVQ__F(_sift_down)(q->heap, q->n, 0, x);
}

/* Move a bucket's keys into the (empty) heap and heapify. O(k). */
EVQ__FN void EVQ__F(_load)(EVQ_NAME *q, EVQ__VEC *v) {
  assert(q->n == 0);
  EVQ__F(_reserve)(q, v->n);
  memcpy(q->heap, v->k, v->n * sizeof *v->k);
  q->n = v->n;
  v->n = 0;
  if (q->n > 1)
    for (size_t i = (q->n - 2) >> 2; i != SIZE_MAX; i--)
      EVQ__F(_sift_down)(q->heap, q->n, i, q->heap[i]);
}

/* ---- tiers ------------------------------------------------------------------------ */

/* Place a key in whichever tier covers its time. */
static inline void EVQ__F(_insert)(EVQ_NAME *q, EVQ_KEY x) {
  simtime_ps t = EVQ_TIME(x);
  if (t < q->near_end) {
    EVQ__F(_reserve)(q, q->n + 1);
    size_t i = q->n++;
    while (i > 0) {
      size_t parent = (i - 1) >> 2;
      if (!EVQ_LESS(x, q->heap[parent])) break;
      q->heap[i] = q->heap[parent];
      i = parent;
    }
    q->heap[i] = x;
    return;
  }
  uint64_t idx = (t - q->far_base) >> q->shift;
  EVQ__F(_vec_push)(idx < q->nb ? &q->buckets[idx] : &q->overflow, x);
}

/* The buckets are exhausted: spread the overflow over a fresh set sized from
 * its span and count. Every key moves once per rebuild. O(overflow + nb). */
EVQ__FN void EVQ__F(_rebuild)(EVQ_NAME *q) {
  EVQ__VEC *o = &q->overflow;
  assert(o->n > 0 && q->n == 0);
  simtime_ps lo = SIM_TIME_MAX, hi = 0;
  for (size_t i = 0; i < o->n; i++) {
    simtime_ps t = EVQ_TIME(o->k[i]);
    if (t < lo) lo = t;
    if (t > hi) hi = t;
  }
  uint64_t span = hi - lo + 1;
  uint64_t width = (uint64_t)((double)span * EVQ_BUCKET_TARGET / (double)o->n);
  unsigned shift = 0;
  while (shift < 63 && (1ULL << (shift + 1)) <= width) shift++;
  uint64_t nb = (span >> shift) + 1;
  if (nb > EVQ_MAX_BUCKETS) nb = EVQ_MAX_BUCKETS;
  if (nb > q->buckets_cap) {
    q->buckets = sim_realloc(q->buckets, nb * sizeof *q->buckets);
    memset(q->buckets + q->buckets_cap, 0, (nb - q->buckets_cap) * sizeof *q->buckets);
    q->buckets_cap = nb;
  }
  q->nb = nb;
  q->cur = 0;
  q->shift = shift;
  q->far_base = lo;
  q->near_end = lo;
  /* Swap the overflow out so that keys beyond the new range land in a fresh one. */
  EVQ__VEC old = *o;
  o->k = NULL;
  o->n = o->cap = 0;
  for (size_t i = 0; i < old.n; i++) EVQ__F(_insert)(q, old.k[i]);
  if (o->cap == 0) { /* nothing spilled: keep the old storage for next time */
    *o = old;
    o->n = 0;
  } else {
    sim_free(old.k);
  }
}

/* Make heap[0] the minimum pending key. Returns false if nothing is pending. */
EVQ__FN bool EVQ__F(_refill)(EVQ_NAME *q) {
  while (q->n == 0) {
    if (q->cur < q->nb) {
      EVQ__VEC *b = &q->buckets[q->cur++];
      simtime_ps off = (simtime_ps)q->cur << q->shift;
      q->near_end = off > SIM_TIME_MAX - q->far_base ? SIM_TIME_MAX : q->far_base + off;
      if (b->n) EVQ__F(_load)(q, b);
    } else if (q->overflow.n) {
      EVQ__F(_rebuild)(q);
    } else {
      return false;
    }
  }
  return true;
}

/* _refill with its common case inline: the heap tier is not empty. */
static inline bool EVQ__F(_ready)(EVQ_NAME *q) { return q->n > 0 || EVQ__F(_refill)(q); }

/* Append every pending key, in no particular order, to *all and empty the
 * queue (its tiers stay as they are: _insert puts keys back). O(n + nb). */
EVQ__FN void EVQ__F(_take_all)(EVQ_NAME *q, EVQ__VEC *all) {
  for (size_t i = 0; i < q->n; i++) EVQ__F(_vec_push)(all, q->heap[i]);
  q->n = 0;
  for (size_t b = 0; b < q->nb; b++) {
    for (size_t i = 0; i < q->buckets[b].n; i++) EVQ__F(_vec_push)(all, q->buckets[b].k[i]);
    q->buckets[b].n = 0;
  }
  for (size_t i = 0; i < q->overflow.n; i++) EVQ__F(_vec_push)(all, q->overflow.k[i]);
  q->overflow.n = 0;
}

#undef EVQ__VEC
#undef EVQ__F
#undef EVQ_NAME
#undef EVQ_KEY
#undef EVQ_LESS
#undef EVQ_TIME
#undef EVQ_SIFT_TOP_DOWN
