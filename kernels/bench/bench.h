/* bench.h: what `tpsplit bench` asks of kernels/: plain C (no CUDA header), so that src/
 * (options, tables, JSON, messages) compiles without CUDA.
 *
 * Every run function checks, then times, on GPUs and fills a result struct; src/ writes
 * it.  Progress reaches src/ through callbacks (on rank 0 only for the multi-rank benches),
 * so that src/ prints every line.  Every function returns a tps_status (model/core/status.h):
 * TPS_OK; TPS_SKIP when this build or machine cannot run it (why[] says why); TPS_EINVAL for
 * a request the GPUs cannot serve; TPS_ERR after a failure already reported on stderr.
 *
 * In a build without CUDA (or without NCCL for split and allgather), kernels/bench/bench_nocuda.c
 * provides these functions, each returning TPS_SKIP.
 *
 * Timing method (kernels/bench/harness.h): one CUDA graph per candidate; before every replay an
 * L2 flush (a write of twice the L2, by default read back) and, on several ranks, a
 * device-side barrier, both outside the timed span; time = the span of the replay's
 * kernels (CUPTI) or CUDA events around the launch; median, min and max of the samples;
 * candidates alternated in every round; on several ranks each sample is the maximum over
 * the ranks.  Correctness is checked before anything is timed. */
#ifndef TPS_KERNELS_BENCH_H
#define TPS_KERNELS_BENCH_H
#include <stddef.h>
#include <stdint.h>
#include "model/core/backend.h"
#include "model/core/path.h"
#include "model/core/status.h"
#include "kernels/bench/timing.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_BENCH_MAX_RANKS 16  /* ranks of one world (kernels/gather/gather.h) */
#define TPS_BENCH_MAX_BLOCKS 64 /* custom gather kernel blocks at most */
#define TPS_BENCH_WHY 256       /* bytes of a why[] text */

/* The GPUs this process can open: TPS_OK with *n >= 1, or TPS_SKIP with why (no GPU or
 * driver; a build without CUDA). */
int tps_bench_gpus(int *n, char *why, size_t whysz);
/* 1 when this process is one rank of an MPI launch (build --with-mpi, started by mpirun). */
int tps_bench_mpi(void);

/* Provenance of the GPU of this rank (rank 0 for the multi-rank benches) and its software. */
typedef struct {
  char gpu_name[256];    /* "NVIDIA H200" */
  int sms, cc_major, cc_minor, l2_bytes, sm_clock_mhz, mem_clock_mhz;
  int driver_api;        /* cudaDriverGetVersion: 1000 major + 10 minor */
  int runtime;           /* cudaRuntimeGetVersion, same encoding */
  size_t cublaslt;       /* cublasLtGetVersion; 0: cuBLASLt could not be loaded */
  char nccl[16];         /* "2.28.9"; "" when the bench uses no NCCL */
  char host[64];         /* host name (multi-rank benches) */
  int mpi;               /* the ranks are MPI processes (else threads of this process) */
  int nranks;
  char busid[TPS_BENCH_MAX_RANKS][32]; /* PCI bus id of every rank's GPU (multi-rank benches) */
  size_t flush_bytes;    /* bytes the L2 flush writes */
  tps_timer timer;       /* what a sample is */
  char timer_text[TPS_BENCH_WHY]; /* one line describing the timer */
  char timer_why[TPS_BENCH_WHY];  /* why CUPTI is not the timer; "" when it is */
  long fallbacks;        /* replays without a CUPTI record: their event time was taken */
} tps_bench_prov;

/* The provenance of one device (name, SMs, compute capability, L2, clocks, driver, runtime,
 * cuBLASLt; no timer, no NCCL) before any bench runs on it, so that a caller can tell which
 * paths it supports (calibrate): TPS_OK; TPS_SKIP with why (no GPU, a build without CUDA);
 * TPS_EINVAL for a device number this machine does not have. */
int tps_bench_device_info(int device, tps_bench_prov *p, char *why, size_t whysz);

/* ---------------------------------------------------------------- bench gemm (one GPU) */
enum { TPS_BENCH_CHECK_REFERENCE, TPS_BENCH_CHECK_FAST_VS_REF, TPS_BENCH_CHECK_SPLIT };

/* One check, as it completes. */
typedef struct {
  int kind;              /* TPS_BENCH_CHECK_* */
  int m;                 /* rows (split: T) */
  int ok;
  /* REFERENCE: the GEMM vs a float64 CPU reference of the quantized operands */
  int all_rows;          /* 1: every row checked; 0: 8 sampled rows (first, last, 6 random) */
  int rows_checked;
  double rel;            /* REFERENCE: relative Frobenius error; others: relative difference */
  double max_abs_diff;
  long non_finite;       /* REFERENCE: NaN or infinite outputs of the m rows */
  /* FAST_VS_REF (vs the path's reference kernel) and SPLIT: elements whose bits differ */
  long differing, elements;
  tps_path_id reference; /* FAST_VS_REF: the reference kernel's path */
  /* SPLIT: T rows in shards of ceil(T/tp) rows, one after another, vs T rows at once */
  int tp, shard_rows, same_config, bitwise_required;
  double max_abs_y;
} tps_bench_gemm_check;

typedef struct {
  int m;                 /* rows */
  char config[256];      /* kernel configuration for m rows (tps_gemm_config) */
  uint64_t config_id;    /* equal for two rows exactly when their configuration is */
  tps_timing t[3];       /* parts timed: [0] the whole GEMM; quant paths: [1] the GEMM alone,
                          * [2] the activation quantization alone */
  tps_timing ev[3];      /* the same replays timed by CUDA events */
} tps_bench_gemm_row;

typedef struct tps_bench_gemm_result tps_bench_gemm_result;

typedef struct {
  tps_path_id path;      /* a path with TPS_PATH_F_BENCH */
  int k, n;              /* multiples of 64 */
  const int *rows;       /* the M to check and time, ascending, distinct */
  int nrows;
  const long *tokens;    /* split checks: every T of tokens at every TP of tps */
  size_t ntokens;
  const long *tps;
  size_t ntps;
  int samples, warmup, device;
  int check_only;        /* check, time nothing */
  int full_checks_done;  /* the all-row checks at M 1, 7, 64 and 129 already passed for this
                          * path, K and N in this process (calibrate's later rounds): left out;
                          * every M of rows still has its 8 sampled rows checked */
  int check_per_config;  /* 1: the 8 sampled rows are checked at the first M of each kernel
                          * configuration (tps_gemm_config id) among rows, not at every M: a
                          * dense table of hundreds of M then costs a check per configuration
                          * (the float64 CPU reference dominates such a run); the all-row checks
                          * stay as they are */
  int configs_only;      /* 1: no check, no timing: only every row's configuration (the
                          * library's heuristic or our dispatch, which needs no GPU time) */
  int flush_write_only;  /* L2 flush: the write alone */
  unsigned long seed;
  void *arg;             /* passed to the callbacks */
  void (*on_check)(void *arg, const tps_bench_gemm_check *c);
  /* after the checks, before any timing: the rows' configurations and (when timing) the
   * timer are known */
  void (*on_checked)(void *arg, const tps_bench_gemm_result *r);
} tps_bench_gemm_opts;

struct tps_bench_gemm_result {
  tps_bench_prov prov;
  tps_bench_gemm_row *rows; /* nrows, allocated by the caller */
  int nparts;            /* parts timed per row: 3 for a path with a quantization part, else 1 */
  int failed;            /* a check failed: nothing timed */
  double weight_bytes;   /* bytes of weights (incl. scales) the GEMM reads */
  char why[TPS_BENCH_WHY];
};

/* Check (every check through on_check), then time o->path. */
int tps_bench_gemm_run(const tps_bench_gemm_opts *o, tps_bench_gemm_result *r);

/* ---------------------------------------------------------------- multi-rank benches */
/* What bench split and bench allgather share: the world of ranks, the gather and the
 * timing loop (kernels/bench/bench_world.cu). */
enum { TPS_BENCH_ROW_START, TPS_BENCH_ROW_CHECKED, TPS_BENCH_ROW_TIMED };

typedef struct {
  int tp;                /* ranks = GPUs, 1..TPS_BENCH_MAX_RANKS */
  int gather;            /* tps_gather_id of model/core/backend.h */
  int samples, warmup;   /* samples <= 200 */
  int blocks, threads;   /* custom gather kernel launch (0: its defaults) */
  size_t cap_bytes;      /* custom gather per-rank input cap */
  void *arg;             /* passed to the callbacks, which run on rank 0 only */
  /* before any GPU work: a status other than TPS_OK ends the run with it */
  int (*on_start)(void *arg);
  /* row i (a tps_bench_split_row or tps_bench_ag_row) at each TPS_BENCH_ROW_* phase */
  void (*on_row)(void *arg, size_t i, int phase, const void *row);
} tps_bench_world_opts;

typedef struct {
  tps_bench_prov prov;
  int writer;            /* 1 in the process that holds the results (rank 0) */
  long stopped;          /* the row the run stopped at (a check failed, an error), -1 */
  char why[TPS_BENCH_WHY];
} tps_bench_world_result;

/* bench split: replicated(T) = GEMM(T rows) on every rank; split(T) = GEMM(this rank's
 * rows of S = ceil(T/tp)) + all-gather of the bf16 output. */
typedef struct {
  long tokens, rows;     /* T and S = ceil(T/tp) */
  int used;              /* tps_gather_id that ran */
  tps_timing rep, split;
  double maxdiff, relfrob; /* split vs replicated: max |diff|, relative Frobenius error */
  long same_cfg_shards;  /* shards checked bitwise against the replicated rows */
  /* failed checks (counts, maximum over ranks) */
  double nan;            /* NaN outputs (unwritten rows) */
  double gathered_bad;   /* gathered elements that differ from the shards */
  double bitwise_bad;    /* same-configuration shards that differ from the replicated rows */
  double hash_bad;       /* ranks whose replicated output differs from rank 0's */
  double split_rel_diff; /* relfrob allowed */
  int bad;               /* number of failed checks */
} tps_bench_split_row;

typedef struct {
  tps_bench_world_opts w;
  tps_path_id path;
  int k, n;
  const long *tokens;    /* ascending */
  size_t ntok;
  unsigned long seed;
} tps_bench_split_opts;

typedef struct {
  tps_bench_world_result w;
  tps_bench_split_row *rows; /* ntok, allocated by the caller */
  double maxdiff_all;    /* max |diff| over all rows */
} tps_bench_split_result;

int tps_bench_split_run(const tps_bench_split_opts *o, tps_bench_split_result *r);

/* bench allgather: the all-gather alone, out of place and in place (nccl-tests' layout). */
typedef struct {
  size_t size, count;    /* bytes of the gathered buffer (0: skipped), elements per rank */
  int used;              /* tps_gather_id that ran */
  tps_timing oop, ip;
  long wrong_oop, wrong_ip; /* elements that differ from the expected pattern, all ranks */
} tps_bench_ag_row;

typedef struct {
  tps_bench_world_opts w;
  const long *sizes;     /* bytes of the whole gathered buffer, ascending */
  size_t nsizes;
} tps_bench_ag_opts;

typedef struct {
  tps_bench_world_result w;
  tps_bench_ag_row *rows; /* nsizes, allocated by the caller */
} tps_bench_ag_result;

int tps_bench_allgather_run(const tps_bench_ag_opts *o, tps_bench_ag_result *r);

#ifdef __cplusplus
}
#endif
#endif
