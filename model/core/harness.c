/* harness.c: the measurement harnesses (harness.h). */
#include "model/core/harness.h"
#include <strings.h>

const tps_harness tps_harnesses[TPS_NHARNESS] = {
    {TPS_HARNESS_AIC, "aic",
     "AIConfigurator's collector: TensorRT-LLM Linear forward, mean of CUDA-graph replays, no L2 flush"},
    {TPS_HARNESS_BENCH, "bench",
     "tpsplit bench: CUDA graph, L2 flushed before every replay, median of 50 CUPTI spans, our quantization kernels"},
};

int tps_harness_parse(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < TPS_NHARNESS; i++)
    if (!strcasecmp(name, tps_harnesses[i].name)) return i;
  return -1;
}

const char *tps_harness_name(int id) {
  if (id == -1) return "as measured";
  if (id < 0 || id >= TPS_NHARNESS) return "-";
  return tps_harnesses[id].name;
}
