/* ncclt_int.h: what the nccl-tests log reader's files share (internal to src/io): ncclt.c (the
 * text log: clean lines, runs, rows), ncclt_rows.c (one row; the rank count, the bandwidth
 * conventions, the collective the rows point to), ncclt_json.c (-J JSON files). */
#ifndef TPS_NCCLT_INT_H
#define TPS_NCCLT_INT_H
#include <stddef.h>
#include "src/io/ncclt.h"

#define MAXTOK 64
#define MAX_SIZE 1125899906842624.0 /* 2^50 bytes */
#define MAX_BW_GBPS 1e9
#define MAX_RANKS 65536

/* One run of a log (pass 2). */
typedef struct {
  long first, last;       /* line range */
  char name[32];          /* from "Collective test starting/concluded:", "" when not named */
  long name_line;
  char version[32];
  int nthread, ngpus, warmup, iters;
  int nranks_lines;
  char gpu[64];
  long gpu_line;          /* the Rank line it came from */
  int using_devices;      /* "# Using devices" seen: Rank lines are expected */
  int hdr, hdr_redop, hdr_root;
  long hdr_line;
  size_t *rows;           /* indices into the cleaned lines */
  size_t nrows, caprows;
  int ended;              /* a footer line seen */
  int nthread_seen;
  long nthread_line;      /* its "# nThread" line: where a second run is reported */
  char guess[32];         /* the collective the signs point to (pass 3), "" = all_gather */
} run_t;

/* Printed tokens of a row's two blocks, kept for the bandwidth check (their precision). */
typedef struct {
  double ht[2], ha[2], hb[2]; /* half a unit of the last printed digit: time, algbw, busbw */
} row_toks;

/* The row layout of a result row: lead fields before the blocks (3, 4 or 5), -I stats, -S. */
typedef struct {
  int lead, stats, ts, set;
  long line;
} layout_t;

const char *ncclt_skip_ws(const char *s);
/* Split s on blanks into tok (pointers into buf).  Tokens "N:" (srun labels inside a row)
 * are dropped when srun is set.  Returns the count, MAXTOK + 1 when there are more. */
int ncclt_tokenize(const char *s, char *buf, size_t bufsz, char **tok, int srun);
/* The layout of a row of nt tokens: 0, or -1 when none fits. */
int ncclt_layout_of(char **tok, int nt, int *lead, int *stats, int *ts);
/* Row s of line ln into r and rt, its layout the same as the rows before (L).  buf: scratch
 * of bufsz >= strlen(s) + 1; *lead_out: the row's lead fields.  0, or -1 with e. */
int ncclt_parse_row(const char *path, long ln, const char *s, int srun, layout_t *L, tps_ncclt_row *r, row_toks *rt,
                    char *buf, size_t bufsz, int *lead_out, tps_err *e);
int ncclt_is_type_name(const char *s);
/* A whole number of at most 16 digits (<= 2^50 after the check), or -1. */
double ncclt_whole(const char *s);
/* src without leading and trailing blanks into dst. */
void ncclt_copy_trim(char *dst, size_t dstsz, const char *src);
int ncclt_is_allgather_name(const char *s);
int ncclt_is_reduction(const char *op);
/* The rank count of the rows of run R into *n (and log->nranks), where it comes from into
 * from.  0, or -1 with e. */
int ncclt_rank_count(const char *path, const run_t *R, const tps_ncclt_read_opts *o, const row_toks *rt, int lead,
                     tps_ncclt *log, char *from, size_t fromsz, int *n, tps_err *e);
/* The rows of run R are an all-gather of n ranks: not another collective by their signs,
 * sizes = count x type size x n, printed bandwidths of one convention (log->bw_old).  0, or
 * -1 with e. */
int ncclt_check_allgather(const char *path, run_t *R, const row_toks *rt, int lead, int n, tps_ncclt *log, tps_err *e);

#endif
