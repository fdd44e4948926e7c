/* Identity test of the parallel engine, run under mpirun with 1, 2 and 4
 * ranks: PHOLD's per-LP state (count, digest of every event's time and
 * origin, last time, RNG state) after a parallel run equals, word for word,
 * the sequential run of the same engine, for several partitions (blocks,
 * round robin, hashed, all but one LP on the last rank, with the sparse
 * exchange; blocks with the dense one too), for a run split in two calls,
 * and for delays that land exactly on the window's end.
 * Exit status 0 when every case matches. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdes/phold.h"

static int failures;

#define CHECK(cond, ...)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "rank %u: FAIL %s:%d: ", pdes_comm_rank(), __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fputc('\n', stderr);                                                            \
      failures++;                                                                     \
    }                                                                                 \
  } while (0)

static uint64_t digest_of(const uint64_t *w, size_t n) {
  uint64_t h = 0;
  for (size_t i = 0; i < n; i++) h = sim_hash_u64(h ^ w[i]);
  return h;
}

/* State after a run to `until` (split at `split` when nonzero). */
static uint64_t windows; /* synchronization windows of the last parallel run */

static void run_state(const pdes_phold_cfg *cfg, bool parallel, const uint32_t *part,
                      simtime_ps split, simtime_ps until, uint64_t *state, uint64_t *events) {
  pdes_phold *m = NULL;
  sim_error err = {0};
  if (pdes_phold_create(&m, cfg, parallel, part, &err) != SIM_OK) {
    fprintf(stderr, "rank %u: %s\n", pdes_comm_rank(), err.msg);
    exit(1);
  }
  uint64_t ev = 0;
  if (split) ev += pdes_phold_run(m, split);
  ev += pdes_phold_run(m, until);
  *events = parallel ? pdes_comm_sum_u64(ev) : ev;
  if (parallel) {
    pdes_stats st;
    pdes_stats_get(pdes_phold_engine(m), &st);
    windows = st.windows;
  }
  pdes_phold_state(m, state);
  pdes_phold_destroy(m);
}

static void check_case(const char *name, const pdes_phold_cfg *cfg, simtime_ps until) {
  uint32_t size = pdes_comm_size(), rank = pdes_comm_rank();
  size_t words = (size_t)cfg->nlps * PDES_PHOLD_STATE_WORDS;
  uint64_t *ref = sim_calloc(words, sizeof *ref), *got = sim_calloc(words, sizeof *got);
  uint64_t ref_events = 0, events = 0;
  run_state(cfg, false, NULL, 0, until, ref,
            &ref_events); /* every rank: the sequential reference */
  uint32_t *part = sim_malloc(cfg->nlps * sizeof *part);
  const char *parts[] = {"blocks", "round-robin", "hashed", "skewed", "blocks, dense exchange"};
  for (int k = 0; k < 5; k++) {
    pdes_phold_cfg c = *cfg;
    c.exchange = k == 4 ? PDES_EXCHANGE_DENSE : PDES_EXCHANGE_SPARSE;
    for (uint32_t i = 0; i < cfg->nlps; i++) {
      if (k == 0 || k == 4) part[i] = (uint32_t)((uint64_t)i * size / cfg->nlps);
      else if (k == 1) part[i] = i % size;
      else if (k == 2) part[i] = (uint32_t)(sim_hash_u64(i + 77) % size);
      else part[i] = i == 0 ? 0 : size - 1;
    }
    for (int split = 0; split < 2; split++) {
      run_state(&c, true, part, split ? until / 3 : 0, until, got, &events);
      if (rank == 0) {
        CHECK(events == ref_events, "%s/%s%s: %" PRIu64 " events, sequential %" PRIu64, name,
              parts[k], split ? " split" : "", events, ref_events);
        CHECK(memcmp(got, ref, words * sizeof *ref) == 0,
              "%s/%s%s: LP state differs (%016" PRIx64 " vs %016" PRIx64 ")", name, parts[k],
              split ? " split" : "", digest_of(got, words), digest_of(ref, words));
      }
    }
  }
  if (rank == 0)
    printf("%-10s %u ranks: %" PRIu64 " events, %" PRIu64 " windows, state digest %016" PRIx64 "\n",
           name, size, ref_events, windows, digest_of(ref, words));
  sim_free(part);
  sim_free(ref);
  sim_free(got);
}

int main(void) {
  sim_error err = {0};
  if (pdes_comm_init(&err) != SIM_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  /* Typical: delays well above the lookahead. */
  pdes_phold_cfg a = {.nlps = 256,
                      .start = 2,
                      .remote = 0.5,
                      .mean_ps = 1000000,
                      .lookahead_ps = 100000,
                      .seed = 7};
  check_case("phold", &a, pdes_phold_horizon(&a, 25000));
  /* Every delay within a few ps of the lookahead: events land on the window's
   * end and many share one picosecond (the tie-break decides). */
  pdes_phold_cfg b = {
      .nlps = 64, .start = 3, .remote = 0.9, .mean_ps = 2, .lookahead_ps = 1000, .seed = 11};
  check_case("edge", &b, pdes_phold_horizon(&b, 20000));
  /* No cross-LP traffic at all; and an LP-per-rank extreme. */
  pdes_phold_cfg c = {
      .nlps = 4, .start = 1, .remote = 0.0, .mean_ps = 5000, .lookahead_ps = 1, .seed = 3};
  check_case("local", &c, pdes_phold_horizon(&c, 1000)); /* one window per event */
  /* Zero lookahead is refused over more than one rank, accepted on one. */
  pdes_phold_cfg z = a;
  z.lookahead_ps = 0;
  pdes_phold *m = NULL;
  int rc = pdes_phold_create(&m, &z, true, NULL, &err);
  if (pdes_comm_size() > 1)
    CHECK(rc == SIM_EINVAL && strstr(err.msg, "lookahead 0"), "L=0: %d %s", rc, err.msg);
  else CHECK(rc == SIM_OK, "L=0 on one rank: %s", err.msg);
  pdes_phold_destroy(m);
  uint64_t bad = pdes_comm_sum_u64((uint64_t)failures);
  uint32_t rank = pdes_comm_rank();
  pdes_comm_finalize();
  if (bad == 0 && rank == 0) printf("identity: all cases equal the sequential run\n");
  return bad ? 1 : 0;
}
