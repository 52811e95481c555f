/* err.h: one-line errors that name the file and line.
 *
 * Readers fill a tps_err instead of printing; the command prints it once with
 * tps_err_print() ("tpsplit: FILE:LINE: message") and exits 2.  Nothing below main
 * calls exit(). */
#ifndef TPS_ERR_H
#define TPS_ERR_H
#include <stdarg.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char msg[1024]; /* "FILE:LINE: message", or "FILE: message" when no line applies */
  int set;        /* nonzero once an error was recorded */
} tps_err;

void tps_err_clear(tps_err *e);
/* file may be NULL (then no location); line <= 0 means "no line". Returns -1. */
int tps_err_set(tps_err *e, const char *file, long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Print "tpsplit: <msg>" on stderr. */
void tps_err_print(const tps_err *e);
/* Print "tpsplit: <fmt...>" on stderr (usage errors). */
void tps_die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif
#endif
