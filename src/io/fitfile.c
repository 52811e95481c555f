/* fitfile.c: the saved fit (format in fitfile.h): its writer, its names, and its place in the
 * one loader (src/io/measure.h).  The reader: fitfile_read.c. */
#include "config.h"
#include "src/io/fitfile.h"
#include "src/io/fitfile_int.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "src/io/measure.h"
#include "src/io/table.h"
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

const char *const tps_fitfile_stat_names[TPS_FITFILE_NSTAT] = {
    "dof", "chi2", "t975", "median_abs_rel", "max_abs_rel", "rms_rel", "loo_median_abs", "loo_max_abs", "loo_failed",
    "iterations", "rcond"};

size_t tps_fitfile_ag_fields(tps_fit *f, tps_fitfile_field *out) {
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

/* The stats in tps_fitfile_stat_names order: whole numbers through wi, the others through wd. */
void tps_fitfile_stats(tps_fit *f, int *wi[TPS_FITFILE_NSTAT], double *wd[TPS_FITFILE_NSTAT]) {
  for (int i = 0; i < TPS_FITFILE_NSTAT; i++) { wi[i] = NULL; wd[i] = NULL; }
  wi[0] = &f->dof; wd[1] = &f->chi2; wd[2] = &f->tq; wd[3] = &f->med_abs_rel; wd[4] = &f->max_abs_rel;
  wd[5] = &f->rms_rel; wd[6] = &f->loo_med_abs; wd[7] = &f->loo_max_abs; wi[8] = &f->loo_failed;
  wi[9] = &f->iterations; wd[10] = &f->rcond;
}

/* ------------------------------------------------------------------ writing
 * One canonical form: the keys in this order, two-space indent, one array element a line,
 * numbers in their shortest form that reads back to the same double (tps_fmt_num; 0 for
 * -0), null for NaN, strings escaped as jansson escapes them (bytes that are not UTF-8, which
 * only a file name or a command line can bring, written as '?'). */
static void put_num(FILE *fp, double x) {
  char b[64];
  if (!isfinite(x)) { fputs("null", fp); return; }
  if (x == 0) { fputs("0", fp); return; }
  tps_fmt_num(b, sizeof b, x);
  fputs(b, fp);
}

static void put_str(FILE *fp, const char *s) {
  size_t n = strlen(s);
  char *c = malloc(n + 1);
  if (!c) { fputs("\"\"", fp); return; }
  memcpy(c, s, n + 1);
  for (size_t at; (at = tps_utf8_check(c, n)) < n;) c[at] = '?';
  json_t *j = json_string(c);
  char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
  fputs(d ? d : "\"\"", fp);
  free(d);
  json_decref(j);
  free(c);
}

static void put_key_num(FILE *fp, const char *ind, const char *k, double x, int last) {
  fprintf(fp, "%s\"%s\": ", ind, k);
  put_num(fp, x);
  fputs(last ? "\n" : ",\n", fp);
}

static void write_head(FILE *fp, const tps_fit *f, const tps_fitfile_prov *pv) {
  fprintf(fp, "{\n  \"format\": \"tpsplit-fit\",\n  \"schema_version\": %d,\n  \"written_by\": ", TPS_FITFILE_VERSION);
  put_str(fp, pv && pv->written_by ? pv->written_by : "tpsplit");
  fputs(",\n  \"sources\": [", fp);
  for (size_t i = 0; pv && i < pv->nsources; i++) {
    fputs(i ? ",\n    " : "\n    ", fp);
    put_str(fp, pv->sources[i]);
  }
  fputs(pv && pv->nsources ? "\n  ],\n" : "],\n", fp);
  fprintf(fp, "  \"kind\": \"%s\",\n  \"gpu\": ", tps_fit_kind_name(f->kind));
  put_str(fp, f->gpu);
  fputs(",\n  \"path\": ", fp);
  if (f->gemm.path) put_str(fp, f->gemm.path->name); else fputs("null", fp);
  fprintf(fp, ",\n  \"sms\": %d,\n  \"tp\": %d,\n  \"k\": %ld,\n  \"n\": %ld,\n", f->gemm.sms, f->tp, f->shape.k, f->shape.n);
  put_key_num(fp, "  ", "out_bytes", f->shape.out_bytes, 0);
  put_key_num(fp, "  ", "out_bytes_per_token", f->out_bytes_per_token, 0);
  fprintf(fp, "  \"gather_mode\": \"%s\",\n", tps_gather_name(f->gather));
}

static void write_models(FILE *fp, tps_fit *f) {
  fputs("  \"gemm\": {\n", fp);
  for (int j = 0; j < TPS_GEMM_NPAR; j++) put_key_num(fp, "    ", tps_gemm_par_names[j], f->gemm.p[j], j == TPS_GEMM_NPAR - 1);
  fprintf(fp, "  },\n  \"ag\": {\n    \"ranks\": %d,\n    \"ranks_per_node\": %d,\n", f->ag.ranks, f->ag.ranks_per_node);
  tps_fitfile_field af[32];
  size_t naf = tps_fitfile_ag_fields(f, af);
  for (size_t i = 0; i < naf; i++) put_key_num(fp, "    ", af[i].name, *af[i].v, i + 1 == naf);
  fputs("  },\n  \"fixed\": ", fp);
  put_str(fp, f->fixed_note);
  fputs(",\n", fp);
}

static void write_params(FILE *fp, const tps_fit *f) {
  fputs("  \"params\": [", fp);
  for (int j = 0; j < f->npar; j++) {
    fprintf(fp, "%s{\"name\": \"%s\", \"value\": ", j ? ",\n    " : "\n    ", f->par_name[j]);
    put_num(fp, f->theta[j]);
    fputs(", \"se\": ", fp); put_num(fp, f->se[j]);
    fputs(", \"lo95\": ", fp); put_num(fp, f->lo95[j]);
    fputs(", \"hi95\": ", fp); put_num(fp, f->hi95[j]);
    fputs("}", fp);
  }
  fputs(f->npar ? "\n  ],\n  \"cov\": [" : "],\n  \"cov\": [", fp);
  for (int a = 0; a < f->npar; a++) {
    fputs(a ? ",\n    [" : "\n    [", fp);
    for (int b = 0; b < f->npar; b++) {
      if (b) fputs(", ", fp);
      put_num(fp, f->cov[a * f->npar + b]);
    }
    fputs("]", fp);
  }
  fputs(f->npar ? "\n  ],\n" : "],\n", fp);
}

static void write_points(FILE *fp, const tps_fit *f) {
  fputs("  \"points\": [", fp);
  for (size_t i = 0; i < f->npts; i++) {
    const tps_fit_point *p = &f->pt[i];
    fprintf(fp, "%s{\"series\": \"%s\", \"x\": ", i ? ",\n    " : "\n    ", tps_fit_series_name(f, p->series));
    put_num(fp, p->x);
    fputs(", \"measured_us\": ", fp); put_num(fp, p->measured_us);
    fputs(", \"model_us\": ", fp); put_num(fp, p->model_us);
    fputs(", \"rel_resid\": ", fp); put_num(fp, p->rel_resid);
    fputs(", \"loo_rel\": ", fp); put_num(fp, p->loo_rel);
    fputs(", \"gather_us\": ", fp); put_num(fp, p->gather_us);
    fputs(", \"gather_se_us\": ", fp); put_num(fp, p->gather_se_us);
    fputs(", \"backend\": ", fp);
    if (p->backend >= 0) fprintf(fp, "\"%s\"}", tps_gather_name(p->backend)); else fputs("null}", fp);
  }
  fputs(f->npts ? "\n  ],\n" : "],\n", fp);
}

static void write_stats(FILE *fp, tps_fit *f) {
  int *wi[TPS_FITFILE_NSTAT];
  double *wd[TPS_FITFILE_NSTAT];
  tps_fitfile_stats(f, wi, wd);
  fputs("  \"stats\": {\n", fp);
  for (int i = 0; i < TPS_FITFILE_NSTAT; i++) {
    const char *sep = i + 1 == TPS_FITFILE_NSTAT ? "\n" : ",\n";
    if (wi[i]) fprintf(fp, "    \"%s\": %d%s", tps_fitfile_stat_names[i], *wi[i], sep);
    else put_key_num(fp, "    ", tps_fitfile_stat_names[i], *wd[i], i + 1 == TPS_FITFILE_NSTAT);
  }
  fputs("  }\n}\n", fp);
}

int tps_fitfile_write_prov(FILE *fp, const tps_fit *fc, const tps_fitfile_prov *pv) {
  tps_fit *f = (tps_fit *)fc; /* the field tables take pointers; nothing is written through them here */
  write_head(fp, f, pv);
  write_models(fp, f);
  write_params(fp, f);
  write_points(fp, f);
  write_stats(fp, f);
  return ferror(fp) ? -1 : 0;
}

int tps_fitfile_write(FILE *fp, const tps_fit *f, const char *const *sources, size_t nsources) {
  tps_fitfile_prov pv = {(char *)(tps_cmdline()[0] ? tps_cmdline() : "tpsplit"), (char **)sources, nsources};
  return tps_fitfile_write_prov(fp, f, &pv);
}

int tps_fitfile_save(const char *path, const tps_fit *f, const char *const *sources, size_t nsources, tps_err *e) {
  tps_outfile o;
  if (tps_out_open(&o, path, e) != 0) return -1;
  tps_fitfile_write(o.fp, f, sources, nsources); /* a write error: the commit names it with its errno (exit 1) */
  return tps_out_commit(&o, e);
}

void tps_fitfile_prov_free(tps_fitfile_prov *pv) {
  free(pv->written_by);
  for (size_t i = 0; i < pv->nsources; i++) free(pv->sources[i]);
  free(pv->sources);
  memset(pv, 0, sizeof *pv);
}

/* ------------------------------------------------------------------ the loader's format (src/io/measure.h)
 * A JSON object naming "tpsplit-fit" near its start; or the old positional text form
 * (version 1: its first line that is not a comment is the format line; not its writer's
 * "# tpsplit fit file" comment, which a table may carry), claimed so that its reader refuses
 * it with the way to regenerate it. */
int tps_fitfile_sniff_old(const char *data, size_t len) {
  const char *p = data, *end = data + len;
  if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (n > 0 && p[0] != '#') return n >= 18 && strncmp(p, "format\ttpsplit-fit", 18) == 0;
    p = nl ? nl + 1 : end;
  }
  return 0;
}

static int fit_sniff(const char *data, size_t len) {
  size_t k = 0;
  while (k < len && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n')) k++;
  if (k < len && data[k] == '{') {
    size_t n = len - k < 4096 ? len - k : 4096;
    static const char mark[] = "\"tpsplit-fit\"";
    for (size_t i = k; i + sizeof mark - 1 <= k + n; i++)
      if (memcmp(data + i, mark, sizeof mark - 1) == 0) return 1;
    return 0;
  }
  return tps_fitfile_sniff_old(data, len);
}

int tps_fitfile_is_fit(const char *path) {
  tps_buf b;
  tps_err e;
  tps_err_clear(&e);
  if (tps_buf_read(path, &b, &e)) return 0;
  int fit = fit_sniff(b.data, b.len);
  tps_buf_free(&b);
  return fit;
}

static int fit_read(const char *path, const char *data, size_t len, const tps_aic_filter *sel, tps_meas *m, tps_err *e) {
  (void)sel;
  m->kind = TPS_MEAS_FIT;
  if (!(m->fit = malloc(sizeof *m->fit))) return tps_err_oom(e, "reading %s", path);
  return tps_fitfile_read_mem(path, data, len, m->fit, e);
}

const tps_format tps_format_fitfile = {"fitfile", TPS_MEAS_FIT, fit_sniff, fit_read};
