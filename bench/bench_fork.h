/* Shared by the benchmarks: run one case in a child process so that its CPU
 * time and peak RSS are its own (the parent's setup and earlier cases do not
 * count). Header-only: bench/<name>/ folders each build one executable. */
#ifndef FABSIM_BENCH_FORK_H
#define FABSIM_BENCH_FORK_H

#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Forks, runs fn(arg) in the child (its return value is the exit code) and
 * prints its user CPU seconds (when cpu) and peak RSS. Returns the child's
 * exit code, 2 when it could not run or died on a signal. */
static inline int bench_run_forked(int (*fn)(const void *), const void *arg, int cpu) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 2;
  }
  if (pid == 0) _exit(fn(arg));
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("wait4");
    return 2;
  }
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
  if (rc == 0 && cpu)
    printf("  CPU           %.2f s user, peak RSS %.1f MiB\n",
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_maxrss / 1024.0);
  else if (rc == 0) printf("  peak RSS      %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
  return rc;
}

#endif
