/* allgather.h: all-gather latency model for the split's output gather.
 *
 * total_bytes is the size of the whole gathered buffer (nccl-tests' "size"); each of the
 * n ranks contributes total_bytes/n.
 *
 * NCCL: each protocol p (LL, LL128, Simple) costs
 *     t_p = lat_us[p] + total_bytes*(n-1)/n / (busbw_gbps[p]*1e3)      [us]
 * and the fastest protocol wins (what NCCL's tuner does), so the curve bends where it
 * switches.  Across nodes (n > ranks_per_node) bandwidth is bounded by the per-GPU
 * inter-node bandwidth.
 *
 * Custom one-shot NVLink gather (each rank pulls the n-1 other shards in one kernel
 * between two barriers):
 *     t = custom_floor_us + total_bytes*(n-1)/n / (custom_gbps*1e3)
 * used only while the per-rank input total_bytes/n <= custom_cap_bytes; above the cap,
 * the NCCL model applies. */
#ifndef TPS_MODEL_ALLGATHER_H
#define TPS_MODEL_ALLGATHER_H
#include "model/core/gpu.h"
#include "model/core/backend.h"
#ifdef __cplusplus
extern "C" {
#endif

enum { TPS_PROTO_LL = 0, TPS_PROTO_LL128, TPS_PROTO_SIMPLE, TPS_NPROTO };
extern const char *const tps_proto_names[TPS_NPROTO]; /* "LL", "LL128", "Simple" */

typedef struct {
  int ranks;                      /* n the parameters describe */
  double lat_us[TPS_NPROTO];      /* per-protocol latency at n ranks, us */
  double busbw_gbps[TPS_NPROTO];  /* per-protocol bus bandwidth, GB/s (0 = protocol off) */
  double custom_floor_us;         /* custom one-shot floor, us */
  double custom_gbps;             /* custom one-shot bandwidth per rank (bytes pulled / time) */
  double custom_cap_bytes;        /* per-rank input cap for the custom backend; 0 = none */
  int ranks_per_node;             /* NVLink domain size (0 = all ranks in one domain) */
  double internode_gbps;          /* per-GPU inter-node bandwidth, GB/s */
  double internode_lat_us;        /* extra latency when crossing nodes */
} tps_ag_model;

/* Latency of one all-gather of total_bytes over ranks n with the requested backend
 * (a rule picks: tps_gather_pick; the term is the picked backend's). *used gets the backend that ran
 * (may be NULL); *proto the NCCL protocol that won (may be NULL; -1 for custom). */
double tps_ag_time_us(const tps_ag_model *a, double total_bytes, int n, int backend,
                      int *used, int *proto);

/* NCCL-only time of one protocol (tps_ag_time_us takes the fastest of them). */
double tps_ag_nccl_proto_us(const tps_ag_model *a, double total_bytes, int n, int proto);

/* A spec-only model for n ranks of a GPU from its link bandwidth (NCCL reaches ~80% of
 * line rate, small-message floors from the brief).  Returns 0, -1 for n < 1. */
int tps_ag_from_spec(tps_ag_model *a, const tps_gpu *gpu, int n);
#ifdef __cplusplus
}
#endif
#endif
