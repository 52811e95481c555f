/* path.h: GEMM kernel paths, named const "type" structs (GSL style).
 *
 * A path fixes how many bytes a weight element costs, which tensor peak bounds its
 * compute, its tiling, and the efficiency priors used when no measurement of that path
 * exists (spec-only predictions).  The priors and their sources are documented in
 * each path's file next to each value (model/core/paths/README). */
#ifndef TPS_MODEL_PATH_H
#define TPS_MODEL_PATH_H
#include "model/core/gpu.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The one list of kernel paths: every name list, option check and message derives from
 * tps_paths[] (ids index it).  A path is a file of its own, model/core/paths/<name>.c, and a
 * line of MODEL_PATHS (Makefile.am), from which the build writes model/core/paths.def:
 * TPS_PATH(<name>, <NAME>) per path, in the list's order; its id is TPS_PATH_<NAME>.  When
 * benchable, its tps_gemm_ops in kernels/gemm/gemm_<name>.cu (doc/extending.md). */
typedef enum {
#define TPS_PATH(name, NAME) TPS_PATH_##NAME,
#include "model/core/paths.def"
#undef TPS_PATH
  TPS_NPATHS
} tps_path_id;

/* What a path can be used for (tps_path.flags). */
enum {
  TPS_PATH_F_MODEL = 1u << 0, /* has priors: predict/crossover/plot/simulate/decide take it */
  TPS_PATH_F_BENCH = 1u << 1, /* kernels/ can run it: bench gemm/split, GPU tests */
  TPS_PATH_F_REFKERNEL = 1u << 2 /* a reference kernel: checks another path's kernel, never a choice (calibrate) */
};

/* Which model answers a path's GEMM where nothing measures it (model/predict/resolve.c reads
 * this, never the path's id). */
typedef enum {
  TPS_PATH_MODEL_SPEC = 0,  /* the datasheet x the path's priors only */
  TPS_PATH_MODEL_XGEMM,     /* the cross-GPU GEMM model, form xgemm_form (tps_xg_path: 0 bf16, 1 fp8, 2 fp8-block, 3 nvfp4) */
  TPS_PATH_MODEL_OWN,       /* our kernels' model fitted on one GPU, on GPUs of compute capability own_cc */
  TPS_PATH_MODEL_TABLE_FIT  /* the fit of the bundled table that measures it (the H20 Marlin table) */
} tps_path_model;

typedef struct tps_path {
  tps_path_id id;
  unsigned flags;          /* TPS_PATH_F_* */
  const char *name;        /* canonical name, as on the command line and in files */
  const char *aliases;     /* other accepted spellings, space separated ("" = none) */
  const char *desc;        /* one line */
  double weight_bytes;     /* bytes per weight element read from HBM, scales included */
  double act_bytes;        /* bytes per activation element read by the GEMM */
  int fp8_peak;            /* 1: compute bounded by the fp8 tensor peak (fp8 operands); 0: bf16 peak */
  int row_tile;            /* M is padded up to a multiple of this */
  int col_tile;            /* output columns per tile (waves over the SMs) */
  int min_cc;              /* lowest compute capability (x10, e.g. 89) the path runs on */
  double compute_eff;      /* prior: fraction of the tensor peak reached at large M */
  double compute_eff_rsd;  /* prior's relative standard deviation */
  double stream_eff;       /* prior: fraction of HBM bandwidth reached when streaming weights */
  double stream_eff_rsd;
  double floor_us;         /* prior: fixed cost in a CUDA graph (launch, fill, drain) */
  const char *source;      /* where the priors come from */
  /* A measured sibling moved to its sibling (model/predict/resolve.h): the fixed part that
   * does not move (us; 0: floor_us) and how much of the spec ratio the rest follows (ratio^
   * sibling_alpha; 0: 1), learned on the pair measured both (tests/unit/model/test_sibling_data.c
   * re-measures them and fails if another point of its grid is better by more than 0.5). */
  double sibling_fixed_us;
  double sibling_alpha;
  /* Where nothing measures it: */
  int model;               /* tps_path_model */
  int xgemm_form;          /* TPS_PATH_MODEL_XGEMM: 0 bf16, 1 fp8, 2 fp8-block, 3 nvfp4 (tps_xg_path) */
  int own_cc;              /* TPS_PATH_MODEL_OWN: compute capability x10 its model holds on (90) */
  const char *aic_dtype;   /* AIConfigurator's dtype column for this path ("" none) */
  const char *record_as;   /* the model path a measurement of it stands for in tables (bench split's
                            * '#@ path'), NULL: its own name */
  const char *spec_note;   /* said after a spec-only answer ("" none) */
  /* The launch structure of sliced stream-K kernels (model/latency/gemm.c): */
  int slice_rows;          /* >0: the kernel splits M into slices of at most this many rows,
                            * each a separate pass over the weights, with K split across SMs
                            * (stream-K, serial reduction); 0: one output-tiled launch */
  int max_par;             /* slices per launch at most (Marlin's max_par); more rows => more launches */
  double reduce_us;        /* prior: cost of one serial reduction step of a 16-row block, us */
  int fp4_peak;            /* 1: compute bounded by the FP4 tensor peak (tps_gpu.fp4_tflops; fp8_peak 0):
                            * a GPU without one is refused */
} tps_path;

/* One object per path, tps_path_<name> (model/core/paths/<name>.c). */
#define TPS_PATH(name, NAME) extern const tps_path tps_path_##name;
#include "model/core/paths.def"
#undef TPS_PATH
/* All paths, indexed by id, NULL-terminated (tps_paths[TPS_NPATHS] == NULL). */
extern const tps_path *const tps_paths[];

/* Find a path by name or alias (case-insensitive). NULL when unknown. */
const tps_path *tps_path_find(const char *name);
/* Find a path that has every flag in `flags` (0 = any); NULL when unknown or lacking one. */
const tps_path *tps_path_find_for(const char *name, unsigned flags);
/* The path of an id; NULL when out of range. */
const tps_path *tps_path_get(int id);
/* The paths with every flag in `flags`, in table order, into out[0..max); returns how many. */
unsigned long tps_path_select(unsigned flags, const tps_path **out, unsigned long max);
/* The model path whose AIConfigurator dtype column is `dtype` ("bfloat16", "fp8"); NULL when none. */
const tps_path *tps_path_by_aic_dtype(const char *dtype);
/* The name a measurement of p is recorded under (record_as, else p's name). */
const char *tps_path_record_name(const tps_path *p);
/* The dense tensor peak that bounds p's compute on g, TFLOPS (fp4, fp8 or bf16 as the row says; 0
 * when g has none), and its name ("fp4", "fp8", "bf16"). */
double tps_path_peak_tflops(const tps_path *p, const tps_gpu *g);
const char *tps_path_peak_name(const tps_path *p);
/* Canonical name of an id, "?" when out of range. */
const char *tps_path_name(int id);
/* The names of every path with all of `flags`, joined by ", " (for --help and messages).
 * Returns buf (always NUL-terminated). */
const char *tps_path_names(unsigned flags, char *buf, unsigned long bufsz);
/* One line saying why tps_path_find_for(name, flags) found nothing, listing the paths that
 * have `flags`: "unknown kernel path 'x' (one of: a, b)", or for a known path that lacks a
 * flag "kernel path 'w8a16' has no model (bench only; one of: a, b)".  Returns buf. */
const char *tps_path_unknown(const char *name, unsigned flags, char *buf, unsigned long bufsz);

#ifdef __cplusplus
}
#endif
#endif
