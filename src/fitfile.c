/* fitfile.c: write and read the saved fit (format documented in fitfile.h). */
#include "fitfile.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "text.h"
#include "util.h"

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
static int fitfile_write(FILE *fp, const tps_fit *fc, const char *const *sources, size_t nsources) {
  tps_fit *f = (tps_fit *)fc; /* ag_fields takes pointers; nothing is written through them here */
  fprintf(fp, "# tpsplit fit file: see src/fitfile.h or the README (section 'fit') for the format.\n");
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
  if (fitfile_write(o.fp, f, sources, nsources) != 0) {
    tps_out_abort(&o);
    return tps_err_set(e, path, 0, "write error");
  }
  return tps_out_commit(&o, e);
}

/* ------------------------------------------------------------------ reading */

/* A number; "nan" allowed only when allow_nan. */
static int num(const char *s, double *v, int allow_nan) {
  if (allow_nan && (strcmp(s, "nan") == 0 || strcmp(s, "-nan") == 0)) { *v = NAN; return 0; }
  return tps_parse_double(s, v);
}

static int integer(const char *s, long lo, long hi, long *v) {
  return tps_parse_long(s, v) == 0 && *v >= lo && *v <= hi ? 0 : -1;
}

int tps_fitfile_read(const char *path, tps_fit *f, tps_err *e) {
  tps_text tx;
  if (tps_text_read(path, &tx, e) != 0) return -1;
  memset(f, 0, sizeof *f);
  f->loo_med_abs = f->loo_max_abs = NAN;
  f->gather = TPS_GATHER_AUTO; /* a file without a gather_mode line */
  int have_format = 0, have_kind = 0, ncov = 0, rc = -1;
  unsigned char gemm_seen[TPS_GEMM_NPAR] = {0};
  ag_field af[32];
  size_t naf = ag_fields(f, af);
  long ln = 0;
  for (size_t i = 0; i < tx.n; i++) {
    ln = (long)i + 1;
    char *line = tx.line[i];
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
    long lv;
    double dv;
    if (strcmp(key, "kind") == 0) {
      NEED(2);
      if (strcmp(fl[1], "split") == 0) f->kind = TPS_FIT_SPLIT;
      else if (strcmp(fl[1], "gemm") == 0) f->kind = TPS_FIT_GEMM;
      else if (strcmp(fl[1], "allgather") == 0) f->kind = TPS_FIT_ALLGATHER;
      else { tps_err_set(e, path, ln, "unknown fit kind '%s' (split, gemm, allgather)", fl[1]); goto out; }
      have_kind = 1;
    } else if (strcmp(key, "gpu") == 0) {
      NEED(2);
      snprintf(f->gpu, sizeof f->gpu, "%s", fl[1]);
    } else if (strcmp(key, "path") == 0) {
      NEED(2);
      if (strcmp(fl[1], "-") != 0 && !(f->gemm.path = tps_path_find(fl[1]))) {
        tps_err_set(e, path, ln, "unknown kernel path '%s'", fl[1]);
        goto out;
      }
    } else if (strcmp(key, "sms") == 0) {
      NEED(2);
      if (integer(fl[1], 0, 100000, &lv) != 0) BADNUM(fl[1]);
      f->gemm.sms = (int)lv;
    } else if (strcmp(key, "tp") == 0) {
      NEED(2);
      if (integer(fl[1], 1, 100000, &lv) != 0) BADNUM(fl[1]);
      f->tp = (int)lv;
    } else if (strcmp(key, "k") == 0 || strcmp(key, "n") == 0) {
      NEED(2);
      if (integer(fl[1], 0, 1L << 40, &lv) != 0) BADNUM(fl[1]);
      if (key[0] == 'k') f->shape.k = lv; else f->shape.n = lv;
    } else if (strcmp(key, "out_bytes") == 0 || strcmp(key, "out_bytes_per_token") == 0) {
      NEED(2);
      if (num(fl[1], &dv, 0) != 0 || dv < 0) BADNUM(fl[1]);
      if (strcmp(key, "out_bytes") == 0) f->shape.out_bytes = dv; else f->out_bytes_per_token = dv;
    } else if (strcmp(key, "gather_mode") == 0) {
      NEED(2);
      if ((f->gather = tps_gather_parse(fl[1])) < 0) {
        char names[64];
        tps_err_set(e, path, ln, "unknown gather_mode '%s' (%s)", fl[1], tps_gather_names(names, sizeof names));
        goto out;
      }
    } else if (strcmp(key, "source") == 0) {
      /* provenance only */
    } else if (strcmp(key, "fixed") == 0) {
      NEED(2);
      snprintf(f->fixed_note, sizeof f->fixed_note, "%s", fl[1]);
    } else if (strcmp(key, "gemm") == 0) {
      NEED(3);
      int t = tps_fit_target_from_name(fl[1]);
      if (t < 0 || t >= TPS_GEMM_NPAR) { tps_err_set(e, path, ln, "unknown GEMM parameter '%s'", fl[1]); goto out; }
      if (num(fl[2], &dv, 0) != 0) BADNUM(fl[2]);
      f->gemm.p[t] = dv;
      gemm_seen[t] = 1;
    } else if (strcmp(key, "ag") == 0) {
      NEED(3);
      if (strcmp(fl[1], "ranks") == 0 || strcmp(fl[1], "ranks_per_node") == 0) {
        if (integer(fl[2], 0, 100000, &lv) != 0) BADNUM(fl[2]);
        if (fl[1][5] == '\0') f->ag.ranks = (int)lv; else f->ag.ranks_per_node = (int)lv;
      } else {
        size_t j = 0;
        while (j < naf && strcmp(af[j].name, fl[1]) != 0) j++;
        if (j == naf) { tps_err_set(e, path, ln, "unknown all-gather field '%s'", fl[1]); goto out; }
        if (num(fl[2], &dv, 0) != 0 || dv < 0) BADNUM(fl[2]);
        *af[j].v = dv;
      }
    } else if (strcmp(key, "param") == 0) {
      NEED(6);
      if (f->npar >= TPS_FIT_MAXPAR) { tps_err_set(e, path, ln, "more than %d parameters", TPS_FIT_MAXPAR); goto out; }
      int t = tps_fit_target_from_name(fl[1]);
      if (t < 0) { tps_err_set(e, path, ln, "unknown parameter '%s'", fl[1]); goto out; }
      int j = f->npar;
      double v[4];
      for (int k = 0; k < 4; k++)
        if (num(fl[2 + k], &v[k], 0) != 0) BADNUM(fl[2 + k]);
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
      for (int b = 0; b < f->npar; b++)
        if (num(fl[2 + b], &f->cov[ncov * f->npar + b], 0) != 0) BADNUM(fl[2 + b]);
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
      for (int k = 0; k < 7; k++)
        if (num(fl[2 + k], dst[k], k >= 3) != 0) BADNUM(fl[2 + k]);
      p->backend = tps_gather_parse(fl[9]);
      if (p->backend >= 0 && tps_gathers[p->backend].rule) p->backend = -1; /* a point ran one backend */
      f->npts++;
    } else if (strcmp(key, "stat") == 0) {
      NEED(3);
      if (num(fl[2], &dv, 1) != 0) BADNUM(fl[2]);
      const char *s = fl[1];
      if (strcmp(s, "dof") == 0) f->dof = (int)dv;
      else if (strcmp(s, "chi2") == 0) f->chi2 = dv;
      else if (strcmp(s, "t975") == 0) f->tq = dv;
      else if (strcmp(s, "median_abs_rel") == 0) f->med_abs_rel = dv;
      else if (strcmp(s, "max_abs_rel") == 0) f->max_abs_rel = dv;
      else if (strcmp(s, "rms_rel") == 0) f->rms_rel = dv;
      else if (strcmp(s, "loo_median_abs") == 0) f->loo_med_abs = dv;
      else if (strcmp(s, "loo_max_abs") == 0) f->loo_max_abs = dv;
      else if (strcmp(s, "loo_failed") == 0) f->loo_failed = (int)dv;
      else if (strcmp(s, "iterations") == 0) f->iterations = (int)dv;
      else if (strcmp(s, "rcond") == 0) f->rcond = dv;
      /* unknown stats are ignored: later versions may add some */
    } else {
      tps_err_set(e, path, ln, "unknown key '%s'", key);
      goto out;
    }
#undef NEED
#undef BADNUM
  }
  if (!have_format) { tps_err_set(e, path, 0, tx.n ? "not a tpsplit fit file (no format line)" : "empty file"); goto out; }
  if (!have_kind) { tps_err_set(e, path, 0, "no 'kind' line"); goto out; }
  if (ncov != f->npar) { tps_err_set(e, path, 0, "%d cov rows for %d parameters", ncov, f->npar); goto out; }
  if (f->kind != TPS_FIT_ALLGATHER) {
    for (int t = 0; t < TPS_GEMM_NPAR; t++)
      if (!gemm_seen[t]) { tps_err_set(e, path, 0, "missing 'gemm %s' line", tps_gemm_par_names[t]); goto out; }
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
