/* xgpufile.h: data/xgpu.fit, the cross-GPU fits that predictions use, written by
 * `tpsplit fit --xgpu -o data/xgpu.fit` and read by src/evidence.  JSON, schema version 2
 * (doc/formats.md); the old positional text form (tpsplit-xgpu 1) is refused with the command
 * that regenerates it.  One object, keys in this order, each once:
 *   "format": "tpsplit-xgpu", "schema_version": 2,
 *   "provenance": [the lines saying what wrote the file and when to regenerate it],
 *   "gemm": [{"path": dense-bf16|native-fp8, "held_out": GPU or null (the fit on every GPU),
 *             "sigma": 90% half-width of the held-out log errors, "trained_on": "GPU,GPU,...",
 *             "params": {tps_xg_par_names: value}, "sharp": value}, ...],
 *   "gather": [{"fabric": nvlink|pcie, "held_out", "sigma", "trained_on",
 *               "params": {a_P_us, b_P_us, f_P per protocol P, llcap_gbps, sharp, phi_P},
 *               "symm_lat_us", "custom_floor_us", "custom_eff"}, ...],
 *   "w8a16": {"gpu", "file", "sigma", "params": {tps_xw8_par_names: value}} (or null).
 * Canonical form as the fit file's (src/io/fitfile.h): the reader accepts only what the writer
 * writes, so an accepted file is written back byte for byte. */
#ifndef TPS_XGPUFILE_H
#define TPS_XGPUFILE_H
#include <stddef.h>
#include <stdio.h>
#include "src/base/err.h"
#include "model/predict/resolve.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_XGPU_VERSION 2
#define TPS_XGPU_MAXG 32
#define TPS_XGPU_MAXA 16

typedef struct {
  tps_res_xgemm xg[TPS_XGPU_MAXG];
  int nxg;
  tps_res_xgather xa[TPS_XGPU_MAXA];
  int nxa;
  int have_w8;
  char w8_gpu[32], w8_file[256];
  double w8_sigma;
  tps_xw8_model w8;
} tps_xgpu_file;

/* Write x on fp; 0, or -1 on a write error. */
int tps_xgpu_write(FILE *fp, const tps_xgpu_file *x);
/* Read path (the bounded input) into x; 0, or -1 with e naming FILE:LINE. */
int tps_xgpu_read(const char *path, tps_xgpu_file *x, tps_err *e);
int tps_xgpu_read_mem(const char *path, const char *data, size_t len, tps_xgpu_file *x, tps_err *e);

#ifdef __cplusplus
}
#endif
#endif
