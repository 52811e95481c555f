/* bench_gemm.cu: bench gemm (kernels/bench/bench.h): check, then time, one GEMM path on one GPU;
 * also the GPU count and the device provenance the other benches use.
 *
 * Shape: Y[M x N] = X[M x K] W[N x K]^T, bf16 in and out (kernels/gemm/gemm.h), for every M of
 * opts.rows (src/ makes them: each T and each ceil(T/TP)).
 *
 * Inputs: W = 0.05 * u * 2^v (u uniform in [-1,1) per element, v uniform in [-1,1) per row and
 * 32-column block, so the W8A16 block scales vary), X uniform in [-1,1) in bf16, drawn fresh
 * on the device for every check.  Outputs are poisoned (0xFF bytes: bf16 NaN) before every
 * checked run, so an unwritten element fails the NaN check.
 *
 * Checks (all before any timing; any failure: result.failed and nothing timed):
 *  1. vs a float64 CPU reference computed from the weights and activations exactly as the GEMM
 *     used them (quantized): relative Frobenius error <= 1e-2, no NaN; max |diff| reported.
 *     All rows for M in {1, 7, 64, 129} (unless opts.full_checks_done); 8 sampled rows (first,
 *     last, 6 random) for every measured M (and every element checked for NaN), or, with
 *     opts.check_per_config, for the first M of each kernel configuration among the rows.
 *  2. a path with a reference kernel (tps_gemm_traits.reference: w8a16): the fast kernel vs
 *     the reference kernel on all rows, every M, relative difference <= 1e-2.
 *  3. split vs replicated, per T and TP: the ceil(T/TP)-row shards (the last ones may be
 *     shorter or empty), run one after another into one buffer, against the T-row result:
 *     max |diff| and relative Frobenius difference reported; bounded by the path's
 *     split_rel_diff; bitwise identical required where the kernel configuration is the same
 *     for the shards and the whole batch and the path's rows are independent (w8a16,
 *     w8a16-ref; reported for cuBLASLt).
 * Timing: kernels/bench/harness.h, every row (and part) a candidate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_bf16.h>
#include <gsl/gsl_rng.h>
#include "kernels/common/check.h"
#include "kernels/gemm/gemm.h"
#include "kernels/bench/harness.h"
#include "kernels/bench/bench_world.h"
#include "kernels/common/gemm_ref.h"

typedef __nv_bfloat16 bf16;

/* ------------------------------------------------------------------ GPUs and provenance */
extern "C" int tps_bench_gpus(int *n, char *why, size_t whysz) {
  *n = 0;
  cudaError_t e = cudaGetDeviceCount(n);
  if (e != cudaSuccess || *n < 1) {
    snprintf(why, whysz, "%s", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    *n = 0;
    return TPS_SKIP;
  }
  return TPS_OK;
}

extern "C" int tps_bench_prov_device(tps_bench_prov *p) {
  int dev;
  CUDA_TRY(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
  snprintf(p->gpu_name, sizeof p->gpu_name, "%.255s", prop.name);
  p->sms = prop.multiProcessorCount;
  p->cc_major = prop.major;
  p->cc_minor = prop.minor;
  p->l2_bytes = prop.l2CacheSize;
  int v;
  CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev));
  p->sm_clock_mhz = v / 1000;
  CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev));
  p->mem_clock_mhz = v / 1000;
  CUDA_TRY(cudaRuntimeGetVersion(&p->runtime));
  CUDA_TRY(cudaDriverGetVersion(&p->driver_api));
  p->cublaslt = tps_gemm_cublaslt_version();
  return TPS_OK;
}

extern "C" int tps_bench_device_info(int device, tps_bench_prov *p, char *why, size_t whysz) {
  memset(p, 0, sizeof *p);
  int ndev = 0;
  if (tps_bench_gpus(&ndev, why, whysz) != TPS_OK) return TPS_SKIP;
  if (device < 0 || device >= ndev) {
    snprintf(why, whysz, "device %d: only %d device(s)", device, ndev);
    return TPS_EINVAL;
  }
  CUDA_TRY(cudaSetDevice(device));
  return tps_bench_prov_device(p);
}

extern "C" void tps_bench_prov_timer(tps_bench_prov *p, const tps_harness *h) {
  const char *why = NULL;
  p->flush_bytes = tps_harness_flush_bytes(h);
  p->timer = tps_harness_timer(h, &why);
  snprintf(p->timer_text, sizeof p->timer_text, "%s", tps_harness_timer_text(h));
  snprintf(p->timer_why, sizeof p->timer_why, "%s", why ? why : "");
  p->fallbacks = tps_harness_fallbacks(h);
}

/* ------------------------------------------------------------------ device helpers */
__global__ void fill_uniform_bf16(bf16 *x, size_t n, unsigned long long seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (i + 1); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    float u = (float)(z >> 40) * (1.0f / 16777216.0f); /* [0,1) */
    x[i] = __float2bfloat16_rn(2.f * u - 1.f);
  }
}

static int fill_x(bf16 *x, size_t n, unsigned long long seed) {
  fill_uniform_bf16<<<1024, 256>>>(x, n, seed);
  CUDA_LAUNCH_CHECK();
  return TPS_OK;
}

/* ------------------------------------------------------------------ state */
typedef struct {
  const tps_bench_gemm_opts *o;
  const tps_gemm_traits *tr;
  tps_gemm *g, *ref;      /* the plan; the reference kernel's plan (paths that have one) */
  double *w;              /* weights as the GEMM uses them, N x K */
  bf16 *x, *y, *y2;       /* device */
  bf16 *hy, *hy2;         /* host copies */
  int max_m;
  gsl_rng *rng;
  unsigned long long xseed;
  int failed;
} bench_t;

static tps_bench_gemm_check new_check(int kind, int m) {
  tps_bench_gemm_check c;
  memset(&c, 0, sizeof c);
  c.kind = kind;
  c.m = m;
  return c;
}

static void report(bench_t *b, tps_bench_gemm_check *c) {
  if (!c->ok) b->failed = 1;
  if (b->o->on_check) b->o->on_check(b->o->arg, c);
}

/* Fresh X, poisoned Y, run m rows into y; copy Y back into hy. */
static int run_fresh(bench_t *b, tps_gemm *g, int m, int refill) {
  size_t n = b->o->n, k = b->o->k;
  if (refill) {
    b->xseed = gsl_rng_get(b->rng) * 0x100000001ull + gsl_rng_get(b->rng);
    TPS_TRY(fill_x(b->x, (size_t)m * k, b->xseed));
  }
  CUDA_TRY(cudaMemset(b->y, 0xFF, (size_t)m * n * sizeof(bf16)));
  TPS_TRY(tps_gemm_run(g, b->x, b->y, m, 0));
  CUDA_LAUNCH_CHECK();
  CUDA_TRY(cudaDeviceSynchronize());
  CUDA_TRY(cudaMemcpy(b->hy, b->y, (size_t)m * n * sizeof(bf16), cudaMemcpyDeviceToHost));
  return TPS_OK;
}

static size_t count_nan(const bf16 *h, size_t cnt) {
  size_t bad = 0;
  for (size_t i = 0; i < cnt; i++) if (!isfinite(__bfloat162float(h[i]))) bad++;
  return bad;
}

/* Check 1 on the rows listed (rows[] of the m-row result in b->hy). */
static int check_reference(bench_t *b, int m, const int *rows, int nrows, int all_rows) {
  int n = b->o->n, k = b->o->k;
  size_t nan = count_nan(b->hy, (size_t)m * n);
  double *xd = (double *)malloc((size_t)k * sizeof *xd), *yref = (double *)malloc((size_t)n * sizeof *yref);
  if (!xd || !yref) { free(xd); free(yref); return TPS_ERR; }
  double num = 0, den = 0, maxabs = 0;
  for (int i = 0; i < nrows; i++) {
    int r = rows[i];
    int rc = tps_gemm_activations(b->g, b->x, r, 1, xd);
    if (rc != TPS_OK) { free(xd); free(yref); return rc; }
    tps_gemm_ref(xd, 1, b->w, (size_t)n, (size_t)k, yref); /* the float64 reference row */
    for (int c = 0; c < n; c++) {
      double ref = yref[c];
      double got = (double)__bfloat162float(b->hy[(size_t)r * n + c]);
      double d = got - ref;
      num += d * d;
      den += ref * ref;
      if (fabs(d) > maxabs || isnan(d)) maxabs = isnan(d) ? NAN : fmax(maxabs, fabs(d));
    }
  }
  free(xd);
  free(yref);
  tps_bench_gemm_check c = new_check(TPS_BENCH_CHECK_REFERENCE, m);
  c.all_rows = all_rows;
  c.rows_checked = nrows;
  c.rel = den > 0 ? sqrt(num / den) : NAN;
  c.max_abs_diff = maxabs;
  c.non_finite = (long)nan;
  c.ok = nan == 0 && c.rel <= 1e-2;
  report(b, &c);
  return TPS_OK;
}

static void diff_stats(const bf16 *a, const bf16 *r, size_t cnt, double *rel, double *maxabs, long *nbitdiff) {
  double num = 0, den = 0, mx = 0;
  long nb = 0;
  for (size_t i = 0; i < cnt; i++) {
    double x = __bfloat162float(a[i]), y = __bfloat162float(r[i]);
    double d = x - y;
    num += d * d; den += y * y;
    if (!(fabs(d) <= mx)) mx = isnan(d) ? NAN : fabs(d);
    if (memcmp(&a[i], &r[i], sizeof(bf16))) nb++;
  }
  *rel = den > 0 ? sqrt(num / den) : (num == 0 ? 0 : NAN);
  *maxabs = mx;
  *nbitdiff = nb;
}

/* Checks 1 and 2 for m rows. */
static int check_m(bench_t *b, int m, int full) {
  int n = b->o->n;
  TPS_TRY(run_fresh(b, b->g, m, 1));
  int *rows = (int *)malloc((size_t)(full ? m : 8) * sizeof *rows), nr = 0;
  if (!rows) return TPS_ERR;
  if (full || m <= 8) for (int r = 0; r < m; r++) rows[nr++] = r;
  else {
    rows[nr++] = 0; rows[nr++] = m - 1;
    while (nr < 8) rows[nr++] = 1 + (int)gsl_rng_uniform_int(b->rng, (unsigned long)(m - 2));
  }
  int rc = check_reference(b, m, rows, nr, full);
  free(rows);
  TPS_TRY(rc);
  if (b->ref) { /* fast vs reference kernel, same X */
    memcpy(b->hy2, b->hy, (size_t)m * n * sizeof(bf16));
    TPS_TRY(run_fresh(b, b->ref, m, 0));
    tps_bench_gemm_check c = new_check(TPS_BENCH_CHECK_FAST_VS_REF, m);
    c.reference = tps_gemm_get_path(b->ref);
    c.elements = (long)m * n;
    diff_stats(b->hy2, b->hy, (size_t)m * n, &c.rel, &c.max_abs_diff, &c.differing);
    c.non_finite = (long)(count_nan(b->hy2, (size_t)m * n) + count_nan(b->hy, (size_t)m * n));
    c.ok = c.non_finite == 0 && c.rel <= 1e-2;
    report(b, &c);
    memcpy(b->hy, b->hy2, (size_t)m * n * sizeof(bf16));
  }
  return TPS_OK;
}

/* Check 3 for T tokens at TP tp. */
static int check_split(bench_t *b, int t, int tp) {
  int n = b->o->n, k = b->o->k;
  int c = (t + tp - 1) / tp;
  TPS_TRY(run_fresh(b, b->g, t, 1));
  CUDA_TRY(cudaMemset(b->y2, 0xFF, (size_t)t * n * sizeof(bf16)));
  int same = 1;
  uint64_t idT, idr;
  char desc[256];
  TPS_TRY(tps_gemm_config(b->g, t, desc, sizeof desc, &idT));
  for (int r = 0; r < tp; r++) {
    int rows = t - r * c < c ? t - r * c : c;
    if (rows <= 0) break;
    TPS_TRY(tps_gemm_run(b->g, b->x + (size_t)r * c * k, b->y2 + (size_t)r * c * n, rows, 0));
    TPS_TRY(tps_gemm_config(b->g, rows, desc, sizeof desc, &idr));
    if (idr != idT) same = 0;
  }
  CUDA_TRY(cudaDeviceSynchronize());
  CUDA_TRY(cudaMemcpy(b->hy2, b->y2, (size_t)t * n * sizeof(bf16), cudaMemcpyDeviceToHost));
  tps_bench_gemm_check ck = new_check(TPS_BENCH_CHECK_SPLIT, t);
  ck.tp = tp;
  ck.shard_rows = c;
  ck.same_config = same;
  ck.elements = (long)t * n;
  diff_stats(b->hy2, b->hy, (size_t)t * n, &ck.rel, &ck.max_abs_diff, &ck.differing);
  for (size_t i = 0; i < (size_t)t * n; i++) ck.max_abs_y = fmax(ck.max_abs_y, fabs((double)__bfloat162float(b->hy[i])));
  ck.non_finite = (long)count_nan(b->hy2, (size_t)t * n);
  ck.bitwise_required = same && b->tr->rows_independent;
  ck.ok = ck.non_finite == 0 && ck.rel <= b->tr->split_rel_diff && (!ck.bitwise_required || ck.differing == 0);
  report(b, &ck);
  return TPS_OK;
}

/* ------------------------------------------------------------------ timing */
typedef struct {
  tps_gemm *g;
  const void *x;
  void *y;
  int m, parts;
} run_ctx;

static int enqueue_run(void *ctx, cudaStream_t s) {
  run_ctx *c = (run_ctx *)ctx;
  return tps_gemm_run_part(c->g, c->x, c->y, c->m, s, c->parts);
}

/* Every row and part a candidate, alternated within every round. */
static int time_rows(bench_t *b, tps_bench_gemm_result *res) {
  const tps_bench_gemm_opts *o = b->o;
  const int nt = res->nparts, nops = o->nrows * nt;
  tps_harness *h;
  TPS_TRY(tps_harness_create(&h, 0));
  if (o->flush_write_only) tps_harness_set_flush_read(h, 0);
  tps_bench_prov_timer(&res->prov, h);
  if (o->on_checked) o->on_checked(o->arg, res);
  tps_op *ops = (tps_op *)calloc((size_t)nops, sizeof *ops);
  run_ctx *ctx = (run_ctx *)calloc((size_t)nops, sizeof *ctx);
  char (*names)[48] = (char (*)[48])calloc((size_t)nops, 48);
  tps_timing *tm = (tps_timing *)calloc((size_t)nops, sizeof *tm), *tme = (tps_timing *)calloc((size_t)nops, sizeof *tme);
  static const int parts[3] = {TPS_GEMM_PART_ALL, TPS_GEMM_PART_MATMUL, TPS_GEMM_PART_QUANT};
  int rc = ops && ctx && names && tm && tme ? TPS_OK : TPS_ERR;
  for (int q = 0; q < nops && rc == TPS_OK; q++) {
    const int i = q / nt, p = q % nt;
    ctx[q].g = b->g; ctx[q].x = b->x; ctx[q].y = b->y; ctx[q].m = o->rows[i]; ctx[q].parts = parts[p];
    snprintf(names[q], 48, "%s M=%d part %d", tps_path_name(o->path), o->rows[i], parts[p]);
    ops[q].name = names[q]; ops[q].ctx = &ctx[q]; ops[q].enqueue = enqueue_run;
  }
  if (rc == TPS_OK) rc = tps_harness_time(h, ops, nops, o->samples, o->warmup, tm, tme, NULL);
  for (int q = 0; q < nops && rc == TPS_OK; q++) {
    res->rows[q / nt].t[q % nt] = tm[q];
    res->rows[q / nt].ev[q % nt] = tme[q];
  }
  tps_bench_prov_timer(&res->prov, h); /* with the count of fallbacks */
  tps_harness_destroy(h);
  free(ops); free(ctx); free(names); free(tm); free(tme);
  return rc;
}

/* ------------------------------------------------------------------ the bench */
static int bench(bench_t *b, tps_bench_gemm_result *res) {
  const tps_bench_gemm_opts *o = b->o;
  int n = o->n, k = o->k;
  int maxr = o->rows[o->nrows - 1];
  b->max_m = maxr > 129 ? maxr : 129;
  float *w = (float *)malloc((size_t)n * k * sizeof *w);
  b->w = (double *)malloc((size_t)n * k * sizeof *b->w);
  b->hy = (bf16 *)malloc((size_t)b->max_m * n * sizeof(bf16));
  b->hy2 = (bf16 *)malloc((size_t)b->max_m * n * sizeof(bf16));
  if (!w || !b->w || !b->hy || !b->hy2) { free(w); fprintf(stderr, "tpsplit: bench gemm: out of memory\n"); return TPS_ERR; }
  for (int r = 0; r < n; r++)
    for (int j = 0; j < k; j += 32) {
      double f = 0.05 * pow(2.0, 2 * gsl_rng_uniform(b->rng) - 1);
      for (int i = j; i < j + 32; i++) w[(size_t)r * k + i] = (float)(f * (2 * gsl_rng_uniform(b->rng) - 1));
    }
  int rc = tps_gemm_create(&b->g, o->path, n, k, b->max_m, w);
  if (rc == TPS_OK && b->tr->reference >= 0)
    rc = tps_gemm_create(&b->ref, (tps_path_id)b->tr->reference, n, k, b->max_m, w);
  free(w);
  TPS_TRY(rc);
  res->weight_bytes = tps_gemm_weight_bytes(b->g);
  /* every row's configuration (the heuristic's or the dispatch's choice, nothing run) */
  for (int i = 0; i < o->nrows; i++) {
    res->rows[i].m = o->rows[i];
    TPS_TRY(tps_gemm_config(b->g, o->rows[i], res->rows[i].config, sizeof res->rows[i].config, &res->rows[i].config_id));
  }
  if (o->configs_only) {
    if (o->on_checked) o->on_checked(o->arg, res);
    return TPS_OK;
  }
  TPS_TRY(tps_gemm_weights(b->g, b->w));
  CUDA_TRY(cudaMalloc(&b->x, (size_t)b->max_m * k * sizeof(bf16)));
  CUDA_TRY(cudaMalloc(&b->y, (size_t)b->max_m * n * sizeof(bf16)));
  CUDA_TRY(cudaMalloc(&b->y2, (size_t)b->max_m * n * sizeof(bf16)));

  static const int full_m[] = {1, 7, 64, 129};
  for (size_t i = 0; !o->full_checks_done && i < sizeof full_m / sizeof *full_m; i++) TPS_TRY(check_m(b, full_m[i], 1));
  for (int i = 0; i < o->nrows; i++) {
    int first = 1; /* with check_per_config, only the first M of each configuration */
    for (int j = 0; o->check_per_config && j < i && first; j++) first = res->rows[j].config_id != res->rows[i].config_id;
    if (first) TPS_TRY(check_m(b, o->rows[i], 0));
  }
  for (size_t i = 0; i < o->ntokens; i++)
    for (size_t j = 0; j < o->ntps; j++) TPS_TRY(check_split(b, (int)o->tokens[i], (int)o->tps[j]));
  res->failed = b->failed;
  if (b->failed || o->check_only) {
    if (o->on_checked) o->on_checked(o->arg, res);
    return TPS_OK;
  }
  TPS_TRY(fill_x(b->x, (size_t)b->max_m * k, b->xseed + 12345));
  CUDA_TRY(cudaDeviceSynchronize()); /* the harness stream does not wait for stream 0 */
  return time_rows(b, res);
}

extern "C" int tps_bench_gemm_run(const tps_bench_gemm_opts *o, tps_bench_gemm_result *res) {
  memset(&res->prov, 0, sizeof res->prov);
  res->failed = 0;
  res->why[0] = 0;
  const tps_gemm_traits *tr = tps_gemm_traits_of(o->path);
  int ndev = 0;
  if (tps_bench_gpus(&ndev, res->why, sizeof res->why) != TPS_OK) return TPS_SKIP;
  if (!tr) snprintf(res->why, sizeof res->why, "no kernel for path %s", tps_path_name(o->path));
  else if (o->nrows < 1) snprintf(res->why, sizeof res->why, "no rows to measure");
  else if (o->device < 0 || o->device >= ndev)
    snprintf(res->why, sizeof res->why, "device %d: only %d device(s)", o->device, ndev);
  if (res->why[0]) return TPS_EINVAL;
  CUDA_TRY(cudaSetDevice(o->device));
  TPS_TRY(tps_bench_prov_device(&res->prov));
  res->nparts = tr->quant_part ? 3 : 1;
  bench_t b;
  memset(&b, 0, sizeof b);
  b.o = o;
  b.tr = tr;
  b.rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!b.rng) return TPS_ERR;
  gsl_rng_set(b.rng, o->seed);
  const int rc = bench(&b, res);
  tps_gemm_destroy(b.g);
  tps_gemm_destroy(b.ref);
  cudaFree(b.x); cudaFree(b.y); cudaFree(b.y2);
  free(b.w); free(b.hy); free(b.hy2);
  gsl_rng_free(b.rng);
  cudaDeviceSynchronize();
  return rc;
}
