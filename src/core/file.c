/* Atomic file output: temp name in the same folder, fsync-free rename. */
#include <errno.h>
#include <stdio.h>
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

int sim_write_file_atomic(const char *path, const void *data, size_t len, sim_error *err) {
  char dir[4096], tmp[4200];
  int rc = SIM_OK;
  FILE *f = NULL;
  const char *slash = strrchr(path, '/');
  if (slash) {
    size_t n = (size_t)(slash - path);
    if (n >= sizeof dir) return sim_fail(err, SIM_EIO, "%s: path too long", path);
    memcpy(dir, path, n);
    dir[n] = '\0';
    if ((rc = sim_mkdirs(dir, err)) != SIM_OK) return rc;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  f = fopen(tmp, "wb");
  if (!f) return sim_fail(err, SIM_EIO, "%s: cannot write: %s", tmp, strerror(errno));
  if (len && fwrite(data, 1, len, f) != len) {
    rc = sim_fail(err, SIM_EIO, "%s: write failed: %s", tmp, strerror(errno));
    goto err;
  }
  if (fclose(f) != 0) {
    f = NULL;
    rc = sim_fail(err, SIM_EIO, "%s: write failed: %s", tmp, strerror(errno));
    goto err;
  }
  f = NULL;
  if (rename(tmp, path) != 0) {
    rc = sim_fail(err, SIM_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
    goto err;
  }
  return SIM_OK;
err:
  if (f) fclose(f);
  remove(tmp);
  return rc;
}
