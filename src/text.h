/* text.h: a text file read whole into lines, the first step of every reader (measurement
 * tables, nccl-tests logs, the GPU table, model descriptions, fit files).  Its own header so
 * that table.h and ncclt.h both depend on it and not on each other.  The functions are
 * implemented in src/table.c. */
#ifndef TPS_TEXT_H
#define TPS_TEXT_H
#include <stddef.h>
#include "err.h"
#ifdef __cplusplus
extern "C" {
#endif

/* A text file read whole into lines, with the checks every reader needs: missing file,
 * directory, unreadable, binary content (a NUL byte or other control characters),
 * CRLF line ends, lines over TPS_TEXT_MAX_LINE bytes.  Line numbers are 1-based:
 * line[i] is line i+1.  Trailing '\n' removed.  An empty file gives n = 0 (no error;
 * callers say "empty file"). */
#define TPS_TEXT_MAX_LINE 65536
typedef struct {
  char *path;
  size_t n;
  char **line;
} tps_text;
int tps_text_read(const char *path, tps_text *tx, tps_err *e);
void tps_text_free(tps_text *tx);
/* Split a line in place on tabs into at most maxf fields; returns the number of fields
 * (maxf + 1 when there are more). */
int tps_split_tabs(char *line, char **f, int maxf);

#ifdef __cplusplus
}
#endif
#endif
