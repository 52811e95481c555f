/* cmd_decide.c: `tpsplit decide`, the gate of the vLLM pull request for one configuration.
 *
 * The split of fused_wqa_wkv is enabled only when all of these hold (brief, "Gate"):
 *   sm90               the GPU is SM90 (compute capability 9.x, from the GPU table): the PR
 *                      enables it for the Marlin W8A16 path of SM90 only;
 *   sequence_parallel  off (with sequence parallelism the hidden states are already sharded);
 *   lora               off (LoRA adapters are not applied on the split path);
 *   micro_batching     off (two micro-batches would share the custom all-gather buffer);
 *   batch_invariance   off (whether a token takes the split depends on the batch size);
 *   custom_allreduce   enabled and fully connected (the PR's proxy for NVLink between all
 *                      ranks); "fully connected" defaults to: the GPU's scale-up fabric is
 *                      NVLink and the TP group fits in one NVLink domain (8 GPUs);
 *   token_threshold    T >= threshold, the threshold given (--threshold) or, by default, the
 *                      recommended threshold of the prediction for this GPU, TP and path
 *                      (break-even rounded up to the next power of two, model/predict.h).
 * Exit status: 0 split, 1 no split, 2 usage or input error. */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tpsplit.h"
#include "err.h"
#include "util.h"
#include "jsonout.h"
#include "gpus.h"
#include "simctx.h"

static void usage(void) {
  printf("Usage: tpsplit decide --gpu G --tp N --tokens T [options]\n"
         "Apply the split gate of the vLLM pull request to one configuration: print each\n"
         "condition with PASS/FAIL and a one-line reason, then the verdict.\n\n"
         "Options:\n"
         "  --gpu G                  GPU name or alias from the GPU table (required)\n"
         "  --tp N                   tensor-parallel size (required)\n"
         "  --tokens T               tokens in the batch (required)\n"
         "  --path P                 kernel path of the projection (default marlin-w8a16)\n"
         "  --sequence-parallel[=yes|no]  sequence parallelism is on (default no)\n"
         "  --lora[=yes|no]          LoRA adapters are loaded (default no)\n"
         "  --micro-batching[=yes|no]  two micro-batches overlap (default no)\n"
         "  --batch-invariant[=yes|no] batch-invariant mode is on (default no)\n"
         "  --custom-allreduce=yes|no  custom all-reduce enabled (default yes)\n"
         "  --fully-connected=yes|no|auto  all ranks connected by NVLink (default auto: the\n"
         "                           GPU has NVLink and TP <= 8, one NVLink domain)\n"
         "  --threshold T            token threshold (default: predicted for GPU, TP, path)\n"
         "  --scaling S              prediction of the threshold: model (default) or spec\n"
         "  --fit FILE               fit file to transfer from (default: fit the bundled H20 table)\n"
         "  --gpus-file FILE         GPU table (default: the bundled data/gpus.tsv)\n"
         "  --json                   JSON output\n"
         "  --help, --version\n\n"
         "Exit status: 0 split, 1 no split, 2 usage or input error.\n");
}

static int yesno(const char *opt, const char *arg, int *v) {
  if (!arg || strcasecmp(arg, "yes") == 0 || strcmp(arg, "1") == 0 || strcasecmp(arg, "on") == 0) { *v = 1; return 0; }
  if (strcasecmp(arg, "no") == 0 || strcmp(arg, "0") == 0 || strcasecmp(arg, "off") == 0) { *v = 0; return 0; }
  tps_die_msg("decide: --%s wants yes or no, got '%s'", opt, arg);
  return -1;
}

typedef struct {
  const char *name;
  int pass;
  char reason[640];
} cond;

/* A condition that holds while a feature is off; reason "off", or "on: <why it blocks>". */
static void feature_off(cond *c, const char *name, int on, const char *why_on) {
  c->name = name;
  c->pass = !on;
  if (on) snprintf(c->reason, sizeof c->reason, "on: %s", why_on);
  else snprintf(c->reason, sizeof c->reason, "off");
}

int cmd_decide(int argc, char **argv) {
  enum { O_GPU = 256, O_TP, O_TOKENS, O_PATH, O_SP, O_LORA, O_MB, O_BI, O_CAR, O_FC, O_THR, O_SCALING,
         O_FIT, O_GPUS, O_JSON, O_HELP, O_VERSION };
  static const struct option opts[] = {
    {"gpu", required_argument, 0, O_GPU}, {"tp", required_argument, 0, O_TP},
    {"tokens", required_argument, 0, O_TOKENS}, {"path", required_argument, 0, O_PATH},
    {"sequence-parallel", optional_argument, 0, O_SP}, {"lora", optional_argument, 0, O_LORA},
    {"micro-batching", optional_argument, 0, O_MB}, {"batch-invariant", optional_argument, 0, O_BI},
    {"custom-allreduce", required_argument, 0, O_CAR}, {"fully-connected", required_argument, 0, O_FC},
    {"threshold", required_argument, 0, O_THR}, {"scaling", required_argument, 0, O_SCALING},
    {"fit", required_argument, 0, O_FIT}, {"gpus-file", required_argument, 0, O_GPUS},
    {"json", no_argument, 0, O_JSON}, {"help", no_argument, 0, O_HELP},
    {"version", no_argument, 0, O_VERSION}, {0, 0, 0, 0}};
  const char *gpu_name = NULL, *path_name = "marlin-w8a16", *fit_file = NULL, *gpus_file = NULL;
  const char *scaling = "model";
  long tp = 0, tokens = 0, thr_given = 0;
  int sp = 0, lora = 0, mb = 0, bi = 0, car = 1, fc = -1, json = 0;
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case O_GPU: gpu_name = optarg; break;
    case O_TP:
      if (tps_parse_long(optarg, &tp) || tp < 1) { tps_die_msg("decide: --tp wants a positive integer, got '%s'", optarg); return TPS_EXIT_USAGE; }
      break;
    case O_TOKENS:
      if (tps_opt_long("decide", "tokens", optarg, 1, TPS_TOKENS_MAX, "the longest scan of the model", &tokens)) return TPS_EXIT_USAGE;
      break;
    case O_PATH: path_name = optarg; break;
    case O_SP: if (yesno("sequence-parallel", optarg, &sp)) return TPS_EXIT_USAGE; break;
    case O_LORA: if (yesno("lora", optarg, &lora)) return TPS_EXIT_USAGE; break;
    case O_MB: if (yesno("micro-batching", optarg, &mb)) return TPS_EXIT_USAGE; break;
    case O_BI: if (yesno("batch-invariant", optarg, &bi)) return TPS_EXIT_USAGE; break;
    case O_CAR: if (yesno("custom-allreduce", optarg, &car)) return TPS_EXIT_USAGE; break;
    case O_FC:
      if (strcasecmp(optarg, "auto") == 0) fc = -1;
      else if (yesno("fully-connected", optarg, &fc)) return TPS_EXIT_USAGE;
      break;
    case O_THR:
      if (tps_opt_long("decide", "threshold", optarg, 1, TPS_TOKENS_MAX, "the longest scan of the model", &thr_given)) return TPS_EXIT_USAGE;
      break;
    case O_SCALING: scaling = optarg; break;
    case O_FIT: fit_file = optarg; break;
    case O_GPUS: gpus_file = optarg; break;
    case O_JSON: json = 1; break;
    case O_HELP: usage(); return TPS_EXIT_OK;
    case O_VERSION: return tps_print_version("decide");
    default:
      tps_die_msg("decide: unknown or incomplete option '%s' (try 'tpsplit decide --help')", argv[optind - 1]);
      return TPS_EXIT_USAGE;
    }
  }
  if (optind < argc) { tps_die_msg("decide: unexpected argument '%s'", argv[optind]); return TPS_EXIT_USAGE; }
  if (!gpu_name || !tp || !tokens) {
    tps_die_msg("decide: --gpu, --tp and --tokens are required (try 'tpsplit decide --help')");
    return TPS_EXIT_USAGE;
  }
  const tps_path *path = tps_path_find(path_name);
  if (!path) { tps_die_msg("decide: unknown kernel path '%s' (marlin-w8a16, dense-bf16, native-fp8)", path_name); return TPS_EXIT_USAGE; }

  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  memset(&gt, 0, sizeof gt);
  if (tps_gpus_load(gpus_file, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  const tps_gpu *gpu = tps_gpus_find(&gt, gpu_name, &e);
  if (!gpu) { tps_err_print(&e); tps_gpus_free(&gt); return TPS_EXIT_USAGE; }

  /* threshold */
  tps_simctx_thr thr;
  if (thr_given) {
    memset(&thr, 0, sizeof thr);
    thr.threshold = thr_given;
    thr.breakeven = -1;
    snprintf(thr.source, sizeof thr.source, "given");
  } else {
    int sc = tps_scaling_find(scaling);
    if (sc != TPS_SCALING_MODEL && sc != TPS_SCALING_SPEC) {
      tps_die_msg("decide: --scaling wants model or spec, got '%s'", scaling);
      tps_gpus_free(&gt);
      return TPS_EXIT_USAGE;
    }
    tps_simref ref;
    /* the projection of the brief: fused_wqa_wkv, 5120 -> 1792, bf16 output */
    tps_gemm_shape shape = {TPS_PRED_DEFAULT_K, TPS_PRED_DEFAULT_N, TPS_PRED_DEFAULT_OUT_BYTES};
    long tmax = tokens > TPS_PRED_DEFAULT_TMAX ? tokens : TPS_PRED_DEFAULT_TMAX;
    if (tps_simref_load(&ref, &gt, fit_file, NULL, gpus_file, &e) ||
        (tps_simref_threshold(&ref, sc, gpu, (int)tp, path, &shape, tmax, &thr, &e) && (tps_simref_free(&ref), 1))) {
      tps_err_print(&e);
      tps_gpus_free(&gt);
      return TPS_EXIT_USAGE;
    }
    tps_simref_free(&ref);
  }

  cond cs[7];
  int nc = 0;
  int cc = gpu->cc_major * 10 + gpu->cc_minor;
  cs[nc].name = "sm90";
  cs[nc].pass = gpu->cc_major == 9;
  if (cs[nc].pass)
    snprintf(cs[nc].reason, sizeof cs[nc].reason, "%s is SM90 (compute capability %d.%d)", gpu->name, gpu->cc_major, gpu->cc_minor);
  else if (cc == 0)
    snprintf(cs[nc].reason, sizeof cs[nc].reason, "%s is not a CUDA GPU; the split is enabled on SM90 only", gpu->name);
  else
    snprintf(cs[nc].reason, sizeof cs[nc].reason, "%s is SM%d (compute capability %d.%d); the split is enabled on SM90 only (its Marlin W8A16 path)",
             gpu->name, cc, gpu->cc_major, gpu->cc_minor);
  nc++;
  feature_off(&cs[nc++], "sequence_parallel", sp, "the hidden states are already sharded by token");
  feature_off(&cs[nc++], "lora", lora, "LoRA adapters are not applied on the split path");
  feature_off(&cs[nc++], "micro_batching", mb, "two micro-batches would share the custom all-gather buffer");
  feature_off(&cs[nc++], "batch_invariance", bi, "whether a token takes the split would depend on the batch size");
  int fc_auto = fc < 0;
  int fc_val = fc_auto ? (gpu->nvlink && tp <= 8) : fc;
  cs[nc].name = "custom_allreduce";
  cs[nc].pass = car && fc_val;
  if (!car)
    snprintf(cs[nc].reason, sizeof cs[nc].reason, "custom all-reduce disabled (the PR's proxy for NVLink between all ranks)");
  else if (!fc_val && fc_auto && !gpu->nvlink)
    snprintf(cs[nc].reason, sizeof cs[nc].reason, "not fully connected: %s has no NVLink (auto)", gpu->name);
  else if (!fc_val && fc_auto)
    snprintf(cs[nc].reason, sizeof cs[nc].reason, "not fully connected: TP%ld spans more than one 8-GPU NVLink domain (auto)", tp);
  else if (!fc_val)
    snprintf(cs[nc].reason, sizeof cs[nc].reason, "not fully connected (given)");
  else
    snprintf(cs[nc].reason, sizeof cs[nc].reason, "enabled and fully connected (%s)",
             fc_auto ? "auto: NVLink, TP within one 8-GPU domain" : "given");
  nc++;
  cs[nc].name = "token_threshold";
  cs[nc].pass = thr.threshold > 0 && tokens >= thr.threshold;
  if (thr.threshold > 0)
    snprintf(cs[nc].reason, sizeof cs[nc].reason, "%ld tokens %s threshold %ld (%s)", tokens,
             tokens >= thr.threshold ? ">=" : "<", thr.threshold, thr.source);
  else
    snprintf(cs[nc].reason, sizeof cs[nc].reason, "no threshold: %s", thr.source);
  nc++;

  int split = 1;
  for (int i = 0; i < nc; i++) split = split && cs[i].pass;
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
  tps_gpus_free(&gt);
  if (rc) return rc;
  return split ? TPS_EXIT_OK : TPS_EXIT_FAIL;
}
