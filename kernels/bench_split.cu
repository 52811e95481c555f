/* bench_split.cu: `tpsplit bench split`, replicated vs token-split GEMM + all-gather on N
 * GPUs, end to end, with the brief's method; also the shared timing loop and provenance of
 * gather_bench.h.
 *
 *   replicated(T) = GEMM(T rows)                        on every rank
 *   split(T)      = GEMM(rows_r rows) + ALLGATHER       rows_r = rank r's share of
 *                   S = ceil(T/tp) rows (the last ranks fewer, see gather.h), gathered
 *                   output T * N * 2 bytes (bf16)
 *
 * Per token count, before any timing (fresh random X and W, same seed on every rank,
 * outputs poisoned with 0xFF bytes = bf16 NaN before each run):
 *   1. the gathered output equals, BITWISE, every rank's shard recomputed locally by the same
 *      GEMM plan (the gather moves bytes; nothing else is allowed);
 *   2. split vs replicated: relative Frobenius error <= 1e-2, no NaN, max |diff| reported
 *      (bf16 rounding of M-dependent tiling; the brief saw at most 0.031);
 *   3. shards whose row count runs the same kernel configuration as T rows
 *      (tps_gemm_config) are bitwise equal to the replicated rows (always so at tp 1);
 *   4. the replicated output is bitwise the same on every rank (FNV-1a hash).
 * All checks are reduced over ranks; any failure ends the bench with exit 1 and no file.
 * Timing: gather_bench.h (graph per candidate, L2 flush + device barrier untimed, max over
 * ranks per sample, median of --samples, candidates alternated).
 * Units: times us, sizes bytes. */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tpsplit.h"
#include "err.h"
#include "util.h"
#include "jsonout.h"
#include "bench.h"
#include "check.h"
#include "gemm.h"
#include "harness.h"
#include "gather.h"
#include "gather_bench.h"

/* ---------------------------------------------------------------- shared pieces */
extern "C" int tps_gb_device_count(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    fprintf(stderr, "tpsplit: no GPU can be opened: %s\n", cudaGetErrorString(e));
    return 0;
  }
  return n;
}

extern "C" int tps_gb_capture(cudaStream_t s, tps_gb_enqueue_fn enq, void *ctx, cudaGraphExec_t *exec) {
  cudaGraph_t gr;
  CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  int rc = enq(ctx, s);
  cudaError_t e = cudaStreamEndCapture(s, &gr);
  if (rc != TPS_K_OK) return rc;
  CUDA_TRY(e);
  CUDA_TRY(cudaGraphInstantiate(exec, gr, 0));
  CUDA_TRY(cudaGraphDestroy(gr));
  return TPS_K_OK;
}

extern "C" int tps_gb_time(tps_world *w, tps_gather *g, tps_harness *h, const cudaGraphExec_t *exec, int nc,
                           int nsamples, int nwarm, tps_timing *out) {
  if (nc < 1 || nc > TPS_GB_MAX_CAND || nsamples < 1 || nsamples * nc > 512) return TPS_K_ERR;
  cudaStream_t s = tps_harness_stream(h);
  double samp[512];
  for (int r = 0; r < nwarm + nsamples; r++) {
    for (int j = 0; j < nc; j++) {
      const int c = (r + j) % nc; /* alternate: round r starts with candidate r mod nc */
      TPS_TRY(tps_harness_flush(h));
      TPS_TRY(tps_gather_device_barrier(g, s));
      TPS_TRY(tps_harness_launch_timed(h, exec[c]));
      TPS_TRY(tps_gather_wait(g, s));
      double us = 0;
      TPS_TRY(tps_harness_read_timed(h, &us, NULL)); /* kernel span (CUPTI) or events */
      if (r >= nwarm) samp[c * nsamples + (r - nwarm)] = us;
    }
  }
  if (tps_world_max(w, samp, (size_t)(nc * nsamples)) != 0) return TPS_K_ERR; /* max over ranks */
  for (int c = 0; c < nc; c++) tps_timing_from_samples(samp + c * nsamples, nsamples, &out[c]);
  return TPS_K_OK;
}

extern "C" int tps_gb_prov_get(tps_gb_prov *p, tps_world *w) {
  memset(p, 0, sizeof *p);
  int dev, v;
  CUDA_TRY(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
  snprintf(p->gpu_name, sizeof p->gpu_name, "%.255s", prop.name);
  const char *sh = strncmp(prop.name, "NVIDIA ", 7) == 0 ? prop.name + 7 : prop.name;
  snprintf(p->gpu_short, sizeof p->gpu_short, "%.255s", sh);
  for (char *c = p->gpu_short; *c; c++)
    if (*c == ' ') *c = '-';
  p->sms = prop.multiProcessorCount;
  p->cc_major = prop.major;
  p->cc_minor = prop.minor;
  CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev));
  p->sm_clock_mhz = v / 1000;
  CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev));
  p->mem_clock_mhz = v / 1000;
  CUDA_TRY(cudaDeviceGetAttribute(&p->l2_bytes, cudaDevAttrL2CacheSize, dev));
  CUDA_TRY(cudaRuntimeGetVersion(&v));
  snprintf(p->cuda_runtime, sizeof p->cuda_runtime, "%d.%d", v / 1000, (v % 1000) / 10);
  CUDA_TRY(cudaDriverGetVersion(&v));
  snprintf(p->cuda_driver_api, sizeof p->cuda_driver_api, "%d.%d", v / 1000, (v % 1000) / 10);
  snprintf(p->driver, sizeof p->driver, "CUDA driver API %s", p->cuda_driver_api);
  /* "NVRM version: NVIDIA UNIX [Open Kernel Module for] x86_64  580.159.04  ...": the first
   * token of the form N.N[.N] */
  FILE *fp = fopen("/proc/driver/nvidia/version", "r");
  if (fp) {
    char line[512];
    if (fgets(line, sizeof line, fp)) {
      char *save = NULL;
      for (char *tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
        int a, b, n = 0;
        if (sscanf(tok, "%d.%d%n", &a, &b, &n) == 2 && (tok[n] == 0 || tok[n] == '.')) {
          snprintf(p->driver, sizeof p->driver, "%.63s", tok);
          break;
        }
      }
    }
    fclose(fp);
  }
  snprintf(p->nccl, sizeof p->nccl, "%s", tps_gather_nccl_version());
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(p->date_utc, sizeof p->date_utc, "%Y-%m-%d %H:%M:%S UTC", &tm);
  snprintf(p->host, sizeof p->host, "%s", tps_world_host(w));
  return TPS_K_OK;
}

/* ---------------------------------------------------------------- bench split */
typedef struct {
  tps_gemm_path path;
  int gather, tp, k, n, samples, warmup, blocks, threads, json;
  long *tokens;
  size_t ntok;
  size_t cap_bytes;
  unsigned long seed;
  const char *out;
} split_opts;

typedef struct {
  long tokens, rows;
  tps_timing rep, split;
  int used;
  double maxdiff, relfrob;
  long same_cfg_shards; /* shards checked bitwise against the replicated rows */
} split_row;

typedef struct {
  split_opts o;
  split_row *rows;
  int usage_err; /* set by rank 0 when the output file cannot be opened */
} split_job;

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double uniform(uint64_t *s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0; }
static uint16_t f2bf(float f) { /* round to nearest even */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
static double bf2d(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return (double)f;
}
static uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *c = (const unsigned char *)p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}
static const char *model_path_name(tps_gemm_path p) {
  switch (p) {
  case TPS_GEMM_W8A16:
  case TPS_GEMM_W8A16_REF: return "marlin-w8a16";
  default: return tps_gemm_path_name(p);
  }
}
static const char *backend_name(int b) { return b == TPS_GATHER_CUSTOM ? "custom" : b == TPS_GATHER_NCCL ? "nccl" : "auto"; }

typedef struct {
  tps_gemm *gm;
  tps_gather *g;
  const uint16_t *x;
  uint16_t *y, *shard, *out;
  int m, gather, k;
  size_t stride, total;
} enq_ctx;

static int enq_rep(void *p, cudaStream_t s) {
  enq_ctx *c = (enq_ctx *)p;
  return tps_gemm_run(c->gm, c->x, c->y, c->m, s);
}
static int enq_split(void *p, cudaStream_t s) {
  enq_ctx *c = (enq_ctx *)p;
  TPS_TRY(tps_gemm_run(c->gm, c->x, c->shard, c->m, s));
  return tps_gather_enqueue(c->g, c->gather, c->shard, c->out, c->stride, c->total, s, NULL);
}

static int write_table(const split_job *job, const tps_gb_prov *pv, int tp, size_t flush_bytes,
                       const char *timer, double maxdiff_all, FILE *fp) {
  const split_opts *o = &job->o;
  const char *nvls = getenv("NCCL_NVLS_ENABLE");
  fprintf(fp, "# Split vs replicated %s GEMM (K=%d -> N=%d, bf16 activations and output), measured by\n"
              "# tpsplit bench split.\n",
          tps_gemm_path_name(o->path), o->k, o->n);
  fprintf(fp, "# Hardware: %dx %s (%d SMs, CC %d.%d, SM clock max %d MHz, memory clock %d MHz, L2 %d bytes), host %s.\n",
          tp, pv->gpu_name, pv->sms, pv->cc_major, pv->cc_minor, pv->sm_clock_mhz, pv->mem_clock_mhz,
          pv->l2_bytes, pv->host);
  fprintf(fp, "# Software: driver %s, CUDA runtime %s (driver API %s), NCCL %s, cuBLASLt %zu, tpsplit %s.\n",
          pv->driver, pv->cuda_runtime, pv->cuda_driver_api, pv->nccl, tps_gemm_cublaslt_version(), PACKAGE_VERSION);
  fprintf(fp, "# Date: %s.  Command: %s\n", pv->date_utc, tps_cmdline());
  fprintf(fp, "# Launch: %s; NCCL_NVLS_ENABLE=%s (no NVLink multicast).\n",
          tps_world_is_mpi() ? "MPI, one process per GPU" : "one thread per GPU in one process",
          nvls ? nvls : "(unset)");
  fprintf(fp, "# Timing: one CUDA graph per candidate; L2 flushed (%zu bytes written) and a device-side barrier of\n"
              "# all ranks before each replay, outside the timed span; time = %s;\n"
              "# each sample = max over %d ranks; value = median of %d samples (after %d warm-up rounds);\n"
              "# candidates alternated; correctness checked before timing.\n",
          flush_bytes, timer, tp, o->samples, o->warmup);
  fprintf(fp, "# replicated_us: every rank runs the GEMM on all tokens (rows = tokens).\n"
              "# split_us: each rank runs the GEMM on its ceil(tokens/%d) rows (the last ranks fewer), then an\n"
              "# all-gather of the bf16 output (%d bytes per token) rebuilds all rows.  Gather: %s (custom one-shot\n"
              "# NVLink all-gather while the per-rank input is <= %zu bytes, else NCCL); per row below.\n",
          tp, 2 * o->n, backend_name(o->gather), o->cap_bytes);
  fprintf(fp, "# Correctness (every row, before timing): gathered rows bitwise equal to each rank's shard\n"
              "# recomputed locally; split vs replicated relative Frobenius error <= 1e-2, no NaN, max |diff| over\n"
              "# all rows %.6g; shards run by the replicated kernel configuration bitwise equal; replicated output\n"
              "# bitwise equal on every rank.\n",
          maxdiff_all);
  fprintf(fp, "# Per row: tokens gather replicated_min/median/max_us split_min/median/max_us max_abs_diff rel_frob bitwise_shards\n");
  for (size_t i = 0; i < o->ntok; i++) {
    const split_row *r = &job->rows[i];
    fprintf(fp, "#   %ld %s %.2f/%.2f/%.2f %.2f/%.2f/%.2f %.6g %.3g %ld\n", r->tokens, backend_name(r->used),
            r->rep.min_us, r->rep.median_us, r->rep.max_us, r->split.min_us, r->split.median_us, r->split.max_us,
            r->maxdiff, r->relfrob, r->same_cfg_shards);
  }
  fprintf(fp, "#@ gpu: %s\n#@ tp: %d\n#@ k: %d\n#@ n: %d\n#@ path: %s\n#@ out_bytes_per_token: %d\n"
              "#@ gather: %s\n#@ gather_cap_bytes: %zu\n",
          pv->gpu_short, tp, o->k, o->n, model_path_name(o->path), 2 * o->n, backend_name(o->gather), o->cap_bytes);
  fprintf(fp, "tokens\trows_per_rank\treplicated_us\tsplit_us\n");
  for (size_t i = 0; i < o->ntok; i++) {
    const split_row *r = &job->rows[i];
    fprintf(fp, "%ld\t%ld\t%.2f\t%.2f\n", r->tokens, r->rows, r->rep.median_us, r->split.median_us);
  }
  return ferror(fp) ? -1 : 0;
}

static int print_json(const split_job *job, const tps_gb_prov *pv, int tp) {
  const split_opts *o = &job->o;
  json_t *root = json_object(), *rows = json_array();
  json_object_set_new(root, "gpu", json_string(pv->gpu_short));
  json_object_set_new(root, "gpu_name", json_string(pv->gpu_name));
  json_object_set_new(root, "tp", json_integer(tp));
  json_object_set_new(root, "k", json_integer(o->k));
  json_object_set_new(root, "n", json_integer(o->n));
  json_object_set_new(root, "path", json_string(model_path_name(o->path)));
  json_object_set_new(root, "gemm_path", json_string(tps_gemm_path_name(o->path)));
  json_object_set_new(root, "gather", json_string(backend_name(o->gather)));
  json_object_set_new(root, "gather_cap_bytes", json_integer((json_int_t)o->cap_bytes));
  json_object_set_new(root, "samples", json_integer(o->samples));
  json_object_set_new(root, "driver", json_string(pv->driver));
  json_object_set_new(root, "nccl", json_string(pv->nccl));
  json_object_set_new(root, "date", json_string(pv->date_utc));
  for (size_t i = 0; i < o->ntok; i++) {
    const split_row *r = &job->rows[i];
    json_t *x = json_object();
    json_object_set_new(x, "tokens", json_integer(r->tokens));
    json_object_set_new(x, "rows_per_rank", json_integer(r->rows));
    json_object_set_new(x, "gather", json_string(backend_name(r->used)));
    tps_json_set_num(x, "replicated_us", r->rep.median_us);
    tps_json_set_num(x, "replicated_min_us", r->rep.min_us);
    tps_json_set_num(x, "replicated_max_us", r->rep.max_us);
    tps_json_set_num(x, "split_us", r->split.median_us);
    tps_json_set_num(x, "split_min_us", r->split.min_us);
    tps_json_set_num(x, "split_max_us", r->split.max_us);
    tps_json_set_num(x, "max_abs_diff", r->maxdiff);
    tps_json_set_num(x, "rel_frob", r->relfrob);
    json_array_append_new(rows, x);
  }
  json_object_set_new(root, "rows", rows);
  return tps_json_print(root);
}

/* Correctness of one token count on this rank; fills r and returns the number of failed
 * checks, reduced over ranks (or -1 on a CUDA error). */
static int check_tokens(tps_world *w, tps_gather *g, tps_gemm *gm, const split_opts *o, const uint16_t *x,
                        uint16_t *y, uint16_t *shard, uint16_t *out, uint16_t *expect, long T, cudaStream_t s,
                        split_row *r) {
  const int tp = tps_world_size(w), rank = tps_world_rank(w);
  const long S = (T + tp - 1) / tp, N = o->n, K = o->k;
  const size_t stride = (size_t)S * N * 2, total = (size_t)T * N * 2;
  const long mine = T - rank * S < 0 ? 0 : (T - rank * S > S ? S : T - rank * S);
  CUDA_TRY(cudaMemsetAsync(y, 0xFF, total, s));
  CUDA_TRY(cudaMemsetAsync(shard, 0xFF, stride, s));
  CUDA_TRY(cudaMemsetAsync(out, 0xFF, (size_t)tp * stride, s));
  CUDA_TRY(cudaMemsetAsync(expect, 0xFF, (size_t)tp * stride, s));
  TPS_TRY(tps_gemm_run(gm, x, y, (int)T, s));
  TPS_TRY(tps_gemm_run(gm, x + (size_t)rank * S * K, shard, (int)mine, s));
  TPS_TRY(tps_gather_enqueue(g, o->gather, shard, out, stride, total, s, &r->used));
  TPS_TRY(tps_gather_wait(g, s));
  uint64_t cfg_T = 0, cfg_q = 0;
  char buf[256];
  TPS_TRY(tps_gemm_config(gm, (int)T, buf, sizeof buf, &cfg_T));
  for (int q = 0; q < tp; q++) {
    const long rq = T - q * S < 0 ? 0 : (T - q * S > S ? S : T - q * S);
    TPS_TRY(tps_gemm_run(gm, x + (size_t)q * S * K, expect + (size_t)q * S * N, (int)rq, s));
  }
  TPS_TRY(tps_gather_wait(g, s));
  const size_t nel = (size_t)T * N;
  uint16_t *hy = (uint16_t *)malloc(total), *ho = (uint16_t *)malloc(total), *he = (uint16_t *)malloc(total);
  if (!hy || !ho || !he) { free(hy); free(ho); free(he); return -1; }
  CUDA_TRY(cudaMemcpy(hy, y, total, cudaMemcpyDeviceToHost));
  CUDA_TRY(cudaMemcpy(ho, out, total, cudaMemcpyDeviceToHost));
  CUDA_TRY(cudaMemcpy(he, expect, total, cudaMemcpyDeviceToHost));
  double gathered_bad = 0, nan = 0, bitwise_bad = 0, num = 0, den = 0, maxdiff = 0;
  for (size_t i = 0; i < nel; i++) {
    gathered_bad += ho[i] != he[i];
    const double a = bf2d(ho[i]), b = bf2d(hy[i]);
    if (isnan(a) || isnan(b)) { nan += 1; continue; }
    const double d = fabs(a - b);
    if (d > maxdiff) maxdiff = d;
    num += d * d;
    den += b * b;
  }
  long same = 0;
  for (int q = 0; q < tp; q++) {
    const long rq = T - q * S < 0 ? 0 : (T - q * S > S ? S : T - q * S);
    if (rq == 0) continue;
    TPS_TRY(tps_gemm_config(gm, (int)rq, buf, sizeof buf, &cfg_q));
    if (cfg_q != cfg_T) continue;
    same++;
    bitwise_bad += memcmp(ho + (size_t)q * S * N, hy + (size_t)q * S * N, (size_t)rq * N * 2) != 0;
  }
  /* the replicated output is the same on every rank */
  uint64_t hash = fnv1a(hy, total), hashes[TPS_GATHER_MAX_RANKS];
  free(hy);
  free(ho);
  free(he);
  if (tps_world_allgather(w, &hash, hashes, sizeof hash) != 0) return -1;
  double hash_bad = 0;
  for (int q = 0; q < tp; q++) hash_bad += hashes[q] != hash;
  const double relfrob = den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
  double v[7] = {maxdiff, relfrob, nan, gathered_bad, bitwise_bad, hash_bad, (double)same};
  if (tps_world_max(w, v, 7) != 0) return -1;
  r->maxdiff = v[0];
  r->relfrob = v[1];
  r->same_cfg_shards = (long)v[6];
  int bad = 0;
  if (rank == 0) {
    if (v[2] > 0) { fprintf(stderr, "tpsplit: bench split: tokens %ld: %.0f NaN outputs (unwritten rows?)\n", T, v[2]); bad++; }
    if (v[3] > 0) { fprintf(stderr, "tpsplit: bench split: tokens %ld: %.0f gathered elements differ from the shards\n", T, v[3]); bad++; }
    if (!(v[1] <= 1e-2)) { fprintf(stderr, "tpsplit: bench split: tokens %ld: split vs replicated relative error %.3g > 1e-2\n", T, v[1]); bad++; }
    if (v[4] > 0) { fprintf(stderr, "tpsplit: bench split: tokens %ld: shards run by the same kernel configuration differ from the replicated rows\n", T); bad++; }
    if (v[5] > 0) { fprintf(stderr, "tpsplit: bench split: tokens %ld: replicated outputs differ between ranks\n", T); bad++; }
  } else {
    bad = (v[2] > 0) + (v[3] > 0) + !(v[1] <= 1e-2) + (v[4] > 0) + (v[5] > 0);
  }
  return bad;
}

static int split_rank(tps_world *w, void *arg) {
  split_job *job = (split_job *)arg;
  const split_opts *o = &job->o;
  const int tp = tps_world_size(w), rank = tps_world_rank(w);
  tps_outfile of;
  memset(&of, 0, sizeof of);
  tps_err err;
  tps_err_clear(&err);
  /* the table goes to -o FILE, else to stdout unless --json prints JSON there */
  if (rank == 0 && (o->out || !o->json) && tps_out_open(&of, o->out ? o->out : "-", &err) != 0) {
    tps_err_print(&err);
    job->usage_err = 1;
    return TPS_K_ERR;
  }
  int rc = TPS_K_ERR;
  tps_gb_prov pv;
  tps_gemm *gm = NULL;
  tps_gather *g = NULL;
  tps_harness *h = NULL;
  cudaStream_t s = NULL;
  uint16_t *x = NULL, *y = NULL, *shard = NULL, *out = NULL, *expect = NULL;
  const long maxT = o->tokens[o->ntok - 1], Smax = (maxT + tp - 1) / tp, N = o->n, K = o->k;
  double maxdiff_all = 0;
  do {
    if (tps_gb_prov_get(&pv, w) != TPS_K_OK) break;
    /* weights and activations: same seed on every rank */
    uint64_t seed = o->seed;
    float *wh = (float *)malloc(sizeof(float) * (size_t)N * K);
    uint16_t *xh = (uint16_t *)malloc(2 * (size_t)maxT * K);
    if (!wh || !xh) { free(wh); free(xh); break; }
    for (size_t i = 0; i < (size_t)N * K; i++) wh[i] = (float)(0.05 * uniform(&seed));
    for (size_t i = 0; i < (size_t)maxT * K; i++) xh[i] = f2bf((float)uniform(&seed));
    int e = tps_gemm_create(&gm, o->path, (int)N, (int)K, (int)maxT, wh);
    free(wh);
    if (e != TPS_K_OK) { free(xh); break; }
    if (cudaMalloc((void **)&x, 2 * (size_t)maxT * K) != cudaSuccess ||
        cudaMemcpy(x, xh, 2 * (size_t)maxT * K, cudaMemcpyHostToDevice) != cudaSuccess) {
      fprintf(stderr, "tpsplit: rank %d: cannot allocate or upload the activations\n", rank);
      free(xh);
      break;
    }
    free(xh);
    if (cudaMalloc((void **)&y, 2 * (size_t)maxT * N) != cudaSuccess ||
        cudaMalloc((void **)&shard, 2 * (size_t)Smax * N) != cudaSuccess ||
        cudaMalloc((void **)&out, 2 * (size_t)tp * Smax * N) != cudaSuccess ||
        cudaMalloc((void **)&expect, 2 * (size_t)tp * Smax * N) != cudaSuccess) {
      fprintf(stderr, "tpsplit: rank %d: cannot allocate the outputs\n", rank);
      break;
    }
    tps_gather_opts go;
    memset(&go, 0, sizeof go);
    go.cap_bytes = o->cap_bytes;
    go.blocks = o->blocks;
    go.threads = o->threads;
    go.want_custom = 1;
    if (tps_gather_create(&g, w, &go) != TPS_K_OK) break;
    if (o->gather == TPS_GATHER_CUSTOM && !tps_gather_has_custom(g)) {
      if (rank == 0) fprintf(stderr, "tpsplit: bench split: --gather custom: the GPUs cannot all reach each other (peer access)\n");
      break;
    }
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) break;
    if (tps_harness_create(&h, s) != TPS_K_OK) break;
    size_t t;
    for (t = 0; t < o->ntok; t++) {
      const long T = o->tokens[t], S = (T + tp - 1) / tp;
      split_row row, *r = &row; /* rank 0 copies it into job->rows (shared between threads) */
      memset(&row, 0, sizeof row);
      r->tokens = T;
      r->rows = S;
      if (rank == 0) fprintf(stderr, "tpsplit: bench split: tokens %ld (%zu/%zu): checking\n", T, t + 1, o->ntok);
      int bad = check_tokens(w, g, gm, o, x, y, shard, out, expect, T, s, r);
      if (bad != 0) break;
      if (r->maxdiff > maxdiff_all) maxdiff_all = r->maxdiff;
      const long mine = T - rank * S < 0 ? 0 : (T - rank * S > S ? S : T - rank * S);
      enq_ctx rep = {gm, g, x, y, NULL, NULL, (int)T, o->gather, (int)K, 0, 0};
      enq_ctx spl = {gm, g, x + (size_t)rank * S * K, NULL, shard, out, (int)mine, o->gather, (int)K,
                     (size_t)S * N * 2, (size_t)T * N * 2};
      cudaGraphExec_t ex[2] = {NULL, NULL};
      if (tps_gb_capture(s, enq_rep, &rep, &ex[0]) != TPS_K_OK) break;
      if (tps_gb_capture(s, enq_split, &spl, &ex[1]) != TPS_K_OK) break;
      if (rank == 0)
        fprintf(stderr, "tpsplit: bench split: tokens %ld (%zu/%zu): timing replicated and split (%s), %d samples each\n",
                T, t + 1, o->ntok, backend_name(r->used), o->samples);
      tps_timing tim[2];
      e = tps_gb_time(w, g, h, ex, 2, o->samples, o->warmup, tim);
      cudaGraphExecDestroy(ex[0]);
      cudaGraphExecDestroy(ex[1]);
      if (e != TPS_K_OK) break;
      r->rep = tim[0];
      r->split = tim[1];
      if (rank == 0)
        fprintf(stderr, "tpsplit: bench split: tokens %ld (%zu/%zu): replicated %.2f us, split %.2f us (%s, %ld rows per rank), max |diff| %.3g\n",
                T, t + 1, o->ntok, r->rep.median_us, r->split.median_us, backend_name(r->used), S, r->maxdiff);
      if (rank == 0) job->rows[t] = row;
    }
    if (t < o->ntok) {
      if (rank == 0) fprintf(stderr, "tpsplit: bench split: stopped at tokens %ld: no table written\n", o->tokens[t]);
      rc = TPS_K_ERR;
      break;
    }
    rc = TPS_K_OK;
    if (rank == 0) {
      if (of.fp && (write_table(job, &pv, tp, tps_harness_flush_bytes(h), tps_harness_timer_text(h), maxdiff_all, of.fp) != 0 ||
                    tps_out_commit(&of, &err) != 0)) {
        if (err.set) tps_err_print(&err);
        else fprintf(stderr, "tpsplit: bench split: write error\n");
        rc = TPS_K_ERR;
      }
      if (rc == TPS_K_OK && o->json && print_json(job, &pv, tp) != 0) rc = TPS_K_ERR;
    }
  } while (0);
  if (rank == 0) tps_out_abort(&of);
  if (h) tps_harness_destroy(h);
  if (s) cudaStreamDestroy(s);
  tps_gather_destroy(g, rc != TPS_K_OK);
  if (gm) tps_gemm_destroy(gm);
  cudaFree(x);
  cudaFree(y);
  cudaFree(shard);
  cudaFree(out);
  cudaFree(expect);
  return rc;
}

static void split_usage(FILE *fp) {
  fputs("Usage: tpsplit bench split --path P [--gather nccl|custom|auto] [--tp N] [--tokens LIST]\n"
        "                           [--k K] [--n N] [--samples S] [--warmup W] [--cap-bytes B]\n"
        "                           [--blocks B] [--threads T] [--seed S] [-o FILE] [--json]\n"
        "Measure replicated vs token-split GEMM + all-gather on N GPUs, end to end, and write a\n"
        "split table (the format of data/h20_tp8_fused_wqa_wkv.tsv, '#' provenance, '#@' metadata).\n"
        "Correctness is checked for every token count before timing (exit 1 and no table if not).\n\n"
        "  --path P        GEMM path: dense-bf16, native-fp8, w8a16, w8a16-ref (required)\n"
        "  --gather G      nccl, custom (one-shot NVLink, per-rank input <= cap) or auto (custom\n"
        "                  under the cap, NCCL above; default)\n"
        "  --tp N          ranks = GPUs (default 1).  Without MPI: one thread per GPU; with a build\n"
        "                  --with-mpi: `mpirun -np N tpsplit bench split --tp N ...`\n"
        "  --tokens LIST   token counts: 6,12,48 or A..B (powers of two) or A..B:S\n"
        "                  (default 6,12,24,48,96,384,1024,2048,4096,8192,16384, the brief's)\n"
        "  --k K, --n N    GEMM shape (default 5120 and 1792, fused_wqa_wkv; multiples of 64)\n"
        "  --samples S     samples per candidate and token count (default 50, at most 200)\n"
        "  --warmup W      untimed rounds first (default 5)\n"
        "  --cap-bytes B   custom gather per-rank input cap (default 2097152 = 2 MiB)\n"
        "  --blocks B, --threads T   custom gather kernel launch (default 32 x 512)\n"
        "  --seed S        random inputs (default 1; the same on every rank)\n"
        "  -o FILE         write the table to FILE (default stdout; written only when complete)\n"
        "  --json          print the results as JSON on stdout (the table then only with -o)\n\n"
        "NCCL_NVLS_ENABLE=0 is set unless already set (NVLink multicast stays off).\n"
        "Exit status: 0 ok, 1 a GPU, NCCL or correctness failure, 2 usage error.\n",
        fp);
}

extern "C" int tps_bench_split_main(int argc, char **argv) {
  static const struct option lo[] = {
      {"path", required_argument, 0, 'p'},    {"gather", required_argument, 0, 'g'},
      {"tp", required_argument, 0, 't'},      {"tokens", required_argument, 0, 'T'},
      {"k", required_argument, 0, 'k'},       {"n", required_argument, 0, 'n'},
      {"samples", required_argument, 0, 's'}, {"warmup", required_argument, 0, 'w'},
      {"cap-bytes", required_argument, 0, 'c'}, {"blocks", required_argument, 0, 'b'},
      {"threads", required_argument, 0, 'r'}, {"seed", required_argument, 0, 'S'},
      {"output", required_argument, 0, 'o'},  {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},          {"version", no_argument, 0, 'V'},
      {0, 0, 0, 0}};
  split_job job;
  memset(&job, 0, sizeof job);
  split_opts *o = &job.o;
  o->gather = TPS_GATHER_AUTO;
  o->tp = 1;
  o->k = 5120;
  o->n = 1792;
  o->samples = 50;
  o->warmup = 5;
  o->cap_bytes = (size_t)2 << 20;
  o->seed = 1;
  int have_path = 0;
  const char *tokens = "6,12,24,48,96,384,1024,2048,4096,8192,16384";
  optind = 0;
  opterr = 0;
  int c;
  long v;
  while ((c = getopt_long(argc, argv, ":o:h", lo, NULL)) != -1) {
    switch (c) {
    case 'p':
      if (tps_gemm_path_parse(optarg, &o->path) != 0) { tps_die_msg("bench split: unknown --path '%s' (dense-bf16, native-fp8, w8a16, w8a16-ref)", optarg); return TPS_EXIT_USAGE; }
      have_path = 1;
      break;
    case 'g':
      if (!strcmp(optarg, "nccl")) o->gather = TPS_GATHER_NCCL;
      else if (!strcmp(optarg, "custom")) o->gather = TPS_GATHER_CUSTOM;
      else if (!strcmp(optarg, "auto")) o->gather = TPS_GATHER_AUTO;
      else { tps_die_msg("bench split: --gather '%s': nccl, custom or auto", optarg); return TPS_EXIT_USAGE; }
      break;
    case 't':
      if (tps_parse_long(optarg, &v) || v < 1 || v > TPS_GATHER_MAX_RANKS) { tps_die_msg("bench split: --tp '%s': 1 to %d", optarg, TPS_GATHER_MAX_RANKS); return TPS_EXIT_USAGE; }
      o->tp = (int)v;
      break;
    case 'T': tokens = optarg; break;
    case 'k':
    case 'n':
      if (tps_parse_long(optarg, &v) || v < 64 || v % 64 || v > 65536) { tps_die_msg("bench split: --%c '%s': a multiple of 64 (64..65536)", c, optarg); return TPS_EXIT_USAGE; }
      if (c == 'k') o->k = (int)v; else o->n = (int)v;
      break;
    case 's':
      if (tps_parse_long(optarg, &v) || v < 1 || v > 200) { tps_die_msg("bench split: --samples '%s': 1 to 200", optarg); return TPS_EXIT_USAGE; }
      o->samples = (int)v;
      break;
    case 'w':
      if (tps_parse_long(optarg, &v) || v < 0 || v > 1000) { tps_die_msg("bench split: --warmup '%s': 0 to 1000", optarg); return TPS_EXIT_USAGE; }
      o->warmup = (int)v;
      break;
    case 'c':
      if (tps_parse_long(optarg, &v) || v < 16 || v % 16 || v > (1L << 30)) { tps_die_msg("bench split: --cap-bytes '%s': a multiple of 16, 16 to 2^30", optarg); return TPS_EXIT_USAGE; }
      o->cap_bytes = (size_t)v;
      break;
    case 'b':
      if (tps_parse_long(optarg, &v) || v < 1 || v > TPS_GATHER_MAX_BLOCKS) { tps_die_msg("bench split: --blocks '%s': 1 to %d", optarg, TPS_GATHER_MAX_BLOCKS); return TPS_EXIT_USAGE; }
      o->blocks = (int)v;
      break;
    case 'r':
      if (tps_parse_long(optarg, &v) || v < 32 || v > 1024 || v % 32) { tps_die_msg("bench split: --threads '%s': a multiple of 32, 32 to 1024", optarg); return TPS_EXIT_USAGE; }
      o->threads = (int)v;
      break;
    case 'S':
      if (tps_parse_long(optarg, &v) || v < 0) { tps_die_msg("bench split: --seed '%s': a number >= 0", optarg); return TPS_EXIT_USAGE; }
      o->seed = (unsigned long)v;
      break;
    case 'o': o->out = optarg; break;
    case 'j': o->json = 1; break;
    case 'h': split_usage(stdout); return TPS_EXIT_OK;
    case 'V': puts("tpsplit bench split " PACKAGE_VERSION); return TPS_EXIT_OK;
    case ':': tps_die_msg("bench split: option '%s' needs a value", argv[optind - 1]); return TPS_EXIT_USAGE;
    default: tps_die_msg("bench split: bad option '%s' (see --help)", argv[optind - 1]); return TPS_EXIT_USAGE;
    }
  }
  if (optind < argc) { tps_die_msg("bench split: unexpected argument '%s'", argv[optind]); return TPS_EXIT_USAGE; }
  if (!have_path) { tps_die_msg("bench split: --path is required (dense-bf16, native-fp8, w8a16, w8a16-ref)"); return TPS_EXIT_USAGE; }
  tps_err err;
  tps_err_clear(&err);
  if (tps_parse_tokens(tokens, &o->tokens, &o->ntok, &err) != 0) { tps_err_print(&err); return TPS_EXIT_USAGE; }
  if (o->ntok == 0 || o->tokens[0] < 1 || o->tokens[o->ntok - 1] > 1048576) {
    tps_die_msg("bench split: --tokens '%s': token counts from 1 to 1048576", tokens);
    free(o->tokens);
    return TPS_EXIT_USAGE;
  }
  if (o->gather == TPS_GATHER_CUSTOM) {
    for (size_t i = 0; i < o->ntok; i++) {
      const size_t stride = (size_t)((o->tokens[i] + o->tp - 1) / o->tp) * o->n * 2;
      if (stride > o->cap_bytes) {
        tps_die_msg("bench split: --gather custom: %ld tokens at tp %d put %zu bytes on each rank, over the cap of %zu (use auto)",
                    o->tokens[i], o->tp, stride, o->cap_bytes);
        free(o->tokens);
        return TPS_EXIT_USAGE;
      }
    }
  }
  if (!tps_world_is_mpi()) {
    const int ndev = tps_gb_device_count();
    if (ndev < 1) { free(o->tokens); return TPS_EXIT_FAIL; }
    if (ndev < o->tp) {
      tps_die_msg("bench split: --tp %d needs %d GPUs, this machine shows %d", o->tp, o->tp, ndev);
      free(o->tokens);
      return TPS_EXIT_USAGE;
    }
  }
  job.rows = (split_row *)calloc(o->ntok, sizeof(split_row));
  if (!job.rows) { free(o->tokens); return TPS_EXIT_FAIL; }
  const int rc = tps_world_run(o->tp, split_rank, &job);
  free(job.rows);
  free(o->tokens);
  if (job.usage_err) return TPS_EXIT_USAGE;
  return rc == TPS_K_OK ? TPS_EXIT_OK : TPS_EXIT_FAIL;
}
