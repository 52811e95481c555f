/* path.h: GEMM kernel paths, named const "type" structs (GSL style).
 *
 * A path fixes how many bytes a weight element costs, which tensor peak bounds its
 * compute, its tiling, and the efficiency priors used when no measurement of that path
 * exists (spec-only predictions).  The priors and their sources are documented in
 * path.c next to each value. */
#ifndef TPS_PATH_H
#define TPS_PATH_H
#ifdef __cplusplus
extern "C" {
#endif

typedef struct tps_path {
  const char *name;        /* "marlin-w8a16", "dense-bf16", "native-fp8" */
  const char *desc;        /* one line */
  double weight_bytes;     /* bytes per weight element read from HBM, scales included */
  double act_bytes;        /* bytes per activation element read by the GEMM */
  int fp8_peak;            /* 1: compute bounded by the fp8 tensor peak; 0: bf16 peak */
  int row_tile;            /* M is padded up to a multiple of this */
  int col_tile;            /* output columns per tile (waves over the SMs) */
  int min_cc;              /* lowest compute capability (x10, e.g. 89) the path runs on */
  double compute_eff;      /* prior: fraction of the tensor peak reached at large M */
  double compute_eff_rsd;  /* prior's relative standard deviation */
  double stream_eff;       /* prior: fraction of HBM bandwidth reached when streaming weights */
  double stream_eff_rsd;
  double floor_us;         /* prior: fixed cost in a CUDA graph (launch, fill, drain) */
  const char *source;      /* where the priors come from */
  /* Fields added by the fit area (model/gemm.c reads them): */
  int slice_rows;          /* >0: the kernel splits M into slices of at most this many rows,
                            * each a separate pass over the weights, with K split across SMs
                            * (stream-K, serial reduction); 0: one output-tiled launch */
  int max_par;             /* slices per launch at most (Marlin's max_par); more rows => more launches */
  double reduce_us;        /* prior: cost of one serial reduction step of a 16-row block, us */
} tps_path;

extern const tps_path tps_path_marlin_w8a16;
extern const tps_path tps_path_dense_bf16;
extern const tps_path tps_path_native_fp8;
/* NULL-terminated list of all paths. */
extern const tps_path *const tps_paths[];

/* Find a path by name (case-insensitive). NULL when unknown. */
const tps_path *tps_path_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
