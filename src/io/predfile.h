/* predfile.h: predictions as files.
 *
 * `tpsplit predict` prints its prediction as aligned text (the form data/pred_h200_tp8_*.txt
 * was committed in, before any multi-GPU run):
 *   # GPU TPn PATH, gather B ...          (first '#' line: what is predicted)
 *   # ...                                  (sources, one '#' line each)
 *     tokens rows_per_rank replicated_us split_us speedup gather_backend [sources]
 *          6             1          14.5     21.4    0.67         custom [m,m,m]
 *   break-even: ...                        (the rows end at the first line that is not one)
 * Columns are separated by runs of spaces, not tabs, so the table reader (src/io/table.h, TAB
 * separated) takes the whole header line for one column name.  This reads that text into a
 * split table; `tpsplit predict -o FILE` writes a TAB-separated split table instead, which
 * src/io/table.c reads itself.  Errors: one line naming the file and line. */
#ifndef TPS_PREDFILE_H
#define TPS_PREDFILE_H
#include "src/base/err.h"
#include "src/io/table.h"
#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the file is `tpsplit predict`'s printed text (its first line "# GPU TPn PATH, gather
 * B" and a header line of the six columns). */
int tps_predtext_is(const char *path);
/* Read it into t (kind split; gpu, tp, path, gather from the first line; every '#' line kept
 * as provenance).  0, or -1 with e. */
int tps_predtext_read(const char *path, tps_table *t, tps_err *e);

#ifdef __cplusplus
}
#endif
#endif
