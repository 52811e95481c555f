/* gather_priv.h: internals shared by kernels/gather_nccl.cu and kernels/gather_custom.cu:
 * the custom backend's peer buffers of one rank.  Not part of the C API (gather.h). */
#ifndef TPS_GATHER_PRIV_H
#define TPS_GATHER_PRIV_H
#include "gather.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int n, rank, ready;
  size_t cap_bytes;                            /* data bytes per buffer (rounded to 256) */
  char *base;                                  /* own allocation: cap_bytes data + signal */
  const char *buf[TPS_GATHER_MAX_RANKS];       /* every rank's buffer, in this process */
  tps_gather_signal *sig[TPS_GATHER_MAX_RANKS];
  int opened[TPS_GATHER_MAX_RANKS];            /* 1: mapped with cudaIpcOpenMemHandle */
} tps_gather_peers;

/* Collective.  TPS_K_OK: ready; TPS_K_SKIP: some pair of ranks cannot reach each other
 * (another host, no peer access, too many ranks): no custom backend; TPS_K_ERR: failure. */
int tps_gather_peers_open(tps_gather_peers *p, tps_world *w, size_t cap_bytes);
void tps_gather_peers_close(tps_gather_peers *p);
int tps_gather_peers_enqueue(tps_gather_peers *p, const void *shard, void *out, size_t stride_bytes,
                             size_t total_bytes, int blocks, int threads, double timeout_s,
                             cudaStream_t s);
/* The error flag of this rank's signal area (synchronous read). */
int tps_gather_peers_error(const tps_gather_peers *p, uint32_t *err);

#ifdef __cplusplus
}
#endif
#endif
