/* cmd_xgpu.c: `tpsplit fit --xgpu -o FILE`, reached from cmd_fit (one hook line there).
 *
 * The cross-GPU fits that predictions use (src/evidence/evidence.c reads them), precomputed because
 * they take seconds: per GEMM path the fit on every bundled GPU and the fit without each of
 * them (the folds of the leave-one-GPU-out table of src/cli/cmd_loo.c, same data, same starts), per
 * fabric the same for the NCCL all-gather, and our W8A16 kernels' fit.  Each line carries
 * the half-width sigma of its 90% interval in log space: for the fit without GPU g, the 90%
 * quantile of the held-out |log residuals| of each other GPU h, the widest (each predicted by the fit
 * without h, which does contain g: one level of leave-one-out, not the nested one of the
 * table above); for the fit on all GPUs, of every GPU.  Format: src/io/xgpufile.h (JSON, one fit a
 * line, written by tps_xgpu_write).
 * Gather sigma: points at 2, 4 and 8 GPUs from 16 KiB to 64 MiB (the gathers of T = 1..16384
 * tokens of 3584 bytes at TP 2..8).  W8A16 sigma: the 90% quantile of the leave-one-M-out
 * |log errors|. */
#include "config.h"
#include "src/io/xgpufile.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/cli/cmdopt.h"
#include "src/base/jsonout.h"
#include "src/base/util.h"
#include "model/core/status.h"
#include "src/cli/tpsplit.h"
#include "src/cli/cmdopt.h"
#include "src/cli/loo_data.h"
#include "src/base/iocheck.h"
#include "src/base/parallel.h"

int cmd_fit_xgpu(int argc, char **argv);

typedef struct {
  int ns;
  gset sets[MAXSETS];
} gsets;

#define XG_SIGMA_LO (16.0 * 1024)

static void names_except(const tps_gpu *const *g, int n, const tps_gpu *skip, char *buf, size_t sz) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < n; i++) {
    if (g[i] == skip) continue;
    int w = snprintf(buf + len, sz - len, "%s%s", len ? "," : "", g[i]->name);
    if (w < 0 || (size_t)w >= sz - len) break;
    len += (size_t)w;
  }
}

/* The fits of xgpu_gemm on worker threads (src/base/parallel.h): job g < ng the fold without GPU
 * g, job ng the fit on every GPU; each writes its own slot. */
typedef struct {
  tps_xg_path path;
  const gset *sets;
  int ns, ng, grp[MAXSETS], st[MAXSETS + 1];
  tps_xg_model fit[MAXSETS + 1];
} xgpu_fits;

static void xgpu_fit_job(void *ctx, int g) {
  xgpu_fits *j = ctx;
  int skipg[MAXSETS] = {0};
  if (g < j->ng) skipg[g] = 1;
  j->st[g] = tps_lgo_fit_except(j->path, j->sets, j->ns, j->grp, skipg, &j->fit[g], NULL);
}

static int xgpu_gemm(tps_xgpu_file *x, tps_xg_path path, gset *sets, int ns) {
  xgpu_fits *fits = calloc(1, sizeof *fits);
  if (!fits) return TPS_ENOMEM;
  fits->path = path;
  fits->sets = sets;
  fits->ns = ns;
  int *grp = fits->grp, ng = fits->ng = tps_lgo_group_sets(sets, ns, fits->grp);
  const tps_xg_model *fold = fits->fit, *all = &fits->fit[ng];
  const tps_gpu *gg[MAXSETS];
  for (int i = 0; i < ns; i++) gg[grp[i]] = sets[i].gpu;
  tps_parallel_for(ng + 1, tps_threads_default(), xgpu_fit_job, fits);
  for (int g = 0; g <= ng; g++)
    if (fits->st[g] != TPS_OK) { int st = fits->st[g]; free(fits); return st; }
  /* held-out log residuals of every set by its own fold */
  size_t tot = 0;
  for (int i = 0; i < ns; i++) tot += sets[i].n;
  double *lr = malloc((tot ? tot : 1) * sizeof *lr);
  int *lg = malloc((tot ? tot : 1) * sizeof *lg);
  double *sub = malloc((tot ? tot : 1) * sizeof *sub);
  if (!lr || !lg || !sub) { free(lr); free(lg); free(sub); free(fits); return TPS_ENOMEM; }
  size_t k = 0;
  for (int i = 0; i < ns; i++) {
    tps_lgo_predict_set(&fold[grp[i]], &sets[i], sets[i].pred);
    for (size_t j = 0; j < sets[i].n; j++)
      if (sets[i].eval[j]) { lr[k] = log(sets[i].pred[j] / sets[i].t[j]); lg[k++] = grp[i]; }
  }
  char names[512];
  for (int g = -1; g < ng; g++) {
    size_t m = 0;
    for (size_t j = 0; j < k; j++) if (lg[j] != g) sub[m++] = lr[j];
    double sigma = tps_loo_quantile_abs(sub, m, 0.9, HW_FLOOR);
    const tps_xg_model *mo = g < 0 ? all : &fold[g];
    names_except(gg, ng, g < 0 ? NULL : gg[g], names, sizeof names);
    if (x->nxg == TPS_XGPU_MAXG) { free(lr); free(lg); free(sub); free(fits); return TPS_EINVAL; }
    tps_res_xgemm *r = &x->xg[x->nxg++];
    r->path = path;
    snprintf(r->held, sizeof r->held, "%s", g < 0 ? "-" : gg[g]->name);
    r->sigma = sigma;
    snprintf(r->trained, sizeof r->trained, "%.399s", names);
    r->m = *mo;
  }
  free(lr); free(lg); free(sub); free(fits);
  return TPS_OK;
}

static int xgpu_gather(tps_xgpu_file *x, aset *sets, int ns, int pcie) {
  int skip[MAXSETS], idx[MAXSETS], n = 0;
  static tps_xga_model fold[MAXSETS];
  tps_xga_model all;
  const tps_gpu *gg[MAXSETS];
  for (int i = 0; i < ns; i++) if ((sets[i].gpu->nvlink == 0) == pcie) { idx[n] = i; gg[n++] = sets[i].gpu; }
  if (n == 0) return TPS_OK;
  int fold_ok[MAXSETS];
  for (int a = 0; a < n; a++) {
    memset(skip, 0, sizeof skip);
    skip[idx[a]] = 1;
    int st = tps_lgo_fit_gather_except(sets, ns, skip, pcie, &fold[a]);
    fold_ok[a] = st == TPS_OK;
    if (st != TPS_OK && st != TPS_ETOOFEW) return st;
  }
  memset(skip, 0, sizeof skip);
  int st = tps_lgo_fit_gather_except(sets, ns, skip, pcie, &all);
  if (st != TPS_OK) return st;
  char names[512];
  for (int g = -1; g < n; g++) {
    if (g >= 0 && !fold_ok[g]) continue;
    size_t cap = 0, m = 0;
    for (int h = 0; h < n; h++) cap += sets[idx[h]].n;
    double *lr = malloc((cap ? cap : 1) * sizeof *lr);
    if (!lr) return TPS_ENOMEM;
    double sigma = HW_FLOOR;
    for (int h = 0; h < n; h++) {
      if (h == g || !fold_ok[h]) continue;
      const aset *s = &sets[idx[h]];
      size_t m0 = m;
      for (size_t j = 0; j < s->n; j++)
        if (s->bytes[j] >= XG_SIGMA_LO && s->bytes[j] <= AG_EVAL_HI)
          lr[m++] = log(tps_xga_time_us(&fold[h], s->gpu, s->bytes[j], s->ranks[j], TPS_XGA_NCCL, NULL) / s->t[j]);
      /* the widest GPU's 90% quantile (as the table's nested width, src/cli/cmd_loo.c run_gather_loo) */
      if (m > m0) sigma = fmax(sigma, tps_loo_quantile_abs(lr + m0, m - m0, 0.9, HW_FLOOR));
    }
    free(lr);
    const tps_xga_model *mo = g < 0 ? &all : &fold[g];
    names_except(gg, n, g < 0 ? NULL : gg[g], names, sizeof names);
    if (x->nxa == TPS_XGPU_MAXA) return TPS_EINVAL;
    tps_res_xgather *r = &x->xa[x->nxa++];
    r->pcie = pcie;
    snprintf(r->held, sizeof r->held, "%s", g < 0 ? "-" : gg[g]->name);
    r->sigma = sigma;
    snprintf(r->trained, sizeof r->trained, "%.399s", names);
    r->m = *mo;
  }
  return TPS_OK;
}

/* -o is none of the files read (src/base/iocheck.h): the GPU table and the bundled
 * measurements below.  0, or -1 with e. */
static int xgpu_io_check(const char *out, const char *gpus, tps_err *e) {
  char p[4096];
  const char *d = tps_data_dir();
  tps_io_reset();
  tps_io_output(out, "-o");
  tps_io_input(gpus, "--gpus-file");
  if (!gpus) { snprintf(p, sizeof p, "%s/gpus.tsv", d); tps_io_input(p, "the bundled GPU table"); }
  for (size_t i = 0; i < tps_lgo_naic; i++)
    for (int path = 0; path < TPS_XG_NPATH; path++) {
      char rel[256];
      tps_lgo_aic_gemm_rel(&tps_lgo_aic_gemm[i], (tps_xg_path)path, rel, sizeof rel);
      if (path > TPS_XG_FP8 && !tps_lgo_has_file(rel)) continue;
      snprintf(p, sizeof p, "%s/%s", d, rel);
      tps_io_input(p, "a bundled measurement");
    }
  for (size_t i = 0; i < TPS_LGO_NNCCL; i++) {
    snprintf(p, sizeof p, "%s/aic/nccl_%s.tsv.gz", d, tps_lgo_aic_nccl[i]);
    tps_io_input(p, "a bundled measurement");
  }
  for (size_t i = 0; i < TPS_LGO_NBENCH_XGPU; i++)
    for (int path = 0; path < TPS_XG_NPATH; path++) {
      snprintf(p, sizeof p, "%s/%s_gemm_%s.tsv", d, tps_lgo_bench_gemm[i], tps_xg_path_names[path]);
      tps_io_input(p, "a bundled measurement");
    }
  snprintf(p, sizeof p, "%s/%s", d, TPS_LGO_W8_TABLE);
  tps_io_input(p, "a bundled measurement");
  return tps_io_check(e);
}

int cmd_fit_xgpu(int argc, char **argv) {
  const tps_cmdspec spec = {
    .name = "fit --xgpu",
    .synopsis = "-o FILE [--gpus-file FILE]",
    .about = "Fit the cross-GPU models that predictions use on the bundled measurements and write\n"
             "them to FILE (data/xgpu.fit is this command's output: `tpsplit fit --xgpu -o\n"
             "data/xgpu.fit` regenerates it): per GEMM path (dense-bf16, native-fp8, fp8-block,\n"
             "nvfp4) the fit on\n"
             "every bundled GPU and the fit without each (data/aic/ GEMM tables, data/h200_gemm_*),\n"
             "per fabric the NCCL all-gather (data/aic/ NCCL tables), our W8A16 kernels\n"
             "(data/" TPS_LGO_W8_TABLE ", the dispatch of issue 28 measured on an H100); each with the 90% half-width of its held-out errors.\n"
             "Deterministic; about 5 s on one core.",
    .common = TPS_OPT(TPS_OI_OUTPUT) | TPS_OPT(TPS_OI_GPUS_FILE),
    .required = TPS_OPT(TPS_OI_OUTPUT),
    .output_metavar = "FILE",
    .text = {[TPS_OI_OUTPUT] = "where to write (temp file + rename; '-' = stdout)"},
    .exit_status = "0 ok, 1 a fit failed or a write error, 2 usage or input error.",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  int prc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (prc >= 0) return prc;
  const char *out = v.output, *gpus = v.gpus_file;
  tps_cmdopt_free(&v);
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  if (xgpu_io_check(out, gpus, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  if (tps_gpus_load(gpus, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  int rc = TPS_EXIT_OK, st = TPS_OK;
  static gsets gp[TPS_XG_NPATH];
  static aset as[MAXSETS];
  static w8_part w8;
  int nas = 0;
  memset(gp, 0, sizeof gp);
  for (int path = 0; path < TPS_XG_NPATH && rc == TPS_EXIT_OK; path++)
    if (tps_lgo_load_gemm((tps_xg_path)path, TPS_LGO_NBENCH_XGPU, &gt, gp[path].sets, &gp[path].ns, &e)) rc = TPS_EXIT_USAGE;
  if (rc == TPS_EXIT_OK && tps_lgo_load_nccl(&gt, as, &nas, &e)) rc = TPS_EXIT_USAGE;
  if (rc == TPS_EXIT_OK && tps_lgo_run_w8(&gt, &w8, &e) != TPS_OK) rc = TPS_EXIT_USAGE;
  if (rc != TPS_EXIT_OK) tps_err_print(&e);
  tps_outfile of;
  memset(&of, 0, sizeof of);
  FILE *fp = stdout;
  int to_file = strcmp(out, "-") != 0;
  if (rc == TPS_EXIT_OK && to_file) {
    if (tps_out_open(&of, out, &e)) { tps_err_print(&e); rc = tps_err_exit_code(&e); }
    else fp = of.fp;
  }
  if (rc == TPS_EXIT_OK) {
    static tps_xgpu_file x; /* large: not on the stack */
    memset(&x, 0, sizeof x);
    for (int path = 0; path < TPS_XG_NPATH && st == TPS_OK; path++) st = xgpu_gemm(&x, (tps_xg_path)path, gp[path].sets, gp[path].ns);
    for (int pcie = 0; pcie < 2 && st == TPS_OK; pcie++) st = xgpu_gather(&x, as, nas, pcie);
    if (st == TPS_OK) {
      double lr[64];
      for (size_t i = 0; i < w8.npts; i++) lr[i] = log(w8.loo_us[i] / w8.t[i]);
      x.have_w8 = 1;
      snprintf(x.w8_gpu, sizeof x.w8_gpu, "%s", w8.gpu->name);
      snprintf(x.w8_file, sizeof x.w8_file, "%.255s", w8.file);
      x.w8_sigma = tps_loo_quantile_abs(lr, w8.npts, 0.9, HW_FLOOR);
      x.w8 = w8.m;
      (void)tps_xgpu_write(fp, &x); /* a write error: found by tps_out_commit (ferror) */
    }
    if (st != TPS_OK) {
      tps_die_msg("a fit failed: %s", tps_strstatus(st));
      rc = TPS_EXIT_FAIL;
      if (to_file) tps_out_abort(&of);
    } else if (to_file && tps_out_commit(&of, &e)) {
      tps_err_print(&e);
      rc = TPS_EXIT_FAIL;
    }
  }
  for (int path = 0; path < TPS_XG_NPATH; path++)
    for (int i = 0; i < gp[path].ns; i++) tps_lgo_gset_free(&gp[path].sets[i]);
  for (int a = 0; a < nas; a++) tps_lgo_aset_free(&as[a]);
  tps_gpus_free(&gt);
  return rc;
}
