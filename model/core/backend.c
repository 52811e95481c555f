/* backend.c: the table of gather backends (see backend.h). */
#include "model/core/backend.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

const tps_gather_backend tps_gathers[TPS_NGATHERS] = {
    [TPS_GATHER_NCCL] = {TPS_GATHER_NCCL, "nccl", "NCCL all-gather (ncclAllGather)", 0},
    [TPS_GATHER_CUSTOM] = {TPS_GATHER_CUSTOM, "custom",
                           "one-shot NVLink all-gather: each rank pulls every shard between two barriers", 0},
    [TPS_GATHER_AUTO] = {TPS_GATHER_AUTO, "auto", "custom while the per-rank input <= cap, else nccl", 1},
};

int tps_gather_parse(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < TPS_NGATHERS; i++)
    if (strcasecmp(name, tps_gathers[i].name) == 0) return i;
  return -1;
}

const char *tps_gather_name(int id) { return id >= 0 && id < TPS_NGATHERS ? tps_gathers[id].name : "-"; }

const char *tps_gather_names(char *buf, unsigned long bufsz) {
  if (!buf || !bufsz) return buf;
  buf[0] = 0;
  size_t used = 0;
  for (int i = 0; i < TPS_NGATHERS; i++) {
    int w = snprintf(buf + used, bufsz - used, "%s%s", used ? ", " : "", tps_gathers[i].name);
    if (w < 0 || (size_t)w >= bufsz - used) break;
    used += (size_t)w;
  }
  return buf;
}
