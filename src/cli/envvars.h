/* envvars.h: every environment variable tpsplit reads, in one table.
 *
 * `tpsplit --help` prints the whole table, each command's --help the rows naming it
 * (tps_cmdopt_env_help, src/cli/cmdopt.h), and
 * doc/tpsplit.x (the man page) and doc/environment.md hold the same rows; tests/cli/env.sh
 * checks that the four agree and that every getenv() in src/, model/ and kernels/ is here. */
#ifndef TPS_ENVVARS_H
#define TPS_ENVVARS_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char *name;      /* "TPSPLIT_DATADIR" */
  const char *commands;  /* the commands that read it, space separated; "*" = every command */
  const char *read_by;   /* the file that reads it (src/base/util.c, kernels/bench/kspan.c, ...) */
  const char *meaning;   /* one sentence: what it does, its values */
} tps_envvar;

extern const tps_envvar tps_envvars[];
extern const size_t tps_nenvvars;

/* Whether variable v is read by command cmd ("main": the main job; NULL: any). */
int tps_envvar_read_by(const tps_envvar *v, const char *cmd);
/* The numeric variables that cmd reads ("main": the main job), checked before it runs: 0, or
 * -1 after one line "tpsplit CMD: NAME='VALUE': a whole number in LO..HI (...)" (a value out of
 * range or not a number was ignored silently before: issue 30). */
int tps_env_check(const char *cmd);

#ifdef __cplusplus
}
#endif
#endif
