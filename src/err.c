/* err.c: see err.h. */
#include "err.h"
#include <stdio.h>
#include <string.h>

void tps_err_clear(tps_err *e) { e->msg[0] = '\0'; e->set = 0; }

int tps_err_set(tps_err *e, const char *file, long line, const char *fmt, ...) {
  char body[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  if (!e) return -1;
  if (file && line > 0)
    snprintf(e->msg, sizeof e->msg, "%s:%ld: %s", file, line, body);
  else if (file)
    snprintf(e->msg, sizeof e->msg, "%s: %s", file, body);
  else
    snprintf(e->msg, sizeof e->msg, "%s", body);
  e->set = 1;
  return -1;
}

void tps_err_print(const tps_err *e) {
  fprintf(stderr, "tpsplit: %s\n", e->set ? e->msg : "unknown error");
}

void tps_die_msg(const char *fmt, ...) {
  va_list ap;
  fputs("tpsplit: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}
