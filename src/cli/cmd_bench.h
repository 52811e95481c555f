/* cmd_bench.h: what the `tpsplit bench` commands (src/cmd_bench_*.c) share: integer option
 * parsing, provenance text, and the one command skeleton of the multi-rank benches (split,
 * allgather): their shared options, output file, GPU count, run and exit status.  The
 * measuring is kernels/'s (kernels/bench/bench.h). */
#ifndef TPS_CMD_BENCH_H
#define TPS_CMD_BENCH_H
#include <getopt.h>
#include <stdio.h>
#include "kernels/bench/bench.h"
#include "src/base/util.h"

int cmd_bench_gemm(int argc, char **argv);
int cmd_bench_split(int argc, char **argv);
int cmd_bench_allgather(int argc, char **argv);

/* --NAME ARG as a whole number in [lo, hi], a multiple of mult: 0, else one line
 * "tpsplit bench CMD: --NAME 'ARG': ... (try ...)" and TPS_EXIT_USAGE. */
int tps_bench_int_opt(const char *cmd, const char *name, const char *arg, long lo, long hi,
                      long mult, long *v);
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
  void (*usage)(FILE *fp);
  const struct option *own;         /* the command's own long options, {0}-terminated,
                                     * codes >= TPS_BENCH_OWN_OPT */
  int (*option)(tps_bench_cmd *c, int code, const char *arg); /* TPS_EXIT_OK or _USAGE */
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
enum { TPS_BENCH_OWN_OPT = 512 };

/* The --help lines of the shared options, with their defaults. */
void tps_bench_world_help(FILE *fp, const char *cmd, const tps_bench_world_opts *dflt);
/* Parse, validate, count the GPUs, run, write: the exit code. */
int tps_bench_cmd_main(tps_bench_cmd *c, int argc, char **argv);

#endif
