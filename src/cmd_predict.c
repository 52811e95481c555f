/* cmd_predict.c: `tpsplit predict`: replicated vs split latency of the projection on a
 * target GPU, TP and kernel path, shaped like the seed table, with the break-even, its
 * interval, the threshold, every sign change, the sensitivity to +-10% in each parameter
 * and the inverse questions (see model/predict.h for the model). */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpsplit.h"
#include "err.h"
#include "jsonout.h"
#include "predcli.h"
#include "util.h"

/* The tokens of the seed table (data/h20_tp8_fused_wqa_wkv.tsv). */
static const long seed_tokens[] = {6, 12, 24, 48, 96, 384, 1024, 2048, 4096, 8192, 16384};

static void usage(FILE *fp) {
  fprintf(fp,
          "Usage: tpsplit predict --gpu G [--tp N] [--path P] [options]\n"
          "Predict replicated(T) = GEMM(T rows) and split(T) = GEMM(ceil(T/TP) rows) +\n"
          "ALLGATHER(T tokens) for a GPU, TP size and kernel path; print them at the asked\n"
          "tokens, the break-even (smallest T from which the split always wins up to the\n"
          "largest T asked, on every integer T), its 90%% interval, the threshold, every sign\n"
          "change, the break-even's moves for +-10%% in each parameter, and the link bandwidth\n"
          "or GEMM throughput that would make the split pay at --at tokens.\n\n"
          "Options:\n"
          "  --gpu G            target GPU (name or alias in the GPU table)\n"
          "  --tp N             TP size (default 8; 2, 4, 8 in one NVLink domain, 16 across two nodes)\n"
          "  --path P           kernel path: marlin-w8a16 (default), dense-bf16, native-fp8\n"
          "  --fit FIT          reference fit (tpsplit fit -o FIT); default: fit the bundled H20 table\n"
          "  --scaling S        model (default: transfer the fit), spec (datasheet x priors),\n"
          "                     pessimistic (the brief's rule on the H20 table: TP8 marlin, SM90)\n"
          "  --gather B         auto (default: custom while the per-rank input <= cap, else NCCL),\n"
          "                     nccl, custom\n"
          "  --cap-bytes B      per-rank cap of the custom gather (default 2097152)\n"
          "  --ib-gbps X        per-GPU inter-node bandwidth for TP beyond 8, Gb/s (default 400)\n"
          "  --tokens LIST      rows of the table: 6,12,48 | A..B (powers of two) | A..B:STEP\n"
          "                     (default: the seed table's tokens); the break-even is searched\n"
          "                     on 1..max(LIST)\n"
          "  --round R          threshold = next multiple of R (default: next power of two)\n"
          "  --at T             tokens of the inverse questions (default 2048, the brief's threshold)\n"
          "  --samples N        bootstrap samples of the interval (default 200)\n"
          "  --seed S           random seed (default 1)\n"
          "  --gpus-file F      GPU table (default: the bundled data/gpus.tsv)\n"
          "  --json             JSON output\n"
          "  --help, --version\n\n"
          "Exit status: 0 ok; 1 the reference fit failed; 2 usage or input error (unknown GPU,\n"
          "impossible TP, a path that cannot run on the GPU).\n");
}

enum { OPT_GPU = 256, OPT_TP, OPT_PATH, OPT_FIT, OPT_SCALING, OPT_GATHER, OPT_CAP, OPT_IB, OPT_TOKENS, OPT_ROUND,
       OPT_AT, OPT_SAMPLES, OPT_SEED, OPT_GPUS_FILE, OPT_JSON, OPT_HELP, OPT_VERSION };

static const char *backend_name(int b) { return b == TPS_GATHER_CUSTOM ? "custom" : "nccl"; }

static json_t *jtok(long x) { return x < 0 ? json_null() : json_integer(x); }
static json_t *jtokd(double x) { return isfinite(x) ? json_integer((json_int_t)x) : json_null(); }

int cmd_predict(int argc, char **argv) {
  static const struct option opts[] = {
    {"gpu", required_argument, 0, OPT_GPU}, {"tp", required_argument, 0, OPT_TP},
    {"path", required_argument, 0, OPT_PATH}, {"fit", required_argument, 0, OPT_FIT},
    {"scaling", required_argument, 0, TPS_PCO_SCALING}, {"gather", required_argument, 0, TPS_PCO_GATHER},
    {"cap-bytes", required_argument, 0, TPS_PCO_CAP}, {"ib-gbps", required_argument, 0, TPS_PCO_IB},
    {"tokens", required_argument, 0, OPT_TOKENS}, {"round", required_argument, 0, TPS_PCO_ROUND},
    {"at", required_argument, 0, OPT_AT}, {"samples", required_argument, 0, TPS_PCO_SAMPLES},
    {"seed", required_argument, 0, TPS_PCO_SEED}, {"gpus-file", required_argument, 0, OPT_GPUS_FILE},
    {"json", no_argument, 0, OPT_JSON}, {"help", no_argument, 0, OPT_HELP},
    {"version", no_argument, 0, OPT_VERSION}, {0, 0, 0, 0}};
  const char *gpu_name = NULL, *fit_file = NULL, *gpus_file = NULL, *tokens_arg = NULL;
  const tps_path *path = &tps_path_marlin_w8a16;
  long tp = 8, rounding = 0, at = 2048, samples = 0, seed = 1;
  int scaling = TPS_SCALING_MODEL, json = 0;
  tps_pred_opts po;
  tps_pred_opts_default(&po);
  tps_pco pco = {scaling, &po, rounding, samples, seed};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case OPT_GPU: gpu_name = optarg; break;
    case OPT_TP:
      if (tps_parse_long(optarg, &tp) || tp < 1 || tp > 64) { tps_die_msg("predict: bad --tp '%s' (1..64)", optarg); return TPS_EXIT_USAGE; }
      break;
    case OPT_PATH:
      if (!(path = tps_path_find(optarg))) { tps_die_msg("predict: unknown --path '%s' (marlin-w8a16, dense-bf16, native-fp8)", optarg); return TPS_EXIT_USAGE; }
      break;
    case OPT_FIT: fit_file = optarg; break;
    case OPT_TOKENS: tokens_arg = optarg; break;
    case OPT_AT:
      if (tps_opt_long("predict", "at", optarg, 1, TPS_TOKENS_MAX, "the longest scan of the model", &at)) return TPS_EXIT_USAGE;
      break;
    case OPT_GPUS_FILE: gpus_file = optarg; break;
    case OPT_JSON: json = 1; break;
    case OPT_HELP: usage(stdout); return TPS_EXIT_OK;
    case OPT_VERSION: return tps_print_version("predict");
    default:
      if (c >= TPS_PCO_SCALING && c < TPS_PCO_END) {
        if (tps_pco_parse(&pco, "predict", c, optarg)) return TPS_EXIT_USAGE;
        break;
      }
      usage(stderr);
      return TPS_EXIT_USAGE;
    }
  }
  scaling = pco.scaling; rounding = pco.rounding; samples = pco.samples; seed = pco.seed;
  if (optind < argc) { tps_die_msg("predict: unexpected argument '%s'", argv[optind]); return TPS_EXIT_USAGE; }
  if (!gpu_name) { tps_die_msg("predict: --gpu is required (try 'tpsplit predict --help')"); return TPS_EXIT_USAGE; }
  if (fit_file && scaling != TPS_SCALING_MODEL) { tps_die_msg("predict: --fit goes with --scaling model"); return TPS_EXIT_USAGE; }

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
  long tmax = tokens[ntok - 1];
  if (tmax > TPS_PRED_MAX_TMAX) { tps_die_msg("predict: tokens above %ld", TPS_PRED_MAX_TMAX); free(tokens); return TPS_EXIT_USAGE; }

  int rc = TPS_EXIT_USAGE, fit_failed = 0;
  tps_predref ref;
  tps_pred p;
  memset(&p, 0, sizeof p);
  if (tps_predref_load(&ref, scaling, fit_file, gpus_file, &fit_failed, &e) != 0) {
    tps_err_print(&e);
    rc = fit_failed ? TPS_EXIT_FAIL : TPS_EXIT_USAGE;
    goto done;
  }
  const tps_gpu *gpu = tps_gpus_find(&ref.gpus, gpu_name, &e);
  if (!gpu) { tps_err_print(&e); goto done; }
  int st = tps_predref_context(&ref, scaling, gpu, (int)tp, path, &po, &p);
  if (st == TPS_PRED_NA) { tps_die_msg("predict: %s on %s at TP %ld: n/a: %s", path->name, gpu->name, tp, p.why); goto done; }
  if (st != TPS_PRED_OK) { tps_die_msg("predict: impossible configuration (%s, TP %ld, %s)", gpu->name, tp, path->name); goto done; }

  tps_unc_opts uo = {(int)samples, (unsigned long)seed, 0.90};
  tps_crossover cx;
  tps_interval iv;
  tps_sens sens[TPS_PK_N];
  int ns = 0;
  if (tps_pred_analyze(&p, tmax, &uo, &cx, &iv) != TPS_PRED_OK || tps_pred_sensitivity(&p, tmax, sens, &ns) != TPS_PRED_OK) {
    tps_die_msg("predict: the model gives no usable values for %s TP %ld %s", gpu->name, tp, path->name);
    rc = TPS_EXIT_FAIL;
    goto done;
  }
  long threshold = tps_threshold(cx.breakeven, rounding);
  double inv_link = NAN, inv_gemm = NAN;
  int inv_link_rc = tp > 1 ? tps_pred_inverse(&p, TPS_INV_LINK, at, &inv_link) : TPS_PRED_EINVAL;
  int inv_gemm_rc = tps_pred_inverse(&p, TPS_INV_GEMM, at, &inv_gemm);
  /* "from T on": the split wins on every T in [at, tmax] */
  double from_link = NAN, from_gemm = NAN;
  int from_link_rc = tp > 1 && at <= tmax ? tps_pred_inverse_from(&p, TPS_INV_LINK, at, tmax, &from_link) : TPS_PRED_EINVAL;
  int from_gemm_rc = at <= tmax ? tps_pred_inverse_from(&p, TPS_INV_GEMM, at, tmax, &from_gemm) : TPS_PRED_EINVAL;
  double peak = path->fp8_peak ? gpu->fp8_tflops : gpu->bf16_tflops;
  char desc[4400];
  tps_predref_describe(&ref, scaling, desc, sizeof desc);
  const char *method = scaling == TPS_SCALING_PESSIMISTIC ? "none (a rule)"
                       : iv.fit_part && iv.prior_part ? "parametric bootstrap: fit covariance + path priors"
                       : iv.fit_part ? "parametric bootstrap: fit covariance"
                       : iv.prior_part ? "priors' lognormal spread" : "none";

  if (json) {
    json_t *root = json_object(), *rows = json_array();
    for (size_t i = 0; i < ntok; i++) {
      long t = tokens[i];
      int b;
      double r = tps_pred_replicated_us(&p, t), s = tps_pred_split_us(&p, t, &b);
      json_t *o = json_object();
      json_object_set_new(o, "tokens", json_integer(t));
      json_object_set_new(o, "rows_per_rank", json_integer(tps_pred_rows_per_rank(&p, t)));
      tps_json_set_num(o, "replicated_us", r);
      tps_json_set_num(o, "split_us", s);
      tps_json_set_num(o, "speedup", r / s);
      json_object_set_new(o, "gather_backend", json_string(tp > 1 ? backend_name(b) : "none"));
      json_array_append_new(rows, o);
    }
    json_object_set_new(root, "rows", rows);
    json_object_set_new(root, "gpu", json_string(gpu->name));
    json_object_set_new(root, "tp", json_integer(tp));
    json_object_set_new(root, "path", json_string(path->name));
    json_object_set_new(root, "scaling", json_string(tps_scaling_names[scaling]));
    json_object_set_new(root, "gather", json_string(tps_gather_name(po.backend)));
    json_object_set_new(root, "source", json_string(desc));
    json_object_set_new(root, "max_tokens", json_integer(tmax));
    json_object_set_new(root, "breakeven_tokens", jtok(cx.breakeven));
    json_object_set_new(root, "breakeven_lo", jtokd(iv.lo));
    json_object_set_new(root, "breakeven_hi", jtokd(iv.hi));
    json_object_set_new(root, "breakeven_median", jtokd(iv.median));
    json_object_set_new(root, "threshold_tokens", jtok(threshold));
    json_object_set_new(root, "interval_method", json_string(method));
    json_object_set_new(root, "samples", json_integer(iv.nsamples));
    json_t *chg = json_array();
    for (size_t i = 0; i < cx.nchg && i < TPS_CROSS_MAXCHG; i++) {
      json_t *o = json_object();
      json_object_set_new(o, "tokens", json_integer(cx.chg[i]));
      json_object_set_new(o, "split_wins", json_boolean(cx.chg_wins[i]));
      json_array_append_new(chg, o);
    }
    json_object_set_new(root, "sign_changes", chg);
    json_object_set_new(root, "sign_changes_total", json_integer((json_int_t)cx.nchg));
    json_t *sj = json_array();
    for (int i = 0; i < ns; i++) {
      json_t *o = json_object();
      json_object_set_new(o, "parameter", json_string(tps_pk_names[sens[i].knob]));
      json_object_set_new(o, "breakeven_minus10", jtok(sens[i].be_minus));
      json_object_set_new(o, "breakeven_plus10", jtok(sens[i].be_plus));
      json_array_append_new(sj, o);
    }
    json_object_set_new(root, "sensitivity", sj);
    json_t *inv = json_object();
    json_object_set_new(inv, "tokens", json_integer(at));
    tps_json_set_num(inv, "gather_bw_scale", inv_link_rc == TPS_PRED_OK ? inv_link : NAN);
    tps_json_set_num(inv, "link_gbps", inv_link_rc == TPS_PRED_OK ? inv_link * gpu->link_gbps : NAN);
    tps_json_set_num(inv, "gemm_tflops_scale", inv_gemm_rc == TPS_PRED_OK ? inv_gemm : NAN);
    tps_json_set_num(inv, "gemm_peak_fraction",
                     inv_gemm_rc == TPS_PRED_OK && scaling != TPS_SCALING_PESSIMISTIC ? inv_gemm * p.gemm.p[TPS_GP_TFLOPS] / peak : NAN);
    tps_json_set_num(inv, "gather_bw_scale_from", from_link_rc == TPS_PRED_OK ? from_link : NAN);
    tps_json_set_num(inv, "link_gbps_from", from_link_rc == TPS_PRED_OK ? from_link * gpu->link_gbps : NAN);
    tps_json_set_num(inv, "gemm_tflops_scale_from", from_gemm_rc == TPS_PRED_OK ? from_gemm : NAN);
    tps_json_set_num(inv, "gemm_peak_fraction_from",
                     from_gemm_rc == TPS_PRED_OK && scaling != TPS_SCALING_PESSIMISTIC ? from_gemm * p.gemm.p[TPS_GP_TFLOPS] / peak : NAN);
    json_object_set_new(root, "inverse", inv);
    if (tps_json_print(root) != 0) rc = TPS_EXIT_FAIL; else rc = TPS_EXIT_OK;
    goto done;
  }

  printf("# %s TP%ld %s, gather %s", gpu->name, tp, path->name, tps_gather_name(po.backend));
  if (p.ag.custom_cap_bytes > 0 && scaling != TPS_SCALING_PESSIMISTIC) printf(" (custom while the per-rank input <= %.0f B)", p.ag.custom_cap_bytes);
  printf("\n# %s\n", desc);
  if (scaling != TPS_SCALING_PESSIMISTIC)
    printf("# GEMM: floor %.2f us, bandwidth %.0f GB/s, compute %.1f TFLOPS (%.0f%% of the %s peak)\n", p.gemm.p[TPS_GP_FLOOR_US],
           p.gemm.p[TPS_GP_BW_GBPS], p.gemm.p[TPS_GP_TFLOPS], 100 * p.gemm.p[TPS_GP_TFLOPS] / peak, path->fp8_peak ? "fp8" : "bf16");
  printf("%8s %13s %13s %10s %8s %14s\n", "tokens", "rows_per_rank", "replicated_us", "split_us", "speedup", "gather_backend");
  for (size_t i = 0; i < ntok; i++) {
    long t = tokens[i];
    int b;
    double r = tps_pred_replicated_us(&p, t), s = tps_pred_split_us(&p, t, &b);
    printf("%8ld %13ld %13.1f %10.1f %8.2f %14s\n", t, tps_pred_rows_per_rank(&p, t), r, s, r / s, tp > 1 ? backend_name(b) : "none");
  }
  char lo[32], hi[32];
  snprintf(lo, sizeof lo, isfinite(iv.lo) ? "%.0f" : "never", iv.lo);
  snprintf(hi, sizeof hi, isfinite(iv.hi) ? "%.0f" : "never", iv.hi);
  if (cx.breakeven > 0) {
    printf("break-even: %ld tokens (the split wins on every T from %ld to %ld)", cx.breakeven, cx.breakeven, tmax);
    if (!isnan(iv.lo)) printf("; 90%% interval %s..%s (%s, %d samples)", lo, hi, method, iv.nsamples);
    printf("\nthreshold: %ld tokens (%s)\n", threshold, rounding ? "next multiple of --round" : "next power of two");
  } else {
    printf("break-even: none: the split does not win at %ld tokens", tmax);
    if (!isnan(iv.lo)) printf("; 90%% interval %s..%s (%s, %d samples)", lo, hi, method, iv.nsamples);
    printf("\n");
  }
  printf("sign changes:");
  if (!cx.nchg) printf(" none");
  for (size_t i = 0; i < cx.nchg && i < TPS_CROSS_MAXCHG; i++) printf(" %s %ld%s", cx.chg_wins[i] ? "wins from" : "loses from", cx.chg[i], i + 1 < cx.nchg ? ";" : "");
  if (cx.nchg > TPS_CROSS_MAXCHG) printf(" (%zu in all)", cx.nchg);
  printf("\nsensitivity (break-even with the parameter at -10%% / +10%%):");
  for (int i = 0; i < ns; i++) {
    char a[24], b[24];
    snprintf(a, sizeof a, sens[i].be_minus < 0 ? "never" : "%ld", sens[i].be_minus);
    snprintf(b, sizeof b, sens[i].be_plus < 0 ? "never" : "%ld", sens[i].be_plus);
    printf("%s %s %s/%s", i ? "," : "", tps_pk_names[sens[i].knob], a, b);
  }
  printf("\n");
  /* inverse questions: at T (split = replicated there) and from T on (wins on [T, tmax]) */
  char s_at[160], s_from[160];
  if (tp > 1) {
    if (inv_link_rc == TPS_PRED_OK) snprintf(s_at, sizeof s_at, ">= %.2fx (a %.0f GB/s link)", inv_link, inv_link * gpu->link_gbps);
    else snprintf(s_at, sizeof s_at, "%s", isinf(inv_link) ? "none up to 1000x" : inv_link == 0 ? "any down to 1/1000" : "-");
    if (from_link_rc == TPS_PRED_OK) snprintf(s_from, sizeof s_from, ">= %.2fx (a %.0f GB/s link)", from_link, from_link * gpu->link_gbps);
    else snprintf(s_from, sizeof s_from, "%s", isinf(from_link) ? "none up to 1000x" : from_link == 0 ? "any down to 1/1000" : "-");
    printf("inverse, gather bandwidth for the split to pay: at %ld tokens %s; from %ld tokens on %s (this GPU: %.0f GB/s)\n", at, s_at, at,
           s_from, gpu->link_gbps);
  }
  int frac = scaling != TPS_SCALING_PESSIMISTIC;
  double tf = p.gemm.p[TPS_GP_TFLOPS];
  if (inv_gemm_rc == TPS_PRED_OK) {
    if (frac) snprintf(s_at, sizeof s_at, "<= %.2fx (%.0f%% of peak)", inv_gemm, 100 * inv_gemm * tf / peak);
    else snprintf(s_at, sizeof s_at, "<= %.2fx", inv_gemm);
  } else snprintf(s_at, sizeof s_at, "%s", isinf(inv_gemm) ? "any up to 1000x" : inv_gemm == 0 ? "none down to 1/1000" : "-");
  if (from_gemm_rc == TPS_PRED_OK) {
    if (frac) snprintf(s_from, sizeof s_from, "<= %.2fx (%.0f%% of peak)", from_gemm, 100 * from_gemm * tf / peak);
    else snprintf(s_from, sizeof s_from, "<= %.2fx", from_gemm);
  } else snprintf(s_from, sizeof s_from, "%s", isinf(from_gemm) ? "any up to 1000x" : from_gemm == 0 ? "none down to 1/1000" : "-");
  if (frac)
    printf("inverse, GEMM throughput for the split to pay: at %ld tokens %s; from %ld tokens on %s (now %.0f%% of peak)\n", at, s_at, at, s_from,
           100 * tf / peak);
  else
    printf("inverse, GEMM speedups over H20 (x the rule's) for the split to pay: at %ld tokens %s; from %ld tokens on %s\n", at, s_at, at, s_from);
  rc = TPS_EXIT_OK;
done:
  tps_pred_free(&p);
  tps_predref_free(&ref);
  free(tokens);
  return rc;
}
