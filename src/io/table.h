/* table.h: measurement files, read into one normalized in-memory table.
 *
 * Supported inputs (the format detected from the content by the one loader, src/io/measure.h:
 * an nccl-tests -J file or log is read by src/io/ncclt_json.c or ncclt.c, else our TSV here,
 * whose kind comes from its header row; a tpsplit fit file is refused with a message saying so):
 *  - split-vs-replicated TSV: tokens, rows_per_rank, replicated_us, split_us
 *  - GEMM-only TSV:           rows, time_us (+ optional columns, e.g. tflops, gbps)
 *  - all-gather TSV:          bytes, ranks, time_us
 *  - nccl-tests all_gather_perf logs, text or -J JSON (see src/io/ncclt.h), normalized to the
 *    all-gather kind.
 * Our TSV: '#' provenance lines, '#@ key: value' metadata lines (machine-read), one header
 * row with units in the column names, one row per measurement.
 * Metadata keys understood: gpu, tp, k, n, path, out_bytes_per_token, gather_cap_bytes,
 * gather (nccl|custom|auto), ranks.  Missing keys are left at 0/"" and reported by the
 * commands that need them.
 *
 * Ranges (anything outside is an error naming file and line, never clipped):
 *   tokens, rows, rows_per_rank      whole numbers 1..TPS_TABLE_MAX_COUNT (2^24)
 *   ranks (column and '#@ ranks'), '#@ tp'   1..65536
 *   bytes                            whole numbers 1..TPS_TABLE_MAX_BYTES (2^50, 1 PiB)
 *   times (*_us)                     TPS_TABLE_MIN_US..TPS_TABLE_MAX_US: 0.001 us (1 ns) to
 *                                    1e9 us (1000 s)
 *   '#@ k', '#@ n'                   1..TPS_DIM_MAX (2^20)
 *   '#@ out_bytes_per_token'         0.001..2^30 bytes;  '#@ gather_cap_bytes' 1..2^40 bytes
 * Text must be UTF-8 (it is copied into JSON output), every line must end with a newline
 * (a last line without one is a file cut short). */
#ifndef TPS_TABLE_H
#define TPS_TABLE_H
#include <stddef.h>
#include <stdio.h>
#include "src/base/err.h"
#include "src/io/text.h"
#include "src/io/ncclt.h"
#include "src/base/util.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_TABLE_MAX_COUNT 16777216L
#define TPS_TABLE_MAX_BYTES 1125899906842624.0
#define TPS_TABLE_MIN_US 1e-3
#define TPS_TABLE_MAX_US 1e9

typedef enum { TPS_TABLE_SPLIT = 1, TPS_TABLE_GEMM, TPS_TABLE_ALLGATHER } tps_table_kind;
extern const char *const tps_table_kind_names[4]; /* "", "split", "gemm", "allgather" */

typedef struct {
  tps_table_kind kind;
  char *path;              /* as given */
  char **prov;             /* '#' lines, without the leading "# " */
  size_t nprov;
  /* metadata ('#@ key: value' lines, or the nccl-tests preamble) */
  char gpu[64];
  long gpu_line;           /* the line that names it ('#@ gpu:', an nccl-tests Rank line); 0: none */
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
  /* Added by the io area (the readers of src/io): */
  char type[16];           /* nccl-tests logs: element type ("bfloat16"); "" otherwise */
  char source[16];         /* "tsv" or "nccl-tests" */
  char log_gather[16];     /* nccl-tests layout logs of tpsplit bench allgather: the backend their
                            * "# Gather: X" line names (see tps_ncclt.gather), "" when none */
  long log_gather_line;    /* that line */
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
  /* How an nccl-tests log was read, for the reader of the output: where the rank count came
   * from, the bandwidth convention, which run of several ("" for our TSV). */
  char note[512];
} tps_table;

/* Choices for nccl-tests logs that the file cannot settle (both 0 = from the file):
 *  run:   which run of a file holding several (1-based, in file order; default: the only
 *         all_gather run);
 *  ranks: the rank count of a table pasted without its '#  Rank' lines (default: from
 *         size/count and the busbw/algbw ratio); must agree with the file when it has them. */
typedef struct {
  int run;
  int ranks;
} tps_ncclt_opts;
/* Set the choices for every later tps_table_read in this process (NULL: back to 0, 0);
 * src/io/ncclt_rows.c. */
void tps_table_set_ncclt_opts(const tps_ncclt_opts *o);
/* Command-line forms: `--run N` (1..1000) and `--ranks N` (1..65536), for the commands that
 * read logs: tps_table_opt("run"|"ranks", optarg) sets it; 0 or -1 after printing one line. */
int tps_table_opt(const char *cmd, const char *name, const char *arg);
/* The choices set (read by the nccl-tests text format, src/io/ncclt.c). */
const tps_ncclt_opts *tps_table_ncclt_opts(void);

/* An empty table (its custom-gather cap at the default): what every format's reader starts from. */
void tps_table_init(tps_table *t);
/* The nccl-tests log *log (text or JSON, read; freed here) as an all-gather table in t (after
 * tps_table_init and t->path set).  0, or -1 with e. */
int tps_table_from_ncclt(tps_ncclt *log, tps_table *t, tps_err *e);
/* Read any supported file through the one loader (src/io/measure.h) and keep it when it is a
 * table (else -1: a fit file or an AIConfigurator table is not one). Returns 0, or -1 with e = "FILE:LINE: what is wrong".
 * Rejects: missing/unreadable file, directory, binary content, empty file, header only,
 * missing or extra columns, non-numeric/NaN/inf cells, zero or negative times, unsorted or
 * duplicate sizes, inconsistent rows_per_rank vs tokens and tp, lines over 64 KiB. */
int tps_table_read(const char *path, tps_table *t, tps_err *e);
/* The same from bytes in memory (path names them in messages): the fuzzing entry point. */
int tps_table_read_mem(const char *path, const char *data, size_t len, tps_table *t, tps_err *e);
void tps_table_free(tps_table *t);

/* ---- added by the io area (the record's helpers, with tps_table_init and tps_table_free:
 * src/io/measure.c) ---- */

/* Append a copy of s to the string vector *v of *n entries; 0, or -1 out of memory. */
int tps_strv_push(char ***v, size_t *n, const char *s);
/* Append a provenance line, a '#@' metadata pair (copies); 0, or -1 out of memory. */
int tps_table_add_prov(tps_table *t, const char *line);
int tps_table_add_meta(tps_table *t, const char *key, const char *val);
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
