/* bench_gemm.cu: `tpsplit bench gemm`: check, then time, one GEMM path on one GPU.
 *
 * Shape: Y[M x N] = X[M x K] W[N x K]^T, bf16 in and out (kernels/gemm.h).  The rows measured
 * are every token count T of --tokens and every ceil(T/TP) for each TP of --tp (the row
 * counts of the replicated and of the split GEMM).  With one GPU there is no all-gather: the
 * table holds GEMM times only and says so.
 *
 * Inputs: W = 0.05 * u * 2^v (u uniform in [-1,1) per element, v uniform in [-1,1) per row and
 * 32-column block, so the W8A16 block scales vary), X uniform in [-1,1) in bf16, drawn fresh
 * on the device for every check.  Outputs are poisoned (0xFF bytes: bf16 NaN) before every
 * checked run, so an unwritten element fails the NaN check.
 *
 * Checks (all before any timing; any failure: exit 1 and no table):
 *  1. vs a float64 CPU reference computed from the weights and activations exactly as the GEMM
 *     used them (quantized): relative Frobenius error <= 1e-2, no NaN; max |diff| reported.
 *     All rows for M in {1, 7, 64, 129}; 8 sampled rows (first, last, 6 random) for every
 *     measured M (and every element checked for NaN).
 *  2. w8a16 only: the fast kernel vs the reference kernel (w8a16-ref) on all rows, every M.
 *  3. split vs replicated, per T and TP: the ceil(T/TP)-row shards (the last ones may be
 *     shorter or empty), run one after another into one buffer, against the T-row result:
 *     max |diff| and relative Frobenius difference reported; bounded by 1e-2 relative (1e-1
 *     for native-fp8, whose per-tensor activation scale depends on the rows in the batch);
 *     bitwise identical required where the kernel configuration is the same for the shards
 *     and the whole batch (w8a16, w8a16-ref; reported for cuBLASLt).
 * Timing: kernels/harness.h (graph per candidate, L2 flush, median of 50, alternated).
 * Units: time in us, tflops = 2 M N K / time / 1e12, gbps = (weight bytes incl. scales +
 * 2 M K + 2 M N) / time / 1e9 (the fewest bytes a GEMM must move). */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_bf16.h>
#include <gsl/gsl_rng.h>
#include "tpsplit.h"
#include "err.h"
#include "util.h"
#include "jsonout.h"
#include "bench.h"
#include "check.h"
#include "gemm.h"
#include "harness.h"
#include "w8quant.h"

typedef __nv_bfloat16 bf16;

static const char *const default_tokens =
    "1,2,4,6,8,12,16,24,32,48,64,96,128,256,384,512,1024,2048,4096,8192,16384";

static void usage(FILE *fp) {
  fprintf(fp,
          "Usage: tpsplit bench gemm --path dense-bf16|native-fp8|w8a16|w8a16-ref [options]\n"
          "Check one GEMM path against a float64 CPU reference (and split against replicated),\n"
          "then time it on one GPU: Y[M x N] = X[M x K] W[N x K]^T, bf16 in/out.\n\n"
          "  --path P        kernel path (required)\n"
          "  --k K           inner dimension, multiple of 64 (default 5120)\n"
          "  --n N           output columns, multiple of 64 (default 1792)\n"
          "  --tokens LIST   token counts T: '6,12,24' or 'A..B' (powers of two) (default\n"
          "                  the brief's sizes and powers of two, 1..16384)\n"
          "  --tp LIST       TP sizes; rows ceil(T/TP) are measured too (default 8)\n"
          "  -o, --output F  write the table to F (default stdout)\n"
          "  --check-only    run the checks, time nothing\n"
          "  --samples N     samples per row (default 50); --warmup N rounds (default 3)\n"
          "  --flush MODE    L2 flush before each replay: write-read (default: write 2x L2, then\n"
          "                  read it back, so no dirty write-back overlaps the GEMM) or write\n"
          "  --device D      CUDA device (default 0)\n"
          "  --seed S        random seed (default: from the clock; printed)\n"
          "  --json          print the results (and checks) as JSON on stdout\n"
          "  -h, --help      this help;  --version  the version\n\n"
          "Table: '#' provenance lines, '#@ key: value' metadata, then columns rows, time_us\n"
          "(median), min_us, max_us, tflops, gbps (native-fp8 adds gemm_us and quant_us: the\n"
          "FP8 GEMM and the activation quantization timed alone; with the CUPTI timer, event_us:\n"
          "the median of CUDA events around the same replays).  Time: the span of the replay's\n"
          "kernels from CUPTI activity records where libcupti loads, else CUDA events\n"
          "(TPS_TIMER=events forces events; TPS_CUPTI_LIB names the library).\n"
          "Exit: 0 ok, 1 a check failed or no GPU, 2 usage error.\n");
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
  return TPS_K_OK;
}

/* ------------------------------------------------------------------ state */
typedef struct {
  tps_gemm_path path;
  int k, n, samples, warmup, device, check_only, json, flush_write_only;
  long *tokens; size_t ntokens;
  long *tps; size_t ntps;
  const char *out;
  unsigned long seed;
} opts_t;

typedef struct {
  const opts_t *o;
  tps_gemm *g, *ref;      /* the plan; the w8a16 reference plan (w8a16 only) */
  double *w;              /* weights as the GEMM uses them, N x K */
  bf16 *x, *y, *y2;       /* device */
  bf16 *hy, *hy2;         /* host copies */
  int max_m;
  gsl_rng *rng;
  unsigned long long xseed;
  char **lines; size_t nlines, caplines; /* '# check' lines */
  json_t *jchecks;
  int failed;
  tps_timer timer;        /* what time_us is (kernels/harness.h) */
  long fallbacks;         /* replays without a CUPTI record (their event time was used) */
  char timer_text[256];
} bench_t;

static void addline(bench_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addline(bench_t *b, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "bench gemm: %s\n", buf);
  if (b->nlines == b->caplines) {
    b->caplines = b->caplines ? 2 * b->caplines : 64;
    b->lines = (char **)realloc(b->lines, b->caplines * sizeof *b->lines);
  }
  b->lines[b->nlines++] = strdup(buf);
}

static json_t *jcheck(bench_t *b, const char *kind, int m, int ok) {
  json_t *j = json_object();
  json_object_set_new(j, "kind", json_string(kind));
  json_object_set_new(j, "m", json_integer(m));
  json_object_set_new(j, "ok", json_boolean(ok));
  json_array_append_new(b->jchecks, j);
  if (!ok) b->failed = 1;
  return j;
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
  return TPS_K_OK;
}

static size_t count_nan(const bf16 *h, size_t cnt) {
  size_t bad = 0;
  for (size_t i = 0; i < cnt; i++) if (!isfinite(__bfloat162float(h[i]))) bad++;
  return bad;
}

/* Check 1 on the rows listed (rows[] of the m-row result in b->hy). */
static int check_reference(bench_t *b, int m, const int *rows, int nrows, const char *what) {
  int n = b->o->n, k = b->o->k;
  size_t nan = count_nan(b->hy, (size_t)m * n);
  double *xd = (double *)malloc((size_t)k * sizeof *xd);
  if (!xd) return TPS_K_ERR;
  double num = 0, den = 0, maxabs = 0;
  for (int i = 0; i < nrows; i++) {
    int r = rows[i];
    TPS_TRY(tps_gemm_activations(b->g, b->x, r, 1, xd));
    for (int c = 0; c < n; c++) {
      const double *wr = b->w + (size_t)c * k;
      double ref = 0;
      for (int j = 0; j < k; j++) ref += xd[j] * wr[j];
      double got = (double)__bfloat162float(b->hy[(size_t)r * n + c]);
      double d = got - ref;
      num += d * d;
      den += ref * ref;
      if (fabs(d) > maxabs || isnan(d)) maxabs = isnan(d) ? NAN : fmax(maxabs, fabs(d));
    }
  }
  free(xd);
  double rel = den > 0 ? sqrt(num / den) : NAN;
  int ok = nan == 0 && rel <= 1e-2;
  addline(b, "check %s vs float64 CPU reference: M=%d (%s): rel_err %.3g, max|diff| %.4g, non-finite %zu: %s",
          tps_gemm_path_name(b->o->path), m, what, rel, maxabs, nan, ok ? "ok" : "FAIL");
  json_t *j = jcheck(b, "reference", m, ok);
  tps_json_set_num(j, "rel_err", rel);
  tps_json_set_num(j, "max_abs_diff", maxabs);
  json_object_set_new(j, "rows_checked", json_integer(nrows));
  json_object_set_new(j, "non_finite", json_integer((json_int_t)nan));
  return TPS_K_OK;
}

static void diff_stats(const bf16 *a, const bf16 *r, size_t cnt, double *rel, double *maxabs, size_t *nbitdiff) {
  double num = 0, den = 0, mx = 0;
  size_t nb = 0;
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
  if (full || m <= 8) for (int r = 0; r < m; r++) rows[nr++] = r;
  else {
    rows[nr++] = 0; rows[nr++] = m - 1;
    while (nr < 8) rows[nr++] = 1 + (int)gsl_rng_uniform_int(b->rng, (unsigned long)(m - 2));
  }
  int rc = check_reference(b, m, rows, nr, full ? "all rows" : "8 sampled rows");
  free(rows);
  TPS_TRY(rc);
  if (b->ref) { /* fast vs reference kernel, same X */
    memcpy(b->hy2, b->hy, (size_t)m * n * sizeof(bf16));
    TPS_TRY(run_fresh(b, b->ref, m, 0));
    double rel, mx; size_t nb;
    diff_stats(b->hy2, b->hy, (size_t)m * n, &rel, &mx, &nb);
    size_t nan = count_nan(b->hy2, (size_t)m * n) + count_nan(b->hy, (size_t)m * n);
    int ok = nan == 0 && rel <= 1e-2;
    addline(b, "check w8a16 vs w8a16-ref kernel: M=%d all rows: rel_diff %.3g, max|diff| %.4g, %zu of %zu differ: %s",
            m, rel, mx, nb, (size_t)m * n, ok ? "ok" : "FAIL");
    json_t *j = jcheck(b, "fast_vs_ref_kernel", m, ok);
    tps_json_set_num(j, "rel_diff", rel);
    tps_json_set_num(j, "max_abs_diff", mx);
    memcpy(b->hy, b->hy2, (size_t)m * n * sizeof(bf16));
  }
  return TPS_K_OK;
}

/* Check 3 for T tokens at TP tp. */
static int check_split(bench_t *b, int t, int tp) {
  int n = b->o->n, k = b->o->k;
  int c = (t + tp - 1) / tp;
  TPS_TRY(run_fresh(b, b->g, t, 1));
  CUDA_TRY(cudaMemset(b->y2, 0xFF, (size_t)t * n * sizeof(bf16)));
  int same = 1;
  uint64_t idT, idr;
  char desc[160];
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
  double rel, mx, ymax = 0;
  size_t nb;
  diff_stats(b->hy2, b->hy, (size_t)t * n, &rel, &mx, &nb);
  for (size_t i = 0; i < (size_t)t * n; i++) ymax = fmax(ymax, fabs((double)__bfloat162float(b->hy[i])));
  size_t nan = count_nan(b->hy2, (size_t)t * n);
  double bound = b->o->path == TPS_GEMM_NATIVE_FP8 ? 1e-1 : 1e-2;
  int must_bitwise = same && (b->o->path == TPS_GEMM_W8A16 || b->o->path == TPS_GEMM_W8A16_REF);
  int ok = nan == 0 && rel <= bound && (!must_bitwise || nb == 0);
  addline(b, "check split vs replicated: T=%d TP=%d shards of %d rows: max|diff| %.4g (max|y| %.3g), rel_diff %.3g, "
          "%zu of %zu differ, same config %s%s: %s",
          t, tp, c, mx, ymax, rel, nb, (size_t)t * n, same ? "yes" : "no",
          must_bitwise ? " (bitwise required)" : "", ok ? "ok" : "FAIL");
  json_t *j = jcheck(b, "split_vs_replicated", t, ok);
  json_object_set_new(j, "tp", json_integer(tp));
  json_object_set_new(j, "shard_rows", json_integer(c));
  tps_json_set_num(j, "max_abs_diff", mx);
  tps_json_set_num(j, "max_abs_y", ymax);
  tps_json_set_num(j, "rel_diff", rel);
  json_object_set_new(j, "elements_differing", json_integer((json_int_t)nb));
  json_object_set_new(j, "same_config", json_boolean(same));
  return TPS_K_OK;
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

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

static void utc_now(char *buf, size_t n) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ------------------------------------------------------------------ main */
static int parse(int argc, char **argv, opts_t *o) {
  static const struct option lo[] = {
      {"path", required_argument, 0, 'p'}, {"k", required_argument, 0, 'k'},
      {"n", required_argument, 0, 'n'}, {"tokens", required_argument, 0, 't'},
      {"tp", required_argument, 0, 'P'}, {"output", required_argument, 0, 'o'},
      {"check-only", no_argument, 0, 'c'}, {"samples", required_argument, 0, 's'},
      {"warmup", required_argument, 0, 'w'}, {"device", required_argument, 0, 'd'},
      {"seed", required_argument, 0, 'S'}, {"json", no_argument, 0, 'j'},
      {"flush", required_argument, 0, 'F'}, {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'}, {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->k = 5120; o->n = 1792; o->samples = 50; o->warmup = 3; o->out = "-";
  o->path = (tps_gemm_path)-1;
  o->seed = (unsigned long)time(NULL);
  const char *tokens = default_tokens, *tps = "8";
  int c;
  long v;
  optind = 0;
  while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
    switch (c) {
    case 'p':
      if (tps_gemm_path_parse(optarg, &o->path)) { tps_die_msg("bench gemm: unknown path '%s' (dense-bf16, native-fp8, w8a16, w8a16-ref)", optarg); return TPS_EXIT_USAGE; }
      break;
    case 'k': case 'n':
      if (tps_parse_long(optarg, &v) || v < 64 || v % 64 || v > 1 << 20) { tps_die_msg("bench gemm: --%c must be a positive multiple of 64, not '%s'", c, optarg); return TPS_EXIT_USAGE; }
      if (c == 'k') o->k = (int)v; else o->n = (int)v;
      break;
    case 't': tokens = optarg; break;
    case 'P': tps = optarg; break;
    case 'o': o->out = optarg; break;
    case 'c': o->check_only = 1; break;
    case 's': case 'w': case 'd':
      if (tps_parse_long(optarg, &v) || v < (c == 's' ? 1 : 0) || v > 100000) { tps_die_msg("bench gemm: bad --%s '%s'", c == 's' ? "samples" : c == 'w' ? "warmup" : "device", optarg); return TPS_EXIT_USAGE; }
      if (c == 's') o->samples = (int)v; else if (c == 'w') o->warmup = (int)v; else o->device = (int)v;
      break;
    case 'S':
      if (tps_parse_long(optarg, &v) || v < 0) { tps_die_msg("bench gemm: bad --seed '%s'", optarg); return TPS_EXIT_USAGE; }
      o->seed = (unsigned long)v;
      break;
    case 'j': o->json = 1; break;
    case 'F':
      if (!strcmp(optarg, "write")) o->flush_write_only = 1;
      else if (!strcmp(optarg, "write-read")) o->flush_write_only = 0;
      else { tps_die_msg("bench gemm: --flush must be write or write-read, not '%s'", optarg); return TPS_EXIT_USAGE; }
      break;
    case 'h': usage(stdout); return -1;
    case 'V': puts("tpsplit bench gemm " PACKAGE_VERSION); return -1;
    default: usage(stderr); return TPS_EXIT_USAGE;
    }
  }
  if (optind < argc) { tps_die_msg("bench gemm: unexpected argument '%s'", argv[optind]); return TPS_EXIT_USAGE; }
  if ((int)o->path < 0) { tps_die_msg("bench gemm: --path is required (dense-bf16, native-fp8, w8a16, w8a16-ref)"); return TPS_EXIT_USAGE; }
  tps_err e;
  tps_err_clear(&e);
  if (tps_parse_tokens(tokens, &o->tokens, &o->ntokens, &e)) { tps_die_msg("bench gemm: --tokens '%s': %s", tokens, e.msg); return TPS_EXIT_USAGE; }
  if (tps_parse_tokens(tps, &o->tps, &o->ntps, &e)) { tps_die_msg("bench gemm: --tp '%s': %s", tps, e.msg); return TPS_EXIT_USAGE; }
  for (size_t i = 0; i < o->ntokens; i++)
    if (o->tokens[i] > 65536) { tps_die_msg("bench gemm: token count %ld above 65536", o->tokens[i]); return TPS_EXIT_USAGE; }
  for (size_t i = 0; i < o->ntps; i++)
    if (o->tps[i] < 1 || o->tps[i] > 1024) { tps_die_msg("bench gemm: impossible TP %ld (1..1024)", o->tps[i]); return TPS_EXIT_USAGE; }
  /* the W8A16 overrides the table would record: an unknown one or a value not allowed
   * fails here, before any GPU work (the plan would refuse it too) */
  char why[256];
  if (tps_w8_check_env(why, sizeof why)) { tps_die_msg("bench gemm: %s", why); return TPS_EXIT_USAGE; }
  return 0;
}

static int bench(const opts_t *o, bench_t *b, int *rows, int nrows, tps_timing *tm, tps_timing *tme, int nt_per_row) {
  int n = o->n, k = o->k;
  int maxr = rows[nrows - 1];
  b->max_m = maxr > 129 ? maxr : 129;
  float *w = (float *)malloc((size_t)n * k * sizeof *w);
  b->w = (double *)malloc((size_t)n * k * sizeof *b->w);
  b->hy = (bf16 *)malloc((size_t)b->max_m * n * sizeof(bf16));
  b->hy2 = (bf16 *)malloc((size_t)b->max_m * n * sizeof(bf16));
  if (!w || !b->w || !b->hy || !b->hy2) { free(w); fprintf(stderr, "tpsplit: bench gemm: out of memory\n"); return TPS_K_ERR; }
  for (int r = 0; r < n; r++)
    for (int j = 0; j < k; j += 32) {
      double f = 0.05 * pow(2.0, 2 * gsl_rng_uniform(b->rng) - 1);
      for (int i = j; i < j + 32; i++) w[(size_t)r * k + i] = (float)(f * (2 * gsl_rng_uniform(b->rng) - 1));
    }
  fprintf(stderr, "bench gemm: preparing %s weights (%d x %d)\n", tps_gemm_path_name(o->path), n, k);
  int rc = tps_gemm_create(&b->g, o->path, n, k, b->max_m, w);
  if (rc == TPS_K_OK && o->path == TPS_GEMM_W8A16) rc = tps_gemm_create(&b->ref, TPS_GEMM_W8A16_REF, n, k, b->max_m, w);
  free(w);
  TPS_TRY(rc);
  TPS_TRY(tps_gemm_weights(b->g, b->w));
  CUDA_TRY(cudaMalloc(&b->x, (size_t)b->max_m * k * sizeof(bf16)));
  CUDA_TRY(cudaMalloc(&b->y, (size_t)b->max_m * n * sizeof(bf16)));
  CUDA_TRY(cudaMalloc(&b->y2, (size_t)b->max_m * n * sizeof(bf16)));

  /* checks */
  static const int full_m[] = {1, 7, 64, 129};
  for (size_t i = 0; i < sizeof full_m / sizeof *full_m; i++) TPS_TRY(check_m(b, full_m[i], 1));
  for (int i = 0; i < nrows; i++) TPS_TRY(check_m(b, rows[i], 0));
  for (size_t i = 0; i < o->ntokens; i++)
    for (size_t j = 0; j < o->ntps; j++) TPS_TRY(check_split(b, (int)o->tokens[i], (int)o->tps[j]));
  /* every override that was set: the W8A16 ones (kernels/w8quant.h), then the harness's */
  const char *e;
  for (size_t i = 0; (e = tps_w8_override_name(i)) != NULL; i++)
    if (getenv(e)) addline(b, "environment: %s=%s", e, getenv(e));
  static const char *const envs[] = {"TPS_FLUSH", "TPS_TIMER", "TPS_CUPTI_LIB"};
  for (size_t i = 0; i < sizeof envs / sizeof *envs; i++)
    if (getenv(envs[i])) addline(b, "environment: %s=%s", envs[i], getenv(envs[i]));
  for (int i = 0; i < nrows; i++) {
    char desc[160]; uint64_t id;
    TPS_TRY(tps_gemm_config(b->g, rows[i], desc, sizeof desc, &id));
    addline(b, "config M=%d: %s", rows[i], desc);
  }
  if (b->failed) return TPS_K_OK;
  if (o->check_only) return TPS_K_OK;

  /* timing: every row (and part) is a candidate, alternated within every round */
  TPS_TRY(fill_x(b->x, (size_t)b->max_m * k, b->xseed + 12345));
  CUDA_TRY(cudaDeviceSynchronize()); /* the harness stream does not wait for stream 0 */
  tps_harness *h;
  TPS_TRY(tps_harness_create(&h, 0));
  if (o->flush_write_only) tps_harness_set_flush_read(h, 0);
  int nops = nrows * nt_per_row;
  tps_op *ops = (tps_op *)calloc((size_t)nops, sizeof *ops);
  run_ctx *ctx = (run_ctx *)calloc((size_t)nops, sizeof *ctx);
  char (*names)[48] = (char (*)[48])calloc((size_t)nops, 48);
  static const int parts[3] = {TPS_GEMM_PART_ALL, TPS_GEMM_PART_MATMUL, TPS_GEMM_PART_QUANT};
  for (int i = 0; i < nrows; i++)
    for (int p = 0; p < nt_per_row; p++) {
      int q = i * nt_per_row + p;
      ctx[q].g = b->g; ctx[q].x = b->x; ctx[q].y = b->y; ctx[q].m = rows[i]; ctx[q].parts = parts[p];
      snprintf(names[q], 48, "%s M=%d part %d", tps_gemm_path_name(o->path), rows[i], parts[p]);
      ops[q].name = names[q]; ops[q].ctx = &ctx[q]; ops[q].enqueue = enqueue_run;
    }
  fprintf(stderr, "bench gemm: timing %d candidates, %d samples each (flush %zu bytes)\n", nops, o->samples,
          tps_harness_flush_bytes(h));
  const char *why = NULL;
  b->timer = tps_harness_timer(h, &why);
  snprintf(b->timer_text, sizeof b->timer_text, "%s%s%s", tps_harness_timer_text(h), why ? ": " : "", why ? why : "");
  fprintf(stderr, "bench gemm: timer: %s\n", b->timer_text);
  rc = tps_harness_time(h, ops, nops, o->samples, o->warmup, tm, tme, NULL);
  b->fallbacks = tps_harness_fallbacks(h);
  tps_harness_destroy(h);
  free(ops); free(ctx); free(names);
  return rc;
}

static void bench_free(bench_t *b) {
  tps_gemm_destroy(b->g);
  tps_gemm_destroy(b->ref);
  cudaFree(b->x); cudaFree(b->y); cudaFree(b->y2);
  free(b->w); free(b->hy); free(b->hy2);
  for (size_t i = 0; i < b->nlines; i++) free(b->lines[i]);
  free(b->lines);
  if (b->rng) gsl_rng_free(b->rng);
  json_decref(b->jchecks);
}

extern "C" int tps_bench_gemm_main(int argc, char **argv) {
  opts_t o;
  int prc = parse(argc, argv, &o);
  if (prc) { free(o.tokens); free(o.tps); return prc < 0 ? TPS_EXIT_OK : prc; }
  /* the output's temporary file is created first, so that a directory that does not exist
   * or cannot be written fails at once (exit 2), not after the GPU work; renamed at the end */
  tps_outfile of;
  tps_err e;
  tps_err_clear(&e);
  memset(&of, 0, sizeof of);
  const char *dest = o.check_only || (o.json && !strcmp(o.out, "-")) ? NULL : o.out;
  if (dest && tps_out_open(&of, dest, &e)) {
    tps_err_print(&e);
    free(o.tokens); free(o.tps);
    return TPS_EXIT_USAGE;
  }
  int ndev = 0;
  cudaError_t ce = cudaGetDeviceCount(&ndev);
  if (ce != cudaSuccess || ndev == 0) {
    tps_die_msg("bench gemm: no GPU can be opened (%s)", ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
    tps_out_abort(&of);
    free(o.tokens); free(o.tps);
    return TPS_EXIT_FAIL;
  }
  if (o.device >= ndev || cudaSetDevice(o.device) != cudaSuccess) {
    tps_die_msg("bench gemm: --device %d: only %d device(s)", o.device, ndev);
    tps_out_abort(&of);
    free(o.tokens); free(o.tps);
    return TPS_EXIT_USAGE;
  }
  /* rows: T and ceil(T/TP) */
  size_t cap = o.ntokens * (o.ntps + 1);
  int *rows = (int *)malloc(cap * sizeof *rows), nrows = 0;
  for (size_t i = 0; i < o.ntokens; i++) {
    rows[nrows++] = (int)o.tokens[i];
    for (size_t j = 0; j < o.ntps; j++) rows[nrows++] = (int)((o.tokens[i] + o.tps[j] - 1) / o.tps[j]);
  }
  qsort(rows, (size_t)nrows, sizeof *rows, cmp_int);
  int u = 0;
  for (int i = 0; i < nrows; i++) if (u == 0 || rows[u - 1] != rows[i]) rows[u++] = rows[i];
  nrows = u;

  bench_t b;
  memset(&b, 0, sizeof b);
  b.o = &o;
  b.rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(b.rng, o.seed);
  b.jchecks = json_array();
  int per = o.path == TPS_GEMM_NATIVE_FP8 ? 3 : 1;
  tps_timing *tm = (tps_timing *)calloc((size_t)nrows * per, sizeof *tm);
  tps_timing *tme = (tps_timing *)calloc((size_t)nrows * per, sizeof *tme);
  int rc = bench(&o, &b, rows, nrows, tm, tme, per);
  int ret = TPS_EXIT_OK;
  if (rc != TPS_K_OK) ret = TPS_EXIT_FAIL;
  else if (b.failed) { tps_die_msg("bench gemm: a check failed (see above); nothing timed, no table written"); ret = TPS_EXIT_FAIL; }
  if (ret == TPS_EXIT_OK && o.check_only && !o.json) fprintf(stderr, "bench gemm: all checks passed\n");
  if (ret == TPS_EXIT_OK && !o.check_only) {
    cudaDeviceProp prop;
    int drv = 0, rt = 0, clk = 0, mclk = 0;
    cudaGetDeviceProperties(&prop, o.device);
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, o.device);
    cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, o.device);
    char date[32];
    utc_now(date, sizeof date);
    double wbytes = tps_gemm_weight_bytes(b.g);
    if (dest) {
      FILE *f = of.fp;
      fprintf(f, "# tpsplit bench gemm: GEMM times on one GPU, Y[M x N] = X[M x K] W[N x K]^T, bf16 in/out\n");
      fprintf(f, "# command: %s\n", tps_cmdline());
      fprintf(f, "# date: %s\n", date);
      fprintf(f, "# gpu: %s, %d SMs, compute capability %d.%d, L2 %d bytes, peak SM clock %d MHz, memory clock %d MHz\n",
              prop.name, prop.multiProcessorCount, prop.major, prop.minor, prop.l2CacheSize, clk / 1000, mclk / 1000);
      fprintf(f, "# driver (CUDA API) %d.%d, CUDA runtime %d.%d, cuBLASLt %zu\n", drv / 1000, drv % 1000 / 10,
              rt / 1000, rt % 1000 / 10, tps_gemm_cublaslt_version());
      fprintf(f, "# one GPU: no all-gather measured; this file holds GEMM times only (nothing from a model)\n");
      fprintf(f, "# rows = each T of --tokens and ceil(T/TP) for each TP of --tp;");
      fprintf(f, " tokens");
      for (size_t i = 0; i < o.ntokens; i++) fprintf(f, "%s%ld", i ? "," : " ", o.tokens[i]);
      fprintf(f, "; tp");
      for (size_t i = 0; i < o.ntps; i++) fprintf(f, "%s%ld", i ? "," : " ", o.tps[i]);
      fprintf(f, "\n# method: CUDA graph per row, L2 flush (%zu-byte write%s) before every replay outside the timed span, "
                 "median of %d samples (min, max), rows alternated in every round, seed %lu\n",
              (size_t)prop.l2CacheSize * 2, o.flush_write_only ? "" : ", then read back", o.samples, o.seed);
      fprintf(f, "# timer: time_us, min_us, max_us = %s\n", b.timer_text);
      if (b.fallbacks)
        fprintf(f, "# timer: %ld replays left no CUPTI record; their CUDA event times are among the samples\n", b.fallbacks);
      fprintf(f, "# tflops = 2 M N K / time; gbps = (weights %.0f bytes + 2 M K + 2 M N) / time\n", wbytes);
      if (per == 3) fprintf(f, "# native-fp8: time_us = quantization + FP8 GEMM in one graph; gemm_us and quant_us timed alone\n");
      for (size_t i = 0; i < b.nlines; i++) fprintf(f, "# %s\n", b.lines[i]);
      const int span = b.timer == TPS_TIMER_SPAN;
      fprintf(f, "#@ gpu: %s\n#@ k: %d\n#@ n: %d\n#@ path: %s\n#@ timer: %s\n", prop.name, o.k, o.n,
              tps_gemm_path_name(o.path), span ? "cupti-span" : "events");
      fprintf(f, "rows\ttime_us\tmin_us\tmax_us\ttflops\tgbps%s%s\n", per == 3 ? "\tgemm_us\tquant_us" : "",
              span ? "\tevent_us" : "");
      for (int i = 0; i < nrows; i++) {
        const tps_timing *t = &tm[i * per];
        double m = rows[i];
        double fl = 2.0 * m * o.n * o.k, by = wbytes + 2.0 * m * o.k + 2.0 * m * o.n;
        fprintf(f, "%d\t%.3f\t%.3f\t%.3f\t%.2f\t%.1f", rows[i], t->median_us, t->min_us, t->max_us,
                fl / t->median_us / 1e6, by / t->median_us / 1e3);
        if (per == 3) fprintf(f, "\t%.3f\t%.3f", tm[i * per + 1].median_us, tm[i * per + 2].median_us);
        if (span) fprintf(f, "\t%.3f", tme[i * per].median_us);
        fputc('\n', f);
      }
      if (tps_out_commit(&of, &e)) { tps_err_print(&e); tps_out_abort(&of); ret = TPS_EXIT_FAIL; }
    }
    if (ret == TPS_EXIT_OK && o.json) {
      json_t *root = json_object();
      json_object_set_new(root, "path", json_string(tps_gemm_path_name(o.path)));
      json_object_set_new(root, "gpu", json_string(prop.name));
      json_object_set_new(root, "k", json_integer(o.k));
      json_object_set_new(root, "n", json_integer(o.n));
      json_object_set_new(root, "date", json_string(date));
      json_object_set_new(root, "samples", json_integer(o.samples));
      json_object_set_new(root, "timer", json_string(b.timer == TPS_TIMER_SPAN ? "cupti-span" : "events"));
      json_t *jr = json_array();
      for (int i = 0; i < nrows; i++) {
        const tps_timing *t = &tm[i * per];
        double m = rows[i];
        json_t *r = json_object();
        json_object_set_new(r, "rows", json_integer(rows[i]));
        tps_json_set_num(r, "time_us", t->median_us);
        tps_json_set_num(r, "min_us", t->min_us);
        tps_json_set_num(r, "max_us", t->max_us);
        tps_json_set_num(r, "tflops", 2.0 * m * o.n * o.k / t->median_us / 1e6);
        tps_json_set_num(r, "gbps", (wbytes + 2.0 * m * o.k + 2.0 * m * o.n) / t->median_us / 1e3);
        if (per == 3) { tps_json_set_num(r, "gemm_us", tm[i * per + 1].median_us); tps_json_set_num(r, "quant_us", tm[i * per + 2].median_us); }
        if (b.timer == TPS_TIMER_SPAN) tps_json_set_num(r, "event_us", tme[i * per].median_us);
        json_array_append_new(jr, r);
      }
      json_object_set_new(root, "rows", jr);
      json_object_set(root, "checks", b.jchecks);
      if (tps_json_print(root)) ret = TPS_EXIT_FAIL;
    }
  } else if (o.json && ret != TPS_EXIT_USAGE) {
    json_t *root = json_object();
    json_object_set_new(root, "path", json_string(tps_gemm_path_name(o.path)));
    json_object_set_new(root, "ok", json_boolean(ret == TPS_EXIT_OK));
    json_object_set(root, "checks", b.jchecks);
    tps_json_print(root);
  }
  tps_out_abort(&of); /* no-op after a commit; otherwise removes the temporary file */
  bench_free(&b);
  free(tm); free(tme); free(rows); free(o.tokens); free(o.tps);
  cudaDeviceSynchronize();
  return ret;
}
