/* backend.h: the gather backends as named types (GSL style, as gsl_interp_type), shared by
 * model/, kernels/ and src/ (model/core: kernels/ may include it).
 *
 * A backend's row says everything the layers above ask of it: its name; its latency term
 * (which term of model/latency/allgather.h and xgather.h prices it: NCCL's protocols, or a
 * one-shot pull); its applicability (a per-rank input cap, one NVLink domain only); whether
 * it takes every size (the fallback); and for a rule (`auto`) how it picks: the first
 * concrete backend in id order that applies, the fallback last (tps_gather_pick).  Code
 * outside this file asks these fields and functions, never compares an id with a constant
 * (tests/cli/types.sh).  The CUDA/NCCL implementations live in kernels/gather/. */
#ifndef TPS_MODEL_BACKEND_H
#define TPS_MODEL_BACKEND_H
#ifdef __cplusplus
extern "C" {
#endif

/* The one list of gather backends (ids index tps_gathers[]).  Adding a backend: its id
 * before TPS_NGATHERS and its row in backend.c (doc/extending.md). */
typedef enum {
  TPS_GATHER_NCCL = 0,   /* ncclAllGather */
  TPS_GATHER_CUSTOM = 1, /* one-shot NVLink pull between two barriers, per-rank input <= cap */
  TPS_GATHER_AUTO = 2,   /* rule: custom while the per-rank input <= cap, else nccl */
  TPS_NGATHERS
} tps_gather_id;

/* Which latency term prices a backend (model/latency reads this, never the id). */
typedef enum {
  TPS_GATHER_TERM_RING = 0, /* NCCL: the fastest of its protocols (tps_ag_nccl_proto_us; xgather's nccl) */
  TPS_GATHER_TERM_ONESHOT,  /* floor + bytes / bandwidth, each rank pulling every shard (custom) */
  TPS_GATHER_TERM_RULE      /* none of its own: the term of the backend its rule picks */
} tps_gather_term;

typedef struct tps_gather_backend {
  tps_gather_id id;
  const char *name;  /* as on the command line and in files: "nccl", "custom", "auto" */
  const char *desc;  /* one line */
  int rule;          /* 1: a rule choosing among the concrete backends (auto), 0: a backend */
  int term;          /* tps_gather_term */
  double cap_bytes;  /* per-rank input cap, bytes (0: none); a run may set another */
  int one_domain;    /* 1: within one NVLink domain only (needs NVLink, never across nodes) */
  int fallback;      /* 1: takes every size (what a capped backend falls back to) */
} tps_gather_backend;

extern const tps_gather_backend tps_gathers[TPS_NGATHERS];
/* The row of an id; NULL when out of range. */
const tps_gather_backend *tps_gather_get(int id);
/* Id of a backend name (case-insensitive), -1 when unknown. */
int tps_gather_parse(const char *name);
/* Name of an id, "-" when out of range (e.g. -1: no gather). */
const char *tps_gather_name(int id);
/* Every backend name joined by ", " (for --help and messages); returns buf. */
const char *tps_gather_names(char *buf, unsigned long bufsz);

/* The fields, by id (0 / TPS_GATHER_TERM_RING for an id out of range): */
int tps_gather_is_rule(int id);      /* a rule (auto) */
int tps_gather_is_capped(int id);    /* a concrete backend with a per-rank cap (custom) */
int tps_gather_term_of(int id);      /* tps_gather_term */
int tps_gather_is_fallback(int id);  /* a concrete backend that takes every size (nccl) */
/* The default per-rank cap of a capped backend (the first one, in id order): 2 MiB, as the
 * vLLM custom all-gather of the seed PR.  The one place this number is written is backend.c. */
double tps_gather_cap_default(void);
/* The ids of the roles, by their fields: the backend that takes every size (nccl), the
 * first capped backend (custom), the rule (auto). */
int tps_gather_fallback(void);
int tps_gather_capped(void);
int tps_gather_rule(void);

/* The concrete backend that runs backend `id` for a per-rank input of rank_bytes: a rule
 * picks the first capped backend in id order that applies, else the fallback; a capped
 * backend that does not apply falls back.  It applies where capped_ok (one NVLink domain
 * here, a model or part of it exists) and rank_bytes <= cap_bytes (cap_bytes <= 0: the
 * backend's default). */
int tps_gather_pick(int id, double rank_bytes, double cap_bytes, int capped_ok);

/* Where a backend of this id can run on a GPU (nvlink: it has NVLink; tp, node_gpus: the
 * ranks and the ranks of one node): NULL, or why not ("no NVLink", "crosses nodes"). */
const char *tps_gather_refuses(int id, int nvlink, int tp, int node_gpus);

#ifdef __cplusplus
}
#endif
#endif
