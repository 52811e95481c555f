/* err.h: one-line errors that name the file and line.
 *
 * Readers fill a tps_err instead of printing; the command prints it once with
 * tps_err_print() ("tpsplit CMD: FILE:LINE: message") and exits 2.  Nothing below main
 * calls exit().
 *
 * Every line tpsplit writes on stderr starts "tpsplit CMD: " (CMD: the command being run, as
 * tps_err_command() set it: "predict", "bench gemm", "fit --loo-gpu"; none for the main job:
 * "tpsplit: ").  Two forms, made here and nowhere else:
 *   usage errors   tpsplit CMD: what (try 'tpsplit CMD --help')      tps_usage_msg()
 *   input errors   tpsplit CMD: FILE:LINE: what                      tps_err_print()
 * and notes or other failures "tpsplit CMD: what" (tps_die_msg()).
 *
 * Two kinds: an input error (the file or option is wrong: exit 2) and a resource error
 * (memory, disk, a helper program: the input is fine, the machine ran out; exit 1).  A
 * resource error never names an input line: "out of memory (reading FILE)", "FILE: write
 * error: No space left on device". */
#ifndef TPS_ERR_H
#define TPS_ERR_H
#include <stdarg.h>
#ifdef __cplusplus
extern "C" {
#endif

enum { TPS_ERR_INPUT = 0, TPS_ERR_RESOURCE = 1 };

typedef struct {
  char msg[8192]; /* "FILE:LINE: message", or "FILE: message" when no line applies (room for a long path) */
  int set;        /* nonzero once an error was recorded */
  int kind;       /* TPS_ERR_INPUT or TPS_ERR_RESOURCE */
  int located;    /* the message names a file; an input error that names none is about the command
                   * line (an unknown GPU or model): tps_err_print adds the usage hint */
} tps_err;

void tps_err_clear(tps_err *e);
/* file may be NULL (then no location); line <= 0 means "no line". Returns -1. */
int tps_err_set(tps_err *e, const char *file, long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A resource error: "out of memory (reading data/x.tsv)" from fmt = "reading %s", path.
 * Returns -1. */
int tps_err_oom(tps_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A resource error with a free message ("FILE: write error: No space left on device"). */
int tps_err_resource(tps_err *e, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* 2 for an input error, 1 for a resource error (the exit status to use). */
int tps_err_exit_code(const tps_err *e);
/* The command the messages name ("predict", "bench gemm"; NULL or "": the main job). */
void tps_err_command(const char *cmd);
const char *tps_err_command_name(void); /* "" for the main job */
/* Print "tpsplit CMD: <msg>" on stderr. */
void tps_err_print(const tps_err *e);
/* Print "tpsplit CMD: <fmt...>" on stderr (a failure that is not a usage error, a note). */
void tps_die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: print "tpsplit CMD: <fmt...> (try 'tpsplit CMD --help')" on stderr and
 * return 2 (TPS_EXIT_USAGE). */
int tps_usage_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif
#endif
