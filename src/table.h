/* table.h: measurement files, read into one normalized in-memory table.
 *
 * Supported inputs (kind detected from the header row or the nccl-tests preamble):
 *  - split-vs-replicated TSV: tokens, rows_per_rank, replicated_us, split_us
 *  - GEMM-only TSV:           rows, time_us (+ optional columns, e.g. tflops, gbps)
 *  - all-gather TSV:          bytes, ranks, time_us
 *  - nccl-tests all_gather_perf logs, text or -J JSON (see src/ncclt.h), normalized to the
 *    all-gather kind.
 * Our TSV: '#' provenance lines, '#@ key: value' metadata lines (machine-read), one header
 * row with units in the column names, one row per measurement.
 * Metadata keys understood: gpu, tp, k, n, path, out_bytes_per_token, gather_cap_bytes,
 * gather (nccl|custom|auto), ranks.  Missing keys are left at 0/"" and reported by the
 * commands that need them. */
#ifndef TPS_TABLE_H
#define TPS_TABLE_H
#include <stddef.h>
#include <stdio.h>
#include "err.h"
#include "text.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TPS_TABLE_SPLIT = 1, TPS_TABLE_GEMM, TPS_TABLE_ALLGATHER } tps_table_kind;
extern const char *const tps_table_kind_names[4]; /* "", "split", "gemm", "allgather" */

typedef struct {
  tps_table_kind kind;
  char *path;              /* as given */
  char **prov;             /* '#' lines, without the leading "# " */
  size_t nprov;
  /* metadata ('#@ key: value' lines, or the nccl-tests preamble) */
  char gpu[64];
  char kpath[32];          /* kernel path name, "" when unknown */
  char gather[16];         /* gather backend of a split table or all-gather table */
  int tp;                  /* split tables: TP size */
  int ranks;               /* all-gather tables: ranks */
  long k, n;               /* GEMM shape */
  double out_bytes_per_token;
  double gather_cap_bytes; /* per-rank cap of the custom gather (default 2 MiB) */
  size_t nrows;
  /* columns; NULL when not part of this kind.  All times are us. */
  long *tokens;            /* split */
  long *rows_per_rank;     /* split */
  double *replicated_us;   /* split */
  double *split_us;        /* split */
  long *rows;              /* gemm: M */
  double *time_us;         /* gemm and all-gather (nccl-tests: out-of-place time) */
  double *time_inplace_us; /* nccl-tests: in-place time (NaN when absent) */
  double *bytes;           /* all-gather: whole gathered buffer, bytes */
  long *line;              /* source line of each row (for errors downstream) */
  /* Added by the io area (src/table.c): */
  char type[16];           /* nccl-tests logs: element type ("bfloat16"); "" otherwise */
  char source[16];         /* "tsv" or "nccl-tests" */
  long *count;             /* nccl-tests logs: elements per rank; NULL otherwise */
  /* Extra numeric columns of gemm and all-gather TSV tables (after the required ones),
   * kept by name: extra[j][i] is column extra_name[j] of row i (NaN for "nan"/"NA"/"-").
   * nccl-tests logs with -I put i_min_us, i_max_us, i_p99_us, i_cv_pct here. */
  size_t nextra;
  char **extra_name;
  double **extra;
  /* '#@' metadata lines in file order, known and unknown keys alike (unknown keys are
   * kept, not rejected, so writers can add their own). */
  size_t nmeta;
  char **meta_key, **meta_val;
} tps_table;

/* Read any supported file. Returns 0, or -1 with e = "FILE:LINE: what is wrong".
 * Rejects: missing/unreadable file, directory, binary content, empty file, header only,
 * missing or extra columns, non-numeric/NaN/inf cells, zero or negative times, unsorted or
 * duplicate sizes, inconsistent rows_per_rank vs tokens and tp, lines over 64 KiB. */
int tps_table_read(const char *path, tps_table *t, tps_err *e);
void tps_table_free(tps_table *t);

/* ---- added by the io area ---- */

/* Column j of the extra columns named name, or NULL. */
const double *tps_table_extra(const tps_table *t, const char *name);
/* Look up a '#@' metadata value by key (last occurrence), or NULL. */
const char *tps_table_meta(const tps_table *t, const char *key);
/* Write t as our TSV (provenance lines, '#@' metadata, header, rows; extra columns kept).
 * An nccl-tests log is written as an all-gather table.  Numbers with tps_fmt_num.
 * 0, or -1 on a write error (ferror). */
int tps_table_write(FILE *fp, const tps_table *t);
/* x as the shortest of %.15g, %.16g, %.17g that reads back to the same double
 * ("nan" for NaN): 14.1 prints "14.1", not 14.099999999999999. */
void tps_fmt_num(char *buf, size_t sz, double x);

#ifdef __cplusplus
}
#endif
#endif
