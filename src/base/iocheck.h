/* iocheck.h: no output ever replaces an input (issue 30).
 *
 * The option parser records every file a run will read (tps_io_input) and every file it
 * will write (tps_io_output); tps_io_check, called once before anything is read, refuses
 *  - an output that is an input: the same file after symbolic links are followed (same
 *    st_dev and st_ino, so a hard link or `-o LINK` to the input is caught too);
 *  - two outputs that are the same file: the same st_dev/st_ino, or, for a name that does
 *    not exist yet, the same canonical path (the folder resolved, then the name).
 * Only regular files and new names count: writing into a device, FIFO or "-" replaces no
 * file, and an input that does not exist cannot be destroyed (its reader says what is wrong).
 * An input "SPEC" that may carry a backend or options (--gather nccl=FILE, --gemm
 * FILE:dtype=bfloat16) is recorded with tps_io_input_spec: the whole word, the part after a
 * leading "NAME=" and the part before a trailing ":KEY=VALUE..." are each an input. */
#ifndef TPS_IOCHECK_H
#define TPS_IOCHECK_H
#include "src/base/err.h"
#include <sys/stat.h>
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_IO_MAX 256
/* what: how the command line named it ("--gemm", "-o", "argument"; copied, 47 bytes at most). */
void tps_io_input(const char *path, const char *what);
void tps_io_input_spec(const char *spec, const char *what);
void tps_io_output(const char *path, const char *what);
/* 0, or -1 with e: "OUT: -o would replace an input, --gemm 'G' (the same file): nothing read
 * or written" or "OUT: --thresholds-out and -o 'X' are the same file: ...".  The registry is
 * emptied either way. */
int tps_io_check(tps_err *e);
void tps_io_reset(void);

/* The files a run finds itself: the check above sees only the names on the command line, not
 * the bundled data, the tables data/parts.tsv names, a model description found by name, or an
 * input that sits in `-o DIR` under a figure's name.  tps_buf_read (src/base/util.h), through
 * which every reader of tpsplit reads, notes each regular file it read (its st_dev and st_ino);
 * tps_out_open and tps_out_commit refuse an output that is one of them ("OUT: would replace
 * 'IN', which this run read: nothing written"), so no output replaces an input however the
 * run came to read it.  Thread-safe; the notes last for the process. */
void tps_io_note_read(const char *path, const struct stat *st);
/* 0, or -1 with e when st (the output's, through links) is a file this run read. */
int tps_io_refuse_read(const char *out, const struct stat *st, tps_err *e);

#ifdef __cplusplus
}
#endif
#endif
