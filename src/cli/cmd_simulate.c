/* cmd_simulate.c: `tpsplit simulate`, what the split does to a model's prefill.
 *
 * For a model description (data/models/<name>.tsv), a GPU and a TP size:
 *  - each input projection's replicated and split time at the chunk size, from the
 *    measured table when it matches (measured), else predicted (model/predict/predict.h; with an
 *    interval from the priors' spread, model/sim/sim.h);
 *  - per layer kind and chunk size, the input-projection stage main (nothing split) vs
 *    split, the speedup and the saving (model/sim/sim.h for the stage rule);
 *  - per chunk size, the saving summed over all layers;
 *  - per prompt, the chunks (the last one partial; a chunk below the threshold is not
 *    split), the total saving and, with baseline TTFTs, the predicted TTFT and its change.
 * The run itself is model/sim/simrun.h; this file reads the inputs and prints.
 * Units: us per layer and per chunk, ms per prompt. */
#include "config.h"
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "src/cli/tpsplit.h"
#include "src/cli/cmdopt.h"
#include "src/base/err.h"
#include "src/base/util.h"
#include "src/base/jsonout.h"
#include "src/io/gpus.h"
#include "src/io/modeldesc.h"
#include "src/cli/sim_common.h"
#include "model/sim/simrun.h"
#include "model/predict/uncertainty.h"

#define DEFAULT_PROMPTS "8192,32768,131072"

/* A comma list of numbers, in the order given. */
typedef struct {
  double v[TPS_SIMRUN_MAXCHUNKS];
  size_t n;
} num_list;

static int parse_prompts(void *dst, const char *arg, char *why, size_t whysz) {
  num_list *l = dst;
  if (tps_parse_numbers(arg, l->v, TPS_SIMRUN_MAXCHUNKS, &l->n, 1, 1e8, 1) == 0) return 0;
  snprintf(why, whysz, "a comma list of at most %d integers in 1..100000000", TPS_SIMRUN_MAXCHUNKS);
  return -1;
}
static int parse_ttfts(void *dst, const char *arg, char *why, size_t whysz) {
  num_list *l = dst;
  if (tps_parse_numbers(arg, l->v, TPS_SIMRUN_MAXCHUNKS, &l->n, DBL_MIN, DBL_MAX, 0) == 0) return 0;
  snprintf(why, whysz, "a comma list of positive numbers");
  return -1;
}

static const char *dtype_name(double b) { return b == 4 ? "fp32" : b == 1 ? "fp8" : "bf16"; }

/* A projection's source: measured (the split table), or the scaling; for the parts scaling
 * the GEMM part's provenance and its [id] among the sources printed. */
static const char *src_word(const tps_simsrc *s, size_t j, char *buf, size_t sz) {
  if (s->source[j] == TPS_SCALING_PARTS + 1) {
    tps_partuse_gemm_short(&s->use[j], buf, sz);
    return buf;
  }
  return tps_simsrc_name(s->source[j]);
}

/* What the printers need. */
typedef struct {
  const tps_sim_model *m;
  const char *mpath, *fit_desc, *splitnames;
  const tps_gpu *gpu;
  long tp, chunk;
  unsigned mask;
  const tps_sim_kind *kinds;
  size_t nk;
  const tps_simsrc *src;
  const tps_sim_thr *thr;
  const tps_simrun_out *r;
  const double *base; /* NULL: no baseline TTFTs */
  const tps_partset *parts; /* the parts scaling's sources, or NULL */
  const char *table_file;   /* the measured split table */
  int backend;              /* the answer's gather backend (--gather) */
} report;

static int print_json(const report *x) {
  const tps_sim_model *m = x->m;
  const tps_simrun_out *r = x->r;
  const tps_sim_chunk *cc = &r->chunk[r->full];
  json_t *root = json_object(), *ja;
  json_object_set_new(root, "model", json_string(m->name));
  json_object_set_new(root, "model_file", json_string(x->mpath));
  json_object_set_new(root, "gpu", json_string(x->gpu->name));
  json_object_set_new(root, "tp", json_integer(x->tp));
  json_object_set_new(root, "chunk_tokens", json_integer(x->chunk));
  json_object_set_new(root, "split", json_string(x->splitnames));
  json_object_set_new(root, "threshold_tokens", x->thr->threshold > 0 ? json_integer(x->thr->threshold) : json_null());
  json_object_set_new(root, "breakeven_tokens", x->thr->breakeven > 0 ? json_integer(x->thr->breakeven) : json_null());
  json_object_set_new(root, "threshold_source", json_string(x->thr->source));
  json_object_set_new(root, "side_stream_max_tokens", json_integer(m->side_max_tokens));
  json_object_set_new(root, "reference", json_string(x->fit_desc));
  ja = json_array();
  for (size_t j = 0; j < m->nproj; j++) {
    const tps_sim_proj *p = &m->proj[j];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(p->name));
    json_object_set_new(o, "out_features", json_integer(p->n));
    json_object_set_new(o, "path", json_string(p->path->name));
    json_object_set_new(o, "out_dtype", json_string(dtype_name(p->out_bytes)));
    json_object_set_new(o, "stream", json_string(p->aux ? "aux" : "main"));
    json_object_set_new(o, "split", json_boolean((x->mask >> j) & 1u));
    json_object_set_new(o, "source", json_string(tps_simsrc_name(x->src->source[j])));
    if (x->src->source[j] == TPS_SCALING_PARTS + 1) {
      json_t *pj = tps_partuse_json(&x->src->use[j], x->backend, (int)x->tp, x->gpu->nvlink);
      json_object_update(o, pj);
      json_decref(pj);
    } else if (x->src->source[j] == 0) {
      /* both columns of the measured split table: the GEMM and the gather in them */
      json_t *g = json_object(), *a = json_object(), *ga = json_object();
      json_object_set_new(g, "provenance", json_string(tps_prov_names[TPS_PROV_MEASURED]));
      json_object_set_new(g, "source", json_string("the replicated column of the measured split table"));
      json_object_set_new(g, "file", json_string(x->table_file));
      json_object_set_new(a, "provenance", json_string(tps_prov_names[TPS_PROV_MEASURED]));
      json_object_set_new(a, "source", json_string("split - replicated of the measured split table"));
      json_object_set_new(a, "file", json_string(x->table_file));
      json_object_set_new(ga, "auto", a);
      json_object_set_new(o, "gemm", g);
      json_object_set_new(o, "gather", ga);
    }
    json_object_set_new(o, "tokens", json_integer(x->chunk));
    tps_json_set_num(o, "replicated_us", cc->proj_rep_us[j]);
    tps_json_set_num(o, "split_us", cc->proj_split_us[j]);
    tps_json_set_num(o, "replicated_lo_us", r->proj_lo_us[j][0]);
    tps_json_set_num(o, "replicated_hi_us", r->proj_hi_us[j][0]);
    tps_json_set_num(o, "split_lo_us", r->proj_lo_us[j][1]);
    tps_json_set_num(o, "split_hi_us", r->proj_hi_us[j][1]);
    json_array_append_new(ja, o);
  }
  json_object_set_new(root, "projections", ja);
  ja = json_array();
  for (size_t k = 0; k < r->nchunks; k++)
    for (size_t q = 0; q < x->nk; q++) {
      const tps_sim_chunk *c = &r->chunk[k];
      json_t *o = json_object();
      json_object_set_new(o, "kind", json_string(x->kinds[q].label));
      json_object_set_new(o, "layer_list", json_string(x->kinds[q].layer_list));
      json_object_set_new(o, "count", json_integer(x->kinds[q].count));
      json_object_set_new(o, "tokens", json_integer(c->tokens));
      json_object_set_new(o, "split_on", json_boolean(c->split_on));
      tps_json_set_num(o, "main_us", c->kind_main_us[q]);
      tps_json_set_num(o, "split_us", c->kind_split_us[q]);
      tps_json_set_num(o, "speedup", c->kind_main_us[q] / c->kind_split_us[q]);
      tps_json_set_num(o, "saving_us", c->kind_main_us[q] - c->kind_split_us[q]);
      json_array_append_new(ja, o);
    }
  json_object_set_new(root, "layers", ja);
  ja = json_array();
  for (size_t k = 0; k < r->nchunks; k++) {
    const tps_sim_chunk *c = &r->chunk[k];
    json_t *o = json_object();
    json_object_set_new(o, "tokens", json_integer(c->tokens));
    json_object_set_new(o, "split_on", json_boolean(c->split_on));
    tps_json_set_num(o, "main_us", c->main_us);
    tps_json_set_num(o, "split_us", c->split_us);
    tps_json_set_num(o, "saving_us", c->saving_us);
    tps_json_set_num(o, "saving_ms", c->saving_us * 1e-3);
    tps_json_set_num(o, "saving_lo_us", r->chunk_lo_us[k]);
    tps_json_set_num(o, "saving_hi_us", r->chunk_hi_us[k]);
    json_array_append_new(ja, o);
  }
  json_object_set_new(root, "chunks", ja);
  ja = json_array();
  for (size_t i = 0; i < r->nprompt; i++) {
    const tps_sim_prompt *p = &r->prompt[i];
    json_t *o = json_object();
    json_object_set_new(o, "prompt_tokens", json_integer(p->prompt_tokens));
    json_object_set_new(o, "chunks", json_integer(p->nchunks));
    json_object_set_new(o, "last_chunk_tokens", json_integer(p->last_tokens));
    json_object_set_new(o, "last_chunk_split", json_boolean(p->last_split_on));
    tps_json_set_num(o, "main_ms", p->main_ms);
    tps_json_set_num(o, "split_ms", p->split_ms);
    tps_json_set_num(o, "saving_ms", p->saving_ms);
    tps_json_set_num(o, "saving_lo_ms", r->prompt_lo_ms[i]);
    tps_json_set_num(o, "saving_hi_ms", r->prompt_hi_ms[i]);
    if (x->base) {
      tps_json_set_num(o, "baseline_ttft_ms", x->base[i]);
      tps_json_set_num(o, "predicted_ttft_ms", r->ttft_ms[i]);
      tps_json_set_num(o, "change_pct", r->ttft_change_pct[i]);
      tps_json_set_num(o, "predicted_ttft_lo_ms", r->ttft_lo_ms[i]);
      tps_json_set_num(o, "predicted_ttft_hi_ms", r->ttft_hi_ms[i]);
    }
    json_array_append_new(ja, o);
  }
  json_object_set_new(root, "prompts", ja);
  if (x->parts) json_object_set_new(root, "sources", tps_partset_sources_json(x->parts));
  return tps_json_print(root) ? TPS_EXIT_FAIL : TPS_EXIT_OK;
}

static void print_text(const report *x) {
  const tps_sim_model *m = x->m;
  const tps_simrun_out *r = x->r;
  const tps_sim_chunk *cc = &r->chunk[r->full];
  printf("tpsplit simulate: %s on %s, TP%ld, prefill chunks of %ld tokens, split: %s\n", m->name, x->gpu->name, x->tp,
         x->chunk, x->splitnames);
  if (x->thr->threshold > 0) printf("threshold: %ld tokens (%s)\n", x->thr->threshold, x->thr->source);
  else printf("threshold: none (%s)\n", x->thr->source);
  if (m->side_max_tokens > 0)
    printf("streams: at <= %ld tokens aux projections overlap the main one (stage = max(main, sum of aux)); above, all run one after another\n",
           m->side_max_tokens);
  else
    printf("streams: all projections of a layer run one after another\n");
  printf("reference: %s\n\nprojections at %ld tokens (us; interval: %.0f%% from the priors' spread, predictions only):\n",
         x->fit_desc, x->chunk, TPS_INTERVAL_LEVEL * 100);
  printf("%-18s %6s %-13s %-5s %-4s %-5s %-16s %10s %-21s %10s %s\n", "projection", "N", "path", "out", "strm",
         "split", "source", "repl_us", "  interval", "split_us", "  interval");
  for (size_t j = 0; j < m->nproj; j++) {
    const tps_sim_proj *p = &m->proj[j];
    char iv[2][48];
    for (int k = 0; k < 2; k++) {
      if (isfinite(r->proj_lo_us[j][k])) snprintf(iv[k], sizeof iv[k], "  [%.1f, %.1f]", r->proj_lo_us[j][k], r->proj_hi_us[j][k]);
      else snprintf(iv[k], sizeof iv[k], "  -");
    }
    char sw[64];
    printf("%-18s %6ld %-13s %-5s %-4s %-5s %-16s %10.1f %-21s %10.1f %s\n", p->name, p->n, p->path->name,
           dtype_name(p->out_bytes), p->aux ? "aux" : "main", (x->mask >> j) & 1u ? "yes" : "no",
           src_word(x->src, j, sw, sizeof sw), cc->proj_rep_us[j], iv[0], cc->proj_split_us[j], iv[1]);
  }
  if (x->parts) {
    printf("sources of the GEMM ([n] above) and of the gather (measured: the split table's own columns):\n");
    tps_partset_print_sources(x->parts, "  ");
  }
  printf("\nlayers (input-projection stage of one layer):\n");
  printf("%-28s %5s %8s %6s %10s %10s %8s %10s  %s\n", "kind", "count", "tokens", "split", "main_us", "split_us",
         "speedup", "saving_us", "layers");
  for (size_t k = 0; k < r->nchunks; k++)
    for (size_t q = 0; q < x->nk; q++) {
      const tps_sim_chunk *c = &r->chunk[k];
      printf("%-28s %5d %8ld %6s %10.1f %10.1f %8.2f %10.1f  %s\n", x->kinds[q].label, x->kinds[q].count, c->tokens,
             c->split_on ? "yes" : "no", c->kind_main_us[q], c->kind_split_us[q], c->kind_main_us[q] / c->kind_split_us[q],
             c->kind_main_us[q] - c->kind_split_us[q], x->kinds[q].layer_list);
    }
  printf("\nchunks (all %d layers):\n%8s %6s %12s %12s %12s %10s  %s\n", m->layers, "tokens", "split", "main_us",
         "split_us", "saving_us", "saving_ms", "interval_ms");
  for (size_t k = 0; k < r->nchunks; k++) {
    const tps_sim_chunk *c = &r->chunk[k];
    printf("%8ld %6s %12.1f %12.1f %12.1f %10.3f  [%.3f, %.3f]\n", c->tokens, c->split_on ? "yes" : "no", c->main_us,
           c->split_us, c->saving_us, c->saving_us * 1e-3, r->chunk_lo_us[k] * 1e-3, r->chunk_hi_us[k] * 1e-3);
  }
  printf("\nprompts:\n%13s %6s %10s %10s %10s %-*s", "prompt_tokens", "chunks", "last_chunk", "last_split",
         "saving_ms", x->base ? 22 : 0, " interval_ms");
  if (x->base) printf(" %16s %17s %10s", "baseline_ttft_ms", "predicted_ttft_ms", "change_pct");
  printf("\n");
  for (size_t i = 0; i < r->nprompt; i++) {
    const tps_sim_prompt *p = &r->prompt[i];
    char iv[64];
    snprintf(iv, sizeof iv, " [%.3f, %.3f]", r->prompt_lo_ms[i], r->prompt_hi_ms[i]);
    printf("%13ld %6ld %10ld %10s %10.3f %-*s", p->prompt_tokens, p->nchunks, p->last_tokens,
           p->last_split_on ? "yes" : "no", p->saving_ms, x->base ? 22 : 0, iv);
    if (x->base) printf(" %16.1f %17.1f %10.2f", x->base[i], r->ttft_ms[i], r->ttft_change_pct[i]);
    printf("\n");
  }
}

/* The split mask of --split (NULL: the model file's split column).  0, or -1 after a
 * message. */
static int split_mask(const tps_sim_model *m, const char *split_s, unsigned *mask) {
  *mask = tps_sim_default_mask(m);
  if (!split_s) return 0;
  char **w;
  size_t n, bad = 0;
  if (tps_parse_list(split_s, &w, &n) != 0) {
    if (w) tps_free_list(w, n);
    tps_die_msg("bad --split '%s'", split_s);
    return -1;
  }
  int rc = 0;
  if (tps_sim_mask_from_names(m, w, n, mask, &bad) != TPS_OK) {
    char names[512];
    tps_die_msg("--split: %s has no projection '%s' (it has: %s; or all, none)", m->name, w[bad],
                tps_sim_mask_names(m, ~0u, ", ", names, sizeof names));
    rc = -1;
  }
  tps_free_list(w, n);
  return rc;
}

/* The measured table's name as given or under data/. */
static const char *shown_table(const tps_simref *r) { return r->have_table && r->table.path ? r->table.path : "-"; }

/* The threshold: given, or predicted for the projection that gates the split. */
static int threshold(const tps_simref *ref, const tps_sim_model *m, unsigned mask, long given, int scaling,
                     const tps_gpu *gpu, long tp, long chunk, tps_sim_thr *thr, tps_err *e) {
  memset(thr, 0, sizeof *thr);
  thr->breakeven = -1;
  thr->threshold = -1;
  if (given) {
    thr->threshold = given;
    snprintf(thr->source, sizeof thr->source, "given");
    return 0;
  }
  size_t j = tps_sim_threshold_proj(m, mask);
  if (j == m->nproj) {
    snprintf(thr->source, sizeof thr->source, "nothing is split");
    return 0;
  }
  const tps_sim_proj *p = &m->proj[j];
  tps_gemm_shape shape = {m->hidden, p->n, p->out_bytes};
  return tps_simref_threshold(ref, scaling, gpu, (int)tp, p->path, &shape, chunk > TPS_PRED_DEFAULT_TMAX ? chunk : 0, thr, e);
}

/* The values of simulate's own options. */
typedef struct {
  const char *model_name, *split_s, *table_file;
  long chunk, thr_given;
  num_list prompts, base;
} sim_args;

/* Parse argv into a and v: -1 to run, else the exit code to return at once. */
static int sim_parse(int argc, char **argv, sim_args *a, tps_cmdopt_values *v) {
  memset(a, 0, sizeof *a);
  a->chunk = 8192;
  parse_prompts(&a->prompts, DEFAULT_PROMPTS, NULL, 0);
  const tps_cmdopt own[] = {
    {.name = "model", .kind = TPS_ARG_STR, .io = TPS_IO_IN, .metavar = "M", .dst = &a->model_name, .required = 1,
     .help = "model description: a file, or the name of a bundled one (data/models/NAME.tsv)"},
    {.name = "chunk", .kind = TPS_ARG_LONG, .metavar = "C", .dst = &a->chunk, .min = 1, .max = TPS_PRED_MAX_TMAX,
     .help = "tokens per prefill chunk, 1..65536 (the longest scan of the model)"},
    {.name = "prompt", .kind = TPS_ARG_FN, .metavar = "LIST", .dst = &a->prompts, .parse = parse_prompts,
     .help = "prompt lengths in tokens, comma separated (default " DEFAULT_PROMPTS ")"},
    {.name = "baseline-ttft-ms", .kind = TPS_ARG_FN, .metavar = "LIST", .dst = &a->base, .parse = parse_ttfts,
     .help = "unsplit time to first token of each prompt, ms, comma separated"},
    {.name = "split", .kind = TPS_ARG_STR, .metavar = "S", .dst = &a->split_s,
     .help = "what is split: none, all, or a comma list of projection names (default: the model file's split column)"},
    {.name = "threshold", .kind = TPS_ARG_LONG, .metavar = "T", .dst = &a->thr_given, .min = 1, .max = TPS_CMDOPT_BIG,
     .help = "split only chunks of at least T tokens (default: the predicted threshold of the first split projection)"},
    {.name = "table", .kind = TPS_ARG_STR, .io = TPS_IO_IN, .metavar = "FILE", .dst = &a->table_file,
     .help = "measured split-vs-replicated table used where it matches (default: the bundled H20 TP8 fused_wqa_wkv "
             "table)"},
  };
  const tps_cmdspec spec = {
    .name = "simulate",
    .synopsis = "--model M --gpu G --tp N [options]",
    .about = "Simulate the input-projection stage of a model's chunked prefill, replicated vs split by\n"
             "token: per layer kind, per chunk and per prompt, and the time to first token.",
    .common = TPS_OPT(TPS_OI_GPU) | TPS_OPT(TPS_OI_TP) | TPS_OPTS_REF | TPS_OPTS_PARTS,
    .required = TPS_OPT(TPS_OI_GPU) | TPS_OPT(TPS_OI_TP),
    .scalings = 1u << TPS_SCALING_MODEL | 1u << TPS_SCALING_SPEC | 1u << TPS_SCALING_PARTS,
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .dflt = {[TPS_OI_FIT] = "a fit of --table made on the spot"},
    .exit_status = "0 ok, 2 usage or input error.",
  };
  tps_cmdopt_init(v);
  return tps_cmdopt_parse(&spec, argc, argv, v);
}

int cmd_simulate(int argc, char **argv) {
  sim_args a;
  tps_cmdopt_values v;
  int prc = sim_parse(argc, argv, &a, &v);
  const char *model_name = a.model_name, *split_s = a.split_s, *table_file = a.table_file;
  long chunk = a.chunk, thr_given = a.thr_given;
  num_list prompts = a.prompts, base = a.base;
  if (prc >= 0) return prc;
  const long tp = v.tp;
  if (base.n && base.n != prompts.n) {
    tps_usage_msg("%zu baseline TTFTs for %zu prompts (give one per prompt, in order)", base.n, prompts.n);
    return TPS_EXIT_USAGE;
  }
  long prompt_tokens[TPS_SIMRUN_MAXCHUNKS];
  for (size_t i = 0; i < prompts.n; i++) prompt_tokens[i] = (long)prompts.v[i];

  int rc = TPS_EXIT_USAGE;
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  tps_simref ref;
  tps_sim_model *m = calloc(1, sizeof *m);
  tps_simsrc *src = calloc(1, sizeof *src);
  tps_simrun_out r;
  tps_sim_kind kinds[TPS_SIM_MAXKINDS];
  size_t nk = 0;
  unsigned mask = 0;
  int have_gt = 0, have_ref = 0;
  memset(&ref, 0, sizeof ref);
  memset(&r, 0, sizeof r);
  char mpath[4096];
  if (!m || !src) { tps_die_msg("out of memory"); rc = TPS_EXIT_FAIL; goto out; }
  if (tps_gpus_load(v.gpus_file, &gt, &e)) goto err;
  have_gt = 1;
  const tps_gpu *gpu = tps_gpus_find(&gt, v.gpu, &e);
  if (!gpu) goto err;
  if (tps_modeldesc_find(model_name, mpath, sizeof mpath, &e) || tps_modeldesc_read(mpath, m, &e)) goto err;
  if (tps_sim_kinds(m, kinds, TPS_SIM_MAXKINDS, &nk)) { tps_err_set(&e, mpath, 0, "more than %d layer kinds", TPS_SIM_MAXKINDS); goto err; }
  if (split_mask(m, split_s, &mask)) goto out;
  if (tps_simref_load(&ref, &gt, v.fits.n ? v.fits.v[0] : NULL, table_file, v.gpus_file, &e)) goto err;
  have_ref = 1;
  ref.po = v.po; /* --gather and its options: the answer's backend */
  if (v.scaling == TPS_SCALING_PARTS && tps_simref_parts(&ref, &gt, &v, chunk > TPS_PRED_DEFAULT_TMAX ? chunk : 0, &e)) goto err;
  if (ref.parts) {
    /* the user's files must be of this GPU, TP and a path of the model */
    const tps_path *mp[TPS_SIM_MAXPROJ];
    size_t nmp = 0;
    for (size_t j = 0; j < m->nproj; j++) {
      size_t k = 0;
      while (k < nmp && mp[k] != m->proj[j].path) k++;
      if (k == nmp) mp[nmp++] = m->proj[j].path;
    }
    const int itp = (int)tp;
    if (tps_partset_check_targets(ref.parts, &gpu, 1, &itp, 1, mp, nmp, &e)) goto err;
  }
  if (tps_simref_sources(&ref, m, mpath, v.scaling, gpu, (int)tp, src, &e)) goto err;
  tps_sim_thr thr;
  if (threshold(&ref, m, mask, thr_given, v.scaling, gpu, tp, chunk, &thr, &e)) goto err;
  if (ref.parts) {
    /* number the sources: the gating projection's first, then each projection's */
    tps_partset_mark(ref.parts, &thr.use, v.po.backend, (int)tp, gpu->nvlink);
    for (size_t j = 0; j < m->nproj; j++)
      if (src->source[j] == TPS_SCALING_PARTS + 1) tps_partset_mark(ref.parts, &src->use[j], v.po.backend, (int)tp, gpu->nvlink);
  }
  tps_simrun_in in = {m, kinds, nk, &src->models, mask, thr.threshold, chunk, prompt_tokens, prompts.n,
                      base.n ? base.v : NULL, TPS_INTERVAL_LEVEL, TPS_SIMRUN_SAMPLES, TPS_SIMRUN_SEED};
  int st = tps_simrun(&in, &r);
  if (st == TPS_ECOST) { tps_err_set(&e, mpath, 0, "the cost of a projection is not finite at a chunk size"); goto err; }
  if (st == TPS_EINVAL) { tps_die_msg("more than %d distinct chunk sizes", TPS_SIMRUN_MAXCHUNKS); goto out; }
  if (st == TPS_ENOMEM) { tps_err_oom(&e, "simulating %s", mpath); goto err; }
  if (st != TPS_OK) { tps_err_set(&e, mpath, 0, "the simulation failed: %s", tps_strstatus(st)); goto err; }
  char splitnames[512];
  tps_sim_mask_names(m, mask, ",", splitnames, sizeof splitnames);
  char refdesc[700];
  if (ref.parts)
    snprintf(refdesc, sizeof refdesc, "each part from a measurement where one exists, else a model (sources below); measured "
             "projections: %s; marlin-w8a16 off the table: the %s", shown_table(&ref), ref.fit_desc);
  else
    snprintf(refdesc, sizeof refdesc, "%s", ref.fit_desc);
  report x = {m, mpath, refdesc, splitnames, gpu, tp, chunk, mask, kinds, nk, src, &thr, &r, base.n ? base.v : NULL, ref.parts,
              shown_table(&ref), v.po.backend};
  if (v.json) rc = print_json(&x);
  else { print_text(&x); rc = TPS_EXIT_OK; }
  goto out;
err:
  tps_err_print(&e);
  rc = tps_err_exit_code(&e);
out:
  tps_simrun_free(&r);
  if (src) tps_simsrc_free(src);
  if (have_ref) tps_simref_free(&ref);
  if (have_gt) tps_gpus_free(&gt);
  free(src);
  free(m);
  return rc;
}
