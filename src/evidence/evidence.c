/* evidence.c: the part set (tps_partset): the bundled files it reads once (data/xgpu.fit,
 * data/parts.tsv, the measurements they name), the user's --gemm and --gather files, and the
 * measured points of a part from each kind of file; see evidence.h.  Resolving the parts and
 * the contexts made of them: evidence_resolve.c; the grid prepared and the sources printed:
 * evidence_use.c. */
#include "config.h"
#include <gsl/gsl_sort_int.h>
#include "src/evidence/ev_int.h"
#include "src/base/exit.h"

/* ------------------------------------------------------------------ reading */
/* The next line of b from *pos into line[sz], without its end: 1, 0 at the end of b, -1 for a
 * line of sz bytes or more (refused, not cut) or a NUL byte in it. */
static int next_line(const tps_buf *b, size_t *pos, char *line, size_t sz) {
  if (*pos >= b->len) return 0;
  const char *p = b->data + *pos, *q = memchr(p, '\n', b->len - *pos);
  size_t n = q ? (size_t)(q - p) : b->len - *pos;
  *pos += n + (q != NULL);
  if (n >= sz || memchr(p, '\0', n)) return -1;
  memcpy(line, p, n);
  line[n] = 0;
  return 1;
}

static int read_xgpu(tps_partset *ps, tps_err *e) {
  if (tps_data_path(TPS_XGPU_FIT, ps->xgpu_file, sizeof ps->xgpu_file, e)) return -1;
  tps_xgpu_file *x = malloc(sizeof *x);
  if (!x) return tps_err_oom(e, "reading %s", ps->xgpu_file);
  int rc = tps_xgpu_read(ps->xgpu_file, x, e); /* src/io/xgpufile.c: JSON, bounded, canonical */
  if (!rc) {
    memcpy(ps->xg, x->xg, (size_t)x->nxg * sizeof *ps->xg);
    ps->nxg = x->nxg;
    memcpy(ps->xa, x->xa, (size_t)x->nxa * sizeof *ps->xa);
    ps->nxa = x->nxa;
    ps->have_w8 = x->have_w8;
    cpy(ps->w8_gpu, sizeof ps->w8_gpu, x->w8_gpu);
    cpy(ps->w8_file, sizeof ps->w8_file, x->w8_file);
    ps->w8_sigma = x->w8_sigma;
    ps->w8 = x->w8;
  }
  free(x);
  return rc;
}

/* A row's selector as the header allows it: '-', 'replicated' or 'gather' (a split table), or
 * KEY=VALUE,... of AIConfigurator rows: dtype (a kernel path's, the row's own for a gemm row),
 * backend (gemm), op (gather).  0, or -1 with e naming FILE:LINE. */
static int check_sel(const char *file, long ln, const prow *r, const char *sel, tps_err *e) {
  if (!strcmp(sel, "-")) return 0;
  if (!strcmp(sel, "replicated") || !strcmp(sel, "gather")) {
    if (r->gather != (sel[0] == 'g')) return tps_err_set(e, file, ln, "selector '%s' on a %s row", sel, r->gather ? "gather" : "gemm");
    return 0;
  }
  char buf[128], *save = NULL, dt[32] = "";
  cpy(buf, sizeof buf, sel);
  for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq || eq == kv || !eq[1]) return tps_err_set(e, file, ln, "selector '%s': want KEY=VALUE,... or -", sel);
    *eq = 0;
    const char *k = kv, *v = eq + 1;
    if (!r->gather && !strcmp(k, "dtype")) cpy(dt, sizeof dt, v);
    else if (!(!r->gather && !strcmp(k, "backend")) && !(r->gather && !strcmp(k, "op")))
      return tps_err_set(e, file, ln, "selector key '%s' on a %s row (%s)", k, r->gather ? "gather" : "gemm",
                         r->gather ? "op" : "dtype, backend");
  }
  if (!r->gather && dtype_path(dt) != r->path)
    return tps_err_set(e, file, ln, "selector '%s' picks %s rows, not the row's %s path (dtype=%s)", sel, dt[0] ? dt : "every dtype's",
                       r->path->name, r->path->aic_dtype && r->path->aic_dtype[0] ? r->path->aic_dtype : "?");
  return 0;
}

static int read_parts(tps_partset *ps, tps_err *e) {
  if (tps_data_path(TPS_PARTS_TABLE, ps->parts_file, sizeof ps->parts_file, e)) return -1;
  tps_buf b;
  if (tps_buf_read(ps->parts_file, &b, e)) return -1;
  char line[2048];
  long ln = 0;
  int hdr = 0, rc = 0, got;
  size_t pos = 0;
  while (!rc && (got = next_line(&b, &pos, line, sizeof line)) != 0) {
    ln++;
    if (got < 0) { rc = tps_err_set(e, ps->parts_file, ln, "line of %zu bytes or more, or with a NUL byte", sizeof line); break; }
    line[strcspn(line, "\n")] = 0;
    if (strchr(line, '\r')) { rc = tps_err_set(e, ps->parts_file, ln, "CRLF line ends (or a carriage return): save with LF"); break; }
    if (!line[0] || line[0] == '#') continue;
    char *f[8];
    int nf = 0;
    for (char *s = line, *t; nf < 8; s = t + 1) {
      f[nf++] = s;
      if (!(t = strchr(s, '\t'))) break;
      *t = 0;
    }
    if (!hdr) {
      if (nf != 6 || strcmp(f[0], "gpu") || strcmp(f[1], "part")) rc = tps_err_set(e, ps->parts_file, ln, "header must be gpu part what tp file selector");
      hdr = 1;
      continue;
    }
    if (nf != 6) { rc = tps_err_set(e, ps->parts_file, ln, "%d fields, want 6", nf); break; }
    if ((rc = tps_text_blank_cells(ps->parts_file, ln, f, (size_t)nf, 0, e))) break;
    if (ps->nrows == MAXROWS) { rc = tps_err_set(e, ps->parts_file, ln, "more than %d rows", MAXROWS); break; }
    prow *r = &ps->rows[ps->nrows];
    memset(r, 0, sizeof *r);
    r->line = ln;
    tps_err e2;
    tps_err_clear(&e2);
    if (!(r->gpu = tps_gpus_find(ps->gt, f[0], &e2))) { /* the table the user gave lacks it: name that file */
      rc = ps->gt->file[0] ? tps_err_set(e, ps->gt->file, 0, "no GPU '%s', which the bundled measurements need (%s:%ld): add "
                                         "its row to this GPU table, or give --no-bundled (%s)", f[0], ps->parts_file, ln, e2.msg)
                           : tps_err_set(e, ps->parts_file, ln, "%s", e2.msg);
      break;
    }
    if (!strcmp(f[1], "gemm")) {
      if (!(r->path = tps_path_find(f[2]))) { rc = tps_err_set(e, ps->parts_file, ln, "unknown kernel path '%s'", f[2]); break; }
    } else if (!strcmp(f[1], "gather")) {
      r->gather = 1;
      if ((r->backend = tps_gather_parse(f[2])) < 0) { rc = tps_err_set(e, ps->parts_file, ln, "unknown gather backend '%s'", f[2]); break; }
      double tv[8];
      size_t nt;
      if (tps_parse_numbers(f[3], tv, 8, &nt, 1, 64, 1) != 0) { rc = tps_err_set(e, ps->parts_file, ln, "bad tp list '%s'", f[3]); break; }
      for (size_t i = 0; i < nt; i++) r->tps[i] = (int)tv[i];
      r->ntp = (int)nt;
    } else {
      rc = tps_err_set(e, ps->parts_file, ln, "part '%s': want gemm or gather", f[1]);
      break;
    }
    if ((rc = check_sel(ps->parts_file, ln, r, f[5], e))) break;
    cpy(r->file, sizeof r->file, f[4]);
    cpy(r->sel, sizeof r->sel, strcmp(f[5], "-") ? f[5] : "");
    for (int i = 0; i < ps->nrows && !rc; i++) {
      const prow *q = &ps->rows[i];
      if (q->gpu == r->gpu && q->gather == r->gather && q->path == r->path && q->backend == r->backend &&
          !strcmp(q->file, r->file) && !strcmp(q->sel, r->sel))
        rc = tps_err_set(e, ps->parts_file, ln, "the same part as line %ld", q->line);
    }
    if (rc) break;
    ps->nrows++;
  }
  tps_buf_free(&b);
  if (!rc && !hdr) rc = tps_err_set(e, ps->parts_file, 0, "no header");
  return rc;
}

/* A file read once per set (path as found). */
int ev_load_file(tps_partset *ps, const char *path, int bundled, loaded **out, tps_err *e) {
  for (int i = 0; i < ps->nlf; i++)
    if (!strcmp(ps->lf[i]->path, path)) { *out = ps->lf[i]; return 0; }
  if (ps->nlf == MAXLOADED) return tps_err_set(e, path, 0, "too many files");
  loaded *l = calloc(1, sizeof *l);
  if (!l) return tps_err_oom(e, "reading %s", path);
  cpy(l->path, sizeof l->path, path);
  cpy(l->name, sizeof l->name, bundled ? shown(path) : path);
  if (tps_meas_load(path, NULL, &l->m, e)) { free(l); return -1; } /* the one loader: sniffed, read, normalized */
  ps->lf[ps->nlf++] = l;
  *out = l;
  return 0;
}

static void loaded_free(loaded *l) {
  if (!l) return;
  tps_meas_free(&l->m);
  free(l);
}

/* The GPU a file says it measured. */
static const tps_gpu *file_gpu(const tps_partset *ps, const loaded *l, tps_err *e) {
  char name[64];
  tps_err e2;
  tps_err_clear(&e2);
  const char *g = l->m.kind == TPS_MEAS_AIC ? tps_aic_gpu_name(l->m.aic.gpu, name, sizeof name) : l->m.kind == TPS_MEAS_FIT ? l->m.fit->gpu : l->m.tab.gpu;
  if (!g || !g[0]) {
    tps_err_set(e, l->name, 0, "names no GPU (a '#@ gpu:' line): which GPU was measured?");
    return NULL;
  }
  const tps_gpu *gp = tps_gpus_find(ps->gt, g, &e2);
  if (!gp) tps_err_set(e, l->name, l->m.kind == TPS_MEAS_TABLE ? l->m.tab.gpu_line : 0, "its GPU: %s", e2.msg);
  return gp;
}

int ev_load_row(tps_partset *ps, const prow *r, loaded **out, tps_err *e) {
  char full[4096];
  if (tps_data_path(r->file, full, sizeof full, e) || ev_load_file(ps, full, 1, out, e)) return -1;
  const loaded *l = *out;
  tps_err e2;
  tps_err_clear(&e2);
  const tps_gpu *g = file_gpu(ps, l, &e2);
  if (!g) return tps_err_set(e, ps->parts_file, r->line, "%s", e2.msg);
  if (!SAME(g, r->gpu))
    return tps_err_set(e, ps->parts_file, r->line, "%s measured %s, not the row's %s", l->name, g->name, r->gpu->name);
  const tps_path *tp = !r->gather && l->m.kind == TPS_MEAS_TABLE && l->m.tab.kpath[0] ? tps_path_find(l->m.tab.kpath) : NULL;
  if (tp && tp != r->path)
    return tps_err_set(e, ps->parts_file, r->line, "%s measures the %s path, not the row's %s", l->name, tp->name, r->path->name);
  return 0;
}

/* ------------------------------------------------------------------ measured curves */

void ev_pts_free(pts *p) { free(p->x); free(p->t); memset(p, 0, sizeof *p); }
int ev_pts_alloc(pts *p, size_t n) {
  memset(p, 0, sizeof *p);
  p->x = malloc((n ? n : 1) * sizeof *p->x);
  p->t = malloc((n ? n : 1) * sizeof *p->t);
  p->lo = -1;
  return p->x && p->t ? 0 : -1;
}
void ev_pts_line(pts *p, long ln) {
  if (ln <= 0) return;
  if (p->lo < 0 || ln < p->lo) p->lo = ln;
  if (ln > p->hi) p->hi = ln;
}

/* sort by x; equal x: geometric mean */
static void pts_sort_mean(pts *p) {
  for (size_t i = 1; i < p->n; i++)
    for (size_t j = i; j > 0 && p->x[j] < p->x[j - 1]; j--) {
      double a = p->x[j]; p->x[j] = p->x[j - 1]; p->x[j - 1] = a;
      a = p->t[j]; p->t[j] = p->t[j - 1]; p->t[j - 1] = a;
    }
  size_t o = 0;
  for (size_t i = 0; i < p->n;) {
    size_t j = i;
    double s = 0;
    while (j < p->n && p->x[j] == p->x[i]) s += log(p->t[j++]);
    p->x[o] = p->x[i];
    p->t[o] = exp(s / (double)(j - i));
    o++;
    i = j;
  }
  p->n = o;
}

/* AIC GEMM rows of (dtype, backend, k) at n: measured, or log-linear in n between the
 * measured n either side at every m measured at both. */
int ev_aic_gemm_pts(const loaded *l, const char *dtype, const char *backend, long k, long n, pts *out, tps_err *e) {
  const tps_aic_file *a = &l->m.aic;
  if (a->kind != TPS_AIC_GEMM) return tps_err_set(e, l->name, 0, "an AIConfigurator NCCL table, not a GEMM table");
  long nlo = 0, nhi = 0, kany[16];
  int nk = 0, have_dt = 0;
  char ns[512] = "";
  for (size_t i = 0; i < a->nrows; i++) {
    const tps_aic_gemm_row *r = &a->g[i];
    if (strcmp(r->dtype, dtype) || (backend[0] && strcmp(r->backend, backend))) continue;
    have_dt = 1;
    int seen = 0;
    for (int j = 0; j < nk; j++) seen |= kany[j] == r->k;
    if (!seen && nk < 16) kany[nk++] = r->k;
    if (r->k != k) continue;
    if (r->n <= n && r->n > nlo) nlo = r->n;
    if (r->n >= n && (!nhi || r->n < nhi)) nhi = r->n;
  }
  if (!have_dt)
    return tps_err_set(e, l->name, 0, "no rows with dtype %s%s%s", dtype, backend[0] ? " and backend " : "", backend);
  if (!nlo || !nhi) {
    if (nk && !(nlo || nhi)) {
      int hk = 0;
      for (int j = 0; j < nk; j++) hk |= kany[j] == k;
      if (!hk) {
        char ks[256] = "";
        for (int j = 0; j < nk; j++) catf(ks, sizeof ks, "%s%ld", j ? ", " : "", kany[j]);
        return tps_err_set(e, l->name, 0, "no rows with dtype %s, k %ld (k in the file: %s)", dtype, k, ks);
      }
    }
    long seen[64];
    int nsn = 0;
    for (size_t i = 0; i < a->nrows && nsn < 64; i++) {
      const tps_aic_gemm_row *r = &a->g[i];
      if (strcmp(r->dtype, dtype) || r->k != k || (backend[0] && strcmp(r->backend, backend))) continue;
      int s = 0;
      for (int j = 0; j < nsn; j++) s |= seen[j] == r->n;
      if (!s) { seen[nsn++] = r->n; catf(ns, sizeof ns, "%s%ld", nsn > 1 ? ", " : "", r->n); }
    }
    return tps_err_set(e, l->name, 0, "no rows with dtype %s, k %ld, n %ld, nor measured n on both sides of it (n in the file: %s)",
                       dtype, k, n, ns);
  }
  if (ev_pts_alloc(out, a->nrows)) return tps_err_set(e, l->name, 0, "out of memory");
  double w = nlo == nhi ? 0.0 : log((double)n / nlo) / log((double)nhi / nlo);
  const char *ver = "", *be = "";
  for (size_t i = 0; i < a->nrows; i++) {
    const tps_aic_gemm_row *r = &a->g[i];
    if (strcmp(r->dtype, dtype) || r->k != k || r->n != nlo || (backend[0] && strcmp(r->backend, backend))) continue;
    double t2 = NAN;
    long l2 = 0;
    if (nhi != nlo) {
      for (size_t j = 0; j < a->nrows; j++) {
        const tps_aic_gemm_row *q = &a->g[j];
        if (q->n == nhi && q->m == r->m && q->k == k && !strcmp(q->dtype, dtype) && !strcmp(q->backend, r->backend)) {
          t2 = q->latency_us;
          l2 = q->line;
          break;
        }
      }
      if (isnan(t2)) continue;
    }
    out->x[out->n] = (double)r->m;
    out->t[out->n] = nhi == nlo ? r->latency_us : exp(log(r->latency_us) + w * (log(t2) - log(r->latency_us)));
    out->n++;
    ev_pts_line(out, r->line);
    ev_pts_line(out, l2);
    ver = r->version;
    be = r->backend;
  }
  pts_sort_mean(out);
  if (out->n < 2) { ev_pts_free(out); return tps_err_set(e, l->name, 0, "fewer than 2 rows with dtype %s, k %ld at n %ld", dtype, k, n); }
  if (nlo == nhi)
    snprintf(out->how, sizeof out->how, "AIConfigurator %s %s, dtype %s, K %ld N %ld, M %.0f..%.0f", be, ver, dtype, k, n, out->x[0],
             out->x[out->n - 1]);
  else
    snprintf(out->how, sizeof out->how, "AIConfigurator %s %s, dtype %s, K %ld, N %ld and %ld interpolated log-linearly to %ld, M %.0f..%.0f",
             be, ver, dtype, k, nlo, nhi, n, out->x[0], out->x[out->n - 1]);
  return 0;
}

/* AIC NCCL all_gather rows at num_gpus = tp (dtypes averaged: geometric mean per size). */
int ev_aic_gather_pts(const loaded *l, int tp, pts *out, tps_err *e) {
  const tps_aic_file *a = &l->m.aic;
  if (a->kind != TPS_AIC_NCCL) return tps_err_set(e, l->name, 0, "an AIConfigurator GEMM table, not an NCCL table");
  if (ev_pts_alloc(out, a->nrows)) return tps_err_set(e, l->name, 0, "out of memory");
  char gs[128] = "", ver[16] = "";
  int seen[32], nseen = 0, any = 0;
  for (size_t i = 0; i < a->nrows; i++) {
    const tps_aic_nccl_row *r = &a->c[i];
    if (strcmp(r->op, "all_gather")) continue;
    any = 1;
    int s = 0;
    for (int j = 0; j < nseen; j++) s |= seen[j] == r->num_gpus;
    if (!s && nseen < 32) { seen[nseen++] = r->num_gpus; catf(gs, sizeof gs, "%s%d", nseen > 1 ? ", " : "", r->num_gpus); }
    if (r->num_gpus != tp) continue;
    out->x[out->n] = r->bytes;
    out->t[out->n] = r->latency_us;
    out->n++;
    ev_pts_line(out, r->line);
    cpy(ver, sizeof ver, r->nccl_version);
  }
  if (!any) { ev_pts_free(out); return tps_err_set(e, l->name, 0, "no rows with op all_gather (a gather needs all_gather rows)"); }
  if (out->n < 2) {
    ev_pts_free(out);
    return tps_err_set(e, l->name, 0, "no rows with op all_gather, num_gpus %d (num_gpus in the file: %s)", tp, gs);
  }
  pts_sort_mean(out);
  char b0[32], b1[32];
  fmt_bytes(b0, sizeof b0, out->x[0]);
  fmt_bytes(b1, sizeof b1, out->x[out->n - 1]);
  snprintf(out->how, sizeof out->how, "nccl-tests all_gather via AIConfigurator, NCCL %s, %d GPUs, %s..%s (dtypes averaged)", ver, tp, b0, b1);
  return 0;
}

/* A GEMM table (rows, time_us) or a split table's replicated column, at (k, n, path). */
int ev_table_gemm_pts(const loaded *l, const tps_path *path, long k, long n, pts *out, int strict, tps_err *e) {
  const tps_table *t = &l->m.tab;
  const char *f = l->name;
  if (t->kind != TPS_TABLE_GEMM && t->kind != TPS_TABLE_SPLIT)
    return tps_err_set(e, f, 0, "an all-gather table, not a GEMM measurement");
  if ((t->k && t->k != k) || (t->n && t->n != n)) {
    if (!strict) return 1;
    return tps_err_set(e, f, 0, "measures K %ld N %ld, not the asked K %ld N %ld (--k, --n)", t->k, t->n, k, n);
  }
  if (!t->k || !t->n) return tps_err_set(e, f, 0, "names no shape ('#@ k:' and '#@ n:' lines)");
  const tps_path *tp = t->kpath[0] ? tps_path_find(t->kpath) : NULL;
  if (!tp) return tps_err_set(e, f, 0, "names no kernel path ('#@ path:' line)");
  if (tp != path) {
    if (!strict) return 1;
    return tps_err_set(e, f, 0, "measures the %s path, not %s", tp->name, path->name);
  }
  size_t nr = t->nrows;
  if (ev_pts_alloc(out, nr)) return tps_err_set(e, f, 0, "out of memory");
  for (size_t i = 0; i < nr; i++) {
    out->x[out->n] = (double)(t->kind == TPS_TABLE_GEMM ? t->rows[i] : t->tokens[i]);
    out->t[out->n] = t->kind == TPS_TABLE_GEMM ? t->time_us[i] : t->replicated_us[i];
    out->n++;
    ev_pts_line(out, t->line[i]);
  }
  if (out->n < 2) { ev_pts_free(out); return tps_err_set(e, f, 0, "fewer than 2 rows"); }
  snprintf(out->how, sizeof out->how, "%s, %s K %ld N %ld, rows %.0f..%.0f",
           t->kind == TPS_TABLE_GEMM ? "tpsplit bench gemm table" : "the replicated column of a split table (rows = tokens)",
           path->name, k, n, out->x[0], out->x[out->n - 1]);
  return 0;
}

/* The measured gather of a split table at its TP: split(T) - replicated(ceil(T/TP)) (the
 * replicated column interpolated in log-log, held at its first value below its rows). */
static int split_gather_pts(const loaded *l, pts *out, tps_err *e) {
  const tps_table *t = &l->m.tab;
  const char *f = l->name;
  if (t->tp < 2) return tps_err_set(e, f, 0, "a split table without '#@ tp:' >= 2 has no gather");
  tps_mcurve *rep = NULL;
  double *x = malloc(t->nrows * sizeof *x);
  if (!x || ev_pts_alloc(out, t->nrows)) { free(x); return tps_err_set(e, f, 0, "out of memory"); }
  for (size_t i = 0; i < t->nrows; i++) x[i] = (double)t->tokens[i];
  rep = tps_mcurve_alloc(x, t->replicated_us, t->nrows);
  free(x);
  if (!rep) { ev_pts_free(out); return tps_err_set(e, f, 0, "cannot interpolate its replicated column"); }
  for (size_t i = 0; i < t->nrows; i++) {
    double rows = ceil((double)t->tokens[i] / t->tp), lo = tps_mcurve_xlo(rep);
    double g = t->split_us[i] - tps_mcurve_eval(rep, rows < lo ? lo : rows);
    if (!(g > 0)) {
      tps_mcurve_free(rep);
      ev_pts_free(out);
      return tps_err_set(e, f, t->line[i], "split %.4g us is not above the replicated GEMM of %.0f rows: no gather left", t->split_us[i], rows);
    }
    out->x[out->n] = (double)t->tp * rows * t->out_bytes_per_token;
    out->t[out->n++] = g;
    ev_pts_line(out, t->line[i]);
  }
  tps_mcurve_free(rep);
  if (!(t->out_bytes_per_token > 0)) { ev_pts_free(out); return tps_err_set(e, f, 0, "names no '#@ out_bytes_per_token:'"); }
  snprintf(out->how, sizeof out->how, "split - replicated(ceil(T/%d)) of a split table, %s gather, T %ld..%ld", t->tp,
           t->gather[0] ? t->gather : "auto", t->tokens[0], t->tokens[t->nrows - 1]);
  return 0;
}

/* An all-gather table or log at ranks = tp. */
int ev_table_gather_pts(const loaded *l, int tp, pts *out, tps_err *e) {
  const tps_table *t = &l->m.tab;
  const char *f = l->name;
  if (t->kind == TPS_TABLE_SPLIT) return split_gather_pts(l, out, e);
  if (t->kind != TPS_TABLE_ALLGATHER) return tps_err_set(e, f, 0, "a GEMM table, not a gather measurement");
  if (t->ranks != tp) return tps_err_set(e, f, t->line[0], "measures %d ranks, not TP %d", t->ranks, tp);
  if (ev_pts_alloc(out, t->nrows)) return tps_err_set(e, f, 0, "out of memory");
  for (size_t i = 0; i < t->nrows; i++) {
    out->x[out->n] = t->bytes[i];
    out->t[out->n++] = t->time_us[i];
    ev_pts_line(out, t->line[i]);
  }
  if (out->n < 2) { ev_pts_free(out); return tps_err_set(e, f, 0, "fewer than 2 rows"); }
  char b0[32], b1[32];
  fmt_bytes(b0, sizeof b0, out->x[0]);
  fmt_bytes(b1, sizeof b1, out->x[out->n - 1]);
  snprintf(out->how, sizeof out->how, "%s, %d ranks, %s..%s", !strcmp(t->source, "nccl-tests") ? "all_gather_perf log" : "all-gather table", tp, b0, b1);
  return 0;
}

/* ------------------------------------------------------------------ open, user files */
int ev_h20_fit(tps_partset *ps, tps_err *e) {
  if (ps->h20_state) return ps->h20_state > 0 ? 0 : -1;
  ps->h20_state = -1;
  ps->h20 = calloc(1, sizeof *ps->h20);
  if (!ps->h20) return tps_err_set(e, NULL, 0, "out of memory");
  int status;
  if (tps_bundled_fit(NULL, 0, ps->h20, ps->h20_file, sizeof ps->h20_file, &status, e)) return -1;
  tps_err e2;
  if (!(ps->h20_gpu = tps_gpus_find(ps->gt, ps->h20->gpu, &e2)))
    return ps->gt->file[0] ? tps_err_set(e, ps->gt->file, 0, "no GPU '%s', which the reference fit of %s needs: add its row to "
                                         "this GPU table (%s)", ps->h20->gpu, ps->h20_file, e2.msg)
                           : tps_err_set(e, ps->h20_file, 0, "%s", e2.msg);
  ps->h20_state = 1;
  return 0;
}

int tps_partset_open(tps_partset **out, const tps_gpu_table *gt, const tps_partset_opts *o, tps_err *e) {
  tps_partset *ps = calloc(1, sizeof *ps);
  *out = NULL;
  if (!ps) return tps_err_set(e, NULL, 0, "out of memory");
  ps->gt = gt;
  if (o) ps->o = *o;
  if (ps->o.tmax < 1) ps->o.tmax = TPS_PRED_DEFAULT_TMAX;
  if (ps->o.k < 1) ps->o.k = TPS_PRED_DEFAULT_K;
  if (ps->o.n < 1) ps->o.n = TPS_PRED_DEFAULT_N;
  pthread_mutex_init(&ps->lock, NULL);
  if (!(ps->cache = tps_partcache_alloc(ps->o.tmax))) { pthread_mutex_destroy(&ps->lock); free(ps); return tps_err_set(e, NULL, 0, "out of memory"); }
  if (read_xgpu(ps, e) || (!ps->o.no_bundled && read_parts(ps, e))) { tps_partset_free(ps); return -1; }
  *out = ps;
  return 0;
}

void tps_partset_free(tps_partset *ps) {
  if (!ps) return;
  for (size_t i = 0; i < ps->nres; i++) {
    if (ps->res[i]) tps_part_free(&ps->res[i]->part);
    free(ps->res[i]);
    free(ps->key[i]);
  }
  free(ps->res);
  free(ps->key);
  tps_partcache_free(ps->cache);
  free(ps->used);
  for (int i = 0; i < ps->nlf; i++) loaded_free(ps->lf[i]);
  free(ps->h20);
  pthread_mutex_destroy(&ps->lock);
  free(ps);
}

/* "FILE[:sel]" -> the file and its AIC selection. */
int ev_split_spec(const char *spec, ufile *u, tps_err *e) {
  char *path;
  if (tps_aic_parse_spec(spec, &path, &u->sel, e)) return -1;
  cpy(u->path, sizeof u->path, path);
  free(path);
  cpy(u->spec, sizeof u->spec, spec);
  return 0;
}

int tps_partset_user_gemm(tps_partset *ps, const char *spec, const tps_path *hint, tps_err *e) {
  if (ps->nug == MAXUSER) return tps_err_set(e, spec, 0, "more than %d --gemm files", MAXUSER);
  ufile *u = &ps->ug[ps->nug];
  memset(u, 0, sizeof *u);
  if (ev_split_spec(spec, u, e) || ev_load_file(ps, u->path, 0, &u->lf, e)) return -1;
  loaded *l = u->lf;
  const char *f = l->name;
  if (!(u->gpu = file_gpu(ps, l, e))) return -1;
  if (l->m.kind == TPS_MEAS_AIC) {
    if (l->m.aic.kind != TPS_AIC_GEMM) return tps_err_set(e, f, 0, "an AIConfigurator NCCL table: give it to --gather");
    if (!u->sel.dtype[0] && (!hint || path_dtype(hint, u->sel.dtype, sizeof u->sel.dtype)))
      return tps_err_set(e, f, 0, "which dtype? give FILE:dtype=bfloat16 (dense-bf16), FILE:dtype=fp8 (native-fp8), "
                                     "fp8_block (fp8-block) or nvfp4 (nvfp4)");
    if (!(u->kpath = dtype_path(u->sel.dtype)))
      return tps_err_set(e, f, 0, "dtype %s is not a kernel path of tpsplit (bfloat16 = dense-bf16, fp8 = native-fp8, "
                         "fp8_block = fp8-block, nvfp4 = nvfp4)", u->sel.dtype);
    /* the dtype must be in the file */
    int any = 0;
    for (size_t i = 0; i < l->m.aic.nrows && !any; i++) any = !strcmp(l->m.aic.g[i].dtype, u->sel.dtype);
    if (!any) return tps_err_set(e, f, 0, "no rows with dtype %s", u->sel.dtype);
  } else if (l->m.kind == TPS_MEAS_FIT) {
    if (l->m.fit->kind == TPS_FIT_ALLGATHER) return tps_err_set(e, f, 0, "an all-gather fit has no GEMM: give it to --gather");
    u->kpath = l->m.fit->gemm.path;
  } else {
    if (l->m.tab.kind == TPS_TABLE_ALLGATHER) return tps_err_set(e, f, 0, "an all-gather measurement: give it to --gather");
    if (!(u->kpath = l->m.tab.kpath[0] ? tps_path_find(l->m.tab.kpath) : NULL))
      return tps_err_set(e, f, 0, "names no kernel path ('#@ path:' line)");
    u->from_split = l->m.tab.kind == TPS_TABLE_SPLIT;
  }
  if (!(u->kpath->flags & TPS_PATH_F_MODEL)) return tps_err_set(e, f, 0, "measures the %s path, which tpsplit cannot predict", u->kpath->name);
  for (int i = 0; i < ps->nug; i++)
    if (ps->ug[i].gpu == u->gpu && ps->ug[i].kpath == u->kpath)
      return tps_err_set(e, f, 0, "a second --gemm for %s %s (also %s)", u->gpu->name, u->kpath->name, ps->ug[i].spec);
  ps->nug++;
  return 0;
}

int tps_partset_user_gather(tps_partset *ps, const char *spec0, tps_err *e) {
  if (ps->nua == MAXUSER) return tps_err_set(e, spec0, 0, "more than %d --gather files", MAXUSER);
  ufile *u = &ps->ua[ps->nua];
  memset(u, 0, sizeof *u);
  int backend = -1;
  const char *spec = spec0, *eq = strchr(spec0, '=');
  if (eq && !strchr(spec0, ':')) { /* "custom=FILE" (a selection has ':' first) */
    char b[32];
    snprintf(b, sizeof b, "%.*s", (int)(eq - spec0 < 31 ? eq - spec0 : 31), spec0);
    if ((backend = tps_gather_parse(b)) >= 0) spec = eq + 1;
  } else if (eq && strchr(spec0, ':') > eq) {
    char b[32];
    snprintf(b, sizeof b, "%.*s", (int)(eq - spec0 < 31 ? eq - spec0 : 31), spec0);
    if ((backend = tps_gather_parse(b)) >= 0) spec = eq + 1;
  }
  if (ev_split_spec(spec, u, e) || ev_load_file(ps, u->path, 0, &u->lf, e)) return -1;
  loaded *l = u->lf;
  const char *f = l->name;
  if (!(u->gpu = file_gpu(ps, l, e))) return -1;
  int own = -1;
  if (l->m.kind == TPS_MEAS_AIC) {
    if (l->m.aic.kind != TPS_AIC_NCCL) return tps_err_set(e, f, 0, "an AIConfigurator GEMM table: give it to --gemm");
    if (u->sel.op[0] && strcmp(u->sel.op, "all_gather"))
      return tps_err_set(e, f, 0, "op %s is not an all-gather (a gather needs op=all_gather)", u->sel.op);
    own = tps_gather_fallback();
    for (size_t i = 0; i < l->m.aic.nrows; i++) {
      const tps_aic_nccl_row *r = &l->m.aic.c[i];
      if (strcmp(r->op, "all_gather")) continue;
      int s = 0;
      for (int j = 0; j < u->nranks; j++) s |= u->ranks[j] == r->num_gpus;
      if (!s && u->nranks < 16) u->ranks[u->nranks++] = r->num_gpus;
    }
    if (!u->nranks) return tps_err_set(e, f, 0, "no rows with op all_gather (a gather needs all_gather rows)");
  } else if (l->m.kind == TPS_MEAS_FIT) {
    if (l->m.fit->kind == TPS_FIT_GEMM) return tps_err_set(e, f, 0, "a GEMM fit has no gather: give it to --gemm");
    own = l->m.fit->gather;
    u->ranks[u->nranks++] = l->m.fit->tp > 0 ? l->m.fit->tp : l->m.fit->ag.ranks;
  } else {
    const tps_table *t = &l->m.tab;
    if (t->kind == TPS_TABLE_GEMM) return tps_err_set(e, f, 0, "a GEMM table: give it to --gemm");
    if (t->kind == TPS_TABLE_SPLIT) {
      if (t->tp < 2) return tps_err_set(e, f, 0, "a split table at TP %d has no gather", t->tp);
      u->from_split = 1;
      own = t->gather[0] && tps_gather_parse(t->gather) >= 0 ? tps_gather_parse(t->gather) : tps_gather_rule();
      u->ranks[u->nranks++] = t->tp;
    } else {
      own = l->m.tab.log_gather[0] && tps_gather_parse(l->m.tab.log_gather) >= 0 ? tps_gather_parse(l->m.tab.log_gather)
            : t->gather[0] && tps_gather_parse(t->gather) >= 0 ? tps_gather_parse(t->gather) : tps_gather_fallback();
      u->ranks[u->nranks++] = t->ranks;
    }
  }
  /* an nccl-tests log says nothing of the backend (a bench allgather log says it in its
   * '# Gather:' line): a backend named for it stands */
  int unsaid = l->m.kind == TPS_MEAS_TABLE && l->m.tab.kind == TPS_TABLE_ALLGATHER && !strcmp(l->m.tab.source, "nccl-tests") && !l->m.tab.log_gather[0];
  if (backend >= 0 && own >= 0 && backend != own && !unsaid)
    return tps_err_set(e, f, 0, "measures the %s gather, not %s", tps_gather_name(own), tps_gather_name(backend));
  u->backend = backend >= 0 ? backend : own;
  for (int i = 0; i < ps->nua; i++)
    if (ps->ua[i].gpu == u->gpu && ps->ua[i].backend == u->backend)
      for (int a = 0; a < ps->ua[i].nranks; a++)
        for (int b = 0; b < u->nranks; b++)
          if (ps->ua[i].ranks[a] == u->ranks[b])
            return tps_err_set(e, f, 0, "a second --gather for %s %s at %d ranks (also %s)", u->gpu->name, tps_gather_name(u->backend),
                               u->ranks[b], ps->ua[i].spec);
  ps->nua++;
  return 0;
}

int tps_partset_has_user(const tps_partset *ps) { return ps->nug + ps->nua > 0; }

size_t tps_partset_user_gpus(const tps_partset *ps, const tps_gpu **out, size_t max) {
  size_t n = 0;
  for (int k = 0; k < ps->nug + ps->nua; k++) {
    const tps_gpu *g = k < ps->nug ? ps->ug[k].gpu : ps->ua[k - ps->nug].gpu;
    int s = 0;
    for (size_t i = 0; i < n; i++) s |= out[i] == g;
    if (!s && n < max) out[n++] = g;
  }
  return n;
}

size_t tps_partset_user_paths(const tps_partset *ps, const tps_path **out, size_t max) {
  size_t n = 0;
  for (int k = 0; k < ps->nug; k++) {
    int s = 0;
    for (size_t i = 0; i < n; i++) s |= out[i] == ps->ug[k].kpath;
    if (!s && n < max) out[n++] = ps->ug[k].kpath;
  }
  return n;
}

size_t tps_partset_user_tps(const tps_partset *ps, int *out, size_t max) {
  size_t n = 0;
  for (int k = 0; k < ps->nua; k++)
    for (int j = 0; j < ps->ua[k].nranks; j++) {
      int s = 0, r = ps->ua[k].ranks[j];
      for (size_t i = 0; i < n; i++) s |= out[i] == r;
      if (!s && r >= 1 && r <= 64 && n < max) out[n++] = r;
    }
  gsl_sort_int(out, 1, n);
  return n;
}

int tps_partset_check_targets(const tps_partset *ps, const tps_gpu *const *gpus, size_t ngpu, const int *tps, size_t ntp,
                              const tps_path *const *paths, size_t npath, tps_err *e) {
  for (int k = 0; k < ps->nug + ps->nua; k++) {
    const ufile *u = k < ps->nug ? &ps->ug[k] : &ps->ua[k - ps->nug];
    int is_fit = u->lf->m.kind == TPS_MEAS_FIT, found = 0;
    for (size_t i = 0; i < ngpu; i++) found |= SAME(gpus[i], u->gpu);
    if (!found && !is_fit)
      return tps_err_set(e, u->path, 0, "measures %s, not the target%s%s", u->gpu->name, ngpu == 1 ? " " : "s",
                         ngpu == 1 ? gpus[0]->name : "");
    if (k < ps->nug) {
      found = 0;
      for (size_t i = 0; i < npath; i++) found |= paths[i] == u->kpath;
      if (!found && !is_fit)
        return tps_err_set(e, u->path, 0, "measures the %s path, not the asked %s%s", u->kpath->name,
                           npath == 1 ? paths[0]->name : "paths", npath == 1 ? " (--path)" : " (--paths)");
    } else if (!is_fit) {
      for (size_t i = 0; i < ntp; i++) {
        if (tps[i] == 1) continue;
        int has = 0;
        for (int j = 0; j < u->nranks; j++) has |= u->ranks[j] == tps[i];
        if (!has) {
          char rs[64] = "";
          for (int j = 0; j < u->nranks; j++) catf(rs, sizeof rs, "%s%d", j ? ", " : "", u->ranks[j]);
          return tps_err_set(e, u->path, 0, "no gather at TP %d (%s: %s)", tps[i],
                             u->lf->m.kind == TPS_MEAS_AIC ? "num_gpus in the file" : "ranks", rs);
        }
      }
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ the reference (evidence.h) */

int tps_predref_load(tps_predref *r, int scaling, const char *fit_file, const char *gpus_file, int *fit_failed,
                     tps_err *e) {
  memset(r, 0, sizeof *r);
  *fit_failed = 0;
  if (tps_gpus_load(gpus_file, &r->gpus, e) != 0) return -1;
  char bundled[4096];
  if (scaling == TPS_SCALING_MODEL) {
    if (fit_file) {
      if (tps_fitfile_read(fit_file, &r->fit, e) != 0) return -1;
      snprintf(r->fit_source, sizeof r->fit_source, "fit %s", fit_file);
    } else {
      int status;
      if (tps_bundled_fit(gpus_file, 0, &r->fit, bundled, sizeof bundled, &status, e) != 0) {
        *fit_failed = tps_status_exit(status) == TPS_EXIT_FAIL;
        return -1;
      }
      snprintf(r->fit_source, sizeof r->fit_source, "fit of %s", bundled);
    }
    if (r->fit.kind == TPS_FIT_ALLGATHER)
      return tps_err_set(e, fit_file, 0, "an all-gather fit has no GEMM: --fit needs a split fit (give it as --gather BACKEND=FIT)");
    if (r->fit.kind == TPS_FIT_GEMM) /* no gather and no output bytes a token: nothing to split by */
      return tps_err_set(e, fit_file, 0, "a GEMM fit (of a bench gemm table) has no all-gather: --fit needs a split fit "
                         "(of a split table); give a GEMM fit as --gemm FIT");
    tps_err e2;
    tps_err_clear(&e2);
    r->fit_gpu = tps_gpus_find(&r->gpus, r->fit.gpu, &e2);
    if (!r->fit_gpu) return tps_err_set(e, fit_file ? fit_file : bundled, 0, "the fit's GPU: %s", e2.msg);
    r->have_fit = 1;
  } else if (scaling == TPS_SCALING_PESSIMISTIC) {
    if (tps_data_path(TPS_BUNDLED_TABLE, bundled, sizeof bundled, e) != 0) return -1;
    if (tps_table_read(bundled, &r->table, e) != 0) return -1;
    r->have_table = 1;
    tps_table *t = &r->table;
    if (t->kind != TPS_TABLE_SPLIT || t->tp < 2 || !(t->out_bytes_per_token > 0) || t->k < 1 || t->n < 1)
      return tps_err_set(e, bundled, 0, "not a split table with tp, k, n and out_bytes_per_token metadata");
    tps_err e2;
    tps_err_clear(&e2);
    r->table_gpu = tps_gpus_find(&r->gpus, t->gpu, &e2);
    if (!r->table_gpu) return tps_err_set(e, bundled, 0, "%s", e2.msg);
    tps_split_data *d = &r->split;
    d->n = t->nrows;
    d->tokens = t->tokens;
    d->replicated_us = t->replicated_us;
    d->split_us = t->split_us;
    d->tp = t->tp;
    d->shape.k = t->k;
    d->shape.n = t->n;
    d->shape.out_bytes = t->out_bytes_per_token / (double)t->n;
    d->out_bytes_per_token = t->out_bytes_per_token;
    d->gather_cap_bytes = t->gather_cap_bytes;
    d->path = tps_path_find_for(t->kpath, TPS_PATH_F_MODEL);
    d->gather = tps_gather_parse(t->gather) >= 0 ? tps_gather_parse(t->gather) : tps_gather_rule();
    d->sms = r->table_gpu->sms;
    d->gpu = r->table_gpu;
    snprintf(r->fit_source, sizeof r->fit_source, "%s", bundled);
  }
  /* TPS_SCALING_SPEC, TPS_SCALING_PARTS: the GPU table alone (parts: tps_predref_open) */
  return 0;
}

void tps_predref_free(tps_predref *r) {
  tps_partset_free(r->parts);
  tps_gpus_free(&r->gpus);
  if (r->have_table) tps_table_free(&r->table);
  memset(r, 0, sizeof *r);
}

int tps_predref_open(tps_predref *r, const tps_predref_opts *o, int *fit_failed, tps_err *e) {
  if (tps_predref_load(r, o->scaling, o->fit_file, o->gpus_file, fit_failed, e) != 0) return -1;
  if (o->scaling != TPS_SCALING_PARTS) {
    if (o->parts.k != TPS_PRED_DEFAULT_K || o->parts.n != TPS_PRED_DEFAULT_N)
      return tps_err_set(e, NULL, 0, "--k and --n go with --scaling parts (the default)");
    return 0;
  }
  if (tps_partset_open(&r->parts, &r->gpus, &o->parts, e) != 0) return -1;
  for (size_t i = 0; i < o->ngemms; i++)
    if (tps_partset_user_gemm(r->parts, o->gemms[i], o->path_hint, e) != 0) return -1;
  for (size_t i = 0; i < o->ngathers; i++)
    if (tps_partset_user_gather(r->parts, o->gathers[i], e) != 0) return -1;
  return 0;
}
