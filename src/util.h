/* util.h: small I/O helpers every command uses.
 *
 *  - atomic output files: write to "PATH.tmp.XXXXXX", then rename on commit, so a failed
 *    run never leaves a half-written file;
 *  - the data directory (GPU table, bundled measurements, model descriptions), found at
 *    run time: $TPSPLIT_DATADIR, else the installed $(pkgdatadir), else the source tree's
 *    data/ (a build that was not installed);
 *  - strict number parsing (end-pointer checked, NaN/inf rejected);
 *  - token lists: "1,2,48" or "A..B" (powers of two from A to B) or "A..B:S" (step S). */
#ifndef TPS_UTIL_H
#define TPS_UTIL_H
#include <stdio.h>
#include <stddef.h>
#include "err.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  FILE *fp;        /* write here */
  char *path;      /* final name */
  char *tmp_path;  /* temporary name in the same directory */
} tps_outfile;

/* Open a temporary file next to path. path "-" writes to stdout (commit/abort are no-ops). */
int tps_out_open(tps_outfile *o, const char *path, tps_err *e);
/* Flush, check for write errors, close and rename into place. */
int tps_out_commit(tps_outfile *o, tps_err *e);
/* Close and remove the temporary file. Safe to call after commit or on a zeroed struct. */
void tps_out_abort(tps_outfile *o);

/* Path of a bundled data file (relative to the data directory) in buf. Returns 0 when it
 * exists, -1 (with e set) otherwise. */
int tps_data_path(const char *rel, char *buf, size_t bufsz, tps_err *e);
/* The data directory in use (for provenance lines). */
const char *tps_data_dir(void);

/* Parse a finite double / a long; the whole string must be used. 0 ok, -1 otherwise. */
int tps_parse_double(const char *s, double *out);
int tps_parse_long(const char *s, long *out);

/* Parse a token list into a newly malloc'ed sorted, duplicate-free array.
 * Forms: "6,12,24" | "A..B" (A, 2A, 4A ... <= B) | "A..B:S" (every S from A). */
int tps_parse_tokens(const char *s, long **out, size_t *n, tps_err *e);
/* Parse a comma list of strings (copies into a malloc'ed array of malloc'ed strings). */
int tps_parse_list(const char *s, char ***out, size_t *n);
void tps_free_list(char **v, size_t n);

/* mkdir -p */
int tps_mkdirs(const char *path, tps_err *e);

/* Closeout: flush stdout and report a write error (e.g. to /dev/full) as exit 1. */
int tps_close_stdout(void);

/* `tpsplit CMD --version`: prints "tpsplit CMD (tpsplit) VERSION", returns TPS_EXIT_OK. */
int tps_print_version(const char *cmd);

/* The command line as one string, for provenance ("tpsplit fit data/x.tsv -o f"). */
void tps_set_cmdline(int argc, char **argv);
const char *tps_cmdline(void);

#ifdef __cplusplus
}
#endif
#endif
