/* thresholds.h: the engine-facing thresholds file (JSON, schema_version 1): write, read,
 * look up; and the check of a calibration against full benches (`calibrate --check`,
 * the `validate` hook).
 *
 * What an engine reads: one object per device, keyed the way engines name GPUs (vLLM:
 * torch.cuda.get_device_name() with spaces as '_', "NVIDIA_H200"); under it, per projection
 * shape "KxN" (K inner, N outputs), kernel path, TP size and gather backend, the token count
 * from which to split (`split_from_tokens`; null: never up to max_tokens).  Layout:
 *
 * {
 *   "schema_version": 1,
 *   "generator": {"tool": "tpsplit", "version": "0.1.0", "command": "...",
 *                 "date": "2026-12-05T10:00:00Z", "wall_s": 41.3, "budget_s": 60},
 *   "partial": false,                 true: the budget ended the run before its plan did
 *   "rule": TPS_THR_RULE below, word for word (the reader refuses another),
 *   "notes": ["..."],                 what was skipped, failed or taken from elsewhere
 *   "devices": {
 *     "NVIDIA_H200": {
 *       "device_name": "NVIDIA H200", "gpu_spec": "H200-SXM" | null,
 *       "sm_count": 132, "compute_capability": "9.0", "sm_clock_mhz": 1980,
 *       "mem_clock_mhz": 3201, "l2_bytes": 62914560, "gpus_visible": 8 (0: predicted),
 *       "driver": "580.159.04", "cuda_runtime": "13.0", "cublaslt": 130100 | null,
 *       "nccl": "2.28.9" | null,
 *       "thresholds": {
 *         "5120x1792": { "w8a16": { "8": { "auto": {
 *           "split_from_tokens": 1450 | null,   the threshold of least predicted excess (see below)
 *           "breakeven_tokens": 1450 | null,    smallest T from which the split stays faster
 *           "interval_tokens": [lo, hi],        90%; hi null: beyond max_tokens
 *           "max_tokens": 16384, "out_bytes_per_token": 3584,
 *           "win_bands_tokens": [[109, 1768], [2030, null]],   optional, see below
 *           "losing_gaps": [{"from_tokens": 1769, "to_tokens": 2029, "min_speedup": 0.98}],
 *           "gemm": PROVENANCE, "gather": PROVENANCE } } } }
 *       },
 *       "calibration": {                 optional: what calibrate measured (for --check)
 *         "gemm": [{"k", "n", "path", "status", "reason", "samples", "rows", "time_us",
 *                   "configs" (optional: the kernel configuration each row ran, as bench gemm
 *                   names it, one string per row), "method", "base", "w90_log",
 *                   "lopo_median": {"steffen", "shaped"}, "lopo_max": {...}, "first_phase_method",
 *                   "heldout_rows": [M...], "heldout_max_err": {"steffen", "shaped"},
 *                   "heldout_median_err": {...}}],
 *           (heldout_*: the adaptive rows predicted by the first-phase fit, |relative
 *           error| per method; "method" differs from "first_phase_method" when they chose
 *           the other method, model/calib/calib.h "held-out method choice"; optional on reading)
 *         "gather": [{"tp", "backend", "status", "reason", "samples", "bytes", "time_us",
 *                     "provenance": PROVENANCE}] } } } }
 * win_bands_tokens (optional; written by calibrate, predict and crossover): every maximal
 *   range [from, to] of token counts up to max_tokens where the split is faster, ascending,
 *   on the grid of the break-even (calibrate: 64 points per octave placed at the integer at
 *   each edge; predict, crossover: every integer); to null: the band reaches max_tokens (and
 *   starts at breakeven_tokens; no such band when that is null); [] when the split never
 *   wins.  A break-even is the start of the last band only: where the split's advantage
 *   changes sign several times (a kernel's dispatch steps), the bands show the earlier ones.
 * split_from_tokens: of never and every T up to max_tokens (8 points per octave), the threshold
 *   of least excess on the entry's own costs, moved down to the start of the win band it falls
 *   in (model/predict/excess.h, tps_threshold_choose): the break-even where the split wins once
 *   and for good; below it where an earlier band pays more than its losing gap costs; given
 *   without a break-even where the split wins in a band only.  (Files of schema 1 written before
 *   2026-12-06 held the next power of two >= the break-even; the meaning of the field is the
 *   same: split when T >= it.)  The reader refuses one past max_tokens, one where
 *   win_bands_tokens is [] and one before the first win band: no answer writes them.
 * losing_gaps (with win_bands_tokens): one per pair of neighbouring bands, the tokens between
 *   them (from_tokens = the earlier band's to + 1, to_tokens = the next band's from - 1) and
 *   min_speedup, the smallest replicated / split time seen in the gap on the same grid
 *   (0 < min_speedup <= 1; 0.98: the split is at worst 2% slower there).
 * PROVENANCE: {"kind": "measured" | "converted" | "fitted" | "sibling" | "transferred" | "spec-only",
 *              "source": "...", "method": "...", "points": N (measured, converted: required),
 *              "from_gpus": [...] (sibling, transferred: required), "w90_log": x (90% half-width, log space)}
 *
 * The reader checks schema_version and every field; an error is one line naming the file
 * and the JSON path ("f.json: $.devices.NVIDIA_H200.thresholds.5120x1792.w8a16.8.auto.
 * split_from_tokens: an integer >= 1 or null, not -3") and the commands exit 2. */
#ifndef TPS_THRESHOLDS_H
#define TPS_THRESHOLDS_H
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include "src/base/err.h"
#include "src/io/gpus.h"
#include "model/calib/calib.h"
#include "model/predict/parts.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_THR_SCHEMA_VERSION 1
/* The rule every file states, written and required word for word on reading: an entry is read with >= and null as
 * never, so a file that says another rule (T > split_from_tokens, a missing rule) is refused, not read as this one. */
#define TPS_THR_RULE "split a K x N projection of T tokens when T >= split_from_tokens (null: never, up to max_tokens)"
#define TPS_THR_CONFIG 256  /* bytes of one row's kernel configuration text (kernels/bench/bench.h row config) */
#define TPS_THR_MAX_BANDS TPS_BANDS_MAX /* win bands of one entry at most (model/predict/crossover.h) */

/* The provenance kinds are the parts' (model/predict/parts.h: TPS_PROV_MEASURED, _FITTED,
 * _TRANSFERRED, _SPEC), so that a file may include both headers. */
#define TPS_NPROV TPS_PROV_N
typedef int tps_prov_kind;
#define tps_prov_kind_names tps_prov_names /* model/predict/parts.h: the one list of kinds */

typedef struct {
  int kind;                  /* tps_prov_kind */
  char source[512];          /* file or run */
  char method[512];          /* how the part is made from its source */
  int points;                /* measured points, -1 when not given */
  char from_gpus[256];       /* transferred: comma-joined GPU names; "" otherwise */
  double w90_log;            /* 90% half-width in log space, NaN when not given */
  int harness;               /* a GEMM's: the harness its times represent (TPS_HARNESS_*,
                              * model/core/harness.h; "harness" in the file), -1 not given */
} tps_thr_prov;

typedef struct {
  long k, n;
  int path;                  /* tps_path_id */
  int tp;
  int backend;               /* tps_gather_id */
  long split_from;           /* split_from_tokens; 0: null (never) */
  double breakeven;          /* 0: null */
  double lo, hi;             /* interval_tokens; 0: null */
  long max_tokens;
  double out_bytes_per_token;
  tps_thr_prov gemm, gather;
  /* win_bands_tokens and losing_gaps (optional: have_bands 0 when the file has none) */
  int have_bands;
  size_t nbands;
  long band_from[TPS_THR_MAX_BANDS];
  long band_to[TPS_THR_MAX_BANDS];      /* 0: null (the band reaches max_tokens) */
  double gap_min_speedup[TPS_THR_MAX_BANDS]; /* the gap after band i (i < nbands - 1) */
} tps_thr_entry;

/* calibration.gemm[i]: one (shape, path) sweep. */
typedef struct {
  long k, n;
  int path;
  char status[16];           /* "measured", "skipped", "failed", "not-run" */
  char reason[256];          /* why not measured ("" when measured) */
  int samples;
  size_t npts;
  long rows[TPS_CAL_MAX_PTS];
  double t_us[TPS_CAL_MAX_PTS];
  char config[TPS_CAL_MAX_PTS][TPS_THR_CONFIG]; /* the kernel configuration each row ran (bench's text; "" unknown) */
  int method, base;          /* TPS_CAL_STEFFEN/SHAPED, TPS_CAL_BASE_* */
  double w90_log;
  double lopo_med[2], lopo_max[2]; /* [TPS_CAL_STEFFEN], [TPS_CAL_SHAPED]; NaN: none */
  int first_method;          /* the first-phase fit's method; -1: not given */
  size_t heldout_n;          /* rows of the held-out check (the adaptive rows), ascending */
  long heldout_rows[TPS_CAL_MAX_PTS];
  double heldout_max[2], heldout_med[2]; /* their |relative error| per method; NaN: none */
} tps_thr_gemm;

/* calibration.gather[i]: the all-gather curve of one (TP, backend). */
typedef struct {
  int tp, backend;
  char status[16];
  char reason[256];
  int samples;
  size_t npts;
  double bytes[TPS_CAL_MAX_PTS], t_us[TPS_CAL_MAX_PTS];
  tps_thr_prov prov;
} tps_thr_gather;

typedef struct {
  char key[256];             /* "NVIDIA_H200" */
  char name[256];            /* "NVIDIA H200" */
  char gpu_spec[32];         /* data/gpus.tsv name, "" when null */
  int sms, cc_major, cc_minor, sm_clock_mhz, mem_clock_mhz;
  int gpus_visible;          /* 0: predicted, not measured on this device */
  long l2_bytes;
  long cublaslt;             /* -1: null */
  char driver[64], cuda_runtime[16], nccl[32]; /* nccl "": null */
  size_t nentries;
  tps_thr_entry *e;
  size_t ngemm;
  tps_thr_gemm *gemm;
  size_t ngather;
  tps_thr_gather *gather;
} tps_thr_device;

typedef struct {
  int schema_version;
  char tool[32], version[32], date[32];
  char command[2048];
  double wall_s, budget_s;   /* NaN: not given */
  int partial;
  size_t nnotes;
  char **notes;
  size_t ndev;
  tps_thr_device *dev;
  char *path;                /* the file it was read from (reader), for messages */
} tps_thr_file;

/* ---- building (writers: calibrate; the predict/crossover --json hooks) */
/* Schema version, tool and version, the command line, the date now (UTC). */
void tps_thr_init(tps_thr_file *f);
/* A device named as CUDA names it ("NVIDIA H200"); its key derived.  NULL: out of memory. */
tps_thr_device *tps_thr_add_device(tps_thr_file *f, const char *device_name);
/* A device that was predicted, not run on (predict, crossover): named by tps_thr_cuda_name
 * (or its table name when CUDA's is not known), keyed by tps_thr_gpu_key, gpu_spec, SMs and compute
 * capability from the datasheet, gpus_visible 0, driver and runtime "" (none ran). */
tps_thr_device *tps_thr_add_spec_device(tps_thr_file *f, const tps_gpu *gpu);
/* A zeroed entry (provenance kinds measured, points -1, w90 NaN).  NULL: out of memory. */
tps_thr_entry *tps_thr_add_entry(tps_thr_device *d);
tps_thr_gemm *tps_thr_add_gemm(tps_thr_device *d);
tps_thr_gather *tps_thr_add_gather(tps_thr_device *d);
int tps_thr_add_note(tps_thr_file *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A provenance record (kind, source, method; points -1; w90 NaN). */
tps_thr_prov tps_thr_prov_make(int kind, const char *source, const char *method);
/* Set an entry's answer: its threshold split_from (tokens, <= 0: never; the threshold of least
 * excess on the entry's own costs, model/predict/excess.h), the break-even (0: never), its
 * interval and the range. */
void tps_thr_entry_answer(tps_thr_entry *e, long split_from, double breakeven, double lo, double hi, long max_tokens);
/* Set an entry's win bands and losing gaps from a scan of the same parts (after
 * tps_thr_entry_answer).  0; -1 with why (the bands are left out): more bands than the file
 * holds, a scan of another range than [1, max_tokens], a band reaching max_tokens that does
 * not start at the break-even, a gap whose depth is not known. */
int tps_thr_entry_bands(tps_thr_entry *e, const tps_bands *b, char *why, size_t whysz);

/* ---- names */
/* The engine key of a CUDA device name: spaces as '_' ("NVIDIA H200" -> "NVIDIA_H200"). */
void tps_thr_device_key(const char *name, char *key, size_t sz);
/* The CUDA device name of a data/gpus.tsv GPU (its cuda_names' first: H200-SXM -> "NVIDIA H200",
 * H100-SXM -> "NVIDIA H100 80GB HBM3"), for writers that predict a GPU they do not run on;
 * NULL when its row has none. */
const char *tps_thr_cuda_name(const tps_gpu *gpu);
/* The key engines file a data/gpus.tsv GPU under: its engine_key, else tps_thr_device_key of
 * its CUDA name, else of its table name.  1 when the key comes from the row's engine_key or
 * CUDA name, 0 when only from the table name (writers add a note then). */
int tps_thr_gpu_key(const tps_gpu *gpu, char *key, size_t sz);

/* ---- JSON */
json_t *tps_thr_to_json(const tps_thr_file *f);
/* Win bands and the losing gaps between them as the file writes them, set on obj as
 * "win_bands_tokens" ([from, to] per band; to null when the band is open: to <= 0 or
 * to >= t_max) and "losing_gaps" ({"from_tokens", "to_tokens", "min_speedup"} between bands i
 * and i + 1, min_speedup gap[i]).  The file, decide --json and predict --json write them so. */
void tps_thr_bands_json_set(json_t *obj, const long *from, const long *to, const double *gap, size_t n, long t_max);
/* A part's provenance record as the file writes it (its "gemm" / "gather" / "provenance" objects); `decide`
 * echoes an entry's parts through it, so the two never differ. */
json_t *tps_thr_prov_json(const tps_thr_prov *p);
/* Write f to path ("-": stdout) through a temporary file renamed into place.  0 or -1 (e). */
int tps_thr_write(const tps_thr_file *f, const char *path, tps_err *e);
/* Read and check a thresholds file.  0, or -1 with e = "FILE: $.json.path: what is wrong". */
int tps_thr_read(const char *path, tps_thr_file *f, tps_err *e);
/* The same from memory (len bytes; name in messages): the fuzz harness's entry point. */
int tps_thr_read_mem(const char *name, const char *data, size_t len, tps_thr_file *f, tps_err *e);
void tps_thr_free(tps_thr_file *f);

/* ---- look-up (engines do this; so do decide --thresholds and calibrate --check) */
/* A device by key or by CUDA name ("NVIDIA_H200" or "NVIDIA H200"); NULL: not there. */
const tps_thr_device *tps_thr_find_device(const tps_thr_file *f, const char *name_or_key);
/* The entry of (k, n, path, tp, backend); NULL: not there. */
const tps_thr_entry *tps_thr_find(const tps_thr_device *d, long k, long n, int path, int tp, int backend);
/* 1: split a batch of T tokens (T >= split_from_tokens), 0: do not. */
int tps_thr_split(const tps_thr_entry *e, long tokens);
/* One line for humans: "5120x1792 w8a16 TP8 auto: split from 2048 tokens (break-even 1450,
 * 90% 1210..1790); gemm measured (12 points), gather measured (10 points)". */
void tps_thr_entry_line(const tps_thr_entry *e, char *buf, size_t sz);
/* The bands for humans, when they say more than the threshold (more than one band, or one
 * that ends before max_tokens): "win bands 109..1768, 2030..16384 (max_tokens); losing gap
 * 1769..2029 at worst 0.928x" (min_speedup rounded down to 3 decimals; cut after a whole band or
 * gap, " ..." added, when sz is too small); returns 1, or 0 with buf "" when there is nothing to add. */
int tps_thr_entry_bands_line(const tps_thr_entry *e, char *buf, size_t sz);

/* ---- check a calibration against full benches (calibrate --check; validate's hook) */
#define TPS_THR_CHECK_MAXEX 16
#define TPS_THR_EXCESS_MEAN_TARGET 0.005 /* the decision-quality target of a calibration (issue 27) */
#define TPS_THR_EXCESS_WORST_TARGET 0.05
typedef struct {
  int tp, backend;
  long split_from;           /* 0: never */
  double breakeven;          /* 0: never */
  size_t npts;               /* grid points scored */
  double mean, worst;        /* split_from_tokens as the threshold */
  long at;                   /* T of the worst */
  double be_mean, be_worst;  /* breakeven_tokens as the threshold */
  long be_at;
  /* the single threshold nearest the target on these costs (model/predict/excess.h,
   * tps_excess_best): where it misses, no threshold of the file could meet it */
  double best;               /* INFINITY: never */
  double best_mean, best_worst;
  /* the threshold calibrate writes now from the file's calibrated GEMM and the same gather
   * (model/predict/excess.h tps_threshold_choose on those costs), scored on the bench's:
   * files written before 2026-12-06 hold the power of two above the break-even instead */
  long now;                  /* 0: never; -1: not made */
  double now_mean, now_worst;
  char gather[16];           /* "measured" or "model" */
} tps_thr_excess_row;
typedef struct {
  char bench[512];           /* the bench file */
  long k, n;
  int path;
  size_t nscored, nswept;    /* rows scored (not in the sweep); rows of the sweep skipped */
  double med_abs, max_abs;   /* |calibrated - bench| / bench over the scored rows */
  int within;                /* med_abs <= tol_med and max_abs <= tol_max */
  size_t nm;                 /* every row of the bench: M, measured, calibrated, in the sweep */
  long *m;
  double *measured_us, *model_us;
  char *swept;
  tps_cal_gemm *cal;         /* the calibrated model of the file (owned; NULL: out of memory) */
  /* decision quality (issue 27 item 5; filled by src/cli/thr_excess.h, nex 0: not scored):
   * per threshold of this shape and path (TP x backend), the excess of split_from_tokens and
   * of breakeven_tokens as the threshold (model/predict/excess.h) on the bench's measured GEMM
   * and the gather calibrate used */
  size_t nex;
  tps_thr_excess_row ex[TPS_THR_CHECK_MAXEX];
} tps_thr_check_row;

/* For every bench gemm table (k, n and path from its '#@' lines), rebuild the calibrated
 * model of that (k, n, path) from the device's calibration section (gpu_spec looked up in
 * gt; device: name or key, NULL = the file's only device) and score the table's rows that
 * are not sweep rows.  rows: one per bench, freed by tps_thr_check_free.  0, or -1 with e
 * (no calibration of a bench's shape and path, a bench with no row outside the sweep, bad
 * files). */
int tps_thr_check(const tps_thr_file *f, const char *device, char *const *bench, size_t nbench,
                  double tol_med, double tol_max, const tps_gpu_table *gt, tps_thr_check_row **rows,
                  size_t *nrows, tps_err *e);
void tps_thr_check_free(tps_thr_check_row *rows, size_t n);
/* 1 when every row is within tolerance (and there is one), else 0. */
int tps_thr_check_within(const tps_thr_check_row *rows, size_t n);
/* The check as a table (one line per bench) and a verdict line; per_row: then every bench
 * row (M, measured, calibrated, error; sweep rows marked).  Returns 1 when every part is
 * within tolerance, 0 otherwise. */
int tps_thr_check_print(FILE *fp, const tps_thr_check_row *rows, size_t n, double tol_med, double tol_max, int per_row);
json_t *tps_thr_check_json(const tps_thr_check_row *rows, size_t n, double tol_med, double tol_max);
/* Decision quality (src/io/thr_check.c): the largest mean and worst excess of a row's thresholds
 * (be: of breakeven_tokens as the threshold; NaN when none was scored); the per-threshold table
 * (nothing when no row was scored); a row's thresholds as JSON; "\t12.34%" or "\t-" for NaN. */
void tps_thr_check_excess_max(const tps_thr_check_row *r, int be, double *mean, double *worst);
void tps_thr_check_print_excess(FILE *fp, const tps_thr_check_row *rows, size_t n);
json_t *tps_thr_check_excess_json(const tps_thr_check_row *r);
void tps_thr_pct_or_dash(FILE *fp, double v, int decimals);

#ifdef __cplusplus
}
#endif
#endif
