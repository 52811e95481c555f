/* cmd_simulate.c: `tpsplit simulate`, what the split does to a model's prefill.
 *
 * For a model description (data/models/<name>.tsv), a GPU and a TP size:
 *  - each input projection's replicated and split time at the chunk size, from the
 *    measured table when it matches (measured), else predicted (model/predict.h; with a
 *    90% interval from the priors' spread, model/sim.h);
 *  - per layer kind and chunk size, the input-projection stage main (nothing split) vs
 *    split, the speedup and the saving (model/sim.h for the stage rule);
 *  - per chunk size, the saving summed over all layers;
 *  - per prompt, the chunks (the last one partial; a chunk below the threshold is not
 *    split), the total saving and, with baseline TTFTs, the predicted TTFT and its change.
 * Units: us per layer and per chunk, ms per prompt. */
#include "config.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tpsplit.h"
#include "cmdopt.h"
#include "err.h"
#include "util.h"
#include "jsonout.h"
#include "gpus.h"
#include "modeldesc.h"
#include "simctx.h"
#include "sim.h"

#define DEFAULT_PROMPTS "8192,32768,131072"
#define MAXCHUNKS 64
#define INTERVAL_SAMPLES 2000
#define INTERVAL_SEED 20261202UL

/* A comma list in the order given (not sorted): positive longs or positive doubles. */
static int parse_list_d(const char *s, double **out, size_t *n, int integers) {
  char **v;
  size_t m;
  *out = NULL; *n = 0;
  if (tps_parse_list(s, &v, &m)) return -1;
  double *d = malloc(m * sizeof *d);
  int bad = !d;
  for (size_t i = 0; !bad && i < m; i++) {
    long l;
    if (integers) { bad = tps_parse_long(v[i], &l) || l < 1 || l > 100000000L; d[i] = (double)l; }
    else bad = tps_parse_double(v[i], &d[i]) || !(d[i] > 0);
  }
  tps_free_list(v, m);
  if (bad) { free(d); return -1; }
  *out = d; *n = m;
  return 0;
}

static const char *dtype_name(double b) { return b == 4 ? "fp32" : b == 1 ? "fp8" : "bf16"; }

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Whether projection j is the first (among those in mask) with its name: names repeat for
 * projections of different widths in different layers. */
static int first_of_name_in(const tps_sim_model *m, size_t j, unsigned mask) {
  for (size_t i = 0; i < j; i++)
    if ((mask & (1u << i)) && strcmp(m->proj[i].name, m->proj[j].name) == 0) return 0;
  return 1;
}
static int first_of_name(const tps_sim_model *m, size_t j) { return first_of_name_in(m, j, ~0u); }

typedef struct {
  int source;                 /* 0 measured, else TPS_SCALING_* + 1 */
  tps_gemm_curve *rep, *split;
  tps_pred pred;
  int have_pred;
  double lo[2], hi[2];        /* interval at the chunk size (NaN for measured) */
} proj_src;

int cmd_simulate(int argc, char **argv) {
  const char *model_name = NULL, *prompt_s = DEFAULT_PROMPTS, *base_s = NULL, *split_s = NULL, *table_file = NULL;
  long chunk = 8192, thr_given = 0;
  const tps_cmdopt own[] = {
    {.name = "model", .kind = TPS_ARG_STR, .metavar = "M", .dst = &model_name, .required = 1,
     .help = "model description: a file, or the name of a bundled one (data/models/NAME.tsv)"},
    {.name = "chunk", .kind = TPS_ARG_LONG, .metavar = "C", .dst = &chunk, .min = 1, .max = 100000000,
     .help = "tokens per prefill chunk"},
    {.name = "prompt", .kind = TPS_ARG_STR, .metavar = "LIST", .dst = &prompt_s, .help = "prompt lengths in tokens"},
    {.name = "baseline-ttft-ms", .kind = TPS_ARG_STR, .metavar = "LIST", .dst = &base_s,
     .help = "unsplit time to first token of each prompt, ms"},
    {.name = "split", .kind = TPS_ARG_STR, .metavar = "S", .dst = &split_s,
     .help = "what is split: none, all, or a comma list of projection names (default: the model file's split column)"},
    {.name = "threshold", .kind = TPS_ARG_LONG, .metavar = "T", .dst = &thr_given, .min = 1, .max = TPS_CMDOPT_BIG,
     .help = "split only chunks of at least T tokens (default: the predicted threshold of the first split projection)"},
    {.name = "table", .kind = TPS_ARG_STR, .metavar = "FILE", .dst = &table_file,
     .help = "measured split-vs-replicated table used where it matches (default: the bundled H20 TP8 fused_wqa_wkv "
             "table)"},
  };
  const tps_cmdspec spec = {
    .name = "simulate",
    .synopsis = "--model M --gpu G --tp N [options]",
    .about = "Simulate the input-projection stage of a model's chunked prefill, replicated vs split by\n"
             "token: per layer kind, per chunk and per prompt, and the time to first token.",
    .common = TPS_OPT(TPS_OI_GPU) | TPS_OPT(TPS_OI_TP) | TPS_OPTS_REF,
    .required = TPS_OPT(TPS_OI_GPU) | TPS_OPT(TPS_OI_TP),
    .scalings = 1u << TPS_SCALING_MODEL | 1u << TPS_SCALING_SPEC,
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .dflt = {[TPS_OI_FIT] = "a fit of --table made on the spot"},
    .exit_status = "0 ok, 2 usage or input error.",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  int prc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (prc >= 0) return prc;
  const char *gpu_name = v.gpu, *fit_file = v.fits.n ? v.fits.v[0] : NULL, *gpus_file = v.gpus_file;
  const long tp = v.tp;
  const int json = v.json, scaling = v.scaling;
  double *prompts_d = NULL, *base = NULL;
  size_t nprompt = 0, nbase = 0;
  if (parse_list_d(prompt_s, &prompts_d, &nprompt, 1)) {
    tps_die_msg("simulate: bad --prompt '%s' (want a comma list of positive integers)", prompt_s);
    return TPS_EXIT_USAGE;
  }
  if (base_s && parse_list_d(base_s, &base, &nbase, 0)) {
    tps_die_msg("simulate: bad --baseline-ttft-ms '%s' (want a comma list of positive numbers)", base_s);
    free(prompts_d);
    return TPS_EXIT_USAGE;
  }
  if (base && nbase != nprompt) {
    tps_die_msg("simulate: %zu baseline TTFTs for %zu prompts (give one per prompt, in order)", nbase, nprompt);
    free(prompts_d); free(base);
    return TPS_EXIT_USAGE;
  }

  int rc = TPS_EXIT_USAGE;
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  tps_simref ref;
  tps_sim_model *m = calloc(1, sizeof *m);
  proj_src *src = calloc(TPS_SIM_MAXPROJ, sizeof *src);
  tps_sim_chunk *ch = calloc(MAXCHUNKS, sizeof *ch);
  tps_sim_kind kinds[TPS_SIM_MAXKINDS];
  size_t nk = 0;
  int have_gt = 0, have_ref = 0;
  memset(&ref, 0, sizeof ref);
  if (!m || !src || !ch) { tps_die_msg("simulate: out of memory"); goto out; }
  if (tps_gpus_load(gpus_file, &gt, &e)) goto err;
  have_gt = 1;
  const tps_gpu *gpu = tps_gpus_find(&gt, gpu_name, &e);
  if (!gpu) goto err;
  char mpath[4096];
  if (tps_modeldesc_find(model_name, mpath, sizeof mpath, &e) || tps_modeldesc_read(mpath, m, &e)) goto err;
  if (tps_sim_kinds(m, kinds, TPS_SIM_MAXKINDS, &nk)) { tps_err_set(&e, mpath, 0, "more than %d layer kinds", TPS_SIM_MAXKINDS); goto err; }

  /* what is split */
  unsigned mask = tps_sim_default_mask(m), all = (m->nproj >= 32 ? ~0u : (1u << m->nproj) - 1);
  if (split_s) {
    if (strcasecmp(split_s, "none") == 0) mask = 0;
    else if (strcasecmp(split_s, "all") == 0) mask = all;
    else {
      char **v;
      size_t nv;
      mask = 0;
      if (tps_parse_list(split_s, &v, &nv)) { tps_die_msg("simulate: bad --split '%s'", split_s); goto out; }
      for (size_t i = 0; i < nv; i++) {
        unsigned found = 0;
        for (size_t j = 0; j < m->nproj; j++)
          if (strcmp(m->proj[j].name, v[i]) == 0) found |= 1u << j;
        if (!found) {
          char names[512] = "";
          for (size_t j = 0; j < m->nproj; j++) {
            size_t l = strlen(names);
            if (!first_of_name(m, j)) continue;
            snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", m->proj[j].name);
          }
          tps_die_msg("simulate: --split: %s has no projection '%s' (it has: %s; or all, none)", m->name, v[i], names);
          tps_free_list(v, nv);
          goto out;
        }
        mask |= found;
      }
      tps_free_list(v, nv);
    }
  }

  /* sources of each projection's times */
  if (tps_simref_load(&ref, &gt, fit_file, table_file, gpus_file, &e)) goto err;
  have_ref = 1;
  for (size_t j = 0; j < m->nproj; j++) {
    const tps_sim_proj *p = &m->proj[j];
    tps_gemm_shape shape = {m->hidden, p->n, p->out_bytes};
    for (int k = 0; k < 2; k++) src[j].lo[k] = src[j].hi[k] = NAN;
    if (tps_simref_measured(&ref, gpu, (int)tp, &shape, p->path)) {
      src[j].source = 0;
      src[j].rep = tps_gemm_curve_alloc(ref.table.tokens, ref.table.replicated_us, ref.table.nrows);
      src[j].split = tps_gemm_curve_alloc(ref.table.tokens, ref.table.split_us, ref.table.nrows);
      if (!src[j].rep || !src[j].split) { tps_err_set(&e, ref.table.path, 0, "cannot interpolate the measured columns"); goto err; }
    } else {
      if (tps_simref_pred(&ref, &src[j].pred, scaling, gpu, (int)tp, p->path, &shape, &e)) {
        char msg[sizeof e.msg];
        snprintf(msg, sizeof msg, "%s", e.msg);
        tps_err_set(&e, mpath, 0, "projection %s: %s", p->name, msg);
        goto err;
      }
      src[j].have_pred = 1;
      src[j].source = scaling + 1;
      if (tps_sim_pred_interval(&src[j].pred, chunk, TPS_INTERVAL_LEVEL, INTERVAL_SAMPLES, INTERVAL_SEED, src[j].lo, src[j].hi)) {
        tps_err_set(&e, mpath, 0, "projection %s: no interval could be computed", p->name);
        goto err;
      }
    }
  }
  tps_sim_models ms;
  memset(&ms, 0, sizeof ms);
  ms.nproj = m->nproj;
  for (size_t j = 0; j < m->nproj; j++) {
    ms.p[j].rep_curve = src[j].rep;
    ms.p[j].split_curve = src[j].split;
    ms.p[j].pred = src[j].have_pred ? &src[j].pred : NULL;
  }
  tps_sim_cost cost = {tps_sim_models_cost, &ms};

  /* threshold */
  tps_simctx_thr thr;
  memset(&thr, 0, sizeof thr);
  thr.breakeven = -1;
  size_t thr_proj = 0;
  if (thr_given) {
    thr.threshold = thr_given;
    snprintf(thr.source, sizeof thr.source, "given");
  } else if (mask) {
    /* the first split projection on the main stream, else the first split one */
    thr_proj = m->nproj;
    for (size_t j = 0; j < m->nproj; j++)
      if ((mask & (1u << j)) && !m->proj[j].aux) { thr_proj = j; break; }
    if (thr_proj == m->nproj)
      for (size_t j = 0; j < m->nproj; j++)
        if (mask & (1u << j)) { thr_proj = j; break; }
    const tps_sim_proj *p = &m->proj[thr_proj];
    tps_gemm_shape shape = {m->hidden, p->n, p->out_bytes};
    if (tps_simref_threshold(&ref, scaling, gpu, (int)tp, p->path, &shape, chunk > TPS_PRED_DEFAULT_TMAX ? chunk : 0, &thr, &e))
      goto err;
  } else {
    thr.threshold = -1;
    snprintf(thr.source, sizeof thr.source, "nothing is split");
  }
  long thr_eff = thr.threshold > 0 ? thr.threshold : LONG_MAX;

  /* chunk sizes: the full chunk and every distinct last chunk */
  long sizes[MAXCHUNKS];
  size_t ns = 0;
  sizes[ns++] = chunk;
  for (size_t i = 0; i < nprompt; i++) {
    long n, last;
    tps_sim_chunking((long)prompts_d[i], chunk, &n, &last);
    int seen = 0;
    for (size_t k = 0; k < ns; k++) seen |= sizes[k] == last;
    if (!seen) {
      if (ns == MAXCHUNKS) { tps_die_msg("simulate: more than %d distinct chunk sizes", MAXCHUNKS); goto out; }
      sizes[ns++] = last;
    }
  }
  qsort(sizes, ns, sizeof sizes[0], cmp_long);
  for (size_t k = 0; k < ns; k++) {
    if (tps_sim_chunk_eval(m, kinds, nk, mask, thr_eff, sizes[k], &cost, &ch[k])) {
      tps_err_set(&e, mpath, 0, "the cost of a projection at %ld tokens is not finite", sizes[k]);
      goto err;
    }
  }
  /* prompts */
  tps_sim_prompt *pr = calloc(nprompt, sizeof *pr);
  if (!pr) goto out;
  for (size_t i = 0; i < nprompt; i++) {
    long n, last;
    tps_sim_chunking((long)prompts_d[i], chunk, &n, &last);
    const tps_sim_chunk *full = NULL, *lastc = NULL;
    for (size_t k = 0; k < ns; k++) {
      if (ch[k].tokens == chunk) full = &ch[k];
      if (ch[k].tokens == last) lastc = &ch[k];
    }
    tps_sim_prompt_eval((long)prompts_d[i], chunk, full, lastc, &pr[i]);
  }

  /* intervals of the savings from the priors' spread of the predicted projections */
  double *samp = malloc(ns * INTERVAL_SAMPLES * sizeof *samp), *tmpv = malloc(INTERVAL_SAMPLES * sizeof *tmpv);
  double *ch_lo = malloc(ns * sizeof *ch_lo), *ch_hi = malloc(ns * sizeof *ch_hi);
  double *pr_lo = malloc((nprompt + 1) * sizeof *pr_lo), *pr_hi = malloc((nprompt + 1) * sizeof *pr_hi);
  if (!samp || !tmpv || !ch_lo || !ch_hi || !pr_lo || !pr_hi ||
      tps_sim_sample_savings(m, kinds, nk, mask, thr_eff, sizes, ns, &ms, INTERVAL_SAMPLES, INTERVAL_SEED, samp)) {
    free(samp); free(tmpv); free(ch_lo); free(ch_hi); free(pr_lo); free(pr_hi); free(pr);
    tps_err_set(&e, mpath, 0, "the saving intervals could not be computed");
    goto err;
  }
  for (size_t k = 0; k < ns; k++) {
    memcpy(tmpv, samp + k * INTERVAL_SAMPLES, INTERVAL_SAMPLES * sizeof *tmpv);
    tps_sim_interval(tmpv, INTERVAL_SAMPLES, TPS_INTERVAL_LEVEL, &ch_lo[k], &ch_hi[k]);
  }
  for (size_t i = 0; i < nprompt; i++) {
    size_t kf = 0, kl = 0;
    for (size_t k = 0; k < ns; k++) {
      if (sizes[k] == chunk) kf = k;
      if (sizes[k] == pr[i].last_tokens) kl = k;
    }
    for (size_t q = 0; q < INTERVAL_SAMPLES; q++)
      tmpv[q] = ((double)(pr[i].nchunks - 1) * samp[kf * INTERVAL_SAMPLES + q] + samp[kl * INTERVAL_SAMPLES + q]) * 1e-3;
    tps_sim_interval(tmpv, INTERVAL_SAMPLES, TPS_INTERVAL_LEVEL, &pr_lo[i], &pr_hi[i]);
  }
  free(samp);
  free(tmpv);

  static const char *const srcname[] = {"measured", "model", "pessimistic", "spec"};
  char splitnames[512] = "";
  for (size_t j = 0; j < m->nproj; j++) {
    if (!(mask & (1u << j)) || !first_of_name_in(m, j, mask)) continue;
    size_t l = strlen(splitnames);
    snprintf(splitnames + l, sizeof splitnames - l, "%s%s", l ? "," : "", m->proj[j].name);
  }
  if (!splitnames[0]) snprintf(splitnames, sizeof splitnames, "none");

  if (json) {
    json_t *root = json_object(), *ja;
    json_object_set_new(root, "model", json_string(m->name));
    json_object_set_new(root, "model_file", json_string(mpath));
    json_object_set_new(root, "gpu", json_string(gpu->name));
    json_object_set_new(root, "tp", json_integer(tp));
    json_object_set_new(root, "chunk_tokens", json_integer(chunk));
    json_object_set_new(root, "split", json_string(splitnames));
    json_object_set_new(root, "threshold_tokens", thr.threshold > 0 ? json_integer(thr.threshold) : json_null());
    json_object_set_new(root, "breakeven_tokens", thr.breakeven > 0 ? json_integer(thr.breakeven) : json_null());
    json_object_set_new(root, "threshold_source", json_string(thr.source));
    json_object_set_new(root, "side_stream_max_tokens", json_integer(m->side_max_tokens));
    json_object_set_new(root, "reference", json_string(ref.fit_desc));
    ja = json_array();
    for (size_t j = 0; j < m->nproj; j++) {
      const tps_sim_proj *p = &m->proj[j];
      json_t *o = json_object();
      const tps_sim_chunk *cc = NULL;
      for (size_t k = 0; k < ns; k++) if (ch[k].tokens == chunk) cc = &ch[k];
      json_object_set_new(o, "name", json_string(p->name));
      json_object_set_new(o, "out_features", json_integer(p->n));
      json_object_set_new(o, "path", json_string(p->path->name));
      json_object_set_new(o, "out_dtype", json_string(dtype_name(p->out_bytes)));
      json_object_set_new(o, "stream", json_string(p->aux ? "aux" : "main"));
      json_object_set_new(o, "split", json_boolean((mask >> j) & 1u));
      json_object_set_new(o, "source", json_string(srcname[src[j].source]));
      json_object_set_new(o, "tokens", json_integer(chunk));
      tps_json_set_num(o, "replicated_us", cc->proj_rep_us[j]);
      tps_json_set_num(o, "split_us", cc->proj_split_us[j]);
      tps_json_set_num(o, "replicated_lo_us", src[j].lo[0]);
      tps_json_set_num(o, "replicated_hi_us", src[j].hi[0]);
      tps_json_set_num(o, "split_lo_us", src[j].lo[1]);
      tps_json_set_num(o, "split_hi_us", src[j].hi[1]);
      json_array_append_new(ja, o);
    }
    json_object_set_new(root, "projections", ja);
    ja = json_array();
    for (size_t k = 0; k < ns; k++)
      for (size_t q = 0; q < nk; q++) {
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(kinds[q].label));
        json_object_set_new(o, "layer_list", json_string(kinds[q].layer_list));
        json_object_set_new(o, "count", json_integer(kinds[q].count));
        json_object_set_new(o, "tokens", json_integer(ch[k].tokens));
        json_object_set_new(o, "split_on", json_boolean(ch[k].split_on));
        tps_json_set_num(o, "main_us", ch[k].kind_main_us[q]);
        tps_json_set_num(o, "split_us", ch[k].kind_split_us[q]);
        tps_json_set_num(o, "speedup", ch[k].kind_main_us[q] / ch[k].kind_split_us[q]);
        tps_json_set_num(o, "saving_us", ch[k].kind_main_us[q] - ch[k].kind_split_us[q]);
        json_array_append_new(ja, o);
      }
    json_object_set_new(root, "layers", ja);
    ja = json_array();
    for (size_t k = 0; k < ns; k++) {
      json_t *o = json_object();
      json_object_set_new(o, "tokens", json_integer(ch[k].tokens));
      json_object_set_new(o, "split_on", json_boolean(ch[k].split_on));
      tps_json_set_num(o, "main_us", ch[k].main_us);
      tps_json_set_num(o, "split_us", ch[k].split_us);
      tps_json_set_num(o, "saving_us", ch[k].saving_us);
      tps_json_set_num(o, "saving_ms", ch[k].saving_us * 1e-3);
      tps_json_set_num(o, "saving_lo_us", ch_lo[k]);
      tps_json_set_num(o, "saving_hi_us", ch_hi[k]);
      json_array_append_new(ja, o);
    }
    json_object_set_new(root, "chunks", ja);
    ja = json_array();
    for (size_t i = 0; i < nprompt; i++) {
      json_t *o = json_object();
      json_object_set_new(o, "prompt_tokens", json_integer(pr[i].prompt_tokens));
      json_object_set_new(o, "chunks", json_integer(pr[i].nchunks));
      json_object_set_new(o, "last_chunk_tokens", json_integer(pr[i].last_tokens));
      json_object_set_new(o, "last_chunk_split", json_boolean(pr[i].last_split_on));
      tps_json_set_num(o, "main_ms", pr[i].main_ms);
      tps_json_set_num(o, "split_ms", pr[i].split_ms);
      tps_json_set_num(o, "saving_ms", pr[i].saving_ms);
      tps_json_set_num(o, "saving_lo_ms", pr_lo[i]);
      tps_json_set_num(o, "saving_hi_ms", pr_hi[i]);
      if (base) {
        double pred, chg;
        tps_sim_ttft(base[i], pr[i].saving_ms, &pred, &chg);
        tps_json_set_num(o, "baseline_ttft_ms", base[i]);
        tps_json_set_num(o, "predicted_ttft_ms", pred);
        tps_json_set_num(o, "change_pct", chg);
        tps_json_set_num(o, "predicted_ttft_lo_ms", base[i] - pr_hi[i]);
        tps_json_set_num(o, "predicted_ttft_hi_ms", base[i] - pr_lo[i]);
      }
      json_array_append_new(ja, o);
    }
    json_object_set_new(root, "prompts", ja);
    rc = tps_json_print(root) ? TPS_EXIT_FAIL : TPS_EXIT_OK;
  } else {
    printf("tpsplit simulate: %s on %s, TP%ld, prefill chunks of %ld tokens, split: %s\n", m->name, gpu->name, tp,
           chunk, splitnames);
    if (thr.threshold > 0) printf("threshold: %ld tokens (%s)\n", thr.threshold, thr.source);
    else printf("threshold: none (%s)\n", thr.source);
    if (m->side_max_tokens > 0)
      printf("streams: at <= %ld tokens aux projections overlap the main one (stage = max(main, sum of aux)); above, all run one after another\n",
             m->side_max_tokens);
    else
      printf("streams: all projections of a layer run one after another\n");
    printf("reference: %s\n\nprojections at %ld tokens (us; interval: %.0f%% from the priors' spread, predictions only):\n",
           ref.fit_desc, chunk, TPS_INTERVAL_LEVEL * 100);
    printf("%-18s %6s %-13s %-5s %-4s %-5s %-9s %10s %-21s %10s %s\n", "projection", "N", "path", "out", "strm",
           "split", "source", "repl_us", "  interval", "split_us", "  interval");
    const tps_sim_chunk *cc = NULL;
    for (size_t k = 0; k < ns; k++) if (ch[k].tokens == chunk) cc = &ch[k];
    for (size_t j = 0; j < m->nproj; j++) {
      const tps_sim_proj *p = &m->proj[j];
      char iv[2][48];
      for (int k = 0; k < 2; k++) {
        if (isfinite(src[j].lo[k])) snprintf(iv[k], sizeof iv[k], "  [%.1f, %.1f]", src[j].lo[k], src[j].hi[k]);
        else snprintf(iv[k], sizeof iv[k], "  -");
      }
      printf("%-18s %6ld %-13s %-5s %-4s %-5s %-9s %10.1f %-21s %10.1f %s\n", p->name, p->n, p->path->name,
             dtype_name(p->out_bytes), p->aux ? "aux" : "main", (mask >> j) & 1u ? "yes" : "no",
             srcname[src[j].source], cc->proj_rep_us[j], iv[0], cc->proj_split_us[j], iv[1]);
    }
    printf("\nlayers (input-projection stage of one layer):\n");
    printf("%-28s %5s %8s %6s %10s %10s %8s %10s  %s\n", "kind", "count", "tokens", "split", "main_us", "split_us",
           "speedup", "saving_us", "layers");
    for (size_t k = 0; k < ns; k++)
      for (size_t q = 0; q < nk; q++)
        printf("%-28s %5d %8ld %6s %10.1f %10.1f %8.2f %10.1f  %s\n", kinds[q].label, kinds[q].count, ch[k].tokens,
               ch[k].split_on ? "yes" : "no", ch[k].kind_main_us[q], ch[k].kind_split_us[q],
               ch[k].kind_main_us[q] / ch[k].kind_split_us[q], ch[k].kind_main_us[q] - ch[k].kind_split_us[q],
               kinds[q].layer_list);
    printf("\nchunks (all %d layers):\n%8s %6s %12s %12s %12s %10s  %s\n", m->layers, "tokens", "split", "main_us",
           "split_us", "saving_us", "saving_ms", "interval_ms");
    for (size_t k = 0; k < ns; k++)
      printf("%8ld %6s %12.1f %12.1f %12.1f %10.3f  [%.3f, %.3f]\n", ch[k].tokens, ch[k].split_on ? "yes" : "no",
             ch[k].main_us, ch[k].split_us, ch[k].saving_us, ch[k].saving_us * 1e-3, ch_lo[k] * 1e-3, ch_hi[k] * 1e-3);
    printf("\nprompts:\n%13s %6s %10s %10s %10s %-*s", "prompt_tokens", "chunks", "last_chunk", "last_split",
           "saving_ms", base ? 22 : 0, " interval_ms");
    if (base) printf(" %16s %17s %10s", "baseline_ttft_ms", "predicted_ttft_ms", "change_pct");
    printf("\n");
    for (size_t i = 0; i < nprompt; i++) {
      char iv[64];
      snprintf(iv, sizeof iv, " [%.3f, %.3f]", pr_lo[i], pr_hi[i]);
      printf("%13ld %6ld %10ld %10s %10.3f %-*s", pr[i].prompt_tokens, pr[i].nchunks, pr[i].last_tokens,
             pr[i].last_split_on ? "yes" : "no", pr[i].saving_ms, base ? 22 : 0, iv);
      if (base) {
        double pred, chg;
        tps_sim_ttft(base[i], pr[i].saving_ms, &pred, &chg);
        printf(" %16.1f %17.1f %10.2f", base[i], pred, chg);
      }
      printf("\n");
    }
    rc = TPS_EXIT_OK;
  }
  free(pr); free(ch_lo); free(ch_hi); free(pr_lo); free(pr_hi);
  goto out;
err:
  tps_err_print(&e);
  rc = TPS_EXIT_USAGE;
out:
  if (src)
    for (size_t j = 0; j < TPS_SIM_MAXPROJ; j++) {
      tps_gemm_curve_free(src[j].rep);
      tps_gemm_curve_free(src[j].split);
      if (src[j].have_pred) tps_pred_free(&src[j].pred);
    }
  if (have_ref) tps_simref_free(&ref);
  if (have_gt) tps_gpus_free(&gt);
  free(src); free(ch); free(m); free(prompts_d); free(base);
  return rc;
}
