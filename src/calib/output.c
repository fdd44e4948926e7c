/* Where fabsim calibrate's fragment may be written (include/fabsim/calib.h,
 * cal_output_check): checked before the fit, so a bad -o costs nothing,
 * and again just before the write. The write itself goes through a
 * temporary beside the name and rename(2) (sim_write_file_atomic), which
 * replaces the name, never what it points to; this check keeps that
 * rename off anything but a regular file or a new name, as
 * output.database's check does (src/output/db.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fabsim/calib.h"

static const char *kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISFIFO(m)) return "a FIFO";
  return "not a regular file (a socket)";
}

int cal_output_check(const char *path, const cal_run *runs, size_t nruns, sim_error *err) {
  static const char allowed[] = "allowed: a new file name or a regular file";
  char shown[256];
  size_t w = 0;
  for (const unsigned char *c = (const unsigned char *)path; *c && w + 5 < sizeof shown; c++)
    w += (size_t)(*c < 0x20 || *c == 0x7f ? snprintf(shown + w, sizeof shown - w, "\\x%02x", *c)
                                          : snprintf(shown + w, sizeof shown - w, "%c", *c));
  size_t n = strlen(path);
  if (n == 0) return sim_fail(err, SIM_ECONFIG, "-o '': an empty name; %s", allowed);
  if (path[n - 1] == '/')
    return sim_fail(err, SIM_ECONFIG, "%s: names a folder; %s", shown, allowed);
  struct stat st, lst;
  if (lstat(path, &lst) != 0) {
    if (errno == ENOENT) return SIM_OK; /* a new name */
    return sim_fail(err, SIM_ECONFIG, "%s: %s; %s", shown, strerror(errno), allowed);
  }
  if (stat(path, &st) != 0) /* a symlink that points nowhere: renamed over, as a new name */
    return S_ISLNK(lst.st_mode)
               ? SIM_OK
               : sim_fail(err, SIM_ECONFIG, "%s: %s; %s", shown, strerror(errno), allowed);
  if (!S_ISREG(st.st_mode))
    return sim_fail(err, SIM_ECONFIG, "%s: is %s%s; %s", shown,
                    S_ISLNK(lst.st_mode) ? "a symbolic link to " : "", kind_of(st.st_mode),
                    allowed);
  for (size_t i = 0; i < nruns; i++)
    if ((runs[i].dev || runs[i].ino) && runs[i].dev == (uint64_t)st.st_dev &&
        runs[i].ino == (uint64_t)st.st_ino)
      return sim_fail(err, SIM_ECONFIG,
                      "%s: is %s, one of the nccl-tests files read; %s other than an input", shown,
                      runs[i].name, allowed);
  return SIM_OK;
}
