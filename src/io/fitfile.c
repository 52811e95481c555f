/* fitfile.c: write and read the saved fit (format documented in fitfile.h). */
#include "src/io/fitfile.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/text.h"
#include "src/base/util.h"

const char *tps_fit_kind_name(tps_fit_kind k) {
  switch (k) {
  case TPS_FIT_SPLIT: return "split";
  case TPS_FIT_GEMM: return "gemm";
  case TPS_FIT_ALLGATHER: return "allgather";
  }
  return "?";
}

const char *tps_fit_series_name(const tps_fit *f, int series) {
  if (f->kind == TPS_FIT_SPLIT) return series ? "split" : "replicated";
  return f->kind == TPS_FIT_GEMM ? "gemm" : "allgather";
}

/* All-gather fields by name, for both directions. */
typedef struct {
  char name[32];
  double *v;
} ag_field;

static size_t ag_fields(tps_fit *f, ag_field *out) {
  size_t n = 0;
#define AGF(nm, ptr) do { snprintf(out[n].name, sizeof out[n].name, "%s", nm); out[n].v = ptr; n++; } while (0)
  AGF("custom_floor_us", &f->ag.custom_floor_us);
  AGF("custom_gbps", &f->ag.custom_gbps);
  AGF("custom_cap_bytes", &f->ag.custom_cap_bytes);
  AGF("internode_gbps", &f->ag.internode_gbps);
  AGF("internode_lat_us", &f->ag.internode_lat_us);
  for (int p = 0; p < TPS_NPROTO; p++) {
    char nm[32];
    snprintf(nm, sizeof nm, "lat_%s_us", tps_proto_names[p]);
    AGF(nm, &f->ag.lat_us[p]);
    snprintf(nm, sizeof nm, "busbw_%s_gbps", tps_proto_names[p]);
    AGF(nm, &f->ag.busbw_gbps[p]);
    snprintf(nm, sizeof nm, "ref_busbw_%s_gbps", tps_proto_names[p]);
    AGF(nm, &f->nccl_busbw_ref[p]);
  }
#undef AGF
  return n;
}

/* Write f to fp (sources: the measurement files, may be NULL/0). 0, or -1 on write error. */
int tps_fitfile_write(FILE *fp, const tps_fit *fc, const char *const *sources, size_t nsources) {
  tps_fit *f = (tps_fit *)fc; /* ag_fields takes pointers; nothing is written through them here */
  fprintf(fp, "# tpsplit fit file: see src/io/fitfile.h or the README (section 'fit') for the format.\n");
  fprintf(fp, "# written by: %s\n", tps_cmdline()[0] ? tps_cmdline() : "tpsplit");
  fprintf(fp, "format\ttpsplit-fit\t%d\n", TPS_FITFILE_VERSION);
  fprintf(fp, "kind\t%s\n", tps_fit_kind_name(f->kind));
  fprintf(fp, "gpu\t%s\n", f->gpu[0] ? f->gpu : "-");
  fprintf(fp, "path\t%s\n", f->gemm.path ? f->gemm.path->name : "-");
  fprintf(fp, "sms\t%d\n", f->gemm.sms);
  fprintf(fp, "tp\t%d\n", f->tp);
  fprintf(fp, "k\t%ld\nn\t%ld\n", f->shape.k, f->shape.n);
  fprintf(fp, "out_bytes\t%.17g\n", f->shape.out_bytes);
  fprintf(fp, "out_bytes_per_token\t%.17g\n", f->out_bytes_per_token);
  fprintf(fp, "gather_mode\t%s\n", tps_gather_name(f->gather));
  for (size_t i = 0; i < nsources; i++) fprintf(fp, "source\t%s\n", sources[i]);
  fprintf(fp, "# the complete models (fitted and fixed values)\n");
  for (int j = 0; j < TPS_GEMM_NPAR; j++) fprintf(fp, "gemm\t%s\t%.17g\n", tps_gemm_par_names[j], f->gemm.p[j]);
  fprintf(fp, "ag\tranks\t%d\n", f->ag.ranks);
  fprintf(fp, "ag\tranks_per_node\t%d\n", f->ag.ranks_per_node);
  ag_field af[32];
  size_t naf = ag_fields(f, af);
  for (size_t i = 0; i < naf; i++) fprintf(fp, "ag\t%s\t%.17g\n", af[i].name, *af[i].v);
  if (f->fixed_note[0]) fprintf(fp, "fixed\t%s\n", f->fixed_note);
  fprintf(fp, "# fitted parameters: name, value, standard error, 95%% interval (t quantile)\n");
  for (int j = 0; j < f->npar; j++)
    fprintf(fp, "param\t%s\t%.17g\t%.17g\t%.17g\t%.17g\n", f->par_name[j], f->theta[j], f->se[j], f->lo95[j], f->hi95[j]);
  fprintf(fp, "# covariance of the fitted parameters, one row each, in the order above\n");
  for (int a = 0; a < f->npar; a++) {
    fprintf(fp, "cov\t%d", a);
    for (int b = 0; b < f->npar; b++) fprintf(fp, "\t%.17g", f->cov[a * f->npar + b]);
    fprintf(fp, "\n");
  }
  fprintf(fp, "# point: series, x, measured_us, model_us, rel_resid, loo_rel, gather_us, gather_se_us, backend\n");
  for (size_t i = 0; i < f->npts; i++) {
    const tps_fit_point *p = &f->pt[i];
    fprintf(fp, "point\t%s\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%s\n", tps_fit_series_name(f, p->series),
            p->x, p->measured_us, p->model_us, p->rel_resid, p->loo_rel, p->gather_us, p->gather_se_us,
            tps_gather_name(p->backend));
  }
  fprintf(fp, "stat\tdof\t%d\n", f->dof);
  fprintf(fp, "stat\tchi2\t%.17g\n", f->chi2);
  fprintf(fp, "stat\tt975\t%.17g\n", f->tq);
  fprintf(fp, "stat\tmedian_abs_rel\t%.17g\n", f->med_abs_rel);
  fprintf(fp, "stat\tmax_abs_rel\t%.17g\n", f->max_abs_rel);
  fprintf(fp, "stat\trms_rel\t%.17g\n", f->rms_rel);
  fprintf(fp, "stat\tloo_median_abs\t%.17g\n", f->loo_med_abs);
  fprintf(fp, "stat\tloo_max_abs\t%.17g\n", f->loo_max_abs);
  fprintf(fp, "stat\tloo_failed\t%d\n", f->loo_failed);
  fprintf(fp, "stat\titerations\t%d\n", f->iterations);
  fprintf(fp, "stat\trcond\t%.17g\n", f->rcond);
  return ferror(fp) ? -1 : 0;
}

int tps_fitfile_save(const char *path, const tps_fit *f, const char *const *sources, size_t nsources, tps_err *e) {
  tps_outfile o;
  if (tps_out_open(&o, path, e) != 0) return -1;
  if (tps_fitfile_write(o.fp, f, sources, nsources) != 0) {
    tps_out_abort(&o);
    return tps_err_set(e, path, 0, "write error");
  }
  return tps_out_commit(&o, e);
}

/* ------------------------------------------------------------------ reading
 * Ranges (anything outside is an error naming the line; casts happen only after the check):
 *   sms 0..100000, tp 1..65536, k and n 0..TPS_DIM_MAX, out_bytes 0..1024,
 *   out_bytes_per_token 0..2^30, ag ranks and ranks_per_node 0..65536;
 *   gemm and ag values |x| <= 1e9 (custom_cap_bytes 0..2^40, or 1e300: the fitter's "no
 *   cap", custom at every size); param value, se and
 *   interval |x| <= 1e12; cov |x| <= 1e24; point x 0..2^50, times 0..1e9 us, relative
 *   errors |x| <= 1e6; stat dof, loo_failed, iterations whole 0..1e9, rcond 0..1, other
 *   stats |x| <= 1e15 or nan.
 * Every line the writer always writes must be there (a file cut short misses its last
 * ones), each scalar key once; the file ends with a newline.  Text is UTF-8 except on
 * 'source' lines (file names, provenance only). */

/* A number; "nan" allowed only when allow_nan. */
static int num(const char *s, double *v, int allow_nan) {
  if (allow_nan && (strcmp(s, "nan") == 0 || strcmp(s, "-nan") == 0)) { *v = NAN; return 0; }
  return tps_parse_double(s, v);
}

/* A number in [-lim, lim] (or [0, lim] when nonneg; NaN passes when allow_nan). */
static int bounded(const char *s, double lim, int nonneg, int allow_nan, double *v) {
  if (num(s, v, allow_nan)) return -1;
  if (isnan(*v)) return 0;
  return *v > lim || *v < (nonneg ? 0 : -lim) ? -1 : 0;
}

static int integer(const char *s, long lo, long hi, long *v) { return tps_parse_range(s, lo, hi, v); }

int tps_fitfile_is_fit(const char *path) {
  tps_buf b;
  tps_err e;
  tps_err_clear(&e);
  if (tps_buf_read(path, &b, &e)) return 0;
  int fit = 0;
  const char *p = b.data, *end = b.data + b.len;
  if (b.len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
  for (int first = 1; p < end; first = 0) { /* the writer's first line, or the format line */
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (first && n >= 18 && strncmp(p, "# tpsplit fit file", 18) == 0) { fit = 1; break; }
    if (n > 0 && p[0] != '#') { fit = n >= 18 && strncmp(p, "format\ttpsplit-fit", 18) == 0; break; }
    p = nl ? nl + 1 : end;
  }
  tps_buf_free(&b);
  return fit;
}

int tps_fitfile_read(const char *path, tps_fit *f, tps_err *e) {
  tps_buf b;
  memset(f, 0, sizeof *f);
  if (tps_buf_read(path, &b, e)) return -1;
  int rc = tps_fitfile_read_mem(path, b.data, b.len, f, e);
  tps_buf_free(&b);
  return rc;
}

enum { K_KIND, K_GPU, K_PATH, K_SMS, K_TP, K_K, K_N, K_OUTB, K_OBPT, K_GMODE, K_AGR, K_AGRPN, K_NSCALAR };
static const char *const scalar_names[K_NSCALAR] = {"kind", "gpu", "path", "sms", "tp", "k", "n", "out_bytes",
                                                    "out_bytes_per_token", "gather_mode", "ag ranks",
                                                    "ag ranks_per_node"};
static const char *const stat_names[] = {"dof", "chi2", "t975", "median_abs_rel", "max_abs_rel", "rms_rel",
                                         "loo_median_abs", "loo_max_abs", "loo_failed", "iterations", "rcond"};
#define NSTAT (sizeof stat_names / sizeof stat_names[0])

int tps_fitfile_read_mem(const char *path, const char *data, size_t len, tps_fit *f, tps_err *e) {
  tps_text tx;
  memset(f, 0, sizeof *f);
  if (tps_text_from_buf(path, data, len, TPS_TEXT_ANY_BYTES, &tx, e) != 0) return -1;
  f->loo_med_abs = f->loo_max_abs = NAN;
  f->gather = TPS_GATHER_AUTO; /* a file without a gather_mode line */
  int have_format = 0, ncov = 0, rc = -1;
  unsigned char gemm_seen[TPS_GEMM_NPAR] = {0}, seen[K_NSCALAR] = {0}, stat_seen[NSTAT] = {0}, ag_seen[32] = {0};
  ag_field af[32];
  size_t naf = ag_fields(f, af);
  long ln = 0, fixed_line = 0;
  for (size_t i = 0; i < tx.n; i++) {
    ln = (long)i + 1;
    char *line = tx.line[i];
    if (strncmp(line, "source\t", 7) != 0 && tps_text_check_utf8(path, ln, line, e)) goto out;
    if (line[0] == '#' || line[0] == '\0') continue;
    char *fl[16];
    int nf = tps_split_tabs(line, fl, 15);
    const char *key = fl[0];
    if (!have_format) {
      long v;
      if (strcmp(key, "format") != 0 || nf != 3 || strcmp(fl[1], "tpsplit-fit") != 0) {
        tps_err_set(e, path, ln, "not a tpsplit fit file (the first line must be 'format<TAB>tpsplit-fit<TAB>1')");
        goto out;
      }
      if (integer(fl[2], 1, 1000, &v) != 0 || v != TPS_FITFILE_VERSION) {
        tps_err_set(e, path, ln, "fit file format version '%s' is not supported (this tpsplit reads %d)", fl[2], TPS_FITFILE_VERSION);
        goto out;
      }
      have_format = 1;
      continue;
    }
#define NEED(n) do { if (nf != (n)) { tps_err_set(e, path, ln, "'%s' line needs %d fields, has %d", key, (n), nf > 15 ? 16 : nf); goto out; } } while (0)
#define BADNUM(s) do { tps_err_set(e, path, ln, "'%s': not a valid number for '%s'", (s), key); goto out; } while (0)
#define RANGE(s, what) do { tps_err_set(e, path, ln, "'%s' for '%s' is outside %s", (s), key, (what)); goto out; } while (0)
#define ONCE(k) do { if (seen[k]) { tps_err_set(e, path, ln, "'%s' given twice", scalar_names[k]); goto out; } seen[k] = 1; } while (0)
    long lv;
    double dv;
    if (strcmp(key, "kind") == 0) {
      NEED(2);
      ONCE(K_KIND);
      if (strcmp(fl[1], "split") == 0) f->kind = TPS_FIT_SPLIT;
      else if (strcmp(fl[1], "gemm") == 0) f->kind = TPS_FIT_GEMM;
      else if (strcmp(fl[1], "allgather") == 0) f->kind = TPS_FIT_ALLGATHER;
      else { tps_err_set(e, path, ln, "unknown fit kind '%s' (split, gemm, allgather)", fl[1]); goto out; }
    } else if (strcmp(key, "gpu") == 0) {
      NEED(2);
      ONCE(K_GPU);
      if (strlen(fl[1]) >= sizeof f->gpu) { tps_err_set(e, path, ln, "GPU name too long"); goto out; }
      snprintf(f->gpu, sizeof f->gpu, "%s", fl[1]);
    } else if (strcmp(key, "path") == 0) {
      NEED(2);
      ONCE(K_PATH);
      if (strcmp(fl[1], "-") != 0 && !(f->gemm.path = tps_path_find(fl[1]))) {
        tps_err_set(e, path, ln, "unknown kernel path '%s'", fl[1]);
        goto out;
      }
    } else if (strcmp(key, "sms") == 0) {
      NEED(2);
      ONCE(K_SMS);
      if (integer(fl[1], 0, 100000, &lv) != 0) BADNUM(fl[1]);
      f->gemm.sms = (int)lv;
    } else if (strcmp(key, "tp") == 0) {
      NEED(2);
      ONCE(K_TP);
      if (integer(fl[1], 1, 65536, &lv) != 0) BADNUM(fl[1]);
      f->tp = (int)lv;
    } else if (strcmp(key, "k") == 0 || strcmp(key, "n") == 0) {
      NEED(2);
      ONCE(key[0] == 'k' ? K_K : K_N);
      if (integer(fl[1], 0, TPS_DIM_MAX, &lv) != 0) BADNUM(fl[1]);
      if (key[0] == 'k') f->shape.k = lv; else f->shape.n = lv;
    } else if (strcmp(key, "out_bytes") == 0 || strcmp(key, "out_bytes_per_token") == 0) {
      NEED(2);
      int ob = strcmp(key, "out_bytes") == 0;
      ONCE(ob ? K_OUTB : K_OBPT);
      if (num(fl[1], &dv, 0) != 0 || dv < 0) BADNUM(fl[1]);
      if (dv > (ob ? 1024.0 : 1073741824.0)) RANGE(fl[1], ob ? "0..1024 bytes" : "0..2^30 bytes");
      if (ob) f->shape.out_bytes = dv; else f->out_bytes_per_token = dv;
    } else if (strcmp(key, "gather_mode") == 0) {
      NEED(2);
      ONCE(K_GMODE);
      if ((f->gather = tps_gather_parse(fl[1])) < 0) {
        char names[64];
        tps_err_set(e, path, ln, "unknown gather_mode '%s' (%s)", fl[1], tps_gather_names(names, sizeof names));
        goto out;
      }
    } else if (strcmp(key, "source") == 0) {
      /* provenance only */
    } else if (strcmp(key, "fixed") == 0) {
      NEED(2);
      if (fixed_line) { tps_err_set(e, path, ln, "'fixed' given twice (also on line %ld)", fixed_line); goto out; }
      fixed_line = ln;
      /* kept whole or refused: a note cut inside a UTF-8 character would not read back */
      if (strlen(fl[1]) >= sizeof f->fixed_note) {
        tps_err_set(e, path, ln, "'fixed' note of %zu bytes, longer than %zu", strlen(fl[1]), sizeof f->fixed_note - 1);
        goto out;
      }
      memcpy(f->fixed_note, fl[1], strlen(fl[1]) + 1);
    } else if (strcmp(key, "gemm") == 0) {
      NEED(3);
      int t = tps_fit_target_from_name(fl[1]);
      if (t < 0 || t >= TPS_GEMM_NPAR) { tps_err_set(e, path, ln, "unknown GEMM parameter '%s'", fl[1]); goto out; }
      if (gemm_seen[t]) { tps_err_set(e, path, ln, "'gemm %s' given twice", fl[1]); goto out; }
      if (num(fl[2], &dv, 0) != 0) BADNUM(fl[2]);
      if (fabs(dv) > 1e9) RANGE(fl[2], "-1e9..1e9");
      f->gemm.p[t] = dv;
      gemm_seen[t] = 1;
    } else if (strcmp(key, "ag") == 0) {
      NEED(3);
      if (strcmp(fl[1], "ranks") == 0 || strcmp(fl[1], "ranks_per_node") == 0) {
        int r = fl[1][5] == '\0';
        ONCE(r ? K_AGR : K_AGRPN);
        if (integer(fl[2], 0, 65536, &lv) != 0) BADNUM(fl[2]);
        if (r) f->ag.ranks = (int)lv; else f->ag.ranks_per_node = (int)lv;
      } else {
        size_t j = 0;
        while (j < naf && strcmp(af[j].name, fl[1]) != 0) j++;
        if (j == naf) { tps_err_set(e, path, ln, "unknown all-gather field '%s'", fl[1]); goto out; }
        if (ag_seen[j]) { tps_err_set(e, path, ln, "'ag %s' given twice", fl[1]); goto out; }
        if (num(fl[2], &dv, 0) != 0 || dv < 0) BADNUM(fl[2]);
        int cap = strcmp(fl[1], "custom_cap_bytes") == 0;
        int nocap = cap && dv >= 1e299 && dv <= 1e301; /* the fitter's "custom at every size" */
        if (!nocap && dv > (cap ? 1099511627776.0 : 1e9)) RANGE(fl[2], cap ? "0..2^40 bytes (or 1e300: no cap)" : "0..1e9");
        *af[j].v = dv;
        ag_seen[j] = 1;
      }
    } else if (strcmp(key, "param") == 0) {
      NEED(6);
      if (ncov > 0) { tps_err_set(e, path, ln, "param line after the cov rows (params come first)"); goto out; }
      if (f->npar >= TPS_FIT_MAXPAR) { tps_err_set(e, path, ln, "more than %d parameters", TPS_FIT_MAXPAR); goto out; }
      int t = tps_fit_target_from_name(fl[1]);
      if (t < 0) { tps_err_set(e, path, ln, "unknown parameter '%s'", fl[1]); goto out; }
      for (int q = 0; q < f->npar; q++)
        if (f->par_target[q] == t) { tps_err_set(e, path, ln, "'param %s' given twice", fl[1]); goto out; }
      int j = f->npar;
      double v[4];
      for (int k = 0; k < 4; k++) {
        if (num(fl[2 + k], &v[k], 0) != 0) BADNUM(fl[2 + k]);
        if (fabs(v[k]) > 1e12) RANGE(fl[2 + k], "-1e12..1e12");
      }
      f->par_target[j] = t;
      snprintf(f->par_name[j], sizeof f->par_name[j], "%s", fl[1]);
      f->theta[j] = v[0]; f->se[j] = v[1]; f->lo95[j] = v[2]; f->hi95[j] = v[3];
      f->npar++;
    } else if (strcmp(key, "cov") == 0) {
      if (nf != f->npar + 2) {
        tps_err_set(e, path, ln, "cov row needs %d values (one per param line before it), has %d", f->npar, nf - 2);
        goto out;
      }
      if (integer(fl[1], 0, TPS_FIT_MAXPAR - 1, &lv) != 0 || lv != ncov) {
        tps_err_set(e, path, ln, "cov rows must be numbered 0, 1, ... in order (expected %d)", ncov);
        goto out;
      }
      if (ncov >= f->npar) { tps_err_set(e, path, ln, "more cov rows than parameters"); goto out; }
      for (int b2 = 0; b2 < f->npar; b2++) {
        double *c = &f->cov[ncov * f->npar + b2];
        if (num(fl[2 + b2], c, 0) != 0) BADNUM(fl[2 + b2]);
        if (fabs(*c) > 1e24) RANGE(fl[2 + b2], "-1e24..1e24");
      }
      ncov++;
    } else if (strcmp(key, "point") == 0) {
      NEED(10);
      if (f->npts >= TPS_FIT_MAXPTS) { tps_err_set(e, path, ln, "more than %d points", TPS_FIT_MAXPTS); goto out; }
      tps_fit_point *p = &f->pt[f->npts];
      p->series = strcmp(fl[1], "split") == 0 ? 1 : 0;
      if (strcmp(fl[1], "split") && strcmp(fl[1], "replicated") && strcmp(fl[1], "gemm") && strcmp(fl[1], "allgather")) {
        tps_err_set(e, path, ln, "unknown series '%s'", fl[1]);
        goto out;
      }
      double *dst[7] = {&p->x, &p->measured_us, &p->model_us, &p->rel_resid, &p->loo_rel, &p->gather_us, &p->gather_se_us};
      static const double lim[7] = {1125899906842624.0, 1e9, 1e9, 1e6, 1e6, 1e9, 1e9};
      static const int nonneg[7] = {1, 1, 1, 0, 0, 1, 1};
      for (int k = 0; k < 7; k++) {
        if (num(fl[2 + k], dst[k], k >= 3) != 0) BADNUM(fl[2 + k]);
        if (bounded(fl[2 + k], lim[k], nonneg[k], k >= 3, dst[k]) != 0) RANGE(fl[2 + k], "its range (src/io/fitfile.c)");
      }
      p->backend = tps_gather_parse(fl[9]);
      if (p->backend >= 0 && tps_gathers[p->backend].rule) p->backend = -1; /* a point ran one backend */
      f->npts++;
    } else if (strcmp(key, "stat") == 0) {
      NEED(3);
      if (num(fl[2], &dv, 1) != 0) BADNUM(fl[2]);
      const char *st = fl[1];
      size_t j = 0;
      while (j < NSTAT && strcmp(stat_names[j], st) != 0) j++;
      if (j < NSTAT) {
        if (stat_seen[j]) { tps_err_set(e, path, ln, "'stat %s' given twice", st); goto out; }
        stat_seen[j] = 1;
      }
      int whole = strcmp(st, "dof") == 0 || strcmp(st, "loo_failed") == 0 || strcmp(st, "iterations") == 0;
      if (whole) {
        if (integer(fl[2], 0, 1000000000L, &lv) != 0) RANGE(fl[2], "0..1e9 (a whole number)");
        if (st[0] == 'd') f->dof = (int)lv;
        else if (st[0] == 'l') f->loo_failed = (int)lv;
        else f->iterations = (int)lv;
      } else if (strcmp(st, "rcond") == 0) {
        if (!isnan(dv) && (dv < 0 || dv > 1)) RANGE(fl[2], "0..1");
        f->rcond = dv;
      } else {
        if (!isnan(dv) && fabs(dv) > 1e15) RANGE(fl[2], "-1e15..1e15");
        if (strcmp(st, "chi2") == 0) f->chi2 = dv;
        else if (strcmp(st, "t975") == 0) f->tq = dv;
        else if (strcmp(st, "median_abs_rel") == 0) f->med_abs_rel = dv;
        else if (strcmp(st, "max_abs_rel") == 0) f->max_abs_rel = dv;
        else if (strcmp(st, "rms_rel") == 0) f->rms_rel = dv;
        else if (strcmp(st, "loo_median_abs") == 0) f->loo_med_abs = dv;
        else if (strcmp(st, "loo_max_abs") == 0) f->loo_max_abs = dv;
        /* unknown stats are ignored: later versions may add some */
      }
    } else {
      tps_err_set(e, path, ln, "unknown key '%s'", key);
      goto out;
    }
#undef NEED
#undef BADNUM
#undef RANGE
#undef ONCE
  }
  if (!have_format) { tps_err_set(e, path, 0, tx.n ? "not a tpsplit fit file (no format line)" : "empty file"); goto out; }
  if (!seen[K_KIND]) { tps_err_set(e, path, 0, "no 'kind' line"); goto out; }
  /* everything tps_fitfile_write always writes, in its order: a file cut short misses the last */
  for (int k = 0; k < K_NSCALAR; k++)
    if (!seen[k]) { tps_err_set(e, path, (long)tx.n, "missing '%s' line (the file is cut short?)", scalar_names[k]); goto out; }
  for (int t = 0; t < TPS_GEMM_NPAR; t++)
    if (!gemm_seen[t]) { tps_err_set(e, path, (long)tx.n, "missing 'gemm %s' line (the file is cut short?)", tps_gemm_par_names[t]); goto out; }
  for (size_t j = 0; j < naf; j++)
    if (!ag_seen[j]) { tps_err_set(e, path, (long)tx.n, "missing 'ag %s' line (the file is cut short?)", af[j].name); goto out; }
  if (ncov != f->npar) {
    tps_err_set(e, path, ncov < f->npar ? (long)tx.n : 0, "%d cov rows for %d parameters%s", ncov, f->npar,
                ncov < f->npar ? " (the file is cut short?)" : "");
    goto out;
  }
  for (size_t j = 0; j < NSTAT; j++)
    if (!stat_seen[j]) { tps_err_set(e, path, (long)tx.n, "missing 'stat %s' line (the file is cut short?)", stat_names[j]); goto out; }
  if (f->kind != TPS_FIT_ALLGATHER) {
    if (!f->gemm.path) { tps_err_set(e, path, 0, "a %s fit needs a kernel path", tps_fit_kind_name(f->kind)); goto out; }
    if (f->gemm.sms < 1 || f->shape.k < 1 || f->shape.n < 1 || !(f->shape.out_bytes > 0)) {
      tps_err_set(e, path, 0, "sms, k, n and out_bytes must be > 0");
      goto out;
    }
  }
  if (f->kind == TPS_FIT_SPLIT && (f->tp < 2 || !(f->out_bytes_per_token > 0))) {
    tps_err_set(e, path, 0, "a split fit needs tp >= 2 and out_bytes_per_token > 0");
    goto out;
  }
  if (tps_text_check_end(&tx, e)) goto out;
  f->gemm.kind = TPS_GEMM_PARAMETRIC;
  if (tps_fit_set_theta(f, f->theta) != 0) {
    tps_err_set(e, path, 0, "a fitted parameter is outside its domain (a bandwidth or throughput <= 0, a time < 0)");
    goto out;
  }
  if (f->kind != TPS_FIT_ALLGATHER && !isfinite(tps_gemm_time_us(&f->gemm, &f->shape, 1))) {
    tps_err_set(e, path, 0, "the GEMM model is not usable (a bandwidth or throughput <= 0)");
    goto out;
  }
  rc = 0;
out:
  tps_text_free(&tx);
  return rc;
}
