/* test_io.c: unit tests of the readers (src/io/table.c, src/io/ncclt.c, src/io/gpus.c).
 * Expected values are read by eye from the files named in each block (line numbers given),
 * or computed here by an independent formula.  Needs top_srcdir and TPSPLIT_DATADIR
 * (set by `make check`). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "src/io/fitfile.h"
#include "src/io/gpus.h"
#include "src/io/ncclt.h"
#include "src/io/table.h"
#include "src/base/util.h"
#include "src/base/iocheck.h"

#include "tests/unit/expect.h"
#define NEAR(a, b, tol) CHECK_TRUE(fabs((a) - (b)) <= (tol) * fmax(1.0, fabs(b)))

static const char *src;
static char *path(const char *rel) {
  static char buf[8][4096];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", src, rel);
  return buf[k];
}

static void test_split(void) {
  tps_table t;
  tps_err e;
  tps_err_clear(&e);
  int rc = tps_table_read(path("data/h20_tp8_fused_wqa_wkv.tsv"), &t, &e);
  CHECK_TRUE(rc == 0);
  if (rc) { fprintf(stderr, "%s\n", e.msg); return; }
  /* data/h20_tp8_fused_wqa_wkv.tsv: 15 '#' lines, 8 '#@' lines, header, 11 rows */
  CHECK_TRUE(t.kind == TPS_TABLE_SPLIT);
  CHECK_TRUE(strcmp(t.source, "tsv") == 0);
  CHECK_TRUE(t.nrows == 11);
  CHECK_TRUE(t.nprov == 15);
  CHECK_TRUE(t.nmeta == 8);
  CHECK_TRUE(t.tp == 8);
  CHECK_TRUE(t.k == 5120 && t.n == 1792);
  CHECK_TRUE(strcmp(t.gpu, "H20") == 0);
  CHECK_TRUE(strcmp(t.kpath, "marlin-w8a16") == 0);
  CHECK_TRUE(strcmp(t.gather, "auto") == 0);
  CHECK_TRUE(t.out_bytes_per_token == 3584);
  CHECK_TRUE(t.gather_cap_bytes == 2097152);
  CHECK_TRUE(t.tokens[0] == 6 && t.tokens[4] == 96 && t.tokens[10] == 16384);
  CHECK_TRUE(t.rows_per_rank[2] == 3 && t.rows_per_rank[10] == 2048);
  CHECK_TRUE(t.replicated_us[9] == 1794.7);
  CHECK_TRUE(t.split_us[9] == 346.9);
  CHECK_TRUE(t.split_us[10] == 635.4);
  CHECK_TRUE(t.line[0] == 25 && t.line[10] == 35);
  CHECK_TRUE(t.rows == NULL && t.bytes == NULL && t.time_us == NULL);
  CHECK_TRUE(strcmp(tps_table_meta(&t, "path"), "marlin-w8a16") == 0);
  CHECK_TRUE(tps_table_meta(&t, "nope") == NULL);
  /* rows_per_rank == ceil(tokens / 8), checked independently */
  for (size_t i = 0; i < t.nrows; i++) CHECK_TRUE(t.rows_per_rank[i] == (t.tokens[i] + 7) / 8);

  /* write and read back: same values */
  char tmpl[] = "/tmp/tpsplit-test-io.XXXXXX";
  int fd = mkstemp(tmpl);
  CHECK_TRUE(fd >= 0);
  FILE *fp = fdopen(fd, "w");
  CHECK_TRUE(tps_table_write(fp, &t) == 0);
  fclose(fp);
  tps_table u;
  rc = tps_table_read(tmpl, &u, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(u.nrows == t.nrows && u.tp == 8 && u.k == 5120 && u.nprov == t.nprov && u.nmeta == t.nmeta);
    for (size_t i = 0; i < t.nrows; i++)
      CHECK_TRUE(u.tokens[i] == t.tokens[i] && u.replicated_us[i] == t.replicated_us[i] && u.split_us[i] == t.split_us[i]);
    tps_table_free(&u);
  }
  unlink(tmpl);
  tps_table_free(&t);
}

static void test_gemm_allgather_tsv(void) {
  tps_table t;
  tps_err e;
  /* tests/data/gemm_h20_marlin.tsv: rows = tokens, time = replicated_us, samples 50 */
  int rc = tps_table_read(path("tests/data/gemm_h20_marlin.tsv"), &t, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(t.kind == TPS_TABLE_GEMM && t.nrows == 11);
    CHECK_TRUE(t.rows[6] == 1024 && t.time_us[6] == 239.4);
    CHECK_TRUE(t.nextra == 1 && strcmp(t.extra_name[0], "samples") == 0);
    const double *s = tps_table_extra(&t, "samples");
    CHECK_TRUE(s && s[0] == 50 && s[10] == 50);
    CHECK_TRUE(tps_table_extra(&t, "tflops") == NULL);
    CHECK_TRUE(t.time_inplace_us == NULL);
    tps_table_free(&t);
  } else fprintf(stderr, "%s\n", e.msg);
  /* tests/data/allgather_h20.tsv: from ncclt/current.txt, 21 rows 1 KiB .. 1 GiB */
  rc = tps_table_read(path("tests/data/allgather_h20.tsv"), &t, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(t.kind == TPS_TABLE_ALLGATHER && t.nrows == 21 && t.ranks == 8);
    CHECK_TRUE(t.bytes[0] == 1024 && t.bytes[20] == 1073741824.0);
    CHECK_TRUE(t.time_us[20] == 3347.53 && t.time_inplace_us[20] == 3375.03);
    CHECK_TRUE(strcmp(t.gather, "nccl") == 0 && t.nextra == 0);
    tps_table_free(&t);
  } else fprintf(stderr, "%s\n", e.msg);
}

static void test_ncclt(void) {
  tps_table t;
  tps_err e;
  /* current.txt: 8 ranks (lines 6-13), rows on lines 18-38, 1 KiB .. 1 GiB */
  int rc = tps_table_read(path("tests/data/ncclt/current.txt"), &t, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(t.kind == TPS_TABLE_ALLGATHER && strcmp(t.source, "nccl-tests") == 0);
    CHECK_TRUE(t.ranks == 8 && t.nrows == 21);
    CHECK_TRUE(strcmp(t.gpu, "NVIDIA H20") == 0 && strcmp(t.type, "bfloat16") == 0);
    CHECK_TRUE(t.bytes[0] == 1024 && t.count[0] == 64 && t.time_us[0] == 12.10 && t.time_inplace_us[0] == 12.00);
    CHECK_TRUE(t.bytes[20] == 1073741824.0 && t.count[20] == 67108864 && t.time_us[20] == 3347.53);
    CHECK_TRUE(t.time_inplace_us[20] == 3375.03);
    CHECK_TRUE(t.line[0] == 18 && t.line[20] == 38);
    /* size = count * 2 B * 8 ranks on every row */
    for (size_t i = 0; i < t.nrows; i++) CHECK_TRUE(t.bytes[i] == (double)t.count[i] * 2 * 8);
    tps_table_free(&t);
  } else fprintf(stderr, "%s\n", e.msg);

  /* the log struct itself, from the same file */
  tps_text tx;
  tps_ncclt log;
  rc = tps_text_read(path("tests/data/ncclt/current.txt"), &tx, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(tps_ncclt_detect(&tx) == 1);
    rc = tps_ncclt_parse(&tx, &log, &e);
    CHECK_TRUE(rc == 0);
    if (rc == 0) {
      CHECK_TRUE(log.layout == TPS_NCCLT_CURRENT && !log.has_timestamp && !log.has_iter_stats);
      CHECK_TRUE(strcmp(log.version, "2.17.6") == 0 && strcmp(log.collective, "all_gather_perf") == 0);
      CHECK_TRUE(log.nthread == 1 && log.ngpus == 8 && log.warmup_iters == 5 && log.iters == 20);
      /* line 20: 4096 256 bfloat16 none -1 11.86 0.35 0.30 0 12.04 0.34 0.30 0 */
      const tps_ncclt_row *r = &log.row[2];
      CHECK_TRUE(r->size_bytes == 4096 && r->count == 256 && strcmp(r->redop, "none") == 0 && r->root == -1);
      CHECK_TRUE(r->oop_time_us == 11.86 && r->oop_algbw_gbps == 0.35 && r->oop_busbw_gbps == 0.30 && r->oop_wrong == 0);
      CHECK_TRUE(r->ip_time_us == 12.04 && r->ip_algbw_gbps == 0.34 && isnan(r->oop_min_us));
      tps_ncclt_free(&log);
    }
    tps_text_free(&tx);
  }

  /* pre213.txt: 4 ranks, float, old "error" column; rows 64 B .. 128 MiB (22), line 12 first */
  rc = tps_table_read(path("tests/data/ncclt/pre213.txt"), &t, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(t.ranks == 4 && t.nrows == 22 && strcmp(t.type, "float") == 0);
    CHECK_TRUE(strcmp(t.gpu, "Tesla V100-SXM2-32GB") == 0);
    CHECK_TRUE(t.bytes[0] == 64 && t.count[0] == 4 && t.time_us[0] == 9.64 && t.time_inplace_us[0] == 9.56);
    CHECK_TRUE(t.bytes[21] == 134217728.0 && t.time_us[21] == 1421.8);
    tps_table_free(&t);
  } else fprintf(stderr, "%s\n", e.msg);
  rc = tps_text_read(path("tests/data/ncclt/pre213.txt"), &tx, &e);
  if (rc == 0 && tps_ncclt_parse(&tx, &log, &e) == 0) {
    CHECK_TRUE(log.layout == TPS_NCCLT_PRE213 && log.version[0] == '\0' && log.iters == 20);
    CHECK_TRUE(log.row[0].oop_wrong == 0 && log.row[0].redop[0] == '\0');
    tps_ncclt_free(&log);
  } else CHECK_TRUE(0);
  tps_text_free(&tx);

  /* timestamp.txt: -S; first row line 18: 8192 ... 10.89 ... 10.80 ... 2026-11-30 09:14:11 */
  rc = tps_text_read(path("tests/data/ncclt/timestamp.txt"), &tx, &e);
  if (rc == 0 && tps_ncclt_parse(&tx, &log, &e) == 0) {
    CHECK_TRUE(log.has_timestamp && !log.has_iter_stats && log.nranks == 8 && log.n == 16);
    CHECK_TRUE(strcmp(log.row[0].timestamp, "2026-11-30 09:14:11") == 0);
    CHECK_TRUE(log.row[0].size_bytes == 8192 && log.row[0].oop_time_us == 10.89 && log.row[0].ip_time_us == 10.80);
    tps_ncclt_free(&log);
  } else CHECK_TRUE(0);
  tps_text_free(&tx);

  /* iterstats.txt: -I with -c 0 (N/A); line 19: 65536 4096 ... 11.05 5.93 5.19 N/A 10.28 13.38 12.93 6.38
   * 10.96 5.98 5.23 N/A 10.20 13.27 12.83 6.38 */
  rc = tps_text_read(path("tests/data/ncclt/iterstats.txt"), &tx, &e);
  if (rc == 0 && tps_ncclt_parse(&tx, &log, &e) == 0) {
    const tps_ncclt_row *r = &log.row[0];
    CHECK_TRUE(log.has_iter_stats && !log.has_timestamp && log.n == 12 && r->line == 19);
    CHECK_TRUE(isnan(r->oop_wrong) && isnan(r->ip_wrong));
    CHECK_TRUE(r->oop_time_us == 11.05 && r->oop_min_us == 10.28 && r->oop_max_us == 13.38 && r->oop_p99_us == 12.93);
    CHECK_TRUE(r->oop_cv_pct == 6.38 && r->ip_time_us == 10.96 && r->ip_min_us == 10.20 && r->ip_p99_us == 12.83);
    tps_ncclt_free(&log);
  } else CHECK_TRUE(0);
  tps_text_free(&tx);
  rc = tps_table_read(path("tests/data/ncclt/iterstats.txt"), &t, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    const double *mn = tps_table_extra(&t, "i_min_us"), *cv = tps_table_extra(&t, "i_cv_pct");
    CHECK_TRUE(t.nextra == 4 && mn && cv && mn[0] == 10.28 && cv[0] == 6.38);
    tps_table_free(&t);
  }

  /* exponent.txt: 16 ranks; 8 GiB row (line 33) has time 1.1e+07, 16 GiB row 2.2e+07 */
  rc = tps_table_read(path("tests/data/ncclt/exponent.txt"), &t, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(t.ranks == 16 && t.nrows == 9 && strcmp(t.gpu, "NVIDIA L40S") == 0);
    CHECK_TRUE(t.bytes[7] == 8589934592.0 && t.time_us[7] == 1.1e7 && t.line[7] == 33);
    CHECK_TRUE(t.bytes[8] == 17179869184.0 && t.count[8] == 536870912 && t.time_us[8] == 2.2e7);
    tps_table_free(&t);
  } else fprintf(stderr, "%s\n", e.msg);

  /* json.txt: the -J form of current.txt: 1 device entry x nthreads 1 x ngpus 8 = 8 ranks */
  CHECK_TRUE(tps_ncclt_is_json(path("tests/data/ncclt/json.txt")) == 1);
  CHECK_TRUE(tps_ncclt_is_json(path("tests/data/ncclt/current.txt")) == 0);
  rc = tps_ncclt_read_json(path("tests/data/ncclt/json.txt"), &log, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(log.nranks == 8 && log.n == 21 && log.iters == 20 && strcmp(log.gpu, "NVIDIA H20") == 0);
    CHECK_TRUE(log.row[20].size_bytes == 1073741824.0 && log.row[20].oop_time_us == 3347.53);
    CHECK_TRUE(log.row[20].ip_time_us == 3375.03 && log.row[20].root == -1 && log.row[20].oop_wrong == 0);
    CHECK_TRUE(log.row[20].line == 1 && isnan(log.row[20].oop_min_us)); /* json.txt is one line: every result on line 1 */
    tps_ncclt_free(&log);
  } else fprintf(stderr, "%s\n", e.msg);
  rc = tps_table_read(path("tests/data/ncclt/json.txt"), &t, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(t.kind == TPS_TABLE_ALLGATHER && t.ranks == 8 && t.nrows == 21 && t.count[1] == 128);
    CHECK_TRUE(t.time_us[0] == 12.10 && t.time_inplace_us[0] == 12.00);
    tps_table_free(&t);
  } else fprintf(stderr, "%s\n", e.msg);

  /* mpi.txt: [1,0]<stdout>: prefixes, NCCL INFO/WARN lines, 16 Rank lines; 19 rows */
  rc = tps_table_read(path("tests/data/ncclt/mpi.txt"), &t, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(t.ranks == 16 && t.nrows == 19 && strcmp(t.gpu, "NVIDIA H100 80GB HBM3") == 0);
    CHECK_TRUE(t.bytes[0] == 1024 && t.count[0] == 32 && t.time_us[0] == 28.73);
    CHECK_TRUE(t.bytes[18] == 268435456.0);
    tps_table_free(&t);
  } else fprintf(stderr, "%s\n", e.msg);
}

static void test_errors(void) {
  tps_table t;
  tps_err e;
  char want[4200];
  tps_err_clear(&e);
  CHECK_TRUE(tps_table_read(path("tests/data/bad/nan.tsv"), &t, &e) == -1);
  snprintf(want, sizeof want, "%s:4: NaN in column 'replicated_us'", path("tests/data/bad/nan.tsv"));
  CHECK_TRUE(e.set && strcmp(e.msg, want) == 0);
  CHECK_TRUE(tps_table_read(path("tests/data/bad/ncclt_truncated.txt"), &t, &e) == -1);
  snprintf(want, sizeof want, "%s:23: ", path("tests/data/bad/ncclt_truncated.txt"));
  CHECK_TRUE(strncmp(e.msg, want, strlen(want)) == 0);
  CHECK_TRUE(tps_table_read(path("tests/no-such-file.tsv"), &t, &e) == -1);
  CHECK_TRUE(strstr(e.msg, "no-such-file.tsv: cannot open: No such file or directory") != NULL);
  /* tps_split_tabs: empty fields kept, overflow reported */
  char line[] = "a\t\tb";
  char *f[3];
  CHECK_TRUE(tps_split_tabs(line, f, 3) == 3 && strcmp(f[0], "a") == 0 && f[1][0] == '\0' && strcmp(f[2], "b") == 0);
  char line2[] = "a\tb\tc\td";
  CHECK_TRUE(tps_split_tabs(line2, f, 3) == 4);
  CHECK_TRUE(tps_ncclt_type_size("bfloat16") == 2 && tps_ncclt_type_size("float") == 4 && tps_ncclt_type_size("x") == 0);
}

/* Write text to path (a test's temporary file), replacing what was there. */
static void put_file(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  CHECK_TRUE(fp != NULL);
  if (!fp) return;
  fputs(text, fp);
  fclose(fp);
}

static void test_gpus(void) {
  tps_gpu_table g;
  tps_err e;
  tps_err_clear(&e);
  int rc = tps_gpus_load(NULL, &g, &e);
  CHECK_TRUE(rc == 0);
  if (rc) { fprintf(stderr, "%s\n", e.msg); return; }
  /* data/gpus.tsv: 12 GPUs (GB300 the 12th, issue 27 item 7) */
  CHECK_TRUE(g.n == 12);
  const tps_gpu *h200 = tps_gpus_find(&g, "H200-SXM", &e);
  CHECK_TRUE(h200 && strcmp(h200->name, "H200-SXM") == 0);
  CHECK_TRUE(tps_gpus_find(&g, "H200", &e) == h200);
  CHECK_TRUE(tps_gpus_find(&g, "h200", &e) == h200);
  CHECK_TRUE(tps_gpus_find(&g, "h200-sxm", &e) == h200);
  CHECK_TRUE(tps_gpus_find(&g, "NVIDIA H200", &e) == h200);
  if (h200) {
    CHECK_TRUE(h200->sms == 132 && h200->cc_major == 9 && h200->cc_minor == 0);
    CHECK_TRUE(h200->bf16_tflops == 989 && h200->fp8_tflops == 1979 && h200->hbm_gbps == 4800 && h200->l2_mb == 50);
    CHECK_TRUE(h200->links == 18 && h200->link_gbps == 450 && h200->nccl_link_gbps == 20.6 && h200->nvlink == 1);
    CHECK_TRUE(h200->uncertain == 0); /* no datasheet clocks: 0, not '?' */
    CHECK_TRUE(h200->base_mhz == 0 && h200->boost_mhz == 0);
    /* the name columns: what engines and figures need, from the row */
    CHECK_TRUE(!strcmp(h200->cuda_name, "NVIDIA H200") && !strcmp(h200->engine_key, "NVIDIA_H200"));
    CHECK_TRUE(!strcmp(h200->colour, "#009E73") && !strcmp(h200->arch, "sm90-hopper") && !strcmp(h200->fabric, "nvlink4"));
  }
  const tps_gpu *h100 = tps_gpus_find(&g, "H100", &e);
  CHECK_TRUE(h100 && strcmp(h100->name, "H100-SXM") == 0);
  CHECK_TRUE(tps_gpus_find(&g, "h100-sxm5", &e) == h100);
  CHECK_TRUE(tps_gpus_find(&g, "NVIDIA H100 80GB HBM3", &e) == h100);
  /* H20: 78 SMs and 60 MiB L2 as CUDA reports them on an H20 (sourced in the file): certain */
  const tps_gpu *h20 = tps_gpus_find(&g, "h20", &e);
  CHECK_TRUE(h20 && h20->sms == 78 && h20->l2_mb == 60);
  CHECK_TRUE(h20 && h20->uncertain == 0);
  CHECK_TRUE(h20 && h20->base_mhz == 0 && h20->boost_mhz == 0); /* no sourced clocks: 0 */
  CHECK_TRUE(tps_gpus_find(&g, "NVIDIA H20", &e) == h20);
  const tps_gpu *l40s = tps_gpus_find(&g, "L40S", &e);
  CHECK_TRUE(l40s && l40s->nvlink == 0 && l40s->links == 0 && l40s->cc_major == 8 && l40s->cc_minor == 9);
  CHECK_TRUE(l40s && l40s->uncertain == TPS_GPU_U_L2);
  CHECK_TRUE(l40s && l40s->base_mhz == 1110 && l40s->boost_mhz == 2520);
  const tps_gpu *a100 = tps_gpus_find(&g, "A100", &e);
  CHECK_TRUE(a100 && a100->base_mhz == 1275 && a100->boost_mhz == 1410 && a100->uncertain == 0);
  const tps_gpu *b300 = tps_gpus_find(&g, "b300", &e);
  CHECK_TRUE(b300 && b300->cc_major == 10 && b300->cc_minor == 3);
  CHECK_TRUE(tps_gpus_find(&g, "NVIDIA B300 SXM6 AC", &e) == b300); /* by its CUDA name */
  CHECK_TRUE(b300 && b300->uncertain == (TPS_GPU_U_SMS | TPS_GPU_U_L2 | TPS_GPU_U_HBM));
  const tps_gpu *gb3 = tps_gpus_find(&g, "GB300", &e);
  CHECK_TRUE(gb3 && gb3->cc_major == 10 && gb3->cc_minor == 3 && gb3->bf16_tflops == 2500 && gb3->fp8_tflops == 5000 &&
             gb3->hbm_gbps == 8000 && gb3->link_gbps == 900 && gb3->uncertain == (TPS_GPU_U_SMS | TPS_GPU_U_L2));
  const tps_gpu *gb = tps_gpus_find(&g, "GB200", &e);
  CHECK_TRUE(gb && gb->uncertain == (TPS_GPU_U_SMS | TPS_GPU_U_L2) && gb->sms == 152);
  const tps_gpu *mi = tps_gpus_find(&g, "mi300x", &e);
  CHECK_TRUE(mi && mi->nvlink == 0 && mi->cc_major == 0);
  /* unknown name: NULL, and the message lists the known names */
  tps_err_clear(&e);
  CHECK_TRUE(tps_gpus_find(&g, "H300", &e) == NULL);
  CHECK_TRUE(e.set && strstr(e.msg, "unknown GPU 'H300'") && strstr(e.msg, "known: H20, H100-SXM, H800-SXM, H200-SXM"));
  CHECK_TRUE(strstr(e.msg, "MI300X") != NULL);
  CHECK_TRUE(tps_gpus_find(&g, "NVIDIA H100 PCIe", &e) == NULL);
  tps_gpus_free(&g);

  /* a user file with one more GPU; a '?' on a link value */
  char tmpl[] = "/tmp/tpsplit-test-gpus.XXXXXX";
  int fd = mkstemp(tmpl);
  FILE *fp = fdopen(fd, "w");
  fputs("# mine\nname\taliases\tsms\tcc\tbf16_tflops\tfp8_tflops\thbm_gbps\tl2_mb\tlink\tlinks\tlink_gbps\tnccl_link_gbps\tsource\n"
        "X9\tx9-sxm,Xnine\t100\t9.0\t500\t1000\t3000\t40\tNVLink4\t18?\t450\t20.6\tmine\n", fp);
  fclose(fp);
  rc = tps_gpus_load(tmpl, &g, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    const tps_gpu *x = tps_gpus_find(&g, "xnine", &e);
    CHECK_TRUE(g.n == 1 && x && strcmp(x->name, "X9") == 0 && x->uncertain == TPS_GPU_U_LINK && x->links == 18);
    CHECK_TRUE(strcmp(g.source[0], "mine") == 0 && strcmp(g.aliases[0], "x9-sxm,Xnine") == 0);
    /* a file without the optional base_mhz / boost_mhz columns (the format before them): 0 */
    CHECK_TRUE(x && x->base_mhz == 0 && x->boost_mhz == 0);
    tps_gpus_free(&g);
  }
  /* the optional clock columns, in another order; '?' flags them */
  put_file(tmpl, "boost_mhz\tname\taliases\tsms\tcc\tbf16_tflops\tfp8_tflops\thbm_gbps\tl2_mb\tlink\tlinks\tlink_gbps\t"
        "nccl_link_gbps\tbase_mhz\tsource\n"
        "2000?\tX9\t\t100\t9.0\t500\t1000\t3000\t40\tNVLink4\t18\t450\t20.6\t1500\tmine\n");
  tps_err_clear(&e);
  rc = tps_gpus_load(tmpl, &g, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(g.n == 1 && g.gpu[0].base_mhz == 1500 && g.gpu[0].boost_mhz == 2000 && g.gpu[0].uncertain == TPS_GPU_U_CLOCK);
    tps_gpus_free(&g);
  }
  /* base above boost; a row short of the header's 14 cells; an unknown column */
  put_file(tmpl, "name\taliases\tsms\tcc\tbf16_tflops\tfp8_tflops\thbm_gbps\tl2_mb\tlink\tlinks\tlink_gbps\tnccl_link_gbps\t"
        "base_mhz\tboost_mhz\tsource\n"
        "X9\t\t100\t9.0\t500\t1000\t3000\t40\tNVLink4\t18\t450\t20.6\t2100\t2000\tmine\n");
  tps_err_clear(&e);
  CHECK_TRUE(tps_gpus_load(tmpl, &g, &e) == -1 && strstr(e.msg, ":2: base_mhz 2100 is above boost_mhz 2000"));
  put_file(tmpl, "name\taliases\tsms\tcc\tbf16_tflops\tfp8_tflops\thbm_gbps\tl2_mb\tlink\tlinks\tlink_gbps\tnccl_link_gbps\t"
        "base_mhz\tsource\n"
        "X9\t\t100\t9.0\t500\t1000\t3000\t40\tNVLink4\t18\t450\t20.6\tmine\n");
  tps_err_clear(&e);
  CHECK_TRUE(tps_gpus_load(tmpl, &g, &e) == -1 && strstr(e.msg, ":2: row has 13 cells, the header has 14"));
  put_file(tmpl, "name\taliases\tsms\tcc\tbf16_tflops\tfp8_tflops\thbm_gbps\tl2_mb\tlink\tlinks\tlink_gbps\tnccl_link_gbps\t"
        "tdp_w\tsource\n");
  tps_err_clear(&e);
  CHECK_TRUE(tps_gpus_load(tmpl, &g, &e) == -1 && strstr(e.msg, ":1: GPU table header has 14 columns"));
  /* a user file missing a column: error names the file and the header line */
  put_file(tmpl, "# mine\nname\taliases\tsms\n");
  tps_err_clear(&e);
  CHECK_TRUE(tps_gpus_load(tmpl, &g, &e) == -1);
  char want[256];
  snprintf(want, sizeof want, "%s:2: missing column 'cc'", tmpl);
  CHECK_TRUE(strncmp(e.msg, want, strlen(want)) == 0);
  /* two rows claiming the same alias */
  put_file(tmpl, "name\taliases\tsms\tcc\tbf16_tflops\tfp8_tflops\thbm_gbps\tl2_mb\tlink\tlinks\tlink_gbps\tnccl_link_gbps\tsource\n"
        "A1\tfoo\t100\t9.0\t500\t1000\t3000\t40\tNVLink4\t18\t450\t20.6\ts\n"
        "B1\tFOO\t100\t9.0\t500\t1000\t3000\t40\tNVLink4\t18\t450\t20.6\ts\n");
  CHECK_TRUE(tps_gpus_load(tmpl, &g, &e) == -1);
  snprintf(want, sizeof want, "%s:3: alias 'FOO' already names another GPU", tmpl);
  CHECK_TRUE(strcmp(e.msg, want) == 0);
  unlink(tmpl);
}

/* The input layer (src/base/util.c, src/io/table.c): kinds of files, UTF-8, the last newline. */
static void test_inputs(void) {
  tps_err e;
  tps_buf b;
  tps_err_clear(&e);
  CHECK_TRUE(tps_buf_read("/dev/null", &b, &e) == -1 && strstr(e.msg, "is a character device"));
  CHECK_TRUE(tps_buf_read(src, &b, &e) == -1 && strstr(e.msg, "is a directory"));
  CHECK_TRUE(tps_buf_read("/nonexistent/x", &b, &e) == -1 && strstr(e.msg, "cannot open: No such file"));
  CHECK_TRUE(tps_buf_read(path("data/gpus.tsv"), &b, &e) == 0 && b.len > 100 && b.data[b.len] == '\0');
  tps_buf_free(&b);
  /* UTF-8: valid, Latin-1, overlong, surrogate, cut */
  CHECK_TRUE(tps_utf8_check("H20 \xc3\xa9", 6) == 6);
  CHECK_TRUE(tps_utf8_check("H20\xe9", 4) == 3);
  CHECK_TRUE(tps_utf8_check("\xc0\xaf", 2) == 0);
  CHECK_TRUE(tps_utf8_check("a\xed\xa0\x80", 4) == 1);
  CHECK_TRUE(tps_utf8_check("ab\xe2\x82", 4) == 2);
  CHECK_TRUE(tps_utf8_check("\xf0\x9f\x98\x80", 4) == 4);
  tps_text tx;
  CHECK_TRUE(tps_text_from_buf("m", "\xEF\xBB\xBF# a\nb\n", 9, 0, &tx, &e) == 0 && tx.n == 2 && strcmp(tx.line[0], "# a") == 0 &&
        !tx.unterminated && tps_text_check_end(&tx, &e) == 0);
  tps_text_free(&tx);
  CHECK_TRUE(tps_text_from_buf("m", "a\nb", 3, 0, &tx, &e) == 0 && tx.n == 2 && tx.unterminated);
  CHECK_TRUE(tps_text_check_end(&tx, &e) == -1 && strstr(e.msg, "m:2: no newline at the end"));
  tps_text_free(&tx);
  CHECK_TRUE(tps_text_from_buf("m", "ok\nH20\xe9\n", 8, 0, &tx, &e) == -1 && strstr(e.msg, "m:2: invalid UTF-8 (byte 0xe9 in column 4)"));
  CHECK_TRUE(tps_text_from_buf("m", "ok\nH20\xe9\n", 8, TPS_TEXT_ANY_BYTES, &tx, &e) == 0 && tx.n == 2);
  tps_text_free(&tx);
  /* a JSON file with a byte order mark is JSON */
  CHECK_TRUE(tps_ncclt_is_json_mem("\xEF\xBB\xBF {", 5) == 1 && tps_ncclt_is_json_mem("# {", 3) == 0);
}

/* Lists and ranges (src/base/util.c): limits checked before expansion, no leak on empty lists. */
static void test_lists(void) {
  tps_err e;
  tps_err_clear(&e);
  long *v = NULL;
  size_t n = 0;
  CHECK_TRUE(tps_parse_tokens("1..100000000:1", &v, &n, &e) == -1 && strstr(e.msg, "above the limit of 65536") && !v);
  CHECK_TRUE(tps_parse_tokens("70000", &v, &n, &e) == -1 && strstr(e.msg, "token count 70000") && !v);
  CHECK_TRUE(tps_parse_tokens("48,6,12,6", &v, &n, &e) == 0 && n == 3 && v[0] == 6 && v[2] == 48);
  free(v);
  CHECK_TRUE(tps_parse_tokens("3..100", &v, &n, &e) == 0 && n == 6 && v[5] == 96); /* 3 6 12 24 48 96 */
  free(v);
  CHECK_TRUE(tps_parse_tokens("1..65536:65535", &v, &n, &e) == 0 && n == 2 && v[1] == 65536);
  free(v);
  CHECK_TRUE(tps_parse_tokens("0..4", &v, &n, &e) == -1 && tps_parse_tokens("", &v, &n, &e) == -1);
  char **l = NULL;
  CHECK_TRUE(tps_parse_list("", &l, &n) == -1 && l == NULL);
  CHECK_TRUE(tps_parse_list(",,", &l, &n) == -1 && l == NULL);
  CHECK_TRUE(tps_parse_list("a,,b", &l, &n) == 0 && n == 2 && strcmp(l[1], "b") == 0);
  tps_free_list(l, n);
  long x;
  CHECK_TRUE(tps_parse_range("65536", 1, 65536, &x) == 0 && x == 65536);
  CHECK_TRUE(tps_parse_range("9223372036854775808", 1, 65536, &x) == -1 && tps_parse_range("0", 1, 2, &x) == -1);
}

/* nccl-tests: ranks from the busbw/algbw ratio when the type is unknown; the old convention. */
static void test_ncclt_eras(void) {
  /* rows of 8 ranks: size S, count S/16 of an unknown 2-byte type "e5m2x" (so size/count
   * cannot give the ranks), times t, algbw S/t/1e3, busbw 7/8 of it, printed to 2 decimals */
  static const double S[3] = {268435456.0, 536870912.0, 1073741824.0};
  static const double t[3] = {828.95, 1683.56, 3347.53};
  char buf[4096];
  size_t o = 0;
  for (int i = 0; i < 3; i++) {
    double a = S[i] / t[i] / 1e3;
    o += (size_t)snprintf(buf + o, sizeof buf - o, "%12.0f %12.0f e5m2x none -1 %.2f %.2f %.2f 0 %.2f %.2f %.2f 0\n", S[i],
                          S[i] / 16, t[i], a, a * 7 / 8, t[i], a, a * 7 / 8);
  }
  tps_text tx;
  tps_ncclt log;
  tps_err e;
  tps_err_clear(&e);
  CHECK_TRUE(tps_text_from_buf("ratio.txt", buf, o, 0, &tx, &e) == 0);
  CHECK_TRUE(tps_ncclt_detect(&tx) == 1);
  int rc = tps_ncclt_parse(&tx, &log, &e);
  CHECK_TRUE(rc == 0);
  if (rc == 0) {
    CHECK_TRUE(log.nranks == 8 && log.ranks_from == TPS_NCCLT_RANKS_RATIO && log.n == 3 && !log.bw_old);
    CHECK_TRUE(strstr(log.note, "ranks 8 from the busbw/algbw ratio") != NULL);
    tps_ncclt_free(&log);
  } else fprintf(stderr, "%s\n", e.msg);
  /* the same rows with --ranks 4: the printed bandwidths disagree */
  tps_ncclt_read_opts opt = {0, 4};
  CHECK_TRUE(tps_ncclt_parse_opts(&tx, &opt, &log, &e) == -1 && strstr(e.msg, "disagrees with size/time for 4 ranks"));
  tps_text_free(&tx);
  /* old_algbw.txt: algbw printed equal to busbw, read, flagged */
  CHECK_TRUE(tps_text_read(path("tests/data/ncclt/old_algbw.txt"), &tx, &e) == 0);
  rc = tps_ncclt_parse(&tx, &log, &e);
  CHECK_TRUE(rc == 0 && log.bw_old == 1 && log.nranks == 8 && log.layout == TPS_NCCLT_PRE213);
  if (rc == 0) tps_ncclt_free(&log);
  tps_text_free(&tx);
}

/* Output files (src/base/util.c): devices written in place, links written through. */
static void test_outfiles(void) {
  tps_err e;
  tps_err_clear(&e);
  tps_outfile of;
  CHECK_TRUE(tps_out_open(&of, "/dev/null", &e) == 0 && of.direct == 1 && of.tmp_path == NULL);
  fputs("x\n", of.fp);
  CHECK_TRUE(tps_out_commit(&of, &e) == 0);
  struct stat st;
  CHECK_TRUE(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
  char dir[] = "/tmp/tpsplit-test-out.XXXXXX";
  CHECK_TRUE(mkdtemp(dir) != NULL);
  char target[64], link[64];
  snprintf(target, sizeof target, "%s/t", dir);
  snprintf(link, sizeof link, "%s/l", dir);
  FILE *fp = fopen(target, "w");
  if (fp) { fputs("old\n", fp); fclose(fp); }
  CHECK_TRUE(symlink("t", link) == 0);
  CHECK_TRUE(tps_out_open(&of, link, &e) == 0 && of.direct == 0);
  fputs("new\n", of.fp);
  CHECK_TRUE(tps_out_commit(&of, &e) == 0);
  char line[16] = "";
  fp = fopen(target, "r");
  if (fp) { if (!fgets(line, sizeof line, fp)) line[0] = '\0'; fclose(fp); }
  CHECK_TRUE(strcmp(line, "new\n") == 0 && lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
  unlink(link);
  unlink(target);
  CHECK_TRUE(symlink("missing", link) == 0);
  CHECK_TRUE(tps_out_open(&of, link, &e) == -1 && strstr(e.msg, "symbolic link to a missing file"));
  CHECK_TRUE(tps_out_open(&of, dir, &e) == -1 && strstr(e.msg, "is a directory"));
  unlink(link);
  rmdir(dir);
  /* a resource error is exit 1, an input error exit 2 */
  tps_err_oom(&e, "reading %s", "x");
  CHECK_TRUE(tps_err_exit_code(&e) == 1 && strcmp(e.msg, "out of memory (reading x)") == 0);
  tps_err_set(&e, "x", 3, "bad");
  CHECK_TRUE(tps_err_exit_code(&e) == 2 && strcmp(e.msg, "x:3: bad") == 0);
}

/* No output replaces an input (src/base/iocheck.c): same inode through links, new names
 * compared by their canonical form, devices and "-" never a conflict. */
static void test_iocheck(void) {
  char dir[] = "/tmp/tpsplit-test-io.XXXXXX";
  CHECK_TRUE(mkdtemp(dir) != NULL);
  char in[96], hard[96], soft[96], fresh[96], fresh2[96];
  snprintf(in, sizeof in, "%s/in", dir);
  snprintf(hard, sizeof hard, "%s/hard", dir);
  snprintf(soft, sizeof soft, "%s/soft", dir);
  snprintf(fresh, sizeof fresh, "%s/new", dir);
  snprintf(fresh2, sizeof fresh2, "%s/../%s/./new", dir, strrchr(dir, '/') + 1);
  FILE *fp = fopen(in, "w");
  if (fp) { fputs("x\n", fp); fclose(fp); }
  CHECK_TRUE(link(in, hard) == 0 && symlink("in", soft) == 0);
  tps_err e;
  tps_err_clear(&e);
  tps_io_input(in, "argument");
  tps_io_output(hard, "-o");
  CHECK_TRUE(tps_io_check(&e) == -1 && strstr(e.msg, "/hard: -o would replace an input, argument '") && strstr(e.msg, "/in'"));
  tps_io_input_spec(soft, "--gemm"); /* the registry was emptied by the check */
  tps_io_output(in, "--thresholds-out");
  CHECK_TRUE(tps_io_check(&e) == -1 && strstr(e.msg, "--thresholds-out would replace an input, --gemm"));
  char spec[128];
  snprintf(spec, sizeof spec, "nccl=%s", in);
  tps_io_input_spec(spec, "--gather");
  tps_io_output(in, "-o");
  CHECK_TRUE(tps_io_check(&e) == -1 && strstr(e.msg, "-o would replace an input, --gather"));
  snprintf(spec, sizeof spec, "%s:dtype=bfloat16", in);
  tps_io_input_spec(spec, "--gemm");
  tps_io_output(in, "-o");
  CHECK_TRUE(tps_io_check(&e) == -1);
  tps_io_output(fresh, "-o");
  tps_io_output(fresh2, "--thresholds-out");
  CHECK_TRUE(tps_io_check(&e) == -1 && strstr(e.msg, "are the same file"));
  /* no conflict: another new name, "-", a device, an input that does not exist */
  tps_err_clear(&e);
  tps_io_input(in, "argument");
  tps_io_input(fresh2, "argument");
  tps_io_output(fresh, "-o");
  tps_io_output("-", "--json");
  tps_io_output("/dev/null", "--thresholds-out");
  tps_io_input("/dev/null", "argument");
  CHECK_TRUE(tps_io_check(&e) == 0 && !e.set);
  unlink(soft);
  unlink(hard);
  unlink(in);
  rmdir(dir);
}

int main(void) {
  src = getenv("top_srcdir");
  if (!src) { fprintf(stderr, "test_io: run through make check (top_srcdir unset)\n"); return 99; }
  test_split();
  test_gemm_allgather_tsv();
  test_ncclt();
  test_errors();
  test_gpus();
  test_inputs();
  test_lists();
  test_ncclt_eras();
  test_outfiles();
  test_iocheck();
  printf("%d checks, %d failed\n", checks, fails);
  return fails ? 1 : 0;
}
