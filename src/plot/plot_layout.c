/* plot_layout.c: the figures' layout in pixels (plot_fig.h): estimated text widths, the
 * title block, legends under the plot, footnotes, values above the frame.  Every figure places
 * its text with these, so that none runs into another or over the data; the estimates are
 * those of tests/cli/svg_layout.awk, which checks the rendered result. */
#include "config.h"
#include "src/plot/plot.h"
#include "src/plot/plot_fig.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- layout helpers */

/* Widths of DejaVu Sans glyphs in em, by class (measured on pngcairo renders at 11 pt: 13.75 px
 * per em); rounded up. */
static double glyph_em(unsigned char ch) {
  if (strchr("ilj.,:;'|!", ch)) return 0.30;
  if (strchr("ftrI()[] /-", ch)) return 0.42;
  if (strchr("mwMW%", ch)) return 0.95;
  if (isdigit(ch)) return 0.64;
  if (isupper(ch)) return 0.72;
  if (islower(ch)) return 0.60;
  return 0.70;
}

double pf_text_px(const char *s, double pt) {
  double em = 0;
  for (; s && *s; s++) em += glyph_em((unsigned char)*s);
  return em * pt * 1.25;
}

void pf_setup_words(char *buf, size_t sz, const char *gpu, int tp, const char *path, long k, long n, const char *gather) {
  size_t l = 0;
  buf[0] = '\0';
#define ADD(...) do { if (l < sz) l += (size_t)snprintf(buf + l, sz - l, __VA_ARGS__); } while (0)
  if (gpu && *gpu) ADD("%s", gpu);
  if (tp > 0) ADD("%sTP%d", l ? ", " : "", tp);
  if (path && *path) ADD("%s%s", l ? ", " : "", path);
  if (k > 0 && n > 0) ADD("%sK %ld x N %ld", l ? ", " : "", k, n);
  if (gather && *gather) {
    if (!strcmp(gather, "auto")) ADD("%sgather auto (custom one-shot while <= 2 MiB per rank, NCCL above)", l ? ", " : "");
    else if (!strcmp(gather, "custom")) ADD("%sgather custom one-shot", l ? ", " : "");
    else if (!strcmp(gather, "nccl")) ADD("%sgather NCCL", l ? ", " : "");
    else ADD("%sgather %s", l ? ", " : "", gather);
  }
#undef ADD
}

static void centred_label(FILE *g, int id, const char *s, double y_frac, double pt) {
  fprintf(g, "set label %d ", id);
  pf_gp_str(g, s);
  fprintf(g, " at screen 0.5, screen %.4f center font 'Sans,%.0f' front\n", y_frac, pt);
}

double pf_title(FILE *g, const fig *F, const char *line1, const char *line2) {
  const double W = F->o->width_px, H = F->o->height_px, room = W - 30.0;
  double y = 18.0; /* baseline of the next line, px from the top */
  int id = 90;
  if (line1 && *line1) {
    char *paren = strstr(line1, " (");
    if (pf_text_px(line1, 10) > room && paren) { /* too wide: the parenthesis on a line of its own */
      char a[512];
      snprintf(a, sizeof a, "%.*s", (int)(paren - line1), line1);
      centred_label(g, id++, a, 1.0 - y / H, pf_text_px(a, 12) <= room ? 12 : 10);
      y += 17.0;
      centred_label(g, id++, paren + 1, 1.0 - y / H, pf_text_px(paren + 1, 10) <= room ? 10 : 8);
    } else centred_label(g, id++, line1, 1.0 - y / H, pf_text_px(line1, 12) <= room ? 12 : 10);
    y += 19.0;
  }
  if (line2 && *line2) {
    if (pf_text_px(line2, PF_FONT_PT) <= room) centred_label(g, id++, line2, 1.0 - y / H, PF_FONT_PT);
    else { /* two lines, cut before the gather backend or at the last "; " */
      char a[512];
      snprintf(a, sizeof a, "%s", line2);
      char *cut = strstr(a, ", gather");
      if (!cut) cut = strrchr(a, ';');
      const char *b = "";
      if (cut) { *cut = '\0'; b = cut + 2; }
      double pt = pf_text_px(a, PF_FONT_PT) <= room && pf_text_px(b, PF_FONT_PT) <= room ? PF_FONT_PT : 9;
      centred_label(g, id++, a, 1.0 - y / H, pt);
      y += 17.0;
      centred_label(g, id++, b, 1.0 - y / H, pt);
    }
    y += 17.0;
  }
  return y - 8.0;
}

/* The font of a key under the plot: 11 pt, smaller (down to 8) until its longest entry fits
 * the width with its sample. */
static double key_pt(const fig *F, const char *const *titles, size_t n) {
  double pt = PF_FONT_PT;
  for (;;) {
    double w = 0;
    for (size_t i = 0; i < n; i++) {
      double a = pf_text_px(titles[i], pt);
      if (a > w) w = a;
    }
    if (w + 6.0 * pt * 0.8 + 24.0 <= F->o->width_px || pt <= 8.0) return pt;
    pt -= 0.5;
  }
}

/* Columns of a key: gnuplot sizes them by its own character width (9 px at 11 pt in
 * pngcairo) plus the sample; as many as fit the width, at most maxcols. */
static int key_cols(const fig *F, const char *const *titles, size_t n, int maxcols, double pt) {
  double w = 0;
  for (size_t i = 0; i < n; i++) {
    double a = 9.0 * pt / PF_FONT_PT * (double)strlen(titles[i]), b = pf_text_px(titles[i], pt);
    if (a < b) a = b;
    if (a > w) w = a;
  }
  w += 6 * 9.0 * pt / PF_FONT_PT; /* sample (samplen 3) and gaps */
  int cols = maxcols < 1 ? 1 : maxcols;
  while (cols > 1 && cols * w > F->o->width_px - 24.0) cols--;
  return cols;
}

double pf_key_below_h(const fig *F, const char *const *titles, size_t n, int maxcols) {
  double pt = key_pt(F, titles, n);
  int cols = key_cols(F, titles, n, maxcols, pt);
  size_t rows = (n + (size_t)cols - 1) / (size_t)cols;
  return 17.5 * pt / PF_FONT_PT * (double)rows + 6.0;
}

double pf_key_below(FILE *g, const fig *F, const char *const *titles, size_t n, int maxcols, double lm, double bottom_px) {
  double pt = key_pt(F, titles, n);
  int cols = key_cols(F, titles, n, maxcols, pt);
  double h = pf_key_below_h(F, titles, n, maxcols);
  if (cols == 1) lm = 12.0 / F->o->width_px; /* one column of long entries: from the left edge */
  /* gnuplot sizes the key by 9 px a character whatever the font; where that would not fit,
   * the column is narrowed (width -N characters) so that it does not warn */
  size_t maxlen = 0;
  for (size_t i = 0; i < n; i++) if (strlen(titles[i]) > maxlen) maxlen = strlen(titles[i]);
  double excess = (9.0 * (double)(maxlen + 6) * (double)cols - (F->o->width_px * (1.0 - lm) - 12.0)) / 9.0 / cols;
  int wd = excess > 0 ? -2 - (int)ceil(excess) : -2;
  fprintf(g, "set key at screen %.4f, screen %.4f left top vertical Left reverse samplen 3 spacing 1.0 maxcols %d "
             "maxrows %zu width %d font 'Sans,%.1f'\n",
          lm, (bottom_px + h) / F->o->height_px, cols, (n + (size_t)cols - 1) / (size_t)cols, wd, pt);
  return h;
}

double pf_footnote(FILE *g, const fig *F, const char *text) {
  if (!text || !*text) return 0;
  const double W = F->o->width_px, H = F->o->height_px, pt = 10.0;
  char buf[1024], line[1024];
  snprintf(buf, sizeof buf, "sources: %s", text);
  /* greedy: as many "; "-separated pieces per line as fit */
  const char *p = buf;
  size_t nl = 0;
  char lines[6][1024];
  while (*p && nl < 6) {
    size_t len = strlen(p), best = len;
    if (pf_text_px(p, pt) > W - 30.0) {
      best = 0;
      for (const char *q = strstr(p, "; "); q; q = strstr(q + 1, "; ")) {
        snprintf(line, sizeof line, "%.*s", (int)(q - p + 1), p);
        if (pf_text_px(line, pt) <= W - 30.0 || !best) best = (size_t)(q - p + 1);
        else break;
      }
      if (!best) best = len;
    }
    snprintf(lines[nl++], sizeof lines[0], "%.*s", (int)best, p);
    p += best;
    while (*p == ' ') p++;
  }
  for (size_t i = 0; i < nl; i++) {
    fprintf(g, "set label %zu ", 80 + i);
    pf_gp_str(g, lines[i]);
    fprintf(g, " at screen %.4f, screen %.4f left font 'Sans,%.0f' tc rgb '#444444' front\n", 12.0 / W,
            (8.0 + 15.0 * (double)(nl - 1 - i)) / H + 4.0 / H, pt);
  }
  return 15.0 * (double)nl + 8.0;
}

/* Values marked above the frame of a token axis (break-even, backend switch): a label each at
 * its x, on the lowest of three lines where it does not run into the one before.  xs in data units; the
 * plot spans lm..rm (screen) over tlo..thi on a log axis.  Returns the lines used (1..3). */
int pf_above_frame(FILE *g, int id0, const double *xs, const char *const *texts, const char *const *cols, size_t n,
                   double lm, double rm, double tlo, double thi, double W) {
  /* up to three rows: each label on the lowest row where it clears the last label by 8 px
   * (the row whose last label ends first when none does) */
  double end[3] = {-1e9, -1e9, -1e9};
  int lines = 1;
  for (size_t i = 0; i < n; i++) {
    double xpx = (lm + (rm - lm) * log(xs[i] / tlo) / log(thi / tlo)) * W, wpx = pf_text_px(texts[i], PF_FONT_PT);
    int row = 0;
    while (row < 3 && xpx - wpx / 2 < end[row] + 8) row++;
    if (row == 3) row = end[1] < end[0] ? (end[2] < end[1] ? 2 : 1) : end[2] < end[0] ? 2 : 0;
    if (row + 1 > lines) lines = row + 1;
    fprintf(g, "set label %d ", id0 + (int)i);
    pf_gp_str(g, texts[i]);
    fprintf(g, " at %.10g, graph 1 center offset 0,%.1f tc rgb '%s' front\n", xs[i], 0.8 + 1.1 * row, cols[i]);
    end[row] = xpx + wpx / 2;
  }
  return lines;
}

