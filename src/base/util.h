/* util.h: small I/O helpers every command uses.
 *
 *  - input files read whole and once, with size and time bounds (tps_buf_read, below);
 *  - output files (tps_out_open, below): written to a nameless file (or "PATH.tmp.XXXXXX")
 *    that takes PATH's name on commit, so a failed or interrupted run never leaves a
 *    half-written file;
 *  - temporaries removed on SIGINT/SIGTERM/SIGHUP (tps_tmp_add, below);
 *  - the data directory (GPU table, bundled measurements, model descriptions), found at
 *    run time: $TPSPLIT_DATADIR, else the installed $(pkgdatadir), else the source tree's
 *    data/ (a build that was not installed);
 *  - strict number parsing (end-pointer checked, NaN/inf rejected);
 *  - token lists: "1,2,48" or "A..B" (powers of two from A to B) or "A..B:S" (step S),
 *    checked against their limit before anything is expanded. */
#ifndef TPS_UTIL_H
#define TPS_UTIL_H
#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>
#include "src/base/err.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ input files
 * tps_buf_read reads a whole input file into memory, by its kind:
 *  - a regular file of at most TPS_INPUT_MAX_BYTES (64 MiB; larger: refused before reading);
 *  - a pipe or FIFO (`<(...)`, /dev/stdin fed by a pipe, mkfifo): read until its writer
 *    closes it, at most TPS_INPUT_MAX_BYTES, and refused when no byte arrives for
 *    $TPSPLIT_INPUT_TIMEOUT seconds (default TPS_INPUT_TIMEOUT_S = 10; a FIFO nobody writes,
 *    a writer that hangs).  A text stream with a line over TPS_TEXT_MAX_LINE bytes (one with
 *    no newline, e.g. `tr '\0' x </dev/zero`) stops at that line.  The bytes are kept for the
 *    life of the process: reading the same path again (format sniffing, then the reader)
 *    gives the same bytes, so a pipe is not "empty" the second time;
 *  - a directory, a character or block device (/dev/zero, a terminal) or a socket: refused
 *    by kind, nothing read.
 * data is NUL-terminated (data[len] == 0; the file may itself hold NUL bytes).  Errors:
 * "FILE: cannot open: ...", "FILE: is a character device ...", "FILE: no data for 10 s ...";
 * running out of memory is a resource error (tps_err_oom). */
#define TPS_INPUT_MAX_BYTES (64L * 1024 * 1024)
#define TPS_INPUT_TIMEOUT_S 10
#define TPS_TEXT_MAX_LINE 65536
typedef struct {
  char *data;
  size_t len;
} tps_buf;
int tps_buf_read(const char *path, tps_buf *b, tps_err *e);
void tps_buf_free(tps_buf *b);
/* Byte offset of the first invalid UTF-8 sequence in s[0..n), or n when s is valid UTF-8
 * (no overlong forms, no surrogates, nothing above U+10FFFF). */
size_t tps_utf8_check(const char *s, size_t n);

/* ------------------------------------------------------------------ output files
 * tps_out_open(o, PATH):
 *  - "-": standard output;
 *  - a regular file or a new name: a nameless file in the same folder (O_TMPFILE), linked in
 *    by tps_out_commit (straight to PATH when PATH is new, else to "PATH.tmp.XXXXXX" renamed
 *    over PATH), so not even SIGKILL leaves a half file or a temporary, except when it lands
 *    between that link and the rename (microseconds, signals blocked); where O_TMPFILE is
 *    not available, a temporary "PATH.tmp.XXXXXX" from the start, removed on failure, on
 *    exit() and on SIGINT/SIGTERM/SIGHUP (a SIGKILL leaves it);
 *  - a symbolic link: written through to the file it names (the link stays a link; the
 *    temporary sits next to the target).  A link to a missing file is refused;
 *  - a character device, FIFO or socket (/dev/null, /dev/stdout, a pipe), and any path under
 *    /dev/ or /proc/: opened and written in place (no temporary, there is nothing to rename);
 *  - a directory: refused.
 * Write errors carry the reason ("write error: No space left on device"). */
typedef struct {
  FILE *fp;        /* write here */
  char *path;      /* final name (the link target for a symbolic link) */
  char *tmp_path;  /* temporary name in the same directory; NULL when written in place */
  int slot;        /* tps_tmp_add slot of tmp_path, -1 when none */
  int direct;      /* 1: written in place (device, FIFO, /dev/...) */
  int anon;        /* 1: a nameless file (O_TMPFILE) linked in at commit; tmp_path unused until then */
} tps_outfile;

/* Open for writing (see above). */
int tps_out_open(tps_outfile *o, const char *path, tps_err *e);
/* Flush, check for write errors, close and rename into place. */
int tps_out_commit(tps_outfile *o, tps_err *e);
/* Close and remove the temporary file. Safe to call after commit or on a zeroed struct. */
void tps_out_abort(tps_outfile *o);

/* ------------------------------------------------------------------ temporaries and signals
 * Paths registered here are removed at exit() (atexit) and when SIGINT, SIGTERM or SIGHUP
 * arrives (newest first, so
 * the files of a temporary folder go before the folder); a registered child process group
 * (the gnuplot run) is killed; then the process ends by that signal (exit status 130 for
 * SIGINT, 143 for SIGTERM in the shell).  A signal ignored when tpsplit started (nohup, a
 * background job) stays ignored.  At most TPS_TMP_MAX paths at once. */
#define TPS_TMP_MAX 64
/* Register path (is_dir: a folder, removed with rmdir). Returns the slot, or -1 when full
 * or the path is too long (then it is not cleaned up on a signal, nothing else changes). */
int tps_tmp_add(const char *path, int is_dir);
/* Forget a slot (the file was renamed or removed). slot < 0 is ignored. */
void tps_tmp_del(int slot);
/* The child process group to kill on a signal (0: none). */
void tps_tmp_child(pid_t pgid);

/* Path of a bundled data file (relative to the data directory) in buf. Returns 0 when it
 * exists, -1 (with e set) otherwise. */
int tps_data_path(const char *rel, char *buf, size_t bufsz, tps_err *e);
/* The data directory in use (for provenance lines). */
const char *tps_data_dir(void);

/* Parse a finite double / a long; the whole string must be used. 0 ok, -1 otherwise. */
int tps_parse_double(const char *s, double *out);
int tps_parse_long(const char *s, long *out);
/* Whether s is written as a plain decimal number: it starts with a digit, a sign or a point
 * and holds no hexadecimal form ('0x10', '0x1p4').  strtod and strtol also take leading
 * blanks, hexadecimal and 'inf'; a measurement file or an option that says '0x10' or ' 19.2'
 * is refused (tps_parse_double and tps_parse_long call this), not read as 16 or 19.2. */
int tps_decimal_form(const char *s);
/* A whole number in [lo, hi]; 0 ok, -1 otherwise (no overflow: strtol's range first). */
int tps_parse_range(const char *s, long lo, long hi, long *out);
/* An option value in [lo, hi]: 0, or -1 after printing one line
 * "tpsplit: CMD: --OPT 'S': a whole number from LO to HI (WHY)" (why may be NULL). */
int tps_opt_long(const char *cmd, const char *opt, const char *s, long lo, long hi, const char *why, long *out);

/* GEMM and model widths (k, n, hidden, out_features) read from any file: 1..2^20. */
#define TPS_DIM_MAX 1048576L
/* The largest token count a list may hold and the most entries it may have: the longest
 * scan the model runs (TPS_PRED_MAX_TMAX in model/predict/predict.h, 65536).  Checked before a range
 * is expanded, so "1..100000000:1" fails at once naming the limit. */
#define TPS_TOKENS_MAX 65536L
/* Parse a token list into a newly malloc'ed sorted, duplicate-free array.
 * Forms: "6,12,24" | "A..B" (A, 2A, 4A ... <= B) | "A..B:S" (every S from A); every value
 * 1..TPS_TOKENS_MAX. */
int tps_parse_tokens(const char *s, long **out, size_t *n, tps_err *e);
/* Parse a comma list of strings (copies into a malloc'ed array of malloc'ed strings).
 * Empty items are skipped; 0 with at least one item, else -1 with *out = NULL (nothing to
 * free).  At most 4096 items. */
int tps_parse_list(const char *s, char ***out, size_t *n);
void tps_free_list(char **v, size_t n);

/* mkdir -p */
int tps_mkdirs(const char *path, tps_err *e);

/* Closeout: flush stdout and report a write error (e.g. to /dev/full) as exit 1. */
int tps_close_stdout(void);

/* `tpsplit CMD --version`: prints "tpsplit CMD (tpsplit) VERSION", returns TPS_EXIT_OK. */
int tps_print_version(const char *cmd);

/* The command line as one string, for provenance ("tpsplit fit data/x.tsv -o f").  Control
 * characters and bytes that are not UTF-8 become '?', so the line is safe in any file we
 * write (a path with a newline cannot start a new line of a fit file). */
void tps_set_cmdline(int argc, char **argv);
const char *tps_cmdline(void);

/* A comma list of numbers (integers when asked), each in [lo, hi], into v[0..max), in the
 * order given.  0 with *n, or -1 (a bad word, a value out of range, more than max). */
int tps_parse_numbers(const char *arg, double *v, size_t max, size_t *n, double lo, double hi, int integers);
#ifdef __cplusplus
}
#endif
#endif
