/* ncclt.h: reader for nccl-tests and rccl-tests all_gather_perf logs, unmodified, of every era.
 *
 * Row layouts (nccl-tests src/util.cu writeBenchmarkLine*, older src/common.cu and
 * src/all_gather.cu print_line_header):
 *   pre-2.13:  size count type              (time algbw busbw error) x2
 *   >= 2.13:   size count type redop root   (time algbw busbw #wrong) x2
 *   -I 1:      each block adds i_min i_max i_p99 i_cv% after #wrong
 *   -S 1:      a trailing timestamp "YYYY-MM-DD HH:MM:SS" (two tokens)
 * #wrong / error is a count (0, 0e+00) or N/A.  Numbers may be in exponent form (1.2e+04).
 *
 * Around the rows, as real logs have them:
 *  - MPI and launcher prefixes, at the start of a line and also in the middle of a row (a
 *    row printed in pieces): Open MPI "[1,0]<stdout>:" / "<stderr>:", srun --label " 0: ",
 *    Intel MPI -prepend-rank "[0] ";
 *  - NCCL INFO / WARN / TRACE messages anywhere, also breaking a row in two (the rest of the
 *    row on the next line); rccl-tests "RCCL version : ...", "HIP version : ..." lines and any
 *    other line that is neither a '#' line nor a result row;
 *  - "# nccl-tests version" or "# rccl-tests version"; "# nThread 1 nGpus 8 ..." or
 *    "# nThread: 1 nGpus: 8 ...".
 *
 * Ranks: the number of "#  Rank" lines.  A table pasted without its preamble (no "# Using
 * devices", no Rank lines) takes them from size / (count * sizeof(type)) or, for an unknown
 * type, from the printed busbw/algbw ratio (the one rank count that fits every row), or from
 * --ranks N (tps_ncclt_opts); the log says which (tps_ncclt.ranks_from).
 *
 * Bandwidths: algbw = size / time / 1e3, busbw = algbw * (n-1)/n (GB/s, 1e9 B/s).  Logs of
 * nccl-tests before its June 2020 fix (NVIDIA/nccl-tests#45) printed algbw = busbw =
 * size/time * (n-1)/n: accepted, flagged in bw_old; the tool's own values are always
 * recomputed from size and time.  Every row's printed values must fit one convention within
 * their printed precision (half a unit of the last digit of the time and of the bandwidth,
 * plus 0.5%): this catches a misread column and a log of another collective.
 *
 * Several runs in one file (a new preamble, or a new column header after rows): the
 * all_gather run is read when there is exactly one, else --run N picks one; the runs are
 * listed in tps_ncclt.runs and in the error.
 *
 * Other collectives are refused by name ("all_reduce_perf log, not all_gather") using every
 * sign there is: the "# Collective test starting/concluded:" line; a redop other than none
 * (all_reduce, reduce_scatter, reduce); a root >= 0 or a root column before 2.13 (broadcast,
 * reduce); a pre-2.13 header with a redop column but rows without one (alltoall); in-place
 * #wrong N/A while out-of-place is checked (alltoall, which has no in-place check); size =
 * count * sizeof(type) with n > 1 (nothing gathered); busbw = 2(n-1)/n or 1 x algbw.
 *
 * Ranges: size and count whole numbers <= 2^50; times 0.001..1e9 us; bandwidths 0..1e9 GB/s;
 * nThread and nGpus 1..1024; ranks 1..65536; root -1..65535.
 * The GPU name is the text after "[bus-id]" of the first Rank line. */
#ifndef TPS_NCCLT_H
#define TPS_NCCLT_H
#include <stddef.h>
#include "src/base/err.h"
#include "src/io/text.h"
#ifdef __cplusplus
extern "C" {
#endif

enum { TPS_NCCLT_PRE213 = 1, TPS_NCCLT_CURRENT = 2 };
/* where nranks came from */
enum { TPS_NCCLT_RANKS_LINES = 0, TPS_NCCLT_RANKS_SIZE = 1, TPS_NCCLT_RANKS_RATIO = 2,
       TPS_NCCLT_RANKS_OPTION = 3, TPS_NCCLT_RANKS_JSON = 4 };

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
  int nranks;           /* ranks of the run read */
  int ranks_from;       /* TPS_NCCLT_RANKS_* */
  char gpu[64];         /* from the first Rank line, e.g. "NVIDIA H200" */
  long gpu_line;        /* that line (0: none) */
  char version[32];     /* "# nccl-tests version X": X, "" when not printed */
  char collective[32];  /* "# Collective test starting: X": X, "" when not printed */
  int layout;           /* TPS_NCCLT_PRE213 or TPS_NCCLT_CURRENT */
  int has_timestamp, has_iter_stats;
  int nthread, ngpus, warmup_iters, iters; /* from the nThread line, -1 when absent */
  int bw_old;           /* 1: algbw printed equal to busbw (nccl-tests before June 2020) */
  int nruns, run;       /* runs in the file, the one read (1-based) */
  char runs[400];       /* "1: all_reduce_perf, lines 1-40; 2: all_gather_perf, lines 41-80" */
  char note[512];       /* how the log was read, one line for the user */
  char gather[16];      /* a tpsplit bench allgather log's "# Gather: X" backend (auto over custom
                         * over nccl when several lines say), "" when no line says (nccl-tests) */
  long gather_line;     /* that line */
  size_t n;
  tps_ncclt_row *row;
} tps_ncclt;

typedef struct {
  int run;    /* 0: the only all_gather run; N: run N */
  int ranks;  /* 0: from the file; N: the rank count of a pasted table */
} tps_ncclt_read_opts;

/* 1 when the text looks like an nccl-tests log: a "# nThread", "#  Rank",
 * "# Collective test starting" or "# nccl-tests version" line (after MPI prefixes), or a
 * result-table header "#  size  count  type ...", or result rows of an nccl-tests layout. */
int tps_ncclt_detect(const tps_text *tx);
/* Parse; 0 or -1 with e = "FILE:LINE: ..." (first offending line).  o may be NULL. */
int tps_ncclt_parse(const tps_text *tx, tps_ncclt *log, tps_err *e);
int tps_ncclt_parse_opts(const tps_text *tx, const tps_ncclt_read_opts *o, tps_ncclt *log, tps_err *e);
void tps_ncclt_free(tps_ncclt *log);
/* nccl-tests -J JSON files (>= 2.17.3): 1 when the file's first non-blank byte (after a
 * UTF-8 byte order mark) is '{'. */
int tps_ncclt_is_json(const char *path);
int tps_ncclt_is_json_mem(const char *data, size_t len);
/* Read one into the same struct (line = 0 in every row: JSON errors name the result
 * index).  nranks = len(devices) * nthreads * ngpus (devices lists one GPU per process). */
int tps_ncclt_read_json(const char *path, tps_ncclt *log, tps_err *e);
int tps_ncclt_read_json_mem(const char *path, const char *data, size_t len, tps_ncclt *log, tps_err *e);
/* Bytes per element of an nccl-tests / rccl-tests type name, 0 when unknown. */
int tps_ncclt_type_size(const char *type);

#ifdef __cplusplus
}
#endif
#endif
