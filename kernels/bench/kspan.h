/* kspan.h: the span of a graph replay's kernels from CUPTI activity records.
 *
 * A replay's time is the span of its kernels: first kernel start to last kernel end, as
 * recorded by the GPU.  CUDA events around cudaGraphLaunch measure that span
 * plus the graph's launch latency on the stream (about 4.4 us on the lent H200 for an almost
 * empty kernel, data/h200_gemm_tuning.txt), which is not GEMM time and which the bundled H20
 * table (CUPTI span) does not hold.
 *
 * CUPTI is loaded at run time (dlopen), so the binary runs where it is missing; then
 * tps_kspan_open fails with a reason and the harness falls back to CUDA events.  Search
 * order: $TPS_CUPTI_LIB, libcupti.so.<major> and libcupti.so on the loader path,
 * $CUDA_HOME/extras/CUPTI/lib64, /usr/local/cuda/extras/CUPTI/lib64, /usr/local/cuda/lib64.
 * The library's API version must equal the one of the headers built against (the record
 * layout, CUpti_ActivityKernel10 for CUDA 13, belongs to it).  TPS_TIMER=events disables it.
 *
 * Records: CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (does not serialize kernels), and memcpy
 * and memset records.  A replay's kernels are the records of its device with a graph id
 * (kernels launched outside a graph, such as the L2 flush, have none) that start after the
 * timestamp taken by tps_kspan_mark just before the launch; a replay that runs no kernel
 * (a one-rank in-place gather, a copy-only graph) is the span of its copies and memsets; one
 * that runs nothing has no span, and the harness takes its event time (and counts it).  One process-wide store, guarded by a mutex, so that one thread per
 * GPU (bench split) can share it: each harness reads only its own device's records. */
#ifndef TPS_KERNELS_KSPAN_H
#define TPS_KERNELS_KSPAN_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Enable kernel activity records (once per process; later calls return the first result).
 * 0 on success; otherwise -1 and *why (static text) says why it is unavailable. */
int tps_kspan_open(const char **why);
/* A CUPTI timestamp (ns, the timebase of the records); 0 if not open. */
uint64_t tps_kspan_mark(void);
/* After the replay has completed (stream synchronized): flush the records, take the graph
 * kernels of `device` that started at or after `mark` (its copies and memsets if there is no
 * kernel), drop every record of that device, and return their span in *span_us and their
 * number in *nkernels.  0 on success; -1 if none was found (*nkernels = 0). */
int tps_kspan_take(int device, uint64_t mark, double *span_us, int *nkernels);
/* Records dropped by CUPTI for lack of buffer space (should stay 0). */
uint64_t tps_kspan_dropped(void);

#ifdef __cplusplus
}
#endif
#endif
