/* backend.c: the gather backends' rows and what is asked of them (see backend.h). */
#include "model/core/backend.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Per-rank input cap of the custom one-shot gather: 2 MiB, as the vLLM custom all-gather of
 * the seed PR.  The one place this number is written. */
#define CUSTOM_CAP_BYTES (2.0 * 1024.0 * 1024.0)

const tps_gather_backend tps_gathers[TPS_NGATHERS] = {
    [TPS_GATHER_NCCL] = {TPS_GATHER_NCCL, "nccl", "NCCL all-gather (ncclAllGather)", 0, TPS_GATHER_TERM_RING, 0, 0, 1},
    [TPS_GATHER_CUSTOM] = {TPS_GATHER_CUSTOM, "custom",
                           "one-shot NVLink all-gather: each rank pulls every shard between two barriers", 0,
                           TPS_GATHER_TERM_ONESHOT, CUSTOM_CAP_BYTES, 1, 0},
    [TPS_GATHER_AUTO] = {TPS_GATHER_AUTO, "auto", "custom while the per-rank input <= cap, else nccl", 1,
                         TPS_GATHER_TERM_RULE, 0, 0, 0},
};

const tps_gather_backend *tps_gather_get(int id) { return id >= 0 && id < TPS_NGATHERS ? &tps_gathers[id] : NULL; }

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

int tps_gather_is_rule(int id) { const tps_gather_backend *b = tps_gather_get(id); return b && b->rule; }
int tps_gather_is_capped(int id) { const tps_gather_backend *b = tps_gather_get(id); return b && !b->rule && b->cap_bytes > 0; }
int tps_gather_is_fallback(int id) { const tps_gather_backend *b = tps_gather_get(id); return b && !b->rule && b->fallback; }
int tps_gather_term_of(int id) { const tps_gather_backend *b = tps_gather_get(id); return b ? b->term : TPS_GATHER_TERM_RING; }

/* The first row with a role (fields), -1 when none. */
static int first(int rule, int capped, int fallback) {
  for (int i = 0; i < TPS_NGATHERS; i++) {
    const tps_gather_backend *b = &tps_gathers[i];
    if ((rule && b->rule) || (capped && tps_gather_is_capped(i)) || (fallback && !b->rule && b->fallback)) return i;
  }
  return -1;
}
int tps_gather_fallback(void) { return first(0, 0, 1); }
int tps_gather_capped(void) { return first(0, 1, 0); }
int tps_gather_rule(void) { return first(1, 0, 0); }

double tps_gather_cap_default(void) {
  int c = tps_gather_capped();
  return c >= 0 ? tps_gathers[c].cap_bytes : 0;
}

int tps_gather_pick(int id, double rank_bytes, double cap_bytes, int capped_ok) {
  const tps_gather_backend *b = tps_gather_get(id);
  if (!b) return tps_gather_fallback();
  for (int i = 0; i < TPS_NGATHERS; i++) {
    if (b->rule ? !tps_gather_is_capped(i) : i != id) continue;
    if (!tps_gather_is_capped(i)) return i; /* a concrete backend without a cap: it is asked for */
    double cap = cap_bytes > 0 ? cap_bytes : tps_gathers[i].cap_bytes;
    if (capped_ok && rank_bytes <= cap) return i;
  }
  return tps_gather_fallback();
}

const char *tps_gather_refuses(int id, int nvlink, int tp, int node_gpus) {
  const tps_gather_backend *b = tps_gather_get(id);
  if (!b || !b->one_domain) return NULL;
  if (!nvlink) return "no NVLink";
  if (tp > node_gpus) return "crosses nodes";
  return NULL;
}
