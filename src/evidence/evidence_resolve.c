/* evidence_resolve.c: each part of a prediction resolved once (cached): the target's
 * measurement, a measured sibling's (model/predict/resolve.h), else a model; and a context
 * made of them: the parts handed to model/ once (tps_pred_init_ready), which builds them and
 * decides what the question may use; see evidence.h. */
#include "config.h"
#include "src/evidence/ev_int.h"
#include "model/core/harness.h"

/* ------------------------------------------------------------------ resolution */
static tps_part_source *cache_find(tps_partset *ps, const char *key) {
  for (size_t i = 0; i < ps->nres; i++)
    if (!strcmp(ps->key[i], key)) return ps->res[i];
  return NULL;
}

static int cache_add(tps_partset *ps, const char *key, tps_part_source *s, tps_err *e) {
  if (ps->nres == ps->cap) {
    size_t nc = ps->cap ? 2 * ps->cap : 32;
    tps_part_source **r = realloc(ps->res, nc * sizeof *r);
    if (r) ps->res = r;
    char **k = realloc(ps->key, nc * sizeof *k);
    if (k) ps->key = k;
    char *u = realloc(ps->used, nc);
    if (u) ps->used = u;
    if (!r || !k || !u) return tps_err_set(e, NULL, 0, "out of memory");
    ps->cap = nc;
  }
  ps->key[ps->nres] = strdup(key);
  if (!ps->key[ps->nres]) return tps_err_set(e, NULL, 0, "out of memory");
  ps->used[ps->nres] = 0;
  ps->res[ps->nres++] = s;
  return 0;
}

/* The loaded models as model/predict/resolve.h sees them (the H20 fit made first when the
 * part may need it: Marlin GEMM, custom gather). */
static tps_resolve_models models_view(tps_partset *ps, int need_h20) {
  tps_resolve_models r;
  memset(&r, 0, sizeof r);
  r.xg = ps->xg;
  r.nxg = ps->nxg;
  r.xa = ps->xa;
  r.nxa = ps->nxa;
  static __thread char xf[4200];
  cpy(xf, sizeof xf, shown(ps->xgpu_file));
  r.xgpu_file = xf;
  if (ps->have_w8) {
    tps_err e2;
    r.w8 = &ps->w8;
    r.w8_gpu = tps_gpus_find(ps->gt, ps->w8_gpu, &e2);
    r.w8_file = ps->w8_file;
    r.w8_sigma = ps->w8_sigma;
  }
  tps_err e3;
  tps_err_clear(&e3);
  if (need_h20 && ev_h20_fit(ps, &e3) == 0) {
    static __thread char hf[4200];
    cpy(hf, sizeof hf, shown(ps->h20_file));
    r.h20 = ps->h20;
    r.h20_gpu = ps->h20_gpu;
    r.h20_file = hf;
  }
  r.gpus = ps->gt->gpu;
  r.ngpus = ps->gt->n;
  r.tmax = ps->o.tmax;
  return r;
}

/* A bundled measurement of (gpu, path, k, n) timed by harness h (TPS_HARNESS_*; -1: any),
 * the first such row of data/parts.tsv.  1: none; 0: pts, file, *is_aic; -1: error. */
static int bundled_gemm(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, int h, pts *p, char *file,
                        size_t fsz, int *is_aic, tps_err *e) {
  for (int i = 0; i < ps->nrows; i++) {
    const prow *r = &ps->rows[i];
    if (r->gather || !SAME(r->gpu, gpu) || r->path != path) continue;
    char full[4096];
    loaded *l;
    tps_err e2;
    tps_err_clear(&e2);
    if (tps_data_path(r->file, full, sizeof full, e) || ev_load_row(ps, r, &l, e)) return -1;
    if (h >= 0 && (l->m.kind == TPS_MEAS_AIC) != (h == TPS_HARNESS_AIC)) continue;
    if (l->m.kind == TPS_MEAS_AIC) {
      ufile u;
      memset(&u, 0, sizeof u);
      char spec[4200];
      snprintf(spec, sizeof spec, "%s:%s", full, r->sel);
      if (r->sel[0] && ev_split_spec(spec, &u, e)) return -1;
      *is_aic = 1;
      int rc = ev_aic_gemm_pts(l, u.sel.dtype, u.sel.backend, k, n, p, &e2);
      if (rc == 0) { cpy(file, fsz, l->name); return 0; }
      *is_aic = 0;
      continue; /* the shape is not there: the model (no file named: it holds nothing of this answer) */
    }
    int rc = ev_table_gemm_pts(l, path, k, n, p, 0, e);
    if (rc < 0) return -1;
    if (rc == 0) { cpy(file, fsz, l->name); return 0; }
  }
  return 1;
}

/* A measured GEMM source for (gpu, path, k, n): a user file (strict: an error when it does
 * not hold the shape), else a bundled row, one timed by harness want_h first (-1: the first
 * row).  1: none; 0: pts, file; -1: error. */
static int gemm_meas(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, int want_h, pts *p,
                     char *file, size_t fsz, int *user, int *is_aic, const tps_fit **fit, tps_err *e) {
  *user = *is_aic = 0;
  *fit = NULL;
  for (int i = 0; i < ps->nug; i++) {
    ufile *u = &ps->ug[i];
    if (u->kpath != path || (!SAME(u->gpu, gpu) && u->lf->m.kind != TPS_MEAS_FIT)) continue;
    *user = 1;
    cpy(file, fsz, u->path);
    if (u->lf->m.kind == TPS_MEAS_FIT) { *fit = u->lf->m.fit; return 1; }
    if (u->lf->m.kind == TPS_MEAS_AIC) { *is_aic = 1; return ev_aic_gemm_pts(u->lf, u->sel.dtype, u->sel.backend, k, n, p, e) ? -1 : 0; }
    return ev_table_gemm_pts(u->lf, path, k, n, p, 1, e) ? -1 : 0;
  }
  int rc = want_h >= 0 ? bundled_gemm(ps, gpu, path, k, n, want_h, p, file, fsz, is_aic, e) : 1;
  return rc == 1 ? bundled_gemm(ps, gpu, path, k, n, -1, p, file, fsz, is_aic, e) : rc;
}

/* Measured points p of (gpu, path) timed by harness from, converted to harness to by a GPU
 * of gpu's architecture and fabric (gpu itself first) measured by both: 0 converted (p->how
 * says how), 1 none such, -1 error. */
static int harness_by_sibling(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, int from, int to,
                              pts *p, tps_err *e) {
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < ps->gt->n; i++) {
      const tps_gpu *h = &ps->gt->gpu[i];
      if (pass == 0 ? !SAME(h, gpu) : SAME(h, gpu) || !tps_resolve_gemm_sibling(h, gpu)) continue;
      pts a, b;
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      char fa[512], fb[512];
      int aa = 0, ab = 0;
      int ra = bundled_gemm(ps, h, path, k, n, from, &a, fa, sizeof fa, &aa, e);
      int rb = ra == 0 ? bundled_gemm(ps, h, path, k, n, to, &b, fb, sizeof fb, &ab, e) : 1;
      if (ra < 0 || rb < 0) { ev_pts_free(&a); ev_pts_free(&b); return -1; }
      double lo = 0, hi = 0;
      int rc = ra == 0 && rb == 0
                   ? tps_resolve_harness_convert_sibling(a.x, a.t, a.n, b.x, b.t, b.n, p->x, p->t, p->n, &lo, &hi)
                   : 1;
      if (rc == 0) {
        char how[sizeof p->how];
        snprintf(how, sizeof how, "%.150s; converted from the %s harness to %s by %s's tables in both (x%.2f..x%.2f: %.60s / %.60s)",
                 p->how, tps_harness_name(from), tps_harness_name(to), h->name, lo, hi, fb, fa);
        cpy(p->how, sizeof p->how, how);
      }
      ev_pts_free(&a);
      ev_pts_free(&b);
      if (rc < 0) return tps_err_set(e, NULL, 0, "out of memory");
      if (rc == 0) return 0;
    }
  return 1;
}


/* The nearest measured sibling of gpu for a GEMM of (path, k, n) (model/predict/resolve.h):
 * its points moved to gpu into p, its name into sib_name, the source line into src.
 * 1: none; 0: found; -1: error. */
static int sibling_gemm(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, pts *p, char *file,
                        size_t fsz, const tps_gpu **sib_out, int *sib_aic, tps_err *e) {
  const tps_gpu *best = NULL;
  double bd = 0;
  for (size_t i = 0; i < ps->gt->n; i++) {
    const tps_gpu *h = &ps->gt->gpu[i];
    if (!tps_resolve_gemm_sibling(h, gpu)) continue;
    int has = 0;
    for (int r = 0; r < ps->nrows && !has; r++) has = !ps->rows[r].gather && SAME(ps->rows[r].gpu, h) && ps->rows[r].path == path;
    if (!has) continue;
    double d = tps_resolve_sibling_distance(h, gpu);
    if (!best || d < bd) { best = h; bd = d; }
  }
  if (!best) return 1;
  int user, is_aic;
  const tps_fit *fit;
  int rc = gemm_meas(ps, best, path, k, n, ps->o.harness, p, file, fsz, &user, &is_aic, &fit, e);
  if (rc != 0) return rc;
  *sib_aic = is_aic;
  double hr = NAN, pr = NAN;
  double *src = malloc(p->n * sizeof *src);
  if (!src) return tps_err_set(e, NULL, 0, "out of memory");
  memcpy(src, p->t, p->n * sizeof *src);
  /* a path whose fixed floor was learnt from a table (Marlin: the H20 fit) keeps that floor */
  tps_resolve_models rm = models_view(ps, path->model == TPS_PATH_MODEL_TABLE_FIT);
  const tps_gemm_model *ff = rm.h20 && path->model == TPS_PATH_MODEL_TABLE_FIT ? &rm.h20->gemm : NULL;
  double fs_last = NAN, ft_last = NAN;
  long m_last = 0;
  for (size_t i = 0; i < p->n; i++) {
    double t0 = p->t[i];
    p->t[i] = tps_resolve_sibling_gemm_us(best, gpu, path, p->x[i], n, k, t0, &hr, &pr);
    if (ff) {
      double fs, ft;
      p->t[i] = tps_resolve_sibling_fit_us(ff, rm.h20_gpu, best, gpu, path, (long)p->x[i], n, k, t0, &fs, &ft);
      if (fabs(p->x[i] - 96) < 0.5 || !m_last) { fs_last = fs; ft_last = ft; m_last = (long)p->x[i]; }
    }
  }
  size_t raised = tps_resolve_monotone(src, p->t, p->n);
  free(src);
  char how[700], mono[64] = "", fixed[300] = "";
  if (raised) snprintf(mono, sizeof mono, "; %zu of %zu raised: non-decreasing", raised % 1000, p->n % 1000);
  if (ff)
    snprintf(fixed, sizeof fixed, "; the fixed floor learnt from the H20 table kept: %.2f us a launch + %.3f us a reduction "
             "step (steps by SMs, %d vs %d: %.1f vs %.1f us at %ld rows)",
             ff->p[TPS_GP_LAUNCH_US], ff->p[TPS_GP_REDUCE_US], best->sms, gpu->sms, fs_last, ft_last, m_last);
  snprintf(how, sizeof how, "%s's %.220s, moved to %s by the regime's spec ratio: HBM x%.3f where the weights stream, %s peak "
           "x%.3f where it computes%s%s", best->name, p->how, gpu->name, hr, tps_path_peak_name(path), pr, fixed, mono);
  cpy(p->how, sizeof p->how, how);
  *sib_out = best;
  return 0;
}

/* The nearest sibling of gpu (same fabric) with a measured gather of (tp, backend): its
 * points as they are.  1: none; 0: found; -1: error. */
static int sibling_gather(tps_partset *ps, const tps_gpu *gpu, int tp, int backend, pts *p, char *file, size_t fsz,
                          const tps_gpu **sib_out, tps_err *e) {
  const prow *best = NULL;
  double bd = 0;
  for (int i = 0; i < ps->nrows; i++) {
    const prow *r = &ps->rows[i];
    if (!r->gather || r->backend != backend || !tps_resolve_gather_sibling(r->gpu, gpu) || !prow_has_tp(r, tp)) continue;
    double d = tps_resolve_sibling_distance(r->gpu, gpu);
    if (!best || d < bd) { best = r; bd = d; }
  }
  if (!best) return 1;
  loaded *l;
  if (ev_load_row(ps, best, &l, e)) return -1;
  cpy(file, fsz, l->name);
  int rc = l->m.kind == TPS_MEAS_AIC ? ev_aic_gather_pts(l, tp, p, e) : ev_table_gather_pts(l, tp, p, e);
  if (rc) return rc;
  char how[400];
  snprintf(how, sizeof how, "%s's %.300s, as measured (%s has the same fabric)", best->gpu->name, p->how, gpu->name);
  cpy(p->how, sizeof p->how, how);
  *sib_out = best->gpu;
  return 0;
}

/* No measurement of a capped backend (custom) at (gpu, tp), but a split table of the auto rule there: its gather
 * where the rule ran that backend (per-rank input at most the table's cap), as measured.  That is the gather the
 * table timed over the backend's whole domain (it runs only under its cap); the fit of that table missed it by
 * 1.3 us at 80 tokens on the H20 (break-even 97 with --gather custom, 80 with auto, every row custom).  NCCL is not
 * taken this way: the rule's rows of it are the few largest (two on the H20), where a sibling's whole curve says
 * more.  1: none; 0: p, file. */
static int rule_gather_as(tps_partset *ps, const tps_gpu *gpu, int tp, int backend, pts *p, char *file, size_t fsz,
                          tps_err *e) {
  if (!tps_gather_is_capped(backend)) return 1;
  for (int i = 0; i < ps->nrows; i++) {
    const prow *r = &ps->rows[i];
    if (!r->gather || !tps_gather_is_rule(r->backend) || !SAME(r->gpu, gpu) || !prow_has_tp(r, tp)) continue;
    loaded *l;
    if (ev_load_row(ps, r, &l, e)) return -1;
    const tps_table *t = &l->m.tab;
    if (l->m.kind != TPS_MEAS_TABLE || t->kind != TPS_TABLE_SPLIT || !(t->gather_cap_bytes > 0)) continue;
    pts all; /* one point a row of the table, in its order */
    if (ev_table_gather_pts(l, tp, &all, e)) return -1;
    if (ev_pts_alloc(p, all.n)) { ev_pts_free(&all); return tps_err_set(e, NULL, 0, "out of memory"); }
    size_t k0 = 0, k1 = 0; /* the first and last row kept */
    for (size_t k = 0; k < all.n; k++) {
      if (all.x[k] / tp > t->gather_cap_bytes) continue; /* the rule ran NCCL there */
      if (!p->n) k0 = k;
      k1 = k;
      p->x[p->n] = all.x[k], p->t[p->n++] = all.t[k];
      ev_pts_line(p, t->line[k]);
    }
    ev_pts_free(&all);
    if (p->n >= 2) {
      snprintf(p->how, sizeof p->how, "split - replicated(ceil(T/%d)) of a split table of the auto rule, its rows where the rule "
               "ran %s: T %ld..%ld (per-rank input <= %.0f B)", t->tp, tps_gather_name(backend), t->tokens[k0], t->tokens[k1],
               t->gather_cap_bytes);
      cpy(file, fsz, l->name);
      return 0;
    }
    ev_pts_free(p);
  }
  return 1;
}

/* A measured part (set_measured done) of another kind: kind prov, its source line starting "WORD: " instead of
 * "measured: ". */
static void retitle(tps_part_source *s, int prov, const char *word) {
  s->prov = prov;
  char src[sizeof s->src];
  snprintf(src, sizeof src, "%s: %.1000s", word, s->src + (strncmp(s->src, "measured: ", 10) ? 0 : 10));
  cpy(s->src, sizeof s->src, src);
}

/* A part measured on a sibling (set_measured done): its provenance, spread and source. */
static void mark_sibling(tps_part_source *s, const tps_gpu *sib, double rsd) {
  retitle(s, TPS_PROV_SIBLING, "sibling");
  s->part.meas_rsd = rsd;
  cpy(s->from, sizeof s->from, sib->name);
}

/* A part measured on this GPU in the other harness and converted (set_measured done; the
 * source's parenthesis says by what): its own kind, so that no answer calls it measured. */
static void mark_converted(tps_part_source *s) { retitle(s, TPS_PROV_CONVERTED, "converted"); }

/* A part measured at points p (owned; freed here): the points for its curve (built by model/
 * on first use: tps_pred_init_ready), provenance and source line, and, when have_model, the
 * model msrc for outside them (anchored to them there, dropped where it cannot be). */
static void set_measured(tps_part_source *s, pts *p, int have_model, const char *msrc) {
  s->part.meas_rsd = TPS_PART_MEASURED_RSD;
  s->prov = TPS_PROV_MEASURED;
  s->line_lo = p->lo;
  s->line_hi = p->hi;
  s->xlo = p->x[0];
  s->xhi = p->x[p->n - 1];
  snprintf(s->src, sizeof s->src, "measured: %.300s lines %ld-%ld (%s)", s->file, p->lo, p->hi, p->how);
  if (have_model) cpy(s->model_src, sizeof s->model_src, msrc);
  /* the points go to the part as they are, plain data (model/predict/parts.h) */
  s->part.px = p->x;
  s->part.pt = p->t;
  s->part.pn = p->n;
  s->part.anchor = have_model;
  p->x = p->t = NULL;
  ev_pts_free(p);
}

/* The facts a transferred part reads, in a cache key: a GPU moved by src/cli/gpu_doubt.c (its
 * uncertain facts at -10% / +10%, the same name) gets parts of its own. */
static void facts_tag(const tps_gpu *g, char *buf, size_t sz) {
  snprintf(buf, sz, "%d/%.9g/%.9g/%.9g/%.9g/%.9g/%.9g/%.9g", g->sms, g->bf16_tflops, g->fp8_tflops, g->hbm_gbps, g->l2_mb,
           g->link_gbps, g->nccl_link_gbps, g->fp4_tflops);
}

/* Measured points p of (gpu, path) timed in harness from, converted to harness to where they
 * differ (model/predict/resolve.h: tps_resolve_harness_convert); what was done goes into
 * p->how.  0 converted, 1 as measured (same harness, or no form of the other), -1 no memory. */
static int harness_convert(const tps_resolve_models *rm, const tps_gpu *gpu, const tps_path *path, long k, long n,
                           int from, int to, pts *p) {
  if (from == to) return 1;
  double lo = 0, hi = 0;
  char trained[400], how[sizeof p->how];
  int rc = tps_resolve_harness_convert(rm, gpu, path, k, n, from, to, p->x, p->t, p->n, &lo, &hi, trained, sizeof trained);
  if (rc < 0) return -1;
  if (rc == 0)
    snprintf(how, sizeof how, "%.180s; converted from the %s harness to %s by the cross-GPU model's two harness forms "
             "(x%.2f..x%.2f over its rows; fitted on %.80s)", p->how, tps_harness_name(from), tps_harness_name(to), lo, hi, trained);
  else
    snprintf(how, sizeof how, "%.250s; %s harness as measured (%s has no %s-harness form to convert by)", p->how,
             tps_harness_name(from), path->name, tps_harness_name(to));
  cpy(p->how, sizeof p->how, how);
  return rc;
}

int ev_resolve_gemm(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, tps_part_source **out,
                        tps_err *e) {
  char key[256], tag[128];
  facts_tag(gpu, tag, sizeof tag);
  snprintf(key, sizeof key, "gemm|%s|%s|%ld|%ld|%s", gpu->name, path->name, k, n, tag);
  if ((*out = cache_find(ps, key))) return 0;
  tps_part_source *s = calloc(1, sizeof *s);
  if (!s) return tps_err_set(e, NULL, 0, "out of memory");
  s->part.what = TPS_PART_GEMM;
  s->xlo = s->xhi = NAN;
  cpy(s->gpu, sizeof s->gpu, gpu->name);
  snprintf(s->what, sizeof s->what, "GEMM %s on %s, K %ld N %ld", path->name, gpu->name, k, n);
  pts p;
  memset(&p, 0, sizeof p);
  int user, is_aic;
  const tps_fit *fit;
  int rc = gemm_meas(ps, gpu, path, k, n, ps->o.harness, &p, s->file, sizeof s->file, &user, &is_aic, &fit, e);
  if (rc < 0) { free(s); return -1; }
  s->user = user;
  if (fit) {
    /* a user fit (of tpsplit bench or calibrate tables: the bench harness): its GEMM,
     * transferred when of another GPU */
    s->harness = TPS_HARNESS_BENCH;
    tps_part_model *m = &s->part.model;
    tps_err e2;
    const tps_gpu *fg = tps_gpus_find(ps->gt, fit->gpu, &e2);
    m->kind = TPS_PM_GEMM;
    m->gpu = *gpu;
    m->shape.k = k; m->shape.n = n; m->shape.out_bytes = TPS_PRED_DEFAULT_OUT_BYTES;
    m->n = n; m->k = k;
    if (!fg || tps_gemm_transfer(&m->gm, &fit->gemm, fg, gpu, path) != 0) {
      tps_err_set(e, s->file, 0, "its GEMM cannot be moved to %s (%s)", gpu->name, path->name);
      free(s);
      return -1;
    }
    m->prov = SAME(fg, gpu) && fit->gemm.path == path ? TPS_PROV_FITTED : TPS_PROV_TRANSFERRED;
    m->rsd = m->prov == TPS_PROV_FITTED ? fit->rms_rel : path->compute_eff_rsd;
    s->prov = m->prov;
    if (m->prov == TPS_PROV_FITTED)
      snprintf(s->src, sizeof s->src, "fitted: the GEMM of the fit %s (%s %s)", s->file, fit->gpu, fit->gemm.path->name);
    else {
      cpy(s->from, sizeof s->from, fit->gpu);
      snprintf(s->src, sizeof s->src, "transferred: the GEMM of the fit %s (%s %s), by peak x efficiency and HBM bandwidth", s->file, fit->gpu,
               fit->gemm.path->name);
    }
  } else {
    char msrc[600], from[400];
    tps_resolve_models rm = models_view(ps, path->model == TPS_PATH_MODEL_TABLE_FIT);
    const tps_gpu *sib = NULL;
    if (rc == 1 && !user) {
      rc = sibling_gemm(ps, gpu, path, k, n, &p, s->file, sizeof s->file, &sib, &is_aic, e);
      if (rc < 0) { free(s); return -1; }
    }
    /* the harness of the answer: the one asked, else the measurement's (bench when nothing
     * was measured); the model outside the measured range answers in it */
    const int meas_h = is_aic ? TPS_HARNESS_AIC : TPS_HARNESS_BENCH;
    const int want = ps->o.harness >= 0 ? ps->o.harness : rc == 0 ? meas_h : TPS_HARNESS_BENCH;
    int conv = rc == 0 && want != meas_h ? harness_by_sibling(ps, gpu, path, k, n, meas_h, want, &p, e) : 1;
    double conv_rsd = TPS_RESOLVE_HARNESS_SIBLING_RSD;
    if (conv == 1 && rc == 0) {
      conv = harness_convert(&rm, gpu, path, k, n, meas_h, want, &p);
      conv_rsd = TPS_RESOLVE_HARNESS_MODEL_RSD;
    }
    if (conv < 0) { ev_pts_free(&p); free(s); return tps_err_set(e, NULL, 0, "out of memory"); }
    s->harness = rc == 0 && conv ? meas_h : want;
    int have_model = tps_resolve_gemm_model(&rm, gpu, path, k, n, s->harness == TPS_HARNESS_AIC, &s->part.model, msrc,
                                            sizeof msrc, from, sizeof from) == 0;
    if (!have_model) s->part.model.kind = TPS_PM_NONE;
    /* nothing measured: only the cross-GPU model has an aic form; our W8A16 model, the Marlin
     * fit and the datasheet priors stand for the bench harness whatever was asked */
    if (rc != 0 && s->part.model.kind != TPS_PM_XGEMM) s->harness = TPS_HARNESS_BENCH;
    if (rc == 0) {
      set_measured(s, &p, have_model, msrc);
      if (sib) mark_sibling(s, sib, tps_resolve_sibling_gemm_rsd(sib, gpu));
      if (!conv) {
        s->part.meas_rsd = hypot(s->part.meas_rsd, conv_rsd);
        if (s->prov == TPS_PROV_MEASURED) mark_converted(s);
      }
    } else {
      if (!have_model) { free(s); return tps_err_set(e, NULL, 0, "no model of %s on %s", path->name, gpu->name); }
      s->prov = s->part.model.prov;
      cpy(s->src, sizeof s->src, msrc);
      cpy(s->from, sizeof s->from, from);
    }
  }
  snprintf(s->what, sizeof s->what, "GEMM %s on %s, K %ld N %ld, %s harness", path->name, gpu->name, k, n,
           tps_harness_name(s->harness));
  if (cache_add(ps, key, s, e)) { tps_part_free(&s->part); free(s); return -1; }
  *out = s;
  return 0;
}

/* The gather of a user's fit file: its own where it measured this GPU and TP (fitted), else
 * moved by the ratio of the spec models (transferred: model/predict/resolve.h). */
static void gather_from_fit(tps_partset *ps, tps_part_source *s, const tps_fit *fit, const tps_gpu *gpu, int tp, int backend) {
  tps_err e2;
  const tps_gpu *fg = tps_gpus_find(ps->gt, fit->gpu, &e2);
  int fn = fit->ag.ranks > 0 ? fit->ag.ranks : fit->tp;
  s->prov = tps_resolve_gather_fit(&s->part.model, &fit->ag, fn, fit->rms_rel, fg, gpu, tp, backend);
  if (s->prov == TPS_PROV_TRANSFERRED) {
    cpy(s->from, sizeof s->from, fit->gpu);
    snprintf(s->src, sizeof s->src, "transferred: the gather of the fit %s (%s, %d ranks), by the spec models' link bandwidth and ring steps",
             s->file, fit->gpu, fn);
  } else {
    snprintf(s->src, sizeof s->src, "fitted: the gather of the fit %s (%s, %d ranks)", s->file, fit->gpu, fn);
  }
}

int ev_resolve_gather(tps_partset *ps, const tps_gpu *gpu, int tp, int backend, tps_part_source **out, tps_err *e) {
  char key[256], tag[128];
  *out = NULL;
  facts_tag(gpu, tag, sizeof tag);
  snprintf(key, sizeof key, "gather|%s|%d|%d|%s", gpu->name, tp, backend, tag);
  for (size_t i = 0; i < ps->nres; i++)
    if (!strcmp(ps->key[i], key)) { *out = ps->res[i]; return 0; }
  /* a negative entry is a key with no part: keep looking it up cheaply */
  char nkey[300];
  snprintf(nkey, sizeof nkey, "none|%s", key);
  for (size_t i = 0; i < ps->nres; i++) if (!strcmp(ps->key[i], nkey)) return 0;
  tps_part_source *s = calloc(1, sizeof *s);
  if (!s) return tps_err_set(e, NULL, 0, "out of memory");
  s->part.what = TPS_PART_GATHER;
  s->part.backend = backend;
  s->part.ranks = tp;
  s->xlo = s->xhi = NAN;
  cpy(s->gpu, sizeof s->gpu, gpu->name);
  snprintf(s->what, sizeof s->what, "gather %s on %s at TP %d", tps_gather_name(backend), gpu->name, tp);
  pts p;
  memset(&p, 0, sizeof p);
  int rc = 1;
  const tps_fit *fit = NULL;
  for (int i = 0; i < ps->nua && rc == 1; i++) {
    ufile *u = &ps->ua[i];
    if (u->backend != backend || (!SAME(u->gpu, gpu) && u->lf->m.kind != TPS_MEAS_FIT)) continue;
    int has = 0;
    for (int j = 0; j < u->nranks; j++) has |= u->ranks[j] == tp;
    if (!has && u->lf->m.kind != TPS_MEAS_FIT) continue;
    s->user = 1;
    cpy(s->file, sizeof s->file, u->path);
    if (u->lf->m.kind == TPS_MEAS_FIT) { fit = u->lf->m.fit; break; }
    rc = u->lf->m.kind == TPS_MEAS_AIC ? ev_aic_gather_pts(u->lf, tp, &p, e) : ev_table_gather_pts(u->lf, tp, &p, e);
    if (rc) { free(s); return -1; }
  }
  /* a measured curve of the auto rule yields to the user's own nccl or custom gathers here */
  int user_here = 0;
  for (int i = 0; i < ps->nua; i++)
    for (int j = 0; j < ps->ua[i].nranks; j++)
      user_here |= SAME(ps->ua[i].gpu, gpu) && ps->ua[i].ranks[j] == tp && !tps_gather_is_rule(ps->ua[i].backend);
  for (int i = 0; i < ps->nrows && rc == 1 && !fit && !(tps_gather_is_rule(backend) && user_here); i++) {
    const prow *r = &ps->rows[i];
    if (!r->gather || !SAME(r->gpu, gpu) || r->backend != backend || !prow_has_tp(r, tp)) continue;
    loaded *l;
    if (ev_load_row(ps, r, &l, e)) { free(s); return -1; }
    cpy(s->file, sizeof s->file, l->name);
    rc = l->m.kind == TPS_MEAS_AIC ? ev_aic_gather_pts(l, tp, &p, e) : ev_table_gather_pts(l, tp, &p, e);
    if (rc) { free(s); return -1; }
  }
  if (fit) {
    gather_from_fit(ps, s, fit, gpu, tp, backend);
  } else {
    char msrc[600], from[400];
    tps_resolve_models rm = models_view(ps, tps_gather_is_capped(backend));
    int have_model = !tps_gather_is_rule(backend) &&
                     tps_resolve_gather_model(&rm, gpu, tp, backend, &s->part.model, msrc, sizeof msrc, from, sizeof from) == 0;
    if (!have_model) s->part.model.kind = TPS_PM_NONE;
    const tps_gpu *sib = NULL;
    if (rc == 1 && !s->user && !tps_gather_is_rule(backend)) { /* the auto rule's own curve, then a sibling's */
      rc = rule_gather_as(ps, gpu, tp, backend, &p, s->file, sizeof s->file, e);
      if (rc == 1) rc = sibling_gather(ps, gpu, tp, backend, &p, s->file, sizeof s->file, &sib, e);
      if (rc < 0) { free(s); return -1; }
    }
    if (rc == 0) {
      set_measured(s, &p, have_model, msrc);
      if (sib) mark_sibling(s, sib, TPS_RESOLVE_SIBLING_GATHER_RSD);
      if (tps_gather_is_rule(backend))
        snprintf(s->model_src, sizeof s->model_src, "the auto rule over %s's custom and nccl gathers at TP %d (their own sources)",
                 gpu->name, tp);
    } else if (have_model) {
      s->prov = s->part.model.prov;
      cpy(s->src, sizeof s->src, msrc);
      cpy(s->from, sizeof s->from, from);
    } else {
      free(s);
      return cache_add(ps, nkey, NULL, e);
    }
  }
  if (cache_add(ps, key, s, e)) { tps_part_free(&s->part); free(s); return -1; }
  *out = s;
  return 0;
}


int tps_partset_harness_convert(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, int from, int to,
                                const double *x, double *t, size_t npts, char *how, size_t howsz, double *rsd, tps_err *e) {
  pts p;
  memset(&p, 0, sizeof p);
  p.x = (double *)x; /* read only: the conversions write p.t and p.how */
  p.t = t;
  p.n = npts;
  snprintf(p.how, sizeof p.how, "the %s harness", tps_harness_name(from));
  *rsd = 0;
  int rc = harness_by_sibling(ps, gpu, path, k, n, from, to, &p, e);
  if (rc == 0) *rsd = TPS_RESOLVE_HARNESS_SIBLING_RSD;
  if (rc == 1) {
    tps_resolve_models rm = models_view(ps, path->model == TPS_PATH_MODEL_TABLE_FIT);
    rc = harness_convert(&rm, gpu, path, k, n, from, to, &p);
    if (rc == 0) *rsd = TPS_RESOLVE_HARNESS_MODEL_RSD;
    if (rc < 0) rc = tps_err_set(e, NULL, 0, "out of memory");
  }
  cpy(how, howsz, p.how);
  return rc;
}

/* ------------------------------------------------------------------ a context from the resolved parts */
/* Why model/ refused a context (tps_pred_check), in words: the source's file and lines. */
static int refused(const tps_partset *ps, const tps_gpu *gpu, int tp, const tps_path *path, long k, long n,
                   const tps_part_source *g, tps_part_source *const *a, const tps_pred_check *c, tps_err *e) {
  const long tmax = ps->o.tmax;
  const int b = c->refused;
  const tps_part_source *s = b < 0 ? g : a[b];
  if (c->refusal == TPS_USE_UNBUILT) {
    if (s->part.fail == TPS_PART_FAIL_CURVE)
      return tps_err_set(e, s->file, 0, "cannot interpolate its points%s", b < 0 ? " (not increasing?)" : "");
    return tps_err_set(e, NULL, 0, "the %s GEMM on %s has no usable times on 1..%ld rows", path->name, gpu->name, tmax);
  }
  if (b >= 0 && c->refusal == TPS_USE_SIBLING)
    return tps_err_set(e, s->file, s->line_lo, "%s TP%d: the %s gather is %s's measurement, a sibling's (--measured-only "
                       "allows only %s's own; give --gather %s=FILE)", gpu->name, tp, tps_gather_name(b), s->from, gpu->name,
                       tps_gather_name(b));
  if (b >= 0) { /* TPS_USE_OUTSIDE */
    char b0[32], b1[32];
    fmt_bytes(b0, sizeof b0, c->xlo);
    fmt_bytes(b1, sizeof b1, c->xhi);
    if (s && s->part.meas) {
      char m0[32], m1[32];
      fmt_bytes(m0, sizeof m0, s->xlo);
      fmt_bytes(m1, sizeof m1, s->xhi);
      return tps_err_set(e, s->file, s->line_lo, "measured %s..%s does not reach the question's %s..%s (%s gather, TP %d, T 1..%ld) and "
                         "--measured-only allows no model", m0, m1, b0, b1, tps_gather_name(b), tp, tmax);
    }
    return tps_err_set(e, NULL, 0, "%s TP%d: no measurement of the %s gather (--measured-only allows no model; give --gather %s=FILE)",
                       gpu->name, tp, tps_gather_name(b), tps_gather_name(b));
  }
  if (c->refusal == TPS_USE_SIBLING)
    return tps_err_set(e, g->file, g->line_lo, "%s %s: the GEMM is %s's measurement, a sibling's (--measured-only allows only %s's own; "
                       "give --gemm FILE)", gpu->name, path->name, g->from, gpu->name);
  if (c->refusal == TPS_USE_CONVERTED)
    return tps_err_set(e, g->file, g->line_lo, "%s %s: the GEMM is %s's measurement in the other harness, converted to %s (--measured-only "
                       "allows no conversion; ask --harness %s, or give --gemm FILE)", gpu->name, path->name, gpu->name,
                       tps_harness_name(g->harness), tps_harness_name(g->harness == TPS_HARNESS_AIC ? TPS_HARNESS_BENCH : TPS_HARNESS_AIC));
  if (c->refusal == TPS_USE_OUTSIDE && g->part.meas)
    return tps_err_set(e, g->file, g->line_lo, "measured rows %.0f..%.0f do not reach the question's 1..%ld (%s, TP %d) and --measured-only "
                       "allows no model", g->xlo, g->xhi, tmax, path->name, tp);
  if (c->refusal == TPS_USE_OUTSIDE)
    return tps_err_set(e, NULL, 0, "%s %s: no measurement of the GEMM at K %ld N %ld (--measured-only allows no model; give --gemm FILE)",
                       gpu->name, path->name, k, n);
  return tps_err_set(e, g->file, g->line_lo, "measured rows %.0f..%.0f do not reach the question's 1..%ld and no model of %s on %s exists",
                     g->xlo, g->xhi, tmax, path->name, gpu->name);
}

int tps_partset_context(tps_partset *ps, const tps_gpu *gpu, int tp, const tps_path *path, const tps_pred_opts *po,
                        const tps_gemm_shape *shape, double obpt, tps_pred *p, tps_partuse *use, tps_err *e) {
  tps_partuse u0;
  tps_partuse *u = use ? use : &u0;
  memset(u, 0, sizeof *u);
  memset(p, 0, sizeof *p);
  tps_pred_sources src;
  memset(&src, 0, sizeof src);
  long k = shape ? shape->k : ps->o.k, n = shape ? shape->n : ps->o.n;
  src.shape.k = k;
  src.shape.n = n;
  src.shape.out_bytes = shape ? shape->out_bytes : TPS_PRED_DEFAULT_OUT_BYTES;
  src.out_bytes_per_token = obpt > 0 ? obpt : n * src.shape.out_bytes;
  src.tmax = ps->o.tmax;
  src.measured_only = ps->o.measured_only;
  /* applicability first (no parts for a path that cannot run here) */
  tps_pred_opts o;
  if (po) o = *po; else tps_pred_opts_default(&o);
  int st = tps_pred_init_spec(p, gpu, tp, path, &src.shape, src.out_bytes_per_token, &o);
  tps_pred_free(p);
  if (st != TPS_OK) return st;
  pthread_mutex_lock(&ps->lock);
  tps_part_source *g = NULL, *a[TPS_NGATHERS] = {NULL};
  int rc = ev_resolve_gemm(ps, gpu, path, k, n, &g, e);
  for (int b = 0; b < TPS_NGATHERS && !rc; b++) rc = ev_resolve_gather(ps, gpu, tp, b, &a[b], e);
  pthread_mutex_unlock(&ps->lock);
  if (rc) return TPS_EBADDATA;
  /* the parts go down to model/ once: built there, the context made and what the question
   * may use decided there */
  src.gemm = &g->part;
  src.gemm_prov = g->prov;
  for (int b = 0; b < TPS_NGATHERS; b++) {
    src.gather[b] = a[b] ? &a[b]->part : NULL;
    src.gather_prov[b] = a[b] ? a[b]->prov : TPS_PROV_SPEC;
  }
  tps_pred_check chk;
  st = tps_pred_init_ready(p, ps->cache, gpu, tp, path, &src, &o, &chk);
  if (st == TPS_EBADDATA && chk.refusal != TPS_USE_OK) {
    refused(ps, gpu, tp, path, k, n, g, a, &chk, e);
    return st;
  }
  if (st != TPS_OK) return st;
  u->gemm = g;
  u->gemm_prov = g->prov;
  u->gemm_outside = chk.gemm_outside;
  for (int b = 0; b < TPS_NGATHERS; b++) {
    u->gather[b] = a[b];
    u->gather_outside[b] = chk.gather_outside[b];
  }
  if (chk.spec_gather)
    snprintf(u->gather_spec_src, sizeof u->gather_spec_src,
             "spec-only: the datasheet NCCL model (model/latency/allgather.h)%s", tp > p->opts.node_gpus
             ? " across nodes: TP spans more than one 8-GPU NVLink domain, inter-node bandwidth per GPU (--ib-gbps)" : "");
  return TPS_OK;
}

/* ------------------------------------------------------------------ contexts of the reference (evidence.h) */
int tps_predref_context_use(const tps_predref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                            const tps_pred_opts *o, tps_pred *p, tps_partuse *use, tps_err *e) {
  if (use) memset(use, 0, sizeof *use);
  switch (scaling) {
  case TPS_SCALING_PARTS: {
    tps_err e2;
    tps_err_clear(&e2);
    if (!r->parts) return TPS_EINVAL;
    return tps_partset_context(r->parts, gpu, tp, path, o, NULL, 0, p, use, e ? e : &e2);
  }
  case TPS_SCALING_MODEL:
    return tps_pred_init_model(p, &r->fit, r->fit_gpu, gpu, tp, path, o);
  case TPS_SCALING_PESSIMISTIC:
    return tps_pred_init_pessimistic(p, &r->split, r->table_gpu, gpu, tp, path, o);
  default:
    return tps_pred_init_spec(p, gpu, tp, path, NULL, 0, o);
  }
}

int tps_predref_context(const tps_predref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                        const tps_pred_opts *o, tps_pred *p) {
  return tps_predref_context_use(r, scaling, gpu, tp, path, o, p, NULL, NULL);
}
