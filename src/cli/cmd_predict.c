/* cmd_predict.c: `tpsplit predict`: replicated vs split latency of the projection on a
 * target GPU, TP and kernel path, shaped like the seed table, with the break-even, its
 * interval, the threshold, every sign change, the sensitivity to +-10% in each parameter
 * and the inverse questions (see model/predict/predict.h for the model). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/cli/tpsplit.h"
#include "src/cli/cmdopt.h"
#include "src/io/thresholds.h"
#include "src/base/err.h"
#include "src/base/jsonout.h"
#include "src/cli/predict_common.h"
#include "model/predict/resolve.h"
#include "model/predict/excess.h"
#include "model/predict/sensitivity.h"
#include "src/cli/gpu_doubt.h"
#include "src/cli/thresholds_pred.h"
#include "src/base/util.h"

/* The tokens of the seed table (data/h20_tp8_fused_wqa_wkv.tsv). */
static const long seed_tokens[] = {6, 12, 24, 48, 96, 384, 1024, 2048, 4096, 8192, 16384};

static json_t *jtok(long x) { return x < 0 ? json_null() : json_integer(x); }
static json_t *jtokd(double x) { return isfinite(x) ? json_integer((json_int_t)x) : json_null(); }

/* What predict computed, for the printers. */
typedef struct {
  tps_pred p;
  const tps_gpu *gpu;
  const tps_path *path;
  long tp, tmax, at, rounding, threshold;
  int scaling, backend;
  const long *tokens;
  size_t ntok;
  tps_crossover cx;
  tps_interval iv;
  double level;
  tps_sens sens[TPS_PK_N];
  int ns;
  double inv_link, inv_gemm, from_link, from_gemm; /* the inverse questions (sensitivity.h) */
  int inv_link_rc, inv_gemm_rc, from_link_rc, from_gemm_rc;
  double peak;                                     /* TFLOP/s bounding the path on the GPU */
  tps_partuse use;                                 /* parts: where each part comes from */
  const tps_predref *ref;
  char desc[4400];                                 /* where the prediction comes from */
  const char *method;                              /* how the interval is made */
  tps_doubt doubt;                                 /* the GPU's uncertain facts (gpu_doubt.h) */
  char doubt_line[1024];
  /* the threshold of least predicted excess (model/predict/excess.h, tps_excess_best, on this
   * prediction's own costs; INFINITY: never) and its excess; tx: the threshold's own */
  double lx_thr;
  tps_excess lx, tx;
  tps_excess bx; /* the break-even as the threshold (n 0: no break-even) */
} answer;

/* The provenance record of row T (model/predict/resolve.h, the one source): each part's
 * measurement as the evidence resolved it, the rest is the model's. */
static tps_row_prov row_prov(const answer *a, long t) {
  int gp[TPS_NGATHERS];
  for (int b = 0; b < TPS_NGATHERS; b++) gp[b] = a->use.gather[b] ? a->use.gather[b]->prov : TPS_PROV_SPEC;
  return tps_resolve_row_prov(&a->p, a->use.gemm ? a->use.gemm->prov : TPS_PROV_SPEC, gp, t);
}

/* A part's provenance by name; `none` where the split has no such part. */
static const char *prov_name(int v, const char *none) { return v >= 0 ? tps_prov_names[v] : none; }

/* A zero-width interval: the break-even sits on a step of the model (a tile or wave boundary
 * of the kernel), where the split goes from losing to winning by more than the parts' scale
 * errors move it.  The interval then says nothing of where that step lies on the GPU: say so. */
static int step_note(const answer *a, char *buf, size_t sz) {
  const long t = a->cx.breakeven;
  if (t < 2 || !isfinite(a->iv.lo) || !isfinite(a->iv.hi) || a->iv.lo != a->iv.hi) return 0;
  int b;
  const double before = tps_pred_replicated_us(&a->p, t - 1) / tps_pred_split_us(&a->p, t - 1, &b);
  const double after = tps_pred_replicated_us(&a->p, t) / tps_pred_split_us(&a->p, t, &b);
  snprintf(buf, sz, "zero-width interval: the speedup steps from %.2fx at %ld tokens to %.2fx at %ld, a step of the "
           "model (a tile or wave boundary) that the parts' scale errors do not move; where the step lies on this GPU "
           "is not part of the interval", before, t - 1, after, t);
  return 1;
}

/* Why an interval reaches "never" (issue 27 item 9): tps_never_note (predict_common.h). */
static int never_note(const answer *a, long *t1, double *x, long *at) {
  return tps_never_note(&a->p, a->scaling, &a->use, &a->iv, a->tmax, t1, x, at);
}

static void never_text(const answer *a, char *buf, size_t sz) {
  long t1, at;
  double x;
  buf[0] = 0;
  if (!never_note(a, &t1, &x, &at)) return;
  snprintf(buf, sz, "why the interval reaches never: from %ld tokens (its low end, or 1) on, split and replicated differ by "
           "at most %.1f%% (|split/replicated - 1|, largest at %ld tokens; 8 points per octave up to %ld): a part off by that "
           "much, as the interval's draws allow, keeps the split from winning for good below %ld", t1, 100 * x, at, a->tmax, a->tmax);
}

static int print_json(const answer *a) {
  json_t *root = json_object(), *rows = json_array();
  for (size_t i = 0; i < a->ntok; i++) {
    long t = a->tokens[i];
    int b;
    double r = tps_pred_replicated_us(&a->p, t), s = tps_pred_split_us(&a->p, t, &b);
    json_t *o = json_object();
    json_object_set_new(o, "tokens", json_integer(t));
    json_object_set_new(o, "rows_per_rank", json_integer(tps_pred_rows_per_rank(&a->p, t)));
    tps_json_set_num(o, "replicated_us", r);
    tps_json_set_num(o, "split_us", s);
    tps_json_set_num(o, "speedup", r / s);
    const tps_row_prov rp = row_prov(a, t);
    json_object_set_new(o, "gather_backend", json_string(tps_resolve_has_gather(&a->p) ? tps_gather_name(b) : "none"));
    json_t *src = json_object();
    json_object_set_new(src, "replicated_gemm", json_string(prov_name(rp.replicated, "-")));
    json_object_set_new(src, "split_gemm", json_string(prov_name(rp.split, "-")));
    json_object_set_new(src, "gather", json_string(prov_name(rp.gather, "none")));
    json_object_set_new(o, "sources", src);
    json_array_append_new(rows, o);
  }
  json_object_set_new(root, "rows", rows);
  json_object_set_new(root, "gpu", json_string(a->gpu->name));
  json_object_set_new(root, "tp", json_integer(a->tp));
  json_object_set_new(root, "path", json_string(a->path->name));
  json_object_set_new(root, "scaling", json_string(tps_scaling_names[a->scaling]));
  json_object_set_new(root, "gather", json_string(tps_gather_name(a->backend)));
  json_object_set_new(root, "source", json_string(a->desc));
  json_t *pj = a->scaling == TPS_SCALING_PARTS ? tps_partuse_json(&a->use, a->backend, (int)a->tp, tps_pred_custom_possible(&a->p))
                                               : tps_predref_prov_json(a->ref, &a->p);
  json_object_update(root, pj);
  json_decref(pj);
  json_object_set_new(root, "max_tokens", json_integer(a->tmax));
  json_object_set_new(root, "breakeven_tokens", jtok(a->cx.breakeven));
  json_object_set_new(root, "breakeven_lo", jtokd(a->iv.lo));
  json_object_set_new(root, "breakeven_hi", jtokd(a->iv.hi));
  json_object_set_new(root, "breakeven_median", jtokd(a->iv.median));
  json_object_set_new(root, "threshold_tokens", jtok(a->threshold));
  if (a->lx.n) {
    json_t *lx = json_object();
    json_object_set_new(lx, "tokens", isfinite(a->lx_thr) ? json_integer((json_int_t)a->lx_thr) : json_null());
    tps_json_set_num(lx, "mean", a->lx.mean);
    tps_json_set_num(lx, "worst", a->lx.worst);
    tps_json_set_num(lx, "threshold_mean", a->tx.n ? a->tx.mean : NAN);
    tps_json_set_num(lx, "threshold_worst", a->tx.n ? a->tx.worst : NAN);
    tps_json_set_num(lx, "breakeven_mean", a->bx.n ? a->bx.mean : NAN);
    tps_json_set_num(lx, "breakeven_worst", a->bx.n ? a->bx.worst : NAN);
    json_object_set_new(root, "least_excess", lx);
  }
  json_object_set_new(root, "interval_method", json_string(a->method));
  char step[320];
  if (step_note(a, step, sizeof step)) json_object_set_new(root, "interval_note", json_string(step));
  long n_t1, n_at;
  double n_x;
  if (never_note(a, &n_t1, &n_x, &n_at)) {
    json_t *nv = json_object();
    json_object_set_new(nv, "from_tokens", json_integer(n_t1));
    tps_json_set_num(nv, "max_abs_rel_diff", n_x);
    json_object_set_new(nv, "at_tokens", json_integer(n_at));
    json_object_set_new(root, "interval_never", nv);
  }
  json_object_set_new(root, "samples", json_integer(a->iv.nsamples));
  if (a->doubt.n) {
    json_t *u = json_array();
    for (int i = 0; i < a->doubt.n; i++) {
      const tps_doubt_fact *x = &a->doubt.f[i];
      json_t *o = json_object();
      json_object_set_new(o, "fact", json_string(x->fact));
      json_object_set_new(o, "value", json_string(x->value));
      json_object_set_new(o, "breakeven_minus10", x->moved ? jtok(x->be_minus) : json_null());
      json_object_set_new(o, "breakeven_plus10", x->moved ? jtok(x->be_plus) : json_null());
      json_array_append_new(u, o);
    }
    json_object_set_new(root, "uncertain_facts", u);
    json_object_set_new(root, "uncertain_note", json_string(a->doubt_line));
  }
  json_t *chg = json_array();
  for (size_t i = 0; i < a->cx.nchg && i < TPS_CROSS_MAXCHG; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "tokens", json_integer(a->cx.chg[i]));
    json_object_set_new(o, "split_wins", json_boolean(a->cx.chg_wins[i]));
    json_array_append_new(chg, o);
  }
  json_object_set_new(root, "sign_changes", chg);
  json_object_set_new(root, "sign_changes_total", json_integer((json_int_t)a->cx.nchg));
  /* the same edges as win bands, with the depth of each losing gap between two */
  const tps_bands *wb = &a->cx.bands;
  tps_thr_bands_json_set(root, wb->from_tokens, wb->to_tokens, wb->gap_min_speedup,
                         wb->nbands < TPS_BANDS_MAX ? wb->nbands : TPS_BANDS_MAX, a->tmax);
  json_t *sj = json_array();
  for (int i = 0; i < a->ns; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "parameter", json_string(tps_pk_names[a->sens[i].knob]));
    json_object_set_new(o, "breakeven_minus10", jtok(a->sens[i].be_minus));
    json_object_set_new(o, "breakeven_plus10", jtok(a->sens[i].be_plus));
    json_array_append_new(sj, o);
  }
  json_object_set_new(root, "sensitivity", sj);
  json_t *inv = json_object();
  json_object_set_new(inv, "tokens", json_integer(a->at));
  tps_json_set_num(inv, "gather_bw_scale", a->inv_link_rc == TPS_OK ? a->inv_link : NAN);
  tps_json_set_num(inv, "link_gbps", a->inv_link_rc == TPS_OK ? a->inv_link * a->gpu->link_gbps : NAN);
  tps_json_set_num(inv, "gemm_tflops_scale", a->inv_gemm_rc == TPS_OK ? a->inv_gemm : NAN);
  tps_json_set_num(inv, "gemm_peak_fraction",
                   a->inv_gemm_rc == TPS_OK && a->scaling != TPS_SCALING_PESSIMISTIC && !a->p.gpart ? a->inv_gemm * a->p.gemm.p[TPS_GP_TFLOPS] / a->peak : NAN);
  tps_json_set_num(inv, "gather_bw_scale_from", a->from_link_rc == TPS_OK ? a->from_link : NAN);
  tps_json_set_num(inv, "link_gbps_from", a->from_link_rc == TPS_OK ? a->from_link * a->gpu->link_gbps : NAN);
  tps_json_set_num(inv, "gemm_tflops_scale_from", a->from_gemm_rc == TPS_OK ? a->from_gemm : NAN);
  tps_json_set_num(inv, "gemm_peak_fraction_from",
                   a->from_gemm_rc == TPS_OK && a->scaling != TPS_SCALING_PESSIMISTIC && !a->p.gpart ? a->from_gemm * a->p.gemm.p[TPS_GP_TFLOPS] / a->peak : NAN);
  json_object_set_new(root, "inverse", inv);
  return tps_json_print(root) != 0 ? TPS_EXIT_FAIL : TPS_EXIT_OK;
}


/* Why a +-10% change leaves the break-even where it is (issue 29: "+-10% on the gather leaves
 * 1473" read as a contradiction of --scaling model's 1017/1985 on the GEMM): the break-even is
 * the end of the last losing gap, a whole token count; a parameter that moves the two times
 * near it by less than that gap's margin, or not at all (NCCL under auto below the custom cap),
 * leaves it.  One line naming those parameters and the gap; nothing when every one moves it. */
static void sensitivity_note(const answer *a) {
  char names[512] = "";
  size_t len = 0;
  for (int i = 0; i < a->ns; i++) {
    if (a->sens[i].be_minus != a->cx.breakeven || a->sens[i].be_plus != a->cx.breakeven) continue;
    int w = snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", tps_pk_names[a->sens[i].knob]);
    if (w > 0 && (size_t)w < sizeof names - len) len += (size_t)w;
  }
  if (!len || a->cx.breakeven <= 0) return;
  size_t nb = a->cx.bands.nbands;
  if (nb >= 2 && nb <= TPS_BANDS_MAX)
    printf("  unchanged by %s: the break-even ends the last losing gap, %ld..%ld (at worst %.3fx), and a 10%% change in "
           "them neither closes it nor opens one after it\n",
           names, a->cx.bands.to_tokens[nb - 2] + 1, a->cx.bands.from_tokens[nb - 1] - 1,
           floor(a->cx.bands.gap_min_speedup[nb - 2] * 1000 + 1e-9) / 1000);
  else
    printf("  unchanged by %s: a 10%% change in them does not move where the split starts to win for good\n", names);
}

/* The first line: the question, and where each gather runs (the rule's split; a capped backend's fallback) */
static void print_title(const answer *a) {
  printf("# %s TP%ld %s, gather %s", a->gpu->name, a->tp, a->path->name, tps_gather_name(a->backend));
  const double cap = a->p.ag.custom_cap_bytes;
  const int custom = tps_pred_custom_possible(&a->p) && cap > 0;
  if (a->tp > 1 && a->scaling != TPS_SCALING_PESSIMISTIC) {
    if (tps_gather_is_rule(a->backend) && custom) printf(" (custom while the per-rank input <= %.0f B)", cap);
    else if (tps_gather_is_capped(a->backend) && custom)
      printf(" (nccl above %.0f B per rank, where the one-shot kernel does not run)", cap);
    else if (tps_gather_is_capped(a->backend)) printf(" (nccl: the one-shot kernel does not run here)");
  }
  printf("\n");
}

static void print_text(const answer *a) {
  print_title(a);
  printf("# %s\n", a->desc);
  if (a->scaling != TPS_SCALING_PESSIMISTIC && !a->p.gpart)
    printf("# GEMM: floor %.2f us, bandwidth %.0f GB/s, compute %.1f TFLOPS (%.0f%% of the %s peak)\n", a->p.gemm.p[TPS_GP_FLOOR_US],
           a->p.gemm.p[TPS_GP_BW_GBPS], a->p.gemm.p[TPS_GP_TFLOPS], 100 * a->p.gemm.p[TPS_GP_TFLOPS] / a->peak, tps_path_peak_name(a->path));
  if (a->scaling == TPS_SCALING_PARTS) {
    char gs[64], as[160];
    tps_partuse_gemm_short(&a->use, gs, sizeof gs);
    tps_partuse_gather_short(&a->use, a->backend, (int)a->tp, as, sizeof as);
    printf("# parts: GEMM %s; gather %s\n", gs, as);
    tps_partset_print_sources(a->ref->parts, "# ");
    if (a->use.gather_spec_src[0]) printf("# gather: %s\n", a->use.gather_spec_src);
  }
  printf("# sources: of the replicated GEMM, the split GEMM and the gather at each row (measured, or the model where the row\n"
         "# leaves the measured range): m measured, c measured in the other harness and converted, f fitted,\n"
         "# b a sibling GPU's measurement (scaled), t transferred, s spec-only\n");
  printf("%8s %13s %13s %10s %8s %14s %7s\n", "tokens", "rows_per_rank", "replicated_us", "split_us", "speedup", "gather_backend",
         "sources");
  for (size_t i = 0; i < a->ntok; i++) {
    long t = a->tokens[i];
    int b;
    double r = tps_pred_replicated_us(&a->p, t), s = tps_pred_split_us(&a->p, t, &b);
    char src[8];
    const tps_row_prov rp = row_prov(a, t);
    const char *w[3] = {prov_name(rp.replicated, "-"), prov_name(rp.split, "-"), prov_name(rp.gather, "none")};
    for (int k = 0; k < 3; k++) src[2 * k] = tps_prov_letter(w[k]), src[2 * k + 1] = k < 2 ? ',' : 0;
    printf("%8ld %13ld %13.1f %10.1f %8.2f %14s %7s\n", t, tps_pred_rows_per_rank(&a->p, t), r, s, r / s,
           tps_resolve_has_gather(&a->p) ? tps_gather_name(b) : "none", src);
  }
  char lo[32], hi[32];
  snprintf(lo, sizeof lo, isfinite(a->iv.lo) ? "%.0f" : "never", a->iv.lo);
  snprintf(hi, sizeof hi, isfinite(a->iv.hi) ? "%.0f" : "never", a->iv.hi);
  if (a->cx.breakeven > 0) {
    printf("break-even: %ld tokens (the split wins on every T from %ld to %ld)", a->cx.breakeven, a->cx.breakeven, a->tmax);
    if (!isnan(a->iv.lo)) printf("; %.0f%% interval %s..%s (%s, %d samples)", 100 * a->level, lo, hi, a->method, a->iv.nsamples);
    char step[320];
    if (step_note(a, step, sizeof step)) printf("\n%s", step);
    printf("\n");
  } else {
    printf("break-even: none: the split does not win at %ld tokens", a->tmax);
    if (!isnan(a->iv.lo)) printf("; %.0f%% interval %s..%s (%s, %d samples)", 100 * a->level, lo, hi, a->method, a->iv.nsamples);
    printf("\n");
  }
  if (a->threshold > 0)
    printf("threshold: %ld tokens (%s)\n", a->threshold,
           a->rounding ? "the least predicted excess below, rounded up to a multiple of --round"
           : a->threshold == a->cx.breakeven ? "the least predicted excess below: the break-even, from which the split wins for good"
                                             : "the least predicted excess below: the start of a band where the split wins (sign "
                                               "changes below), not the break-even");
  else if (a->rounding > 0 && isfinite(a->lx_thr))
    printf("threshold: never split (the least predicted excess below, %.0f, rounded up to a multiple of --round %ld, is past %ld "
           "tokens)\n", a->lx_thr, a->rounding, a->tmax);
  else
    printf("threshold: never split (the least predicted excess below)\n");
  if (a->lx.n) {
    char lt[32];
    snprintf(lt, sizeof lt, isfinite(a->lx_thr) ? "split from %.0f tokens" : "never split", a->lx_thr);
    printf("least predicted excess: %s (on this prediction's costs, T = 1..%ld: mean %.2f%%, worst %.1f%%; the threshold: "
           "mean %.2f%%, worst %.1f%%", lt, a->tmax, 100 * a->lx.mean, 100 * a->lx.worst, 100 * a->tx.mean, 100 * a->tx.worst);
    if (a->bx.n) printf("; the break-even as the threshold: mean %.2f%%, worst %.1f%%", 100 * a->bx.mean, 100 * a->bx.worst);
    printf(")\n");
  }
  char never[400];
  never_text(a, never, sizeof never);
  if (never[0]) printf("%s\n", never);
  if (a->doubt_line[0]) printf("%s\n", a->doubt_line);
  printf("sign changes:");
  if (!a->cx.nchg) printf(" none");
  for (size_t i = 0; i < a->cx.nchg && i < TPS_CROSS_MAXCHG; i++) printf(" %s %ld%s", a->cx.chg_wins[i] ? "wins from" : "loses from", a->cx.chg[i], i + 1 < a->cx.nchg ? ";" : "");
  if (a->cx.nchg > TPS_CROSS_MAXCHG) printf(" (%zu in all)", a->cx.nchg);
  /* how much the split loses between two win bands (3 decimals, rounded down: a gap never
   * reads 1.000x) */
  for (size_t i = 0; i + 1 < a->cx.bands.nbands && i + 1 < TPS_BANDS_MAX; i++)
    printf("%s%ld..%ld at worst %.3fx", i ? ", " : "\nlosing gaps between win bands (replicated / split): ",
           a->cx.bands.to_tokens[i] + 1, a->cx.bands.from_tokens[i + 1] - 1,
           floor(a->cx.bands.gap_min_speedup[i] * 1000 + 1e-9) / 1000);
  printf("\nsensitivity (break-even with the parameter at -10%% / +10%%):");
  for (int i = 0; i < a->ns; i++) {
    char lo[24], hi[24];
    snprintf(lo, sizeof lo, a->sens[i].be_minus < 0 ? "never" : "%ld", a->sens[i].be_minus);
    snprintf(hi, sizeof hi, a->sens[i].be_plus < 0 ? "never" : "%ld", a->sens[i].be_plus);
    printf("%s %s %s/%s", i ? "," : "", tps_pk_names[a->sens[i].knob], lo, hi);
  }
  printf("\n");
  sensitivity_note(a);
  /* inverse questions: a->at T (split = replicated there) and from T on (wins on [T, a->tmax]) */
  char s_at[160], s_from[160];
  if (a->tp > 1) {
    if (a->inv_link_rc == TPS_OK) snprintf(s_at, sizeof s_at, ">= %.2fx (a %.0f GB/s link)", a->inv_link, a->inv_link * a->gpu->link_gbps);
    else snprintf(s_at, sizeof s_at, "%s", isinf(a->inv_link) ? "none up to 1000x" : a->inv_link == 0 ? "any down to 1/1000" : "-");
    if (a->from_link_rc == TPS_OK) snprintf(s_from, sizeof s_from, ">= %.2fx (a %.0f GB/s link)", a->from_link, a->from_link * a->gpu->link_gbps);
    else snprintf(s_from, sizeof s_from, "%s", isinf(a->from_link) ? "none up to 1000x" : a->from_link == 0 ? "any down to 1/1000" : "-");
    printf("inverse, gather bandwidth for the split to pay: at %ld tokens %s; from %ld tokens on %s (this GPU: %.0f GB/s)\n", a->at, s_at, a->at,
           s_from, a->gpu->link_gbps);
  }
  int frac = a->scaling != TPS_SCALING_PESSIMISTIC && !a->p.gpart;
  double tf = a->p.gemm.p[TPS_GP_TFLOPS];
  if (a->inv_gemm_rc == TPS_OK) {
    if (frac) snprintf(s_at, sizeof s_at, "<= %.2fx (%.0f%% of peak)", a->inv_gemm, 100 * a->inv_gemm * tf / a->peak);
    else snprintf(s_at, sizeof s_at, "<= %.2fx", a->inv_gemm);
  } else snprintf(s_at, sizeof s_at, "%s", isinf(a->inv_gemm) ? "any up to 1000x" : a->inv_gemm == 0 ? "none down to 1/1000" : "-");
  if (a->from_gemm_rc == TPS_OK) {
    if (frac) snprintf(s_from, sizeof s_from, "<= %.2fx (%.0f%% of peak)", a->from_gemm, 100 * a->from_gemm * tf / a->peak);
    else snprintf(s_from, sizeof s_from, "<= %.2fx", a->from_gemm);
  } else snprintf(s_from, sizeof s_from, "%s", isinf(a->from_gemm) ? "any up to 1000x" : a->from_gemm == 0 ? "none down to 1/1000" : "-");
  if (frac)
    printf("inverse, GEMM throughput for the split to pay: at %ld tokens %s; from %ld tokens on %s (now %.0f%% of peak)\n", a->at, s_at, a->at, s_from,
           100 * tf / a->peak);
  else if (a->scaling == TPS_SCALING_PARTS)
    printf("inverse, GEMM throughput (x the GEMM part's) for the split to pay: at %ld tokens %s; from %ld tokens on %s\n", a->at, s_at, a->at,
           s_from);
  else
    printf("inverse, GEMM speedups over H20 (x the rule's) for the split to pay: at %ld tokens %s; from %ld tokens on %s\n", a->at, s_at, a->at, s_from);
}

/* -o FILE: the prediction as a split table (TAB-separated, '#@' metadata: what `tpsplit
 * validate --predicted` and `tpsplit inspect` read), every predicted time at full precision,
 * the sources of its parts as '#' lines; temp file + rename. */
static int write_table(const answer *a, const char *path, tps_err *e) {
  tps_outfile of;
  if (tps_out_open(&of, path, e)) return -1;
  FILE *fp = of.fp;
  fprintf(fp, "# tpsplit predict: %s TP%ld %s, gather %s (predicted times, not a measurement)\n# %s\n", a->gpu->name, a->tp,
          a->path->name, tps_gather_name(a->backend), a->desc);
  if (a->scaling == TPS_SCALING_PARTS) {
    const tps_part_source *s[4] = {a->use.gemm, a->use.gather[0], a->use.gather[1], a->use.gather[2]};
    for (int i = 0; i < 4; i++)
      if (s[i] && s[i]->id > 0) fprintf(fp, "# [%d] %s: %s\n", s[i]->id, s[i]->what, s[i]->src); /* [0]: resolved, unused */
  }
  fprintf(fp, "# command: %s\n", tps_cmdline());
  fprintf(fp, "#@ gpu: %s\n#@ tp: %ld\n#@ path: %s\n#@ k: %ld\n#@ n: %ld\n#@ out_bytes_per_token: %.17g\n#@ gather: %s\n",
          a->gpu->name, a->tp, a->path->name, a->p.shape.k, a->p.shape.n, a->p.out_bytes_per_token, tps_gather_name(a->backend));
  if (a->p.ag.custom_cap_bytes > 0) fprintf(fp, "#@ gather_cap_bytes: %.0f\n", a->p.ag.custom_cap_bytes);
  fprintf(fp, "tokens\trows_per_rank\treplicated_us\tsplit_us\n");
  for (size_t i = 0; i < a->ntok; i++) {
    long t = a->tokens[i];
    fprintf(fp, "%ld\t%ld\t%.17g\t%.17g\n", t, tps_pred_rows_per_rank(&a->p, t), tps_pred_replicated_us(&a->p, t),
            tps_pred_split_us(&a->p, t, NULL));
  }
  return tps_out_commit(&of, e);
}

/* --thresholds-out FILE: the answer as the engine-facing thresholds file (src/cli/thresholds_pred.h). */
static int write_thresholds(const answer *a, const char *path, tps_err *e) {
  tps_thr_file f;
  tps_thrpred_init(&f, a->ref, a->scaling, a->method);
  tps_thrpred_answer ans = {a->cx.breakeven, a->iv.lo, a->iv.hi, a->threshold, a->tmax, &a->cx.bands};
  int rc = tps_thrpred_add(&f, a->ref, &a->p, a->scaling == TPS_SCALING_PARTS ? &a->use : NULL, &ans, e);
  if (rc == 0) rc = tps_thr_write(&f, path, e);
  else if (rc > 0) rc = tps_err_set(e, path, 0, "not written: %s", f.nnotes ? f.notes[f.nnotes - 1] : "no entry");
  tps_thr_free(&f);
  return rc;
}

/* Why the analyses failed, in one line. */
static void analysis_failed(const answer *a, int st) {
  if (st == TPS_EINVAL) /* a part's time is not finite somewhere on 1..tmax (e.g. TP 1 past its gather's range) */
    tps_die_msg("%s TP %ld %s: a part has no finite time at some T of 1..%ld (outside what it was measured or fitted "
                "on): ask fewer --tokens", a->gpu->name, a->tp, a->path->name, a->tmax);
  else
    tps_die_msg("the model gives no usable values for %s TP %ld %s: %s", a->gpu->name, a->tp, a->path->name,
                tps_strstatus(st));
}

static double pred_replicated(long T, void *p) { return tps_pred_replicated_us(p, T); }
static double pred_split(long T, void *p) { return tps_pred_split_us(p, T, NULL); }

/* The analyses of a->p on 1..tmax: crossover, interval, sensitivity, inverse questions. */
static int analyze(answer *a, const tps_cmdopt_values *v) {
  tps_unc_opts uo = {(int)v->samples, (unsigned long)v->seed, TPS_INTERVAL_LEVEL};
  a->level = uo.level;
  /* the break-even first (model/predict/crossover.h), then its interval (uncertainty.h) */
  int st = tps_pred_crossover(&a->p, a->tmax, &a->cx);
  if (st == TPS_OK) st = tps_pred_interval(&a->p, a->tmax, &uo, &a->iv);
  if (st == TPS_OK) st = tps_pred_sensitivity(&a->p, a->tmax, a->sens, &a->ns);
  if (st != TPS_OK) return st;
  /* the threshold: least excess on the prediction's own costs (model/predict/excess.h) */
  tps_costs pc = {pred_replicated, pred_split, &a->p};
  a->lx.n = a->tx.n = 0;
  long lt = -1;
  a->lx_thr = TPS_EXCESS_NEVER;
  if (tps_threshold_choose(&pc, a->tmax, &lt, &a->lx) == 0 && lt > 0) a->lx_thr = (double)lt;
  a->threshold = tps_threshold_round(lt, a->rounding, a->tmax);
  if (a->lx.n) tps_excess_eval(&pc, a->threshold > 0 ? (double)a->threshold : TPS_EXCESS_NEVER, a->tmax, &a->tx);
  a->bx.n = 0;
  if (a->lx.n && a->cx.breakeven > 0) tps_excess_eval(&pc, (double)a->cx.breakeven, a->tmax, &a->bx);
  if ((st = tps_doubt_eval(a->ref, a->scaling, a->gpu, (int)a->tp, a->path, &v->po, a->tmax, &a->doubt)) != TPS_OK) return st;
  if (!isnan(a->iv.lo)) tps_doubt_widen(&a->doubt, &a->iv.lo, &a->iv.hi);
  tps_doubt_describe(&a->doubt, a->gpu, a->doubt_line, sizeof a->doubt_line);
  a->inv_link = a->inv_gemm = a->from_link = a->from_gemm = NAN;
  a->inv_link_rc = a->tp > 1 ? tps_pred_inverse(&a->p, TPS_INV_LINK, a->at, &a->inv_link) : TPS_EINVAL;
  a->inv_gemm_rc = tps_pred_inverse(&a->p, TPS_INV_GEMM, a->at, &a->inv_gemm);
  /* "from T on": the split wins on every T in [at, tmax] */
  int from = a->at <= a->tmax;
  a->from_link_rc = a->tp > 1 && from ? tps_pred_inverse_from(&a->p, TPS_INV_LINK, a->at, a->tmax, &a->from_link) : TPS_EINVAL;
  a->from_gemm_rc = from ? tps_pred_inverse_from(&a->p, TPS_INV_GEMM, a->at, a->tmax, &a->from_gemm) : TPS_EINVAL;
  a->peak = tps_gemm_peak_tflops(a->gpu, a->path);
  a->method = a->scaling == TPS_SCALING_PESSIMISTIC ? "none (a rule)"
              : a->scaling == TPS_SCALING_PARTS ? "lognormal spread of each part (measured 3%, models their held-out error)"
              : a->iv.fit_part && a->iv.prior_part ? "parametric bootstrap: fit covariance + path priors"
              : a->iv.fit_part ? "parametric bootstrap: fit covariance"
              : a->iv.prior_part ? "priors' lognormal spread" : "none";
  return 0;
}

int cmd_predict(int argc, char **argv) {
  const char *tokens_arg = NULL;
  long at = 2048;
  const tps_cmdopt own[] = {
    {.name = "tokens", .kind = TPS_ARG_STR, .metavar = "LIST", .dst = &tokens_arg,
     .help = "rows of the table: 6,12,48 | A..B (powers of two) | A..B:STEP (default: the seed table's tokens); "
             "the break-even is searched on 1..max(LIST)"},
    {.name = "at", .kind = TPS_ARG_LONG, .metavar = "T", .dst = &at, .min = 1, .max = TPS_PRED_MAX_TMAX,
     .help = "tokens of the inverse questions, e.g. the seed pull request's threshold"},
  };
  const tps_cmdspec spec = {
    .name = "predict",
    .synopsis = "--gpu G [--tp N] [--path P] [options]",
    .about = "Predict replicated(T) = GEMM(T rows) and split(T) = GEMM(ceil(T/TP) rows) +\n"
             "ALLGATHER(T tokens) for a GPU, TP size and kernel path; print them at the asked\n"
             "tokens, the break-even (smallest T from which the split always wins up to the\n"
             "largest T asked, on every integer T), its bootstrap interval, the threshold, every\n"
             "sign change, the break-even's moves for +-10% in each parameter, and the link\n"
             "bandwidth or GEMM throughput that would make the split pay at --at tokens.",
    .common = TPS_OPT(TPS_OI_GPU) | TPS_OPT(TPS_OI_TP) | TPS_OPT(TPS_OI_PATH) | TPS_OPTS_BREAKEVEN | TPS_OPTS_PARTS |
              TPS_OPTS_SHAPE | TPS_OPT(TPS_OI_OUTPUT) | TPS_OPT(TPS_OI_THR_OUT),
    .output_metavar = "FILE",
    .dflt = {[TPS_OI_OUTPUT] = "none; FILE gets the predicted times as a split table, for `tpsplit validate --predicted`",
             [TPS_OI_THR_OUT] = "the break-even, its 90% interval, the threshold and each part's provenance, the device "
                                "keyed as engines key it; TP from 2"},
    .text = {[TPS_OI_GPU] = "target GPU: a name or alias of the GPU table (required, unless --gemm or --gather files name it)"},
    .fit_model_only = 1,
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .exit_status = "0 ok; 1 the reference fit failed; 2 usage or input error (unknown GPU, impossible TP, "
                   "a path that cannot run on the GPU, a --gemm/--gather file that does not hold the question).",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  v.tp = 8;
  int prc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (prc >= 0) return prc;

  tps_err e;
  tps_err_clear(&e);
  long *tokens = NULL;
  size_t ntok = 0;
  if (tokens_arg) {
    if (tps_parse_tokens(tokens_arg, &tokens, &ntok, &e) != 0) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  } else {
    ntok = sizeof seed_tokens / sizeof seed_tokens[0];
    tokens = malloc(sizeof seed_tokens);
    if (!tokens) return TPS_EXIT_FAIL;
    memcpy(tokens, seed_tokens, sizeof seed_tokens);
  }
  if (tokens[ntok - 1] > TPS_PRED_MAX_TMAX) {
    tps_usage_msg("tokens above %ld", TPS_PRED_MAX_TMAX);
    free(tokens);
    return TPS_EXIT_USAGE;
  }
  int rc = TPS_EXIT_USAGE, fit_failed = 0;
  tps_predref ref;
  answer *a = calloc(1, sizeof *a);
  if (!a) { free(tokens); return TPS_EXIT_FAIL; }
  *a = (answer){.path = v.path, .tp = v.tp, .tmax = tokens[ntok - 1], .at = at, .rounding = v.rounding,
                .scaling = v.scaling, .backend = v.po.backend, .tokens = tokens, .ntok = ntok, .ref = &ref};
  memset(&ref, 0, sizeof ref);
  if (v.thresholds_out && a->tp < 2) {
    tps_die_msg("--thresholds-out: TP %ld is outside the thresholds schema (TP from 2: one rank has no split)", a->tp);
    goto done;
  }
  if (!v.gpu && !v.gemms.n && !v.gathers.n) {
    tps_usage_msg("--gpu is required");
    goto done;
  }
  tps_predref_opts ro = tps_predref_opts_of(&v, a->tmax, v.path);
  if (tps_predref_open(&ref, &ro, &fit_failed, &e) != 0) {
    tps_err_print(&e);
    rc = fit_failed ? TPS_EXIT_FAIL : tps_err_exit_code(&e);
    goto done;
  }
  if (ref.parts && tps_partset_has_user(ref.parts)) {
    /* the target and path default to what the files measure */
    const tps_gpu *ug[2];
    const tps_path *up[2];
    if (!v.gpu && tps_partset_user_gpus(ref.parts, ug, 2) == 1) a->gpu = ug[0];
    if (!((v.given >> TPS_OI_PATH) & 1u) && tps_partset_user_paths(ref.parts, up, 2) == 1) a->path = up[0];
    if (!v.gpu && !a->gpu) { tps_die_msg("the files measure several GPUs: give --gpu"); goto done; }
  }
  if (!a->gpu && !(a->gpu = tps_gpus_find(&ref.gpus, v.gpu, &e))) { tps_err_print(&e); rc = tps_err_exit_code(&e); goto done; }
  if (ref.parts && tps_partset_check_targets(ref.parts, &a->gpu, 1, (const int[]){(int)a->tp}, 1, &a->path, 1, &e) != 0) {
    tps_err_print(&e);
    rc = tps_err_exit_code(&e);
    goto done;
  }
  int st = tps_predref_context_use(&ref, a->scaling, a->gpu, (int)a->tp, a->path, &v.po, &a->p, &a->use, &e);
  if (st == TPS_EBADDATA) { tps_err_print(&e); rc = tps_err_exit_code(&e); goto done; }
  if (st == TPS_OK && a->scaling == TPS_SCALING_PARTS)
    tps_partset_mark(ref.parts, &a->use, a->backend, (int)a->tp, tps_pred_custom_possible(&a->p));
  if (st == TPS_NA) { tps_die_msg("%s on %s at TP %ld: n/a: %s", a->path->name, a->gpu->name, a->tp, a->p.why); goto done; }
  if (st != TPS_OK) { tps_die_msg("impossible configuration (%s, TP %ld, %s)", a->gpu->name, a->tp, a->path->name); goto done; }
  if ((st = analyze(a, &v)) != 0) {
    analysis_failed(a, st);
    rc = TPS_EXIT_FAIL;
    goto done;
  }
  tps_predref_describe(&ref, a->scaling, a->desc, sizeof a->desc);
  /* an output that cannot be created: 2 (the path given); a write error: 1 (src/base/exit.h) */
  if (v.output && write_table(a, v.output, &e) != 0) { tps_err_print(&e); rc = tps_err_exit_code(&e); goto done; }
  if (v.thresholds_out && write_thresholds(a, v.thresholds_out, &e) != 0) { tps_err_print(&e); rc = tps_err_exit_code(&e); goto done; }
  if (v.json) rc = print_json(a);
  else { print_text(a); rc = TPS_EXIT_OK; }
done:
  tps_pred_free(&a->p);
  tps_predref_free(&ref);
  tps_cmdopt_free(&v);
  free(a);
  free(tokens);
  return rc;
}
