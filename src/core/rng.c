/* xoshiro256** (Blackman & Vigna), seeded through splitmix64. One stream per
 * component: the stream's state depends only on (seed, stream name). */
#include <math.h>

#include "fabsim/core.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t sim_hash_u64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t sim_hash_str(const char *s) {
  uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ULL;
  }
  return sim_hash_u64(h);
}

void sim_rng_init_u64(sim_rng *r, uint64_t seed, uint64_t stream) {
  uint64_t x = seed ^ sim_hash_u64(stream + 0x5851f42d4c957f2dULL);
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
  if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1; /* all-zero state is absorbing */
}

void sim_rng_init(sim_rng *r, uint64_t seed, const char *stream) {
  sim_rng_init_u64(r, seed, sim_hash_str(stream));
}

uint64_t sim_rng_below(sim_rng *r, uint64_t n) {
  /* Lemire's multiply-shift with rejection: unbiased, one multiply usually. */
  unsigned __int128 m = (unsigned __int128)sim_rng_u64(r) * n;
  uint64_t lo = (uint64_t)m;
  if (lo < n) {
    uint64_t threshold = -n % n;
    while (lo < threshold) {
      m = (unsigned __int128)sim_rng_u64(r) * n;
      lo = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

double sim_rng_exp(sim_rng *r, double mean) {
  /* 1 - U is in (0, 1], so the log is finite. */
  return -mean * log(1.0 - sim_rng_uniform(r));
}
