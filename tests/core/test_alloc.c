/* Allocation failure and fatal errors (src/core/alloc.c): the out-of-memory
 * handler gets the bytes asked for; without one, or when it returns, the
 * process says how many bytes and exits 3; sim_fatal formats, prefixes and
 * exits 3; the test hook fails exactly the n-th allocation from now, of every
 * allocating entry point, and counts them. tests/cli/test_oom.sh drives the
 * hook through whole runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabsim/core.h"

static jmp_buf escape;
static size_t oom_size;
static int oom_calls;

/* A handler that does not return: it jumps back into the test. */
static void oom_jump(size_t size) {
  oom_size = size;
  oom_calls++;
  longjmp(escape, 1);
}

static void oom_returns(size_t size) {
  oom_size = size;
  oom_calls++;
}

/* Runs fn in a child with stderr into a pipe: its exit status (-1 if it
 * did not exit) and up to cap-1 bytes of what it wrote. */
static int in_child(void (*fn)(void), char *out, size_t cap) {
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], STDERR_FILENO);
    fn();
    _exit(0); /* fn did not end the process */
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t k;
  while (n + 1 < cap && (k = read(fd[0], out + n, cap - 1 - n)) > 0) n += (size_t)k;
  out[n] = '\0';
  close(fd[0]);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_fail_at(void **state) {
  (void)state;
  sim_set_oom_handler(oom_jump);
  uint64_t before = sim_alloc_count();
  void *a = sim_malloc(8), *b = sim_calloc(2, 8);
  assert_int_equal(sim_alloc_count(), before + 2);
  /* the third allocation from now fails, whichever entry point makes it */
  void *c = NULL, *d = NULL;
  oom_calls = 0;
  sim_alloc_fail_at(3);
  if (setjmp(escape) == 0) {
    c = sim_strdup("one");
    a = sim_realloc(a, 64);
    d = sim_calloc(100, 3); /* the third */
    fail_msg("the third allocation did not fail");
  }
  assert_int_equal(oom_calls, 1);
  assert_int_equal(oom_size, 300);
  assert_null(d);
  /* once: the next ones succeed */
  d = sim_malloc(16);
  assert_non_null(d);
  /* sim_grow and the arena come through the hook too */
  size_t cap = 0;
  int *items = NULL;
  sim_alloc_fail_at(1);
  if (setjmp(escape) == 0) {
    sim_grow((void **)&items, &cap, 5, sizeof *items);
    fail_msg("sim_grow did not fail");
  }
  assert_int_equal(oom_size, 16 * sizeof *items);
  assert_int_equal(cap, 0);
  sim_arena arena;
  sim_arena_init(&arena);
  sim_alloc_fail_at(1);
  if (setjmp(escape) == 0) {
    (void)sim_arena_alloc(&arena, 32);
    fail_msg("the arena did not fail");
  }
  assert_int_equal(oom_calls, 3);
  sim_arena_free(&arena);
  /* 0: none fails */
  sim_alloc_fail_at(0);
  void *e = sim_malloc(1);
  sim_free(e);
  sim_set_oom_handler(NULL);
  sim_free(a);
  sim_free(b);
  sim_free(c);
  sim_free(d);
}

static void default_oom(void) {
  sim_set_oom_handler(NULL);
  sim_alloc_fail_at(1);
  (void)sim_malloc(12345);
}

static void returning_oom(void) {
  sim_set_oom_handler(oom_returns);
  sim_alloc_fail_at(1);
  (void)sim_realloc(NULL, 777);
}

static void overflow_oom(void) {
  sim_set_oom_handler(NULL);
  (void)sim_calloc(SIZE_MAX / 2, 4);
}

static void fatal(void) { sim_fatal("more than %u events pending at once; %s", 7u, "reduce it"); }

static void test_exit_3(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(in_child(default_oom, err, sizeof err), 3);
  assert_string_equal(err,
                      "fabsim: out of memory allocating 12345 bytes; reduce the scenario size "
                      "(cluster.nodes) or run on a machine with more memory\n");
  /* a handler that returns: the default follows */
  assert_int_equal(in_child(returning_oom, err, sizeof err), 3);
  assert_non_null(strstr(err, "out of memory allocating 777 bytes"));
  /* a size that overflows size_t is out of memory too, hook or not */
  assert_int_equal(in_child(overflow_oom, err, sizeof err), 3);
  assert_non_null(strstr(err, "fabsim: out of memory allocating"));
  assert_int_equal(in_child(fatal, err, sizeof err), 3);
  assert_string_equal(err, "fabsim: more than 7 events pending at once; reduce it\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fail_at),
      cmocka_unit_test(test_exit_3),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
