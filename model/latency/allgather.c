/* allgather.c: all-gather latency model (see allgather.h for the equations). */
#include "model/latency/allgather.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *const tps_proto_names[TPS_NPROTO] = {"LL", "LL128", "Simple"};
static int crosses_nodes(const tps_ag_model *a, int n) { return a->ranks_per_node > 0 && n > a->ranks_per_node; }

double tps_ag_nccl_proto_us(const tps_ag_model *a, double total_bytes, int n, int proto) {
  if (n < 1 || proto < 0 || proto >= TPS_NPROTO || !(total_bytes >= 0)) return NAN;
  if (n == 1) return 0.0;
  double bw = a->busbw_gbps[proto];
  if (!(bw > 0)) return INFINITY;
  double lat = a->lat_us[proto];
  if (crosses_nodes(a, n)) {
    if (a->internode_gbps > 0 && a->internode_gbps < bw) bw = a->internode_gbps;
    lat += a->internode_lat_us;
  }
  return lat + total_bytes * (n - 1) / n / (bw * 1e3);
}

double tps_ag_time_us(const tps_ag_model *a, double total_bytes, int n, int backend, int *used, int *proto) {
  if (used) *used = tps_gather_fallback();
  if (proto) *proto = -1;
  if (n < 1 || !(total_bytes >= 0)) return NAN;
  if (n == 1) return 0.0;
  /* the backend that runs (a rule's pick; a capped backend above its cap or where it cannot
   * run falls back), then its term */
  int oneshot_ok = a->custom_cap_bytes > 0 && a->custom_gbps > 0 && !crosses_nodes(a, n);
  int b = tps_gather_pick(backend, total_bytes / n, a->custom_cap_bytes, oneshot_ok);
  if (tps_gather_term_of(b) == TPS_GATHER_TERM_ONESHOT) {
    if (used) *used = b;
    return a->custom_floor_us + total_bytes * (n - 1) / n / (a->custom_gbps * 1e3);
  }
  double best = INFINITY;
  for (int p = 0; p < TPS_NPROTO; p++) {
    double t = tps_ag_nccl_proto_us(a, total_bytes, n, p);
    if (t < best) { best = t; if (proto) *proto = p; }
  }
  return best;
}

int tps_ag_from_spec(tps_ag_model *a, const tps_gpu *gpu, int n) {
  if (n < 1) return -1;
  memset(a, 0, sizeof *a);
  a->ranks = n;
  /* Simple's bus bandwidth: NCCL's own topology model where the GPU table has it (per-link
   * bandwidth x links: 20.6 x 18 = 370.8 GB/s on NVLink4, the ~370 GB/s measured, brief),
   * else ~80% of the line rate (brief).  LL and LL128 carry 50% and ~94% payload per line
   * (NCCL's protocol design): 40% and 92% of Simple here, with lower latency.  The floors
   * follow the brief (10-13 us at 8 Hopper GPUs for the smallest messages), split into a
   * fixed part and a per-step part of the ring. */
  double line = gpu->link_gbps > 0 ? gpu->link_gbps : 32.0;
  double simple = gpu->nccl_link_gbps > 0 && gpu->links > 0 ? gpu->nccl_link_gbps * gpu->links : 0.80 * line;
  a->busbw_gbps[TPS_PROTO_SIMPLE] = simple;
  a->busbw_gbps[TPS_PROTO_LL128] = simple * 0.92;
  a->busbw_gbps[TPS_PROTO_LL] = simple * 0.40;
  a->lat_us[TPS_PROTO_LL] = 6.0 + 0.6 * (n - 1);
  a->lat_us[TPS_PROTO_LL128] = 7.5 + 0.9 * (n - 1);
  a->lat_us[TPS_PROTO_SIMPLE] = 10.0 + 1.5 * (n - 1);
  if (gpu->nvlink) {
    a->custom_floor_us = 6.0;
    a->custom_gbps = 0.75 * line;
    a->custom_cap_bytes = tps_gather_cap_default();
  }
  return 0;
}
