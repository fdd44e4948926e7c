/* The engine's and the sweep's view of MPI: MPI_COMM_WORLD when fabsim is
 * built with MPI (FABSIM_HAVE_MPI), else one rank. Every collective here is
 * blocking and must be called by all ranks in the same order. */
#define _DEFAULT_SOURCE /* syscall */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsim/pdes.h"

#ifdef FABSIM_HAVE_MPI
#include <mpi.h>
#endif
#ifdef __linux__
#include <linux/sched/types.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

bool pdes_comm_built(void) {
#ifdef FABSIM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

bool pdes_comm_launched(void) { return sim_launcher_get().launched; }

/* One rank's all-gather: a copy of its own bytes. */
static void *own_copy(const void *buf, size_t n, size_t *total) {
  *total = n;
  void *out = sim_malloc(n ? n : 1);
  if (n) memcpy(out, buf, n);
  return out;
}

#ifdef FABSIM_HAVE_MPI

/* MPI is process-wide by nature: whether this process initialized it is the
 * one piece of state here (never simulation state). */
static int comm_inited;

/* Every window waits for every rank, so a rank that is runnable but not
 * running stalls all of them. On a machine with more ranks than free cores
 * (four ranks beside other work on CI's 2-core machine) Linux's EEVDF
 * scheduler lets the task on a core finish its time slice (about 3 ms) before
 * a woken rank runs, and each window costs several slices. Asking for the
 * shortest slice (0.1 ms, `sched_attr.sched_runtime` for a normal task, Linux
 * 6.12 and later; ignored by older kernels, failure harmless) lets a rank that
 * has work preempt sooner. Measured on the 2-core machine beside two busy
 * loops and two compilers: 3,000 windows of 4 ranks in 15-21 s before, 0.7-2.8
 * s after. Only scheduling changes: never an event or its order. */
static void comm_short_slice(void) {
#if defined(__linux__) && defined(SYS_sched_setattr)
  struct sched_attr a = {
      .size = sizeof a, .sched_policy = 0 /* SCHED_OTHER */, .sched_runtime = 100000 /* ns */};
  if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) return; /* not supported: the default slice */
#endif
}

int pdes_comm_init(sim_error *err) {
  int flag = 0;
  MPI_Initialized(&flag);
  if (flag) return SIM_OK;
  if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
    return sim_fail(err, SIM_EIO, "MPI_Init failed; is the MPI launcher (mpirun) working?");
  comm_inited = 1;
  if (pdes_comm_size() > 1) comm_short_slice();
  return SIM_OK;
}

void pdes_comm_finalize(void) {
  int flag = 0, done = 0;
  MPI_Initialized(&flag);
  MPI_Finalized(&done);
  if (flag && !done && comm_inited) MPI_Finalize();
}

static bool comm_active(void) {
  int flag = 0, done = 0;
  MPI_Initialized(&flag);
  MPI_Finalized(&done);
  return flag && !done;
}

uint32_t pdes_comm_rank(void) {
  int r = 0;
  if (comm_active()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return (uint32_t)r;
}

uint32_t pdes_comm_size(void) {
  int n = 1;
  if (comm_active()) MPI_Comm_size(MPI_COMM_WORLD, &n);
  return (uint32_t)n;
}

void pdes_comm_barrier(void) {
  if (comm_active()) MPI_Barrier(MPI_COMM_WORLD);
}

void pdes_comm_bcast(void *buf, size_t n) {
  if (!comm_active() || n == 0) return;
  /* In chunks below INT_MAX: MPI counts are int. */
  for (size_t off = 0; off < n;) {
    size_t k = n - off > (1u << 30) ? (1u << 30) : n - off;
    MPI_Bcast((char *)buf + off, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD);
    off += k;
  }
}

uint64_t pdes_comm_sum_u64(uint64_t x) {
  if (!comm_active()) return x;
  uint64_t s = 0;
  MPI_Allreduce(&x, &s, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

void pdes_comm_reduce_sum_u64(const uint64_t *v, uint64_t *out, size_t n) {
  if (!comm_active()) {
    if (out != v) memcpy(out, v, n * sizeof *v);
    return;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (size_t off = 0; off < n;) {
    size_t k = n - off > (1u << 27) ? (1u << 27) : n - off;
    const void *send = rank == 0 && out == v ? MPI_IN_PLACE : (const void *)(v + off);
    MPI_Reduce(send, rank == 0 ? out + off : NULL, (int)k, MPI_UINT64_T, MPI_SUM, 0,
               MPI_COMM_WORLD);
    off += k;
  }
}

void pdes_comm_gather_bytes(const void *buf, size_t n, void ***parts, size_t **lens) {
  uint32_t size = pdes_comm_size(), rank = pdes_comm_rank();
  *parts = NULL;
  *lens = NULL;
  if (size == 1) {
    *parts = sim_calloc(1, sizeof **parts);
    *lens = sim_calloc(1, sizeof **lens);
    (*parts)[0] = sim_malloc(n ? n : 1);
    if (n) memcpy((*parts)[0], buf, n);
    (*lens)[0] = n;
    return;
  }
  /* Point-to-point to rank 0, in rank order: a part may exceed an int count. */
  uint64_t len = n;
  if (rank != 0) {
    MPI_Send(&len, 1, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD);
    for (size_t off = 0; off < n;) {
      size_t k = n - off > (1u << 30) ? (1u << 30) : n - off;
      MPI_Send((const char *)buf + off, (int)k, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
      off += k;
    }
    return;
  }
  *parts = sim_calloc(size, sizeof **parts);
  *lens = sim_calloc(size, sizeof **lens);
  for (uint32_t r = 0; r < size; r++) {
    if (r == 0) {
      len = n;
    } else {
      MPI_Recv(&len, 1, MPI_UINT64_T, (int)r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    char *p = sim_malloc(len ? len : 1);
    if (r == 0) {
      if (n) memcpy(p, buf, n);
    } else {
      for (size_t off = 0; off < len;) {
        size_t k = len - off > (1u << 30) ? (1u << 30) : len - off;
        MPI_Recv(p + off, (int)k, MPI_BYTE, (int)r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        off += k;
      }
    }
    (*parts)[r] = p;
    (*lens)[r] = len;
  }
}

void *pdes_comm_allgather_bytes(const void *buf, size_t n, size_t *total) {
  if (!comm_active()) return own_copy(buf, n, total);
  int size = (int)pdes_comm_size();
  if (n > INT32_MAX) {
    sim_fatal("more than 2 GiB to all-gather from one rank");
  }
  int mine = (int)n, *cnt = sim_malloc(2 * (size_t)size * sizeof *cnt), *disp = cnt + size;
  MPI_Allgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD);
  size_t off = 0;
  for (int r = 0; r < size; r++) {
    if (off > INT32_MAX) {
      sim_fatal("more than 2 GiB to all-gather");
    }
    disp[r] = (int)off;
    off += (size_t)cnt[r];
  }
  char *out = sim_malloc(off ? off : 1);
  MPI_Allgatherv(buf, mine, MPI_BYTE, out, cnt, disp, MPI_BYTE, MPI_COMM_WORLD);
  sim_free(cnt);
  *total = off;
  return out;
}

void pdes_comm_allreduce_u64(uint64_t *v, size_t n, bool max) {
  if (!comm_active() || n == 0) return;
  MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
}

void pdes_comm_allreduce_f64(double *v, size_t n, bool max) {
  if (!comm_active() || n == 0) return;
  MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
}

#else /* one rank */

int pdes_comm_init(sim_error *err) {
  (void)err;
  return SIM_OK;
}
void pdes_comm_finalize(void) {}
uint32_t pdes_comm_rank(void) { return 0; }
uint32_t pdes_comm_size(void) { return 1; }
void pdes_comm_barrier(void) {}
void pdes_comm_bcast(void *buf, size_t n) {
  (void)buf;
  (void)n;
}
uint64_t pdes_comm_sum_u64(uint64_t x) { return x; }
void *pdes_comm_allgather_bytes(const void *buf, size_t n, size_t *total) {
  return own_copy(buf, n, total);
}
void pdes_comm_allreduce_u64(uint64_t *v, size_t n, bool max) {
  (void)v;
  (void)n;
  (void)max;
}
void pdes_comm_allreduce_f64(double *v, size_t n, bool max) {
  (void)v;
  (void)n;
  (void)max;
}
void pdes_comm_reduce_sum_u64(const uint64_t *v, uint64_t *out, size_t n) {
  if (out != v) memcpy(out, v, n * sizeof *v);
}
void pdes_comm_gather_bytes(const void *buf, size_t n, void ***parts, size_t **lens) {
  *parts = sim_calloc(1, sizeof **parts);
  *lens = sim_calloc(1, sizeof **lens);
  (*parts)[0] = sim_malloc(n ? n : 1);
  if (n) memcpy((*parts)[0], buf, n);
  (*lens)[0] = n;
}

#endif
