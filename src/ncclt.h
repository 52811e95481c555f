/* ncclt.h: reader for nccl-tests all_gather_perf text logs, unmodified.
 *
 * Accepted layouts (nccl-tests src/util.cu, writeBenchmarkLine* and writeResultHeader):
 *   pre-2.13:  size count type              (time algbw busbw error) x2
 *   >= 2.13:   size count type redop root   (time algbw busbw #wrong) x2
 *   -I 1:      each block adds i_min i_max i_p99 i_cv% after #wrong
 *   -S 1:      a trailing timestamp "YYYY-MM-DD HH:MM:SS" (two tokens)
 * #wrong / error is a number (0, 0e+00) or N/A.  Numbers may be in exponent form
 * (1.2e+04).  Lines with "NCCL INFO", "NCCL WARN" or "NCCL TRACE" are skipped; MPI
 * prefixes "[1,0]<stdout>:" / "[1,0]<stderr>:" are stripped; other lines that do not
 * start with '#' or a digit are skipped (launcher chatter).
 *
 * Units: size in bytes of the whole gathered buffer (count * sizeof(type) * nranks),
 * count in elements per rank, times in us, bandwidths in GB/s (1e9 B/s):
 * algbw = size / time / 1e3, busbw = algbw * (n-1)/n.  The printed bandwidths are checked
 * against size/time (10% or 0.02 GB/s) to catch a misread column; the tool's own
 * derived values are recomputed from size and time.
 * nranks = number of "#  Rank" lines; the GPU name is the text after "[bus-id]" of the
 * first Rank line. */
#ifndef TPS_NCCLT_H
#define TPS_NCCLT_H
#include <stddef.h>
#include "err.h"
#include "text.h"
#ifdef __cplusplus
extern "C" {
#endif

enum { TPS_NCCLT_PRE213 = 1, TPS_NCCLT_CURRENT = 2 };

typedef struct {
  double size_bytes;    /* whole gathered buffer */
  long count;           /* elements per rank */
  char type[16];        /* "bfloat16", "float", ... */
  char redop[16];       /* "none" (>= 2.13), "" before */
  int root;             /* -1 (>= 2.13), 0 before */
  double oop_time_us, oop_algbw_gbps, oop_busbw_gbps, oop_wrong; /* wrong: NaN for N/A */
  double ip_time_us, ip_algbw_gbps, ip_busbw_gbps, ip_wrong;
  /* -I statistics (NaN when absent) */
  double oop_min_us, oop_max_us, oop_p99_us, oop_cv_pct;
  double ip_min_us, ip_max_us, ip_p99_us, ip_cv_pct;
  char timestamp[24];   /* -S: "2025-06-01 12:00:00", "" when absent */
  long line;            /* source line */
} tps_ncclt_row;

typedef struct {
  int nranks;           /* number of "#  Rank" lines */
  char gpu[64];         /* from the first Rank line, e.g. "NVIDIA H200" */
  char version[32];     /* "# nccl-tests version X": X, "" when not printed */
  char collective[32];  /* "# Collective test starting: X": X, "" when not printed */
  int layout;           /* TPS_NCCLT_PRE213 or TPS_NCCLT_CURRENT */
  int has_timestamp, has_iter_stats;
  int nthread, ngpus, warmup_iters, iters; /* from the nThread line, -1 when absent */
  size_t n;
  tps_ncclt_row *row;
} tps_ncclt;

/* 1 when the text looks like an nccl-tests log: a "# nThread", "#  Rank",
 * "# Collective test starting" or "# nccl-tests version" line (after MPI prefixes). */
int tps_ncclt_detect(const tps_text *tx);
/* Parse; 0 or -1 with e = "FILE:LINE: ..." (first offending line). */
int tps_ncclt_parse(const tps_text *tx, tps_ncclt *log, tps_err *e);
void tps_ncclt_free(tps_ncclt *log);
/* nccl-tests -J JSON files (>= 2.17.3): 1 when the file's first non-blank byte is '{'. */
int tps_ncclt_is_json(const char *path);
/* Read one into the same struct (line = 0 in every row: JSON errors name the result
 * index).  nranks = len(devices) * nthreads * ngpus (devices lists one GPU per process). */
int tps_ncclt_read_json(const char *path, tps_ncclt *log, tps_err *e);
/* Bytes per element of an nccl-tests type name, 0 when unknown. */
int tps_ncclt_type_size(const char *type);

#ifdef __cplusplus
}
#endif
#endif
