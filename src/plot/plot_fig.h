/* plot_fig.h: what the figures of src/plot share (internal to src/plot): a figure's .dat and
 * .gp written through temporary files (pf_fig_begin ... pf_fig_end, which renders the image
 * when asked), gnuplot strings and numbers, and the line styles of TP sizes and kernel paths.
 * plot.c holds them and the batch renderer; plot_figs.c the figures. */
#ifndef TPS_PLOT_FIG_H
#define TPS_PLOT_FIG_H
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include "src/plot/plot.h"
#include "src/base/util.h"

typedef struct {
  const char *dir, *name;
  const tps_plot_opts *o;
  tps_plot_opts defaults;
  tps_outfile dat, gp;
  char ext[8];
} fig;

static inline double at(const double *v, size_t i) { return v ? v[i] : NAN; }

/* Open DIR/NAME.dat and .gp (temporary files) and write the .gp's terminal lines. */
int pf_fig_begin(fig *F, const char *dir, const char *name, const tps_plot_opts *o, const char *what, tps_err *e);
/* A data block of the .dat: its index, what it holds and its header line. */
void pf_block(fig *F, int idx, const char *what, const char *header);
/* Commit the .dat and .gp (registered in w) and render the image when F's options ask. */
int pf_fig_end(fig *F, tps_plot_files *w, tps_err *e);
void pf_fig_abort(fig *F);
/* A gnuplot single-quoted string (' doubled); a number ("%.10g", "nan" when not finite). */
void pf_gp_str(FILE *fp, const char *s);
void pf_num(FILE *fp, double x);
/* Shade of the GPU colour rgb for a TP size ("#rrggbb" into out); dash type of a kernel path. */
void pf_tp_shade(const char *rgb, int tp, char out[8]);
int pf_path_dash(const char *path);

/* ---- layout: every figure is laid out here in pixels, from estimated text widths, so that
 * no text runs into another or over the data (tests/cli/plot_layout.sh checks the result). */
#define PF_FONT_PT 11.0
/* Estimated width in pixels of s in the figures' Sans (DejaVu Sans) at pt points as pngcairo
 * draws it (1 pt = 1.25 px), from per-character classes; a little wide, never narrow. */
double pf_text_px(const char *s, double pt);
/* "TP8, marlin-w8a16, K 5120 x N 1792, gather auto (custom one-shot <= 2 MiB per rank, NCCL
 * above)" (gpu first when not NULL; parts that are not known are left out). */
void pf_setup_words(char *buf, size_t sz, const char *gpu, int tp, const char *path, long k, long n, const char *gather);
/* The title block: line1 (font 12) and line2 (font 11, split at "; " or ", gather" into two
 * lines when wider than the image), centred labels at the top.  Returns its height in px. */
double pf_title(FILE *g, const fig *F, const char *line1, const char *line2);
/* A legend under the plot, left-aligned with the plot at lm (screen fraction), its bottom at
 * bottom_px from the canvas bottom: the entries' titles (for the column widths), up to maxcols
 * columns where they fit the width.  Writes `set key at screen ...`; returns its height in px
 * (pf_key_below_h: the same without writing, for the caller's margins). */
double pf_key_below(FILE *g, const fig *F, const char *const *titles, size_t n, int maxcols, double lm, double bottom_px);
double pf_key_below_h(const fig *F, const char *const *titles, size_t n, int maxcols);
/* "sources: TEXT" in small grey type at the bottom left (cut at "; " into lines where it is
 * wider than the image); returns its height in px (0 for NULL or ""). */
double pf_footnote(FILE *g, const fig *F, const char *text);

/* ---- shared by the figures (plot_figs.c) */
/* Legend text of a curve: the part that varies (by), then where it comes from. */
void pf_curve_label(const tps_plot_curve *c, int by, char *out, size_t sz);
void pf_curve_colour(const tps_plot_curve *c, char out[8]);
int pf_check_curve(const tps_plot_curve *c, tps_err *e);
/* Data blocks: a model curve (tokens, rep, band, split, band, speedup, band, backend) and a
 * measured set (tokens, rep, min, max, split, min, max, speedup and its range). */
void pf_write_curve_block(fig *F, int idx, const tps_plot_curve *c);
void pf_write_meas_block(fig *F, int idx, const tps_plot_meas *m);
int pf_any_finite(const double *v, size_t n);
int pf_has_band(const double *lo, const double *hi, size_t n);
/* Token axis: log2, a tic per power of two (per power of four when narrow). */
void pf_token_axis(FILE *g, const tps_plot_opts *o);
void pf_key_right(FILE *g, const tps_plot_opts *o);
/* Values marked above the frame of a log token axis (lm..rm over tlo..thi), one label each,
 * on the lowest of three lines where it does not run into the one before; returns the lines used (1..3). */
int pf_above_frame(FILE *g, int id0, const double *xs, const char *const *texts, const char *const *cols, size_t n,
                   double lm, double rm, double tlo, double thi, double W);
#endif
