/* fabsim core: time, errors, allocation, arena, RNG streams, files, the host.
 *
 * Everything here is libc-only and free of mutable globals. Simulated time is
 * integer picoseconds; rates are bits per second; sizes are bytes.
 */
#ifndef FABSIM_CORE_H
#define FABSIM_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- units ------------------------------------------------------------ */

typedef uint64_t simtime_ps; /* simulated time, picoseconds */
typedef uint64_t rate_bps;   /* bits per second */

#define SIM_PS_PER_NS ((simtime_ps)1000)
#define SIM_PS_PER_US ((simtime_ps)1000000)
#define SIM_PS_PER_MS ((simtime_ps)1000000000)
#define SIM_PS_PER_S ((simtime_ps)1000000000000ULL)
#define SIM_TIME_MAX UINT64_MAX
/* The horizon of simulated time: 2^62 ps (53.4 days). No event runs at or
 * past it (ev_run stops there, sim_past_horizon), so every time a run
 * reports is below it and the sum of two such times never wraps. */
#define SIM_HORIZON_PS ((simtime_ps)1 << 62)

/* a + b, saturating at SIM_TIME_MAX (then past the horizon, never wrapped). */
static inline simtime_ps sim_time_add(simtime_ps a, simtime_ps b) {
  return a > SIM_TIME_MAX - b ? SIM_TIME_MAX : a + b;
}

/* Time to put `bytes` on a channel of `bps`, rounded up to a whole
 * picosecond. Exact for any bytes < 2^61 and bps >= 1 (128-bit intermediate). */
simtime_ps sim_serialization_ps(uint64_t bytes, rate_bps bps);

/* Seconds as a double, for reporting only (never for simulated time). */
static inline double sim_ps_to_s(simtime_ps t) { return (double)t * 1e-12; }

/* ---- errors ----------------------------------------------------------- */

/* Recoverable errors are negative codes; messages live in one table. */
#define SIM_ERRNO_MAP(X)              \
  X(EINVAL, -1, "invalid argument")   \
  X(ECONFIG, -2, "invalid scenario")  \
  X(EIO, -3, "input/output error")    \
  X(ERANGE, -4, "value out of range") \
  X(ENOTSUP, -5, "not supported")     \
  X(ENOENT, -6, "no such element")    \
  X(EINTR, -7, "interrupted")         \
  X(EBUSY, -8, "in use by another run")

typedef enum {
  SIM_OK = 0,
#define SIM__ERR_ENUM(name, code, text) SIM_##name = code,
  SIM_ERRNO_MAP(SIM__ERR_ENUM)
#undef SIM__ERR_ENUM
} sim_status;

const char *sim_strerror(int code);

/* A recoverable error: the code and a message a user can act on. The message
 * of a scenario error starts with "file:line:col: ". */
typedef struct sim_error {
  int code;
  char msg[1024];
} sim_error;

/* Sets err (if not NULL) and returns code, so callers can `return sim_fail(...)`. */
int sim_fail(sim_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int sim_vfail(sim_error *err, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* For did-you-mean suggestions: the edit distance between a[0..la) and
 * b[0..lb) with adjacent transpositions counting one (optimal string
 * alignment). Names longer than SIM_SUGGEST_MAX are not typos of ours:
 * SIZE_MAX. O(la x lb), no allocation. */
enum { SIM_SUGGEST_MAX = 64 };
size_t sim_edit_distance(const char *a, size_t la, const char *b, size_t lb);

/* ---- fatal errors ----------------------------------------------------- */

/* What the process cannot recover from (out of memory, a limit of the
 * engine reached): "fabsim: " and the message (printf-like, no newline) on
 * stderr, then exit status 3. atexit handlers run; output files are whole
 * or absent (they are written atomically). The message says how to fix it. */
_Noreturn void sim_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- allocation ------------------------------------------------------- */

/* The one allocation entry point. Out of memory is fatal: the handler runs
 * with the bytes asked for; by default sim_fatal says how many, and the
 * process exits with status 3; so is passing the limit a run sets
 * (sim_alloc_limit). Never returns NULL. */
void *sim_malloc(size_t size);
void *sim_calloc(size_t n, size_t size);
void *sim_realloc(void *p, size_t size);
char *sim_strdup(const char *s);
void sim_free(void *p);

/* Grow *items (capacity *cap, element size elem) to hold at least need. */
void sim_grow(void **items, size_t *cap, size_t need, size_t elem);

/* The out-of-memory handler (Redis zmalloc_set_oom_handler): called with
 * the bytes asked for when an allocation fails. It must not return (exit,
 * abort); if it does, the default follows. NULL: the default. Process-wide:
 * set it at start, before a run. */
typedef void (*sim_oom_handler)(size_t size);
void sim_set_oom_handler(sim_oom_handler h);

/* Test hook (SQLite's faultsim, Lua's ltests.c): the n-th allocation from
 * now fails (n 0: none); sim_alloc_count is how many allocations the
 * process made. The environment variable FABSIM_TEST_ALLOC_FAIL sets it
 * for a whole process (alloc.c): N fails the N-th allocation; "each[:B[:S]]"
 * fails every allocation once, each in a forked child, up to the B-th and
 * then every S-th, and checks each child exits 3. Single-threaded processes
 * only (fabsim is); never under mpirun. */
void sim_alloc_fail_at(uint64_t n);
uint64_t sim_alloc_count(void);

/* The bytes live through the functions above (the allocator's usable size
 * of each block; 0 on a platform without one), and the most at once. A
 * limit (0: none) makes an allocation that takes them past it fatal like
 * out of memory: exit status 3, the message naming `what` (the key and its
 * value: "simulation.memory_limit (1 GiB)"). Process-wide, as the allocator
 * is; O(1) per allocation. */
void sim_alloc_limit(uint64_t bytes, const char *what);
size_t sim_alloc_live(void);
size_t sim_alloc_peak(void);

/* ---- arena ------------------------------------------------------------ */

/* Bump allocator for objects that live as long as a topology or scenario.
 * Freed all at once. Allocations are 16-byte aligned and zeroed. */
typedef struct sim_arena_chunk sim_arena_chunk;
typedef struct sim_arena {
  sim_arena_chunk *head; /* private */
  size_t used;           /* public: bytes handed out */
} sim_arena;

void sim_arena_init(sim_arena *a);
void *sim_arena_alloc(sim_arena *a, size_t size);
char *sim_arena_strdup(sim_arena *a, const char *s);
void sim_arena_free(sim_arena *a);

/* ---- RNG streams ------------------------------------------------------ */

/* xoshiro256** seeded from (seed, stream name) with splitmix64: each
 * component owns its stream, so adding a draw in one never shifts another. */
typedef struct sim_rng {
  uint64_t s[4];
} sim_rng;

void sim_rng_init(sim_rng *r, uint64_t seed, const char *stream);
void sim_rng_init_u64(sim_rng *r, uint64_t seed, uint64_t stream);
/* Uniform integer in [0, n), unbiased (Lemire). n > 0. */
uint64_t sim_rng_below(sim_rng *r, uint64_t n);
/* Exponential with the given mean. */
double sim_rng_exp(sim_rng *r, double mean);

/* Hot draws are inline: they sit on per-packet and per-event paths. */
static inline uint64_t sim__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t sim_rng_u64(sim_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = sim__rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = sim__rotl(s[3], 45);
  return result;
}
/* Uniform in [0, 1), 53 random bits. */
static inline double sim_rng_uniform(sim_rng *r) {
  return (double)(sim_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* Stateless 64-bit mixers for hashing (ECMP, stream ids). */
uint64_t sim_hash_u64(uint64_t x);
uint64_t sim_hash_str(const char *s);

/* ---- counted multisets and sliding windows (counts.c) ------------------- */

/* A multiset of 64-bit values: value -> how many (open addressing, linear
 * probing from sim_hash_u64). A count may drop to 0; its slot stays until
 * the table is rebuilt (on growth, or sim_counts_compact), so slot order,
 * and with it the order sim_counts_at visits values, is a function of the
 * adds and subs alone: deterministic. For windows sliding over a pool,
 * whose values come and go (the analytic backend's transfer times, coll's
 * port loads). */
typedef struct sim_counts {
  uint64_t *key, *count;
  uint8_t *used;
  size_t cap, nused, live; /* slots, slots in use, values with count > 0 */
} sim_counts;

void sim_counts_init(sim_counts *c); /* empty, 64 slots */
void sim_counts_free(sim_counts *c);
void sim_counts_clear(sim_counts *c); /* empty, same capacity */
void sim_counts_add(sim_counts *c, uint64_t v, uint64_t n);
void sim_counts_sub(sim_counts *c, uint64_t v); /* one of v; v must be counted */
/* Rebuild when zero-count slots dominate (more than 2 live + 1024), so a
 * scan over the slots stays O(live values). */
void sim_counts_compact(sim_counts *c);
/* Slot i (0 <= i < cap) holds a value with a count: *v and *n. */
static inline bool sim_counts_at(const sim_counts *c, size_t i, uint64_t *v, uint64_t *n) {
  if (!c->used[i] || c->count[i] == 0) return false;
  *v = c->key[i];
  *n = c->count[i];
  return true;
}
uint64_t sim_counts_max(sim_counts *c); /* the largest counted value; 0 when none (compacts) */

/* [a, b) less [c, d): up to two ranges r[k] = [r[k][0], r[k][1]); returns
 * how many. A window moving from [a, b) to [c, d) loses [a, b) less [c, d)
 * and gains [c, d) less [a, b). */
static inline int sim_range_minus(size_t a, size_t b, size_t c, size_t d, size_t r[2][2]) {
  int k = 0;
  size_t e = b < c ? b : c, f = a > d ? a : d;
  if (a < e) r[k][0] = a, r[k++][1] = e;
  if (f < b) r[k][0] = f, r[k++][1] = b;
  return k;
}

/* ---- numbers for people (fmt.c) --------------------------------------- */

/* Human formatting into buf (returns buf), one rule for every figure a
 * person reads (the rule: fmt.c's head and docs/changes.md): the unit chosen
 * by magnitude so the mantissa sits in [1, 1000) with 4 significant digits
 * (12.35 us, 1.5 GiB, 400 Gb/s, 10 kW, $1.234M), thousands separators past
 * the largest unit and for counts (1,234,567), fractions as percentages with
 * 3 significant digits (52.9%), never e-notation. A figure that is not finite
 * is refused (stderr, exit status 1), never printed as "inf". */
typedef enum sim_unit {
  SIM_UNIT_NUMBER,    /* a plain figure: 0.5291, 12.35, 1,235 */
  SIM_UNIT_COUNT,     /* rounded to an integer: 1,234,567 */
  SIM_UNIT_SECONDS,   /* ps ns us ms s */
  SIM_UNIT_BYTES,     /* B KiB MiB GiB TiB PiB EiB (binary) */
  SIM_UNIT_BITRATE,   /* b/s kb/s Mb/s Gb/s Tb/s Pb/s */
  SIM_UNIT_BYTERATE,  /* B/s kB/s MB/s GB/s TB/s PB/s */
  SIM_UNIT_WATTS,     /* W kW MW GW */
  SIM_UNIT_WATTHOURS, /* mWh Wh kWh MWh GWh */
  SIM_UNIT_USD,       /* $123.4 $12.35K $1.234M $1.5B $2T */
  SIM_UNIT_PERCENT,   /* a fraction: 0.52913 is 52.9% */
  SIM_UNIT_DURATION,  /* seconds as above under a minute, then min, h (under 48), days */
} sim_unit;
const char *sim_fmt(char *buf, size_t n, double v, sim_unit unit);
const char *sim_fmt_count(char *buf, size_t n, uint64_t v);
const char *sim_fmt_bytes(char *buf, size_t n, uint64_t bytes);
const char *sim_fmt_rate(char *buf, size_t n, uint64_t bps);
const char *sim_fmt_seconds(char *buf, size_t n, double s);
const char *sim_fmt_usd(char *buf, size_t n, double usd);
/* "1 switch", "2 switches", "1,024 GPUs": the count and word, plural unless
 * the count is 1 (-s, -es after s/x/ch/sh, -ies after a consonant + y;
 * "leaf|leaves" names an irregular plural). */
const char *sim_fmt_noun(char *buf, size_t n, uint64_t count, const char *word);

/* ---- the host: wall clock, MPI launcher (host.c) ---------------------- */

/* Monotonic wall-clock seconds since an arbitrary origin: for progress lines,
 * timings and benchmarks only, never for simulated time or any output that
 * must be reproducible. */
double sim_wall_s(void);

/* The MPI job a launcher (mpirun/mpiexec of Open MPI, MPICH, a PMI or PMIx
 * launcher such as srun) started this process in, read from the variables
 * it sets. FABSIM_NO_MPI set (to anything but "" or "0") means not
 * launched: a sweep's points run under mpirun but are not its ranks. */
typedef struct sim_launcher {
  bool launched; /* OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK or MPI_LOCALNRANKS set */
  long size;     /* OMPI_COMM_WORLD_SIZE, else PMI_SIZE; 1 when neither (or not launched) */
  long rank;     /* OMPI_COMM_WORLD_RANK, else PMI_RANK, else PMIX_RANK; 0 when none */
} sim_launcher;
sim_launcher sim_launcher_get(void);

/* ---- atomic output ---------------------------------------------------- */

/* Writes `len` bytes to path through a temporary in the same folder and
 * rename(2), creating the folder if needed, so a reader never sees half a
 * file. The temporary (".NAME.XXXXXX") is made by mkstemp: never a name
 * someone could plant a symlink at; removed on failure. */
int sim_write_file_atomic(const char *path, const void *data, size_t len, sim_error *err);
/* The whole file (sim_malloc'd, *n bytes), or NULL with *n = 0 when it
 * cannot be opened. */
void *sim_read_file(const char *path, size_t *n);
/* Every occurrence of `from` in the file at path becomes `to`, the file
 * rewritten atomically (sim_write_file_atomic); a file that cannot be read
 * (or an empty `from`) is left alone: SIM_OK. */
int sim_replace_in_file(const char *path, const char *from, const char *to, sim_error *err);
/* mkdir -p */
int sim_mkdirs(const char *path, sim_error *err);
/* One run per folder: creates dir if needed (*created: it did not exist)
 * and takes an exclusive lock on dir/.fabsim.lock, held until
 * sim_dir_unlock (or the process ends, however it ends). *fd gets the
 * lock's descriptor. SIM_EBUSY when another process holds it (the message
 * names that process), SIM_EIO when the folder cannot be made or locked. */
int sim_dir_lock(const char *dir, int *fd, bool *created, sim_error *err);
/* Releases the lock (fd -1: nothing). remove_dir: a folder this run created
 * and wrote nothing into goes again (the lock file, then the folder if empty). */
void sim_dir_unlock(int fd, const char *dir, bool remove_dir);

/* Test hook: the first time the environment variable FABSIM_TEST_PAUSE
 * equals point, the process removes the variable and stops itself
 * (SIGSTOP) there, so a test can wait for the stopped state and then signal
 * or kill it at a known point instead of after a guessed delay (a signal
 * sent while stopped is handled on SIGCONT). Points, each with fabsim run's
 * Ctrl-C handler installed: "setup" (output.dir taken, the topology not
 * built), "timing" (a job's collectives about to be timed, reuse and
 * symmetric), "simulate" (the first slice that advanced simulated time past
 * 0 has run), "alone" (a job's run alone about to begin), "telemetry" (the
 * simulation over, its telemetry not replayed), "write" (timeseries.csv
 * written, the other files not), "db-commit" (a run's rows are inserted,
 * the transaction not yet committed), "rename" (a file's temporary is
 * whole, not yet renamed). Unset: one getenv. */
void sim_test_pause(const char *point);

#ifdef __cplusplus
}
#endif
#endif
