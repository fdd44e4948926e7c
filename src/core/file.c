/* Files the simulator writes: atomic replacement through a private temporary
 * in the target folder, and the lock that gives one run a folder.
 *
 * Temporaries are created by mkstemp(3) (O_CREAT|O_EXCL, mode 0600, a random
 * name): a symlink or file planted at any name is never opened or followed,
 * and two writers of one path never share a temporary. rename(2) replaces
 * the final name itself, never what a symlink there points to. No fsync: a
 * crash of the machine may lose a file, never leave half of one under its
 * final name. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabsim/core.h"

simtime_ps sim_serialization_ps(uint64_t bytes, rate_bps bps) {
  unsigned __int128 bits_ps = (unsigned __int128)bytes * 8u * SIM_PS_PER_S;
  unsigned __int128 t = (bits_ps + bps - 1) / bps;
  return t > UINT64_MAX ? SIM_TIME_MAX : (simtime_ps)t;
}

int sim_mkdirs(const char *path, sim_error *err) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0) return SIM_OK;
  if (n >= sizeof buf) return sim_fail(err, SIM_EIO, "%s: path too long", path);
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    char c = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return sim_fail(err, SIM_EIO, "%s: cannot create folder: %s", buf, strerror(errno));
    buf[i] = c;
  }
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
    return sim_fail(err, SIM_EIO, "%s: not a folder", path);
  return SIM_OK;
}

/* The mode open(2) would give a new file: 0666 less the umask. umask(2) can
 * only be read by setting it; the value is put back at once. */
static mode_t new_file_mode(void) {
  mode_t m = umask(022);
  umask(m);
  return 0666 & ~m;
}

void sim_test_pause(const char *point) {
  const char *want = getenv("FABSIM_TEST_PAUSE");
  if (!want || !point || strcmp(want, point) != 0) return;
  unsetenv("FABSIM_TEST_PAUSE"); /* once per process, and not in its children */
  raise(SIGSTOP);
}

int sim_write_file_atomic(const char *path, const void *data, size_t len, sim_error *err) {
  char tmp[4200];
  int rc = SIM_OK, fd = -1;
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t dirlen = slash ? (size_t)(slash - path) : 0;
  if (!*base) return sim_fail(err, SIM_EIO, "%s: names a folder, not a file", path);
  if (dirlen + strlen(base) + 16 > sizeof tmp)
    return sim_fail(err, SIM_EIO, "%s: path too long", path);
  if (slash) {
    memcpy(tmp, path, dirlen);
    tmp[dirlen] = '\0';
    if ((rc = sim_mkdirs(tmp, err)) != SIM_OK) return rc;
  }
  /* ".NAME.XXXXXX" beside NAME: same file system, so rename is atomic */
  snprintf(tmp, sizeof tmp, "%.*s%s.%s.XXXXXX", (int)dirlen, path, slash ? "/" : "", base);
  fd = mkstemp(tmp);
  if (fd < 0)
    return sim_fail(err, SIM_EIO, "%s: cannot create a temporary beside it: %s", path,
                    strerror(errno));
  if (fchmod(fd, new_file_mode()) != 0) {
    rc = sim_fail(err, SIM_EIO, "%s: cannot set its mode: %s", tmp, strerror(errno));
    goto err;
  }
  for (size_t done = 0; done < len;) {
    ssize_t k = write(fd, (const char *)data + done, len - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      rc =
          sim_fail(err, SIM_EIO, "%s: write failed: %s", tmp, k < 0 ? strerror(errno) : "no space");
      goto err;
    }
    done += (size_t)k;
  }
  if (close(fd) != 0) {
    fd = -1;
    rc = sim_fail(err, SIM_EIO, "%s: write failed: %s", tmp, strerror(errno));
    goto err;
  }
  fd = -1;
  sim_test_pause("rename"); /* tests: stopped with the whole temporary written */
  if (rename(tmp, path) != 0) {
    rc = sim_fail(err, SIM_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
    goto err;
  }
  return SIM_OK;
err:
  if (fd >= 0) close(fd);
  unlink(tmp);
  return rc;
}

/* A POSIX record lock on DIR/.fabsim.lock: held while the descriptor is open,
 * released by the kernel when the process ends however it ends (kill -9
 * included), visible to other hosts on NFS (lockd). The lock file stays: an
 * unlinked lock file would let two runs lock two different files. */
int sim_dir_lock(const char *dir, int *fd_out, bool *created, sim_error *err) {
  char path[4200];
  struct flock fl;
  struct stat st;
  int rc, fd;
  *fd_out = -1;
  *created = stat(dir, &st) != 0;
  if ((rc = sim_mkdirs(dir, err)) != SIM_OK) return rc;
  if (snprintf(path, sizeof path, "%s/.fabsim.lock", dir) >= (int)sizeof path)
    return sim_fail(err, SIM_EIO, "%s: path too long", dir);
  fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, new_file_mode());
  if (fd < 0)
    return sim_fail(err, SIM_EIO, "%s: cannot create the lock file: %s", path, strerror(errno));
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (fcntl(fd, F_SETLK, &fl) == 0) {
    *fd_out = fd;
    return SIM_OK;
  }
  if (errno == EACCES || errno == EAGAIN) {
    long pid = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK ? (long)fl.l_pid : 0;
    close(fd);
    if (pid > 0)
      return sim_fail(err, SIM_EBUSY, "%s: another fabsim run (process %ld) is writing this folder",
                      dir, pid);
    return sim_fail(err, SIM_EBUSY, "%s: another fabsim run is writing this folder", dir);
  }
  rc = sim_fail(err, SIM_EIO, "%s: cannot lock: %s", path, strerror(errno));
  close(fd);
  return rc;
}

void sim_dir_unlock(int fd, const char *dir, bool remove_dir) {
  char path[4200];
  if (fd < 0) return;
  /* still holding the lock: nobody else can be writing the folder */
  if (remove_dir && snprintf(path, sizeof path, "%s/.fabsim.lock", dir) < (int)sizeof path &&
      unlink(path) == 0)
    rmdir(dir); /* only if empty: anything written stays */
  close(fd);
}

void *sim_read_file(const char *path, size_t *n) {
  *n = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, len = 0;
  char *b = sim_malloc(cap);
  for (size_t k; (k = fread(b + len, 1, cap - len, f)) > 0;) {
    len += k;
    if (len == cap) sim_grow((void **)&b, &cap, cap + 1, 1);
  }
  fclose(f);
  *n = len;
  return b;
}

int sim_replace_in_file(const char *path, const char *from, const char *to, sim_error *err) {
  size_t n = 0, fl = strlen(from), tl = strlen(to);
  char *b = sim_read_file(path, &n);
  if (!b || fl == 0) {
    sim_free(b);
    return SIM_OK;
  }
  size_t cap = n + 1, len = 0;
  char *o = sim_malloc(cap);
  for (size_t i = 0; i < n;) {
    bool hit = i + fl <= n && !memcmp(b + i, from, fl);
    size_t k = hit ? tl : 1;
    sim_grow((void **)&o, &cap, len + k + 1, 1);
    memcpy(o + len, hit ? to : b + i, k);
    len += k;
    i += hit ? fl : 1;
  }
  int rc = sim_write_file_atomic(path, o, len, err);
  sim_free(o);
  sim_free(b);
  return rc;
}
