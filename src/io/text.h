/* text.h: a text file read whole into lines, the first step of every reader (measurement
 * tables, nccl-tests logs, the GPU table, model descriptions, fit files).  Its own header so
 * that table.h and ncclt.h both depend on it and not on each other.  The functions are
 * implemented in src/io/measure.c, the loader. */
#ifndef TPS_TEXT_H
#define TPS_TEXT_H
#include <stddef.h>
#include "src/base/err.h"
#include "src/base/util.h"
#ifdef __cplusplus
extern "C" {
#endif

/* TPS_TEXT_MAX_LINE: src/base/util.h (the bound of every read) */
/* A text file read whole into lines (tps_buf_read: size and time bounds, pipes read once),
 * with the checks every reader needs: missing file, directory, device, unreadable, binary
 * content (a NUL byte or other control characters), CRLF line ends, lines over
 * TPS_TEXT_MAX_LINE bytes, bytes that are not UTF-8 (unless TPS_TEXT_ANY_BYTES).  Line
 * numbers are 1-based: line[i] is line i+1.  Trailing '\n' removed; a UTF-8 byte order mark
 * at the start removed.  An empty file gives n = 0 (no error; callers say "empty file").
 * unterminated = 1 when the last line has no '\n': readers call tps_text_check_end after
 * their own checks (a more precise message about that line comes first). */
typedef struct {
  char *path;
  size_t n;
  char **line;
  char *block;       /* storage of every line */
  int unterminated;
} tps_text;
enum { TPS_TEXT_ANY_BYTES = 1 };
int tps_text_read(const char *path, tps_text *tx, tps_err *e);
int tps_text_from_buf(const char *path, const char *data, size_t len, int flags, tps_text *tx, tps_err *e);
void tps_text_free(tps_text *tx);
/* -1 with "FILE:N: no newline at the end of the file: cut short?" when tx->unterminated. */
int tps_text_check_end(const tps_text *tx, tps_err *e);
/* -1 with "FILE:LINE: invalid UTF-8 (byte 0xNN in column C) ..." when s is not UTF-8. */
int tps_text_check_utf8(const char *path, long line, const char *s, tps_err *e);
/* Split a line in place on tabs into at most maxf fields; returns the number of fields
 * (maxf + 1 when there are more). */
int tps_split_tabs(char *line, char **f, int maxf);
/* -1 with "FILE:LINE: cell N 'X': blanks around it" when a cell of f[0..n) starts or ends with a
 * blank or tab (padding read as if clean), or, unless allow_empty, "... empty or with blanks
 * around it" for an empty cell too; 0 otherwise.  The one check of the files that split cells
 * themselves (data/parts.tsv, model descriptions). */
int tps_text_blank_cells(const char *path, long ln, char *const *f, size_t n, int allow_empty, tps_err *e);


#ifdef __cplusplus
}
#endif
#endif
