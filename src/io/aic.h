/* aic.h: NVIDIA AIConfigurator measurement tables (GEMM and NCCL), gzipped or plain TSV.
 *
 * The files (shared/data/aic/README.md, copies in data/aic/) start with '#' provenance
 * lines (# source:, # provenance:, # unit evidence:, ...), then one header line, then rows:
 *   GEMM: gpu backend version dtype m n k latency_us kernel_source
 *         Y[m x n] = X[m x k] W[k x n]; latency_us = mean of 6 CUDA-graph replays of the
 *         framework's Linear forward, no L2 flush (up to 5 weight copies cycled).
 *   NCCL: gpu nccl_version op num_gpus message_size_bytes latency_us dtype
 *         message_size_elements kernel_source source_dir
 *         message_size_bytes = nccl-tests' size (for all_gather the whole gathered buffer);
 *         latency_us = nccl-tests' out-of-place time.
 * Every '#' line is kept (provenance), wherever it is.  The file is read whole with the
 * bounds of every input (tps_buf_read: 64 MiB, pipes read once, devices refused); gzip
 * data (recognised by its magic bytes, one or several members) are inflated in memory, at
 * most 64 MiB; the text then passes the checks of every text reader (tps_text_from_buf:
 * UTF-8, no control bytes, lines up to 64 KiB, a newline at the end).
 *
 * Ranges: m 1..2^24, n and k 1..2^20, num_gpus 1..65536, message_size_bytes and
 * message_size_elements whole numbers 1..2^50, latency_us 0.001..1e9 (the ranges of
 * table.h).
 *
 * Errors are one line naming the file and line: a dtype (GEMM) or op (NCCL) outside the
 * known lists, a malformed or out-of-range number, a wrong column count, damaged or cut
 * gzip data (the line where the readable text stops); and, for a filter that matches no
 * row, the missing shape ("no rows with dtype fp8, n 1792, k 5120; n at k 5120 in the
 * file: 32, 64, ...").  Running out of memory is a resource error (exit 1).
 *
 * A file argument may carry a selection: "FILE:key=value,key=value" with keys dtype, m
 * (one value or A-B), n, k, backend (GEMM), op, num_gpus (NCCL).  The whole string is
 * taken as a file name when such a file exists. */
#ifndef TPS_AIC_H
#define TPS_AIC_H
#include <stddef.h>
#include "src/base/err.h"
#ifdef __cplusplus
extern "C" {
#endif

enum { TPS_AIC_GEMM = 1, TPS_AIC_NCCL = 2 };

typedef struct {
  long m, n, k;
  double latency_us;
  char dtype[16];
  char backend[16];
  char version[24];
  char kernel_source[24];
  long line;
} tps_aic_gemm_row;

typedef struct {
  int num_gpus;
  double bytes;       /* message_size_bytes */
  double latency_us;
  long elements;      /* message_size_elements */
  char op[24];
  char dtype[16];
  char nccl_version[16];
  char kernel_source[32];
  long line;
} tps_aic_nccl_row;

typedef struct {
  char *path;         /* as given (without a selection) */
  int kind;           /* TPS_AIC_GEMM or TPS_AIC_NCCL */
  char gpu[40];       /* the gpu column of the first row (e.g. "h100_sxm") */
  char **prov;        /* every '#' line, without the leading "# " */
  size_t nprov;
  size_t nrows;
  tps_aic_gemm_row *g; /* kind GEMM */
  tps_aic_nccl_row *c; /* kind NCCL */
} tps_aic_file;

/* Row selection; zero / empty fields match anything. */
typedef struct {
  char dtype[16];
  long m_lo, m_hi;    /* m in [m_lo, m_hi] when m_hi > 0 */
  long n, k;
  char backend[16];
  char op[24];
  int num_gpus;
} tps_aic_filter;

/* Known dtype (GEMM), op and dtype (NCCL) names, ", "-joined (messages, --help). */
extern const char *const tps_aic_gemm_dtypes;
extern const char *const tps_aic_nccl_ops;

/* Whether a file is an AIConfigurator table (it starts with the provenance line "# source:
 * ai-dynamo/aiconfigurator ...", gzip or plain) is the one loader's sniff:
 * tps_meas_sniff_spec(spec) == TPS_MEAS_AIC (src/io/measure.h). */

/* Split "FILE:key=value,..." into the file name (path, malloc'ed) and f.  0 or -1 with e
 * (unknown key, bad number, unknown dtype or op). */
int tps_aic_parse_spec(const char *spec, char **path, tps_aic_filter *f, tps_err *e);

/* Read a whole file; rows failing f are dropped (f may be NULL).  When f selects something
 * and no row matches, -1 with e naming the missing shape.  0 ok, -1 with e. */
int tps_aic_read(const char *path, const tps_aic_filter *f, tps_aic_file *out, tps_err *e);
/* The same from data[0..len) (gzip or plain), path naming it in messages. */
int tps_aic_read_mem(const char *path, const char *data, size_t len, const tps_aic_filter *f, tps_aic_file *out,
                     tps_err *e);
/* tps_aic_parse_spec + tps_aic_read. */
int tps_aic_read_spec(const char *spec, tps_aic_file *out, tps_err *e);
void tps_aic_free(tps_aic_file *a);

/* The tpsplit GPU name of an AIConfigurator gpu column: underscores become '-'
 * ("h100_sxm" -> "h100-sxm", which data/gpus.tsv knows as H100-SXM).  Returns buf. */
char *tps_aic_gpu_name(const char *aic_gpu, char *buf, size_t bufsz);

/* The GEMM rows of one (dtype, n, k), m ascending (a duplicate m keeps the mean of its
 * rows), into newly malloc'ed m[] and t_us[]; *nout their count.  0, or -1 with e naming
 * the missing shape. */
int tps_aic_gemm_curve(const tps_aic_file *a, const char *dtype, long n, long k, long **m, double **t_us,
                       size_t *nout, tps_err *e);
/* The NCCL rows of one (op, num_gpus, dtype), bytes ascending (duplicates averaged). */
int tps_aic_nccl_curve(const tps_aic_file *a, const char *op, int num_gpus, const char *dtype, double **bytes,
                       double **t_us, size_t *nout, tps_err *e);

/* `tpsplit inspect` of AIConfigurator files: reads every spec (all before printing), then
 * prints each normalized: provenance lines, then rows with derived columns (GEMM: tflops
 * = 2 m n k / t; NCCL: algbw_gbps = bytes / t, busbw_gbps = algbw (n-1)/n for all_gather,
 * 2 (n-1)/n for all_reduce).  json: one object {"files": [...]}.  Returns an exit code
 * (0, 1 write error, 2 input error, printed). */
int tps_aic_inspect(char *const *specs, int nspecs, int json);

#ifdef __cplusplus
}
#endif
#endif
