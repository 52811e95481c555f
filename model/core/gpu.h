/* gpu.h: a GPU as the model sees it (datasheet numbers, dense).  Filled by
 * src/io/gpus.c from data/gpus.tsv; pure data, no I/O here. */
#ifndef TPS_GPU_H
#define TPS_GPU_H
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char name[32];          /* canonical name, e.g. "H200-SXM" */
  int sms;                /* streaming multiprocessors (CUs for AMD) */
  int cc_major, cc_minor; /* compute capability (0.0 when not NVIDIA) */
  double bf16_tflops;     /* dense bf16 tensor peak */
  double fp8_tflops;      /* dense fp8 tensor peak, 0 when none */
  double hbm_gbps;        /* HBM bandwidth, GB/s */
  double l2_mb;           /* L2 size, MB (0 when unknown) */
  double link_gbps;       /* scale-up bandwidth per GPU per direction, GB/s */
  int links;              /* number of scale-up links (0 = PCIe only) */
  double nccl_link_gbps;  /* NCCL topology model's per-link bandwidth, GB/s (0 = unknown) */
  int nvlink;             /* 1 when the scale-up fabric is NVLink (custom one-shot gather possible) */
  unsigned uncertain;     /* bit mask of TPS_GPU_U_* fields marked uncertain in the table */
  double base_mhz;        /* datasheet base (guaranteed) graphics clock, MHz (0 = unknown) */
  double boost_mhz;       /* datasheet boost graphics clock, MHz (0 = unknown) */
  /* Facts of data/gpus.tsv that name the GPU outside tpsplit ("" = not in the table): */
  char cuda_name[64];     /* the device name the runtime reports ("NVIDIA H200"), the first of cuda_names */
  char engine_key[64];    /* the key engines file thresholds under ("NVIDIA_H200") */
  char colour[8];         /* plot colour "#RRGGBB" */
  char arch[24];          /* architecture family ("sm90-hopper", "sm100-blackwell") */
  char fabric[16];        /* scale-up fabric family: the link column lower-cased ("nvlink4", "pcie4") */
  double fp4_tflops;      /* dense FP4 tensor peak (Blackwell NVFP4), 0 when none or not in the table */
} tps_gpu;

enum {
  TPS_GPU_U_SMS = 1u << 0,
  TPS_GPU_U_L2 = 1u << 1,
  TPS_GPU_U_PEAK = 1u << 2,
  TPS_GPU_U_HBM = 1u << 3,
  TPS_GPU_U_LINK = 1u << 4,
  TPS_GPU_U_CLOCK = 1u << 5
};

#ifdef __cplusplus
}
#endif
#endif
