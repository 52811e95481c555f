/* bench_allgather.cu: `tpsplit bench allgather`, the all-gather alone over N GPUs, written in
 * the layout of nccl-tests' all_gather_perf (current version: redop `none`, root `-1`), so
 * that src/ncclt.c reads our rows and nccl-tests logs alike and users can diff the two.
 *
 *   size  = bytes of the whole gathered buffer = count * 2 * nranks (bfloat16 elements)
 *   count = elements per rank; a requested size is rounded down so that each rank's part
 *           is a multiple of 16 bytes (as nccl-tests does), sizes that round to 0 are skipped
 *   time  = median over --samples samples (the brief's method, gather_bench.h: graph per
 *           operation, L2 flush and device barrier untimed, each sample the max over ranks),
 *           NOT nccl-tests' mean over iterations; out-of-place and in-place (sendbuff =
 *           recvbuff + rank * count) are timed as two alternated candidates
 *   algbw = size / time / 1e3 (GB/s, time in us);  busbw = algbw * (n-1)/n
 *   #wrong = elements of the gathered buffer that differ from the expected pattern, summed
 *           over ranks (checked once per size and mode, before timing)
 * Units: bytes, us, GB/s (1e9 B/s). */
#include "config.h"
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tpsplit.h"
#include "err.h"
#include "util.h"
#include "jsonout.h"
#include "bench.h"
#include "check.h"
#include "harness.h"
#include "gather.h"
#include "gather_bench.h"

typedef struct {
  int tp, gather, samples, warmup, blocks, threads, json;
  size_t cap_bytes;
  long *sizes;
  size_t nsizes;
  const char *out;
} ag_opts;

typedef struct {
  size_t size, count;
  tps_timing oop, ip;
  long wrong_oop, wrong_ip;
  int used;
} ag_row;

typedef struct {
  ag_opts o;
  ag_row *rows;
  int usage_err;
} ag_job;

typedef struct {
  tps_gather *g;
  int gather;
  const void *send;
  void *recv;
  size_t stride, total;
} ag_ctx;

static int enq_ag(void *p, cudaStream_t s) {
  ag_ctx *c = (ag_ctx *)p;
  return tps_gather_enqueue(c->g, c->gather, c->send, c->recv, c->stride, c->total, s, NULL);
}

/* The value rank r puts at element i of its part: never NaN, different per rank and index. */
static uint16_t pattern(int r, size_t i) { return (uint16_t)(((unsigned)r * 7919u + (unsigned)(i * 31u)) & 0x3F7Fu); }

static int fill_and_check(tps_world *w, ag_ctx *c, cudaStream_t s, uint16_t *host, int inplace, long *wrong) {
  const int n = tps_world_size(w), me = tps_world_rank(w);
  const size_t cnt = c->stride / 2;
  for (size_t i = 0; i < cnt; i++) host[i] = pattern(me, i);
  CUDA_TRY(cudaMemsetAsync(c->recv, 0xFF, c->total, s));
  void *src = inplace ? (char *)c->recv + (size_t)me * c->stride : (void *)c->send;
  CUDA_TRY(cudaMemcpyAsync(src, host, c->stride, cudaMemcpyHostToDevice, s));
  TPS_TRY(enq_ag(c, s));
  TPS_TRY(tps_gather_wait(c->g, s));
  CUDA_TRY(cudaMemcpy(host, c->recv, c->total, cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int r = 0; r < n; r++)
    for (size_t i = 0; i < cnt; i++) bad += host[(size_t)r * cnt + i] != pattern(r, i);
  long all[TPS_GATHER_MAX_RANKS];
  if (tps_world_allgather(w, &bad, all, sizeof bad) != 0) return TPS_K_ERR;
  *wrong = 0;
  for (int r = 0; r < n; r++) *wrong += all[r];
  return TPS_K_OK;
}

static void fmt_time(char *b, size_t n, double us) { /* nccl-tests getFloatStr, width 7 */
  if (us < 1e4) snprintf(b, n, "%7.2f", us);
  else if (us < 1e5) snprintf(b, n, "%7.1f", us);
  else if (us < 1e7) snprintf(b, n, "%7.0f", us);
  else snprintf(b, n, "%7.1e", us);
}

static int write_log(const ag_job *job, const tps_gb_prov *pv, int n, const char (*busids)[32], const char *timer,
                     FILE *fp) {
  const ag_opts *o = &job->o;
  fprintf(fp, "# tpsplit bench allgather %s (nccl-tests all_gather_perf layout; NCCL %s)\n", PACKAGE_VERSION, pv->nccl);
  fprintf(fp, "# Collective test starting: all_gather_perf\n");
  fprintf(fp, "# nThread %d nGpus 1 minBytes %ld maxBytes %ld step: 2(factor) warmup iters: %d iters: %d agg iters: 1 validation: 1 graph: 1\n",
          tps_world_is_mpi() ? 1 : n, o->sizes[0], o->sizes[o->nsizes - 1], o->warmup, o->samples);
  fprintf(fp, "# Gather: %s (custom one-shot NVLink while the per-rank input is <= %zu bytes).  time = MEDIAN of %d\n"
              "# samples (graph per op, L2 flush %s and device barrier untimed, each sample the max over ranks),\n"
              "# not nccl-tests' mean.  Date: %s.  Driver %s, CUDA runtime %s.  Command: %s\n",
          o->gather == TPS_GATHER_CUSTOM ? "custom" : o->gather == TPS_GATHER_NCCL ? "nccl" : "auto", o->cap_bytes,
          o->samples, "(2x L2)", pv->date_utc, pv->driver, pv->cuda_runtime, tps_cmdline());
  fprintf(fp, "# Timer: %s\n", timer);
  fprintf(fp, "#\n# Using devices\n");
  for (int r = 0; r < n; r++)
    fprintf(fp, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s\n", r, (int)getpid(), pv->host,
            tps_world_is_mpi() ? 0 : r, busids[r], pv->gpu_name);
  fprintf(fp, "#\n");
  fprintf(fp, "#                                                              out-of-place                       in-place          \n");
  fprintf(fp, "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n");
  fprintf(fp, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n");
  double busbw_sum = 0;
  for (size_t i = 0; i < o->nsizes; i++) {
    const ag_row *r = &job->rows[i];
    if (!r->size) continue;
    char t1[32], t2[32];
    fmt_time(t1, sizeof t1, r->oop.median_us);
    fmt_time(t2, sizeof t2, r->ip.median_us);
    const double a1 = (double)r->size / r->oop.median_us / 1e3, a2 = (double)r->size / r->ip.median_us / 1e3;
    const double f = (double)(n - 1) / n;
    busbw_sum += a1 * f;
    fprintf(fp, "%12zu  %12zu  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %6ld  %7s  %6.2f  %6.2f  %6ld\n", r->size, r->count,
            "bfloat16", "none", -1, t1, a1, a1 * f, r->wrong_oop, t2, a2, a2 * f, r->wrong_ip);
  }
  fprintf(fp, "# Out of bounds values : 0 OK\n");
  fprintf(fp, "# Avg bus bandwidth    : %g \n#\n", o->nsizes ? busbw_sum / (double)o->nsizes : 0.0);
  fprintf(fp, "# Collective test concluded: all_gather_perf\n");
  return ferror(fp) ? -1 : 0;
}

/* One placement's columns (out-of-place "oop" or in-place "ip"), nccl-tests' -J names:
 * PRE_time_us, PRE_min_us, PRE_max_us, PRE_algbw_gbps, PRE_busbw_gbps (f = (n-1)/n), PRE_wrong. */
static void json_placement(json_t *x, const char *pre, const tps_timing *t, size_t size, double f, long wrong) {
  char key[32];
  const double algbw = (double)size / t->median_us / 1e3;
  snprintf(key, sizeof key, "%s_time_us", pre);
  tps_json_set_num(x, key, t->median_us);
  snprintf(key, sizeof key, "%s_min_us", pre);
  tps_json_set_num(x, key, t->min_us);
  snprintf(key, sizeof key, "%s_max_us", pre);
  tps_json_set_num(x, key, t->max_us);
  snprintf(key, sizeof key, "%s_algbw_gbps", pre);
  tps_json_set_num(x, key, algbw);
  snprintf(key, sizeof key, "%s_busbw_gbps", pre);
  tps_json_set_num(x, key, algbw * f);
  snprintf(key, sizeof key, "%s_wrong", pre);
  json_object_set_new(x, key, json_integer(wrong));
}

static int print_json(const ag_job *job, const tps_gb_prov *pv, int n) {
  const ag_opts *o = &job->o;
  json_t *root = json_object(), *rows = json_array();
  json_object_set_new(root, "gpu_name", json_string(pv->gpu_name));
  json_object_set_new(root, "ranks", json_integer(n));
  json_object_set_new(root, "gather", json_string(o->gather == TPS_GATHER_CUSTOM ? "custom" : o->gather == TPS_GATHER_NCCL ? "nccl" : "auto"));
  json_object_set_new(root, "samples", json_integer(o->samples));
  json_object_set_new(root, "nccl", json_string(pv->nccl));
  json_object_set_new(root, "driver", json_string(pv->driver));
  json_object_set_new(root, "date", json_string(pv->date_utc));
  const double f = (double)(n - 1) / n;
  for (size_t i = 0; i < o->nsizes; i++) {
    const ag_row *r = &job->rows[i];
    if (!r->size) continue;
    json_t *x = json_object();
    json_object_set_new(x, "size_bytes", json_integer((json_int_t)r->size));
    json_object_set_new(x, "count", json_integer((json_int_t)r->count));
    json_object_set_new(x, "type", json_string("bfloat16"));
    json_object_set_new(x, "gather", json_string(r->used == TPS_GATHER_CUSTOM ? "custom" : "nccl"));
    json_placement(x, "oop", &r->oop, r->size, f, r->wrong_oop);
    json_placement(x, "ip", &r->ip, r->size, f, r->wrong_ip);
    json_array_append_new(rows, x);
  }
  json_object_set_new(root, "rows", rows);
  return tps_json_print(root);
}

static int ag_rank(tps_world *w, void *arg) {
  ag_job *job = (ag_job *)arg;
  const ag_opts *o = &job->o;
  const int n = tps_world_size(w), me = tps_world_rank(w);
  tps_outfile of;
  memset(&of, 0, sizeof of);
  tps_err err;
  tps_err_clear(&err);
  /* the nccl-tests text goes to -o FILE, else to stdout unless --json prints JSON there */
  if (me == 0 && (o->out || !o->json) && tps_out_open(&of, o->out ? o->out : "-", &err) != 0) {
    tps_err_print(&err);
    job->usage_err = 1;
    return TPS_K_ERR;
  }
  int rc = TPS_K_ERR;
  tps_gather *g = NULL;
  tps_harness *h = NULL;
  cudaStream_t s = NULL;
  void *send = NULL, *recv = NULL;
  uint16_t *host = NULL;
  const size_t maxsz = (size_t)o->sizes[o->nsizes - 1];
  do {
    tps_gb_prov pv;
    if (tps_gb_prov_get(&pv, w) != TPS_K_OK) break;
    char bus[32] = "", (*busids)[32] = (char (*)[32])calloc((size_t)n, 32);
    int dev;
    if (!busids || cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess ||
        tps_world_allgather(w, bus, busids, 32) != 0) { free(busids); break; }
    tps_gather_opts go;
    memset(&go, 0, sizeof go);
    go.cap_bytes = o->cap_bytes;
    go.blocks = o->blocks;
    go.threads = o->threads;
    go.want_custom = 1;
    if (tps_gather_create(&g, w, &go) != TPS_K_OK) { free(busids); break; }
    if (cudaMalloc(&send, maxsz / n + 16) != cudaSuccess || cudaMalloc(&recv, maxsz + 16) != cudaSuccess ||
        !(host = (uint16_t *)malloc(maxsz + 16)) || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
        tps_harness_create(&h, s) != TPS_K_OK) {
      fprintf(stderr, "tpsplit: rank %d: bench allgather: cannot allocate\n", me);
      free(busids);
      break;
    }
    size_t i;
    for (i = 0; i < o->nsizes; i++) {
      ag_row row;
      memset(&row, 0, sizeof row);
      const size_t per = (size_t)o->sizes[i] / n / 16 * 16; /* bytes per rank, 16-byte aligned */
      if (per == 0) continue;
      row.size = per * n;
      row.count = per / 2;
      const int used = tps_gather_resolve(g, o->gather, per);
      if (used < 0) {
        if (me == 0) fprintf(stderr, "tpsplit: bench allgather: %zu bytes per rank: custom cannot take it (cap %zu)\n", per, o->cap_bytes);
        break;
      }
      row.used = used;
      ag_ctx oop = {g, o->gather, send, recv, per, row.size};
      ag_ctx ip = {g, o->gather, (char *)recv + (size_t)me * per, recv, per, row.size};
      if (fill_and_check(w, &oop, s, host, 0, &row.wrong_oop) != TPS_K_OK) break;
      if (fill_and_check(w, &ip, s, host, 1, &row.wrong_ip) != TPS_K_OK) break;
      cudaGraphExec_t ex[2] = {NULL, NULL};
      if (tps_gb_capture(s, enq_ag, &oop, &ex[0]) != TPS_K_OK || tps_gb_capture(s, enq_ag, &ip, &ex[1]) != TPS_K_OK) break;
      tps_timing tim[2];
      const int e = tps_gb_time(w, g, h, ex, 2, o->samples, o->warmup, tim);
      cudaGraphExecDestroy(ex[0]);
      cudaGraphExecDestroy(ex[1]);
      if (e != TPS_K_OK) break;
      row.oop = tim[0];
      row.ip = tim[1];
      if (me == 0) {
        fprintf(stderr, "tpsplit: bench allgather: %zu bytes (%zu/%zu), %s: %.2f us out-of-place, %.2f us in-place, %d samples, %ld+%ld wrong\n",
                row.size, i + 1, o->nsizes, used == TPS_GATHER_CUSTOM ? "custom" : "nccl", row.oop.median_us,
                row.ip.median_us, o->samples, row.wrong_oop, row.wrong_ip);
        job->rows[i] = row;
      }
      if (row.wrong_oop || row.wrong_ip) {
        if (me == 0) fprintf(stderr, "tpsplit: bench allgather: %zu bytes: wrong elements gathered\n", row.size);
        break;
      }
    }
    if (i < o->nsizes) { free(busids); break; }
    rc = TPS_K_OK;
    if (me == 0 && of.fp && (write_log(job, &pv, n, busids, tps_harness_timer_text(h), of.fp) != 0 || tps_out_commit(&of, &err) != 0)) {
      if (err.set) tps_err_print(&err);
      else fprintf(stderr, "tpsplit: bench allgather: write error\n");
      rc = TPS_K_ERR;
    }
    if (me == 0 && rc == TPS_K_OK && o->json && print_json(job, &pv, n) != 0) rc = TPS_K_ERR;
    free(busids);
  } while (0);
  if (me == 0) tps_out_abort(&of);
  if (h) tps_harness_destroy(h);
  if (s) cudaStreamDestroy(s);
  tps_gather_destroy(g, rc != TPS_K_OK);
  cudaFree(send);
  cudaFree(recv);
  free(host);
  return rc;
}

/* "64", "4K", "2M", "1G" (binary, as nccl-tests' -b/-e). */
static int parse_size(const char *s, long *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || v < 0) return -1;
  long mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1L << 10, end++;
  else if (*end == 'M' || *end == 'm') mul = 1L << 20, end++;
  else if (*end == 'G' || *end == 'g') mul = 1L << 30, end++;
  if (*end) return -1;
  *out = (long)(v * (double)mul);
  return 0;
}

static void ag_usage(FILE *fp) {
  fputs("Usage: tpsplit bench allgather [--tp N] [--bytes A..B | --bytes S1,S2,...] [--gather nccl|custom|auto]\n"
        "                               [--samples S] [--warmup W] [--cap-bytes B] [-o FILE] [--json]\n"
        "Time the all-gather alone over N GPUs and write the rows in the nccl-tests all_gather_perf\n"
        "layout (size count type redop root, then time algbw busbw #wrong out-of-place and in-place),\n"
        "which `tpsplit inspect` and `tpsplit fit` read like nccl-tests logs.\n\n"
        "  --tp N         ranks = GPUs (default 1; with MPI: mpirun -np N)\n"
        "  --bytes A..B   sizes of the whole gathered buffer, powers of two from A to B; K/M/G are\n"
        "                 binary (default 1K..64M); or a comma list\n"
        "  --gather G     nccl (default), custom or auto\n"
        "  --samples S    samples per size (median; default 50, at most 200)\n"
        "  --warmup W     untimed rounds first (default 5)\n"
        "  --cap-bytes B  custom gather per-rank input cap (default 2097152)\n"
        "  --blocks B, --threads T   custom gather kernel launch\n"
        "  -o FILE        write to FILE (default stdout; written only when complete)\n"
        "  --json         print the rows as JSON on stdout (the nccl-tests text then only with -o)\n\n"
        "Exit status: 0 ok, 1 a GPU, NCCL or correctness failure, 2 usage error.\n",
        fp);
}

extern "C" int tps_bench_allgather_main(int argc, char **argv) {
  static const struct option lo[] = {
      {"tp", required_argument, 0, 't'},       {"bytes", required_argument, 0, 'B'},
      {"gather", required_argument, 0, 'g'},   {"samples", required_argument, 0, 's'},
      {"warmup", required_argument, 0, 'w'},   {"cap-bytes", required_argument, 0, 'c'},
      {"blocks", required_argument, 0, 'b'},   {"threads", required_argument, 0, 'r'},
      {"output", required_argument, 0, 'o'},   {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},        {0, 0, 0, 0}};
  ag_job job;
  memset(&job, 0, sizeof job);
  ag_opts *o = &job.o;
  o->tp = 1;
  o->gather = TPS_GATHER_NCCL;
  o->samples = 50;
  o->warmup = 5;
  o->cap_bytes = (size_t)2 << 20;
  const char *bytes = "1K..64M";
  long v;
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":o:h", lo, NULL)) != -1) {
    switch (c) {
    case 't':
      if (tps_parse_long(optarg, &v) || v < 1 || v > TPS_GATHER_MAX_RANKS) { tps_die_msg("bench allgather: --tp '%s': 1 to %d", optarg, TPS_GATHER_MAX_RANKS); return TPS_EXIT_USAGE; }
      o->tp = (int)v;
      break;
    case 'B': bytes = optarg; break;
    case 'g':
      if (!strcmp(optarg, "nccl")) o->gather = TPS_GATHER_NCCL;
      else if (!strcmp(optarg, "custom")) o->gather = TPS_GATHER_CUSTOM;
      else if (!strcmp(optarg, "auto")) o->gather = TPS_GATHER_AUTO;
      else { tps_die_msg("bench allgather: --gather '%s': nccl, custom or auto", optarg); return TPS_EXIT_USAGE; }
      break;
    case 's':
      if (tps_parse_long(optarg, &v) || v < 1 || v > 200) { tps_die_msg("bench allgather: --samples '%s': 1 to 200", optarg); return TPS_EXIT_USAGE; }
      o->samples = (int)v;
      break;
    case 'w':
      if (tps_parse_long(optarg, &v) || v < 0 || v > 1000) { tps_die_msg("bench allgather: --warmup '%s': 0 to 1000", optarg); return TPS_EXIT_USAGE; }
      o->warmup = (int)v;
      break;
    case 'c':
      if (tps_parse_long(optarg, &v) || v < 16 || v % 16 || v > (1L << 30)) { tps_die_msg("bench allgather: --cap-bytes '%s': a multiple of 16, 16 to 2^30", optarg); return TPS_EXIT_USAGE; }
      o->cap_bytes = (size_t)v;
      break;
    case 'b':
      if (tps_parse_long(optarg, &v) || v < 1 || v > TPS_GATHER_MAX_BLOCKS) { tps_die_msg("bench allgather: --blocks '%s': 1 to %d", optarg, TPS_GATHER_MAX_BLOCKS); return TPS_EXIT_USAGE; }
      o->blocks = (int)v;
      break;
    case 'r':
      if (tps_parse_long(optarg, &v) || v < 32 || v > 1024 || v % 32) { tps_die_msg("bench allgather: --threads '%s': a multiple of 32, 32 to 1024", optarg); return TPS_EXIT_USAGE; }
      o->threads = (int)v;
      break;
    case 'o': o->out = optarg; break;
    case 'j': o->json = 1; break;
    case 'h': ag_usage(stdout); return TPS_EXIT_OK;
    case 'V': puts("tpsplit bench allgather " PACKAGE_VERSION); return TPS_EXIT_OK;
    case ':': tps_die_msg("bench allgather: option '%s' needs a value", argv[optind - 1]); return TPS_EXIT_USAGE;
    default: tps_die_msg("bench allgather: bad option '%s' (see --help)", argv[optind - 1]); return TPS_EXIT_USAGE;
    }
  }
  if (optind < argc) { tps_die_msg("bench allgather: unexpected argument '%s'", argv[optind]); return TPS_EXIT_USAGE; }
  /* sizes: A..B (powers of two) or a comma list, with K/M/G suffixes */
  const char *dots = strstr(bytes, "..");
  long lo_b, hi_b;
  if (dots) {
    char a[64];
    const size_t la = (size_t)(dots - bytes);
    if (la == 0 || la >= sizeof a) { tps_die_msg("bench allgather: --bytes '%s': A..B", bytes); return TPS_EXIT_USAGE; }
    memcpy(a, bytes, la);
    a[la] = 0;
    if (parse_size(a, &lo_b) || parse_size(dots + 2, &hi_b) || lo_b < 1 || hi_b < lo_b || hi_b > (4L << 30)) {
      tps_die_msg("bench allgather: --bytes '%s': A..B with 1 <= A <= B <= 4G", bytes);
      return TPS_EXIT_USAGE;
    }
    for (long x = lo_b; x <= hi_b; x *= 2) o->nsizes++;
    o->sizes = (long *)calloc(o->nsizes, sizeof(long));
    size_t k = 0;
    for (long x = lo_b; x <= hi_b; x *= 2) o->sizes[k++] = x;
  } else {
    char **items;
    size_t ni;
    if (tps_parse_list(bytes, &items, &ni) != 0 || ni == 0) { tps_die_msg("bench allgather: --bytes '%s'", bytes); return TPS_EXIT_USAGE; }
    o->sizes = (long *)calloc(ni, sizeof(long));
    for (size_t k = 0; k < ni; k++) {
      if (parse_size(items[k], &o->sizes[k]) || o->sizes[k] < 1 || (k && o->sizes[k] <= o->sizes[k - 1]) || o->sizes[k] > (4L << 30)) {
        tps_die_msg("bench allgather: --bytes '%s': sizes must be positive and increasing", bytes);
        tps_free_list(items, ni);
        free(o->sizes);
        return TPS_EXIT_USAGE;
      }
    }
    o->nsizes = ni;
    tps_free_list(items, ni);
  }
  if (o->gather == TPS_GATHER_CUSTOM && (size_t)o->sizes[o->nsizes - 1] / o->tp > o->cap_bytes) {
    tps_die_msg("bench allgather: --gather custom: %ld bytes over %d ranks exceed the per-rank cap of %zu (use auto)",
                o->sizes[o->nsizes - 1], o->tp, o->cap_bytes);
    free(o->sizes);
    return TPS_EXIT_USAGE;
  }
  if (!tps_world_is_mpi()) {
    const int ndev = tps_gb_device_count();
    if (ndev < 1) { free(o->sizes); return TPS_EXIT_FAIL; }
    if (ndev < o->tp) {
      tps_die_msg("bench allgather: --tp %d needs %d GPUs, this machine shows %d", o->tp, o->tp, ndev);
      free(o->sizes);
      return TPS_EXIT_USAGE;
    }
  }
  job.rows = (ag_row *)calloc(o->nsizes, sizeof(ag_row));
  if (!job.rows) { free(o->sizes); return TPS_EXIT_FAIL; }
  const int rc = tps_world_run(o->tp, ag_rank, &job);
  free(job.rows);
  free(o->sizes);
  if (job.usage_err) return TPS_EXIT_USAGE;
  return rc == TPS_K_OK ? TPS_EXIT_OK : TPS_EXIT_FAIL;
}
