/* loo_data.h: the bundled measurements of the cross-GPU models, read and fitted for
 * `fit --loo-gpu` (src/cli/cmd_loo.c) and `fit --xgpu` (src/cli/cmd_xgpu.c): the GEMM points
 * per GPU and path (AIConfigurator tables and our bench tables), the NCCL all_gather points per
 * GPU, our W8A16 kernels' table, and the fits without some GPUs.  Deterministic. */
#ifndef TPS_CLI_LOO_DATA_H
#define TPS_CLI_LOO_DATA_H
#include <stddef.h>
#include "src/base/err.h"
#include "src/io/gpus.h"
#include "model/numeric/robust.h"
#include "model/latency/xgather.h"
#include "model/latency/xgemm.h"

#define MAXSETS 16
#define HW_FLOOR 0.03 /* no interval narrower than +-3% (log half-width) */
#define GEMM_K 5120
#define GEMM_MMAX 16384
#define AG_EVAL_N 8
#define AG_EVAL_LO (64.0 * 1024)
#define AG_EVAL_HI (64.0 * 1024 * 1024)

/* The measured GEMM points of one GPU on one path. */
typedef struct {
  const tps_gpu *gpu;
  tps_xg_harness harness;
  char file[512];
  char what[96];        /* "AIC trtllm 1.3.0rc20, n 1536+2048" */
  size_t n;
  long *m, *nn;
  double *t;
  long *line;
  char *eval;           /* 1: a point of the error table (N 1536, 2048 or 1792); 0: training only */
  size_t neval;
  /* results */
  double *pred, *sigma_pred; /* held-out prediction, interval sigma */
} gset;

typedef struct {
  const char *aic_gpu;  /* file stem under data/aic/ */
  const char *backend;  /* backend rows used ("" = the file's only one) */
} aic_src;

/* The NCCL all_gather points of one GPU (2, 4, 8 ranks; half and int8 rows). */
typedef struct {
  const tps_gpu *gpu;
  char file[512];
  char version[16];
  size_t n;
  int *ranks;
  double *bytes, *t, *pred;
  char *eval;          /* 8 ranks, 64 KiB .. 64 MiB */
  size_t neval;
} aset;

typedef struct {
  const tps_gpu *gpu;
  char file[512];
  long n, k;
  size_t npts;
  long rows[64];
  double t[64], fit_us[64], loo_us[64];
  tps_xw8_model m;
  tps_loo_err in, loo;
  int loo_failed;
} w8_part;

/* GEMM: the AIConfigurator tables (a100_sxm twice: its sglang and trtllm rows), N 1536 and
 * 2048 scored (the measured N either side of 1792), 512, 1024, 3072, 4096 fitted only. */
extern const aic_src tps_lgo_aic_gemm[];
extern const size_t tps_lgo_naic;
extern const long tps_lgo_aic_n[2];
/* Our bench tables data/<stem>_gemm_<path>.tsv; fit --xgpu uses the first TPS_LGO_NBENCH_XGPU. */
extern const char *const tps_lgo_bench_gemm[];
#define TPS_LGO_NBENCH 2
#define TPS_LGO_NBENCH_XGPU 2
/* NCCL: data/aic/nccl_<stem>.tsv.gz */
extern const char *const tps_lgo_aic_nccl[];
#define TPS_LGO_NNCCL 6

/* The AIConfigurator dtype of a form ("bfloat16", "fp8", "fp8_block", "nvfp4") and the bundled
 * file of a GPU's rows of it under data/: aic/gemm_<gpu>_k5120.tsv.gz for bfloat16 and fp8,
 * aic/gemm_<gpu>_k5120_<dtype>.tsv.gz for the others (data/aic/README.md). */
const char *tps_lgo_aic_dtype(tps_xg_path path);
void tps_lgo_aic_gemm_rel(const aic_src *src, tps_xg_path path, char *rel, size_t sz);
/* Is data/<rel> there (readable)? */
int tps_lgo_has_file(const char *rel);
int tps_lgo_load_aic_gemm(const aic_src *src, tps_xg_path path, const tps_gpu_table *gt, gset *s, tps_err *e);
int tps_lgo_load_bench_gemm(const char *rel, const tps_gpu_table *gt, gset *s, tps_err *e);
/* Every GEMM set of a path (the AIC tables, then the first nbench bench tables) into sets,
 * *ns of them.  0, or -1 with e (the sets read so far are in sets[0..*ns)). */
int tps_lgo_load_gemm(tps_xg_path path, size_t nbench, const tps_gpu_table *gt, gset *sets, int *ns, tps_err *e);
void tps_lgo_gset_free(gset *s);
/* Sets grouped by GPU: grp[i] is set i's GPU index; returns the number of GPUs. */
int tps_lgo_group_sets(const gset *sets, int ns, int *grp);
/* The GEMM fit on the sets whose GPU group is not skipped (each GPU weighing 1), from the
 * path's prior (start NULL) or from start.  A tps_status. */
int tps_lgo_fit_except(tps_xg_path path, const gset *sets, int ns, const int *grp, const int *skipg, tps_xg_model *m,
                       const tps_xg_model *start);
void tps_lgo_predict_set(const tps_xg_model *m, const gset *s, double *out);

int tps_lgo_load_aic_nccl(const char *stem, const tps_gpu_table *gt, aset *s, tps_err *e);
/* Every NCCL table into as, *nas of them.  0, or -1 with e. */
int tps_lgo_load_nccl(const tps_gpu_table *gt, aset *as, int *nas, tps_err *e);
void tps_lgo_aset_free(aset *a);
/* The all-gather fit on the sets of one fabric (pcie 1: PCIe GPUs) not skipped.  A
 * tps_status (TPS_ETOOFEW: no set). */
int tps_lgo_fit_gather_except(const aset *sets, int ns, const int *skip, int pcie, tps_xga_model *m);

/* A GPU's measured GEMM at N = n (an AIC set): log-linear in N between the measured 1536 and
 * 2048 at every M measured at both; Steffen in log-log in M (model/numeric/robust.h).  NULL:
 * out of memory or too few points. */
tps_loo_curve *tps_lgo_measured_gemm(const gset *s, long n);
/* A GPU's measured all-gather at n ranks: the mean (in log) of both dtypes per size. */
tps_loo_curve *tps_lgo_measured_gather(const aset *a, int n);

/* Our W8A16 kernels: the table their model is fitted to (the dispatch of issue 28 on a lent
 * H100, K 5120 N 1792), in sample and leaving one M out. */
#define TPS_LGO_W8_TABLE "h100_w8a16_grid_5120x1792_w8a16.tsv"
int tps_lgo_run_w8(const tps_gpu_table *gt, w8_part *w, tps_err *e);

#endif
