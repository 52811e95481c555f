/* cmd_decide.c: `tpsplit decide`, the split gate of the seed vLLM pull request for one
 * configuration (the conditions: model/sim/gate.h).  The threshold is the one given
 * (--threshold), the one of an engine-facing thresholds file (--thresholds FILE: what an
 * engine would read; src/io/thresholds.h), or, by default, the recommended threshold of the
 * prediction for this GPU, TP and path (least predicted excess, model/predict/excess.h).
 * Exit status: 0 split, 1 no split, 2 usage or input error. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "model/core/harness.h"
#include "src/cli/tpsplit.h"
#include "src/cli/cmdopt.h"
#include "src/base/err.h"
#include "src/base/util.h"
#include "src/base/jsonout.h"
#include "src/io/gpus.h"
#include "src/cli/sim_common.h"
#include "model/sim/gate.h"
#include "src/io/thresholds.h"

/* --fully-connected: yes, no or auto (-1). */
static int parse_fc(void *dst, const char *arg, char *why, size_t whysz) {
  int *fc = dst;
  if (strcasecmp(arg, "auto") == 0) { *fc = -1; return 0; }
  if (tps_cmdopt_yesno(arg, fc) == 0) return 0;
  snprintf(why, whysz, "yes, no or auto");
  return -1;
}

/* ---- --thresholds FILE */

/* The device of the file the gate is for: --gpu by the name engines key it (its CUDA name,
 * spaces as '_'), a device whose gpu_spec is that GPU, a device named by --gpu itself
 * ("NVIDIA_H200"), or the file's only device; *gpu: the GPU of the table (--gpu's, or the
 * device's gpu_spec).  NULL with e. */
static const tps_thr_device *thr_device(const tps_thr_file *f, const tps_gpu_table *gt, const char *gname,
                                        const tps_gpu **gpu, tps_err *e) {
  const tps_thr_device *d = NULL;
  char have[400] = "";
  for (size_t i = 0; i < f->ndev; i++) {
    size_t u = strlen(have);
    if (u + 2 < sizeof have) snprintf(have + u, sizeof have - u, "%s%s", i ? ", " : "", f->dev[i].key);
  }
  *gpu = NULL;
  if (gname) {
    tps_err ge;
    tps_err_clear(&ge);
    const tps_gpu *g = tps_gpus_find(gt, gname, &ge);
    if (!g) {
      /* an engine's key or CUDA name, and its gpu_spec */
      d = tps_thr_find_device(f, gname);
      if (!d) { *e = ge; return NULL; }
      if (!d->gpu_spec[0] || !(g = tps_gpus_find(gt, d->gpu_spec, e))) {
        if (!d->gpu_spec[0]) tps_err_set(e, f->path, 0, "device %s has no gpu_spec: give --gpu as a GPU of the table", d->key);
        return NULL;
      }
      *gpu = g;
      return d;
    }
    *gpu = g;
    char key[256];
    tps_thr_gpu_key(g, key, sizeof key);
    d = tps_thr_find_device(f, key); /* by its key alone, as an engine looks it up: a device whose gpu_spec is the GPU
                                      * under another key (NVIDIA_H200_NVL) is not what an H200 SXM's engine finds */
    if (!d) tps_err_set(e, f->path, 0, "no device %s (%s as engines key it) in the file; it has %s", key, g->name, have);
    return d;
  }
  if (f->ndev != 1) {
    tps_err_set(e, f->path, 0, "%zu devices (%s): give --gpu", f->ndev, have);
    return NULL;
  }
  d = &f->dev[0];
  if (!d->gpu_spec[0]) {
    tps_err_set(e, f->path, 0, "device %s has no gpu_spec: give --gpu as a GPU of the table (the gate needs its datasheet)", d->key);
    return NULL;
  }
  *gpu = tps_gpus_find(gt, d->gpu_spec, e);
  return *gpu ? d : NULL;
}

/* Append the distinct keys seen ("5120x1792", "w8a16", ...) to buf. */
static void add_key(char *buf, size_t sz, const char *k) {
  char pad[80], have[1100];
  snprintf(pad, sizeof pad, ", %s,", k);
  snprintf(have, sizeof have, ", %s,", buf);
  if (strstr(have, pad)) return;
  size_t u = strlen(buf);
  if (u + 2 < sz) snprintf(buf + u, sz - u, "%s%s", u ? ", " : "", k);
}

/* The one-line error of an entry that is not there: the JSON path of the first level
 * missing and what the file has at that level. */
static void thr_missing(const tps_thr_file *f, const tps_thr_device *d, long k, long n, const tps_path *path, int tp, int backend,
                        tps_err *e) {
  int lvl = 0; /* levels matched: shape, path, TP */
  char have[1000] = "", sh[64];
  snprintf(sh, sizeof sh, "%ldx%ld", k, n);
  for (size_t i = 0; i < d->nentries; i++) {
    const tps_thr_entry *x = &d->e[i];
    int m = x->k == k && x->n == n ? x->path == (int)path->id ? x->tp == tp ? 3 : 2 : 1 : 0;
    if (m > lvl) { lvl = m; have[0] = 0; }
    if (m < lvl) continue;
    char w[64];
    if (m == 0) snprintf(w, sizeof w, "%ldx%ld", x->k, x->n);
    else if (m == 1) snprintf(w, sizeof w, "%s", tps_path_name(x->path));
    else if (m == 2) snprintf(w, sizeof w, "%d", x->tp);
    else snprintf(w, sizeof w, "%s", tps_gather_name(x->backend));
    add_key(have, sizeof have, w);
  }
  static const char *const what[] = {"shapes", "paths", "TPs", "backends"};
  char at[128] = "";
  if (lvl >= 1) snprintf(at, sizeof at, " at %s", sh);
  if (lvl >= 2) snprintf(at + strlen(at), sizeof at - strlen(at), " %s", path->name);
  if (lvl >= 3) snprintf(at + strlen(at), sizeof at - strlen(at), " TP%d", tp);
  tps_err_set(e, f->path, 0, "no entry $.devices.%s.thresholds.%s.%s.%d.%s (--gpu, --k x --n, --path, --tp, --gather); %s has%s %s%s%s",
              d->key, sh, path->name, tp, tps_gather_name(backend), d->key, at, what[lvl], have[0] ? " " : " none", have);
}

/* The kernel paths the file holds for the device (--gpu, or its only one) at K x N, TP and
 * backend, in file order: how many (at most max), 0 when none; -1 with e when the file or its
 * device cannot be read. */
static int thr_paths(const char *file, const tps_gpu_table *gt, const char *gname, long k, long n, int tp, int backend,
                     const tps_path **out, int max, tps_err *e) {
  tps_thr_file f;
  const tps_gpu *gpu;
  if (tps_thr_read(file, &f, e)) return -1;
  const tps_thr_device *d = thr_device(&f, gt, gname, &gpu, e);
  int m = d ? 0 : -1;
  for (size_t i = 0; d && i < d->nentries; i++) {
    const tps_thr_entry *x = &d->e[i];
    const tps_path *p = tps_path_get(x->path);
    int seen = !p || x->k != k || x->n != n || x->tp != tp || x->backend != backend;
    for (int j = 0; j < m && !seen; j++) seen = out[j] == p;
    if (!seen && m < max) out[m++] = p;
  }
  tps_thr_free(&f);
  return m;
}

/* The entry's win bands and losing gaps as the file has them (absent: NULL). */
static json_t *bands_json(const tps_thr_entry *x) {
  if (!x->have_bands) return NULL;
  json_t *o = json_object();
  tps_thr_bands_json_set(o, x->band_from, x->band_to, x->gap_min_speedup, x->nbands, x->max_tokens);
  return o;
}

/* The threshold of the file's entry: thr (threshold -1 when null), its parts as JSON, its
 * bands (*bands: the line when they say more than the threshold, else ""; *bandsj: as JSON,
 * NULL when the entry has none). */
static int thr_from_file(const char *file, const tps_gpu_table *gt, const char *gname, long k, long n, const tps_path *path,
                         int tp, int backend, long tokens, const tps_gpu **gpu, tps_sim_thr *thr, json_t **prov,
                         char *bands, size_t bandsz, json_t **bandsj, tps_err *e) {
  tps_thr_file f;
  if (tps_thr_read(file, &f, e)) return -1;
  const tps_thr_device *d = thr_device(&f, gt, gname, gpu, e);
  const tps_thr_entry *x = d ? tps_thr_find(d, k, n, (int)path->id, tp, backend) : NULL;
  if (d && !x) thr_missing(&f, d, k, n, path, tp, backend, e);
  if (!x) { tps_thr_free(&f); return -1; }
  memset(thr, 0, sizeof *thr);
  thr->threshold = x->split_from > 0 ? x->split_from : -1;
  thr->breakeven = x->breakeven > 0 ? (long)ceil(x->breakeven) : -1;
  char line[1200];
  tps_thr_entry_line(x, line, sizeof line);
  snprintf(thr->source, sizeof thr->source, "%.4096s, %.64s %s %.32s: %.330s%s", file, d->key,
           d->gpus_visible ? "calibrated" : "predicted", f.date, line, tokens > x->max_tokens ? "; T is above the entry's max_tokens" : "");
  json_t *o = json_object();
  json_object_set_new(o, "file", json_string(file));
  json_object_set_new(o, "device", json_string(d->key));
  json_object_set_new(o, "measured_on_device", json_boolean(d->gpus_visible > 0));
  json_object_set_new(o, "date", json_string(f.date));
  json_object_set_new(o, "max_tokens", json_integer(x->max_tokens));
  json_t *iv = json_array();
  for (int i = 0; i < 2; i++) {
    double b = i ? x->hi : x->lo;
    json_array_append_new(iv, b <= 0 ? json_null() : b == floor(b) ? json_integer((json_int_t)b) : json_real(b));
  }
  json_object_set_new(o, "interval_tokens", iv);
  json_object_set_new(o, "gemm", tps_thr_prov_json(&x->gemm));
  json_object_set_new(o, "gather", tps_thr_prov_json(&x->gather));
  *prov = o;
  tps_thr_entry_bands_line(x, bands, bandsz);
  *bandsj = bands_json(x);
  tps_thr_free(&f);
  return 0;
}

/* The decision as JSON (*prov, the threshold's parts, is taken). */
static json_t *decide_json(const tps_gpu *gpu, long tp, long tokens, const tps_path *path, const tps_sim_thr *thr,
                           json_t **prov, json_t *bandsj, const tps_gate_cond *cs, int nc, int split) {
  json_t *root = json_object(), *arr = json_array();
  json_object_set_new(root, "gpu", json_string(gpu->name));
  json_object_set_new(root, "tp", json_integer(tp));
  json_object_set_new(root, "tokens", json_integer(tokens));
  json_object_set_new(root, "path", json_string(path->name));
  json_object_set_new(root, "threshold_tokens", thr->threshold > 0 ? json_integer(thr->threshold) : json_null());
  json_object_set_new(root, "breakeven_tokens", thr->breakeven > 0 ? json_integer(thr->breakeven) : json_null());
  json_object_set_new(root, "threshold_source", json_string(thr->source));
  if (*prov) json_object_set_new(root, "threshold_parts", *prov), *prov = NULL;
  if (bandsj) json_object_update(root, bandsj);
  for (int i = 0; i < nc; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(cs[i].name));
    json_object_set_new(o, "pass", json_boolean(cs[i].pass));
    json_object_set_new(o, "reason", json_string(cs[i].reason));
    json_array_append_new(arr, o);
  }
  json_object_set_new(root, "conditions", arr);
  json_object_set_new(root, "split", json_boolean(split));
  json_object_set_new(root, "verdict", json_string(split ? "split" : "no split"));
  return root;
}

/* The values of decide's own options. */
typedef struct {
  long tokens, thr_given;
  const char *thr_file;
  int sp, lora, mb, bi, car, fc;
} decide_args;

/* Parse argv into a and v: -1 to run, else the exit code to return at once. */
static int decide_parse(int argc, char **argv, decide_args *a, tps_cmdopt_values *v) {
  memset(a, 0, sizeof *a);
  a->car = 1;
  a->fc = -1;
  const tps_cmdopt own[] = {
    {.name = "tokens", .kind = TPS_ARG_LONG, .metavar = "T", .dst = &a->tokens, .min = 1, .max = TPS_TOKENS_MAX,
     .required = 1, .help = "tokens in the batch"},
    {.name = "sequence-parallel", .kind = TPS_ARG_YESNO, .metavar = "yes|no", .dst = &a->sp, .optional = 1,
     .help = "sequence parallelism is on (default no)"},
    {.name = "lora", .kind = TPS_ARG_YESNO, .metavar = "yes|no", .dst = &a->lora, .optional = 1,
     .help = "LoRA adapters are loaded (default no)"},
    {.name = "micro-batching", .kind = TPS_ARG_YESNO, .metavar = "yes|no", .dst = &a->mb, .optional = 1,
     .help = "two micro-batches overlap (default no)"},
    {.name = "batch-invariant", .kind = TPS_ARG_YESNO, .metavar = "yes|no", .dst = &a->bi, .optional = 1,
     .help = "batch-invariant mode is on (default no)"},
    {.name = "custom-allreduce", .kind = TPS_ARG_YESNO, .metavar = "yes|no", .dst = &a->car,
     .help = "custom all-reduce enabled (default yes)"},
    {.name = "fully-connected", .kind = TPS_ARG_FN, .metavar = "yes|no|auto", .dst = &a->fc, .parse = parse_fc,
     .help = "all ranks connected by NVLink (default auto: the GPU has NVLink and TP <= 8, one NVLink domain)"},
    {.name = "threshold", .kind = TPS_ARG_LONG, .metavar = "T", .dst = &a->thr_given, .min = 1, .max = TPS_CMDOPT_BIG,
     .help = "token threshold (default: predicted for the GPU, TP and path)"},
    {.name = "thresholds", .kind = TPS_ARG_STR, .io = TPS_IO_IN, .metavar = "FILE", .dst = &a->thr_file,
     .help = "the threshold of an engine-facing thresholds file (tpsplit calibrate -o, predict or crossover "
             "--thresholds-out), as an engine reads it: the device of --gpu keyed as engines key it (NVIDIA_H200; "
             "default: the file's only device), the entry of --k x --n, --path, --tp and --gather's backend "
             "(default auto); split when T >= split_from_tokens (null: never); a missing entry is an error"},
  };
  const tps_cmdspec spec = {
    .name = "decide",
    .synopsis = "--gpu G --tp N --tokens T [options]\n"
                "       tpsplit decide --thresholds FILE [--gpu G] --tp N --tokens T [--path P] [--k K --n N] [options]",
    .about = "Apply the split gate of the seed vLLM pull request to one configuration: print each\n"
             "condition with PASS/FAIL and a one-line reason, then the verdict.",
    .common = TPS_OPT(TPS_OI_GPU) | TPS_OPT(TPS_OI_TP) | TPS_OPT(TPS_OI_PATH) | TPS_OPTS_REF | TPS_OPTS_PARTS |
              TPS_OPTS_SHAPE,
    .required = TPS_OPT(TPS_OI_TP),
    .text = {[TPS_OI_GPU] = "target GPU: a name or alias of the GPU table (required, unless --thresholds names the "
                            "device: the file's only one, or --gpu as its key, e.g. NVIDIA_H200)",
             [TPS_OI_PATH] = "kernel path (default marlin-w8a16; with --thresholds, every path the file holds for the "
                             "device, K x N, TP and backend, each decided in turn: calibrate writes dense-bf16, native-fp8 "
                             "and w8a16)"},
    .scalings = 1u << TPS_SCALING_MODEL | 1u << TPS_SCALING_SPEC | 1u << TPS_SCALING_PARTS,
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .exit_status = "0 split (with several paths from --thresholds: on every one), 1 no split, 2 usage or input error "
                   "(the table: tpsplit --help).",
  };
  tps_cmdopt_init(v);
  return tps_cmdopt_parse(&spec, argc, argv, v);
}

/* One decision: the threshold (the file's entry for path, the one given, or predicted), the
 * gate, and its output (text on stdout; JSON into *out).  1 split, 0 not, or -1 after the
 * one-line error (*rc: its exit code). */
static int decide_path(const decide_args *a, const tps_cmdopt_values *v, const tps_gpu_table *gt, const tps_path *path,
                       json_t **out, int *rc) {
  const long tp = v->tp, tokens = a->tokens;
  tps_err e;
  tps_err_clear(&e);
  const tps_gpu *gpu = NULL;
  tps_sim_thr thr;
  json_t *prov = NULL; /* the threshold's parts, for --json */
  char bands[8192] = "";  /* the file's win bands, when they say more than the threshold (128 at most) */
  json_t *bandsj = NULL;  /* the same for --json, whenever the entry has them */
  if (a->thr_file) {
    if (thr_from_file(a->thr_file, gt, v->gpu, v->k, v->n, path, (int)tp, v->po.backend, tokens, &gpu, &thr, &prov, bands,
                      sizeof bands, &bandsj, &e))
      goto fail;
  } else if (!(gpu = tps_gpus_find(gt, v->gpu, &e))) {
    goto fail;
  } else if (a->thr_given) {
    memset(&thr, 0, sizeof thr);
    thr.threshold = a->thr_given;
    thr.breakeven = -1;
    snprintf(thr.source, sizeof thr.source, "given");
  } else {
    const int sc = v->scaling;
    tps_simref ref;
    /* the projection the gate is for: fused_wqa_wkv, 5120 -> 1792, bf16 output */
    tps_gemm_shape shape = {v->k, v->n, TPS_PRED_DEFAULT_OUT_BYTES};
    long tmax = tokens > TPS_PRED_DEFAULT_TMAX ? tokens : TPS_PRED_DEFAULT_TMAX;
    if (tmax > TPS_PRED_MAX_TMAX) tmax = TPS_PRED_MAX_TMAX; /* above it the threshold of the largest scan */
    const int itp = (int)tp;
    if (tps_simref_load(&ref, gt, v->fits.n ? v->fits.v[0] : NULL, NULL, v->gpus_file, &e) ||
        (ref.po = v->po, 0) || (sc == TPS_SCALING_PARTS && tps_simref_parts(&ref, gt, v, tmax, &e)) ||
        (ref.parts && tps_partset_check_targets(ref.parts, &gpu, 1, &itp, 1, &path, 1, &e) && (tps_simref_free(&ref), 1)) ||
        (tps_simref_threshold(&ref, sc, gpu, (int)tp, path, &shape, tmax, &thr, &e) && (tps_simref_free(&ref), 1)))
      goto fail;
    if (ref.parts) prov = tps_partuse_json(&thr.use, v->po.backend, (int)tp, gpu->nvlink);
    tps_simref_free(&ref);
  }
  tps_gate_in gi = {gpu, tp, tokens, a->sp, a->lora, a->mb, a->bi, a->car, a->fc, thr.threshold, thr.source};
  tps_gate_cond cs[TPS_GATE_NCOND];
  const int nc = TPS_GATE_NCOND;
  int split = 0;
  tps_gate_eval(&gi, cs, &split);
  if (v->json) {
    *out = decide_json(gpu, tp, tokens, path, &thr, &prov, bandsj, cs, nc, split);
  } else {
    printf("tpsplit decide: %s, TP%ld, %ld tokens, %s\n", gpu->name, tp, tokens, path->name);
    for (int i = 0; i < nc; i++) {
      printf("  %s  %-18s %s\n", cs[i].pass ? "PASS" : "FAIL", cs[i].name, cs[i].reason);
      if (bands[0] && !strcmp(cs[i].name, "token_threshold")) printf("        %-18s %s\n", "", bands);
    }
    printf("verdict: %s\n", split ? "split" : "no split");
  }
  if (prov) json_decref(prov);
  if (bandsj) json_decref(bandsj);
  return split;
fail:
  tps_err_print(&e);
  *rc = tps_err_exit_code(&e);
  return -1;
}

int cmd_decide(int argc, char **argv) {
  decide_args a;
  tps_cmdopt_values v;
  int prc = decide_parse(argc, argv, &a, &v);
  if (prc >= 0) return prc;
  if (!v.gpu && !a.thr_file) return tps_usage_msg("--gpu is required");
  if (a.thr_file) {
    /* the file is the threshold: what would make another one has no use */
    const char *other = a.thr_given ? "--threshold" : v.fits.n ? "--fit" : v.gemms.n ? "--gemm" : v.gathers.n ? "--gather FILE"
                        : (v.given >> TPS_OI_SCALING) & 1u ? "--scaling" : (v.given >> TPS_OI_HARNESS) & 1u ? "--harness (the file's entry says its own)"
                        : v.measured_only ? "--measured-only"
                        : v.no_bundled ? "--no-bundled" : NULL;
    if (other) return tps_usage_msg("--thresholds takes the threshold from the file: %s has no use with it", other);
  }
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  memset(&gt, 0, sizeof gt);
  if (tps_gpus_load(v.gpus_file, &gt, &e)) { tps_err_print(&e); return tps_err_exit_code(&e); }
  /* the paths: --path; with --thresholds and no --path, the ones the file holds at the device,
   * K x N, TP and backend (calibrate writes several: each is decided; none: --path's default,
   * whose missing entry is the error) */
  const tps_path *paths[TPS_NPATHS] = {v.path};
  int np = 1;
  if (a.thr_file && !((v.given >> TPS_OI_PATH) & 1u)) {
    int m = thr_paths(a.thr_file, &gt, v.gpu, v.k, v.n, (int)v.tp, v.po.backend, paths, TPS_NPATHS, &e);
    if (m < 0) { tps_err_print(&e); tps_gpus_free(&gt); return tps_err_exit_code(&e); }
    if (m > 0) np = m;
    else paths[0] = v.path;
  }
  int rc = TPS_EXIT_OK, all = 1;
  json_t *arr = v.json && np > 1 ? json_array() : NULL, *one = NULL;
  for (int i = 0; i < np && rc == TPS_EXIT_OK; i++) {
    if (np > 1 && !v.json && i) printf("\n");
    int split = decide_path(&a, &v, &gt, paths[i], &one, &rc);
    if (split < 0) break;
    all &= split;
    if (arr) json_array_append_new(arr, one), one = NULL;
  }
  if (rc == TPS_EXIT_OK && np > 1 && !v.json)
    printf("\nverdict on every path of the file: %s\n", all ? "split" : "not on every path");
  if (rc == TPS_EXIT_OK && v.json) {
    if (arr) {
      one = json_object();
      json_object_set_new(one, "decisions", arr), arr = NULL;
      json_object_set_new(one, "split", json_boolean(all));
    }
    if (tps_json_print(one)) rc = TPS_EXIT_FAIL;
    one = NULL;
  }
  if (arr) json_decref(arr);
  if (one) json_decref(one);
  tps_gpus_free(&gt);
  if (rc) return rc;
  return all ? TPS_EXIT_OK : TPS_EXIT_FAIL;
}
