/* cmd_bench.h: what the `tpsplit bench` commands (src/cmd_bench_*.c) share: integer option
 * option parsers, provenance text, and the one command skeleton of the multi-rank benches (split,
 * allgather): their shared options, output file, GPU count, run and exit status.  The
 * measuring is kernels/'s (kernels/bench/bench.h). */
#ifndef TPS_CMD_BENCH_H
#define TPS_CMD_BENCH_H
#include <stdio.h>
#include "src/cli/cmdopt.h"
#include "kernels/bench/bench.h"
#include "src/base/util.h"

int cmd_bench_gemm(int argc, char **argv);
int cmd_bench_split(int argc, char **argv);
int cmd_bench_allgather(int argc, char **argv);

/* ARG as a whole number in [lo, hi], a multiple of mult (the TPS_ARG_FN parsers of the bench
 * options): 0, else -1 with why ("a multiple of 64 from 64 to 65536"). */
int tps_bench_mult(const char *arg, long lo, long hi, long mult, long *v, char *why, size_t whysz);
/* TPS_ARG_FN parsers into an int: multiples of 64 in 64..65536 (--k, --n of bench split), of
 * 16 in 16..1048576 (bench gemm --n), of 64 in 64..1048576 (bench gemm --k). */
int tps_bench_k64(void *dst, const char *arg, char *why, size_t whysz);
int tps_bench_n16(void *dst, const char *arg, char *why, size_t whysz);
int tps_bench_k64_big(void *dst, const char *arg, char *why, size_t whysz);
/* TPS_ARG_FN: a kernel path with TPS_PATH_F_BENCH into a (const tps_path *). */
int tps_bench_path(void *dst, const char *arg, char *why, size_t whysz);
/* The driver version: /proc/driver/nvidia/version's ("580.159.04"), else "CUDA driver API
 * 12.9" from the provenance. */
void tps_bench_driver(const tps_bench_prov *p, char *buf, size_t bufsz);
/* "M.m" of a CUDA version number (1000 major + 10 minor). */
void tps_bench_cuda_version(int v, char *buf, size_t bufsz);
/* The GPU name without the vendor prefix, blanks as '-' ("NVIDIA H200" -> "H200"). */
void tps_bench_gpu_short(const char *name, char *buf, size_t bufsz);
/* The time now in UTC, strftime format fmt. */
void tps_bench_date(const char *fmt, char *buf, size_t bufsz);
/* The timer line: the timer text, then ": why" when CUPTI is not used. */
void tps_bench_timer_line(const tps_bench_prov *p, char *buf, size_t bufsz);

/* ---------------------------------------------------------------- multi-rank commands */
typedef struct tps_bench_cmd tps_bench_cmd;
struct tps_bench_cmd {
  const char *name;                 /* "split" */
  const char *synopsis, *about;     /* its --help (src/cli/cmdopt.h), the shared options added */
  const tps_cmdopt *own;            /* the command's own options (parsed by src/cli/cmdopt) */
  size_t nown;
  int (*validate)(tps_bench_cmd *c);                          /* after parsing: exit code */
  int (*run)(tps_bench_cmd *c);                               /* kernels/: a tps_status */
  void (*on_row)(void *c, size_t i, int phase, const void *row); /* progress (rank 0) */
  void (*stopped)(tps_bench_cmd *c, long i);                  /* the run stopped at row i */
  int (*write)(tps_bench_cmd *c, FILE *fp);                   /* the table: 0 or -1 */
  int (*json)(tps_bench_cmd *c);                              /* --json: 0 or -1 */
  tps_bench_world_opts w;           /* set to the command's defaults before parsing */
  tps_bench_world_result *r;        /* the result's shared part (in the command's result) */
  const char *out;                  /* -o FILE, NULL: stdout */
  int json_out;
  tps_outfile of;
};
/* Parse (the one option parser: the shared options, then c->own), validate, count the GPUs,
 * run, write: the exit code. */
int tps_bench_cmd_main(tps_bench_cmd *c, int argc, char **argv);

#endif
