/* calib_mock.c: `tpsplit calibrate` on mock GPUs, so that make check runs the whole
 * calibrate flow (sweeps, gathers, budget, faults, the written file) on a machine with no
 * GPU.  The kernels/bench/bench.h entry points are defined here (strong symbols: src/cmd_*.c link
 * against them instead of kernels/):
 *   GEMM times: our H200 tables (data/h200_gemm_<path>.tsv) interpolated (Steffen in
 *   log-log), scaled by K N / (5120 x 1792) for other shapes; all-gather times: NCCL and
 *   custom one-shot lines of H200-like numbers.
 * Environment: MOCK_GPUS (GPUs visible, default 1), MOCK_CC (compute capability x10,
 * default 90), MOCK_GEMM_S (seconds each bench gemm run pretends to take on the mock's clock, default 0), MOCK_HANG=1 (a
 * bench gemm run never returns), MOCK_GATHER_FAIL=1 (every all-gather run fails as an NCCL
 * init timeout would), MOCK_CHECK_FAIL=PATH (that path's correctness check fails).
 * Usage: calib_mock calibrate|bench [options] (the tpsplit command lines; kernels/
 * run_h200_calibrate.sh runs with it as its tpsplit in a dry run). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <gsl/gsl_errno.h>
#include "kernels/bench/bench.h"
#include "src/cli/calibrate/cal.h"
#include "model/numeric/robust.h"
#include "model/core/path.h"
#include "src/io/table.h"
#include "src/cli/tpsplit.h"
#include "src/base/util.h"
#include "src/cli/cmd_bench.h"

static long env_long(const char *name, long dflt) {
  const char *v = getenv(name);
  return v && *v ? strtol(v, NULL, 10) : dflt;
}

/* The mock's clock (cal_set_clock): the process's CPU time plus the GPU time the mock pretends
 * to spend (pause_s adds it, it does not sleep), so the budget cases do not depend on the
 * machine's load (they failed at load 10-16 with the wall clock). */
static double paused_s;
static double mock_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9 + paused_s;
}
__attribute__((constructor)) static void mock_clock_init(void) { cal_set_clock(mock_now_s); }
static void pause_s(double s) {
  if (s > 0) paused_s += s;
}

int tps_bench_gpus(int *n, char *why, size_t whysz) {
  *n = (int)env_long("MOCK_GPUS", 1);
  if (*n < 1) { snprintf(why, whysz, "mock: 0 devices"); return TPS_SKIP; }
  return TPS_OK;
}

int tps_bench_mpi(void) { return 0; }

static void prov(tps_bench_prov *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->gpu_name, sizeof p->gpu_name, "NVIDIA H200");
  long cc = env_long("MOCK_CC", 90);
  p->sms = 132;
  p->cc_major = (int)(cc / 10);
  p->cc_minor = (int)(cc % 10);
  p->l2_bytes = 62914560;
  p->sm_clock_mhz = 1980;
  p->mem_clock_mhz = 3201;
  p->driver_api = 13000;
  p->runtime = 13000;
  p->cublaslt = 130100;
  snprintf(p->timer_text, sizeof p->timer_text, "mock timer");
}

int tps_bench_device_info(int device, tps_bench_prov *p, char *why, size_t whysz) {
  int n = 0;
  if (tps_bench_gpus(&n, why, whysz) != TPS_OK) return TPS_SKIP;
  if (device >= n) { snprintf(why, whysz, "device %d: only %d device(s)", device, n); return TPS_EINVAL; }
  prov(p);
  return TPS_OK;
}

int tps_bench_gemm_run(const tps_bench_gemm_opts *o, tps_bench_gemm_result *r) {
  prov(&r->prov);
  r->failed = 0;
  r->why[0] = 0;
  r->nparts = 1;
  if (env_long("MOCK_HANG", 0)) for (;;) pause();
  pause_s(atof(getenv("MOCK_GEMM_S") ? getenv("MOCK_GEMM_S") : "0"));
  /* MOCK_FIRST_S: the extra time of a part's first step (its all-row checks) */
  if (!o->full_checks_done) pause_s(atof(getenv("MOCK_FIRST_S") ? getenv("MOCK_FIRST_S") : "0"));
  const char *fail = getenv("MOCK_CHECK_FAIL");
  if (!o->full_checks_done && getenv("MOCK_SAY_CHECKS"))
    fprintf(stderr, "mock: all-row checks of %s %dx%d\n", tps_path_name(o->path), o->k, o->n);
  for (int i = 0; i < o->nrows; i++) {
    tps_bench_gemm_check c;
    memset(&c, 0, sizeof c);
    c.kind = TPS_BENCH_CHECK_REFERENCE;
    c.m = o->rows[i];
    c.ok = !(fail && !strcmp(fail, tps_path_name(o->path)));
    if (!c.ok) r->failed = 1;
    if (o->on_check) o->on_check(o->arg, &c);
  }
  if (r->failed) return TPS_OK;
  char rel[128], file[512];
  tps_err e;
  tps_err_clear(&e);
  snprintf(rel, sizeof rel, "h200_gemm_%s.tsv", tps_path_name(o->path));
  tps_table t;
  if (tps_data_path(rel, file, sizeof file, &e) || tps_table_read(file, &t, &e)) {
    snprintf(r->why, sizeof r->why, "mock: %.240s", e.msg);
    return TPS_ERR;
  }
  double *x = malloc(t.nrows * sizeof *x);
  for (size_t i = 0; i < t.nrows; i++) x[i] = (double)t.rows[i];
  tps_loo_curve *c = tps_loo_curve_measured(x, t.time_us, t.nrows);
  const double scale = 0.3 + 0.7 * (double)o->k * (double)o->n / (5120.0 * 1792.0);
  for (int i = 0; i < o->nrows; i++) {
    r->rows[i].m = o->rows[i];
    snprintf(r->rows[i].config, sizeof r->rows[i].config, "mock M=%d", o->rows[i]);
    double us = tps_loo_curve_eval(c, (double)o->rows[i]) * scale;
    r->rows[i].t[0] = (tps_timing){.median_us = us, .min_us = us * 0.99, .max_us = us * 1.05};
  }
  tps_loo_curve_free(c);
  free(x);
  tps_table_free(&t);
  return TPS_OK;
}

int tps_bench_split_run(const tps_bench_split_opts *o, tps_bench_split_result *r) {
  (void)o;
  memset(&r->w, 0, sizeof r->w);
  r->w.writer = 1;
  r->w.stopped = -1;
  snprintf(r->w.why, sizeof r->w.why, "mock: no split bench");
  return TPS_SKIP;
}

int tps_bench_allgather_run(const tps_bench_ag_opts *o, tps_bench_ag_result *r) {
  memset(&r->w, 0, sizeof r->w);
  r->w.writer = 1;
  r->w.stopped = -1;
  prov(&r->w.prov);
  snprintf(r->w.prov.nccl, sizeof r->w.prov.nccl, "2.28.9");
  int n = 0;
  char why[64];
  tps_bench_gpus(&n, why, sizeof why);
  if (o->w.tp > n) { snprintf(r->w.why, sizeof r->w.why, "mock: %d ranks on %d GPUs", o->w.tp, n); return TPS_EINVAL; }
  if (env_long("MOCK_GATHER_FAIL", 0)) {
    fprintf(stderr, "tpsplit: rank 3: ncclCommInitRankConfig: no progress in 60 s: aborting the gather backends and the other ranks\n");
    snprintf(r->w.why, sizeof r->w.why, "rank 3: NCCL init timed out (mock)");
    r->w.stopped = 0;
    return TPS_ERR;
  }
  const double tp = o->w.tp;
  for (size_t i = 0; i < o->nsizes; i++) {
    tps_bench_ag_row *row = &r->rows[i];
    memset(row, 0, sizeof *row);
    size_t per = (size_t)o->sizes[i] / (size_t)tp / 16 * 16;
    if (!per) continue;
    row->size = per * (size_t)tp;
    row->count = per / 2;
    const double S = (double)row->size;
    int custom = o->w.gather == TPS_GATHER_CUSTOM || (o->w.gather == TPS_GATHER_AUTO && per <= o->w.cap_bytes);
    row->used = custom ? TPS_GATHER_CUSTOM : TPS_GATHER_NCCL;
    double us = custom ? 6.0 + S * (tp - 1) / tp / 337e3 : 9.0 + 0.8 * (tp - 1) + S * (tp - 1) / tp / 340e3;
    row->oop = (tps_timing){.median_us = us, .min_us = us, .max_us = us * 1.1};
    row->ip = row->oop;
    if (o->w.on_row) o->w.on_row(o->w.arg, i, TPS_BENCH_ROW_TIMED, row);
  }
  return TPS_OK;
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  tps_set_cmdline(argc, argv);
  if (argc < 2 || (strcmp(argv[1], "calibrate") && strcmp(argv[1], "bench"))) {
    fprintf(stderr, "usage: calib_mock calibrate|bench [options]\n");
    return TPS_EXIT_USAGE;
  }
  int rc = !strcmp(argv[1], "bench") ? cmd_bench(argc - 1, argv + 1) : cmd_calibrate(argc - 1, argv + 1);
  if (tps_close_stdout() != 0 && rc == 0) rc = TPS_EXIT_FAIL;
  return rc;
}
