/* backend.h: the gather backends' identity, shared by model/, kernels/ and src/ (model/core:
 * kernels/ may include it).  Their latency terms live in model/latency/allgather.h, their
 * CUDA/NCCL implementations in kernels/gather/. */
#ifndef TPS_MODEL_BACKEND_H
#define TPS_MODEL_BACKEND_H
#ifdef __cplusplus
extern "C" {
#endif

/* The one encoding of gather backends, used by model/, kernels/ and src/ alike.  Every
 * name list, option check and message derives from tps_gathers[] (ids index it).  Adding a
 * backend: a row here (backend.c), its model term in tps_ag_time_us (model/latency/allgather.c), and its
 * kernels/gather_<name>.cu filling a tps_gather_ops (kernels/gather/gather.h). */
typedef enum {
  TPS_GATHER_NCCL = 0,   /* ncclAllGather */
  TPS_GATHER_CUSTOM = 1, /* one-shot NVLink pull between two barriers, per-rank input <= cap */
  TPS_GATHER_AUTO = 2,   /* rule: custom while the per-rank input <= cap, else nccl */
  TPS_NGATHERS
} tps_gather_id;

typedef struct {
  tps_gather_id id;
  const char *name;  /* as on the command line and in files: "nccl", "custom", "auto" */
  const char *desc;  /* one line */
  int rule;          /* 1: a rule choosing among the concrete backends (auto), 0: a backend */
} tps_gather_backend;

extern const tps_gather_backend tps_gathers[TPS_NGATHERS];
/* Id of a backend name (case-insensitive), -1 when unknown. */
int tps_gather_parse(const char *name);
/* Name of an id, "-" when out of range (e.g. -1: no gather). */
const char *tps_gather_name(int id);
/* Every backend name joined by ", " (for --help and messages); returns buf. */
const char *tps_gather_names(char *buf, unsigned long bufsz);

/* Per-rank input cap of the custom one-shot gather, in bytes: 2 MiB, as the vLLM custom
 * all-gather of the seed PR.  The one place this number is written. */
#define TPS_GATHER_CUSTOM_CAP_BYTES (2u * 1024u * 1024u)

#ifdef __cplusplus
}
#endif
#endif
