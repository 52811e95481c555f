/* err.c: see err.h. */
#include "src/base/err.h"
#include <stdio.h>
#include <string.h>

void tps_err_clear(tps_err *e) { e->msg[0] = '\0'; e->set = 0; e->kind = TPS_ERR_INPUT; e->located = 0; }

static void put(tps_err *e, const char *file, long line, const char *body) {
  if (file && line > 0)
    snprintf(e->msg, sizeof e->msg, "%s:%ld: %s", file, line, body);
  else if (file)
    snprintf(e->msg, sizeof e->msg, "%s: %s", file, body);
  else
    snprintf(e->msg, sizeof e->msg, "%s", body);
  e->set = 1;
  e->located = file != NULL;
}

int tps_err_set(tps_err *e, const char *file, long line, const char *fmt, ...) {
  char body[6144];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  if (!e) return -1;
  put(e, file, line, body);
  e->kind = TPS_ERR_INPUT;
  return -1;
}

int tps_err_oom(tps_err *e, const char *fmt, ...) {
  char body[6144];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  if (!e) return -1;
  if (body[0]) snprintf(e->msg, sizeof e->msg, "out of memory (%s)", body);
  else snprintf(e->msg, sizeof e->msg, "out of memory");
  e->set = 1;
  e->kind = TPS_ERR_RESOURCE;
  return -1;
}

int tps_err_resource(tps_err *e, const char *file, const char *fmt, ...) {
  char body[6144];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  if (!e) return -1;
  put(e, file, 0, body);
  e->kind = TPS_ERR_RESOURCE;
  return -1;
}

int tps_err_exit_code(const tps_err *e) { return e && e->set && e->kind == TPS_ERR_RESOURCE ? 1 : 2; }

static char command[64]; /* the command the messages name; "" for the main job */

void tps_err_command(const char *cmd) { snprintf(command, sizeof command, "%s", cmd ? cmd : ""); }
const char *tps_err_command_name(void) { return command; }

/* "tpsplit CMD: " */
static void prefix(void) { fprintf(stderr, "tpsplit%s%s: ", command[0] ? " " : "", command); }

void tps_err_print(const tps_err *e) {
  if (e->set && e->kind == TPS_ERR_INPUT && !e->located && !strstr(e->msg, "(try 'tpsplit")) {
    tps_usage_msg("%s", e->msg); /* no file: what the command line asked for */
    return;
  }
  prefix();
  fprintf(stderr, "%s\n", e->set ? e->msg : "unknown error");
}

void tps_die_msg(const char *fmt, ...) {
  va_list ap;
  prefix();
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int tps_usage_msg(const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  prefix();
  fprintf(stderr, "%s (try 'tpsplit%s%s --help')\n", msg, command[0] ? " " : "", command);
  return 2; /* TPS_EXIT_USAGE */
}
