/* fit_from_file.c: a measurement file read and fitted by its kind (see fit_from_file.h). */
#include "src/evidence/fit_from_file.h"
#include <string.h>
#include "src/io/gpus.h"
#include "src/io/table.h"
#include "src/base/util.h"

static const tps_gpu *find_gpu(const tps_gpu_table *gt, const char *name) {
  tps_err e2;
  tps_err_clear(&e2);
  return name && name[0] ? tps_gpus_find(gt, name, &e2) : NULL;
}

int tps_fit_file(const char *path, const char *gpu_name, const char *gpus_file, const tps_fit_opts *o,
                 tps_fit *f, int *status, tps_err *e) {
  tps_table t;
  tps_gpu_table gt;
  int rc = -1;
  *status = TPS_EBADDATA;
  memset(&gt, 0, sizeof gt);
  if (tps_table_read(path, &t, e) != 0) return -1;
  if (tps_gpus_load(gpus_file, &gt, e) != 0) { tps_table_free(&t); return -1; }
  const char *gname = gpu_name ? gpu_name : t.gpu;
  const tps_gpu *gpu = find_gpu(&gt, gname);
  char msg[512] = "";
  if (t.kind == TPS_TABLE_SPLIT || t.kind == TPS_TABLE_GEMM) {
    if (!gpu) {
      tps_err e2;
      tps_err_clear(&e2);
      if (!gname[0]) tps_err_set(e, path, 0, "no '#@ gpu' metadata (the fit needs the GPU's SMs; use --gpu)");
      else { tps_gpus_find(&gt, gname, &e2); tps_err_set(e, path, gpu_name ? 0 : t.gpu_line, "%s", e2.msg); }
      goto out;
    }
    const tps_path *kp = tps_path_find(t.kpath);
    if (!kp) {
      char why[320];
      if (t.kpath[0]) tps_err_set(e, path, 0, "%s", tps_path_unknown(t.kpath, 0, why, sizeof why));
      else tps_err_set(e, path, 0, "no '#@ path' metadata: the fit needs the kernel path");
      goto out;
    }
    if (t.k < 1 || t.n < 1) { tps_err_set(e, path, 0, "no '#@ k' and '#@ n' metadata: the fit needs the GEMM shape"); goto out; }
    tps_gemm_shape sh = {t.k, t.n, t.out_bytes_per_token > 0 ? t.out_bytes_per_token / (double)t.n : 2.0};
    if (t.kind == TPS_TABLE_SPLIT && t.tp == 1) {
      /* a 1-rank split has no gather to fit (its split column adds a local copy): the
       * replicated column is a GEMM table of rows = tokens */
      tps_gemm_data d;
      memset(&d, 0, sizeof d);
      d.n = t.nrows; d.rows = t.tokens; d.time_us = t.replicated_us; d.shape = sh; d.path = kp; d.sms = gpu->sms; d.gpu = gpu;
      *status = tps_fit_gemm(&d, o, f, msg, sizeof msg);
      if (*status == TPS_OK) {
        static const char head[] = "TP 1 split table: its replicated column fitted as a GEMM table";
        char note[sizeof f->fixed_note + sizeof head + 2];
        snprintf(note, sizeof note, "%s%s%s", head, f->fixed_note[0] ? "; " : "", f->fixed_note);
        note[sizeof f->fixed_note - 1] = '\0';
        memcpy(f->fixed_note, note, sizeof f->fixed_note);
      }
    } else if (t.kind == TPS_TABLE_SPLIT) {
      if (t.tp < 2) { tps_err_set(e, path, 0, "no '#@ tp' metadata (>= 1) for a split table"); goto out; }
      if (!(t.out_bytes_per_token > 0)) { tps_err_set(e, path, 0, "no '#@ out_bytes_per_token' metadata"); goto out; }
      tps_split_data d;
      memset(&d, 0, sizeof d);
      d.n = t.nrows; d.tokens = t.tokens; d.replicated_us = t.replicated_us; d.split_us = t.split_us;
      d.tp = t.tp; d.shape = sh; d.out_bytes_per_token = t.out_bytes_per_token;
      d.gather_cap_bytes = t.gather_cap_bytes; d.path = kp; d.sms = gpu->sms; d.gpu = gpu;
      d.gather = tps_gather_parse(t.gather);
      if (d.gather < 0) d.gather = tps_gather_rule(); /* no '#@ gather' metadata */
      *status = tps_fit_split(&d, o, f, msg, sizeof msg);
    } else {
      tps_gemm_data d;
      memset(&d, 0, sizeof d);
      d.n = t.nrows; d.rows = t.rows; d.time_us = t.time_us; d.shape = sh; d.path = kp; d.sms = gpu->sms; d.gpu = gpu;
      *status = tps_fit_gemm(&d, o, f, msg, sizeof msg);
    }
  } else {
    int ranks = t.ranks > 0 ? t.ranks : t.tp;
    if (ranks == 1) {
      tps_err_set(e, path, 0, "an all-gather of 1 rank moves nothing between GPUs: nothing to fit (need >= 2 ranks)");
      goto out;
    }
    if (ranks < 2) { tps_err_set(e, path, 0, "no '#@ ranks' metadata (>= 2) for an all-gather table"); goto out; }
    tps_ag_data d;
    memset(&d, 0, sizeof d);
    d.n = t.nrows; d.bytes = t.bytes; d.time_us = t.time_us; d.ranks = ranks; d.gpu = gpu;
    d.backend = tps_gather_is_capped(tps_gather_parse(t.gather)) ? tps_gather_capped() : tps_gather_fallback();
    *status = tps_fit_allgather(&d, o, f, msg, sizeof msg);
    if (!gpu && t.gpu[0]) snprintf(f->gpu, sizeof f->gpu, "%s", t.gpu);
  }
  if (*status != TPS_OK) { tps_err_set(e, path, 0, "fit: %s: %s", tps_strstatus(*status), msg); goto out; }
  rc = 0;
out:
  tps_gpus_free(&gt);
  tps_table_free(&t);
  return rc;
}

int tps_bundled_fit(const char *gpus_file, int loo, tps_fit *f, char *path, size_t pathsz, int *status, tps_err *e) {
  char buf[4096];
  if (!path) { path = buf; pathsz = sizeof buf; }
  *status = TPS_EBADDATA;
  if (tps_data_path(TPS_BUNDLED_TABLE, path, pathsz, e) != 0) return -1;
  tps_fit_opts fo = {loo, 0};
  return tps_fit_file(path, NULL, gpus_file, &fo, f, status, e);
}
