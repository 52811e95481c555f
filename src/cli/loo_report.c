/* loo_report.c: the tables and JSON of `tpsplit fit --loo-gpu` (see loo_run.h). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "src/base/jsonout.h"
#include "src/cli/loo_run.h"
#include "model/calib/calib.h"
#include "model/core/status.h"
#include "model/core/w8plan.h"
#include "src/base/exit.h"

static json_t *err_json(const tps_loo_err *e) {
  json_t *o = json_object();
  json_object_set_new(o, "n", json_integer((json_int_t)e->n));
  tps_json_set_num(o, "median_abs_rel", e->med_abs);
  tps_json_set_num(o, "max_abs_rel", e->max_abs);
  return o;
}

static void print_be(double v) {
  if (v >= BE_NONE) printf(" %9s", "none");
  else printf(" %9.0f", v);
}

/* ------------------------------------------------------------------ text */

/* The pooled lines: over the forms [p0, p1] (dense-bf16 and native-fp8; fp8-block and nvfp4). */
static void print_gemm_pooled(const loo_run *r, int p0, int p1) {
  size_t cin = 0, ctot = 0, na = 0;
  for (int path = p0; path <= p1; path++)
    for (int i = 0; i < r->gp[path].ns; i++) {
      const gemm_part *g = &r->gp[path];
      if (!isfinite(g->r.cover[i])) continue;
      cin += (size_t)(g->r.cover[i] * (double)g->sets[i].neval + 0.5);
      ctot += g->sets[i].neval;
    }
  for (int path = p0; path <= p1; path++)
    for (int i = 0; i < r->gp[path].ns; i++) na += r->gp[path].sets[i].neval;
  double *all = malloc((na ? na : 1) * sizeof *all);
  na = 0;
  for (int path = p0; path <= p1 && all; path++)
    for (int i = 0; i < r->gp[path].ns; i++) {
      const gset *s = &r->gp[path].sets[i];
      for (size_t j = 0; j < s->n; j++) if (s->eval[j]) all[na++] = s->pred[j] / s->t[j] - 1.0;
    }
  tps_loo_err pe = tps_loo_summary(all, na);
  free(all);
  char what[64];
  snprintf(what, sizeof what, "%s and %s", tps_xg_path_names[p0], tps_xg_path_names[p1]);
  if (ctot) printf("# GEMM 90%% interval coverage, all GPUs, %s: %.1f%% of %zu points\n", what, 100.0 * (double)cin / (double)ctot, ctot);
  else printf("# GEMM 90%% interval coverage, all GPUs, %s: none (no nested fit)\n", what);
  printf("# GEMM held-out error, all GPUs, %s pooled: median %.1f%%, max %.1f%%\n", what, 100 * pe.med_abs, 100 * pe.max_abs);
}

static void print_gemm(const loo_run *r) {
  for (int path = 0; path < TPS_XG_NPATH; path++) {
    const gemm_part *g = &r->gp[path];
    printf("# GEMM %s, K %d, leave one GPU out (fit on the other GPUs, predict this one)\n", tps_xg_path_names[path], GEMM_K);
    printf("%-20s %-34s %5s %8s %8s %8s %9s\n", "gpu", "data", "n", "med_err", "max_err", "cover90", "width90");
    for (int i = 0; i < g->ns; i++) {
      const gset *s = &g->sets[i];
      if (!g->r.fold_ok[g->r.grp[i]]) continue;
      if (r->hold) {
        printf("%-20s %-34s %5zu %7.1f%% %7.1f%% %8s %9s\n", s->gpu->name, s->what, s->neval, 100 * g->r.err[i].med_abs,
               100 * g->r.err[i].max_abs, "-", "-");
        continue;
      }
      if (isfinite(g->r.cover[i]))
        printf("%-20s %-34s %5zu %7.1f%% %7.1f%% %7.1f%% %8.1f%%\n", s->gpu->name, s->what, s->neval, 100 * g->r.err[i].med_abs,
               100 * g->r.err[i].max_abs, 100 * g->r.cover[i], 100 * g->r.width[i]);
      else /* no nested fit (one training GPU): no interval */
        printf("%-20s %-34s %5zu %7.1f%% %7.1f%% %8s %9s\n", s->gpu->name, s->what, s->neval, 100 * g->r.err[i].med_abs,
               100 * g->r.err[i].max_abs, "-", "-");
    }
    printf("\n");
  }
  if (r->hold) return;
  print_gemm_pooled(r, TPS_XG_BF16, TPS_XG_FP8);
  print_gemm_pooled(r, TPS_XG_FP8BLOCK, TPS_XG_NVFP4);
  printf("\n");
}

static void print_gather(const loo_run *r) {
  const aset *as = r->as;
  const gather_loo *ar = &r->ar;
  printf("# all-gather (NCCL), leave one GPU out among the GPUs of the same fabric (NVLink, PCIe)\n");
  printf("# med/max_err: 8 GPUs, 64 KiB..64 MiB; med2/med4: 2 and 4 GPUs, same sizes\n");
  printf("%-20s %-7s %-6s %5s %8s %8s %8s %8s %8s %8s\n", "gpu", "fabric", "nccl", "n", "med_err", "max_err", "med2", "med4", "cover90", "med_1pt");
  for (int a = 0; a < r->nas; a++) {
    printf("%-20s %-7s %-6s %5zu", as[a].gpu->name, as[a].gpu->nvlink ? "NVLink" : "PCIe", as[a].version, as[a].neval);
    if (!ar->fold_ok[a]) { printf(" %8s\n", "no fit"); continue; }
    printf(" %7.1f%% %7.1f%% %7.1f%% %7.1f%%", 100 * ar->err[a].med_abs, 100 * ar->err[a].max_abs, 100 * ar->err_n[a][0].med_abs,
           100 * ar->err_n[a][1].med_abs);
    if (ar->hw_ok[a]) printf(" %7.1f%%", 100 * ar->cover[a]);
    else printf(" %8s", "-");
    printf(" %7.1f%%\n", 100 * ar->err_1pt[a].med_abs);
  }
  printf("\n");
}

static void print_w8(const w8_part *w8) {
  printf("# our w8a16 kernels (%s), %s, K %ld N %ld: fitted on this table (one GPU)\n", w8->file, w8->gpu->name, w8->k, w8->n);
  printf("# in sample: median |err| %.1f%%, max %.1f%%; leave one M out: median %.1f%%, max %.1f%% (%d refits failed)\n",
         100 * w8->in.med_abs, 100 * w8->in.max_abs, 100 * w8->loo.med_abs, 100 * w8->loo.max_abs, w8->loo_failed);
  printf("#");
  for (int j = 0; j < TPS_XW8_NPAR; j++) printf(" %s=%.4g", tps_xw8_par_names[j], w8->m.p[j]);
  printf("\n%8s %7s %11s %9s %8s %9s %8s\n", "rows", "kernel", "measured_us", "model_us", "rel_err", "loo_us", "loo_err");
  for (size_t i = 0; i < w8->npts; i++) {
    int kind;
    tps_xw8_time_us(&w8->m, w8->gpu, w8->rows[i], w8->n, w8->k, &kind);
    printf("%8ld %7s %11.3f %9.3f %+7.1f%% %9.3f %+7.1f%%\n", w8->rows[i], kind >= 0 ? tps_w8p_kind_names[kind] : "-", w8->t[i], w8->fit_us[i],
           100 * (w8->fit_us[i] / w8->t[i] - 1), w8->loo_us[i], 100 * (w8->loo_us[i] / w8->t[i] - 1));
  }
  printf("\n");
}

/* Summary lines per group of forms: 0 dense-bf16 and native-fp8, 1 fp8-block and nvfp4. */
#define NGRP 2
static int grp_of(int path) { return path <= TPS_XG_FP8 ? 0 : 1; }
static const char *grp_name(int g) { return g ? "fp8-block, nvfp4" : "dense-bf16, native-fp8"; }

static void print_breakeven(const loo_run *r) {
  int agree[NGRP] = {0}, grid[NGRP] = {0}, within[NGRP] = {0}, cov[NGRP] = {0}, ncov[NGRP] = {0}, both[NGRP] = {0}, nrow[NGRP] = {0};
  printf("# break-even tokens (N %d, %.0f bytes per token): from the GPU's measured GEMM and gather\n", BE_N, OUT_BYTES_PER_TOKEN);
  printf("# (Steffen in log-log) vs from the models fitted without it; 'none': the split does not win\n");
  printf("# for good below %.0f tokens; decisions at T = 1, 2, 4 .. 16384; ag+10%%: the measured break-even\n", BE_TMAX);
  printf("# with the measured gather 10%% slower (how much a gather error moves the answer)\n");
  printf("%-20s %-10s %3s %9s %9s %8s %9s %9s %7s %9s %9s\n", "gpu", "path", "tp", "measured", "predicted", "rel_err", "lo90", "hi90",
         "covered", "decisions", "ag+10%");
  for (int i = 0; i < r->nbe; i++) {
    const be_row *b = &r->be[i];
    double rel = b->pred / b->meas - 1.0;
    printf("%-20s %-10s %3d", b->gpu->name, tps_xg_path_names[b->path], b->tp);
    print_be(b->meas);
    print_be(b->pred);
    if (b->meas >= BE_NONE && b->pred >= BE_NONE) printf(" %8s", "both");
    else printf(" %+7.1f%%", 100 * rel);
    if (b->has_interval) { print_be(b->lo); print_be(b->hi); printf(" %7s", b->covered ? "yes" : "no"); }
    else printf(" %9s %9s %7s", "-", "-", "-");
    printf(" %6d/%d", b->agree, b->grid);
    print_be(b->meas_ag10);
    printf("\n");
    int q = grp_of(b->path);
    nrow[q]++;
    agree[q] += b->agree;
    grid[q] += b->grid;
    /* a case where neither side splits below BE_TMAX ("both") has no break-even to compare */
    if (b->meas >= BE_NONE && b->pred >= BE_NONE) both[q]++;
    else within[q] += fabs(rel) <= 0.15;
    if (b->has_interval) { ncov[q]++; cov[q] += b->covered; }
  }
  for (int q = 0; q < NGRP; q++)
    if (nrow[q])
      printf("# %s: break-even within 15%%: %d of %d (%d more where neither side splits: 'both'); decisions agree: %d of %d "
             "(%.1f%%); 90%% interval covers: %d of %d\n", grp_name(q), within[q], nrow[q] - both[q], both[q], agree[q], grid[q],
             100.0 * agree[q] / grid[q], cov[q], ncov[q]);
}

/* The excess target of a leave-one-GPU-out threshold (issue 27 item 5): EX_*_TARGET, loo_run.h. */
static int ex_met(const tps_excess *x) { return x->n && x->mean <= EX_MEAN_TARGET && x->worst <= EX_WORST_TARGET; }

static void print_ex(const tps_excess *x, int at) {
  if (!x->n) { printf(" %7s %7s%s", "-", "-", at ? "      -" : ""); return; }
  printf(" %6.2f%% %6.1f%%", 100 * x->mean, 100 * x->worst);
  if (at && x->worst > 0) printf(" %6ld", x->t_worst);
  else if (at) printf(" %6s", "-");
}

static void print_excess(const loo_run *r) {
  int met[NGRP] = {0}, met2[NGRP] = {0}, n[NGRP] = {0};
  printf("\n# decision quality: what the threshold costs on the held-out GPU's measured parts (GEMM N %d and\n", BE_N);
  printf("# gather, as the measured break-even above): excess(T) = (split(T) if T >= threshold else replicated(T))\n");
  printf("# / min(split(T), replicated(T)) - 1 at T = round(2^(i/8)) = 1..%.0f (95 points); mean and worst over them;\n", BE_TMAX);
  printf("# at_T: where the worst is ('-': nowhere).  threshold: the predicted break-even; written: the threshold the tool\n");
  printf("# writes from the same prediction (least excess on its own predicted costs, model/predict/excess.h: a thresholds\n");
  printf("# file's split_from_tokens); measured: the measured break-even (what a single threshold costs\n");
  printf("# even when the break-even is right); best: of never and every grid T, the threshold nearest the target on\n");
  printf("# the measured parts (least max(mean / 1%%, worst / 10%%), model/predict/excess.h): where it misses, no single\n");
  printf("# threshold meets the target.  Target (issue 27): mean <= 1%%, worst <= 10%%.\n");
  printf("%-20s %-10s %3s %9s %7s %7s %6s %7s %7s %7s %7s %7s %6s %7s %7s %6s\n", "gpu", "path", "tp", "threshold", "mean", "worst",
         "at_T", "written", "mean", "worst", "m_mean", "m_worst", "best", "b_mean", "b_worst", "target");
  for (int i = 0; i < r->nbe; i++) {
    const be_row *b = &r->be[i];
    printf("%-20s %-10s %3d", b->gpu->name, tps_xg_path_names[b->path], b->tp);
    print_be(b->pred);
    print_ex(&b->ex_pred, 1);
    if (isnan(b->thr)) printf(" %7s", "-");
    else if (isfinite(b->thr)) printf(" %7.0f", b->thr);
    else printf(" %7s", "never");
    print_ex(&b->ex_thr, 0);
    print_ex(&b->ex_meas, 0);
    if (!b->ex_best.n) printf(" %6s", "-");
    else if (isfinite(b->best_thr)) printf(" %6.0f", b->best_thr);
    else printf(" %6s", "never");
    print_ex(&b->ex_best, 0);
    printf(" %6s\n", ex_met(&b->ex_pred) ? "met" : "missed");
    int q = grp_of(b->path);
    n[q]++;
    met[q] += ex_met(&b->ex_pred);
    met2[q] += ex_met(&b->ex_thr);
  }
  for (int q = 0; q < NGRP; q++)
    if (n[q])
      printf("# %s: excess target met (mean <= 1%%, worst <= 10%%): %d of %d with the break-even as the threshold, %d of %d "
             "with the written threshold\n", grp_name(q), met[q], n[q], met2[q], n[q]);
  int meth[NGRP] = {0}, nh[NGRP] = {0}, meth_sib[NGRP] = {0}, nsib[NGRP] = {0}, floor_miss[NGRP] = {0};
  int mbest[NGRP] = {0}, mbest_sib[NGRP] = {0};
  printf("\n# decision quality of the evidence hierarchy (model/predict/resolve.h): each part from a measured sibling among\n");
  printf("# the training GPUs (GEMM: same architecture, moved by the regime's spec ratio; gather: same fabric, as\n");
  printf("# measured) where there is one, else the cross-GPU model as above; scored as above ('-': the model answered)\n");
  printf("# written: the threshold the tool writes from the answer (least excess on its own predicted costs, as 'written'\n");
  printf("# above) instead of its break-even, scored the same way on the measured parts\n");
  printf("%-20s %-10s %3s %-12s %-12s %9s %7s %7s %6s %6s %7s %7s %7s %8s\n", "gpu", "path", "tp", "gemm_from", "gather_from",
         "threshold", "mean", "worst", "at_T", "target", "written", "w_mean", "w_worst", "w_target");
  for (int i = 0; i < r->nbe; i++) {
    const be_row *b = &r->be[i];
    printf("%-20s %-10s %3d %-12s %-12s", b->gpu->name, tps_xg_path_names[b->path], b->tp, b->sib_gemm[0] ? b->sib_gemm : "-",
           b->sib_gather[0] ? b->sib_gather : "-");
    print_be(b->pred_h);
    print_ex(&b->ex_h, 1);
    printf(" %6s", ex_met(&b->ex_h) ? "met" : "missed");
    if (!b->ex_hthr.n) printf(" %7s", "-");
    else if (isfinite(b->hthr)) printf(" %7.0f", b->hthr);
    else printf(" %7s", "never");
    print_ex(&b->ex_hthr, 0);
    printf(" %8s\n", b->ex_hthr.n ? ex_met(&b->ex_hthr) ? "met" : "missed" : "-");
    int q = grp_of(b->path);
    nh[q]++;
    meth[q] += ex_met(&b->ex_h);
    mbest[q] += ex_met(&b->ex_hthr);
    if (b->sib_gemm[0] || b->sib_gather[0]) { nsib[q]++; meth_sib[q] += ex_met(&b->ex_h); mbest_sib[q] += ex_met(&b->ex_hthr); }
    /* missed where the best single threshold on the measured parts misses too: no threshold
     * meets the target there (the split wins in bands, or by little for long) */
    floor_miss[q] += !ex_met(&b->ex_h) && b->ex_best.n && !ex_met(&b->ex_best);
  }
  for (int q = 0; q < NGRP; q++)
    if (nh[q])
      printf("# %s: excess target met by the hierarchy: %d of %d (%d of the %d rows a sibling answers); of the %d missed, %d miss "
             "with the best single threshold too (best, b_mean, b_worst above: no threshold meets the target there)\n",
             grp_name(q), meth[q], nh[q], meth_sib[q], nsib[q], nh[q] - meth[q], floor_miss[q]);
  for (int q = 0; q < NGRP; q++)
    if (nh[q])
      printf("# %s: with the written threshold (least predicted excess, a thresholds file's split_from_tokens) instead of the "
             "break-even: %d of %d (%d of the %d rows a sibling answers)\n",
             grp_name(q), mbest[q], nh[q], mbest_sib[q], nsib[q]);
}

/* ------------------------------------------------------------------ JSON */

static json_t *gemm_json(const loo_run *r, int path, int i) {
  const gemm_part *g = &r->gp[path];
  const gset *s = &g->sets[i];
  json_t *o = err_json(&g->r.err[i]), *pts = json_array();
  for (size_t j = 0; j < s->n; j++) {
    if (!s->eval[j]) continue;
    json_t *q = json_object();
    json_object_set_new(q, "m", json_integer(s->m[j]));
    json_object_set_new(q, "n", json_integer(s->nn[j]));
    json_object_set_new(q, "line", json_integer(s->line[j]));
    tps_json_set_num(q, "measured_us", s->t[j]);
    tps_json_set_num(q, "predicted_us", s->pred[j]);
    tps_json_set_num(q, "lo90_us", r->hold ? NAN : s->pred[j] * exp(-s->sigma_pred[j]));
    tps_json_set_num(q, "hi90_us", r->hold ? NAN : s->pred[j] * exp(s->sigma_pred[j]));
    json_array_append_new(pts, q);
  }
  json_object_set_new(o, "points", pts);
  /* the fold that predicted it (fitted without this GPU): e.g. floor_bench_us, fitted
   * when another GPU's bench table is in the fold, else tps_xg_bench_floor_spec_us */
  json_t *fp = json_object();
  for (int j = 0; j < TPS_XG_NPAR; j++) tps_json_set_num(fp, tps_xg_par_names[j], g->r.fold[g->r.grp[i]].p[j]);
  json_object_set_new(o, "fold_params", fp);
  json_object_set_new(o, "gpu", json_string(s->gpu->name));
  json_object_set_new(o, "path", json_string(tps_xg_path_names[path]));
  json_object_set_new(o, "data", json_string(s->what));
  json_object_set_new(o, "file", json_string(s->file));
  tps_json_set_num(o, "coverage90", r->hold ? NAN : g->r.cover[i]);
  tps_json_set_num(o, "width90", r->hold ? NAN : g->r.width[i]);
  return o;
}

static json_t *gather_json(const loo_run *r, int a) {
  const aset *as = &r->as[a];
  const gather_loo *ar = &r->ar;
  json_t *o = err_json(&ar->err[a]);
  json_object_set_new(o, "gpu", json_string(as->gpu->name));
  json_object_set_new(o, "fabric", json_string(as->gpu->nvlink ? "nvlink" : "pcie"));
  json_object_set_new(o, "file", json_string(as->file));
  tps_json_set_num(o, "median_abs_rel_2", ar->err_n[a][0].med_abs);
  tps_json_set_num(o, "median_abs_rel_4", ar->err_n[a][1].med_abs);
  tps_json_set_num(o, "coverage90", ar->hw_ok[a] ? ar->cover[a] : NAN);
  json_t *pts = json_array();
  for (size_t j = 0; j < as->n; j++) {
    json_t *q = json_object();
    json_object_set_new(q, "ranks", json_integer(as->ranks[j]));
    tps_json_set_num(q, "bytes", as->bytes[j]);
    tps_json_set_num(q, "measured_us", as->t[j]);
    tps_json_set_num(q, "predicted_us", as->pred[j]);
    tps_json_set_num(q, "lo90_us", ar->hw_ok[a] ? as->pred[j] * exp(-ar->hw[a]) : NAN);
    tps_json_set_num(q, "hi90_us", ar->hw_ok[a] ? as->pred[j] * exp(ar->hw[a]) : NAN);
    json_object_set_new(q, "scored", json_boolean(as->eval[j]));
    json_array_append_new(pts, q);
  }
  json_object_set_new(o, "points", pts);
  return o;
}

/* {"threshold": T or null (never), "mean", "worst", "worst_at_tokens", "points"} */
static json_t *excess_json(double threshold, const tps_excess *x) {
  json_t *o = json_object();
  tps_json_set_num(o, "threshold", isfinite(threshold) ? threshold : NAN);
  tps_json_set_num(o, "mean", x->n ? x->mean : NAN);
  tps_json_set_num(o, "worst", x->n ? x->worst : NAN);
  json_object_set_new(o, "worst_at_tokens", x->n ? json_integer(x->t_worst) : json_null());
  json_object_set_new(o, "points", json_integer((json_int_t)x->n));
  return o;
}

static json_t *be_json(const be_row *b) {
  json_t *o = json_object();
  json_object_set_new(o, "gpu", json_string(b->gpu->name));
  json_object_set_new(o, "path", json_string(tps_xg_path_names[b->path]));
  json_object_set_new(o, "tp", json_integer(b->tp));
  tps_json_set_num(o, "measured", b->meas >= BE_NONE ? NAN : b->meas);
  tps_json_set_num(o, "predicted", b->pred >= BE_NONE ? NAN : b->pred);
  tps_json_set_num(o, "lo90", b->has_interval ? b->lo : NAN);
  tps_json_set_num(o, "hi90", b->has_interval ? b->hi : NAN);
  json_object_set_new(o, "decisions_agree", json_integer(b->agree));
  json_object_set_new(o, "decisions", json_integer(b->grid));
  /* decision quality (issue 27 item 5): the excess of thresholds on the measured parts */
  json_object_set_new(o, "excess", excess_json(tps_loo_as_threshold(b->pred), &b->ex_pred));
  json_object_set_new(o, "excess_written", excess_json(isnan(b->thr) ? TPS_EXCESS_NEVER : b->thr, &b->ex_thr));
  json_object_set_new(o, "excess_measured", excess_json(tps_loo_as_threshold(b->meas), &b->ex_meas));
  json_object_set_new(o, "excess_best", excess_json(b->best_thr, &b->ex_best));
  json_object_set_new(o, "excess_target_met", json_boolean(ex_met(&b->ex_pred)));
  json_t *hj = excess_json(tps_loo_as_threshold(b->pred_h), &b->ex_h);
  json_object_set_new(hj, "gemm_sibling", b->sib_gemm[0] ? json_string(b->sib_gemm) : json_null());
  json_object_set_new(hj, "gather_sibling", b->sib_gather[0] ? json_string(b->sib_gather) : json_null());
  json_object_set_new(o, "excess_hierarchy", hj);
  json_object_set_new(o, "excess_hierarchy_written", excess_json(isnan(b->hthr) ? TPS_EXCESS_NEVER : b->hthr, &b->ex_hthr));
  return o;
}

static json_t *w8_json(const w8_part *w8) {
  json_t *o = json_object(), *pts = json_array();
  json_object_set_new(o, "gpu", json_string(w8->gpu->name));
  json_object_set_new(o, "file", json_string(w8->file));
  json_object_set_new(o, "in_sample", err_json(&w8->in));
  json_object_set_new(o, "leave_one_m_out", err_json(&w8->loo));
  for (size_t i = 0; i < w8->npts; i++) {
    json_t *q = json_object();
    json_object_set_new(q, "rows", json_integer(w8->rows[i]));
    tps_json_set_num(q, "measured_us", w8->t[i]);
    tps_json_set_num(q, "model_us", w8->fit_us[i]);
    tps_json_set_num(q, "loo_us", w8->loo_us[i]);
    json_array_append_new(pts, q);
  }
  json_object_set_new(o, "points", pts);
  return o;
}

int tps_loo_print_json(const loo_run *r) {
  json_t *root = json_object(), *jg = json_array(), *ja = json_array(), *jb = json_array();
  for (int path = 0; path < TPS_XG_NPATH && r->do_gemm; path++)
    for (int i = 0; i < r->gp[path].ns; i++)
      if (r->gp[path].r.fold_ok[r->gp[path].r.grp[i]]) json_array_append_new(jg, gemm_json(r, path, i));
  for (int a = 0; a < r->nas && r->do_gather; a++) json_array_append_new(ja, gather_json(r, a));
  for (int i = 0; i < r->nbe && r->do_be; i++) json_array_append_new(jb, be_json(&r->be[i]));
  if (r->do_w8) json_object_set_new(root, "w8a16", w8_json(&r->w8));
  if (r->do_xfer) json_object_set_new(root, "transfer", tps_loo_xfer_json(r));
  json_object_set_new(root, "gemm", jg);
  json_object_set_new(root, "gather", ja);
  json_object_set_new(root, "breakeven", jb);
  return tps_json_print(root) ? TPS_EXIT_FAIL : TPS_EXIT_OK;
}

void tps_loo_print_text(const loo_run *r) {
  if (r->do_gemm) print_gemm(r);
  if (r->do_gather) print_gather(r);
  if (r->do_xfer) tps_loo_xfer_print(r);
  if (r->do_w8) print_w8(&r->w8);
  if (r->do_be && r->nbe) { print_breakeven(r); print_excess(r); }
}
