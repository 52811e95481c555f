/* gate.h: the split gate of the seed vLLM pull request for one configuration.
 *
 * The split of fused_wqa_wkv is enabled only when all of these hold (project brief, "Gate"):
 *   sm90               the GPU is SM90 (compute capability 9.x): the pull request enables it
 *                      for the Marlin W8A16 path of SM90 only;
 *   sequence_parallel  off (with sequence parallelism the hidden states are already sharded);
 *   lora               off (LoRA adapters are not applied on the split path);
 *   micro_batching     off (two micro-batches would share the custom all-gather buffer);
 *   batch_invariance   off (whether a token takes the split depends on the batch size);
 *   custom_allreduce   enabled and fully connected (the pull request's proxy for NVLink
 *                      between all ranks); "fully connected" by default: the GPU's scale-up
 *                      fabric is NVLink and the TP group fits in one NVLink domain
 *                      (TPS_PRED_DEFAULT_NODE_GPUS);
 *   token_threshold    T >= threshold.
 * Pure C, no I/O. */
#ifndef TPS_GATE_H
#define TPS_GATE_H
#include "model/core/gpu.h"
#include "model/core/status.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_GATE_NCOND 7

typedef struct {
  const tps_gpu *gpu;
  long tp, tokens;
  int sequence_parallel, lora, micro_batching, batch_invariant; /* 1: on */
  int custom_allreduce;          /* 1: enabled */
  int fully_connected;           /* 1, 0, or -1: by the GPU's fabric and TP */
  long threshold;                /* <= 0: none */
  const char *threshold_source;  /* one line: where the threshold comes from */
} tps_gate_in;

typedef struct {
  const char *name;              /* "sm90", ..., "token_threshold" */
  int pass;
  char reason[640];              /* one line */
} tps_gate_cond;

/* Every condition, in the order above; *split = all pass.  TPS_OK, TPS_EINVAL without a GPU. */
int tps_gate_eval(const tps_gate_in *in, tps_gate_cond cond[TPS_GATE_NCOND], int *split);

#ifdef __cplusplus
}
#endif
#endif
