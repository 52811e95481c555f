/* cmd_loo.c: `tpsplit fit --loo-gpu [--json] [--only PART] [--hold-out GPU]`: leave-one-
 * GPU-out evaluation of the cross-GPU models on the bundled measurements (doc/loo.md holds
 * its output).  Reached from cmd_fit (one hook line there).
 *
 * GEMM (model/latency/xgemm.h), paths dense-bf16 and native-fp8, K = 5120:
 *   AIConfigurator tables data/aic/gemm_<gpu>_k5120.tsv.gz: N = 1536 and 2048 scored (the
 *   measured N either side of 1792), N = 512, 1024, 3072, 4096 fitted only; M = 1..16384
 *   (a100_sxm: its sglang and trtllm rows, one GPU); our tables (tpsplit bench gemm) of the
 *   H200 and the H100, N = 1792 (each one GPU with its AIC table, one fold).
 *   For every GPU g: fit on the other GPUs, predict every point of g; the 90% interval's
 *   log half-width is the 90% quantile of the training GPUs' nested leave-one-out |log
 *   residuals| (each training GPU h predicted by a fit without g and h).
 * All-gather (model/latency/xgather.h): AIC nccl-tests all_gather tables, NVLink and PCIe GPUs
 *   fitted apart; scored at 8 GPUs, 64 KiB..64 MiB; intervals as for the GEMM.
 * Break-even: every GPU with a measured GEMM and gather, TP 2/4/8: from its measured parts
 *   vs from the models fitted without it; decisions at T = 1, 2, 4 .. 16384; and what the
 *   predicted threshold costs on the measured parts (model/predict/excess.h: mean and worst
 *   excess over T = 1..16384, 8 points per octave; also for the threshold written from it, and
 *   for the measured break-even: the cost of one threshold when the break-even is right).
 * w8a16 (model/latency/xgemm.h, tps_xw8): our kernels on data/h100_w8a16_grid_5120x1792_w8a16.tsv, in sample and
 *   leaving one M out.
 * Transfer accuracy (src/cli/loo_xfer.c, model/predict/xfer.h): the evidence hierarchy's answer
 *   per held-out GPU (a measured sibling, else the folds above) against the model alone.
 * The data and the fits: src/cli/loo_data.h.  Everything is read before anything is printed;
 * output is deterministic (fixed starts, no random numbers). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/cli/cmdopt.h"
#include "src/base/jsonout.h"
#include "model/core/status.h"
#include "src/cli/tpsplit.h"
#include "src/cli/cmdopt.h"
#include "src/base/util.h"
#include "src/cli/loo_data.h"
#include "src/cli/loo_run.h"
#include "model/calib/calib.h"
#include "model/predict/excess.h"
#include "model/predict/resolve.h"
#include "src/base/parallel.h"

int cmd_fit_loo_gpu(int argc, char **argv);



/* The fits of run_gemm_loo, made on worker threads (src/base/parallel.h) in two phases: first
 * job g is the fold without GPU g (from the prior, into r->fold[g], status st[g][g]); then job k
 * is the nested fit without g and h, idx[k] = g * MAXSETS + h (from fold g, into f[g][h], status
 * st[g][h]).  Each job writes its own slots; run_gemm_loo reads them in the order the fits were
 * once made one after another, so the results do not depend on the thread count. */
typedef struct {
  tps_xg_path path;
  const gset *sets;
  int ns;
  gemm_loo *r;
  int nested_phase, idx[MAXSETS * MAXSETS]; /* nested job k: the pair idx[k] = g * MAXSETS + h */
  int st[MAXSETS][MAXSETS];       /* nested status per (g, h); the folds': st[g][g] */
  tps_xg_model f[MAXSETS][MAXSETS]; /* nested fit (g, h) */
} loo_fits;

static void fit_job(void *ctx, int i) {
  loo_fits *j = ctx;
  int skipg[MAXSETS] = {0};
  if (!j->nested_phase) {
    if (!j->r->fold_ok[i]) return;
    skipg[i] = 1;
    j->st[i][i] = tps_lgo_fit_except(j->path, j->sets, j->ns, j->r->grp, skipg, &j->r->fold[i], NULL);
    return;
  }
  int g = j->idx[i] / MAXSETS, h = j->idx[i] % MAXSETS;
  skipg[g] = skipg[h] = 1;
  j->st[g][h] = tps_lgo_fit_except(j->path, j->sets, j->ns, j->r->grp, skipg, &j->f[g][h], &j->r->fold[g]);
}

/* only (may be NULL): hold out that GPU alone (no nested fits, no intervals). */
static int run_gemm_loo(tps_xg_path path, gset *sets, int ns, gemm_loo *r, const tps_gpu *only) {
  int nested = only == NULL, nt = tps_threads_default();
  loo_fits *j = calloc(1, sizeof *j);
  if (!j) return TPS_ENOMEM;
  j->path = path;
  j->sets = sets;
  j->ns = ns;
  j->r = r;
  r->ngpu = tps_lgo_group_sets(sets, ns, r->grp);
  for (int g = 0; g < r->ngpu; g++) {
    int i0 = 0;
    while (r->grp[i0] != g) i0++;
    r->fold_ok[g] = !only || sets[i0].gpu == only;
  }
  tps_parallel_for(r->ngpu, nt, fit_job, j);
  for (int g = 0; g < r->ngpu; g++)
    if (r->fold_ok[g] && j->st[g][g] != TPS_OK) { int st = j->st[g][g]; free(j); return st; }
  for (int i = 0; i < ns; i++) {
    if (!r->fold_ok[r->grp[i]]) { r->err[i] = (tps_loo_err){0, NAN, NAN, NAN}; continue; }
    tps_lgo_predict_set(&r->fold[r->grp[i]], &sets[i], sets[i].pred);
    double *rel = malloc(sets[i].n * sizeof *rel);
    size_t ne = 0;
    if (!rel) { free(j); return TPS_ENOMEM; }
    for (size_t q = 0; q < sets[i].n; q++) if (sets[i].eval[q]) rel[ne++] = sets[i].pred[q] / sets[i].t[q] - 1.0;
    r->err[i] = tps_loo_summary(rel, ne);
    free(rel);
  }
  if (nested) {
    /* every pair (g, h), h != g; the diagonal jobs do nothing */
    j->nested_phase = 1;
    int njobs = 0;
    for (int g = 0; g < r->ngpu; g++)
      for (int h = 0; h < r->ngpu; h++)
        if (h != g) j->idx[njobs++] = g * MAXSETS + h;
    tps_parallel_for(njobs, nt, fit_job, j);
  }
  for (int g = 0; g < r->ngpu && nested; g++) {
    /* nested: residuals of every training GPU h predicted by a fit without g and h */
    size_t tot = 0;
    for (int i = 0; i < ns; i++) if (r->grp[i] != g) tot += sets[i].n;
    double *lr = malloc((tot ? tot : 1) * sizeof *lr), *pr = NULL;
    size_t k = 0;
    if (!lr) { free(j); return TPS_ENOMEM; }
    for (int h = 0; h < r->ngpu; h++) {
      if (h == g) continue;
      /* as when the fits were made here one after another: nest[g][h] holds the fit (g, h)
       * whatever its status, nest[h][g] too where it succeeded; a later g overwrites both */
      tps_xg_model *mp = &r->nest[g][h], m;
      int st = j->st[g][h];
      *mp = j->f[g][h];
      r->nest_ok[g][h] = r->nest_ok[h][g] = st == TPS_OK;
      if (st == TPS_ETOOFEW) continue; /* no GPU left to train on (nvfp4: two GPUs measured) */
      if (st != TPS_OK) { free(lr); free(j); return st; }
      r->nest[h][g] = *mp;
      m = *mp;
      for (int i = 0; i < ns; i++) {
        if (r->grp[i] != h) continue;
        pr = malloc(sets[i].n * sizeof *pr);
        if (!pr) { free(lr); free(j); return TPS_ENOMEM; }
        tps_lgo_predict_set(&m, &sets[i], pr);
        for (size_t q = 0; q < sets[i].n; q++) if (sets[i].eval[q]) lr[k++] = log(pr[q] / sets[i].t[q]);
        free(pr);
      }
    }
    r->sigma[g] = k ? tps_loo_quantile_abs(lr, k, 0.9, HW_FLOOR) : NAN; /* no nested fit: no interval */
    free(lr);
  }
  free(j);
  for (int i = 0; i < ns && nested; i++) {
    size_t in = 0;
    double sg = r->sigma[r->grp[i]], hw = sg;
    for (size_t j = 0; j < sets[i].n; j++) {
      double lo = sets[i].pred[j] * exp(-hw), hi = sets[i].pred[j] * exp(hw);
      sets[i].sigma_pred[j] = sg;
      if (sets[i].eval[j] && sets[i].t[j] >= lo && sets[i].t[j] <= hi) in++;
    }
    r->cover[i] = sets[i].neval && isfinite(sg) ? (double)in / (double)sets[i].neval : NAN;
    r->width[i] = exp(hw) - exp(-hw);
  }
  return TPS_OK;
}



const int tps_loo_ag_ranks[TPS_LOO_NRANKS] = {2, 4, 8};

static int run_gather_loo(aset *sets, int ns, gather_loo *r) {
  int skip[MAXSETS];
  for (int g = 0; g < ns; g++) {
    memset(skip, 0, sizeof skip);
    skip[g] = 1;
    int pcie = sets[g].gpu->nvlink == 0;
    int st = tps_lgo_fit_gather_except(sets, ns, skip, pcie, &r->fold[g]);
    r->fold_ok[g] = st == TPS_OK;
    if (st != TPS_OK && st != TPS_ETOOFEW) return st;
    double *rel = malloc(sets[g].n * sizeof *rel);
    if (!rel) return TPS_ENOMEM;
    for (size_t j = 0; j < sets[g].n; j++)
      sets[g].pred[j] = r->fold_ok[g] ? tps_xga_time_us(&r->fold[g], sets[g].gpu, sets[g].bytes[j], sets[g].ranks[j], TPS_XGA_NCCL, NULL) : NAN;
    for (int q = 0; q <= TPS_LOO_NRANKS; q++) { /* each rank count, then (q == TPS_LOO_NRANKS) all eval points */
      size_t ne = 0;
      for (size_t j = 0; j < sets[g].n; j++) {
        int in = q == TPS_LOO_NRANKS ? sets[g].eval[j]
                        : sets[g].ranks[j] == tps_loo_ag_ranks[q] && sets[g].bytes[j] >= AG_EVAL_LO && sets[g].bytes[j] <= AG_EVAL_HI;
        if (in) rel[ne++] = sets[g].pred[j] / sets[g].t[j] - 1.0;
      }
      if (q == TPS_LOO_NRANKS) r->err[g] = tps_loo_summary(rel, ne);
      else r->err_n[g][q] = tps_loo_summary(rel, ne);
    }
    /* one measured point: the held-out GPU's smallest-size time at each rank count sets the
     * latency (pred + (measured - pred) at that size); everything else stays transferred */
    {
      size_t ne = 0;
      for (size_t j = 0; j < sets[g].n; j++) {
        if (!sets[g].eval[j]) continue;
        double d = NAN, smin = INFINITY;
        for (size_t i = 0; i < sets[g].n; i++)
          if (sets[g].ranks[i] == sets[g].ranks[j] && sets[g].bytes[i] < smin) { smin = sets[g].bytes[i]; d = sets[g].t[i] - sets[g].pred[i]; }
        rel[ne++] = (sets[g].pred[j] + d) / sets[g].t[j] - 1.0;
      }
      r->err_1pt[g] = tps_loo_summary(rel, ne);
    }
    free(rel);
  }
  /* nested: interval half-width of g from the other GPUs of its fabric, each predicted
   * without g and itself: the 90% quantile of each such GPU's |log residuals|, and the
   * widest of them (a GPU's errors are correlated, a latency offset or a protocol switch of
   * its own; with two or three GPUs per fabric the 90% point of the spread between GPUs is
   * not below the largest one seen, so pooling their points would understate it) */
  for (int g = 0; g < ns; g++) {
    int pcie = sets[g].gpu->nvlink == 0;
    double hw = NAN;
    double *lr = NULL;
    size_t k = 0, cap = 0;
    for (int h = 0; h < ns; h++) {
      if (h == g || (sets[h].gpu->nvlink == 0) != pcie) continue;
      memset(skip, 0, sizeof skip);
      skip[g] = skip[h] = 1;
      int st = tps_lgo_fit_gather_except(sets, ns, skip, pcie, &r->nest[g][h]);
      r->nest_ok[g][h] = st == TPS_OK;
      if (st != TPS_OK) continue;
      double *nl = realloc(lr, (cap + sets[h].n) * sizeof *lr);
      if (!nl) { free(lr); return TPS_ENOMEM; }
      lr = nl;
      cap += sets[h].n;
      size_t k0 = k;
      for (size_t j = 0; j < sets[h].n; j++)
        if (sets[h].eval[j])
          lr[k++] = log(tps_xga_time_us(&r->nest[g][h], sets[h].gpu, sets[h].bytes[j], sets[h].ranks[j], TPS_XGA_NCCL, NULL) / sets[h].t[j]);
      if (k > k0) {
        double q = tps_loo_quantile_abs(lr + k0, k - k0, 0.9, HW_FLOOR);
        if (!(q <= hw)) hw = q;
      }
    }
    r->hw_ok[g] = k > 0;
    r->hw[g] = k ? hw : NAN;
    free(lr);
    size_t in = 0;
    for (size_t j = 0; j < sets[g].n && r->hw_ok[g]; j++)
      if (sets[g].eval[j] && fabs(log(sets[g].pred[j] / sets[g].t[j])) <= r->hw[g]) in++;
    r->cover[g] = r->hw_ok[g] && sets[g].neval ? (double)in / (double)sets[g].neval : NAN;
  }
  return TPS_OK;
}

/* ------------------------------------------------------------------ break-even */


typedef struct { const tps_xg_model *m; const tps_gpu *gpu; tps_xg_harness h; int hint; } gemm_fn_ctx;
typedef struct { const tps_xga_model *m; const tps_gpu *gpu; int n; } gather_fn_ctx;

static double gemm_fn(double x, void *vc) {
  gemm_fn_ctx *c = vc;
  return tps_xg_time_hint_us(c->m, c->gpu, &c->h, (long)ceil(x), BE_N, GEMM_K, &c->hint); /* the same values */
}
static double gather_fn(double x, void *vc) {
  gather_fn_ctx *c = vc;
  return tps_xga_time_us(c->m, c->gpu, x, c->n, TPS_XGA_NCCL, NULL);
}


static double be_or_none(double b) { return b > 0 ? b : BE_NONE; }

/* A measured curve scaled by a factor (the break-even's sensitivity to the gather). */
typedef struct { const tps_loo_curve *c; double f; } scaled_ctx;
static double scaled_fn(double x, void *vc) {
  scaled_ctx *s = vc;
  return s->f * tps_loo_curve_eval(s->c, x);
}

/* A GEMM and a gather curve (the held-out GPU's measured parts, or a prediction's) as the costs of
 * both choices. */
typedef struct { const tps_loo_curve *g, *a; int tp; } curve_costs;
static double mc_replicated(long T, void *vc) {
  const curve_costs *m = vc;
  return tps_loo_curve_eval(m->g, (double)T);
}
static double mc_split(long T, void *vc) {
  const curve_costs *m = vc;
  return tps_loo_curve_eval(m->g, ceil((double)T / m->tp)) + tps_loo_curve_eval(m->a, (double)T * OUT_BYTES_PER_TOKEN);
}

/* The threshold the tool writes from a GEMM and a gather curve (tps_threshold_choose on their
 * costs): TPS_EXCESS_NEVER never, NaN when none could be made. */
static double written_threshold(const tps_loo_curve *g, const tps_loo_curve *a, int tp) {
  curve_costs mc = {g, a, tp};
  tps_costs c = {mc_replicated, mc_split, &mc};
  tps_excess x;
  long t = -1;
  if (!g || !a || tps_threshold_choose(&c, (long)BE_TMAX, &t, &x) != 0) return NAN;
  return t > 0 ? (double)t : TPS_EXCESS_NEVER;
}

/* The model's break-even of GPU gpu at tp; dec: its decisions at T = 1, 2, 4 .. 16384; thr
 * (may be NULL): the threshold written from the same curves. */
static double be_model(const tps_xg_model *gm, const tps_xga_model *am, const tps_gpu *gpu, int tp, int *dec, double *thr) {
  gemm_fn_ctx gc = {gm, gpu, {TPS_XG_AIC}, -1};
  gather_fn_ctx ac = {am, gpu, tp};
  tps_loo_curve *g = tps_loo_curve_fn(gemm_fn, &gc), *a = tps_loo_curve_fn(gather_fn, &ac);
  double b = g && a ? tps_loo_breakeven(g, a, tp, OUT_BYTES_PER_TOKEN, BE_TMAX) : NAN;
  if (thr) *thr = written_threshold(g, a, tp);
  for (int i = 0; dec && i < 15; i++) dec[i] = g && a ? tps_loo_split_wins(g, a, tp, OUT_BYTES_PER_TOKEN, (double)(1 << i)) : -1;
  tps_loo_curve_free(g);
  tps_loo_curve_free(a);
  return b;
}

int tps_loo_gemm_group_of(const gemm_part *gp, const tps_gpu *gpu, int *set) {
  for (int i = 0; i < gp->ns; i++)
    if (gp->sets[i].gpu == gpu) { if (set) *set = i; return gp->r.grp[i]; }
  return -1;
}



/* ------------------------------------------------------------------ break-even rows */


/* The interval of row b (GPU a): break-even errors of the other GPUs of the fabric, each
 * predicted by fits without this GPU and itself (all TP; the paths of the row's group:
 * dense-bf16 and native-fp8, or fp8-block and nvfp4). */
static void be_interval(const loo_run *r, int a, be_row *b) {
  const aset *as = r->as;
  const gather_loo *ar = &r->ar;
  double lr[2 * 3 * MAXSETS];
  size_t k = 0;
  double hw = HW_FLOOR;
  for (int h = 0; h < r->nas; h++) {
    if (h == a || (as[h].gpu->nvlink == 0) != (as[a].gpu->nvlink == 0) || !ar->nest_ok[a][h]) continue;
    size_t k0 = k;
    for (int p2 = 0; p2 < TPS_XG_NPATH; p2++) {
      if ((p2 <= TPS_XG_FP8) != (b->path <= TPS_XG_FP8)) continue;
      const gemm_part *gp = &r->gp[p2];
      int sh = 0, gh = tps_loo_gemm_group_of(gp, as[h].gpu, &sh), ga = tps_loo_gemm_group_of(gp, as[a].gpu, NULL);
      if (gh < 0 || ga < 0 || gp->sets[sh].harness.kind != TPS_XG_AIC || !gp->r.nest_ok[ga][gh]) continue;
      tps_loo_curve *hg = tps_lgo_measured_gemm(&gp->sets[sh], BE_N);
      for (int q2 = 0; q2 < TPS_LOO_NRANKS; q2++) {
        tps_loo_curve *ha = tps_lgo_measured_gather(&as[h], tps_loo_ag_ranks[q2]);
        if (hg && ha) {
          double mh = be_or_none(tps_loo_breakeven(hg, ha, tps_loo_ag_ranks[q2], OUT_BYTES_PER_TOKEN, BE_TMAX));
          double ph = be_or_none(be_model(&gp->r.nest[ga][gh], &ar->nest[a][h], as[h].gpu, tps_loo_ag_ranks[q2], NULL, NULL));
          lr[k++] = log(ph / mh);
        }
        tps_loo_curve_free(ha);
      }
      tps_loo_curve_free(hg);
    }
    /* the widest of the other GPUs (as the gather's width, see run_gather_loo) */
    if (k > k0) hw = fmax(hw, tps_loo_quantile_abs(lr + k0, k - k0, 0.9, HW_FLOOR));
  }
  b->has_interval = k > 0;
  if (k) {
    b->lo = b->pred * exp(-hw);
    b->hi = b->pred * exp(hw);
    b->covered = b->meas >= b->lo && b->meas <= b->hi;
  }
}

/* A sibling's measured GEMM curve moved to the target (tps_resolve_sibling_gemm_us). */
typedef struct { const tps_loo_curve *c; const tps_gpu *sib, *tgt; const tps_path *path; } sib_ctx;
static double sib_gemm_fn(double x, void *vc) {
  const sib_ctx *s = vc;
  double m = ceil(x), t = tps_loo_curve_eval(s->c, m);
  return tps_resolve_sibling_gemm_us(s->sib, s->tgt, s->path, m, BE_N, GEMM_K, t, NULL, NULL);
}

/* Row b's answer by the evidence hierarchy: the nearest training GPU that is GPU a's sibling
 * with a measured (AIC) GEMM of this path, and the nearest with a measured gather at this TP
 * (model/predict/resolve.h), each part else its cross-GPU model; its break-even and excess
 * on a's measured parts (mg, ma). */
static void be_hierarchy(const loo_run *r, const gemm_part *g, int gg, int a, const tps_loo_curve *mg,
                         const tps_loo_curve *ma, int tp, be_row *b) {
  const tps_gpu *ga = r->as[a].gpu;
  const tps_path *path = tps_xg_path_row(g->path);
  int sg = -1, sa = -1;
  double dg = 0, da = 0;
  for (int i = 0; i < g->ns; i++) {
    const gset *h = &g->sets[i];
    if (h->harness.kind != TPS_XG_AIC || !tps_resolve_gemm_sibling(h->gpu, ga)) continue;
    double d = tps_resolve_sibling_distance(h->gpu, ga);
    if (sg < 0 || d < dg) sg = i, dg = d;
  }
  for (int h = 0; h < r->nas; h++) {
    if (h == a || !tps_resolve_gather_sibling(r->as[h].gpu, ga)) continue;
    double d = tps_resolve_sibling_distance(r->as[h].gpu, ga);
    if (sa < 0 || d < da) sa = h, da = d;
  }
  gemm_fn_ctx gc = {&g->r.fold[gg], ga, {TPS_XG_AIC}, -1};
  gather_fn_ctx ac = {&r->ar.fold[a], ga, tp};
  tps_loo_curve *hg = sg >= 0 ? tps_lgo_measured_gemm(&g->sets[sg], BE_N) : NULL;
  tps_loo_curve *ha = sa >= 0 ? tps_lgo_measured_gather(&r->as[sa], tp) : NULL;
  sib_ctx sc = {hg, sg >= 0 ? g->sets[sg].gpu : NULL, ga, path};
  tps_loo_curve *pg = hg ? tps_loo_curve_fn(sib_gemm_fn, &sc) : tps_loo_curve_fn(gemm_fn, &gc);
  tps_loo_curve *pa = ha ? NULL : tps_loo_curve_fn(gather_fn, &ac);
  const tps_loo_curve *ua = ha ? ha : pa;
  snprintf(b->sib_gemm, sizeof b->sib_gemm, "%s", hg ? g->sets[sg].gpu->name : "");
  snprintf(b->sib_gather, sizeof b->sib_gather, "%s", ha ? r->as[sa].gpu->name : "");
  b->pred_h = pg && ua ? be_or_none(tps_loo_breakeven(pg, ua, tp, OUT_BYTES_PER_TOKEN, BE_TMAX)) : NAN;
  b->ex_h.n = b->ex_hthr.n = 0;
  b->hthr = NAN;
  if (mg && ma && pg && ua) {
    curve_costs mc = {mg, ma, tp};
    tps_costs c = {mc_replicated, mc_split, &mc};
    tps_excess_eval(&c, tps_loo_as_threshold(b->pred_h), (long)BE_TMAX, &b->ex_h);
    b->hthr = written_threshold(pg, ua, tp);
    if (!isnan(b->hthr)) tps_excess_eval(&c, b->hthr, (long)BE_TMAX, &b->ex_hthr);
  }
  tps_loo_curve_free(pg);
  tps_loo_curve_free(pa);
  tps_loo_curve_free(hg);
  tps_loo_curve_free(ha);
}

/* Row b: GPU a on a path (its GEMM fold gg, measured GEMM mg), TP tp. */
static void be_fill(const loo_run *r, const gemm_part *g, int gg, int a, const tps_loo_curve *mg, int tp, be_row *b) {
  const aset *as = &r->as[a];
  int dm[15], dp[15];
  tps_loo_curve *ma = tps_lgo_measured_gather(as, tp);
  memset(b, 0, sizeof *b);
  b->gpu = as->gpu;
  b->path = g->path;
  b->tp = tp;
  b->meas = mg && ma ? be_or_none(tps_loo_breakeven(mg, ma, tp, OUT_BYTES_PER_TOKEN, BE_TMAX)) : NAN;
  for (int i = 0; i < 15; i++) dm[i] = mg && ma ? tps_loo_split_wins(mg, ma, tp, OUT_BYTES_PER_TOKEN, (double)(1 << i)) : -1;
  scaled_ctx sc = {ma, 1.1};
  tps_loo_curve *ma10 = tps_loo_curve_fn(scaled_fn, &sc);
  b->meas_ag10 = mg && ma && ma10 ? be_or_none(tps_loo_breakeven(mg, ma10, tp, OUT_BYTES_PER_TOKEN, BE_TMAX)) : NAN;
  tps_loo_curve_free(ma10);
  b->pred = be_or_none(be_model(&g->r.fold[gg], &r->ar.fold[a], as->gpu, tp, dp, &b->thr));
  for (int i = 0; i < 15; i++) { b->grid++; b->agree += dm[i] == dp[i]; }
  b->ex_pred.n = b->ex_thr.n = b->ex_meas.n = b->ex_best.n = 0;
  b->best_thr = NAN;
  if (mg && ma) {
    curve_costs mc = {mg, ma, tp};
    tps_costs c = {mc_replicated, mc_split, &mc};
    tps_excess_eval(&c, tps_loo_as_threshold(b->pred), (long)BE_TMAX, &b->ex_pred);
    if (!isnan(b->thr)) tps_excess_eval(&c, b->thr, (long)BE_TMAX, &b->ex_thr);
    tps_excess_eval(&c, tps_loo_as_threshold(b->meas), (long)BE_TMAX, &b->ex_meas);
    tps_excess_best(&c, (long)BE_TMAX, EX_MEAN_TARGET, EX_WORST_TARGET, &b->best_thr, &b->ex_best);
  }
  be_hierarchy(r, g, gg, a, mg, ma, tp, b);
  tps_loo_curve_free(ma);
}

/* Every GPU with a measured GEMM and a measured gather, each path and TP. */
static void be_compute(loo_run *r) {
  for (int path = 0; path < TPS_XG_NPATH; path++) {
    const gemm_part *g = &r->gp[path];
    for (int a = 0; a < r->nas; a++) {
      int si, gg = tps_loo_gemm_group_of(g, r->as[a].gpu, &si);
      if (gg < 0 || g->sets[si].harness.kind != TPS_XG_AIC || !r->ar.fold_ok[a]) continue;
      tps_loo_curve *mg = tps_lgo_measured_gemm(&g->sets[si], BE_N);
      for (int q = 0; q < TPS_LOO_NRANKS && r->nbe < BE_MAXROWS; q++) {
        be_row *b = &r->be[r->nbe++];
        be_fill(r, g, gg, a, mg, tps_loo_ag_ranks[q], b);
        be_interval(r, a, b);
      }
      tps_loo_curve_free(mg);
    }
  }
}

/* ------------------------------------------------------------------ the command */

/* --only PART: which tables run. */
static int parse_only(void *dst, const char *arg, char *why, size_t whysz) {
  loo_run *r = dst;
  if (!strcmp(arg, "gemm")) r->do_gather = r->do_be = r->do_w8 = r->do_xfer = 0;
  else if (!strcmp(arg, "w8a16")) r->do_gemm = r->do_gather = r->do_be = r->do_xfer = 0;
  else if (!strcmp(arg, "gather")) r->do_gemm = r->do_be = r->do_w8 = r->do_xfer = 0;
  else if (!strcmp(arg, "breakeven")) r->do_gemm = r->do_gather = r->do_w8 = r->do_xfer = 0;
  else if (!strcmp(arg, "transfer")) r->do_gemm = r->do_gather = r->do_be = r->do_w8 = 0;
  else { snprintf(why, whysz, "expected gemm, gather, transfer, breakeven or w8a16"); return -1; }
  return 0;
}

/* Options into r (the one option parser, src/cli/cmdopt.h); -1 to go on, else the exit code. */
static int parse_opts(int argc, char **argv, loo_run *r, const char **gpus, const char **hold_name) {
  r->do_gemm = r->do_gather = r->do_be = r->do_w8 = r->do_xfer = 1;
  const tps_cmdopt own[] = {
    {.name = "only", .kind = TPS_ARG_FN, .metavar = "PART", .dst = r, .parse = parse_only,
     .help = "gemm, gather, transfer (the evidence hierarchy's answers per held-out GPU: sibling, else model), breakeven "
             "or w8a16 (our W8A16 kernels fitted to data/" TPS_LGO_W8_TABLE ", in sample and leaving one M out)"},
    {.name = "hold-out", .kind = TPS_ARG_STR, .metavar = "GPU", .dst = hold_name,
     .help = "GEMM only, one fold: fit without GPU and predict it (no intervals)"},
  };
  const tps_cmdspec spec = {
    .name = "fit --loo-gpu",
    .synopsis = "[--json] [--only PART] [--hold-out GPU] [--gpus-file FILE]",
    .about = "Leave-one-GPU-out evaluation of the cross-GPU models on the bundled measurements\n"
             "(data/aic/ AIConfigurator tables, data/h200_gemm_*.tsv, data/h100_gemm_*.tsv): every\n"
             "GPU is predicted by fits on the other GPUs only.  Prints, per GPU: the GEMM model's\n"
             "median and max |relative error| per path (K 5120, N 1536 and 2048; our H200 and H100\n"
             "tables N 1792; M 1..16384), the all-gather model's (8 GPUs, 64 KiB..64 MiB; NVLink\n"
             "and PCIe GPUs fitted apart), the coverage of their 90% intervals (calibrated on the\n"
             "training GPUs' own leave-one-out residuals), and the break-even table: the split's\n"
             "break-even (N 1792, 3584 output bytes per token, TP 2/4/8) from the held-out GPU's\n"
             "measured GEMM and gather curves vs from the models fitted without it, and the split\n"
             "decision at T = 1, 2, 4 .. 16384; then decision quality: what the predicted threshold\n"
             "costs on the measured parts, excess(T) = chosen(T) / min(split(T), replicated(T)) - 1,\n"
             "mean and worst over T = 1..16384 (8 points per octave), against the target mean <= 1%,\n"
             "worst <= 10%.  Transfer accuracy (--only transfer, doc/transfer.md): per held-out GPU, the\n"
             "answer the tool gives with its measurements removed (a measured sibling where one is,\n"
             "else the model) beside the model alone and copying the sibling, its 90% coverage, and\n"
             "the issue 27 targets met or missed.  Deterministic.  doc/loo.md holds the output.",
    .common = TPS_OPT(TPS_OI_JSON) | TPS_OPT(TPS_OI_GPUS_FILE),
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .text = {[TPS_OI_JSON] = "print JSON"},
    .exit_status = "0 ok, 1 a fit failed, 2 usage or input error.",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  int rc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (rc >= 0) return rc;
  r->json = v.json;
  *gpus = v.gpus_file;
  tps_cmdopt_free(&v);
  return -1;
}

/* Read everything, then fit: a bad file gives one error and no output.  An exit code. */
static int load_and_fit(loo_run *r, const tps_gpu_table *gt) {
  tps_err e;
  tps_err_clear(&e);
  int rc = TPS_EXIT_OK, st;
  int need_gemm = r->do_gemm || r->do_be || r->do_xfer, need_gather = r->do_gather || r->do_be || r->do_xfer;
  for (int path = 0; path < TPS_XG_NPATH && need_gemm && rc == TPS_EXIT_OK; path++) {
    r->gp[path].path = path;
    if (tps_lgo_load_gemm((tps_xg_path)path, TPS_LGO_NBENCH, gt, r->gp[path].sets, &r->gp[path].ns, &e)) rc = TPS_EXIT_USAGE;
  }
  if (need_gather && rc == TPS_EXIT_OK && tps_lgo_load_nccl(gt, r->as, &r->nas, &e)) rc = TPS_EXIT_USAGE;
  if (rc == TPS_EXIT_OK && r->do_w8 && tps_lgo_run_w8(gt, &r->w8, &e) != TPS_OK) rc = TPS_EXIT_USAGE;
  if (rc != TPS_EXIT_OK) { tps_err_print(&e); return rc; }
  if (need_gemm)
    for (int path = 0; path < TPS_XG_NPATH; path++)
      if ((st = run_gemm_loo((tps_xg_path)path, r->gp[path].sets, r->gp[path].ns, &r->gp[path].r, r->hold)) != TPS_OK) {
        tps_die_msg("%s GEMM fit failed: %s", tps_xg_path_names[path], tps_strstatus(st));
        return TPS_EXIT_FAIL;
      }
  if (need_gather && (st = run_gather_loo(r->as, r->nas, &r->ar)) != TPS_OK) {
    tps_die_msg("all-gather fit failed: %s", tps_strstatus(st));
    return TPS_EXIT_FAIL;
  }
  if (r->do_be) be_compute(r);
  if (r->do_xfer && (st = tps_loo_xfer_compute(r)) != TPS_OK) {
    tps_die_msg("transfer accuracy: %s", tps_strstatus(st));
    return TPS_EXIT_FAIL;
  }
  return TPS_EXIT_OK;
}

int cmd_fit_loo_gpu(int argc, char **argv) {
  tps_err_command("fit --loo-gpu");
  static loo_run run;
  loo_run *r = &run;
  memset(r, 0, sizeof *r);
  const char *gpus = NULL, *hold_name = NULL;
  int rc = parse_opts(argc, argv, r, &gpus, &hold_name);
  if (rc >= 0) return rc;
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  if (tps_gpus_load(gpus, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  if (hold_name) {
    if (!(r->hold = tps_gpus_find(&gt, hold_name, &e))) { tps_err_print(&e); tps_gpus_free(&gt); return TPS_EXIT_USAGE; }
    if (!r->do_gemm) { /* --only gather, breakeven, w8a16 or transfer: no GEMM fold to run */
      tps_die_msg("--hold-out folds the GEMM tables only; --only names no GEMM table: nothing would be checked");
      tps_gpus_free(&gt);
      return TPS_EXIT_USAGE;
    }
    r->do_gather = r->do_be = r->do_w8 = r->do_xfer = 0; /* one GEMM fold: a quick look, and the leakage test */
  }
  rc = load_and_fit(r, &gt);
  int held = 0; /* the held-out GPU has measured GEMM sets to predict */
  for (int path = 0; r->hold && path < TPS_XG_NPATH; path++)
    for (int i = 0; i < r->gp[path].ns; i++) held |= r->gp[path].sets[i].gpu == r->hold;
  if (rc == TPS_EXIT_OK && r->hold && !held) {
    tps_die_msg("--hold-out %s: no GEMM table of it in the leave-one-GPU-out data (data/aic/): nothing to hold out",
                  r->hold->name);
    rc = TPS_EXIT_USAGE;
  }
  if (rc == TPS_EXIT_OK && r->json) rc = tps_loo_print_json(r);
  else if (rc == TPS_EXIT_OK) tps_loo_print_text(r);
  for (int path = 0; path < TPS_XG_NPATH; path++)
    for (int i = 0; i < r->gp[path].ns; i++) tps_lgo_gset_free(&r->gp[path].sets[i]);
  for (int a = 0; a < r->nas; a++) tps_lgo_aset_free(&r->as[a]);
  tps_gpus_free(&gt);
  return rc;
}
