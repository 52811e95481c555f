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

#endif
