/* parts.h: the two parts of a split's cost, each from a measurement or from a model.
 *
 *   replicated(T) = GEMM(T rows)
 *   split(T)      = GEMM(ceil(T/TP) rows) + ALLGATHER(TP * ceil(T/TP) * out_bytes_per_token, TP)
 *
 * A part is the GEMM time of m rows (one GPU, kernel path and shape K x N) or the all-gather
 * time of S bytes over n ranks (one GPU, backend).  Each has
 *  - measured points (optional): exact at the points; between two of them a GEMM part with a
 *    model (but Marlin's, a step per 16-row block and per launch: Steffen's curve there)
 *    follows the model's shape scaled through the two (model(x) x the measured/model
 *    ratio interpolated linearly in log M, kept between the two measured times: the wave and
 *    regime bends of the path's model instead of a generic curve through noisy neighbours),
 *    other parts interpolate monotonically in log-log (GSL Steffen, no accelerator: a part is
 *    shared read-only by threads); M and M+1 measured apart from other rows, M+1 the faster
 *    (AIConfigurator's 4352/4353), are one point at M, their half log ratio a floor of the
 *    measured spread (model/numeric/robust.h tps_twins_merge; a rising pair is a tile step,
 *    kept);
 *  - a model (optional): used outside the measured range, anchored to the nearest measured
 *    end (model(x) * measured(end) / model(end): no step where the measurement stops), or
 *    everywhere when nothing was measured.  Models: the cross-GPU GEMM model (xgemm.h), our
 *    W8A16 kernels' model (xgemm.h, tps_xw8), the gemm.h model (the H20 Marlin fit
 *    transferred, or spec-only), the cross-GPU all-gather model (xgather.h), the allgather.h
 *    model (spec-only; TP across nodes).
 * A part without a model evaluates to NaN outside its measured range: callers check
 * tps_part_covers() for the range a question needs and say so (one line) before asking.
 *
 * Provenance (tps_prov_*): measured (a file and its lines), fitted (a fit of this GPU's own
 * data), transferred (a model fitted on other GPUs, moved here by the GPU's datasheet),
 * spec-only (datasheet x path priors).  The text that names files and lines is written by
 * src/ (src/evidence/evidence.h); model/ keeps the kinds.
 *
 * Uncertainty: each part has a relative spread rsd (lognormal, exp(rsd z)): the measured
 * curve's (TPS_PART_MEASURED_RSD) inside its range, the model's outside; the interval of a
 * prediction draws one z per part (model/predict/uncertainty.c), and the GEMM part's factor is
 * exp(measured rsd z) on its measured rows and exp(model rsd z) beyond them (tps_pred.gscale,
 * gscale_out); a gather part still takes one factor, the larger spread, over its range.  Pure C, no I/O; times in us,
 * bytes, rows. */
#ifndef TPS_MODEL_PARTS_H
#define TPS_MODEL_PARTS_H
#include <stddef.h>
#include "model/core/gpu.h"
#include "model/latency/gemm.h"
#include "model/latency/allgather.h"
#include "model/latency/xgemm.h"
#include "model/latency/xgather.h"
#include "model/core/status.h"
#ifdef __cplusplus
extern "C" {
#endif

enum { TPS_PART_GEMM = 0, TPS_PART_GATHER = 1 };

/* Provenance kinds, in order of preference. */
/* Provenance of a part, best evidence first: the target's own measurement; the same timed in
 * the other harness and converted (tps_resolve_harness_convert: by a GPU measured in both, or
 * the cross-GPU model's two harness forms; the source says which); a model fitted to
 * it; a measured sibling (a GPU of the same architecture, or fabric for a gather) moved by
 * the spec ratios of the regime (model/predict/resolve.h); a model transferred from other
 * GPUs; the datasheet alone. */
enum { TPS_PROV_MEASURED = 0, TPS_PROV_CONVERTED, TPS_PROV_FITTED, TPS_PROV_SIBLING, TPS_PROV_TRANSFERRED, TPS_PROV_SPEC, TPS_PROV_N };
extern const char *const tps_prov_names[TPS_PROV_N]; /* "measured", "converted", "fitted", "sibling", "transferred", "spec-only" */
/* One letter per kind, for per-row source columns: "mcfbts" (c: converted from the other harness; b: a sibling's measurement). */
extern const char tps_prov_letters[TPS_PROV_N + 1];
/* The letter of a kind name ("measured" -> 'm'), '-' for "none", '?' unknown. */
char tps_prov_letter(const char *name);
/* 1 for the kinds that are this GPU's own measured points (measured, converted): a curve with
 * a file, its lines and its point count; 0 otherwise. */
int tps_prov_is_own_measurement(int prov);

/* Relative spread of a measured curve (one lognormal factor per curve): replay-to-replay
 * noise is far below it (our tables: median of 50, min..max within 2-10%); what it stands
 * for is how well one harness's number (AIConfigurator: mean of 6 replays, no L2 flush; ours:
 * median of 50 with an L2 flush; nccl-tests: mean of 20 iterations) holds in another
 * program.  An assumption, stated in doc/predict.md. */
#define TPS_PART_MEASURED_RSD 0.03

/* ------------------------------------------------------------------ measured curves */
typedef struct tps_mcurve tps_mcurve;
/* x strictly increasing, > 0; t > 0 and finite; n >= 2 (2 points: linear in log-log).
 * NULL on bad input or out of memory. */
tps_mcurve *tps_mcurve_alloc(const double *x, const double *t, size_t n);
void tps_mcurve_free(tps_mcurve *c);
/* The interpolated value at x in [xlo, xhi], NaN outside. */
double tps_mcurve_eval(const tps_mcurve *c, double x);
/* The same, the nearest end's value outside [xlo, xhi] (NaN for x <= 0). */
double tps_mcurve_eval_clamped(const tps_mcurve *c, double x);
double tps_mcurve_xlo(const tps_mcurve *c);
double tps_mcurve_xhi(const tps_mcurve *c);
size_t tps_mcurve_n(const tps_mcurve *c);
/* The largest half |log ratio| of the M, M+1 twins merged into one point (0: none). */
double tps_mcurve_twin_spread(const tps_mcurve *c);
/* The largest measured value at a point inside [xa, xb] (0 when none): with the values at
 * xa and xb, the largest of the curve there (Steffen is monotone between points). */
double tps_mcurve_max(const tps_mcurve *c, double xa, double xb);

/* ------------------------------------------------------------------ models of a part */
enum {
  TPS_PM_NONE = 0, /* no model: measured only */
  TPS_PM_XGEMM,    /* tps_xg_time_us(xg, gpu, harness, m, n, k) */
  TPS_PM_XW8,      /* tps_xw8_time_us(w8, gpu, m, n, k) */
  TPS_PM_GEMM,     /* tps_gemm_time_us(gm, shape, m) */
  TPS_PM_XGATHER,  /* tps_xga_time_us(xa, gpu, S, n, nccl or custom) */
  TPS_PM_AG        /* tps_ag_time_us(ag, S, n, backend) */
};

typedef struct {
  int kind;              /* TPS_PM_* */
  int prov;              /* TPS_PROV_FITTED, _TRANSFERRED or _SPEC */
  double rsd;            /* its relative spread (lognormal) */
  tps_gpu gpu;           /* the target */
  long n, k;             /* GEMM shape */
  tps_xg_model xg;
  tps_xg_harness harness;
  tps_xw8_model w8;
  tps_gemm_model gm;
  tps_gemm_shape shape;
  tps_xga_model xa;
  tps_ag_model ag;
  int backend;           /* gather: a concrete tps_gather_id (nccl or custom) */
} tps_part_model;

/* The model's value at x (rows or bytes) over n ranks (gathers). */
double tps_part_model_eval(const tps_part_model *m, double x, int ranks);

/* ------------------------------------------------------------------ parts */
typedef struct {
  int what;              /* TPS_PART_GEMM or TPS_PART_GATHER */
  int backend;           /* gather: a tps_gather_id, the rule too (a measured curve of the
                          * auto rule: custom while the per-rank input <= cap, NCCL above) */
  int ranks;             /* gather: n */
  tps_mcurve *meas;      /* owned, NULL when nothing was measured */
  double meas_rsd;
  tps_part_model model;  /* kind TPS_PM_NONE: none */
  double anchor_lo, anchor_hi; /* measured(end) / model(end) at the two ends (1 without) */
  double *lr;            /* GEMM with a model: log(measured / model) at each measured point
                          * (tps_part_finish), NULL: none */
  double *tab;           /* GEMM: value at m = 1..ntab (tps_part_tabulate), NULL before */
  long ntab;
  int mono;              /* GEMM: nondecreasing on the table */
  /* built on first use (tps_part_build, or tps_partcache_ready across threads): the measured
   * points waiting to become meas (malloc'd, owned by the part, freed when built; x strictly
   * increasing as tps_mcurve_alloc asks) */
  double *px, *pt;
  size_t pn;
  int anchor;            /* anchor the model to the points when built (tps_part_finish) */
  int built;             /* 0 not yet, 1 built, -1 cannot be (fail says why) */
  int fail;              /* TPS_PART_FAIL_* */
  int model_dropped;     /* its model could not be anchored at a measured end: not used */
  int tab_state;         /* GEMM table under a tps_partcache: 0 not made, 1 being made, 2 made or failed */
} tps_part;

/* Why a part cannot be built. */
enum { TPS_PART_FAIL_NONE = 0, TPS_PART_FAIL_CURVE, /* its points make no curve (not increasing?) */
       TPS_PART_FAIL_RANGE                          /* GEMM: no usable time at 1 or tmax rows */ };

/* Build the part once: its curve from the points (then freed), the model anchored to it (or
 * dropped, model_dropped, where it cannot be), and for a GEMM part a usable time at 1 and
 * tmax rows.  TPS_OK, or TPS_EBADDATA with p->fail (and again on every later call).  Not
 * thread-safe: tps_partcache_ready is. */
int tps_part_build(tps_part *p, long tmax);

/* Parts built once and shared by the contexts of one run, in any threads, with what they
 * share: the launch structure of each gemm.h path, each GEMM part's table of 1..tmax rows and
 * the gather tables of the contexts (one per GPU, TP and gather backend).  Tables are made
 * only once the run says so (tps_partcache_tables: after the grid's parts are known), each
 * by the first context that needs it, the others waiting for it. */
typedef struct tps_partcache tps_partcache;
tps_partcache *tps_partcache_alloc(long tmax); /* NULL: out of memory */
void tps_partcache_free(tps_partcache *c);
void tps_partcache_tables(tps_partcache *c, int on);
/* p built (tps_part_build, once, under the cache's lock) and, in table mode, its GEMM table
 * made once.  TPS_OK or TPS_EBADDATA (p->fail). */
int tps_partcache_ready(tps_partcache *c, tps_part *p);
/* A GEMM part's table of 1..tmax, made once (built first).  TPS_OK, or the failure. */
int tps_partcache_tabulate(tps_partcache *c, tps_part *p);

/* Set the anchors from meas and model (call after both are set).  TPS_OK, or TPS_EINVAL
 * when the model is NaN or <= 0 at a measured end. */
int tps_part_finish(tps_part *p);
/* The part at x (rows or bytes); *outside (may be NULL) = 1 when x is outside the measured
 * range (or nothing was measured).  NaN when no source covers x. */
double tps_part_eval(const tps_part *p, double x, int *outside);
/* Does the measured range hold [xlo, xhi]? */
int tps_part_covers(const tps_part *p, double xlo, double xhi);
/* GEMM parts: tabulate m = 1..tmax (idempotent for a smaller tmax); TPS_ENOMEM, TPS_EINVAL
 * (a value NaN or <= 0). */
int tps_part_tabulate(tps_part *p, long tmax);
/* GEMM parts: the values at m = 1..tmax into t[1..tmax] (t[0] NaN) without touching the part,
 * as tps_part_tabulate would store them; *mono (may be NULL): nondecreasing.  TPS_ENOMEM,
 * TPS_EINVAL. */
int tps_part_fill(const tps_part *p, long tmax, double *t, int *mono);
/* The launch structure of a gemm.h path on 1..tmax rows (model/predict/crossover.c; it
 * depends on the path alone): built once, read by any number of tabulations of parts on
 * that path, in any threads (NULL: out of memory). */
struct tps_gemmgrid;
struct tps_gemmgrid *tps_gemmgrid_launches(const tps_path *path, long tmax);
void tps_gemmgrid_free(struct tps_gemmgrid *c);
/* tps_part_fill and tps_part_tabulate with such a structure (NULL, or one of another path
 * or tmax: built for the call); the same values. */
int tps_part_fill_on(const tps_part *p, long tmax, double *t, int *mono, const struct tps_gemmgrid *launches);
int tps_part_tabulate_on(tps_part *p, long tmax, const struct tps_gemmgrid *launches);
/* GEMM parts: the value at m rows (the table when it holds m). */
double tps_part_gemm_us(const tps_part *p, long m, int *outside);
/* The spread to draw for this part over [xlo, xhi]: the measured one when covered, else the
 * larger of it and the model's. */
double tps_part_rsd(const tps_part *p, double xlo, double xhi);
void tps_part_free(tps_part *p);

/* Our W8A16 kernels' model moved from the GPU it was fitted on to another SM90 GPU: stream
 * bandwidth by HBM, compute rates by the bf16 peak per SM (the kernels are the same on every
 * SM90 GPU; not validated on any other GPU). */
void tps_xw8_transfer(tps_xw8_model *dst, const tps_xw8_model *src, const tps_gpu *from, const tps_gpu *to);

#ifdef __cplusplus
}
#endif
#endif
