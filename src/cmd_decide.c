/* cmd_decide.c: `tpsplit decide`, the split gate of the seed vLLM pull request for one
 * configuration (the conditions: model/gate.h).  The threshold is the one given
 * (--threshold) or, by default, the recommended threshold of the prediction for this GPU,
 * TP and path (break-even rounded up to the next power of two, model/crossover.h).
 * Exit status: 0 split, 1 no split, 2 usage or input error. */
#include "config.h"
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
#include "simctx.h"
#include "gate.h"

/* --fully-connected: yes, no or auto (-1). */
static int parse_fc(void *dst, const char *arg, char *why, size_t whysz) {
  int *fc = dst;
  if (strcasecmp(arg, "auto") == 0) { *fc = -1; return 0; }
  if (tps_cmdopt_yesno(arg, fc) == 0) return 0;
  snprintf(why, whysz, "yes, no or auto");
  return -1;
}

int cmd_decide(int argc, char **argv) {
  long tokens = 0, thr_given = 0;
  int sp = 0, lora = 0, mb = 0, bi = 0, car = 1, fc = -1;
  const tps_cmdopt own[] = {
    {.name = "tokens", .kind = TPS_ARG_LONG, .metavar = "T", .dst = &tokens, .min = 1, .max = TPS_TOKENS_MAX,
     .required = 1, .help = "tokens in the batch"},
    {.name = "sequence-parallel", .kind = TPS_ARG_YESNO, .metavar = "yes|no", .dst = &sp, .optional = 1,
     .help = "sequence parallelism is on (default no)"},
    {.name = "lora", .kind = TPS_ARG_YESNO, .metavar = "yes|no", .dst = &lora, .optional = 1,
     .help = "LoRA adapters are loaded (default no)"},
    {.name = "micro-batching", .kind = TPS_ARG_YESNO, .metavar = "yes|no", .dst = &mb, .optional = 1,
     .help = "two micro-batches overlap (default no)"},
    {.name = "batch-invariant", .kind = TPS_ARG_YESNO, .metavar = "yes|no", .dst = &bi, .optional = 1,
     .help = "batch-invariant mode is on (default no)"},
    {.name = "custom-allreduce", .kind = TPS_ARG_YESNO, .metavar = "yes|no", .dst = &car,
     .help = "custom all-reduce enabled (default yes)"},
    {.name = "fully-connected", .kind = TPS_ARG_FN, .metavar = "yes|no|auto", .dst = &fc, .parse = parse_fc,
     .help = "all ranks connected by NVLink (default auto: the GPU has NVLink and TP <= 8, one NVLink domain)"},
    {.name = "threshold", .kind = TPS_ARG_LONG, .metavar = "T", .dst = &thr_given, .min = 1, .max = TPS_CMDOPT_BIG,
     .help = "token threshold (default: predicted for the GPU, TP and path)"},
  };
  const tps_cmdspec spec = {
    .name = "decide",
    .synopsis = "--gpu G --tp N --tokens T [options]",
    .about = "Apply the split gate of the seed vLLM pull request to one configuration: print each\n"
             "condition with PASS/FAIL and a one-line reason, then the verdict.",
    .common = TPS_OPT(TPS_OI_GPU) | TPS_OPT(TPS_OI_TP) | TPS_OPT(TPS_OI_PATH) | TPS_OPTS_REF | TPS_OPTS_PARTS |
              TPS_OPTS_SHAPE,
    .required = TPS_OPT(TPS_OI_GPU) | TPS_OPT(TPS_OI_TP),
    .scalings = 1u << TPS_SCALING_MODEL | 1u << TPS_SCALING_SPEC | 1u << TPS_SCALING_PARTS,
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .exit_status = "0 split, 1 no split, 2 usage or input error.",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  int prc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (prc >= 0) return prc;
  const tps_path *path = v.path;
  const long tp = v.tp;
  const int json = v.json;
  const char *fit_file = v.fits.n ? v.fits.v[0] : NULL, *gpus_file = v.gpus_file;

  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  memset(&gt, 0, sizeof gt);
  if (tps_gpus_load(gpus_file, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  const tps_gpu *gpu = tps_gpus_find(&gt, v.gpu, &e);
  if (!gpu) { tps_err_print(&e); tps_gpus_free(&gt); return TPS_EXIT_USAGE; }

  /* threshold */
  tps_simctx_thr thr;
  json_t *prov = NULL; /* parts scaling: the threshold's parts, for --json */
  if (thr_given) {
    memset(&thr, 0, sizeof thr);
    thr.threshold = thr_given;
    thr.breakeven = -1;
    snprintf(thr.source, sizeof thr.source, "given");
  } else {
    const int sc = v.scaling;
    tps_simref ref;
    /* the projection the gate is for: fused_wqa_wkv, 5120 -> 1792, bf16 output */
    tps_gemm_shape shape = {v.k, v.n, TPS_PRED_DEFAULT_OUT_BYTES};
    long tmax = tokens > TPS_PRED_DEFAULT_TMAX ? tokens : TPS_PRED_DEFAULT_TMAX;
    if (tmax > TPS_PRED_MAX_TMAX) tmax = TPS_PRED_MAX_TMAX; /* above it the threshold of the largest scan */
    const int itp = (int)tp;
    if (tps_simref_load(&ref, &gt, fit_file, NULL, gpus_file, &e) ||
        (sc == TPS_SCALING_PARTS && tps_simref_parts(&ref, &gt, &v, tmax, &e)) ||
        (ref.parts && tps_partset_check_targets(ref.parts, &gpu, 1, &itp, 1, &path, 1, &e) && (tps_simref_free(&ref), 1)) ||
        (tps_simref_threshold(&ref, sc, gpu, (int)tp, path, &shape, tmax, &thr, &e) && (tps_simref_free(&ref), 1))) {
      tps_err_print(&e);
      tps_gpus_free(&gt);
      return TPS_EXIT_USAGE;
    }
    if (ref.parts) prov = tps_partuse_json(&thr.use, TPS_GATHER_AUTO, (int)tp, gpu->nvlink);
    tps_simref_free(&ref);
  }

  tps_gate_in gi = {gpu, tp, tokens, sp, lora, mb, bi, car, fc, thr.threshold, thr.source};
  tps_gate_cond cs[TPS_GATE_NCOND];
  const int nc = TPS_GATE_NCOND;
  int split = 0;
  tps_gate_eval(&gi, cs, &split);
  int rc = TPS_EXIT_OK;
  if (json) {
    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "gpu", json_string(gpu->name));
    json_object_set_new(root, "tp", json_integer(tp));
    json_object_set_new(root, "tokens", json_integer(tokens));
    json_object_set_new(root, "path", json_string(path->name));
    json_object_set_new(root, "threshold_tokens", thr.threshold > 0 ? json_integer(thr.threshold) : json_null());
    json_object_set_new(root, "breakeven_tokens", thr.breakeven > 0 ? json_integer(thr.breakeven) : json_null());
    json_object_set_new(root, "threshold_source", json_string(thr.source));
    if (prov) json_object_set_new(root, "threshold_parts", prov), prov = NULL;
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
    if (tps_json_print(root)) rc = TPS_EXIT_FAIL;
  } else {
    printf("tpsplit decide: %s, TP%ld, %ld tokens, %s\n", gpu->name, tp, tokens, path->name);
    for (int i = 0; i < nc; i++) printf("  %s  %-18s %s\n", cs[i].pass ? "PASS" : "FAIL", cs[i].name, cs[i].reason);
    printf("verdict: %s\n", split ? "split" : "no split");
  }
  if (prov) json_decref(prov);
  tps_gpus_free(&gt);
  if (rc) return rc;
  return split ? TPS_EXIT_OK : TPS_EXIT_FAIL;
}
