/* plot.h: figures through gnuplot.  The program writes data and scripts; gnuplot draws.
 *
 * For each figure NAME, into an output folder:
 *   NAME.dat  tab-separated data: '#' provenance lines (tpsplit version, command, inputs),
 *             then one or more blocks (separated by two blank lines, gnuplot's `index`), each
 *             with a '#' line saying what it holds and one header row with units in the names;
 *   NAME.gp   a self-contained gnuplot script that reads NAME.dat and writes NAME.png (or
 *             .svg/.pdf).  It holds no date and no absolute path: the same inputs give the same
 *             bytes, and `gnuplot -d NAME.gp` run in the folder redraws the figure by hand;
 *   NAME.png  the image, when gnuplot is found.
 *
 * gnuplot is run without a shell (fork + chdir + exec, `gnuplot -d NAME.gp`, -d: ignore the
 * user's ~/.gnuplot), in a temporary folder next to the figure; the image is renamed into
 * place only when complete (PNG/SVG/PDF end marker), so a failed or killed gnuplot, a full
 * disk or an interrupt leaves no partial image.  Which gnuplot: $TPSPLIT_GNUPLOT when set (a
 * path or a name on PATH; empty or not executable = no gnuplot: the way tests simulate its
 * absence), else `gnuplot` on PATH at run time.  It is killed (with its process group) when it
 * runs past $TPSPLIT_GNUPLOT_TIMEOUT seconds (default 60): an error naming the limit.  Without
 * gnuplot, one line on stderr says so and the .dat/.gp files are still written.
 *
 * Colours: one fixed colour per GPU in every figure (tps_plot_gpu_colour); TP sizes are shades
 * of that colour (light = TP2 .. dark = TP16); kernel paths are dash types.  All text is printed
 * literally (noenhanced: "H100-SXM_x" keeps its underscore).
 *
 * Figures (writers below take plain arrays, so any source can feed them):
 *   latency_*   latency vs tokens, replicated and split, model curves with 90% bands, measured
 *               points (error bars when min/max are known), the gather backend switch marked;
 *   speedup_*   replicated/split vs tokens, one curve per GPU (or TP, or path), 1.0 dashed,
 *               break-even with its interval and the recommended threshold;
 *   crossover   break-even tokens on a GPU x TP map, one panel per kernel path;
 *   fitq_*      relative residual of each measured point and its leave-one-out error;
 *   layers_*    the input-projection stage of one chunk summed over the layers, replicated vs split,
 *               as two bars stacked by layer kind (simulator). */
#ifndef TPS_PLOT_H
#define TPS_PLOT_H
#include <stddef.h>
#include "src/base/err.h"
#include "model/fit/fit.h"
#include "model/predict/predict.h"
#include "src/io/gpus.h"
#ifdef __cplusplus
extern "C" {
#endif

enum { TPS_PLOT_PNG = 0, TPS_PLOT_SVG = 1, TPS_PLOT_PDF = 2, TPS_PLOT_NFORMATS };
#define TPS_PLOT_GNUPLOT_TIMEOUT_S 60
extern const char *const tps_plot_format_names[TPS_PLOT_NFORMATS]; /* "png", "svg", "pdf" (also the extension) */

typedef struct {
  int format;               /* TPS_PLOT_PNG (default), TPS_PLOT_SVG, TPS_PLOT_PDF */
  int width_px, height_px;  /* image size (default 1200 x 800); PDF: 1/150 inch per unit */
  int render;               /* 1 (default): run gnuplot; 0: write .dat/.gp only */
  int quiet;                /* 1: do not print the "gnuplot not found" line */
  const char *inputs;       /* for the .dat provenance line "# inputs: ..." (may be NULL) */
  int nsamples;             /* bootstrap samples of bands and intervals (0 = 200) */
  unsigned long seed;       /* their gsl_rng seed (default 1, as `tpsplit crossover`) */
  const char *title;        /* a speedup figure's title instead of the default (NULL: default) */
} tps_plot_opts;

/* Defaults: PNG, 1200 x 800, render, not quiet, no inputs, 200 samples, seed 1. */
void tps_plot_opts_init(tps_plot_opts *o);
/* "png"|"svg"|"pdf" -> TPS_PLOT_*; "WxH" (each 100..10000) -> pixels. 0 ok, -1 bad. */
int tps_plot_parse_format(const char *s, int *format);
int tps_plot_parse_size(const char *s, int *w, int *h);

/* The files a run wrote (full paths as dir/NAME.ext), for --json and the last line. */
typedef struct {
  size_t n, cap;
  char **path;
  int images;          /* images produced by gnuplot */
  int gnuplot_missing; /* 1: no gnuplot found, only .dat/.gp written */
} tps_plot_files;
void tps_plot_files_init(tps_plot_files *w);
void tps_plot_files_free(tps_plot_files *w);

/* The gnuplot that would run (see top), or NULL when none is found. */
const char *tps_plot_gnuplot(void);

/* The GPU table whose plot_colour column colours the figures (data/gpus.tsv; copied, so t may
 * be freed after).  Commands that plot call it once after loading the table. */
void tps_plot_use_gpus(const tps_gpu_table *t);
/* Fixed colour of a GPU, "#rrggbb": the plot_colour of the table's GPU of that name or alias,
 * else of the one equal up to the first '-' (H200 = H200-SXM), case-insensitive; GPUs with
 * none, or no table given, get a stable colour from a hash of the name. */
const char *tps_plot_gpu_colour(const char *gpu);

/* A file-name-safe copy of s: letters, digits, '.', '-', '_' kept, anything else becomes '-'. */
void tps_plot_safe_name(const char *s, char *out, size_t outsz);

/* ---------------------------------------------------------------- figure data */

/* One model curve (a GPU, TP and path) on a token grid.  Band arrays may be NULL (no band);
 * NaN entries are skipped.  backend[] holds a tps_gather_id per token (may be NULL). */
typedef struct {
  const char *gpu;           /* "H200-SXM" */
  int tp;
  const char *path;          /* kernel path name */
  const char *source;        /* where it comes from, in words ("GEMM measured (FILE); gather ...") */
  size_t n;
  const long *tokens;        /* strictly increasing, >= 1 */
  const double *rep_us, *rep_lo_us, *rep_hi_us;       /* replicated latency and 90% band */
  const double *split_us, *split_lo_us, *split_hi_us; /* split latency and 90% band */
  const double *speedup_lo, *speedup_hi;              /* 90% band of rep/split (may be NULL) */
  const int *backend;
  double breakeven_tokens;   /* NaN when the split never wins */
  double breakeven_lo, breakeven_hi; /* 90% interval (NaN when unknown; hi NaN with lo finite: "never") */
  double threshold_tokens;   /* recommended threshold (NaN when none) */
  const char *colour;        /* "#rrggbb" instead of the GPU's colour (NULL: the GPU's) */
  const char *gather;        /* gather backend rule ("auto", "nccl", "custom"; NULL: not said) */
  long k, nout;              /* GEMM shape K x N of the projection (0: not said) */
} tps_plot_curve;

/* Measured points of one configuration; min/max arrays may be NULL (no error bars). */
typedef struct {
  const char *gpu;
  int tp;
  const char *path;
  const char *file;          /* where the numbers come from (title/provenance) */
  size_t n;
  const long *tokens;
  const double *rep_us, *split_us;
  const double *rep_min_us, *rep_max_us, *split_min_us, *split_max_us;
} tps_plot_meas;

/* One cell of the crossover map. */
typedef struct {
  const char *gpu;
  int tp;
  const char *path;
  double breakeven_tokens;   /* NaN: the split never wins in the range asked */
  double breakeven_lo, breakeven_hi, threshold_tokens;
  int na;                    /* 1: the path cannot run there (e.g. fp8 on an A100): cell "n/a" */
  const char *gather;        /* gather backend rule (NULL: not said) */
  long k, nout;              /* GEMM shape K x N (0: not said) */
} tps_plot_cell;

/* The simulator's input-projection stage of one chunk, by layer kind (a kind = the layers
 * holding the same projections, model/sim/sim.h), with the model's totals over all layers. */
typedef struct {
  const char *model;         /* model name, e.g. "DeepSeek-V4.1-Flash" */
  const char *gpu;
  int tp;
  const char *path;
  long tokens;               /* tokens of the step simulated */
  size_t n;                  /* per layer, for the .dat (may be 0) */
  const int *layer;          /* layer index */
  const double *main_us;     /* stage time with the projection replicated */
  const double *split_us;    /* stage time with the projection split */
  size_t nkind;              /* layer kinds, >= 1 */
  const char *const *kind_label;  /* "plain", "compressor/1024+indexer/32" */
  const char *const *kind_layers; /* "0-1,3-7,..." (may be NULL) */
  const int *kind_count;          /* layers of the kind */
  const double *kind_main_us;     /* stage time of one layer of the kind, replicated */
  const double *kind_split_us;    /* and split */
  double total_main_us, total_split_us; /* the model's sums over all layers (tps_sim_chunk) */
  const char *gather;             /* gather backend rule (NULL: not said) */
  long hidden;                    /* K of every projection: the model's hidden size (0: not said) */
} tps_plot_layers;

enum { TPS_PLOT_BY_GPU = 0, TPS_PLOT_BY_TP = 1, TPS_PLOT_BY_PATH = 2 };

/* ---------------------------------------------------------------- figure writers
 * Each writes DIR/NAME.dat and DIR/NAME.gp, renders when gnuplot is there, appends what it
 * wrote to w (may be NULL), and returns 0, or -1 with e set (bad data, a write error, gnuplot
 * failing on the script).  dir is created when missing. */

/* Latency vs tokens for one configuration (m may be NULL). */
int tps_plot_latency(const char *dir, const char *name, const tps_plot_curve *c,
                     const tps_plot_meas *m, const tps_plot_opts *o, tps_plot_files *w, tps_err *e);
/* Speedup vs tokens: nc curves (one per GPU, TP or path: `by` names which one varies, for the
 * legend and the title), nm measured sets drawn as points in their GPU's colour. */
int tps_plot_speedup(const char *dir, const char *name, int by, const tps_plot_curve *c, size_t nc,
                     const tps_plot_meas *m, size_t nm, const tps_plot_opts *o, tps_plot_files *w,
                     tps_err *e);
/* Crossover map: one panel per distinct path (in order of first appearance), GPUs as rows
 * (order of first appearance), TP sizes as columns (increasing). */
int tps_plot_crossover(const char *dir, const char *name, const tps_plot_cell *cells, size_t n,
                       const tps_plot_opts *o, tps_plot_files *w, tps_err *e);
/* Fit quality of a fit (fit.h): relative residuals and, when computed, leave-one-out errors. */
int tps_plot_fitq(const char *dir, const char *name, const tps_fit *f, const char *path_name,
                  const tps_plot_opts *o, tps_plot_files *w, tps_err *e);
/* The input-projection stage over all layers, replicated vs split, stacked by layer kind. */
int tps_plot_layers_fig(const char *dir, const char *name, const tps_plot_layers *l,
                        const tps_plot_opts *o, tps_plot_files *w, tps_err *e);

struct tps_predref_s; /* src/evidence/evidence.h */
struct tps_grid_s;

/* ---------------------------------------------------------------- figures from the model
 * (src/cli/plot_job.c) What `tpsplit plot` draws: fits (each with its measured points), predicted
 * curves for targets GPU x TP x path, grouped into speedup figures by `by`, a latency figure
 * per target (when there are at most 12), the crossover map (when more than one target), the
 * per-layer figure when model_name is set. */
typedef struct {
  const char *outdir;
  const tps_plot_opts *o;          /* may be NULL */
  /* references: fits and the tables they came from (meas[i] may be NULL) */
  size_t nfit;
  const tps_fit *const *fit;
  const tps_gpu *const *fit_gpu;   /* the GPU each fit was measured on */
  const char *const *fit_path;     /* kernel path name of each fit */
  const tps_plot_meas *const *meas;
  /* targets; empty lists = the first fit's GPU, TP and path */
  size_t ngpu, ntp, npath;
  const tps_gpu *const *gpu;
  const int *tp;
  const char *const *path;
  int scaling;                     /* TPS_SCALING_* (predict.h); spec when there is no fit */
  long tmax;                       /* curves on T = 1..tmax (0 = 16384) */
  int by;                          /* TPS_PLOT_BY_* */
  unsigned figures;                /* TPS_PLOT_FIG_* bits; 0 = every figure that applies */
  const char *model_name;          /* per-layer figure: model description name or file */
  long sim_tokens;                 /* its tokens per step (0 = 8192) */
  const struct tps_predref_s *ref; /* scaling parts: the parts (src/evidence/evidence.h); NULL otherwise */
  const tps_pred_opts *po;         /* the question's options (--gather and its cap, inter-node); NULL: defaults */
} tps_plot_job;

enum {
  TPS_PLOT_FIG_LATENCY = 1u << 0, TPS_PLOT_FIG_SPEEDUP = 1u << 1, TPS_PLOT_FIG_CROSSOVER = 1u << 2,
  TPS_PLOT_FIG_FITQ = 1u << 3, TPS_PLOT_FIG_LAYERS = 1u << 4
};
/* "latency,speedup,crossover,fitq,layers" -> bits; 0 ok, -1 unknown name. */
int tps_plot_parse_figures(const char *s, unsigned *bits);
int tps_plot_run(const tps_plot_job *j, tps_plot_files *w, tps_err *e);

/* The measured points of a split fit (its replicated and split points paired by token
 * count), copied into malloc'ed arrays of m (free with tps_plot_meas_free).  gpu, path and
 * file are borrowed for labels.  0, or -1 when the fit has no split points. */
int tps_plot_meas_from_fit(const tps_fit *f, const char *gpu, const char *path, const char *file,
                           tps_plot_meas *m);
void tps_plot_meas_free(tps_plot_meas *m);

/* ---------------------------------------------------------------- the main job's figures
 * Figures for the bundled data (what `tpsplit` with no arguments draws), from the reference
 * `tpsplit predict` uses (src/evidence/evidence.h, tps_predref_load: the bundled GPU table and a fit of the bundled H20 table):
 *   fitq_H20_tp8_marlin-w8a16          the fit, with leave-one-out errors;
 *   latency_{H20,H100-SXM,H200-SXM}_tp8_marlin-w8a16, speedup_tp8_marlin-w8a16
 *                                      H20 fitted and measured, H100/H200 predicted;
 *   speedup_tp8_marlin-w8a16_vs_rule   H100/H200 by the model next to the brief's rule;
 *   crossover                          every bundled GPU x TP 2,4,8,16 x path (tps_grid_run);
 *   layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192   the simulator's per-layer stage.
 * o may be NULL (defaults; o->nsamples and o->seed drive the bands and intervals), w may be
 * NULL.  Returns 0 (also when gnuplot is missing: w->gnuplot_missing), -1 with e on error. */
int tps_plot_default(const char *outdir, const tps_plot_opts *o, tps_plot_files *w, tps_err *e);
/* Render every NAME.gp listed in w (written with o->render = 0) with at most nproc gnuplot
 * processes at once, each running its share of the scripts in one session (`gnuplot -d -e
 * reset A.gp -e reset B.gp ...` in dir: one start-up per process instead of per figure);
 * the images are added to w.  No gnuplot: w->gnuplot_missing and one line on stderr (unless
 * o->quiet).  0, or -1 with e (a gnuplot that failed, a missing image). */
int tps_plot_render_batch(const char *dir, const tps_plot_opts *o, int nproc, tps_plot_files *w, tps_err *e);
/* The model of the main job's per-layer figure (data/models/NAME.tsv): a command that prints before it draws
 * checks it first (tps_modeldesc_check, src/io/modeldesc.h). */
#define TPS_PLOT_DEFAULT_MODEL "deepseek-v4.1-flash"
/* The same from the main job's reference (scaling parts, or NULL: loaded here) and its grid
 * of every bundled GPU x TP x path (NULL: computed here). */
int tps_plot_default_from(const char *outdir, const tps_plot_opts *o, const struct tps_predref_s *ref,
                          const struct tps_grid_s *grid, tps_plot_files *w, tps_err *e);

#ifdef __cplusplus
}
#endif
#endif
