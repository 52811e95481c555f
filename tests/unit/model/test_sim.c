/* test_sim.c: unit tests of model/sim/sim.c (layer kinds, the stage rule, chunking, prompt
 * savings, TTFT), model/sim/simrun.c (split masks by name, the gating projection, one run's
 * chunk sizes, gating, prompt sums, intervals and TTFT) and src/io/modeldesc.c (the bundled
 * model descriptions).
 *
 * Expected values are computed by hand in the comments, from a synthetic cost function
 * (replicated = a_j * T, split = a_j * T / 8 + g_j), never from the code under test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/sim/sim.h"
#include "model/sim/simrun.h"
#include "src/io/modeldesc.h"

#include "tests/unit/expect.h"
#define NEAR(a, b, tol) CHECK(fabs((a) - (b)) <= (tol), "%s = %.6f, want %.6f", #a, (double)(a), (double)(b))

static const double A[3] = {0.2, 0.05, 0.01}, G[3] = {10, 5, 5};
static int fake_cost(void *ctx, size_t j, long T, double *rep, double *split) {
  (void)ctx;
  *rep = A[j] * T;
  *split = A[j] * T / 8.0 + G[j];
  return 0;
}

/* 4 layers: P (main, split) in 0-3; B (aux) in 1 and 3; C (aux) in 3. side_max 1024. */
static void synth(tps_sim_model *m) {
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "synth");
  m->hidden = 100; m->layers = 4; m->side_max_tokens = 1024; m->nproj = 3;
  const char *names[3] = {"P", "B", "C"};
  for (int j = 0; j < 3; j++) {
    snprintf(m->proj[j].name, sizeof m->proj[j].name, "%s", names[j]);
    m->proj[j].n = 10 * (j + 1);
    m->proj[j].out_bytes = 2;
    m->proj[j].path = &tps_path_dense_bf16;
    m->proj[j].aux = j > 0;
    m->proj[j].split = j == 0;
  }
  for (int l = 0; l < 4; l++) m->proj[0].in_layer[l] = 1;
  m->proj[1].in_layer[1] = m->proj[1].in_layer[3] = 1;
  m->proj[2].in_layer[3] = 1;
}

static void test_chunking(void) {
  long n, last;
  /* 20000 = 8192 + 8192 + 3616 */
  CHECK(tps_sim_chunking(20000, 8192, &n, &last) == 0 && n == 3 && last == 3616, "20000/8192: n=%ld last=%ld", n, last);
  CHECK(tps_sim_chunking(8192, 8192, &n, &last) == 0 && n == 1 && last == 8192, "8192: n=%ld last=%ld", n, last);
  CHECK(tps_sim_chunking(131072, 8192, &n, &last) == 0 && n == 16 && last == 8192, "128K: n=%ld last=%ld", n, last);
  CHECK(tps_sim_chunking(1, 8192, &n, &last) == 0 && n == 1 && last == 1, "1: n=%ld last=%ld", n, last);
  CHECK(tps_sim_chunking(8193, 8192, &n, &last) == 0 && n == 2 && last == 1, "8193: n=%ld last=%ld", n, last);
  CHECK(tps_sim_chunking(0, 8192, &n, &last) != 0, "0 tokens accepted");
  CHECK(tps_sim_chunking(10, 0, &n, &last) != 0, "chunk 0 accepted");
}

static void test_synth(void) {
  tps_sim_model m;
  synth(&m);
  tps_sim_kind k[TPS_SIM_MAXKINDS];
  size_t nk;
  CHECK(tps_sim_kinds(&m, k, TPS_SIM_MAXKINDS, &nk) == 0 && nk == 3, "nk = %zu, want 3", nk);
  CHECK(k[0].count == 2 && strcmp(k[0].label, "plain") == 0 && strcmp(k[0].layer_list, "0,2") == 0,
        "kind 0: %d %s %s", k[0].count, k[0].label, k[0].layer_list);
  CHECK(k[1].count == 1 && strcmp(k[1].label, "B/20") == 0 && strcmp(k[1].layer_list, "1") == 0,
        "kind 1: %d %s %s", k[1].count, k[1].label, k[1].layer_list);
  CHECK(k[2].count == 1 && strcmp(k[2].label, "B/20+C/30") == 0, "kind 2: %d %s", k[2].count, k[2].label);
  CHECK(tps_sim_default_mask(&m) == 1u, "default mask");

  tps_sim_cost cost = {fake_cost, NULL};
  tps_sim_chunk c;
  /* T = 8192 > 1024: serial.  P: rep 1638.4, split 204.8+10 = 214.8; B rep 409.6; C rep 81.92.
   * main: plain 1638.4, B 2048, BC 2129.92 -> 2*1638.4 + 2048 + 2129.92 = 7454.72
   * split: plain 214.8, B 624.4, BC 706.32 -> 429.6 + 624.4 + 706.32 = 1760.32
   * saving 5694.4 = 4 * (1638.4 - 214.8) */
  CHECK(tps_sim_chunk_eval(&m, k, nk, 1u, 2048, 8192, &cost, &c) == 0, "eval 8192");
  NEAR(c.kind_main_us[1], 2048.0, 1e-9);
  NEAR(c.kind_split_us[2], 706.32, 1e-9);
  NEAR(c.main_us, 7454.72, 1e-9);
  NEAR(c.split_us, 1760.32, 1e-9);
  NEAR(c.saving_us, 5694.4, 1e-9);
  CHECK(c.split_on == 1, "split_on at 8192");
  tps_sim_chunk full = c;

  /* T = 1024 <= 1024: aux overlap.  P rep 204.8, split 25.6+10 = 35.6; B 51.2; C 10.24.
   * main: each kind max(204.8, aux) = 204.8.  split: plain 35.6, B max(35.6,51.2) = 51.2,
   * BC max(35.6, 61.44) = 61.44.  saving = 2*169.2 + 153.6 + 143.36 = 635.36 */
  CHECK(tps_sim_chunk_eval(&m, k, nk, 1u, 1024, 1024, &cost, &c) == 0, "eval 1024");
  NEAR(c.kind_main_us[2], 204.8, 1e-9);
  NEAR(c.kind_split_us[1], 51.2, 1e-9);
  NEAR(c.kind_split_us[2], 61.44, 1e-9);
  NEAR(c.saving_us, 635.36, 1e-9);
  /* T = 1025: serial again: P 205 / 35.625, B 51.25, C 10.25.  saving = 4*(205-35.625) = 677.5 */
  CHECK(tps_sim_chunk_eval(&m, k, nk, 1u, 1024, 1025, &cost, &c) == 0, "eval 1025");
  NEAR(c.saving_us, 677.5, 1e-9);

  /* split all at 8192: B split 51.2+5 = 56.2, C split 10.24+5 = 15.24.
   * split: plain 214.8, B 271.0, BC 286.24 -> 429.6 + 271 + 286.24 = 986.84 */
  CHECK(tps_sim_chunk_eval(&m, k, nk, 7u, 2048, 8192, &cost, &c) == 0, "eval all");
  NEAR(c.split_us, 986.84, 1e-9);
  /* below the threshold nothing is split */
  CHECK(tps_sim_chunk_eval(&m, k, nk, 7u, 16384, 8192, &cost, &c) == 0, "eval thr");
  CHECK(c.split_on == 0, "split_on below threshold");
  NEAR(c.saving_us, 0.0, 1e-12);
  NEAR(c.split_us, 7454.72, 1e-9);
  /* mask none */
  CHECK(tps_sim_chunk_eval(&m, k, nk, 0u, 1, 8192, &cost, &c) == 0 && c.split_on == 0, "mask none");

  /* prompt 20000 in 8192 chunks: 8192 + 8192 + 3616.
   * threshold 4096: the 3616 chunk is not split: saving = 2 * 5694.4 us = 11.3888 ms.
   * threshold 2048: it is: 4 * (0.2*3616 - (0.2*3616/8 + 10)) = 4 * (723.2 - 100.4) = 2491.2 us
   *   -> 11.3888 + 2.4912 = 13.88 ms.
   * main of the 3616 chunk (serial): plain 723.2, B 723.2+180.8 = 904, BC 904+36.16 = 940.16
   *   -> 2*723.2 + 904 + 940.16 = 3290.56; prompt main = 2*7454.72 + 3290.56 = 18200 us. */
  tps_sim_chunk last;
  tps_sim_prompt p;
  CHECK(tps_sim_chunk_eval(&m, k, nk, 1u, 4096, 3616, &cost, &last) == 0 && last.split_on == 0, "last 4096");
  CHECK(tps_sim_prompt_eval(20000, 8192, &full, &last, &p) == 0, "prompt eval");
  CHECK(p.nchunks == 3 && p.last_tokens == 3616 && p.last_split_on == 0 && p.full_split_on == 1, "prompt chunks");
  NEAR(p.saving_ms, 11.3888, 1e-9);
  NEAR(p.main_ms, 18.2, 1e-9);
  CHECK(tps_sim_chunk_eval(&m, k, nk, 1u, 2048, 3616, &cost, &last) == 0 && last.split_on == 1, "last 2048");
  CHECK(tps_sim_prompt_eval(20000, 8192, &full, &last, &p) == 0, "prompt eval 2");
  NEAR(p.saving_ms, 13.88, 1e-9);
  NEAR(p.main_ms - p.split_ms, p.saving_ms, 1e-9);
  /* a last chunk of the wrong size is refused */
  CHECK(tps_sim_prompt_eval(20000, 8192, &full, &full, &p) != 0, "wrong last chunk accepted");

  double pred, chg;
  /* baseline 100 ms, saving 13.88 ms -> 86.12 ms, -13.88 % */
  CHECK(tps_sim_ttft(100.0, 13.88, &pred, &chg) == 0, "ttft");
  NEAR(pred, 86.12, 1e-9);
  NEAR(chg, -13.88, 1e-9);
  CHECK(tps_sim_ttft(0.0, 1.0, &pred, &chg) != 0, "zero baseline accepted");
}

/* the standard cost provider: measured curves (exact at their nodes) or a prediction */
static void test_models_cost(void) {
  tps_sim_models ms;
  memset(&ms, 0, sizeof ms);
  long tok[3] = {1024, 2048, 8192};
  double rep_us[3] = {239.4, 458.5, 1794.7}, split_us[3] = {66.8, 99.7, 346.9};
  tps_gemm_curve *rc = tps_gemm_curve_alloc(tok, rep_us, 3), *sc = tps_gemm_curve_alloc(tok, split_us, 3);
  CHECK(rc && sc, "curves");
  ms.nproj = 2;
  ms.p[0].rep_curve = rc;
  ms.p[0].split_curve = sc;
  double rep, split;
  CHECK(tps_sim_models_cost(&ms, 0, 8192, &rep, &split) == 0, "curve cost");
  NEAR(rep, 1794.7, 1e-9);
  NEAR(split, 346.9, 1e-9);
  CHECK(tps_sim_models_cost(&ms, 0, 3000, &rep, &split) == 0 && rep > 458.5 && rep < 1794.7, "curve between nodes");

  /* a spec-only prediction on a hand-made Hopper-like GPU */
  tps_gpu gpu;
  memset(&gpu, 0, sizeof gpu);
  snprintf(gpu.name, sizeof gpu.name, "TestGPU");
  gpu.sms = 132; gpu.cc_major = 9; gpu.bf16_tflops = 989; gpu.fp8_tflops = 1979; gpu.hbm_gbps = 4800;
  gpu.link_gbps = 450; gpu.links = 18; gpu.nccl_link_gbps = 20.6; gpu.nvlink = 1;
  tps_gemm_shape shape = {5120, 1024, 4.0};
  tps_pred pred;
  CHECK(tps_pred_init_spec(&pred, &gpu, 8, &tps_path_dense_bf16, &shape, 0, NULL) == 0, "spec pred");
  ms.p[1].pred = &pred;
  CHECK(tps_sim_models_cost(&ms, 1, 8192, &rep, &split) == 0, "pred cost");
  NEAR(rep, tps_pred_gemm_us(&pred, 8192), 1e-12);
  NEAR(split, tps_pred_gemm_us(&pred, 1024) + tps_pred_gather_us(&pred, 8192, NULL), 1e-9);
  CHECK(tps_sim_models_cost(&ms, 2, 800, &rep, &split) != 0, "bad proj index accepted");

  /* interval: contains the nominal value, nonempty with prior spread, a point without */
  double lo[2], hi[2];
  CHECK(tps_sim_pred_interval(&pred, 8192, 0.90, 400, 1, lo, hi) == 0, "interval");
  CHECK(lo[0] < rep * 0.999 && hi[0] > rep * 1.001 && lo[1] < split && hi[1] > split,
        "interval [%g,%g] around %g, [%g,%g] around %g", lo[0], hi[0], rep, lo[1], hi[1], split);
  tps_pred fixed = pred;
  fixed.compute_rsd = fixed.stream_rsd = fixed.gather_rsd = 0;
  CHECK(tps_sim_pred_interval(&fixed, 8192, 0.90, 50, 1, lo, hi) == 0, "interval 0");
  NEAR(lo[0], rep, 1e-9 * rep);
  NEAR(hi[1], split, 1e-9 * split);

  /* savings under the priors' spread: a one-layer model with one predicted projection.
   * The nominal saving lies inside the samples' 90% interval; without spread every sample
   * equals it. */
  {
    tps_sim_model m1;
    memset(&m1, 0, sizeof m1);
    m1.hidden = 5120; m1.layers = 2; m1.nproj = 1;
    snprintf(m1.proj[0].name, sizeof m1.proj[0].name, "x");
    m1.proj[0].n = 1024; m1.proj[0].out_bytes = 4; m1.proj[0].path = &tps_path_dense_bf16; m1.proj[0].split = 1;
    m1.proj[0].in_layer[0] = m1.proj[0].in_layer[1] = 1;
    tps_sim_kind k1[2];
    size_t nk1;
    tps_sim_models m1s;
    memset(&m1s, 0, sizeof m1s);
    m1s.nproj = 1;
    m1s.p[0].pred = &pred;
    tps_sim_cost c1 = {tps_sim_models_cost, &m1s};
    tps_sim_chunk chk;
    long toks[2] = {1024, 8192};
    double sv[2 * 200], lo1, hi1;
    CHECK(tps_sim_kinds(&m1, k1, 2, &nk1) == 0 && nk1 == 1 && k1[0].count == 2, "m1 kinds");
    CHECK(tps_sim_chunk_eval(&m1, k1, nk1, 1u, 1, 8192, &c1, &chk) == 0, "m1 eval");
    /* 2 layers x (GEMM(8192) - GEMM(1024) - gather(8192)) */
    NEAR(chk.saving_us, 2 * (tps_pred_gemm_us(&pred, 8192) - tps_pred_gemm_us(&pred, 1024) - tps_pred_gather_us(&pred, 8192, NULL)), 1e-9);
    CHECK(tps_sim_sample_savings(&m1, k1, nk1, 1u, 1, toks, 2, &m1s, 200, 7, sv) == 0, "samples");
    CHECK(tps_sim_interval(sv + 200, 200, 0.9, &lo1, &hi1) == 0, "interval of samples");
    CHECK(lo1 < chk.saving_us && hi1 > chk.saving_us && hi1 - lo1 > 0.05 * fabs(chk.saving_us), "saving %g in [%g, %g]", chk.saving_us, lo1, hi1);
    m1s.p[0].pred = &fixed;
    CHECK(tps_sim_sample_savings(&m1, k1, nk1, 1u, 1, toks, 2, &m1s, 200, 7, sv) == 0, "samples 0");
    NEAR(sv[200 + 17], chk.saving_us, 1e-9 * fabs(chk.saving_us));
    NEAR(sv[199], sv[0], 1e-12);
  }
  tps_gemm_curve_free(rc);
  tps_gemm_curve_free(sc);

  /* the GEMM + all-gather form: replicated = GEMM(T), split = GEMM(ceil(T/8)) + gather of
   * T*100*2 bytes.  T = 801: rows 101, bytes 160200, gather (Simple only, 20 us + 100 GB/s
   * bus bandwidth) = 20 + 160200*7/8/1e5 = 21.40175 us. */
  tps_sim_models mg;
  memset(&mg, 0, sizeof mg);
  tps_ag_model ag;
  memset(&ag, 0, sizeof ag);
  ag.ranks = 8;
  ag.busbw_gbps[TPS_PROTO_SIMPLE] = 100;
  ag.lat_us[TPS_PROTO_SIMPLE] = 20;
  mg.tp = 8; mg.nproj = 1;
  tps_sim_proj_model *q = &mg.p[0];
  CHECK(tps_gemm_from_spec(&q->gemm, &tps_path_dense_bf16, &gpu) == 0, "gemm from spec");
  q->shape.k = 1000; q->shape.n = 100; q->shape.out_bytes = 2;
  q->ag = &ag; q->gather_backend = TPS_GATHER_NCCL;
  CHECK(tps_sim_models_cost(&mg, 0, 801, &rep, &split) == 0, "gemm+ag cost");
  NEAR(rep, tps_gemm_time_us(&q->gemm, &q->shape, 801), 1e-12);
  NEAR(split, tps_gemm_time_us(&q->gemm, &q->shape, 101) + 21.40175, 1e-9);
}

/* simrun on the synthetic model with measured power-law curves (exact in log-log between
 * two points): replicated_j = A_j * T, split_j = 0.3 * A_j * T. */
static void test_simrun(void) {
  tps_sim_model m;
  synth(&m);
  /* names and masks: P = bit 0, B = bit 1, C = bit 2 */
  char *w1[] = {"P"}, *w2[] = {"all"}, *w3[] = {"none"}, *w4[] = {"B", "nope"};
  unsigned mask = 99;
  size_t bad = 9;
  CHECK(tps_sim_mask_from_names(&m, w1, 1, &mask, &bad) == TPS_OK && mask == 1u, "P: mask %u", mask);
  CHECK(tps_sim_mask_from_names(&m, w2, 1, &mask, &bad) == TPS_OK && mask == 7u, "all: mask %u", mask);
  CHECK(tps_sim_mask_from_names(&m, w3, 1, &mask, &bad) == TPS_OK && mask == 0u, "none: mask %u", mask);
  CHECK(tps_sim_mask_from_names(&m, w4, 2, &mask, &bad) == TPS_EINVAL && bad == 1, "unknown name at %zu", bad);
  char names[64];
  CHECK(strcmp(tps_sim_mask_names(&m, 5u, ",", names, sizeof names), "P,C") == 0, "names '%s'", names);
  CHECK(strcmp(tps_sim_mask_names(&m, 0u, ",", names, sizeof names), "none") == 0, "names '%s'", names);
  /* the gating projection: the first split main one, else the first split one */
  CHECK(tps_sim_threshold_proj(&m, 7u) == 0, "gate of all");
  CHECK(tps_sim_threshold_proj(&m, 6u) == 1, "gate of B+C (aux only)");
  CHECK(tps_sim_threshold_proj(&m, 0u) == m.nproj, "gate of nothing");

  tps_sim_kind k[TPS_SIM_MAXKINDS];
  size_t nk;
  CHECK(tps_sim_kinds(&m, k, TPS_SIM_MAXKINDS, &nk) == 0, "kinds");
  long tk[2] = {1, 10000};
  tps_sim_models ms;
  memset(&ms, 0, sizeof ms);
  ms.nproj = m.nproj;
  for (size_t j = 0; j < m.nproj; j++) {
    double r[2] = {A[j] * 1, A[j] * 10000}, sp[2] = {0.3 * A[j] * 1, 0.3 * A[j] * 10000};
    ms.p[j].rep_curve = tps_gemm_curve_alloc(tk, r, 2);
    ms.p[j].split_curve = tps_gemm_curve_alloc(tk, sp, 2);
  }
  /* chunk 1024; prompts 2048 (2 full), 1500 (1024 + 476), 2500 (2 x 1024 + 452), 100 */
  long prompts[4] = {2048, 1500, 2500, 100};
  double base[4] = {100, 50, 120, 10};
  tps_simrun_in in = {&m, k, nk, &ms, 1u, 400, 1024, prompts, 4, base, 0, 50, 7};
  tps_simrun_out out;
  CHECK(tps_simrun(&in, &out) == TPS_OK, "simrun");
  const long want[4] = {100, 452, 476, 1024};
  CHECK(out.nchunks == 4, "%zu chunk sizes, want 4", out.nchunks);
  for (size_t i = 0; i < out.nchunks && i < 4; i++) CHECK(out.chunk[i].tokens == want[i], "chunk %zu: %ld", i, out.chunk[i].tokens);
  CHECK(out.chunk[out.full].tokens == 1024, "full chunk");
  /* gating: 100 < 400 is not split (no saving), the others are */
  CHECK(!out.chunk[0].split_on && out.chunk[0].saving_us == 0, "100 tokens split");
  for (size_t i = 1; i < out.nchunks; i++) CHECK(out.chunk[i].split_on && out.chunk[i].saving_us > 0, "chunk %zu not split", i);
  /* 1024 tokens (<= side_max: stage = max(main, sum of aux) per layer), by hand: P = 204.8
   * replicated, 61.44 split; aux B = 51.2 (layers 1, 3), C = 10.24 (layer 3).  Main stage
   * 204.8 in every layer; split stage max(61.44, 0 | 51.2 | 61.44) = 61.44; saving
   * 4 x (204.8 - 61.44) = 573.44 us. */
  NEAR(out.chunk[out.full].saving_us, 573.44, 1e-6);
  /* prompts: (n - 1) x full + last, in ms; TTFT = baseline - saving */
  const double full_ms = out.chunk[out.full].saving_us * 1e-3;
  NEAR(out.prompt[0].saving_ms, 2 * full_ms, 1e-9);
  NEAR(out.prompt[1].saving_ms, full_ms + out.chunk[2].saving_us * 1e-3, 1e-9);
  NEAR(out.prompt[2].saving_ms, 2 * full_ms + out.chunk[1].saving_us * 1e-3, 1e-9);
  NEAR(out.prompt[3].saving_ms, 0, 1e-12);
  for (int i = 0; i < 4; i++) {
    NEAR(out.ttft_ms[i], base[i] - out.prompt[i].saving_ms, 1e-9);
    NEAR(out.ttft_change_pct[i], -100 * out.prompt[i].saving_ms / base[i], 1e-9);
    /* measured projections only: no spread, the interval is the value */
    NEAR(out.prompt_lo_ms[i], out.prompt[i].saving_ms, 1e-9);
    NEAR(out.prompt_hi_ms[i], out.prompt[i].saving_ms, 1e-9);
  }
  CHECK(isnan(out.proj_lo_us[0][0]) && isnan(out.proj_hi_us[2][1]), "measured projections have no interval");
  tps_simrun_free(&out);
  /* without a baseline the TTFT is NaN; a chunk < 1 token is refused */
  in.baseline_ttft_ms = NULL;
  CHECK(tps_simrun(&in, &out) == TPS_OK && isnan(out.ttft_ms[0]), "no baseline");
  tps_simrun_free(&out);
  in.chunk_tokens = 0;
  CHECK(tps_simrun(&in, &out) == TPS_EINVAL, "chunk 0 accepted");
  tps_simrun_free(&out);
  for (size_t j = 0; j < m.nproj; j++) {
    tps_gemm_curve_free(ms.p[j].rep_curve);
    tps_gemm_curve_free(ms.p[j].split_curve);
  }
}

static void test_bundled(void) {
  const char *top = getenv("top_srcdir");
  if (!top) top = ".";
  char path[4096];
  tps_sim_model m;
  tps_err e;
  tps_err_clear(&e);
  snprintf(path, sizeof path, "%s/data/models/deepseek-v4.1-flash.tsv", top);
  CHECK(tps_modeldesc_read(path, &m, &e) == 0, "read %s: %s", path, e.msg);
  CHECK(m.hidden == 5120 && m.layers == 40 && m.side_max_tokens == 1024 && m.nproj == 4, "v4.1 header");
  CHECK(strcmp(m.name, "DeepSeek-V4.1-Flash") == 0, "name %s", m.name);
  tps_sim_kind k[TPS_SIM_MAXKINDS];
  size_t nk;
  /* plain: 40 - 8 indexer layers = 32; compressor 1024 + indexer: 2,8,14 = 3; layer 20: 1;
   * indexer only: 24,28,32,36 = 4 */
  CHECK(tps_sim_kinds(&m, k, TPS_SIM_MAXKINDS, &nk) == 0 && nk == 4, "v4.1 kinds %zu", nk);
  CHECK(k[0].count == 32 && strcmp(k[0].label, "plain") == 0, "plain %d %s", k[0].count, k[0].label);
  CHECK(k[1].count == 3 && strcmp(k[1].layer_list, "2,8,14") == 0 && strcmp(k[1].label, "compressor/1024+indexer/32") == 0,
        "kind 1 %d %s %s", k[1].count, k[1].layer_list, k[1].label);
  CHECK(k[2].count == 1 && strcmp(k[2].layer_list, "20") == 0 && strcmp(k[2].label, "compressor/512+indexer/32") == 0,
        "kind 2 %d %s %s", k[2].count, k[2].layer_list, k[2].label);
  CHECK(k[3].count == 4 && strcmp(k[3].layer_list, "24,28,32,36") == 0 && strcmp(k[3].label, "indexer/32") == 0,
        "kind 3 %d %s %s", k[3].count, k[3].layer_list, k[3].label);
  CHECK(m.proj[1].out_bytes == 4 && m.proj[1].aux && !m.proj[1].split && m.proj[0].path == &tps_path_marlin_w8a16,
        "compressor row");

  snprintf(path, sizeof path, "%s/data/models/deepseek-v3.tsv", top);
  CHECK(tps_modeldesc_read(path, &m, &e) == 0, "read %s: %s", path, e.msg);
  CHECK(m.hidden == 7168 && m.layers == 61 && m.nproj == 1 && m.proj[0].n == 2112 && m.side_max_tokens == 0 &&
        m.proj[0].path == &tps_path_fp8_block, "v3");
  CHECK(tps_sim_kinds(&m, k, TPS_SIM_MAXKINDS, &nk) == 0 && nk == 1 && k[0].count == 61 && strcmp(k[0].layer_list, "0-60") == 0,
        "v3 kinds");
}

int main(void) {
  test_chunking();
  test_synth();
  test_models_cost();
  test_simrun();
  test_bundled();
  printf("%d checks, %d failed\n", checks, fails);
  return fails ? 1 : 0;
}
