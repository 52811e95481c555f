/* gate.c: the conditions of the split gate (see gate.h). */
#include "model/sim/gate.h"
#include <stdio.h>
#include "model/predict/predict.h"

/* A condition that holds while a feature is off; reason "off", or "on: <why it blocks>". */
static void feature_off(tps_gate_cond *c, const char *name, int on, const char *why_on) {
  c->name = name;
  c->pass = !on;
  if (on) snprintf(c->reason, sizeof c->reason, "on: %s", why_on);
  else snprintf(c->reason, sizeof c->reason, "off");
}

static void sm90(tps_gate_cond *c, const tps_gpu *g) {
  int cc = g->cc_major * 10 + g->cc_minor;
  c->name = "sm90";
  c->pass = g->cc_major == 9;
  if (c->pass)
    snprintf(c->reason, sizeof c->reason, "%s is SM90 (compute capability %d.%d)", g->name, g->cc_major, g->cc_minor);
  else if (cc == 0)
    snprintf(c->reason, sizeof c->reason, "%s is not a CUDA GPU; the split is enabled on SM90 only", g->name);
  else
    snprintf(c->reason, sizeof c->reason,
             "%s is SM%d (compute capability %d.%d); the split is enabled on SM90 only (its Marlin W8A16 path)", g->name,
             cc, g->cc_major, g->cc_minor);
}

static void custom_allreduce(tps_gate_cond *c, const tps_gate_in *in) {
  const int node = TPS_PRED_DEFAULT_NODE_GPUS, fc_auto = in->fully_connected < 0;
  const int fc = fc_auto ? in->gpu->nvlink && in->tp <= node : in->fully_connected;
  c->name = "custom_allreduce";
  c->pass = in->custom_allreduce && fc;
  if (!in->custom_allreduce)
    snprintf(c->reason, sizeof c->reason,
             "custom all-reduce disabled (the seed vLLM pull request's proxy for NVLink between all ranks)");
  else if (!fc && fc_auto && !in->gpu->nvlink)
    snprintf(c->reason, sizeof c->reason, "not fully connected: %s has no NVLink (auto)", in->gpu->name);
  else if (!fc && fc_auto)
    snprintf(c->reason, sizeof c->reason, "not fully connected: TP%ld spans more than one %d-GPU NVLink domain (auto)",
             in->tp, node);
  else if (!fc)
    snprintf(c->reason, sizeof c->reason, "not fully connected (given)");
  else if (fc_auto)
    snprintf(c->reason, sizeof c->reason, "enabled and fully connected (auto: NVLink, TP within one %d-GPU domain)", node);
  else
    snprintf(c->reason, sizeof c->reason, "enabled and fully connected (given)");
}

static void token_threshold(tps_gate_cond *c, const tps_gate_in *in) {
  const char *src = in->threshold_source ? in->threshold_source : "-";
  c->name = "token_threshold";
  c->pass = in->threshold > 0 && in->tokens >= in->threshold;
  if (in->threshold > 0)
    snprintf(c->reason, sizeof c->reason, "%ld tokens %s threshold %ld (%s)", in->tokens,
             in->tokens >= in->threshold ? ">=" : "<", in->threshold, src);
  else
    snprintf(c->reason, sizeof c->reason, "no threshold: %s", src);
}

int tps_gate_eval(const tps_gate_in *in, tps_gate_cond cond[TPS_GATE_NCOND], int *split) {
  if (!in || !in->gpu) return TPS_EINVAL;
  sm90(&cond[0], in->gpu);
  feature_off(&cond[1], "sequence_parallel", in->sequence_parallel, "the hidden states are already sharded by token");
  feature_off(&cond[2], "lora", in->lora, "LoRA adapters are not applied on the split path");
  feature_off(&cond[3], "micro_batching", in->micro_batching, "two micro-batches would share the custom all-gather buffer");
  feature_off(&cond[4], "batch_invariance", in->batch_invariant,
              "whether a token takes the split would depend on the batch size");
  custom_allreduce(&cond[5], in);
  token_threshold(&cond[6], in);
  *split = 1;
  for (int i = 0; i < TPS_GATE_NCOND; i++) *split = *split && cond[i].pass;
  return TPS_OK;
}
