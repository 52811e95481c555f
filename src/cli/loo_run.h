/* loo_run.h: what `tpsplit fit --loo-gpu` computes (src/cli/cmd_loo.c) and prints
 * (src/cli/loo_report.c): the per-GPU folds of the GEMM and all-gather models, the break-even
 * rows with their decision quality (by the models and by the evidence hierarchy). */
#ifndef TPS_CLI_LOO_RUN_H
#define TPS_CLI_LOO_RUN_H
#include <math.h>
#include "src/cli/loo_data.h"
#include "model/numeric/robust.h"
#include "model/predict/excess.h"
#include "model/predict/xfer.h"
#include <jansson.h>

#define OUT_BYTES_PER_TOKEN 3584.0 /* fused_wqa_wkv: 1792 bf16 outputs per token */
#define BE_N 1792
#define BE_TMAX 16384.0
enum { TPS_LOO_NRANKS = 3 }; /* the all-gather rank counts scored: tps_loo_ag_ranks */
#define BE_NONE 32768.0 /* "never below 16384": counted as twice the grid's end */
#define EX_MEAN_TARGET TPS_EXCESS_TARGET_MEAN   /* issue 27: mean excess <= 1% (model/predict/excess.h) */
#define EX_WORST_TARGET TPS_EXCESS_TARGET_WORST /* and worst <= 10% */

typedef struct {
  int ngpu, grp[MAXSETS];
  tps_xg_model fold[MAXSETS]; /* per GPU: the fit without it */
  int fold_ok[MAXSETS];       /* fitted (all, or the --hold-out GPU) */
  tps_xg_model nest[MAXSETS][MAXSETS]; /* per GPU pair (g, h): the fit without both */
  int nest_ok[MAXSETS][MAXSETS];       /* that fit exists (a GPU is left to train on) */
  double sigma[MAXSETS];      /* per GPU: 90% interval log half-width (nested) */
  tps_loo_err err[MAXSETS];   /* per set */
  double cover[MAXSETS];      /* per set: share of its points inside the 90% interval */
  double width[MAXSETS];      /* per set: full width of the interval, relative */
} gemm_loo;

typedef struct {
  tps_xga_model fold[MAXSETS];
  tps_xga_model nest[MAXSETS][MAXSETS];
  int nest_ok[MAXSETS][MAXSETS];
  int fold_ok[MAXSETS];
  tps_loo_err err[MAXSETS], err_n[MAXSETS][TPS_LOO_NRANKS]; /* eval points; 64 KiB..64 MiB at 2, 4, 8 ranks */
  tps_loo_err err_1pt[MAXSETS]; /* eval points, the latency shifted to the GPU's own smallest-size time */
  double hw[MAXSETS], cover[MAXSETS];
  int hw_ok[MAXSETS];
} gather_loo;

extern const int tps_loo_ag_ranks[TPS_LOO_NRANKS]; /* 2, 4, 8 */

#define BE_MAXROWS 96
typedef struct {
  const tps_gpu *gpu;
  int path, tp;
  double meas, pred, lo, hi; /* break-even tokens; BE_NONE for none */
  double meas_ag10;          /* the measured break-even with the measured gather 10% slower */
  int agree, grid;           /* decisions that agree at T = 1, 2, 4 .. 16384 */
  int covered, has_interval;
  /* the excess (model/predict/excess.h) on the measured parts of: the predicted break-even as
   * the threshold, the threshold the tool writes from the same prediction (tps_threshold_choose
   * on its predicted costs: a thresholds file's split_from_tokens), the measured break-even */
  tps_excess ex_pred, ex_thr, ex_meas;
  double thr;                /* that written threshold; TPS_EXCESS_NEVER: never; NaN: none made */
  /* the single threshold nearest the target on the measured parts (tps_excess_best): where it
   * misses, no one threshold meets the target */
  tps_excess ex_best;
  double best_thr;           /* TPS_EXCESS_NEVER: never */
  /* the evidence hierarchy's answer (model/predict/resolve.h): a measured sibling's GEMM
   * (moved) and gather (as measured) where the training GPUs hold one, else the models */
  char sib_gemm[32], sib_gather[32]; /* "" when the model answered */
  double pred_h;
  tps_excess ex_h;
  /* the threshold the tool writes from the hierarchy's answer (tps_threshold_choose on its own
   * predicted costs, not the break-even), scored on the measured parts */
  double hthr;
  tps_excess ex_hthr;
} be_row;

/* Transfer accuracy (src/cli/loo_xfer.c, model/predict/xfer.h): per GEMM set and per gather GPU
 * and GPU count, the model alone, copying the nearest measured sibling, and the hierarchy's answer. */
typedef struct {
  const tps_gpu *gpu;
  int path;
  char what[24];  /* "aic/sglang", "aic/trtllm", "bench" */
  char sib[32];   /* the sibling's name, "" none */
  tps_xfer_err model, copy, hier;
  int met;
} xfer_gemm_row;
typedef struct {
  const tps_gpu *gpu;
  int ranks;
  char sib[32];
  tps_xfer_err model, copy, hier;
  int met, has_interval; /* has_interval 0: a PCIe GPU (no nested fit, no sibling) */
} xfer_gather_row;
#define XFER_MAXROWS 48
#define XFER_MAXSIB 4096
typedef struct {
  xfer_gemm_row g[XFER_MAXROWS];
  int ng;
  xfer_gather_row a[XFER_MAXROWS];
  int na;
  double gsib[XFER_MAXSIB], asib[XFER_MAXSIB]; /* log(answer / measured) of the points a sibling answered */
  size_t ngsib, nasib;
  size_t gcov[2], gn[2], acov[2], an[2]; /* points covered by the model's [0] and the hierarchy's [1] interval, of
                                          * the points that have one; NVLink for the gather */
} xfer_run;

typedef struct {
  int path;
  int ns;
  gset sets[MAXSETS];
  gemm_loo r;
} gemm_part;

/* One run of the command: what it does, what it read, what it found. */
typedef struct {
  int json, do_gemm, do_gather, do_be, do_w8, do_xfer;
  const tps_gpu *hold;       /* --hold-out: that GPU's GEMM fold only */
  gemm_part gp[TPS_XG_NPATH];
  aset as[MAXSETS];
  int nas;
  gather_loo ar;
  be_row be[BE_MAXROWS];
  int nbe;
  w8_part w8;
  xfer_run xf;
} loo_run;

/* The fold group of gpu in a GEMM part (and its set, when set is not NULL); -1 none. */
int tps_loo_gemm_group_of(const gemm_part *gp, const tps_gpu *gpu, int *set);
/* A break-even as a threshold (TPS_EXCESS_NEVER for none). */
static inline double tps_loo_as_threshold(double be) { return be >= BE_NONE || !(be > 0) ? TPS_EXCESS_NEVER : be; }
/* The tables (text) or the JSON of a run; the exit code of printing. */
void tps_loo_print_text(const loo_run *r);
int tps_loo_print_json(const loo_run *r);
/* Transfer accuracy (src/cli/loo_xfer.c): computed from the GEMM and gather folds (a
 * tps_status), printed, as JSON. */
int tps_loo_xfer_compute(loo_run *r);
void tps_loo_xfer_print(const loo_run *r);
json_t *tps_loo_xfer_json(const loo_run *r);

#endif
