/* The argv helper: every verb's command line read by one table-driven loop,
 * so that options, values, --help and the usage messages behave alike. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

const char cli_one_scenario[] = "fabsim: one scenario file only; '%s' is a second (see --help)\n";

/* The option s names, and its inline value ("--set=k=v") if any. */
static const cli_opt *find_opt(const cli_argv *spec, const char *s, const char **inline_value) {
  *inline_value = NULL;
  for (size_t i = 0; i < spec->nopts; i++) {
    const cli_opt *o = &spec->opts[i];
    if (!strcmp(s, o->name) || (o->alias && !strcmp(s, o->alias))) return o;
    size_t n = strlen(o->name);
    if (o->inline_value && !strncmp(s, o->name, n) && s[n] == '=') {
      *inline_value = s + n + 1;
      return o;
    }
  }
  return NULL;
}

/* Whether c is the letter of a short option with a value ("-s": 's'). */
static bool short_value_letter(const cli_argv *spec, char c) {
  for (size_t i = 0; i < spec->nopts; i++) {
    const char *a = spec->opts[i].alias;
    if (spec->opts[i].value && a && a[0] == '-' && a[1] == c && a[2] == '\0') return true;
  }
  return false;
}

/* A usage message on stderr: the template with its one %s replaced by arg
 * (templates are data, not format strings). Returns CLI_BAD_INPUT. */
static int usage(const char *tmpl, const char *arg) {
  const char *at = strstr(tmpl, "%s");
  if (!at) {
    fputs(tmpl, stderr);
    return CLI_BAD_INPUT;
  }
  fprintf(stderr, "%.*s%s%s", (int)(at - tmpl), tmpl, arg, at + 2);
  return CLI_BAD_INPUT;
}

static int usage_error(const cli_argv *spec, const char *s, bool missing) {
  if (missing)
    return usage(spec->missing ? spec->missing : "fabsim: %s needs a value (see --help)\n", s);
  return usage(spec->unknown ? spec->unknown : "fabsim: unknown option '%s' (see --help)\n", s);
}

static int apply(const cli_opt *o, const char *s, const char *value) {
  if (o->flag) *o->flag = true;
  else if (o->last) *o->last = value;
  else if (o->list) o->list[(*o->count)++] = value;
  else if (o->take) return o->take(o->ctx, s, value);
  return CLI_OK;
}

int cli_argv_parse(const cli_argv *spec, int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i], *value = NULL;
    bool last = i + 1 >= argc;
    if (spec->help && (!strcmp(s, "--help") || !strcmp(s, "-h"))) {
      fputs(spec->help, stdout);
      return -1;
    }
    const cli_opt *o = find_opt(spec, s, &value);
    if (o) {
      if (o->value && !value) {
        if (last)
          return usage_error(spec, s, !spec->missing_short_only || short_value_letter(spec, s[1]));
        value = argv[++i];
      }
      int rc = apply(o, s, value);
      if (rc != CLI_OK) return rc;
    } else if (spec->rest) {
      spec->rest[(*spec->nrest)++] = argv[i];
    } else if (s[0] == '-' && s[1] != '\0') {
      return usage_error(spec, s,
                         spec->missing_short_only && last && short_value_letter(spec, s[1]));
    } else if (spec->max_positional && *spec->npositional >= spec->max_positional) {
      return usage(spec->too_many, s);
    } else {
      spec->positional[(*spec->npositional)++] = s;
    }
  }
  return CLI_OK;
}

cli_opt cli_opt_set(const char **list, int *count) {
  return (cli_opt){.name = "--set",
                   .alias = "-s",
                   .value = true,
                   .inline_value = true,
                   .list = list,
                   .count = count};
}
