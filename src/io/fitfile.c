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

/* The state of a fit file's reading: the fit, where the reader is, what was seen. */
typedef struct {
  tps_fit *f;
  const char *path;
  long ln;
  tps_err *e;
  unsigned char gemm_seen[TPS_GEMM_NPAR], seen[K_NSCALAR], stat_seen[NSTAT], ag_seen[32];
  ag_field af[32];
  size_t naf;
  int ncov;
  long fixed_line;       /* the line of the 'fixed' note, 0 before it */
} fitrd;

#define NEED(n) do { if (nf != (n)) return tps_err_set(R->e, R->path, R->ln, "'%s' line needs %d fields, has %d", key, (n), nf > 15 ? 16 : nf); } while (0)
#define BADNUM(s) return tps_err_set(R->e, R->path, R->ln, "'%s': not a valid number for '%s'", (s), key)
#define RANGE(s, what) return tps_err_set(R->e, R->path, R->ln, "'%s' for '%s' is outside %s", (s), key, (what))
#define ONCE(k) do { if (R->seen[k]) return tps_err_set(R->e, R->path, R->ln, "'%s' given twice", scalar_names[k]); R->seen[k] = 1; } while (0)

/* The scalar lines (kind, gpu, path, sms, tp, k, n, out_bytes, out_bytes_per_token,
 * gather_mode; source and fixed).  1: not one of them; 0; -1 with the error. */
static int read_scalar(fitrd *R, char **fl, int nf) {
  const char *key = fl[0];
  long lv;
  double dv;
  if (strcmp(key, "kind") == 0) {
    NEED(2);
    ONCE(K_KIND);
    if (strcmp(fl[1], "split") == 0) R->f->kind = TPS_FIT_SPLIT;
    else if (strcmp(fl[1], "gemm") == 0) R->f->kind = TPS_FIT_GEMM;
    else if (strcmp(fl[1], "allgather") == 0) R->f->kind = TPS_FIT_ALLGATHER;
    else { tps_err_set(R->e, R->path, R->ln, "unknown fit kind '%s' (split, gemm, allgather)", fl[1]); return -1; }
  } else if (strcmp(key, "gpu") == 0) {
    NEED(2);
    ONCE(K_GPU);
    if (strlen(fl[1]) >= sizeof R->f->gpu) { tps_err_set(R->e, R->path, R->ln, "GPU name too long"); return -1; }
    snprintf(R->f->gpu, sizeof R->f->gpu, "%s", fl[1]);
  } else if (strcmp(key, "path") == 0) {
    NEED(2);
    ONCE(K_PATH);
    if (strcmp(fl[1], "-") != 0 && !(R->f->gemm.path = tps_path_find(fl[1]))) {
      tps_err_set(R->e, R->path, R->ln, "unknown kernel path '%s'", fl[1]);
      return -1;
    }
  } else if (strcmp(key, "sms") == 0) {
    NEED(2);
    ONCE(K_SMS);
    if (integer(fl[1], 0, 100000, &lv) != 0) BADNUM(fl[1]);
    R->f->gemm.sms = (int)lv;
  } else if (strcmp(key, "tp") == 0) {
    NEED(2);
    ONCE(K_TP);
    if (integer(fl[1], 1, 65536, &lv) != 0) BADNUM(fl[1]);
    R->f->tp = (int)lv;
  } else if (strcmp(key, "k") == 0 || strcmp(key, "n") == 0) {
    NEED(2);
    ONCE(key[0] == 'k' ? K_K : K_N);
    if (integer(fl[1], 0, TPS_DIM_MAX, &lv) != 0) BADNUM(fl[1]);
    if (key[0] == 'k') R->f->shape.k = lv; else R->f->shape.n = lv;
  } else if (strcmp(key, "out_bytes") == 0 || strcmp(key, "out_bytes_per_token") == 0) {
    NEED(2);
    int ob = strcmp(key, "out_bytes") == 0;
    ONCE(ob ? K_OUTB : K_OBPT);
    if (num(fl[1], &dv, 0) != 0 || dv < 0) BADNUM(fl[1]);
    if (dv > (ob ? 1024.0 : 1073741824.0)) RANGE(fl[1], ob ? "0..1024 bytes" : "0..2^30 bytes");
    if (ob) R->f->shape.out_bytes = dv; else R->f->out_bytes_per_token = dv;
  } else if (strcmp(key, "gather_mode") == 0) {
    NEED(2);
    ONCE(K_GMODE);
    if ((R->f->gather = tps_gather_parse(fl[1])) < 0) {
      char names[64];
      tps_err_set(R->e, R->path, R->ln, "unknown gather_mode '%s' (%s)", fl[1], tps_gather_names(names, sizeof names));
      return -1;
    }
  } else if (strcmp(key, "source") == 0) {
    /* provenance only */
  } else if (strcmp(key, "fixed") == 0) {
    NEED(2);
    if (R->fixed_line) return tps_err_set(R->e, R->path, R->ln, "'fixed' given twice (also on line %ld)", R->fixed_line);
    R->fixed_line = R->ln;
    /* kept whole or refused: a note cut inside a UTF-8 character would not read back */
    if (strlen(fl[1]) >= sizeof R->f->fixed_note)
      return tps_err_set(R->e, R->path, R->ln, "'fixed' note of %zu bytes, longer than %zu", strlen(fl[1]),
                         sizeof R->f->fixed_note - 1);
    memcpy(R->f->fixed_note, fl[1], strlen(fl[1]) + 1);
  } else {
    return 1;
  }
  return 0;
}

/* The model lines: gemm PARAM VALUE, ag FIELD VALUE.  1: neither; 0; -1 with the error. */
static int read_model(fitrd *R, char **fl, int nf) {
  const char *key = fl[0];
  long lv;
  double dv;
  if (strcmp(key, "gemm") == 0) {
    NEED(3);
    int t = tps_fit_target_from_name(fl[1]);
    if (t < 0 || t >= TPS_GEMM_NPAR) { tps_err_set(R->e, R->path, R->ln, "unknown GEMM parameter '%s'", fl[1]); return -1; }
    if (R->gemm_seen[t]) { tps_err_set(R->e, R->path, R->ln, "'gemm %s' given twice", fl[1]); return -1; }
    if (num(fl[2], &dv, 0) != 0) BADNUM(fl[2]);
    if (fabs(dv) > 1e9) RANGE(fl[2], "-1e9..1e9");
    R->f->gemm.p[t] = dv;
    R->gemm_seen[t] = 1;
  } else if (strcmp(key, "ag") == 0) {
    NEED(3);
    if (strcmp(fl[1], "ranks") == 0 || strcmp(fl[1], "ranks_per_node") == 0) {
      int r = fl[1][5] == '\0';
      ONCE(r ? K_AGR : K_AGRPN);
      if (integer(fl[2], 0, 65536, &lv) != 0) BADNUM(fl[2]);
      if (r) R->f->ag.ranks = (int)lv; else R->f->ag.ranks_per_node = (int)lv;
    } else {
      size_t j = 0;
      while (j < R->naf && strcmp(R->af[j].name, fl[1]) != 0) j++;
      if (j == R->naf) { tps_err_set(R->e, R->path, R->ln, "unknown all-gather field '%s'", fl[1]); return -1; }
      if (R->ag_seen[j]) { tps_err_set(R->e, R->path, R->ln, "'ag %s' given twice", fl[1]); return -1; }
      if (num(fl[2], &dv, 0) != 0 || dv < 0) BADNUM(fl[2]);
      int cap = strcmp(fl[1], "custom_cap_bytes") == 0;
      int nocap = cap && dv >= 1e299 && dv <= 1e301; /* the fitter's "custom at every size" */
      if (!nocap && dv > (cap ? 1099511627776.0 : 1e9)) RANGE(fl[2], cap ? "0..2^40 bytes (or 1e300: no cap)" : "0..1e9");
      *R->af[j].v = dv;
      R->ag_seen[j] = 1;
    }
  } else {
    return 1;
  }
  return 0;
}

/* The parameter lines: param NAME THETA SE LO HI, then cov I ROW... */
static int read_param(fitrd *R, char **fl, int nf) {
  const char *key = fl[0];
  long lv;
  if (strcmp(key, "param") == 0) {
    NEED(6);
    if (R->ncov > 0) { tps_err_set(R->e, R->path, R->ln, "param line after the cov rows (params come first)"); return -1; }
    if (R->f->npar >= TPS_FIT_MAXPAR) { tps_err_set(R->e, R->path, R->ln, "more than %d parameters", TPS_FIT_MAXPAR); return -1; }
    int t = tps_fit_target_from_name(fl[1]);
    if (t < 0) { tps_err_set(R->e, R->path, R->ln, "unknown parameter '%s'", fl[1]); return -1; }
    for (int q = 0; q < R->f->npar; q++)
      if (R->f->par_target[q] == t) { tps_err_set(R->e, R->path, R->ln, "'param %s' given twice", fl[1]); return -1; }
    int j = R->f->npar;
    double v[4];
    for (int k = 0; k < 4; k++) {
      if (num(fl[2 + k], &v[k], 0) != 0) BADNUM(fl[2 + k]);
      if (fabs(v[k]) > 1e12) RANGE(fl[2 + k], "-1e12..1e12");
    }
    R->f->par_target[j] = t;
    snprintf(R->f->par_name[j], sizeof R->f->par_name[j], "%s", fl[1]);
    R->f->theta[j] = v[0]; R->f->se[j] = v[1]; R->f->lo95[j] = v[2]; R->f->hi95[j] = v[3];
    R->f->npar++;
  } else if (strcmp(key, "cov") == 0) {
    if (nf != R->f->npar + 2) {
      tps_err_set(R->e, R->path, R->ln, "cov row needs %d values (one per param line before it), has %d", R->f->npar, nf - 2);
      return -1;
    }
    if (integer(fl[1], 0, TPS_FIT_MAXPAR - 1, &lv) != 0 || lv != R->ncov) {
      tps_err_set(R->e, R->path, R->ln, "cov rows must be numbered 0, 1, ... in order (expected %d)", R->ncov);
      return -1;
    }
    if (R->ncov >= R->f->npar) { tps_err_set(R->e, R->path, R->ln, "more cov rows than parameters"); return -1; }
    for (int b2 = 0; b2 < R->f->npar; b2++) {
      double *c = &R->f->cov[R->ncov * R->f->npar + b2];
      if (num(fl[2 + b2], c, 0) != 0) BADNUM(fl[2 + b2]);
      if (fabs(*c) > 1e24) RANGE(fl[2 + b2], "-1e24..1e24");
    }
    R->ncov++;
  } else {
    return 1;
  }
  return 0;
}

/* point SERIES X MEASURED MODEL REL LOO GATHER GATHER_SE BACKEND; stat NAME VALUE. */
static int read_point_stat(fitrd *R, char **fl, int nf) {
  const char *key = fl[0];
  long lv;
  double dv;
  if (strcmp(key, "point") == 0) {
    NEED(10);
    if (R->f->npts >= TPS_FIT_MAXPTS) { tps_err_set(R->e, R->path, R->ln, "more than %d points", TPS_FIT_MAXPTS); return -1; }
    tps_fit_point *p = &R->f->pt[R->f->npts];
    p->series = strcmp(fl[1], "split") == 0 ? 1 : 0;
    if (strcmp(fl[1], "split") && strcmp(fl[1], "replicated") && strcmp(fl[1], "gemm") && strcmp(fl[1], "allgather")) {
      tps_err_set(R->e, R->path, R->ln, "unknown series '%s'", fl[1]);
      return -1;
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
    R->f->npts++;
  } else if (strcmp(key, "stat") == 0) {
    NEED(3);
    if (num(fl[2], &dv, 1) != 0) BADNUM(fl[2]);
    const char *st = fl[1];
    size_t j = 0;
    while (j < NSTAT && strcmp(stat_names[j], st) != 0) j++;
    if (j < NSTAT) {
      if (R->stat_seen[j]) { tps_err_set(R->e, R->path, R->ln, "'stat %s' given twice", st); return -1; }
      R->stat_seen[j] = 1;
    }
    int whole = strcmp(st, "dof") == 0 || strcmp(st, "loo_failed") == 0 || strcmp(st, "iterations") == 0;
    if (whole) {
      if (integer(fl[2], 0, 1000000000L, &lv) != 0) RANGE(fl[2], "0..1e9 (a whole number)");
      if (st[0] == 'd') R->f->dof = (int)lv;
      else if (st[0] == 'l') R->f->loo_failed = (int)lv;
      else R->f->iterations = (int)lv;
    } else if (strcmp(st, "rcond") == 0) {
      if (!isnan(dv) && (dv < 0 || dv > 1)) RANGE(fl[2], "0..1");
      R->f->rcond = dv;
    } else {
      if (!isnan(dv) && fabs(dv) > 1e15) RANGE(fl[2], "-1e15..1e15");
      if (strcmp(st, "chi2") == 0) R->f->chi2 = dv;
      else if (strcmp(st, "t975") == 0) R->f->tq = dv;
      else if (strcmp(st, "median_abs_rel") == 0) R->f->med_abs_rel = dv;
      else if (strcmp(st, "max_abs_rel") == 0) R->f->max_abs_rel = dv;
      else if (strcmp(st, "rms_rel") == 0) R->f->rms_rel = dv;
      else if (strcmp(st, "loo_median_abs") == 0) R->f->loo_med_abs = dv;
      else if (strcmp(st, "loo_max_abs") == 0) R->f->loo_max_abs = dv;
      /* unknown stats are ignored: later versions may add some */
    }
  } else {
    return 1;
  }
  return 0;
}
#undef NEED
#undef BADNUM
#undef RANGE
#undef ONCE

/* What tps_fitfile_write always writes, in its order (a file cut short misses the last), and
 * what the kind needs. */
static int check_complete(fitrd *R, const tps_text *tx) {
  tps_fit *f = R->f;
  const char *path = R->path;
  tps_err *e = R->e;
  if (!R->seen[K_KIND]) { tps_err_set(e, path, 0, "no 'kind' line"); return -1; }
  /* everything tps_fitfile_write always writes, in its order: a file cut short misses the last */
  for (int k = 0; k < K_NSCALAR; k++)
    if (!R->seen[k]) { tps_err_set(e, path, (long)tx->n, "missing '%s' line (the file is cut short?)", scalar_names[k]); return -1; }
  for (int t = 0; t < TPS_GEMM_NPAR; t++)
    if (!R->gemm_seen[t]) { tps_err_set(e, path, (long)tx->n, "missing 'gemm %s' line (the file is cut short?)", tps_gemm_par_names[t]); return -1; }
  for (size_t j = 0; j < R->naf; j++)
    if (!R->ag_seen[j]) { tps_err_set(e, path, (long)tx->n, "missing 'ag %s' line (the file is cut short?)", R->af[j].name); return -1; }
  if (R->ncov != f->npar) {
    tps_err_set(e, path, R->ncov < f->npar ? (long)tx->n : 0, "%d cov rows for %d parameters%s", R->ncov, f->npar,
                R->ncov < f->npar ? " (the file is cut short?)" : "");
    return -1;
  }
  for (size_t j = 0; j < NSTAT; j++)
    if (!R->stat_seen[j]) { tps_err_set(e, path, (long)tx->n, "missing 'stat %s' line (the file is cut short?)", stat_names[j]); return -1; }
  if (f->kind != TPS_FIT_ALLGATHER) {
    if (!f->gemm.path) { tps_err_set(e, path, 0, "a %s fit needs a kernel path", tps_fit_kind_name(f->kind)); return -1; }
    if (f->gemm.sms < 1 || f->shape.k < 1 || f->shape.n < 1 || !(f->shape.out_bytes > 0)) {
      tps_err_set(e, path, 0, "sms, k, n and out_bytes must be > 0");
      return -1;
    }
  }
  if (f->kind == TPS_FIT_SPLIT && (f->tp < 2 || !(f->out_bytes_per_token > 0))) {
    tps_err_set(e, path, 0, "a split fit needs tp >= 2 and out_bytes_per_token > 0");
    return -1;
  }
  if (tps_text_check_end(tx, e)) return -1;
  f->gemm.kind = TPS_GEMM_PARAMETRIC;
  if (tps_fit_set_theta(f, f->theta) != 0) {
    tps_err_set(e, path, 0, "a fitted parameter is outside its domain (a bandwidth or throughput <= 0, a time < 0)");
    return -1;
  }
  if (f->kind != TPS_FIT_ALLGATHER && !isfinite(tps_gemm_time_us(&f->gemm, &f->shape, 1))) {
    tps_err_set(e, path, 0, "the GEMM model is not usable (a bandwidth or throughput <= 0)");
    return -1;
  }
  return 0;
}

int tps_fitfile_read_mem(const char *path, const char *data, size_t len, tps_fit *f, tps_err *e) {
  tps_text tx;
  memset(f, 0, sizeof *f);
  if (tps_text_from_buf(path, data, len, TPS_TEXT_ANY_BYTES, &tx, e) != 0) return -1;
  f->loo_med_abs = f->loo_max_abs = NAN;
  f->gather = tps_gather_rule(); /* a file without a gather_mode line */
  int have_format = 0, rc = -1;
  fitrd *R = calloc(1, sizeof *R);
  if (!R) { tps_text_free(&tx); return tps_err_oom(e, "reading %s", path); }
  R->f = f;
  R->path = path;
  R->e = e;
  R->naf = ag_fields(f, R->af);
  for (size_t i = 0; i < tx.n; i++) {
    R->ln = (long)i + 1;
    const long ln = R->ln;
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
    int st = read_scalar(R, fl, nf);
    if (st == 1) st = read_model(R, fl, nf);
    if (st == 1) st = read_param(R, fl, nf);
    if (st == 1) st = read_point_stat(R, fl, nf);
    if (st == 1) { tps_err_set(e, path, ln, "unknown key '%s'", key); goto out; }
    if (st) goto out;
  }
  if (!have_format) { tps_err_set(e, path, 0, tx.n ? "not a tpsplit fit file (no format line)" : "empty file"); goto out; }
  if (check_complete(R, &tx)) goto out;
  rc = 0;
out:
  free(R);
  tps_text_free(&tx);
  return rc;
}
